/*
 * snapshot_save.c -- vpmu_vm_save(): a VM's virtual PMU as a versioned,
 * little-endian blob (the layout: snapshot_int.h; vpmu_snapshot(3)).
 */
#include <errno.h>
#include <string.h>
#include <sys/stat.h>

#include "snapshot_int.h"
#include <vpmu/pv.h>

/*
 * The files of the descriptors a layer offered for logs, by number
 * (vm->snap), each fstat()ed before the VM lock is taken.
 */
struct offered {
	bool ok;
	uint64_t dev, ino;
};

static void
w_counts(struct wr *w, struct vpmu_vm *vm, struct vpmu_pmc *pm)
{
	uint64_t counted = vpmu__pmc_counted(vm, pm);	/* with what slots hold now */

	vpmu__w_u64(w, pm->base);
	vpmu__w_u64(w, counted);
	vpmu__w_u64(w, pm->t_enabled);
	vpmu__w_u64(w, pm->t_running);
	vpmu__w_u64(w, pm->tot_enabled);
	vpmu__w_u64(w, pm->tot_running);
	/*
	 * The floor of later estimates, as the state means it: never below
	 * base + counted, which every estimate reaches anyway.  Whether the
	 * PMC was last read through an estimate (which raises pm->shown) or
	 * not is the order of reads, not state: a restored VM, whose slots
	 * are armed in another order, saves the same bytes.
	 */
	vpmu__w_u64(w, pm->shown > pm->base + counted ? pm->shown : pm->base + counted);
	vpmu__w_u32(w, pm->group);
}

/* Without the VM lock: what each offered descriptor is (vm->snap held). */
static void
offered_files(struct vpmu_vm *vm, struct offered *off)
{
	struct stat st;
	int32_t i;
	int fd;

	for (i = 0; i < VPMU_PV_MAX_LOGFDS; i++) {
		off[i].ok = vm->snap != NULL && (fd = vm->snap->log_fd(vm, i)) >= 0 &&
		    fstat(fd, &st) == 0;
		off[i].dev = off[i].ok ? (uint64_t)st.st_dev : 0;
		off[i].ino = off[i].ok ? (uint64_t)st.st_ino : 0;
	}
}

/* The descriptor number the VMM offered for this log, or -1. */
static int32_t
log_desc(const struct offered *off, const struct vpmu_owner *o)
{
	uint64_t dev, ino;
	int32_t i;

	if (o->log == NULL || !vpmu__log_file(o->log, &dev, &ino))
		return (-1);
	for (i = 0; i < VPMU_PV_MAX_LOGFDS; i++)
		if (off[i].ok && off[i].dev == dev && off[i].ino == ino)
			return (i);
	return (-1);
}

static bool
owner_saved(const struct vpmu_owner *o)
{
	const struct vpmu_pmc *pm;

	if (o->has_log)
		return (true);
	for (pm = o->pmcs; pm != NULL; pm = pm->owner_next)
		if (!vpmu__snap_model_pmc(pm))
			return (true);
	return (false);
}

/* A target's count: what it has plus what a slot on a vCPU running it holds. */
static uint64_t
target_value(struct vpmu_vm *vm, struct vpmu_target *t)
{
	struct vpmu_pmc *pm = t->pmc;
	uint64_t v = t->value;
	unsigned c;

	for (c = 0; c < vm->nvcpus && c < pm->nhw; c++)
		if (vm->vcpu[c].cur == t->proc && pm->hw[c].counting)
			v += vpmu__hw_peek(vm, pm, c);
	return (v);
}

static void
save_pmc(struct wr *w, struct vpmu_vm *vm, struct vpmu_pmc *pm)
{
	struct vpmu_target *t;
	unsigned i;

	vpmu__w_u32(w, pm->id);
	vpmu__w_u32(w, pm->mode);
	vpmu__w_u32(w, pm->cls);
	vpmu__w_u32(w, pm->cpu);
	vpmu__w_u32(w, pm->row);
	vpmu__w_u32(w, pm->caps);
	vpmu__w_u32(w, pm->flags & PF_SAVED);
	vpmu__w_u32(w, pm->state);
	vpmu__w_spec(w, &pm->spec);
	w_counts(w, vm, pm);
	vpmu__w_u64(w, pm->reload);
	vpmu__w_u64(w, pm->sample_mark);
	vpmu__w_u8(w, pm->dropped);
	vpmu__w_u32(w, pm->nhw);
	for (i = 0; i < pm->nhw; i++)
		vpmu__w_u64(w, pm->hw[i].loaded + vpmu__hw_peek(vm, pm, i));
	vpmu__w_u32(w, pm->ntargets);
	for (t = pm->targets; t != NULL; t = t->pmc_next) {
		vpmu__w_u32(w, (uint32_t)t->proc->cred.pid);
		vpmu__w_u64(w, target_value(vm, t));
	}
}

static void
save_all(struct wr *w, struct vpmu_vm *vm, const struct offered *off)
{
	const struct gpmu *g = vm->gpmu;
	const struct vpmu_model *m = &g->model;
	struct vpmu_owner *o;
	struct vpmu_pmc *pm;
	struct vpmu_proc *p;
	struct vpmu_regs r;
	unsigned i, c, b, n;
	bool points = vm->src->exec_point_get != NULL;

	vpmu__w_u32(w, T_CONF);
	vpmu__w_bytes(w, m->name, sizeof(m->name));
	vpmu__w_u32(w, m->vendor);
	vpmu__w_u32(w, m->version);
	vpmu__w_u32(w, m->gp);
	vpmu__w_u32(w, m->fixed);
	vpmu__w_u32(w, m->width);
	vpmu__w_u32(w, m->fixed_width);
	vpmu__w_u32(w, m->fw_writes);
	vpmu__w_u32(w, m->ebx);
	vpmu__w_u32(w, m->core_ext);
	vpmu__w_u32(w, vm->nvcpus);
	vpmu__w_u32(w, vm->npmc);
	vpmu__w_u32(w, vm->nclass);
	for (i = 0; i < vm->nclass; i++) {
		vpmu__w_u32(w, vm->classes[i].cls);
		vpmu__w_u32(w, vm->classes[i].rows);
		vpmu__w_u32(w, vm->classes[i].width);
	}
	vpmu__w_u32(w, vm->capacity);
	vpmu__w_str(w, vm->src->name);

	vpmu__w_u32(w, T_VMST);
	for (i = 0; i < 3; i++)
		vpmu__w_u64(w, (uint64_t)vm->tun.v[vpmu__snap_rw_tunables[i]]);
	vpmu__w_u32(w, vm->stats.intr_ignored);
	vpmu__w_u32(w, vm->stats.intr_processed);
	vpmu__w_u32(w, vm->stats.intr_bufferfull);
	vpmu__w_u32(w, vm->stats.syscalls);
	vpmu__w_u32(w, vm->stats.syscall_errors);
	vpmu__w_u32(w, vm->stats.buffer_requests);
	vpmu__w_u32(w, vm->stats.buffer_requests_failed);
	vpmu__w_u32(w, vm->stats.log_sweeps);
	vpmu__w_u64(w, vm->forks);
	vpmu__w_u32(w, vm->next_group);

	vpmu__w_u32(w, T_VCPU);
	for (c = 0; c < vm->nvcpus; c++) {
		struct vpmu_vcpu *v = &vm->vcpu[c];

		vpmu__w_u8(w, v->online);
		vpmu__w_u8(w, v->cur != NULL);
		vpmu__w_u32(w, v->cur != NULL ? (uint32_t)v->cur->cred.pid : 0);
		vpmu__w_u32(w, (uint32_t)v->cur_tid);
		for (i = 0; i < vm->npmc; i++)
			vpmu__w_u8(w, v->disabled[i]);
	}

	vpmu__w_u32(w, T_GPMU);
	for (c = 0; c < vm->nvcpus; c++) {
		struct gpmu_vcpu *v = &g->vcpu[c];

		vpmu__w_u64(w, GPMU_LOAD(v->fixed_ctrl));
		vpmu__w_u64(w, GPMU_LOAD(v->global_ctrl));
		vpmu__w_u64(w, GPMU_LOAD(v->global_status));
		vpmu__w_u8(w, __atomic_load_n(&v->pmi_pending, __ATOMIC_ACQUIRE) != 0);
		for (i = 0; i < m->gp + m->fixed; i++) {
			struct gpmu_ctr *k = i < m->gp ? &v->gp[i] : &v->fx[i - m->gp];

			vpmu__w_u64(w, GPMU_LOAD(k->ctl));
			vpmu__w_u64(w, k->last);
			vpmu__w_spec(w, &k->shown);
			vpmu__w_u8(w, GPMU_LOAD(k->used));
			vpmu__w_spec(w, &k->pm->spec);
			w_counts(w, vm, k->pm);
		}
	}

	vpmu__w_u32(w, T_PROC);
	for (n = 0, b = 0; b < vm->proc_hash_size; b++)
		for (p = vm->proc_hash[b]; p != NULL; p = p->hnext)
			n++;
	vpmu__w_u32(w, n);
	for (b = 0; b < vm->proc_hash_size; b++)
		for (p = vm->proc_hash[b]; p != NULL; p = p->hnext) {
			vpmu__w_cred(w, &p->cred);
			vpmu__w_u32(w, (uint32_t)p->ppid);
			vpmu__w_u8(w, p->exiting);
			vpmu__w_str(w, p->path);
		}

	vpmu__w_u32(w, T_OWNR);
	for (n = 0, o = vm->owners; o != NULL; o = o->next)
		n += owner_saved(o);
	vpmu__w_u32(w, n);
	for (o = vm->owners; o != NULL; o = o->next) {
		if (!owner_saved(o))
			continue;
		vpmu__w_cred(w, &o->cred);
		vpmu__w_u8(w, o->has_log);
		vpmu__w_u32(w, (uint32_t)log_desc(off, o));
		vpmu__w_u64(w, o->forked);
		for (n = 0, pm = o->pmcs; pm != NULL; pm = pm->owner_next)
			n += !vpmu__snap_model_pmc(pm);
		vpmu__w_u32(w, n);
		for (pm = o->pmcs; pm != NULL; pm = pm->owner_next)
			if (!vpmu__snap_model_pmc(pm))
				save_pmc(w, vm, pm);
	}

	vpmu__w_u32(w, T_XACT);
	vpmu__w_u8(w, points);
	for (c = 0; points && c < vm->nvcpus; c++) {
		bool known = vm->src->exec_point_get(vm->src_state, c, &r) == 0;

		if (!known)
			memset(&r, 0, sizeof(r));
		vpmu__w_u8(w, known);
		vpmu__w_u64(w, r.rip);
		vpmu__w_u64(w, r.rsp);
		vpmu__w_u64(w, r.rbp);
		vpmu__w_u64(w, r.rcx);
		vpmu__w_u64(w, r.rflags);
		vpmu__w_u64(w, r.cr0);
		vpmu__w_u64(w, r.cr3);
		vpmu__w_u64(w, r.cr4);
		vpmu__w_u64(w, r.efer);
		vpmu__w_u8(w, (uint8_t)r.cpl);
		vpmu__w_u8(w, r.long_mode);
		vpmu__w_u64(w, r.idt_base);
		vpmu__w_u16(w, r.idt_limit);
	}
}

int
vpmu_vm_save(struct vpmu_vm *vm, void *buf, size_t *len)
{
	struct wr w = { NULL, 0, HDR_LEN };
	struct offered off[VPMU_PV_MAX_LOGFDS];
	struct vpmu_owner *o;
	unsigned c;
	size_t need;
	uint8_t *b = buf;
	uint32_t crc;

	if (vm == NULL || len == NULL || vm->gpmu == NULL)
		return (EINVAL);
	/* The samples taken so far go to the logs first (no lock held). */
	vpmu__sample_drain(vm);
	vpmu__snap_hold(vm);		/* the offered descriptors; before the VM lock */
	offered_files(vm, off);
	for (c = 0; c < vm->nvcpus; c++)
		if (vpmu__gpmu_pending(vm, c))
			vpmu__gpmu_ask(vm, c);	/* for the flush below: no lock */
	vpmu__vm_lock(vm);
	/*
	 * The perfmon and pctr devices own PMCs under pids no guest process
	 * has, and keep their own state beside them, which is not saved:
	 * while they hold PMCs, no snapshot.
	 */
	for (o = vm->owners; o != NULL; o = o->next)
		if (vpmu__snap_owner_unsaved(vm, o->pid) && o->pmcs != NULL) {
			vpmu__vm_unlock(vm);
			vpmu__snap_release(vm);
			return (EBUSY);
		}
	/* Controls written since the last entry are programmed first (gpmu.h). */
	for (c = 0; c < vm->nvcpus; c++)
		if (vpmu__gpmu_pending(vm, c))
			(void)vpmu__gpmu_flush(vm, c);
	save_all(&w, vm, off);
	need = w.off;
	if (buf == NULL || *len < need) {
		vpmu__vm_unlock(vm);
		vpmu__snap_release(vm);
		*len = need;
		return (ENOSPC);
	}
	w.b = b;
	w.cap = need;
	w.off = HDR_LEN;
	save_all(&w, vm, off);
	vpmu__vm_unlock(vm);
	vpmu__snap_release(vm);
	VPMU_ASSERT(w.off == need);

	crc = vpmu_crc32(0, b + HDR_LEN, need - HDR_LEN);
	w.off = 0;
	vpmu__w_bytes(&w, MAGIC, 8);
	vpmu__w_u32(&w, VPMU_SNAPSHOT_VERSION);
	vpmu__w_u32(&w, 0);
	vpmu__w_u64(&w, need - HDR_LEN);
	vpmu__w_u32(&w, crc);
	vpmu__w_u32(&w, 0);
	*len = need;
	return (0);
}
