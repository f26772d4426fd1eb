/*
 * gpmu_msr.h -- the architectural facts of the guest-visible PMU's
 * registers, for the core's guest PMU (gpmu.h, intel.c, amd.c) and for
 * the KVM glue's kvm mode (backends/kvm_mode.c), which reads the same
 * registers from KVM: the PMU MSRs' numbers and the event-select bits.
 * Constants only; struct gpmu stays gpmu.h's.
 */
#ifndef VPMU_GPMU_MSR_H
#define VPMU_GPMU_MSR_H

/*
 * The first MSR of each PMU MSR family (SDM Vol. 4; APM Vol. 2 13.2): the
 * vendors' range tables (intel.c, amd.c) and kvm mode's list
 * (backends/kvm_mode.c) name them from here.
 */
#define GPMU_MSR_PMC0		0x0C1u		/* IA32_PMCx */
#define GPMU_MSR_PERFEVTSEL0	0x186u		/* IA32_PERFEVTSELx */
#define GPMU_MSR_FIXED_CTR0	0x309u		/* IA32_FIXED_CTRx */
#define GPMU_MSR_PERF_CAP	0x345u		/* IA32_PERF_CAPABILITIES */
#define GPMU_MSR_FIXED_CTR_CTRL	0x38Du		/* then GLOBAL_STATUS, _CTRL, _OVF_CTRL */
#define GPMU_MSR_GLOBAL_CTRL	0x38Fu		/* IA32_PERF_GLOBAL_CTRL */
#define GPMU_MSR_A_PMC0		0x4C1u		/* IA32_A_PMCx */
#define GPMU_MSR_K7_EVNTSEL0	0xC0010000u	/* PerfEvtSel0-3 */
#define GPMU_MSR_K7_PERFCTR0	0xC0010004u	/* PerfCtr0-3 */
#define GPMU_MSR_PERF_CTL0	0xC0010200u	/* PERF_CTLn at +2n, PERF_CTRn at +2n+1 */
#define GPMU_MSR_AMD_GLOBAL	0xC0000300u	/* PerfCntrGlobalStatus, then _Ctl, ... */
#define GPMU_MSR_AMD_GLOBAL_CTL	0xC0000301u	/* PerfCntrGlobalCtl */

/*
 * The event-select bits both vendors share (SDM Vol. 3B 20.2.1.1, APM
 * Vol. 2 13.2.1): the qualifiers, the interrupt and the enable.
 */
#define SEL_USR		(1ull << 16)
#define SEL_OS		(1ull << 17)
#define SEL_EDGE	(1ull << 18)
#define SEL_INT		(1ull << 20)
#define SEL_EN		(1ull << 22)
#define SEL_INV		(1ull << 23)
#define SEL_CMASK(s)	(((s) >> 24) & 0xFF)

#endif /* VPMU_GPMU_MSR_H */
