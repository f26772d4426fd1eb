/*
 * counts.c -- vpmustat's counts, while and after the run: the counting
 * table (a row every -w seconds, since the last row or with -C since the
 * start), the totals at the end, both as records with -j or -x (steps.c's
 * writer, as perf stat's), and the progress line on a terminal (samples
 * taken and dropped, the log's size).  live.c sets the PMCs up and calls
 * these; every count is read through libvpmu's host API as the run's
 * caller (pid 1).
 */
#include <inttypes.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>

#include "vpmustat.h"
#include "live.h"

static int
colw(const struct pmc *p)
{
	int w = (int)strlen(p->label);

	return (w < 14 ? 14 : w);
}

void
vs_count_header(struct live *l)
{
	unsigned i;

	fprintf(l->out, "#");
	for (i = 0; i < l->npmc; i++)
		if (is_counting(&l->pmc[i]))
			fprintf(l->out, " %*s", colw(&l->pmc[i]), l->pmc[i].label);
	fprintf(l->out, "\n");
}

/*
 * A PMC's count as a record: "interval" (a -w row, at secs since the start)
 * or "count" (its total, after secs of run).
 */
static void
count_record(struct live *l, const char *type, const struct pmc *p, double secs,
    uint64_t v)
{
	struct vr_rec *r = &l->rec;

	vr_rec_begin(r, type);
	vr_rec_secs(r, "time", secs);
	if (p->cpu == VPMU_CPU_ANY)
		vr_rec_null(r, "vcpu");
	else
		vr_rec_u64(r, "vcpu", p->cpu);
	vr_rec_u64(r, "counter-value", v);
	vr_rec_str(r, "unit", vpmu_event_is_timed(p->ev->event) ? "ns" : "");
	vr_rec_str(r, "event", p->ev->name);
	vr_rec_str(r, "scope", p->cpu == VPMU_CPU_ANY ? "process" : "system");
	vr_rec_str(r, "label", p->label);
	vr_rec_end(r);
}

/* One row of counts: since the last row, or (-C) since the start. */
static void
count_row(struct live *l)
{
	struct pmc *p;
	uint64_t v;
	unsigned i;
	double t = since(&l->t0);

	if (l->o->fmt == VR_FMT_TEXT)
		fprintf(l->out, " ");
	for (i = 0; i < l->npmc; i++) {
		p = &l->pmc[i];
		if (!is_counting(p))
			continue;
		if (vpmu_pmc_read(l->vm->pmu, &caller, p->id, &v) != 0)
			v = p->last;
		if (l->o->fmt == VR_FMT_TEXT)
			fprintf(l->out, " %*" PRIu64, colw(p),
			    l->o->cumulative ? v : v - p->last);
		else
			count_record(l, "interval", p, t, l->o->cumulative ? v : v - p->last);
		p->last = v;
	}
	if (l->o->fmt == VR_FMT_TEXT)
		fprintf(l->out, "\n");
	fflush(l->out);
}

void
vs_progress_clear(struct live *l)
{
	if (l->progress_shown) {
		fprintf(stderr, "\r\033[K");
		l->progress_shown = false;
	}
}

static void
progress(struct live *l)
{
	struct vpmu_driverstats st;
	struct stat sb;
	double bytes = 0;

	if (vpmu_vm_get_driverstats(l->vm->pmu, &caller, &st) != 0)
		return;
	if (l->logfd >= 0 && fstat(l->logfd, &sb) == 0)
		bytes = (double)sb.st_size;
	fprintf(stderr, "\r\033[Kvpmustat: %.1f s, %" PRIu32 " samples, %" PRIu32
	    " dropped, log %.1f KiB written", since(&l->t0), st.intr_processed,
	    st.intr_bufferfull + st.buffer_requests_failed, bytes / 1024.0);
	fflush(stderr);
	l->progress_shown = true;
}

void
vs_count_tick(void *arg)
{
	struct live *l = arg;
	double t = since(&l->t0);

	if (l->progress && t >= l->next_progress) {
		progress(l);
		l->next_progress = t + 0.25;
	}
	if (l->counting && l->o->wait_s != 0 && t >= l->next_row) {
		if (l->progress && l->out == stderr)
			vs_progress_clear(l);
		count_row(l);
		l->next_row += l->o->wait_s;
	}
}

void
vs_count_totals(struct live *l, double secs)
{
	struct pmc *p;
	unsigned i;
	int w = 0;

	if (l->o->fmt != VR_FMT_TEXT) {
		for (i = 0; i < l->npmc; i++)
			if (is_counting(&l->pmc[i]))
				count_record(l, "count", &l->pmc[i], secs, l->pmc[i].total);
		fflush(l->out);
		return;
	}
	for (i = 0; i < l->npmc; i++)
		if (is_counting(&l->pmc[i]) && (int)strlen(l->pmc[i].label) > w)
			w = (int)strlen(l->pmc[i].label);
	fprintf(l->out, "vpmustat: totals\n");
	for (i = 0; i < l->npmc; i++) {
		p = &l->pmc[i];
		if (is_counting(p))
			fprintf(l->out, "  %-*s %20" PRIu64 "\n", w, p->label, p->total);
	}
}
