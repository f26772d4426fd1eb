/*
 * formats.c -- the profile in the formats other profilers read.
 *
 * --perf-script: the text `perf script` prints for samples with call
 * chains, which stackcollapse-perf.pl, the Firefox Profiler and speedscope
 * import.  Per sample, in log order, a header line
 *
 *   COMM PID/TID [CPU] SECONDS.MICROSECONDS: PERIOD EVENT:
 *
 * (PERIOD only where the log gives the sampling rate), then a line per
 * frame, the sampled PC first, each "\t<address> <symbol>+0x<off> (<dso>)"
 * ("[unknown]" for an address no function holds), and a blank line.  COMM
 * is the process the log names for the pid, else the guest image's name
 * ("guest" without one); the time is the record's TSC over the log's TSC
 * frequency.  Names are written without blanks (one word each, as the
 * readers split them).
 *
 * --pprof: pprof's profile.proto, gzipped.  The protobuf wire encoding is
 * written here: varints, length-delimited fields (strings, nested
 * messages, packed repeated integers).  One sample per distinct chain of
 * the event with its values (samples, and events = samples x the rate
 * where the log gives it); one location per distinct frame address (a
 * return address and a sampled PC apart: they may name different
 * functions), one function per name, one mapping for the guest image.
 * The string table starts with "".
 */
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>
#include <zlib.h>

#include "vpmustat.h"

const char *
vs_basename(const char *path)
{
	const char *slash = strrchr(path, '/');

	return (slash != NULL ? slash + 1 : path);
}

const char *
vs_image(const struct vs_profile *p)
{
	if (p->syms != NULL && p->syms->path != NULL)
		return (p->syms->path);
	return (NULL);
}

/* ---- perf script ----------------------------------------------------------------- */

/* s as one word: blanks become '_'. */
static void
put_word(FILE *f, const char *s)
{
	for (; *s != '\0'; s++)
		fputc(*s == ' ' || *s == '\t' || *s == '\n' ? '_' : *s, f);
}

void
vs_perf_script(FILE *f, const struct vs_profile *p, const struct vs_evprof *only)
{
	const char *image = vs_image(p), *comm;
	const struct vs_sample *s;
	const struct vs_evprof *e;
	const struct vs_stack *st;
	const struct vs_sym *sym;
	const char *dso, *mod;
	char name[512];
	uint64_t freq = p->tsc_freq != 0 ? p->tsc_freq : UINT64_C(1000000000);
	uint64_t pc, off;
	bool kernel;
	size_t i;
	uint32_t j;

	for (i = 0; i < p->nsamples; i++) {
		s = &p->samples[i];
		e = &p->ev[s->ev];
		if (only != NULL && e != only)
			continue;
		st = &e->stacks[s->stack];
		/* perf script's comm is the thread's */
		if ((comm = vs_profile_thread(p, s->tid)) == NULL &&
		    (comm = vs_profile_proc(p, s->pid)) == NULL)
			comm = image != NULL ? vs_basename(image) : "guest";
		put_word(f, comm);
		fprintf(f, " %" PRIu32 "/%" PRIu32 " [%03" PRIu32 "] %" PRIu64 ".%06" PRIu64
		    ": ", s->pid, s->tid, s->cpu, s->tsc / freq,
		    s->tsc % freq * 1000000 / freq);
		if (e->rate != 0)
			fprintf(f, "%" PRIu64 " ", e->rate);
		put_word(f, e->name);
		fputs(":\n", f);
		for (j = 0; j < st->npc; j++) {
			pc = st->pc[j];
			/* A return address's function holds the byte before it. */
			sym = vs_profile_sym(p, pc, j == 0, st->user, &off, &kernel);
			fprintf(f, "\t%16" PRIx64 " ", pc);
			/* A kernel symbol's DSO, as perf names it: "[module]" or the kernel. */
			dso = image != NULL ? image : "[unknown]";
			mod = sym != NULL && kernel ? strstr(sym->name, " [") : NULL;
			if (sym != NULL) {
				snprintf(name, sizeof(name), "%.*s", mod != NULL ?
				    (int)(mod - sym->name) : (int)strlen(sym->name), sym->name);
				put_word(f, name);
				fprintf(f, "+0x%" PRIx64, off);
				if (kernel)
					dso = mod != NULL ? mod + 1 : "[kernel.kallsyms]";
			} else
				fputs("[unknown]", f);
			fputs(" (", f);
			put_word(f, dso);
			fputs(")\n", f);
		}
		fputc('\n', f);
	}
}

/* ---- pprof: the protobuf wire encoding ------------------------------------------------ */

struct pb {
	uint8_t *b;
	size_t	 n, cap;
};

enum { WT_VARINT = 0, WT_LEN = 2 };

static void
pb_put(struct pb *b, const void *data, size_t len)
{
	if (len == 0)
		return;		/* data may be NULL: an empty buffer */
	if (b->n + len > b->cap) {
		while (b->n + len > b->cap)
			b->cap = b->cap != 0 ? b->cap * 2 : 256;
		if ((b->b = realloc(b->b, b->cap)) == NULL) {
			fprintf(stderr, "vpmustat: out of memory\n");
			exit(VS_EXIT_HOST);
		}
	}
	memcpy(b->b + b->n, data, len);
	b->n += len;
}

/* Seven bits a byte, low first; the top bit says more follow. */
static void
pb_varint(struct pb *b, uint64_t v)
{
	uint8_t buf[10];
	size_t n = 0;

	do {
		buf[n] = (uint8_t)(v & 0x7f);
		v >>= 7;
		if (v != 0)
			buf[n] |= 0x80;
		n++;
	} while (v != 0);
	pb_put(b, buf, n);
}

static void
pb_key(struct pb *b, unsigned field, unsigned wt)
{
	pb_varint(b, (uint64_t)field << 3 | wt);
}

/* An integer field; 0, the default, is left out. */
static void
pb_int(struct pb *b, unsigned field, uint64_t v)
{
	if (v == 0)
		return;
	pb_key(b, field, WT_VARINT);
	pb_varint(b, v);
}

static void
pb_bytes(struct pb *b, unsigned field, const void *data, size_t len)
{
	pb_key(b, field, WT_LEN);
	pb_varint(b, len);
	pb_put(b, data, len);
}

/* A nested message, built in sub (emptied for the next). */
static void
pb_msg(struct pb *b, unsigned field, struct pb *sub)
{
	pb_bytes(b, field, sub->b, sub->n);
	sub->n = 0;
}

/* A packed repeated integer field: the varints in one length-delimited field. */
static void
pb_packed(struct pb *b, unsigned field, const uint64_t *v, size_t n, struct pb *tmp)
{
	size_t i;

	for (i = 0; i < n; i++)
		pb_varint(tmp, v[i]);
	pb_msg(b, field, tmp);
}

/* profile.proto's field numbers. */
enum {
	PROFILE_SAMPLE_TYPE = 1, PROFILE_SAMPLE = 2, PROFILE_MAPPING = 3,
	PROFILE_LOCATION = 4, PROFILE_FUNCTION = 5, PROFILE_STRING_TABLE = 6,
	PROFILE_TIME_NANOS = 9, PROFILE_DURATION_NANOS = 10, PROFILE_PERIOD_TYPE = 11,
	PROFILE_PERIOD = 12,
	VALUETYPE_TYPE = 1, VALUETYPE_UNIT = 2,
	SAMPLE_LOCATION_ID = 1, SAMPLE_VALUE = 2, SAMPLE_LABEL = 3,
	LABEL_KEY = 1, LABEL_STR = 2, LABEL_NUM = 3,
	MAPPING_ID = 1, MAPPING_START = 2, MAPPING_LIMIT = 3, MAPPING_FILENAME = 5,
	MAPPING_HAS_FUNCTIONS = 7,
	LOCATION_ID = 1, LOCATION_MAPPING_ID = 2, LOCATION_ADDRESS = 3, LOCATION_LINE = 4,
	LINE_FUNCTION_ID = 1,
	FUNCTION_ID = 1, FUNCTION_NAME = 2, FUNCTION_SYSTEM_NAME = 3, FUNCTION_FILENAME = 4,
};

/* The fixed strings; the functions' names follow, function i at S_FUNCS + i. */
enum { S_EMPTY, S_SAMPLES, S_COUNT, S_EVENT, S_FILE, S_PID, S_PROCESS, S_FUNCS };

static void
value_type(struct pb *b, unsigned field, uint64_t type, uint64_t unit, struct pb *tmp)
{
	pb_int(tmp, VALUETYPE_TYPE, type);
	pb_int(tmp, VALUETYPE_UNIT, unit);
	pb_msg(b, field, tmp);
}

/* The mapping's range: the ELF's code, else the addresses sampled. */
static void
mapping_range(const struct vs_profile *p, const struct vs_evprof *e, uint64_t *lo,
    uint64_t *hi)
{
	size_t i;
	uint32_t j;

	*lo = UINT64_MAX;
	*hi = 0;
	if (p->syms != NULL && p->syms->ncode != 0)
		for (i = 0; i < p->syms->ncode; i++) {
			*lo = p->syms->code[i].lo < *lo ? p->syms->code[i].lo : *lo;
			*hi = p->syms->code[i].hi > *hi ? p->syms->code[i].hi : *hi;
		}
	else
		for (i = 0; i < e->nstacks; i++)
			for (j = 0; j < e->stacks[i].npc; j++) {
				if (e->stacks[i].pc[j] < *lo)
					*lo = e->stacks[i].pc[j];
				if (e->stacks[i].pc[j] + 1 > *hi)
					*hi = e->stacks[i].pc[j] + 1;
			}
	if (*lo > *hi)
		*lo = *hi = 0;
}

/*
 * The Location of frame j of stack s: its id, a new Location message in
 * locs when the address (as a sampled PC or a return address) is new.
 */
static uint64_t
location(struct pb *locs, struct vs_map *m, uint64_t *nlocs, const struct vs_stack *s,
    uint32_t j, struct pb *tmp, struct pb *line)
{
	int64_t known = vs_map_get(&m[j == 0 ? 0 : 1], s->pc[j]);

	if (known >= 0)
		return ((uint64_t)known + 1);
	vs_map_put(&m[j == 0 ? 0 : 1], s->pc[j], (uint32_t)*nlocs);
	++*nlocs;
	pb_int(tmp, LOCATION_ID, *nlocs);
	pb_int(tmp, LOCATION_MAPPING_ID, 1);
	pb_int(tmp, LOCATION_ADDRESS, s->pc[j]);
	pb_int(line, LINE_FUNCTION_ID, (uint64_t)s->func[j] + 1);
	pb_msg(tmp, LOCATION_LINE, line);
	pb_msg(locs, PROFILE_LOCATION, tmp);
	return (*nlocs);
}

/* The profile message of e, unpacked, in out. */
static void
pprof_encode(struct pb *out, const struct vs_profile *p, const struct vs_evprof *e)
{
	struct pb locs = { 0 }, tmp = { 0 }, sub = { 0 }, line = { 0 };
	struct vs_map m[2] = { { 0 } };
	const struct vs_stack *s;
	const char *image = vs_image(p);
	uint64_t *ids = NULL, v[2], nlocs = 0, lo, hi, d, n;
	size_t i, maxpc = 0;
	int64_t pf;
	bool byproc;
	uint32_t j;

	value_type(out, PROFILE_SAMPLE_TYPE, S_SAMPLES, S_COUNT, &tmp);
	if (e->rate != 0)
		value_type(out, PROFILE_SAMPLE_TYPE, S_EVENT, S_COUNT, &tmp);
	for (i = 0; i < e->nstacks; i++)
		if (e->stacks[i].npc > maxpc)
			maxpc = e->stacks[i].npc;
	if ((ids = malloc((maxpc + 1) * sizeof(*ids))) == NULL) {
		fprintf(stderr, "vpmustat: out of memory\n");
		exit(VS_EXIT_HOST);
	}
	/*
	 * A Sample per chain; per (process, chain) when the log names
	 * processes, labelled pid (a number) and process (its name), which
	 * pprof's -tagfocus and fleet profilers group by.
	 */
	byproc = p->nprocs != 0;
	for (i = 0; i < (byproc ? e->npst : e->nstacks); i++) {
		s = &e->stacks[byproc ? e->pst[i].stack : i];
		n = byproc ? e->pst[i].samples : s->count;
		for (j = 0; j < s->npc; j++)
			ids[j] = location(&locs, m, &nlocs, s, j, &sub, &line);
		pb_packed(&tmp, SAMPLE_LOCATION_ID, ids, s->npc, &sub);
		v[0] = n;
		v[1] = n * e->rate;
		pb_packed(&tmp, SAMPLE_VALUE, v, e->rate != 0 ? 2 : 1, &sub);
		if (byproc) {
			pb_int(&sub, LABEL_KEY, S_PID);
			pb_int(&sub, LABEL_NUM, e->pst[i].pid);
			pb_msg(&tmp, SAMPLE_LABEL, &sub);
			if ((pf = vs_map_get(&e->proc_funcs, e->pst[i].pid)) >= 0) {
				pb_int(&sub, LABEL_KEY, S_PROCESS);
				pb_int(&sub, LABEL_STR, S_FUNCS + (uint64_t)pf);
				pb_msg(&tmp, SAMPLE_LABEL, &sub);
			}
		}
		pb_msg(out, PROFILE_SAMPLE, &tmp);
	}
	free(ids);
	vs_map_free(&m[0]);
	vs_map_free(&m[1]);

	mapping_range(p, e, &lo, &hi);
	pb_int(&tmp, MAPPING_ID, 1);
	pb_int(&tmp, MAPPING_START, lo);
	pb_int(&tmp, MAPPING_LIMIT, hi);
	pb_int(&tmp, MAPPING_FILENAME, S_FILE);
	pb_int(&tmp, MAPPING_HAS_FUNCTIONS, (p->syms != NULL && p->syms->n != 0) ||
	    (p->ksyms != NULL && p->ksyms->usable));
	pb_msg(out, PROFILE_MAPPING, &tmp);
	pb_put(out, locs.b, locs.n);
	free(locs.b);
	for (i = 0; i < e->nfuncs; i++) {
		pb_int(&tmp, FUNCTION_ID, i + 1);
		pb_int(&tmp, FUNCTION_NAME, S_FUNCS + i);
		pb_int(&tmp, FUNCTION_SYSTEM_NAME, S_FUNCS + i);
		pb_int(&tmp, FUNCTION_FILENAME, S_FILE);
		pb_msg(out, PROFILE_FUNCTION, &tmp);
	}

	/* The string table, in the order of the S_ indexes. */
	pb_bytes(out, PROFILE_STRING_TABLE, "", 0);
	pb_bytes(out, PROFILE_STRING_TABLE, "samples", 7);
	pb_bytes(out, PROFILE_STRING_TABLE, "count", 5);
	pb_bytes(out, PROFILE_STRING_TABLE, e->name, strlen(e->name));
	image = image != NULL ? image : "guest";
	pb_bytes(out, PROFILE_STRING_TABLE, image, strlen(image));
	pb_bytes(out, PROFILE_STRING_TABLE, "pid", 3);
	pb_bytes(out, PROFILE_STRING_TABLE, "process", 7);
	for (i = 0; i < e->nfuncs; i++)
		pb_bytes(out, PROFILE_STRING_TABLE, e->funcs[i].name, strlen(e->funcs[i].name));

	if (p->initialized)
		pb_int(out, PROFILE_TIME_NANOS,
		    (uint64_t)p->sec * 1000000000u + (uint64_t)p->nsec);	/* a log's
					   time may be anything: no signed overflow */
	if (p->tsc_freq != 0) {
		d = p->tsc_last - p->tsc_first;
		pb_int(out, PROFILE_DURATION_NANOS, d / p->tsc_freq * 1000000000 +
		    d % p->tsc_freq * 1000000000 / p->tsc_freq);
	}
	if (e->rate != 0) {
		value_type(out, PROFILE_PERIOD_TYPE, S_EVENT, S_COUNT, &tmp);
		pb_int(out, PROFILE_PERIOD, e->rate);
	}
	free(tmp.b);
	free(sub.b);
	free(line.b);
}

int
vs_pprof(FILE *f, const struct vs_profile *p, const struct vs_evprof *e)
{
	struct pb raw = { 0 };
	z_stream z;
	uint8_t *gz;
	uLong cap;
	int ret = -1;

	pprof_encode(&raw, p, e);
	if (raw.n > UINT32_MAX / 2) {
		fprintf(stderr, "vpmustat: --pprof: the profile is too large (%zu bytes)\n",
		    raw.n);
		free(raw.b);
		return (-1);
	}
	memset(&z, 0, sizeof(z));
	/* 15 + 16: a 32 KiB window, in a gzip wrapper (no name, time 0). */
	if (deflateInit2(&z, Z_BEST_COMPRESSION, Z_DEFLATED, 15 + 16, 8,
	    Z_DEFAULT_STRATEGY) != Z_OK) {
		fprintf(stderr, "vpmustat: --pprof: zlib: %s\n", z.msg != NULL ? z.msg :
		    "deflateInit2 failed");
		free(raw.b);
		return (-1);
	}
	cap = deflateBound(&z, raw.n);
	if ((gz = malloc(cap)) == NULL) {
		fprintf(stderr, "vpmustat: out of memory\n");
		exit(VS_EXIT_HOST);
	}
	z.next_in = raw.b;
	z.avail_in = (uInt)raw.n;
	z.next_out = gz;
	z.avail_out = (uInt)cap;
	if (deflate(&z, Z_FINISH) != Z_STREAM_END)
		fprintf(stderr, "vpmustat: --pprof: zlib: %s\n", z.msg != NULL ? z.msg :
		    "deflate did not finish");
	else {
		fwrite(gz, 1, z.total_out, f);
		ret = 0;
	}
	deflateEnd(&z);
	free(gz);
	free(raw.b);
	return (ret);
}
