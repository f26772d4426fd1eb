/*
 * demo.c -- the guest half of `make demo`: a program that uses its PMU the
 * way a kernel's perf driver would, through CPUID and MSRs only, and checks
 * the counts against numbers worked out by hand.
 *
 *   vpmu-run --source exact build/examples/guests/demo.elf
 *
 * It reads CPUID leaf 0xA to learn the PMU it was given, programs
 * IA32_PERFEVTSEL0 = instructions retired, IA32_PERFEVTSEL1 = branches
 * retired and fixed counter 1 = core cycles, runs a checksum loop whose
 * counts are known exactly, and prints them next to the expected ones.
 * Then it shows an overflow: a counter preset to -K with INT set raises a
 * PMI (an NMI) on exactly the K-th instruction and sets its GLOBAL_STATUS
 * bit.  It prints "demo: counts match" and exits 0, or exits 1.
 *
 * The expected counts hold for the exact source (one count per retired
 * instruction, cycles = instructions at vpmu-run's CPI of 1).  vpmu-run's
 * report after the run shows the same counters from the host side.
 */
#include <vpmu-guest/runtime.h>

/* Intel architectural perfmon MSRs (SDM vol. 4, table 2-2). */
#define IA32_PMC(i)		(0x0C1u + (i))
#define IA32_PERFEVTSEL(i)	(0x186u + (i))
#define IA32_FIXED_CTR(i)	(0x309u + (i))
#define IA32_FIXED_CTR_CTRL	0x38Du
#define IA32_PERF_GLOBAL_STATUS	0x38Eu
#define IA32_PERF_GLOBAL_CTRL	0x38Fu
#define IA32_PERF_GLOBAL_OVF_CTRL 0x390u

/* IA32_PERFEVTSELx: event in bits 7:0, umask in 15:8, then these. */
#define EVTSEL_USR		(1ull << 16)
#define EVTSEL_OS		(1ull << 17)
#define EVTSEL_INT		(1ull << 20)	/* PMI on overflow */
#define EVTSEL_EN		(1ull << 22)
#define EV_INSTRUCTIONS		0xC0ull
#define EV_BRANCHES		0xC4ull

/* FIXED_CTR_CTRL has one nibble per fixed counter: bit 0 OS, bit 1 USR. */
#define FIXED_OS_USR(i)		(0x3ull << (4 * (i)))
/* GLOBAL_CTRL: bit i enables PMCi, bit 32 + i fixed counter i. */
#define GLOBAL_PMC(i)		(1ull << (i))
#define GLOBAL_FIXED(i)		(1ull << (32 + (i)))

#define NWORDS			100	/* the workload's array */
#define OVF_ITER		10	/* the overflow lands after this iteration */

/*
 * The workload: sum = rol(sum, 5) ^ word, over n words (n >= 1), written
 * in assembly so that every instruction between the two WRMSRs is known.
 * It is its own measured block: the WRMSR that sets GLOBAL_CTRL = enable
 * starts the counters and is counted (it retires with them on), the WRMSR
 * that clears GLOBAL_CTRL stops them and is not -- the rule the exact
 * source follows, as KVM does when it emulates these writes.
 *
 *   wrmsr              GLOBAL_CTRL = enable          1 (counted)
 *   xor  %r8d, %r8d    sum = 0                       1
 *   mov  %rsi, %rcx    n                             1
 * demo_loop_top:
 *   rol  $5, %r8d                                    5 per word,
 *   xor  (%rdi), %r8d                                with one branch
 *   add  $4, %rdi                                    (the JNZ, taken
 *   dec  %rcx                                        or not)
 *   jnz  demo_loop_top
 *   mov  $0x38f, %ecx  GLOBAL_CTRL                   1
 *   xor  %eax, %eax    = 0                           1
 *   xor  %edx, %edx                                  1
 *   wrmsr              counting stops                (not counted)
 *
 * Instructions 5n + 6, branches n.  Arguments (SysV): rdi words, rsi n,
 * rdx enable; everything the enabling WRMSR needs is set up before it.
 */
uint32_t demo_checksum(const uint32_t *words, uint64_t n, uint64_t enable);
extern const char demo_loop_top[];

__asm__(".text\n"
    ".globl demo_checksum\n"
    "demo_checksum:\n"
    "	mov $0x38f, %ecx\n"
    "	mov %rdx, %rax\n"
    "	shr $32, %rdx\n"
    "	wrmsr\n"
    "	xor %r8d, %r8d\n"
    "	mov %rsi, %rcx\n"
    ".globl demo_loop_top\n"
    "demo_loop_top:\n"
    "	rol $5, %r8d\n"
    "	xor (%rdi), %r8d\n"
    "	add $4, %rdi\n"
    "	dec %rcx\n"
    "	jnz demo_loop_top\n"
    "	mov $0x38f, %ecx\n"
    "	xor %eax, %eax\n"
    "	xor %edx, %edx\n"
    "	wrmsr\n"
    "	mov %r8d, %eax\n"
    "	ret\n");

#define WORKLOAD_INSNS(n)	(5 * (uint64_t)(n) + 6)
#define WORKLOAD_BRANCHES(n)	((uint64_t)(n))

static uint32_t words[NWORDS];
static int mismatches;

/* What the NMI handler saw: where the PMI interrupted, and why. */
static volatile uint64_t nmi_rip, nmi_status;

/* The PMI handler, as a perf driver's: read GLOBAL_STATUS for the cause. */
static void
pmi_handler(unsigned cpu, struct vg_frame *f)
{
	(void)cpu;
	nmi_rip = f->rip;
	nmi_status = vg_rdmsr(IA32_PERF_GLOBAL_STATUS);
}

/* The same checksum in C, to check that the PMI left the workload intact. */
static uint32_t
checksum_c(const uint32_t *w, unsigned n)
{
	uint32_t sum = 0;
	unsigned i;

	for (i = 0; i < n; i++)
		sum = (sum << 5 | sum >> 27) ^ w[i];
	return (sum);
}

static void
expect(const char *what, uint64_t got, uint64_t want, const char *note)
{
	vg_printf("demo:   %-13s %6lu (expected %lu%s)%s\n", what, (unsigned long)got,
	    (unsigned long)want, note, got == want ? "" : "  <-- MISMATCH");
	mismatches += got != want;
}

/* The workload's result, against the C version's. */
static void
expect_sum(uint32_t sum, const char *note)
{
	uint32_t want = checksum_c(words, NWORDS);

	vg_printf("demo:   %-13s 0x%08x (expected 0x%08x%s)%s\n", "checksum", sum, want, note,
	    sum == want ? "" : "  <-- MISMATCH");
	mismatches += sum != want;
}

int
main(unsigned cpu)
{
	uint32_t r[4], x = 0x2545F491u, sum;
	unsigned version, ngp, width, nfixed, fwidth, i, ovf;
	uint64_t mask, K, nmis, status, after, v;

	if (cpu != 0)
		return (0);		/* other vCPUs have nothing to do: spin */

	/* What PMU did vpmu-run give us?  A guest learns it from CPUID only. */
	vg_cpuid(0xA, 0, r);
	version = r[0] & 0xFF;
	ngp = (r[0] >> 8) & 0xFF;
	width = (r[0] >> 16) & 0xFF;
	nfixed = version >= 2 ? r[3] & 0x1F : 0;
	fwidth = version >= 2 ? (r[3] >> 5) & 0xFF : 0;
	vg_printf("demo: CPUID.0xA: Intel architectural perfmon version %u, %u GP counters "
	    "of %u bits, %u fixed counters of %u bits, unavailable-event mask 0x%x\n",
	    version, ngp, width, nfixed, fwidth, r[1]);
	/* Fixed counters and the global MSRs are version 2 and up. */
	if (version < 2 || ngp < 2 || nfixed < 2) {
		vg_printf("demo: this demo needs perfmon v2+ with 2 GP and 2 fixed counters "
		    "(vpmu-run --pmu intel-v2, the default)\n");
		return (1);
	}
	mask = width >= 64 ? ~0ull : (1ull << width) - 1;
	ovf = ngp > 2 ? 2 : 1;		/* the overflow's counter; PMC1 if only two */

	for (i = 0; i < NWORDS; i++) {		/* xorshift32: any data will do */
		x ^= x << 13, x ^= x >> 17, x ^= x << 5;
		words[i] = x;
	}

	/*
	 * Program the counters with everything globally off: GLOBAL_CTRL's
	 * reset value enables every GP counter, so a select with EN set would
	 * start counting at once (and count our own set-up code).
	 */
	vg_wrmsr(IA32_PERF_GLOBAL_CTRL, 0);
	vg_wrmsr(IA32_PMC(0), 0);
	vg_wrmsr(IA32_PMC(1), 0);
	vg_wrmsr(IA32_FIXED_CTR(1), 0);
	vg_wrmsr(IA32_PERFEVTSEL(0), EV_INSTRUCTIONS | EVTSEL_OS | EVTSEL_USR | EVTSEL_EN);
	vg_wrmsr(IA32_PERFEVTSEL(1), EV_BRANCHES | EVTSEL_OS | EVTSEL_USR | EVTSEL_EN);
	vg_wrmsr(IA32_FIXED_CTR_CTRL, FIXED_OS_USR(1));

	/* One WRMSR of GLOBAL_CTRL starts all three; one stops them. */
	sum = demo_checksum(words, NWORDS, GLOBAL_PMC(0) | GLOBAL_PMC(1) | GLOBAL_FIXED(1));
	vg_printf("demo: checksum of %u words, counted by IA32_PMC0, IA32_PMC1 and "
	    "IA32_FIXED_CTR1:\n", NWORDS);
	expect_sum(sum, "");
	expect("instructions", vg_rdmsr(IA32_PMC(0)), WORKLOAD_INSNS(NWORDS), "");
	expect("branches", vg_rdmsr(IA32_PMC(1)), WORKLOAD_BRANCHES(NWORDS), "");
	expect("core cycles", vg_rdmsr(IA32_FIXED_CTR(1)), WORKLOAD_INSNS(NWORDS),
	    " at CPI 1");

	/*
	 * Overflow: preset PMCovf to -K.  It reaches 0 -- overflows -- on the
	 * K-th counted instruction; with INT set that raises a PMI, which
	 * vpmu-run delivers as an NMI, and GLOBAL_STATUS bit ovf is set.
	 * K = 3 + 5 * OVF_ITER is the JNZ that ends iteration OVF_ITER, so
	 * with no skid the NMI interrupts the loop's first instruction.
	 * The legacy write of -K is sign-extended from bit 31: a 32-bit guest
	 * driver can preset a 48-bit counter this way.
	 */
	K = 3 + 5 * OVF_ITER;
	vg_wrmsr(IA32_PERF_GLOBAL_OVF_CTRL, vg_rdmsr(IA32_PERF_GLOBAL_STATUS));
	vg_wrmsr(IA32_PERFEVTSEL(ovf), EV_INSTRUCTIONS | EVTSEL_OS | EVTSEL_USR | EVTSEL_INT |
	    EVTSEL_EN);
	vg_wrmsr(IA32_PMC(ovf), -K & mask);
	vg_set_nmi_handler(pmi_handler);
	nmis = vg_nmi_count();
	sum = demo_checksum(words, NWORDS, GLOBAL_PMC(ovf));
	nmis = vg_nmi_count() - nmis;
	status = vg_rdmsr(IA32_PERF_GLOBAL_STATUS);
	vg_printf("demo: overflow: IA32_PMC%u preset to -%lu (0x%lx) with INT, same workload:\n",
	    ovf, (unsigned long)K, (unsigned long)(-K & mask));
	expect("NMIs", nmis, 1, "");
	expect("status bit", (status >> ovf) & 1, 1, "");
	expect("handler saw", (nmi_status >> ovf) & 1, 1, ", the bit set in the PMI handler");
	vg_printf("demo:   the NMI interrupted rip 0x%lx, demo_loop_top is 0x%lx: %s\n",
	    (unsigned long)nmi_rip, (unsigned long)(uintptr_t)demo_loop_top,
	    nmi_rip == (uintptr_t)demo_loop_top ? "the instruction after the K-th (no skid)" :
	    "MISMATCH");
	mismatches += nmi_rip != (uintptr_t)demo_loop_top;
	expect_sum(sum, ", intact across the NMI");
	/* The counter kept counting after the wrap, the NMI handler included. */
	after = WORKLOAD_INSNS(NWORDS) - K;
	v = vg_rdmsr(IA32_PMC(ovf));
	if (((status >> ovf) & 1) && v >= after)
		vg_printf("demo:   IA32_PMC%u now %lu: the %lu instructions after the wrap + %lu "
		    "of the PMI handler\n", ovf, (unsigned long)v, (unsigned long)after,
		    (unsigned long)(v - after));
	else
		vg_printf("demo:   IA32_PMC%u now 0x%lx: it did not wrap\n", ovf, (unsigned long)v);
	/* The driver acknowledges the overflow: OVF_CTRL clears the bit. */
	vg_wrmsr(IA32_PERF_GLOBAL_OVF_CTRL, status);
	expect("status after", vg_rdmsr(IA32_PERF_GLOBAL_STATUS), 0, ", cleared by OVF_CTRL");

	/*
	 * The counters stay programmed (and stopped), so vpmu-run's table at
	 * exit shows the same values from the host side.
	 */
	vg_printf("demo: %s\n", mismatches == 0 ? "counts match" : "COUNTS DO NOT MATCH");
	return (mismatches == 0 ? 0 : 1);
}
