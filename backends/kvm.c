/*
 * kvm.c -- <vpmu/kvm.h>: the exit contract (<vpmu/vcpu.h>) spoken in
 * struct kvm_run, for VMMs that drive KVM.  Everything that decides
 * anything is in the core (libvpmu/vcpu.c); this file translates and does
 * the ioctls:
 *
 *   set-up     KVM's own vPMU off where the kernel lets us; user-space MSR
 *              exits for the model's MSRs, merged into the VMM's own filter
 *              if it has one; the model's CPUID leaves
 *   pre_run    vpmu_vcpu_enter(); a PMI delivered as the guest programmed
 *              its local APIC's LVTPC (in-kernel LAPIC), or as KVM_NMI (the
 *              VMM emulates the APIC); single-stepping or breakpoints
 *              combined with the VMM's own guest debugging; the kick timer
 *              when a time event's sample is due in the run (kvm_kick.c)
 *   handle_exit  struct kvm_run -> struct vpmu_exit -> vpmu_vcpu_exit(),
 *              and the answer back into kvm_run (MSR data and #GP, IN data)
 *
 * Registers are given on request from kvm_run's synced registers
 * (KVM_CAP_SYNC_REGS) or KVM_GET_REGS/SREGS.
 *
 * Here: set-up, the PMU modes' hook-up, guest debugging, PMIs, the run
 * loop and the statistics.  Elsewhere:
 *   kvm_msr.c       the MSR filter merge, IA32_MISC_ENABLE
 *   kvm_cpuid.c     the CPUID patch, steal time, the first entry's check
 *   kvm_mode.c      the PMU modes' decisions (pure functions)
 *   kvm_kick.c      the kick timer;  kvm_stats.c  KVM's statistics fd
 *   kvm_internal.h  the shared state (struct vpmu_kvm, struct kvm_vcpu_ctx)
 */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/syscall.h>
#include <unistd.h>
#include <linux/kvm.h>
#include <linux/kvm_para.h>

#include "internal.h"
#include "gpmu.h"
#include <vpmu/kvm.h>

#include "exact_stats.h"
#include "kvm_internal.h"
#include "kvm_mode.h"

/* ---- PMU modes (kvm_mode.c decides) ------------------------------------------- */

/*
 * Trap mode: the source must count what every model's counters count
 * (instructions, cycles, branches), or the guest would read zeros.
 */
static int
counts_check(struct vpmu_vm *vm, char *why, size_t whylen)
{
	static const uint32_t evs[] = { VPMU_EV_INSTRUCTIONS, VPMU_EV_CYCLES,
	    VPMU_EV_BRANCHES };
	struct vpmu_event_spec ev;
	char reason[160];
	size_t i;
	int error;

	for (i = 0; i < VPMU_ARRAY_SIZE(evs); i++) {
		memset(&ev, 0, sizeof(ev));
		ev.event = evs[i];
		reason[0] = '\0';
		if ((error = vpmu__pmc_supports(vm, &ev, reason, sizeof(reason))) != 0) {
			if (whylen > 0)
				snprintf(why, whylen, "source %s cannot count %s here: %s "
				    "(uncounted=allow runs the guest with counters that count nothing)",
				    vm->src->name, vpmu_event_name(evs[i]),
				    reason[0] != '\0' ? reason : vpmu_strerror(error));
			return (error);
		}
	}
	return (0);
}

int
vpmu_kvm_resolve_pmu_mode(struct vpmu_vm *vm, int *mode, char *why, size_t whylen)
{
	struct vpmu_event_filter f;
	struct vpmu_model m;
	vpmu_host *host;
	bool has_filter;
	int error;

	if (why != NULL && whylen > 0)
		why[0] = '\0';
	if (vm == NULL || mode == NULL || (why == NULL && whylen > 0) ||
	    vpmu_vm_get_model(vm, &m) != 0)
		return (EINVAL);
	if (vm->pmu_mode == VPMU_PMU_MODE_TRAP) {	/* no probe for the default */
		*mode = VPMU_PMU_MODE_TRAP;
		if (whylen > 0)
			snprintf(why, whylen, "trap: libvpmu implements the guest's counters "
			    "through MSR exits");
	} else {
		if ((error = vpmu_host_open(&host)) != 0)
			return (error);
		has_filter = vpmu_vm_get_event_filter(vm, &f) == 0;
		error = vpmu__kvm_mode_resolve(vpmu_host_get_info(host), &m, vm->pmu_mode,
		    has_filter ? &f : NULL, mode, why, whylen);
		vpmu_host_close(host);
		if (error != 0)
			return (error);
	}
	if (*mode == VPMU_PMU_MODE_TRAP && m.vendor != VPMU_VENDOR_NONE && !vm->uncounted_ok)
		return (counts_check(vm, why, whylen));
	return (0);
}

int
vpmu_kvm_get_pmu_mode(const vpmu_kvm *k, int *mode)
{
	if (k == NULL || mode == NULL)
		return (EINVAL);
	*mode = k->mode;
	return (0);
}

/* KVM_SET_PMU_EVENT_FILTER: f as it is (KVM's layout), or NULL for none. */
static int
kvm_filter(void *arg, const struct vpmu_event_filter *f)
{
	static const struct vpmu_event_filter none = { .action = VPMU_FILTER_DENY };
	struct vpmu_kvm *k = arg;

	if (ioctl(k->vm_fd, KVM_SET_PMU_EVENT_FILTER, f != NULL ? f : &none) < 0)
		return (errno);
	return (0);
}

/* The counter report: the model's PMU MSRs as KVM's vPMU has them. */
static int
kvm_counters(void *arg, unsigned cpu, struct vpmu_counter_info *out, unsigned *n)
{
	struct vpmu_kvm *k = arg;
	/* struct kvm_msrs and its entries, as KVM_GET_MSRS reads them */
	uint64_t buf[(sizeof(struct kvm_msrs) + VPMU_KVM_MODE_MAX_MSRS *
	    sizeof(struct kvm_msr_entry)) / sizeof(uint64_t) + 1];
	struct kvm_msrs *req = (struct kvm_msrs *)(void *)buf;
	uint32_t msrs[VPMU_KVM_MODE_MAX_MSRS];
	uint64_t vals[VPMU_KVM_MODE_MAX_MSRS];
	unsigned i, nm;
	int r;

	if (cpu >= k->nvcpus || k->vcpu[cpu].fd < 0)
		return (EINVAL);
	nm = vpmu__kvm_mode_msrs(&k->eff, msrs, VPMU_ARRAY_SIZE(msrs));
	memset(buf, 0, sizeof(buf));
	req->nmsrs = nm;
	for (i = 0; i < nm; i++)
		req->entries[i].index = msrs[i];
	if ((r = ioctl(k->vcpu[cpu].fd, KVM_GET_MSRS, req)) < 0)
		return (errno);
	if ((unsigned)r != nm)
		return (EIO);		/* KVM does not have MSR msrs[r] */
	for (i = 0; i < nm; i++)
		vals[i] = req->entries[i].data;
	return (vpmu__kvm_mode_counters(k->vm, &k->eff, vals, nm, out, n));
}

/*
 * After vpmu_kvm_destroy(): no KVM to ask.  A filter is kept by the VM
 * alone; the counters cannot be read.
 */
static int
detached_counters(void *arg, unsigned cpu, struct vpmu_counter_info *out, unsigned *n)
{
	(void)arg, (void)cpu, (void)out, (void)n;
	return (ENXIO);
}

static int
detached_filter(void *arg, const struct vpmu_event_filter *f)
{
	(void)arg, (void)f;
	return (0);
}

static const struct vpmu__gpmu_ext detached = { detached_counters, detached_filter, NULL };

/* KVM_GET_SUPPORTED_CPUID's leaf (subleaf 0) into r; zeros if absent. */
static void
supported_leaf(const struct kvm_cpuid2 *c, uint32_t leaf, uint32_t r[4])
{
	unsigned i;

	memset(r, 0, 4 * sizeof(r[0]));
	for (i = 0; i < c->nent; i++)
		if (c->entries[i].function == leaf && c->entries[i].index == 0) {
			r[0] = c->entries[i].eax;
			r[1] = c->entries[i].ebx;
			r[2] = c->entries[i].ecx;
			r[3] = c->entries[i].edx;
			return;
		}
}

/*
 * Kvm mode: what KVM's vPMU offers (KVM_GET_SUPPORTED_CPUID on /dev/kvm),
 * and from it and the model the guest's PMU.  KVM's vPMU stays on.
 */
static int
kvm_mode_setup(struct vpmu_kvm *k)
{
	struct kvm_cpuid2 *c = NULL;
	struct vpmu_model m;
	unsigned nent = 128;
	uint32_t r[4], sup[4];
	int fd, error = 0;

	if ((error = vpmu_vm_get_model(k->vm, &m)) != 0)
		return (error);
	if ((fd = open("/dev/kvm", O_RDWR | O_CLOEXEC)) < 0)
		return (errno);
	for (;;) {
		free(c);
		if ((c = calloc(1, sizeof(*c) + nent * sizeof(c->entries[0]))) == NULL) {
			error = ENOMEM;
			break;
		}
		c->nent = nent;
		if (ioctl(fd, KVM_GET_SUPPORTED_CPUID, c) == 0)
			break;
		if (errno != E2BIG || nent >= 4096) {
			error = errno;
			break;
		}
		nent *= 2;
	}
	close(fd);
	if (error == 0) {
		supported_leaf(c, 0xA, sup);
		(void)vpmu_cpuid_leaf(k->vm, 0xA, 0, r);
		vpmu__kvm_mode_leaf(0xA, r, sup, k->leaf_0a);
		supported_leaf(c, 0x80000022, sup);
		(void)vpmu_cpuid_leaf(k->vm, 0x80000022, 0, r);
		vpmu__kvm_mode_leaf(0x80000022, r, sup, k->leaf_80000022);
		supported_leaf(c, 0x80000001, r);
		vpmu__kvm_mode_model(&m, k->leaf_0a, k->leaf_80000022,
		    (r[2] >> 23) & 1, &k->eff);
	}
	free(c);
	k->ext = (struct vpmu__gpmu_ext){ kvm_counters, kvm_filter, k };
	return (error);
}

/* ---- set-up ------------------------------------------------------------------ */

int
vpmu_kvm_create(struct vpmu_vm *vm, int vm_fd, vpmu_kvm **kp)
{
	struct kvm_enable_cap cap;
	struct vpmu_model m;
	struct vpmu_kvm *k;
	int r, error;

	if (vm == NULL || kp == NULL || vm_fd < 0)
		return (EINVAL);
	*kp = NULL;
	if ((k = calloc(1, sizeof(*k))) == NULL ||
	    (k->vcpu = calloc(vm->nvcpus, sizeof(*k->vcpu))) == NULL) {
		free(k);
		return (ENOMEM);
	}
	k->vm = vm;
	k->nvcpus = vm->nvcpus;
	k->vm_fd = vm_fd;
	k->kick_signo = VPMU_KICK_SIGNAL_DEFAULT;
	for (r = 0; r < (int)vm->nvcpus; r++) {
		k->vcpu[r].fd = -1;
		k->vcpu[r].injected = -1;
		k->vcpu[r].carried = -1;
		k->vcpu[r].step_by = STEP_BY_UNKNOWN;
		k->vcpu[r].emul.fd = -1;
		k->vcpu[r].vmm_injected = -1;
	}
	if ((error = vpmu_kvm_resolve_pmu_mode(vm, &k->mode, NULL, 0)) != 0 ||
	    (k->mode == VPMU_PMU_MODE_KVM && (error = kvm_mode_setup(k)) != 0)) {
		vpmu_kvm_destroy(k);
		return (error);
	}

	/* Trap mode: KVM's own vPMU off where the kernel lets us say so. */
	r = k->mode == VPMU_PMU_MODE_TRAP ?
	    ioctl(vm_fd, KVM_CHECK_EXTENSION, KVM_CAP_PMU_CAPABILITY) : 0;
	if (r > 0 && (r & KVM_PMU_CAP_DISABLE)) {
		memset(&cap, 0, sizeof(cap));
		cap.cap = KVM_CAP_PMU_CAPABILITY;
		cap.args[0] = KVM_PMU_CAP_DISABLE;
		(void)ioctl(vm_fd, KVM_ENABLE_CAP, &cap);
	}
	/*
	 * Trap mode, an Intel model: IA32_MISC_ENABLE's EMON bit says whether
	 * there is a PMU, and KVM (its vPMU off) would say no.
	 */
	if (k->mode == VPMU_PMU_MODE_TRAP && vpmu_vm_get_model(vm, &m) == 0 &&
	    m.vendor == VPMU_VENDOR_INTEL) {
		k->misc_owned = true;
		k->misc_pmu = MISC_BTS_NA | MISC_PEBS_NA | (m.version >= 1 ? MISC_EMON : 0);
	}
	memset(&cap, 0, sizeof(cap));
	cap.cap = KVM_CAP_X86_USER_SPACE_MSR;
	cap.args[0] = KVM_MSR_EXIT_REASON_FILTER;
	if (ioctl(vm_fd, KVM_ENABLE_CAP, &cap) < 0) {
		error = errno;
		vpmu_kvm_destroy(k);
		return (error);
	}
	if ((error = vpmu_kvm_set_msr_filter(k, NULL)) != 0) {
		vpmu_kvm_destroy(k);
		return (error);
	}
	/* Kvm mode: the core hands over; the VM's event filter goes to KVM. */
	if (k->mode == VPMU_PMU_MODE_KVM) {
		if ((error = vpmu__gpmu_set_external(vm, &k->ext)) != 0) {
			vpmu_kvm_destroy(k);
			return (error);
		}
		k->ext_on = true;
	}
	r = ioctl(vm_fd, KVM_CHECK_EXTENSION, KVM_CAP_SET_GUEST_DEBUG2);
	k->blockirq = r > 0 && (r & KVM_GUESTDBG_BLOCKIRQ);
	k->sync_regs = (ioctl(vm_fd, KVM_CHECK_EXTENSION, KVM_CAP_SYNC_REGS) &
	    (KVM_SYNC_X86_REGS | KVM_SYNC_X86_SREGS)) ==
	    (KVM_SYNC_X86_REGS | KVM_SYNC_X86_SREGS);
	*kp = k;
	return (0);
}

void
vpmu_kvm_destroy(vpmu_kvm *k)
{
	unsigned i;

	if (k == NULL)
		return;
	if (k->ext_on)
		(void)vpmu__gpmu_set_external(k->vm, &detached);
	for (i = 0; i < k->nvcpus; i++) {
		vpmu__kvm_stat_close(&k->vcpu[i].emul);
		vpmu__kick_fini(&k->vcpu[i].kick);
	}
	free(k->vcpu);
	if (k->owns_vm)
		vpmu_vm_destroy(k->vm);
	free(k);
}

/*
 * Everything before the first vCPU in one call: a config from the spec
 * (vpmu_config_parse(), over this function's defaults intel-v2 and the
 * exact source), the VM, and vpmu_kvm_create().  why says which step
 * failed and how.
 */
int
vpmu_kvm_open(int vm_fd, unsigned nvcpus, const char *spec, vpmu_kvm **kp, char *why,
    size_t whylen)
{
	struct vpmu_vm *vm = NULL;
	vpmu_config *cfg = NULL;
	int mode, error;

	if (why != NULL && whylen > 0)
		why[0] = '\0';
	if (kp == NULL || vm_fd < 0 || (why == NULL && whylen > 0))
		return (EINVAL);
	*kp = NULL;
	if ((error = vpmu_config_create(&cfg)) != 0)
		return (error);
	if ((error = vpmu_config_set_vcpus(cfg, nvcpus)) != 0) {
		if (whylen > 0)
			snprintf(why, whylen, "%u vCPUs: want 1 to %u", nvcpus, VPMU_MAX_VCPUS);
		goto out;
	}
	if ((error = vpmu_config_parse(cfg, "intel-v2,source=exact", NULL, 0)) != 0 ||
	    (error = vpmu_config_parse(cfg, spec, why, whylen)) != 0)
		goto out;
	if ((error = vpmu_vm_create(cfg, &vm)) != 0) {
		if (whylen > 0)
			snprintf(why, whylen, "vpmu_vm_create: %s", vpmu_strerror(error));
		goto out;
	}
	/* The PMU mode, or why none: the source's counts, KVM's vPMU. */
	if ((error = vpmu_kvm_resolve_pmu_mode(vm, &mode, why, whylen)) != 0)
		goto out;
	if ((error = vpmu_kvm_create(vm, vm_fd, kp)) != 0) {
		if (whylen > 0)
			snprintf(why, whylen, "KVM: %s", vpmu_strerror(error));
		goto out;
	}
	(*kp)->owns_vm = true;
	vm = NULL;
out:
	vpmu_vm_destroy(vm);
	vpmu_config_destroy(cfg);
	return (error);
}

int
vpmu_kvm_get_vm(const vpmu_kvm *k, struct vpmu_vm **vmp)
{
	if (k == NULL || vmp == NULL)
		return (EINVAL);
	*vmp = k->vm;
	return (0);
}

int
vpmu_kvm_add_memory(vpmu_kvm *k, uint64_t gpa, uint64_t size, void *hva)
{
	if (k == NULL)
		return (EINVAL);
	return (vpmu_vm_add_memory(k->vm, gpa, size, hva));
}

/*
 * A RAM slot as the VMM gives it to KVM_SET_USER_MEMORY_REGION.  Slots
 * are added, never taken back: a slot deleted (memory_size 0) or moved is
 * EINVAL.
 */
int
vpmu_kvm_add_region(vpmu_kvm *k, const struct kvm_userspace_memory_region *r)
{
	if (k == NULL || r == NULL || r->memory_size == 0 || r->userspace_addr == 0)
		return (EINVAL);
	return (vpmu_vm_add_memory(k->vm, r->guest_phys_addr, r->memory_size,
	    (void *)(uintptr_t)r->userspace_addr));
}

/* Registers on request: kvm_run's synced copy, or two ioctls. */
static int
kvm_regs(void *arg, unsigned cpu, struct vpmu_regs *r)
{
	struct kvm_vcpu_ctx *c = arg;
	struct kvm_regs regs, *rp = &c->run->s.regs.regs;
	struct kvm_sregs sregs, *sp = &c->run->s.regs.sregs;

	(void)cpu;
	if (!(c->run->kvm_valid_regs & KVM_SYNC_X86_REGS)) {
		if (ioctl(c->fd, KVM_GET_REGS, &regs) < 0 ||
		    ioctl(c->fd, KVM_GET_SREGS, &sregs) < 0)
			return (errno);
		rp = &regs;
		sp = &sregs;
	}
	r->rip = rp->rip;
	r->rsp = rp->rsp;
	r->rbp = rp->rbp;
	r->rcx = rp->rcx;
	r->rax = rp->rax;
	r->rdx = rp->rdx;
	r->rbx = rp->rbx;
	r->rsi = rp->rsi;
	r->rdi = rp->rdi;
	r->r8 = rp->r8;
	r->r9 = rp->r9;
	r->r10 = rp->r10;
	r->r11 = rp->r11;
	r->r12 = rp->r12;
	r->r13 = rp->r13;
	r->r14 = rp->r14;
	r->r15 = rp->r15;
	r->rflags = rp->rflags;
	r->cr0 = sp->cr0;
	r->cr3 = sp->cr3;
	r->cr4 = sp->cr4;
	r->efer = sp->efer;
	/*
	 * The CPL is SS.DPL: VMX keeps it there (the SDM's guest-state rules),
	 * and KVM reports SVM's VMCB CPL as SS.DPL; CS.DPL may lag it where
	 * an instruction that changes privilege was emulated.
	 */
	r->cpl = sp->ss.dpl;
	r->long_mode = (sp->efer & EFER_LMA) != 0 && sp->cs.l;	/* and CS.L */
	r->idt_base = sp->idt.base;
	r->idt_limit = sp->idt.limit;
	r->gdt_base = sp->gdt.base;
	r->gdt_limit = sp->gdt.limit;
	return (0);
}

/* ---- KVM's insn_emulation, next to the exact source's count ------------------ */

/* The statistic, where the kernel has it (emulating hosts); none is not an error. */
static void
emul_open(struct kvm_vcpu_ctx *c)
{
	vpmu__kvm_stat_close(&c->emul);
	c->emul_on = false;
	c->emul_sum = 0;
	(void)vpmu__kvm_stat_open(c->fd, "insn_emulation", &c->emul);
}

/*
 * Libvpmu starts (on) or stops following the guest, at an entry: the
 * statistic's increase while it follows adds up in emul_sum.  A failed
 * read drops the statistic.
 */
static void
emul_window(struct kvm_vcpu_ctx *c, bool on)
{
	uint64_t now;

	if (c->emul.fd < 0 || on == c->emul_on)
		return;
	if (vpmu__kvm_stat_read(&c->emul, &now) != 0) {
		vpmu__kvm_stat_close(&c->emul);
		return;
	}
	if (on)
		c->emul_start = now;
	else
		c->emul_sum += now - c->emul_start;
	c->emul_on = on;
}

/* Some RAM slot was given (vpmu_kvm_add_memory, or vpmu_vm_add_memory). */
static bool
have_memory(vpmu_kvm *k)
{
	unsigned n;

	vpmu__vm_lock(k->vm);
	n = k->vm->mem.nslots;
	vpmu__vm_unlock(k->vm);
	return (n != 0);
}

int
vpmu_kvm_vcpu_init(vpmu_kvm *k, unsigned cpu, int vcpu_fd, struct kvm_run *run)
{
	struct kvm_lapic_state la;
	struct kvm_vcpu_ctx *c;

	if (k == NULL || cpu >= k->vm->nvcpus || vcpu_fd < 0 || run == NULL)
		return (EINVAL);
	/*
	 * A source that reads guest memory (the exact source decodes each
	 * instruction it counts from guest RAM) with no slot registered
	 * (vpmu_kvm_add_memory() forgotten) would decode nothing and count
	 * every exit as one instruction.  The monitor's mistake is an error
	 * here, not wrong numbers later.
	 */
	if (k->vm->src->exec_memory != NULL && !have_memory(k))
		return (EFAULT);
	c = &k->vcpu[cpu];
	c->fd = vcpu_fd;
	c->run = run;
	/* An in-kernel LAPIC answers; without KVM_CREATE_IRQCHIP, ENXIO. */
	c->lapic = ioctl(vcpu_fd, KVM_GET_LAPIC, &la) == 0;
	if (k->sync_regs)
		run->kvm_valid_regs = KVM_SYNC_X86_REGS | KVM_SYNC_X86_SREGS;
	emul_open(c);
	return (vpmu_vcpu_set_regs_fn(k->vm, cpu, kvm_regs, c));
}

/* ---- the run loop -------------------------------------------------------------- */

static struct kvm_vcpu_ctx *
ctx_of(vpmu_kvm *k, unsigned cpu)
{
	if (k == NULL || cpu >= k->nvcpus || k->vcpu[cpu].run == NULL)
		return (NULL);
	return (&k->vcpu[cpu]);
}

/* KVM single-steps the vCPU (libvpmu's or the VMM's single-step). */
static bool
stepping(const struct kvm_vcpu_ctx *c)
{
	return (c->applied_ok && (c->applied.control & KVM_GUESTDBG_SINGLESTEP));
}

/*
 * The RFLAGS.TF that registers libvpmu writes back at an entry carry: TF
 * while the processor steps the vCPU, since written without it, at an
 * address other than KVM's single-step record, they would end the steps
 * (park_step()); else none.
 */
static uint64_t
step_tf(const struct kvm_vcpu_ctx *c)
{
	return (stepping(c) && c->step_by == STEP_BY_TF ? RFLAGS_TF : 0);
}

/* No interrupt shadow (STI, MOV SS) over the next instruction. */
static int
shadow_end(struct kvm_vcpu_ctx *c)
{
	struct kvm_vcpu_events ev;

	if (ioctl(c->fd, KVM_GET_VCPU_EVENTS, &ev) < 0)
		return (errno);
	if (ev.interrupt.shadow == 0)
		return (0);
	ev.interrupt.shadow = 0;
	ev.flags = KVM_VCPUEVENT_VALID_SHADOW;
	if (ioctl(c->fd, KVM_SET_VCPU_EVENTS, &ev) < 0)
		return (errno);
	return (0);
}

/*
 * The vCPU must halt as its HLT would have: libvpmu retired the HLT
 * itself (retired: RIP is already past it in the registers written), or a
 * single step retired it and KVM reported the step instead of the halt.
 * Without the in-kernel LAPIC: as the exit the VMM would have seen,
 * KVM_EXIT_HLT.  With it: halted in the kernel (KVM_MP_STATE_HALTED), the
 * exit handled, and the next KVM_RUN waits for the wake.  A stepped HLT
 * with interrupts on is the exception: some hosts carry that halt out
 * later on their own, once stepping stops (vpmu_exact(7), CAVEATS), so the
 * step goes on.
 */
static int
step_halt(struct kvm_vcpu_ctx *c, unsigned cpu, bool retired, bool *handled)
{
	struct kvm_mp_state mp = { .mp_state = KVM_MP_STATE_HALTED };
	struct vpmu_regs r;
	int error;

	if (!c->lapic) {
		/*
		 * The monitor's KVM_EXIT_HLT: it may read the registers with
		 * KVM_GET_REGS, so they are written now, as KVM's own exit
		 * would leave them (RIP past the HLT).
		 */
		if (retired && (c->run->kvm_dirty_regs & KVM_SYNC_X86_REGS)) {
			struct kvm_regs w = c->run->s.regs.regs;

			w.rflags |= step_tf(c);
			if (ioctl(c->fd, KVM_SET_REGS, &w) < 0)
				return (errno);
			c->run->kvm_dirty_regs &= ~(uint64_t)KVM_SYNC_X86_REGS;
		}
		c->run->exit_reason = KVM_EXIT_HLT;
		return (0);
	}
	if (!retired && (error = kvm_regs(c, cpu, &r)) != 0)
		return (error);
	/*
	 * A HLT right after STI or MOV SS retires inside that instruction's
	 * interrupt shadow, and the shadow ends with it: one KVM still holds
	 * would keep the wake's interrupt out for good.
	 */
	if (retired && (error = shadow_end(c)) != 0)
		return (error);
	if ((retired || !(r.rflags & RFLAGS_IF)) &&
	    ioctl(c->fd, KVM_SET_MP_STATE, &mp) < 0)
		return (errno);
	*handled = true;
	return (0);
}

/*
 * Does debug register j of dbg hold an enabled instruction breakpoint
 * (R/W and LEN 00) at addr?  One of the VMM's there serves libvpmu too:
 * the exit is given to both (shared_breaks).
 */
static bool
break_at(const struct kvm_guest_debug *dbg, unsigned j, uint64_t addr)
{
	uint64_t dr7 = dbg->arch.debugreg[7];

	return ((dr7 >> (2 * j) & 3) != 0 && (dr7 >> (16 + 4 * j) & 0xF) == 0 &&
	    dbg->arch.debugreg[j] == addr);
}

/*
 * Put bp[i] (the mask's bits) into the free debug registers of dbg (DR7's
 * L/G bits clear), in order, one register per address, as many as fit;
 * an address already there (libvpmu's, or the VMM's own instruction
 * breakpoint) takes none.  false: one did not fit.
 */
static bool
put_breaks(const struct kvm_vcpu_ctx *c, unsigned mask, struct kvm_guest_debug *dbg)
{
	uint64_t dr7 = dbg->arch.debugreg[7];
	unsigned i, j, slot = 0;
	bool fit = true;

	for (i = 0; i < c->nbp; i++) {
		if (!(mask & (1u << i)))
			continue;
		for (j = 0; j < 4 && !break_at(dbg, j, c->bp[i]); j++)
			;
		if (j < 4)
			continue;			/* already armed */
		while (slot < 4 && (dr7 >> (2 * slot) & 3))
			slot++;
		if (slot == 4) {
			fit = false;
			continue;
		}
		dbg->arch.debugreg[slot] = c->bp[i];
		dr7 &= ~(0xFull << (16 + 4 * slot));	/* execution, one byte */
		dr7 |= 1ull << (2 * slot);		/* L<slot> */
		dbg->arch.debugreg[7] = dr7;
	}
	return (fit);
}

/*
 * libvpmu's breakpoints in the debug registers the VMM's own debugging
 * leaves free (DR7 L/G bits clear), as instruction breakpoints (R/W 00,
 * LEN 00), with interrupts and NMIs held back if hold (a block's run;
 * not the catch of RDPMC's #GP).  All of them in their order when they
 * fit (the registers then keep their addresses from run to run), else
 * the needed ones and as many others as fit.  false: the needed ones do
 * not fit, or events cannot be held back.
 */
static bool
add_breaks(const vpmu_kvm *k, const struct kvm_vcpu_ctx *c, struct kvm_guest_debug *dbg,
    bool hold)
{
	struct kvm_guest_debug all;
	unsigned every = (1u << c->nbp) - 1;

	if (hold && !k->blockirq)
		return (false);
	if (!(dbg->control & KVM_GUESTDBG_USE_HW_BP)) {
		memset(dbg->arch.debugreg, 0, sizeof(dbg->arch.debugreg));
		dbg->arch.debugreg[7] = DR7_FIXED1;
	}
	all = *dbg;
	if (put_breaks(c, every, &all))
		*dbg = all;
	else if (!put_breaks(c, c->need & every, dbg))
		return (false);
	else
		(void)put_breaks(c, every & ~c->need, dbg);	/* as many as fit */
	dbg->arch.debugreg[7] |= DR7_FIXED1;
	dbg->control |= KVM_GUESTDBG_ENABLE | KVM_GUESTDBG_USE_HW_BP |
	    (hold ? KVM_GUESTDBG_BLOCKIRQ : 0);
	return (true);
}

/*
 * KVM_SET_GUEST_DEBUG with single-step records where RIP is (KVM's
 * singlestep_rip) and sets RFLAGS.TF; from then on every write of RFLAGS
 * -- the VMM's, or KVM's emulator's after each instruction it runs -- sets
 * TF again whenever RIP is at that address, and writes the value given
 * elsewhere.  How that plays out depends on who steps:
 *
 *   STEP_BY_TF        the processor, by TF (VMX, SVM running the guest's
 *                     code): TF must stay in the guest's RFLAGS, so
 *                     registers libvpmu writes back while KVM steps carry
 *                     it (step_tf), or the steps would end there.
 *   STEP_BY_EMULATOR  KVM's instruction emulator (a host that emulates
 *                     guest CPL 0 code): it steps without TF and clears it
 *                     after each instruction, but sets it again whenever
 *                     the guest runs the recorded address again, and an
 *                     NMI or interrupt delivered then (or before the first
 *                     instruction after TF was set) saves it in the
 *                     handler's frame: the handler's IRET would turn the
 *                     guest's own single-stepping on.  A block engine
 *                     switches to single-step inside loops, where the
 *                     recorded address is soon run again.  So the record
 *                     is taken with RIP at an address no instruction can
 *                     be at (non-canonical in 64-bit mode, the last byte
 *                     below 4 GiB otherwise) and the registers are put
 *                     back without TF (park_step).
 *   STEP_BY_UNKNOWN   not told yet (step_by_probe()): as STEP_BY_TF but
 *                     for step_tf, as before either was known.
 */
static int
park_step(const vpmu_kvm *k, struct kvm_vcpu_ctx *c, const struct kvm_guest_debug *dbg)
{
	struct kvm_regs now, park;
	struct kvm_sregs sr;
	bool synced = k->sync_regs && c->fresh &&
	    (c->run->kvm_valid_regs & (KVM_SYNC_X86_REGS | KVM_SYNC_X86_SREGS)) ==
	    (KVM_SYNC_X86_REGS | KVM_SYNC_X86_SREGS);
	int error = 0;

	if (synced) {
		now = c->run->s.regs.regs;	/* with what libvpmu wrote */
		sr = c->run->s.regs.sregs;
	} else if (ioctl(c->fd, KVM_GET_REGS, &now) < 0 || ioctl(c->fd, KVM_GET_SREGS, &sr) < 0)
		return (errno);
	park = now;
	if ((sr.efer & EFER_LMA) && sr.cs.l)
		park.rip = 1ull << 63;
	else
		park.rip = (0xFFFFFFFFull - sr.cs.base) & 0xFFFFFFFFull;
	if (ioctl(c->fd, KVM_SET_REGS, &park) < 0)
		return (errno);
	if (ioctl(c->fd, KVM_SET_GUEST_DEBUG, dbg) < 0)
		error = errno;
	if (synced) {
		c->run->s.regs.regs = now;
		c->run->kvm_dirty_regs |= KVM_SYNC_X86_REGS;
	} else if (ioctl(c->fd, KVM_SET_REGS, &now) < 0 && error == 0)
		error = errno;
	return (error);
}

/*
 * Who steps, told by KVM's own statistics of the vCPU.  At the first
 * single-step: a vCPU that has run where KVM's emulator ran its
 * instructions ("insn_emulation") four times as often as it exited
 * ("exits"), over at least STEP_BY_MIN of them, is emulated; one that
 * exited four times as often as it was emulated runs in hardware.  Else
 * the first STEP_BY_PROBES single steps that follow single steps decide:
 * the emulator ran the instruction of at least three in four of them, or
 * not.  (A step after another exit may finish what that exit began, an
 * MSR access the VMM answered.)  Without the statistics: STEP_BY_TF.
 */
#define STEP_BY_MIN	256
#define STEP_BY_PROBES	8

static void
step_by_stats(struct kvm_vcpu_ctx *c)
{
	struct vpmu_kvm_stat ex;
	uint64_t em, exits;

	if (c->emul.fd < 0) {
		c->step_by = STEP_BY_TF;
		return;
	}
	if (vpmu__kvm_stat_read(&c->emul, &em) != 0 ||
	    vpmu__kvm_stat_open(c->fd, "exits", &ex) != 0)
		return;
	if (vpmu__kvm_stat_read(&ex, &exits) == 0) {
		if (em >= STEP_BY_MIN && em >= 4 * exits)
			c->step_by = STEP_BY_EMULATOR;
		else if (exits >= STEP_BY_MIN && 4 * em < exits)
			c->step_by = STEP_BY_TF;
	}
	vpmu__kvm_stat_close(&ex);
}

/* At an entry: a step that follows a step is probed. */
static void
step_by_probe(struct kvm_vcpu_ctx *c)
{
	c->probing = c->step_by == STEP_BY_UNKNOWN && c->stepped && c->emul.fd >= 0 &&
	    stepping(c) && vpmu__kvm_stat_read(&c->emul, &c->probe_at) == 0;
}

/* At an exit: the probe's outcome. */
static void
step_by_probed(struct kvm_vcpu_ctx *c)
{
	uint64_t now;

	if (!c->probing)
		return;
	c->probing = false;
	if (!c->stepped || vpmu__kvm_stat_read(&c->emul, &now) != 0)
		return;
	c->probe_yes += now != c->probe_at;
	if (++c->probe_n < STEP_BY_PROBES)
		return;
	c->step_by = 4 * c->probe_yes >= 3 * c->probe_n ? STEP_BY_EMULATOR : STEP_BY_TF;
	c->rearm = c->step_by == STEP_BY_EMULATOR;	/* park the record now */
}

/*
 * The guest debugging must be applied again before the entry: the source
 * asks for other debugging, an injected event began or stopped being
 * held back (no breakpoints while it is), or the VMM moved the vCPU.
 */
static bool
debug_due(const struct kvm_vcpu_ctx *c, const struct vpmu_entry *e)
{
	return (e->debug_changed || (c->carried >= 0) != c->carry_applied || c->rearm);
}

/*
 * The VMM's guest debugging with libvpmu's single-step or breakpoints on
 * top; KVM_SET_GUEST_DEBUG only when that differs from what KVM has (an
 * ioctl costs microseconds, and a block engine changes breakpoints at
 * most exits).
 */
static int
apply_debug(const vpmu_kvm *k, struct kvm_vcpu_ctx *c)
{
	struct kvm_guest_debug dbg = c->vmm_dbg;
	struct kvm_debugregs dr;
	bool breaking = false;
	int error;

	/*
	 * libvpmu's breakpoints would switch the guest's own off
	 * (KVM_GUESTDBG_USE_HW_BP): not while its DR7 enables one.  The guest
	 * writes DR7 only with MOV DR7, which ends a block (single-stepped),
	 * so reading it when libvpmu's breakpoints begin is enough.
	 */
	if ((c->debug & (VPMU_DEBUG_BREAK | VPMU_DEBUG_CATCH)) && !c->breaking)
		c->guest_bp = ioctl(c->fd, KVM_GET_DEBUGREGS, &dr) < 0 ||
		    (dr.dr7 & DR7_ENABLES) != 0;
	c->carry_applied = c->carried >= 0;
	if (c->debug & VPMU_DEBUG_BREAK) {
		if (!c->guest_bp && !c->carry_applied && add_breaks(k, c, &dbg, true))
			breaking = true;
		else {
			dbg = c->vmm_dbg;
			dbg.control |= KVM_GUESTDBG_ENABLE | KVM_GUESTDBG_SINGLESTEP;
		}
	} else if (c->debug & VPMU_DEBUG_STEP)
		dbg.control |= KVM_GUESTDBG_ENABLE | KVM_GUESTDBG_SINGLESTEP;
	else if (c->debug & VPMU_DEBUG_CATCH) {
		if (!c->guest_bp && add_breaks(k, c, &dbg, false))
			breaking = true;
		else
			dbg = c->vmm_dbg;	/* the guest takes RDPMC's #GP */
	}
	c->breaking = breaking;
	if (c->applied_ok && !c->rearm && memcmp(&dbg, &c->applied, sizeof(dbg)) == 0)
		return (0);
	c->applied_ok = false;
	c->rearm = false;
	if ((dbg.control & KVM_GUESTDBG_SINGLESTEP) && c->step_by == STEP_BY_UNKNOWN)
		step_by_stats(c);
	if ((dbg.control & KVM_GUESTDBG_SINGLESTEP) && c->step_by == STEP_BY_EMULATOR) {
		if ((error = park_step(k, c, &dbg)) != 0)
			return (error);
	} else if (ioctl(c->fd, KVM_SET_GUEST_DEBUG, &dbg) < 0)
		return (errno);
	c->applied = dbg;
	c->applied_ok = true;
	return (0);
}

int
vpmu_kvm_set_guest_debug(vpmu_kvm *k, unsigned cpu, const struct kvm_guest_debug *dbg)
{
	struct kvm_vcpu_ctx *c;
	struct kvm_guest_debug saved;
	int error;

	if ((c = ctx_of(k, cpu)) == NULL || dbg == NULL)
		return (EINVAL);
	saved = c->vmm_dbg;
	c->vmm_dbg = *dbg;
	if ((error = apply_debug(k, c)) != 0)
		c->vmm_dbg = saved;
	return (error);
}

/*
 * A PMI with an in-kernel LAPIC, as the guest programmed LVTPC; none while
 * the APIC is disabled (IA32_APIC_BASE.EN clear), as on hardware.  In
 * x2APIC mode LVTPC is read and written as its MSR and a fixed vector
 * goes through the SELF IPI MSR, one KVM_SET_MSRS for both: no other
 * LAPIC state is touched, and the vector reaches this vCPU whatever the
 * format of its APIC ID.  In xAPIC mode the entry comes with
 * KVM_GET_LAPIC; the mask bit an Intel model sets is written back with
 * KVM_SET_LAPIC before the interrupt is sent (an MSI to the APIC ID), so
 * that the write does not take back the IRR bit (vpmu_kvm(3) CAVEATS).
 */
static int
lapic_pmi(vpmu_kvm *k, unsigned cpu, struct kvm_vcpu_ctx *c)
{
	struct kvm_lapic_state la;
	union msrs2 m;
	struct kvm_msi msi;
	uint32_t lvt, was;
	unsigned kind, vec, n;
	bool x2apic;
	int error;

	memset(&m, 0, sizeof(m));
	m.h.nmsrs = 2;
	m.h.entries[0].index = MSR_APIC_BASE;
	m.h.entries[1].index = MSR_X2APIC_LVTPC;	/* read only in x2APIC mode */
	if (ioctl(c->fd, KVM_GET_MSRS, &m) < 1)
		return (EIO);
	if (!(m.h.entries[0].data & APIC_BASE_EN)) {	/* no LVT delivers anything */
		c->pmis_masked++;
		return (0);
	}
	x2apic = (m.h.entries[0].data & APIC_BASE_EXTD) != 0;
	if (x2apic)
		lvt = (uint32_t)m.h.entries[1].data;
	else if (ioctl(c->fd, KVM_GET_LAPIC, &la) < 0)
		return (errno);
	else
		memcpy(&lvt, la.regs + APIC_LVTPC, sizeof(lvt));
	was = lvt;
	if ((error = vpmu_lvtpc_deliver(k->vm, cpu, &lvt, &kind, &vec)) != 0)
		return (error);
	if (kind == VPMU_PMI_NONE) {
		c->pmis_masked++;
		return (0);
	}
	if (x2apic) {
		memset(&m, 0, sizeof(m));
		n = 0;
		if (lvt != was) {
			m.h.entries[n].index = MSR_X2APIC_LVTPC;
			m.h.entries[n++].data = lvt;
		}
		if (kind != VPMU_PMI_NMI) {
			m.h.entries[n].index = MSR_X2APIC_SELF_IPI;
			m.h.entries[n++].data = vec;
		}
		m.h.nmsrs = n;
		if (n != 0 && ioctl(c->fd, KVM_SET_MSRS, &m) != (int)n)
			return (EIO);
	} else if (lvt != was) {
		memcpy(la.regs + APIC_LVTPC, &lvt, sizeof(lvt));
		if (ioctl(c->fd, KVM_SET_LAPIC, &la) < 0)
			return (errno);
	}
	if (kind == VPMU_PMI_NMI) {
		if (ioctl(c->fd, KVM_NMI) < 0)
			return (errno);
		c->injected = 2;
		return (0);
	}
	if (!x2apic) {
		memset(&msi, 0, sizeof(msi));
		/* Physical destination: this vCPU's APIC ID (xAPIC ID bits 31:24). */
		msi.address_lo = 0xFEE00000u | (uint32_t)la.regs[APIC_ID + 3] << 12;
		msi.data = vec;			/* fixed, edge */
		if (ioctl(k->vm_fd, KVM_SIGNAL_MSI, &msi) < 0)
			return (errno);
	}
	c->injected = (int)vec;
	return (0);
}

/*
 * Guest debugging to change and a PMI to deliver before the entry, in
 * that order: an NMI queued before KVM_SET_GUEST_DEBUG turned single-step
 * on was delivered with RFLAGS.TF in its frame (tf_hidden.c, block mode).
 */
static __attribute__((noinline)) int
pre_run_work(vpmu_kvm *k, unsigned cpu, struct kvm_vcpu_ctx *c, const struct vpmu_entry *e)
{
	int error = 0;
	bool held;

	if (e->debug_changed) {
		emul_window(c, (e->debug & (VPMU_DEBUG_STEP | VPMU_DEBUG_BREAK)) != 0);
		c->debug = e->debug;
		c->nbp = e->nbp;
		c->need = e->need;
		memcpy(c->bp, e->bp, sizeof(c->bp));
	}
	if (debug_due(c, e))
		error = apply_debug(k, c);
	/* One event per run: the guest's own #DB (injected >= 0) goes first. */
	held = c->injected >= 0;
	if (e->pmi && error == 0 && !held) {
		if (c->lapic)
			error = lapic_pmi(k, cpu, c);
		else if (ioctl(c->fd, KVM_NMI) < 0)
			error = errno;
		else
			c->injected = 2;
	}
	if ((error != 0 || held) && e->pmi)	/* not lost: due at the next entry */
		vpmu__vcpu_pmi_again(k->vm, cpu);
	return (error);
}

static int enter(vpmu_kvm *k, unsigned cpu, struct kvm_vcpu_ctx *c);

int
vpmu_kvm_pre_run(vpmu_kvm *k, unsigned cpu)
{
	struct kvm_vcpu_ctx *c;
	int error;

	if ((c = ctx_of(k, cpu)) == NULL)
		return (EINVAL);
	if (!c->started && (error = vpmu__kvm_first_entry(k, cpu, c)) != 0)
		return (error);
	/*
	 * What handle_exit() finds if the VMM's KVM_RUN does not happen (a
	 * paused vCPU) or ends before the guest runs (EINTR): no stale exit.
	 */
	c->run->exit_reason = KVM_EXIT_INTR;
	error = enter(k, cpu, c);
	c->entered = error == 0;
	return (error);
}

static int
enter(vpmu_kvm *k, unsigned cpu, struct kvm_vcpu_ctx *c)
{
	struct vpmu_entry e;
	int error, vmm;

	/* #DB: the guest's own (deliver_db), reported before a carried event */
	c->injected = c->db_pending ? 1 : c->carried;
	c->db_pending = false;
	/* An NMI or interrupt the VMM injected (vpmu_kvm_note_injected()). */
	if (__atomic_load_n(&c->vmm_injected, __ATOMIC_RELAXED) >= 0 &&
	    (vmm = __atomic_exchange_n(&c->vmm_injected, -1, __ATOMIC_ACQ_REL)) >= 0 &&
	    c->injected < 0)
		c->injected = vmm;
	if (vpmu__vcpu_enter_quiet(k->vm, cpu))	/* ctx_of() checked cpu */
		return (c->kick.armed ? vpmu__kick_arm(&c->kick, 0, 0) : 0);
	vpmu__vcpu_enter(k->vm, cpu, &e);
	if ((e.pmi || debug_due(c, &e)) && (error = pre_run_work(k, cpu, c, &e)) != 0)
		return (error);
	if (c->run->kvm_dirty_regs & KVM_SYNC_X86_REGS)
		c->run->s.regs.regs.rflags |= step_tf(c);
	step_by_probe(c);
	if ((e.debug & VPMU_DEBUG_BREAK) && !c->breaking) {	/* a step */
		if (c->carry_applied)
			__atomic_store_n(&c->held_steps, c->held_steps + 1, __ATOMIC_RELAXED);
		else
			__atomic_store_n(&c->dr_steps, c->dr_steps + 1, __ATOMIC_RELAXED);
	}
	/* Last, as near KVM_RUN as this call gets: a kick before it is lost. */
	if (e.time_ns != 0 || c->kick.armed)
		return (vpmu__kick_arm(&c->kick, __atomic_load_n(&k->kick_signo,
		    __ATOMIC_RELAXED), e.time_ns));
	return (0);
}

int
vpmu_kvm_note_injected(vpmu_kvm *k, unsigned cpu, unsigned vector)
{
	struct kvm_vcpu_ctx *c;

	if ((c = ctx_of(k, cpu)) == NULL || vector > 255)
		return (EINVAL);
	if (c->entered) {		/* after pre_run: this entry delivers it */
		if (c->injected < 0)
			c->injected = (int)vector;
	} else
		__atomic_store_n(&c->vmm_injected, (int)vector, __ATOMIC_RELEASE);
	return (0);
}

int
vpmu_kvm_run(vpmu_kvm *k, unsigned cpu, bool *handled)
{
	struct kvm_vcpu_ctx *c;
	int error;

	if ((c = ctx_of(k, cpu)) == NULL || handled == NULL)
		return (EINVAL);
	*handled = false;
	if ((error = vpmu_kvm_pre_run(k, cpu)) != 0)
		return (error);
	if (ioctl(c->fd, KVM_RUN, 0) < 0) {
		if (errno != EINTR && errno != EAGAIN) {
			error = errno;
			c->entered = false;
			return (error);
		}
		c->run->exit_reason = KVM_EXIT_INTR;
	}
	return (vpmu_kvm_handle_exit(k, cpu, handled));
}

int
vpmu_kvm_set_kick_signal(vpmu_kvm *k, int signo)
{
	int error;

	if (k == NULL)
		return (EINVAL);
	if ((error = vpmu__kick_signal_check(signo)) != 0)
		return (error);
	__atomic_store_n(&k->kick_signo, signo, __ATOMIC_RELAXED);
	return (0);
}

int
vpmu_kvm_post_run(vpmu_kvm *k, unsigned cpu)
{
	return (ctx_of(k, cpu) == NULL ? EINVAL : 0);
}

/* DR6's B0-B3 bits of the breakpoints the VMM's own DR7 enables. */
static uint64_t
vmm_breaks(const struct kvm_vcpu_ctx *c)
{
	const struct kvm_guest_debug *d = &c->vmm_dbg;
	uint64_t bits = 0;
	unsigned i;

	if ((d->control & (KVM_GUESTDBG_ENABLE | KVM_GUESTDBG_USE_HW_BP)) !=
	    (KVM_GUESTDBG_ENABLE | KVM_GUESTDBG_USE_HW_BP))
		return (0);
	for (i = 0; i < 4; i++)
		if (d->arch.debugreg[7] >> (2 * i) & 3)
			bits |= 1ull << i;
	return (bits);
}

/*
 * Does KVM still hold the event libvpmu injected as vec (2: an NMI; 32 and
 * up: an interrupt through the in-kernel LAPIC)?  An NMI waits while NMIs
 * are masked or in an interrupt shadow (STI, MOV SS), an interrupt while
 * RFLAGS.IF is clear too, or behind one of higher priority.  A failed
 * ioctl says no: the source then reconstructs the transfer as any other.
 */
static bool
event_held(const struct kvm_vcpu_ctx *c, int vec)
{
	struct kvm_vcpu_events ev;
	struct kvm_lapic_state la;
	uint32_t irr;

	if (ioctl(c->fd, KVM_GET_VCPU_EVENTS, &ev) < 0)
		return (false);
	if (vec == 2)
		return (ev.nmi.pending || ev.nmi.injected);
	if (vec < 32 || !c->lapic)
		return (false);
	if (ev.interrupt.injected && ev.interrupt.nr == vec)
		return (true);		/* in flight: delivered at the next entry */
	if (ioctl(c->fd, KVM_GET_LAPIC, &la) < 0)
		return (false);
	memcpy(&irr, la.regs + APIC_IRR + (unsigned)vec / 32u * 16u, sizeof(irr));
	return ((irr >> (vec % 32)) & 1u) != 0;
}

/*
 * The guest's own #DB (its breakpoints' DR6 bits): its DR6 gets them, as
 * the processor would set them, and the exception is injected; the next
 * run delivers it (reported to libvpmu as an injected vector 1).
 */
static int
deliver_db(struct kvm_vcpu_ctx *c, uint64_t bits)
{
	struct kvm_debugregs dr;
	struct kvm_vcpu_events ev;

	if (ioctl(c->fd, KVM_GET_DEBUGREGS, &dr) < 0)
		return (errno);
	dr.dr6 |= DR6_FIXED1 | bits;
	if (ioctl(c->fd, KVM_SET_DEBUGREGS, &dr) < 0 ||
	    ioctl(c->fd, KVM_GET_VCPU_EVENTS, &ev) < 0)
		return (errno);
	ev.exception.injected = 1;
	ev.exception.nr = 1;
	ev.exception.has_error_code = 0;
	ev.exception.error_code = 0;
	ev.flags = 0;
	if (ioctl(c->fd, KVM_SET_VCPU_EVENTS, &ev) < 0)
		return (errno);
	c->db_pending = true;
	return (0);
}

/*
 * DR6's B0-B3 bits of the VMM's breakpoints that are libvpmu's too (an
 * address of this run's, put_breaks): a hit there is both's.
 */
static uint64_t
shared_breaks(const struct kvm_vcpu_ctx *c)
{
	uint64_t vmm = vmm_breaks(c), bits = 0;
	unsigned i, j;

	if (!c->breaking || !c->applied_ok)
		return (0);
	for (j = 0; j < 4; j++)
		for (i = 0; (vmm >> j & 1) && i < c->nbp; i++)
			if (break_at(&c->applied, j, c->bp[i]))
				bits |= 1ull << j;
	return (bits);
}

/* Did the VMM's own debugging cause this debug exit too? */
static bool
vmm_debug_exit(const struct kvm_vcpu_ctx *c, uint64_t dr6)
{
	const struct kvm_guest_debug *d = &c->vmm_dbg;

	if (!(d->control & KVM_GUESTDBG_ENABLE))
		return (false);
	if ((d->control & KVM_GUESTDBG_SINGLESTEP) && (dr6 & VPMU_DR6_BS))
		return (true);
	return ((dr6 & vmm_breaks(c)) != 0);	/* B0-B3 of a breakpoint of the VMM's */
}

/*
 * A segment register as loading the 8-byte descriptor d with selector sel
 * makes it (SDM Vol. 3A 3.4.5): for VPMU_SET_USER.
 */
static void
seg_load(struct kvm_segment *sg, uint32_t sel, uint64_t d)
{
	memset(sg, 0, sizeof(*sg));
	sg->selector = (uint16_t)sel;
	sg->base = (d >> 16 & 0xFFFFFF) | (d >> 56 & 0xFF) << 24;
	sg->limit = (uint32_t)((d & 0xFFFF) | (d >> 48 & 0xF) << 16);
	sg->g = d >> 55 & 1;
	if (sg->g)
		sg->limit = sg->limit << 12 | 0xFFF;
	sg->type = d >> 40 & 0xF;
	sg->s = d >> 44 & 1;
	sg->dpl = d >> 45 & 3;
	sg->present = d >> 47 & 1;
	sg->avl = d >> 52 & 1;
	sg->l = d >> 53 & 1;
	sg->db = d >> 54 & 1;
}

/* VPMU_SET_USER: CS and SS back to user mode, synced or by ioctl. */
static int
user_segs(struct kvm_vcpu_ctx *c, const struct vpmu_exit *x)
{
	struct kvm_sregs sr;

	if (c->run->kvm_valid_regs & KVM_SYNC_X86_SREGS) {
		seg_load(&c->run->s.regs.sregs.cs, x->cs, x->cs_desc);
		seg_load(&c->run->s.regs.sregs.ss, x->ss, x->ss_desc);
		c->run->kvm_dirty_regs |= KVM_SYNC_X86_SREGS;
		return (0);
	}
	if (ioctl(c->fd, KVM_GET_SREGS, &sr) < 0)
		return (errno);
	seg_load(&sr.cs, x->cs, x->cs_desc);
	seg_load(&sr.ss, x->ss, x->ss_desc);
	return (ioctl(c->fd, KVM_SET_SREGS, &sr) < 0 ? errno : 0);
}

/* The guest's IDT register changed: where RDPMC's #GP is caught, again. */
static __attribute__((noinline)) void
idt_moved(vpmu_kvm *k, unsigned cpu, struct kvm_vcpu_ctx *c)
{
	struct vpmu_regs r;

	c->idt_base = c->run->s.regs.sregs.idt.base;
	c->idt_limit = c->run->s.regs.sregs.idt.limit;
	if (kvm_regs(c, cpu, &r) == 0)
		vpmu__rdpmc_refresh(k->vm, cpu, &r);
}

/* The sixteen general registers of vpmu_exit.gpr into KVM's. */
static void
gprs_to_kvm(const uint64_t g[16], struct kvm_regs *kr)
{
	kr->rax = g[0];
	kr->rcx = g[1];
	kr->rdx = g[2];
	kr->rbx = g[3];
	kr->rsp = g[4];
	kr->rbp = g[5];
	kr->rsi = g[6];
	kr->rdi = g[7];
	kr->r8 = g[8];
	kr->r9 = g[9];
	kr->r10 = g[10];
	kr->r11 = g[11];
	kr->r12 = g[12];
	kr->r13 = g[13];
	kr->r14 = g[14];
	kr->r15 = g[15];
}

/* The registers libvpmu changed (vpmu_exit.set), through kvm_run. */
static int
set_regs(struct kvm_vcpu_ctx *c, const struct vpmu_exit *x)
{
	struct kvm_run *run = c->run;

	if (x->set & VPMU_SET_RIP)
		run->s.regs.regs.rip = x->rip;
	if (x->set & VPMU_SET_RSP)
		run->s.regs.regs.rsp = x->rsp;
	if (x->set & VPMU_SET_RCX)
		run->s.regs.regs.rcx = x->rcx;
	if (x->set & VPMU_SET_RAX)
		run->s.regs.regs.rax = x->rax;
	if (x->set & VPMU_SET_RDX)
		run->s.regs.regs.rdx = x->rdx;
	if (x->set & VPMU_SET_RFLAGS)
		run->s.regs.regs.rflags = x->rflags;
	if (x->set & VPMU_SET_GPRS)
		gprs_to_kvm(x->gpr, &run->s.regs.regs);
	run->kvm_dirty_regs |= KVM_SYNC_X86_REGS;
	if (x->set & VPMU_SET_USER)
		return (user_segs(c, x));
	return (0);
}

/*
 * The instruction breakpoints of DR7 dr7 with addresses db[] into x's
 * stops; false when it enables a data breakpoint (R/W not 00) or one
 * does not fit.
 */
static bool
stops_of(uint64_t dr7, const uint64_t *db, struct vpmu_exit *x)
{
	unsigned j;

	for (j = 0; j < 4; j++) {
		if ((dr7 >> (2 * j) & 3) == 0)
			continue;
		if ((dr7 >> (16 + 4 * j) & 3) != 0 || x->nstops == VPMU_EXIT_STOPS_MAX)
			return (false);
		x->stops[x->nstops++] = db[j];
	}
	return (true);
}

/*
 * Where the VMM's debugging and the guest's debug registers would stop
 * the vCPU, read at each stop where libvpmu may retire instructions (the
 * guest's DR7 changes only with MOV DR7, which runs on the processor):
 * instruction breakpoints into x->stops, and VPMU_EXITF_DEBUGGING for
 * anything else (single-step, watchpoints, unreadable registers).
 */
static void
debug_stops(const struct kvm_vcpu_ctx *c, struct vpmu_exit *x)
{
	const struct kvm_guest_debug *d = &c->vmm_dbg;
	struct kvm_debugregs dr;
	uint64_t db[4];
	unsigned j;

	x->nstops = 0;
	for (j = 0; j < 4; j++)
		db[j] = d->arch.debugreg[j];
	if ((d->control & KVM_GUESTDBG_ENABLE) && ((d->control & KVM_GUESTDBG_SINGLESTEP) ||
	    ((d->control & KVM_GUESTDBG_USE_HW_BP) && !stops_of(d->arch.debugreg[7], db, x)))) {
		x->flags |= VPMU_EXITF_DEBUGGING;
		return;
	}
	if (ioctl(c->fd, KVM_GET_DEBUGREGS, &dr) < 0) {
		x->flags |= VPMU_EXITF_DEBUGGING;
		return;
	}
	for (j = 0; j < 4; j++)
		db[j] = dr.db[j];
	if (!stops_of(dr.dr7, db, x))
		x->flags |= VPMU_EXITF_DEBUGGING;
}

/* An exit reported in full through struct vpmu_exit. */

static __attribute__((noinline)) int
handle_full(vpmu_kvm *k, unsigned cpu, struct kvm_vcpu_ctx *c, bool *handled)
{
	struct kvm_run *run;
	struct vpmu_exit x;
	struct vpmu_regs regs;
	uint8_t *data;
	bool vmm = false;
	uint64_t guest = 0;	/* DR6 bits of the guest's own breakpoints */
	int error;

	run = c->run;
	memset(&x, 0, sizeof(x));
	if (run->exit_reason == KVM_EXIT_X86_RDMSR || run->exit_reason == KVM_EXIT_X86_WRMSR) {
		x.reason = run->exit_reason == KVM_EXIT_X86_RDMSR ? VPMU_EXIT_MSR_READ :
		    VPMU_EXIT_MSR_WRITE;
		x.index = run->msr.index;
		x.data = run->msr.data;
	} else if (run->exit_reason == KVM_EXIT_IO) {
		x.reason = VPMU_EXIT_IO;
		x.index = run->io.port;
		x.size = run->io.size;
		if (run->io.direction == KVM_EXIT_IO_OUT)
			x.flags |= VPMU_EXITF_OUT;
		if (run->io.count != 1)
			x.flags |= VPMU_EXITF_STRING;
		data = (uint8_t *)run + run->io.data_offset;
		if ((x.flags & VPMU_EXITF_OUT) && run->io.size <= sizeof(x.data))
			memcpy(&x.data, data, run->io.size);
	} else if (run->exit_reason == KVM_EXIT_DEBUG) {
		x.reason = VPMU_EXIT_DEBUG;
		vmm = vmm_debug_exit(c, run->debug.arch.dr6);
		/*
		 * Breakpoint hits that are neither libvpmu's nor the VMM's:
		 * the guest's own, possible only while libvpmu's breakpoints
		 * are not in KVM (KVM_GUESTDBG_USE_HW_BP turns the guest's
		 * off).  libvpmu sees neither; the guest gets its #DB.
		 */
		x.dr6 = run->debug.arch.dr6 & ~(vmm_breaks(c) & ~shared_breaks(c));
		if (!c->breaking && !(c->vmm_dbg.control & KVM_GUESTDBG_USE_HW_BP))
			guest = x.dr6 & VPMU_DR6_B0_3;
		x.dr6 &= ~guest;
	}
	/*
	 * Registers come with the exit (synced), and the ones libvpmu changes
	 * go back through kvm_run: no ioctl either way.
	 */
	if ((run->kvm_valid_regs & KVM_SYNC_X86_REGS) && !vmm) {
		x.flags |= VPMU_EXITF_SETREGS | VPMU_EXITF_SETGPRS;
		if (x.reason == VPMU_EXIT_DEBUG)
			debug_stops(c, &x);
	}
	if ((run->kvm_valid_regs & (KVM_SYNC_X86_REGS | KVM_SYNC_X86_SREGS)) ==
	    (KVM_SYNC_X86_REGS | KVM_SYNC_X86_SREGS) && kvm_regs(c, cpu, &regs) == 0)
		x.regs = &regs;
	if (c->resync)
		x.flags |= VPMU_EXITF_MOVED;
	if (c->injected >= 0) {
		x.flags |= VPMU_EXITF_INJECTED;
		x.vector = (uint32_t)c->injected;
	}
	if ((error = vpmu__vcpu_exit(k->vm, cpu, &x)) != 0)
		return (error);
	if (!x.handled && vpmu__kvm_is_misc_enable(k, run)) {
		x.fault = vpmu__kvm_misc_enable(k, c, x.reason == VPMU_EXIT_MSR_WRITE, &x.data);
		x.handled = true;
	}
	c->resync = false;
	/*
	 * An NMI or interrupt injected at the entry is reported at every exit
	 * until KVM has delivered it (a PMI in an STI shadow comes an
	 * instruction later): the source then walks from its handler, not
	 * along code that never ran.
	 */
	if (c->injected >= 2)
		c->carried = c->injected;
	if (c->carried >= 0 && !event_held(c, c->carried))
		c->carried = -1;
	c->injected = -1;
	if (x.set != 0 && (error = set_regs(c, &x)) != 0)
		return (error);
	if (guest != 0) {
		if ((error = deliver_db(c, guest)) != 0)
			return (error);
		if (!vmm)
			*handled = true;
	}
	if (x.halted)
		return (step_halt(c, cpu, x.set != 0, handled));
	if (!x.handled)
		return (0);
	if (x.reason == VPMU_EXIT_MSR_READ || x.reason == VPMU_EXIT_MSR_WRITE) {
		if (x.reason == VPMU_EXIT_MSR_READ)
			run->msr.data = x.data;
		run->msr.error = x.fault ? 1 : 0;
	} else if (x.reason == VPMU_EXIT_IO) {
		if (run->io.direction == KVM_EXIT_IO_IN) {
			data = (uint8_t *)run + run->io.data_offset;
			memset(data, 0xFF, (size_t)run->io.size * run->io.count);
			if (run->io.count == 1)
				memcpy(data, &x.data, run->io.size);
		}
	} else if (x.reason == VPMU_EXIT_DEBUG && vmm)
		return (0);		/* the VMM's too: it sees the exit */
	*handled = true;
	return (0);
}

int
vpmu_kvm_handle_exit(vpmu_kvm *k, unsigned cpu, bool *handled)
{
	struct kvm_vcpu_ctx *c;
	struct kvm_run *run;

	if ((c = ctx_of(k, cpu)) == NULL || handled == NULL)
		return (EINVAL);
	*handled = false;
	run = c->run;
	c->entered = false;
	c->fresh = true;	/* KVM_RUN synced the registers out */
	c->stepped = run->exit_reason == KVM_EXIT_DEBUG && (run->debug.arch.dr6 & VPMU_DR6_BS);
	step_by_probed(c);
	/* The MSR exits first: the ones that must be cheap. */
	if ((run->exit_reason == KVM_EXIT_X86_RDMSR || run->exit_reason == KVM_EXIT_X86_WRMSR) &&
	    c->injected < 0 && !c->resync) {
		bool write = run->exit_reason == KVM_EXIT_X86_WRMSR;
		uint64_t val = run->msr.data;
		int res;

		/*
		 * A guest that loaded its IDT since the last look: RDPMC's
		 * catch moves now, not at the next full exit (a guest may use
		 * RDPMC before it has one).
		 */
		if ((run->kvm_valid_regs & KVM_SYNC_X86_SREGS) &&
		    (run->s.regs.sregs.idt.base != c->idt_base ||
		    run->s.regs.sregs.idt.limit != c->idt_limit))
			idt_moved(k, cpu, c);
		res = vpmu__vcpu_msr(k->vm, cpu, write, run->msr.index, &val);

		if (res < 0)
			return (-res);
		if (res == VPMU_MSR_NOT_PMU && vpmu__kvm_is_misc_enable(k, run))
			res = vpmu__kvm_misc_enable(k, c, write, &val) ? VPMU_MSR_GP : VPMU_MSR_OK;
		if (res == VPMU_MSR_NOT_PMU)
			return (0);
		if (!write)
			run->msr.data = val;
		run->msr.error = res != VPMU_MSR_OK;
		*handled = true;
		return (0);
	}
	return (handle_full(k, cpu, c, handled));
}

int
vpmu_kvm_vcpu_resync(vpmu_kvm *k, unsigned cpu)
{
	struct kvm_vcpu_ctx *c;

	if ((c = ctx_of(k, cpu)) == NULL)
		return (EINVAL);
	c->resync = true;
	c->rearm = true;	/* single-step recorded again where it now is */
	c->fresh = false;
	return (0);
}

/*
 * The figures of a source that follows the guest (exec_stats: the exact
 * source's), and insn_emulation over the time it followed.
 */
static void
kvm_stats_exact(vpmu_kvm *k, unsigned cpu, struct vpmu_kvm_stats *st)
{
	struct kvm_vcpu_ctx *c = &k->vcpu[cpu];
	struct vpmu_exact_stats xs;
	uint64_t now;

	if (k->vm->src->exec_stats != NULL) {
		vpmu__vm_lock(k->vm);
		if (k->vm->src->exec_stats(k->vm->src_state, cpu, &xs) == 0) {
			st->exact_retired = xs.retired;
			st->exact_completed = xs.completed;
			st->exact_ff_loops = xs.ff_loops;
			st->exact_ff_insns = xs.ff_insns;
			st->exact_closed_loops = xs.closed_loops;
			st->exact_closed_insns = xs.closed_insns;
			st->exact_interp_runs = xs.interp_runs;
			st->exact_interp_insns = xs.interp_insns;
			st->user_unseen = xs.user_unseen;
			st->guest_tf = xs.guest_tf;
			st->exact_foreseen = xs.foreseen;
			st->exact_mispredicted = xs.mispredicted;
			memcpy(st->exact_step_why, xs.step_why, sizeof(st->exact_step_why));
			st->exact_step_why[VPMU_STEP_DEBUG_REGS] +=
			    __atomic_load_n(&c->dr_steps, __ATOMIC_RELAXED);
			st->exact_step_why[VPMU_STEP_EVENT_HELD] +=
			    __atomic_load_n(&c->held_steps, __ATOMIC_RELAXED);
		}
		vpmu__vm_unlock(k->vm);
	}
	if (c->emul.fd < 0)
		return;
	st->insn_emulation = c->emul_sum;
	if (c->emul_on) {
		if (vpmu__kvm_stat_read(&c->emul, &now) != 0)
			return;
		st->insn_emulation += now - c->emul_start;
	}
	st->has_insn_emulation = 1;
}

int
vpmu_kvm_get_stats(vpmu_kvm *k, unsigned cpu, struct vpmu_kvm_stats *st)
{
	struct vpmu_vcpu_stats v;
	int error;

	if (k == NULL || st == NULL || cpu >= k->nvcpus)
		return (EINVAL);
	if ((error = vpmu_vcpu_get_stats(k->vm, cpu, &v)) != 0)
		return (error);
	memset(st, 0, sizeof(*st));
	st->msr_reads = v.msr_reads;
	st->msr_writes = v.msr_writes;
	st->msr_gp = v.msr_gp;
	st->steps = v.steps;
	st->breaks = v.breaks;
	st->completed = v.completed;
	st->rdpmc = v.rdpmc;
	st->rdpmc_gp = v.rdpmc_gp;
	st->pmis = v.pmis - k->vcpu[cpu].pmis_masked;
	st->pmis_masked = k->vcpu[cpu].pmis_masked;
	kvm_stats_exact(k, cpu, st);
	return (0);
}
