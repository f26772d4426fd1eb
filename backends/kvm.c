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
 * Here: set-up (create, open, destroy, a vCPU's init) and the run loop
 * (pre_run, run, handle_exit).  Elsewhere:
 *   kvm_vpmu.c      the PMU modes' hook-up: the mode resolved, kvm mode's
 *                   KVM vPMU as the core's hooks
 *   kvm_mode.c      the PMU modes' decisions (pure functions)
 *   kvm_msr.c       the MSR filter merge, IA32_MISC_ENABLE
 *   kvm_cpuid.c     the CPUID patch, steal time, the first entry's check
 *   kvm_regs.c      registers on request, and written back at an exit
 *   kvm_debug.c     guest debugging: single-step, breakpoints, debug exits
 *   kvm_pmi.c       PMI delivery, injected events followed to delivery
 *   kvm_stats.c     vpmu_kvm_get_stats, KVM's statistics fd, insn_emulation
 *   kvm_kick.c      the kick timer
 *   kvm_internal.h  the shared state (struct vpmu_kvm, struct kvm_vcpu_ctx)
 *                   and the functions that cross files (vpmu__kvm_*)
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <linux/kvm.h>

#include "internal.h"
#include "gpmu.h"		/* vpmu__vcpu_enter_quiet, vpmu__vcpu_pmi_again */
#include <vpmu/kvm.h>

#include "kvm_internal.h"

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
	    (k->mode == VPMU_PMU_MODE_KVM && (error = vpmu__kvm_vpmu_setup(k)) != 0))
		goto fail;

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
		goto fail;
	}
	if ((error = vpmu_kvm_set_msr_filter(k, NULL)) != 0)
		goto fail;
	/* Kvm mode: the core hands over; the VM's event filter goes to KVM. */
	if (k->mode == VPMU_PMU_MODE_KVM) {
		if ((error = vpmu__gpmu_set_external(vm, &k->ext)) != 0)
			goto fail;
		k->ext_on = true;
	}
	r = ioctl(vm_fd, KVM_CHECK_EXTENSION, KVM_CAP_SET_GUEST_DEBUG2);
	k->blockirq = r > 0 && (r & KVM_GUESTDBG_BLOCKIRQ);
	k->sync_regs = (ioctl(vm_fd, KVM_CHECK_EXTENSION, KVM_CAP_SYNC_REGS) &
	    (KVM_SYNC_X86_REGS | KVM_SYNC_X86_SREGS)) ==
	    (KVM_SYNC_X86_REGS | KVM_SYNC_X86_SREGS);
	*kp = k;
	return (0);
fail:
	vpmu_kvm_destroy(k);
	return (error);
}

void
vpmu_kvm_destroy(vpmu_kvm *k)
{
	unsigned i;

	if (k == NULL)
		return;
	if (k->ext_on)
		vpmu__kvm_vpmu_detach(k);
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
	vpmu__kvm_emul_open(c);
	return (vpmu_vcpu_set_regs_fn(k->vm, cpu, vpmu__kvm_regs, c));
}

/* ---- the run loop -------------------------------------------------------------- */

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
		vpmu__kvm_emul_window(c, (e->debug & (VPMU_DEBUG_STEP | VPMU_DEBUG_BREAK)) != 0);
		c->debug = e->debug;
		c->nbp = e->nbp;
		c->need = e->need;
		memcpy(c->bp, e->bp, sizeof(c->bp));
	}
	if (vpmu__kvm_debug_due(c, e))
		error = vpmu__kvm_apply_debug(k, c);
	/* One event per run: the guest's own #DB (injected >= 0) goes first. */
	held = c->injected >= 0;
	if (e->pmi && error == 0 && !held)
		error = vpmu__kvm_pmi(k, cpu, c);
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

	if ((c = vpmu__kvm_ctx_of(k, cpu)) == NULL)
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

	/* #DB: the guest's own (vpmu__kvm_deliver_db), reported before a carried event */
	c->injected = c->db_pending ? 1 : c->carried;
	c->db_pending = false;
	/* An NMI or interrupt the VMM injected (vpmu_kvm_note_injected()). */
	if (__atomic_load_n(&c->vmm_injected, __ATOMIC_RELAXED) >= 0 &&
	    (vmm = __atomic_exchange_n(&c->vmm_injected, -1, __ATOMIC_ACQ_REL)) >= 0 &&
	    c->injected < 0)
		c->injected = vmm;
	if (vpmu__vcpu_enter_quiet(k->vm, cpu))	/* vpmu__kvm_ctx_of() checked cpu */
		return (c->kick.armed ? vpmu__kick_arm(&c->kick, 0, 0) : 0);
	vpmu__vcpu_enter(k->vm, cpu, &e);
	if ((e.pmi || vpmu__kvm_debug_due(c, &e)) && (error = pre_run_work(k, cpu, c, &e)) != 0)
		return (error);
	vpmu__kvm_debug_enter(c, &e);
	/* Last, as near KVM_RUN as this call gets: a kick before it is lost. */
	if (e.time_ns != 0 || c->kick.armed)
		return (vpmu__kick_arm(&c->kick, __atomic_load_n(&k->kick_signo,
		    __ATOMIC_RELAXED), e.time_ns));
	return (0);
}

int
vpmu_kvm_run(vpmu_kvm *k, unsigned cpu, bool *handled)
{
	struct kvm_vcpu_ctx *c;
	int error;

	if ((c = vpmu__kvm_ctx_of(k, cpu)) == NULL || handled == NULL)
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
		vmm = vpmu__kvm_debug_exit(c, run->debug.arch.dr6, &x.dr6, &guest);
	}
	/*
	 * Registers come with the exit (synced), and the ones libvpmu changes
	 * go back through kvm_run: no ioctl either way.
	 */
	if ((run->kvm_valid_regs & KVM_SYNC_X86_REGS) && !vmm) {
		x.flags |= VPMU_EXITF_SETREGS | VPMU_EXITF_SETGPRS;
		if (x.reason == VPMU_EXIT_DEBUG)
			vpmu__kvm_debug_stops(c, &x);
	}
	if ((run->kvm_valid_regs & (KVM_SYNC_X86_REGS | KVM_SYNC_X86_SREGS)) ==
	    (KVM_SYNC_X86_REGS | KVM_SYNC_X86_SREGS) && vpmu__kvm_regs(c, cpu, &regs) == 0)
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
	vpmu__kvm_carry(c);	/* an injected event reported until delivered */
	if (x.set != 0 && (error = vpmu__kvm_set_regs(c, &x)) != 0)
		return (error);
	if (guest != 0) {
		if ((error = vpmu__kvm_deliver_db(c, guest)) != 0)
			return (error);
		if (!vmm)
			*handled = true;
	}
	if (x.halted)
		return (vpmu__kvm_step_halt(c, cpu, x.set != 0, handled));
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

	if ((c = vpmu__kvm_ctx_of(k, cpu)) == NULL || handled == NULL)
		return (EINVAL);
	*handled = false;
	run = c->run;
	c->entered = false;
	c->fresh = true;	/* KVM_RUN synced the registers out */
	c->stepped = run->exit_reason == KVM_EXIT_DEBUG && (run->debug.arch.dr6 & VPMU_DR6_BS);
	if (c->probing)
		vpmu__kvm_step_probed(c);
	/* The MSR exits first: the ones that must be cheap. */
	if ((run->exit_reason == KVM_EXIT_X86_RDMSR || run->exit_reason == KVM_EXIT_X86_WRMSR) &&
	    c->injected < 0 && !c->resync) {
		bool write = run->exit_reason == KVM_EXIT_X86_WRMSR;
		uint64_t val = run->msr.data;
		enum vpmu_msr_verdict res;
		int error;

		/*
		 * A guest that loaded its IDT since the last look: RDPMC's
		 * catch moves now, not at the next full exit (a guest may use
		 * RDPMC before it has one).
		 */
		if ((run->kvm_valid_regs & KVM_SYNC_X86_SREGS) &&
		    (run->s.regs.sregs.idt.base != c->idt_base ||
		    run->s.regs.sregs.idt.limit != c->idt_limit))
			vpmu__kvm_idt_moved(k, cpu, c);
		if ((error = vpmu__vcpu_msr(k->vm, cpu, write, run->msr.index, &val,
		    &res)) != 0)
			return (error);
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

	if ((c = vpmu__kvm_ctx_of(k, cpu)) == NULL)
		return (EINVAL);
	c->resync = true;
	c->rearm = true;	/* single-step recorded again where it now is */
	c->fresh = false;
	return (0);
}
