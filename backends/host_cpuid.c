/*
 * host_cpuid.c -- the CPU and its PMU as CPUID describes them.
 *
 * libcpuid identifies the CPU and dumps the raw leaves but does not decode
 * the PMU leaves, so libvpmu decodes them here.  Two leaves are not in its
 * dump and are executed directly with cpu_exec_cpuid(): 0x40000000 (the
 * dump has no hypervisor range) and 0x80000022 (the extended dump stops at
 * 0x8000001F).
 *
 * It names nothing of host.c: host.c, host_report.c, kvm_mode.c and the
 * perf source (perf.c) call it, for the facts and the decoders.
 */
#include <string.h>

#include <libcpuid.h>

#include "arch.h"
#include "host_internal.h"

enum { R_EAX, R_EBX, R_ECX, R_EDX };

#define LEAF_PMU_INTEL		0x0Au
#define LEAF_EXT_FEATURES	0x80000001u
#define LEAF_EXT_PERFMON	0x80000022u
#define LEAF_HYPERVISOR		0x40000000u

/* The leaves read from libcpuid's dump must be inside it. */
_Static_assert(LEAF_PMU_INTEL < MAX_CPUID_LEVEL, "leaf 0xA outside the dump");
_Static_assert(LEAF_EXT_FEATURES - 0x80000000u < MAX_EXT_CPUID_LEVEL,
    "leaf 0x80000001 outside the dump");

int
vpmu__host_is_amd(const struct vpmu_host_cpu *cpu)
{
	return (strcmp(cpu->vendor, "AuthenticAMD") == 0 ||
	    strcmp(cpu->vendor, "HygonGenuine") == 0);
}

/* Leaf 0xA through the core's decoder (arch.h), into the probe's terms. */
void
vpmu__intel_pmu_decode(const uint32_t regs[4], struct vpmu_host_intel_pmu *out)
{
	struct vpmu__cpuid_0a l;

	vpmu__cpuid_0a_decode(regs, &l);
	memset(out, 0, sizeof(*out));
	out->version = (uint8_t)l.version;
	out->gp_count = (uint8_t)l.gp;
	out->gp_width = (uint8_t)l.gp_width;
	out->ebx_length = (uint8_t)l.ebx_length;
	out->events_unavailable = l.unavailable;
	out->fixed_count = (uint8_t)l.fixed;
	out->fixed_width = (uint8_t)l.fixed_width;
	out->anythread_deprecated = l.anythread_deprecated;
	/*
	 * SDM: "FxCtr[i]_is_supported := ECX[i] || (EDX[4:0] > i)"; ECX is
	 * the bitmap from version 5 on (0 before it, as decoded), and EDX is
	 * reserved in version 1.  fixed is five bits, so the shift stays
	 * below 32.
	 */
	if (l.version >= 2)
		out->fixed_mask = ((1u << l.fixed) - 1) | l.fixed_bitmap;
}

void
vpmu__amd_pmu_decode(uint32_t max_ext_leaf, uint32_t ext1_ecx,
    const uint32_t leaf22[4], struct vpmu_host_amd_pmu *out)
{
	union amd_cpuid_80000001_ecx ecx = { .full = ext1_ecx };
	struct vpmu__cpuid_80000022 l22;

	memset(out, 0, sizeof(*out));
	if (max_ext_leaf >= LEAF_EXT_FEATURES) {
		out->core_ext = ecx.split.perf_ctr_ext_core;
		out->nb_ext = ecx.split.perf_ctr_ext_nb;
		out->llc_ext = ecx.split.perf_ctr_ext_llc;
	}
	if (max_ext_leaf >= LEAF_EXT_PERFMON) {
		vpmu__cpuid_80000022_decode(leaf22, &l22);	/* the core's (arch.h) */
		out->perfmon_v2 = l22.perfmon_v2;
		out->lbr_stack = l22.lbr_stack;
		out->num_core = (uint8_t)l22.num_core;
		out->lbr_v2_depth = (uint8_t)l22.lbr_v2_depth;
		out->num_nb = (uint8_t)l22.num_nb;
	}
	/*
	 * APM vol. 2, "Performance Monitoring Counters": PerfMonV2 gives the
	 * count in NumPerfCtrCore; otherwise PerfCtrExtCore means six
	 * counters, and without it there are the four legacy ones.
	 */
	if (out->perfmon_v2 && out->num_core != 0)
		out->gp_count = out->num_core;
	else if (out->core_ext)
		out->gp_count = VPMU_AMD_MAX_GP;
	else
		out->gp_count = VPMU_AMD_LEGACY_GP;
	out->gp_width = AMD_COUNTER_WIDTH;
}

/* "KVMKVMKVM\0\0\0" and friends: twelve bytes, not always terminated. */
static void
hv_signature(struct vpmu_host_cpu *cpu)
{
	uint32_t regs[4];

	cpu_exec_cpuid(LEAF_HYPERVISOR, regs);
	cpu->hv_max_leaf = regs[R_EAX];
	memcpy(cpu->hv_signature + 0, &regs[R_EBX], 4);
	memcpy(cpu->hv_signature + 4, &regs[R_ECX], 4);
	memcpy(cpu->hv_signature + 8, &regs[R_EDX], 4);
	cpu->hv_signature[12] = '\0';
}

static void
copy_str(char *dst, size_t len, const char *src)
{
	snprintf(dst, len, "%s", src);
}

void
vpmu__host_probe_cpuid(struct vpmu_host_info *info)
{
	struct vpmu_host_cpu *cpu = &info->cpu;
	struct cpu_raw_data_t raw;
	struct cpu_id_t id;

	if (!cpuid_present()) {
		copy_str(cpu->cpuid_error, sizeof(cpu->cpuid_error),
		    "the CPUID instruction is not available");
		return;
	}
	if (cpuid_get_raw_data(&raw) != 0) {
		copy_str(cpu->cpuid_error, sizeof(cpu->cpuid_error),
		    cpuid_error());
		return;
	}
	cpu->max_leaf = raw.basic_cpuid[0][R_EAX];
	cpu->max_ext_leaf = raw.ext_cpuid[0][R_EAX];

	if (cpu_identify(&raw, &id) != 0) {
		copy_str(cpu->cpuid_error, sizeof(cpu->cpuid_error),
		    cpuid_error());
		return;
	}
	cpu->cpuid_ok = 1;
	copy_str(cpu->vendor, sizeof(cpu->vendor), id.vendor_str);
	copy_str(cpu->brand, sizeof(cpu->brand), id.brand_str);
	cpu->family = (uint32_t)id.ext_family;
	cpu->model = (uint32_t)id.ext_model;
	cpu->stepping = (uint32_t)id.stepping;
	cpu->pdcm = id.flags[CPU_FEATURE_PDCM] != 0;
	cpu->hypervisor = id.flags[CPU_FEATURE_HYPERVISOR] != 0;
	/*
	 * Only a guest may ask 0x40000000: on bare metal an Intel CPU answers
	 * an unknown leaf with its highest basic leaf, which reads as junk.
	 */
	if (cpu->hypervisor)
		hv_signature(cpu);

	/*
	 * Above the maximum leaf the registers mean nothing (see above), so
	 * the raw dump counts only below it.  AMD reserves leaf 0xA (it reads
	 * 0); decoding it anyway keeps the report uniform.
	 */
	if (cpu->max_leaf >= LEAF_PMU_INTEL)
		memcpy(cpu->leaf_0a, raw.basic_cpuid[LEAF_PMU_INTEL],
		    sizeof(cpu->leaf_0a));
	vpmu__intel_pmu_decode(cpu->leaf_0a, &info->intel);

	if (!vpmu__host_is_amd(cpu))
		return;
	if (cpu->max_ext_leaf >= LEAF_EXT_FEATURES)
		cpu->leaf_80000001_ecx =
		    raw.ext_cpuid[LEAF_EXT_FEATURES - 0x80000000u][R_ECX];
	if (cpu->max_ext_leaf >= LEAF_EXT_PERFMON)
		cpu_exec_cpuid(LEAF_EXT_PERFMON, cpu->leaf_80000022);
	vpmu__amd_pmu_decode(cpu->max_ext_leaf, cpu->leaf_80000001_ecx,
	    cpu->leaf_80000022, &info->amd);
}
