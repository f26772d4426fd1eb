/*
 * compose.c -- a guest for examples/embed: the VMM's own MSR filter and
 * hardware breakpoint next to libvpmu's (amd-v2 model, exact source).
 *
 * The VMM (embed.c) answers IA32_MISC_ENABLE (reads and writes), drops
 * writes to IA32_TSC and answers reads of its own MSR 0x4e4d0000; libvpmu
 * answers the PMU MSRs.  KVM, had either MSR reached it, answers otherwise:
 * with its vPMU off IA32_MISC_ENABLE has no EMON bit, a TSC write moves
 * the TSC, 0x4e4d0000 does not exist.
 *
 * loop(): 10 rounds over the global label embed_bp, which the test gives
 * embed -b as a hardware breakpoint.  Between the enabling and the
 * disabling WRMSR of PERF_CTL0 (retired instructions, OS) exactly
 * 1 (the enabling WRMSR) + 1 (mov) + 10 x 3 (nop, dec, jnz) + 1 (xor) = 33
 * instructions retire, breakpoint or not.  Run once with the counter off,
 * once on: 20 breakpoint hits.  Exit status: the number of failures.
 */
#include <vpmu-guest/runtime.h>

#define MSR_TSC		0x10
#define MSR_MISC_ENABLE	0x1a0
#define MSR_EMBED_ID	0x4e4d0000u
#define EMBED_ID	0x656d626564ul
#define MISC_VMM	((1ul << 7) | (1ul << 11) | (1ul << 12))	/* EMON, BTS/PEBS n/a */
#define PERF_CTL0	0xc0010200u
#define PERF_CTR0	0xc0010201u
#define CTL_INSNS	(0xc0ul | 1ul << 17 | 1ul << 22)	/* retired instructions, OS, EN */

static int failed;

static void
check(int ok, const char *what, uint64_t got, uint64_t want)
{
	if (ok)
		vg_printf("ok - %s\n", what);
	else
		vg_printf("not ok - %s: got %#lx, want %#lx\n", what, (unsigned long)got,
		    (unsigned long)want);
	failed += !ok;
}

/*
 * embed_loop(lo, hi): PERF_CTL0 = hi:lo, the loop, PERF_CTL0 = 0 (hi must
 * be 0).  A function of its own in assembly, so the label exists once
 * whatever the compiler inlines or clones.
 */
void embed_loop(uint32_t lo, uint32_t hi);
__asm__(
    ".text\n"
    ".globl embed_loop\n"
    "embed_loop:\n\t"
    "mov %edi, %eax\n\t"
    "mov %esi, %edx\n\t"
    "mov $0xc0010200, %ecx\n\t"	/* PERF_CTL0 */
    "wrmsr\n\t"				/* enable: counted */
    "mov $10, %esi\n"
    "1:\n"
    ".globl embed_bp\n"
    "embed_bp:\n\t"
    "nop\n\t"
    "dec %esi\n\t"
    "jnz 1b\n\t"
    "xor %eax, %eax\n\t"
    "wrmsr\n\t"				/* disable: not counted */
    "ret\n");

/* The loop with PERF_CTL0 = ctl; the counter's value after. */
static uint64_t
loop(uint64_t ctl)
{
	vg_wrmsr(PERF_CTR0, 0);
	embed_loop((uint32_t)ctl, (uint32_t)(ctl >> 32));
	return (vg_rdmsr(PERF_CTR0));
}

int
main(unsigned cpu)
{
	uint64_t v, t0, t1;

	(void)cpu;
	v = vg_rdmsr(MSR_MISC_ENABLE);
	check(v == MISC_VMM, "misc_enable_read_by_the_vmm", v, MISC_VMM);
	vg_wrmsr(MSR_MISC_ENABLE, v | 1);	/* fast strings */
	v = vg_rdmsr(MSR_MISC_ENABLE);
	check(v == (MISC_VMM | 1), "misc_enable_written_to_the_vmm", v, MISC_VMM | 1);
	v = vg_rdmsr(MSR_EMBED_ID);
	check(v == EMBED_ID, "vmm_id_msr_read_by_the_vmm", v, EMBED_ID);
	check(vg_wrmsr_safe(MSR_EMBED_ID, 1) == VG_GP, "vmm_id_msr_write_faults_in_kvm", 0, 0);
	t0 = vg_rdtsc();
	vg_wrmsr(MSR_TSC, 0);
	t1 = vg_rdtsc();
	check(t1 > t0, "tsc_write_dropped_by_the_vmm", t1, t0);

	/* The PMU MSRs are libvpmu's, among the VMM's ranges. */
	vg_wrmsr(PERF_CTR0, 0x123456789ul);
	v = vg_rdmsr(PERF_CTR0);
	check(v == 0x123456789ul, "perf_ctr0_written_and_read_through_libvpmu", v, 0x123456789ul);
	v = loop(CTL_INSNS & ~(1ul << 22));
	check(v == 0, "loop_not_counted_with_the_counter_off", v, 0);
	v = loop(CTL_INSNS);
	check(v == 33, "loop_counted_exactly", v, 33);
	vg_printf("%d passed, %d failed\n", 8 - failed, failed);
	return (failed);
}
