/*
 * pv_hwpmc.c -- the hwpmc personality of the paravirtual channel (pvchan.h):
 * hwpmc(4)'s PMC_OP_* 0 .. 18 and the guest kernel's hooks (0x100 ..).
 *
 * Each handler turns the guest's FreeBSD-layout argument (<vpmu-guest/pv.h>)
 * into the core's struct, calls vpmu_vm_op() or the vpmu_proc_*() hook with
 * the identity the block carries, and writes the out fields back into the
 * argument copy (pv.c copies it to the guest on success).  Every policy
 * decision (privilege, jails, unprivileged_syspmcs, unprivileged_proc_debug)
 * is the core's, made on that identity; the channel adds only what the
 * core cannot know: the guest's log descriptors, the size of the guest's
 * GETPMCINFO buffer, the fast-read page slot GETMSR hands out, and that
 * hooks are for the guest kernel (privileged callers) only.
 *
 * Called with pv->lock held; the core takes the VM lock itself.  The log
 * operations that wait for the log's writer (FLUSHLOG, CLOSELOG,
 * CONFIGURELOG -1) drop pv->lock for the call (op_wait()), so that a
 * blocking log descriptor holds up the vCPU that asked, not the channel.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "pvchan.h"

/* ---- helpers ------------------------------------------------------------------ */

static int
op(struct pv_call *c, int o, void *arg)
{
	return (vpmu_vm_op(c->vm, &c->cred, o, arg));
}

/*
 * An operation that may wait for a log's writer: without pv->lock (no lock
 * across the wait).  Safe: the call uses nothing of the channel's, the
 * argument is this request's own copy, and pv.c touches after it only the
 * guest RAM table (fixed before the vCPUs run), this vCPU's own record and,
 * under the lock again, the statistics.
 */
static int
op_wait(struct pv_call *c, int o, void *arg)
{
	int error;

	pthread_mutex_unlock(&c->pv->lock);
	error = vpmu_vm_op(c->vm, &c->cred, o, arg);
	pthread_mutex_lock(&c->pv->lock);
	return (error);
}

/* Guest pids are 1 .. VPMU_PV_PID_MAX; the rest belong to libvpmu's own owners. */
static bool
guest_pid(int32_t pid)
{
	return (pid > 0 && pid <= VPMU_PV_PID_MAX);
}

/* ---- log operations -------------------------------------------------------------- */

/*
 * CONFIGURELOG: a guest has no host descriptors; its logfd names one the
 * VMM offered with vpmu_pv_set_logfd().  A number the VMM never offered is
 * what a closed descriptor is to hwpmc: EBADF.  The flags are checked
 * first, as hwpmc does.
 */
static int
pv_configurelog(struct pv_call *c)
{
	struct vpmu_pv_configurelog *g = (void *)c->arg;
	struct vpmu_op_configurelog cl = { g->flags, -1 };

	if (g->flags != 0)
		return (EINVAL);
	if (g->logfd >= 0) {
		if (g->logfd >= VPMU_PV_MAX_LOGFDS || c->pv->logfd[g->logfd] < 0)
			return (EBADF);
		cl.logfd = c->pv->logfd[g->logfd];
		return (op(c, VPMU_OP_CONFIGURELOG, &cl));
	}
	return (op_wait(c, VPMU_OP_CONFIGURELOG, &cl));	/* a close */
}

static int
pv_flushlog(struct pv_call *c)
{
	return (op_wait(c, VPMU_OP_FLUSHLOG, NULL));
}

static int
pv_closelog(struct pv_call *c)
{
	return (op_wait(c, VPMU_OP_CLOSELOG, NULL));
}

static int
pv_writelog(struct pv_call *c)
{
	struct vpmu_pv_writelog *g = (void *)c->arg;
	struct vpmu_op_writelog wl = { g->userdata };

	return (op(c, VPMU_OP_WRITELOG, &wl));
}

/* ---- information ---------------------------------------------------------------- */

static int
pv_getcpuinfo(struct pv_call *c)
{
	struct vpmu_pv_getcpuinfo *g = (void *)c->arg;
	struct vpmu_cpuinfo ci;
	unsigned i;
	int error;

	if ((error = op(c, VPMU_OP_GETCPUINFO, &ci)) != 0)
		return (error);
	memset(g, 0, sizeof(*g));
	g->cputype = ci.cputype;
	g->ncpu = ci.ncpu;
	g->npmc = ci.npmc;
	g->nclass = ci.nclass;
	for (i = 0; i < VPMU_CLASS_MAX && i < ci.nclass; i++) {
		g->classes[i].cls = ci.classes[i].cls;
		g->classes[i].caps = ci.classes[i].caps;
		g->classes[i].width = ci.classes[i].width;
		g->classes[i].num = ci.classes[i].num;
	}
	return (0);
}

static int
pv_getdriverstats(struct pv_call *c)
{
	struct vpmu_pv_getdriverstats *g = (void *)c->arg;
	struct vpmu_driverstats st;
	int error;

	if ((error = op(c, VPMU_OP_GETDRIVERSTATS, &st)) != 0)
		return (error);
	g->intr_ignored = st.intr_ignored;
	g->intr_processed = st.intr_processed;
	g->intr_bufferfull = st.intr_bufferfull;
	g->syscalls = st.syscalls;
	g->syscall_errors = st.syscall_errors;
	g->buffer_requests = st.buffer_requests;
	g->buffer_requests_failed = st.buffer_requests_failed;
	g->log_sweeps = st.log_sweeps;
	return (0);
}

static int
pv_getmoduleversion(struct pv_call *c)
{
	uint32_t v;
	int error;

	memcpy(&v, c->arg, sizeof(v));
	if ((error = op(c, VPMU_OP_GETMODULEVERSION, &v)) == 0)
		memcpy(c->arg, &v, sizeof(v));
	return (error);
}

/*
 * GETPMCINFO: the rows go after the 8-byte header, as many as the VM has.
 * hwpmc copies them out to a buffer it cannot measure, so a short one
 * faults (EFAULT).  The core is asked for as many rows as the guest has
 * room for: it does its CPU checks first (EINVAL, ENXIO) and then says
 * EINVAL with the row count it needs, which the channel reports as the
 * fault hwpmc's copyout would have been.  The call is counted in the
 * driver statistics either way.
 */
static int
pv_getpmcinfo(struct pv_call *c)
{
	struct vpmu_pv_getpmcinfo *g = (void *)c->arg;
	struct vpmu_pv_pmcinfo *out = (void *)(c->arg + sizeof(*g));
	struct vpmu_op_getpmcinfo gi;
	struct vpmu_pmc_info *rows;
	uint32_t room, i;
	int error;

	room = (c->arglen - (uint32_t)sizeof(*g)) / (uint32_t)sizeof(*out);
	/* One row at least: the core reads a NULL array as a bad address. */
	if ((rows = calloc(room > 0 ? room : 1, sizeof(*rows))) == NULL)
		return (ENOMEM);
	gi.cpu = (uint32_t)g->cpu;		/* -1 becomes a CPU the VM lacks: EINVAL */
	gi.npmc = room;
	gi.pmcs = rows;
	error = op(c, VPMU_OP_GETPMCINFO, &gi);
	if (error == EINVAL && gi.npmc > room)
		error = EFAULT;
	if (error == 0)
		for (i = 0; i < gi.npmc; i++) {
			memset(&out[i], 0, sizeof(out[i]));
			memcpy(out[i].name, rows[i].name, sizeof(out[i].name));
			out[i].name[sizeof(out[i].name) - 1] = '\0';
			out[i].cls = rows[i].cls;
			out[i].enabled = rows[i].enabled;
			out[i].rowdisp = rows[i].rowdisp;
			out[i].ownerpid = rows[i].ownerpid;
			out[i].mode = rows[i].mode;
			out[i].event = rows[i].event;
			out[i].flags = rows[i].flags;
			out[i].reloadcount = rows[i].reloadcount;
		}
	free(rows);
	return (error);
}

/* libvpmu has no SOFT class (nor any dynamic one): EINVAL for every class. */
static int
pv_getdyneventinfo(struct pv_call *c)
{
	struct vpmu_pv_getdyneventinfo *g = (void *)c->arg;
	uint32_t cls = g->cls;

	return (op(c, VPMU_OP_GETDYNEVENTINFO, &cls));
}

/* ---- PMC operations ---------------------------------------------------------------- */

static int
pv_pmcadmin(struct pv_call *c)
{
	struct vpmu_pv_pmcadmin *g = (void *)c->arg;
	struct vpmu_op_pmcadmin pa = { g->cpu, g->flags, g->row, g->state };

	return (op(c, VPMU_OP_PMCADMIN, &pa));
}

/*
 * The guest's event codes: libvpmu's own (vpmu_pv(4) EVENTS) and FreeBSD's
 * fixed ones for the TSC and the Intel fixed-function counters.  Anything
 * else becomes VPMU_EV_NONE, which the core refuses (EINVAL) after its mode
 * and CPU checks, as hwpmc refuses an event no class knows.
 */
static uint32_t
pv_event(uint32_t ev)
{
	switch (ev) {
	case VPMU_PV_EV_INSTRUCTIONS:
	case VPMU_PV_EV_FBSD_IAF_INSTR:
		return (VPMU_EV_INSTRUCTIONS);
	case VPMU_PV_EV_BRANCHES:
		return (VPMU_EV_BRANCHES);
	case VPMU_PV_EV_CYCLES:
	case VPMU_PV_EV_FBSD_IAF_CYCLES:
		return (VPMU_EV_CYCLES);
	case VPMU_PV_EV_REF_CYCLES:
	case VPMU_PV_EV_FBSD_IAF_REF:
		return (VPMU_EV_REF_CYCLES);
	case VPMU_PV_EV_TSC:
	case VPMU_PV_EV_FBSD_TSC:
		return (VPMU_EV_TSC);
	case VPMU_PV_EV_RAW:
		return (VPMU_EV_RAW);
	default:
		return (VPMU_EV_NONE);
	}
}

static int
pv_pmcallocate(struct pv_call *c)
{
	struct vpmu_pv_pmcallocate *g = (void *)c->arg;
	struct vpmu_pmc_alloc a;
	unsigned i;
	int error;

	/* pm_md's unused words are reserved: a later ABI may give them meaning. */
	for (i = 0; i < VPMU_ARRAY_SIZE(g->md_pad); i++)
		if (g->md_pad[i] != 0)
			return (EINVAL);
	memset(&a, 0, sizeof(a));
	a.caps = g->caps;
	a.cpu = g->cpu;
	a.cls = g->cls;
	a.event = pv_event(g->ev);
	a.flags = g->flags;
	a.mode = g->mode;
	a.cmask = g->md_cmask;
	a.count = g->count;
	a.raw = g->md_config;
	error = op(c, VPMU_OP_PMCALLOCATE, &a);
	g->pmcid = error == 0 ? a.pmcid : VPMU_ID_INVALID;
	return (error);
}

static int
pv_attach_common(struct pv_call *c, int o)
{
	struct vpmu_pv_pmcattach *g = (void *)c->arg;
	struct vpmu_op_pmcattach a = { g->pmcid, g->pid };

	return (op(c, o, &a));
}

static int
pv_pmcattach(struct pv_call *c)
{
	return (pv_attach_common(c, VPMU_OP_PMCATTACH));
}

static int
pv_pmcdetach(struct pv_call *c)
{
	return (pv_attach_common(c, VPMU_OP_PMCDETACH));
}

/*
 * GETMSR: the core checks the PMC as hwpmc does (process mode, no
 * DESCENDANTS, attached to its owner alone) and marks it as handed out
 * (a later ATTACH is EPERM).  What the guest reads the counter with is
 * not an RDPMC index but a slot of the caller's fast-read page, which
 * pv_fastpage.c assigns; so a PV-class PMC, which has no RDPMC index,
 * is fine here.  The call goes through the core's body for the channel
 * (vpmu__pmc_getmsr_pv) with vpmu_vm_op()'s locking and accounting.
 */
static int
pv_pmcgetmsr(struct pv_call *c)
{
	struct vpmu_pv_getmsr *g = (void *)c->arg;
	struct vpmu_op_getmsr gm = { 0, g->pmcid };
	struct vpmu_vm *vm = c->vm;
	struct vpmu_pmc *pm;
	uint32_t slot;
	bool had;
	int error;

	vpmu__vm_lock(vm);
	/* GETMSR succeeds on the caller's own PMCs only: it is their owner. */
	pm = vpmu__pmc_by_id(vm, c->cred.pid, g->pmcid);
	had = pm != NULL && (pm->flags & VPMU_PF_MSR_ACCESS) != 0;
	if ((error = vpmu__cred_check(&c->cred)) == 0)
		error = vpmu__pmc_getmsr_pv(vm, &c->cred, &gm);
	vm->stats.syscalls++;
	if (error != 0)
		vm->stats.syscall_errors++;
	vpmu__vm_unlock(vm);
	if (error != 0)
		return (error);
	/* pv->lock is held: the fast page's state cannot change meanwhile. */
	if ((error = vpmu__pv_fast_bind(c->pv, c->cred.pid, g->pmcid, &slot)) != 0) {
		/*
		 * No slot (no page, page full): the PMC was not handed out,
		 * so a later ATTACH must not see hwpmc's "MSR given" mark.
		 */
		vpmu__vm_lock(vm);
		if (!had && (pm = vpmu__pmc_by_id(vm, c->cred.pid, g->pmcid)) != NULL)
			pm->flags &= ~VPMU_PF_MSR_ACCESS;
		vm->stats.syscall_errors++;
		vpmu__vm_unlock(vm);
		return (error);
	}
	g->msr = slot;
	return (0);
}

static int
pv_simple(struct pv_call *c, int o)
{
	struct vpmu_pv_simple *g = (void *)c->arg;
	struct vpmu_op_simple s = { g->pmcid };

	return (op(c, o, &s));
}

static int
pv_pmcrelease(struct pv_call *c)
{
	return (pv_simple(c, VPMU_OP_PMCRELEASE));
}

static int
pv_pmcstart(struct pv_call *c)
{
	return (pv_simple(c, VPMU_OP_PMCSTART));
}

static int
pv_pmcstop(struct pv_call *c)
{
	return (pv_simple(c, VPMU_OP_PMCSTOP));
}

static int
pv_pmcrw(struct pv_call *c)
{
	struct vpmu_pv_pmcrw *g = (void *)c->arg;
	struct vpmu_op_pmcrw rw = { g->flags, g->pmcid, g->value };
	int error;

	if ((error = op(c, VPMU_OP_PMCRW, &rw)) == 0)
		g->value = rw.value;
	return (error);
}

static int
pv_pmcsetcount(struct pv_call *c)
{
	struct vpmu_pv_pmcsetcount *g = (void *)c->arg;
	struct vpmu_op_pmcsetcount sc = { g->count, g->pmcid, 0 };

	return (op(c, VPMU_OP_PMCSETCOUNT, &sc));
}

/* ---- the guest kernel's hooks --------------------------------------------------------- */

/* A new identity from the guest: cflags with unknown bits are refused. */
static int
hook_cred(int32_t pid, uint32_t uid, uint32_t cflags, struct vpmu_cred *cr)
{
	if (!guest_pid(pid) || (cflags & ~VPMU_PV_CRED_MASK) != 0)
		return (EINVAL);
	memset(cr, 0, sizeof(*cr));
	cr->pid = pid;
	cr->uid = uid;
	cr->privileged = (cflags & VPMU_PV_CRED_PRIVILEGED) != 0;
	cr->jailed = (cflags & VPMU_PV_CRED_JAILED) != 0;
	return (0);
}

/*
 * Only the guest kernel reports processes: a hook from a caller that is
 * not privileged is refused before anything else is looked at.
 */
static int
pv_proc_create(struct pv_call *c)
{
	struct vpmu_pv_proc *g = (void *)c->arg;
	struct vpmu_cred cr;
	int error;

	if (!c->cred.privileged)
		return (EPERM);
	if ((error = hook_cred(g->pid, g->uid, g->cflags, &cr)) != 0)
		return (error);
	if (g->ppid != 0 && !guest_pid(g->ppid))
		return (EINVAL);
	return (vpmu_proc_create(c->vm, &cr, g->ppid));
}

static int
pv_proc_fork(struct pv_call *c)
{
	struct vpmu_pv_fork *g = (void *)c->arg;

	if (!c->cred.privileged)
		return (EPERM);
	if (!guest_pid(g->parent) || !guest_pid(g->child))
		return (EINVAL);
	return (vpmu_proc_fork(c->vm, g->parent, g->child));
}

static int
pv_proc_exec(struct pv_call *c)
{
	struct vpmu_pv_exec *g = (void *)c->arg;
	const char *path = (const char *)(c->arg + sizeof(*g));
	size_t room = c->arglen - sizeof(*g);
	struct vpmu_cred cr;
	int error;

	if (!c->cred.privileged)
		return (EPERM);
	/* The path ends inside the argument: pv.c's maxlen keeps it < 1024. */
	if (memchr(path, '\0', room) == NULL || g->setcred > 1 || !guest_pid(g->pid))
		return (EINVAL);
	if (g->setcred && (error = hook_cred(g->pid, g->uid, g->cflags, &cr)) != 0)
		return (error);
	/* It may close the process's log and wait for the writer: no pv->lock. */
	pthread_mutex_unlock(&c->pv->lock);
	error = vpmu_proc_exec(c->vm, g->pid, path, g->setcred ? &cr : NULL);
	pthread_mutex_lock(&c->pv->lock);
	return (error);
}

static int
pv_proc_exit(struct pv_call *c)
{
	struct vpmu_pv_pid *g = (void *)c->arg;
	int error;

	if (!c->cred.privileged)
		return (EPERM);
	if (!guest_pid(g->pid))
		return (EINVAL);
	/* It may close the process's log and wait for the writer: no pv->lock. */
	pthread_mutex_unlock(&c->pv->lock);
	error = vpmu_proc_exit(c->vm, g->pid);
	pthread_mutex_lock(&c->pv->lock);
	if (error != 0)
		return (error);
	/* perfmon, pctr and the fast pages forget the process too (pv->lock held). */
	vpmu__pv_proc_exit(c->pv, g->pid);
	return (0);
}

static int
pv_csw_in(struct pv_call *c)
{
	struct vpmu_pv_csw *g = (void *)c->arg;

	if (!c->cred.privileged)
		return (EPERM);
	if (!guest_pid(g->pid))
		return (EINVAL);
	return (vpmu_proc_switch_in(c->vm, c->cpu, g->pid, g->tid));
}

static int
pv_csw_out(struct pv_call *c)
{
	if (!c->cred.privileged)
		return (EPERM);
	return (vpmu_proc_switch_out(c->vm, c->cpu));
}

/* ---- the table ------------------------------------------------------------------------- */

#define FIXED(o, s, fn)		{ VPMU_PV_OP_##o, sizeof(s), sizeof(s), fn, #o }
#define NOARG(o, fn)		{ VPMU_PV_OP_##o, 0, 0, fn, #o }
#define VARLEN(o, min, max, fn)	{ VPMU_PV_OP_##o, min, max, fn, #o }
#define ARG_MAX			(VPMU_PV_MAX_BLOCK - VPMU_PV_HDRSIZE)

static const struct pv_opdesc hwpmc_ops[] = {
	FIXED(CONFIGURELOG, struct vpmu_pv_configurelog, pv_configurelog),
	NOARG(FLUSHLOG, pv_flushlog),
	FIXED(GETCPUINFO, struct vpmu_pv_getcpuinfo, pv_getcpuinfo),
	FIXED(GETDRIVERSTATS, struct vpmu_pv_getdriverstats, pv_getdriverstats),
	FIXED(GETMODULEVERSION, uint32_t, pv_getmoduleversion),
	VARLEN(GETPMCINFO, sizeof(struct vpmu_pv_getpmcinfo), ARG_MAX, pv_getpmcinfo),
	FIXED(PMCADMIN, struct vpmu_pv_pmcadmin, pv_pmcadmin),
	FIXED(PMCALLOCATE, struct vpmu_pv_pmcallocate, pv_pmcallocate),
	FIXED(PMCATTACH, struct vpmu_pv_pmcattach, pv_pmcattach),
	FIXED(PMCDETACH, struct vpmu_pv_pmcattach, pv_pmcdetach),
	FIXED(PMCGETMSR, struct vpmu_pv_getmsr, pv_pmcgetmsr),
	FIXED(PMCRELEASE, struct vpmu_pv_simple, pv_pmcrelease),
	FIXED(PMCRW, struct vpmu_pv_pmcrw, pv_pmcrw),
	FIXED(PMCSETCOUNT, struct vpmu_pv_pmcsetcount, pv_pmcsetcount),
	FIXED(PMCSTART, struct vpmu_pv_simple, pv_pmcstart),
	FIXED(PMCSTOP, struct vpmu_pv_simple, pv_pmcstop),
	FIXED(WRITELOG, struct vpmu_pv_writelog, pv_writelog),
	NOARG(CLOSELOG, pv_closelog),
	VARLEN(GETDYNEVENTINFO, sizeof(struct vpmu_pv_getdyneventinfo), ARG_MAX,
	    pv_getdyneventinfo),
	FIXED(PROC_CREATE, struct vpmu_pv_proc, pv_proc_create),
	FIXED(PROC_FORK, struct vpmu_pv_fork, pv_proc_fork),
	/* At least the path's NUL; the path is shorter than VPMU_PV_PATH_MAX. */
	VARLEN(PROC_EXEC, sizeof(struct vpmu_pv_exec) + 1,
	    sizeof(struct vpmu_pv_exec) + VPMU_PV_PATH_MAX, pv_proc_exec),
	FIXED(PROC_EXIT, struct vpmu_pv_pid, pv_proc_exit),
	FIXED(CSW_IN, struct vpmu_pv_csw, pv_csw_in),
	NOARG(CSW_OUT, pv_csw_out),
};

const struct pv_personality vpmu__pv_hwpmc = {
	.name = "hwpmc",
	.ops = hwpmc_ops,
	.nops = VPMU_ARRAY_SIZE(hwpmc_ops),
};
