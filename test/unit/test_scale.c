/*
 * test_scale.c -- load (issue 14, "Load and isolation"): many vCPUs, many
 * PMCs, many threads at once, on the synthetic source, with exact counts.
 *
 *   scale_256_vcpus_32_pmcs   256 vCPUs with 32 IAP rows each: 8192
 *                             system-scope PMCs allocated, started, read,
 *                             stopped and released, then 8192 process-
 *                             scope PMCs (256 processes, 32 each)
 *                             allocated, attached, started, switched in,
 *                             read and released.  Every id, every count
 *                             and every row's state at the end is exact.
 *   scale_64_vcpu_threads     64 threads, each running one vCPU of a
 *                             64-vCPU VM through the exit contract: the
 *                             guest programs and reads its own counters
 *                             by trapped MSR accesses, while sampling and
 *                             counting PMCs run on every vCPU and the main
 *                             thread allocates, starts, stops, reads and
 *                             releases PMCs on all of them.  A watchdog
 *                             aborts with a message if the whole does not
 *                             finish (a deadlock).
 *
 * In the threaded test a vCPU thread stands for its guest: it lets STEP_NS
 * of virtual time pass with vpmu_synthetic_advance() (the synthetic source
 * counts only what its script says; an exit's ran_ns only moves libvpmu's
 * clocks), then exits.  Every step is an exact number of events (rates in
 * events per ms, STEP_NS 1 ms: no carry), so every count is knowable:
 *   - the guest's IA32_PMC0 (instructions) and IA32_FIXED_CTR0 read
 *     through RDMSR after k steps: k * rate (then, after the guest writes
 *     PMC0, the value written plus what followed);
 *   - each vCPU's long-lived counting PMC: STEPS * rate;
 *   - each vCPU's long-lived sampling PMC (cycles, reload RELOAD above one
 *     step's events, so one sample at most per exit): exactly
 *     floor(STEPS * rate / RELOAD) samples, each one a CALLCHAIN record in
 *     the owner's log or counted as dropped (intr_bufferfull, with a
 *     DROPNOTIFY in the log);
 *   - each short-lived counting PMC of the main thread: its initial count
 *     plus rate * (its time enabled) / 1 ms, whatever the moment it ran;
 *   - every sample taken in the VM (intr_processed) is a CALLCHAIN record
 *     in one of the two logs: the main thread's sampling PMCs are stopped
 *     and the log flushed before they are released, so none is discarded.
 * Threads other than cmocka's record failures; the main thread asserts.
 */
#include "fixture.h"

#include <pthread.h>
#include <sched.h>
#include <time.h>
#include <unistd.h>
#include <sys/mman.h>

#include <vpmu/model.h>
#include <vpmu/pmclog.h>
#include <vpmu/vcpu.h>

/* ---- 256 vCPUs x 32 PMCs ------------------------------------------------------ */

#define BIG_NVCPUS	256
#define BIG_ROWS	32		/* VPMU_CLASS_IAP's most */

static vpmu_vm *
big_vm(void)
{
	vpmu_config *cfg;
	vpmu_vm *vm;

	assert_int_equal(vpmu_config_create(&cfg), 0);
	assert_int_equal(vpmu_config_set_vcpus(cfg, BIG_NVCPUS), 0);
	/* No guest model: every IAP row is the host's. */
	assert_int_equal(vpmu_config_set_class(cfg, VPMU_CLASS_IAF, 0, 0), 0);
	assert_int_equal(vpmu_config_set_class(cfg, VPMU_CLASS_IAP, BIG_ROWS, 48), 0);
	assert_int_equal(vpmu_vm_create(cfg, &vm), 0);
	vpmu_config_destroy(cfg);
	return (vm);
}

/* Every row of every vCPU holds nothing (no PMC, no process-scope use). */
static void
all_rows_free(vpmu_vm *vm, unsigned npmc)
{
	struct vpmu_pmc_info *pi = calloc(npmc, sizeof(*pi));
	uint32_t n;
	unsigned c, r;

	assert_non_null(pi);
	for (c = 0; c < BIG_NVCPUS; c++) {
		n = npmc;
		assert_int_equal(vpmu_vm_get_pmcinfo(vm, &ROOT, c, pi, &n), 0);
		assert_int_equal(n, npmc);
		for (r = 0; r < npmc; r++) {
			assert_int_equal(pi[r].ownerpid, -1);
			assert_int_equal(pi[r].rowdisp, VPMU_DISP_FREE);
		}
	}
	free(pi);
}

static void
scale_256_vcpus_32_pmcs(void **state)
{
	struct vpmu_pmc_alloc a;
	struct vpmu_cpuinfo ci;
	struct vpmu_driverstats st;
	struct vpmu_cred p;
	vpmu_pmc_id *id;
	vpmu_vm *vm;
	uint64_t v;
	unsigned c, r;

	(void)state;
	vm = big_vm();
	assert_int_equal(vpmu_vm_get_cpuinfo(vm, &ROOT, &ci), 0);
	assert_int_equal(ci.ncpu, BIG_NVCPUS);
	assert_int_equal(ci.npmc, BIG_ROWS + 16);	/* IAP, then the 16 PV rows */
	id = calloc(BIG_NVCPUS * BIG_ROWS, sizeof(*id));
	assert_non_null(id);
	for (c = 0; c < BIG_NVCPUS; c++)
		assert_int_equal(vpmu_synthetic_set_rate(vm, c, VPMU_EV_INSTRUCTIONS,
		    1000 + c), 0);

	/*
	 * System scope: 32 PMCs on each vCPU, one per row, in row order; each
	 * starts with an initial count that names it.
	 */
	for (c = 0; c < BIG_NVCPUS; c++)
		for (r = 0; r < BIG_ROWS; r++) {
			memset(&a, 0, sizeof(a));
			a.cpu = c;
			a.cls = VPMU_CLASS_IAP;
			a.event = VPMU_EV_INSTRUCTIONS;
			a.mode = VPMU_MODE_SC;
			a.count = (uint64_t)c << 20 | r << 12;
			assert_int_equal(vpmu_pmc_allocate(vm, &ROOT, &a), 0);
			assert_int_equal(a.pmcid, VPMU_ID_MAKE(c, VPMU_MODE_SC, VPMU_CLASS_IAP, r));
			id[c * BIG_ROWS + r] = a.pmcid;
		}
	/* A 33rd IAP PMC on a vCPU: no row left (PV rows are another class). */
	memset(&a, 0, sizeof(a));
	a.cpu = 0;
	a.cls = VPMU_CLASS_IAP;
	a.event = VPMU_EV_INSTRUCTIONS;
	a.mode = VPMU_MODE_SC;
	assert_int_equal(vpmu_pmc_allocate(vm, &ROOT, &a), EINVAL);	/* IAP is full */
	for (c = 0; c < BIG_NVCPUS; c++)
		for (r = 0; r < BIG_ROWS; r++)
			assert_int_equal(vpmu_pmc_start(vm, &ROOT, id[c * BIG_ROWS + r]), 0);
	/* 1 ms on each vCPU: 1000 + c more in each of its 32 PMCs. */
	for (c = 0; c < BIG_NVCPUS; c++)
		assert_int_equal(vpmu_synthetic_advance(vm, c, 1000000), 0);
	for (c = 0; c < BIG_NVCPUS; c++)
		for (r = 0; r < BIG_ROWS; r++) {
			assert_int_equal(vpmu_pmc_read(vm, &ROOT, id[c * BIG_ROWS + r], &v), 0);
			assert_int_equal(v, ((uint64_t)c << 20 | r << 12) + 1000 + c);
			assert_int_equal(vpmu_pmc_stop(vm, &ROOT, id[c * BIG_ROWS + r]), 0);
		}
	/* Stopped: another ms counts nothing. */
	for (c = 0; c < BIG_NVCPUS; c++)
		assert_int_equal(vpmu_synthetic_advance(vm, c, 1000000), 0);
	for (c = 0; c < BIG_NVCPUS; c++)
		for (r = 0; r < BIG_ROWS; r++) {
			assert_int_equal(vpmu_pmc_read(vm, &ROOT, id[c * BIG_ROWS + r], &v), 0);
			assert_int_equal(v, ((uint64_t)c << 20 | r << 12) + 1000 + c);
			assert_int_equal(vpmu_pmc_release(vm, &ROOT, id[c * BIG_ROWS + r]), 0);
		}
	all_rows_free(vm, BIG_ROWS + 16);

	/*
	 * Process scope: process 1000 + c (unprivileged, its own uid) owns 32
	 * PMCs, one per IAP row, attached to itself, started, and runs on
	 * vCPU c for 1 ms.  Process PMCs of different owners share rows.
	 */
	for (c = 0; c < BIG_NVCPUS; c++) {
		p = (struct vpmu_cred){ .pid = (int32_t)(1000 + c), .tid = (int32_t)(1000 + c),
		    .uid = 5000 + c };
		assert_int_equal(vpmu_proc_create(vm, &p, 0), 0);
		for (r = 0; r < BIG_ROWS; r++) {
			memset(&a, 0, sizeof(a));
			a.cpu = VPMU_CPU_ANY;
			a.cls = VPMU_CLASS_IAP;
			a.event = VPMU_EV_INSTRUCTIONS;
			a.mode = VPMU_MODE_TC;
			a.count = r;
			assert_int_equal(vpmu_pmc_allocate(vm, &p, &a), 0);
			assert_int_equal(a.pmcid, VPMU_ID_MAKE(0xFFF, VPMU_MODE_TC, VPMU_CLASS_IAP, r));
			assert_int_equal(vpmu_pmc_attach(vm, &p, a.pmcid, 0), 0);
			assert_int_equal(vpmu_pmc_start(vm, &p, a.pmcid), 0);
		}
	}
	for (c = 0; c < BIG_NVCPUS; c++) {
		assert_int_equal(vpmu_proc_switch_in(vm, c, (int32_t)(1000 + c),
		    (int32_t)(1000 + c)), 0);
		assert_int_equal(vpmu_synthetic_advance(vm, c, 1000000), 0);
		assert_int_equal(vpmu_proc_switch_out(vm, c), 0);
		/* Nobody's process on it now: not counted. */
		assert_int_equal(vpmu_synthetic_advance(vm, c, 1000000), 0);
	}
	for (c = 0; c < BIG_NVCPUS; c++) {
		p = (struct vpmu_cred){ .pid = (int32_t)(1000 + c), .tid = (int32_t)(1000 + c),
		    .uid = 5000 + c };
		for (r = 0; r < BIG_ROWS; r++) {
			vpmu_pmc_id pid = VPMU_ID_MAKE(0xFFF, VPMU_MODE_TC, VPMU_CLASS_IAP, r);

			assert_int_equal(vpmu_pmc_read(vm, &p, pid, &v), 0);
			assert_int_equal(v, r + 1000 + c);
			assert_int_equal(vpmu_pmc_stop(vm, &p, pid), 0);
			assert_int_equal(vpmu_pmc_release(vm, &p, pid), 0);
			/* Gone: the owner owns nothing more of that id. */
			assert_int_equal(vpmu_pmc_read(vm, &p, pid, &v),
			    r + 1 < BIG_ROWS ? EINVAL : ESRCH);
		}
	}
	all_rows_free(vm, BIG_ROWS + 16);
	/* Every operation above succeeded but the ones expected to fail. */
	assert_int_equal(vpmu_vm_get_driverstats(vm, &ROOT, &st), 0);
	assert_int_equal(st.syscall_errors, 1 + BIG_NVCPUS * BIG_ROWS);
	vpmu_vm_destroy(vm);
	free(id);
}

/* ---- 64 vCPU threads ------------------------------------------------------------ */

#define NVCPUS		64
#define STEP_NS		1000000u	/* 1 ms: whole events, no carry */
#define STEPS		400		/* per vCPU, at least */
#define CHURNS		(2 * NVCPUS)	/* the main thread's rounds, at least */
#define RELOAD		10000u		/* > one step's cycles */
#define CHURN_RELOAD	5000u
#define WATCHDOG_S	100		/* below ctest's 120 s */

#define MSR_PMC0	0xC1u
#define MSR_EVTSEL0	0x186u
#define MSR_FIXED0	0x309u
#define MSR_FIXED_CTRL	0x38Du
#define MSR_GLOBAL_CTRL	0x38Fu
#define EVTSEL_INSTR	0x4300C0u	/* INST_RETIRED.ANY, USR, OS, EN */
#define PMC0_WRITTEN	0x123456u	/* the guest's write half-way */

#define RATE_INSTR(c)	(1000u + 3u * (c))
#define RATE_CYCLES(c)	(3000u + 7u * (c))
#define RIP_OF(c)	(0x400000u + 0x10u * (c))

/* The host's two owners: one with long-lived PMCs, one that churns. */
static const struct vpmu_cred HOST = { .pid = 1, .tid = 1, .privileged = 1 };
static const struct vpmu_cred CHURN = { .pid = 2, .tid = 2, .privileged = 1 };

struct vthr {
	struct stress *s;
	unsigned cpu;
	pthread_t th;
	unsigned bad;			/* failures, with the first described */
	char why[160];
	uint64_t msr_reads, msr_writes, exits;
	unsigned steps;			/* steps run: STEPS */
};

struct stress {
	vpmu_vm *vm;
	struct vthr t[NVCPUS];
	int go;				/* atomic: the threads may run */
	int running;			/* atomic: vCPU threads not finished */
	uint64_t churns;		/* atomic: the main thread's rounds so far */
	int churned;			/* atomic: the main thread stopped churning */
	pthread_mutex_t wd_mtx;
	pthread_cond_t wd_cv;
	int wd_done;
	pthread_t wd;
};

static void
vfail(struct vthr *t, const char *fmt, unsigned long long a, unsigned long long b)
{
	if (t->bad++ == 0)
		snprintf(t->why, sizeof(t->why), fmt, a, b);
}

/* One exit of reason r on t's vCPU (MSR index, data): 0 or the error. */
static int
vexit(struct vthr *t, uint32_t reason, uint32_t index, uint64_t *data,
    const struct vpmu_regs *regs)
{
	struct vpmu_entry e;
	struct vpmu_exit x;
	int error;

	if ((error = vpmu_vcpu_enter(t->s->vm, t->cpu, &e)) != 0)
		return (error);
	if (reason == VPMU_EXIT_OTHER &&
	    (error = vpmu_synthetic_advance(t->s->vm, t->cpu, STEP_NS)) != 0)
		return (error);
	memset(&x, 0, sizeof(x));
	x.reason = reason;
	x.flags = VPMU_EXITF_RAN;	/* ran_ns 0: the script gave the time */
	x.index = index;
	x.data = *data;
	x.regs = regs;
	if ((error = vpmu_vcpu_exit(t->s->vm, t->cpu, &x)) != 0)
		return (error);
	t->exits++;
	if (reason == VPMU_EXIT_MSR_READ || reason == VPMU_EXIT_MSR_WRITE) {
		if (!x.handled || x.fault)
			return (EPROTO);
		if (reason == VPMU_EXIT_MSR_READ)
			t->msr_reads++;
		else
			t->msr_writes++;
	}
	*data = x.data;
	return (0);
}

static void *
vcpu_main(void *p)
{
	struct vthr *t = p;
	struct vpmu_regs regs;
	uint64_t d, want;
	unsigned k;
	int error;

	memset(&regs, 0, sizeof(regs));
	regs.rip = RIP_OF(t->cpu);
	regs.cpl = 3;
	regs.long_mode = 1;
	while (!__atomic_load_n(&t->s->go, __ATOMIC_ACQUIRE))
		sched_yield();
	/* The guest programs PMC0 (instructions) and FIXED_CTR0, and enables both. */
	d = EVTSEL_INSTR;
	if ((error = vexit(t, VPMU_EXIT_MSR_WRITE, MSR_EVTSEL0, &d, &regs)) != 0)
		vfail(t, "WRMSR EVTSEL0: error %llu (step %llu)", (unsigned long long)error, 0);
	d = 0x3;			/* FIXED_CTR0: OS and USR */
	if ((error = vexit(t, VPMU_EXIT_MSR_WRITE, MSR_FIXED_CTRL, &d, &regs)) != 0)
		vfail(t, "WRMSR FIXED_CTR_CTRL: error %llu (step %llu)", (unsigned long long)error, 0);
	d = 1ull << 32 | 1;
	if ((error = vexit(t, VPMU_EXIT_MSR_WRITE, MSR_GLOBAL_CTRL, &d, &regs)) != 0)
		vfail(t, "WRMSR GLOBAL_CTRL: error %llu (step %llu)", (unsigned long long)error, 0);
	for (k = 1; k <= STEPS; k++) {
		/*
		 * Keep pace with the main thread, so that its rounds fall
		 * among the steps (the VM lock is no fair lock: 64 threads
		 * that never wait would starve it).
		 */
		while (__atomic_load_n(&t->s->churns, __ATOMIC_ACQUIRE) <
		    (uint64_t)k * CHURNS / STEPS &&
		    !__atomic_load_n(&t->s->churned, __ATOMIC_ACQUIRE))
			sched_yield();
		/* The guest runs 1 ms: the PMIs and samples due are taken here. */
		d = 0;
		if ((error = vexit(t, VPMU_EXIT_OTHER, 0, &d, &regs)) != 0)
			vfail(t, "exit: %llu at step %llu", (unsigned long long)error, k);
		/* Both guest counters read exactly what the script gave them. */
		d = 0;
		if ((error = vexit(t, VPMU_EXIT_MSR_READ, MSR_PMC0, &d, &regs)) != 0)
			vfail(t, "RDMSR PMC0: %llu at step %llu", (unsigned long long)error, k);
		want = k <= STEPS / 2 ? (uint64_t)k * RATE_INSTR(t->cpu) :
		    PMC0_WRITTEN + (uint64_t)(k - STEPS / 2) * RATE_INSTR(t->cpu);
		if (d != want)
			vfail(t, "PMC0 read %llu, want %llu", (unsigned long long)d,
			    (unsigned long long)want);
		d = 0;
		if ((error = vexit(t, VPMU_EXIT_MSR_READ, MSR_FIXED0, &d, &regs)) != 0)
			vfail(t, "RDMSR FIXED0: %llu at step %llu", (unsigned long long)error, k);
		if (d != (uint64_t)k * RATE_INSTR(t->cpu))
			vfail(t, "FIXED0 read %llu, want %llu", (unsigned long long)d,
			    (unsigned long long)k * RATE_INSTR(t->cpu));
		if (k == STEPS / 2) {
			d = PMC0_WRITTEN;
			if ((error = vexit(t, VPMU_EXIT_MSR_WRITE, MSR_PMC0, &d, &regs)) != 0)
				vfail(t, "WRMSR PMC0: error %llu at step %llu", (unsigned long long)error, k);
		}
		t->steps = k;
	}
	__atomic_sub_fetch(&t->s->running, 1, __ATOMIC_RELEASE);
	return (NULL);
}

/* Abort with a message unless the test ends within WATCHDOG_S: a deadlock. */
static void *
watchdog_main(void *p)
{
	struct stress *s = p;
	struct timespec until;
	int error = 0;

	clock_gettime(CLOCK_REALTIME, &until);
	until.tv_sec += WATCHDOG_S;
	pthread_mutex_lock(&s->wd_mtx);
	while (!s->wd_done && error == 0)
		error = pthread_cond_timedwait(&s->wd_cv, &s->wd_mtx, &until);
	if (!s->wd_done) {
		fprintf(stderr, "test_scale: no progress after %d s, %d vCPU threads "
		    "still running: a deadlock\n", WATCHDOG_S,
		    __atomic_load_n(&s->running, __ATOMIC_ACQUIRE));
		abort();
	}
	pthread_mutex_unlock(&s->wd_mtx);
	return (NULL);
}

static int
memfd(const char *name)
{
	int fd = memfd_create(name, MFD_CLOEXEC);

	assert_true(fd >= 0);
	return (fd);
}

static void
log_open(vpmu_vm *vm, const struct vpmu_cred *who, int fd)
{
	struct vpmu_op_configurelog cl = { .flags = 0, .logfd = fd };

	assert_int_equal(vpmu_vm_op(vm, who, VPMU_OP_CONFIGURELOG, &cl), 0);
}

/* What a log holds, by type and, for CALLCHAIN, by PMC. */
struct logsum {
	unsigned ntype[32];
	unsigned callchains;
	unsigned cc_bad;		/* CALLCHAINs not as the test's vCPUs make them */
	vpmu_pmc_id cc_id[NVCPUS];	/* the PMCs whose records are counted apart */
	unsigned cc_of[NVCPUS];
	bool (*expected)(vpmu_pmc_id id);	/* a PMC of this owner */
};

/* Read fd (the log, closed) from its start. */
static void
log_read(int fd, struct logsum *ls)
{
	struct vpmu_pmclog_ev *ev = malloc(sizeof(*ev));
	vpmu_pmclog_reader *r;
	unsigned c, cpu;
	int st;

	assert_non_null(ev);
	assert_int_equal(lseek(fd, 0, SEEK_SET), 0);
	assert_int_equal(vpmu_pmclog_open_fd(fd, &r), 0);
	while ((st = vpmu_pmclog_read(r, ev)) == 0) {
		assert_true(ev->type < 32);
		ls->ntype[ev->type]++;
		if (ev->type != VPMU_PMCLOG_CALLCHAIN)
			continue;
		ls->callchains++;
		cpu = VPMU_PMCLOG_CPUFLAGS_CPU(ev->u.callchain.cpuflags);
		/* The vCPU the PMC lives on, in user mode, at that vCPU's RIP. */
		if (!ls->expected(ev->u.callchain.pmcid) || cpu >= NVCPUS ||
		    VPMU_ID_TO_CPU(ev->u.callchain.pmcid) != cpu ||
		    VPMU_PMCLOG_CPUFLAGS_FLAGS(ev->u.callchain.cpuflags) !=
		    VPMU_PMCLOG_CC_F_USERSPACE || ev->u.callchain.npc != 1 ||
		    ev->u.callchain.pc[0] != RIP_OF(cpu) || ev->u.callchain.pid != 0)
			ls->cc_bad++;
		for (c = 0; c < NVCPUS; c++)
			if (ls->cc_id[c] == ev->u.callchain.pmcid)
				ls->cc_of[c]++;
	}
	if (st != ENODATA)
		fail_msg("log: %s: %s", vpmu_errname(st), vpmu_pmclog_error(r));
	vpmu_pmclog_close(r);
	free(ev);
}

/* The host's long-lived PMCs: PV rows 0 and 1 of each vCPU. */
static bool
host_pmc(vpmu_pmc_id id)
{
	return (VPMU_ID_TO_CLASS(id) == VPMU_CLASS_PV && VPMU_ID_TO_MODE(id) == VPMU_MODE_SS &&
	    VPMU_ID_TO_ROW(id) == 7 + 1);
}

/* The churning owner's: the PV rows after them. */
static bool
churn_pmc(vpmu_pmc_id id)
{
	return (VPMU_ID_TO_CLASS(id) == VPMU_CLASS_PV && VPMU_ID_TO_MODE(id) == VPMU_MODE_SS &&
	    VPMU_ID_TO_ROW(id) == 7 + 3);
}

static void
scale_64_vcpu_threads(void **state)
{
	struct stress *s = calloc(1, sizeof(*s));
	struct vpmu_model m;
	struct vpmu_pmc_alloc a;
	struct vpmu_driverstats st;
	struct vpmu_vcpu_stats vs;
	struct vpmu_count cnt;
	struct vpmu_pmc_info pi[7 + 16];
	struct logsum *l1 = calloc(1, sizeof(*l1)), *l2 = calloc(1, sizeof(*l2));
	vpmu_pmc_id sc[NVCPUS], ss[NVCPUS];
	vpmu_config *cfg;
	vpmu_vm *vm;
	char err[128];
	uint64_t v, init, samples, want_samples = 0, churn_sc = 0, churn_ss = 0;
	uint32_t n;
	unsigned c, i, r, bad = 0;
	int fd1, fd2;

	(void)state;
	assert_non_null(s);
	assert_non_null(l1);
	assert_non_null(l2);
	assert_int_equal(vpmu_config_create(&cfg), 0);
	assert_int_equal(vpmu_config_set_vcpus(cfg, NVCPUS), 0);
	assert_int_equal(vpmu_model_parse("intel-v2", &m, err, sizeof(err)), 0);
	assert_int_equal(vpmu_config_set_model(cfg, &m), 0);
	/* Logs of 64 x 2 x 64 KB: room for every record of the test. */
	assert_int_equal(vpmu_config_set_tunable(cfg, "nbuffers_pcpu", 2), 0);
	assert_int_equal(vpmu_config_set_tunable(cfg, "logbuffersize", 64), 0);
	assert_int_equal(vpmu_vm_create(cfg, &vm), 0);
	vpmu_config_destroy(cfg);
	s->vm = vm;
	for (c = 0; c < NVCPUS; c++) {
		assert_int_equal(vpmu_synthetic_set_rate(vm, c, VPMU_EV_INSTRUCTIONS,
		    RATE_INSTR(c)), 0);
		assert_int_equal(vpmu_synthetic_set_rate(vm, c, VPMU_EV_CYCLES,
		    RATE_CYCLES(c)), 0);
	}
	fd1 = memfd("host-log");
	fd2 = memfd("churn-log");
	log_open(vm, &HOST, fd1);
	log_open(vm, &CHURN, fd2);

	/*
	 * The host's PMCs, started before the vCPUs run and stopped after:
	 * on each vCPU, instructions counted (PV row 0, row 7) and cycles
	 * sampled (PV row 1, row 8).
	 */
	for (c = 0; c < NVCPUS; c++) {
		memset(&a, 0, sizeof(a));
		a.cpu = c;
		a.cls = VPMU_CLASS_PV;
		a.event = VPMU_EV_INSTRUCTIONS;
		a.mode = VPMU_MODE_SC;
		assert_int_equal(vpmu_pmc_allocate(vm, &HOST, &a), 0);
		sc[c] = a.pmcid;
		assert_int_equal(VPMU_ID_TO_ROW(sc[c]), 7);
		a.event = VPMU_EV_CYCLES;
		a.mode = VPMU_MODE_SS;
		a.count = RELOAD;
		assert_int_equal(vpmu_pmc_allocate(vm, &HOST, &a), 0);
		ss[c] = a.pmcid;
		assert_true(host_pmc(ss[c]));
		l1->cc_id[c] = ss[c];
		assert_int_equal(vpmu_pmc_start(vm, &HOST, sc[c]), 0);
		assert_int_equal(vpmu_pmc_start(vm, &HOST, ss[c]), 0);
	}
	l1->expected = host_pmc;
	l2->expected = churn_pmc;

	pthread_mutex_init(&s->wd_mtx, NULL);
	pthread_cond_init(&s->wd_cv, NULL);
	assert_int_equal(pthread_create(&s->wd, NULL, watchdog_main, s), 0);
	s->running = NVCPUS;
	for (c = 0; c < NVCPUS; c++) {
		s->t[c].s = s;
		s->t[c].cpu = c;
		assert_int_equal(pthread_create(&s->t[c].th, NULL, vcpu_main, &s->t[c]), 0);
	}
	__atomic_store_n(&s->go, 1, __ATOMIC_RELEASE);

	/*
	 * Meanwhile: on one vCPU after another, a counting PMC (PV row 2)
	 * and a sampling one (PV row 3) of the churning owner, allocated,
	 * started, left to run while the vCPU thread runs, stopped, checked
	 * and released.  Counting: exactly its initial count plus the rate
	 * times the time it was enabled (whole ms).  Sampling: the log is
	 * flushed between its stop and its release, so that its samples
	 * reach the log.
	 */
	for (i = 0; __atomic_load_n(&s->running, __ATOMIC_ACQUIRE) > 0; i++) {
		c = i % NVCPUS;
		memset(&a, 0, sizeof(a));
		a.cpu = c;
		a.cls = VPMU_CLASS_PV;
		a.event = VPMU_EV_CYCLES;
		a.mode = VPMU_MODE_SC;
		a.count = init = (uint64_t)i << 32;
		if (vpmu_pmc_allocate(vm, &CHURN, &a) != 0 || VPMU_ID_TO_ROW(a.pmcid) != 9) {
			bad++;
			break;
		}
		if (vpmu_pmc_start(vm, &CHURN, a.pmcid) != 0)
			bad++;
		{
			struct vpmu_pmc_alloc b = a;

			b.mode = VPMU_MODE_SS;
			b.count = CHURN_RELOAD;
			if (vpmu_pmc_allocate(vm, &CHURN, &b) != 0 || !churn_pmc(b.pmcid)) {
				bad++;
				break;
			}
			if (vpmu_pmc_start(vm, &CHURN, b.pmcid) != 0)
				bad++;
			for (r = 0; r < 20; r++)
				sched_yield();
			if (vpmu_pmc_stop(vm, &CHURN, b.pmcid) != 0)
				bad++;
			if (vpmu_vm_op(vm, &CHURN, VPMU_OP_FLUSHLOG, NULL) != 0)
				bad++;
			if (vpmu_pmc_release(vm, &CHURN, b.pmcid) != 0)
				bad++;
			churn_ss++;
		}
		if (vpmu_pmc_stop(vm, &CHURN, a.pmcid) != 0)
			bad++;
		if (vpmu_pmc_read(vm, &CHURN, a.pmcid, &v) != 0 ||
		    vpmu_pmc_get_count(vm, CHURN.pid, a.pmcid, &cnt) != 0)
			bad++;
		else if (cnt.time_enabled % STEP_NS != 0 || cnt.time_running != cnt.time_enabled ||
		    v != cnt.value ||
		    v != init + cnt.time_enabled / STEP_NS * RATE_CYCLES(c)) {
			if (bad++ == 0)
				print_error("churn PMC %u on vCPU %u: %llu after %llu ns\n", i, c,
				    (unsigned long long)(v - init),
				    (unsigned long long)cnt.time_enabled);
		}
		if (vpmu_pmc_release(vm, &CHURN, a.pmcid) != 0)
			bad++;
		churn_sc++;
		__atomic_store_n(&s->churns, churn_sc, __ATOMIC_RELEASE);
	}
	__atomic_store_n(&s->churned, 1, __ATOMIC_RELEASE);	/* after a failure */
	for (c = 0; c < NVCPUS; c++)
		assert_int_equal(pthread_join(s->t[c].th, NULL), 0);
	pthread_mutex_lock(&s->wd_mtx);
	s->wd_done = 1;
	pthread_cond_signal(&s->wd_cv);
	pthread_mutex_unlock(&s->wd_mtx);
	assert_int_equal(pthread_join(s->wd, NULL), 0);
	assert_int_equal(bad, 0);
	assert_true(churn_sc >= CHURNS);
	for (c = 0; c < NVCPUS; c++)
		if (s->t[c].bad != 0)
			fail_msg("vCPU %u: %u failures, the first: %s", c, s->t[c].bad, s->t[c].why);

	/*
	 * Exit by exit, what the contract saw: 3 WRMSRs, then per step an
	 * exit and two RDMSRs, and the WRMSR half-way; no fault.
	 */
	for (c = 0; c < NVCPUS; c++) {
		assert_int_equal(vpmu_vcpu_get_stats(vm, c, &vs), 0);
		assert_int_equal(s->t[c].steps, STEPS);
		assert_int_equal(vs.exits, 3 + 3 * s->t[c].steps + 1);
		assert_int_equal(vs.exits, s->t[c].exits);
		assert_int_equal(vs.msr_reads, 2 * s->t[c].steps);
		assert_int_equal(vs.msr_reads, s->t[c].msr_reads);
		assert_int_equal(vs.msr_writes, s->t[c].msr_writes);
		assert_int_equal(vs.msr_writes, 4);
		assert_int_equal(vs.msr_gp, 0);
	}
	/* The long-lived counting PMCs: every step's instructions. */
	for (c = 0; c < NVCPUS; c++) {
		assert_int_equal(vpmu_pmc_stop(vm, &HOST, sc[c]), 0);
		assert_int_equal(vpmu_pmc_stop(vm, &HOST, ss[c]), 0);
		assert_int_equal(vpmu_pmc_read(vm, &HOST, sc[c], &v), 0);
		assert_int_equal(v, (uint64_t)s->t[c].steps * RATE_INSTR(c));
		assert_int_equal(vpmu_pmc_get_count(vm, HOST.pid, sc[c], &cnt), 0);
		assert_int_equal(cnt.time_enabled, (uint64_t)s->t[c].steps * STEP_NS);
		assert_int_equal(cnt.time_running, (uint64_t)s->t[c].steps * STEP_NS);
		want_samples += (uint64_t)s->t[c].steps * RATE_CYCLES(c) / RELOAD;
	}
	/* Every sample into the logs, then both logs closed and read back. */
	assert_int_equal(vpmu_vm_op(vm, &HOST, VPMU_OP_CLOSELOG, NULL), 0);
	assert_int_equal(vpmu_vm_op(vm, &CHURN, VPMU_OP_CLOSELOG, NULL), 0);
	assert_int_equal(vpmu_vm_get_driverstats(vm, &ROOT, &st), 0);
	log_read(fd1, l1);
	log_read(fd2, l2);
	assert_int_equal(l1->cc_bad, 0);
	assert_int_equal(l2->cc_bad, 0);
	assert_int_equal(l1->ntype[VPMU_PMCLOG_INITIALIZE], 1);
	assert_int_equal(l1->ntype[VPMU_PMCLOG_CLOSELOG], 1);
	assert_int_equal(l1->ntype[VPMU_PMCLOG_PMCALLOCATEDYN], 2 * NVCPUS);
	assert_int_equal(l2->ntype[VPMU_PMCLOG_INITIALIZE], 1);
	assert_int_equal(l2->ntype[VPMU_PMCLOG_CLOSELOG], 1);
	assert_int_equal(l2->ntype[VPMU_PMCLOG_PMCALLOCATEDYN], churn_sc + churn_ss);
	/* Nothing dropped unseen: no record lost for want of a buffer. */
	assert_int_equal(st.buffer_requests_failed, 0);
	/* Every sample taken is a CALLCHAIN record in one of the two logs. */
	assert_int_equal(st.intr_processed, l1->callchains + l2->callchains);
	/*
	 * The host's sampling PMCs took exactly one sample per RELOAD cycles:
	 * in the log, or dropped with the ring full and reported as such.
	 */
	samples = 0;
	for (c = 0; c < NVCPUS; c++) {
		uint64_t want = (uint64_t)s->t[c].steps * RATE_CYCLES(c) / RELOAD;

		samples += l1->cc_of[c];
		if (st.intr_bufferfull == 0)
			assert_int_equal(l1->cc_of[c], want);
		else
			assert_true(l1->cc_of[c] <= want);
	}
	assert_int_equal(samples, l1->callchains);
	if (st.intr_bufferfull == 0) {
		assert_int_equal(samples, want_samples);
		assert_int_equal(l1->ntype[VPMU_PMCLOG_DROPNOTIFY], 0);
		assert_int_equal(l2->ntype[VPMU_PMCLOG_DROPNOTIFY], 0);
	} else {
		assert_true(samples + st.intr_bufferfull >= want_samples);
		assert_true(l1->ntype[VPMU_PMCLOG_DROPNOTIFY] +
		    l2->ntype[VPMU_PMCLOG_DROPNOTIFY] > 0);
	}
	for (c = 0, i = 0; c < NVCPUS; c++)
		i += s->t[c].steps;
	print_message("scale: %u vCPUs, %u steps in all, %llu churned counting and %llu "
	    "sampling PMCs, %u samples logged, %u dropped\n", NVCPUS, i,
	    (unsigned long long)churn_sc, (unsigned long long)churn_ss,
	    st.intr_processed, st.intr_bufferfull);

	/* Everything released: each vCPU's PV rows free, the model's rows the guest's. */
	for (c = 0; c < NVCPUS; c++) {
		assert_int_equal(vpmu_pmc_release(vm, &HOST, sc[c]), 0);
		assert_int_equal(vpmu_pmc_release(vm, &HOST, ss[c]), 0);
	}
	for (c = 0; c < NVCPUS; c++) {
		n = 7 + 16;
		assert_int_equal(vpmu_vm_get_pmcinfo(vm, &ROOT, c, pi, &n), 0);
		assert_int_equal(n, 7 + 16);
		for (r = 0; r < 7; r++)
			assert_int_equal(pi[r].ownerpid, 0);
		for (r = 7; r < 7 + 16; r++) {
			assert_int_equal(pi[r].ownerpid, -1);
			assert_int_equal(pi[r].rowdisp, VPMU_DISP_FREE);
		}
	}
	vpmu_vm_destroy(vm);
	close(fd1);
	close(fd2);
	pthread_cond_destroy(&s->wd_cv);
	pthread_mutex_destroy(&s->wd_mtx);
	free(l1);
	free(l2);
	free(s);
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(scale_256_vcpus_32_pmcs),
		cmocka_unit_test(scale_64_vcpu_threads),
	};

	return (cmocka_run_group_tests(tests, NULL, NULL));
}
