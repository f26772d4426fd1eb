/*
 * snapshot.c -- a guest that asks vpmu-run for a snapshot in the middle of
 * counting (vpmu-run --snapshot / --resume), on the exact source.
 *
 * vCPU 0 runs one block of assembly whose instructions are all known:
 *
 *   wrmsr                   IA32_PERFEVTSEL1: branches on (PMC1 near overflow)
 *   mov, mov, wrmsr         IA32_PERFEVTSEL0: instructions on     (PMC0: 1)
 *   loop A: dec, jnz        N1 times                              (2 N1)
 *   out %eax, $0xf5         the snapshot                          (1)
 *   mov, rdmsr              PMC0, mid-way: 2 N1 + 3               (2)
 *   mov, mov                keep it                               (2)
 *   loop B: dec, jnz        N2 times                              (2 N2)
 *   xor, xor, mov           (3), then wrmsr: PMC0 off, PMC1 off
 *
 * So PMC0 reads 2 N1 + 3 mid-way and 2 N1 + 2 N2 + 9 at the end; PMC1
 * counted N1 + N2 branches from 2^48 - N1 - N2 / 2, wrapping in loop B:
 * it reads N2 / 2, with its IA32_PERF_GLOBAL_STATUS bit (1) set.  An
 * uninterrupted run must print the same: built with -DNO_SNAPSHOT the OUT
 * is a NOP (one instruction too) and vpmu-run runs without --snapshot.
 * Other vCPUs spin until vCPU 0 is done.
 */
#include <vpmu-guest/runtime.h>

#define N1		20000ul
#define N2		30000ul
#define EVTSEL(i)	(0x186u + (i))
#define PMC(i)		(0x0C1u + (i))
#define GSTATUS		0x38Eu
#define SEL		((1ul << 16) | (1ul << 17) | (1ul << 22))	/* USR OS EN */
#define INSTRUCTIONS	(0xC0ul | SEL)
#define BRANCHES	(0xC4ul | SEL)

#ifdef NO_SNAPSHOT
#define ASK		"nop\n\t"
#else
#define ASK		"outl %%eax, $0xf5\n\t"
#endif

int
main(unsigned cpu)
{
	uint64_t n1 = N1, n2 = N2, lo, hi, mid, fin, br, st;
	uint32_t ecx = EVTSEL(1), eax = (uint32_t)BRANCHES, edx = 0;

	if (cpu != 0)
		return (0);
	vg_wrmsr(PMC(0), 0);
	vg_wrmsr(PMC(1), (1ul << 48) - N1 - N2 / 2);
	__asm__ volatile(
	    "wrmsr\n\t"
	    "mov %[isel], %%eax\n\t"
	    "mov $0x186, %%ecx\n\t"
	    "wrmsr\n\t"
	    "1: dec %[n1]\n\t"
	    "jnz 1b\n\t"
	    ASK
	    "mov $0xc1, %%ecx\n\t"
	    "rdmsr\n\t"
	    "mov %%rax, %[lo]\n\t"
	    "mov %%rdx, %[hi]\n\t"
	    "2: dec %[n2]\n\t"
	    "jnz 2b\n\t"
	    "xor %%eax, %%eax\n\t"
	    "xor %%edx, %%edx\n\t"
	    "mov $0x186, %%ecx\n\t"
	    "wrmsr\n\t"
	    "mov $0x187, %%ecx\n\t"
	    "wrmsr\n\t"
	    : [n1] "+r"(n1), [n2] "+r"(n2), [lo] "=&r"(lo), [hi] "=&r"(hi),
	      "+c"(ecx), "+a"(eax), "+d"(edx)
	    : [isel] "i"(INSTRUCTIONS)
	    : "memory", "cc");
	mid = (hi << 32) | (lo & 0xffffffffu);
	fin = vg_rdmsr(PMC(0));
	br = vg_rdmsr(PMC(1));
	st = vg_rdmsr(GSTATUS);
	vg_printf("snapshot guest: mid %lu final %lu branches %lu status %#lx\n",
	    mid, fin, br, st);
	vg_printf("snapshot guest: expected mid %lu final %lu branches %lu status 0x2\n",
	    2 * N1 + 3, 2 * N1 + 2 * N2 + 9, N2 / 2);
	return (mid == 2 * N1 + 3 && fin == 2 * N1 + 2 * N2 + 9 && br == N2 / 2 &&
	    st == 0x2 ? 0 : 1);
}
