/*
 * snapshot.c -- vpmu_vm_restore(): a blob vpmu_vm_save() wrote, back into
 * a fresh VM (vpmu_snapshot(3)); the layout is in snapshot_int.h, the
 * codec in snapshot_codec.c, the save in snapshot_save.c, the parse and
 * checks in snapshot_parse.c.
 */
#include <errno.h>
#include <string.h>

#include "snapshot_int.h"

/* ---- restore: apply ------------------------------------------------------------------ */

static void
set_counts(struct vpmu_pmc *pm, const struct s_counts *n)
{
	pm->base = n->base;
	pm->counted = n->counted;
	pm->t_enabled = n->t_enabled;
	pm->t_running = n->t_running;
	pm->tot_enabled = n->tot_enabled;
	pm->tot_running = n->tot_running;
	pm->shown = n->shown;
	pm->group = n->group;
}

/*
 * A slot taken since activation holds what the source counted since: not
 * part of the saved count.  Whatever it holds moves out of the way by a
 * subtraction from counted (the source may count between the two).
 */
static void
settle(struct vpmu_vm *vm, struct vpmu_pmc *pm)
{
	unsigned i;

	for (i = 0; i < pm->nhw; i++) {
		pm->counted -= vpmu__hw_peek(vm, pm, i);
		pm->hw[i].loaded -= vpmu__hw_peek(vm, pm, i);
	}
}

static int
apply_procs(struct vpmu_vm *vm, const struct snap *s)
{
	struct vpmu_proc *p;
	uint32_t i, j;
	unsigned b;

	/*
	 * Last first: inserting at the head of each hash chain then gives the
	 * chains the order they were saved in, so that saving again writes
	 * the same bytes.
	 */
	for (j = s->nproc; j > 0; j--) {
		i = j - 1;
		if ((p = calloc(1, sizeof(*p))) == NULL ||
		    (p->slots = calloc(vm->npmc, sizeof(*p->slots))) == NULL) {
			free(p);
			return (ENOMEM);
		}
		p->cred = s->procs[i].cred;
		p->ppid = s->procs[i].ppid;
		p->exiting = s->procs[i].exiting;
		if (s->procs[i].path != NULL && (p->path = strdup(s->procs[i].path)) == NULL) {
			free(p->slots);
			free(p);
			return (ENOMEM);
		}
		b = (uint32_t)p->cred.pid % vm->proc_hash_size;
		p->hnext = vm->proc_hash[b];
		vm->proc_hash[b] = p;
	}
	return (0);
}

static int
apply_pmc(struct vpmu_vm *vm, struct vpmu_owner *o, struct vpmu_pmc ***tailp,
    const struct s_pmc *sp)
{
	struct vpmu_pmc *pm;
	struct vpmu_target *t, **tt;
	struct vpmu_proc *p;
	uint32_t i;

	if ((pm = calloc(1, sizeof(*pm))) == NULL)
		return (ENOMEM);
	pm->nhw = sp->nhw;
	if ((pm->hw = calloc(pm->nhw, sizeof(*pm->hw))) == NULL) {
		free(pm);
		return (ENOMEM);
	}
	pm->id = sp->id;
	pm->mode = sp->mode;
	pm->cls = sp->cls;
	pm->cpu = sp->cpu;
	pm->row = sp->row;
	pm->caps = sp->caps;
	pm->flags = sp->flags;
	pm->state = sp->state;
	pm->spec = sp->spec;
	pm->reload = sp->reload;
	pm->sample_mark = sp->sample_mark;
	pm->dropped = sp->dropped;
	pm->owner = o;
	if (vpmu__pmc_supports(vm, &pm->spec, pm->why, sizeof(pm->why)) != 0)
		pm->unsupported = true;
	**tailp = pm;				/* the saved order */
	*tailp = &pm->owner_next;
	if (VPMU_MODE_IS_SYSTEM(pm->mode)) {
		vm->disp[pm->row]--;
		vm->vcpu[pm->cpu].sys[pm->row] = pm;
	} else
		vm->disp[pm->row]++;
	tt = &pm->targets;
	for (i = 0; i < sp->nt; i++) {
		if ((t = calloc(1, sizeof(*t))) == NULL)
			return (ENOMEM);
		p = vpmu__proc_find(vm, sp->t[i].pid);
		t->pmc = pm;
		t->proc = p;
		t->value = sp->t[i].value;
		*tt = t;
		tt = &t->pmc_next;
		pm->ntargets++;
		p->slots[pm->row] = t;
		p->nattached++;
	}
	return (0);
}

static struct vpmu_pmc *
pmc_find_id(struct vpmu_owner *o, vpmu_pmc_id id)
{
	struct vpmu_pmc *pm;

	for (pm = o->pmcs; pm != NULL; pm = pm->owner_next)
		if (pm->id == id)
			return (pm);
	return (NULL);
}

static int
apply_owners(struct vpmu_vm *vm, const struct snap *s)
{
	struct vpmu_owner *o;
	struct vpmu_pmc **tail;
	uint32_t i, j;
	int error;

	/* Last first: each new owner goes to the list's head, as it was saved. */
	for (i = s->nowner; i-- > 0; ) {
		if ((o = vpmu__owner_get(vm, &s->owners[i].cred, true)) == NULL)
			return (ENOMEM);
		o->cred = s->owners[i].cred;
		o->forked = s->owners[i].forked;
		for (tail = &o->pmcs; *tail != NULL; tail = &(*tail)->owner_next)
			;
		for (j = 0; j < s->owners[i].npmc; j++)
			if ((error = apply_pmc(vm, o, &tail, &s->owners[i].pmcs[j])) != 0)
				return (error);
	}
	return (0);
}

/* The blob has a running sampling PMC: the sweeper must run. */
static bool
snap_sampling(const struct snap *s)
{
	uint32_t i, j;

	for (i = 0; i < s->nowner; i++)
		for (j = 0; j < s->owners[i].npmc; j++)
			if (VPMU_MODE_IS_SAMPLING(s->owners[i].pmcs[j].mode) &&
			    s->owners[i].pmcs[j].state == VPMU_STATE_RUNNING)
				return (true);
	return (false);
}

/* Running PMCs take their host slots again, then get their saved counts. */
static int
apply_running(struct vpmu_vm *vm, const struct snap *s)
{
	struct vpmu_owner *o;
	struct vpmu_pmc *pm;
	struct vpmu_proc *p;
	const struct s_pmc *sp;
	uint32_t i, j, c;
	bool sampling = false;
	int error;

	for (i = 0; i < s->nowner; i++) {
		o = vpmu__owner_get(vm, &s->owners[i].cred, false);
		for (j = 0; j < s->owners[i].npmc; j++) {
			sp = &s->owners[i].pmcs[j];
			pm = pmc_find_id(o, sp->id);
			if (pm->state == VPMU_STATE_RUNNING) {
				sampling |= VPMU_MODE_IS_SAMPLING(pm->mode);
				if (VPMU_MODE_IS_SYSTEM(pm->mode)) {
					if ((error = vpmu__hw_activate(vm, pm, pm->cpu)) != 0)
						return (error);
				} else
					for (c = 0; c < vm->nvcpus; c++) {
						p = vm->vcpu[c].cur;
						if (p != NULL && p->slots[pm->row] != NULL &&
						    p->slots[pm->row]->pmc == pm &&
						    (error = vpmu__load(vm, c, pm)) != 0)
							return (error);
					}
			}
			set_counts(pm, &sp->n);
			for (c = 0; c < pm->nhw; c++)
				pm->hw[c].loaded = sp->loaded[c];
			settle(vm, pm);
		}
	}
	/* vpmu_vm_restore() started the sweeper before the lock; EAGAIN: it could not. */
	return (sampling && !__atomic_load_n(&vm->sweeper_on, __ATOMIC_ACQUIRE) ? EAGAIN : 0);
}

/*
 * Before the VM lock: the source asked about every event the restore
 * gives a PMC (vpmu__pmc_ask()): the saved PMCs', the counters' last ones
 * and those their controls name.
 */
static void
ask_all(struct vpmu_vm *vm, const struct snap *s)
{
	const struct vpmu_model *m = &vm->gpmu->model;
	const struct s_gvcpu *sv;
	unsigned c, i, j;

	for (i = 0; i < s->nowner; i++)
		for (j = 0; j < s->owners[i].npmc; j++)
			vpmu__pmc_ask(vm, &s->owners[i].pmcs[j].spec);
	for (c = 0; c < vm->nvcpus; c++) {
		sv = &s->g[c];
		for (i = 0; i < m->gp; i++)
			vpmu__gpmu_ask_ctl(vm, i, sv->c[i].ctl);
		for (i = 0; i < m->fixed; i++)
			vpmu__gpmu_ask_ctl(vm, 32 + i, sv->fixed_ctrl);
		for (i = 0; i < m->gp + m->fixed; i++)
			vpmu__pmc_ask(vm, &sv->c[i].spec);
	}
}

static int
apply_gpmu(struct vpmu_vm *vm, const struct snap *s)
{
	struct gpmu *g = vm->gpmu;
	const struct vpmu_model *m = &g->model;
	unsigned c, i;
	int error;

	for (c = 0; c < vm->nvcpus; c++) {
		struct gpmu_vcpu *v = &g->vcpu[c];
		const struct s_gvcpu *sv = &s->g[c];

		__atomic_store_n(&v->pending, 0, __ATOMIC_RELAXED);	/* all reprogrammed */
		GPMU_STORE(v->fixed_ctrl, sv->fixed_ctrl);
		GPMU_STORE(v->global_ctrl, sv->global_ctrl);
		for (i = 0; i < m->gp; i++) {
			GPMU_STORE(v->gp[i].ctl, sv->c[i].ctl);
			v->gp[i].pm->group = sv->c[i].n.group;
			if ((error = gpmu_reprogram_gp(vm, v, i)) != 0)
				return (error);
		}
		for (i = 0; i < m->fixed; i++) {
			v->fx[i].pm->group = sv->c[m->gp + i].n.group;
			if ((error = gpmu_reprogram_fixed(vm, v, i)) != 0)
				return (error);
		}
		for (i = 0; i < m->gp + m->fixed; i++) {
			struct gpmu_ctr *k = i < m->gp ? &v->gp[i] : &v->fx[i - m->gp];

			/*
			 * A counter that does not count keeps the event it was
			 * last given, which its controls need not name (reset).
			 */
			if (!k->running && memcmp(&k->pm->spec, &sv->c[i].spec,
			    sizeof(k->pm->spec)) != 0 &&
			    (error = vpmu__model_pmc_program(vm, k->pm, &sv->c[i].spec,
			    false)) != 0)
				return (error);
			k->last = sv->c[i].last;
			k->shown = sv->c[i].shown;
			GPMU_STORE(k->used, sv->c[i].used);
			set_counts(k->pm, &sv->c[i].n);
			settle(vm, k->pm);
		}
		GPMU_STORE(v->global_status, sv->global_status);
		__atomic_store_n(&v->pmi_pending, sv->pmi ? 1 : 0, __ATOMIC_RELEASE);
	}
	return (0);
}

static int
apply(struct vpmu_vm *vm, const struct snap *s, struct vpmu_log **logs)
{
	struct vpmu_op_configurelog cl = { 0, -1 };
	unsigned c, i;
	int error;

	for (i = 0; i < 3; i++)	/* vpmu_vm_get_tunable() reads them without the lock */
		__atomic_store_n(&vm->tun.v[vpmu__snap_rw_tunables[i]], s->tun[i],
		    __ATOMIC_RELAXED);
	vm->forks = s->forks;
	vm->next_group = s->next_group;
	if ((error = apply_procs(vm, s)) != 0 || (error = apply_owners(vm, s)) != 0)
		return (error);
	for (c = 0; c < vm->nvcpus; c++) {
		struct vpmu_vcpu *v = &vm->vcpu[c];

		v->online = s->vcpu[c].online;
		v->cur = s->vcpu[c].has_cur ? vpmu__proc_find(vm, s->vcpu[c].cur_pid) : NULL;
		v->cur_tid = s->vcpu[c].cur_tid;
		for (i = 0; i < vm->npmc; i++)
			if (s->vcpu[c].disabled[i]) {
				v->disabled[i] = true;
				vm->disp[i]--;
			}
	}
	if ((error = apply_gpmu(vm, s)) != 0 || (error = apply_running(vm, s)) != 0)
		return (error);
	for (i = 0; i < s->nowner; i++) {
		if (!s->owners[i].has_log)
			continue;
		cl.logfd = vpmu__snap_log_fd(vm, s->owners[i].logdesc);
		if ((error = vpmu__log_configure(vm, &s->owners[i].cred, &cl, &logs[i])) != 0)
			return (error);
	}
	vm->stats = s->stats;			/* after the logs opened (buffer_requests) */
	for (c = 0; s->has_points && c < vm->nvcpus; c++)
		(void)vm->src->exec_point_set(vm->src_state, c,
		    s->vcpu[c].known ? &s->vcpu[c].p : NULL);
	return (0);
}

/*
 * Every logged owner's descriptor offered again and open for writing
 * (else EBADF), its log made ready before the VM lock (vpmu__log_prepare():
 * the descriptor's checks and duplicate, the writer thread): logs[i] for
 * owner i.  The first error; the logs made so far stay for the caller to
 * discard.
 */
static int
prepare_logs(struct vpmu_vm *vm, const struct snap *s, struct vpmu_log **logs)
{
	uint32_t i;
	int fd, error;

	for (i = 0; i < s->nowner; i++) {
		if (!s->owners[i].has_log)
			continue;
		if ((fd = vpmu__snap_log_fd(vm, s->owners[i].logdesc)) < 0)
			return (EBADF);
		if ((error = vpmu__log_prepare(vm, fd, &logs[i])) != 0)
			return (error);
	}
	return (0);
}

/*
 * In three steps, so that no system call, thread creation or parse runs
 * under the VM lock: the blob decoded and the logs prepared (the layer's
 * descriptors held); under the VM lock the checks against the VM as it is
 * and the apply; the logs no owner took undone after the lock.  The errors
 * come in the order the checks were always made: the blob's, then the
 * VM's (EBUSY, EBADMSG), then the logs' (EBADF, or the host's).
 */
int
vpmu_vm_restore(struct vpmu_vm *vm, const void *buf, size_t len)
{
	struct vpmu_log **logs = NULL;
	struct snap s;
	uint32_t i;
	int error, log_error = 0;

	if (vm == NULL || buf == NULL || vm->gpmu == NULL)
		return (EINVAL);
	memset(&s, 0, sizeof(s));
	vpmu__snap_hold(vm);
	if ((error = vpmu__snap_decode(buf, len, vm, &s)) == 0 && s.nowner != 0) {
		if ((logs = calloc(s.nowner, sizeof(*logs))) == NULL)
			error = ENOMEM;
		else
			log_error = prepare_logs(vm, &s, logs);
	}
	if (error == 0 && snap_sampling(&s))
		(void)vpmu__sweeper_start(vm);	/* apply_running() says if it failed */
	if (error == 0) {
		ask_all(vm, &s);
		vpmu__vm_lock(vm);
		if ((error = vpmu__snap_check(vm, &s)) == 0 && (error = log_error) == 0)
			error = apply(vm, &s, logs);
		vpmu__vm_unlock(vm);
	}
	vpmu__snap_release(vm);
	for (i = 0; logs != NULL && i < s.nowner; i++)
		vpmu__log_discard(logs[i]);	/* NULL: taken, or none */
	free(logs);
	vpmu__snap_free(&s, vm->nvcpus);
	return (error);
}

/* ---- the layer's snapshot section (vm->snap) ---------------------------------- */

void
vpmu__snap_hold(struct vpmu_vm *vm)
{
	if (vm->snap != NULL)
		vm->snap->hold(vm);
}

void
vpmu__snap_release(struct vpmu_vm *vm)
{
	if (vm->snap != NULL)
		vm->snap->release(vm);
}

int
vpmu__snap_log_fd(struct vpmu_vm *vm, int32_t n)
{
	return (vm->snap != NULL ? vm->snap->log_fd(vm, n) : -1);
}

bool
vpmu__snap_owner_unsaved(const struct vpmu_vm *vm, int32_t pid)
{
	return (vm->snap != NULL && vm->snap->unsaved(pid));
}
