/*
 * exact_stats.h -- struct vpmu_exact_stats: what the exact source's
 * reconstruction saw on one vCPU, handed out through its exec_stats hook
 * (<vpmu/source.h>, where the structure is opaque).  A header of its own
 * so that the glue that reports them (kvm.c) reads the figures without
 * naming the source.
 */
#ifndef VPMU_EXACT_STATS_H
#define VPMU_EXACT_STATS_H

#include <stdint.h>

#include <vpmu/source.h>

/* What the reconstruction saw on one vCPU. */
struct vpmu_exact_stats {
	uint64_t syncs;			/* vpmu__exact_sync() calls */
	uint64_t retired;		/* instructions counted as retired */
	uint64_t lost_traps;		/* of them, retired without an exit of their own */
	uint64_t fetch_failures;	/* code, stack or IDT bytes not readable (or
					   code not decodable); unreadable code
					   counts as one non-branch instruction */
	uint64_t unresolved;		/* no path from P to N: counted as one
					   non-branch instruction */
	uint64_t fail_gva;		/* the last address that could not be read */
	uint64_t blocks;		/* block mode: breakpoint runs planned */
	uint64_t block_insns;		/* instructions those blocks hold */
	uint64_t block_faults;		/* blocks stopped at a fault handler's entry */
	uint64_t completed;		/* instructions retired by libvpmu, not the
					   guest: block-ending branches the source
					   completed (exec_complete), and RDPMC and
					   HLT the core retired (exec_retire) */
	uint64_t foreseen;		/* branches runs went through, their way known
					   before the run (Jcc from registers, RET
					   to the run's own CALL) */
	uint64_t mispredicted;		/* runs that ended with other registers than
					   their foreseen branches imply (counted as
					   unresolved; foreseeing stops) */
	uint64_t ff_loops;		/* loop runs fast-forwarded */
	uint64_t ff_insns;		/* instructions they retired */
	uint64_t closed_loops;		/* LOOPs retired with rounds after them that
					   did not run (closed form) */
	uint64_t closed_insns;		/* instructions those rounds retired */
	uint64_t interp_runs;		/* exits at which instructions ran in user
					   space (interp.c) */
	uint64_t interp_insns;		/* instructions that ran there */
	uint64_t user_unseen;		/* exits after user-mode (CPL 3) code that ran
					   without being followed (vpmu_exact(7),
					   DIAGNOSTICS): its counts are not exact */
	uint64_t guest_tf;		/* POPF and IRET that set RFLAGS.TF while
					   followed: the guest steps itself */
	uint64_t step_why[VPMU_STEP_WHY_N];	/* entries that single-step, by
					   reason (enum vpmu_step_why) */
	uint64_t decode_hits;		/* instructions taken from the decode cache */
	uint64_t decode_misses;		/* ... and decoded (Zydis) */
};

#endif /* VPMU_EXACT_STATS_H */
