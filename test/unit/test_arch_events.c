/*
 * test_arch_events.c -- the architectural event table and CPUID leaf
 * 0AH's codec (libvpmu/arch.h), and that everything derived from them
 * agrees with them: the Intel and AMD models' select decoders, the fixed
 * counters, the model's leaf 0xA, the event filter's Xen presets, the
 * exact source's raw codes, the host probe's decoders and kvm mode's
 * leaves; and the codec of AMD's leaf 0x80000022.
 * The expected values are written here from the manuals, not from the
 * table: SDM Vol. 3B 20.2.1.2 (Table "UMask and Event Select Encodings
 * for Pre-Defined Architectural Performance Events") and 20.2.2 (fixed
 * counters), SDM Vol. 2A CPUID leaf 0AH, AMD's PPR core events, and
 * perf_event_open(2)'s PERF_COUNT_HW_* numbers.
 */
#include <linux/perf_event.h>

#include "fixture.h"
#include <vpmu/model.h>
#include <vpmu/source.h>

#include "internal.h"
#include "arch.h"
#include "gpmu_msr.h"
#include "host_internal.h"
#include "kvm_mode.h"

/* The manuals' rows, in CPUID.0AH:EBX bit order. */
static const struct {
	uint32_t event;		/* VPMU_EV_NONE: libvpmu has no name for it */
	uint16_t intel;		/* umask << 8 | event select */
	int fixed;		/* Intel fixed counter, -1: none */
	uint16_t amd;		/* 12-bit event select, 0: none */
	uint64_t perf;		/* PERF_COUNT_HW_* */
} sdm[] = {
	{ VPMU_EV_CYCLES, 0x003C, 1, 0x076, 0 },		/* UnHalted Core Cycles */
	{ VPMU_EV_INSTRUCTIONS, 0x00C0, 0, 0x0C0, 1 },		/* Instructions Retired */
	{ VPMU_EV_REF_CYCLES, 0x013C, 2, 0, 9 },		/* UnHalted Reference Cycles */
	{ VPMU_EV_NONE, 0x4F2E, -1, 0, 2 },			/* LLC Reference */
	{ VPMU_EV_NONE, 0x412E, -1, 0, 3 },			/* LLC Misses */
	{ VPMU_EV_BRANCHES, 0x00C4, -1, 0x0C2, 4 },		/* Branch Instruction Retired */
	{ VPMU_EV_NONE, 0x00C5, -1, 0x0C3, 5 },			/* Branch Misses Retired */
};

/* The table's perf column, as the perf source pastes it. */
static const uint64_t perf_col[VPMU__NARCH] = {
#define T_PERF(id, ev, intel, ebx, fixed, amd, perf, ipc)	\
	[VPMU__ARCH_##id] = PERF_COUNT_##perf,
	VPMU__ARCH_EVENTS(T_PERF)
#undef T_PERF
};

static const struct vpmu__arch_event *
row_of_bit(unsigned bit)
{
	size_t i;

	for (i = 0; i < VPMU__NARCH; i++)
		if (vpmu__arch_events[i].ebx >= 0 && (unsigned)vpmu__arch_events[i].ebx == bit)
			return (&vpmu__arch_events[i]);
	return (NULL);
}

/* Each EBX bit has the SDM's event, with its fixed counter, AMD code and perf event. */
static void
table_is_the_manuals(void **state)
{
	const struct vpmu__arch_event *e;
	unsigned bit;

	(void)state;
	assert_int_equal(VPMU__NARCH, 7);
	assert_int_equal(VPMU_ARRAY_SIZE(sdm), VPMU__NARCH);
	for (bit = 0; bit < VPMU__NARCH; bit++) {
		e = row_of_bit(bit);
		assert_non_null(e);
		assert_int_equal(e->event, sdm[bit].event);
		assert_int_equal(e->intel, sdm[bit].intel);
		assert_int_equal(e->fixed, sdm[bit].fixed);
		assert_int_equal(e->amd, sdm[bit].amd);
		assert_int_equal(perf_col[e - vpmu__arch_events], sdm[bit].perf);
		if (e->event != VPMU_EV_NONE)
			assert_non_null(vpmu_event_name(e->event));
	}
	/* Xen's vpmu=ipc: cycles, reference cycles, instructions. */
	assert_true(vpmu__arch_events[VPMU__ARCH_CYCLES].ipc);
	assert_true(vpmu__arch_events[VPMU__ARCH_REF_CYCLES].ipc);
	assert_true(vpmu__arch_events[VPMU__ARCH_INSTRUCTIONS].ipc);
	assert_false(vpmu__arch_events[VPMU__ARCH_BRANCHES].ipc);
	assert_false(vpmu__arch_events[VPMU__ARCH_LLC_MISSES].ipc);
}

static void
lookups(void **state)
{
	const unsigned intel = 1u << VPMU_VENDOR_INTEL, amd = 1u << VPMU_VENDOR_AMD;
	size_t i;

	(void)state;
	for (i = 0; i < VPMU_ARRAY_SIZE(sdm); i++)
		if (sdm[i].event != VPMU_EV_NONE)
			assert_int_equal(vpmu__arch_of_event(sdm[i].event)->intel, sdm[i].intel);
	assert_null(vpmu__arch_of_event(VPMU_EV_NONE));
	assert_null(vpmu__arch_of_event(VPMU_EV_TSC));
	assert_null(vpmu__arch_of_event(VPMU_EV_RAW));

	/* Fixed counters 0-2 (SDM 20.2.2); no fourth. */
	assert_int_equal(vpmu__arch_fixed_event(0), VPMU_EV_INSTRUCTIONS);
	assert_int_equal(vpmu__arch_fixed_event(1), VPMU_EV_CYCLES);
	assert_int_equal(vpmu__arch_fixed_event(2), VPMU_EV_REF_CYCLES);
	assert_int_equal(vpmu__arch_fixed_event(3), VPMU_EV_NONE);

	/* Raw codes by vendor: 0xC4 is Intel's branches, AMD's taken branches. */
	assert_int_equal(vpmu__arch_event_raw(0x00C0, intel | amd), VPMU_EV_INSTRUCTIONS);
	assert_int_equal(vpmu__arch_event_raw(0x00C4, intel | amd), VPMU_EV_NONE);
	assert_int_equal(vpmu__arch_event_raw(0x00C4, intel), VPMU_EV_BRANCHES);
	assert_int_equal(vpmu__arch_event_raw(0x00C4, amd), VPMU_EV_NONE);
	assert_int_equal(vpmu__arch_event_raw(0x00C2, amd), VPMU_EV_BRANCHES);
	assert_int_equal(vpmu__arch_event_raw(0x00C2, intel), VPMU_EV_NONE);
	assert_int_equal(vpmu__arch_event_raw(0x0076, amd), VPMU_EV_CYCLES);
	assert_int_equal(vpmu__arch_event_raw(0x003C, intel), VPMU_EV_CYCLES);
	assert_int_equal(vpmu__arch_event_raw(0x013C, intel), VPMU_EV_REF_CYCLES);
	assert_int_equal(vpmu__arch_event_raw(0x013C, amd), VPMU_EV_NONE);
	assert_int_equal(vpmu__arch_event_raw(0x412E, intel), VPMU_EV_NONE);	/* unnamed */
	assert_int_equal(vpmu__arch_event_raw(0x10C0, amd), VPMU_EV_NONE);	/* umask 0x10 */
	assert_int_equal(vpmu__arch_event_raw(0x100C0, amd), VPMU_EV_NONE);	/* PMCx1C0 */

	/* AMD's select in a PERF_CTL (35:32) and in the raw form (19:16). */
	assert_int_equal(vpmu__amd_sel(0x1C0, 0x02), 0x1000002C0ull);
	assert_int_equal(vpmu__amd_raw(0x1C0, 0x02), 0x102C0ull);
	assert_int_equal(vpmu__arch_sel(&vpmu__arch_events[VPMU__ARCH_BRANCHES],
	    VPMU_VENDOR_AMD), 0xC2);
	assert_int_equal(vpmu__arch_sel(&vpmu__arch_events[VPMU__ARCH_REF_CYCLES],
	    VPMU_VENDOR_AMD), 0);
	assert_int_equal(vpmu__arch_sel(&vpmu__arch_events[VPMU__ARCH_REF_CYCLES],
	    VPMU_VENDOR_INTEL), 0x013C);
	assert_int_equal(vpmu__arch_sel(&vpmu__arch_events[VPMU__ARCH_CYCLES],
	    VPMU_VENDOR_NONE), 0);
}

/* The models turn a row's select into its event, and back to the row. */
static void
models_decode_the_rows(void **state)
{
	struct vpmu_event_spec spec;
	vpmu_vm *intel = fx_vm_model("intel-v5", 1, NULL), *amd = fx_vm_model("amd-core", 1, NULL);
	size_t i;

	(void)state;
	for (i = 0; i < VPMU_ARRAY_SIZE(sdm); i++) {
		memset(&spec, 0, sizeof(spec));
		assert_true(vpmu__gpmu_event_of(intel, sdm[i].intel | SEL_EN | SEL_USR, &spec));
		if (sdm[i].event != VPMU_EV_NONE) {
			assert_int_equal(spec.event, sdm[i].event);
			assert_int_equal(spec.raw, 0);
			assert_int_equal(vpmu__arch_of_event(spec.event)->intel, sdm[i].intel);
		} else {
			assert_int_equal(spec.event, VPMU_EV_RAW);
			assert_int_equal(spec.raw, sdm[i].intel);
		}
		if (sdm[i].amd == 0)
			continue;
		memset(&spec, 0, sizeof(spec));
		assert_true(vpmu__gpmu_event_of(amd, sdm[i].amd | SEL_EN | SEL_OS, &spec));
		if (sdm[i].event != VPMU_EV_NONE) {
			assert_int_equal(spec.event, sdm[i].event);
			assert_int_equal(vpmu__arch_of_event(spec.event)->amd, sdm[i].amd);
		} else {
			assert_int_equal(spec.event, VPMU_EV_RAW);
			assert_int_equal(spec.raw, sdm[i].amd);
		}
	}
	/* AMD: EventSelect[11:8] in 35:32 keeps a code apart from its low byte. */
	memset(&spec, 0, sizeof(spec));
	assert_true(vpmu__gpmu_event_of(amd, 0x1000000C0ull | SEL_EN, &spec));
	assert_int_equal(spec.event, VPMU_EV_RAW);
	assert_int_equal(spec.raw, 0x100C0);
	/* Intel's reference cycles is no AMD event: 0x013C stays raw there. */
	memset(&spec, 0, sizeof(spec));
	assert_true(vpmu__gpmu_event_of(amd, 0x013C | SEL_EN, &spec));
	assert_int_equal(spec.event, VPMU_EV_RAW);
	vpmu_vm_destroy(intel);
	vpmu_vm_destroy(amd);
}

/*
 * The model's leaf 0xA: version 5, 4 counters of 48 bits, an EBX of 7
 * events, 3 fixed counters of 48 bits.  The synthetic source counts every
 * event (EBX 0); the exact source has no LLC and no mispredictions, so
 * their bits (3, 4, 6) say unavailable.
 */
static void
model_leaf_0a(void **state)
{
	vpmu_vm *vm = fx_vm_model("intel-v5", 1, NULL);
	struct vpmu__cpuid_0a l;
	uint32_t r[4];

	(void)state;
	assert_int_equal(vpmu_cpuid_get_leaf(vm, 0xA, 0, r), 0);
	assert_int_equal(r[0], 0x07300405);
	assert_int_equal(r[1], 0);
	assert_int_equal(r[2], 0x7);
	assert_int_equal(r[3], 0x0603);
	vpmu__cpuid_0a_decode(r, &l);
	assert_int_equal(l.ebx_length, VPMU__NARCH);
	vpmu_vm_destroy(vm);

	vm = fx_vm_model("intel-v5", 1, &vpmu_source_exact);
	assert_int_equal(vpmu_cpuid_get_leaf(vm, 0xA, 0, r), 0);
	assert_int_equal(r[1], 1u << 3 | 1u << 4 | 1u << 6);
	vpmu_vm_destroy(vm);

	vm = fx_vm_model("intel-v1", 1, NULL);
	assert_int_equal(vpmu_cpuid_get_leaf(vm, 0xA, 0, r), 0);
	assert_int_equal(r[0], 0x07300401);
	assert_int_equal(r[2], 0);
	assert_int_equal(r[3], 0);
	vpmu_vm_destroy(vm);
}

/* Decode, encode, and the host probe's and kvm mode's views of one leaf. */
static void
cpuid_0a_codec(void **state)
{
	/* A Skylake client: v4, 4 x 48 bits, 7 events, 3 fixed x 48, AnyThread deprecated off. */
	static const uint32_t skl[4] = { 0x07300404, 0x00000000, 0x00000000, 0x00000603 };
	/* A Sapphire Rapids guest of KVM: v5 (ECX used), EBX bit 2 set, AnyThread deprecated. */
	static const uint32_t spr[4] = { 0x08300805, 0x00000004, 0x0000000F, 0x00008604 };
	struct vpmu__cpuid_0a l;
	struct vpmu_host_intel_pmu h;
	uint32_t r[4];

	(void)state;
	vpmu__cpuid_0a_decode(skl, &l);
	assert_int_equal(l.version, 4);
	assert_int_equal(l.gp, 4);
	assert_int_equal(l.gp_width, 48);
	assert_int_equal(l.ebx_length, 7);
	assert_int_equal(l.unavailable, 0);
	assert_int_equal(l.fixed_bitmap, 0);
	assert_int_equal(l.fixed, 3);
	assert_int_equal(l.fixed_width, 48);
	assert_false(l.anythread_deprecated);
	vpmu__cpuid_0a_encode(&l, r);
	assert_memory_equal(r, skl, sizeof(r));

	vpmu__cpuid_0a_decode(spr, &l);
	assert_int_equal(l.version, 5);
	assert_int_equal(l.gp, 8);
	assert_int_equal(l.ebx_length, 8);
	assert_int_equal(l.unavailable, 0x4);
	assert_int_equal(l.fixed_bitmap, 0xF);
	assert_int_equal(l.fixed, 4);
	assert_true(l.anythread_deprecated);
	vpmu__cpuid_0a_encode(&l, r);
	assert_memory_equal(r, spr, sizeof(r));

	/* The host probe's decoder is this one, in its terms. */
	vpmu__intel_pmu_decode(spr, &h);
	assert_int_equal(h.version, l.version);
	assert_int_equal(h.gp_count, l.gp);
	assert_int_equal(h.gp_width, l.gp_width);
	assert_int_equal(h.ebx_length, l.ebx_length);
	assert_int_equal(h.events_unavailable, l.unavailable);
	assert_int_equal(h.fixed_count, l.fixed);
	assert_int_equal(h.fixed_width, l.fixed_width);
	assert_int_equal(h.anythread_deprecated, 1);
	assert_int_equal(h.fixed_mask, 0xF);

	/* What both offer of one leaf is that leaf. */
	vpmu__kvm_mode_leaf(0xA, spr, spr, r);
	assert_memory_equal(r, spr, sizeof(r));

	/* The rules: EBX cut to its length, EDX void in v1, ECX void before v5. */
	vpmu__cpuid_0a_decode((const uint32_t[4]){ 0x03280201, 0xFF, 0xFF, 0x0603 }, &l);
	assert_int_equal(l.unavailable, 0x7);
	assert_int_equal(l.fixed, 0);
	assert_int_equal(l.fixed_width, 0);
	vpmu__cpuid_0a_decode((const uint32_t[4]){ 0x20300404, 0xFFFFFFFF, 0x7, 0x0603 }, &l);
	assert_int_equal(l.unavailable, 0xFFFFFFFF);
	assert_int_equal(l.fixed_bitmap, 0);
	vpmu__cpuid_0a_decode((const uint32_t[4]){ 0x07300400, 0xFF, 0xFF, 0x0603 }, &l);
	assert_int_equal(l.version, 0);
	assert_int_equal(l.gp, 0);
	assert_int_equal(l.unavailable, 0);
	vpmu__cpuid_0a_encode(&l, r);
	assert_memory_equal(r, ((const uint32_t[4]){ 0, 0, 0, 0 }), sizeof(r));
}

/* Leaf 0x80000022: the codec, the host probe's view, kvm mode's, the model's. */
static void
cpuid_80000022_codec(void **state)
{
	/* A Zen 4 host: PerfMonV2 and LbrStack; 6 core, 16 LBR, 16 NB, 8 UMC counters; UMC 0-7. */
	static const uint32_t zen4[4] = { 0x00000003, 0x00084106, 0x000000FF, 0 };
	struct vpmu__cpuid_80000022 l;
	struct vpmu_host_amd_pmu h;
	uint32_t r[4];
	vpmu_vm *vm;

	(void)state;
	vpmu__cpuid_80000022_decode(zen4, &l);
	assert_true(l.perfmon_v2);
	assert_true(l.lbr_stack);
	assert_false(l.lbr_pmc_freeze);
	assert_int_equal(l.num_core, 6);
	assert_int_equal(l.lbr_v2_depth, 16);
	assert_int_equal(l.num_nb, 16);
	assert_int_equal(l.num_umc, 8);
	assert_int_equal(l.active_umc, 0xFF);
	vpmu__cpuid_80000022_encode(&l, r);
	assert_memory_equal(r, zen4, sizeof(r));

	vpmu__amd_pmu_decode(0x80000022, 1u << 23, zen4, &h);
	assert_int_equal(h.perfmon_v2, 1);
	assert_int_equal(h.lbr_stack, 1);
	assert_int_equal(h.num_core, 6);
	assert_int_equal(h.lbr_v2_depth, 16);
	assert_int_equal(h.num_nb, 16);
	assert_int_equal(h.gp_count, 6);

	vpmu__kvm_mode_leaf(0x80000022, zen4, zen4, r);
	assert_memory_equal(r, zen4, sizeof(r));

	vm = fx_vm_model("amd-v2", 1, NULL);
	assert_int_equal(vpmu_cpuid_get_leaf(vm, 0x80000022, 0, r), 0);
	assert_memory_equal(r, ((const uint32_t[4]){ 0x1, 0x6, 0, 0 }), sizeof(r));
	vpmu_vm_destroy(vm);
}

/* The Xen presets are the table's codes of the vendor, ipc the marked ones. */
static void
presets_follow_the_table(void **state)
{
	struct vpmu_event_filter *f = calloc(1, sizeof(*f));
	static const uint32_t vendors[] = { VPMU_VENDOR_INTEL, VPMU_VENDOR_AMD };
	const char *const names[] = { "ipc", "arch" };
	size_t v, p, i, n;
	uint64_t sel;

	(void)state;
	assert_non_null(f);
	for (v = 0; v < VPMU_ARRAY_SIZE(vendors); v++)
		for (p = 0; p < VPMU_ARRAY_SIZE(names); p++) {
			assert_int_equal(vpmu_event_filter_preset(names[p], vendors[v], f), 0);
			assert_int_equal(f->fixed_counter_bitmap, 0x7);
			for (i = n = 0; i < VPMU__NARCH; i++) {
				sel = vpmu__arch_sel(&vpmu__arch_events[i], vendors[v]);
				if (sel == 0 || (p == 0 && !vpmu__arch_events[i].ipc))
					continue;
				assert_true(n < f->nevents);
				assert_int_equal(f->events[n], sel);
				n++;
			}
			assert_int_equal(f->nevents, n);
		}
	free(f);
}

/* The exact source models the named rows' raw codes of the guest's vendor only. */
static void
exact_raw_codes(void **state)
{
	const struct vpmu_source_ops *x = &vpmu_source_exact;
	struct vpmu_exact_params prm;
	struct vpmu_event_spec ev;
	void *st;
	size_t i;
	unsigned v;

	(void)state;
	for (v = VPMU_VENDOR_INTEL; v <= VPMU_VENDOR_AMD; v++) {
		memset(&prm, 0, sizeof(prm));
		prm.vendor = v;
		assert_int_equal(x->init(&st, 1, &prm), 0);
		for (i = 0; i < VPMU_ARRAY_SIZE(sdm); i++) {
			memset(&ev, 0, sizeof(ev));
			ev.event = VPMU_EV_RAW;
			ev.raw = v == VPMU_VENDOR_INTEL ? sdm[i].intel : sdm[i].amd;
			if (ev.raw == 0)
				continue;
			assert_int_equal(x->supports(st, &ev, NULL, 0) == 0,
			    sdm[i].event != VPMU_EV_NONE);
		}
		memset(&ev, 0, sizeof(ev));
		ev.event = VPMU_EV_RAW;
		ev.raw = 0x00C4;		/* AMD: taken branches, not modelled */
		assert_int_equal(x->supports(st, &ev, NULL, 0) == 0, v == VPMU_VENDOR_INTEL);
		x->fini(st);
	}
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(table_is_the_manuals),
		cmocka_unit_test(lookups),
		cmocka_unit_test(models_decode_the_rows),
		cmocka_unit_test(model_leaf_0a),
		cmocka_unit_test(cpuid_0a_codec),
		cmocka_unit_test(cpuid_80000022_codec),
		cmocka_unit_test(presets_follow_the_table),
		cmocka_unit_test(exact_raw_codes),
	};

	return (cmocka_run_group_tests(tests, NULL, NULL));
}
