/*
 * fuzz_pv.c -- libFuzzer target for the paravirtual channel (vpmu_pv(4),
 * guest-api/pv*.c): every operation, corrupted headers, request blocks
 * anywhere in a sparse guest RAM, raw port accesses, interleaved with MSR
 * accesses and other exits.
 *
 * Guest RAM: four slots at scattered guest-physical addresses with holes
 * between them (a few pages at 0, an odd-sized slot at 0x10008, two pages
 * ending at 4 GiB, the last page but one of the 64-bit address space,
 * with the hole above it up to 2^64 - 1), each in one
 * host buffer with guard bytes before and after.  The VM (fresh for every
 * input) has the slots through vpmu_pv_add_memory(), log descriptors 3
 * and 5 offered (/dev/null), the fast-page thread stopped (the pages are
 * updated at exits only: deterministic).
 *
 * Input: one header byte (bits 1:0 vCPUs - 1; bits 3:2 the model: intel-v2,
 * amd-v2, intel-v1, none; bits 5:4 the channel's base: the default, 0x0100,
 * 0xFFF8, or off; bit 6 security.bsd.unprivileged_syspmcs=1), then
 * commands: the guest writes bytes anywhere (POKE), builds a request block
 * of any operation (every op of vpmu_pv(4), or any number) with one header
 * field possibly corrupted (BLOCK), rings the doorbell at the block or at
 * any address, high half latched or not, through vpmu_pv_port_io() or an
 * IO exit (RING), accesses any port near the channel's of any size,
 * direction and string flag (PORT), makes MSR exits, other exits with run
 * time and entries.
 *
 * Checked, beyond ASan/UBSan (the doc is vpmu_pv(4) and vpmu_vcpu(3)):
 *   - every call returns 0, and an IO exit is handled exactly when its
 *     port is one of the channel's eight (none when it is off);
 *   - an IN of the doorbell gives the vCPU's last ring's error, of the
 *     high port the magic, of anything else (other ports, sizes, string
 *     accesses) all ones;
 *   - nothing outside the slots changes (the guards), and inside them
 *     only what the ring may write: nothing when the 64-byte header is
 *     misaligned or unreachable; else error, done and retval (bytes 32-47),
 *     and the argument only when the error written is 0; besides the
 *     fast-read pages the guest registered (which the host writes at
 *     exits; past MAXPAGES distinct pages an input goes unchecked here);
 *   - a reached header gets done = "DONE" and the error the checks of
 *     vpmu_pv(4) "The request block" give in their order (magic, version,
 *     hdrsize, reserved, arglen; the block in one slot; an unknown op;
 *     cflags and pid), else one of the errno values the page lists; the
 *     doorbell reads the same error, and misaligned / unreachable blocks
 *     read EINVAL / EFAULT;
 *   - the channel's statistics count each ring once, as unreachable when
 *     the header could not be reached.
 * A BLOCK may take the PMC id the last successful PMCALLOCATE returned,
 * or the descriptor the device's last open returned, and one of the
 * devices' ioctl numbers, so that the operations reach a PMC or device.
 * FUZZ_PV_VERBOSE in the environment prints each ring and port access.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <vpmu/vpmu.h>
#include <vpmu/model.h>
#include <vpmu/pv.h>
#include <vpmu/vcpu.h>
#include <vpmu-guest/pv.h>

#define CHECK(c)	do { if (!(c)) { fprintf(stderr, "%s:%d: %s\n", \
			    __FILE__, __LINE__, #c); abort(); } } while (0)
#define NELEM(a)	(sizeof(a) / sizeof((a)[0]))
#define GUARD		64
#define MAXCMDS		64
#define MAXPAGES	16
#define PAGE		4096u

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

/* The slots: guest-physical address, size, offset in ram[] (after a guard). */
static const struct slot {
	uint64_t gpa;
	uint64_t size;
} slots[] = {
	{ 0x0, 3 * PAGE },
	{ 0x10008, 0x1010 },
	{ 0xFFFFE000, 2 * PAGE },
	{ 0xFFFFFFFFFFFFE000ull, PAGE },	/* ends one page below 2^64 */
};
#define NSLOTS	NELEM(slots)

static size_t slot_off[NSLOTS];
static bool verbose;		/* FUZZ_PV_VERBOSE set: each ring's result */
static size_t ramsize;
static uint8_t *ram, *shadow;
/* What may change in this command: guest-physical ranges. */
static struct range {
	uint64_t gpa, len;
} allowed[MAXPAGES + 4];
static unsigned nallowed;

/* Every operation vpmu_pv(4) lists, and a few it does not. */
static const uint32_t ops[] = {
	0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15, 16, 17, 18,
	0x100, 0x101, 0x102, 0x103, 0x104, 0x105,
	0x200, 0x201, 0x202, 0x300, 0x301, 0x302, 0x400, 0x401, 0x500,
	19, 0xFF, 0x106, 0x203, 0x303, 0x402, 0x501, 0xFFFFFFFF,
};
#define NKNOWN	34		/* the first NKNOWN of ops[] exist */

static const uint32_t perrno[] = {	/* vpmu_pv(4) Errors */
	0, 1, 3, 5, 6, 9, 12, 14, 16, 17, 19, 22, 25, 28, 32, 35, 45, 75, 78, 88,
};

static const char *const models[] = { "intel-v2", "amd-v2", "intel-v1", "none" };
static const uint16_t bases[] = { VPMU_PV_PORT_BASE, 0x0100, 0xFFF8, 0 };

struct input {
	const uint8_t *p;
	size_t n;
};

static uint64_t
take(struct input *in, unsigned bytes)
{
	uint64_t v = 0;
	unsigned i;

	for (i = 0; i < bytes && in->n > 0; i++, in->p++, in->n--)
		v |= (uint64_t)*in->p << (8 * i);
	return (v);
}

struct fz {
	vpmu_vm *vm;
	unsigned nvcpus;
	uint16_t base;
	uint32_t hi[4];			/* the latched high halves, as the doc says */
	int32_t last[4];		/* the last ring's error, per vCPU */
	uint64_t pages[MAXPAGES];	/* fast-read pages registered */
	unsigned npages;
	bool unchecked;			/* too many pages: RAM changes not checked */
	uint64_t block;			/* the last block built */
	uint32_t pmcid;			/* the last PMC allocated */
	int32_t fd[2];			/* the last perfmon, pctr descriptor */
	struct vpmu_regs regs;
};

/* The host address of [gpa, gpa + len) inside one slot, or NULL. */
static uint8_t *
hva(uint64_t gpa, uint64_t len)
{
	unsigned i;

	for (i = 0; i < NSLOTS; i++)
		if (gpa >= slots[i].gpa && gpa - slots[i].gpa <= slots[i].size &&
		    len <= slots[i].size - (gpa - slots[i].gpa))
			return (ram + slot_off[i] + (gpa - slots[i].gpa));
	return (NULL);
}

/* [gpa, gpa + len) may change. */
static void
allow(uint64_t gpa, uint64_t len)
{
	CHECK(nallowed < NELEM(allowed));
	allowed[nallowed].gpa = gpa;
	allowed[nallowed++].len = len;
}

/* Only the fast pages may change. */
static void
allow_pages(const struct fz *f)
{
	unsigned i;

	nallowed = 0;
	for (i = 0; i < f->npages; i++)
		allow(f->pages[i], PAGE);
}

/* Before a command: what RAM holds. */
static void
before(struct fz *f)
{
	memcpy(shadow, ram, ramsize);
	allow_pages(f);
}

/* May byte j of ram change?  Only inside a slot, inside an allowed range. */
static bool
may_change(size_t j)
{
	uint64_t gpa;
	unsigned i, k;

	for (i = 0; i < NSLOTS; i++)
		if (j >= slot_off[i] && j - slot_off[i] < slots[i].size)
			break;
	if (i == NSLOTS)
		return (false);			/* a guard */
	gpa = slots[i].gpa + (j - slot_off[i]);
	for (k = 0; k < nallowed; k++)
		if (gpa - allowed[k].gpa < allowed[k].len)
			return (true);
	return (false);
}

/* After it: every byte that changed was allowed to (by chunks). */
static void
after(void)
{
	size_t i, j, n;

	if (memcmp(shadow, ram, ramsize) == 0)
		return;
	for (i = 0; i < ramsize; i += n) {
		n = ramsize - i < 256 ? ramsize - i : 256;
		if (memcmp(shadow + i, ram + i, n) == 0)
			continue;
		for (j = i; j < i + n; j++)
			if (ram[j] != shadow[j] && !may_change(j)) {
				fprintf(stderr, "fuzz_pv: byte %zu of ram written\n", j);
				CHECK(!"the channel wrote where it may not");
			}
	}
}

/* A guest-physical address: in a slot, at its end, in a hole, anywhere. */
static uint64_t
pick_gpa(struct input *in)
{
	uint8_t how = (uint8_t)take(in, 1);
	uint16_t off = (uint16_t)take(in, 2);
	const struct slot *s = &slots[how % NSLOTS];

	switch ((how >> 2) & 7) {
	case 0:
	case 1:
	case 2:
		return (s->gpa + (off % s->size & ~7ull));		/* aligned, inside */
	case 3:
		return (s->gpa + s->size - (off & 0xFF));		/* straddles the end */
	case 4:
		return (s->gpa + (off % s->size));			/* any alignment */
	case 5:
		return (s->gpa - 8 * (off & 0xFF));			/* before: a hole */
	case 6:
		return (0xFFFFFFFFFFFFFFFFull - (off & 0xFFF));		/* the top */
	default:
		return (take(in, 8));
	}
}

static void
io(struct fz *f, unsigned cpu, uint16_t port, bool out, unsigned size, bool string,
    bool exitpath, uint32_t val)
{
	unsigned off = (unsigned)port - f->base;
	bool ours = f->base != 0 && port >= f->base && off < VPMU_PV_PORT_COUNT;
	bool taken = ours && size == 4 && !string && (off == 0 || off == VPMU_PV_PORT_HI_OFFSET);
	struct vpmu_exit x;
	uint64_t got;
	bool handled;
	uint32_t d = val;
	uint64_t ones = size >= 1 && size <= 4 ? ~0ull >> (64 - 8 * size) : 0xFFFFFFFFu;

	if (exitpath) {
		memset(&x, 0, sizeof(x));
		x.reason = VPMU_EXIT_IO;
		x.flags = VPMU_EXITF_RAN | (out ? VPMU_EXITF_OUT : 0) |
		    (string ? VPMU_EXITF_STRING : 0);
		x.index = port;
		x.size = size;
		x.data = val | (uint64_t)0xA5A5A5A5 << 32;
		x.regs = &f->regs;
		CHECK(vpmu_vcpu_exit(f->vm, cpu, &x) == 0);
		CHECK(x.fault == 0 && x.handled <= 1);
		/* a size the exit cannot carry is not the channel's */
		CHECK(x.handled == (ours && size <= 4));
		if (!x.handled)
			return;
		got = x.data;
		if (!out && string)
			CHECK(got == ~0ull);
	} else {
		/* the function takes sizes 1, 2 and 4 (others: through exits) */
		if (size != 1 && size != 2 && size != 4) {
			size = 1;
			taken = false;
		}
		CHECK(vpmu_pv_port_io(f->vm, cpu, port, out, size, &d, &handled) == 0);
		CHECK(handled == ours);
		if (!handled)
			return;
		got = d;
	}
	if (verbose)
		fprintf(stderr, "io cpu %u port 0x%x %s size %u%s%s: 0x%llx\n", cpu, port,
		    out ? "out" : "in", size, string ? " string" : "",
		    exitpath ? " (exit)" : "", (unsigned long long)got);
	/* all ones: the access's bytes, all four for a size no IN has */
	if (!out && !taken && !string)
		CHECK((got & ones) == ones);
	if (!out && taken)
		CHECK(got == (off == 0 ? (uint32_t)f->last[cpu] : VPMU_PV_MAGIC));
	if (out && taken && off == VPMU_PV_PORT_HI_OFFSET)
		f->hi[cpu] = val;
}

/* The error vpmu_pv(4)'s checks give a block before its handler, or -1. */
static int32_t
early_error(const struct vpmu_pv_req *h, uint64_t gpa)
{
	unsigned i;

	if (h->magic != VPMU_PV_MAGIC || h->version != VPMU_PV_VERSION ||
	    h->hdrsize != VPMU_PV_HDRSIZE || h->reserved[0] != 0 || h->reserved[1] != 0 ||
	    h->arglen > VPMU_PV_MAX_BLOCK - VPMU_PV_HDRSIZE)
		return (VPMU_PV_EINVAL);
	if (hva(gpa, VPMU_PV_HDRSIZE + (uint64_t)h->arglen) == NULL)
		return (VPMU_PV_EFAULT);
	for (i = 0; i < NKNOWN && ops[i] != h->op; i++)
		;
	if (i == NKNOWN)
		return (VPMU_PV_EINVAL);
	return (-1);		/* the arglen check, then cflags and pid */
}

/* A ring: the doorbell's OUT with the latched high half. */
static void
ring(struct fz *f, unsigned cpu, uint32_t lo, bool exitpath)
{
	uint64_t gpa = (uint64_t)f->hi[cpu] << 32 | lo;
	bool reached = gpa % 8 == 0 && hva(gpa, VPMU_PV_HDRSIZE) != NULL;
	struct vpmu_pv_stats st0, st1;
	struct vpmu_pv_req h, post;
	int32_t early = -1;
	unsigned i;

	CHECK(vpmu_pv_get_stats(f->vm, &st0) == 0);
	if (reached) {
		memcpy(&h, hva(gpa, sizeof(h)), sizeof(h));
		early = early_error(&h, gpa);
		allow(gpa + 32, 16);
		/* the argument, on success: told by the error written */
		if (early < 0)
			allow(gpa + VPMU_PV_HDRSIZE, h.arglen);
	}
	io(f, cpu, f->base, true, 4, false, exitpath, lo);
	f->hi[cpu] = 0;
	CHECK(vpmu_pv_get_stats(f->vm, &st1) == 0);
	CHECK(st1.requests == st0.requests + 1);
	CHECK(st1.unreachable == st0.unreachable + !reached);
	if (!reached) {
		f->last[cpu] = gpa % 8 != 0 ? VPMU_PV_EINVAL : VPMU_PV_EFAULT;
		return;
	}
	memcpy(&post, hva(gpa, sizeof(post)), sizeof(post));
	if (verbose)
		fprintf(stderr, "ring 0x%llx op 0x%x arglen %u: error %d retval %lld\n",
		    (unsigned long long)gpa, h.op, h.arglen, post.error,
		    (long long)post.retval);
	CHECK(post.done == VPMU_PV_DONE);
	if (early >= 0)
		CHECK(post.error == early);
	else if ((h.cflags & ~VPMU_PV_CRED_MASK) != 0 || h.pid <= 0 ||
	    h.pid > VPMU_PV_PID_MAX)
		CHECK(post.error == VPMU_PV_EINVAL);
	for (i = 0; i < NELEM(perrno) && perrno[i] != (uint32_t)post.error; i++)
		;
	CHECK(i < NELEM(perrno));
	if (post.error != 0) {
		CHECK(post.retval == 0);
		/* refused: only error, done, retval; the argument as it was */
		allow_pages(f);
		allow(gpa + 32, 16);
	} else if (h.op == VPMU_PV_OP_PERFMON_OPEN || h.op == VPMU_PV_OP_PCTR_OPEN) {
		f->fd[h.op == VPMU_PV_OP_PCTR_OPEN] = (int32_t)post.retval;
	} else if (h.op == VPMU_PV_OP_PMCALLOCATE) {
		memcpy(&f->pmcid, hva(gpa, VPMU_PV_HDRSIZE + 28) + VPMU_PV_HDRSIZE + 24, 4);
	} else if (h.op == VPMU_PV_OP_FASTPAGE_SET) {
		uint64_t page;

		memcpy(&page, hva(gpa, VPMU_PV_HDRSIZE + 8) + VPMU_PV_HDRSIZE, 8);
		if (verbose)
			fprintf(stderr, "fast-read page 0x%llx\n", (unsigned long long)page);
		for (i = 0; i < f->npages && f->pages[i] != page; i++)
			;
		if (i == f->npages) {
			/* more pages than the check follows: the rest goes unchecked */
			if (f->npages == MAXPAGES)
				f->unchecked = true;
			else
				f->pages[f->npages++] = page;
		}
		allow(page, PAGE);
	}
	f->last[cpu] = post.error;
}

/* The guest writes len bytes at gpa: those that are RAM. */
static void
poke(uint64_t gpa, const void *src, size_t len)
{
	const uint8_t *b = src;
	uint8_t *p;
	size_t i;

	if ((p = hva(gpa, len)) != NULL) {
		memcpy(p, b, len);
		return;
	}
	for (i = 0; i < len; i++)
		if ((p = hva(gpa + i, 1)) != NULL)
			*p = b[i];
}

/* The ioctls of perfmon(4) and pctr(4) (vpmu-guest/perfmon.h, pctr.h). */
static const uint32_t ioctls[] = {
	0x80083501, 0x80043502, 0x80043503, 0xc0103504, 0x80043505, 0x40103506,
	0xc0083507, 0xc00c3504, 0x400c3506,
	0x40386301, 0x80046308, 0x80046309, 0x8004630a, 0x8004630b,
};

/* Where the argument of op holds a PMC id, or -1. */
static int
pmcid_at(uint32_t op)
{
	switch (op) {
	case VPMU_PV_OP_PMCATTACH:
	case VPMU_PV_OP_PMCDETACH:
	case VPMU_PV_OP_PMCRELEASE:
	case VPMU_PV_OP_PMCSTART:
	case VPMU_PV_OP_PMCSTOP:
		return (0);
	case VPMU_PV_OP_PMCGETMSR:
	case VPMU_PV_OP_PMCRW:
		return (4);
	case VPMU_PV_OP_PMCSETCOUNT:
		return (8);
	default:
		return (-1);
	}
}

/* A block of one of ops[], with one header field maybe corrupted. */
static void
block(struct fz *f, struct input *in)
{
	uint64_t gpa = pick_gpa(in);
	uint8_t opi = (uint8_t)take(in, 1), lenhow = (uint8_t)take(in, 1);
	uint8_t who = (uint8_t)take(in, 1), bad = (uint8_t)take(in, 1);
	struct vpmu_pv_req h;
	uint32_t arglen, i;
	int off;

	memset(&h, 0, sizeof(h));
	h.magic = VPMU_PV_MAGIC;
	h.version = VPMU_PV_VERSION;
	h.hdrsize = VPMU_PV_HDRSIZE;
	h.op = ops[opi % NELEM(ops)];
	switch (lenhow >> 6) {
	case 0: arglen = lenhow & 0x3F; break;
	case 1: arglen = (lenhow & 0x3F) * 8; break;
	case 2: arglen = (uint32_t)take(in, 2); break;
	default: arglen = 8 + 104 * (lenhow & 0x3F); break;	/* GETPMCINFO rows */
	}
	h.arglen = arglen;
	h.pid = (who & 3) == 3 ? (int32_t)take(in, 4) : (int32_t)(who & 3) * 50 + 1;
	h.tid = h.pid;
	h.uid = (who & 4) ? 1000 : 0;
	h.cflags = (who >> 3) & 3 ? (who >> 3) & 3 : VPMU_PV_CRED_PRIVILEGED;
	switch (bad & 15) {
	case 1: h.magic ^= 1u << (bad >> 4); break;
	case 2: h.version = bad >> 4; break;
	case 3: h.hdrsize = 8 * (bad >> 4); break;
	case 4: h.reserved[(bad >> 4) & 1] = 1; break;
	case 5: h.arglen = VPMU_PV_MAX_BLOCK - VPMU_PV_HDRSIZE + (bad >> 4) - 8; break;
	case 6: h.cflags = bad; break;
	case 7: h.pid = (bad & 0x10) ? VPMU_PV_PID_MAX + 1 : -(int32_t)(bad >> 4); break;
	case 8: h.error = -1; h.done = 1; h.retval = -1; break;
	default: break;
	}
	/* the guest writes it: as much as is RAM */
	poke(gpa, &h, sizeof(h));
	i = arglen < in->n ? arglen : (uint32_t)in->n;
	poke(gpa + VPMU_PV_HDRSIZE, in->p, i);
	in->p += i;
	in->n -= i;
	/*
	 * who bit 7: the PMC id the last allocation gave, or the descriptor
	 * the device's last open gave, where the op has one; bit 6: an ioctl
	 * the device knows.
	 */
	if ((who & 0x80) && (off = pmcid_at(h.op)) >= 0)
		poke(gpa + VPMU_PV_HDRSIZE + (unsigned)off, &f->pmcid, 4);
	if ((who & 0x80) && (h.op == VPMU_PV_OP_PERFMON_CLOSE ||
	    h.op == VPMU_PV_OP_PERFMON_IOCTL))
		poke(gpa + VPMU_PV_HDRSIZE, &f->fd[0], 4);
	if ((who & 0x80) && (h.op == VPMU_PV_OP_PCTR_CLOSE || h.op == VPMU_PV_OP_PCTR_IOCTL))
		poke(gpa + VPMU_PV_HDRSIZE, &f->fd[1], 4);
	if ((who & 0x40) && (h.op == VPMU_PV_OP_PERFMON_IOCTL || h.op == VPMU_PV_OP_PCTR_IOCTL))
		poke(gpa + VPMU_PV_HDRSIZE + 4, &ioctls[(bad >> 4) % NELEM(ioctls)], 4);
	f->block = gpa;
}

static void
msr_exit(struct fz *f, unsigned cpu, struct input *in)
{
	static const uint32_t msrs[] = {
		0xC1, 0x186, 0x309, 0x38D, 0x38E, 0x38F, 0x390, 0xC0010000,
		0xC0010004, 0xC0010200, 0xC0010201, 0xC0000300, 0xC0000301, 0x1D9,
	};
	uint8_t s = (uint8_t)take(in, 1);
	struct vpmu_exit x;

	memset(&x, 0, sizeof(x));
	x.reason = (s & 1) ? VPMU_EXIT_MSR_WRITE : VPMU_EXIT_MSR_READ;
	x.flags = VPMU_EXITF_RAN;
	x.index = msrs[(s >> 1) % NELEM(msrs)] + (s >> 5);
	x.data = (s & 0x80) ? take(in, 8) : 0x43003C;
	x.regs = &f->regs;
	CHECK(vpmu_vcpu_exit(f->vm, cpu, &x) == 0);
	CHECK(x.handled <= 1 && x.fault <= 1 && (!x.fault || x.handled));
}

static void
other(struct fz *f, unsigned cpu, struct input *in)
{
	struct vpmu_exit x;

	memset(&x, 0, sizeof(x));
	x.reason = VPMU_EXIT_OTHER;
	x.flags = VPMU_EXITF_RAN;
	x.ran_ns = take(in, 2) * 1000;
	x.regs = &f->regs;
	CHECK(vpmu_vcpu_exit(f->vm, cpu, &x) == 0);
	CHECK(x.handled == 0);
}

static void
setup(void)
{
	size_t off = GUARD;
	unsigned i;

	for (i = 0; i < NSLOTS; i++) {
		slot_off[i] = off;
		off += slots[i].size + GUARD;
	}
	ramsize = off;
	/* page-aligned slots: the fast-read pages want 4 KiB alignment */
	CHECK(posix_memalign((void **)&ram, PAGE, ramsize) == 0);
	CHECK((shadow = malloc(ramsize)) != NULL);
}

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	static int devnull = -1;
	struct input in = { data, size };
	struct vpmu_model m;
	vpmu_config *cfg;
	struct fz f;
	unsigned i, cpu, ncmd;
	uint8_t hdr, kind;

	if (size < 1)
		return (0);
	if (ram == NULL) {
		setup();
		verbose = getenv("FUZZ_PV_VERBOSE") != NULL;
		CHECK((devnull = open("/dev/null", O_WRONLY | O_CLOEXEC)) >= 0);
	}
	hdr = (uint8_t)take(&in, 1);
	memset(&f, 0, sizeof(f));
	f.nvcpus = (hdr & 3) + 1;
	f.base = bases[(hdr >> 4) & 3];
	CHECK(vpmu_model_parse(models[(hdr >> 2) & 3], &m, NULL, 0) == 0);
	CHECK(vpmu_config_create(&cfg) == 0);
	CHECK(vpmu_config_set_vcpus(cfg, f.nvcpus) == 0);
	CHECK(vpmu_config_set_model(cfg, &m) == 0);
	CHECK(vpmu_config_set_pv_port(cfg, f.base) == 0);
	if (hdr & 0x40)
		CHECK(vpmu_config_set_tunable(cfg, "unprivileged_syspmcs", 1) == 0);
	CHECK(vpmu_vm_create(cfg, &f.vm) == 0);
	vpmu_config_destroy(cfg);
	CHECK(vpmu_pv_set_fastpage_rate(f.vm, 0) == 0);
	CHECK(vpmu_pv_set_logfd(f.vm, 3, devnull) == 0);
	CHECK(vpmu_pv_set_logfd(f.vm, 5, devnull) == 0);
	memset(ram, 0xCC, ramsize);		/* the guards, and RAM not yet written */
	for (i = 0; i < NSLOTS; i++) {
		memset(ram + slot_off[i], 0, slots[i].size);
		CHECK(vpmu_pv_add_memory(f.vm, slots[i].gpa, slots[i].size,
		    ram + slot_off[i]) == 0);
	}
	f.regs.rip = 0x100;
	f.regs.rsp = 0x2000;
	f.regs.rbp = 0x2ff0;

	for (ncmd = 0; in.n > 0 && ncmd < MAXCMDS; ncmd++) {
		kind = (uint8_t)take(&in, 1);
		cpu = (kind >> 4) % f.nvcpus;
		before(&f);
		switch (kind & 15) {
		case 0: {			/* POKE: the guest writes */
			uint64_t gpa = pick_gpa(&in);
			size_t n = (size_t)take(&in, 1) & 63;

			n = n < in.n ? n : in.n;
			poke(gpa, in.p, n);
			in.p += n;
			in.n -= n;
			memcpy(shadow, ram, ramsize);
			break;
		}
		case 1:
		case 2:
			block(&f, &in);		/* built, then rung */
			memcpy(shadow, ram, ramsize);
			/* FALLTHROUGH */
		case 3:
		case 4: {			/* RING at the block, with its high half */
			uint8_t how = (uint8_t)take(&in, 1);
			uint64_t gpa = (how & 0x40) ? pick_gpa(&in) : f.block;

			if ((how & 0x80) || (gpa >> 32) != 0) {
				io(&f, cpu, f.base + VPMU_PV_PORT_HI_OFFSET, true, 4, false,
				    how & 1, (uint32_t)(gpa >> 32));
			}
			if (f.base != 0)
				ring(&f, cpu, (uint32_t)gpa, how & 2);
			break;
		}
		case 5:
		case 6: {			/* PORT: any access near the channel's */
			uint8_t p = (uint8_t)take(&in, 1), how = (uint8_t)take(&in, 1);
			uint16_t port = (p & 0x80) ? (uint16_t)take(&in, 2) :
			    (uint16_t)(f.base + (p & 15) - 4);
			static const unsigned sizes[] = { 1, 2, 4, 4, 0, 3, 8, 4 };
			uint32_t v = (uint32_t)take(&in, 4);

			/* a ring is checked by RING, with what it may write */
			if (f.base != 0 && port == f.base && (how & 1) &&
			    sizes[(how >> 2) & 7] == 4 && !(how & 2))
				port++;
			io(&f, cpu, port, how & 1, sizes[(how >> 2) & 7], (how & 2) != 0,
			    (how & 0x20) != 0 || (how & 2), v);
			break;
		}
		case 7:
		case 8:
			msr_exit(&f, cpu, &in);
			break;
		case 9:
		case 10:
			other(&f, cpu, &in);
			break;
		case 11: {
			struct vpmu_entry e;

			CHECK(vpmu_vcpu_enter(f.vm, cpu, &e) == 0);
			break;
		}
		default:
			other(&f, cpu, &in);
			break;
		}
		if (!f.unchecked)
			after();
	}
	vpmu_vm_destroy(f.vm);
	/* nothing is written after the VM is gone, nor outside the slots */
	for (i = 0; i < NSLOTS; i++) {
		CHECK(ram[slot_off[i] - 1] == 0xCC && ram[slot_off[i] - GUARD] == 0xCC);
		CHECK(ram[slot_off[i] + slots[i].size] == 0xCC);
	}
	return (0);
}
