/*
 * <vpmu-guest/runtime.h> -- the freestanding runtime of vpmu-run guests.
 *
 * A guest is a static ELF64 program that boots under the vpmu-run guest boot
 * protocol v1 (vpmu-run(1)): long mode, CPL 0, RDI = vCPU index, its own
 * 64 KiB stack, console on port 0x3f8, exit through port 0xf4.  This runtime
 * is what a test guest links with (cmake/VpmuGuest.cmake does it):
 *
 *   crt0.S     _start: every vCPU enters there; it calls main(index).
 *              When main returns on vCPU 0, its value ends the run
 *              (vg_exit); on any other vCPU the vCPU spins with PAUSE,
 *              as the protocol asks of a vCPU with nothing left to do,
 *              so only vCPU 0 (or a vg_exit() anywhere) ends the run.
 *   runtime.c  console, exit, an IDT per vCPU (exceptions print and exit
 *              VG_EXIT_TRAP unless caught), the #GP-safe MSR accessors,
 *              the NMI and interrupt hooks, the local APIC in x2APIC
 *              and xAPIC mode (an MMIO mapping), a barrier,
 *              memset/memcpy/memmove/memcmp.
 *   link.ld    linked at 1 MiB (0x100000), p_paddr == p_vaddr.
 *
 * Build flags (VpmuGuest.cmake): -ffreestanding -nostdlib -static -fno-pic
 * -no-pie -mno-red-zone -fno-stack-protector -mgeneral-regs-only -O2.
 * -mgeneral-regs-only matters: the exception and NMI entry saves the general
 * registers only, so handler code must not touch SSE state.  It matters on
 * this project's machines too: KVM there (kvm_pvm) runs guest code through
 * its instruction emulator, which has no SSE and no INT n in long mode
 * (either ends the run with a KVM internal error); use UD2 to raise an
 * exception on purpose.
 *
 * Per-vCPU state lives in a struct vg_cpu found through the GS base (set by
 * _start for each vCPU), so every function here may be called from any vCPU
 * at once.  The loader zeroes .bss; the runtime relies on it.
 */
#ifndef VPMU_GUEST_RUNTIME_H
#define VPMU_GUEST_RUNTIME_H

#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include <vpmu-guest/pv.h>

/* ---- the boot protocol's constants ---------------------------------------- */

#define VG_PORT_CONSOLE		0x3f8	/* each byte written goes to vpmu-run's stdout */
#define VG_PORT_EXIT		0xf4	/* a 32-bit write of V ends the run, status V & 0xff */
#define VG_MAX_CPUS		64	/* vpmu-run --vcpus at most */
#define VG_STACK_SIZE		0x10000	/* each vCPU owns the 64 KiB below its entry RSP */
#define VG_SEL_CODE		0x08	/* 64-bit code */
#define VG_SEL_DATA		0x10	/* data */

/* The exit status after an exception nobody caught (the runtime prints it). */
#define VG_EXIT_TRAP		0x7f

/* Exception vectors the safe accessors report. */
#define VG_DE			0
#define VG_NMI			2
#define VG_BP			3
#define VG_UD			6
#define VG_DF			8
#define VG_GP			13
#define VG_PF			14

/* ---- MSRs and CPU bits a guest commonly needs ------------------------------ */

#define VG_MSR_TSC		0x10
#define VG_MSR_EFER		0xc0000080
#define VG_MSR_GS_BASE		0xc0000101
#define VG_EFER_LME		(1u << 8)
#define VG_EFER_LMA		(1u << 10)
#define VG_CR0_PE		(1ul << 0)
#define VG_CR0_MP		(1ul << 1)
#define VG_CR0_EM		(1ul << 2)
#define VG_CR0_PG		(1ul << 31)
#define VG_CR4_PAE		(1ul << 5)
#define VG_CR4_OSFXSR		(1ul << 9)
#define VG_CR4_OSXMMEXCPT	(1ul << 10)
#define VG_RFLAGS_IF		(1ul << 9)

/* ---- the interrupted state an exception or NMI handler sees ---------------- */

/* Layout is crt0.S's push order; do not reorder. */
struct vg_frame {
	uint64_t r15, r14, r13, r12, r11, r10, r9, r8;
	uint64_t rbp, rdi, rsi, rdx, rcx, rbx, rax;
	uint64_t vector;
	uint64_t error;		/* 0 for vectors without an error code */
	uint64_t rip, cs, rflags, rsp, ss;	/* pushed by the CPU */
};

typedef void (*vg_nmi_fn)(unsigned cpu, struct vg_frame *f);
typedef void (*vg_irq_fn)(unsigned cpu, struct vg_frame *f);	/* f->vector: 32..255 */

/* ---- per-vCPU state (through %gs) ----------------------------------------- */

struct vg_cpu {
	struct vg_cpu	*self;		/* offset 0: vg_self() reads %gs:0 */
	uint32_t	 fault;		/* offset 8: vector + 1 of the last caught fault, 0 none */
	uint32_t	 index;		/* the vCPU index (RDI at entry) */
	uint64_t	 fault_error;	/* error code of the last caught fault */
	uint64_t	 entry_rsp;	/* RSP, RFLAGS at _start, before anything ran */
	uint64_t	 entry_rflags;
	volatile uint64_t nmis;		/* NMIs taken on this vCPU */
	vg_nmi_fn	 nmi_fn;	/* called for each NMI, after counting */
	uint32_t	 ncpus;		/* vg_ncpus(), read once */
	uint32_t	 sense;		/* barrier phase */
	uint32_t	 conslen;	/* console line buffer */
	char		 cons[120];
	/* the channel's caller on this vCPU: vpmu_pv_self() (pid 1, tid index+1, root) */
	struct vpmu_pv_ident pv_ident;
	volatile uint64_t irqs;		/* interrupts taken by irq_fn on this vCPU */
	vg_irq_fn	 irq_fn;	/* called for each interrupt, after counting */
	volatile uint64_t dbs;		/* #DB traps taken by db_fn on this vCPU */
	vg_nmi_fn	 db_fn;		/* called for each #DB, after counting */
};

static inline struct vg_cpu *
vg_self(void)
{
	struct vg_cpu *c;

	__asm__ volatile("movq %%gs:0, %0" : "=r"(c));
	return (c);
}

/* The vCPU index, 0 .. vg_ncpus()-1. */
static inline unsigned
vg_cpu_index(void)
{
	return (vg_self()->index);
}

/*
 * How many vCPUs the run has: vpmu-run puts it in CPUID.1:EBX[23:16] (with
 * HTT set) and the vCPU index in EBX[31:24], as hardware gives the logical
 * processor count and the initial APIC ID.  1 if HTT is clear.
 */
unsigned vg_ncpus(void);

/* ---- port I/O ------------------------------------------------------------- */

static inline void
vg_outb(uint16_t port, uint8_t v)
{
	__asm__ volatile("outb %0, %1" : : "a"(v), "Nd"(port));
}

static inline void
vg_outw(uint16_t port, uint16_t v)
{
	__asm__ volatile("outw %0, %1" : : "a"(v), "Nd"(port));
}

static inline void
vg_outl(uint16_t port, uint32_t v)
{
	__asm__ volatile("outl %0, %1" : : "a"(v), "Nd"(port));
}

static inline uint8_t
vg_inb(uint16_t port)
{
	uint8_t v;

	__asm__ volatile("inb %1, %0" : "=a"(v) : "Nd"(port));
	return (v);
}

static inline uint32_t
vg_inl(uint16_t port)
{
	uint32_t v;

	__asm__ volatile("inl %1, %0" : "=a"(v) : "Nd"(port));
	return (v);
}

/* ---- console and exit ------------------------------------------------------ */

/*
 * Console output is buffered per vCPU and written a line at a time with one
 * REP OUTSB (one exit per line, and lines of different vCPUs do not mix).
 * vg_flush() writes what is buffered; vg_exit() and exceptions flush.
 */
void vg_putc(int ch);
void vg_puts(const char *s);		/* no newline added */
void vg_flush(void);
/* %d %i %u %x %X %p %s %c %%, with l/ll/z, a width, '0', '-' and '#' flags. */
int  vg_printf(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
int  vg_vprintf(const char *fmt, va_list ap) __attribute__((format(printf, 1, 0)));
int  vg_snprintf(char *buf, size_t len, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));

/* End the run: vpmu-run exits with status code & 0xff.  Never returns. */
__attribute__((noreturn)) void vg_exit(uint32_t code);

/* ---- instructions ----------------------------------------------------------- */

static inline void
vg_pause(void)
{
	__asm__ volatile("pause" ::: "memory");
}

static inline void
vg_cpuid(uint32_t leaf, uint32_t subleaf, uint32_t r[4])
{
	__asm__ volatile("cpuid"
	    : "=a"(r[0]), "=b"(r[1]), "=c"(r[2]), "=d"(r[3])
	    : "a"(leaf), "c"(subleaf));
}

static inline uint64_t
vg_rdtsc(void)
{
	uint32_t lo, hi;

	__asm__ volatile("rdtsc" : "=a"(lo), "=d"(hi));
	return ((uint64_t)hi << 32 | lo);
}

/* Unsafe: a #GP here is an unexpected exception (message, VG_EXIT_TRAP). */
static inline uint64_t
vg_rdmsr(uint32_t msr)
{
	uint32_t lo, hi;

	__asm__ volatile("rdmsr" : "=a"(lo), "=d"(hi) : "c"(msr) : "memory");
	return ((uint64_t)hi << 32 | lo);
}

static inline void
vg_wrmsr(uint32_t msr, uint64_t v)
{
	__asm__ volatile("wrmsr" : : "c"(msr), "a"((uint32_t)v),
	    "d"((uint32_t)(v >> 32)) : "memory");
}

static inline uint64_t
vg_rdpmc(uint32_t idx)
{
	uint32_t lo, hi;

	__asm__ volatile("rdpmc" : "=a"(lo), "=d"(hi) : "c"(idx) : "memory");
	return ((uint64_t)hi << 32 | lo);
}

/*
 * Safe variants, as kvm-unit-tests' rdmsr_safe(): return 0 if the
 * instruction completed, else the vector of the exception it raised
 * (VG_GP for #GP; none of these can raise #DE, vector 0).  On a fault *val
 * is left 0 and vg_fault_error() is the error code.
 */
int vg_rdmsr_safe(uint32_t msr, uint64_t *val);
int vg_wrmsr_safe(uint32_t msr, uint64_t val);
int vg_rdpmc_safe(uint32_t idx, uint64_t *val);

static inline uint64_t
vg_fault_error(void)
{
	return (vg_self()->fault_error);
}

static inline uint64_t
vg_read_cr0(void)
{
	uint64_t v;

	__asm__ volatile("mov %%cr0, %0" : "=r"(v));
	return (v);
}

static inline uint64_t
vg_read_cr3(void)
{
	uint64_t v;

	__asm__ volatile("mov %%cr3, %0" : "=r"(v));
	return (v);
}

static inline uint64_t
vg_read_cr4(void)
{
	uint64_t v;

	__asm__ volatile("mov %%cr4, %0" : "=r"(v));
	return (v);
}

static inline uint64_t
vg_read_rflags(void)
{
	uint64_t v;

	__asm__ volatile("pushfq; popq %0" : "=r"(v));
	return (v);
}

#define VG_READ_SEG(seg)						\
	({ uint16_t _v; __asm__ volatile("mov %%" #seg ", %0" : "=r"(_v)); _v; })

/* ---- NMIs ---------------------------------------------------------------- */

/*
 * NMIs (vector 2; a PMI arrives as one) are counted per vCPU; fn, if set,
 * is then called on the interrupted code's stack (no IST stack) with NMIs
 * blocked until it returns.
 * Set for the calling vCPU only.
 */
static inline void
vg_set_nmi_handler(vg_nmi_fn fn)
{
	vg_self()->nmi_fn = fn;
}

static inline uint64_t
vg_nmi_count(void)
{
	return (vg_self()->nmis);
}

/*
 * Debug exceptions (#DB, vector 1: single-step traps with RFLAGS.TF, the
 * guest's own hardware breakpoints in DR0-DR3) go to fn, counted, instead
 * of ending the run; fn reads DR6 itself and must clear it (a fault-type
 * breakpoint sets f->rflags' RF, bit 16, to resume past it).  NULL: a #DB is
 * an unexpected exception again.  Set for the calling vCPU only.
 */
static inline void
vg_set_debug_handler(vg_nmi_fn fn)
{
	vg_self()->db_fn = fn;
}

static inline uint64_t
vg_debug_count(void)
{
	return (vg_self()->dbs);
}

/* ---- interrupts and the local APIC in x2APIC mode -------------------------- */

/*
 * Interrupts (vectors 32..255) go to the vCPU's hook, counted, with IF
 * clear until it returns; the hook writes the EOI (vg_x2apic_eoi() or
 * vg_xapic_eoi()).  The first call on a vCPU puts an interrupt gate for
 * each vector in its IDT; before that an interrupt is an unexpected #NP
 * (message, VG_EXIT_TRAP); with a NULL hook, an unexpected exception too.
 * Set for the calling vCPU only.
 */
void vg_set_irq_handler(vg_irq_fn fn);

static inline uint64_t
vg_irq_count(void)
{
	return (vg_self()->irqs);
}

static inline void
vg_sti(void)
{
	__asm__ volatile("sti" ::: "memory");
}

static inline void
vg_cli(void)
{
	__asm__ volatile("cli" ::: "memory");
}

/*
 * The local APIC through x2APIC MSRs (SDM Vol. 3A, 11.12), or in xAPIC
 * mode through its register page (below): the boot protocol's identity map
 * covers the first 1 GiB only, not the xAPIC page, which vg_xapic_enable()
 * maps.
 */
#define VG_MSR_APIC_BASE	0x1b
#define VG_APIC_BASE_EXTD	(1ull << 10)	/* x2APIC mode */
#define VG_APIC_BASE_EN		(1ull << 11)	/* APIC global enable */
#define VG_MSR_X2APIC_EOI	0x80b
#define VG_MSR_X2APIC_SPIV	0x80f
#define VG_MSR_X2APIC_LVTPC	0x834		/* LVT performance-counter entry */
#define VG_LVT_MASKED		(1u << 16)
#define VG_LVT_NMI		(4u << 8)	/* delivery mode NMI (vector ignored) */

/*
 * Put this vCPU's local APIC in x2APIC mode (IA32_APIC_BASE EN and EXTD)
 * and software-enable it (SPIV = 0x1FF: spurious vector 0xFF).  0, or -1
 * if CPUID.1:ECX.x2APIC[21] is clear or a write faults (no in-kernel
 * LAPIC: vpmu-run --irqchip user).
 */
int vg_x2apic_enable(void);

static inline void
vg_x2apic_eoi(void)
{
	vg_wrmsr(VG_MSR_X2APIC_EOI, 0);
}

/*
 * The local APIC in xAPIC mode (SDM Vol. 3A, 11.4): 32-bit registers in a
 * 4 KiB page at IA32_APIC_BASE's default address, each vCPU reaching its
 * own APIC there.  The runtime knows only that address (a guest that moves
 * the page uses vg_map_mmio() and its own accessors).  Offsets:
 */
#define VG_XAPIC_BASE		0xfee00000ull	/* the register page */
#define VG_XAPIC_ID		0x020		/* APIC ID in bits 31:24 */
#define VG_XAPIC_EOI		0x0b0
#define VG_XAPIC_SPIV		0x0f0
#define VG_XAPIC_ISR		0x100		/* ISR bits 32i..32i+31 at 0x100 + 0x10 * i */
#define VG_XAPIC_IRR		0x200		/* IRR, the same way */
#define VG_XAPIC_LVTPC		0x340		/* LVT performance-counter entry */
/* The x2APIC MSR of xAPIC register offset reg (SDM Vol. 3A, table 11-6). */
#define VG_MSR_X2APIC(reg)	(0x800u + ((reg) >> 4))

/*
 * Identity-map the 2 MiB page that holds guest-physical address pa (below
 * 4 GiB) in the page tables CR3 points to: present, writable, supervisor,
 * uncached (PCD and PWT), a 2 MiB page in a page directory of the
 * runtime's (.bss) where the PDPT entry was empty.  A mapping already
 * there that is the identity is kept as it is.  The tables themselves
 * must be identity mapped, as the boot protocol's are.  Returns (void *)pa,
 * or NULL if pa is at or above 4 GiB, PML4 entry 0 is not present, or that
 * part of the address space already maps something else.  Safe to call
 * on several vCPUs at once (they share the boot protocol's tables).
 */
volatile void *vg_map_mmio(uint64_t pa);

/*
 * Keep this vCPU's local APIC in xAPIC mode and make its register page
 * reachable: CPUID.1:EDX.APIC[9] must be set and IA32_APIC_BASE must not
 * be in x2APIC mode (leaving x2APIC mode needs a disabled APIC in between,
 * which resets it; the runtime does not do that); sets the global enable
 * bit (IA32_APIC_BASE EN), maps the page at VG_XAPIC_BASE (vg_map_mmio())
 * and software-enables the APIC (SPIV = 0x1FF: spurious vector 0xFF).
 * 0, or -1 if CPUID has no APIC, the APIC is in x2APIC mode, its base is
 * not VG_XAPIC_BASE, the page cannot be mapped or an MSR access faults.
 * Under vpmu-run --irqchip user there is no APIC, yet KVM sets
 * CPUID.1:EDX.APIC while IA32_APIC_BASE's enable bit is set, as it is at
 * entry: this then succeeds and the first access to the page ends the run
 * (an MMIO exit).  CPUID.1:ECX.x2APIC, offered with the in-kernel irqchip
 * only, tells the two apart.
 */
int vg_xapic_enable(void);

/* A register of this vCPU's APIC in xAPIC mode, after vg_xapic_enable(). */
static inline uint32_t
vg_xapic_read(uint32_t reg)
{
	return (*(volatile uint32_t *)(uintptr_t)(VG_XAPIC_BASE + reg));
}

static inline void
vg_xapic_write(uint32_t reg, uint32_t v)
{
	*(volatile uint32_t *)(uintptr_t)(VG_XAPIC_BASE + reg) = v;
}

static inline void
vg_xapic_eoi(void)
{
	vg_xapic_write(VG_XAPIC_EOI, 0);
}

/* ---- several vCPUs ------------------------------------------------------- */

/*
 * Wait until all vg_ncpus() vCPUs have called vg_barrier() (sense-reversing
 * spin barrier; every vCPU must call it the same number of times).
 */
void vg_barrier(void);

/* ---- what the compiler may call ------------------------------------------- */

void *memset(void *d, int c, size_t n);
void *memcpy(void *restrict d, const void *restrict s, size_t n);
void *memmove(void *d, const void *s, size_t n);
int   memcmp(const void *a, const void *b, size_t n);
size_t strlen(const char *s);

/* The guest's entry point, called on every vCPU with its index. */
int main(unsigned cpu);

#endif /* VPMU_GUEST_RUNTIME_H */
