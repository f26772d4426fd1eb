/*
 * decode.c -- one x86 instruction through Zydis 4 (ZydisDecodedInstruction,
 * ZydisDecoderDecodeFull): length, branch class, successor, whether it may
 * run inside a block and, if not, why it stops one; the entry points
 * (bytes, a guest address, through the decode cache, struct vpmu_dcache)
 * and mnemonic names.  What the instruction does with its operands
 * (registers, memory, arithmetic, loop counters) is decode_operands.c's.
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
bool
vpmu__decode_wide64(const ZydisDecodedInstruction *in)
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

	if (!vpmu__decode_wide64(in))
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

	if (out->flow != VPMU_FLOW_INDIRECT || !vpmu__decode_wide64(in) ||
	    in->meta.branch_type != ZYDIS_BRANCH_TYPE_NEAR ||
	    (in->mnemonic != ZYDIS_MNEMONIC_JMP && in->mnemonic != ZYDIS_MNEMONIC_CALL) ||
	    in->operand_count_visible != 1 || op[0].type != ZYDIS_OPERAND_TYPE_REGISTER ||
	    ZydisRegisterGetClass(op[0].reg.value) != ZYDIS_REGCLASS_GPR64 ||
	    (r = vpmu__decode_gpr(op[0].reg.value)) < 0)
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

	if (!vpmu__decode_wide64(in) || in->meta.branch_type != ZYDIS_BRANCH_TYPE_NEAR)
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
	vpmu__decode_operands(&in, op, addr, out);

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
		    vpmu__decode_wide64(&in);
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
