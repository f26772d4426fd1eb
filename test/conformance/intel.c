/*
 * intel.c -- Intel architectural perfmon conformance, for every version
 * the guest finds in CPUID leaf 0xA.  Mirrors kvm-unit-tests x86/pmu.c and
 * the KVM selftest pmu_counters_test.c, with exact counts (the exact
 * source makes them knowable).  vCPU 0 runs every check; with several
 * vCPUs, each counts its own loop of a different length.
 */
#include "conf.h"

#define PMC(i)		(0x0C1u + (i))
#define EVTSEL(i)	(0x186u + (i))
#define FIXED(i)	(0x309u + (i))
#define PERF_CAP	0x345u
#define FIXED_CTRL	0x38Du
#define GSTATUS		0x38Eu
#define GCTRL		0x38Fu
#define GOVF		0x390u
#define APMC(i)		(0x4C1u + (i))

#define USR		(1ull << 16)
#define OS		(1ull << 17)
#define INT		(1ull << 20)
#define EN		(1ull << 22)
#define EV_INSTR	0x00C0ull
#define EV_BRANCH	0x00C4ull
#define EV_CYCLES	0x003Cull
#define EV_REF		0x013Cull
#define N		100

static unsigned version, ngp, nfixed, width, fwidth;
static int fw_writes;
static uint64_t gmask, fmask;
static char name[96];

static const char *
nm(const char *fmt, unsigned i)
{
	vg_snprintf(name, sizeof(name), fmt, i);
	return (name);
}

static const char *
nms(const char *what, const char *suffix)
{
	vg_snprintf(name, sizeof(name), "%s%s", what, suffix);
	return (name);
}

/* Measure counter i with select sel: enabled by its select (v1) or GLOBAL_CTRL. */
static uint64_t
count_gp(unsigned i, uint64_t sel, int fenced)
{
	void (*m)(uint32_t, uint64_t, uint32_t, uint64_t, uint64_t) =
	    fenced ? conf_measure_fenced : conf_measure;

	wr(PMC(i), 0);
	if (version >= 2) {
		wr(GCTRL, 0);
		wr(EVTSEL(i), sel | EN);
		m(GCTRL, 1ull << i, GCTRL, 0, N);
	} else
		m(EVTSEL(i), sel | EN, EVTSEL(i), 0, N);
	wr(EVTSEL(i), 0);
	return (rd(PMC(i)));
}

static uint64_t
count_fixed(unsigned i)
{
	wr(FIXED(i), 0);
	wr(GCTRL, 0);
	wr(FIXED_CTRL, 0x3ull << (4 * i));		/* OS | USR */
	conf_measure(GCTRL, 1ull << (32 + i), GCTRL, 0, N);
	wr(FIXED_CTRL, 0);
	return (rd(FIXED(i)));
}

static void
check_cpuid(void)
{
	uint32_t r[4];

	vg_cpuid(0xA, 0, r);
	vg_printf("cpuid 0xa: eax=0x%x ebx=0x%x ecx=0x%x edx=0x%x\n", r[0], r[1], r[2], r[3]);
	version = r[0] & 0xFF;
	ngp = (r[0] >> 8) & 0xFF;
	width = (r[0] >> 16) & 0xFF;
	nfixed = version >= 2 ? r[3] & 0x1F : 0;
	fwidth = version >= 2 ? (r[3] >> 5) & 0xFF : 0;
	gmask = width >= 64 ? ~0ull : (1ull << width) - 1;
	fmask = fwidth >= 64 ? ~0ull : (1ull << fwidth) - 1;
	vg_cpuid(0x1, 0, r);
	fw_writes = (r[2] >> 15) & 1;			/* PDCM */
	vg_printf("cpuid 0x1: pdcm=%d\n", fw_writes);
	CHECK("cpuid_reports_a_pmu", version >= 1 && ngp >= 1, "version %u, %u GP", version, ngp);
}

static void
check_gp_counters_count_exactly(void)
{
	unsigned i;

	for (i = 0; i < ngp; i++) {
		CHECK_EQ(nm("gp%u_instructions_exact", i), count_gp(i, EV_INSTR | OS | USR, 0),
		    MEASURE_INSNS(N));
		CHECK_EQ(nm("gp%u_branches_exact", i), count_gp(i, EV_BRANCH | OS | USR, 0),
		    MEASURE_BRANCHES(N));
		CHECK_EQ(nm("gp%u_cycles_are_instructions_at_cpi_1", i),
		    count_gp(i, EV_CYCLES | OS | USR, 0), MEASURE_INSNS(N));
		CHECK_EQ(nm("gp%u_ref_cycles_are_instructions_at_cpi_1", i),
		    count_gp(i, EV_REF | OS, 0), MEASURE_INSNS(N));
		CHECK_EQ(nm("gp%u_fenced_loop_instructions_exact", i),
		    count_gp(i, EV_INSTR | OS | USR, 1), MEASURE_INSNS(N));
	}
	/* Kernel code only: USR alone sees none of it. */
	CHECK_EQ("gp0_usr_only_counts_no_kernel_code", count_gp(0, EV_INSTR | USR, 0), 0);
	/* CMASK=2: no cycle retires two instructions at CPI 1. */
	CHECK_EQ("gp0_cmask_2_counts_no_cycle", count_gp(0, EV_INSTR | OS | (2ull << 24), 0), 0);
	CHECK_EQ("gp0_cmask_1_counts_every_cycle",
	    count_gp(0, EV_INSTR | OS | (1ull << 24), 0), MEASURE_INSNS(N));
	/* An event the source cannot count stays at 0: never invented. */
	CHECK_EQ("gp0_llc_misses_not_modelled_reads_0", count_gp(0, 0x412E | OS, 0), 0);
}

static void
check_disabled_counter_does_not_count(void)
{
	wr(PMC(0), 0);
	wr(EVTSEL(0), EV_INSTR | OS | USR);		/* EN clear */
	conf_measure(EVTSEL(1), 0, EVTSEL(1), 0, N);
	CHECK_EQ("disabled_counter_does_not_count", rd(PMC(0)), 0);
	if (version >= 2) {
		wr(GCTRL, 0);
		wr(EVTSEL(0), EV_INSTR | OS | USR | EN);	/* globally off */
		conf_measure(EVTSEL(1), 0, EVTSEL(1), 0, N);
		CHECK_EQ("globally_disabled_counter_does_not_count", rd(PMC(0)), 0);
		wr(EVTSEL(0), 0);
		wr(GCTRL, (1ull << ngp) - 1);
	}
}

static void
check_write_read_back(void)
{
	unsigned i;

	for (i = 0; i < ngp; i++) {
		wr(PMC(i), 0xdead);
		CHECK_EQ(nm("gp%u_write_0xdead_reads_0xdead", i), rd(PMC(i)), 0xdead);
	}
	for (i = 0; i < nfixed; i++) {
		wr(FIXED(i), 0xdead);
		CHECK_EQ(nm("fixed%u_write_0xdead_reads_0xdead", i), rd(FIXED(i)), 0xdead);
	}
}

static void
check_counters_beyond_advertised_gp(void)
{
	unsigned i;
	int ok = 1;

	for (i = ngp; i < 8; i++)
		ok &= rd_gp(PMC(i)) && wr_gp(PMC(i), 0xffff) && rd_gp(EVTSEL(i)) &&
		    wr_gp(EVTSEL(i), 0) && rd_gp(APMC(i)) && wr_gp(APMC(i), 0);
	CHECK("gp_counters_beyond_advertised_number_gp", ok, "a counter >= %u did not #GP", ngp);
	ok = 1;
	for (i = nfixed; i < 4; i++)
		ok &= rd_gp(FIXED(i)) && wr_gp(FIXED(i), 0);
	CHECK("fixed_counters_beyond_advertised_number_gp", ok, "a fixed counter >= %u did not #GP",
	    nfixed);
	if (version >= 2 && nfixed < 3) {
		CHECK("fixed_ctrl_nibble_of_absent_counter_gp",
		    wr_gp(FIXED_CTRL, 0x3ull << (4 * nfixed)), "no #GP");
		CHECK("global_ctrl_bit_of_absent_fixed_counter_gp",
		    wr_gp(GCTRL, 1ull << (32 + nfixed)), "no #GP");
	}
}

/* The guest's CPUID offers TSX: HLE (7.0 EBX[4]) or RTM (7.0 EBX[11]). */
static int
has_tsx(void)
{
	uint32_t r[4];

	vg_cpuid(0, 0, r);
	if (r[0] < 7)
		return (0);
	vg_cpuid(7, 0, r);
	return ((r[1] & (1u << 4 | 1u << 11)) != 0);
}

/*
 * Event select bits 63:32 are reserved, but for a guest that sees TSX, as
 * KVM allows it: IN_TX (bit 32) on every counter, IN_TXCP (bit 33) on
 * counter 2 only.
 */
static void
check_reserved_bits_gp(void)
{
	int tsx = has_tsx();
	unsigned b;
	int ok = 1;

	for (b = 34; b < 64; b++)
		ok &= wr_gp(EVTSEL(0), 1ull << b);
	CHECK("evtsel_bits_63_34_gp", ok, "a bit above 33 was accepted");
	CHECK("evtsel_in_tx_gp_without_tsx", wr_gp(EVTSEL(0), 1ull << 32) == !tsx,
	    "IN_TX %s with TSX %s", tsx ? "refused" : "accepted", tsx ? "offered" : "absent");
	CHECK("evtsel_in_txcp_gp_off_counter_2", wr_gp(EVTSEL(0), 1ull << 33), "accepted");
	if (ngp > 2)
		CHECK("evtsel_in_txcp_on_counter_2_with_tsx", wr_gp(EVTSEL(2), 1ull << 33) == !tsx,
		    "IN_TXCP on counter 2 %s with TSX %s", tsx ? "refused" : "accepted",
		    tsx ? "offered" : "absent");
	wr(EVTSEL(0), 0);
	if (ngp > 2)
		wr(EVTSEL(2), 0);
	CHECK("evtsel_bit_21_gp", wr_gp(EVTSEL(0), 1ull << 21), "AnyThread accepted");
	if (version >= 2) {
		CHECK("fixed_ctrl_anythread_bit_gp", wr_gp(FIXED_CTRL, 0x4), "accepted");
		CHECK("global_ctrl_reserved_gp", wr_gp(GCTRL, 1ull << ngp) || ngp == 32,
		    "bit %u accepted", ngp);
	}
}

static void
check_legacy_and_full_width_writes(void)
{
	wr(PMC(0), 0xff0123456789ull);
	CHECK_EQ("legacy_write_keeps_low_32_bits", rd(PMC(0)), 0x23456789);
	wr(PMC(0), 0x80000000ull);
	CHECK_EQ("legacy_write_sign_extends_bit_31", rd(PMC(0)), 0xFFFFFFFF80000000ull & gmask);
	if (!fw_writes) {
		CHECK("no_pdcm_no_full_width_alias", rd_gp(APMC(0)) && wr_gp(APMC(0), 1), "no #GP");
		CHECK("no_pdcm_no_perf_capabilities", rd_gp(PERF_CAP), "no #GP");
		return;
	}
	CHECK_EQ("perf_capabilities_full_width_write_bit", rd(PERF_CAP) & (1ull << 13), 1ull << 13);
	CHECK("perf_capabilities_read_only", wr_gp(PERF_CAP, rd(PERF_CAP)), "write accepted");
	wr(APMC(0), 0xff0123456789ull & gmask);
	CHECK_EQ("full_width_write_reads_back_via_legacy", rd(PMC(0)), 0xff0123456789ull & gmask);
	CHECK_EQ("full_width_write_reads_back_via_alias", rd(APMC(0)), 0xff0123456789ull & gmask);
	CHECK("full_width_write_above_width_gp", width >= 64 || wr_gp(APMC(0), gmask + 1),
	    "accepted");
	wr(APMC(0), 0);
}

static void
check_global_msrs(void)
{
	if (version < 2) {
		CHECK("v1_has_no_global_or_fixed_msrs", rd_gp(GCTRL) && rd_gp(GSTATUS) &&
		    rd_gp(GOVF) && rd_gp(FIXED_CTRL) && rd_gp(FIXED(0)), "a v2 MSR exists");
		return;
	}
	CHECK_EQ("global_ctrl_reset_value_sets_gp_bits", rd(GCTRL), (1ull << ngp) - 1);
	CHECK("global_status_write_gp", wr_gp(GSTATUS, 0), "accepted");
	CHECK_EQ("global_ovf_ctrl_reads_0", rd(GOVF), 0);
}

/*
 * Overflow: preset 1 - C, run the C-instruction block: the counter ends at
 * exactly 1 and its status bit is set.  Without INT no NMI; with INT one
 * NMI, at the instruction after the overflowing one (no skid), and the
 * counter also saw the NMI handler, exactly as many instructions as a
 * reference counter saw more than without the NMI.
 */
static void
overflow_one(const char *what, int fixed, unsigned i, int intr)
{
	unsigned ref = fixed ? 0 : (i + 1) % ngp;	/* == i when ngp is 1: no reference */
	int has_ref = fixed || ngp > 1;
	uint32_t ctr = fixed ? FIXED(i) : PMC(i);
	uint64_t C = MEASURE_INSNS(N), bit = fixed ? 1ull << (32 + i) : 1ull << i;
	uint64_t mask = fixed ? fmask : gmask, nmis, a, r0 = 0, r1;
	unsigned cpu = vg_cpu_index();

	if (version >= 2) {
		wr(GCTRL, 0);
		wr(GOVF, rd(GSTATUS));
	}
	/* The reference: counter ref counting instructions around the block. */
	/* v2+: programmed now, started by GLOBAL_CTRL; v1: started by the block. */
	if (fixed)
		wr(FIXED_CTRL, 0x3ull << (4 * i) | (intr ? 0x8ull << (4 * i) : 0));
	else
		wr(EVTSEL(i), EV_INSTR | OS | (version >= 2 ? EN : 0) | (intr ? INT : 0));
	/* Run 1: no overflow; run 2: preset 1 - C. */
	for (int run = 0; run < 2; run++) {
		wr(ctr, run == 0 ? 0 : (1 - C) & mask);
		if (has_ref) {
			wr(PMC(ref), 0);
			wr(EVTSEL(ref), EV_INSTR | OS | EN);
		}
		nmis = vg_nmi_count();
		conf_measure(version >= 2 ? GCTRL : EVTSEL(i),
		    version >= 2 ? bit | (1ull << ref) : EV_INSTR | OS | EN | (intr ? INT : 0),
		    version >= 2 ? GCTRL : EVTSEL(i), 0, N);
		a = rd(ctr);
		r1 = has_ref ? rd(PMC(ref)) : 0;
		if (has_ref)
			wr(EVTSEL(ref), 0);
		if (run == 0) {
			r0 = r1;
			CHECK_EQ(nms(what, "_calibration_counts_C"), a, C);
			continue;
		}
		if (version >= 2)
			CHECK(nms(what, "_sets_global_status"), (rd(GSTATUS) & bit) != 0,
			    "GLOBAL_STATUS 0x%lx", (unsigned long)rd(GSTATUS));
		if (!intr) {
			CHECK_EQ(nms(what, "_ends_at_exactly_1"), a, 1);
			CHECK_EQ(nms(what, "_no_nmi_without_int"), vg_nmi_count() - nmis, 0);
		} else {
			CHECK_EQ(nms(what, "_one_nmi_with_int"), vg_nmi_count() - nmis, 1);
			CHECK_EQ(nms(what, "_nmi_lands_on_the_next_instruction"),
			    conf_nmi_rip[cpu], (uint64_t)(uintptr_t)conf_measure_last);
			if (has_ref)
				CHECK_EQ(nms(what, "_counts_1_plus_the_nmi_handler"), a - 1, r1 - r0);
		}
	}
	if (fixed)
		wr(FIXED_CTRL, 0);
	else
		wr(EVTSEL(i), 0);
	if (version >= 2) {
		wr(GOVF, rd(GSTATUS));
		CHECK_EQ(nms(what, "_ovf_ctrl_clears_status"), rd(GSTATUS), 0);
		wr(GCTRL, (1ull << ngp) - 1);
	}
}

static void
check_overflow(void)
{
	char what[64];
	unsigned i;

	vg_set_nmi_handler(conf_nmi_handler);
	for (i = 0; i < ngp; i++) {
		vg_snprintf(what, sizeof(what), "gp%u_overflow%s", i, (i & 1) ? "_int" : "");
		overflow_one(what, 0, i, i & 1);
	}
	for (i = 0; i < nfixed && ngp > 0; i++) {
		vg_snprintf(what, sizeof(what), "fixed%u_overflow%s", i, i == 0 ? "_int" : "");
		overflow_one(what, 1, i, i == 0);
	}
}

static void
check_fixed_counters(void)
{
	static const char *const names[] = { "fixed0_instructions_exact",
	    "fixed1_cycles_exact", "fixed2_ref_cycles_exact" };
	unsigned i;

	for (i = 0; i < nfixed && i < 3; i++)
		CHECK_EQ(names[i], count_fixed(i), MEASURE_INSNS(N));
}

/*
 * Counter 0 is already running (it has counted the set-up code) when the
 * measured block's first WRMSR writes 0 into it: from there it counts the
 * block exactly, and the block's last WRMSR stops it.
 */
static void
check_write_to_running_counter(void)
{
	wr(PMC(0), 1000000);
	wr(EVTSEL(0), EV_INSTR | OS | EN);
	conf_measure(PMC(0), 0, EVTSEL(0), 0, N);
	CHECK_EQ("write_to_running_counter_takes_effect", rd(PMC(0)), MEASURE_INSNS(N));
}

static void
check_all_counters_at_once(void)
{
	uint64_t all = 0, v[8] = { 0 }, f[3] = { 0 };
	unsigned i;
	int ok = 1;

	if (version < 2)
		return;
	wr(GCTRL, 0);
	for (i = 0; i < ngp; i++) {
		wr(PMC(i), 0);
		wr(EVTSEL(i), ((i & 1) ? EV_BRANCH : EV_INSTR) | OS | EN);
		all |= 1ull << i;
	}
	for (i = 0; i < nfixed; i++) {
		wr(FIXED(i), 0);
		all |= 1ull << (32 + i);
	}
	wr(FIXED_CTRL, nfixed == 0 ? 0 : (0x333ull & ((1ull << (4 * nfixed)) - 1)));
	conf_measure(GCTRL, all, GCTRL, 0, N);
	for (i = 0; i < ngp; i++) {
		v[i] = rd(PMC(i));
		ok &= v[i] == ((i & 1) ? MEASURE_BRANCHES(N) : MEASURE_INSNS(N));
		wr(EVTSEL(i), 0);
	}
	for (i = 0; i < nfixed; i++) {
		f[i] = rd(FIXED(i));
		ok &= f[i] == MEASURE_INSNS(N);
	}
	wr(FIXED_CTRL, 0);
	wr(GCTRL, (1ull << ngp) - 1);
	CHECK("all_counters_at_once_exact", ok, "gp0=%lu gp1=%lu fixed0=%lu",
	    (unsigned long)v[0], (unsigned long)v[1], (unsigned long)f[0]);
}

/*
 * RDPMC, answered by libvpmu although KVM never hands it to user space:
 * idle (the #GP caught at the guest's handler) and while an exact count
 * runs (the instruction seen before it runs); GP and fixed (bit 30)
 * indexes, legacy writes sign-extended, the width; #GP for an index the
 * model lacks and for the fast-read bit 31.
 */
static void
check_rdpmc(void)
{
	uint64_t v, want;
	unsigned i;
	int ok = 1, fault;

	for (i = 0; i < ngp; i++) {
		wr(PMC(i), 0x12345670 + i);
		ok &= vg_rdpmc_safe(i, &v) == 0 && v == 0x12345670 + i &&
		    v == rd(PMC(i));
	}
	CHECK("rdpmc_gp_counters", ok, "counter %u: %#lx", i, (unsigned long)v);
	wr(PMC(0), 0x89abcdef);			/* a legacy write: sign-extended */
	want = 0xFFFFFFFF89ABCDEFull & gmask;
	CHECK("rdpmc_legacy_write_sign_extended", vg_rdpmc_safe(0, &v) == 0 && v == want,
	    "%#lx, want %#lx", (unsigned long)v, (unsigned long)want);
	for (i = 0, ok = 1; i < nfixed; i++) {
		wr(FIXED(i), 0xABC0 + i);
		ok &= vg_rdpmc_safe(i | 1u << 30, &v) == 0 && v == 0xABC0 + i;
	}
	CHECK("rdpmc_fixed_counters", ok, "fixed %u: %#lx", i, (unsigned long)v);
	CHECK("rdpmc_gp_beyond_counters", vg_rdpmc_safe(ngp, &v) == VG_GP, "no #GP");
	CHECK("rdpmc_fixed_beyond_counters", vg_rdpmc_safe(nfixed | 1u << 30, &v) == VG_GP,
	    "no #GP");
	CHECK("rdpmc_fast_read_gp", vg_rdpmc_safe(1u << 31, &v) == VG_GP, "no #GP");
	CHECK("rdpmc_64_gp", vg_rdpmc_safe(64, &v) == VG_GP, "no #GP");
	CHECK("rdmsr_gp_after_rdpmc", rd_gp(0xdeadbeefu), "no #GP");
	/* While counting: the reads see the instructions between them, exactly. */
	wr(PMC(0), 0);
	if (version >= 2)
		wr(GCTRL, 0);
	wr(EVTSEL(0), EV_INSTR | OS | EN);
	if (version >= 2)
		wr(GCTRL, 1);
	v = conf_rdpmc_span(0);
	fault = vg_rdpmc_safe(ngp, &want);
	if (version >= 2)
		wr(GCTRL, 0);
	wr(EVTSEL(0), 0);
	if (version >= 2)
		wr(GCTRL, (1ull << ngp) - 1);
	CHECK("rdpmc_while_counting_exact", v == RDPMC_SPAN_INSNS, "%lu, want %u",
	    (unsigned long)v, RDPMC_SPAN_INSNS);
	CHECK("rdpmc_beyond_while_counting_gp", fault == VG_GP, "vector %d", fault);
}

static volatile uint64_t counted[VG_MAX_CPUS];

int
main(unsigned cpu)
{
	unsigned i;

	if (cpu == 0) {
		check_cpuid();
		if (ngp == 0)
			return (conf_done());
		check_gp_counters_count_exactly();
		check_fixed_counters();
		check_disabled_counter_does_not_count();
		check_write_read_back();
		check_counters_beyond_advertised_gp();
		check_reserved_bits_gp();
		check_legacy_and_full_width_writes();
		check_global_msrs();
		check_write_to_running_counter();
		check_all_counters_at_once();
		check_overflow();
		check_rdpmc();
	}
	vg_barrier();
	/* Every vCPU counts its own loop, of its own length, at once. */
	if (version >= 2)
		wr(GCTRL, 0);
	wr(PMC(0), 0);
	wr(EVTSEL(0), EV_INSTR | OS | (version >= 2 ? EN : 0));
	conf_measure(version >= 2 ? GCTRL : EVTSEL(0), version >= 2 ? 1 : EV_INSTR | OS | EN,
	    version >= 2 ? GCTRL : EVTSEL(0), 0, N + 10 * cpu);
	counted[cpu] = rd(PMC(0));
	vg_barrier();
	if (cpu != 0)
		return (0);			/* vCPU 0 reports for everyone */
	for (i = 0; i < vg_ncpus(); i++)
		CHECK_EQ(nm("vcpu%u_counts_its_own_loop_independently", i), counted[i],
		    MEASURE_INSNS(N + 10 * i));
	return (conf_done());
}
