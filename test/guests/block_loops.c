/*
 * block_loops.c -- the two loops of issue 11's table, counted by the
 * guest's own PMU (an Intel model: PERFEVTSEL0 instructions, PERFEVTSEL1
 * branches, both rings): a 10-instruction body closed by LOOP, DEC/JNZ,
 * DEC/JNZ of a counter in a stack slot, LOOP to itself, and
 * kvm-unit-tests' loop of loads.  Each loop runs n and 2n times; the difference of the counts
 * is exactly n times the loop's instructions and branches per iteration
 * whatever the code around the loop costs.  Prints every count, so that
 * exact_modes.sh compares them between --exact-mode step and block, and
 * exits with the number of wrong differences.  ITERS: n (default 1000).
 * Then a #GP inside a block, its counts printed for the comparison.
 * ONLY_LOOP10, ONLY_DECJNZ: one loop alone (for timing).  PRESET: the
 * instructions counter starts there (a legacy write, sign-extended):
 * 0xffffffff makes it overflow at the first instruction counted, and the
 * differences stay exact (modulo the width).
 */
#include <vpmu-guest/runtime.h>

#ifndef ITERS
#define ITERS	1000
#endif
#ifndef ONLY_LOOP10
#define ONLY_LOOP10	0
#endif
#ifndef ONLY_DECJNZ
#define ONLY_DECJNZ	0
#endif
#ifndef PRESET
#define PRESET		0
#endif

#define EVTSEL0		0x186u
#define PMC0		0xC1u
#define EVTSEL_EN	(1u << 22 | 1u << 17 | 1u << 16)	/* EN, OS, USR */
#define INSTRUCTIONS	0x00C0u		/* INST_RETIRED.ANY_P */
#define BRANCHES	0x00C4u		/* BR_INST_RETIRED.ALL_BRANCHES */

struct counts {
	uint64_t insns, branches;
};

static void
start(void)
{
	vg_wrmsr(PMC0, PRESET);
	vg_wrmsr(PMC0 + 1, 0);
	vg_wrmsr(EVTSEL0 + 1, EVTSEL_EN | BRANCHES);
	vg_wrmsr(EVTSEL0, EVTSEL_EN | INSTRUCTIONS);
}

static struct counts
stop(void)
{
	struct counts c;

	vg_wrmsr(EVTSEL0, 0);
	vg_wrmsr(EVTSEL0 + 1, 0);
	c.insns = vg_rdmsr(PMC0);
	c.branches = vg_rdmsr(PMC0 + 1);
	return (c);
}

/*
 * The loops are not inlined and get n at run time, so that the code
 * around them is the same for n and 2n whatever the compiler (clang
 * inlines and specializes them otherwise).
 */

/* 9 ALU instructions and LOOP: 10 instructions, 1 branch per iteration. */
static __attribute__((noinline)) struct counts
loop10(uint32_t n)
{
	uint32_t a = 0, b = 1;

	start();
	__asm__ volatile(
	    "1:\n\t"
	    "add %1, %0\n\txor %0, %1\n\tadd $3, %0\n\tsub %1, %0\n\tinc %1\n\t"
	    "or %0, %1\n\tand $0x7f, %1\n\tshl $1, %0\n\tnot %0\n\t"
	    "loop 1b"
	    : "+r"(a), "+r"(b), "+c"(n) : : "cc");
	return (stop());
}

/* DEC and JNZ: 2 instructions, 1 branch per iteration. */
static __attribute__((noinline)) struct counts
decjnz(uint32_t n)
{
	start();
	__asm__ volatile("1:\n\tdec %0\n\tjnz 1b" : "+r"(n) : : "cc");
	return (stop());
}

/*
 * DEC of a stack slot and JNZ (hot.elf's loop, the counter in memory): 2
 * instructions, 1 branch per iteration.
 */
static __attribute__((noinline)) struct counts
decmem(uint32_t n)
{
	volatile uint64_t left = n;

	start();
	__asm__ volatile("1:\n\tdecq %0\n\tjnz 1b" : "+m"(left) : : "cc");
	return (stop());
}

/*
 * kvm-unit-tests' measured loop: a load from a buffer, the pointer moved
 * on by 64, seven NOPs, LOOP: 10 instructions, 1 branch per iteration.
 * In blocks the source retires its rounds at the LOOP without running
 * them (closed form), so the registers it leaves are checked here too:
 * the pointer, the last value loaded (word i of the buffer holds i), and
 * the status flags of the last ADD (the same ADD run again on the
 * pointer's previous value must give them).
 */
#define LOADS_WORDS	(8 * 2 * ITERS)
static uint64_t loads_buf[LOADS_WORDS];
static int loads_bad;

static __attribute__((noinline)) struct counts
loads(uint32_t n)
{
	uint64_t *p = loads_buf, val = 0, c = n, fl, want_fl, prev;
	struct counts k;

	start();
	__asm__ volatile(
	    "1:\n\tmov (%1), %2\n\tadd $64, %1\n\t"
	    "nop\n\tnop\n\tnop\n\tnop\n\tnop\n\tnop\n\tnop\n\t"
	    "loop 1b\n\t"
	    "pushfq\n\tpopq %3"
	    : "+c"(c), "+r"(p), "+r"(val), "=r"(fl) : : "cc", "memory");
	k = stop();
	prev = (uint64_t)(p - 8);
	__asm__ volatile("add $64, %1\n\tpushfq\n\tpopq %0" : "=r"(want_fl), "+r"(prev) : : "cc");
	if (p != loads_buf + 8 * n || val != 8 * (uint64_t)(n - 1) || c != 0 ||
	    (fl & 0x8D5) != (want_fl & 0x8D5)) {
		vg_printf("loads: n=%u left pointer +%lu words, value %lu, rcx %lu, flags %#lx "
		    "(want +%lu, %lu, 0, %#lx) FAIL\n", n, (unsigned long)(p - loads_buf),
		    (unsigned long)val, (unsigned long)c, (unsigned long)(fl & 0x8D5),
		    (unsigned long)(8 * n), (unsigned long)(8 * (uint64_t)(n - 1)),
		    (unsigned long)(want_fl & 0x8D5));
		loads_bad++;
	}
	return (k);
}

/* LOOP to itself (a delay loop, the branch alone): 1 instruction, 1 branch per iteration. */
static __attribute__((noinline)) struct counts
delay(uint32_t n)
{
	uint64_t c = n;

	start();
	__asm__ volatile("loop ." : "+c"(c) : : "cc");
	return (stop());
}

static int
check(const char *name, struct counts (*fn)(uint32_t), uint64_t insns, uint64_t branches)
{
	static volatile uint32_t iters = ITERS;
	struct counts one = fn(iters), two = fn(2 * iters);
	uint64_t di = two.insns - one.insns, db = two.branches - one.branches;
	int bad = di != insns * ITERS || db != branches * ITERS;

	vg_printf("%s: n=%u instructions %lu branches %lu, 2n: %lu %lu; "
	    "difference %lu %lu (want %lu %lu) %s\n", name, ITERS,
	    (unsigned long)one.insns, (unsigned long)one.branches,
	    (unsigned long)two.insns, (unsigned long)two.branches,
	    (unsigned long)di, (unsigned long)db, (unsigned long)(insns * ITERS),
	    (unsigned long)(branches * ITERS), bad ? "FAIL" : "ok");
	return (bad);
}

/*
 * A #GP inside a block: a load from a non-canonical address between ALU
 * instructions, resumed after by the runtime's exception table (the
 * section its safe accessors use).  The handler runs between the counts;
 * exact_modes.sh compares them between the modes.
 */
static struct counts
fault_in_block(void)
{
	uint64_t a = 1, b = 2, bad = 0x8000000000000000ull;

	start();
	__asm__ volatile(
	    "add %1, %0\n\txor %0, %1\n\tadd $3, %0\n\t"
	    "1: mov (%2), %0\n2:\n\t"
	    ".pushsection .vg_extable, \"a\"\n\t.balign 8\n\t"
	    ".quad 1b, 2b\n\t.popsection\n\t"
	    "sub %1, %0\n\tinc %1\n\tor %0, %1"
	    : "+r"(a), "+r"(b) : "r"(bad) : "cc", "memory");
	return (stop());
}

int
main(unsigned cpu)
{
	struct counts f;
	unsigned i;
	int bad = 0;

	if (cpu != 0)
		return (0);
	if (!ONLY_DECJNZ)
		bad += check("loop10", loop10, 10, 1);
	if (!ONLY_LOOP10)
		bad += check("decjnz", decjnz, 2, 1);
	if (!ONLY_LOOP10 && !ONLY_DECJNZ) {
		bad += check("decmem", decmem, 2, 1);
		bad += check("delay", delay, 1, 1);
		for (i = 0; i < LOADS_WORDS; i++)
			loads_buf[i] = i;
		bad += check("loads", loads, 10, 1) + loads_bad;
	}
	f = fault_in_block();
	vg_printf("fault in a block: instructions %lu branches %lu\n",
	    (unsigned long)f.insns, (unsigned long)f.branches);
	return (bad);
}
