/*
 * test_pv_hwpmc.c -- the channel's hwpmc personality without KVM: two VMs on
 * the synthetic source, each with malloc'd "guest RAM" in two adjacent
 * slots, requests written into that RAM and rung with vpmu_pv_port_io().
 *
 *   VM A: slot 0 at GPA 0 (64 KiB), slot 1 at GPA 64 KiB (64 KiB)
 *   VM B: one slot at GPA 0 (64 KiB)
 *
 * Each RAM buffer has a guard area after it that must stay untouched.
 */
#include "fixture.h"

#include <fcntl.h>
#include <unistd.h>

#include <vpmu/pv.h>
#include <guest/include/vpmu-guest/pv.h>

#define SLOT	0x10000u
#define GUARD	4096u
#define BLK	0x100u		/* where the tests build their block */

struct pvfx {
	vpmu_vm *vm[2];
	uint8_t *ram[2][2];	/* [vm][slot], each SLOT + GUARD bytes */
};

static vpmu_vm *
mkvm(void)
{
	vpmu_config *cfg;
	vpmu_vm *vm;

	assert_int_equal(vpmu_config_create(&cfg), 0);
	assert_int_equal(vpmu_config_set_vcpus(cfg, 2), 0);
	assert_int_equal(vpmu_vm_create(cfg, &vm), 0);
	vpmu_config_destroy(cfg);
	return (vm);
}

static int
setup(void **state)
{
	struct pvfx *f = calloc(1, sizeof(*f));
	int v, s;

	assert_non_null(f);
	for (v = 0; v < 2; v++) {
		f->vm[v] = mkvm();
		for (s = 0; s < 2 - v; s++) {
			f->ram[v][s] = malloc(SLOT + GUARD);
			assert_non_null(f->ram[v][s]);
			memset(f->ram[v][s], 0xA5, SLOT + GUARD);
			assert_int_equal(vpmu_pv_add_memory(f->vm[v], (uint64_t)s * SLOT, SLOT,
			    f->ram[v][s]), 0);
		}
	}
	*state = f;
	return (0);
}

static int
teardown(void **state)
{
	struct pvfx *f = *state;
	int v, s;

	for (v = 0; v < 2; v++) {
		vpmu_vm_destroy(f->vm[v]);
		for (s = 0; s < 2; s++)
			free(f->ram[v][s]);
	}
	free(f);
	return (0);
}

/* The guard bytes after every slot are as setup() left them. */
static void
guards_intact(struct pvfx *f)
{
	int v, s;
	unsigned i;

	for (v = 0; v < 2; v++)
		for (s = 0; s < 2 - v; s++)
			for (i = 0; i < GUARD; i++)
				assert_int_equal(f->ram[v][s][SLOT + i], 0xA5);
}

static void
hdr(struct vpmu_pv_req *r, uint32_t op, uint32_t arglen, int32_t pid, uint32_t uid,
    uint32_t cflags)
{
	memset(r, 0, sizeof(*r));
	r->magic = VPMU_PV_MAGIC;
	r->version = VPMU_PV_VERSION;
	r->hdrsize = VPMU_PV_HDRSIZE;
	r->op = op;
	r->arglen = arglen;
	r->pid = pid;
	r->tid = 1;
	r->uid = uid;
	r->cflags = cflags;
}

static void
ring(vpmu_vm *vm, uint64_t gpa)
{
	uint32_t hi = (uint32_t)(gpa >> 32), lo = (uint32_t)gpa;
	bool handled = false;

	if (hi != 0) {
		assert_int_equal(vpmu_pv_port_io(vm, 0, VPMU_PV_PORT_HI, true, 4, &hi,
		    &handled), 0);
		assert_true(handled);
	}
	assert_int_equal(vpmu_pv_port_io(vm, 0, VPMU_PV_PORT, true, 4, &lo, &handled), 0);
	assert_true(handled);
}

static uint32_t
in32(vpmu_vm *vm, uint16_t port)
{
	uint32_t v = 0;
	bool handled = false;

	assert_int_equal(vpmu_pv_port_io(vm, 0, port, false, 4, &v, &handled), 0);
	assert_true(handled);
	return (v);
}

/*
 * One request as caller (pid, uid, cflags) of VM v: arg (len bytes) at BLK +
 * 64 in slot 0; the out argument copied back into arg.  Returns req.error.
 */
static int
call_as(struct pvfx *f, int v, int32_t pid, uint32_t cflags, uint32_t op, void *arg,
    uint32_t len)
{
	struct vpmu_pv_req *r = (struct vpmu_pv_req *)(f->ram[v][0] + BLK);

	hdr(r, op, len, pid, pid == 1 ? 0 : 1000, cflags);
	if (len > 0)
		memcpy(r + 1, arg, len);
	ring(f->vm[v], BLK);
	assert_int_equal(r->done, VPMU_PV_DONE);
	assert_int_equal((uint32_t)r->error, in32(f->vm[v], VPMU_PV_PORT));
	if (len > 0)
		memcpy(arg, r + 1, len);
	return (r->error);
}

static int
call(struct pvfx *f, int v, uint32_t op, void *arg, uint32_t len)
{
	return (call_as(f, v, 1, VPMU_PV_CRED_PRIVILEGED, op, arg, len));
}

static uint32_t
tc_alloc(struct pvfx *f, int v)
{
	struct vpmu_pv_pmcallocate a = { .cpu = VPMU_CPU_ANY, .cls = VPMU_CLASS_PV,
	    .ev = VPMU_PV_EV_INSTRUCTIONS, .mode = VPMU_MODE_TC };

	assert_int_equal(call(f, v, VPMU_PV_OP_PMCALLOCATE, &a, sizeof(a)), 0);
	return (a.pmcid);
}

static void
mkproc(struct pvfx *f, int v, int32_t pid, uint32_t uid, uint32_t cflags)
{
	struct vpmu_pv_proc p = { pid, 0, uid, cflags };

	assert_int_equal(call(f, v, VPMU_PV_OP_PROC_CREATE, &p, sizeof(p)), 0);
}

/* ---- isolation between VMs ----------------------------------------------------------- */

static void
pmc_ids_are_per_vm(void **state)
{
	struct pvfx *f = *state;
	struct vpmu_pv_simple s;
	struct vpmu_pv_pmcattach at;
	struct vpmu_pv_pmcrw rw = { VPMU_F_OLDVALUE, 0, 0 };
	uint32_t id;

	mkproc(f, 0, 1, 0, VPMU_PV_CRED_PRIVILEGED);
	mkproc(f, 1, 1, 0, VPMU_PV_CRED_PRIVILEGED);
	id = tc_alloc(f, 0);
	assert_int_equal(id, VPMU_ID_MAKE(0xFFF, VPMU_MODE_TC, VPMU_CLASS_PV, 7));
	/* B's pid 1 owns nothing: hwpmc's "without having allocated any PMCs". */
	s.pmcid = id;
	assert_int_equal(call(f, 1, VPMU_PV_OP_PMCSTART, &s, sizeof(s)), VPMU_PV_ESRCH);
	rw.pmcid = id;
	assert_int_equal(call(f, 1, VPMU_PV_OP_PMCRW, &rw, sizeof(rw)), VPMU_PV_ESRCH);
	/* Once it owns a PMC of its own elsewhere, A's id is just an invalid handle. */
	(void)tc_alloc(f, 1);		/* same row, same id value, B's own PMC */
	at.pmcid = id + 1;
	at.pid = 0;
	assert_int_equal(call(f, 1, VPMU_PV_OP_PMCATTACH, &at, sizeof(at)), VPMU_PV_EINVAL);
	/* Releasing B's does not touch A's. */
	s.pmcid = id;
	assert_int_equal(call(f, 1, VPMU_PV_OP_PMCRELEASE, &s, sizeof(s)), 0);
	assert_int_equal(call(f, 1, VPMU_PV_OP_PMCRELEASE, &s, sizeof(s)), VPMU_PV_ESRCH);
	assert_int_equal(call(f, 0, VPMU_PV_OP_PMCSTART, &s, sizeof(s)), 0);
	/* A process created in A does not exist in B. */
	mkproc(f, 0, 50, 0, 0);
	at.pmcid = tc_alloc(f, 1);
	at.pid = 50;
	assert_int_equal(call(f, 1, VPMU_PV_OP_PMCATTACH, &at, sizeof(at)), VPMU_PV_ESRCH);
	guards_intact(f);
}

/* ---- memory ------------------------------------------------------------------------------ */

static void
block_across_slots_EFAULT(void **state)
{
	struct pvfx *f = *state;
	struct vpmu_pv_req *r = (struct vpmu_pv_req *)(f->ram[0][0] + SLOT - 64);
	struct vpmu_pv_req *r2 = (struct vpmu_pv_req *)(f->ram[0][0] + SLOT - 32);
	struct vpmu_pv_stats st;

	/* Header in slot 0, argument in slot 1: the halves are not contiguous on the host. */
	hdr(r, VPMU_PV_OP_GETMODULEVERSION, 4, 1, 0, VPMU_PV_CRED_PRIVILEGED);
	memset(f->ram[0][1], 0x5A, 4);
	ring(f->vm[0], SLOT - 64);
	assert_int_equal(r->done, VPMU_PV_DONE);
	assert_int_equal(r->error, VPMU_PV_EFAULT);
	assert_int_equal(f->ram[0][1][0], 0x5A);	/* slot 1 untouched */
	/* The header itself straddles: never reached, EFAULT through IN32 only. */
	memset(r2, 0, 32);
	ring(f->vm[0], SLOT - 32);
	assert_int_equal(in32(f->vm[0], VPMU_PV_PORT), VPMU_PV_EFAULT);
	assert_int_equal(f->ram[0][1][0], 0x5A);
	/* A block crossing the end of RAM (slot 1's end, then nothing). */
	r = (struct vpmu_pv_req *)(f->ram[0][1] + SLOT - 64);
	hdr(r, VPMU_PV_OP_PMCSTART, 4, 1, 0, VPMU_PV_CRED_PRIVILEGED);
	ring(f->vm[0], 2 * SLOT - 64);
	assert_int_equal(r->error, VPMU_PV_EFAULT);
	assert_int_equal(r->done, VPMU_PV_DONE);
	/* VM B has one slot: its end is 64 KiB. */
	r = (struct vpmu_pv_req *)(f->ram[1][0] + SLOT - 64);
	hdr(r, VPMU_PV_OP_PMCSTART, 4, 1, 0, VPMU_PV_CRED_PRIVILEGED);
	ring(f->vm[1], SLOT - 64);
	assert_int_equal(r->error, VPMU_PV_EFAULT);
	ring(f->vm[1], SLOT);
	assert_int_equal(in32(f->vm[1], VPMU_PV_PORT), VPMU_PV_EFAULT);
	/* Above 4 GiB through the high port. */
	ring(f->vm[0], (1ull << 32) | BLK);
	assert_int_equal(in32(f->vm[0], VPMU_PV_PORT), VPMU_PV_EFAULT);
	assert_int_equal(vpmu_pv_get_stats(f->vm[0], &st), 0);
	assert_int_equal(st.requests, 4);
	assert_int_equal(st.errors, 4);
	assert_int_equal(st.unreachable, 2);
	guards_intact(f);
}

static void
ignored_sizes_and_probe(void **state)
{
	struct pvfx *f = *state;
	struct vpmu_pv_stats st;
	bool handled;
	uint32_t v;

	assert_int_equal(in32(f->vm[0], VPMU_PV_PORT_HI), VPMU_PV_MAGIC);
	assert_int_equal(in32(f->vm[0], VPMU_PV_PORT), 0);	/* no doorbell yet */
	v = 0;
	assert_int_equal(vpmu_pv_port_io(f->vm[0], 0, VPMU_PV_PORT, false, 2, &v, &handled), 0);
	assert_true(handled);
	assert_int_equal(v, 0xFFFFFFFFu);
	v = BLK;
	assert_int_equal(vpmu_pv_port_io(f->vm[0], 0, VPMU_PV_PORT, true, 1, &v, &handled), 0);
	assert_int_equal(vpmu_pv_port_io(f->vm[0], 0, VPMU_PV_PORT + 2, true, 4, &v, &handled), 0);
	assert_true(handled);
	assert_int_equal(vpmu_pv_port_io(f->vm[0], 0, 0x3f8, true, 1, &v, &handled), 0);
	assert_false(handled);
	assert_int_equal(vpmu_pv_get_stats(f->vm[0], &st), 0);
	assert_int_equal(st.ignored, 3);
	assert_int_equal(st.requests, 0);
	guards_intact(f);
}

/* ---- operations -------------------------------------------------------------------------- */

static void
last_error_per_vcpu(void **state)
{
	struct pvfx *f = *state;
	uint32_t v = 0x0B000000u, lo = BLK + 1, got;
	bool handled;

	assert_int_equal(call(f, 0, VPMU_PV_OP_GETMODULEVERSION, &v, 4), VPMU_PV_EPROGMISMATCH);
	assert_int_equal(in32(f->vm[0], VPMU_PV_PORT), VPMU_PV_EPROGMISMATCH);
	/* vCPU 1's last errno is its own. */
	assert_int_equal(vpmu_pv_port_io(f->vm[0], 1, VPMU_PV_PORT, true, 4, &lo, &handled), 0);
	assert_int_equal(vpmu_pv_port_io(f->vm[0], 1, VPMU_PV_PORT, false, 4, &got, &handled), 0);
	assert_int_equal(got, VPMU_PV_EINVAL);
	assert_int_equal(in32(f->vm[0], VPMU_PV_PORT), VPMU_PV_EPROGMISMATCH);
	v = 0x0A000000u;
	assert_int_equal(call(f, 0, VPMU_PV_OP_GETMODULEVERSION, &v, 4), 0);
	assert_int_equal(v, 0x0A000000u);
}

static void
getpmcinfo_rows_and_offline_cpu(void **state)
{
	struct pvfx *f = *state;
	uint8_t buf[8 + 23 * 104];
	struct vpmu_pv_pmcinfo *row = (struct vpmu_pv_pmcinfo *)(buf + 8);
	int32_t cpu = 1;

	/* The synthetic VM: IAP 0-3, IAF 4-6, PV 7-22 (23 rows), none in use. */
	memset(buf, 0, sizeof(buf));
	memcpy(buf, &cpu, 4);
	assert_int_equal(call(f, 0, VPMU_PV_OP_GETPMCINFO, buf, sizeof(buf)), 0);
	assert_string_equal(row[0].name, "IAP-0");
	assert_string_equal(row[22].name, "PV-15");
	assert_int_equal(row[22].cls, VPMU_CLASS_PV);
	assert_int_equal(row[22].ownerpid, -1);
	assert_int_equal(call(f, 0, VPMU_PV_OP_GETPMCINFO, buf, sizeof(buf) - 1),
	    VPMU_PV_EFAULT);
	assert_int_equal(vpmu_vcpu_set_online(f->vm[0], 1, 0), 0);
	assert_int_equal(call(f, 0, VPMU_PV_OP_GETPMCINFO, buf, sizeof(buf)), VPMU_PV_ENXIO);
	cpu = 2;
	memcpy(buf, &cpu, 4);
	assert_int_equal(call(f, 0, VPMU_PV_OP_GETPMCINFO, buf, sizeof(buf)), VPMU_PV_EINVAL);
}

/* The policies apply to the identity the block carries. */
static void
policy_follows_caller_identity(void **state)
{
	struct pvfx *f = *state;
	struct vpmu_pv_pmcallocate a = { .cpu = 0, .cls = VPMU_CLASS_PV,
	    .ev = VPMU_PV_EV_INSTRUCTIONS, .mode = VPMU_MODE_SC };
	struct vpmu_pv_pmcattach at;
	struct vpmu_pv_fork fk = { 100, 101 };

	mkproc(f, 0, 1, 0, VPMU_PV_CRED_PRIVILEGED);
	mkproc(f, 0, 100, 1000, 0);
	assert_int_equal(call(f, 0, VPMU_PV_OP_PROC_FORK, &fk, sizeof(fk)), 0);
	assert_int_equal(call_as(f, 0, 100, 0, VPMU_PV_OP_PMCALLOCATE, &a, sizeof(a)),
	    VPMU_PV_EPERM);
	assert_int_equal(call_as(f, 0, 100, VPMU_PV_CRED_PRIVILEGED | VPMU_PV_CRED_JAILED,
	    VPMU_PV_OP_PMCALLOCATE, &a, sizeof(a)), VPMU_PV_EPERM);
	assert_int_equal(vpmu_vm_set_tunable(f->vm[0], "unprivileged_syspmcs", 1), 0);
	assert_int_equal(call_as(f, 0, 100, 0, VPMU_PV_OP_PMCALLOCATE, &a, sizeof(a)), 0);
	assert_int_equal(call_as(f, 0, 100, VPMU_PV_CRED_JAILED, VPMU_PV_OP_PMCALLOCATE, &a,
	    sizeof(a)), VPMU_PV_EPERM);

	a.cpu = VPMU_CPU_ANY;
	a.mode = VPMU_MODE_TC;
	assert_int_equal(call_as(f, 0, 100, 0, VPMU_PV_OP_PMCALLOCATE, &a, sizeof(a)), 0);
	at.pmcid = a.pmcid;
	at.pid = 101;
	assert_int_equal(vpmu_vm_set_tunable(f->vm[0], "unprivileged_proc_debug", 0), 0);
	assert_int_equal(call_as(f, 0, 100, 0, VPMU_PV_OP_PMCATTACH, &at, sizeof(at)),
	    VPMU_PV_EPERM);
	assert_int_equal(vpmu_vm_set_tunable(f->vm[0], "unprivileged_proc_debug", 1), 0);
	assert_int_equal(call_as(f, 0, 100, 0, VPMU_PV_OP_PMCATTACH, &at, sizeof(at)), 0);
	/* Hooks are the kernel's. */
	assert_int_equal(call_as(f, 0, 100, 0, VPMU_PV_OP_PROC_FORK, &fk, sizeof(fk)),
	    VPMU_PV_EPERM);
}

static void
configurelog_descriptors(void **state)
{
	struct pvfx *f = *state;
	struct vpmu_pv_configurelog cl = { 0, 2 };
	struct vpmu_pv_writelog wl = { 0x1234 };
	char path[] = "/tmp/test_pv_hwpmc.XXXXXX";
	int fd = mkstemp(path), rdonly;

	assert_true(fd >= 0);
	unlink(path);
	rdonly = open("/dev/null", O_RDONLY);
	assert_true(rdonly >= 0);
	assert_int_equal(call(f, 0, VPMU_PV_OP_CONFIGURELOG, &cl, sizeof(cl)), VPMU_PV_EBADF);
	assert_int_equal(vpmu_pv_set_logfd(f->vm[0], 2, rdonly), 0);
	assert_int_equal(call(f, 0, VPMU_PV_OP_CONFIGURELOG, &cl, sizeof(cl)), VPMU_PV_EBADF);
	assert_int_equal(vpmu_pv_set_logfd(f->vm[0], 2, fd), 0);
	/* Offered to VM A only. */
	assert_int_equal(call(f, 1, VPMU_PV_OP_CONFIGURELOG, &cl, sizeof(cl)), VPMU_PV_EBADF);
	assert_int_equal(call(f, 0, VPMU_PV_OP_CONFIGURELOG, &cl, sizeof(cl)), 0);
	assert_int_equal(call(f, 0, VPMU_PV_OP_WRITELOG, &wl, sizeof(wl)), 0);
	assert_int_equal(call(f, 0, VPMU_PV_OP_FLUSHLOG, NULL, 0), 0);
	assert_true(lseek(fd, 0, SEEK_END) > 0);	/* the records reached the host file */
	assert_int_equal(call(f, 0, VPMU_PV_OP_CLOSELOG, NULL, 0), 0);
	cl.logfd = -1;
	assert_int_equal(call(f, 0, VPMU_PV_OP_CONFIGURELOG, &cl, sizeof(cl)), VPMU_PV_EINVAL);
	cl.flags = 1;
	cl.logfd = 2;
	assert_int_equal(call(f, 0, VPMU_PV_OP_CONFIGURELOG, &cl, sizeof(cl)), VPMU_PV_EINVAL);
	close(fd);
	close(rdonly);
}

static void
hooks_exit_and_exec(void **state)
{
	struct pvfx *f = *state;
	struct vpmu_pv_pid p = { 77 };
	struct vpmu_pv_csw cs = { 77, 3 };
	uint8_t ex[16 + 8];
	struct vpmu_pv_exec *x = (struct vpmu_pv_exec *)ex;

	assert_int_equal(call(f, 0, VPMU_PV_OP_PROC_EXIT, &p, sizeof(p)), VPMU_PV_ESRCH);
	assert_int_equal(call(f, 0, VPMU_PV_OP_CSW_IN, &cs, sizeof(cs)), VPMU_PV_ESRCH);
	mkproc(f, 0, 77, 0, 0);
	assert_int_equal(call(f, 0, VPMU_PV_OP_CSW_IN, &cs, sizeof(cs)), 0);
	assert_int_equal(call(f, 0, VPMU_PV_OP_CSW_OUT, NULL, 0), 0);
	memset(ex, 0, sizeof(ex));
	x->pid = 77;
	memcpy(ex + 16, "/bin/sh", 8);
	assert_int_equal(call(f, 0, VPMU_PV_OP_PROC_EXEC, ex, sizeof(ex)), 0);
	ex[sizeof(ex) - 1] = 'x';	/* no NUL inside the argument */
	assert_int_equal(call(f, 0, VPMU_PV_OP_PROC_EXEC, ex, sizeof(ex)), VPMU_PV_EINVAL);
	assert_int_equal(call(f, 0, VPMU_PV_OP_PROC_EXIT, &p, sizeof(p)), 0);
	assert_int_equal(call(f, 0, VPMU_PV_OP_PROC_EXIT, &p, sizeof(p)), VPMU_PV_ESRCH);
	p.pid = VPMU_PV_PID_MAX + 1;	/* libvpmu's own owners are not the guest's */
	assert_int_equal(call(f, 0, VPMU_PV_OP_PROC_EXIT, &p, sizeof(p)), VPMU_PV_EINVAL);
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_setup_teardown(pmc_ids_are_per_vm, setup, teardown),
		cmocka_unit_test_setup_teardown(block_across_slots_EFAULT, setup, teardown),
		cmocka_unit_test_setup_teardown(ignored_sizes_and_probe, setup, teardown),
		cmocka_unit_test_setup_teardown(last_error_per_vcpu, setup, teardown),
		cmocka_unit_test_setup_teardown(getpmcinfo_rows_and_offline_cpu, setup, teardown),
		cmocka_unit_test_setup_teardown(policy_follows_caller_identity, setup, teardown),
		cmocka_unit_test_setup_teardown(configurelog_descriptors, setup, teardown),
		cmocka_unit_test_setup_teardown(hooks_exit_and_exec, setup, teardown),
	};

	return (cmocka_run_group_tests(tests, NULL, NULL));
}
