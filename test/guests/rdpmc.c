/*
 * rdpmc.c -- RDPMC answered by libvpmu on any source, on every vCPU at
 * once: KVM injects #GP for it (its own vPMU is off), libvpmu catches that
 * at the guest's #GP handler and answers from the model.  Each vCPU writes
 * its counters and reads them back a thousand times with RDPMC (the value
 * RDMSR gives; GP indexes and, on Intel, fixed ones with bit 30), gets #GP
 * for indexes the model lacks, and a #GP that is not RDPMC's (RDMSR of no
 * MSR) still reaches its handler.  The stack pointer is the same after all
 * of it.  vCPU 0 exits 0 after the barrier; any failure exits 1.
 */
#include <vpmu-guest/runtime.h>

#define CHECK(cond, ...) do {						\
	if (!(cond)) {							\
		vg_printf("vCPU %u: FAIL %s: ", cpu, #cond);		\
		vg_printf(__VA_ARGS__);					\
		vg_putc('\n');						\
		vg_exit(1);						\
	}								\
} while (0)

static uint64_t
rsp(void)
{
	uint64_t v;

	__asm__ volatile("mov %%rsp, %0" : "=r"(v));
	return (v);
}

int
main(unsigned cpu)
{
	uint32_t r[4];
	uint64_t v, sp;
	unsigned i, n, ngp, nfixed = 0, round;
	int intel;

	vg_cpuid(0xA, 0, r);			/* Intel models only have it */
	intel = (r[0] & 0xFF) != 0;
	if (intel) {
		ngp = (r[0] >> 8) & 0xFF;
		nfixed = (r[0] & 0xFF) >= 2 ? r[3] & 0x1F : 0;
	} else {
		vg_cpuid(0x80000001, 0, r);
		ngp = (r[2] >> 23) & 1 ? 6 : 4;
		vg_cpuid(0x80000000, 0, r);
		if (r[0] >= 0x80000022) {
			vg_cpuid(0x80000022, 0, r);
			if (r[0] & 1)
				ngp = r[1] & 0xF;
		}
	}
	sp = rsp();
	for (round = 0; round < 1000; round++) {
		for (i = 0; i < ngp; i++) {
			uint32_t msr = intel ? 0xC1 + i : 0xC0010004 + i;

			if (!intel && ngp > 4)
				msr = 0xC0010201 + 2 * i;
			vg_wrmsr(msr, 0x1000 * (cpu + 1) + round + i);
			CHECK(vg_rdpmc_safe(i, &v) == 0 && v == vg_rdmsr(msr),
			    "round %u counter %u: %#lx", round, i, (unsigned long)v);
		}
		for (i = 0; i < nfixed; i++) {
			vg_wrmsr(0x309 + i, 0x2000 * (cpu + 1) + round + i);
			CHECK(vg_rdpmc_safe(i | 1u << 30, &v) == 0 &&
			    v == 0x2000 * (cpu + 1) + round + i,
			    "round %u fixed %u: %#lx", round, i, (unsigned long)v);
		}
		n = vg_rdpmc_safe(ngp, &v);
		CHECK(n == VG_GP, "RDPMC(%u): vector %u", ngp, n);
		n = vg_rdmsr_safe(0xdeadbeefu, &v);
		CHECK(n == VG_GP, "RDMSR 0xdeadbeef: vector %u", n);
	}
	CHECK(rsp() == sp, "RSP %#lx, was %#lx", (unsigned long)rsp(), (unsigned long)sp);
	vg_printf("vCPU %u: rdpmc ok (%u counters, %u fixed)\n", cpu, ngp, nfixed);
	vg_barrier();
	return (0);
}
