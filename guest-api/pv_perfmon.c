/*
 * pv_perfmon.c -- FreeBSD's perfmon(4) as a personality of the paravirtual
 * channel (pvchan.h): a guest process opens "/dev/perfmon" with
 * VPMU_PV_OP_PERFMON_OPEN and drives it with perfmon's ioctls.
 * vpmu_perfmon(4) is the guest's documentation; hwpmc_spec.md section 6
 * the driver's rules this follows.
 *
 * The device has NPMC (2) counters per VM, as the driver had per machine.
 * A counter owns no count of its own: PMIOSETUP allocates a core PMC
 * (system scope, counting, class VPMU_CLASS_PV) on the vCPU that issued it,
 * owned by libvpmu's pseudo-process PERFMON_OWNER, and every later ioctl
 * is an operation on that PMC.  So the count is what the VM's source
 * counted on that vCPU while the counter ran -- all of the guest's work
 * there, as a system-wide P6 counter counted all of a CPU's.
 *
 * The driver's own state survives: which counters are set up (inuse), the
 * control word each was given (P6 EVNTSEL layout, with PMCF_EN while
 * running), the single writer, and the open descriptors with their modes.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "pvchan.h"

/*
 * The counters' owner: a pid no guest process can have (pv.h reserves
 * those above VPMU_PV_PID_MAX for libvpmu), privileged so that system-mode
 * allocation is allowed whatever security.bsd.unprivileged_syspmcs says
 * -- the device's own permission check (FWRITE) has already been made.
 */
#define PERFMON_OWNER	((int32_t)VPMU_PV_PID_MAX + 1)

#define NPMC		2
#define MASK40		0xFFFFFFFFFFull

/* pmc_flags (bits 16..23 of the control word) */
#define PMCF_USR	0x01
#define PMCF_OS		0x02
#define PMCF_E		0x04
#define PMCF_INT	0x10
#define PMCF_EN		0x40
#define PMCF_INV	0x80
#define PMCF_SYS_FLAGS	(PMCF_INT | PMCF_EN)

/* FreeBSD's _IOC encoding. */
#define IOC_OUT		0x40000000u
#define IOC_IN		0x80000000u
#define IOCPARM_LEN(c)	(((c) >> 16) & 0x1FFFu)
#define IOC(inout, n, len)	((inout) | (uint32_t)(len) << 16 | (uint32_t)'5' << 8 | (n))

#define PMIOSETUP	IOC(IOC_IN, 1, 8)
#define PMIOSTART	IOC(IOC_IN, 2, 4)
#define PMIOSTOP	IOC(IOC_IN, 3, 4)
#define PMIOREAD_I386	IOC(IOC_IN | IOC_OUT, 4, 12)	/* 0xc00c3504 */
#define PMIOREAD_LP64	IOC(IOC_IN | IOC_OUT, 4, 16)	/* 0xc0103504 */
#define PMIORESET	IOC(IOC_IN, 5, 4)
#define PMIOTSTAMP_I386	IOC(IOC_OUT, 6, 12)		/* 0x400c3506 */
#define PMIOTSTAMP_LP64	IOC(IOC_OUT, 6, 16)		/* 0x40103506 */
#define PMIOGET		IOC(IOC_IN | IOC_OUT, 7, 8)

/* vpmu_pv_open.minor: the event table (vpmu_perfmon(4)). */
#define MINOR_P6	0
#define MINOR_P5	5
#define MINOR_P6_ALT	6

enum table { TAB_P6, TAB_P5 };

/*
 * The events libvpmu can count honestly, by code.  Pentium Pro: retired
 * instructions, retired branches, unhalted core cycles (SDM Vol. 3B
 * appendix A's P6 table).  Pentium: instructions and branches executed
 * -- on a machine that retires in order, the executed ones are the ones
 * that retire (the V-pipe count, 23, is a part of 22 with no modelled
 * equivalent).  Every other code is refused: libvpmu's sources cannot
 * count caches, buses, stalls or FP operations of a virtual CPU.  These
 * are those processors' own codes, not the architectural events of
 * libvpmu/arch.h, which came later: the Pentium Pro counts cycles with
 * 0x79, the Pentium numbers its events from 0.
 */
static const struct {
	uint8_t code;
	uint32_t event;
} p6_events[] = {
	{ 0xc0, VPMU_EV_INSTRUCTIONS },	/* INST_RETIRED */
	{ 0xc4, VPMU_EV_BRANCHES },	/* BR_INST_RETIRED */
	{ 0x79, VPMU_EV_CYCLES },	/* CPU_CLK_UNHALTED */
}, p5_events[] = {
	{ 22, VPMU_EV_INSTRUCTIONS },	/* INST_EXECUTED */
	{ 18, VPMU_EV_BRANCHES },	/* BRANCHES */
};

struct pm_ctr {
	bool inuse;			/* set up (perfmon_inuse bit) */
	uint32_t ctl;			/* control word, PMCF_EN while started */
	bool pmc;			/* it has a core PMC (it counts something) */
	vpmu_pmc_id id;
	unsigned cpu;
};

struct perfmon {
	struct pv_fdtab fds;		/* open descriptors (pv_dev.c); minor = the table */
	struct pv_fd *writer;		/* the one FWRITE open, or NULL */
	struct pm_ctr ctr[NPMC];
};

static const struct vpmu_cred owner_cred = { .pid = PERFMON_OWNER, .privileged = 1 };

/* ---- the core PMC behind a counter (VM lock taken here) ------------------- */

static void
ctr_release(struct vpmu_vm *vm, struct pm_ctr *k)
{
	struct vpmu_op_simple s;

	if (k->pmc) {
		s.pmcid = k->id;
		vpmu__vm_lock(vm);
		(void)vpmu_do_op_pmcrelease(vm, &owner_cred, &s);
		vpmu__vm_unlock(vm);
	}
	memset(k, 0, sizeof(*k));
}

/* One of the simple ops (START, STOP) on k's PMC. */
static int
ctr_simple(struct vpmu_vm *vm, struct pm_ctr *k, int (*op)(struct vpmu_vm *,
    const struct vpmu_cred *, void *))
{
	struct vpmu_op_simple s = { k->id };
	int error;

	if (!k->pmc)
		return (0);
	vpmu__vm_lock(vm);
	error = op(vm, &owner_cred, &s);
	return (vpmu__vm_unlock_err(vm, error));	/* START's host counter opened */
}

static uint64_t
ctr_value(struct vpmu_vm *vm, const struct pm_ctr *k)
{
	struct vpmu_pmc *pm;
	uint64_t v = 0;

	if (!k->pmc)
		return (0);
	vpmu__vm_lock(vm);
	if ((pm = vpmu__pmc_by_id(vm, PERFMON_OWNER, k->id)) != NULL)
		v = vpmu__pmc_estimate(vm, pm);
	vpmu__vm_unlock(vm);
	return (v);
}

/* Zero k's count, running or not (the driver resets without stopping). */
static int
ctr_zero(struct vpmu_vm *vm, struct pm_ctr *k)
{
	struct vpmu_pmc *pm;

	if (!k->pmc)
		return (0);
	vpmu__vm_lock(vm);
	if ((pm = vpmu__pmc_by_id(vm, PERFMON_OWNER, k->id)) != NULL)
		vpmu__pmc_set_base(vm, pm, 0);
	vpmu__vm_unlock(vm);
	return (pm != NULL ? 0 : EIO);
}

/*
 * The event a control word names in table tab, as an allocation request;
 * EINVAL for what cannot be counted.  *counts is false when the word is
 * valid but counts nothing (neither PMCF_USR nor PMCF_OS: the hardware
 * counts in neither mode).
 */
static int
decode(enum table tab, uint32_t ctl, struct vpmu_pmc_alloc *a, bool *counts)
{
	uint8_t code = ctl & 0xFF, unit = (ctl >> 8) & 0xFF;
	uint8_t fl = (ctl >> 16) & 0xFF, mask = ctl >> 24;
	size_t i;

	memset(a, 0, sizeof(*a));
	if (tab == TAB_P6) {
		for (i = 0; i < VPMU_ARRAY_SIZE(p6_events); i++)
			if (p6_events[i].code == code)
				a->event = p6_events[i].event;
		if (fl & PMCF_E)
			a->caps |= VPMU_CAP_EDGE;
		if (fl & PMCF_INV)
			a->caps |= VPMU_CAP_INVERT;
		if (mask != 0) {
			a->caps |= VPMU_CAP_THRESHOLD;
			a->cmask = mask;
		}
	} else {
		for (i = 0; i < VPMU_ARRAY_SIZE(p5_events); i++)
			if (p5_events[i].code == code)
				a->event = p5_events[i].event;
		/*
		 * The Pentium has no counter mask and no inversion; without
		 * PMCF_E the driver set CESR's "count clocks" bit: the
		 * counter measures the event's duration in clocks, which no
		 * source models.
		 */
		if (mask != 0 || (fl & PMCF_INV) || !(fl & PMCF_E))
			return (EINVAL);
	}
	/* None of the counted events has unit-mask variants. */
	if (a->event == VPMU_EV_NONE || unit != 0)
		return (EINVAL);
	if (fl & PMCF_USR)
		a->caps |= VPMU_CAP_USER;
	if (fl & PMCF_OS)
		a->caps |= VPMU_CAP_SYSTEM;
	*counts = (fl & (PMCF_USR | PMCF_OS)) != 0;
	a->cls = VPMU_CLASS_PV;
	a->mode = VPMU_MODE_SC;
	return (0);
}

/* ---- descriptors ------------------------------------------------------------ */

static struct perfmon *
state(struct vpmu_pv *pv)
{
	return (pv->perfmon);
}

/* perfmon_fini(): stop and free every counter. */
static void
fini_counters(struct vpmu_pv *pv)
{
	unsigned i;

	for (i = 0; i < NPMC; i++)
		ctr_release(pv->vm, &state(pv)->ctr[i]);
}

/* The writer's close is perfmon_fini(): its counters go. */
static void
fd_close(struct vpmu_pv *pv, struct pv_fd *f)
{
	struct perfmon *s = state(pv);

	if (s->writer == f) {
		s->writer = NULL;
		fini_counters(pv);
	}
	vpmu__pv_fd_free(&s->fds, f);
}

/* The event table a descriptor's minor chose. */
static enum table
table_of(const struct pv_fd *f)
{
	return (f->minor == MINOR_P5 ? TAB_P5 : TAB_P6);
}

static int
op_open(struct pv_call *c)
{
	struct perfmon *s = state(c->pv);
	struct vpmu_pv_open *o = (struct vpmu_pv_open *)c->arg;
	struct pv_fd *f;
	int error;

	if (o->fflags == 0 || (o->fflags & ~(VPMU_PV_FREAD | VPMU_PV_FWRITE)) != 0)
		return (EINVAL);
	if (o->minor != MINOR_P6 && o->minor != MINOR_P6_ALT && o->minor != MINOR_P5)
		return (ENXIO);			/* no such device */
	if ((o->fflags & VPMU_PV_FWRITE) && s->writer != NULL)
		return (EBUSY);			/* one writer at a time */
	if ((error = vpmu__pv_fd_open(&s->fds, c, o, &f)) != 0)
		return (error);
	if (o->fflags & VPMU_PV_FWRITE)
		s->writer = f;
	c->retval = f->fd;
	return (0);
}

static int
op_close(struct pv_call *c)
{
	struct vpmu_pv_close *cl = (struct vpmu_pv_close *)c->arg;
	struct pv_fd *f;

	if ((f = vpmu__pv_fd_find(&state(c->pv)->fds, cl->fd, c->cred.pid)) == NULL)
		return (EBADF);
	fd_close(c->pv, f);
	return (0);
}

/* ---- the ioctls ---------------------------------------------------------------- */

/* The counter named by an int argument, set up; the driver's two checks. */
static int
ctr_get(struct perfmon *s, int32_t num, struct pm_ctr **kp)
{
	if (num < 0 || num >= NPMC)
		return (EINVAL);
	if (!s->ctr[num].inuse)
		return (EBUSY);
	*kp = &s->ctr[num];
	return (0);
}

static int
do_setup(struct pv_call *c, struct pv_fd *f, uint8_t *data)
{
	struct perfmon *s = state(c->pv);
	struct pm_ctr *k, nk;
	struct vpmu_pmc_alloc a;
	int32_t num;
	uint32_t ctl;
	bool counts;
	int error;

	memcpy(&num, data, 4);
	memcpy(&ctl, data + 4, 4);
	if (num < 0 || num >= NPMC)
		return (EINVAL);
	k = &s->ctr[num];
	ctl &= ~((uint32_t)PMCF_SYS_FLAGS << 16);	/* stopped; no interrupt */
	if ((error = decode(table_of(f), ctl, &a, &counts)) != 0)
		return (error);			/* the old set-up stays */
	memset(&nk, 0, sizeof(nk));
	nk.inuse = true;
	nk.ctl = ctl;
	nk.cpu = c->cpu;
	if (counts) {
		a.cpu = c->cpu;
		vpmu__vm_lock(c->vm);
		error = vpmu_do_op_pmcallocate(c->vm, &owner_cred, &a);
		vpmu__vm_unlock(c->vm);
		if (error != 0)
			return (error);
		nk.pmc = true;
		nk.id = a.pmcid;
	}
	ctr_release(c->vm, k);			/* a new PMC counts from 0 */
	*k = nk;
	return (0);
}

/* FreeBSD's i386 or a 64-bit guest's {int; quad_t} layout. */
static void
put_pair(uint8_t *data, bool i386, int32_t n, uint64_t v)
{
	memcpy(data, &n, 4);
	memcpy(data + (i386 ? 4 : 8), &v, 8);
}

static int
op_ioctl(struct pv_call *c)
{
	struct perfmon *s = state(c->pv);
	struct vpmu_pv_ioctl *io = (struct vpmu_pv_ioctl *)c->arg;
	uint8_t *data = c->arg + sizeof(*io);
	uint32_t cmd = io->cmd, len = IOCPARM_LEN(cmd), val;
	struct pm_ctr *k;
	struct pv_fd *f;
	bool wr;
	int32_t num;
	uint64_t v;
	int error;

	if ((f = vpmu__pv_fd_find(&s->fds, io->fd, c->cred.pid)) == NULL)
		return (EBADF);
	if (c->arglen != sizeof(*io) + len)
		return (EINVAL);		/* the data must be what cmd says */
	/* What the driver writes only starts zeroed, as sys_ioctl() does. */
	if ((cmd & (IOC_IN | IOC_OUT)) == IOC_OUT)
		memset(data, 0, len);
	wr = (f->fflags & VPMU_PV_FWRITE) != 0;
	num = -1;
	if ((cmd & IOC_IN) && len >= 4)
		memcpy(&num, data, 4);

	switch (cmd) {
	case PMIOSETUP:
		if (!wr)
			return (EPERM);
		return (do_setup(c, f, data));
	case PMIOGET:
		if ((error = ctr_get(s, num, &k)) != 0)
			return (error);
		memcpy(data + 4, &k->ctl, 4);
		return (0);
	case PMIOSTART:
		if (!wr)
			return (EPERM);
		if ((error = ctr_get(s, num, &k)) != 0)
			return (error);
		if ((error = ctr_simple(c->vm, k, vpmu_do_op_pmcstart)) != 0)
			return (error);
		k->ctl |= (uint32_t)PMCF_EN << 16;
		return (0);
	case PMIOSTOP:
		if (!wr)
			return (EPERM);
		if ((error = ctr_get(s, num, &k)) != 0)
			return (error);
		/* A counter never started has nothing to stop (its PMC is
		   merely allocated, which PMCSTOP refuses). */
		if ((k->ctl & (uint32_t)PMCF_EN << 16) &&
		    (error = ctr_simple(c->vm, k, vpmu_do_op_pmcstop)) != 0)
			return (error);
		k->ctl &= ~((uint32_t)PMCF_EN << 16);
		return (0);
	case PMIORESET:
		if (!wr)
			return (EPERM);
		if ((error = ctr_get(s, num, &k)) != 0)
			return (error);
		return (ctr_zero(c->vm, k));
	case PMIOREAD_I386:
	case PMIOREAD_LP64:
		if ((error = ctr_get(s, num, &k)) != 0)
			return (error);
		/* The driver masked both the live and the saved value to 40 bits. */
		v = ctr_value(c->vm, k) & MASK40;
		put_pair(data, cmd == PMIOREAD_I386, num, v);
		return (0);
	case PMIOTSTAMP_I386:
	case PMIOTSTAMP_LP64:
		/*
		 * The host's TSC: the vCPU is stopped in this exit, and
		 * KVM's guest TSC is the host's plus the VM's offset (times
		 * the VM's scaling, if any) -- differences are the guest's,
		 * absolute values are not.  vpmu_perfmon(4), BUGS.
		 */
		v = __builtin_ia32_rdtsc();
		val = (uint32_t)(vpmu__tsc_hz() / 1000000u);	/* measured at init */
		put_pair(data, cmd == PMIOTSTAMP_I386, (int32_t)val, v);
		return (0);
	default:
		return (ENOTTY);
	}
}

/* ---- the personality -------------------------------------------------------------- */

static int
perfmon_init(struct vpmu_pv *pv)
{
	struct perfmon *s;

	if ((s = calloc(1, sizeof(*s))) == NULL)
		return (ENOMEM);
	pv->perfmon = s;
	/*
	 * PMIOTSTAMP's rate, measured now, with no lock held: the ioctl
	 * runs under the channel's lock and the VM's, where a busy-wait
	 * may not.
	 */
	(void)vpmu__tsc_hz();
	return (0);
}

static void
perfmon_fini(struct vpmu_pv *pv)
{
	struct perfmon *s = state(pv);

	if (s == NULL)
		return;
	while (s->fds.fds != NULL)
		fd_close(pv, s->fds.fds);
	fini_counters(pv);
	free(s);
	pv->perfmon = NULL;
}

/* A guest process ended: its descriptors close (a writer's counters go). */
static void
perfmon_proc_exit(struct vpmu_pv *pv, int32_t pid)
{
	struct perfmon *s = state(pv);
	struct pv_fd *f;

	while ((f = vpmu__pv_fd_of_pid(&s->fds, pid)) != NULL)
		fd_close(pv, f);
}

static const struct pv_opdesc perfmon_ops[] = {
	{ VPMU_PV_OP_PERFMON_OPEN, sizeof(struct vpmu_pv_open), sizeof(struct vpmu_pv_open),
	    op_open, "PERFMON_OPEN" },
	{ VPMU_PV_OP_PERFMON_CLOSE, sizeof(struct vpmu_pv_close),
	    sizeof(struct vpmu_pv_close), op_close, "PERFMON_CLOSE" },
	/* The exact length is checked against cmd once the descriptor is known. */
	{ VPMU_PV_OP_PERFMON_IOCTL, sizeof(struct vpmu_pv_ioctl),
	    sizeof(struct vpmu_pv_ioctl) + 0x1FFF, op_ioctl, "PERFMON_IOCTL" },
};

const struct pv_personality vpmu__pv_perfmon = {
	.name = "perfmon",
	.ops = perfmon_ops,
	.nops = VPMU_ARRAY_SIZE(perfmon_ops),
	.init = perfmon_init,
	.fini = perfmon_fini,
	.proc_exit = perfmon_proc_exit,
};
