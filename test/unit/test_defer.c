/*
 * test_defer.c -- deferred reprogramming through the exit contract: a
 * trapped write to a control is recorded (read back at once) and its
 * counter marked; the core PMC changes only in vpmu_vcpu_enter(), where
 * every marked counter is programmed together.  Looks inside (gpmu.h,
 * internal.h) for what the guest cannot see: the core PMC's state, its
 * host slot, its group.  Synthetic source, exact counts.
 */
#include <errno.h>
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>

#include "internal.h"
#include "gpmu.h"
#include "guest_msr.h"
#include <vpmu/snapshot.h>
#include <vpmu/vcpu.h>

#define MS		1000000ull

#define PMC(i)		(0x0C1u + (i))
#define EVTSEL(i)	(0x186u + (i))
#define FIXED_CTRL	0x38Du
#define GCTRL		0x38Fu
#define EN		(1ull << 22)
#define INSTR		(0xC0ull | (1ull << 16) | (1ull << 17) | EN)	/* USR, OS */
#define AMD_CTL(i)	(0xC0010200u + 2 * (i))
#define AMD_GCTL	0xC0000301u

static vpmu_vm *
vm_with(const char *model)
{
	struct vpmu_model m;
	vpmu_config *cfg;
	vpmu_vm *vm;

	assert_int_equal(vpmu_model_parse(model, &m, NULL, 0), 0);
	assert_int_equal(vpmu_config_create(&cfg), 0);
	assert_int_equal(vpmu_config_set_vcpus(cfg, 1), 0);
	assert_int_equal(vpmu_config_set_model(cfg, &m), 0);
	assert_int_equal(vpmu_vm_create(cfg, &vm), 0);
	vpmu_config_destroy(cfg);
	assert_int_equal(vpmu_synthetic_set_rate(vm, 0, VPMU_EV_INSTRUCTIONS, 1000), 0);
	assert_int_equal(vpmu_synthetic_set_rate(vm, 0, VPMU_EV_CYCLES, 3000), 0);
	return (vm);
}

/* One MSR exit through the contract, no wall time; the exit as left. */
static struct vpmu_exit
msr(vpmu_vm *vm, bool write, uint32_t index, uint64_t data)
{
	struct vpmu_exit x;

	memset(&x, 0, sizeof(x));
	x.reason = write ? VPMU_EXIT_MSR_WRITE : VPMU_EXIT_MSR_READ;
	x.flags = VPMU_EXITF_RAN;		/* ran_ns 0 */
	x.index = index;
	x.data = data;
	assert_int_equal(vpmu_vcpu_exit(vm, 0, &x), 0);
	assert_int_equal(x.handled, 1);
	assert_int_equal(x.fault, 0);
	return (x);
}

static uint64_t
rd(vpmu_vm *vm, uint32_t index)
{
	return (msr(vm, false, index, 0xBAD).data);
}

static void
wr(vpmu_vm *vm, uint32_t index, uint64_t v)
{
	(void)msr(vm, true, index, v);
}

static void
enter(vpmu_vm *vm)
{
	struct vpmu_entry e;

	assert_int_equal(vpmu_vcpu_enter(vm, 0, &e), 0);
}

static struct vpmu_pmc *
gp_pmc(vpmu_vm *vm, unsigned i)
{
	return (vm->gpmu->vcpu[0].gp[i].pm);
}

/* The core PMC behind a counter counts: running, active, in a host slot. */
static bool
core_counts(const struct vpmu_pmc *pm)
{
	return (pm->state == VPMU_STATE_RUNNING && pm->hw[0].active && pm->hw[0].counting);
}

static void
enabling_write_is_read_back_at_once_and_programmed_at_entry(void **state)
{
	vpmu_vm *vm = vm_with("intel-v2");
	struct gpmu_vcpu *v = &vm->gpmu->vcpu[0];

	(void)state;
	wr(vm, EVTSEL(0), INSTR);
	assert_int_equal(rd(vm, EVTSEL(0)), INSTR);	/* the guest's view: at once */
	assert_false(core_counts(gp_pmc(vm, 0)));	/* the core's: not yet */
	assert_int_equal(v->pending, 0x1);
	assert_int_equal(v->running, 0);
	assert_int_equal(vm->vcpu[0].nact, 0);
	/* No entry, no counting: the guest ran nothing since the write. */
	assert_int_equal(vpmu_synthetic_advance(vm, 0, 5 * MS), 0);
	assert_int_equal(rd(vm, PMC(0)), 0);

	enter(vm);
	assert_true(core_counts(gp_pmc(vm, 0)));
	assert_int_equal(v->pending, 0);
	assert_int_equal(v->running, 0x1);
	assert_int_equal(vm->vcpu[0].nact, 1);
	assert_int_equal(vpmu_synthetic_advance(vm, 0, 2 * MS), 0);
	assert_int_equal(rd(vm, PMC(0)), 2000);
	vpmu_vm_destroy(vm);
}

/* Until the entry a disabled counter keeps counting nothing more, and reads exact. */
static void
disabling_write_reads_the_exact_count_before_and_after_entry(void **state)
{
	vpmu_vm *vm = vm_with("intel-v2");

	(void)state;
	wr(vm, EVTSEL(0), INSTR);
	enter(vm);
	assert_int_equal(vpmu_synthetic_advance(vm, 0, 3 * MS), 0);
	wr(vm, EVTSEL(0), INSTR & ~EN);
	assert_int_equal(rd(vm, EVTSEL(0)), INSTR & ~EN);
	assert_true(core_counts(gp_pmc(vm, 0)));	/* stopped at the entry */
	assert_int_equal(rd(vm, PMC(0)), 3000);
	enter(vm);
	assert_false(core_counts(gp_pmc(vm, 0)));
	assert_int_equal(gp_pmc(vm, 0)->state, VPMU_STATE_STOPPED);
	assert_int_equal(rd(vm, PMC(0)), 3000);
	assert_int_equal(vpmu_synthetic_advance(vm, 0, 4 * MS), 0);
	assert_int_equal(rd(vm, PMC(0)), 3000);
	/* A value written while a change is pending is the value read. */
	wr(vm, EVTSEL(0), INSTR);
	wr(vm, PMC(0), 100);
	assert_int_equal(rd(vm, PMC(0)), 100);
	enter(vm);
	assert_int_equal(vpmu_synthetic_advance(vm, 0, 1 * MS), 0);
	assert_int_equal(rd(vm, PMC(0)), 1100);
	vpmu_vm_destroy(vm);
}

/* One GLOBAL_CTRL write enabling N counters: N programmed at one entry, one group. */
static void
global_ctrl_write_programs_its_counters_as_one_group(void **state)
{
	vpmu_vm *vm = vm_with("intel-v2");
	struct gpmu_vcpu *v = &vm->gpmu->vcpu[0];
	uint32_t before, g;
	unsigned i;

	(void)state;
	wr(vm, GCTRL, 0);
	for (i = 0; i < 4; i++)
		wr(vm, EVTSEL(i), INSTR);
	wr(vm, FIXED_CTRL, 0x3);			/* fixed 0: OS and USR */
	enter(vm);
	for (i = 0; i < 4; i++)
		assert_false(core_counts(gp_pmc(vm, i)));
	assert_int_equal(v->running, 0);
	before = vm->next_group;

	wr(vm, GCTRL, 0x10000000Full);			/* GP 0-3 and fixed 0 */
	assert_int_equal(rd(vm, GCTRL), 0x10000000Full);
	assert_int_equal(v->pending, 0x10000000Full);
	assert_int_equal(v->running, 0);
	enter(vm);
	assert_int_equal(v->pending, 0);
	assert_int_equal(v->running, 0x10000000Full);
	assert_int_equal(vm->next_group, before + 1);
	g = vm->next_group;
	for (i = 0; i < 4; i++) {
		assert_true(core_counts(gp_pmc(vm, i)));
		assert_int_equal(gp_pmc(vm, i)->group, g);
	}
	assert_true(core_counts(v->fx[0].pm));
	assert_int_equal(v->fx[0].pm->group, g);
	assert_int_equal(vpmu_synthetic_advance(vm, 0, 2 * MS), 0);
	for (i = 0; i < 4; i++)
		assert_int_equal(rd(vm, PMC(i)), 2000);
	assert_int_equal(rd(vm, 0x309), 2000);		/* IA32_FIXED_CTR0 */

	/* A counter enabled alone afterwards counts alone: no new group. */
	wr(vm, GCTRL, 0x10000000Eull);
	enter(vm);
	assert_false(core_counts(gp_pmc(vm, 0)));
	wr(vm, GCTRL, 0x10000000Full);
	enter(vm);
	assert_true(core_counts(gp_pmc(vm, 0)));
	assert_int_equal(gp_pmc(vm, 0)->group, 0);
	assert_int_equal(vm->next_group, g);
	vpmu_vm_destroy(vm);
}

/* Writes that change nothing mark nothing; a change undone before the entry is harmless. */
static void
same_value_and_undone_writes(void **state)
{
	vpmu_vm *vm = vm_with("intel-v2");
	struct gpmu_vcpu *v = &vm->gpmu->vcpu[0];

	(void)state;
	wr(vm, EVTSEL(1), INSTR);
	enter(vm);
	wr(vm, EVTSEL(1), INSTR);
	assert_int_equal(v->pending, 0);
	wr(vm, GCTRL, 0xF);				/* the reset value: no change */
	assert_int_equal(v->pending, 0);
	assert_int_equal(vpmu_synthetic_advance(vm, 0, 1 * MS), 0);
	wr(vm, GCTRL, 0xD);				/* GP 1 off ... */
	wr(vm, GCTRL, 0xF);				/* ... and on again, no entry between */
	assert_int_equal(v->pending, 0x2);
	enter(vm);
	assert_true(core_counts(gp_pmc(vm, 1)));
	assert_int_equal(vpmu_synthetic_advance(vm, 0, 1 * MS), 0);
	assert_int_equal(rd(vm, PMC(1)), 2000);
	vpmu_vm_destroy(vm);
}

/* AMD PerfMonV2: the same deferral through its own MSRs. */
static void
amd_global_ctl_is_deferred_too(void **state)
{
	vpmu_vm *vm = vm_with("amd-v2");
	struct gpmu_vcpu *v = &vm->gpmu->vcpu[0];
	uint32_t g;

	(void)state;
	wr(vm, AMD_GCTL, 0);
	wr(vm, AMD_CTL(0), INSTR);
	wr(vm, AMD_CTL(1), INSTR);
	enter(vm);
	assert_int_equal(v->running, 0);
	wr(vm, AMD_GCTL, 0x3);
	assert_int_equal(rd(vm, AMD_GCTL), 0x3);
	assert_false(core_counts(gp_pmc(vm, 0)));
	enter(vm);
	g = vm->next_group;
	assert_int_not_equal(g, 0);
	assert_true(core_counts(gp_pmc(vm, 0)));
	assert_true(core_counts(gp_pmc(vm, 1)));
	assert_int_equal(gp_pmc(vm, 0)->group, g);
	assert_int_equal(gp_pmc(vm, 1)->group, g);
	vpmu_vm_destroy(vm);
}

/* The host API outside the contract: vpmu_msr_write() takes effect at once. */
static void
msr_write_outside_the_contract_is_immediate(void **state)
{
	vpmu_vm *vm = vm_with("intel-v2");

	(void)state;
	assert_int_equal(MSR_WRITE(vm, 0, EVTSEL(2), INSTR), VPMU_MSR_OK);
	assert_int_equal(vm->gpmu->vcpu[0].pending, 0);
	assert_true(core_counts(gp_pmc(vm, 2)));
	vpmu_vm_destroy(vm);
}

/* A snapshot taken between the write and the entry holds the programmed state. */
static void
save_flushes_pending_controls(void **state)
{
	vpmu_vm *vm = vm_with("intel-v2"), *vm2 = vm_with("intel-v2");
	size_t len = 0;
	void *buf;

	(void)state;
	wr(vm, EVTSEL(0), INSTR);
	assert_int_equal(vpmu_vm_save(vm, NULL, &len), ENOSPC);
	assert_non_null(buf = malloc(len));
	assert_int_equal(vpmu_vm_save(vm, buf, &len), 0);
	assert_int_equal(vm->gpmu->vcpu[0].pending, 0);
	assert_true(core_counts(gp_pmc(vm, 0)));
	assert_int_equal(vpmu_vm_restore(vm2, buf, len), 0);
	assert_int_equal(vm2->gpmu->vcpu[0].pending, 0);
	assert_true(core_counts(gp_pmc(vm2, 0)));
	assert_int_equal(vpmu_synthetic_advance(vm2, 0, 1 * MS), 0);
	assert_int_equal(rd(vm2, PMC(0)), 1000);
	free(buf);
	vpmu_vm_destroy(vm);
	vpmu_vm_destroy(vm2);
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(enabling_write_is_read_back_at_once_and_programmed_at_entry),
		cmocka_unit_test(disabling_write_reads_the_exact_count_before_and_after_entry),
		cmocka_unit_test(global_ctrl_write_programs_its_counters_as_one_group),
		cmocka_unit_test(same_value_and_undone_writes),
		cmocka_unit_test(amd_global_ctl_is_deferred_too),
		cmocka_unit_test(msr_write_outside_the_contract_is_immediate),
		cmocka_unit_test(save_flushes_pending_controls),
	};

	return (cmocka_run_group_tests(tests, NULL, NULL));
}
