/*
 * test_kvm_mode.c -- the KVM glue's PMU modes (vpmu_kvm(3), PMU MODES):
 * the decision on the facts of hosts this machine is not (a host PMU, none,
 * KVM's vPMU off, another vendor, no event-filter capability), kvm mode's
 * CPUID leaves, the MSRs read back from KVM and their report, the core's
 * side of kvm mode (PMU MSRs and the report and filter handed over), and
 * vpmu_kvm_create() agreeing with vpmu_kvm_resolve_pmu_mode() on this host.
 */
#include "fixture.h"

#include <fcntl.h>
#include <sys/ioctl.h>
#include <linux/kvm.h>

#include <vpmu/host.h>
#include <vpmu/kvm.h>
#include <vpmu/model.h>

#include "gpmu.h"
#include "guest_msr.h"
#include "host_internal.h"
#include "kvm_mode.h"

/* An Intel host with a PMU KVM uses: every fact kvm mode needs. */
static struct vpmu_host_info
pmu_host(const char *vendor)
{
	struct vpmu_host_info hi;

	memset(&hi, 0, sizeof(hi));
	hi.cpu.cpuid_ok = 1;
	snprintf(hi.cpu.vendor, sizeof(hi.cpu.vendor), "%s", vendor);
	hi.kvm.present = 1;
	hi.kvm.opened = 1;
	hi.kvm.enable_pmu = 'Y';
	hi.kvm.api_version = 12;
	hi.kvm.cap_user_space_msr = 1;
	hi.kvm.cap_msr_filter = 1;
	hi.kvm.cap_pmu_capability = 1;
	hi.kvm.cap_pmu_event_filter = 1;
	hi.kvm.cap_set_guest_debug = 1;
	hi.kvm.cap_pmu_event_masked = 1;
	hi.perf.hw_instructions_errno = 0;
	snprintf(hi.perf.core_pmu, sizeof(hi.perf.core_pmu), "cpu");
	return (hi);
}

/* An ipc filter, and one with a masked entry. */
static struct vpmu_event_filter ipc, masked;

static void
filters(void)
{
	char why[128];

	assert_int_equal(vpmu_event_filter_preset("ipc", VPMU_VENDOR_INTEL, &ipc), 0);
	assert_int_equal(vpmu_event_filter_parse("allow\nmasked select 0xc0 mask 0xff "
	    "match 0\n", &masked, why, sizeof(why)), 0);
	assert_true(masked.flags & VPMU_FILTER_MASKED);
}

static struct vpmu_model
model(const char *spec)
{
	struct vpmu_model m;

	assert_int_equal(vpmu_model_parse(spec, &m, NULL, 0), 0);
	return (m);
}

static void
resolve_pmu_host(void **state)
{
	struct vpmu_host_info hi = pmu_host("GenuineIntel");
	struct vpmu_model m = model("intel-v2");
	char why[512];
	int mode = -1;

	(void)state;
	filters();
	assert_int_equal(vpmu__kvm_mode_resolve(&hi, &m, VPMU_PMU_MODE_KVM, &ipc, &mode, why,
	    sizeof(why)), 0);
	assert_int_equal(mode, VPMU_PMU_MODE_KVM);
	assert_string_equal(why, "kvm: KVM's vPMU is on (kvm.enable_pmu Y, "
	    "KVM_CAP_PMU_CAPABILITY 0x1) over the host PMU");
	assert_int_equal(vpmu__kvm_mode_resolve(&hi, &m, VPMU_PMU_MODE_AUTO, NULL, &mode, why,
	    sizeof(why)), 0);
	assert_int_equal(mode, VPMU_PMU_MODE_KVM);
	/* Trap asked for: trap, whatever the host. */
	assert_int_equal(vpmu__kvm_mode_resolve(&hi, &m, VPMU_PMU_MODE_TRAP, NULL, &mode, why,
	    sizeof(why)), 0);
	assert_int_equal(mode, VPMU_PMU_MODE_TRAP);
	assert_string_equal(why, "trap: libvpmu implements the guest's counters through "
	    "MSR exits");
	/* An AMD host and an AMD model. */
	hi = pmu_host("AuthenticAMD");
	m = model("amd-v2");
	assert_int_equal(vpmu__kvm_mode_resolve(&hi, &m, VPMU_PMU_MODE_KVM, NULL, &mode, NULL,
	    0), 0);
	assert_int_equal(mode, VPMU_PMU_MODE_KVM);
}

/* This machine's case: no hardware PMU, kvm.enable_pmu N. */
static void
resolve_no_pmu(void **state)
{
	struct vpmu_host_info hi = pmu_host("GenuineIntel");
	struct vpmu_model m = model("intel-v2");
	char why[512];
	int mode = -1;

	(void)state;
	hi.perf.hw_instructions_errno = ENOENT;
	hi.perf.core_pmu[0] = '\0';
	assert_int_equal(vpmu__kvm_mode_resolve(&hi, &m, VPMU_PMU_MODE_KVM, NULL, &mode, why,
	    sizeof(why)), ENODEV);
	assert_int_equal(mode, VPMU_PMU_MODE_TRAP);
	assert_string_equal(why, "kvm mode needs a host PMU: it needs host hardware counters "
	    "and there are none: perf_event_open(PERF_COUNT_HW_INSTRUCTIONS) failed with "
	    "ENOENT");
	assert_int_equal(vpmu__kvm_mode_resolve(&hi, &m, VPMU_PMU_MODE_AUTO, NULL, &mode, why,
	    sizeof(why)), 0);
	assert_int_equal(mode, VPMU_PMU_MODE_TRAP);
	assert_string_equal(why, "trap: kvm mode is not possible: it needs host hardware "
	    "counters and there are none: perf_event_open(PERF_COUNT_HW_INSTRUCTIONS) failed "
	    "with ENOENT");
	/* And KVM's vPMU off as well: both reasons, still ENODEV. */
	hi.kvm.enable_pmu = 'N';
	hi.kvm.cap_pmu_capability = 0;
	assert_int_equal(vpmu__kvm_mode_resolve(&hi, &m, VPMU_PMU_MODE_KVM, NULL, &mode, why,
	    sizeof(why)), ENODEV);
	assert_non_null(strstr(why, "kvm mode needs a host PMU: KVM's vPMU is off: "
	    "kvm.enable_pmu is N and KVM_CAP_PMU_CAPABILITY is 0; "));
}

/* A PMU KVM will not use, or the wrong model: EOPNOTSUPP, EINVAL. */
static void
resolve_refusals(void **state)
{
	struct vpmu_host_info hi = pmu_host("GenuineIntel");
	struct vpmu_model m = model("intel-v2"), none = model("none"), amd = model("amd-core");
	char why[512];
	int mode = -1;

	(void)state;
	filters();
	hi.kvm.enable_pmu = 'N';
	assert_int_equal(vpmu__kvm_mode_resolve(&hi, &m, VPMU_PMU_MODE_KVM, NULL, &mode, why,
	    sizeof(why)), EOPNOTSUPP);
	assert_string_equal(why, "kvm mode is not possible: KVM's vPMU is off: kvm.enable_pmu "
	    "is N");
	hi = pmu_host("GenuineIntel");
	hi.kvm.cap_pmu_event_filter = 0;
	assert_int_equal(vpmu__kvm_mode_resolve(&hi, &m, VPMU_PMU_MODE_KVM, &ipc, &mode, why,
	    sizeof(why)), EOPNOTSUPP);
	assert_string_equal(why, "kvm mode is not possible: KVM cannot take the event filter: "
	    "KVM_CHECK_EXTENSION(KVM_CAP_PMU_EVENT_FILTER) returned 0");
	/* Without a filter that capability does not matter. */
	assert_int_equal(vpmu__kvm_mode_resolve(&hi, &m, VPMU_PMU_MODE_KVM, NULL, &mode, NULL,
	    0), 0);
	/* Masked entries need KVM_CAP_PMU_EVENT_MASKED_EVENTS; auto falls back. */
	hi = pmu_host("GenuineIntel");
	hi.kvm.cap_pmu_event_masked = 0;
	assert_int_equal(vpmu__kvm_mode_resolve(&hi, &m, VPMU_PMU_MODE_KVM, &masked, &mode, why,
	    sizeof(why)), EOPNOTSUPP);
	assert_string_equal(why, "kvm mode is not possible: KVM cannot take the event filter's "
	    "masked entries: KVM_CHECK_EXTENSION(KVM_CAP_PMU_EVENT_MASKED_EVENTS) returned 0");
	assert_int_equal(vpmu__kvm_mode_resolve(&hi, &m, VPMU_PMU_MODE_AUTO, &masked, &mode,
	    NULL, 0), 0);
	assert_int_equal(mode, VPMU_PMU_MODE_TRAP);
	assert_int_equal(vpmu__kvm_mode_resolve(&hi, &m, VPMU_PMU_MODE_KVM, &ipc, &mode, NULL,
	    0), 0);
	assert_int_equal(mode, VPMU_PMU_MODE_KVM);
	hi = pmu_host("GenuineIntel");
	assert_int_equal(vpmu__kvm_mode_resolve(&hi, &amd, VPMU_PMU_MODE_KVM, NULL, &mode, why,
	    sizeof(why)), EINVAL);
	assert_string_equal(why, "kvm mode is not possible: KVM's vPMU is the host CPU's kind, "
	    "Intel, and the model amd-core is AMD's");
	assert_int_equal(vpmu__kvm_mode_resolve(&hi, &none, VPMU_PMU_MODE_KVM, NULL, &mode,
	    why, sizeof(why)), EINVAL);
	assert_string_equal(why, "kvm mode is not possible: the model (none) gives the guest "
	    "no PMU");
	assert_int_equal(vpmu__kvm_mode_resolve(&hi, &none, VPMU_PMU_MODE_AUTO, NULL, &mode,
	    why, sizeof(why)), 0);
	assert_int_equal(mode, VPMU_PMU_MODE_TRAP);
	/* Bad arguments. */
	assert_int_equal(vpmu__kvm_mode_resolve(&hi, &m, 3, NULL, &mode, NULL, 0), EINVAL);
	assert_int_equal(vpmu__kvm_mode_resolve(NULL, &m, 1, NULL, &mode, NULL, 0), EINVAL);
	assert_int_equal(vpmu__kvm_mode_resolve(&hi, &m, 1, NULL, &mode, NULL, 8), EINVAL);
}

/* Leaf 0xA: each field the smaller; unavailable events from either. */
static void
leaf_0a_is_what_both_offer(void **state)
{
	/* model v5, 8 GP x 48, EBX len 8 (0x04 unavailable), ECX 0xF, 4 fixed x 48 */
	const uint32_t mdl[4] = { 0x08300805, 0x04, 0xF, 0x0604 };
	/* KVM v2, 4 GP x 48, EBX len 7 (0x20 unavailable), 3 fixed x 40, AnyThread */
	const uint32_t kvm[4] = { 0x07300402, 0x20, 0x0, 0x8503 };
	const uint32_t none[4] = { 0 };
	uint32_t out[4];

	(void)state;
	vpmu__kvm_mode_leaf(0xA, mdl, kvm, out);
	assert_int_equal(out[0], 0x07300402);
	assert_int_equal(out[1], 0x24);
	assert_int_equal(out[2], 0);		/* ECX: version 5 only */
	assert_int_equal(out[3], 0x8503);
	/* Both v5: ECX is the fixed counters both have. */
	vpmu__kvm_mode_leaf(0xA, mdl, (const uint32_t[4]){ 0x08300805, 0, 0x5, 0x0604 }, out);
	assert_int_equal(out[0], 0x08300805);
	assert_int_equal(out[2], 0x5);
	assert_int_equal(out[3], 0x0604);
	/* KVM offers none (its vPMU off, or an AMD host): no PMU at all. */
	vpmu__kvm_mode_leaf(0xA, mdl, none, out);
	assert_memory_equal(out, none, sizeof(out));
	/* Version 1: no fixed counters in EDX. */
	vpmu__kvm_mode_leaf(0xA, (const uint32_t[4]){ 0x07300401, 0, 0, 0x0603 }, kvm, out);
	assert_int_equal(out[0], 0x07300401);
	assert_int_equal(out[3], 0);
	/* The model's leaf as the output, as vpmu_kvm_cpuid_patch() may: the same. */
	memcpy(out, mdl, sizeof(out));
	vpmu__kvm_mode_leaf(0xA, out, kvm, out);
	assert_int_equal(out[0], 0x07300402);
	assert_int_equal(out[1], 0x24);
	assert_int_equal(out[3], 0x8503);
	/* AnyThread deprecated (EDX bit 15) from either. */
	vpmu__kvm_mode_leaf(0xA, (const uint32_t[4]){ 0x08300805, 0, 0, 0x8604 },
	    (const uint32_t[4]){ 0x08300805, 0, 0, 0x0604 }, out);
	assert_int_equal(out[3], 0x8604);
}

static void
leaf_80000022_is_what_both_offer(void **state)
{
	const uint32_t mdl[4] = { 0x1, 0x6, 0, 0 };		/* PerfMonV2, 6 core */
	const uint32_t kvm[4] = { 0x3, 0x4 | 16 << 4 | 4 << 10, 0, 0 };
	uint32_t out[4], other[4];

	(void)state;
	vpmu__kvm_mode_leaf(0x80000022, mdl, kvm, out);
	assert_int_equal(out[0], 0x1);
	assert_int_equal(out[1], 0x4);
	assert_int_equal(out[2], 0);
	assert_int_equal(out[3], 0);
	vpmu__kvm_mode_leaf(0x1, mdl, kvm, other);		/* not a PMU leaf: the model's */
	assert_memory_equal(other, mdl, sizeof(other));
	memcpy(out, mdl, sizeof(out));				/* in place */
	vpmu__kvm_mode_leaf(0x80000022, out, kvm, out);
	assert_int_equal(out[0], 0x1);
	assert_int_equal(out[1], 0x4);
}

/* The guest's PMU in kvm mode as a model: the leaves' counts, not the model's. */
static void
effective_model_is_the_leaves(void **state)
{
	struct vpmu_model m = model("intel-v5:gp=8"), e;
	const uint32_t l0a[4] = { 0x07300402, 0x24, 0, 0x8503 };
	const uint32_t none[4] = { 0 };

	(void)state;
	vpmu__kvm_mode_model(&m, l0a, none, false, &e);
	assert_int_equal(e.vendor, VPMU_VENDOR_INTEL);
	assert_int_equal(e.version, 2);
	assert_int_equal(e.gp, 4);
	assert_int_equal(e.width, 48);
	assert_int_equal(e.ebx, 0x24);
	assert_int_equal(e.fixed, 3);
	assert_int_equal(e.fixed_width, 40);
	m = model("amd-v2");
	vpmu__kvm_mode_model(&m, none, (const uint32_t[4]){ 0x1, 0x4, 0, 0 }, true, &e);
	assert_int_equal(e.version, 2);
	assert_int_equal(e.gp, 4);
	/* KVM without PerfMonV2 and without PerfCtrExtCore: the 4 legacy counters. */
	vpmu__kvm_mode_model(&m, none, none, false, &e);
	assert_int_equal(e.version, 1);
	assert_int_equal(e.core_ext, 0);
	assert_int_equal(e.gp, 4);
	m = model("amd-core");
	vpmu__kvm_mode_model(&m, none, none, true, &e);
	assert_int_equal(e.version, 1);
	assert_int_equal(e.gp, 6);
}

/* The MSRs read from KVM, per model, in their order. */
static void
msrs_per_model(void **state)
{
	static const struct {
		const char *spec;
		unsigned n;
		uint32_t msrs[12];
	} cases[] = {
		{ "intel-v1:gp=2", 4, { 0x186, 0xC1, 0x187, 0xC2 } },
		{ "intel-v2:gp=2,fixed=3", 9,
		    { 0x186, 0xC1, 0x187, 0xC2, 0x38D, 0x309, 0x30A, 0x30B, 0x38F } },
		{ "amd-k7", 8, { 0xC0010000, 0xC0010004, 0xC0010001, 0xC0010005,
		    0xC0010002, 0xC0010006, 0xC0010003, 0xC0010007 } },
		{ "amd-core", 12, { 0xC0010200, 0xC0010201, 0xC0010202, 0xC0010203,
		    0xC0010204, 0xC0010205, 0xC0010206, 0xC0010207, 0xC0010208, 0xC0010209,
		    0xC001020A, 0xC001020B } },
		{ "amd-v2:gp=2", 5, { 0xC0010200, 0xC0010201, 0xC0010202, 0xC0010203,
		    0xC0000301 } },
	};
	uint32_t msrs[VPMU_KVM_MODE_MAX_MSRS];
	struct vpmu_model m;
	size_t i;

	(void)state;
	for (i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		m = model(cases[i].spec);
		assert_int_equal(vpmu__kvm_mode_msrs(&m, msrs, VPMU_KVM_MODE_MAX_MSRS),
		    cases[i].n);
		assert_memory_equal(msrs, cases[i].msrs, cases[i].n * sizeof(msrs[0]));
	}
	m = model("intel-v2:gp=8,fixed=3");
	assert_int_equal(vpmu__kvm_mode_msrs(&m, msrs, VPMU_KVM_MODE_MAX_MSRS), 21);
	assert_int_equal(vpmu__kvm_mode_msrs(&m, msrs, 3), 3);	/* cut at max */
}

static vpmu_vm *
vm_with(const char *spec)
{
	struct vpmu_model m = model(spec);
	vpmu_config *cfg;
	vpmu_vm *vm;

	assert_int_equal(vpmu_config_create(&cfg), 0);
	assert_int_equal(vpmu_config_set_model(cfg, &m), 0);
	assert_int_equal(vpmu_vm_create(cfg, &vm), 0);
	vpmu_config_destroy(cfg);
	return (vm);
}

/* KVM's values as the counter report: names, events, enables, widths. */
static void
counters_from_kvm_values(void **state)
{
	vpmu_vm *vm = vm_with("intel-v2:gp=2,fixed=3,width=40");
	struct vpmu_model m = model("intel-v2:gp=2,fixed=3,width=40"), amd = model("amd-k7");
	/* PMC0 instructions enabled, PMC1 branches not in GLOBAL_CTRL, FIXED1 OS */
	const uint64_t vals[9] = { 0x4300C0, 1234, 0x4300C4, (1ull << 40) | 77,
	    0x20, 5, 600, 7, 0x200000001ull };
	struct vpmu_counter_info ci[5];
	unsigned n = 5;

	(void)state;
	assert_int_equal(vpmu__kvm_mode_counters(vm, &m, vals, 9, ci, &n), 0);
	assert_int_equal(n, 5);
	assert_string_equal(ci[0].name, "IA32_PMC0");
	assert_string_equal(ci[0].event, "instructions");
	assert_int_equal(ci[0].value, 1234);
	assert_int_equal(ci[0].enabled, 1);
	assert_string_equal(ci[1].event, "branches");
	assert_int_equal(ci[1].value, 77);		/* 40 bits */
	assert_int_equal(ci[1].enabled, 0);		/* GLOBAL_CTRL bit 1 clear */
	assert_string_equal(ci[2].name, "IA32_FIXED_CTR0");
	assert_int_equal(ci[2].control, 0);
	assert_int_equal(ci[2].enabled, 0);
	assert_int_equal(ci[2].value, 5);
	assert_string_equal(ci[3].event, "cycles");
	assert_int_equal(ci[3].control, 2);
	assert_int_equal(ci[3].enabled, 1);		/* GLOBAL_CTRL bit 33 */
	assert_int_equal(ci[3].value, 600);
	assert_int_equal(ci[4].enabled, 0);
	/* Too little room, or the wrong number of values. */
	n = 4;
	assert_int_equal(vpmu__kvm_mode_counters(vm, &m, vals, 9, ci, &n), EINVAL);
	assert_int_equal(n, 5);
	n = 5;
	assert_int_equal(vpmu__kvm_mode_counters(vm, &m, vals, 8, ci, &n), EINVAL);
	/* Another vendor's model, or more counters than a model can have. */
	assert_int_equal(vpmu__kvm_mode_counters(vm, &amd, vals, 8, ci, &n), EINVAL);
	m.gp = 20;
	n = 5;
	assert_int_equal(vpmu__kvm_mode_counters(vm, &m, vals, 9, ci, &n), EINVAL);
	vpmu_vm_destroy(vm);
}

/* The core's side: KVM's vPMU answers the MSRs; report and filter go over. */
static int ext_filters;
static int ext_filter_error;

static int
ext_counters(void *arg, unsigned cpu, struct vpmu_counter_info *out, unsigned *n)
{
	(void)arg;
	if (*n < 1)
		return (EINVAL);
	memset(out, 0, sizeof(*out));
	snprintf(out->name, sizeof(out->name), "from kvm %u", cpu);
	*n = 1;
	return (0);
}

static int
ext_filter(void *arg, const struct vpmu_event_filter *f)
{
	(void)arg, (void)f;
	ext_filters++;
	return (ext_filter_error);
}

static void
core_hands_the_counters_over(void **state)
{
	static const struct vpmu__gpmu_ext ext = { ext_counters, ext_filter, NULL };
	vpmu_vm *vm = vm_with("intel-v2");
	struct vpmu_event_filter f, got;
	struct vpmu_counter_info ci[8];
	unsigned n = 8;
	uint64_t v = 0;

	(void)state;
	assert_int_equal(MSR_WRITE(vm, 0, 0x186, 0x4300C0), VPMU_MSR_OK);
	assert_int_equal(vpmu_event_filter_preset("arch", VPMU_VENDOR_INTEL, &f), 0);
	assert_int_equal(vpmu_vm_set_event_filter(vm, &f), 0);
	/* The hooks refuse the VM's filter: they do not take over. */
	ext_filters = 0;
	ext_filter_error = EINVAL;
	assert_int_equal(vpmu__gpmu_set_external(vm, &ext), EINVAL);
	assert_int_equal(ext_filters, 1);
	assert_int_equal(MSR_READ(vm, 0, 0x186, &v), VPMU_MSR_OK);
	assert_int_equal(v, 0x4300C0);
	/* They take it: from then on they have the MSRs, the report, the filter. */
	ext_filter_error = 0;
	assert_int_equal(vpmu__gpmu_set_external(vm, &ext), 0);
	assert_int_equal(ext_filters, 2);
	assert_int_equal(MSR_READ(vm, 0, 0x186, &v), VPMU_MSR_NOT_PMU);
	assert_int_equal(MSR_WRITE(vm, 0, 0x38F, 1), VPMU_MSR_NOT_PMU);
	assert_int_equal(vpmu_vcpu_get_counters(vm, 0, ci, &n), 0);
	assert_int_equal(n, 1);
	assert_string_equal(ci[0].name, "from kvm 0");
	assert_int_equal(vpmu_event_filter_preset("ipc", VPMU_VENDOR_INTEL, &f), 0);
	ext_filters = 0;
	assert_int_equal(vpmu_vm_set_event_filter(vm, &f), 0);
	assert_int_equal(ext_filters, 1);
	assert_int_equal(vpmu_vm_get_event_filter(vm, &got), 0);
	/* KVM refuses: so does the VM, which keeps the filter it had. */
	ext_filter_error = EINVAL;
	assert_int_equal(vpmu_vm_set_event_filter(vm, NULL), EINVAL);
	assert_int_equal(ext_filters, 2);
	assert_int_equal(vpmu_vm_get_event_filter(vm, &got), 0);
	assert_memory_equal(&got, &f, sizeof(f));
	vpmu_vm_destroy(vm);
}

static void
config_takes_the_three_modes(void **state)
{
	vpmu_config *cfg;

	(void)state;
	assert_int_equal(vpmu_config_create(&cfg), 0);
	assert_int_equal(vpmu_config_set_pmu_mode(cfg, VPMU_PMU_MODE_TRAP), 0);
	assert_int_equal(vpmu_config_set_pmu_mode(cfg, VPMU_PMU_MODE_KVM), 0);
	assert_int_equal(vpmu_config_set_pmu_mode(cfg, VPMU_PMU_MODE_AUTO), 0);
	assert_int_equal(vpmu_config_set_pmu_mode(cfg, 3), EINVAL);
	assert_int_equal(vpmu_config_set_pmu_mode(cfg, -1), EINVAL);
	assert_int_equal(vpmu_config_set_pmu_mode(NULL, 0), EINVAL);
	vpmu_config_destroy(cfg);
}

/*
 * On this host, whatever it has: vpmu_kvm_create() gives the mode, or
 * fails with the errno, that vpmu_kvm_resolve_pmu_mode() announced.
 */
static void
create_agrees_with_resolve(void **state)
{
	static const int modes[] = { VPMU_PMU_MODE_TRAP, VPMU_PMU_MODE_KVM, VPMU_PMU_MODE_AUTO };
	struct vpmu_model m = model("intel-v2");
	char why[512];
	int kvm, fd, want, got, err;
	vpmu_config *cfg;
	vpmu_kvm *k;
	vpmu_vm *vm;
	size_t i;

	(void)state;
	if ((kvm = open("/dev/kvm", O_RDWR | O_CLOEXEC)) < 0) {
		print_message("skipped: open(/dev/kvm): %s\n", strerror(errno));
		skip();
		return;
	}
	for (i = 0; i < sizeof(modes) / sizeof(modes[0]); i++) {
		assert_int_equal(vpmu_config_create(&cfg), 0);
		assert_int_equal(vpmu_config_set_model(cfg, &m), 0);
		assert_int_equal(vpmu_config_set_pmu_mode(cfg, modes[i]), 0);
		assert_int_equal(vpmu_vm_create(cfg, &vm), 0);
		vpmu_config_destroy(cfg);
		err = vpmu_kvm_resolve_pmu_mode(vm, &want, why, sizeof(why));
		assert_true(why[0] != '\0');
		print_message("mode %d: %s (%s)\n", modes[i], why, vpmu_errname(err));
		assert_true((fd = ioctl(kvm, KVM_CREATE_VM, 0)) >= 0);
		assert_int_equal(vpmu_kvm_create(vm, fd, &k), err);
		if (err == 0) {
			assert_int_equal(vpmu_kvm_get_pmu_mode(k, &got), 0);
			assert_int_equal(got, want);
			vpmu_kvm_destroy(k);
		} else
			assert_int_equal(modes[i], VPMU_PMU_MODE_KVM);
		close(fd);
		vpmu_vm_destroy(vm);
	}
	close(kvm);
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(resolve_pmu_host),
		cmocka_unit_test(resolve_no_pmu),
		cmocka_unit_test(resolve_refusals),
		cmocka_unit_test(leaf_0a_is_what_both_offer),
		cmocka_unit_test(leaf_80000022_is_what_both_offer),
		cmocka_unit_test(effective_model_is_the_leaves),
		cmocka_unit_test(msrs_per_model),
		cmocka_unit_test(counters_from_kvm_values),
		cmocka_unit_test(core_hands_the_counters_over),
		cmocka_unit_test(config_takes_the_three_modes),
		cmocka_unit_test(create_agrees_with_resolve),
	};

	return (cmocka_run_group_tests(tests, NULL, NULL));
}
