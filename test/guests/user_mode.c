/*
 * user_mode.c -- user-mode (CPL 3) code while the exact source follows
 * the guest.  The guest loads a GDT of its own with a 64-bit user code and
 * a user data segment (DPL 3) and a TSS whose RSP0 is a kernel stack, takes
 * #GP and #DB with gates of its own, and IRETQs to CPL 3 to run
 *
 *	mov $n, %ecx; 1: dec %ecx; jnz 1b; hlt
 *
 * 2n + 1 instructions, then HLT, which faults at CPL 3 (#GP, not retired)
 * and brings the guest back to CPL 0.  It counts instructions with PMC0
 * at CPL > 0 only (USR) and PMC1 at CPL 0 only (OS), runs the user code
 * with n and 2n, and prints both counts, their differences, and how many
 * #DB reached the guest (a single step of the host's that the guest saw):
 *
 *	user_mode: usr n=N a 2n=B diff D, os diff E, #DB F, #GP G
 *
 * A USR difference of 2n means the user code was counted exactly.  The
 * guest itself exits 0 whatever it counted: exact_user_unseen.sh decides
 * what is right on this host from vpmu-run's report.  ITERS: n.
 * KERNEL_ONLY: the same counting around a CPL 0 loop of the same
 * instructions, no user mode at all (the CPL 0 control).  USER_OUT: the
 * user code starts with three instructions ending in an OUT to the
 * console (allowed at CPL 3 by the TSS's I/O bitmap: an exit at CPL 3),
 * then five ALU instructions (a block the exact source may plan from
 * there), then the loop: 2n + 9 instructions.  USER_RDPMC: the user code
 * starts with RDPMC of counter 2 (written 0x1234567 before), its EDX:EAX
 * stored for the kernel to print ("rdpmc 0x..."), with CR4.PCE set (1:
 * allowed, libvpmu answers the #GP KVM raises) or clear (2: the #GP is the
 * guest's, and its handler sees it at the RDPMC: "#GP at rdpmc 1").
 * USER_SYSCALL: EFER.SCE, IA32_STAR (kernel CS 0x08, SYSRET base 0x10),
 * IA32_LSTAR (a copy of um_sys_stub on SYS_PAGE, made supervisor-only) and
 * IA32_FMASK set; the user code ends in two SYSCALLs, each SYSRETed by the
 * stub (which notes CS, SS, RCX, R11 and RFLAGS at its entry), then a read
 * of SYS_PAGE, a #PF from CPL 3 whose handler goes back to the kernel
 * (user_syscall.sh).
 * USER_STATE: the user-mode state a kernel sets before it returns to
 * user mode, as Linux sets it: FS base (a null FS selector loaded, then
 * IA32_FS_BASE written at CPL 0), the TSS's I/O map base, and a user page
 * remapped with INVLPG.  User mode runs with IOPL 0 and IF set while the
 * x2APIC timer ticks every millisecond; the user code reads the page at
 * TLB_VA and %fs:-8, waits for two ticks taken in user mode, reads
 * %fs:-8 again, and does an OUT to the console.  Two trips: the first
 * with FS base at a word holding 0x5151, the I/O map base past the TSS's
 * limit (the OUT must #GP) and the page holding 0x1111; the second with
 * 0x5252, the map of ports 0..0x3ff (0x3f8 allowed: the OUT must pass)
 * and the page remapped to one holding 0x2222:
 *
 *	user_state: trip 1 fs 0x5151 0x5151 out-#GP 1, trip 2 fs 0x5252 0x5252 out-#GP 0,
 *	    page 0x1111 0x2222, cow 0x77 0x77 in 2, ticks T U
 *
 * (cow: what user mode read back after its copy-on-write fault on each
 * trip, and the faults um_cow_stub answered.)
 *
 * (T, U: the ticks taken at CPL 3 on each trip, at least 2 each.)
 * USER_STATE=2: the same, with a SYSCALL between the two reads whose
 * handler (um_state_sys, on SYS_PAGE) writes IA32_FS_BASE to a word
 * holding 0x5353 and SYSRETs, as arch_prctl(ARCH_SET_FS) does: both
 * second reads give 0x5353.
 */
#include <vpmu-guest/runtime.h>

#ifndef ITERS
#define ITERS	1000
#endif
#ifndef KERNEL_ONLY
#define KERNEL_ONLY	0
#endif
#ifndef USER_OUT
#define USER_OUT	0
#endif
#ifndef USER_RDPMC
#define USER_RDPMC	0
#endif
#ifndef USER_SYSCALL
#define USER_SYSCALL	0
#endif
#ifndef USER_STATE
#define USER_STATE	0
#endif
/* User mode's RFLAGS: IOPL 3, IF clear; for SYSCALL as a Linux process has them, IF set. */
#if USER_SYSCALL || USER_STATE
#define USER_RFLAGS	0x202
#else
#define USER_RFLAGS	0x3002
#endif
#define STR2(x)	#x
#define STR(x)	STR2(x)

#define EVTSEL0		0x186u
#define PMC0		0xC1u
#define EVTSEL_EN	(1u << 22)
#define EVTSEL_OS	(1u << 17)
#define EVTSEL_USR	(1u << 16)
#define INSTRUCTIONS	0x00C0u		/* INST_RETIRED.ANY_P */

#define SEL_KCODE	0x08
#define SEL_KDATA	0x10
#define SEL_UDATA	0x18
#define SEL_UCODE	0x20
#define SEL_TSS		0x28

/* GDT: the boot protocol's two kernel segments, user data and code, a TSS. */
static uint64_t gdt[7] __attribute__((aligned(16))) = {
	0,
	0x00af9b000000ffffull,		/* 0x08: P, DPL 0, code, L, G */
	0x00cf93000000ffffull,		/* 0x10: P, DPL 0, data, D/B, G */
	0x00cff3000000ffffull,		/* 0x18: P, DPL 3, data, D/B, G */
	0x00affb000000ffffull,		/* 0x20: P, DPL 3, code, L, G */
	0, 0,				/* 0x28: the TSS, filled at run time */
};
/* The TSS, then an I/O bitmap of ports 0..0x3ff (port 0x3f8 allowed) and its end byte. */
#define IOMAP	104
static uint8_t tss[IOMAP + 0x400 / 8 + 1] __attribute__((aligned(16)));
static uint8_t kstack[8192] __attribute__((aligned(16)));	/* RSP0 */
uint8_t um_ustack[4096] __attribute__((aligned(16)));
static uint8_t idt[256 * 16] __attribute__((aligned(16)));

/* Set by the stubs below (CPL 0); um_rd by the user code's RDPMC. */
volatile uint64_t um_gp, um_db, um_gp_rip, um_saved_rsp, um_rd;
volatile uint64_t um_sys, um_sys_cs, um_sys_ss, um_sys_rcx1, um_sys_rcx2, um_sys_r11,
    um_sys_rflags;
volatile uint64_t um_pf, um_pf_cr2, um_pf_err, um_pf_rip, um_pf_cs;
/* USER_STATE: the words FS base points past, what user mode read there, its ticks. */
uint64_t um_tls[6] = {0x5151, 0, 0x5252, 0, 0x5353, 0};
volatile uint64_t um_fs1, um_fs2, um_uticks, um_tlb;
/*
 * And a 4 KiB page at TLB_VA that the kernel maps to um_pg[0] (holding
 * 0x1111) for the first trip and to um_pg[1] (0x2222) for the second,
 * with INVLPG and no CR3 write, as a kernel without PTI and PCID does.
 */
#define TLB_VA		0x800000	/* 2 MiB page 4 of the boot protocol's map */
uint64_t um_pt[512] __attribute__((aligned(4096)));
uint64_t um_pg[2][512] __attribute__((aligned(4096))) = { { 0x1111 }, { 0x2222 } };
/*
 * And copy-on-write as a kernel does it: the page after TLB_VA maps a page
 * of zeros read-only; user mode reads it, writes 0x77 to it (a #PF the
 * handler um_cow_stub answers by mapping a fresh writable page with
 * INVLPG, then IRETQ to the write again), and reads it back into um_cow.
 */
#define COW_VA		(TLB_VA + 0x1000)
uint64_t um_zero[512] __attribute__((aligned(4096)));
uint64_t um_cowpg[512] __attribute__((aligned(4096)));
volatile uint64_t um_cow, um_cows, um_cow_pte;

/*
 * um_run_user(n): IRETQ to um_user at CPL 3, n in RDI; back at um_back
 * when the #GP stub jumps there.  Callee-saved registers kept.
 * um_gp_stub: #GP, from the user code's HLT: count it, drop the frame
 * (the stub runs on RSP0), resume the kernel.  um_db_stub: a #DB the
 * guest did not ask for (the host's step): count it, clear TF, return.
 */
extern void um_run_user(uint64_t n);
extern char um_user[], um_user_hlt[], um_user_rdpmc[], um_gp_stub[], um_db_stub[];
extern char um_sys_stub[], um_sys_end[], um_user_sys1[], um_user_sys2[], um_user_pf[];
extern char um_pf_stub[], um_cow_stub[], um_user_out[], um_state_sys[], um_state_sys_end[];
#define SYS_PAGE	0x600000	/* 2 MiB page 3 of the boot protocol's map */
#define SFMASK		0x47700ul	/* IA32_FMASK: TF IF DF IOPL AC cleared */
#define RFLAGS_SAVED	0x3fd7ul	/* CF PF AF ZF SF OF, bit 1, IF, IOPL */
__asm__(
    ".text\n"
    ".globl um_run_user\n"
    "um_run_user:\n\t"
    "push %rbx\n\tpush %rbp\n\tpush %r12\n\tpush %r13\n\tpush %r14\n\tpush %r15\n\t"
    "mov %rsp, um_saved_rsp(%rip)\n\t"
    "pushq $0x1b\n\t"				/* SS: user data, RPL 3 */
    "lea um_ustack+4096(%rip), %rax\n\tpush %rax\n\t"
    "pushq $" STR(USER_RFLAGS) "\n\t"
    "pushq $0x23\n\t"				/* CS: user code, RPL 3 */
    "lea um_user(%rip), %rax\n\tpush %rax\n\t"
    "iretq\n"
    "um_back:\n\t"
    "mov um_saved_rsp(%rip), %rsp\n\t"
    "pop %r15\n\tpop %r14\n\tpop %r13\n\tpop %r12\n\tpop %rbp\n\tpop %rbx\n\t"
    "ret\n"
    ".globl um_user, um_user_hlt, um_user_rdpmc\n"
    "um_user:\n\t"
    ".if " STR(USER_RDPMC) "\n\t"
    "mov $2, %ecx\n"
    "um_user_rdpmc:\n\t"
    "rdpmc\n\tmov %eax, um_rd(%rip)\n\tmov %edx, um_rd+4(%rip)\n\t"
    ".endif\n\t"
    ".if " STR(USER_OUT) "\n\t"
    "mov $0x3f8, %dx\n\tmov $0x75, %al\n\tout %al, (%dx)\n\t"	/* 'u' on the console */
    "add %eax, %edx\n\txor %edx, %eax\n\tadd $3, %edx\n\tsub %eax, %edx\n\tinc %eax\n\t"
    ".endif\n\t"
    ".if " STR(USER_STATE) "\n\t"
    "mov " STR(TLB_VA) ", %rax\n\tmov %rax, um_tlb(%rip)\n\t"
    "mov " STR(COW_VA) ", %rax\n\t"		/* a read: the zero page, read-only */
    "movq $0x77, " STR(COW_VA) "\n\t"		/* a write: #PF, the kernel's copy */
    "mov " STR(COW_VA) ", %rax\n\tmov %rax, um_cow(%rip)\n\t"
    "mov $-8, %rax\n\tmov %fs:(%rax), %rax\n\tmov %rax, um_fs1(%rip)\n\t"
    ".if " STR(USER_STATE) " == 2\n\t"
    "syscall\n\t"
    ".endif\n\t"
    "mov $200000000, %ecx\n"
    "3:\n\t"
    "cmpq $2, um_uticks(%rip)\n\tjae 4f\n\tdec %ecx\n\tjnz 3b\n"
    "4:\n\t"
    "mov $-8, %rax\n\tmov %fs:(%rax), %rax\n\tmov %rax, um_fs2(%rip)\n\t"
    "mov $0x3f8, %dx\n\tmov $0x73, %al\n"	/* 's' on the console */
    ".globl um_user_out\n"
    "um_user_out:\n\t"
    "out %al, (%dx)\n\t"
    ".endif\n\t"
    "mov %edi, %ecx\n"
    "1:\n\t"
    "dec %ecx\n\tjnz 1b\n"
    "um_user_hlt:\n\t"
    ".if " STR(USER_SYSCALL) "\n\t"
    "syscall\n"
    ".globl um_user_sys1\n"
    "um_user_sys1:\n\t"
    "syscall\n"
    ".globl um_user_sys2\n"
    "um_user_sys2:\n\t"
    ".globl um_user_pf\n"
    "um_user_pf:\n\t"
    "movb " STR(SYS_PAGE) ", %al\n\t"		/* #PF: a supervisor page */
    ".endif\n\t"
    "hlt\n"
    /*
     * SYSCALL's target, copied to SYS_PAGE (supervisor-only): absolute
     * addresses only.  Back to the user code with SYSRET.
     */
    ".globl um_sys_stub, um_sys_end\n"
    "um_sys_stub:\n\t"
    "mov %cs, %eax\n\tmov %eax, um_sys_cs\n\t"
    "mov %ss, %eax\n\tmov %eax, um_sys_ss\n\t"
    "pushfq\n\tpopq um_sys_rflags\n\t"
    "mov %r11, um_sys_r11\n\t"
    "incq um_sys\n\t"
    "testq $1, um_sys\n\t"
    "jz 2f\n\t"
    "mov %rcx, um_sys_rcx1\n\t"
    "sysretq\n"
    "2:\n\t"
    "mov %rcx, um_sys_rcx2\n\t"
    "sysretq\n"
    "um_sys_end:\n"
    /* USER_STATE=2's SYSCALL target, copied to SYS_PAGE: FS base to &um_tls[5]. */
    ".globl um_state_sys, um_state_sys_end\n"
    "um_state_sys:\n\t"
    "mov %rcx, %r10\n\tmov $0xc0000100, %ecx\n\t"
    "mov $um_tls+40, %eax\n\txor %edx, %edx\n\twrmsr\n\t"
    "mov %r10, %rcx\n\tsysretq\n"
    "um_state_sys_end:\n"
    ".globl um_cow_stub\n"
    "um_cow_stub:\n\t"
    "push %rax\n\tmov %cr2, %rax\n\tand $~0xfff, %rax\n\t"
    "cmp $" STR(COW_VA) ", %rax\n\tjne 5f\n\t"
    "mov um_cow_pte(%rip), %rax\n\tmov %rax, um_pt+8(%rip)\n\t"
    "mov $" STR(COW_VA) ", %rax\n\tinvlpg (%rax)\n\t"
    "incq um_cows(%rip)\n\tpop %rax\n\tadd $8, %rsp\n\tiretq\n"
    "5:\n\t"
    "pop %rax\n\tjmp um_pf_stub\n"
    ".globl um_pf_stub\n"
    "um_pf_stub:\n\t"
    "incq um_pf(%rip)\n\t"
    "mov %cr2, %rax\n\tmov %rax, um_pf_cr2(%rip)\n\t"
    "mov (%rsp), %rax\n\tmov %rax, um_pf_err(%rip)\n\t"
    "mov 8(%rsp), %rax\n\tmov %rax, um_pf_rip(%rip)\n\t"
    "mov 16(%rsp), %rax\n\tmov %rax, um_pf_cs(%rip)\n\t"
    "mov $0x10, %eax\n\tmov %eax, %ds\n\tmov %eax, %es\n\tmov %eax, %ss\n\t"
    "jmp um_back\n"
    ".globl um_gp_stub\n"
    "um_gp_stub:\n\t"
    "incq um_gp(%rip)\n\t"
    "mov 8(%rsp), %rax\n\tmov %rax, um_gp_rip(%rip)\n\t"	/* above the error code */
    "mov $0x10, %eax\n\tmov %eax, %ds\n\tmov %eax, %es\n\tmov %eax, %ss\n\t"
    "jmp um_back\n"
    ".globl um_db_stub\n"
    "um_db_stub:\n\t"
    "incq um_db(%rip)\n\t"
    "andq $~0x100, 16(%rsp)\n\t"		/* RFLAGS.TF */
    "iretq\n");

static void
gate(unsigned vec, void *fn)
{
	uint64_t a = (uint64_t)(uintptr_t)fn;
	uint8_t *g = idt + 16 * vec;

	memset(g, 0, 16);
	g[0] = (uint8_t)a;
	g[1] = (uint8_t)(a >> 8);
	g[2] = SEL_KCODE;
	g[5] = 0x8e;			/* P, DPL 0, 64-bit interrupt gate */
	g[6] = (uint8_t)(a >> 16);
	g[7] = (uint8_t)(a >> 24);
	memcpy(g + 8, (uint8_t *)&a + 4, 4);
}

/* The GDT, the TSS (RSP0 = kstack's top) and an IDT: the runtime's, #GP and #DB ours. */
static void
setup(void)
{
	struct {
		uint16_t limit;
		uint64_t base;
	} __attribute__((packed)) dt;
	uint64_t t = (uint64_t)(uintptr_t)tss, rsp0 = (uint64_t)(uintptr_t)(kstack + sizeof(kstack));

	memcpy(tss + 4, &rsp0, 8);
	tss[0x66] = IOMAP;
	memset(tss + IOMAP, 0xff, sizeof(tss) - IOMAP);
	tss[IOMAP + 0x3f8 / 8] &= (uint8_t)~1u;	/* port 0x3f8 at CPL 3 */
	gdt[5] = (sizeof(tss) - 1) | (t & 0xffffff) << 16 | 0x89ull << 40 |
	    ((t >> 24) & 0xff) << 56;	/* P, 64-bit TSS (available) */
	gdt[6] = t >> 32;
	dt.limit = sizeof(gdt) - 1;
	dt.base = (uint64_t)(uintptr_t)gdt;
	__asm__ volatile("lgdt %0" : : "m"(dt) : "memory");
	__asm__ volatile("ltr %w0" : : "r"((uint16_t)SEL_TSS) : "memory");
	__asm__ volatile("sidt %0" : "=m"(dt) : : "memory");
	memcpy(idt, (void *)(uintptr_t)dt.base, sizeof(idt));
	gate(13, um_gp_stub);
	gate(1, um_db_stub);
	gate(14, USER_STATE ? (void *)um_cow_stub : (void *)um_pf_stub);
	dt.limit = sizeof(idt) - 1;
	dt.base = (uint64_t)(uintptr_t)idt;
	__asm__ volatile("lidt %0" : : "m"(dt) : "memory");
}

/* The boot protocol's page directory of the first GiB (2 MiB pages). */
static uint64_t *
boot_pd(void)
{
	uint64_t *pml4 = (uint64_t *)(uintptr_t)(vg_read_cr3() & ~0xfffull);
	uint64_t *pdpt = (uint64_t *)(uintptr_t)(pml4[0] & 0xffffffffff000ull);

	return ((uint64_t *)(uintptr_t)(pdpt[0] & 0xffffffffff000ull));
}

static void
start(void)
{
	vg_wrmsr(PMC0, 0);
	vg_wrmsr(PMC0 + 1, 0);
	vg_wrmsr(EVTSEL0 + 1, EVTSEL_EN | EVTSEL_OS | INSTRUCTIONS);
	vg_wrmsr(EVTSEL0, EVTSEL_EN | EVTSEL_USR | INSTRUCTIONS);
}

static void
stop(uint64_t *usr, uint64_t *os)
{
	vg_wrmsr(EVTSEL0, 0);
	vg_wrmsr(EVTSEL0 + 1, 0);
	*usr = vg_rdmsr(PMC0);
	*os = vg_rdmsr(PMC0 + 1);
}

/* The user code's loop at CPL 0: the same instructions, no HLT. */
static __attribute__((noinline)) void
kernel_loop(uint32_t n)
{
	__asm__ volatile("1:\n\tdec %0\n\tjnz 1b" : "+r"(n) : : "cc");
}

static __attribute__((noinline)) void
run(uint32_t n, uint64_t *usr, uint64_t *os)
{
	if (USER_RDPMC)
		vg_wrmsr(PMC0 + 2, 0x1234567);
	start();
	if (KERNEL_ONLY)
		kernel_loop(n);
	else
		um_run_user(n);
	stop(usr, os);
}

#if USER_STATE
#define MSR_FS_BASE		0xC0000100u
#define MSR_X2APIC_LVTT		0x832u
#define MSR_X2APIC_TMICT	0x838u
#define MSR_X2APIC_TDCR		0x83eu
#define LVTT_PERIODIC		(1u << 17)
#define TIMER_VECTOR		0x40u

/* The x2APIC timer's interrupt: count the ticks that came from CPL 3. */
static void
um_tick(unsigned cpu, struct vg_frame *f)
{
	(void)cpu;
	if ((f->cs & 3) == 3)
		um_uticks++;
	vg_x2apic_eoi();
}

/*
 * One trip to user mode with FS base at &um_tls[2 * k + 1] (loaded as
 * Linux loads it: a null selector, then the MSR) and the I/O map base
 * valid or past the TSS's limit; what user mode saw goes to fs[], gp, ticks.
 */
static void
um_state_trip(unsigned k, int iomap_valid, uint64_t fs[2], int *out_gp, uint64_t *ticks,
    uint64_t *tlb, uint64_t *cow)
{
	uint64_t u, o;

	__asm__ volatile("mov %0, %%fs" : : "r"(0) : "memory");
	vg_wrmsr(MSR_FS_BASE, (uint64_t)(uintptr_t)&um_tls[2 * k + 1]);
	um_pt[0] = (uint64_t)(uintptr_t)um_pg[k] | 7;	/* P, W, U */
	__asm__ volatile("invlpg (%0)" : : "r"(TLB_VA) : "memory");
	memset(um_cowpg, 0, sizeof(um_cowpg));
	um_cow_pte = (uint64_t)(uintptr_t)um_cowpg | 7;
	um_pt[1] = (uint64_t)(uintptr_t)um_zero | 5;	/* P, U: read-only */
	__asm__ volatile("invlpg (%0)" : : "r"(COW_VA) : "memory");
	um_cow = 0;
	tss[0x66] = iomap_valid ? IOMAP : 0xff;
	tss[0x67] = iomap_valid ? 0 : 0xff;
	um_fs1 = um_fs2 = 0;
	um_uticks = 0;
	um_gp_rip = 0;
	run(ITERS, &u, &o);
	fs[0] = um_fs1;
	fs[1] = um_fs2;
	*out_gp = um_gp_rip == (uint64_t)(uintptr_t)um_user_out;
	*ticks = um_uticks;
	*tlb = um_tlb;
	*cow = um_cow;
}

static int
um_state(void)
{
	uint64_t fs1[2], fs2[2], t1, t2, m1, m2, c1, c2;
	int gp1, gp2;

	boot_pd()[TLB_VA >> 21] = (uint64_t)(uintptr_t)um_pt | 7;
	__asm__ volatile("mov %0, %%cr3" : : "r"(vg_read_cr3()) : "memory");

	vg_wrmsr(MSR_X2APIC_TDCR, 0xb);			/* divide by 1 */
	vg_wrmsr(MSR_X2APIC_LVTT, LVTT_PERIODIC | TIMER_VECTOR);
	vg_wrmsr(MSR_X2APIC_TMICT, 1000000);		/* 1 ms */
	um_state_trip(0, 0, fs1, &gp1, &t1, &m1, &c1);
	um_state_trip(1, 1, fs2, &gp2, &t2, &m2, &c2);
	vg_wrmsr(MSR_X2APIC_TMICT, 0);
	vg_printf("user_state: trip 1 fs %#lx %#lx out-#GP %d, trip 2 fs %#lx %#lx out-#GP %d, "
	    "page %#lx %#lx, cow %#lx %#lx in %lu, ticks %lu %lu\n", (unsigned long)fs1[0],
	    (unsigned long)fs1[1], gp1, (unsigned long)fs2[0], (unsigned long)fs2[1], gp2,
	    (unsigned long)m1, (unsigned long)m2, (unsigned long)c1, (unsigned long)c2,
	    (unsigned long)um_cows, (unsigned long)t1, (unsigned long)t2);
	return (0);
}
#endif

int
main(unsigned cpu)
{
	static volatile uint32_t iters = ITERS;
	uint64_t u1, o1, u2, o2;

	if (cpu != 0)
		return (0);
#if USER_STATE
	/* Before setup(), which copies the runtime's IDT with the timer's gate in it. */
	if (vg_x2apic_enable() != 0) {
		vg_printf("user_state: no x2APIC (--irqchip kernel only)\n");
		return (1);
	}
	vg_set_irq_handler(um_tick);
#endif
	setup();
	if (USER_SYSCALL || USER_STATE == 2) {
		uint64_t *pd = boot_pd();

		if (USER_STATE)
			memcpy((void *)SYS_PAGE, um_state_sys,
			    (size_t)(um_state_sys_end - um_state_sys));
		else
			memcpy((void *)SYS_PAGE, um_sys_stub, (size_t)(um_sys_end - um_sys_stub));
		pd[SYS_PAGE >> 21] &= ~4ull;		/* U/S: supervisor only */
		__asm__ volatile("invlpg (%0)" : : "r"(SYS_PAGE) : "memory");
		vg_wrmsr(0xC0000080u, vg_rdmsr(0xC0000080u) | 1);	/* EFER.SCE */
		vg_wrmsr(0xC0000081u, 0x10ull << 48 | (uint64_t)SEL_KCODE << 32);	/* STAR */
		vg_wrmsr(0xC0000082u, SYS_PAGE);	/* LSTAR */
		vg_wrmsr(0xC0000084u, SFMASK);
	}
#if USER_STATE
	return (um_state());
#endif
	if (USER_RDPMC == 1)		/* CR4.PCE: RDPMC allowed at CPL 3 */
		__asm__ volatile("mov %0, %%cr4" : : "r"(vg_read_cr4() | 1ul << 8));
	run(iters, &u1, &o1);
	run(2 * iters, &u2, &o2);
	vg_printf("user_mode: usr n=%lu 2n=%lu diff %lu, os diff %lu, #DB %lu, #GP %lu%s\n",
	    (unsigned long)u1, (unsigned long)u2, (unsigned long)(u2 - u1),
	    (unsigned long)(o2 - o1), (unsigned long)um_db, (unsigned long)um_gp,
	    !KERNEL_ONLY && !USER_SYSCALL && um_gp_rip != (uint64_t)(uintptr_t)um_user_hlt ?
	    " (#GP not at the HLT)" : "");
	if (USER_SYSCALL)
		vg_printf("user_mode: syscall %lu, cs %#lx ss %#lx, rcx %d %d, r11 flags %#lx, "
		    "masked %d, #PF %lu at lstar %d user %d, cr2 %#lx err %#lx cs %#lx\n",
		    (unsigned long)um_sys, (unsigned long)um_sys_cs, (unsigned long)um_sys_ss,
		    um_sys_rcx1 == (uint64_t)(uintptr_t)um_user_sys1,
		    um_sys_rcx2 == (uint64_t)(uintptr_t)um_user_sys2,
		    (unsigned long)(um_sys_r11 & RFLAGS_SAVED), (um_sys_rflags & SFMASK) == 0,
		    (unsigned long)um_pf, um_pf_rip == SYS_PAGE,
		    um_pf_rip == (uint64_t)(uintptr_t)um_user_pf, (unsigned long)um_pf_cr2,
		    (unsigned long)um_pf_err, (unsigned long)um_pf_cs);
	if (USER_RDPMC)
		vg_printf("user_mode: rdpmc %#lx, #GP at rdpmc %d\n", (unsigned long)um_rd,
		    um_gp_rip == (uint64_t)(uintptr_t)um_user_rdpmc);
	return (0);
}
