/*
 * live.c -- vpmustat's run: a guest booted as vpmu-run boots it (any image
 * kind vpmu-run boots, with the same run options), with PMCs of the host
 * API on it.
 *
 * The VMM is vpmu-run's: setup.c tells the image's kind, loads it and sets
 * the VM up in <vpmu/kvm.h>'s order (the --tunable values go into its
 * config here), boot.c builds each vCPU, run.c runs the vCPU threads and
 * ends the run.  Then, before any vCPU runs, this file does as one
 * privileged caller (pid 1):
 *
 *   the process      for -p / -P: pid 1 is created as the guest's only
 *                    process (the guest runs no hooks of its own), named by
 *                    an exec of the guest's path -- before the log, as an
 *                    exec releases what the process owns; after the PMCs it
 *                    is switched in on every vCPU, one thread per vCPU
 *   a log            CONFIGURELOG on -O LOG, or on an unlinked temporary
 *                    file when there are sampling PMCs and no -O
 *   the PMCs         -S: one system-sampling PMC (SS) per event per vCPU;
 *                    -s: one system-counting PMC (SC) per event per vCPU;
 *                    -P / -p: one process PMC (TS / TC) per event, attached
 *                    to pid 1; all in the paravirtual class, all started
 *
 * While the guest runs, the main thread supervises it as vpmu-run's does
 * (vr_run_supervise_tick: SIGINT, SIGTERM and --timeout end the run, whose
 * report and log are still written) and every 100 ms draws the progress
 * line (standard error is a terminal, after the first second) and the
 * counting table every -w seconds (counts.c).  After the run: final counts
 * (counts.c's totals), the PMCs stopped, FLUSHLOG (which first moves the
 * samples still in the rings into the log, so every sample taken is in
 * it), CLOSELOG, and the report from the log read back.
 */
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "vpmustat.h"
#include "live.h"

/* boot.c's messages name the program. */
const char *vr_progname = "vpmustat";

/* ---- the VM: setup.c's, with the tunables ------------------------------------ */

/* options.c's add_tunable() set each on a config already: every name is known. */
static int
set_tunables(vpmu_config *cfg, void *arg)
{
	const struct vs_live_opts *o = arg;
	unsigned i;

	for (i = 0; i < o->ntunables; i++)
		(void)vpmu_config_set_tunable(cfg, o->tunables[i].name, o->tunables[i].value);
	return (0);
}

/* ---- the PMCs ------------------------------------------------------------------------ */

static int
op_fail(const char *what, const char *ev, int err)
{
	fprintf(stderr, "vpmustat: %s%s%s: %s\n", what, ev ? " " : "", ev ? ev : "",
	    vpmu_strerror(err));
	return (VS_EXIT_HOST);
}

static int
pmc_add(struct live *l, const struct vs_event *ev, uint32_t cpu)
{
	static const uint32_t modes[] = { [VS_SS] = VPMU_MODE_SS, [VS_SC] = VPMU_MODE_SC,
	    [VS_TS] = VPMU_MODE_TS, [VS_TC] = VPMU_MODE_TC };
	struct vpmu_pmc_alloc a;
	struct pmc *p = &l->pmc[l->npmc];
	bool sampling = ev->scope == VS_SS || ev->scope == VS_TS;
	char why[200];
	int err;

	memset(&a, 0, sizeof(a));
	a.caps = ev->caps;
	a.cmask = ev->cmask;
	a.cpu = cpu;
	a.cls = VPMU_CLASS_PV;
	a.event = ev->event;
	a.raw = ev->raw;
	a.mode = modes[ev->scope];
	a.flags = sampling && l->o->callchain ? VPMU_F_CALLCHAIN : 0;
	a.count = sampling ? l->o->rate : 0;
	if ((err = vpmu_pmc_allocate(l->vm->pmu, &caller, &a)) != 0) {
		if (err == EINVAL && l->npmc > 0)
			fprintf(stderr, "vpmustat: event %s: no free PMC: the paravirtual "
			    "class has 16 rows, shared by -S/-s (one row per event) "
			    "and -P/-p (one row each)\n", ev->name);
		return (op_fail("PMCALLOCATE", ev->name, err));
	}
	p->ev = ev;
	p->cpu = cpu;
	p->id = a.pmcid;
	if (cpu == VPMU_CPU_ANY) {
		snprintf(p->label, sizeof(p->label), "p/%s", ev->name);
		if ((err = vpmu_pmc_attach(l->vm->pmu, &caller, p->id, GUEST_PID)) != 0)
			return (op_fail("PMCATTACH", ev->name, err));
	} else
		snprintf(p->label, sizeof(p->label), "s/%02u/%s", cpu, ev->name);
	l->npmc++;
	/* Never a silent zero: say when the source cannot count the event (once). */
	if (l->npmc > 1 && l->pmc[l->npmc - 2].ev == ev)
		return (0);
	if (vpmu_pmc_get_unsupported(l->vm->pmu, caller.pid, p->id, why, sizeof(why)) ==
	    EOPNOTSUPP)
		fprintf(stderr, "vpmustat: warning: event %s: source %s does not count "
		    "it: %s\n", ev->name, l->src, why[0] ? why : "unsupported");
	return (0);
}

/*
 * The guest's process, pid 1, named by the guest's path.  Before the log:
 * pid 1 is also the caller, and an exec releases what its process owns
 * (its log too), as hwpmc does.
 */
static int
proc_setup(struct live *l)
{
	int err;

	if ((err = vpmu_proc_create(l->vm->pmu, &caller, 0)) != 0)
		return (op_fail("vpmu_proc_create", NULL, err));
	if ((err = vpmu_proc_exec(l->vm->pmu, GUEST_PID, l->o->run.guest, NULL)) != 0)
		return (op_fail("vpmu_proc_exec", NULL, err));
	return (0);
}

static int
pmcs_start(struct live *l)
{
	unsigned i;
	int err;

	for (i = 0; i < l->npmc; i++)
		if ((err = vpmu_pmc_start(l->vm->pmu, &caller, l->pmc[i].id)) != 0)
			return (op_fail("PMCSTART", l->pmc[i].ev->name, err));
	return (0);
}

static int
pmcs_setup(struct live *l)
{
	const struct vs_event *ev;
	unsigned i, c;
	long min;
	int err, ret;

	/* hwpmc clamps a sampling rate below mincount: say so. */
	if (l->sampling && vpmu_vm_get_tunable(l->vm->pmu, "mincount", &min) == 0 &&
	    min > 0 && l->o->rate < (uint64_t)min) {
		if (!l->o->outs->quiet)
			fprintf(stderr, "vpmustat: warning: -n %" PRIu64 " is below the "
			    "tunable mincount (%ld): one sample every %ld events (--tunable "
			    "mincount=N lowers it)\n", l->o->rate, min, min);
		l->o->rate = (uint64_t)min;
	}

	for (i = 0; i < l->o->nev; i++) {
		ev = &l->o->ev[i];
		if (ev->scope == VS_SS || ev->scope == VS_SC) {
			for (c = 0; c < l->vm->nvcpus; c++)
				if (vs_cpuset_has(ev->cpus, c) && (ret = pmc_add(l, ev, c)) != 0)
					return (ret);
		} else if ((ret = pmc_add(l, ev, VPMU_CPU_ANY)) != 0)
			return (ret);
	}
	if (l->process)
		for (c = 0; c < l->vm->nvcpus; c++)
			if ((err = vpmu_proc_switch_in(l->vm->pmu, c, GUEST_PID,
			    GUEST_PID + (int32_t)c)) != 0)
				return (op_fail("vpmu_proc_switch_in", NULL, err));
	if (l->o->from_mark >= 0)	/* started at that mark (at_mark) */
		return (0);
	return (pmcs_start(l));
}

/*
 * --from-mark, --to-mark: the PMCs started and stopped on the vCPU's thread
 * that takes the mark (the first time it is taken; to-mark only once they
 * started).
 */
static void
at_mark(void *arg, struct vr_vcpu *c, uint32_t mark)
{
	struct live *l = arg;
	unsigned i;

	(void)c;
	if ((int64_t)mark == l->o->from_mark &&
	    !__atomic_exchange_n(&l->started, true, __ATOMIC_ACQ_REL)) {
		l->from_s = since(&l->t0);
		(void)pmcs_start(l);
	} else if ((int64_t)mark == l->o->to_mark && __atomic_load_n(&l->started,
	    __ATOMIC_ACQUIRE) && !__atomic_exchange_n(&l->stopped, true, __ATOMIC_ACQ_REL)) {
		l->to_s = since(&l->t0);
		for (i = 0; i < l->npmc; i++)
			(void)vpmu_pmc_stop(l->vm->pmu, &caller, l->pmc[i].id);
	}
}

/* ---- after the run --------------------------------------------------------------------- */

/*
 * The kernel's symbols from guest memory (kallsyms.c), read once: the
 * first call reads them, later ones give what it found.  NULL, and why in
 * err, when the guest's memory holds no table.
 */
static const struct vs_ksyms *
kallsyms_load(void *arg, char *err, size_t errlen)
{
	struct live *l = arg;

	if (l->kallsyms_read == 0)
		l->kallsyms_read = vs_kallsyms_read(&l->memk, l->vm->ram, l->vm->ram_size,
		    l->o->save_ksyms, l->kallsyms_why, sizeof(l->kallsyms_why)) == 0 ? 1 : -1;
	if (l->kallsyms_read < 0) {
		snprintf(err, errlen, "%s", l->kallsyms_why);
		return (NULL);
	}
	l->ksyms = &l->memk;
	return (&l->memk);
}

/*
 * Samples name the Linux task they came from (tasks.c), when the symbols
 * have what that takes; else said, and samples name the address space.
 * Symbols from guest memory come at the first sample that can use them.
 */
static void
tasks_setup(struct live *l)
{
	static struct vs_tasks tasks;	/* large */
	char err[512];

	if (l->kallsyms)
		vs_tasks_init_lazy(&tasks, kallsyms_load, l);
	else if (vs_tasks_init(&tasks, l->o->ksyms, err, sizeof(err)) < 0) {
		if (!l->o->outs->quiet)
			fprintf(stderr, "vpmustat: guest tasks not named: %s\n", err);
		return;
	}
	if (vs_tasks_attach(&tasks, l->vm) < 0) {
		fprintf(stderr, "vpmustat: guest tasks not named: %s\n", strerror(errno));
		return;
	}
	l->tasks = &tasks;
}

/* How many samples named their task, and why the others did not. */
static void
tasks_end(struct live *l)
{
	const struct vs_tasks *t = l->tasks;

	fprintf(stderr, "vpmustat: guest tasks: %" PRIu64 " samples named their task, %"
	    PRIu64 " their address space%s%s\n", t->named, t->unnamed,
	    t->unnamed != 0 ? ": " : "", t->unnamed != 0 ? t->why : "");
	if (t->orc.n != 0)
		fprintf(stderr, "vpmustat: kernel call chains unwound by the kernel's ORC "
		    "tables (%zu entries, the format of Linux %s)\n", t->orc.n,
		    t->orc.version == 1 ? "before 6.3" : t->orc.version == 2 ? "6.3" :
		    "6.4 on");
	else if (t->orc_tried)
		fprintf(stderr, "vpmustat: kernel call chains by frame pointers: %s\n",
		    t->orc_why);
}

/*
 * vCPU 0's IA32_LSTAR into the log, read once its thread has stopped (a
 * vCPU's registers are its thread's while it runs).  A KVM that does not
 * give it: nothing recorded, said; the run is still good.
 */
static int
record_lstar(struct live *l)
{
	uint32_t idx = VS_MSR_LSTAR;
	uint64_t val = 0;

	if (vr_msrs(l->vm->vcpu[0].fd, false, &idx, &val, 1) < 0) {
		if (!l->o->outs->quiet)
			fprintf(stderr, "vpmustat: warning: KVM_GET_MSRS: vCPU 0's LSTAR "
			    "not read: %s\n", strerror(errno));
		return (0);
	}
	return (vs_log_lstar(l->vm->pmu, &caller, val));
}

static int
finish_log(struct live *l)
{
	int err, ret = 0;

	/* FLUSHLOG moves the samples still in the rings into the log first. */
	if ((err = vpmu_vm_op(l->vm->pmu, &caller, VPMU_OP_FLUSHLOG, NULL)) != 0) {
		fprintf(stderr, "vpmustat: FLUSHLOG: %s\n", vpmu_strerror(err));
		ret = -1;
	}
	if ((err = vpmu_vm_op(l->vm->pmu, &caller, VPMU_OP_CLOSELOG, NULL)) != 0) {
		fprintf(stderr, "vpmustat: CLOSELOG: %s\n", vpmu_strerror(err));
		ret = -1;
	}
	return (ret);
}

/*
 * The log read back: the report, and the files asked for if write (the
 * run ended as a run should) and the log is read whole.
 */
static int
report(struct live *l, bool write)
{
	struct vs_profile p;
	struct vs_symtab syms = { 0 };
	char err[256];
	unsigned i;
	int fd, ret;

	/* A bzImage or an a.out has no symbols to read: said only of an ELF. */
	errno = 0;
	if (vs_symtab_load(&syms, l->o->run.guest, err, sizeof(err)) < 0 && errno != ENOEXEC)
		fprintf(stderr, "vpmustat: warning: symbols: %s\n", err);
	vs_profile_init(&p, &syms);
	p.ksyms = l->ksyms;
	p.keep_samples = l->o->outs->perf.path != NULL;
	for (i = 0; i < l->npmc; i++) {
		vs_profile_name_pmc(&p, l->pmc[i].id, l->pmc[i].ev->name);
		vs_profile_pmc_rate(&p, l->pmc[i].id, l->o->rate);
	}
	/* An -O file is read through its name (it may be a FIFO's other end: not read). */
	if (l->o->log != NULL) {
		if ((fd = open(l->o->log, O_RDONLY | O_CLOEXEC)) < 0) {
			fprintf(stderr, "vpmustat: %s: %s\n", l->o->log, strerror(errno));
			vs_symtab_free(&syms);
			return (VS_EXIT_HOST);
		}
	} else {
		fd = l->logfd;
		(void)lseek(fd, 0, SEEK_SET);
	}
	if (vs_profile_read(&p, fd, NULL) < 0)
		fprintf(stderr, "vpmustat: the log: %s\n", p.error);
	if (fd != l->logfd)
		close(fd);
	if (l->o->log != NULL && !l->o->outs->quiet)
		fprintf(l->rep, "vpmustat: log %s\n", l->o->log);
	if (!write && vs_outs_any(l->o->outs))
		fprintf(stderr, "vpmustat: the run failed: -G, --folded and --svg not "
		    "written\n");
	else if (p.error[0] != '\0' && vs_outs_any(l->o->outs))
		fprintf(stderr, "vpmustat: -G, --folded and --svg not written\n");
	ret = vs_outputs(&p, l->rep, l->o->top, l->o->event, l->o->outs, write,
	    l->o->run.guest);
	vs_profile_free(&p);
	vs_symtab_free(&syms);
	return (ret);
}

/* ---- the whole run ---------------------------------------------------------------------- */

static int
open_log(struct live *l)
{
	char path[] = "/tmp/vpmustat-XXXXXX";
	const char *tmp = getenv("TMPDIR");
	char tpath[4096];
	struct stat sb;

	if (l->o->log != NULL) {
		if (strcmp(l->o->log, "-") == 0)	/* standard output: never read back */
			l->logfd = fcntl(STDOUT_FILENO, F_DUPFD_CLOEXEC, 3);
		else
			l->logfd = open(l->o->log, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC,
			    0644);
		if (l->logfd < 0) {
			fprintf(stderr, "vpmustat: -O %s: %s\n", l->o->log, strerror(errno));
			return (VS_EXIT_USAGE);
		}
		/* Only a regular file is read back for the report (by its name). */
		l->readable = strcmp(l->o->log, "-") != 0 && fstat(l->logfd, &sb) == 0 &&
		    S_ISREG(sb.st_mode);
		if (!l->readable && vs_outs_any(l->o->outs)) {
			fprintf(stderr, "vpmustat: -O %s is not a regular file: it is not "
			    "read back, and -G, --folded and --svg need it (read it with "
			    "-R)\n", strcmp(l->o->log, "-") == 0 ? "- (standard output)" :
			    l->o->log);
			return (VS_EXIT_USAGE);
		}
		if (!l->readable && l->sampling)
			fprintf(stderr, "vpmustat: -O %s is not a regular file: no report "
			    "(read it later with -R)\n", strcmp(l->o->log, "-") == 0 ?
			    "- (standard output)" : l->o->log);
		return (0);
	}
	if (tmp != NULL && tmp[0] != '\0' &&
	    (size_t)snprintf(tpath, sizeof(tpath), "%s/vpmustat-XXXXXX", tmp) < sizeof(tpath))
		l->logfd = mkstemp(tpath);
	else {
		l->logfd = mkstemp(path);
		snprintf(tpath, sizeof(tpath), "%s", path);
	}
	if (l->logfd < 0) {
		fprintf(stderr, "vpmustat: a temporary log file: %s\n", strerror(errno));
		return (VS_EXIT_HOST);
	}
	unlink(tpath);			/* read back through the descriptor */
	l->readable = true;
	return (0);
}

/*
 * A sampling run that took no sample says why, PMC by PMC: the source
 * cannot count the event, or it counted less than one period.
 */
static void
no_samples(struct live *l)
{
	struct vpmu_count c;
	char why[256];
	unsigned i;

	for (i = 0; i < l->npmc; i++) {
		if (is_counting(&l->pmc[i]))
			continue;
		if (vpmu_pmc_get_unsupported(l->vm->pmu, GUEST_PID, l->pmc[i].id, why,
		    sizeof(why)) != 0)
			fprintf(stderr, "vpmustat: no samples of %s: it cannot count: %s\n",
			    l->pmc[i].label, why);
		else if (vpmu_pmc_get_count(l->vm->pmu, GUEST_PID, l->pmc[i].id, &c) == 0)
			fprintf(stderr, "vpmustat: no samples of %s: it counted %" PRIu64
			    " %s, less than one period (-n %" PRIu64 ")\n", l->pmc[i].label,
			    c.value, vpmu_event_is_timed(l->pmc[i].ev->event) ? "ns" : "events",
			    l->o->rate);
	}
}

/*
 * The exact source's steps and breakpoint exits (--exact-mode), and the
 * periods of time events no sample stands for, when there are any.
 */
static void
exact_stats(struct vr_vm *vm, uint64_t *why)
{
	struct vpmu_kvm_stats ks;
	struct vpmu_vcpu_stats vs;
	uint64_t steps = 0, breaks = 0, missed = 0;
	unsigned c, i;

	memset(why, 0, sizeof(why[0]) * VPMU_STEP_WHY_N);
	for (c = 0; vm->k != NULL && c < vm->nvcpus; c++) {
		if (vpmu_kvm_get_stats(vm->k, c, &ks) == 0) {
			steps += ks.steps;
			breaks += ks.breaks;
			for (i = 0; i < VPMU_STEP_WHY_N; i++)
				why[i] += ks.exact_step_why[i];
		}
		if (vpmu_vcpu_get_stats(vm->pmu, c, &vs) == 0)
			missed += vs.time_missed;
	}
	if (steps + breaks != 0)
		fprintf(stderr, "; %" PRIu64 " steps, %" PRIu64 " breakpoints", steps,
		    breaks);
	if (missed != 0)
		fprintf(stderr, "; %" PRIu64 " time period%s without a sample (a run went "
		    "past %s)", missed, missed == 1 ? "" : "s", missed == 1 ? "it" : "them");
}

/* How the run ended, on standard error. */
static void
run_end(const struct vr_vm *vm, const struct vs_live_opts *o, double secs)
{
	switch (vm->end) {
	case VR_END_GUEST_EXIT:
		fprintf(stderr, "vpmustat: the guest exited with status %d after %.2f s",
		    vm->status, secs);
		break;
	case VR_END_TIMEOUT:
		fprintf(stderr, "vpmustat: timed out after %.2f s without a guest exit "
		    "(--timeout %u): stopped, status %d", secs, o->run.timeout, vm->status);
		break;
	case VR_END_SIGNAL:
		fprintf(stderr, "vpmustat: interrupted after %.2f s: stopped by %s, status %d",
		    secs, vm->status - VR_EXIT_SIGNAL == SIGINT ? "SIGINT" : "SIGTERM",
		    vm->status);
		break;
	default:
		fprintf(stderr, "vpmustat: the run ended without a guest exit (status %d) "
		    "after %.2f s", vm->status, secs);
	}
}

int
vs_live(struct vs_live_opts *o)
{
	static struct vr_vm vm;		/* large; zeroed */
	static struct vr_setup s;
	struct vpmu_op_configurelog cl;
	struct vpmu_driverstats st;
	sigset_t held, oldmask;
	struct live l;
	uint64_t stepwhy[VPMU_STEP_WHY_N];	/* the exact source's steps, by reason */
	double secs;
	unsigned i;
	int ret, err, status;
	bool ended_well;

	memset(&l, 0, sizeof(l));
	l.o = o;
	l.vm = &vm;
	l.logfd = -1;
	l.out = stderr;
	vr_vm_init(&vm);
	if (o->console_stderr)		/* an output has standard output */
		vm.console = stderr;
	s.o = &o->run;
	s.configure = set_tunables;
	s.arg = o;
	for (i = 0; i < o->nev; i++) {
		l.sampling |= o->ev[i].scope == VS_SS || o->ev[i].scope == VS_TS;
		l.counting |= o->ev[i].scope == VS_SC || o->ev[i].scope == VS_TC;
		l.process |= o->ev[i].scope == VS_TS || o->ev[i].scope == VS_TC;
	}

	if (o->out != NULL && strcmp(o->out, "-") == 0)
		l.out = stdout;
	else if (o->out != NULL && (l.out = fopen(o->out, "w")) == NULL) {
		fprintf(stderr, "vpmustat: -o %s: %s\n", o->out, strerror(errno));
		l.out = stderr;
		ret = VS_EXIT_USAGE;
		goto out;
	}
	l.rep = o->fmt == VR_FMT_TEXT ? l.out : stderr;
	l.rec = (struct vr_rec){ .f = l.out, .fmt = o->fmt, .sep = o->sep };
	if ((ret = vr_setup_image(&s, &vm)) != 0 || (ret = vr_setup_vm(&s, &vm)) != 0)
		goto out;
	l.src = s.src->name;
	if (l.process && (ret = proc_setup(&l)) != 0)
		goto out;
	/* The log before the PMCs: their PMCALLOCATE records go to it. */
	if (l.sampling || o->log != NULL) {
		if ((ret = open_log(&l)) != 0)
			goto out;
		cl.flags = 0;
		cl.logfd = l.logfd;
		if ((err = vpmu_vm_op(vm.pmu, &caller, VPMU_OP_CONFIGURELOG, &cl)) != 0) {
			ret = op_fail("CONFIGURELOG", NULL, err);
			goto out;
		}
		/* The image the samples belong to (image.c). */
		if ((ret = vs_log_image(vm.pmu, &caller, o->run.guest)) != 0)
			goto out;
	}
	if ((ret = pmcs_setup(&l)) != 0)
		goto out;
	l.ksyms = o->ksyms;
	l.kallsyms = o->ksyms == NULL && (o->guest_kallsyms || vm.bzimage);
	if (l.sampling && (o->ksyms != NULL || l.kallsyms))
		tasks_setup(&l);
	vm.mark_hook = at_mark;
	vm.mark_arg = &l;

	l.progress = isatty(STDERR_FILENO) && l.sampling && !o->outs->quiet;
	if (!o->outs->quiet) {		/* -q: errors only */
		fprintf(stderr, "vpmustat: %s: model %s, source %s, %u vCPU%s",
		    o->run.guest, s.modelstr, l.src, vm.nvcpus, vm.nvcpus == 1 ? "" : "s");
		if (l.sampling)
			fprintf(stderr, ", sampling every %" PRIu64 " events%s", o->rate,
			    o->callchain ? " with call chains" : "");
		fprintf(stderr, "\n");
		if (o->run.pmu_mode_given)
			fprintf(stderr, "vpmustat: guest PMU mode %s\n", vm.pmu_mode_why);
	}
	if (l.counting && o->wait_s != 0 && o->fmt == VR_FMT_TEXT)
		vs_count_header(&l);
	/*
	 * The run, until the guest exits, a signal (SIGINT, SIGTERM) or
	 * --timeout stops it; the progress line and the rows every 100 ms.
	 */
	if (vr_run_prepare() < 0 || vr_run_hold_signals(&held, &oldmask) < 0) {
		ret = VS_EXIT_HOST;
		goto out;
	}
	clock_gettime(CLOCK_MONOTONIC, &l.t0);
	l.next_row = o->wait_s;
	l.next_progress = 1.0;
	(void)vr_run_start(&vm);
	vr_run_supervise_tick(&vm, o->run.timeout, &held, &oldmask, 100, vs_count_tick, &l);
	vr_run_wait(&vm);
	secs = since(&l.t0);
	status = vm.status;
	vs_progress_clear(&l);

	/* The counts, then the PMCs stopped, then the log closed. */
	for (i = 0; i < l.npmc; i++) {
		if (is_counting(&l.pmc[i]) &&
		    (err = vpmu_pmc_read(vm.pmu, &caller, l.pmc[i].id, &l.pmc[i].total)) != 0)
			fprintf(stderr, "vpmustat: PMCRW %s: %s\n", l.pmc[i].label,
			    vpmu_strerror(err));
		(void)vpmu_pmc_stop(vm.pmu, &caller, l.pmc[i].id);
	}
	/*
	 * A run ends well by the guest's exit, whatever its status, or when
	 * stopped from outside (a signal, --timeout): its report is written.
	 */
	ended_well = vm.end == VR_END_GUEST_EXIT || vm.end == VR_END_SIGNAL ||
	    vm.end == VR_END_TIMEOUT;
	/* The vCPUs stopped: vCPU 0's LSTAR may be read, into the log (--guest-symbols). */
	if (l.logfd >= 0 && record_lstar(&l) != 0)
		ended_well = false;
	if (l.logfd >= 0 && finish_log(&l) < 0) {
		status = status != 0 ? status : VS_EXIT_HOST;
		ended_well = false;
	}
	if (vpmu_vm_get_driverstats(vm.pmu, &caller, &st) != 0)
		memset(&st, 0, sizeof(st));
	if (!o->outs->quiet) {		/* -q: the exit status says how it ended */
		run_end(&vm, o, secs);
		if (l.sampling)
			fprintf(stderr, "; %" PRIu32 " samples, %" PRIu32 " dropped (ring "
			    "full), %" PRIu32 " log buffers unavailable", st.intr_processed,
			    st.intr_bufferfull, st.buffer_requests_failed);
		exact_stats(&vm, stepwhy);
		fprintf(stderr, "\n");
		vr_steps_report(stderr, stepwhy, "vpmustat: ");
	}
	if (l.tasks != NULL && !o->outs->quiet)
		tasks_end(&l);
	/* The vCPUs stopped: guest memory is as they left it. */
	if (l.kallsyms && (l.sampling || o->save_ksyms != NULL)) {
		char why[512];

		if (kallsyms_load(&l, why, sizeof(why)) == NULL && !o->outs->quiet)
			fprintf(stderr, "vpmustat: warning: %s; kernel addresses are not "
			    "named\n", why);
	}
	if (o->from_mark >= 0 && !l.started)
		fprintf(stderr, "vpmustat: the guest never took mark %" PRId64 " (--from-mark): "
		    "the PMCs never started\n", o->from_mark);
	else if (o->from_mark >= 0 && !o->outs->quiet && l.stopped)
		fprintf(stderr, "vpmustat: the PMCs counted from mark %" PRId64 " (at %.2f s) "
		    "to mark %" PRId64 " (at %.2f s)\n", o->from_mark, l.from_s, o->to_mark,
		    l.to_s);
	else if (o->from_mark >= 0 && !o->outs->quiet)
		fprintf(stderr, "vpmustat: the PMCs counted from mark %" PRId64 " (at %.2f s) "
		    "to the end\n", o->from_mark, l.from_s);
	if (l.sampling && st.intr_processed == 0)
		no_samples(&l);
	if (l.counting)
		vs_count_totals(&l, secs);
	if (l.sampling && l.readable && (err = report(&l, ended_well)) != 0 && status == 0)
		status = err;
	ret = status;
out:
	if (l.out == stdout) {
		if (vs_stdout_flush(false) < 0 && ret == 0)
			ret = VS_EXIT_HOST;	/* said once, at the end of main() */
	} else if (l.out != stderr && l.out != NULL && vs_fclose(l.out, "-o", o->out) < 0 &&
	    ret == 0)
		ret = VS_EXIT_HOST;
	vr_setup_teardown(&s, &vm);
	if (l.logfd >= 0)
		close(l.logfd);
	if (l.tasks != NULL)
		vs_tasks_fini(l.tasks);
	vs_ksyms_free(&l.memk);
	return (ret);
}
