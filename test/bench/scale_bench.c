/*
 * scale_bench.c -- load (issue 14, "Load and isolation"): the time of
 * hwpmc operations on a big VM, and of trapped MSR accesses with sampling
 * on many vCPU threads at once.  Host-only, on the synthetic source: no
 * KVM, no host PMU.
 *
 *   system    one VM of 256 vCPUs with 32 IAP rows (no guest model, so
 *             every row is the host's): 8192 system-scope PMCs (32 on each
 *             vCPU) allocated, started, read, stopped and released.
 *   process   the same VM: 256 guest processes, each owning 32 process-
 *             scope PMCs (one per row), allocated, attached to the process,
 *             started, switched in on its vCPU, read, released (8192 in all,
 *             each with a host slot per vCPU: 2 M slots).
 *   threads   one VM of 64 vCPUs (intel-v2 model), one thread per vCPU: the
 *             guest programs IA32_PMC0, then per step 1 ms of virtual time
 *             (an exit) and an RDMSR of IA32_PMC0, with a sampling and a
 *             counting PMC running on every vCPU and the log in a memfd;
 *             meanwhile the main thread allocates, starts, stops and
 *             releases a PMC on one vCPU after another as fast as it can.
 *             Timed alone (no main-thread load), with it, and with a
 *             FLUSHLOG of the churning owner's log in each round (which
 *             waits for the sweeper's pass over every vCPU's ring).
 *
 * Every count read is checked against the synthetic script (exact); a
 * mismatch is an error (exit 1).  Times are wall-clock, on whatever else
 * the machine runs: a report, not a pass/fail.
 *
 * usage: scale_bench [-s]    -s: small (16 vCPUs x 32 PMCs, 8 vCPU threads,
 *                            one pass): for valgrind --tool=callgrind
 */
#include <errno.h>
#include <pthread.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include <sys/mman.h>
#include <sys/resource.h>

#include <vpmu/vpmu.h>
#include <vpmu/model.h>
#include <vpmu/vcpu.h>

#define ROWS		32		/* VPMU_CLASS_IAP's most */
#define MS		1000000u

static unsigned nvcpus = 256, nthreads = 64, steps = 2000;
static int errors;

static const struct vpmu_cred ROOT = { .pid = 1, .tid = 1, .privileged = 1 };

static uint64_t
now(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ((uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec);
}

static void
check(int error, const char *what)
{
	if (error != 0) {
		fprintf(stderr, "scale_bench: %s: %s\n", what, vpmu_strerror(error));
		exit(1);
	}
}

static void
expect(uint64_t got, uint64_t want, const char *what)
{
	if (got != want && errors++ < 5)
		fprintf(stderr, "scale_bench: %s read %llu, want %llu\n", what,
		    (unsigned long long)got, (unsigned long long)want);
}

static long
maxrss_kb(void)
{
	struct rusage ru;

	getrusage(RUSAGE_SELF, &ru);
	return (ru.ru_maxrss);
}

static void
row(const char *what, uint64_t ns, uint64_t n)
{
	printf("  %-34s %9.2f ms  %8llu ops  %9.1f ns/op\n", what, ns / 1e6,
	    (unsigned long long)n, n != 0 ? (double)ns / (double)n : 0.0);
}

/* ---- one big VM: system and process scope ---------------------------------------- */

static vpmu_vm *
big_vm(void)
{
	vpmu_config *cfg;
	vpmu_vm *vm;
	unsigned c;

	check(vpmu_config_create(&cfg), "config");
	check(vpmu_config_set_vcpus(cfg, nvcpus), "vcpus");
	check(vpmu_config_set_class(cfg, VPMU_CLASS_IAF, 0, 0), "IAF");
	check(vpmu_config_set_class(cfg, VPMU_CLASS_IAP, ROWS, 48), "IAP");
	check(vpmu_vm_create(cfg, &vm), "vm_create");
	vpmu_config_destroy(cfg);
	for (c = 0; c < nvcpus; c++)
		check(vpmu_synthetic_set_rate(vm, c, VPMU_EV_INSTRUCTIONS, 1000 + c), "rate");
	return (vm);
}

static void
bench_system(vpmu_vm *vm)
{
	struct vpmu_pmc_alloc a;
	vpmu_pmc_id *id = calloc((size_t)nvcpus * ROWS, sizeof(*id));
	unsigned c, r, n = nvcpus * ROWS;
	uint64_t t, v;

	if (id == NULL)
		check(ENOMEM, "calloc");
	printf("system scope: %u vCPUs x %u PMCs = %u PMCs\n", nvcpus, ROWS, n);
	t = now();
	for (c = 0; c < nvcpus; c++)
		for (r = 0; r < ROWS; r++) {
			memset(&a, 0, sizeof(a));
			a.cpu = c;
			a.cls = VPMU_CLASS_IAP;
			a.event = VPMU_EV_INSTRUCTIONS;
			a.mode = VPMU_MODE_SC;
			check(vpmu_pmc_allocate(vm, &ROOT, &a), "allocate");
			id[c * ROWS + r] = a.pmcid;
		}
	row("allocate", now() - t, n);
	t = now();
	for (c = 0; c < n; c++)
		check(vpmu_pmc_start(vm, &ROOT, id[c]), "start");
	row("start", now() - t, n);
	t = now();
	for (c = 0; c < nvcpus; c++)
		check(vpmu_synthetic_advance(vm, c, MS), "advance");
	row("advance 1 ms (32 PMCs counting)", now() - t, nvcpus);
	t = now();
	for (c = 0; c < n; c++) {
		check(vpmu_pmc_read(vm, &ROOT, id[c], &v), "read");
		expect(v, 1000 + c / ROWS, "system PMC");
	}
	row("read", now() - t, n);
	t = now();
	for (c = 0; c < n; c++)
		check(vpmu_pmc_stop(vm, &ROOT, id[c]), "stop");
	row("stop", now() - t, n);
	t = now();
	for (c = 0; c < n; c++)
		check(vpmu_pmc_release(vm, &ROOT, id[c]), "release");
	row("release", now() - t, n);
	free(id);
}

static void
bench_process(vpmu_vm *vm)
{
	struct vpmu_pmc_alloc a;
	struct vpmu_cred p;
	unsigned c, r, n = nvcpus * ROWS;
	uint64_t t, v;
	long rss0 = maxrss_kb();

	printf("process scope: %u processes x %u PMCs = %u PMCs, %u host slots each\n",
	    nvcpus, ROWS, n, nvcpus);
	t = now();
	for (c = 0; c < nvcpus; c++) {
		p = (struct vpmu_cred){ .pid = (int32_t)(1000 + c), .tid = (int32_t)(1000 + c),
		    .uid = 5000 + c };
		check(vpmu_proc_create(vm, &p, 0), "proc_create");
	}
	row("proc_create", now() - t, nvcpus);
	t = now();
	for (c = 0; c < nvcpus; c++) {
		p = (struct vpmu_cred){ .pid = (int32_t)(1000 + c), .tid = (int32_t)(1000 + c),
		    .uid = 5000 + c };
		for (r = 0; r < ROWS; r++) {
			memset(&a, 0, sizeof(a));
			a.cpu = VPMU_CPU_ANY;
			a.cls = VPMU_CLASS_IAP;
			a.event = VPMU_EV_INSTRUCTIONS;
			a.mode = VPMU_MODE_TC;
			check(vpmu_pmc_allocate(vm, &p, &a), "allocate");
		}
	}
	row("allocate", now() - t, n);
	printf("  max RSS grew by %ld KB (%.1f bytes per PMC)\n", maxrss_kb() - rss0,
	    (maxrss_kb() - rss0) * 1024.0 / n);
#define EACH(op, what) do {							\
	t = now();								\
	for (c = 0; c < nvcpus; c++) {						\
		p = (struct vpmu_cred){ .pid = (int32_t)(1000 + c),		\
		    .tid = (int32_t)(1000 + c), .uid = 5000 + c };		\
		for (r = 0; r < ROWS; r++) {					\
			vpmu_pmc_id id = VPMU_ID_MAKE(0xFFF, VPMU_MODE_TC,	\
			    VPMU_CLASS_IAP, r);					\
			op;							\
		}								\
	}									\
	row(what, now() - t, n);						\
} while (0)
	EACH(check(vpmu_pmc_attach(vm, &p, id, 0), "attach"), "attach (to itself)");
	EACH(check(vpmu_pmc_start(vm, &p, id), "start"), "start");
	t = now();
	for (c = 0; c < nvcpus; c++) {
		check(vpmu_proc_switch_in(vm, c, (int32_t)(1000 + c), (int32_t)(1000 + c)),
		    "switch_in");
		check(vpmu_synthetic_advance(vm, c, MS), "advance");
		check(vpmu_proc_switch_out(vm, c), "switch_out");
	}
	row("switch in + 1 ms + switch out", now() - t, nvcpus);
	EACH((check(vpmu_pmc_read(vm, &p, id, &v), "read"),
	    expect(v, 1000 + c, "process PMC")), "read");
	EACH(check(vpmu_pmc_stop(vm, &p, id), "stop"), "stop");
	EACH(check(vpmu_pmc_release(vm, &p, id), "release"), "release");
#undef EACH
}

/* ---- 64 vCPU threads -------------------------------------------------------------- */

struct tb {
	vpmu_vm *vm;
	unsigned cpu;
	int *go, *done;
	pthread_t th;
	uint64_t last;
};

static void *
vcpu_main(void *arg)
{
	struct tb *t = arg;
	struct vpmu_regs regs;
	struct vpmu_entry e;
	struct vpmu_exit x;
	unsigned k;

	memset(&regs, 0, sizeof(regs));
	regs.rip = 0x400000 + t->cpu;
	regs.cpl = 3;
	while (!__atomic_load_n(t->go, __ATOMIC_ACQUIRE))
		sched_yield();
	memset(&x, 0, sizeof(x));
	x.reason = VPMU_EXIT_MSR_WRITE;
	x.index = 0x186;			/* IA32_PERFEVTSEL0: instructions, enabled */
	x.data = 0x4300C0;
	x.flags = VPMU_EXITF_RAN;
	(void)vpmu_vcpu_exit(t->vm, t->cpu, &x);
	for (k = 0; k < steps; k++) {
		(void)vpmu_vcpu_enter(t->vm, t->cpu, &e);
		(void)vpmu_synthetic_advance(t->vm, t->cpu, MS);
		memset(&x, 0, sizeof(x));
		x.reason = VPMU_EXIT_OTHER;
		x.flags = VPMU_EXITF_RAN;
		x.regs = &regs;
		(void)vpmu_vcpu_exit(t->vm, t->cpu, &x);
		(void)vpmu_vcpu_enter(t->vm, t->cpu, &e);
		memset(&x, 0, sizeof(x));
		x.reason = VPMU_EXIT_MSR_READ;
		x.index = 0xC1;			/* IA32_PMC0 */
		x.flags = VPMU_EXITF_RAN;
		x.regs = &regs;
		(void)vpmu_vcpu_exit(t->vm, t->cpu, &x);
		t->last = x.data;
	}
	__atomic_add_fetch(t->done, 1, __ATOMIC_RELEASE);
	return (NULL);
}

static void
bench_threads(int load)
{
	static const struct vpmu_cred CHURN = { .pid = 2, .tid = 2, .privileged = 1 };
	struct vpmu_op_configurelog cl = { .flags = 0 };
	struct vpmu_pmc_alloc a;
	struct vpmu_driverstats st;
	struct vpmu_model m;
	struct tb *t = calloc(nthreads, sizeof(*t));
	vpmu_config *cfg;
	vpmu_vm *vm;
	char err[128];
	int go = 0, done = 0, fd, fd2 = -1;
	unsigned c, rounds = 0;
	uint64_t t0, t1, lat, worst = 0, sum = 0;

	if (t == NULL)
		check(ENOMEM, "calloc");
	check(vpmu_config_create(&cfg), "config");
	check(vpmu_config_set_vcpus(cfg, nthreads), "vcpus");
	check(vpmu_model_parse("intel-v2", &m, err, sizeof(err)), "model");
	check(vpmu_config_set_model(cfg, &m), "set_model");
	check(vpmu_config_set_tunable(cfg, "nbuffers_pcpu", 4), "nbuffers_pcpu");
	check(vpmu_config_set_tunable(cfg, "logbuffersize", 64), "logbuffersize");
	check(vpmu_vm_create(cfg, &vm), "vm_create");
	vpmu_config_destroy(cfg);
	if ((fd = memfd_create("scale_bench-log", MFD_CLOEXEC)) < 0)
		check(errno, "memfd_create");
	cl.logfd = fd;
	check(vpmu_vm_op(vm, &ROOT, VPMU_OP_CONFIGURELOG, &cl), "configurelog");
	if (load == 2) {
		if ((fd2 = memfd_create("scale_bench-log2", MFD_CLOEXEC)) < 0)
			check(errno, "memfd_create");
		cl.logfd = fd2;
		check(vpmu_vm_op(vm, &CHURN, VPMU_OP_CONFIGURELOG, &cl), "configurelog");
	}
	for (c = 0; c < nthreads; c++) {
		check(vpmu_synthetic_set_rate(vm, c, VPMU_EV_INSTRUCTIONS, 1000), "rate");
		check(vpmu_synthetic_set_rate(vm, c, VPMU_EV_CYCLES, 3000), "rate");
		memset(&a, 0, sizeof(a));
		a.cpu = c;
		a.cls = VPMU_CLASS_PV;
		a.event = VPMU_EV_INSTRUCTIONS;
		a.mode = VPMU_MODE_SC;
		check(vpmu_pmc_allocate(vm, &ROOT, &a), "allocate");
		check(vpmu_pmc_start(vm, &ROOT, a.pmcid), "start");
		a.event = VPMU_EV_CYCLES;
		a.mode = VPMU_MODE_SS;
		a.count = 10000;
		check(vpmu_pmc_allocate(vm, &ROOT, &a), "allocate");
		check(vpmu_pmc_start(vm, &ROOT, a.pmcid), "start");
		t[c].vm = vm;
		t[c].cpu = c;
		t[c].go = &go;
		t[c].done = &done;
		if (pthread_create(&t[c].th, NULL, vcpu_main, &t[c]) != 0)
			check(EAGAIN, "pthread_create");
	}
	t0 = now();
	__atomic_store_n(&go, 1, __ATOMIC_RELEASE);
	while (load && __atomic_load_n(&done, __ATOMIC_ACQUIRE) < (int)nthreads) {
		lat = now();
		memset(&a, 0, sizeof(a));
		a.cpu = rounds % nthreads;
		a.cls = VPMU_CLASS_PV;
		a.event = VPMU_EV_CYCLES;
		a.mode = VPMU_MODE_SC;
		check(vpmu_pmc_allocate(vm, &CHURN, &a), "churn allocate");
		check(vpmu_pmc_start(vm, &CHURN, a.pmcid), "churn start");
		check(vpmu_pmc_stop(vm, &CHURN, a.pmcid), "churn stop");
		if (load == 2)
			check(vpmu_vm_op(vm, &CHURN, VPMU_OP_FLUSHLOG, NULL), "churn flushlog");
		check(vpmu_pmc_release(vm, &CHURN, a.pmcid), "churn release");
		lat = now() - lat;
		sum += lat;
		if (lat > worst)
			worst = lat;
		rounds++;
	}
	for (c = 0; c < nthreads; c++)
		pthread_join(t[c].th, NULL);
	t1 = now();
	for (c = 0; c < nthreads; c++)
		expect(t[c].last, (uint64_t)steps * 1000, "IA32_PMC0");
	check(vpmu_vm_op(vm, &ROOT, VPMU_OP_FLUSHLOG, NULL), "flushlog");
	check(vpmu_vm_get_driverstats(vm, &ROOT, &st), "driverstats");
	expect(st.intr_processed + st.intr_bufferfull, (uint64_t)nthreads * steps * 3000 / 10000,
	    "samples");
	printf("threads: %u vCPU threads x %u steps (exit + RDMSR, a sampling and a counting "
	    "PMC per vCPU)%s\n", nthreads, steps, load == 0 ? "" : load == 1 ?
	    ", main thread churning PMCs" : ", main thread churning PMCs and flushing a log");
	row("all threads", t1 - t0, (uint64_t)nthreads * steps * 2);
	printf("  %u samples logged, %u dropped, %u buffers failed\n", st.intr_processed,
	    st.intr_bufferfull, st.buffer_requests_failed);
	if (load)
		printf("  main thread: %u rounds of allocate+start+stop+%srelease, "
		    "%.1f us each on average, %.1f ms at worst\n", rounds,
		    load == 2 ? "FLUSHLOG+" : "",
		    rounds != 0 ? sum / 1e3 / rounds : 0.0, worst / 1e6);
	vpmu_vm_destroy(vm);
	close(fd);
	if (fd2 >= 0)
		close(fd2);
	free(t);
}

int
main(int argc, char **argv)
{
	vpmu_vm *vm;
	uint64_t t;

	if (argc > 1 && strcmp(argv[1], "-s") == 0) {
		nvcpus = 16;
		nthreads = 8;
		steps = 100;
	} else if (argc > 1) {
		fprintf(stderr, "usage: scale_bench [-s]\n");
		return (2);
	}
	printf("scale_bench (libvpmu %s, synthetic source)\n", vpmu_version());
	t = now();
	vm = big_vm();
	row("vm_create (256 vCPUs)", now() - t, 1);
	bench_system(vm);
	bench_process(vm);
	t = now();
	vpmu_vm_destroy(vm);
	row("vm_destroy", now() - t, 1);
	bench_threads(0);
	bench_threads(1);
	bench_threads(2);
	if (errors != 0) {
		fprintf(stderr, "scale_bench: %d wrong counts\n", errors);
		return (1);
	}
	return (0);
}
