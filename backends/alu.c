/*
 * alu.c -- integer instructions on registers, worked out before the guest
 * runs them, so that the exact source knows where a conditional branch in
 * the middle of a block will go (vpmu_exact(7), "Branches inside a run").
 *
 * Only what the operands fully determine: the results and the flags the
 * SDM (Vol. 2, each instruction's "Flags Affected") defines for them, and
 * the ones it leaves undefined (Zydis's table, vpmu_insn.uflags) as this
 * processor sets them (alu_host.c).  A flag that neither gives becomes
 * unknown; so does every register an instruction this file does not model
 * writes.  Nothing is guessed: a branch whose flags are unknown ends the
 * block as before.
 * test_alu runs every modelled form on the host processor and compares.
 */
#include <stdbool.h>
#include <string.h>

#include "alu.h"
#include "regs.h"
#include "branch.h"

#define F_CF	0x001u
#define F_PF	0x004u
#define F_AF	0x010u
#define F_ZF	0x040u
#define F_SF	0x080u
#define F_OF	0x800u
#define F_SZP	(F_SF | F_ZF | F_PF)

/* The flags each condition code (tttn >> 1) reads. */
static const uint16_t cond_flags[8] = {
	F_OF, F_CF, F_ZF, F_CF | F_ZF, F_SF, F_PF, F_SF | F_OF, F_ZF | F_SF | F_OF,
};

void
vpmu__alu_init(struct vpmu_alu_state *s, const struct vpmu_regs *r)
{
	unsigned n;

	for (n = 0; n < 16; n++)
		s->r[n] = vpmu__regs_gpr(r, n);
	s->rflags = r->rflags;
	s->known = 0xFFFF;
	s->fknown = VPMU_ALU_STATUS;
	s->mknown = false;
	s->m = 0;
}

static uint64_t
mask(unsigned w)
{
	return (w >= 64 ? UINT64_MAX : (1ull << w) - 1);
}

static uint64_t
sext(uint64_t v, unsigned w)
{
	return (w >= 64 ? v : ((v & mask(w)) ^ (1ull << (w - 1))) - (1ull << (w - 1)));
}

/* Operand reg (VPMU_ALU_HIGH for AH..BH) of width w: false if not known. */
static bool
get(const struct vpmu_alu_state *s, unsigned reg, unsigned w, uint64_t *v)
{
	unsigned n = reg & 15;

	if (reg == VPMU_ALU_MEM) {
		*v = s->m & mask(w);
		return (s->mknown);
	}
	if (reg == VPMU_ALU_NOREG || !(s->known & (1u << n)))
		return (false);
	*v = (reg & VPMU_ALU_HIGH) ? (s->r[n & 3] >> 8) & 0xFF : s->r[n] & mask(w);
	return (true);
}

/* Write v to operand reg of width w: 32 bits zero-extend, 8 and 16 merge. */
static void
put(struct vpmu_alu_state *s, unsigned reg, unsigned w, uint64_t v)
{
	unsigned n = (reg & VPMU_ALU_HIGH) ? reg & 3 : reg & 15;

	if (reg == VPMU_ALU_MEM) {
		s->m = (s->m & ~mask(w)) | (v & mask(w));
		return;
	}
	if (reg & VPMU_ALU_HIGH)
		s->r[n] = (s->r[n] & ~0xFF00ull) | (v & 0xFF) << 8;
	else if (w >= 32)
		s->r[n] = v & mask(w);
	else
		s->r[n] = (s->r[n] & ~mask(w)) | (v & mask(w));
	if (w >= 32 && !(reg & VPMU_ALU_HIGH))
		s->known |= (uint16_t)(1u << n);	/* a partial write of an
							   unknown register stays unknown */
}

static uint16_t
szp(uint64_t r, unsigned w)
{
	uint16_t f = 0;

	r &= mask(w);
	if (r == 0)
		f |= F_ZF;
	if (r >> (w - 1))
		f |= F_SF;
	if (!__builtin_parityll(r & 0xFF))
		f |= F_PF;
	return (f);
}

/* a + b + c, or a - b - c: the result and all six flags. */
static uint64_t
addsub(uint64_t a, uint64_t b, unsigned c, unsigned w, bool sub, uint16_t *f)
{
	uint64_t m = mask(w), r, top = 1ull << (w - 1);
	unsigned __int128 t;

	a &= m;
	b &= m;
	if (sub) {
		r = (a - b - c) & m;
		*f = (unsigned __int128)a < (unsigned __int128)b + c ? F_CF : 0;
		if ((a ^ b) & (a ^ r) & top)
			*f |= F_OF;
	} else {
		t = (unsigned __int128)a + b + c;
		r = (uint64_t)t & m;
		*f = (t >> w) & 1 ? F_CF : 0;
		if ((a ^ r) & (b ^ r) & top)
			*f |= F_OF;
	}
	if ((a ^ b ^ r) & 0x10)
		*f |= F_AF;
	*f |= szp(r, w);
	return (r);
}

/*
 * Shifts and rotates by count (already masked, not 0): the result, the
 * flags set in *f, and in *def the ones defined for this count.
 */
static uint64_t
shift(unsigned op, uint64_t a, unsigned count, unsigned w, uint16_t *f, uint16_t *def)
{
	uint64_t m = mask(w), top = 1ull << (w - 1), r;
	unsigned rc;
	bool cf;

	a &= m;
	*f = 0;
	*def = count == 1 ? F_OF : 0;
	switch (op) {
	case VPMU_ALU_SHL:
	case VPMU_ALU_SHR:
	case VPMU_ALU_SAR:
		if (op == VPMU_ALU_SHL)
			r = count < w ? (a << count) & m : 0;
		else if (op == VPMU_ALU_SHR)
			r = count < w ? a >> count : 0;
		else
			r = (uint64_t)((int64_t)sext(a, w) >> (count < w ? count : w - 1)) & m;
		*def |= F_SZP;
		if (count < w) {		/* CF: the last bit shifted out */
			*def |= F_CF;
			cf = op == VPMU_ALU_SHL ? (a >> (w - count)) & 1 :
			    (sext(a, w) >> (count - 1)) & 1;
			*f |= cf ? F_CF : 0;
		}
		if (op == VPMU_ALU_SHL && count == 1 && (((r & top) != 0) != ((*f & F_CF) != 0)))
			*f |= F_OF;
		if (op == VPMU_ALU_SHR && count == 1 && (a & top))
			*f |= F_OF;
		*f |= szp(r, w);
		return (r);
	default:			/* ROL, ROR: CF and OF only */
		rc = count % w;
		r = rc == 0 ? a : op == VPMU_ALU_ROL ? ((a << rc) | (a >> (w - rc))) & m :
		    ((a >> rc) | (a << (w - rc))) & m;
		*def |= F_CF;
		cf = op == VPMU_ALU_ROL ? r & 1 : (r & top) != 0;
		*f |= cf ? F_CF : 0;
		if (op == VPMU_ALU_ROL ? ((r & top) != 0) != cf :
		    ((r >> (w - 1)) ^ (r >> (w - 2))) & 1)
			*f |= F_OF;
		return (r);
	}
}

int
vpmu__alu_cond(const struct vpmu_alu_state *s, unsigned cond)
{
	uint16_t need = cond_flags[(cond >> 1) & 7];

	if ((s->fknown & need) != need)
		return (-1);
	return (vpmu__branch_cond(cond, s->rflags) ? 1 : 0);
}

/* Does in name RSP (or SPL) as an operand? */
static bool
uses_rsp(const struct vpmu_insn *in)
{
	const struct vpmu_alu *x = &in->alu;

	return (x->a == 4 || x->b == 4 || (x->op == VPMU_ALU_LEA && x->index == 4) ||
	    (in->writes & (1u << 4)) != 0);
}

/*
 * The flags in writes but leaves undefined (def lacks them): as this
 * processor sets them, by running in's own bytes on s's registers
 * (alu_host.c), when every register and flag is known and it uses neither
 * RSP nor memory.  The run's result must be alu.c's (r, when it writes one), or
 * nothing is taken from it.
 */
static void
undefined(const struct vpmu_alu_state *s, const struct vpmu_insn *in, uint64_t r, bool wr,
    uint16_t *f, uint16_t *def)
{
	const struct vpmu_alu *x = &in->alu;
	uint64_t regs[16], rflags = s->rflags, got;
	unsigned n = (x->a & VPMU_ALU_HIGH) ? x->a & 3 : x->a & 15;
	uint16_t take;

	if (s->known != 0xFFFF || s->fknown != VPMU_ALU_STATUS || uses_rsp(in) || in->mem ||
	    x->op == VPMU_ALU_XCHG)
		return;
	memcpy(regs, s->r, sizeof(regs));
	if (!vpmu__alu_host_run(in->bytes, in->len, regs, &rflags))
		return;
	got = (x->a & VPMU_ALU_HIGH) ? (regs[n] >> 8) & 0xFF : regs[n] & mask(x->width);
	if (wr && got != (r & mask(x->width)))
		return;			/* alu.c and the processor disagree: neither */
	/*
	 * Not OF after a rotate by more than 1: processors leave it as it was
	 * for an immediate count and work it out for CL (this host), and
	 * KVM's emulator, which runs guest code on some hosts, works it out
	 * from CL whatever the encoding: who runs the guest decides.
	 */
	take = in->wflags & ~*def;
	if (x->op == VPMU_ALU_ROL || x->op == VPMU_ALU_ROR)
		take &= (uint16_t)~F_OF;
	*f = (uint16_t)((*f & *def) | (rflags & take));
	*def |= take;
}

/*
 * Work out in's results into s: the registers it wrote (bit n for
 * register n), or -1 (s untouched) when an operand it reads is not known
 * or the form is not modelled.
 */
static int
model(struct vpmu_alu_state *s, const struct vpmu_insn *in)
{
	const struct vpmu_alu *x = &in->alu;
	unsigned w = x->width, op = x->op, c;
	uint64_t a = 0, b = x->imm, r = 0, idx = 0, p;
	uint16_t f = 0, def = 0;	/* flags set, flags it defines */
	bool wr = true, ha, hb;
	__int128 full;

	if (op == VPMU_ALU_NONE || (w != 8 && w != 16 && w != 32 && w != 64))
		return (-1);
	ha = get(s, x->a, w, &a);
	hb = x->b == VPMU_ALU_IMM || get(s, x->b, x->bwidth, &b);
	if (x->b == VPMU_ALU_IMM)
		b &= mask(w);
	switch (op) {
	case VPMU_ALU_XOR:
	case VPMU_ALU_SUB:
		if (x->b == x->a) {		/* zeroing idioms: operands not needed */
			r = 0;
			f = F_ZF | F_PF;
			def = op == VPMU_ALU_SUB ? VPMU_ALU_STATUS : F_SZP | F_CF | F_OF;
			break;
		}
		/* FALLTHROUGH */
	case VPMU_ALU_ADD:
	case VPMU_ALU_ADC:
	case VPMU_ALU_SBB:
	case VPMU_ALU_CMP:
	case VPMU_ALU_AND:
	case VPMU_ALU_OR:
	case VPMU_ALU_TEST:
		if (!ha || !hb)
			return (-1);
		c = 0;
		if (op == VPMU_ALU_ADC || op == VPMU_ALU_SBB) {
			if (!(s->fknown & F_CF))
				return (-1);
			c = (s->rflags & F_CF) != 0;
		}
		if (op == VPMU_ALU_AND || op == VPMU_ALU_TEST || op == VPMU_ALU_OR ||
		    op == VPMU_ALU_XOR) {
			r = op == VPMU_ALU_OR ? a | b : op == VPMU_ALU_XOR ? a ^ b : a & b;
			f = szp(r, w);
			def = F_SZP | F_CF | F_OF;
		} else {
			r = addsub(a, b, c, w, op != VPMU_ALU_ADD && op != VPMU_ALU_ADC, &f);
			def = VPMU_ALU_STATUS;
		}
		wr = op != VPMU_ALU_CMP && op != VPMU_ALU_TEST;
		break;
	case VPMU_ALU_INC:
	case VPMU_ALU_DEC:
	case VPMU_ALU_NEG:
		if (!ha)
			return (-1);
		if (op == VPMU_ALU_NEG)
			r = addsub(0, a, 0, w, true, &f);
		else
			r = addsub(a, 1, 0, w, op == VPMU_ALU_DEC, &f);
		def = op == VPMU_ALU_NEG ? VPMU_ALU_STATUS : VPMU_ALU_STATUS & ~F_CF;
		break;
	case VPMU_ALU_NOT:
		if (!ha)
			return (-1);
		r = ~a;
		break;
	case VPMU_ALU_MOV:
	case VPMU_ALU_MOVZX:
	case VPMU_ALU_MOVSX:
		if (!hb)
			return (-1);
		r = op == VPMU_ALU_MOVSX ? sext(b, x->bwidth) : b;
		break;
	case VPMU_ALU_SHL:
	case VPMU_ALU_SHR:
	case VPMU_ALU_SAR:
	case VPMU_ALU_ROL:
	case VPMU_ALU_ROR:
		/* a count of 0 changes nothing, not even the upper half: not modelled */
		if (!ha || !hb || (c = (unsigned)(b & (w == 64 ? 63 : 31))) == 0)
			return (-1);
		r = shift(op, a, c, w, &f, &def);
		break;
	case VPMU_ALU_IMUL:
	case VPMU_ALU_IMUL3:
		if (!hb || (op == VPMU_ALU_IMUL && !ha))
			return (-1);
		full = op == VPMU_ALU_IMUL3 ? (__int128)(int64_t)sext(b, w) * (int64_t)sext(x->imm, w) :
		    (__int128)(int64_t)sext(a, w) * (int64_t)sext(b, w);
		r = (uint64_t)full & mask(w);
		if (full != (__int128)(int64_t)sext(r, w))
			f = F_CF | F_OF;
		def = F_CF | F_OF;
		break;
	case VPMU_ALU_LEA:
		p = x->imm;
		if (x->b != VPMU_ALU_NOREG) {
			if (!get(s, x->b, 64, &b))
				return (-1);
			p += b;
		}
		if (x->index != VPMU_ALU_NOREG) {
			if (!get(s, x->index, 64, &idx))
				return (-1);
			p += idx * x->scale;
		}
		r = p & mask(x->awidth);
		break;
	case VPMU_ALU_XCHG:
		if (!ha || !hb || (x->b & VPMU_ALU_HIGH) || (x->a & VPMU_ALU_HIGH))
			return (-1);
		put(s, x->b, w, a);
		r = b;
		break;
	case VPMU_ALU_CMOV:
	case VPMU_ALU_SET:
		if ((c = (unsigned)vpmu__alu_cond(s, x->cond)) > 1 ||
		    (op == VPMU_ALU_CMOV && (!hb || !ha)))
			return (-1);
		r = op == VPMU_ALU_SET ? c : c ? b : a;	/* a 32-bit CMOV writes either way */
		break;
	default:
		return (-1);
	}
	def &= in->wflags & ~in->uflags;
	if ((in->wflags & ~def) != 0)
		undefined(s, in, r, wr, &f, &def);
	if (wr)
		put(s, x->a, w, r);
	s->fknown = (uint16_t)((s->fknown & ~in->wflags) | def);
	s->rflags = (s->rflags & ~(uint64_t)def) | (f & def);
	return (wr && x->a != VPMU_ALU_MEM ? 1 << (x->a & VPMU_ALU_HIGH ? x->a & 3 : x->a & 15) : 0) |
	    (op == VPMU_ALU_XCHG ? 1 << (x->b & 15) : 0);
}

bool
vpmu__alu_step(struct vpmu_alu_state *s, const struct vpmu_insn *in)
{
	int wrote = model(s, in);

	/* what it writes and the model did not work out is unknown */
	s->known &= (uint16_t)~(in->writes & ~(wrote < 0 ? 0 : wrote));
	if (wrote < 0)
		s->fknown &= (uint16_t)~in->wflags;
	return (wrote >= 0);
}

bool
vpmu__alu_agrees(const struct vpmu_alu_state *s, const struct vpmu_regs *r)
{
	unsigned n;

	for (n = 0; n < 16; n++)
		if ((s->known & (1u << n)) && s->r[n] != vpmu__regs_gpr(r, n))
			return (false);
	return (((s->rflags ^ r->rflags) & s->fknown) == 0);
}

bool
vpmu__alu_ea(const struct vpmu_insn *in, uint64_t addr, const struct vpmu_alu_state *s,
    uint64_t sp, bool sp_known, uint64_t *a)
{
	unsigned r;

	*a = (uint64_t)in->ea_disp;
	if (in->ea_size == 0 || in->ea_seg)
		return (false);
	if (in->ea_base == VPMU_EA_RIP)
		*a += addr + in->len;
	else if (in->ea_base != 0) {
		r = in->ea_base - 1u;
		if (r == 4 ? !sp_known : s == NULL || !(s->known & (1u << r)))
			return (false);
		*a += r == 4 ? sp : s->r[r];
	}
	if (in->ea_index != 0) {
		r = in->ea_index - 1u;
		if (s == NULL || !(s->known & (1u << r)))
			return (false);
		*a += s->r[r] * in->ea_scale;
	}
	return (true);
}
