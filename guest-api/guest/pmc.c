/*
 * pmc.c -- pmc(3) for guests (<vpmu-guest/pmc.h>, vpmu_guest_pmc(3)): each
 * call is one request on the paravirtual channel (vpmu_pv(4)); the errno
 * it returns goes to pmc_errno().  Freestanding: no libc.
 */
#include <stddef.h>
#include <stdint.h>

#include <vpmu-guest/pv.h>
#include <vpmu-guest/pmc.h>

/* ---- errors ------------------------------------------------------------------- */

static int pmc_lasterr;

__attribute__((weak)) int *
pmc_errno_location(void)
{
	return (&pmc_lasterr);
}

int
pmc_errno(void)
{
	return (*pmc_errno_location());
}

/* 0 for 0; else the error is kept and -1 returned (pmc(3)'s convention). */
static int
ret(int error)
{
	if (error == 0)
		return (0);
	*pmc_errno_location() = error;
	return (-1);
}

const char *
pmc_errname(int error)
{
	static const struct {
		int e;
		const char *name;
	} names[] = {
		{ 0, "0" },
		{ VPMU_PV_EPERM, "EPERM" },	{ VPMU_PV_ESRCH, "ESRCH" },
		{ VPMU_PV_EIO, "EIO" },		{ VPMU_PV_ENXIO, "ENXIO" },
		{ VPMU_PV_EBADF, "EBADF" },	{ VPMU_PV_ENOMEM, "ENOMEM" },
		{ VPMU_PV_EFAULT, "EFAULT" },	{ VPMU_PV_EBUSY, "EBUSY" },
		{ VPMU_PV_EEXIST, "EEXIST" },	{ VPMU_PV_ENODEV, "ENODEV" },
		{ VPMU_PV_EINVAL, "EINVAL" },	{ VPMU_PV_ENOTTY, "ENOTTY" },
		{ VPMU_PV_ENOSPC, "ENOSPC" },	{ VPMU_PV_EPIPE, "EPIPE" },
		{ VPMU_PV_EAGAIN, "EAGAIN" },	{ VPMU_PV_EOPNOTSUPP, "EOPNOTSUPP" },
		{ VPMU_PV_EPROGMISMATCH, "EPROGMISMATCH" },
		{ VPMU_PV_ENOSYS, "ENOSYS" },	{ VPMU_PV_EDOOFUS, "EDOOFUS" },
	};
	size_t i;

	for (i = 0; i < sizeof(names) / sizeof(names[0]); i++)
		if (names[i].e == error)
			return (names[i].name);
	return ("E?");
}

static int
call(uint32_t op, void *arg, uint32_t len)
{
	return (ret(vpmu_pv_call(op, arg, len, NULL)));
}

/* ---- the CPU information --------------------------------------------------------- */

static struct pmc_cpuinfo pmc_ci;
static int pmc_inited;

int
pmc_get_module_version(uint32_t *version)
{
	uint32_t v = PMC_VERSION;

	if (version == NULL)
		return (ret(VPMU_PV_EFAULT));
	if (call(VPMU_PV_OP_GETMODULEVERSION, &v, sizeof(v)) != 0)
		return (-1);
	*version = v;
	return (0);
}

int
pmc_init(void)
{
	struct vpmu_pv_getcpuinfo ci;
	uint32_t v;

	if (!vpmu_pv_probe())
		return (ret(VPMU_PV_ENXIO));	/* no driver, as without hwpmc.ko */
	if (pmc_get_module_version(&v) != 0)
		return (-1);
	if (call(VPMU_PV_OP_GETCPUINFO, &ci, sizeof(ci)) != 0)
		return (-1);
	_Static_assert(sizeof(ci) == sizeof(pmc_ci), "pmc_cpuinfo is the channel's layout");
	__builtin_memcpy(&pmc_ci, &ci, sizeof(ci));
	pmc_inited = 1;
	return (0);
}

static int
need_init(void)
{
	return (pmc_inited ? 0 : pmc_init());
}

int
pmc_cpuinfo(const struct pmc_cpuinfo **cpu_info)
{
	if (need_init() != 0)
		return (-1);
	*cpu_info = &pmc_ci;
	return (0);
}

int
pmc_ncpu(void)
{
	if (need_init() != 0)
		return (-1);
	return ((int)pmc_ci.pm_ncpu);
}

int
pmc_npmc(int cpu)
{
	if (need_init() != 0)
		return (-1);
	if (cpu < 0 || (uint32_t)cpu >= pmc_ci.pm_ncpu)
		return (ret(VPMU_PV_EINVAL));
	return ((int)pmc_ci.pm_npmc);
}

static const struct pmc_classinfo *
class_info(uint32_t cls)
{
	uint32_t i;

	for (i = 0; i < pmc_ci.pm_nclass && i < PMC_CLASS_MAX; i++)
		if (pmc_ci.pm_classes[i].pm_class == cls)
			return (&pmc_ci.pm_classes[i]);
	return (NULL);
}

int
pmc_width(pmc_id_t pmc, uint32_t *width)
{
	const struct pmc_classinfo *c;

	if (need_init() != 0)
		return (-1);
	if ((c = class_info(PMC_ID_TO_CLASS(pmc))) == NULL)
		return (ret(VPMU_PV_EINVAL));
	*width = c->pm_width;
	return (0);
}

int
pmc_capabilities(pmc_id_t pmc, uint32_t *caps)
{
	const struct pmc_classinfo *c;

	if (need_init() != 0)
		return (-1);
	if ((c = class_info(PMC_ID_TO_CLASS(pmc))) == NULL)
		return (ret(VPMU_PV_EINVAL));
	*caps = c->pm_caps;
	return (0);
}

/* One block for GETPMCINFO: header, cpu word, up to 255 rows (the id's row field). */
static uint64_t pmc_infoblk[(VPMU_PV_HDRSIZE + 8 + 255 * sizeof(struct pmc_info)) / 8];

int
pmc_pmcinfo(int cpu, struct pmc_pmcinfo **ppmci)
{
	struct vpmu_pv_req *req = (struct vpmu_pv_req *)pmc_infoblk;
	struct pmc_pmcinfo *pi = (struct pmc_pmcinfo *)(req + 1);
	uint32_t len;

	if (need_init() != 0)
		return (-1);
	len = (uint32_t)(8 + pmc_ci.pm_npmc * sizeof(struct pmc_info));
	if (len > sizeof(pmc_infoblk) - VPMU_PV_HDRSIZE)
		return (ret(VPMU_PV_ENOMEM));
	vpmu_pv_req_init(req, VPMU_PV_OP_GETPMCINFO, len);
	pi->pm_cpu = cpu;
	pi->pm_pad = 0;
	if (ret(vpmu_pv_ring(req)) != 0)
		return (-1);
	*ppmci = pi;
	return (0);
}

int
pmc_get_driver_stats(struct pmc_driverstats *gms)
{
	struct vpmu_pv_getdriverstats st;

	if (call(VPMU_PV_OP_GETDRIVERSTATS, &st, sizeof(st)) != 0)
		return (-1);
	gms->pm_intr_ignored = st.intr_ignored;
	gms->pm_intr_processed = st.intr_processed;
	gms->pm_intr_bufferfull = st.intr_bufferfull;
	gms->pm_syscalls = st.syscalls;
	gms->pm_syscall_errors = st.syscall_errors;
	gms->pm_buffer_requests = st.buffer_requests;
	gms->pm_buffer_requests_failed = st.buffer_requests_failed;
	gms->pm_log_sweeps = st.log_sweeps;
	return (0);
}

/* ---- allocation: the counter specification ------------------------------------------ */

static int
lower(int ch)
{
	return (ch >= 'A' && ch <= 'Z' ? ch - 'A' + 'a' : ch);
}

/* s[0 .. n) equals name, ignoring case. */
static int
word_is(const char *s, size_t n, const char *name)
{
	size_t i;

	for (i = 0; i < n; i++)
		if (name[i] == '\0' || lower(s[i]) != lower(name[i]))
			return (0);
	return (name[n] == '\0');
}

/* A whole number, decimal or 0x hexadecimal, in s[0 .. n). */
static int
number(const char *s, size_t n, uint64_t *v)
{
	unsigned base = 10, d;
	size_t i = 0;
	int ch;

	*v = 0;
	if (n > 2 && s[0] == '0' && lower(s[1]) == 'x') {
		base = 16;
		i = 2;
	}
	if (i == n || n - i > (base == 16 ? 16u : 19u))
		return (-1);
	for (; i < n; i++) {
		ch = lower(s[i]);
		if (ch >= '0' && ch <= '9')
			d = (unsigned)(ch - '0');
		else if (base == 16 && ch >= 'a' && ch <= 'f')
			d = (unsigned)(ch - 'a' + 10);
		else
			return (-1);
		*v = *v * base + d;
	}
	return (0);
}

enum { C_PV, C_FIXED, C_TSC, C_MODEL };

static const struct {
	const char *name;
	uint32_t ev;
	int where;			/* which class to prefer */
} pmc_names[] = {
	{ "instructions", VPMU_PV_EV_INSTRUCTIONS, C_PV },
	{ "branches", VPMU_PV_EV_BRANCHES, C_PV },
	{ "cycles", VPMU_PV_EV_CYCLES, C_PV },
	{ "ref-cycles", VPMU_PV_EV_REF_CYCLES, C_PV },
	{ "tsc", VPMU_PV_EV_TSC, C_PV },
	{ "inst_retired.any", VPMU_PV_EV_FBSD_IAF_INSTR, C_FIXED },
	{ "instr_retired_any", VPMU_PV_EV_FBSD_IAF_INSTR, C_FIXED },
	{ "cpu_clk_unhalted.core", VPMU_PV_EV_FBSD_IAF_CYCLES, C_FIXED },
	{ "cpu_clk_unhalted.thread", VPMU_PV_EV_FBSD_IAF_CYCLES, C_FIXED },
	{ "cpu_clk_unhalted.ref", VPMU_PV_EV_FBSD_IAF_REF, C_FIXED },
	{ "cpu_clk_unhalted.ref_tsc", VPMU_PV_EV_FBSD_IAF_REF, C_FIXED },
	{ "tsc-tsc", VPMU_PV_EV_FBSD_TSC, C_TSC },
};

/*
 * Whether class cls is in the VM and has a row a PMC could take: the
 * model's rows are usually the guest kernel's own MSR counters (owner 0,
 * STANDALONE on every vCPU), where hwpmc would find no suitable PMC.
 */
static int
class_usable(uint32_t cls)
{
	struct pmc_pmcinfo *pi;
	uint32_t i;

	if (class_info(cls) == NULL)
		return (0);
	if (pmc_pmcinfo(0, &pi) != 0)
		return (1);		/* let PMCALLOCATE say */
	for (i = 0; i < pmc_ci.pm_npmc; i++)
		if (pi->pm_pmcs[i].pm_class == cls && pi->pm_pmcs[i].pm_enabled &&
		    pi->pm_pmcs[i].pm_rowdisp != PMC_DISP_STANDALONE)
			return (1);
	return (0);
}

/*
 * The class a spec goes to.  Generic names go to the paravirtual class,
 * whose rows the guest's own MSR programming never uses.  FreeBSD's
 * fixed-counter and TSC names, and raw selects, go to their FreeBSD class
 * (IAF, TSC; IAP or K8 for a raw select) when the VM has one with a row
 * to spare, else to the paravirtual class, which counts every event
 * (a raw select is read as the guest-visible model's).  0xFFFFFFFF: none.
 */
static uint32_t
pick_class(int where)
{
	if (where == C_FIXED && class_usable(PMC_CLASS_IAF))
		return (PMC_CLASS_IAF);
	if (where == C_TSC && class_usable(PMC_CLASS_TSC))
		return (PMC_CLASS_TSC);
	if (where == C_MODEL && class_usable(PMC_CLASS_IAP))
		return (PMC_CLASS_IAP);
	if (where == C_MODEL && class_usable(PMC_CLASS_K8))
		return (PMC_CLASS_K8);
	if (class_info(PMC_CLASS_VPMU_PV) != NULL)
		return (PMC_CLASS_VPMU_PV);
	return (0xFFFFFFFFu);
}

static int
parse_spec(const char *spec, struct vpmu_pv_pmcallocate *a)
{
	const char *s = spec, *e;
	uint64_t v;
	size_t n, i;
	int where = -1;

	for (e = s; *e != '\0' && *e != ','; e++)
		;
	n = (size_t)(e - s);
	if (n > 2 && s[0] == '0' && lower(s[1]) == 'x') {
		if (number(s, n, &v) != 0)
			return (-1);
		a->ev = VPMU_PV_EV_RAW;
		a->md_config = v;
		where = C_MODEL;
	} else if (word_is(s, n, "tsc") && s[0] == 'T') {
		a->ev = VPMU_PV_EV_FBSD_TSC;	/* FreeBSD's "TSC" */
		where = C_TSC;
	} else
		for (i = 0; i < sizeof(pmc_names) / sizeof(pmc_names[0]); i++)
			if (word_is(s, n, pmc_names[i].name)) {
				a->ev = pmc_names[i].ev;
				where = pmc_names[i].where;
				break;
			}
	if (where < 0 || (a->cls = pick_class(where)) == 0xFFFFFFFFu)
		return (-1);
	/* Qualifiers. */
	while (*e == ',') {
		s = e + 1;
		for (e = s; *e != '\0' && *e != ','; e++)
			;
		n = (size_t)(e - s);
		if (word_is(s, n, "usr"))
			a->caps |= PMC_CAP_USER;
		else if (word_is(s, n, "os") || word_is(s, n, "sys"))
			a->caps |= PMC_CAP_SYSTEM;
		else if (word_is(s, n, "edge"))
			a->caps |= PMC_CAP_EDGE;
		else if (word_is(s, n, "inv"))
			a->caps |= PMC_CAP_INVERT;
		else if (n > 6 && word_is(s, 6, "cmask=") && number(s + 6, n - 6, &v) == 0 &&
		    v <= 0xFF) {
			a->caps |= PMC_CAP_THRESHOLD;
			a->md_cmask = (uint32_t)v;
		} else
			return (-1);
	}
	return (0);
}

int
pmc_allocate(const char *ctrspec, enum pmc_mode mode, uint32_t flags, int cpu,
    pmc_id_t *pmcid, uint64_t count)
{
	struct vpmu_pv_pmcallocate a;

	if (ctrspec == NULL || pmcid == NULL)
		return (ret(VPMU_PV_EFAULT));
	if (need_init() != 0)
		return (-1);
	__builtin_memset(&a, 0, sizeof(a));
	if (parse_spec(ctrspec, &a) != 0)
		return (ret(VPMU_PV_EINVAL));	/* pmc(3): an unknown event */
	a.cpu = (uint32_t)cpu;
	a.flags = flags;
	a.mode = (uint32_t)mode;
	a.count = count;
	if (call(VPMU_PV_OP_PMCALLOCATE, &a, sizeof(a)) != 0)
		return (-1);
	*pmcid = a.pmcid;
	return (0);
}

/* ---- the other operations --------------------------------------------------------------- */

static int
attach_op(uint32_t op, pmc_id_t pmcid, int32_t pid)
{
	struct vpmu_pv_pmcattach a = { pmcid, pid };

	return (call(op, &a, sizeof(a)));
}

int
pmc_attach(pmc_id_t pmcid, int32_t pid)
{
	return (attach_op(VPMU_PV_OP_PMCATTACH, pmcid, pid));
}

int
pmc_detach(pmc_id_t pmcid, int32_t pid)
{
	return (attach_op(VPMU_PV_OP_PMCDETACH, pmcid, pid));
}

static int
simple_op(uint32_t op, pmc_id_t pmcid)
{
	struct vpmu_pv_simple s = { pmcid };

	return (call(op, &s, sizeof(s)));
}

int
pmc_release(pmc_id_t pmcid)
{
	return (simple_op(VPMU_PV_OP_PMCRELEASE, pmcid));
}

int
pmc_start(pmc_id_t pmcid)
{
	return (simple_op(VPMU_PV_OP_PMCSTART, pmcid));
}

int
pmc_stop(pmc_id_t pmcid)
{
	return (simple_op(VPMU_PV_OP_PMCSTOP, pmcid));
}

static int
rw_op(uint32_t flags, pmc_id_t pmcid, pmc_value_t value, pmc_value_t *old)
{
	struct vpmu_pv_pmcrw rw = { flags, pmcid, value };

	if (call(VPMU_PV_OP_PMCRW, &rw, sizeof(rw)) != 0)
		return (-1);
	if (old != NULL)
		*old = rw.value;
	return (0);
}

int
pmc_read(pmc_id_t pmcid, pmc_value_t *value)
{
	if (value == NULL)
		return (ret(VPMU_PV_EFAULT));
	return (rw_op(PMC_F_OLDVALUE, pmcid, 0, value));
}

int
pmc_write(pmc_id_t pmcid, pmc_value_t value)
{
	return (rw_op(PMC_F_NEWVALUE, pmcid, value, NULL));
}

int
pmc_rw(pmc_id_t pmcid, pmc_value_t newvalue, pmc_value_t *oldvalue)
{
	if (oldvalue == NULL)
		return (ret(VPMU_PV_EFAULT));
	return (rw_op(PMC_F_NEWVALUE | PMC_F_OLDVALUE, pmcid, newvalue, oldvalue));
}

int
pmc_set(pmc_id_t pmcid, pmc_value_t value)
{
	struct vpmu_pv_pmcsetcount sc = { value, pmcid, 0 };

	return (call(VPMU_PV_OP_PMCSETCOUNT, &sc, sizeof(sc)));
}

int
pmc_get_msr(pmc_id_t pmc, uint32_t *msr)
{
	struct vpmu_pv_getmsr gm = { 0, pmc };

	if (msr == NULL)
		return (ret(VPMU_PV_EFAULT));
	if (call(VPMU_PV_OP_PMCGETMSR, &gm, sizeof(gm)) != 0)
		return (-1);
	*msr = gm.msr;
	return (0);
}

int
pmc_configure_logfile(int fd)
{
	struct vpmu_pv_configurelog cl = { 0, fd };

	return (call(VPMU_PV_OP_CONFIGURELOG, &cl, sizeof(cl)));
}

int
pmc_flush_logfile(void)
{
	return (call(VPMU_PV_OP_FLUSHLOG, NULL, 0));
}

int
pmc_close_logfile(void)
{
	return (call(VPMU_PV_OP_CLOSELOG, NULL, 0));
}

int
pmc_writelog(uint32_t userdata)
{
	struct vpmu_pv_writelog wl = { userdata };

	return (call(VPMU_PV_OP_WRITELOG, &wl, sizeof(wl)));
}

/* ---- hooks -------------------------------------------------------------------------------- */

int
vpmu_hook_proc_create(int32_t pid, int32_t ppid, uint32_t uid, uint32_t cflags)
{
	struct vpmu_pv_proc p = { pid, ppid, uid, cflags };

	return (call(VPMU_PV_OP_PROC_CREATE, &p, sizeof(p)));
}

int
vpmu_hook_proc_fork(int32_t parent, int32_t child)
{
	struct vpmu_pv_fork f = { parent, child };

	return (call(VPMU_PV_OP_PROC_FORK, &f, sizeof(f)));
}

int
vpmu_hook_proc_exec(int32_t pid, const char *path, int setcred, uint32_t uid,
    uint32_t cflags)
{
	struct {
		struct vpmu_pv_exec e;
		char path[VPMU_PV_PATH_MAX];
	} x;
	uint32_t n;

	if (path == NULL)
		path = "";
	for (n = 0; path[n] != '\0'; n++)
		if (n + 1 >= VPMU_PV_PATH_MAX)
			return (ret(VPMU_PV_EINVAL));
	x.e.pid = pid;
	x.e.setcred = setcred != 0;
	x.e.uid = uid;
	x.e.cflags = cflags;
	__builtin_memcpy(x.path, path, n + 1);
	return (call(VPMU_PV_OP_PROC_EXEC, &x, (uint32_t)sizeof(x.e) + n + 1));
}

int
vpmu_hook_proc_exit(int32_t pid)
{
	struct vpmu_pv_pid p = { pid };

	return (call(VPMU_PV_OP_PROC_EXIT, &p, sizeof(p)));
}

int
vpmu_hook_csw_in(int32_t pid, int32_t tid)
{
	struct vpmu_pv_csw s = { pid, tid };

	return (call(VPMU_PV_OP_CSW_IN, &s, sizeof(s)));
}

int
vpmu_hook_csw_out(void)
{
	return (call(VPMU_PV_OP_CSW_OUT, NULL, 0));
}
