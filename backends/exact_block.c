/*
 * exact_block.c -- the exact source's block planner (block mode,
 * docs/exact-blocks.md): from the last retirement point P, how far the
 * vCPU may run to a breakpoint instead of single-stepping (plan_from),
 * through JMP/CALL rel and branches foreseen from registers (alu.c),
 * the breakpoints armed for it (exec_wants, exec_breaks), and the exit of
 * a block stopped at a fault handler's entry.  Loops found here are
 * fast-forwarded or closed by exact_loop.c.
 *
 * Threads: see exact.h; no lock is taken here.
 */
#include <errno.h>
#include <string.h>

#include "internal.h"

#include "exact_internal.h"

/*
 * The exceptions an instruction a block may hold can raise (decode.h,
 * in_block): a memory operand's #PF, #GP and #SS.  All three push an
 * error code.  A block runs with breakpoints on their handlers' entries,
 * so a fault inside it stops at the handler before it runs.  (#AC needs
 * CPL 3 with CR0.AM and RFLAGS.AC: such code is stepped.)
 */
static const unsigned fault_vecs[] = { 14, 13, 12 };

/* ---- blocks ------------------------------------------------------------------ */

/* Is the step that lets interrupts and NMIs in due (STREAK_MAX)? */
bool
vpmu__exact_streak_due(const struct xvcpu *v, uint64_t rflags)
{
	return (v->streak >= ((rflags & RFLAGS_IF) ? STREAK_MAX : STREAK_NMI_MAX));
}

/*
 * The fewest instructions a block ending at addr in end is planned for.
 * BLOCK_MIN, unless the source completes that branch: then 1 when no
 * switch from single-steps to breakpoints is needed (the last run was a
 * block too, the end is armed already) or round a loop (the branch goes
 * back to the block's start), else 2 (the switch, an ioctl, against at
 * least one exit saved).
 */
static bool
armed(const struct xvcpu *v, uint64_t addr)
{
	unsigned i;

	for (i = 0; i < VPMU_DEBUG_BP_MAX; i++)
		if (v->arm[i] == addr && v->used[i] != 0)
			return (true);
	return (false);
}

static unsigned
short_min(const struct xvcpu *v, const struct vpmu_insn *end, uint64_t addr, bool breaking)
{
	if (end->eval == VPMU_EVAL_NONE || !v->setregs || vpmu__exact_streak_due(v, v->p.rflags))
		return (BLOCK_MIN);
	if (breaking || armed(v, addr) ||
	    (end->flow == VPMU_FLOW_DIRECT && end->target == v->p.rip))
		return (1);
	return (2);
}

/*
 * Arm need[0..n) (n <= VPMU_DEBUG_BP_MAX; need[0] the run's end) for the
 * planned run: a slot already holding an address keeps it, unless the run
 * executes it (it would stop early, or at its start); new addresses go to
 * free slots, else to the least recently
 * used one no need of this run holds.  A free slot keeps its old address
 * (outside the run, it cannot stop it) or repeats need[0].
 */
/* Does the planned run execute the instruction at addr? */
static bool
in_run(const struct xvcpu *v, uint64_t addr)
{
	unsigned i;

	for (i = 0; i < v->nseg; i++)
		if (addr >= v->seg[i].lo && addr < v->seg[i].hi)
			return (true);
	return (false);
}

static void
arm(struct xvcpu *v, const uint64_t *need, unsigned n)
{
	bool mine[VPMU_DEBUG_BP_MAX] = { false };
	unsigned i, j, best;

	v->tick++;
	for (i = 0; i < VPMU_DEBUG_BP_MAX; i++)
		if (v->used[i] != 0 && in_run(v, v->arm[i]))
			v->used[i] = 0;
	for (j = 0; j < n; j++) {
		for (i = 0; i < VPMU_DEBUG_BP_MAX &&
		    !(v->used[i] != 0 && v->arm[i] == need[j]); i++)
			;
		if (i == VPMU_DEBUG_BP_MAX) {
			for (i = best = 0; i < VPMU_DEBUG_BP_MAX; i++)
				if (!mine[i] && (mine[best] || v->used[i] < v->used[best]))
					best = i;
			i = best;
			v->arm[i] = need[j];
		}
		v->used[i] = v->tick;
		mine[i] = true;
	}
	for (i = 0; i < VPMU_DEBUG_BP_MAX; i++)
		if (v->used[i] == 0 && (v->arm[i] == 0 || in_run(v, v->arm[i])))
			v->arm[i] = need[0];
}

/*
 * Can the stack access of in (vpmu_insn.stack), with RSP sp, not fault?
 * Then a block holding it needs no handler breakpoints for it.  Not under
 * CET (its shadow stack); a non-canonical slot (#SS) is not accessible.
 */
static bool
stack_safe(const struct exact *x, const struct xvcpu *v, const struct vpmu_insn *in,
    uint64_t sp, bool sp_known)
{
	uint64_t slot = in->stack < 0 ? sp - 8 : sp;

	if (in->stack == 0 || !sp_known || (v->p.cr4 & VPMU_CR4_CET))
		return (false);
	return (vpmu__gmem_can_access(x->mem, PAGING(&v->p), slot, 8, in->stack < 0, v->p.cpl,
	    (v->p.rflags & RFLAGS_AC) != 0));
}

/*
 * Can the access of in at addr not fault?  Its address from the registers
 * the run knows before it (v->alu, kept only while branches are foreseen)
 * and sp; then the guest's page tables at P say whether it may be made.
 * Not under CET.
 */
static bool
ea_safe(const struct exact *x, const struct xvcpu *v, const struct vpmu_insn *in, uint64_t addr,
    uint64_t sp, bool sp_known)
{
	uint64_t a;

	return (!(v->p.cr4 & VPMU_CR4_CET) &&
	    vpmu__alu_ea(in, addr, x->foresee && !v->nopredict ? &v->alu : NULL, sp, sp_known, &a) &&
	    vpmu__gmem_can_access(x->mem, PAGING(&v->p), a, in->ea_size, in->ea_write,
	    v->p.cpl, (v->p.rflags & RFLAGS_AC) != 0));
}

static void
body_add(struct body *b, const struct vpmu_insn *in, uint64_t addr)
{
	unsigned n;

	for (n = 0; n < 16; n++)
		if (in->writes & (1u << n)) {
			b->nwr[n]++;
			b->wr_addr[n] = addr;
			b->wr[n] = *in;
		}
	if (in->wmem || in->stack < 0)
		b->nwmem++;
	b->last = *in;
	b->last_addr = addr;
}

/*
 * The successor of the branch in at addr, known before the run: a Jcc
 * whose flags follow from P's registers (s, alu.c), a JMP or CALL through
 * a register whose value follows from them, or a near RET to the
 * address a CALL of the run pushed (rets[0..nrets), the last on top; 0 a
 * slot not known), with nothing else written to memory since.  0: not
 * known, the branch ends the block.  The successor must be canonical (the
 * branch would fault otherwise).
 */
static uint64_t
foresee(const struct xvcpu *v, const struct vpmu_alu_state *s, const struct vpmu_insn *in,
    uint64_t addr, const uint64_t *rets, unsigned nrets)
{
	uint64_t succ;
	int c;

	if (in->eval == VPMU_EVAL_JCC && (c = vpmu__alu_cond(s, in->cond)) >= 0)
		succ = c ? in->target : addr + in->len;
	else if (in->ind != 0 && (s->known & (1u << (in->ind - 1))))
		succ = s->r[in->ind - 1];
	else if (in->eval == VPMU_EVAL_RET && in->pop == 0 && nrets > 0 &&
	    !(v->p.cr4 & VPMU_CR4_CET))
		succ = rets[nrets - 1];
	else
		return (0);
	return (vpmu__gmem_canonical(PAGING(&v->p), succ) ? succ : 0);
}

/*
 * From P, the instructions a block may hold (decode.h, in_block), at most
 * cap of them; the breakpoint goes on the first one after them, or, for a
 * loop that can be fast-forwarded, on its exit.  Fewer than BLOCK_MIN (P
 * ends a block itself, or its code cannot be read), short_min() aside:
 * single-step.
 * Blocks need a linear address for the breakpoint, so 64-bit code only
 * (CS base 0); other modes step.  probe: only find out whether the run
 * from P would fast-forward a loop (v->ff.on), counting and arming
 * nothing (ff_ahead).
 */
void
vpmu__exact_plan_from(const struct exact *x, struct xvcpu *v, bool probe)
{
	struct vpmu_insn in;
	uint64_t addr = v->p.rip, bp, need[VPMU_DEBUG_BP_MAX];
	unsigned i, k, cap = __atomic_load_n(&v->cap, __ATOMIC_RELAXED);
	bool ends = false;		/* in is the instruction after the block */
	bool mem = false;		/* an instruction of the block may fault */
	bool any = false;		/* one accesses memory */
	bool sp_known = true;		/* sp: RSP before the instruction */
	uint64_t sp = v->p.rsp;
	struct body b;
	bool breaking = v->bp != 0;	/* the last run was a block: no switch */
	unsigned varying = 0;		/* branches the run goes through whose way
					   may differ from round to round (Jcc and
					   JMP/CALL through a register, foreseen);
					   JMP/CALL rel and a RET to the run's own
					   CALL go the same way every round */
	uint64_t succ, rets[RET_MAX];	/* return addresses the run's CALLs pushed */
	unsigned nrets = 0;
	unsigned why = VPMU_STEP_OTHER;	/* why the loop stopped: a step's reason */
	/* the plan as it was at the last branch it went through */
	struct {
		bool	 set;
		uint64_t addr;
		unsigned k, nseg, npred, varying;
		bool	 mem, any;
		struct vpmu_insn in;
		struct vpmu_alu_state alu;
	} mark = { .set = false };

	memset(&b, 0, sizeof(b));
	v->npred = 0;
	vpmu__alu_init(&v->alu, &v->p);
	v->dc->memo.valid = false;
	v->planned = true;
	v->plan_cap = cap;
	v->bp = 0;
	v->ff.on = false;
	v->ff.mem = false;
	v->step_shadow = true;		/* a step whose instruction is not read */
	/*
	 * TF: the guest steps itself; #AC possible: step.  So after
	 * STREAK_MAX runs and completions: interrupts, held back while
	 * breakpoints are armed, come in at steps (a loop whose branches are
	 * all foreseen or completed would never take one otherwise).
	 */
	if (!v->p.long_mode || (v->p.rflags & RFLAGS_TF) ||
	    vpmu__exact_streak_due(v, v->p.rflags) ||
	    (v->p.cpl == 3 && (v->p.cr0 & CR0_AM) && (v->p.rflags & RFLAGS_AC))) {
		if (!probe)
			v->st.step_why[!v->p.long_mode ? VPMU_STEP_NOT_64BIT :
			    (v->p.rflags & RFLAGS_TF) ? VPMU_STEP_GUEST_TF :
			    vpmu__exact_streak_due(v, v->p.rflags) ? VPMU_STEP_STREAK :
			    VPMU_STEP_ALIGN_CHECK]++;
		return;
	}
	v->nseg = 1;
	v->seg[0].lo = v->seg[0].hi = addr;
	for (k = 0; ; k++) {
		ends = vpmu__decode_gva_cached(v->dc, x->mem, PAGING(&v->p), VPMU_DECODE_64,
		    addr, &in, NULL) == 0;
		/* in: the instruction at addr, the end when the block stops here */
		why = !ends ? VPMU_STEP_UNREADABLE : k == cap ? VPMU_STEP_CAP : VPMU_STEP_RUN;
		if (!ends || k == cap || in_run(v, addr))
			break;
		succ = in.follow ? in.target : 0;
		why = in.stop != 0 ? in.stop : VPMU_STEP_OTHER;
		if (!(in.in_block || in.follow) && (!x->foresee || v->nopredict ||
		    v->npred == PRED_MAX ||
		    (succ = foresee(v, &v->alu, &in, addr, rets, nrets)) == 0))
			break;
		/* On through JMP/CALL rel and foreseen branches, unless back into the run. */
		v->seg[v->nseg - 1].hi = addr + in.len;
		why = VPMU_STEP_RUN;
		if (succ != 0 && (in_run(v, succ) || v->nseg == WALK_MAX))
			break;
		if (succ != 0) {
			mark.set = true;
			mark.addr = addr;
			mark.k = k;
			mark.nseg = v->nseg;
			mark.npred = v->npred;
			mark.varying = varying;
			mark.mem = mem;
			mark.any = any;
			mark.in = in;
			mark.alu = v->alu;
		}
		/* a foreseen RET reads the slot the run's CALL wrote */
		mem = mem || (in.mem && in.eval != VPMU_EVAL_RET &&
		    !stack_safe(x, v, &in, sp, sp_known) && !ea_safe(x, v, &in, addr, sp, sp_known));
		body_add(&b, &in, addr);
		if (x->foresee && !v->nopredict)
			vpmu__alu_step(&v->alu, &in);
		any = any || in.mem;
		if (in.wmem || (in.writes_sp && in.stack == 0 && in.eval != VPMU_EVAL_RET))
			nrets = 0;		/* the return addresses may be gone */
		if (in.stack < 0) {		/* PUSH, CALL */
			if (nrets == RET_MAX)
				memmove(rets, rets + 1, sizeof(rets[0]) * --nrets);
			rets[nrets++] = in.branch ? addr + in.len : 0;	/* CALL */
		} else if (in.stack > 0 || in.eval == VPMU_EVAL_RET)
			nrets -= nrets > 0;	/* POP, RET */
		if (in.stack != 0 || in.eval == VPMU_EVAL_RET)
			sp += in.eval == VPMU_EVAL_RET ? 8 : (uint64_t)(int64_t)in.stack;
		else if (in.writes_sp)
			sp_known = false;
		addr += in.len;
		if (!in.in_block && !in.follow) {
			v->pred[v->npred].addr = addr - in.len;
			v->pred[v->npred].succ = succ;
			v->npred++;
		}
		if (succ != 0) {
			varying += in.eval == VPMU_EVAL_JCC || in.ind != 0;
			if (succ != addr) {	/* a new piece, unless a Jcc falls through */
				addr = succ;
				v->seg[v->nseg].lo = v->seg[v->nseg].hi = addr;
				v->nseg++;
			}
		}
	}
	/*
	 * Fell through into the run (a breakpoint there would stop it
	 * early): the block ends at the last branch it went through instead.
	 */
	v->seg[v->nseg - 1].hi = addr;
	if (ends && in_run(v, addr)) {
		if (!mark.set) {
			v->st.step_why[VPMU_STEP_RUN] += !probe;
			return;
		}
		addr = mark.addr;
		k = mark.k;
		v->nseg = mark.nseg;
		v->npred = mark.npred;
		varying = mark.varying + 1;	/* no fast-forward: b holds more */
		mem = mark.mem;
		any = mark.any;
		in = mark.in;
		v->alu = mark.alu;
		v->seg[v->nseg - 1].hi = addr;
	}
	/* a loop of its branch alone (LOOP $, a delay loop): k 0 */
	if (ends && (k >= 1 || in.eval == VPMU_EVAL_LOOP) && varying == 0 &&
	    vpmu__exact_plan_ff(x, v, &in, addr, k, &b) && !probe) {
		bp = addr + in.len;
		v->seg[0].hi = bp;
		mem = any;		/* later rounds: not checked */
	} else if (probe)
		return;
	else if (k >= (ends ? short_min(v, &in, addr, breaking) : BLOCK_MIN))
		bp = addr;
	else {
		/* The first instruction's reason; or a block too short. */
		v->st.step_why[k == 0 ? why : VPMU_STEP_SHORT]++;
		/* k > 0: the first instruction is a block's, in_block */
		v->step_shadow = k == 0 && (!ends || in.stop == VPMU_STEP_FLAGS ||
		    in.stop == VPMU_STEP_SEGMENT);
		return;
	}
	/*
	 * A block that accesses memory may fault: it stops at the handlers'
	 * entries.  No handler entry to stop at: a fault would run its
	 * handler unseen.  One at P: its breakpoint would stop the run before
	 * it starts.
	 */
	need[0] = bp;
	v->hmem = mem;
	for (i = 0; mem && i < NFAULT_VECS; i++) {
		if (vpmu__exact_handler_entry(x, v, &v->p, fault_vecs[i], &v->hbp[i]) != 0 ||
		    v->hbp[i] == v->p.rip) {
			v->ff.on = false;
			v->st.step_why[VPMU_STEP_NO_HANDLER]++;
			return;
		}
		need[1 + i] = v->hbp[i];
	}
	arm(v, need, mem ? 1 + NFAULT_VECS : 1);
	v->bp = bp;
	v->st.blocks++;
	v->st.block_insns += k;
	v->st.foreseen += v->npred;
	if (v->ff.on)
		v->st.ff_loops++;
}

/*
 * A block stopped at a fault handler's entry N (its breakpoint): the
 * instruction at the frame's return address faulted, those from P up to
 * it retired.  The 64-bit frame at N's RSP: error code, then RIP.  false:
 * not such a stop (or no path from P to the faulting instruction): the
 * caller reconstructs the exit as any other.
 */
bool
vpmu__exact_sync_block_fault(const struct exact *x, struct xvcpu *v, const struct vpmu_regs *r)
{
	struct vpmu_regs at = *r;
	struct path p = { 0 };
	unsigned i;

	if (x->mode != VPMU_EXACT_BLOCK || !v->planned || v->bp == 0 || r->rip == v->bp ||
	    !v->hmem)
		return (false);
	for (i = 0; i < NFAULT_VECS && v->hbp[i] != r->rip; i++)
		;
	/*
	 * The faulting instruction is one of the block's (in_run): one
	 * elsewhere means the breakpoint did not stop the run (CPL 3 code on
	 * some hosts, vpmu_exact(7) HOST FACTS).
	 */
	if (i == NFAULT_VECS || vpmu__exact_read_slot(x, v, r, r->rsp + 8, 8, &at.rip) != 0 ||
	    !in_run(v, at.rip) ||
	    vpmu__exact_walk(x, v, v->p.rip, &v->p, true, &at, &p, WALK_FOLLOW | WALK_PLAN) !=
	    W_REACHED)
		return (false);
	v->st.block_faults++;
	vpmu__exact_account(x, v, W_REACHED, &p, v->p.cpl);
	return (true);
}

static void
plan(const struct exact *x, struct xvcpu *v)
{
	vpmu__exact_plan_from(x, v, false);
}

unsigned
vpmu__exact_wants(void *state, unsigned cpu)
{
	struct exact *x = state;
	struct xvcpu *v;

	if (!vpmu__exact_wants_step(state, cpu))
		return (0);
	v = &x->vcpu[cpu];
	if (x->mode != VPMU_EXACT_BLOCK || !v->known) {
		v->st.step_why[x->mode != VPMU_EXACT_BLOCK ? VPMU_STEP_MODE : VPMU_STEP_UNKNOWN]++;
		v->step_shadow = true;
		return (VPMU_DEBUG_STEP);
	}
	/* A period set since (by any thread) changes the cap: plan again. */
	if (!v->planned || v->plan_cap != __atomic_load_n(&v->cap, __ATOMIC_RELAXED))
		plan(x, v);
	return (v->bp != 0 ? VPMU_DEBUG_BREAK : VPMU_DEBUG_STEP);
}

unsigned
vpmu__exact_breaks(void *state, unsigned cpu, uint64_t *bp, unsigned max, unsigned *need)
{
	const struct exact *x = state;
	const struct xvcpu *v;
	unsigned i, n = 0, must = 0;

	if (x == NULL || bp == NULL || max < VPMU_DEBUG_BP_MAX || cpu >= x->nvcpus)
		return (0);
	v = &x->vcpu[cpu];
	if (!v->planned || v->bp == 0)
		return (0);
	/* this plan's (arm(): the end, the handlers); the rest are kept ends */
	for (i = 0; i < VPMU_DEBUG_BP_MAX; i++) {
		if (v->used[i] == v->tick)
			must |= 1u << i;
		bp[n++] = v->arm[i];
	}
	if (need != NULL)
		*need = must;
	return (n);
}

uint64_t
vpmu__exact_end(void *state, unsigned cpu)
{
	const struct exact *x = state;

	if (x == NULL || cpu >= x->nvcpus || !x->vcpu[cpu].planned)
		return (0);
	return (x->vcpu[cpu].bp);
}
