/*
 * pmclog_bench.c -- the pmclog encoder and reader (issue 5, "Tests and
 * figures"):
 *
 *   encode   CALLCHAIN records of depth 8 into a log buffer of the
 *            default logbuffersize (256 KB), started again when full, as
 *            the log writer fills its buffers       goal >= 10 M records/s
 *   parse    a log made like a sampling session's (CALLCHAIN of depth
 *            1..16, a PROCCSW every 50 records, a MAP_IN every 1000) fed
 *            to a buffer reader in 1 MB chunks, each read until
 *            EAGAIN; the copy made by vpmu_pmclog_feed() counts
 *                                                   goal >= 1 GB/s
 *   fd       the same log through an fd reader on a memfd (read(2)'s
 *            copy included); a figure, no goal
 *
 * Each figure is the best of -r rounds (3).  PASS/BELOW compares it to
 * the goal; timing on a shared machine is a report, so the exit status
 * is 0 either way (1 only if the log does not read back).
 *
 *   pmclog_bench [-n RECORDS] [-s MB] [-r ROUNDS] [-m]
 */
#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <time.h>
#include <unistd.h>

#include <vpmu/pmclog.h>

#define ENCODE_GOAL	10e6		/* records/s */
#define PARSE_GOAL	1e9		/* bytes/s */
#define LOGBUF		(256 * 1024)	/* kern.hwpmc.logbuffersize default, bytes */
#define CHUNK		(1024 * 1024)

static struct vpmu_pmclog_ev ev;

static double
now(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ((double)ts.tv_sec + (double)ts.tv_nsec * 1e-9);
}

static uint64_t
xorshift(uint64_t *s)
{
	*s ^= *s << 13;
	*s ^= *s >> 7;
	*s ^= *s << 17;
	return (*s);
}

/* Encode n CALLCHAIN records of depth 8; records per second. */
static double
bench_encode(uint64_t n)
{
	static unsigned char buf[LOGBUF];
	size_t used = 0, len;
	uint64_t i, bytes = 0;
	double t;
	int j;

	memset(&ev, 0, sizeof(ev));
	ev.type = VPMU_PMCLOG_CALLCHAIN;
	ev.u.callchain.pmcid = 0x20000000;
	ev.u.callchain.npc = 8;
	for (j = 0; j < 8; j++)
		ev.u.callchain.pc[j] = 0xFFFFFFFF80200000ull + 0x40 * (uint64_t)j;
	t = now();
	for (i = 0; i < n; i++) {
		ev.tsc = i;
		ev.u.callchain.pid = (uint32_t)i & 0xFF;
		ev.u.callchain.cpuflags = VPMU_PMCLOG_CPUFLAGS(i & 3, 1);
		ev.u.callchain.pc[0] = 0x401000 + (i & 0xFFF);
		if (vpmu_pmclog_encode(&ev, buf + used, sizeof(buf) - used, &len) == ENOSPC) {
			used = 0;	/* the buffer goes to the writer */
			(void)vpmu_pmclog_encode(&ev, buf, sizeof(buf), &len);
		}
		used += len;
		bytes += len;
	}
	t = now() - t;
	if (bytes != n * 96) {
		fprintf(stderr, "pmclog_bench: encoded %llu bytes, not %llu\n",
		    (unsigned long long)bytes, (unsigned long long)n * 96);
		exit(1);
	}
	return ((double)n / t);
}

/* A log of about `size` bytes; its record count in *nrec. */
static unsigned char *
make_log(size_t size, size_t *lenp, uint64_t *nrec)
{
	unsigned char *log;
	uint64_t s = 0x9E3779B97F4A7C15ull, i;
	size_t used = 0, n;
	unsigned j;

	if ((log = malloc(size + VPMU_PMCLOG_MAX_RECORD)) == NULL) {
		perror("pmclog_bench: malloc");
		exit(1);
	}
	for (i = 0; used < size; i++) {
		memset(&ev.u, 0, sizeof(ev.u.map_in));
		ev.tsc = 1000000 + 1000 * i;
		if (i % 1000 == 0) {
			ev.type = VPMU_PMCLOG_MAP_IN;
			ev.u.map_in.pid = (uint32_t)(i / 1000);
			ev.u.map_in.start = 0x800000000ull + (i << 12);
			snprintf(ev.u.map_in.path, sizeof(ev.u.map_in.path),
			    "/usr/local/lib/libexample%llu.so.1", (unsigned long long)i);
		} else if (i % 50 == 0) {
			ev.type = VPMU_PMCLOG_PROCCSW;
			ev.u.proccsw.value = xorshift(&s) >> 40;
			ev.u.proccsw.pmcid = 0x20000000;
			ev.u.proccsw.pid = 100;
			ev.u.proccsw.tid = 100100;
		} else {
			ev.type = VPMU_PMCLOG_CALLCHAIN;
			ev.u.callchain.pid = 100;
			ev.u.callchain.tid = 100100;
			ev.u.callchain.pmcid = 0x20000000;
			ev.u.callchain.cpuflags = VPMU_PMCLOG_CPUFLAGS(i & 3, 1);
			ev.u.callchain.npc = 1 + (unsigned)(xorshift(&s) % 16);
			for (j = 0; j < ev.u.callchain.npc; j++)
				ev.u.callchain.pc[j] = 0x401000 + (xorshift(&s) & 0xFFFF);
		}
		if (vpmu_pmclog_encode(&ev, log + used, VPMU_PMCLOG_MAX_RECORD, &n) != 0) {
			fprintf(stderr, "pmclog_bench: cannot encode the log\n");
			exit(1);
		}
		used += n;
	}
	*lenp = used;
	*nrec = i;
	return (log);
}

/* Read r until it stops (*st: why); the records read. */
static uint64_t
drain(vpmu_pmclog_reader *r, int *st)
{
	uint64_t n = 0;

	while ((*st = vpmu_pmclog_read(r, &ev)) == 0)
		n++;
	return (n);
}

static void
check(const char *what, uint64_t got, uint64_t want, int st, int want_st,
    vpmu_pmclog_reader *r)
{
	if (got != want || st != want_st) {
		fprintf(stderr, "pmclog_bench: %s: %llu records (of %llu), %s: %s\n",
		    what, (unsigned long long)got, (unsigned long long)want,
		    strerror(st), vpmu_pmclog_error(r));
		exit(1);
	}
}

/* Parse the log from a buffer reader, fed in chunks; seconds. */
static double
bench_parse_buffer(const unsigned char *log, size_t len, uint64_t nrec)
{
	vpmu_pmclog_reader *r;
	uint64_t got = 0;
	size_t off, n;
	double t;
	int st = 0;

	if (vpmu_pmclog_open_buffer(&r) != 0)
		exit(1);
	t = now();
	for (off = 0; off < len; off += n) {
		n = len - off < CHUNK ? len - off : CHUNK;
		if (vpmu_pmclog_feed(r, log + off, n) != 0)
			exit(1);
		got += drain(r, &st);
	}
	t = now() - t;
	check("buffer reader", got, nrec, st, EAGAIN, r);
	vpmu_pmclog_close(r);
	return (t);
}

/* Parse the log from an fd reader on a memfd; seconds. */
static double
bench_parse_fd(int fd, uint64_t nrec)
{
	vpmu_pmclog_reader *r;
	uint64_t got;
	double t;
	int st;

	if (lseek(fd, 0, SEEK_SET) != 0 || vpmu_pmclog_open_fd(fd, &r) != 0)
		exit(1);
	t = now();
	got = drain(r, &st);
	t = now() - t;
	check("fd reader", got, nrec, st, ENODATA, r);
	vpmu_pmclog_close(r);
	return (t);
}

static const char *
verdict(double v, double goal)
{
	return (v >= goal ? "PASS" : "BELOW");
}

static void
usage(void)
{
	fprintf(stderr, "usage: pmclog_bench [-n RECORDS] [-s MB] [-r ROUNDS] [-m]\n"
	    "  -n RECORDS  CALLCHAIN records to encode per round (20000000)\n"
	    "  -s MB       size of the log to parse (256)\n"
	    "  -r ROUNDS   rounds; the best is reported (3)\n"
	    "  -m          also print RESULT lines for scripts\n");
	exit(2);
}

int
main(int argc, char **argv)
{
	uint64_t n = 20000000, nrec;
	unsigned rounds = 3, k;
	size_t mb = 256, len, off;
	double enc = 0, tb = 1e30, tf = 1e30, v;
	unsigned char *log;
	ssize_t w;
	int c, fd, machine = 0;

	while ((c = getopt(argc, argv, "n:s:r:mh")) != -1) {
		switch (c) {
		case 'n': n = strtoull(optarg, NULL, 0); break;
		case 's': mb = strtoul(optarg, NULL, 0); break;
		case 'r': rounds = (unsigned)strtoul(optarg, NULL, 0); break;
		case 'm': machine = 1; break;
		default: usage();
		}
	}
	if (n == 0 || mb == 0 || rounds == 0)
		usage();

	printf("\nlibvpmu pmclog benchmark (issue 5)%s\n",
#ifdef __OPTIMIZE__
	    ""
#else
	    ", UNOPTIMIZED build: figures are not representative"
#endif
	    );
	log = make_log(mb << 20, &len, &nrec);
	if ((fd = memfd_create("pmclog_bench", 0)) < 0) {
		perror("pmclog_bench: memfd_create");
		return (1);
	}
	for (off = 0; off < len; off += (size_t)w)
		if ((w = write(fd, log + off, len - off)) <= 0) {
			perror("pmclog_bench: write");
			return (1);
		}

	for (k = 0; k < rounds; k++) {
		if ((v = bench_encode(n)) > enc)
			enc = v;
		if ((v = bench_parse_buffer(log, len, nrec)) < tb)
			tb = v;
		if ((v = bench_parse_fd(fd, nrec)) < tf)
			tf = v;
	}

	printf("encode  CALLCHAIN depth 8 (96 B)   %8.1f M records/s  %6.2f GB/s   goal >= %.0f M/s  %s\n",
	    enc / 1e6, enc * 96 / 1e9, ENCODE_GOAL / 1e6, verdict(enc, ENCODE_GOAL));
	printf("parse   buffer reader, %zu MB log   %8.1f M records/s  %6.2f GB/s   goal >= %.0f GB/s   %s\n",
	    len >> 20, nrec / tb / 1e6, len / tb / 1e9, PARSE_GOAL / 1e9,
	    verdict(len / tb, PARSE_GOAL));
	printf("parse   fd reader (memfd)          %8.1f M records/s  %6.2f GB/s   (no goal)\n",
	    nrec / tf / 1e6, len / tf / 1e9);
	printf("        log: %llu records, %zu bytes (%.1f B/record); best of %u rounds\n",
	    (unsigned long long)nrec, len, (double)len / nrec, rounds);
	if (machine) {
		printf("RESULT pmclog_encode %.0f %s\n", enc, verdict(enc, ENCODE_GOAL));
		printf("RESULT pmclog_parse_buffer %.0f %.0f %s\n", len / tb, nrec / tb,
		    verdict(len / tb, PARSE_GOAL));
		printf("RESULT pmclog_parse_fd %.0f %.0f\n", len / tf, nrec / tf);
	}
	close(fd);
	free(log);
	return (0);
}
