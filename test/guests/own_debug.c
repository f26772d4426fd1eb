/*
 * own_debug.c -- the guest's own debugging while the exact source follows
 * it (issue 11, part 3: "a debug trap the guest uses itself"): a hardware
 * instruction breakpoint of the guest's (DR0, DR7.L0) and the guest
 * stepping itself with RFLAGS.TF must trap into the guest's #DB handler
 * exactly as they do with no counter enabled, whatever the source does
 * with KVM's guest debugging (single-steps, breakpoints of its own).
 *
 * Each probe runs twice: with PMC0 disabled (nothing followed), then with
 * PMC0 counting OS instructions.  Prints
 *   own_debug: bp H0/H1 dr6 D0/D1 tf T0/T1 pmc BP TF
 * (hits and traps uncounted/counted, DR6's B0 as seen by the handler,
 * PMC0 over each counted probe) and exits 0 when the breakpoint hit
 * once in both runs and TF trapped when uncounted, 1 otherwise.  The
 * counted TF run loses its traps to KVM's guest debugging, which hides
 * the guest's TF (vpmu_exact(7), CAVEATS); vpmu-run warns.
 */
#include <vpmu-guest/runtime.h>

#define MSR_PMC0		0xc1
#define MSR_EVTSEL0		0x186
#define MSR_GLOBAL_CTRL		0x38f
#define EVTSEL_OS_INSNS		0x4200c0ull	/* instructions, OS, EN */
#define RFLAGS_TF		0x100ull
#define RFLAGS_RF		0x10000ull

static volatile uint64_t b0;

static void
on_db(unsigned cpu, struct vg_frame *f)
{
	uint64_t dr6;

	(void)cpu;
	__asm__ volatile("mov %%dr6, %0" : "=r"(dr6));
	b0 |= dr6 & 1;
	__asm__ volatile("mov %0, %%dr6" : : "r"(0xffff0ff0ull));
	if (dr6 & 0xf)
		f->rflags |= RFLAGS_RF;		/* an instruction breakpoint is a fault */
}

/* A breakpoint in DR0 on the middle instruction of nine NOPs. */
static void
probe_bp(void)
{
	uint64_t target;

	/* one statement, a local label: the compiler may inline this twice */
	__asm__ volatile("lea 1f(%%rip), %0\n\t"
	    "mov %0, %%dr0\n\t"
	    "mov %1, %%dr7\n\t"			/* L0, execute, 1 byte */
	    "nop\n\tnop\n\tnop\n\tnop\n"
	    "1:\tnop\n\tnop\n\tnop\n\tnop\n\tnop"
	    : "=&r"(target) : "r"(0x401ull) : "memory");
	__asm__ volatile("mov %0, %%dr7" : : "r"(0x400ull));
}

/* TF set by POPFQ for eight NOPs, then cleared. */
static void
probe_tf(void)
{
	__asm__ volatile("pushfq\n\torq $0x100, (%%rsp)\n\tpopfq\n\t"
	    "nop\n\tnop\n\tnop\n\tnop\n\tnop\n\tnop\n\tnop\n\tnop\n\t"
	    "pushfq\n\tandq $~0x100, (%%rsp)\n\tpopfq" : : : "memory", "cc");
}

static uint64_t
probe(void (*fn)(void), bool counted, uint64_t *pmc)
{
	uint64_t before = vg_debug_count();

	vg_wrmsr(MSR_PMC0, 0);
	vg_wrmsr(MSR_GLOBAL_CTRL, 1);
	if (counted)
		vg_wrmsr(MSR_EVTSEL0, EVTSEL_OS_INSNS);
	fn();
	vg_wrmsr(MSR_EVTSEL0, 0);
	if (pmc != NULL)
		*pmc = vg_rdmsr(MSR_PMC0);
	return (vg_debug_count() - before);
}

int
main(unsigned cpu)
{
	uint64_t h0, h1, t0, t1, d0, d1, pbp = 0, ptf = 0;

	if (cpu != 0)
		return (0);
	vg_set_debug_handler(on_db);
	b0 = 0;
	h0 = probe(probe_bp, false, NULL);
	d0 = b0;
	b0 = 0;
	h1 = probe(probe_bp, true, &pbp);
	d1 = b0;
	t0 = probe(probe_tf, false, NULL);
	t1 = probe(probe_tf, true, &ptf);
	vg_printf("own_debug: bp %lu/%lu dr6 %lu/%lu tf %lu/%lu pmc %lu %lu\n",
	    (unsigned long)h0, (unsigned long)h1, (unsigned long)d0, (unsigned long)d1,
	    (unsigned long)t0, (unsigned long)t1, (unsigned long)pbp, (unsigned long)ptf);
	/*
	 * The traps of the guest's own TF under KVM's guest debugging are
	 * not required here (vpmu_exact(7) CAVEATS): vpmu-run reports them.
	 */
	return (h0 == 1 && h1 == 1 && d0 == 1 && d1 == 1 && t0 != 0 ? 0 : 1);
}
