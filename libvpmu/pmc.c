/*
 * pmc.c -- the bodies of hwpmc's PMC operations (PMC_OP_PMCALLOCATE,
 * PMCRELEASE, PMCATTACH, PMCDETACH, PMCSTART, PMCSTOP, PMCRW,
 * PMCSETCOUNT, PMCGETMSR, PMCADMIN, GETPMCINFO) and the lookup of the PMC
 * an operation names.
 *
 * Each vpmu_do_op_<op>() runs with the VM lock held and returns 0 or the
 * errno hwpmc(4)'s ERRORS section gives for the condition.  The rows a PMC
 * takes and the owners that hold PMCs are pmc_row.c's; the PMCs behind
 * guest-visible counters pmc_model.c's; what is reported about PMCs (the
 * host's view, the log records) pmc_report.c's.
 */
#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>

#include "pmc_internal.h"
#include <vpmu/pmclog.h>

/* ---- lookup ----------------------------------------------------------------- */

/*
 * hwpmc's pmc_find_pmc(): the caller must own the PMC, except that a
 * descendant of the owner, attached through PMC_F_DESCENDANTS, may name
 * the PMC it inherited.
 */
static int
pmc_find(struct vpmu_vm *vm, const struct vpmu_cred *cr, vpmu_pmc_id id,
    struct vpmu_pmc **pmp)
{
	struct vpmu_owner *o;
	struct vpmu_pmc *pm;
	struct vpmu_proc *p;
	unsigned row = VPMU_ID_TO_ROW(id);

	if (row >= vm->npmc)
		return (EINVAL);
	if ((o = vpmu__owner_find(vm, cr->pid)) == NULL) {
		p = vpmu__proc_find(vm, cr->pid);
		if (p == NULL || p->slots == NULL || p->slots[row] == NULL)
			return (ESRCH);
		pm = p->slots[row]->pmc;
		if ((pm->flags & (VPMU_PF_ATTACHED_TO_OWNER | VPMU_F_DESCENDANTS)) !=
		    (VPMU_PF_ATTACHED_TO_OWNER | VPMU_F_DESCENDANTS))
			return (ESRCH);
		o = pm->owner;
	}
	for (pm = o->pmcs; pm != NULL; pm = pm->owner_next)
		if (pm->id == id) {
			*pmp = pm;
			return (0);
		}
	return (EINVAL);
}

/* Take a process PMC off every vCPU where it is loaded. */
static void
pmc_unload_all(struct vpmu_vm *vm, struct vpmu_pmc *pm)
{
	unsigned c;

	for (c = 0; c < vm->nvcpus; c++)
		if (vm->vcpu[c].loaded[pm->row] == pm)
			vpmu__unload(vm, c, pm->row);
}

static uint64_t
sampling_reload(const struct vpmu_vm *vm, uint64_t count)
{
	uint64_t min = vm->tun.v[VPMU_T_MINCOUNT] < 1 ? 1 :
	    (uint64_t)vm->tun.v[VPMU_T_MINCOUNT];

	return (count < min ? min : count);
}

/* ---- PMC_OP_PMCALLOCATE -------------------------------------------------- */

int
vpmu__pmc_spec_of(const struct vpmu_pmc_alloc *a, struct vpmu_event_spec *sp)
{
	memset(sp, 0, sizeof(*sp));
	if (a->event == VPMU_EV_NONE || vpmu_event_name(a->event) == NULL)
		return (EINVAL);
	sp->event = a->event;
	if (a->caps & VPMU_CAP_USER)
		sp->flags |= VPMU_EVF_USR;
	if (a->caps & VPMU_CAP_SYSTEM)
		sp->flags |= VPMU_EVF_OS;
	if (a->caps & VPMU_CAP_EDGE)
		sp->flags |= VPMU_EVF_EDGE;
	if (a->caps & VPMU_CAP_INVERT)
		sp->flags |= VPMU_EVF_INV;
	if (a->caps & VPMU_CAP_THRESHOLD) {
		if (a->cmask > 0xFF)
			return (EINVAL);
		sp->cmask = a->cmask;
	}
	if (a->event == VPMU_EV_RAW)
		sp->raw = a->raw;
	return (0);
}

int
vpmu_do_op_pmcallocate(struct vpmu_vm *vm, const struct vpmu_cred *cr, void *arg)
{
	struct vpmu_pmc_alloc *a = arg;
	const struct vpmu_classdesc *c;
	struct vpmu_owner *o;
	struct vpmu_event_spec spec;
	struct vpmu_pmc *pm;
	uint32_t caps = a->caps, mode = a->mode, cpu = a->cpu;
	unsigned row;
	int error;

	a->pmcid = VPMU_ID_INVALID;
	if (mode > VPMU_MODE_TC)
		return (EINVAL);			/* invalid mode */
	if (cpu != VPMU_CPU_ANY && cpu >= vm->nvcpus)
		return (EINVAL);			/* invalid CPU */
	if (VPMU_MODE_IS_VIRTUAL(mode) && cpu != VPMU_CPU_ANY)
		return (EINVAL);			/* process PMC on a CPU */
	if (VPMU_MODE_IS_SYSTEM(mode) && cpu == VPMU_CPU_ANY)
		return (EINVAL);			/* system PMC on any CPU */
	if (VPMU_MODE_IS_SYSTEM(mode) && !vm->vcpu[cpu].online)
		return (ENXIO);
	if (VPMU_MODE_IS_SYSTEM(mode) && (cr->jailed ||
	    (!vm->tun.v[VPMU_T_UNPRIVILEGED_SYSPMCS] && !cr->privileged)))
		return (EPERM);

	if (a->flags & ~VPMU_F_ALLOCATE_MASK)
		return (EINVAL);			/* unknown flags */
	if ((a->flags & VPMU_F_USERCALLCHAIN) &&
	    (!(a->flags & VPMU_F_CALLCHAIN) || !VPMU_MODE_IS_SAMPLING(mode)))
		return (EINVAL);
	if (VPMU_MODE_IS_SYSTEM(mode) && (a->flags & (VPMU_F_DESCENDANTS |
	    VPMU_F_LOG_PROCCSW | VPMU_F_LOG_PROCEXIT)))
		return (EINVAL);			/* process-only modifiers */

	if (VPMU_MODE_IS_SAMPLING(mode))
		caps |= VPMU_CAP_INTERRUPT;
	if ((c = vpmu__class_find(vm, a->cls)) == NULL)
		return (EINVAL);
	if (caps & ~c->caps)
		return (EOPNOTSUPP);
	if ((error = vpmu__pmc_spec_of(a, &spec)) != 0)
		return (error);

	o = vpmu__owner_find(vm, cr->pid);
	row = vpmu__pmc_row_pick(vm, c, o, cr->pid, a->event, mode, cpu);
	if (row == c->ri_base + c->rows)
		return (EINVAL);			/* no suitable PMC */

	if ((pm = calloc(1, sizeof(*pm))) == NULL)
		return (ENOMEM);
	pm->nhw = VPMU_MODE_IS_SYSTEM(mode) ? 1 : vm->nvcpus;
	if ((pm->hw = calloc(pm->nhw, sizeof(*pm->hw))) == NULL) {
		free(pm);
		return (ENOMEM);
	}
	if (o == NULL && (o = vpmu__owner_get(vm, cr, true)) == NULL) {
		free(pm->hw);
		free(pm);
		return (ENOMEM);
	}

	pm->id = VPMU_ID_MAKE(cpu, mode, a->cls, row);
	pm->mode = mode;
	pm->cls = a->cls;
	pm->cpu = cpu;
	pm->row = row;
	pm->caps = caps;
	pm->flags = a->flags;
	pm->spec = spec;
	pm->state = VPMU_STATE_ALLOCATED;
	pm->owner = o;
	if (VPMU_MODE_IS_SAMPLING(mode)) {
		/* libvpmu has no profil(2): every sample goes to a log */
		pm->flags |= VPMU_PF_NEEDS_LOGFILE;
		pm->reload = sampling_reload(vm, a->count);
	} else {
		pm->base = a->count;
	}
	if (a->flags & (VPMU_F_LOG_PROCCSW | VPMU_F_LOG_PROCEXIT))
		pm->flags |= VPMU_PF_NEEDS_LOGFILE;
	if (vpmu__pmc_supports(vm, &spec, pm->why, sizeof(pm->why)) != 0)
		pm->unsupported = true;

	pm->owner_next = o->pmcs;
	o->pmcs = pm;
	vpmu__pmc_disp_mark(vm, row, mode);
	if (VPMU_MODE_IS_SYSTEM(mode))
		vm->vcpu[cpu].sys[row] = pm;
	a->pmcid = pm->id;
	vpmu__log_pmc(vm, pm, VPMU_PMCLOG_PMCALLOCATEDYN, NULL, 0);
	return (0);
}

/* ---- PMC_OP_PMCRELEASE -------------------------------------------------- */

void
vpmu__pmc_release(struct vpmu_vm *vm, struct vpmu_pmc *pm)
{
	struct vpmu_owner *o = pm->owner;
	struct vpmu_pmc **pp;
	struct vpmu_target *t;

	pm->state = VPMU_STATE_DELETED;
	if (VPMU_MODE_IS_SYSTEM(pm->mode)) {
		vm->vcpu[pm->cpu].sys[pm->row] = NULL;
	} else {
		pmc_unload_all(vm, pm);
		while ((t = pm->targets) != NULL) {
			pm->targets = t->pmc_next;
			t->proc->slots[pm->row] = NULL;
			t->proc->nattached--;
			free(t);
		}
		pm->ntargets = 0;
	}
	vpmu__hw_close_all(vm, pm);
	vpmu__pmc_disp_unmark(vm, pm->row, pm->mode);
	for (pp = &o->pmcs; *pp != NULL; pp = &(*pp)->owner_next)
		if (*pp == pm) {
			*pp = pm->owner_next;
			break;
		}
	free(pm->hw);
	free(pm);
	vpmu__owner_maybe_free(vm, o);
}

int
vpmu_do_op_pmcrelease(struct vpmu_vm *vm, const struct vpmu_cred *cr, void *arg)
{
	struct vpmu_op_simple *s = arg;
	struct vpmu_pmc *pm;
	int error;

	if ((error = pmc_find(vm, cr, s->pmcid, &pm)) != 0)
		return (error);
	vpmu__pmc_release(vm, pm);
	return (0);
}

/* ---- PMC_OP_PMCATTACH / PMC_OP_PMCDETACH -------------------------------- */

/*
 * The process subtree rooted at root, root first, breadth first.  Exit
 * reparents children to 0, so parent links form a tree; the walk is still
 * bounded by the number of processes.
 */
static int
proc_subtree(struct vpmu_vm *vm, struct vpmu_proc *root,
    struct vpmu_proc ***outp, unsigned *np)
{
	struct vpmu_proc **out, **grown, *p;
	unsigned n = 1, cap = 8, i, b;

	if ((out = malloc(cap * sizeof(*out))) == NULL)
		return (ENOMEM);
	out[0] = root;
	for (i = 0; i < n; i++)
		for (b = 0; b < vm->proc_hash_size; b++)
			for (p = vm->proc_hash[b]; p != NULL; p = p->hnext) {
				if (p->ppid != out[i]->cred.pid || p == root)
					continue;
				if (n == cap) {
					cap *= 2;
					grown = realloc(out, cap * sizeof(*out));
					if (grown == NULL) {
						free(out);
						return (ENOMEM);
					}
					out = grown;
				}
				out[n++] = p;
			}
	*outp = out;
	*np = n;
	return (0);
}

static int
attach_lookup(struct vpmu_vm *vm, const struct vpmu_cred *cr, void *arg,
    struct vpmu_pmc **pmp, struct vpmu_proc **pp)
{
	struct vpmu_op_pmcattach *a = arg;
	int32_t pid = a->pid;
	int error;

	if (pid < 0)
		return (EINVAL);			/* illegal pid */
	if (pid == 0)
		pid = cr->pid;
	if ((error = pmc_find(vm, cr, a->pmcid, pmp)) != 0)
		return (error);
	if (VPMU_MODE_IS_SYSTEM((*pmp)->mode))
		return (EINVAL);			/* system-wide PMC */
	*pp = vpmu__proc_find(vm, pid);
	if (*pp == NULL || (*pp)->exiting)
		return (ESRCH);
	return (0);
}

int
vpmu_do_op_pmcattach(struct vpmu_vm *vm, const struct vpmu_cred *cr, void *arg)
{
	struct vpmu_proc *p, **tree;
	struct vpmu_pmc *pm;
	uint32_t done;
	unsigned n, i;
	int error;

	if ((error = attach_lookup(vm, cr, arg, &pm, &p)) != 0)
		return (error);
	if (pm->state == VPMU_STATE_RUNNING)
		return (EBUSY);
	if (pm->state != VPMU_STATE_ALLOCATED && pm->state != VPMU_STATE_STOPPED)
		return (EINVAL);
	if (!vpmu__can_debug(vm, cr, p))
		return (EPERM);
	if (pm->flags & VPMU_PF_MSR_ACCESS)
		return (EPERM);				/* its MSR was handed out */
	if (!(pm->flags & VPMU_F_DESCENDANTS))
		return (vpmu__attach_one(vm, pm, p));

	if ((error = proc_subtree(vm, p, &tree, &n)) != 0)
		return (error);
	done = pm->flags & VPMU_PF_ATTACH_DONE;
	for (i = 0; i < n; i++)
		if ((error = vpmu__attach_one(vm, pm, tree[i])) != 0)
			break;
	if (error != 0) {			/* undo what this call attached */
		while (i-- > 0)
			(void)vpmu__detach_one(vm, pm, tree[i], false);
		pm->flags = (pm->flags & ~VPMU_PF_ATTACH_DONE) | done;
	}
	free(tree);
	return (error);
}

int
vpmu_do_op_pmcdetach(struct vpmu_vm *vm, const struct vpmu_cred *cr, void *arg)
{
	struct vpmu_proc *p, **tree;
	struct vpmu_pmc *pm;
	unsigned n, i;
	int error;

	if ((error = attach_lookup(vm, cr, arg, &pm, &p)) != 0)
		return (error);
	tree = NULL;
	n = 1;
	if ((pm->flags & VPMU_F_DESCENDANTS) &&
	    (error = proc_subtree(vm, p, &tree, &n)) != 0)
		return (error);			/* nothing detached yet */
	error = vpmu__detach_one(vm, pm, p, true);
	for (i = 1; i < n; i++)
		(void)vpmu__detach_one(vm, pm, tree[i], true);
	free(tree);
	/*
	 * VPMU_PF_ATTACH_DONE stays even if no target is left: the PMC was
	 * "detached from all of its target processes" and PMCSTART fails
	 * with ESRCH (hwpmc(4) ERRORS).  hwpmc's pmc_detach_process() clears
	 * it on this path for a PMC_F_DESCENDANTS PMC, not for others; see
	 * COMPATIBILITY in vpmu(3).
	 */
	return (error);
}

/* ---- PMC_OP_PMCSTART / PMC_OP_PMCSTOP ----------------------------------- */

int
vpmu_do_op_pmcstart(struct vpmu_vm *vm, const struct vpmu_cred *cr, void *arg)
{
	struct vpmu_op_simple *s = arg;
	struct vpmu_pmc *pm;
	struct vpmu_proc *p;
	unsigned c;
	int error;

	if ((error = pmc_find(vm, cr, s->pmcid, &pm)) != 0)
		return (error);
	if (pm->state == VPMU_STATE_RUNNING)
		return (0);
	if (pm->state != VPMU_STATE_ALLOCATED && pm->state != VPMU_STATE_STOPPED)
		return (EINVAL);
	if ((pm->flags & VPMU_PF_NEEDS_LOGFILE) && !pm->owner->has_log)
		return (VPMU_EDOOFUS);
	if (VPMU_MODE_IS_SAMPLING(pm->mode)) {
		if (!__atomic_load_n(&vm->sweeper_on, __ATOMIC_ACQUIRE))
			return (VPMU__ESWEEPER);	/* vpmu_vm_op() starts it, unlocked */
		pm->sample_mark = vpmu__pmc_counted(vm, pm);
	}

	if (VPMU_MODE_IS_SYSTEM(pm->mode)) {
		if (!vm->vcpu[pm->cpu].online)
			return (ENXIO);
		if ((error = vpmu__hw_activate(vm, pm, pm->cpu)) != 0)
			return (error);
		pm->state = VPMU_STATE_RUNNING;
		return (0);
	}

	/*
	 * No target: a PMC that never had one is attached to its owner; one
	 * that had one (by PMCATTACH, by a fork or by an earlier start) and
	 * lost them all, to PMCDETACH, their exit or an exec with credentials
	 * the owner may not debug, fails.
	 */
	if (pm->ntargets == 0) {
		if (pm->flags & VPMU_PF_ATTACH_DONE)
			return (ESRCH);			/* every target is gone */
		if ((p = vpmu__proc_find(vm, pm->owner->pid)) == NULL || p->exiting)
			return (ESRCH);
		if ((error = vpmu__attach_one(vm, pm, p)) != 0)
			return (error);
	}
	/* Targets already on a vCPU start counting now, or none does. */
	for (c = 0; c < vm->nvcpus; c++) {
		p = vm->vcpu[c].cur;
		if (p != NULL && p->slots != NULL && p->slots[pm->row] != NULL &&
		    p->slots[pm->row]->pmc == pm &&
		    (error = vpmu__load(vm, c, pm)) != 0) {
			pmc_unload_all(vm, pm);
			return (error);
		}
	}
	pm->state = VPMU_STATE_RUNNING;
	return (0);
}

int
vpmu_do_op_pmcstop(struct vpmu_vm *vm, const struct vpmu_cred *cr, void *arg)
{
	struct vpmu_op_simple *s = arg;
	struct vpmu_pmc *pm;
	int error;

	if ((error = pmc_find(vm, cr, s->pmcid, &pm)) != 0)
		return (error);
	return (vpmu__pmc_stop(vm, pm));
}

int
vpmu__pmc_stop(struct vpmu_vm *vm, struct vpmu_pmc *pm)
{
	if (pm->state == VPMU_STATE_STOPPED)
		return (0);
	if (pm->state != VPMU_STATE_RUNNING)
		return (EINVAL);
	if (VPMU_MODE_IS_SYSTEM(pm->mode)) {
		if (!vm->vcpu[pm->cpu].online)
			return (ENXIO);
		(void)vpmu__hw_deactivate(vm, pm, pm->cpu);
	} else {
		/* Unlike hwpmc, which waits for the next switch-out, stop now. */
		pmc_unload_all(vm, pm);
	}
	pm->state = VPMU_STATE_STOPPED;
	return (0);
}

/* ---- PMC_OP_PMCRW / PMC_OP_PMCSETCOUNT ---------------------------------- */

int
vpmu_do_op_pmcrw(struct vpmu_vm *vm, const struct vpmu_cred *cr, void *arg)
{
	struct vpmu_op_pmcrw *rw = arg;
	struct vpmu_pmc *pm;
	uint64_t old;
	int error;

	if ((rw->flags & ~(VPMU_F_NEWVALUE | VPMU_F_OLDVALUE)) != 0 ||
	    (rw->flags & (VPMU_F_NEWVALUE | VPMU_F_OLDVALUE)) == 0)
		return (EINVAL);			/* illegal flags */
	if ((error = pmc_find(vm, cr, rw->pmcid, &pm)) != 0)
		return (error);
	if (VPMU_MODE_IS_SAMPLING(pm->mode))
		return (EINVAL);			/* counting modes only */
	if (pm->state != VPMU_STATE_ALLOCATED && pm->state != VPMU_STATE_STOPPED &&
	    pm->state != VPMU_STATE_RUNNING)
		return (EINVAL);
	if (pm->state == VPMU_STATE_RUNNING && (rw->flags & VPMU_F_NEWVALUE))
		return (EBUSY);
	if (VPMU_MODE_IS_SYSTEM(pm->mode) && !vm->vcpu[pm->cpu].online)
		return (ENXIO);
	if (VPMU_MODE_IS_VIRTUAL(pm->mode) && pm->ntargets == 0)
		vpmu__notify(vm, pm->owner->pid, SIGIO);

	old = vpmu__pmc_estimate(vm, pm);
	if (rw->flags & VPMU_F_NEWVALUE)
		vpmu__pmc_set_base(vm, pm, rw->value);
	if (rw->flags & VPMU_F_OLDVALUE)
		rw->value = old;
	return (0);
}

int
vpmu_do_op_pmcsetcount(struct vpmu_vm *vm, const struct vpmu_cred *cr, void *arg)
{
	struct vpmu_op_pmcsetcount *sc = arg;
	struct vpmu_pmc *pm;
	int error;

	if ((error = pmc_find(vm, cr, sc->pmcid, &pm)) != 0)
		return (error);
	if (pm->state == VPMU_STATE_RUNNING)
		return (EBUSY);
	if (VPMU_MODE_IS_SAMPLING(pm->mode))
		pm->reload = sampling_reload(vm, sc->count);
	else
		vpmu__pmc_set_base(vm, pm, sc->count);
	return (0);
}

/* ---- PMC_OP_PMCGETMSR -------------------------------------------------- */

/*
 * The address a guest reads the counter at with RDPMC: GP counters by
 * index, fixed counters with bit 30 set (SDM Vol. 3B 19.2.2, AMD APM
 * Vol. 2 13.2.1 uses the plain index).  The paravirtual class has no RDPMC
 * index (ENOSYS), except for the paravirtual channel (pv_slot), which
 * gives the guest a fast-read page slot instead and takes the index
 * within the class here.
 */
static int
pmcgetmsr(struct vpmu_vm *vm, const struct vpmu_cred *cr, struct vpmu_op_getmsr *gm,
    bool pv_slot)
{
	const struct vpmu_classdesc *c;
	struct vpmu_pmc *pm;
	unsigned idx;
	int error;

	if ((error = pmc_find(vm, cr, gm->pmcid, &pm)) != 0)
		return (error);
	if (!VPMU_MODE_IS_VIRTUAL(pm->mode) || (pm->flags & VPMU_F_DESCENDANTS))
		return (EINVAL);
	if (pm->ntargets != 1 || pm->targets->proc->cred.pid != pm->owner->pid)
		return (EINVAL);			/* not solely on its owner */
	c = vpmu__class_of_row(vm, pm->row);
	idx = pm->row - c->ri_base;
	switch (c->cls) {
	case VPMU_CLASS_IAP:
	case VPMU_CLASS_K8:
		gm->msr = idx;
		break;
	case VPMU_CLASS_IAF:
		gm->msr = 0x40000000u | idx;
		break;
	case VPMU_CLASS_PV:
		if (!pv_slot)
			return (ENOSYS);
		gm->msr = idx;
		break;
	default:
		return (ENOSYS);
	}
	pm->flags |= VPMU_PF_MSR_ACCESS;
	return (0);
}

int
vpmu_do_op_pmcgetmsr(struct vpmu_vm *vm, const struct vpmu_cred *cr, void *arg)
{
	return (pmcgetmsr(vm, cr, arg, false));
}

/* PMC_OP_PMCGETMSR from the paravirtual channel (VM lock held). */
int
vpmu__pmc_getmsr_pv(struct vpmu_vm *vm, const struct vpmu_cred *cr, struct vpmu_op_getmsr *gm)
{
	return (pmcgetmsr(vm, cr, gm, true));
}

/* ---- PMC_OP_PMCADMIN ------------------------------------------------------ */

int
vpmu_do_op_pmcadmin(struct vpmu_vm *vm, const struct vpmu_cred *cr, void *arg)
{
	struct vpmu_op_pmcadmin *pa = arg;
	struct vpmu_vcpu *v;
	unsigned row;

	if (!cr->privileged || cr->jailed)
		return (EPERM);
	if (pa->cpu < 0 || (unsigned)pa->cpu >= vm->nvcpus)
		return (EINVAL);
	if (pa->row < 0 || (unsigned)pa->row >= vm->npmc)
		return (EINVAL);
	if (pa->state != VPMU_ADMIN_ENABLE && pa->state != VPMU_ADMIN_DISABLE)
		return (EINVAL);
	v = &vm->vcpu[pa->cpu];
	if (!v->online)
		return (ENXIO);
	row = (unsigned)pa->row;
	if (v->sys[row] != NULL || v->loaded[row] != NULL)
		return (EBUSY);				/* the slot holds a PMC */
	if (pa->state == VPMU_ADMIN_DISABLE) {
		if (vm->disp[row] > 0)
			return (EBUSY);			/* process PMCs use the row */
		if (!v->disabled[row]) {
			v->disabled[row] = true;
			vpmu__pmc_disp_mark(vm, row, VPMU_MODE_SC);
		}
	} else if (v->disabled[row]) {
		v->disabled[row] = false;
		vpmu__pmc_disp_unmark(vm, row, VPMU_MODE_SC);
	}
	return (0);
}

/* ---- PMC_OP_GETPMCINFO ---------------------------------------------------- */

int
vpmu_do_op_getpmcinfo(struct vpmu_vm *vm, const struct vpmu_cred *cr, void *arg)
{
	struct vpmu_op_getpmcinfo *gi = arg;
	const struct vpmu_classdesc *c;
	struct vpmu_pmc_info *pi;
	struct vpmu_pmc *pm;
	struct vpmu_vcpu *v;
	unsigned row;

	(void)cr;
	if (gi->cpu >= vm->nvcpus)
		return (EINVAL);
	v = &vm->vcpu[gi->cpu];
	if (!v->online)
		return (ENXIO);
	if (gi->pmcs == NULL)
		return (EFAULT);
	if (gi->npmc < vm->npmc) {
		gi->npmc = vm->npmc;			/* what it takes */
		return (EINVAL);
	}
	for (row = 0; row < vm->npmc; row++) {
		pi = &gi->pmcs[row];
		memset(pi, 0, sizeof(*pi));
		c = vpmu__class_of_row(vm, row);
		snprintf(pi->name, sizeof(pi->name), "%s-%u", c->prefix,
		    row - c->ri_base);
		pi->cls = c->cls;
		pi->enabled = !v->disabled[row];
		pi->rowdisp = vpmu__pmc_disp_of(vm, row);
		pi->ownerpid = -1;
		pm = v->sys[row] != NULL ? v->sys[row] : v->loaded[row];
		if (pm == NULL)
			continue;
		pi->ownerpid = pm->owner->pid;
		pi->mode = pm->mode;
		pi->event = pm->spec.event;
		pi->flags = pm->flags & VPMU_F_ALLOCATE_MASK;
		pi->reloadcount = VPMU_MODE_IS_SAMPLING(pm->mode) ? pm->reload : 0;
	}
	gi->npmc = vm->npmc;
	return (0);
}
