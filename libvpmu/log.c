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
#include <sys/stat.h>
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
	uint64_t tsc_hz;		/* for INITIALIZE, measured before the lock */
	struct timespec opened;		/* ...and the wall-clock time */
	bool file_known;		/* fd's file, fstat() before the lock (snapshots) */
	uint64_t dev, ino;
	uint64_t dropped;
	struct vpmu_log *next_closing;	/* a caller's list of logs to finish */
};

static uint64_t
tsc(void)
{
	return (__builtin_ia32_rdtsc());
}

/*
 * The TSC's rate, measured once per process against CLOCK_MONOTONIC: a
 * busy-wait of about 5 ms, so never with the VM lock held.  pthread_once
 * makes the first caller measure and every other wait for its result.
 * The one calibration of the library: the logs' INITIALIZE record and the
 * perfmon device's PMIOTSTAMP (guest-api/pv_perfmon.c) both read it.
 */
static uint64_t tsc_hz;
static pthread_once_t tsc_once = PTHREAD_ONCE_INIT;

static void
tsc_calibrate(void)
{
	struct timespec a, b;
	uint64_t t0, t1, ns;

	clock_gettime(CLOCK_MONOTONIC, &a);
	t0 = tsc();
	do {
		clock_gettime(CLOCK_MONOTONIC, &b);
		ns = (uint64_t)(b.tv_sec - a.tv_sec) * 1000000000u +
		    (uint64_t)b.tv_nsec - (uint64_t)a.tv_nsec;
	} while (ns < 5000000);
	t1 = tsc();
	tsc_hz = (uint64_t)((unsigned __int128)(t1 - t0) * 1000000000u / ns);
}

uint64_t
vpmu__tsc_hz(void)
{
	pthread_once(&tsc_once, tsc_calibrate);
	return (tsc_hz);
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
	int error;

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
		error = vpmu_pmclog_encode(ev, l->cur->data + l->cur->used,
		    l->bufsize - l->cur->used, &n);
		if (error == 0)
			break;
		if (error != ENOSPC || l->cur->used == 0) {
			/* not a record, or larger than a buffer */
			vm->stats.buffer_requests_failed++;
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

bool
vpmu__log_file(const struct vpmu_log *l, uint64_t *dev, uint64_t *ino)
{
	*dev = l->dev;
	*ino = l->ino;
	return (l->file_known);
}

/*
 * A log made ready without the VM lock, as every part of opening one that
 * makes a system call or waits is: the caller's descriptor checked (open
 * for writing) and duplicated, the buffers, the writer thread, the TSC's
 * rate.  *lp is then either given to an owner with log_attach() (VM lock
 * held) or undone with vpmu__log_discard() (no lock held).  The errors are
 * CONFIGURELOG's: EBADF (fd not open for writing), EMFILE, ENOMEM, EAGAIN
 * (no writer thread: hwpmc's helper process creation failed).
 */
int
vpmu__log_prepare(struct vpmu_vm *vm, int fd, struct vpmu_log **lp)
{
	struct vpmu_log *l;
	struct logbuf *b;
	struct stat st;
	unsigned i, n;
	int fl;

	*lp = NULL;
	if ((fl = fcntl(fd, F_GETFL)) < 0 ||
	    ((fl & O_ACCMODE) != O_WRONLY && (fl & O_ACCMODE) != O_RDWR))
		return (EBADF);
	/* Its own descriptor: the caller may close or reuse its number. */
	if ((fd = fcntl(fd, F_DUPFD_CLOEXEC, 3)) < 0)
		return (errno == EMFILE ? EMFILE : EBADF);
	if ((l = calloc(1, sizeof(*l))) == NULL) {
		close(fd);
		return (ENOMEM);
	}
	l->fd = fd;
	l->refs = 1;			/* the owner's */
	/* Both tunables are read-only, fixed at creation: no lock. */
	l->bufsize = (size_t)vm->tun.v[VPMU_T_LOGBUFFERSIZE] * 1024;
	pthread_mutex_init(&l->mtx, NULL);
	pthread_cond_init(&l->cv, NULL);
	n = (unsigned)vm->tun.v[VPMU_T_NBUFFERS_PCPU] * vm->nvcpus;
	for (i = 0; i < n; i++) {
		if ((b = malloc(sizeof(*b) + l->bufsize)) == NULL) {
			close(fd);
			log_free(l);
			return (ENOMEM);
		}
		b->used = 0;
		b->next = l->free;
		l->free = b;
	}
	if (pthread_create(&l->writer, NULL, writer_main, l) != 0) {
		close(l->fd);
		log_free(l);
		return (EAGAIN);		/* hwpmc: helper process creation failed */
	}
	l->tsc_hz = vpmu__tsc_hz();
	clock_gettime(CLOCK_REALTIME, &l->opened);
	if (fstat(l->fd, &st) == 0) {
		l->file_known = true;
		l->dev = (uint64_t)st.st_dev;
		l->ino = (uint64_t)st.st_ino;
	}
	*lp = l;
	return (0);
}

/* Undo vpmu__log_prepare() for a log no owner got (no lock held). */
void
vpmu__log_discard(struct vpmu_log *l)
{
	if (l == NULL)
		return;
	pthread_mutex_lock(&l->mtx);
	l->stop = true;
	pthread_cond_broadcast(&l->cv);
	pthread_mutex_unlock(&l->mtx);
	(void)vpmu__log_finish(l);
}

/* A prepared log becomes o's, VM lock held: INITIALIZE is its first record. */
static void
log_attach(struct vpmu_vm *vm, struct vpmu_owner *o, struct vpmu_log *l)
{
	struct vpmu_pmclog_ev ev = { .type = VPMU_PMCLOG_INITIALIZE };

	o->log = l;
	o->has_log = true;
	/* INITIALIZE first: the version, the CPU type, how to read the TSC. */
	ev.u.initialize.version = VPMU_PMC_VERSION;
	ev.u.initialize.cputype = vm->cputype;
	ev.u.initialize.tsc_freq = l->tsc_hz;
	ev.u.initialize.sec = l->opened.tv_sec;
	ev.u.initialize.nsec = l->opened.tv_nsec;
	snprintf(ev.u.initialize.cpuid, sizeof(ev.u.initialize.cpuid), "libvpmu %s",
	    vpmu_version());
	vpmu__log_emit(vm, o, &ev);
}

/* ---- the operations ---------------------------------------------------------- */

/*
 * PMC_OP_CONFIGURELOG, VM lock held: fd >= 0 gives the caller a log (EBUSY
 * if it has one; else the error of vpmu__log_prepare(), made before the
 * lock: prep_error, or the log *prep, which the owner takes (*prep NULL));
 * fd < 0 closes it, after stopping its running PMCs that need a log
 * (EINVAL if it has none): *closing is then the detached log, for
 * vpmu__log_finish().
 */
static int
configurelog(struct vpmu_vm *vm, const struct vpmu_cred *cr,
    const struct vpmu_op_configurelog *cl, struct vpmu_log **prep, int prep_error,
    struct vpmu_log **closing)
{
	struct vpmu_owner *o;
	struct vpmu_pmc *pm;

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
	if (prep_error != 0) {
		vpmu__owner_maybe_free(vm, o);
		return (prep_error);
	}
	log_attach(vm, o, *prep);
	*prep = NULL;
	return (0);
}

/*
 * A new log from vpmu__log_prepare(), VM lock held (snapshot restore): the
 * owner takes *prep (then NULL) unless this fails.
 */
int
vpmu__log_configure(struct vpmu_vm *vm, const struct vpmu_cred *cr,
    const struct vpmu_op_configurelog *cl, struct vpmu_log **prep)
{
	struct vpmu_log *l = NULL;
	int error;

	if (cl->logfd < 0 || *prep == NULL)
		return (EINVAL);
	error = configurelog(vm, cr, cl, prep, 0, &l);
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
 * VM lock, because they wait for the writer or make system calls.  In order:
 *   1. the samples still in the rings go into the logs (FLUSHLOG and the
 *      closes: vpmu__sample_drain(), which takes the sweeper's drain mutex
 *      and the VM lock for each record); a CONFIGURELOG that opens a log
 *      prepares it (vpmu__log_prepare(): the descriptor's checks and
 *      duplicate, the writer thread, the TSC's rate);
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
	struct vpmu_log *l = NULL, *prep = NULL;
	struct vpmu_owner *o;
	uint64_t ticket = 0;
	bool closing = false;
	int error, prep_error = 0;

	if (op != VPMU_OP_CONFIGURELOG || (cl != NULL && cl->logfd < 0))
		vpmu__sample_drain(vm);		/* the samples taken so far, too */
	else if (cl != NULL && cl->flags == 0)
		prep_error = vpmu__log_prepare(vm, cl->logfd, &prep);
	vpmu__vm_lock(vm);
	if (op == VPMU_OP_CONFIGURELOG && cl == NULL)
		error = EFAULT;
	else if ((error = vpmu__cred_check(cr)) != 0)
		;
	else if (op == VPMU_OP_CONFIGURELOG) {
		error = configurelog(vm, cr, cl, &prep, prep_error, &l);
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
	vpmu__log_discard(prep);		/* a log no owner took */
	if (l == NULL)
		return (error);
	if ((error = closing ? vpmu__log_finish(l) : flush_wait(l, ticket)) != 0) {
		vpmu__vm_lock(vm);
		vm->stats.syscall_errors++;
		vpmu__vm_unlock(vm);
	}
	return (error);
}
