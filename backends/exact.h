/*
 * exact.h -- the "exact" host source and its interface to the KVM glue.
 *
 * The source counts the guest's retired instructions, branches and
 * modelled cycles while the glue single-steps the vCPU.  It does not count
 * exits: at every exit the glue reports where the vCPU is (the new RIP N)
 * and the source reconstructs what retired since the last report (P) by
 * decoding guest code.  vpmu_exact(7) is the model and its limits.
 *
 * The glue's part, per vCPU thread:
 *   before KVM_RUN   step = vpmu__exact_wants_step(st, cpu)
 *                    (KVM_SET_GUEST_DEBUG with KVM_GUESTDBG_SINGLESTEP or 0)
 *   after KVM_RUN    vpmu__exact_sync(st, cpu, &regs, flags) at EVERY exit,
 *                    before the exit is handled (before an MSR write can
 *                    enable or disable a counter), with the registers of
 *                    kvm_run->s.regs (kvm_valid_regs = KVM_SYNC_X86_REGS |
 *                    KVM_SYNC_X86_SREGS) and flags:
 *     VPMU_EXACT_RESYNC        the run was not single-stepped, or the glue
 *                              changed RIP itself (reset, KVM_SET_REGS):
 *                              remember N, count nothing
 *     VPMU_EXACT_STEP          the exit is a single-step trap (KVM_EXIT_DEBUG
 *                              with DR6.BS): N == P then means a branch to
 *                              itself retired, unless P is a REP string
 *     VPMU_EXACT_FAULTED       the glue injected #GP for the instruction at P
 *                              (msr.error = 1 at the previous exit)
 *     VPMU_EXACT_NMI_INJECTED  the glue injected an NMI (KVM_NMI) before this
 *                              run
 *
 * Threads: a vCPU's counters and reconstruction state are touched only by
 * that vCPU's thread (wants_step, sync) and by the core's hooks (open,
 * close, enable, disable, read).  The glue calls sync with the VM lock
 * held and the core calls the hooks with it held, so the source takes no
 * lock of its own.  The guest memory given by vpmu__exact_set_memory() is
 * only read.
 */
#ifndef VPMU_EXACT_H
#define VPMU_EXACT_H

#include <stdbool.h>
#include <stdint.h>

#include <vpmu/export.h>
#include <vpmu/source.h>

#include "gmem.h"


/* struct vpmu_exact_params is public: <vpmu/source.h>. */

/* Where the vCPU is at an exit: kvm_run->s.regs. */
struct vpmu_exact_regs {
	uint64_t rip;			/* regs.rip (= debug.arch.pc at a step) */
	uint64_t rsp;			/* regs.rsp */
	uint64_t rbp;			/* regs.rbp (call chains of samples) */
	uint64_t rcx;			/* regs.rcx (kept for traces; not needed) */
	uint64_t rflags;		/* regs.rflags (likewise) */
	uint64_t cr0, cr3, cr4, efer;	/* sregs */
	unsigned cpl;			/* sregs.cs.dpl (= ss.dpl) */
	bool	 long_mode;		/* 64-bit code: EFER.LMA and sregs.cs.l */
	uint64_t idt_base;		/* sregs.idt.base */
	uint16_t idt_limit;		/* sregs.idt.limit; 0: handlers unknown */
};

#define VPMU_EXACT_RESYNC	0x1u
#define VPMU_EXACT_FAULTED	0x2u
#define VPMU_EXACT_NMI_INJECTED	0x4u
#define VPMU_EXACT_STEP		0x8u

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
};

/* An enabled counter exists on cpu: single-step it. */
bool	vpmu__exact_wants_step(void *state, unsigned cpu);
/* An exit of cpu; see above. */
void	vpmu__exact_sync(void *state, unsigned cpu, const struct vpmu_exact_regs *r,
	    unsigned flags);
/* The guest's RAM (owned by the caller, outlives the source); NULL: none. */
void	vpmu__exact_set_memory(void *state, struct vpmu_gmem *mem);
/*
 * Snapshots (libvpmu/snapshot.c): the last retirement point P of cpu.
 * get: 0, or ENOENT when none is known yet.  set: P = *r, known (r NULL:
 * unknown, the next exit only records where the vCPU is).  Neither counts.
 * A restored P makes the first exit after a resume count what retired
 * since the snapshot, as if the run had gone on.
 */
int	vpmu__exact_get_point(void *state, unsigned cpu, struct vpmu_exact_regs *r);
int	vpmu__exact_set_point(void *state, unsigned cpu, const struct vpmu_exact_regs *r);
/* 0, or EINVAL (no state, cpu out of range, st NULL). */
int	vpmu__exact_get_stats(void *state, unsigned cpu, struct vpmu_exact_stats *st);

#endif /* VPMU_EXACT_H */
