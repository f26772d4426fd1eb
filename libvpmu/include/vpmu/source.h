/*
 * <vpmu/source.h> -- host counter sources.
 *
 * A source counts events for a vCPU on the host.  libvpmu's core maps the
 * running virtual PMCs of each vCPU onto counters opened on the VM's source.
 * Built-in sources, found by name with vpmu_source_lookup(): "synthetic"
 * (scripted, deterministic), "perf" (perf_event_open on the vCPU thread),
 * "exact" (KVM single-step, vpmu_exact(7)).  An embedder may give a VM its
 * own struct vpmu_source_ops with vpmu_config_set_source().
 */
#ifndef VPMU_SOURCE_H
#define VPMU_SOURCE_H

#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include <vpmu/export.h>
#include <vpmu/vcpu.h>

struct vpmu_model;
struct vpmu_gmem;		/* guest memory, opaque to sources outside libvpmu */
struct vpmu_exact_stats;	/* exec_stats' figures, opaque outside libvpmu */

#ifdef __cplusplus
extern "C" {
#endif

/*
 * Events libvpmu knows by name.  The first block are guest-architectural
 * events (what a guest's PMU counts); the second are host software events
 * a perf source can count on the vCPU thread.  VPMU_EV_RAW carries a
 * model-specific event select in vpmu_event_spec.raw.
 */
#define VPMU_EVENTS(X)							\
	X(INSTRUCTIONS,		0x01, "instructions")			\
	X(BRANCHES,		0x02, "branches")			\
	X(CYCLES,		0x03, "cycles")				\
	X(REF_CYCLES,		0x04, "ref-cycles")			\
	X(TSC,			0x05, "tsc")				\
	X(TASK_CLOCK,		0x10, "task-clock")			\
	X(CPU_CLOCK,		0x11, "cpu-clock")			\
	X(PAGE_FAULTS,		0x12, "page-faults")			\
	X(CONTEXT_SWITCHES,	0x13, "context-switches")		\
	X(CPU_MIGRATIONS,	0x14, "cpu-migrations")			\
	X(RAW,			0xFF, "raw")

enum vpmu_event {
	VPMU_EV_NONE = 0,
#define VPMU_EV_ENUM(n, v, s)	VPMU_EV_##n = v,
	VPMU_EVENTS(VPMU_EV_ENUM)
#undef VPMU_EV_ENUM
};

/* Qualifiers of an event (vpmu_event_spec.flags). */
#define VPMU_EVF_USR	0x1u	/* count at CPL 3 */
#define VPMU_EVF_OS	0x2u	/* count at CPL 0 */
#define VPMU_EVF_EDGE	0x4u	/* count rising edges of the condition */
#define VPMU_EVF_INV	0x8u	/* invert the counter-mask comparison */

/* What to count. */
struct vpmu_event_spec {
	uint32_t event;		/* enum vpmu_event */
	uint32_t flags;		/* VPMU_EVF_*; 0 means USR|OS */
	uint32_t cmask;		/* counter mask (threshold), 0 = none */
	uint32_t pad;
	uint64_t raw;		/* event select for VPMU_EV_RAW */
};

/* A reading: count and the times (ns) the counter was enabled / running. */
struct vpmu_count {
	uint64_t value;
	uint64_t time_enabled;
	uint64_t time_running;
};

/*
 * One host counter source: its name, then its hooks.  Every hook that
 * returns int returns 0 or a positive errno.  Hooks marked optional may be
 * NULL; vpmu_config_set_source() refuses a NULL required one.  A counter
 * counts only while enabled; read() returns the totals since open().
 * When the core gives a PMC a host slot, ENOMEM, EMFILE, ENFILE, EAGAIN,
 * EBUSY or EINTR from open(), read() or enable() is transient: the PMC
 * does not get the slot this time and the error goes back to the
 * operation that asked for it, if any.  Any other error makes the PMC
 * unsupported: it keeps its value and counts no more.
 */
struct vpmu_source_ops {
	const char *name;

	/* --- life cycle (required) --- */
	int  (*init)(void **statep, unsigned nvcpus, void *arg);
	void (*fini)(void *state);

	/* --- capability --- */
	/*
	 * counters that can run at once on one vCPU; 0 = unlimited (optional).
	 * Called once, after init(): the VM's capacity is the smaller of it
	 * and vpmu_config_set_capacity()'s cap, and the multiplexing
	 * scheduler shares that many host slots per vCPU in turns.
	 */
	unsigned (*capacity)(void *state);
	/*
	 * 0 if ev can be counted, else an errno (the built-in sources:
	 * EOPNOTSUPP) and a reason in why; such a PMC is allocated but
	 * "unsupported" and never counts (required)
	 */
	int  (*supports)(void *state, const struct vpmu_event_spec *ev,
	    char *why, size_t whylen);

	/* --- counters (required) --- */
	/*
	 * tid: the vCPU's host thread, 0 = the calling thread.  open() and
	 * close() are called without the core's VM lock, on any thread, at
	 * the same time as the other hooks on other counters (what they share
	 * needs the source's own lock); close() only for a disabled counter.
	 * The other hooks are called with the VM lock held and must not block.
	 */
	int  (*open)(void *state, unsigned vcpu, pid_t tid,
	    const struct vpmu_event_spec *ev, void **ctrp);
	void (*close)(void *state, void *ctr);
	int  (*enable)(void *state, void *ctr);
	int  (*disable)(void *state, void *ctr);
	int  (*read)(void *state, void *ctr, struct vpmu_count *out);

	/*
	 * --- overflow (optional) ---
	 * events left before the counter should overflow: for the counters
	 * of the guest-visible model the core passes (-value) & width-mask,
	 * scaled by running/enabled time when the value is an estimate, each
	 * time the counter takes a slot or is written, so a source that can
	 * interrupt overflows when the guest counter wraps; for a sampling
	 * PMC, at the same times and after each sample, the events left to
	 * its next sample (reload count less the events since the last
	 * one, 1 when one is due).  Its result is ignored.
	 */
	int  (*set_period)(void *state, void *ctr, uint64_t period);

	/*
	 * --- following the guest (optional) ---
	 * A source that counts by watching the guest execute (the exact
	 * source) instead of asking host hardware.  The core calls these
	 * through the exit contract (<vpmu/vcpu.h>), on the vCPU's thread.
	 * model: the VM's guest-visible model, once after init.
	 * exec_memory: the VM's guest-memory map (opaque here; NULL: none).
	 * exec_wants: VPMU_DEBUG_* the source needs from the vCPU's next entry.
	 * exec_sync: at every exit, before the exit is handled: where the vCPU
	 * is now, with VPMU_SYNC_* flags (the vector of an injected event in
	 * bits 15:8).
	 */
	void (*model)(void *state, const struct vpmu_model *m);
	void (*exec_memory)(void *state, const struct vpmu_gmem *mem);
	unsigned (*exec_wants)(void *state, unsigned vcpu);
	void (*exec_sync)(void *state, unsigned vcpu, const struct vpmu_regs *r, unsigned flags);
	/*
	 * The last place the source saw a vCPU, which vpmu_vm_save() keeps
	 * and vpmu_vm_restore() gives back (optional: both or neither).
	 * exec_point_get: 0, or ENOENT when none is known yet.
	 * exec_point_set: r NULL means none is known.  Neither counts.
	 */
	int  (*exec_point_get)(void *state, unsigned vcpu, struct vpmu_regs *r);
	int  (*exec_point_set)(void *state, unsigned vcpu, const struct vpmu_regs *r);
	/*
	 * exec_breaks (optional): when exec_wants said VPMU_DEBUG_BREAK, the
	 * breakpoints (linear addresses) of that entry in bp[0..max); returns
	 * how many, 1..max, and, when need is not NULL, sets bit i of *need
	 * for each bp[i] the run cannot do without (the others are kept for
	 * later runs: vpmu_entry.need).  0, or no hook: the core single-steps
	 * instead.  Called right after exec_wants, on the same thread.
	 */
	unsigned (*exec_breaks)(void *state, unsigned vcpu, uint64_t *bp, unsigned max,
	    unsigned *need);
	/*
	 * exec_complete (optional): the vCPU stopped at one of the source's
	 * breakpoints (after exec_sync of that exit), no PMI or sample is
	 * due, and the VMM can write registers: retire the instruction at
	 * r->rip (and the ones after it) on r and count them.  Returns the
	 * VPMU_SET_* bits of the registers changed, or 0 (r untouched: the
	 * vCPU goes on from there).
	 */
	unsigned (*exec_complete)(void *state, unsigned vcpu, struct vpmu_regs *r);
	/*
	 * exec_retire (optional): the core retired the instruction at the
	 * place the last exec_sync gave (an RDPMC it emulated, a HLT it
	 * halted the vCPU for; never a branch) and the vCPU goes on at r:
	 * count that one instruction.
	 * Without the hook the source sees the move at the next exec_sync.
	 */
	void (*exec_retire)(void *state, unsigned vcpu, const struct vpmu_regs *r);
	/*
	 * exec_stops (optional): at every exit, before exec_complete: the
	 * instruction breakpoints of the VMM's and the guest's (linear
	 * addresses, vpmu_exit.stops), n of them, maybe 0.  A source that
	 * retires instructions the vCPU does not run leaves these to it.
	 */
	void (*exec_stops)(void *state, unsigned vcpu, const uint64_t *addr, unsigned n);

	/*
	 * --- the vCPU's clock (optional) ---
	 * clock: how far vcpu has run, in ns of the source's own time, never
	 * going back; called under the VM lock, on any thread.  The core
	 * measures a PMC's enabled and running times in it, so a multiplexed
	 * PMC is scaled by the vCPU's progress as the source knows it (the
	 * exact source: the cycles it modelled, one per ns).  Without it the
	 * times are the vCPU thread's CPU time in its runs.  Rotations follow
	 * that CPU time either way.
	 */
	uint64_t (*clock)(void *state, unsigned vcpu);

	/*
	 * --- options by name (optional) ---
	 * vpmu_config_set_option() gives an option "NAME-KEY" (NAME this
	 * source's name) here as key KEY: param sets it in params, a block
	 * of params_size bytes the config owns, zeroed before the first
	 * option and handed to init() as its argument.  0, or EINVAL with
	 * what was wanted in why ("want step or block").
	 */
	size_t params_size;
	int  (*param)(void *params, const char *key, const char *value, char *why,
	    size_t whylen);

	/*
	 * --- statistics (optional) ---
	 * exec_stats: what following vcpu has shown the source so far, for
	 * the glue's reports (vpmu_kvm_stats): 0, or EINVAL.  Called under
	 * the VM lock, on any thread.  Its structure is libvpmu's own (opaque
	 * here), so only the built-in exact source sets this hook.
	 */
	int  (*exec_stats)(void *state, unsigned vcpu, struct vpmu_exact_stats *out);
};

/* exec_sync() flags */
#define VPMU_SYNC_RESYNC	0x1u	/* nothing known of the run: remember, count nothing */
#define VPMU_SYNC_STEP		0x2u	/* a single-step trap */
#define VPMU_SYNC_EVENT		0x4u	/* an event was delivered or injected first: */
#define VPMU_SYNC_FAULT		0x8u	/*  ...a fault of the instruction at the last exit */
#define VPMU_SYNC_SETREGS	0x10u	/* the VMM can take completed instructions
					   (exec_complete) at breakpoint exits */
#define VPMU_SYNC_HALTED	0x20u	/* the vCPU halted in this run (a HLT
					   retired at the last exit) */
#define VPMU_SYNC_SETGPRS	0x40u	/* ... and every general register
					   (exec_complete may return
					   VPMU_SET_GPRS) */
#define VPMU_SYNC_RUN_TIME	0x80u	/* a counter of the vCPU follows its run
					   time (it waits for a host counter: the
					   windows rotate by run time; or it counts
					   a time event), so a source retires in
					   bulk nothing the vCPU does not run */
#define VPMU_SYNC_DEBUGGING	0x10000u /* VPMU_EXITF_DEBUGGING: nor then (a
					   breakpoint or watchpoint would be
					   missed) */
#define VPMU_SYNC_VECTOR(f)	(((f) >> 8) & 0xFFu)

/* The built-in sources. */
VPMU_EXTERN extern const struct vpmu_source_ops vpmu_source_synthetic;
VPMU_EXTERN extern const struct vpmu_source_ops vpmu_source_perf;
/* KVM single-step: exact instruction and branch counts (vpmu_exact(7)). */
VPMU_EXTERN extern const struct vpmu_source_ops vpmu_source_exact;

/*
 * init()'s optional argument.  A zero field means its default.
 *   cpi      core cycles per retired instruction (default 1)
 *   ref_cpi  reference cycles per retired instruction; 0 (the default):
 *            reference cycles follow the TSC while the vCPU is not halted,
 *            as the SDM defines them (vpmu_exact(7))
 *   vendor   enum vpmu_vendor (<vpmu/model.h>): whose raw event selects
 *            are understood; 0: the vendor of the VM's model (under model
 *            "none", only the code both vendors define alike, 0xC0).
 */
struct vpmu_exact_params {
	unsigned cpi;
	unsigned ref_cpi;
	unsigned vendor;
	unsigned mode;			/* VPMU_EXACT_BLOCK (0) or VPMU_EXACT_STEP */
	unsigned flags;			/* VPMU_EXACT_* below */
	uint64_t ff_max;		/* VPMU_EXACT_BLOCK: the most instructions a
					   fast-forwarded loop runs in one go (with
					   interrupts held back); 0: 2^24; 1: no
					   fast-forward */
};

/* struct vpmu_exact_params.mode: how the exact source follows the guest */
#define VPMU_EXACT_BLOCK	0u	/* run straight-line code to a breakpoint
					   (the default) */
#define VPMU_EXACT_STEP		1u	/* single-step every instruction */
/* struct vpmu_exact_params.flags */
#define VPMU_EXACT_NO_FORESEE	0x1u	/* blocks end at every conditional branch
					   and RET (none is worked out ahead) */
#define VPMU_EXACT_NO_INTERP	0x2u	/* no instructions run in user space (the
					   guest runs every one itself) */

/*
 * Why the exact source single-stepped the guest instead of letting it run
 * to a breakpoint (block mode; vpmu_exact(7)): counted per vCPU at each
 * entry that steps (vpmu_kvm_stats.exact_step_why).  The reasons up to
 * VPMU_STEP_EVENT_HELD are the vCPU's state, the block's or the VMM's; the
 * others name the instruction at RIP, which ends every block.
 */
enum vpmu_step_why {
	VPMU_STEP_MODE,			/* step mode: every instruction */
	VPMU_STEP_UNKNOWN,		/* the vCPU's state not known yet (a first
					   entry, a resync) */
	VPMU_STEP_NOT_64BIT,		/* 16- or 32-bit code */
	VPMU_STEP_GUEST_TF,		/* RFLAGS.TF: the guest steps itself */
	VPMU_STEP_STREAK,		/* interrupts let in after a streak of runs */
	VPMU_STEP_ALIGN_CHECK,		/* CPL 3 with CR0.AM and RFLAGS.AC: #AC */
	VPMU_STEP_UNREADABLE,		/* code not mapped or not decodable */
	VPMU_STEP_CAP,			/* a counter overflows within one instruction */
	VPMU_STEP_SHORT,		/* a block shorter than a breakpoint is worth */
	VPMU_STEP_RUN,			/* the block would run into its own start */
	VPMU_STEP_NO_HANDLER,		/* no fault handler's entry to stop at */
	VPMU_STEP_DEBUG_REGS,		/* a block planned, but the debug registers
					   its breakpoints need are not free (the
					   VMM's or the guest's own in use): the
					   glue steps (counted by the KVM glue) */
	VPMU_STEP_EVENT_HELD,		/* an NMI or interrupt libvpmu injected is
					   still held back by the guest (STI shadow,
					   NMIs masked, IF clear): the glue steps to
					   its delivery (counted by the KVM glue) */
	VPMU_STEP_JCC,			/* a conditional branch not worked out */
	VPMU_STEP_CALL,			/* a direct CALL not gone through */
	VPMU_STEP_CALL_INDIRECT,	/* CALL through a register or memory */
	VPMU_STEP_JMP,			/* a direct JMP not gone through */
	VPMU_STEP_JMP_INDIRECT,		/* JMP through a register or memory */
	VPMU_STEP_RET,			/* a RET not worked out */
	VPMU_STEP_FAR,			/* IRET, far branches, SYSCALL, SYSRET, INT */
	VPMU_STEP_PRIVILEGED,		/* HLT, MSR and control-register access, ... */
	VPMU_STEP_IO,			/* IN, OUT, INS, OUTS */
	VPMU_STEP_FENCE,		/* LFENCE, MFENCE, SFENCE, serializing */
	VPMU_STEP_FLAGS,		/* CLI, STI, POPF, CLD, ... */
	VPMU_STEP_DIV,			/* DIV, IDIV (#DE) */
	VPMU_STEP_SEGMENT,		/* a segment register written */
	VPMU_STEP_VECTOR,		/* SSE, AVX, x87 (#NM, #UD) */
	VPMU_STEP_SYSTEM,		/* CPUID, RDTSC, RDPMC, XSAVE, ... */
	VPMU_STEP_OTHER,		/* any other instruction that ends a block */
	VPMU_STEP_WHY_N
};
/* "call-indirect", ...: a reason's name; NULL past VPMU_STEP_WHY_N. */
VPMU_EXTERN const char *vpmu_step_why_name(unsigned why);

/* Find a built-in source by name; NULL if there is none. */
VPMU_EXTERN const struct vpmu_source_ops *vpmu_source_lookup(const char *name);

/* Event names: "instructions" <-> VPMU_EV_INSTRUCTIONS.  NULL / 0 if unknown. */
VPMU_EXTERN const char *vpmu_event_name(uint32_t event);
VPMU_EXTERN uint32_t vpmu_event_lookup(const char *name);
/*
 * 1 if event is a time event (task-clock, cpu-clock): libvpmu's core counts
 * it, whatever the source, as the vCPU thread's CPU time in the guest's
 * runs in ns, and samples it at the guest's RIP every period of that time
 * (vpmu(3), "Time events"); else 0.
 */
VPMU_EXTERN int vpmu_event_is_timed(uint32_t event);

#ifdef __cplusplus
}
#endif
#endif /* VPMU_SOURCE_H */
