/*
 * fuzz_pmclog.c -- libFuzzer target for the pmclog reader (issue 5).
 *
 * Input: 4 bytes that pick the chunk sizes, then the log.  The log is
 * fed to a buffer reader in chunks of those sizes, reading after each
 * feed until the reader stops; then the whole log is read again through
 * an fd reader (a memfd).  The reader must never crash or read outside
 * its data (ASan), and:
 *   - every record it returns is well formed (magic-less fields in range,
 *     strings NUL-terminated within their arrays, offsets contiguous);
 *   - a returned record re-encodes, and the re-encoding reads back as a
 *     record that encodes to the same bytes;
 *   - the chunking changes nothing: both readers return the same number
 *     of records, and EBADMSG for the same logs;
 *   - after EBADMSG the reader stays in it, and vpmu_pmclog_error()
 *     says where ("offset N: ..."); before, it says "no error";
 *   - vpmu_pmclog_encoded_len() agrees with vpmu_pmclog_encode(), which
 *     gives ENOSPC, the length it needs, for a buffer a byte short.
 *
 * The custom mutator (pmclog_mutate.c) works on records: the 4 bytes of
 * chunk sizes are its option bytes.  A long run, 10 M executions (about
 * 45 min on one core), in a clang build tree B:
 *
 *   ASAN_OPTIONS=quarantine_size_mb=16 B/test/fuzz/fuzz_pmclog \
 *       -runs=10000000 -rss_limit_mb=2048 CORPUS test/fuzz/corpus/pmclog \
 *       B/test/fuzz/pmclog/seed
 */
#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include <vpmu/pmclog.h>

#include "pmclog_mutate.h"

#define CHECK(c)	do { if (!(c)) { fprintf(stderr, "%s:%d: %s\n", \
			    __FILE__, __LINE__, #c); abort(); } } while (0)

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);
size_t LLVMFuzzerCustomMutator(uint8_t *data, size_t size, size_t max, unsigned int seed);
size_t LLVMFuzzerCustomCrossOver(const uint8_t *d1, size_t s1, const uint8_t *d2,
    size_t s2, uint8_t *out, size_t max, unsigned int seed);

static struct vpmu_pmclog_ev ev, ev2;
static unsigned char enc1[VPMU_PMCLOG_MAX_RECORD], enc2[VPMU_PMCLOG_MAX_RECORD];
static vpmu_pmclog_reader *rt;		/* the round trips' reader */

static void
check_string(const char *s, size_t size)
{
	CHECK(strnlen(s, size) < size);
}

/* A record the reader returned: in range, and it survives a round trip. */
static void
check_record(const struct vpmu_pmclog_ev *e, uint64_t offset)
{
	vpmu_pmclog_reader *r;
	size_t n1, n2, nl;

	CHECK(vpmu_pmclog_type_name(e->type) != NULL);
	CHECK(e->len >= VPMU_PMCLOG_HEADER_SIZE && e->len <= VPMU_PMCLOG_MAX_RECORD);
	CHECK(e->len % 4 == 0);
	CHECK(e->offset == offset);
	switch (e->type) {
	case VPMU_PMCLOG_CALLCHAIN:
		CHECK(e->u.callchain.npc <= VPMU_PMCLOG_CALLCHAIN_MAX);
		CHECK(e->u.callchain.npc == (e->len - 32) / 8);
		break;
	case VPMU_PMCLOG_INITIALIZE:
		check_string(e->u.initialize.cpuid, sizeof(e->u.initialize.cpuid));
		break;
	case VPMU_PMCLOG_MAP_IN:
		check_string(e->u.map_in.path, VPMU_PMCLOG_PATH_MAX);
		break;
	case VPMU_PMCLOG_PMCATTACH:
		check_string(e->u.pmcattach.path, VPMU_PMCLOG_PATH_MAX);
		break;
	case VPMU_PMCLOG_PROCEXEC:
		check_string(e->u.procexec.path, VPMU_PMCLOG_PATH_MAX);
		break;
	case VPMU_PMCLOG_PMCALLOCATEDYN:
		check_string(e->u.pmcallocatedyn.evname, sizeof(e->u.pmcallocatedyn.evname));
		break;
	case VPMU_PMCLOG_THR_CREATE:
		check_string(e->u.thr_create.tdname, sizeof(e->u.thr_create.tdname));
		break;
	case VPMU_PMCLOG_PROC_CREATE:
		check_string(e->u.proc_create.pcomm, sizeof(e->u.proc_create.pcomm));
		break;
	}
	CHECK(vpmu_pmclog_encode(e, enc1, sizeof(enc1), &n1) == 0);
	CHECK(n1 > 0 && n1 <= e->len);
	CHECK(vpmu_pmclog_encoded_len(e, &nl) == 0 && nl == n1);
	CHECK(vpmu_pmclog_encode(e, enc2, n1 - 1, &nl) == ENOSPC && nl == n1);
	/*
	 * One buffer reader for every round trip of the process: it holds
	 * nothing between them (each record is read whole, and what it reads
	 * after is EAGAIN or, after a CLOSELOG, ENODATA), and a reader per
	 * record would cost a 64 KB buffer each.
	 */
	if ((r = rt) == NULL)
		CHECK(vpmu_pmclog_open_buffer(&r) == 0);
	rt = r;
	CHECK(vpmu_pmclog_feed(r, enc1, n1) == 0);
	CHECK(vpmu_pmclog_read(r, &ev2) == 0);
	CHECK(ev2.len == n1 && ev2.type == e->type && ev2.tsc == e->tsc);
	CHECK(vpmu_pmclog_encode(&ev2, enc2, sizeof(enc2), &n2) == 0);
	CHECK(n2 == n1 && memcmp(enc1, enc2, n1) == 0);
	CHECK(vpmu_pmclog_read(r, &ev2) ==
	    (e->type == VPMU_PMCLOG_CLOSELOG ? ENODATA : EAGAIN));
}

/* Read until the reader stops; count and check what it returns. */
static int
drain(vpmu_pmclog_reader *r, unsigned *count, uint64_t *offset)
{
	int st;

	while ((st = vpmu_pmclog_read(r, &ev)) == 0) {
		check_record(&ev, *offset);
		*offset += ev.len;
		(*count)++;
	}
	CHECK(st == ENODATA || st == EAGAIN || st == EBADMSG);
	if (st == EBADMSG) {
		CHECK(vpmu_pmclog_read(r, &ev) == EBADMSG);
		CHECK(strncmp(vpmu_pmclog_error(r), "offset ", 7) == 0);
	} else
		CHECK(strcmp(vpmu_pmclog_error(r), "no error") == 0);
	return (st);
}

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	vpmu_pmclog_reader *r;
	uint64_t offset = 0, foffset = 0;
	uint32_t x;
	size_t off, n;
	unsigned count = 0, fcount = 0;
	int st = EAGAIN, fst, fd;

	if (size < 4)
		return (0);
	memcpy(&x, data, 4);
	x |= 1;
	data += 4;
	size -= 4;

	/* The buffer reader, fed in chunks of 1 .. 2^k bytes (xorshift32). */
	CHECK(vpmu_pmclog_open_buffer(&r) == 0);
	for (off = 0; off < size && st != EBADMSG; off += n) {
		x ^= x << 13;
		x ^= x >> 17;
		x ^= x << 5;
		n = 1 + (x >> 8) % (1u << (x & 7) * 2);
		if (n > size - off)
			n = size - off;
		CHECK(vpmu_pmclog_feed(r, data + off, n) == 0);
		st = drain(r, &count, &offset);
	}
	vpmu_pmclog_close(r);

	/* The fd reader, over the whole log. */
	fd = memfd_create("fuzz_pmclog", 0);
	CHECK(fd >= 0);
	CHECK(write(fd, data, size) == (ssize_t)size);
	CHECK(lseek(fd, 0, SEEK_SET) == 0);
	CHECK(vpmu_pmclog_open_fd(fd, &r) == 0);
	fst = drain(r, &fcount, &foffset);
	vpmu_pmclog_close(r);
	close(fd);

	CHECK(fst == ENODATA || fst == EBADMSG);
	CHECK((st == EBADMSG) == (fst == EBADMSG));
	CHECK(count == fcount);
	return (0);
}

size_t
LLVMFuzzerCustomMutator(uint8_t *data, size_t size, size_t max, unsigned int seed)
{
	return (pmclog_mutate(data, size, max, 4, seed));
}

size_t
LLVMFuzzerCustomCrossOver(const uint8_t *d1, size_t s1, const uint8_t *d2, size_t s2,
    uint8_t *out, size_t max, unsigned int seed)
{
	return (pmclog_crossover(d1, s1, d2, s2, out, max, 4, seed));
}
