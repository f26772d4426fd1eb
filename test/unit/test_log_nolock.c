/*
 * test_log_nolock.c -- FLUSHLOG and CLOSELOG wait for the log's writer
 * without the VM lock: while the log's descriptor blocks (a pipe filled to
 * the brim, its reader not reading), the flush or close blocks in one
 * thread (or the owner's exit, which closes it) and, meanwhile, another
 * thread's GETPMCINFO, guest MSR read and
 * WRITELOG on the same VM complete (within 5 s, else the test fails; it
 * cannot hang: the pipe is drained either way).  Once the pipe is read,
 * the flush or close returns 0 and the pipe carries every record emitted
 * before it, in order.  The same through the paravirtual channel: a
 * guest's FLUSHLOG on vCPU 0 blocks, a request of vCPU 1 completes.
 */
#include "fixture.h"

#include <fcntl.h>
#include <pthread.h>
#include <stdbool.h>
#include <time.h>
#include <unistd.h>

#include <vpmu/model.h>
#include <vpmu/pmclog.h>
#include <vpmu/pv.h>
#include <guest/include/vpmu-guest/pv.h>

#define MSR_IA32_PMC0	0xC1u

#define OP_EXIT		(-1)		/* vpmu_proc_exit() of the log's owner */

struct blocked {
	vpmu_vm *vm;
	int op;				/* VPMU_OP_FLUSHLOG, _CLOSELOG, or OP_EXIT */
	int result;			/* the waiter's */
	int done;			/* atomic: the waiter returned */
	/* the other thread's calls */
	int info_error, msr_error, write_error;
	uint32_t info_rows;
	uint64_t msr;
	enum vpmu_msr_verdict msr_verdict;
	int other_done;			/* atomic */
};

static void *
waiter(void *arg)
{
	struct blocked *b = arg;

	b->result = b->op == OP_EXIT ? vpmu_proc_exit(b->vm, ROOT.pid) :
	    vpmu_vm_op(b->vm, &ROOT, b->op, NULL);
	__atomic_store_n(&b->done, 1, __ATOMIC_RELEASE);
	return (NULL);
}

static void *
other(void *arg)
{
	struct blocked *b = arg;
	static struct vpmu_pmc_info rows[64];
	struct vpmu_op_getpmcinfo gi = { .cpu = 0, .npmc = 64, .pmcs = rows };
	struct vpmu_op_writelog wl = { 0x0BEEF };

	/* No cmocka assertion here: they belong to the test's thread. */
	b->info_error = vpmu_vm_op(b->vm, &USER, VPMU_OP_GETPMCINFO, &gi);
	b->info_rows = gi.npmc;
	b->msr_error = vpmu_msr_read(b->vm, 0, MSR_IA32_PMC0, &b->msr, &b->msr_verdict);
	/* A record emitted while the waiter waits: FLUSHLOG does not wait for it. */
	b->write_error = vpmu_vm_op(b->vm, &ROOT, VPMU_OP_WRITELOG, &wl);
	__atomic_store_n(&b->other_done, 1, __ATOMIC_RELEASE);
	return (NULL);
}

static uint64_t
now_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ((uint64_t)ts.tv_sec * 1000 + (uint64_t)ts.tv_nsec / 1000000);
}

static void
sleep_ms(unsigned ms)
{
	struct timespec ts = { 0, (long)ms * 1000000 };

	nanosleep(&ts, NULL);
}

/* Read the pipe until the waiter returns; the bytes after the first skip go to out. */
static void
drain_until_done(int *done, int rfd, size_t skip, int out)
{
	char buf[65536];
	uint64_t t0 = now_ms();
	ssize_t n;
	size_t k;

	assert_int_equal(fcntl(rfd, F_SETFL, O_NONBLOCK), 0);
	for (;;) {
		n = read(rfd, buf, sizeof(buf));
		if (n > 0) {
			k = skip < (size_t)n ? skip : (size_t)n;
			skip -= k;
			assert_int_equal(write(out, buf + k, (size_t)n - k), (ssize_t)((size_t)n - k));
			continue;
		}
		if (__atomic_load_n(done, __ATOMIC_ACQUIRE))
			break;
		assert_true(now_ms() - t0 < 10000);	/* the writer must end */
		sleep_ms(1);
	}
	while ((n = read(rfd, buf, sizeof(buf))) > 0)	/* what came with the last write */
		assert_int_equal(write(out, buf, (size_t)n), n);
}

static void
blocked_writer_does_not_block_the_vm(int op)
{
	struct vpmu_op_configurelog cl = { .flags = 0 };
	struct vpmu_op_writelog wl = { 0x5EED };
	static struct vpmu_pmclog_ev evs[64];
	struct vpmu_model model;
	struct blocked b = { .op = op };
	vpmu_pmclog_reader *r;
	vpmu_config *cfg;
	pthread_t ta, tb;
	char path[] = "/tmp/vpmu-test-nolock-XXXXXX", junk[4096];
	size_t prefill = 0;
	unsigned n = 0, i, nuser = 0;
	uint64_t t0;
	int p[2], out, other_in_time, waiter_done_early;
	ssize_t w;

	assert_int_equal(vpmu_model_parse("intel-v2", &model, NULL, 0), 0);
	assert_int_equal(vpmu_config_create(&cfg), 0);
	assert_int_equal(vpmu_config_set_model(cfg, &model), 0);
	assert_int_equal(vpmu_vm_create(cfg, &b.vm), 0);
	vpmu_config_destroy(cfg);

	/* A pipe its reader does not read, full: the writer's next write(2) blocks. */
	assert_int_equal(pipe(p), 0);
	assert_int_equal(fcntl(p[1], F_SETFL, O_NONBLOCK), 0);
	memset(junk, 'x', sizeof(junk));
	while ((w = write(p[1], junk, sizeof(junk))) > 0)
		prefill += (size_t)w;
	assert_int_equal(errno, EAGAIN);
	assert_true(prefill > 0);
	assert_int_equal(fcntl(p[1], F_SETFL, 0), 0);	/* blocking again (shared with the log's duplicate) */

	cl.logfd = p[1];
	assert_int_equal(vpmu_proc_create(b.vm, &ROOT, 0), 0);
	assert_int_equal(vpmu_vm_op(b.vm, &ROOT, VPMU_OP_CONFIGURELOG, &cl), 0);
	assert_int_equal(vpmu_vm_op(b.vm, &ROOT, VPMU_OP_WRITELOG, &wl), 0);

	assert_int_equal(pthread_create(&ta, NULL, waiter, &b), 0);
	sleep_ms(200);
	waiter_done_early = __atomic_load_n(&b.done, __ATOMIC_ACQUIRE);
	assert_int_equal(pthread_create(&tb, NULL, other, &b), 0);
	t0 = now_ms();
	while (!(other_in_time = __atomic_load_n(&b.other_done, __ATOMIC_ACQUIRE)) &&
	    now_ms() - t0 < 5000)
		sleep_ms(5);
	/* Still blocked: nothing has read the pipe yet. */
	if (!waiter_done_early)
		waiter_done_early = __atomic_load_n(&b.done, __ATOMIC_ACQUIRE);

	/* Unblock, whatever happened, so that a failure cannot hang the test. */
	out = mkstemp(path);
	assert_true(out >= 0);
	unlink(path);
	drain_until_done(&b.done, p[0], prefill, out);
	pthread_join(ta, NULL);
	pthread_join(tb, NULL);

	assert_int_equal(waiter_done_early, 0);		/* the flush/close did block */
	assert_int_equal(other_in_time, 1);		/* ...and the VM did not */
	assert_int_equal(b.info_error, 0);
	assert_int_equal(b.info_rows, 23);		/* IAP 4 + IAF 3 + PV 16 */
	assert_int_equal(b.msr_error, 0);
	assert_int_equal(b.msr_verdict, VPMU_MSR_OK);
	assert_int_equal(b.msr, 0);
	assert_int_equal(b.result, 0);

	if (op != VPMU_OP_FLUSHLOG) {
		/* Gone: WRITELOG during the close found no log, or came before it. */
		assert_true(b.write_error == 0 || b.write_error == EINVAL);
		assert_int_equal(vpmu_vm_op(b.vm, &ROOT, VPMU_OP_FLUSHLOG, NULL), EINVAL);
	} else {
		assert_int_equal(b.write_error, 0);
		assert_int_equal(vpmu_vm_op(b.vm, &ROOT, VPMU_OP_CLOSELOG, NULL), 0);
	}
	vpmu_vm_destroy(b.vm);
	close(p[1]);
	while (read(p[0], junk, sizeof(junk)) > 0)	/* the rest: the close's buffer */
		;
	close(p[0]);

	/* What reached the pipe after the filler: INITIALIZE, then USERDATA 0x5EED. */
	assert_int_equal(lseek(out, 0, SEEK_SET), 0);
	assert_int_equal(vpmu_pmclog_open_fd(out, &r), 0);
	while (n < 64 && vpmu_pmclog_read(r, &evs[n]) == 0)
		n++;
	vpmu_pmclog_close(r);
	close(out);
	assert_true(n >= 2);
	assert_int_equal(evs[0].type, VPMU_PMCLOG_INITIALIZE);
	assert_int_equal(evs[1].type, VPMU_PMCLOG_USERDATA);
	assert_int_equal(evs[1].u.userdata.userdata, 0x5EED);
	for (i = 0; i < n; i++)
		nuser += evs[i].type == VPMU_PMCLOG_USERDATA;
	if (op != VPMU_OP_FLUSHLOG) {
		/* The close's records, CLOSELOG last, are all there. */
		assert_int_equal(evs[n - 1].type, VPMU_PMCLOG_CLOSELOG);
		assert_true(nuser == 1 || nuser == 2);
	} else {
		/*
		 * The flush returned once the records before it were written:
		 * INITIALIZE and USERDATA 0x5EED.  The pipe was drained until
		 * then, so those two are what was read.
		 */
		assert_int_equal(n, 2);
	}
}

static void
flushlog_waits_without_the_vm_lock(void **state)
{
	(void)state;
	blocked_writer_does_not_block_the_vm(VPMU_OP_FLUSHLOG);
}

static void
closelog_waits_without_the_vm_lock(void **state)
{
	(void)state;
	blocked_writer_does_not_block_the_vm(VPMU_OP_CLOSELOG);
}

/* The owner's exit closes its log: the same wait, the same freedom. */
static void
exit_hook_waits_without_the_vm_lock(void **state)
{
	(void)state;
	blocked_writer_does_not_block_the_vm(OP_EXIT);
}

/* ---- the same from a guest, through the paravirtual channel ------------------------ */

#define RAM	0x10000u

struct pvblocked {
	vpmu_vm *vm;
	uint8_t *ram;
	int done, other_done;		/* atomic */
	int32_t flush_error, other_error;
	uint32_t version;
};

/* A block at gpa for op, argument arg (arglen bytes), rung on cpu; its error. */
static int32_t
pv_call(vpmu_vm *vm, uint8_t *ram, unsigned cpu, uint32_t gpa, uint32_t op,
    void *arg, uint32_t arglen)
{
	struct vpmu_pv_req *r = (struct vpmu_pv_req *)(void *)(ram + gpa);
	uint32_t v = gpa;
	bool handled;

	memset(r, 0, VPMU_PV_HDRSIZE);
	r->magic = VPMU_PV_MAGIC;
	r->version = VPMU_PV_VERSION;
	r->hdrsize = VPMU_PV_HDRSIZE;
	r->op = op;
	r->arglen = arglen;
	r->pid = 1;
	r->tid = 1;
	r->cflags = VPMU_PV_CRED_PRIVILEGED;
	if (arglen != 0)
		memcpy(ram + gpa + VPMU_PV_HDRSIZE, arg, arglen);
	if (vpmu_pv_port_io(vm, cpu, VPMU_PV_PORT, true, 4, &v, &handled) != 0 || !handled)
		return (-1);
	if (arglen != 0)
		memcpy(arg, ram + gpa + VPMU_PV_HDRSIZE, arglen);
	return (r->done == VPMU_PV_DONE ? r->error : -2);
}

static void *
pv_waiter(void *arg)
{
	struct pvblocked *b = arg;

	b->flush_error = pv_call(b->vm, b->ram, 0, 0x1000, VPMU_PV_OP_FLUSHLOG, NULL, 0);
	__atomic_store_n(&b->done, 1, __ATOMIC_RELEASE);
	return (NULL);
}

static void *
pv_other(void *arg)
{
	struct pvblocked *b = arg;

	b->version = 0x0A000000u;
	b->other_error = pv_call(b->vm, b->ram, 1, 0x2000, VPMU_PV_OP_GETMODULEVERSION,
	    &b->version, 4);
	__atomic_store_n(&b->other_done, 1, __ATOMIC_RELEASE);
	return (NULL);
}

static void
guest_flushlog_waits_without_the_channel_lock(void **state)
{
	struct vpmu_pv_configurelog gcl = { 0, 0 };
	struct vpmu_pv_writelog gwl = { 0x5EED };
	struct pvblocked b = { 0 };
	static struct vpmu_pmclog_ev evs[8];
	vpmu_pmclog_reader *r;
	unsigned n = 0;
	vpmu_config *cfg;
	pthread_t ta, tb;
	char junk[4096], path[] = "/tmp/vpmu-test-nolock-XXXXXX";
	uint64_t t0;
	int p[2], out, other_in_time, waiter_done_early;
	size_t prefill = 0;
	ssize_t w;

	(void)state;
	assert_int_equal(vpmu_config_create(&cfg), 0);
	assert_int_equal(vpmu_config_set_vcpus(cfg, 2), 0);
	assert_int_equal(vpmu_vm_create(cfg, &b.vm), 0);
	vpmu_config_destroy(cfg);
	b.ram = calloc(1, RAM);
	assert_non_null(b.ram);
	assert_int_equal(vpmu_pv_add_memory(b.vm, 0, RAM, b.ram), 0);

	assert_int_equal(pipe(p), 0);
	assert_int_equal(fcntl(p[1], F_SETFL, O_NONBLOCK), 0);
	memset(junk, 'x', sizeof(junk));
	while ((w = write(p[1], junk, sizeof(junk))) > 0)
		prefill += (size_t)w;
	assert_int_equal(fcntl(p[1], F_SETFL, 0), 0);
	assert_int_equal(vpmu_pv_set_logfd(b.vm, 0, p[1]), 0);
	assert_int_equal(pv_call(b.vm, b.ram, 0, 0x1000, VPMU_PV_OP_CONFIGURELOG, &gcl,
	    sizeof(gcl)), 0);
	assert_int_equal(pv_call(b.vm, b.ram, 0, 0x1000, VPMU_PV_OP_WRITELOG, &gwl,
	    sizeof(gwl)), 0);

	assert_int_equal(pthread_create(&ta, NULL, pv_waiter, &b), 0);
	sleep_ms(200);
	waiter_done_early = __atomic_load_n(&b.done, __ATOMIC_ACQUIRE);
	assert_int_equal(pthread_create(&tb, NULL, pv_other, &b), 0);
	t0 = now_ms();
	while (!(other_in_time = __atomic_load_n(&b.other_done, __ATOMIC_ACQUIRE)) &&
	    now_ms() - t0 < 5000)
		sleep_ms(5);
	if (!waiter_done_early)
		waiter_done_early = __atomic_load_n(&b.done, __ATOMIC_ACQUIRE);

	out = mkstemp(path);
	assert_true(out >= 0);
	unlink(path);
	drain_until_done(&b.done, p[0], prefill, out);
	pthread_join(ta, NULL);
	pthread_join(tb, NULL);

	assert_int_equal(waiter_done_early, 0);		/* the guest's flush did block */
	assert_int_equal(other_in_time, 1);		/* ...and vCPU 1's request did not */
	assert_int_equal(b.other_error, 0);
	assert_int_equal(b.version, 0x0A000000u);
	assert_int_equal(b.flush_error, 0);
	/* What the flush wrote: the guest's INITIALIZE and USERDATA 0x5EED. */
	assert_int_equal(lseek(out, 0, SEEK_SET), 0);
	assert_int_equal(vpmu_pmclog_open_fd(out, &r), 0);
	while (n < 8 && vpmu_pmclog_read(r, &evs[n]) == 0)
		n++;
	vpmu_pmclog_close(r);
	close(out);
	assert_int_equal(n, 2);
	assert_int_equal(evs[0].type, VPMU_PMCLOG_INITIALIZE);
	assert_int_equal(evs[1].type, VPMU_PMCLOG_USERDATA);
	assert_int_equal(evs[1].u.userdata.userdata, 0x5EED);
	vpmu_vm_destroy(b.vm);
	close(p[1]);
	close(p[0]);
	free(b.ram);
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(flushlog_waits_without_the_vm_lock),
		cmocka_unit_test(closelog_waits_without_the_vm_lock),
		cmocka_unit_test(exit_hook_waits_without_the_vm_lock),
		cmocka_unit_test(guest_flushlog_waits_without_the_channel_lock),
	};

	return (cmocka_run_group_tests(tests, NULL, NULL));
}
