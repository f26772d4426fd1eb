/*
 * none.c -- the "none" model: CPUID advertises no PMU and every PMU MSR of
 * either vendor #GPs.
 */
#include "conf.h"

static const uint32_t pmu_msrs[] = {
	0xC1, 0xC8, 0x186, 0x18D, 0x309, 0x30C, 0x345, 0x38D, 0x38E, 0x38F, 0x390,
	0x4C1, 0x4C8, 0xC0010000, 0xC0010007, 0xC0010200, 0xC001020B,
	0xC0000300, 0xC0000303,
};

int
main(unsigned cpu)
{
	uint32_t r[4];
	unsigned i;
	int ok = 1;

	if (cpu != 0)
		return (0);
	vg_cpuid(0xA, 0, r);
	vg_printf("cpuid 0xa: eax=0x%x ebx=0x%x ecx=0x%x edx=0x%x\n", r[0], r[1], r[2], r[3]);
	CHECK("cpuid_0xa_is_all_zero", (r[0] | r[1] | r[2] | r[3]) == 0, "not zero");
	vg_cpuid(0x80000022, 0, r);
	CHECK("cpuid_0x80000022_is_all_zero", (r[0] | r[1] | r[2] | r[3]) == 0, "not zero");
	vg_cpuid(0x80000001, 0, r);
	CHECK("cpuid_perfctr_core_clear", !((r[2] >> 23) & 1), "set");
	vg_cpuid(0x1, 0, r);
	CHECK("cpuid_pdcm_clear", !((r[2] >> 15) & 1), "set");
	for (i = 0; i < sizeof(pmu_msrs) / sizeof(pmu_msrs[0]); i++)
		ok &= rd_gp(pmu_msrs[i]) && wr_gp(pmu_msrs[i], 0);
	CHECK("every_pmu_msr_gp", ok, "an MSR did not #GP");
	return (conf_done());
}
