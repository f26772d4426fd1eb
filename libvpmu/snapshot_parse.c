/*
 * snapshot_parse.c -- vpmu_vm_restore()'s first half: the blob decoded
 * and checked, whole, into struct snap before anything of the VM changes
 * (the layout: snapshot_int.h).
 */
#include <errno.h>
#include <string.h>

#include "snapshot_int.h"

void
vpmu__snap_free(struct snap *s, unsigned nvcpus)
{
	uint32_t i, j;

	if (s->vcpu != NULL)
		for (i = 0; i < nvcpus; i++)
			free(s->vcpu[i].disabled);
	free(s->vcpu);
	free(s->g);
	for (i = 0; i < s->nproc; i++)
		free(s->procs[i].path);
	free(s->procs);
	for (i = 0; i < s->nowner; i++) {
		for (j = 0; s->owners[i].pmcs != NULL && j < s->owners[i].npmc; j++) {
			free(s->owners[i].pmcs[j].loaded);
			free(s->owners[i].pmcs[j].t);
		}
		free(s->owners[i].pmcs);
	}
	free(s->owners);
}

/* ---- restore: parse and check ----------------------------------------------------- */

static const struct vpmu_classdesc *
class_by_cls(const struct vpmu_vm *vm, uint32_t cls)
{
	unsigned i;

	for (i = 0; i < vm->nclass; i++)
		if (vm->classes[i].cls == cls)
			return (&vm->classes[i]);
	return (NULL);
}

/* CONF: the VM must have been made with the same configuration. */
static int
parse_conf(struct rd *r, const struct vpmu_vm *vm)
{
	const struct vpmu_model *m = &vm->gpmu->model;
	struct vpmu_model sm;
	uint32_t nclass, i;
	bool nomem = false, same = true;
	char *src;

	vpmu__r_tag(r, T_CONF);
	memset(&sm, 0, sizeof(sm));
	for (i = 0; i < sizeof(sm.name); i++)
		sm.name[i] = (char)vpmu__r_u8(r);
	sm.vendor = vpmu__r_u32(r);
	sm.version = vpmu__r_u32(r);
	sm.gp = vpmu__r_u32(r);
	sm.fixed = vpmu__r_u32(r);
	sm.width = vpmu__r_u32(r);
	sm.fixed_width = vpmu__r_u32(r);
	sm.fw_writes = vpmu__r_u32(r);
	sm.ebx = vpmu__r_u32(r);
	sm.core_ext = vpmu__r_u32(r);
	same = memcmp(sm.name, m->name, sizeof(sm.name)) == 0 && sm.vendor == m->vendor &&
	    sm.version == m->version && sm.gp == m->gp && sm.fixed == m->fixed &&
	    sm.width == m->width && sm.fixed_width == m->fixed_width &&
	    sm.fw_writes == m->fw_writes && sm.ebx == m->ebx && sm.core_ext == m->core_ext;
	same = same && vpmu__r_u32(r) == vm->nvcpus;
	same = same && vpmu__r_u32(r) == vm->npmc;
	nclass = vpmu__r_u32(r);
	same = same && nclass == vm->nclass;
	for (i = 0; same && !r->bad && i < nclass; i++) {
		same = same && vpmu__r_u32(r) == vm->classes[i].cls;
		same = same && vpmu__r_u32(r) == vm->classes[i].rows;
		same = same && vpmu__r_u32(r) == vm->classes[i].width;
	}
	same = same && vpmu__r_u32(r) == vm->capacity;
	src = same ? vpmu__r_str(r, &nomem) : NULL;
	same = same && src != NULL && strcmp(src, vm->src->name) == 0;
	free(src);
	if (nomem)
		return (ENOMEM);
	if (r->bad)
		return (EBADMSG);
	return (same ? 0 : EINVAL);
}

static void
r_counts(struct rd *r, struct s_counts *n)
{
	n->base = vpmu__r_u64(r);
	n->counted = vpmu__r_u64(r);
	n->t_enabled = vpmu__r_u64(r);
	n->t_running = vpmu__r_u64(r);
	n->tot_enabled = vpmu__r_u64(r);
	n->tot_running = vpmu__r_u64(r);
	n->shown = vpmu__r_u64(r);
	n->group = vpmu__r_u32(r);
}

static int
parse_vm_vcpus(struct rd *r, const struct vpmu_vm *vm, struct snap *s)
{
	const struct vpmu_model *m = &vm->gpmu->model;
	uint64_t fixed_valid = m->fixed >= 16 ? ~0ull : (1ull << (4 * m->fixed)) - 1;
	unsigned c, i;
	uint64_t t;

	vpmu__r_tag(r, T_VMST);
	for (i = 0; i < 3; i++) {
		t = vpmu__r_u64(r);
		if (t > (i == 0 ? (uint64_t)INT32_MAX : 1))
			r->bad = true;
		s->tun[i] = (long)t;
	}
	s->stats.intr_ignored = vpmu__r_u32(r);
	s->stats.intr_processed = vpmu__r_u32(r);
	s->stats.intr_bufferfull = vpmu__r_u32(r);
	s->stats.syscalls = vpmu__r_u32(r);
	s->stats.syscall_errors = vpmu__r_u32(r);
	s->stats.buffer_requests = vpmu__r_u32(r);
	s->stats.buffer_requests_failed = vpmu__r_u32(r);
	s->stats.log_sweeps = vpmu__r_u32(r);
	s->forks = vpmu__r_u64(r);
	s->next_group = vpmu__r_u32(r);

	if ((s->vcpu = calloc(vm->nvcpus, sizeof(*s->vcpu))) == NULL ||
	    (s->g = calloc(vm->nvcpus, sizeof(*s->g))) == NULL)
		return (ENOMEM);
	vpmu__r_tag(r, T_VCPU);
	for (c = 0; c < vm->nvcpus && !r->bad; c++) {
		struct s_vcpu *v = &s->vcpu[c];

		v->online = vpmu__r_bool(r);
		v->has_cur = vpmu__r_bool(r);
		v->cur_pid = (int32_t)vpmu__r_u32(r);
		v->cur_tid = (int32_t)vpmu__r_u32(r);
		if ((v->disabled = calloc(vm->npmc, 1)) == NULL)
			return (ENOMEM);
		for (i = 0; i < vm->npmc; i++)
			v->disabled[i] = vpmu__r_bool(r);
	}
	vpmu__r_tag(r, T_GPMU);
	for (c = 0; c < vm->nvcpus && !r->bad; c++) {
		struct s_gvcpu *g = &s->g[c];

		g->fixed_ctrl = vpmu__r_u64(r);
		g->global_ctrl = vpmu__r_u64(r);
		g->global_status = vpmu__r_u64(r);
		g->pmi = vpmu__r_bool(r);
		if ((g->fixed_ctrl & ~fixed_valid) != 0 ||
		    (g->global_ctrl & ~vm->gpmu->global_ctrl_valid) != 0 ||
		    (g->global_status & ~vm->gpmu->global_ctrl_valid) != 0 ||
		    (m->version < 2 && (g->global_ctrl | g->global_status) != 0))
			r->bad = true;
		for (i = 0; i < m->gp + m->fixed && i < NCTR; i++) {
			struct s_ctr *k = &g->c[i];

			k->ctl = vpmu__r_u64(r);
			k->last = vpmu__r_u64(r);
			vpmu__r_spec(r, &k->shown);
			k->used = vpmu__r_bool(r);
			vpmu__r_spec(r, &k->spec);
			r_counts(r, &k->n);
			if (i >= m->gp && k->ctl != ((g->fixed_ctrl >> (4 * (i - m->gp))) & 0xF))
				r->bad = true;
		}
	}
	return (r->bad ? EBADMSG : 0);
}

static int
find_proc(const struct snap *s, int32_t pid)
{
	uint32_t i;

	for (i = 0; i < s->nproc; i++)
		if (s->procs[i].cred.pid == pid)
			return ((int)i);
	return (-1);
}

static int
parse_procs(struct rd *r, struct snap *s)
{
	bool nomem = false;
	uint32_t i, n;

	vpmu__r_tag(r, T_PROC);
	n = vpmu__r_count(r, 23);
	if (n != 0 && (s->procs = calloc(n, sizeof(*s->procs))) == NULL)
		return (ENOMEM);
	for (i = 0; i < n && !r->bad; i++) {
		struct s_proc *p = &s->procs[i];

		vpmu__r_cred(r, &p->cred);
		p->ppid = (int32_t)vpmu__r_u32(r);
		p->exiting = vpmu__r_bool(r);
		s->nproc = i + 1;
		p->path = vpmu__r_str(r, &nomem);
		if (p->cred.pid <= 0 || find_proc(s, p->cred.pid) != (int)i)
			r->bad = true;		/* pids are positive and unique */
	}
	if (nomem)
		return (ENOMEM);
	return (r->bad ? EBADMSG : 0);
}

static int
parse_pmc(struct rd *r, const struct vpmu_vm *vm, struct s_pmc *pm)
{
	const struct vpmu_classdesc *c;
	uint32_t i;

	pm->id = vpmu__r_u32(r);
	pm->mode = vpmu__r_u32(r);
	pm->cls = vpmu__r_u32(r);
	pm->cpu = vpmu__r_u32(r);
	pm->row = vpmu__r_u32(r);
	pm->caps = vpmu__r_u32(r);
	pm->flags = vpmu__r_u32(r);
	pm->state = vpmu__r_u32(r);
	vpmu__r_spec(r, &pm->spec);
	r_counts(r, &pm->n);
	pm->reload = vpmu__r_u64(r);
	pm->sample_mark = vpmu__r_u64(r);
	pm->dropped = vpmu__r_bool(r);
	pm->nhw = vpmu__r_count(r, 8);
	if (r->bad)
		return (EBADMSG);
	/* The PMC's shape, as PMCALLOCATE would have made it. */
	c = class_by_cls(vm, pm->cls);
	if (pm->mode > VPMU_MODE_TC || c == NULL || pm->row < c->ri_base ||
	    pm->row >= c->ri_base + c->rows ||
	    (VPMU_MODE_IS_SYSTEM(pm->mode) ? pm->cpu >= vm->nvcpus : pm->cpu != VPMU_CPU_ANY) ||
	    pm->id != VPMU_ID_MAKE(pm->cpu, pm->mode, pm->cls, pm->row) ||
	    (pm->caps & ~c->caps) != 0 || (pm->flags & ~PF_SAVED) != 0 ||
	    (pm->state != VPMU_STATE_ALLOCATED && pm->state != VPMU_STATE_STOPPED &&
	    pm->state != VPMU_STATE_RUNNING) ||
	    pm->spec.event == VPMU_EV_NONE || vpmu_event_name(pm->spec.event) == NULL ||
	    pm->nhw != (VPMU_MODE_IS_SYSTEM(pm->mode) ? 1 : vm->nvcpus))
		return (EBADMSG);
	if ((pm->loaded = calloc(pm->nhw, sizeof(*pm->loaded))) == NULL)
		return (ENOMEM);
	for (i = 0; i < pm->nhw; i++)
		pm->loaded[i] = vpmu__r_u64(r);
	pm->nt = vpmu__r_count(r, 12);
	if (r->bad || (pm->nt != 0 && VPMU_MODE_IS_SYSTEM(pm->mode)))
		return (EBADMSG);
	if (pm->nt != 0 && (pm->t = calloc(pm->nt, sizeof(*pm->t))) == NULL)
		return (ENOMEM);
	for (i = 0; i < pm->nt; i++) {
		pm->t[i].pid = (int32_t)vpmu__r_u32(r);
		pm->t[i].value = vpmu__r_u64(r);
	}
	return (r->bad ? EBADMSG : 0);
}

static int
parse_owners(struct rd *r, const struct vpmu_vm *vm, struct snap *s)
{
	uint32_t i, j, k, n, np;
	int error;

	vpmu__r_tag(r, T_OWNR);
	n = vpmu__r_count(r, 31);
	if (n != 0 && (s->owners = calloc(n, sizeof(*s->owners))) == NULL)
		return (ENOMEM);
	for (i = 0; i < n && !r->bad; i++) {
		struct s_owner *o = &s->owners[i];

		s->nowner = i + 1;
		vpmu__r_cred(r, &o->cred);
		o->has_log = vpmu__r_bool(r);
		o->logdesc = (int32_t)vpmu__r_u32(r);
		o->forked = vpmu__r_u64(r);
		np = vpmu__r_count(r, 64);
		if (r->bad)
			break;
		for (k = 0; k < i; k++)
			if (s->owners[k].cred.pid == o->cred.pid)
				return (EBADMSG);
		/*
		 * The perfmon and pctr devices' owners (pids above any guest
		 * process's) hold PMCs in no snapshot: save refuses them.
		 */
		if (o->cred.pid < 0 || (o->has_log && o->cred.pid == 0) ||
		    (vpmu__snap_owner_unsaved(vm, o->cred.pid) && np != 0))
			return (EBADMSG);
		if (np != 0 && (o->pmcs = calloc(np, sizeof(*o->pmcs))) == NULL)
			return (ENOMEM);
		o->npmc = np;			/* what vpmu__snap_free() frees */
		for (j = 0; j < o->npmc; j++) {
			if ((error = parse_pmc(r, vm, &o->pmcs[j])) != 0) {
				o->npmc = j + 1;	/* what to free */
				return (error);
			}
			for (k = 0; k < j; k++)
				if (o->pmcs[k].id == o->pmcs[j].id)
					return (EBADMSG);
		}
	}
	return (r->bad ? EBADMSG : 0);
}

static int
parse_points(struct rd *r, const struct vpmu_vm *vm, struct snap *s)
{
	unsigned c;

	vpmu__r_tag(r, T_XACT);
	s->has_points = vpmu__r_bool(r);
	if (r->bad || s->has_points != (vm->src->exec_point_get != NULL))
		return (EBADMSG);
	for (c = 0; s->has_points && c < vm->nvcpus; c++) {
		struct vpmu_regs *p = &s->vcpu[c].p;

		s->vcpu[c].known = vpmu__r_bool(r);
		p->rip = vpmu__r_u64(r);
		p->rsp = vpmu__r_u64(r);
		p->rbp = vpmu__r_u64(r);
		p->rcx = vpmu__r_u64(r);
		p->rflags = vpmu__r_u64(r);
		p->cr0 = vpmu__r_u64(r);
		p->cr3 = vpmu__r_u64(r);
		p->cr4 = vpmu__r_u64(r);
		p->efer = vpmu__r_u64(r);
		p->cpl = vpmu__r_u8(r);
		p->long_mode = vpmu__r_bool(r);
		p->idt_base = vpmu__r_u64(r);
		p->idt_limit = vpmu__r_u16(r);
		if (p->cpl > 3)
			r->bad = true;
	}
	return (r->bad ? EBADMSG : 0);
}

/*
 * The decoded blob against the VM it goes into: rows, slots, targets and
 * processes must fit together as the operations would have left them.
 */
static int
check(const struct vpmu_vm *vm, const struct snap *s)
{
	unsigned npmc = vm->npmc, nv = vm->nvcpus;
	int *disp = NULL;
	uint8_t *sys = NULL, *slot = NULL;
	uint32_t i, j, k, ti;
	int error = EBADMSG, pi;

	if ((disp = calloc(npmc, sizeof(*disp))) == NULL ||
	    (sys = calloc((size_t)nv * npmc, 1)) == NULL ||
	    (slot = calloc((size_t)(s->nproc + 1) * npmc, 1)) == NULL) {
		error = ENOMEM;
		goto out;
	}
	/* The fresh VM: its guest counters' rows. */
	memcpy(disp, vm->disp, npmc * sizeof(*disp));
	for (i = 0; i < nv; i++)
		for (j = 0; j < npmc; j++)
			sys[(size_t)i * npmc + j] = vm->vcpu[i].sys[j] != NULL;
	for (i = 0; i < nv; i++) {
		if (s->vcpu[i].has_cur && find_proc(s, s->vcpu[i].cur_pid) < 0)
			goto out;
		if (!s->vcpu[i].has_cur && (s->vcpu[i].cur_pid != 0 || s->vcpu[i].cur_tid != 0))
			goto out;
	}
	/* Process PMCs first: a row is never shared with system ones. */
	for (i = 0; i < s->nowner; i++)
		for (j = 0; j < s->owners[i].npmc; j++) {
			const struct s_pmc *pm = &s->owners[i].pmcs[j];

			if (VPMU_MODE_IS_SYSTEM(pm->mode))
				continue;
			for (k = 0; k < j; k++)
				if (VPMU_MODE_IS_VIRTUAL(s->owners[i].pmcs[k].mode) &&
				    s->owners[i].pmcs[k].row == pm->row)
					goto out;	/* one per row and owner */
			if (disp[pm->row] < 0)
				goto out;
			disp[pm->row]++;
			for (ti = 0; ti < pm->nt; ti++) {
				if ((pi = find_proc(s, pm->t[ti].pid)) < 0 ||
				    slot[(size_t)pi * npmc + pm->row] != 0)
					goto out;
				slot[(size_t)pi * npmc + pm->row] = 1;
			}
		}
	for (i = 0; i < s->nowner; i++) {
		const struct s_owner *o = &s->owners[i];

		for (j = 0; j < o->npmc; j++) {
			const struct s_pmc *pm = &o->pmcs[j];
			size_t at = (size_t)pm->cpu * npmc + pm->row;

			if (pm->state == VPMU_STATE_RUNNING &&
			    (pm->flags & VPMU_PF_NEEDS_LOGFILE) && !o->has_log)
				goto out;
			if (VPMU_MODE_IS_SAMPLING(pm->mode) &&
			    !(pm->flags & VPMU_PF_NEEDS_LOGFILE))
				goto out;	/* every sample goes to a log */
			if (VPMU_MODE_IS_VIRTUAL(pm->mode))
				continue;
			if (disp[pm->row] > 0 || sys[at] || s->vcpu[pm->cpu].disabled[pm->row] ||
			    (pm->state == VPMU_STATE_RUNNING && !s->vcpu[pm->cpu].online))
				goto out;
			sys[at] = 1;
			disp[pm->row]--;
		}
	}
	for (i = 0; i < nv; i++)
		for (j = 0; j < npmc; j++)
			if (s->vcpu[i].disabled[j]) {
				if (disp[j] > 0 || sys[(size_t)i * npmc + j])
					goto out;
				disp[j]--;
			}
	error = 0;
out:
	free(disp);
	free(sys);
	free(slot);
	return (error);
}

/* A VM fresh from vpmu_vm_create(): only its guest counters exist. */
static bool
fresh(const struct vpmu_vm *vm)
{
	const struct vpmu_owner *o;
	const struct vpmu_pmc *pm;
	unsigned b, r;

	for (b = 0; b < vm->proc_hash_size; b++)
		if (vm->proc_hash[b] != NULL)
			return (false);
	for (b = 0; b < vm->nvcpus; b++)
		for (r = 0; r < vm->npmc; r++)
			if (vm->vcpu[b].disabled[r])
				return (false);		/* PMCADMIN was used */
	for (o = vm->owners; o != NULL; o = o->next) {
		if (o->pid != 0 || o->has_log)
			return (false);
		for (pm = o->pmcs; pm != NULL; pm = pm->owner_next)
			if (!vpmu__snap_model_pmc(pm))
				return (false);
	}
	return (true);
}

/*
 * The blob into s, without the VM lock: what it reads of the VM was fixed
 * by vpmu_vm_create() (the configuration, the model, the classes).
 */
int
vpmu__snap_decode(const uint8_t *b, size_t len, const struct vpmu_vm *vm, struct snap *s)
{
	struct rd r = { b, len, 0, false };
	uint64_t plen;
	uint32_t version, crc;
	int error;

	if (len < HDR_LEN || memcmp(b, MAGIC, 8) != 0)
		return (EBADMSG);
	r.off = 8;
	version = vpmu__r_u32(&r);
	if (version != VPMU_SNAPSHOT_VERSION)
		return (EPROTONOSUPPORT);
	if (vpmu__r_u32(&r) != 0)
		return (EBADMSG);
	plen = vpmu__r_u64(&r);
	crc = vpmu__r_u32(&r);
	if (vpmu__r_u32(&r) != 0 || plen != len - HDR_LEN ||
	    vpmu_crc32(0, b + HDR_LEN, len - HDR_LEN) != crc)
		return (EBADMSG);
	if ((error = parse_conf(&r, vm)) != 0 ||
	    (error = parse_vm_vcpus(&r, vm, s)) != 0 ||
	    (error = parse_procs(&r, s)) != 0 ||
	    (error = parse_owners(&r, vm, s)) != 0 ||
	    (error = parse_points(&r, vm, s)) != 0)
		return (error);
	if (r.off != len)
		return (EBADMSG);		/* bytes after the last section */
	return (0);
}

/* The decoded blob against the VM as it is now, VM lock held. */
int
vpmu__snap_check(const struct vpmu_vm *vm, const struct snap *s)
{
	if (!fresh(vm))
		return (EBUSY);
	return (check(vm, s));
}
