/*
 * exact_step.c -- the exact source's reconstruction: what retired between
 * two exits, worked out by decoding guest code (vpmu__exact_sync).
 *
 * Exactness by reconstruction, not by counting exits.  Per vCPU the
 * source keeps the last retirement point P: the registers at the previous
 * exit.  At each exit the glue reports the new RIP N (vpmu__exact_sync)
 * and the source works out what retired between them:
 *
 *   N == P      nothing (an MSR exit before completion, a chunk of a REP
 *               string), except after a single-step trap on a branch to
 *               itself (JMP $, LOOP $): that branch retired
 *   N != P      decode at P; a non-branch whose successor P + len is N
 *               retired alone.  A successor other than N means the
 *               instruction lost its trap (on kvm_pvm: OUT, LFENCE,
 *               MFENCE, REP strings, IRETQ): count it and go on decoding
 *               at the successor until N is reached, a branch ends the
 *               path (its successor is N), or WALK_MAX instructions pass.
 *               IRET and far RET continue at the return address read
 *               from the stack at P's RSP.
 *   FAULTED,    the instruction at P did not retire; the exception or NMI
 *   NMI         was delivered and N is past the handler's first
 *               instruction: walk from the handler's entry in the IDT.
 *
 * What cannot be read or explained counts as one non-branch instruction
 * (the least that retired when RIP moved) and is recorded in the stats;
 * nothing here crashes on a guest's memory.  Also here: reading the guest
 * (code, stack slots, the IDT) and the user-mode accounting (user_unseen).
 * Exits of block mode's runs go to exact_block.c and exact_loop.c first.
 *
 * Threads: see exact.h; no lock is taken here.
 */
#include <errno.h>
#include <string.h>

#include "internal.h"

#include "exact_internal.h"

/* Why an exit's reconstruction did not reach N (xvcpu.inexact). */
#define INEXACT_LOST	0x1		/* a stand-in: no path, or unreadable code */
#define INEXACT_BRANCH	0x2		/* a branch at P's CPL taken to end at N */

/* ---- reading the guest ------------------------------------------------------ */

static enum vpmu_decode_mode
mode_of(const struct vpmu_regs *r)
{
	if (r->long_mode)
		return (VPMU_DECODE_64);
	return ((r->cr0 & VPMU_CR0_PE) ? VPMU_DECODE_32 : VPMU_DECODE_16);
}

static int
failed(struct xvcpu *v, uint64_t gva)
{
	v->st.fetch_failures++;
	v->st.fail_gva = gva;
	return (EFAULT);
}

/* Read and decode the instruction at gva with r's paging and mode. */
int
vpmu__exact_fetch(const struct exact *x, struct xvcpu *v, const struct vpmu_regs *r, uint64_t gva,
    struct vpmu_insn *in)
{
	uint64_t bad;

	if (vpmu__decode_gva_cached(v->dc, x->mem, PAGING(r), mode_of(r), gva, in, &bad) != 0)
		return (failed(v, bad));
	return (0);
}

/* A return address: the slot-byte value at the stack pointer rsp. */
int
vpmu__exact_read_slot(const struct exact *x, struct xvcpu *v, const struct vpmu_regs *r,
    uint64_t rsp, unsigned slot, uint64_t *val)
{
	uint64_t w = 0;			/* little-endian: a short slot fills the low bytes */
	int got;

	if (slot == 0 || slot > sizeof(w))
		return (EFAULT);
	if ((got = vpmu__gmem_read_gva(x->mem, PAGING(r), rsp, &w, slot)) != (int)slot)
		return (failed(v, rsp + (uint64_t)(got > 0 ? got : 0)));
	*val = w;
	return (0);
}

/* The entry of the handler for vector vec, from r's IDT. */
int
vpmu__exact_handler_entry(const struct exact *x, struct xvcpu *v, const struct vpmu_regs *r,
    unsigned vec, uint64_t *entry)
{
	int error;

	error = vpmu__gmem_idt_entry(x->mem, PAGING(r), r->idt_base, r->idt_limit, vec, entry);
	if (error == EFAULT)
		(void)failed(v, r->idt_base);
	return (error);
}

/* ---- reconstruction ------------------------------------------------------- */

void
vpmu__exact_add(struct path *p, bool branch, unsigned cpl)
{
	if (p->n < WALK_MAX) {
		p->insn[p->n].branch = branch;
		p->insn[p->n].cpl = (uint8_t)cpl;
		p->n++;
	}
}

/*
 * A POPF or IRET that retired loaded the RFLAGS image at addr: one with TF
 * set means the guest steps itself, which the guest debugging the source
 * needs hides from it (vpmu_exact(7), CAVEATS): count it.
 */
static void
note_tf(const struct exact *x, struct xvcpu *v, const struct vpmu_regs *ctx, uint64_t addr)
{
	uint16_t fl;

	if (vpmu__gmem_read_gva(x->mem, PAGING(ctx), addr, &fl, sizeof(fl)) == sizeof(fl) &&
	    (fl & RFLAGS_TF))
		v->st.guest_tf++;
}

/* The successor the plan foresaw for the branch at addr; false: none. */
static bool
foreseen(const struct xvcpu *v, uint64_t addr, uint64_t *succ)
{
	unsigned i;

	for (i = 0; i < v->npred; i++)
		if (v->pred[i].addr == addr) {
			*succ = v->pred[i].succ;
			return (true);
		}
	return (false);
}

/*
 * Follow execution from addr to N (n->rip), adding each instruction to p.
 * With advance, at least one instruction retired even if addr is N (the
 * path went round a loop back to where it started).
 * ctx holds the registers in force at addr (P's, or N's for a handler);
 * rsp_known says ctx->rsp is the stack pointer there.  Instructions after
 * the first are read with N's paging and mode, and after a far return run
 * at N's privilege level.
 */
enum walk_end
vpmu__exact_walk(const struct exact *x, struct xvcpu *v, uint64_t addr, const struct vpmu_regs *ctx,
    bool rsp_known, const struct vpmu_regs *n, struct path *p, unsigned how)
{
	bool advance = (how & WALK_ADVANCE) != 0;
	struct vpmu_insn in;
	unsigned cpl = ctx->cpl, i;
	uint64_t rsp = ctx->rsp, succ;

	for (i = 0; i < WALK_MAX; i++, ctx = n) {
		if (addr == n->rip && !(advance && i == 0))
			return (W_REACHED);
		if (vpmu__exact_fetch(x, v, ctx, addr, &in) != 0) {
			vpmu__exact_add(p, false, cpl);
			return (W_FETCH);
		}
		vpmu__exact_add(p, in.branch, cpl);
		if (i == 0 && in.flags_at != 0 && rsp_known)
			note_tf(x, v, ctx, rsp + in.flags_at - 1u);
		if ((how & WALK_PLAN) && in.flow != VPMU_FLOW_NEXT && foreseen(v, addr, &succ)) {
			if (in.flow == VPMU_FLOW_STACK)
				rsp += 8u + in.pop;
			else if (in.stack < 0)
				rsp -= 8;		/* CALL through a register */
			addr = succ;
			continue;
		}
		switch (in.flow) {
		case VPMU_FLOW_NEXT:
			succ = addr + in.len;
			rsp_known = rsp_known && !in.writes_sp;
			break;
		case VPMU_FLOW_DIRECT:
			if (n->rip == in.target || (in.conditional && n->rip == addr + in.len))
				return (W_REACHED);
			/* a block went on through it (decode.h, follow) */
			if (in.follow && (i > 0 || (how & WALK_FOLLOW))) {
				succ = in.target;
				rsp -= in.writes_sp ? 8 : 0;	/* CALL's push */
				break;
			}
			/* At P the branch retired; later, the path was wrong. */
			return (i == 0 ? W_BRANCH : W_LOST);
		case VPMU_FLOW_STACK:
			if (!rsp_known || vpmu__exact_read_slot(x, v, ctx, rsp, in.slot, &succ) != 0)
				return (W_BRANCH);
			if (succ == n->rip)
				return (W_REACHED);
			if (!in.far_return)
				return (i == 0 ? W_BRANCH : W_LOST);
			/*
			 * IRET, far RET: lost its trap; on at the return address.
			 * A 64-bit IRET pops RSP too (SDM Vol. 2A, IRET), so a
			 * second IRET on the way (an NMI handler's, delivered
			 * before an IRET that then ran) still finds its frame.
			 */
			cpl = n->cpl;
			rsp_known = in.iret && mode_of(ctx) == VPMU_DECODE_64 &&
			    vpmu__exact_read_slot(x, v, ctx, rsp + 3u * in.slot, in.slot, &rsp) == 0;
			break;
		default:
			return (W_BRANCH);
		}
		addr = succ;
	}
	return (addr == n->rip ? W_REACHED : W_LOST);
}

/* Count p (or, for W_LOST, one non-branch at cpl) on v's counters. */
void
vpmu__exact_account(const struct exact *x, struct xvcpu *v, enum walk_end end, struct path *p,
    unsigned cpl)
{
	if (end == W_LOST) {
		p->n = 0;
		vpmu__exact_add(p, false, cpl);
		v->st.unresolved++;
	}
	if (end == W_LOST || end == W_FETCH)
		v->inexact |= INEXACT_LOST;
	else if (end == W_BRANCH && cpl == v->p.cpl)
		v->inexact |= INEXACT_BRANCH;
	if (p->n > 1)
		v->st.lost_traps += p->n - 1;
	v->st.retired += p->n;
	vpmu__exact_count_path(x, v, p);
}

/*
 * N == P.  An exit that is not a single step (an MSR exit before the
 * instruction completes), or a REP string instruction's chunk, retired
 * nothing.  A single step at the same place retired a whole path back to
 * P: a branch to itself, or a loop whose other instructions lost their
 * traps ("1: mfence; lfence; loop 1b" on kvm_pvm).
 */
static void
sync_same(const struct exact *x, struct xvcpu *v, const struct vpmu_regs *r,
    unsigned flags)
{
	struct path p = { 0 };
	struct vpmu_insn in;

	if (!(flags & VPMU_SYNC_STEP) || vpmu__exact_fetch(x, v, &v->p, v->p.rip, &in) != 0 ||
	    in.rep_string)
		return;
	vpmu__exact_account(x, v, vpmu__exact_walk(x, v, v->p.rip, &v->p, true, r, &p, WALK_ADVANCE),
	    &p, r->cpl);
}

/*
 * An exception, NMI or interrupt was delivered instead of the instruction
 * at P: walk from the handler's entry in the IDT.  Preference goes to a
 * path that ends exactly at N: from the handler, else (an injected NMI or
 * interrupt that was not delivered because it was blocked) from P; then to a handler path
 * that ends in a branch or unreadable code.  With no IDT to read, the one
 * instruction that surely retired (the handler's first) is a non-branch.
 */
static void
sync_event(const struct exact *x, struct xvcpu *v, const struct vpmu_regs *r,
    unsigned vec, bool injected)
{
	struct path h = { 0 }, p = { 0 };
	enum walk_end end = W_LOST;
	uint64_t entry;
	bool known;

	if (r->rip == v->p.rip)
		return;			/* the guest did not run: still pending */
	known = vpmu__exact_handler_entry(x, v, r, vec, &entry) == 0;
	if (known && (end = vpmu__exact_walk(x, v, entry, r, false, r, &h, 0)) == W_REACHED) {
		vpmu__exact_account(x, v, end, &h, r->cpl);
		return;
	}
	if (injected && vpmu__exact_walk(x, v, v->p.rip, &v->p, true, r, &p, 0) == W_REACHED) {
		vpmu__exact_account(x, v, W_REACHED, &p, r->cpl);
		return;
	}
	if (known && end != W_LOST) {
		vpmu__exact_account(x, v, end, &h, r->cpl);
		return;
	}
	p.n = 0;
	vpmu__exact_add(&p, false, r->cpl);
	if (known) {
		v->st.unresolved++;
		v->inexact |= INEXACT_LOST;
	}
	vpmu__exact_account(x, v, W_REACHED, &p, r->cpl);
}

/* ---- user mode ----------------------------------------------------------------- */

/*
 * The instruction at P leaves for CPL 3: SYSRET, SYSEXIT, or an IRET or
 * far RET whose frame's CS (the slot above the return address) has RPL 3.
 */
static bool
to_user(const struct exact *x, struct xvcpu *v)
{
	struct vpmu_insn in;
	uint8_t cs;			/* the selector's low byte holds the RPL */

	/* Read again without touching the stats: the walk counted any failure. */
	if (vpmu__decode_gva_cached(v->dc, x->mem, PAGING(&v->p), mode_of(&v->p), v->p.rip, &in,
	    NULL) != 0)
		return (false);
	if (in.to_user)
		return (true);
	return (in.far_return &&
	    vpmu__gmem_read_gva(x->mem, PAGING(&v->p), v->p.rsp + in.slot, &cs, 1) == 1 &&
	    (cs & 3) == 3);
}

/*
 * User-mode code that ran while the source followed the vCPU, unseen: the
 * exit is counted in user_unseen.  The reconstruction fell short of N,
 * and user-mode code was on the way:
 *   - P or N is at CPL 3, and there was no path (or unreadable code), or
 *     a branch taken to end at N that no single step vouches for;
 *   - P and N are below CPL 3 and the instruction at P left for CPL 3: no
 *     exit came from the user code, it was neither stepped nor stopped at
 *     a breakpoint (a step at N, in the kernel, vouches for nothing).
 * Called at every exit, after the reconstruction; counts nothing.
 */
static void
note_user(const struct exact *x, struct xvcpu *v, const struct vpmu_regs *r,
    unsigned flags)
{
	unsigned inexact = v->inexact;

	v->inexact = 0;
	if ((flags & VPMU_SYNC_RESYNC) || !v->known || v->nenabled == 0 ||
	    r->rip == v->p.rip || inexact == 0)
		return;
	if (v->p.cpl == 3 || r->cpl == 3) {
		if ((inexact & INEXACT_LOST) || !(flags & VPMU_SYNC_STEP))
			v->st.user_unseen++;
	} else if (to_user(x, v))
		v->st.user_unseen++;
}

void
vpmu__exact_sync(void *state, unsigned cpu, const struct vpmu_regs *r, unsigned flags)
{
	struct exact *x = state;
	struct xvcpu *v;
	struct path p = { 0 };

	if (x == NULL || r == NULL || cpu >= x->nvcpus)
		return;
	v = &x->vcpu[cpu];
	v->st.syncs++;
	/* at P's level: before P moves */
	vpmu__exact_ref_tsc(x, v, (flags & VPMU_SYNC_HALTED) != 0);
	v->dc->memo.valid = false;	/* the guest ran: its page tables may differ */
	v->setregs = v->setregs || (flags & VPMU_SYNC_SETREGS);
	v->setgprs = (flags & VPMU_SYNC_SETGPRS) != 0;	/* this exit's: complete() */
	v->no_bulk = (flags & (VPMU_SYNC_RUN_TIME | VPMU_SYNC_DEBUGGING)) != 0;
	v->at_end = x->mode == VPMU_EXACT_BLOCK && v->planned && v->bp != 0 &&
	    r->rip == v->bp && !(flags & (VPMU_SYNC_RESYNC | VPMU_SYNC_STEP | VPMU_SYNC_EVENT));
	v->after_step = x->mode == VPMU_EXACT_BLOCK &&
	    (flags & (VPMU_SYNC_RESYNC | VPMU_SYNC_STEP | VPMU_SYNC_EVENT)) == VPMU_SYNC_STEP;
	if (flags & VPMU_SYNC_STEP)
		v->streak = 0;
	else if (v->at_end)
		v->streak++;
	if ((flags & VPMU_SYNC_RESYNC) || !v->known || v->nenabled == 0)
		;			/* nothing to count, or nothing known */
	else if (flags & VPMU_SYNC_EVENT)
		sync_event(x, v, r, VPMU_SYNC_VECTOR(flags), !(flags & VPMU_SYNC_FAULT));
	else if (!(flags & VPMU_SYNC_STEP) && v->planned && v->ff.on) {
		/* a fast-forwarded loop; the first round's path would mislead */
		if (!vpmu__exact_sync_ff(x, v, r))
			vpmu__exact_account(x, v, W_LOST, &p, r->cpl);
	}
	else if (!(flags & VPMU_SYNC_STEP) && vpmu__exact_sync_block_fault(x, v, r))
		;			/* the instructions before a fault */
	else if (v->at_end && v->npred != 0 && !vpmu__alu_agrees(&v->alu, r)) {
		/*
		 * The run reached its end with registers other than its
		 * foreseen branches imply: one went another way (the guest
		 * changed its code, or alu.c is wrong).  Its path is not
		 * known; nothing more is foreseen on this vCPU.
		 */
		v->st.mispredicted++;
		v->nopredict = true;
		vpmu__exact_account(x, v, W_LOST, &p, r->cpl);
	} else if (r->rip == v->p.rip)
		sync_same(x, v, r, flags);
	else
		vpmu__exact_account(x, v, vpmu__exact_walk(x, v, v->p.rip, &v->p, true, r, &p,
		    (flags & VPMU_SYNC_STEP) ? 0 : WALK_FOLLOW |
		    (x->mode == VPMU_EXACT_BLOCK && v->planned && v->bp != 0 ? WALK_PLAN : 0)),
		    &p, r->cpl);
	note_user(x, v, r, flags);
	v->p = *r;
	v->known = true;
	v->planned = false;
	vpmu__exact_recap(x, v);
}
