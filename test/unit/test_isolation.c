/*
 * test_isolation.c -- two VMs in one process (issue 14, "Load and
 * isolation"): a guest never reaches another guest's PMCs, processes,
 * logs or statistics, nor the PMCs the host allocated for itself, whatever
 * it sends on the paravirtual channel.
 *
 * Both VMs: 2 vCPUs, the intel-v2 model (rows 0-6 are the guest's own MSR
 * counters, owner 0), 16 PV rows (7-22), the synthetic source, 64 KiB of
 * malloc'd "guest RAM" at GPA 0 where the requests are built and rung
 * with vpmu_pv_port_io().
 *
 *   VM A: guest process 1 (root) and 5 (uid 1000); log number 0 offered,
 *         written to memfd "a"; the host's owner HOST_A (a pid above the
 *         guest's range) with PMCs and a log of its own (memfd "h").
 *   VM B: guest process 1 (root) and 50; log number 1 offered (memfd
 *         "b"); the host's owner HOST_B with PMCs.
 *
 * Checked, with the errno vpmu_pmc(3), vpmu_log(3) and vpmu_pv(4) give:
 *   - every id of the id space that A's process 1 does not own itself
 *     (cpu 0, 1 and 0xFFF, four modes, five classes, every row and then
 *     some) is EINVAL for PMCSTART, PMCSTOP, PMCRELEASE, PMCRW,
 *     PMCSETCOUNT, PMCATTACH, PMCDETACH and PMCGETMSR; a process that owns
 *     nothing gets ESRCH for all of them (EINVAL for a row past the VM's);
 *   - a request naming the host's pid, 0 or a negative pid is EINVAL
 *     before any operation;
 *   - log numbers not offered to A (B's, and every other) are EBADF;
 *   - B's processes do not exist in A (ESRCH for attach, detach and every
 *     hook), and A's hooks leave them alone in B;
 *   - A's GETPMCINFO shows none of B's PMCs; A's driver statistics count A's
 *     requests and B's only B's;
 *   - pctr and perfmon descriptors are their process's in their VM (EBADF
 *     elsewhere); fast-read pages at the same address in both VMs are each
 *     one's own, and only A's PMC shows in A's;
 *   - after all of it, B's PMCs and the host's still run and read exactly
 *     what the synthetic script gave them; A's guest reads its own counts
 *     exactly;
 *   - each log, read back with the pmclog reader, holds only its owner's
 *     records: its own allocations, its own USERDATA, CALLCHAINs of its own
 *     sampling PMC at its own VM's RIP, and nothing of the other's.
 */
#include "fixture.h"

#include <unistd.h>
#include <sys/mman.h>

#include <vpmu/model.h>
#include <vpmu/pmclog.h>
#include <vpmu/pv.h>
#include <vpmu/vcpu.h>
#include <guest/include/vpmu-guest/pv.h>
#include <guest/include/vpmu-guest/fastpage.h>

#define RAM		0x10000u
#define BLK		0x100u
#define NROWS		(7 + 16)
#define ROW_PV(i)	(7 + (i))
#define NELEM(a)	(sizeof(a) / sizeof((a)[0]))

#define HOST_A_PID	0x40000001	/* above VPMU_PV_PID_MAX: no guest can name it */
#define HOST_B_PID	0x40000002
#define RIP_A		0xA000u
#define RIP_B		0xB000u
#define RATE_A		1000u		/* instructions and cycles per ms */
#define RATE_B		1500u
#define RELOAD		2000u		/* above a ms of either: a sample per exit at most */
#define UD_A		0xAAAA0001u
#define UD_B		0xBBBB0001u

static const struct vpmu_cred HOST_A = { .pid = HOST_A_PID, .tid = 1, .privileged = 1 };
static const struct vpmu_cred HOST_B = { .pid = HOST_B_PID, .tid = 1, .privileged = 1 };

struct side {
	vpmu_vm *vm;
	uint8_t *ram;
	int logfd;			/* the memfd the guest's log goes to */
	/* the guest's PMCs (process 1) */
	uint32_t sc, tc, ss;
	/* the host's */
	vpmu_pmc_id hsc, htc;
};

struct iso {
	struct side s[2];		/* A, B */
	int hostlog;			/* HOST_A's log */
	int64_t retval;			/* the last request's */
};

static vpmu_vm *
mkvm(void)
{
	struct vpmu_model m;
	vpmu_config *cfg;
	vpmu_vm *vm;
	char err[128];

	assert_int_equal(vpmu_config_create(&cfg), 0);
	assert_int_equal(vpmu_config_set_vcpus(cfg, 2), 0);
	assert_int_equal(vpmu_model_parse("intel-v2", &m, err, sizeof(err)), 0);
	assert_int_equal(vpmu_config_set_model(cfg, &m), 0);
	assert_int_equal(vpmu_config_set_tunable(cfg, "nbuffers_pcpu", 2), 0);
	assert_int_equal(vpmu_config_set_tunable(cfg, "logbuffersize", 16), 0);
	assert_int_equal(vpmu_vm_create(cfg, &vm), 0);
	vpmu_config_destroy(cfg);
	return (vm);
}

static int
setup(void **state)
{
	struct iso *f = calloc(1, sizeof(*f));
	int v;

	assert_non_null(f);
	for (v = 0; v < 2; v++) {
		f->s[v].vm = mkvm();
		f->s[v].ram = calloc(1, RAM);
		assert_non_null(f->s[v].ram);
		assert_int_equal(vpmu_pv_add_memory(f->s[v].vm, 0, RAM, f->s[v].ram), 0);
		f->s[v].logfd = memfd_create(v == 0 ? "a" : "b", MFD_CLOEXEC);
		assert_true(f->s[v].logfd >= 0);
	}
	f->hostlog = memfd_create("h", MFD_CLOEXEC);
	assert_true(f->hostlog >= 0);
	/* A's guest may use log number 0, B's number 1: nothing else. */
	assert_int_equal(vpmu_pv_set_logfd(f->s[0].vm, 0, f->s[0].logfd), 0);
	assert_int_equal(vpmu_pv_set_logfd(f->s[1].vm, 1, f->s[1].logfd), 0);
	*state = f;
	return (0);
}

static int
teardown(void **state)
{
	struct iso *f = *state;
	int v;

	for (v = 0; v < 2; v++) {
		vpmu_vm_destroy(f->s[v].vm);
		free(f->s[v].ram);
		close(f->s[v].logfd);
	}
	close(f->hostlog);
	free(f);
	return (0);
}

/*
 * One request from vCPU cpu of VM v as (pid, cflags): arg (len bytes) after
 * the header at BLK; the argument as written back copied into arg.
 * Returns the block's error, which IN 0x5650 must repeat.
 */
static int
pv_cpu(struct iso *f, int v, unsigned cpu, int32_t pid, uint32_t cflags, uint32_t op,
    void *arg, uint32_t len)
{
	struct vpmu_pv_req *r = (struct vpmu_pv_req *)(void *)(f->s[v].ram + BLK);
	uint32_t lo = BLK, in = 0;
	bool handled = false;

	memset(r, 0, sizeof(*r));
	r->magic = VPMU_PV_MAGIC;
	r->version = VPMU_PV_VERSION;
	r->hdrsize = VPMU_PV_HDRSIZE;
	r->op = op;
	r->arglen = len;
	r->pid = pid;
	r->tid = pid;
	r->uid = (cflags & VPMU_PV_CRED_PRIVILEGED) ? 0 : 1000;
	r->cflags = cflags;
	if (len > 0)
		memcpy(r + 1, arg, len);
	assert_int_equal(vpmu_pv_port_io(f->s[v].vm, cpu, VPMU_PV_PORT_BASE, true, 4, &lo,
	    &handled), 0);
	assert_true(handled);
	assert_int_equal(vpmu_pv_port_io(f->s[v].vm, cpu, VPMU_PV_PORT_BASE, false, 4, &in,
	    &handled), 0);
	if (r->done != VPMU_PV_DONE) {
		/* Refused before the header was taken: the port alone says why. */
		return ((int)in);
	}
	assert_int_equal((uint32_t)r->error, in);
	f->retval = r->retval;
	if (len > 0)
		memcpy(arg, r + 1, len);
	return (r->error);
}

static int
pv(struct iso *f, int v, int32_t pid, uint32_t op, void *arg, uint32_t len)
{
	return (pv_cpu(f, v, 0, pid, pid == 1 ? VPMU_PV_CRED_PRIVILEGED : 0, op, arg, len));
}

static uint32_t
pv_alloc(struct iso *f, int v, uint32_t cpu, uint32_t mode, uint32_t ev, uint64_t count)
{
	struct vpmu_pv_pmcallocate a;

	memset(&a, 0, sizeof(a));
	a.cpu = cpu;
	a.cls = VPMU_CLASS_PV;
	a.ev = ev;
	a.mode = mode;
	a.count = count;
	assert_int_equal(pv(f, v, 1, VPMU_PV_OP_PMCALLOCATE, &a, sizeof(a)), 0);
	return (a.pmcid);
}

static uint64_t
pv_read(struct iso *f, int v, uint32_t id)
{
	struct vpmu_pv_pmcrw rw = { VPMU_F_OLDVALUE, id, 0 };

	assert_int_equal(pv(f, v, 1, VPMU_PV_OP_PMCRW, &rw, sizeof(rw)), 0);
	return (rw.value);
}

/* A host PMC; a system one started (a process one has no process to attach). */
static vpmu_pmc_id
host_alloc(vpmu_vm *vm, const struct vpmu_cred *who, uint32_t cpu, uint32_t mode)
{
	struct vpmu_pmc_alloc a;

	memset(&a, 0, sizeof(a));
	a.cpu = cpu;
	a.cls = VPMU_CLASS_PV;
	a.event = VPMU_EV_INSTRUCTIONS;
	a.mode = mode;
	assert_int_equal(vpmu_pmc_allocate(vm, who, &a), 0);
	if (mode == VPMU_MODE_SC)
		assert_int_equal(vpmu_pmc_start(vm, who, a.pmcid), 0);
	return (a.pmcid);
}

/* ms of virtual time on vCPU cpu of VM v, then an exit (samples are taken there). */
static void
run_ms(struct iso *f, int v, unsigned cpu, unsigned ms)
{
	struct vpmu_regs regs;
	struct vpmu_entry e;
	struct vpmu_exit x;
	unsigned i;

	memset(&regs, 0, sizeof(regs));
	regs.rip = v == 0 ? RIP_A : RIP_B;
	regs.long_mode = 1;
	for (i = 0; i < ms; i++) {
		assert_int_equal(vpmu_vcpu_enter(f->s[v].vm, cpu, &e), 0);
		assert_int_equal(vpmu_synthetic_advance(f->s[v].vm, cpu, 1000000), 0);
		memset(&x, 0, sizeof(x));
		x.reason = VPMU_EXIT_OTHER;
		x.flags = VPMU_EXITF_RAN;
		x.regs = &regs;
		assert_int_equal(vpmu_vcpu_exit(f->s[v].vm, cpu, &x), 0);
	}
}

/* The same world in each VM: processes, a log, PMCs of the guest and the host. */
static void
populate(struct iso *f)
{
	struct vpmu_pv_configurelog cl = { 0, 0 };
	struct vpmu_op_configurelog hl = { .flags = 0, .logfd = f->hostlog };
	struct vpmu_pv_proc p;
	struct vpmu_pv_simple s;
	unsigned c;
	int v;

	for (v = 0; v < 2; v++) {
		struct side *sd = &f->s[v];
		uint64_t rate = v == 0 ? RATE_A : RATE_B;

		for (c = 0; c < 2; c++) {
			assert_int_equal(vpmu_synthetic_set_rate(sd->vm, c, VPMU_EV_INSTRUCTIONS,
			    rate), 0);
			assert_int_equal(vpmu_synthetic_set_rate(sd->vm, c, VPMU_EV_CYCLES,
			    rate), 0);
		}
		p = (struct vpmu_pv_proc){ 1, 0, 0, VPMU_PV_CRED_PRIVILEGED };
		assert_int_equal(pv(f, v, 1, VPMU_PV_OP_PROC_CREATE, &p, sizeof(p)), 0);
		p = (struct vpmu_pv_proc){ v == 0 ? 5 : 50, 1, 1000, 0 };
		assert_int_equal(pv(f, v, 1, VPMU_PV_OP_PROC_CREATE, &p, sizeof(p)), 0);
		/* The host's first: they take the first PV rows. */
		if (v == 0) {
			assert_int_equal(vpmu_vm_op(sd->vm, &HOST_A, VPMU_OP_CONFIGURELOG, &hl), 0);
			sd->hsc = host_alloc(sd->vm, &HOST_A, 0, VPMU_MODE_SC);
			sd->htc = host_alloc(sd->vm, &HOST_A, VPMU_CPU_ANY, VPMU_MODE_TC);
		} else {
			sd->hsc = host_alloc(sd->vm, &HOST_B, 0, VPMU_MODE_SC);
			sd->htc = host_alloc(sd->vm, &HOST_B, VPMU_CPU_ANY, VPMU_MODE_TC);
		}
		cl.logfd = v;		/* the number offered to this VM */
		assert_int_equal(pv(f, v, 1, VPMU_PV_OP_CONFIGURELOG, &cl, sizeof(cl)), 0);
		sd->sc = pv_alloc(f, v, 0, VPMU_MODE_SC, VPMU_PV_EV_INSTRUCTIONS, 0);
		sd->tc = pv_alloc(f, v, VPMU_CPU_ANY, VPMU_MODE_TC, VPMU_PV_EV_INSTRUCTIONS, 0);
		sd->ss = pv_alloc(f, v, 1, VPMU_MODE_SS, VPMU_PV_EV_CYCLES, RELOAD);
		s.pmcid = sd->sc;
		assert_int_equal(pv(f, v, 1, VPMU_PV_OP_PMCSTART, &s, sizeof(s)), 0);
		s.pmcid = sd->tc;		/* attaches to process 1 */
		assert_int_equal(pv(f, v, 1, VPMU_PV_OP_PMCSTART, &s, sizeof(s)), 0);
		s.pmcid = sd->ss;
		assert_int_equal(pv(f, v, 1, VPMU_PV_OP_PMCSTART, &s, sizeof(s)), 0);
	}
}

static void
pmc_ids_of_the_other_vm_and_the_host(void **state)
{
	static const uint32_t classes[] = { VPMU_CLASS_TSC, VPMU_CLASS_K8, VPMU_CLASS_IAF,
	    VPMU_CLASS_IAP, VPMU_CLASS_PV };
	static const uint32_t cpus[] = { 0, 1, 2, 0xFFF };
	struct iso *f = *state;
	struct vpmu_pv_simple s;
	struct vpmu_pv_pmcrw rw;
	struct vpmu_pv_pmcsetcount sc;
	struct vpmu_pv_pmcattach at;
	struct vpmu_pv_getmsr gm;
	struct vpmu_driverstats stb0, stb1;
	uint32_t id;
	unsigned ci, m, k, row, tried = 0;
	int32_t who;
	uint64_t v;

	populate(f);
	assert_int_equal(vpmu_vm_get_driverstats(f->s[1].vm, &HOST_B, &stb0), 0);
	/*
	 * The ids B's guest and both hosts hold are among those swept; those
	 * that A's process 1 owns itself are skipped (they are its own).
	 */
	for (who = 1; who <= 5; who += 4)		/* an owner, then a non-owner */
		for (ci = 0; ci < NELEM(cpus); ci++)
			for (m = 0; m < 4; m++)
				for (k = 0; k < NELEM(classes); k++)
					for (row = 0; row < NROWS + 2; row++) {
						/* A row past the VM's is EINVAL for anyone. */
						int want = who == 1 || row >= NROWS ?
						    VPMU_PV_EINVAL : VPMU_PV_ESRCH;

						id = VPMU_ID_MAKE(cpus[ci], m, classes[k], row);
						if (who == 1 && (id == f->s[0].sc ||
						    id == f->s[0].tc || id == f->s[0].ss))
							continue;
						tried++;
						s.pmcid = id;
						assert_int_equal(pv(f, 0, who, VPMU_PV_OP_PMCSTOP, &s,
						    sizeof(s)), want);
						assert_int_equal(pv(f, 0, who, VPMU_PV_OP_PMCSTART, &s,
						    sizeof(s)), want);
						assert_int_equal(pv(f, 0, who, VPMU_PV_OP_PMCRELEASE,
						    &s, sizeof(s)), want);
						rw = (struct vpmu_pv_pmcrw){ VPMU_F_OLDVALUE, id, 0 };
						assert_int_equal(pv(f, 0, who, VPMU_PV_OP_PMCRW, &rw,
						    sizeof(rw)), want);
						assert_int_equal(rw.value, 0);
						rw = (struct vpmu_pv_pmcrw){ VPMU_F_NEWVALUE, id, 77 };
						assert_int_equal(pv(f, 0, who, VPMU_PV_OP_PMCRW, &rw,
						    sizeof(rw)), want);
						sc = (struct vpmu_pv_pmcsetcount){ 5, id, 0 };
						assert_int_equal(pv(f, 0, who, VPMU_PV_OP_PMCSETCOUNT,
						    &sc, sizeof(sc)), want);
						at = (struct vpmu_pv_pmcattach){ id, 0 };
						assert_int_equal(pv(f, 0, who, VPMU_PV_OP_PMCATTACH, &at,
						    sizeof(at)), want);
						assert_int_equal(pv(f, 0, who, VPMU_PV_OP_PMCDETACH, &at,
						    sizeof(at)), want);
						gm = (struct vpmu_pv_getmsr){ 0, id };
						assert_int_equal(pv(f, 0, who, VPMU_PV_OP_PMCGETMSR, &gm,
						    sizeof(gm)), want);
					}
	assert_int_equal(tried, 2 * 4 * 4 * 5 * (NROWS + 2) - 3);
	/* The ids are the same numbers in B and in the hosts: they were in the sweep. */
	assert_int_equal(VPMU_ID_TO_CPU(f->s[1].sc), 0);
	assert_int_equal(VPMU_ID_TO_CPU(f->s[1].hsc), 0);

	/* Nothing of B moved: its statistics did not count A's requests... */
	assert_int_equal(vpmu_vm_get_driverstats(f->s[1].vm, &HOST_B, &stb1), 0);
	assert_int_equal(stb1.syscalls, stb0.syscalls + 1);	/* the GETDRIVERSTATS */
	assert_int_equal(stb1.syscall_errors, stb0.syscall_errors);
	/* ...and B's PMCs and both hosts' run on: 3 ms each. */
	run_ms(f, 0, 0, 3);
	run_ms(f, 1, 0, 3);
	assert_int_equal(pv_read(f, 1, f->s[1].sc), 3 * RATE_B);
	assert_int_equal(vpmu_pmc_read(f->s[1].vm, &HOST_B, f->s[1].hsc, &v), 0);
	assert_int_equal(v, 3 * RATE_B);
	assert_int_equal(vpmu_pmc_read(f->s[0].vm, &HOST_A, f->s[0].hsc, &v), 0);
	assert_int_equal(v, 3 * RATE_A);
	assert_int_equal(pv_read(f, 0, f->s[0].sc), 3 * RATE_A);
	/* The guest's own model counters (owner 0) are unreachable too: no pid 0. */
	s.pmcid = VPMU_ID_MAKE(0, VPMU_MODE_SC, VPMU_CLASS_IAP, 0);
	assert_int_equal(pv_cpu(f, 0, 0, 0, VPMU_PV_CRED_PRIVILEGED, VPMU_PV_OP_PMCSTOP, &s,
	    sizeof(s)), VPMU_PV_EINVAL);
}

static void
the_hosts_pid_cannot_be_named(void **state)
{
	static const int32_t pids[] = { HOST_A_PID, HOST_B_PID, 0, -1, INT32_MIN,
	    VPMU_PV_PID_MAX + 1 };
	struct iso *f = *state;
	struct vpmu_pv_simple s;
	struct vpmu_pv_pmcrw rw;
	struct vpmu_driverstats st0, st1;
	unsigned i;
	uint64_t v;

	populate(f);
	assert_int_equal(vpmu_vm_get_driverstats(f->s[0].vm, &HOST_A, &st0), 0);
	for (i = 0; i < NELEM(pids); i++) {
		s.pmcid = f->s[0].hsc;
		assert_int_equal(pv_cpu(f, 0, 0, pids[i], VPMU_PV_CRED_PRIVILEGED,
		    VPMU_PV_OP_PMCSTOP, &s, sizeof(s)), VPMU_PV_EINVAL);
		assert_int_equal(pv_cpu(f, 0, 0, pids[i], VPMU_PV_CRED_PRIVILEGED,
		    VPMU_PV_OP_PMCRELEASE, &s, sizeof(s)), VPMU_PV_EINVAL);
		rw = (struct vpmu_pv_pmcrw){ VPMU_F_OLDVALUE, f->s[0].hsc, 0 };
		assert_int_equal(pv_cpu(f, 0, 0, pids[i], VPMU_PV_CRED_PRIVILEGED,
		    VPMU_PV_OP_PMCRW, &rw, sizeof(rw)), VPMU_PV_EINVAL);
		assert_int_equal(rw.value, 0);
		assert_int_equal(pv_cpu(f, 0, 0, pids[i], VPMU_PV_CRED_PRIVILEGED,
		    VPMU_PV_OP_FLUSHLOG, NULL, 0), VPMU_PV_EINVAL);
		assert_int_equal(pv_cpu(f, 0, 0, pids[i], VPMU_PV_CRED_PRIVILEGED,
		    VPMU_PV_OP_CLOSELOG, NULL, 0), VPMU_PV_EINVAL);
	}
	/* Refused before the core: not even counted. */
	assert_int_equal(vpmu_vm_get_driverstats(f->s[0].vm, &HOST_A, &st1), 0);
	assert_int_equal(st1.syscalls, st0.syscalls + 1);
	run_ms(f, 0, 0, 2);
	assert_int_equal(vpmu_pmc_read(f->s[0].vm, &HOST_A, f->s[0].hsc, &v), 0);
	assert_int_equal(v, 2 * RATE_A);
	/* The host's log is still open: FLUSHLOG from the host works. */
	assert_int_equal(vpmu_vm_op(f->s[0].vm, &HOST_A, VPMU_OP_FLUSHLOG, NULL), 0);
}

static void
log_numbers_not_offered(void **state)
{
	struct iso *f = *state;
	struct vpmu_pv_configurelog cl = { 0, 0 };
	struct vpmu_pv_writelog wl = { 0x5EC0 };
	int n;

	populate(f);
	/* Process 5 of A has no log: every number but A's 0 is EBADF. */
	for (n = -2; n <= VPMU_PV_MAX_LOGFDS + 1; n++) {
		if (n == 0 || n == -1)
			continue;
		cl.logfd = n;
		assert_int_equal(pv(f, 0, 5, VPMU_PV_OP_CONFIGURELOG, &cl, sizeof(cl)),
		    n < 0 ? VPMU_PV_EINVAL : VPMU_PV_EBADF);
	}
	/* -1 closes a log it does not have. */
	cl.logfd = -1;
	assert_int_equal(pv(f, 0, 5, VPMU_PV_OP_CONFIGURELOG, &cl, sizeof(cl)), VPMU_PV_EINVAL);
	/* Without a log, no log operation works, whoever else has one. */
	assert_int_equal(pv(f, 0, 5, VPMU_PV_OP_WRITELOG, &wl, sizeof(wl)), VPMU_PV_EINVAL);
	assert_int_equal(pv(f, 0, 5, VPMU_PV_OP_FLUSHLOG, NULL, 0), VPMU_PV_EINVAL);
	assert_int_equal(pv(f, 0, 5, VPMU_PV_OP_CLOSELOG, NULL, 0), VPMU_PV_EINVAL);
	/* B's number is B's: A's process 5 is refused it, B's process 50 is not. */
	cl.logfd = 1;
	assert_int_equal(pv(f, 0, 5, VPMU_PV_OP_CONFIGURELOG, &cl, sizeof(cl)), VPMU_PV_EBADF);
	cl.logfd = 0;
	assert_int_equal(pv(f, 1, 50, VPMU_PV_OP_CONFIGURELOG, &cl, sizeof(cl)), VPMU_PV_EBADF);
	/* A's own number, for process 5 too (its own log, same file). */
	assert_int_equal(pv(f, 0, 5, VPMU_PV_OP_CONFIGURELOG, &cl, sizeof(cl)), 0);
	assert_int_equal(pv(f, 0, 5, VPMU_PV_OP_CLOSELOG, NULL, 0), 0);
	/* Withdrawn: no more. */
	assert_int_equal(vpmu_pv_set_logfd(f->s[0].vm, 0, -1), 0);
	assert_int_equal(pv(f, 0, 5, VPMU_PV_OP_CONFIGURELOG, &cl, sizeof(cl)), VPMU_PV_EBADF);
}

static void
processes_of_the_other_vm(void **state)
{
	struct iso *f = *state;
	struct vpmu_pv_pmcattach at;
	struct vpmu_pv_pid pp = { 50 };
	struct vpmu_pv_csw csw = { 50, 50 };
	struct vpmu_pv_fork fk = { 50, 51 };
	struct vpmu_pv_simple s;
	uint32_t tc;

	populate(f);
	/* A's guest attaches its PMC to B's process 50: there is none in A. */
	tc = pv_alloc(f, 0, VPMU_CPU_ANY, VPMU_MODE_TC, VPMU_PV_EV_INSTRUCTIONS, 0);
	at = (struct vpmu_pv_pmcattach){ tc, 50 };
	assert_int_equal(pv(f, 0, 1, VPMU_PV_OP_PMCATTACH, &at, sizeof(at)), VPMU_PV_ESRCH);
	assert_int_equal(pv(f, 0, 1, VPMU_PV_OP_PMCDETACH, &at, sizeof(at)), VPMU_PV_ESRCH);
	/* Nor may its hooks touch it. */
	assert_int_equal(pv(f, 0, 1, VPMU_PV_OP_CSW_IN, &csw, sizeof(csw)), VPMU_PV_ESRCH);
	assert_int_equal(pv(f, 0, 1, VPMU_PV_OP_PROC_FORK, &fk, sizeof(fk)), VPMU_PV_ESRCH);
	assert_int_equal(pv(f, 0, 1, VPMU_PV_OP_PROC_EXIT, &pp, sizeof(pp)), VPMU_PV_ESRCH);
	/* B's process 50 is still there: B's guest attaches to it, and it counts. */
	at = (struct vpmu_pv_pmcattach){ pv_alloc(f, 1, VPMU_CPU_ANY, VPMU_MODE_TC,
	    VPMU_PV_EV_INSTRUCTIONS, 0), 50 };
	assert_int_equal(pv(f, 1, 1, VPMU_PV_OP_PMCATTACH, &at, sizeof(at)), 0);
	s.pmcid = at.pmcid;
	assert_int_equal(pv(f, 1, 1, VPMU_PV_OP_PMCSTART, &s, sizeof(s)), 0);
	assert_int_equal(pv_cpu(f, 1, 1, 1, VPMU_PV_CRED_PRIVILEGED, VPMU_PV_OP_CSW_IN, &csw,
	    sizeof(csw)), 0);
	run_ms(f, 1, 1, 4);
	assert_int_equal(pv_cpu(f, 1, 1, 1, VPMU_PV_CRED_PRIVILEGED, VPMU_PV_OP_CSW_OUT, NULL,
	    0), 0);
	assert_int_equal(pv_read(f, 1, at.pmcid), 4 * RATE_B);
	/* A's process 5 likewise is A's alone. */
	at = (struct vpmu_pv_pmcattach){ f->s[1].tc, 5 };
	s.pmcid = f->s[1].tc;
	assert_int_equal(pv(f, 1, 1, VPMU_PV_OP_PMCSTOP, &s, sizeof(s)), 0);
	assert_int_equal(pv(f, 1, 1, VPMU_PV_OP_PMCATTACH, &at, sizeof(at)), VPMU_PV_ESRCH);
	/* A's process 1 runs its TC PMC on A's vCPU 0: A's count, not B's. */
	csw = (struct vpmu_pv_csw){ 1, 1 };
	assert_int_equal(pv(f, 0, 1, VPMU_PV_OP_CSW_IN, &csw, sizeof(csw)), 0);
	run_ms(f, 0, 0, 2);
	run_ms(f, 1, 0, 2);
	assert_int_equal(pv(f, 0, 1, VPMU_PV_OP_CSW_OUT, NULL, 0), 0);
	assert_int_equal(pv_read(f, 0, f->s[0].tc), 2 * RATE_A);
	assert_int_equal(pv_read(f, 1, f->s[1].tc), 0);
}

static void
pmcinfo_and_stats_are_per_vm(void **state)
{
	struct iso *f = *state;
	struct {
		struct vpmu_pv_getpmcinfo h;
		struct vpmu_pv_pmcinfo pi[NROWS];
	} gi;
	struct vpmu_pv_getdriverstats ds;
	struct vpmu_pv_getcpuinfo ci;
	struct vpmu_pv_pmcadmin ad;
	struct vpmu_pmc_info hpi[NROWS];
	struct vpmu_driverstats st;
	uint32_t n;
	unsigned c, r;

	populate(f);
	/* A's rows: its model's, its guest's and its host's; nothing of B's. */
	for (c = 0; c < 2; c++) {
		memset(&gi, 0, sizeof(gi));
		gi.h.cpu = (int32_t)c;
		assert_int_equal(pv(f, 0, 1, VPMU_PV_OP_GETPMCINFO, &gi, sizeof(gi)), 0);
		for (r = 0; r < NROWS; r++) {
			assert_true(gi.pi[r].ownerpid == -1 || gi.pi[r].ownerpid == 0 ||
			    gi.pi[r].ownerpid == 1 || gi.pi[r].ownerpid == HOST_A_PID);
			assert_int_not_equal(gi.pi[r].ownerpid, HOST_B_PID);
		}
	}
	/* B's system PMC on vCPU 0 is at the row B's host left: A sees A's there. */
	memset(&gi, 0, sizeof(gi));
	assert_int_equal(pv(f, 0, 1, VPMU_PV_OP_GETPMCINFO, &gi, sizeof(gi)), 0);
	assert_int_equal(gi.pi[VPMU_ID_TO_ROW(f->s[0].hsc)].ownerpid, HOST_A_PID);
	assert_int_equal(gi.pi[VPMU_ID_TO_ROW(f->s[0].sc)].ownerpid, 1);
	/* CPUs: the VM's own. */
	assert_int_equal(pv(f, 0, 1, VPMU_PV_OP_GETCPUINFO, &ci, sizeof(ci)), 0);
	assert_int_equal(ci.ncpu, 2);
	assert_int_equal(ci.npmc, NROWS);
	/* Disabling a free row of A's vCPU 1 leaves B's alone. */
	ad = (struct vpmu_pv_pmcadmin){ 1, 0, ROW_PV(15), VPMU_STATE_DISABLED };
	assert_int_equal(pv(f, 0, 1, VPMU_PV_OP_PMCADMIN, &ad, sizeof(ad)), 0);
	n = NROWS;
	assert_int_equal(vpmu_vm_get_pmcinfo(f->s[1].vm, &HOST_B, 1, hpi, &n), 0);
	assert_int_equal(hpi[ROW_PV(15)].enabled, 1);
	assert_int_equal(hpi[ROW_PV(15)].rowdisp, VPMU_DISP_FREE);
	n = NROWS;
	assert_int_equal(vpmu_vm_get_pmcinfo(f->s[0].vm, &HOST_A, 1, hpi, &n), 0);
	assert_int_equal(hpi[ROW_PV(15)].enabled, 0);
	/* Statistics: A's guest sees A's calls, B's only B's. */
	assert_int_equal(vpmu_vm_get_driverstats(f->s[1].vm, &HOST_B, &st), 0);
	assert_int_equal(pv(f, 1, 1, VPMU_PV_OP_GETDRIVERSTATS, &ds, sizeof(ds)), 0);
	assert_int_equal(ds.syscalls, st.syscalls + 1);
	assert_int_equal(ds.syscall_errors, st.syscall_errors);
	assert_int_equal(pv(f, 0, 1, VPMU_PV_OP_PMCSTART, &(struct vpmu_pv_simple){ 0x12345 },
	    4), VPMU_PV_EINVAL);
	assert_int_equal(pv(f, 1, 1, VPMU_PV_OP_GETDRIVERSTATS, &ds, sizeof(ds)), 0);
	assert_int_equal(ds.syscalls, st.syscalls + 2);
	assert_int_equal(ds.syscall_errors, st.syscall_errors);
}

static void
devices_and_pages_are_per_vm(void **state)
{
	struct iso *f = *state;
	struct vpmu_pv_open op = { VPMU_PV_FREAD | VPMU_PV_FWRITE, 0 };
	struct vpmu_pv_close cl;
	struct {
		struct vpmu_pv_ioctl h;
		uint8_t data[56];
	} io;
	struct vpmu_pv_fastpage fp = { 0x2000 };
	struct vpmu_pv_getmsr gm;
	struct vpmu_pv_csw csw = { 1, 1 };
	const struct vpmu_fastpage_slot *sl;
	int32_t pctr_a, perfmon_a;
	unsigned i;
	int v;

	populate(f);
	for (v = 0; v < 2; v++)		/* pages written at exits only, on this thread */
		assert_int_equal(vpmu_pv_set_fastpage_rate(f->s[v].vm, 0), 0);
	/* A's process 1 opens a pctr and a perfmon descriptor... */
	assert_int_equal(pv(f, 0, 1, VPMU_PV_OP_PCTR_OPEN, &op, sizeof(op)), 0);
	pctr_a = (int32_t)f->retval;
	assert_int_equal(pv(f, 0, 1, VPMU_PV_OP_PERFMON_OPEN, &op, sizeof(op)), 0);
	perfmon_a = (int32_t)f->retval;
	/* ...which B's process 1, with none of its own, cannot use or close. */
	memset(&io, 0, sizeof(io));
	io.h.fd = pctr_a;
	io.h.cmd = 0x40386301;		/* PCIOCRD */
	assert_int_equal(pv(f, 1, 1, VPMU_PV_OP_PCTR_IOCTL, &io, sizeof(io)), VPMU_PV_EBADF);
	cl.fd = pctr_a;
	assert_int_equal(pv(f, 1, 1, VPMU_PV_OP_PCTR_CLOSE, &cl, sizeof(cl)), VPMU_PV_EBADF);
	cl.fd = perfmon_a;
	assert_int_equal(pv(f, 1, 1, VPMU_PV_OP_PERFMON_CLOSE, &cl, sizeof(cl)), VPMU_PV_EBADF);
	/* Nor can A's other process: they are process 1's. */
	cl.fd = pctr_a;
	assert_int_equal(pv(f, 0, 5, VPMU_PV_OP_PCTR_CLOSE, &cl, sizeof(cl)), VPMU_PV_EBADF);
	/* Still open in A. */
	assert_int_equal(pv(f, 0, 1, VPMU_PV_OP_PCTR_IOCTL, &io, sizeof(io)), 0);
	assert_int_equal(pv(f, 0, 1, VPMU_PV_OP_PCTR_CLOSE, &cl, sizeof(cl)), 0);
	cl.fd = perfmon_a;
	assert_int_equal(pv(f, 0, 1, VPMU_PV_OP_PERFMON_CLOSE, &cl, sizeof(cl)), 0);

	/* Fast-read pages at the same address in both: not "another process's" (EBUSY). */
	assert_int_equal(pv(f, 0, 1, VPMU_PV_OP_FASTPAGE_SET, &fp, sizeof(fp)), 0);
	assert_int_equal(pv(f, 1, 1, VPMU_PV_OP_FASTPAGE_SET, &fp, sizeof(fp)), 0);
	gm = (struct vpmu_pv_getmsr){ 0, f->s[0].tc };
	assert_int_equal(pv(f, 0, 1, VPMU_PV_OP_PMCGETMSR, &gm, sizeof(gm)), 0);
	assert_true(gm.msr >= VPMU_FP_FIRST_PMC && gm.msr < VPMU_FP_NSLOTS);
	/* A's process 1 runs 3 ms on A's vCPU 0, B's 5 ms on B's. */
	for (v = 0; v < 2; v++) {
		assert_int_equal(pv(f, v, 1, VPMU_PV_OP_CSW_IN, &csw, sizeof(csw)), 0);
		run_ms(f, v, 0, v == 0 ? 3 : 5);
	}
	/* A's page: A's PMC, A's count; B's page: no slot at all. */
	sl = (const void *)(f->s[0].ram + 0x2000 + VPMU_FP_HDRSIZE + gm.msr * VPMU_FP_SLOTSIZE);
	assert_int_equal(sl->pmcid, f->s[0].tc);
	assert_true(sl->flags & VPMU_FP_VALID);
	assert_int_equal(sl->value, 3 * RATE_A);
	for (i = 0; i < VPMU_FP_NSLOTS; i++) {
		sl = (const void *)(f->s[1].ram + 0x2000 + VPMU_FP_HDRSIZE +
		    i * VPMU_FP_SLOTSIZE);
		assert_int_equal(sl->flags, 0);
		assert_int_equal(sl->value, 0);
	}
	/* B's TC counted its own 5 ms, not A's page's. */
	assert_int_equal(pv_read(f, 1, f->s[1].tc), 5 * RATE_B);
	assert_int_equal(pv_read(f, 0, f->s[0].tc), 3 * RATE_A);
}

/* What a log holds. */
struct logsum {
	unsigned ntype[32];
	unsigned cc, cc_bad;		/* CALLCHAINs, and those not of ss at rip */
	unsigned ud, ud_bad;		/* USERDATAs, and those not carrying ud */
	unsigned alloc_bad;		/* PMCALLOCATEDYNs of ids not in ids[] */
};

static void
log_sum(int fd, uint32_t ss, uint64_t rip, uint32_t ud, const uint32_t *ids, unsigned nids,
    struct logsum *ls)
{
	struct vpmu_pmclog_ev *ev = malloc(sizeof(*ev));
	vpmu_pmclog_reader *r;
	unsigned i;
	int st;

	assert_non_null(ev);
	memset(ls, 0, sizeof(*ls));
	assert_int_equal(lseek(fd, 0, SEEK_SET), 0);
	assert_int_equal(vpmu_pmclog_open_fd(fd, &r), 0);
	while ((st = vpmu_pmclog_read(r, ev)) == 0) {
		assert_true(ev->type < 32);
		ls->ntype[ev->type]++;
		switch (ev->type) {
		case VPMU_PMCLOG_CALLCHAIN:
			ls->cc++;
			if (ev->u.callchain.pmcid != ss || ev->u.callchain.npc != 1 ||
			    ev->u.callchain.pc[0] != rip ||
			    VPMU_PMCLOG_CPUFLAGS_CPU(ev->u.callchain.cpuflags) != 1)
				ls->cc_bad++;
			break;
		case VPMU_PMCLOG_USERDATA:
			ls->ud++;
			if (ev->u.userdata.userdata != ud)
				ls->ud_bad++;
			break;
		case VPMU_PMCLOG_PMCALLOCATEDYN:
			for (i = 0; i < nids && ids[i] != ev->u.pmcallocatedyn.pmcid; i++)
				;
			if (i == nids)
				ls->alloc_bad++;
			break;
		}
	}
	if (st != ENODATA)
		fail_msg("log: %s: %s", vpmu_errname(st), vpmu_pmclog_error(r));
	vpmu_pmclog_close(r);
	free(ev);
}

static void
each_log_holds_its_own_records(void **state)
{
	struct iso *f = *state;
	struct vpmu_pv_writelog wl;
	struct vpmu_pv_simple s;
	struct logsum la, lb, lh;
	struct vpmu_pv_getdriverstats ds;
	uint32_t ids[2][3];
	int v;

	populate(f);
	/* Both guests sample cycles on their vCPU 1: A 10 ms, B 8 ms. */
	run_ms(f, 0, 1, 10);
	run_ms(f, 1, 1, 8);
	/* Each writes its cookie; each one's hostile requests on the other's ids. */
	for (v = 0; v < 2; v++) {
		wl.userdata = v == 0 ? UD_A : UD_B;
		assert_int_equal(pv(f, v, 1, VPMU_PV_OP_WRITELOG, &wl, sizeof(wl)), 0);
		s.pmcid = f->s[!v].ss + 1;	/* nobody's */
		assert_int_equal(pv(f, v, 1, VPMU_PV_OP_PMCSTOP, &s, sizeof(s)), VPMU_PV_EINVAL);
		assert_int_equal(pv(f, v, 1, VPMU_PV_OP_FLUSHLOG, NULL, 0), 0);
	}
	/* Samples: A's 10 ms x 1000 / 2000 = 5, B's 8 ms x 1500 / 2000 = 6. */
	assert_int_equal(pv(f, 0, 1, VPMU_PV_OP_GETDRIVERSTATS, &ds, sizeof(ds)), 0);
	assert_int_equal(ds.intr_processed, 5);
	assert_int_equal(ds.intr_bufferfull, 0);
	assert_int_equal(pv(f, 1, 1, VPMU_PV_OP_GETDRIVERSTATS, &ds, sizeof(ds)), 0);
	assert_int_equal(ds.intr_processed, 6);
	assert_int_equal(ds.intr_bufferfull, 0);
	for (v = 0; v < 2; v++) {
		s.pmcid = f->s[v].ss;
		assert_int_equal(pv(f, v, 1, VPMU_PV_OP_PMCSTOP, &s, sizeof(s)), 0);
		assert_int_equal(pv(f, v, 1, VPMU_PV_OP_CLOSELOG, NULL, 0), 0);
		ids[v][0] = f->s[v].sc;
		ids[v][1] = f->s[v].tc;
		ids[v][2] = f->s[v].ss;
	}
	assert_int_equal(vpmu_vm_op(f->s[0].vm, &HOST_A, VPMU_OP_CLOSELOG, NULL), 0);

	log_sum(f->s[0].logfd, f->s[0].ss, RIP_A, UD_A, ids[0], 3, &la);
	log_sum(f->s[1].logfd, f->s[1].ss, RIP_B, UD_B, ids[1], 3, &lb);
	/* The host's log: its two allocations, nothing of any guest's. */
	ids[0][0] = f->s[0].hsc;
	ids[0][1] = f->s[0].htc;
	log_sum(f->hostlog, 0, 0, 0, ids[0], 2, &lh);
	assert_int_equal(la.cc, 5);
	assert_int_equal(la.cc_bad, 0);
	assert_int_equal(la.ud, 1);
	assert_int_equal(la.ud_bad, 0);
	assert_int_equal(la.ntype[VPMU_PMCLOG_PMCALLOCATEDYN], 3);
	assert_int_equal(la.alloc_bad, 0);
	assert_int_equal(la.ntype[VPMU_PMCLOG_PMCATTACH], 1);	/* TC's start, to process 1 */
	assert_int_equal(la.ntype[VPMU_PMCLOG_INITIALIZE], 1);
	assert_int_equal(la.ntype[VPMU_PMCLOG_CLOSELOG], 1);
	assert_int_equal(la.ntype[VPMU_PMCLOG_DROPNOTIFY], 0);
	assert_int_equal(lb.cc, 6);
	assert_int_equal(lb.cc_bad, 0);
	assert_int_equal(lb.ud, 1);
	assert_int_equal(lb.ud_bad, 0);
	assert_int_equal(lb.ntype[VPMU_PMCLOG_PMCALLOCATEDYN], 3);
	assert_int_equal(lb.alloc_bad, 0);
	assert_int_equal(lb.ntype[VPMU_PMCLOG_PMCATTACH], 1);
	assert_int_equal(lb.ntype[VPMU_PMCLOG_INITIALIZE], 1);
	assert_int_equal(lb.ntype[VPMU_PMCLOG_CLOSELOG], 1);
	assert_int_equal(lh.cc, 0);
	assert_int_equal(lh.ud, 0);
	assert_int_equal(lh.ntype[VPMU_PMCLOG_PMCALLOCATEDYN], 2);
	assert_int_equal(lh.alloc_bad, 0);
	assert_int_equal(lh.ntype[VPMU_PMCLOG_PMCATTACH], 0);	/* its TC never started */
	assert_int_equal(lh.ntype[VPMU_PMCLOG_INITIALIZE], 1);
	assert_int_equal(lh.ntype[VPMU_PMCLOG_CLOSELOG], 1);
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_setup_teardown(pmc_ids_of_the_other_vm_and_the_host, setup,
		    teardown),
		cmocka_unit_test_setup_teardown(the_hosts_pid_cannot_be_named, setup, teardown),
		cmocka_unit_test_setup_teardown(log_numbers_not_offered, setup, teardown),
		cmocka_unit_test_setup_teardown(processes_of_the_other_vm, setup, teardown),
		cmocka_unit_test_setup_teardown(pmcinfo_and_stats_are_per_vm, setup, teardown),
		cmocka_unit_test_setup_teardown(devices_and_pages_are_per_vm, setup, teardown),
		cmocka_unit_test_setup_teardown(each_log_holds_its_own_records, setup,
		    teardown),
	};

	return (cmocka_run_group_tests(tests, NULL, NULL));
}
