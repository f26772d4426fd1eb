/*
 * vpmu-demo -- libvpmu on one screen, with numbers a reader checks by hand.
 *
 * A two-vCPU VM on the synthetic source (each vCPU has a clock and a rate
 * per event, so counts are exact), four counting PMCs as a FreeBSD guest's
 * pmcstat(8) would allocate them, and a short script of context switches.
 * The demo computes every expected count from the script alone, never from
 * the library, and compares: any difference ends it with status 1.
 * `make demo` runs it.
 */
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <vpmu/vpmu.h>

#define NVCPUS		2
#define NS_PER_MS	1000000ull
#define NELEM(a)	(sizeof(a) / sizeof((a)[0]))

/*
 * Who asks.  pid 50 is the guest's pmcstat running as root: it owns the
 * system PMCs and the PMC that follows pid 100's tree.  pid 200 is an
 * ordinary user measuring itself, as `pmcstat -p` without root can.
 */
static const struct vpmu_cred root50 = { .pid = 50, .tid = 50, .privileged = 1 };
static const struct vpmu_cred user100 = { .pid = 100, .tid = 100, .uid = 1001 };
static const struct vpmu_cred user200 = { .pid = 200, .tid = 200, .uid = 1001 };

/* Events per millisecond of each vCPU's clock, by vCPU and event code. */
static const uint64_t rate[NVCPUS][VPMU_EV_BRANCHES + 1] = {
	[0] = { [VPMU_EV_INSTRUCTIONS] = 1000, [VPMU_EV_BRANCHES] = 200 },
	[1] = { [VPMU_EV_INSTRUCTIONS] = 3000, [VPMU_EV_BRANCHES] = 500 },
};

/* The PMCs as the demo describes them; the library fills in id. */
static struct demo_pmc {
	const char *who;		/* what it measures, for the table */
	const struct vpmu_cred *owner;
	uint32_t mode, cls, event, cpu, flags;
	int32_t	 target;		/* process scope: the pid attached */
	vpmu_pmc_id id;
	uint64_t ms[NVCPUS];		/* expected: ms it counted on each vCPU */
} pmcs[] = {
	{ "vCPU 0, anything", &root50, VPMU_MODE_SC, VPMU_CLASS_IAP,
	    VPMU_EV_INSTRUCTIONS, 0, 0, 0, 0, { 0 } },
	{ "vCPU 1, anything", &root50, VPMU_MODE_SC, VPMU_CLASS_IAP,
	    VPMU_EV_INSTRUCTIONS, 1, 0, 0, 0, { 0 } },
	{ "pid 100 + children", &root50, VPMU_MODE_TC, VPMU_CLASS_PV,
	    VPMU_EV_INSTRUCTIONS, VPMU_CPU_ANY, VPMU_F_DESCENDANTS, 100, 0, { 0 } },
	{ "pid 200 (itself)", &user200, VPMU_MODE_TC, VPMU_CLASS_IAP,
	    VPMU_EV_BRANCHES, VPMU_CPU_ANY, 0, 200, 0, { 0 } },
};

/* The script.  Steps run one at a time, so each delta has one owner. */
enum { RUN, IDLE, FORK, EXIT };
static const struct step {
	int	 kind;
	unsigned cpu;
	int32_t	 pid, child;
	unsigned ms;
	int	 show;			/* list vCPU 0's rows during this step */
} script[] = {
	{ RUN,  0, 100, 0,   4, 0 },
	{ RUN,  1, 200, 0,   3, 0 },
	{ FORK, 0, 100, 101, 0, 0 },
	{ RUN,  1, 101, 0,   2, 0 },
	{ RUN,  0, 200, 0,   5, 1 },
	{ RUN,  0, 101, 0,   1, 0 },
	{ EXIT, 0, 101, 0,   0, 0 },
	{ RUN,  1, 100, 0,   2, 0 },
	{ IDLE, 0, 0,   0,   2, 0 },
};

/*
 * Per-process totals: hwpmc keeps one per (process PMC, target) and logs
 * it at exit (PROCEXIT).  libvpmu has no log yet, so the demo measures the
 * PMC's delta across each run of the process.
 */
static struct ledger {
	unsigned pmc;			/* index in pmcs[] */
	int32_t	 pid;
	uint64_t ms[NVCPUS];		/* expected, from the script */
	uint64_t measured;		/* from vpmu_pmc_get_count() */
} ledger[] = {
	{ 2, 100, { 0 }, 0 }, { 2, 101, { 0 }, 0 }, { 3, 200, { 0 }, 0 },
};

static void
must(int error, const char *what)
{
	if (error != 0) {
		fprintf(stderr, "vpmu-demo: %s: %s (%s)\n", what,
		    vpmu_errname(error), vpmu_strerror(error));
		exit(1);
	}
}

/* pmc_name_of_class(3) for the classes a libvpmu VM can have. */
static const char *
class_name(uint32_t cls)
{
	switch (cls) {
	case VPMU_CLASS_TSC:	return ("TSC");
	case VPMU_CLASS_K8:	return ("K8");
	case VPMU_CLASS_IAF:	return ("IAF");
	case VPMU_CLASS_IAP:	return ("IAP");
	case VPMU_CLASS_PV:	return ("PV");
	default:		return ("?");
	}
}

/*
 * Does process PMC p follow pid?  Its target does; with DESCENDANTS so
 * does anything the script forks from a followed process.
 */
static int
follows(const struct demo_pmc *p, int32_t pid)
{
	size_t k;

	while (pid != p->target) {
		if (!(p->flags & VPMU_F_DESCENDANTS))
			return (0);
		for (k = 0; k < NELEM(script); k++)
			if (script[k].kind == FORK && script[k].child == pid)
				break;
		if (k == NELEM(script))
			return (0);
		pid = script[k].pid;
	}
	return (1);
}

/* "= 1000/ms x 4 ms + 3000/ms x 2 ms" into buf; returns the expected count. */
static uint64_t
hand(const uint64_t ms[NVCPUS], uint32_t event, char *buf, size_t len)
{
	uint64_t sum = 0;
	size_t used = 0;
	unsigned c;

	snprintf(buf, len, "= 0");
	for (c = 0; c < NVCPUS; c++) {
		if (ms[c] == 0)
			continue;
		sum += rate[c][event] * ms[c];
		used += (size_t)snprintf(buf + used, len - used, "%s%" PRIu64
		    "/ms x %" PRIu64 " ms", used ? " + " : "= ", rate[c][event], ms[c]);
	}
	return (sum);
}

/* GETPMCINFO for one vCPU, printed as `pmccontrol -l` does. */
static void
list_rows(vpmu_vm *vm, unsigned cpu)
{
	static const char *const disp[] = { "STANDALONE", "FREE", "THREAD" };
	struct vpmu_pmc_info pi[16];
	uint32_t n = NELEM(pi), r;

	must(vpmu_vm_get_pmcinfo(vm, &root50, cpu, pi, &n), "GETPMCINFO");
	printf("\n    #CPU %u (GETPMCINFO, as pmccontrol -l prints it):\n", cpu);
	for (r = 0; r < n; r++) {
		printf("     %-2u %-16s %-6s %-8s %-10s", r, pi[r].name,
		    class_name(pi[r].cls), pi[r].enabled ? "ENABLED" : "DISABLED",
		    pi[r].rowdisp < NELEM(disp) ? disp[pi[r].rowdisp] : "?");
		if (pi[r].ownerpid != -1)
			printf(" (pid %d) %s", pi[r].ownerpid, vpmu_event_name(pi[r].event));
		printf("\n");
	}
	printf("\n");
}

/* Every PMC's count now, from the host view (no permission check). */
static void
snapshot(vpmu_vm *vm, uint64_t now[NELEM(pmcs)])
{
	struct vpmu_count c;
	size_t i;

	for (i = 0; i < NELEM(pmcs); i++) {
		must(vpmu_pmc_get_count(vm, pmcs[i].owner->pid, pmcs[i].id, &c),
		    "vpmu_pmc_get_count");
		now[i] = c.value;
	}
}

static void
run_script(vpmu_vm *vm)
{
	uint64_t clock[NVCPUS] = { 0 }, before[NELEM(pmcs)], after[NELEM(pmcs)];
	const struct step *s;
	struct ledger *l;
	size_t i, k;

	for (k = 0; k < NELEM(script); k++) {
		s = &script[k];
		printf("  t=%2" PRIu64 "ms vCPU%u: ", clock[s->cpu], s->cpu);
		if (s->kind == FORK) {
			/* hwpmc's fork hook: the child inherits DESCENDANTS PMCs. */
			printf("pid %d forks pid %d\n", s->pid, s->child);
			must(vpmu_proc_fork(vm, s->pid, s->child), "vpmu_proc_fork");
			continue;
		}
		if (s->kind == EXIT) {
			must(vpmu_proc_exit(vm, s->pid), "vpmu_proc_exit");
			printf("pid %d exits", s->pid);
			for (l = ledger; l < ledger + NELEM(ledger); l++)
				if (l->pid == s->pid)
					printf("; PROCEXIT pmc 0x%08" PRIx32 " value %" PRIu64,
					    pmcs[l->pmc].id, l->measured);
			printf("\n");
			continue;
		}
		if (s->kind == IDLE)
			printf("idle %u ms (no process: only the system PMC counts)\n", s->ms);
		else
			printf("pid %d runs %u ms\n", s->pid, s->ms);

		snapshot(vm, before);
		if (s->kind == RUN)
			must(vpmu_proc_switch_in(vm, s->cpu, s->pid, s->pid), "switch_in");
		if (s->show)
			list_rows(vm, 0);
		must(vpmu_synthetic_advance(vm, s->cpu, s->ms * NS_PER_MS), "advance");
		if (s->kind == RUN)
			must(vpmu_proc_switch_out(vm, s->cpu), "switch_out");
		snapshot(vm, after);
		clock[s->cpu] += s->ms;

		/* Expected, from the script alone: who counts during this step. */
		for (i = 0; i < NELEM(pmcs); i++)
			if (VPMU_MODE_IS_SYSTEM(pmcs[i].mode) ? pmcs[i].cpu == s->cpu :
			    s->kind == RUN && follows(&pmcs[i], s->pid))
				pmcs[i].ms[s->cpu] += s->ms;
		/* Measured: a process PMC's delta belongs to the one that ran. */
		for (l = ledger; l < ledger + NELEM(ledger); l++) {
			if (s->kind != RUN || l->pid != s->pid)
				continue;
			l->measured += after[l->pmc] - before[l->pmc];
			if (follows(&pmcs[l->pmc], s->pid))
				l->ms[s->cpu] += s->ms;
		}
	}
}

/* One line about the host.  The demo itself needs no PMU. */
static void
print_host(void)
{
	const struct vpmu_host_info *hi;
	vpmu_host *host;

	must(vpmu_host_open(&host), "vpmu_host_open");
	hi = vpmu_host_get_info(host);
	if (!hi->cpu.cpuid_ok)
		printf("host: CPUID unreadable (%s)", hi->cpu.cpuid_error);
	else
		printf("host: %s family %u model %u \"%s\"%s%s", hi->cpu.vendor,
		    hi->cpu.family, hi->cpu.model, hi->cpu.brand,
		    hi->cpu.hypervisor ? " under " : "", hi->cpu.hv_signature);
	/*
	 * CPUID describes counters a hypervisor need not implement; whether
	 * perf can open a hardware event is the answer that counts.
	 */
	printf("; hardware PMU: %s", hi->perf.hw_instructions_errno == 0 ? "yes" : "no");
	if (hi->intel.version > 0)
		printf(" (CPUID: Intel arch v%u, %u GP x %u bits, %u fixed)",
		    hi->intel.version, hi->intel.gp_count, hi->intel.gp_width,
		    hi->intel.fixed_count);
	else if (hi->amd.gp_count > 0)
		printf(" (CPUID describes %u AMD counters)", hi->amd.gp_count);
	if (hi->perf.hw_instructions_errno != 0)
		printf(", perf hardware events: %s", strerror(hi->perf.hw_instructions_errno));
	printf("\n");
	vpmu_host_close(host);
}

/*
 * The demo takes no arguments but --help and --version: anything else is a
 * usage error (status 2).  -1 to run the demo, else the status to exit with.
 */
static int
options(int argc, char **argv)
{
	if (argc == 2 && (strcmp(argv[1], "--help") == 0 || strcmp(argv[1], "-h") == 0)) {
		printf("usage: vpmu-demo\n"
		    "       vpmu-demo --help | --version\n"
		    "libvpmu on one screen: a two-vCPU VM on the synthetic source, four\n"
		    "counting PMCs and a script of context switches; every count is checked\n"
		    "against a hand computation (status 1 if any differs)\n");
		return (fflush(stdout) != 0 || ferror(stdout) ? 1 : 0);
	}
	if (argc == 2 && strcmp(argv[1], "--version") == 0) {
		printf("vpmu-demo (libvpmu %s)\n", vpmu_version());
		return (fflush(stdout) != 0 || ferror(stdout) ? 1 : 0);
	}
	if (argc > 1) {
		if (argv[1][0] == '-' && argv[1][1] != '\0')
			fprintf(stderr, "vpmu-demo: unknown option %s\n", argv[1]);
		else
			fprintf(stderr, "vpmu-demo: unexpected argument \"%s\": the demo "
			    "takes none\n", argv[1]);
		fprintf(stderr, "Try 'vpmu-demo --help' for more information.\n");
		return (2);
	}
	return (-1);
}

int
main(int argc, char **argv)
{
	struct vpmu_pmc_info pi[16];	/* row names, from GETPMCINFO */
	struct vpmu_pmc_alloc req;
	const struct demo_pmc *p;
	const struct ledger *l;
	vpmu_config *cfg;
	vpmu_vm *vm;
	uint64_t value, expect;
	unsigned checks = 0, bad = 0;
	uint32_t npi = NELEM(pi), ev;
	unsigned c;
	char buf[128];
	size_t i;
	int error;

	if ((error = options(argc, argv)) >= 0)
		return (error);

	printf("vpmu-demo: libvpmu %s, hwpmc ABI %#x\n", vpmu_version(), VPMU_PMC_VERSION);
	print_host();

	/* 2 vCPUs; default classes (IAP x4, IAF x3) and a short PV class. */
	must(vpmu_config_create(&cfg), "vpmu_config_create");
	must(vpmu_config_set_vcpus(cfg, NVCPUS), "vpmu_config_set_vcpus");
	must(vpmu_config_set_class(cfg, VPMU_CLASS_PV, 2, 64), "vpmu_config_set_class");
	must(vpmu_vm_create(cfg, &vm), "vpmu_vm_create");
	vpmu_config_destroy(cfg);
	printf("VM: %u vCPUs on the synthetic source\n", vpmu_vm_get_nvcpus(vm));
	for (c = 0; c < NVCPUS; c++) {
		for (ev = VPMU_EV_INSTRUCTIONS; ev < NELEM(rate[c]); ev++)
			must(vpmu_synthetic_set_rate(vm, c, ev, rate[c][ev]), "set_rate");
		printf("  vCPU%u runs %" PRIu64 " instructions and %" PRIu64
		    " branches per ms\n", c, rate[c][VPMU_EV_INSTRUCTIONS],
		    rate[c][VPMU_EV_BRANCHES]);
	}
	must(vpmu_proc_create(vm, &root50, 0), "vpmu_proc_create");
	must(vpmu_proc_create(vm, &user100, 0), "vpmu_proc_create");
	must(vpmu_proc_create(vm, &user200, 0), "vpmu_proc_create");

	/* hwpmc refuses system scope to an unprivileged caller (pmc_allocate.3). */
	req = (struct vpmu_pmc_alloc){ .cpu = 0, .cls = VPMU_CLASS_IAP,
	    .event = VPMU_EV_INSTRUCTIONS, .mode = VPMU_MODE_SC };
	error = vpmu_pmc_allocate(vm, &user200, &req);
	printf("\npid 200 (uid 1001) allocates a system-scope PMC on vCPU 0: %s (%s)\n",
	    vpmu_errname(error), vpmu_strerror(error));
	if (error != EPERM) {
		fprintf(stderr, "vpmu-demo: expected EPERM, got %s\n", vpmu_errname(error));
		return (1);
	}

	/* Allocate, attach (process scope), start: pmcstat's order. */
	for (i = 0; i < NELEM(pmcs); i++) {
		struct demo_pmc *d = &pmcs[i];

		req = (struct vpmu_pmc_alloc){ .cpu = d->cpu, .cls = d->cls,
		    .event = d->event, .flags = d->flags, .mode = d->mode };
		must(vpmu_pmc_allocate(vm, d->owner, &req), "PMCALLOCATE");
		d->id = req.pmcid;
		if (VPMU_MODE_IS_VIRTUAL(d->mode))
			must(vpmu_pmc_attach(vm, d->owner, d->id, d->target), "PMCATTACH");
		must(vpmu_pmc_start(vm, d->owner, d->id), "PMCSTART");
	}

	printf("\nScript (each vCPU has its own clock; one step at a time):\n");
	run_script(vm);

	/* Every PMC, read as its owner reads it (PMCRW). */
	must(vpmu_vm_get_pmcinfo(vm, &root50, 0, pi, &npi), "GETPMCINFO");
	printf("\n%-10s  %-4s %-6s %-19s %-12s %6s  %s\n", "PMC", "mode", "row",
	    "measures", "event", "value", "hand computation");
	for (p = pmcs; p < pmcs + NELEM(pmcs); p++) {
		must(vpmu_pmc_read(vm, p->owner, p->id, &value), "PMCRW");
		expect = hand(p->ms, p->event, buf, sizeof(buf));
		printf("0x%08" PRIx32 "  %-4s %-6s %-19s %-12s %6" PRIu64 "  %s%s\n",
		    p->id, VPMU_MODE_IS_SYSTEM(p->mode) ? "SC" : "TC",
		    pi[VPMU_ID_TO_ROW(p->id)].name, p->who, vpmu_event_name(p->event),
		    value, buf, value == expect ? "" : "   <-- MISMATCH");
		checks++;
		bad += value != expect;
	}

	printf("\nPer-process totals (what hwpmc's PROCEXIT would log):\n");
	for (l = ledger; l < ledger + NELEM(ledger); l++) {
		p = &pmcs[l->pmc];
		expect = hand(l->ms, p->event, buf, sizeof(buf));
		printf("  pid %-4d 0x%08" PRIx32 " %-12s %6" PRIu64 "  %s%s\n", l->pid,
		    p->id, vpmu_event_name(p->event), l->measured, buf,
		    l->measured == expect ? "" : "   <-- MISMATCH");
		checks++;
		bad += l->measured != expect;
	}

	vpmu_vm_destroy(vm);
	if (bad != 0) {
		fprintf(stderr, "\nvpmu-demo: %u of %u counts differ from the hand "
		    "computation\n", bad, checks);
		return (1);
	}
	printf("\nall %u counts match the hand computation\n", checks);
	return (0);
}
