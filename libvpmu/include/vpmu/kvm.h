/*
 * <vpmu/kvm.h> -- libvpmu inside a KVM VMM's run loop: the exit contract
 * of <vpmu/vcpu.h> spoken in struct kvm_run.  It includes <vpmu/vpmu.h>,
 * <vpmu/model.h>, <vpmu/source.h> and <vpmu/vcpu.h>; a VMM adds
 * <linux/kvm.h>, and <vpmu/pv.h>, <vpmu/snapshot.h> or <vpmu/pmclog.h> for
 * log descriptors, save and restore, or reading logs (vpmu_kvm(3)).
 *
 * Order of calls for a VMM (vpmu-run and examples/embed are two;
 * vpmu_kvm(3) PORTING has the whole of it):
 *
 *   KVM_CREATE_VM; KVM_CREATE_IRQCHIP if the VMM wants it
 *   vpmu_kvm_open(vm_fd, nvcpus, spec, &k, why, len)
 *                                           before any KVM_CREATE_VCPU: the
 *                                           guest's PMU and the source from a
 *                                           spec ("intel-v2,source=exact"),
 *                                           KVM's own vPMU off where it can,
 *                                           the PMU MSRs routed to user space
 *     (or: vpmu_config_*, vpmu_vm_create, vpmu_kvm_create(vm, vm_fd, &k))
 *   [vpmu_kvm_set_msr_filter(k, &f)]        a VMM with a filter of its own
 *                                           gives it here, never to KVM
 *   vpmu_kvm_add_region(k, &region)         beside each KVM_SET_USER_MEMORY_REGION
 *   per vCPU, on any thread, concurrently:
 *     KVM_CREATE_VCPU; mmap kvm_run
 *     the VMM's own CPUID filtering, then
 *     vpmu_kvm_cpuid_patch(k, cpuid, max)   last, on the CPUID the VMM will set
 *     KVM_SET_CPUID2
 *     vpmu_kvm_vcpu_init(k, cpu, fd, run)
 *     [vpmu_kvm_set_guest_debug(k, cpu, &d)]  a VMM's own guest debugging
 *                                           (a gdb stub), never to KVM
 *   in each vCPU's thread:
 *     loop: vpmu_kvm_run(k, cpu, &handled)  pre-run, KVM_RUN, handle-exit
 *           if (!handled) the VMM's own exits (I/O, MMIO, ...)
 *     or, around a KVM_RUN of the VMM's own:
 *           vpmu_kvm_pre_run(k, cpu)        PMI (LVTPC or NMI), single-step
 *           KVM_RUN (or none: a paused vCPU)
 *           vpmu_kvm_handle_exit(k, cpu, &handled)   MSR, debug and channel exits
 *     [vpmu_kvm_note_injected(k, cpu, 2)]   an NMI (or interrupt) the VMM
 *                                           injects itself
 *   vpmu_kvm_destroy(k)
 *
 * Every function returns 0 or a positive errno.  Threads: set-up before
 * the first vCPU (open, create, filter, memory) on one thread; the
 * per-vCPU set-up of different vCPUs may run on their threads at the same
 * time; the run-loop calls for one vCPU come from one thread at a time,
 * its vCPU thread (libvpmu records it at the first entry, unless
 * vpmu_vcpu_set_thread() named it).
 */
#ifndef VPMU_KVM_H
#define VPMU_KVM_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include <vpmu/export.h>
#include <vpmu/vpmu.h>
#include <vpmu/model.h>
#include <vpmu/source.h>
#include <vpmu/vcpu.h>

#ifdef __cplusplus
extern "C" {
#endif

struct vpmu_vm;
struct kvm_run;
struct kvm_cpuid2;
struct kvm_msr_filter;
struct kvm_guest_debug;
struct kvm_userspace_memory_region;
typedef struct vpmu_kvm vpmu_kvm;

/*
 * Set-up in one call: a config from spec (vpmu_config_parse(), applied
 * over intel-v2 and the exact source; NULL or "": those), a VM of
 * nvcpus vCPUs, then vpmu_kvm_create().  The VM is k's (vpmu_kvm_get_vm(),
 * destroyed with k).  On error why says what failed: a bad spec, a source
 * that cannot count the model's events here (EOPNOTSUPP, unless the spec
 * says uncounted=allow), a PMU mode the host refuses, KVM.
 */
VPMU_EXTERN int  vpmu_kvm_open(int vm_fd, unsigned nvcpus, const char *spec, vpmu_kvm **kp,
    char *why, size_t whylen);
VPMU_EXTERN int  vpmu_kvm_get_vm(const vpmu_kvm *k, struct vpmu_vm **vmp);

VPMU_EXTERN int  vpmu_kvm_create(struct vpmu_vm *vm, int vm_fd, vpmu_kvm **kp);
/*
 * PMU modes (vpmu_config_set_pmu_mode(), vpmu_kvm(3) PMU MODES).  resolve:
 * the mode vpmu_kvm_create() would give vm on this host (*mode
 * VPMU_PMU_MODE_TRAP or _KVM) and why, in words; the errno create would
 * fail with (ENODEV: kvm mode asked for, no host PMU; EOPNOTSUPP: KVM
 * will not use it or cannot take the event filter; EINVAL: the model).
 * get: the mode k has.
 */
VPMU_EXTERN int  vpmu_kvm_resolve_pmu_mode(struct vpmu_vm *vm, int *mode, char *why,
    size_t whylen);
VPMU_EXTERN int  vpmu_kvm_get_pmu_mode(const vpmu_kvm *k, int *mode);
VPMU_EXTERN void vpmu_kvm_destroy(vpmu_kvm *k);
VPMU_EXTERN int  vpmu_kvm_add_memory(vpmu_kvm *k, uint64_t gpa, uint64_t size, void *hva);
/* The same, as the VMM gives the slot to KVM (EINVAL for a deletion). */
VPMU_EXTERN int  vpmu_kvm_add_region(vpmu_kvm *k, const struct kvm_userspace_memory_region *r);
/*
 * Set the model's PMU leaves in a CPUID table the VMM is about to give
 * KVM_SET_CPUID2, after its own filtering: leaf 0xA, CPUID.1:ECX.PDCM,
 * 0x80000001.ECX[23], 0x80000022.  Entries missing from the table are
 * added if there is room, else ENOSPC and the table is unchanged;
 * vpmu_kvm_cpuid_need() gives the entries the patched table has.  A vCPU
 * whose CPUID does not describe the model at its first entry fails there
 * (vpmu_kvm_pre_run(): EPROTO).
 */
VPMU_EXTERN int  vpmu_kvm_cpuid_patch(vpmu_kvm *k, struct kvm_cpuid2 *cpuid, unsigned max_entries);
VPMU_EXTERN int  vpmu_kvm_cpuid_need(const vpmu_kvm *k, const struct kvm_cpuid2 *cpuid,
    unsigned *nent);
/* Entries vpmu_kvm_cpuid_patch() may add: leaves 0xA and 0x80000022. */
#define VPMU_KVM_CPUID_SPARE	2
/*
 * The VMM's own MSR filter (as for KVM_X86_SET_MSR_FILTER; NULL: none),
 * merged with libvpmu's: KVM gets libvpmu's spans first, whose bitmaps
 * send the PMU MSRs to user space and keep the VMM's verdict for every
 * other MSR in them, then the VMM's ranges.  E2BIG if the two need more
 * than KVM's 16 ranges.  The VMM's filter is not kept: give it again to
 * change it.
 */
VPMU_EXTERN int  vpmu_kvm_set_msr_filter(vpmu_kvm *k, const struct kvm_msr_filter *vmm);
/*
 * The VMM's own guest debugging (as for KVM_SET_GUEST_DEBUG), combined
 * with the single-step of a source that follows the guest: KVM gets the
 * VMM's controls and debug registers, with KVM_GUESTDBG_SINGLESTEP added
 * while libvpmu steps.  A debug exit the VMM's settings caused too is left
 * to the VMM (handled false).
 */
VPMU_EXTERN int  vpmu_kvm_set_guest_debug(vpmu_kvm *k, unsigned cpu,
    const struct kvm_guest_debug *dbg);
VPMU_EXTERN int  vpmu_kvm_vcpu_init(vpmu_kvm *k, unsigned cpu, int vcpu_fd, struct kvm_run *run);
/*
 * Before each KVM_RUN.  It sets run->exit_reason to KVM_EXIT_INTR, so a
 * run the VMM skips or that ends in EINTR reaches handle_exit() as one.
 */
VPMU_EXTERN int  vpmu_kvm_pre_run(vpmu_kvm *k, unsigned cpu);
/*
 * pre_run, KVM_RUN (EINTR and EAGAIN: an exit KVM_EXIT_INTR) and
 * handle_exit in one call; an error is pre_run's, KVM_RUN's errno or
 * handle_exit's.
 */
VPMU_EXTERN int  vpmu_kvm_run(vpmu_kvm *k, unsigned cpu, bool *handled);
/*
 * The VMM injected an event itself (KVM_NMI: vector 2; KVM_INTERRUPT or
 * KVM_SET_VCPU_EVENTS: its vector) for the vCPU's next run: a source that
 * follows the guest walks from the handler, so counts stay exact.  Call
 * on the vCPU's thread, before or after pre_run, before the KVM_RUN.
 */
VPMU_EXTERN int  vpmu_kvm_note_injected(vpmu_kvm *k, unsigned cpu, unsigned vector);
/*
 * The signal that ends a vCPU's KVM_RUN when a sample of a time event
 * (task-clock, cpu-clock) is due in it: a timer of vpmu_kvm_pre_run()'s
 * sends it to the calling thread (default SIGRTMAX - 1).  If the signal
 * has no handler (SIG_DFL or SIG_IGN), one that does nothing is installed
 * when the timer is first armed.  A VMM with a kick signal of its own
 * passes it here.
 */
VPMU_EXTERN int  vpmu_kvm_set_kick_signal(vpmu_kvm *k, int signo);
/*
 * Handle run->exit_reason if it is libvpmu's (an MSR exit for the model, a
 * debug exit of the exact source, a port exit of the paravirtual channel,
 * ports 0x5650..0x5657, vpmu_pv(4)): *handled says so.  An error is a host
 * failure (an ioctl failed); a guest fault is not an error (#GP is
 * injected through run->msr.error).
 */
VPMU_EXTERN int  vpmu_kvm_handle_exit(vpmu_kvm *k, unsigned cpu, bool *handled);

/*
 * The VMM changed the vCPU's registers itself (KVM_SET_REGS, a reset,
 * an emulated instruction): the exact source must not count the jump as
 * retired instructions.  Call before the next KVM_RUN.
 */
VPMU_EXTERN int  vpmu_kvm_vcpu_resync(vpmu_kvm *k, unsigned cpu);

/* What libvpmu saw of the guest: exits handled, steps taken. */
struct vpmu_kvm_stats {
	uint64_t msr_reads;
	uint64_t msr_writes;
	uint64_t msr_gp;		/* #GP injected */
	uint64_t steps;			/* single-step exits (exact source) */
	uint64_t pmis;			/* PMIs delivered (NMI or LVTPC vector) */
	uint64_t pmis_masked;		/* PMIs lost to a masked LVTPC */
	uint64_t breaks;		/* breakpoint exits (exact source, block mode) */
	uint64_t completed;		/* breakpoint and single-step exits at which
					   libvpmu retired the branch there
					   (registers through kvm_run) */
	uint64_t rdpmc;			/* RDPMCs libvpmu answered (vpmu_vcpu(3)) */
	uint64_t rdpmc_gp;		/* of them, with #GP for the guest */
	/* The exact source (0 under another source): */
	uint64_t exact_retired;		/* instructions it counted as retired */
	uint64_t exact_completed;	/* of them, retired by libvpmu itself:
					   completed branches, RDPMC, HLT (the
					   guest did not execute them) */
	uint64_t exact_ff_loops;	/* loop runs it fast-forwarded */
	uint64_t exact_ff_insns;	/* instructions they retired */
	uint64_t user_unseen;		/* exits after user-mode code it could not
					   follow: user-mode counts are not exact */
	/*
	 * KVM's own vCPU statistic "insn_emulation" (instructions its
	 * emulator ran), over the time libvpmu followed the vCPU; valid when
	 * has_insn_emulation is 1 (a kernel that emulates guest code and has
	 * binary statistics).  A cross-check, not a count.
	 */
	uint64_t insn_emulation;
	uint32_t has_insn_emulation;
	uint64_t guest_tf;		/* POPF and IRET the exact source saw load
					   RFLAGS.TF: the guest stepping itself,
					   whose traps are lost while followed */
	uint64_t exact_foreseen;	/* branches its runs went through, their way
					   worked out before the run */
	uint64_t exact_mispredicted;	/* runs that ended other than foreseen
					   (each counted as one unresolved
					   instruction; no more are foreseen) */
	uint64_t exact_step_why[VPMU_STEP_WHY_N];	/* entries it single-stepped,
					   by reason (enum vpmu_step_why,
					   vpmu_step_why_name()) */
	uint64_t exact_closed_loops;	/* LOOPs it retired with the rounds after
					   them, which did not run (closed form) */
	uint64_t exact_closed_insns;	/* instructions those rounds retired */
	uint64_t exact_interp_runs;	/* exits at which it ran instructions in
					   user space */
	uint64_t exact_interp_insns;	/* instructions it ran there (the guest
					   did not) */
};
VPMU_EXTERN int  vpmu_kvm_get_stats(vpmu_kvm *k, unsigned cpu, struct vpmu_kvm_stats *st);

#ifdef __cplusplus
}
#endif
#endif /* VPMU_KVM_H */
