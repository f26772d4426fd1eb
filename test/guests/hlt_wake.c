/*
 * hlt_wake.c -- `sti; hlt` while a counter counts waits for the interrupt
 * and wakes on it, as without counting (issue 11); --irqchip kernel only
 * (the local APIC's timer is the interrupt).
 *
 * The x2APIC timer is armed one-shot for about 20 ms (vector 0x40), PMC0
 * is started counting instructions (COUNT=1; COUNT=0: programmed, not
 * enabled), then STI and HLT.  The timer's interrupt must find the vCPU
 * halted: its frame's RIP is the instruction right after the HLT, as it
 * is without counting.  (A HLT the stepping source skips lets the guest
 * run on: the interrupt then comes somewhere else, or never once
 * interrupts are off again.)  The counted instructions before the wake
 * are exact: the enabling WRMSR, STI and HLT, 3; the interrupt handler's
 * own instructions are not part of the check (PMC0 is read after
 * disabling it, so it holds at least 3).  The interrupt's frame holds no
 * RFLAGS.TF: the guest never sets it (a KVM glue that left TF in RFLAGS
 * for its single-steps once put it there).
 * Prints "hlt_wake: ok" and exits 0, or says what differed and exits 1.
 * TICKS: the timer's count (default 20 ms; idle_cpu.sh uses 2 s).
 */
#include <vpmu-guest/runtime.h>

#define MSR_PMC0		0xc1
#define MSR_EVTSEL0		0x186
#define MSR_GLOBAL_CTRL		0x38f
#define EVTSEL_INSNS		0x0300c0ull	/* instructions retired, USR, OS */
#define EVTSEL_EN		(1ull << 22)
#define MSR_X2APIC_LVTT		0x832
#define MSR_X2APIC_TMICT	0x838
#define MSR_X2APIC_TDCR		0x83e
#define TIMER_VECTOR		0x40
#ifndef TICKS
#define TICKS			20000000	/* KVM's APIC timer: 1 ns a tick */
#endif

extern const char hlt_wake_after[];
static volatile uint64_t woke_rip, woke_rflags;
#define RFLAGS_TF		0x100u

static void
tick(unsigned cpu, struct vg_frame *f)
{
	(void)cpu;
	if (woke_rip == 0) {
		woke_rip = f->rip;
		woke_rflags = f->rflags;
	}
	vg_x2apic_eoi();
}

int
main(unsigned cpu)
{
	uint64_t sel = EVTSEL_INSNS | (COUNT ? EVTSEL_EN : 0), n;

	if (cpu != 0)
		return (0);
	if (vg_x2apic_enable() != 0) {
		vg_printf("hlt_wake: no x2APIC (--irqchip kernel only)\n");
		return (1);
	}
	vg_set_irq_handler(tick);
	vg_wrmsr(MSR_PMC0, 0);
	vg_wrmsr(MSR_GLOBAL_CTRL, 1);
	vg_wrmsr(MSR_X2APIC_TDCR, 0xb);			/* divide by 1 */
	vg_wrmsr(MSR_X2APIC_LVTT, TIMER_VECTOR);	/* one-shot, unmasked */
	vg_wrmsr(MSR_X2APIC_TMICT, TICKS);
	__asm__ volatile("wrmsr\n\t"
	    "sti\n\t"
	    "hlt\n"
	    ".globl hlt_wake_after\n"
	    "hlt_wake_after:\n\t"
	    "cli"
	    : : "c"(MSR_EVTSEL0), "a"((uint32_t)sel), "d"((uint32_t)(sel >> 32)) : "memory");
	vg_wrmsr(MSR_EVTSEL0, 0);
	n = vg_rdmsr(MSR_PMC0);
	if (woke_rip != (uint64_t)hlt_wake_after) {
		vg_printf("hlt_wake: the interrupt came at RIP 0x%lx, not 0x%lx (after the HLT)\n",
		    (unsigned long)woke_rip, (unsigned long)hlt_wake_after);
		return (1);
	}
	if (woke_rflags & RFLAGS_TF) {
		vg_printf("hlt_wake: the interrupt's frame holds RFLAGS.TF (0x%lx)\n",
		    (unsigned long)woke_rflags);
		return (1);
	}
	if (COUNT ? n < 3 : n != 0) {
		vg_printf("hlt_wake: PMC0 %lu, want %s\n", (unsigned long)n,
		    COUNT ? "at least 3" : "0");
		return (1);
	}
	vg_printf("hlt_wake: ok, woken at the HLT, PMC0 %lu\n", (unsigned long)n);
	return (0);
}
