/*
 * kvm_pmi.c -- the KVM glue's PMIs and the events it follows: a PMI
 * delivered as the guest programmed its local APIC's LVTPC (in-kernel
 * LAPIC) or as KVM_NMI (the VMM emulates the APIC); an event libvpmu
 * injected carried from exit to exit until KVM has delivered it; the
 * VMM's own injections (vpmu_kvm_note_injected).
 */
#include <errno.h>
#include <string.h>
#include <sys/ioctl.h>

#include "kvm_internal.h"

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

/* The PMI an entry hands out, before KVM_RUN. */
int
vpmu__kvm_pmi(vpmu_kvm *k, unsigned cpu, struct kvm_vcpu_ctx *c)
{
	if (c->lapic)
		return (lapic_pmi(k, cpu, c));
	if (ioctl(c->fd, KVM_NMI) < 0)
		return (errno);
	c->injected = 2;
	return (0);
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
 * After an exit: an NMI or interrupt injected at the entry is reported at
 * every exit until KVM has delivered it (a PMI in an STI shadow comes an
 * instruction later): the source then walks from its handler, not along
 * code that never ran.
 */
void
vpmu__kvm_carry(struct kvm_vcpu_ctx *c)
{
	if (c->injected >= 2)
		c->carried = c->injected;
	if (c->carried >= 0 && !event_held(c, c->carried))
		c->carried = -1;
	c->injected = -1;
}

int
vpmu_kvm_note_injected(vpmu_kvm *k, unsigned cpu, unsigned vector)
{
	struct kvm_vcpu_ctx *c;

	if ((c = vpmu__kvm_ctx_of(k, cpu)) == NULL || vector > 255)
		return (EINVAL);
	if (c->entered) {		/* after pre_run: this entry delivers it */
		if (c->injected < 0)
			c->injected = (int)vector;
	} else
		__atomic_store_n(&c->vmm_injected, (int)vector, __ATOMIC_RELEASE);
	return (0);
}
