/*
 * pmi_periods.c -- sampling as a perf driver does it, checked exact.  PMC0
 * counts instructions (both rings) with INT, reloaded every PERIOD events:
 * the NMI handler reads the counter, adds what it counted since the last
 * reload to a total, and reloads it with the period left (perf's
 * period_left: a PMI x events late shortens the next period by x).  Over
 * code that ends the exact source's blocks in every way it knows (loops
 * counting in a register and in a stack slot, LOOP $, REP strings, CALLs
 * through a register and through memory, RETs, fences, CLI/STI, DIV),
 * every PERIOD events give one PMI, never later than a period: at the end
 * the PMIs equal the total divided by PERIOD, and no PMI came a whole
 * period late.  Exact counting makes it stricter: what a PMI's handler
 * reads past the period (the overshoot) is the same number of
 * instructions at every PMI -- those from the overflow to its read --
 * or one more, where the overflow came in an interrupt shadow (after STI,
 * which holds the NMI back over one more instruction).  And no NMI frame
 * holds RFLAGS.TF: this guest never sets it.  Prints the PMIs, the total
 * (the same in both modes: exact_modes_pmi_periods) and the overshoots,
 * and exits with the number of failed checks.
 */
#include <vpmu-guest/runtime.h>

#ifndef PERIOD
#define PERIOD	997u
#endif
#ifndef ROUNDS
#define ROUNDS	150u
#endif

#define IA32_PMC0		0x0C1u
#define IA32_PERFEVTSEL0	0x186u
#define IA32_PERF_GLOBAL_STATUS	0x38Eu
#define IA32_PERF_GLOBAL_CTRL	0x38Fu
#define IA32_PERF_GLOBAL_OVF_CTRL 0x390u
#define EVTSEL_USR		(1ull << 16)
#define EVTSEL_OS		(1ull << 17)
#define EVTSEL_INT		(1ull << 20)
#define EVTSEL_EN		(1ull << 22)
#define EV_INSTRUCTIONS		0x00C0u

static uint64_t mask;			/* the counter's width */
#define RFLAGS_TF		0x100u

static volatile uint64_t total, pmis, late, programmed, tf_frames;
static volatile int64_t left;		/* events to the next sample */
static volatile uint64_t over_min = UINT64_MAX, over_max;	/* overshoots */

/* What the counter counted since it was last written; then write it again. */
static void
account(bool reload)
{
	uint64_t now = vg_rdmsr(IA32_PMC0) & mask, delta = (now - programmed) & mask;

	total += delta;
	left -= (int64_t)delta;
	if (!reload)
		return;
	if (left <= 0) {
		if ((uint64_t)-left < over_min)
			over_min = (uint64_t)-left;
		if ((uint64_t)-left > over_max)
			over_max = (uint64_t)-left;
		pmis++;
		if (left <= -(int64_t)PERIOD)
			late++;
		while (left <= 0)
			left += PERIOD;
	}
	programmed = (uint64_t)-left & mask;
	vg_wrmsr(IA32_PMC0, programmed);
}

static void
pmi(unsigned cpu, struct vg_frame *f)
{
	(void)cpu;
	if (f->rflags & RFLAGS_TF)
		tf_frames++;
	account(true);
	vg_wrmsr(IA32_PERF_GLOBAL_OVF_CTRL, vg_rdmsr(IA32_PERF_GLOBAL_STATUS));
}

static __attribute__((noinline)) uint64_t
leaf(uint64_t x)
{
	return (x * 3 + 1);
}

static uint64_t (*volatile leaf_ptr)(uint64_t) = leaf;

/* One round of everything. */
static __attribute__((noinline)) uint64_t
round_of(uint64_t x)
{
	static uint8_t src[512], dst[512];
	volatile uint64_t slot = 40;
	uint64_t n = 30, q, r, fl;
	uint64_t (*fn)(uint64_t) = leaf_ptr;

	__asm__ volatile("1: add %0, %0\n\tdec %1\n\tjnz 1b" : "+r"(x), "+r"(n) : : "cc");
	__asm__ volatile("1: decq %0\n\tjnz 1b" : "+m"(slot) : : "cc");
	n = 50;
	__asm__ volatile("loop ." : "+c"(n) : : "cc");
	n = sizeof(src);
	__asm__ volatile("rep movsb" : "+S"((const uint8_t *){ src }), "+D"((uint8_t *){ dst }),
	    "+c"(n) : : "memory");
	x = fn(x);
	__asm__ volatile("call *%[m]" : "+D"(x), "=a"(r) : [m] "m"(leaf_ptr)
	    : "rcx", "rdx", "rsi", "r8", "r9", "r10", "r11", "memory", "cc");
	x ^= r;
	__asm__ volatile("lfence\n\tpushfq\n\tpop %0\n\tcli\n\tadd $7, %1\n\tsti" :
	    "=r"(fl), "+r"(x) : : "cc");
	q = (x | 1) % 13;
	return (x + q + dst[x & 511]);
}

int
main(unsigned cpu)
{
	uint32_t r[4];
	uint64_t x = 1;
	unsigned i;
	int bad;

	if (cpu != 0)
		return (0);
	vg_cpuid(0xA, 0, r);
	if ((r[0] & 0xFF) < 2) {
		vg_printf("pmi_periods: needs architectural perfmon v2 (an intel-v2+ model)\n");
		return (1);
	}
	mask = (1ull << ((r[0] >> 16) & 0xFF)) - 1;
	vg_set_nmi_handler(pmi);
	vg_wrmsr(IA32_PERF_GLOBAL_CTRL, 0);
	left = PERIOD;
	programmed = (uint64_t)-left & mask;
	vg_wrmsr(IA32_PMC0, programmed);
	vg_wrmsr(IA32_PERFEVTSEL0, EV_INSTRUCTIONS | EVTSEL_OS | EVTSEL_USR | EVTSEL_INT |
	    EVTSEL_EN);
	vg_wrmsr(IA32_PERF_GLOBAL_CTRL, 1);
	for (i = 0; i < ROUNDS; i++)
		x = round_of(x);
	vg_wrmsr(IA32_PERF_GLOBAL_CTRL, 0);
	account(false);
	bad = (pmis != total / PERIOD) + (late != 0) + (pmis == 0 || over_max - over_min > 1) +
	    (tf_frames != 0);
	vg_printf("pmi_periods: %lu instructions, %lu PMIs of every %u (want %lu), %lu a period "
	    "late, overshoot %lu..%lu (at most 1 apart), %lu frames with TF: %s (x %lx)\n",
	    (unsigned long)total, (unsigned long)pmis, PERIOD, (unsigned long)(total / PERIOD),
	    (unsigned long)late, (unsigned long)over_min, (unsigned long)over_max,
	    (unsigned long)tf_frames, bad ? "FAIL" : "ok", (unsigned long)x);
	return (bad);
}
