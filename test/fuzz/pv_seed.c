/*
 * pv_seed.c -- write a seed corpus for fuzz_pv: one well-formed request of
 * every operation the channel has (its own op table, arglen its minimum,
 * the argument zero), rung through the port function and through an IO
 * exit; and a session as a guest kernel runs one: a process, a counting
 * PMC started, run time, a fast-read page and the PMC's slot in it, a
 * context switch, a read, a log on descriptor 3, the PMC info rows, the
 * devices opened, then the blocks at the slots' edges and in the holes;
 * and the devices: perfmon(4) set up, started and read, pctr(4) set and
 * read, closed, the process gone.
 *
 *   pv_seed DIR
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "pvchan.h"

/* fuzz_pv.c's ops[], in its order: the BLOCK command names an index. */
static const uint32_t ops[] = {
	0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15, 16, 17, 18,
	0x100, 0x101, 0x102, 0x103, 0x104, 0x105,
	0x200, 0x201, 0x202, 0x300, 0x301, 0x302, 0x400, 0x401, 0x500,
};

struct buf {
	uint8_t b[4096];
	size_t n;
};

static void
put(struct buf *s, uint64_t v, unsigned bytes)
{
	unsigned i;

	for (i = 0; i < bytes && s->n < sizeof(s->b); i++)
		s->b[s->n++] = (uint8_t)(v >> (8 * i));
}

static unsigned
op_index(uint32_t op)
{
	unsigned i;

	for (i = 0; i < sizeof(ops) / sizeof(ops[0]); i++)
		if (ops[i] == op)
			return (i);
	fprintf(stderr, "pv_seed: op 0x%x is not in fuzz_pv's table\n", op);
	exit(1);
}

/*
 * A block of op at offset off of slot slot (aligned inside), argument arg
 * of len bytes, by pid 1 privileged, rung (exit: through an IO exit); who
 * is fuzz_pv's who byte (bit 7: the last PMC id or descriptor put in, bit
 * 6: an ioctl number, its index in bits 11:8).
 */
static void
req_by(struct buf *s, unsigned slot, uint16_t off, uint32_t op, const void *arg,
    uint16_t len, int exitpath, unsigned who)
{
	unsigned i;

	put(s, 0x01, 1);		/* BLOCK, vCPU 0 */
	put(s, slot, 1);		/* pick_gpa: slot, inside, aligned */
	put(s, off, 2);
	put(s, op_index(op), 1);
	put(s, 0x80, 1);		/* arglen: the next two bytes */
	put(s, who, 1);			/* pid 1, uid 0, privileged, the last PMC */
	put(s, (who & 0x0F00) >> 4, 1);	/* nothing corrupted; bits 7:4 the ioctl */
	put(s, len, 2);
	for (i = 0; i < len; i++)
		put(s, ((const uint8_t *)arg)[i], 1);
	put(s, exitpath ? 2 : 0, 1);	/* RING at the block */
}

static void
req(struct buf *s, unsigned slot, uint16_t off, uint32_t op, const void *arg,
    uint16_t len, int exitpath)
{
	req_by(s, slot, off, op, arg, len, exitpath, 0x80);
}

/* A device's ioctl (fuzz_pv's ioctls[] index i) with len bytes of data. */
static void
dev_ioctl(struct buf *s, uint32_t op, unsigned i, uint16_t len)
{
	uint8_t arg[64];

	memset(arg, 0, sizeof(arg));
	req_by(s, 0, 0x2800, op, arg, (uint16_t)(8 + len), 0, 0xC0 | i << 8);
}

static void
run(struct buf *s, uint16_t us)
{
	put(s, 0x0B, 1);		/* enter */
	put(s, 0x09, 1);		/* an exit after us microseconds */
	put(s, us, 2);
}

static void
out(const char *dir, const char *name, const struct buf *s)
{
	char path[512];
	FILE *f;

	snprintf(path, sizeof(path), "%s/%s", dir, name);
	if ((f = fopen(path, "wb")) == NULL || fwrite(s->b, 1, s->n, f) != s->n ||
	    fclose(f) != 0) {
		perror(path);
		exit(1);
	}
}

static void
session(struct buf *s)
{
	struct vpmu_pv_proc pr = { .pid = 1, .cflags = VPMU_PV_CRED_PRIVILEGED };
	struct vpmu_pv_pmcallocate al = { .cpu = 0xFFFFFFFF, .cls = 0x40, .ev = 1,
	    .mode = 3 };
	struct vpmu_pv_simple st = { .pmcid = 0 };
	struct vpmu_pv_csw csw = { .pid = 1, .tid = 1 };
	struct vpmu_pv_pmcrw rw = { .flags = 0x20 };
	struct vpmu_pv_configurelog cl = { .flags = 0, .logfd = 3 };
	struct vpmu_pv_open op = { .fflags = VPMU_PV_FREAD | VPMU_PV_FWRITE };
	uint8_t info[8 + 104 * 16];
	uint64_t page = 0x1000;
	uint32_t getmsr[2] = { 0, 0 };

	req(s, 0, 0x2000, VPMU_PV_OP_PROC_CREATE, &pr, sizeof(pr), 0);
	req(s, 0, 0x2100, VPMU_PV_OP_PMCALLOCATE, &al, sizeof(al), 0);
	/* the PMC ids: fuzz_pv puts in the one the allocation returned */
	req(s, 0, 0x2200, VPMU_PV_OP_PMCSTART, &st, sizeof(st), 1);
	req(s, 0, 0x2240, VPMU_PV_OP_FASTPAGE_SET, &page, sizeof(page), 0);
	getmsr[1] = st.pmcid;
	req(s, 0, 0x2280, VPMU_PV_OP_PMCGETMSR, getmsr, sizeof(getmsr), 0);
	req(s, 0, 0x22C0, VPMU_PV_OP_CSW_IN, &csw, sizeof(csw), 1);
	run(s, 3000);
	rw.pmcid = st.pmcid;
	req(s, 0, 0x2300, VPMU_PV_OP_PMCRW, &rw, sizeof(rw), 0);
	req(s, 0, 0x2340, VPMU_PV_OP_CONFIGURELOG, &cl, sizeof(cl), 0);
	req(s, 0, 0x2380, VPMU_PV_OP_FLUSHLOG, NULL, 0, 0);
	memset(info, 0, sizeof(info));
	req(s, 0, 0x0, VPMU_PV_OP_GETPMCINFO, info, sizeof(info), 0);
	req(s, 1, 0x100, VPMU_PV_OP_PERFMON_OPEN, &op, sizeof(op), 0);
	req(s, 2, 0x1FC0, VPMU_PV_OP_PCTR_OPEN, &op, sizeof(op), 1);
	req(s, 0, 0x23C0, VPMU_PV_OP_CSW_OUT, NULL, 0, 0);
	run(s, 100);
	req(s, 0, 0x2400, VPMU_PV_OP_CLOSELOG, NULL, 0, 0);
	req(s, 0, 0x2440, VPMU_PV_OP_FASTPAGE_CLEAR, NULL, 0, 0);
}

/* The devices: perfmon set up, started, read; pctr set and read; exit. */
static void
devices(struct buf *s)
{
	struct vpmu_pv_proc pr = { .pid = 1, .cflags = VPMU_PV_CRED_PRIVILEGED };
	struct vpmu_pv_open op = { .fflags = VPMU_PV_FREAD | VPMU_PV_FWRITE };
	struct vpmu_pv_pid pid = { .pid = 1 };
	struct vpmu_pv_close cl = { .fd = 0 };

	req(s, 0, 0x2000, VPMU_PV_OP_PROC_CREATE, &pr, sizeof(pr), 0);
	req(s, 0, 0x2100, VPMU_PV_OP_PERFMON_OPEN, &op, sizeof(op), 0);
	dev_ioctl(s, VPMU_PV_OP_PERFMON_IOCTL, 0, 8);		/* PMIOSETUP */
	dev_ioctl(s, VPMU_PV_OP_PERFMON_IOCTL, 1, 4);		/* PMIOSTART */
	run(s, 2000);
	dev_ioctl(s, VPMU_PV_OP_PERFMON_IOCTL, 3, 16);		/* PMIOREAD */
	dev_ioctl(s, VPMU_PV_OP_PERFMON_IOCTL, 5, 16);		/* PMIOTSTAMP */
	req(s, 0, 0x2200, VPMU_PV_OP_PCTR_OPEN, &op, sizeof(op), 0);
	dev_ioctl(s, VPMU_PV_OP_PCTR_IOCTL, 10, 4);		/* PCIOCS0 */
	run(s, 2000);
	dev_ioctl(s, VPMU_PV_OP_PCTR_IOCTL, 9, 56);		/* PCIOCRD */
	req(s, 0, 0x2300, VPMU_PV_OP_PCTR_CLOSE, &cl, sizeof(cl), 0);
	req(s, 0, 0x2340, VPMU_PV_OP_PROC_EXIT, &pid, sizeof(pid), 0);
}

int
main(int argc, char **argv)
{
	static const struct pv_personality *const ps[] = {
		&vpmu__pv_hwpmc, &vpmu__pv_perfmon, &vpmu__pv_pctr, &vpmu__pv_fastpage,
	};
	static const uint8_t zero[4096];
	char name[64];
	struct buf s;
	unsigned p, i, e;

	if (argc != 2) {
		fprintf(stderr, "usage: pv_seed DIR\n");
		return (2);
	}
	for (p = 0; p < sizeof(ps) / sizeof(ps[0]); p++)
		for (i = 0; i < ps[p]->nops; i++)
			for (e = 0; e < 2; e++) {
				memset(&s, 0, sizeof(s));
				put(&s, e ? 0x41 : 0x00, 1);	/* 1 or 2 vCPUs */
				req(&s, e ? 2 : 0, 0x40, ps[p]->ops[i].op, zero,
				    (uint16_t)ps[p]->ops[i].minlen, (int)e);
				snprintf(name, sizeof(name), "op-%s-%d", ps[p]->ops[i].name,
				    e);
				out(argv[1], name, &s);
			}
	memset(&s, 0, sizeof(s));
	put(&s, 0x00, 1);
	req(&s, 0, 0x40, VPMU_PV_OP_NULL, NULL, 0, 0);
	out(argv[1], "op-NULL", &s);
	for (e = 0; e < 4; e++) {
		memset(&s, 0, sizeof(s));
		put(&s, e | e << 2 | (e & 1) << 6, 1);	/* models, ports, policy */
		session(&s);
		snprintf(name, sizeof(name), "session-%u", e);
		out(argv[1], name, &s);
		memset(&s, 0, sizeof(s));
		put(&s, e << 2, 1);
		devices(&s);
		snprintf(name, sizeof(name), "devices-%u", e);
		out(argv[1], name, &s);
	}
	return (0);
}
