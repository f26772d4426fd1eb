/*
 * test_log.c -- hwpmc's log operations (CONFIGURELOG, FLUSHLOG, WRITELOG,
 * CLOSELOG) and the records the core writes, read back with the project's
 * pmclog reader: order, fields, exact PROCCSW and PROCEXIT counts on the
 * synthetic source, write errors, buffer exhaustion, system (SS) and process
 * (TS) samples, the owner's MAP_IN records (vpmu_log_map_in()).
 */
#include "fixture.h"

#include <fcntl.h>
#include <pthread.h>
#include <stdbool.h>
#include <unistd.h>

#include <vpmu/pmclog.h>
#include "internal.h"		/* vpmu__sample_take(): what the KVM glue calls */

#define MS	1000000ull

struct logfile {
	int fd;
	char path[64];
};

static void
logfile_open(struct logfile *lf)
{
	snprintf(lf->path, sizeof(lf->path), "/tmp/vpmu-test-log-XXXXXX");
	lf->fd = mkstemp(lf->path);
	assert_true(lf->fd >= 0);
	unlink(lf->path);
}

/* Every record of the file, in order; returns how many (at most max). */
static unsigned
logfile_read(struct logfile *lf, struct vpmu_pmclog_ev *evs, unsigned max)
{
	vpmu_pmclog_reader *r;
	int rfd;
	unsigned n = 0;
	char proc[64];

	snprintf(proc, sizeof(proc), "/proc/self/fd/%d", lf->fd);
	rfd = open(proc, O_RDONLY);
	assert_true(rfd >= 0);
	assert_int_equal(vpmu_pmclog_open_fd(rfd, &r), 0);
	while (n < max && vpmu_pmclog_read(r, &evs[n]) == 0)
		n++;
	vpmu_pmclog_close(r);
	close(rfd);
	return (n);
}

static int
configure(struct fx *f, const struct vpmu_cred *cr, int fd)
{
	struct vpmu_op_configurelog cl = { .flags = 0, .logfd = fd };

	return (vpmu_vm_op(f->vm, cr, VPMU_OP_CONFIGURELOG, &cl));
}

static struct vpmu_pmclog_ev evs[256];

static void
configurelog_rules(void **state)
{
	struct fx *f = *state;
	struct logfile lf;
	int p[2];

	logfile_open(&lf);
	assert_int_equal(pipe(p), 0);
	assert_int_equal(configure(f, &USER, p[0]), EBADF);	/* read end */
	assert_int_equal(configure(f, &USER, 12345), EBADF);	/* not open */
	assert_int_equal(configure(f, &USER, -1), EINVAL);	/* no log to close */
	assert_int_equal(configure(f, &USER, lf.fd), 0);
	assert_int_equal(configure(f, &USER, lf.fd), EBUSY);	/* one at a time */
	assert_int_equal(configure(f, &USER, -1), 0);		/* de-configure */
	assert_int_equal(vpmu_vm_op(f->vm, &USER, VPMU_OP_FLUSHLOG, NULL), EINVAL);
	close(p[0]);
	close(p[1]);
	close(lf.fd);
}

static void
log_starts_with_initialize_and_ends_with_closelog(void **state)
{
	struct fx *f = *state;
	struct vpmu_op_writelog wl = { 0xC0FFEE };
	struct logfile lf;
	unsigned n;

	logfile_open(&lf);
	assert_int_equal(configure(f, &USER, lf.fd), 0);
	assert_int_equal(vpmu_vm_op(f->vm, &USER, VPMU_OP_WRITELOG, &wl), 0);
	assert_int_equal(vpmu_vm_op(f->vm, &USER, VPMU_OP_FLUSHLOG, NULL), 0);
	/* FLUSHLOG is synchronous: both records are in the file now. */
	n = logfile_read(&lf, evs, 256);
	assert_int_equal(n, 2);
	assert_int_equal(evs[0].type, VPMU_PMCLOG_INITIALIZE);
	assert_int_equal(evs[0].u.initialize.version, VPMU_PMC_VERSION);
	assert_int_equal(evs[0].u.initialize.cputype, VPMU_CPUTYPE_INTEL_CORE);
	assert_true(evs[0].u.initialize.tsc_freq > 0);
	assert_int_equal(evs[1].type, VPMU_PMCLOG_USERDATA);
	assert_int_equal(evs[1].u.userdata.userdata, 0xC0FFEE);
	assert_true(evs[1].tsc >= evs[0].tsc);
	assert_int_equal(vpmu_vm_op(f->vm, &USER, VPMU_OP_CLOSELOG, NULL), 0);
	n = logfile_read(&lf, evs, 256);
	assert_int_equal(n, 3);
	assert_int_equal(evs[2].type, VPMU_PMCLOG_CLOSELOG);
	assert_int_equal(vpmu_vm_op(f->vm, &USER, VPMU_OP_CLOSELOG, NULL), EINVAL);
	close(lf.fd);
}

/*
 * A process PMC with LOG_PROCCSW and LOG_PROCEXIT: one PROCCSW per slice
 * with exactly what the slice counted, and at exit the process's total.
 */
static void
proccsw_and_procexit_carry_the_exact_counts(void **state)
{
	struct fx *f = *state;
	struct vpmu_pmc_alloc a = { .cpu = VPMU_CPU_ANY, .cls = VPMU_CLASS_PV,
	    .event = VPMU_EV_INSTRUCTIONS, .mode = VPMU_MODE_TC,
	    .flags = VPMU_F_LOG_PROCCSW | VPMU_F_LOG_PROCEXIT | VPMU_F_DESCENDANTS };
	struct logfile lf;
	unsigned n, i, ncsw = 0;
	uint64_t sum = 0, exit101 = 0, exit102 = 0;
	bool allocdyn = false, attach = false, forked = false, exec = false;

	logfile_open(&lf);
	assert_int_equal(vpmu_synthetic_set_rate(f->vm, 0, VPMU_EV_INSTRUCTIONS, 1000), 0);
	assert_int_equal(vpmu_synthetic_set_rate(f->vm, 1, VPMU_EV_INSTRUCTIONS, 3000), 0);
	assert_int_equal(vpmu_pmc_allocate(f->vm, &USER, &a), 0);
	/* Without a log these modifiers cannot start (EDOOFUS); with one they can. */
	assert_int_equal(vpmu_pmc_attach(f->vm, &USER, a.pmcid, USER_CHILD.pid), 0);
	assert_int_equal(vpmu_pmc_start(f->vm, &USER, a.pmcid), VPMU_EDOOFUS);
	assert_int_equal(configure(f, &USER, lf.fd), 0);
	assert_int_equal(vpmu_pmc_start(f->vm, &USER, a.pmcid), 0);
	assert_int_equal(vpmu_proc_fork(f->vm, USER_CHILD.pid, 102), 0);
	assert_int_equal(vpmu_proc_exec(f->vm, 102, "/bin/worker", NULL), 0);
	/* 101: 2 ms on vCPU 0 (2000), 1 ms on vCPU 1 (3000); 102: 3 ms on vCPU 1. */
	assert_int_equal(vpmu_proc_switch_in(f->vm, 0, USER_CHILD.pid, 7), 0);
	assert_int_equal(vpmu_synthetic_advance(f->vm, 0, 2 * MS), 0);
	assert_int_equal(vpmu_proc_switch_out(f->vm, 0), 0);
	assert_int_equal(vpmu_proc_switch_in(f->vm, 1, 102, 8), 0);
	assert_int_equal(vpmu_synthetic_advance(f->vm, 1, 3 * MS), 0);
	assert_int_equal(vpmu_proc_switch_in(f->vm, 1, USER_CHILD.pid, 7), 0);
	assert_int_equal(vpmu_synthetic_advance(f->vm, 1, 1 * MS), 0);
	assert_int_equal(vpmu_proc_switch_out(f->vm, 1), 0);
	assert_int_equal(vpmu_proc_exit(f->vm, 102), 0);
	assert_int_equal(vpmu_proc_exit(f->vm, USER_CHILD.pid), 0);
	assert_int_equal(vpmu_vm_op(f->vm, &USER, VPMU_OP_FLUSHLOG, NULL), 0);

	n = logfile_read(&lf, evs, 256);
	for (i = 0; i < n; i++)
		switch (evs[i].type) {
		case VPMU_PMCLOG_PMCALLOCATEDYN:
			allocdyn = true;
			break;
		case VPMU_PMCLOG_PMCATTACH:
			attach = attach || evs[i].u.pmcattach.pid == 102;
			break;
		case VPMU_PMCLOG_PROCFORK:
			forked = evs[i].u.procfork.oldpid == 101 &&
			    evs[i].u.procfork.newpid == 102;
			break;
		case VPMU_PMCLOG_PROCEXEC:
			exec = evs[i].u.procexec.pid == 102 &&
			    strcmp(evs[i].u.procexec.path, "/bin/worker") == 0;
			break;
		case VPMU_PMCLOG_PROCCSW:
			assert_int_equal(evs[i].u.proccsw.pmcid, a.pmcid);
			ncsw++;
			sum += evs[i].u.proccsw.value;
			if (ncsw == 1) {
				assert_int_equal(evs[i].u.proccsw.value, 2000);
				assert_int_equal(evs[i].u.proccsw.pid, 101);
				assert_int_equal(evs[i].u.proccsw.tid, 7);
			}
			break;
		case VPMU_PMCLOG_PROCEXIT:
			if (evs[i].u.procexit.pid == 102)
				exit102 = evs[i].u.procexit.value;
			if (evs[i].u.procexit.pid == 101)
				exit101 = evs[i].u.procexit.value;
			break;
		default:
			break;
		}
	/* The allocation predates the log: no PMCALLOCATE record for it. */
	assert_false(allocdyn);
	assert_true(attach);
	assert_true(forked);
	assert_true(exec);
	assert_int_equal(ncsw, 3);
	assert_int_equal(sum, 2000 + 9000 + 3000);
	assert_int_equal(exit102, 9000);
	assert_int_equal(exit101, 5000);
	close(lf.fd);
}

static void
pmcallocatedyn_names_the_event(void **state)
{
	struct fx *f = *state;
	struct logfile lf;
	vpmu_pmc_id id;
	unsigned n;

	logfile_open(&lf);
	assert_int_equal(configure(f, &ROOT, lf.fd), 0);
	id = SC_PV(f, &ROOT, 1, VPMU_EV_BRANCHES);
	assert_int_equal(vpmu_vm_op(f->vm, &ROOT, VPMU_OP_FLUSHLOG, NULL), 0);
	n = logfile_read(&lf, evs, 256);
	assert_int_equal(n, 2);
	assert_int_equal(evs[1].type, VPMU_PMCLOG_PMCALLOCATEDYN);
	assert_int_equal(evs[1].u.pmcallocatedyn.pmcid, id);
	assert_int_equal(evs[1].u.pmcallocatedyn.event, VPMU_EV_BRANCHES);
	assert_string_equal(evs[1].u.pmcallocatedyn.evname, "branches");
	close(lf.fd);
}

/* A write error stops the logging; FLUSHLOG reports it. */
static void
flushlog_returns_the_pending_write_error(void **state)
{
	struct fx *f = *state;
	struct vpmu_op_writelog wl = { 1 };
	int full = open("/dev/full", O_WRONLY);

	if (full < 0) {
		print_message("SKIP: /dev/full: %s\n", strerror(errno));
		skip();
	}
	assert_int_equal(configure(f, &USER, full), 0);
	assert_int_equal(vpmu_vm_op(f->vm, &USER, VPMU_OP_WRITELOG, &wl), 0);
	assert_int_equal(vpmu_vm_op(f->vm, &USER, VPMU_OP_FLUSHLOG, NULL), ENOSPC);
	assert_int_equal(vpmu_vm_op(f->vm, &USER, VPMU_OP_FLUSHLOG, NULL), ENOSPC);
	close(full);
}

static void *
drain(void *arg)
{
	char buf[4096];
	int fd = *(int *)arg;

	while (read(fd, buf, sizeof(buf)) > 0)
		;
	return (NULL);
}

/* With every buffer full and the writer stuck, records are dropped and counted. */
static void
full_buffers_drop_records_and_count_them(void **state)
{
	struct vpmu_op_writelog wl = { 7 };
	struct vpmu_driverstats st;
	vpmu_config *cfg;
	struct fx f = { 0 };
	pthread_t t;
	int p[2], error = 0, i;

	(void)state;
	assert_int_equal(vpmu_config_create(&cfg), 0);
	assert_int_equal(vpmu_config_set_tunable(cfg, "logbuffersize", 1), 0);
	assert_int_equal(vpmu_config_set_tunable(cfg, "nbuffers_pcpu", 2), 0);
	assert_int_equal(vpmu_vm_create(cfg, &f.vm), 0);
	vpmu_config_destroy(cfg);
	assert_int_equal(pipe(p), 0);
	(void)fcntl(p[1], F_SETPIPE_SZ, 4096);
	assert_int_equal(configure(&f, &USER, p[1]), 0);
	for (i = 0; i < 10000 && error == 0; i++)
		error = vpmu_vm_op(f.vm, &USER, VPMU_OP_WRITELOG, &wl);
	assert_int_equal(error, ENOMEM);		/* hwpmc: no buffer */
	assert_int_equal(vpmu_vm_get_driverstats(f.vm, &USER, &st), 0);
	assert_true(st.buffer_requests_failed > 0);
	assert_true(st.buffer_requests > st.buffer_requests_failed);
	assert_int_equal(pthread_create(&t, NULL, drain, &p[0]), 0);
	vpmu_vm_destroy(f.vm);				/* CLOSELOG, all written */
	close(p[1]);
	pthread_join(t, NULL);
	close(p[0]);
}

/*
 * Samples: a system sampling PMC with reload 1000 on the synthetic source;
 * the vCPU side takes samples as the KVM glue does after an exit.  The test
 * holds the VM lock while it takes them, so the sweeper cannot drain the
 * 4-entry ring; the producer empties it itself at half full (issue 14):
 * all 10 are taken, none is dropped, and the log gets the 10 CALLCHAIN
 * records (with their call chains) and no DROPNOTIFY.
 */
static void
samples_never_overflow_the_ring(void **state)
{
	struct vpmu_pmc_alloc a = { .cpu = 0, .cls = VPMU_CLASS_PV,
	    .event = VPMU_EV_INSTRUCTIONS, .mode = VPMU_MODE_SS, .count = 1000,
	    .flags = VPMU_F_CALLCHAIN };
	static const uint64_t chain[3] = { 0x101234, 0x105678, 0x109abc };
	struct vpmu_driverstats st;
	struct logfile lf;
	vpmu_config *cfg;
	struct fx f = { 0 };
	unsigned n, i, ncc = 0, ndrop = 0;

	(void)state;
	logfile_open(&lf);
	assert_int_equal(vpmu_config_create(&cfg), 0);
	assert_int_equal(vpmu_config_set_tunable(cfg, "nsamples", 4), 0);
	assert_int_equal(vpmu_vm_create(cfg, &f.vm), 0);
	vpmu_config_destroy(cfg);
	assert_int_equal(vpmu_synthetic_set_rate(f.vm, 0, VPMU_EV_INSTRUCTIONS, 1000), 0);
	assert_int_equal(vpmu_pmc_allocate(f.vm, &ROOT, &a), 0);
	assert_int_equal(vpmu_pmc_start(f.vm, &ROOT, a.pmcid), VPMU_EDOOFUS);	/* no log */
	assert_int_equal(configure(&f, &ROOT, lf.fd), 0);
	assert_int_equal(vpmu_pmc_start(f.vm, &ROOT, a.pmcid), 0);
	assert_int_equal(vpmu_synthetic_advance(f.vm, 0, MS / 2), 0);
	vpmu__vm_lock(f.vm);
	assert_false(vpmu__sample_due(f.vm, 0));		/* 500 of 1000 */
	vpmu__vm_unlock(f.vm);
	assert_int_equal(vpmu_synthetic_advance(f.vm, 0, 10 * MS), 0);	/* 10 periods */
	/*
	 * Ten samples taken under one hold of the VM lock: the sweeper waits
	 * for the lock, and the producer empties the ring at 2 entries.
	 */
	vpmu__vm_lock(f.vm);
	for (i = 0; i < 10; i++) {
		assert_true(vpmu__sample_due(f.vm, 0));
		vpmu__sample_take(f.vm, 0, chain, 3, false, NULL);
	}
	assert_false(vpmu__sample_due(f.vm, 0));		/* 500 of the next */
	vpmu__vm_unlock(f.vm);
	assert_int_equal(vpmu_vm_get_driverstats(f.vm, &ROOT, &st), 0);
	assert_int_equal(st.intr_processed, 10);
	assert_int_equal(st.intr_bufferfull, 0);
	vpmu_vm_destroy(f.vm);			/* the sweeper drains, CLOSELOG */
	n = logfile_read(&lf, evs, 256);
	for (i = 0; i < n; i++) {
		if (evs[i].type == VPMU_PMCLOG_CALLCHAIN) {
			ncc++;
			assert_int_equal(evs[i].u.callchain.pmcid, a.pmcid);
			assert_int_equal(evs[i].u.callchain.npc, 3);
			assert_int_equal(evs[i].u.callchain.pc[0], 0x101234);
			assert_int_equal(evs[i].u.callchain.pc[2], 0x109abc);
			assert_int_equal(evs[i].u.callchain.cpuflags, 0);	/* cpu 0, kernel */
		}
		ndrop += evs[i].type == VPMU_PMCLOG_DROPNOTIFY;
	}
	assert_int_equal(ncc, 10);
	assert_int_equal(ndrop, 0);
	assert_int_equal(evs[n - 1].type, VPMU_PMCLOG_CLOSELOG);
	close(lf.fd);
}

/*
 * A process-sampling (TS) PMC follows its process: with reload 1000 it takes
 * a sample every 1000 events the process runs, on whichever vCPU it runs,
 * and none while it is switched out.  101 runs 3.5 ms on vCPU 0 (3500
 * events: 3 samples), is out while vCPU 0 runs 5 ms more, then runs 1 ms
 * on vCPU 1 (3000 events, 6500 in all: 3 more).  Each CALLCHAIN carries
 * 101, its tid, the vCPU and the user-mode flag the vCPU side gave.
 */
static void
ts_samples_follow_the_process(void **state)
{
	struct fx *f = *state;
	struct vpmu_pmc_alloc a = { .cpu = VPMU_CPU_ANY, .cls = VPMU_CLASS_PV,
	    .event = VPMU_EV_INSTRUCTIONS, .mode = VPMU_MODE_TS, .count = 1000,
	    .flags = VPMU_F_CALLCHAIN };
	static const uint64_t chain[2] = { 0x401000, 0x402000 };
	struct vpmu_driverstats st;
	struct logfile lf;
	unsigned n, i, taken = 0, ncc = 0, cpu0 = 0, cpu1 = 0;

	logfile_open(&lf);
	assert_int_equal(vpmu_synthetic_set_rate(f->vm, 0, VPMU_EV_INSTRUCTIONS, 1000), 0);
	assert_int_equal(vpmu_synthetic_set_rate(f->vm, 1, VPMU_EV_INSTRUCTIONS, 3000), 0);
	assert_int_equal(vpmu_pmc_allocate(f->vm, &USER, &a), 0);
	assert_int_equal(vpmu_pmc_attach(f->vm, &USER, a.pmcid, USER_CHILD.pid), 0);
	assert_int_equal(vpmu_pmc_start(f->vm, &USER, a.pmcid), VPMU_EDOOFUS);	/* no log */
	assert_int_equal(configure(f, &USER, lf.fd), 0);
	assert_int_equal(vpmu_pmc_start(f->vm, &USER, a.pmcid), 0);

	assert_int_equal(vpmu_proc_switch_in(f->vm, 0, USER_CHILD.pid, 7), 0);
	assert_int_equal(vpmu_synthetic_advance(f->vm, 0, 3 * MS + MS / 2), 0);
	vpmu__vm_lock(f->vm);
	while (vpmu__sample_due(f->vm, 0) && taken < 100) {
		vpmu__sample_take(f->vm, 0, chain, 2, true, NULL);
		taken++;
	}
	vpmu__vm_unlock(f->vm);
	assert_int_equal(taken, 3);
	assert_int_equal(vpmu_proc_switch_out(f->vm, 0), 0);
	assert_int_equal(vpmu_synthetic_advance(f->vm, 0, 5 * MS), 0);
	vpmu__vm_lock(f->vm);
	assert_false(vpmu__sample_due(f->vm, 0));		/* 101 is not running */
	vpmu__vm_unlock(f->vm);
	assert_int_equal(vpmu_proc_switch_in(f->vm, 1, USER_CHILD.pid, 7), 0);
	assert_int_equal(vpmu_synthetic_advance(f->vm, 1, MS), 0);
	vpmu__vm_lock(f->vm);
	while (vpmu__sample_due(f->vm, 1) && taken < 100) {
		vpmu__sample_take(f->vm, 1, chain, 2, true, NULL);
		taken++;
	}
	vpmu__vm_unlock(f->vm);
	assert_int_equal(taken, 6);
	assert_int_equal(vpmu_proc_switch_out(f->vm, 1), 0);

	/* FLUSHLOG drains the rings first: all six are in the file after it. */
	assert_int_equal(vpmu_vm_get_driverstats(f->vm, &ROOT, &st), 0);
	assert_int_equal(st.intr_processed, 6);
	assert_int_equal(st.intr_bufferfull, 0);
	assert_int_equal(vpmu_vm_op(f->vm, &USER, VPMU_OP_FLUSHLOG, NULL), 0);
	n = logfile_read(&lf, evs, 256);
	for (i = 0; i < n; i++) {
		if (evs[i].type != VPMU_PMCLOG_CALLCHAIN)
			continue;
		ncc++;
		assert_int_equal(evs[i].u.callchain.pmcid, a.pmcid);
		assert_int_equal(evs[i].u.callchain.pid, USER_CHILD.pid);
		assert_int_equal(evs[i].u.callchain.tid, 7);
		assert_int_equal(evs[i].u.callchain.npc, 2);
		assert_int_equal(evs[i].u.callchain.pc[1], 0x402000);
		assert_int_equal(VPMU_PMCLOG_CPUFLAGS_FLAGS(evs[i].u.callchain.cpuflags),
		    VPMU_PMCLOG_CC_F_USERSPACE);
		cpu0 += VPMU_PMCLOG_CPUFLAGS_CPU(evs[i].u.callchain.cpuflags) == 0;
		cpu1 += VPMU_PMCLOG_CPUFLAGS_CPU(evs[i].u.callchain.cpuflags) == 1;
	}
	assert_int_equal(ncc, 6);
	assert_int_equal(cpu0, 3);
	assert_int_equal(cpu1, 3);
	close(lf.fd);
}

/* vpmu_log_map_in(): a MAP_IN record with its fields; no log, no record. */
static void
map_in_names_the_image(void **state)
{
	struct fx *f = *state;
	static char longpath[VPMU_PMCLOG_PATH_MAX + 1];
	struct logfile lf;

	memset(longpath, 'x', sizeof(longpath) - 1);
	assert_int_equal(vpmu_log_map_in(f->vm, &USER, -1, 0x100000, "/g/hot.elf"), EINVAL);
	logfile_open(&lf);
	assert_int_equal(configure(f, &USER, lf.fd), 0);
	assert_int_equal(vpmu_log_map_in(f->vm, &USER, -1, 0x100000, NULL), EINVAL);
	assert_int_equal(vpmu_log_map_in(f->vm, &USER, -1, 0x100000, longpath), ENAMETOOLONG);
	assert_int_equal(vpmu_log_map_in(NULL, &USER, -1, 0x100000, "/g/hot.elf"), EINVAL);
	assert_int_equal(vpmu_log_map_in(f->vm, &USER, -1, 0x100000, "/g/hot.elf"), 0);
	assert_int_equal(vpmu_log_map_in(f->vm, &USER, 7, 0x400000, "b"), 0);
	assert_int_equal(vpmu_vm_op(f->vm, &USER, VPMU_OP_FLUSHLOG, NULL), 0);
	assert_int_equal(logfile_read(&lf, evs, 256), 3);
	assert_int_equal(evs[1].type, VPMU_PMCLOG_MAP_IN);
	assert_int_equal(evs[1].u.map_in.pid, 0xffffffffu);
	assert_int_equal(evs[1].u.map_in.start, 0x100000);
	assert_string_equal(evs[1].u.map_in.path, "/g/hot.elf");
	assert_int_equal(evs[1].len, 16 + 16 + 12);	/* header, pid, start, the path padded */
	assert_int_equal(evs[2].type, VPMU_PMCLOG_MAP_IN);
	assert_int_equal(evs[2].u.map_in.pid, 7);
	assert_int_equal(evs[2].u.map_in.start, 0x400000);
	assert_string_equal(evs[2].u.map_in.path, "b");
	assert_int_equal(vpmu_vm_op(f->vm, &USER, VPMU_OP_CLOSELOG, NULL), 0);
	close(lf.fd);
}

/* ---- the VM lock: a log's set-up happens outside it (issue 33) ------------------ */

struct cl_call {
	struct fx *f;
	int fd;
	int result;
};

static void *
configure_thread(void *arg)
{
	struct cl_call *c = arg;

	c->result = configure(c->f, &USER, c->fd);
	return (NULL);
}

static unsigned
open_fds(void)
{
	char path[64];
	unsigned n = 0;
	int fd;

	for (fd = 0; fd < 1024; fd++) {
		snprintf(path, sizeof(path), "/proc/self/fd/%d", fd);
		n += access(path, F_OK) == 0;
	}
	return (n);
}

/*
 * CONFIGURELOG duplicates the descriptor and starts the writer before it
 * takes the VM lock: while this thread holds the lock, the call's
 * duplicate appears (within 5 s, else the set-up waited for the lock);
 * vpmu_vm_get_tunable() takes no lock at all.  Once the lock is let go,
 * the call completes and the log starts with INITIALIZE.
 */
static void
configurelog_prepares_outside_the_vm_lock(void **state)
{
	struct fx *f = *state;
	struct logfile lf;
	struct cl_call c = { f, -1, -1 };
	pthread_t t;
	unsigned before, i;
	long v;

	logfile_open(&lf);
	c.fd = lf.fd;
	before = open_fds();
	vpmu__vm_lock(f->vm);
	assert_int_equal(vpmu_vm_get_tunable(f->vm, "mincount", &v), 0);
	assert_int_equal(pthread_create(&t, NULL, configure_thread, &c), 0);
	for (i = 0; i < 5000 && open_fds() == before; i++)
		usleep(1000);
	vpmu__vm_unlock(f->vm);
	assert_int_equal(pthread_join(t, NULL), 0);
	assert_true(i < 5000);
	assert_int_equal(c.result, 0);
	assert_int_equal(vpmu_vm_op(f->vm, &USER, VPMU_OP_CLOSELOG, NULL), 0);
	assert_true(logfile_read(&lf, evs, 256) >= 2);
	assert_int_equal(evs[0].type, VPMU_PMCLOG_INITIALIZE);
	assert_true(evs[0].u.initialize.tsc_freq != 0);
	close(lf.fd);
}

#define T(fn)	cmocka_unit_test_setup_teardown(fn, fx_setup, fx_teardown)

int
main(void)
{
	const struct CMUnitTest tests[] = {
		T(configurelog_rules),
		T(log_starts_with_initialize_and_ends_with_closelog),
		T(proccsw_and_procexit_carry_the_exact_counts),
		T(pmcallocatedyn_names_the_event),
		T(flushlog_returns_the_pending_write_error),
		cmocka_unit_test(full_buffers_drop_records_and_count_them),
		cmocka_unit_test(samples_never_overflow_the_ring),
		T(ts_samples_follow_the_process),
		T(map_in_names_the_image),
		T(configurelog_prepares_outside_the_vm_lock),
	};

	return (cmocka_run_group_tests(tests, NULL, NULL));
}
