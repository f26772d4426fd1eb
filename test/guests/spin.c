/*
 * spin.c -- a guest that never exits, for vpmu-run's --timeout and its
 * SIGINT and SIGTERM (stop.sh): the run must be ended from the host, the
 * report printed all the same.
 *
 * vCPU 0 starts PMC0 counting instructions (so the report has a counter
 * to show), prints "spin: vCPU 0 spinning" and then spins with PAUSE for
 * ever; with HALT=1 it halts with interrupts on instead (STI; HLT in a
 * loop: with the in-kernel irqchip the vCPU waits inside KVM_RUN, where
 * nothing wakes it).  The other vCPUs return: the runtime's idle loop.
 */
#include <vpmu-guest/runtime.h>

#define MSR_PMC0		0xc1
#define MSR_EVTSEL0		0x186
#define MSR_GLOBAL_CTRL		0x38f
#define EVTSEL_COUNTING		0x4300c0ull	/* instructions, USR, OS, EN */

#ifndef HALT
#define HALT	0
#endif

int
main(unsigned cpu)
{
	if (cpu != 0)
		return (0);
	vg_wrmsr(MSR_PMC0, 0);
	vg_wrmsr(MSR_GLOBAL_CTRL, 1);
	vg_wrmsr(MSR_EVTSEL0, EVTSEL_COUNTING);
	vg_printf("spin: vCPU 0 spinning\n");
	for (;;) {
		if (HALT)
			__asm__ volatile("sti; hlt; cli" : : : "memory");
		else
			vg_pause();
	}
}
