/*
 * steps.c -- what vpmu-run's report and vpmustat's end of run share: why
 * the exact source single-stepped, as a table (vpmu-run: each vCPU;
 * vpmustat: the vCPUs together) and as records; and the records
 * themselves, the lines of the machine-readable formats (-j: JSON, one
 * object a line, as perf stat -j; -x SEP: CSV, as perf stat -x).
 */
#include <inttypes.h>
#include <stdio.h>
#include <string.h>

#include "vpmu-run.h"

/*
 * The reasons, most steps first; a reason that never stepped is left out:
 * the index of the next one not yet done (marked done), VPMU_STEP_WHY_N at
 * the end.
 */
static unsigned
next_reason(const uint64_t why[VPMU_STEP_WHY_N], bool done[VPMU_STEP_WHY_N])
{
	uint64_t best = 0;
	unsigned i, pick = VPMU_STEP_WHY_N;

	for (i = 0; i < VPMU_STEP_WHY_N; i++)
		if (!done[i] && why[i] > best) {
			best = why[i];
			pick = i;
		}
	if (pick != VPMU_STEP_WHY_N)
		done[pick] = true;
	return (pick);
}

static uint64_t
total_steps(const uint64_t why[VPMU_STEP_WHY_N])
{
	uint64_t total = 0;
	unsigned i;

	for (i = 0; i < VPMU_STEP_WHY_N; i++)
		total += why[i];
	return (total);
}

void
vr_steps_report(FILE *f, const uint64_t why[VPMU_STEP_WHY_N], const char *indent)
{
	uint64_t total = total_steps(why);
	bool done[VPMU_STEP_WHY_N] = { false };
	unsigned pick;

	if (total == 0)
		return;
	fprintf(f, "%ssingle steps by reason: %" PRIu64 "\n", indent, total);
	while ((pick = next_reason(why, done)) != VPMU_STEP_WHY_N)
		fprintf(f, "%s  %12" PRIu64 "  %6.2f%%  %s\n", indent, why[pick],
		    100.0 * (double)why[pick] / (double)total, vpmu_step_why_name(pick));
}

/* ---- records: JSON lines, CSV -------------------------------------------------- */

/* Bytes 0x80 and up that begin a whole UTF-8 sequence at s: its length, else 0. */
static size_t
utf8_len(const unsigned char *s)
{
	size_t n, i;
	uint32_t cp;

	if (s[0] >= 0xc2 && s[0] <= 0xdf)
		n = 2, cp = s[0] & 0x1f;
	else if (s[0] >= 0xe0 && s[0] <= 0xef)
		n = 3, cp = s[0] & 0x0f;
	else if (s[0] >= 0xf0 && s[0] <= 0xf4)
		n = 4, cp = s[0] & 0x07;
	else
		return (0);
	for (i = 1; i < n; i++) {
		if ((s[i] & 0xc0) != 0x80)
			return (0);
		cp = cp << 6 | (s[i] & 0x3f);
	}
	/* no overlong form, no surrogate, nothing past U+10FFFF */
	if ((n == 3 && cp < 0x800) || (n == 4 && (cp < 0x10000 || cp > 0x10ffff)) ||
	    (cp >= 0xd800 && cp <= 0xdfff))
		return (0);
	return (n);
}

/*
 * A JSON string: quotes, backslashes and control characters escaped;
 * valid UTF-8 as it is; any other byte as \u00XX (its Latin-1 reading).
 */
static void
json_string(FILE *f, const char *v)
{
	const unsigned char *s = (const unsigned char *)v;
	size_t n;

	putc('"', f);
	while (*s != '\0') {
		if (*s == '"' || *s == '\\') {
			putc('\\', f);
			putc(*s++, f);
		} else if (*s == '\n') {
			fputs("\\n", f);
			s++;
		} else if (*s == '\t') {
			fputs("\\t", f);
			s++;
		} else if (*s < 0x20 || *s == 0x7f) {
			fprintf(f, "\\u%04x", *s++);
		} else if (*s < 0x80) {
			putc(*s++, f);
		} else if ((n = utf8_len(s)) != 0) {
			fwrite(s, 1, n, f);
			s += n;
		} else
			fprintf(f, "\\u%04x", *s++);
	}
	putc('"', f);
}

/* A CSV field: quoted, its quotes doubled, if it holds sep, a quote, CR or LF. */
static void
csv_string(FILE *f, const char *v, char sep)
{
	const char *s;

	if (strchr(v, sep) == NULL && strpbrk(v, "\"\r\n") == NULL) {
		fputs(v, f);
		return;
	}
	putc('"', f);
	for (s = v; *s != '\0'; s++) {
		if (*s == '"')
			putc('"', f);
		putc(*s, f);
	}
	putc('"', f);
}

/* The key of the next member (JSON), or the separator before the next field (CSV). */
static void
field(struct vr_rec *r, const char *key)
{
	if (r->fmt == VR_FMT_JSON) {
		fputs(", ", r->f);
		json_string(r->f, key);
		fputs(": ", r->f);
	} else
		putc(r->sep, r->f);
}

void
vr_rec_begin(struct vr_rec *r, const char *type)
{
	if (r->fmt == VR_FMT_JSON) {
		fputs("{\"type\": ", r->f);
		json_string(r->f, type);
	} else
		csv_string(r->f, type, r->sep);
}

void
vr_rec_str(struct vr_rec *r, const char *key, const char *v)
{
	field(r, key);
	if (v == NULL)
		fputs(r->fmt == VR_FMT_JSON ? "null" : "", r->f);
	else if (r->fmt == VR_FMT_JSON)
		json_string(r->f, v);
	else
		csv_string(r->f, v, r->sep);
}

void
vr_rec_u64(struct vr_rec *r, const char *key, uint64_t v)
{
	field(r, key);
	fprintf(r->f, "%" PRIu64, v);
}

void
vr_rec_i64(struct vr_rec *r, const char *key, int64_t v)
{
	field(r, key);
	fprintf(r->f, "%" PRId64, v);
}

void
vr_rec_bool(struct vr_rec *r, const char *key, bool v)
{
	field(r, key);
	fputs(v ? "true" : "false", r->f);
}

void
vr_rec_null(struct vr_rec *r, const char *key)
{
	field(r, key);
	fputs(r->fmt == VR_FMT_JSON ? "null" : "", r->f);
}

void
vr_rec_pct(struct vr_rec *r, const char *key, uint64_t num, uint64_t den)
{
	if (den == 0) {
		vr_rec_null(r, key);
		return;
	}
	field(r, key);
	fprintf(r->f, "%.2f", 100.0 * (double)num / (double)den);
}

void
vr_rec_secs(struct vr_rec *r, const char *key, double s)
{
	field(r, key);
	fprintf(r->f, "%.3f", s);
}

void
vr_rec_end(struct vr_rec *r)
{
	fputs(r->fmt == VR_FMT_JSON ? "}\n" : "\n", r->f);
}

void
vr_steps_records(struct vr_rec *r, const uint64_t why[VPMU_STEP_WHY_N], int cpu)
{
	uint64_t total = total_steps(why);
	bool done[VPMU_STEP_WHY_N] = { false };
	unsigned pick;

	while ((pick = next_reason(why, done)) != VPMU_STEP_WHY_N) {
		vr_rec_begin(r, "steps");
		if (cpu < 0)
			vr_rec_null(r, "vcpu");
		else
			vr_rec_u64(r, "vcpu", (uint64_t)cpu);
		vr_rec_str(r, "reason", vpmu_step_why_name(pick));
		vr_rec_u64(r, "steps", why[pick]);
		vr_rec_pct(r, "pcnt", why[pick], total);
		vr_rec_end(r);
	}
}
