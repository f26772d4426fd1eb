/*
 * live.h -- what live.c (the run) and counts.c (its counts and progress
 * line) share: the run's state, struct live, and each PMC's.  vpmustat's
 * other files do not include it.
 */
#ifndef VS_LIVE_H
#define VS_LIVE_H

#include <time.h>

#include "vpmustat.h"

#define MAX_PMCS	(VS_MAX_EVENTS * VR_MAX_VCPUS)
#define GUEST_PID	1

/* The caller of every operation: privileged, pid 1 (also the guest's process). */
static const struct vpmu_cred caller = { .pid = GUEST_PID, .tid = GUEST_PID,
    .uid = 0, .privileged = 1 };

struct pmc {
	const struct vs_event *ev;
	uint32_t cpu;			/* vCPU, or VPMU_CPU_ANY */
	vpmu_pmc_id id;
	uint64_t last;			/* the count at the last row (-w) */
	uint64_t total;			/* at the end of the run */
	char	 label[96];		/* "s/00/instructions", "p/instructions" */
};

struct live {
	struct vs_live_opts *o;
	struct vr_vm *vm;
	struct pmc pmc[MAX_PMCS];
	unsigned npmc;
	bool	 sampling, counting, process;
	int	 logfd;			/* -1: no log */
	FILE	*out;			/* counts and the report */
	FILE	*rep;			/* the report: out, or standard error when the
					   counts are records (-j, -x) */
	struct vr_rec rec;		/* -j, -x: the counts' records, to out */
	bool	 readable;		/* the log can be read back for the report */
	bool	 progress;		/* the progress line is on */
	bool	 progress_shown;
	double	 next_progress, next_row;	/* s since t0 */
	struct timespec t0;
	const char *src;		/* the source's name */
	struct vs_tasks *tasks;		/* --guest-symbols: samples name their task */
	/*
	 * The kernel's symbols: --guest-symbols' (o->ksyms), or those of its
	 * own table in guest memory (kallsyms), read once: by the first
	 * sample after the kernel set LSTAR, else after the run.
	 */
	struct vs_ksyms *ksyms;
	bool	 kallsyms;		/* from guest memory */
	int	 kallsyms_read;		/* 0: not yet; 1: in memk; -1: failed, why */
	struct vs_ksyms memk;
	char	 kallsyms_why[512];
	bool	 started, stopped;	/* --from-mark, --to-mark taken (atomic) */
	double	 from_s, to_s;		/* when, s since t0 */
};

static inline double
since(const struct timespec *t0)
{
	struct timespec t;

	clock_gettime(CLOCK_MONOTONIC, &t);
	return ((double)(t.tv_sec - t0->tv_sec) + (double)(t.tv_nsec - t0->tv_nsec) / 1e9);
}

/* A counting PMC (-s, -p), not a sampling one. */
static inline bool
is_counting(const struct pmc *p)
{
	return (p->ev->scope == VS_SC || p->ev->scope == VS_TC);
}

/* ---- counts.c ---------------------------------------------------------------------------- */

/* The counting table's header line: each counting PMC's label (-w, text). */
void vs_count_header(struct live *l);
/* Every 100 ms of the run (vr_run_supervise_tick, arg l): the progress line, the -w rows. */
void vs_count_tick(void *arg);
/* The progress line erased, if it is shown. */
void vs_progress_clear(struct live *l);
/* After the run: each counting PMC's total, as a table or as records (-j, -x). */
void vs_count_totals(struct live *l, double secs);

#endif /* VS_LIVE_H */
