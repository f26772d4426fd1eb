/*
 * idle_steps.c -- the runtime's idle loop costs the exact source nothing:
 * a vCPU whose main() returned spins with PAUSE (boot protocol v1), and a
 * vCPU none of whose counters is enabled is not followed, so not a single
 * step of that loop is taken or counted (idle_steps.sh reads the report).
 *
 * vCPU 0 waits until every other vCPU has left main(), then counts
 * instructions in PMC0 over ITERS rounds of DEC/JNZ, stops it and waits
 * IDLE_TSC more TSC ticks (about 0.1 s, in either mode of the source:
 * a block fast-forwards the loop), so that the others idle all that time,
 * and exits.  With SECONDARY=1 every other vCPU first
 * counts a stretch of its own in PMC0: WRMSR (enable), 8 plain
 * instructions, WRMSR (disable, not counted): 9, and says so; its idle
 * loop afterwards must add nothing to that.
 * Prints "idle_steps: vCPU N PMC0 9" (SECONDARY=1) and "idle_steps: vCPU 0
 * PMC0 V"; exits 0, or 1 when a figure is not what it must be.
 */
#include <vpmu-guest/runtime.h>

#define MSR_PMC0		0xc1
#define MSR_EVTSEL0		0x186
#define MSR_GLOBAL_CTRL		0x38f
#define EVTSEL_COUNTING		0x4300c0ull	/* instructions, USR, OS, EN */

#ifndef ITERS
#define ITERS		5000
#endif
#ifndef SECONDARY
#define SECONDARY	0
#endif
#define SECONDARY_EXPECT	9
#define IDLE_TSC		200000000ull

static uint32_t left_main;		/* vCPUs other than 0 past their work */
static uint32_t bad;			/* one of them counted wrong */

/* 9 counted: the enabling WRMSR and 8 instructions; the WRMSR that stops it is not. */
static int
secondary(unsigned cpu)
{
	uint64_t n;

	vg_wrmsr(MSR_PMC0, 0);
	vg_wrmsr(MSR_GLOBAL_CTRL, 1);
	__asm__ volatile("wrmsr\n\t"
	    "mov $1, %%r8d\n\t"
	    "add %%r8d, %%r8d\n\t"
	    "mov $2, %%r9d\n\t"
	    "sub %%r9d, %%r8d\n\t"
	    "xor %%r8d, %%r8d\n\t"
	    "mov $0x186, %%ecx\n\t"
	    "xor %%eax, %%eax\n\t"
	    "xor %%edx, %%edx\n\t"
	    "wrmsr"
	    : : "c"(MSR_EVTSEL0), "a"((uint32_t)EVTSEL_COUNTING),
	    "d"((uint32_t)(EVTSEL_COUNTING >> 32)) : "r8", "r9", "memory", "cc");
	n = vg_rdmsr(MSR_PMC0);
	vg_printf("idle_steps: vCPU %u PMC0 %lu\n", cpu, (unsigned long)n);
	return (n == SECONDARY_EXPECT ? 0 : 1);
}

int
main(unsigned cpu)
{
	uint64_t n, t;

	if (cpu != 0) {
		if (SECONDARY && secondary(cpu) != 0)
			__atomic_store_n(&bad, 1, __ATOMIC_RELAXED);
		__atomic_add_fetch(&left_main, 1, __ATOMIC_RELEASE);
		return (0);			/* the runtime's idle loop */
	}
	while (__atomic_load_n(&left_main, __ATOMIC_ACQUIRE) != vg_ncpus() - 1)
		vg_pause();
	vg_wrmsr(MSR_PMC0, 0);
	vg_wrmsr(MSR_GLOBAL_CTRL, 1);
	vg_wrmsr(MSR_EVTSEL0, EVTSEL_COUNTING);
	__asm__ volatile("mov %0, %%ecx\n"
	    "1:\n\t"
	    "dec %%ecx\n\t"
	    "jnz 1b"
	    : : "i"(ITERS) : "rcx", "memory", "cc");
	vg_wrmsr(MSR_EVTSEL0, 0);
	n = vg_rdmsr(MSR_PMC0);
	t = vg_rdtsc();
	while (vg_rdtsc() - t < IDLE_TSC)
		vg_pause();
	vg_printf("idle_steps: vCPU 0 PMC0 %lu\n", (unsigned long)n);
	return (__atomic_load_n(&bad, __ATOMIC_ACQUIRE) != 0);
}
