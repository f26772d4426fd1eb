/*
 * decode.c -- one x86 instruction through Zydis 4 (ZydisDecoderDecodeFull):
 * length, branch class, successor.
 *
 * Branches are what the retired-branch events of both vendors count
 * (Intel 0xC4/0x00 "BR_INST_RETIRED.ALL_BRANCHES", AMD 0xC2 "Retired
 * Branch Instructions"), taken or not: Zydis's categories COND_BR (Jcc,
 * JCXZ/JECXZ/JRCXZ, LOOP/LOOPE/LOOPNE), UNCOND_BR (JMP near and far,
 * direct and indirect), CALL (near and far), RET (near and far), SYSCALL
 * (SYSCALL, SYSENTER), SYSRET (SYSRET, SYSEXIT), INTERRUPT (INT n, INT3,
 * INTO, INT1), and IRET/IRETD/IRETQ by mnemonic (Zydis files them under
 * RET).  XBEGIN is in COND_BR but starts a transaction, not a branch: it
 * is excluded.  The list is in vpmu_exact(7).
 */
#include <errno.h>
#include <string.h>

#include <Zydis/Zydis.h>
#include <vpmu/source.h>

#include "decode.h"

#define VPMU_ARRAY_SIZE(a)	(sizeof(a) / sizeof((a)[0]))

/* Branch categories and how the successor is found. */
static const struct {
	ZydisInstructionCategory cat;
	uint8_t flow;			/* for the non-relative forms */
	bool	conditional;
} branch_cats[] = {
	{ ZYDIS_CATEGORY_COND_BR,	VPMU_FLOW_INDIRECT,	true },
	{ ZYDIS_CATEGORY_UNCOND_BR,	VPMU_FLOW_INDIRECT,	false },
	{ ZYDIS_CATEGORY_CALL,		VPMU_FLOW_INDIRECT,	false },
	{ ZYDIS_CATEGORY_RET,		VPMU_FLOW_STACK,	false },
	{ ZYDIS_CATEGORY_SYSCALL,	VPMU_FLOW_INDIRECT,	false },
	{ ZYDIS_CATEGORY_SYSRET,	VPMU_FLOW_INDIRECT,	false },
	{ ZYDIS_CATEGORY_INTERRUPT,	VPMU_FLOW_INDIRECT,	false },
};

/* Mnemonics whose category says less than we need. */
#define MN_NOT_BRANCH	0x1		/* in a branch category, but not one */
#define MN_IRET		0x2		/* interrupt return: a far return */
static const struct {
	ZydisMnemonic mnemonic;
	uint8_t flags;
} mnemonics[] = {
	{ ZYDIS_MNEMONIC_XBEGIN,	MN_NOT_BRANCH },
	{ ZYDIS_MNEMONIC_IRET,		MN_IRET },
	{ ZYDIS_MNEMONIC_IRETD,		MN_IRET },
	{ ZYDIS_MNEMONIC_IRETQ,		MN_IRET },
};

/*
 * The near branches the exact source completes in user space (branch.c),
 * with their condition codes (tttn: SDM Vol. 2D, B.1.4.7).  Only in 64-bit
 * code with a 64-bit operand size (a 66h prefix truncates the target on
 * AMD), LOOP with a 64-bit address size (RCX).
 */
static const struct {
	ZydisMnemonic mnemonic;
	uint8_t eval;
	uint8_t cond;
} evals[] = {
	{ ZYDIS_MNEMONIC_JO,	VPMU_EVAL_JCC,	0x0 },
	{ ZYDIS_MNEMONIC_JNO,	VPMU_EVAL_JCC,	0x1 },
	{ ZYDIS_MNEMONIC_JB,	VPMU_EVAL_JCC,	0x2 },
	{ ZYDIS_MNEMONIC_JNB,	VPMU_EVAL_JCC,	0x3 },
	{ ZYDIS_MNEMONIC_JZ,	VPMU_EVAL_JCC,	0x4 },
	{ ZYDIS_MNEMONIC_JNZ,	VPMU_EVAL_JCC,	0x5 },
	{ ZYDIS_MNEMONIC_JBE,	VPMU_EVAL_JCC,	0x6 },
	{ ZYDIS_MNEMONIC_JNBE,	VPMU_EVAL_JCC,	0x7 },
	{ ZYDIS_MNEMONIC_JS,	VPMU_EVAL_JCC,	0x8 },
	{ ZYDIS_MNEMONIC_JNS,	VPMU_EVAL_JCC,	0x9 },
	{ ZYDIS_MNEMONIC_JP,	VPMU_EVAL_JCC,	0xA },
	{ ZYDIS_MNEMONIC_JNP,	VPMU_EVAL_JCC,	0xB },
	{ ZYDIS_MNEMONIC_JL,	VPMU_EVAL_JCC,	0xC },
	{ ZYDIS_MNEMONIC_JNL,	VPMU_EVAL_JCC,	0xD },
	{ ZYDIS_MNEMONIC_JLE,	VPMU_EVAL_JCC,	0xE },
	{ ZYDIS_MNEMONIC_JNLE,	VPMU_EVAL_JCC,	0xF },
	{ ZYDIS_MNEMONIC_JMP,	VPMU_EVAL_JMP,	VPMU_COND_ALWAYS },
	{ ZYDIS_MNEMONIC_LOOP,	VPMU_EVAL_LOOP,	VPMU_COND_ALWAYS },
	{ ZYDIS_MNEMONIC_LOOPE,	VPMU_EVAL_LOOP,	0x4 },
	{ ZYDIS_MNEMONIC_LOOPNE, VPMU_EVAL_LOOP, 0x5 },
	{ ZYDIS_MNEMONIC_JRCXZ,	VPMU_EVAL_JRCXZ, VPMU_COND_ALWAYS },
	{ ZYDIS_MNEMONIC_JECXZ,	VPMU_EVAL_JECXZ, VPMU_COND_ALWAYS },
	{ ZYDIS_MNEMONIC_RET,	VPMU_EVAL_RET,	VPMU_COND_ALWAYS },
};

static const struct {
	enum vpmu_decode_mode mode;
	ZydisMachineMode machine;
	ZydisStackWidth stack;
} modes[] = {
	{ VPMU_DECODE_64, ZYDIS_MACHINE_MODE_LONG_64,	ZYDIS_STACK_WIDTH_64 },
	{ VPMU_DECODE_32, ZYDIS_MACHINE_MODE_LEGACY_32,	ZYDIS_STACK_WIDTH_32 },
	{ VPMU_DECODE_16, ZYDIS_MACHINE_MODE_REAL_16,	ZYDIS_STACK_WIDTH_16 },
};

/*
 * What a block may hold (vpmu_insn.in_block), by category: plain
 * computation and data movement, which on a VMX/SVM host exit to nobody.
 * Everything else ends a block and is single-stepped: control transfers,
 * I/O, system and privileged instructions (HLT, MSRs, CR/DR moves, ...),
 * CPUID and RDPMC (MISC, SYSTEM), fences (LFENCE and MFENCE lose their
 * step on kvm_pvm), flag operations (CLI, STI), vector and x87 code (#NM,
 * #UD when disabled).  String instructions, with REP or not, run inside
 * blocks: a REP string retires once, however many iterations it makes, and
 * a fault in one stops at the handlers' breakpoints (its RCX then tells
 * the iterations left, which the count does not need).  Within the
 * categories, by mnemonic: DIV and IDIV (#DE), POPF (TF, IF), and any
 * write of a segment register (MOV SS, POP SS: an interrupt shadow,
 * descriptor loads).
 */
static const ZydisInstructionCategory block_cats[] = {
	ZYDIS_CATEGORY_BINARY, ZYDIS_CATEGORY_BITBYTE, ZYDIS_CATEGORY_CMOV,
	ZYDIS_CATEGORY_CONVERT, ZYDIS_CATEGORY_DATAXFER, ZYDIS_CATEGORY_DECIMAL,
	ZYDIS_CATEGORY_LOGICAL, ZYDIS_CATEGORY_NOP, ZYDIS_CATEGORY_WIDENOP,
	ZYDIS_CATEGORY_POP, ZYDIS_CATEGORY_PUSH, ZYDIS_CATEGORY_ROTATE,
	ZYDIS_CATEGORY_SEMAPHORE, ZYDIS_CATEGORY_SETCC, ZYDIS_CATEGORY_SHIFT,
	ZYDIS_CATEGORY_STRINGOP,
};
/* Outside them: TZCNT and LZCNT (BSF and BSR where not supported: never #UD). */
static const ZydisMnemonic block_also[] = { ZYDIS_MNEMONIC_TZCNT, ZYDIS_MNEMONIC_LZCNT };
static const ZydisMnemonic block_not[] = {
	ZYDIS_MNEMONIC_DIV, ZYDIS_MNEMONIC_IDIV, ZYDIS_MNEMONIC_POPF,
	ZYDIS_MNEMONIC_POPFD, ZYDIS_MNEMONIC_POPFQ,
};

static bool
in_block(const ZydisDecodedInstruction *in, const ZydisDecodedOperand *op)
{
	size_t i;
	bool cat = in->mnemonic == ZYDIS_MNEMONIC_LEA;

	if (in->attributes & ZYDIS_ATTRIB_IS_PRIVILEGED)
		return (false);
	for (i = 0; i < VPMU_ARRAY_SIZE(block_cats) && !cat; i++)
		cat = in->meta.category == block_cats[i];
	for (i = 0; i < VPMU_ARRAY_SIZE(block_also) && !cat; i++)
		cat = in->mnemonic == block_also[i];
	if (!cat)
		return (false);
	for (i = 0; i < VPMU_ARRAY_SIZE(block_not); i++)
		if (in->mnemonic == block_not[i])
			return (false);
	for (i = 0; i < in->operand_count; i++)
		if (op[i].type == ZYDIS_OPERAND_TYPE_REGISTER &&
		    (op[i].actions & ZYDIS_OPERAND_ACTION_MASK_WRITE) &&
		    ZydisRegisterGetClass(op[i].reg.value) == ZYDIS_REGCLASS_SEGMENT)
			return (false);
	return (true);
}

/*
 * 64-bit code with a 64-bit operand size and no 66h prefix (which AMD
 * honours on near branches and stack operations, truncating them).
 */
static bool
wide64(const ZydisDecodedInstruction *in)
{
	return (in->machine_mode == ZYDIS_MACHINE_MODE_LONG_64 && in->operand_width == 64 &&
	    !(in->attributes & ZYDIS_ATTRIB_HAS_OPERANDSIZE));
}

/* vpmu_insn.eval, cond and pop for a decoded branch. */
static void
eval_of(const ZydisDecodedInstruction *in, const ZydisDecodedOperand *op,
    struct vpmu_insn *out)
{
	size_t i;

	if (!wide64(in))
		return;
	for (i = 0; i < VPMU_ARRAY_SIZE(evals) && evals[i].mnemonic != in->mnemonic; i++)
		;
	if (i == VPMU_ARRAY_SIZE(evals))
		return;
	if (evals[i].eval == VPMU_EVAL_RET) {
		if (out->flow != VPMU_FLOW_STACK || out->far_return || out->slot != 8)
			return;
		if (in->operand_count_visible > 0 && op[0].type == ZYDIS_OPERAND_TYPE_IMMEDIATE)
			out->pop = (uint16_t)op[0].imm.value.u;
	} else if (out->flow != VPMU_FLOW_DIRECT ||
	    (evals[i].eval == VPMU_EVAL_LOOP && in->address_width != 64))
		return;
	out->eval = evals[i].eval;
	out->cond = evals[i].cond;
}

static unsigned
mnemonic_flags(ZydisMnemonic m)
{
	size_t i;

	for (i = 0; i < VPMU_ARRAY_SIZE(mnemonics); i++)
		if (mnemonics[i].mnemonic == m)
			return (mnemonics[i].flags);
	return (0);
}

/* x86 register numbers of the 64-bit general registers (RAX 0 .. R15 15). */
static const ZydisRegister gprs[16] = {
	ZYDIS_REGISTER_RAX, ZYDIS_REGISTER_RCX, ZYDIS_REGISTER_RDX, ZYDIS_REGISTER_RBX,
	ZYDIS_REGISTER_RSP, ZYDIS_REGISTER_RBP, ZYDIS_REGISTER_RSI, ZYDIS_REGISTER_RDI,
	ZYDIS_REGISTER_R8, ZYDIS_REGISTER_R9, ZYDIS_REGISTER_R10, ZYDIS_REGISTER_R11,
	ZYDIS_REGISTER_R12, ZYDIS_REGISTER_R13, ZYDIS_REGISTER_R14, ZYDIS_REGISTER_R15,
};

/* The number of the general register that holds reg (64-bit mode), or -1. */
static int
gpr_of(ZydisRegister reg)
{
	ZydisRegister big = ZydisRegisterGetLargestEnclosing(ZYDIS_MACHINE_MODE_LONG_64, reg);
	int i;

	for (i = 0; i < 16; i++)
		if (gprs[i] == big)
			return (i);
	return (-1);
}

/*
 * What a loop counter's DEC, INC, SUB imm or ADD imm (enum vpmu_alu_op op,
 * imm: the immediate if it has one) takes off it, in the width of mask;
 * false: op is none of them.
 */
static bool
count_step(unsigned op, bool has_imm, uint64_t imm, uint64_t mask, uint64_t *step)
{
	switch (op) {
	case VPMU_ALU_DEC:
		*step = 1;
		break;
	case VPMU_ALU_INC:
		*step = 0 - 1ull;
		break;
	case VPMU_ALU_SUB:
	case VPMU_ALU_ADD:
		if (!has_imm)
			return (false);
		*step = op == VPMU_ALU_SUB ? imm : 0 - imm;
		break;
	default:
		return (false);
	}
	*step &= mask;
	return (true);
}

/*
 * vpmu_insn.count and step: DEC r, INC r, SUB r, imm or ADD r, imm on a
 * 64- or 32-bit general register, the step in that width; and cmp,
 * cmp_with, cmp_imm: CMP of such a register with another of the same
 * width or an immediate.  From the summary alu_of() made.
 */
static void
count_of(struct vpmu_insn *out)
{
	const struct vpmu_alu *a = &out->alu;
	uint64_t mask = a->width == 64 ? UINT64_MAX : 0xFFFFFFFFull, step;
	uint8_t reg;

	if ((a->width != 64 && a->width != 32) || a->op == VPMU_ALU_NONE ||
	    a->a == VPMU_ALU_MEM || a->b == VPMU_ALU_MEM)
		return;
	reg = (uint8_t)(a->a + 1) | (a->width == 32 ? VPMU_COUNT_32 : 0);
	if (a->op == VPMU_ALU_CMP) {
		if (a->b == VPMU_ALU_IMM)
			out->cmp_imm = a->imm & mask;
		else if (a->bwidth == a->width)
			out->cmp_with = (uint8_t)(a->b + 1);
		else
			return;
		out->cmp = reg;
	} else if (count_step(a->op, a->b == VPMU_ALU_IMM, a->imm, mask, &step)) {
		out->count = reg;
		out->step = step;
	}
}

/* vpmu_insn.stack: PUSH, POP or CALL whose one memory access is the stack slot. */
static void
stack_of(const ZydisDecodedInstruction *in, const ZydisDecodedOperand *op,
    struct vpmu_insn *out)
{
	unsigned i;

	if (!wide64(in))
		return;
	for (i = 0; i < in->operand_count_visible; i++)
		if (op[i].type == ZYDIS_OPERAND_TYPE_MEMORY)
			return;			/* PUSH [mem], POP [mem] */
	if (in->mnemonic == ZYDIS_MNEMONIC_PUSH || in->mnemonic == ZYDIS_MNEMONIC_CALL)
		out->stack = -8;
	else if (in->mnemonic == ZYDIS_MNEMONIC_POP &&
	    !(op[0].type == ZYDIS_OPERAND_TYPE_REGISTER && op[0].reg.value == ZYDIS_REGISTER_RSP))
		out->stack = 8;			/* POP RSP loads RSP: not a plain move */
}

/*
 * vpmu_insn.alu: the integer instructions alu.c works out, when every
 * visible operand is a general register, an immediate or the one memory
 * access (VPMU_ALU_MEM; LEA: an address computation, no access).  The condition codes of CMOVcc and SETcc in
 * tttn order.
 */
static const struct {
	ZydisMnemonic mnemonic;
	uint8_t op;
	uint8_t cond;
} alu_ops[] = {
	{ ZYDIS_MNEMONIC_ADD, VPMU_ALU_ADD, 0 },	{ ZYDIS_MNEMONIC_ADC, VPMU_ALU_ADC, 0 },
	{ ZYDIS_MNEMONIC_SUB, VPMU_ALU_SUB, 0 },	{ ZYDIS_MNEMONIC_SBB, VPMU_ALU_SBB, 0 },
	{ ZYDIS_MNEMONIC_CMP, VPMU_ALU_CMP, 0 },	{ ZYDIS_MNEMONIC_AND, VPMU_ALU_AND, 0 },
	{ ZYDIS_MNEMONIC_OR, VPMU_ALU_OR, 0 },		{ ZYDIS_MNEMONIC_XOR, VPMU_ALU_XOR, 0 },
	{ ZYDIS_MNEMONIC_TEST, VPMU_ALU_TEST, 0 },	{ ZYDIS_MNEMONIC_INC, VPMU_ALU_INC, 0 },
	{ ZYDIS_MNEMONIC_DEC, VPMU_ALU_DEC, 0 },	{ ZYDIS_MNEMONIC_NEG, VPMU_ALU_NEG, 0 },
	{ ZYDIS_MNEMONIC_NOT, VPMU_ALU_NOT, 0 },	{ ZYDIS_MNEMONIC_MOV, VPMU_ALU_MOV, 0 },
	{ ZYDIS_MNEMONIC_MOVZX, VPMU_ALU_MOVZX, 0 },	{ ZYDIS_MNEMONIC_MOVSX, VPMU_ALU_MOVSX, 0 },
	{ ZYDIS_MNEMONIC_MOVSXD, VPMU_ALU_MOVSX, 0 },	{ ZYDIS_MNEMONIC_SHL, VPMU_ALU_SHL, 0 },
	{ ZYDIS_MNEMONIC_SHR, VPMU_ALU_SHR, 0 },	{ ZYDIS_MNEMONIC_SAR, VPMU_ALU_SAR, 0 },
	{ ZYDIS_MNEMONIC_ROL, VPMU_ALU_ROL, 0 },	{ ZYDIS_MNEMONIC_ROR, VPMU_ALU_ROR, 0 },
	{ ZYDIS_MNEMONIC_IMUL, VPMU_ALU_IMUL, 0 },	{ ZYDIS_MNEMONIC_LEA, VPMU_ALU_LEA, 0 },
	{ ZYDIS_MNEMONIC_XCHG, VPMU_ALU_XCHG, 0 },
	{ ZYDIS_MNEMONIC_CMOVO, VPMU_ALU_CMOV, 0x0 },	{ ZYDIS_MNEMONIC_CMOVNO, VPMU_ALU_CMOV, 0x1 },
	{ ZYDIS_MNEMONIC_CMOVB, VPMU_ALU_CMOV, 0x2 },	{ ZYDIS_MNEMONIC_CMOVNB, VPMU_ALU_CMOV, 0x3 },
	{ ZYDIS_MNEMONIC_CMOVZ, VPMU_ALU_CMOV, 0x4 },	{ ZYDIS_MNEMONIC_CMOVNZ, VPMU_ALU_CMOV, 0x5 },
	{ ZYDIS_MNEMONIC_CMOVBE, VPMU_ALU_CMOV, 0x6 },	{ ZYDIS_MNEMONIC_CMOVNBE, VPMU_ALU_CMOV, 0x7 },
	{ ZYDIS_MNEMONIC_CMOVS, VPMU_ALU_CMOV, 0x8 },	{ ZYDIS_MNEMONIC_CMOVNS, VPMU_ALU_CMOV, 0x9 },
	{ ZYDIS_MNEMONIC_CMOVP, VPMU_ALU_CMOV, 0xA },	{ ZYDIS_MNEMONIC_CMOVNP, VPMU_ALU_CMOV, 0xB },
	{ ZYDIS_MNEMONIC_CMOVL, VPMU_ALU_CMOV, 0xC },	{ ZYDIS_MNEMONIC_CMOVNL, VPMU_ALU_CMOV, 0xD },
	{ ZYDIS_MNEMONIC_CMOVLE, VPMU_ALU_CMOV, 0xE },	{ ZYDIS_MNEMONIC_CMOVNLE, VPMU_ALU_CMOV, 0xF },
	{ ZYDIS_MNEMONIC_SETO, VPMU_ALU_SET, 0x0 },	{ ZYDIS_MNEMONIC_SETNO, VPMU_ALU_SET, 0x1 },
	{ ZYDIS_MNEMONIC_SETB, VPMU_ALU_SET, 0x2 },	{ ZYDIS_MNEMONIC_SETNB, VPMU_ALU_SET, 0x3 },
	{ ZYDIS_MNEMONIC_SETZ, VPMU_ALU_SET, 0x4 },	{ ZYDIS_MNEMONIC_SETNZ, VPMU_ALU_SET, 0x5 },
	{ ZYDIS_MNEMONIC_SETBE, VPMU_ALU_SET, 0x6 },	{ ZYDIS_MNEMONIC_SETNBE, VPMU_ALU_SET, 0x7 },
	{ ZYDIS_MNEMONIC_SETS, VPMU_ALU_SET, 0x8 },	{ ZYDIS_MNEMONIC_SETNS, VPMU_ALU_SET, 0x9 },
	{ ZYDIS_MNEMONIC_SETP, VPMU_ALU_SET, 0xA },	{ ZYDIS_MNEMONIC_SETNP, VPMU_ALU_SET, 0xB },
	{ ZYDIS_MNEMONIC_SETL, VPMU_ALU_SET, 0xC },	{ ZYDIS_MNEMONIC_SETNL, VPMU_ALU_SET, 0xD },
	{ ZYDIS_MNEMONIC_SETLE, VPMU_ALU_SET, 0xE },	{ ZYDIS_MNEMONIC_SETNLE, VPMU_ALU_SET, 0xF },
};
/* The row of alu_ops for mnemonic m, or VPMU_ARRAY_SIZE(alu_ops). */
static size_t
alu_row(ZydisMnemonic m)
{
	size_t i;

	for (i = 0; i < VPMU_ARRAY_SIZE(alu_ops) && alu_ops[i].mnemonic != m; i++)
		;
	return (i);
}

/* enum vpmu_alu_op of mnemonic m; VPMU_ALU_NONE if alu.c does not model it. */
static unsigned
alu_op_of(ZydisMnemonic m)
{
	size_t i = alu_row(m);

	return (i < VPMU_ARRAY_SIZE(alu_ops) ? alu_ops[i].op : VPMU_ALU_NONE);
}

#define STATUS_FLAGS	(ZYDIS_CPUFLAG_CF | ZYDIS_CPUFLAG_PF | ZYDIS_CPUFLAG_AF | \
			 ZYDIS_CPUFLAG_ZF | ZYDIS_CPUFLAG_SF | ZYDIS_CPUFLAG_OF)

/* A general register operand as vpmu_alu numbers it, and its width; -1 if none. */
static int
alu_reg(ZydisRegister reg, unsigned *width)
{
	static const ZydisRegister high[4] = {
		ZYDIS_REGISTER_AH, ZYDIS_REGISTER_CH, ZYDIS_REGISTER_DH, ZYDIS_REGISTER_BH,
	};
	ZydisRegisterClass c = ZydisRegisterGetClass(reg);
	int i;

	if (c != ZYDIS_REGCLASS_GPR8 && c != ZYDIS_REGCLASS_GPR16 &&
	    c != ZYDIS_REGCLASS_GPR32 && c != ZYDIS_REGCLASS_GPR64)
		return (-1);
	*width = ZydisRegisterGetWidth(ZYDIS_MACHINE_MODE_LONG_64, reg);
	for (i = 0; i < 4; i++)
		if (reg == high[i])
			return (i | VPMU_ALU_HIGH);
	return (gpr_of(reg));
}

/*
 * An operand as vpmu_alu numbers it (a register, or VPMU_ALU_MEM for the
 * access ea_of() found), and its width; -1 if neither.
 */
static int
alu_operand(const ZydisDecodedOperand *o, const struct vpmu_insn *out, unsigned *width)
{
	if (o->type == ZYDIS_OPERAND_TYPE_REGISTER)
		return (alu_reg(o->reg.value, width));
	if (o->type != ZYDIS_OPERAND_TYPE_MEMORY || o->mem.type != ZYDIS_MEMOP_TYPE_MEM ||
	    out->ea_size == 0 || out->ea_size * 8u != o->size)
		return (-1);
	*width = o->size;
	return (VPMU_ALU_MEM);
}

static void
alu_of(const ZydisDecodedInstruction *in, const ZydisDecodedOperand *op, uint64_t addr,
    struct vpmu_insn *out)
{
	struct vpmu_alu a = { 0 };
	unsigned i, n = in->operand_count_visible, w = 0, bw = 0;
	ZyanU64 abs;
	int r;

	/* LOCK: an atomic access, or #UD on a register (never run by alu_host.c) */
	if ((i = (unsigned)alu_row(in->mnemonic)) == VPMU_ARRAY_SIZE(alu_ops) ||
	    in->machine_mode != ZYDIS_MACHINE_MODE_LONG_64 || (in->attributes & ZYDIS_ATTRIB_HAS_LOCK) ||
	    n < 1 || n > 3 || (r = alu_operand(&op[0], out, &w)) < 0 ||
	    (r == VPMU_ALU_MEM && alu_ops[i].op == VPMU_ALU_LEA))
		return;
	a.op = alu_ops[i].op;
	a.cond = alu_ops[i].cond;
	a.a = (uint8_t)r;
	a.width = (uint8_t)w;
	a.b = VPMU_ALU_NOREG;
	a.index = VPMU_ALU_NOREG;
	if (a.op == VPMU_ALU_LEA) {
		const ZydisDecodedOperandMem *m = &op[1].mem;

		if (n != 2 || op[1].type != ZYDIS_OPERAND_TYPE_MEMORY ||
		    m->type != ZYDIS_MEMOP_TYPE_AGEN)
			return;
		a.awidth = (uint8_t)in->address_width;
		a.scale = m->scale;
		a.imm = (uint64_t)m->disp.value;
		if (m->base == ZYDIS_REGISTER_RIP || m->base == ZYDIS_REGISTER_EIP) {
			if (m->index != ZYDIS_REGISTER_NONE ||
			    !ZYAN_SUCCESS(ZydisCalcAbsoluteAddress(in, &op[1], addr, &abs)))
				return;
			a.imm = abs;
		} else if (m->base != ZYDIS_REGISTER_NONE &&
		    (r = alu_reg(m->base, &bw)) < 0)
			return;
		else if (m->base != ZYDIS_REGISTER_NONE)
			a.b = (uint8_t)r;
		if (m->index != ZYDIS_REGISTER_NONE) {
			if ((r = alu_reg(m->index, &bw)) < 0)
				return;
			a.index = (uint8_t)r;
		}
		out->alu = a;
		return;
	}
	for (i = 1; i < n; i++)
		if (op[i].type == ZYDIS_OPERAND_TYPE_IMMEDIATE) {
			if (i != n - 1)
				return;
			a.imm = op[i].imm.value.u;
		} else if (alu_operand(&op[i], out, &bw) < 0)
			return;
	if (n >= 2) {
		a.b = op[1].type == ZYDIS_OPERAND_TYPE_IMMEDIATE ? VPMU_ALU_IMM :
		    (uint8_t)alu_operand(&op[1], out, &bw);
		a.bwidth = (uint8_t)(a.b == VPMU_ALU_IMM ? w : bw);
	}
	/* XCHG with memory is locked: not a plain load and store */
	if (a.op == VPMU_ALU_XCHG && (a.a == VPMU_ALU_MEM || a.b == VPMU_ALU_MEM))
		return;
	if (a.op == VPMU_ALU_IMUL) {
		/* IMUL r/m (RDX:RAX) is not modelled; IMUL r, r, imm is IMUL3 */
		if (n == 1 || (n == 3 && (a.b == VPMU_ALU_IMM ||
		    op[2].type != ZYDIS_OPERAND_TYPE_IMMEDIATE)))
			return;
		if (n == 3)
			a.op = VPMU_ALU_IMUL3;
	} else if (n == 3)
		return;
	out->alu = a;
}

/* vpmu_insn.mem, wmem, writes, stack and the flags: every operand, hidden ones included. */
static void
gpr_use(const ZydisDecodedInstruction *in, const ZydisDecodedOperand *op,
    struct vpmu_insn *out)
{
	bool string = in->meta.category == ZYDIS_CATEGORY_STRINGOP ||
	    in->meta.category == ZYDIS_CATEGORY_IOSTRINGOP;
	unsigned i;
	int n;

	for (i = 0; i < in->operand_count; i++) {
		/*
		 * A string instruction moves its pointers (RSI, RDI), which
		 * Zydis's operands do not say for SCAS and CMPS; REP counts RCX.
		 */
		if (string && op[i].type == ZYDIS_OPERAND_TYPE_MEMORY &&
		    (n = gpr_of(op[i].mem.base)) >= 0)
			out->writes |= (uint16_t)(1u << n);
		if (op[i].type == ZYDIS_OPERAND_TYPE_MEMORY &&
		    op[i].mem.type == ZYDIS_MEMOP_TYPE_MEM && op[i].actions != 0) {
			out->mem = true;
			if (op[i].actions & ZYDIS_OPERAND_ACTION_MASK_WRITE)
				out->wmem = true;
		}
		if (op[i].type == ZYDIS_OPERAND_TYPE_REGISTER &&
		    (op[i].actions & ZYDIS_OPERAND_ACTION_MASK_WRITE) &&
		    (n = gpr_of(op[i].reg.value)) >= 0)
			out->writes |= (uint16_t)(1u << n);
	}
	if (string && (in->attributes & (ZYDIS_ATTRIB_HAS_REP | ZYDIS_ATTRIB_HAS_REPE |
	    ZYDIS_ATTRIB_HAS_REPNE)))
		out->writes |= 1u << 1;		/* RCX */
	stack_of(in, op, out);
	if (out->stack < 0)
		out->wmem = false;		/* the slot PUSH and CALL write */
	if (in->cpu_flags != NULL) {
		out->wflags = (uint16_t)((in->cpu_flags->modified | in->cpu_flags->set_0 |
		    in->cpu_flags->set_1 | in->cpu_flags->undefined) & STATUS_FLAGS);
		out->uflags = (uint16_t)(in->cpu_flags->undefined & STATUS_FLAGS);
	}
}

/* vpmu_insn.ea_* from the explicit memory operand m. */
static void
ea_set(const ZydisDecodedOperand *m, struct vpmu_insn *out)
{
	int r;

	if (m->size == 0 || m->size > 8 * 64)
		return;
	if (m->mem.base == ZYDIS_REGISTER_RIP)
		out->ea_base = VPMU_EA_RIP;
	else if (m->mem.base != ZYDIS_REGISTER_NONE) {
		if (ZydisRegisterGetClass(m->mem.base) != ZYDIS_REGCLASS_GPR64 ||
		    (r = gpr_of(m->mem.base)) < 0)
			return;
		out->ea_base = (uint8_t)(r + 1);
	}
	if (m->mem.index != ZYDIS_REGISTER_NONE) {
		if (ZydisRegisterGetClass(m->mem.index) != ZYDIS_REGCLASS_GPR64 ||
		    (r = gpr_of(m->mem.index)) < 0) {
			out->ea_base = 0;
			return;
		}
		out->ea_index = (uint8_t)(r + 1);
	}
	out->ea_scale = m->mem.scale != 0 ? m->mem.scale : 1;
	out->ea_disp = m->mem.disp.value;
	out->ea_write = (m->actions & ZYDIS_OPERAND_ACTION_MASK_WRITE) != 0;
	out->ea_seg = m->mem.segment == ZYDIS_REGISTER_FS || m->mem.segment == ZYDIS_REGISTER_GS;
	out->ea_size = (uint8_t)((m->size + 7) / 8);
}

/*
 * vpmu_insn.ea_*: the one explicit memory operand, when it is the only
 * access; or a near CALL's through memory (the push is CALL's own).
 */
static void
ea_of(const ZydisDecodedInstruction *in, const ZydisDecodedOperand *op, struct vpmu_insn *out)
{
	const ZydisDecodedOperand *m = NULL;
	unsigned i, nmem = 0;

	if (in->machine_mode != ZYDIS_MACHINE_MODE_LONG_64 || in->address_width != 64 ||
	    in->meta.category == ZYDIS_CATEGORY_STRINGOP ||
	    in->meta.category == ZYDIS_CATEGORY_IOSTRINGOP)
		return;
	if (in->mnemonic == ZYDIS_MNEMONIC_CALL && in->meta.branch_type == ZYDIS_BRANCH_TYPE_NEAR &&
	    in->operand_count_visible == 1 && op[0].type == ZYDIS_OPERAND_TYPE_MEMORY &&
	    op[0].mem.type == ZYDIS_MEMOP_TYPE_MEM) {
		ea_set(&op[0], out);
		return;
	}
	for (i = 0; i < in->operand_count; i++)
		if (op[i].type == ZYDIS_OPERAND_TYPE_MEMORY && op[i].mem.type == ZYDIS_MEMOP_TYPE_MEM &&
		    op[i].actions != 0) {
			nmem++;
			m = i < in->operand_count_visible ? &op[i] : NULL;
		}
	if (nmem == 1 && m != NULL)
		ea_set(m, out);
}

/*
 * vpmu_insn.mcount and step: DEC, INC, SUB imm or ADD imm whose
 * destination is the memory operand ea_of() found (no LOCK needed: one
 * vCPU's own counter), 64 or 32 bits.
 */
static void
mcount_of(const ZydisDecodedInstruction *in, const ZydisDecodedOperand *op, struct vpmu_insn *out)
{
	bool imm = in->operand_count_visible == 2 && op[1].type == ZYDIS_OPERAND_TYPE_IMMEDIATE;
	uint64_t step;

	if ((out->ea_size != 8 && out->ea_size != 4) || op[0].type != ZYDIS_OPERAND_TYPE_MEMORY ||
	    !out->ea_write ||
	    !count_step(alu_op_of(in->mnemonic), imm, imm ? op[1].imm.value.u : 0,
	    out->ea_size == 8 ? UINT64_MAX : 0xFFFFFFFFull, &step))
		return;
	out->mcount = out->ea_size;
	out->step = step;
}

/*
 * vpmu_insn.load: MOV r64, m64 or MOV r32, m32, the memory operand the one
 * ea_of() found (a read); and vpmu_insn.nop: NOP in any of its lengths.
 */
static void
load_of(const ZydisDecodedInstruction *in, const ZydisDecodedOperand *op, struct vpmu_insn *out)
{
	ZydisRegisterClass rc;
	int r;

	out->nop = in->mnemonic == ZYDIS_MNEMONIC_NOP;
	if (in->mnemonic != ZYDIS_MNEMONIC_MOV || in->operand_count_visible != 2 ||
	    op[0].type != ZYDIS_OPERAND_TYPE_REGISTER || op[1].type != ZYDIS_OPERAND_TYPE_MEMORY ||
	    out->ea_size == 0 || out->ea_write)
		return;
	rc = ZydisRegisterGetClass(op[0].reg.value);
	if ((rc != ZYDIS_REGCLASS_GPR64 && rc != ZYDIS_REGCLASS_GPR32) ||
	    (r = gpr_of(op[0].reg.value)) < 0 || out->ea_size != (rc == ZYDIS_REGCLASS_GPR64 ? 8 : 4))
		return;
	out->load = (uint8_t)(r + 1) | (rc == ZYDIS_REGCLASS_GPR32 ? VPMU_COUNT_32 : 0);
}

/* vpmu_insn.src: the value PUSH r64 or PUSH imm (vpmu_insn.stack -8) pushes. */
static void
src_of(const ZydisDecodedInstruction *in, const ZydisDecodedOperand *op, struct vpmu_insn *out)
{
	int r;

	if (in->mnemonic != ZYDIS_MNEMONIC_PUSH || out->stack != -8 ||
	    in->operand_count_visible != 1)
		return;
	if (op[0].type == ZYDIS_OPERAND_TYPE_IMMEDIATE) {
		out->src = VPMU_SRC_IMM;
		out->src_imm = (uint64_t)op[0].imm.value.s;
	} else if (op[0].type == ZYDIS_OPERAND_TYPE_REGISTER &&
	    ZydisRegisterGetClass(op[0].reg.value) == ZYDIS_REGCLASS_GPR64 &&
	    (r = gpr_of(op[0].reg.value)) >= 0)
		out->src = (uint8_t)(r + 1);
}

static bool
writes_sp(ZydisMachineMode machine, const ZydisDecodedInstruction *in,
    const ZydisDecodedOperand *op)
{
	unsigned i;

	for (i = 0; i < in->operand_count; i++)
		if (op[i].type == ZYDIS_OPERAND_TYPE_REGISTER &&
		    (op[i].actions & ZYDIS_OPERAND_ACTION_MASK_WRITE) &&
		    ZydisRegisterGetLargestEnclosing(machine, op[i].reg.value) ==
		    (machine == ZYDIS_MACHINE_MODE_LONG_64 ? ZYDIS_REGISTER_RSP :
		    ZYDIS_REGISTER_ESP))
			return (true);
	return (false);
}

/*
 * Why an instruction that is not in_block ends a block (vpmu_insn.stop,
 * enum vpmu_step_why), before its branch kind is known: I/O, fences, flag
 * operations, DIV, segment writes, vector and x87 code, privileged and
 * system instructions.
 */
static uint8_t
stop_of(const ZydisDecodedInstruction *in, const ZydisDecodedOperand *op)
{
	ZydisRegisterClass rc;
	size_t i;

	if (in->meta.category == ZYDIS_CATEGORY_IO ||
	    in->meta.category == ZYDIS_CATEGORY_IOSTRINGOP)
		return (VPMU_STEP_IO);
	if (in->mnemonic == ZYDIS_MNEMONIC_LFENCE || in->mnemonic == ZYDIS_MNEMONIC_MFENCE ||
	    in->mnemonic == ZYDIS_MNEMONIC_SFENCE ||
	    in->meta.category == ZYDIS_CATEGORY_SERIALIZE)
		return (VPMU_STEP_FENCE);
	if (in->meta.category == ZYDIS_CATEGORY_FLAGOP || in->mnemonic == ZYDIS_MNEMONIC_POPF ||
	    in->mnemonic == ZYDIS_MNEMONIC_POPFD || in->mnemonic == ZYDIS_MNEMONIC_POPFQ)
		return (VPMU_STEP_FLAGS);
	if (in->mnemonic == ZYDIS_MNEMONIC_DIV || in->mnemonic == ZYDIS_MNEMONIC_IDIV)
		return (VPMU_STEP_DIV);
	for (i = 0; i < in->operand_count; i++) {
		if (op[i].type != ZYDIS_OPERAND_TYPE_REGISTER)
			continue;
		rc = ZydisRegisterGetClass(op[i].reg.value);
		if (rc == ZYDIS_REGCLASS_SEGMENT && (op[i].actions & ZYDIS_OPERAND_ACTION_MASK_WRITE))
			return (VPMU_STEP_SEGMENT);
		if (rc == ZYDIS_REGCLASS_XMM || rc == ZYDIS_REGCLASS_YMM ||
		    rc == ZYDIS_REGCLASS_ZMM || rc == ZYDIS_REGCLASS_X87 ||
		    rc == ZYDIS_REGCLASS_MMX || rc == ZYDIS_REGCLASS_MASK)
			return (VPMU_STEP_VECTOR);
	}
	if (in->attributes & ZYDIS_ATTRIB_IS_PRIVILEGED)
		return (VPMU_STEP_PRIVILEGED);
	if (in->meta.category == ZYDIS_CATEGORY_SYSTEM || in->meta.category == ZYDIS_CATEGORY_MISC ||
	    in->meta.category == ZYDIS_CATEGORY_XSAVE || in->meta.category == ZYDIS_CATEGORY_RDRAND ||
	    in->meta.category == ZYDIS_CATEGORY_RDSEED)
		return (VPMU_STEP_SYSTEM);
	return (VPMU_STEP_OTHER);
}

/* A branch's stop (vpmu_insn.stop), from what decode_one() found. */
static uint8_t
branch_stop(const ZydisDecodedInstruction *in, const struct vpmu_insn *out)
{
	bool call = in->mnemonic == ZYDIS_MNEMONIC_CALL, jmp = in->mnemonic == ZYDIS_MNEMONIC_JMP;

	if (out->far_return || out->to_user || in->meta.branch_type == ZYDIS_BRANCH_TYPE_FAR)
		return (VPMU_STEP_FAR);
	switch (out->flow) {
	case VPMU_FLOW_DIRECT:
		return (out->conditional ? VPMU_STEP_JCC : call ? VPMU_STEP_CALL :
		    jmp ? VPMU_STEP_JMP : VPMU_STEP_OTHER);
	case VPMU_FLOW_STACK:
		return (VPMU_STEP_RET);
	default:
		return (call ? VPMU_STEP_CALL_INDIRECT : jmp ? VPMU_STEP_JMP_INDIRECT :
		    VPMU_STEP_FAR);
	}
}

/*
 * vpmu_insn.ind: a near JMP or CALL through a general register (64-bit
 * code, 64-bit operand size): 1 + the register, whose value is the target.
 */
static void
ind_of(const ZydisDecodedInstruction *in, const ZydisDecodedOperand *op,
    struct vpmu_insn *out)
{
	int r;

	if (out->flow != VPMU_FLOW_INDIRECT || !wide64(in) ||
	    in->meta.branch_type != ZYDIS_BRANCH_TYPE_NEAR ||
	    (in->mnemonic != ZYDIS_MNEMONIC_JMP && in->mnemonic != ZYDIS_MNEMONIC_CALL) ||
	    in->operand_count_visible != 1 || op[0].type != ZYDIS_OPERAND_TYPE_REGISTER ||
	    ZydisRegisterGetClass(op[0].reg.value) != ZYDIS_REGCLASS_GPR64 ||
	    (r = gpr_of(op[0].reg.value)) < 0)
		return;
	out->ind = (uint8_t)(r + 1);
}

/*
 * vpmu_insn.eval for a near JMP through the one memory operand ea_of()
 * found (VPMU_EVAL_JMP_MEM), and for a near CALL with a relative target,
 * through a register (ind_of()) or through such a memory operand
 * (VPMU_EVAL_CALL).
 */
static void
ind_eval_of(const ZydisDecodedInstruction *in, const ZydisDecodedOperand *op,
    struct vpmu_insn *out)
{
	bool mem = out->flow == VPMU_FLOW_INDIRECT && in->operand_count_visible == 1 &&
	    op[0].type == ZYDIS_OPERAND_TYPE_MEMORY && out->ea_size == 8 && !out->ea_seg &&
	    !out->ea_write;

	if (!wide64(in) || in->meta.branch_type != ZYDIS_BRANCH_TYPE_NEAR)
		return;
	if (in->mnemonic == ZYDIS_MNEMONIC_JMP && mem)
		out->eval = VPMU_EVAL_JMP_MEM;
	else if (in->mnemonic == ZYDIS_MNEMONIC_CALL &&
	    (out->flow == VPMU_FLOW_DIRECT || out->ind != 0 || mem))
		out->eval = VPMU_EVAL_CALL;
	else
		return;
	out->cond = VPMU_COND_ALWAYS;
}

static int decode_one(enum vpmu_decode_mode mode, uint64_t addr, const ZydisDecodedInstruction *in,
    const ZydisDecodedOperand *op, struct vpmu_insn *out);

int
vpmu__decode(enum vpmu_decode_mode mode, uint64_t addr, const uint8_t *buf, size_t len,
    struct vpmu_insn *out)
{
	ZydisDecoder dec;
	ZydisDecodedInstruction in;
	ZydisDecodedOperand op[ZYDIS_MAX_OPERAND_COUNT];
	ZyanStatus st;

	if (buf == NULL || out == NULL || (unsigned)mode >= VPMU_ARRAY_SIZE(modes))
		return (EINVAL);
	memset(out, 0, sizeof(*out));
	if (ZYAN_FAILED(ZydisDecoderInit(&dec, modes[mode].machine, modes[mode].stack)))
		return (EINVAL);
	st = ZydisDecoderDecodeFull(&dec, buf, len, &in, op);
	if (st == ZYDIS_STATUS_NO_MORE_DATA)
		return (ENODATA);
	if (ZYAN_FAILED(st))
		return (EILSEQ);
	decode_one(mode, addr, &in, op, out);
	memcpy(out->bytes, buf, out->len);
	if (out->branch && !out->follow)
		out->stop = branch_stop(&in, out);
	else if (!out->in_block && !out->follow)
		out->stop = stop_of(&in, op);
	return (0);
}

/* The decoded instruction in, op into out (a branch's kind last). */
static int
decode_one(enum vpmu_decode_mode mode, uint64_t addr, const ZydisDecodedInstruction *inp,
    const ZydisDecodedOperand *op, struct vpmu_insn *out)
{
	ZydisDecodedInstruction in = *inp;
	ZyanU64 target;
	unsigned mf;
	size_t i;

	out->len = in.length;
	out->mnemonic = in.mnemonic;
	out->flow = VPMU_FLOW_NEXT;
	out->writes_sp = writes_sp(modes[mode].machine, &in, op);
	out->rep_string = (in.meta.category == ZYDIS_CATEGORY_STRINGOP ||
	    in.meta.category == ZYDIS_CATEGORY_IOSTRINGOP) &&
	    (in.attributes & (ZYDIS_ATTRIB_HAS_REP | ZYDIS_ATTRIB_HAS_REPE |
	    ZYDIS_ATTRIB_HAS_REPNE)) != 0;

	out->in_block = in_block(&in, op);
	gpr_use(&in, op, out);
	ea_of(&in, op, out);
	mcount_of(&in, op, out);
	load_of(&in, op, out);
	src_of(&in, op, out);
	alu_of(&in, op, addr, out);
	count_of(out);

	if (in.mnemonic == ZYDIS_MNEMONIC_POPF || in.mnemonic == ZYDIS_MNEMONIC_POPFD ||
	    in.mnemonic == ZYDIS_MNEMONIC_POPFQ)
		out->flags_at = 1;
	mf = mnemonic_flags(in.mnemonic);
	if (mf & MN_NOT_BRANCH)
		return (0);
	if (mf & MN_IRET) {
		out->branch = true;
		out->flow = VPMU_FLOW_STACK;
		out->far_return = true;
		out->iret = true;
		out->slot = in.operand_width / 8;
		out->flags_at = (uint8_t)(1 + 2 * out->slot);	/* RIP, CS, RFLAGS */
		return (0);
	}
	for (i = 0; i < VPMU_ARRAY_SIZE(branch_cats); i++) {
		if (branch_cats[i].cat != in.meta.category)
			continue;
		out->branch = true;
		out->flow = branch_cats[i].flow;
		out->conditional = branch_cats[i].conditional;
		out->to_user = in.meta.category == ZYDIS_CATEGORY_SYSRET;
		if (out->flow == VPMU_FLOW_STACK) {
			out->slot = in.operand_width / 8;
			out->far_return = in.meta.branch_type == ZYDIS_BRANCH_TYPE_FAR;
		} else if ((in.attributes & ZYDIS_ATTRIB_IS_RELATIVE) &&
		    in.operand_count_visible > 0 &&
		    op[0].type == ZYDIS_OPERAND_TYPE_IMMEDIATE &&	/* not [rip + d] */
		    ZYAN_SUCCESS(ZydisCalcAbsoluteAddress(&in, &op[0], addr, &target))) {
			out->flow = VPMU_FLOW_DIRECT;
			/*
			 * Zydis wraps a 16-bit IP; EIP wraps too (SDM Vol. 2A,
			 * JMP, Jcc: the sum is in the operand size).
			 */
			if (modes[mode].machine != ZYDIS_MACHINE_MODE_LONG_64 &&
			    in.operand_width == 32)
				target &= 0xFFFFFFFFull;
			out->target = target;
		}
		eval_of(&in, op, out);
		ind_of(&in, op, out);
		ind_eval_of(&in, op, out);
		out->follow = out->flow == VPMU_FLOW_DIRECT && !out->conditional &&
		    (in.mnemonic == ZYDIS_MNEMONIC_JMP || in.mnemonic == ZYDIS_MNEMONIC_CALL) &&
		    wide64(&in);
		break;
	}
	return (0);
}

int
vpmu__decode_gva(const struct vpmu_gmem *mem, const struct vpmu_gmem_paging *pg,
    enum vpmu_decode_mode mode, uint64_t gva, struct vpmu_insn *out, uint64_t *bad)
{
	return (vpmu__decode_gva_cached(NULL, mem, pg, mode, gva, out, bad));
}

int
vpmu__decode_gva_cached(struct vpmu_dcache *c, const struct vpmu_gmem *mem,
    const struct vpmu_gmem_paging *pg, enum vpmu_decode_mode mode, uint64_t gva,
    struct vpmu_insn *out, uint64_t *bad)
{
	uint8_t buf[VPMU_INSN_MAX];
	int got, error;
	unsigned i = (unsigned)(gva ^ gva >> 8) & (VPMU_DCACHE_SIZE - 1);

	got = vpmu__gmem_read_gva_memo(mem, pg, c != NULL ? &c->memo : NULL, gva, buf, sizeof(buf));
	if (c != NULL && got > 0 && c->e[i].gva == gva && c->e[i].mode == (uint8_t)mode + 1 &&
	    (unsigned)got >= c->e[i].in.len && memcmp(c->e[i].bytes, buf, c->e[i].in.len) == 0) {
		c->hits++;
		*out = c->e[i].in;
		return (0);
	}
	error = got > 0 ? vpmu__decode(mode, gva, buf, (size_t)got, out) : EFAULT;
	if (error != 0 && bad != NULL)
		*bad = error == EILSEQ ? gva : gva + (uint64_t)(got > 0 ? got : 0);
	if (c != NULL && error == 0) {
		c->misses++;
		c->e[i].gva = gva;
		c->e[i].mode = (uint8_t)mode + 1;
		memcpy(c->e[i].bytes, buf, out->len);
		c->e[i].in = *out;
	}
	return (error);
}

const char *
vpmu__decode_name(unsigned mnemonic)
{
	const char *s = ZydisMnemonicGetString((ZydisMnemonic)mnemonic);

	return (s != NULL ? s : "?");
}
