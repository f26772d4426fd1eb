/*
 * task.c -- the guest task a sample belongs to.  A VMM that knows its
 * guest's kernel gives each vCPU a task function (vpmu_vcpu_set_task_fn):
 * at every sample libvpmu asks it which task runs, puts the answer in
 * the CALLCHAIN record's pid and tid, and names each task once in every
 * log that gets its samples (PROC_CREATE for the process, THR_CREATE for
 * the thread, again when a name changes: an exec, a reused pid).  A task
 * the function cannot name is the guest's address space, by CR3.
 *
 * What a log has named is kept per owner: a small open-addressed table
 * of thread ids, each with a hash of its (pid, names).  Names go into the
 * log in order with the samples: the samples still in the rings go first.
 */
#include <errno.h>
#include <stdio.h>
#include <string.h>

#include "internal.h"
#include <vpmu/pmclog.h>

struct vpmu_task_names {
	size_t n, cap;			/* cap a power of two, or 0 */
	struct named {
		uint32_t tid;
		uint32_t hash;		/* 0: an empty slot */
	} *slot;
};

int
vpmu_vcpu_set_task_fn(struct vpmu_vm *vm, unsigned cpu, vpmu_task_fn *fn, void *arg)
{
	if (vm == NULL || cpu >= vm->nvcpus)
		return (EINVAL);
	vpmu__vm_lock(vm);			/* not while a sample calls the old one */
	vm->vcpu[cpu].task_fn = fn;
	vm->vcpu[cpu].task_arg = arg;
	vpmu__vm_unlock(vm);
	return (0);
}

int
vpmu_vm_read(struct vpmu_vm *vm, const struct vpmu_regs *r, uint64_t gva, void *buf,
    size_t len)
{
	struct vpmu_gmem_paging pg;

	if (vm == NULL || r == NULL || (buf == NULL && len != 0))
		return (EINVAL);
	pg = VPMU_GMEM_PAGING(r);
	/* Slots are fixed before the vCPUs run: read without the lock. */
	return ((size_t)vpmu__gmem_read_gva(&vm->mem, &pg, gva, buf, len) == len ? 0 : EFAULT);
}

/* The task at this sample: the VMM's answer, or the address space. */
void
vpmu__task_of(struct vpmu_vm *vm, unsigned cpu, const struct vpmu_regs *r, struct vpmu_task *t)
{
	struct vpmu_vcpu *v = &vm->vcpu[cpu];
	uint64_t cr3 = (r->cr0 & VPMU_CR0_PG) ? r->cr3 & VPMU_GMEM_ADDR_52 : 0;

	memset(t, 0, sizeof(*t));
	t->pid = t->tid = -1;
	if (v->task_fn(v->task_arg, cpu, r, t) == 0 && t->pid >= 0 && t->tid >= 0) {
		t->comm[sizeof(t->comm) - 1] = '\0';
		t->pcomm[sizeof(t->pcomm) - 1] = '\0';
		return;
	}
	t->pid = t->tid = (int32_t)VPMU_PID_ASPACE_OF(cr3);
	snprintf(t->comm, sizeof(t->comm), "cr3:%#llx", (unsigned long long)cr3);
	memcpy(t->pcomm, t->comm, sizeof(t->pcomm));
}

/* FNV-1a over what a task's records say. */
static uint32_t
task_hash(const struct vpmu_task *t)
{
	const unsigned char *parts[] = { (const void *)&t->pid, (const void *)t->comm,
	    (const void *)t->pcomm };
	const size_t lens[] = { sizeof(t->pid), strlen(t->comm), strlen(t->pcomm) };
	uint32_t h = 2166136261u;
	size_t i, j;

	for (i = 0; i < 3; i++)
		for (j = 0; j < lens[i]; j++)
			h = (h ^ parts[i][j]) * 16777619u;
	return (h != 0 ? h : 1);
}

/* The slot of tid in the table (cap a power of two, never full). */
static struct named *
slot_of(const struct vpmu_task_names *tn, uint32_t tid)
{
	size_t i = (tid * 2654435761u) & (tn->cap - 1);

	while (tn->slot[i].hash != 0 && tn->slot[i].tid != tid)
		i = (i + 1) & (tn->cap - 1);
	return (&tn->slot[i]);
}

/* Room for one more thread: 0 or ENOMEM. */
static int
grow(struct vpmu_task_names *tn)
{
	struct vpmu_task_names bigger = *tn;
	size_t i;

	if ((tn->n + 1) * 2 <= tn->cap)
		return (0);
	bigger.cap = tn->cap != 0 ? tn->cap * 2 : 64;
	if ((bigger.slot = calloc(bigger.cap, sizeof(*bigger.slot))) == NULL)
		return (ENOMEM);
	for (i = 0; i < tn->cap; i++)
		if (tn->slot[i].hash != 0)
			*slot_of(&bigger, tn->slot[i].tid) = tn->slot[i];
	free(tn->slot);
	*tn = bigger;
	return (0);
}

/*
 * Owner o's log gets a sample of t next: name t there first if it has not
 * been, or has been by other names.  VM lock held.  Without memory for
 * the table the names are sent again at the next sample.
 */
void
vpmu__task_note(struct vpmu_vm *vm, struct vpmu_owner *o, const struct vpmu_task *t)
{
	struct vpmu_pmclog_ev ev;
	struct named *s;
	uint32_t h = task_hash(t);

	if (o->log == NULL)
		return;
	if (o->names == NULL && (o->names = calloc(1, sizeof(*o->names))) == NULL)
		return;
	if (grow(o->names) == 0) {
		if ((s = slot_of(o->names, (uint32_t)t->tid))->hash == h)
			return;			/* named, by these names */
		if (s->hash == 0)
			o->names->n++;
		s->tid = (uint32_t)t->tid;
		s->hash = h;
	}
	vpmu__sample_emit_all(vm);	/* the samples before, under the old names */
	memset(&ev, 0, sizeof(ev));
	ev.type = VPMU_PMCLOG_PROC_CREATE;
	ev.u.proc_create.pid = (uint32_t)t->pid;
	memcpy(ev.u.proc_create.pcomm, t->pcomm[0] != '\0' ? t->pcomm : t->comm,
	    sizeof(ev.u.proc_create.pcomm));
	vpmu__log_emit(vm, o, &ev);
	memset(&ev, 0, sizeof(ev));
	ev.type = VPMU_PMCLOG_THR_CREATE;
	ev.u.thr_create.tid = (uint32_t)t->tid;
	ev.u.thr_create.pid = (uint32_t)t->pid;
	memcpy(ev.u.thr_create.tdname, t->comm, sizeof(ev.u.thr_create.tdname));
	vpmu__log_emit(vm, o, &ev);
}

void
vpmu__task_names_free(struct vpmu_owner *o)
{
	if (o->names != NULL)
		free(o->names->slot);
	free(o->names);
	o->names = NULL;
}
