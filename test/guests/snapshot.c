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
 * With two vCPUs or more, vCPU 1 runs the same block at the same time with a
 * NOP for the OUT (it is counting when the snapshot is taken) and must read
 * the same exact counts; vCPU 0 waits for it and prints them too.  Other
 * vCPUs have nothing to do.
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

struct counts {
	uint64_t mid, fin, br, st;
};

/* The block above; ask: the OUT (vCPU 0), or a NOP in its place (others). */
#define BLOCK(OUT)							\
	__asm__ volatile(						\
	    "wrmsr\n\t"							\
	    "mov %[isel], %%eax\n\t"					\
	    "mov $0x186, %%ecx\n\t"					\
	    "wrmsr\n\t"							\
	    "1: dec %[n1]\n\t"						\
	    "jnz 1b\n\t"						\
	    OUT								\
	    "mov $0xc1, %%ecx\n\t"					\
	    "rdmsr\n\t"							\
	    "mov %%rax, %[lo]\n\t"					\
	    "mov %%rdx, %[hi]\n\t"					\
	    "2: dec %[n2]\n\t"						\
	    "jnz 2b\n\t"						\
	    "xor %%eax, %%eax\n\t"					\
	    "xor %%edx, %%edx\n\t"					\
	    "mov $0x186, %%ecx\n\t"					\
	    "wrmsr\n\t"							\
	    "mov $0x187, %%ecx\n\t"					\
	    "wrmsr\n\t"							\
	    : [n1] "+r"(n1), [n2] "+r"(n2), [lo] "=&r"(lo), [hi] "=&r"(hi),	\
	      "+c"(ecx), "+a"(eax), "+d"(edx)				\
	    : [isel] "i"(INSTRUCTIONS)					\
	    : "memory", "cc")

static void
measure(bool ask, struct counts *k)
{
	uint64_t n1 = N1, n2 = N2, lo, hi;
	uint32_t ecx = EVTSEL(1), eax = (uint32_t)BRANCHES, edx = 0;

	vg_wrmsr(PMC(0), 0);
	vg_wrmsr(PMC(1), (1ul << 48) - N1 - N2 / 2);
	if (ask)
		BLOCK(ASK);
	else
		BLOCK("nop\n\t");
	k->mid = (hi << 32) | (lo & 0xffffffffu);
	k->fin = vg_rdmsr(PMC(0));
	k->br = vg_rdmsr(PMC(1));
	k->st = vg_rdmsr(GSTATUS);
}

static bool
exact(const struct counts *k)
{
	return (k->mid == 2 * N1 + 3 && k->fin == 2 * N1 + 2 * N2 + 9 &&
	    k->br == N2 / 2 && k->st == 0x2);
}

static struct counts other;
static volatile int other_started, other_done;

int
main(unsigned cpu)
{
	struct counts k;
	bool ok;

	if (cpu == 1) {
		/* Under way (counting) when vCPU 0 asks for the snapshot. */
		other_started = 1;
		measure(false, &other);
		other_done = 1;
		return (0);
	}
	if (cpu != 0)
		return (0);
	while (vg_ncpus() > 1 && !other_started)
		vg_pause();
	measure(true, &k);
	vg_printf("snapshot guest: mid %lu final %lu branches %lu status %#lx\n",
	    k.mid, k.fin, k.br, k.st);
	vg_printf("snapshot guest: expected mid %lu final %lu branches %lu status 0x2\n",
	    2 * N1 + 3, 2 * N1 + 2 * N2 + 9, N2 / 2);
	ok = exact(&k);
	if (vg_ncpus() > 1) {
		while (!other_done)
			vg_pause();
		vg_printf("snapshot guest: vCPU 1 mid %lu final %lu branches %lu status %#lx\n",
		    other.mid, other.fin, other.br, other.st);
		ok = ok && exact(&other);
	}
	return (ok ? 0 : 1);
}
