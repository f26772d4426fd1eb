/*
 * test_mux_threads.c -- a vCPU thread enters and leaves its vCPU while
 * another thread starts and stops system PMCs on that vCPU, more of them
 * than it has host counters: the demand list (nact) and the reschedule
 * hint (dirty) change under the VM lock while the vCPU thread reads them
 * without it.  Every call must succeed, the PMCs must end stopped and
 * readable, and under ThreadSanitizer (build_clang_tsan) no data race may
 * be reported.
 */
#include "fixture.h"

#include <pthread.h>
#include <sched.h>

#include <vpmu/vcpu.h>

#define ROUNDS	2000
#define NPMCS	3

struct arg {
	vpmu_vm *vm;
	int stop;		/* atomic */
	unsigned rounds;	/* atomic: the vCPU thread's entries so far */
	unsigned failures;
};

static void *
vcpu_thread(void *p)
{
	struct arg *a = p;
	struct vpmu_entry e;
	struct vpmu_exit x;

	while (!__atomic_load_n(&a->stop, __ATOMIC_ACQUIRE)) {
		if (vpmu_vcpu_enter(a->vm, 1, &e) != 0)
			a->failures++;
		memset(&x, 0, sizeof(x));
		x.reason = VPMU_EXIT_IO;
		x.index = 0x80;
		if (vpmu_vcpu_exit(a->vm, 1, &x) != 0)
			a->failures++;
		__atomic_add_fetch(&a->rounds, 1, __ATOMIC_RELEASE);
	}
	return (NULL);
}

static void
mux_starts_and_stops_beside_a_running_vcpu(void **state)
{
	struct vpmu_pmc_alloc pa[NPMCS];
	struct arg a = { 0 };
	vpmu_config *cfg;
	pthread_t th;
	uint64_t v;
	int i, k;

	(void)state;
	assert_int_equal(vpmu_config_create(&cfg), 0);
	assert_int_equal(vpmu_config_set_vcpus(cfg, 2), 0);
	assert_int_equal(vpmu_config_set_capacity(cfg, 2), 0);
	assert_int_equal(vpmu_config_set_mux_interval(cfg, 100000), 0);
	assert_int_equal(vpmu_vm_create(cfg, &a.vm), 0);
	vpmu_config_destroy(cfg);
	assert_int_equal(vpmu_proc_create(a.vm, &ROOT, 0), 0);
	for (k = 0; k < NPMCS; k++) {
		memset(&pa[k], 0, sizeof(pa[k]));
		pa[k].cpu = 1;
		pa[k].cls = VPMU_CLASS_PV;
		pa[k].event = VPMU_EV_INSTRUCTIONS;
		pa[k].mode = VPMU_MODE_SC;
		assert_int_equal(vpmu_pmc_allocate(a.vm, &ROOT, &pa[k]), 0);
	}
	assert_int_equal(pthread_create(&th, NULL, vcpu_thread, &a), 0);
	/* The vCPU runs before the first start, so the two overlap. */
	while (__atomic_load_n(&a.rounds, __ATOMIC_ACQUIRE) == 0)
		sched_yield();
	for (i = 0; i < ROUNDS; i++)
		for (k = 0; k < NPMCS; k++) {
			assert_int_equal(vpmu_pmc_start(a.vm, &ROOT, pa[k].pmcid), 0);
			if (i % 2 == 1)
				assert_int_equal(vpmu_pmc_stop(a.vm, &ROOT, pa[k].pmcid), 0);
		}
	__atomic_store_n(&a.stop, 1, __ATOMIC_RELEASE);
	assert_int_equal(pthread_join(th, NULL), 0);
	assert_int_equal(a.failures, 0);
	/* ROUNDS is even: the last round stopped every PMC. */
	for (k = 0; k < NPMCS; k++) {
		assert_int_equal(vpmu_pmc_read(a.vm, &ROOT, pa[k].pmcid, &v), 0);
		assert_int_equal(vpmu_pmc_release(a.vm, &ROOT, pa[k].pmcid), 0);
	}
	vpmu_vm_destroy(a.vm);
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(mux_starts_and_stops_beside_a_running_vcpu),
	};

	return (cmocka_run_group_tests(tests, NULL, NULL));
}
