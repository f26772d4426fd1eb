/*
 * kvm_debug.c -- the KVM glue's guest debugging: libvpmu's single-step and
 * instruction breakpoints (what the source asks for at an entry) put on
 * top of the VMM's own debugging (vpmu_kvm_set_guest_debug) with one
 * KVM_SET_GUEST_DEBUG when that changes; who single-steps the vCPU, the
 * processor or KVM's emulator, and the step record parked for the latter;
 * at a debug exit, whose it is (libvpmu's, the VMM's, the guest's own #DB,
 * delivered here) and where the VMM's and the guest's breakpoints would
 * stop the vCPU; a HLT that a step retired.
 */
#include <errno.h>
#include <string.h>
#include <sys/ioctl.h>

#include "kvm_internal.h"

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
int
vpmu__kvm_step_halt(struct kvm_vcpu_ctx *c, unsigned cpu, bool retired, bool *handled)
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
	if (!retired && (error = vpmu__kvm_regs(c, cpu, &r)) != 0)
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

/*
 * At an entry, after the debugging is applied: registers written back
 * carry the steps' RFLAGS.TF (step_tf), a step after a step is probed,
 * and a step where libvpmu wanted breakpoints is counted by its reason.
 */
void
vpmu__kvm_debug_enter(struct kvm_vcpu_ctx *c, const struct vpmu_entry *e)
{
	if (c->run->kvm_dirty_regs & KVM_SYNC_X86_REGS)
		c->run->s.regs.regs.rflags |= step_tf(c);
	step_by_probe(c);
	if ((e->debug & VPMU_DEBUG_BREAK) && !c->breaking) {	/* a step */
		if (c->carry_applied)
			__atomic_store_n(&c->held_steps, c->held_steps + 1, __ATOMIC_RELAXED);
		else
			__atomic_store_n(&c->dr_steps, c->dr_steps + 1, __ATOMIC_RELAXED);
	}
}

/* At an exit: the probe's outcome. */
void
vpmu__kvm_step_probed(struct kvm_vcpu_ctx *c)
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
bool
vpmu__kvm_debug_due(const struct kvm_vcpu_ctx *c, const struct vpmu_entry *e)
{
	return (e->debug_changed || (c->carried >= 0) != c->carry_applied || c->rearm);
}

/*
 * The VMM's guest debugging with libvpmu's single-step or breakpoints on
 * top; KVM_SET_GUEST_DEBUG only when that differs from what KVM has (an
 * ioctl costs microseconds, and a block engine changes breakpoints at
 * most exits).
 */
int
vpmu__kvm_apply_debug(const vpmu_kvm *k, struct kvm_vcpu_ctx *c)
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

	if ((c = vpmu__kvm_ctx_of(k, cpu)) == NULL || dbg == NULL)
		return (EINVAL);
	saved = c->vmm_dbg;
	c->vmm_dbg = *dbg;
	if ((error = vpmu__kvm_apply_debug(k, c)) != 0)
		c->vmm_dbg = saved;
	return (error);
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
 * The guest's own #DB (its breakpoints' DR6 bits): its DR6 gets them, as
 * the processor would set them, and the exception is injected; the next
 * run delivers it (reported to libvpmu as an injected vector 1).
 */
int
vpmu__kvm_deliver_db(struct kvm_vcpu_ctx *c, uint64_t bits)
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
 * A debug exit with DR6 dr6: whose it is.  Returns whether the VMM's own
 * debugging caused it too; *ours gets the DR6 bits libvpmu sees and
 * *guest the breakpoint hits that are neither libvpmu's nor the VMM's:
 * the guest's own, possible only while libvpmu's breakpoints are not in
 * KVM (KVM_GUESTDBG_USE_HW_BP turns the guest's off).  libvpmu sees
 * neither; the guest gets its #DB (vpmu__kvm_deliver_db).
 */
bool
vpmu__kvm_debug_exit(const struct kvm_vcpu_ctx *c, uint64_t dr6, uint64_t *ours,
    uint64_t *guest)
{
	bool vmm = vmm_debug_exit(c, dr6);

	*ours = dr6 & ~(vmm_breaks(c) & ~shared_breaks(c));
	*guest = 0;
	if (!c->breaking && !(c->vmm_dbg.control & KVM_GUESTDBG_USE_HW_BP))
		*guest = *ours & VPMU_DR6_B0_3;
	*ours &= ~*guest;
	return (vmm);
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
void
vpmu__kvm_debug_stops(const struct kvm_vcpu_ctx *c, struct vpmu_exit *x)
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
