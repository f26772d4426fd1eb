/*
 * branch.c -- completing a near branch in user space, as the processor
 * would retire it: the exact source's block engine runs a block to a
 * breakpoint on the branch that ends it and, instead of single-stepping
 * the branch (a second exit, and two changes of the debug registers),
 * works out where it goes and moves the vCPU there (vpmu_exact(7),
 * docs/exact-blocks.md).
 *
 * Only what follows from the registers and a read of memory, in 64-bit
 * code (decode.c, vpmu_insn.eval): Jcc, JMP, LOOP/LOOPE/LOOPNE,
 * JRCXZ/JECXZ with a relative target, near RET, near JMP through memory
 * (a jump table), and near CALL (relative, through a register or
 * memory), whose push is written into guest memory only where the page
 * tables have the slot's page Accessed and Dirty already and the VMM gave
 * a write function to hear of it (vpmu_vm_set_write_fn(): its dirty log
 * does not see writes through the host mapping).  Whatever would fault is
 * left to the processor (the caller single-steps): a non-canonical
 * successor (#GP at the branch), a return address or jump target the
 * guest's page tables do not let the branch read at its CPL (#PF or #SS:
 * vpmu__gmem_can_access, which models U/S, SMAP with RFLAGS.AC and leaves
 * protection keys out), and a read that would set an Accessed bit (the
 * processor sets it; the branch is stepped so that it does).  Not under CET (the shadow stack, and
 * indirect-branch tracking's ENDBR).
 */
#include "alu.h"
#include "branch.h"
#include "regs.h"

#define RFLAGS_CF	(1ull << 0)
#define RFLAGS_PF	(1ull << 2)
#define RFLAGS_ZF	(1ull << 6)
#define RFLAGS_SF	(1ull << 7)
#define RFLAGS_OF	(1ull << 11)

bool
vpmu__branch_cond(unsigned cond, uint64_t rflags)
{
	bool cf = rflags & RFLAGS_CF, zf = rflags & RFLAGS_ZF, sf = rflags & RFLAGS_SF,
	    of = rflags & RFLAGS_OF, pf = rflags & RFLAGS_PF, r;

	if (cond == VPMU_COND_ALWAYS)
		return (true);
	switch ((cond >> 1) & 7) {
	case 0:	r = of; break;			/* O */
	case 1:	r = cf; break;			/* B, C */
	case 2:	r = zf; break;			/* Z, E */
	case 3:	r = cf || zf; break;		/* BE */
	case 4:	r = sf; break;			/* S */
	case 5:	r = pf; break;			/* P */
	case 6:	r = sf != of; break;		/* L */
	default: r = zf || sf != of; break;	/* LE */
	}
	return (r != ((cond & 1) != 0));	/* odd codes: the negation */
}

/* The 8 bytes at gva, read as the branch would read them (gmem.h). */
static bool
read_quietly(const struct vpmu_gmem *mem, const struct vpmu_regs *r, uint64_t gva,
    uint64_t *val)
{
	*val = 0;
	return (vpmu__gmem_read_as(mem, r, gva, val, 8));
}

unsigned
vpmu__branch_complete(const struct vpmu_gmem *mem, const struct vpmu_insn *in,
    struct vpmu_regs *r)
{
	struct vpmu_gmem_paging pg = VPMU_GMEM_PAGING(r);
	struct vpmu_alu_state s;
	uint64_t next = r->rip + in->len, succ = next, ret = 0, rcx = r->rcx, at;
	unsigned set = VPMU_SET_RIP;

	if (!r->long_mode)
		return (0);
	switch (in->eval) {
	case VPMU_EVAL_JCC:
		if (vpmu__branch_cond(in->cond, r->rflags))
			succ = in->target;
		break;
	case VPMU_EVAL_JMP:
		succ = in->target;
		break;
	case VPMU_EVAL_LOOP:
		rcx--;
		if (rcx != 0 && vpmu__branch_cond(in->cond, r->rflags))
			succ = in->target;
		set |= VPMU_SET_RCX;
		break;
	case VPMU_EVAL_JRCXZ:
	case VPMU_EVAL_JECXZ:
		if ((in->eval == VPMU_EVAL_JRCXZ ? rcx : (uint32_t)rcx) == 0)
			succ = in->target;
		break;
	case VPMU_EVAL_RET:
		if ((r->cr4 & VPMU_CR4_CET) || !read_quietly(mem, r, r->rsp, &ret))
			return (0);
		succ = ret;
		set |= VPMU_SET_RSP;
		break;
	case VPMU_EVAL_JMP_MEM:
		vpmu__alu_init(&s, r);
		if ((r->cr4 & VPMU_CR4_CET) || !vpmu__alu_ea(in, r->rip, &s, r->rsp, true, &at) ||
		    !read_quietly(mem, r, at, &succ))
			return (0);
		break;
	case VPMU_EVAL_CALL:
		if (r->cr4 & VPMU_CR4_CET)
			return (0);
		if (in->flow == VPMU_FLOW_DIRECT)
			succ = in->target;
		else if (in->ind != 0)
			succ = vpmu__regs_gpr(r, in->ind - 1u);
		else {
			vpmu__alu_init(&s, r);
			if (!vpmu__alu_ea(in, r->rip, &s, r->rsp, true, &at) ||
			    !read_quietly(mem, r, at, &succ))
				return (0);
		}
		/* the push, where the page tables need no bit set and the VMM hears of it */
		if (!vpmu__gmem_canonical(&pg, succ) ||
		    !vpmu__gmem_write_as(mem, r, r->rsp - 8, &next, 8))
			return (0);
		set |= VPMU_SET_RSP;
		break;
	default:
		return (0);
	}
	if (!vpmu__gmem_canonical(&pg, succ))
		return (0);
	r->rip = succ;
	r->rcx = rcx;
	if (in->eval == VPMU_EVAL_CALL)
		r->rsp -= 8;
	else if (set & VPMU_SET_RSP)
		r->rsp += 8u + in->pop;
	return (set);
}
