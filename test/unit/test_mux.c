/*
 * test_mux.c -- multiplexing on the synthetic source, exact: scripted
 * rates, a capacity smaller than the demand, and the scaled values,
 * times and rotations that must follow.
 */
#include "fixture.h"

#include <vpmu/model.h>

#include "guest_msr.h"

#define MS	1000000ull

/* A VM with cap host counters per vCPU and a 1 ms mux interval. */
static vpmu_vm *
mux_vm(unsigned cap, const char *model)
{
	struct vpmu_model m;
	vpmu_config *cfg;
	vpmu_vm *vm;

	assert_int_equal(vpmu_config_create(&cfg), 0);
	assert_int_equal(vpmu_config_set_vcpus(cfg, 2), 0);
	assert_int_equal(vpmu_config_set_capacity(cfg, cap), 0);
	assert_int_equal(vpmu_config_set_mux_interval(cfg, 1 * MS), 0);
	if (model != NULL) {
		assert_int_equal(vpmu_model_parse(model, &m, NULL, 0), 0);
		assert_int_equal(vpmu_config_set_model(cfg, &m), 0);
	}
	assert_int_equal(vpmu_vm_create(cfg, &vm), 0);
	vpmu_config_destroy(cfg);
	assert_int_equal(vpmu_proc_create(vm, &ROOT, 0), 0);
	return (vm);
}

static vpmu_pmc_id
sc(vpmu_vm *vm, unsigned cpu, uint32_t event)
{
	struct vpmu_pmc_alloc a = { .cpu = cpu, .cls = VPMU_CLASS_PV, .event = event,
	    .mode = VPMU_MODE_SC };

	assert_int_equal(vpmu_pmc_allocate(vm, &ROOT, &a), 0);
	assert_int_equal(vpmu_pmc_start(vm, &ROOT, a.pmcid), 0);
	return (a.pmcid);
}

static uint64_t
rd(vpmu_vm *vm, vpmu_pmc_id id)
{
	uint64_t v = 0;

	assert_int_equal(vpmu_pmc_read(vm, &ROOT, id, &v), 0);
	return (v);
}

static void
steps(vpmu_vm *vm, unsigned cpu, unsigned n, uint64_t ns)
{
	while (n-- > 0)
		assert_int_equal(vpmu_synthetic_advance(vm, cpu, ns), 0);
}

static void
mux_config_rejects_bad_intervals(void **state)
{
	vpmu_config *cfg;

	(void)state;
	assert_int_equal(vpmu_config_create(&cfg), 0);
	assert_int_equal(vpmu_config_set_mux_interval(cfg, 999), EINVAL);
	assert_int_equal(vpmu_config_set_mux_interval(cfg, 10000000001ull), EINVAL);
	assert_int_equal(vpmu_config_set_mux_interval(NULL, 1 * MS), EINVAL);
	assert_int_equal(vpmu_config_set_mux_interval(cfg, 1000), 0);
	vpmu_config_destroy(cfg);
}

/* The example: 1000 events/ms, ran 1 of every 4 intervals: 4 x. */
static void
mux_one_in_four_reads_four_times_its_running_count(void **state)
{
	vpmu_vm *vm = mux_vm(1, NULL);
	vpmu_pmc_id id[4];
	struct vpmu_count c;
	unsigned i;

	(void)state;
	assert_int_equal(vpmu_synthetic_set_rate(vm, 0, VPMU_EV_INSTRUCTIONS, 1000), 0);
	for (i = 0; i < 4; i++)
		id[i] = sc(vm, 0, VPMU_EV_INSTRUCTIONS);
	steps(vm, 0, 8, 1 * MS);		/* each ran 2 of the 8 ms */
	for (i = 0; i < 4; i++) {
		assert_int_equal(vpmu_pmc_get_count(vm, ROOT.pid, id[i], &c), 0);
		assert_int_equal(c.value, 2000);	/* unscaled */
		assert_int_equal(c.time_enabled, 8 * MS);
		assert_int_equal(c.time_running, 2 * MS);
		assert_int_equal(rd(vm, id[i]), 8000);	/* 2000 x 8 / 2 */
	}
	vpmu_vm_destroy(vm);
}

static void
mux_different_rates_are_estimated_exactly_when_steady(void **state)
{
	vpmu_vm *vm = mux_vm(2, NULL);
	vpmu_pmc_id a, b, c;

	(void)state;
	assert_int_equal(vpmu_synthetic_set_rate(vm, 0, VPMU_EV_INSTRUCTIONS, 3000), 0);
	assert_int_equal(vpmu_synthetic_set_rate(vm, 0, VPMU_EV_BRANCHES, 500), 0);
	assert_int_equal(vpmu_synthetic_set_rate(vm, 0, VPMU_EV_CYCLES, 7000), 0);
	a = sc(vm, 0, VPMU_EV_INSTRUCTIONS);
	b = sc(vm, 0, VPMU_EV_BRANCHES);
	c = sc(vm, 0, VPMU_EV_CYCLES);
	steps(vm, 0, 6, 1 * MS);		/* 3 PMCs, 2 slots: each ran 4 of 6 */
	assert_int_equal(rd(vm, a), 3000 * 6);
	assert_int_equal(rd(vm, b), 500 * 6);
	assert_int_equal(rd(vm, c), 7000 * 6);
	vpmu_vm_destroy(vm);
}

static void
mux_a_pmc_that_never_ran_reads_its_last_value(void **state)
{
	vpmu_vm *vm = mux_vm(1, NULL);
	vpmu_pmc_id a, b;
	char why[160];

	(void)state;
	assert_int_equal(vpmu_synthetic_set_rate(vm, 0, VPMU_EV_INSTRUCTIONS, 1000), 0);
	a = sc(vm, 0, VPMU_EV_INSTRUCTIONS);
	b = sc(vm, 0, VPMU_EV_INSTRUCTIONS);
	assert_int_equal(vpmu_pmc_stop(vm, &ROOT, b), 0);
	assert_int_equal(vpmu_pmc_write(vm, &ROOT, b, 42), 0);
	assert_int_equal(vpmu_pmc_start(vm, &ROOT, b), 0);
	steps(vm, 0, 1, MS / 2);		/* no rotation yet */
	assert_int_equal(rd(vm, a), 500);
	assert_int_equal(rd(vm, b), 42);	/* never ran: no guess */
	assert_int_equal(vpmu_pmc_get_unsupported(vm, ROOT.pid, b, why, sizeof(why)), EBUSY);
	steps(vm, 0, 1, MS / 2);		/* 1 ms: b takes the slot */
	assert_int_equal(vpmu_pmc_get_unsupported(vm, ROOT.pid, b, why, sizeof(why)), 0);
	vpmu_vm_destroy(vm);
}

static void
mux_estimates_never_go_back(void **state)
{
	vpmu_vm *vm = mux_vm(1, NULL);
	vpmu_pmc_id x, y;
	uint64_t v1, v2;

	(void)state;
	assert_int_equal(vpmu_synthetic_set_rate(vm, 0, VPMU_EV_INSTRUCTIONS, 1000), 0);
	x = sc(vm, 0, VPMU_EV_INSTRUCTIONS);
	y = sc(vm, 0, VPMU_EV_INSTRUCTIONS);
	steps(vm, 0, 2, 1 * MS);		/* x ran 1, y ran 1 */
	v1 = rd(vm, x);
	assert_int_equal(rd(vm, y), 2000);	/* y: 1000 x 2 / 1 too */
	assert_int_equal(v1, 2000);		/* 1000 x 2 / 1 */
	/* Nothing more happens, but x runs again: its ratio falls to 1000/1.5. */
	assert_int_equal(vpmu_synthetic_set_rate(vm, 0, VPMU_EV_INSTRUCTIONS, 0), 0);
	steps(vm, 0, 1, 1 * MS);
	v2 = rd(vm, x);
	assert_int_equal(v2, 2000);		/* the estimate 1500 would go back */
	vpmu_vm_destroy(vm);
}

static void
mux_scaled_values_do_not_overflow(void **state)
{
	vpmu_vm *vm = mux_vm(1, NULL);
	vpmu_pmc_id a, b;

	(void)state;
	/* counted * enabled passes 2^64: the estimate is still exact. */
	assert_int_equal(vpmu_synthetic_set_rate(vm, 0, VPMU_EV_INSTRUCTIONS,
	    4000000000000ull), 0);
	a = sc(vm, 0, VPMU_EV_INSTRUCTIONS);
	b = sc(vm, 0, VPMU_EV_INSTRUCTIONS);
	steps(vm, 0, 4, 1000 * MS);		/* 1 s intervals: 4e15 per s */
	assert_int_equal(rd(vm, a), 4000000000000ull * 4000);
	assert_int_equal(rd(vm, b), 4000000000000ull * 4000);
	vpmu_vm_destroy(vm);
}

static void
mux_rotation_is_fair_round_robin(void **state)
{
	vpmu_vm *vm = mux_vm(2, NULL);
	vpmu_pmc_id id[5];
	struct vpmu_count c;
	unsigned i;

	(void)state;
	assert_int_equal(vpmu_synthetic_set_rate(vm, 0, VPMU_EV_INSTRUCTIONS, 1), 0);
	for (i = 0; i < 5; i++)
		id[i] = sc(vm, 0, VPMU_EV_INSTRUCTIONS);
	steps(vm, 0, 10, 1 * MS);		/* 20 slot-ms over 5 PMCs */
	for (i = 0; i < 5; i++) {
		assert_int_equal(vpmu_pmc_get_count(vm, ROOT.pid, id[i], &c), 0);
		assert_int_equal(c.time_running, 4 * MS);
		assert_int_equal(c.time_enabled, 10 * MS);
	}
	vpmu_vm_destroy(vm);
}

/*
 * A guest that disables and re-enables every counter each interval (as
 * Linux perf does around a PMI) still sees each of them run in turn.
 */
static void
mux_counters_toggled_every_interval_all_get_their_turn(void **state)
{
	vpmu_vm *vm = mux_vm(2, NULL);
	vpmu_pmc_id id[4];
	struct vpmu_count c;
	unsigned i, round;

	(void)state;
	assert_int_equal(vpmu_synthetic_set_rate(vm, 0, VPMU_EV_INSTRUCTIONS, 1000), 0);
	for (i = 0; i < 4; i++)
		id[i] = sc(vm, 0, VPMU_EV_INSTRUCTIONS);
	for (round = 0; round < 8; round++) {
		steps(vm, 0, 1, 1 * MS);
		for (i = 0; i < 4; i++)
			assert_int_equal(vpmu_pmc_stop(vm, &ROOT, id[i]), 0);
		for (i = 0; i < 4; i++)
			assert_int_equal(vpmu_pmc_start(vm, &ROOT, id[i]), 0);
	}
	for (i = 0; i < 4; i++) {
		assert_int_equal(vpmu_pmc_get_count(vm, ROOT.pid, id[i], &c), 0);
		assert_int_equal(c.time_running, 4 * MS);
		assert_int_equal(c.value, 4000);
		assert_int_equal(rd(vm, id[i]), 8000);
	}
	vpmu_vm_destroy(vm);
}

/* A process PMC moving with its process keeps its counts and share of time. */
static void
mux_process_pmc_keeps_its_share_across_vcpus(void **state)
{
	vpmu_vm *vm = mux_vm(1, NULL);
	struct vpmu_pmc_alloc a = { .cpu = VPMU_CPU_ANY, .cls = VPMU_CLASS_PV,
	    .event = VPMU_EV_INSTRUCTIONS, .mode = VPMU_MODE_TC };
	vpmu_pmc_id other0, other1;
	struct vpmu_count c;

	(void)state;
	assert_int_equal(vpmu_synthetic_set_rate(vm, 0, VPMU_EV_INSTRUCTIONS, 1000), 0);
	assert_int_equal(vpmu_synthetic_set_rate(vm, 1, VPMU_EV_INSTRUCTIONS, 1000), 0);
	other0 = sc(vm, 0, VPMU_EV_INSTRUCTIONS);	/* competition on both vCPUs */
	other1 = sc(vm, 1, VPMU_EV_INSTRUCTIONS);
	assert_int_equal(vpmu_pmc_allocate(vm, &ROOT, &a), 0);
	assert_int_equal(vpmu_pmc_attach(vm, &ROOT, a.pmcid, ROOT.pid), 0);
	assert_int_equal(vpmu_pmc_start(vm, &ROOT, a.pmcid), 0);
	assert_int_equal(vpmu_proc_switch_in(vm, 0, ROOT.pid, 1), 0);
	steps(vm, 0, 2, 1 * MS);		/* ran 1 of 2 ms on vCPU 0 */
	assert_int_equal(vpmu_proc_switch_in(vm, 1, ROOT.pid, 1), 0);
	assert_int_equal(vpmu_proc_switch_out(vm, 0), 0);
	steps(vm, 1, 2, 1 * MS);		/* and 1 of 2 ms on vCPU 1 */
	assert_int_equal(vpmu_proc_switch_out(vm, 1), 0);
	assert_int_equal(vpmu_pmc_get_count(vm, ROOT.pid, a.pmcid, &c), 0);
	assert_int_equal(c.time_enabled, 4 * MS);
	assert_int_equal(c.time_running, 2 * MS);
	assert_int_equal(c.value, 2000);
	assert_int_equal(rd(vm, a.pmcid), 4000);
	(void)other0;
	(void)other1;
	vpmu_vm_destroy(vm);
}

/* Counters enabled by one GLOBAL_CTRL write run as a unit. */
static void
mux_global_ctrl_groups_are_scheduled_together(void **state)
{
	vpmu_vm *vm = mux_vm(3, "intel-v2");
	struct vpmu_counter_info ci[8];
	unsigned n = 8, i;

	(void)state;
	assert_int_equal(vpmu_synthetic_set_rate(vm, 0, VPMU_EV_INSTRUCTIONS, 1000), 0);
	assert_int_equal(MSR_WRITE(vm, 0, 0x38F, 0), VPMU_MSR_OK);
	for (i = 0; i < 4; i++)
		assert_int_equal(MSR_WRITE(vm, 0, 0x186 + i, 0x4300C0), VPMU_MSR_OK);
	assert_int_equal(MSR_WRITE(vm, 0, 0x38F, 0x1), VPMU_MSR_OK);	/* alone */
	assert_int_equal(MSR_WRITE(vm, 0, 0x38F, 0xF), VPMU_MSR_OK);	/* 1-3 */
	steps(vm, 0, 12, 1 * MS);
	assert_int_equal(vpmu_vcpu_get_counters(vm, 0, ci, &n), 0);
	/*
	 * 3 slots: counters 1-3 (one write) always run together, counter 0
	 * (enabled alone, before) alternates with them: 6 of the 12 ms each.
	 */
	assert_int_equal(ci[1].time_running, ci[2].time_running);
	assert_int_equal(ci[2].time_running, ci[3].time_running);
	assert_int_equal(ci[1].raw, ci[3].raw);
	assert_int_equal(ci[0].time_running, 6 * MS);
	assert_int_equal(ci[1].time_running, 6 * MS);
	for (i = 0; i < 4; i++) {
		assert_int_equal(ci[i].time_enabled, 12 * MS);
		assert_int_equal(ci[i].scaled, 1);
		assert_int_equal(ci[i].value, 12000);	/* steady rate: exact */
	}
	vpmu_vm_destroy(vm);
}

/* A group larger than all the slots runs member by member, all in turn. */
static void
mux_group_larger_than_the_slots_is_split_fairly(void **state)
{
	vpmu_vm *vm = mux_vm(4, "intel-v2:gp=8");
	struct vpmu_counter_info ci[16];
	unsigned n = 16, i;

	(void)state;
	assert_int_equal(vpmu_synthetic_set_rate(vm, 0, VPMU_EV_INSTRUCTIONS, 1000), 0);
	assert_int_equal(MSR_WRITE(vm, 0, 0x38F, 0), VPMU_MSR_OK);
	for (i = 0; i < 8; i++)
		assert_int_equal(MSR_WRITE(vm, 0, 0x186 + i, 0x4300C0), VPMU_MSR_OK);
	assert_int_equal(MSR_WRITE(vm, 0, 0x38F, 0xFF), VPMU_MSR_OK);	/* one write */
	steps(vm, 0, 8, 1 * MS);
	assert_int_equal(vpmu_vcpu_get_counters(vm, 0, ci, &n), 0);
	for (i = 0; i < 8; i++) {
		assert_int_equal(ci[i].time_running, 4 * MS);
		assert_int_equal(ci[i].value, 8000);
	}
	vpmu_vm_destroy(vm);
}

/*
 * A multiplexed counter still overflows and interrupts: when its estimate
 * crosses the width.  Two counters, one slot, 1000 events/ms: each runs
 * half the time and reads 1000 per ms of run time.
 */
static void
mux_multiplexed_counter_still_overflows_with_its_pmi(void **state)
{
	vpmu_vm *vm = mux_vm(1, "intel-v2");
	uint64_t mask = (1ull << 48) - 1, v;

	(void)state;
	assert_int_equal(vpmu_synthetic_set_rate(vm, 0, VPMU_EV_INSTRUCTIONS, 1000), 0);
	assert_int_equal(MSR_WRITE(vm, 0, 0x38F, 0), VPMU_MSR_OK);
	assert_int_equal(MSR_WRITE(vm, 0, 0x4C1, mask - 4999), VPMU_MSR_OK);
	assert_int_equal(MSR_WRITE(vm, 0, 0x186, 0x5300C0), VPMU_MSR_OK);	/* INT */
	assert_int_equal(MSR_WRITE(vm, 0, 0x187, 0x4300C0), VPMU_MSR_OK);
	assert_int_equal(MSR_WRITE(vm, 0, 0x38F, 0x1), VPMU_MSR_OK);
	assert_int_equal(MSR_WRITE(vm, 0, 0x38F, 0x3), VPMU_MSR_OK);
	steps(vm, 0, 4, 1 * MS);		/* estimate 4000: 1000 short */
	assert_int_equal(vpmu_vcpu_check_overflow(vm, 0), 0);
	assert_int_equal(MSR_READ(vm, 0, 0xC1, &v), VPMU_MSR_OK);
	assert_int_equal(v, mask - 999);
	assert_int_equal(TAKE_PMI(vm, 0), 0);
	steps(vm, 0, 2, 1 * MS);		/* estimate 6000: wrapped to 1000 */
	assert_int_equal(vpmu_vcpu_check_overflow(vm, 0), 0);
	assert_int_equal(MSR_READ(vm, 0, 0xC1, &v), VPMU_MSR_OK);
	assert_int_equal(v, 1000);
	assert_int_equal(MSR_READ(vm, 0, 0x38E, &v), VPMU_MSR_OK);
	assert_int_equal(v & 1, 1);
	assert_int_equal(TAKE_PMI(vm, 0), 1);
	vpmu_vm_destroy(vm);
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(mux_config_rejects_bad_intervals),
		cmocka_unit_test(mux_one_in_four_reads_four_times_its_running_count),
		cmocka_unit_test(mux_different_rates_are_estimated_exactly_when_steady),
		cmocka_unit_test(mux_a_pmc_that_never_ran_reads_its_last_value),
		cmocka_unit_test(mux_estimates_never_go_back),
		cmocka_unit_test(mux_scaled_values_do_not_overflow),
		cmocka_unit_test(mux_rotation_is_fair_round_robin),
		cmocka_unit_test(mux_counters_toggled_every_interval_all_get_their_turn),
		cmocka_unit_test(mux_process_pmc_keeps_its_share_across_vcpus),
		cmocka_unit_test(mux_global_ctrl_groups_are_scheduled_together),
		cmocka_unit_test(mux_multiplexed_counter_still_overflows_with_its_pmi),
		cmocka_unit_test(mux_group_larger_than_the_slots_is_split_fairly),
	};

	return (cmocka_run_group_tests(tests, NULL, NULL));
}
