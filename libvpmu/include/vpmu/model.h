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
/* The model a VM gets when none is set: intel-v2. */
VPMU_EXTERN void vpmu_model_default(struct vpmu_model *m);
/* Write the model back as a canonical string with every key. */
VPMU_EXTERN int vpmu_model_format(const struct vpmu_model *m, char *buf, size_t len);

#ifdef __cplusplus
}
#endif
#endif /* VPMU_MODEL_H */
