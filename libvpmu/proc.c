/*
 * proc.c -- guest processes as libvpmu knows them (hwpmc's HWPMC_HOOKS):
 * create, fork, exec, exit and context switches on vCPUs.  Process PMCs
 * count only while one of their targets is scheduled on a vCPU: switch-in
 * loads them onto the vCPU's host slots, switch-out credits the delta to
 * the PMC and to the target process.
 */
#include <errno.h>
#include <signal.h>
#include <string.h>

#include "internal.h"
#include <vpmu/pmclog.h>

/* ---- the table -------------------------------------------------------------- */

static unsigned
bucket(const struct vpmu_vm *vm, int32_t pid)
{
	return ((uint32_t)pid % vm->proc_hash_size);
}

struct vpmu_proc *
vpmu__proc_find(struct vpmu_vm *vm, int32_t pid)
{
	struct vpmu_proc *p;

	for (p = vm->proc_hash[bucket(vm, pid)]; p != NULL; p = p->hnext)
		if (p->cred.pid == pid)
			return (p);
	return (NULL);
}

static int
proc_add(struct vpmu_vm *vm, const struct vpmu_cred *cred, int32_t ppid)
{
	struct vpmu_proc *p;
	unsigned b;

	if ((p = calloc(1, sizeof(*p))) == NULL)
		return (ENOMEM);
	p->cred = *cred;
	p->ppid = ppid;
	b = bucket(vm, cred->pid);
	p->hnext = vm->proc_hash[b];
	vm->proc_hash[b] = p;
	return (0);
}

static void
proc_remove(struct vpmu_vm *vm, struct vpmu_proc *p)
{
	struct vpmu_proc **pp;

	for (pp = &vm->proc_hash[bucket(vm, p->cred.pid)]; *pp != NULL;
	    pp = &(*pp)->hnext)
		if (*pp == p) {
			*pp = p->hnext;
			break;
		}
	free(p->slots);
	free(p->path);
	free(p);
}

void
vpmu__procs_free(struct vpmu_vm *vm)
{
	unsigned b;

	for (b = 0; b < vm->proc_hash_size; b++)
		while (vm->proc_hash[b] != NULL)
			proc_remove(vm, vm->proc_hash[b]);
}

/*
 * May caller attach a PMC to target?  hwpmc asks p_candebug(9); libvpmu's
 * version of that rule, for the identities a caller reports:
 *   - a process may always attach to itself;
 *   - a privileged, non-jailed caller may attach to anything;
 *   - a jailed caller sees only jailed processes (libvpmu has one jail);
 *     a privileged jailed caller may attach to any of them;
 *   - with security.bsd.unprivileged_proc_debug = 0 nobody else may;
 *   - otherwise the uids must match and the target must not be privileged
 *     (an ordinary user cannot debug a set-id or root process).
 */
bool
vpmu__can_debug(const struct vpmu_vm *vm, const struct vpmu_cred *caller,
    const struct vpmu_proc *target)
{
	if (caller->pid == target->cred.pid)
		return (true);
	if (caller->privileged && !caller->jailed)
		return (true);
	if (caller->jailed && !target->cred.jailed)
		return (false);
	if (caller->privileged)
		return (true);
	if (!vm->tun.v[VPMU_T_UNPRIVILEGED_PROC_DEBUG])
		return (false);
	return (caller->uid == target->cred.uid && !target->cred.privileged);
}

/* ---- loading process PMCs on vCPUs ----------------------------------------- */

int
vpmu__load(struct vpmu_vm *vm, unsigned cpu, struct vpmu_pmc *pm)
{
	struct vpmu_vcpu *v = &vm->vcpu[cpu];
	int error;

	VPMU_ASSERT(v->loaded[pm->row] == NULL);
	if ((error = vpmu__hw_activate(vm, pm, cpu)) != 0)
		return (error);
	v->loaded[pm->row] = pm;
	return (0);
}

/*
 * Take the process PMC at row off vCPU cpu: what it counted goes to the
 * PMC (pm_savedvalue) and to the process scheduled there (pp_pmcval) --
 * count.c credits both, at each rotation too.
 */
void
vpmu__unload(struct vpmu_vm *vm, unsigned cpu, unsigned row)
{
	struct vpmu_vcpu *v = &vm->vcpu[cpu];
	struct vpmu_pmc *pm = v->loaded[row];
	struct vpmu_pmclog_ev ev = { .type = VPMU_PMCLOG_PROCCSW };

	VPMU_ASSERT(pm != NULL);
	(void)vpmu__hw_deactivate(vm, pm, cpu);
	v->loaded[row] = NULL;
	/* LOG_PROCCSW: what the process counted while it was scheduled. */
	if ((pm->flags & VPMU_F_LOG_PROCCSW) && VPMU_MODE_IS_COUNTING(pm->mode) &&
	    v->cur != NULL && pm->owner->log != NULL) {
		ev.u.proccsw.value = pm->hw[cpu].loaded;
		ev.u.proccsw.pmcid = pm->id;
		ev.u.proccsw.pid = (uint32_t)v->cur->cred.pid;
		ev.u.proccsw.tid = (uint32_t)v->cur_tid;
		vpmu__log_emit(vm, pm->owner, &ev);
	}
}

/* ---- attach and detach of one process ----------------------------------------- */

int
vpmu__attach_one(struct vpmu_vm *vm, struct vpmu_pmc *pm, struct vpmu_proc *p)
{
	struct vpmu_target *t;
	unsigned c;
	int error;

	if (p->slots == NULL &&
	    (p->slots = calloc(vm->npmc, sizeof(*p->slots))) == NULL)
		return (ENOMEM);
	if (p->slots[pm->row] != NULL)
		return (p->slots[pm->row]->pmc == pm ? EEXIST : EBUSY);
	if ((t = calloc(1, sizeof(*t))) == NULL)
		return (ENOMEM);
	t->pmc = pm;
	t->proc = p;
	t->value = VPMU_MODE_IS_SAMPLING(pm->mode) ? pm->reload : 0;
	t->pmc_next = pm->targets;
	pm->targets = t;
	pm->ntargets++;
	p->slots[pm->row] = t;
	p->nattached++;
	if (p->cred.pid == pm->owner->pid)
		pm->flags |= VPMU_PF_ATTACHED_TO_OWNER;
	pm->flags |= VPMU_PF_ATTACH_DONE;
	vpmu__log_pmc(vm, pm, VPMU_PMCLOG_PMCATTACH, p, 0);
	/* A target already on a vCPU (a child forked from one) counts now. */
	if (pm->state == VPMU_STATE_RUNNING)
		for (c = 0; c < vm->nvcpus; c++)
			if (vm->vcpu[c].cur == p && (error = vpmu__load(vm, c, pm)) != 0) {
				(void)vpmu__detach_one(vm, pm, p, false);
				return (error);
			}
	return (0);
}

int
vpmu__detach_one(struct vpmu_vm *vm, struct vpmu_pmc *pm, struct vpmu_proc *p, bool notify)
{
	struct vpmu_target *t, **tp;
	unsigned c;

	if (p->nattached == 0)
		return (ESRCH);			/* not monitored at all */
	if ((t = p->slots[pm->row]) == NULL || t->pmc != pm)
		return (EINVAL);		/* not attached to this PMC */
	for (c = 0; c < vm->nvcpus; c++)
		if (vm->vcpu[c].cur == p && vm->vcpu[c].loaded[pm->row] == pm)
			vpmu__unload(vm, c, pm->row);
	for (tp = &pm->targets; *tp != NULL; tp = &(*tp)->pmc_next)
		if (*tp == t) {
			*tp = t->pmc_next;
			break;
		}
	pm->ntargets--;
	p->slots[pm->row] = NULL;
	p->nattached--;
	free(t);
	vpmu__log_pmc(vm, pm, VPMU_PMCLOG_PMCDETACH, p, 0);
	if (p->cred.pid == pm->owner->pid)
		pm->flags &= ~VPMU_PF_ATTACHED_TO_OWNER;
	if (pm->ntargets == 0 && notify)
		vpmu__notify(vm, pm->owner->pid, SIGIO);
	return (0);
}

/* ---- hooks ------------------------------------------------------------------- */

static int
hook_enter(struct vpmu_vm *vm)
{
	if (vm == NULL)
		return (EINVAL);
	vpmu__vm_lock(vm);
	return (0);
}

static int
hook_leave(struct vpmu_vm *vm, int error)
{
	return (vpmu__vm_unlock_err(vm, error));	/* the host counters asked for opened */
}

/*
 * The hooks that may close an owner's log (exit, exec): the samples in
 * the rings go to the logs before the VM lock is taken, and the logs
 * closed under it are finished (the wait for their writers) after it is
 * dropped.
 */
static int
hook_enter_closing(struct vpmu_vm *vm)
{
	if (vm == NULL)
		return (EINVAL);
	if (__atomic_load_n(&vm->sweeper_on, __ATOMIC_ACQUIRE))
		vpmu__sample_drain(vm);		/* sampling started: there may be samples */
	vpmu__vm_lock(vm);
	return (0);
}

static int
hook_leave_closing(struct vpmu_vm *vm, int error, struct vpmu_log *closing)
{
	error = vpmu__vm_unlock_err(vm, error);
	vpmu__log_finish_all(closing);
	return (error);
}

int
vpmu_proc_create(vpmu_vm *vm, const struct vpmu_cred *proc, int32_t ppid)
{
	int error;

	if (proc == NULL || proc->pid <= 0 || ppid < 0 || ppid == proc->pid)
		return (EINVAL);
	if ((error = hook_enter(vm)) != 0)
		return (error);
	if (vpmu__proc_find(vm, proc->pid) != NULL)
		error = EEXIST;
	else if (ppid != 0 && vpmu__proc_find(vm, ppid) == NULL)
		error = ESRCH;
	else
		error = proc_add(vm, proc, ppid);
	return (hook_leave(vm, error));
}

/* PROCFORK to an owner, once per fork (its PMCs may share the parent). */
static void
log_fork(struct vpmu_vm *vm, struct vpmu_owner *o, int32_t parent, int32_t child)
{
	struct vpmu_pmclog_ev ev = { .type = VPMU_PMCLOG_PROCFORK };

	if (o->log == NULL || o->forked == vm->forks)
		return;
	o->forked = vm->forks;
	ev.u.procfork.oldpid = (uint32_t)parent;
	ev.u.procfork.newpid = (uint32_t)child;
	vpmu__log_emit(vm, o, &ev);
}

/*
 * Fork: the child gets the parent's credentials and, for every PMC
 * attached to the parent with PMC_F_DESCENDANTS, becomes a target too.
 */
int
vpmu_proc_fork(vpmu_vm *vm, int32_t parent, int32_t child)
{
	struct vpmu_proc *pp, *cp;
	struct vpmu_cred cred;
	unsigned row;
	int error;

	if (parent <= 0 || child <= 0 || parent == child)
		return (EINVAL);
	if ((error = hook_enter(vm)) != 0)
		return (error);
	if ((pp = vpmu__proc_find(vm, parent)) == NULL || pp->exiting)
		return (hook_leave(vm, ESRCH));
	if (vpmu__proc_find(vm, child) != NULL)
		return (hook_leave(vm, EEXIST));
	cred = pp->cred;
	cred.pid = child;
	cred.tid = 0;
	if ((error = proc_add(vm, &cred, parent)) != 0)
		return (hook_leave(vm, error));
	cp = vpmu__proc_find(vm, child);
	vm->forks++;
	for (row = 0; pp->slots != NULL && row < vm->npmc && error == 0; row++)
		if (pp->slots[row] != NULL &&
		    (pp->slots[row]->pmc->flags & VPMU_F_DESCENDANTS)) {
			log_fork(vm, pp->slots[row]->pmc->owner, parent, child);
			error = vpmu__attach_one(vm, pp->slots[row]->pmc, cp);
		}
	if (error != 0) {
		/* All or nothing: the child is forgotten again. */
		for (row = 0; cp->slots != NULL && row < vm->npmc; row++)
			if (cp->slots[row] != NULL)
				(void)vpmu__detach_one(vm, cp->slots[row]->pmc, cp, false);
		proc_remove(vm, cp);
	}
	return (hook_leave(vm, error));
}

/*
 * Release every PMC pid owns (its log closed first, as at hwpmc's process
 * exit: detached here, onto *closing, and finished by the hook once the
 * VM lock is dropped); the owner record goes with the last one.
 */
static void
release_owned(struct vpmu_vm *vm, int32_t pid, struct vpmu_log **closing)
{
	struct vpmu_owner *o;

	for (o = vm->owners; o != NULL; o = o->next)
		if (o->pid == pid && o->log != NULL) {
			vpmu__log_defer(closing, vpmu__log_detach(vm, o));
			vpmu__owner_maybe_free(vm, o);	/* it may have had only the log */
			break;
		}
again:
	for (o = vm->owners; o != NULL; o = o->next)
		if (o->pid == pid && o->pmcs != NULL) {
			vpmu__pmc_release(vm, o->pmcs);	/* may free o */
			goto again;
		}
}

/*
 * Exec: PMCs the process owns are released (not inherited across exec).
 * With new credentials, PMCs whose owners could not attach to the process
 * now are detached from it.
 */
int
vpmu_proc_exec(vpmu_vm *vm, int32_t pid, const char *path, const struct vpmu_cred *newcred)
{
	struct vpmu_log *closing = NULL;
	struct vpmu_proc *p;
	struct vpmu_pmc *pm;
	char *copy = NULL;
	unsigned row;
	int error;

	if (pid <= 0 || (newcred != NULL && newcred->pid != pid))
		return (EINVAL);
	if (path != NULL && (copy = strdup(path)) == NULL)
		return (ENOMEM);
	if ((error = hook_enter_closing(vm)) != 0) {
		free(copy);
		return (error);
	}
	if ((p = vpmu__proc_find(vm, pid)) == NULL || p->exiting) {
		free(copy);
		return (hook_leave(vm, ESRCH));
	}
	free(p->path);
	p->path = copy;
	for (row = 0; p->slots != NULL && row < vm->npmc; row++)
		if (p->slots[row] != NULL)
			vpmu__log_pmc(vm, p->slots[row]->pmc, VPMU_PMCLOG_PROCEXEC, p, 0);
	release_owned(vm, pid, &closing);
	if (newcred != NULL) {
		p->cred = *newcred;
		for (row = 0; p->slots != NULL && row < vm->npmc; row++) {
			if (p->slots[row] == NULL)
				continue;
			pm = p->slots[row]->pmc;
			if (!vpmu__can_debug(vm, &pm->owner->cred, p))
				(void)vpmu__detach_one(vm, pm, p, true);
		}
	}
	return (hook_leave_closing(vm, 0, closing));
}

static void
switch_out(struct vpmu_vm *vm, unsigned cpu)
{
	struct vpmu_vcpu *v = &vm->vcpu[cpu];
	unsigned row;

	if (v->cur == NULL)
		return;
	for (row = 0; row < vm->npmc; row++)
		if (v->loaded[row] != NULL)
			vpmu__unload(vm, cpu, row);
	v->cur = NULL;
	v->cur_tid = 0;
}

/*
 * Exit: the process's count is final (hwpmc logs it in PROCEXIT); it is
 * detached from every PMC (an owner whose PMC loses its last target is
 * told with SIGIO), the PMCs it owned are released, its children go to
 * no parent.
 */
int
vpmu_proc_exit(vpmu_vm *vm, int32_t pid)
{
	struct vpmu_log *closing = NULL;
	struct vpmu_proc *p, *q;
	unsigned c, row, b;
	int error;

	if (pid <= 0)
		return (EINVAL);
	if ((error = hook_enter_closing(vm)) != 0)
		return (error);
	if ((p = vpmu__proc_find(vm, pid)) == NULL)
		return (hook_leave(vm, ESRCH));
	p->exiting = true;
	for (c = 0; c < vm->nvcpus; c++)
		if (vm->vcpu[c].cur == p)
			switch_out(vm, c);
	for (row = 0; p->slots != NULL && row < vm->npmc; row++) {
		if (p->slots[row] == NULL)
			continue;
		/* LOG_PROCEXIT: the process's own total (hwpmc's pp_pmcval). */
		if ((p->slots[row]->pmc->flags & VPMU_PF_NEEDS_LOGFILE) &&
		    VPMU_MODE_IS_COUNTING(p->slots[row]->pmc->mode))
			vpmu__log_pmc(vm, p->slots[row]->pmc, VPMU_PMCLOG_PROCEXIT, p,
			    p->slots[row]->value);
		(void)vpmu__detach_one(vm, p->slots[row]->pmc, p, true);
	}
	release_owned(vm, pid, &closing);
	for (b = 0; b < vm->proc_hash_size; b++)
		for (q = vm->proc_hash[b]; q != NULL; q = q->hnext)
			if (q->ppid == pid)
				q->ppid = 0;
	proc_remove(vm, p);
	return (hook_leave_closing(vm, 0, closing));
}

/*
 * A thread of pid is now on vCPU cpu.  Whatever ran there before is
 * switched out first, so a guest kernel may report only switch-ins.
 */
int
vpmu_proc_switch_in(vpmu_vm *vm, unsigned cpu, int32_t pid, int32_t tid)
{
	struct vpmu_proc *p;
	struct vpmu_vcpu *v;
	unsigned row;
	int error, e;

	if ((error = hook_enter(vm)) != 0)
		return (error);
	if (cpu >= vm->nvcpus || pid <= 0)
		return (hook_leave(vm, EINVAL));
	if ((p = vpmu__proc_find(vm, pid)) == NULL || p->exiting)
		return (hook_leave(vm, ESRCH));
	v = &vm->vcpu[cpu];
	switch_out(vm, cpu);
	v->cur = p;
	v->cur_tid = tid;
	/*
	 * The switch happens whatever a PMC's host slot says; a PMC that
	 * could not be loaded misses this slice and the first such error is
	 * returned.
	 */
	for (row = 0; p->slots != NULL && row < vm->npmc; row++)
		if (p->slots[row] != NULL &&
		    p->slots[row]->pmc->state == VPMU_STATE_RUNNING &&
		    (e = vpmu__load(vm, cpu, p->slots[row]->pmc)) != 0 && error == 0)
			error = e;
	return (hook_leave(vm, error));
}

int
vpmu_proc_switch_out(vpmu_vm *vm, unsigned cpu)
{
	int error;

	if ((error = hook_enter(vm)) != 0)
		return (error);
	if (cpu >= vm->nvcpus)
		return (hook_leave(vm, EINVAL));
	switch_out(vm, cpu);
	return (hook_leave(vm, 0));
}
