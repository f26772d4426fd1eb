/*
 * host_internal.h -- shared by host.c, host_cpuid.c, host_perf.c,
 * host_report.c, backends/kvm_probe.c, kvm_mode.c, the perf source (perf.c)
 * and test/unit/test_host.c.
 *
 * The CPUID decoders are pure (registers in, decoded struct out) so the
 * tests can feed them register values of CPUs this machine is not.
 */
#ifndef VPMU_HOST_INTERNAL_H
#define VPMU_HOST_INTERNAL_H

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include <vpmu/host.h>

#include "internal.h"

/* ---- CPUID register layouts ---------------------------------------------
 * Bit-fields are allocated from the least significant bit on every x86 ABI
 * gcc and clang support, so each union below reads like the SDM/APM table.
 */

/* AMD APM vol. 3, CPUID Fn8000_0001_ECX (the PMU bits only). */
union amd_cpuid_80000001_ecx {
	uint32_t full;
	struct {
		uint32_t other1:23;
		uint32_t perf_ctr_ext_core:1;
		uint32_t perf_ctr_ext_nb:1;
		uint32_t other2:3;
		uint32_t perf_ctr_ext_llc:1;
		uint32_t other3:3;
	} split;
};

/* Intel's leaf 0AH and AMD's Fn8000_0022 are the core's (libvpmu/arch.h). */

/*
 * AMD counters without PerfMonV2's NumPerfCtrCore: the four legacy (K7)
 * counters of every AMD CPU of family 6 and later, six with the core
 * extension (Fn8000_0001_ECX[23]): <vpmu/model.h>'s VPMU_AMD_LEGACY_GP
 * and VPMU_AMD_MAX_GP.  All AMD counters are 48 bits wide.
 */
#define AMD_COUNTER_WIDTH	48

/* ---- the host object ----------------------------------------------------- */

enum vpmu__host_source {
#define SOURCE_ENUM(id, name)	VPMU__HOST_##id,
	VPMU_HOST_SOURCES(SOURCE_ENUM)
#undef SOURCE_ENUM
	VPMU__HOST_NSOURCES
};
extern const char *const vpmu__host_source_names[VPMU__HOST_NSOURCES];

#define VPMU__HOST_WHY_MAX	512

/* Facts and verdicts, all fixed at vpmu_host_open(): read-only after. */
struct vpmu_host {
	struct vpmu_host_info info;
	struct {
		int	err;			/* 0, ENODEV or EOPNOTSUPP */
		char	why[VPMU__HOST_WHY_MAX];/* reason, or what it uses */
	} verdict[VPMU__HOST_NSOURCES];
};

/*
 * The verdict for source (enum vpmu__host_source) on the facts hi, as
 * vpmu_host_open() judges the probed ones; why gets the reason.
 */
int	vpmu__host_judge(const struct vpmu_host_info *hi, int source, char *why,
	    size_t whylen);

/* ---- decoders (host_cpuid.c) --------------------------------------------- */

/* Leaf 0xA: regs are EAX, EBX, ECX, EDX (arch.h's decoder, in these terms). */
void	vpmu__intel_pmu_decode(const uint32_t regs[4],
	    struct vpmu_host_intel_pmu *out);
/*
 * AMD: max_ext_leaf is CPUID.80000000h:EAX, which says whether leaf
 * 0x80000022 exists; leaf22 its EAX, EBX, ECX, EDX.
 */
void	vpmu__amd_pmu_decode(uint32_t max_ext_leaf, uint32_t ext1_ecx,
	    const uint32_t leaf22[4], struct vpmu_host_amd_pmu *out);

/* ---- probes: each fills its part of info and cannot fail ---------------- */

void	vpmu__host_probe_cpuid(struct vpmu_host_info *info);
void	vpmu__host_probe_kvm(struct vpmu_host_info *info);
void	vpmu__host_probe_perf(struct vpmu_host_info *info);

/* ---- perf's sysfs, read in host_perf.c alone (perf.c uses it too) -------- */

#define VPMU_PERF_SYSFS		"/sys/bus/event_source/devices"

/*
 * The name the core PMU registered under ("cpu"; "cpu_core" or "cpu_atom"
 * on hybrid Intel parts), or NULL if the kernel drives none.
 */
const char *vpmu__perf_core_pmu(void);

/* How far vpmu__perf_msr_tsc() got, in order. */
enum {
	VPMU_PERF_MSR_NONE,	/* no msr PMU (or its type is not a number) */
	VPMU_PERF_MSR_NO_TSC,	/* the msr PMU lists no tsc event */
	VPMU_PERF_MSR_BAD_TSC,	/* a term of its tsc event is not understood */
	VPMU_PERF_MSR_OK,
};
/*
 * The msr PMU's perf type (-1 with VPMU_PERF_MSR_NONE) and its tsc event's
 * config (its terms placed where msr/format/ says).  why gets the reason, naming the file and the errno; "ok" with
 * VPMU_PERF_MSR_OK.
 */
int	vpmu__perf_msr_tsc(int32_t *type, uint64_t *config, char *why,
	    size_t whylen);

/* The KVM capabilities the probe asks for, NULL-name terminated. */
struct vpmu__kvm_cap {
	int	    cap;		/* KVM_CAP_* */
	const char *name;		/* "KVM_CAP_X86_USER_SPACE_MSR" */
	const char *key;		/* JSON key, "user_space_msr" */
	size_t	    off;		/* its int32_t in struct vpmu_host_kvm */
	int	    is_mask;		/* the answer is a bitmask: print in hex */
};
extern const struct vpmu__kvm_cap vpmu__kvm_caps[];
int32_t	vpmu__kvm_cap_value(const struct vpmu_host_kvm *kvm,
	    const struct vpmu__kvm_cap *c);

/* ---- helpers -------------------------------------------------------------- */

/* vpmu__errname(), VPMU_ERRNAME_MAX: the core's one errno table (internal.h). */
/* AMD and Hygon describe their counters in the extended leaves. */
int	vpmu__host_is_amd(const struct vpmu_host_cpu *cpu);		/* host_cpuid.c */
/*
 * s as a JSON string with its quotes.  Control bytes other than \n and \t,
 * and bytes >= 0x7f (read as Latin-1), become \u00XX, so the output is
 * valid JSON whatever the bytes.
 */
void	vpmu__json_string(FILE *f, const char *s);			/* host_report.c */

#endif /* VPMU_HOST_INTERNAL_H */
