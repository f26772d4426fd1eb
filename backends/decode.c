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
 * #UD when disabled), REP strings.  Within the categories, by mnemonic:
 * DIV and IDIV (#DE), POPF (TF, IF), and any write of a segment register
 * (MOV SS, POP SS: an interrupt shadow, descriptor loads).
 */
static const ZydisInstructionCategory block_cats[] = {
	ZYDIS_CATEGORY_BINARY, ZYDIS_CATEGORY_BITBYTE, ZYDIS_CATEGORY_CMOV,
	ZYDIS_CATEGORY_CONVERT, ZYDIS_CATEGORY_DATAXFER, ZYDIS_CATEGORY_DECIMAL,
	ZYDIS_CATEGORY_LOGICAL, ZYDIS_CATEGORY_NOP, ZYDIS_CATEGORY_WIDENOP,
	ZYDIS_CATEGORY_POP, ZYDIS_CATEGORY_PUSH, ZYDIS_CATEGORY_ROTATE,
	ZYDIS_CATEGORY_SEMAPHORE, ZYDIS_CATEGORY_SETCC, ZYDIS_CATEGORY_SHIFT,
	ZYDIS_CATEGORY_STRINGOP,
};
static const ZydisMnemonic block_not[] = {
	ZYDIS_MNEMONIC_DIV, ZYDIS_MNEMONIC_IDIV, ZYDIS_MNEMONIC_POPF,
	ZYDIS_MNEMONIC_POPFD, ZYDIS_MNEMONIC_POPFQ,
};

static bool
in_block(const ZydisDecodedInstruction *in, const ZydisDecodedOperand *op, bool rep)
{
	size_t i;
	bool cat = in->mnemonic == ZYDIS_MNEMONIC_LEA;

	if (rep || (in->attributes & ZYDIS_ATTRIB_IS_PRIVILEGED))
		return (false);
	for (i = 0; i < VPMU_ARRAY_SIZE(block_cats) && !cat; i++)
		cat = in->meta.category == block_cats[i];
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

int
vpmu__decode(enum vpmu_decode_mode mode, uint64_t addr, const uint8_t *buf, size_t len,
    struct vpmu_insn *out)
{
	ZydisDecoder dec;
	ZydisDecodedInstruction in;
	ZydisDecodedOperand op[ZYDIS_MAX_OPERAND_COUNT];
	ZyanStatus st;
	ZyanU64 target;
	unsigned mf;
	size_t i;

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

	out->len = in.length;
	out->mnemonic = in.mnemonic;
	out->flow = VPMU_FLOW_NEXT;
	out->writes_sp = writes_sp(modes[mode].machine, &in, op);
	out->rep_string = (in.meta.category == ZYDIS_CATEGORY_STRINGOP ||
	    in.meta.category == ZYDIS_CATEGORY_IOSTRINGOP) &&
	    (in.attributes & (ZYDIS_ATTRIB_HAS_REP | ZYDIS_ATTRIB_HAS_REPE |
	    ZYDIS_ATTRIB_HAS_REPNE)) != 0;

	out->in_block = in_block(&in, op, out->rep_string);

	mf = mnemonic_flags(in.mnemonic);
	if (mf & MN_NOT_BRANCH)
		return (0);
	if (mf & MN_IRET) {
		out->branch = true;
		out->flow = VPMU_FLOW_STACK;
		out->far_return = true;
		out->iret = true;
		out->slot = in.operand_width / 8;
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
		    ZYAN_SUCCESS(ZydisCalcAbsoluteAddress(&in, &op[0], addr, &target))) {
			out->flow = VPMU_FLOW_DIRECT;
			out->target = target;
		}
		break;
	}
	return (0);
}

int
vpmu__decode_gva(const struct vpmu_gmem *mem, const struct vpmu_gmem_paging *pg,
    enum vpmu_decode_mode mode, uint64_t gva, struct vpmu_insn *out, uint64_t *bad)
{
	uint8_t buf[VPMU_INSN_MAX];
	int got, error;

	got = vpmu__gmem_read_gva(mem, pg, gva, buf, sizeof(buf));
	error = got > 0 ? vpmu__decode(mode, gva, buf, (size_t)got, out) : EFAULT;
	if (error != 0 && bad != NULL)
		*bad = error == EILSEQ ? gva : gva + (uint64_t)(got > 0 ? got : 0);
	return (error);
}

const char *
vpmu__decode_name(unsigned mnemonic)
{
	const char *s = ZydisMnemonicGetString((ZydisMnemonic)mnemonic);

	return (s != NULL ? s : "?");
}
