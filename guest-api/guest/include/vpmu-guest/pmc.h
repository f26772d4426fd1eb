/*
 * <vpmu-guest/pmc.h> -- pmc(3) for guests: FreeBSD's libpmc calls, made
 * through libvpmu's paravirtual channel (<vpmu-guest/pv.h>, vpmu_pv(4))
 * instead of the hwpmc system call.  vpmu_guest_pmc(3) documents it.
 *
 * Freestanding: needs <stdint.h> and <stddef.h> only.  The constants have
 * FreeBSD's values (sys/sys/pmc.h), so FreeBSD-shaped code reads the same.
 *
 * Errors: as pmc(3), a function returns 0 (or a count) on success and -1
 * on failure, with the reason in pmc_errno(): a VPMU_PV_E* value, which is
 * FreeBSD's errno numbering (EINVAL 22, EPERM 1, ...).  The error lives
 * where pmc_errno_location() says: one word for the whole library by
 * default; a guest kernel with threads defines pmc_errno_location() (a
 * weak symbol here) to return its current thread's.
 */
#ifndef VPMU_GUEST_PMC_H
#define VPMU_GUEST_PMC_H

#include <stddef.h>
#include <stdint.h>

#include <vpmu-guest/pv.h>

typedef uint32_t pmc_id_t;
typedef uint64_t pmc_value_t;

#define PMC_ID_INVALID		(~(pmc_id_t)0)
#define PMC_CPU_ANY		(~0)		/* process scope (int -1, as FreeBSD) */
#define PMC_NAME_MAX		64
#define PMC_CLASS_MAX		8

/* The id layout: cpu [31:20], mode [19:16], class [15:8], row [7:0]. */
#define PMC_ID_TO_ROWINDEX(id)	((id) & 0xFFu)
#define PMC_ID_TO_CLASS(id)	(((id) & 0xFF00u) >> 8)
#define PMC_ID_TO_MODE(id)	(((id) & 0xF0000u) >> 16)
#define PMC_ID_TO_CPU(id)	(((id) & 0xFFF00000u) >> 20)

enum pmc_mode {
	PMC_MODE_SS = 0,		/* system scope, sampling */
	PMC_MODE_SC = 1,		/* system scope, counting */
	PMC_MODE_TS = 2,		/* process scope, sampling */
	PMC_MODE_TC = 3,		/* process scope, counting */
};

/* enum pmc_class: FreeBSD's values, plus libvpmu's paravirtual class. */
#define PMC_CLASS_TSC		0x00
#define PMC_CLASS_K8		0x02
#define PMC_CLASS_IAF		0x06
#define PMC_CLASS_IAP		0x07
#define PMC_CLASS_SOFT		0x0F
#define PMC_CLASS_VPMU_PV	0x40		/* libvpmu's; unused by FreeBSD */

/* PMC_F_* */
#define PMC_F_DESCENDANTS	0x00000002u
#define PMC_F_LOG_PROCCSW	0x00000004u
#define PMC_F_LOG_PROCEXIT	0x00000008u
#define PMC_F_NEWVALUE		0x00000010u
#define PMC_F_OLDVALUE		0x00000020u
#define PMC_F_CALLCHAIN		0x00000080u
#define PMC_F_USERCALLCHAIN	0x00000100u
#define PMC_F_EV_PMU		0x00000200u

/* enum pmc_caps */
#define PMC_CAP_INTERRUPT	0x0001u
#define PMC_CAP_USER		0x0002u
#define PMC_CAP_SYSTEM		0x0004u
#define PMC_CAP_EDGE		0x0008u
#define PMC_CAP_THRESHOLD	0x0010u
#define PMC_CAP_READ		0x0020u
#define PMC_CAP_WRITE		0x0040u
#define PMC_CAP_INVERT		0x0080u
#define PMC_CAP_QUALIFIER	0x0100u
#define PMC_CAP_PRECISE		0x0200u

/* enum pmc_disp, enum pmc_state (PMCADMIN takes FREE to enable, DISABLED to disable) */
#define PMC_DISP_STANDALONE	0
#define PMC_DISP_FREE		1
#define PMC_DISP_THREAD		2
#define PMC_STATE_DISABLED	0
#define PMC_STATE_FREE		1

/* The version this library speaks (GETMODULEVERSION). */
#define PMC_VERSION		0x0A000000u

/* Layouts are the channel's (FreeBSD amd64's), with pmc(3)'s field names. */
struct pmc_classinfo {
	uint32_t pm_class;
	uint32_t pm_caps;
	uint32_t pm_width;
	uint32_t pm_num;
};
struct pmc_cpuinfo {
	uint32_t pm_cputype;
	uint32_t pm_ncpu;
	uint32_t pm_npmc;
	uint32_t pm_nclass;
	struct pmc_classinfo pm_classes[PMC_CLASS_MAX];
};
struct pmc_info {
	char	 pm_name[PMC_NAME_MAX];
	uint32_t pm_class;
	int32_t	 pm_enabled;
	uint32_t pm_rowdisp;
	int32_t	 pm_ownerpid;		/* -1: no PMC in the row */
	uint32_t pm_mode;
	uint32_t pm_event;		/* libvpmu's event code (vpmu_pv(4) EVENTS) */
	uint32_t pm_flags;
	uint32_t pm_pad;
	uint64_t pm_reloadcount;
};
struct pmc_pmcinfo {
	int32_t	 pm_cpu;
	uint32_t pm_pad;
	struct pmc_info pm_pmcs[];	/* pmc_npmc() rows */
};
struct pmc_driverstats {
	unsigned pm_intr_ignored;
	unsigned pm_intr_processed;
	unsigned pm_intr_bufferfull;
	unsigned pm_syscalls;
	unsigned pm_syscall_errors;
	unsigned pm_buffer_requests;
	unsigned pm_buffer_requests_failed;
	unsigned pm_log_sweeps;
};

/* ---- errors ---------------------------------------------------------------------- */

int	*pmc_errno_location(void);	/* weak: a guest kernel may define its own */
int	 pmc_errno(void);		/* the last failure's VPMU_PV_E* value */
const char *pmc_errname(int error);	/* "EINVAL", ...; "E?" for others */

/* ---- pmc(3) ------------------------------------------------------------------------ */

/*
 * Probe the channel (ENXIO without one), check the version
 * (EPROGMISMATCH), read the CPU information.  Functions that need the
 * CPU information call it themselves when it has not been called.
 */
int	pmc_init(void);
/*
 * ctrspec: an event name with optional ",usr", ",os", ",edge", ",inv",
 * ",cmask=N" qualifiers.  Names: "instructions", "branches", "cycles",
 * "ref-cycles", "tsc" (libvpmu's paravirtual class when the VM has it);
 * FreeBSD's fixed counters "INST_RETIRED.ANY", "CPU_CLK_UNHALTED.CORE",
 * "CPU_CLK_UNHALTED.REF" (either case; class IAF when present) and
 * "tsc-tsc" / "TSC" (class TSC when present); "0xUUEE", a raw event
 * select, on the model's programmable class (IAP or K8).  cpu is a vCPU
 * or PMC_CPU_ANY.
 */
int	pmc_allocate(const char *ctrspec, enum pmc_mode mode, uint32_t flags, int cpu,
	    pmc_id_t *pmcid, uint64_t count);
int	pmc_attach(pmc_id_t pmcid, int32_t pid);	/* pid 0: the caller */
int	pmc_detach(pmc_id_t pmcid, int32_t pid);
int	pmc_release(pmc_id_t pmcid);
int	pmc_start(pmc_id_t pmcid);
int	pmc_stop(pmc_id_t pmcid);
int	pmc_read(pmc_id_t pmcid, pmc_value_t *value);
int	pmc_write(pmc_id_t pmcid, pmc_value_t value);
int	pmc_rw(pmc_id_t pmcid, pmc_value_t newvalue, pmc_value_t *oldvalue);
int	pmc_set(pmc_id_t pmcid, pmc_value_t value);	/* PMCSETCOUNT */
/* Guest log descriptors are the numbers the VMM offers (vpmu-run --guest-log N=PATH). */
int	pmc_configure_logfile(int fd);			/* -1: close */
int	pmc_flush_logfile(void);
int	pmc_close_logfile(void);
int	pmc_writelog(uint32_t userdata);
int	pmc_get_driver_stats(struct pmc_driverstats *gms);
int	pmc_capabilities(pmc_id_t pmc, uint32_t *caps);
int	pmc_cpuinfo(const struct pmc_cpuinfo **cpu_info);
/*
 * The rows of cpu; *ppmci points into the library's one buffer, valid
 * until the next call (from any vCPU).
 */
int	pmc_pmcinfo(int cpu, struct pmc_pmcinfo **ppmci);
/* The fast-read page slot of a process PMC on the caller alone (vpmu_pv(4)). */
int	pmc_get_msr(pmc_id_t pmc, uint32_t *msr);
int	pmc_ncpu(void);
int	pmc_npmc(int cpu);
int	pmc_width(pmc_id_t pmc, uint32_t *width);
int	pmc_get_module_version(uint32_t *version);

/* ---- the guest kernel's hooks (callers must be privileged) ----------------------- */

int	vpmu_hook_proc_create(int32_t pid, int32_t ppid, uint32_t uid, uint32_t cflags);
int	vpmu_hook_proc_fork(int32_t parent, int32_t child);
/* setcred 0 keeps the credentials; path at most VPMU_PV_PATH_MAX - 1 bytes. */
int	vpmu_hook_proc_exec(int32_t pid, const char *path, int setcred, uint32_t uid,
	    uint32_t cflags);
int	vpmu_hook_proc_exit(int32_t pid);
int	vpmu_hook_csw_in(int32_t pid, int32_t tid);	/* on the calling vCPU */
int	vpmu_hook_csw_out(void);

#endif /* VPMU_GUEST_PMC_H */
