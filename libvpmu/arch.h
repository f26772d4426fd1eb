/*
 * arch.h -- the x86 PMU's architectural facts, each written once: the
 * architectural events (one row per event, below) and the layouts of
 * the PMU's CPUID leaves, Intel's 0AH and AMD's 0x80000022 (one decoder
 * and one encoder each).  The core owns them, so that
 * everything above it can use them: in the core the Intel and AMD models
 * (intel.c, amd.c: a guest's select to an event), the fixed counters
 * (gpmu.c, pmc_row.c), the model's CPUID (gpmu_cpuid.c) and the event
 * filter's presets (filter.c); above it the exact and perf sources, the
 * host probe (host_cpuid.c) and the KVM glue's kvm mode (kvm_mode.c).
 * arch.c has the table and the functions.
 */
#ifndef VPMU_ARCH_H
#define VPMU_ARCH_H

#include <stdbool.h>
#include <stdint.h>

#include <vpmu/model.h>
#include <vpmu/source.h>

/*
 * The architectural events, X(id, event, intel, ebx, fixed, amd, perf, ipc):
 *   id     the row, VPMU__ARCH_<id>
 *   event  what libvpmu counts it as (enum vpmu_event, named in
 *          <vpmu/source.h>); VPMU_EV_NONE: libvpmu has no name for it, a
 *          guest's select of it stays VPMU_EV_RAW
 *   intel  Intel's event select | unit mask << 8 (SDM Vol. 3B 20.2.1.2,
 *          "Pre-defined Architectural Performance Events")
 *   ebx    its bit in CPUID.0AH:EBX, set when the event is not available;
 *          the rows hold bits 0 to VPMU__NARCH - 1, each once (arch.c)
 *   fixed  the Intel fixed counter that counts it (SDM Vol. 3B 20.2.2), or
 *          -1
 *   amd    AMD's 12-bit event select, unit mask 0 (PPR "Core Performance
 *          Monitor Counters": PMCx076 Cycles not in Halt, PMCx0C0 Retired
 *          Instructions, PMCx0C2 Retired Branch Instructions, PMCx0C3
 *          Retired Branch Instructions Mispredicted), or 0: none
 *   perf   perf_event_open(2)'s generic hardware event, PERF_COUNT_<perf>:
 *          a token only the perf source pastes (the core includes no Linux
 *          header)
 *   ipc    in Xen's vpmu=ipc set (cycles, reference cycles, instructions);
 *          every row is in vpmu=arch
 * The rows are in the order Xen lists its presets (vpmu_event_filter_preset()
 * gives them so).  Topdown slots (EBX bit 7, fixed counter 3) is not here:
 * no model offers it, and the models say EBX has 7 bits.
 */
#define VPMU__ARCH_EVENTS(X)						\
	X(CYCLES,	  VPMU_EV_CYCLES,	0x003C, 0,  1, 0x076,		\
	    HW_CPU_CYCLES,		1)					\
	X(REF_CYCLES,	  VPMU_EV_REF_CYCLES,	0x013C, 2,  2, 0,		\
	    HW_REF_CPU_CYCLES,		1)					\
	X(INSTRUCTIONS,	  VPMU_EV_INSTRUCTIONS,	0x00C0, 1,  0, 0x0C0,		\
	    HW_INSTRUCTIONS,		1)					\
	X(LLC_REFERENCES, VPMU_EV_NONE,		0x4F2E, 3, -1, 0,		\
	    HW_CACHE_REFERENCES,	0)					\
	X(LLC_MISSES,	  VPMU_EV_NONE,		0x412E, 4, -1, 0,		\
	    HW_CACHE_MISSES,		0)					\
	X(BRANCHES,	  VPMU_EV_BRANCHES,	0x00C4, 5, -1, 0x0C2,		\
	    HW_BRANCH_INSTRUCTIONS,	0)					\
	X(BRANCH_MISSES,  VPMU_EV_NONE,		0x00C5, 6, -1, 0x0C3,		\
	    HW_BRANCH_MISSES,		0)

enum vpmu__arch_row {
#define VPMU__ARCH_ROW(id, ...)	VPMU__ARCH_##id,
	VPMU__ARCH_EVENTS(VPMU__ARCH_ROW)
#undef VPMU__ARCH_ROW
	VPMU__NARCH
};

/* One row (the perf column aside: the perf source pastes it itself). */
struct vpmu__arch_event {
	uint32_t event;		/* enum vpmu_event, or VPMU_EV_NONE */
	uint16_t intel;		/* event select | unit mask << 8 */
	uint16_t amd;		/* 12-bit event select; 0: none */
	int8_t	 ebx;		/* CPUID.0AH:EBX bit */
	int8_t	 fixed;		/* Intel fixed counter; -1: none */
	bool	 ipc;		/* in Xen's vpmu=ipc */
};

extern const struct vpmu__arch_event vpmu__arch_events[VPMU__NARCH];

/*
 * AMD's 12-bit event select evsel with unit mask umask as a PERF_CTL
 * holds it (APM Vol. 2 13.2.1: bits 7:0 and 35:32, unit mask 15:8), and in
 * vpmu_event_spec.raw's form, which has bits 11:8 of the select in 19:16.
 */
static inline uint64_t
vpmu__amd_sel(unsigned evsel, unsigned umask)
{
	return ((evsel & 0xFFu) | (uint64_t)(umask & 0xFFu) << 8 |
	    (uint64_t)((evsel >> 8) & 0xFu) << 32);
}

static inline uint64_t
vpmu__amd_raw(unsigned evsel, unsigned umask)
{
	return ((evsel & 0xFFu) | (uint64_t)(umask & 0xFFu) << 8 |
	    (uint64_t)((evsel >> 8) & 0xFu) << 16);
}

/*
 * Row e's event as vendor's (VPMU_VENDOR_*) event select register holds
 * it, unit mask included; 0 if the vendor has no such event.
 */
static inline uint64_t
vpmu__arch_sel(const struct vpmu__arch_event *e, uint32_t vendor)
{
	if (vendor == VPMU_VENDOR_INTEL)
		return (e->intel);
	if (vendor == VPMU_VENDOR_AMD && e->amd != 0)
		return (vpmu__amd_sel(e->amd, 0));
	return (0);
}

/* The row of a named event, or NULL (VPMU_EV_NONE, or no row names it). */
const struct vpmu__arch_event *vpmu__arch_of_event(uint32_t event);

/*
 * The named event that raw (vpmu_event_spec.raw's form) selects for
 * every vendor in vendors (a set of 1 << VPMU_VENDOR_*), or VPMU_EV_NONE:
 * a code means an event only where each of those vendors gives it that
 * meaning (0xC4 is Intel's branches but AMD's taken branches).
 */
uint32_t vpmu__arch_event_raw(uint64_t raw, unsigned vendors);

/*
 * A guest's select raw (vpmu_event_spec.raw's form) of vendor as spec's
 * event: the named event, or VPMU_EV_RAW with spec->raw = raw.
 */
void	vpmu__arch_spec(uint64_t raw, uint32_t vendor, struct vpmu_event_spec *spec);

/* The event Intel fixed counter idx counts, VPMU_EV_NONE past the last. */
uint32_t vpmu__arch_fixed_event(unsigned idx);

/*
 * CPUID leaf 0AH, Intel's architectural performance monitoring (SDM Vol.
 * 2A, CPUID; Vol. 3B 20.2), a field per member.  decode() gives all zero
 * for version 0 (no architectural PMU: the rest is void), leaves the
 * fixed-counter fields 0 before version 2 (EDX is reserved in version 1)
 * and fixed_bitmap 0 before version 5 (so is ECX); encode() writes
 * those registers under the same rules, and EBX cut to ebx_length.
 */
struct vpmu__cpuid_0a {
	unsigned version;		/* EAX[7:0] */
	unsigned gp;			/* EAX[15:8] general-purpose counters */
	unsigned gp_width;		/* EAX[23:16] */
	unsigned ebx_length;		/* EAX[31:24] EBX bits that mean events */
	uint32_t unavailable;		/* EBX, cut to ebx_length: bit i set =
					   architectural event i (column ebx)
					   not available */
	uint32_t fixed_bitmap;		/* ECX (v5+): fixed counter i supported */
	unsigned fixed;			/* EDX[4:0] contiguous fixed counters (v2+) */
	unsigned fixed_width;		/* EDX[12:5] (v2+) */
	bool	 anythread_deprecated;	/* EDX[15] (v2+) */
};

void	vpmu__cpuid_0a_decode(const uint32_t regs[4], struct vpmu__cpuid_0a *out);
void	vpmu__cpuid_0a_encode(const struct vpmu__cpuid_0a *in, uint32_t regs[4]);

/*
 * CPUID leaf 0x80000022, AMD's extended performance monitoring (APM Vol.
 * 3, CPUID Fn8000_0022), a field per member; EDX is reserved.
 */
struct vpmu__cpuid_80000022 {
	bool	 perfmon_v2;		/* EAX[0] PerfMonV2: the global MSRs */
	bool	 lbr_stack;		/* EAX[1] LbrStack */
	bool	 lbr_pmc_freeze;	/* EAX[2] LbrAndPmcFreeze */
	unsigned num_core;		/* EBX[3:0] NumPerfCtrCore */
	unsigned lbr_v2_depth;		/* EBX[9:4] LbrV2StackSz */
	unsigned num_nb;		/* EBX[15:10] NumPerfCtrNB */
	unsigned num_umc;		/* EBX[21:16] NumPerfCtrUmc (Zen 4 on) */
	uint32_t active_umc;		/* ECX: the active UMCs */
};

void	vpmu__cpuid_80000022_decode(const uint32_t regs[4],
	    struct vpmu__cpuid_80000022 *out);
void	vpmu__cpuid_80000022_encode(const struct vpmu__cpuid_80000022 *in,
	    uint32_t regs[4]);

#endif /* VPMU_ARCH_H */
