/*
 * <vpmu/vcpu.h> -- the exit contract: libvpmu in any VMM's run loop.
 *
 * A VMM reports, for each vCPU and from that vCPU's thread:
 *
 *   vpmu_vcpu_enter(vm, cpu, &entry)   before every guest entry: what to do
 *                                      first (deliver a PMI, guest debugging)
 *   ... the guest runs ...
 *   vpmu_vcpu_exit(vm, cpu, &exit)     after every exit, whatever its reason:
 *                                      the run's time, where the guest is (when
 *                                      asked), and the MSR or port access if
 *                                      the exit is one; libvpmu says whether it
 *                                      took the exit and what the guest gets
 *
 * Everything libvpmu does for a guest works through these two calls:
 * the guest-visible model's MSRs, overflow and PMIs, multiplexing rotation,
 * sampling with call chains, the paravirtual channel, and sources that
 * follow the guest's execution (the exact source).  <vpmu/kvm.h> is a thin
 * translation of struct kvm_run onto them; vpmu_vcpu(3) is the contract.
 *
 * Every function returns 0 or a positive errno.
 */
#ifndef VPMU_VCPU_H
#define VPMU_VCPU_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include <vpmu/export.h>

#ifdef __cplusplus
extern "C" {
#endif

struct vpmu_vm;

/* Where a vCPU is: what sampling and the exact source read. */
struct vpmu_regs {
	uint64_t rip;
	uint64_t rsp;
	uint64_t rbp;			/* frame pointer: call chains */
	uint64_t rcx;
	/* the other general registers (loops the exact source fast-forwards) */
	uint64_t rax, rdx, rbx, rsi, rdi;
	uint64_t r8, r9, r10, r11, r12, r13, r14, r15;
	uint64_t rflags;
	uint64_t cr0, cr3, cr4, efer;	/* the guest's paging */
	uint64_t idt_base;
	uint32_t idt_limit;		/* 0: no IDT known */
	uint32_t cpl;			/* the CPL (KVM: SS.DPL) */
	uint32_t long_mode;		/* 64-bit code: EFER.LMA and CS.L */
	uint32_t gdt_limit;		/* the GDTR (0: none known) */
	uint64_t gdt_base;
};

/*
 * The VMM's way to give registers when libvpmu asks (only when a sample
 * is taken or an execution-following source needs them): 0 or an errno.
 */
typedef int vpmu_regs_fn(void *arg, unsigned cpu, struct vpmu_regs *r);

/* Exit reasons libvpmu distinguishes. */
enum vpmu_exit_reason {
	VPMU_EXIT_OTHER = 0,		/* anything else: HLT, MMIO, a signal ... */
	VPMU_EXIT_MSR_READ = 1,		/* RDMSR of index */
	VPMU_EXIT_MSR_WRITE = 2,	/* WRMSR of data to index */
	VPMU_EXIT_IO = 3,		/* IN or OUT (VPMU_EXITF_OUT) at port index */
	VPMU_EXIT_DEBUG = 4,		/* a debug exit; dr6 says which */
	VPMU_EXIT_RDPMC = 5,		/* the VMM intercepted RDPMC with ECX = index:
					   libvpmu answers data (EDX:EAX) or fault */
};

/* struct vpmu_exit.flags, set by the VMM */
#define VPMU_EXITF_OUT		0x01u	/* VPMU_EXIT_IO: a write */
#define VPMU_EXITF_STRING	0x02u	/* VPMU_EXIT_IO: a string or REP access */
#define VPMU_EXITF_RAN		0x04u	/* ran_ns is the run's CPU time (else measured) */
#define VPMU_EXITF_INJECTED	0x08u	/* an event was injected before this run:
					   vector in vpmu_exit.vector */
#define VPMU_EXITF_MOVED	0x10u	/* the VMM changed RIP itself since the
					   last exit (reset, SET_REGS, restore) */
#define VPMU_EXITF_SETREGS	0x20u	/* VPMU_EXIT_DEBUG: the VMM writes the
					   registers vpmu_exit.set names before
					   the next entry (so libvpmu may complete
					   the instruction at its breakpoint, or
					   an RDPMC) */
#define VPMU_EXITF_SETGPRS	0x40u	/* with VPMU_EXITF_SETREGS: the VMM also
					   writes every general register when
					   vpmu_exit.set has VPMU_SET_GPRS */
#define VPMU_EXITF_DEBUGGING	0x80u	/* watchpoints or single-steps of the
					   VMM's own debugging or of the guest's
					   debug registers (DR7) are enabled, or
					   breakpoints not listed in stops[]:
					   libvpmu retires no instruction the vCPU
					   did not run beyond the one at its stop */

/* struct vpmu_exit.set: registers libvpmu changed (values in the exit) */
#define VPMU_SET_RIP		0x1u
#define VPMU_SET_RSP		0x2u
#define VPMU_SET_RCX		0x4u
#define VPMU_SET_RAX		0x8u
#define VPMU_SET_RDX		0x10u
#define VPMU_SET_RFLAGS		0x20u
#define VPMU_SET_USER		0x40u	/* back to CPL 3: CS and SS become the
					   selectors cs and ss, with the GDT
					   descriptors cs_desc and ss_desc, as
					   IRET would load them */
#define VPMU_SET_GPRS		0x80u	/* all sixteen general registers: gpr[]
					   (only with VPMU_EXITF_SETGPRS) */

/* DR6 bits libvpmu reads (SDM Vol. 3B 18.2.3) */
#define VPMU_DR6_BS		(1u << 14)	/* single-step */
#define VPMU_DR6_B0_3		0xFu		/* breakpoint 0..3 hit */

#define VPMU_EXIT_STOPS_MAX	8	/* vpmu_exit.stops */

struct vpmu_exit {
	/* in */
	uint32_t reason;		/* enum vpmu_exit_reason */
	uint32_t flags;			/* VPMU_EXITF_* */
	uint32_t index;			/* the MSR, or the port */
	uint32_t size;			/* port access: 1, 2 or 4 bytes */
	uint64_t data;			/* in: WRMSR value, OUT data; out: RDMSR, IN */
	uint64_t dr6;			/* VPMU_EXIT_DEBUG */
	uint64_t ran_ns;		/* with VPMU_EXITF_RAN */
	uint32_t vector;		/* with VPMU_EXITF_INJECTED: 2 for an NMI */
	uint32_t halted;		/* out: the single step retired a HLT, and
					   the exit is not handled: halt the vCPU
					   as the HLT would have (vpmu_vcpu(3)) */
	const struct vpmu_regs *regs;	/* NULL: asked through the vpmu_regs_fn */
	/* out */
	uint32_t handled;		/* libvpmu took the exit: the VMM does nothing more */
	uint32_t fault;			/* an MSR access faults: inject #GP(0) */
	uint32_t set;			/* VPMU_SET_*: libvpmu retired the instruction
					   at its breakpoint itself (only with
					   VPMU_EXITF_SETREGS); write these: */
	uint32_t pad;
	uint64_t rip, rsp, rcx;
	uint64_t rax, rdx, rflags;
	uint32_t cs, ss;		/* VPMU_SET_USER */
	uint64_t cs_desc, ss_desc;
	uint64_t gpr[16];		/* VPMU_SET_GPRS: RAX, RCX, RDX, RBX, RSP,
					   RBP, RSI, RDI, R8 .. R15 (rsp, rcx, rax
					   and rdx above hold the same values) */
	/* in */
	uint32_t nstops;		/* instruction breakpoints enabled, of the
					   VMM's own debugging and of the guest's
					   debug registers: their linear addresses
					   in stops[0..nstops), which libvpmu
					   leaves to the processor */
	uint32_t pad2;
	uint64_t stops[VPMU_EXIT_STOPS_MAX];
};

/*
 * struct vpmu_entry.debug: the guest debugging libvpmu wants.
 * VPMU_DEBUG_BREAK: run until the guest is about to execute the
 * instruction at one of bp[0..nbp) (instruction breakpoints), with
 * interrupts and NMIs held back during the run (KVM_GUESTDBG_BLOCKIRQ).
 * The breakpoints whose bits are set in need must be armed; the others
 * only save a later change of the debug registers, and a VMM short of
 * debug registers may leave them out (an address repeated in bp[] needs
 * one register).  A VMM that cannot arm every needed one (its own
 * breakpoints leave too few debug registers) or hold events back
 * single-steps instead, which is always correct.
 */
#define VPMU_DEBUG_STEP		0x1u	/* single-step every instruction */
#define VPMU_DEBUG_BREAK	0x2u	/* run to one of the breakpoints bp[] */
#define VPMU_DEBUG_CATCH	0x4u	/* stop at bp[0], the entry of the guest's
					   #GP handler, interrupts as usual: an
					   RDPMC that faults (vpmu_vcpu(3)); a VMM
					   may ignore it (the guest takes the #GP) */
#define VPMU_DEBUG_BP_MAX	4	/* breakpoints: as many as x86 debug registers */

struct vpmu_entry {
	uint32_t pmi;			/* a PMI is due: deliver it (vpmu_lvtpc_deliver) */
	uint32_t debug;			/* VPMU_DEBUG_* wanted from this entry on */
	uint32_t debug_changed;		/* debug or bp[] differ from the last entry's */
	uint32_t nbp;			/* VPMU_DEBUG_BREAK: breakpoints in bp[], 1..4 */
	uint64_t bp[VPMU_DEBUG_BP_MAX];	/* their linear addresses */
	uint32_t need;			/* bit i: bp[i] must be armed (the others
					   may be left out); VPMU_DEBUG_CATCH: 1 */
	uint32_t pad2;
	uint64_t time_ns;		/* a sample of a time event (task-clock,
					   cpu-clock) is due after this many ns of
					   the vCPU thread's CPU time in the guest:
					   end the run by then (a timer that
					   interrupts it); 0: none */
};

/* What libvpmu saw of one vCPU through the contract. */
struct vpmu_vcpu_stats {
	uint64_t exits;			/* vpmu_vcpu_exit() calls */
	uint64_t msr_reads;
	uint64_t msr_writes;
	uint64_t msr_gp;		/* accesses answered with a fault */
	uint64_t steps;			/* single-step exits taken */
	uint64_t pmis;			/* PMIs handed out by vpmu_vcpu_enter() */
	uint64_t port_io;		/* port accesses the channel took */
	uint64_t samples;		/* samples taken */
	uint64_t breaks;		/* breakpoint exits taken (VPMU_DEBUG_BREAK) */
	uint64_t completed;		/* breakpoint and single-step exits at which
					   libvpmu retired the instruction at RIP
					   itself (vpmu_exit.set) */
	uint64_t rdpmc;			/* RDPMCs libvpmu answered (emulated) */
	uint64_t rdpmc_gp;		/* of them, with #GP for the guest */
	uint64_t time_missed;		/* periods of a time event's sampling PMC
					   that a run went on past: no sample
					   stands for them (vpmu_vcpu(3)) */
};

/*
 * Registers on demand: fn is called from vpmu_vcpu_exit() on the vCPU's
 * thread when an exit gives none (regs NULL) and libvpmu needs them.
 */
VPMU_EXTERN int vpmu_vcpu_set_regs_fn(struct vpmu_vm *vm, unsigned cpu, vpmu_regs_fn *fn,
    void *arg);
/*
 * The guest task a sample belongs to, named by the VMM's task function:
 * pid the process (Linux's tgid), tid the thread (Linux's pid), comm the
 * thread's name and pcomm the process's, NUL-terminated.
 */
#define VPMU_TASK_COMM_MAX	20	/* the pmclog name fields */
struct vpmu_task {
	int32_t pid;
	int32_t tid;
	char comm[VPMU_TASK_COMM_MAX];
	char pcomm[VPMU_TASK_COMM_MAX];
};
/*
 * Called from vpmu_vcpu_exit() on the vCPU's thread when a sample is
 * taken, with the exit's registers, under libvpmu's VM lock: it may read
 * guest memory with vpmu_vm_read() and call no other libvpmu function.
 * 0: t names the task (pid and tid >= 0); anything else: not named, and
 * the sample names the guest's address space instead (VPMU_PID_ASPACE).
 */
typedef int vpmu_task_fn(void *arg, unsigned cpu, const struct vpmu_regs *r,
    struct vpmu_task *t);
VPMU_EXTERN int vpmu_vcpu_set_task_fn(struct vpmu_vm *vm, unsigned cpu, vpmu_task_fn *fn,
    void *arg);
/*
 * The VMM's own unwinder, for guests whose code keeps no frame pointers
 * (a Linux kernel built with ORC, say).  Called from vpmu_vcpu_exit() on
 * the vCPU's thread when a sample is taken, under libvpmu's VM lock, as a
 * task function is (it may read guest memory with vpmu_vm_read()): the
 * call chain of the vCPU in r into pc[0 .. max), pc[0] = r->rip, innermost
 * first.  It returns how many; 0: libvpmu walks the frame pointers, as on
 * a vCPU without an unwinder.
 */
typedef unsigned vpmu_unwind_fn(void *arg, unsigned cpu, const struct vpmu_regs *r,
    uint64_t *pc, unsigned max);
VPMU_EXTERN int vpmu_vcpu_set_unwind_fn(struct vpmu_vm *vm, unsigned cpu, vpmu_unwind_fn *fn,
    void *arg);
/*
 * A sample no task function named, on a vCPU that has one: its pid and
 * tid are VPMU_PID_ASPACE_OF(CR3), the page frame of the guest's top page
 * table with bit 31 set (never a pid: Linux's pid_max is 2^22, FreeBSD's
 * below 10^6), and a PROC_CREATE names it "cr3:0x...".  Without paging
 * the frame is 0.
 */
#define VPMU_PID_ASPACE		0x80000000u
#define VPMU_PID_ASPACE_OF(cr3)	(VPMU_PID_ASPACE | (uint32_t)(((cr3) >> 12) & 0x7FFFFFFFu))

/*
 * Read len bytes of guest memory at linear address gva, translated by the
 * guest's paging in r (cr0, cr3, cr4, efer), from the RAM vpmu_vm_add_memory()
 * gave.  No lock taken: callable from a task or unwind function.  0; EINVAL for a
 * NULL argument; EFAULT when some byte is not mapped (buf holds what was).
 */
VPMU_EXTERN int vpmu_vm_read(struct vpmu_vm *vm, const struct vpmu_regs *r, uint64_t gva,
    void *buf, size_t len);
VPMU_EXTERN int vpmu_vcpu_enter(struct vpmu_vm *vm, unsigned cpu, struct vpmu_entry *e);
VPMU_EXTERN int vpmu_vcpu_exit(struct vpmu_vm *vm, unsigned cpu, struct vpmu_exit *x);
VPMU_EXTERN int vpmu_vcpu_get_stats(struct vpmu_vm *vm, unsigned cpu, struct vpmu_vcpu_stats *st);

/*
 * Guest RAM: size bytes at guest-physical gpa, mapped at hva in this
 * process.  One map serves every reader (the exact source, call chains,
 * the paravirtual channel); libvpmu only reads it, except where the
 * channel writes a request's results.  Add every slot before the vCPUs run.
 */
VPMU_EXTERN int vpmu_vm_add_memory(struct vpmu_vm *vm, uint64_t gpa, uint64_t size, void *hva);

/*
 * Writes libvpmu makes to guest RAM through the host mapping, which a
 * hypervisor's dirty log does not see: fn(arg, gpa, len) is called after
 * each, on the thread that made it (a vCPU's, at an exit), for the VMM's
 * dirty tracking (or a function that does nothing, for a VMM that tracks
 * none).  Without one the exact source writes nothing: a CALL that ends a
 * block is single-stepped rather than completed (vpmu_exact(7)).  The
 * paravirtual channel's result writes are reported too; its fast-read
 * page, rewritten continually while enabled, is not (vpmu_pv(3)).
 * 0; EINVAL for a NULL vm.  fn NULL: none.
 */
typedef void vpmu_write_fn(void *arg, uint64_t gpa, uint64_t len);
VPMU_EXTERN int vpmu_vm_set_write_fn(struct vpmu_vm *vm, vpmu_write_fn *fn, void *arg);

/*
 * A PMI through a local APIC: given the guest's LVT performance-counter
 * register (APIC offset 0x340, x2APIC MSR 0x834), what to inject.
 * *lvtpc is updated to what the register holds after delivery (Intel
 * models set its mask bit, as the SDM says).  VPMU_PMI_NONE: masked, the
 * PMI is lost (the overflow status stays set).
 */
#define VPMU_LVT_VECTOR(v)	((v) & 0xFFu)
#define VPMU_LVT_DM(v)		(((v) >> 8) & 0x7u)	/* delivery mode */
#define VPMU_LVT_DM_FIXED	0u
#define VPMU_LVT_DM_NMI		4u
#define VPMU_LVT_MASKED		(1u << 16)

enum vpmu_pmi_kind {
	VPMU_PMI_NONE = 0,		/* masked, or a mode that delivers nothing */
	VPMU_PMI_NMI = 1,		/* inject an NMI */
	VPMU_PMI_VECTOR = 2,		/* raise *vector as a fixed interrupt */
};
VPMU_EXTERN int vpmu_lvtpc_deliver(struct vpmu_vm *vm, unsigned cpu, uint32_t *lvtpc,
    unsigned *kind, unsigned *vector);

#ifdef __cplusplus
}
#endif
#endif /* VPMU_VCPU_H */
