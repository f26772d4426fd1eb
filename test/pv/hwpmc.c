/*
 * hwpmc.c -- every hwpmc(4) operation and hook through the paravirtual
 * channel, with the exact errno hwpmc(4)'s ERRORS section gives, and every
 * malformed request the doorbell must refuse.  One case per line of the
 * table below; each failing case prints "FAIL <case>: got E want E", and
 * the last line is "hwpmc pv: N of M ok".
 *
 * Run by vpmu-run (test/pv/hwpmc.cmake) with --source synthetic, the
 * default intel-v2 model (IAP 0-3, IAF 4-6, PV 7-22), 1 vCPU, 64 MiB of
 * RAM, and --guest-log 3=FILE.  The synthetic source counts nothing unless
 * told to, so every value read back is exactly what was written.
 *
 * Identities: the runtime's caller is pid 1, root; the table switches it
 * with as() for the unprivileged (100, 101: uid 1000; 200: uid 2000) and
 * jailed (400) cases.  Policy is the defaults: unprivileged_syspmcs 0,
 * unprivileged_proc_debug 1.
 */
#include <vpmu-guest/runtime.h>
#include <vpmu-guest/pv.h>
#include <vpmu-guest/pmc.h>

#define PRIV		VPMU_PV_CRED_PRIVILEGED
#define JAIL		VPMU_PV_CRED_JAILED
#define RAM_END		(64u << 20)

/* The intel-v2 model's rows (checked by the "cpuinfo" case). */
#define NPMC		23
#define ROW_IAF0	4
#define ROW_PV0		7

static unsigned ok, n;
static uint8_t fpage[4096] __attribute__((aligned(4096)));

static void
check(const char *name, int got, int want)
{
	n++;
	if (got == want) {
		ok++;
		return;
	}
	vg_printf("FAIL %s: got %s (%d) want %s (%d)\n", name, pmc_errname(got), got,
	    pmc_errname(want), want);
}

/* The caller's identity for the next requests. */
static void
as(int32_t pid, uint32_t uid, uint32_t cflags)
{
	vpmu_pv_set_self(pid, 1, uid, cflags);
}

static void
as_root(void)
{
	as(1, 0, PRIV);
}

/* ---- requests by hand ---------------------------------------------------------- */

static int
alloc(uint32_t mode, uint32_t cpu, uint32_t cls, uint32_t ev, uint32_t flags,
    uint32_t caps, uint32_t *id)
{
	struct vpmu_pv_pmcallocate a;
	int e;

	memset(&a, 0, sizeof(a));
	a.mode = mode;
	a.cpu = cpu;
	a.cls = cls;
	a.ev = ev;
	a.flags = flags;
	a.caps = caps;
	e = vpmu_pv_call(VPMU_PV_OP_PMCALLOCATE, &a, sizeof(a), NULL);
	if (id != NULL)
		*id = e == 0 ? a.pmcid : 0xFFFFFFFFu;
	return (e);
}

#define TC_PV(id)	alloc(PMC_MODE_TC, ~0u, PMC_CLASS_VPMU_PV, VPMU_PV_EV_INSTRUCTIONS, 0, 0, id)

static int
attach_op(uint32_t op, uint32_t id, int32_t pid)
{
	struct vpmu_pv_pmcattach a = { id, pid };

	return (vpmu_pv_call(op, &a, sizeof(a), NULL));
}

static int
simple(uint32_t op, uint32_t id)
{
	struct vpmu_pv_simple s = { id };

	return (vpmu_pv_call(op, &s, sizeof(s), NULL));
}

static int
rw(uint32_t flags, uint32_t id, uint64_t *v)
{
	struct vpmu_pv_pmcrw r = { flags, id, *v };
	int e;

	if ((e = vpmu_pv_call(VPMU_PV_OP_PMCRW, &r, sizeof(r), NULL)) == 0)
		*v = r.value;
	return (e);
}

static int
setcount(uint32_t id, uint64_t count)
{
	struct vpmu_pv_pmcsetcount sc = { count, id, 0 };

	return (vpmu_pv_call(VPMU_PV_OP_PMCSETCOUNT, &sc, sizeof(sc), NULL));
}

static int
admin(int32_t cpu, int32_t row, uint32_t state)
{
	struct vpmu_pv_pmcadmin pa = { cpu, 0, row, state };

	return (vpmu_pv_call(VPMU_PV_OP_PMCADMIN, &pa, sizeof(pa), NULL));
}

static int
conflog(int32_t flags, int32_t fd)
{
	struct vpmu_pv_configurelog cl = { flags, fd };

	return (vpmu_pv_call(VPMU_PV_OP_CONFIGURELOG, &cl, sizeof(cl), NULL));
}

static int
getmsr(uint32_t id, uint32_t *msr)
{
	struct vpmu_pv_getmsr gm = { 0, id };
	int e;

	e = vpmu_pv_call(VPMU_PV_OP_PMCGETMSR, &gm, sizeof(gm), NULL);
	*msr = gm.msr;
	return (e);
}

/* 0 if the call succeeded and cond holds, the call's errno, or 999 (wrong value). */
static int
value(int e, int cond)
{
	return (e != 0 ? e : cond ? 0 : 999);
}

/* A block of our own, for the malformed requests. */
static uint64_t blk[8 + 8192 / 8];

static struct vpmu_pv_req *
req(uint32_t op, uint32_t arglen)
{
	struct vpmu_pv_req *r = (struct vpmu_pv_req *)blk;

	vpmu_pv_req_init(r, op, arglen);
	memset(r + 1, 0, 64);
	return (r);
}

/* Doorbell at an address the block is not at: the errno comes from IN32. */
static int
ring_at(uint64_t gpa)
{
	if ((gpa >> 32) != 0)
		vg_outl(VPMU_PV_PORT_HI, (uint32_t)(gpa >> 32));
	vg_outl(VPMU_PV_PORT, (uint32_t)gpa);
	return ((int)vg_inl(VPMU_PV_PORT));
}

/*
 * A block whose header is the last 64 bytes of RAM and whose argument
 * would lie past the end: EFAULT, written into the header.  Those bytes are
 * the top of vCPU 0's stack (main's return address among them): saved and
 * put back around the request.
 */
static int
straddle_end(void)
{
	volatile uint8_t *top = (volatile uint8_t *)(uintptr_t)(RAM_END - 64);
	uint8_t save[64];
	struct vpmu_pv_req r;
	int e, i;

	for (i = 0; i < 64; i++)
		save[i] = top[i];
	vpmu_pv_req_init(&r, VPMU_PV_OP_PMCSTART, 4);
	for (i = 0; i < 64; i++)
		top[i] = ((uint8_t *)&r)[i];
	vg_outl(VPMU_PV_PORT, RAM_END - 64);
	e = ((volatile struct vpmu_pv_req *)top)->done == VPMU_PV_DONE ?
	    ((volatile struct vpmu_pv_req *)top)->error : 1000;
	for (i = 0; i < 64; i++)
		top[i] = save[i];
	return (e);
}

static void
hooks(void)
{
	struct vpmu_pv_req *r;
	struct vpmu_pv_exec *x;

	check("create 1", vpmu_pv_call(VPMU_PV_OP_PROC_CREATE,
	    &(struct vpmu_pv_proc){ 1, 0, 0, PRIV }, 16, NULL), 0);
	check("create 100", vpmu_hook_proc_create(100, 0, 1000, 0), 0);
	check("fork 100 101", vpmu_hook_proc_fork(100, 101), 0);
	check("create 200", vpmu_hook_proc_create(200, 0, 2000, 0), 0);
	check("create 400 jailed", vpmu_hook_proc_create(400, 0, 0, PRIV | JAIL), 0);
	check("create 1 again EEXIST", vpmu_hook_proc_create(1, 0, 0, PRIV) ? pmc_errno() : 0,
	    VPMU_PV_EEXIST);
	check("create pid 0 EINVAL", vpmu_hook_proc_create(0, 0, 0, 0) ? pmc_errno() : 0,
	    VPMU_PV_EINVAL);
	check("create pid > PID_MAX EINVAL", vpmu_hook_proc_create(VPMU_PV_PID_MAX + 1, 0, 0, 0) ?
	    pmc_errno() : 0, VPMU_PV_EINVAL);
	check("create cflags 4 EINVAL", vpmu_hook_proc_create(600, 0, 0, 4) ? pmc_errno() : 0,
	    VPMU_PV_EINVAL);
	check("create unknown parent ESRCH", vpmu_hook_proc_create(500, 4242, 0, 0) ?
	    pmc_errno() : 0, VPMU_PV_ESRCH);
	check("fork unknown parent ESRCH", vpmu_hook_proc_fork(4242, 501) ? pmc_errno() : 0,
	    VPMU_PV_ESRCH);
	check("fork existing child EEXIST", vpmu_hook_proc_fork(100, 200) ? pmc_errno() : 0,
	    VPMU_PV_EEXIST);
	check("exec", vpmu_hook_proc_exec(100, "/usr/bin/work", 0, 0, 0), 0);
	check("exec setcred", vpmu_hook_proc_exec(200, "/bin/x", 1, 2000, 0), 0);
	check("exec unknown pid ESRCH", vpmu_hook_proc_exec(4242, "/bin/x", 0, 0, 0) ?
	    pmc_errno() : 0, VPMU_PV_ESRCH);
	r = req(VPMU_PV_OP_PROC_EXEC, 20);	/* path "abcd" without its NUL */
	x = (struct vpmu_pv_exec *)(r + 1);
	x->pid = 100;
	memcpy(x + 1, "abcd", 4);
	check("exec unterminated path EINVAL", vpmu_pv_ring(r), VPMU_PV_EINVAL);
	r = req(VPMU_PV_OP_PROC_EXEC, 16);	/* no path at all */
	((struct vpmu_pv_exec *)(r + 1))->pid = 100;
	check("exec no path EINVAL", vpmu_pv_ring(r), VPMU_PV_EINVAL);
	r = req(VPMU_PV_OP_PROC_EXEC, 16 + VPMU_PV_PATH_MAX + 1);
	((struct vpmu_pv_exec *)(r + 1))->pid = 100;
	check("exec path of 1024 EINVAL", vpmu_pv_ring(r), VPMU_PV_EINVAL);
	r = req(VPMU_PV_OP_PROC_EXEC, 17);
	((struct vpmu_pv_exec *)(r + 1))->pid = 100;
	((struct vpmu_pv_exec *)(r + 1))->setcred = 2;
	check("exec setcred 2 EINVAL", vpmu_pv_ring(r), VPMU_PV_EINVAL);
	check("exit unknown ESRCH", vpmu_hook_proc_exit(4242) ? pmc_errno() : 0, VPMU_PV_ESRCH);
	check("csw_in unknown ESRCH", vpmu_hook_csw_in(4242, 1) ? pmc_errno() : 0,
	    VPMU_PV_ESRCH);
	check("csw_in 1", vpmu_hook_csw_in(1, 1), 0);
	check("csw_out", vpmu_hook_csw_out(), 0);

	/* Only the guest kernel (a privileged caller) reports processes. */
	as(100, 1000, 0);
	check("create unprivileged EPERM", vpmu_hook_proc_create(700, 0, 0, 0) ? pmc_errno() : 0,
	    VPMU_PV_EPERM);
	check("fork unprivileged EPERM", vpmu_hook_proc_fork(100, 701) ? pmc_errno() : 0,
	    VPMU_PV_EPERM);
	check("exec unprivileged EPERM", vpmu_hook_proc_exec(100, "/x", 0, 0, 0) ? pmc_errno() : 0,
	    VPMU_PV_EPERM);
	check("exit unprivileged EPERM", vpmu_hook_proc_exit(101) ? pmc_errno() : 0,
	    VPMU_PV_EPERM);
	check("csw_in unprivileged EPERM", vpmu_hook_csw_in(100, 1) ? pmc_errno() : 0,
	    VPMU_PV_EPERM);
	check("csw_out unprivileged EPERM", vpmu_hook_csw_out() ? pmc_errno() : 0,
	    VPMU_PV_EPERM);
	as_root();
}

static void
info(void)
{
	struct vpmu_pv_getcpuinfo ci;
	struct vpmu_pv_getdriverstats s1, s2;
	struct pmc_pmcinfo *pi;
	struct vpmu_pv_req *r;
	uint32_t v;
	int e;

	v = 0x0A000000u;
	e = vpmu_pv_call(VPMU_PV_OP_GETMODULEVERSION, &v, 4, NULL);
	check("moduleversion", value(e, v == 0x0A000000u), 0);
	v = 0x0B000000u;
	check("moduleversion newer EPROGMISMATCH",
	    vpmu_pv_call(VPMU_PV_OP_GETMODULEVERSION, &v, 4, NULL), VPMU_PV_EPROGMISMATCH);
	v = 0x0A010000u;
	check("moduleversion newer minor EPROGMISMATCH",
	    vpmu_pv_call(VPMU_PV_OP_GETMODULEVERSION, &v, 4, NULL), VPMU_PV_EPROGMISMATCH);
	e = vpmu_pv_call(VPMU_PV_OP_GETCPUINFO, &ci, sizeof(ci), NULL);
	check("cpuinfo", value(e, ci.cputype == 0x87 && ci.ncpu == 1 && ci.npmc == NPMC &&
	    ci.nclass == 3 && ci.classes[0].cls == PMC_CLASS_IAP && ci.classes[0].num == 4 &&
	    ci.classes[1].cls == PMC_CLASS_IAF && ci.classes[1].num == 3 &&
	    ci.classes[2].cls == PMC_CLASS_VPMU_PV && ci.classes[2].num == 16 &&
	    ci.classes[2].width == 64), 0);
	check("pmc_init", pmc_init(), 0);
	check("pmc_ncpu", pmc_ncpu(), 1);
	check("pmc_npmc", pmc_npmc(0), NPMC);
	check("pmc_npmc cpu 1 EINVAL", pmc_npmc(1) < 0 ? pmc_errno() : 0, VPMU_PV_EINVAL);
	/* Every call counts once in the driver statistics, this one too. */
	e = vpmu_pv_call(VPMU_PV_OP_GETDRIVERSTATS, &s1, sizeof(s1), NULL);
	(void)vpmu_pv_call(VPMU_PV_OP_GETCPUINFO, &ci, 4, NULL);	/* refused by the channel */
	(void)admin(5, 0, 0);						/* EINVAL from the core */
	e = e ? e : vpmu_pv_call(VPMU_PV_OP_GETDRIVERSTATS, &s2, sizeof(s2), NULL);
	check("driverstats counts", value(e, s2.syscalls == s1.syscalls + 2 &&
	    s2.syscall_errors == s1.syscall_errors + 1), 0);

	e = pmc_pmcinfo(0, &pi) ? pmc_errno() : 0;
	check("pmcinfo", value(e, memcmp(pi->pm_pmcs[0].pm_name, "IAP-0", 6) == 0 &&
	    memcmp(pi->pm_pmcs[ROW_IAF0].pm_name, "IAF-0", 6) == 0 &&
	    memcmp(pi->pm_pmcs[NPMC - 1].pm_name, "PV-15", 6) == 0 &&
	    pi->pm_pmcs[ROW_PV0].pm_class == PMC_CLASS_VPMU_PV &&
	    pi->pm_pmcs[ROW_PV0].pm_ownerpid == -1 &&
	    pi->pm_pmcs[ROW_PV0].pm_rowdisp == PMC_DISP_FREE &&
	    pi->pm_pmcs[ROW_PV0].pm_enabled == 1), 0);
	check("pmcinfo cpu 1 EINVAL", pmc_pmcinfo(1, &pi) ? pmc_errno() : 0, VPMU_PV_EINVAL);
	check("pmcinfo cpu -1 EINVAL", pmc_pmcinfo(-1, &pi) ? pmc_errno() : 0, VPMU_PV_EINVAL);
	r = req(VPMU_PV_OP_GETPMCINFO, 8 + (NPMC - 1) * 104);
	check("pmcinfo one row short EFAULT", vpmu_pv_ring(r), VPMU_PV_EFAULT);
	r = req(VPMU_PV_OP_GETPMCINFO, 8);
	check("pmcinfo no rows EFAULT", vpmu_pv_ring(r), VPMU_PV_EFAULT);
	r = req(VPMU_PV_OP_GETPMCINFO, 4);
	check("pmcinfo arglen 4 EINVAL", vpmu_pv_ring(r), VPMU_PV_EINVAL);
	r = req(VPMU_PV_OP_GETDYNEVENTINFO, 8);
	((struct vpmu_pv_getdyneventinfo *)(r + 1))->cls = PMC_CLASS_SOFT;
	check("dyneventinfo SOFT EINVAL", vpmu_pv_ring(r), VPMU_PV_EINVAL);
	r = req(VPMU_PV_OP_GETDYNEVENTINFO, 8 + 68 * 4);
	((struct vpmu_pv_getdyneventinfo *)(r + 1))->cls = PMC_CLASS_IAP;
	check("dyneventinfo IAP EINVAL", vpmu_pv_ring(r), VPMU_PV_EINVAL);
	r = req(VPMU_PV_OP_GETDYNEVENTINFO, 4);
	check("dyneventinfo arglen 4 EINVAL", vpmu_pv_ring(r), VPMU_PV_EINVAL);
}

static void
administration(void)
{
	as(100, 1000, 0);
	check("admin unprivileged EPERM", admin(0, NPMC - 1, PMC_STATE_DISABLED), VPMU_PV_EPERM);
	as(400, 0, PRIV | JAIL);
	check("admin jailed EPERM", admin(0, NPMC - 1, PMC_STATE_DISABLED), VPMU_PV_EPERM);
	as_root();
	check("admin cpu 1 EINVAL", admin(1, NPMC - 1, PMC_STATE_DISABLED), VPMU_PV_EINVAL);
	check("admin row npmc EINVAL", admin(0, NPMC, PMC_STATE_DISABLED), VPMU_PV_EINVAL);
	check("admin state 3 EINVAL", admin(0, NPMC - 1, 3), VPMU_PV_EINVAL);
	check("admin disable", admin(0, NPMC - 1, PMC_STATE_DISABLED), 0);
	check("admin enable", admin(0, NPMC - 1, PMC_STATE_FREE), 0);
}

static void
operations(void)
{
	struct vpmu_pv_pmcallocate a;
	uint32_t A, S, U, B, D, E, T, L, F, msr, id;
	uint64_t v;
	int e;

	/* ---- PMCALLOCATE ---- */
	check("alloc mode 4 EINVAL", alloc(4, ~0u, PMC_CLASS_VPMU_PV, 1, 0, 0, NULL),
	    VPMU_PV_EINVAL);
	check("alloc cpu 1 EINVAL", alloc(PMC_MODE_SC, 1, PMC_CLASS_VPMU_PV, 1, 0, 0, NULL),
	    VPMU_PV_EINVAL);
	check("alloc TC on cpu 0 EINVAL", alloc(PMC_MODE_TC, 0, PMC_CLASS_VPMU_PV, 1, 0, 0, NULL),
	    VPMU_PV_EINVAL);
	check("alloc SC on any cpu EINVAL", alloc(PMC_MODE_SC, ~0u, PMC_CLASS_VPMU_PV, 1, 0, 0,
	    NULL), VPMU_PV_EINVAL);
	check("alloc flags 0x40 EINVAL", alloc(PMC_MODE_TC, ~0u, PMC_CLASS_VPMU_PV, 1, 0x40, 0,
	    NULL), VPMU_PV_EINVAL);
	check("alloc EV_PMU EINVAL", alloc(PMC_MODE_TC, ~0u, PMC_CLASS_VPMU_PV, 1, PMC_F_EV_PMU,
	    0, NULL), VPMU_PV_EINVAL);
	check("alloc USERCALLCHAIN alone EINVAL", alloc(PMC_MODE_TS, ~0u, PMC_CLASS_VPMU_PV, 1,
	    PMC_F_USERCALLCHAIN, 0, NULL), VPMU_PV_EINVAL);
	check("alloc SC LOG_PROCEXIT EINVAL", alloc(PMC_MODE_SC, 0, PMC_CLASS_VPMU_PV, 1,
	    PMC_F_LOG_PROCEXIT, 0, NULL), VPMU_PV_EINVAL);
	check("alloc caps PRECISE EOPNOTSUPP", alloc(PMC_MODE_TC, ~0u, PMC_CLASS_VPMU_PV, 1, 0,
	    PMC_CAP_PRECISE, NULL), VPMU_PV_EOPNOTSUPP);
	check("alloc class 0x33 EINVAL", alloc(PMC_MODE_TC, ~0u, 0x33, 1, 0, 0, NULL),
	    VPMU_PV_EINVAL);
	check("alloc event 0x77 EINVAL", alloc(PMC_MODE_TC, ~0u, PMC_CLASS_VPMU_PV, 0x77, 0, 0,
	    NULL), VPMU_PV_EINVAL);
	check("alloc IAF branches EINVAL", alloc(PMC_MODE_TC, ~0u, PMC_CLASS_IAF,
	    VPMU_PV_EV_BRANCHES, 0, 0, NULL), VPMU_PV_EINVAL);
	memset(&a, 0, sizeof(a));
	a.mode = PMC_MODE_TC;
	a.cpu = ~0u;
	a.cls = PMC_CLASS_VPMU_PV;
	a.ev = 1;
	a.md_pad[4] = 1;
	check("alloc md_pad EINVAL", vpmu_pv_call(VPMU_PV_OP_PMCALLOCATE, &a, sizeof(a), NULL),
	    VPMU_PV_EINVAL);
	as(100, 1000, 0);	/* unprivileged_syspmcs is 0 */
	check("alloc SC unprivileged EPERM", alloc(PMC_MODE_SC, 0, PMC_CLASS_VPMU_PV, 1, 0, 0,
	    NULL), VPMU_PV_EPERM);
	as(400, 0, PRIV | JAIL);
	check("alloc SC jailed EPERM", alloc(PMC_MODE_SC, 0, PMC_CLASS_VPMU_PV, 1, 0, 0, NULL),
	    VPMU_PV_EPERM);
	as_root();
	e = TC_PV(&A);
	check("alloc TC PV", value(e, A == (0xFFFu << 20 | 3u << 16 | 0x40u << 8 | ROW_PV0)), 0);
	/*
	 * The model's rows are the guest kernel's own MSR counters (owner 0,
	 * STANDALONE): no process PMC fits there.
	 */
	check("alloc IAF on the kernel's rows EINVAL", alloc(PMC_MODE_TC, ~0u, PMC_CLASS_IAF,
	    VPMU_PV_EV_FBSD_IAF_INSTR, 0, 0, NULL), VPMU_PV_EINVAL);
	/* ... so pmc_allocate() puts FreeBSD names and raw selects on the PV class. */
	e = pmc_allocate("CPU_CLK_UNHALTED.CORE", PMC_MODE_TC, 0, PMC_CPU_ANY, &id, 0) ?
	    pmc_errno() : 0;
	check("pmc_allocate CPU_CLK_UNHALTED.CORE", value(e, PMC_ID_TO_CLASS(id) ==
	    PMC_CLASS_VPMU_PV && PMC_ID_TO_ROWINDEX(id) == ROW_PV0 + 1), 0);
	check("pmc_release", pmc_release(id), 0);
	e = pmc_allocate("0x00c0,usr", PMC_MODE_TC, 0, PMC_CPU_ANY, &id, 0) ? pmc_errno() : 0;
	check("pmc_allocate raw 0x00c0", value(e, PMC_ID_TO_CLASS(id) == PMC_CLASS_VPMU_PV &&
	    PMC_ID_TO_ROWINDEX(id) == ROW_PV0 + 1), 0);
	check("pmc_release raw", pmc_release(id), 0);
	check("alloc F", alloc(PMC_MODE_TC, ~0u, PMC_CLASS_VPMU_PV, 3, 0, 0, &F), 0);
	check("pmc_allocate unknown name EINVAL", pmc_allocate("no-such-event", PMC_MODE_TC, 0,
	    PMC_CPU_ANY, &id, 0) ? pmc_errno() : 0, VPMU_PV_EINVAL);
	check("alloc SC PV", alloc(PMC_MODE_SC, 0, PMC_CLASS_VPMU_PV, 1, 0, 0, &S), 0);

	/* ---- PMCADMIN on rows in use ---- */
	check("admin disable THREAD row EBUSY", admin(0, ROW_PV0, PMC_STATE_DISABLED),
	    VPMU_PV_EBUSY);
	check("admin on system PMC EBUSY", admin(0, PMC_ID_TO_ROWINDEX(S), PMC_STATE_DISABLED),
	    VPMU_PV_EBUSY);

	/* ---- PMCATTACH ---- */
	check("attach pid -1 EINVAL", attach_op(VPMU_PV_OP_PMCATTACH, A, -1), VPMU_PV_EINVAL);
	check("attach pid never created ESRCH", attach_op(VPMU_PV_OP_PMCATTACH, A, 4242),
	    VPMU_PV_ESRCH);
	check("attach row 0xFE EINVAL", attach_op(VPMU_PV_OP_PMCATTACH, (A & ~0xFFu) | 0xFE, 0),
	    VPMU_PV_EINVAL);
	check("attach unowned id EINVAL", attach_op(VPMU_PV_OP_PMCATTACH,
	    (A & ~0xFFu) | (NPMC - 1), 0), VPMU_PV_EINVAL);
	check("attach system PMC EINVAL", attach_op(VPMU_PV_OP_PMCATTACH, S, 0), VPMU_PV_EINVAL);
	check("attach self", attach_op(VPMU_PV_OP_PMCATTACH, A, 0), 0);
	check("attach self again EEXIST", attach_op(VPMU_PV_OP_PMCATTACH, A, 1), VPMU_PV_EEXIST);
	check("attach 100", attach_op(VPMU_PV_OP_PMCATTACH, A, 100), 0);
	as(200, 2000, 0);
	check("attach without PMCs ESRCH", attach_op(VPMU_PV_OP_PMCATTACH, A, 0), VPMU_PV_ESRCH);
	as(100, 1000, 0);
	check("alloc TC by 100", TC_PV(&U), 0);
	check("attach same uid (proc_debug 1)", attach_op(VPMU_PV_OP_PMCATTACH, U, 101), 0);
	check("attach other uid EPERM", attach_op(VPMU_PV_OP_PMCATTACH, U, 200), VPMU_PV_EPERM);
	check("attach root's EPERM", attach_op(VPMU_PV_OP_PMCATTACH, U, 1), VPMU_PV_EPERM);
	as(2, 0, PRIV);		/* another owner: its PMC takes row PV0 too */
	e = TC_PV(&B);
	check("alloc TC by 2", value(e, PMC_ID_TO_ROWINDEX(B) == ROW_PV0), 0);
	check("attach busy row EBUSY", attach_op(VPMU_PV_OP_PMCATTACH, B, 100), VPMU_PV_EBUSY);
	as_root();
	check("start", simple(VPMU_PV_OP_PMCSTART, A), 0);
	check("start running", simple(VPMU_PV_OP_PMCSTART, A), 0);
	check("attach running EBUSY", attach_op(VPMU_PV_OP_PMCATTACH, A, 200), VPMU_PV_EBUSY);

	/* ---- PMCRW / PMCSETCOUNT ---- */
	v = 5;
	check("rw flags 0 EINVAL", rw(0, A, &v), VPMU_PV_EINVAL);
	check("rw flags 1 EINVAL", rw(1, A, &v), VPMU_PV_EINVAL);
	check("rw write running EBUSY", rw(PMC_F_NEWVALUE, A, &v), VPMU_PV_EBUSY);
	check("setcount running EBUSY", setcount(A, 9), VPMU_PV_EBUSY);
	check("stop", simple(VPMU_PV_OP_PMCSTOP, A), 0);
	check("stop stopped", simple(VPMU_PV_OP_PMCSTOP, A), 0);
	check("setcount", setcount(A, 1000), 0);
	e = pmc_read(A, &v) ? pmc_errno() : 0;
	check("read after setcount", value(e, v == 1000), 0);
	check("pmc_write", pmc_write(A, 5), 0);
	e = pmc_rw(A, 7, &v) ? pmc_errno() : 0;
	check("pmc_rw old value", value(e, v == 5), 0);
	e = pmc_read(A, &v) ? pmc_errno() : 0;
	check("pmc_read new value", value(e, v == 7), 0);
	e = pmc_width(A, &msr) ? pmc_errno() : 0;
	check("pmc_width", value(e, msr == 64), 0);

	/* ---- PMCDETACH ---- */
	check("detach unmonitored ESRCH", attach_op(VPMU_PV_OP_PMCDETACH, A, 200), VPMU_PV_ESRCH);
	check("detach other PMC's target EINVAL", attach_op(VPMU_PV_OP_PMCDETACH, A, 101),
	    VPMU_PV_EINVAL);
	check("detach pid -5 EINVAL", attach_op(VPMU_PV_OP_PMCDETACH, A, -5), VPMU_PV_EINVAL);
	check("detach never created ESRCH", attach_op(VPMU_PV_OP_PMCDETACH, A, 4242),
	    VPMU_PV_ESRCH);
	check("detach system PMC EINVAL", attach_op(VPMU_PV_OP_PMCDETACH, S, 0), VPMU_PV_EINVAL);
	check("detach 100", attach_op(VPMU_PV_OP_PMCDETACH, A, 100), 0);

	/* ---- PMCGETMSR ---- */
	check("getmsr system EINVAL", getmsr(S, &msr), VPMU_PV_EINVAL);
	as(100, 1000, 0);
	check("getmsr not solely on owner EINVAL", getmsr(U, &msr), VPMU_PV_EINVAL);
	as_root();
	check("alloc DESCENDANTS", alloc(PMC_MODE_TC, ~0u, PMC_CLASS_VPMU_PV, 2, PMC_F_DESCENDANTS,
	    0, &D), 0);
	check("attach DESCENDANTS", attach_op(VPMU_PV_OP_PMCATTACH, D, 0), 0);
	check("getmsr DESCENDANTS EINVAL", getmsr(D, &msr), VPMU_PV_EINVAL);
	check("getmsr unattached EINVAL", getmsr(F, &msr), VPMU_PV_EINVAL);
	/*
	 * A is on its owner alone now.  GETMSR answers a slot of the caller's
	 * fast-read page (vpmu_pv(4)): EINVAL while the caller has none, the
	 * first hwpmc slot (4) once it has.
	 */
	check("getmsr without fast page EINVAL", getmsr(A, &msr), VPMU_PV_EINVAL);
	/* A GETMSR that failed handed nothing out: ATTACH is not refused. */
	check("attach after failed getmsr", attach_op(VPMU_PV_OP_PMCATTACH, A, 100), 0);
	check("detach after failed getmsr", attach_op(VPMU_PV_OP_PMCDETACH, A, 100), 0);
	check("fastpage set", vpmu_pv_call(VPMU_PV_OP_FASTPAGE_SET,
	    &(struct vpmu_pv_fastpage){ (uintptr_t)fpage }, 8, NULL), 0);
	e = getmsr(A, &msr);
	check("getmsr slot 4", value(e, msr == 4), 0);
	e = getmsr(A, &msr);
	check("getmsr again same slot", value(e, msr == 4), 0);
	check("attach after getmsr EPERM", attach_op(VPMU_PV_OP_PMCATTACH, A, 100),
	    VPMU_PV_EPERM);

	/* ---- PMCSTART / PMCSTOP ---- */
	check("alloc TS", alloc(PMC_MODE_TS, ~0u, PMC_CLASS_VPMU_PV, 1, 0, 0, &T), 0);
	check("start TS without log EDOOFUS", simple(VPMU_PV_OP_PMCSTART, T), VPMU_PV_EDOOFUS);
	check("rw on sampling EINVAL", rw(PMC_F_OLDVALUE, T, &v), VPMU_PV_EINVAL);
	check("alloc LOG_PROCEXIT", alloc(PMC_MODE_TC, ~0u, PMC_CLASS_VPMU_PV, 3,
	    PMC_F_LOG_PROCEXIT, 0, &L), 0);
	check("start LOG_PROCEXIT without log EDOOFUS", simple(VPMU_PV_OP_PMCSTART, L),
	    VPMU_PV_EDOOFUS);
	check("stop never started EINVAL", simple(VPMU_PV_OP_PMCSTOP, L), VPMU_PV_EINVAL);
	check("alloc E", alloc(PMC_MODE_TC, ~0u, PMC_CLASS_VPMU_PV, 4, 0, 0, &E), 0);
	check("create 210", vpmu_hook_proc_create(210, 0, 0, 0), 0);
	check("attach E 210", attach_op(VPMU_PV_OP_PMCATTACH, E, 210), 0);
	check("exit 210", vpmu_hook_proc_exit(210), 0);
	check("start after its targets are gone ESRCH", simple(VPMU_PV_OP_PMCSTART, E),
	    VPMU_PV_ESRCH);

	/* ---- PMCRELEASE ---- */
	check("release", simple(VPMU_PV_OP_PMCRELEASE, E), 0);
	check("release again EINVAL", simple(VPMU_PV_OP_PMCRELEASE, E), VPMU_PV_EINVAL);
	as(200, 2000, 0);
	check("release without PMCs ESRCH", simple(VPMU_PV_OP_PMCRELEASE, A), VPMU_PV_ESRCH);
	as_root();

	/* ---- the log ---- */
	check("writelog without log EINVAL", pmc_writelog(1) ? pmc_errno() : 0, VPMU_PV_EINVAL);
	check("flushlog without log EINVAL", pmc_flush_logfile() ? pmc_errno() : 0,
	    VPMU_PV_EINVAL);
	check("closelog without log EINVAL", pmc_close_logfile() ? pmc_errno() : 0,
	    VPMU_PV_EINVAL);
	check("configurelog -1 without log EINVAL", conflog(0, -1), VPMU_PV_EINVAL);
	check("configurelog flags EINVAL", conflog(1, 3), VPMU_PV_EINVAL);
	check("configurelog not offered EBADF", conflog(0, 7), VPMU_PV_EBADF);
	check("configurelog 16 EBADF", conflog(0, 16), VPMU_PV_EBADF);
	check("configurelog 3", conflog(0, 3), 0);
	check("configurelog again EBUSY", conflog(0, 3), VPMU_PV_EBUSY);
	check("writelog", pmc_writelog(0xC0FFEE), 0);
	check("flushlog", pmc_flush_logfile(), 0);
	check("start TS with log", simple(VPMU_PV_OP_PMCSTART, T), 0);
	check("stop TS", simple(VPMU_PV_OP_PMCSTOP, T), 0);
	check("closelog", pmc_close_logfile(), 0);
	check("flushlog after close EINVAL", pmc_flush_logfile() ? pmc_errno() : 0,
	    VPMU_PV_EINVAL);
	check("configurelog 3 again", pmc_configure_logfile(3), 0);
	check("configurelog -1", pmc_configure_logfile(-1), 0);

	/* ---- exit ---- */
	check("exit 101", vpmu_hook_proc_exit(101), 0);
	check("exit 101 again ESRCH", vpmu_hook_proc_exit(101) ? pmc_errno() : 0, VPMU_PV_ESRCH);
	as(100, 1000, 0);
	check("attach exited ESRCH", attach_op(VPMU_PV_OP_PMCATTACH, U, 101), VPMU_PV_ESRCH);
	as_root();
}

static void
malformed(void)
{
	struct vpmu_pv_req *r;

	r = req(0x99, 0);
	check("unknown op EINVAL", vpmu_pv_ring(r), VPMU_PV_EINVAL);
	r = req(VPMU_PV_OP_NULL, 0);
	r->version = 2;
	check("version 2 EINVAL", vpmu_pv_ring(r), VPMU_PV_EINVAL);
	r = req(VPMU_PV_OP_NULL, 0);
	r->magic = 0x12345678;
	check("bad magic EINVAL", vpmu_pv_ring(r), VPMU_PV_EINVAL);
	r = req(VPMU_PV_OP_NULL, 0);
	r->hdrsize = 32;
	check("hdrsize 32 EINVAL", vpmu_pv_ring(r), VPMU_PV_EINVAL);
	r = req(VPMU_PV_OP_NULL, 0);
	r->reserved[1] = 1;
	check("reserved nonzero EINVAL", vpmu_pv_ring(r), VPMU_PV_EINVAL);
	r = req(VPMU_PV_OP_NULL, 0);
	r->cflags = 4;
	check("cflags 4 EINVAL", vpmu_pv_ring(r), VPMU_PV_EINVAL);
	r = req(VPMU_PV_OP_NULL, 0);
	r->pid = 0;
	check("caller pid 0 EINVAL", vpmu_pv_ring(r), VPMU_PV_EINVAL);
	r = req(VPMU_PV_OP_NULL, 0);
	r->pid = VPMU_PV_PID_MAX + 1;
	check("caller pid above PID_MAX EINVAL", vpmu_pv_ring(r), VPMU_PV_EINVAL);
	r = req(VPMU_PV_OP_PMCSTART, 2);
	check("arglen too short EINVAL", vpmu_pv_ring(r), VPMU_PV_EINVAL);
	r = req(VPMU_PV_OP_PMCSTART, 8);
	check("arglen too long EINVAL", vpmu_pv_ring(r), VPMU_PV_EINVAL);
	r = req(VPMU_PV_OP_FLUSHLOG, 4);
	check("arglen on no-argument op EINVAL", vpmu_pv_ring(r), VPMU_PV_EINVAL);
	r = req(VPMU_PV_OP_GETPMCINFO, VPMU_PV_MAX_BLOCK);
	check("arglen past MAX_BLOCK EINVAL", vpmu_pv_ring(r), VPMU_PV_EINVAL);
	check("unaligned EINVAL", ring_at((uintptr_t)blk + 4), VPMU_PV_EINVAL);
	check("outside RAM EFAULT", ring_at(RAM_END), VPMU_PV_EFAULT);
	check("above 4 GiB EFAULT", ring_at((1ull << 32) | (uintptr_t)blk), VPMU_PV_EFAULT);
	check("high bits cleared after a doorbell", vpmu_pv_call(VPMU_PV_OP_NULL, NULL, 0, NULL), 0);
	check("argument past RAM end EFAULT", straddle_end(), VPMU_PV_EFAULT);
	check("probe", vpmu_pv_probe(), 1);
}

int
main(unsigned cpu)
{
	(void)cpu;
	hooks();
	info();
	administration();
	operations();
	malformed();
	vg_printf("hwpmc pv: %u of %u ok\n", ok, n);
	return (ok == n ? 0 : 1);
}
