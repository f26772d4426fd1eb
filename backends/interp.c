/*
 * interp.c -- guest instructions run in user space: the exact source's
 * way through code that branches on data, where every run to a
 * breakpoint would cost an exit for a few instructions (vpmu_exact(7),
 * "Instructions run in user space").
 *
 * Only what the registers and guest memory fully determine.  The results
 * and flags come from alu.c (checked against the host processor by
 * test_alu); a flag an instruction leaves undefined is unknown until a
 * later one defines it, and the caller hands registers back only where
 * all are known.  An access is made only where the processor would make
 * it without a fault and without setting an Accessed or Dirty bit
 * (gmem.c); a write goes through the VMM's write function.
 */
#include <string.h>

#include "alu.h"
#include "branch.h"
#include "gmem.h"
#include "interp.h"
#include "regs.h"

#define PAGE_MASK	(~4095ull)
#define REG_RSP		4

void
vpmu__interp_init(struct vpmu_interp *w, const struct vpmu_regs *r)
{
	w->r = *r;
	w->fknown = VPMU_ALU_STATUS;
	w->code_page = 1;
}

/* Can the processor fetch in's bytes at w's RIP, setting no Accessed bit? */
static bool
fetchable(const struct vpmu_gmem *mem, struct vpmu_interp *w, unsigned len)
{
	struct vpmu_gmem_paging pg = VPMU_GMEM_PAGING(&w->r);
	uint64_t first = w->r.rip & PAGE_MASK, last = (w->r.rip + len - 1) & PAGE_MASK;

	if (first == w->code_page && last == first)
		return (true);
	if (!vpmu__gmem_can_fetch_quietly(mem, &pg, w->r.rip, len, w->r.cpl))
		return (false);
	if (last == first)
		w->code_page = first;
	return (true);
}

/* Read size bytes at gva as the guest would (gmem.h). */
static bool
load(const struct vpmu_gmem *mem, const struct vpmu_interp *w, uint64_t gva, unsigned size,
    uint64_t *val)
{
	*val = 0;			/* little-endian: 4 bytes fill the low half */
	return (vpmu__gmem_read_as(mem, &w->r, gva, val, size));
}

static bool
branch(const struct vpmu_gmem *mem, const struct vpmu_insn *in, struct vpmu_interp *w)
{
	struct vpmu_alu_state s;

	/* the flags it reads must be known; a CALL writes (its push) */
	vpmu__alu_init(&s, &w->r);
	s.fknown = w->fknown;
	if ((in->eval == VPMU_EVAL_JCC || (in->eval == VPMU_EVAL_LOOP &&
	    in->cond != VPMU_COND_ALWAYS)) && vpmu__alu_cond(&s, in->cond) < 0)
		return (false);
	if (in->eval == VPMU_EVAL_CALL && w->fknown != VPMU_ALU_STATUS)
		return (false);
	return (vpmu__branch_complete(mem, in, &w->r) != 0);
}

/*
 * An integer instruction alu.c models; one with a memory operand reads it
 * first and, when it writes it, writes it back (only where every flag is
 * known after it: w may be handed back right after).
 */
static bool
alu(const struct vpmu_gmem *mem, const struct vpmu_insn *in, struct vpmu_interp *w)
{
	struct vpmu_alu_state s;
	bool rd = in->alu.a == VPMU_ALU_MEM || in->alu.b == VPMU_ALU_MEM;
	bool wr = in->alu.a == VPMU_ALU_MEM && in->ea_write;
	uint64_t a = 0;
	unsigned n;

	vpmu__alu_init(&s, &w->r);
	s.fknown = w->fknown;
	if (rd) {
		if (in->ea_seg || !vpmu__alu_ea(in, w->r.rip, &s, w->r.rsp, true, &a) ||
		    (wr && w->fknown != VPMU_ALU_STATUS) ||
		    !load(mem, w, a, in->ea_size, &s.m))
			return (false);
		s.mknown = true;
	}
	if (!vpmu__alu_step(&s, in) || s.known != 0xFFFF)
		return (false);		/* a register it writes not worked out */
	if (wr && (s.fknown != VPMU_ALU_STATUS || !vpmu__gmem_write_as(mem, &w->r, a, &s.m, in->ea_size)))
		return (false);
	for (n = 0; n < 16; n++)
		if ((in->writes >> n) & 1)
			vpmu__regs_set_gpr(&w->r, n, s.r[n]);
	w->r.rflags = (w->r.rflags & ~(uint64_t)VPMU_ALU_STATUS) | (s.rflags & VPMU_ALU_STATUS);
	w->fknown = s.fknown;
	return (true);
}

/* PUSH r/imm, POP r: the 8-byte slot at RSP. */
static bool
stack(const struct vpmu_gmem *mem, const struct vpmu_insn *in, struct vpmu_interp *w)
{
	uint64_t val, rsp = w->r.rsp;
	uint16_t dst = (uint16_t)(in->writes & ~(1u << REG_RSP));

	if (in->stack < 0) {
		val = in->src == VPMU_SRC_IMM ? in->src_imm :
		    vpmu__regs_gpr(&w->r, in->src - 1u);
		if (w->fknown != VPMU_ALU_STATUS || !vpmu__gmem_write_as(mem, &w->r, rsp - 8, &val, 8))
			return (false);
		w->r.rsp = rsp - 8;
		return (true);
	}
	/* POP r64: RSP and one other register written */
	if (dst == 0 || (dst & (dst - 1)) != 0 || !load(mem, w, rsp, 8, &val))
		return (false);
	w->r.rsp = rsp + 8;
	vpmu__regs_set_gpr(&w->r, (unsigned)__builtin_ctz(dst), val);
	return (true);
}

bool
vpmu__interp_step(const struct vpmu_gmem *mem, const struct vpmu_insn *in,
    struct vpmu_interp *w)
{
	uint64_t next = w->r.rip + in->len;
	bool ran;

	if (mem == NULL || in == NULL || !w->r.long_mode || in->len == 0 ||
	    !fetchable(mem, w, in->len))
		return (false);
	if (in->eval != VPMU_EVAL_NONE)
		return (branch(mem, in, w));	/* RIP set by branch.c */
	if (in->nop)
		ran = true;
	else if (in->alu.op != VPMU_ALU_NONE && (!in->mem || in->alu.a == VPMU_ALU_MEM ||
	    in->alu.b == VPMU_ALU_MEM))
		ran = alu(mem, in, w);
	else if (in->stack != 0 && (in->stack > 0 || in->src != 0))
		ran = stack(mem, in, w);
	else
		ran = false;
	if (ran)
		w->r.rip = next;
	return (ran);
}
