/*
 * <vpmu/vpmu.h> -- libvpmu, a virtual PMU for KVM-based VMMs.
 *
 * The core of the host-side API; see vpmu(3).  It includes <vpmu/hwpmc.h>
 * (hwpmc's numbers), <vpmu/source.h> (sources, events) and <vpmu/host.h>
 * (the host probe).  Who needs which other header:
 *   <vpmu/kvm.h>       a KVM VMM: the glue; it includes <vpmu/model.h> and
 *                      <vpmu/vcpu.h> too, so it is the one header such a
 *                      VMM needs for counting and sampling
 *   <vpmu/vcpu.h>      a VMM with a run loop of its own (the exit contract)
 *   <vpmu/model.h>     the guest-visible models, MSR and CPUID entry points
 *   <vpmu/pv.h>        the paravirtual channel: its port, log descriptors
 *   <vpmu/snapshot.h>  save and restore, vpmu_crc32()
 *   <vpmu/pmclog.h>    reading and writing the pmclog(5) format
 *   <vpmu-guest/...>   the guest side (freestanding; vpmu_guest_pmc(3))
 *
 * Error rule (written once, here and in vpmu(3)): every function that can
 * fail returns 0 on success or a positive errno value.  The values are the
 * ones hwpmc(4)'s ERRORS section gives for the same condition.  Two
 * FreeBSD-only codes have project values: VPMU_EDOOFUS and
 * VPMU_EPROGMISMATCH.  vpmu_strerror() and vpmu_errname() describe any
 * of them.  Functions never set errno as their result.  What a call finds
 * comes back through its arguments: the guest's verdict on an MSR access
 * (a #GP is the guest's, not an error), a pending PMI, a record's length;
 * a log reader gives its end and "feed me more" as codes (ENODATA,
 * EAGAIN), as libuv does.  Functions returning void, a count, a name or a
 * string, and the predicates (1 or 0), cannot fail.
 *
 * Index spaces (named once):
 *   vCPU index    0 .. nvcpus-1; hwpmc calls it "cpu".
 *   row           0 .. npmc-1; a PMC resource at the same address on every
 *                 vCPU.  Rows of the guest-visible MSR classes come first
 *                 (in the order the classes were configured), then the
 *                 paravirtual class.
 *   PMC id        cpu/mode/class/row packed as <vpmu/hwpmc.h> says.
 *   MSR address / RDPMC index: the guest-visible model's (see
 *                 vpmu_pmc_getmsr()); guest-api/ converts.
 *   host slot     a counter opened on the host source for one vCPU.
 */
#ifndef VPMU_VPMU_H
#define VPMU_VPMU_H

#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include <vpmu/export.h>
#include <vpmu/hwpmc.h>
#include <vpmu/source.h>
#include <vpmu/host.h>

#ifdef __cplusplus
extern "C" {
#endif

/* ---- errors ------------------------------------------------------------ */

/* FreeBSD-only codes, given values above every Linux errno. */
#define VPMU_EPROGMISMATCH	4096	/* FreeBSD EPROGMISMATCH: version mismatch */
#define VPMU_EDOOFUS		4097	/* FreeBSD EDOOFUS: programming error */

VPMU_EXTERN const char *vpmu_strerror(int err);
VPMU_EXTERN const char *vpmu_errname(int err);
/* The library's version string, e.g. "0.1.0". */
VPMU_EXTERN const char *vpmu_version(void);

/* ---- handles ----------------------------------------------------------- */

typedef struct vpmu_config vpmu_config;	/* settings for a VM, before it exists */
typedef struct vpmu_vm vpmu_vm;		/* one virtual machine's virtual PMU */

/* Messages (tunable diagnostics and the like). */
enum vpmu_log_level {
	VPMU_LOG_ERR = 0,
	VPMU_LOG_WARN = 1,
	VPMU_LOG_INFO = 2,
	VPMU_LOG_DEBUG = 3,
};
typedef void (*vpmu_log_fn)(int level, const char *msg, void *arg);

/*
 * Owner notifications: hwpmc's signals.  sig is SIGIO (PMCRW on a process
 * PMC with no target, or a process PMC lost its last target) or SIGBUS
 * (the VM's PMU is going away).  Called with the VM lock held: the callback
 * must not call back into libvpmu for the same VM.
 */
typedef void (*vpmu_notify_fn)(vpmu_vm *vm, int32_t owner_pid, int sig, void *arg);

/* Who is asking: a guest process as the caller (the VMM, or the guest) knows it. */
struct vpmu_cred {
	int32_t	 pid;
	int32_t	 tid;
	uint32_t uid;
	uint8_t	 privileged;	/* super-user */
	uint8_t	 jailed;
	uint16_t pad;
};

/* ---- configuration ------------------------------------------------------ */

VPMU_EXTERN int  vpmu_config_create(vpmu_config **cfgp);
VPMU_EXTERN void vpmu_config_destroy(vpmu_config *cfg);
VPMU_EXTERN int  vpmu_config_set_vcpus(vpmu_config *cfg, unsigned nvcpus);
/*
 * Tunables by hwpmc name ("nsamples" or "kern.hwpmc.nsamples",
 * "unprivileged_syspmcs" or "security.bsd.unprivileged_syspmcs").  Any
 * value is stored; vpmu_vm_create() validates them as hwpmc's module load
 * does, resetting bad values with hwpmc's diagnostics.
 */
VPMU_EXTERN int  vpmu_config_set_tunable(vpmu_config *cfg, const char *name, long value);
VPMU_EXTERN int  vpmu_config_get_tunable(const vpmu_config *cfg, const char *name, long *value);
/*
 * The tunables, by index from 0 until ENOENT: each one's names, its
 * default, and whether vpmu_vm_set_tunable() may change it on a live VM.
 */
struct vpmu_tunable_info {
	const char *name;		/* short name: "nsamples" */
	const char *sysctl;		/* hwpmc's name: "kern.hwpmc.nsamples" */
	long def;			/* the default */
	int live;			/* read-write on a VM (mincount, the policies) */
};
VPMU_EXTERN int  vpmu_tunable_get_info(unsigned index, struct vpmu_tunable_info *info);
/* A PMC class with rows counters of width bits; rows 0 removes the class. */
VPMU_EXTERN int  vpmu_config_set_class(vpmu_config *cfg, uint32_t cls, unsigned rows, unsigned width);
VPMU_EXTERN int  vpmu_config_set_source(vpmu_config *cfg, const struct vpmu_source_ops *ops, void *arg);
/*
 * At most n host counters run at once on one vCPU (0: the source's own
 * capacity, which may be unlimited).  PMCs past the limit take turns
 * (vpmu_config_set_mux_interval()); a guest reads each one's count scaled
 * by enabled / running time, vpmu_pmc_get_count() gives the unscaled
 * triple, and vpmu_pmc_get_unsupported() says EBUSY while one waits.
 */
VPMU_EXTERN int  vpmu_config_set_capacity(vpmu_config *cfg, unsigned n);
/*
 * Who implements a KVM guest's counters (vpmu_kvm(3), "PMU MODES"):
 * libvpmu, through user-space MSR exits (trap, the default); KVM's own vPMU
 * over the host's PMU (kvm); kvm where the host allows it, else trap
 * (auto).  vpmu_kvm_create() decides; EINVAL for another value.
 */
#define VPMU_PMU_MODE_TRAP	0
#define VPMU_PMU_MODE_KVM	1
#define VPMU_PMU_MODE_AUTO	2
VPMU_EXTERN int  vpmu_config_set_pmu_mode(vpmu_config *cfg, int mode);
/*
 * When more PMCs want to count on a vCPU than it has host counters, the
 * slot holders rotate every ns of the vCPU's run time -- its thread's CPU
 * time in its runs, not wall time (default 4 ms, as perf's default at
 * HZ=250; 1 us .. 10 s).
 */
VPMU_EXTERN int  vpmu_config_set_mux_interval(vpmu_config *cfg, uint64_t ns);
/*
 * Options by name, as vpmu-run's long options and vpmu_kvm_open()'s spec
 * (vpmu_config(3), SPEC STRINGS): pmu, source, host-counters,
 * mux-interval (us), pv-port, pmu-mode, event-filter, uncounted, and a
 * source's own ("exact-mode", ...).  0, or EINVAL with what was wanted in
 * why.  parse: a comma-separated spec ("intel-v2:gp=2,source=exact,
 * exact-mode=step"), all or nothing; why gets "element: reason".
 */
VPMU_EXTERN int  vpmu_config_set_option(vpmu_config *cfg, const char *key, const char *value,
    char *why, size_t whylen);
VPMU_EXTERN int  vpmu_config_parse(vpmu_config *cfg, const char *spec, char *why, size_t whylen);
VPMU_EXTERN void vpmu_config_set_log(vpmu_config *cfg, vpmu_log_fn fn, void *arg);
VPMU_EXTERN void vpmu_config_set_notify(vpmu_config *cfg, vpmu_notify_fn fn, void *arg);

/* ---- the VM ------------------------------------------------------------- */

VPMU_EXTERN int  vpmu_vm_create(const vpmu_config *cfg, vpmu_vm **vmp);
VPMU_EXTERN void vpmu_vm_destroy(vpmu_vm *vm);
VPMU_EXTERN int  vpmu_vm_get_tunable(const vpmu_vm *vm, const char *name, long *value);
/* Read-write tunables only (mincount, the two security.bsd policies). */
VPMU_EXTERN int  vpmu_vm_set_tunable(vpmu_vm *vm, const char *name, long value);
VPMU_EXTERN unsigned vpmu_vm_get_nvcpus(const vpmu_vm *vm);
/* A vCPU that is offline is hwpmc's "absent or disabled CPU". */
VPMU_EXTERN int  vpmu_vcpu_set_online(vpmu_vm *vm, unsigned cpu, int online);
/* The host thread running the vCPU (for the perf source); 0 = the opener. */
VPMU_EXTERN int  vpmu_vcpu_set_thread(vpmu_vm *vm, unsigned cpu, pid_t tid);

/* ---- hwpmc operations ----------------------------------------------------
 * Each takes the caller's identity and returns 0 or the seed's errno.  All
 * of them go through vpmu_vm_op(), which counts syscalls and errors in the
 * driver statistics.
 */

struct vpmu_pmc_alloc {			/* PMC_OP_PMCALLOCATE */
	uint32_t caps;			/* VPMU_CAP_*: USER, SYSTEM, EDGE, INVERT, THRESHOLD... */
	uint32_t cpu;			/* vCPU, or VPMU_CPU_ANY for process scope */
	uint32_t cls;			/* enum vpmu_class */
	uint32_t event;			/* enum vpmu_event */
	uint32_t flags;			/* VPMU_F_* modifiers */
	uint32_t mode;			/* enum vpmu_mode */
	vpmu_pmc_id pmcid;		/* out */
	uint32_t cmask;			/* counter mask, with VPMU_CAP_THRESHOLD */
	uint64_t count;			/* initial count or sampling reload */
	uint64_t raw;			/* event select, with VPMU_EV_RAW */
};

struct vpmu_op_simple { vpmu_pmc_id pmcid; };			/* RELEASE, START, STOP */
struct vpmu_op_pmcattach { vpmu_pmc_id pmcid; int32_t pid; };	/* ATTACH, DETACH */
struct vpmu_op_pmcrw { uint32_t flags; vpmu_pmc_id pmcid; uint64_t value; };
struct vpmu_op_pmcsetcount { uint64_t count; vpmu_pmc_id pmcid; uint32_t pad; };
struct vpmu_op_getmsr { uint32_t msr; vpmu_pmc_id pmcid; };
struct vpmu_op_pmcadmin { int32_t cpu; uint32_t flags; int32_t row; uint32_t state; };
struct vpmu_op_configurelog { int32_t flags; int32_t logfd; };
struct vpmu_op_writelog { uint32_t userdata; };

struct vpmu_classinfo {
	uint32_t cls;
	uint32_t caps;
	uint32_t width;
	uint32_t num;
};
struct vpmu_cpuinfo {			/* PMC_OP_GETCPUINFO */
	uint32_t cputype;
	uint32_t ncpu;
	uint32_t npmc;
	uint32_t nclass;
	struct vpmu_classinfo classes[VPMU_CLASS_MAX];
};
struct vpmu_driverstats {		/* PMC_OP_GETDRIVERSTATS, hwpmc's eight */
	uint32_t intr_ignored;
	uint32_t intr_processed;
	uint32_t intr_bufferfull;
	uint32_t syscalls;
	uint32_t syscall_errors;
	uint32_t buffer_requests;
	uint32_t buffer_requests_failed;
	uint32_t log_sweeps;
};
struct vpmu_pmc_info {			/* one row of PMC_OP_GETPMCINFO */
	char	 name[VPMU_NAME_MAX];
	uint32_t cls;
	int32_t	 enabled;
	uint32_t rowdisp;		/* enum vpmu_disp */
	int32_t	 ownerpid;		/* -1 if the slot holds no PMC */
	uint32_t mode;
	uint32_t event;
	uint32_t flags;
	uint32_t pad;
	uint64_t reloadcount;
};
struct vpmu_op_getpmcinfo {
	uint32_t cpu;
	uint32_t npmc;			/* in: entries at pmcs; out: rows filled */
	struct vpmu_pmc_info *pmcs;
};

/* The one dispatch point: op is enum vpmu_op, arg the op's struct above. */
VPMU_EXTERN int vpmu_vm_op(vpmu_vm *vm, const struct vpmu_cred *caller, int op, void *arg);
/*
 * A MAP_IN record in the caller's log: the executable object path is
 * mapped at start in process pid (-1: the whole machine, as hwpmc logs the
 * kernel).  For a VMM that loads the guest's image itself (vpmu_log(3)).
 */
VPMU_EXTERN int vpmu_log_map_in(vpmu_vm *vm, const struct vpmu_cred *caller, int32_t pid,
    uint64_t start, const char *path);

VPMU_EXTERN int vpmu_pmc_allocate(vpmu_vm *vm, const struct vpmu_cred *caller, struct vpmu_pmc_alloc *req);
VPMU_EXTERN int vpmu_pmc_release(vpmu_vm *vm, const struct vpmu_cred *caller, vpmu_pmc_id id);
VPMU_EXTERN int vpmu_pmc_attach(vpmu_vm *vm, const struct vpmu_cred *caller, vpmu_pmc_id id, int32_t pid);
VPMU_EXTERN int vpmu_pmc_detach(vpmu_vm *vm, const struct vpmu_cred *caller, vpmu_pmc_id id, int32_t pid);
VPMU_EXTERN int vpmu_pmc_start(vpmu_vm *vm, const struct vpmu_cred *caller, vpmu_pmc_id id);
VPMU_EXTERN int vpmu_pmc_stop(vpmu_vm *vm, const struct vpmu_cred *caller, vpmu_pmc_id id);
/* flags: VPMU_F_NEWVALUE writes *value; VPMU_F_OLDVALUE returns the old value in *value. */
VPMU_EXTERN int vpmu_pmc_rw(vpmu_vm *vm, const struct vpmu_cred *caller, vpmu_pmc_id id,
    uint32_t flags, uint64_t *value);
VPMU_EXTERN int vpmu_pmc_read(vpmu_vm *vm, const struct vpmu_cred *caller, vpmu_pmc_id id, uint64_t *value);
VPMU_EXTERN int vpmu_pmc_write(vpmu_vm *vm, const struct vpmu_cred *caller, vpmu_pmc_id id, uint64_t value);
VPMU_EXTERN int vpmu_pmc_setcount(vpmu_vm *vm, const struct vpmu_cred *caller, vpmu_pmc_id id, uint64_t count);
VPMU_EXTERN int vpmu_pmc_getmsr(vpmu_vm *vm, const struct vpmu_cred *caller, vpmu_pmc_id id, uint32_t *msr);
VPMU_EXTERN int vpmu_pmc_admin(vpmu_vm *vm, const struct vpmu_cred *caller, int32_t cpu, int32_t row,
    uint32_t state);
VPMU_EXTERN int vpmu_vm_get_cpuinfo(vpmu_vm *vm, const struct vpmu_cred *caller, struct vpmu_cpuinfo *ci);
VPMU_EXTERN int vpmu_vm_get_driverstats(vpmu_vm *vm, const struct vpmu_cred *caller,
    struct vpmu_driverstats *st);
/* *version: in, the caller's ABI version; out, libvpmu's (VPMU_PMC_VERSION). */
VPMU_EXTERN int vpmu_vm_get_moduleversion(vpmu_vm *vm, const struct vpmu_cred *caller, uint32_t *version);
VPMU_EXTERN int vpmu_vm_get_pmcinfo(vpmu_vm *vm, const struct vpmu_cred *caller, uint32_t cpu,
    struct vpmu_pmc_info *pmcs, uint32_t *npmc);

/*
 * Host view of a PMC, no permission check: the unscaled count with the time
 * (ns) it was enabled and running on the source.  The value is what PMCRW
 * would read: the initial or written value plus everything counted since,
 * for a process PMC on all of its targets.  A PMC id is unique per owner only
 * (as in hwpmc), so the owner's pid names the PMC with it.
 */
VPMU_EXTERN int vpmu_pmc_get_count(vpmu_vm *vm, int32_t owner, vpmu_pmc_id id,
    struct vpmu_count *out);
/*
 * Why a PMC counts nothing: EOPNOTSUPP, the source cannot count its event;
 * EBUSY, it runs past the host's capacity (vpmu_config_set_capacity()).
 * 0 if it counts.
 */
VPMU_EXTERN int vpmu_pmc_get_unsupported(vpmu_vm *vm, int32_t owner, vpmu_pmc_id id,
    char *why, size_t whylen);

/* ---- guest process hooks (hwpmc's HWPMC_HOOKS) ---------------------------
 * Called by the VMM, or through the paravirtual channel by the guest kernel.
 */
/* A new process (proc->pid); ppid 0 = no parent known. */
VPMU_EXTERN int vpmu_proc_create(vpmu_vm *vm, const struct vpmu_cred *proc, int32_t ppid);
/* child is created with the parent's credentials. */
VPMU_EXTERN int vpmu_proc_fork(vpmu_vm *vm, int32_t parent, int32_t child);
/* newcred NULL keeps the credentials; path may be NULL. */
VPMU_EXTERN int vpmu_proc_exec(vpmu_vm *vm, int32_t pid, const char *path, const struct vpmu_cred *newcred);
VPMU_EXTERN int vpmu_proc_exit(vpmu_vm *vm, int32_t pid);
/* A thread of pid is scheduled on / taken off vCPU cpu. */
VPMU_EXTERN int vpmu_proc_switch_in(vpmu_vm *vm, unsigned cpu, int32_t pid, int32_t tid);
VPMU_EXTERN int vpmu_proc_switch_out(vpmu_vm *vm, unsigned cpu);

/* ---- the synthetic source's script ---------------------------------------
 * For a VM whose source is vpmu_source_synthetic (EINVAL otherwise).
 * Counts are exact: an event at r per ms enabled for t ns reads r*t/1e6.
 */
VPMU_EXTERN int vpmu_synthetic_set_rate(vpmu_vm *vm, unsigned cpu, uint32_t event, uint64_t per_ms);
VPMU_EXTERN int vpmu_synthetic_advance(vpmu_vm *vm, unsigned cpu, uint64_t ns);

#ifdef __cplusplus
}
#endif
#endif /* VPMU_VPMU_H */
