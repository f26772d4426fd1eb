/*
 * pv_fastpage.c -- the fast-read pages (vpmu_fastpage(4), <vpmu-guest/fastpage.h>):
 * a guest process registers a page of its RAM (FASTPAGE_SET) and libvpmu
 * keeps its counters there, so the process reads them without an exit.
 *
 * Who writes a page, always with pv->lock held (so writers never overlap):
 *   - the FASTPAGE_SET handler (the whole page) and vpmu__pv_fast_bind()
 *     (PMCGETMSR, the new slot and the rest of the page);
 *   - the vcpu_exit hook, after every exit of the vCPU the page's process
 *     is current on: values as of that exit;
 *   - the refresh thread, for every page whose last update is 1/hz old.
 *     Pages kept fresh by exits (a single-stepped guest exits at every
 *     instruction) are left alone, so the thread adds no sequence-counter
 *     changes a reader would have to retry over.
 * The values come from the core under the VM lock (vpmu__pmc_estimate(),
 * what PMCRW reads) and from pctr (vpmu__pv_pctr_peek(), which takes the
 * VM lock itself); the VM lock is never held while pv->lock is taken.
 *
 * The page belongs to the guest: libvpmu reads nothing back from it (the
 * sequence counters it writes are kept here, not read from the page) and
 * stops writing it the moment it is cleared, moved or its process exits.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <vpmu-guest/fastpage.h>

#include "pvchan.h"

#define FP_MAX_PAGES	4096		/* pages per VM: a runaway guest's bound */
#define FP_HZ_DEFAULT	1000u
#define FP_HZ_MAX	1000000u
#define FP_NOCPU	VPMU_FP_NOCPU

/* What a slot shows: the published identity and values. */
struct fp_val {
	uint32_t flags, pmcid, fn;
	uint64_t value, enabled, running;
};

struct fp_slot {
	uint32_t seq;			/* the slot's sequence counter, as written last */
	bool bound;			/* hwpmc slot: holds PMC id (of the page's pid) */
	vpmu_pmc_id id;
	bool fresh;			/* val below must be written at the next update */
	struct fp_val val;		/* as written last */
};

struct fp_page {
	struct fp_page *next;
	int32_t pid;
	uint64_t gpa;
	volatile struct vpmu_fastpage *pg;	/* its host address (RAM slots are fixed) */
	uint64_t updates, exit_updates;
	uint64_t last_ns;		/* CLOCK_MONOTONIC of the last update */
	struct fp_slot s[VPMU_FP_NSLOTS];
};

struct fp_state {
	struct fp_page *pages;
	unsigned npages;		/* also read without the lock by the exit hook */
	unsigned hz;
	bool thr_on, stop;
	pthread_t thr;
	pthread_cond_t cv;		/* with pv->lock: rate changes, stop */
};

static uint64_t
mono_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ((uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec);
}

static struct fp_page *
page_find(struct fp_state *st, int32_t pid)
{
	struct fp_page *fp;

	for (fp = st->pages; fp != NULL; fp = fp->next)
		if (fp->pid == pid)
			return (fp);
	return (NULL);
}

/* ---- writing the page ------------------------------------------------------------ */

/*
 * Publish nv in slot i.  A change of what the slot holds (flags, pmcid,
 * fn), and any write that a reader may overlap, goes through the sequence
 * lock: seq odd, a release fence so no field store is seen before it, the
 * fields, seq even with release.  in_place (an exit of the vCPU the
 * process runs on, which is stopped meanwhile) with the same identity
 * stores the three values alone, each as one 64-bit store.
 */
static void
slot_write(struct fp_page *fp, unsigned i, const struct fp_val *nv, bool in_place)
{
	volatile struct vpmu_fastpage_slot *d = &fp->pg->slot[i];
	struct fp_slot *sh = &fp->s[i];
	bool locked;

	locked = !in_place || sh->fresh || sh->val.flags != nv->flags ||
	    sh->val.pmcid != nv->pmcid || sh->val.fn != nv->fn;
	if (locked) {
		sh->seq |= 1;
		__atomic_store_n(&d->seq, sh->seq, __ATOMIC_RELAXED);
		__atomic_thread_fence(__ATOMIC_RELEASE);
		__atomic_store_n(&d->flags, nv->flags, __ATOMIC_RELAXED);
		__atomic_store_n(&d->pmcid, nv->pmcid, __ATOMIC_RELAXED);
		__atomic_store_n(&d->fn, nv->fn, __ATOMIC_RELAXED);
		__atomic_store_n(&d->reserved[0], 0, __ATOMIC_RELAXED);
		__atomic_store_n(&d->reserved[1], 0, __ATOMIC_RELAXED);
	}
	__atomic_store_n(&d->value, nv->value, __ATOMIC_RELAXED);
	__atomic_store_n(&d->enabled, nv->enabled, __ATOMIC_RELAXED);
	__atomic_store_n(&d->running, nv->running, __ATOMIC_RELAXED);
	__atomic_store_n(&d->update, fp->updates, __ATOMIC_RELAXED);
	if (locked) {
		sh->seq++;
		__atomic_store_n(&d->seq, sh->seq, __ATOMIC_RELEASE);
	}
	sh->val = *nv;
	sh->fresh = false;
}

/* The header's constant part, and every slot as the host last wrote it. */
static void
page_init(struct fp_page *fp)
{
	volatile struct vpmu_fastpage_hdr *h = &fp->pg->hdr;
	unsigned i;

	/* Readers check magic first: it goes last, after the slots. */
	__atomic_store_n(&h->magic, 0, __ATOMIC_RELAXED);
	h->version = VPMU_FP_VERSION;
	h->hdrsize = VPMU_FP_HDRSIZE;
	h->slotsize = VPMU_FP_SLOTSIZE;
	h->nslots = VPMU_FP_NSLOTS;
	h->pid = fp->pid;
	h->cpu = FP_NOCPU;
	h->reserved[0] = h->reserved[1] = 0;
	for (i = 0; i < VPMU_FP_NSLOTS; i++) {
		fp->s[i].fresh = true;
		slot_write(fp, i, &fp->s[i].val, false);
	}
	__atomic_store_n(&h->magic, VPMU_FP_MAGIC, __ATOMIC_RELEASE);
}

/* Stop the page's readers: a cleared or moved page says it is no page. */
static void
page_retire(struct fp_page *fp)
{
	__atomic_store_n(&fp->pg->hdr.magic, 0, __ATOMIC_RELEASE);
}

/* The vCPU pid is current on, or FP_NOCPU (VM lock held). */
static unsigned
cpu_of_pid(struct vpmu_vm *vm, int32_t pid)
{
	unsigned i;

	for (i = 0; i < vm->nvcpus; i++)
		if (vm->vcpu[i].cur != NULL && vm->vcpu[i].cur->cred.pid == pid)
			return (i);
	return (FP_NOCPU);
}

/* hwpmc slot i's values (VM lock held); drops a PMC that is gone. */
static void
pmc_val(struct vpmu_vm *vm, struct fp_page *fp, unsigned i, unsigned cpu, struct fp_val *v)
{
	struct fp_slot *sh = &fp->s[i];
	struct vpmu_pmc *pm;

	memset(v, 0, sizeof(*v));
	pm = vpmu__pmc_by_id(vm, fp->pid, sh->id);
	/* A released id may come back as a new PMC: that one had no GETMSR. */
	if (pm == NULL || !(pm->flags & VPMU_PF_MSR_ACCESS)) {
		sh->bound = false;
		return;
	}
	v->flags = VPMU_FP_VALID;
	if (pm->state == VPMU_STATE_RUNNING)
		v->flags |= VPMU_FP_RUNNING;
	if (cpu != FP_NOCPU && cpu < pm->nhw && pm->hw[cpu].counting)
		v->flags |= VPMU_FP_COUNTING;
	v->pmcid = sh->id;
	v->value = vpmu__pmc_estimate(vm, pm);
	v->enabled = pm->t_enabled;
	v->running = pm->t_running;
}

/*
 * Update page fp (pv->lock held).  at_exit: after an exit of cpu, on
 * which fp's process is current; else cpu is looked up (FP_NOCPU: the
 * process runs nowhere, and the pctr slots keep what they showed last).
 */
static void
page_update(struct vpmu_pv *pv, struct fp_page *fp, unsigned cpu, bool at_exit)
{
	struct vpmu_vm *vm = pv->vm;
	struct fp_val v[VPMU_FP_NSLOTS];
	bool have[VPMU_FP_NSLOTS];
	struct vpmu_count times;
	volatile struct vpmu_fastpage_hdr *h = &fp->pg->hdr;
	uint64_t value;
	uint32_t fn;
	unsigned i;

	memset(have, 0, sizeof(have));
	vpmu__vm_lock(vm);
	if (!at_exit)
		cpu = cpu_of_pid(vm, fp->pid);
	for (i = VPMU_FP_FIRST_PMC; i < VPMU_FP_NSLOTS; i++) {
		if (!fp->s[i].bound)
			continue;
		pmc_val(vm, fp, i, cpu, &v[i]);
		have[i] = true;
	}
	vpmu__vm_unlock(vm);
	if (cpu != FP_NOCPU) {
		for (i = 0; i < VPMU_FP_PCTR_SLOTS; i++) {
			memset(&v[i], 0, sizeof(v[i]));
			memset(&times, 0, sizeof(times));
			have[i] = true;
			if (vpmu__pv_pctr_peek(pv, cpu, i, &value, &fn, &times) != 0)
				continue;	/* no function set: no counter */
			v[i].flags = VPMU_FP_VALID | VPMU_FP_PCTR |
			    (fn != 0 ? VPMU_FP_RUNNING : 0) |
			    (times.time_running != 0 ? VPMU_FP_COUNTING : 0);
			v[i].pmcid = i;
			v[i].fn = fn;
			v[i].value = value;
			v[i].enabled = times.time_enabled;
			v[i].running = times.time_running;
		}
	}

	fp->updates++;
	if (at_exit)
		fp->exit_updates++;
	fp->last_ns = mono_ns();
	for (i = 0; i < VPMU_FP_NSLOTS; i++)
		if (have[i] || fp->s[i].fresh)
			slot_write(fp, i, have[i] ? &v[i] : &fp->s[i].val, at_exit);
	__atomic_store_n(&h->cpu, cpu, __ATOMIC_RELAXED);
	__atomic_store_n(&h->hz, ((struct fp_state *)pv->fast)->hz, __ATOMIC_RELAXED);
	__atomic_store_n(&h->host_ns, fp->last_ns, __ATOMIC_RELAXED);
	__atomic_store_n(&h->exit_updates, fp->exit_updates, __ATOMIC_RELAXED);
	__atomic_store_n(&h->updates, fp->updates, __ATOMIC_RELEASE);
	pv->st.fastpage_updates++;
}

/* ---- the refresh thread ----------------------------------------------------------- */

/*
 * Every page at most 1/hz after its last update: the thread sleeps until
 * the oldest page is due, so pages refreshed by exits meanwhile are
 * skipped.  It holds pv->lock except while it sleeps.
 */
static void *
fp_thread(void *arg)
{
	struct vpmu_pv *pv = arg;
	struct fp_state *st = pv->fast;
	struct fp_page *fp;
	struct timespec ts;
	uint64_t now, period, next;

	pthread_mutex_lock(&pv->lock);
	while (!st->stop) {
		if (st->hz == 0 || st->pages == NULL) {
			pthread_cond_wait(&st->cv, &pv->lock);
			continue;
		}
		period = 1000000000u / st->hz;
		now = mono_ns();
		next = now + period;
		for (fp = st->pages; fp != NULL; fp = fp->next) {
			if (now - fp->last_ns >= period)
				page_update(pv, fp, FP_NOCPU, false);
			if (fp->last_ns + period < next)
				next = fp->last_ns + period;
		}
		ts.tv_sec = (time_t)(next / 1000000000u);
		ts.tv_nsec = (long)(next % 1000000000u);
		(void)pthread_cond_timedwait(&st->cv, &pv->lock, &ts);
	}
	pthread_mutex_unlock(&pv->lock);
	return (NULL);
}

/* Started with the first page (pv->lock held); a failure only costs freshness. */
static void
thread_start(struct vpmu_pv *pv)
{
	struct fp_state *st = pv->fast;

	if (st->thr_on || st->hz == 0)
		return;
	if (pthread_create(&st->thr, NULL, fp_thread, pv) == 0)
		st->thr_on = true;
	else
		vpmu__log(pv->vm->log_fn, pv->vm->log_arg, VPMU_LOG_WARN,
		    "fast-read pages: no refresh thread; pages change at exits only");
}

int
vpmu_pv_set_fastpage_rate(struct vpmu_vm *vm, unsigned hz)
{
	struct vpmu_pv *pv;
	struct fp_state *st;

	if (vm == NULL || (pv = vm->pv) == NULL || (st = pv->fast) == NULL ||
	    hz > FP_HZ_MAX)
		return (EINVAL);
	pthread_mutex_lock(&pv->lock);
	st->hz = hz;
	if (st->pages != NULL)
		thread_start(pv);
	pthread_cond_signal(&st->cv);
	pthread_mutex_unlock(&pv->lock);
	return (0);
}

/* ---- operations --------------------------------------------------------------------- */

static void
page_free(struct vpmu_pv *pv, struct fp_page *fp)
{
	struct fp_state *st = pv->fast;
	struct fp_page **pp;

	for (pp = &st->pages; *pp != NULL; pp = &(*pp)->next)
		if (*pp == fp) {
			*pp = fp->next;
			break;
		}
	__atomic_store_n(&st->npages, st->npages - 1, __ATOMIC_RELAXED);
	__atomic_fetch_sub(&pv->vm->exit_work, 1, __ATOMIC_RELAXED);
	free(fp);
}

/*
 * FASTPAGE_SET {gpa}: gpa not 4 KiB-aligned EINVAL, not a page of guest
 * RAM EFAULT, another process's page EBUSY, FP_MAX_PAGES pages ENOSPC.
 * A process that has a page moves it (its slots go along).
 */
static int
op_set(struct pv_call *c)
{
	const struct vpmu_pv_fastpage *a = (const void *)c->arg;
	struct fp_state *st = c->pv->fast;
	struct fp_page *fp, *o;
	void *hva;

	if (a->gpa % VPMU_FP_PAGE_SIZE != 0)
		return (EINVAL);
	if ((hva = vpmu__pv_hva(c->pv, a->gpa, VPMU_FP_PAGE_SIZE)) == NULL)
		return (EFAULT);
	for (o = st->pages; o != NULL; o = o->next)
		if (o->gpa == a->gpa && o->pid != c->cred.pid)
			return (EBUSY);
	if ((fp = page_find(st, c->cred.pid)) == NULL) {
		if (st->npages >= FP_MAX_PAGES)
			return (ENOSPC);
		if ((fp = calloc(1, sizeof(*fp))) == NULL)
			return (ENOMEM);
		fp->pid = c->cred.pid;
		fp->next = st->pages;
		st->pages = fp;
		__atomic_store_n(&st->npages, st->npages + 1, __ATOMIC_RELAXED);
		__atomic_fetch_add(&c->pv->vm->exit_work, 1, __ATOMIC_RELAXED);
	} else if (fp->gpa != a->gpa)
		page_retire(fp);
	fp->gpa = a->gpa;
	fp->pg = hva;
	page_init(fp);
	page_update(c->pv, fp, FP_NOCPU, false);
	thread_start(c->pv);
	pthread_cond_signal(&st->cv);
	return (0);
}

/* FASTPAGE_CLEAR: EINVAL if the caller has no page. */
static int
op_clear(struct pv_call *c)
{
	struct fp_state *st = c->pv->fast;
	struct fp_page *fp;

	if ((fp = page_find(st, c->cred.pid)) == NULL)
		return (EINVAL);
	page_retire(fp);
	page_free(c->pv, fp);
	return (0);
}

/*
 * PMCGETMSR's second half: PMC id of pid (checked by the core) gets a
 * slot of pid's page.  EINVAL if pid has no page, ENOSPC if every hwpmc
 * slot is taken; the same PMC again gets its slot again.
 */
int
vpmu__pv_fast_bind(struct vpmu_pv *pv, int32_t pid, vpmu_pmc_id id, uint32_t *slot)
{
	struct fp_state *st = pv->fast;
	struct fp_page *fp;
	unsigned i, free_i = 0;

	if (st == NULL || (fp = page_find(st, pid)) == NULL)
		return (EINVAL);
	for (i = VPMU_FP_FIRST_PMC; i < VPMU_FP_NSLOTS; i++) {
		if (fp->s[i].bound && fp->s[i].id == id) {
			*slot = i;
			return (0);
		}
		if (!fp->s[i].bound && free_i == 0)
			free_i = i;
	}
	if (free_i == 0)
		return (ENOSPC);
	fp->s[free_i].bound = true;
	fp->s[free_i].id = id;
	page_update(pv, fp, FP_NOCPU, false);
	if (!fp->s[free_i].bound)
		return (ESRCH);		/* no such PMC after all: the caller's bug */
	*slot = free_i;
	return (0);
}

static void
fp_proc_exit(struct vpmu_pv *pv, int32_t pid)
{
	struct fp_state *st = pv->fast;
	struct fp_page *fp;

	/* The exiting process's memory may be on its way back: not touched. */
	if (st != NULL && (fp = page_find(st, pid)) != NULL)
		page_free(pv, fp);
}

/*
 * After every exit of cpu (no lock held).  No page at all, the usual case,
 * costs one load; else pv->lock is taken, since pctr_peek and the page
 * list need it.
 */
static void
fp_vcpu_exit(struct vpmu_pv *pv, unsigned cpu)
{
	struct fp_state *st = pv->fast;
	struct vpmu_vm *vm = pv->vm;
	struct fp_page *fp;
	int32_t pid;

	if (st == NULL || __atomic_load_n(&st->npages, __ATOMIC_RELAXED) == 0)
		return;
	pthread_mutex_lock(&pv->lock);
	vpmu__vm_lock(vm);
	pid = vm->vcpu[cpu].cur != NULL ? vm->vcpu[cpu].cur->cred.pid : 0;
	vpmu__vm_unlock(vm);
	if (pid > 0 && (fp = page_find(st, pid)) != NULL)
		page_update(pv, fp, cpu, true);
	pthread_mutex_unlock(&pv->lock);
}

static int
fp_init(struct vpmu_pv *pv)
{
	struct fp_state *st;
	pthread_condattr_t ca;

	if ((st = calloc(1, sizeof(*st))) == NULL)
		return (ENOMEM);
	st->hz = FP_HZ_DEFAULT;
	pthread_condattr_init(&ca);
	pthread_condattr_setclock(&ca, CLOCK_MONOTONIC);
	pthread_cond_init(&st->cv, &ca);
	pthread_condattr_destroy(&ca);
	pv->fast = st;
	return (0);
}

static void
fp_fini(struct vpmu_pv *pv)
{
	struct fp_state *st = pv->fast;

	if (st == NULL)
		return;
	pthread_mutex_lock(&pv->lock);
	st->stop = true;
	pthread_cond_signal(&st->cv);
	pthread_mutex_unlock(&pv->lock);
	if (st->thr_on)
		pthread_join(st->thr, NULL);
	while (st->pages != NULL)
		page_free(pv, st->pages);
	pthread_cond_destroy(&st->cv);
	free(st);
	pv->fast = NULL;
}

static const struct pv_opdesc fp_ops[] = {
	{ VPMU_PV_OP_FASTPAGE_SET, sizeof(struct vpmu_pv_fastpage),
	    sizeof(struct vpmu_pv_fastpage), op_set, "FASTPAGE_SET" },
	{ VPMU_PV_OP_FASTPAGE_CLEAR, 0, 0, op_clear, "FASTPAGE_CLEAR" },
};

const struct pv_personality vpmu__pv_fastpage = {
	.name = "fastpage",
	.ops = fp_ops,
	.nops = VPMU_ARRAY_SIZE(fp_ops),
	.init = fp_init,
	.fini = fp_fini,
	.proc_exit = fp_proc_exit,
	.vcpu_exit = fp_vcpu_exit,
};
