/*
 * test_core.c -- the core's behaviour on the synthetic source: row
 * dispositions, tunables and their diagnostics, exact counting in every
 * scope across context switches, forks and exits, notifications,
 * statistics, configuration errors.
 */
#include "fixture.h"

#define MS	1000000ull		/* ns */

/* ---- helpers ------------------------------------------------------------ */

/* exec point hooks that know no point (config checks only) */
static int
point_get(void *st, unsigned cpu, struct vpmu_regs *r)
{
	(void)st, (void)cpu, (void)r;
	return (ENOENT);
}

static int
point_set(void *st, unsigned cpu, const struct vpmu_regs *r)
{
	(void)st, (void)cpu, (void)r;
	return (0);
}

static void
pmcinfo(struct fx *f, uint32_t cpu, struct vpmu_pmc_info *pi)
{
	uint32_t n = NPMC;

	assert_int_equal(vpmu_vm_get_pmcinfo(f->vm, &ROOT, cpu, pi, &n), 0);
	assert_int_equal(n, NPMC);
}

static uint32_t
disp(struct fx *f, uint32_t cpu, unsigned row)
{
	struct vpmu_pmc_info pi[NPMC];

	pmcinfo(f, cpu, pi);
	return (pi[row].rowdisp);
}

static void
rates(struct fx *f, unsigned cpu, uint64_t instr, uint64_t branches)
{
	assert_int_equal(vpmu_synthetic_set_rate(f->vm, cpu, VPMU_EV_INSTRUCTIONS, instr), 0);
	assert_int_equal(vpmu_synthetic_set_rate(f->vm, cpu, VPMU_EV_BRANCHES, branches), 0);
}

/* Run pid on cpu for ms milliseconds of virtual time. */
static void
run(struct fx *f, unsigned cpu, int32_t pid, uint64_t ms)
{
	assert_int_equal(vpmu_proc_switch_in(f->vm, cpu, pid, pid), 0);
	assert_int_equal(vpmu_synthetic_advance(f->vm, cpu, ms * MS), 0);
	assert_int_equal(vpmu_proc_switch_out(f->vm, cpu), 0);
}

/* ---- row dispositions ------------------------------------------------------ */

static void
disp_all_rows_free_at_start(void **state)
{
	struct fx *f = *state;
	struct vpmu_pmc_info pi[NPMC];
	unsigned r;

	pmcinfo(f, 0, pi);
	for (r = 0; r < NPMC; r++) {
		assert_int_equal(pi[r].rowdisp, VPMU_DISP_FREE);
		assert_int_equal(pi[r].enabled, 1);
		assert_int_equal(pi[r].ownerpid, -1);
	}
	assert_string_equal(pi[0].name, "IAP-0");
	assert_string_equal(pi[ROW_IAF0 + 2].name, "IAF-2");
	assert_string_equal(pi[ROW_PV0 + 15].name, "PV-15");
	assert_int_equal(pi[ROW_PV0].cls, VPMU_CLASS_PV);
}

static void
disp_free_to_thread_and_back(void **state)
{
	struct fx *f = *state;
	vpmu_pmc_id a = TC_PV(f, &USER, VPMU_EV_INSTRUCTIONS, 0);
	vpmu_pmc_id b = TC_PV(f, &ROOT, VPMU_EV_INSTRUCTIONS, 0);

	/* Two owners' process PMCs share the row; it stays THREAD until both go. */
	assert_int_equal(VPMU_ID_TO_ROW(a), ROW_PV0);
	assert_int_equal(VPMU_ID_TO_ROW(b), ROW_PV0);
	assert_int_equal(disp(f, 0, ROW_PV0), VPMU_DISP_THREAD);
	assert_int_equal(disp(f, 1, ROW_PV0), VPMU_DISP_THREAD);
	assert_int_equal(vpmu_pmc_release(f->vm, &USER, a), 0);
	assert_int_equal(disp(f, 0, ROW_PV0), VPMU_DISP_THREAD);
	assert_int_equal(vpmu_pmc_release(f->vm, &ROOT, b), 0);
	assert_int_equal(disp(f, 0, ROW_PV0), VPMU_DISP_FREE);
}

static void
disp_free_to_standalone_and_back(void **state)
{
	struct fx *f = *state;
	vpmu_pmc_id s0 = SC_PV(f, &ROOT, 0, VPMU_EV_INSTRUCTIONS);
	vpmu_pmc_id s1 = SC_PV(f, &ROOT, 1, VPMU_EV_INSTRUCTIONS);
	vpmu_pmc_id t;

	/* One row, one system PMC per vCPU. */
	assert_int_equal(VPMU_ID_TO_ROW(s0), ROW_PV0);
	assert_int_equal(VPMU_ID_TO_ROW(s1), ROW_PV0);
	assert_int_equal(VPMU_ID_TO_CPU(s1), 1);
	assert_int_equal(disp(f, 0, ROW_PV0), VPMU_DISP_STANDALONE);
	/* A process PMC may not use a STANDALONE row. */
	t = TC_PV(f, &USER, VPMU_EV_INSTRUCTIONS, 0);
	assert_int_equal(VPMU_ID_TO_ROW(t), ROW_PV0 + 1);
	assert_int_equal(vpmu_pmc_release(f->vm, &ROOT, s0), 0);
	assert_int_equal(disp(f, 0, ROW_PV0), VPMU_DISP_STANDALONE);
	assert_int_equal(vpmu_pmc_release(f->vm, &ROOT, s1), 0);
	assert_int_equal(disp(f, 0, ROW_PV0), VPMU_DISP_FREE);
}

static void
disp_thread_row_refuses_system_pmc(void **state)
{
	struct fx *f = *state;
	vpmu_pmc_id t = TC_PV(f, &USER, VPMU_EV_INSTRUCTIONS, 0);
	vpmu_pmc_id s = SC_PV(f, &ROOT, 0, VPMU_EV_INSTRUCTIONS);

	assert_int_equal(VPMU_ID_TO_ROW(t), ROW_PV0);
	assert_int_equal(VPMU_ID_TO_ROW(s), ROW_PV0 + 1);
	assert_int_equal(disp(f, 1, ROW_PV0), VPMU_DISP_THREAD);
	assert_int_equal(disp(f, 1, ROW_PV0 + 1), VPMU_DISP_STANDALONE);
}

static void
disp_admin_disable_and_enable(void **state)
{
	struct fx *f = *state;
	struct vpmu_pmc_info pi[NPMC];
	vpmu_pmc_id t, s0, s1;

	assert_int_equal(vpmu_pmc_admin(f->vm, &ROOT, 0, ROW_PV0, VPMU_ADMIN_DISABLE), 0);
	/* Disabling twice is a no-op, not a second mark. */
	assert_int_equal(vpmu_pmc_admin(f->vm, &ROOT, 0, ROW_PV0, VPMU_ADMIN_DISABLE), 0);
	pmcinfo(f, 0, pi);
	assert_int_equal(pi[ROW_PV0].enabled, 0);
	assert_int_equal(pi[ROW_PV0].rowdisp, VPMU_DISP_STANDALONE);
	pmcinfo(f, 1, pi);
	assert_int_equal(pi[ROW_PV0].enabled, 1);
	/* Process PMCs avoid the row; system PMCs avoid the disabled slot only. */
	t = TC_PV(f, &USER, VPMU_EV_INSTRUCTIONS, 0);
	assert_int_equal(VPMU_ID_TO_ROW(t), ROW_PV0 + 1);
	s0 = SC_PV(f, &ROOT, 0, VPMU_EV_INSTRUCTIONS);
	assert_int_equal(VPMU_ID_TO_ROW(s0), ROW_PV0 + 2);
	s1 = SC_PV(f, &ROOT, 1, VPMU_EV_INSTRUCTIONS);
	assert_int_equal(VPMU_ID_TO_ROW(s1), ROW_PV0);
	/* Enabling: still STANDALONE while s1 holds the row on vCPU 1. */
	assert_int_equal(vpmu_pmc_admin(f->vm, &ROOT, 0, ROW_PV0, VPMU_ADMIN_ENABLE), 0);
	assert_int_equal(disp(f, 0, ROW_PV0), VPMU_DISP_STANDALONE);
	assert_int_equal(vpmu_pmc_release(f->vm, &ROOT, s1), 0);
	assert_int_equal(disp(f, 0, ROW_PV0), VPMU_DISP_FREE);
}

static void
getpmcinfo_shows_owner_where_loaded(void **state)
{
	struct fx *f = *state;
	struct vpmu_pmc_info pi[NPMC];
	vpmu_pmc_id s = fx_alloc(f, &ROOT, VPMU_MODE_SS, 0, VPMU_CLASS_PV,
	    VPMU_EV_INSTRUCTIONS, 0);
	vpmu_pmc_id t = TC_PV(f, &USER, VPMU_EV_BRANCHES, 0);
	uint32_t n = 3;

	pmcinfo(f, 0, pi);
	assert_int_equal(pi[VPMU_ID_TO_ROW(s)].ownerpid, ROOT.pid);
	assert_int_equal(pi[VPMU_ID_TO_ROW(s)].mode, VPMU_MODE_SS);
	assert_int_equal(pi[VPMU_ID_TO_ROW(s)].reloadcount, 1000);	/* mincount */
	pmcinfo(f, 1, pi);
	assert_int_equal(pi[VPMU_ID_TO_ROW(s)].ownerpid, -1);
	/* A process PMC shows where its target runs, while it runs. */
	assert_int_equal(vpmu_pmc_start(f->vm, &USER, t), 0);
	assert_int_equal(vpmu_proc_switch_in(f->vm, 1, USER.pid, 1), 0);
	pmcinfo(f, 1, pi);
	assert_int_equal(pi[VPMU_ID_TO_ROW(t)].ownerpid, USER.pid);
	assert_int_equal(pi[VPMU_ID_TO_ROW(t)].event, VPMU_EV_BRANCHES);
	assert_int_equal(vpmu_proc_switch_out(f->vm, 1), 0);
	pmcinfo(f, 1, pi);
	assert_int_equal(pi[VPMU_ID_TO_ROW(t)].ownerpid, -1);
	/* Too small an array: EINVAL and the size it takes. */
	assert_int_equal(vpmu_vm_get_pmcinfo(f->vm, &ROOT, 0, pi, &n), EINVAL);
	assert_int_equal(n, NPMC);
}

/* ---- tunables ---------------------------------------------------------------- */

static void
tunable_defaults(void **state)
{
	static const struct { const char *name; long v; } d[] = {
		{ "callchaindepth", 8 }, { "kern.hwpmc.hashsize", 16 },
		{ "logbuffersize", 256 }, { "mincount", 1000 },
		{ "mtxpoolsize", 32 }, { "nbuffers_pcpu", 32 },
		{ "kern.hwpmc.nsamples", 512 },
		{ "security.bsd.unprivileged_syspmcs", 0 },
		{ "unprivileged_proc_debug", 1 },
	};
	struct fx *f = *state;
	size_t i;
	long v;

	for (i = 0; i < sizeof(d) / sizeof(d[0]); i++) {
		assert_int_equal(vpmu_vm_get_tunable(f->vm, d[i].name, &v), 0);
		assert_int_equal(v, d[i].v);
	}
	assert_int_equal(f->ndiag, 0);
	assert_int_equal(vpmu_vm_get_tunable(f->vm, "bogus", &v), EINVAL);
	/* Read-only on a live VM, like the read-only sysctls. */
	assert_int_equal(vpmu_vm_set_tunable(f->vm, "nsamples", 64), EPERM);
	assert_int_equal(vpmu_vm_set_tunable(f->vm, "mincount", 10), 0);
	assert_int_equal(vpmu_vm_get_tunable(f->vm, "mincount", &v), 0);
	assert_int_equal(v, 10);
}

/*
 * vpmu_tunable_get_info() lists the nine tunables of vpmu(3) in order,
 * with the defaults a new VM has and the names both set calls take; only
 * mincount and the two security.bsd policies are live.
 */
static void
tunable_list(void **state)
{
	static const char *const names[] = { "callchaindepth", "hashsize",
	    "logbuffersize", "mincount", "mtxpoolsize", "nbuffers_pcpu", "nsamples",
	    "unprivileged_syspmcs", "unprivileged_proc_debug" };
	struct vpmu_tunable_info ti;
	struct fx *f = *state;
	unsigned i, live = 0;
	long v;

	for (i = 0; vpmu_tunable_get_info(i, &ti) == 0; i++) {
		assert_true(i < sizeof(names) / sizeof(names[0]));
		assert_string_equal(ti.name, names[i]);
		assert_non_null(strstr(ti.sysctl, ti.name));
		assert_int_equal(vpmu_vm_get_tunable(f->vm, ti.name, &v), 0);
		assert_int_equal(v, ti.def);
		assert_int_equal(vpmu_vm_get_tunable(f->vm, ti.sysctl, &v), 0);
		assert_int_equal(v, ti.def);
		assert_int_equal(vpmu_vm_set_tunable(f->vm, ti.name, ti.def),
		    ti.live ? 0 : EPERM);
		live += ti.live != 0;
	}
	assert_int_equal(i, 9);
	assert_int_equal(live, 3);
	assert_int_equal(vpmu_tunable_get_info(9, &ti), ENOENT);
	assert_int_equal(vpmu_tunable_get_info(~0u, &ti), ENOENT);
	assert_int_equal(vpmu_tunable_get_info(0, NULL), EINVAL);
}

struct diag_case {
	const char *name;
	long value;
	const char *name2;		/* a second tunable, or NULL */
	long value2;
	const char *msg;		/* expected diagnostic, NULL = none */
	const char *check;		/* tunable to read back */
	long expect;
};

static const struct diag_case diag_cases[] = {
	{ "hashsize", -1, NULL, 0,
	  "hwpmc: tunable hashsize=-1 must be greater than zero.", "hashsize", 16 },
	/* Tunables are ints: 2^32 is 0 to the driver. */
	{ "hashsize", 4294967296L, NULL, 0,
	  "hwpmc: tunable hashsize=0 must be greater than zero.", "hashsize", 16 },
	{ "nbuffers_pcpu", 4294967297L, NULL, 0, NULL, "nbuffers_pcpu", 1 },
	{ "nsamples", 0, NULL, 0,
	  "hwpmc: tunable nsamples=0 out of range.", "nsamples", 512 },
	{ "nsamples", 65536, NULL, 0,
	  "hwpmc: tunable nsamples=65536 out of range.", "nsamples", 512 },
	{ "nsamples", 65535, NULL, 0, NULL, "nsamples", 65535 },
	{ "nsamples", 1, NULL, 0, NULL, "nsamples", 1 },
	{ "callchaindepth", 0, NULL, 0,
	  "hwpmc: tunable \"callchaindepth\"=0 out of range.", "callchaindepth", 8 },
	{ "mtxpoolsize", -3, NULL, 0,
	  "hwpmc: tunable mtxpoolsize=-3 must be greater than zero.", "mtxpoolsize", 32 },
	{ "logbuffersize", -5, NULL, 0,
	  "hwpmc: logbuffersize=-5 must be greater than zero and less than or "
	  "equal to 16384, resetting to 256.", "logbuffersize", 256 },
	{ "logbuffersize", 16385, "nbuffers_pcpu", 1,
	  "hwpmc: logbuffersize=16385 must be greater than zero and less than or "
	  "equal to 16384, resetting to 256.", "logbuffersize", 256 },
	{ "logbuffersize", 16384, "nbuffers_pcpu", 2, NULL, "logbuffersize", 16384 },
	{ "nbuffers_pcpu", 0, NULL, 0,
	  "hwpmc: nbuffers_pcpu=0 must be greater than zero, resetting to 32.",
	  "nbuffers_pcpu", 32 },
	{ "nbuffers_pcpu", 128, NULL, 0, NULL, "nbuffers_pcpu", 128 },
	{ "nbuffers_pcpu", 129, NULL, 0,
	  "hwpmc: nbuffers_pcpu=129 * logbuffersize=256 exceeds 32MB per CPU limit, "
	  "resetting to defaults (32 * 256).", "nbuffers_pcpu", 32 },
	{ "nbuffers_pcpu", 64, "logbuffersize", 1024,
	  "hwpmc: nbuffers_pcpu=64 * logbuffersize=1024 exceeds 32MB per CPU limit, "
	  "resetting to defaults (32 * 256).", "logbuffersize", 256 },
};

static void
tunable_diagnostics_reset_bad_values(void **state)
{
	size_t i;

	(void)state;
	for (i = 0; i < sizeof(diag_cases) / sizeof(diag_cases[0]); i++) {
		const struct diag_case *c = &diag_cases[i];
		struct fx f = { 0 };
		vpmu_config *cfg;
		long v;

		assert_int_equal(vpmu_config_create(&cfg), 0);
		vpmu_config_set_log(cfg, fx_log, &f);
		assert_int_equal(vpmu_config_set_tunable(cfg, c->name, c->value), 0);
		if (c->name2 != NULL)
			assert_int_equal(vpmu_config_set_tunable(cfg, c->name2, c->value2), 0);
		assert_int_equal(vpmu_vm_create(cfg, &f.vm), 0);
		if (c->msg == NULL)
			assert_int_equal(f.ndiag, 0);
		else {
			assert_int_equal(f.ndiag, 1);
			assert_string_equal(f.diag[0], c->msg);
		}
		assert_int_equal(vpmu_vm_get_tunable(f.vm, c->check, &v), 0);
		assert_int_equal(v, c->expect);
		vpmu_vm_destroy(f.vm);
		vpmu_config_destroy(cfg);
	}
}

static void
mincount_clamps_sampling_reload(void **state)
{
	struct fx *f = *state;
	struct vpmu_pmc_info pi[NPMC];
	vpmu_pmc_id s = fx_alloc(f, &ROOT, VPMU_MODE_SS, 0, VPMU_CLASS_PV,
	    VPMU_EV_INSTRUCTIONS, 0);
	unsigned row = VPMU_ID_TO_ROW(s);

	assert_int_equal(vpmu_pmc_setcount(f->vm, &ROOT, s, 999), 0);
	pmcinfo(f, 0, pi);
	assert_int_equal(pi[row].reloadcount, 1000);
	assert_int_equal(vpmu_pmc_setcount(f->vm, &ROOT, s, 65536), 0);
	pmcinfo(f, 0, pi);
	assert_int_equal(pi[row].reloadcount, 65536);
	/* mincount below 1 acts as 1. */
	assert_int_equal(vpmu_vm_set_tunable(f->vm, "kern.hwpmc.mincount", 0), 0);
	assert_int_equal(vpmu_pmc_setcount(f->vm, &ROOT, s, 0), 0);
	pmcinfo(f, 0, pi);
	assert_int_equal(pi[row].reloadcount, 1);
}

/* ---- counting ------------------------------------------------------------------ */

static void
system_pmc_counts_its_vcpu_exactly(void **state)
{
	struct fx *f = *state;
	vpmu_pmc_id s = SC_PV(f, &ROOT, 0, VPMU_EV_INSTRUCTIONS);
	struct vpmu_count c;

	rates(f, 0, 1000, 10);
	rates(f, 1, 7000, 10);
	assert_int_equal(vpmu_pmc_setcount(f->vm, &ROOT, s, 500), 0);
	assert_int_equal(vpmu_pmc_start(f->vm, &ROOT, s), 0);
	assert_int_equal(vpmu_synthetic_advance(f->vm, 0, 3 * MS), 0);
	assert_int_equal(vpmu_synthetic_advance(f->vm, 1, 3 * MS), 0);	/* not ours */
	assert_int_equal(fx_read(f, &ROOT, s), 500 + 3000);
	/* It counts whatever process runs there, and nothing when stopped. */
	run(f, 0, USER.pid, 1);
	assert_int_equal(vpmu_pmc_stop(f->vm, &ROOT, s), 0);
	assert_int_equal(vpmu_synthetic_advance(f->vm, 0, 5 * MS), 0);
	assert_int_equal(fx_read(f, &ROOT, s), 4500);
	/* Resumes from where it stopped; a changed rate applies from now. */
	assert_int_equal(vpmu_pmc_start(f->vm, &ROOT, s), 0);
	rates(f, 0, 2500, 10);
	assert_int_equal(vpmu_synthetic_advance(f->vm, 0, 2 * MS), 0);
	assert_int_equal(fx_read(f, &ROOT, s), 9500);
	/* Fractions carry: 3 x 1/3 ms at 2500/ms is exactly 2500. */
	assert_int_equal(vpmu_synthetic_advance(f->vm, 0, 333333), 0);
	assert_int_equal(vpmu_synthetic_advance(f->vm, 0, 333333), 0);
	assert_int_equal(vpmu_synthetic_advance(f->vm, 0, 333334), 0);
	assert_int_equal(fx_read(f, &ROOT, s), 12000);
	assert_int_equal(vpmu_pmc_get_count(f->vm, ROOT.pid, s, &c), 0);
	assert_int_equal(c.value, 12000);
	assert_int_equal(c.time_enabled, 7 * MS);		/* 3 + 1 + 2 + 1 */
	assert_int_equal(c.time_running, 7 * MS);
	/* A write while stopped replaces the count. */
	assert_int_equal(vpmu_pmc_stop(f->vm, &ROOT, s), 0);
	assert_int_equal(vpmu_pmc_write(f->vm, &ROOT, s, 7), 0);
	assert_int_equal(fx_read(f, &ROOT, s), 7);
}

static void
process_pmc_counts_only_while_target_runs(void **state)
{
	struct fx *f = *state;
	vpmu_pmc_id t = TC_PV(f, &USER, VPMU_EV_INSTRUCTIONS, 0);
	struct vpmu_count c;

	rates(f, 0, 1000, 0);
	rates(f, 1, 3000, 0);
	assert_int_equal(vpmu_pmc_attach(f->vm, &USER, t, 0), 0);
	assert_int_equal(vpmu_pmc_start(f->vm, &USER, t), 0);
	run(f, 0, USER.pid, 2);			/* 2000 */
	run(f, 1, OTHER.pid, 5);		/* not a target */
	run(f, 0, USER_CHILD.pid, 4);		/* not a target (no DESCENDANTS) */
	run(f, 1, USER.pid, 1);			/* 3000 */
	assert_int_equal(fx_read(f, &USER, t), 5000);
	/* Live while running, on two vCPUs at once (two threads). */
	assert_int_equal(vpmu_proc_switch_in(f->vm, 0, USER.pid, 1), 0);
	assert_int_equal(vpmu_proc_switch_in(f->vm, 1, USER.pid, 2), 0);
	assert_int_equal(vpmu_synthetic_advance(f->vm, 0, 1 * MS), 0);
	assert_int_equal(vpmu_synthetic_advance(f->vm, 1, 1 * MS), 0);
	assert_int_equal(fx_read(f, &USER, t), 9000);
	/* A switch-in replaces what ran on the vCPU before. */
	assert_int_equal(vpmu_proc_switch_in(f->vm, 0, OTHER.pid, 3), 0);
	assert_int_equal(vpmu_synthetic_advance(f->vm, 0, 10 * MS), 0);
	assert_int_equal(vpmu_proc_switch_out(f->vm, 1), 0);
	assert_int_equal(fx_read(f, &USER, t), 9000);
	assert_int_equal(vpmu_pmc_get_count(f->vm, USER.pid, t, &c), 0);
	assert_int_equal(c.value, 9000);
	assert_int_equal(c.time_enabled, 5 * MS);		/* 2 + 1 + 1 + 1 */
}

static void
same_id_under_two_owners_stays_two_pmcs(void **state)
{
	struct fx *f = *state;
	vpmu_pmc_id a = TC_PV(f, &USER, VPMU_EV_INSTRUCTIONS, 0);
	vpmu_pmc_id b = TC_PV(f, &ROOT, VPMU_EV_INSTRUCTIONS, 0);
	struct vpmu_count c;

	/* hwpmc ids are per owner: both PMCs have one id. */
	assert_int_equal(a, b);
	rates(f, 0, 1000, 0);
	assert_int_equal(vpmu_pmc_attach(f->vm, &USER, a, USER.pid), 0);
	assert_int_equal(vpmu_pmc_attach(f->vm, &ROOT, b, OTHER.pid), 0);
	assert_int_equal(vpmu_pmc_start(f->vm, &USER, a), 0);
	assert_int_equal(vpmu_pmc_start(f->vm, &ROOT, b), 0);
	run(f, 0, USER.pid, 1);
	run(f, 0, OTHER.pid, 5);
	assert_int_equal(fx_read(f, &USER, a), 1000);
	assert_int_equal(fx_read(f, &ROOT, b), 5000);
	assert_int_equal(vpmu_pmc_get_count(f->vm, USER.pid, a, &c), 0);
	assert_int_equal(c.value, 1000);
	assert_int_equal(vpmu_pmc_get_count(f->vm, ROOT.pid, b, &c), 0);
	assert_int_equal(c.value, 5000);
	assert_int_equal(vpmu_pmc_get_count(f->vm, OTHER.pid, b, &c), EINVAL);
}

static void
process_pmc_stop_and_detach_take_effect_at_once(void **state)
{
	struct fx *f = *state;
	vpmu_pmc_id t = TC_PV(f, &USER, VPMU_EV_INSTRUCTIONS, 0);

	rates(f, 0, 1000, 0);
	assert_int_equal(vpmu_pmc_attach(f->vm, &USER, t, USER_CHILD.pid), 0);
	assert_int_equal(vpmu_pmc_start(f->vm, &USER, t), 0);
	assert_int_equal(vpmu_proc_switch_in(f->vm, 0, USER_CHILD.pid, 1), 0);
	assert_int_equal(vpmu_synthetic_advance(f->vm, 0, 2 * MS), 0);
	assert_int_equal(vpmu_pmc_stop(f->vm, &USER, t), 0);
	assert_int_equal(vpmu_synthetic_advance(f->vm, 0, 2 * MS), 0);
	assert_int_equal(fx_read(f, &USER, t), 2000);
	/* Restarting while the target is on the vCPU loads it there. */
	assert_int_equal(vpmu_pmc_start(f->vm, &USER, t), 0);
	assert_int_equal(vpmu_synthetic_advance(f->vm, 0, 1 * MS), 0);
	assert_int_equal(fx_read(f, &USER, t), 3000);
	/* Detaching a running PMC credits what the target counted so far. */
	assert_int_equal(vpmu_pmc_detach(f->vm, &USER, t, USER_CHILD.pid), 0);
	assert_int_equal(f->sigio, 1);
	assert_int_equal(vpmu_synthetic_advance(f->vm, 0, 1 * MS), 0);
	assert_int_equal(fx_read(f, &USER, t), 3000);
	assert_int_equal(f->sigio, 2);		/* PMCRW with no target */
	assert_int_equal(vpmu_proc_switch_out(f->vm, 0), 0);
}

static void
start_unattached_pmc_attaches_owner(void **state)
{
	struct fx *f = *state;
	vpmu_pmc_id t = fx_alloc(f, &USER, VPMU_MODE_TC, VPMU_CPU_ANY,
	    VPMU_CLASS_IAP, VPMU_EV_BRANCHES, 0);
	uint32_t msr = 99;

	rates(f, 1, 0, 40);
	assert_int_equal(vpmu_pmc_start(f->vm, &USER, t), 0);
	run(f, 1, USER.pid, 3);
	assert_int_equal(fx_read(f, &USER, t), 120);
	/* Attached to its owner alone: GETMSR gives the RDPMC index. */
	assert_int_equal(vpmu_pmc_stop(f->vm, &USER, t), 0);
	assert_int_equal(vpmu_pmc_getmsr(f->vm, &USER, t, &msr), 0);
	assert_int_equal(msr, VPMU_ID_TO_ROW(t) - ROW_IAP0);
	/* Starting twice is fine; ATTACH while running is EBUSY. */
	assert_int_equal(vpmu_pmc_start(f->vm, &USER, t), 0);
	assert_int_equal(vpmu_pmc_start(f->vm, &USER, t), 0);
	assert_int_equal(vpmu_pmc_attach(f->vm, &USER, t, USER_CHILD.pid), EBUSY);
}

static void
start_never_attached_pmc_attaches_owner_alone(void **state)
{
	struct fx *f = *state;
	vpmu_pmc_id t = TC_PV(f, &USER, VPMU_EV_INSTRUCTIONS, 0);

	rates(f, 0, 1000, 0);
	assert_int_equal(vpmu_pmc_start(f->vm, &USER, t), 0);
	run(f, 0, USER.pid, 2);
	run(f, 0, USER_CHILD.pid, 3);		/* not a target */
	assert_int_equal(fx_read(f, &USER, t), 2000);
	assert_int_equal(f->sigio, 0);		/* PMCRW saw a target */
	/* The owner is its target: attaching it again is EEXIST. */
	assert_int_equal(vpmu_pmc_stop(f->vm, &USER, t), 0);
	assert_int_equal(vpmu_pmc_attach(f->vm, &USER, t, USER.pid), EEXIST);
	assert_int_equal(vpmu_pmc_detach(f->vm, &USER, t, USER_CHILD.pid), ESRCH);
	assert_int_equal(vpmu_pmc_detach(f->vm, &USER, t, USER.pid), 0);
}

static void
start_with_a_target_left_counts_it_not_the_owner(void **state)
{
	struct fx *f = *state;
	vpmu_pmc_id t = TC_PV(f, &USER, VPMU_EV_INSTRUCTIONS, 0);

	rates(f, 0, 1000, 0);
	assert_int_equal(vpmu_proc_fork(f->vm, USER_CHILD.pid, 102), 0);
	assert_int_equal(vpmu_pmc_attach(f->vm, &USER, t, USER_CHILD.pid), 0);
	assert_int_equal(vpmu_pmc_attach(f->vm, &USER, t, 102), 0);
	assert_int_equal(vpmu_pmc_detach(f->vm, &USER, t, 102), 0);
	assert_int_equal(f->sigio, 0);		/* 101 is still a target */
	assert_int_equal(vpmu_pmc_start(f->vm, &USER, t), 0);
	run(f, 0, 102, 5);			/* detached */
	run(f, 0, USER.pid, 7);			/* the owner: not attached */
	run(f, 0, USER_CHILD.pid, 3);
	assert_int_equal(fx_read(f, &USER, t), 3000);
	assert_int_equal(vpmu_pmc_stop(f->vm, &USER, t), 0);
	assert_int_equal(vpmu_pmc_detach(f->vm, &USER, t, USER.pid), ESRCH);
	assert_int_equal(vpmu_pmc_attach(f->vm, &USER, t, USER_CHILD.pid), EEXIST);
}

static void
descendants_count_children_and_grandchildren_exactly(void **state)
{
	struct fx *f = *state;
	vpmu_pmc_id t = TC_PV(f, &USER, VPMU_EV_INSTRUCTIONS, VPMU_F_DESCENDANTS);
	vpmu_pmc_id plain = TC_PV(f, &USER, VPMU_EV_BRANCHES, 0);

	rates(f, 0, 1000, 100);
	rates(f, 1, 2000, 100);
	/* Attaching to 100 with DESCENDANTS takes its existing child 101 too. */
	assert_int_equal(vpmu_pmc_attach(f->vm, &USER, t, USER.pid), 0);
	assert_int_equal(vpmu_pmc_attach(f->vm, &USER, plain, USER.pid), 0);
	assert_int_equal(vpmu_pmc_start(f->vm, &USER, t), 0);
	assert_int_equal(vpmu_pmc_start(f->vm, &USER, plain), 0);
	/* Future children: 100 forks 102, 102 forks 103. */
	assert_int_equal(vpmu_proc_fork(f->vm, USER.pid, 102), 0);
	assert_int_equal(vpmu_proc_fork(f->vm, 102, 103), 0);
	run(f, 0, USER.pid, 1);			/* 1000 | 100 */
	run(f, 1, USER_CHILD.pid, 1);		/* 2000 | - */
	run(f, 0, 102, 2);			/* 2000 | - */
	run(f, 1, 103, 3);			/* 6000 | - */
	run(f, 0, OTHER.pid, 7);		/* -    | - */
	assert_int_equal(fx_read(f, &USER, t), 11000);
	assert_int_equal(fx_read(f, &USER, plain), 100);
	/* A descendant may name the PMC it inherited (hwpmc's pmc_find_pmc). */
	{
		struct vpmu_cred c103 = { .pid = 103, .uid = 1000 };
		assert_int_equal(fx_read(f, &c103, t), 11000);
		assert_int_equal(vpmu_pmc_start(f->vm, &c103, plain), ESRCH);
	}
	/* Exits keep what each process counted in the PMC's total. */
	assert_int_equal(vpmu_proc_exit(f->vm, 103), 0);
	assert_int_equal(vpmu_proc_exit(f->vm, 102), 0);
	run(f, 1, USER.pid, 1);			/* 2000 | 100 */
	assert_int_equal(fx_read(f, &USER, t), 13000);
	assert_int_equal(fx_read(f, &USER, plain), 200);
	/* Detach with DESCENDANTS drops the whole subtree. */
	assert_int_equal(vpmu_pmc_stop(f->vm, &USER, t), 0);
	assert_int_equal(vpmu_pmc_detach(f->vm, &USER, t, USER.pid), 0);
	assert_int_equal(vpmu_pmc_detach(f->vm, &USER, t, USER_CHILD.pid), ESRCH);
}

static void
descendants_attach_failure_undoes_the_subtree(void **state)
{
	struct fx *f = *state;
	vpmu_pmc_id other = TC_PV(f, &ROOT, VPMU_EV_BRANCHES, 0);
	vpmu_pmc_id t = TC_PV(f, &USER, VPMU_EV_INSTRUCTIONS, VPMU_F_DESCENDANTS);

	/* 101 already has ROOT's PMC at the same row: the subtree attach fails. */
	assert_int_equal(VPMU_ID_TO_ROW(other), VPMU_ID_TO_ROW(t));
	assert_int_equal(vpmu_pmc_attach(f->vm, &ROOT, other, USER_CHILD.pid), 0);
	assert_int_equal(vpmu_pmc_attach(f->vm, &USER, t, USER.pid), EBUSY);
	/* ...and left nothing attached: 100 is not a target of t. */
	assert_int_equal(vpmu_pmc_detach(f->vm, &USER, t, USER.pid), ESRCH);
	/* A rollback is not "every target left": no SIGIO, and START still
	 * attaches the owner rather than failing with ESRCH. */
	assert_int_equal(f->sigio, 0);
	assert_int_equal(vpmu_pmc_start(f->vm, &USER, t), 0);
}

static void
unsupported_event_counts_nothing_and_says_why(void **state)
{
	struct fx *f = *state;
	struct vpmu_pmc_alloc a = { .cpu = 0, .cls = VPMU_CLASS_PV,
	    .event = VPMU_EV_INSTRUCTIONS, .mode = VPMU_MODE_SC,
	    .caps = VPMU_CAP_EDGE };
	char why[160];

	rates(f, 0, 1000, 0);
	assert_int_equal(vpmu_pmc_allocate(f->vm, &ROOT, &a), 0);
	assert_int_equal(vpmu_pmc_get_unsupported(f->vm, ROOT.pid, a.pmcid, why, sizeof(why)),
	    EOPNOTSUPP);
	assert_non_null(strstr(why, "EDGE"));
	assert_int_equal(vpmu_pmc_start(f->vm, &ROOT, a.pmcid), 0);
	assert_int_equal(vpmu_synthetic_advance(f->vm, 0, 5 * MS), 0);
	assert_int_equal(fx_read(f, &ROOT, a.pmcid), 0);
}

/* ---- process life cycle -------------------------------------------------------- */

static void
exit_releases_owned_pmcs(void **state)
{
	struct fx *f = *state;
	vpmu_pmc_id t = TC_PV(f, &USER, VPMU_EV_INSTRUCTIONS, 0);

	assert_int_equal(vpmu_pmc_start(f->vm, &USER, t), 0);
	assert_int_equal(vpmu_proc_switch_in(f->vm, 0, USER.pid, 1), 0);
	assert_int_equal(vpmu_proc_exit(f->vm, USER.pid), 0);
	assert_int_equal(disp(f, 0, ROW_PV0), VPMU_DISP_FREE);
	assert_int_equal(vpmu_pmc_start(f->vm, &USER, t), ESRCH);
	/* Its child is an orphan now, still known. */
	assert_int_equal(vpmu_proc_switch_in(f->vm, 0, USER_CHILD.pid, 1), 0);
	assert_int_equal(vpmu_proc_switch_in(f->vm, 0, USER.pid, 1), ESRCH);
}

static void
exec_releases_owned_pmcs_and_rechecks_credentials(void **state)
{
	struct fx *f = *state;
	vpmu_pmc_id mine = TC_PV(f, &USER_CHILD, VPMU_EV_INSTRUCTIONS, 0);
	vpmu_pmc_id t = TC_PV(f, &USER, VPMU_EV_BRANCHES, 0);
	struct vpmu_cred setuid = USER_CHILD;

	assert_int_equal(vpmu_pmc_attach(f->vm, &USER, t, USER_CHILD.pid), 0);
	/* Same credentials: USER's PMC stays, 101's own PMC is released. */
	assert_int_equal(vpmu_proc_exec(f->vm, USER_CHILD.pid, "/bin/sh", NULL), 0);
	assert_int_equal(vpmu_pmc_start(f->vm, &USER_CHILD, mine), ESRCH);
	assert_int_equal(vpmu_pmc_attach(f->vm, &USER, t, USER_CHILD.pid), EEXIST);
	/* A set-id exec: USER may not watch it any more. */
	setuid.privileged = 1;
	assert_int_equal(vpmu_proc_exec(f->vm, USER_CHILD.pid, "/usr/bin/su", &setuid), 0);
	assert_int_equal(f->sigio, 1);
	assert_int_equal(vpmu_pmc_detach(f->vm, &USER, t, USER_CHILD.pid), ESRCH);
}

static void
proc_hooks_reject_bad_input(void **state)
{
	struct fx *f = *state;
	struct vpmu_cred c = { .pid = 500, .uid = 1 };

	assert_int_equal(vpmu_proc_create(f->vm, &USER, 0), EEXIST);
	assert_int_equal(vpmu_proc_create(f->vm, &c, 9999), ESRCH);
	assert_int_equal(vpmu_proc_create(f->vm, &c, 500), EINVAL);
	assert_int_equal(vpmu_proc_create(f->vm, NULL, 0), EINVAL);
	assert_int_equal(vpmu_proc_create(NULL, &c, 0), EINVAL);
	c.pid = 0;
	assert_int_equal(vpmu_proc_create(f->vm, &c, 0), EINVAL);
	assert_int_equal(vpmu_proc_fork(f->vm, 9999, 600), ESRCH);
	assert_int_equal(vpmu_proc_fork(f->vm, USER.pid, OTHER.pid), EEXIST);
	assert_int_equal(vpmu_proc_fork(f->vm, USER.pid, -2), EINVAL);
	assert_int_equal(vpmu_proc_exec(f->vm, 9999, "/x", NULL), ESRCH);
	assert_int_equal(vpmu_proc_exec(f->vm, USER.pid, "/x", &OTHER), EINVAL);
	assert_int_equal(vpmu_proc_exit(f->vm, 9999), ESRCH);
	assert_int_equal(vpmu_proc_switch_in(f->vm, 2, USER.pid, 1), EINVAL);
	assert_int_equal(vpmu_proc_switch_in(f->vm, 0, 9999, 1), ESRCH);
	assert_int_equal(vpmu_proc_switch_out(f->vm, 7), EINVAL);
	assert_int_equal(vpmu_proc_switch_out(f->vm, 0), 0);	/* nothing there */
}

/* ---- notifications and statistics ----------------------------------------------- */

static void
destroy_sends_sigbus_to_every_owner(void **state)
{
	struct fx *f = *state;

	(void)TC_PV(f, &USER, VPMU_EV_INSTRUCTIONS, 0);
	(void)SC_PV(f, &ROOT, 1, VPMU_EV_INSTRUCTIONS);
	(void)TC_PV(f, &ROOT, VPMU_EV_BRANCHES, 0);
	vpmu_vm_destroy(f->vm);
	f->vm = NULL;
	assert_int_equal(f->sigbus, 2);		/* two owners */
}

static void
driverstats_count_calls_and_errors(void **state)
{
	struct fx *f = *state;
	struct vpmu_driverstats st;
	vpmu_pmc_id t = TC_PV(f, &USER, VPMU_EV_INSTRUCTIONS, 0);	/* 1 call */

	(void)vpmu_pmc_start(f->vm, &OTHER, t);			/* 2: ESRCH */
	(void)vpmu_pmc_admin(f->vm, &USER, 0, 0, 1);		/* 3: EPERM */
	(void)vpmu_vm_op(f->vm, &USER, 99, NULL);		/* 4: EINVAL */
	assert_int_equal(vpmu_vm_get_driverstats(f->vm, &USER, &st), 0);	/* 5 */
	assert_int_equal(st.syscalls, 4);	/* the snapshot precedes its own count */
	assert_int_equal(st.syscall_errors, 3);
	assert_int_equal(st.intr_bufferfull, 0);
	assert_int_equal(vpmu_vm_get_driverstats(f->vm, &USER, &st), 0);
	assert_int_equal(st.syscalls, 5);
}

static void
cpuinfo_describes_the_model(void **state)
{
	struct fx *f = *state;
	struct vpmu_cpuinfo ci;
	vpmu_config *cfg;
	vpmu_vm *vm;

	assert_int_equal(vpmu_vm_get_cpuinfo(f->vm, &USER, &ci), 0);
	assert_int_equal(ci.cputype, VPMU_CPUTYPE_INTEL_CORE);
	assert_int_equal(ci.ncpu, 2);
	assert_int_equal(ci.npmc, NPMC);
	assert_int_equal(ci.nclass, 3);
	assert_int_equal(ci.classes[0].cls, VPMU_CLASS_IAP);
	assert_int_equal(ci.classes[0].num, 4);
	assert_int_equal(ci.classes[0].width, 48);
	assert_int_equal(ci.classes[1].cls, VPMU_CLASS_IAF);
	assert_int_equal(ci.classes[1].num, 3);
	assert_int_equal(ci.classes[1].caps & VPMU_CAP_EDGE, 0);
	assert_int_equal(ci.classes[2].cls, VPMU_CLASS_PV);
	assert_int_equal(ci.classes[2].num, 16);
	assert_int_equal(ci.classes[2].width, 64);

	/* An AMD model: K8 rows first, the paravirtual class after them. */
	assert_int_equal(vpmu_config_create(&cfg), 0);
	assert_int_equal(vpmu_config_set_class(cfg, VPMU_CLASS_IAP, 0, 0), 0);
	assert_int_equal(vpmu_config_set_class(cfg, VPMU_CLASS_IAF, 0, 0), 0);
	assert_int_equal(vpmu_config_set_class(cfg, VPMU_CLASS_PV, 8, 64), 0);
	assert_int_equal(vpmu_config_set_class(cfg, VPMU_CLASS_K8, 6, 48), 0);
	assert_int_equal(vpmu_vm_create(cfg, &vm), 0);
	assert_int_equal(vpmu_vm_get_cpuinfo(vm, &USER, &ci), 0);
	assert_int_equal(ci.cputype, VPMU_CPUTYPE_AMD_K8);
	assert_int_equal(ci.npmc, 14);
	assert_int_equal(ci.classes[0].cls, VPMU_CLASS_K8);
	assert_int_equal(ci.classes[1].cls, VPMU_CLASS_PV);
	vpmu_vm_destroy(vm);
	vpmu_config_destroy(cfg);
}

static void
config_rejects_bad_values(void **state)
{
	vpmu_config *cfg;
	vpmu_vm *vm = (vpmu_vm *)1;
	long v;

	(void)state;
	assert_int_equal(vpmu_config_create(NULL), EINVAL);
	assert_int_equal(vpmu_config_create(&cfg), 0);
	assert_int_equal(vpmu_config_set_vcpus(cfg, 0), EINVAL);
	assert_int_equal(vpmu_config_set_vcpus(cfg, VPMU_MAX_VCPUS + 1), EINVAL);
	assert_int_equal(vpmu_config_set_vcpus(cfg, VPMU_MAX_VCPUS), 0);
	assert_int_equal(vpmu_config_set_vcpus(cfg, 2), 0);
	assert_int_equal(vpmu_config_set_class(cfg, 0x55, 4, 48), EINVAL);
	assert_int_equal(vpmu_config_set_class(cfg, VPMU_CLASS_IAF, 4, 48), EINVAL);
	assert_int_equal(vpmu_config_set_class(cfg, VPMU_CLASS_IAP, 4, 65), EINVAL);
	assert_int_equal(vpmu_config_set_class(cfg, VPMU_CLASS_IAP, 4, 0), EINVAL);
	assert_int_equal(vpmu_config_set_tunable(cfg, "kern.hwpmc.bogus", 1), EINVAL);
	assert_int_equal(vpmu_config_set_tunable(cfg, NULL, 1), EINVAL);
	assert_int_equal(vpmu_config_get_tunable(cfg, "nsamples", &v), 0);
	assert_int_equal(v, 512);
	assert_int_equal(vpmu_config_set_source(cfg, NULL, NULL), EINVAL);
	/* A source keeps a vCPU's exec point with both hooks or neither. */
	struct vpmu_source_ops half = vpmu_source_synthetic;

	half.exec_point_get = point_get;
	assert_int_equal(vpmu_config_set_source(cfg, &half, NULL), EINVAL);
	half.exec_point_get = NULL;
	half.exec_point_set = point_set;
	assert_int_equal(vpmu_config_set_source(cfg, &half, NULL), EINVAL);
	half.exec_point_get = point_get;
	assert_int_equal(vpmu_config_set_source(cfg, &half, NULL), 0);
	assert_int_equal(vpmu_config_set_source(cfg, &vpmu_source_synthetic, NULL), 0);
	/* 255 rows is the id's limit. */
	assert_int_equal(vpmu_config_set_class(cfg, VPMU_CLASS_PV, 255, 64), 0);
	assert_int_equal(vpmu_vm_create(cfg, &vm), EINVAL);
	assert_null(vm);
	/* No rows at all. */
	assert_int_equal(vpmu_config_set_class(cfg, VPMU_CLASS_PV, 0, 0), 0);
	assert_int_equal(vpmu_config_set_class(cfg, VPMU_CLASS_IAP, 0, 0), 0);
	assert_int_equal(vpmu_config_set_class(cfg, VPMU_CLASS_IAF, 0, 0), 0);
	assert_int_equal(vpmu_vm_create(cfg, &vm), EINVAL);
	assert_int_equal(vpmu_vm_create(NULL, &vm), EINVAL);
	assert_int_equal(vpmu_vm_create(cfg, NULL), EINVAL);
	vpmu_config_destroy(cfg);
}

static void
pmc_ids_encode_cpu_mode_class_row(void **state)
{
	struct fx *f = *state;
	vpmu_pmc_id t = TC_PV(f, &USER, VPMU_EV_INSTRUCTIONS, 0);
	vpmu_pmc_id s = fx_alloc(f, &ROOT, VPMU_MODE_SC, 1, VPMU_CLASS_IAF,
	    VPMU_EV_REF_CYCLES, 0);

	assert_int_equal(t, 0xFFF34007u);	/* cpu any, TC, PV, row 7 */
	assert_int_equal(s, 0x00110606u);	/* cpu 1, SC, IAF, row 6 */
	assert_int_equal(VPMU_ID_TO_CPU(s), 1);
	assert_int_equal(VPMU_ID_TO_MODE(s), VPMU_MODE_SC);
	assert_int_equal(VPMU_ID_TO_CLASS(s), VPMU_CLASS_IAF);
	assert_int_equal(VPMU_ID_TO_ROW(s), ROW_IAF0 + 2);
}

static void
errors_have_names_and_messages(void **state)
{
	(void)state;
	assert_string_equal(vpmu_errname(VPMU_EDOOFUS), "EDOOFUS");
	assert_string_equal(vpmu_errname(VPMU_EPROGMISMATCH), "EPROGMISMATCH");
	assert_string_equal(vpmu_errname(EBUSY), "EBUSY");
	/* every code a function returns: vpmu_pmclog_read(), vpmu_vm_restore() ... */
	assert_string_equal(vpmu_errname(EBADMSG), "EBADMSG");
	assert_string_equal(vpmu_errname(ENODATA), "ENODATA");
	assert_string_equal(vpmu_errname(EPROTONOSUPPORT), "EPROTONOSUPPORT");
	assert_string_equal(vpmu_errname(ENAMETOOLONG), "ENAMETOOLONG");
	assert_string_equal(vpmu_errname(EPIPE), "EPIPE");
	assert_non_null(strstr(vpmu_strerror(EBADMSG), "bad log"));
	assert_string_equal(vpmu_errname(0), "0");
	assert_string_equal(vpmu_errname(-3), "EUNKNOWN");
	assert_non_null(strstr(vpmu_strerror(VPMU_EDOOFUS), "log"));
	assert_string_equal(vpmu_strerror(12345), "unknown error");
	assert_string_equal(vpmu_event_name(VPMU_EV_REF_CYCLES), "ref-cycles");
	assert_int_equal(vpmu_event_lookup("branches"), VPMU_EV_BRANCHES);
	assert_int_equal(vpmu_event_lookup("nope"), VPMU_EV_NONE);
}

#define T(fn)	cmocka_unit_test_setup_teardown(fn, fx_setup, fx_teardown)

int
main(void)
{
	const struct CMUnitTest tests[] = {
		T(disp_all_rows_free_at_start),
		T(disp_free_to_thread_and_back),
		T(disp_free_to_standalone_and_back),
		T(disp_thread_row_refuses_system_pmc),
		T(disp_admin_disable_and_enable),
		T(getpmcinfo_shows_owner_where_loaded),
		T(tunable_defaults),
		T(tunable_list),
		cmocka_unit_test(tunable_diagnostics_reset_bad_values),
		T(mincount_clamps_sampling_reload),
		T(system_pmc_counts_its_vcpu_exactly),
		T(process_pmc_counts_only_while_target_runs),
		T(same_id_under_two_owners_stays_two_pmcs),
		T(process_pmc_stop_and_detach_take_effect_at_once),
		T(start_unattached_pmc_attaches_owner),
		T(start_never_attached_pmc_attaches_owner_alone),
		T(start_with_a_target_left_counts_it_not_the_owner),
		T(descendants_count_children_and_grandchildren_exactly),
		T(descendants_attach_failure_undoes_the_subtree),
		T(unsupported_event_counts_nothing_and_says_why),
		T(exit_releases_owned_pmcs),
		T(exec_releases_owned_pmcs_and_rechecks_credentials),
		T(proc_hooks_reject_bad_input),
		T(destroy_sends_sigbus_to_every_owner),
		T(driverstats_count_calls_and_errors),
		T(cpuinfo_describes_the_model),
		cmocka_unit_test(config_rejects_bad_values),
		T(pmc_ids_encode_cpu_mode_class_row),
		cmocka_unit_test(errors_have_names_and_messages),
	};

	return (cmocka_run_group_tests(tests, NULL, NULL));
}
