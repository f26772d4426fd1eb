/*
 * <vpmu/hwpmc.h> -- hwpmc(4) vocabulary used by libvpmu.
 *
 * Operation numbers, modes, flags, states, row dispositions, capabilities,
 * classes and the PMC id layout have FreeBSD's modern values (sys/sys/pmc.h),
 * so that a FreeBSD-shaped guest and libvpmu agree on the numbers.  Names
 * carry a VPMU_ prefix so this header can live beside any system header.
 */
#ifndef VPMU_HWPMC_H
#define VPMU_HWPMC_H

#include <stdint.h>

/* The hwpmc ABI version libvpmu implements: major 0x0A, minor 0, patch 0. */
#define VPMU_PMC_VERSION_MAJOR	0x0A
#define VPMU_PMC_VERSION_MINOR	0x00
#define VPMU_PMC_VERSION_PATCH	0x0000
#define VPMU_PMC_VERSION	((VPMU_PMC_VERSION_MAJOR << 24) | \
				 (VPMU_PMC_VERSION_MINOR << 16) | VPMU_PMC_VERSION_PATCH)

typedef uint32_t vpmu_pmc_id;
typedef uint64_t vpmu_pmc_value;

#define VPMU_NAME_MAX		64	/* PMC_NAME_MAX */
#define VPMU_CLASS_MAX		8	/* PMC_CLASS_MAX */
#define VPMU_CPU_ANY		0xFFFFFFFFu	/* PMC_CPU_ANY: process scope */
#define VPMU_ID_INVALID		0xFFFFFFFFu
#define VPMU_MAX_VCPUS		4095	/* the id's cpu field is 12 bits, 0xFFF = any */
#define VPMU_MAX_ROWS		255	/* the id's row field is 8 bits, 0xFF = unset */

/*
 * PMC id: cpu [31:20], mode [19:16], class [15:8], row [7:0].
 * Process-scope PMCs carry cpu 0xFFF (VPMU_CPU_ANY truncated).
 */
#define VPMU_ID_TO_ROW(id)	((uint32_t)(id) & 0xFFu)
#define VPMU_ID_TO_CLASS(id)	(((uint32_t)(id) & 0xFF00u) >> 8)
#define VPMU_ID_TO_MODE(id)	(((uint32_t)(id) & 0xF0000u) >> 16)
#define VPMU_ID_TO_CPU(id)	(((uint32_t)(id) & 0xFFF00000u) >> 20)
#define VPMU_ID_MAKE(cpu, mode, cls, row) \
	((((uint32_t)(cpu) & 0xFFFu) << 20) | (((uint32_t)(mode) & 0xFu) << 16) | \
	 (((uint32_t)(cls) & 0xFFu) << 8) | ((uint32_t)(row) & 0xFFu))

/* enum pmc_ops: the order is the ABI. */
#define VPMU_OPS(X)							\
	X(CONFIGURELOG,		0, "Set log file")			\
	X(FLUSHLOG,		1, "Flush log file")			\
	X(GETCPUINFO,		2, "Get system CPU information")	\
	X(GETDRIVERSTATS,	3, "Get driver statistics")		\
	X(GETMODULEVERSION,	4, "Get module version")		\
	X(GETPMCINFO,		5, "Get per-cpu PMC information")	\
	X(PMCADMIN,		6, "Set PMC state")			\
	X(PMCALLOCATE,		7, "Allocate and configure a PMC")	\
	X(PMCATTACH,		8, "Attach a PMC to a process")		\
	X(PMCDETACH,		9, "Detach a PMC from a process")	\
	X(PMCGETMSR,		10, "Get a PMC's hardware address")	\
	X(PMCRELEASE,		11, "Release a PMC")			\
	X(PMCRW,		12, "Read/Set a PMC")			\
	X(PMCSETCOUNT,		13, "Set initial count/sampling rate")	\
	X(PMCSTART,		14, "Start a PMC")			\
	X(PMCSTOP,		15, "Stop a PMC")			\
	X(WRITELOG,		16, "Write a cookie to the log file")	\
	X(CLOSELOG,		17, "Close log file")			\
	X(GETDYNEVENTINFO,	18, "Get dynamic events list")

enum vpmu_op {
#define VPMU_OP_ENUM(n, v, d)	VPMU_OP_##n = v,
	VPMU_OPS(VPMU_OP_ENUM)
#undef VPMU_OP_ENUM
	VPMU_OP_MAX
};

/* enum pmc_mode */
enum vpmu_mode {
	VPMU_MODE_SS = 0,	/* system scope, sampling */
	VPMU_MODE_SC = 1,	/* system scope, counting */
	VPMU_MODE_TS = 2,	/* process (thread) scope, sampling */
	VPMU_MODE_TC = 3,	/* process (thread) scope, counting */
};
#define VPMU_MODE_IS_SYSTEM(m)		((m) == VPMU_MODE_SS || (m) == VPMU_MODE_SC)
#define VPMU_MODE_IS_VIRTUAL(m)		((m) == VPMU_MODE_TS || (m) == VPMU_MODE_TC)
#define VPMU_MODE_IS_SAMPLING(m)	((m) == VPMU_MODE_SS || (m) == VPMU_MODE_TS)
#define VPMU_MODE_IS_COUNTING(m)	((m) == VPMU_MODE_SC || (m) == VPMU_MODE_TC)

/* enum pmc_disp */
enum vpmu_disp {
	VPMU_DISP_STANDALONE = 0,
	VPMU_DISP_FREE = 1,
	VPMU_DISP_THREAD = 2,
};

/* enum pmc_state */
enum vpmu_state {
	VPMU_STATE_DISABLED = 0,
	VPMU_STATE_FREE = 1,
	VPMU_STATE_ALLOCATED = 2,
	VPMU_STATE_STOPPED = 3,
	VPMU_STATE_RUNNING = 4,
	VPMU_STATE_DELETED = 5,
};

/* PMC_F_* flags (allocation modifiers and PMCRW flags). */
#define VPMU_F_DESCENDANTS	0x00000002u
#define VPMU_F_LOG_PROCCSW	0x00000004u
#define VPMU_F_LOG_PROCEXIT	0x00000008u
#define VPMU_F_NEWVALUE		0x00000010u
#define VPMU_F_OLDVALUE		0x00000020u
#define VPMU_F_CALLCHAIN	0x00000080u
#define VPMU_F_USERCALLCHAIN	0x00000100u
#define VPMU_F_EV_PMU		0x00000200u
/*
 * Flags PMCALLOCATE accepts.  VPMU_F_EV_PMU (FreeBSD's JSON event tables)
 * is not among them: libvpmu names events itself.
 */
#define VPMU_F_ALLOCATE_MASK	(VPMU_F_DESCENDANTS | VPMU_F_LOG_PROCCSW | \
				 VPMU_F_LOG_PROCEXIT | VPMU_F_CALLCHAIN | \
				 VPMU_F_USERCALLCHAIN)

/* enum pmc_caps */
#define VPMU_CAP_INTERRUPT	0x0001u
#define VPMU_CAP_USER		0x0002u
#define VPMU_CAP_SYSTEM		0x0004u
#define VPMU_CAP_EDGE		0x0008u
#define VPMU_CAP_THRESHOLD	0x0010u
#define VPMU_CAP_READ		0x0020u
#define VPMU_CAP_WRITE		0x0040u
#define VPMU_CAP_INVERT		0x0080u
#define VPMU_CAP_QUALIFIER	0x0100u
#define VPMU_CAP_PRECISE	0x0200u
#define VPMU_CAP_TAGGING	0x0400u
#define VPMU_CAP_CASCADE	0x0800u
#define VPMU_CAP_SYSWIDE	0x1000u
#define VPMU_CAP_DOMWIDE	0x2000u

/*
 * enum pmc_class.  TSC, K8, IAF and IAP keep FreeBSD's values; VPMU_CLASS_PV
 * (the paravirtual class every VM has) is libvpmu's own and unused by FreeBSD.
 */
enum vpmu_class {
	VPMU_CLASS_TSC = 0x00,
	VPMU_CLASS_K8 = 0x02,	/* AMD core counters (K7 legacy, core-ext) */
	VPMU_CLASS_IAF = 0x06,	/* Intel fixed-function counters */
	VPMU_CLASS_IAP = 0x07,	/* Intel programmable (GP) counters */
	VPMU_CLASS_PV = 0x40,	/* paravirtual counters (libvpmu) */
};

/* enum pmc_cputype values libvpmu reports. */
#define VPMU_CPUTYPE_AMD_K8	0x01
#define VPMU_CPUTYPE_INTEL_CORE	0x87
#define VPMU_CPUTYPE_GENERIC	0x400

/* PMCADMIN request states. */
#define VPMU_ADMIN_ENABLE	VPMU_STATE_FREE
#define VPMU_ADMIN_DISABLE	VPMU_STATE_DISABLED

#endif /* VPMU_HWPMC_H */
