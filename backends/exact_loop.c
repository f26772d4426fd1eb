/*
 * exact_loop.c -- loops in the exact source's block mode: fast-forward
 * (a loop run to its exit in one go, its rounds counted from its loop
 * counter: plan_ff, sync_ff, ff_ahead) and closed form (a LOOP's rounds
 * retired without running them: loop_closed).
 *
 * Threads: see exact.h; no lock is taken here.
 */
#include <errno.h>
#include <string.h>

#include "internal.h"

#include "exact_internal.h"

/* The loop counter of v's fast-forwarded loop in r (or memory); false: unreadable. */
static bool
ff_counter(const struct exact *x, const struct xvcpu *v, const struct vpmu_regs *r,
    uint64_t *c)
{
	uint64_t m = 0;		/* little-endian: a dword fills the low half */

	if (v->ff.mem) {
		if (vpmu__gmem_read_gva(x->mem, PAGING(r), v->ff.mea, &m, v->ff.dword ? 4 : 8) !=
		    (v->ff.dword ? 4 : 8))
			return (false);
	} else
		m = vpmu__regs_gpr(r, v->ff.reg);
	*c = v->ff.dword ? (uint32_t)m : m;
	return (true);
}

/*
 * The rounds that take v's loop counter from `from` to `to` (in its
 * width), adding delta each: false when no whole number does.
 */
static bool
ff_rounds(const struct xvcpu *v, uint64_t from, uint64_t to, uint64_t *n)
{
	uint64_t mask = v->ff.dword ? 0xFFFFFFFFull : UINT64_MAX;
	uint64_t top = v->ff.dword ? 1ull << 31 : 1ull << 63, d = v->ff.delta & mask, num;

	if (d == 0)
		return (false);
	if (d & top) {			/* counting down */
		num = (from - to) & mask;
		d = (0 - d) & mask;
	} else
		num = (to - from) & mask;
	if (num % d != 0)
		return (false);
	*n = num / d;
	return (true);
}

/*
 * The address of the memory counter of in, the last instruction of the
 * loop body b from P: its address registers are not written in the body
 * (the same slot every round), nothing else in the body writes memory,
 * and the slot lies within a page of P's RSP, on the vCPU's own stack,
 * where nothing but the loop writes it while the loop runs.
 */
#define FF_SLOT_NEAR	4096
static bool
ff_slot(const struct xvcpu *v, const struct vpmu_insn *in, const struct body *b, uint64_t *slot)
{
	struct vpmu_alu_state p;

	if (in->ea_index != 0 || in->ea_base == 0 || in->ea_base == VPMU_EA_RIP ||
	    b->nwr[in->ea_base - 1u] != 0 || b->nwmem != 1)
		return (false);
	vpmu__alu_init(&p, &v->p);		/* the base is P's every round */
	return (vpmu__alu_ea(in, b->last_addr, &p, v->p.rsp, true, slot) &&
	    *slot + FF_SLOT_NEAR >= v->p.rsp && *slot <= v->p.rsp + FF_SLOT_NEAR);
}

/*
 * Loops retired without running them.  A LOOP (RCX counting, no
 * condition) back over a body of at most BODY_MAX instructions, each of
 * them
 *   NOP;
 *   DEC, INC, SUB imm or ADD imm of a register (vpmu_insn.count): the
 *     register moves by the same amount every round;
 *   MOV r, [m] (vpmu_insn.load) from an address whose registers move that
 *     way or not at all, into a register nothing else in the body reads or
 *     writes: only the last round's value is left;
 * with RCX the LOOP's alone and RSP untouched, leaves after k rounds what
 * follows from the registers alone: each moved register its start plus k
 * times its move, each loaded one the value at its last address, the
 * status flags of the last round's last DEC/INC/SUB/ADD.  The source
 * retires such rounds at the LOOP (loop_closed), as many as no counter can
 * overflow in, where every load can be made without a fault and without
 * setting an Accessed bit (vpmu__gmem_can_read_quietly: the guest's memory
 * then holds what running them would have left), up to CLOSED_PAGES page
 * checks.  LOOP $ is the empty body.
 */
#define BODY_MAX	(WALK_MAX - 1)
#define CLOSED_PAGES	65536
#define REG_RCX		1u
#define REG_RSP		4u

struct closed {
	unsigned n;			/* body instructions, head .. the LOOP */
	struct vpmu_insn in[BODY_MAX];
	uint64_t addr[BODY_MAX];
	uint64_t move[16];		/* what a round adds to each register */
	uint16_t moved;			/* registers DEC/INC/SUB/ADD change ... */
	uint16_t moved32;		/* ... in their low halves (zero-extended) */
	uint16_t loaded;		/* registers the loads write */
	uint16_t addressing;		/* registers their addresses are made of */
	uint32_t wflags;		/* status flags the body writes */
};

/* Is the body from head up to the LOOP at end one that closed form follows? */
static bool
closed_body(const struct exact *x, struct xvcpu *v, const struct vpmu_regs *r, uint64_t head,
    uint64_t end, struct closed *b)
{
	const struct vpmu_insn *in;
	uint64_t a = head;
	unsigned reg;

	memset(b, 0, sizeof(*b));
	while (a != end) {
		if (b->n == BODY_MAX || a > end)
			return (false);
		in = &b->in[b->n];
		if (vpmu__exact_fetch(x, v, r, a, &b->in[b->n]) != 0 || !in->in_block)
			return (false);
		b->addr[b->n++] = a;
		a += in->len;
		if (in->nop)
			continue;
		if (in->count != 0) {
			reg = (unsigned)VPMU_COUNT_REG(in->count);
			if (in->writes != (1u << reg) || (((b->moved >> reg) & 1) &&
			    ((b->moved32 >> reg) & 1) != ((in->count & VPMU_COUNT_32) != 0)))
				return (false);
			b->moved |= (uint16_t)(1u << reg);
			if (in->count & VPMU_COUNT_32)
				b->moved32 |= (uint16_t)(1u << reg);
			b->move[reg] -= in->step;
			b->wflags |= in->wflags;
		} else if (in->load != 0 && !in->ea_seg) {
			reg = (unsigned)VPMU_COUNT_REG(in->load);
			if (in->writes != (1u << reg))
				return (false);
			b->loaded |= (uint16_t)(1u << reg);
			if (in->ea_base != 0 && in->ea_base != VPMU_EA_RIP)
				b->addressing |= (uint16_t)(1u << (in->ea_base - 1u));
			if (in->ea_index != 0)
				b->addressing |= (uint16_t)(1u << (in->ea_index - 1u));
		} else
			return (false);
	}
	return (!((b->moved | b->loaded) & (1u << REG_RCX | 1u << REG_RSP)) &&
	    !(b->loaded & (b->moved | b->addressing)) && !(b->addressing & b->moved32) &&
	    !(b->addressing & (1u << REG_RCX)));
}

/* Register reg of s after k more rounds of b (a moved one). */
static uint64_t
moved_by(const struct closed *b, uint64_t val, unsigned reg, uint64_t k)
{
	val += k * b->move[reg];
	return (((b->moved32 >> reg) & 1) ? (uint32_t)val : val);
}

/*
 * The address of b's load i in the first round from r (its registers as
 * they are at the round's start, plus the moves before i), and what each
 * round adds to it: the address is affine in the registers, so the
 * second round's less the first's.
 */
static void
load_at(const struct closed *b, unsigned i, const struct vpmu_regs *r, uint64_t *a,
    uint64_t *stride)
{
	struct vpmu_alu_state s;
	unsigned j, reg;
	uint64_t a2;

	vpmu__alu_init(&s, r);
	for (j = 0; j < i; j++)
		if (b->in[j].count != 0)
			s.r[VPMU_COUNT_REG(b->in[j].count)] -= b->in[j].step;
	(void)vpmu__alu_ea(&b->in[i], b->addr[i], &s, r->rsp, true, a);
	for (reg = 0; reg < 16; reg++)
		s.r[reg] += b->move[reg];
	(void)vpmu__alu_ea(&b->in[i], b->addr[i], &s, r->rsp, true, &a2);
	*stride = a2 - *a;
}

/*
 * Of k rounds of b from r, how many the loads allow: every access to be
 * made without a fault or a new Accessed bit, one page check per page an
 * access moves onto.
 */
static uint64_t
loads_allow(const struct exact *x, const struct closed *b, const struct vpmu_regs *r,
    uint64_t k)
{
	const struct vpmu_gmem_paging *pg = PAGING(r);
	bool ac = (r->rflags & RFLAGS_AC) != 0;
	uint64_t a0[BODY_MAX], s[BODY_MAX], j = 0, a, room, adv, checks = 0;
	unsigned i;

	for (i = 0; i < b->n; i++)
		if (b->in[i].load != 0)
			load_at(b, i, r, &a0[i], &s[i]);
	while (j < k) {			/* round j + 1: its accesses, then the rounds
					   that stay on the same pages */
		adv = k - j;
		for (i = 0; i < b->n; i++) {
			if (b->in[i].load == 0 || (j > 0 && s[i] == 0))
				continue;
			a = a0[i] + j * s[i];
			if (++checks > CLOSED_PAGES ||
			    !vpmu__gmem_can_read_quietly(x->mem, pg, a, b->in[i].ea_size, r->cpl, ac))
				return (j);
			if (s[i] == 0)
				continue;
			/* rounds after this one whose access stays on these pages */
			if ((int64_t)s[i] > 0)
				room = ((a | 4095) - (a + b->in[i].ea_size - 1)) / s[i];
			else
				room = (a & 4095) / (0 - s[i]);
			if ((a & ~4095ull) != ((a + b->in[i].ea_size - 1) & ~4095ull))
				room = 0;
			if (room + 1 < adv)
				adv = room + 1;
		}
		j += adv;
	}
	return (k);
}

/*
 * At a LOOP at r that closed form follows (closed_body): retire it and as
 * many whole rounds after it as the counters' room and the loads allow,
 * none of them run; counted, and r set past them.  *set: the registers
 * changed.  false: not such a LOOP, or no round to retire.
 */
bool
vpmu__exact_loop_closed(const struct exact *x, struct xvcpu *v, const struct vpmu_insn *loop,
    struct vpmu_regs *r, unsigned *set)
{
	struct closed b;
	struct vpmu_alu_state s;
	struct path p = { 0 };
	uint64_t left, k, val, a, stride;
	unsigned i, reg;

	if (loop->eval != VPMU_EVAL_LOOP || loop->cond != VPMU_COND_ALWAYS ||
	    loop->target > r->rip || !r->long_mode || r->rcx == 1 ||
	    !closed_body(x, v, r, loop->target, r->rip, &b))
		return (false);
	/*
	 * From here a refusal, or rounds left over, sends the next run from
	 * the head to the loop's exit (fast-forwarded by running, where it
	 * can be) rather than round by round to this LOOP.
	 */
	if (((b.moved | b.loaded) != 0 && !v->setgprs) || v->room < 2 || v->no_bulk)
		goto refuse;
	for (i = 0; i < b.n; i++)		/* a breakpoint in the rounds */
		if (vpmu__exact_stop_at(v, b.addr[i]))
			goto refuse;
	left = r->rcx - 1;		/* the rounds after this LOOP */
	k = (v->room - 1) / (b.n + 1);
	if (k > left)
		k = left;
	if (b.loaded != 0)
		k = loads_allow(x, &b, r, k);
	if (k == 0)
		goto refuse;
	if (k < left)
		v->closed_no = loop->target;
	/* the flags: the last round's DEC/INC/SUB/ADD, on its registers */
	vpmu__alu_init(&s, r);
	for (reg = 0; reg < 16; reg++)
		if ((b.moved >> reg) & 1)
			s.r[reg] = moved_by(&b, s.r[reg], reg, k - 1);
	for (i = 0; i < b.n; i++)
		if (b.in[i].count != 0)
			vpmu__alu_step(&s, &b.in[i]);
	if ((s.fknown & b.wflags) != b.wflags)
		goto refuse;
	for (reg = 0; reg < 16; reg++)
		if (((b.moved >> reg) & 1) &&
		    (!((s.known >> reg) & 1) || s.r[reg] != moved_by(&b, vpmu__regs_gpr(r, reg), reg, k)))
			goto refuse;	/* alu.c and the moves disagree: run it */
	/* the loads of the last round, in order */
	for (i = 0; i < b.n; i++) {
		if (b.in[i].load == 0)
			continue;
		load_at(&b, i, r, &a, &stride);
		val = 0;
		if (vpmu__gmem_read_gva(x->mem, PAGING(r), a + (k - 1) * stride, &val,
		    b.in[i].ea_size) != b.in[i].ea_size)
			goto refuse;
		s.r[VPMU_COUNT_REG(b.in[i].load)] = val;
	}
	/* counted: this LOOP, then k rounds */
	vpmu__exact_add(&p, loop->branch, r->cpl);
	vpmu__exact_count_path(x, v, &p);
	p.n = 0;
	for (i = 0; i < b.n; i++)
		vpmu__exact_add(&p, false, r->cpl);
	vpmu__exact_add(&p, loop->branch, r->cpl);
	vpmu__exact_count_path_n(x, v, &p, k);
	v->st.retired += 1 + k * (b.n + 1);
	v->st.completed += 1 + k * (b.n + 1);
	v->st.closed_loops++;
	v->st.closed_insns += k * (b.n + 1);
	for (reg = 0; reg < 16; reg++)
		if (((b.moved | b.loaded) >> reg) & 1)
			vpmu__regs_set_gpr(r, reg, s.r[reg]);
	r->rflags = (r->rflags & ~(uint64_t)b.wflags) | (s.rflags & b.wflags);
	r->rcx -= 1 + k;
	r->rip = r->rcx == 0 ? r->rip + loop->len : loop->target;
	*set = VPMU_SET_RCX | VPMU_SET_RIP | (b.wflags != 0 ? VPMU_SET_RFLAGS : 0) |
	    ((b.moved | b.loaded) != 0 ? VPMU_SET_GPRS : 0);
	return (true);
refuse:
	v->closed_no = loop->target;
	return (false);
}

/*
 * Will the LOOP at end, back to P, be retired at its exit in closed form
 * (loop_closed)?  Then its block ends at the LOOP instead of running the
 * rounds.  Once loop_closed refused the loop or left rounds over (a load
 * it could not make, a counter about to overflow), the next run from that
 * head runs them.
 */
static bool
closed_at(const struct exact *x, struct xvcpu *v, uint64_t end)
{
	struct closed b;

	if (v->closed_no == v->p.rip) {
		v->closed_no = 0;
		return (false);
	}
	return (v->setregs && !v->no_bulk && closed_body(x, v, &v->p, v->p.rip, end, &b) &&
	    ((b.moved | b.loaded) == 0 || v->setgprs));
}

/*
 * Loop fast-forward: the block from P (its instructions in b) ends at
 * addr in end, a branch back to P that loops until a counter register
 * (or stack slot) reaches an end value:
 *   LOOP                     RCX, less 1 a round, to 0;
 *   DEC/INC/SUB/ADD r; JNZ   r by the step, to 0;
 *   DEC/INC/SUB/ADD m; JNZ   the slot m (ff_slot) by the step, to 0;
 *   CMP r, s|imm; JNE        r, changed once a round by a DEC/INC/SUB/ADD
 *                            in the body, to s (not written) or imm.
 * No other instruction of the body may write the counter.  The body may
 * go through JMP and CALL rel and RETs to its own CALLs, which go the same
 * way every round (calls in the loop), but through no branch whose way
 * was foreseen from the registers (plan(): varying).  A number of
 * rounds that no whole number gives (the counter would pass the end and
 * wrap) is not fast-forwarded.  The rounds run to a breakpoint at the
 * loop's exit when the counters' room and ff_max allow them all, so the
 * overflow, if any, comes with the last.  true: v->ff set.
 */
bool
vpmu__exact_plan_ff(const struct exact *x, struct xvcpu *v, const struct vpmu_insn *end,
    uint64_t addr, unsigned k, const struct body *b)
{
	const struct vpmu_insn *last = &b->last;
	uint64_t n, len = (uint64_t)k + 1, mask;
	unsigned r, s;

	if (x->ff_max < 2 || end->flow != VPMU_FLOW_DIRECT || end->target != v->p.rip)
		return (false);
	if (end->eval == VPMU_EVAL_LOOP && end->cond == VPMU_COND_ALWAYS) {
		r = 1;				/* RCX */
		if (b->nwr[r] != 0 || closed_at(x, v, addr))
			return (false);
		v->ff.dword = false;
		v->ff.delta = UINT64_MAX;	/* -1 */
		v->ff.cend = 0;
		v->ff.inc = addr;
	} else if (end->eval == VPMU_EVAL_JCC && end->cond == 0x5 && last->count != 0) {
		r = (unsigned)VPMU_COUNT_REG(last->count);	/* DEC...; JNZ */
		if (b->nwr[r] != 1)
			return (false);
		v->ff.dword = (last->count & VPMU_COUNT_32) != 0;
		v->ff.delta = 0 - last->step;
		v->ff.cend = 0;
		v->ff.inc = b->last_addr;
	} else if (end->eval == VPMU_EVAL_JCC && end->cond == 0x5 && last->mcount != 0) {
		/* DEC... m; JNZ: a counter on this vCPU's own stack (near RSP) */
		if (!ff_slot(v, last, b, &v->ff.mea))
			return (false);
		r = 0;
		v->ff.mem = true;
		v->ff.dword = last->mcount == 4;
		v->ff.delta = 0 - last->step;
		v->ff.cend = 0;
		v->ff.inc = b->last_addr;
	} else if (end->eval == VPMU_EVAL_JCC && end->cond == 0x5 && last->cmp != 0) {
		r = (unsigned)VPMU_COUNT_REG(last->cmp);	/* CMP; JNE */
		s = last->cmp_with != 0 ? (unsigned)VPMU_COUNT_REG(last->cmp_with) : 16;
		if (s < 16 && b->nwr[r] == 0) {			/* CMP bound, r */
			r = s;
			s = (unsigned)VPMU_COUNT_REG(last->cmp);
		}
		/* r changed once a round, by a DEC/INC/SUB/ADD of the CMP's width */
		if (b->nwr[r] != 1 || (s < 16 && b->nwr[s] != 0) || b->wr[r].count == 0 ||
		    VPMU_COUNT_REG(b->wr[r].count) != (int)r ||
		    (b->wr[r].count & VPMU_COUNT_32) != (last->cmp & VPMU_COUNT_32))
			return (false);
		v->ff.dword = (last->cmp & VPMU_COUNT_32) != 0;
		mask = v->ff.dword ? 0xFFFFFFFFull : UINT64_MAX;
		v->ff.delta = 0 - b->wr[r].step;
		v->ff.cend = (s < 16 ? vpmu__regs_gpr(&v->p, s) : last->cmp_imm) & mask;
		v->ff.inc = b->wr_addr[r];
	} else
		return (false);
	v->ff.reg = r;
	if (!ff_counter(x, v, &v->p, &v->ff.c0) ||
	    !ff_rounds(v, v->ff.c0, v->ff.cend, &n) || n < 2 || n > x->ff_max / len ||
	    n * len > v->room)
		return (false);
	v->ff.on = true;
	v->ff.len = (unsigned)len;
	v->ff.head = v->p.rip;
	v->ff.end = addr;
	v->ff.n = n;
	return (true);
}

/*
 * The exit of a fast-forwarded loop's run: at its exit after all n
 * iterations, or inside it (a fault stopped at a handler's entry, the
 * faulting instruction's address from the frame; an exit of the
 * monitor's), where the loop counter tells the iterations that retired
 * (the DEC/SUB/ADD at the end of the body has run once more when the vCPU
 * is at the JNZ).  false: not such an exit, or one that does not add up.
 */
bool
vpmu__exact_sync_ff(const struct exact *x, struct xvcpu *v, const struct vpmu_regs *r)
{
	struct vpmu_regs at = *r, out = v->p;
	struct path one = { 0 }, part = { 0 };
	uint64_t c, done;
	unsigned i;

	for (i = 0; v->hmem && i < NFAULT_VECS && v->hbp[i] != r->rip; i++)
		;
	if (r->rip != v->bp && v->hmem && i < NFAULT_VECS &&
	    vpmu__exact_read_slot(x, v, r, r->rsp + 8, 8, &at.rip) != 0)
		return (false);
	/* the rounds whose counting instruction ran */
	if (!ff_counter(x, v, r, &c) || !ff_rounds(v, v->ff.c0, c, &done))
		return (false);
	if (at.rip == v->bp) {
		if (c != v->ff.cend || done != v->ff.n)
			return (false);
	} else if (at.rip >= v->ff.head && at.rip <= v->ff.end) {
		/* past the counting instruction: it has run in this round too */
		if (at.rip > v->ff.inc)
			done--;
		if (done >= v->ff.n ||
		    vpmu__exact_walk(x, v, v->ff.head, &v->p, true, &at, &part,
		    WALK_FOLLOW | WALK_PLAN) != W_REACHED)
			return (false);
	} else
		return (false);
	out.rip = v->bp;
	if (vpmu__exact_walk(x, v, v->ff.head, &v->p, true, &out, &one, WALK_FOLLOW | WALK_PLAN) !=
	    W_REACHED ||
	    one.n != v->ff.len)
		return (false);
	vpmu__exact_count_path_n(x, v, &one, done);
	v->st.retired += done * one.n;
	v->st.ff_insns += done * one.n;
	if (at.rip != r->rip)
		v->st.block_faults++;
	vpmu__exact_account(x, v, W_REACHED, &part, v->p.cpl);
	return (true);
}

/*
 * Would the run from r fast-forward a loop (plan_ff)?  Asked where a run
 * of instructions in user space comes back to a loop's head: the
 * processor runs such a loop at its own speed, one exit for all of it.
 * A head found not to is remembered (the last FF_NO), so that a loop whose
 * rounds branch on data is not planned round after round.
 */
bool
vpmu__exact_ff_ahead(const struct exact *x, struct xvcpu *v, const struct vpmu_regs *r)
{
	struct vpmu_regs p = v->p;
	uint64_t bp = v->bp, closed_no = v->closed_no;
	bool shadow = v->step_shadow, on;
	unsigned i;

	for (i = 0; i < FF_NO; i++)
		if (v->ff_no[i] == r->rip)
			return (false);
	v->p = *r;
	vpmu__exact_recap(x, v);
	vpmu__exact_plan_from(x, v, true);
	on = v->ff.on;
	v->p = p;
	v->bp = bp;
	v->closed_no = closed_no;
	v->step_shadow = shadow;
	v->ff.on = false;
	v->planned = false;
	if (!on)
		v->ff_no[v->ff_no_next++ % FF_NO] = r->rip;
	return (on);
}
