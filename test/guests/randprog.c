/*
 * randprog.c -- a generator of random x86-64 guest code whose dynamic
 * instruction and branch counts are known exactly (issue 11, item 6).
 *
 *   randprog SEED [FILE.S]
 *
 * writes (to FILE.S, or to standard output) GNU assembler source, AT&T
 * syntax, that both gcc and clang assemble, with:
 *
 *   randprog_run               a function (SysV ABI, no arguments) whose
 *                              one call runs a random program;
 *   randprog_expect_insns      .quad: the instructions one call retires,
 *                              from randprog_run's first instruction to
 *                              its RET included (not the CALL);
 *   randprog_expect_branches   .quad: the branches among them;
 *   randprog_seed              .quad: SEED;
 *   randprog_buf               4 KiB of .bss, the scratch memory the
 *                              code reads and writes;
 *   randprog_sum               .quad, written at randprog_run's end:
 *                              the XOR of the scratch registers and the
 *                              status flags, counted (so that two ways of
 *                              running the program can be compared on
 *                              what it computed, not only on its counts).
 *
 * The same SEED gives the same file, byte for byte, on every host and
 * whatever compiler built the generator: it draws from its own splitmix64
 * stream, never from rand(), and never twice in one expression whose
 * order of evaluation the compiler chooses (randprog_deterministic.sh
 * checks seed 1's checksum).
 *
 * The counts are exact because every control decision is made here: no
 * branch depends on data the program computes.  A conditional jump is
 * preceded by the instructions that set the flags it reads from
 * immediates (mov $a, %r; cmp $b, %r or test $b, %r; or bt $k, %r), and
 * the generator evaluates the condition (the 16 condition codes on
 * CF, ZF, SF, OF and PF, as the SDM defines them).  Loop counters live in
 * registers the random computation never writes: %r12 to %r15, by
 * nesting depth, for DEC/JNZ, SUB/JNZ and CMP/JNE loops, %rcx for LOOP,
 * LOOPE, LOOPNE, JRCXZ and REP strings (a LOOP's body is computation
 * only, so nothing else writes %rcx while it counts).
 * Memory operands address randprog_buf at constant offsets (through
 * %rbp, which holds its address, or RIP-relative), so no address depends
 * on data either.  The computation uses %rax, %rbx, %rdx, %rsi, %rdi and
 * %r8 to %r11, with random values.
 *
 * What the program holds (the weights are in gen_item() and alu()):
 *
 *   straight-line integer code: ADD, SUB, ADC, SBB, AND, OR, XOR, CMP,
 *   TEST, shifts and rotates, SHLD/SHRD, IMUL (2 and 3 operands), MUL,
 *   LEA, MOV (immediate, 64-bit immediate, register, memory), MOVZX,
 *   MOVSX, MOVSXD, CMOVcc, SETcc, XCHG, BT/BTS/BTR/BTC, NEG, NOT, INC,
 *   DEC, BSWAP, BSF/BSR, XADD, CMPXCHG, CBW/CWDE/CDQE/CDQ/CQO, CLC, STC,
 *   CMC, NOPs (up to the 15-byte form), at 8, 16, 32 and 64 bits,
 *   register, immediate and memory operands, LOCK on some memory
 *   destinations; PUSH/POP pairs; string instructions without REP (STOS,
 *   MOVS, LODS, SCAS, CMPS);
 *   REP STOS and REP MOVS, byte to quadword, with 0 to 64 iterations, and
 *   now and then REP STOSB or MOVSB of 1025 to 4096 bytes (more than one
 *   of the chunks a host may exit for); each retires once, rcx = 0
 *   included (vpmu_exact(7));
 *   Jcc forward taken (over dead bytes, short or far enough for rel32),
 *   forward not taken (over live code), backward taken once; JMP over
 *   dead bytes, direct, through a register or through memory; JRCXZ and
 *   JECXZ taken and not (RCX 0, small, or with bits above 31 set);
 *   loops of 1 to 50 iterations: LOOP, LOOPE, LOOPNE (to the end, or left
 *   early on ZF; counting in RCX, or in ECX with an address-size prefix
 *   and the bits above set), DEC/JNZ (32 bits, the bits above set or not,
 *   or 64; RCX too), SUB/JNZ, CMP/JNE; bodies of 0 to 20 instructions, or
 *   nested code (loops in loops, calls, branches) up to depth 3;
 *   CALL, direct, through a register or memory, to generated functions, which
 *   may call the ones generated after them (no recursion); each saves the
 *   loop registers it uses; some end in RET $imm, popping 1 to 3
 *   quadwords their callers push.
 *
 * Never: I/O, MSRs, CPUID, HLT, DIV/IDIV, privileged or SSE/AVX/x87
 * instructions, fences, self-modifying code, instructions that need a
 * CPUID feature past the x86-64 baseline.
 *
 * One call retires between about 2 000 and 16 000 instructions.  The
 * guest that runs it is randprog_guest.c.
 */
#include <inttypes.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>

#define BUF_SIZE	4096	/* randprog_buf */
#define MAX_DEPTH	3	/* loop nesting, so %r12..%r14 (+%r15 spare) */
#define MAX_FUNCS	6

/* ---- output buffers ----------------------------------------------------- */

struct buf {
	char *p;
	size_t len, cap;
};

static void
die(const char *msg)
{
	fprintf(stderr, "randprog: %s\n", msg);
	exit(1);
}

static void __attribute__((format(printf, 2, 3)))
emit(struct buf *b, const char *fmt, ...)
{
	va_list ap;
	int n = 0;

	for (;;) {
		if (b->cap - b->len <= (size_t)n) {	/* room for n bytes and the NUL */
			b->cap = 2 * b->cap + (size_t)n + 4096;
			b->p = realloc(b->p, b->cap);
			if (b->p == NULL)
				die("out of memory");
		}
		va_start(ap, fmt);
		n = vsnprintf(b->p + b->len, b->cap - b->len, fmt, ap);
		va_end(ap);
		if (n < 0)
			die("vsnprintf failed");
		if ((size_t)n < b->cap - b->len)
			break;
	}
	b->len += (size_t)n;
}

/* ---- the random stream (splitmix64) ----------------------------------- */

static uint64_t rng_state;

static uint64_t
rnd64(void)
{
	uint64_t z = (rng_state += 0x9E3779B97F4A7C15ull);

	z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
	z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
	return (z ^ (z >> 31));
}

/* A number in [lo, hi]. */
static unsigned
rnd(unsigned lo, unsigned hi)
{
	return (lo + (unsigned)(rnd64() % ((uint64_t)hi - lo + 1)));
}

static bool
chance(unsigned percent)
{
	return (rnd(1, 100) <= percent);
}

/* ---- registers and operands ------------------------------------------- */

/* The scratch registers, by size: 64, 32, 16, 8 bits. */
static const char *const scratch[][4] = {
	{ "rax", "eax", "ax", "al" },	{ "rbx", "ebx", "bx", "bl" },
	{ "rdx", "edx", "dx", "dl" },	{ "rsi", "esi", "si", "sil" },
	{ "rdi", "edi", "di", "dil" },	{ "r8", "r8d", "r8w", "r8b" },
	{ "r9", "r9d", "r9w", "r9b" },	{ "r10", "r10d", "r10w", "r10b" },
	{ "r11", "r11d", "r11w", "r11b" },
};
#define NSCRATCH	(sizeof(scratch) / sizeof(scratch[0]))

/* Loop counters by depth (DEC/JNZ, SUB/JNZ, CMP/JNE). */
static const char *const ctl64[] = { "r12", "r13", "r14", "r15" };
static const char *const ctl32[] = { "r12d", "r13d", "r14d", "r15d" };
#define USES_RCX	(1u << 4)	/* bit d: ctl64[d]; this bit: %rcx */

static const char sfx[] = { 'q', 'l', 'w', 'b' };	/* by size index */
static const unsigned bytes[] = { 8, 4, 2, 1 };

static const char *
reg(unsigned r, unsigned size)
{
	return (scratch[r][size]);
}

static unsigned
any_reg(void)
{
	return (rnd(0, NSCRATCH - 1));
}

/* A memory operand of `size` bytes inside randprog_buf. */
static const char *
mem(unsigned size)
{
	static char s[64];
	unsigned off = rnd(0, BUF_SIZE - size);

	if (chance(30))
		snprintf(s, sizeof(s), "randprog_buf+%u(%%rip)", off);
	else
		snprintf(s, sizeof(s), "%u(%%rbp)", off);
	return (s);
}

/* An immediate that fits `size` (at most 32 bits, sign-extended). */
static long
imm(unsigned size)
{
	switch (rnd(0, 3)) {
	case 0:
		return ((long)rnd(0, 16) - 8);
	case 1:
		return ((long)rnd(0, 255) - 128);
	default:
		if (size == 3)
			return ((long)rnd(0, 255) - 128);
		if (size == 2)
			return ((long)rnd(0, 65535) - 32768);
		return ((long)(int32_t)(uint32_t)rnd64());
	}
}

/* ---- conditions ----------------------------------------------------------- */

/* Condition codes in encoding order: cc ^ 1 is cc's negation. */
static const char *const cc_name[16] = {
	"o", "no", "b", "ae", "e", "ne", "be", "a",
	"s", "ns", "p", "np", "l", "ge", "le", "g",
};

struct flags {
	bool cf, zf, sf, of, pf;
};

static bool
cc_true(unsigned cc, struct flags f)
{
	bool v;

	switch (cc >> 1) {
	case 0: v = f.of; break;
	case 1: v = f.cf; break;
	case 2: v = f.zf; break;
	case 3: v = f.cf || f.zf; break;
	case 4: v = f.sf; break;
	case 5: v = f.pf; break;
	case 6: v = f.sf != f.of; break;
	default: v = f.zf || f.sf != f.of; break;
	}
	return ((cc & 1) ? !v : v);
}

static bool
parity_even(uint32_t r)
{
	unsigned n = 0, i;

	for (i = 0; i < 8; i++)
		n += (r >> i) & 1;
	return ((n & 1) == 0);
}

/* The flags of a 32-bit `cmp $b, %r` with r = a (r - b). */
static struct flags
flags_cmp(uint32_t a, uint32_t b)
{
	uint32_t r = a - b;
	struct flags f = {
		.cf = a < b, .zf = r == 0, .sf = r >> 31,
		.of = ((a ^ b) & (a ^ r)) >> 31, .pf = parity_even(r),
	};

	return (f);
}

/* The flags of a 32-bit `test $b, %r` with r = a. */
static struct flags
flags_test(uint32_t a, uint32_t b)
{
	uint32_t r = a & b;
	struct flags f = {
		.cf = false, .zf = r == 0, .sf = r >> 31, .of = false,
		.pf = parity_even(r),
	};

	return (f);
}

/* A 32-bit operand value, biased towards the edges that flip flags. */
static uint32_t
value(void)
{
	static const uint32_t edges[] = {
		0, 1, 2, 0x7F, 0x80, 0xFF, 0x7FFFFFFF, 0x80000000, 0xFFFFFFFF,
		0xFFFFFFFE,
	};
	uint32_t v;

	if (chance(40))
		return (edges[rnd(0, sizeof(edges) / sizeof(edges[0]) - 1)]);
	v = (uint32_t)rnd64();
	return (v >> rnd(0, 31));
}

/* ---- generation state ------------------------------------------------------- */

struct count {
	uint64_t insns, branches;
};

static void
add(struct count *c, struct count d)
{
	c->insns += d.insns;
	c->branches += d.branches;
}

struct gen {
	struct buf *out;
	unsigned depth;		/* loop nesting: the next loop counts in ctl64[depth] */
	unsigned used;		/* loop registers the function uses (USES_RCX, 1 << d) */
	int fn;			/* this function's index (-1: randprog_run) */
};

static unsigned label_next;
static int nfuncs;
static struct count fn_count[MAX_FUNCS];
static unsigned fn_args[MAX_FUNCS];	/* quadwords its RET $imm pops */

/* Per-kind totals, for the file's header comment. */
enum {
	K_ALU, K_PUSHPOP, K_STRING, K_REP, K_JCC_TAKEN, K_JCC_NOT, K_JCC_BACK,
	K_JMP, K_JMP_IND, K_JRCXZ, K_CALL, K_CALL_IND, K_LOOP, K_LOOPE, K_LOOPNE,
	K_DECJNZ, K_SUBJNZ, K_CMPJNE, K_LOOP_ECX, K_DEC_WIDE, K_DEC_RCX, K_JECXZ,
	K_RET_IMM, K_DEC_SLOT, K_LOOP_LOADS, K_NKINDS
};
static const char *const kind_name[K_NKINDS] = {
	"alu", "push/pop", "string", "rep", "jcc-taken", "jcc-not-taken",
	"jcc-backward", "jmp", "jmp-indirect", "jrcxz", "call", "call-indirect",
	"loop", "loope", "loopne", "dec/jnz", "sub/jnz", "cmp/jne",
	"of which: loops in ecx", "dec/jnz 64-bit or high bits set", "dec/jnz in rcx",
	"jecxz", "ret imm", "dec/jnz of a stack slot", "loop of loads and moves",
};
static unsigned kinds[K_NKINDS];

static unsigned
new_label(void)
{
	return (label_next++);
}

/* ---- one random integer instruction ------------------------------------------ */

static const char *const binop[] = { "add", "sub", "adc", "sbb", "and", "or", "xor", "cmp", "test" };
static const char *const shiftop[] = { "shl", "shr", "sar", "rol", "ror", "rcl", "rcr" };
static const char *const unop[] = { "neg", "not", "inc", "dec" };
static const char *const btop[] = { "bt", "bts", "btr", "btc" };
#define N(a)	(sizeof(a) / sizeof((a)[0]))

/*
 * One instruction of straight-line computation: writes scratch registers
 * and randprog_buf only; at most 15 bytes long.
 */
static void
alu(struct buf *b)
{
	/*
	 * Every random draw is a statement of its own or a declarator's
	 * initializer (sequenced): in one function call's arguments their
	 * order would be the compiler's, and gcc and clang differ.
	 */
	unsigned s = rnd(0, 3), s2 = rnd(0, 1), r1 = any_reg(), r2 = any_reg();
	unsigned r3 = any_reg(), kind = rnd(0, 27), v = rnd(0, 99);
	unsigned op = rnd(0, N(binop) - 1), cc = rnd(0, 15), x = rnd(0, 63);
	long i = imm(s), i2 = imm(s2);
	const char *m;

	switch (kind) {
	case 0: case 1: case 2:		/* op %r, %r */
		emit(b, "\t%s\t%%%s, %%%s\n", binop[op], reg(r1, s), reg(r2, s));
		break;
	case 3: case 4:			/* op $imm, %r */
		emit(b, "\t%s%c\t$%ld, %%%s\n", binop[op], sfx[s], i, reg(r1, s));
		break;
	case 5:				/* op mem, %r / op %r, mem, LOCKed or not */
		m = mem(bytes[s]);
		if (v < 50)
			emit(b, "\t%s\t%s, %%%s\n", binop[op], m, reg(r1, s));
		else			/* LOCK CMP and LOCK TEST are #UD */
			emit(b, "\t%s%s\t%%%s, %s\n", op < 7 && v < 63 ? "lock " : "",
			    binop[op], reg(r1, s), m);
		break;
	case 6:				/* op $imm, mem */
		m = mem(bytes[s]);
		emit(b, "\t%s%c\t$%ld, %s\n", binop[op], sfx[s], i, m);
		break;
	case 7:				/* shifts and rotates */
		m = mem(bytes[s]);
		if (v < 70)
			emit(b, "\t%s%c\t$%u, %%%s\n", shiftop[op % N(shiftop)], sfx[s],
			    x % (8 * bytes[s]), reg(r1, s));
		else
			emit(b, "\t%s%c\t$%u, %s\n", shiftop[op % N(shiftop)], sfx[s],
			    1 + x % 7, m);
		break;
	case 8:				/* double shifts */
		emit(b, "\t%s\t$%u, %%%s, %%%s\n", v < 50 ? "shld" : "shrd", x % 32,
		    reg(r1, s2), reg(r2, s2));
		break;
	case 9:				/* multiplies */
		m = mem(bytes[s2]);
		if (v < 25)
			emit(b, "\timul\t%%%s, %%%s\n", reg(r1, s2), reg(r2, s2));
		else if (v < 50)
			emit(b, "\timul\t$%ld, %%%s, %%%s\n", i2, reg(r1, s2), reg(r2, s2));
		else if (v < 75)
			emit(b, "\timul\t%s, %%%s\n", m, reg(r1, s2));
		else			/* rdx:rax = rax * r */
			emit(b, "\t%s\t%%%s\n", v < 88 ? "mul" : "imul", reg(r1, s2));
		break;
	case 10:			/* LEA */
		if (v < 33)
			emit(b, "\tlea\t%ld(%%%s,%%%s,%u), %%%s\n", i2, reg(r1, 0),
			    reg(r2, 0), 1u << (x % 4), reg(r3, s2));
		else if (v < 67)
			emit(b, "\tlea\t%ld(%%%s), %%%s\n", i2, reg(r1, 0), reg(r2, s2));
		else
			emit(b, "\tlea\trandprog_buf+%u(%%rip), %%%s\n", x * 64,
			    reg(r1, 0));
		break;
	case 11: case 12:		/* MOV */
		m = mem(bytes[s]);
		if (v < 17)
			emit(b, "\tmov\t$%ld, %%%s\n", i, reg(r1, s));
		else if (v < 33)
			emit(b, "\tmovabs\t$%" PRIu64 ", %%%s\n", rnd64(), reg(r1, 0));
		else if (v < 50)
			emit(b, "\tmov\t%%%s, %%%s\n", reg(r1, s), reg(r2, s));
		else if (v < 67)
			emit(b, "\tmov\t%s, %%%s\n", m, reg(r1, s));
		else if (v < 83)
			emit(b, "\tmov\t%%%s, %s\n", reg(r1, s), m);
		else
			emit(b, "\tmov%c\t$%ld, %s\n", sfx[s], i, m);
		break;
	case 13:			/* zero and sign extension */
		m = mem(1);
		if (v < 17)
			emit(b, "\tmovzbl\t%%%s, %%%s\n", reg(r1, 3), reg(r2, 1));
		else if (v < 33)
			emit(b, "\tmovzwl\t%%%s, %%%s\n", reg(r1, 2), reg(r2, 1));
		else if (v < 50)
			emit(b, "\tmovsbq\t%%%s, %%%s\n", reg(r1, 3), reg(r2, 0));
		else if (v < 67)
			emit(b, "\tmovswq\t%%%s, %%%s\n", reg(r1, 2), reg(r2, 0));
		else if (v < 83)
			emit(b, "\tmovslq\t%%%s, %%%s\n", reg(r1, 1), reg(r2, 0));
		else
			emit(b, "\t%s\t%s, %%%s\n", v < 92 ? "movzbl" : "movsbl", m, reg(r1, 1));
		break;
	case 14:			/* CMOVcc */
		m = mem(bytes[s2]);
		if (v < 70)
			emit(b, "\tcmov%s\t%%%s, %%%s\n", cc_name[cc], reg(r1, s2), reg(r2, s2));
		else
			emit(b, "\tcmov%s\t%s, %%%s\n", cc_name[cc], m, reg(r1, s2));
		break;
	case 15:			/* SETcc */
		m = mem(1);
		if (v < 70)
			emit(b, "\tset%s\t%%%s\n", cc_name[cc], reg(r1, 3));
		else
			emit(b, "\tset%s\t%s\n", cc_name[cc], m);
		break;
	case 16:			/* XCHG */
		m = mem(bytes[s]);
		if (v < 80)
			emit(b, "\txchg\t%%%s, %%%s\n", reg(r1, s), reg(r2, s));
		else
			emit(b, "\txchg\t%%%s, %s\n", reg(r1, s), m);
		break;
	case 17:			/* bit tests */
		m = mem(4);
		if (v < 40)
			emit(b, "\t%s\t$%u, %%%s\n", btop[op % N(btop)], x, reg(r1, 0));
		else if (v < 70)
			emit(b, "\t%s\t%%%s, %%%s\n", btop[op % N(btop)], reg(r1, 0), reg(r2, 0));
		else			/* an immediate offset stays in the operand */
			emit(b, "\t%sl\t$%u, %s\n", btop[op % N(btop)], x % 32, m);
		break;
	case 18: case 19:		/* NEG, NOT, INC, DEC */
		m = mem(bytes[s]);
		if (v < 75)
			emit(b, "\t%s\t%%%s\n", unop[op % N(unop)], reg(r1, s));
		else
			emit(b, "\t%s%s%c\t%s\n", v < 82 ? "lock " : "", unop[op % N(unop)],
			    sfx[s], m);
		break;
	case 20:
		emit(b, "\tbswap\t%%%s\n", reg(r1, s2));
		break;
	case 21:			/* destination undefined for a zero source: data only */
		emit(b, "\t%s\t%%%s, %%%s\n", v < 50 ? "bsf" : "bsr", reg(r1, s2), reg(r2, s2));
		break;
	case 22:
		emit(b, "\t%s\t%%%s, %%%s\n", v < 50 ? "xadd" : "cmpxchg", reg(r1, s), reg(r2, s));
		break;
	case 23: {
		static const char *const ext[] = { "cbtw", "cwtl", "cltq", "cltd", "cqto" };

		emit(b, "\t%s\n", ext[v % N(ext)]);
		break;
	}
	case 24: {
		static const char *const fl[] = { "clc", "stc", "cmc" };

		emit(b, "\t%s\n", fl[v % N(fl)]);
		break;
	}
	case 25: {
		static const char *const nops[] = {
			"nop", "nopl\t0(%rax)", "nopw\t0(%rax,%rax,1)",
			"nopl\t0x100(%rax,%rax,1)",
			/* 15 bytes, the longest: six 0x66, CS, NOPW disp32 */
			".byte\t0x66, 0x66, 0x66, 0x66, 0x66, 0x66, 0x2e, 0x0f, 0x1f, 0x84, 0, 0, 0, 0, 0",
		};

		emit(b, "\t%s\n", nops[v % N(nops)]);
		break;
	}
	default:			/* 8- and 16-bit arithmetic on the low parts */
		emit(b, "\t%s\t%%%s, %%%s\n", binop[op % 7], reg(r1, 2 + s2), reg(r2, 2 + s2));
		break;
	}
}

/* `n` instructions of computation, PUSH/POP pairs among them. */
static struct count
alu_run(struct buf *b, unsigned n)
{
	struct count c = { n, 0 };

	while (n > 0) {
		if (n >= 2 && chance(10)) {
			unsigned inner = rnd(0, n - 2), i;

			if (chance(70))
				emit(b, "\tpush\t%%%s\n", reg(any_reg(), 0));
			else if (chance(50))
				emit(b, "\tpushq\t%s\n", mem(8));
			else
				emit(b, "\tpushq\t$%ld\n", imm(1));
			for (i = 0; i < inner; i++)
				alu(b);
			if (chance(70))
				emit(b, "\tpop\t%%%s\n", reg(any_reg(), 0));
			else
				emit(b, "\tpopq\t%s\n", mem(8));
			n -= inner + 2;
			kinds[K_PUSHPOP]++;
		} else {
			alu(b);
			n--;
		}
	}
	kinds[K_ALU]++;
	return (c);
}

/* Bytes that are never run: INT3s, enough for a rel32 jump when `far`. */
static void
dead(struct buf *b, bool far)
{
	emit(b, "\t.fill\t%u, 1, 0xcc\n", far ? rnd(130, 300) : rnd(1, 40));
}

/*
 * Flags for a conditional jump whose outcome is `taken`: 2 instructions
 * (mov $a, %r; cmp/test/bt), the condition code's name returned.
 */
static const char *
condition(struct buf *b, bool taken)
{
	unsigned r = any_reg(), cc;
	uint32_t a = value(), v;
	struct flags f;

	emit(b, "\tmov\t$%" PRIu32 ", %%%s\n", a, reg(r, 1));
	switch (rnd(0, 4)) {
	case 0:				/* BT: CF = bit k, the other flags undefined */
		v = rnd(0, 31);
		emit(b, "\tbt\t$%" PRIu32 ", %%%s\n", v, reg(r, 1));
		cc = 2 + (((a >> v) & 1) ? 0 : 1);		/* b or ae: true */
		return (cc_name[taken ? cc : cc ^ 1]);
	case 1:
		v = value();
		emit(b, "\ttest\t$%" PRId32 ", %%%s\n", (int32_t)v, reg(r, 1));
		f = flags_test(a, v);
		break;
	case 2:				/* equal operands, or off by one */
		v = a + rnd(0, 2) - 1;
		emit(b, "\tcmp\t$%" PRId32 ", %%%s\n", (int32_t)v, reg(r, 1));
		f = flags_cmp(a, v);
		break;
	default:
		v = value();
		emit(b, "\tcmp\t$%" PRId32 ", %%%s\n", (int32_t)v, reg(r, 1));
		f = flags_cmp(a, v);
		break;
	}
	cc = rnd(0, 15);
	if (cc_true(cc, f) != taken)
		cc ^= 1;
	return (cc_name[cc]);
}

/* ---- items -------------------------------------------------------------------- */

static struct count gen_seq(struct gen *g, uint64_t want, uint64_t cap);

/* A string instruction without REP: 2 or 3 instructions. */
static struct count
string_op(struct buf *b)
{
	static const char *const str[] = { "stos", "movs", "lods", "scas", "cmps" };
	unsigned s = rnd(0, 3), op = rnd(0, N(str) - 1);
	struct count c = { 2, 0 };

	/* Both pointers 8 bytes away from the ends: DF is clear. */
	if (op == 1 || op == 2 || op == 4)
		emit(b, "\tlea\t%u(%%rbp), %%rsi\n", rnd(0, BUF_SIZE - 8));
	if (op != 2)
		emit(b, "\tlea\t%u(%%rbp), %%rdi\n", rnd(0, BUF_SIZE - 8));
	if (op == 1 || op == 4)
		c.insns++;
	emit(b, "\t%s%c\n", str[op], sfx[s]);
	kinds[K_STRING]++;
	return (c);
}

/*
 * REP STOS or REP MOVS, 0 to 64 iterations, or sometimes 1025 to 4096
 * bytes (more than one chunk: vpmu_exact(7)): 3 or 4 instructions.
 */
static struct count
rep_string(struct gen *g)
{
	unsigned s = rnd(0, 3), n = chance(15) ? 0 : rnd(1, 64), span;

	if (chance(10)) {
		s = 3;
		n = rnd(1025, BUF_SIZE);
	}
	span = n * bytes[s];
	struct count c = { 3, 0 };

	if (chance(50)) {
		emit(g->out, "\tlea\t%u(%%rbp), %%rsi\n", rnd(0, BUF_SIZE - span));
		c.insns++;
		emit(g->out, "\tlea\t%u(%%rbp), %%rdi\n", rnd(0, BUF_SIZE - span));
		emit(g->out, "\tmov\t$%u, %%ecx\n", n);
		emit(g->out, "\trep movs%c\n", sfx[s]);
	} else {
		emit(g->out, "\tlea\t%u(%%rbp), %%rdi\n", rnd(0, BUF_SIZE - span));
		emit(g->out, "\tmov\t$%u, %%ecx\n", n);
		emit(g->out, "\trep stos%c\n", sfx[s]);
	}
	g->used |= USES_RCX;
	kinds[K_REP]++;
	return (c);
}

/* A conditional jump forward over dead bytes, taken: 3 instructions. */
static struct count
jcc_taken(struct buf *b)
{
	unsigned l = new_label();
	const char *cc = condition(b, true);

	emit(b, "\tj%s\t.Lr%u\n", cc, l);
	dead(b, chance(40));
	emit(b, ".Lr%u:\n", l);
	kinds[K_JCC_TAKEN]++;
	return ((struct count){ 3, 1 });
}

/* A conditional jump forward over live code, not taken. */
static struct count
jcc_not_taken(struct gen *g, uint64_t max)
{
	unsigned l = new_label();
	const char *cc = condition(g->out, false);
	struct count c = { 3, 1 };

	emit(g->out, "\tj%s\t.Lr%u\n", cc, l);
	add(&c, gen_seq(g, rnd(0, (unsigned)(max - 3 < 40 ? max - 3 : 40)), max - 3));
	emit(g->out, ".Lr%u:\n", l);
	kinds[K_JCC_NOT]++;
	return (c);
}

/*
 * A conditional jump backward, taken once: JMP to it, the code it jumps
 * back to, a JMP past it.
 */
static struct count
jcc_backward(struct gen *g, uint64_t max)
{
	unsigned back = new_label(), at = new_label(), past = new_label();
	struct count c = { 5, 3 };
	const char *cc;

	emit(g->out, "\tjmp\t.Lr%u\n", at);
	emit(g->out, ".Lr%u:\n", back);
	add(&c, gen_seq(g, rnd(0, (unsigned)(max - 5 < 30 ? max - 5 : 30)), max - 5));
	emit(g->out, "\tjmp\t.Lr%u\n", past);
	if (chance(40))
		dead(g->out, true);	/* the backward jump needs rel32 */
	emit(g->out, ".Lr%u:\n", at);
	cc = condition(g->out, true);
	emit(g->out, "\tj%s\t.Lr%u\n", cc, back);
	emit(g->out, ".Lr%u:\n", past);
	kinds[K_JCC_BACK]++;
	return (c);
}

/*
 * The target's address in a register (1 instruction), or in randprog_buf
 * too (2): the operand of an indirect JMP or CALL returned.
 */
static const char *
indirect(struct buf *b, const char *target, struct count *c)
{
	static char op[64];
	const char *r = reg(any_reg(), 0);

	emit(b, "\tlea\t%s(%%rip), %%%s\n", target, r);
	c->insns++;
	if (chance(40)) {
		snprintf(op, sizeof(op), "%s", mem(8));
		emit(b, "\tmov\t%%%s, %s\n", r, op);
		c->insns++;
	} else
		snprintf(op, sizeof(op), "%%%s", r);
	return (op);
}

/* JMP over dead bytes: 1 instruction; through a register or memory: 2 or 3. */
static struct count
jmp_over(struct buf *b)
{
	unsigned l = new_label();
	struct count c = { 1, 1 };
	char target[16];

	if (chance(30)) {
		snprintf(target, sizeof(target), ".Lr%u", l);
		emit(b, "\tjmp\t*%s\n", indirect(b, target, &c));
		kinds[K_JMP_IND]++;
	} else {
		emit(b, "\tjmp\t.Lr%u\n", l);
		kinds[K_JMP]++;
	}
	dead(b, chance(30));
	emit(b, ".Lr%u:\n", l);
	return (c);
}

/*
 * JRCXZ or JECXZ, taken or over a short body: 2 or 3 instructions and the
 * body.  RCX is 0, a small number, or has bits above 31 set (JECXZ looks
 * at ECX alone).
 */
static struct count
jrcxz(struct gen *g, uint64_t max)
{
	unsigned l = new_label(), n, v = rnd(0, 2), hi = rnd(1, 0xFFFF), lo = rnd(1, 1000);
	bool ecx = chance(50), taken;
	uint64_t rcx = v == 0 ? 0 : v == 1 ? lo : (uint64_t)hi << 32 | (chance(50) ? lo : 0);
	struct count c = { 2, 1 };

	if (rcx >> 32)
		emit(g->out, "\tmovabs\t$%" PRIu64 ", %%rcx\n", rcx);
	else
		emit(g->out, "\tmov\t$%" PRIu64 ", %%ecx\n", rcx);
	taken = ecx ? (uint32_t)rcx == 0 : rcx == 0;
	emit(g->out, "\t%s\t.Lr%u\n", ecx ? "jecxz" : "jrcxz", l);
	if (taken)
		dead(g->out, false);
	else {
		n = rnd(0, (unsigned)(max - 2 < 8 ? max - 2 : 8));	/* rel8 */
		add(&c, alu_run(g->out, n));
	}
	emit(g->out, ".Lr%u:\n", l);
	g->used |= USES_RCX;
	kinds[ecx ? K_JECXZ : K_JRCXZ]++;
	return (c);
}

/*
 * CALL to a later function, direct or through a register or memory,
 * after pushing what its RET $imm pops, if it ends so.
 */
static struct count
call(struct gen *g, int f)
{
	struct count c = { 1, 1 };
	char target[16];
	unsigned i;

	for (i = 0; i < fn_args[f]; i++)	/* what its RET $imm pops */
		emit(g->out, "\tpush\t%%%s\n", reg(any_reg(), 0));
	c.insns += fn_args[f];
	if (chance(25)) {
		snprintf(target, sizeof(target), "randprog_f%d", f);
		emit(g->out, "\tcall\t*%s\n", indirect(g->out, target, &c));
		kinds[K_CALL_IND]++;
	} else {
		emit(g->out, "\tcall\trandprog_f%d\n", f);
		kinds[K_CALL]++;
	}
	add(&c, fn_count[f]);
	return (c);
}

/*
 * A loop of 1 to 50 iterations; per kind, closing instructions per
 * iteration (per_iter) and one set-up instruction.  LOOP, LOOPE and
 * LOOPNE count in RCX, or with an address-size prefix in ECX alone, the
 * bits above it set; their target is rel8, so their bodies are at most 7
 * instructions of computation.  DEC/JNZ counts in the depth's register,
 * 32 bits (the bits above set or not) or 64, or in RCX with a body of
 * computation: those loops, and LOOP's, are the ones block mode
 * fast-forwards (vpmu_exact(7)).  Or DEC/JNZ counts in a stack slot the
 * loop pushes (`push $n; ...; decq (%rsp); jnz; lea 8(%rsp), %rsp`, 64 or
 * 32 bits), hot.elf's shape, which block mode fast-forwards when the body
 * writes neither memory nor RSP.
 */
static struct count
loop(struct gen *g, uint64_t max)
{
	static const unsigned kind_of[] = { K_LOOP, K_LOOPE, K_LOOPNE, K_DECJNZ, K_SUBJNZ, K_CMPJNE };
	static const unsigned per_iter[] = { 1, 2, 2, 2, 2, 3 };
	unsigned k = rnd(0, 5), n, l = new_label(), iters, left_at, hi = 0;
	unsigned way = rnd(0, 3), d = g->depth;
	uint64_t room, body_max;
	struct count c = { 1, 0 }, body;
	struct gen inner = *g;
	const char *r32 = ctl32[d], *r64 = ctl64[d];
	bool alu_only = k < 3, a32 = false, slot = k == 3 && chance(25);

	room = (max - 1 - slot) / per_iter[k];	/* a slot's LEA after the loop */
	if (room > 50)
		room = 50;
	n = rnd(1, (unsigned)room);
	body_max = (max - 1 - slot) / n - per_iter[k];

	if (k < 3) {			/* LOOP, LOOPE, LOOPNE */
		r32 = "ecx";
		if (way == 0) {
			a32 = true;
			hi = rnd(1, 0xFFFF);
		}
		g->used |= USES_RCX;
	} else if (k == 3 && way == 3) {	/* DEC %ecx or %rcx */
		r32 = "ecx";
		r64 = "rcx";
		alu_only = true;
		g->used |= USES_RCX;
	} else {
		if (k == 3 && way == 2)	/* DEC of the low half */
			hi = rnd(1, 0xFFFF);
		g->used |= 1u << d;
	}
	if (slot) {
		hi = 0;
		emit(g->out, "\tpush\t$%u\n", n);
	} else if (hi != 0)
		emit(g->out, "\tmovabs\t$%" PRIu64 ", %%%s\n", (uint64_t)hi << 32 | n,
		    k < 3 ? "rcx" : r64);
	else if (k == 5)
		emit(g->out, "\txor\t%%%s, %%%s\n", r32, r32);
	else
		emit(g->out, "\tmov\t$%u, %%%s\n", n, r32);
	emit(g->out, ".Lr%u:\n", l);
	if (alu_only) {
		/* LOOPs: 7 instructions of at most 15 bytes, CMP, 0x67, LOOP: rel8 */
		unsigned most = k < 3 ? 7 : 20;

		body = alu_run(g->out, rnd(0, (unsigned)(body_max < most ? body_max : most)));
	} else {
		inner.depth = d + 1;
		inner.used = 0;
		if (body_max > 20 && inner.depth < MAX_DEPTH && chance(60))
			body = gen_seq(&inner, rnd(0, (unsigned)(body_max < 200 ? body_max : 200)),
			    body_max);
		else
			body = alu_run(g->out, rnd(0, (unsigned)(body_max < 20 ? body_max : 20)));
		g->used |= inner.used;
	}
	iters = n;
	switch (k) {
	case 0:
		break;
	case 1: {			/* ZF = 1 every time: runs to rcx = 0 */
		const char *r = reg(any_reg(), 1);

		emit(g->out, "\tcmp\t%%%s, %%%s\n", r, r);
		break;
	}
	case 2:
		if (chance(50)) {	/* leaves when ecx was left_at */
			left_at = rnd(1, n);
			iters = n - left_at + 1;
			emit(g->out, "\tcmp\t$%u, %%ecx\n", left_at);
		} else {		/* a nonzero result: ZF = 0, runs to rcx = 0 */
			emit(g->out, "\tor\t$1, %%%s\n", reg(any_reg(), 1));
		}
		break;
	case 3:
		if (slot)
			emit(g->out, "\tdec%c\t(%%rsp)\n\tjnz\t.Lr%u\n", way & 1 ? 'q' : 'l', l);
		else
			emit(g->out, "\tdec\t%%%s\n\tjnz\t.Lr%u\n", way == 1 || way == 3 ? r64 : r32,
			    l);
		break;
	case 4:
		emit(g->out, "\tsub\t$1, %%%s\n\tjnz\t.Lr%u\n", r32, l);
		break;
	default:
		emit(g->out, "\tinc\t%%%s\n\tcmp\t$%u, %%%s\n\tjne\t.Lr%u\n", r32, n, r32, l);
		break;
	}
	if (k < 3)
		emit(g->out, "%s\t%s\t.Lr%u\n", a32 ? "\t.byte\t0x67\n" : "",
		    k == 0 ? "loop" : k == 1 ? "loope" : "loopne", l);
	c.insns += (uint64_t)iters * (body.insns + per_iter[k]);
	c.branches += (uint64_t)iters * (body.branches + 1);
	if (slot) {			/* the slot released, flags kept */
		emit(g->out, "\tlea\t8(%%rsp), %%rsp\n");
		c.insns++;
		kinds[K_DEC_SLOT]++;
	}
	kinds[kind_of[k]]++;
	if (a32)
		kinds[K_LOOP_ECX]++;
	if (k == 3 && way == 3)
		kinds[K_DEC_RCX]++;
	if (k == 3 && (way == 1 || way == 2))
		kinds[K_DEC_WIDE]++;
	return (c);
}

/*
 * A LOOP of 1 to 50 rounds whose body is what the exact source may retire
 * without running it (closed form, vpmu_exact(7)): 1 to 6 of NOP, ADD or
 * SUB of an immediate, INC, DEC (64 or 32 bits) on registers that move,
 * and MOV loads (64 or 32 bits) through a pointer register that moves on
 * by a multiple of 8 a round, into registers the body does not otherwise
 * touch; now and then one that breaks the rule (the loaded register read
 * back, widths mixed), which the source must run instead.  The pointer
 * starts inside randprog_buf and stays there.  Two set-up instructions
 * (LEA of the pointer, MOV to ECX), then rounds of the body and LOOP.
 */
static struct count
loop_loads(struct gen *g, uint64_t max)
{
	unsigned n, i, k, l = new_label(), p = any_reg(), r, step = 0, size;
	unsigned moved = 0, loaded = 0, off, bodylen;
	struct count c = { 2, 0 };
	struct buf body = { 0 };

	n = rnd(1, (unsigned)((max - 2) / 8 < 50 ? (max - 2) / 8 : 50));
	bodylen = rnd(1, 6);
	for (i = 0; i < bodylen; i++) {
		k = rnd(0, 9);
		r = any_reg();
		if (k == 0)
			emit(&body, "\tnop\n");
		else if (k <= 2) {			/* the pointer moves */
			emit(&body, "\tadd\t$8, %%%s\n", reg(p, 0));
			step += 8;
		} else if (k <= 6 && r != p && !(loaded & (1u << r))) {
			size = chance(70) ? 0 : 1;
			switch (rnd(0, 3)) {
			case 0:
				emit(&body, "\tadd\t$%ld, %%%s\n", imm(3), reg(r, size));
				break;
			case 1:
				emit(&body, "\tsub\t$%ld, %%%s\n", imm(3), reg(r, size));
				break;
			case 2:
				emit(&body, "\tinc\t%%%s\n", reg(r, size));
				break;
			default:
				emit(&body, "\tdec\t%%%s\n", reg(r, size));
				break;
			}
			moved |= 1u << r;
		} else if (r != p && (!(moved & (1u << r)) || chance(10))) {
			size = chance(70) ? 0 : 1;
			emit(&body, "\tmov\t%u(%%%s), %%%s\n", 8 * rnd(0, 3), reg(p, 0),
			    reg(r, size));
			loaded |= 1u << r;
		} else
			emit(&body, "\tnop\n");
	}
	/* the rounds read up to (n - 1) * step + 24 + 8 bytes past the start */
	if ((n - 1) * step + 32 > BUF_SIZE)
		die("loop_loads: the buffer is too small");
	off = 8 * rnd(0, (BUF_SIZE - (n - 1) * step - 32) / 8);
	emit(g->out, "\tlea\t%u(%%rbp), %%%s\n\tmov\t$%u, %%ecx\n.Lr%u:\n%.*s\tloop\t.Lr%u\n",
	    off, reg(p, 0), n, l, (int)body.len, body.p, l);
	free(body.p);
	c.insns += (uint64_t)n * (bodylen + 1);
	c.branches += n;
	g->used |= USES_RCX;
	kinds[K_LOOP_LOADS]++;
	return (c);
}

/* One item of at most `max` (>= 1) instructions. */
static struct count
gen_item(struct gen *g, uint64_t max)
{
	unsigned w = rnd(0, 99);

	if (max < 8)
		return (alu_run(g->out, rnd(1, (unsigned)max)));
	if (w < 30)
		return (alu_run(g->out, rnd(1, (unsigned)(max < 12 ? max : 12))));
	if (w < 34)
		return (string_op(g->out));
	if (w < 39)
		return (rep_string(g));
	if (w < 46)
		return (jcc_taken(g->out));
	if (w < 52)
		return (jcc_not_taken(g, max));
	if (w < 56)
		return (jcc_backward(g, max));
	if (w < 60)
		return (jmp_over(g->out));
	if (w < 63)
		return (jrcxz(g, max));
	if (w < 75 && g->fn + 1 < nfuncs) {
		int f = (int)rnd((unsigned)(g->fn + 1), (unsigned)nfuncs - 1);

		if (fn_count[f].insns + 2 <= max)
			return (call(g, f));
	}
	if (w >= 75 && w < 80 && max >= 12)
		return (loop_loads(g, max));
	if (w >= 75 && g->depth < MAX_DEPTH && max >= 12)
		return (loop(g, max));
	return (alu_run(g->out, rnd(1, (unsigned)(max < 6 ? max : 6))));
}

/* Items until at least `want` instructions, never more than `cap` (want <= cap). */
static struct count
gen_seq(struct gen *g, uint64_t want, uint64_t cap)
{
	struct count c = { 0, 0 };

	while (c.insns < want)
		add(&c, gen_item(g, cap - c.insns));
	return (c);
}

/* Prologue and epilogue around a body; the pushes and pops counted. */
static struct count
function(struct buf *b, const char *name, int fn, uint64_t want)
{
	static const char *const saved[] = { "rbx", "rbp", "r12", "r13", "r14", "r15" };
	struct buf body = { 0 };
	struct gen g = { &body, 0, 0, fn };
	struct count c;
	unsigned i, npush = 0;
	const char *push[8];

	c = gen_seq(&g, want, want + want / 4 + 8);
	if (fn < 0) {			/* the ABI's callee-saved registers */
		for (i = 0; i < N(saved); i++)
			push[npush++] = saved[i];
	} else {			/* the loop registers it uses */
		for (i = 0; i < 4; i++)
			if (g.used & (1u << i))
				push[npush++] = ctl64[i];
		if (g.used & USES_RCX)
			push[npush++] = "rcx";
	}
	emit(b, "\n\t.globl\t%s\n\t.type\t%s, @function\n%s:\n", name, name, name);
	for (i = 0; i < npush; i++)
		emit(b, "\tpush\t%%%s\n", push[i]);
	c.insns += npush;
	if (fn < 0) {
		emit(b, "\tlea\trandprog_buf(%%rip), %%rbp\n\tcld\n");
		c.insns += 2;
	}
	emit(b, "%.*s", (int)body.len, body.p);
	if (fn < 0) {			/* what the registers and flags hold */
		emit(b, "\tpushfq\n\tpop\t%%rcx\n\tand\t$0x8d5, %%ecx\n");
		for (i = 1; i < NSCRATCH; i++)
			emit(b, "\txor\t%%%s, %%rax\n", reg(i, 0));
		emit(b, "\txor\t%%rcx, %%rax\n\tmov\t%%rax, randprog_sum(%%rip)\n");
		c.insns += 3 + (NSCRATCH - 1) + 2;
	}
	for (i = npush; i-- > 0; )
		emit(b, "\tpop\t%%%s\n", push[i]);
	if (fn >= 0 && chance(30)) {	/* the caller pushed 1 to 3 quadwords */
		fn_args[fn] = rnd(1, 3);
		emit(b, "\tret\t$%u\n", 8 * fn_args[fn]);
		kinds[K_RET_IMM]++;
	} else
		emit(b, "\tret\n");
	emit(b, "\t.size\t%s, .-%s\n", name, name);
	c.insns += npush + 1;
	c.branches++;
	free(body.p);
	return (c);
}

int
main(int argc, char **argv)
{
	struct buf funcs = { 0 }, run = { 0 };
	char name[32], *end;
	unsigned long long seed;
	struct count total;
	FILE *f = stdout;
	unsigned i;
	int k;

	if (argc < 2 || argc > 3) {
		fprintf(stderr, "usage: randprog SEED [FILE.S]\n");
		return (2);
	}
	seed = strtoull(argv[1], &end, 0);
	if (*argv[1] == '\0' || *end != '\0') {
		fprintf(stderr, "randprog: %s: not a number\n", argv[1]);
		return (2);
	}
	rng_state = seed;

	/* Functions last to first: each may call the ones after it. */
	nfuncs = (int)rnd(1, MAX_FUNCS);
	for (k = nfuncs - 1; k >= 0; k--) {
		struct buf one = { 0 };

		snprintf(name, sizeof(name), "randprog_f%d", k);
		fn_count[k] = function(&one, name, k, rnd(5, 300));
		emit(&funcs, "%.*s", (int)one.len, one.p);
		free(one.p);
	}
	total = function(&run, "randprog_run", -1, rnd(2000, 12800));

	if (argc == 3 && (f = fopen(argv[2], "w")) == NULL) {
		perror(argv[2]);
		return (1);
	}
	fprintf(f, "/* Generated by randprog %llu: do not edit.\n"
	    " * One call of randprog_run: %" PRIu64 " instructions, %" PRIu64 " branches.\n"
	    " * Items:", seed, total.insns, total.branches);
	for (i = 0; i < K_NKINDS; i++)
		fprintf(f, "%s %s %u", i % 6 == 0 ? "\n *" : ",", kind_name[i], kinds[i]);
	fprintf(f, "\n */\n\t.text\n%.*s%.*s", (int)run.len, run.p, (int)funcs.len, funcs.p);
	fprintf(f, "\n\t.section .rodata\n\t.balign 8\n"
	    "\t.globl\trandprog_expect_insns\nrandprog_expect_insns:\n\t.quad\t%" PRIu64 "\n"
	    "\t.globl\trandprog_expect_branches\nrandprog_expect_branches:\n\t.quad\t%" PRIu64 "\n"
	    "\t.globl\trandprog_seed\nrandprog_seed:\n\t.quad\t%llu\n"
	    "\n\t.bss\n\t.balign 64\n\t.globl\trandprog_buf\nrandprog_buf:\n\t.skip\t%u\n"
	    "\t.balign 8\n\t.globl\trandprog_sum\nrandprog_sum:\n\t.skip\t8\n"
	    "\t.section .note.GNU-stack, \"\", @progbits\n",
	    total.insns, total.branches, seed, BUF_SIZE);
	free(run.p);
	free(funcs.p);
	if (fflush(f) != 0 || (f != stdout && fclose(f) != 0)) {
		perror(argc == 3 ? argv[2] : "stdout");
		return (1);
	}
	return (0);
}
