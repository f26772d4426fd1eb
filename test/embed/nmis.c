/*
 * nmis.c -- a guest for examples/embed: exact counts on every vCPU while
 * the VMM injects NMIs of its own (embed -N), and the VMM's vCPU threads
 * set up at the same time (embed -n).
 *
 * Every vCPU programs counter 0 for retired branches and counter 1 for
 * retired instructions (OS only; Intel architectural events or AMD's),
 * then runs a measured block as conf.h's (measure_cld below) ROUNDS
 * times, started and stopped by the global control MSR: n branches and 3n + 5 instructions
 * each time.  An NMI that lands while the counters run adds the branches
 * and instructions of its path through the handler, the same every time
 * (the handler reads the global control to know whether it counted).  So
 * per vCPU, for every round with k counted NMIs:
 *
 *   branches     == n + k * Hb        instructions == 3n + 5 + k * Hi
 *
 * with one Hb and one Hi for all rounds of all vCPUs, and k = 0 rounds
 * exact.  Under an Intel model each vCPU first checks IA32_MISC_ENABLE's
 * PMU bits, which libvpmu answers.  vCPU 0 waits for the others, prints
 * one line per vCPU and
 * "N passed, M failed"; the exit status is the failures.
 */
#include "../conformance/conf.h"

#define ROUNDS	12

/*
 * conf_measure() with "nop; cld" as the body: CLD ends every block of the
 * exact source, so each round has exits for the VMM's NMIs to follow.
 * rdi on_msr, rsi on_val, rdx off_msr, rcx off_val, r8 n.
 */
void measure_cld(uint32_t on_msr, uint64_t on_val, uint32_t off_msr, uint64_t off_val,
    uint64_t n);
__asm__(".text\n"
    ".globl measure_cld\n"
    "measure_cld:\n"
    "	mov %rdx, %r9\n"
    "	mov %rcx, %r10\n"
    "	mov %rcx, %r11\n"
    "	shr $32, %r11\n"
    "	mov %edi, %ecx\n"
    "	mov %rsi, %rax\n"
    "	mov %rsi, %rdx\n"
    "	shr $32, %rdx\n"
    "	wrmsr\n"
    "	mov %r8, %rcx\n"
    "1:	nop\n"
    "	cld\n"
    "	loop 1b\n"
    "	mov %r9d, %ecx\n"
    "	mov %r10d, %eax\n"
    "	mov %r11d, %edx\n"
    "	wrmsr\n"
    "	ret\n");

static struct {
	int	 intel;
	uint32_t sel[2], gctl;
	uint64_t on;			/* both counters in gctl */
} pmu;

static volatile uint64_t counted[VG_MAX_CPUS];	/* NMIs with the counters on */
static volatile uint32_t finished[VG_MAX_CPUS];
static volatile uint64_t hb[VG_MAX_CPUS], hi[VG_MAX_CPUS], nmis[VG_MAX_CPUS];
static volatile uint32_t bad[VG_MAX_CPUS];
static volatile uint64_t last_rip[VG_MAX_CPUS];	/* where the last counted NMI landed */

static void
nmi_fn(unsigned cpu, struct vg_frame *f)
{
	if (vg_rdmsr(pmu.gctl) != 0) {
		counted[cpu]++;
		last_rip[cpu] = f->rip;
	}
}

static int
find_pmu(void)
{
	uint32_t r[4];

	vg_cpuid(0xa, 0, r);
	if ((r[0] & 0xff) >= 2 && ((r[0] >> 8) & 0xff) >= 2) {
		pmu.intel = 1;
		pmu.sel[0] = 0x186;		/* IA32_PERFEVTSEL0, 1 */
		pmu.sel[1] = 0x187;
		pmu.gctl = 0x38f;		/* IA32_PERF_GLOBAL_CTRL */
		return (0);
	}
	vg_cpuid(0x80000000, 0, r);
	if (r[0] >= 0x80000022) {
		vg_cpuid(0x80000022, 0, r);
		if ((r[0] & 1) && (r[1] & 0xf) >= 2) {
			pmu.sel[0] = 0xc0010200;	/* PerfEvtSel0, 1 (PerfCtl) */
			pmu.sel[1] = 0xc0010202;
			pmu.gctl = 0xc0000301;		/* PerfCntrGlobalCtl */
			return (0);
		}
	}
	return (-1);
}

/*
 * IA32_MISC_ENABLE of an Intel model (libvpmu's, vpmu_kvm(3)): EMON, BTS
 * and PEBS unavailable set; a write to EMON ignored, one that clears BTS
 * unavailable #GPs, the other bits written.
 */
#define MSR_MISC_ENABLE	0x1a0
#define MISC_EMON	(1ul << 7)
#define MISC_PMU	(MISC_EMON | 1ul << 11 | 1ul << 12)

static void
misc_enable(unsigned cpu)
{
	uint64_t v = rd(MSR_MISC_ENABLE), w;

	if ((v & MISC_PMU) != MISC_PMU) {
		vg_printf("cpu %u: IA32_MISC_ENABLE %#lx, want bits 7, 11 and 12\n", cpu, v);
		bad[cpu]++;
	}
	wr(MSR_MISC_ENABLE, (v & ~MISC_EMON) ^ 1);	/* fast strings flipped */
	if ((w = rd(MSR_MISC_ENABLE)) != (v ^ 1)) {
		vg_printf("cpu %u: IA32_MISC_ENABLE %#lx after a write, want %#lx\n", cpu, w,
		    v ^ 1);
		bad[cpu]++;
	}
	if (!wr_gp(MSR_MISC_ENABLE, v & ~(1ul << 11))) {
		vg_printf("cpu %u: IA32_MISC_ENABLE: clearing BTS unavailable did not #GP\n",
		    cpu);
		bad[cpu]++;
	}
	wr(MSR_MISC_ENABLE, v);
}

/* One vCPU's rounds: 0 or the number of failures, Hb and Hi found. */
static void
rounds(unsigned cpu)
{
	/* counter select: event, OS (bit 17), EN (bit 22) */
	uint64_t branches = pmu.intel ? 0xC4 : 0xC2, insns = 0xC0;
	uint64_t ctr0 = pmu.intel ? 0xc1 : 0xc0010201, ctr1 = pmu.intel ? 0xc2 : 0xc0010203;
	uint64_t n, b, i, k, k0, xb = 0, xi = 0;
	unsigned r;

	wr(pmu.gctl, 0);
	wr(pmu.sel[0], branches | 1ul << 17 | 1ul << 22);
	wr(pmu.sel[1], insns | 1ul << 17 | 1ul << 22);
	for (r = 0; r < ROUNDS; r++) {
		n = 200 + 37 * r;
		wr(ctr0, 0);
		wr(ctr1, 0);
		k0 = counted[cpu];
		measure_cld(pmu.gctl, 3, pmu.gctl, 0, n);
		k = counted[cpu] - k0;
		b = rd(ctr0);
		i = rd(ctr1);
		nmis[cpu] += k;
		if (k == 0) {
			if (b != n || i != MEASURE_INSNS(n)) {
				vg_printf("cpu %u round %u: n %lu, no NMI: %lu branches, %lu "
				    "instructions, want %lu and %lu\n", cpu, r, n, b, i, n,
				    MEASURE_INSNS(n));
				bad[cpu]++;
			}
			continue;
		}
		if (b < n || i < MEASURE_INSNS(n) || (b - n) % k != 0 ||
		    (i - MEASURE_INSNS(n)) % k != 0 ||
		    (xb != 0 && ((b - n) / k != xb || (i - MEASURE_INSNS(n)) / k != xi))) {
			vg_printf("cpu %u round %u: n %lu, %lu NMIs: %lu branches, %lu "
			    "instructions, want %lu + %lu x NMIs and %lu + %lu x NMIs (the last "
			    "at %#lx)\n", cpu, r, n, k, b, i, n, xb, MEASURE_INSNS(n), xi,
			    last_rip[cpu]);
			bad[cpu]++;
			continue;
		}
		xb = (b - n) / k;
		xi = (i - MEASURE_INSNS(n)) / k;
	}
	hb[cpu] = xb;
	hi[cpu] = xi;
}

int
main(unsigned cpu)
{
	unsigned c, n = vg_ncpus();
	uint64_t b = 0, ins = 0, total;
	uint32_t r[4];

	if (find_pmu() != 0) {
		if (cpu == 0)
			vg_printf("not ok - no PMU with a global control in CPUID\n");
		return (cpu == 0 ? 1 : 0);
	}
	vg_set_nmi_handler(nmi_fn);
	if (pmu.intel)
		misc_enable(cpu);
	rounds(cpu);
	__atomic_store_n(&finished[cpu], 1, __ATOMIC_RELEASE);
	if (cpu != 0)
		return (0);
	for (c = 1; c < n; c++)
		while (!__atomic_load_n(&finished[c], __ATOMIC_ACQUIRE))
			vg_pause();
	for (c = 0; c < n; c++) {
		vg_printf("cpu %u: %u rounds, %lu NMIs counted, per NMI %lu branches %lu "
		    "instructions\n", c, ROUNDS, nmis[c], hb[c], hi[c]);
		CHECK("rounds_exact", bad[c] == 0, "cpu %u: %u rounds off", c, bad[c]);
		/* One path through the handler: the same cost on every vCPU. */
		if (hb[c] != 0 && b == 0) {
			b = hb[c];
			ins = hi[c];
		}
		CHECK("same_per_nmi", hb[c] == 0 || (hb[c] == b && hi[c] == ins),
		    "cpu %u: %lu/%lu per NMI, cpu 0..: %lu/%lu", c, hb[c], hi[c], b, ins);
	}
	for (c = 0, total = 0; c < n; c++)
		total += nmis[c];
	vg_cpuid(0xa, 0, r);
	vg_printf("vcpus %u, leaf 0xa eax %#x, NMIs counted %lu\n", n, r[0], total);
	return (conf_done());
}
