/*
 * report.c -- vpmu-run's report (vpmu-run(1), THE REPORT): how the run
 * ended, the model and the source, each vCPU's figures and the counters
 * the guest used, as text or as records (-j, -x: steps.c writes them); its
 * file (--report, "-": standard output), written whole or status 1; and
 * what standard error must say when the report goes elsewhere or not at
 * all (-q).
 */
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "vpmu-run.h"

/* ---- the report ---------------------------------------------------------------- */

#define USER_UNSEEN_WARNING	"exact: user-mode (CPL3) guest code ran without being " \
	"stepped on this host: counts of user-mode events are not exact"

#define GUEST_TF_WARNING	"exact: the guest set RFLAGS.TF itself while followed: " \
	"its own single-step traps were not delivered (vpmu_exact(7), CAVEATS)"

/* A vpmu_kvm_stats counter (at offset off) is not 0 on some vCPU. */
static bool
any_vcpu(struct vr_vm *vm, size_t off)
{
	struct vpmu_kvm_stats st;
	uint64_t n;
	unsigned cpu;

	for (cpu = 0; cpu < vm->nvcpus; cpu++) {
		if (vpmu_kvm_get_stats(vm->k, cpu, &st) != 0)
			continue;
		memcpy(&n, (const char *)&st + off, sizeof(n));
		if (n != 0)
			return (true);
	}
	return (false);
}

/* Some vCPU ran user-mode code the exact source could not follow. */
#define user_unseen(vm)	any_vcpu(vm, offsetof(struct vpmu_kvm_stats, user_unseen))
/* Some vCPU stepped itself (RFLAGS.TF) while the exact source followed it. */
#define guest_tf(vm)	any_vcpu(vm, offsetof(struct vpmu_kvm_stats, guest_tf))

/* The counter counts at CPL > 0: USR in an event select, in a fixed counter's nibble. */
static bool
counts_user(const struct vpmu_counter_info *ci)
{
	if (strncmp(ci->name, "IA32_FIXED_CTR", 14) == 0)
		return ((ci->control & 0x2) != 0);
	return ((ci->control & (1u << 16)) != 0);
}

/*
 * The exact source's line: what it counted as retired (and of that, the
 * instructions libvpmu retired itself, which the guest never executed), next to
 * KVM's insn_emulation over the same time where the host has it (a
 * cross-check on hosts whose KVM emulates guest code: it must equal the
 * instructions the guest executed), and user-mode code it could not
 * follow.
 */
static void
report_exact(FILE *f, const struct vpmu_kvm_stats *st)
{
	uint64_t ran = st->exact_retired - st->exact_completed;

	fprintf(f, "  exact: retired %" PRIu64, st->exact_retired);
	if (st->exact_completed != 0)
		fprintf(f, " (%" PRIu64 " retired by libvpmu)", st->exact_completed);
	if (st->exact_ff_loops != 0)
		fprintf(f, " (%" PRIu64 " in %" PRIu64 " fast-forwarded loop%s)",
		    st->exact_ff_insns, st->exact_ff_loops, st->exact_ff_loops == 1 ? "" : "s");
	if (st->exact_closed_loops != 0)
		fprintf(f, " (%" PRIu64 " in rounds not run after %" PRIu64 " LOOP%s)",
		    st->exact_closed_insns, st->exact_closed_loops,
		    st->exact_closed_loops == 1 ? "" : "s");
	if (st->exact_interp_runs != 0)
		fprintf(f, " (%" PRIu64 " run in user space at %" PRIu64 " exit%s)",
		    st->exact_interp_insns, st->exact_interp_runs,
		    st->exact_interp_runs == 1 ? "" : "s");
	if (st->exact_foreseen != 0 || st->exact_mispredicted != 0)
		fprintf(f, " (%" PRIu64 " branch%s foreseen, %" PRIu64 " mispredicted)",
		    st->exact_foreseen, st->exact_foreseen == 1 ? "" : "es",
		    st->exact_mispredicted);
	fprintf(f, ", KVM insn_emulation ");
	if (!st->has_insn_emulation)
		fprintf(f, "n/a");
	else if (st->insn_emulation == ran)
		fprintf(f, "%" PRIu64 " (agrees)", st->insn_emulation);
	else
		fprintf(f, "%" PRIu64 " (differs by %+" PRId64 ")", st->insn_emulation,
		    (int64_t)(st->insn_emulation - ran));
	fprintf(f, ", user-mode code unseen at %" PRIu64 " exit%s\n", st->user_unseen,
	    st->user_unseen == 1 ? "" : "s");
}

/* What became of user-mode SYSCALLs, once the guest set IA32_LSTAR (syscall.c). */
static void
report_syscall(FILE *f, struct vr_vm *vm)
{
	static const char *const host[] = {
		[VR_SYSCALL_HOST_COMPLETES] = "this host's KVM completes it (probed)",
		[VR_SYSCALL_HOST_CPL3] = "this host's KVM leaves it at CPL 3 (probed)",
		[VR_SYSCALL_HOST_UNKNOWN] = "the probe of this host's KVM was inconclusive",
	};
	uint64_t n = __atomic_load_n(&vm->sys_completed, __ATOMIC_RELAXED);

	if (vm->sys_mode == VR_SYSCALL_COMPLETE)
		fprintf(f, "user-mode SYSCALL: caught (--user-syscall complete), "
		    "%" PRIu64 " completed by vpmu-run\n", n);
	else if (vm->sys_host != VR_SYSCALL_HOST_UNPROBED)
		fprintf(f, "user-mode SYSCALL: %s, %" PRIu64 " completed by vpmu-run\n",
		    host[vm->sys_host], n);
}

/* The signal that stopped the run, by name. */
static const char *
signame(int sig)
{
	return (sig == SIGINT ? "SIGINT" : sig == SIGTERM ? "SIGTERM" : "a signal");
}

/* How the run ended: the report's first line. */
static void
report_end(FILE *f, const struct vr_vm *vm, const struct vr_runopts *o)
{
	switch (vm->end) {
	case VR_END_GUEST_EXIT:
		fprintf(f, "vpmu-run: %s: vCPU %u wrote %#" PRIx32 " to port 0xf4: "
		    "exit status %d\n", o->guest, vm->exit_cpu, vm->exit_value,
		    vm->status);
		break;
	case VR_END_TIMEOUT:
		fprintf(f, "vpmu-run: %s: timed out after %u s without a guest exit "
		    "(--timeout %u): stopped, status %d\n", o->guest, o->timeout,
		    o->timeout, vm->status);
		break;
	case VR_END_SIGNAL:
		fprintf(f, "vpmu-run: %s: stopped by %s: status %d\n", o->guest,
		    signame(vm->status - VR_EXIT_SIGNAL), vm->status);
		break;
	default:
		fprintf(f, "vpmu-run: %s: the run ended without a guest exit: "
		    "status %d\n", o->guest, vm->status);
	}
}

static void
report(FILE *f, struct vr_vm *vm, const struct vr_runopts *o, const char *model,
    const char *source)
{
	struct vpmu_counter_info *ci;
	struct vpmu_kvm_stats st;
	unsigned cpu, i, n, used, bad;
	bool exact = strcmp(source, "exact") == 0;
	int err;

	report_end(f, vm, o);
	/* Which source counted, and whether anyone chose it. */
	fprintf(f, "model %s, source %s%s, %u vCPU%s, %u MiB\n", model, source,
	    o->source_given ? "" : " (the default)", vm->nvcpus,
	    vm->nvcpus == 1 ? "" : "s", o->mem);
	if (o->pmu_mode_given)
		fprintf(f, "guest PMU mode %s\n", vm->pmu_mode_why);
	if (exact && user_unseen(vm))
		fprintf(f, "%s\n", USER_UNSEEN_WARNING);
	report_syscall(f, vm);
	if (exact && guest_tf(vm))
		fprintf(f, "%s\n", GUEST_TF_WARNING);
	if ((ci = calloc(VR_MAX_COUNTERS, sizeof(*ci))) == NULL) {
		fprintf(f, "(no memory for the counter table)\n");
		return;
	}
	for (cpu = 0; cpu < vm->nvcpus; cpu++) {
		if ((err = vpmu_kvm_get_stats(vm->k, cpu, &st)) != 0)
			memset(&st, 0, sizeof(st));
		fprintf(f, "vCPU %u: MSR reads %" PRIu64 ", writes %" PRIu64
		    ", #GP %" PRIu64 " (+%" PRIu64 " outside the model), steps %"
		    PRIu64 ", PMIs %" PRIu64, cpu, st.msr_reads, st.msr_writes,
		    st.msr_gp, vm->gp_injected[cpu], st.steps, st.pmis);
		if (st.breaks != 0)	/* --exact-mode block */
			fprintf(f, ", breakpoints %" PRIu64 " (%" PRIu64 " completed)",
			    st.breaks, st.completed);
		if (st.rdpmc != 0)
			fprintf(f, ", RDPMC %" PRIu64 " (#GP %" PRIu64 ")", st.rdpmc,
			    st.rdpmc_gp);
		fprintf(f, "\n");
		if (exact) {
			report_exact(f, &st);
			vr_steps_report(f, st.exact_step_why, "  ");
		}
		n = VR_MAX_COUNTERS;
		if ((err = vpmu_vcpu_get_counters(vm->pmu, cpu, ci, &n)) != 0) {
			fprintf(f, "  counters: vpmu_vcpu_get_counters: %s\n",
			    vpmu_strerror(err));
			continue;
		}
		for (i = used = bad = 0; i < n; i++) {
			if (!ci[i].used)
				continue;
			if (used++ == 0)
				fprintf(f, "  %-16s %-20s %20s %16s %16s  %-9s %s\n",
				    "counter", "event", "value", "enabled ns",
				    "running ns", "source", "multiplexed");
			fprintf(f, "  %-16s %-20s %20" PRIu64 " %16" PRIu64 " %16"
			    PRIu64 "  %-9s ", ci[i].name,
			    ci[i].event[0] ? ci[i].event : "-", ci[i].value,
			    ci[i].time_enabled, ci[i].time_running,
			    ci[i].unsupported ? "none" : source);
			/* Whether the value is an estimate, and from how much. */
			if (ci[i].scaled)
				fprintf(f, "scaled from %" PRIu64 " (ran %.1f%%)\n",
				    ci[i].raw, 100.0 * (double)ci[i].time_running /
				    (double)ci[i].time_enabled);
			else
				fprintf(f, "no\n");
			bad += ci[i].unsupported != 0;
			if (exact && st.user_unseen != 0 && !ci[i].unsupported &&
			    counts_user(&ci[i]))
				fprintf(f, "  %s: counts user mode: not exact\n", ci[i].name);
		}
		if (used == 0)
			fprintf(f, "  no counters used\n");
		/* Never invented counts: say which events were not counted, and why. */
		for (i = 0; bad != 0 && i < n; i++)
			if (ci[i].used && ci[i].unsupported)
				fprintf(f, "  %s: event %s not counted: %s\n",
				    ci[i].name, ci[i].event[0] ? ci[i].event : "-",
				    ci[i].why[0] ? ci[i].why : "the source cannot count it");
		/* Counters the event filter (--event-filter) keeps from counting. */
		for (i = 0; i < n; i++)
			if (ci[i].used && !ci[i].unsupported && ci[i].why[0])
				fprintf(f, "  %s: event %s not counted: %s\n", ci[i].name,
				    ci[i].event[0] ? ci[i].event : "-", ci[i].why);
	}
	free(ci);
	vr_marks_report(f, vm);
}

/* ---- the report as records (-j, -x) ----------------------------------------- */

static const char *const end_names[] = {
	[VR_END_OTHER] = "other", [VR_END_GUEST_EXIT] = "exit",
	[VR_END_SNAPSHOT] = "snapshot", [VR_END_TIMEOUT] = "timeout",
	[VR_END_SIGNAL] = "signal",
};

/* A number, or null where the condition does not hold. */
static void
rec_u64_if(struct vr_rec *r, const char *key, bool have, uint64_t v)
{
	if (have)
		vr_rec_u64(r, key, v);
	else
		vr_rec_null(r, key);
}

static void
warning_record(struct vr_rec *r, int cpu, const char *counter, const char *text)
{
	vr_rec_begin(r, "warning");
	rec_u64_if(r, "vcpu", cpu >= 0, (uint64_t)cpu);
	vr_rec_str(r, "counter", counter);
	vr_rec_str(r, "text", text);
	vr_rec_end(r);
}

/* The run: how it ended, the model, the source, the machine. */
static void
run_record(struct vr_rec *r, struct vr_vm *vm, const struct vr_runopts *o,
    const char *model, const char *source)
{
	static const char *const host[] = {
		[VR_SYSCALL_HOST_UNPROBED] = NULL,
		[VR_SYSCALL_HOST_COMPLETES] = "completes",
		[VR_SYSCALL_HOST_CPL3] = "cpl3",
		[VR_SYSCALL_HOST_UNKNOWN] = "unknown",
	};
	bool exited = vm->end == VR_END_GUEST_EXIT;

	vr_rec_begin(r, "run");
	vr_rec_str(r, "guest", o->guest);
	vr_rec_str(r, "end", end_names[vm->end]);
	vr_rec_i64(r, "status", vm->status);
	rec_u64_if(r, "exit-vcpu", exited, vm->exit_cpu);
	rec_u64_if(r, "exit-value", exited, vm->exit_value);
	vr_rec_str(r, "signal", vm->end == VR_END_SIGNAL ?
	    signame(vm->status - VR_EXIT_SIGNAL) : NULL);
	rec_u64_if(r, "timeout", o->timeout != 0, o->timeout);
	vr_rec_str(r, "model", model);
	vr_rec_str(r, "source", source);
	vr_rec_bool(r, "source-default", !o->source_given);
	vr_rec_u64(r, "vcpus", vm->nvcpus);
	vr_rec_u64(r, "mem-mib", o->mem);
	vr_rec_str(r, "pmu-mode", vm->pmu_mode == VPMU_PMU_MODE_KVM ? "kvm" : "trap");
	vr_rec_str(r, "pmu-mode-why", o->pmu_mode_given ? vm->pmu_mode_why : NULL);
	vr_rec_bool(r, "syscall-caught", vm->sys_mode == VR_SYSCALL_COMPLETE);
	vr_rec_str(r, "syscall-host", vm->sys_host >= 0 && vm->sys_host < (int)NELEM(host) ?
	    host[vm->sys_host] : NULL);
	vr_rec_u64(r, "syscalls-completed",
	    __atomic_load_n(&vm->sys_completed, __ATOMIC_RELAXED));
	vr_rec_u64(r, "marks-taken", vm->marks_taken);
	vr_rec_u64(r, "marks-dropped", vm->marks_dropped);
	vr_rec_end(r);
}

/* A vCPU's figures: vpmu_kvm_get_stats(), the exact source's when it counted. */
static void
vcpu_record(struct vr_rec *r, struct vr_vm *vm, unsigned cpu, const struct vpmu_kvm_stats *st,
    bool exact, const char *error)
{
	uint64_t ran = st->exact_retired - st->exact_completed;

	vr_rec_begin(r, "vcpu");
	vr_rec_u64(r, "vcpu", cpu);
	vr_rec_u64(r, "msr-reads", st->msr_reads);
	vr_rec_u64(r, "msr-writes", st->msr_writes);
	vr_rec_u64(r, "msr-gp", st->msr_gp);
	vr_rec_u64(r, "msr-gp-outside", vm->gp_injected[cpu]);
	vr_rec_u64(r, "steps", st->steps);
	vr_rec_u64(r, "pmis", st->pmis);
	vr_rec_u64(r, "breakpoints", st->breaks);
	vr_rec_u64(r, "breakpoints-completed", st->completed);
	vr_rec_u64(r, "rdpmc", st->rdpmc);
	vr_rec_u64(r, "rdpmc-gp", st->rdpmc_gp);
	rec_u64_if(r, "exact-retired", exact, st->exact_retired);
	rec_u64_if(r, "exact-completed", exact, st->exact_completed);
	rec_u64_if(r, "exact-ff-insns", exact, st->exact_ff_insns);
	rec_u64_if(r, "exact-ff-loops", exact, st->exact_ff_loops);
	rec_u64_if(r, "exact-closed-insns", exact, st->exact_closed_insns);
	rec_u64_if(r, "exact-closed-loops", exact, st->exact_closed_loops);
	rec_u64_if(r, "exact-interp-insns", exact, st->exact_interp_insns);
	rec_u64_if(r, "exact-interp-runs", exact, st->exact_interp_runs);
	rec_u64_if(r, "exact-foreseen", exact, st->exact_foreseen);
	rec_u64_if(r, "exact-mispredicted", exact, st->exact_mispredicted);
	rec_u64_if(r, "insn-emulation", exact && st->has_insn_emulation, st->insn_emulation);
	if (exact && st->has_insn_emulation)
		vr_rec_bool(r, "insn-emulation-agrees", st->insn_emulation == ran);
	else
		vr_rec_null(r, "insn-emulation-agrees");
	rec_u64_if(r, "user-unseen-exits", exact, st->user_unseen);
	vr_rec_str(r, "error", error);
	vr_rec_end(r);
}

/* A counter the guest used, as the table's row (and its lines after it) say. */
static void
counter_record(struct vr_rec *r, unsigned cpu, const struct vpmu_counter_info *ci,
    const char *source)
{
	const char *why = NULL;
	uint32_t ev = ci->event[0] ? vpmu_event_lookup(ci->event) : 0;

	if (ci->unsupported)
		why = ci->why[0] ? ci->why : "the source cannot count it";
	else if (ci->why[0])
		why = ci->why;
	vr_rec_begin(r, "counter");
	vr_rec_u64(r, "vcpu", cpu);
	vr_rec_str(r, "counter", ci->name);
	vr_rec_str(r, "event", ci->event[0] ? ci->event : NULL);
	vr_rec_u64(r, "counter-value", ci->value);
	vr_rec_str(r, "unit", ev != 0 && vpmu_event_is_timed(ev) ? "ns" : "");
	vr_rec_u64(r, "enabled-ns", ci->time_enabled);
	vr_rec_u64(r, "running-ns", ci->time_running);
	vr_rec_pct(r, "pcnt-running", ci->time_running, ci->time_enabled);
	vr_rec_str(r, "source", ci->unsupported ? "none" : source);
	vr_rec_bool(r, "scaled", ci->scaled);
	rec_u64_if(r, "raw-value", ci->scaled, ci->raw);
	vr_rec_str(r, "not-counted", why);
	vr_rec_end(r);
}

/* The report of report(), record by record (vpmu-run(1), THE REPORT AS RECORDS). */
static void
report_records(struct vr_rec *r, struct vr_vm *vm, const struct vr_runopts *o,
    const char *model, const char *source)
{
	struct vpmu_counter_info *ci;
	struct vpmu_kvm_stats st;
	unsigned cpu, i, n;
	bool exact = strcmp(source, "exact") == 0;
	char err[128];
	int e;

	run_record(r, vm, o, model, source);
	if (exact && user_unseen(vm))
		warning_record(r, -1, NULL, USER_UNSEEN_WARNING);
	if (exact && guest_tf(vm))
		warning_record(r, -1, NULL, GUEST_TF_WARNING);
	if ((ci = calloc(VR_MAX_COUNTERS, sizeof(*ci))) == NULL) {
		fprintf(stderr, "vpmu-run: the report: %s\n", strerror(ENOMEM));
		return;
	}
	for (cpu = 0; cpu < vm->nvcpus; cpu++) {
		if (vpmu_kvm_get_stats(vm->k, cpu, &st) != 0)
			memset(&st, 0, sizeof(st));
		n = VR_MAX_COUNTERS;
		if ((e = vpmu_vcpu_get_counters(vm->pmu, cpu, ci, &n)) != 0) {
			snprintf(err, sizeof(err), "vpmu_vcpu_get_counters: %s",
			    vpmu_strerror(e));
			n = 0;
		}
		vcpu_record(r, vm, cpu, &st, exact, e != 0 ? err : NULL);
		if (exact)
			vr_steps_records(r, st.exact_step_why, (int)cpu);
		for (i = 0; i < n; i++)
			if (ci[i].used)
				counter_record(r, cpu, &ci[i], source);
		for (i = 0; exact && st.user_unseen != 0 && i < n; i++)
			if (ci[i].used && !ci[i].unsupported && counts_user(&ci[i]))
				warning_record(r, (int)cpu, ci[i].name,
				    "counts user mode: not exact");
	}
	free(ci);
	vr_marks_records(r, vm);
}

/* ---- the report's file, and what standard error says -------------------------- */

int
vr_report_open(const struct vr_runopts *o, FILE **rep)
{
	*rep = NULL;
	if (o->report != NULL && strcmp(o->report, "-") == 0)
		*rep = stdout;
	else if (o->report != NULL && (*rep = fopen(o->report, "w")) == NULL) {
		fprintf(stderr, "vpmu-run: --report %s: %s\n", o->report, strerror(errno));
		return (VR_EXIT_USAGE);
	}
	return (0);
}

void
vr_report(FILE *rep, struct vr_vm *vm, const struct vr_setup *s)
{
	const struct vr_runopts *o = s->o;
	bool exact = s->src == &vpmu_source_exact;

	if (!o->quiet && o->report_fmt == VR_FMT_TEXT)
		report(rep != NULL ? rep : stderr, vm, o, s->modelstr, s->src->name);
	else if (!o->quiet) {
		struct vr_rec r = { .f = rep != NULL ? rep : stderr, .fmt = o->report_fmt,
		    .sep = o->report_sep };

		report_records(&r, vm, o, s->modelstr, s->src->name);
	}
	/* Stopped from outside: said on standard error, in the report or not. */
	if (o->quiet || rep != NULL) {
		if (vm->end == VR_END_TIMEOUT || vm->end == VR_END_SIGNAL)
			report_end(stderr, vm, o);
		/* Once, on standard error, unless the report just said it there. */
		if (exact && user_unseen(vm))
			fprintf(stderr, "vpmu-run: %s\n", USER_UNSEEN_WARNING);
		if (exact && guest_tf(vm))
			fprintf(stderr, "vpmu-run: %s\n", GUEST_TF_WARNING);
	}
}

int
vr_report_close(FILE *rep, const struct vr_runopts *o, int status)
{
	bool bad;

	if (rep == NULL)
		return (status);
	errno = 0;
	bad = fflush(rep) != 0 || ferror(rep);
	if (rep != stdout)
		bad |= fclose(rep) != 0;
	if (bad) {
		fprintf(stderr, "vpmu-run: --report %s: %s\n", o->report,
		    errno != 0 ? strerror(errno) : "a write failed");
		if (status == 0)
			status = VR_EXIT_HOST;
	}
	return (status);
}
