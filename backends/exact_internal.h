/*
 * exact_internal.h -- the exact source's shared state, for its files
 * only: struct exact, struct xvcpu (per vCPU), struct xctr (a counter),
 * the limits they are sized by, and the functions one file gives the
 * others (exact.c says which file holds what).
 *
 * Threads: see exact.h.
 */
#ifndef VPMU_EXACT_INTERNAL_H
#define VPMU_EXACT_INTERNAL_H

#include <stdbool.h>
#include <stdint.h>

#include "alu.h"
#include "decode.h"
#include "exact.h"
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

/* The fault vectors a block stops at (exact_block.c, fault_vecs). */
#define NFAULT_VECS	3
#define CR0_AM		(1ull << 18)
#define RFLAGS_TF	(1ull << 8)
#define RFLAGS_AC	(1ull << 18)

#define EVF_MODES	(VPMU_EVF_USR | VPMU_EVF_OS)
#define EVF_ALL		(VPMU_EVF_USR | VPMU_EVF_OS | VPMU_EVF_EDGE | VPMU_EVF_INV)

/* A counter: one modelled event on one vCPU. */
struct xctr {
	struct vpmu__ctr_node all;	/* in struct exact's ctrs: first */
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
	struct xctr *ctrs;		/* the enabled ones (exact.c) */
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
	struct vpmu__ctr_set ctrs;	/* every counter open (exact.c) */
	struct xvcpu *vcpu;
};

#define PAGING(r)	(&VPMU_GMEM_PAGING(r))

enum walk_end {
	W_REACHED,			/* the path ends at N */
	W_BRANCH,			/* it ends with a branch whose successor is not
					   known: taken to be N */
	W_FETCH,			/* code could not be read: the unreadable
					   instruction counts as one non-branch */
	W_LOST,				/* no path to N */
};

/* How vpmu__exact_walk() follows the path (exact_step.c). */
#define WALK_ADVANCE	0x1	/* at least one instruction, even if addr is N */
#define WALK_FOLLOW	0x2	/* a JMP or CALL rel at addr ran on to its target
				   (a block's start); later ones always do */
#define WALK_PLAN	0x4	/* the planned run's branches went where foreseen */

/* What plan() learns of a block's instructions, for plan_ff(). */
struct body {
	uint8_t	 nwr[16];		/* instructions writing each register */
	uint64_t wr_addr[16];		/* the last of them, its address */
	uint8_t	 nwmem;			/* instructions writing memory */
	struct vpmu_insn wr[16];	/* ... and itself */
	struct vpmu_insn last;		/* the block's last instruction */
	uint64_t last_addr;
};

/* exact.c: the counting model */
/* p retired once, or times times over, on v's counters. */
void	vpmu__exact_count_path(const struct exact *x, struct xvcpu *v, const struct path *p);
void	vpmu__exact_count_path_n(const struct exact *x, struct xvcpu *v, const struct path *p,
	    uint64_t times);
/* v->room and v->cap from v's counters (under the VM lock). */
void	vpmu__exact_recap(const struct exact *x, struct xvcpu *v);
/* v's counters counted by time, up to now; a halted run adds nothing. */
void	vpmu__exact_ref_tsc(const struct exact *x, struct xvcpu *v, bool halted);

/* exact_step.c: reading the guest, reconstruction */
int	vpmu__exact_fetch(const struct exact *x, struct xvcpu *v, const struct vpmu_regs *r,
	    uint64_t gva, struct vpmu_insn *in);
int	vpmu__exact_read_slot(const struct exact *x, struct xvcpu *v, const struct vpmu_regs *r,
	    uint64_t rsp, unsigned slot, uint64_t *val);
int	vpmu__exact_handler_entry(const struct exact *x, struct xvcpu *v,
	    const struct vpmu_regs *r, unsigned vec, uint64_t *entry);
void	vpmu__exact_add(struct path *p, bool branch, unsigned cpl);
enum walk_end vpmu__exact_walk(const struct exact *x, struct xvcpu *v, uint64_t addr,
	    const struct vpmu_regs *ctx, bool rsp_known, const struct vpmu_regs *n,
	    struct path *p, unsigned how);
void	vpmu__exact_account(const struct exact *x, struct xvcpu *v, enum walk_end end,
	    struct path *p, unsigned cpl);

/* exact_block.c: the block planner */
bool	vpmu__exact_streak_due(const struct xvcpu *v, uint64_t rflags);
void	vpmu__exact_plan_from(const struct exact *x, struct xvcpu *v, bool probe);
bool	vpmu__exact_sync_block_fault(const struct exact *x, struct xvcpu *v,
	    const struct vpmu_regs *r);

/* exact_loop.c: fast-forward and closed form */
bool	vpmu__exact_plan_ff(const struct exact *x, struct xvcpu *v, const struct vpmu_insn *end,
	    uint64_t addr, unsigned k, const struct body *b);
bool	vpmu__exact_sync_ff(const struct exact *x, struct xvcpu *v, const struct vpmu_regs *r);
bool	vpmu__exact_loop_closed(const struct exact *x, struct xvcpu *v,
	    const struct vpmu_insn *loop, struct vpmu_regs *r, unsigned *set);
bool	vpmu__exact_ff_ahead(const struct exact *x, struct xvcpu *v, const struct vpmu_regs *r);

/* exact_complete.c */
bool	vpmu__exact_stop_at(const struct xvcpu *v, uint64_t addr);

#endif /* VPMU_EXACT_INTERNAL_H */
