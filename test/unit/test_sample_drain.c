/*
 * test_sample_drain.c -- issue 14: a vCPU's sample ring is emptied by its
 * own thread at the high-water mark (half full), so no sample is ever
 * dropped because a consumer thread was not scheduled; the producer takes
 * the consumers' mutex from under the VM lock without deadlock (the
 * drain_want hand-over in libvpmu/sample.c).
 *
 * The samples are taken as the KVM glue takes them after an exit: the VM
 * lock held, vpmu__sample_take() for each due sample, on the synthetic
 * source.
 */
#include "fixture.h"

#include <fcntl.h>
#include <pthread.h>
#include <stdbool.h>
#include <unistd.h>

#include <vpmu/pmclog.h>
#include "internal.h"		/* vpmu__sample_take(): what the KVM glue calls */

#define MS	1000000ull

/*
 * Reads the log: the CALLCHAIN and DROPNOTIFY records; every CALLCHAIN's
 * pc[0] must be the next of a sequence from first, in order.
 */
static void
log_check(int fd, uint64_t first, unsigned *ncc, unsigned *ndrop)
{
	static struct vpmu_pmclog_ev ev;
	vpmu_pmclog_reader *r;
	uint64_t next = first;
	int rfd;

	*ncc = *ndrop = 0;
	r = fx_log_reader(fd, &rfd);
	while (vpmu_pmclog_read(r, &ev) == 0) {
		if (ev.type == VPMU_PMCLOG_CALLCHAIN) {
			assert_int_equal(ev.u.callchain.pc[0], next);
			next++;
			(*ncc)++;
		}
		*ndrop += ev.type == VPMU_PMCLOG_DROPNOTIFY;
	}
	vpmu_pmclog_close(r);
	close(rfd);
}

/* A VM with nsamples entries per ring, one SS sampling PMC of reload 1000 started. */
static vpmu_vm *
sampling_vm(long nsamples, int fd)
{
	struct vpmu_pmc_alloc a = { .cpu = 0, .cls = VPMU_CLASS_PV,
	    .event = VPMU_EV_INSTRUCTIONS, .mode = VPMU_MODE_SS, .count = 1000,
	    .flags = VPMU_F_CALLCHAIN };
	struct vpmu_op_configurelog cl = { .flags = 0, .logfd = fd };
	vpmu_config *cfg;
	vpmu_vm *vm;

	assert_int_equal(vpmu_config_create(&cfg), 0);
	assert_int_equal(vpmu_config_set_tunable(cfg, "nsamples", nsamples), 0);
	assert_int_equal(vpmu_vm_create(cfg, &vm), 0);
	vpmu_config_destroy(cfg);
	assert_int_equal(vpmu_synthetic_set_rate(vm, 0, VPMU_EV_INSTRUCTIONS, 1000), 0);
	assert_int_equal(vpmu_pmc_allocate(vm, &ROOT, &a), 0);
	assert_int_equal(vpmu_vm_op(vm, &ROOT, VPMU_OP_CONFIGURELOG, &cl), 0);
	assert_int_equal(vpmu_pmc_start(vm, &ROOT, a.pmcid), 0);
	return (vm);
}

/*
 * Ten samples under one hold of the VM lock on a 4-entry ring: before
 * issue 14 the sweeper waited for the lock, the ring filled at 4 and 6
 * were dropped.  Now the producer empties its ring at 2 entries: all 10
 * are taken, none is dropped, and the log has them in order, with no
 * DROPNOTIFY.
 */
static void
full_ring_is_emptied_by_its_producer(void **state)
{
	uint64_t chain[3] = { 0, 0x105678, 0x109abc };
	struct vpmu_driverstats st;
	unsigned i, ncc, ndrop;
	vpmu_vm *vm;
	int fd;

	(void)state;
	fd = fx_logfd();
	vm = sampling_vm(4, fd);
	assert_int_equal(vpmu_synthetic_advance(vm, 0, 10 * MS + MS / 2), 0);
	vpmu__vm_lock(vm);
	for (i = 0; i < 10; i++) {
		assert_true(vpmu__sample_due(vm, 0));
		chain[0] = 0x100000 + i;
		vpmu__sample_take(vm, 0, chain, 3, false, NULL);
	}
	assert_false(vpmu__sample_due(vm, 0));
	vpmu__vm_unlock(vm);
	assert_int_equal(vpmu_vm_get_driverstats(vm, &ROOT, &st), 0);
	assert_int_equal(st.intr_processed, 10);
	assert_int_equal(st.intr_bufferfull, 0);
	assert_true(st.log_sweeps >= 5);	/* the producer's drains, at 2 of 4 */
	vpmu_vm_destroy(vm);
	log_check(fd, 0x100000, &ncc, &ndrop);
	assert_int_equal(ncc, 10);
	assert_int_equal(ndrop, 0);
	close(fd);
}

struct flusher {
	vpmu_vm *vm;
	bool stop;
	unsigned flushes;
	int error;		/* the first FLUSHLOG error (no cmocka in a thread) */
};

static void *
flusher_main(void *arg)
{
	struct flusher *fl = arg;
	int error;

	while (!__atomic_load_n(&fl->stop, __ATOMIC_ACQUIRE)) {
		if ((error = vpmu_vm_op(fl->vm, &ROOT, VPMU_OP_FLUSHLOG, NULL)) != 0 &&
		    fl->error == 0)
			fl->error = error;
		fl->flushes++;
	}
	return (NULL);
}

/*
 * The producer, the sweeper and a thread flushing without pause all
 * consume one 4-entry ring: 20000 samples, one per 1 ms of vCPU time,
 * each exit's under its own hold of the VM lock as the KVM glue does.
 * None is dropped, every one is in the log once and in order, and
 * nobody deadlocks (the producer waits for drain_mtx with the VM lock
 * held while the flusher and the sweeper hold drain_mtx and want the
 * lock).
 */
static void
producer_and_consumers_take_turns(void **state)
{
	uint64_t chain[2] = { 0, 0x401000 };
	struct flusher fl = { 0 };
	struct vpmu_driverstats st;
	unsigned i, ncc, ndrop;
	pthread_t t;
	int fd;

	(void)state;
	fd = fx_logfd();
	fl.vm = sampling_vm(4, fd);
	assert_int_equal(pthread_create(&t, NULL, flusher_main, &fl), 0);
	for (i = 0; i < 20000; i++) {
		assert_int_equal(vpmu_synthetic_advance(fl.vm, 0, MS), 0);
		vpmu__vm_lock(fl.vm);
		assert_true(vpmu__sample_due(fl.vm, 0));
		chain[0] = 0x200000 + i;
		vpmu__sample_take(fl.vm, 0, chain, 2, true, NULL);
		vpmu__vm_unlock(fl.vm);
	}
	__atomic_store_n(&fl.stop, true, __ATOMIC_RELEASE);
	pthread_join(t, NULL);
	assert_int_equal(fl.error, 0);
	assert_true(fl.flushes > 0);
	assert_int_equal(vpmu_vm_get_driverstats(fl.vm, &ROOT, &st), 0);
	assert_int_equal(st.intr_processed, 20000);
	assert_int_equal(st.intr_bufferfull, 0);
	assert_int_equal(st.buffer_requests_failed, 0);
	vpmu_vm_destroy(fl.vm);
	log_check(fd, 0x200000, &ncc, &ndrop);
	assert_int_equal(ncc, 20000);
	assert_int_equal(ndrop, 0);
	close(fd);
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(full_ring_is_emptied_by_its_producer),
		cmocka_unit_test(producer_and_consumers_take_turns),
	};

	return (cmocka_run_group_tests(tests, NULL, NULL));
}
