/*
 * kvm_regs.c -- the KVM glue's registers, both ways: the vCPU's as libvpmu
 * asks for them (vpmu_vcpu_set_regs_fn: kvm_run's synced copy, or
 * KVM_GET_REGS/SREGS), and the ones libvpmu changed at an exit written
 * back through kvm_run (or, for CS and SS, KVM_SET_SREGS); RDPMC's catch
 * moved when the guest's IDT register does.
 */
#include <errno.h>
#include <string.h>
#include <sys/ioctl.h>

#include "kvm_internal.h"

/* Registers on request: kvm_run's synced copy, or two ioctls. */
int
vpmu__kvm_regs(void *arg, unsigned cpu, struct vpmu_regs *r)
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
void
vpmu__kvm_idt_moved(vpmu_kvm *k, unsigned cpu, struct kvm_vcpu_ctx *c)
{
	struct vpmu_regs r;

	c->idt_base = c->run->s.regs.sregs.idt.base;
	c->idt_limit = c->run->s.regs.sregs.idt.limit;
	if (vpmu__kvm_regs(c, cpu, &r) == 0)
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
int
vpmu__kvm_set_regs(struct kvm_vcpu_ctx *c, const struct vpmu_exit *x)
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
