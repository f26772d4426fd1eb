/*
 * exact.c -- the "exact" host source: the guest's retired instructions,
 * branches and modelled cycles, reconstructed from single-step exits or,
 * in block mode, from exits at breakpoints the source plans (blocks,
 * completed branches, fast-forwarded loops: the "blocks" part below).
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
 * nothing here crashes on a guest's memory.  vpmu_exact(7) has the model,
 * the cycle model and the limits.
 *
 * Threads: see exact.h; no lock is taken here.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "internal.h"
#include <vpmu/model.h>

#include "alu.h"
#include "branch.h"
#include "decode.h"
#include "exact.h"
#include "interp.h"
#include "regs.h"

#define WALK_MAX	32	/* instructions one exit can account for */
#define BLOCK_MAX	(WALK_MAX - 1)	/* instructions a block runs before its
					   breakpoint: the walk reaches it */
/*
 * Shorter runs are stepped: a block costs two exits (its breakpoint, the
 * step of the instruction that ends it) and two changes of the debug
 * registers, each an ioctl that costs about an exit on kvm_pvm, so below
 * four instructions stepping is as fast (DEC/JNZ: twice as fast).
 */
#define BLOCK_MIN	4
/*
 * A block that ends in a branch the source completes itself (branch.c,
 * when the VMM writes registers back) costs one exit and, round a loop, no
 * ioctl: shorter ones pay (short_min).  After STREAK_MAX runs and
 * completions in a row one instruction is single-stepped when RFLAGS.IF is
 * set: interrupts and NMIs, held back while breakpoints are armed, are
 * delivered at steps.  With IF clear no interrupt can come in, and only an
 * NMI could: then the step waits for IF, or for STREAK_NMI_MAX (streak_due).
 */
#define STREAK_MAX	32
#define STREAK_NMI_MAX	256
#define RFLAGS_IF	(1ull << 9)
#define CHAIN_MAX	8	/* branches completed at one exit */
/*
 * Branches inside a run (foresee()): conditional jumps whose flags the run
 * computes from registers known at P (alu.c), JMPs and CALLs through a
 * register it knows the same way (the processor makes the CALL's push), and
 * RETs to an address a CALL of the same run pushed.  At most PRED_MAX a
 * run; RET_MAX return addresses followed.
 */
#define PRED_MAX	8
#define RET_MAX		8
#define FF_MAX_DEFAULT	(1ull << 24)	/* vpmu_exact_params.ff_max 0 */
/*
 * The most instructions one exit runs in user space (interpret()): the
 * time they take, some tens of microseconds, holds back interrupts as a
 * run would.
 */
#define INTERP_MAX	4096
#define FF_NO		4	/* loop heads ff_ahead remembers */

/*
 * The exceptions an instruction a block may hold can raise (decode.h,
 * in_block): a memory operand's #PF, #GP and #SS.  All three push an
 * error code.  A block runs with breakpoints on their handlers' entries,
 * so a fault inside it stops at the handler before it runs.  (#AC needs
 * CPL 3 with CR0.AM and RFLAGS.AC: such code is stepped.)
 */
static const unsigned fault_vecs[] = { 14, 13, 12 };
#define NFAULT_VECS	3
#define CR0_AM		(1ull << 18)
#define RFLAGS_TF	(1ull << 8)
#define RFLAGS_AC	(1ull << 18)

#define EVF_MODES	(VPMU_EVF_USR | VPMU_EVF_OS)
#define EVF_ALL		(VPMU_EVF_USR | VPMU_EVF_OS | VPMU_EVF_EDGE | VPMU_EVF_INV)

/* A counter: one modelled event on one vCPU. */
struct xctr {
	struct xctr *next;
	unsigned vcpu;
	uint32_t event;			/* INSTRUCTIONS, BRANCHES, CYCLES, REF_CYCLES */
	uint32_t flags;			/* VPMU_EVF_* */
	uint32_t cmask;
	bool	 enabled;
	bool	 cond;			/* EDGE: the condition in its last cycle */
	uint64_t value;
	uint64_t ns;			/* CLOCK_MONOTONIC ns enabled before `since` */
	uint64_t since;			/* when last enabled */
	uint64_t left;			/* set_period: events to the overflow, 0: none */
	uint64_t armed;			/* value when left was set */
	uint64_t tsc;			/* reference cycles by time (ref_tsc): the
					   TSC up to which they are counted */
};

/* One retired instruction, as the counting model needs it. */
struct retired {
	bool	branch;
	uint8_t	cpl;
};

struct path {
	unsigned n;
	struct retired insn[WALK_MAX];
};

/* Per vCPU; touched by its thread and by the hooks, under the VM lock. */
struct xvcpu {
	struct xctr *ctrs;
	unsigned nenabled;
	bool	 known;			/* p is the last retirement point */
	struct vpmu_regs p;
	struct vpmu_exact_stats st;
	unsigned inexact;		/* how this exit's reconstruction fell short
					   of N (INEXACT_*): note_user() */
	/* Block mode: the plan for the run from p, made by the vCPU's thread. */
	unsigned cap;			/* instructions a block may run before some
					   counter could overflow (under the VM lock;
					   read without it: atomic) */
	bool	 planned;		/* bp says what to do from p */
	unsigned plan_cap;		/* the cap it was planned with */
	uint64_t bp;			/* the block's breakpoint; 0: single-step */
	uint64_t hbp[NFAULT_VECS];	/* with it: the entries of fault_vecs' handlers */
	bool	 hmem;			/* ... armed: the block accesses memory */
	/* the addresses the planned run executes: [lo, hi) pieces, JMP/CALL between */
	unsigned nseg;
	struct {
		uint64_t lo, hi;
	} seg[WALK_MAX];
	/*
	 * The breakpoints armed, slot by slot: the block's end, the handlers
	 * it needs, and ends of earlier blocks kept (none inside the block),
	 * so that the debug registers change only when a block ends somewhere
	 * new.  used: when a slot last served a plan (0: a filler).
	 */
	uint64_t arm[VPMU_DEBUG_BP_MAX];
	uint64_t used[VPMU_DEBUG_BP_MAX];
	uint64_t tick;
	uint64_t room;			/* instructions before some counter could
					   overflow (cap without BLOCK_MAX) */
	/*
	 * A loop fast-forwarded from p: the run goes to its exit (bp), n
	 * iterations of len instructions, head .. end (the branch); c0 is
	 * the loop counter (register reg, its low half with dword) at the
	 * start.
	 */
	struct {
		bool	 on;
		bool	 dword;		/* the counter is the register's low half */
		unsigned reg;		/* its register (RAX 0 .. R15 15) */
		bool	 mem;		/* ... or a stack slot at mea, not a register */
		uint64_t mea;
		unsigned len;
		uint64_t head, end, n, c0;
		uint64_t delta;		/* what a round adds to it (in its width) */
		uint64_t cend;		/* its value when the loop ends */
		uint64_t inc;		/* the instruction that changes it (LOOP: end) */
	} ff;
	/*
	 * Branches the planned run goes through, their successors known
	 * ahead (foresee()), and the registers and flags the run leaves at
	 * bp as far as they follow from P's: checked at the exit.
	 */
	unsigned npred;
	struct {
		uint64_t addr, succ;
	} pred[PRED_MAX];
	struct vpmu_alu_state alu;
	bool	 nopredict;		/* a run did not end as foreseen: no more */
	bool	 at_end;		/* the last exit stopped at bp */
	bool	 after_step;		/* ... was a single step of block mode's */
	bool	 step_shadow;		/* the instruction it stepped may have left an
					   interrupt shadow (STI, MOV SS, POP SS, or
					   not known) */
	bool	 setregs;		/* the VMM takes completed branches */
	bool	 setgprs;		/* ... and every general register, at this
					   exit (exec_complete after it) */
	bool	 no_bulk;		/* retire in bulk nothing the vCPU does not
					   run, at this exit (VPMU_SYNC_RUN_TIME,
					   VPMU_SYNC_DEBUGGING) */
	unsigned nstops;		/* the VMM's and the guest's instruction
					   breakpoints at this exit (exec_stops) */
	uint64_t stops[VPMU_EXIT_STOPS_MAX];
	uint64_t ff_no[FF_NO];		/* loop heads the last probes found no
					   fast-forward from (ff_ahead) */
	unsigned ff_no_next;
	uint64_t closed_no;		/* a loop head whose next run is not retired
					   in closed form (loop_closed) */
	unsigned streak;		/* runs ended at their breakpoint and branches
					   completed since the last step */
	struct vpmu_dcache *dc;		/* instructions decoded (the vCPU's thread) */
};

struct exact {
	unsigned nvcpus;
	unsigned cpi;			/* core cycles per instruction */
	unsigned ref_cpi;		/* reference cycles per instruction; 0: they
					   follow the TSC (ref_tsc) */
	unsigned vendors;		/* VENDOR_* bits: the guest's vendor, or both
					   when not known */
	unsigned mode;			/* VPMU_EXACT_STEP or VPMU_EXACT_BLOCK */
	bool	 foresee;		/* branches inside runs (foresee()) */
	bool	 interp;		/* instructions run in user space (interpret()) */
	uint64_t ff_max;		/* vpmu_exact_params.ff_max, 0 resolved */
	const struct vpmu_gmem *mem;
	struct xvcpu *vcpu;
};

/*
 * Raw event selects that name a modelled event: event[7:0] | umask << 8 |
 * AMD EventSelect[11:8] << 16, as the guest-visible models fill
 * vpmu_event_spec.raw.  Intel: SDM Vol. 3B, 20.2.1.2 (architectural
 * events); AMD: PPR "Core Performance Monitor Counters".  A code counts
 * only for the vendors of its row: 0xC4 is taken branches on AMD, 0xC2
 * retired micro-ops on Intel.  With no vendor given, only rows valid for
 * both match -- and the models already turn their own vendor's codes into
 * named events, so what reaches here raw from a guest is exactly the
 * other vendor's codes, which must not match.
 */
#define VENDOR_INTEL	(1u << VPMU_VENDOR_INTEL)
#define VENDOR_AMD	(1u << VPMU_VENDOR_AMD)
static const struct {
	uint64_t raw;
	unsigned vendors;
	uint32_t event;
} raw_events[] = {
	/* Intel INST_RETIRED.ANY_P; AMD Retired Instructions */
	{ 0x00C0, VENDOR_INTEL | VENDOR_AMD, VPMU_EV_INSTRUCTIONS },
	{ 0x00C4, VENDOR_INTEL, VPMU_EV_BRANCHES },	/* BR_INST_RETIRED.ALL_BRANCHES */
	{ 0x003C, VENDOR_INTEL, VPMU_EV_CYCLES },	/* CPU_CLK_UNHALTED.THREAD_P */
	{ 0x013C, VENDOR_INTEL, VPMU_EV_REF_CYCLES },	/* CPU_CLK_UNHALTED.REF_XCLK */
	{ 0x00C2, VENDOR_AMD,	VPMU_EV_BRANCHES },	/* Retired Branch Instructions */
	{ 0x0076, VENDOR_AMD,	VPMU_EV_CYCLES },	/* Cycles not in Halt */
};

/* The modelled event ev counts, or VPMU_EV_NONE. */
static uint32_t
modelled(const struct exact *x, const struct vpmu_event_spec *ev)
{
	size_t i;

	switch (ev->event) {
	case VPMU_EV_INSTRUCTIONS:
	case VPMU_EV_BRANCHES:
	case VPMU_EV_CYCLES:
	case VPMU_EV_REF_CYCLES:
		return (ev->event);
	case VPMU_EV_RAW:
		for (i = 0; i < VPMU_ARRAY_SIZE(raw_events); i++)
			if (raw_events[i].raw == ev->raw &&
			    (raw_events[i].vendors & x->vendors) == x->vendors)
				return (raw_events[i].event);
		return (VPMU_EV_NONE);
	default:
		return (VPMU_EV_NONE);
	}
}

static uint64_t
now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ((uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec);
}

/* Why an exit's reconstruction did not reach N (xvcpu.inexact). */
#define INEXACT_LOST	0x1		/* a stand-in: no path, or unreadable code */
#define INEXACT_BRANCH	0x2		/* a branch at P's CPL taken to end at N */

/* ---- the counting model --------------------------------------------------- */

/*
 * What one instruction adds to counter c: it spans n cycles of the
 * counter's clock; each of the first n - 1 cycles carries `other` events,
 * the last carries `last`.  Without CMASK and EDGE the counter adds the
 * events; with them it counts cycles whose events reach CMASK (INV: stay
 * below it), and with EDGE only the cycles where that condition turns
 * true.  EDGE without CMASK uses CMASK 1; INV without CMASK or EDGE does
 * nothing (there is no comparison to invert).
 */
static uint64_t
cycles(struct xctr *c, uint64_t n, uint64_t other, uint64_t last)
{
	bool edge = (c->flags & VPMU_EVF_EDGE) != 0, inv = (c->flags & VPMU_EVF_INV) != 0;
	uint64_t cm = c->cmask, v = 0;
	bool co, cl;

	if (cm == 0 && !edge)
		return ((n - 1) * other + last);
	if (cm == 0)
		cm = 1;
	co = inv ? other < cm : other >= cm;
	cl = inv ? last < cm : last >= cm;
	if (!edge)
		return ((n - 1) * co + cl);
	if (n > 1) {
		v += co && !c->cond;
		c->cond = co;
	}
	v += cl && !c->cond;
	c->cond = cl;
	return (v);
}

static bool
cpl_counts(uint32_t flags, unsigned cpl)
{
	switch (flags & EVF_MODES) {
	case VPMU_EVF_USR:
		return (cpl > 0);
	case VPMU_EVF_OS:
		return (cpl == 0);
	default:			/* both, or 0: both */
		return (true);
	}
}

/*
 * Reference cycles by time (ref_cpi 0).  The SDM's unhalted reference
 * cycles tick at the TSC's rate while the processor is not halted, and a
 * guest's TSC runs at the host's unless its VMM scales it: a counter adds
 * the host TSC's advance since its enable, or since it was last counted,
 * at every exit (the same clock the guest's RDTSC reads), except over a
 * run the vCPU spent halted (VPMU_SYNC_HALTED), and only at the privilege
 * levels it counts, taken as the level the run began at (P's).  Unlike
 * the other events they depend on the host's speed, and blocks do not
 * stop at their overflows: the exit after it brings the PMI.
 */
static bool
by_time(const struct exact *x, const struct xctr *c)
{
	return (x->ref_cpi == 0 && c->event == VPMU_EV_REF_CYCLES);
}

static uint64_t
tsc_now(void)
{
	return (__builtin_ia32_rdtsc());
}

/* The level a run that begins now runs at, as far as the source knows. */
static unsigned
run_cpl(const struct xvcpu *v)
{
	return (v->known ? v->p.cpl : 0);
}

/* What counter c, counted by time, adds up to TSC now at level cpl. */
static uint64_t
ref_pending(const struct xctr *c, unsigned cpl, uint64_t now)
{
	if (!c->enabled || now <= c->tsc || !cpl_counts(c->flags, cpl))
		return (0);
	return (now - c->tsc);
}

/* v's counters counted by time, up to now; a halted run adds nothing. */
static void
ref_tsc(const struct exact *x, struct xvcpu *v, bool halted)
{
	uint64_t now = tsc_now();
	struct xctr *c;

	for (c = v->ctrs; c != NULL; c = c->next)
		if (by_time(x, c) && c->enabled) {
			if (!halted)
				c->value += ref_pending(c, run_cpl(v), now);
			c->tsc = now;
		}
}

/* What the instructions of p add to counter c, once. */
static uint64_t
path_events(const struct exact *x, struct xctr *c, const struct path *p)
{
	uint64_t v = 0;
	unsigned i;

	for (i = 0; i < p->n; i++) {
		if (!cpl_counts(c->flags, p->insn[i].cpl))
			continue;
		switch (c->event) {
		case VPMU_EV_INSTRUCTIONS:
			v += cycles(c, x->cpi, 0, 1);
			break;
		case VPMU_EV_BRANCHES:
			v += cycles(c, x->cpi, 0, p->insn[i].branch);
			break;
		case VPMU_EV_CYCLES:
			v += cycles(c, x->cpi, 1, 1);
			break;
		case VPMU_EV_REF_CYCLES:
			if (x->ref_cpi != 0)	/* else by time: ref_tsc() */
				v += cycles(c, x->ref_cpi, 1, 1);
			break;
		}
	}
	return (v);
}

/*
 * p retired times times over (a fast-forwarded loop: times iterations of
 * one path).  Without EDGE a pass adds the same events every time.  With
 * it the condition carries from one pass to the next, but a pass ends in
 * the same state whatever it started in (the path is the same), so from
 * the second pass on every pass adds what the second did.
 */
static void
count_path_n(const struct exact *x, struct xvcpu *v, const struct path *p, uint64_t times)
{
	struct xctr *c;

	for (c = v->ctrs; c != NULL; c = c->next) {
		if (!c->enabled || times == 0)
			continue;
		if (!(c->flags & VPMU_EVF_EDGE))
			c->value += times * path_events(x, c, p);
		else {
			c->value += path_events(x, c, p);
			if (times > 1)
				c->value += (times - 1) * path_events(x, c, p);
		}
	}
}

static void
count_path(const struct exact *x, struct xvcpu *v, const struct path *p)
{
	count_path_n(x, v, p, 1);
}

/* ---- reading the guest ------------------------------------------------------ */

#define PAGING(r)	(&VPMU_GMEM_PAGING(r))

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
static int
fetch(const struct exact *x, struct xvcpu *v, const struct vpmu_regs *r, uint64_t gva,
    struct vpmu_insn *in)
{
	uint64_t bad;

	if (vpmu__decode_gva_cached(v->dc, x->mem, PAGING(r), mode_of(r), gva, in, &bad) != 0)
		return (failed(v, bad));
	return (0);
}

/* A return address: the slot-byte value at the stack pointer rsp. */
static int
read_slot(const struct exact *x, struct xvcpu *v, const struct vpmu_regs *r, uint64_t rsp,
    unsigned slot, uint64_t *val)
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
static int
handler_entry(const struct exact *x, struct xvcpu *v, const struct vpmu_regs *r,
    unsigned vec, uint64_t *entry)
{
	int error;

	error = vpmu__gmem_idt_entry(x->mem, PAGING(r), r->idt_base, r->idt_limit, vec, entry);
	if (error == EFAULT)
		(void)failed(v, r->idt_base);
	return (error);
}

/* ---- reconstruction ------------------------------------------------------- */

enum walk_end {
	W_REACHED,			/* the path ends at N */
	W_BRANCH,			/* it ends with a branch whose successor is not
					   known: taken to be N */
	W_FETCH,			/* code could not be read: the unreadable
					   instruction counts as one non-branch */
	W_LOST,				/* no path to N */
};

static void
add(struct path *p, bool branch, unsigned cpl)
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

/*
 * Follow execution from addr to N (n->rip), adding each instruction to p.
 * With advance, at least one instruction retired even if addr is N (the
 * path went round a loop back to where it started).
 * ctx holds the registers in force at addr (P's, or N's for a handler);
 * rsp_known says ctx->rsp is the stack pointer there.  Instructions after
 * the first are read with N's paging and mode, and after a far return run
 * at N's privilege level.
 */
#define WALK_ADVANCE	0x1	/* at least one instruction, even if addr is N */
#define WALK_FOLLOW	0x2	/* a JMP or CALL rel at addr ran on to its target
				   (a block's start); later ones always do */
#define WALK_PLAN	0x4	/* the planned run's branches went where foreseen */

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

static enum walk_end
walk(const struct exact *x, struct xvcpu *v, uint64_t addr, const struct vpmu_regs *ctx,
    bool rsp_known, const struct vpmu_regs *n, struct path *p, unsigned how)
{
	bool advance = (how & WALK_ADVANCE) != 0;
	struct vpmu_insn in;
	unsigned cpl = ctx->cpl, i;
	uint64_t rsp = ctx->rsp, succ;

	for (i = 0; i < WALK_MAX; i++, ctx = n) {
		if (addr == n->rip && !(advance && i == 0))
			return (W_REACHED);
		if (fetch(x, v, ctx, addr, &in) != 0) {
			add(p, false, cpl);
			return (W_FETCH);
		}
		add(p, in.branch, cpl);
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
			if (!rsp_known || read_slot(x, v, ctx, rsp, in.slot, &succ) != 0)
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
			    read_slot(x, v, ctx, rsp + 3u * in.slot, in.slot, &rsp) == 0;
			break;
		default:
			return (W_BRANCH);
		}
		addr = succ;
	}
	return (addr == n->rip ? W_REACHED : W_LOST);
}

/* Count p (or, for W_LOST, one non-branch at cpl) on v's counters. */
static void
account(const struct exact *x, struct xvcpu *v, enum walk_end end, struct path *p,
    unsigned cpl)
{
	if (end == W_LOST) {
		p->n = 0;
		add(p, false, cpl);
		v->st.unresolved++;
	}
	if (end == W_LOST || end == W_FETCH)
		v->inexact |= INEXACT_LOST;
	else if (end == W_BRANCH && cpl == v->p.cpl)
		v->inexact |= INEXACT_BRANCH;
	if (p->n > 1)
		v->st.lost_traps += p->n - 1;
	v->st.retired += p->n;
	count_path(x, v, p);
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

	if (!(flags & VPMU_SYNC_STEP) || fetch(x, v, &v->p, v->p.rip, &in) != 0 ||
	    in.rep_string)
		return;
	account(x, v, walk(x, v, v->p.rip, &v->p, true, r, &p, WALK_ADVANCE), &p, r->cpl);
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
	known = handler_entry(x, v, r, vec, &entry) == 0;
	if (known && (end = walk(x, v, entry, r, false, r, &h, 0)) == W_REACHED) {
		account(x, v, end, &h, r->cpl);
		return;
	}
	if (injected && walk(x, v, v->p.rip, &v->p, true, r, &p, 0) == W_REACHED) {
		account(x, v, W_REACHED, &p, r->cpl);
		return;
	}
	if (known && end != W_LOST) {
		account(x, v, end, &h, r->cpl);
		return;
	}
	p.n = 0;
	add(&p, false, r->cpl);
	if (known) {
		v->st.unresolved++;
		v->inexact |= INEXACT_LOST;
	}
	account(x, v, W_REACHED, &p, r->cpl);
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

/* ---- blocks ------------------------------------------------------------------ */

/* Is the step that lets interrupts and NMIs in due (STREAK_MAX)? */
static bool
streak_due(const struct xvcpu *v, uint64_t rflags)
{
	return (v->streak >= ((rflags & RFLAGS_IF) ? STREAK_MAX : STREAK_NMI_MAX));
}

/*
 * How many instructions can run before the one that could overflow an
 * enabled counter (room; cap: at most BLOCK_MAX): blocks, fast-forwarded
 * loops and completed branches stay within it, so the instruction that
 * overflows a counter is always single-stepped, the overflow is seen at
 * the exit right after it, and the PMI's entry follows a step, as under
 * single-step (an NMI queued at the entry that switches from breakpoints
 * to single-step left RFLAGS.TF in the handler's frame: tf_hidden.c).  A
 * counter adds at most its clock's cycles per instruction (CPI: every
 * event counts at most once a cycle).  Past an overflow the next is taken
 * `left` events further: never later than the real one.  Under the VM
 * lock.
 */
static void
recap(const struct exact *x, struct xvcpu *v)
{
	const struct xctr *c;
	uint64_t room = UINT64_MAX, rem, per;

	for (c = v->ctrs; c != NULL; c = c->next) {
		if (!c->enabled || c->left == 0 || by_time(x, c))
			continue;
		rem = c->left - (c->value - c->armed) % c->left;
		per = c->event == VPMU_EV_REF_CYCLES ? x->ref_cpi : x->cpi;
		/* ceil(rem / per) instructions could reach it: one fewer cannot */
		if ((rem + per - 1) / per - 1 < room)
			room = (rem + per - 1) / per - 1;
	}
	v->room = room;
	__atomic_store_n(&v->cap, (unsigned)(room < BLOCK_MAX ? room : BLOCK_MAX),
	    __ATOMIC_RELAXED);
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
	if (end->eval == VPMU_EVAL_NONE || !v->setregs || streak_due(v, v->p.rflags))
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

/* What plan() learns of a block's instructions, for plan_ff(). */
struct body {
	uint8_t	 nwr[16];		/* instructions writing each register */
	uint64_t wr_addr[16];		/* the last of them, its address */
	uint8_t	 nwmem;			/* instructions writing memory */
	struct vpmu_insn wr[16];	/* ... and itself */
	struct vpmu_insn last;		/* the block's last instruction */
	uint64_t last_addr;
};

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

/* Is addr an instruction breakpoint of the VMM's or the guest's (exec_stops)? */
static bool
stop_at(const struct xvcpu *v, uint64_t addr)
{
	unsigned i;

	for (i = 0; i < v->nstops; i++)
		if (v->stops[i] == addr)
			return (true);
	return (false);
}

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
		if (fetch(x, v, r, a, &b->in[b->n]) != 0 || !in->in_block)
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
static bool
loop_closed(const struct exact *x, struct xvcpu *v, const struct vpmu_insn *loop,
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
		if (stop_at(v, b.addr[i]))
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
	add(&p, loop->branch, r->cpl);
	count_path(x, v, &p);
	p.n = 0;
	for (i = 0; i < b.n; i++)
		add(&p, false, r->cpl);
	add(&p, loop->branch, r->cpl);
	count_path_n(x, v, &p, k);
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
static bool
plan_ff(const struct exact *x, struct xvcpu *v, const struct vpmu_insn *end, uint64_t addr,
    unsigned k, const struct body *b)
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
static void
plan_from(const struct exact *x, struct xvcpu *v, bool probe)
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
	if (!v->p.long_mode || (v->p.rflags & RFLAGS_TF) || streak_due(v, v->p.rflags) ||
	    (v->p.cpl == 3 && (v->p.cr0 & CR0_AM) && (v->p.rflags & RFLAGS_AC))) {
		if (!probe)
			v->st.step_why[!v->p.long_mode ? VPMU_STEP_NOT_64BIT :
			    (v->p.rflags & RFLAGS_TF) ? VPMU_STEP_GUEST_TF :
			    streak_due(v, v->p.rflags) ? VPMU_STEP_STREAK :
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
	    plan_ff(x, v, &in, addr, k, &b) && !probe) {
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
		if (handler_entry(x, v, &v->p, fault_vecs[i], &v->hbp[i]) != 0 ||
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
 * The exit of a fast-forwarded loop's run: at its exit after all n
 * iterations, or inside it (a fault stopped at a handler's entry, the
 * faulting instruction's address from the frame; an exit of the
 * monitor's), where the loop counter tells the iterations that retired
 * (the DEC/SUB/ADD at the end of the body has run once more when the vCPU
 * is at the JNZ).  false: not such an exit, or one that does not add up.
 */
static bool
sync_ff(const struct exact *x, struct xvcpu *v, const struct vpmu_regs *r)
{
	struct vpmu_regs at = *r, out = v->p;
	struct path one = { 0 }, part = { 0 };
	uint64_t c, done;
	unsigned i;

	for (i = 0; v->hmem && i < NFAULT_VECS && v->hbp[i] != r->rip; i++)
		;
	if (r->rip != v->bp && v->hmem && i < NFAULT_VECS &&
	    read_slot(x, v, r, r->rsp + 8, 8, &at.rip) != 0)
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
		    walk(x, v, v->ff.head, &v->p, true, &at, &part, WALK_FOLLOW | WALK_PLAN) !=
		    W_REACHED)
			return (false);
	} else
		return (false);
	out.rip = v->bp;
	if (walk(x, v, v->ff.head, &v->p, true, &out, &one, WALK_FOLLOW | WALK_PLAN) != W_REACHED ||
	    one.n != v->ff.len)
		return (false);
	count_path_n(x, v, &one, done);
	v->st.retired += done * one.n;
	v->st.ff_insns += done * one.n;
	if (at.rip != r->rip)
		v->st.block_faults++;
	account(x, v, W_REACHED, &part, v->p.cpl);
	return (true);
}

/*
 * A block stopped at a fault handler's entry N (its breakpoint): the
 * instruction at the frame's return address faulted, those from P up to
 * it retired.  The 64-bit frame at N's RSP: error code, then RIP.  false:
 * not such a stop (or no path from P to the faulting instruction): the
 * caller reconstructs the exit as any other.
 */
static bool
sync_block_fault(const struct exact *x, struct xvcpu *v, const struct vpmu_regs *r)
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
	if (i == NFAULT_VECS || read_slot(x, v, r, r->rsp + 8, 8, &at.rip) != 0 ||
	    !in_run(v, at.rip) ||
	    walk(x, v, v->p.rip, &v->p, true, &at, &p, WALK_FOLLOW | WALK_PLAN) != W_REACHED)
		return (false);
	v->st.block_faults++;
	account(x, v, W_REACHED, &p, v->p.cpl);
	return (true);
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
	ref_tsc(x, v, (flags & VPMU_SYNC_HALTED) != 0);	/* at P's level: before P moves */
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
		if (!sync_ff(x, v, r))
			account(x, v, W_LOST, &p, r->cpl);
	}
	else if (!(flags & VPMU_SYNC_STEP) && sync_block_fault(x, v, r))
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
		account(x, v, W_LOST, &p, r->cpl);
	} else if (r->rip == v->p.rip)
		sync_same(x, v, r, flags);
	else
		account(x, v, walk(x, v, v->p.rip, &v->p, true, r, &p,
		    (flags & VPMU_SYNC_STEP) ? 0 : WALK_FOLLOW |
		    (x->mode == VPMU_EXACT_BLOCK && v->planned && v->bp != 0 ? WALK_PLAN : 0)),
		    &p, r->cpl);
	note_user(x, v, r, flags);
	v->p = *r;
	v->known = true;
	v->planned = false;
	recap(x, v);
}

static void
plan(const struct exact *x, struct xvcpu *v)
{
	plan_from(x, v, false);
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

/*
 * Would the run from r fast-forward a loop (plan_ff)?  Asked where a run
 * of instructions in user space comes back to a loop's head: the
 * processor runs such a loop at its own speed, one exit for all of it.
 * A head found not to is remembered (the last FF_NO), so that a loop whose
 * rounds branch on data is not planned round after round.
 */
static bool
ff_ahead(const struct exact *x, struct xvcpu *v, const struct vpmu_regs *r)
{
	struct vpmu_regs p = v->p;
	uint64_t bp = v->bp, closed_no = v->closed_no;
	bool shadow = v->step_shadow, on;
	unsigned i;

	for (i = 0; i < FF_NO; i++)
		if (v->ff_no[i] == r->rip)
			return (false);
	v->p = *r;
	recap(x, v);
	plan_from(x, v, true);
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
		if (stop_at(v, at))
			break;			/* the processor runs it: it may hit */
		if (vpmu__decode_gva_cached(v->dc, x->mem, PAGING(&w.r), VPMU_DECODE_64, at,
		    &in, &bad) != 0 || (in.eval == VPMU_EVAL_LOOP && done + p.n > 0) ||
		    !vpmu__interp_step(x->mem, &in, &w))
			break;
		add(&p, in.branch, cpl);
		if (w.fknown == VPMU_ALU_STATUS) {
			count_path(x, v, &p);
			done += p.n;
			p.n = 0;
			*r = w.r;
			/* back at a loop's head the processor may run it faster */
			if (in.branch && w.r.rip <= at && x->ff_max >= 2 && ff_ahead(x, v, r))
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
	    !v->known || v->nenabled == 0 || r->rip != v->p.rip || streak_due(v, r->rflags))
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
	for (n = 0, set = 0; n < CHAIN_MAX && v->cap > 0 && !stop_at(v, r->rip); n++) {
		cpl = r->cpl;
		if (fetch(x, v, r, r->rip, &in) != 0)
			break;
		if (loop_closed(x, v, &in, r, &one))
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
			add(&p, in.branch, cpl);
			account(x, v, W_REACHED, &p, cpl);
			v->st.completed++;
		}
		v->p = *r;
		recap(x, v);
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
		add(&p, false, v->p.cpl);
		account(x, v, W_REACHED, &p, v->p.cpl);
	}
	v->st.completed++;
	v->at_end = false;
	v->planned = false;
	v->p = *r;
	recap(x, v);
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

bool
vpmu__exact_wants_step(void *state, unsigned cpu)
{
	const struct exact *x = state;

	/* A hint re-read before every entry: no lock (the count changes under it). */
	return (x != NULL && cpu < x->nvcpus &&
	    __atomic_load_n(&x->vcpu[cpu].nenabled, __ATOMIC_RELAXED) > 0);
}

void
vpmu__exact_set_memory(void *state, const struct vpmu_gmem *mem)
{
	if (state != NULL)
		((struct exact *)state)->mem = mem;
}

/* Snapshots: the last retirement point, read and set (no stats, no counting). */
int
vpmu__exact_get_point(void *state, unsigned cpu, struct vpmu_regs *r)
{
	const struct exact *x = state;

	if (x == NULL || r == NULL || cpu >= x->nvcpus)
		return (EINVAL);
	if (!x->vcpu[cpu].known)
		return (ENOENT);
	*r = x->vcpu[cpu].p;
	return (0);
}

int
vpmu__exact_set_point(void *state, unsigned cpu, const struct vpmu_regs *r)
{
	struct exact *x = state;

	if (x == NULL || cpu >= x->nvcpus)
		return (EINVAL);
	x->vcpu[cpu].known = r != NULL;
	x->vcpu[cpu].planned = false;
	if (r != NULL)
		x->vcpu[cpu].p = *r;
	ref_tsc(x, &x->vcpu[cpu], true);	/* another host, another TSC: from now */
	return (0);
}

int
vpmu__exact_get_stats(void *state, unsigned cpu, struct vpmu_exact_stats *st)
{
	const struct exact *x = state;

	if (x == NULL || st == NULL || cpu >= x->nvcpus)
		return (EINVAL);
	*st = x->vcpu[cpu].st;
	st->decode_hits = x->vcpu[cpu].dc->hits;
	st->decode_misses = x->vcpu[cpu].dc->misses;
	return (0);
}

const char *
vpmu_step_why_name(unsigned why)
{
	static const char *const name[VPMU_STEP_WHY_N] = {
		[VPMU_STEP_MODE] = "step-mode", [VPMU_STEP_UNKNOWN] = "state-unknown",
		[VPMU_STEP_NOT_64BIT] = "not-64-bit", [VPMU_STEP_GUEST_TF] = "guest-tf",
		[VPMU_STEP_STREAK] = "interrupt-streak", [VPMU_STEP_ALIGN_CHECK] = "align-check",
		[VPMU_STEP_UNREADABLE] = "unreadable", [VPMU_STEP_CAP] = "overflow-cap",
		[VPMU_STEP_SHORT] = "short-block", [VPMU_STEP_RUN] = "into-the-run",
		[VPMU_STEP_NO_HANDLER] = "no-fault-handler", [VPMU_STEP_DEBUG_REGS] = "debug-registers",
		[VPMU_STEP_EVENT_HELD] = "event-held", [VPMU_STEP_JCC] = "jcc",
		[VPMU_STEP_CALL] = "call", [VPMU_STEP_CALL_INDIRECT] = "call-indirect",
		[VPMU_STEP_JMP] = "jmp", [VPMU_STEP_JMP_INDIRECT] = "jmp-indirect",
		[VPMU_STEP_RET] = "ret", [VPMU_STEP_FAR] = "far-branch",
		[VPMU_STEP_PRIVILEGED] = "privileged", [VPMU_STEP_IO] = "io",
		[VPMU_STEP_FENCE] = "fence", [VPMU_STEP_FLAGS] = "flags", [VPMU_STEP_DIV] = "div",
		[VPMU_STEP_SEGMENT] = "segment", [VPMU_STEP_VECTOR] = "vector",
		[VPMU_STEP_SYSTEM] = "system", [VPMU_STEP_OTHER] = "other",
	};

	return (why < VPMU_STEP_WHY_N ? name[why] : NULL);
}

/* ---- the source hooks ----------------------------------------------------- */

static int
x_init(void **statep, unsigned nvcpus, void *arg)
{
	const struct vpmu_exact_params *prm = arg;
	struct exact *x;
	unsigned i;

	if (statep == NULL || nvcpus == 0 ||
	    (prm != NULL && (prm->vendor > VPMU_VENDOR_AMD || prm->mode > VPMU_EXACT_STEP ||
	    (prm->flags & ~(VPMU_EXACT_NO_FORESEE | VPMU_EXACT_NO_INTERP)) != 0)))
		return (EINVAL);
	if ((x = calloc(1, sizeof(*x))) == NULL)
		return (ENOMEM);
	if ((x->vcpu = calloc(nvcpus, sizeof(*x->vcpu))) == NULL) {
		free(x);
		return (ENOMEM);
	}
	for (i = 0; i < nvcpus; i++)
		if ((x->vcpu[i].dc = calloc(1, sizeof(*x->vcpu[i].dc))) == NULL) {
			while (i-- > 0)
				free(x->vcpu[i].dc);
			free(x->vcpu);
			free(x);
			return (ENOMEM);
		}
	x->nvcpus = nvcpus;
	x->mode = prm != NULL ? prm->mode : VPMU_EXACT_BLOCK;
	x->foresee = prm == NULL || !(prm->flags & VPMU_EXACT_NO_FORESEE);
	x->interp = prm == NULL || !(prm->flags & VPMU_EXACT_NO_INTERP);
	x->ff_max = (prm != NULL && prm->ff_max != 0) ? prm->ff_max : FF_MAX_DEFAULT;
	for (i = 0; i < nvcpus; i++)
		x->vcpu[i].cap = BLOCK_MAX;
	x->cpi = (prm != NULL && prm->cpi != 0) ? prm->cpi : 1;
	x->ref_cpi = prm != NULL ? prm->ref_cpi : 0;
	x->vendors = (prm != NULL && prm->vendor != VPMU_VENDOR_NONE) ?
	    1u << prm->vendor : VENDOR_INTEL | VENDOR_AMD;
	*statep = x;
	return (0);
}

static void
x_fini(void *state)
{
	struct exact *x = state;
	struct xctr *c;
	unsigned i;

	if (x == NULL)
		return;
	for (i = 0; i < x->nvcpus; i++) {
		while ((c = x->vcpu[i].ctrs) != NULL) {
			x->vcpu[i].ctrs = c->next;
			free(c);
		}
		free(x->vcpu[i].dc);
	}
	free(x->vcpu);
	free(x);
}

/* The guest's vendor from the model, unless the parameters named one. */
static void
x_model(void *state, const struct vpmu_model *m)
{
	struct exact *x = state;

	if (x != NULL && x->vendors == (VENDOR_INTEL | VENDOR_AMD) &&
	    (m->vendor == VPMU_VENDOR_INTEL || m->vendor == VPMU_VENDOR_AMD))
		x->vendors = 1u << m->vendor;
}


static unsigned
x_capacity(void *state)
{
	(void)state;
	return (0);			/* a counter is a few words: no limit */
}

static int
x_supports(void *state, const struct vpmu_event_spec *ev, char *why, size_t whylen)
{
	const char *name;

	if (state == NULL || ev == NULL) {
		if (why != NULL && whylen > 0)
			snprintf(why, whylen, "exact: no event");
		return (EOPNOTSUPP);
	}
	if (ev->flags & ~EVF_ALL) {
		if (why != NULL && whylen > 0)
			snprintf(why, whylen, "exact: event flags 0x%x are not modelled",
			    ev->flags & ~EVF_ALL);
		return (EOPNOTSUPP);
	}
	if (modelled(state, ev) == VPMU_EV_REF_CYCLES &&
	    ((const struct exact *)state)->ref_cpi == 0 &&
	    (ev->cmask != 0 || (ev->flags & (VPMU_EVF_EDGE | VPMU_EVF_INV)))) {
		if (why != NULL && whylen > 0)
			snprintf(why, whylen, "exact: reference cycles follow the TSC: no "
			    "counter mask, edge or inversion (a ref_cpi gives them per "
			    "instruction)");
		return (EOPNOTSUPP);
	}
	if (modelled(state, ev) != VPMU_EV_NONE)
		return (0);
	if (why != NULL && whylen > 0) {
		if (ev->event == VPMU_EV_RAW)
			snprintf(why, whylen, "exact: event 0x%llx is not modelled",
			    (unsigned long long)ev->raw);
		else if ((name = vpmu_event_name(ev->event)) != NULL)
			snprintf(why, whylen, "exact: event %s is not modelled", name);
		else
			snprintf(why, whylen, "exact: event 0x%x is not modelled", ev->event);
	}
	return (EOPNOTSUPP);
}

static int
x_open(void *state, unsigned vcpu, pid_t tid, const struct vpmu_event_spec *ev, void **ctrp)
{
	struct exact *x = state;
	struct xctr *c;

	(void)tid;
	if (x == NULL || ev == NULL || ctrp == NULL || vcpu >= x->nvcpus)
		return (EINVAL);
	if (x_supports(x, ev, NULL, 0) != 0)
		return (EOPNOTSUPP);
	if ((c = calloc(1, sizeof(*c))) == NULL)
		return (ENOMEM);
	c->vcpu = vcpu;
	c->event = modelled(x, ev);
	c->flags = ev->flags;
	c->cmask = ev->cmask;
	c->next = x->vcpu[vcpu].ctrs;
	x->vcpu[vcpu].ctrs = c;
	*ctrp = c;
	return (0);
}

static int
x_enable(void *state, void *ctr)
{
	struct exact *x = state;
	struct xctr *c = ctr;

	if (x == NULL || c == NULL)
		return (EINVAL);
	if (!c->enabled) {
		c->enabled = true;
		c->cond = false;
		c->since = now_ns();
		c->tsc = tsc_now();
		__atomic_add_fetch(&x->vcpu[c->vcpu].nenabled, 1, __ATOMIC_RELAXED);
		recap(x, &x->vcpu[c->vcpu]);
	}
	return (0);
}

static int
x_disable(void *state, void *ctr)
{
	struct exact *x = state;
	struct xctr *c = ctr;

	if (x == NULL || c == NULL)
		return (EINVAL);
	if (c->enabled) {
		if (by_time(x, c))
			c->value += ref_pending(c, run_cpl(&x->vcpu[c->vcpu]), tsc_now());
		c->enabled = false;
		c->ns += now_ns() - c->since;
		__atomic_sub_fetch(&x->vcpu[c->vcpu].nenabled, 1, __ATOMIC_RELAXED);
		recap(x, &x->vcpu[c->vcpu]);
	}
	return (0);
}

static void
x_close(void *state, void *ctr)
{
	struct exact *x = state;
	struct xctr *c = ctr, **pp;

	if (x == NULL || c == NULL)
		return;
	(void)x_disable(x, c);
	for (pp = &x->vcpu[c->vcpu].ctrs; *pp != NULL; pp = &(*pp)->next)
		if (*pp == c) {
			*pp = c->next;
			free(c);
			return;
		}
}

/* Events left before the counter overflows: blocks stop there (recap). */
static int
x_set_period(void *state, void *ctr, uint64_t period)
{
	struct exact *x = state;
	struct xctr *c = ctr;

	if (x == NULL || c == NULL)
		return (EINVAL);
	c->left = period;
	c->armed = c->value;
	recap(x, &x->vcpu[c->vcpu]);
	return (0);
}

static int
x_read(void *state, void *ctr, struct vpmu_count *out)
{
	const struct exact *x = state;
	const struct xctr *c = ctr;

	if (c == NULL || out == NULL)
		return (EINVAL);
	out->value = c->value;
	if (x != NULL && by_time(x, c))		/* up to now, counted at the next exit */
		out->value += ref_pending(c, run_cpl(&x->vcpu[c->vcpu]), tsc_now());
	out->time_enabled = c->ns + (c->enabled ? now_ns() - c->since : 0);
	out->time_running = out->time_enabled;
	return (0);
}

/*
 * The vCPU's clock: the core cycles modelled on it, one per ns.  It moves
 * only with what the guest retires, so a multiplexed counter is scaled by
 * the guest's progress, whatever else the host runs.
 */
static uint64_t
x_clock(void *state, unsigned vcpu)
{
	const struct exact *x = state;

	if (x == NULL || vcpu >= x->nvcpus)
		return (0);
	return (x->vcpu[vcpu].st.retired * x->cpi);
}

/* on or off: flag set in *flags for off. */
static int
x_onoff(const char *v, unsigned flag, unsigned *flags, char *why, size_t whylen)
{
	if (strcmp(v, "on") != 0 && strcmp(v, "off") != 0) {
		if (why != NULL && whylen > 0)
			snprintf(why, whylen, "want on or off");
		return (EINVAL);
	}
	*flags = strcmp(v, "off") == 0 ? *flags | flag : *flags & ~flag;
	return (0);
}

/*
 * The options "exact-KEY" (vpmu_config_set_option()): mode, foresee,
 * interp, ff-max, cpi, ref-cpi, each a field of struct vpmu_exact_params.
 */
static int
x_param(void *params, const char *key, const char *v, char *why, size_t whylen)
{
	struct vpmu_exact_params *p = params;
	unsigned long long n, max;
	char *end;

	if (strcmp(key, "mode") == 0) {
		if (strcmp(v, "step") != 0 && strcmp(v, "block") != 0) {
			if (why != NULL && whylen > 0)
				snprintf(why, whylen, "want step or block");
			return (EINVAL);
		}
		p->mode = strcmp(v, "step") == 0 ? VPMU_EXACT_STEP : VPMU_EXACT_BLOCK;
		return (0);
	}
	if (strcmp(key, "foresee") == 0)
		return (x_onoff(v, VPMU_EXACT_NO_FORESEE, &p->flags, why, whylen));
	if (strcmp(key, "interp") == 0)
		return (x_onoff(v, VPMU_EXACT_NO_INTERP, &p->flags, why, whylen));
	if (strcmp(key, "ff-max") == 0)
		max = UINT32_MAX;
	else if (strcmp(key, "cpi") == 0 || strcmp(key, "ref-cpi") == 0)
		max = 1000;
	else {
		if (why != NULL && whylen > 0)
			snprintf(why, whylen, "no such option of the exact source (mode, "
			    "foresee, interp, ff-max, cpi, ref-cpi)");
		return (EINVAL);
	}
	errno = 0;
	n = strtoull(v, &end, 10);
	if (*v < '0' || *v > '9' || *end != '\0' || errno != 0 || n > max) {
		if (why != NULL && whylen > 0)
			snprintf(why, whylen, "want a number from 0 to %llu", max);
		return (EINVAL);
	}
	if (key[0] == 'f')
		p->ff_max = n;
	else if (key[0] == 'c')
		p->cpi = (unsigned)n;
	else
		p->ref_cpi = (unsigned)n;
	return (0);
}

const struct vpmu_source_ops vpmu_source_exact = {
	.name = "exact",
	.init = x_init,
	.fini = x_fini,
	.capacity = x_capacity,
	.supports = x_supports,
	.open = x_open,
	.close = x_close,
	.enable = x_enable,
	.disable = x_disable,
	.read = x_read,
	.set_period = x_set_period,	/* overflow: the model checks after each exit;
					   blocks stop where it may come */
	.model = x_model,
	.exec_memory = vpmu__exact_set_memory,
	.exec_wants = vpmu__exact_wants,
	.exec_breaks = vpmu__exact_breaks,
	.exec_complete = vpmu__exact_complete,
	.exec_retire = vpmu__exact_retire,
	.exec_stops = vpmu__exact_stops,
	.exec_sync = vpmu__exact_sync,
	.exec_point_get = vpmu__exact_get_point,
	.exec_point_set = vpmu__exact_set_point,
	.clock = x_clock,
	.params_size = sizeof(struct vpmu_exact_params),
	.param = x_param,
};
