/*
 * test_nolock_syscalls.c -- issue 33, item 4: no system call, thread
 * creation or sleep runs under the VM lock.
 *
 * Two checks, both of "the calling thread holds the VM lock"
 * (vpmu__vm_held(): the lock word holds its holder):
 *  - a source of the test's own records every hook's call: supports(),
 *    open() and close(), which are system calls for perf (supports() and
 *    open() call perf_event_open, close() and supports() close), must come
 *    without the lock; the others on an open counter (enable, disable,
 *    read, set_period) are counted only: perf makes them one read(2) or
 *    ioctl(2) each with the lock held, the one exception the library
 *    keeps (vpmu_source(3), docs/architecture.md), since the counts they
 *    return or stop are those of the exit being handled under the lock;
 *  - the program is linked with -Wl,--wrap for the system calls libvpmu
 *    makes (write, read, close, ioctl, syscall, fcntl, eventfd, poll,
 *    pthread_create, nanosleep, clock_nanosleep, and clock_gettime of a
 *    CPU-time clock): one the test's thread (every call into libvpmu, the
 *    vCPUs' runs) makes while it holds the lock is counted.
 * The scenario goes through what opens and closes host counters: PMCSTART
 * of system and process PMCs, a switch-in, a guest's EVTSEL and
 * GLOBAL_CTRL writes and a new event, rotations of the multiplexer at
 * exits, a sampling PMC (the sweeper started, woken by full rings), a
 * log, a save and a restore into another VM, releases and destroys.
 */
#include "fixture.h"

#include <poll.h>
#include <pthread.h>
#include <sys/eventfd.h>
#include <time.h>

#include <vpmu/model.h>
#include <vpmu/pv.h>
#include <vpmu/snapshot.h>

#include "internal.h"
#include "guest_msr.h"

/* ---- the VMs watched, and what was seen under their locks -------------- */

static struct vpmu_vm *watched[2];
static pthread_t test_thread;
static int nviolations;
static char violation[256];

static bool
held(void)
{
	unsigned i;

	/*
	 * The test's thread makes every call into libvpmu (and runs the
	 * vCPUs); libvpmu's own threads (the sweeper, the log writers) are
	 * not asked, so that none reads a VM the test's thread frees.
	 */
	if (!pthread_equal(pthread_self(), test_thread))
		return (false);
	for (i = 0; i < VPMU_ARRAY_SIZE(watched); i++)
		if (watched[i] != NULL && vpmu__vm_held(watched[i]))
			return (true);
	return (false);
}

static void
seen(const char *what)
{
	if (!held())
		return;
	if (nviolations++ == 0)
		snprintf(violation, sizeof(violation), "%s under the VM lock", what);
}

/* ---- the system calls ---------------------------------------------------- */

ssize_t	__real_write(int, const void *, size_t);
ssize_t	__real_read(int, void *, size_t);
int	__real_close(int);
int	__real_ioctl(int, unsigned long, void *);
long	__real_syscall(long, long, long, long, long, long, long);
int	__real_fcntl(int, int, long);
int	__real_eventfd(unsigned, int);
int	__real_poll(struct pollfd *, nfds_t, int);
int	__real_pthread_create(pthread_t *, const pthread_attr_t *, void *(*)(void *), void *);
int	__real_nanosleep(const struct timespec *, struct timespec *);
int	__real_clock_nanosleep(clockid_t, int, const struct timespec *, struct timespec *);
int	__real_clock_gettime(clockid_t, struct timespec *);

ssize_t	__wrap_write(int, const void *, size_t);
ssize_t	__wrap_read(int, void *, size_t);
int	__wrap_close(int);
int	__wrap_ioctl(int, unsigned long, ...);
long	__wrap_syscall(long, ...);
int	__wrap_fcntl(int, int, ...);
int	__wrap_eventfd(unsigned, int);
int	__wrap_poll(struct pollfd *, nfds_t, int);
int	__wrap_pthread_create(pthread_t *, const pthread_attr_t *, void *(*)(void *), void *);
int	__wrap_nanosleep(const struct timespec *, struct timespec *);
int	__wrap_clock_nanosleep(clockid_t, int, const struct timespec *, struct timespec *);
int	__wrap_clock_gettime(clockid_t, struct timespec *);

ssize_t __wrap_write(int fd, const void *p, size_t n) { seen("write(2)"); return (__real_write(fd, p, n)); }
ssize_t __wrap_read(int fd, void *p, size_t n) { seen("read(2)"); return (__real_read(fd, p, n)); }
int __wrap_close(int fd) { seen("close(2)"); return (__real_close(fd)); }
int __wrap_eventfd(unsigned v, int fl) { seen("eventfd(2)"); return (__real_eventfd(v, fl)); }
int __wrap_poll(struct pollfd *p, nfds_t n, int t) { seen("poll(2)"); return (__real_poll(p, n, t)); }

int
__wrap_ioctl(int fd, unsigned long req, ...)
{
	va_list ap;
	void *arg;

	va_start(ap, req);
	arg = va_arg(ap, void *);
	va_end(ap);
	seen("ioctl(2)");
	return (__real_ioctl(fd, req, arg));
}

long
__wrap_syscall(long nr, ...)
{
	va_list ap;
	long a[6];
	unsigned i;

	va_start(ap, nr);
	for (i = 0; i < 6; i++)
		a[i] = va_arg(ap, long);
	va_end(ap);
	seen("syscall(2)");
	return (__real_syscall(nr, a[0], a[1], a[2], a[3], a[4], a[5]));
}

int
__wrap_fcntl(int fd, int cmd, ...)
{
	va_list ap;
	long arg;

	va_start(ap, cmd);
	arg = va_arg(ap, long);
	va_end(ap);
	seen("fcntl(2)");
	return (__real_fcntl(fd, cmd, arg));
}

int
__wrap_pthread_create(pthread_t *t, const pthread_attr_t *a, void *(*fn)(void *), void *arg)
{
	seen("pthread_create");
	return (__real_pthread_create(t, a, fn, arg));
}

int
__wrap_nanosleep(const struct timespec *req, struct timespec *rem)
{
	seen("nanosleep(2)");
	return (__real_nanosleep(req, rem));
}

int
__wrap_clock_nanosleep(clockid_t c, int fl, const struct timespec *req, struct timespec *rem)
{
	seen("clock_nanosleep(2)");
	return (__real_clock_nanosleep(c, fl, req, rem));
}

/* The vDSO answers the wall clocks without a system call; CPU time is one. */
int
__wrap_clock_gettime(clockid_t c, struct timespec *ts)
{
	if (c == CLOCK_THREAD_CPUTIME_ID || c == CLOCK_PROCESS_CPUTIME_ID)
		seen("clock_gettime(2) of a CPU-time clock");
	return (__real_clock_gettime(c, ts));
}

/* ---- the source ------------------------------------------------------------- */

struct lctr {
	bool enabled;
	uint64_t value;
};

static int nopen, nclose, nsupports, nraw, nother;

static void
hook(const char *name, int *n, bool syscall)
{
	char what[64];

	(*n)++;
	if (syscall) {
		snprintf(what, sizeof(what), "the source's %s()", name);
		seen(what);
	}
}

static int
l_init(void **statep, unsigned nvcpus, void *arg)
{
	(void)nvcpus;
	(void)arg;
	*statep = NULL;
	return (0);
}

static void l_fini(void *state) { (void)state; }
static unsigned l_capacity(void *state) { (void)state; return (2); }

/*
 * perf's supports() opens and closes a counter for an event it has not
 * tried (every time for a raw one): a system call, so never under the
 * lock.  Raw events are ones it cannot count: their PMCs stay at their
 * values, as a refusal from perf leaves them.
 */
static int
l_supports(void *state, const struct vpmu_event_spec *ev, char *why, size_t whylen)
{
	(void)state;
	hook("supports", &nsupports, true);
	if (ev->event == VPMU_EV_RAW) {
		nraw++;
		snprintf(why, whylen, "not here");
		return (EOPNOTSUPP);
	}
	return (0);
}

static int
l_open(void *state, unsigned vcpu, pid_t tid, const struct vpmu_event_spec *ev, void **ctrp)
{
	(void)state;
	(void)vcpu;
	(void)tid;
	(void)ev;
	hook("open", &nopen, true);
	return ((*ctrp = calloc(1, sizeof(struct lctr))) != NULL ? 0 : ENOMEM);
}

static void
l_close(void *state, void *ctr)
{
	(void)state;
	hook("close", &nclose, true);
	free(ctr);
}

static int
l_switch(void *ctr, bool on)
{
	hook(on ? "enable" : "disable", &nother, false);
	((struct lctr *)ctr)->enabled = on;
	return (0);
}

static int l_enable(void *state, void *ctr) { (void)state; return (l_switch(ctr, true)); }
static int l_disable(void *state, void *ctr) { (void)state; return (l_switch(ctr, false)); }

/* An enabled counter counts 500 events per look: samples come on their own. */
static int
l_read(void *state, void *ctr, struct vpmu_count *out)
{
	struct lctr *c = ctr;

	(void)state;
	hook("read", &nother, false);
	if (c->enabled)
		c->value += 500;
	out->value = c->value;
	out->time_enabled = out->time_running = 0;
	return (0);
}

static int
l_set_period(void *state, void *ctr, uint64_t period)
{
	(void)state;
	(void)ctr;
	(void)period;
	hook("set_period", &nother, false);
	return (0);
}

static const struct vpmu_source_ops lsrc = {
	.name = "locktest",
	.init = l_init, .fini = l_fini, .capacity = l_capacity, .supports = l_supports,
	.open = l_open, .close = l_close, .enable = l_enable, .disable = l_disable,
	.read = l_read, .set_period = l_set_period,
};

/* ---- the scenario ----------------------------------------------------------- */

#define MSR_PERFEVTSEL0		0x186u
#define MSR_GLOBAL_CTRL		0x38Fu

static vpmu_vm *
lock_vm(unsigned slot)
{
	struct vpmu_model model;
	vpmu_config *cfg;
	vpmu_vm *vm;

	assert_int_equal(vpmu_model_parse("intel-v2", &model, NULL, 0), 0);
	assert_int_equal(vpmu_config_create(&cfg), 0);
	assert_int_equal(vpmu_config_set_model(cfg, &model), 0);
	assert_int_equal(vpmu_config_set_vcpus(cfg, 2), 0);
	assert_int_equal(vpmu_config_set_source(cfg, &lsrc, NULL), 0);
	assert_int_equal(vpmu_config_set_mux_interval(cfg, 1000), 0);
	assert_int_equal(vpmu_config_set_tunable(cfg, "nsamples", 16), 0);
	assert_int_equal(vpmu_vm_create(cfg, &vm), 0);
	vpmu_config_destroy(cfg);
	watched[slot] = vm;
	assert_int_equal(vpmu_proc_create(vm, &ROOT, 0), 0);
	return (vm);
}

/* A run of ns on cpu, through the exit contract. */
static void
run(vpmu_vm *vm, unsigned cpu, uint64_t ns)
{
	struct vpmu_entry e;
	struct vpmu_exit x;
	struct vpmu_regs r;

	memset(&x, 0, sizeof(x));
	memset(&r, 0, sizeof(r));
	r.rip = 0x1000;
	x.reason = VPMU_EXIT_OTHER;
	x.flags = VPMU_EXITF_RAN;
	x.ran_ns = ns;
	x.regs = &r;
	assert_int_equal(vpmu_vcpu_enter(vm, cpu, &e), 0);
	assert_int_equal(vpmu_vcpu_exit(vm, cpu, &x), 0);
}

static vpmu_pmc_id
sys_pmc(vpmu_vm *vm, unsigned cpu, uint32_t mode, uint32_t event)
{
	struct vpmu_pmc_alloc a = { .cpu = cpu, .cls = VPMU_CLASS_PV, .event = event,
	    .mode = mode, .count = 1000 };

	assert_int_equal(vpmu_pmc_allocate(vm, &ROOT, &a), 0);
	assert_int_equal(vpmu_pmc_start(vm, &ROOT, a.pmcid), 0);
	return (a.pmcid);
}

static void
no_syscall_under_the_vm_lock(void **state)
{
	struct vpmu_pmc_alloc pa = { .cpu = VPMU_CPU_ANY, .cls = VPMU_CLASS_PV,
	    .event = VPMU_EV_BRANCHES, .mode = VPMU_MODE_TC };
	struct vpmu_pmc_alloc ra = { .cpu = 0, .cls = VPMU_CLASS_PV, .event = VPMU_EV_RAW,
	    .raw = 0x0124, .mode = VPMU_MODE_SC, .count = 7 };
	struct vpmu_op_configurelog cl = { .flags = 0 };
	vpmu_vm *vm, *vm2;
	vpmu_pmc_id ids[4];
	char why[64];
	uint64_t v;
	size_t len = 1 << 20;
	void *blob = malloc(len);
	unsigned i;
	int devnull;

	(void)state;
	test_thread = pthread_self();
	assert_non_null(blob);
	vm = lock_vm(0);
	assert_true((devnull = open("/dev/null", O_WRONLY)) >= 0);
	cl.logfd = devnull;
	assert_int_equal(vpmu_pv_set_logfd(vm, 3, devnull), 0);	/* saved as 3 */
	assert_int_equal(vpmu_vm_op(vm, &ROOT, VPMU_OP_CONFIGURELOG, &cl), 0);

	/* Four system PMCs on vCPU 0 for two slots: rotations at exits. */
	for (i = 0; i < 3; i++)
		ids[i] = sys_pmc(vm, 0, VPMU_MODE_SC, VPMU_EV_INSTRUCTIONS + i);
	ids[3] = sys_pmc(vm, 0, VPMU_MODE_SS, VPMU_EV_INSTRUCTIONS);	/* the sweeper */
	for (i = 0; i < 64; i++)
		run(vm, 0, 2000);
	assert_int_equal(vpmu_pmc_read(vm, &ROOT, ids[0], &v), 0);
	assert_int_not_equal(v, 0);

	/* A process PMC, switched in on vCPU 1. */
	assert_int_equal(vpmu_pmc_allocate(vm, &ROOT, &pa), 0);
	assert_int_equal(vpmu_pmc_attach(vm, &ROOT, pa.pmcid, ROOT.pid), 0);
	assert_int_equal(vpmu_pmc_start(vm, &ROOT, pa.pmcid), 0);
	assert_int_equal(vpmu_proc_switch_in(vm, 1, ROOT.pid, 1), 0);
	run(vm, 1, 2000);

	/* The guest's counter 0: programmed, given another event, run. */
	assert_int_equal(MSR_WRITE(vm, 1, MSR_PERFEVTSEL0, 0x4300C0), VPMU_MSR_OK);
	assert_int_equal(MSR_WRITE(vm, 1, MSR_GLOBAL_CTRL, 0x1), VPMU_MSR_OK);
	run(vm, 1, 2000);
	assert_int_equal(MSR_WRITE(vm, 1, MSR_PERFEVTSEL0, 0x4300C4), VPMU_MSR_OK);
	run(vm, 1, 2000);

	/*
	 * Events the source cannot count, asked about before the lock:
	 * a system PMC's (EOPNOTSUPP, the source's reason; its count stays)
	 * and the one the guest's counter 0 is given.
	 */
	assert_int_equal(vpmu_pmc_allocate(vm, &ROOT, &ra), 0);
	assert_int_equal(vpmu_pmc_get_unsupported(vm, ROOT.pid, ra.pmcid, why, sizeof(why)),
	    EOPNOTSUPP);
	assert_string_equal(why, "not here");
	assert_int_equal(vpmu_pmc_start(vm, &ROOT, ra.pmcid), 0);
	assert_int_equal(MSR_WRITE(vm, 1, MSR_PERFEVTSEL0, 0x430124), VPMU_MSR_OK);
	run(vm, 0, 2000);
	run(vm, 1, 2000);
	assert_int_equal(nraw, 2);
	assert_int_equal(vpmu_pmc_read(vm, &ROOT, ra.pmcid, &v), 0);
	assert_int_equal(v, 7);
	assert_int_equal(vpmu_pmc_release(vm, &ROOT, ra.pmcid), 0);

	/* Saved, and restored into a VM like it. */
	assert_int_equal(vpmu_vm_save(vm, blob, &len), 0);
	vm2 = lock_vm(1);
	assert_int_equal(vpmu_proc_exit(vm2, ROOT.pid), 0);
	assert_int_equal(vpmu_pv_set_logfd(vm2, 3, devnull), 0);
	assert_int_equal(vpmu_vm_restore(vm2, blob, len), 0);
	run(vm2, 0, 2000);
	vpmu_vm_destroy(vm2);
	watched[1] = NULL;

	assert_int_equal(vpmu_vm_op(vm, &ROOT, VPMU_OP_FLUSHLOG, NULL), 0);
	for (i = 0; i < 4; i++)
		assert_int_equal(vpmu_pmc_release(vm, &ROOT, ids[i]), 0);
	assert_int_equal(vpmu_proc_switch_out(vm, 1), 0);
	assert_int_equal(vpmu_proc_exit(vm, ROOT.pid), 0);
	vpmu_vm_destroy(vm);
	watched[0] = NULL;
	__real_close(devnull);
	free(blob);

	print_message("%d supports, %d opens, %d closes, %d other hooks\n", nsupports, nopen,
	    nclose, nother);
	assert_true(nsupports >= 4);		/* asked, opened and closed */
	assert_true(nopen >= 8);
	assert_int_equal(nclose, nopen);
	if (nviolations != 0)
		fail_msg("%d calls under the VM lock, the first: %s", nviolations, violation);
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(no_syscall_under_the_vm_lock),
	};

	return (cmocka_run_group_tests(tests, NULL, NULL));
}
