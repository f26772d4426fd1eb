/*
 * fuzz_exact.c -- libFuzzer target for the exact source's decoder
 * (backends/decode.c), the guest page walk and frame-pointer walk
 * (libvpmu/gmem.c), and the source's per-exit reconstruction
 * (backends/exact.c, alu.c, branch.c) over hostile guest memory.
 *
 * Input, little-endian:
 *   0   cfg: bits 1:0 the paging (0 off, 1 32-bit, 2 PAE, 3 IA-32e),
 *       bit 2 CR4.LA57, bit 3 CR4.PSE, bit 4 CS.L (64-bit code),
 *       bit 5 block mode, bit 6 the VMM takes completed branches and
 *       loops (VPMU_EXITF_SETREGS, VPMU_EXITF_SETGPRS), bit 7 EFER.NXE
 *   1   the number of slots (0..7); 2: the CPL (bits 1:0), RFLAGS.AC
 *       (bit 2), CR4.SMAP (bit 3); 3: the call-chain depth (0..16)
 *   4   CR3, RIP, RSP, RBP, RCX (8 bytes each); the IDT's base bits 27:4
 *       (3 bytes), its limit 0xFFF unless the fourth byte is 0
 *   48  the slots: gpa (8 bytes), size - 1 (2 bytes), n (2 bytes), then
 *       its first n bytes (the rest of the slot is zero)
 *   ... the exits (at most 16): one byte of kind, one of argument each
 *       (drive(); kind bit 3: PMC0 is read after it, as after the last)
 *
 * Each slot is a malloc'd buffer of exactly its size, so that ASan sees
 * any read outside the registered memory.  Checked, beyond ASan/UBSan:
 *   - the decoder against Zydis called here on the same bytes (a
 *     buffer of exactly the bytes given): the same verdict and length,
 *     the length 1..15 and never more than the bytes given; one byte
 *     fewer is ENODATA; the branch classification from Zydis's
 *     category, a direct branch's target next address + rel in the
 *     operand width; and the fields that imply each other;
 *   - alu.c's summary of the instruction (64-bit code) on registers
 *     from the first slot's bytes 16 on: what it does not write stays as
 *     it was, and the result and flags of ADD, SUB, CMP, AND, OR, XOR,
 *     TEST, INC, DEC, NEG, NOT and MOV, where alu.c knows them, are what
 *     the SDM's definitions give, worked out here;
 *   - the decode through the page walk (vpmu__decode_gva) and through a
 *     decode cache kept for the whole process (entries are used only
 *     for the same bytes) equal the decode of the bytes a reference
 *     walk reads;
 *   - the page walk against a reference walk written here from the SDM
 *     (its result, or its failure for a non-present entry or a table
 *     outside the slots); reads through it (plain and memoised) return
 *     what the reference reads byte by byte; vpmu__gmem_can_access
 *     agrees with a reference that also faults on reserved bits and
 *     non-canonical addresses;
 *   - the frame walk equals a reference walk: at most its maximum
 *     entries, ending at an unmapped frame, a zero or non-canonical
 *     return address or a frame that does not move up (a cycle);
 *   - the exact source, driven through vpmu_vcpu_exit() with debug exits
 *     (a VM per input, PMC0 counting instructions): every exit is taken,
 *     libvpmu sets registers only when the VMM offered to write them and
 *     PMC0 never goes backwards.
 */
#include <errno.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <Zydis/Zydis.h>

#include <vpmu/vpmu.h>
#include <vpmu/model.h>
#include <vpmu/source.h>
#include <vpmu/vcpu.h>

#include "alu.h"
#include "decode.h"
#include "gmem.h"
#include "regs.h"

#define CHECK(c)	do { if (!(c)) { fprintf(stderr, "%s:%d: %s\n", \
			    __FILE__, __LINE__, #c); abort(); } } while (0)

#define HDR		48
#define MAX_SLOTS	7
#define MAX_EXITS	16
#define MAX_DEPTH	16
#define ADDR52		0x000FFFFFFFFFF000ull
#define PS		(1ull << 7)
#define EFER_NXE	(1ull << 11)
/* Instructions retired, USR and OS, enabled (IA32_PERFEVTSEL0). */
#define EVTSEL_INSTR	(0xC0ull | 1ull << 16 | 1ull << 17 | 1ull << 22)

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

struct fslot {
	uint64_t gpa, size;
	uint8_t *buf;
};

struct fz {
	unsigned n;
	struct fslot s[MAX_SLOTS];
	struct vpmu_gmem mem;
	struct vpmu_gmem_paging pg;
};

static uint64_t
get64(const uint8_t *p)
{
	uint64_t v = 0;
	int i;

	for (i = 7; i >= 0; i--)
		v = v << 8 | p[i];
	return (v);
}

/* ---- the reference: slots, walk, reads ------------------------------------ */

static bool
ref_byte(const struct fz *f, uint64_t gpa, uint8_t *b)
{
	unsigned i;

	for (i = 0; i < f->n; i++)
		if (gpa >= f->s[i].gpa && gpa - f->s[i].gpa < f->s[i].size) {
			*b = f->s[i].buf[gpa - f->s[i].gpa];
			return (true);
		}
	return (false);
}

static bool
ref_entry(const struct fz *f, uint64_t gpa, unsigned n, uint64_t *e)
{
	uint8_t b;
	unsigned i;

	*e = 0;
	for (i = 0; i < n; i++) {
		if (!ref_byte(f, gpa + i, &b))
			return (false);
		*e |= (uint64_t)b << (8 * i);
	}
	return (true);
}

/*
 * The SDM's walk (Vol. 3A, 4.3 to 4.5), read only.  *rw and *us: what
 * every level grants; *rsvd: an entry on the way has a bit set that the
 * architecture reserves whatever MAXPHYADDR is (PS in a PML5E or PML4E,
 * bits 29:13 or 20:13 of a large page, XD without EFER.NXE).
 */
static bool
ref_walk(const struct fz *f, uint64_t va, uint64_t *pa, bool *rw, bool *us, bool *rsvd)
{
	const struct vpmu_gmem_paging *pg = &f->pg;
	uint64_t t, e, mask;
	int lvl;

	*rw = *us = true;
	*rsvd = false;
	if (!(pg->cr0 & VPMU_CR0_PG)) {
		*pa = va & 0xFFFFFFFFull;
		return (true);
	}
	if (pg->efer & VPMU_EFER_LMA) {
		t = pg->cr3 & ADDR52;
		for (lvl = (pg->cr4 & VPMU_CR4_LA57) ? 5 : 4; lvl >= 1; lvl--) {
			unsigned shift = 12 + 9 * (unsigned)(lvl - 1);

			if (!ref_entry(f, t + ((va >> shift) & 511) * 8, 8, &e) || !(e & 1))
				return (false);
			*rw = *rw && (e & 2);
			*us = *us && (e & 4);
			if ((e >> 63) && !(pg->efer & EFER_NXE))
				*rsvd = true;
			if (lvl >= 4 && (e & PS))
				*rsvd = true;
			mask = (1ull << shift) - 1;
			if (lvl == 1 || ((lvl == 2 || lvl == 3) && (e & PS))) {
				if (lvl > 1 && (e & mask & ~0x1FFFull))
					*rsvd = true;
				*pa = (e & ADDR52 & ~mask) | (va & mask);
				return (true);
			}
			t = e & ADDR52;
		}
		return (false);
	}
	va &= 0xFFFFFFFFull;
	if (pg->cr4 & VPMU_CR4_PAE) {
		if (!ref_entry(f, (pg->cr3 & 0xFFFFFFE0ull) + (va >> 30) * 8, 8, &e) ||
		    !(e & 1))
			return (false);
		if (!ref_entry(f, (e & ADDR52) + ((va >> 21) & 511) * 8, 8, &e) || !(e & 1))
			return (false);
		*rw = e & 2;
		*us = e & 4;
		if (e & PS) {
			*pa = (e & ADDR52 & ~0x1FFFFFull) | (va & 0x1FFFFF);
			return (true);
		}
		t = e & ADDR52;
		if (!ref_entry(f, t + ((va >> 12) & 511) * 8, 8, &e) || !(e & 1))
			return (false);
		*rw = *rw && (e & 2);
		*us = *us && (e & 4);
		*pa = (e & ADDR52) | (va & 0xFFF);
		return (true);
	}
	if (!ref_entry(f, (pg->cr3 & 0xFFFFF000ull) + (va >> 22) * 4, 4, &e) || !(e & 1))
		return (false);
	*rw = e & 2;
	*us = e & 4;
	if ((e & PS) && (pg->cr4 & VPMU_CR4_PSE)) {
		*pa = (e & 0xFFC00000ull) | ((e >> 13) & 0xFF) << 32 | (va & 0x3FFFFF);
		return (true);
	}
	if (!ref_entry(f, (e & 0xFFFFF000ull) + ((va >> 12) & 1023) * 4, 4, &e) || !(e & 1))
		return (false);
	*rw = *rw && (e & 2);
	*us = *us && (e & 4);
	*pa = (e & 0xFFFFF000ull) | (va & 0xFFF);
	return (true);
}

/* The bytes readable at va: a walk for each byte that starts a page or the read. */
static size_t
ref_read(const struct fz *f, uint64_t va, uint8_t *buf, size_t len)
{
	uint64_t pa = 0;
	bool rw, us, rsvd;
	size_t i;

	for (i = 0; i < len; i++, pa++) {
		if ((i == 0 || ((va + i) & 0xFFF) == 0) &&
		    !ref_walk(f, va + i, &pa, &rw, &us, &rsvd))
			break;
		if (!ref_byte(f, pa, &buf[i]))
			break;
	}
	return (i);
}

static bool
canonical(const struct fz *f, uint64_t va)
{
	uint64_t top = (f->pg.cr4 & VPMU_CR4_LA57) ? va >> 56 : va >> 47;

	return (top == 0 || top == ((f->pg.cr4 & VPMU_CR4_LA57) ? 0xFF : 0x1FFFF));
}

/* vpmu__gmem_can_access()'s contract, with the reserved bits. */
static bool
ref_access(const struct fz *f, uint64_t va, size_t len, bool write, unsigned cpl, bool ac)
{
	uint64_t last = va + len - 1, page, at, pa;
	bool rw, us, rsvd;
	uint8_t b;

	if (len == 0 || last < va || !(f->pg.efer & VPMU_EFER_LMA) ||
	    (f->pg.cr4 & VPMU_CR4_PKE) || !canonical(f, va) || !canonical(f, last))
		return (false);
	for (page = va >> 12; page <= last >> 12; page++) {
		at = page << 12 < va ? va : page << 12;
		if (!ref_walk(f, at, &pa, &rw, &us, &rsvd) || rsvd || !ref_byte(f, pa, &b))
			return (false);
		if (cpl == 3 ? !us || (write && !rw) :
		    (us && (f->pg.cr4 & VPMU_CR4_SMAP) && !ac) ||
		    (write && !rw && (f->pg.cr0 & VPMU_CR0_WP)))
			return (false);
		if (page == UINT64_MAX >> 12)
			break;
	}
	return (true);
}

/* vpmu__gmem_callchain()'s contract. */
static unsigned
ref_chain(const struct fz *f, uint64_t rip, uint64_t rbp, uint64_t *pc, unsigned max)
{
	bool lm = (f->pg.efer & VPMU_EFER_LMA) != 0;
	uint8_t fr[16];
	uint64_t fp = rbp, up, ret;
	unsigned n = 0;

	if (max == 0)
		return (0);
	pc[n++] = rip;
	while (n < max && fp != 0) {
		if (lm && (!canonical(f, fp) || !canonical(f, fp + 15)))
			break;
		if (ref_read(f, fp, fr, 16) != 16)
			break;
		up = get64(fr);
		ret = get64(fr + 8);
		if (ret == 0 || (lm && !canonical(f, ret)))
			break;
		pc[n++] = ret;
		if (up <= fp)
			break;
		fp = up;
	}
	return (n);
}

/* ---- alu.c: results worked out a second way ------------------------------- */

#define FL_CF	0x001u
#define FL_PF	0x004u
#define FL_AF	0x010u
#define FL_ZF	0x040u
#define FL_SF	0x080u
#define FL_OF	0x800u

static uint64_t
wmask(unsigned w)
{
	return (w >= 64 ? UINT64_MAX : (1ull << w) - 1);
}

/* SF, ZF, PF of result v in width w. */
static unsigned
szp(uint64_t v, unsigned w)
{
	return (((v >> (w - 1)) & 1 ? FL_SF : 0) | ((v & wmask(w)) == 0 ? FL_ZF : 0) |
	    (__builtin_parity((unsigned)(v & 0xFF)) ? 0 : FL_PF));
}

/*
 * The simple ALU forms on low registers, from the SDM's definitions:
 * true with the result (*res, in width w; *wr: the destination written)
 * and the flags it defines (*fl, *defd); false for any other.
 */
static bool
alu_ref(const struct vpmu_alu *a, const uint64_t *reg, uint64_t *res, bool *wr,
    unsigned *fl, unsigned *defd)
{
	unsigned w = a->width, sb = w - 1;
	uint64_t m = wmask(w), x, y, v;

	if ((a->a & VPMU_ALU_HIGH) || a->a > 15 ||
	    (a->b != VPMU_ALU_IMM && a->b != VPMU_ALU_NOREG && (a->b & VPMU_ALU_HIGH)))
		return (false);
	x = reg[a->a] & m;
	y = a->b == VPMU_ALU_IMM ? a->imm & m : a->b <= 15 ? reg[a->b] & m : 0;
	*wr = true;
	*fl = 0;
	*defd = FL_CF | FL_PF | FL_AF | FL_ZF | FL_SF | FL_OF;
	switch (a->op) {
	case VPMU_ALU_ADD:
		v = (x + y) & m;
		*fl = szp(v, w) | (v < x ? FL_CF : 0) | ((((x ^ v) & (y ^ v)) >> sb) & 1 ?
		    FL_OF : 0) | ((x ^ y ^ v) & 0x10 ? FL_AF : 0);
		break;
	case VPMU_ALU_SUB:
	case VPMU_ALU_CMP:
		v = (x - y) & m;
		*fl = szp(v, w) | (x < y ? FL_CF : 0) | ((((x ^ y) & (x ^ v)) >> sb) & 1 ?
		    FL_OF : 0) | ((x ^ y ^ v) & 0x10 ? FL_AF : 0);
		*wr = a->op == VPMU_ALU_SUB;
		break;
	case VPMU_ALU_AND:
	case VPMU_ALU_TEST:
	case VPMU_ALU_OR:
	case VPMU_ALU_XOR:
		v = a->op == VPMU_ALU_OR ? x | y : a->op == VPMU_ALU_XOR ? x ^ y : x & y;
		*fl = szp(v, w);
		*defd &= ~FL_AF;		/* undefined */
		*wr = a->op != VPMU_ALU_TEST;
		break;
	case VPMU_ALU_INC:
	case VPMU_ALU_DEC:
		y = 1;
		v = (a->op == VPMU_ALU_INC ? x + 1 : x - 1) & m;
		*fl = szp(v, w) | ((x ^ y ^ v) & 0x10 ? FL_AF : 0) |
		    (v == (a->op == VPMU_ALU_INC ? 1ull << sb : (1ull << sb) - 1) ? FL_OF : 0);
		*defd &= ~FL_CF;		/* unchanged */
		break;
	case VPMU_ALU_NEG:
		v = (0 - x) & m;
		*fl = szp(v, w) | (x != 0 ? FL_CF : 0) | (x == 1ull << sb ? FL_OF : 0) |
		    ((x ^ v) & 0x10 ? FL_AF : 0);
		break;
	case VPMU_ALU_NOT:
		v = ~x & m;
		*defd = 0;
		break;
	case VPMU_ALU_MOV:
		if (a->bwidth != w && a->b != VPMU_ALU_IMM)
			return (false);
		v = y;
		*defd = 0;
		break;
	default:
		return (false);
	}
	*res = v;
	return (true);
}

/*
 * vpmu__alu_step() on in from registers reg and rflags: registers and
 * flags the instruction does not write stay as they were and known; a
 * result and flags alu.c says it knows are the reference's.
 */
static void
check_alu(const struct vpmu_insn *in, const uint64_t *reg, uint64_t rflags)
{
	struct vpmu_regs r;
	struct vpmu_alu_state st;
	uint64_t res, want;
	unsigned fl, defd, n, w = in->alu.width;
	bool wr;

	memset(&r, 0, sizeof(r));
	r.rax = reg[0]; r.rcx = reg[1]; r.rdx = reg[2]; r.rbx = reg[3];
	r.rsp = reg[4]; r.rbp = reg[5]; r.rsi = reg[6]; r.rdi = reg[7];
	r.r8 = reg[8]; r.r9 = reg[9]; r.r10 = reg[10]; r.r11 = reg[11];
	r.r12 = reg[12]; r.r13 = reg[13]; r.r14 = reg[14]; r.r15 = reg[15];
	r.rflags = rflags;
	vpmu__alu_init(&st, &r);
	vpmu__alu_step(&st, in);
	for (n = 0; n < 16; n++)
		if (!(in->writes & (1u << n)))
			CHECK((st.known & (1u << n)) && st.r[n] == reg[n]);
	CHECK((st.fknown & ~VPMU_ALU_STATUS) == 0);
	CHECK((st.fknown & VPMU_ALU_STATUS & ~in->wflags) == (VPMU_ALU_STATUS & ~in->wflags));
	CHECK(((st.rflags ^ rflags) & VPMU_ALU_STATUS & ~in->wflags) == 0);
	if (in->alu.op == VPMU_ALU_NONE || !alu_ref(&in->alu, reg, &res, &wr, &fl, &defd))
		return;
	n = in->alu.a;
	if (wr && (st.known & (1u << n))) {
		want = w == 32 ? res : w == 64 ? res : (reg[n] & ~wmask(w)) | res;
		CHECK(st.r[n] == want);
	}
	defd &= st.fknown & in->wflags;
	CHECK(((st.rflags ^ fl) & defd) == 0);
}

/* ---- the decoder against Zydis -------------------------------------------- */

static const ZydisMachineMode zmode[3] = {
	ZYDIS_MACHINE_MODE_LONG_64, ZYDIS_MACHINE_MODE_LEGACY_32, ZYDIS_MACHINE_MODE_REAL_16,
};
static const ZydisStackWidth zstack[3] = {
	ZYDIS_STACK_WIDTH_64, ZYDIS_STACK_WIDTH_32, ZYDIS_STACK_WIDTH_16,
};

static bool
is_branch_cat(ZydisInstructionCategory c)
{
	return (c == ZYDIS_CATEGORY_COND_BR || c == ZYDIS_CATEGORY_UNCOND_BR ||
	    c == ZYDIS_CATEGORY_CALL || c == ZYDIS_CATEGORY_RET ||
	    c == ZYDIS_CATEGORY_SYSCALL || c == ZYDIS_CATEGORY_SYSRET ||
	    c == ZYDIS_CATEGORY_INTERRUPT);
}

/* Fields of one decode that imply each other. */
static void
check_insn(const struct vpmu_insn *in, enum vpmu_decode_mode mode)
{
	CHECK(in->len >= 1 && in->len <= VPMU_INSN_MAX);
	CHECK(in->flow <= VPMU_FLOW_INDIRECT);
	CHECK(!in->conditional || in->branch);
	CHECK(!in->in_block || !in->branch);
	CHECK(!in->in_block || !in->rep_string || in->mem);	/* a REP string's operands */
	CHECK(in->ea_size == 0 || (in->mem && mode == VPMU_DECODE_64 && in->stack == 0 &&
	    in->ea_index != 5 && (in->ea_index <= 16) && (in->ea_base <= 16 || in->ea_base == VPMU_EA_RIP)));
	CHECK(in->ind == 0 || (in->ind <= 16 && in->flow == VPMU_FLOW_INDIRECT &&
	    mode == VPMU_DECODE_64 && in->branch && !in->conditional));
	CHECK(in->flow == VPMU_FLOW_NEXT || in->branch);
	CHECK(in->flow != VPMU_FLOW_STACK || in->slot == 2 || in->slot == 4 || in->slot == 8);
	CHECK(!in->iret || in->far_return);
	CHECK(!in->follow || (in->flow == VPMU_FLOW_DIRECT && !in->conditional &&
	    mode == VPMU_DECODE_64));
	CHECK(in->eval == VPMU_EVAL_NONE || (mode == VPMU_DECODE_64 && in->branch));
	CHECK(in->eval != VPMU_EVAL_RET || (in->flow == VPMU_FLOW_STACK && in->slot == 8 &&
	    !in->far_return));
	CHECK(in->eval == VPMU_EVAL_NONE || in->eval == VPMU_EVAL_RET ||
	    in->eval == VPMU_EVAL_JMP_MEM || in->eval == VPMU_EVAL_CALL ||
	    in->flow == VPMU_FLOW_DIRECT);
	CHECK(in->eval != VPMU_EVAL_CALL || (!in->conditional && (in->flow == VPMU_FLOW_DIRECT ||
	    (in->flow == VPMU_FLOW_INDIRECT && (in->ind != 0 ||
	    (in->ea_size == 8 && !in->ea_seg && !in->ea_write))))));
	CHECK(in->eval != VPMU_EVAL_JMP_MEM || (in->flow == VPMU_FLOW_INDIRECT &&
	    in->ea_size == 8 && !in->ea_seg && !in->ea_write && !in->conditional));
	CHECK(in->load == 0 || (mode == VPMU_DECODE_64 && in->ea_size ==
	    ((in->load & VPMU_COUNT_32) ? 4 : 8) && !in->ea_write && !in->branch &&
	    in->writes == 1u << VPMU_COUNT_REG(in->load)));
	CHECK(!in->nop || (!in->branch && in->writes == 0 && in->wflags == 0 && in->in_block));
	CHECK(in->pop == 0 || in->eval == VPMU_EVAL_RET);
	CHECK(in->stack == 0 || in->stack == 8 || in->stack == -8);
	CHECK(in->stack == 0 || mode == VPMU_DECODE_64);
	CHECK((in->uflags & ~in->wflags) == 0 && (in->wflags & ~VPMU_ALU_STATUS) == 0);
	CHECK(in->count == 0 || (in->alu.op == VPMU_ALU_DEC || in->alu.op == VPMU_ALU_INC ||
	    in->alu.op == VPMU_ALU_SUB || in->alu.op == VPMU_ALU_ADD));
	CHECK(in->cmp == 0 || in->alu.op == VPMU_ALU_CMP);
	CHECK(in->alu.op == VPMU_ALU_NONE || (mode == VPMU_DECODE_64 &&
	    (in->alu.width == 8 || in->alu.width == 16 || in->alu.width == 32 ||
	    in->alu.width == 64)));
	CHECK(in->flags_at == 0 || !in->in_block);
}

/*
 * bytes[0..n) (a buffer of exactly n bytes) decoded at addr in every mode,
 * by decode.c and by Zydis.
 */
static void
check_decode(const uint8_t *bytes, size_t n, uint64_t addr, const uint64_t *reg,
    uint64_t rflags)
{
	ZydisDecoder dec;
	ZydisDecodedInstruction zi;
	ZydisDecodedOperand op[ZYDIS_MAX_OPERAND_COUNT];
	struct vpmu_insn in, again;
	ZyanStatus st;
	uint64_t mask, want;
	unsigned m;
	int r;

	for (m = 0; m < 3; m++) {
		r = vpmu__decode((enum vpmu_decode_mode)m, addr, bytes, n, &in);
		CHECK(ZYAN_SUCCESS(ZydisDecoderInit(&dec, zmode[m], zstack[m])));
		st = ZydisDecoderDecodeFull(&dec, bytes, n, &zi, op);
		if (st == ZYDIS_STATUS_NO_MORE_DATA) {
			CHECK(r == ENODATA);
			continue;
		}
		if (ZYAN_FAILED(st)) {
			CHECK(r == EILSEQ);
			continue;
		}
		CHECK(r == 0);
		check_insn(&in, (enum vpmu_decode_mode)m);
		CHECK(in.len == zi.length && in.len <= n);
		CHECK(in.mnemonic == (unsigned)zi.mnemonic);
		CHECK(in.branch == ((is_branch_cat(zi.meta.category) &&
		    zi.mnemonic != ZYDIS_MNEMONIC_XBEGIN) || zi.mnemonic == ZYDIS_MNEMONIC_IRET ||
		    zi.mnemonic == ZYDIS_MNEMONIC_IRETD || zi.mnemonic == ZYDIS_MNEMONIC_IRETQ));
		CHECK(in.conditional == (in.branch && zi.meta.category == ZYDIS_CATEGORY_COND_BR));
		CHECK(in.to_user == (zi.meta.category == ZYDIS_CATEGORY_SYSRET));
		if (in.flow == VPMU_FLOW_DIRECT) {
			CHECK((zi.attributes & ZYDIS_ATTRIB_IS_RELATIVE) &&
			    op[0].type == ZYDIS_OPERAND_TYPE_IMMEDIATE);
			/* EIP and IP wrap; in 64-bit mode the sum is the target */
			mask = m == VPMU_DECODE_64 ? UINT64_MAX : zi.operand_width == 16 ?
			    0xFFFFull : 0xFFFFFFFFull;
			want = (addr + zi.length + (uint64_t)op[0].imm.value.s) & mask;
			CHECK(in.target == want);
		}
		/* the same instruction from exactly its bytes; one fewer is short */
		CHECK(vpmu__decode((enum vpmu_decode_mode)m, addr, bytes, in.len, &again) == 0);
		CHECK(memcmp(&in, &again, sizeof(in)) == 0);
		CHECK(vpmu__decode((enum vpmu_decode_mode)m, addr, bytes, in.len - 1u,
		    &again) == ENODATA);
		if (m == VPMU_DECODE_64)
			check_alu(&in, reg, rflags);
	}
}

/* ---- the page walk, reads, call chains ------------------------------------ */

static void
check_walk(const struct fz *f, uint64_t va)
{
	uint64_t pa = 0, rpa = 0;
	bool rw, us, rsvd, ok;
	int r;

	r = vpmu__gmem_translate(&f->mem, &f->pg, va, &pa);
	ok = ref_walk(f, va, &rpa, &rw, &us, &rsvd);
	CHECK(r == 0 || r == EFAULT);
	CHECK((r == 0) == ok);
	if (ok)
		CHECK(pa == rpa);
}

static void
check_read(const struct fz *f, struct vpmu_gmem_memo *memo, uint64_t va, size_t len)
{
	uint8_t *a = malloc(len + 1), *b = malloc(len + 1), *c = malloc(len + 1);
	size_t want;
	int got;

	CHECK(a != NULL && b != NULL && c != NULL);
	want = ref_read(f, va, b, len);
	got = vpmu__gmem_read_gva(&f->mem, &f->pg, va, a, len);
	CHECK(got >= 0 && (size_t)got == want && memcmp(a, b, want) == 0);
	got = vpmu__gmem_read_gva_memo(&f->mem, &f->pg, memo, va, c, len);
	CHECK(got >= 0 && (size_t)got == want && memcmp(c, b, want) == 0);
	free(a);
	free(b);
	free(c);
}

static void
check_access(const struct fz *f, uint64_t va, size_t len, unsigned cpl, bool ac)
{
	bool w;

	for (w = false; ; w = true) {
		CHECK(vpmu__gmem_can_access(&f->mem, &f->pg, va, len, w, cpl, ac) ==
		    ref_access(f, va, len, w, cpl, ac));
		if (w)
			break;
	}
}

static void
check_chain(const struct fz *f, uint64_t rip, uint64_t rbp, unsigned max)
{
	uint64_t pc[MAX_DEPTH + 1], ref[MAX_DEPTH + 1];
	unsigned n, rn, i;

	pc[max] = ref[max] = 0x5A5A5A5A5A5A5A5Aull;	/* nothing past max */
	n = vpmu__gmem_callchain(&f->mem, &f->pg, rip, rbp, pc, max);
	rn = ref_chain(f, rip, rbp, ref, max);
	CHECK(n <= max && pc[max] == 0x5A5A5A5A5A5A5A5Aull);
	CHECK(n == rn);
	for (i = 0; i < n; i++)
		CHECK(pc[i] == ref[i]);
	for (i = 1; i < n; i++)
		CHECK(pc[i] != 0);
}

/* Decoding at va through the walk: what the reference reads decodes alike. */
static void
check_decode_gva(const struct fz *f, struct vpmu_dcache *dc, uint64_t va)
{
	struct vpmu_insn a, b, c;
	uint8_t bytes[VPMU_INSN_MAX];
	uint64_t bad = 0;
	size_t got;
	unsigned m;
	int r, rr, rc;

	got = ref_read(f, va, bytes, sizeof(bytes));
	for (m = 0; m < 3; m++) {
		r = vpmu__decode_gva(&f->mem, &f->pg, (enum vpmu_decode_mode)m, va, &a, &bad);
		rr = got > 0 ? vpmu__decode((enum vpmu_decode_mode)m, va, bytes, got, &b) : EFAULT;
		CHECK(r == rr);
		if (r == 0)
			CHECK(memcmp(&a, &b, sizeof(a)) == 0);
		else
			CHECK(bad == (r == EILSEQ ? va : va + got));
		rc = vpmu__decode_gva_cached(dc, &f->mem, &f->pg, (enum vpmu_decode_mode)m, va,
		    &c, NULL);
		CHECK(rc == r);
		if (r == 0)
			CHECK(memcmp(&a, &c, sizeof(a)) == 0);
	}
}

/* ---- the exact source through the exit contract --------------------------- */

static struct vpmu_model model;

static uint64_t
pmc0(vpmu_vm *vm, const struct vpmu_regs *r)
{
	struct vpmu_exit x = { .reason = VPMU_EXIT_MSR_READ, .index = 0xC1, .regs = r };

	CHECK(vpmu_vcpu_exit(vm, 0, &x) == 0 && x.handled == 1 && x.fault == 0);
	return (x.data);
}

/* The VMM's write function: every write the source makes is inside a slot. */
static void
wrote(void *arg, uint64_t gpa, uint64_t len)
{
	const struct fz *f = arg;
	unsigned i;

	for (i = 0; i < f->n; i++)
		if (gpa >= f->s[i].gpa && len <= f->s[i].size && gpa - f->s[i].gpa <= f->s[i].size - len)
			return;
	CHECK(!"a write outside the slots");
}

static void
drive(const struct fz *f, uint8_t cfg, struct vpmu_regs *r, const uint8_t *p, size_t n)
{
	struct vpmu_exact_params xp = { .vendor = VPMU_VENDOR_INTEL, .ref_cpi = 1,
	    .mode = (cfg & 0x20) ? VPMU_EXACT_BLOCK : VPMU_EXACT_STEP };
	uint32_t setregs = (cfg & 0x40) ? VPMU_EXITF_SETREGS | VPMU_EXITF_SETGPRS : 0;
	struct vpmu_entry e;
	struct vpmu_exit x;
	vpmu_config *cfgp;
	vpmu_vm *vm;
	uint64_t last, now;
	unsigned i, k;

	CHECK(vpmu_config_create(&cfgp) == 0);
	CHECK(vpmu_config_set_vcpus(cfgp, 1) == 0);
	CHECK(vpmu_config_set_model(cfgp, &model) == 0);
	CHECK(vpmu_config_set_source(cfgp, &vpmu_source_exact, &xp) == 0);
	CHECK(vpmu_vm_create(cfgp, &vm) == 0);
	vpmu_config_destroy(cfgp);
	for (i = 0; i < f->n; i++)
		CHECK(vpmu_vm_add_memory(vm, f->s[i].gpa, f->s[i].size, f->s[i].buf) == 0);
	if (setregs)			/* CALLs completed: their pushes written */
		CHECK(vpmu_vm_set_write_fn(vm, wrote, (void *)(uintptr_t)f) == 0);

	x = (struct vpmu_exit){ .reason = VPMU_EXIT_MSR_WRITE, .flags = setregs,
	    .index = 0x186, .data = EVTSEL_INSTR, .regs = r };
	CHECK(vpmu_vcpu_exit(vm, 0, &x) == 0 && x.handled == 1 && x.fault == 0);
	last = pmc0(vm, r);
	for (i = 0; i + 1 < n && i / 2 < MAX_EXITS; i += 2) {
		uint8_t kind = p[i], arg = p[i + 1];

		CHECK(vpmu_vcpu_enter(vm, 0, &e) == 0);
		CHECK(e.debug == 0 || e.debug == VPMU_DEBUG_STEP || e.debug == VPMU_DEBUG_BREAK);
		CHECK(e.debug != VPMU_DEBUG_BREAK || (e.nbp >= 1 && e.nbp <= VPMU_DEBUG_BP_MAX));
		x = (struct vpmu_exit){ .reason = VPMU_EXIT_DEBUG, .flags = setregs,
		    .dr6 = VPMU_DR6_BS, .regs = r };
		switch (kind & 7) {
		case 0:			/* where the plan goes, or a short step */
			if (e.debug == VPMU_DEBUG_BREAK) {
				k = arg % e.nbp;
				x.dr6 = 1u << k;
				r->rip = e.bp[k];
			} else
				r->rip += arg & 15;
			break;
		case 1:			/* a jump */
			r->rip += (uint64_t)(int64_t)(int8_t)arg;
			break;
		case 2:			/* far away */
			r->rip = (r->rip & ~0xFFFFull) ^ ((uint64_t)arg << 8 | kind);
			break;
		case 3:			/* an event injected before the run */
			x.flags |= VPMU_EXITF_INJECTED;
			x.vector = arg & 31;
			x.dr6 = 0;
			r->rip += arg >> 5;
			break;
		case 4:			/* the stack and the flags */
			r->rsp += (uint64_t)(int64_t)(int8_t)arg * 8;
			r->rflags ^= (uint64_t)(arg & 0xD5) | 0x2;
			r->rcx += kind >> 3;
			x.dr6 = VPMU_DR6_BS;
			r->rip += arg & 7;
			break;
		case 5:			/* the VMM moved RIP */
			x.flags |= VPMU_EXITF_MOVED;
			r->rip += arg;
			break;
		case 6:			/* another exit */
			x.reason = VPMU_EXIT_OTHER;
			x.dr6 = 0;
			break;
		case 7:			/* a mode change */
			r->cpl = arg & 3;
			r->long_mode = (arg >> 2) & 1;
			x.reason = VPMU_EXIT_OTHER;
			x.dr6 = 0;
			break;
		}
		CHECK(vpmu_vcpu_exit(vm, 0, &x) == 0);
		CHECK(x.set == 0 || (setregs && x.reason == VPMU_EXIT_DEBUG));
		if (x.set & VPMU_SET_RIP)
			r->rip = x.rip;
		if (x.set & VPMU_SET_RSP)
			r->rsp = x.rsp;
		if (x.set & VPMU_SET_RCX)
			r->rcx = x.rcx;
		if (x.set & VPMU_SET_RAX)
			r->rax = x.rax;
		if (x.set & VPMU_SET_RDX)
			r->rdx = x.rdx;
		if (x.set & VPMU_SET_RFLAGS)
			r->rflags = x.rflags;
		if (x.set & VPMU_SET_USER)
			r->cpl = 3;
		if (x.set & VPMU_SET_GPRS) {
			CHECK(x.gpr[0] == x.rax && x.gpr[1] == x.rcx && x.gpr[2] == x.rdx &&
			    x.gpr[4] == x.rsp);
			for (k = 0; k < 16; k++)
				vpmu__regs_set_gpr(r, k, x.gpr[k]);
		}
		if ((kind & 8) || i + 3 >= n || i / 2 + 1 == MAX_EXITS) {
			now = pmc0(vm, r);
			CHECK(now >= last);
			last = now;
		}
	}
	vpmu_vm_destroy(vm);
}

/* ---- the input ------------------------------------------------------------ */

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	static struct vpmu_dcache *dc;
	struct vpmu_gmem_memo memo = { 0 };
	struct vpmu_regs r;
	struct fz f;
	const uint8_t *p = data + HDR, *end = data + size;
	uint64_t va[8];
	uint8_t cfg, *code;
	unsigned i, nslots, depth, cpl;
	size_t take;

	if (size < HDR)
		return (0);
	if (dc == NULL) {
		CHECK((dc = calloc(1, sizeof(*dc))) != NULL);
		CHECK(vpmu_model_parse("intel-v2", &model, NULL, 0) == 0);
	}
	dc->memo.valid = false;		/* memory changed: as at an exit */

	memset(&f, 0, sizeof(f));
	cfg = data[0];
	nslots = data[1] % (MAX_SLOTS + 1);
	cpl = data[2] & 3;
	depth = data[3] % (MAX_DEPTH + 1);
	switch (cfg & 3) {
	case 0:
		f.pg.cr0 = VPMU_CR0_PE;
		break;
	case 1:
		f.pg.cr0 = VPMU_CR0_PE | VPMU_CR0_PG | VPMU_CR0_WP;
		break;
	case 2:
		f.pg.cr0 = VPMU_CR0_PE | VPMU_CR0_PG;
		f.pg.cr4 = VPMU_CR4_PAE;
		break;
	case 3:
		f.pg.cr0 = VPMU_CR0_PE | VPMU_CR0_PG | VPMU_CR0_WP;
		f.pg.cr4 = VPMU_CR4_PAE | ((cfg & 4) ? VPMU_CR4_LA57 : 0) |
		    ((data[2] & 8) ? VPMU_CR4_SMAP : 0);
		f.pg.efer = VPMU_EFER_LMA | (1ull << 8) | ((cfg & 0x80) ? EFER_NXE : 0);
		break;
	}
	if (cfg & 8)
		f.pg.cr4 |= VPMU_CR4_PSE;
	f.pg.cr3 = get64(data + 4);

	for (i = 0; i < nslots && end - p >= 12; i++) {
		struct fslot *s = &f.s[f.n];

		s->gpa = get64(p);
		s->size = (uint64_t)(p[8] | p[9] << 8) + 1;
		take = (size_t)(p[10] | p[11] << 8);
		p += 12;
		CHECK((s->buf = calloc(1, s->size)) != NULL);
		if (take > s->size)
			take = s->size;
		if (take > (size_t)(end - p))
			take = (size_t)(end - p);
		memcpy(s->buf, p, take);
		p += take;
		if (vpmu__gmem_add(&f.mem, s->gpa, s->size, s->buf) != 0) {
			free(s->buf);	/* overlaps or wraps: refused, as documented */
			continue;
		}
		f.n++;
	}

	memset(&r, 0, sizeof(r));
	r.cr0 = f.pg.cr0;
	r.cr3 = f.pg.cr3;
	r.cr4 = f.pg.cr4;
	r.efer = f.pg.efer;
	r.rip = get64(data + 12);
	r.rsp = get64(data + 20);
	r.rbp = get64(data + 28);
	r.rcx = get64(data + 36);
	r.rflags = 0x2 | ((data[2] & 4) ? 1ull << 18 : 0);
	r.cpl = cpl;
	r.long_mode = (f.pg.efer & VPMU_EFER_LMA) && (cfg & 0x10);
	r.idt_base = (uint64_t)(data[44] | data[45] << 8 | data[46] << 16) << 4;
	r.idt_limit = data[47] != 0 ? 0xFFF : 0;

	/*
	 * The decoder alone, on the first slot's first bytes, its ALU summary
	 * on registers from the bytes after them.
	 */
	if (f.n > 0) {
		uint64_t reg[16];
		uint8_t rb[16 * 8 + 8];

		take = f.s[0].size < VPMU_INSN_MAX ? f.s[0].size : VPMU_INSN_MAX;
		memset(rb, 0, sizeof(rb));
		if (f.s[0].size > 16)
			memcpy(rb, f.s[0].buf + 16, f.s[0].size - 16 < sizeof(rb) ?
			    f.s[0].size - 16 : sizeof(rb));
		for (i = 0; i < 16; i++)
			reg[i] = get64(rb + 8 * i);
		CHECK((code = malloc(take)) != NULL);
		memcpy(code, f.s[0].buf, take);
		check_decode(code, take, r.rip, reg, 0x2 | (get64(rb + 128) & VPMU_ALU_STATUS));
		free(code);
	}

	/* walks, reads, accesses at the registers and at every slot */
	va[0] = r.rip;
	va[1] = r.rsp;
	va[2] = r.rbp;
	va[3] = r.rcx;
	va[4] = r.rsp - 8;
	va[5] = r.rip | 0xFFF;
	va[6] = r.rbp ^ (r.rip & 0xFFFFFFFFFFull);
	va[7] = f.n > 0 ? f.s[f.n - 1].gpa : 0;
	for (i = 0; i < 8; i++) {
		check_walk(&f, va[i]);
		check_read(&f, &memo, va[i], i == 5 ? 17 : 16);
		check_access(&f, va[i], i < 5 ? 8 : 1 + (va[i] & 15), cpl,
		    (data[2] & 4) != 0);
	}
	for (i = 0; i < f.n; i++)
		check_walk(&f, f.s[i].gpa + f.s[i].size - 1);
	check_decode_gva(&f, dc, r.rip);
	check_chain(&f, r.rip, r.rbp, depth);

	/* the exact source over the same memory */
	if (p < end)
		drive(&f, cfg, &r, p, (size_t)(end - p));

	for (i = 0; i < f.n; i++)
		free(f.s[i].buf);
	return (0);
}
