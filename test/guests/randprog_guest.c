/*
 * randprog_guest.c -- runs a program from randprog.c (randprog SEED >
 * randprog_SEED.S, linked in) with the guest's own PMU counting, and
 * checks the counts against the generator's, exactly.
 *
 * Intel (CPUID leaf 0xA version 2 or later): IA32_FIXED_CTR0 and PMC1
 * count instructions, PMC0 branches.  AMD (PerfMonV2): PERF_CTR0 and
 * PERF_CTR2 instructions, PERF_CTR1 branches.  All count both rings and
 * are started and stopped together by one write of the global control
 * MSR, in measure() below, around one call.
 *
 * What measure() adds to the called function's count is known: the
 * WRMSR that starts the counters retires while they count (vpmu_exact(7):
 * the enabling WRMSR is counted, the disabling one is not), then the
 * CALL, then three instructions before the stopping WRMSR: 5
 * instructions, 1 branch (the CALL).  The function's own count, its RET
 * included, is the generator's: so an empty function (a RET) must give
 * exactly 6 and 2, and randprog_run exactly its expected numbers plus 5
 * and 1.  randprog_run runs twice (a second run goes through code the
 * monitor has seen).  Prints every count, so that exact_modes.sh
 * compares them between --exact-mode step and block; exits with the
 * number of wrong counts.  After each run it prints what the run computed
 * (computed()), for exact_modes.sh to compare between the modes.
 */
#include <vpmu-guest/runtime.h>

#define OVERHEAD_INSNS		5
#define OVERHEAD_BRANCHES	1

#define EN		(1u << 22)
#define OS		(1u << 17)
#define USR		(1u << 16)

/* Intel */
#define PMC(i)		(0x0C1u + (i))
#define EVTSEL(i)	(0x186u + (i))
#define FIXED0		0x309u
#define FIXED_CTRL	0x38Du
#define GCTRL		0x38Fu
/* AMD */
#define AMD_CTL(i)	(0xC0010200u + 2 * (i))
#define AMD_CTR(i)	(0xC0010201u + 2 * (i))
#define AMD_GCTL	0xC0000301u

extern void randprog_run(void);
extern const uint64_t randprog_expect_insns, randprog_expect_branches, randprog_seed;
extern const uint64_t randprog_sum;
extern const uint8_t randprog_buf[4096];

void randprog_empty(void);
void measure(uint32_t msr, uint32_t lo, uint32_t hi, void (*fn)(void));

/*
 * measure(msr, lo, hi, fn): write hi:lo to msr (the counters start),
 * call fn, write 0 to msr (they stop).  Counted: the first WRMSR, the
 * CALL, fn, the MOV and two XORs.
 */
__asm__(
    "	.text\n"
    "	.globl	randprog_empty\n"
    "randprog_empty:\n"
    "	ret\n"
    "	.globl	measure\n"
    "measure:\n"
    "	push	%rbx\n"
    "	push	%r12\n"
    "	mov	%rcx, %rbx\n"
    "	mov	%edi, %r12d\n"
    "	mov	%edi, %ecx\n"
    "	mov	%esi, %eax\n"
    "	wrmsr\n"
    "	call	*%rbx\n"
    "	mov	%r12d, %ecx\n"
    "	xor	%eax, %eax\n"
    "	xor	%edx, %edx\n"
    "	wrmsr\n"
    "	pop	%r12\n"
    "	pop	%rbx\n"
    "	ret\n");

struct counts {
	uint64_t insns, insns2, branches;
};

static int amd;

static int
setup(void)
{
	uint32_t r[4];

	vg_cpuid(0, 0, r);
	if (r[0] >= 0xA) {
		vg_cpuid(0xA, 0, r);
		if ((r[0] & 0xFF) >= 2 && ((r[0] >> 8) & 0xFF) >= 2 && (r[3] & 0x1F) >= 1) {
			vg_wrmsr(GCTRL, 0);
			vg_wrmsr(FIXED_CTRL, 0x3);		/* counter 0: OS, USR */
			vg_wrmsr(EVTSEL(0), EN | OS | USR | 0xC4);	/* branches */
			vg_wrmsr(EVTSEL(1), EN | OS | USR | 0xC0);	/* instructions */
			vg_printf("randprog: Intel PMU, FIXED_CTR0 and PMC1 instructions, PMC0 branches\n");
			return (0);
		}
	}
	vg_cpuid(0x80000000, 0, r);
	if (r[0] >= 0x80000022) {
		vg_cpuid(0x80000022, 0, r);
		if (r[0] & 1) {			/* PerfMonV2 */
			amd = 1;
			vg_wrmsr(AMD_GCTL, 0);
			vg_wrmsr(AMD_CTL(0), EN | OS | USR | 0xC0);
			vg_wrmsr(AMD_CTL(1), EN | OS | USR | 0xC2);
			vg_wrmsr(AMD_CTL(2), EN | OS | USR | 0xC0);
			vg_printf("randprog: AMD PMU, PERF_CTR0 and PERF_CTR2 instructions, PERF_CTR1 branches\n");
			return (0);
		}
	}
	vg_printf("randprog: no Intel v2+ or AMD PerfMonV2 PMU: run with --pmu intel-v2 or amd-v2\n");
	return (-1);
}

static struct counts
count(void (*fn)(void))
{
	struct counts c;

	if (amd) {
		vg_wrmsr(AMD_CTR(0), 0);
		vg_wrmsr(AMD_CTR(1), 0);
		vg_wrmsr(AMD_CTR(2), 0);
		measure(AMD_GCTL, 0x7, 0, fn);
		c.insns = vg_rdmsr(AMD_CTR(0));
		c.insns2 = vg_rdmsr(AMD_CTR(2));
		c.branches = vg_rdmsr(AMD_CTR(1));
	} else {
		vg_wrmsr(FIXED0, 0);
		vg_wrmsr(PMC(0), 0);
		vg_wrmsr(PMC(1), 0);
		measure(GCTRL, 0x3, 0x1, fn);		/* PMC0, PMC1, FIXED_CTR0 */
		c.insns = vg_rdmsr(FIXED0);
		c.insns2 = vg_rdmsr(PMC(1));
		c.branches = vg_rdmsr(PMC(0));
	}
	return (c);
}

/*
 * What a run computed: randprog_sum (its registers and flags at the end)
 * and an FNV-1a hash of randprog_buf, printed for exact_modes.sh to
 * compare between the modes (whatever completes instructions without
 * running them must leave the same registers and memory).
 */
static void
computed(const char *what)
{
	uint64_t h = 0xcbf29ce484222325ull;
	unsigned i;

	for (i = 0; i < sizeof(randprog_buf); i++)
		h = (h ^ randprog_buf[i]) * 0x100000001b3ull;
	vg_printf("%s: registers %016lx memory %016lx\n", what, (unsigned long)randprog_sum,
	    (unsigned long)h);
}

/* Counts fn and compares with its own count plus measure()'s. */
static int
check(const char *what, void (*fn)(void), uint64_t insns, uint64_t branches)
{
	struct counts c = count(fn);
	uint64_t wi = insns + OVERHEAD_INSNS, wb = branches + OVERHEAD_BRANCHES;
	int bad = c.insns != wi || c.insns2 != wi || c.branches != wb;

	vg_printf("%s: instructions %lu %lu branches %lu (want %lu %lu) %s\n", what,
	    (unsigned long)c.insns, (unsigned long)c.insns2, (unsigned long)c.branches,
	    (unsigned long)wi, (unsigned long)wb, bad ? "MISMATCH" : "ok");
	return (bad);
}

int
main(unsigned cpu)
{
	int bad = 0;

	if (cpu != 0)
		return (0);
	if (setup() != 0)
		return (99);
	vg_printf("randprog: seed %lu, one call retires %lu instructions, %lu branches\n",
	    (unsigned long)randprog_seed, (unsigned long)randprog_expect_insns,
	    (unsigned long)randprog_expect_branches);
	bad += check("empty call", randprog_empty, 1, 1);
	bad += check("run 1", randprog_run, randprog_expect_insns, randprog_expect_branches);
	computed("run 1");
	bad += check("run 2", randprog_run, randprog_expect_insns, randprog_expect_branches);
	computed("run 2");
	vg_printf("randprog: %s\n", bad ? "FAIL" : "ok");
	return (bad);
}
