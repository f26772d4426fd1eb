/*
 * boot.c -- the CPU state at the guest's entry: Multiboot's (below), or
 * what boot protocol v1 promises at e_entry: 64-bit long
 * mode at CPL 0, the first 1 GiB identity-mapped by 2 MiB pages (and each
 * further GiB RAM reaches into, up to VR_MEM_MAX_MIB: the stacks at the top
 * of RAM are mapped), a GDT
 * with 0x08 = 64-bit code and 0x10 = data, RSP = top of RAM - index x
 * 64 KiB, RFLAGS = 0x2, RDI = index.  Beyond the protocol (vpmu-run(1)
 * says so): SSE is enabled (CR4.OSFXSR|OSXMMEXCPT, CR0.MP, EM clear), the
 * pages are also user-accessible, and CPUID tells the vCPU count.
 *
 * Guest-physical layout below 1 MiB (the image starts at 1 MiB):
 *   0x1000  GDT: null, 0x08 code64, 0x10 data, 0x18 TSS (16 bytes)
 *   0x1080  TSS (104 bytes; no I/O bitmap; not used at CPL 0)
 *   0x2000  PML4   entry 0 -> PDPT
 *   0x3000  PDPT   entry 0 -> PD, entries 1 and 2 -> the PDs below, when
 *                  RAM reaches into their GiB
 *   0x4000  PD     512 x 2 MiB pages: 0 .. 1 GiB
 *   0x5000  PD     1 .. 2 GiB, with more than 1 GiB of RAM
 *   0x6000  PD     2 .. 3 GiB, with more than 2 GiB of RAM
 */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <unistd.h>
#include <linux/kvm.h>

#include "vpmu-run.h"

#define GDT_ADDR	0x1000ull
#define TSS_ADDR	0x1080ull
#define TSS_LIMIT	0x67u
#define PML4_ADDR	0x2000ull
#define PDPT_ADDR	0x3000ull
#define PD_ADDR		0x4000ull

#define SEL_CODE	0x08
#define SEL_DATA	0x10
#define SEL_TSS		0x18

/* Page-table entry bits (SDM Vol. 3A, 4.5). */
#define PTE_P		(1ull << 0)
#define PTE_RW		(1ull << 1)
#define PTE_US		(1ull << 2)
#define PTE_PS		(1ull << 7)	/* in a PD entry: a 2 MiB page */

#define CR0_PE		(1ull << 0)
#define CR0_MP		(1ull << 1)
#define CR0_ET		(1ull << 4)
#define CR0_NE		(1ull << 5)
#define CR0_PG		(1ull << 31)
#define CR4_PAE		(1ull << 5)
#define CR4_OSFXSR	(1ull << 9)
#define CR4_OSXMMEXCPT	(1ull << 10)
#define EFER_LME	(1ull << 8)
#define EFER_LMA	(1ull << 10)

/* Descriptors as the GDT holds them; the kvm_segment values below match. */
#define GDT_CODE64	0x00af9b000000ffffull	/* P, DPL 0, code exec/read accessed, L, G */
#define GDT_DATA	0x00cf93000000ffffull	/* P, DPL 0, data read/write accessed, D/B, G */

#define MSR_APIC_BASE	0x1B		/* IA32_APIC_BASE */

#define CPUID_1_EDX_HTT	(1u << 28)
#define CPUID_1_EDX_APIC	(1u << 9)
#define CPUID_1_ECX_X2APIC (1u << 21)
/*
 * What a Linux guest is not offered (vr_boot_cpuid): instructions a
 * kernel uses at CPL 0 once CPUID offers them that an instruction
 * emulator may not run (KVM's emulates all CPL 0 code on some nested
 * hosts): CMPXCHG16B (SLUB), POPCNT (hweight), PCID, MOVBE, XSAVE and
 * what depends on it (OSXSAVE, AVX, F16C), RDRAND; the SIMD extensions a
 * kernel's crypto uses inside kernel_fpu_begin() (SSSE3: BLAKE2s for the
 * random pool at boot; SSE4.1, SSE4.2, AES-NI, PCLMULQDQ, FMA), so that it
 * keeps to its generic C code; leaf 7 EBX: FSGSBASE, INVPCID, RDSEED.
 * vr_linux_cmdline() (linux.c) turns the same features off by name on the
 * kernel's command line, for hosts that answer CPUID otherwise.
 */
#define CPUID_1_ECX_LINUX_HIDE	((1u << 1) | (1u << 9) | (1u << 12) | (1u << 13) | \
				 (1u << 17) | (1u << 19) | (1u << 20) | (1u << 22) | \
				 (1u << 23) | (1u << 25) | (1u << 26) | (1u << 27) | \
				 (1u << 28) | (1u << 29) | (1u << 30))
#define CPUID_7_EBX_LINUX_HIDE	((1u << 0) | (1u << 10) | (1u << 18))

/* Local APIC (SDM Vol. 3A, 11.4.4 and 11.5.1): offsets in the register page. */
#define APIC_SPIV	0xF0
#define APIC_LVTPC	0x340
#define LVT_MASKED	(1u << 16)
#define LVTPC_BOOT	0x400u		/* NMI delivery mode, unmasked */
#define APIC_LDR	0x0D0

static void
put64(uint8_t *ram, uint64_t gpa, uint64_t v)
{
	memcpy(ram + gpa, &v, sizeof(v));
}

/* The tables every vCPU shares, written once into guest RAM. */
void
vr_boot_tables(uint8_t *ram)
{
	uint64_t i, tss_lo;

	put64(ram, GDT_ADDR + 0x00, 0);
	put64(ram, GDT_ADDR + SEL_CODE, GDT_CODE64);
	put64(ram, GDT_ADDR + SEL_DATA, GDT_DATA);
	/* 64-bit TSS descriptor, type 0xb (busy: TR is loaded with it). */
	tss_lo = TSS_LIMIT | (TSS_ADDR & 0xffffff) << 16 | 0xbull << 40 |
	    1ull << 47 | ((TSS_ADDR >> 24) & 0xff) << 56;
	put64(ram, GDT_ADDR + SEL_TSS, tss_lo);
	put64(ram, GDT_ADDR + SEL_TSS + 8, TSS_ADDR >> 32);
	memset(ram + TSS_ADDR, 0, TSS_LIMIT + 1);
	ram[TSS_ADDR + 0x66] = TSS_LIMIT + 1;	/* I/O map base past the limit: none */

	put64(ram, PML4_ADDR, PDPT_ADDR | PTE_P | PTE_RW | PTE_US);
	put64(ram, PDPT_ADDR, PD_ADDR | PTE_P | PTE_RW | PTE_US);
	for (i = 0; i < 512; i++)
		put64(ram, PD_ADDR + i * 8,
		    (i << 21) | PTE_P | PTE_RW | PTE_US | PTE_PS);
}

/*
 * The identity map of the GiBs above the first that RAM reaches into, as
 * the first's (vr_boot_tables): the top of RAM, each vCPU's stack, is
 * mapped.  With 1 GiB of RAM or less, nothing: the tables stay as they
 * were.
 */
static void
boot_map_ram(uint8_t *ram, uint64_t ram_size)
{
	uint64_t g, i, pd;

	for (g = 1; g * VR_GIB < ram_size && g * VR_GIB < (uint64_t)VR_MEM_MAX_MIB << 20; g++) {
		pd = PD_ADDR + g * 0x1000;
		put64(ram, PDPT_ADDR + g * 8, pd | PTE_P | PTE_RW | PTE_US);
		for (i = 0; i < 512; i++)
			put64(ram, pd + i * 8,
			    (g * VR_GIB + (i << 21)) | PTE_P | PTE_RW | PTE_US | PTE_PS);
	}
}

/*
 * Topology for this vCPU in the CPUID table it will get: the vCPU index as
 * the initial APIC ID (CPUID.1:EBX[31:24], x2APIC ID in 0xB/0x1F EDX, AMD's
 * extended APIC ID in 0x8000001E EAX) and the vCPU count in
 * CPUID.1:EBX[23:16] with HTT set, so a guest can find how many vCPUs to
 * wait for.  Without an in-kernel irqchip there is no local APIC behind
 * the vCPU: neither the APIC nor x2APIC is offered.  libvpmu patches its
 * PMU leaves after this.
 */
void
vr_boot_cpuid(struct vr_vm *vm, struct vr_vcpu *c, struct kvm_cpuid2 *cpuid)
{
	struct kvm_cpuid_entry2 *e;
	unsigned i;

	for (i = 0; i < cpuid->nent; i++) {
		e = &cpuid->entries[i];
		switch (e->function) {
		case 1:
			e->ebx = (e->ebx & 0xffff) | (vm->nvcpus & 0xff) << 16 |
			    (c->index & 0xff) << 24;
			e->edx |= CPUID_1_EDX_HTT;
			if (!vm->irqchip_kernel) {
				e->edx &= ~CPUID_1_EDX_APIC;
				e->ecx &= ~CPUID_1_ECX_X2APIC;
			}
			if (vm->bzimage)
				e->ecx &= ~CPUID_1_ECX_LINUX_HIDE;
			break;
		case 7:
			if (vm->bzimage && e->index == 0)
				e->ebx &= ~CPUID_7_EBX_LINUX_HIDE;
			break;
		case 0xb:
		case 0x1f:
			e->edx = c->index;
			break;
		case 0x8000001e:
			e->eax = c->index;
			break;
		}
	}
}

static void
segment(struct kvm_segment *s, uint16_t sel, uint8_t type, bool code)
{
	memset(s, 0, sizeof(*s));
	s->base = 0;
	s->limit = 0xffffffff;
	s->selector = sel;
	s->type = type;
	s->present = 1;
	s->dpl = 0;
	s->s = 1;
	s->g = 1;
	s->l = code;		/* 64-bit code */
	s->db = !code;		/* L and D/B are never both set */
}

/* KVM ioctl req on vCPU c: 0, or -1 after a message naming the vCPU and what. */
static int
vcpu_ioctl(struct vr_vcpu *c, unsigned long req, void *arg, const char *what)
{
	if (ioctl(c->fd, req, arg) >= 0)
		return (0);
	fprintf(stderr, "%s: vCPU %u: %s: %s\n", vr_progname, c->index, what, strerror(errno));
	return (-1);
}

/*
 * Multiboot's state at the entry, on vCPU 0 only (the others stay in KVM's
 * wait for INIT and SIPI): 32-bit protected mode, paging off, flat 4 GiB
 * code (0x08) and data (0x10) segments, CR0 = PE|ET, EFER 0, EFLAGS 0x2,
 * EAX the boot magic, EBX the information structure, and no GDT or IDT
 * the guest may rely on.  ESP is 0: the guest sets its own stack.
 */
static int
multiboot_vcpu(struct vr_vcpu *c, const struct vr_image *img)
{
	struct kvm_sregs sr;
	struct kvm_regs r;

	if (vcpu_ioctl(c, KVM_GET_SREGS, &sr, "KVM_GET_SREGS") < 0)
		return (-1);
	segment(&sr.cs, SEL_CODE, 0xb, false);
	segment(&sr.ds, SEL_DATA, 0x3, false);
	sr.es = sr.fs = sr.gs = sr.ss = sr.ds;
	memset(&sr.tr, 0, sizeof(sr.tr));
	sr.tr.limit = TSS_LIMIT;
	sr.tr.type = 0xb;		/* busy 32-bit TSS: VM entry wants one */
	sr.tr.present = 1;
	sr.gdt.base = sr.idt.base = 0;
	sr.gdt.limit = sr.idt.limit = 0;
	sr.cr0 = CR0_PE | CR0_ET;
	sr.cr3 = 0;
	sr.cr4 = 0;
	sr.efer = 0;
	if (vcpu_ioctl(c, KVM_SET_SREGS, &sr, "KVM_SET_SREGS (Multiboot)") < 0)
		return (-1);
	memset(&r, 0, sizeof(r));
	r.rip = img->entry;
	r.rax = VR_MB_BOOT_MAGIC;
	r.rbx = img->mb_info;
	r.rflags = 0x2;
	if (vcpu_ioctl(c, KVM_SET_REGS, &r, "KVM_SET_REGS") < 0)
		return (-1);
	return (0);
}

/* Registers at e_entry for vCPU c.  0, or -1 after a message. */
int
vr_boot_vcpu(struct vr_vm *vm, struct vr_vcpu *c, const struct vr_image *img)
{
	struct kvm_sregs sr;
	struct kvm_regs r;
	struct kvm_fpu fpu;

	if (img->multiboot)
		return (c->index == 0 ? multiboot_vcpu(c, img) : 0);
	if (img->bzimage && c->index != 0)
		return (0);		/* the kernel starts it: INIT, SIPI */
	boot_map_ram(vm->ram, vm->ram_size);
	if (vcpu_ioctl(c, KVM_GET_SREGS, &sr, "KVM_GET_SREGS") < 0)
		return (-1);
	segment(&sr.cs, SEL_CODE, 0xb, true);
	segment(&sr.ds, SEL_DATA, 0x3, false);
	sr.es = sr.fs = sr.gs = sr.ss = sr.ds;
	memset(&sr.tr, 0, sizeof(sr.tr));
	sr.tr.base = TSS_ADDR;
	sr.tr.limit = TSS_LIMIT;
	sr.tr.selector = SEL_TSS;
	sr.tr.type = 0xb;		/* busy 64-bit TSS */
	sr.tr.present = 1;
	sr.gdt.base = GDT_ADDR;
	sr.gdt.limit = SEL_TSS + 16 - 1;
	sr.idt.base = 0;		/* none: the guest loads its own */
	sr.idt.limit = 0;
	sr.cr3 = PML4_ADDR;
	sr.cr4 = CR4_PAE | CR4_OSFXSR | CR4_OSXMMEXCPT;
	sr.cr0 = CR0_PE | CR0_MP | CR0_ET | CR0_NE | CR0_PG;
	sr.efer = EFER_LME | EFER_LMA;
	if (vcpu_ioctl(c, KVM_SET_SREGS, &sr, "KVM_SET_SREGS (long mode)") < 0)
		return (-1);

	memset(&r, 0, sizeof(r));
	r.rip = img->entry;
	r.rsp = vm->ram_size - (uint64_t)c->index * VR_STACK_SIZE;
	r.rdi = c->index;
	r.rsi = img->linux_bp;		/* Linux's 64-bit entry: boot_params */
	r.rflags = 0x2;			/* bit 1 is always set; IF clear */
	if (vcpu_ioctl(c, KVM_SET_REGS, &r, "KVM_SET_REGS") < 0)
		return (-1);

	/* The x87 and SSE state FNINIT and reset leave. */
	memset(&fpu, 0, sizeof(fpu));
	fpu.fcw = 0x37f;
	fpu.mxcsr = 0x1f80;
	if (vcpu_ioctl(c, KVM_SET_FPU, &fpu, "KVM_SET_FPU") < 0)
		return (-1);
	return (0);
}

/* ---- set-up shared with the benchmarks ------------------------------------ */

int
vr_msrs(int fd, bool set, const uint32_t *idx, uint64_t *val, unsigned n)
{
	/* struct kvm_msrs ends in a flexible array: room for VR_MSRS_MAX, aligned */
	_Alignas(struct kvm_msrs) uint8_t buf[sizeof(struct kvm_msrs) +
	    VR_MSRS_MAX * sizeof(struct kvm_msr_entry)];
	struct kvm_msrs *m = (struct kvm_msrs *)buf;
	unsigned i;

	if (n == 0 || n > VR_MSRS_MAX)
		return (-1);
	memset(buf, 0, sizeof(buf));
	m->nmsrs = n;
	for (i = 0; i < n; i++) {
		m->entries[i].index = idx[i];
		m->entries[i].data = val[i];
	}
	if (ioctl(fd, set ? KVM_SET_MSRS : KVM_GET_MSRS, m) != (int)n)
		return (-1);
	for (i = 0; i < n; i++)
		val[i] = m->entries[i].data;
	return (0);
}

/*
 * /dev/kvm, read-write, speaking KVM API 12: its descriptor, or -1 with
 * err saying why.  A user who may not open it gets the usual remedy.
 */
int
vr_kvm_open(char *err, size_t errlen)
{
	long api;
	int fd, e;

	if ((fd = open("/dev/kvm", O_RDWR | O_CLOEXEC)) < 0) {
		e = errno;
		snprintf(err, errlen, "/dev/kvm: %s%s", strerror(e),
		    e == EACCES || e == EPERM ? " (read-write access is needed: "
		    "add the user to the group that owns /dev/kvm, usually kvm, "
		    "and log in again)" : "");
		return (-1);
	}
	if ((api = ioctl(fd, KVM_GET_API_VERSION, 0)) != KVM_API_VERSION) {
		if (api < 0)
			snprintf(err, errlen, "/dev/kvm: KVM_GET_API_VERSION: %s",
			    strerror(errno));
		else
			snprintf(err, errlen, "/dev/kvm: KVM API version %ld, want %d",
			    api, KVM_API_VERSION);
		close(fd);
		return (-1);
	}
	return (fd);
}

/* KVM_GET_SUPPORTED_CPUID into a table with room to spare for libvpmu. */
struct kvm_cpuid2 *
vr_supported_cpuid(int kvm_fd, unsigned *maxp)
{
	struct kvm_cpuid2 *cpuid;
	unsigned max = 64;

	for (;;) {
		/* libvpmu may add leaves: keep 8 entries free. */
		if ((cpuid = calloc(1, sizeof(*cpuid) +
		    (max + 8) * sizeof(cpuid->entries[0]))) == NULL)
			return (NULL);
		cpuid->nent = max;
		if (ioctl(kvm_fd, KVM_GET_SUPPORTED_CPUID, cpuid) == 0) {
			*maxp = max + 8;
			return (cpuid);
		}
		free(cpuid);
		if (errno != E2BIG || max >= 4096)
			return (NULL);
		max *= 2;
	}
}

/*
 * With the in-kernel irqchip: the LAPIC software-enabled (SPIV bit 8,
 * spurious vector 0xFF) and LVTPC set to NMI delivery, unmasked, so a
 * boot-protocol guest that never touches its APIC takes PMIs as NMIs.
 */
static int
boot_lapic(struct vr_vcpu *c)
{
	struct kvm_lapic_state la;
	struct kvm_mp_state mp = { .mp_state = KVM_MP_STATE_RUNNABLE };
	uint32_t spiv = 0x1FF, lvtpc = LVTPC_BOOT;

	if (vcpu_ioctl(c, KVM_GET_LAPIC, &la, "KVM_GET_LAPIC") < 0)
		return (-1);
	memcpy(la.regs + APIC_SPIV, &spiv, sizeof(spiv));
	memcpy(la.regs + APIC_LVTPC, &lvtpc, sizeof(lvtpc));
	if (vcpu_ioctl(c, KVM_SET_LAPIC, &la, "KVM_SET_LAPIC") < 0)
		return (-1);
	/* An AP with an in-kernel LAPIC waits for SIPI: every vCPU enters at once. */
	if (vcpu_ioctl(c, KVM_SET_MP_STATE, &mp, "KVM_SET_MP_STATE") < 0)
		return (-1);
	return (0);
}

/*
 * Without the in-kernel irqchip there is no LAPIC behind the vCPU:
 * IA32_APIC_BASE with EN clear, since KVM derives CPUID.1:EDX.APIC from
 * that bit whatever the table vr_boot_cpuid() gave it says.
 */
static int
no_apic(struct vr_vcpu *c)
{
	static const uint32_t idx = MSR_APIC_BASE;
	uint64_t off = 0;

	if (vr_msrs(c->fd, true, &idx, &off, 1) < 0) {
		fprintf(stderr, "%s: vCPU %u: KVM_SET_MSRS: IA32_APIC_BASE refused\n",
		    vr_progname, c->index);
		return (-1);
	}
	return (0);
}

/*
 * An Intel model masks LVTPC when it delivers a PMI (SDM), and the boot
 * protocol promises NMIs to guests that never unmask it.  So: if the vCPU's
 * APIC is still in xAPIC mode (IA32_APIC_BASE bit 10 clear) and LVTPC
 * holds exactly what boot_lapic() wrote plus the mask bit the delivery
 * set, write boot_lapic()'s value back.  A guest in x2APIC mode, or with
 * any other LVTPC, keeps what the SDM gives it.  Called once per PMI
 * delivered, never per exit: up to two ioctls.
 */
int
vr_boot_lvtpc_rearm(struct vr_vcpu *c)
{
	struct kvm_lapic_state la;
	uint32_t lvtpc, ldr;

	if (vcpu_ioctl(c, KVM_GET_LAPIC, &la, "KVM_GET_LAPIC") < 0)
		return (-1);
	/*
	 * x2APIC mode, where the LDR is derived from the APIC ID and its
	 * logical-ID bits 15:0 are never all zero (in xAPIC mode only bits
	 * 31:24 exist): the guest gets the SDM's behaviour.
	 */
	memcpy(&ldr, la.regs + APIC_LDR, sizeof(ldr));
	if ((ldr & 0x00FFFFFFu) != 0)
		return (0);
	memcpy(&lvtpc, la.regs + APIC_LVTPC, sizeof(lvtpc));
	if (lvtpc != (LVTPC_BOOT | LVT_MASKED))
		return (0);
	lvtpc = LVTPC_BOOT;
	memcpy(la.regs + APIC_LVTPC, &lvtpc, sizeof(lvtpc));
	if (vcpu_ioctl(c, KVM_SET_LAPIC, &la, "KVM_SET_LAPIC") < 0)
		return (-1);
	return (0);
}

/* One vCPU, up to its first KVM_RUN.  0, or -1 after a message. */
int
vr_vcpu_setup(struct vr_vm *vm, struct vr_vcpu *c, const struct kvm_cpuid2 *supported,
    unsigned max, const struct vr_image *img)
{
	struct kvm_cpuid2 *cpuid;
	size_t size = sizeof(*cpuid) + max * sizeof(cpuid->entries[0]);
	void *run;
	int err;

	if ((c->fd = ioctl(vm->vm_fd, KVM_CREATE_VCPU, (unsigned long)c->index)) < 0) {
		fprintf(stderr, "%s: KVM_CREATE_VCPU %u: %s\n", vr_progname, c->index,
		    strerror(errno));
		return (-1);
	}
	run = mmap(NULL, vm->run_size, PROT_READ | PROT_WRITE, MAP_SHARED, c->fd, 0);
	if (run == MAP_FAILED) {
		fprintf(stderr, "%s: vCPU %u: mmap kvm_run: %s\n", vr_progname, c->index,
		    strerror(errno));
		return (-1);
	}
	c->run = run;

	if ((cpuid = malloc(size)) == NULL) {
		fprintf(stderr, "%s: %s\n", vr_progname, strerror(ENOMEM));
		return (-1);
	}
	memcpy(cpuid, supported, sizeof(*cpuid) +
	    supported->nent * sizeof(cpuid->entries[0]));
	vr_boot_cpuid(vm, c, cpuid);
	if ((err = vpmu_kvm_cpuid_patch(vm->k, cpuid, max)) != 0) {
		fprintf(stderr, "%s: vCPU %u: vpmu_kvm_cpuid_patch: %s\n", vr_progname,
		    c->index, vpmu_strerror(err));
		free(cpuid);
		return (-1);
	}
	if (vcpu_ioctl(c, KVM_SET_CPUID2, cpuid, "KVM_SET_CPUID2") < 0) {
		free(cpuid);
		return (-1);
	}
	free(cpuid);
	/* A Multiboot guest's LAPIC is as at reset: it programs it itself. */
	if (vr_boot_vcpu(vm, c, img) < 0 ||
	    (vm->irqchip_kernel && !img->multiboot && !img->bzimage && boot_lapic(c) < 0) ||
	    (!vm->irqchip_kernel && no_apic(c) < 0))
		return (-1);
	if ((err = vpmu_kvm_vcpu_init(vm->k, c->index, c->fd, c->run)) != 0) {
		fprintf(stderr, "%s: vCPU %u: vpmu_kvm_vcpu_init: %s\n", vr_progname,
		    c->index, vpmu_strerror(err));
		return (-1);
	}
	return (0);
}

