/*
 * runtime.c -- the vpmu-run guest runtime: per-vCPU state, an IDT per vCPU,
 * exceptions, NMIs and interrupts, x2APIC and xAPIC mode (an uncached
 * mapping of the xAPIC page), #GP-safe MSR accessors,
 * console, exit, a barrier, and the memory functions the compiler may call.
 * See <vpmu-guest/runtime.h>.
 *
 * Freestanding: nothing but the compiler.  Every vCPU runs this code at
 * once; per-vCPU state sits in cpus[index], found through the GS base.
 */
#include <vpmu-guest/runtime.h>

/* ---- per-vCPU state ------------------------------------------------------- */

static struct vg_cpu cpus[VG_MAX_CPUS];

/* Offsets the inline assembly of vg_self() relies on. */
_Static_assert(offsetof(struct vg_cpu, self) == 0, "vg_self reads %gs:0");
_Static_assert(sizeof(struct vg_frame) == 22 * 8, "crt0.S pushes 22 words");

/* ---- the IDT: 32 exception vectors and 224 interrupt vectors per vCPU ----- */

struct idt_gate {
	uint16_t off_lo;
	uint16_t sel;
	uint8_t	 ist;
	uint8_t	 type;		/* P | DPL | gate type */
	uint16_t off_mid;
	uint32_t off_hi;
	uint32_t zero;
};
_Static_assert(sizeof(struct idt_gate) == 16, "a long-mode IDT gate is 16 bytes");

#define EXC_VECTORS	32
#define IDT_VECTORS	256
#define IRQ_STUB_SIZE	16	/* crt0.S: vg__irq_stubs, one stub per vector */
#define GATE_INTR	0x8e	/* present, DPL 0, 64-bit interrupt gate (clears IF) */

/* Per vCPU, so no vCPU writes a table another one has loaded. */
static struct idt_gate idt[VG_MAX_CPUS][IDT_VECTORS] __attribute__((aligned(16)));
extern const uint64_t vg__vectors[EXC_VECTORS];		/* crt0.S */
extern const char vg__irq_stubs[];			/* crt0.S */

/*
 * The exception table: an instruction that may fault (fault) and where to
 * resume if it does (resume).  The safe accessors put entries here; the
 * linker script collects them between the two symbols.
 */
struct vg_extable {
	uint64_t fault;
	uint64_t resume;
};
extern const struct vg_extable __vg_extable_start[], __vg_extable_end[];

#define EXTABLE(fault, resume)						\
	".pushsection .vg_extable, \"a\"\n\t"				\
	".balign 8\n\t"							\
	".quad " fault ", " resume "\n\t"				\
	".popsection\n\t"

static const char *const vecname[EXC_VECTORS] = {
	"#DE", "#DB", "NMI", "#BP", "#OF", "#BR", "#UD", "#NM",
	"#DF", "vector 9", "#TS", "#NP", "#SS", "#GP", "#PF", "vector 15",
	"#MF", "#AC", "#MC", "#XM", "#VE", "#CP", "vector 22", "vector 23",
	"vector 24", "vector 25", "vector 26", "vector 27", "#HV", "#VC",
	"#SX", "vector 31",
};

void vg__start(uint64_t index, uint64_t rsp, uint64_t rflags) __attribute__((noreturn));
void vg__trap(struct vg_frame *f);

static void
idt_gate_set(struct idt_gate *g, uint64_t a)
{
	*g = (struct idt_gate){
		.off_lo = (uint16_t)a,
		.sel = VG_SEL_CODE,
		.type = GATE_INTR,
		.off_mid = (uint16_t)(a >> 16),
		.off_hi = (uint32_t)(a >> 32),
	};
}

/*
 * The exception gates; the interrupt gates stay not present (an interrupt
 * is then a #NP) until vg_set_irq_handler() fills them.
 */
static void
idt_load(unsigned index)
{
	struct {
		uint16_t limit;
		uint64_t base;
	} __attribute__((packed)) idtr;
	struct idt_gate *g = idt[index];
	unsigned v;

	for (v = 0; v < EXC_VECTORS; v++)
		idt_gate_set(&g[v], vg__vectors[v]);
	idtr.limit = sizeof(idt[index]) - 1;
	idtr.base = (uint64_t)(uintptr_t)g;
	__asm__ volatile("lidt %0" : : "m"(idtr) : "memory");
}

void
vg_set_irq_handler(vg_irq_fn fn)
{
	struct vg_cpu *c = vg_self();
	struct idt_gate *g = idt[c->index];
	unsigned v;

	c->irq_fn = fn;
	for (v = EXC_VECTORS; v < IDT_VECTORS && g[v].type == 0; v++)
		idt_gate_set(&g[v], (uint64_t)(uintptr_t)vg__irq_stubs +
		    IRQ_STUB_SIZE * (v - EXC_VECTORS));
}

/* Before the per-vCPU state exists: straight to the port. */
static void
early_puts(const char *s)
{
	while (*s != '\0')
		vg_outb(VG_PORT_CONSOLE, (uint8_t)*s++);
}

/*
 * _start's C half, on every vCPU: per-vCPU state and GS base, the IDT, then
 * main().  vCPU 0's return value ends the run; another vCPU that returns
 * spins with PAUSE until some vCPU ends the run (boot protocol: "a vCPU
 * with nothing left to do spins").
 */
void
vg__start(uint64_t index, uint64_t rsp, uint64_t rflags)
{
	struct vg_cpu *c;
	uint32_t r[4];
	int ret;

	if (index >= VG_MAX_CPUS) {
		early_puts("vpmu-guest: vCPU index out of range\n");
		vg_outl(VG_PORT_EXIT, VG_EXIT_TRAP);
		for (;;)
			vg_pause();
	}
	c = &cpus[index];
	c->self = c;
	c->index = (uint32_t)index;
	c->entry_rsp = rsp;
	c->entry_rflags = rflags;
	vg_wrmsr(VG_MSR_GS_BASE, (uint64_t)(uintptr_t)c);
	idt_load((unsigned)index);
	vg_cpuid(1, 0, r);
	c->ncpus = (r[3] & (1u << 28)) ? (r[1] >> 16) & 0xff : 1;
	if (c->ncpus == 0)
		c->ncpus = 1;
	/* The paravirtual channel's caller: pid 1, one thread per vCPU, root. */
	c->pv_ident.pid = 1;
	c->pv_ident.tid = (int32_t)index + 1;
	c->pv_ident.uid = 0;
	c->pv_ident.cflags = VPMU_PV_CRED_PRIVILEGED;

	ret = main((unsigned)index);
	if (index == 0)
		vg_exit((uint32_t)ret);
	vg_flush();
	for (;;)
		vg_pause();
}

/* <vpmu-guest/pv.h>: each vCPU calls the channel as its own thread. */
struct vpmu_pv_ident *
vpmu_pv_self(void)
{
	return (&vg_self()->pv_ident);
}

unsigned
vg_ncpus(void)
{
	return (vg_self()->ncpus);
}

/*
 * Every exception, NMI and interrupt, on the interrupted stack with IF
 * clear.  An NMI is counted and handed to the vCPU's hook; so is an
 * interrupt (vector 32..255) when the vCPU has an interrupt hook (the hook
 * writes the EOI), and a #DB when the vCPU has a debug hook.  A fault at an instruction in
 * the exception table resumes at its fixup with the vector recorded.  Any
 * other exception is a bug in the guest: say where and end the run.
 */
void
vg__trap(struct vg_frame *f)
{
	struct vg_cpu *c = vg_self();
	const struct vg_extable *e;

	if (f->vector == VG_NMI) {
		c->nmis++;
		if (c->nmi_fn != NULL)
			c->nmi_fn(c->index, f);
		return;
	}
	if (f->vector == 1 && c->db_fn != NULL) {
		c->dbs++;
		c->db_fn(c->index, f);
		return;
	}
	if (f->vector >= EXC_VECTORS && c->irq_fn != NULL) {
		c->irqs++;
		c->irq_fn(c->index, f);
		return;
	}
	for (e = __vg_extable_start; e < __vg_extable_end; e++) {
		if (e->fault == f->rip) {
			c->fault = (uint32_t)f->vector + 1;
			c->fault_error = f->error;
			f->rip = e->resume;
			return;
		}
	}
	if (c->conslen != 0)
		vg_putc('\n');
	vg_printf("vCPU %u: unexpected exception %s (vector %lu, error %#lx) "
	    "at RIP %#lx, RSP %#lx, RFLAGS %#lx\n", c->index,
	    f->vector < EXC_VECTORS ? vecname[f->vector] : "interrupt",
	    (unsigned long)f->vector, (unsigned long)f->error,
	    (unsigned long)f->rip, (unsigned long)f->rsp,
	    (unsigned long)f->rflags);
	vg_exit(VG_EXIT_TRAP);
}

/* ---- #GP-safe accessors ----------------------------------------------------
 * c->fault is cleared before the instruction and read after it; the "memory"
 * clobber makes the compiler do both around the asm.  On a fault the handler
 * restores the registers as they were, so the outputs keep their 0.
 */

static int
fault_result(struct vg_cpu *c)
{
	return (c->fault != 0 ? (int)c->fault - 1 : 0);
}

int
vg_rdmsr_safe(uint32_t msr, uint64_t *val)
{
	struct vg_cpu *c = vg_self();
	uint32_t lo = 0, hi = 0;

	c->fault = 0;
	__asm__ volatile("1: rdmsr\n2:\n\t" EXTABLE("1b", "2b")
	    : "+a"(lo), "+d"(hi) : "c"(msr) : "memory");
	*val = (uint64_t)hi << 32 | lo;
	return (fault_result(c));
}

int
vg_wrmsr_safe(uint32_t msr, uint64_t val)
{
	struct vg_cpu *c = vg_self();

	c->fault = 0;
	__asm__ volatile("1: wrmsr\n2:\n\t" EXTABLE("1b", "2b")
	    : : "c"(msr), "a"((uint32_t)val), "d"((uint32_t)(val >> 32))
	    : "memory");
	return (fault_result(c));
}

int
vg_rdpmc_safe(uint32_t idx, uint64_t *val)
{
	struct vg_cpu *c = vg_self();
	uint32_t lo = 0, hi = 0;

	c->fault = 0;
	__asm__ volatile("1: rdpmc\n2:\n\t" EXTABLE("1b", "2b")
	    : "+a"(lo), "+d"(hi) : "c"(idx) : "memory");
	*val = (uint64_t)hi << 32 | lo;
	return (fault_result(c));
}

/* ---- console and exit ------------------------------------------------------ */

void
vg_flush(void)
{
	struct vg_cpu *c = vg_self();
	const char *p = c->cons;
	uint64_t n = c->conslen;

	if (n == 0)
		return;
	/* One exit for the whole line: KVM hands vpmu-run all n bytes. */
	__asm__ volatile("rep outsb" : "+S"(p), "+c"(n)
	    : "d"((uint16_t)VG_PORT_CONSOLE) : "memory");
	c->conslen = 0;
}

void
vg_putc(int ch)
{
	struct vg_cpu *c = vg_self();

	c->cons[c->conslen++] = (char)ch;
	if (ch == '\n' || c->conslen == sizeof(c->cons))
		vg_flush();
}

void
vg_puts(const char *s)
{
	while (*s != '\0')
		vg_putc(*s++);
}

void
vg_exit(uint32_t code)
{
	vg_flush();
	vg_outl(VG_PORT_EXIT, code);
	for (;;)			/* vpmu-run stops every vCPU */
		vg_pause();
}

/* ---- printf-lite ----------------------------------------------------------- */

struct sink {
	char	*buf;		/* NULL: the console */
	size_t	 len, pos;
	int	 total;
};

static void
emit(struct sink *s, char ch)
{
	s->total++;
	if (s->buf == NULL)
		vg_putc(ch);
	else if (s->pos + 1 < s->len)
		s->buf[s->pos++] = ch;
}

static void
emit_padded(struct sink *s, const char *str, size_t n, int width, int left, char pad)
{
	int fill = width > (int)n ? width - (int)n : 0;

	if (!left && pad == '0' && n > 0 && str[0] == '-') {
		emit(s, *str++);
		n--;
	}
	if (!left)
		while (fill-- > 0)
			emit(s, pad);
	while (n-- > 0)
		emit(s, *str++);
	if (left)
		while (fill-- > 0)
			emit(s, ' ');
}

static int
format(struct sink *s, const char *fmt, va_list ap)
{
	static const char lower[] = "0123456789abcdef", upper[] = "0123456789ABCDEF";
	char num[24], *p;
	const char *str, *digits;
	unsigned long long u;
	int width, left, alt, lng;
	unsigned base;
	char pad;

	for (; *fmt != '\0'; fmt++) {
		if (*fmt != '%') {
			emit(s, *fmt);
			continue;
		}
		left = alt = lng = width = 0;
		pad = ' ';
		for (;;) {
			fmt++;
			if (*fmt == '-')
				left = 1;
			else if (*fmt == '0')
				pad = '0';
			else if (*fmt == '#')
				alt = 1;
			else
				break;
		}
		for (; *fmt >= '0' && *fmt <= '9'; fmt++)
			width = width * 10 + (*fmt - '0');
		for (; *fmt == 'l' || *fmt == 'z'; fmt++)
			lng++;
		base = 10;
		digits = lower;
		switch (*fmt) {
		case '\0':
			return (s->total);
		case '%':
			emit(s, '%');
			continue;
		case 'c':
			num[0] = (char)va_arg(ap, int);
			emit_padded(s, num, 1, width, left, ' ');
			continue;
		case 's':
			if ((str = va_arg(ap, const char *)) == NULL)
				str = "(null)";
			emit_padded(s, str, strlen(str), width, left, ' ');
			continue;
		case 'd':
		case 'i': {
			long long v = lng ? va_arg(ap, long long) : va_arg(ap, int);

			u = v < 0 ? 0 - (unsigned long long)v : (unsigned long long)v;
			p = num + sizeof(num);
			do {
				*--p = lower[u % 10];
				u /= 10;
			} while (u != 0);
			if (v < 0)
				*--p = '-';
			emit_padded(s, p, (size_t)(num + sizeof(num) - p), width, left, pad);
			continue;
		}
		case 'p':
			u = (uintptr_t)va_arg(ap, void *);
			base = 16;
			alt = 1;
			break;
		case 'X':
			digits = upper;
			/* FALLTHROUGH */
		case 'x':
			base = 16;
			/* FALLTHROUGH */
		case 'u':
			u = lng ? va_arg(ap, unsigned long long) : va_arg(ap, unsigned);
			break;
		default:			/* unknown: print it as it was */
			emit(s, '%');
			emit(s, *fmt);
			continue;
		}
		p = num + sizeof(num);
		do {
			*--p = digits[u % base];
			u /= base;
		} while (u != 0);
		if (alt && base == 16) {
			if (pad == '0' && !left) {
				emit(s, '0');
				emit(s, 'x');
				width = width > 2 ? width - 2 : 0;
			} else {
				*--p = 'x';
				*--p = '0';
			}
		}
		emit_padded(s, p, (size_t)(num + sizeof(num) - p), width, left, pad);
	}
	return (s->total);
}

int
vg_vprintf(const char *fmt, va_list ap)
{
	struct sink s = { 0 };

	return (format(&s, fmt, ap));
}

int
vg_printf(const char *fmt, ...)
{
	va_list ap;
	int n;

	va_start(ap, fmt);
	n = vg_vprintf(fmt, ap);
	va_end(ap);
	return (n);
}

int
vg_snprintf(char *buf, size_t len, const char *fmt, ...)
{
	struct sink s = { .buf = buf, .len = len };
	va_list ap;

	va_start(ap, fmt);
	format(&s, fmt, ap);
	va_end(ap);
	if (len > 0)
		buf[s.pos] = '\0';
	return (s.total);
}

/* ---- the local APIC --------------------------------------------------------- */

int
vg_x2apic_enable(void)
{
	uint32_t r[4];
	uint64_t base;

	vg_cpuid(1, 0, r);
	if (!(r[2] & (1u << 21)))
		return (-1);
	if (vg_rdmsr_safe(VG_MSR_APIC_BASE, &base) != 0 ||
	    vg_wrmsr_safe(VG_MSR_APIC_BASE, base | VG_APIC_BASE_EN | VG_APIC_BASE_EXTD) != 0 ||
	    vg_wrmsr_safe(VG_MSR_X2APIC_SPIV, 0x1ff) != 0)
		return (-1);
	return (0);
}

/* ---- the xAPIC page: an uncached identity mapping above the boot map -------- */

#define PTE_P		(1ull << 0)
#define PTE_RW		(1ull << 1)
#define PTE_PWT		(1ull << 3)
#define PTE_PCD		(1ull << 4)
#define PTE_PS		(1ull << 7)	/* PDPT: 1 GiB page; PD: 2 MiB page */
#define PTE_ADDR	0x000ffffffffff000ull
#define PAGE_1G		(1ull << 30)
#define PAGE_2M		(1ull << 21)

/*
 * Page directories for PDPT entries 1..3 (1 to 4 GiB), used where the
 * entry was empty; identity mapped, being in the image below 1 GiB.
 */
static uint64_t mmio_pd[3][512] __attribute__((aligned(4096)));

/*
 * Put want in the entry *e if it is 0; return what *e then holds: want, or
 * what was there (another vCPU's identical claim, or someone's mapping).
 */
static uint64_t
pte_claim(uint64_t *e, uint64_t want)
{
	uint64_t old = 0;

	if (__atomic_compare_exchange_n(e, &old, want, false, __ATOMIC_ACQ_REL,
	    __ATOMIC_ACQUIRE))
		return (want);
	return (old);
}

volatile void *
vg_map_mmio(uint64_t pa)
{
	uint64_t *pml4, *pdpt, *pd, e, want;
	unsigned slot;

	if (pa >= 4 * PAGE_1G)
		return (NULL);
	pml4 = (uint64_t *)(uintptr_t)(vg_read_cr3() & PTE_ADDR);
	if (!(pml4[0] & PTE_P))
		return (NULL);
	pdpt = (uint64_t *)(uintptr_t)(pml4[0] & PTE_ADDR);
	slot = (unsigned)(pa / PAGE_1G);
	e = __atomic_load_n(&pdpt[slot], __ATOMIC_ACQUIRE);
	if (e == 0 && slot > 0)
		e = pte_claim(&pdpt[slot], (uint64_t)(uintptr_t)mmio_pd[slot - 1] |
		    PTE_P | PTE_RW);
	if (!(e & PTE_P))
		return (NULL);
	if (e & PTE_PS)				/* a 1 GiB page: the identity? */
		return ((e & PTE_ADDR & ~(PAGE_1G - 1)) == slot * PAGE_1G ?
		    (volatile void *)(uintptr_t)pa : NULL);
	pd = (uint64_t *)(uintptr_t)(e & PTE_ADDR);
	want = (pa & ~(PAGE_2M - 1)) | PTE_P | PTE_RW | PTE_PWT | PTE_PCD | PTE_PS;
	e = pte_claim(&pd[(pa / PAGE_2M) % 512], want);
	if (e != want && (!(e & PTE_P) || !(e & PTE_PS) ||
	    (e & PTE_ADDR & ~(PAGE_2M - 1)) != (pa & ~(PAGE_2M - 1))))
		return (NULL);
	__asm__ volatile("invlpg (%0)" : : "r"((uintptr_t)pa) : "memory");
	return ((volatile void *)(uintptr_t)pa);
}

int
vg_xapic_enable(void)
{
	uint32_t r[4];
	uint64_t base;

	vg_cpuid(1, 0, r);
	if (!(r[3] & (1u << 9)))		/* CPUID.1:EDX.APIC */
		return (-1);
	if (vg_rdmsr_safe(VG_MSR_APIC_BASE, &base) != 0 || (base & VG_APIC_BASE_EXTD) ||
	    (base & PTE_ADDR) != VG_XAPIC_BASE)
		return (-1);
	if (!(base & VG_APIC_BASE_EN) &&
	    vg_wrmsr_safe(VG_MSR_APIC_BASE, base | VG_APIC_BASE_EN) != 0)
		return (-1);
	if (vg_map_mmio(VG_XAPIC_BASE) == NULL)
		return (-1);
	vg_xapic_write(VG_XAPIC_SPIV, 0x1ff);
	return (0);
}

/* ---- several vCPUs --------------------------------------------------------- */

static uint32_t bar_count, bar_sense;

void
vg_barrier(void)
{
	struct vg_cpu *c = vg_self();
	uint32_t sense = c->sense ^ 1;

	c->sense = sense;
	if (__atomic_add_fetch(&bar_count, 1, __ATOMIC_ACQ_REL) == c->ncpus) {
		__atomic_store_n(&bar_count, 0, __ATOMIC_RELAXED);
		__atomic_store_n(&bar_sense, sense, __ATOMIC_RELEASE);
	} else {
		while (__atomic_load_n(&bar_sense, __ATOMIC_ACQUIRE) != sense)
			vg_pause();
	}
}

/* ---- memory functions -------------------------------------------------------
 * String instructions, so the compiler cannot turn a loop here back into a
 * call to the function itself.
 */

void *
memset(void *d, int ch, size_t n)
{
	void *ret = d;

	__asm__ volatile("rep stosb" : "+D"(d), "+c"(n) : "a"(ch) : "memory");
	return (ret);
}

void *
memcpy(void *restrict d, const void *restrict s, size_t n)
{
	void *ret = d;

	__asm__ volatile("rep movsb" : "+D"(d), "+S"(s), "+c"(n) : : "memory");
	return (ret);
}

void *
memmove(void *d, const void *s, size_t n)
{
	void *ret = d;

	if ((uintptr_t)d <= (uintptr_t)s || (uintptr_t)d >= (uintptr_t)s + n) {
		__asm__ volatile("rep movsb" : "+D"(d), "+S"(s), "+c"(n) : : "memory");
	} else if (n > 0) {
		d = (char *)d + n - 1;
		s = (const char *)s + n - 1;
		__asm__ volatile("std; rep movsb; cld"
		    : "+D"(d), "+S"(s), "+c"(n) : : "memory");
	}
	return (ret);
}

int
memcmp(const void *a, const void *b, size_t n)
{
	const unsigned char *p = a, *q = b;

	for (; n > 0; n--, p++, q++) {
		__asm__("" : "+r"(p));		/* not a memcmp idiom */
		if (*p != *q)
			return (*p < *q ? -1 : 1);
	}
	return (0);
}

size_t
strlen(const char *s)
{
	const char *p = s;

	while (*p != '\0') {
		__asm__("" : "+r"(p));		/* not a strlen idiom */
		p++;
	}
	return ((size_t)(p - s));
}
