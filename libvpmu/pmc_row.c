/*
 * pmc_row.c -- where a PMC may be and who holds it: the owner records
 * PMCs hang from (found by pid, made on demand, freed with their last PMC
 * and log), the lookup of a PMC by owner and id, and the rows.
 *
 * Row dispositions follow "PMC ROW DISPOSITIONS": one signed count per row
 * across all vCPUs, 0 = FREE, > 0 = THREAD (process PMCs at the row),
 * < 0 = STANDALONE (system PMCs at the row plus administratively disabled
 * slots).  A row is never shared between the two kinds.  Which row a new
 * PMC takes (vpmu__pmc_row_pick) follows from them, the events a row can
 * count and the rows its owner and target already hold.
 */
#include <stdlib.h>

#include "arch.h"
#include "pmc_internal.h"

/* ---- owners ------------------------------------------------------------- */

struct vpmu_owner *
vpmu__owner_find(struct vpmu_vm *vm, int32_t pid)
{
	struct vpmu_owner *o;

	for (o = vm->owners; o != NULL; o = o->next)
		if (o->pid == pid)
			return (o);
	return (NULL);
}

/* The caller's owner record, made if asked (NULL: none, or no memory). */
struct vpmu_owner *
vpmu__owner_get(struct vpmu_vm *vm, const struct vpmu_cred *cr, bool create)
{
	struct vpmu_owner *o;

	if ((o = vpmu__owner_find(vm, cr->pid)) != NULL || !create)
		return (o);
	if ((o = calloc(1, sizeof(*o))) == NULL)
		return (NULL);
	o->pid = cr->pid;
	o->cred = *cr;
	o->next = vm->owners;
	vm->owners = o;
	return (o);
}

void
vpmu__owner_maybe_free(struct vpmu_vm *vm, struct vpmu_owner *o)
{
	struct vpmu_owner **pp;

	if (o->pmcs != NULL || o->has_log)
		return;
	for (pp = &vm->owners; *pp != NULL; pp = &(*pp)->next)
		if (*pp == o) {
			*pp = o->next;
			vpmu__task_names_free(o);
			free(o);
			return;
		}
}

/* ---- rows ----------------------------------------------------------------- */

static bool
can_allocate_row(const struct vpmu_vm *vm, unsigned row, uint32_t mode)
{
	int d = vm->disp[row];

	if (d == 0)
		return (true);
	return (VPMU_MODE_IS_VIRTUAL(mode) ? d > 0 : d < 0);
}

/*
 * The caller may not hold two PMCs at one row (two process PMCs, or two
 * system PMCs on one vCPU), nor allocate at a row where it is itself a
 * target, so that a later self-attach cannot fail.
 */
static bool
can_allocate_rowindex(struct vpmu_vm *vm, const struct vpmu_owner *o,
    int32_t pid, unsigned row, uint32_t cpu)
{
	const struct vpmu_pmc *pm;
	const struct vpmu_proc *p;

	if (o != NULL)
		for (pm = o->pmcs; pm != NULL; pm = pm->owner_next) {
			if (pm->row != row)
				continue;
			if (VPMU_MODE_IS_VIRTUAL(pm->mode) || pm->cpu == cpu)
				return (false);
		}
	p = vpmu__proc_find(vm, pid);
	if (p != NULL && p->slots != NULL && p->slots[row] != NULL)
		return (false);
	return (true);
}

void
vpmu__pmc_disp_mark(struct vpmu_vm *vm, unsigned row, uint32_t mode)
{
	if (VPMU_MODE_IS_VIRTUAL(mode)) {
		VPMU_ASSERT(vm->disp[row] >= 0);
		vm->disp[row]++;
	} else {
		VPMU_ASSERT(vm->disp[row] <= 0);
		vm->disp[row]--;
	}
}

void
vpmu__pmc_disp_unmark(struct vpmu_vm *vm, unsigned row, uint32_t mode)
{
	if (VPMU_MODE_IS_VIRTUAL(mode)) {
		vm->disp[row]--;
		VPMU_ASSERT(vm->disp[row] >= 0);
	} else {
		vm->disp[row]++;
		VPMU_ASSERT(vm->disp[row] <= 0);
	}
}

uint32_t
vpmu__pmc_disp_of(const struct vpmu_vm *vm, unsigned row)
{
	if (vm->disp[row] > 0)
		return (VPMU_DISP_THREAD);
	if (vm->disp[row] < 0)
		return (VPMU_DISP_STANDALONE);
	return (VPMU_DISP_FREE);
}

/*
 * Which events a row can count.  A fixed-function row counts one event,
 * its fixed counter's (IAF-0 instructions, IAF-1 core cycles, IAF-2
 * reference cycles); GP rows count the named architectural events their
 * vendor has (arch.h) and raw selects; paravirtual rows count anything
 * the event table names.
 */
static bool
event_fits_row(const struct vpmu_classdesc *c, unsigned row, uint32_t event)
{
	const struct vpmu__arch_event *a = vpmu__arch_of_event(event);
	unsigned idx = row - c->ri_base;

	switch (c->cls) {
	case VPMU_CLASS_IAF:
		return (event != VPMU_EV_NONE && vpmu__arch_fixed_event(idx) == event);
	case VPMU_CLASS_IAP:
		return (event == VPMU_EV_RAW || (a != NULL && a->intel != 0));
	case VPMU_CLASS_K8:
		return (event == VPMU_EV_RAW || (a != NULL && a->amd != 0));
	default:
		return (true);
	}
}

/*
 * The row of class c a new PMC takes: the first whose event fits, whose
 * disposition admits mode and which the owner o (NULL: none yet) of pid
 * may take, and for a system PMC one whose slot on cpu is neither held
 * nor disabled; c->ri_base + c->rows if there is none.
 */
unsigned
vpmu__pmc_row_pick(struct vpmu_vm *vm, const struct vpmu_classdesc *c,
    const struct vpmu_owner *o, int32_t pid, uint32_t event, uint32_t mode,
    uint32_t cpu)
{
	unsigned row;

	for (row = c->ri_base; row < c->ri_base + c->rows; row++) {
		if (!event_fits_row(c, row, event) ||
		    !can_allocate_row(vm, row, mode) ||
		    !can_allocate_rowindex(vm, o, pid, row, cpu))
			continue;
		if (VPMU_MODE_IS_SYSTEM(mode) && (vm->vcpu[cpu].sys[row] != NULL ||
		    vm->vcpu[cpu].disabled[row]))
			continue;
		break;
	}
	return (row);
}

/* ---- lookup ----------------------------------------------------------------- */

/* Ids are unique per owner only (two owners' process PMCs share rows). */
struct vpmu_pmc *
vpmu__pmc_by_id(struct vpmu_vm *vm, int32_t owner, vpmu_pmc_id id)
{
	struct vpmu_owner *o;
	struct vpmu_pmc *pm;

	if ((o = vpmu__owner_find(vm, owner)) == NULL)
		return (NULL);
	for (pm = o->pmcs; pm != NULL; pm = pm->owner_next)
		if (pm->id == id)
			return (pm);
	return (NULL);
}
