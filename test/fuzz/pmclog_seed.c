/*
 * pmclog_seed.c -- write a seed corpus for fuzz_pmclog (and fuzz_vpmustat,
 * whose inputs have the same shape): logs made by the encoder, each after
 * the 4 option bytes (fuzz_pmclog: the chunk sizes).
 *
 *   pmclog_seed DIR
 *
 * The seeds reach every record type and every way the reader can refuse
 * a log (libvpmu/pmclog.c, check_header() and decode()), one file each:
 *
 *   all_types*       every type, valid, fed in two chunkings
 *   type_NAME        INITIALIZE, one record of type NAME, CLOSELOG
 *   err_magic        a header whose magic is not 0xEE
 *   err_type_N       types 0 and 4 (the old numbering's), 21, 255
 *   err_len_*        lengths: under the header, 0, not a multiple of 4,
 *                    over 4128, not a fixed type's size, under a tail
 *                    type's fixed part, a path field over 1024
 *   err_nul_*        a name (cpuid, evname, tdname, pcomm) or a path
 *                    (MAP_IN, PMCATTACH, PROCEXEC; also an empty one) with
 *                    no NUL
 *   err_header_only  the 4 bytes of a bad header, nothing after
 *   ok_*             edges that are not errors: a record cut short, a
 *                    header cut short, data after CLOSELOG, CALLCHAINs of
 *                    0 and 512 addresses and with an odd word, a path of
 *                    1023 bytes, a path field of 1024
 *
 * No seed is over 64 KB, though the buffer reader moves and grows its
 * buffer only then (test_pmclog.c covers that): libFuzzer takes the
 * largest seed as its length limit, and inputs that long cost a third of
 * the executions.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <vpmu/hwpmc.h>
#include <vpmu/pmclog.h>

static unsigned char buf[64 * 1024];
static size_t used;
static const char *dir;
static struct vpmu_pmclog_ev ev;

static void
begin(const char *chunks)
{
	memcpy(buf, chunks, 4);
	used = 4;
}

static void
put32(size_t at, uint32_t v)
{
	buf[at] = (unsigned char)v;
	buf[at + 1] = (unsigned char)(v >> 8);
	buf[at + 2] = (unsigned char)(v >> 16);
	buf[at + 3] = (unsigned char)(v >> 24);
}

/* Append ev; the record's offset in buf. */
static size_t
add(void)
{
	size_t n;

	if (vpmu_pmclog_encode(&ev, buf + used, sizeof(buf) - used, &n) != 0) {
		fprintf(stderr, "pmclog_seed: cannot encode type %u\n", ev.type);
		exit(1);
	}
	used += n;
	return (used - n);
}

/* n bytes of value c. */
static void
pad(size_t n, int c)
{
	if (n > sizeof(buf) - used) {
		fprintf(stderr, "pmclog_seed: buffer full\n");
		exit(1);
	}
	memset(buf + used, c, n);
	used += n;
}

static void
save(const char *name)
{
	char path[4096];
	FILE *f;

	snprintf(path, sizeof(path), "%s/%s", dir, name);
	if ((f = fopen(path, "wb")) == NULL || fwrite(buf, 1, used, f) != used ||
	    fclose(f) != 0) {
		perror(path);
		exit(1);
	}
}

/* ev: a record of type type with plausible fields. */
static void
make(uint32_t type)
{
	static uint64_t tsc = 1000;
	unsigned j;

	memset(&ev, 0, sizeof(ev));
	ev.type = type;
	ev.tsc = tsc++;
	switch (type) {
	case VPMU_PMCLOG_INITIALIZE:
		ev.u.initialize.version = VPMU_PMC_VERSION;
		ev.u.initialize.cputype = 0x8c;
		ev.u.initialize.tsc_freq = 2000000000;
		ev.u.initialize.sec = 1700000000;
		strcpy(ev.u.initialize.cpuid, "GenuineIntel-6-55-4");
		break;
	case VPMU_PMCLOG_PMCALLOCATE:
		ev.u.pmcallocate.pmcid = 0x101;
		ev.u.pmcallocate.event = 0xc0;
		ev.u.pmcallocate.flags = VPMU_F_CALLCHAIN;
		ev.u.pmcallocate.rate = 65536;
		break;
	case VPMU_PMCLOG_PMCALLOCATEDYN:
		ev.u.pmcallocatedyn.pmcid = 0x100;
		ev.u.pmcallocatedyn.flags = VPMU_F_CALLCHAIN;
		strcpy(ev.u.pmcallocatedyn.evname, "instructions");
		break;
	case VPMU_PMCLOG_CALLCHAIN:
		ev.u.callchain.pid = 1;
		ev.u.callchain.tid = 100001;
		ev.u.callchain.pmcid = 0x100;
		ev.u.callchain.cpuflags = VPMU_PMCLOG_CPUFLAGS(1, VPMU_PMCLOG_CC_F_USERSPACE);
		ev.u.callchain.npc = 4;
		for (j = 0; j < 4; j++)
			ev.u.callchain.pc[j] = 0x103af0 + 0x40 * j + 4;
		break;
	case VPMU_PMCLOG_MAP_IN:
		ev.u.map_in.pid = 1;
		ev.u.map_in.start = 0x100000;
		strcpy(ev.u.map_in.path, "/lib/libc.so.7");
		break;
	case VPMU_PMCLOG_MAP_OUT:
		ev.u.map_out.start = 0x100000;
		ev.u.map_out.end = 0x104000;
		break;
	case VPMU_PMCLOG_PMCATTACH:
		ev.u.pmcattach.pmcid = 0x100;
		strcpy(ev.u.pmcattach.path, "/bin/sh");
		break;
	case VPMU_PMCLOG_PROCEXEC:
		ev.u.procexec.pid = 2;
		strcpy(ev.u.procexec.path, "/usr/bin/make");
		break;
	case VPMU_PMCLOG_THR_CREATE:
		ev.u.thr_create.tid = 100002;
		strcpy(ev.u.thr_create.tdname, "worker");
		break;
	case VPMU_PMCLOG_PROC_CREATE:
		ev.u.proc_create.pid = 3;
		strcpy(ev.u.proc_create.pcomm, "make");
		break;
	default:
		/* the first words of every other member */
		ev.u.proccsw.value = 12345;
		ev.u.proccsw.pmcid = 0x100;
		ev.u.proccsw.pid = 1;
		ev.u.proccsw.tid = 100001;
	}
}

static size_t
rec(uint32_t type)
{
	make(type);
	return (add());
}

/* INITIALIZE and PMCALLOCATEDYN: what a log starts with. */
static void
start(void)
{
	begin("\x01\x00\x00\x00");
	rec(VPMU_PMCLOG_INITIALIZE);
	rec(VPMU_PMCLOG_PMCALLOCATEDYN);
}

/* A log whose last record has header word h and is n bytes (c after the header). */
static void
bad_header(const char *name, uint32_t type, uint32_t len, size_t n, int c)
{
	start();
	put32(used, VPMU_PMCLOG_HEADER_WORD(type, len));
	put32(used + 4, 0);
	used += 8;
	pad(n > 8 ? n - 8 : 0, c);
	rec(VPMU_PMCLOG_CLOSELOG);
	save(name);
}

/* A log with a record of type whose string at off (size bytes; 0: to its end) has no NUL. */
static void
no_nul(const char *name, uint32_t type, size_t off, size_t size)
{
	size_t at, end;

	start();
	at = rec(type);
	end = size != 0 ? at + off + size : used;
	memset(buf + at + off, 'x', end - at - off);
	rec(VPMU_PMCLOG_CLOSELOG);
	save(name);
}

int
main(int argc, char **argv)
{
	static const uint32_t types[] = { 3, 17, 5, 20, 18, 6, 14, 9, 16, 8, 10,
	    11, 13, 2, 15, 12, 19, 7, 16, 1 };
	char name[64];
	size_t at, i;
	unsigned j;

	if (argc != 2) {
		fprintf(stderr, "usage: pmclog_seed DIR\n");
		return (2);
	}
	dir = argv[1];

	/* Every type, valid. */
	begin("\x01\x00\x00\x00");
	for (i = 0; i < sizeof(types) / sizeof(types[0]); i++) {
		make(types[i]);
		if (types[i] == VPMU_PMCLOG_CALLCHAIN) {
			ev.u.callchain.npc = 1 + (unsigned)i % 8;
			for (j = 0; j < ev.u.callchain.npc; j++)
				ev.u.callchain.pc[j] = 0x401000 + j;
		}
		add();
	}
	save("all_types");
	memcpy(buf, "\xff\x7f\x31\x9e", 4);	/* other chunk sizes */
	save("all_types_chunked");
	for (i = 1; i <= VPMU_PMCLOG_PROC_CREATE; i++) {
		if (vpmu_pmclog_type_name((uint32_t)i) == NULL)
			continue;
		begin("\x35\x00\x00\x00");
		rec(VPMU_PMCLOG_INITIALIZE);
		rec((uint32_t)i);
		rec(VPMU_PMCLOG_CLOSELOG);
		snprintf(name, sizeof(name), "type_%s", vpmu_pmclog_type_name((uint32_t)i));
		save(name);
	}

	/* check_header(): every refusal. */
	start();
	at = rec(VPMU_PMCLOG_PROCCSW);
	buf[at + 3] = 0xEF;
	rec(VPMU_PMCLOG_CLOSELOG);
	save("err_magic");
	bad_header("err_type_0", 0, 16, 16, 0);
	bad_header("err_type_4", 4, 16, 16, 0);
	bad_header("err_type_21", 21, 16, 16, 0);
	bad_header("err_type_255", 255, 16, 16, 0);
	bad_header("err_len_short", VPMU_PMCLOG_DROPNOTIFY, 8, 8, 0);
	bad_header("err_len_zero", VPMU_PMCLOG_CLOSELOG, 0, 16, 0);
	bad_header("err_len_misaligned", VPMU_PMCLOG_PROCCSW, 42, 44, 0);
	bad_header("err_len_over", VPMU_PMCLOG_CALLCHAIN, VPMU_PMCLOG_MAX_RECORD + 4,
	    VPMU_PMCLOG_MAX_RECORD + 4, 0);
	bad_header("err_len_fixed", VPMU_PMCLOG_PROCCSW, 44, 44, 0);
	bad_header("err_len_tail_short", VPMU_PMCLOG_MAP_IN, 28, 28, 0);
	bad_header("err_len_callchain_short", VPMU_PMCLOG_CALLCHAIN, 24, 24, 0);
	bad_header("err_len_path_over", VPMU_PMCLOG_PMCATTACH,
	    24 + VPMU_PMCLOG_PATH_MAX + 4, 24 + VPMU_PMCLOG_PATH_MAX + 4, 'p');
	begin("\x01\x00\x00\x00");
	put32(used, VPMU_PMCLOG_HEADER_WORD(VPMU_PMCLOG_PROCCSW, 4096 + 2));
	used += 4;
	save("err_header_only");

	/* decode(): strings without their NUL. */
	no_nul("err_nul_cpuid", VPMU_PMCLOG_INITIALIZE, 48, 64);
	no_nul("err_nul_evname", VPMU_PMCLOG_PMCALLOCATEDYN, 32, 64);
	no_nul("err_nul_tdname", VPMU_PMCLOG_THR_CREATE, 32, 20);
	no_nul("err_nul_pcomm", VPMU_PMCLOG_PROC_CREATE, 24, 20);
	no_nul("err_nul_map_in", VPMU_PMCLOG_MAP_IN, 32, 0);
	no_nul("err_nul_pmcattach", VPMU_PMCLOG_PMCATTACH, 24, 0);
	no_nul("err_nul_procexec", VPMU_PMCLOG_PROCEXEC, 40, 0);
	bad_header("err_nul_path_empty", VPMU_PMCLOG_MAP_IN, 32, 32, 0);

	/* Not errors. */
	start();
	rec(VPMU_PMCLOG_CALLCHAIN);
	at = rec(VPMU_PMCLOG_CALLCHAIN);
	used = at + 21;
	save("ok_cut_record");
	start();
	at = rec(VPMU_PMCLOG_CALLCHAIN);
	used = at + 2;
	save("ok_cut_header");
	start();
	rec(VPMU_PMCLOG_CLOSELOG);
	rec(VPMU_PMCLOG_CALLCHAIN);
	rec(VPMU_PMCLOG_CLOSELOG);
	save("ok_after_closelog");
	start();
	make(VPMU_PMCLOG_CALLCHAIN);
	ev.u.callchain.npc = 0;
	add();
	make(VPMU_PMCLOG_CALLCHAIN);
	ev.u.callchain.npc = VPMU_PMCLOG_CALLCHAIN_MAX;
	for (j = 0; j < VPMU_PMCLOG_CALLCHAIN_MAX; j++)
		ev.u.callchain.pc[j] = 0x103b70 - 0x10 * (j % 16) + 4;
	add();
	save("ok_callchain_0_512");
	start();
	at = rec(VPMU_PMCLOG_CALLCHAIN);
	pad(4, 0xcc);
	put32(at, VPMU_PMCLOG_HEADER_WORD(VPMU_PMCLOG_CALLCHAIN, used - at));
	rec(VPMU_PMCLOG_CLOSELOG);
	save("ok_callchain_odd_word");
	start();
	make(VPMU_PMCLOG_PROCEXEC);
	memset(ev.u.procexec.path, 'q', VPMU_PMCLOG_PATH_MAX - 1);
	ev.u.procexec.path[VPMU_PMCLOG_PATH_MAX - 1] = '\0';
	add();
	at = rec(VPMU_PMCLOG_MAP_IN);
	pad(VPMU_PMCLOG_PATH_MAX - (used - at - 32), 0);
	put32(at, VPMU_PMCLOG_HEADER_WORD(VPMU_PMCLOG_MAP_IN, used - at));
	save("ok_path_1023_field_1024");

	return (0);
}
