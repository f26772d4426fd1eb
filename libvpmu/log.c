/*
 * log.c -- an owner's log: hwpmc's CONFIGURELOG, FLUSHLOG, WRITELOG and
 * CLOSELOG, and the records the core emits into it, in FreeBSD's modern
 * pmclog format (pmclog(5), <vpmu/pmclog.h>).
 *
 * Records are encoded into the owner's current buffer (logbuffersize KB);
 * a full buffer goes to the owner's writer thread, which writes buffers to
 * the file in order, and a fresh one comes from the owner's pool of
 * nbuffers_pcpu x vCPUs buffers.  With no buffer free the record is
 * dropped and counted (buffer_requests_failed), as hwpmc does: that is
 * the one place a sample can still be lost (issue 14), when the writer is
 * a whole pool behind.  Emitting does not wait for the writer or write a
 * buffer itself instead, since it runs with the VM lock held (on a vCPU's
 * thread, for samples at a ring's high-water mark), and a descriptor that
 * blocks would then stop every vCPU.  A write error stops the logging;
 * the next FLUSHLOG returns it.
 *
 * Locking: records are emitted with the VM lock held; the buffers, the
 * queue and the counts below have the log's own mutex, the only lock the
 * writer thread takes.  No lock but that mutex is ever held while waiting
 * for the writer: FLUSHLOG and every close do their part under the VM lock
 * (queue the current buffer, note how many buffers are queued; for a
 * close, also emit CLOSELOG, detach the log from its owner and tell the
 * writer to stop) and then drop it before they wait (vpmu__log_op(),
 * vpmu__log_finish()).  While a caller waits, the owner may go and the
 * log may be closed by another thread: the waiter holds a reference
 * (refs, under the log's mutex), and the last reference frees the log.
 * A detached log is reachable from no owner, so nothing more is emitted
 * into it.
 */
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "internal.h"
#include <vpmu/pmclog.h>

struct logbuf {
	struct logbuf *next;
	size_t used;
	uint8_t data[];
};

struct vpmu_log {
	int fd;
	size_t bufsize;
	pthread_mutex_t mtx;		/* everything below */
	pthread_cond_t cv;		/* a buffer queued or written, or stop */
	struct logbuf *cur;		/* being filled */
	struct logbuf *free;
	struct logbuf *qhead, *qtail;	/* full, to write, in order */
	uint64_t queued;		/* buffers queued since the log opened */
	uint64_t written;		/* ...and taken off the queue by the writer */
	bool stop;
	int error;			/* first write error: logging stopped */
	unsigned refs;			/* the owner (or the closer), and each waiter */
	pthread_t writer;
	uint64_t dropped;
	struct vpmu_log *next_closing;	/* a caller's list of logs to finish */
};

static uint64_t
tsc(void)
{
	return (__builtin_ia32_rdtsc());
}

/* The TSC's rate, measured once against CLOCK_MONOTONIC (about 5 ms). */
static uint64_t
tsc_freq(void)
{
	static uint64_t hz;
	struct timespec a, b;
	uint64_t t0, t1, ns;

	if (hz != 0)
		return (hz);
	clock_gettime(CLOCK_MONOTONIC, &a);
	t0 = tsc();
	do {
		clock_gettime(CLOCK_MONOTONIC, &b);
		ns = (uint64_t)(b.tv_sec - a.tv_sec) * 1000000000u +
		    (uint64_t)b.tv_nsec - (uint64_t)a.tv_nsec;
	} while (ns < 5000000);
	t1 = tsc();
	hz = (uint64_t)((unsigned __int128)(t1 - t0) * 1000000000u / ns);
	return (hz);
}

/* ---- the writer thread ----------------------------------------------------- */

static int
write_all(int fd, const uint8_t *p, size_t n)
{
	ssize_t w;

	while (n > 0) {
		if ((w = write(fd, p, n)) < 0) {
			if (errno == EINTR)
				continue;
			return (errno);
		}
		p += w;
		n -= (size_t)w;
	}
	return (0);
}

static void *
writer_main(void *arg)
{
	struct vpmu_log *l = arg;
	struct logbuf *b;
	sigset_t pipe;
	int error;

	/* A reader gone from a pipe is EPIPE for the log, not a dead VMM. */
	sigemptyset(&pipe);
	sigaddset(&pipe, SIGPIPE);
	pthread_sigmask(SIG_BLOCK, &pipe, NULL);
	pthread_mutex_lock(&l->mtx);
	for (;;) {
		while (l->qhead == NULL && !l->stop)
			pthread_cond_wait(&l->cv, &l->mtx);
		if ((b = l->qhead) == NULL)
			break;			/* stopping, everything written */
		if ((l->qhead = b->next) == NULL)
			l->qtail = NULL;
		pthread_mutex_unlock(&l->mtx);
		error = l->error == 0 ? write_all(l->fd, b->data, b->used) : 0;
		pthread_mutex_lock(&l->mtx);
		if (error != 0 && l->error == 0)
			l->error = error;
		b->used = 0;
		b->next = l->free;
		l->free = b;
		l->written++;
		pthread_cond_broadcast(&l->cv);
	}
	pthread_mutex_unlock(&l->mtx);
	return (NULL);
}

/* Hand the current buffer to the writer (log->mtx held). */
static void
queue_cur(struct vpmu_log *l)
{
	struct logbuf *b = l->cur;

	if (b == NULL || b->used == 0)
		return;
	l->cur = NULL;
	b->next = NULL;
	if (l->qtail != NULL)
		l->qtail->next = b;
	else
		l->qhead = b;
	l->qtail = b;
	l->queued++;
	pthread_cond_broadcast(&l->cv);
}

/* ---- records -------------------------------------------------------------------- */

/* Encode ev into owner o's log, if it has one that still works. */
void
vpmu__log_emit(struct vpmu_vm *vm, struct vpmu_owner *o, struct vpmu_pmclog_ev *ev)
{
	struct vpmu_log *l = o->log;
	size_t n;

	if (l == NULL)
		return;
	ev->tsc = ev->tsc != 0 ? ev->tsc : tsc();
	pthread_mutex_lock(&l->mtx);
	if (l->error != 0)
		goto out;			/* logging stopped at the error */
	for (;;) {
		if (l->cur == NULL) {
			vm->stats.buffer_requests++;
			if ((l->cur = l->free) == NULL) {
				vm->stats.buffer_requests_failed++;
				l->dropped++;
				goto out;
			}
			l->free = l->cur->next;
			l->cur->used = 0;
		}
		n = vpmu_pmclog_encode(ev, l->cur->data + l->cur->used,
		    l->bufsize - l->cur->used);
		if (n != 0)
			break;
		if (l->cur->used == 0) {
			vm->stats.buffer_requests_failed++;	/* larger than a buffer */
			l->dropped++;
			goto out;
		}
		queue_cur(l);
	}
	l->cur->used += n;
out:
	pthread_mutex_unlock(&l->mtx);
}

static void
log_free(struct vpmu_log *l)
{
	struct logbuf *b;

	while ((b = l->free) != NULL) {
		l->free = b->next;
		free(b);
	}
	free(l->cur);
	pthread_mutex_destroy(&l->mtx);
	pthread_cond_destroy(&l->cv);
	free(l);
}

/* Drop a reference; the last one frees the log (no lock held). */
static void
log_unref(struct vpmu_log *l)
{
	bool last;

	pthread_mutex_lock(&l->mtx);
	last = --l->refs == 0;
	pthread_mutex_unlock(&l->mtx);
	if (last)
		log_free(l);
}

/*
 * FLUSHLOG's first half, VM lock held: the current buffer to the writer;
 * *ticket is the number of buffers queued so far, and the caller holds a
 * reference for flush_wait().
 */
static void
flush_begin(struct vpmu_log *l, uint64_t *ticket)
{
	pthread_mutex_lock(&l->mtx);
	queue_cur(l);
	*ticket = l->queued;
	l->refs++;
	pthread_mutex_unlock(&l->mtx);
}

/*
 * Its second half, with no lock held: wait until the writer has taken
 * every buffer queued before the ticket and written it (or, after a write
 * error, discarded it); the pending error, if any.  Buffers queued since
 * (records emitted while this waits) are not waited for.
 */
static int
flush_wait(struct vpmu_log *l, uint64_t ticket)
{
	int error;

	pthread_mutex_lock(&l->mtx);
	while (l->written < ticket)
		pthread_cond_wait(&l->cv, &l->mtx);
	error = l->error;
	pthread_mutex_unlock(&l->mtx);
	log_unref(l);
	return (error);
}

/*
 * Close o's log, first half, with the VM lock held: CLOSELOG emitted last,
 * the current buffer queued, the writer told to stop once the queue is
 * empty, and the log detached from o.  The caller gets the owner's
 * reference and must pass the log to vpmu__log_finish() once it has
 * dropped the VM lock.  Every way of closing comes here: CLOSELOG,
 * CONFIGURELOG -1, the owner's exit and exec, the VM's end; each first
 * moves the samples still in the rings in (vpmu__sample_drain(), before
 * it takes the VM lock).
 */
struct vpmu_log *
vpmu__log_detach(struct vpmu_vm *vm, struct vpmu_owner *o)
{
	struct vpmu_pmclog_ev ev = { .type = VPMU_PMCLOG_CLOSELOG };
	struct vpmu_log *l = o->log;

	if (l == NULL)
		return (NULL);
	vpmu__log_emit(vm, o, &ev);
	pthread_mutex_lock(&l->mtx);
	queue_cur(l);
	l->stop = true;
	pthread_cond_broadcast(&l->cv);
	pthread_mutex_unlock(&l->mtx);
	o->log = NULL;
	o->has_log = false;
	l->next_closing = NULL;
	return (l);
}

/*
 * The second half, with no lock held: everything written, the writer
 * gone, the log's own descriptor (a duplicate of the caller's) closed;
 * the writer's first error, if any.  The log is freed here, or by the
 * last FLUSHLOG still waiting on it.
 */
int
vpmu__log_finish(struct vpmu_log *l)
{
	int error;

	pthread_join(l->writer, NULL);
	close(l->fd);
	pthread_mutex_lock(&l->mtx);
	error = l->error;
	pthread_mutex_unlock(&l->mtx);
	log_unref(l);
	return (error);
}

/* Finish every log of a list vpmu__log_detach() made (no lock held). */
void
vpmu__log_finish_all(struct vpmu_log *list)
{
	struct vpmu_log *l;

	while ((l = list) != NULL) {
		list = l->next_closing;
		(void)vpmu__log_finish(l);
	}
}

/* Add a detached log to a list for vpmu__log_finish_all(). */
void
vpmu__log_defer(struct vpmu_log **list, struct vpmu_log *l)
{
	if (l != NULL) {
		l->next_closing = *list;
		*list = l;
	}
}

int
vpmu__log_fd(const struct vpmu_log *l)
{
	return (l->fd);
}

static int
log_open(struct vpmu_vm *vm, struct vpmu_owner *o, int fd)
{
	struct vpmu_pmclog_ev ev = { .type = VPMU_PMCLOG_INITIALIZE };
	struct vpmu_log *l;
	struct logbuf *b;
	struct timespec ts;
	unsigned i, n;

	if ((l = calloc(1, sizeof(*l))) == NULL)
		return (ENOMEM);
	l->fd = fd;
	l->refs = 1;			/* the owner's */
	l->bufsize = (size_t)vm->tun.v[VPMU_T_LOGBUFFERSIZE] * 1024;
	pthread_mutex_init(&l->mtx, NULL);
	pthread_cond_init(&l->cv, NULL);
	n = (unsigned)vm->tun.v[VPMU_T_NBUFFERS_PCPU] * vm->nvcpus;
	for (i = 0; i < n; i++) {
		if ((b = malloc(sizeof(*b) + l->bufsize)) == NULL) {
			log_free(l);
			return (ENOMEM);
		}
		b->used = 0;
		b->next = l->free;
		l->free = b;
	}
	if (pthread_create(&l->writer, NULL, writer_main, l) != 0) {
		log_free(l);
		return (EAGAIN);		/* hwpmc: helper process creation failed */
	}
	o->log = l;
	o->has_log = true;
	/* INITIALIZE first: the version, the CPU type, how to read the TSC. */
	clock_gettime(CLOCK_REALTIME, &ts);
	ev.u.initialize.version = VPMU_PMC_VERSION;
	ev.u.initialize.cputype = vm->cputype;
	ev.u.initialize.tsc_freq = tsc_freq();
	ev.u.initialize.sec = ts.tv_sec;
	ev.u.initialize.nsec = ts.tv_nsec;
	snprintf(ev.u.initialize.cpuid, sizeof(ev.u.initialize.cpuid), "libvpmu %s",
	    vpmu_version());
	vpmu__log_emit(vm, o, &ev);
	return (0);
}

/* ---- the operations ---------------------------------------------------------- */

/*
 * PMC_OP_CONFIGURELOG, VM lock held: fd >= 0 gives the caller a log (EBUSY
 * if it has one; EBADF unless fd is open for writing); fd < 0 closes it,
 * after stopping its running PMCs that need a log (EINVAL if it has none):
 * *closing is then the detached log, for vpmu__log_finish().
 */
static int
configurelog(struct vpmu_vm *vm, const struct vpmu_cred *cr,
    const struct vpmu_op_configurelog *cl, struct vpmu_log **closing)
{
	struct vpmu_owner *o;
	struct vpmu_pmc *pm;
	int fl, error;

	if (cl->flags != 0)
		return (EINVAL);
	o = vpmu__owner_get(vm, cr, cl->logfd >= 0);
	if (cl->logfd < 0) {
		if (o == NULL || o->log == NULL)
			return (EINVAL);
		for (pm = o->pmcs; pm != NULL; pm = pm->owner_next)
			if ((pm->flags & VPMU_PF_NEEDS_LOGFILE) &&
			    pm->state == VPMU_STATE_RUNNING)
				(void)vpmu__pmc_stop(vm, pm);
		*closing = vpmu__log_detach(vm, o);
		vpmu__owner_maybe_free(vm, o);
		return (0);
	}
	if (o == NULL)
		return (ENOMEM);
	if (o->log != NULL)
		return (EBUSY);
	if ((fl = fcntl(cl->logfd, F_GETFL)) < 0 ||
	    ((fl & O_ACCMODE) != O_WRONLY && (fl & O_ACCMODE) != O_RDWR)) {
		vpmu__owner_maybe_free(vm, o);
		return (EBADF);
	}
	/* Its own descriptor: the caller may close or reuse its number. */
	if ((fl = fcntl(cl->logfd, F_DUPFD_CLOEXEC, 3)) < 0) {
		vpmu__owner_maybe_free(vm, o);
		return (errno == EMFILE ? EMFILE : EBADF);
	}
	if ((error = log_open(vm, o, fl)) != 0) {
		close(fl);
		vpmu__owner_maybe_free(vm, o);
	}
	return (error);
}

/* A new log, VM lock held (snapshot restore): opening never waits. */
int
vpmu__log_configure(struct vpmu_vm *vm, const struct vpmu_cred *cr,
    const struct vpmu_op_configurelog *cl)
{
	struct vpmu_log *l = NULL;
	int error;

	if (cl->logfd < 0)
		return (EINVAL);
	error = configurelog(vm, cr, cl, &l);
	VPMU_ASSERT(l == NULL);
	return (error);
}

/* PMC_OP_WRITELOG: a USERDATA record. */
int
vpmu_do_op_writelog(struct vpmu_vm *vm, const struct vpmu_cred *cr, void *arg)
{
	struct vpmu_op_writelog *wl = arg;
	struct vpmu_owner *o = vpmu__owner_get(vm, cr, false);
	struct vpmu_pmclog_ev ev = { .type = VPMU_PMCLOG_USERDATA };
	uint64_t failed;

	if (o == NULL || o->log == NULL)
		return (EINVAL);
	ev.u.userdata.userdata = wl->userdata;
	failed = vm->stats.buffer_requests_failed;
	vpmu__log_emit(vm, o, &ev);
	return (vm->stats.buffer_requests_failed != failed ? ENOMEM : 0);
}

/*
 * A MAP_IN record from the owner itself: hwpmc writes them from its mmap
 * hook; here the VMM, which loaded the guest's image, says where.  Not an
 * hwpmc operation: not counted in the driver statistics.
 */
int
vpmu_log_map_in(vpmu_vm *vm, const struct vpmu_cred *cr, int32_t pid, uint64_t start,
    const char *path)
{
	struct vpmu_pmclog_ev ev = { .type = VPMU_PMCLOG_MAP_IN };
	struct vpmu_owner *o;
	uint64_t failed;
	int error;

	if (vm == NULL || path == NULL)
		return (EINVAL);
	if (strlen(path) >= VPMU_PMCLOG_PATH_MAX)
		return (ENAMETOOLONG);
	vpmu__vm_lock(vm);
	if ((error = vpmu__cred_check(cr)) == 0) {
		o = vpmu__owner_get(vm, cr, false);
		if (o == NULL || o->log == NULL)
			error = EINVAL;
		else {
			ev.u.map_in.pid = (uint32_t)pid;
			ev.u.map_in.start = start;
			memcpy(ev.u.map_in.path, path, strlen(path) + 1);
			failed = vm->stats.buffer_requests_failed;
			vpmu__log_emit(vm, o, &ev);
			if (vm->stats.buffer_requests_failed != failed)
				error = ENOMEM;
		}
	}
	vpmu__vm_unlock(vm);
	return (error);
}

/*
 * CONFIGURELOG, FLUSHLOG and CLOSELOG, called by vpmu_vm_op() without the
 * VM lock, because they wait for the writer.  In order:
 *   1. the samples still in the rings go into the logs (FLUSHLOG and the
 *      closes: vpmu__sample_drain(), which takes the sweeper's drain mutex
 *      and the VM lock for each record);
 *   2. under the VM lock, the checks vpmu_vm_op() makes for every
 *      operation and the operation's own part: FLUSHLOG queues the current
 *      buffer and pins the log; a close emits CLOSELOG and detaches it;
 *   3. the VM lock dropped, the wait: FLUSHLOG for the buffers queued
 *      before it, a close for the writer's end.
 * The machine stays usable while the descriptor blocks.  The call counts
 * in the driver statistics as any other; a write error returned by the
 * wait counts as the call's error.
 */
int
vpmu__log_op(struct vpmu_vm *vm, const struct vpmu_cred *cr, int op, void *arg)
{
	struct vpmu_op_configurelog *cl = arg;
	struct vpmu_log *l = NULL;
	struct vpmu_owner *o;
	uint64_t ticket = 0;
	bool closing = false;
	int error;

	if (op != VPMU_OP_CONFIGURELOG || (cl != NULL && cl->logfd < 0))
		vpmu__sample_drain(vm);		/* the samples taken so far, too */
	vpmu__vm_lock(vm);
	if (op == VPMU_OP_CONFIGURELOG && cl == NULL)
		error = EFAULT;
	else if ((error = vpmu__cred_check(cr)) != 0)
		;
	else if (op == VPMU_OP_CONFIGURELOG) {
		error = configurelog(vm, cr, cl, &l);
		closing = true;
	} else if ((o = vpmu__owner_get(vm, cr, false)) == NULL || o->log == NULL)
		error = EINVAL;
	else if (op == VPMU_OP_FLUSHLOG) {
		l = o->log;
		flush_begin(l, &ticket);
	} else {
		l = vpmu__log_detach(vm, o);
		closing = true;
		vpmu__owner_maybe_free(vm, o);
	}
	vm->stats.syscalls++;
	if (error != 0)
		vm->stats.syscall_errors++;
	vpmu__vm_unlock(vm);
	if (l == NULL)
		return (error);
	if ((error = closing ? vpmu__log_finish(l) : flush_wait(l, ticket)) != 0) {
		vpmu__vm_lock(vm);
		vm->stats.syscall_errors++;
		vpmu__vm_unlock(vm);
	}
	return (error);
}
