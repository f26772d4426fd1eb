/*
 * test_pmclog.c -- the pmclog encoder and reader (<vpmu/pmclog.h>).
 *
 * Each record type is encoded and its bytes are checked against offsets
 * written out here by hand from the format (pmclog(5), hwpmc_spec.md
 * §2.3): every byte of the record must be named by one check, and
 * nothing may be written past it.  Then the record is read back and
 * compared field by field.  Then streams: cut at every byte, fed in
 * every chunk size, read from a file, a pipe and a non-blocking pipe;
 * and bad logs, each of which must give a final EBADMSG.
 */
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <sched.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <cmocka.h>

#include <vpmu/pmclog.h>

/* ---- byte checks written by hand ------------------------------------------- */

static unsigned char rec[VPMU_PMCLOG_MAX_RECORD + 64];
static bool named[sizeof(rec)];		/* bytes a check has looked at */

/* Bytes off .. off+n-1 as a little-endian number, read one byte at a time. */
static uint64_t
le(const unsigned char *p, size_t n)
{
	uint64_t v = 0;

	while (n-- > 0)
		v = v << 8 | p[n];
	return (v);
}

static void
name_bytes(size_t from, size_t n)
{
	size_t i;

	for (i = from; i < from + n; i++) {
		assert_false(named[i]);		/* one check per byte */
		named[i] = true;
	}
}

/* Bytes off..off+3 hold v. */
static void
at32(size_t off, uint32_t v)
{
	assert_int_equal(le(rec + off, 4), v);
	name_bytes(off, 4);
}

/* Bytes off..off+7 hold v. */
static void
at64(size_t off, uint64_t v)
{
	assert_int_equal(le(rec + off, 8), v);
	name_bytes(off, 8);
}

/* Bytes from..to (inclusive) are zero. */
static void
zero(size_t from, size_t to)
{
	size_t i;

	for (i = from; i <= to; i++)
		assert_int_equal(rec[i], 0);
	name_bytes(from, to - from + 1);
}

/* Bytes from..to (inclusive) hold s, then zeros (its NUL and padding). */
static void
text(size_t from, size_t to, const char *s)
{
	size_t n = strlen(s);

	assert_true(n < to - from + 1);
	assert_memory_equal(rec + from, s, n);
	name_bytes(from, n);
	zero(from + n, to);
}

/* vpmu_pmclog_encode(ev, buf, cap) returns err with the length want. */
#define ENCODE_IS(ev, buf, cap, err, want) do {				\
	size_t len_ = 0xBAD;						\
									\
	assert_int_equal(vpmu_pmclog_encode((ev), (buf), (cap), &len_), (err)); \
	assert_int_equal(len_, (want));					\
} while (0)
/* vpmu_pmclog_encoded_len(ev) returns err with the length want. */
#define ENCODED_LEN_IS(ev, err, want) do {				\
	size_t len_ = 0xBAD;						\
									\
	assert_int_equal(vpmu_pmclog_encoded_len((ev), &len_), (err));	\
	assert_int_equal(len_, (want));					\
} while (0)

/* Encode ev into rec (filled with 0xA5 first); it must take len bytes. */
static void
encode(const struct vpmu_pmclog_ev *ev, size_t len)
{
	memset(rec, 0xA5, sizeof(rec));
	memset(named, 0, sizeof(named));
	ENCODE_IS(ev, rec, sizeof(rec), 0, len);
	ENCODED_LEN_IS(ev, 0, len);
}

/* Every byte of the len-byte record was checked; none after it was written. */
static void
all_named(size_t len)
{
	size_t i;

	for (i = 0; i < len; i++)
		if (!named[i])
			fail_msg("byte %zu of the record was not checked", i);
	for (i = len; i < len + 16; i++)
		assert_int_equal(rec[i], 0xA5);
}

/* Read rec back through a buffer reader: one record, then EAGAIN. */
static void
decode(size_t len, struct vpmu_pmclog_ev *out)
{
	vpmu_pmclog_reader *r;

	memset(out, 0x5A, sizeof(*out));
	assert_int_equal(vpmu_pmclog_open_buffer(&r), 0);
	assert_int_equal(vpmu_pmclog_feed(r, rec, len), 0);
	assert_int_equal(vpmu_pmclog_read(r, out), 0);
	assert_int_equal(out->len, len);
	assert_int_equal(out->offset, 0);
	assert_int_equal(vpmu_pmclog_read(r, out), out->type == VPMU_PMCLOG_CLOSELOG ?
	    ENODATA : EAGAIN);
	vpmu_pmclog_close(r);
}

#define TSC	0x8877665544332211ull

/* ---- every record type: bytes by hand, then read back -------------------- */

static void
record_closelog(void **state)
{
	struct vpmu_pmclog_ev ev = { .type = VPMU_PMCLOG_CLOSELOG, .tsc = TSC }, out;

	(void)state;
	encode(&ev, 16);
	at32(0, 0xEE010010);
	zero(4, 7);
	at64(8, TSC);
	all_named(16);
	decode(16, &out);
	assert_int_equal(out.type, VPMU_PMCLOG_CLOSELOG);
	assert_int_equal(out.tsc, TSC);
}

static void
record_dropnotify(void **state)
{
	struct vpmu_pmclog_ev ev = { .type = VPMU_PMCLOG_DROPNOTIFY, .tsc = 1 }, out;

	(void)state;
	encode(&ev, 16);
	at32(0, 0xEE020010);
	zero(4, 7);
	at64(8, 1);
	all_named(16);
	decode(16, &out);
	assert_int_equal(out.type, VPMU_PMCLOG_DROPNOTIFY);
	assert_int_equal(out.tsc, 1);
}

static void
record_initialize(void **state)
{
	struct vpmu_pmclog_ev ev = { .type = VPMU_PMCLOG_INITIALIZE, .tsc = TSC }, out;

	(void)state;
	ev.u.initialize.version = 0x0A000000;
	ev.u.initialize.cputype = 0x87;
	ev.u.initialize.tsc_freq = 2893299000ull;
	ev.u.initialize.sec = 1700000000;
	ev.u.initialize.nsec = 123456789;
	strcpy(ev.u.initialize.cpuid, "GenuineIntel-6-55-4");
	encode(&ev, 112);
	at32(0, 0xEE030070);
	zero(4, 7);
	at64(8, TSC);
	at32(16, 0x0A000000);		/* version */
	at32(20, 0x87);			/* cpu type */
	at64(24, 2893299000ull);	/* tsc_freq */
	at64(32, 1700000000);		/* ts.tv_sec */
	at64(40, 123456789);		/* ts.tv_nsec */
	text(48, 111, "GenuineIntel-6-55-4");	/* cpuid[64] */
	all_named(112);
	decode(112, &out);
	assert_int_equal(out.type, VPMU_PMCLOG_INITIALIZE);
	assert_int_equal(out.tsc, TSC);
	assert_int_equal(out.u.initialize.version, 0x0A000000);
	assert_int_equal(out.u.initialize.cputype, 0x87);
	assert_int_equal(out.u.initialize.tsc_freq, 2893299000ull);
	assert_int_equal(out.u.initialize.sec, 1700000000);
	assert_int_equal(out.u.initialize.nsec, 123456789);
	assert_string_equal(out.u.initialize.cpuid, "GenuineIntel-6-55-4");
}

static void
record_pmcallocate(void **state)
{
	struct vpmu_pmclog_ev ev = { .type = VPMU_PMCLOG_PMCALLOCATE, .tsc = TSC }, out;

	(void)state;
	ev.u.pmcallocate.pmcid = 0x11223344;
	ev.u.pmcallocate.event = 0x10000;
	ev.u.pmcallocate.flags = 0x00000810;
	ev.u.pmcallocate.rate = 0x0102030405060708ull;
	encode(&ev, 40);
	at32(0, 0xEE050028);
	zero(4, 7);
	at64(8, TSC);
	at32(16, 0x11223344);		/* pmcid */
	at32(20, 0x10000);		/* event */
	at32(24, 0x810);		/* flags */
	zero(28, 31);			/* pad */
	at64(32, 0x0102030405060708ull);	/* rate */
	all_named(40);
	decode(40, &out);
	assert_int_equal(out.type, VPMU_PMCLOG_PMCALLOCATE);
	assert_int_equal(out.u.pmcallocate.pmcid, 0x11223344);
	assert_int_equal(out.u.pmcallocate.event, 0x10000);
	assert_int_equal(out.u.pmcallocate.flags, 0x810);
	assert_int_equal(out.u.pmcallocate.rate, 0x0102030405060708ull);
}

static void
record_pmcattach(void **state)
{
	struct vpmu_pmclog_ev ev = { .type = VPMU_PMCLOG_PMCATTACH, .tsc = TSC }, out;

	(void)state;
	ev.u.pmcattach.pmcid = 0x40000007;
	ev.u.pmcattach.pid = 4242;
	strcpy(ev.u.pmcattach.path, "/bin/sh");
	encode(&ev, 32);		/* 24 + 7 + NUL = 32 */
	at32(0, 0xEE060020);
	zero(4, 7);
	at64(8, TSC);
	at32(16, 0x40000007);		/* pmcid */
	at32(20, 4242);			/* pid */
	text(24, 31, "/bin/sh");	/* path, NUL at 31 */
	all_named(32);
	decode(32, &out);
	assert_int_equal(out.type, VPMU_PMCLOG_PMCATTACH);
	assert_int_equal(out.u.pmcattach.pmcid, 0x40000007);
	assert_int_equal(out.u.pmcattach.pid, 4242);
	assert_string_equal(out.u.pmcattach.path, "/bin/sh");

	/* An empty path: its NUL and three bytes of padding. */
	ev.u.pmcattach.path[0] = '\0';
	encode(&ev, 28);
	at32(0, 0xEE06001C);
	zero(4, 7);
	at64(8, TSC);
	at32(16, 0x40000007);
	at32(20, 4242);
	zero(24, 27);
	all_named(28);
	decode(28, &out);
	assert_string_equal(out.u.pmcattach.path, "");
}

static void
record_pmcdetach(void **state)
{
	struct vpmu_pmclog_ev ev = { .type = VPMU_PMCLOG_PMCDETACH, .tsc = TSC }, out;

	(void)state;
	ev.u.pmcdetach.pmcid = 0xA1B2C3D4;
	ev.u.pmcdetach.pid = 0x00010203;
	encode(&ev, 24);
	at32(0, 0xEE070018);
	zero(4, 7);
	at64(8, TSC);
	at32(16, 0xA1B2C3D4);		/* pmcid */
	at32(20, 0x00010203);		/* pid */
	all_named(24);
	decode(24, &out);
	assert_int_equal(out.type, VPMU_PMCLOG_PMCDETACH);
	assert_int_equal(out.u.pmcdetach.pmcid, 0xA1B2C3D4);
	assert_int_equal(out.u.pmcdetach.pid, 0x00010203);
}

static void
record_proccsw(void **state)
{
	struct vpmu_pmclog_ev ev = { .type = VPMU_PMCLOG_PROCCSW, .tsc = TSC }, out;

	(void)state;
	ev.u.proccsw.value = 0xDEADBEEFCAFEF00Dull;
	ev.u.proccsw.pmcid = 0x11111111;
	ev.u.proccsw.pid = 0x22222222;
	ev.u.proccsw.tid = 0x33333333;
	encode(&ev, 40);
	at32(0, 0xEE080028);
	zero(4, 7);
	at64(8, TSC);
	at64(16, 0xDEADBEEFCAFEF00Dull);	/* value */
	at32(24, 0x11111111);		/* pmcid */
	at32(28, 0x22222222);		/* pid */
	at32(32, 0x33333333);		/* tid */
	zero(36, 39);			/* pad */
	all_named(40);
	decode(40, &out);
	assert_int_equal(out.type, VPMU_PMCLOG_PROCCSW);
	assert_int_equal(out.u.proccsw.value, 0xDEADBEEFCAFEF00Dull);
	assert_int_equal(out.u.proccsw.pmcid, 0x11111111);
	assert_int_equal(out.u.proccsw.pid, 0x22222222);
	assert_int_equal(out.u.proccsw.tid, 0x33333333);
}

static void
record_procexec(void **state)
{
	struct vpmu_pmclog_ev ev = { .type = VPMU_PMCLOG_PROCEXEC, .tsc = TSC }, out;

	(void)state;
	ev.u.procexec.pid = 77;
	ev.u.procexec.pmcid = 0xFFFFFFFF;	/* PMC_ID_INVALID */
	ev.u.procexec.base = 0x0000000800200000ull;
	ev.u.procexec.dyn = 0x0000000001021000ull;
	strcpy(ev.u.procexec.path, "/usr/bin/cc");
	encode(&ev, 52);		/* 40 + 11 + NUL = 52 */
	at32(0, 0xEE090034);
	zero(4, 7);
	at64(8, TSC);
	at32(16, 77);			/* pid */
	at32(20, 0xFFFFFFFF);		/* pmcid */
	at64(24, 0x0000000800200000ull);	/* base */
	at64(32, 0x0000000001021000ull);	/* dyn */
	text(40, 51, "/usr/bin/cc");	/* path, NUL at 51 */
	all_named(52);
	decode(52, &out);
	assert_int_equal(out.type, VPMU_PMCLOG_PROCEXEC);
	assert_int_equal(out.u.procexec.pid, 77);
	assert_int_equal(out.u.procexec.pmcid, 0xFFFFFFFF);
	assert_int_equal(out.u.procexec.base, 0x0000000800200000ull);
	assert_int_equal(out.u.procexec.dyn, 0x0000000001021000ull);
	assert_string_equal(out.u.procexec.path, "/usr/bin/cc");
}

static void
record_procexit(void **state)
{
	struct vpmu_pmclog_ev ev = { .type = VPMU_PMCLOG_PROCEXIT, .tsc = TSC }, out;

	(void)state;
	ev.u.procexit.pmcid = 0x50000001;
	ev.u.procexit.pid = 99;
	ev.u.procexit.value = 0x123456789ABCDEF0ull;
	encode(&ev, 32);
	at32(0, 0xEE0A0020);
	zero(4, 7);
	at64(8, TSC);
	at32(16, 0x50000001);		/* pmcid */
	at32(20, 99);			/* pid */
	at64(24, 0x123456789ABCDEF0ull);	/* value */
	all_named(32);
	decode(32, &out);
	assert_int_equal(out.type, VPMU_PMCLOG_PROCEXIT);
	assert_int_equal(out.u.procexit.pmcid, 0x50000001);
	assert_int_equal(out.u.procexit.pid, 99);
	assert_int_equal(out.u.procexit.value, 0x123456789ABCDEF0ull);
}

static void
record_procfork(void **state)
{
	struct vpmu_pmclog_ev ev = { .type = VPMU_PMCLOG_PROCFORK, .tsc = TSC }, out;

	(void)state;
	ev.u.procfork.oldpid = 100;
	ev.u.procfork.newpid = 0x00ABCDEF;
	encode(&ev, 24);
	at32(0, 0xEE0B0018);
	zero(4, 7);
	at64(8, TSC);
	at32(16, 100);			/* oldpid */
	at32(20, 0x00ABCDEF);		/* newpid */
	all_named(24);
	decode(24, &out);
	assert_int_equal(out.type, VPMU_PMCLOG_PROCFORK);
	assert_int_equal(out.u.procfork.oldpid, 100);
	assert_int_equal(out.u.procfork.newpid, 0x00ABCDEF);
}

static void
record_sysexit(void **state)
{
	struct vpmu_pmclog_ev ev = { .type = VPMU_PMCLOG_SYSEXIT, .tsc = TSC }, out;

	(void)state;
	ev.u.sysexit.pid = 0x01020304;
	encode(&ev, 24);
	at32(0, 0xEE0C0018);
	zero(4, 7);
	at64(8, TSC);
	at32(16, 0x01020304);		/* pid */
	zero(20, 23);			/* pad */
	all_named(24);
	decode(24, &out);
	assert_int_equal(out.type, VPMU_PMCLOG_SYSEXIT);
	assert_int_equal(out.u.sysexit.pid, 0x01020304);
}

static void
record_userdata(void **state)
{
	struct vpmu_pmclog_ev ev = { .type = VPMU_PMCLOG_USERDATA, .tsc = TSC }, out;

	(void)state;
	ev.u.userdata.userdata = 0xFEEDFACE;
	encode(&ev, 24);
	at32(0, 0xEE0D0018);
	zero(4, 7);
	at64(8, TSC);
	at32(16, 0xFEEDFACE);		/* userdata */
	zero(20, 23);			/* pad */
	all_named(24);
	decode(24, &out);
	assert_int_equal(out.type, VPMU_PMCLOG_USERDATA);
	assert_int_equal(out.u.userdata.userdata, 0xFEEDFACE);
}

static void
record_map_in(void **state)
{
	struct vpmu_pmclog_ev ev = { .type = VPMU_PMCLOG_MAP_IN, .tsc = TSC }, out;

	(void)state;
	ev.u.map_in.pid = 0xFFFFFFFF;	/* a kernel object */
	ev.u.map_in.start = 0xFFFFFFFF80200000ull;
	strcpy(ev.u.map_in.path, "/lib/libc.so.7");
	encode(&ev, 48);		/* 32 + 14 + NUL = 47, rounded to 48 */
	at32(0, 0xEE0E0030);
	zero(4, 7);
	at64(8, TSC);
	at32(16, 0xFFFFFFFF);		/* pid */
	zero(20, 23);			/* pad */
	at64(24, 0xFFFFFFFF80200000ull);	/* start */
	text(32, 47, "/lib/libc.so.7");	/* path, NUL at 46, pad at 47 */
	all_named(48);
	decode(48, &out);
	assert_int_equal(out.type, VPMU_PMCLOG_MAP_IN);
	assert_int_equal(out.u.map_in.pid, 0xFFFFFFFF);
	assert_int_equal(out.u.map_in.start, 0xFFFFFFFF80200000ull);
	assert_string_equal(out.u.map_in.path, "/lib/libc.so.7");
}

static void
record_map_out(void **state)
{
	struct vpmu_pmclog_ev ev = { .type = VPMU_PMCLOG_MAP_OUT, .tsc = TSC }, out;

	(void)state;
	ev.u.map_out.pid = 1234;
	ev.u.map_out.start = 0x0000000800000000ull;
	ev.u.map_out.end = 0x0000000800123000ull;
	encode(&ev, 40);
	at32(0, 0xEE0F0028);
	zero(4, 7);
	at64(8, TSC);
	at32(16, 1234);			/* pid */
	zero(20, 23);			/* pad */
	at64(24, 0x0000000800000000ull);	/* start */
	at64(32, 0x0000000800123000ull);	/* end */
	all_named(40);
	decode(40, &out);
	assert_int_equal(out.type, VPMU_PMCLOG_MAP_OUT);
	assert_int_equal(out.u.map_out.pid, 1234);
	assert_int_equal(out.u.map_out.start, 0x0000000800000000ull);
	assert_int_equal(out.u.map_out.end, 0x0000000800123000ull);
}

static void
record_callchain(void **state)
{
	struct vpmu_pmclog_ev ev = { .type = VPMU_PMCLOG_CALLCHAIN, .tsc = TSC };
	static struct vpmu_pmclog_ev out;
	unsigned i;

	(void)state;
	ev.u.callchain.pid = 501;
	ev.u.callchain.tid = 100501;
	ev.u.callchain.pmcid = 0x20000003;
	ev.u.callchain.cpuflags = VPMU_PMCLOG_CPUFLAGS(3, VPMU_PMCLOG_CC_F_USERSPACE);
	ev.u.callchain.npc = 3;
	ev.u.callchain.pc[0] = 0x0000000000401234ull;
	ev.u.callchain.pc[1] = 0x00000000004015F0ull;
	ev.u.callchain.pc[2] = 0xFFFFFFFF80ABCDEFull;
	encode(&ev, 56);		/* 32 + 3 * 8 */
	at32(0, 0xEE100038);
	zero(4, 7);
	at64(8, TSC);
	at32(16, 501);			/* pid */
	at32(20, 100501);		/* tid */
	at32(24, 0x20000003);		/* pmcid */
	at32(28, 0x00030001);		/* cpuflags: cpu 3, user mode */
	at64(32, 0x0000000000401234ull);	/* pc[0] */
	at64(40, 0x00000000004015F0ull);	/* pc[1] */
	at64(48, 0xFFFFFFFF80ABCDEFull);	/* pc[2] */
	all_named(56);
	decode(56, &out);
	assert_int_equal(out.type, VPMU_PMCLOG_CALLCHAIN);
	assert_int_equal(out.u.callchain.pid, 501);
	assert_int_equal(out.u.callchain.tid, 100501);
	assert_int_equal(out.u.callchain.pmcid, 0x20000003);
	assert_int_equal(out.u.callchain.cpuflags, 0x00030001);
	assert_int_equal(VPMU_PMCLOG_CPUFLAGS_CPU(out.u.callchain.cpuflags), 3);
	assert_int_equal(out.u.callchain.npc, 3);
	assert_int_equal(out.u.callchain.pc[0], 0x0000000000401234ull);
	assert_int_equal(out.u.callchain.pc[1], 0x00000000004015F0ull);
	assert_int_equal(out.u.callchain.pc[2], 0xFFFFFFFF80ABCDEFull);

	/* The deepest chain is the longest record: 512 addresses, 4128 bytes. */
	ev.u.callchain.npc = VPMU_PMCLOG_CALLCHAIN_MAX;
	for (i = 0; i < VPMU_PMCLOG_CALLCHAIN_MAX; i++)
		ev.u.callchain.pc[i] = 0x1000000000000000ull + i;
	encode(&ev, 4128);
	at32(0, 0xEE101020);
	zero(4, 7);
	at64(8, TSC);
	at32(16, 501);
	at32(20, 100501);
	at32(24, 0x20000003);
	at32(28, 0x00030001);
	for (i = 0; i < 512; i++)
		at64(32 + 8 * i, 0x1000000000000000ull + i);
	all_named(4128);
	decode(4128, &out);
	assert_int_equal(out.u.callchain.npc, 512);
	for (i = 0; i < 512; i++)
		assert_int_equal(out.u.callchain.pc[i], 0x1000000000000000ull + i);

	/* No address at all: 32 bytes. */
	ev.u.callchain.npc = 0;
	encode(&ev, 32);
	decode(32, &out);
	assert_int_equal(out.u.callchain.npc, 0);
}

static void
record_pmcallocatedyn(void **state)
{
	struct vpmu_pmclog_ev ev = { .type = VPMU_PMCLOG_PMCALLOCATEDYN, .tsc = TSC }, out;

	(void)state;
	ev.u.pmcallocatedyn.pmcid = 0x60000002;
	ev.u.pmcallocatedyn.event = 0x00C0;
	ev.u.pmcallocatedyn.flags = 0x2000;
	strcpy(ev.u.pmcallocatedyn.evname, "instructions");
	encode(&ev, 96);
	at32(0, 0xEE110060);
	zero(4, 7);
	at64(8, TSC);
	at32(16, 0x60000002);		/* pmcid */
	at32(20, 0x00C0);		/* event */
	at32(24, 0x2000);		/* flags */
	zero(28, 31);			/* pad */
	text(32, 95, "instructions");	/* evname[64] at 32 (the struct's layout) */
	all_named(96);
	decode(96, &out);
	assert_int_equal(out.type, VPMU_PMCLOG_PMCALLOCATEDYN);
	assert_int_equal(out.u.pmcallocatedyn.pmcid, 0x60000002);
	assert_int_equal(out.u.pmcallocatedyn.event, 0x00C0);
	assert_int_equal(out.u.pmcallocatedyn.flags, 0x2000);
	assert_string_equal(out.u.pmcallocatedyn.evname, "instructions");
}

static void
record_thr_create(void **state)
{
	struct vpmu_pmclog_ev ev = { .type = VPMU_PMCLOG_THR_CREATE, .tsc = TSC }, out;

	(void)state;
	ev.u.thr_create.tid = 100123;
	ev.u.thr_create.pid = 321;
	ev.u.thr_create.flags = 0x10004000;
	strcpy(ev.u.thr_create.tdname, "worker-7");
	encode(&ev, 52);
	at32(0, 0xEE120034);
	zero(4, 7);
	at64(8, TSC);
	at32(16, 100123);		/* tid */
	at32(20, 321);			/* pid */
	at32(24, 0x10004000);		/* flags */
	zero(28, 31);			/* pad */
	text(32, 51, "worker-7");	/* tdname[20] */
	all_named(52);
	decode(52, &out);
	assert_int_equal(out.type, VPMU_PMCLOG_THR_CREATE);
	assert_int_equal(out.u.thr_create.tid, 100123);
	assert_int_equal(out.u.thr_create.pid, 321);
	assert_int_equal(out.u.thr_create.flags, 0x10004000);
	assert_string_equal(out.u.thr_create.tdname, "worker-7");
}

static void
record_thr_exit(void **state)
{
	struct vpmu_pmclog_ev ev = { .type = VPMU_PMCLOG_THR_EXIT, .tsc = TSC }, out;

	(void)state;
	ev.u.thr_exit.tid = 0x0F0E0D0C;
	encode(&ev, 24);
	at32(0, 0xEE130018);
	zero(4, 7);
	at64(8, TSC);
	at32(16, 0x0F0E0D0C);		/* tid */
	zero(20, 23);			/* pad */
	all_named(24);
	decode(24, &out);
	assert_int_equal(out.type, VPMU_PMCLOG_THR_EXIT);
	assert_int_equal(out.u.thr_exit.tid, 0x0F0E0D0C);
}

static void
record_proc_create(void **state)
{
	struct vpmu_pmclog_ev ev = { .type = VPMU_PMCLOG_PROC_CREATE, .tsc = TSC }, out;

	(void)state;
	ev.u.proc_create.pid = 654;
	ev.u.proc_create.flags = 0x00004000;
	strcpy(ev.u.proc_create.pcomm, "nineteen-chars-long");
	encode(&ev, 44);
	at32(0, 0xEE14002C);
	zero(4, 7);
	at64(8, TSC);
	at32(16, 654);			/* pid */
	at32(20, 0x00004000);		/* flags */
	text(24, 43, "nineteen-chars-long");	/* pcomm[20]: 19 + NUL */
	all_named(44);
	decode(44, &out);
	assert_int_equal(out.type, VPMU_PMCLOG_PROC_CREATE);
	assert_int_equal(out.u.proc_create.pid, 654);
	assert_int_equal(out.u.proc_create.flags, 0x00004000);
	assert_string_equal(out.u.proc_create.pcomm, "nineteen-chars-long");
}

static void
type_names(void **state)
{
	static const char *const want[] = {
		NULL, "CLOSELOG", "DROPNOTIFY", "INITIALIZE", NULL, "PMCALLOCATE",
		"PMCATTACH", "PMCDETACH", "PROCCSW", "PROCEXEC", "PROCEXIT",
		"PROCFORK", "SYSEXIT", "USERDATA", "MAP_IN", "MAP_OUT",
		"CALLCHAIN", "PMCALLOCATEDYN", "THR_CREATE", "THR_EXIT",
		"PROC_CREATE", NULL,
	};
	uint32_t t;

	(void)state;
	for (t = 0; t < sizeof(want) / sizeof(want[0]); t++) {
		if (want[t] == NULL)
			assert_null(vpmu_pmclog_type_name(t));
		else
			assert_string_equal(vpmu_pmclog_type_name(t), want[t]);
	}
	assert_null(vpmu_pmclog_type_name(255));
	assert_null(vpmu_pmclog_type_name(0x10000 | VPMU_PMCLOG_CALLCHAIN));
}

/* ---- the encoder's refusals --------------------------------------------- */

static void
encode_refuses_what_does_not_fit(void **state)
{
	static struct vpmu_pmclog_ev ev;
	unsigned char buf[VPMU_PMCLOG_MAX_RECORD + 8];
	uint32_t t;
	size_t len;

	(void)state;
	for (t = 1; t <= VPMU_PMCLOG_PROC_CREATE; t++) {
		if (t == 4)
			continue;
		memset(&ev, 0, sizeof(ev));
		ev.type = t;
		ev.u.callchain.npc = 8;		/* only CALLCHAIN looks */
		assert_int_equal(vpmu_pmclog_encoded_len(&ev, &len), 0);
		assert_true(len >= 16 && len % 4 == 0);
		memset(buf, 0xA5, sizeof(buf));
		ENCODE_IS(&ev, buf, len - 1, ENOSPC, len);	/* the length it needs */
		assert_int_equal(buf[0], 0xA5);		/* nothing written */
		ENCODE_IS(&ev, buf, 0, ENOSPC, len);
		ENCODE_IS(&ev, buf, len, 0, len);
	}
	/* A full chain needs all of VPMU_PMCLOG_MAX_RECORD. */
	memset(&ev, 0, sizeof(ev));
	ev.type = VPMU_PMCLOG_CALLCHAIN;
	ev.u.callchain.npc = VPMU_PMCLOG_CALLCHAIN_MAX;
	ENCODE_IS(&ev, buf, VPMU_PMCLOG_MAX_RECORD - 4, ENOSPC, VPMU_PMCLOG_MAX_RECORD);
	ENCODE_IS(&ev, buf, sizeof(buf), 0, VPMU_PMCLOG_MAX_RECORD);
}

static void
encode_refuses_invalid_records(void **state)
{
	static struct vpmu_pmclog_ev ev;
	static unsigned char buf[8192];

	(void)state;
	memset(&ev, 0, sizeof(ev));
	/* Unknown types, including the old numbering's 0 and 4. */
	ev.type = 0;
	ENCODE_IS(&ev, buf, sizeof(buf), EINVAL, 0);
	ev.type = 4;
	ENCODE_IS(&ev, buf, sizeof(buf), EINVAL, 0);
	ev.type = 21;
	ENCODE_IS(&ev, buf, sizeof(buf), EINVAL, 0);
	ev.type = 0xEE;
	ENCODED_LEN_IS(&ev, EINVAL, 0);
	/* More than 512 addresses. */
	ev.type = VPMU_PMCLOG_CALLCHAIN;
	ev.u.callchain.npc = VPMU_PMCLOG_CALLCHAIN_MAX + 1;
	ENCODE_IS(&ev, buf, sizeof(buf), EINVAL, 0);
	ev.u.callchain.npc = UINT32_MAX;
	ENCODE_IS(&ev, buf, sizeof(buf), EINVAL, 0);
	ENCODED_LEN_IS(&ev, EINVAL, 0);
	/* NULLs. */
	ENCODE_IS(NULL, buf, sizeof(buf), EINVAL, 0);
	ev.u.callchain.npc = 1;
	ENCODE_IS(&ev, NULL, sizeof(buf), EINVAL, 0);
	assert_int_equal(vpmu_pmclog_encode(&ev, buf, sizeof(buf), NULL), EINVAL);
	ENCODED_LEN_IS(NULL, EINVAL, 0);
	assert_int_equal(vpmu_pmclog_encoded_len(&ev, NULL), EINVAL);
	ENCODE_IS(&ev, buf, sizeof(buf), 0, 40);

	/* Paths: 1023 bytes is the longest (1024 with its NUL). */
	memset(&ev, 0, sizeof(ev));
	ev.type = VPMU_PMCLOG_PMCATTACH;
	memset(ev.u.pmcattach.path, 'p', sizeof(ev.u.pmcattach.path));
	ENCODE_IS(&ev, buf, sizeof(buf), EINVAL, 0);
	ev.u.pmcattach.path[1023] = '\0';
	ENCODE_IS(&ev, buf, sizeof(buf), 0, 24 + 1024);
	ev.type = VPMU_PMCLOG_PROCEXEC;
	memset(ev.u.procexec.path, 'e', sizeof(ev.u.procexec.path));
	ENCODE_IS(&ev, buf, sizeof(buf), EINVAL, 0);
	ev.u.procexec.path[1023] = '\0';
	ENCODE_IS(&ev, buf, sizeof(buf), 0, 40 + 1024);
	ev.type = VPMU_PMCLOG_MAP_IN;
	memset(ev.u.map_in.path, 'm', sizeof(ev.u.map_in.path));
	ENCODE_IS(&ev, buf, sizeof(buf), EINVAL, 0);
	ev.u.map_in.path[1023] = '\0';
	ENCODE_IS(&ev, buf, sizeof(buf), 0, 32 + 1024);
}

/* A fixed-size name without a NUL is cut to keep one. */
static void
encode_cuts_fixed_names(void **state)
{
	struct vpmu_pmclog_ev ev = { .type = VPMU_PMCLOG_PMCALLOCATEDYN }, out;

	(void)state;
	memset(ev.u.pmcallocatedyn.evname, 'x', sizeof(ev.u.pmcallocatedyn.evname));
	encode(&ev, 96);
	assert_int_equal(rec[94], 'x');
	assert_int_equal(rec[95], 0);
	decode(96, &out);
	assert_int_equal(strlen(out.u.pmcallocatedyn.evname), 63);

	memset(&ev, 0, sizeof(ev));
	ev.type = VPMU_PMCLOG_THR_CREATE;
	memset(ev.u.thr_create.tdname, 't', sizeof(ev.u.thr_create.tdname));
	encode(&ev, 52);
	assert_int_equal(rec[50], 't');
	assert_int_equal(rec[51], 0);
	decode(52, &out);
	assert_int_equal(strlen(out.u.thr_create.tdname), 19);
}

/* ---- streams ------------------------------------------------------------ */

#define NREC	22

static struct vpmu_pmclog_ev recs[NREC];	/* what the stream holds */
static unsigned char stream[8192];
static size_t stream_len, rec_end[NREC];	/* end offset of each record */

/* A log with every type, paths of several lengths, CLOSELOG last. */
static void
make_stream(void)
{
	static const uint32_t types[NREC] = {
		3, 17, 5, 20, 18, 6, 14, 14, 9, 16, 16, 8, 10, 11, 13, 2, 15,
		12, 19, 7, 16, 1,
	};
	struct vpmu_pmclog_ev *e;
	unsigned i, j;
	size_t n;

	memset(recs, 0, sizeof(recs));
	stream_len = 0;
	for (i = 0; i < NREC; i++) {
		e = &recs[i];
		e->type = types[i];
		e->tsc = 1000 + i;
		e->offset = stream_len;
		/* Distinct values in the first words of every member. */
		e->u.callchain.pid = 10 + i;
		e->u.callchain.tid = 20 + i;
		e->u.callchain.pmcid = 30 + i;
		e->u.callchain.cpuflags = 40 + i;
		switch (e->type) {
		case VPMU_PMCLOG_CALLCHAIN:
			e->u.callchain.npc = i % 9;
			for (j = 0; j < e->u.callchain.npc; j++)
				e->u.callchain.pc[j] = 0x400000 + 16 * i + j;
			break;
		case VPMU_PMCLOG_INITIALIZE:
			e->u.initialize.tsc_freq = 3000000000ull;
			e->u.initialize.sec = 5;
			e->u.initialize.nsec = 6;
			strcpy(e->u.initialize.cpuid, "AuthenticAMD-25-1-1");
			break;
		case VPMU_PMCLOG_MAP_IN:
			e->u.map_in.start = 0x800000000ull + i;
			snprintf(e->u.map_in.path, sizeof(e->u.map_in.path), "/lib/%.*s",
			    (int)i, "abcdefghijklmnopqrstuvwxyz");
			break;
		case VPMU_PMCLOG_MAP_OUT:
			e->u.map_out.start = 1;
			e->u.map_out.end = 2;
			break;
		case VPMU_PMCLOG_PMCATTACH:
			strcpy(e->u.pmcattach.path, "/a");
			break;
		case VPMU_PMCLOG_PROCEXEC:
			e->u.procexec.base = 7;
			e->u.procexec.dyn = 8;
			strcpy(e->u.procexec.path, "/sbin/init");
			break;
		case VPMU_PMCLOG_PMCALLOCATE:
			e->u.pmcallocate.rate = 65536;
			break;
		case VPMU_PMCLOG_PMCALLOCATEDYN:
			strcpy(e->u.pmcallocatedyn.evname, "cycles");
			break;
		case VPMU_PMCLOG_PROCCSW:
			e->u.proccsw.tid = 9;
			break;
		case VPMU_PMCLOG_PROCEXIT:
			e->u.procexit.value = 12345;
			break;
		case VPMU_PMCLOG_THR_CREATE:
			strcpy(e->u.thr_create.tdname, "td");
			break;
		case VPMU_PMCLOG_PROC_CREATE:
			strcpy(e->u.proc_create.pcomm, "");
			break;
		}
		assert_int_equal(vpmu_pmclog_encode(e, stream + stream_len,
		    sizeof(stream) - stream_len, &n), 0);
		assert_true(n > 0);
		e->len = (uint32_t)n;
		stream_len += n;
		rec_end[i] = stream_len;
	}
}

/* got is recs[i], field by field. */
static void
same(const struct vpmu_pmclog_ev *got, unsigned i)
{
	const struct vpmu_pmclog_ev *w = &recs[i];

	assert_int_equal(got->type, w->type);
	assert_int_equal(got->len, w->len);
	assert_int_equal(got->tsc, w->tsc);
	assert_int_equal(got->offset, w->offset);
	switch (w->type) {
	case VPMU_PMCLOG_CALLCHAIN:
		assert_int_equal(got->u.callchain.pid, w->u.callchain.pid);
		assert_int_equal(got->u.callchain.tid, w->u.callchain.tid);
		assert_int_equal(got->u.callchain.pmcid, w->u.callchain.pmcid);
		assert_int_equal(got->u.callchain.cpuflags, w->u.callchain.cpuflags);
		assert_int_equal(got->u.callchain.npc, w->u.callchain.npc);
		assert_memory_equal(got->u.callchain.pc, w->u.callchain.pc,
		    8 * w->u.callchain.npc);
		break;
	case VPMU_PMCLOG_INITIALIZE:
		assert_memory_equal(&got->u.initialize, &w->u.initialize,
		    offsetof(__typeof__(w->u.initialize), cpuid));
		assert_string_equal(got->u.initialize.cpuid, w->u.initialize.cpuid);
		break;
	case VPMU_PMCLOG_MAP_IN:
		assert_int_equal(got->u.map_in.pid, w->u.map_in.pid);
		assert_int_equal(got->u.map_in.start, w->u.map_in.start);
		assert_string_equal(got->u.map_in.path, w->u.map_in.path);
		break;
	case VPMU_PMCLOG_MAP_OUT:
		assert_int_equal(got->u.map_out.pid, w->u.map_out.pid);
		assert_int_equal(got->u.map_out.start, w->u.map_out.start);
		assert_int_equal(got->u.map_out.end, w->u.map_out.end);
		break;
	case VPMU_PMCLOG_PMCALLOCATE:
		assert_int_equal(got->u.pmcallocate.pmcid, w->u.pmcallocate.pmcid);
		assert_int_equal(got->u.pmcallocate.event, w->u.pmcallocate.event);
		assert_int_equal(got->u.pmcallocate.flags, w->u.pmcallocate.flags);
		assert_int_equal(got->u.pmcallocate.rate, w->u.pmcallocate.rate);
		break;
	case VPMU_PMCLOG_PMCALLOCATEDYN:
		assert_int_equal(got->u.pmcallocatedyn.pmcid, w->u.pmcallocatedyn.pmcid);
		assert_int_equal(got->u.pmcallocatedyn.event, w->u.pmcallocatedyn.event);
		assert_int_equal(got->u.pmcallocatedyn.flags, w->u.pmcallocatedyn.flags);
		assert_string_equal(got->u.pmcallocatedyn.evname, w->u.pmcallocatedyn.evname);
		break;
	case VPMU_PMCLOG_PMCATTACH:
		assert_int_equal(got->u.pmcattach.pmcid, w->u.pmcattach.pmcid);
		assert_int_equal(got->u.pmcattach.pid, w->u.pmcattach.pid);
		assert_string_equal(got->u.pmcattach.path, w->u.pmcattach.path);
		break;
	case VPMU_PMCLOG_PROCEXEC:
		assert_int_equal(got->u.procexec.pid, w->u.procexec.pid);
		assert_int_equal(got->u.procexec.pmcid, w->u.procexec.pmcid);
		assert_int_equal(got->u.procexec.base, w->u.procexec.base);
		assert_int_equal(got->u.procexec.dyn, w->u.procexec.dyn);
		assert_string_equal(got->u.procexec.path, w->u.procexec.path);
		break;
	case VPMU_PMCLOG_PROCCSW:
		assert_int_equal(got->u.proccsw.value, w->u.proccsw.value);
		assert_int_equal(got->u.proccsw.pmcid, w->u.proccsw.pmcid);
		assert_int_equal(got->u.proccsw.pid, w->u.proccsw.pid);
		assert_int_equal(got->u.proccsw.tid, w->u.proccsw.tid);
		break;
	case VPMU_PMCLOG_PROCEXIT:
		assert_int_equal(got->u.procexit.pmcid, w->u.procexit.pmcid);
		assert_int_equal(got->u.procexit.pid, w->u.procexit.pid);
		assert_int_equal(got->u.procexit.value, w->u.procexit.value);
		break;
	case VPMU_PMCLOG_THR_CREATE:
		assert_int_equal(got->u.thr_create.tid, w->u.thr_create.tid);
		assert_int_equal(got->u.thr_create.pid, w->u.thr_create.pid);
		assert_int_equal(got->u.thr_create.flags, w->u.thr_create.flags);
		assert_string_equal(got->u.thr_create.tdname, w->u.thr_create.tdname);
		break;
	case VPMU_PMCLOG_PROC_CREATE:
		assert_int_equal(got->u.proc_create.pid, w->u.proc_create.pid);
		assert_int_equal(got->u.proc_create.flags, w->u.proc_create.flags);
		assert_string_equal(got->u.proc_create.pcomm, w->u.proc_create.pcomm);
		break;
	case VPMU_PMCLOG_PMCDETACH:
	case VPMU_PMCLOG_PROCFORK:
		/* Two words. */
		assert_int_equal(got->u.pmcdetach.pmcid, w->u.pmcdetach.pmcid);
		assert_int_equal(got->u.pmcdetach.pid, w->u.pmcdetach.pid);
		break;
	case VPMU_PMCLOG_SYSEXIT:
	case VPMU_PMCLOG_USERDATA:
	case VPMU_PMCLOG_THR_EXIT:
		/* One word. */
		assert_int_equal(got->u.sysexit.pid, w->u.sysexit.pid);
		break;
	}
}

/* Records that end at or before byte `cut`. */
static unsigned
whole_before(size_t cut)
{
	unsigned i = 0;

	while (i < NREC && rec_end[i] <= cut)
		i++;
	return (i);
}

/* Read r until it stops; every record must be the next of recs[]. */
static int
drain(vpmu_pmclog_reader *r, unsigned *next)
{
	static struct vpmu_pmclog_ev ev;
	int st;

	while ((st = vpmu_pmclog_read(r, &ev)) == 0) {
		assert_true(*next < NREC);
		same(&ev, (*next)++);
	}
	return (st);
}

static void
stream_cut_at_every_byte(void **state)
{
	vpmu_pmclog_reader *r;
	unsigned got;
	size_t cut;
	int st;

	(void)state;
	make_stream();
	assert_int_equal(recs[NREC - 1].type, VPMU_PMCLOG_CLOSELOG);
	for (cut = 0; cut <= stream_len; cut++) {
		assert_int_equal(vpmu_pmclog_open_buffer(&r), 0);
		assert_int_equal(vpmu_pmclog_feed(r, stream, cut), 0);
		got = 0;
		st = drain(r, &got);
		assert_int_equal(got, whole_before(cut));
		/* Only after the final CLOSELOG is the end known. */
		assert_int_equal(st, cut == stream_len ? ENODATA :
		    EAGAIN);
		/* Asking again changes nothing. */
		assert_int_equal(drain(r, &got), st);
		/* The rest completes the log. */
		assert_int_equal(vpmu_pmclog_feed(r, stream + cut, stream_len - cut), 0);
		assert_int_equal(drain(r, &got), ENODATA);
		assert_int_equal(got, NREC);
		vpmu_pmclog_close(r);
	}
}

static void
stream_fed_in_every_chunk_size(void **state)
{
	vpmu_pmclog_reader *r;
	unsigned got;
	size_t chunk, off, n;
	int st;

	(void)state;
	make_stream();
	for (chunk = 1; chunk <= stream_len; chunk++) {
		assert_int_equal(vpmu_pmclog_open_buffer(&r), 0);
		got = 0;
		for (off = 0; off < stream_len; off += n) {
			n = stream_len - off < chunk ? stream_len - off : chunk;
			assert_int_equal(vpmu_pmclog_feed(r, stream + off, n), 0);
			st = drain(r, &got);
			assert_int_equal(got, whole_before(off + n));
			assert_int_equal(st, off + n == stream_len ?
			    ENODATA : EAGAIN);
		}
		assert_int_equal(got, NREC);
		vpmu_pmclog_close(r);
	}
}

/* A file cut at every byte: the whole records, then ENODATA. */
static void
fd_reader_file_cut_at_every_byte(void **state)
{
	char path[] = "/tmp/test_pmclog.XXXXXX";
	vpmu_pmclog_reader *r;
	unsigned got;
	size_t cut;
	int fd;

	(void)state;
	make_stream();
	assert_true((fd = mkstemp(path)) >= 0);
	unlink(path);
	assert_int_equal(write(fd, stream, stream_len), (ssize_t)stream_len);
	for (cut = 0; cut <= stream_len; cut++) {
		assert_int_equal(ftruncate(fd, (off_t)cut), 0);
		assert_int_equal(lseek(fd, 0, SEEK_SET), 0);
		assert_int_equal(vpmu_pmclog_open_fd(fd, &r), 0);
		got = 0;
		assert_int_equal(drain(r, &got), ENODATA);
		assert_int_equal(got, whole_before(cut));
		vpmu_pmclog_close(r);
		if (cut < stream_len)
			assert_int_equal(pwrite(fd, stream + cut, 1, (off_t)cut), 1);
	}
	close(fd);
}

/* A log bigger than the reader's buffer, in records of every depth. */
static void
fd_reader_large_file(void **state)
{
	char path[] = "/tmp/test_pmclog.XXXXXX";
	static struct vpmu_pmclog_ev ev;
	static unsigned char buf[1 << 16];
	vpmu_pmclog_reader *r;
	size_t n, used = 0, total = 0;
	unsigned i, j, nrec = 20000;
	int fd;

	(void)state;
	assert_true((fd = mkstemp(path)) >= 0);
	unlink(path);
	memset(&ev, 0, sizeof(ev));
	ev.type = VPMU_PMCLOG_CALLCHAIN;
	for (i = 0; i < nrec; i++) {
		ev.tsc = i;
		ev.u.callchain.pid = i;
		ev.u.callchain.npc = i % 33;
		for (j = 0; j < ev.u.callchain.npc; j++)
			ev.u.callchain.pc[j] = (uint64_t)i << 16 | j;
		if (vpmu_pmclog_encode(&ev, buf + used, sizeof(buf) - used, &n) == ENOSPC) {
			assert_int_equal(write(fd, buf, used), (ssize_t)used);
			used = 0;
			ENCODE_IS(&ev, buf, sizeof(buf), 0, n);
		}
		used += n;
		total += n;
	}
	assert_int_equal(write(fd, buf, used), (ssize_t)used);
	assert_true(total > 3 * 256 * 1024);
	assert_int_equal(lseek(fd, 0, SEEK_SET), 0);
	assert_int_equal(vpmu_pmclog_open_fd(fd, &r), 0);
	for (i = 0; i < nrec; i++) {
		assert_int_equal(vpmu_pmclog_read(r, &ev), 0);
		assert_int_equal(ev.tsc, i);
		assert_int_equal(ev.u.callchain.pid, i);
		assert_int_equal(ev.u.callchain.npc, i % 33);
		for (j = 0; j < ev.u.callchain.npc; j++)
			assert_int_equal(ev.u.callchain.pc[j], (uint64_t)i << 16 | j);
	}
	assert_int_equal(ev.offset + ev.len, total);
	assert_int_equal(vpmu_pmclog_read(r, &ev), ENODATA);
	vpmu_pmclog_close(r);
	close(fd);
}

struct dribble {
	int fd;
	size_t chunk;
};

/* Write the stream into a pipe a few bytes at a time, then close it. */
static void *
dribble(void *arg)
{
	struct dribble *d = arg;
	size_t off, n;

	for (off = 0; off < stream_len; off += n) {
		n = stream_len - off < d->chunk ? stream_len - off : d->chunk;
		if (write(d->fd, stream + off, n) != (ssize_t)n)
			break;
		sched_yield();
	}
	close(d->fd);
	return (NULL);
}

static void
fd_reader_pipe(void **state)
{
	static const size_t chunks[] = { 1, 3, 5, 16, 17, 4096 };
	struct dribble d;
	vpmu_pmclog_reader *r;
	pthread_t th;
	unsigned got, i;
	int p[2];

	(void)state;
	make_stream();
	for (i = 0; i < sizeof(chunks) / sizeof(chunks[0]); i++) {
		assert_int_equal(pipe(p), 0);
		d.fd = p[1];
		d.chunk = chunks[i];
		assert_int_equal(pthread_create(&th, NULL, dribble, &d), 0);
		assert_int_equal(vpmu_pmclog_open_fd(p[0], &r), 0);
		got = 0;
		/* CLOSELOG comes back as a record; ENODATA is the pipe's end. */
		assert_int_equal(drain(r, &got), ENODATA);
		assert_int_equal(got, NREC);
		assert_int_equal(vpmu_pmclog_read(r, &(struct vpmu_pmclog_ev){ 0 }),
		    ENODATA);
		vpmu_pmclog_close(r);
		pthread_join(th, NULL);
		close(p[0]);
	}
}

static void
fd_reader_nonblocking_pipe(void **state)
{
	static struct vpmu_pmclog_ev ev;
	vpmu_pmclog_reader *r;
	int p[2];

	(void)state;
	make_stream();
	assert_int_equal(pipe(p), 0);
	assert_int_equal(fcntl(p[0], F_SETFL, O_NONBLOCK), 0);
	assert_int_equal(vpmu_pmclog_open_fd(p[0], &r), 0);
	assert_int_equal(vpmu_pmclog_read(r, &ev), EAGAIN);
	/* Half of the first record, then the rest and part of the second. */
	assert_int_equal(write(p[1], stream, 50), 50);
	assert_int_equal(vpmu_pmclog_read(r, &ev), EAGAIN);
	assert_int_equal(write(p[1], stream + 50, rec_end[0] + 2 - 50),
	    (ssize_t)(rec_end[0] + 2 - 50));
	assert_int_equal(vpmu_pmclog_read(r, &ev), 0);
	same(&ev, 0);
	assert_int_equal(vpmu_pmclog_read(r, &ev), EAGAIN);
	assert_int_equal(write(p[1], stream + rec_end[0] + 2, rec_end[1] - rec_end[0] - 2),
	    (ssize_t)(rec_end[1] - rec_end[0] - 2));
	assert_int_equal(vpmu_pmclog_read(r, &ev), 0);
	same(&ev, 1);
	close(p[1]);
	assert_int_equal(vpmu_pmclog_read(r, &ev), ENODATA);
	vpmu_pmclog_close(r);
	close(p[0]);
}

/* A read() error is a final EIO that says so. */
static void
fd_reader_read_error(void **state)
{
	static struct vpmu_pmclog_ev ev;
	vpmu_pmclog_reader *r;
	int fd;

	(void)state;
	assert_true((fd = open("/", O_RDONLY | O_DIRECTORY)) >= 0);
	assert_int_equal(vpmu_pmclog_open_fd(fd, &r), 0);
	assert_string_equal(vpmu_pmclog_error(r), "no error");
	assert_int_equal(vpmu_pmclog_read(r, &ev), EIO);
	assert_non_null(strstr(vpmu_pmclog_error(r), "read:"));
	assert_int_equal(vpmu_pmclog_read(r, &ev), EIO);
	vpmu_pmclog_close(r);
	close(fd);
}

/* CLOSELOG is a record; ENODATA if nothing follows; what is fed after is read. */
static void
closelog_then_eof(void **state)
{
	struct vpmu_pmclog_ev ev = { .type = VPMU_PMCLOG_CLOSELOG }, out;
	unsigned char b[64];
	vpmu_pmclog_reader *r;

	(void)state;
	ENCODE_IS(&ev, b, sizeof(b), 0, 16);
	ev.type = VPMU_PMCLOG_USERDATA;
	ev.u.userdata.userdata = 5;
	ENCODE_IS(&ev, b + 16, sizeof(b) - 16, 0, 24);
	assert_int_equal(vpmu_pmclog_open_buffer(&r), 0);
	assert_int_equal(vpmu_pmclog_read(r, &out), EAGAIN);
	assert_int_equal(vpmu_pmclog_feed(r, b, 16), 0);
	assert_int_equal(vpmu_pmclog_read(r, &out), 0);
	assert_int_equal(out.type, VPMU_PMCLOG_CLOSELOG);
	assert_int_equal(vpmu_pmclog_read(r, &out), ENODATA);
	assert_int_equal(vpmu_pmclog_read(r, &out), ENODATA);
	/* Part of a record after it: more is coming. */
	assert_int_equal(vpmu_pmclog_feed(r, b + 16, 4), 0);
	assert_int_equal(vpmu_pmclog_read(r, &out), EAGAIN);
	assert_int_equal(vpmu_pmclog_feed(r, b + 20, 20), 0);
	assert_int_equal(vpmu_pmclog_read(r, &out), 0);
	assert_int_equal(out.type, VPMU_PMCLOG_USERDATA);
	assert_int_equal(out.offset, 16);
	assert_int_equal(out.u.userdata.userdata, 5);
	assert_int_equal(vpmu_pmclog_read(r, &out), EAGAIN);
	vpmu_pmclog_close(r);
}

/* ---- bad logs ------------------------------------------------------------ */

/*
 * A good record, then len bytes of a bad one (header word h, the rest
 * as given by body or zero): the good record reads back, then a final
 * EBADMSG whose message holds `why`.
 */
static void
expect_error(uint32_t h, const void *body, size_t len, const char *why)
{
	struct vpmu_pmclog_ev ev = { .type = VPMU_PMCLOG_DROPNOTIFY }, out;
	static unsigned char b[8192];
	vpmu_pmclog_reader *r;
	size_t n;

	memset(b, 0, sizeof(b));
	n = 16;
	ENCODE_IS(&ev, b, sizeof(b), 0, n);
	if (body != NULL)
		memcpy(b + n, body, len);
	b[n] = (unsigned char)h;
	b[n + 1] = (unsigned char)(h >> 8);
	b[n + 2] = (unsigned char)(h >> 16);
	b[n + 3] = (unsigned char)(h >> 24);
	assert_int_equal(vpmu_pmclog_open_buffer(&r), 0);
	assert_int_equal(vpmu_pmclog_feed(r, b, n + len), 0);
	assert_int_equal(vpmu_pmclog_read(r, &out), 0);
	assert_int_equal(vpmu_pmclog_read(r, &out), EBADMSG);
	if (strstr(vpmu_pmclog_error(r), why) == NULL)
		fail_msg("error \"%s\" does not say \"%s\"", vpmu_pmclog_error(r), why);
	assert_non_null(strstr(vpmu_pmclog_error(r), "offset 16:"));
	/* Final: more data, good or not, changes nothing. */
	assert_int_equal(vpmu_pmclog_feed(r, b, n), 0);
	assert_int_equal(vpmu_pmclog_read(r, &out), EBADMSG);
	assert_int_equal(vpmu_pmclog_read(r, &out), EBADMSG);
	vpmu_pmclog_close(r);
}

static void
bad_magic(void **state)
{
	(void)state;
	expect_error(0xEF080028, NULL, 40, "bad magic 0xef");
	expect_error(0x00080028, NULL, 40, "bad magic 0x00");
	/* Checked as soon as the header word is held. */
	expect_error(0x0E080028, NULL, 4, "bad magic 0x0e");
}

static void
bad_type(void **state)
{
	(void)state;
	expect_error(0xEE000010, NULL, 16, "unknown record type 0");
	expect_error(0xEE040020, NULL, 32, "unknown record type 4");	/* old PCSAMPLE */
	expect_error(0xEE150018, NULL, 24, "unknown record type 21");
	expect_error(0xEEFF0018, NULL, 4, "unknown record type 255");
}

static void
bad_length(void **state)
{
	(void)state;
	expect_error(0xEE020000, NULL, 4, "length 0 is shorter than the header");
	expect_error(0xEE02000C, NULL, 12, "length 12 is shorter than the header");
	expect_error(0xEE020012, NULL, 18, "length 18 is not a multiple of 4");
	expect_error(0xEE0D001A, NULL, 26, "not a multiple of 4");
	expect_error(0xEE101024, NULL, 4132, "length 4132 is over 4128");
	expect_error(0xEE10FFFC, NULL, 4, "length 65532 is over 4128");
	/* Fixed-size types: exactly their size. */
	expect_error(0xEE080024, NULL, 36, "PROCCSW: length 36, not 40");
	expect_error(0xEE08002C, NULL, 44, "PROCCSW: length 44, not 40");
	expect_error(0xEE010014, NULL, 20, "CLOSELOG: length 20, not 16");
	expect_error(0xEE03006C, NULL, 108, "INITIALIZE: length 108, not 112");
	expect_error(0xEE110064, NULL, 100, "PMCALLOCATEDYN: length 100, not 96");
	/* Variable types: at least their fixed part. */
	expect_error(0xEE10001C, NULL, 28, "CALLCHAIN: length 28 is shorter than its fixed part (32)");
	expect_error(0xEE0E001C, NULL, 28, "MAP_IN: length 28 is shorter");
	expect_error(0xEE090024, NULL, 36, "PROCEXEC: length 36 is shorter");
	expect_error(0xEE060014, NULL, 20, "PMCATTACH: length 20 is shorter");
}

static void
bad_path(void **state)
{
	static unsigned char body[4200];

	(void)state;
	/* A path field longer than PATH_MAX, even with a NUL in it. */
	memset(body, 0, sizeof(body));
	expect_error(0xEE06041C, body, 24 + 1028, "path field of 1028 bytes is over 1024");
	expect_error(0xEE091000, body, 4096, "path field");
	/* No NUL inside the record. */
	memset(body, 'a', sizeof(body));
	expect_error(0xEE060020, body, 32, "PMCATTACH: the string at offset 24 has no NUL");
	expect_error(0xEE0E0030, body, 48, "MAP_IN: the string at offset 32 has no NUL");
	expect_error(0xEE09002C, body, 44, "PROCEXEC: the string at offset 40 has no NUL");
	/* An empty path field has no NUL either. */
	expect_error(0xEE060018, body, 24, "PMCATTACH: the string at offset 24 has no NUL");
	/* The NUL is the record's last byte: fine (1023-byte path in a 1024-byte field). */
	memset(body, 'a', sizeof(body));
	body[24 + 1023] = '\0';
	{
		struct vpmu_pmclog_ev out;
		vpmu_pmclog_reader *r;

		body[0] = 0x18;
		body[1] = 0x04;
		body[2] = 0x06;
		body[3] = 0xEE;
		memset(body + 4, 0, 20);
		assert_int_equal(vpmu_pmclog_open_buffer(&r), 0);
		assert_int_equal(vpmu_pmclog_feed(r, body, 24 + 1024), 0);
		assert_int_equal(vpmu_pmclog_read(r, &out), 0);
		assert_int_equal(strlen(out.u.pmcattach.path), 1023);
		vpmu_pmclog_close(r);
	}
}

static void
bad_name(void **state)
{
	static unsigned char body[128];

	(void)state;
	memset(body, 'n', sizeof(body));
	expect_error(0xEE110060, body, 96, "PMCALLOCATEDYN: the string at offset 32 has no NUL");
	expect_error(0xEE030070, body, 112, "INITIALIZE: the string at offset 48 has no NUL");
	expect_error(0xEE120034, body, 52, "THR_CREATE: the string at offset 32 has no NUL");
	expect_error(0xEE14002C, body, 44, "PROC_CREATE: the string at offset 24 has no NUL");
}

/* A CALLCHAIN with a word after its last address: npc = (len - 32) / 8. */
static void
callchain_odd_length(void **state)
{
	unsigned char b[40] = { 0x24, 0x00, 0x10, 0xEE };
	static struct vpmu_pmclog_ev out;
	vpmu_pmclog_reader *r;

	(void)state;
	b[32] = 0x77;
	assert_int_equal(vpmu_pmclog_open_buffer(&r), 0);
	assert_int_equal(vpmu_pmclog_feed(r, b, 36), 0);
	assert_int_equal(vpmu_pmclog_read(r, &out), 0);
	assert_int_equal(out.len, 36);
	assert_int_equal(out.u.callchain.npc, 0);
	vpmu_pmclog_close(r);
	b[0] = 0x2C;		/* 44: one address and a word */
	assert_int_equal(vpmu_pmclog_open_buffer(&r), 0);
	assert_int_equal(vpmu_pmclog_feed(r, b, 44 - 4), 0);
	assert_int_equal(vpmu_pmclog_read(r, &out), EAGAIN);
	assert_int_equal(vpmu_pmclog_feed(r, b, 4), 0);
	assert_int_equal(vpmu_pmclog_read(r, &out), 0);
	assert_int_equal(out.u.callchain.npc, 1);
	assert_int_equal(out.u.callchain.pc[0], 0x77);
	vpmu_pmclog_close(r);
}

/* ---- ERRORS ---------------------------------------------------------------- */

static void
vpmu_pmclog_open_fd_EINVAL(void **state)
{
	vpmu_pmclog_reader *r = (void *)1;

	(void)state;
	assert_int_equal(vpmu_pmclog_open_fd(-1, &r), EINVAL);
	assert_int_equal(vpmu_pmclog_open_fd(0, NULL), EINVAL);
	assert_int_equal(vpmu_pmclog_open_buffer(NULL), EINVAL);
}

static void
vpmu_pmclog_feed_EINVAL(void **state)
{
	vpmu_pmclog_reader *r;
	int p[2];

	(void)state;
	assert_int_equal(pipe(p), 0);
	assert_int_equal(vpmu_pmclog_open_fd(p[0], &r), 0);
	assert_int_equal(vpmu_pmclog_feed(r, "x", 1), EINVAL);	/* an fd reader */
	vpmu_pmclog_close(r);
	assert_int_equal(vpmu_pmclog_feed(NULL, "x", 1), EINVAL);
	assert_int_equal(vpmu_pmclog_open_buffer(&r), 0);
	assert_int_equal(vpmu_pmclog_feed(r, NULL, 1), EINVAL);
	assert_int_equal(vpmu_pmclog_feed(r, NULL, 0), 0);
	vpmu_pmclog_close(r);
	vpmu_pmclog_close(NULL);
	close(p[0]);
	close(p[1]);
}

/* A bad argument is the call's error, not the log's: the reader goes on. */
static void
vpmu_pmclog_read_EINVAL(void **state)
{
	struct vpmu_pmclog_ev ev = { .type = VPMU_PMCLOG_CLOSELOG };
	unsigned char b[16];
	vpmu_pmclog_reader *r;

	(void)state;
	assert_int_equal(vpmu_pmclog_read(NULL, NULL), EINVAL);
	assert_int_equal(vpmu_pmclog_read(NULL, &ev), EINVAL);
	assert_string_equal(vpmu_pmclog_error(NULL), "no reader");
	assert_int_equal(vpmu_pmclog_open_buffer(&r), 0);
	assert_int_equal(vpmu_pmclog_read(r, NULL), EINVAL);
	assert_string_equal(vpmu_pmclog_error(r), "no error");
	ENCODE_IS(&ev, b, sizeof(b), 0, 16);
	assert_int_equal(vpmu_pmclog_feed(r, b, sizeof(b)), 0);
	assert_int_equal(vpmu_pmclog_read(r, NULL), EINVAL);
	assert_int_equal(vpmu_pmclog_read(r, &ev), 0);
	assert_int_equal(ev.type, VPMU_PMCLOG_CLOSELOG);
	assert_int_equal(vpmu_pmclog_read(r, &ev), ENODATA);
	vpmu_pmclog_close(r);
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(record_closelog),
		cmocka_unit_test(record_dropnotify),
		cmocka_unit_test(record_initialize),
		cmocka_unit_test(record_pmcallocate),
		cmocka_unit_test(record_pmcattach),
		cmocka_unit_test(record_pmcdetach),
		cmocka_unit_test(record_proccsw),
		cmocka_unit_test(record_procexec),
		cmocka_unit_test(record_procexit),
		cmocka_unit_test(record_procfork),
		cmocka_unit_test(record_sysexit),
		cmocka_unit_test(record_userdata),
		cmocka_unit_test(record_map_in),
		cmocka_unit_test(record_map_out),
		cmocka_unit_test(record_callchain),
		cmocka_unit_test(record_pmcallocatedyn),
		cmocka_unit_test(record_thr_create),
		cmocka_unit_test(record_thr_exit),
		cmocka_unit_test(record_proc_create),
		cmocka_unit_test(type_names),
		cmocka_unit_test(encode_refuses_what_does_not_fit),
		cmocka_unit_test(encode_refuses_invalid_records),
		cmocka_unit_test(encode_cuts_fixed_names),
		cmocka_unit_test(stream_cut_at_every_byte),
		cmocka_unit_test(stream_fed_in_every_chunk_size),
		cmocka_unit_test(fd_reader_file_cut_at_every_byte),
		cmocka_unit_test(fd_reader_large_file),
		cmocka_unit_test(fd_reader_pipe),
		cmocka_unit_test(fd_reader_nonblocking_pipe),
		cmocka_unit_test(fd_reader_read_error),
		cmocka_unit_test(closelog_then_eof),
		cmocka_unit_test(bad_magic),
		cmocka_unit_test(bad_type),
		cmocka_unit_test(bad_length),
		cmocka_unit_test(bad_path),
		cmocka_unit_test(bad_name),
		cmocka_unit_test(callchain_odd_length),
		cmocka_unit_test(vpmu_pmclog_open_fd_EINVAL),
		cmocka_unit_test(vpmu_pmclog_feed_EINVAL),
		cmocka_unit_test(vpmu_pmclog_read_EINVAL),
	};

	return (cmocka_run_group_tests(tests, NULL, NULL));
}
