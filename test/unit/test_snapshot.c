/*
 * test_snapshot.c -- vpmu_vm_save() / vpmu_vm_restore() on the synthetic
 * source: a VM with guest counters (one near overflow, a PMI pending),
 * hwpmc PMCs of every mode (system and process, counting and sampling),
 * processes, targets, a disabled row and a log is saved and restored into
 * a fresh twin; both read the same values, exact ones, and go on counting
 * alike.  Then the refusals: another version, model or vCPU count, a
 * non-fresh VM, a missing log descriptor, every truncation, byte flips
 * (with and without a matching CRC): an error, never a crash, and the VM
 * unchanged (a good restore still works after them).
 */
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <cmocka.h>

#include <vpmu/vpmu.h>
#include <vpmu/model.h>
#include <vpmu/pv.h>
#include <vpmu/snapshot.h>

#include "internal.h"		/* vm->src_state, for the exact source's point */
#include "exact.h"
#include "guest_msr.h"
#include <guest/include/vpmu-guest/pv.h>	/* VPMU_PV_PID_MAX */

#define MS		1000000ull
#define EVTSEL(i)	(0x186u + (i))
#define PMC(i)		(0x0C1u + (i))
#define FIXED(i)	(0x309u + (i))
#define FIXED_CTRL	0x38Du
#define GSTATUS		0x38Eu
#define GCTRL		0x38Fu
#define EN		(1ull << 22)
#define USR		(1ull << 16)
#define OS		(1ull << 17)
#define INT		(1ull << 20)
#define INSTR		(0xC0ull | OS | USR | EN)
#define BRANCH		(0xC4ull | OS | USR | EN)
#define LOGDESC		3
#define ROW_PV0		7		/* intel-v2: IAP 0-3, IAF 4-6, then PV */

static const struct vpmu_cred ROOT = { .pid = 1, .uid = 0, .privileged = 1 };
static const struct vpmu_cred USER = { .pid = 100, .uid = 1000 };
static const struct vpmu_cred OTHER = { .pid = 200, .uid = 2000 };

static char logpath[2][64];

static vpmu_vm *
mkvm(const char *model, unsigned nvcpus)
{
	struct vpmu_model m;
	vpmu_config *cfg;
	vpmu_vm *vm;
	char err[128];
	unsigned c;

	assert_int_equal(vpmu_model_parse(model, &m, err, sizeof(err)), 0);
	assert_int_equal(vpmu_config_create(&cfg), 0);
	assert_int_equal(vpmu_config_set_vcpus(cfg, nvcpus), 0);
	assert_int_equal(vpmu_config_set_model(cfg, &m), 0);
	assert_int_equal(vpmu_vm_create(cfg, &vm), 0);
	vpmu_config_destroy(cfg);
	/* The source's rates are the host's, not the VM's: set on both. */
	for (c = 0; c < nvcpus; c++) {
		assert_int_equal(vpmu_synthetic_set_rate(vm, c, VPMU_EV_INSTRUCTIONS, 1000), 0);
		assert_int_equal(vpmu_synthetic_set_rate(vm, c, VPMU_EV_BRANCHES, 100), 0);
		assert_int_equal(vpmu_synthetic_set_rate(vm, c, VPMU_EV_CYCLES, 3000), 0);
	}
	return (vm);
}

/* The log descriptor the VMM offers as LOGDESC: file i of two. */
static int
offer_log(vpmu_vm *vm, int i)
{
	int fd;

	snprintf(logpath[i], sizeof(logpath[i]), "/tmp/test_snapshot.%d.%d.log",
	    (int)getpid(), i);
	fd = open(logpath[i], O_CREAT | O_TRUNC | O_WRONLY | O_CLOEXEC, 0600);
	assert_true(fd >= 0);
	assert_int_equal(vpmu_pv_set_logfd(vm, LOGDESC, fd), 0);
	return (fd);
}

static void
wr(vpmu_vm *vm, unsigned cpu, uint32_t msr, uint64_t v)
{
	assert_int_equal(MSR_WRITE(vm, cpu, msr, v), VPMU_MSR_OK);
}

static uint64_t
rd(vpmu_vm *vm, unsigned cpu, uint32_t msr)
{
	uint64_t v = 0xBAD;

	assert_int_equal(MSR_READ(vm, cpu, msr, &v), VPMU_MSR_OK);
	return (v);
}

struct ids {
	vpmu_pmc_id sc, tc, tc_stopped, ss;
};

/*
 * The state under test.  cpu 0: PMC0 counts instructions from 1000, PMC1
 * branches with INT from 2^48 - 150 (overflows after 1.5 ms: status bit 1,
 * a PMI pending), fixed 0 (OS|USR) on; cpu 1: PMC0 counts cycles, USER runs
 * there.  hwpmc: ROOT's system counting PMC on cpu 0 (from 7), USER's
 * process counting PMC on USER and its child 101 (DESCENDANTS), USER's
 * stopped one at 42, ROOT's system sampling PMC (reload 5000) with a log;
 * row PV0+5 disabled on cpu 1.
 */
static struct ids
populate(vpmu_vm *vm)
{
	struct vpmu_pmc_alloc a;
	struct vpmu_op_configurelog cl = { 0, -1 };
	struct ids id;
	int logfd;

	assert_int_equal(vpmu_proc_create(vm, &ROOT, 0), 0);
	assert_int_equal(vpmu_proc_create(vm, &USER, 1), 0);
	assert_int_equal(vpmu_proc_create(vm, &OTHER, 1), 0);
	assert_int_equal(vpmu_proc_fork(vm, USER.pid, 101), 0);
	assert_int_equal(vpmu_proc_exec(vm, USER.pid, "/bin/user", NULL), 0);

	wr(vm, 0, PMC(0), 1000);
	wr(vm, 0, EVTSEL(0), INSTR);
	wr(vm, 0, PMC(1), (1ull << 48) - 150);
	wr(vm, 0, EVTSEL(1), BRANCH | INT);
	wr(vm, 0, FIXED_CTRL, 0x3);
	wr(vm, 0, GCTRL, 0x3 | (1ull << 32));
	wr(vm, 1, EVTSEL(0), 0x3Cull | OS | USR | EN);

	memset(&a, 0, sizeof(a));
	a.cpu = 0; a.cls = VPMU_CLASS_PV; a.event = VPMU_EV_INSTRUCTIONS;
	a.mode = VPMU_MODE_SC; a.count = 7;
	assert_int_equal(vpmu_pmc_allocate(vm, &ROOT, &a), 0);
	id.sc = a.pmcid;
	assert_int_equal(vpmu_pmc_start(vm, &ROOT, id.sc), 0);

	memset(&a, 0, sizeof(a));
	a.cpu = VPMU_CPU_ANY; a.cls = VPMU_CLASS_PV; a.event = VPMU_EV_BRANCHES;
	a.mode = VPMU_MODE_TC; a.flags = VPMU_F_DESCENDANTS;
	assert_int_equal(vpmu_pmc_allocate(vm, &USER, &a), 0);
	id.tc = a.pmcid;
	assert_int_equal(vpmu_pmc_attach(vm, &USER, id.tc, 0), 0);
	assert_int_equal(vpmu_pmc_start(vm, &USER, id.tc), 0);

	memset(&a, 0, sizeof(a));
	a.cpu = VPMU_CPU_ANY; a.cls = VPMU_CLASS_PV; a.event = VPMU_EV_CYCLES;
	a.mode = VPMU_MODE_TC; a.count = 42;
	assert_int_equal(vpmu_pmc_allocate(vm, &USER, &a), 0);
	id.tc_stopped = a.pmcid;

	logfd = offer_log(vm, 0);
	cl.logfd = logfd;
	assert_int_equal(vpmu_vm_op(vm, &ROOT, VPMU_OP_CONFIGURELOG, &cl), 0);
	memset(&a, 0, sizeof(a));
	a.cpu = 0; a.cls = VPMU_CLASS_PV; a.event = VPMU_EV_CYCLES;
	a.mode = VPMU_MODE_SS; a.count = 5000;
	assert_int_equal(vpmu_pmc_allocate(vm, &ROOT, &a), 0);
	id.ss = a.pmcid;
	assert_int_equal(vpmu_pmc_start(vm, &ROOT, id.ss), 0);

	assert_int_equal(vpmu_pmc_admin(vm, &ROOT, 1, ROW_PV0 + 5, VPMU_ADMIN_DISABLE), 0);
	assert_int_equal(vpmu_proc_switch_in(vm, 1, USER.pid, 1001), 0);

	assert_int_equal(vpmu_synthetic_advance(vm, 0, 2 * MS), 0);
	assert_int_equal(vpmu_synthetic_advance(vm, 1, 3 * MS), 0);
	assert_int_equal(vpmu_vcpu_check_overflow(vm, 0), 0);
	return (id);
}

/* Everything a guest or the host can read, as one comparable record. */
struct view {
	struct vpmu_counter_info ci[2][16];
	unsigned n[2];
	uint64_t gstatus, gctrl, fixed_ctrl;
	struct vpmu_count pc[4];
	struct vpmu_pmc_info pi[2][64];
	uint32_t npi[2];
	struct vpmu_driverstats st;
};

static void
look(vpmu_vm *vm, const struct ids *id, struct view *v)
{
	unsigned c;

	memset(v, 0, sizeof(*v));
	for (c = 0; c < 2; c++) {
		v->n[c] = 16;
		assert_int_equal(vpmu_vcpu_get_counters(vm, c, v->ci[c], &v->n[c]), 0);
		v->npi[c] = 64;
		assert_int_equal(vpmu_vm_get_pmcinfo(vm, &ROOT, c, v->pi[c], &v->npi[c]), 0);
	}
	v->gstatus = rd(vm, 0, GSTATUS);
	v->gctrl = rd(vm, 0, GCTRL);
	v->fixed_ctrl = rd(vm, 0, FIXED_CTRL);
	assert_int_equal(vpmu_pmc_get_count(vm, ROOT.pid, id->sc, &v->pc[0]), 0);
	assert_int_equal(vpmu_pmc_get_count(vm, USER.pid, id->tc, &v->pc[1]), 0);
	assert_int_equal(vpmu_pmc_get_count(vm, USER.pid, id->tc_stopped, &v->pc[2]), 0);
	assert_int_equal(vpmu_pmc_get_count(vm, ROOT.pid, id->ss, &v->pc[3]), 0);
	assert_int_equal(vpmu_vm_get_driverstats(vm, &ROOT, &v->st), 0);
}

static void
same(const struct view *a, const struct view *b)
{
	unsigned c, i;

	for (c = 0; c < 2; c++) {
		assert_int_equal(a->n[c], b->n[c]);
		for (i = 0; i < a->n[c]; i++) {
			assert_string_equal(a->ci[c][i].name, b->ci[c][i].name);
			assert_string_equal(a->ci[c][i].event, b->ci[c][i].event);
			assert_int_equal(a->ci[c][i].control, b->ci[c][i].control);
			assert_int_equal(a->ci[c][i].value, b->ci[c][i].value);
			assert_int_equal(a->ci[c][i].raw, b->ci[c][i].raw);
			assert_int_equal(a->ci[c][i].time_enabled, b->ci[c][i].time_enabled);
			assert_int_equal(a->ci[c][i].time_running, b->ci[c][i].time_running);
			assert_int_equal(a->ci[c][i].used, b->ci[c][i].used);
			assert_int_equal(a->ci[c][i].enabled, b->ci[c][i].enabled);
		}
		assert_int_equal(a->npi[c], b->npi[c]);
		assert_memory_equal(a->pi[c], b->pi[c], a->npi[c] * sizeof(a->pi[c][0]));
	}
	assert_int_equal(a->gstatus, b->gstatus);
	assert_int_equal(a->gctrl, b->gctrl);
	assert_int_equal(a->fixed_ctrl, b->fixed_ctrl);
	for (i = 0; i < 4; i++) {
		assert_int_equal(a->pc[i].value, b->pc[i].value);
		assert_int_equal(a->pc[i].time_enabled, b->pc[i].time_enabled);
		assert_int_equal(a->pc[i].time_running, b->pc[i].time_running);
	}
	/* log_sweeps counts the sweeper thread's passes: timing, not state. */
	assert_int_equal(a->st.intr_ignored, b->st.intr_ignored);
	assert_int_equal(a->st.intr_processed, b->st.intr_processed);
	assert_int_equal(a->st.intr_bufferfull, b->st.intr_bufferfull);
	assert_int_equal(a->st.syscalls, b->st.syscalls);
	assert_int_equal(a->st.syscall_errors, b->st.syscall_errors);
	assert_int_equal(a->st.buffer_requests, b->st.buffer_requests);
	assert_int_equal(a->st.buffer_requests_failed, b->st.buffer_requests_failed);
}

static uint8_t *
save(vpmu_vm *vm, size_t *len)
{
	uint8_t *b;
	size_t n = 0;

	assert_int_equal(vpmu_vm_save(vm, NULL, &n), ENOSPC);
	assert_true(n > 32);
	b = malloc(n);
	assert_non_null(b);
	*len = n - 1;
	assert_int_equal(vpmu_vm_save(vm, b, len), ENOSPC);
	assert_int_equal(*len, n);
	assert_int_equal(vpmu_vm_save(vm, b, len), 0);
	assert_int_equal(*len, n);
	return (b);
}

static void
advance_both(vpmu_vm *a, vpmu_vm *b, unsigned cpu, uint64_t ns)
{
	assert_int_equal(vpmu_synthetic_advance(a, cpu, ns), 0);
	assert_int_equal(vpmu_synthetic_advance(b, cpu, ns), 0);
	assert_int_equal(vpmu_vcpu_check_overflow(a, cpu), 0);
	assert_int_equal(vpmu_vcpu_check_overflow(b, cpu), 0);
}

/* ---- round trip ---------------------------------------------------------------- */

static void
round_trip_exact_values(void **state)
{
	vpmu_vm *a = mkvm("intel-v2", 2), *b = mkvm("intel-v2", 2);
	struct ids id = populate(a);
	struct view va, vb;
	uint8_t *blob;
	size_t len;
	int fd;

	(void)state;
	blob = save(a, &len);
	fd = offer_log(b, 1);
	assert_int_equal(vpmu_vm_restore(b, blob, len), 0);
	/* The restored VM saves to the same blob (the sweeper's pass count aside). */
	{
		uint8_t *again;
		size_t alen;
		const uint8_t *t;
		size_t at;

		again = save(b, &alen);
		assert_int_equal(alen, len);
		t = memmem(blob + 32, len - 32, "VMST", 4);
		assert_non_null(t);
		at = (size_t)(t - blob) + 4 + 3 * 8 + 7 * 4;	/* log_sweeps */
		assert_memory_equal(blob + 32, again + 32, at - 32);
		assert_memory_equal(blob + at + 4, again + at + 4, len - at - 4);
		free(again);
	}
	look(a, &id, &va);
	look(b, &id, &vb);
	same(&va, &vb);

	/* Exact: 2 ms at 1000 instructions / 100 branches / 3000 cycles per ms. */
	assert_int_equal(vb.ci[0][0].value, 1000 + 2000);		/* PMC0 */
	assert_int_equal(vb.ci[0][1].value, 50);		/* PMC1 wrapped: -150 + 200 */
	assert_int_equal(vb.ci[0][4].value, 2000);			/* FIXED_CTR0 */
	assert_int_equal(vb.ci[1][0].value, 9000);			/* cpu 1, 3 ms cycles */
	assert_int_equal(vb.gstatus, 0x2);				/* PMC1 overflowed */
	assert_int_equal(vb.pc[0].value, 7 + 2000);			/* SC from 7 */
	assert_int_equal(vb.pc[1].value, 300);				/* TC: USER on cpu 1 */
	assert_int_equal(vb.pc[2].value, 42);				/* stopped */
	assert_int_equal(vb.pc[3].value, 6000);				/* SS cycles */
	assert_int_equal(vb.ci[0][0].time_enabled, 2 * MS);
	assert_int_equal(TAKE_PMI(b, 0), 1);			/* the PMI came along */
	assert_int_equal(TAKE_PMI(a, 0), 1);
	assert_int_equal(TAKE_PMI(b, 1), 0);

	/* Both go on alike, from where they were. */
	advance_both(a, b, 0, 4 * MS);
	advance_both(a, b, 1, 1 * MS);
	look(a, &id, &va);
	look(b, &id, &vb);
	same(&va, &vb);
	assert_int_equal(vb.ci[0][0].value, 1000 + 6000);
	assert_int_equal(vb.pc[0].value, 7 + 6000);
	assert_int_equal(vb.pc[1].value, 400);
	assert_int_equal(vb.ci[1][0].value, 12000);

	/* A process switch and a guest write act alike on both. */
	assert_int_equal(vpmu_proc_switch_out(a, 1), 0);
	assert_int_equal(vpmu_proc_switch_out(b, 1), 0);
	wr(a, 0, PMC(0), 5);
	wr(b, 0, PMC(0), 5);
	advance_both(a, b, 1, 2 * MS);
	advance_both(a, b, 0, 1 * MS);
	look(a, &id, &va);
	look(b, &id, &vb);
	same(&va, &vb);
	assert_int_equal(vb.ci[0][0].value, 5 + 1000);
	assert_int_equal(vb.pc[1].value, 400);

	free(blob);
	vpmu_vm_destroy(a);
	vpmu_vm_destroy(b);
	close(fd);
	unlink(logpath[0]);
	unlink(logpath[1]);
}

/* A VM with no guest PMU: hwpmc state only. */
static void
save_without_model(void **state)
{
	vpmu_vm *a = mkvm("none", 1), *b = mkvm("none", 1);
	struct vpmu_pmc_alloc al = { .cpu = 0, .cls = VPMU_CLASS_PV,
	    .event = VPMU_EV_INSTRUCTIONS, .mode = VPMU_MODE_SC, .count = 11 };
	struct vpmu_count ca, cb;
	struct vpmu_model m;
	uint8_t *blob;
	size_t len;

	(void)state;
	assert_int_equal(vpmu_vm_get_model(a, &m), 0);
	assert_int_equal(m.vendor, VPMU_VENDOR_NONE);
	assert_int_equal(vpmu_pmc_allocate(a, &ROOT, &al), 0);
	assert_int_equal(vpmu_pmc_start(a, &ROOT, al.pmcid), 0);
	assert_int_equal(vpmu_synthetic_advance(a, 0, 3 * MS), 0);
	blob = save(a, &len);
	assert_int_equal(vpmu_vm_restore(b, blob, len), 0);
	assert_int_equal(vpmu_pmc_get_count(b, ROOT.pid, al.pmcid, &cb), 0);
	assert_int_equal(cb.value, 11 + 3000);
	assert_int_equal(vpmu_synthetic_advance(b, 0, 1 * MS), 0);
	assert_int_equal(vpmu_synthetic_advance(a, 0, 1 * MS), 0);
	assert_int_equal(vpmu_pmc_get_count(a, ROOT.pid, al.pmcid, &ca), 0);
	assert_int_equal(vpmu_pmc_get_count(b, ROOT.pid, al.pmcid, &cb), 0);
	assert_int_equal(cb.value, 11 + 4000);
	assert_int_equal(ca.value, cb.value);
	free(blob);
	vpmu_vm_destroy(a);
	vpmu_vm_destroy(b);
}


/*
 * The exact source's last retirement point travels with the blob: the
 * first exit after a resume counts from it (vpmu-run's end-to-end test
 * checks the counts; here, the point itself).
 */
static void
exact_point_travels(void **state)
{
	struct vpmu_exact_params xp = { .vendor = VPMU_VENDOR_INTEL, .mode = VPMU_EXACT_STEP };
	struct vpmu_regs r, got;
	struct vpmu_model m;
	vpmu_config *cfg;
	vpmu_vm *a, *b, *syn;
	uint8_t *blob;
	size_t len;
	unsigned i;
	uint32_t crc;

	(void)state;
	vpmu_model_default(&m);
	assert_int_equal(vpmu_config_create(&cfg), 0);
	assert_int_equal(vpmu_config_set_vcpus(cfg, 2), 0);
	assert_int_equal(vpmu_config_set_model(cfg, &m), 0);
	assert_int_equal(vpmu_config_set_source(cfg, &vpmu_source_exact, &xp), 0);
	assert_int_equal(vpmu_vm_create(cfg, &a), 0);
	assert_int_equal(vpmu_vm_create(cfg, &b), 0);
	vpmu_config_destroy(cfg);
	memset(&r, 0, sizeof(r));
	r.rip = 0x100123;
	r.rsp = 0x3fff000;
	r.rbp = 0x3fff100;
	r.rcx = 7;
	r.rflags = 0x202;
	r.cr0 = 0x80050033;
	r.cr3 = 0x1000;
	r.cr4 = 0x620;
	r.efer = 0x500;
	r.cpl = 3;
	r.long_mode = true;
	r.idt_base = 0x9000;
	r.idt_limit = 0xfff;
	vpmu__exact_sync(a->src_state, 1, &r, VPMU_SYNC_RESYNC);	/* vCPU 0: none */
	wr(a, 1, EVTSEL(0), INSTR);
	blob = save(a, &len);
	assert_int_equal(vpmu__exact_get_point(b->src_state, 1, &got), ENOENT);
	assert_int_equal(vpmu_vm_restore(b, blob, len), 0);
	assert_int_equal(vpmu__exact_get_point(b->src_state, 0, &got), ENOENT);
	assert_int_equal(vpmu__exact_get_point(b->src_state, 1, &got), 0);
	assert_int_equal(got.rip, r.rip);
	assert_int_equal(got.rsp, r.rsp);
	assert_int_equal(got.rbp, r.rbp);
	assert_int_equal(got.rcx, r.rcx);
	assert_int_equal(got.rflags, r.rflags);
	assert_int_equal(got.cr0, r.cr0);
	assert_int_equal(got.cr3, r.cr3);
	assert_int_equal(got.cr4, r.cr4);
	assert_int_equal(got.efer, r.efer);
	assert_int_equal(got.cpl, 3);
	assert_true(got.long_mode);
	assert_int_equal(got.idt_base, r.idt_base);
	assert_int_equal(got.idt_limit, r.idt_limit);
	/* Single-stepping resumes with the counter. */
	assert_true(vpmu__exact_wants_step(b->src_state, 1));
	assert_false(vpmu__exact_wants_step(b->src_state, 0));
	/* A VM on another source refuses the blob: EINVAL. */
	syn = mkvm("intel-v2", 2);
	assert_int_equal(vpmu_vm_restore(syn, blob, len), EINVAL);
	/* A cpl above 3 in the blob is corrupt, whatever its CRC. */
	for (i = 0; i + 4 <= len; i++)
		if (memcmp(blob + i, "XACT", 4) == 0)
			break;
	assert_true(i + 4 <= len);
	/* tag, has_points, vCPU 0 (85 bytes), vCPU 1's known and 9 registers */
	blob[i + 4 + 1 + 85 + 1 + 72] = 4;
	crc = vpmu__crc32(blob + 32, len - 32);
	memcpy(blob + 24, &crc, 4);
	vpmu_vm_destroy(b);
	assert_int_equal(vpmu_config_create(&cfg), 0);
	assert_int_equal(vpmu_config_set_vcpus(cfg, 2), 0);
	assert_int_equal(vpmu_config_set_model(cfg, &m), 0);
	assert_int_equal(vpmu_config_set_source(cfg, &vpmu_source_exact, &xp), 0);
	assert_int_equal(vpmu_vm_create(cfg, &b), 0);
	vpmu_config_destroy(cfg);
	assert_int_equal(vpmu_vm_restore(b, blob, len), EBADMSG);
	blob[i + 4 + 1 + 85 + 1 + 72] = 3;
	crc = vpmu__crc32(blob + 32, len - 32);
	memcpy(blob + 24, &crc, 4);
	assert_int_equal(vpmu_vm_restore(b, blob, len), 0);
	vpmu_vm_destroy(syn);
	free(blob);
	vpmu_vm_destroy(a);
	vpmu_vm_destroy(b);
}

/*
 * Every model: counter 0 counts instructions from 100 (and, where the model
 * has a global control, only by it); saved after 2 ms and restored, it reads
 * 2100 in both VMs, and 3100 after 1 ms more on each.
 */
static void
models_round_trip(void **state)
{
	static const struct {
		const char *model;
		uint32_t ctl, ctr, gctl;	/* gctl 0: none */
	} t[] = {
		{ "intel-v1", 0x186, 0xC1, 0 },
		{ "intel-v3", 0x186, 0xC1, 0x38F },
		{ "intel-v5", 0x186, 0xC1, 0x38F },
		{ "amd-k7", 0xC0010000u, 0xC0010004u, 0 },
		{ "amd-core", 0xC0010200u, 0xC0010201u, 0 },
		{ "amd-v2", 0xC0010200u, 0xC0010201u, 0xC0000301u },
	};
	struct vpmu_counter_info ca[16], cb[16];
	unsigned i, k, na, nb;
	vpmu_vm *a, *b;
	uint8_t *blob;
	size_t len;

	(void)state;
	for (i = 0; i < sizeof(t) / sizeof(t[0]); i++) {
		a = mkvm(t[i].model, 1);
		b = mkvm(t[i].model, 1);
		if (t[i].gctl != 0)
			wr(a, 0, t[i].gctl, 0);
		wr(a, 0, t[i].ctr, 100);
		wr(a, 0, t[i].ctl, INSTR);
		if (t[i].gctl != 0)
			wr(a, 0, t[i].gctl, 1);
		assert_int_equal(vpmu_synthetic_advance(a, 0, 2 * MS), 0);
		blob = save(a, &len);
		assert_int_equal(vpmu_vm_restore(b, blob, len), 0);
		assert_int_equal(rd(b, 0, t[i].ctr), 2100);
		assert_int_equal(rd(b, 0, t[i].ctl), INSTR);
		if (t[i].gctl != 0)
			assert_int_equal(rd(b, 0, t[i].gctl), 1);
		advance_both(a, b, 0, 1 * MS);
		assert_int_equal(rd(a, 0, t[i].ctr), 3100);
		assert_int_equal(rd(b, 0, t[i].ctr), 3100);
		na = nb = 16;
		assert_int_equal(vpmu_vcpu_get_counters(a, 0, ca, &na), 0);
		assert_int_equal(vpmu_vcpu_get_counters(b, 0, cb, &nb), 0);
		assert_int_equal(na, nb);
		for (k = 0; k < na; k++) {
			assert_string_equal(ca[k].event, cb[k].event);
			assert_int_equal(ca[k].value, cb[k].value);
			assert_int_equal(ca[k].control, cb[k].control);
			assert_int_equal(ca[k].time_enabled, cb[k].time_enabled);
			assert_int_equal(ca[k].enabled, cb[k].enabled);
		}
		free(blob);
		vpmu_vm_destroy(a);
		vpmu_vm_destroy(b);
	}
}

/*
 * Multiplexed: two counters on one host slot, each scaled.  Right after the
 * restore both VMs read the same scaled values and times (which PMC holds
 * the slot next is the scheduler's to decide again).
 */
static void
multiplexed_reads_the_same(void **state)
{
	struct vpmu_counter_info ca[16], cb[16];
	struct vpmu_model m;
	vpmu_config *cfg;
	vpmu_vm *vm[2];
	unsigned i, k, na, nb;
	uint8_t *blob;
	size_t len;

	(void)state;
	assert_int_equal(vpmu_model_parse("intel-v2", &m, NULL, 0), 0);
	for (i = 0; i < 2; i++) {
		assert_int_equal(vpmu_config_create(&cfg), 0);
		assert_int_equal(vpmu_config_set_vcpus(cfg, 1), 0);
		assert_int_equal(vpmu_config_set_model(cfg, &m), 0);
		assert_int_equal(vpmu_config_set_capacity(cfg, 1), 0);
		assert_int_equal(vpmu_config_set_mux_interval(cfg, MS), 0);
		assert_int_equal(vpmu_vm_create(cfg, &vm[i]), 0);
		vpmu_config_destroy(cfg);
		assert_int_equal(vpmu_synthetic_set_rate(vm[i], 0, VPMU_EV_INSTRUCTIONS, 1000), 0);
		assert_int_equal(vpmu_synthetic_set_rate(vm[i], 0, VPMU_EV_BRANCHES, 100), 0);
	}
	wr(vm[0], 0, GCTRL, 0);
	wr(vm[0], 0, EVTSEL(0), INSTR);
	wr(vm[0], 0, EVTSEL(1), BRANCH);
	wr(vm[0], 0, GCTRL, 0x3);
	for (k = 0; k < 5; k++) {
		assert_int_equal(vpmu_synthetic_advance(vm[0], 0, MS), 0);
		vpmu__vcpu_prepare(vm[0], 0);
	}
	blob = save(vm[0], &len);
	assert_int_equal(vpmu_vm_restore(vm[1], blob, len), 0);
	na = nb = 16;
	assert_int_equal(vpmu_vcpu_get_counters(vm[0], 0, ca, &na), 0);
	assert_int_equal(vpmu_vcpu_get_counters(vm[1], 0, cb, &nb), 0);
	assert_true(ca[0].scaled || ca[1].scaled);
	for (k = 0; k < na; k++) {
		assert_int_equal(ca[k].value, cb[k].value);
		assert_int_equal(ca[k].raw, cb[k].raw);
		assert_int_equal(ca[k].time_enabled, cb[k].time_enabled);
		assert_int_equal(ca[k].time_running, cb[k].time_running);
		assert_int_equal(ca[k].scaled, cb[k].scaled);
	}
	/* Each still counts at its rate: a constant rate scales back exactly. */
	for (k = 0; k < 4; k++) {
		advance_both(vm[0], vm[1], 0, MS);
		vpmu__vcpu_prepare(vm[1], 0);
		vpmu__vcpu_prepare(vm[0], 0);
	}
	nb = 16;
	assert_int_equal(vpmu_vcpu_get_counters(vm[1], 0, cb, &nb), 0);
	assert_int_equal(cb[0].time_enabled, 9 * MS);
	assert_int_equal(cb[1].time_enabled, 9 * MS);
	assert_int_equal(cb[0].value, 9000);
	assert_int_equal(cb[1].value, 900);
	assert_true(cb[0].time_running < 9 * MS);	/* it was multiplexed */
	free(blob);
	vpmu_vm_destroy(vm[0]);
	vpmu_vm_destroy(vm[1]);
}

/* ---- refusals ---------------------------------------------------------------------- */

/* b is still fresh: the good blob goes in and reads as a does. */
static void
still_fresh(vpmu_vm *a, vpmu_vm *b, const struct ids *id, const uint8_t *blob, size_t len)
{
	struct view va, vb;

	assert_int_equal(vpmu_vm_restore(b, blob, len), 0);
	look(a, id, &va);
	look(b, id, &vb);
	same(&va, &vb);
}

static void
refuse_version_model_vcpus_busy_badf(void **state)
{
	vpmu_vm *a = mkvm("intel-v2", 2), *b = mkvm("intel-v2", 2);
	vpmu_vm *v3 = mkvm("intel-v3", 2), *one = mkvm("intel-v2", 1);
	vpmu_vm *nolog = mkvm("intel-v2", 2);
	struct ids id = populate(a);
	uint8_t *blob, *bad;
	size_t len;
	int fd, fd3, fd1;

	(void)state;
	blob = save(a, &len);
	bad = malloc(len);
	assert_non_null(bad);

	fd = offer_log(b, 1);
	fd3 = offer_log(v3, 1);
	fd1 = offer_log(one, 1);
	memcpy(bad, blob, len);
	bad[8] = VPMU_SNAPSHOT_VERSION + 1;
	assert_int_equal(vpmu_vm_restore(b, bad, len), EPROTONOSUPPORT);
	memcpy(bad, blob, len);
	bad[0] = 'X';
	assert_int_equal(vpmu_vm_restore(b, bad, len), EBADMSG);
	assert_int_equal(vpmu_vm_restore(v3, blob, len), EINVAL);
	assert_int_equal(vpmu_vm_restore(one, blob, len), EINVAL);
	assert_int_equal(vpmu_vm_restore(nolog, blob, len), EBADF);
	assert_int_equal(vpmu_vm_restore(a, blob, len), EBUSY);
	assert_int_equal(vpmu_vm_restore(NULL, blob, len), EINVAL);
	assert_int_equal(vpmu_vm_restore(b, NULL, len), EINVAL);
	assert_int_equal(vpmu_vm_save(NULL, NULL, &len), EINVAL);
	assert_int_equal(vpmu_vm_save(a, NULL, NULL), EINVAL);
	still_fresh(a, b, &id, blob, len);
	/* The perfmon device's owner (a pid past guest pids) holds a PMC: no save. */
	{
		const struct vpmu_cred dev = { .pid = 0x40000001, .privileged = 1 };
		struct vpmu_pmc_alloc al = { .cpu = 0, .cls = VPMU_CLASS_PV,
		    .event = VPMU_EV_CYCLES, .mode = VPMU_MODE_SC };
		size_t n = 0;

		assert_int_equal(vpmu_pmc_allocate(a, &dev, &al), 0);
		assert_int_equal(vpmu_vm_save(a, NULL, &n), EBUSY);
		assert_int_equal(n, 0);
		assert_int_equal(vpmu_pmc_release(a, &dev, al.pmcid), 0);
		assert_int_equal(vpmu_vm_save(a, NULL, &n), ENOSPC);
		assert_int_equal(n, len);
	}

	free(bad);
	free(blob);
	vpmu_vm_destroy(a);
	vpmu_vm_destroy(b);
	vpmu_vm_destroy(v3);
	vpmu_vm_destroy(one);
	vpmu_vm_destroy(nolog);
	close(fd);
	close(fd3);
	close(fd1);
	unlink(logpath[0]);
	unlink(logpath[1]);
}

static void
refuse_every_truncation(void **state)
{
	vpmu_vm *a = mkvm("intel-v2", 2), *b = mkvm("intel-v2", 2);
	struct ids id = populate(a);
	uint8_t *blob;
	size_t len, l;
	int fd;

	(void)state;
	blob = save(a, &len);
	fd = offer_log(b, 1);
	for (l = 0; l < len; l++)
		assert_int_equal(vpmu_vm_restore(b, blob, l), EBADMSG);
	still_fresh(a, b, &id, blob, len);
	free(blob);
	vpmu_vm_destroy(a);
	vpmu_vm_destroy(b);
	close(fd);
	unlink(logpath[0]);
	unlink(logpath[1]);
}

static void
refuse_byte_flips(void **state)
{
	vpmu_vm *a = mkvm("intel-v2", 2), *b = mkvm("intel-v2", 2), *t;
	struct ids id = populate(a);
	uint8_t *blob, *bad;
	size_t len, at;
	uint32_t crc;
	int fd, fdt, i, accepted = 0, refused = 0, r;

	(void)state;
	blob = save(a, &len);
	bad = malloc(len);
	assert_non_null(bad);
	fd = offer_log(b, 1);
	srand(4242);
	/* Without a matching CRC: every flip is seen. */
	for (i = 0; i < 2000; i++) {
		memcpy(bad, blob, len);
		at = (size_t)rand() % len;
		bad[at] ^= (uint8_t)(1 + rand() % 255);
		r = vpmu_vm_restore(b, bad, len);
		assert_true(r == EBADMSG || r == EPROTONOSUPPORT);
	}
	still_fresh(a, b, &id, blob, len);

	/* With the CRC fixed up: the parser's own checks, on a fresh VM each time. */
	for (i = 0; i < 300; i++) {
		memcpy(bad, blob, len);
		at = 32 + (size_t)rand() % (len - 32);
		bad[at] ^= (uint8_t)(1 + rand() % 255);
		crc = vpmu__crc32(bad + 32, len - 32);
		memcpy(bad + 24, &crc, 4);		/* the test runs little-endian */
		t = mkvm("intel-v2", 2);
		fdt = offer_log(t, 1);
		r = vpmu_vm_restore(t, bad, len);
		if (r == 0)
			accepted++;
		else {
			assert_true(r == EBADMSG || r == EINVAL || r == EBADF);
			refused++;
			/* Unchanged: the good blob still goes in. */
			assert_int_equal(vpmu_vm_restore(t, blob, len), 0);
		}
		vpmu_vm_destroy(t);
		close(fdt);
	}
	assert_int_equal(accepted + refused, 300);
	assert_true(refused > 0);
	free(bad);
	free(blob);
	vpmu_vm_destroy(a);
	vpmu_vm_destroy(b);
	close(fd);
	unlink(logpath[0]);
	unlink(logpath[1]);
}

/*
 * An owner above the guest pids (the perfmon and pctr devices' owners)
 * holding PMCs is in no blob save writes (EBUSY): restore refuses one, so
 * that a restored VM can always be saved again (the snapshot fuzzer found
 * a blob restore took and save then refused).
 */
static void
refuse_device_owner_pmcs(void **state)
{
	static const struct vpmu_cred OWNER = { .pid = 0x2345, .uid = 0, .privileged = 1 };
	vpmu_vm *a = mkvm("intel-v2", 2), *b;
	struct vpmu_pmc_alloc al;
	uint8_t *blob;
	size_t len, i, at;
	uint32_t crc, pid = 0x2345, dev = (uint32_t)VPMU_PV_PID_MAX + 1;

	(void)state;
	assert_int_equal(vpmu_proc_create(a, &OWNER, 0), 0);
	memset(&al, 0, sizeof(al));
	al.cpu = 0; al.cls = VPMU_CLASS_PV; al.event = VPMU_EV_INSTRUCTIONS;
	al.mode = VPMU_MODE_SC;
	assert_int_equal(vpmu_pmc_allocate(a, &OWNER, &al), 0);
	blob = save(a, &len);
	for (i = 0; i + 4 <= len && memcmp(blob + i, "OWNR", 4) != 0; i++)
		;
	for (at = i; at + 4 <= len && memcmp(blob + at, &pid, 4) != 0; at++)
		;
	assert_true(at + 4 <= len);
	b = mkvm("intel-v2", 2);
	assert_int_equal(vpmu_vm_restore(b, blob, len), 0);	/* as saved: taken */
	vpmu_vm_destroy(b);
	memcpy(blob + at, &dev, 4);			/* the test runs little-endian */
	crc = vpmu__crc32(blob + 32, len - 32);
	memcpy(blob + 24, &crc, 4);
	b = mkvm("intel-v2", 2);
	assert_int_equal(vpmu_vm_restore(b, blob, len), EBADMSG);
	vpmu_vm_destroy(b);
	free(blob);
	vpmu_vm_destroy(a);
}

/*
 * Processes whose pids share a hash chain (4, 20 and 100 with the default
 * hashsize of 16) come back in their saved order: saving the restored VM
 * gives the same bytes (the snapshot fuzzer found the chains reversed).
 */
static void
process_order_round_trips(void **state)
{
	static const pid_t pids[] = { 4, 20, 100 };
	vpmu_vm *a, *b;
	uint8_t *s1, *s2;
	size_t n1 = 0, n2 = 0, i;

	(void)state;
	a = mkvm("intel-v2", 2);
	assert_int_equal(vpmu_proc_create(a, &ROOT, 0), 0);
	for (i = 0; i < sizeof(pids) / sizeof(pids[0]); i++)
		assert_int_equal(vpmu_proc_create(a, &(struct vpmu_cred){ .pid = pids[i],
		    .uid = 1000 }, 1), 0);
	assert_int_equal(vpmu_vm_save(a, NULL, &n1), ENOSPC);
	assert_non_null(s1 = malloc(n1));
	assert_int_equal(vpmu_vm_save(a, s1, &n1), 0);
	b = mkvm("intel-v2", 2);
	assert_int_equal(vpmu_vm_restore(b, s1, n1), 0);
	assert_int_equal(vpmu_vm_save(b, NULL, &n2), ENOSPC);
	assert_non_null(s2 = malloc(n2));
	assert_int_equal(vpmu_vm_save(b, s2, &n2), 0);
	assert_int_equal(n1, n2);
	/* the header's time stamp aside */
	assert_memory_equal(s1 + 32, s2 + 32, n1 - 32);
	free(s1);
	free(s2);
	vpmu_vm_destroy(a);
	vpmu_vm_destroy(b);
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(round_trip_exact_values),
		cmocka_unit_test(process_order_round_trips),
		cmocka_unit_test(save_without_model),
		cmocka_unit_test(exact_point_travels),
		cmocka_unit_test(models_round_trip),
		cmocka_unit_test(multiplexed_reads_the_same),
		cmocka_unit_test(refuse_version_model_vcpus_busy_badf),
		cmocka_unit_test(refuse_every_truncation),
		cmocka_unit_test(refuse_byte_flips),
		cmocka_unit_test(refuse_device_owner_pmcs),
	};

	return (cmocka_run_group_tests(tests, NULL, NULL));
}
