/*
 * shared_bp.c -- blocks that access memory while the VMM holds a debug
 * register of its own on the guest's #PF handler entry.  vpmu-run
 * --user-syscall complete arms its SYSCALL catch there (an instruction
 * breakpoint through vpmu_kvm_set_guest_debug) at the guest's first
 * IA32_LSTAR write; a block that may fault needs breakpoints on its end
 * and on the #PF, #GP and #SS handlers: four addresses, one of them the
 * VMM's.  The KVM glue shares that register (one breakpoint, the exit
 * given to both), so the blocks run; without sharing only three registers
 * are free and every such block is single-stepped (the report's
 * debug-registers reason, shared_bp.sh).
 *
 * The loop: ITERS rounds of loads and stores through a pointer and a
 * conditional branch on a loaded value, counted by PMC0 (instructions,
 * both rings); prints "shared_bp: N instructions", N the same in both
 * modes.
 */
#include <vpmu-guest/runtime.h>

#ifndef ITERS
#define ITERS	400
#endif

#define MSR_LSTAR	0xC0000082u
#define EVTSEL0		0x186u
#define PMC0		0xC1u
#define EVTSEL_EN	(1u << 22 | 1u << 17 | 1u << 16)	/* EN, OS, USR */
#define INSTRUCTIONS	0x00C0u

int
main(unsigned cpu)
{
	static volatile uint64_t buf[8] = { 1, 2, 3, 4 };
	uint64_t i, a, d, n;

	if (cpu != 0)
		return (0);
	vg_wrmsr(MSR_LSTAR, 0xFFFFFFFF81000000ull);	/* the catch is armed now */
	vg_wrmsr(PMC0, 0);
	vg_wrmsr(EVTSEL0, EVTSEL_EN | INSTRUCTIONS);
	for (i = 0; i < ITERS; i++) {
		__asm__ volatile(
		    "mov (%[p]), %[a]\n\t"
		    "add %[a], 8(%[p])\n\t"
		    "mov 16(%[p]), %[d]\n\t"
		    "xor %[d], %[a]\n\t"
		    "mov %[a], 24(%[p])\n\t"
		    "test $1, %[a]\n\t"
		    "jz 1f\n\t"
		    "addq $1, 32(%[p])\n"
		    "1:\n\t"
		    "mov 8(%[p]), %[d]\n\t"
		    "mov %[d], 40(%[p])"
		    : [a] "=&r"(a), [d] "=&r"(d)
		    : [p] "r"(buf)
		    : "memory", "cc");
	}
	vg_wrmsr(EVTSEL0, 0);
	n = vg_rdmsr(PMC0);
	vg_printf("shared_bp: %lu instructions\n", (unsigned long)n);
	return (0);
}
