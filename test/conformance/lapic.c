/*
 * lapic.c -- PMIs through the local APIC, on the Intel (leaf 0xA version 2
 * or later) or AMD (PerfMonV2) PMU the guest finds in CPUID.  A counter
 * with its interrupt bit overflows after the measured block of conf.h, at
 * a known instruction.
 *
 * Which irqchip.  With vpmu-run's default, --irqchip kernel, each vCPU has
 * KVM's in-kernel local APIC: CPUID.1 offers it (EDX.APIC) and x2APIC
 * (ECX.x2APIC), and a PMI goes through its LVT performance-counter entry
 * (LVTPC) as the guest programmed it, in either of the APIC's two modes,
 * which reach the same registers two ways: xAPIC (the mode the boot
 * protocol leaves; the registers in the 4 KiB page at 0xFEE00000, which
 * vg_xapic_enable() maps uncached, as the boot protocol's identity map
 * stops at 1 GiB) and x2APIC (MSRs 0x800 + offset / 16).  The guest takes
 * fixed-vector, NMI and masked PMIs in xAPIC mode, then switches to x2APIC
 * mode and takes them again: vpmu-run's KVM glue writes the Intel mask bit
 * differently in the two modes (the whole LAPIC page in xAPIC mode, the
 * LVTPC MSR in x2APIC mode; issue 32: the page written back after the MSI
 * took back its IRR bit, and no xAPIC vector PMI ever arrived).
 * With --irqchip user there is no local APIC at all (KVM emulates none):
 * no LVTPC to program, no register page or MSR to reach it by, no mode to
 * switch, and every PMI is injected as an NMI.  There the guest runs the
 * boot_* checks only, which need no APIC, and checks that x2APIC mode is
 * refused, and that CPUID.1:EDX.APIC is clear: KVM sets that bit whenever
 * IA32_APIC_BASE's enable bit is set, so vpmu-run clears the enable bit
 * with no APIC behind it.  It tells the two apart by CPUID.1:ECX.x2APIC,
 * which vpmu-run offers with the in-kernel irqchip only.
 *
 * Each vCPU runs the checks in turn (vCPU 0 first; with --vcpus N the
 * names of vCPU i > 0 start "vcpuI_", and the MSI that carries a vector
 * PMI must reach vCPU i's APIC, not vCPU 0's).
 *
 *   boot_*        the APIC as the boot protocol leaves it, never touched:
 *                 one NMI per overflow, 3 times (on Intel vpmu-run re-arms
 *                 the NMI entry the PMI masked while the APIC is in xAPIC
 *                 mode and LVTPC reads exactly 0x10400)
 *   no_lapic_*    --irqchip user: vg_x2apic_enable() fails
 *   xapic_*       IA32_APIC_BASE is enabled in xAPIC mode at 0xFEE00000,
 *                 CPUID has the APIC and the page maps (vg_xapic_enable()),
 *                 the APIC ID (bits 31:24) is the vCPU index, and
 *                 LVTPC reads 0x400 after the 3 boot PMIs (Intel: the
 *                 re-arm); then the three below with the page's registers
 *   x2apic_*      the guest enables x2APIC mode, the APIC ID
 *                 MSR is the vCPU index and LVTPC is what xAPIC mode left
 *                 in it; then the three below with the x2APIC MSRs
 *   M_vector_*    LVTPC = fixed vector 0xF0, IF = 1: one interrupt per
 *                 overflow, 3 times, at vector 0xF0; the handler reads
 *                 LVTPC (Intel: masked by the delivery, 0x100F0; AMD: 0xF0
 *                 as written), unmasks it and writes the EOI.  (Not the
 *                 ISR: on this project's hosts, nested under KVM's PVM, it
 *                 reads 0 in the handler, for a self-IPI too.)
 *   M_masked_*    LVTPC = 0x100F0: the overflow sets the status bit, no
 *                 interrupt and no NMI comes, not even once unmasked
 *   M_nmi_*       LVTPC = NMI delivery: one NMI; on Intel the entry is then
 *                 masked and stays so: the second overflow is lost, and
 *                 after the guest re-arms it the third is delivered; on AMD
 *                 all three.  The entry is 0x400 in x2APIC mode (vpmu-run
 *                 does not re-arm there) and 0x4F0 in xAPIC mode: NMI
 *                 delivery ignores the vector field, and 0x104F0 is not the
 *                 boot value vpmu-run re-arms, so the SDM's masking shows
 */
#include "conf.h"

#define N		100
#define VEC		0xF0u
#define WAIT		200	/* PAUSEs to wait for an interrupt that may come */
#define MSR_X2APIC_ID	VG_MSR_X2APIC(VG_XAPIC_ID)

/* The counter and the global status of the PMU found. */
static struct {
	int	 intel;
	uint32_t sel, ctr, gstatus, gclear, gctrl;
	uint64_t sel_on;	/* instructions, OS, INT, EN */
} pmu;

/* The APIC's registers: through the xAPIC page (1) or the x2APIC MSRs (0). */
static int xapic;
/* The checks' names: "[vcpuI_]" and the mode's prefix. */
static char prefix[32];

static volatile uint64_t irq_vector, irq_lvtpc;

static uint32_t
apic_rd(uint32_t reg)
{
	return (xapic ? vg_xapic_read(reg) : (uint32_t)vg_rdmsr(VG_MSR_X2APIC(reg)));
}

static void
apic_wr(uint32_t reg, uint32_t v)
{
	if (xapic)
		vg_xapic_write(reg, v);
	else
		vg_wrmsr(VG_MSR_X2APIC(reg), v);
}

/* prefix + name, for one check (CHECK uses it at once). */
static const char *
nm(const char *name)
{
	static char buf[96];

	vg_snprintf(buf, sizeof(buf), "%s%s", prefix, name);
	return (buf);
}

static void
irq_handler(unsigned cpu, struct vg_frame *f)
{
	(void)cpu;
	irq_vector = f->vector;
	irq_lvtpc = apic_rd(VG_XAPIC_LVTPC);
	apic_wr(VG_XAPIC_LVTPC, (uint32_t)irq_lvtpc & ~VG_LVT_MASKED);
	if (xapic)
		vg_xapic_eoi();
	else
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
		pmu.gctrl = 0x38f;		/* IA32_PERF_GLOBAL_CTRL */
		pmu.sel_on = 0xc0 | 1ull << 17 | 1ull << 20 | 1ull << 22;
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
			pmu.gctrl = 0xc0000301;	/* PerfCntrGlobalCtl */
			pmu.sel_on = 0xc0 | 1ull << 17 | 1ull << 20 | 1ull << 22;
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
		CHECK_EQ(nm("boot_overflow_sets_status"), overflow(0), 1);
		CHECK_EQ(nm("boot_one_nmi_per_overflow"), vg_nmi_count() - nmis,
		    (uint64_t)i + 1);
	}
}

static void
check_vector(void)
{
	uint64_t irqs = vg_irq_count(), nmis = vg_nmi_count();
	int i;

	apic_wr(VG_XAPIC_LVTPC, VEC);
	for (i = 0; i < 3; i++) {
		irq_vector = irq_lvtpc = 0;
		CHECK_EQ(nm("vector_overflow_sets_status"), overflow(1), 1);
		CHECK_EQ(nm("vector_one_interrupt_per_overflow"), vg_irq_count() - irqs,
		    (uint64_t)i + 1);
		CHECK_EQ(nm("vector_is_lvtpc_vector"), irq_vector, VEC);
		if (pmu.intel)
			CHECK_EQ(nm("vector_lvtpc_masked_by_delivery"), irq_lvtpc,
			    VEC | VG_LVT_MASKED);
		else
			CHECK_EQ(nm("vector_lvtpc_unchanged_by_delivery"), irq_lvtpc, VEC);
	}
	CHECK_EQ(nm("vector_no_nmi"), vg_nmi_count() - nmis, 0);
}

static void
check_masked(void)
{
	uint64_t irqs = vg_irq_count(), nmis = vg_nmi_count();
	int i;

	apic_wr(VG_XAPIC_LVTPC, VEC | VG_LVT_MASKED);
	CHECK_EQ(nm("masked_overflow_sets_status"), overflow(1), 1);
	/* No handler ran inside the block: the counter ends at exactly 1. */
	CHECK_EQ(nm("masked_counter_ends_at_1"), rd(pmu.ctr), 1);
	CHECK_EQ(nm("masked_no_interrupt"), vg_irq_count() - irqs, 0);
	CHECK_EQ(nm("masked_no_nmi"), vg_nmi_count() - nmis, 0);
	CHECK_EQ(nm("masked_lvtpc_unchanged"), apic_rd(VG_XAPIC_LVTPC), VEC | VG_LVT_MASKED);
	/* The lost PMI is not latched: unmasking brings nothing. */
	apic_wr(VG_XAPIC_LVTPC, VEC);
	vg_sti();
	for (i = 0; i < WAIT; i++)
		vg_pause();
	vg_cli();
	CHECK_EQ(nm("masked_pmi_lost_for_good"), vg_irq_count() - irqs, 0);
}

/* NMI delivery with entry (see the top of the file for the two values). */
static void
check_nmi(uint32_t entry)
{
	uint64_t nmis = vg_nmi_count(), irqs = vg_irq_count();

	apic_wr(VG_XAPIC_LVTPC, entry);
	CHECK_EQ(nm("nmi_first_overflow_sets_status"), overflow(0), 1);
	CHECK_EQ(nm("nmi_first_overflow_one_nmi"), vg_nmi_count() - nmis, 1);
	CHECK_EQ(nm("nmi_lvtpc_after_delivery"), apic_rd(VG_XAPIC_LVTPC),
	    pmu.intel ? entry | VG_LVT_MASKED : entry);
	CHECK_EQ(nm("nmi_second_overflow_sets_status"), overflow(0), 1);
	/* Intel: masked since the first, and not an entry vpmu-run re-arms. */
	CHECK_EQ(nm("nmi_second_overflow"), vg_nmi_count() - nmis, pmu.intel ? 1 : 2);
	if (pmu.intel)
		apic_wr(VG_XAPIC_LVTPC, entry);		/* re-armed by the guest */
	CHECK_EQ(nm("nmi_third_overflow_sets_status"), overflow(0), 1);
	CHECK_EQ(nm("nmi_third_overflow"), vg_nmi_count() - nmis, pmu.intel ? 2 : 3);
	CHECK_EQ(nm("nmi_no_interrupt"), vg_irq_count() - irqs, 0);
}

static void
set_prefix(unsigned cpu, const char *mode)
{
	if (cpu != 0)
		vg_snprintf(prefix, sizeof(prefix), "vcpu%u_%s", cpu, mode);
	else
		vg_snprintf(prefix, sizeof(prefix), "%s", mode);
}

/* xAPIC mode, as the boot protocol left it; 0 if the checks could run. */
static int
check_xapic(unsigned cpu)
{
	uint64_t base;
	int ok;

	set_prefix(cpu, "xapic_");
	base = rd(VG_MSR_APIC_BASE);
	CHECK_EQ(nm("mode"), base & (VG_APIC_BASE_EN | VG_APIC_BASE_EXTD), VG_APIC_BASE_EN);
	CHECK_EQ(nm("base"), base & ~0xfffull, VG_XAPIC_BASE);
	ok = vg_xapic_enable() == 0;
	CHECK(nm("enable"), ok, "no APIC in CPUID, x2APIC mode or the page did not map");
	if (!ok)
		return (-1);
	xapic = 1;
	CHECK_EQ(nm("id_is_vcpu_index"), apic_rd(VG_XAPIC_ID) >> 24, cpu);
	/* What the boot protocol's 3 PMIs left: NMI delivery, unmasked. */
	CHECK_EQ(nm("boot_lvtpc_after_3_pmis"), apic_rd(VG_XAPIC_LVTPC), VG_LVT_NMI);
	check_vector();
	check_masked();
	check_nmi(VG_LVT_NMI | VEC);
	return (0);
}

static void
check_x2apic(unsigned cpu)
{
	int ok;

	set_prefix(cpu, "x2apic_");
	ok = vg_x2apic_enable() == 0;
	CHECK(nm("enable"), ok, "IA32_APIC_BASE or SPIV faulted");
	if (!ok)
		return;
	xapic = 0;
	CHECK_EQ(nm("mode"), rd(VG_MSR_APIC_BASE) & (VG_APIC_BASE_EN | VG_APIC_BASE_EXTD),
	    VG_APIC_BASE_EN | VG_APIC_BASE_EXTD);
	CHECK_EQ(nm("id_is_vcpu_index"), rd(MSR_X2APIC_ID), cpu);
	/* The switch keeps LVTPC: what xAPIC mode's last PMI left. */
	CHECK_EQ(nm("lvtpc_kept_from_xapic"), rd(VG_MSR_X2APIC_LVTPC),
	    pmu.intel ? VG_LVT_NMI | VEC | VG_LVT_MASKED : VG_LVT_NMI | VEC);
	check_vector();
	check_masked();
	check_nmi(VG_LVT_NMI);
}

/* --irqchip user: no local APIC behind the vCPU. */
static void
check_no_lapic(unsigned cpu)
{
	uint32_t r[4];

	set_prefix(cpu, "no_lapic_");
	CHECK(nm("x2apic_enable_fails"), vg_x2apic_enable() == -1, "it succeeded");
	vg_cpuid(1, 0, r);
	CHECK(nm("cpuid_no_apic"), (r[3] & (1u << 9)) == 0, "CPUID.1:EDX = %#x", r[3]);
}

static void
run(unsigned cpu)
{
	uint32_t r[4];
	int lapic;

	wr(pmu.gctrl, 1);			/* counter 0 */
	vg_cpuid(1, 0, r);
	lapic = (r[2] & (1u << 21)) != 0;	/* CPUID.1:ECX.x2APIC (see the top) */
	if (cpu == 0)
		vg_printf("lapic: %s\n", lapic ? "in-kernel local APIC" :
		    "no local APIC (PMIs are NMIs)");
	set_prefix(cpu, "");
	check_boot_apic();
	if (!lapic) {
		check_no_lapic(cpu);
	} else if (check_xapic(cpu) == 0)
		check_x2apic(cpu);
	wr(pmu.sel, 0);
	wr(pmu.gctrl, 0);
}

int
main(unsigned cpu)
{
	unsigned i;

	if (cpu == 0) {
		if (find_pmu() != 0) {
			vg_printf("not ok - lapic: no Intel v2+ or AMD PerfMonV2 PMU "
			    "in CPUID\n");
			return (1);
		}
		vg_printf("lapic: %s PMU\n", pmu.intel ? "intel" : "amd");
	}
	vg_set_irq_handler(irq_handler);
	/* One vCPU at a time: the check counts and names are shared. */
	for (i = 0; i < vg_ncpus(); i++) {
		vg_barrier();
		if (i == cpu)
			run(cpu);
	}
	vg_barrier();
	return (cpu == 0 ? conf_done() : 0);
}
