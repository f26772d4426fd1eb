/*
 * hlt_counting.c -- a HLT retired while a counter counts (issue 11): the
 * run ends as it does without counting, and the count is exact.
 *
 * PMC0 counts instructions (OS and USR), started by its select's WRMSR;
 * then CLI and HLT.  Counted: the enabling WRMSR, CLI and HLT, exactly 3.
 * With interrupts off nothing wakes the vCPU: vpmu-run ends the run
 * (status 3, "HLT with interrupts off") with RIP right after the HLT, and
 * its report shows the counter's value (hlt_counting.sh checks both).
 * Built with COUNT=0 the select's EN bit stays clear: the floor, the same
 * run without counting.
 */
#include <vpmu-guest/runtime.h>

#define MSR_PMC0		0xc1
#define MSR_EVTSEL0		0x186
#define MSR_GLOBAL_CTRL		0x38f
#define EVTSEL_INSNS		0x0300c0ull	/* instructions retired, USR, OS */
#define EVTSEL_EN		(1ull << 22)

int
main(unsigned cpu)
{
	uint64_t sel = EVTSEL_INSNS | (COUNT ? EVTSEL_EN : 0);

	if (cpu != 0)
		return (0);
	vg_wrmsr(MSR_PMC0, 0);
	vg_wrmsr(MSR_GLOBAL_CTRL, 1);
	__asm__ volatile("wrmsr\n\t"
	    "cli\n\t"
	    "hlt\n\t"
	    ".globl hlt_counting_after\n"
	    "hlt_counting_after:"
	    : : "c"(MSR_EVTSEL0), "a"((uint32_t)sel), "d"((uint32_t)(sel >> 32)) : "memory");
	vg_printf("hlt_counting: still running after cli; hlt\n");
	return (99);
}
