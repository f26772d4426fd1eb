/*
 * exact_complete.c -- what the exact source retires itself, the guest not
 * running it: at a block's end the branch there (branch.c), a LOOP's
 * rounds in closed form (exact_loop.c) or instructions run in user space
 * (interp.c) (exec_complete); the RDPMC or HLT the core retired
 * (exec_retire); and the breakpoints of the VMM's and the guest's these
 * stop before (exec_stops).
 *
 * Threads: see exact.h; no lock is taken here.
 */
#include <errno.h>
#include <string.h>

#include "internal.h"

#include "exact_internal.h"
#include "branch.h"
#include "interp.h"

/* Is addr an instruction breakpoint of the VMM's or the guest's (exec_stops)? */
bool
vpmu__exact_stop_at(const struct xvcpu *v, uint64_t addr)
{
	unsigned i;

	for (i = 0; i < v->nstops; i++)
		if (v->stops[i] == addr)
			return (true);
	return (false);
}

/*
 * Run the instructions from r in user space (interp.c) while the VMM
 * takes every general register back (VPMU_SYNC_SETGPRS): at most *budget
 * (less them after) and the counters' room, so that the instruction that could
 * overflow a counter still runs on the processor, stepped.  They are
 * counted, and r moved past them, at each point where every status flag
 * is known; instructions after the last such point are left to the
 * processor.  It stops at a LOOP after the first instruction (loop_closed
 * may retire its rounds at once), at a loop's head from which a run would
 * be fast-forwarded (ff_ahead), and never runs while a counter of the
 * vCPU follows its run time (multiplexing windows, time events: these
 * instructions take none) or watchpoints of the VMM's or the guest's are
 * enabled (no_bulk); it stops before their instruction breakpoints
 * (exec_stops).  Returns the VPMU_SET_* bits, or 0 when
 * nothing ran.
 */
static unsigned
interpret(const struct exact *x, struct xvcpu *v, struct vpmu_regs *r, unsigned *budget)
{
	struct vpmu_interp w;
	struct vpmu_insn in;
	struct path p = { 0 };
	uint64_t max = v->room < *budget ? v->room : *budget, done = 0, bad, at;
	unsigned cpl = r->cpl;

	if (!x->interp || !v->setgprs || v->no_bulk || !r->long_mode || (r->rflags & RFLAGS_TF))
		return (0);
	vpmu__interp_init(&w, r);
	while (done + p.n < max) {
		at = w.r.rip;
		if (vpmu__exact_stop_at(v, at))
			break;			/* the processor runs it: it may hit */
		if (vpmu__decode_gva_cached(v->dc, x->mem, PAGING(&w.r), VPMU_DECODE_64, at,
		    &in, &bad) != 0 || (in.eval == VPMU_EVAL_LOOP && done + p.n > 0) ||
		    !vpmu__interp_step(x->mem, &in, &w))
			break;
		vpmu__exact_add(&p, in.branch, cpl);
		if (w.fknown == VPMU_ALU_STATUS) {
			vpmu__exact_count_path(x, v, &p);
			done += p.n;
			p.n = 0;
			*r = w.r;
			/* back at a loop's head the processor may run it faster */
			if (in.branch && w.r.rip <= at && x->ff_max >= 2 &&
			    vpmu__exact_ff_ahead(x, v, r))
				break;
		} else if (p.n == WALK_MAX)
			break;
	}
	if (done == 0)
		return (0);
	*budget -= (unsigned)done;
	v->st.retired += done;
	v->st.completed += done;
	v->st.interp_runs++;
	v->st.interp_insns += done;
	return (VPMU_SET_RIP | VPMU_SET_RSP | VPMU_SET_RCX | VPMU_SET_RFLAGS | VPMU_SET_GPRS);
}

void
vpmu__exact_stops(void *state, unsigned cpu, const uint64_t *addr, unsigned n)
{
	struct exact *x = state;
	struct xvcpu *v;

	if (x == NULL || cpu >= x->nvcpus)
		return;
	v = &x->vcpu[cpu];
	v->nstops = addr == NULL ? 0 : n < VPMU_EXIT_STOPS_MAX ? n : VPMU_EXIT_STOPS_MAX;
	if (v->nstops != 0)
		memcpy(v->stops, addr, v->nstops * sizeof(v->stops[0]));
}

unsigned
vpmu__exact_complete(void *state, unsigned cpu, struct vpmu_regs *r)
{
	struct exact *x = state;
	struct xvcpu *v;
	struct vpmu_insn in;
	struct path p = { 0 };
	unsigned set, one, cpl, n, budget = INTERP_MAX;

	if (x == NULL || r == NULL || cpu >= x->nvcpus)
		return (0);
	v = &x->vcpu[cpu];
	/*
	 * At a block's end; or after a single step, unless the guest steps
	 * itself (its trap comes after the branch) or the step was of an
	 * instruction that may hold interrupts off for the next one (STI, MOV
	 * SS, POP SS: the flag and segment classes, or one not read), whose
	 * shadow stays there.
	 */
	if (!(v->at_end || (v->after_step && !v->step_shadow && !(r->rflags & RFLAGS_TF))) ||
	    !v->known || v->nenabled == 0 || r->rip != v->p.rip ||
	    vpmu__exact_streak_due(v, r->rflags))
		return (0);
	v->at_end = false;
	v->after_step = false;
	/*
	 * The branch, and the ones it leads to (a block of no instructions
	 * cannot run: its breakpoint would be where the vCPU resumes), a
	 * LOOP in closed form or a run in user space, while no counter can
	 * overflow on them (recap: that one is stepped), up to a breakpoint
	 * of the VMM's or the guest's.
	 */
	for (n = 0, set = 0; n < CHAIN_MAX && v->cap > 0 && !vpmu__exact_stop_at(v, r->rip); n++) {
		cpl = r->cpl;
		if (vpmu__exact_fetch(x, v, r, r->rip, &in) != 0)
			break;
		if (vpmu__exact_loop_closed(x, v, &in, r, &one))
			set |= one;
		else if ((one = interpret(x, v, r, &budget)) != 0)
			set |= one;		/* counted there */
		/* a CALL the next run goes through itself (a loop's head, say) */
		else if (in.eval == VPMU_EVAL_NONE ||
		    (n > 0 && in.eval == VPMU_EVAL_CALL && (in.follow || in.ind != 0)) ||
		    (one = vpmu__branch_complete(x->mem, &in, r)) == 0)
			break;
		else {
			set |= one;
			p.n = 0;
			vpmu__exact_add(&p, in.branch, cpl);
			vpmu__exact_account(x, v, W_REACHED, &p, cpl);
			v->st.completed++;
		}
		v->p = *r;
		vpmu__exact_recap(x, v);
	}
	if (set != 0) {
		v->streak++;
		v->planned = false;
	}
	return (set);
}

/*
 * The core retired the instruction at the last synced place itself (an
 * RDPMC it answered, a HLT it halted the vCPU for: vpmu_vcpu(3)); the
 * vCPU goes on at r.  Count it,
 * one instruction and no branch, and plan again from r.
 */
void
vpmu__exact_retire(void *state, unsigned cpu, const struct vpmu_regs *r)
{
	struct exact *x = state;
	struct xvcpu *v;
	struct path p = { 0 };

	if (x == NULL || r == NULL || cpu >= x->nvcpus)
		return;
	v = &x->vcpu[cpu];
	if (v->known && v->nenabled != 0) {
		vpmu__exact_add(&p, false, v->p.cpl);
		vpmu__exact_account(x, v, W_REACHED, &p, v->p.cpl);
	}
	v->st.completed++;
	v->at_end = false;
	v->planned = false;
	v->p = *r;
	vpmu__exact_recap(x, v);
}
