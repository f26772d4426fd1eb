/*
 * test_mux_clock.c -- the clocks of multiplexing (vpmu(3), "The vCPU
 * clock"): rotations follow the vCPU thread's CPU time in its runs; a PMC's
 * enabled and running times follow the source's own clock where it has
 * one, else that same CPU time; a source that multiplexes its own counters
 * (running < enabled) is scaled by its own times.
 *
 * The test source here counts one event per unit of a per-vCPU progress
 * clock the test moves by hand, so that a run's progress and its CPU time
 * can differ as they do on a loaded host.
 */
#include "fixture.h"

#include <time.h>

#include <vpmu/vcpu.h>

#define MS	1000000ull

/* ---- a source counting the test's progress clock ---------------------- */

struct psrc {
	uint64_t clock[2];		/* progress of each vCPU */
	bool	 halved;		/* read() says it ran half the time it was
					   enabled, and counted half */
};

struct pctr {
	struct psrc *s;
	unsigned vcpu;
	bool	 enabled;
	uint64_t acc, since;
};

static struct psrc progress;

static int
p_init(void **statep, unsigned nvcpus, void *arg)
{
	(void)nvcpus;
	*statep = arg;
	return (0);
}

static void
p_fini(void *state)
{
	(void)state;
}

static int
p_supports(void *state, const struct vpmu_event_spec *ev, char *why, size_t whylen)
{
	(void)state, (void)ev, (void)why, (void)whylen;
	return (0);
}

static int
p_open(void *state, unsigned vcpu, pid_t tid, const struct vpmu_event_spec *ev, void **ctrp)
{
	struct pctr *c = calloc(1, sizeof(*c));

	(void)tid, (void)ev;
	if (c == NULL)
		return (ENOMEM);
	c->s = state;
	c->vcpu = vcpu;
	*ctrp = c;
	return (0);
}

static void
p_close(void *state, void *ctr)
{
	(void)state;
	free(ctr);
}

static int
p_enable(void *state, void *ctr)
{
	struct pctr *c = ctr;

	(void)state;
	if (!c->enabled)
		c->since = c->s->clock[c->vcpu];
	c->enabled = true;
	return (0);
}

static int
p_disable(void *state, void *ctr)
{
	struct pctr *c = ctr;

	(void)state;
	if (c->enabled)
		c->acc += c->s->clock[c->vcpu] - c->since;
	c->enabled = false;
	return (0);
}

static int
p_read(void *state, void *ctr, struct vpmu_count *out)
{
	const struct pctr *c = ctr;
	uint64_t n = c->acc + (c->enabled ? c->s->clock[c->vcpu] - c->since : 0);

	(void)state;
	out->time_enabled = n;
	out->time_running = c->s->halved ? n / 2 : n;
	out->value = c->s->halved ? n / 2 : n;
	return (0);
}

static uint64_t
p_clock(void *state, unsigned vcpu)
{
	const struct psrc *s = state;

	return (s->clock[vcpu]);
}

static const struct vpmu_source_ops with_clock = {
	.name = "progress",
	.init = p_init, .fini = p_fini, .supports = p_supports,
	.open = p_open, .close = p_close, .enable = p_enable, .disable = p_disable,
	.read = p_read, .clock = p_clock,
};

static const struct vpmu_source_ops without_clock = {
	.name = "progress-noclock",
	.init = p_init, .fini = p_fini, .supports = p_supports,
	.open = p_open, .close = p_close, .enable = p_enable, .disable = p_disable,
	.read = p_read,
};

static vpmu_vm *
vm_on(const struct vpmu_source_ops *ops, unsigned cap)
{
	vpmu_config *cfg;
	vpmu_vm *vm;

	memset(&progress, 0, sizeof(progress));
	assert_int_equal(vpmu_config_create(&cfg), 0);
	assert_int_equal(vpmu_config_set_vcpus(cfg, 2), 0);
	assert_int_equal(vpmu_config_set_source(cfg, ops, &progress), 0);
	assert_int_equal(vpmu_config_set_capacity(cfg, cap), 0);
	assert_int_equal(vpmu_config_set_mux_interval(cfg, 1 * MS), 0);
	assert_int_equal(vpmu_vm_create(cfg, &vm), 0);
	vpmu_config_destroy(cfg);
	assert_int_equal(vpmu_proc_create(vm, &ROOT, 0), 0);
	return (vm);
}

static vpmu_pmc_id
sc(vpmu_vm *vm, unsigned cpu)
{
	struct vpmu_pmc_alloc a = { .cpu = cpu, .cls = VPMU_CLASS_PV,
	    .event = VPMU_EV_INSTRUCTIONS, .mode = VPMU_MODE_SC };

	assert_int_equal(vpmu_pmc_allocate(vm, &ROOT, &a), 0);
	assert_int_equal(vpmu_pmc_start(vm, &ROOT, a.pmcid), 0);
	return (a.pmcid);
}

/* A run of cpu that took run_ns of CPU time and made `moved` progress. */
static void
run(vpmu_vm *vm, unsigned cpu, uint64_t run_ns, uint64_t moved)
{
	struct vpmu_exit x = { .reason = VPMU_EXIT_OTHER, .flags = VPMU_EXITF_RAN,
	    .ran_ns = run_ns };

	progress.clock[cpu] += moved;
	assert_int_equal(vpmu_vcpu_exit(vm, 0 + cpu, &x), 0);
}

static uint64_t
rd(vpmu_vm *vm, vpmu_pmc_id id)
{
	uint64_t v = 0;

	assert_int_equal(vpmu_pmc_read(vm, &ROOT, id, &v), 0);
	return (v);
}

static bool
holds(vpmu_vm *vm, vpmu_pmc_id id)
{
	return (vpmu_pmc_get_unsupported(vm, ROOT.pid, id, NULL, 0) == 0);
}

/*
 * Two PMCs share one host counter; every run is one mux interval of CPU
 * time, so a window is one run.  The guest makes 3000 units of progress in
 * A's runs and 1000 in B's (on a loaded host one window's CPU time buys
 * less work than another's).  Weighed by the source's clock, both
 * estimates are exactly the total, which either would count alone, and
 * the least served by progress goes next: B gets more windows, and the
 * two shares of the progress stay within one window of each other.
 */
static void
mux_times_follow_the_source_clock(void **state)
{
	vpmu_vm *vm = vm_on(&with_clock, 1);
	uint64_t total = 0, ran_a = 0, ran_b = 0, moved;
	unsigned i, runs_b = 0;
	struct vpmu_count ca, cb;
	vpmu_pmc_id a, b;

	(void)state;
	progress.clock[0] = 123456;		/* progress before the PMCs: not theirs */
	a = sc(vm, 0);
	b = sc(vm, 0);
	for (i = 0; i < 12; i++) {
		assert_true(holds(vm, a) != holds(vm, b));
		moved = holds(vm, a) ? 3000 : 1000;
		*(holds(vm, a) ? &ran_a : &ran_b) += moved;
		runs_b += holds(vm, b);
		total += moved;
		run(vm, 0, 1 * MS, moved);
	}
	assert_int_equal(total, 18000);		/* A, B, B, B, A, B, B, B, A, B, B, B */
	assert_int_equal(runs_b, 9);
	assert_int_equal(rd(vm, a), total);
	assert_int_equal(rd(vm, b), total);
	assert_int_equal(vpmu_pmc_get_count(vm, ROOT.pid, a, &ca), 0);
	assert_int_equal(vpmu_pmc_get_count(vm, ROOT.pid, b, &cb), 0);
	assert_int_equal(ca.value, ran_a);
	assert_int_equal(ca.time_enabled, total);
	assert_int_equal(ca.time_running, ran_a);
	assert_int_equal(cb.value, ran_b);
	assert_int_equal(cb.time_enabled, total);
	assert_int_equal(cb.time_running, ran_b);
	assert_int_equal(ran_a, 9000);
	assert_int_equal(ran_b, 9000);
	vpmu_vm_destroy(vm);
}

/*
 * The same runs on a source without a clock: the times are the runs' CPU
 * time, equal for both, and the estimates are off by the difference in
 * progress per window -- what the source's clock is for.
 */
static void
mux_without_a_source_clock_times_are_run_time(void **state)
{
	vpmu_vm *vm = vm_on(&without_clock, 1);
	vpmu_pmc_id a, b;
	struct vpmu_count ca;
	unsigned i;

	(void)state;
	a = sc(vm, 0);
	b = sc(vm, 0);
	for (i = 0; i < 10; i++)
		run(vm, 0, 1 * MS, i % 2 == 0 ? 3000 : 1000);
	assert_int_equal(rd(vm, a), 30000);
	assert_int_equal(rd(vm, b), 10000);
	assert_int_equal(vpmu_pmc_get_count(vm, ROOT.pid, a, &ca), 0);
	assert_int_equal(ca.time_enabled, 10 * MS);
	assert_int_equal(ca.time_running, 5 * MS);
	vpmu_vm_destroy(vm);
}

/*
 * Rotations follow CPU time, not the source's clock: runs of 0.4 ms make
 * a rotation every third run (at 1.2 ms), whatever the progress.
 */
static void
mux_rotations_follow_run_time(void **state)
{
	vpmu_vm *vm = vm_on(&with_clock, 1);
	vpmu_pmc_id a, b;
	unsigned i;

	(void)state;
	a = sc(vm, 0);
	b = sc(vm, 0);
	for (i = 0; i < 6; i++) {
		assert_true(holds(vm, (i / 3) % 2 == 0 ? a : b));
		run(vm, 0, 400000, 1000000);
	}
	assert_true(holds(vm, a));
	assert_int_equal(rd(vm, a), 6000000);
	assert_int_equal(rd(vm, b), 6000000);
	/* Progress with no CPU time (a VMM's own ran_ns of 0): no rotation. */
	run(vm, 0, 0, 5000000);
	assert_true(holds(vm, a));
	vpmu_vm_destroy(vm);
}

/* A PMC started on another vCPU's clock does not take this one's past. */
static void
mux_clock_starts_when_the_first_pmc_does(void **state)
{
	vpmu_vm *vm = vm_on(&with_clock, 0);
	struct vpmu_count c;
	vpmu_pmc_id a, b;

	(void)state;
	run(vm, 1, 1 * MS, 777);		/* nothing counts yet */
	a = sc(vm, 1);
	run(vm, 1, 1 * MS, 100);
	assert_int_equal(vpmu_pmc_get_count(vm, ROOT.pid, a, &c), 0);
	assert_int_equal(c.time_enabled, 100);
	assert_int_equal(c.value, 100);
	b = sc(vm, 0);
	run(vm, 0, 1 * MS, 50);
	assert_int_equal(vpmu_pmc_get_count(vm, ROOT.pid, b, &c), 0);
	assert_int_equal(c.time_enabled, 50);
	vpmu_vm_destroy(vm);
}

/*
 * A source that multiplexes its own counters reports running < enabled:
 * its events are scaled by its own times (perf's rule), so a PMC that
 * never waited for libvpmu still reads the full count.
 */
static void
mux_a_source_s_own_multiplexing_is_scaled(void **state)
{
	vpmu_vm *vm = vm_on(&with_clock, 0);
	struct vpmu_count c;
	vpmu_pmc_id a;

	(void)state;
	progress.halved = true;
	a = sc(vm, 0);
	run(vm, 0, 1 * MS, 4000);
	assert_int_equal(rd(vm, a), 4000);
	run(vm, 0, 1 * MS, 2000);
	assert_int_equal(rd(vm, a), 6000);
	assert_int_equal(vpmu_pmc_get_count(vm, ROOT.pid, a, &c), 0);
	assert_int_equal(c.value, 6000);
	assert_int_equal(vpmu_pmc_stop(vm, &ROOT, a), 0);
	assert_int_equal(rd(vm, a), 6000);
	vpmu_vm_destroy(vm);
}

static uint64_t
thread_cpu_ns(void)
{
	struct timespec ts;

	assert_int_equal(clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts), 0);
	return ((uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec);
}

/*
 * Without a VMM's ran_ns, a run's time is the entering thread's CPU time
 * between vpmu_vcpu_enter() and vpmu_vcpu_exit(): a thread that sleeps
 * 50 ms (the host ran others) gives the PMCs almost none of it; one that
 * computes for 5 ms of CPU time gives them at least that.
 */
static void
mux_run_time_is_the_vcpu_thread_s_cpu_time(void **state)
{
	vpmu_vm *vm = vm_on(&without_clock, 0);
	struct timespec nap = { 0, 50 * (long)MS };
	struct vpmu_entry e;
	struct vpmu_exit x = { .reason = VPMU_EXIT_OTHER };
	struct vpmu_count c;
	volatile uint64_t spin = 0;
	uint64_t t0, t1;
	vpmu_pmc_id a;

	(void)state;
	a = sc(vm, 0);
	assert_int_equal(vpmu_vcpu_enter(vm, 0, &e), 0);
	while (nanosleep(&nap, &nap) != 0)
		;
	assert_int_equal(vpmu_vcpu_exit(vm, 0, &x), 0);
	assert_int_equal(vpmu_pmc_get_count(vm, ROOT.pid, a, &c), 0);
	assert_true(c.time_enabled < 10 * MS);
	t1 = c.time_enabled;

	assert_int_equal(vpmu_vcpu_enter(vm, 0, &e), 0);
	t0 = thread_cpu_ns();
	while (thread_cpu_ns() - t0 < 5 * MS)
		spin++;
	assert_int_equal(vpmu_vcpu_exit(vm, 0, &x), 0);
	assert_int_equal(vpmu_pmc_get_count(vm, ROOT.pid, a, &c), 0);
	assert_true(c.time_enabled - t1 >= 5 * MS);
	vpmu_vm_destroy(vm);
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(mux_times_follow_the_source_clock),
		cmocka_unit_test(mux_without_a_source_clock_times_are_run_time),
		cmocka_unit_test(mux_rotations_follow_run_time),
		cmocka_unit_test(mux_clock_starts_when_the_first_pmc_does),
		cmocka_unit_test(mux_a_source_s_own_multiplexing_is_scaled),
		cmocka_unit_test(mux_run_time_is_the_vcpu_thread_s_cpu_time),
	};

	return (cmocka_run_group_tests(tests, NULL, NULL));
}
