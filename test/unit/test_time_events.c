/*
 * test_time_events.c -- time events (vpmu(3), "Time events"): task-clock
 * and cpu-clock are counted by the core as the vCPU thread's CPU time in
 * the guest's runs, whatever the source; a sampling PMC on one tells the
 * VMM at each entry when its next sample is due (vpmu_entry.time_ns) and
 * takes it at the exit that ends that run, at the guest's RIP; periods a
 * run went past get no sample and are counted (time_missed).
 *
 * The runs are reported through the exit contract with VPMU_EXITF_RAN, so
 * their CPU time is the test's to choose.  The source here can count no
 * event at all: what counts is the core.
 */
#include "fixture.h"

#include <vpmu/vcpu.h>

#define US	1000ull
#define MS	1000000ull

/* ---- a source that counts nothing ------------------------------------------ */

static int
n_init(void **statep, unsigned nvcpus, void *arg)
{
	(void)nvcpus, (void)arg;
	*statep = NULL;
	return (0);
}

static void
n_fini(void *state)
{
	(void)state;
}

static int
n_supports(void *state, const struct vpmu_event_spec *ev, char *why, size_t whylen)
{
	(void)state, (void)ev;
	if (why != NULL)
		snprintf(why, whylen, "nothing: counts no event");
	return (EOPNOTSUPP);
}

static int
n_open(void *state, unsigned vcpu, pid_t tid, const struct vpmu_event_spec *ev, void **ctrp)
{
	(void)state, (void)vcpu, (void)tid, (void)ev, (void)ctrp;
	return (EOPNOTSUPP);
}

static void
n_close(void *state, void *ctr)
{
	(void)state, (void)ctr;
}

static int
n_toggle(void *state, void *ctr)
{
	(void)state, (void)ctr;
	return (EOPNOTSUPP);
}

static int
n_read(void *state, void *ctr, struct vpmu_count *out)
{
	(void)state, (void)ctr, (void)out;
	return (EOPNOTSUPP);
}

static const struct vpmu_source_ops nothing = {
	.name = "nothing",
	.init = n_init, .fini = n_fini, .supports = n_supports,
	.open = n_open, .close = n_close, .enable = n_toggle, .disable = n_toggle,
	.read = n_read,
};

/* ---- helpers ---------------------------------------------------------------- */

static vpmu_vm *
vm_on(const struct vpmu_source_ops *ops, unsigned cap)
{
	vpmu_config *cfg;
	vpmu_vm *vm;

	assert_int_equal(vpmu_config_create(&cfg), 0);
	assert_int_equal(vpmu_config_set_vcpus(cfg, 2), 0);
	if (ops != NULL)
		assert_int_equal(vpmu_config_set_source(cfg, ops, NULL), 0);
	assert_int_equal(vpmu_config_set_capacity(cfg, cap), 0);
	assert_int_equal(vpmu_vm_create(cfg, &vm), 0);
	vpmu_config_destroy(cfg);
	assert_int_equal(vpmu_proc_create(vm, &ROOT, 0), 0);
	return (vm);
}

static vpmu_pmc_id
pmc(vpmu_vm *vm, uint32_t mode, uint32_t event, unsigned cpu, uint64_t count)
{
	struct vpmu_pmc_alloc a = { .cpu = cpu, .cls = VPMU_CLASS_PV, .event = event,
	    .mode = mode, .count = count, .flags = VPMU_F_CALLCHAIN };

	assert_int_equal(vpmu_pmc_allocate(vm, &ROOT, &a), 0);
	return (a.pmcid);
}

/* The entry's time_ns, after vpmu_vcpu_enter(). */
static uint64_t
enter(vpmu_vm *vm, unsigned cpu)
{
	struct vpmu_entry e;

	assert_int_equal(vpmu_vcpu_enter(vm, cpu, &e), 0);
	return (e.time_ns);
}

/* A run of run_ns CPU time that exits at rip. */
static void
run(vpmu_vm *vm, unsigned cpu, uint64_t run_ns, uint64_t rip)
{
	struct vpmu_regs r = { .rip = rip, .cpl = 0 };
	struct vpmu_exit x = { .reason = VPMU_EXIT_OTHER, .flags = VPMU_EXITF_RAN,
	    .ran_ns = run_ns, .regs = &r };

	(void)enter(vm, cpu);
	assert_int_equal(vpmu_vcpu_exit(vm, cpu, &x), 0);
}

static uint64_t
rd(vpmu_vm *vm, vpmu_pmc_id id)
{
	uint64_t v = 0;

	assert_int_equal(vpmu_pmc_read(vm, &ROOT, id, &v), 0);
	return (v);
}

/* The CALLCHAIN records of the log at fd: their pc[0] into pcs, how many. */
static unsigned
log_pcs(int fd, uint64_t *pcs, unsigned max)
{
	static struct vpmu_pmclog_ev ev;
	vpmu_pmclog_reader *r;
	unsigned n = 0;
	int rfd;

	r = fx_log_reader(fd, &rfd);
	while (vpmu_pmclog_read(r, &ev) == 0)
		if (ev.type == VPMU_PMCLOG_CALLCHAIN) {
			assert_true(n < max);
			assert_int_equal(ev.u.callchain.npc, 1);
			pcs[n++] = ev.u.callchain.pc[0];
		}
	vpmu_pmclog_close(r);
	close(rfd);
	return (n);
}

/* ---- tests ------------------------------------------------------------------- */

/*
 * A counting PMC on each time event, on a source that counts nothing:
 * each reads the runs' CPU time exactly, from its start on; a PMC of
 * another event on the same vCPU is unsupported and reads 0.
 */
static void
time_events_count_run_time_whatever_the_source(void **state)
{
	vpmu_vm *vm = vm_on(&nothing, 0);
	vpmu_pmc_id tc, cc, in;
	char why[160];

	(void)state;
	tc = pmc(vm, VPMU_MODE_SC, VPMU_EV_TASK_CLOCK, 0, 0);
	cc = pmc(vm, VPMU_MODE_SC, VPMU_EV_CPU_CLOCK, 0, 0);
	in = pmc(vm, VPMU_MODE_SC, VPMU_EV_INSTRUCTIONS, 0, 0);
	run(vm, 0, 5 * MS, 0x1000);		/* before the PMCs: not theirs */
	assert_int_equal(vpmu_pmc_start(vm, &ROOT, tc), 0);
	assert_int_equal(vpmu_pmc_start(vm, &ROOT, cc), 0);
	assert_int_equal(vpmu_pmc_start(vm, &ROOT, in), 0);
	assert_int_equal(vpmu_pmc_get_unsupported(vm, ROOT.pid, tc, why, sizeof(why)), 0);
	assert_int_equal(vpmu_pmc_get_unsupported(vm, ROOT.pid, in, why, sizeof(why)),
	    EOPNOTSUPP);
	run(vm, 0, 300 * US, 0x1000);
	run(vm, 0, 700 * US, 0x1000);
	run(vm, 1, 9 * MS, 0x1000);		/* the other vCPU's time: not theirs */
	run(vm, 0, 1234, 0x1000);
	assert_int_equal(rd(vm, tc), 1 * MS + 1234);
	assert_int_equal(rd(vm, cc), 1 * MS + 1234);
	assert_int_equal(rd(vm, in), 0);
	/* Stopped, it counts no more. */
	assert_int_equal(vpmu_pmc_stop(vm, &ROOT, tc), 0);
	run(vm, 0, 2 * MS, 0x1000);
	assert_int_equal(rd(vm, tc), 1 * MS + 1234);
	assert_int_equal(rd(vm, cc), 3 * MS + 1234);
	vpmu_vm_destroy(vm);
}

/*
 * A time event takes no host slot: with one slot and a counting PMC of
 * instructions (synthetic), a task-clock PMC beside it leaves the
 * instructions PMC alone in its slot, never multiplexed.
 */
static void
time_events_take_no_host_slot(void **state)
{
	vpmu_vm *vm = vm_on(NULL, 1);
	vpmu_pmc_id tc, in;
	struct vpmu_count c;

	(void)state;
	assert_int_equal(vpmu_synthetic_set_rate(vm, 0, VPMU_EV_INSTRUCTIONS, 1000), 0);
	in = pmc(vm, VPMU_MODE_SC, VPMU_EV_INSTRUCTIONS, 0, 0);
	tc = pmc(vm, VPMU_MODE_SC, VPMU_EV_TASK_CLOCK, 0, 0);
	assert_int_equal(vpmu_pmc_start(vm, &ROOT, in), 0);
	assert_int_equal(vpmu_pmc_start(vm, &ROOT, tc), 0);
	assert_int_equal(vpmu_pmc_get_unsupported(vm, ROOT.pid, in, NULL, 0), 0);
	assert_int_equal(vpmu_pmc_get_unsupported(vm, ROOT.pid, tc, NULL, 0), 0);
	run(vm, 0, 4 * MS, 0x1000);
	run(vm, 0, 6 * MS, 0x1000);
	assert_int_equal(vpmu_pmc_get_count(vm, ROOT.pid, in, &c), 0);
	assert_int_equal(c.time_enabled, c.time_running);	/* never waited */
	assert_int_equal(vpmu_pmc_get_count(vm, ROOT.pid, tc, &c), 0);
	assert_int_equal(c.value, 10 * MS);
	assert_int_equal(c.time_enabled, c.time_running);
	vpmu_vm_destroy(vm);
}

/*
 * A sampling PMC on cpu-clock, period 1 ms: each entry says how much run
 * time is left before its sample; the exit that ends that run takes the
 * sample at its RIP.  A run that ends short takes none and leaves the
 * rest for the next; one that goes three periods past takes one sample
 * and counts the two it went past as missed.  A counting time PMC alone
 * asks for nothing (time_ns 0), and neither does a vCPU without one.
 */
static void
time_samples_are_due_by_run_time(void **state)
{
	vpmu_vm *vm = vm_on(&nothing, 0);
	struct vpmu_op_configurelog cl = { .flags = 0 };
	struct vpmu_vcpu_stats st;
	uint64_t pcs[8];
	vpmu_pmc_id ss, tc;
	int fd;

	(void)state;
	fd = fx_logfd();
	cl.logfd = fd;
	tc = pmc(vm, VPMU_MODE_SC, VPMU_EV_TASK_CLOCK, 0, 0);
	assert_int_equal(vpmu_pmc_start(vm, &ROOT, tc), 0);
	assert_int_equal(enter(vm, 0), 0);	/* counting only: no deadline */
	ss = pmc(vm, VPMU_MODE_SS, VPMU_EV_CPU_CLOCK, 0, 1 * MS);
	assert_int_equal(vpmu_vm_op(vm, &ROOT, VPMU_OP_CONFIGURELOG, &cl), 0);
	assert_int_equal(vpmu_pmc_start(vm, &ROOT, ss), 0);
	assert_int_equal(enter(vm, 0), 1 * MS);
	assert_int_equal(enter(vm, 1), 0);	/* the other vCPU has none */
	run(vm, 0, 400 * US, 0xA000);		/* short: no sample */
	assert_int_equal(enter(vm, 0), 600 * US);
	run(vm, 0, 600 * US, 0xB000);		/* due: a sample at 0xB000 */
	assert_int_equal(enter(vm, 0), 1 * MS);
	run(vm, 0, 3500 * US, 0xC000);		/* 3.5 periods: one sample, 2 missed */
	assert_int_equal(enter(vm, 0), 500 * US);
	run(vm, 0, 500 * US, 0xD000);
	assert_int_equal(vpmu_vcpu_get_stats(vm, 0, &st), 0);
	assert_int_equal(st.samples, 3);
	assert_int_equal(st.time_missed, 2);
	assert_int_equal(rd(vm, tc), 5 * MS);
	/* Stopped: no deadline any more. */
	assert_int_equal(vpmu_pmc_stop(vm, &ROOT, ss), 0);
	assert_int_equal(enter(vm, 0), 0);
	assert_int_equal(vpmu_vm_op(vm, &ROOT, VPMU_OP_FLUSHLOG, NULL), 0);
	assert_int_equal(log_pcs(fd, pcs, 8), 3);
	assert_int_equal(pcs[0], 0xB000);
	assert_int_equal(pcs[1], 0xC000);
	assert_int_equal(pcs[2], 0xD000);
	vpmu_vm_destroy(vm);
	close(fd);
}

/*
 * Two sampling time PMCs on one vCPU: the entry asks for the nearer of
 * their next samples.
 */
static void
time_deadline_is_the_nearest(void **state)
{
	vpmu_vm *vm = vm_on(&nothing, 0);
	struct vpmu_op_configurelog cl = { .flags = 0 };
	vpmu_pmc_id a, b;
	int fd;

	(void)state;
	fd = fx_logfd();
	cl.logfd = fd;
	a = pmc(vm, VPMU_MODE_SS, VPMU_EV_CPU_CLOCK, 0, 3 * MS);
	b = pmc(vm, VPMU_MODE_SS, VPMU_EV_TASK_CLOCK, 0, 2 * MS);
	assert_int_equal(vpmu_vm_op(vm, &ROOT, VPMU_OP_CONFIGURELOG, &cl), 0);
	assert_int_equal(vpmu_pmc_start(vm, &ROOT, a), 0);
	assert_int_equal(enter(vm, 0), 3 * MS);
	assert_int_equal(vpmu_pmc_start(vm, &ROOT, b), 0);
	assert_int_equal(enter(vm, 0), 2 * MS);
	run(vm, 0, 2 * MS, 0x1000);		/* b's sample; a has 1 ms left */
	assert_int_equal(enter(vm, 0), 1 * MS);
	run(vm, 0, 1 * MS, 0x2000);		/* a's; b has 1 ms left */
	assert_int_equal(enter(vm, 0), 1 * MS);
	vpmu_vm_destroy(vm);
	close(fd);
}

/* vpmu_event_is_timed(): the two time events, and no other. */
static void
event_is_timed(void **state)
{
	(void)state;
	assert_int_equal(vpmu_event_is_timed(VPMU_EV_TASK_CLOCK), 1);
	assert_int_equal(vpmu_event_is_timed(VPMU_EV_CPU_CLOCK), 1);
	assert_int_equal(vpmu_event_is_timed(VPMU_EV_INSTRUCTIONS), 0);
	assert_int_equal(vpmu_event_is_timed(VPMU_EV_PAGE_FAULTS), 0);
	assert_int_equal(vpmu_event_is_timed(VPMU_EV_RAW), 0);
	assert_int_equal(vpmu_event_is_timed(0), 0);
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(time_events_count_run_time_whatever_the_source),
		cmocka_unit_test(time_events_take_no_host_slot),
		cmocka_unit_test(time_samples_are_due_by_run_time),
		cmocka_unit_test(time_deadline_is_the_nearest),
		cmocka_unit_test(event_is_timed),
	};

	return (cmocka_run_group_tests(tests, NULL, NULL));
}
