/*
 * marks.c -- vpmu-run's port 0xf6 (marks.c of vpmu-run): the report's
 * "counted" of a counter between two marks is exactly the guest work in
 * between, however the guest set the counter meanwhile.
 *
 * PMC0 counts OS instructions from 0.  Then, in one asm block:
 *
 *	mov $1, %eax; mov $0xf6, %dx; out %eax, (%dx)	mark 1
 *	mov $0xc1, %ecx; mov $PRESET, %eax; xor %edx, %edx; wrmsr
 *	mov $N, %ecx; 1: dec %ecx; jnz 1b
 *	mov $2, %eax; mov $0xf6, %dx; out %eax, (%dx)	mark 2
 *
 * 2N + 8 instructions from the first OUT (not included) to the second
 * (included: an instruction retires when its exit is taken; the mark is
 * taken at the exit).  PMC0 is set to PRESET on the way, so its value at
 * mark 2 is PRESET plus the instructions after the WRMSR, while its
 * "counted" difference is still 2N + 8 (marks.sh).  N: ITERS.
 */
#include <vpmu-guest/runtime.h>

#ifndef ITERS
#define ITERS	1000
#endif
#define MSR_PMC0	0xc1
#define MSR_EVTSEL0	0x186
#define MSR_GLOBAL_CTRL	0x38f
#define EVTSEL_OS_INSNS	0x4200c0ull	/* instructions, OS, EN */
#define PRESET		0x123456

int
main(unsigned cpu)
{
	if (cpu != 0)
		return (0);
	vg_wrmsr(MSR_PMC0, 0);
	vg_wrmsr(MSR_GLOBAL_CTRL, 1);
	vg_wrmsr(MSR_EVTSEL0, EVTSEL_OS_INSNS);
	__asm__ volatile("mov $1, %%eax\n\t"
	    "mov $0xf6, %%dx\n\t"
	    "out %%eax, (%%dx)\n\t"
	    "mov $0xc1, %%ecx\n\t"
	    "mov $%c0, %%eax\n\t"
	    "xor %%edx, %%edx\n\t"
	    "wrmsr\n\t"
	    "mov $%c1, %%ecx\n"
	    "1:\n\t"
	    "dec %%ecx\n\t"
	    "jnz 1b\n\t"
	    "mov $2, %%eax\n\t"
	    "mov $0xf6, %%dx\n\t"
	    "out %%eax, (%%dx)"
	    : : "i"(PRESET), "i"(ITERS) : "rax", "rcx", "rdx", "memory", "cc");
	vg_wrmsr(MSR_EVTSEL0, 0);
	vg_printf("marks: PMC0 %lu\n", (unsigned long)vg_rdmsr(MSR_PMC0));
	return (0);
}
