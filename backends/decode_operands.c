/*
 * decode_operands.c -- what a decoded x86 instruction does with its
 * operands, for the exact source: the general registers and status flags
 * it writes (vpmu_insn.writes, wflags, uflags), its memory access (mem,
 * wmem, ea_*), the stack slot of PUSH, POP and CALL (stack), the integer
 * operation alu.c works out (alu), loop counters in a register or in
 * memory and their compares (count, mcount, step, cmp), loads (load),
 * the value a PUSH pushes (src).  decode.c calls vpmu__decode_operands()
 * for every instruction it decodes.
 */
#include <stdbool.h>
#include <stdint.h>

#include <Zydis/Zydis.h>

#include "decode.h"

#define VPMU_ARRAY_SIZE(a)	(sizeof(a) / sizeof((a)[0]))

/* x86 register numbers of the 64-bit general registers (RAX 0 .. R15 15). */
static const ZydisRegister gprs[16] = {
	ZYDIS_REGISTER_RAX, ZYDIS_REGISTER_RCX, ZYDIS_REGISTER_RDX, ZYDIS_REGISTER_RBX,
	ZYDIS_REGISTER_RSP, ZYDIS_REGISTER_RBP, ZYDIS_REGISTER_RSI, ZYDIS_REGISTER_RDI,
	ZYDIS_REGISTER_R8, ZYDIS_REGISTER_R9, ZYDIS_REGISTER_R10, ZYDIS_REGISTER_R11,
	ZYDIS_REGISTER_R12, ZYDIS_REGISTER_R13, ZYDIS_REGISTER_R14, ZYDIS_REGISTER_R15,
};

/* The number of the general register that holds reg (64-bit mode), or -1. */
int
vpmu__decode_gpr(unsigned reg)
{
	ZydisRegister big = ZydisRegisterGetLargestEnclosing(ZYDIS_MACHINE_MODE_LONG_64,
	    (ZydisRegister)reg);
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

	if (!vpmu__decode_wide64(in))
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
	return (vpmu__decode_gpr(reg));
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
		    (n = vpmu__decode_gpr(op[i].mem.base)) >= 0)
			out->writes |= (uint16_t)(1u << n);
		if (op[i].type == ZYDIS_OPERAND_TYPE_MEMORY &&
		    op[i].mem.type == ZYDIS_MEMOP_TYPE_MEM && op[i].actions != 0) {
			out->mem = true;
			if (op[i].actions & ZYDIS_OPERAND_ACTION_MASK_WRITE)
				out->wmem = true;
		}
		if (op[i].type == ZYDIS_OPERAND_TYPE_REGISTER &&
		    (op[i].actions & ZYDIS_OPERAND_ACTION_MASK_WRITE) &&
		    (n = vpmu__decode_gpr(op[i].reg.value)) >= 0)
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
		    (r = vpmu__decode_gpr(m->mem.base)) < 0)
			return;
		out->ea_base = (uint8_t)(r + 1);
	}
	if (m->mem.index != ZYDIS_REGISTER_NONE) {
		if (ZydisRegisterGetClass(m->mem.index) != ZYDIS_REGCLASS_GPR64 ||
		    (r = vpmu__decode_gpr(m->mem.index)) < 0) {
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
	    (r = vpmu__decode_gpr(op[0].reg.value)) < 0 || out->ea_size != (rc == ZYDIS_REGCLASS_GPR64 ? 8 : 4))
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
	    (r = vpmu__decode_gpr(op[0].reg.value)) >= 0)
		out->src = (uint8_t)(r + 1);
}

/*
 * Everything above for the decoded instruction in, op (at addr), into
 * out; in this order, as each may read what an earlier one found.
 */
void
vpmu__decode_operands(const ZydisDecodedInstruction *in, const ZydisDecodedOperand *op,
    uint64_t addr, struct vpmu_insn *out)
{
	gpr_use(in, op, out);
	ea_of(in, op, out);
	mcount_of(in, op, out);
	load_of(in, op, out);
	src_of(in, op, out);
	alu_of(in, op, addr, out);
	count_of(out);
}
