/*
 * op.c -- the one dispatch point for hwpmc operations, the small
 * information operations, and the typed wrappers of the public API.
 *
 * Every operation, from the host API or (later) from a guest, enters
 * vpmu_vm_op(): it validates the caller, takes the VM lock, runs the op's
 * body and counts the call in the driver statistics (hwpmc's pm_syscalls
 * and pm_syscall_errors).
 */
#include <errno.h>
#include <string.h>

#include "internal.h"

typedef int vpmu_op_fn(struct vpmu_vm *, const struct vpmu_cred *, void *);

/* PMC_OP_GETCPUINFO: vCPUs, rows, classes. */
static int
vpmu_do_op_getcpuinfo(struct vpmu_vm *vm, const struct vpmu_cred *cr, void *arg)
{
	struct vpmu_cpuinfo *ci = arg;
	unsigned i;

	(void)cr;
	memset(ci, 0, sizeof(*ci));
	ci->cputype = vm->cputype;
	ci->ncpu = vm->nvcpus;
	ci->npmc = vm->npmc;
	ci->nclass = vm->nclass;
	for (i = 0; i < vm->nclass; i++) {
		ci->classes[i].cls = vm->classes[i].cls;
		ci->classes[i].caps = vm->classes[i].caps;
		ci->classes[i].width = vm->classes[i].width;
		ci->classes[i].num = vm->classes[i].rows;
	}
	return (0);
}

/* PMC_OP_GETDRIVERSTATS: a snapshot of the eight counters. */
static int
vpmu_do_op_getdriverstats(struct vpmu_vm *vm, const struct vpmu_cred *cr, void *arg)
{
	(void)cr;
	memcpy(arg, &vm->stats, sizeof(vm->stats));
	return (0);
}

/*
 * PMC_OP_GETMODULEVERSION: a caller built for a newer major.minor than
 * ours is refused; anything else gets our version.
 */
static int
vpmu_do_op_getmoduleversion(struct vpmu_vm *vm, const struct vpmu_cred *cr, void *arg)
{
	uint32_t *version = arg;

	(void)vm;
	(void)cr;
	if ((*version & 0xFFFF0000u) > (VPMU_PMC_VERSION & 0xFFFF0000u))
		return (VPMU_EPROGMISMATCH);
	*version = VPMU_PMC_VERSION;
	return (0);
}

/* libvpmu has no dynamic (PMU json) events: GETDYNEVENTINFO has no class to list. */
static int
vpmu_do_op_nodyn(struct vpmu_vm *vm, const struct vpmu_cred *cr, void *arg)
{
	(void)vm;
	(void)cr;
	(void)arg;
	return (EINVAL);
}

/* The table of operations; the index is the op number. */
static const struct {
	const char *name;
	vpmu_op_fn *fn;
	bool needs_arg;
} optab[VPMU_OP_MAX] = {
	/* CONFIGURELOG, FLUSHLOG and CLOSELOG: vpmu__log_op(), below. */
	[VPMU_OP_CONFIGURELOG] = { "CONFIGURELOG", NULL, true },
	[VPMU_OP_FLUSHLOG] = { "FLUSHLOG", NULL, false },
	[VPMU_OP_GETCPUINFO] = { "GETCPUINFO", vpmu_do_op_getcpuinfo, true },
	[VPMU_OP_GETDRIVERSTATS] = { "GETDRIVERSTATS", vpmu_do_op_getdriverstats, true },
	[VPMU_OP_GETMODULEVERSION] = { "GETMODULEVERSION", vpmu_do_op_getmoduleversion, true },
	[VPMU_OP_GETPMCINFO] = { "GETPMCINFO", vpmu_do_op_getpmcinfo, true },
	[VPMU_OP_PMCADMIN] = { "PMCADMIN", vpmu_do_op_pmcadmin, true },
	[VPMU_OP_PMCALLOCATE] = { "PMCALLOCATE", vpmu_do_op_pmcallocate, true },
	[VPMU_OP_PMCATTACH] = { "PMCATTACH", vpmu_do_op_pmcattach, true },
	[VPMU_OP_PMCDETACH] = { "PMCDETACH", vpmu_do_op_pmcdetach, true },
	[VPMU_OP_PMCGETMSR] = { "PMCGETMSR", vpmu_do_op_pmcgetmsr, true },
	[VPMU_OP_PMCRELEASE] = { "PMCRELEASE", vpmu_do_op_pmcrelease, true },
	[VPMU_OP_PMCRW] = { "PMCRW", vpmu_do_op_pmcrw, true },
	[VPMU_OP_PMCSETCOUNT] = { "PMCSETCOUNT", vpmu_do_op_pmcsetcount, true },
	[VPMU_OP_PMCSTART] = { "PMCSTART", vpmu_do_op_pmcstart, true },
	[VPMU_OP_PMCSTOP] = { "PMCSTOP", vpmu_do_op_pmcstop, true },
	[VPMU_OP_WRITELOG] = { "WRITELOG", vpmu_do_op_writelog, true },
	[VPMU_OP_CLOSELOG] = { "CLOSELOG", NULL, false },
	[VPMU_OP_GETDYNEVENTINFO] = { "GETDYNEVENTINFO", vpmu_do_op_nodyn, true },
};

int
vpmu_vm_op(vpmu_vm *vm, const struct vpmu_cred *caller, int op, void *arg)
{
	struct vpmu_event_spec spec;
	int error;

	if (vm == NULL)
		return (EINVAL);
	/* The log operations that wait for the writer take the lock themselves. */
	if (op == VPMU_OP_CONFIGURELOG || op == VPMU_OP_FLUSHLOG || op == VPMU_OP_CLOSELOG)
		return (vpmu__log_op(vm, caller, op, arg));
	/* Whether the source can count a new PMC's event: asked before the lock. */
	if (op == VPMU_OP_PMCALLOCATE && arg != NULL &&
	    vpmu__pmc_spec_of(arg, &spec) == 0)
		vpmu__pmc_ask(vm, &spec);
	vpmu__vm_lock(vm);
	if (op < 0 || op >= VPMU_OP_MAX || optab[op].fn == NULL)
		error = EINVAL;			/* unknown operation */
	else if (optab[op].needs_arg && arg == NULL)
		error = EFAULT;
	else if ((error = vpmu__cred_check(caller)) == 0) {
		/* PMCSTART of the first sampling PMC: the sweeper, lock dropped. */
		while ((error = optab[op].fn(vm, caller, arg)) == VPMU__ESWEEPER) {
			vpmu__vm_release(vm);
			error = vpmu__sweeper_start(vm);
			vpmu__vm_lock(vm);
			if (error != 0)
				break;
		}
	}
	vm->stats.syscalls++;
	if (error != 0)
		vm->stats.syscall_errors++;
	return (vpmu__vm_unlock_err(vm, error));	/* the host counters PMCSTART asked for */
}

/* ---- typed wrappers ------------------------------------------------------ */

int
vpmu_pmc_allocate(vpmu_vm *vm, const struct vpmu_cred *caller, struct vpmu_pmc_alloc *req)
{
	return (vpmu_vm_op(vm, caller, VPMU_OP_PMCALLOCATE, req));
}

static int
simple_op(vpmu_vm *vm, const struct vpmu_cred *caller, int op, vpmu_pmc_id id)
{
	struct vpmu_op_simple s = { id };

	return (vpmu_vm_op(vm, caller, op, &s));
}

int
vpmu_pmc_release(vpmu_vm *vm, const struct vpmu_cred *caller, vpmu_pmc_id id)
{
	return (simple_op(vm, caller, VPMU_OP_PMCRELEASE, id));
}

int
vpmu_pmc_start(vpmu_vm *vm, const struct vpmu_cred *caller, vpmu_pmc_id id)
{
	return (simple_op(vm, caller, VPMU_OP_PMCSTART, id));
}

int
vpmu_pmc_stop(vpmu_vm *vm, const struct vpmu_cred *caller, vpmu_pmc_id id)
{
	return (simple_op(vm, caller, VPMU_OP_PMCSTOP, id));
}

int
vpmu_pmc_attach(vpmu_vm *vm, const struct vpmu_cred *caller, vpmu_pmc_id id, int32_t pid)
{
	struct vpmu_op_pmcattach a = { id, pid };

	return (vpmu_vm_op(vm, caller, VPMU_OP_PMCATTACH, &a));
}

int
vpmu_pmc_detach(vpmu_vm *vm, const struct vpmu_cred *caller, vpmu_pmc_id id, int32_t pid)
{
	struct vpmu_op_pmcattach a = { id, pid };

	return (vpmu_vm_op(vm, caller, VPMU_OP_PMCDETACH, &a));
}

int
vpmu_pmc_rw(vpmu_vm *vm, const struct vpmu_cred *caller, vpmu_pmc_id id,
    uint32_t flags, uint64_t *value)
{
	struct vpmu_op_pmcrw rw = { flags, id, 0 };
	int error;

	if (value == NULL)
		return (vpmu_vm_op(vm, caller, VPMU_OP_PMCRW, NULL));	/* EFAULT, counted */
	rw.value = *value;
	if ((error = vpmu_vm_op(vm, caller, VPMU_OP_PMCRW, &rw)) == 0 &&
	    (flags & VPMU_F_OLDVALUE))
		*value = rw.value;
	return (error);
}

int
vpmu_pmc_read(vpmu_vm *vm, const struct vpmu_cred *caller, vpmu_pmc_id id, uint64_t *value)
{
	return (vpmu_pmc_rw(vm, caller, id, VPMU_F_OLDVALUE, value));
}

int
vpmu_pmc_write(vpmu_vm *vm, const struct vpmu_cred *caller, vpmu_pmc_id id, uint64_t value)
{
	return (vpmu_pmc_rw(vm, caller, id, VPMU_F_NEWVALUE, &value));
}

int
vpmu_pmc_setcount(vpmu_vm *vm, const struct vpmu_cred *caller, vpmu_pmc_id id, uint64_t count)
{
	struct vpmu_op_pmcsetcount sc = { count, id, 0 };

	return (vpmu_vm_op(vm, caller, VPMU_OP_PMCSETCOUNT, &sc));
}

int
vpmu_pmc_getmsr(vpmu_vm *vm, const struct vpmu_cred *caller, vpmu_pmc_id id, uint32_t *msr)
{
	struct vpmu_op_getmsr gm = { 0, id };
	int error;

	if (msr == NULL)
		return (vpmu_vm_op(vm, caller, VPMU_OP_PMCGETMSR, NULL));
	if ((error = vpmu_vm_op(vm, caller, VPMU_OP_PMCGETMSR, &gm)) == 0)
		*msr = gm.msr;
	return (error);
}

int
vpmu_pmc_admin(vpmu_vm *vm, const struct vpmu_cred *caller, int32_t cpu, int32_t row,
    uint32_t state)
{
	struct vpmu_op_pmcadmin pa = { cpu, 0, row, state };

	return (vpmu_vm_op(vm, caller, VPMU_OP_PMCADMIN, &pa));
}

int
vpmu_vm_get_cpuinfo(vpmu_vm *vm, const struct vpmu_cred *caller, struct vpmu_cpuinfo *ci)
{
	return (vpmu_vm_op(vm, caller, VPMU_OP_GETCPUINFO, ci));
}

int
vpmu_vm_get_driverstats(vpmu_vm *vm, const struct vpmu_cred *caller, struct vpmu_driverstats *st)
{
	return (vpmu_vm_op(vm, caller, VPMU_OP_GETDRIVERSTATS, st));
}

int
vpmu_vm_get_moduleversion(vpmu_vm *vm, const struct vpmu_cred *caller, uint32_t *version)
{
	return (vpmu_vm_op(vm, caller, VPMU_OP_GETMODULEVERSION, version));
}

int
vpmu_vm_get_pmcinfo(vpmu_vm *vm, const struct vpmu_cred *caller, uint32_t cpu,
    struct vpmu_pmc_info *pmcs, uint32_t *npmc)
{
	struct vpmu_op_getpmcinfo gi;
	int error;

	if (npmc == NULL)
		return (vpmu_vm_op(vm, caller, VPMU_OP_GETPMCINFO, NULL));
	gi.cpu = cpu;
	gi.npmc = *npmc;
	gi.pmcs = pmcs;
	error = vpmu_vm_op(vm, caller, VPMU_OP_GETPMCINFO, &gi);
	*npmc = gi.npmc;
	return (error);
}
