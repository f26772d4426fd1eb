/*
 * lapic.c -- PMIs through the local APIC (vpmu-run's in-kernel irqchip,
 * its default), on the Intel (leaf 0xA version 2 or later) or AMD
 * (PerfMonV2) PMU the guest finds in CPUID.  vCPU 0 runs every check; a
 * counter with its interrupt bit overflows after the measured block of
 * conf.h, at a known instruction.
 *
 *   boot_*        the APIC as the boot protocol leaves it, never touched:
 *                 one NMI per overflow, 3 times (on Intel vpmu-run re-arms
 *                 the NMI entry the PMI masked); then, in x2APIC mode,
 *                 LVTPC reads 0x400
 *   x2apic_*      CPUID offers x2APIC and the guest enables it
 *   vector_*      LVTPC = fixed vector 0xF0, IF = 1: one interrupt per
 *                 overflow, 3 times, at vector 0xF0; the handler reads
 *                 LVTPC (Intel: masked by the delivery, 0x100F0; AMD:
 *                 0xF0 as written), unmasks it and writes the EOI
 *   masked_*      LVTPC = 0x100F0: the overflow sets the status bit, no
 *                 interrupt and no NMI comes, not even once unmasked
 *   nmi_*         LVTPC = 0x400 written in x2APIC mode: one NMI; on Intel
 *                 the entry is then masked and stays so (no re-arm in
 *                 x2APIC mode): the second overflow is lost, and after the
 *                 guest re-arms it the third is delivered; on AMD all three
 */
#include "conf.h"

#define N		100
#define VEC		0xF0u
#define WAIT		200	/* PAUSEs to wait for an interrupt that may come */

/* The counter and the global status of the PMU found. */
static struct {
	int	 intel;
	uint32_t sel, ctr, gstatus, gclear;
	uint64_t sel_on;	/* instructions, OS, INT, EN */
} pmu;

static volatile uint64_t irq_vector, irq_lvtpc;

static void
irq_handler(unsigned cpu, struct vg_frame *f)
{
	(void)cpu;
	irq_vector = f->vector;
	irq_lvtpc = vg_rdmsr(VG_MSR_X2APIC_LVTPC);
	vg_wrmsr(VG_MSR_X2APIC_LVTPC, irq_lvtpc & ~(uint64_t)VG_LVT_MASKED);
	vg_x2apic_eoi();
}

/* Which PMU: 0, or -1 if neither this test's Intel nor its AMD. */
static int
find_pmu(void)
{
	uint32_t r[4];

	vg_cpuid(0xa, 0, r);
	if ((r[0] & 0xff) >= 2 && ((r[0] >> 8) & 0xff) >= 1) {
		pmu.intel = 1;
		pmu.sel = 0x186;		/* IA32_PERFEVTSEL0 */
		pmu.ctr = 0xc1;			/* IA32_PMC0: writes sign-extend bit 31 */
		pmu.gstatus = 0x38e;		/* IA32_PERF_GLOBAL_STATUS */
		pmu.gclear = 0x390;		/* IA32_PERF_GLOBAL_OVF_CTRL */
		pmu.sel_on = 0xc0 | 1ull << 17 | 1ull << 20 | 1ull << 22;
		wr(0x38f, 1);			/* IA32_PERF_GLOBAL_CTRL: PMC0 */
		return (0);
	}
	vg_cpuid(0x80000000, 0, r);
	if (r[0] >= 0x80000022) {
		vg_cpuid(0x80000022, 0, r);
		if (r[0] & 1) {			/* PerfMonV2 */
			pmu.sel = 0xc0010200;	/* PerfEvtSel0 */
			pmu.ctr = 0xc0010201;	/* PerfCtr0 */
			pmu.gstatus = 0xc0000300;
			pmu.gclear = 0xc0000302;
			pmu.sel_on = 0xc0 | 1ull << 17 | 1ull << 20 | 1ull << 22;
			wr(0xc0000301, 1);	/* PerfCntrGlobalCtl: counter 0 */
			return (0);
		}
	}
	return (-1);
}

/*
 * One overflow: counter 0 preset so that the measured block ends it at 1,
 * interrupts on (IF) for the block if sti, then up to WAIT PAUSEs for the
 * PMI to be taken.  Returns GLOBAL_STATUS bit 0 as the block left it, and
 * clears it.
 */
static int
overflow(int sti)
{
	uint64_t C = MEASURE_INSNS(N), nmis = vg_nmi_count(), irqs = vg_irq_count();
	uint64_t st;
	int i;

	wr(pmu.gclear, 1);
	wr(pmu.ctr, (1 - C) & 0xffffffffffffull);
	if (sti)
		vg_sti();
	conf_measure(pmu.sel, pmu.sel_on, pmu.sel, 0, N);
	for (i = 0; i < WAIT && vg_nmi_count() == nmis && vg_irq_count() == irqs; i++)
		vg_pause();
	vg_cli();
	st = rd(pmu.gstatus) & 1;
	wr(pmu.gclear, 1);
	return ((int)st);
}

static void
check_boot_apic(void)
{
	uint64_t nmis = vg_nmi_count();
	int i;

	for (i = 0; i < 3; i++) {
		CHECK_EQ("boot_overflow_sets_status", overflow(0), 1);
		CHECK_EQ("boot_one_nmi_per_overflow", vg_nmi_count() - nmis, (uint64_t)i + 1);
	}
}

static void
check_vector(void)
{
	uint64_t irqs = vg_irq_count(), nmis = vg_nmi_count();
	int i;

	wr(VG_MSR_X2APIC_LVTPC, VEC);
	for (i = 0; i < 3; i++) {
		irq_vector = irq_lvtpc = 0;
		CHECK_EQ("vector_overflow_sets_status", overflow(1), 1);
		CHECK_EQ("vector_one_interrupt_per_overflow", vg_irq_count() - irqs,
		    (uint64_t)i + 1);
		CHECK_EQ("vector_is_lvtpc_vector", irq_vector, VEC);
		if (pmu.intel)
			CHECK_EQ("vector_lvtpc_masked_by_delivery", irq_lvtpc,
			    VEC | VG_LVT_MASKED);
		else
			CHECK_EQ("vector_lvtpc_unchanged_by_delivery", irq_lvtpc, VEC);
	}
	CHECK_EQ("vector_no_nmi", vg_nmi_count() - nmis, 0);
}

static void
check_masked(void)
{
	uint64_t irqs = vg_irq_count(), nmis = vg_nmi_count();
	int i;

	wr(VG_MSR_X2APIC_LVTPC, VEC | VG_LVT_MASKED);
	CHECK_EQ("masked_overflow_sets_status", overflow(1), 1);
	/* No handler ran inside the block: the counter ends at exactly 1. */
	CHECK_EQ("masked_counter_ends_at_1", rd(pmu.ctr), 1);
	CHECK_EQ("masked_no_interrupt", vg_irq_count() - irqs, 0);
	CHECK_EQ("masked_no_nmi", vg_nmi_count() - nmis, 0);
	CHECK_EQ("masked_lvtpc_unchanged", rd(VG_MSR_X2APIC_LVTPC), VEC | VG_LVT_MASKED);
	/* The lost PMI is not latched: unmasking brings nothing. */
	wr(VG_MSR_X2APIC_LVTPC, VEC);
	vg_sti();
	for (i = 0; i < WAIT; i++)
		vg_pause();
	vg_cli();
	CHECK_EQ("masked_pmi_lost_for_good", vg_irq_count() - irqs, 0);
}

static void
check_nmi(void)
{
	uint64_t nmis = vg_nmi_count(), irqs = vg_irq_count();

	wr(VG_MSR_X2APIC_LVTPC, VG_LVT_NMI);
	CHECK_EQ("nmi_first_overflow_sets_status", overflow(0), 1);
	CHECK_EQ("nmi_first_overflow_one_nmi", vg_nmi_count() - nmis, 1);
	CHECK_EQ("nmi_lvtpc_after_delivery", rd(VG_MSR_X2APIC_LVTPC),
	    pmu.intel ? VG_LVT_NMI | VG_LVT_MASKED : VG_LVT_NMI);
	CHECK_EQ("nmi_second_overflow_sets_status", overflow(0), 1);
	/* Intel: masked since the first, and vpmu-run does not re-arm in x2APIC mode. */
	CHECK_EQ("nmi_second_overflow", vg_nmi_count() - nmis, pmu.intel ? 1 : 2);
	if (pmu.intel)
		wr(VG_MSR_X2APIC_LVTPC, VG_LVT_NMI);	/* re-armed by the guest */
	CHECK_EQ("nmi_third_overflow_sets_status", overflow(0), 1);
	CHECK_EQ("nmi_third_overflow", vg_nmi_count() - nmis, pmu.intel ? 2 : 3);
	CHECK_EQ("nmi_no_interrupt", vg_irq_count() - irqs, 0);
}

int
main(unsigned cpu)
{
	uint32_t r[4];

	if (cpu != 0)
		return (0);
	if (find_pmu() != 0) {
		vg_printf("not ok - lapic: no Intel v2+ or AMD PerfMonV2 PMU in CPUID\n");
		return (1);
	}
	vg_printf("lapic: %s PMU\n", pmu.intel ? "intel" : "amd");
	vg_set_irq_handler(irq_handler);
	check_boot_apic();

	vg_cpuid(1, 0, r);
	CHECK("x2apic_in_cpuid", (r[2] & (1u << 21)) != 0, "CPUID.1:ECX 0x%x", r[2]);
	CHECK("x2apic_enable", vg_x2apic_enable() == 0, "IA32_APIC_BASE or SPIV faulted");
	CHECK_EQ("x2apic_mode", rd(VG_MSR_APIC_BASE) &
	    (VG_APIC_BASE_EN | VG_APIC_BASE_EXTD), VG_APIC_BASE_EN | VG_APIC_BASE_EXTD);
	/* What the boot protocol's 3 PMIs left: NMI delivery, unmasked. */
	CHECK_EQ("boot_lvtpc_after_3_pmis", rd(VG_MSR_X2APIC_LVTPC), VG_LVT_NMI);

	check_vector();
	check_masked();
	check_nmi();
	wr(pmu.sel, 0);
	return (conf_done());
}
