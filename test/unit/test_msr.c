/*
 * test_msr.c -- the guest-visible MSR models without KVM: every rule of
 * the Intel and AMD tables, on the synthetic source (exact counts), plus
 * model strings and CPUID leaves, and the periods a source is given (a
 * guest counter's wrap, a sampling PMC's next sample).  Names say what is
 * checked.
 */
#include <errno.h>
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <cmocka.h>

#include <vpmu/vpmu.h>
#include <vpmu/model.h>
#include <vpmu/vcpu.h>

#include "fixture.h"
#include "guest_msr.h"

#define MS		1000000ull
#define OK		VPMU_MSR_OK
#define GP		VPMU_MSR_GP

/* Intel MSRs */
#define PMC(i)		(0x0C1u + (i))
#define EVTSEL(i)	(0x186u + (i))
#define FIXED(i)	(0x309u + (i))
#define PERF_CAP	0x345u
#define FIXED_CTRL	0x38Du
#define GSTATUS		0x38Eu
#define GCTRL		0x38Fu
#define GOVF		0x390u
#define APMC(i)		(0x4C1u + (i))
#define EN		(1ull << 22)
#define USR		(1ull << 16)
#define OS		(1ull << 17)
#define INT		(1ull << 20)
#define INSTR		(0xC0ull | OS | USR | EN)

/* AMD MSRs */
#define K7_SEL(i)	(0xC0010000u + (i))
#define K7_CTR(i)	(0xC0010004u + (i))
#define CORE_CTL(i)	(0xC0010200u + 2 * (i))
#define CORE_CTR(i)	(0xC0010201u + 2 * (i))
#define AMD_GSTATUS	0xC0000300u
#define AMD_GCTL	0xC0000301u
#define AMD_GCLR	0xC0000302u
#define AMD_GSET	0xC0000303u

static vpmu_vm *
vm_with(const char *model, unsigned nvcpus)
{
	vpmu_vm *vm = fx_vm_model(model, nvcpus, NULL);

	assert_int_equal(vpmu_synthetic_set_rate(vm, 0, VPMU_EV_INSTRUCTIONS, 1000), 0);
	assert_int_equal(vpmu_synthetic_set_rate(vm, 0, VPMU_EV_BRANCHES, 100), 0);
	assert_int_equal(vpmu_synthetic_set_rate(vm, 0, VPMU_EV_CYCLES, 3000), 0);
	return (vm);
}

static uint64_t
rd(vpmu_vm *vm, unsigned cpu, uint32_t msr)
{
	uint64_t v = 0xBAD;

	assert_int_equal(MSR_READ(vm, cpu, msr, &v), OK);
	return (v);
}

static int
rdres(vpmu_vm *vm, uint32_t msr)
{
	uint64_t v;

	return (MSR_READ(vm, 0, msr, &v));
}

#define WR(vm, msr, v)	assert_int_equal(MSR_WRITE(vm, 0, msr, v), OK)

/* ---- model strings ---------------------------------------------------------- */

static void
model_strings_parse_and_reject(void **state)
{
	static const struct { const char *s; const char *err; } bad[] = {
		{ "intel-v9", "unknown PMU model" },
		{ "", "unknown PMU model" },
		{ "intel-v1:fixed=1", "intel-v1 has no fixed counters" },
		{ "intel-v2:gp=9", "out of range" },
		{ "intel-v2:width=31", "out of range" },
		{ "intel-v2:width=65", "out of range" },
		{ "intel-v2:gp=", "needs a number" },
		{ "intel-v2:gp=-1", "needs a number" },
		{ "intel-v2:gp=4x", "not a number" },
		{ "intel-v2:bogus=1", "unknown key" },
		{ "intel-v2:gp", "not key=value" },
		{ "intel-v2:gp=4,", "empty key" },
		{ "amd-v2:fixed=1", "does not apply" },
		{ "amd-v2:gp=7", "out of range" },
		{ "amd-k7:gp=6", "exactly 4" },
		{ "amd-core:gp=4", "exactly 6" },
		{ "none:gp=1", "none takes no keys" },
	};
	struct vpmu_model m;
	char err[160], buf[160];
	size_t i;

	(void)state;
	for (i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		assert_int_equal(vpmu_model_parse(bad[i].s, &m, err, sizeof(err)), EINVAL);
		if (strstr(err, bad[i].err) == NULL)
			fail_msg("'%s': '%s' lacks '%s'", bad[i].s, err, bad[i].err);
	}
	assert_int_equal(vpmu_model_parse("intel-v5:gp=8,fixed=2,width=40,fw-writes=0,ebx=0x4",
	    &m, err, sizeof(err)), 0);
	assert_int_equal(vpmu_model_format(&m, buf, sizeof(buf)), 0);
	assert_string_equal(buf, "intel-v5:gp=8,fixed=2,width=40,fixed-width=48,fw-writes=0,ebx=0x4");
	/* Models built by hand obey the same rules; a refused one changes nothing. */
	{
		vpmu_config *cfg;
		struct vpmu_model hand;
		struct vpmu_cpuinfo ci;
		struct vpmu_cred root = { .pid = 1, .privileged = 1 };
		vpmu_vm *vm;

		vpmu_model_default(&hand);
		hand.version = 7;
		assert_int_equal(vpmu_model_check(&hand, err, sizeof(err)), EINVAL);
		vpmu_model_default(&hand);
		hand.fixed = 1;
		hand.version = 1;
		assert_int_equal(vpmu_model_check(&hand, err, sizeof(err)), EINVAL);
		assert_non_null(strstr(err, "intel-v1 has no fixed counters"));
		assert_int_equal(vpmu_model_parse("none", &hand, err, sizeof(err)), 0);
		hand.gp = 2;
		assert_int_equal(vpmu_model_check(&hand, err, sizeof(err)), EINVAL);
		assert_int_equal(vpmu_config_create(&cfg), 0);
		assert_int_equal(vpmu_config_set_model(cfg, &hand), EINVAL);
		assert_int_equal(vpmu_vm_create(cfg, &vm), 0);	/* unchanged config */
		assert_int_equal(vpmu_vm_get_cpuinfo(vm, &root, &ci), 0);
		assert_int_equal(ci.npmc, 23);
		vpmu_vm_destroy(vm);
		vpmu_config_destroy(cfg);
	}
	vpmu_model_default(&m);
	assert_string_equal(m.name, "intel-v2");
	assert_int_equal(m.gp, 4);
	assert_int_equal(m.fixed, 3);
	assert_int_equal(m.width, 48);
	assert_int_equal(vpmu_model_parse("amd-v2:gp=3", &m, err, sizeof(err)), 0);
	assert_int_equal(m.vendor, VPMU_VENDOR_AMD);
	assert_int_equal(m.version, 2);
	assert_int_equal(m.width, 48);
}

/* ---- Intel -------------------------------------------------------------- */

static void
intel_counter_counts_only_when_enabled_exactly(void **state)
{
	vpmu_vm *vm = vm_with("intel-v2", 1);

	(void)state;
	WR(vm, EVTSEL(0), INSTR);		/* GLOBAL_CTRL resets with GP bits set */
	assert_int_equal(vpmu_synthetic_advance(vm, 0, 2 * MS), 0);
	assert_int_equal(rd(vm, 0, PMC(0)), 2000);
	WR(vm, EVTSEL(0), INSTR & ~EN);		/* disabled counter does not count */
	assert_int_equal(vpmu_synthetic_advance(vm, 0, 5 * MS), 0);
	assert_int_equal(rd(vm, 0, PMC(0)), 2000);
	WR(vm, EVTSEL(0), 0xC0 | EN);		/* neither USR nor OS: nothing */
	assert_int_equal(vpmu_synthetic_advance(vm, 0, 1 * MS), 0);
	assert_int_equal(rd(vm, 0, PMC(0)), 2000);
	WR(vm, EVTSEL(1), 0xC4 | OS | EN);	/* branches */
	WR(vm, GCTRL, 0x2);			/* only counter 1 globally enabled */
	WR(vm, EVTSEL(0), INSTR);
	assert_int_equal(vpmu_synthetic_advance(vm, 0, 3 * MS), 0);
	assert_int_equal(rd(vm, 0, PMC(0)), 2000);
	assert_int_equal(rd(vm, 0, PMC(1)), 300);
	vpmu_vm_destroy(vm);
}

static void
intel_write_dead_read_dead_and_write_while_running(void **state)
{
	vpmu_vm *vm = vm_with("intel-v2", 1);

	(void)state;
	WR(vm, PMC(2), 0xdead);
	assert_int_equal(rd(vm, 0, PMC(2)), 0xdead);
	WR(vm, EVTSEL(0), INSTR);
	assert_int_equal(vpmu_synthetic_advance(vm, 0, 1 * MS), 0);
	WR(vm, PMC(0), 5);			/* takes effect while running */
	assert_int_equal(vpmu_synthetic_advance(vm, 0, 1 * MS), 0);
	assert_int_equal(rd(vm, 0, PMC(0)), 1005);
	vpmu_vm_destroy(vm);
}

static void
intel_legacy_write_sign_extends_bit31(void **state)
{
	vpmu_vm *vm = vm_with("intel-v2", 1);

	(void)state;
	WR(vm, PMC(0), 0xff0123456789ull);	/* bits 63:32 dropped, bit 31 clear */
	assert_int_equal(rd(vm, 0, PMC(0)), 0x23456789);
	WR(vm, PMC(0), 0x80000000ull);		/* bit 31 set: extends to width */
	assert_int_equal(rd(vm, 0, PMC(0)), 0xFFFF80000000ull);
	assert_int_equal(rd(vm, 0, APMC(0)), 0xFFFF80000000ull);
	vpmu_vm_destroy(vm);
}

static void
intel_full_width_writes_and_their_gp(void **state)
{
	vpmu_vm *vm = vm_with("intel-v2", 1), *nofw;

	(void)state;
	WR(vm, APMC(1), 0xff0123456789ull);	/* within 48 bits: exact */
	assert_int_equal(rd(vm, 0, PMC(1)), 0xff0123456789ull);
	assert_int_equal(rd(vm, 0, APMC(1)), 0xff0123456789ull);
	assert_int_equal(MSR_WRITE(vm, 0, APMC(1), 1ull << 48), GP);
	assert_int_equal(rd(vm, 0, PERF_CAP), 1ull << 13);
	assert_int_equal(MSR_WRITE(vm, 0, PERF_CAP, 1ull << 13), GP);
	nofw = vm_with("intel-v2:fw-writes=0", 1);
	assert_int_equal(rdres(nofw, APMC(0)), GP);
	assert_int_equal(MSR_WRITE(nofw, 0, APMC(0), 1), GP);
	assert_int_equal(rdres(nofw, PERF_CAP), GP);
	vpmu_vm_destroy(nofw);
	vpmu_vm_destroy(vm);
}

static void
intel_counters_beyond_the_advertised_number_gp(void **state)
{
	vpmu_vm *vm = vm_with("intel-v2:gp=2,fixed=1", 1);
	uint32_t i;

	(void)state;
	for (i = 0; i < 8; i++) {
		int want = i < 2 ? OK : GP;

		assert_int_equal(rdres(vm, PMC(i)), want);
		assert_int_equal(MSR_WRITE(vm, 0, PMC(i), 0xffff), want);
		assert_int_equal(MSR_WRITE(vm, 0, EVTSEL(i), 0), want);
		assert_int_equal(rdres(vm, APMC(i)), want);
	}
	/* 0xC1/0xC2 included: no KVM-style leniency. */
	assert_int_equal(rdres(vm, FIXED(0)), OK);
	assert_int_equal(rdres(vm, FIXED(1)), GP);
	assert_int_equal(rdres(vm, FIXED(3)), GP);
	/* Unsupported fixed counter in FIXED_CTR_CTRL and GLOBAL_CTRL: #GP. */
	assert_int_equal(MSR_WRITE(vm, 0, FIXED_CTRL, 0x30), GP);
	assert_int_equal(MSR_WRITE(vm, 0, GCTRL, 1ull << 33), GP);
	assert_int_equal(MSR_WRITE(vm, 0, GCTRL, 1ull << 2), GP);
	WR(vm, GCTRL, (1ull << 32) | 0x3);
	vpmu_vm_destroy(vm);
}

static void
intel_reserved_evtsel_bits_gp(void **state)
{
	vpmu_vm *vm = vm_with("intel-v2", 1);
	unsigned b;

	(void)state;
	for (b = 32; b < 64; b++)
		assert_int_equal(MSR_WRITE(vm, 0, EVTSEL(0), 1ull << b), GP);
	assert_int_equal(MSR_WRITE(vm, 0, EVTSEL(0), 1ull << 21), GP);	/* AnyThread */
	WR(vm, EVTSEL(0), 0xFFDFFFFFull);	/* everything else is fine */
	assert_int_equal(rd(vm, 0, EVTSEL(0)), 0xFFDFFFFFull);
	/* FIXED_CTR_CTRL: bits 0, 1, 3 per nibble; AnyThread bit 2 #GPs. */
	assert_int_equal(MSR_WRITE(vm, 0, FIXED_CTRL, 0x4), GP);
	assert_int_equal(MSR_WRITE(vm, 0, FIXED_CTRL, 1ull << 12), GP);
	WR(vm, FIXED_CTRL, 0xBBB);
	assert_int_equal(rd(vm, 0, FIXED_CTRL), 0xBBB);
	vpmu_vm_destroy(vm);
}

static void
intel_global_ctrl_reset_value_and_status_rules(void **state)
{
	vpmu_vm *vm = vm_with("intel-v2:gp=3", 1);

	(void)state;
	assert_int_equal(rd(vm, 0, GCTRL), 0x7);	/* bits n-1:0 */
	assert_int_equal(rd(vm, 0, GSTATUS), 0);
	assert_int_equal(MSR_WRITE(vm, 0, GSTATUS, 0), GP);	/* read-only */
	assert_int_equal(rd(vm, 0, GOVF), 0);
	assert_int_equal(MSR_WRITE(vm, 0, GOVF, 1ull << 3), GP);	/* no counter 3 */
	WR(vm, GOVF, (1ull << 62) | (1ull << 63) | 0x7 | (0x7ull << 32));
	vpmu_vm_destroy(vm);
}

static void
intel_v1_has_no_fixed_counters_and_no_global_msrs(void **state)
{
	vpmu_vm *vm = vm_with("intel-v1", 1);
	uint32_t regs[4];

	(void)state;
	assert_int_equal(rdres(vm, FIXED(0)), GP);
	assert_int_equal(rdres(vm, FIXED_CTRL), GP);
	assert_int_equal(rdres(vm, GSTATUS), GP);
	assert_int_equal(rdres(vm, GCTRL), GP);
	assert_int_equal(rdres(vm, GOVF), GP);
	/* EN alone enables a v1 counter. */
	WR(vm, EVTSEL(0), INSTR);
	assert_int_equal(vpmu_synthetic_advance(vm, 0, 1 * MS), 0);
	assert_int_equal(rd(vm, 0, PMC(0)), 1000);
	assert_int_equal(vpmu_cpuid_get_leaf(vm, 0xA, 0, regs), 0);
	assert_int_equal(regs[0], 0x07300401u);
	assert_int_equal(regs[3], 0);
	vpmu_vm_destroy(vm);
}

static void
intel_fixed_counters_count_their_events(void **state)
{
	vpmu_vm *vm = vm_with("intel-v2", 1);

	(void)state;
	WR(vm, FIXED_CTRL, 0x033);		/* fixed 0 and 1: OS|USR */
	WR(vm, GCTRL, 0x3ull << 32);
	assert_int_equal(vpmu_synthetic_advance(vm, 0, 2 * MS), 0);
	assert_int_equal(rd(vm, 0, FIXED(0)), 2000);	/* instructions */
	assert_int_equal(rd(vm, 0, FIXED(1)), 6000);	/* cycles */
	assert_int_equal(rd(vm, 0, FIXED(2)), 0);
	vpmu_vm_destroy(vm);
}

static void
intel_overflow_from_preset_ends_at_one_with_status_and_pmi_iff_int(void **state)
{
	vpmu_vm *vm = vm_with("intel-v2", 1);
	uint64_t mask = (1ull << 48) - 1;

	(void)state;
	/* Counter 0 without INT, counter 1 with INT; each preset to 1 - 2000. */
	WR(vm, APMC(0), (1 - 2000ull) & mask);
	WR(vm, APMC(1), (1 - 2000ull) & mask);
	WR(vm, EVTSEL(0), INSTR);
	WR(vm, EVTSEL(1), INSTR | INT);
	assert_int_equal(vpmu_synthetic_advance(vm, 0, 2 * MS), 0);
	assert_int_equal(vpmu_vcpu_check_overflow(vm, 0), 0);
	assert_int_equal(rd(vm, 0, PMC(0)), 1);
	assert_int_equal(rd(vm, 0, PMC(1)), 1);
	assert_int_equal(rd(vm, 0, GSTATUS), 0x3);
	assert_int_equal(TAKE_PMI(vm, 0), 1);
	assert_int_equal(TAKE_PMI(vm, 0), 0);
	WR(vm, GOVF, 0x1);
	assert_int_equal(rd(vm, 0, GSTATUS), 0x2);
	/* Reaching all-ones is not an overflow; the next event is. */
	WR(vm, GOVF, 0x3);
	WR(vm, EVTSEL(1), 0);
	WR(vm, APMC(0), mask - 1000);
	assert_int_equal(vpmu_synthetic_advance(vm, 0, 1 * MS), 0);
	assert_int_equal(vpmu_vcpu_check_overflow(vm, 0), 0);
	assert_int_equal(rd(vm, 0, PMC(0)), mask);
	assert_int_equal(rd(vm, 0, GSTATUS), 0);
	assert_int_equal(vpmu_synthetic_advance(vm, 0, 1000), 0);	/* 1 event */
	assert_int_equal(vpmu_vcpu_check_overflow(vm, 0), 0);
	assert_int_equal(rd(vm, 0, PMC(0)), 0);
	assert_int_equal(rd(vm, 0, GSTATUS), 0x1);
	/* Without INT anywhere: status, no PMI. */
	WR(vm, EVTSEL(1), INSTR);
	WR(vm, GOVF, 0x3);
	WR(vm, APMC(0), mask);
	assert_int_equal(vpmu_synthetic_advance(vm, 0, 1 * MS), 0);
	assert_int_equal(vpmu_vcpu_check_overflow(vm, 0), 0);
	assert_int_equal(rd(vm, 0, GSTATUS), 0x1);
	assert_int_equal(TAKE_PMI(vm, 0), 0);
	vpmu_vm_destroy(vm);
}

static void
intel_reset_returns_every_msr_to_its_reset_value(void **state)
{
	vpmu_vm *vm = vm_with("intel-v2", 2);

	(void)state;
	WR(vm, EVTSEL(0), INSTR);
	WR(vm, PMC(3), 77);
	WR(vm, FIXED_CTRL, 0xB);
	WR(vm, GCTRL, 0);
	WR(vm, APMC(0), (1ull << 48) - 1);
	WR(vm, GCTRL, 1);
	assert_int_equal(vpmu_synthetic_advance(vm, 0, 1 * MS), 0);
	assert_int_equal(vpmu_vcpu_check_overflow(vm, 0), 0);
	assert_int_not_equal(rd(vm, 0, GSTATUS), 0);
	assert_int_equal(vpmu_vcpu_reset(vm, 0), 0);
	assert_int_equal(rd(vm, 0, EVTSEL(0)), 0);
	assert_int_equal(rd(vm, 0, PMC(0)), 0);
	assert_int_equal(rd(vm, 0, PMC(3)), 0);
	assert_int_equal(rd(vm, 0, FIXED_CTRL), 0);
	assert_int_equal(rd(vm, 0, GSTATUS), 0);
	assert_int_equal(rd(vm, 0, GCTRL), 0xF);
	assert_int_equal(vpmu_synthetic_advance(vm, 0, 1 * MS), 0);
	assert_int_equal(rd(vm, 0, PMC(0)), 0);		/* no longer counting */
	vpmu_vm_destroy(vm);
}

static void
intel_vcpus_count_independently(void **state)
{
	vpmu_vm *vm = vm_with("intel-v2", 2);

	(void)state;
	assert_int_equal(vpmu_synthetic_set_rate(vm, 1, VPMU_EV_INSTRUCTIONS, 7), 0);
	WR(vm, EVTSEL(0), INSTR);
	assert_int_equal(MSR_WRITE(vm, 1, EVTSEL(0), INSTR), OK);
	assert_int_equal(vpmu_synthetic_advance(vm, 0, 1 * MS), 0);
	assert_int_equal(vpmu_synthetic_advance(vm, 1, 3 * MS), 0);
	assert_int_equal(rd(vm, 0, PMC(0)), 1000);
	assert_int_equal(rd(vm, 1, PMC(0)), 21);
	vpmu_vm_destroy(vm);
}

static void
intel_cpuid_leaf_0xa_as_the_model_says(void **state)
{
	vpmu_vm *vm = vm_with("intel-v5:gp=6,fixed=2,width=40,fixed-width=44,ebx=0x45", 1);
	uint32_t regs[4] = { 0 };

	(void)state;
	assert_int_equal(vpmu_cpuid_get_leaf(vm, 0xA, 0, regs), 0);
	assert_int_equal(regs[0], 0x07280605u);		/* len 7, width 40, 6 GP, v5 */
	assert_int_equal(regs[1], 0x45);
	assert_int_equal(regs[2], 0x3);			/* fixed bitmap */
	assert_int_equal(regs[3], 2u | 44u << 5);
	regs[2] = 0;
	vpmu_cpuid_adjust(vm, 0x1, 0, regs);
	assert_int_equal(regs[2], 1u << 15);		/* PDCM */
	regs[0] = 0xAAAA;
	assert_int_equal(vpmu_cpuid_get_leaf(vm, 0x7, 0, regs), ENOENT);
	assert_int_equal(regs[0], 0xAAAA);		/* not the model's leaf: untouched */
	assert_int_equal(vpmu_cpuid_get_leaf(NULL, 0xA, 0, regs), EINVAL);
	assert_int_equal(vpmu_cpuid_get_leaf(vm, 0xA, 0, NULL), EINVAL);
	vpmu_vm_destroy(vm);
}

static void
other_vendor_and_none_models_gp_every_pmu_msr(void **state)
{
	vpmu_vm *intel = vm_with("intel-v2", 1), *none = vm_with("none", 1);
	uint32_t regs[4] = { 1, 1, 1, 1 };
	enum vpmu_msr_verdict vd;
	uint64_t v;

	(void)state;
	assert_int_equal(rdres(intel, K7_SEL(0)), GP);
	assert_int_equal(rdres(intel, CORE_CTR(0)), GP);
	assert_int_equal(rdres(none, PMC(0)), GP);
	assert_int_equal(rdres(none, K7_CTR(0)), GP);
	assert_int_equal(rdres(none, GCTRL), GP);
	assert_int_equal(rdres(intel, 0x10), VPMU_MSR_NOT_PMU);	/* TSC */
	assert_int_equal(vpmu_msr_read(NULL, 0, PMC(0), &v, &vd), EINVAL);
	assert_int_equal(vpmu_msr_read(intel, 1, PMC(0), &v, &vd), EINVAL);
	assert_int_equal(vpmu_cpuid_get_leaf(none, 0xA, 0, regs), 0);
	assert_int_equal(regs[0] | regs[1] | regs[2] | regs[3], 0);
	vpmu_vm_destroy(none);
	vpmu_vm_destroy(intel);
}

/*
 * The call's errno apart from the guest's verdict: EINVAL for a missing
 * VM, vCPU or out pointer, and the verdict left as it was; a #GP is a
 * verdict, never an errno.
 */
static void
msr_access_and_take_pmi_EINVAL(void **state)
{
	vpmu_vm *vm = vm_with("intel-v2", 1);
	enum vpmu_msr_verdict vd = VPMU_MSR_NOT_PMU;
	uint64_t v = 0xBAD;
	int pending = -1;

	(void)state;
	assert_int_equal(vpmu_msr_read(vm, 0, PMC(0), NULL, &vd), EINVAL);
	assert_int_equal(vpmu_msr_read(vm, 0, PMC(0), &v, NULL), EINVAL);
	assert_int_equal(vpmu_msr_write(NULL, 0, EVTSEL(0), INSTR, &vd), EINVAL);
	assert_int_equal(vpmu_msr_write(vm, 1, EVTSEL(0), INSTR, &vd), EINVAL);
	assert_int_equal(vpmu_msr_write(vm, 0, EVTSEL(0), INSTR, NULL), EINVAL);
	assert_int_equal(vd, VPMU_MSR_NOT_PMU);
	assert_int_equal(v, 0xBAD);
	assert_int_equal(rd(vm, 0, EVTSEL(0)), 0);	/* the write was not made */
	assert_int_equal(vpmu_msr_write(vm, 0, GSTATUS, 0, &vd), 0);
	assert_int_equal(vd, GP);
	assert_int_equal(vpmu_vcpu_take_pmi(NULL, 0, &pending), EINVAL);
	assert_int_equal(vpmu_vcpu_take_pmi(vm, 1, &pending), EINVAL);
	assert_int_equal(vpmu_vcpu_take_pmi(vm, 0, NULL), EINVAL);
	assert_int_equal(pending, -1);
	assert_int_equal(vpmu_vcpu_take_pmi(vm, 0, &pending), 0);
	assert_int_equal(pending, 0);
	vpmu_vm_destroy(vm);
}

/* ---- AMD -------------------------------------------------------------------- */

static void
amd_k7_msrs_alias_the_first_four_core_counters(void **state)
{
	vpmu_vm *vm = vm_with("amd-core", 1);

	(void)state;
	WR(vm, K7_CTR(2), 0x1234);
	assert_int_equal(rd(vm, 0, CORE_CTR(2)), 0x1234);
	WR(vm, CORE_CTL(3), 0xC0 | OS | USR | EN);
	assert_int_equal(rd(vm, 0, K7_SEL(3)), 0xC0 | OS | USR | EN);
	assert_int_equal(vpmu_synthetic_advance(vm, 0, 2 * MS), 0);
	assert_int_equal(rd(vm, 0, K7_CTR(3)), 2000);
	/* Counters 4 and 5 exist only as core-extension MSRs. */
	WR(vm, CORE_CTL(5), 0xC2 | OS | EN);
	assert_int_equal(vpmu_synthetic_advance(vm, 0, 1 * MS), 0);
	assert_int_equal(rd(vm, 0, CORE_CTR(5)), 100);
	vpmu_vm_destroy(vm);
}

static void
amd_reserved_bits_are_dropped_never_gp(void **state)
{
	vpmu_vm *vm = vm_with("amd-v2", 1);

	(void)state;
	WR(vm, K7_SEL(0), ~0ull);
	assert_int_equal(rd(vm, 0, K7_SEL(0)), ~0xFFFFFFF000280000ull);
	WR(vm, CORE_CTR(1), ~0ull);			/* 48 bits, no sign extension */
	assert_int_equal(rd(vm, 0, CORE_CTR(1)), (1ull << 48) - 1);
	WR(vm, K7_CTR(1), 0x80000000ull);
	assert_int_equal(rd(vm, 0, K7_CTR(1)), 0x80000000ull);
	WR(vm, AMD_GCTL, ~0ull);
	assert_int_equal(rd(vm, 0, AMD_GCTL), 0x3F);
	WR(vm, AMD_GSTATUS, ~0ull);			/* ignored */
	assert_int_equal(rd(vm, 0, AMD_GSTATUS), 0);
	WR(vm, AMD_GSET, 0x5);
	assert_int_equal(rd(vm, 0, AMD_GSTATUS), 0x5);
	WR(vm, AMD_GCLR, 0x1);
	assert_int_equal(rd(vm, 0, AMD_GSTATUS), 0x4);
	assert_int_equal(rd(vm, 0, AMD_GCLR), 0);
	vpmu_vm_destroy(vm);
}

static void
amd_absent_counters_and_msrs_gp(void **state)
{
	vpmu_vm *k7 = vm_with("amd-k7", 1), *v2 = vm_with("amd-v2:gp=2", 1);

	(void)state;
	assert_int_equal(rdres(k7, CORE_CTL(0)), GP);		/* no core extension */
	assert_int_equal(rdres(k7, AMD_GCTL), GP);		/* no PerfMonV2 */
	assert_int_equal(rdres(k7, K7_CTR(3)), OK);
	assert_int_equal(rdres(v2, CORE_CTR(1)), OK);
	assert_int_equal(rdres(v2, CORE_CTR(2)), GP);
	assert_int_equal(rdres(v2, K7_SEL(2)), GP);
	assert_int_equal(rdres(k7, PMC(0)), GP);		/* Intel MSRs */
	vpmu_vm_destroy(v2);
	vpmu_vm_destroy(k7);
}

static void
amd_v2_global_enable_overflow_and_cpuid(void **state)
{
	vpmu_vm *vm = vm_with("amd-v2", 1);
	uint32_t regs[4] = { 0 };

	(void)state;
	assert_int_equal(rd(vm, 0, AMD_GCTL), 0x3F);		/* reset: GP bits set */
	WR(vm, CORE_CTR(0), (1ull << 48) - 500);
	WR(vm, CORE_CTL(0), 0xC0 | OS | USR | EN | INT);
	WR(vm, AMD_GCTL, 0);
	assert_int_equal(vpmu_synthetic_advance(vm, 0, 1 * MS), 0);
	assert_int_equal(rd(vm, 0, CORE_CTR(0)), (1ull << 48) - 500);	/* globally off */
	WR(vm, AMD_GCTL, 1);
	assert_int_equal(vpmu_synthetic_advance(vm, 0, 1 * MS), 0);
	assert_int_equal(vpmu_vcpu_check_overflow(vm, 0), 0);
	assert_int_equal(rd(vm, 0, CORE_CTR(0)), 500);
	assert_int_equal(rd(vm, 0, AMD_GSTATUS), 1);
	assert_int_equal(TAKE_PMI(vm, 0), 1);
	assert_int_equal(vpmu_cpuid_get_leaf(vm, 0x80000022, 0, regs), 0);
	assert_int_equal(regs[0], 1);
	assert_int_equal(regs[1], 6);
	assert_int_equal(vpmu_cpuid_get_leaf(vm, 0xA, 0, regs), 0);
	assert_int_equal(regs[0], 0);
	regs[2] = 0;
	vpmu_cpuid_adjust(vm, 0x80000001, 0, regs);
	assert_int_equal(regs[2], 1u << 23);
	vpmu_vm_destroy(vm);
}

static void
counters_report_names_events_and_unsupported_ones(void **state)
{
	vpmu_vm *vm = vm_with("intel-v2", 1);
	struct vpmu_counter_info ci[8];
	unsigned n = 8, small = 2;

	(void)state;
	WR(vm, EVTSEL(0), INSTR);
	WR(vm, EVTSEL(1), 0x412E | OS | EN);		/* LLC misses: not in the model */
	WR(vm, EVTSEL(2), 0xC0 | OS | EN | (1ull << 18));	/* EDGE: synthetic cannot */
	assert_int_equal(vpmu_synthetic_advance(vm, 0, 1 * MS), 0);
	assert_int_equal(vpmu_vcpu_get_counters(vm, 0, ci, &small), EINVAL);
	assert_int_equal(small, 7);
	assert_int_equal(vpmu_vcpu_get_counters(vm, 0, ci, &n), 0);
	assert_int_equal(n, 7);
	assert_string_equal(ci[0].name, "IA32_PMC0");
	assert_string_equal(ci[0].event, "instructions");
	assert_int_equal(ci[0].value, 1000);
	assert_int_equal(ci[0].used, 1);
	assert_int_equal(ci[0].time_enabled, 1 * MS);
	assert_string_equal(ci[1].event, "raw 0x412e");
	assert_int_equal(ci[1].value, 0);
	assert_int_equal(ci[2].unsupported, 1);
	assert_non_null(strstr(ci[2].why, "EDGE"));
	assert_int_equal(ci[2].value, 0);
	assert_int_equal(ci[3].used, 0);
	assert_string_equal(ci[4].name, "IA32_FIXED_CTR0");
	vpmu_vm_destroy(vm);
}

/* counted: the events over the counter's life, across the guest's writes. */
static void
counters_report_counted_across_writes(void **state)
{
	vpmu_vm *vm = vm_with("intel-v2", 1);
	struct vpmu_counter_info ci[8];
	unsigned n = 8;

	(void)state;
	WR(vm, EVTSEL(0), INSTR);
	assert_int_equal(vpmu_synthetic_advance(vm, 0, 1 * MS), 0);
	WR(vm, PMC(0), 5);			/* a driver sets its start */
	assert_int_equal(vpmu_synthetic_advance(vm, 0, 1 * MS), 0);
	assert_int_equal(vpmu_vcpu_get_counters(vm, 0, ci, &n), 0);
	assert_int_equal(ci[0].value, 1005);
	assert_int_equal(ci[0].counted, 2000);
	WR(vm, EVTSEL(0), 0);			/* stopped: counted holds */
	WR(vm, PMC(0), 0);
	assert_int_equal(vpmu_synthetic_advance(vm, 0, 1 * MS), 0);
	n = 8;
	assert_int_equal(vpmu_vcpu_get_counters(vm, 0, ci, &n), 0);
	assert_int_equal(ci[0].value, 0);
	assert_int_equal(ci[0].counted, 2000);
	assert_int_equal(ci[1].counted, 0);	/* never counted */
	vpmu_vm_destroy(vm);
}

static void
guest_counters_hold_their_rows_for_the_guest(void **state)
{
	vpmu_vm *vm = vm_with("intel-v2", 1);
	struct vpmu_cred root = { .pid = 1, .privileged = 1 };
	struct vpmu_pmc_alloc a = { .cpu = 0, .cls = VPMU_CLASS_IAP,
	    .event = VPMU_EV_INSTRUCTIONS, .mode = VPMU_MODE_SC };
	struct vpmu_pmc_info pi[32];
	uint32_t n = 32;

	(void)state;
	/* hwpmc operations allocate from the paravirtual class. */
	assert_int_equal(vpmu_pmc_allocate(vm, &root, &a), EINVAL);
	a.cls = VPMU_CLASS_PV;
	assert_int_equal(vpmu_pmc_allocate(vm, &root, &a), 0);
	assert_int_equal(vpmu_vm_get_pmcinfo(vm, &root, 0, pi, &n), 0);
	assert_int_equal(pi[0].rowdisp, VPMU_DISP_STANDALONE);
	assert_int_equal(pi[0].ownerpid, 0);
	vpmu_vm_destroy(vm);
}

/*
 * A source whose counters all read rec_value (0 unless a test sets it) and
 * that records the periods it is given.
 */
static uint64_t last_period, rec_value;
static unsigned nperiods;

static int rec_init(void **s, unsigned n, void *a) { (void)n; (void)a; *s = &last_period; return (0); }
static void rec_fini(void *s) { (void)s; }
static int rec_supports(void *s, const struct vpmu_event_spec *ev, char *w, size_t l)
{ (void)s; (void)ev; (void)w; (void)l; return (0); }
static int rec_open(void *s, unsigned c, pid_t t, const struct vpmu_event_spec *ev, void **ctr)
{ (void)s; (void)c; (void)t; (void)ev; *ctr = &nperiods; return (0); }
static void rec_close(void *s, void *c) { (void)s; (void)c; }
static int rec_onoff(void *s, void *c) { (void)s; (void)c; return (0); }
static int rec_read(void *s, void *c, struct vpmu_count *o)
{ (void)s; (void)c; memset(o, 0, sizeof(*o)); o->value = rec_value; return (0); }
static int rec_period(void *s, void *c, uint64_t p) { (void)s; (void)c; last_period = p; nperiods++; return (0); }

static const struct vpmu_source_ops recorder = {
	.name = "recorder", .init = rec_init, .fini = rec_fini, .supports = rec_supports,
	.open = rec_open, .close = rec_close, .enable = rec_onoff, .disable = rec_onoff,
	.read = rec_read, .set_period = rec_period,
};

static void
interrupting_source_is_given_events_left_before_the_wrap(void **state)
{
	struct vpmu_model m;
	vpmu_config *cfg;
	vpmu_vm *vm;

	(void)state;
	assert_int_equal(vpmu_model_parse("intel-v2:width=40", &m, NULL, 0), 0);
	assert_int_equal(vpmu_config_create(&cfg), 0);
	assert_int_equal(vpmu_config_set_model(cfg, &m), 0);
	assert_int_equal(vpmu_config_set_source(cfg, &recorder, NULL), 0);
	assert_int_equal(vpmu_vm_create(cfg, &vm), 0);
	vpmu_config_destroy(cfg);
	nperiods = 0;
	WR(vm, APMC(0), (1ull << 40) - 100);	/* 100 events to the wrap */
	WR(vm, EVTSEL(0), INSTR);
	assert_int_equal(nperiods, 1);
	assert_int_equal(last_period, 100);
	WR(vm, PMC(0), 0);			/* a write while running re-arms it */
	assert_int_equal(nperiods, 2);
	assert_int_equal(last_period, 1ull << 40);
	vpmu_vm_destroy(vm);
}

/* An exit of vCPU 0 as the glue reports one, its registers given: a sample if due. */
static void
exit_at(vpmu_vm *vm, uint64_t rip)
{
	struct vpmu_regs r;
	struct vpmu_exit x;

	memset(&r, 0, sizeof(r));
	r.rip = rip;
	memset(&x, 0, sizeof(x));
	x.reason = VPMU_EXIT_OTHER;
	x.regs = &r;
	assert_int_equal(vpmu_vcpu_exit(vm, 0, &x), 0);
}

/*
 * A sampling PMC (system mode, reload 1000) tells the source the events
 * left to its next sample: the reload when it starts; after each sample
 * the reload less what it counted past the sample's point; 1 while another
 * sample is already due (it comes at the next exit).
 */
static void
sampling_pmc_is_given_events_left_to_its_next_sample(void **state)
{
	struct vpmu_pmc_alloc a = { .cpu = 0, .cls = VPMU_CLASS_PV,
	    .event = VPMU_EV_INSTRUCTIONS, .mode = VPMU_MODE_SS, .count = 1000 };
	struct vpmu_cred root = { .pid = 1, .privileged = 1 };
	struct vpmu_op_configurelog cl = { .flags = 0 };
	struct vpmu_vcpu_stats st;
	char path[] = "/tmp/vpmu-test-msr-XXXXXX";
	vpmu_config *cfg;
	vpmu_vm *vm;

	(void)state;
	assert_int_equal(vpmu_config_create(&cfg), 0);
	assert_int_equal(vpmu_config_set_source(cfg, &recorder, NULL), 0);
	assert_int_equal(vpmu_vm_create(cfg, &vm), 0);
	vpmu_config_destroy(cfg);
	assert_true((cl.logfd = mkstemp(path)) >= 0);
	unlink(path);
	assert_int_equal(vpmu_vm_op(vm, &root, VPMU_OP_CONFIGURELOG, &cl), 0);
	assert_int_equal(vpmu_pmc_allocate(vm, &root, &a), 0);
	rec_value = 500;			/* the counter's value when it starts */
	nperiods = 0;
	assert_int_equal(vpmu_pmc_start(vm, &root, a.pmcid), 0);
	assert_int_equal(nperiods, 1);
	assert_int_equal(last_period, 1000);
	exit_at(vm, 0x1000);			/* 999 of 1000: no sample */
	rec_value = 1499;
	exit_at(vm, 0x1000);
	assert_int_equal(nperiods, 1);
	rec_value = 1500;			/* exactly due */
	exit_at(vm, 0x1000);
	assert_int_equal(nperiods, 2);
	assert_int_equal(last_period, 1000);
	rec_value = 2800;			/* 300 past the next one */
	exit_at(vm, 0x1000);
	assert_int_equal(nperiods, 3);
	assert_int_equal(last_period, 700);
	rec_value = 5500;			/* 3000 since the last: 3 due */
	exit_at(vm, 0x1000);
	assert_int_equal(last_period, 1);
	exit_at(vm, 0x1000);
	assert_int_equal(last_period, 1);
	exit_at(vm, 0x1000);
	assert_int_equal(nperiods, 6);
	assert_int_equal(last_period, 1000);
	exit_at(vm, 0x1000);			/* none due */
	assert_int_equal(nperiods, 6);
	assert_int_equal(vpmu_vcpu_get_stats(vm, 0, &st), 0);
	assert_int_equal(st.samples, 5);
	rec_value = 0;
	vpmu_vm_destroy(vm);
	close(cl.logfd);
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(model_strings_parse_and_reject),
		cmocka_unit_test(intel_counter_counts_only_when_enabled_exactly),
		cmocka_unit_test(intel_write_dead_read_dead_and_write_while_running),
		cmocka_unit_test(intel_legacy_write_sign_extends_bit31),
		cmocka_unit_test(intel_full_width_writes_and_their_gp),
		cmocka_unit_test(intel_counters_beyond_the_advertised_number_gp),
		cmocka_unit_test(intel_reserved_evtsel_bits_gp),
		cmocka_unit_test(intel_global_ctrl_reset_value_and_status_rules),
		cmocka_unit_test(intel_v1_has_no_fixed_counters_and_no_global_msrs),
		cmocka_unit_test(intel_fixed_counters_count_their_events),
		cmocka_unit_test(intel_overflow_from_preset_ends_at_one_with_status_and_pmi_iff_int),
		cmocka_unit_test(intel_reset_returns_every_msr_to_its_reset_value),
		cmocka_unit_test(intel_vcpus_count_independently),
		cmocka_unit_test(intel_cpuid_leaf_0xa_as_the_model_says),
		cmocka_unit_test(other_vendor_and_none_models_gp_every_pmu_msr),
		cmocka_unit_test(msr_access_and_take_pmi_EINVAL),
		cmocka_unit_test(amd_k7_msrs_alias_the_first_four_core_counters),
		cmocka_unit_test(amd_reserved_bits_are_dropped_never_gp),
		cmocka_unit_test(amd_absent_counters_and_msrs_gp),
		cmocka_unit_test(amd_v2_global_enable_overflow_and_cpuid),
		cmocka_unit_test(counters_report_names_events_and_unsupported_ones),
		cmocka_unit_test(counters_report_counted_across_writes),
		cmocka_unit_test(guest_counters_hold_their_rows_for_the_guest),
		cmocka_unit_test(interrupting_source_is_given_events_left_before_the_wrap),
		cmocka_unit_test(sampling_pmc_is_given_events_left_to_its_next_sample),
	};

	return (cmocka_run_group_tests(tests, NULL, NULL));
}
