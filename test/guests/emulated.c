/*
 * emulated.c -- kernel-mode instructions that an instruction emulator may
 * not run, with results the guest checks exactly, whoever runs them: the
 * processor, KVM's emulator, or vpmu-run after KVM's emulator gave up
 * (examples/vpmu-run/emulate.c): POPCNT of 64, 32 and 16 bits (the count,
 * ZF, the other arithmetic flags clear, a 32-bit destination
 * zero-extended, a 16-bit one merged), CLAC and STAC (RFLAGS.AC; only
 * where CPUID offers SMAP), FNINIT and FWAIT (they complete), LDMXCSR and
 * STMXCSR through a stack slot, VERR and VERW of the boot protocol's GDT
 * (code 0x08, data 0x10, the TSS 0x18), from a register and from memory
 * (Linux's VERW on return to user mode).  Prints "emulated: ok" and exits
 * 0, or names the first difference and exits 1.
 */
#include <vpmu-guest/runtime.h>

#define RFLAGS_ARITH	0x8d5ul		/* CF PF AF ZF SF OF */
#define RFLAGS_ZF	0x40ul
#define RFLAGS_AC	(1ul << 18)

static int fails;

static void
want(const char *what, uint64_t got, uint64_t exp)
{
	if (got != exp) {
		vg_printf("emulated: %s is 0x%lx, want 0x%lx\n", what, (unsigned long)got,
		    (unsigned long)exp);
		fails++;
	}
}

static void
cpuid(uint32_t leaf, uint32_t sub, uint32_t r[4])
{
	__asm__ volatile("cpuid" : "=a"(r[0]), "=b"(r[1]), "=c"(r[2]), "=d"(r[3])
	    : "a"(leaf), "c"(sub));
}

static void
popcnts(void)
{
	uint64_t d, fl;

	/* 64 bits, flags all set before: only ZF may stay, here clear */
	__asm__ volatile("mov $0x8d5, %%rax\n\tpush %%rax\n\tpopfq\n\t"
	    "popcnt %2, %0\n\tpushfq\n\tpop %1"
	    : "=&r"(d), "=&r"(fl) : "r"(0xF0F0000000000001ull) : "rax", "cc");
	want("popcnt r64", d, 9);
	want("popcnt r64 flags", fl & RFLAGS_ARITH, 0);
	/* 32 bits: zero-extended; a source 0 sets ZF */
	d = ~0ull;
	__asm__ volatile("popcnt %k2, %k0\n\tpushfq\n\tpop %1"
	    : "+r"(d), "=&r"(fl) : "r"(0xFFFFFFFF00000000ull) : "cc");
	want("popcnt r32", d, 0);
	want("popcnt r32 flags", fl & RFLAGS_ARITH, RFLAGS_ZF);
	/* 16 bits: merged into the destination */
	d = 0x1234567890ABCDEFull;
	__asm__ volatile("popcnt %w1, %w0" : "+r"(d) : "r"(0xFFFF0000000000FFull) : "cc");
	want("popcnt r16", d, 0x1234567890AB0008ull);
}

static void
clac_stac(void)
{
	uint64_t a, b;

	__asm__ volatile("stac\n\tpushfq\n\tpop %0\n\tclac\n\tpushfq\n\tpop %1"
	    : "=&r"(a), "=&r"(b) : : "cc");
	want("RFLAGS.AC after STAC", a & RFLAGS_AC, RFLAGS_AC);
	want("RFLAGS.AC after CLAC", b & RFLAGS_AC, 0);
}

static void
fpu(void)
{
	uint32_t csr = 0x1f80 | 0x6000, back = 0;	/* round toward zero */

	/*
	 * FNINIT and FWAIT must complete; what FNINIT leaves is not read back
	 * (FNSTCW and FNSTSW are other instructions an emulator may lack).
	 */
	__asm__ volatile("fninit\n\tfwait");
	__asm__ volatile("ldmxcsr %1\n\tstmxcsr %0" : "=m"(back) : "m"(csr));
	want("MXCSR stored", back, csr);
	csr = 0x1f80;
	__asm__ volatile("ldmxcsr %0" : : "m"(csr));
}

/* ZF after VERR (write 0) or VERW of sel, from a register and from memory. */
static void
verify(const char *what, uint16_t sel, int write, uint64_t zf)
{
	uint64_t a, b;
	uint16_t m = sel;

	if (write)
		__asm__ volatile("verw %w2\n\tpushfq\n\tpop %0\n\tverw %3\n\tpushfq\n\tpop %1"
		    : "=&r"(a), "=&r"(b) : "r"(sel), "m"(m) : "cc");
	else
		__asm__ volatile("verr %w2\n\tpushfq\n\tpop %0\n\tverr %3\n\tpushfq\n\tpop %1"
		    : "=&r"(a), "=&r"(b) : "r"(sel), "m"(m) : "cc");
	want(what, a & RFLAGS_ZF, zf);
	want(what, b & RFLAGS_ZF, zf);
}

static void
verr_verw(void)
{
	verify("VERW data 0x10", 0x10, 1, RFLAGS_ZF);
	verify("VERR data 0x10", 0x10, 0, RFLAGS_ZF);
	verify("VERW code 0x08", 0x08, 1, 0);		/* code is never writable */
	verify("VERR code 0x08", 0x08, 0, RFLAGS_ZF);	/* readable code */
	verify("VERW TSS 0x18", 0x18, 1, 0);		/* a system descriptor */
	verify("VERW null", 0, 1, 0);
	verify("VERW past the GDT", 0x30, 1, 0);
	verify("VERW LDT 0x14", 0x14, 1, 0);		/* no LDT */
	verify("VERW data RPL 3", 0x13, 1, 0);		/* DPL 0 < RPL 3 */
}

int
main(unsigned cpu)
{
	uint32_t r[4];

	if (cpu != 0)
		return (0);
	cpuid(1, 0, r);
	if (r[2] & (1u << 23))
		popcnts();
	else
		vg_printf("emulated: no POPCNT in CPUID: not checked\n");
	cpuid(7, 0, r);
	if (r[1] & (1u << 20))
		clac_stac();
	else
		vg_printf("emulated: no SMAP in CPUID: CLAC and STAC not checked\n");
	fpu();
	verr_verw();
	if (fails != 0)
		return (1);
	vg_printf("emulated: ok\n");
	return (0);
}
