/*
 * <vpmu/model.h> -- the guest-visible PMU model: which counters a guest
 * sees through CPUID and MSRs.
 *
 * A model is named by a string, "NAME[:key=value,...]":
 *   intel-v1 .. intel-v5   Intel architectural perfmon, version 1..5
 *   amd-k7                 AMD legacy counters only (4, MSRs 0xC0010000-7)
 *   amd-core               AMD core extension (6, MSRs 0xC0010200-B)
 *   amd-v2                 AMD PerfMonV2 (core extension + global MSRs)
 *   none                   no PMU at all
 * keys: gp, fixed, width, fixed-width, fw-writes (0/1), ebx (unavailable-
 * event mask) -- which of them a vendor accepts is in vpmu_model(3).
 */
#ifndef VPMU_MODEL_H
#define VPMU_MODEL_H

#include <stddef.h>
#include <stdint.h>

#include <vpmu/export.h>

#ifdef __cplusplus
extern "C" {
#endif

enum vpmu_vendor {
	VPMU_VENDOR_NONE = 0,
	VPMU_VENDOR_INTEL = 1,
	VPMU_VENDOR_AMD = 2,
};

#define VPMU_INTEL_MAX_GP	8	/* IA32_PMC0..7 at 0xC1..0xC8 */
#define VPMU_INTEL_MAX_FIXED	3	/* instructions, cycles, ref-cycles */
#define VPMU_AMD_LEGACY_GP	4	/* K7: 0xC0010000..7 */
#define VPMU_AMD_MAX_GP		6	/* core extension: 0xC0010200..B */

struct vpmu_model {
	char	 name[16];	/* "intel-v2" ... */
	uint32_t vendor;	/* enum vpmu_vendor */
	uint32_t version;	/* Intel: 1..5; AMD: 1, or 2 for PerfMonV2; none: 0 */
	uint32_t gp;		/* general-purpose counters */
	uint32_t fixed;		/* Intel fixed counters (v2+) */
	uint32_t width;		/* GP counter width, bits */
	uint32_t fixed_width;	/* fixed counter width, bits */
	uint32_t fw_writes;	/* Intel: IA32_A_PMCx full-width writes (PDCM + PERF_CAPABILITIES bit 13) */
	uint32_t ebx;		/* Intel: CPUID.0xA.EBX, events marked unavailable */
	uint32_t core_ext;	/* AMD: CPUID 0x80000001.ECX[23] */
};

/*
 * Parse a model string.  Returns 0, or EINVAL with a one-line reason in
 * err (for a person: "intel-v1 has no fixed counters", ...).
 */
VPMU_EXTERN int vpmu_model_parse(const char *spec, struct vpmu_model *m, char *err, size_t errlen);
/* Check a model built by hand: 0, or EINVAL with the reason in err. */
VPMU_EXTERN int vpmu_model_check(const struct vpmu_model *m, char *err, size_t errlen);
/*
 * intel-v2, vpmu-run's default.  (A VM whose configuration was given no
 * model has none: no guest-visible PMU.)
 */
VPMU_EXTERN void vpmu_model_default(struct vpmu_model *m);
/* Write the model back as a canonical string with every key. */
VPMU_EXTERN int vpmu_model_format(const struct vpmu_model *m, char *buf, size_t len);

struct vpmu_config;
struct vpmu_vm;

/*
 * Give a VM this model: its classes become the model's counters (Intel:
 * IAP gp x width, IAF fixed x fixed-width; AMD: K8 gp x 48; none: none);
 * the paravirtual class is kept.
 */
VPMU_EXTERN int vpmu_config_set_model(struct vpmu_config *cfg, const struct vpmu_model *m);
VPMU_EXTERN int vpmu_vm_get_model(const struct vpmu_vm *vm, struct vpmu_model *m);

/* ---- the event filter (vpmu_event_filter(3)) ---------------------------------
 * KVM's KVM_SET_PMU_EVENT_FILTER, byte for byte: struct kvm_pmu_event_filter
 * with events[] at its maximum, the same action and flag values, the same
 * masked-entry encoding.  In trap mode libvpmu applies it itself: a counter
 * whose event (or fixed counter) the filter disallows is not programmed
 * and counts nothing.
 */
#define VPMU_EVENT_FILTER_MAX	300	/* KVM_PMU_EVENT_FILTER_MAX_EVENTS */
#define VPMU_FILTER_ALLOW	0	/* KVM_PMU_EVENT_ALLOW */
#define VPMU_FILTER_DENY	1	/* KVM_PMU_EVENT_DENY */
#define VPMU_FILTER_MASKED	1u	/* flags: KVM_PMU_EVENT_FLAG_MASKED_EVENTS */

/* A masked entry (KVM_PMU_ENCODE_MASKED_ENTRY): select bits 11:0, umask mask, match. */
#define VPMU_FILTER_MASKED_ENTRY(select, mask, match, exclude) \
	(((uint64_t)(select) & 0xFFull) | (((uint64_t)(select) & 0xF00ull) << 24) | \
	 (((uint64_t)(mask) & 0xFFull) << 56) | (((uint64_t)(match) & 0xFFull) << 8) | \
	 ((uint64_t)!!(exclude) << 55))
/* An unmasked entry: event select bits 11:0 (AMD: 11:8 are select bits 35:32), umask. */
#define VPMU_FILTER_EVENT(select, umask) \
	(((uint64_t)(select) & 0xFFull) | (((uint64_t)(select) & 0xF00ull) << 24) | \
	 (((uint64_t)(umask) & 0xFFull) << 8))

struct vpmu_event_filter {
	uint32_t action;		/* VPMU_FILTER_ALLOW or VPMU_FILTER_DENY */
	uint32_t nevents;		/* entries in events[], at most 300 */
	uint32_t fixed_counter_bitmap;	/* bit i: fixed counter i */
	uint32_t flags;			/* 0 or VPMU_FILTER_MASKED */
	uint32_t pad[4];		/* KVM's padding: ignored, set 0 */
	uint64_t events[VPMU_EVENT_FILTER_MAX];
};

/* KVM's checks: EINVAL (action, flags, a bad masked entry), E2BIG (nevents > 300). */
VPMU_EXTERN int vpmu_event_filter_check(const struct vpmu_event_filter *f);
/*
 * Whether f lets a counter count, for a vendor (enum vpmu_vendor): a GP
 * counter with event select sel (*allowed 1 or 0), or fixed counter idx.
 */
VPMU_EXTERN int vpmu_event_filter_allows(const struct vpmu_event_filter *f, uint32_t vendor,
    uint64_t sel, int *allowed);
VPMU_EXTERN int vpmu_event_filter_allows_fixed(const struct vpmu_event_filter *f, unsigned idx,
    int *allowed);
/* Xen's presets "ipc" and "arch" for a vendor (ENOENT: no such preset). */
VPMU_EXTERN int vpmu_event_filter_preset(const char *name, uint32_t vendor,
    struct vpmu_event_filter *out);
/* The text format of vpmu_event_filter(3); why gets "line N: ..." on error. */
VPMU_EXTERN int vpmu_event_filter_parse(const char *text, struct vpmu_event_filter *out,
    char *why, size_t whylen);
/* NULL: no filter.  The VM checks masked entries against its model's vendor. */
VPMU_EXTERN int vpmu_config_set_event_filter(struct vpmu_config *cfg,
    const struct vpmu_event_filter *f);
/* A live VM: every counter is reprogrammed under the new filter before its vCPU's next entry. */
VPMU_EXTERN int vpmu_vm_set_event_filter(struct vpmu_vm *vm, const struct vpmu_event_filter *f);
/* The VM's filter; ENOENT if it has none. */
VPMU_EXTERN int vpmu_vm_get_event_filter(struct vpmu_vm *vm, struct vpmu_event_filter *out);

/* ---- the guest's MSR accesses ------------------------------------------------
 * What the guest gets is a verdict, apart from the call's errno: a guest
 * fault is the guest's, not the host's.
 */
enum vpmu_msr_verdict {
	VPMU_MSR_OK = 0,	/* done; a read's value is in *val */
	VPMU_MSR_GP = 1,	/* the access faults: inject #GP(0) */
	VPMU_MSR_NOT_PMU = 2,	/* not a PMU MSR of any model: not libvpmu's */
};

/*
 * vCPU cpu reads or writes msr, outside the exit contract (a write takes
 * effect at once): 0 with *verdict set, or EINVAL (vm NULL, cpu not one
 * of its vCPUs, val or verdict NULL).
 */
VPMU_EXTERN int vpmu_msr_read(struct vpmu_vm *vm, unsigned cpu, uint32_t msr, uint64_t *val,
    enum vpmu_msr_verdict *verdict);
VPMU_EXTERN int vpmu_msr_write(struct vpmu_vm *vm, unsigned cpu, uint32_t msr, uint64_t val,
    enum vpmu_msr_verdict *verdict);
/*
 * The model's value of a CPUID leaf: fills regs (eax, ebx, ecx, edx) and
 * returns 0 for the leaves the model owns (0xA, 0x80000022); ENOENT, regs
 * untouched, for the others; EINVAL if vm or regs is NULL.
 * For leaves that carry a PMU bit (1.ECX.PDCM, 0x80000001.ECX[23]) or say
 * who made the processor (0, 1, 0x80000000, 0x80000001: the model's vendor
 * string and a family/model/stepping of its generation) use
 * vpmu_cpuid_adjust() on the host's values.
 */
VPMU_EXTERN int vpmu_cpuid_get_leaf(const struct vpmu_vm *vm, uint32_t leaf, uint32_t subleaf,
    uint32_t regs[4]);
VPMU_EXTERN void vpmu_cpuid_adjust(const struct vpmu_vm *vm, uint32_t leaf, uint32_t subleaf,
    uint32_t regs[4]);
/* Architectural reset of every PMU MSR of one vCPU (INIT/RESET). */
VPMU_EXTERN int vpmu_vcpu_reset(struct vpmu_vm *vm, unsigned cpu);
/*
 * Take the vCPU's pending PMI: *pending 1 if one was pending (now
 * cleared), else 0.  0, or EINVAL (vm NULL, cpu not one of its vCPUs,
 * pending NULL).
 */
VPMU_EXTERN int vpmu_vcpu_take_pmi(struct vpmu_vm *vm, unsigned cpu, int *pending);
/*
 * Look for overflows: every enabled counter whose value crossed its width
 * since the last look sets its GLOBAL_STATUS bit and, with INT, makes a PMI
 * pending.  The KVM glue calls it after every exit.
 */
VPMU_EXTERN int vpmu_vcpu_check_overflow(struct vpmu_vm *vm, unsigned cpu);

/*
 * The MSRs libvpmu must see the guest access (the PMU MSRs of both
 * vendors: the model answers the other vendor's with #GP), as spans a VMM
 * routes to user space: an MSR filter of a few ranges whose bitmaps pick
 * the PMU MSRs (vpmu_msr_is_pmu()) and leave the others to the VMM.
 * *n: in, entries at out; out, the spans (EINVAL, with *n the number
 * needed, if out is too small).
 */
struct vpmu_msr_range {
	uint32_t base;
	uint32_t count;
};
VPMU_EXTERN int vpmu_msr_ranges(struct vpmu_msr_range *out, unsigned *n);
/* 1 if msr is a PMU MSR of either vendor, else 0. */
VPMU_EXTERN int vpmu_msr_is_pmu(uint32_t msr);

/* One guest-visible counter, for reports (vpmu-run prints these). */
struct vpmu_counter_info {
	char	 name[32];		/* "IA32_PMC0", "IA32_FIXED_CTR1", "PERF_CTR3" */
	char	 event[40];		/* "instructions", "raw 0x412e", "" if none */
	uint64_t control;		/* event select, or the fixed-control nibble */
	uint64_t value;			/* as the guest reads it (scaled if multiplexed) */
	uint64_t raw;			/* the events counted, unscaled (+ the written value) */
	uint64_t time_enabled;		/* ns it wanted to count, over its life */
	uint64_t time_running;		/* ns it held a host counter */
	uint32_t scaled;		/* value is raw * enabled / running */
	uint32_t used;			/* the guest wrote its control or counter */
	uint32_t enabled;		/* counting now */
	uint32_t unsupported;		/* the source cannot count the event */
	char	 why[160];		/* why unsupported; or, if not, why it does not
					   count: "disallowed by the event filter" */
	uint64_t counted;		/* the events the source counted into it, unscaled,
					   over its life, whatever the guest wrote */
};
/* *n: in, entries at out; out, the vCPU's counters (EINVAL if too few). */
VPMU_EXTERN int vpmu_vcpu_get_counters(struct vpmu_vm *vm, unsigned cpu,
    struct vpmu_counter_info *out, unsigned *n);

#ifdef __cplusplus
}
#endif
#endif /* VPMU_MODEL_H */
