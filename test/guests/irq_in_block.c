/*
 * irq_in_block.c -- what becomes of a local APIC timer interrupt that
 * comes due while the exact source runs straight-line code (issue 11,
 * "asynchronous events inside a block"): the timer (x2APIC, one-shot,
 * vector 0x40) is armed, then a loop of ITERS iterations (five ALU
 * instructions and DEC, a block, then JNZ) runs counted with interrupts
 * on.  Prints the instructions counted, the loop's own (7 per iteration), the interrupts taken, and what is left over:
 * the handler's instructions and the code around the loop.  Informal: the
 * timer is wall-clock time, so where the interrupt lands varies; what
 * must hold in both modes is that the handler's instructions are counted
 * (left over with an interrupt > left over without).
 */
#include <vpmu-guest/runtime.h>

#ifndef ITERS
#define ITERS	20000
#endif

#define EVTSEL0		0x186u
#define PMC0		0xC1u
#define EVTSEL_EN	(1u << 22 | 1u << 17 | 1u << 16)	/* EN, OS, USR */
#define INSTRUCTIONS	0x00C0u
#define X2APIC_LVTT	0x832u
#define X2APIC_TMICT	0x838u
#define X2APIC_TDCR	0x83Eu
#define TIMER_VECTOR	0x40u

static void
tick(unsigned cpu, struct vg_frame *f)
{
	(void)cpu;
	(void)f;
	vg_x2apic_eoi();
}

static uint64_t
counted(uint32_t n, uint32_t timer)
{
	uint32_t a = 0, b = 1;

	vg_wrmsr(PMC0, 0);
	vg_wrmsr(EVTSEL0, EVTSEL_EN | INSTRUCTIONS);
	if (timer != 0)
		vg_wrmsr(X2APIC_TMICT, timer);
	__asm__ volatile("1:\n\tadd %1, %2\n\txor %2, %1\n\tadd $3, %1\n\t"
	    "sub %2, %1\n\tinc %2\n\tdec %0\n\tjnz 1b"
	    : "+r"(n), "+r"(a), "+r"(b) : : "cc");
	vg_wrmsr(EVTSEL0, 0);
	return (vg_rdmsr(PMC0));
}

int
main(unsigned cpu)
{
	uint64_t quiet, busy, irqs;

	if (cpu != 0)
		return (0);
	if (vg_x2apic_enable() != 0) {
		vg_printf("irq in block: no x2APIC (--irqchip user?)\n");
		return (77);
	}
	vg_set_irq_handler(tick);
	vg_wrmsr(X2APIC_TDCR, 0xB);			/* divide by 1 */
	vg_wrmsr(X2APIC_LVTT, TIMER_VECTOR);		/* one-shot, unmasked */
	vg_sti();
	quiet = counted(ITERS, 0);
	irqs = vg_irq_count();
	busy = counted(ITERS, 1000);
	irqs = vg_irq_count() - irqs;
	vg_printf("irq in block: n=%u without timer %lu (loop %u, rest %lu); "
	    "with timer %lu, %lu interrupt(s), rest %lu\n", ITERS,
	    (unsigned long)quiet, 7 * ITERS, (unsigned long)(quiet - 7 * ITERS),
	    (unsigned long)busy, (unsigned long)irqs,
	    (unsigned long)(busy - 7 * ITERS));
	return (0);
}
