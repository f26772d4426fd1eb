/*
 * ref_tsc.c -- reference cycles follow the TSC while the vCPU is not
 * halted (issue 31, vpmu_exact(7): the exact source's default, ref_cpi 0),
 * checked by bounds the guest's own RDTSC gives, which hold exactly
 * whatever the host's speed: a counter enabled by a WRMSR between two
 * RDTSCs t0 < t0' and disabled by one between t1' < t1 counts at least
 * t1' - t0' (it certainly counted over that stretch) and at most t1 - t0.
 * Run at CPL 0 with the in-kernel LAPIC (--irqchip kernel; the timer wakes
 * the HLT below), on a guest TSC at the host's rate (vpmu-run's).
 *
 *   fixed    IA32_FIXED_CTR2 (OS and USR) over a loop
 *   gp       PMC0 on 0x013C (UnHalted Reference Cycles, OS and USR)
 *   os       PMC0 on 0x013C, OS only: the loop runs at CPL 0, same bounds
 *   usr      PMC0 on 0x013C, USR only: exactly 0 at CPL 0
 *   halted   PMC0 on 0x013C over `sti; hlt` woken by a 20 ms x2APIC
 *            timer: the halt is not counted, so the count is less than
 *            half the TSC's advance over it
 *
 * Prints a line per check and "ref_tsc: N failed", and exits with N.
 */
#include <vpmu-guest/runtime.h>

#define MSR_PMC0		0xc1
#define MSR_EVTSEL0		0x186
#define MSR_FIXED_CTR2		0x30b
#define MSR_FIXED_CTR_CTRL	0x38d
#define MSR_GLOBAL_CTRL		0x38f
#define MSR_X2APIC_LVTT		0x832
#define MSR_X2APIC_TMICT	0x838
#define MSR_X2APIC_TDCR		0x83e
#define EV_REF			0x013Cull
#define SEL_USR			(1ull << 16)
#define SEL_OS			(1ull << 17)
#define SEL_EN			(1ull << 22)
#define FIXED2_OS_USR		(3ull << 8)
#define GLOBAL_PMC0		1ull
#define GLOBAL_FIXED2		(1ull << 34)
#define TIMER_VECTOR		0x40
#define TIMER_TICKS		20000000u	/* KVM's APIC timer: 1 ns a tick */
#define LOOPS			20000u

static volatile bool woke;
static unsigned failed;

static void
tick(unsigned cpu, struct vg_frame *f)
{
	(void)cpu;
	(void)f;
	woke = true;
	vg_x2apic_eoi();
}

static void
work(void)
{
	unsigned n = LOOPS;

	__asm__ volatile("1: dec %0\n\tjnz 1b" : "+r"(n) : : "cc");
}

static void
check(const char *name, bool ok, uint64_t count, uint64_t lo, uint64_t hi)
{
	vg_printf("ref_tsc: %s: %s: %lu in [%lu, %lu]\n", name, ok ? "ok" : "FAIL",
	    (unsigned long)count, (unsigned long)lo, (unsigned long)hi);
	failed += !ok;
}

/*
 * Count with the counter `global` enables (its controls set before) over
 * work(), or over a timer-woken HLT; the TSC bounds around the enabling
 * and disabling writes into *lo and *hi.
 */
static uint64_t
measure(uint64_t global, uint32_t ctr, bool halt, uint64_t *lo, uint64_t *hi)
{
	uint64_t t0, t0b, t1a, t1;

	vg_wrmsr(ctr, 0);
	if (halt) {
		woke = false;
		vg_wrmsr(MSR_X2APIC_TDCR, 0xb);			/* divide by 1 */
		vg_wrmsr(MSR_X2APIC_LVTT, TIMER_VECTOR);	/* one-shot */
		vg_wrmsr(MSR_X2APIC_TMICT, TIMER_TICKS);
	}
	t0 = vg_rdtsc();
	vg_wrmsr(MSR_GLOBAL_CTRL, global);
	t0b = vg_rdtsc();
	if (halt) {
		while (!woke)
			__asm__ volatile("sti\n\thlt\n\tcli" : : : "memory");
	} else
		work();
	t1a = vg_rdtsc();
	vg_wrmsr(MSR_GLOBAL_CTRL, 0);
	t1 = vg_rdtsc();
	*lo = t1a - t0b;
	*hi = t1 - t0;
	return (vg_rdmsr(ctr));
}

int
main(unsigned cpu)
{
	uint64_t n, lo, hi;

	if (cpu != 0)
		return (0);
	if (vg_x2apic_enable() != 0) {
		vg_printf("ref_tsc: no x2APIC (--irqchip kernel only)\n");
		return (1);
	}
	vg_set_irq_handler(tick);

	vg_wrmsr(MSR_FIXED_CTR_CTRL, FIXED2_OS_USR);
	n = measure(GLOBAL_FIXED2, MSR_FIXED_CTR2, false, &lo, &hi);
	check("fixed", n >= lo && n <= hi, n, lo, hi);
	vg_wrmsr(MSR_FIXED_CTR_CTRL, 0);

	vg_wrmsr(MSR_EVTSEL0, EV_REF | SEL_OS | SEL_USR | SEL_EN);
	n = measure(GLOBAL_PMC0, MSR_PMC0, false, &lo, &hi);
	check("gp", n >= lo && n <= hi, n, lo, hi);

	vg_wrmsr(MSR_EVTSEL0, EV_REF | SEL_OS | SEL_EN);
	n = measure(GLOBAL_PMC0, MSR_PMC0, false, &lo, &hi);
	check("os", n >= lo && n <= hi, n, lo, hi);

	vg_wrmsr(MSR_EVTSEL0, EV_REF | SEL_USR | SEL_EN);
	n = measure(GLOBAL_PMC0, MSR_PMC0, false, &lo, &hi);
	check("usr", n == 0, n, 0, 0);

	vg_wrmsr(MSR_EVTSEL0, EV_REF | SEL_OS | SEL_USR | SEL_EN);
	n = measure(GLOBAL_PMC0, MSR_PMC0, true, &lo, &hi);
	check("halted", n < hi / 2, n, 0, hi / 2);
	vg_wrmsr(MSR_EVTSEL0, 0);

	vg_printf("ref_tsc: %u failed\n", failed);
	return ((int)failed);
}
