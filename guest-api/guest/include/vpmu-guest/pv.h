/*
 * <vpmu-guest/pv.h> -- the libvpmu paravirtual channel ABI, version 1.
 *
 * Shared, byte for byte, by the guest (freestanding: this header needs only
 * <stdint.h>) and by libvpmu on the host.  vpmu_pv(4) is the specification;
 * this header is its C transcription.  All integers are little-endian; every
 * struct below has the same layout under LP64 and ILP32 (explicit padding,
 * no pointers, no long).
 *
 * The doorbell.  A guest builds a request block (struct vpmu_pv_req followed
 * by the operation's argument) in its RAM and performs a 32-bit OUT of the
 * block's guest-physical address to VPMU_PV_PORT.  The vCPU does not run
 * again until libvpmu has carried out the request and written req.error,
 * req.retval, req.done and the argument's out fields back into the block.
 * Bits 63:32 of the address come from the last 32-bit OUT to
 * VPMU_PV_PORT_HI on the same vCPU (0 if none); each doorbell clears them.
 * A 32-bit IN from VPMU_PV_PORT returns the vCPU's last doorbell errno
 * (the only way to learn EFAULT when the block itself cannot be reached);
 * a 32-bit IN from VPMU_PV_PORT_HI returns VPMU_PV_MAGIC (a probe).  Other
 * sizes and directions are ignored (an IN reads all ones).
 */
#ifndef VPMU_GUEST_PV_H
#define VPMU_GUEST_PV_H

#include <stdint.h>

/* ---- doorbell ---------------------------------------------------------------- */

#define VPMU_PV_PORT		0x5650u		/* "VP": OUT32 = block address, IN32 = last errno */
#define VPMU_PV_PORT_HI		0x5654u		/* OUT32 = address bits 63:32; IN32 = magic */
/*
 * VPMU_PV_PORT and VPMU_PV_PORT_HI are the default ports.  A VMM may move
 * the channel (vpmu_config_set_pv_port(3)): its ports are then BASE and
 * BASE + VPMU_PV_PORT_HI_OFFSET, with the same meaning.
 */
#define VPMU_PV_PORT_HI_OFFSET	4u
#define VPMU_PV_MAGIC		0x554d5056u	/* "VPMU" in memory order */
#define VPMU_PV_VERSION		1u
#define VPMU_PV_ALIGN		8u		/* the block's address must be a multiple */
#define VPMU_PV_MAX_BLOCK	65536u		/* header + argument, at most */

/* ---- the request block ----------------------------------------------------------- */

/* Identity flags (struct vpmu_pv_req.cflags). */
#define VPMU_PV_CRED_PRIVILEGED	0x1u		/* super-user (hwpmc's priv_check) */
#define VPMU_PV_CRED_JAILED	0x2u		/* in a jail */
#define VPMU_PV_CRED_MASK	0x3u

struct vpmu_pv_req {
	uint32_t magic;		/*  0 in: VPMU_PV_MAGIC */
	uint16_t version;	/*  4 in: VPMU_PV_VERSION */
	uint16_t hdrsize;	/*  6 in: sizeof(struct vpmu_pv_req) = 64 */
	uint32_t op;		/*  8 in: VPMU_PV_OP_* */
	uint32_t arglen;	/* 12 in: bytes of argument after the header */
	int32_t  pid;		/* 16 in: the calling guest process */
	int32_t  tid;		/* 20 in: its thread */
	uint32_t uid;		/* 24 in: its effective uid */
	uint32_t cflags;	/* 28 in: VPMU_PV_CRED_* */
	int32_t  error;		/* 32 out: 0 or a VPMU_PV_E* errno */
	uint32_t done;		/* 36 out: VPMU_PV_DONE once error/retval/argument are written */
	int64_t  retval;	/* 40 out: the operation's result (a descriptor, ...), else 0 */
	uint64_t reserved[2];	/* 48 in: must be 0 */
	/* 64: the argument, arglen bytes */
};
#define VPMU_PV_HDRSIZE		64u
#define VPMU_PV_DONE		0x454e4f44u	/* "DONE" */

/*
 * Guest pids are 1 .. VPMU_PV_PID_MAX (a block naming another pid as the
 * caller gets EINVAL); the pids above are libvpmu's own owners (the perfmon
 * and pctr devices' counters).
 */
#define VPMU_PV_PID_MAX		0x3FFFFFFF

/* ---- errno values (FreeBSD's numbering; what req.error and IN32 carry) --------- */

#define VPMU_PV_EPERM		1
#define VPMU_PV_ESRCH		3
#define VPMU_PV_EIO		5	/* a host failure the seeds have no code for */
#define VPMU_PV_ENXIO		6
#define VPMU_PV_EBADF		9
#define VPMU_PV_ENOMEM		12
#define VPMU_PV_EFAULT		14
#define VPMU_PV_EBUSY		16
#define VPMU_PV_EEXIST		17
#define VPMU_PV_ENODEV		19
#define VPMU_PV_EINVAL		22
#define VPMU_PV_ENOTTY		25
#define VPMU_PV_ENOSPC		28
#define VPMU_PV_EPIPE		32
#define VPMU_PV_EAGAIN		35
#define VPMU_PV_EOPNOTSUPP	45
#define VPMU_PV_EPROGMISMATCH	75
#define VPMU_PV_ENOSYS		78
#define VPMU_PV_EDOOFUS		88

/* ---- operations ------------------------------------------------------------------ */

/*
 * 0 .. 18: hwpmc(4)'s PMC_OP_* (FreeBSD's enum pmc_ops), with the
 * arguments below (FreeBSD's amd64 layouts).
 */
#define VPMU_PV_OP_CONFIGURELOG		0	/* struct vpmu_pv_configurelog */
#define VPMU_PV_OP_FLUSHLOG		1	/* no argument */
#define VPMU_PV_OP_GETCPUINFO		2	/* struct vpmu_pv_getcpuinfo (out) */
#define VPMU_PV_OP_GETDRIVERSTATS	3	/* struct vpmu_pv_getdriverstats (out) */
#define VPMU_PV_OP_GETMODULEVERSION	4	/* uint32_t (in: the caller's, out: libvpmu's) */
#define VPMU_PV_OP_GETPMCINFO		5	/* struct vpmu_pv_getpmcinfo + room for npmc rows */
#define VPMU_PV_OP_PMCADMIN		6	/* struct vpmu_pv_pmcadmin */
#define VPMU_PV_OP_PMCALLOCATE		7	/* struct vpmu_pv_pmcallocate */
#define VPMU_PV_OP_PMCATTACH		8	/* struct vpmu_pv_pmcattach */
#define VPMU_PV_OP_PMCDETACH		9	/* struct vpmu_pv_pmcattach */
#define VPMU_PV_OP_PMCGETMSR		10	/* struct vpmu_pv_getmsr */
#define VPMU_PV_OP_PMCRELEASE		11	/* struct vpmu_pv_simple */
#define VPMU_PV_OP_PMCRW		12	/* struct vpmu_pv_pmcrw */
#define VPMU_PV_OP_PMCSETCOUNT		13	/* struct vpmu_pv_pmcsetcount */
#define VPMU_PV_OP_PMCSTART		14	/* struct vpmu_pv_simple */
#define VPMU_PV_OP_PMCSTOP		15	/* struct vpmu_pv_simple */
#define VPMU_PV_OP_WRITELOG		16	/* struct vpmu_pv_writelog */
#define VPMU_PV_OP_CLOSELOG		17	/* no argument */
#define VPMU_PV_OP_GETDYNEVENTINFO	18	/* struct vpmu_pv_getdyneventinfo + room */

/* 0x100: the guest kernel's hooks (HWPMC_HOOKS).  Callers must be privileged. */
#define VPMU_PV_OP_PROC_CREATE		0x100	/* struct vpmu_pv_proc */
#define VPMU_PV_OP_PROC_FORK		0x101	/* struct vpmu_pv_fork */
#define VPMU_PV_OP_PROC_EXEC		0x102	/* struct vpmu_pv_exec + path */
#define VPMU_PV_OP_PROC_EXIT		0x103	/* struct vpmu_pv_pid */
#define VPMU_PV_OP_CSW_IN		0x104	/* struct vpmu_pv_csw: on the calling vCPU */
#define VPMU_PV_OP_CSW_OUT		0x105	/* no argument: the calling vCPU */

/* 0x200: perfmon(4) as a per-process open device. */
#define VPMU_PV_OP_PERFMON_OPEN		0x200	/* struct vpmu_pv_open; retval = descriptor */
#define VPMU_PV_OP_PERFMON_CLOSE	0x201	/* struct vpmu_pv_close */
#define VPMU_PV_OP_PERFMON_IOCTL	0x202	/* struct vpmu_pv_ioctl + the ioctl's data */

/* 0x300: pctr(4), the same way. */
#define VPMU_PV_OP_PCTR_OPEN		0x300	/* struct vpmu_pv_open; retval = descriptor */
#define VPMU_PV_OP_PCTR_CLOSE		0x301	/* struct vpmu_pv_close */
#define VPMU_PV_OP_PCTR_IOCTL		0x302	/* struct vpmu_pv_ioctl + the ioctl's data */

/* 0x400: the fast-read page of the calling process. */
#define VPMU_PV_OP_FASTPAGE_SET		0x400	/* struct vpmu_pv_fastpage */
#define VPMU_PV_OP_FASTPAGE_CLEAR	0x401	/* no argument */

/* 0x500: nothing, after every check: a round trip for benchmarks and probes. */
#define VPMU_PV_OP_NULL			0x500	/* no argument */

/* ---- hwpmc argument layouts (FreeBSD sys/sys/pmc.h, amd64) ----------------------- */

struct vpmu_pv_configurelog {		/* 8 bytes */
	int32_t  flags;			/* must be 0 */
	int32_t  logfd;			/* a log descriptor the VMM offers (vpmu_pv(4)), -1 = close */
};

struct vpmu_pv_classinfo {		/* 16 bytes */
	uint32_t cls;
	uint32_t caps;
	uint32_t width;
	uint32_t num;
};
struct vpmu_pv_getcpuinfo {		/* 144 bytes */
	uint32_t cputype;
	uint32_t ncpu;
	uint32_t npmc;
	uint32_t nclass;
	struct vpmu_pv_classinfo classes[8];
};

struct vpmu_pv_getdriverstats {		/* 32 bytes */
	uint32_t intr_ignored;
	uint32_t intr_processed;
	uint32_t intr_bufferfull;
	uint32_t syscalls;
	uint32_t syscall_errors;
	uint32_t buffer_requests;
	uint32_t buffer_requests_failed;
	uint32_t log_sweeps;
};

struct vpmu_pv_pmcinfo {		/* 104 bytes: struct pmc_info */
	char	 name[64];
	uint32_t cls;
	int32_t	 enabled;
	uint32_t rowdisp;
	int32_t	 ownerpid;		/* -1: the row holds no PMC */
	uint32_t mode;
	uint32_t event;
	uint32_t flags;
	uint32_t pad;
	uint64_t reloadcount;
};
struct vpmu_pv_getpmcinfo {		/* 8 bytes, then npmc struct vpmu_pv_pmcinfo */
	int32_t  cpu;
	uint32_t pad;
	/* struct vpmu_pv_pmcinfo pmcs[npmc]: arglen must hold every row (else EFAULT) */
};

struct vpmu_pv_pmcadmin {		/* 16 bytes */
	int32_t  cpu;
	uint32_t flags;
	int32_t  row;			/* pm_pmc: the row index */
	uint32_t state;			/* VPMU_STATE_FREE (enable) / _DISABLED */
};

struct vpmu_pv_pmcallocate {		/* 72 bytes */
	uint32_t caps;			/*  0 PMC_CAP_* */
	uint32_t cpu;			/*  4 vCPU, or 0xFFFFFFFF (PMC_CPU_ANY) */
	uint32_t cls;			/*  8 enum pmc_class */
	uint32_t ev;			/* 12 event: vpmu_pv(4) EVENTS */
	uint32_t flags;			/* 16 PMC_F_* */
	uint32_t mode;			/* 20 enum pmc_mode */
	uint32_t pmcid;			/* 24 out */
	uint32_t pad;			/* 28 */
	uint64_t count;			/* 32 initial count / sampling reload */
	/* 40: pm_md, 32 bytes: libvpmu's use of it */
	uint64_t md_config;		/* 40 event select, for event VPMU_PV_EV_RAW */
	uint32_t md_cmask;		/* 48 counter mask, with PMC_CAP_THRESHOLD */
	uint32_t md_pad[5];		/* 52 must be 0 */
};

struct vpmu_pv_pmcattach {		/* 8 bytes: ATTACH and DETACH */
	uint32_t pmcid;
	int32_t  pid;			/* 0: the caller */
};
struct vpmu_pv_getmsr {			/* 8 bytes */
	uint32_t msr;			/* out: the fast-page slot (see below) */
	uint32_t pmcid;
};
struct vpmu_pv_simple {			/* 4 bytes: RELEASE, START, STOP */
	uint32_t pmcid;
};
struct vpmu_pv_pmcrw {			/* 16 bytes */
	uint32_t flags;			/* PMC_F_NEWVALUE 0x10 | PMC_F_OLDVALUE 0x20 */
	uint32_t pmcid;
	uint64_t value;
};
struct vpmu_pv_pmcsetcount {		/* 16 bytes */
	uint64_t count;
	uint32_t pmcid;
	uint32_t pad;
};
struct vpmu_pv_writelog {		/* 4 bytes */
	uint32_t userdata;
};
struct vpmu_pv_dyneventdescr {		/* 68 bytes */
	char	 name[64];
	uint32_t code;
};
struct vpmu_pv_getdyneventinfo {	/* 8 bytes, then nevent descriptors */
	uint32_t cls;
	uint32_t nevent;		/* out */
};

/* Events for PMCALLOCATE.ev (libvpmu's codes, plus FreeBSD's fixed ones). */
#define VPMU_PV_EV_INSTRUCTIONS		0x01
#define VPMU_PV_EV_BRANCHES		0x02
#define VPMU_PV_EV_CYCLES		0x03
#define VPMU_PV_EV_REF_CYCLES		0x04
#define VPMU_PV_EV_TSC			0x05
#define VPMU_PV_EV_RAW			0xFF	/* md_config is the model's event select */
#define VPMU_PV_EV_FBSD_TSC		0x1000	/* PMC_EV_TSC_TSC */
#define VPMU_PV_EV_FBSD_IAF_INSTR	0x10000	/* PMC_EV_IAF_INSTR_RETIRED_ANY */
#define VPMU_PV_EV_FBSD_IAF_CYCLES	0x10001	/* PMC_EV_IAF_CPU_CLK_UNHALTED_CORE */
#define VPMU_PV_EV_FBSD_IAF_REF		0x10002	/* PMC_EV_IAF_CPU_CLK_UNHALTED_REF */

/* ---- hooks ----------------------------------------------------------------------- */

struct vpmu_pv_proc {			/* 16 bytes: PROC_CREATE */
	int32_t  pid;
	int32_t  ppid;			/* 0: no parent */
	uint32_t uid;
	uint32_t cflags;		/* VPMU_PV_CRED_* of the new process */
};
struct vpmu_pv_fork {			/* 8 bytes */
	int32_t  parent;
	int32_t  child;
};
struct vpmu_pv_exec {			/* 16 bytes, then a NUL-terminated path (< 1024 bytes) */
	int32_t  pid;
	uint32_t setcred;		/* 1: uid/cflags below are the new credentials */
	uint32_t uid;
	uint32_t cflags;
};
#define VPMU_PV_PATH_MAX	1024
struct vpmu_pv_pid {			/* 4 bytes: PROC_EXIT */
	int32_t  pid;
};
struct vpmu_pv_csw {			/* 8 bytes: CSW_IN */
	int32_t  pid;
	int32_t  tid;
};

/* ---- perfmon / pctr devices ----------------------------------------------------------- */

#define VPMU_PV_FREAD		0x1	/* FreeBSD / OpenBSD FREAD */
#define VPMU_PV_FWRITE		0x2	/* FWRITE */

struct vpmu_pv_open {			/* 8 bytes */
	uint32_t fflags;		/* VPMU_PV_FREAD | VPMU_PV_FWRITE */
	uint32_t minor;			/* pctr: must be 0 (else ENXIO); perfmon: 0 */
};
struct vpmu_pv_close {			/* 4 bytes */
	int32_t  fd;
};
struct vpmu_pv_ioctl {			/* 8 bytes, then IOCPARM_LEN(cmd) bytes of data */
	int32_t  fd;
	uint32_t cmd;			/* the ioctl request number, FreeBSD / OpenBSD encoding */
};

/* ---- the fast-read page ---------------------------------------------------------------- */

struct vpmu_pv_fastpage {		/* 8 bytes: FASTPAGE_SET */
	uint64_t gpa;			/* a 4 KiB-aligned page of guest RAM */
};

/* The layouts above are the ABI: their sizes, checked wherever this header is compiled. */
_Static_assert(sizeof(struct vpmu_pv_req) == VPMU_PV_HDRSIZE, "request header");
_Static_assert(sizeof(struct vpmu_pv_getcpuinfo) == 144, "pmc_op_getcpuinfo");
_Static_assert(sizeof(struct vpmu_pv_pmcinfo) == 104, "pmc_info");
_Static_assert(sizeof(struct vpmu_pv_pmcallocate) == 72, "pmc_op_pmcallocate");
_Static_assert(sizeof(struct vpmu_pv_pmcrw) == 16, "pmc_op_pmcrw");
_Static_assert(sizeof(struct vpmu_pv_pmcsetcount) == 16, "pmc_op_pmcsetcount");
_Static_assert(sizeof(struct vpmu_pv_dyneventdescr) == 68, "pmc_dyn_event_descr");

/* ---- the guest library (guest-api/guest/pv.c) --------------------------------------- */

/* Who is calling: what the guest kernel knows of the current thread. */
struct vpmu_pv_ident {
	int32_t  pid;
	int32_t  tid;
	uint32_t uid;
	uint32_t cflags;		/* VPMU_PV_CRED_* */
};

/*
 * The identity requests carry.  The library's own is one static record
 * (pid 1, tid 1, uid 0, privileged); a guest kernel (or the vpmu-run
 * runtime, which keeps one per vCPU) defines vpmu_pv_self() to return its
 * current thread's.
 */
struct vpmu_pv_ident *vpmu_pv_self(void);
void	vpmu_pv_set_self(int32_t pid, int32_t tid, uint32_t uid, uint32_t cflags);

/*
 * The guest-physical address of a guest-virtual one.  The library's own
 * is the identity (the vpmu-run boot protocol maps the first 1 GiB so); a
 * kernel with other page tables defines its own.
 */
uint64_t vpmu_pv_virt_to_phys(const void *p);

/*
 * One request: op with arglen bytes at arg (copied into a block on the
 * stack, the out fields copied back).  Returns the request's errno
 * (VPMU_PV_E*, 0 on success); *retval (may be NULL) gets req.retval, or 0
 * when the call fails.
 * arglen at most 4096 - 64 here; larger requests build their own block
 * with vpmu_pv_ring().
 */
int	vpmu_pv_call(uint32_t op, void *arg, uint32_t arglen, int64_t *retval);
/* Ring the doorbell for a block the caller built; returns IN32's errno. */
int	vpmu_pv_ring(struct vpmu_pv_req *req);
/* Fill a header for op with the current identity. */
void	vpmu_pv_req_init(struct vpmu_pv_req *req, uint32_t op, uint32_t arglen);
/* 1 if a libvpmu channel answers at the library's base + VPMU_PV_PORT_HI_OFFSET. */
int	vpmu_pv_probe(void);
/*
 * The channel's first port for every later call (default VPMU_PV_PORT):
 * the base the VMM configured.  One value for the whole guest; set it
 * before the first request.
 */
void	vpmu_pv_set_port(uint16_t base);
uint16_t vpmu_pv_port(void);

#endif /* VPMU_GUEST_PV_H */
