/*
 * snapshot.c -- vpmu_vm_save() and vpmu_vm_restore(): a VM's virtual PMU
 * as a versioned, little-endian blob, and back (vpmu_snapshot(3)).
 *
 * Layout (every integer little-endian, of the width named; strings are a
 * u32 length, 0xFFFFFFFF for none, then the bytes; "cred" is pid i32,
 * tid i32, uid u32, privileged u8, jailed u8; "spec" is event u32,
 * flags u32, cmask u32, raw u64; "counts" is base, counted, t_enabled,
 * t_running, tot_enabled, tot_running, shown u64 and group u32):
 *
 *   header   magic "VPMUSNAP", version u32, flags u32 (0), payload
 *            length u64, CRC-32 (IEEE) of the payload u32, reserved u32 (0)
 *   CONF     model: name 16 bytes, vendor, version, gp, fixed, width,
 *            fixed_width, fw_writes, ebx, core_ext u32; nvcpus, npmc,
 *            nclass u32 and per class cls, rows, width u32; capacity u32;
 *            the source's name (string)
 *   VMST     mincount, unprivileged_syspmcs, unprivileged_proc_debug i64;
 *            the eight driver statistics u32; forks u64; next_group u32
 *   VCPU     per vCPU: online u8, has_cur u8, cur pid i32, cur tid i32,
 *            npmc disabled flags u8
 *   GPMU     per vCPU: fixed_ctrl, global_ctrl, global_status u64,
 *            pmi_pending u8; per counter (gp, then fixed): control u64,
 *            last u64, shown spec, used u8, its PMC's spec, counts
 *   PROC     count u32; per process: cred, ppid i32, exiting u8, path
 *   OWNR     count u32; per owner: cred, has_log u8, log descriptor i32,
 *            forked u64, PMC count u32; per PMC: id, mode, cls, cpu, row,
 *            caps, flags, state u32, spec, counts, reload, sample_mark u64,
 *            dropped u8, nhw u32 and per hw loaded u64, target count u32
 *            and per target pid i32, value u64
 *   XACT     has_points u8 (the source has exec_point_get, as the exact
 *            source has); then per vCPU: known u8, rip, rsp, rbp, rcx,
 *            rflags, cr0, cr3, cr4, efer u64, cpl u8, long_mode u8,
 *            idt_base u64, idt_limit u16
 *
 * Each section starts with its 4-byte tag.  Counts are saved as the guest
 * would read them at the moment of the save (what host slots hold
 * included) and restored as "counted": the guest reads the same value
 * after the restore and counting goes on from there.  The guest counters
 * (model PMCs) are not in OWNR: GPMU carries them and the restore
 * reprograms them through the model, as the guest's MSR writes would.
 *
 * Restore parses and checks the whole blob into a decoded copy before it
 * touches the VM; only then is anything applied.
 */
#include <errno.h>
#include <fcntl.h>
#include <string.h>
#include <sys/stat.h>

#include "internal.h"
#include "gpmu.h"
#include "pvchan.h"
#include <vpmu/snapshot.h>

#define MAGIC		"VPMUSNAP"
#define HDR_LEN		32
#define NO_STRING	0xFFFFFFFFu
#define PATH_MAX_LEN	4096u
#define NCTR		(GPMU_MAX_GP + GPMU_MAX_FIXED)

#define TAG(a, b, c, d)	((uint32_t)(a) | (uint32_t)(b) << 8 | (uint32_t)(c) << 16 | \
			 (uint32_t)(d) << 24)
#define T_CONF		TAG('C', 'O', 'N', 'F')
#define T_VMST		TAG('V', 'M', 'S', 'T')
#define T_VCPU		TAG('V', 'C', 'P', 'U')
#define T_GPMU		TAG('G', 'P', 'M', 'U')
#define T_PROC		TAG('P', 'R', 'O', 'C')
#define T_OWNR		TAG('O', 'W', 'N', 'R')
#define T_XACT		TAG('X', 'A', 'C', 'T')

/* Internal flags a saved PMC may carry. */
#define PF_SAVED	(VPMU_F_ALLOCATE_MASK | VPMU_PF_ATTACHED_TO_OWNER | \
			 VPMU_PF_NEEDS_LOGFILE | VPMU_PF_ATTACH_DONE | VPMU_PF_MSR_ACCESS)

/* ---- CRC-32 (IEEE 802.3, reflected, as zlib's) ------------------------------ */

uint32_t
vpmu__crc32(const uint8_t *p, size_t n)
{
	uint32_t c = 0xFFFFFFFFu;
	unsigned k;

	while (n-- > 0) {
		c ^= *p++;
		for (k = 0; k < 8; k++)
			c = (c >> 1) ^ (0xEDB88320u & (0u - (c & 1u)));
	}
	return (~c);
}

/* ---- writing ---------------------------------------------------------------- */

/* With b NULL (or past cap) it only measures. */
struct wr {
	uint8_t *b;
	size_t cap;
	size_t off;
};

static void
w_u8(struct wr *w, uint8_t v)
{
	if (w->b != NULL && w->off < w->cap)
		w->b[w->off] = v;
	w->off++;
}

static void
w_u16(struct wr *w, uint16_t v)
{
	w_u8(w, (uint8_t)v);
	w_u8(w, (uint8_t)(v >> 8));
}

static void
w_u32(struct wr *w, uint32_t v)
{
	w_u16(w, (uint16_t)v);
	w_u16(w, (uint16_t)(v >> 16));
}

static void
w_u64(struct wr *w, uint64_t v)
{
	w_u32(w, (uint32_t)v);
	w_u32(w, (uint32_t)(v >> 32));
}

static void
w_bytes(struct wr *w, const void *p, size_t n)
{
	const uint8_t *s = p;
	size_t i;

	for (i = 0; i < n; i++)
		w_u8(w, s[i]);
}

static void
w_str(struct wr *w, const char *s)
{
	size_t n;

	if (s == NULL) {
		w_u32(w, NO_STRING);
		return;
	}
	n = strnlen(s, PATH_MAX_LEN);
	w_u32(w, (uint32_t)n);
	w_bytes(w, s, n);
}

static void
w_cred(struct wr *w, const struct vpmu_cred *c)
{
	w_u32(w, (uint32_t)c->pid);
	w_u32(w, (uint32_t)c->tid);
	w_u32(w, c->uid);
	w_u8(w, c->privileged);
	w_u8(w, c->jailed);
}

static void
w_spec(struct wr *w, const struct vpmu_event_spec *s)
{
	w_u32(w, s->event);
	w_u32(w, s->flags);
	w_u32(w, s->cmask);
	w_u64(w, s->raw);
}

/* ---- reading ----------------------------------------------------------------- */

struct rd {
	const uint8_t *b;
	size_t len, off;
	bool bad;
};

static uint8_t
r_u8(struct rd *r)
{
	if (r->bad || r->off >= r->len) {
		r->bad = true;
		return (0);
	}
	return (r->b[r->off++]);
}

static uint16_t
r_u16(struct rd *r)
{
	uint16_t v = r_u8(r);

	return ((uint16_t)(v | (uint16_t)r_u8(r) << 8));
}

static uint32_t
r_u32(struct rd *r)
{
	uint32_t v = r_u16(r);

	return (v | (uint32_t)r_u16(r) << 16);
}

static uint64_t
r_u64(struct rd *r)
{
	uint64_t v = r_u32(r);

	return (v | (uint64_t)r_u32(r) << 32);
}

static bool
r_bool(struct rd *r)
{
	uint8_t v = r_u8(r);

	if (v > 1)
		r->bad = true;
	return (v == 1);
}

/* A count of records of at least min bytes each: never more than the rest holds. */
static uint32_t
r_count(struct rd *r, size_t min)
{
	uint32_t n = r_u32(r);

	if (!r->bad && (size_t)n > (r->len - r->off) / min)
		r->bad = true;
	return (r->bad ? 0 : n);
}

static char *
r_str(struct rd *r, bool *nomem)
{
	uint32_t n = r_u32(r);
	char *s;

	if (r->bad || n == NO_STRING)
		return (NULL);
	if (n > PATH_MAX_LEN || n > r->len - r->off || memchr(r->b + r->off, '\0', n) != NULL) {
		r->bad = true;
		return (NULL);
	}
	if ((s = malloc((size_t)n + 1)) == NULL) {
		*nomem = true;
		r->bad = true;
		return (NULL);
	}
	memcpy(s, r->b + r->off, n);
	s[n] = '\0';
	r->off += n;
	return (s);
}

static void
r_cred(struct rd *r, struct vpmu_cred *c)
{
	memset(c, 0, sizeof(*c));
	c->pid = (int32_t)r_u32(r);
	c->tid = (int32_t)r_u32(r);
	c->uid = r_u32(r);
	c->privileged = r_bool(r);
	c->jailed = r_bool(r);
}

static void
r_spec(struct rd *r, struct vpmu_event_spec *s)
{
	memset(s, 0, sizeof(*s));
	s->event = r_u32(r);
	s->flags = r_u32(r);
	s->cmask = r_u32(r);
	s->raw = r_u64(r);
}

static void
r_tag(struct rd *r, uint32_t tag)
{
	if (r_u32(r) != tag)
		r->bad = true;
}

/* ---- the decoded blob ---------------------------------------------------------- */

struct s_counts {
	uint64_t base, counted, t_enabled, t_running, tot_enabled, tot_running, shown;
	uint32_t group;
};

struct s_ctr {
	uint64_t ctl, last;
	struct vpmu_event_spec shown;
	bool used;
	struct vpmu_event_spec spec;	/* its PMC's event (GETPMCINFO shows it) */
	struct s_counts n;
};

struct s_gvcpu {
	uint64_t fixed_ctrl, global_ctrl, global_status;
	bool pmi;
	struct s_ctr c[NCTR];
};

struct s_vcpu {
	bool online, has_cur;
	int32_t cur_pid, cur_tid;
	uint8_t *disabled;		/* npmc */
	bool known;
	struct vpmu_regs p;
};

struct s_target {
	int32_t pid;
	uint64_t value;
};

struct s_pmc {
	uint32_t id, mode, cls, cpu, row, caps, flags, state;
	struct vpmu_event_spec spec;
	struct s_counts n;
	uint64_t reload, sample_mark;
	bool dropped;
	uint32_t nhw;
	uint64_t *loaded;
	uint32_t nt;
	struct s_target *t;
};

struct s_owner {
	struct vpmu_cred cred;
	bool has_log;
	int32_t logdesc;
	uint64_t forked;
	uint32_t npmc;
	struct s_pmc *pmcs;
};

struct s_proc {
	struct vpmu_cred cred;
	int32_t ppid;
	bool exiting;
	char *path;
};

struct snap {
	long tun[3];
	struct vpmu_driverstats stats;
	uint64_t forks;
	uint32_t next_group;
	struct s_vcpu *vcpu;
	struct s_gvcpu *g;
	uint32_t nproc;
	struct s_proc *procs;
	uint32_t nowner;
	struct s_owner *owners;
	bool has_points;
};

static const enum vpmu_tunable_id rw_tunables[3] = {
	VPMU_T_MINCOUNT, VPMU_T_UNPRIVILEGED_SYSPMCS, VPMU_T_UNPRIVILEGED_PROC_DEBUG
};

static void
snap_free(struct snap *s, unsigned nvcpus)
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

/* ---- save ------------------------------------------------------------------------ */

static bool
is_model_pmc(const struct vpmu_pmc *pm)
{
	return (pm->wrap_mask != 0);
}

static void
w_counts(struct wr *w, struct vpmu_vm *vm, struct vpmu_pmc *pm)
{
	w_u64(w, pm->base);
	w_u64(w, vpmu__pmc_counted(vm, pm));	/* with what slots hold now */
	w_u64(w, pm->t_enabled);
	w_u64(w, pm->t_running);
	w_u64(w, pm->tot_enabled);
	w_u64(w, pm->tot_running);
	w_u64(w, pm->shown);
	w_u32(w, pm->group);
}

/* The descriptor number the VMM offered for this log, or -1. */
static int32_t
log_desc(const struct vpmu_pv *pv, const struct vpmu_owner *o)
{
	struct stat a, b;
	int i;

	if (o->log == NULL || fstat(vpmu__log_fd(o->log), &a) != 0)
		return (-1);
	for (i = 0; i < VPMU_PV_MAX_LOGFDS; i++)
		if (pv != NULL && pv->logfd[i] >= 0 && fstat(pv->logfd[i], &b) == 0 &&
		    a.st_dev == b.st_dev && a.st_ino == b.st_ino)
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
		if (!is_model_pmc(pm))
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

	w_u32(w, pm->id);
	w_u32(w, pm->mode);
	w_u32(w, pm->cls);
	w_u32(w, pm->cpu);
	w_u32(w, pm->row);
	w_u32(w, pm->caps);
	w_u32(w, pm->flags & PF_SAVED);
	w_u32(w, pm->state);
	w_spec(w, &pm->spec);
	w_counts(w, vm, pm);
	w_u64(w, pm->reload);
	w_u64(w, pm->sample_mark);
	w_u8(w, pm->dropped);
	w_u32(w, pm->nhw);
	for (i = 0; i < pm->nhw; i++)
		w_u64(w, pm->hw[i].loaded + vpmu__hw_peek(vm, pm, i));
	w_u32(w, pm->ntargets);
	for (t = pm->targets; t != NULL; t = t->pmc_next) {
		w_u32(w, (uint32_t)t->proc->cred.pid);
		w_u64(w, target_value(vm, t));
	}
}

static void
save_all(struct wr *w, struct vpmu_vm *vm)
{
	const struct gpmu *g = vm->gpmu;
	const struct vpmu_model *m = &g->model;
	struct vpmu_owner *o;
	struct vpmu_pmc *pm;
	struct vpmu_proc *p;
	struct vpmu_regs r;
	unsigned i, c, b, n;
	bool points = vm->src->exec_point_get != NULL;

	w_u32(w, T_CONF);
	w_bytes(w, m->name, sizeof(m->name));
	w_u32(w, m->vendor);
	w_u32(w, m->version);
	w_u32(w, m->gp);
	w_u32(w, m->fixed);
	w_u32(w, m->width);
	w_u32(w, m->fixed_width);
	w_u32(w, m->fw_writes);
	w_u32(w, m->ebx);
	w_u32(w, m->core_ext);
	w_u32(w, vm->nvcpus);
	w_u32(w, vm->npmc);
	w_u32(w, vm->nclass);
	for (i = 0; i < vm->nclass; i++) {
		w_u32(w, vm->classes[i].cls);
		w_u32(w, vm->classes[i].rows);
		w_u32(w, vm->classes[i].width);
	}
	w_u32(w, vm->capacity);
	w_str(w, vm->src->name);

	w_u32(w, T_VMST);
	for (i = 0; i < 3; i++)
		w_u64(w, (uint64_t)vm->tun.v[rw_tunables[i]]);
	w_u32(w, vm->stats.intr_ignored);
	w_u32(w, vm->stats.intr_processed);
	w_u32(w, vm->stats.intr_bufferfull);
	w_u32(w, vm->stats.syscalls);
	w_u32(w, vm->stats.syscall_errors);
	w_u32(w, vm->stats.buffer_requests);
	w_u32(w, vm->stats.buffer_requests_failed);
	w_u32(w, vm->stats.log_sweeps);
	w_u64(w, vm->forks);
	w_u32(w, vm->next_group);

	w_u32(w, T_VCPU);
	for (c = 0; c < vm->nvcpus; c++) {
		struct vpmu_vcpu *v = &vm->vcpu[c];

		w_u8(w, v->online);
		w_u8(w, v->cur != NULL);
		w_u32(w, v->cur != NULL ? (uint32_t)v->cur->cred.pid : 0);
		w_u32(w, (uint32_t)v->cur_tid);
		for (i = 0; i < vm->npmc; i++)
			w_u8(w, v->disabled[i]);
	}

	w_u32(w, T_GPMU);
	for (c = 0; c < vm->nvcpus; c++) {
		struct gpmu_vcpu *v = &g->vcpu[c];

		w_u64(w, GPMU_LOAD(v->fixed_ctrl));
		w_u64(w, GPMU_LOAD(v->global_ctrl));
		w_u64(w, GPMU_LOAD(v->global_status));
		w_u8(w, __atomic_load_n(&v->pmi_pending, __ATOMIC_ACQUIRE) != 0);
		for (i = 0; i < m->gp + m->fixed; i++) {
			struct gpmu_ctr *k = i < m->gp ? &v->gp[i] : &v->fx[i - m->gp];

			w_u64(w, GPMU_LOAD(k->ctl));
			w_u64(w, k->last);
			w_spec(w, &k->shown);
			w_u8(w, GPMU_LOAD(k->used));
			w_spec(w, &k->pm->spec);
			w_counts(w, vm, k->pm);
		}
	}

	w_u32(w, T_PROC);
	for (n = 0, b = 0; b < vm->proc_hash_size; b++)
		for (p = vm->proc_hash[b]; p != NULL; p = p->hnext)
			n++;
	w_u32(w, n);
	for (b = 0; b < vm->proc_hash_size; b++)
		for (p = vm->proc_hash[b]; p != NULL; p = p->hnext) {
			w_cred(w, &p->cred);
			w_u32(w, (uint32_t)p->ppid);
			w_u8(w, p->exiting);
			w_str(w, p->path);
		}

	w_u32(w, T_OWNR);
	for (n = 0, o = vm->owners; o != NULL; o = o->next)
		n += owner_saved(o);
	w_u32(w, n);
	for (o = vm->owners; o != NULL; o = o->next) {
		if (!owner_saved(o))
			continue;
		w_cred(w, &o->cred);
		w_u8(w, o->has_log);
		w_u32(w, (uint32_t)log_desc(vm->pv, o));
		w_u64(w, o->forked);
		for (n = 0, pm = o->pmcs; pm != NULL; pm = pm->owner_next)
			n += !is_model_pmc(pm);
		w_u32(w, n);
		for (pm = o->pmcs; pm != NULL; pm = pm->owner_next)
			if (!is_model_pmc(pm))
				save_pmc(w, vm, pm);
	}

	w_u32(w, T_XACT);
	w_u8(w, points);
	for (c = 0; points && c < vm->nvcpus; c++) {
		bool known = vm->src->exec_point_get(vm->src_state, c, &r) == 0;

		if (!known)
			memset(&r, 0, sizeof(r));
		w_u8(w, known);
		w_u64(w, r.rip);
		w_u64(w, r.rsp);
		w_u64(w, r.rbp);
		w_u64(w, r.rcx);
		w_u64(w, r.rflags);
		w_u64(w, r.cr0);
		w_u64(w, r.cr3);
		w_u64(w, r.cr4);
		w_u64(w, r.efer);
		w_u8(w, (uint8_t)r.cpl);
		w_u8(w, r.long_mode);
		w_u64(w, r.idt_base);
		w_u16(w, r.idt_limit);
	}
}

int
vpmu_vm_save(struct vpmu_vm *vm, void *buf, size_t *len)
{
	struct wr w = { NULL, 0, HDR_LEN };
	struct vpmu_owner *o;
	unsigned c;
	size_t need;
	uint8_t *b = buf;
	uint32_t crc;

	if (vm == NULL || len == NULL || vm->gpmu == NULL)
		return (EINVAL);
	/* The samples taken so far go to the logs first (no lock held). */
	vpmu__sample_drain(vm);
	if (vm->pv != NULL)
		pthread_mutex_lock(&vm->pv->lock);	/* its logfd[]; before the VM lock */
	vpmu__vm_lock(vm);
	/*
	 * The perfmon and pctr devices own PMCs under pids no guest process
	 * has, and keep their own state beside them, which is not saved:
	 * while they hold PMCs, no snapshot.
	 */
	for (o = vm->owners; o != NULL; o = o->next)
		if (o->pid > (int32_t)VPMU_PV_PID_MAX && o->pmcs != NULL) {
			vpmu__vm_unlock(vm);
			if (vm->pv != NULL)
				pthread_mutex_unlock(&vm->pv->lock);
			return (EBUSY);
		}
	/* Controls written since the last entry are programmed first (gpmu.h). */
	for (c = 0; c < vm->nvcpus; c++)
		if (vpmu__gpmu_pending(vm, c))
			(void)vpmu__gpmu_flush(vm, c);
	save_all(&w, vm);
	need = w.off;
	if (buf == NULL || *len < need) {
		vpmu__vm_unlock(vm);
		if (vm->pv != NULL)
			pthread_mutex_unlock(&vm->pv->lock);
		*len = need;
		return (ENOSPC);
	}
	w.b = b;
	w.cap = need;
	w.off = HDR_LEN;
	save_all(&w, vm);
	vpmu__vm_unlock(vm);
	if (vm->pv != NULL)
		pthread_mutex_unlock(&vm->pv->lock);
	VPMU_ASSERT(w.off == need);

	crc = vpmu__crc32(b + HDR_LEN, need - HDR_LEN);
	w.off = 0;
	w_bytes(&w, MAGIC, 8);
	w_u32(&w, VPMU_SNAPSHOT_VERSION);
	w_u32(&w, 0);
	w_u64(&w, need - HDR_LEN);
	w_u32(&w, crc);
	w_u32(&w, 0);
	*len = need;
	return (0);
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

	r_tag(r, T_CONF);
	memset(&sm, 0, sizeof(sm));
	for (i = 0; i < sizeof(sm.name); i++)
		sm.name[i] = (char)r_u8(r);
	sm.vendor = r_u32(r);
	sm.version = r_u32(r);
	sm.gp = r_u32(r);
	sm.fixed = r_u32(r);
	sm.width = r_u32(r);
	sm.fixed_width = r_u32(r);
	sm.fw_writes = r_u32(r);
	sm.ebx = r_u32(r);
	sm.core_ext = r_u32(r);
	same = memcmp(sm.name, m->name, sizeof(sm.name)) == 0 && sm.vendor == m->vendor &&
	    sm.version == m->version && sm.gp == m->gp && sm.fixed == m->fixed &&
	    sm.width == m->width && sm.fixed_width == m->fixed_width &&
	    sm.fw_writes == m->fw_writes && sm.ebx == m->ebx && sm.core_ext == m->core_ext;
	same = same && r_u32(r) == vm->nvcpus;
	same = same && r_u32(r) == vm->npmc;
	nclass = r_u32(r);
	same = same && nclass == vm->nclass;
	for (i = 0; same && !r->bad && i < nclass; i++) {
		same = same && r_u32(r) == vm->classes[i].cls;
		same = same && r_u32(r) == vm->classes[i].rows;
		same = same && r_u32(r) == vm->classes[i].width;
	}
	same = same && r_u32(r) == vm->capacity;
	src = same ? r_str(r, &nomem) : NULL;
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
	n->base = r_u64(r);
	n->counted = r_u64(r);
	n->t_enabled = r_u64(r);
	n->t_running = r_u64(r);
	n->tot_enabled = r_u64(r);
	n->tot_running = r_u64(r);
	n->shown = r_u64(r);
	n->group = r_u32(r);
}

static int
parse_vm_vcpus(struct rd *r, const struct vpmu_vm *vm, struct snap *s)
{
	const struct vpmu_model *m = &vm->gpmu->model;
	uint64_t fixed_valid = m->fixed >= 16 ? ~0ull : (1ull << (4 * m->fixed)) - 1;
	unsigned c, i;
	uint64_t t;

	r_tag(r, T_VMST);
	for (i = 0; i < 3; i++) {
		t = r_u64(r);
		if (t > (i == 0 ? (uint64_t)INT32_MAX : 1))
			r->bad = true;
		s->tun[i] = (long)t;
	}
	s->stats.intr_ignored = r_u32(r);
	s->stats.intr_processed = r_u32(r);
	s->stats.intr_bufferfull = r_u32(r);
	s->stats.syscalls = r_u32(r);
	s->stats.syscall_errors = r_u32(r);
	s->stats.buffer_requests = r_u32(r);
	s->stats.buffer_requests_failed = r_u32(r);
	s->stats.log_sweeps = r_u32(r);
	s->forks = r_u64(r);
	s->next_group = r_u32(r);

	if ((s->vcpu = calloc(vm->nvcpus, sizeof(*s->vcpu))) == NULL ||
	    (s->g = calloc(vm->nvcpus, sizeof(*s->g))) == NULL)
		return (ENOMEM);
	r_tag(r, T_VCPU);
	for (c = 0; c < vm->nvcpus && !r->bad; c++) {
		struct s_vcpu *v = &s->vcpu[c];

		v->online = r_bool(r);
		v->has_cur = r_bool(r);
		v->cur_pid = (int32_t)r_u32(r);
		v->cur_tid = (int32_t)r_u32(r);
		if ((v->disabled = calloc(vm->npmc, 1)) == NULL)
			return (ENOMEM);
		for (i = 0; i < vm->npmc; i++)
			v->disabled[i] = r_bool(r);
	}
	r_tag(r, T_GPMU);
	for (c = 0; c < vm->nvcpus && !r->bad; c++) {
		struct s_gvcpu *g = &s->g[c];

		g->fixed_ctrl = r_u64(r);
		g->global_ctrl = r_u64(r);
		g->global_status = r_u64(r);
		g->pmi = r_bool(r);
		if ((g->fixed_ctrl & ~fixed_valid) != 0 ||
		    (g->global_ctrl & ~vm->gpmu->global_ctrl_valid) != 0 ||
		    (g->global_status & ~vm->gpmu->global_ctrl_valid) != 0 ||
		    (m->version < 2 && (g->global_ctrl | g->global_status) != 0))
			r->bad = true;
		for (i = 0; i < m->gp + m->fixed && i < NCTR; i++) {
			struct s_ctr *k = &g->c[i];

			k->ctl = r_u64(r);
			k->last = r_u64(r);
			r_spec(r, &k->shown);
			k->used = r_bool(r);
			r_spec(r, &k->spec);
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

	r_tag(r, T_PROC);
	n = r_count(r, 23);
	if (n != 0 && (s->procs = calloc(n, sizeof(*s->procs))) == NULL)
		return (ENOMEM);
	for (i = 0; i < n && !r->bad; i++) {
		struct s_proc *p = &s->procs[i];

		r_cred(r, &p->cred);
		p->ppid = (int32_t)r_u32(r);
		p->exiting = r_bool(r);
		s->nproc = i + 1;
		p->path = r_str(r, &nomem);
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

	pm->id = r_u32(r);
	pm->mode = r_u32(r);
	pm->cls = r_u32(r);
	pm->cpu = r_u32(r);
	pm->row = r_u32(r);
	pm->caps = r_u32(r);
	pm->flags = r_u32(r);
	pm->state = r_u32(r);
	r_spec(r, &pm->spec);
	r_counts(r, &pm->n);
	pm->reload = r_u64(r);
	pm->sample_mark = r_u64(r);
	pm->dropped = r_bool(r);
	pm->nhw = r_count(r, 8);
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
		pm->loaded[i] = r_u64(r);
	pm->nt = r_count(r, 12);
	if (r->bad || (pm->nt != 0 && VPMU_MODE_IS_SYSTEM(pm->mode)))
		return (EBADMSG);
	if (pm->nt != 0 && (pm->t = calloc(pm->nt, sizeof(*pm->t))) == NULL)
		return (ENOMEM);
	for (i = 0; i < pm->nt; i++) {
		pm->t[i].pid = (int32_t)r_u32(r);
		pm->t[i].value = r_u64(r);
	}
	return (r->bad ? EBADMSG : 0);
}

static int
parse_owners(struct rd *r, const struct vpmu_vm *vm, struct snap *s)
{
	uint32_t i, j, k, n, np;
	int error;

	r_tag(r, T_OWNR);
	n = r_count(r, 31);
	if (n != 0 && (s->owners = calloc(n, sizeof(*s->owners))) == NULL)
		return (ENOMEM);
	for (i = 0; i < n && !r->bad; i++) {
		struct s_owner *o = &s->owners[i];

		s->nowner = i + 1;
		r_cred(r, &o->cred);
		o->has_log = r_bool(r);
		o->logdesc = (int32_t)r_u32(r);
		o->forked = r_u64(r);
		np = r_count(r, 64);
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
		    (o->cred.pid > (int32_t)VPMU_PV_PID_MAX && np != 0))
			return (EBADMSG);
		if (np != 0 && (o->pmcs = calloc(np, sizeof(*o->pmcs))) == NULL)
			return (ENOMEM);
		o->npmc = np;			/* what snap_free() frees */
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

	r_tag(r, T_XACT);
	s->has_points = r_bool(r);
	if (r->bad || s->has_points != (vm->src->exec_point_get != NULL))
		return (EBADMSG);
	for (c = 0; s->has_points && c < vm->nvcpus; c++) {
		struct vpmu_regs *p = &s->vcpu[c].p;

		s->vcpu[c].known = r_bool(r);
		p->rip = r_u64(r);
		p->rsp = r_u64(r);
		p->rbp = r_u64(r);
		p->rcx = r_u64(r);
		p->rflags = r_u64(r);
		p->cr0 = r_u64(r);
		p->cr3 = r_u64(r);
		p->cr4 = r_u64(r);
		p->efer = r_u64(r);
		p->cpl = r_u8(r);
		p->long_mode = r_bool(r);
		p->idt_base = r_u64(r);
		p->idt_limit = r_u16(r);
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

/* Every logged owner's descriptor was offered again, open for writing. */
static int
check_logs(const struct vpmu_vm *vm, const struct snap *s)
{
	uint32_t i;
	int fd, fl;

	for (i = 0; i < s->nowner; i++) {
		if (!s->owners[i].has_log)
			continue;
		if (s->owners[i].logdesc < 0 || s->owners[i].logdesc >= VPMU_PV_MAX_LOGFDS ||
		    vm->pv == NULL || (fd = vm->pv->logfd[s->owners[i].logdesc]) < 0 ||
		    (fl = fcntl(fd, F_GETFL)) < 0 ||
		    ((fl & O_ACCMODE) != O_WRONLY && (fl & O_ACCMODE) != O_RDWR))
			return (EBADF);
	}
	return (0);
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
			if (!is_model_pmc(pm))
				return (false);
	}
	return (true);
}

static int
parse(const uint8_t *b, size_t len, const struct vpmu_vm *vm, struct snap *s)
{
	struct rd r = { b, len, 0, false };
	uint64_t plen;
	uint32_t version, crc;
	int error;

	if (len < HDR_LEN || memcmp(b, MAGIC, 8) != 0)
		return (EBADMSG);
	r.off = 8;
	version = r_u32(&r);
	if (version != VPMU_SNAPSHOT_VERSION)
		return (EPROTONOSUPPORT);
	if (r_u32(&r) != 0)
		return (EBADMSG);
	plen = r_u64(&r);
	crc = r_u32(&r);
	if (r_u32(&r) != 0 || plen != len - HDR_LEN || vpmu__crc32(b + HDR_LEN, len - HDR_LEN) != crc)
		return (EBADMSG);
	if ((error = parse_conf(&r, vm)) != 0 ||
	    (error = parse_vm_vcpus(&r, vm, s)) != 0 ||
	    (error = parse_procs(&r, s)) != 0 ||
	    (error = parse_owners(&r, vm, s)) != 0 ||
	    (error = parse_points(&r, vm, s)) != 0)
		return (error);
	if (r.off != len)
		return (EBADMSG);		/* bytes after the last section */
	if (!fresh(vm))
		return (EBUSY);
	if ((error = check(vm, s)) != 0)
		return (error);
	return (check_logs(vm, s));
}

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
	return (sampling ? vpmu__sweeper_start(vm) : 0);
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
apply(struct vpmu_vm *vm, const struct snap *s)
{
	struct vpmu_op_configurelog cl = { 0, -1 };
	unsigned c, i;
	int error;

	for (i = 0; i < 3; i++)
		vm->tun.v[rw_tunables[i]] = s->tun[i];
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
		cl.logfd = vm->pv->logfd[s->owners[i].logdesc];
		if ((error = vpmu__log_configure(vm, &s->owners[i].cred, &cl)) != 0)
			return (error);
	}
	vm->stats = s->stats;			/* after the logs opened (buffer_requests) */
	for (c = 0; s->has_points && c < vm->nvcpus; c++)
		(void)vm->src->exec_point_set(vm->src_state, c,
		    s->vcpu[c].known ? &s->vcpu[c].p : NULL);
	return (0);
}

int
vpmu_vm_restore(struct vpmu_vm *vm, const void *buf, size_t len)
{
	struct snap s;
	int error;

	if (vm == NULL || buf == NULL || vm->gpmu == NULL)
		return (EINVAL);
	memset(&s, 0, sizeof(s));
	if (vm->pv != NULL)
		pthread_mutex_lock(&vm->pv->lock);
	vpmu__vm_lock(vm);
	if ((error = parse(buf, len, vm, &s)) == 0)
		error = apply(vm, &s);
	vpmu__vm_unlock(vm);
	if (vm->pv != NULL)
		pthread_mutex_unlock(&vm->pv->lock);
	snap_free(&s, vm->nvcpus);
	return (error);
}
