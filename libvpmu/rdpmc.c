/*
 * rdpmc.c -- RDPMC for a guest whose hypervisor never hands it to user
 * space.  KVM answers a guest's RDPMC itself, from its own vPMU; with
 * that off (libvpmu's models are in user space) it injects #GP.  So the
 * instruction is caught on one of two ways, and answered from the model
 * (vpmu__gpmu_rdpmc):
 *
 *   before it runs  a source that follows the guest (the exact source)
 *                   stops before every instruction it cannot run inside a
 *                   block, RDPMC among them: at such a debug exit, with
 *                   the RDPMC at RIP, the core retires it (RIP, RAX, RDX
 *                   through vpmu_exit.set) and the source counts it;
 *   on its #GP      otherwise, an instruction breakpoint on the entry of
 *                   the guest's #GP handler (VPMU_DEBUG_CATCH, read from
 *                   the guest's IDT): when the frame there is an RDPMC's
 *                   #GP(0) in 64-bit mode, from CPL 0 or from CPL 3 with
 *                   CR4.PCE, the fault is undone (RIP past the RDPMC, RSP
 *                   and RFLAGS from the frame, and back to user mode's CS
 *                   and SS) and the RDPMC answered; any other #GP goes on
 *                   to the handler, one single step past the breakpoint.
 *
 * An RDPMC the model does not allow (an index it lacks; CPL > 0 without
 * CR4.PCE) is left to the guest: the processor's #GP is the right answer.
 * A VMM that intercepts RDPMC itself reports it as VPMU_EXIT_RDPMC.
 */
#include <string.h>

#include "internal.h"
#include "gmem.h"
#include "gpmu.h"
#include <vpmu/source.h>

#define CR4_PCE		(1ull << 8)
#define GP_VECTOR	13

/* RDPMC allowed at r's privilege (SDM Vol. 2B, RDPMC): else it is #GP. */
static bool
rdpmc_allowed(const struct vpmu_regs *r)
{
	return (!(r->cr0 & VPMU_CR0_PE) || r->cpl == 0 || (r->cr4 & CR4_PCE));
}

/* The answer into x: RIP past the instruction, EDX:EAX the value. */
static void
answer(struct vpmu_exit *x, uint64_t rip, uint64_t val)
{
	x->set |= VPMU_SET_RIP | VPMU_SET_RAX | VPMU_SET_RDX;
	x->rip = rip;
	x->rax = val & 0xFFFFFFFFu;		/* 32-bit writes zero bits 63:32 */
	x->rdx = val >> 32;
	if (x->set & VPMU_SET_GPRS) {		/* after a completion: gpr[] too */
		x->gpr[0] = x->rax;
		x->gpr[2] = x->rdx;
	}
}

/*
 * Before it runs: the exit stopped the vCPU at an RDPMC of len bytes, at
 * a stop where the core may retire it (vcpu.c).  Retire it if the model
 * answers: EDX:EAX, and the source counts it.  Returns the registers after
 * the exit (*done when retired).  VM lock held.
 */
const struct vpmu_regs *
vpmu__rdpmc_at(struct vpmu_vm *vm, unsigned cpu, struct vpmu_exit *x,
    const struct vpmu_regs *r, struct vpmu_regs *done, unsigned len)
{
	uint64_t val;

	if (!rdpmc_allowed(r) ||
	    vpmu__gpmu_rdpmc(vm, cpu, (uint32_t)r->rcx, &val) != VPMU_MSR_OK)
		return (r);
	answer(x, r->rip + len, val);
	vm->vcpu[cpu].xst.rdpmc++;
	return (vpmu__vcpu_retired(vm, cpu, x, r, done));
}

/*
 * Where the catch goes, from the registers an exit brought anyway (a VMM
 * that gives none gets no catch): only noted here, on the exit path; the
 * IDT is read by vpmu__rdpmc_catch_at() at an entry that arms the catch.
 */
void
vpmu__rdpmc_refresh(struct vpmu_vm *vm, unsigned cpu, const struct vpmu_regs *r)
{
	struct vpmu_vcpu *v = &vm->vcpu[cpu];

	v->rdpmc_pg = VPMU_GMEM_PAGING(r);
	v->rdpmc_idt_base = r->idt_base;
	v->rdpmc_idt_limit = r->idt_limit;
	v->rdpmc_lm = r->long_mode != 0;
	v->rdpmc_stale = true;
}

/*
 * The entry of the guest's #GP handler, 64-bit mode only, from the IDT
 * the last exit showed: the catch's breakpoint, or 0 for none.  On the
 * vCPU's thread, at an entry where nothing follows the guest.
 */
uint64_t
vpmu__rdpmc_catch_at(struct vpmu_vm *vm, unsigned cpu)
{
	struct vpmu_vcpu *v = &vm->vcpu[cpu];
	uint64_t entry;

	if (v->rdpmc_stale) {
		v->rdpmc_stale = false;
		v->rdpmc_bp = 0;
		if (vm->gpmu->vendor != NULL && gpmu_ext(vm->gpmu) == NULL && v->rdpmc_lm &&
		    vpmu__gmem_idt_entry(&vm->mem, &v->rdpmc_pg, v->rdpmc_idt_base,
		    v->rdpmc_idt_limit, GP_VECTOR, &entry) == 0)
			v->rdpmc_bp = entry;
	}
	return (v->rdpmc_bp);
}

/*
 * The descriptor of a user-mode (DPL 3) selector in the guest's GDT, as
 * IRET to CPL 3 would accept it (SDM Vol. 3A 5.8 and IRET): present, RPL
 * 3, not in the LDT; code for CS (64-bit: L set), writable data for SS.
 * 0 if not.
 */
static uint64_t
user_desc(const struct vpmu_vm *vm, const struct vpmu_regs *r, uint64_t sel, bool code)
{
	struct vpmu_gmem_paging pg = VPMU_GMEM_PAGING(r);
	uint64_t d, type;

	if ((sel & 7) != 3 || (sel | 7) > r->gdt_limit ||
	    vpmu__gmem_read_gva(&vm->mem, &pg, r->gdt_base + (sel & ~7ull), &d, sizeof(d)) !=
	    (int)sizeof(d))
		return (0);
	type = d >> 40 & 0x1F;			/* S and the type */
	if (!(d >> 47 & 1) || (d >> 45 & 3) != 3)
		return (0);
	if (code ? (type & 0x18) != 0x18 || !(d >> 53 & 1) : (type & 0x1A) != 0x12)
		return (0);
	return (d);
}

/*
 * A debug exit at the catch (the vCPU at the entry of its #GP handler,
 * r the registers there): an RDPMC's #GP in 64-bit mode, from CPL 0 or
 * from CPL 3 with CR4.PCE (the fault was the hypervisor's, not the
 * privilege rule's), is undone and answered; anything else goes on to the
 * handler.  The frame at RSP: error code, RIP, CS, RFLAGS, RSP, SS.
 */
void
vpmu__rdpmc_catch(struct vpmu_vm *vm, unsigned cpu, struct vpmu_exit *x,
    const struct vpmu_regs *r)
{
	struct vpmu_gmem_paging pg = VPMU_GMEM_PAGING(r);
	struct vpmu_vcpu *v = &vm->vcpu[cpu];
	uint64_t f[6], val, cs_desc = 0, ss_desc = 0;
	unsigned len;
	int res;

	x->handled = 1;
	if (r == NULL) {
		v->rdpmc_pass = true;
		return;
	}
	vpmu__rdpmc_refresh(vm, cpu, r);
	if (!(x->flags & VPMU_EXITF_SETREGS) || r->rip != v->bp[0] ||
	    !r->long_mode || r->cpl != 0 ||
	    vpmu__gmem_read_gva(&vm->mem, &pg, r->rsp, f, sizeof(f)) != (int)sizeof(f) ||
	    f[0] != 0 || ((f[2] & 3) != 0 && ((f[2] & 3) != 3 || !(r->cr4 & CR4_PCE))) ||
	    vpmu__insn_at(vm, r, f[1], &len) != VPMU_INSN_RDPMC ||
	    ((f[2] & 3) == 3 && ((cs_desc = user_desc(vm, r, f[2], true)) == 0 ||
	    (ss_desc = user_desc(vm, r, f[5], false)) == 0))) {
		v->rdpmc_pass = true;		/* not an RDPMC's: the handler runs */
		return;
	}
	vpmu__vm_lock(vm);
	res = vpmu__gpmu_rdpmc(vm, cpu, (uint32_t)r->rcx, &val);
	vpmu__vm_unlock(vm);
	v->xst.rdpmc++;
	if (res != VPMU_MSR_OK) {
		v->xst.rdpmc_gp++;		/* the model's #GP: the guest's handler */
		v->rdpmc_pass = true;
		return;
	}
	answer(x, f[1] + len, val);
	x->set |= VPMU_SET_RSP | VPMU_SET_RFLAGS;
	x->rsp = f[4];
	x->rflags = f[3];
	if ((f[2] & 3) == 3) {			/* from user mode, CR4.PCE set */
		x->set |= VPMU_SET_USER;
		x->cs = (uint32_t)(f[2] & 0xFFFF);
		x->ss = (uint32_t)(f[5] & 0xFFFF);
		x->cs_desc = cs_desc;
		x->ss_desc = ss_desc;
	}
}

/* A VMM's own RDPMC intercept (VPMU_EXIT_RDPMC): the value, or #GP. */
void
vpmu__rdpmc_exit(struct vpmu_vm *vm, unsigned cpu, struct vpmu_exit *x)
{
	struct vpmu_vcpu *v = &vm->vcpu[cpu];
	int res;

	vpmu__vm_lock(vm);
	res = vpmu__gpmu_rdpmc(vm, cpu, x->index, &x->data);
	vpmu__vm_unlock(vm);
	x->handled = 1;
	v->xst.rdpmc++;
	if (res != VPMU_MSR_OK) {
		x->data = 0;
		x->fault = 1;
		v->xst.rdpmc_gp++;
	}
}
