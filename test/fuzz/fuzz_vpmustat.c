/*
 * fuzz_vpmustat.c -- libFuzzer target for vpmustat -R (examples/vpmustat/):
 * the report, the call graph (-G), the folded stacks (--folded) and the
 * flame graph (--svg) of a fuzzed log, through the functions main.c's
 * read_log() and output.c's vs_outputs() call: vs_profile_read(),
 * vs_report(), vs_profile_event(), vs_callgraph(), vs_folded(),
 * vs_flamegraph().  The log is read from a memfd, as -R reads a file;
 * every output goes to an open_memstream() buffer, checked, then dropped.
 *
 * Input: 4 option bytes, then the log (fuzz_pmclog's shape, so the two
 * share the mutator, pmclog_mutate.c):
 *   byte 0  bit 0: --elf hot.elf (examples/guests, loaded once);
 *           bit 1: -c CPUS, the range byte 2 .. byte 2 + byte 3;
 *           bit 2: --event, the name of the log's event byte 3 % count;
 *           bit 3: --dump (to /dev/null)
 *   byte 1  --top (0: every function)
 *
 * Checks, beyond ASan and UBSan, and that nothing exits:
 *   - vs_profile_read() fails exactly when libvpmu's reader, given the
 *     whole log at once, stops at an error or leaves bytes that are not
 *     a whole record; p.records and p.bytes are what that reader returned
 *     before it stopped, and p.error says why exactly when it failed;
 *   - the report starts with its summary line, with p.records;
 *   - when the log is read whole (vs_outputs() writes the files only
 *     then): the call graph starts with its header; each folded line is
 *     "frame;frame;... COUNT" with COUNT a positive number, at most 512
 *     frames, the counts summing to the event's samples; the SVG starts
 *     with "<?xml", ends with "</svg>\n", has no control byte but '\n',
 *     every '<' closed by a '>' before the next '<', and as many "<g "
 *     as "</g>".
 *
 * Set-up is once per process (the symbols, the memfd, /dev/null).  A long
 * run, 10 M executions (1.5 to 2 h on one core; ASan's quarantine,
 * 256 MB by default, costs a third of the speed here; a smaller one only
 * narrows the window in which a use after free is caught), in a clang
 * build tree B:
 *
 *   ASAN_OPTIONS=quarantine_size_mb=16 B/test/fuzz/fuzz_vpmustat \
 *       -runs=10000000 -rss_limit_mb=2048 CORPUS test/fuzz/corpus/vpmustat \
 *       B/test/fuzz/vpmustat/seed
 */
#include <errno.h>
#include <inttypes.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include <vpmu/pmclog.h>

#include "pmclog_mutate.h"
#include "vpmustat.h"

#define CHECK(c)	do { if (!(c)) { fprintf(stderr, "%s:%d: %s\n", \
			    __FILE__, __LINE__, #c); abort(); } } while (0)

#ifndef VS_FUZZ_ELF
#define VS_FUZZ_ELF	""
#endif

/* The checks walk every byte: no coverage callbacks there (a third of the time). */
#if defined(__clang__)
#define NO_COVERAGE	__attribute__((no_sanitize("coverage")))
#else
#define NO_COVERAGE
#endif

int LLVMFuzzerInitialize(int *argc, char ***argv);
int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);
size_t LLVMFuzzerCustomMutator(uint8_t *data, size_t size, size_t max, unsigned int seed);
size_t LLVMFuzzerCustomCrossOver(const uint8_t *d1, size_t s1, const uint8_t *d2,
    size_t s2, uint8_t *out, size_t max, unsigned int seed);

static struct vs_symtab elf_syms, no_syms;
static bool have_elf;
static int logfd = -1;
static FILE *devnull;
static struct vpmu_pmclog_ev ev;

int
LLVMFuzzerInitialize(int *argc, char ***argv)
{
	char err[256];

	(void)argc;
	(void)argv;
	if (VS_FUZZ_ELF[0] != '\0' &&
	    vs_symtab_load(&elf_syms, VS_FUZZ_ELF, err, sizeof(err)) == 0)
		have_elf = true;
	else
		fprintf(stderr, "fuzz_vpmustat: no symbols (%s): option bit 0 ignored\n",
		    VS_FUZZ_ELF[0] != '\0' ? err : "built without VS_FUZZ_ELF");
	logfd = memfd_create("fuzz_vpmustat", 0);
	devnull = fopen("/dev/null", "w");
	CHECK(logfd >= 0 && devnull != NULL);
	return (0);
}

/* What libvpmu's reader makes of the whole log: records, bytes, and why it stopped. */
static int
reference(const uint8_t *log, size_t size, uint64_t *records, uint64_t *bytes)
{
	vpmu_pmclog_reader *r;
	int st;

	*records = *bytes = 0;
	CHECK(vpmu_pmclog_open_buffer(&r) == 0);
	CHECK(vpmu_pmclog_feed(r, log, size) == 0);
	while ((st = vpmu_pmclog_read(r, &ev)) == 0) {
		(*records)++;
		*bytes += ev.len;
	}
	vpmu_pmclog_close(r);
	return (st);
}

/*
 * s: "<?xml", elements closed, no control bytes but tabs and newlines,
 * the script last, in one CDATA section: "]]></script>\n</svg>\n" ends it.
 */
NO_COVERAGE static void
check_svg(const char *s, size_t n)
{
	static const char end[] = "]]></script>\n</svg>\n";
	const char *script = strstr(s, "<script");
	size_t i, opens = 0, closes = 0;
	bool in_tag = false;

	CHECK(n >= 7 && strncmp(s, "<?xml", 5) == 0);
	CHECK(strlen(s) == n);
	CHECK(script != NULL && strstr(script, "<![CDATA[") != NULL);
	CHECK(strstr(script, "]]>") == s + n - strlen(end));
	CHECK(strcmp(s + n - strlen(end), end) == 0);
	n = (size_t)(script - s);	/* the elements before the script */
	for (i = 0; i < n; i++) {
		CHECK((unsigned char)s[i] >= 0x20 || s[i] == '\n' || s[i] == '\t');
		if (s[i] == '<') {
			CHECK(!in_tag);
			in_tag = true;
			if (strncmp(s + i, "<g ", 3) == 0)
				opens++;
			else if (strncmp(s + i, "</g>", 4) == 0)
				closes++;
		} else if (s[i] == '>') {
			CHECK(in_tag);
			in_tag = false;
		}
	}
	CHECK(!in_tag && opens == closes);
}

/* "frame;frame;... COUNT\n" lines; the sum of the counts. */
NO_COVERAGE static uint64_t
check_folded(const char *s, size_t n)
{
	const char *line, *end, *sp, *p;
	uint64_t sum = 0, count;
	unsigned frames;

	CHECK(strlen(s) == n);
	for (line = s; line < s + n; line = end + 1) {
		end = memchr(line, '\n', (size_t)(s + n - line));
		CHECK(end != NULL);
		for (sp = end; sp > line && sp[-1] != ' '; sp--)
			;
		CHECK(sp > line + 1 && sp < end);	/* a frame, a space, a count */
		CHECK(*sp != '0');
		count = 0;
		for (p = sp; p < end; p++) {
			CHECK(*p >= '0' && *p <= '9');
			CHECK(count <= (UINT64_MAX - 9) / 10);
			count = count * 10 + (uint64_t)(*p - '0');
		}
		frames = 1;
		for (p = line; p < sp - 1; p++)
			if (*p == ';') {
				CHECK(p > line && p[-1] != ';');	/* no empty frame */
				frames++;
			}
		CHECK(sp[-2] != ';');
		CHECK(frames <= VS_TREE_DEPTH_MAX);	/* a chain and its process */
		sum += count;
	}
	return (sum);
}

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	static const struct vs_evprof none = { .name = "(none)" };
	static struct vs_profile p;
	struct vs_cpuset cpus;
	const struct vs_evprof *e;
	const char *event = NULL;
	char spec[32], head[64], *out;
	uint64_t records, bytes, sum;
	uint8_t opt[4];
	size_t n, i;
	FILE *f;
	int rc, st;

	if (size < 4)
		return (0);
	memcpy(opt, data, 4);
	data += 4;
	size -= 4;

	CHECK(ftruncate(logfd, 0) == 0);
	CHECK(pwrite(logfd, data, size, 0) == (ssize_t)size);
	CHECK(lseek(logfd, 0, SEEK_SET) == 0);
	vs_profile_init(&p, (opt[0] & 1) != 0 && have_elf ? &elf_syms : &no_syms);
	p.keep_samples = true;
	if (opt[0] & 2) {
		memset(&cpus, 0, sizeof(cpus));
		cpus.n = 1;
		cpus.r[0].lo = opt[2];
		cpus.r[0].hi = (uint32_t)opt[2] + opt[3];
		snprintf(spec, sizeof(spec), "%u-%u", cpus.r[0].lo, cpus.r[0].hi);
		cpus.spec = spec;
		p.cpus = &cpus;
	}
	rc = vs_profile_read(&p, logfd, (opt[0] & 8) != 0 ? devnull : NULL);

	st = reference(data, size, &records, &bytes);
	CHECK(rc == 0 || rc == -1);
	CHECK(p.records == records && p.bytes == bytes);
	CHECK(rc == (st == EBADMSG || bytes != size ? -1 : 0));
	CHECK((rc != 0) == (p.error[0] != '\0'));

	/* The report, always (main() prints it whatever the log). */
	CHECK((f = open_memstream(&out, &n)) != NULL);
	vs_report(f, &p, opt[1]);
	CHECK(fclose(f) == 0);
	snprintf(head, sizeof(head), "vpmustat: %" PRIu64 " records, ", p.records);
	CHECK(strncmp(out, head, strlen(head)) == 0);
	free(out);
	if (rc != 0)
		goto done;		/* vs_outputs(): no files from a bad log */

	if ((opt[0] & 4) != 0 && p.nev != 0)
		event = p.ev[opt[3] % p.nev].name;
	if ((e = vs_profile_event(&p, event)) == NULL) {
		CHECK(event == NULL);
		e = &none;
	}
	CHECK(e->root.total == e->samples);
	CHECK(vs_evprof_tree(e)->total == e->samples);

	CHECK((f = open_memstream(&out, &n)) != NULL);
	vs_callgraph(f, e);
	CHECK(fclose(f) == 0);
	CHECK(strncmp(out, "# vpmustat call graph: event ", 29) == 0);
	free(out);

	CHECK((f = open_memstream(&out, &n)) != NULL);
	vs_folded(f, e);
	CHECK(fclose(f) == 0);
	sum = check_folded(out, n);
	CHECK(sum == e->samples);
	free(out);

	CHECK((f = open_memstream(&out, &n)) != NULL);
	vs_flamegraph(f, e, "Flame graph: fuzz <&\"'>");
	CHECK(fclose(f) == 0);
	check_svg(out, n);
	free(out);

	/* perf script: a header line per sample of e; pprof: written. */
	CHECK((f = open_memstream(&out, &n)) != NULL);
	vs_perf_script(f, &p, e);
	CHECK(fclose(f) == 0);
	for (sum = 0, i = 0; i < n; i++)
		if ((i == 0 || out[i - 1] == '\n') && out[i] != '\t' && out[i] != '\n')
			sum++;
	CHECK(sum == e->samples);
	free(out);
	CHECK((f = open_memstream(&out, &n)) != NULL);
	CHECK(vs_pprof(f, &p, e) == 0);
	CHECK(fclose(f) == 0);
	CHECK(n > 18 && (uint8_t)out[0] == 0x1f && (uint8_t)out[1] == 0x8b);
	free(out);
done:
	vs_profile_free(&p);
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
