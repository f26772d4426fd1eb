/*
 * boot_protocol.c -- every vCPU checks the CPU state boot protocol v1
 * promises at e_entry (vpmu-run(1)), prints one line, and waits at a
 * barrier; vCPU 0 then exits 0 only if every vCPU passed, each vCPU index
 * 0..N-1 was seen exactly once and all agree on the top of RAM.
 *
 * Checked: RDI (the vCPU index) against CPUID's initial APIC ID; RSP
 * 16-byte aligned, the vCPU's 64 KiB window below it above the image and
 * writable; RFLAGS == 0x2 (IF clear); CPL 0; CS 0x08 and DS/ES/SS 0x10 and
 * what the GDT (below 1 MiB) holds at those selectors; CR0.PE/PG/MP and EM
 * clear, CR4.PAE/OSFXSR/OSXMMEXCPT, EFER.LME/LMA; the page tables (below
 * 1 MiB) identity-map the first 1 GiB with writable 2 MiB pages and no NX,
 * and each further GiB RAM reaches into (--mem above 1G, up to 3G); memory
 * at 0, 512 MiB, 1 GiB and 2 GiB is reachable where RAM reaches it, and so
 * is the top of RAM (vCPU 0's return address from _start, below it).
 * No SSE instruction is run: where KVM emulates the guest's instructions
 * (kvm_pvm, this project's machines), SSE ends the run with an internal
 * error, though CR0/CR4 enable it as vpmu-run(1) says.
 */
#include <vpmu-guest/runtime.h>

#define KiB		0x400ul
#define MiB		0x100000ul
#define GiB		0x40000000ul
#define PTE_P		(1ul << 0)
#define PTE_RW		(1ul << 1)
#define PTE_PS		(1ul << 7)
#define PTE_NX		(1ul << 63)
#define PTE_ADDR	0x000ffffffffff000ul

extern char __vg_image_end[];		/* link.ld */

static struct {
	uint32_t done, ok, seen;
	uint64_t top;
} res[VG_MAX_CPUS];

static int fails[VG_MAX_CPUS];		/* per vCPU: they all check at once */

#define CHECK(cond, ...) do {						\
	if (!(cond)) {							\
		vg_printf("vCPU %u: FAIL %s: ", cpu, #cond);		\
		vg_printf(__VA_ARGS__);					\
		vg_putc('\n');						\
		fails[cpu]++;						\
	}								\
} while (0)

static uint64_t
read_rsp(void)
{
	uint64_t v;

	__asm__ volatile("mov %%rsp, %0" : "=r"(v));
	return (v);
}

/* Write a pattern through the identity map, read it back, restore. */
static int
touch(uint64_t addr)
{
	volatile uint64_t *p = (volatile uint64_t *)(uintptr_t)addr;
	uint64_t old = *p, pat = 0x5a5aa5a5c3c33c3cul ^ addr;

	*p = pat;
	if (*p != pat)
		return (0);
	*p = old;
	return (1);
}

static void
check_gdt(unsigned cpu)
{
	struct {
		uint16_t limit;
		uint64_t base;
	} __attribute__((packed)) gdtr;
	const uint64_t *gdt;
	uint64_t code, data;

	__asm__ volatile("sgdt %0" : "=m"(gdtr));
	CHECK(gdtr.base + gdtr.limit < MiB, "GDT at %#lx limit %#x",
	    (unsigned long)gdtr.base, gdtr.limit);
	CHECK(gdtr.limit >= 0x17, "GDT limit %#x", gdtr.limit);
	gdt = (const uint64_t *)(uintptr_t)gdtr.base;
	code = gdt[VG_SEL_CODE / 8];
	data = gdt[VG_SEL_DATA / 8];
	/* P (47), S (44), code (43), L (53), not D (54), DPL 0 (45-46). */
	CHECK((code & (1ul << 47)) && (code & (1ul << 44)) && (code & (1ul << 43)) &&
	    (code & (1ul << 53)) && !(code & (1ul << 54)) && !(code & (3ul << 45)),
	    "GDT[0x08] %#lx is not 64-bit code at DPL 0", (unsigned long)code);
	/* P, S, data (not 43), writable (41). */
	CHECK((data & (1ul << 47)) && (data & (1ul << 44)) && !(data & (1ul << 43)) &&
	    (data & (1ul << 41)), "GDT[0x10] %#lx is not writable data",
	    (unsigned long)data);
}

static void
check_paging(unsigned cpu, uint64_t top)
{
	const uint64_t *pml4, *pdpt, *pd;
	uint64_t cr3 = vg_read_cr3() & PTE_ADDR, e;
	unsigned i, g, bad = 0;

	CHECK(cr3 < MiB, "CR3 %#lx", (unsigned long)cr3);
	pml4 = (const uint64_t *)(uintptr_t)cr3;
	CHECK(pml4[0] & PTE_P, "PML4[0] %#lx", (unsigned long)pml4[0]);
	pdpt = (const uint64_t *)(uintptr_t)(pml4[0] & PTE_ADDR);
	CHECK((uintptr_t)pdpt < MiB, "PDPT at %p", (const void *)pdpt);
	CHECK((pdpt[0] & PTE_P) && !(pdpt[0] & PTE_PS), "PDPT[0] %#lx",
	    (unsigned long)pdpt[0]);
	/* GiB g is mapped by PDPT[g]'s directory: the first, and those RAM reaches. */
	for (g = 0; g == 0 || (uint64_t)g * GiB < top; g++) {
		CHECK((pdpt[g] & PTE_P) && !(pdpt[g] & PTE_PS), "PDPT[%u] %#lx", g,
		    (unsigned long)pdpt[g]);
		if (!(pdpt[g] & PTE_P))
			continue;
		pd = (const uint64_t *)(uintptr_t)(pdpt[g] & PTE_ADDR);
		CHECK((uintptr_t)pd < MiB, "PD %u at %p", g, (const void *)pd);
		for (i = 0; i < 512; i++) {
			e = pd[i];
			if (!(e & PTE_P) || !(e & PTE_RW) || !(e & PTE_PS) || (e & PTE_NX) ||
			    (e & 0x000fffffffe00000ul) != (uint64_t)g * GiB + ((uint64_t)i << 21))
				bad++;
		}
	}
	CHECK(bad == 0, "%u PD entries are not writable 2 MiB identity pages", bad);
}

int
main(unsigned cpu)
{
	struct vg_cpu *c = vg_self();
	uint64_t rsp = c->entry_rsp, top, sp, cr0, cr4, efer;
	unsigned n = vg_ncpus(), i, all;
	uint32_t r[4];

	/* RDI is the index: CPUID's initial APIC ID says which vCPU this is. */
	vg_cpuid(1, 0, r);
	CHECK(cpu == r[1] >> 24, "RDI %u, initial APIC ID %u", cpu, r[1] >> 24);
	CHECK(cpu < n && n <= VG_MAX_CPUS, "RDI %u of %u vCPUs", cpu, n);

	/* The stack: 16-byte aligned, its 64 KiB ours, above the image. */
	top = rsp + cpu * VG_STACK_SIZE;
	sp = read_rsp();
	CHECK((rsp & 15) == 0, "RSP %#lx", (unsigned long)rsp);
	CHECK(top % MiB == 0 && top <= 3 * GiB, "top of RAM %#lx", (unsigned long)top);
	CHECK(sp < rsp && sp > rsp - VG_STACK_SIZE, "RSP now %#lx, at entry %#lx",
	    (unsigned long)sp, (unsigned long)rsp);
	CHECK(rsp - VG_STACK_SIZE >= (uintptr_t)__vg_image_end,
	    "stack window %#lx overlaps the image (to %p)",
	    (unsigned long)(rsp - VG_STACK_SIZE), (void *)__vg_image_end);
	CHECK(touch(rsp - VG_STACK_SIZE), "bottom of the stack window");

	/* Flags and privilege. */
	CHECK(c->entry_rflags == 0x2, "RFLAGS %#lx at entry",
	    (unsigned long)c->entry_rflags);
	CHECK(!(vg_read_rflags() & VG_RFLAGS_IF), "IF set");
	CHECK(VG_READ_SEG(cs) == VG_SEL_CODE, "CS %#x", VG_READ_SEG(cs));
	CHECK(VG_READ_SEG(ds) == VG_SEL_DATA, "DS %#x", VG_READ_SEG(ds));
	CHECK(VG_READ_SEG(es) == VG_SEL_DATA, "ES %#x", VG_READ_SEG(es));
	CHECK(VG_READ_SEG(ss) == VG_SEL_DATA, "SS %#x", VG_READ_SEG(ss));
	check_gdt(cpu);

	/* Long mode with paging, SSE enabled. */
	cr0 = vg_read_cr0();
	cr4 = vg_read_cr4();
	efer = vg_rdmsr(VG_MSR_EFER);
	CHECK((cr0 & VG_CR0_PE) && (cr0 & VG_CR0_PG), "CR0 %#lx", (unsigned long)cr0);
	CHECK((cr0 & VG_CR0_MP) && !(cr0 & VG_CR0_EM), "CR0 %#lx", (unsigned long)cr0);
	CHECK((cr4 & VG_CR4_PAE) && (cr4 & VG_CR4_OSFXSR) && (cr4 & VG_CR4_OSXMMEXCPT),
	    "CR4 %#lx", (unsigned long)cr4);
	CHECK((efer & VG_EFER_LME) && (efer & VG_EFER_LMA), "EFER %#lx",
	    (unsigned long)efer);

	/* The identity map, as tables and as memory (where RAM reaches). */
	check_paging(cpu, top);
	CHECK(touch(cpu * 8), "guest-physical %#lx", (unsigned long)cpu * 8);
	if (512 * MiB + VG_MAX_CPUS * 8 <= top - n * VG_STACK_SIZE)
		CHECK(touch(512 * MiB + cpu * 8), "512 MiB");
	if (GiB + VG_MAX_CPUS * 8 <= top - n * VG_STACK_SIZE)
		CHECK(touch(GiB + cpu * 8), "1 GiB");
	if (2 * GiB + VG_MAX_CPUS * 8 <= top - n * VG_STACK_SIZE)
		CHECK(touch(2 * GiB + cpu * 8), "2 GiB");
	if (cpu == 0)			/* its return address from _start */
		CHECK(*(volatile uint64_t *)(top - 8) != 0, "top of RAM - 8 reads 0");

	vg_printf("vCPU %u: %s (RSP %#lx, top of RAM %lu MiB)\n", cpu,
	    fails[cpu] ? "boot state WRONG" : "boot state ok", (unsigned long)rsp,
	    (unsigned long)(top / MiB));
	res[cpu].ok = fails[cpu] == 0;
	res[cpu].top = top;
	__atomic_add_fetch(&res[cpu].seen, 1, __ATOMIC_RELAXED);
	__atomic_store_n(&res[cpu].done, 1, __ATOMIC_RELEASE);

	vg_barrier();
	if (cpu != 0)
		return (0);
	for (i = all = 0; i < n; i++) {
		if (!__atomic_load_n(&res[i].done, __ATOMIC_ACQUIRE) || res[i].seen != 1)
			vg_printf("vCPU %u: FAIL: entered %u times\n", i, res[i].seen);
		else if (res[i].top != top)
			vg_printf("vCPU %u: FAIL: top of RAM %#lx, vCPU 0 says %#lx\n",
			    i, (unsigned long)res[i].top, (unsigned long)top);
		else if (res[i].ok)
			all++;
	}
	vg_printf("boot protocol: %u of %u vCPUs ok\n", all, n);
	return (all == n ? 0 : 1);
}
