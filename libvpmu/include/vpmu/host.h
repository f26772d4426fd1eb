/*
 * <vpmu/host.h> -- what the host offers: CPU PMU, KVM, perf_event.
 *
 * vpmu_host_open() probes the machine once: CPUID (through libcpuid, with
 * the PMU leaves decoded by libvpmu), /dev/kvm and its capabilities, and
 * perf_event_open(2).  A missing feature is a fact recorded in struct
 * vpmu_host_info, not an error.  vpmu_host_source_status() turns the facts
 * into a verdict per counter source with the exact reason; vpmu-info(1)
 * prints all of it.  See vpmu_host(3).
 *
 * The probe looks at the CPU it runs on; on a hybrid CPU (P- and E-cores)
 * leaf 0xA describes that core type only.
 */
#ifndef VPMU_HOST_H
#define VPMU_HOST_H

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include <vpmu/export.h>

#ifdef __cplusplus
extern "C" {
#endif

typedef struct vpmu_host vpmu_host;

/* The source names vpmu_host_source_status() knows, in report order. */
#define VPMU_HOST_SOURCES(X)						\
	X(SYNTHETIC,		"synthetic")	/* scripted, deterministic */	\
	X(PERF,			"perf")		/* perf software events, msr/tsc */ \
	X(PERF_HW,		"perf-hw")	/* perf hardware events */	\
	X(EXACT,		"exact")	/* KVM single-step counting */	\
	X(KVM_PASSTHROUGH,	"kvm-passthrough") /* KVM's own vPMU */

/* What libcpuid and CPUID leaves 0, 1, 0x80000000 and 0x40000000 say. */
struct vpmu_host_cpu {
	uint8_t	 cpuid_ok;		/* libcpuid read and identified the CPU */
	uint8_t	 pdcm;			/* CPUID.1:ECX[15]: IA32_PERF_CAPABILITIES */
	uint8_t	 hypervisor;		/* CPUID.1:ECX[31]: running as a guest */
	uint8_t	 pad;
	char	 cpuid_error[64];	/* libcpuid's message if !cpuid_ok */
	char	 vendor[16];		/* "GenuineIntel", "AuthenticAMD", ... */
	char	 brand[64];		/* leaves 0x80000002-4, as libcpuid found it */
	uint32_t family;		/* display family (base + extended) */
	uint32_t model;			/* display model (extended << 4 | base) */
	uint32_t stepping;
	uint32_t max_leaf;		/* CPUID.0:EAX */
	uint32_t max_ext_leaf;		/* CPUID.80000000h:EAX */
	uint32_t hv_max_leaf;		/* CPUID.40000000h:EAX, 0 if no hypervisor */
	char	 hv_signature[13];	/* CPUID.40000000h EBX:ECX:EDX, "KVMKVMKVM" */
	uint8_t	 pad2[3];
	/* The registers the PMU decode below used (0 where the leaf is absent). */
	uint32_t leaf_0a[4];		/* EAX, EBX, ECX, EDX of leaf 0xA */
	uint32_t leaf_80000001_ecx;
	uint32_t leaf_80000022[4];	/* EAX, EBX, ECX, EDX of leaf 0x80000022 */
};

/*
 * Intel architectural performance monitoring, CPUID leaf 0xA (SDM vol. 3B,
 * "Architectural Performance Monitoring").  All zero when the leaf is absent
 * or reports version 0, which is what a guest without a vPMU sees.
 */
struct vpmu_host_intel_pmu {
	uint8_t	 version;		/* EAX[7:0] */
	uint8_t	 gp_count;		/* EAX[15:8] general-purpose counters */
	uint8_t	 gp_width;		/* EAX[23:16] bits */
	uint8_t	 ebx_length;		/* EAX[31:24] valid bits of EBX */
	uint32_t events_unavailable;	/* EBX, cut to ebx_length bits: bit i set
					   = architectural event i is absent */
	uint8_t	 fixed_count;		/* EDX[4:0] contiguous fixed counters (v2+) */
	uint8_t	 fixed_width;		/* EDX[12:5] bits (v2+) */
	uint8_t	 anythread_deprecated;	/* EDX[15] */
	uint8_t	 pad;
	uint32_t fixed_mask;		/* fixed counter i exists iff bit i is set:
					   ECX[i] (v5+) or i < fixed_count */
};

/*
 * AMD core performance counters (APM vol. 2, "Performance Monitoring
 * Counters").  Family 6 and later always architect four legacy counters
 * (PerfEvtSel0-3 at C001_0000h), so CPUID can say how many counters the
 * CPU describes but not whether a hypervisor implements them.
 */
struct vpmu_host_amd_pmu {
	uint8_t	 core_ext;		/* 80000001h.ECX[23] PerfCtrExtCore: six
					   counters at C001_0200h */
	uint8_t	 nb_ext;		/* 80000001h.ECX[24] PerfCtrExtNB */
	uint8_t	 llc_ext;		/* 80000001h.ECX[28] PerfCtrExtLLC */
	uint8_t	 perfmon_v2;		/* 80000022h.EAX[0] PerfMonV2: global
					   control and status MSRs */
	uint8_t	 lbr_stack;		/* 80000022h.EAX[1] LbrStack */
	uint8_t	 num_core;		/* 80000022h.EBX[3:0] NumPerfCtrCore */
	uint8_t	 lbr_v2_depth;		/* 80000022h.EBX[9:4] LbrV2StackSz */
	uint8_t	 num_nb;		/* 80000022h.EBX[15:10] NumPerfCtrNB */
	uint8_t	 gp_count;		/* counters the CPUID bits describe:
					   num_core, 6 or the legacy 4; 0 if
					   not an AMD-compatible CPU */
	uint8_t	 gp_width;		/* 48 whenever gp_count != 0 */
	uint8_t	 pad[2];
};

/* /dev/kvm.  Capability values are KVM_CHECK_EXTENSION's, -1 if not asked. */
struct vpmu_host_kvm {
	uint8_t	 present;		/* /dev/kvm exists */
	uint8_t	 opened;		/* open(/dev/kvm, O_RDWR) worked */
	char	 enable_pmu;		/* /sys/module/kvm/parameters/enable_pmu:
					   'Y', 'N', or 0 if absent */
	uint8_t	 pad;
	int32_t	 open_errno;		/* why open failed (ENOENT if absent) */
	int32_t	 api_version;		/* KVM_GET_API_VERSION (12) */
	int32_t	 cap_user_space_msr;	/* KVM_CAP_X86_USER_SPACE_MSR */
	int32_t	 cap_msr_filter;	/* KVM_CAP_X86_MSR_FILTER */
	int32_t	 cap_pmu_capability;	/* KVM_CAP_PMU_CAPABILITY: KVM_PMU_CAP_*
					   bitmask, 0 when KVM's vPMU is off */
	int32_t	 cap_pmu_event_filter;	/* KVM_CAP_PMU_EVENT_FILTER */
	int32_t	 cap_set_guest_debug;	/* KVM_CAP_SET_GUEST_DEBUG */
	int32_t	 cap_pmu_event_masked;	/* KVM_CAP_PMU_EVENT_MASKED_EVENTS */
};

/*
 * perf_event_open(2), tried on the calling thread with the least privilege
 * each event needs.  An *_errno of 0 means the event opened.
 */
struct vpmu_host_perf {
	uint8_t	 paranoid_known;	/* the sysctl file could be read */
	uint8_t	 msr_tsc_event;		/* msr PMU lists events/tsc */
	uint8_t	 pad[2];
	int32_t	 paranoid;		/* /proc/sys/kernel/perf_event_paranoid */
	int32_t	 hw_instructions_errno;	/* PERF_TYPE_HARDWARE,
					   PERF_COUNT_HW_INSTRUCTIONS, user only */
	int32_t	 sw_task_clock_errno;	/* PERF_TYPE_SOFTWARE,
					   PERF_COUNT_SW_TASK_CLOCK, user only */
	int32_t	 msr_type;		/* /sys/bus/event_source/devices/msr/type,
					   -1 if there is no msr PMU */
	int32_t	 msr_tsc_errno;		/* msr/tsc/ (ENOENT if not listed) */
	uint64_t msr_tsc_config;	/* its config, from events/tsc */
	char	 core_pmu[16];		/* sysfs name of the core PMU ("cpu",
					   "cpu_core"), "" if none registered */
};

/*
 * Everything vpmu_host_open() found.  The host owns it; it stays valid until
 * vpmu_host_close().  Fields may be added at the end in later versions.
 */
struct vpmu_host_info {
	struct vpmu_host_cpu	   cpu;
	struct vpmu_host_intel_pmu intel;	/* leaf 0xA */
	struct vpmu_host_amd_pmu   amd;		/* 80000001h, 80000022h */
	struct vpmu_host_kvm	   kvm;
	struct vpmu_host_perf	   perf;
};

/*
 * Probe the host once.  Fails only with EINVAL (hostp NULL) or ENOMEM;
 * errno is left as it was.
 */
VPMU_EXTERN int  vpmu_host_open(vpmu_host **hostp);
VPMU_EXTERN void vpmu_host_close(vpmu_host *host);
/* The facts; NULL if host is NULL. */
VPMU_EXTERN const struct vpmu_host_info *vpmu_host_get_info(const vpmu_host *host);
/*
 * Whether a counter source (VPMU_HOST_SOURCES) can work here: 0 if it can,
 * ENODEV if the host lacks what it needs, EOPNOTSUPP if the host has it but
 * refuses or disables it, EINVAL for a NULL host or source or an unknown
 * name.  why (may be NULL when whylen is 0) receives the reason, or what
 * the source will use when it is usable; it is always NUL-terminated when
 * whylen > 0.
 */
VPMU_EXTERN int  vpmu_host_source_status(const vpmu_host *host, const char *source,
    char *why, size_t whylen);
/* The facts and verdicts as one JSON object, or as text for people. */
VPMU_EXTERN int  vpmu_host_write_json(const vpmu_host *host, FILE *f);
VPMU_EXTERN int  vpmu_host_write_text(const vpmu_host *host, FILE *f);

#ifdef __cplusplus
}
#endif
#endif /* VPMU_HOST_H */
