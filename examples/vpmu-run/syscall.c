/*
 * syscall.c -- SYSCALL from user mode, completed where the host's KVM
 * leaves it half done (--user-syscall, vpmu-run(1)).
 *
 * SYSCALL in 64-bit mode (SDM Vol. 2B, SYSCALL) saves RIP in RCX and
 * RFLAGS in R11, masks RFLAGS with IA32_FMASK, loads CS and SS from
 * IA32_STAR[47:32] at CPL 0, and jumps to IA32_LSTAR.  Some hosts (a KVM
 * that runs a guest's user-mode code natively and its kernel-mode code in
 * an instruction emulator) do the jump and leave the rest: the vCPU is at
 * LSTAR at CPL 3 with the user's CS and SS.  A kernel maps its entry
 * supervisor-only, so the fetch there faults: #PF at RIP = CR2 = LSTAR
 * from CPL 3, and the kernel kills the process.  Every process dies on its
 * first system call.
 *
 * What vpmu-run does about it:
 *
 *   the probe    once, the first time a guest writes IA32_LSTAR (a write
 *                the VMM's MSR filter sends here): a VM of vpmu-run's own
 *                IRETQs to CPL 3 and runs SYSCALL to a HLT.  The host
 *                completes it (HLT at CPL 0) or leaves it at CPL 3 (the
 *                HLT faults there, and with no IDT the vCPU shuts down).
 *   the catch    where the host leaves it (or with --user-syscall
 *                complete), an instruction breakpoint (the VMM's, through
 *                vpmu_kvm_set_guest_debug) on the entry of the guest's #PF
 *                handler, read from its IDT at each LSTAR write and, once
 *                EFER.SCE is set, again at port I/O exits at most every
 *                CATCH_LOOK_NS (the IDT may change; a resumed snapshot).
 *   completion   at the breakpoint, before the handler runs, a #PF from
 *                CPL 3 at RIP = CR2 = LSTAR, a user-mode access, with
 *                EFER.SCE set in long mode: the fault is undone and the
 *                SYSCALL finished as the processor would have, from the
 *                frame the fault pushed: RSP the user's, R11 the RFLAGS
 *                the host saved there (saved_rflags: IOPL from the frame,
 *                IF set below IOPL 3), RFLAGS those masked by IA32_FMASK,
 *                CS and SS from IA32_STAR at CPL 0, RIP = LSTAR.  RCX
 *                stays as the host set it.  Any other #PF goes on to the
 *                handler (one single step with the breakpoint off, then
 *                the breakpoint again).
 *
 * Sound also for a user jump to LSTAR (which faults the same way): the
 * kernel is entered as by a SYSCALL at the jump's target with the user's
 * own RCX and R11 (but IOPL as the frame has it, and IF set below IOPL 3),
 * which a user program can do anyway.
 * CR2 keeps the fault's address (LSTAR).  While the catch is set KVM
 * gets KVM_GUESTDBG_USE_HW_BP, which switches the guest's own hardware
 * breakpoints off.  SYSCALL from compatibility mode (IA32_CSTAR) is not
 * completed.
 */
#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <time.h>
#include <unistd.h>
#include <linux/kvm.h>

#include "vpmu-run.h"

#define MSR_EFER	0xc0000080u
#define MSR_STAR	0xc0000081u
#define MSR_LSTAR	0xc0000082u
#define MSR_FMASK	0xc0000084u
#define EFER_SCE	(1ull << 0)
#define EFER_LMA	(1ull << 10)
#define RFLAGS_FIXED	0x2ull
#define RFLAGS_IF	(1ull << 9)
#define RFLAGS_IOPL	(3ull << 12)
#define RFLAGS_RF	(1ull << 16)
#define RFLAGS_VM	(1ull << 17)
#define DR6_BS		(1ull << 14)	/* a single step */
#define PF_VECTOR	14
#define PF_USER		(1ull << 2)	/* error code: the access was at CPL 3 */
#define PF_RSVD		(1ull << 3)	/* a reserved bit in a paging entry */
#define DR6_B0		0x1ull
#define DR7_L0		0x1ull
#define DR7_FIXED1	0x400ull
#define CATCH_LOOK_NS	10000000ull	/* 10 ms between looks at the IDT */

/* ---- the probe --------------------------------------------------------------- */

/*
 * Its guest-physical layout: vr_boot_tables()'s GDT, TSS and page tables
 * (user-accessible 2 MiB pages), two user descriptors after the TSS's,
 * and three pieces of code.
 */
#define PROBE_RAM	0x200000ull
#define PROBE_GDT	0x1000ull
#define PROBE_UDATA	0x28u			/* after vr_boot_tables' TSS */
#define PROBE_UCODE	0x30u
#define PROBE_KERNEL	0x10000ull		/* IRETQ */
#define PROBE_USER	0x11000ull		/* SYSCALL; HLT */
#define PROBE_LSTAR	0x12000ull		/* HLT */
#define PROBE_STACK	0x13000ull		/* the IRETQ frame below it */
#define PROBE_USTACK	0x14000ull
#define GDT_UDATA	0x00cff3000000ffffull	/* P, DPL 3, data read/write, D/B, G */
#define GDT_UCODE	0x00affb000000ffffull	/* P, DPL 3, code exec/read, L, G */
#define PROBE_STAR	(0x08ull << 32)		/* kernel CS 0x08, SS 0x10 */

static volatile sig_atomic_t probe_alarmed;

static void
probe_alarm(int sig)
{
	(void)sig;		/* to end a KVM_RUN that does not return */
	probe_alarmed = 1;
}

/* The probe's vCPU, set up and run.  A VR_SYSCALL_HOST_* answer. */
static int
probe_run(struct vr_vm *pvm, struct vr_vcpu *c, const struct kvm_cpuid2 *cpuid)
{
	static const uint32_t idx[] = { MSR_STAR, MSR_LSTAR, MSR_FMASK };
	uint64_t val[] = { PROBE_STAR, PROBE_LSTAR, 0 };
	uint64_t frame[5] = { PROBE_USER, PROBE_UCODE | 3, RFLAGS_FIXED,
	    PROBE_USTACK, PROBE_UDATA | 3 };
	struct vr_image img = { .entry = PROBE_KERNEL };
	struct kvm_sregs sr;
	struct kvm_regs r;
	struct sigaction sa, old;
	int i, rc, ret = VR_SYSCALL_HOST_UNKNOWN;

	if (ioctl(c->fd, KVM_SET_CPUID2, cpuid) < 0 || vr_boot_vcpu(pvm, c, &img) < 0 ||
	    vr_msrs(c->fd, true, idx, val, 3) < 0 ||
	    ioctl(c->fd, KVM_GET_SREGS, &sr) < 0 || ioctl(c->fd, KVM_GET_REGS, &r) < 0)
		return (ret);
	sr.gdt.limit = PROBE_UCODE + 8 - 1;
	sr.efer |= EFER_SCE;
	memcpy(pvm->ram + PROBE_STACK - sizeof(frame), frame, sizeof(frame));
	r.rsp = PROBE_STACK - sizeof(frame);
	if (ioctl(c->fd, KVM_SET_SREGS, &sr) < 0 || ioctl(c->fd, KVM_SET_REGS, &r) < 0)
		return (ret);

	memset(&sa, 0, sizeof(sa));
	sa.sa_handler = probe_alarm;		/* no SA_RESTART: KVM_RUN returns */
	sigemptyset(&sa.sa_mask);
	if (sigaction(SIGALRM, &sa, &old) < 0)
		return (ret);
	probe_alarmed = 0;
	alarm(2);
	for (i = 0; i < 4; i++) {
		/*
		 * Another signal (a time event's kick of this thread: libvpmu's
		 * timer may fire while the probe runs inside an exit) only
		 * interrupts the run: run again.
		 */
		do
			rc = ioctl(c->fd, KVM_RUN, 0);
		while (rc < 0 && errno == EINTR && !probe_alarmed);
		if (rc < 0)
			break;			/* the alarm, or a failure: unknown */
		if (c->run->exit_reason == KVM_EXIT_HLT || c->run->exit_reason == KVM_EXIT_SHUTDOWN)
			break;
	}
	alarm(0);
	(void)sigaction(SIGALRM, &old, NULL);
	if (i == 4 || ioctl(c->fd, KVM_GET_REGS, &r) < 0 || ioctl(c->fd, KVM_GET_SREGS, &sr) < 0)
		return (ret);
	/* HLT at LSTAR at CPL 0, RCX past the SYSCALL: the host did it all. */
	if (c->run->exit_reason == KVM_EXIT_HLT && r.rip == PROBE_LSTAR + 1 &&
	    sr.cs.dpl == 0 && r.rcx == PROBE_USER + 2)
		return (VR_SYSCALL_HOST_COMPLETES);
	/* At LSTAR still in user mode: its HLT faulted, and with no IDT, shut down. */
	if (c->run->exit_reason == KVM_EXIT_SHUTDOWN && (r.rip == PROBE_LSTAR ||
	    r.rip == PROBE_LSTAR + 1) && (sr.cs.selector & 3) == 3)
		return (VR_SYSCALL_HOST_CPL3);
	return (ret);
}

/* Run the probe VM.  A VR_SYSCALL_HOST_* answer; nothing is left behind. */
int
vr_syscall_probe(int kvm_fd)
{
	static const uint8_t kernel[] = { 0x48, 0xcf };		/* iretq */
	static const uint8_t user[] = { 0x0f, 0x05, 0xf4 };	/* syscall; hlt */
	struct kvm_userspace_memory_region region;
	struct kvm_cpuid2 *cpuid = NULL;
	struct vr_vm *pvm;
	struct vr_vcpu *c;
	unsigned max;
	long size;
	int ret = VR_SYSCALL_HOST_UNKNOWN;

	if ((pvm = calloc(1, sizeof(*pvm))) == NULL)
		return (ret);
	c = &pvm->vcpu[0];
	c->vm = pvm;
	c->fd = -1;
	pvm->nvcpus = 1;
	pvm->ram_size = PROBE_RAM;
	pvm->ram = mmap(NULL, PROBE_RAM, PROT_READ | PROT_WRITE,
	    MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
	if (pvm->ram == MAP_FAILED) {
		free(pvm);
		return (ret);
	}
	vr_boot_tables(pvm->ram);
	vr_put64(pvm->ram + PROBE_GDT + PROBE_UDATA, GDT_UDATA);
	vr_put64(pvm->ram + PROBE_GDT + PROBE_UCODE, GDT_UCODE);
	memcpy(pvm->ram + PROBE_KERNEL, kernel, sizeof(kernel));
	memcpy(pvm->ram + PROBE_USER, user, sizeof(user));
	pvm->ram[PROBE_LSTAR] = 0xf4;				/* hlt */

	memset(&region, 0, sizeof(region));
	region.memory_size = PROBE_RAM;
	region.userspace_addr = (uintptr_t)pvm->ram;
	if ((pvm->vm_fd = ioctl(kvm_fd, KVM_CREATE_VM, 0)) < 0)
		goto out;
	if (ioctl(pvm->vm_fd, KVM_SET_USER_MEMORY_REGION, &region) < 0 ||
	    (size = ioctl(kvm_fd, KVM_GET_VCPU_MMAP_SIZE, 0)) <= 0 ||
	    (c->fd = ioctl(pvm->vm_fd, KVM_CREATE_VCPU, 0)) < 0 ||
	    (cpuid = vr_supported_cpuid(kvm_fd, &max)) == NULL)
		goto out_vm;
	c->run = mmap(NULL, (size_t)size, PROT_READ | PROT_WRITE, MAP_SHARED, c->fd, 0);
	if (c->run == MAP_FAILED)
		goto out_vm;
	ret = probe_run(pvm, c, cpuid);
	munmap(c->run, (size_t)size);
out_vm:
	free(cpuid);
	if (c->fd >= 0)
		close(c->fd);
	close(pvm->vm_fd);
out:
	munmap(pvm->ram, PROBE_RAM);
	free(pvm);
	return (ret);
}

/* ---- the catch ----------------------------------------------------------------- */

/* Does this guest need the catch?  The probe runs once, under the VM's lock. */
static bool
catch_wanted(struct vr_vm *vm)
{
	bool want;

	if (vm->sys_mode == VR_SYSCALL_COMPLETE)
		return (true);
	if (vm->sys_mode != VR_SYSCALL_AUTO)
		return (false);
	pthread_mutex_lock(&vm->lock);
	if (vm->sys_host == VR_SYSCALL_HOST_UNPROBED)
		vm->sys_host = vr_syscall_probe(vm->kvm_fd);
	want = vm->sys_host == VR_SYSCALL_HOST_CPL3;
	pthread_mutex_unlock(&vm->lock);
	return (want);
}

/* n bytes at guest linear address la from RAM, page by page: 0, or -1. */
static int
guest_read(struct vr_vcpu *c, uint64_t la, void *buf, size_t n)
{
	uint8_t *p = buf;
	size_t k;

	for (; n != 0; la += k, p += k, n -= k) {
		k = 0x1000 - (la & 0xfff);
		k = k < n ? k : n;
		if (!vr_guest_copy(c, la, p, k, false))
			return (-1);
	}
	return (0);
}

/* The entry of the guest's #PF handler in its IDT (64-bit mode), or 0. */
static uint64_t
pf_entry(struct vr_vcpu *c, const struct kvm_sregs *sr)
{
	uint8_t g[16];
	unsigned type;

	if (!(sr->efer & EFER_LMA) || sr->idt.limit < PF_VECTOR * 16 + 15 ||
	    guest_read(c, sr->idt.base + PF_VECTOR * 16, g, sizeof(g)) < 0)
		return (0);
	type = g[5] & 0xf;
	if (!(g[5] & 0x80) || (type != 0xe && type != 0xf))
		return (0);		/* not present, not an interrupt or trap gate */
	return ((uint64_t)vr_get16(g) | (uint64_t)vr_get16(g + 6) << 16 |
	    (uint64_t)vr_get32(g + 8) << 32);
}

/*
 * KVM's guest debugging for the catch: the breakpoint on entry (none if
 * 0), or one single step instead (past the breakpoint).  0, or -1.
 */
static int
catch_debug(struct vr_vcpu *c, uint64_t entry, bool step)
{
	struct kvm_guest_debug dbg;
	int err;

	memset(&dbg, 0, sizeof(dbg));
	if (step)
		dbg.control = KVM_GUESTDBG_ENABLE | KVM_GUESTDBG_SINGLESTEP;
	else if (entry != 0) {
		dbg.control = KVM_GUESTDBG_ENABLE | KVM_GUESTDBG_USE_HW_BP;
		dbg.arch.debugreg[0] = entry;
		dbg.arch.debugreg[7] = DR7_FIXED1 | DR7_L0;	/* execution, one byte */
	}
	if ((err = vpmu_kvm_set_guest_debug(c->vm->k, c->index, &dbg)) != 0) {
		fprintf(stderr, "%s: vCPU %u: vpmu_kvm_set_guest_debug: %s\n", vr_progname,
		    c->index, vpmu_strerror(err));
		return (-1);
	}
	c->sys_stepping = step;
	return (0);
}

/* The breakpoint on the #PF entry the guest's IDT (in sr) names now.  0, or -1. */
static int
catch_place(struct vr_vcpu *c, const struct kvm_sregs *sr)
{
	uint64_t entry = pf_entry(c, sr);

	if (entry == c->sys_bp || c->sys_stepping)
		return (0);
	if (catch_debug(c, entry, false) < 0)
		return (-1);
	c->sys_bp = entry;
	return (0);
}

bool
vr_syscall_lstar(struct vr_vcpu *c)
{
	struct kvm_run *run = c->run;
	struct kvm_sregs sr;
	uint32_t idx = MSR_LSTAR;
	uint64_t val = run->msr.data;

	if (run->exit_reason != KVM_EXIT_X86_WRMSR || run->msr.index != MSR_LSTAR ||
	    c->vm->sys_mode == VR_SYSCALL_HOST)
		return (false);
	/* The guest's write, done for it: KVM refuses what the WRMSR would #GP on. */
	run->msr.error = vr_msrs(c->fd, true, &idx, &val, 1) < 0;
	if (!run->msr.error && catch_wanted(c->vm)) {
		c->sys_look = vr_mono_ns();
		if (ioctl(c->fd, KVM_GET_SREGS, &sr) < 0 || catch_place(c, &sr) < 0)
			run->msr.error = 1;
	}
	return (true);
}

/*
 * Between LSTAR writes the guest may change its #PF entry, or be a resumed
 * snapshot whose catch was never placed: a look now and then, once the
 * guest has SYSCALL on (EFER.SCE).
 */
void
vr_syscall_look(struct vr_vcpu *c)
{
	struct kvm_sregs sr;
	uint64_t now;

	if (c->vm->sys_mode == VR_SYSCALL_HOST || c->sys_stepping ||
	    (now = vr_mono_ns()) - c->sys_look < CATCH_LOOK_NS)
		return;
	c->sys_look = now;
	if (ioctl(c->fd, KVM_GET_SREGS, &sr) < 0 || (!(sr.efer & EFER_SCE) && c->sys_bp == 0))
		return;
	if (catch_wanted(c->vm))
		(void)catch_place(c, &sr);
}

/*
 * R11 of the completed SYSCALL: the RFLAGS the host saved there (its
 * arithmetic flags are the user's), with RF and VM clear, IOPL the one the
 * fault's frame shows, and IF set unless that IOPL is 3: below IOPL 3 user
 * mode cannot clear IF, so the SYSCALL was made with it set.  (Such a
 * host's frames may show IF and IOPL clear whatever the user had; SYSRET
 * with IF clear would leave user mode unable to take an interrupt.)
 */
static uint64_t
saved_rflags(uint64_t r11, uint64_t frame)
{
	uint64_t f = (r11 & ~(RFLAGS_RF | RFLAGS_VM | RFLAGS_IOPL)) | (frame & RFLAGS_IOPL);

	if ((frame & RFLAGS_IOPL) != RFLAGS_IOPL)
		f |= RFLAGS_IF;
	return (f | RFLAGS_FIXED);
}

/*
 * At the breakpoint: the SYSCALL the host left at CPL 3, completed; or
 * any other #PF sent on to the handler.  false: not the catch's exit.
 */
bool
vr_syscall_debug(struct vr_vcpu *c)
{
	static const uint32_t idx[] = { MSR_STAR, MSR_LSTAR, MSR_FMASK };
	struct kvm_run *run = c->run;
	struct kvm_regs r;
	struct kvm_sregs sr;
	uint64_t val[3] = { 0 }, f[6];	/* error code, RIP, CS, RFLAGS, RSP, SS */
	uint16_t sel;

	if (run->exit_reason != KVM_EXIT_DEBUG || c->sys_bp == 0)
		return (false);
	if (c->sys_stepping)		/* past the breakpoint: set it again */
		return ((run->debug.arch.dr6 & DR6_BS) && catch_debug(c, c->sys_bp, false) == 0);
	if (!(run->debug.arch.dr6 & DR6_B0) || run->debug.arch.pc != c->sys_bp)
		return (false);
	if (ioctl(c->fd, KVM_GET_REGS, &r) < 0 || ioctl(c->fd, KVM_GET_SREGS, &sr) < 0)
		return (false);
	if ((sr.efer & (EFER_SCE | EFER_LMA)) == (EFER_SCE | EFER_LMA) &&
	    vr_msrs(c->fd, false, idx, val, 3) == 0 &&
	    guest_read(c, r.rsp, f, sizeof(f)) == 0 &&
	    (f[2] & 3) == 3 && f[1] == val[1] && sr.cr2 == val[1] &&
	    (f[0] & (PF_USER | PF_RSVD)) == PF_USER) {
		sel = (uint16_t)(val[0] >> 32);
		r.r11 = saved_rflags(r.r11, f[3]);
		r.rflags = (r.r11 & ~val[2]) | RFLAGS_FIXED;
		r.rsp = f[4];
		r.rip = val[1];
		memset(&sr.cs, 0, sizeof(sr.cs));
		sr.cs.selector = sel & 0xfffc;
		sr.cs.limit = 0xffffffff;
		sr.cs.type = 0xb;		/* execute/read, accessed */
		sr.cs.present = sr.cs.s = sr.cs.l = sr.cs.g = 1;
		sr.ss = sr.cs;
		sr.ss.selector = (uint16_t)(sel + 8);
		sr.ss.type = 0x3;		/* read/write, accessed */
		sr.ss.l = 0;
		sr.ss.db = 1;
		if (ioctl(c->fd, KVM_SET_SREGS, &sr) < 0 || ioctl(c->fd, KVM_SET_REGS, &r) < 0)
			return (false);
		(void)vpmu_kvm_vcpu_resync(c->vm->k, c->index);
		__atomic_add_fetch(&c->vm->sys_completed, 1, __ATOMIC_RELAXED);
		return (true);
	}
	/*
	 * On to the handler: one step past the breakpoint (RFLAGS.RF would
	 * do, but not every host's instruction emulator honours it).
	 */
	return (catch_debug(c, 0, true) == 0);
}

/* The MSR filter that sends the guest's LSTAR writes here. */
int
vr_syscall_filter(struct vr_vm *vm)
{
	static uint8_t deny[1];			/* bit 0 clear: LSTAR's writes exit */
	struct kvm_msr_filter f;
	int err;

	if (vm->sys_mode == VR_SYSCALL_HOST)
		return (0);
	memset(&f, 0, sizeof(f));
	f.flags = KVM_MSR_FILTER_DEFAULT_ALLOW;
	f.ranges[0].flags = KVM_MSR_FILTER_WRITE;
	f.ranges[0].base = MSR_LSTAR;
	f.ranges[0].nmsrs = 1;
	f.ranges[0].bitmap = deny;
	if ((err = vpmu_kvm_set_msr_filter(vm->k, &f)) != 0) {
		fprintf(stderr, "%s: vpmu_kvm_set_msr_filter: %s\n", vr_progname,
		    vpmu_strerror(err));
		return (-1);
	}
	return (0);
}
