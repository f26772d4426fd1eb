/*
 * sample.c -- sampling PMCs: when one has counted its reload count since
 * its last sample, the vCPU's state goes into the vCPU's sample ring, and
 * ring entries become CALLCHAIN records in the owner's log.
 *
 * The ring (nsamples entries of callchaindepth addresses) is a lock-free
 * single-producer single-consumer queue, and nothing but its indices
 * orders its two ends: indices only grow, the producer publishes an entry
 * with a release store of prod, the consumer frees it with a release store
 * of cons.
 *
 * Who empties a ring (issue 14).  A sweeper thread passes every
 * millisecond, and at once when a producer fills its ring to a quarter
 * (an eventfd), so that at moderate rates the records are made off the
 * vCPU's thread.  But a sweeper is a thread like any other: on a loaded
 * host it may not run for longer than a ring lasts, and it needs the VM
 * lock, which a single-stepping vCPU thread holds for most of each exit.
 * So the producer does not depend on it: when its ring reaches half full
 * (the high-water mark, hiwat()), the vCPU's thread empties its own ring
 * into the logs there and then, as hwpmc processes a CPU's samples on
 * that CPU.  It already holds the VM lock, which emitting needs.  A ring
 * is therefore never more than half full before a sample is put in, and a
 * sample is never dropped because its ring is full: whatever the load,
 * the guest cannot outrun its own vCPU's thread, which makes the records
 * before the guest runs on.  (The drop below, intr_bufferfull and
 * DROPNOTIFY, stays as hwpmc's accounting, and cannot happen; a PMC's
 * pending drop still comes back from a snapshot an earlier version saved,
 * and its DROPNOTIFY is written at the next drain.)
 *
 * Why SPSC rather than a ring with a lock of its own: the producer is the
 * trap path (vpmu__sample_take() after a KVM exit), and there is exactly
 * one producer per ring by construction (only the vCPU's thread takes its
 * samples).  A ring lock would add a second lock on that path for every
 * sample; the SPSC ring costs two atomic accesses, and the producer takes
 * the consumers' mutex only at the high-water mark.
 *
 *   producer: the vCPU's thread.  It holds the VM lock, but for the PMC
 *     state it reads (which PMCs are due, their owner, the process on the
 *     vCPU), not for the ring.
 *   consumer: one at a time, serialized by vm->drain_mtx, not by the VM
 *     lock: the sweeper, FLUSHLOG and the closes of a log
 *     (vpmu__sample_drain()), or the producer itself at the high-water
 *     mark.  The consumer reads the entry without any lock other than
 *     drain_mtx and holds the VM lock to emit the record (the PMC's owner
 *     and log are VM state): the sweeper and the drains take it for one
 *     record at a time, so vCPUs get the lock between records; the
 *     producer already holds it.  cons advances after the emit, so a
 *     drain that holds drain_mtx has moved everything the sweeper had
 *     started to move.
 *
 * Lock order: drain_mtx, then the VM lock; a caller of
 * vpmu__sample_drain() must not hold the VM lock.  The producer takes
 * them the other way round, and deadlock is avoided by a hand-over: with
 * the VM lock held it raises vm->drain_want and then waits for drain_mtx;
 * a consumer holding drain_mtx takes the VM lock only while drain_want is
 * down (consumer_lock()), and, finding it up, lets go of drain_mtx
 * (leaving the entry it read for the producer to emit) and takes it again
 * once the producer is through (yield_to_producer()).  drain_want is only
 * ever up while its producer holds the VM lock, so a consumer that sees it
 * down and takes the lock has not raced one; and a consumer never holds
 * the VM lock while it holds drain_mtx and the producer waits, so the
 * producer's wait is for a thread that needs no lock to let go: it is as
 * long as that thread takes to be scheduled, never a deadlock.
 */
#include <errno.h>
#include <poll.h>
#include <string.h>
#include <unistd.h>
#include <sys/eventfd.h>

#include "internal.h"
#include <vpmu/pmclog.h>

struct ring_entry {
	int32_t owner;
	vpmu_pmc_id pmcid;
	uint32_t pid, tid;
	uint32_t cpuflags;		/* cpu << 16 | user mode */
	uint32_t npc;
	uint64_t tsc;
	uint64_t pc[];			/* callchaindepth */
};

struct vpmu_ring {
	uint64_t prod;			/* written by the vCPU thread */
	uint64_t cons;			/* written by the sweeper */
	unsigned n;
	unsigned depth;
	size_t esize;
	uint8_t *e;
};

static struct ring_entry *
entry(struct vpmu_ring *r, uint64_t i)
{
	return ((struct ring_entry *)(void *)(r->e + (size_t)(i % r->n) * r->esize));
}

int
vpmu__rings_init(struct vpmu_vm *vm)
{
	unsigned i;
	struct vpmu_ring *r;

	for (i = 0; i < vm->nvcpus; i++) {
		if ((r = calloc(1, sizeof(*r))) == NULL)
			return (ENOMEM);
		vm->vcpu[i].ring = r;
		r->n = (unsigned)vm->tun.v[VPMU_T_NSAMPLES];
		r->depth = (unsigned)vm->tun.v[VPMU_T_CALLCHAINDEPTH];
		r->esize = (sizeof(struct ring_entry) + r->depth * sizeof(uint64_t) + 7) & ~7ul;
		if ((r->e = calloc(r->n, r->esize)) == NULL)
			return (ENOMEM);
	}
	return (0);
}

void
vpmu__rings_fini(struct vpmu_vm *vm)
{
	unsigned i;

	for (i = 0; vm->vcpu != NULL && i < vm->nvcpus; i++)
		if (vm->vcpu[i].ring != NULL) {
			free(vm->vcpu[i].ring->e);
			free(vm->vcpu[i].ring);
		}
}

/* ---- the producer: the vCPU's thread ------------------------------------------ */

/* A sampling PMC on cpu has counted its reload count since its last sample. */
bool
vpmu__sample_due(struct vpmu_vm *vm, unsigned cpu)
{
	struct vpmu_vcpu *v = &vm->vcpu[cpu];
	struct vpmu_pmc *pm;
	unsigned i;

	for (i = 0; i < v->nact; i++) {
		pm = v->act[i];
		if (VPMU_MODE_IS_SAMPLING(pm->mode) &&
		    vpmu__pmc_counted(vm, pm) - pm->sample_mark >= pm->reload)
			return (true);
	}
	return (false);
}

/* The high-water mark: a ring this full is emptied by its producer. */
static uint64_t
hiwat(const struct vpmu_ring *r)
{
	return ((r->n + 1) / 2);
}

static void	emit_rings(struct vpmu_vm *vm, struct vpmu_ring *only);

/*
 * Take a sample for every due sampling PMC on cpu: pc[0..npc) is the call
 * chain the caller walked (pc[0] the guest RIP), user says CPL > 0, task
 * is the guest task the VMM named (NULL: the process scheduled through
 * the process hooks, if any).  With the VM lock held, on the vCPU's thread.
 */
void
vpmu__sample_take(struct vpmu_vm *vm, unsigned cpu, const uint64_t *pc, unsigned npc,
    bool user, const struct vpmu_task *task)
{
	struct vpmu_vcpu *v = &vm->vcpu[cpu];
	struct vpmu_ring *r = v->ring;
	struct ring_entry *e;
	struct vpmu_pmc *pm;
	uint64_t n, cons, fill;
	unsigned i;

	for (i = 0; i < v->nact; i++) {
		pm = v->act[i];
		if (!VPMU_MODE_IS_SAMPLING(pm->mode) ||
		    (n = vpmu__pmc_counted(vm, pm)) - pm->sample_mark < pm->reload)
			continue;
		pm->sample_mark += pm->reload;	/* one sample per reload events */
		/*
		 * A time event's periods past the first ended in the same run:
		 * its RIP is none of theirs, and later exits' are not either.
		 */
		if (vpmu__event_timed(&pm->spec) && n - pm->sample_mark >= pm->reload) {
			v->xst.time_missed += (n - pm->sample_mark) / pm->reload;
			pm->sample_mark += (n - pm->sample_mark) / pm->reload * pm->reload;
		}
		vpmu__pmc_arm(vm, pm);		/* the source: events to the next */
		cons = __atomic_load_n(&r->cons, __ATOMIC_ACQUIRE);
		if (r->prod - cons >= r->n) {
			/* Not reached: the ring is emptied at hiwat() below. */
			vm->stats.intr_bufferfull++;
			pm->dropped = true;	/* DROPNOTIFY at the next sweep */
			continue;
		}
		e = entry(r, r->prod);
		e->owner = pm->owner->pid;
		e->pmcid = pm->id;
		if (task != NULL) {
			vpmu__task_note(vm, pm->owner, task);	/* its names first */
			e->pid = (uint32_t)task->pid;
			e->tid = (uint32_t)task->tid;
		} else {
			e->pid = v->cur != NULL ? (uint32_t)v->cur->cred.pid : 0;
			e->tid = v->cur != NULL ? (uint32_t)v->cur_tid : 0;
		}
		e->cpuflags = (uint32_t)cpu << 16 | (user ? 1u : 0u);
		/* Without PMC_F_CALLCHAIN a sample is the interrupted PC alone. */
		e->npc = !(pm->flags & VPMU_F_CALLCHAIN) ? 1 : npc < r->depth ? npc : r->depth;
		memcpy(e->pc, pc, e->npc * sizeof(pc[0]));
		e->tsc = __builtin_ia32_rdtsc();
		__atomic_store_n(&r->prod, r->prod + 1, __ATOMIC_RELEASE);
		vm->stats.intr_processed++;
		fill = r->prod - cons;
		if (fill >= hiwat(r))
			emit_rings(vm, r);	/* the ring empty again: room */
		else if (fill == r->n / 4 && __atomic_load_n(&vm->sweeper_on, __ATOMIC_RELAXED))
			vm->after |= VPMU__AFTER_KICK;	/* sweep now, once the lock is free */
	}
	vpmu__vcpu_time_due(vm, cpu);	/* the next sample of a time event */
}

/* ---- the consumer: the sweeper, FLUSHLOG, the closes ---------------------------- */

/* drain_one()'s outcomes. */
enum drain { DRAIN_EMPTY, DRAIN_MOVED, DRAIN_YIELD };

/* Ring entry e as a CALLCHAIN record. */
static void
entry_ev(const struct ring_entry *e, struct vpmu_pmclog_ev *ev)
{
	memset(ev, 0, sizeof(*ev));
	ev->type = VPMU_PMCLOG_CALLCHAIN;
	ev->tsc = e->tsc;
	ev->u.callchain.pid = e->pid;
	ev->u.callchain.tid = e->tid;
	ev->u.callchain.pmcid = e->pmcid;
	ev->u.callchain.cpuflags = e->cpuflags;
	ev->u.callchain.npc = e->npc;
	memcpy(ev->u.callchain.pc, e->pc, e->npc * sizeof(e->pc[0]));
}

/* The record of entry e into its owner's log, if it has one (VM lock held). */
static void
entry_emit(struct vpmu_vm *vm, const struct ring_entry *e, struct vpmu_pmclog_ev *ev)
{
	struct vpmu_pmc *pm;

	if ((pm = vpmu__pmc_by_id(vm, e->owner, e->pmcid)) != NULL &&
	    pm->owner->log != NULL)
		vpmu__log_emit(vm, pm->owner, ev);
}

/*
 * The VM lock for a consumer that holds drain_mtx: true when taken; false,
 * not taken, when a producer holding it waits for drain_mtx (drain_want).
 */
static bool
consumer_lock(struct vpmu_vm *vm)
{
	unsigned spins = 0;

	for (;;) {
		if (__atomic_load_n(&vm->drain_want, __ATOMIC_ACQUIRE))
			return (false);
		if (vpmu__vm_trylock(vm))
			return (true);
		vpmu__spin_wait(&spins);
	}
}

/* drain_mtx to the producer that wants it, and back once it is through. */
static void
yield_to_producer(struct vpmu_vm *vm)
{
	unsigned spins = 0;

	pthread_mutex_unlock(&vm->drain_mtx);
	while (__atomic_load_n(&vm->drain_want, __ATOMIC_ACQUIRE))
		vpmu__spin_wait(&spins);
	pthread_mutex_lock(&vm->drain_mtx);
}

/*
 * The oldest entry of r into its owner's log, if there is one: DRAIN_EMPTY
 * when r is empty, DRAIN_YIELD (nothing moved) when a producer waits for
 * drain_mtx.  vm->drain_mtx held, not the VM lock, which is taken for the
 * emit alone.
 */
static enum drain
drain_one(struct vpmu_vm *vm, struct vpmu_ring *r)
{
	struct vpmu_pmclog_ev ev;
	uint64_t cons;

	if (r == NULL)
		return (DRAIN_EMPTY);
	cons = __atomic_load_n(&r->cons, __ATOMIC_RELAXED);	/* ours alone */
	if (cons == __atomic_load_n(&r->prod, __ATOMIC_ACQUIRE))
		return (DRAIN_EMPTY);
	entry_ev(entry(r, cons), &ev);
	if (!consumer_lock(vm))
		return (DRAIN_YIELD);		/* the producer emits it */
	entry_emit(vm, entry(r, cons), &ev);
	vpmu__vm_unlock(vm);
	__atomic_store_n(&r->cons, cons + 1, __ATOMIC_RELEASE);
	return (DRAIN_MOVED);
}

/*
 * The producer's drain: every entry of ring r (NULL: of every vCPU's ring)
 * into the logs, on a vCPU's thread, with the VM lock it holds (so no
 * producer writes meanwhile).  It waits for drain_mtx with drain_want up:
 * the consumer holding it lets go at its next record (the comment at the
 * top).
 */
static void
emit_rings(struct vpmu_vm *vm, struct vpmu_ring *only)
{
	struct vpmu_pmclog_ev ev;
	struct vpmu_ring *r;
	uint64_t cons;
	unsigned i;

	if (pthread_mutex_trylock(&vm->drain_mtx) != 0) {
		__atomic_store_n(&vm->drain_want, true, __ATOMIC_RELEASE);
		pthread_mutex_lock(&vm->drain_mtx);
		__atomic_store_n(&vm->drain_want, false, __ATOMIC_RELEASE);
	}
	for (i = 0; i < vm->nvcpus; i++) {
		if ((r = only != NULL ? only : vm->vcpu[i].ring) == NULL)
			continue;
		cons = __atomic_load_n(&r->cons, __ATOMIC_RELAXED);
		for (; cons != r->prod; cons++) {
			entry_ev(entry(r, cons), &ev);
			entry_emit(vm, entry(r, cons), &ev);
			__atomic_store_n(&r->cons, cons + 1, __ATOMIC_RELEASE);
		}
		if (only != NULL)
			break;
	}
	vm->stats.log_sweeps++;
	pthread_mutex_unlock(&vm->drain_mtx);
}

void
vpmu__sample_emit_all(struct vpmu_vm *vm)
{
	emit_rings(vm, NULL);
}

/* A DROPNOTIFY for each PMC that lost a sample since the last one (VM lock held). */
static void
dropnotify(struct vpmu_vm *vm)
{
	struct vpmu_pmclog_ev ev;
	struct vpmu_owner *o;
	struct vpmu_pmc *pm;

	for (o = vm->owners; o != NULL; o = o->next)
		for (pm = o->pmcs; pm != NULL; pm = pm->owner_next)
			if (pm->dropped) {
				pm->dropped = false;
				memset(&ev, 0, sizeof(ev));
				ev.type = VPMU_PMCLOG_DROPNOTIFY;
				vpmu__log_emit(vm, o, &ev);
			}
}

/*
 * Every ring into the logs, then the DROPNOTIFYs due; counted as a sweep
 * or not.  A producer that wants drain_mtx meanwhile gets it, and empties
 * its own ring; this goes on where it was.
 */
static void
drain_all(struct vpmu_vm *vm, bool sweep)
{
	unsigned c = 0;

	pthread_mutex_lock(&vm->drain_mtx);
	while (c < vm->nvcpus)
		switch (drain_one(vm, vm->vcpu[c].ring)) {
		case DRAIN_EMPTY:
			c++;
			break;
		case DRAIN_MOVED:
			break;
		case DRAIN_YIELD:
			yield_to_producer(vm);
			break;
		}
	while (!consumer_lock(vm))
		yield_to_producer(vm);
	dropnotify(vm);
	if (sweep)
		vm->stats.log_sweeps++;
	vpmu__vm_unlock(vm);
	pthread_mutex_unlock(&vm->drain_mtx);
}

/*
 * Every ring's samples into the logs now, without the VM lock held:
 * FLUSHLOG and every close of a log call it first, so that what was
 * sampled before them is in the file they flush or close.
 */
void
vpmu__sample_drain(struct vpmu_vm *vm)
{
	drain_all(vm, false);
}

static void *
sweeper_main(void *arg)
{
	struct vpmu_vm *vm = arg;
	struct pollfd pfd = { .fd = vm->sweep_efd, .events = POLLIN };
	uint64_t n;

	while (!__atomic_load_n(&vm->sweeper_stop, __ATOMIC_ACQUIRE)) {
		drain_all(vm, true);
		/* A millisecond, or until a ring is a quarter full. */
		if (poll(&pfd, 1, 1) > 0)
			(void)!read(vm->sweep_efd, &n, sizeof(n));
	}
	drain_all(vm, true);			/* what is left, before the logs close */
	return (NULL);
}

/* The sweeper starts with the first sampling PMC; 0 or EAGAIN. */
int
vpmu__sweeper_start(struct vpmu_vm *vm)
{
	int error = 0;

	if (__atomic_load_n(&vm->sweeper_on, __ATOMIC_ACQUIRE))
		return (0);
	VPMU_ASSERT(!vpmu__vm_held(vm));	/* a thread: never under the VM lock */
	pthread_mutex_lock(&vm->sweeper_mtx);
	if (!__atomic_load_n(&vm->sweeper_on, __ATOMIC_RELAXED)) {
		__atomic_store_n(&vm->sweeper_stop, false, __ATOMIC_RELAXED);
		if ((vm->sweep_efd = eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK)) < 0)
			error = EAGAIN;
		else if (pthread_create(&vm->sweeper, NULL, sweeper_main, vm) != 0) {
			close(vm->sweep_efd);
			error = EAGAIN;
		} else
			__atomic_store_n(&vm->sweeper_on, true, __ATOMIC_RELEASE);
	}
	pthread_mutex_unlock(&vm->sweeper_mtx);
	return (error);
}

void
vpmu__sweeper_kick(struct vpmu_vm *vm)
{
	uint64_t one = 1;

	if (__atomic_load_n(&vm->sweeper_on, __ATOMIC_ACQUIRE))
		(void)!write(vm->sweep_efd, &one, sizeof(one));
}

/* Stop it, the rings swept (VM lock not held). */
void
vpmu__sweeper_stop(struct vpmu_vm *vm)
{
	uint64_t one = 1;

	if (!vm->sweeper_on)
		return;
	__atomic_store_n(&vm->sweeper_stop, true, __ATOMIC_RELEASE);
	(void)!write(vm->sweep_efd, &one, sizeof(one));	/* no need to wait 1 ms */
	pthread_join(vm->sweeper, NULL);
	close(vm->sweep_efd);
	__atomic_store_n(&vm->sweeper_on, false, __ATOMIC_RELEASE);
}
