/*
 * pmc_report.c -- what is told about PMCs: to the host, a PMC's count and
 * times (vpmu_pmc_get_count) and why it does not count
 * (vpmu_pmc_get_unsupported), vpmu_pmc(3); to its owner's log, the
 * records about it (vpmu__log_pmc).
 */
#include <errno.h>
#include <stdio.h>
#include <string.h>

#include "pmc_internal.h"
#include <vpmu/pmclog.h>

/* ---- host view ------------------------------------------------------------ */

int
vpmu_pmc_get_count(vpmu_vm *vm, int32_t owner, vpmu_pmc_id id, struct vpmu_count *out)
{
	struct vpmu_pmc *pm;
	int error = 0;

	if (vm == NULL || out == NULL)
		return (EINVAL);
	vpmu__vm_lock(vm);
	if ((pm = vpmu__pmc_by_id(vm, owner, id)) == NULL)
		error = EINVAL;
	else {
		out->value = pm->base + vpmu__pmc_counted(vm, pm);	/* unscaled */
		out->time_enabled = pm->t_enabled;
		out->time_running = pm->t_running;
	}
	vpmu__vm_unlock(vm);
	return (error);
}

int
vpmu_pmc_get_unsupported(vpmu_vm *vm, int32_t owner, vpmu_pmc_id id, char *why,
    size_t whylen)
{
	struct vpmu_pmc *pm;
	int error = 0;

	if (vm == NULL)
		return (EINVAL);
	vpmu__vm_lock(vm);
	if ((pm = vpmu__pmc_by_id(vm, owner, id)) == NULL)
		error = EINVAL;
	else if (pm->unsupported) {
		error = EOPNOTSUPP;
		if (why != NULL && whylen > 0)
			snprintf(why, whylen, "%s", pm->why);
	} else if (vpmu__pmc_waiting(pm)) {
		error = EBUSY;
		if (why != NULL && whylen > 0)
			snprintf(why, whylen, "not running: all %u host counters of the "
			    "vCPU are in use", vm->capacity);
	} else if (why != NULL && whylen > 0)
		why[0] = '\0';
	vpmu__vm_unlock(vm);
	return (error);
}

/* ---- log records about PMCs -------------------------------------------------- */

/*
 * A record about pm for its owner's log, if the owner has one: its
 * allocation (PMCALLOCATEDYN, which carries the event's name, so readers
 * need no libpmc event table), an attach or detach of p, p's exec, p's
 * exit with its count (value).  (PROCCSW is written by vpmu__unload().)
 */
void
vpmu__log_pmc(struct vpmu_vm *vm, struct vpmu_pmc *pm, uint32_t type,
    const struct vpmu_proc *p, uint64_t value)
{
	struct vpmu_pmclog_ev ev;
	const char *name;

	if (pm->owner->log == NULL)
		return;
	memset(&ev, 0, sizeof(ev));
	ev.type = type;
	switch (type) {
	case VPMU_PMCLOG_PMCALLOCATEDYN:
		ev.u.pmcallocatedyn.pmcid = pm->id;
		ev.u.pmcallocatedyn.event = pm->spec.event;
		ev.u.pmcallocatedyn.flags = pm->flags & VPMU_F_ALLOCATE_MASK;
		name = vpmu_event_name(pm->spec.event);
		if (pm->spec.event == VPMU_EV_RAW)
			snprintf(ev.u.pmcallocatedyn.evname, sizeof(ev.u.pmcallocatedyn.evname),
			    "raw-0x%llx", (unsigned long long)pm->spec.raw);
		else
			snprintf(ev.u.pmcallocatedyn.evname, sizeof(ev.u.pmcallocatedyn.evname),
			    "%s", name != NULL ? name : "unknown");
		break;
	case VPMU_PMCLOG_PMCATTACH:
		ev.u.pmcattach.pmcid = pm->id;
		ev.u.pmcattach.pid = (uint32_t)p->cred.pid;
		snprintf(ev.u.pmcattach.path, sizeof(ev.u.pmcattach.path), "%s",
		    p->path != NULL ? p->path : "");
		break;
	case VPMU_PMCLOG_PMCDETACH:
		ev.u.pmcdetach.pmcid = pm->id;
		ev.u.pmcdetach.pid = (uint32_t)p->cred.pid;
		break;
	case VPMU_PMCLOG_PROCEXEC:
		ev.u.procexec.pid = (uint32_t)p->cred.pid;
		ev.u.procexec.pmcid = pm->id;
		snprintf(ev.u.procexec.path, sizeof(ev.u.procexec.path), "%s",
		    p->path != NULL ? p->path : "");
		break;
	case VPMU_PMCLOG_PROCEXIT:
		ev.u.procexit.pmcid = pm->id;
		ev.u.procexit.pid = (uint32_t)p->cred.pid;
		ev.u.procexit.value = value;
		break;
	default:
		return;
	}
	vpmu__log_emit(vm, pm->owner, &ev);
}
