/*
 * pvchan.h -- the paravirtual channel's host side, shared by pv.c (doorbell,
 * block validation, errno translation, dispatch) and the personalities:
 *
 *   pv_hwpmc.c     PMC_OP_* and the kernel hooks
 *   pv_perfmon.c   perfmon(4) ioctls on per-process open devices
 *   pv_pctr.c      pctr(4) ioctls
 *   pv_fastpage.c  the fast-read pages and their refresh thread
 *   pv_dev.c       the devices' descriptor table
 *
 * Each personality is a struct pv_personality: its operations (with the
 * argument lengths pv.c checks before calling them) and optional life-cycle
 * hooks.  Locking: pv->lock guards every personality's state and is taken
 * by pv.c around each handler; the VM lock (vpmu__vm_lock) nests inside it
 * (core calls take it themselves).  Never take pv->lock with the VM lock held.
 */
#ifndef VPMU_PVCHAN_H
#define VPMU_PVCHAN_H

#include <pthread.h>
#include <stdbool.h>
#include <stdint.h>

#include <vpmu-guest/pv.h>
#include <vpmu/pv.h>

#include "internal.h"
#include "gmem.h"

struct vpmu_pv;

/* One request being carried out. */
struct pv_call {
	struct vpmu_vm *vm;
	struct vpmu_pv *pv;
	unsigned cpu;			/* the vCPU that rang */
	uint32_t op;
	struct vpmu_cred cred;		/* from the block: pid, tid, uid, flags */
	uint8_t *arg;			/* host copy of the argument; copied back on success */
	uint32_t arglen;
	int64_t retval;			/* the block's retval (0 unless set) */
};

/* A handler returns 0 or a host errno (Linux values, VPMU_EDOOFUS, ...). */
typedef int pv_fn(struct pv_call *c);

struct pv_opdesc {
	uint32_t op;
	uint32_t minlen, maxlen;	/* argument bytes accepted; else EINVAL */
	pv_fn *fn;
	const char *name;
};

struct pv_personality {
	const char *name;
	const struct pv_opdesc *ops;
	unsigned nops;
	int  (*init)(struct vpmu_pv *pv);		/* optional: at VM creation */
	void (*fini)(struct vpmu_pv *pv);		/* optional: at VM destruction */
	/* optional: guest process pid exited (PROC_EXIT), with pv->lock held */
	void (*proc_exit)(struct vpmu_pv *pv, int32_t pid);
	/* optional: after every exit of vCPU cpu (the layer's exit hook), no lock held */
	void (*vcpu_exit)(struct vpmu_pv *pv, unsigned cpu);
};

extern const struct pv_personality vpmu__pv_hwpmc;
extern const struct pv_personality vpmu__pv_perfmon;
extern const struct pv_personality vpmu__pv_pctr;
extern const struct pv_personality vpmu__pv_fastpage;

struct pv_vcpu {
	uint32_t addr_hi;		/* latched by OUT32 to VPMU_PV_PORT_HI */
	int32_t  last_error;		/* guest errno of the last doorbell (IN32) */
};

struct vpmu_pv {
	struct vpmu_vm *vm;
	pthread_mutex_t lock;
	struct pv_vcpu *vcpu;
	int logfd[VPMU_PV_MAX_LOGFDS];	/* host fds offered to the guest, -1 none */
	void *perfmon;			/* pv_perfmon.c's state */
	void *pctr;			/* pv_pctr.c's */
	void *fast;			/* pv_fastpage.c's */
	struct vpmu_pv_stats st;	/* under lock */
};

/*
 * Between personalities (pv->lock held by the caller):
 *
 * pv_fastpage.c: give hwpmc PMC id of owner pid a slot in pid's fast-read
 * page (PMCGETMSR); *slot is what PMCGETMSR returns.
 */
int	vpmu__pv_fast_bind(struct vpmu_pv *pv, int32_t pid, vpmu_pmc_id id, uint32_t *slot);
/*
 * pv_pctr.c: pctr counter i (0 .. PCTR_NUM-1) on vCPU cpu as rdpmc would
 * read it (40 bits), with its function word; ENOENT if the counter has no
 * function set.  For the fast-read page's pctr slots.
 */
int	vpmu__pv_pctr_peek(struct vpmu_pv *pv, unsigned cpu, unsigned i, uint64_t *value,
	    uint32_t *fn, struct vpmu_count *times);

/*
 * pv_dev.c: a device's open descriptors (perfmon, pctr), per device,
 * numbered from 1 and never reused, each valid for its opener's pid only.
 */
struct pv_fd {
	struct pv_fd *next;
	int32_t fd;
	int32_t pid;			/* the opener */
	uint32_t fflags;		/* VPMU_PV_FREAD | VPMU_PV_FWRITE */
	uint32_t minor;
};
struct pv_fdtab {
	struct pv_fd *fds;
	int32_t nextfd;			/* 0: not yet used (1 is the first) */
};
/* A new descriptor of c's caller, as o asks (checked by the device): ENOSPC, ENOMEM. */
int	vpmu__pv_fd_open(struct pv_fdtab *t, const struct pv_call *c,
	    const struct vpmu_pv_open *o, struct pv_fd **fp);
/* Descriptor fd of pid (pid 0: anyone's), or NULL. */
struct pv_fd *vpmu__pv_fd_find(const struct pv_fdtab *t, int32_t fd, int32_t pid);
/* The first descriptor of pid (0: any), or NULL: the device closes them one by one. */
struct pv_fd *vpmu__pv_fd_of_pid(const struct pv_fdtab *t, int32_t pid);
void	vpmu__pv_fd_free(struct pv_fdtab *t, struct pv_fd *f);

/*
 * The channel is a layer of the VM (struct vpmu__layer, libvpmu/internal.h),
 * listed by vpmu_vm_create() (vm_create.c): created and destroyed with it,
 * its ports and its exit hook served through this descriptor.  Work for
 * the exit hook (the fast pages: pages registered) is counted in
 * vm->exit_work, changed under pv->lock, read without it at every exit.
 */
extern const struct vpmu__layer vpmu__pv_layer;
void	vpmu__pv_destroy(struct vpmu_vm *vm);

/* For the personalities. */
/* Guest RAM: 0, or EFAULT when [gpa, gpa+len) is not inside one RAM slot. */
int	vpmu__pv_read(const struct vpmu_pv *pv, uint64_t gpa, void *buf, size_t len);
int	vpmu__pv_write(const struct vpmu_pv *pv, uint64_t gpa, const void *buf, size_t len);
/* The host address of [gpa, gpa+len) inside one slot, or NULL. */
void	*vpmu__pv_hva(const struct vpmu_pv *pv, uint64_t gpa, size_t len);
/* A guest process ended: every personality forgets it (pv->lock held). */
void	vpmu__pv_proc_exit(struct vpmu_pv *pv, int32_t pid);
/* Host errno -> the guest's VPMU_PV_E* value. */
int32_t	vpmu__pv_errno(int host_errno);

static inline struct vpmu_pv *
vpmu__pv_of(const struct vpmu_vm *vm)
{
	return (vm->pv);
}

#endif /* VPMU_PVCHAN_H */
