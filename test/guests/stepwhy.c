/*
 * stepwhy.c -- instructions that end every block of the exact source, a
 * known number of times each, while the guest's PMU counts instructions
 * (an Intel model: PERFEVTSEL0, both rings), so that vpmu-run's report
 * gives the single steps by reason (stepwhy.sh checks them exactly in
 * block mode, and all of them as step-mode in step mode).  Each of the
 * ITERS rounds runs, in one asm statement: CPUID (system), LFENCE (fence),
 * REP MOVSB of one byte (inside a block: no step), DIV (div), PUSHFQ and
 * POPFQ (flags), MOV to DS (segment), a CALL through a register (known
 * when the run starts: the run goes through it, no step), one through
 * memory (completed at the block's end with its push: no step) and one
 * through memory with an FS override (call-indirect: the source does not
 * add segment bases; the runtime's FS base is 0) of a function that
 * returns.  Prints
 * "stepwhy: done, N instructions", N the same in both modes.
 */
#include <vpmu-guest/runtime.h>

#ifndef ITERS
#define ITERS	50
#endif

#define EVTSEL0		0x186u
#define PMC0		0xC1u
#define EVTSEL_EN	(1u << 22 | 1u << 17 | 1u << 16)	/* EN, OS, USR */
#define INSTRUCTIONS	0x00C0u

void stepwhy_callee(void);
__asm__(".text\n"
    ".globl stepwhy_callee\n"
    "stepwhy_callee:\n\t"
    "ret\n");

int
main(unsigned cpu)
{
	static volatile uint8_t from = 1, to;
	uint64_t i, ds;

	if (cpu != 0)
		return (0);
	__asm__ volatile("mov %%ds, %0" : "=r"(ds));
	vg_wrmsr(PMC0, 0);
	vg_wrmsr(EVTSEL0, EVTSEL_EN | INSTRUCTIONS);
	for (i = 0; i < ITERS; i++) {
		uint64_t a = 0, b, c, d = 0, s = (uintptr_t)&from, t = (uintptr_t)&to;
		void (*fn)(void) = stepwhy_callee;

		__asm__ volatile(
		    "cpuid\n\t"
		    "lfence\n\t"
		    "mov $1, %%ecx\n\t"
		    "rep movsb\n\t"
		    "mov $7, %%eax\n\t"
		    "xor %%edx, %%edx\n\t"
		    "mov $3, %%ecx\n\t"
		    "div %%rcx\n\t"
		    "pushfq\n\t"
		    "popfq\n\t"
		    "mov %[ds], %%ds\n\t"
		    "call *%[fn]\n\t"
		    "call *%[fnm]\n\t"
		    "call *%%fs:(%[fnp])"
		    : "+a"(a), "=b"(b), "=c"(c), "+d"(d), "+S"(s), "+D"(t)
		    : [ds] "r"(ds), [fn] "r"(fn), [fnm] "m"(fn), [fnp] "r"(&fn)
		    : "memory", "cc");
	}
	vg_wrmsr(EVTSEL0, 0);
	vg_printf("stepwhy: done, %lu instructions\n", (unsigned long)vg_rdmsr(PMC0));
	return (0);
}
