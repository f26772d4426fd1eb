/*
 * test_source_perf.c -- the "perf" host counter source, against the real
 * kernel: software events and msr/tsc count here; hardware events are
 * skipped with supports()' reason on a host without a PMU.
 */
#include <sys/mman.h>
#include <sys/syscall.h>
#include <sys/types.h>

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <pthread.h>
#include <sched.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include <x86intrin.h>

#include <cmocka.h>

#include <vpmu/source.h>

#define P	(&vpmu_source_perf)
#define NVCPUS	2

/* Where busy loops put their work, so the compiler keeps it. */
static volatile unsigned sink;

static uint64_t
ns_of(clockid_t clk)
{
	struct timespec ts;

	clock_gettime(clk, &ts);
	return ((uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec);
}

/* Burn ms of this thread's CPU time. */
static void
spin_ms(unsigned ms)
{
	uint64_t end = ns_of(CLOCK_THREAD_CPUTIME_ID) + ms * 1000000ull;
	unsigned i;

	while (ns_of(CLOCK_THREAD_CPUTIME_ID) < end)
		for (i = 0; i < 10000; i++)
			sink += i;
}

static struct vpmu_event_spec
spec(uint32_t event, uint32_t flags)
{
	struct vpmu_event_spec ev;

	memset(&ev, 0, sizeof(ev));
	ev.event = event;
	ev.flags = flags;
	return (ev);
}

/* Open ev on tid for vCPU 0 or fail the test. */
static void *
open_ok(void *st, pid_t tid, uint32_t event, uint32_t flags)
{
	struct vpmu_event_spec ev = spec(event, flags);
	void *ctr = NULL;

	assert_int_equal(P->open(st, 0, tid, &ev, &ctr), 0);
	assert_non_null(ctr);
	return (ctr);
}

static struct vpmu_count
read_ok(void *st, void *ctr)
{
	struct vpmu_count c;

	memset(&c, 0xa5, sizeof(c));
	assert_int_equal(P->read(st, ctr, &c), 0);
	return (c);
}

/*
 * A task clock against the thread's CPU time cpu and the wall time wall
 * of the same window: perf's task-clock follows the scheduler's clock,
 * which on a guest whose host steals time (a loaded nested host) runs
 * ahead of the thread's CPU time, which leaves stolen time out; it never
 * runs ahead of the wall clock.  So: at least 90 % of the CPU time, at
 * most the wall time and 10 %.
 */
static void
assert_task_clock(uint64_t got, uint64_t cpu, uint64_t wall)
{
	print_message("got %llu, thread CPU time %llu, wall time %llu\n",
	    (unsigned long long)got, (unsigned long long)cpu, (unsigned long long)wall);
	assert_true(got * 10 >= cpu * 9);
	assert_true(got * 10 <= wall * 11);
}

static int
setup(void **state)
{
	return (P->init(state, NVCPUS, NULL));
}

static int
teardown(void **state)
{
	P->fini(*state);
	return (0);
}

/* ---- the ops table and life cycle ------------------------------------ */

static void
ops_table_complete(void **state)
{
	(void)state;
	assert_string_equal(P->name, "perf");
	assert_non_null(P->init);
	assert_non_null(P->fini);
	assert_non_null(P->capacity);
	assert_non_null(P->supports);
	assert_non_null(P->open);
	assert_non_null(P->close);
	assert_non_null(P->enable);
	assert_non_null(P->disable);
	assert_non_null(P->read);
	assert_non_null(P->set_period);
}

static void
init_EINVAL(void **state)
{
	void *st = (void *)1;

	(void)state;
	assert_int_equal(P->init(NULL, 1, NULL), EINVAL);
	assert_int_equal(P->init(&st, 0, NULL), EINVAL);
	assert_int_equal(P->init(&st, 1, &st), EINVAL);
	assert_ptr_equal(st, (void *)1);	/* untouched on failure */
	assert_int_equal(P->init(&st, 1, NULL), 0);
	P->fini(st);
	P->fini(NULL);
}

static void
capacity_without_hardware_pmu_is_unlimited(void **state)
{
	assert_int_equal(P->capacity(NULL), 0);
	if (access("/sys/bus/event_source/devices/cpu", F_OK) == 0) {
		print_message("host has a core PMU: capacity %u\n",
		    P->capacity(*state));
		return;
	}
	assert_int_equal(P->capacity(*state), 0);
}

/* ---- supports() ------------------------------------------------------ */

static void
supports_EINVAL(void **state)
{
	struct vpmu_event_spec ev = spec(VPMU_EV_TASK_CLOCK, 0);
	char why[128];

	assert_int_equal(P->supports(NULL, &ev, why, sizeof(why)), EINVAL);
	assert_int_equal(P->supports(*state, NULL, why, sizeof(why)), EINVAL);
}

static void
supports_EOPNOTSUPP_unknown_event(void **state)
{
	static const uint32_t bad[] = { 0, 0x06, 0x0f, 0x15, 0x99, 0xfe,
	    0x100, UINT32_MAX };
	struct vpmu_event_spec ev;
	char why[128];
	size_t i;

	for (i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		ev = spec(bad[i], 0);
		why[0] = '\0';
		assert_int_equal(P->supports(*state, &ev, why, sizeof(why)),
		    EOPNOTSUPP);
		assert_non_null(strstr(why, "unknown event"));
		assert_int_equal(P->open(*state, 0, 0, &ev, &(void *){ NULL }),
		    EOPNOTSUPP);
	}
}

static void
supports_EOPNOTSUPP_software_qualifiers(void **state)
{
	struct vpmu_event_spec ev;
	char why[160];

	ev = spec(VPMU_EV_TASK_CLOCK, VPMU_EVF_EDGE);
	assert_int_equal(P->supports(*state, &ev, why, sizeof(why)), EOPNOTSUPP);
	assert_non_null(strstr(why, "hardware events only"));
	ev = spec(VPMU_EV_PAGE_FAULTS, VPMU_EVF_INV);
	assert_int_equal(P->supports(*state, &ev, why, sizeof(why)), EOPNOTSUPP);
	assert_non_null(strstr(why, "hardware events only"));
	ev = spec(VPMU_EV_CONTEXT_SWITCHES, 0);
	ev.cmask = 1;
	assert_int_equal(P->supports(*state, &ev, why, sizeof(why)), EOPNOTSUPP);
	assert_non_null(strstr(why, "hardware events only"));
	ev = spec(VPMU_EV_TSC, VPMU_EVF_EDGE);
	assert_int_equal(P->supports(*state, &ev, why, sizeof(why)), EOPNOTSUPP);
	/* EDGE etc. on a software event never reach the kernel. */
	assert_int_equal(P->open(*state, 0, 0, &ev, &(void *){ NULL }),
	    EOPNOTSUPP);
}

static void
supports_EOPNOTSUPP_bad_qualifiers(void **state)
{
	struct vpmu_event_spec ev;
	char why[160];

	ev = spec(VPMU_EV_RAW, 0);
	ev.raw = 0xc0;
	ev.cmask = 256;
	assert_int_equal(P->supports(*state, &ev, why, sizeof(why)), EOPNOTSUPP);
	assert_non_null(strstr(why, "exceeds 8 bits"));
	ev = spec(VPMU_EV_TASK_CLOCK, 0x10);
	assert_int_equal(P->supports(*state, &ev, why, sizeof(why)), EOPNOTSUPP);
	assert_non_null(strstr(why, "unknown flags 0x10"));
	ev = spec(VPMU_EV_INSTRUCTIONS, UINT32_MAX);
	ev.cmask = UINT32_MAX;
	ev.raw = UINT64_MAX;
	assert_int_equal(P->supports(*state, &ev, why, sizeof(why)), EOPNOTSUPP);
}

/* The clocks count time at every level; USR or OS alone would be a lie. */
static void
supports_EOPNOTSUPP_clock_privilege_split(void **state)
{
	struct vpmu_event_spec ev;
	char why[160];

	ev = spec(VPMU_EV_TASK_CLOCK, VPMU_EVF_USR);
	assert_int_equal(P->supports(*state, &ev, why, sizeof(why)), EOPNOTSUPP);
	assert_non_null(strstr(why, "every privilege level"));
	ev = spec(VPMU_EV_CPU_CLOCK, VPMU_EVF_OS);
	assert_int_equal(P->supports(*state, &ev, why, sizeof(why)), EOPNOTSUPP);
	ev = spec(VPMU_EV_TASK_CLOCK, VPMU_EVF_USR | VPMU_EVF_OS);
	assert_int_equal(P->supports(*state, &ev, why, sizeof(why)), 0);
}

static void
supports_why_is_bounded(void **state)
{
	struct vpmu_event_spec ev = spec(0x99, 0);
	char why[8];

	memset(why, 'x', sizeof(why));
	assert_int_equal(P->supports(*state, &ev, why, 1), EOPNOTSUPP);
	assert_int_equal(why[0], '\0');
	assert_int_equal(why[1], 'x');
	assert_int_equal(P->supports(*state, &ev, why, 0), EOPNOTSUPP);
	assert_int_equal(P->supports(*state, &ev, NULL, 100), EOPNOTSUPP);
	ev = spec(VPMU_EV_TASK_CLOCK, 0);
	assert_int_equal(P->supports(*state, &ev, NULL, 0), 0);
}

/* Any bytes as a spec: 0 or EOPNOTSUPP, and a terminated reason. */
static void
supports_survives_random_specs(void **state)
{
	static const uint32_t known[] = { VPMU_EV_INSTRUCTIONS, VPMU_EV_TSC,
	    VPMU_EV_TASK_CLOCK, VPMU_EV_PAGE_FAULTS, VPMU_EV_RAW };
	struct vpmu_event_spec ev;
	uint64_t x = 0x9e3779b97f4a7c15ull;
	char why[64];
	int i, err;

	for (i = 0; i < 20000; i++) {
		/* xorshift64: reproducible junk */
		x ^= x << 13;
		x ^= x >> 7;
		x ^= x << 17;
		memcpy(&ev, &x, sizeof(x));
		ev.raw = x * 31;
		ev.cmask = (uint32_t)(x >> 40) & (i & 1 ? 0xff : 0xffff);
		ev.flags = (uint32_t)(x >> 20) & (i & 2 ? 0xf : 0xff);
		if (i & 4)
			ev.event = known[(x >> 8) % 5];
		memset(why, 'x', sizeof(why));
		err = P->supports(*state, &ev, why, sizeof(why));
		assert_true(err == 0 || err == EOPNOTSUPP);
		assert_non_null(memchr(why, '\0', sizeof(why)));
	}
}

/* Print every event's answer: the record of what this host can count. */
static void
supports_software_events(void **state)
{
	static const uint32_t sw[] = { VPMU_EV_TASK_CLOCK, VPMU_EV_CPU_CLOCK,
	    VPMU_EV_PAGE_FAULTS, VPMU_EV_CONTEXT_SWITCHES,
	    VPMU_EV_CPU_MIGRATIONS };
	static const uint32_t all[] = { VPMU_EV_INSTRUCTIONS, VPMU_EV_BRANCHES,
	    VPMU_EV_CYCLES, VPMU_EV_REF_CYCLES, VPMU_EV_TSC, VPMU_EV_TASK_CLOCK,
	    VPMU_EV_CPU_CLOCK, VPMU_EV_PAGE_FAULTS, VPMU_EV_CONTEXT_SWITCHES,
	    VPMU_EV_CPU_MIGRATIONS, VPMU_EV_RAW };
	struct vpmu_event_spec ev;
	char why[200];
	size_t i;
	int err;

	for (i = 0; i < sizeof(all) / sizeof(all[0]); i++) {
		ev = spec(all[i], 0);
		ev.raw = 0xc0;
		err = P->supports(*state, &ev, why, sizeof(why));
		print_message("supports(0x%02x): %d, %s\n", all[i], err, why);
		/* Asked again, the kept answer is the same. */
		assert_int_equal(P->supports(*state, &ev, NULL, 0), err);
	}
	/*
	 * Software events count here.  Counting kernel mode may need
	 * privilege (perf_event_paranoid >= 2 without CAP_PERFMON): then the
	 * answer must say so.  The clocks never need it.
	 */
	for (i = 0; i < sizeof(sw) / sizeof(sw[0]); i++) {
		ev = spec(sw[i], 0);
		err = P->supports(*state, &ev, why, sizeof(why));
		if (sw[i] == VPMU_EV_TASK_CLOCK || sw[i] == VPMU_EV_CPU_CLOCK)
			assert_int_equal(err, 0);
		else if (err != 0) {
			assert_int_equal(err, EOPNOTSUPP);
			assert_non_null(strstr(why, "EACCES"));
			assert_non_null(strstr(why, "perf_event_paranoid"));
			ev = spec(sw[i], VPMU_EVF_USR);
			assert_int_equal(P->supports(*state, &ev, why,
			    sizeof(why)), 0);
		}
		ev = spec(sw[i], VPMU_EVF_USR | VPMU_EVF_OS);
		assert_int_equal(P->supports(*state, &ev, NULL, 0), err);
	}
}

/* ---- open() ---------------------------------------------------------- */

static void
open_EINVAL(void **state)
{
	struct vpmu_event_spec ev = spec(VPMU_EV_TASK_CLOCK, 0);
	void *ctr = NULL;

	assert_int_equal(P->open(NULL, 0, 0, &ev, &ctr), EINVAL);
	assert_int_equal(P->open(*state, 0, 0, NULL, &ctr), EINVAL);
	assert_int_equal(P->open(*state, 0, 0, &ev, NULL), EINVAL);
	assert_int_equal(P->open(*state, NVCPUS, 0, &ev, &ctr), EINVAL);
	assert_int_equal(P->open(*state, UINT_MAX, 0, &ev, &ctr), EINVAL);
	assert_int_equal(P->open(*state, 0, -1, &ev, &ctr), EINVAL);
	assert_int_equal(P->open(*state, 0, INT_MIN, &ev, &ctr), EINVAL);
	assert_null(ctr);
}

static void
open_ESRCH(void **state)
{
	struct vpmu_event_spec ev = spec(VPMU_EV_TASK_CLOCK, 0);
	void *ctr = NULL;

	/* Above any pid_max (at most 2^22). */
	assert_int_equal(P->open(*state, 0, INT_MAX, &ev, &ctr), ESRCH);
	assert_null(ctr);
}

static void
counter_hooks_EINVAL(void **state)
{
	void *ctr = open_ok(*state, 0, VPMU_EV_TASK_CLOCK, 0);
	struct vpmu_count c;

	assert_int_equal(P->enable(*state, NULL), EINVAL);
	assert_int_equal(P->enable(NULL, ctr), EINVAL);
	assert_int_equal(P->disable(*state, NULL), EINVAL);
	assert_int_equal(P->read(*state, NULL, &c), EINVAL);
	assert_int_equal(P->read(*state, ctr, NULL), EINVAL);
	assert_int_equal(P->set_period(*state, NULL, 1000), EINVAL);
	P->close(*state, NULL);
	P->close(*state, ctr);
}

/* ---- counting -------------------------------------------------------- */

static void
task_clock_matches_thread_cputime(void **state)
{
	void *ctr = open_ok(*state, 0, VPMU_EV_TASK_CLOCK, 0);
	struct vpmu_count r0, r1;
	uint64_t t0, t1, w0, w1;

	assert_int_equal(P->enable(*state, ctr), 0);
	r0 = read_ok(*state, ctr);
	w0 = ns_of(CLOCK_MONOTONIC);
	t0 = ns_of(CLOCK_THREAD_CPUTIME_ID);
	spin_ms(200);
	t1 = ns_of(CLOCK_THREAD_CPUTIME_ID);
	w1 = ns_of(CLOCK_MONOTONIC);
	r1 = read_ok(*state, ctr);
	assert_task_clock(r1.value - r0.value, t1 - t0, w1 - w0);
	P->close(*state, ctr);
}

static void
disable_stops_counting(void **state)
{
	void *ctr = open_ok(*state, 0, VPMU_EV_TASK_CLOCK, 0);
	struct vpmu_count a, b, c;

	assert_int_equal(P->enable(*state, ctr), 0);
	spin_ms(20);
	assert_int_equal(P->disable(*state, ctr), 0);
	a = read_ok(*state, ctr);
	assert_true(a.value >= 10000000);	/* most of 20 ms */
	spin_ms(20);
	b = read_ok(*state, ctr);
	assert_int_equal(a.value, b.value);
	assert_int_equal(a.time_enabled, b.time_enabled);
	assert_int_equal(a.time_running, b.time_running);
	/* And enabling again resumes from there: totals since open. */
	assert_int_equal(P->enable(*state, ctr), 0);
	spin_ms(20);
	c = read_ok(*state, ctr);
	assert_true(c.value >= b.value + 10000000);
	P->close(*state, ctr);
}

static void
times_enabled_and_running(void **state)
{
	void *ctr = open_ok(*state, 0, VPMU_EV_TASK_CLOCK, 0);
	struct vpmu_count a, b;

	/* Disabled at open: nothing counted, no time. */
	a = read_ok(*state, ctr);
	assert_int_equal(a.value, 0);
	assert_int_equal(a.time_enabled, 0);
	assert_int_equal(a.time_running, 0);
	assert_int_equal(P->enable(*state, ctr), 0);
	spin_ms(30);
	a = read_ok(*state, ctr);
	assert_true(a.time_enabled > 0);
	assert_true(a.time_running > 0);
	assert_true(a.time_running <= a.time_enabled);
	spin_ms(30);
	b = read_ok(*state, ctr);
	assert_true(b.time_enabled > a.time_enabled);
	assert_true(b.time_running > a.time_running);
	/* A software event is never multiplexed out: running = enabled. */
	assert_int_equal(b.time_running, b.time_enabled);
	P->close(*state, ctr);
}

/* User faults count as USR; faults the kernel takes in read(2) as OS. */
static void
page_faults_honour_usr_and_os(void **state)
{
	enum { NPAGES = 64 };
	void *usr, *os, *all;
	size_t pg = (size_t)sysconf(_SC_PAGESIZE), len = NPAGES * pg, i;
	struct vpmu_count u0, o0, u1, o1, u2, o2, a2;
	struct vpmu_event_spec ev = spec(VPMU_EV_PAGE_FAULTS, VPMU_EVF_OS);
	volatile char *mem;
	char *kmem, why[200];
	int fd;

	if (P->supports(*state, &ev, why, sizeof(why)) != 0) {
		printf("SKIP: %s\n", why);
		skip();
	}
	usr = open_ok(*state, 0, VPMU_EV_PAGE_FAULTS, VPMU_EVF_USR);
	os = open_ok(*state, 0, VPMU_EV_PAGE_FAULTS, VPMU_EVF_OS);
	all = open_ok(*state, 0, VPMU_EV_PAGE_FAULTS, 0);
	mem = mmap(NULL, len, PROT_READ | PROT_WRITE,
	    MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	kmem = mmap(NULL, len, PROT_READ | PROT_WRITE,
	    MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	assert_true(mem != MAP_FAILED && kmem != MAP_FAILED);
	fd = open("/dev/zero", O_RDONLY);
	assert_true(fd >= 0);
	assert_int_equal(P->enable(*state, usr), 0);
	assert_int_equal(P->enable(*state, os), 0);
	assert_int_equal(P->enable(*state, all), 0);
	u0 = read_ok(*state, usr);
	o0 = read_ok(*state, os);
	for (i = 0; i < NPAGES; i++)
		mem[i * pg] = 1;
	u1 = read_ok(*state, usr);
	o1 = read_ok(*state, os);
	assert_true(read(fd, kmem, len) == (ssize_t)len);
	u2 = read_ok(*state, usr);
	o2 = read_ok(*state, os);
	a2 = read_ok(*state, all);
	print_message("user touch: usr %llu os %llu; read(2): usr %llu os %llu\n",
	    (unsigned long long)(u1.value - u0.value),
	    (unsigned long long)(o1.value - o0.value),
	    (unsigned long long)(u2.value - u1.value),
	    (unsigned long long)(o2.value - o1.value));
	assert_true(u1.value - u0.value >= NPAGES);
	assert_true(o1.value - o0.value < NPAGES / 2);
	assert_true(o2.value - o1.value >= NPAGES / 2);
	assert_true(u2.value - u1.value < NPAGES / 2);
	assert_true(a2.value >= u2.value + o2.value - 8);
	close(fd);
	munmap((void *)mem, len);
	munmap(kmem, len);
	P->close(*state, usr);
	P->close(*state, os);
	P->close(*state, all);
}

static void
tsc_counts_and_is_monotonic(void **state)
{
	struct vpmu_event_spec ev = spec(VPMU_EV_TSC, 0);
	struct vpmu_count prev, cur;
	uint64_t c0, c1;
	char why[200];
	void *ctr;
	int i;

	if (P->supports(*state, &ev, why, sizeof(why)) != 0) {
		printf("SKIP: %s\n", why);
		skip();
	}
	ctr = open_ok(*state, 0, VPMU_EV_TSC, 0);
	assert_int_equal(P->enable(*state, ctr), 0);
	c0 = __rdtsc();
	prev = read_ok(*state, ctr);
	for (i = 0; i < 5; i++) {
		spin_ms(5);
		cur = read_ok(*state, ctr);
		assert_true(cur.value > prev.value);
		prev = cur;
	}
	c1 = __rdtsc();
	/* Counted only while this thread ran: never more than the wall TSC. */
	print_message("tsc counted %llu, rdtsc advanced %llu\n",
	    (unsigned long long)prev.value, (unsigned long long)(c1 - c0));
	assert_true(prev.value <= (c1 - c0) + (c1 - c0) / 10);
	/* Not a sampling event: no period to set. */
	assert_int_equal(P->set_period(*state, ctr, 1000), EOPNOTSUPP);
	P->close(*state, ctr);
}

/*
 * Hardware events count the guest only (exclude_host).  Without a host
 * PMU this is a skip with supports()' reason, never a made-up count.
 */
static void
hw_instructions_or_skip(void **state)
{
	struct vpmu_event_spec ev = spec(VPMU_EV_INSTRUCTIONS, 0);
	struct vpmu_count c;
	char why[200];
	void *ctr = NULL;
	int err;

	if (P->supports(*state, &ev, why, sizeof(why)) != 0) {
		printf("SKIP: %s\n", why);
		/* open() refuses too: EACCES if that was the reason. */
		err = P->open(*state, 0, 0, &ev, &ctr);
		assert_true(err == EOPNOTSUPP ||
		    (err == EACCES && strstr(why, "EACCES") != NULL));
		assert_null(ctr);
		skip();
	}
	ctr = open_ok(*state, 0, VPMU_EV_INSTRUCTIONS, 0);
	assert_int_equal(P->enable(*state, ctr), 0);
	spin_ms(10);
	c = read_ok(*state, ctr);
	/*
	 * No guest ran on this thread, so the guest-only count is 0 (Intel:
	 * the counter is enabled only across VM entry; AMD: GuestOnly, which
	 * counts nothing while SVM is off).
	 */
	print_message("guest instructions on a thread running no guest: %llu\n",
	    (unsigned long long)c.value);
	assert_true(c.time_enabled > 0);
	assert_int_equal(c.value, 0);
	assert_int_equal(P->set_period(*state, ctr, 100000), 0);
	P->close(*state, ctr);
}

/* ---- another thread -------------------------------------------------- */

struct spinner {
	atomic_int	 tid;
	atomic_bool	 stop;
};

static void *
spinner_main(void *arg)
{
	struct spinner *s = arg;
	unsigned i;

	atomic_store(&s->tid, (int)syscall(SYS_gettid));
	while (!atomic_load(&s->stop))
		for (i = 0; i < 10000; i++)
			sink += i;
	return (NULL);
}

static void
other_thread_task_clock_is_theirs(void **state)
{
	struct spinner s = { 0 };
	struct vpmu_count r0, r1;
	struct timespec nap = { 0, 300 * 1000000 };
	uint64_t t0, t1, w0, w1, own0, own1, counted;
	clockid_t clk;
	pthread_t th;
	void *ctr;

	assert_int_equal(pthread_create(&th, NULL, spinner_main, &s), 0);
	while (atomic_load(&s.tid) == 0)
		sched_yield();
	assert_int_equal(pthread_getcpuclockid(th, &clk), 0);
	ctr = open_ok(*state, (pid_t)atomic_load(&s.tid), VPMU_EV_TASK_CLOCK, 0);
	assert_int_equal(P->enable(*state, ctr), 0);
	r0 = read_ok(*state, ctr);
	w0 = ns_of(CLOCK_MONOTONIC);
	t0 = ns_of(clk);
	own0 = ns_of(CLOCK_THREAD_CPUTIME_ID);
	nanosleep(&nap, NULL);		/* we sleep; it spins */
	own1 = ns_of(CLOCK_THREAD_CPUTIME_ID);
	t1 = ns_of(clk);
	w1 = ns_of(CLOCK_MONOTONIC);
	r1 = read_ok(*state, ctr);
	atomic_store(&s.stop, true);
	assert_int_equal(pthread_join(th, NULL), 0);
	counted = r1.value - r0.value;
	print_message("ours: %llu ns\n", (unsigned long long)(own1 - own0));
	assert_task_clock(counted, t1 - t0, w1 - w0);
	assert_true(counted > 10 * (own1 - own0));
	P->close(*state, ctr);
}

static void
set_period_EINVAL(void **state)
{
	void *ctr = open_ok(*state, 0, VPMU_EV_TASK_CLOCK, 0);

	assert_int_equal(P->set_period(*state, ctr, 0), EINVAL);
	assert_int_equal(P->set_period(*state, ctr, 1ull << 63), EINVAL);
	assert_int_equal(P->set_period(NULL, ctr, 1000), EINVAL);
	/* A clock samples by time: a 1 s period. */
	assert_int_equal(P->set_period(*state, ctr, 1000000000), 0);
	assert_int_equal(P->enable(*state, ctr), 0);
	spin_ms(5);
	assert_true(read_ok(*state, ctr).value > 0);
	P->close(*state, ctr);
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(ops_table_complete),
		cmocka_unit_test(init_EINVAL),
		cmocka_unit_test(capacity_without_hardware_pmu_is_unlimited),
		cmocka_unit_test(supports_EINVAL),
		cmocka_unit_test(supports_EOPNOTSUPP_unknown_event),
		cmocka_unit_test(supports_EOPNOTSUPP_software_qualifiers),
		cmocka_unit_test(supports_EOPNOTSUPP_bad_qualifiers),
		cmocka_unit_test(supports_EOPNOTSUPP_clock_privilege_split),
		cmocka_unit_test(supports_why_is_bounded),
		cmocka_unit_test(supports_survives_random_specs),
		cmocka_unit_test(supports_software_events),
		cmocka_unit_test(open_EINVAL),
		cmocka_unit_test(open_ESRCH),
		cmocka_unit_test(counter_hooks_EINVAL),
		cmocka_unit_test(task_clock_matches_thread_cputime),
		cmocka_unit_test(disable_stops_counting),
		cmocka_unit_test(times_enabled_and_running),
		cmocka_unit_test(page_faults_honour_usr_and_os),
		cmocka_unit_test(tsc_counts_and_is_monotonic),
		cmocka_unit_test(hw_instructions_or_skip),
		cmocka_unit_test(other_thread_task_clock_is_theirs),
		cmocka_unit_test(set_period_EINVAL),
	};
	struct vpmu_event_spec ev = spec(VPMU_EV_TASK_CLOCK, 0);
	char why[200];
	void *st;
	int err;

	/* No software events at all (seccomp, perf_event_paranoid 3): skip. */
	if (P->init(&st, 1, NULL) != 0) {
		printf("SKIP: perf source init failed\n");
		return (77);
	}
	err = P->supports(st, &ev, why, sizeof(why));
	P->fini(st);
	if (err != 0) {
		printf("SKIP: %s\n", why);
		return (77);
	}
	return (cmocka_run_group_tests(tests, setup, teardown));
}
