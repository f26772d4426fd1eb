/*
 * event_filter.c -- the event filter seen from a guest (vpmu-run
 * --event-filter, vpmu_event_filter(3)): GP counter 0 counts retired
 * instructions, GP counter 1 retired branches (Intel 0xC4, AMD 0xC2), and
 * on Intel v2+ every fixed counter is enabled.  A loop of 3 instructions
 * and 1 branch per iteration runs 10 and then 30 times between reads of
 * the counters; the difference of the two deltas is exactly 20 iterations'
 * worth (the reads and the call cancel out):
 *
 *   event_filter: insns 60 branches 20 fixed0 60 fixed1 counts fixed2 counts
 *
 * A counter the filter disallows shows 0 ("fixed1 0" for a fixed counter
 * that never moved).  A model without fixed counters prints "fixed -".
 * Exits 0.
 */
#include <vpmu-guest/runtime.h>

#define EN_USR_OS		((1ull << 22) | (1ull << 16) | (1ull << 17))
#define INTEL_EVTSEL(i)		(0x186u + (i))
#define INTEL_PMC(i)		(0x0C1u + (i))
#define INTEL_FIXED(i)		(0x309u + (i))
#define INTEL_FIXED_CTRL	0x38Du
#define INTEL_GLOBAL_CTRL	0x38Fu
#define K7_SEL(i)		(0xC0010000u + (i))
#define K7_CTR(i)		(0xC0010004u + (i))

struct snap {
	uint64_t gp[2];
	uint64_t fx[3];
};

static bool amd;
static unsigned nfixed;

static void __attribute__((noinline))
take(struct snap *s)
{
	unsigned i;

	for (i = 0; i < 2; i++)
		s->gp[i] = vg_rdmsr(amd ? K7_CTR(i) : INTEL_PMC(i));
	for (i = 0; i < nfixed; i++)
		s->fx[i] = vg_rdmsr(INTEL_FIXED(i));
}

/* n iterations of add; dec; jnz: 3 instructions and 1 branch each. */
static void __attribute__((noinline))
loop(uint64_t n, struct snap *s)
{
	uint64_t x = 0;

	__asm__ volatile("1:\n\t"
	    "add $1, %0\n\t"
	    "dec %1\n\t"
	    "jnz 1b"
	    : "+r"(x), "+r"(n) : : "cc");
	take(s);
}

static uint64_t
diff(uint64_t a, uint64_t b, uint64_t c)
{
	return ((c - b) - (b - a));
}

int
main(unsigned cpu)
{
	struct snap a, b, c;
	uint32_t r[4];
	unsigned i;

	if (cpu != 0)
		return (0);
	vg_cpuid(0, 0, r);
	amd = r[1] == 0x68747541;			/* "Auth" */
	nfixed = 0;
	if (!amd) {
		vg_cpuid(0xA, 0, r);
		if ((r[0] & 0xFF) >= 2)
			nfixed = r[3] & 0x1F;
		if (nfixed > 3)
			nfixed = 3;
	}
	if (amd) {
		vg_wrmsr(K7_SEL(0), 0xC0 | EN_USR_OS);
		vg_wrmsr(K7_SEL(1), 0xC2 | EN_USR_OS);
	} else {
		vg_wrmsr(INTEL_EVTSEL(0), 0xC0 | EN_USR_OS);
		vg_wrmsr(INTEL_EVTSEL(1), 0xC4 | EN_USR_OS);
		if (nfixed > 0) {
			vg_wrmsr(INTEL_FIXED_CTRL, 0x333);
			vg_wrmsr(INTEL_GLOBAL_CTRL, 0x700000003ull);
		}
	}
	take(&a);
	loop(10, &b);
	loop(30, &c);
	vg_printf("event_filter: insns %lu branches %lu",
	    (unsigned long)diff(a.gp[0], b.gp[0], c.gp[0]),
	    (unsigned long)diff(a.gp[1], b.gp[1], c.gp[1]));
	if (nfixed == 0)
		vg_printf(" fixed -");
	else {
		vg_printf(" fixed0 %lu", (unsigned long)diff(a.fx[0], b.fx[0], c.fx[0]));
		for (i = 1; i < nfixed; i++)
			vg_printf(" fixed%u %s", i, c.fx[i] != a.fx[i] ? "counts" : "0");
	}
	vg_printf("\n");
	return (0);
}
