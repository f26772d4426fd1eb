/*
 * kvm.c -- libvpmu in a KVM VMM's run loop: the MSR filter that sends the
 * guest's PMU MSR accesses to user space, CPUID leaves from the model, PMIs
 * as NMIs, and the exact source's single-stepping.
 *
 * Per exit (vpmu_kvm_handle_exit, called for every exit), under one
 * taking of the VM lock:
 *   1. the exact source learns where the guest is now (and counts what
 *      retired since the last exit);
 *   2. the model looks for counter overflows (status bit, pending PMI);
 *   3. an MSR exit goes to the model; #GP is injected with msr.error = 1;
 *      a single-step debug exit is ours.
 * Before each entry (vpmu_kvm_pre_run): a pending PMI becomes KVM_NMI, and
 * single-stepping is switched on exactly while some enabled counter of the
 * vCPU is on the exact source.
 *
 * The order matters for the exact counting boundary: the WRMSR that
 * enables a counter exits before it retires; its retirement is seen at the
 * next exit, by then with the counter enabled, so it is counted.  The WRMSR
 * that disables one is seen retiring after the counter stopped.
 */
#include <errno.h>
#include <stdlib.h>
#include <time.h>
#include <string.h>
#include <sys/ioctl.h>
#include <linux/kvm.h>

#include "internal.h"
#include "exact.h"
#include "gmem.h"
#include "pvchan.h"
#include "../guest-api/gpmu.h"
#include <vpmu/kvm.h>
#include <vpmu/pmclog.h>

#define DR6_BS		(1u << 14)	/* single-step */

struct kvm_vcpu_ctx {
	int fd;
	struct kvm_run *run;
	int *pmi;		/* the model's pending-PMI flag of this vCPU */
	bool stepping;		/* KVM_GUESTDBG_SINGLESTEP is set */
	bool faulted;		/* #GP injected at the last MSR exit */
	bool nmi_injected;	/* a PMI went in before the last entry */
	bool resync;		/* the VMM moved the vCPU: where it is is news */
	uint64_t entered;	/* ns at pre_run, 0: no PMC wants to count */
	uint64_t ran;		/* ns of the last KVM_RUN, for handle_exit */
	struct vpmu_kvm_stats st;
};

struct vpmu_kvm {
	struct vpmu_vm *vm;
	unsigned nvcpus;
	int vm_fd;
	bool exact;		/* the VM's source is the exact source */
	bool sync_regs;		/* KVM_CAP_SYNC_REGS: regs come with the exit */
	struct vpmu_gmem mem;
	struct kvm_vcpu_ctx *vcpu;
};

/* ---- set-up ------------------------------------------------------------------ */

/*
 * Deny every PMU MSR of both vendors (the model answers the other
 * vendor's with #GP): with the filter, KVM sends each access to user
 * space instead of handling or faulting it itself.
 */
static int
install_msr_filter(struct vpmu_kvm *k)
{
	static uint8_t deny[8];		/* all zero: every MSR of a range denied */
	struct kvm_msr_filter f;
	const struct gpmu_range *tab[2];
	size_t n[2], t, i, nr = 0;

	memset(&f, 0, sizeof(f));
	f.flags = KVM_MSR_FILTER_DEFAULT_ALLOW;
	(void)vpmu__gpmu_msr_ranges(&tab[0], &n[0], &tab[1], &n[1]);
	for (t = 0; t < 2; t++)
		for (i = 0; i < n[t]; i++) {
			VPMU_ASSERT(nr < KVM_MSR_FILTER_MAX_RANGES);
			VPMU_ASSERT(tab[t][i].count <= 8 * sizeof(deny));
			f.ranges[nr].flags = KVM_MSR_FILTER_READ | KVM_MSR_FILTER_WRITE;
			f.ranges[nr].base = tab[t][i].base;
			f.ranges[nr].nmsrs = tab[t][i].count;
			f.ranges[nr].bitmap = deny;
			nr++;
		}
	return (ioctl(k->vm_fd, KVM_X86_SET_MSR_FILTER, &f) < 0 ? errno : 0);
}

int
vpmu_kvm_create(struct vpmu_vm *vm, int vm_fd, vpmu_kvm **kp)
{
	struct kvm_enable_cap cap;
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
	k->exact = vm->src == &vpmu_source_exact;
	vpmu__gmem_init(&k->mem);
	for (r = 0; r < (int)vm->nvcpus; r++)
		k->vcpu[r].fd = -1;

	/* KVM's own vPMU off where the kernel lets us say so. */
	r = ioctl(vm_fd, KVM_CHECK_EXTENSION, KVM_CAP_PMU_CAPABILITY);
	if (r > 0 && (r & KVM_PMU_CAP_DISABLE)) {
		memset(&cap, 0, sizeof(cap));
		cap.cap = KVM_CAP_PMU_CAPABILITY;
		cap.args[0] = KVM_PMU_CAP_DISABLE;
		(void)ioctl(vm_fd, KVM_ENABLE_CAP, &cap);
	}
	memset(&cap, 0, sizeof(cap));
	cap.cap = KVM_CAP_X86_USER_SPACE_MSR;
	cap.args[0] = KVM_MSR_EXIT_REASON_FILTER;
	if (ioctl(vm_fd, KVM_ENABLE_CAP, &cap) < 0 ||
	    (error = install_msr_filter(k)) != 0) {
		error = errno != 0 ? errno : ENODEV;
		vpmu_kvm_destroy(k);
		return (error);
	}
	k->sync_regs = (ioctl(vm_fd, KVM_CHECK_EXTENSION, KVM_CAP_SYNC_REGS) &
	    (KVM_SYNC_X86_REGS | KVM_SYNC_X86_SREGS)) ==
	    (KVM_SYNC_X86_REGS | KVM_SYNC_X86_SREGS);
	if (k->exact)
		vpmu__exact_set_memory(vm->src_state, &k->mem);
	*kp = k;
	return (0);
}

void
vpmu_kvm_destroy(vpmu_kvm *k)
{
	if (k == NULL)
		return;
	if (k->exact)
		vpmu__exact_set_memory(k->vm->src_state, NULL);
	free(k->vcpu);
	free(k);
}

int
vpmu_kvm_add_memory(vpmu_kvm *k, uint64_t gpa, uint64_t size, void *hva)
{
	int error;

	if (k == NULL || hva == NULL || size == 0)
		return (EINVAL);
	vpmu__vm_lock(k->vm);		/* the exact source reads it under the lock */
	error = vpmu__gmem_add(&k->mem, gpa, size, hva);
	vpmu__vm_unlock(k->vm);
	if (error == 0)			/* the paravirtual channel's copy */
		error = vpmu_pv_add_memory(k->vm, gpa, size, hva);
	return (error);
}

static struct kvm_cpuid_entry2 *
cpuid_entry(struct kvm_cpuid2 *c, unsigned max, uint32_t leaf, bool add)
{
	unsigned i;

	for (i = 0; i < c->nent; i++)
		if (c->entries[i].function == leaf && c->entries[i].index == 0)
			return (&c->entries[i]);
	if (!add || c->nent >= max)
		return (NULL);
	memset(&c->entries[c->nent], 0, sizeof(c->entries[0]));
	c->entries[c->nent].function = leaf;
	return (&c->entries[c->nent++]);
}

static void
entry_regs(struct kvm_cpuid_entry2 *e, uint32_t r[4], bool store)
{
	uint32_t *f[4] = { &e->eax, &e->ebx, &e->ecx, &e->edx };
	int i;

	for (i = 0; i < 4; i++) {
		if (store)
			*f[i] = r[i];
		else
			r[i] = *f[i];
	}
}

int
vpmu_kvm_cpuid_patch(vpmu_kvm *k, struct kvm_cpuid2 *cpuid, unsigned max_entries)
{
	static const uint32_t owned[] = { 0xA, 0x80000022 };
	static const uint32_t adjusted[] = { 0x1, 0x80000001 };
	struct kvm_cpuid_entry2 *e;
	uint32_t r[4];
	size_t i;

	if (k == NULL || cpuid == NULL || cpuid->nent > max_entries)
		return (EINVAL);
	for (i = 0; i < VPMU_ARRAY_SIZE(owned); i++) {
		(void)vpmu_cpuid_leaf(k->vm, owned[i], 0, r);
		if ((e = cpuid_entry(cpuid, max_entries, owned[i], true)) == NULL)
			return (ENOSPC);
		entry_regs(e, r, true);
	}
	for (i = 0; i < VPMU_ARRAY_SIZE(adjusted); i++)
		if ((e = cpuid_entry(cpuid, max_entries, adjusted[i], false)) != NULL) {
			entry_regs(e, r, false);
			vpmu_cpuid_adjust(k->vm, adjusted[i], 0, r);
			entry_regs(e, r, true);
		}
	/* The highest leaves must reach the ones the model fills. */
	if ((e = cpuid_entry(cpuid, max_entries, 0x0, false)) != NULL && e->eax < 0xA)
		e->eax = 0xA;
	if ((e = cpuid_entry(cpuid, max_entries, 0x80000000, false)) != NULL &&
	    e->eax < 0x80000022)
		e->eax = 0x80000022;
	return (0);
}

int
vpmu_kvm_vcpu_init(vpmu_kvm *k, unsigned cpu, int vcpu_fd, struct kvm_run *run)
{
	if (k == NULL || cpu >= k->vm->nvcpus || vcpu_fd < 0 || run == NULL)
		return (EINVAL);
	k->vcpu[cpu].fd = vcpu_fd;
	k->vcpu[cpu].run = run;
	k->vcpu[cpu].pmi = &k->vm->gpmu->vcpu[cpu].pmi_pending;
	if (k->sync_regs)
		run->kvm_valid_regs = KVM_SYNC_X86_REGS | KVM_SYNC_X86_SREGS;
	return (0);
}

/* ---- the run loop -------------------------------------------------------------- */

static uint64_t
now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ((uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec);
}

static struct kvm_vcpu_ctx *
ctx_of(vpmu_kvm *k, unsigned cpu)
{
	if (k == NULL || cpu >= k->nvcpus || k->vcpu[cpu].run == NULL)
		return (NULL);
	return (&k->vcpu[cpu]);
}

static int
set_stepping(struct kvm_vcpu_ctx *c, bool on)
{
	struct kvm_guest_debug dbg;

	memset(&dbg, 0, sizeof(dbg));
	if (on)
		dbg.control = KVM_GUESTDBG_ENABLE | KVM_GUESTDBG_SINGLESTEP;
	if (ioctl(c->fd, KVM_SET_GUEST_DEBUG, &dbg) < 0)
		return (errno);
	c->stepping = on;
	return (0);
}

int
vpmu_kvm_pre_run(vpmu_kvm *k, unsigned cpu)
{
	struct kvm_vcpu_ctx *c;
	int error;

	if ((c = ctx_of(k, cpu)) == NULL)
		return (EINVAL);
	c->nmi_injected = false;
	/* vpmu_vcpu_take_pmi(), inline: the check runs before every entry. */
	if (__atomic_load_n(c->pmi, __ATOMIC_RELAXED) &&
	    __atomic_exchange_n(c->pmi, 0, __ATOMIC_ACQ_REL)) {
		if (ioctl(c->fd, KVM_NMI) < 0) {
			error = errno;
			__atomic_store_n(c->pmi, 1, __ATOMIC_RELEASE);	/* not lost */
			return (error);
		}
		c->nmi_injected = true;
		c->st.pmis++;
	}
	/*
	 * The vCPU's run time drives enabled/running times and rotations; it
	 * is only measured while some PMC wants to count here (a racy read of
	 * the count is fine: it is looked at again before the next entry).
	 */
	if (__atomic_load_n(&k->vm->vcpu[cpu].dirty, __ATOMIC_RELAXED)) {
		vpmu__vm_lock(k->vm);
		vpmu__vcpu_prepare(k->vm, cpu);
		vpmu__vm_unlock(k->vm);
	}
	c->entered = __atomic_load_n(&k->vm->vcpu[cpu].nact, __ATOMIC_RELAXED) != 0 ?
	    now_ns() : 0;
	/* Per-vCPU and read without the lock (see vpmu__exact_wants_step()). */
	if (k->exact && vpmu__exact_wants_step(k->vm->src_state, cpu) != c->stepping)
		return (set_stepping(c, !c->stepping));
	return (0);
}

int
vpmu_kvm_post_run(vpmu_kvm *k, unsigned cpu)
{
	struct kvm_vcpu_ctx *c;
	uint64_t t;

	if (k == NULL || cpu >= k->nvcpus)
		return (EINVAL);
	c = &k->vcpu[cpu];
	if (c->entered != 0) {
		t = now_ns();
		c->ran = t - c->entered;	/* the clock moves in handle_exit */
		c->entered = 0;
	}
	vpmu__pv_vcpu_exit(k->vm, cpu);	/* the fast-read page of who runs here */
	return (0);
}

/* Where the guest is now: from the exit's synced registers, or by asking. */
static int
guest_regs(vpmu_kvm *k, struct kvm_vcpu_ctx *c, struct vpmu_exact_regs *r)
{
	struct kvm_regs regs, *rp = &c->run->s.regs.regs;
	struct kvm_sregs sregs, *sp = &c->run->s.regs.sregs;

	if (!k->sync_regs) {
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
	r->rflags = rp->rflags;
	r->cr0 = sp->cr0;
	r->cr3 = sp->cr3;
	r->cr4 = sp->cr4;
	r->efer = sp->efer;
	r->cpl = sp->cs.dpl;
	r->long_mode = (sp->efer & (1u << 10)) != 0 && sp->cs.l;	/* EFER.LMA, CS.L */
	r->idt_base = sp->idt.base;
	r->idt_limit = sp->idt.limit;
	return (0);
}

/*
 * An MSR exit, VM lock held.  Ours if it is a PMU MSR (the filter sends
 * only those, but the VMM may have asked KVM for other exits too).
 */
static bool
msr_exit(vpmu_kvm *k, unsigned cpu, struct kvm_vcpu_ctx *c, bool write)
{
	struct kvm_run *run = c->run;
	uint64_t val = run->msr.data;
	int res;

	res = vpmu__gpmu_msr(k->vm, cpu, run->msr.index, write, &val);
	if (res == VPMU_MSR_NOT_PMU)
		return (false);
	if (write)
		c->st.msr_writes++;
	else {
		run->msr.data = val;	/* __u64 is unsigned long long */
		c->st.msr_reads++;
	}
	/* A PMU MSR the model lacks (or the other vendor's) faults. */
	run->msr.error = res == VPMU_MSR_OK ? 0 : 1;
	if (run->msr.error) {
		c->faulted = true;
		c->st.msr_gp++;
	}
	return (true);
}

/*
 * A sample: the guest RIP, then return addresses up the frame-pointer
 * chain ([rbp] the caller's rbp, [rbp + 8] the return address), read
 * through the guest's page tables.  An unmapped or unreadable frame, or
 * one that does not move up the stack, ends the walk: the guest's memory
 * is only ever read, and never outside its RAM.
 */
static __attribute__((noinline)) int
sample_exit(vpmu_kvm *k, unsigned cpu, struct kvm_vcpu_ctx *c)
{
	struct vpmu_exact_regs r;
	struct vpmu_gmem_paging pg;
	uint64_t pc[VPMU_PMCLOG_CALLCHAIN_MAX], fp, frame[2];
	unsigned n = 1, depth = (unsigned)k->vm->tun.v[VPMU_T_CALLCHAINDEPTH];
	int error;

	if ((error = guest_regs(k, c, &r)) != 0)
		return (error);
	pg = (struct vpmu_gmem_paging){ r.cr0, r.cr3, r.cr4, r.efer };
	pc[0] = r.rip;
	for (fp = r.rbp; n < depth && n < VPMU_PMCLOG_CALLCHAIN_MAX && fp != 0; n++) {
		if (vpmu__gmem_read_gva(&k->mem, &pg, fp, frame, sizeof(frame)) !=
		    (int)sizeof(frame) || frame[1] == 0)
			break;
		pc[n] = frame[1];
		if (frame[0] <= fp)
			{ n++; break; }		/* the stack grows down: must go up */
		fp = frame[0];
	}
	vpmu__sample_take(k->vm, cpu, pc, n, r.cpl > 0);
	return (0);
}

/*
 * The exact source learns where the guest is: out of line, so that the
 * trap path of the other sources carries none of its frame.
 */
static __attribute__((noinline)) int
exact_exit(vpmu_kvm *k, unsigned cpu, struct kvm_vcpu_ctx *c)
{
	struct vpmu_exact_regs r;
	unsigned flags;
	int error;

	if ((error = guest_regs(k, c, &r)) != 0)
		return (error);
	flags = !c->stepping || c->resync ? VPMU_EXACT_RESYNC :
	    (c->faulted ? VPMU_EXACT_FAULTED : 0) |
	    (c->nmi_injected ? VPMU_EXACT_NMI_INJECTED : 0) |
	    (c->run->exit_reason == KVM_EXIT_DEBUG ? VPMU_EXACT_STEP : 0);
	vpmu__vm_lock(k->vm);
	vpmu__exact_sync(k->vm->src_state, cpu, &r, flags);
	vpmu__vm_unlock(k->vm);
	c->resync = false;
	return (0);
}

/*
 * A port access to the paravirtual channel (vpmu_pv(4)).  KVM hands over
 * count items of size bytes; the channel takes single items only (a REP
 * string to its ports is ignored, an IN reads all ones).
 */
static int
pv_exit(vpmu_kvm *k, unsigned cpu, struct kvm_vcpu_ctx *c, bool *handled)
{
	struct kvm_run *run = c->run;
	uint8_t *data = (uint8_t *)run + run->io.data_offset;
	uint32_t v = 0;
	bool out = run->io.direction == KVM_EXIT_IO_OUT;
	unsigned size = run->io.size;
	int error;

	if (size > sizeof(v))
		return (0);
	if (run->io.count != 1)
		size = 0;			/* ignored by the channel */
	if (out && size != 0)
		memcpy(&v, data, size);
	error = vpmu_pv_port_io(k->vm, cpu, run->io.port, out, size, &v, handled);
	if (error == 0 && *handled && !out)
		memset(data, 0xFF, (size_t)run->io.size * run->io.count);
	if (error == 0 && *handled && !out && size != 0)
		memcpy(data, &v, size);
	return (error);
}

int
vpmu_kvm_handle_exit(vpmu_kvm *k, unsigned cpu, bool *handled)
{
	struct kvm_vcpu_ctx *c;
	int error;

	if ((c = ctx_of(k, cpu)) == NULL || handled == NULL)
		return (EINVAL);
	*handled = false;
	if (k->exact && (error = exact_exit(k, cpu, c)) != 0)
		return (error);
	vpmu__vm_lock(k->vm);
	c->faulted = false;
	c->nmi_injected = false;
	/*
	 * The run's time goes to the PMCs after the exact source counted what
	 * retired in it, so a rotation it brings does not move those events
	 * to the next window.
	 */
	if (c->ran != 0) {
		vpmu__vcpu_advance(k->vm, cpu, c->ran);
		c->ran = 0;
	}
	vpmu__gpmu_check_overflow(k->vm, cpu);
	if (k->vm->vcpu[cpu].nact != 0 && vpmu__sample_due(k->vm, cpu) &&
	    (error = sample_exit(k, cpu, c)) != 0) {
		vpmu__vm_unlock(k->vm);
		return (error);
	}

	switch (c->run->exit_reason) {
	case KVM_EXIT_X86_RDMSR:
		*handled = msr_exit(k, cpu, c, false);
		break;
	case KVM_EXIT_X86_WRMSR:
		*handled = msr_exit(k, cpu, c, true);
		break;
	case KVM_EXIT_DEBUG:
		if (c->stepping && (c->run->debug.arch.dr6 & DR6_BS)) {
			c->st.steps++;
			*handled = true;
		}
		break;
	default:
		break;
	}
	vpmu__vm_unlock(k->vm);
	if (c->run->exit_reason == KVM_EXIT_IO)
		return (pv_exit(k, cpu, c, handled));
	return (0);
}

int
vpmu_kvm_vcpu_resync(vpmu_kvm *k, unsigned cpu)
{
	struct kvm_vcpu_ctx *c;

	if ((c = ctx_of(k, cpu)) == NULL)
		return (EINVAL);
	c->resync = true;
	return (0);
}

int
vpmu_kvm_get_stats(vpmu_kvm *k, unsigned cpu, struct vpmu_kvm_stats *st)
{
	if (k == NULL || st == NULL || cpu >= k->vm->nvcpus)
		return (EINVAL);
	*st = k->vcpu[cpu].st;
	return (0);
}
