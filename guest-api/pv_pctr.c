/*
 * pv_pctr.c -- OpenBSD's pctr(4) as a personality of the paravirtual
 * channel (pvchan.h): "/dev/pctr" opened with VPMU_PV_OP_PCTR_OPEN, read
 * with PCIOCRD, programmed with PCIOCS0..3.  vpmu_pctr(4) is the guest's
 * documentation; hwpmc_spec.md section 5 the driver's rules.
 *
 * The counters are the guest model's: Intel models have 2, AMD models 4
 * (OpenBSD's counts for the two vendors), a VM whose model is "none" has
 * none (PCIOCSx: ENODEV).  A function word is an EVTSEL and is decoded by
 * the model's own event decoder, so pctr counts exactly what a guest
 * writing that value into IA32_PERFEVTSEL / PERF_CTL would count.
 *
 * OpenBSD sets a function on every CPU (an IPI makes each reload it).
 * Here the function is VM-wide and counter i is, on each vCPU, a core PMC
 * of its own (system scope, counting, class VPMU_CLASS_PV, owned by the
 * pseudo-process PCTR_OWNER), made when the function is set: PCIOCRD and
 * rdpmc() read the calling vCPU's.  No count is kept here.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "pvchan.h"
#include "gpmu.h"

#define PCTR_OWNER	((int32_t)VPMU_PV_PID_MAX + 2)

#define PCTR_NUM	4
#define MASK40		0xFFFFFFFFFFull
#define PCTR_RESERVED	0x380000u	/* bits 19..21: PC, INT, reserved */

#define IOC_OUT		0x40000000u
#define IOC_IN		0x80000000u
#define IOCPARM_LEN(c)	(((c) >> 16) & 0x1FFFu)
#define PCIOCRD		0x40386301u	/* _IOR('c', 1, struct pctrst) */
#define PCIOCS0		0x80046308u	/* _IOW('c', 8, unsigned int) */
#define PCIOCS3		0x8004630bu

struct pctrst {				/* OpenBSD amd64, 56 bytes */
	uint32_t pctr_fn[PCTR_NUM];
	uint64_t pctr_tsc;
	uint64_t pctr_hwc[PCTR_NUM];
};
_Static_assert(sizeof(struct pctrst) == 56, "struct pctrst is 56 bytes");

/* Counter i on one vCPU. */
struct pc_pmc {
	bool have;
	vpmu_pmc_id id;
};

struct pctr {
	struct pv_fdtab fds;		/* open descriptors (pv_dev.c) */
	unsigned num;			/* counters: 0 (no PMU), 2 or 4 */
	uint32_t fn[PCTR_NUM];		/* the functions set (the driver's cache) */
	struct pc_pmc *pmc;		/* [cpu * PCTR_NUM + i] */
};

static const struct vpmu_cred owner_cred = { .pid = PCTR_OWNER, .privileged = 1 };

static struct pctr *
state(struct vpmu_pv *pv)
{
	return (pv->pctr);
}

/* ---- the core PMCs (VM lock taken here) ------------------------------------ */

static void
fn_release(struct vpmu_pv *pv, unsigned i)
{
	struct pctr *s = state(pv);
	struct vpmu_op_simple op;
	struct pc_pmc *p;
	unsigned cpu;

	vpmu__vm_lock(pv->vm);
	for (cpu = 0; cpu < pv->vm->nvcpus; cpu++) {
		p = &s->pmc[cpu * PCTR_NUM + i];
		if (p->have) {
			op.pmcid = p->id;
			(void)vpmu_do_op_pmcrelease(pv->vm, &owner_cred, &op);
		}
		p->have = false;
	}
	vpmu__vm_unlock(pv->vm);
}

/*
 * Function fn for counter i on every vCPU: the old PMCs go (the counter
 * reads 0 again) and, if fn counts anything, one PMC per online vCPU is
 * made, started if fn has PCTR_EN.  A vCPU that cannot take one (offline)
 * counts nothing until the next function.  Like the hardware, a function
 * the model's decoder names no event for, or one without PCTR_U and
 * PCTR_K, is kept and counts nothing; an event the source cannot count
 * counts nothing too (vpmu_pmc_get_unsupported() says why).
 */
static int
fn_set(struct vpmu_pv *pv, unsigned i, uint32_t fn)
{
	const struct gpmu *g = gpmu_of(pv->vm);
	struct pctr *s = state(pv);
	struct vpmu_event_spec spec;
	struct vpmu_pmc_alloc a;
	struct vpmu_op_simple op;
	struct pc_pmc *p;
	unsigned cpu;
	int error = 0;

	fn_release(pv, i);
	s->fn[i] = fn;
	memset(&spec, 0, sizeof(spec));
	if (!g->vendor->event(fn, &spec) || !(fn & (SEL_USR | SEL_OS)))
		return (0);
	memset(&a, 0, sizeof(a));
	a.cls = VPMU_CLASS_PV;
	a.mode = VPMU_MODE_SC;
	a.event = spec.event;
	a.raw = spec.raw;
	a.caps = ((fn & SEL_USR) ? VPMU_CAP_USER : 0) | ((fn & SEL_OS) ? VPMU_CAP_SYSTEM : 0) |
	    ((fn & SEL_EDGE) ? VPMU_CAP_EDGE : 0) | ((fn & SEL_INV) ? VPMU_CAP_INVERT : 0);
	if (SEL_CMASK(fn) != 0) {
		a.caps |= VPMU_CAP_THRESHOLD;
		a.cmask = (uint32_t)SEL_CMASK(fn);
	}
	vpmu__vm_lock(pv->vm);
	for (cpu = 0; cpu < pv->vm->nvcpus && error == 0; cpu++) {
		if (!pv->vm->vcpu[cpu].online)
			continue;
		a.cpu = cpu;
		if ((error = vpmu_do_op_pmcallocate(pv->vm, &owner_cred, &a)) != 0)
			break;
		p = &s->pmc[cpu * PCTR_NUM + i];
		p->have = true;
		p->id = a.pmcid;
		if (fn & SEL_EN) {
			op.pmcid = p->id;
			error = vpmu_do_op_pmcstart(pv->vm, &owner_cred, &op);
		}
	}
	error = vpmu__vm_unlock_err(pv->vm, error);	/* the host counters opened */
	if (error != 0)
		fn_release(pv, i);		/* all or nothing; fn stays, counting nothing */
	return (error);
}

/* Counter i of vCPU cpu, 40 bits (VM lock held). */
static uint64_t
pmc_read(struct vpmu_pv *pv, unsigned cpu, unsigned i, struct vpmu_count *times)
{
	const struct pc_pmc *p = &state(pv)->pmc[cpu * PCTR_NUM + i];
	struct vpmu_pmc *pm;

	if (times != NULL)
		memset(times, 0, sizeof(*times));
	if (!p->have || (pm = vpmu__pmc_by_id(pv->vm, PCTR_OWNER, p->id)) == NULL)
		return (0);
	return (vpmu__model_pmc_value(pv->vm, pm, times) & MASK40);
}

int
vpmu__pv_pctr_peek(struct vpmu_pv *pv, unsigned cpu, unsigned i, uint64_t *value,
    uint32_t *fn, struct vpmu_count *times)
{
	struct pctr *s = state(pv);
	uint64_t v;

	if (s == NULL || cpu >= pv->vm->nvcpus || i >= s->num || s->fn[i] == 0)
		return (ENOENT);
	vpmu__vm_lock(pv->vm);
	v = pmc_read(pv, cpu, i, times);
	vpmu__vm_unlock(pv->vm);
	if (value != NULL)
		*value = v;
	if (fn != NULL)
		*fn = s->fn[i];
	return (0);
}

/* ---- descriptors ------------------------------------------------------------ */

static int
op_open(struct pv_call *c)
{
	struct vpmu_pv_open *o = (struct vpmu_pv_open *)c->arg;
	struct pv_fd *f;
	int error;

	if (o->fflags == 0 || (o->fflags & ~(VPMU_PV_FREAD | VPMU_PV_FWRITE)) != 0)
		return (EINVAL);
	if (o->minor != 0)
		return (ENXIO);
	if ((error = vpmu__pv_fd_open(&state(c->pv)->fds, c, o, &f)) != 0)
		return (error);
	c->retval = f->fd;
	return (0);
}

/* The driver's close does nothing: the functions stay set. */
static int
op_close(struct pv_call *c)
{
	struct pctr *s = state(c->pv);
	struct vpmu_pv_close *cl = (struct vpmu_pv_close *)c->arg;
	struct pv_fd *f;

	if ((f = vpmu__pv_fd_find(&s->fds, cl->fd, c->cred.pid)) == NULL)
		return (EBADF);
	vpmu__pv_fd_free(&s->fds, f);
	return (0);
}

static int
op_ioctl(struct pv_call *c)
{
	struct pctr *s = state(c->pv);
	struct vpmu_pv_ioctl *io = (struct vpmu_pv_ioctl *)c->arg;
	uint8_t *data = c->arg + sizeof(*io);
	uint32_t cmd = io->cmd, len = IOCPARM_LEN(cmd), fn;
	struct pctrst st;
	struct pv_fd *f;
	unsigned i;

	if ((f = vpmu__pv_fd_find(&s->fds, io->fd, c->cred.pid)) == NULL)
		return (EBADF);
	if (c->arglen != sizeof(*io) + len)
		return (EINVAL);
	if ((cmd & (IOC_IN | IOC_OUT)) == IOC_OUT)
		memset(data, 0, len);		/* as sys_ioctl() gives it */

	if (cmd == PCIOCRD) {
		memset(&st, 0, sizeof(st));
		vpmu__vm_lock(c->vm);
		for (i = 0; i < s->num; i++) {
			st.pctr_fn[i] = s->fn[i];
			st.pctr_hwc[i] = pmc_read(c->pv, c->cpu, i, NULL);
		}
		vpmu__vm_unlock(c->vm);
		/* The host's TSC: see vpmu_pctr(4), BUGS. */
		st.pctr_tsc = __builtin_ia32_rdtsc();
		memcpy(data, &st, sizeof(st));
		return (0);
	}
	if (cmd >= PCIOCS0 && cmd <= PCIOCS3) {
		/* The driver's order: PMU, index, FWRITE, reserved bits. */
		if (s->num == 0)
			return (ENODEV);
		if (cmd - PCIOCS0 >= s->num)
			return (EINVAL);
		if (!(f->fflags & VPMU_PV_FWRITE))
			return (EPERM);
		memcpy(&fn, data, 4);
		if (fn & PCTR_RESERVED)
			return (EINVAL);
		/* Only a changed function reloads (and so zeroes) a counter. */
		if (fn == s->fn[cmd - PCIOCS0])
			return (0);
		return (fn_set(c->pv, cmd - PCIOCS0, fn));
	}
	return (EINVAL);			/* OpenBSD: not ENOTTY */
}

/* ---- the personality -------------------------------------------------------------- */

static int
pctr_init(struct vpmu_pv *pv)
{
	const struct gpmu *g = gpmu_of(pv->vm);
	struct pctr *s;

	if ((s = calloc(1, sizeof(*s))) == NULL ||
	    (s->pmc = calloc(pv->vm->nvcpus * PCTR_NUM, sizeof(*s->pmc))) == NULL) {
		free(s);
		return (ENOMEM);
	}
	if (g != NULL && g->vendor != NULL)
		s->num = g->model.vendor == VPMU_VENDOR_AMD ? 4 : 2;
	pv->pctr = s;
	return (0);
}

static void
pctr_fini(struct vpmu_pv *pv)
{
	struct pctr *s = state(pv);
	unsigned i;

	if (s == NULL)
		return;
	for (i = 0; i < PCTR_NUM; i++)
		fn_release(pv, i);
	while (s->fds.fds != NULL)
		vpmu__pv_fd_free(&s->fds, s->fds.fds);
	free(s->pmc);
	free(s);
	pv->pctr = NULL;
}

static void
pctr_proc_exit(struct vpmu_pv *pv, int32_t pid)
{
	struct pctr *s = state(pv);
	struct pv_fd *f;

	while ((f = vpmu__pv_fd_of_pid(&s->fds, pid)) != NULL)
		vpmu__pv_fd_free(&s->fds, f);
}

static const struct pv_opdesc pctr_ops[] = {
	{ VPMU_PV_OP_PCTR_OPEN, sizeof(struct vpmu_pv_open), sizeof(struct vpmu_pv_open),
	    op_open, "PCTR_OPEN" },
	{ VPMU_PV_OP_PCTR_CLOSE, sizeof(struct vpmu_pv_close), sizeof(struct vpmu_pv_close),
	    op_close, "PCTR_CLOSE" },
	{ VPMU_PV_OP_PCTR_IOCTL, sizeof(struct vpmu_pv_ioctl),
	    sizeof(struct vpmu_pv_ioctl) + 0x1FFF, op_ioctl, "PCTR_IOCTL" },
};

const struct pv_personality vpmu__pv_pctr = {
	.name = "pctr",
	.ops = pctr_ops,
	.nops = VPMU_ARRAY_SIZE(pctr_ops),
	.init = pctr_init,
	.fini = pctr_fini,
	.proc_exit = pctr_proc_exit,
};
