/*
 * exit_insns.c -- instructions that exit to user space while a counter
 * counts retire exactly once each (issue 11): OUT to vpmu-run's console,
 * CPUID, RDMSR and WRMSR of a trapped PMU MSR (IA32_PMC1), between the
 * WRMSR that starts PMC0 counting instructions and the one that stops it.
 *
 * Counted, by construction of the block below:
 *   wrmsr                  start PMC0 (counted)             1
 *   mov '\n', al; mov 0x3f8, dx; out al, dx                 3
 *   mov 0, eax; xor ecx, ecx; cpuid                         3
 *   mov 0xc2, ecx; rdmsr                                    2
 *   mov 0xc2, ecx; xor eax, eax; xor edx, edx; wrmsr        4
 *   mov 0x186, ecx; xor eax, eax; xor edx, edx              3
 *   wrmsr                  stop PMC0 (not counted)
 * = 16.  Prints "exit_insns: PMC0 16" and exits 0, or the count and 1.
 */
#include <vpmu-guest/runtime.h>

#define MSR_PMC0		0xc1
#define MSR_EVTSEL0		0x186
#define MSR_GLOBAL_CTRL		0x38f
#define EVTSEL_COUNTING		0x4300c0ull	/* instructions, USR, OS, EN */
#define EXPECT			16

int
main(unsigned cpu)
{
	uint64_t n;

	if (cpu != 0)
		return (0);
	vg_wrmsr(MSR_PMC0, 0);
	vg_wrmsr(MSR_GLOBAL_CTRL, 1);
	__asm__ volatile("wrmsr\n\t"
	    "mov $0x0a, %%al\n\t"
	    "mov $0x3f8, %%dx\n\t"
	    "out %%al, (%%dx)\n\t"
	    "mov $0, %%eax\n\t"
	    "xor %%ecx, %%ecx\n\t"
	    "cpuid\n\t"
	    "mov $0xc2, %%ecx\n\t"
	    "rdmsr\n\t"
	    "mov $0xc2, %%ecx\n\t"
	    "xor %%eax, %%eax\n\t"
	    "xor %%edx, %%edx\n\t"
	    "wrmsr\n\t"
	    "mov $0x186, %%ecx\n\t"
	    "xor %%eax, %%eax\n\t"
	    "xor %%edx, %%edx\n\t"
	    "wrmsr"
	    : : "c"(MSR_EVTSEL0), "a"((uint32_t)EVTSEL_COUNTING),
	    "d"((uint32_t)(EVTSEL_COUNTING >> 32)) : "rbx", "memory");
	n = vg_rdmsr(MSR_PMC0);
	vg_printf("exit_insns: PMC0 %lu\n", (unsigned long)n);
	return (n == EXPECT ? 0 : 1);
}
