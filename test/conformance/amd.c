/*
 * amd.c -- AMD core performance counter conformance (legacy K7 MSRs, the
 * core extension, PerfMonV2), as kvm-unit-tests x86/pmu.c checks it on AMD
 * ("K7" prefix for the legacy MSRs), with exact counts.  The guest learns
 * the counters from CPUID 0x80000001.ECX[23] and 0x80000022.
 */
#include "conf.h"

#define K7_SEL(i)	(0xC0010000u + (i))
#define K7_CTR(i)	(0xC0010004u + (i))
#define CTL(i)		(0xC0010200u + 2 * (i))
#define CTR(i)		(0xC0010201u + 2 * (i))
#define GSTATUS		0xC0000300u
#define GCTL		0xC0000301u
#define GCLR		0xC0000302u
#define GSET		0xC0000303u

#define USR		(1ull << 16)
#define OS		(1ull << 17)
#define INT		(1ull << 20)
#define EN		(1ull << 22)
#define EV_INSTR	0xC0ull
#define EV_BRANCH	0xC2ull
#define EV_CYCLES	0x76ull
#define RESERVED	0xFFFFFFF000280000ull
#define MASK48		((1ull << 48) - 1)
#define N		100

static unsigned ngp;
static int core_ext, v2;
static char name[96];

static const char *
nm(const char *fmt, unsigned i)
{
	vg_snprintf(name, sizeof(name), fmt, i);
	return (name);
}

/* Counter i's MSRs: core-extension ones where the guest has them. */
static uint32_t sel_msr(unsigned i) { return (core_ext ? CTL(i) : K7_SEL(i)); }
static uint32_t ctr_msr(unsigned i) { return (core_ext ? CTR(i) : K7_CTR(i)); }

static uint64_t
count(unsigned i, uint64_t sel)
{
	wr(ctr_msr(i), 0);
	if (v2) {
		wr(GCTL, 0);
		wr(sel_msr(i), sel | EN);
		conf_measure(GCTL, 1ull << i, GCTL, 0, N);
		wr(sel_msr(i), 0);		/* before GLOBAL_CTL turns it back on */
		wr(GCTL, (1ull << ngp) - 1);
	} else
		conf_measure(sel_msr(i), sel | EN, sel_msr(i), 0, N);
	wr(sel_msr(i), 0);
	return (rd(ctr_msr(i)));
}

static void
check_cpuid(void)
{
	uint32_t r[4];

	vg_cpuid(0x80000001, 0, r);
	core_ext = (r[2] >> 23) & 1;
	vg_cpuid(0x80000022, 0, r);
	v2 = r[0] & 1;
	ngp = v2 ? r[1] & 0xF : core_ext ? 6 : 4;
	vg_printf("cpuid: perfctr_core=%d perfmon_v2=%d counters=%u\n", core_ext, v2, ngp);
	CHECK("cpuid_reports_counters", ngp >= 1, "no counters");
}

static void
check_counting(void)
{
	unsigned i;

	for (i = 0; i < ngp; i++) {
		CHECK_EQ(nm("ctr%u_instructions_exact", i), count(i, EV_INSTR | OS | USR),
		    MEASURE_INSNS(N));
		CHECK_EQ(nm("ctr%u_branches_exact", i), count(i, EV_BRANCH | OS),
		    MEASURE_BRANCHES(N));
		CHECK_EQ(nm("ctr%u_cycles_are_instructions_at_cpi_1", i),
		    count(i, EV_CYCLES | OS | USR), MEASURE_INSNS(N));
	}
	CHECK_EQ("ctr0_usr_only_counts_no_kernel_code", count(0, EV_INSTR | USR), 0);
	CHECK_EQ("ctr0_neither_usr_nor_os_counts_nothing", count(0, EV_INSTR), 0);
	wr(ctr_msr(0), 0);
	wr(sel_msr(0), EV_INSTR | OS);			/* EN clear */
	conf_measure(sel_msr(1 % ngp), 0, sel_msr(1 % ngp), 0, N);
	CHECK_EQ("disabled_counter_does_not_count", rd(ctr_msr(0)), 0);
}

static void
check_msr_rules(void)
{
	unsigned i;
	int ok = 1;

	for (i = 0; i < ngp; i++) {
		wr(ctr_msr(i), 0xdead);
		ok &= rd(ctr_msr(i)) == 0xdead;
	}
	CHECK("write_0xdead_reads_0xdead", ok, "a counter read back something else");
	if (core_ext) {
		for (i = 0, ok = 1; i < 4 && i < ngp; i++) {
			wr(K7_CTR(i), 0x1000 + i);
			ok &= rd(CTR(i)) == 0x1000 + i;
			wr(CTL(i), EV_BRANCH | OS);
			ok &= rd(K7_SEL(i)) == (EV_BRANCH | OS);
			wr(CTL(i), 0);
		}
		CHECK("k7_msrs_alias_the_first_four_core_counters", ok, "not aliased");
	} else
		CHECK("no_core_extension_msrs", rd_gp(CTL(0)) && wr_gp(CTR(0), 0), "no #GP");
	wr(sel_msr(0), ~0ull);
	CHECK_EQ("reserved_select_bits_dropped_not_gp", rd(sel_msr(0)), ~RESERVED);
	wr(sel_msr(0), 0);
	wr(ctr_msr(0), ~0ull);
	CHECK_EQ("counters_are_48_bits", rd(ctr_msr(0)), MASK48);
	wr(ctr_msr(0), 0x80000000ull);
	CHECK_EQ("counter_writes_not_sign_extended", rd(ctr_msr(0)), 0x80000000ull);
	for (i = ngp, ok = 1; i < (core_ext ? 6u : 4u); i++)
		ok &= rd_gp(ctr_msr(i)) && wr_gp(sel_msr(i), 0);
	CHECK("counters_beyond_advertised_number_gp", ok, "a counter >= %u did not #GP", ngp);
	CHECK("intel_pmu_msrs_gp", rd_gp(0xC1) && rd_gp(0x38F), "no #GP");
	if (!v2) {
		CHECK("no_perfmon_v2_global_msrs", rd_gp(GCTL) && rd_gp(GSTATUS), "no #GP");
		return;
	}
	CHECK_EQ("global_ctl_reset_value_sets_counter_bits", rd(GCTL), (1ull << ngp) - 1);
	wr(GCTL, ~0ull);
	CHECK_EQ("global_ctl_reserved_bits_dropped", rd(GCTL), (1ull << ngp) - 1);
	wr(GSET, 0x1);
	CHECK_EQ("global_status_set_sets", rd(GSTATUS), 0x1);
	wr(GSTATUS, 0);
	CHECK_EQ("global_status_writes_ignored", rd(GSTATUS), 0x1);
	wr(GCLR, 0x1);
	CHECK_EQ("global_status_clr_clears", rd(GSTATUS), 0);
	CHECK_EQ("global_status_clr_reads_0", rd(GCLR), 0);
}

/* Preset 1 - C: ends at exactly 1; status (v2); NMI iff INT, on the next instruction. */
static void
check_overflow(void)
{
	uint64_t C = MEASURE_INSNS(N), nmis, a;
	unsigned i, cpu = vg_cpu_index();
	char what[64];

	vg_set_nmi_handler(conf_nmi_handler);
	for (i = 0; i < ngp; i++) {
		int intr = i & 1;

		vg_snprintf(what, sizeof(what), "ctr%u_overflow%s", i, intr ? "_int" : "");
		wr(ctr_msr(i), (1 - C) & MASK48);
		nmis = vg_nmi_count();
		if (v2) {
			wr(GCTL, 0);
			wr(sel_msr(i), EV_INSTR | OS | EN | (intr ? INT : 0));
			conf_measure(GCTL, 1ull << i, GCTL, 0, N);
			wr(sel_msr(i), 0);
			wr(GCTL, (1ull << ngp) - 1);
		} else
			conf_measure(sel_msr(i), EV_INSTR | OS | EN | (intr ? INT : 0),
			    sel_msr(i), 0, N);
		wr(sel_msr(i), 0);
		a = rd(ctr_msr(i));
		if (!intr) {
			vg_snprintf(name, sizeof(name), "%s_ends_at_exactly_1", what);
			CHECK_EQ(name, a, 1);
		}
		vg_snprintf(name, sizeof(name), "%s_nmi_iff_int", what);
		CHECK_EQ(name, vg_nmi_count() - nmis, (uint64_t)intr);
		if (intr) {
			vg_snprintf(name, sizeof(name), "%s_nmi_lands_on_the_next_instruction",
			    what);
			CHECK_EQ(name, conf_nmi_rip[cpu], (uint64_t)(uintptr_t)conf_measure_last);
		}
		if (v2) {
			vg_snprintf(name, sizeof(name), "%s_sets_global_status", what);
			CHECK(name, (rd(GSTATUS) >> i) & 1, "status 0x%lx",
			    (unsigned long)rd(GSTATUS));
			wr(GCLR, rd(GSTATUS));
		}
	}
}

static volatile uint64_t counted[VG_MAX_CPUS];

/*
 * RDPMC (APM Vol. 3): ECX is the counter's number, below the count the
 * guest was told; anything else is #GP.  Idle (libvpmu catches the #GP
 * KVM injects) and while an exact count runs (seen before it runs).
 */
static void
check_rdpmc(void)
{
	uint64_t v, w;
	unsigned i;
	int ok = 1, fault;

	for (i = 0; i < ngp; i++) {
		wr(ctr_msr(i), 0x0000BEEF00000000ull + i);
		ok &= vg_rdpmc_safe(i, &v) == 0 && v == 0x0000BEEF00000000ull + i;
	}
	CHECK("rdpmc_counters", ok, "counter %u: %#lx", i, (unsigned long)v);
	CHECK("rdpmc_beyond_counters", vg_rdpmc_safe(ngp, &v) == VG_GP, "no #GP");
	CHECK("rdpmc_bit30_gp", vg_rdpmc_safe(1u << 30, &v) == VG_GP, "no #GP");
	wr(ctr_msr(0), 0);
	if (v2)
		wr(GCTL, 1);
	wr(sel_msr(0), EV_INSTR | OS | EN);
	v = conf_rdpmc_span(0);
	fault = vg_rdpmc_safe(ngp, &w);
	wr(sel_msr(0), 0);
	if (v2)
		wr(GCTL, (1ull << ngp) - 1);
	CHECK("rdpmc_while_counting_exact", v == RDPMC_SPAN_INSNS, "%lu, want %u",
	    (unsigned long)v, RDPMC_SPAN_INSNS);
	CHECK("rdpmc_beyond_while_counting_gp", fault == VG_GP, "vector %d", fault);
}

int
main(unsigned cpu)
{
	unsigned i;

	if (cpu == 0) {
		check_cpuid();
		if (ngp == 0)
			return (conf_done());
		check_counting();
		check_msr_rules();
		check_overflow();
		check_rdpmc();
	}
	vg_barrier();
	wr(ctr_msr(0), 0);
	conf_measure(sel_msr(0), EV_INSTR | OS | EN, sel_msr(0), 0, N + 10 * cpu);
	counted[cpu] = rd(ctr_msr(0));
	vg_barrier();
	if (cpu != 0)
		return (0);
	for (i = 0; i < vg_ncpus(); i++)
		CHECK_EQ(nm("vcpu%u_counts_its_own_loop_independently", i), counted[i],
		    MEASURE_INSNS(N + 10 * i));
	return (conf_done());
}
