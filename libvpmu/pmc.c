/*
 * pmc.c -- PMC objects and the bodies of hwpmc's PMC operations.
 *
 * Each vpmu_do_op_<op>() runs with the VM lock held and returns 0 or the
 * errno hwpmc(4)'s ERRORS section gives for the condition.  Row
 * dispositions follow "PMC ROW DISPOSITIONS": one signed count per row
 * across all vCPUs, 0 = FREE, > 0 = THREAD (process PMCs at the row),
 * < 0 = STANDALONE (system PMCs at the row plus administratively disabled
 * slots).  A row is never shared between the two kinds.
 */
#include <errno.h>
#include <signal.h>
#include <string.h>

#include "internal.h"
#include <vpmu/pmclog.h>

/* ---- owners ------------------------------------------------------------- */

static struct vpmu_owner *
owner_find(struct vpmu_vm *vm, int32_t pid)
{
	struct vpmu_owner *o;

	for (o = vm->owners; o != NULL; o = o->next)
		if (o->pid == pid)
			return (o);
	return (NULL);
}

/* The caller's owner record, made if asked (NULL: none, or no memory). */
struct vpmu_owner *
vpmu__owner_get(struct vpmu_vm *vm, const struct vpmu_cred *cr, bool create)
{
	struct vpmu_owner *o;

	if ((o = owner_find(vm, cr->pid)) != NULL || !create)
		return (o);
	if ((o = calloc(1, sizeof(*o))) == NULL)
		return (NULL);
	o->pid = cr->pid;
	o->cred = *cr;
	o->next = vm->owners;
	vm->owners = o;
	return (o);
}

void
vpmu__owner_maybe_free(struct vpmu_vm *vm, struct vpmu_owner *o)
{
	struct vpmu_owner **pp;

	if (o->pmcs != NULL || o->has_log)
		return;
	for (pp = &vm->owners; *pp != NULL; pp = &(*pp)->next)
		if (*pp == o) {
			*pp = o->next;
			vpmu__task_names_free(o);
			free(o);
			return;
		}
}

/* ---- rows ----------------------------------------------------------------- */

static bool
can_allocate_row(const struct vpmu_vm *vm, unsigned row, uint32_t mode)
{
	int d = vm->disp[row];

	if (d == 0)
		return (true);
	return (VPMU_MODE_IS_VIRTUAL(mode) ? d > 0 : d < 0);
}

/*
 * The caller may not hold two PMCs at one row (two process PMCs, or two
 * system PMCs on one vCPU), nor allocate at a row where it is itself a
 * target, so that a later self-attach cannot fail.
 */
static bool
can_allocate_rowindex(struct vpmu_vm *vm, const struct vpmu_owner *o,
    int32_t pid, unsigned row, uint32_t cpu)
{
	const struct vpmu_pmc *pm;
	const struct vpmu_proc *p;

	if (o != NULL)
		for (pm = o->pmcs; pm != NULL; pm = pm->owner_next) {
			if (pm->row != row)
				continue;
			if (VPMU_MODE_IS_VIRTUAL(pm->mode) || pm->cpu == cpu)
				return (false);
		}
	p = vpmu__proc_find(vm, pid);
	if (p != NULL && p->slots != NULL && p->slots[row] != NULL)
		return (false);
	return (true);
}

static void
disp_mark(struct vpmu_vm *vm, unsigned row, uint32_t mode)
{
	if (VPMU_MODE_IS_VIRTUAL(mode)) {
		VPMU_ASSERT(vm->disp[row] >= 0);
		vm->disp[row]++;
	} else {
		VPMU_ASSERT(vm->disp[row] <= 0);
		vm->disp[row]--;
	}
}

static void
disp_unmark(struct vpmu_vm *vm, unsigned row, uint32_t mode)
{
	if (VPMU_MODE_IS_VIRTUAL(mode)) {
		vm->disp[row]--;
		VPMU_ASSERT(vm->disp[row] >= 0);
	} else {
		vm->disp[row]++;
		VPMU_ASSERT(vm->disp[row] <= 0);
	}
}

static uint32_t
disp_of(const struct vpmu_vm *vm, unsigned row)
{
	if (vm->disp[row] > 0)
		return (VPMU_DISP_THREAD);
	if (vm->disp[row] < 0)
		return (VPMU_DISP_STANDALONE);
	return (VPMU_DISP_FREE);
}

/*
 * Which events a row can count.  A fixed-function row counts one event
 * (IAF-0 instructions, IAF-1 core cycles, IAF-2 reference cycles); GP rows
 * count the architectural events and raw selects; paravirtual rows count
 * anything the event table names.
 */
static bool
event_fits_row(const struct vpmu_classdesc *c, unsigned row, uint32_t event)
{
	static const uint32_t fixed[] = {
		VPMU_EV_INSTRUCTIONS, VPMU_EV_CYCLES, VPMU_EV_REF_CYCLES
	};
	unsigned idx = row - c->ri_base;

	switch (c->cls) {
	case VPMU_CLASS_IAF:
		return (idx < VPMU_ARRAY_SIZE(fixed) && fixed[idx] == event);
	case VPMU_CLASS_IAP:
		return (event == VPMU_EV_INSTRUCTIONS || event == VPMU_EV_BRANCHES ||
		    event == VPMU_EV_CYCLES || event == VPMU_EV_REF_CYCLES ||
		    event == VPMU_EV_RAW);
	case VPMU_CLASS_K8:
		return (event == VPMU_EV_INSTRUCTIONS || event == VPMU_EV_BRANCHES ||
		    event == VPMU_EV_CYCLES || event == VPMU_EV_RAW);
	default:
		return (true);
	}
}

/* ---- lookup ----------------------------------------------------------------- */

/* Ids are unique per owner only (two owners' process PMCs share rows). */
struct vpmu_pmc *
vpmu__pmc_by_id(struct vpmu_vm *vm, int32_t owner, vpmu_pmc_id id)
{
	struct vpmu_owner *o;
	struct vpmu_pmc *pm;

	if ((o = owner_find(vm, owner)) == NULL)
		return (NULL);
	for (pm = o->pmcs; pm != NULL; pm = pm->owner_next)
		if (pm->id == id)
			return (pm);
	return (NULL);
}

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
	if ((o = owner_find(vm, cr->pid)) == NULL) {
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

static int
spec_from_request(const struct vpmu_pmc_alloc *a, struct vpmu_event_spec *sp)
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
	if ((error = spec_from_request(a, &spec)) != 0)
		return (error);

	o = owner_find(vm, cr->pid);
	for (row = c->ri_base; row < c->ri_base + c->rows; row++) {
		if (!event_fits_row(c, row, a->event) ||
		    !can_allocate_row(vm, row, mode) ||
		    !can_allocate_rowindex(vm, o, cr->pid, row, cpu))
			continue;
		if (VPMU_MODE_IS_SYSTEM(mode) && (vm->vcpu[cpu].sys[row] != NULL ||
		    vm->vcpu[cpu].disabled[row]))
			continue;
		break;
	}
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
	disp_mark(vm, row, mode);
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
	disp_unmark(vm, pm->row, pm->mode);
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
		if ((error = vpmu__sweeper_start(vm)) != 0)
			return (error);
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
			disp_mark(vm, row, VPMU_MODE_SC);
		}
	} else if (v->disabled[row]) {
		v->disabled[row] = false;
		disp_unmark(vm, row, VPMU_MODE_SC);
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
		pi->rowdisp = disp_of(vm, row);
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

/* ---- host view ------------------------------------------------------------ */

int
vpmu_pmc_get_count(vpmu_vm *vm, int32_t owner, vpmu_pmc_id id, struct vpmu_count *out)
{
	struct vpmu_pmc *pm;
	int error = 0;

	if (vm == NULL || out == NULL)
		return (EINVAL);
	vpmu__vm_lock(vm);
	if ((pm = vpmu__pmc_by_id(vm, owner, id)) == NULL)
		error = EINVAL;
	else {
		out->value = pm->base + vpmu__pmc_counted(vm, pm);	/* unscaled */
		out->time_enabled = pm->t_enabled;
		out->time_running = pm->t_running;
	}
	vpmu__vm_unlock(vm);
	return (error);
}

int
vpmu_pmc_get_unsupported(vpmu_vm *vm, int32_t owner, vpmu_pmc_id id, char *why,
    size_t whylen)
{
	struct vpmu_pmc *pm;
	int error = 0;

	if (vm == NULL)
		return (EINVAL);
	vpmu__vm_lock(vm);
	if ((pm = vpmu__pmc_by_id(vm, owner, id)) == NULL)
		error = EINVAL;
	else if (pm->unsupported) {
		error = EOPNOTSUPP;
		if (why != NULL && whylen > 0)
			snprintf(why, whylen, "%s", pm->why);
	} else if (vpmu__pmc_waiting(pm)) {
		error = EBUSY;
		if (why != NULL && whylen > 0)
			snprintf(why, whylen, "not running: all %u host counters of the "
			    "vCPU are in use", vm->capacity);
	} else if (why != NULL && whylen > 0)
		why[0] = '\0';
	vpmu__vm_unlock(vm);
	return (error);
}

/* ---- PMCs behind guest-visible MSR counters (guest-api/) ------------------
 *
 * Each counter a guest programs through MSRs is a system-scope counting PMC
 * on its vCPU, in its class's row, owned by the guest kernel itself:
 * owner pid 0, which no caller of vpmu_vm_op() can be.  GETPMCINFO shows
 * those rows STANDALONE with owner 0.
 */

int
vpmu__model_pmc_create(struct vpmu_vm *vm, unsigned cpu, uint32_t cls, unsigned idx,
    struct vpmu_pmc **pmp)
{
	static const struct vpmu_cred guest = { .pid = 0, .privileged = 1 };
	const struct vpmu_classdesc *c = vpmu__class_find(vm, cls);
	struct vpmu_owner *o;
	struct vpmu_pmc *pm;
	unsigned row;

	if (c == NULL || idx >= c->rows || cpu >= vm->nvcpus)
		return (EINVAL);
	row = c->ri_base + idx;
	if (vm->vcpu[cpu].sys[row] != NULL || vm->disp[row] > 0)
		return (EBUSY);
	if ((pm = calloc(1, sizeof(*pm))) == NULL)
		return (ENOMEM);
	pm->nhw = 1;
	if ((pm->hw = calloc(1, sizeof(*pm->hw))) == NULL) {
		free(pm);
		return (ENOMEM);
	}
	if ((o = owner_find(vm, guest.pid)) == NULL) {
		if ((o = calloc(1, sizeof(*o))) == NULL) {
			free(pm->hw);
			free(pm);
			return (ENOMEM);
		}
		o->pid = guest.pid;
		o->cred = guest;
		o->next = vm->owners;
		vm->owners = o;
	}
	pm->id = VPMU_ID_MAKE(cpu, VPMU_MODE_SC, cls, row);
	pm->wrap_mask = c->width >= 64 ? ~0ull : (1ull << c->width) - 1;
	pm->mode = VPMU_MODE_SC;
	pm->cls = cls;
	pm->cpu = cpu;
	pm->row = row;
	pm->caps = c->caps;
	pm->state = VPMU_STATE_ALLOCATED;
	pm->owner = o;
	pm->owner_next = o->pmcs;
	o->pmcs = pm;
	disp_mark(vm, row, VPMU_MODE_SC);
	vm->vcpu[cpu].sys[row] = pm;
	*pmp = pm;
	return (0);
}

static int
model_pmc_start(struct vpmu_vm *vm, struct vpmu_pmc *pm)
{
	return (vpmu__hw_activate(vm, pm, pm->cpu));	/* count.c arms its period */
}

/*
 * (Re)program a model PMC: stop it (its count is kept), take the new event,
 * and run it if asked.  A new event closes the old host counter, so the
 * source is asked again whether it can count it.
 */
int
vpmu__model_pmc_program(struct vpmu_vm *vm, struct vpmu_pmc *pm,
    const struct vpmu_event_spec *spec, bool run)
{
	if (pm->state == VPMU_STATE_RUNNING) {
		(void)vpmu__hw_deactivate(vm, pm, pm->cpu);
		pm->state = VPMU_STATE_STOPPED;
	}
	if (spec != NULL && memcmp(spec, &pm->spec, sizeof(*spec)) != 0) {
		vpmu__hw_close_all(vm, pm);
		pm->spec = *spec;
		pm->why[0] = '\0';
		pm->unsupported = spec->event != VPMU_EV_NONE &&
		    vpmu__pmc_supports(vm, spec, pm->why, sizeof(pm->why)) != 0;
	}
	if (!run || pm->spec.event == VPMU_EV_NONE)
		return (0);
	pm->state = VPMU_STATE_RUNNING;
	return (model_pmc_start(vm, pm));
}

/* What the guest reads; times: the PMC's whole enabled and running time. */
uint64_t
vpmu__model_pmc_value(struct vpmu_vm *vm, struct vpmu_pmc *pm, struct vpmu_count *times)
{
	if (times != NULL) {
		times->value = pm->base + vpmu__pmc_counted(vm, pm);
		times->time_enabled = pm->tot_enabled;
		times->time_running = pm->tot_running;
	}
	if (!pm->hw[0].counting && pm->t_running == pm->t_enabled)
		return (pm->base + pm->counted);	/* the common read: exact, idle */
	return (vpmu__pmc_estimate(vm, pm));
}

/* A guest's write to a counter, running or not, takes effect at once. */
int
vpmu__model_pmc_set(struct vpmu_vm *vm, struct vpmu_pmc *pm, uint64_t value)
{
	vpmu__pmc_set_base(vm, pm, value);	/* re-arms a counting PMC's period */
	return (0);
}

/* ---- log records about PMCs -------------------------------------------------- */

/*
 * A record about pm for its owner's log, if the owner has one: its
 * allocation (PMCALLOCATEDYN, which carries the event's name, so readers
 * need no libpmc event table), an attach or detach of p, p's exec, p's
 * exit with its count (value).  (PROCCSW is written by vpmu__unload().)
 */
void
vpmu__log_pmc(struct vpmu_vm *vm, struct vpmu_pmc *pm, uint32_t type,
    const struct vpmu_proc *p, uint64_t value)
{
	struct vpmu_pmclog_ev ev;
	const char *name;

	if (pm->owner->log == NULL)
		return;
	memset(&ev, 0, sizeof(ev));
	ev.type = type;
	switch (type) {
	case VPMU_PMCLOG_PMCALLOCATEDYN:
		ev.u.pmcallocatedyn.pmcid = pm->id;
		ev.u.pmcallocatedyn.event = pm->spec.event;
		ev.u.pmcallocatedyn.flags = pm->flags & VPMU_F_ALLOCATE_MASK;
		name = vpmu_event_name(pm->spec.event);
		if (pm->spec.event == VPMU_EV_RAW)
			snprintf(ev.u.pmcallocatedyn.evname, sizeof(ev.u.pmcallocatedyn.evname),
			    "raw-0x%llx", (unsigned long long)pm->spec.raw);
		else
			snprintf(ev.u.pmcallocatedyn.evname, sizeof(ev.u.pmcallocatedyn.evname),
			    "%s", name != NULL ? name : "unknown");
		break;
	case VPMU_PMCLOG_PMCATTACH:
		ev.u.pmcattach.pmcid = pm->id;
		ev.u.pmcattach.pid = (uint32_t)p->cred.pid;
		snprintf(ev.u.pmcattach.path, sizeof(ev.u.pmcattach.path), "%s",
		    p->path != NULL ? p->path : "");
		break;
	case VPMU_PMCLOG_PMCDETACH:
		ev.u.pmcdetach.pmcid = pm->id;
		ev.u.pmcdetach.pid = (uint32_t)p->cred.pid;
		break;
	case VPMU_PMCLOG_PROCEXEC:
		ev.u.procexec.pid = (uint32_t)p->cred.pid;
		ev.u.procexec.pmcid = pm->id;
		snprintf(ev.u.procexec.path, sizeof(ev.u.procexec.path), "%s",
		    p->path != NULL ? p->path : "");
		break;
	case VPMU_PMCLOG_PROCEXIT:
		ev.u.procexit.pmcid = pm->id;
		ev.u.procexit.pid = (uint32_t)p->cred.pid;
		ev.u.procexit.value = value;
		break;
	default:
		return;
	}
	vpmu__log_emit(vm, pm->owner, &ev);
}
