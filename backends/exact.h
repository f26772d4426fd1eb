/*
 * exact.h -- the "exact" host source: its internals for unit tests.
 *
 * The source counts the guest's retired instructions, branches and
 * modelled cycles while the glue single-steps the vCPU or, in block mode,
 * runs it to the source's breakpoints (docs/exact-blocks.md).  It does not count
 * exits: at every exit the glue reports where the vCPU is (the new RIP N)
 * and the source reconstructs what retired since the last report (P) by
 * decoding guest code.  vpmu_exact(7) is the model and its limits.
 *
 * The core reaches it through its ops table only (<vpmu/source.h>), from
 * the exit contract (<vpmu/vcpu.h>, libvpmu/vcpu.c), per vCPU thread:
 *   before an entry  exec_wants(): VPMU_DEBUG_STEP while a counter of the
 *                    vCPU is enabled (the VMM single-steps the vCPU), or in
 *                    block mode VPMU_DEBUG_BREAK with exec_breaks()
 *   at EVERY exit    exec_sync(st, cpu, &regs, flags), before the exit is
 *                    handled (before an MSR write can enable or disable a
 *                    counter), with flags:
 *     VPMU_SYNC_RESYNC  the run was not single-stepped, or the VMM changed
 *                       RIP itself (reset, KVM_SET_REGS): remember N,
 *                       count nothing
 *     VPMU_SYNC_STEP    the exit is a single-step trap (DR6.BS): N == P
 *                       then means a branch to itself retired, unless P is
 *                       a REP string
 *     VPMU_SYNC_EVENT   an event came before the instruction at P: a fault
 *                       of it (VPMU_SYNC_FAULT, #GP injected for an MSR
 *                       access), or an NMI or interrupt injected before
 *                       the run; its vector in bits 15:8
 *     VPMU_SYNC_SETREGS the VMM takes completed branches
 *   at a breakpoint  exec_complete(): the branch there retired by the
 *                    source (branch.c), its registers handed back
 *   model()          the guest's vendor when the parameters name none
 *   exec_memory()    the VM's guest-memory map, read only
 *
 * Threads: a vCPU's counters and reconstruction state are touched only by
 * that vCPU's thread (exec_wants, exec_sync) and by the core's hooks
 * (open, close, enable, disable, read).  The core calls exec_sync with the
 * VM lock held and the other hooks with it held, so the source takes no
 * lock of its own; exec_wants reads a per-vCPU count without it.
 */
#ifndef VPMU_EXACT_H
#define VPMU_EXACT_H

#include <stdbool.h>
#include <stdint.h>

#include <vpmu/export.h>
#include <vpmu/source.h>

#include "exact_stats.h"
#include "gmem.h"


/* struct vpmu_exact_params is public: <vpmu/source.h>. */

/* struct vpmu_exact_stats: exact_stats.h. */

/* An enabled counter exists on cpu: follow it (step or block). */
bool	vpmu__exact_wants_step(void *state, unsigned cpu);
/*
 * exec_wants: 0 (nothing enabled), VPMU_DEBUG_STEP, or in block mode
 * VPMU_DEBUG_BREAK with the breakpoints from vpmu__exact_breaks(): four
 * slots that keep their addresses from run to run; *need names the ones
 * this run needs (its end, and the entries of the #PF, #GP and #SS
 * handlers when it accesses memory), the others hold earlier runs' ends.
 */
unsigned vpmu__exact_wants(void *state, unsigned cpu);
unsigned vpmu__exact_breaks(void *state, unsigned cpu, uint64_t *bp, unsigned max,
    unsigned *need);
/*
 * The end of the run planned by the last exec_wants: the breakpoint the
 * block (or fast-forwarded loop) runs to, among the four exec_breaks
 * gives; 0 when that entry steps.
 */
uint64_t vpmu__exact_end(void *state, unsigned cpu);
/*
 * exec_complete: at the block's breakpoint, retire the branch there on r
 * (branch.c), a LOOP's rounds, or the instructions from there in user
 * space (interp.c), and count them; VPMU_SET_* or 0 (then it is
 * single-stepped).
 */
unsigned vpmu__exact_complete(void *state, unsigned cpu, struct vpmu_regs *r);
/* exec_stops: the VMM's and the guest's instruction breakpoints at this exit. */
void	vpmu__exact_stops(void *state, unsigned cpu, const uint64_t *addr, unsigned n);
void vpmu__exact_retire(void *state, unsigned cpu, const struct vpmu_regs *r);
/* An exit of cpu; see above. */
void	vpmu__exact_sync(void *state, unsigned cpu, const struct vpmu_regs *r,
	    unsigned flags);
/* The guest's RAM (owned by the caller, outlives the source); NULL: none. */
void	vpmu__exact_set_memory(void *state, const struct vpmu_gmem *mem);
/*
 * Snapshots (libvpmu/snapshot.c, through exec_point_get/_set of the ops):
 * the last retirement point P of cpu.
 * get: 0, or ENOENT when none is known yet.  set: P = *r, known (r NULL:
 * unknown, the next exit only records where the vCPU is).  Neither counts.
 * A restored P makes the first exit after a resume count what retired
 * since the snapshot, as if the run had gone on.
 */
int	vpmu__exact_get_point(void *state, unsigned cpu, struct vpmu_regs *r);
int	vpmu__exact_set_point(void *state, unsigned cpu, const struct vpmu_regs *r);
/* 0, or EINVAL (no state, cpu out of range, st NULL). */
int	vpmu__exact_get_stats(void *state, unsigned cpu, struct vpmu_exact_stats *st);

#endif /* VPMU_EXACT_H */
