/*
 * xbench_guest.c -- the guest of exact.sh (issue 11, "Measure"): one
 * workload (DEFINES WORKLOAD=) run in ROUNDS pairs of rounds, each pair a
 * floor round (PMC0 programmed, its EN bit clear: nothing counts, nothing
 * is stepped) then a counted round (EN set: the exact source steps every
 * instruction).  The two rounds run the same code, the same WRMSRs
 * included, so their difference is the cost of counting.
 *
 * Each round is one call of the workload's assembly function
 * xb_run(n, select): it writes select to IA32_PERFEVTSEL0 (the enabling
 * WRMSR, counted), runs n iterations, then writes 0 (not counted; the
 * rule of the conformance suite's measured block).  Counted instructions:
 * XB_FIXED + XB_SETUP + XB_BODY * n, known in advance; a counted round
 * whose PMC0 differs, or a floor round whose PMC0 is not 0, is an error
 * (the guest exits with the number of errors).
 *
 * The workloads (instructions per iteration):
 *   1 loop10   the shape of the kvm-unit-tests PMU test's measured loop:
 *              a load through a pointer, the pointer advanced by a cache
 *              line, seven NOPs, LOOP (10, one branch)
 *   2 decjnz   DEC RCX; JNZ (2, one branch)
 *   3 branchy  a 64-bit LCG whose top bits pick one of two equal-length
 *              paths at two data-dependent branches (17; 3 branches always
 *              and 2 JMPs taken on about half the iterations each: about
 *              4.25 instructions per control transfer)
 *   4 calls    two small functions called per iteration (9: CALL ADD RET
 *              CALL XOR ADD RET DEC JNZ, five of them branches)
 *   5 cprog    C compiled with the guests' -O2: per iteration a recursive
 *              Fibonacci of 10 (177 calls), a call through a table of
 *              function pointers, and a bytecode interpreter's switch over
 *              a 16-byte program (a jump table: JMP through memory).  Its
 *              count depends on the compiler, so the first counted round
 *              gives the expected count of the others, and step and block
 *              mode must agree on it (exact_modes_xbench_cprog)
 *
 * Output, one line per round (exact.sh reads them):
 *   XB <name> <round> floor|step <TSC ticks> <PMC0> <expected>
 * Timing is the guest's RDTSC around the call; exact.sh converts ticks
 * with the host's KVM_GET_TSC_KHZ.
 */
#include <vpmu-guest/runtime.h>

#ifndef ROUNDS
#define ROUNDS		3
#endif

#define MSR_PMC0		0xc1
#define MSR_EVTSEL0		0x186
#define MSR_GLOBAL_CTRL		0x38f
#define EVTSEL_INSNS		0x0300c0ull	/* instructions retired, USR, OS */
#define EVTSEL_EN		(1ull << 22)

/*
 * Counted around every body: the enabling WRMSR, MOV of n to RCX, and the
 * three MOVs/XORs that load the disabling WRMSR's operands.
 */
#define XB_FIXED	5

uint64_t xb_run(uint64_t n, uint64_t select);

/* The common entry: callee-saved registers, the enabling WRMSR, n in RCX. */
#define XB_ENTER							\
	".globl xb_run\n"						\
	"xb_run:\n\t"							\
	"push %rbx\n\tpush %r12\n\t"					\
	"mov %rsi, %rax\n\tmov %rsi, %rdx\n\tshr $32, %rdx\n\t"		\
	"mov $0x186, %ecx\n\t"						\
	"wrmsr\n\t"							\
	"mov %rdi, %rcx\n\t"
/* The common exit: the disabling WRMSR. */
#define XB_LEAVE							\
	"mov $0x186, %ecx\n\txor %eax, %eax\n\txor %edx, %edx\n\t"	\
	"wrmsr\n\t"							\
	"pop %r12\n\tpop %rbx\n\t"					\
	"ret\n"

#if WORKLOAD == 1
#define XB_NAME		"loop10"
#define XB_ITERS	40000ul
#define XB_SETUP	1
#define XB_BODY		10
/* Loads walk 64-byte lines from 8 MiB up: 2.5 MiB at 40000 iterations. */
__asm__(".text\n" XB_ENTER
    "mov $0x800000, %rbx\n"
    "1:\n\t"
    "mov (%rbx), %rax\n\t"
    "add $64, %rbx\n\t"
    "nop\n\tnop\n\tnop\n\tnop\n\tnop\n\tnop\n\tnop\n\t"
    "loop 1b\n\t"
    XB_LEAVE);
#elif WORKLOAD == 2
#define XB_NAME		"decjnz"
#define XB_ITERS	200000ul
#define XB_SETUP	0
#define XB_BODY		2
__asm__(".text\n" XB_ENTER
    "1:\n\t"
    "dec %rcx\n\t"
    "jnz 1b\n\t"
    XB_LEAVE);
#elif WORKLOAD == 3
#define XB_NAME		"branchy"
#define XB_ITERS	24000ul
#define XB_SETUP	4
#define XB_BODY		17
/*
 * r8: the LCG state, r9 its multiplier; the top four bits of each new
 * state pick the paths.  Both paths of each branch are the same length,
 * so the count does not depend on the data: block 7, path 3 (ADD XOR JMP
 * or SUB ROL NOP), block 2, path 2 (INC JMP or DEC NOP), tail 3.
 */
__asm__(".text\n" XB_ENTER
    "mov $1, %r8\n\t"
    "movabs $6364136223846793005, %r9\n\t"
    "xor %r10, %r10\n\t"
    "xor %r12, %r12\n"
    "1:\n\t"
    "imul %r9, %r8\n\t"
    "add $1442695041, %r8\n\t"
    "mov %r8, %rdx\n\t"
    "shr $60, %rdx\n\t"
    "ror $7, %r12\n\t"
    "test $1, %dl\n\t"
    "jz 2f\n\t"
    "add %rdx, %r10\n\t"
    "xor $0x55, %r10\n\t"
    "jmp 3f\n"
    "2:\n\t"
    "sub %rdx, %r10\n\t"
    "rol $3, %r10\n\t"
    "nop\n"
    "3:\n\t"
    "test $2, %dl\n\t"
    "jnz 4f\n\t"
    "inc %r11\n\t"
    "jmp 5f\n"
    "4:\n\t"
    "dec %r11\n\t"
    "nop\n"
    "5:\n\t"
    "add %r10, %r12\n\t"
    "dec %rcx\n\t"
    "jnz 1b\n\t"
    XB_LEAVE);
#elif WORKLOAD == 4
#define XB_NAME		"calls"
#define XB_ITERS	45000ul
#define XB_SETUP	0
#define XB_BODY		9
__asm__(".text\n" XB_ENTER
    "1:\n\t"
    "call xb_f1\n\t"
    "call xb_f2\n\t"
    "dec %rcx\n\t"
    "jnz 1b\n\t"
    XB_LEAVE
    "xb_f1:\n\t"
    "add $1, %r10\n\t"
    "ret\n"
    "xb_f2:\n\t"
    "xor %r10, %r11\n\t"
    "add %r11, %r12\n\t"
    "ret\n");
#elif WORKLOAD == 5
#define XB_NAME		"cprog"
#ifndef XB_ITERS
#define XB_ITERS	250ul
#endif
static volatile uint64_t xb_sink;

static __attribute__((noinline)) uint64_t
xb_fib(unsigned k)
{
	return (k < 2 ? k : xb_fib(k - 1) + xb_fib(k - 2));
}

static __attribute__((noinline)) uint64_t
xb_add(uint64_t a, uint64_t b)
{
	return (a + b);
}

static __attribute__((noinline)) uint64_t
xb_xor(uint64_t a, uint64_t b)
{
	return (a ^ (b << 7));
}

static __attribute__((noinline)) uint64_t
xb_mul(uint64_t a, uint64_t b)
{
	return (a * (b | 1));
}

static __attribute__((noinline)) uint64_t
xb_rot(uint64_t a, uint64_t b)
{
	return (a << (b & 63) | a >> (-b & 63));
}

static uint64_t (*const xb_ops[4])(uint64_t, uint64_t) = { xb_add, xb_xor, xb_mul, xb_rot };

/* A bytecode: each byte an opcode 0..7 on an accumulator. */
static const uint8_t xb_code[16] = { 0, 3, 1, 7, 2, 5, 4, 6, 1, 0, 3, 2, 7, 6, 5, 4 };

static __attribute__((noinline)) uint64_t
xb_interp(uint64_t acc, uint64_t arg)
{
	unsigned i;

	for (i = 0; i < sizeof(xb_code); i++) {
		switch (xb_code[i]) {
		case 0: acc += arg; break;
		case 1: acc ^= acc >> 13; break;
		case 2: acc *= 0x9E3779B97F4A7C15ull; break;
		case 3: acc -= i; break;
		case 4: acc = ~acc; break;
		case 5: acc += acc << 5; break;
		case 6: acc ^= arg << 3; break;
		default: acc = acc >> 1 | acc << 63; break;
		}
	}
	return (acc);
}

uint64_t
xb_run(uint64_t n, uint64_t select)
{
	uint64_t acc = 1, i;

	vg_wrmsr(MSR_EVTSEL0, select);
	for (i = 0; i < n; i++) {
		acc += xb_fib(10);
		acc = xb_ops[acc & 3](acc, i);
		acc = xb_interp(acc, i);
	}
	xb_sink = acc;
	vg_wrmsr(MSR_EVTSEL0, 0);
	return (acc);
}
#else
#error "unknown WORKLOAD"
#endif

#ifndef XB_NO_TIME
#define XB_NO_TIME	0	/* 1: print 0 for the times (exact_modes compares the lines) */
#endif

int
main(unsigned cpu)
{
#ifdef XB_BODY
	uint64_t expect = XB_FIXED + XB_SETUP + (uint64_t)XB_BODY * XB_ITERS;
#else
	uint64_t expect = 0;	/* the first counted round's */
#endif
	uint64_t t0, ticks, got;
	unsigned r, errors = 0;
	int step;

	if (cpu != 0)
		return (0);
	vg_wrmsr(MSR_GLOBAL_CTRL, 1);
	for (r = 0; r < ROUNDS; r++) {
		for (step = 0; step <= 1; step++) {
			vg_wrmsr(MSR_PMC0, 0);
			t0 = vg_rdtsc();
			xb_run(XB_ITERS, EVTSEL_INSNS | (step ? EVTSEL_EN : 0));
			ticks = XB_NO_TIME ? 0 : vg_rdtsc() - t0;
			got = vg_rdmsr(MSR_PMC0);
			if (step && expect == 0)
				expect = got;
			vg_printf("XB %s %u %s %lu %lu %lu\n", XB_NAME, r,
			    step ? "step" : "floor", (unsigned long)ticks,
			    (unsigned long)got, (unsigned long)(step ? expect : 0));
			if (got != (step ? expect : 0))
				errors++;
		}
	}
	return ((int)errors);
}
