/*
 * kvm_internal.h -- the KVM glue's shared state, for its files only:
 * struct vpmu_kvm (one per VM), struct kvm_vcpu_ctx (per vCPU), the MSR
 * and register bits they use, and the functions one file gives the
 * others (kvm.c says which file holds what).
 */
#ifndef VPMU_KVM_INTERNAL_H
#define VPMU_KVM_INTERNAL_H

#include <stdbool.h>
#include <stdint.h>
#include <linux/kvm.h>

#include "internal.h"
#include <vpmu/kvm.h>
#include <vpmu/model.h>

#include "kvm_kick.h"
#include "kvm_stats.h"
#define APIC_ID		0x20		/* xAPIC register offsets (SDM Vol. 3A 11.4.1) */
#define APIC_IRR	0x200		/* eight 32-bit words, 16 bytes apart */
#define APIC_LVTPC	0x340
#define MSR_X2APIC_LVTPC 0x834
#define MSR_X2APIC_SELF_IPI 0x83F
#define MSR_APIC_BASE	0x1B		/* IA32_APIC_BASE */
#define APIC_BASE_EXTD	(1ull << 10)	/*  x2APIC mode */
#define APIC_BASE_EN	(1ull << 11)	/*  the APIC is enabled */
#define MSR_MISC_ENABLE	0x1A0		/* IA32_MISC_ENABLE */
#define MISC_EMON	(1ull << 7)	/*  performance monitoring available */
#define MISC_BTS_NA	(1ull << 11)	/*  branch trace storage unavailable */
#define MISC_PEBS_NA	(1ull << 12)	/*  PEBS unavailable */
#define MISC_PMU_BITS	(MISC_EMON | MISC_BTS_NA | MISC_PEBS_NA)
#define EFER_LMA	(1u << 10)	/* long mode active */
#define RFLAGS_TF	(1ull << 8)	/* single-step */
#define RFLAGS_IF	(1ull << 9)	/* interrupts on */
#define DR7_FIXED1	0x400u		/* DR7 bit 10 reads as 1 */
#define DR7_ENABLES	0xFFu		/* L0-L3 and G0-G3 */
#define DR6_FIXED1	0xFFFF0FF0ull	/* DR6 bits that read as 1 (SDM 18.2.3) */

/* How KVM single-steps a vCPU (park_step()). */
enum { STEP_BY_UNKNOWN, STEP_BY_TF, STEP_BY_EMULATOR };

struct kvm_vcpu_ctx {
	int fd;
	struct kvm_run *run;
	bool lapic;			/* the VMM created an in-kernel irqchip */
	bool resync;			/* the VMM moved the vCPU */
	unsigned debug;			/* VPMU_DEBUG_* libvpmu wants */
	unsigned nbp;			/* VPMU_DEBUG_BREAK: its breakpoints */
	unsigned need;			/* the ones the run needs (vpmu_entry) */
	uint64_t bp[VPMU_DEBUG_BP_MAX];
	bool applied_ok;		/* `applied` is what KVM has */
	struct kvm_guest_debug applied;	/* the last KVM_SET_GUEST_DEBUG */
	int injected;			/* vector injected before this run, -1: none */
	bool db_pending;		/* a #DB of the guest's own was injected at the
					   last exit: the next run delivers it */
	int carried;			/* -1, or the vector of an event libvpmu
					   injected that KVM still holds (an
					   interrupt shadow, NMIs masked, IF clear):
					   reported at every exit until delivered,
					   the vCPU single-stepped meanwhile */
	bool carry_applied;		/* apply_debug saw carried >= 0 */
	bool rearm;			/* apply the debugging again at the next
					   entry: the VMM moved the vCPU */
	int step_by;			/* how KVM single-steps it (park_step()) */
	bool stepped;			/* the last exit was a single step */
	bool probing;			/* insn_emulation read at this entry */
	uint64_t probe_at;		/*  its value then */
	unsigned probe_n, probe_yes;	/* steps probed; those KVM emulated */
	bool fresh;			/* kvm_run's synced registers are the
					   vCPU's: an exit came, the VMM moved
					   nothing since (vpmu_kvm_vcpu_resync) */
	uint64_t held_steps;		/* entries stepped for it, where libvpmu
					   wanted breakpoints (VPMU_STEP_EVENT_HELD) */
	bool breaking;			/* libvpmu's breakpoints are what KVM has */
	uint64_t dr_steps;		/* entries that stepped where libvpmu wanted
					   breakpoints (VPMU_STEP_DEBUG_REGS) */
	bool guest_bp;			/* the guest's DR7 enables a breakpoint (read
					   when libvpmu's last began) */
	struct kvm_guest_debug vmm_dbg;	/* the VMM's own guest debugging */
	uint64_t pmis_masked;
	struct vpmu_kvm_stat emul;	/* KVM's "insn_emulation"; fd -1: none */
	bool	 emul_on;		/* following the guest since emul_start */
	uint64_t emul_start;		/* insn_emulation when following started */
	uint64_t emul_sum;		/* its increase over the earlier windows */
	uint64_t idt_base;		/* the guest's IDT register at the last look */
	uint16_t idt_limit;		/*  (a change moves RDPMC's catch, rdpmc.c) */
	struct vpmu_kick kick;		/* ends a run when a time sample is due */
	bool entered;			/* pre_run done, handle_exit not yet */
	int vmm_injected;		/* -1, or an event the VMM injected before
					   pre_run (vpmu_kvm_note_injected) */
	bool started;			/* the first pre_run checked CPUID and took
					   the thread */
};

struct vpmu_kvm {
	struct vpmu_vm *vm;
	unsigned nvcpus;
	int vm_fd;
	bool sync_regs;			/* KVM_CAP_SYNC_REGS: regs come with the exit */
	bool blockirq;			/* KVM_GUESTDBG_BLOCKIRQ is supported */
	int kick_signo;			/* vpmu_kvm_set_kick_signal() (atomic) */
	struct kvm_vcpu_ctx *vcpu;
	int mode;			/* VPMU_PMU_MODE_TRAP or _KVM (kvm_mode.c) */
	/*
	 * Kvm mode: the guest's PMU leaves, what both the model and KVM
	 * (KVM_GET_SUPPORTED_CPUID) offer; that PMU as a model (the counter
	 * report's, and PerfCtrExtCore's); the hooks the core calls.
	 */
	uint32_t leaf_0a[4], leaf_80000022[4];
	struct vpmu_model eff;
	struct vpmu__gpmu_ext ext;
	bool ext_on;			/* the core has ext */
	bool owns_vm;			/* vpmu_kvm_open() made vm: destroyed with k */
	uint64_t misc_pmu;		/* IA32_MISC_ENABLE's PMU bits as the model
					   says (trap mode, Intel models) */
	bool misc_owned;		/*  ... which libvpmu answers */
};

/* A KVM_GET_MSRS or KVM_SET_MSRS of up to two MSRs (entries[] is a flexible array). */
union msrs2 {
	struct kvm_msrs h;
	uint8_t buf[sizeof(struct kvm_msrs) + 2 * sizeof(struct kvm_msr_entry)];
};

/* kvm_msr.c: IA32_MISC_ENABLE (trap mode, Intel models) */
bool	vpmu__kvm_misc_enable(const vpmu_kvm *k, const struct kvm_vcpu_ctx *c, bool write,
	    uint64_t *val);
/* Is run an RDMSR or WRMSR exit of IA32_MISC_ENABLE that libvpmu answers? */
bool	vpmu__kvm_is_misc_enable(const vpmu_kvm *k, const struct kvm_run *run);

/* kvm_cpuid.c: a vCPU's first entry, its thread and its CPUID checked */
int	vpmu__kvm_first_entry(vpmu_kvm *k, unsigned cpu, struct kvm_vcpu_ctx *c);

/* A vCPU's context, NULL when k or cpu is not valid or the vCPU not set up. */
static inline struct kvm_vcpu_ctx *
vpmu__kvm_ctx_of(vpmu_kvm *k, unsigned cpu)
{
	if (k == NULL || cpu >= k->nvcpus || k->vcpu[cpu].run == NULL)
		return (NULL);
	return (&k->vcpu[cpu]);
}

/* kvm_vpmu.c: kvm mode's set-up (KVM's vPMU, the hooks); the hooks let go */
int	vpmu__kvm_vpmu_setup(vpmu_kvm *k);
void	vpmu__kvm_vpmu_detach(vpmu_kvm *k);

/* kvm_regs.c: registers on request (a vpmu_regs_fn, arg the vCPU's context) */
int	vpmu__kvm_regs(void *arg, unsigned cpu, struct vpmu_regs *r);
/* The registers libvpmu changed at an exit (vpmu_exit.set), written back. */
int	vpmu__kvm_set_regs(struct kvm_vcpu_ctx *c, const struct vpmu_exit *x);
/* The guest's IDT register changed: where RDPMC's #GP is caught, again. */
void	vpmu__kvm_idt_moved(vpmu_kvm *k, unsigned cpu, struct kvm_vcpu_ctx *c);

/* kvm_debug.c: the guest debugging */
/* Must the debugging be applied again before this entry? */
bool	vpmu__kvm_debug_due(const struct kvm_vcpu_ctx *c, const struct vpmu_entry *e);
/* The VMM's debugging with libvpmu's on top, into KVM if it changed. */
int	vpmu__kvm_apply_debug(const vpmu_kvm *k, struct kvm_vcpu_ctx *c);
/* At an entry, after the debugging: TF carried, the step probe, the step counts. */
void	vpmu__kvm_debug_enter(struct kvm_vcpu_ctx *c, const struct vpmu_entry *e);
/* At an exit with c->probing: who single-steps, as this step tells. */
void	vpmu__kvm_step_probed(struct kvm_vcpu_ctx *c);
/* A debug exit: the VMM's too?  The DR6 bits libvpmu sees, the guest's own. */
bool	vpmu__kvm_debug_exit(const struct kvm_vcpu_ctx *c, uint64_t dr6, uint64_t *ours,
	    uint64_t *guest);
/* Where the VMM's and the guest's breakpoints would stop the vCPU, into x. */
void	vpmu__kvm_debug_stops(const struct kvm_vcpu_ctx *c, struct vpmu_exit *x);
/* The guest's own #DB with DR6 bits, injected for the next run. */
int	vpmu__kvm_deliver_db(struct kvm_vcpu_ctx *c, uint64_t bits);
/* The vCPU halts as its HLT (retired by libvpmu, or by a step) would have. */
int	vpmu__kvm_step_halt(struct kvm_vcpu_ctx *c, unsigned cpu, bool retired, bool *handled);

/* kvm_pmi.c: the PMI an entry hands out; after an exit, an injected event carried */
int	vpmu__kvm_pmi(vpmu_kvm *k, unsigned cpu, struct kvm_vcpu_ctx *c);
void	vpmu__kvm_carry(struct kvm_vcpu_ctx *c);

/* kvm_stats.c: insn_emulation opened at vCPU set-up; its window at an entry */
void	vpmu__kvm_emul_open(struct kvm_vcpu_ctx *c);
void	vpmu__kvm_emul_window(struct kvm_vcpu_ctx *c, bool on);

#endif /* VPMU_KVM_INTERNAL_H */
