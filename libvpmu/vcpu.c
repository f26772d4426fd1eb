/*
 * vcpu.c -- the exit contract (<vpmu/vcpu.h>, vpmu_vcpu(3)): what a VMM's
 * run loop reports before each entry and after each exit, whatever the
 * hypervisor interface.  backends/kvm.c translates struct kvm_run onto it.
 *
 * Before an entry (vpmu_vcpu_enter):
 *   1. a pending PMI is handed to the VMM, which delivers it;
 *   2. the guest counters whose controls the guest wrote since the last
 *      entry are programmed, together (deferred reprogramming, gpmu.h);
 *   3. the slots are shared out again if the demand changed;
 *   4. the run's clock starts if some PMC wants to count;
 *   5. the source says which guest debugging it needs (single-step, or
 *      breakpoints; a step instead when a PMI is delivered at the entry).
 * After an exit (vpmu_vcpu_exit), in this order:
 *   1. the fast-read pages of the process on the vCPU are refreshed, if
 *      there are any;
 *   2. a source that follows the guest learns where the vCPU is now and
 *      counts what retired since the last exit;
 *   3. the run's time goes to the PMCs (a rotation if one is due);
 *   4. overflows: status bits and pending PMIs;
 *   5. a sample if a sampling PMC is due, with its call chain;
 *   6. the exit itself: a PMU MSR for the model, a debug exit of our
 *      single-step or breakpoints, a port of the paravirtual channel.
 * The order makes exact counts exact: the WRMSR that enables a counter is
 * seen retiring at the next exit, by then with the counter enabled (at
 * the entry between), so it counts; the one that disables it is seen
 * retiring after the stop.
 *
 * Threads: all of it runs on the vCPU's thread; the per-vCPU contract
 * state is that thread's alone.  VM-wide state is touched under the VM
 * lock, taken for steps 2-5 only when there is something to do (a source
 * that follows the guest, a PMC that wants to count, a guest counter
 * counting), and by step 6 only to read or write a counter's value: an
 * access to a control or a global register of an idle PMU takes no lock.
 */
#include <errno.h>
#include <string.h>
#include <time.h>

#include "internal.h"
#include "gpmu.h"
#include "regs.h"
#include <vpmu/pmclog.h>
#include <vpmu/pv.h>
#include <vpmu/source.h>

/*
 * The run clock: the calling thread's CPU time, which a run of the vCPU
 * advances only while its thread runs -- not while the host runs others
 * (as perf's times of a task's events).
 */
static uint64_t
cpu_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
	return ((uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec);
}

int
vpmu_vcpu_set_regs_fn(struct vpmu_vm *vm, unsigned cpu, vpmu_regs_fn *fn, void *arg)
{
	if (vm == NULL || cpu >= vm->nvcpus)
		return (EINVAL);
	vm->vcpu[cpu].regs_fn = fn;
	vm->vcpu[cpu].regs_arg = arg;
	return (0);
}

int
vpmu_vcpu_set_unwind_fn(struct vpmu_vm *vm, unsigned cpu, vpmu_unwind_fn *fn, void *arg)
{
	if (vm == NULL || cpu >= vm->nvcpus)
		return (EINVAL);
	vpmu__vm_lock(vm);			/* not while a sample calls the old one */
	vm->vcpu[cpu].unwind_fn = fn;
	vm->vcpu[cpu].unwind_arg = arg;
	vpmu__vm_unlock(vm);
	return (0);
}

int
vpmu_vm_add_memory(struct vpmu_vm *vm, uint64_t gpa, uint64_t size, void *hva)
{
	int error;

	if (vm == NULL || hva == NULL || size == 0)
		return (EINVAL);
	vpmu__vm_lock(vm);
	error = vpmu__gmem_add(&vm->mem, gpa, size, hva);
	vpmu__vm_unlock(vm);
	return (error);
}

int
vpmu_vm_set_write_fn(struct vpmu_vm *vm, vpmu_write_fn *fn, void *arg)
{
	if (vm == NULL)
		return (EINVAL);
	vpmu__vm_lock(vm);
	vm->mem.write_arg = arg;
	__atomic_store_n(&vm->mem.write_fn, fn, __ATOMIC_RELEASE);
	vpmu__vm_unlock(vm);
	return (0);
}

/* Steps 1-5 of an entry, when one of them may have work. */
static __attribute__((noinline)) void
enter_work(struct vpmu_vm *vm, unsigned cpu, struct vpmu_entry *e)
{
	struct vpmu_vcpu *v = &vm->vcpu[cpu];
	unsigned want, need;

	/* Set under the VM lock by the overflow check, taken here without it. */
	if (__atomic_load_n(&vm->gpmu->vcpu[cpu].pmi_pending, __ATOMIC_RELAXED) &&
	    __atomic_exchange_n(&vm->gpmu->vcpu[cpu].pmi_pending, 0, __ATOMIC_ACQ_REL)) {
		e->pmi = 1;
		v->xst.pmis++;
	}
	/*
	 * The controls written since the last entry, programmed at once; then
	 * dirty (changed under the VM lock; a stale look is re-taken); then
	 * the host counters the slots wait for, opened before the guest runs
	 * (by the lock's release: no system call under it).
	 */
	if (vpmu__gpmu_pending(vm, cpu) || __atomic_load_n(&v->dirty, __ATOMIC_RELAXED) ||
	    __atomic_load_n(&vm->nopening, __ATOMIC_RELAXED) != 0) {
		if (vpmu__gpmu_pending(vm, cpu))
			vpmu__gpmu_ask(vm, cpu);	/* supports(): no lock */
		vpmu__vm_lock(vm);
		(void)vpmu__gpmu_flush(vm, cpu);
		vpmu__vcpu_prepare(vm, cpu);
		vpmu__vm_unlock(vm);
	}
	v->entered = 0;
	if (__atomic_load_n(&v->nact, __ATOMIC_RELAXED) != 0) {
		v->entered = cpu_ns();
		v->entered_by = pthread_self();
		e->time_ns = __atomic_load_n(&v->time_left, __ATOMIC_RELAXED);
	}
	want = vm->src->exec_wants != NULL ? vm->src->exec_wants(vm->src_state, cpu) : 0;
	/*
	 * Nothing follows the guest: catch RDPMC's #GP at the guest's
	 * handler (rdpmc.c), or step once past that breakpoint to let a
	 * #GP that was not an RDPMC's reach the handler.
	 */
	if (want == 0 && v->rdpmc_pass) {
		want = VPMU_DEBUG_STEP;
		v->rdpmc_pass = false;
	} else if (want == 0 && (e->bp[0] = vpmu__rdpmc_catch_at(vm, cpu)) != 0) {
		want = VPMU_DEBUG_CATCH;
		e->nbp = 1;
		e->need = 1;
	}
	/*
	 * Breakpoints, unless an event is delivered at this entry: its
	 * handler must not run uncounted to them (a step sees its start).
	 */
	if (want & VPMU_DEBUG_BREAK) {
		need = 0;
		if (!e->pmi && vm->src->exec_breaks != NULL)
			e->nbp = vm->src->exec_breaks(vm->src_state, cpu, e->bp,
			    VPMU_DEBUG_BP_MAX, &need);
		if (e->nbp == 0 || e->nbp > VPMU_DEBUG_BP_MAX) {
			e->nbp = 0;
			want = (want & ~VPMU_DEBUG_BREAK) | VPMU_DEBUG_STEP;
		} else {
			/* none named: every one is needed */
			e->need = need & ((1u << e->nbp) - 1);
			if (e->need == 0)
				e->need = (1u << e->nbp) - 1;
		}
	}
	e->debug = want;
	e->debug_changed = want != v->debug || e->nbp != v->nbp || e->need != v->need ||
	    memcmp(e->bp, v->bp, sizeof(v->bp)) != 0;
	v->debug = want;
	v->nbp = e->nbp;
	v->need = e->need;
	memcpy(v->bp, e->bp, sizeof(v->bp));
}

int
vpmu_vcpu_enter(struct vpmu_vm *vm, unsigned cpu, struct vpmu_entry *e)
{
	if (vm == NULL || e == NULL || cpu >= vm->nvcpus)
		return (EINVAL);
	vpmu__vcpu_enter(vm, cpu, e);
	return (0);
}

void
vpmu__vcpu_enter(struct vpmu_vm *vm, unsigned cpu, struct vpmu_entry *e)
{
	memset(e, 0, sizeof(*e));
	if (!vpmu__vcpu_enter_quiet(vm, cpu))
		enter_work(vm, cpu, e);
}

/* The exit's registers, or the VMM's on request. */
static int
regs_of(struct vpmu_vm *vm, unsigned cpu, const struct vpmu_exit *x, struct vpmu_regs *buf,
    const struct vpmu_regs **rp)
{
	struct vpmu_vcpu *v = &vm->vcpu[cpu];
	int error;

	if ((*rp = x->regs) != NULL)
		return (0);
	if (v->regs_fn == NULL)
		return (EINVAL);		/* needed, and no way to get them */
	memset(buf, 0, sizeof(*buf));
	if ((error = v->regs_fn(v->regs_arg, cpu, buf)) != 0)
		return (error);
	*rp = buf;
	return (0);
}

/* What kind of exit the source that follows the guest sees. */
static unsigned
sync_kind(const struct vpmu_vcpu *v, const struct vpmu_exit *x)
{
	if (!(v->debug & (VPMU_DEBUG_STEP | VPMU_DEBUG_BREAK)) ||
	    (x->flags & VPMU_EXITF_MOVED))
		return (VPMU_SYNC_RESYNC);
	if (v->faulted)
		return (VPMU_SYNC_EVENT | VPMU_SYNC_FAULT | 13u << 8);	/* #GP */
	if (x->flags & VPMU_EXITF_INJECTED)
		return (VPMU_SYNC_EVENT | (x->vector & 0xFFu) << 8);
	if (x->reason == VPMU_EXIT_DEBUG && (x->dr6 & VPMU_DR6_BS))
		return (VPMU_SYNC_STEP);
	return (0);
}

/* What the source that follows the guest must know of this exit. */
static unsigned
sync_flags(const struct vpmu_vcpu *v, const struct vpmu_exit *x)
{
	unsigned f = sync_kind(v, x) | (v->halting ? VPMU_SYNC_HALTED : 0);

	if (x->flags & VPMU_EXITF_SETREGS)
		f |= VPMU_SYNC_SETREGS | ((x->flags & VPMU_EXITF_SETGPRS) ? VPMU_SYNC_SETGPRS : 0);
	if (x->flags & VPMU_EXITF_DEBUGGING)
		f |= VPMU_SYNC_DEBUGGING;
	return (f);
}

/*
 * A quiet stop: a debug exit of libvpmu's following the guest (one of the
 * debug modes and DR6 bits given), a VMM that writes registers back, and
 * nothing due at this place (a PMI or a sample comes before the
 * instruction, as under single-step).  Only there may libvpmu retire the
 * instruction at RIP itself: the source first (complete), then the core
 * the one the source stopped before (retire_at).  VM lock held.
 */
static bool
quiet_stop(struct vpmu_vm *vm, unsigned cpu, const struct vpmu_exit *x, unsigned debug,
    uint64_t dr6)
{
	const struct vpmu_vcpu *v = &vm->vcpu[cpu];

	return ((x->flags & VPMU_EXITF_SETREGS) && x->reason == VPMU_EXIT_DEBUG &&
	    (v->debug & debug) && (x->dr6 & dr6) &&
	    !__atomic_load_n(&vm->gpmu->vcpu[cpu].pmi_pending, __ATOMIC_RELAXED) &&
	    !(v->nact != 0 && vpmu__sample_due(vm, cpu)));
}

/*
 * The source may retire the instruction at its breakpoint (or after its
 * single step) itself, at a quiet stop.  Returns the registers after the
 * exit: r, or *done when the source completed an instruction (set in x).
 * VM lock held.
 */
static const struct vpmu_regs *
complete(struct vpmu_vm *vm, unsigned cpu, struct vpmu_exit *x, const struct vpmu_regs *r,
    struct vpmu_regs *done)
{
	struct vpmu_vcpu *v = &vm->vcpu[cpu];

	if (vm->src->exec_complete == NULL || x->set != 0 ||
	    !quiet_stop(vm, cpu, x, VPMU_DEBUG_STEP | VPMU_DEBUG_BREAK, VPMU_DR6_B0_3 | VPMU_DR6_BS))
		return (r);
	*done = *r;
	if ((x->set = vm->src->exec_complete(vm->src_state, cpu, done)) == 0)
		return (r);
	if ((x->set & VPMU_SET_GPRS) && !(x->flags & VPMU_EXITF_SETGPRS))
		x->set = 0;		/* a source's fault: never a register lost */
	if (x->set == 0)
		return (r);
	x->rip = done->rip;
	x->rsp = done->rsp;
	x->rcx = done->rcx;
	x->rax = done->rax;
	x->rdx = done->rdx;
	x->rflags = done->rflags;
	if (x->set & VPMU_SET_GPRS)
		vpmu__regs_gprs(done, x->gpr);
	v->last_rip = done->rip;
	v->xst.completed++;
	vpmu__gpmu_check_overflow(vm, cpu);
	return (done);
}

/* A sample of every due sampling PMC, VM lock held. */
static int
sample(struct vpmu_vm *vm, unsigned cpu, const struct vpmu_regs *r)
{
	struct vpmu_gmem_paging pg = VPMU_GMEM_PAGING(r);
	uint64_t pc[VPMU_PMCLOG_CALLCHAIN_MAX];
	unsigned depth = (unsigned)vm->tun.v[VPMU_T_CALLCHAINDEPTH], n;

	if (depth > VPMU_PMCLOG_CALLCHAIN_MAX)
		depth = VPMU_PMCLOG_CALLCHAIN_MAX;
	struct vpmu_task task;

	n = 0;
	if (vm->vcpu[cpu].unwind_fn != NULL && depth > 0 &&
	    (n = vm->vcpu[cpu].unwind_fn(vm->vcpu[cpu].unwind_arg, cpu, r, pc, depth)) > depth)
		n = depth;		/* the VMM's count, bounded */
	if (n == 0)
		n = vpmu__gmem_callchain(&vm->mem, &pg, r->rip, r->rbp, pc, depth);
	if (vm->vcpu[cpu].task_fn != NULL)
		vpmu__task_of(vm, cpu, r, &task);
	vpmu__sample_take(vm, cpu, pc, n, r->cpl > 0,
	    vm->vcpu[cpu].task_fn != NULL ? &task : NULL);
	vm->vcpu[cpu].xst.samples++;
	return (0);
}

/*
 * An MSR access, VM lock not held: VPMU_MSR_NOT_PMU (not ours), else
 * handled, with *data the value read and VPMU_MSR_GP for a fault.
 */
static inline __attribute__((always_inline)) enum vpmu_msr_verdict
msr_access(struct vpmu_vm *vm, unsigned cpu, bool write, uint32_t index, uint64_t *data)
{
	struct vpmu_vcpu *v = &vm->vcpu[cpu];
	uint64_t val = *data;
	enum vpmu_msr_verdict res;

	res = vpmu__gpmu_msr(vm, cpu, index, write, &val);
	if (res == VPMU_MSR_NOT_PMU)
		return (res);
	if (write)
		v->xst.msr_writes++;
	else {
		*data = val;
		v->xst.msr_reads++;
	}
	if (res != VPMU_MSR_OK) {
		if (!write)
			*data = 0;	/* a read that faults returns nothing */
		v->faulted = true;
		v->xst.msr_gp++;
	}
	return (res);
}

/* An MSR exit: ours if the MSR is a PMU MSR. */
static void
msr_exit(struct vpmu_vm *vm, unsigned cpu, struct vpmu_exit *x)
{
	enum vpmu_msr_verdict res;

	res = msr_access(vm, cpu, x->reason == VPMU_EXIT_MSR_WRITE, x->index, &x->data);
	if (res == VPMU_MSR_NOT_PMU)
		return;
	x->handled = 1;
	x->fault = res != VPMU_MSR_OK;
}

/*
 * A port access: a layer's if the port is one it serves (the paravirtual
 * channel's, vpmu_pv(4)).  The channel takes single accesses only: a
 * string access to its ports is ignored, an IN of one reads all ones.
 */
static __attribute__((noinline)) int
io_exit(struct vpmu_vm *vm, unsigned cpu, struct vpmu_exit *x)
{
	bool out = (x->flags & VPMU_EXITF_OUT) != 0, handled = false;
	unsigned size = (x->flags & VPMU_EXITF_STRING) ? 0 : x->size, i;
	uint32_t d = (uint32_t)x->data;
	int error = 0;

	if (x->size > sizeof(d))
		return (0);
	for (i = 0; i < vm->nlayers && !handled && error == 0; i++)
		if (vm->layers[i]->port_io != NULL)
			error = vm->layers[i]->port_io(vm, cpu, (uint16_t)x->index, out,
			    size, &d, &handled);
	if (error != 0 || !handled)
		return (error);
	x->handled = 1;
	vm->vcpu[cpu].xst.port_io++;
	if (!out)
		x->data = size != 0 ? d : ~0ull;
	return (0);
}

/*
 * A single step that retired the one-byte HLT (F4) at the last exit's RIP:
 * the trap came after it, and the vCPU did not halt (KVM reports the step,
 * not the halt).  The VMM must halt it as the HLT would have.
 */
static bool
stepped_hlt(const struct vpmu_vm *vm, const struct vpmu_vcpu *v, const struct vpmu_regs *r)
{
	struct vpmu_gmem_paging pg = VPMU_GMEM_PAGING(r);
	uint8_t op;

	return (r->rip == v->last_rip + 1 &&
	    vpmu__gmem_read_gva(&vm->mem, &pg, v->last_rip, &op, 1) == 1 && op == 0xF4);
}

/* ---- instructions the core retires itself: RDPMC (rdpmc.c), HLT ---------------- */

#define INSN_MAX	15		/* the longest x86 instruction */

/*
 * The instruction at rip, as far as the core tells them apart: RDPMC
 * (0F 33) or HLT (F4) after prefixes that leave both alone (operand and
 * address size, segment, REP/REPNE; a REX in 64-bit mode), its length in
 * *len; else VPMU_INSN_OTHER.  LOCK makes either #UD: other.
 */
enum vpmu__insn
vpmu__insn_at(const struct vpmu_vm *vm, const struct vpmu_regs *r, uint64_t rip, unsigned *len)
{
	struct vpmu_gmem_paging pg = VPMU_GMEM_PAGING(r);
	uint8_t b[INSN_MAX];
	int n;
	unsigned i;

	n = vpmu__gmem_read_gva(&vm->mem, &pg, rip, b, sizeof(b));
	for (i = 0; i < (unsigned)n; i++) {
		switch (b[i]) {
		case 0x66: case 0x67: case 0xF2: case 0xF3:
		case 0x26: case 0x2E: case 0x36: case 0x3E: case 0x64: case 0x65:
			continue;
		}
		if (r->long_mode && (b[i] & 0xF0) == 0x40)
			i++;			/* REX: the opcode must follow */
		break;
	}
	if (i < (unsigned)n && b[i] == 0xF4) {
		*len = i + 1;
		return (VPMU_INSN_HLT);
	}
	if (i + 1 < (unsigned)n && b[i] == 0x0F && b[i + 1] == 0x33) {
		*len = i + 2;
		return (VPMU_INSN_RDPMC);
	}
	return (VPMU_INSN_OTHER);
}

/*
 * The core retired the instruction at r itself, with the registers x->set
 * names: *done is r after it, the source counts it, and overflows it
 * brought are seen.  Returns done.  VM lock held.
 */
const struct vpmu_regs *
vpmu__vcpu_retired(struct vpmu_vm *vm, unsigned cpu, const struct vpmu_exit *x,
    const struct vpmu_regs *r, struct vpmu_regs *done)
{
	if (done != r)			/* r is done after a completion */
		*done = *r;
	if (x->set & VPMU_SET_RIP)
		done->rip = x->rip;
	if (x->set & VPMU_SET_RAX)
		done->rax = x->rax;
	if (x->set & VPMU_SET_RDX)
		done->rdx = x->rdx;
	vm->src->exec_retire(vm->src_state, cpu, done);
	vm->vcpu[cpu].last_rip = done->rip;
	vpmu__gpmu_check_overflow(vm, cpu);
	return (done);
}

/*
 * A quiet stop, of a step or a breakpoint, before an instruction the core
 * may retire itself: an RDPMC the model answers (rdpmc.c), or a HLT at
 * CPL 0 (a stepped HLT traps after it without halting, and what the host
 * does with the halt then differs between hosts): RIP goes past it, the
 * source counts it, and the VMM halts the vCPU (x->halted) with the
 * registers written, so that it waits for an interrupt as after the HLT
 * and the source follows the handler the wake runs.  r may be where the
 * source's completion left the vCPU (x->set already names registers): an
 * RDPMC right after the instructions it retired is answered here too, or
 * it would run and take the processor's #GP.  Returns the registers after
 * the exit.  VM lock held.
 */
static const struct vpmu_regs *
retire_at(struct vpmu_vm *vm, unsigned cpu, struct vpmu_exit *x, const struct vpmu_regs *r,
    struct vpmu_regs *done)
{
	unsigned len;

	if (vm->src->exec_retire == NULL || !quiet_stop(vm, cpu, x,
	    VPMU_DEBUG_STEP | VPMU_DEBUG_BREAK, VPMU_DR6_BS | VPMU_DR6_B0_3))
		return (r);
	switch (vpmu__insn_at(vm, r, r->rip, &len)) {
	case VPMU_INSN_RDPMC:
		if (gpmu_ext(vm->gpmu) != NULL)
			return (r);		/* KVM's vPMU answers it */
		return (vpmu__rdpmc_at(vm, cpu, x, r, done, len));
	case VPMU_INSN_HLT:
		if ((r->cr0 & VPMU_CR0_PE) && r->cpl != 0)
			return (r);		/* #GP: the guest's */
		x->set |= VPMU_SET_RIP;
		x->rip = r->rip + len;
		x->halted = 1;
		return (vpmu__vcpu_retired(vm, cpu, x, r, done));
	default:
		return (r);
	}
}

/* Steps 2-5, under the VM lock (the registers asked for before it). */
static __attribute__((noinline)) int
exit_locked(struct vpmu_vm *vm, unsigned cpu, struct vpmu_exit *x, uint64_t ran)
{
	struct vpmu_vcpu *v = &vm->vcpu[cpu];
	const struct vpmu_regs *r = NULL;
	struct vpmu_regs buf, done;
	unsigned flags = 0;
	uint64_t ns;
	int error = 0;

	if (vm->src->exec_sync != NULL) {
		flags = sync_flags(v, x);
		if ((error = regs_of(vm, cpu, x, &buf, &r)) != 0)
			return (error);
	}
	vpmu__vm_lock(vm);
	if (vm->src->exec_sync != NULL) {
		vm->src->exec_sync(vm->src_state, cpu, r,
		    flags | (vpmu__vcpu_run_timed(vm, cpu) ? VPMU_SYNC_RUN_TIME : 0));
		x->halted = (flags & (VPMU_SYNC_RESYNC | VPMU_SYNC_STEP | VPMU_SYNC_EVENT)) ==
		    VPMU_SYNC_STEP &&
		    stepped_hlt(vm, v, r);
		v->last_rip = r->rip;
	}
	v->faulted = false;
	/*
	 * The run's time goes to the PMCs after the source counted what
	 * retired in it, so a rotation it brings does not move those events
	 * to the next window.
	 */
	if ((ns = vpmu__vcpu_clock(vm, cpu, ran)) != 0 || ran != 0)
		vpmu__vcpu_advance(vm, cpu, ran, ns);
	vpmu__gpmu_check_overflow(vm, cpu);
	if (r != NULL) {
		if (vm->src->exec_stops != NULL)
			vm->src->exec_stops(vm->src_state, cpu, x->stops,
			    x->nstops < VPMU_EXIT_STOPS_MAX ? x->nstops : VPMU_EXIT_STOPS_MAX);
		r = complete(vm, cpu, x, r, &done);
		r = retire_at(vm, cpu, x, r, &done);
		if (x->regs == NULL)
			vpmu__rdpmc_refresh(vm, cpu, r);
	}
	v->halting = x->halted != 0;
	if (v->nact != 0 && vpmu__sample_due(vm, cpu)) {
		if (r == NULL)
			error = regs_of(vm, cpu, x, &buf, &r);
		if (error == 0)
			error = sample(vm, cpu, r);
	}
	vpmu__vm_unlock(vm);
	return (error);
}

/* The breakpoint on the guest's #GP handler: RDPMC's #GP, maybe (rdpmc.c). */
static __attribute__((noinline)) int
catch_exit(struct vpmu_vm *vm, unsigned cpu, struct vpmu_exit *x)
{
	struct vpmu_regs buf;
	const struct vpmu_regs *r;

	if (regs_of(vm, cpu, x, &buf, &r) != 0)
		r = NULL;		/* no registers: the guest takes its #GP */
	vpmu__rdpmc_catch(vm, cpu, x, r);
	return (0);
}

int
vpmu_vcpu_exit(struct vpmu_vm *vm, unsigned cpu, struct vpmu_exit *x)
{
	if (vm == NULL || x == NULL || cpu >= vm->nvcpus)
		return (EINVAL);
	return (vpmu__vcpu_exit(vm, cpu, x));
}

int
vpmu__vcpu_exit(struct vpmu_vm *vm, unsigned cpu, struct vpmu_exit *x)
{
	struct vpmu_vcpu *v;
	uint64_t ran = 0;
	int error;

	v = &vm->vcpu[cpu];
	x->handled = 0;
	x->fault = 0;
	x->halted = 0;
	x->set = 0;
	v->xst.exits++;
	if (x->flags & VPMU_EXITF_RAN)
		ran = x->ran_ns;
	else if (v->entered != 0 && pthread_equal(v->entered_by, pthread_self()) &&
	    (ran = cpu_ns()) > v->entered)
		ran -= v->entered;
	else
		ran = 0;		/* not the entering thread: its CPU time is not ours */
	v->entered = 0;

	/* The layers' exit hooks (the fast-read page of who runs here). */
	if (__atomic_load_n(&vm->exit_work, __ATOMIC_RELAXED) != 0)
		for (unsigned i = 0; i < vm->nlayers; i++)
			if (vm->layers[i]->vcpu_exit != NULL)
				vm->layers[i]->vcpu_exit(vm, cpu);
	if (x->regs != NULL)
		vpmu__rdpmc_refresh(vm, cpu, x->regs);
	/*
	 * Nothing counts and nothing follows the guest: no time to hand out,
	 * no overflow, no sample (nact is a hint, as at the entry: a PMC
	 * started since by another thread has counted nothing yet).
	 */
	if (vm->src->exec_sync != NULL || ran != 0 || vm->gpmu->vcpu[cpu].running != 0 ||
	    __atomic_load_n(&v->nact, __ATOMIC_RELAXED) != 0) {
		if ((error = exit_locked(vm, cpu, x, ran)) != 0)
			return (error);
	} else
		v->faulted = false;
	switch (x->reason) {
	case VPMU_EXIT_MSR_READ:
	case VPMU_EXIT_MSR_WRITE:
		msr_exit(vm, cpu, x);
		break;
	case VPMU_EXIT_DEBUG:
		/* A VMM that could not break single-steps: BS in either mode. */
		if ((v->debug & (VPMU_DEBUG_STEP | VPMU_DEBUG_BREAK)) &&
		    (x->dr6 & VPMU_DR6_BS)) {
			v->xst.steps++;
			x->handled = !x->halted;	/* a HLT: the VMM halts */
		} else if ((v->debug & VPMU_DEBUG_BREAK) && (x->dr6 & VPMU_DR6_B0_3)) {
			v->xst.breaks++;
			x->handled = !x->halted;
		} else if ((v->debug & VPMU_DEBUG_CATCH) && (x->dr6 & VPMU_DR6_B0_3))
			return (catch_exit(vm, cpu, x));
		break;
	case VPMU_EXIT_RDPMC:
		vpmu__rdpmc_exit(vm, cpu, x);
		break;
	default:
		break;
	}
	/* The channel takes its own lock, and the VM lock inside it. */
	if (x->reason == VPMU_EXIT_IO)
		return (io_exit(vm, cpu, x));
	return (0);
}

/*
 * An MSR exit for the KVM glue, when it has no event injected and no RIP
 * moved to report: 0 with *verdict VPMU_MSR_OK or VPMU_MSR_GP (handled; a
 * read's value in *data) or VPMU_MSR_NOT_PMU (not ours), or an errno.  The
 * common exit (no run time to hand out, nothing counting, no source
 * following the guest, no fast-read page to refresh) is the access alone,
 * without a struct vpmu_exit.
 */
int
vpmu__vcpu_msr(struct vpmu_vm *vm, unsigned cpu, bool write, uint32_t index, uint64_t *data,
    enum vpmu_msr_verdict *verdict)
{
	struct vpmu_vcpu *v = &vm->vcpu[cpu];
	struct vpmu_exit x;
	int error;

	if (v->entered == 0 && vm->src->exec_sync == NULL &&
	    vm->gpmu->vcpu[cpu].running == 0 &&
	    __atomic_load_n(&v->nact, __ATOMIC_RELAXED) == 0 &&
	    __atomic_load_n(&vm->exit_work, __ATOMIC_RELAXED) == 0) {
		v->xst.exits++;
		v->faulted = false;
		*verdict = msr_access(vm, cpu, write, index, data);
		return (0);
	}
	memset(&x, 0, sizeof(x));
	x.reason = write ? VPMU_EXIT_MSR_WRITE : VPMU_EXIT_MSR_READ;
	x.index = index;
	x.data = *data;
	if ((error = vpmu__vcpu_exit(vm, cpu, &x)) != 0)
		return (error);
	if (x.handled)
		*data = x.data;
	*verdict = !x.handled ? VPMU_MSR_NOT_PMU : x.fault ? VPMU_MSR_GP : VPMU_MSR_OK;
	return (0);
}

int
vpmu_vcpu_get_stats(struct vpmu_vm *vm, unsigned cpu, struct vpmu_vcpu_stats *st)
{
	if (vm == NULL || st == NULL || cpu >= vm->nvcpus)
		return (EINVAL);
	*st = vm->vcpu[cpu].xst;
	return (0);
}

/*
 * A PMI through the local APIC's LVT performance-counter entry (SDM Vol.
 * 3A 11.5.1): masked, nothing; NMI delivery mode, an NMI; fixed, its
 * vector.  SMI and the reserved modes are not modelled: nothing.  After
 * a delivery an Intel CPU sets the entry's mask bit (SDM Vol. 3B
 * 20.2.1.2 "... the LVT performance counter register is masked"), AMD's
 * does not.
 */
int
vpmu_lvtpc_deliver(struct vpmu_vm *vm, unsigned cpu, uint32_t *lvtpc, unsigned *kind,
    unsigned *vector)
{
	uint32_t lvt;

	if (vm == NULL || lvtpc == NULL || kind == NULL || vector == NULL ||
	    cpu >= vm->nvcpus)
		return (EINVAL);
	lvt = *lvtpc;
	*vector = 0;
	if (lvt & VPMU_LVT_MASKED)
		*kind = VPMU_PMI_NONE;
	else if (VPMU_LVT_DM(lvt) == VPMU_LVT_DM_NMI)
		*kind = VPMU_PMI_NMI;
	else if (VPMU_LVT_DM(lvt) == VPMU_LVT_DM_FIXED && VPMU_LVT_VECTOR(lvt) >= 16) {
		*kind = VPMU_PMI_VECTOR;
		*vector = VPMU_LVT_VECTOR(lvt);
	} else
		*kind = VPMU_PMI_NONE;		/* SMI, reserved, or an illegal vector */
	if (*kind != VPMU_PMI_NONE && vm->gpmu->model.vendor == VPMU_VENDOR_INTEL)
		*lvtpc = lvt | VPMU_LVT_MASKED;
	return (0);
}
