/*
 * fixture.h -- a VM on the synthetic source for the core's unit tests.
 *
 * 2 vCPUs; classes IAP (4 rows: 0-3), IAF (3 rows: 4-6), PV (16 rows: 7-22).
 * Processes: 1 (root), 100 and 101 (uid 1000), 200 (uid 2000),
 * 300 (uid 1000, privileged: a set-id program), 400 (root, jailed).
 */
#ifndef VPMU_TEST_FIXTURE_H
#define VPMU_TEST_FIXTURE_H

#include <errno.h>
#include <signal.h>
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <fcntl.h>
#include <unistd.h>
#include <cmocka.h>

#include <vpmu/vpmu.h>
#include <vpmu/model.h>
#include <vpmu/pmclog.h>

#define ROW_IAP0	0
#define ROW_IAF0	4
#define ROW_PV0		7
#define NPMC		23

static const struct vpmu_cred __attribute__((unused)) ROOT = { .pid = 1, .uid = 0, .privileged = 1 };
static const struct vpmu_cred __attribute__((unused)) USER = { .pid = 100, .uid = 1000 };
static const struct vpmu_cred __attribute__((unused)) USER_CHILD = { .pid = 101, .uid = 1000 };
static const struct vpmu_cred __attribute__((unused)) OTHER = { .pid = 200, .uid = 2000 };
static const struct vpmu_cred __attribute__((unused)) SETID = { .pid = 300, .uid = 1000, .privileged = 1 };
static const struct vpmu_cred __attribute__((unused)) JAILROOT = { .pid = 400, .uid = 0, .privileged = 1, .jailed = 1 };

struct fx {
	vpmu_vm *vm;
	int sigio, sigbus;		/* notifications received */
	int32_t last_sig_pid;
	char diag[8][256];		/* diagnostics received */
	int ndiag;
};

static inline void
fx_notify(vpmu_vm *vm, int32_t pid, int sig, void *arg)
{
	struct fx *f = arg;

	(void)vm;
	if (sig == SIGIO)
		f->sigio++;
	if (sig == SIGBUS)
		f->sigbus++;
	f->last_sig_pid = pid;
}

static inline void
fx_log(int level, const char *msg, void *arg)
{
	struct fx *f = arg;

	(void)level;
	if (f->ndiag < 8)
		snprintf(f->diag[f->ndiag++], sizeof(f->diag[0]), "%s", msg);
}

static inline int
fx_setup(void **state)
{
	static const struct vpmu_cred *procs[] = {
		&ROOT, &USER, &OTHER, &SETID, &JAILROOT
	};
	struct fx *f = calloc(1, sizeof(*f));
	vpmu_config *cfg;
	size_t i;

	assert_non_null(f);
	assert_int_equal(vpmu_config_create(&cfg), 0);
	assert_int_equal(vpmu_config_set_vcpus(cfg, 2), 0);
	vpmu_config_set_notify(cfg, fx_notify, f);
	vpmu_config_set_log(cfg, fx_log, f);
	assert_int_equal(vpmu_vm_create(cfg, &f->vm), 0);
	vpmu_config_destroy(cfg);
	for (i = 0; i < sizeof(procs) / sizeof(procs[0]); i++)
		assert_int_equal(vpmu_proc_create(f->vm, procs[i], 0), 0);
	assert_int_equal(vpmu_proc_fork(f->vm, USER.pid, USER_CHILD.pid), 0);
	*state = f;
	return (0);
}

static inline int
fx_teardown(void **state)
{
	struct fx *f = *state;

	vpmu_vm_destroy(f->vm);
	free(f);
	return (0);
}

/* Allocate a PMC, asserting success; returns its id. */
static inline vpmu_pmc_id
fx_alloc(struct fx *f, const struct vpmu_cred *cr, uint32_t mode, uint32_t cpu,
    uint32_t cls, uint32_t event, uint32_t flags)
{
	struct vpmu_pmc_alloc a = {
		.cpu = cpu, .cls = cls, .event = event, .flags = flags, .mode = mode,
	};

	assert_int_equal(vpmu_pmc_allocate(f->vm, cr, &a), 0);
	assert_int_not_equal(a.pmcid, VPMU_ID_INVALID);
	return (a.pmcid);
}

#define TC_PV(f, cr, ev, fl)	fx_alloc(f, cr, VPMU_MODE_TC, VPMU_CPU_ANY, VPMU_CLASS_PV, ev, fl)
#define SC_PV(f, cr, cpu, ev)	fx_alloc(f, cr, VPMU_MODE_SC, cpu, VPMU_CLASS_PV, ev, 0)

static inline uint64_t
fx_read(struct fx *f, const struct vpmu_cred *cr, vpmu_pmc_id id)
{
	uint64_t v = 0;

	assert_int_equal(vpmu_pmc_read(f->vm, cr, id, &v), 0);
	return (v);
}

/* A log file for CONFIGURELOG: an unlinked temporary file, open for writing. */
static inline int
fx_logfd(void)
{
	char path[64];
	int fd;

	snprintf(path, sizeof(path), "/tmp/vpmu-test-log-XXXXXX");
	fd = mkstemp(path);
	assert_true(fd >= 0);
	unlink(path);
	return (fd);
}

/* A VM of nvcpus vCPUs, of a model (a model string), on src (NULL: the synthetic source). */
static inline vpmu_vm *
fx_vm_model(const char *model, unsigned nvcpus, const struct vpmu_source_ops *src)
{
	struct vpmu_model m;
	vpmu_config *cfg;
	vpmu_vm *vm;
	char err[128];

	assert_int_equal(vpmu_model_parse(model, &m, err, sizeof(err)), 0);
	assert_int_equal(vpmu_config_create(&cfg), 0);
	assert_int_equal(vpmu_config_set_vcpus(cfg, nvcpus), 0);
	assert_int_equal(vpmu_config_set_model(cfg, &m), 0);
	if (src != NULL)
		assert_int_equal(vpmu_config_set_source(cfg, src, NULL), 0);
	assert_int_equal(vpmu_vm_create(cfg, &vm), 0);
	vpmu_config_destroy(cfg);
	return (vm);
}

/*
 * A reader of what was written to log file fd, from its start (a second
 * open file description: fd's offset stays); *rfd to close after it.
 */
static inline vpmu_pmclog_reader *
fx_log_reader(int fd, int *rfd)
{
	vpmu_pmclog_reader *r;
	char proc[64];

	snprintf(proc, sizeof(proc), "/proc/self/fd/%d", fd);
	*rfd = open(proc, O_RDONLY);
	assert_true(*rfd >= 0);
	assert_int_equal(vpmu_pmclog_open_fd(*rfd, &r), 0);
	return (r);
}

#endif /* VPMU_TEST_FIXTURE_H */
