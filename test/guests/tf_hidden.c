/*
 * tf_hidden.c -- single-stepping is invisible to the guest (issue 11,
 * vpmu_exact(7) HOST FACTS): with PMC0 counting instructions on the exact
 * source (the vCPU stepped, or run in blocks), PUSHFQ pushes RFLAGS
 * without TF, and the PMI's NMI frame (PMC0 overflows a few instructions
 * on) holds RFLAGS without TF too.
 * Prints "tf_hidden: pushf 0 frame 0 nmis 1" and exits 0, or exits 1.
 */
#include <vpmu-guest/runtime.h>

#define MSR_PMC0		0xc1
#define MSR_EVTSEL0		0x186
#define MSR_GLOBAL_CTRL		0x38f
#define MSR_GLOBAL_OVF_CTRL	0x390
#define EVTSEL_PMI		0x5300c0ull	/* instructions, USR, OS, INT, EN */
#define RFLAGS_TF		0x100ull

static volatile uint64_t frame_fl = ~0ull;

static void
nmi(unsigned cpu, struct vg_frame *f)
{
	(void)cpu;
	frame_fl = f->rflags;
}

int
main(unsigned cpu)
{
	uint64_t fl;

	if (cpu != 0)
		return (0);
	vg_set_nmi_handler(nmi);
	vg_wrmsr(MSR_PMC0, (1ull << 48) - 8);
	vg_wrmsr(MSR_GLOBAL_CTRL, 1);
	vg_wrmsr(MSR_EVTSEL0, EVTSEL_PMI);
	__asm__ volatile("pushfq\n\tpop %0\n\t"
	    "nop\n\tnop\n\tnop\n\tnop\n\tnop\n\tnop\n\tnop\n\tnop\n\tnop\n\tnop"
	    : "=r"(fl) : : "memory");
	vg_wrmsr(MSR_EVTSEL0, 0);
	vg_wrmsr(MSR_GLOBAL_OVF_CTRL, 1);
	vg_printf("tf_hidden: pushf %d frame %d nmis %lu\n", (fl & RFLAGS_TF) != 0,
	    (frame_fl & RFLAGS_TF) != 0, (unsigned long)vg_nmi_count());
	return ((fl & RFLAGS_TF) || (frame_fl & RFLAGS_TF) || frame_fl == ~0ull ? 1 : 0);
}
