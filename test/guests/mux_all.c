/*
 * mux_all.c -- every guest-visible counter of the model enabled at once,
 * multiplexed onto fewer host counters (vpmu-run --host-counters N), each
 * scaled estimate checked against the truth.  Run it with --source exact.
 *
 * On vCPU 0, the guest finds the model's counters through CPUID (Intel
 * leaf 0xA: EAX[15:8] GP counters, EDX[4:0] fixed counters from version 2;
 * AMD: 6 core counters at 0xC0010200 if CPUID 0x80000001 ECX[23], else 4
 * legacy ones at 0xC0010000, PerfMonV2's global control if CPUID
 * 0x80000022 EAX[0]) and programs every one of them: GP counter i counts
 * instructions, branches, core cycles or (Intel) reference cycles by
 * i % 4 (AMD: i % 3), OS+USR; every fixed counter OS+USR.  Then:
 *
 *   truth  for each counter alone: zero every counter, enable that one,
 *          run the workload W, disable, read.  One counter never waits
 *          for a host counter, so the value is exact.
 *   all    zero every counter, enable all of them, run W, disable, read:
 *          each value is an estimate when the counters outnumber the host
 *          counters.
 *
 * Both phases run the same code, run_w(mask), whose mask alone differs, so
 * without multiplexing each estimate equals its truth exactly.  Where the
 * model has a global control (Intel version 2 and later, amd-v2) the
 * counters are enabled by one write to it, so that they form one group,
 * and disabled by another; elsewhere (intel-v1, amd-k7, amd-core) each
 * event select's EN bit is written in turn, counter by counter, before and
 * after W.
 *
 * W is ITERS (10000) iterations of 6 instructions and 2 branches (one
 * taken, one not): 60000 instructions, 20000 branches, as many cycles as
 * instructions (the exact source's CPI is 1).  The length is a compromise,
 * measured with the exact source's default single-stepping: a step costs
 * the vCPU thread about 9 us of CPU time here, so W is run once per
 * counter and once more, 720000 steps for 11 counters, in about 7 s of
 * CPU.  Rotations follow that CPU time: the default mux interval, 4 ms,
 * is about 430 instructions, some 140 windows in W, so 11 counters on 1
 * host counter get about 12 turns each.  Counters first went without a
 * turn at --mux-interval 80000 (7 windows), 20 times the default; at
 * 40000 every estimate was still within 0.01 %.  A host that single-steps
 * 10 times faster still gives every counter a turn or more at the default
 * interval.  Build with -DITERS=N for a longer or shorter W.
 *
 * It prints a line per counter and then the verdict:
 *
 *   mux_all: Intel version 2, 8 GP and 3 fixed counters
 *   mux_all: counter 0 (PMC0 instructions): truth 60009 est 60009 error 0.000 %
 *   mux_all: counter 1 (PMC1 branches): truth 20002 est 20033 error 0.155 %
 *   ...
 *   mux_all: counter 10 (FIXED2 ref-cycles): truth 60009 est 60009 error 0.000 %
 *   mux_all: 11 counters: max error 0.155 % (counter 1), within 2 %
 *
 * or "..., OVER 2 %".  Errors are |est - truth| / truth in thousandths of
 * a percent, rounded up: "max error 0.000 %" means every estimate is
 * exact.  Exits 0 if every estimate is within 2 % of its truth, 1 if one
 * is not, or if a truth is 0, or the model has no PMU.
 */
#include <vpmu-guest/runtime.h>

#define SEL_USR			(1ull << 16)
#define SEL_OS			(1ull << 17)
#define SEL_EN_BIT		22
#define INTEL_EVTSEL(i)		(0x186u + (i))
#define INTEL_PMC(i)		(0x0C1u + (i))
#define INTEL_FIXED(i)		(0x309u + (i))
#define INTEL_FIXED_CTRL	0x38Du
#define INTEL_GLOBAL_CTRL	0x38Fu
#define K7_SEL(i)		(0xC0010000u + (i))
#define K7_CTR(i)		(0xC0010004u + (i))
#define CORE_SEL(i)		(0xC0010200u + 2 * (i))
#define CORE_CTR(i)		(0xC0010201u + 2 * (i))
#define AMD_GLOBAL_CTL		0xC0000301u

#define MAX_GP			8
#define MAX_FIXED		3
#define MAX_CTRS		(MAX_GP + MAX_FIXED)
#ifndef ITERS
#define ITERS			10000		/* W: 6 instructions, 2 branches each */
#endif

struct ctr {
	uint32_t	 sel;		/* event select MSR; 0 for a fixed counter */
	uint32_t	 msr;		/* counter MSR */
	uint64_t	 evsel;		/* select value without EN */
	unsigned	 bit;		/* bit in the enable mask */
	char		 name[8];	/* "PMC3", "FIXED0" */
	const char	*event;
	uint64_t	 truth;
	uint64_t	 est;
};

struct event {
	uint64_t	 code;
	const char	*name;
};

static const struct event intel_events[] = {
	{ 0x00C0, "instructions" },
	{ 0x00C4, "branches" },
	{ 0x003C, "cycles" },
	{ 0x013C, "ref-cycles" },
};
static const struct event amd_events[] = {
	{ 0x00C0, "instructions" },
	{ 0x00C2, "branches" },
	{ 0x0076, "cycles" },
};
static const char *const fixed_events[MAX_FIXED] = {
	"instructions", "cycles", "ref-cycles"
};

static struct ctr ctrs[MAX_CTRS];
static unsigned nctrs;
static uint32_t global_msr;	/* the global control, 0 if the model has none */

/* W: n iterations of 6 instructions and 2 branches (the JE never taken). */
static void __attribute__((noinline))
work(uint64_t n)
{
	uint64_t x = 0, y = 0;

	__asm__ volatile("1:\n\t"
	    "add $3, %0\n\t"
	    "xor %0, %2\n\t"
	    "cmp $-1, %0\n\t"
	    "je 2f\n\t"
	    "dec %1\n\t"
	    "jnz 1b\n"
	    "2:"
	    : "+r"(x), "+r"(n), "+r"(y) : : "cc");
}

/*
 * Zero every counter, enable those in mask, run W, disable them.  The
 * instructions do not depend on mask (no branch on it), so a counter
 * counts the same stream whichever others count with it.
 */
static void __attribute__((noinline))
run_w(uint64_t mask)
{
	unsigned i;

	for (i = 0; i < nctrs; i++)
		vg_wrmsr(ctrs[i].msr, 0);
	if (global_msr != 0) {
		vg_wrmsr(global_msr, mask);
		work(ITERS);
		vg_wrmsr(global_msr, 0);
	} else {
		for (i = 0; i < nctrs; i++)
			vg_wrmsr(ctrs[i].sel, ctrs[i].evsel |
			    ((mask >> ctrs[i].bit) & 1) << SEL_EN_BIT);
		work(ITERS);
		for (i = 0; i < nctrs; i++)
			vg_wrmsr(ctrs[i].sel, ctrs[i].evsel);
	}
}

static void
add_gp(uint32_t sel, uint32_t msr, const struct event *ev, unsigned i)
{
	struct ctr *c = &ctrs[nctrs++];

	c->sel = sel;
	c->msr = msr;
	c->evsel = ev->code | SEL_USR | SEL_OS;
	c->bit = i;
	c->event = ev->name;
	vg_snprintf(c->name, sizeof(c->name), "PMC%u", i);
}

/* Find and program the counters; 0, or -1 without a PMU. */
static int
setup(void)
{
	uint32_t r[4];
	unsigned i, ngp, nfixed, version;
	uint64_t fixed_ctrl;
	bool amd;

	vg_cpuid(0, 0, r);
	amd = r[1] == 0x68747541;			/* "Auth" */
	if (amd) {
		bool core, v2 = false;

		vg_cpuid(0x80000001, 0, r);
		core = (r[2] & (1u << 23)) != 0;	/* PerfCtrExtCore */
		ngp = core ? 6 : 4;
		vg_cpuid(0x80000000, 0, r);
		if (r[0] >= 0x80000022) {
			vg_cpuid(0x80000022, 0, r);
			if ((r[0] & 1) != 0) {		/* PerfMonV2 */
				v2 = true;
				ngp = r[1] & 0xF;
			}
		}
		if (ngp > MAX_GP)
			ngp = MAX_GP;
		vg_printf("mux_all: AMD, %u counters at %s%s\n", ngp,
		    core ? "0xC0010200" : "0xC0010000",
		    v2 ? ", PerfMonV2 global control" : "");
		if (v2) {
			global_msr = AMD_GLOBAL_CTL;
			vg_wrmsr(global_msr, 0);
		}
		for (i = 0; i < ngp; i++)
			add_gp(core ? CORE_SEL(i) : K7_SEL(i),
			    core ? CORE_CTR(i) : K7_CTR(i),
			    &amd_events[i % 3], i);
		/* With the global control the selects stay enabled. */
		for (i = 0; i < nctrs; i++)
			vg_wrmsr(ctrs[i].sel, ctrs[i].evsel |
			    (v2 ? 1ull << SEL_EN_BIT : 0));
		return (0);
	}
	vg_cpuid(0xA, 0, r);
	version = r[0] & 0xFF;
	if (version == 0)
		return (-1);
	ngp = (r[0] >> 8) & 0xFF;
	nfixed = version >= 2 ? r[3] & 0x1F : 0;
	if (ngp > MAX_GP)
		ngp = MAX_GP;
	if (nfixed > MAX_FIXED)
		nfixed = MAX_FIXED;
	vg_printf("mux_all: Intel version %u, %u GP and %u fixed counters\n",
	    version, ngp, nfixed);
	if (version >= 2) {
		global_msr = INTEL_GLOBAL_CTRL;
		vg_wrmsr(global_msr, 0);
	}
	for (i = 0; i < ngp; i++)
		add_gp(INTEL_EVTSEL(i), INTEL_PMC(i), &intel_events[i % 4], i);
	for (i = 0; i < nctrs; i++)
		vg_wrmsr(ctrs[i].sel, ctrs[i].evsel |
		    (version >= 2 ? 1ull << SEL_EN_BIT : 0));
	fixed_ctrl = 0;
	for (i = 0; i < nfixed; i++) {
		struct ctr *c = &ctrs[nctrs++];

		c->sel = 0;
		c->msr = INTEL_FIXED(i);
		c->bit = 32 + i;
		c->event = fixed_events[i];
		vg_snprintf(c->name, sizeof(c->name), "FIXED%u", i);
		fixed_ctrl |= 0x3ull << (4 * i);	/* OS + USR */
	}
	if (nfixed > 0)
		vg_wrmsr(INTEL_FIXED_CTRL, fixed_ctrl);
	return (0);
}

/* |est - truth| / truth in thousandths of a percent, rounded up. */
static uint64_t
error_milli_pct(uint64_t truth, uint64_t d)
{
	return (d / truth * 100000 + (d % truth * 100000 + truth - 1) / truth);
}

int
main(unsigned cpu)
{
	uint64_t all, d, e, max = 0;
	unsigned i, worst = 0;
	bool ok = true;

	if (cpu != 0)
		return (0);
	if (setup() != 0 || nctrs == 0) {
		vg_printf("mux_all: the model has no counters\n");
		return (1);
	}
	all = 0;
	for (i = 0; i < nctrs; i++) {
		run_w(1ull << ctrs[i].bit);
		ctrs[i].truth = vg_rdmsr(ctrs[i].msr);
		all |= 1ull << ctrs[i].bit;
	}
	run_w(all);
	for (i = 0; i < nctrs; i++)
		ctrs[i].est = vg_rdmsr(ctrs[i].msr);

	for (i = 0; i < nctrs; i++) {
		struct ctr *c = &ctrs[i];

		if (c->truth == 0) {
			vg_printf("mux_all: counter %u (%s %s): truth 0 est %lu: "
			    "counted nothing alone\n", i, c->name, c->event,
			    (unsigned long)c->est);
			ok = false;
			continue;
		}
		d = c->est > c->truth ? c->est - c->truth : c->truth - c->est;
		e = error_milli_pct(c->truth, d);
		vg_printf("mux_all: counter %u (%s %s): truth %lu est %lu "
		    "error %lu.%03lu %%\n", i, c->name, c->event,
		    (unsigned long)c->truth, (unsigned long)c->est,
		    (unsigned long)(e / 1000), (unsigned long)(e % 1000));
		if (d * 50 > c->truth)		/* over 2 % */
			ok = false;
		if (e > max) {
			max = e;
			worst = i;
		}
	}
	vg_printf("mux_all: %u counters: max error %lu.%03lu %% (counter %u), %s\n",
	    nctrs, (unsigned long)(max / 1000), (unsigned long)(max % 1000), worst,
	    ok ? "within 2 %" : "OVER 2 %");
	return (ok ? 0 : 1);
}
