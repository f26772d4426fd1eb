/*
 * kut_loop.c -- kvm-unit-tests' measured loop (x86/pmu.c: a load, the
 * pointer moved on by 64, seven NOPs, LOOP; N = 10^6 rounds over a 64 MiB
 * buffer), counted as its precise variant counts it: the counters enabled
 * and disabled by WRMSRs of IA32_PERF_GLOBAL_CTRL inside one asm block.
 * PMC0 counts instructions, PMC1 branches, IA32_FIXED_CTR2 reference
 * cycles.  The loop runs N/2 and N rounds; the counts must be exactly 10
 * instructions and 1 branch a round, and 15 instructions around the loop
 * from the enabling WRMSR to the disabling one (that one not counted), the registers it leaves what it
 * computes (the pointer, the last word loaded: word 8i holds i), and the
 * reference cycles within the bounds the guest's own RDTSCs give around
 * the two WRMSRs (vpmu_exact(7): they follow the TSC).  The buffer is
 * written first, so its pages are accessed before the loop reads them.
 * Prints the counts (the reference cycles against the suite's bound,
 * 30 a round) and "kut_loop: N failed"; exits with N.
 */
#include <vpmu-guest/runtime.h>

#define N			1000000u
#define MSR_PMC0		0xc1
#define MSR_EVTSEL0		0x186
#define MSR_FIXED_CTR2		0x30b
#define MSR_FIXED_CTR_CTRL	0x38d
#define MSR_GLOBAL_CTRL		0x38f
#define SEL_EN			(1ull << 22 | 1ull << 17 | 1ull << 16)	/* EN, OS, USR */
#define INSTRUCTIONS		0x00C0ull
#define BRANCHES		0x00C4ull
#define FIXED2_OS_USR		(3ull << 8)
#define GLOBAL			(3ull | 1ull << 34)	/* PMC0, PMC1, FIXED_CTR2 */

static uint64_t buf[8 * (uint64_t)N];
static unsigned failed;

struct counts {
	uint64_t insns, branches, ref, lo, hi;
};

static struct counts
measure(uint32_t rounds)
{
	uint64_t *p = buf, val = 0, c = rounds, t0, t0b, t1a, t1;
	struct counts k;

	vg_wrmsr(MSR_GLOBAL_CTRL, 0);		/* its reset value enables the GP counters */
	vg_wrmsr(MSR_PMC0, 0);
	vg_wrmsr(MSR_PMC0 + 1, 0);
	vg_wrmsr(MSR_FIXED_CTR2, 0);
	vg_wrmsr(MSR_EVTSEL0, SEL_EN | INSTRUCTIONS);
	vg_wrmsr(MSR_EVTSEL0 + 1, SEL_EN | BRANCHES);
	vg_wrmsr(MSR_FIXED_CTR_CTRL, FIXED2_OS_USR);
	__asm__ volatile(
	    "rdtsc\n\tshl $32, %%rdx\n\tor %%rdx, %%rax\n\tmov %%rax, %4\n\t"
	    "mov $0x38f, %%ecx\n\tmov %8, %%eax\n\tmov %9, %%edx\n\twrmsr\n\t"
	    "rdtsc\n\tshl $32, %%rdx\n\tor %%rdx, %%rax\n\tmov %%rax, %5\n\t"
	    "mov %3, %%rcx\n\t"
	    "mfence\n\t"
	    "1: mov (%1), %2\n\tadd $64, %1\n\t"
	    "nop\n\tnop\n\tnop\n\tnop\n\tnop\n\tnop\n\tnop\n\t"
	    "loop 1b\n\t"
	    "mov %%rcx, %3\n\t"
	    "rdtsc\n\tshl $32, %%rdx\n\tor %%rdx, %%rax\n\tmov %%rax, %6\n\t"
	    "mov $0x38f, %%ecx\n\txor %%eax, %%eax\n\txor %%edx, %%edx\n\twrmsr\n\t"
	    "rdtsc\n\tshl $32, %%rdx\n\tor %%rdx, %%rax\n\tmov %%rax, %7"
	    : "+m"(buf[0]), "+r"(p), "+r"(val), "+r"(c), "=m"(t0), "=m"(t0b), "=m"(t1a), "=m"(t1)
	    : "r"((uint32_t)GLOBAL), "r"((uint32_t)(GLOBAL >> 32))
	    : "rax", "rcx", "rdx", "cc", "memory");
	k.insns = vg_rdmsr(MSR_PMC0);
	k.branches = vg_rdmsr(MSR_PMC0 + 1);
	k.ref = vg_rdmsr(MSR_FIXED_CTR2);
	k.lo = t1a - t0b;
	k.hi = t1 - t0;
	if (p != buf + 8 * (uint64_t)rounds || val != rounds - 1 || c != 0) {
		vg_printf("kut_loop: %u rounds: pointer +%lu words, last %lu, rcx %lu: FAIL\n",
		    rounds, (unsigned long)(p - buf), (unsigned long)val, (unsigned long)c);
		failed++;
	}
	if (k.ref < k.lo || k.ref > k.hi) {
		vg_printf("kut_loop: %u rounds: reference cycles %lu not in [%lu, %lu]: FAIL\n",
		    rounds, (unsigned long)k.ref, (unsigned long)k.lo, (unsigned long)k.hi);
		failed++;
	}
	vg_printf("kut_loop: %u rounds: instructions %lu branches %lu reference cycles %lu "
	    "(%lu.%02lu of the suite's bound, 30 a round)\n", rounds, (unsigned long)k.insns,
	    (unsigned long)k.branches, (unsigned long)k.ref,
	    (unsigned long)(k.ref / (30ull * rounds)),
	    (unsigned long)(k.ref * 100 / (30ull * rounds) % 100));
	return (k);
}

int
main(unsigned cpu)
{
	struct counts half, all;
	uint64_t i;

	if (cpu != 0)
		return (0);
	for (i = 0; i < N; i++)
		buf[8 * i] = i;
	half = measure(N / 2);
	all = measure(N);
	if (all.insns - half.insns != 10ull * (N / 2) || all.branches - half.branches != N / 2 ||
	    all.insns != 10ull * N + 15 || all.branches != N) {
		vg_printf("kut_loop: differences %lu instructions %lu branches, want %lu %lu: FAIL\n",
		    (unsigned long)(all.insns - half.insns),
		    (unsigned long)(all.branches - half.branches), 10ul * (N / 2),
		    (unsigned long)(N / 2));
		failed++;
	}
	vg_printf("kut_loop: %u failed\n", failed);
	return ((int)failed);
}
