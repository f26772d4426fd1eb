/*
 * pmc_model.c -- the core PMCs behind guest-visible MSR counters
 * (guest-api/, libvpmu/gpmu.c): made at a counter's creation,
 * (re)programmed when the guest writes its controls, read and written
 * when the guest reads or writes the counter.
 *
 * Each counter a guest programs through MSRs is a system-scope counting PMC
 * on its vCPU, in its class's row, owned by the guest kernel itself:
 * owner pid 0, which no caller of vpmu_vm_op() can be.  GETPMCINFO shows
 * those rows STANDALONE with owner 0.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "pmc_internal.h"

int
vpmu__model_pmc_create(struct vpmu_vm *vm, unsigned cpu, uint32_t cls, unsigned idx,
    struct vpmu_pmc **pmp)
{
	static const struct vpmu_cred guest = { .pid = 0, .privileged = 1 };
	const struct vpmu_classdesc *c = vpmu__class_find(vm, cls);
	struct vpmu_owner *o;
	struct vpmu_pmc *pm;
	unsigned row;

	if (c == NULL || idx >= c->rows || cpu >= vm->nvcpus)
		return (EINVAL);
	row = c->ri_base + idx;
	if (vm->vcpu[cpu].sys[row] != NULL || vm->disp[row] > 0)
		return (EBUSY);
	if ((pm = calloc(1, sizeof(*pm))) == NULL)
		return (ENOMEM);
	pm->nhw = 1;
	if ((pm->hw = calloc(1, sizeof(*pm->hw))) == NULL) {
		free(pm);
		return (ENOMEM);
	}
	if ((o = vpmu__owner_find(vm, guest.pid)) == NULL) {
		if ((o = calloc(1, sizeof(*o))) == NULL) {
			free(pm->hw);
			free(pm);
			return (ENOMEM);
		}
		o->pid = guest.pid;
		o->cred = guest;
		o->next = vm->owners;
		vm->owners = o;
	}
	pm->id = VPMU_ID_MAKE(cpu, VPMU_MODE_SC, cls, row);
	pm->wrap_mask = c->width >= 64 ? ~0ull : (1ull << c->width) - 1;
	pm->mode = VPMU_MODE_SC;
	pm->cls = cls;
	pm->cpu = cpu;
	pm->row = row;
	pm->caps = c->caps;
	pm->state = VPMU_STATE_ALLOCATED;
	pm->owner = o;
	pm->owner_next = o->pmcs;
	o->pmcs = pm;
	vpmu__pmc_disp_mark(vm, row, VPMU_MODE_SC);
	vm->vcpu[cpu].sys[row] = pm;
	*pmp = pm;
	return (0);
}

static int
model_pmc_start(struct vpmu_vm *vm, struct vpmu_pmc *pm)
{
	return (vpmu__hw_activate(vm, pm, pm->cpu));	/* count.c arms its period */
}

/*
 * (Re)program a model PMC: stop it (its count is kept), take the new event,
 * and run it if asked.  A new event closes the old host counter, so the
 * source is asked again whether it can count it.
 */
int
vpmu__model_pmc_program(struct vpmu_vm *vm, struct vpmu_pmc *pm,
    const struct vpmu_event_spec *spec, bool run)
{
	if (pm->state == VPMU_STATE_RUNNING) {
		(void)vpmu__hw_deactivate(vm, pm, pm->cpu);
		pm->state = VPMU_STATE_STOPPED;
	}
	if (spec != NULL && memcmp(spec, &pm->spec, sizeof(*spec)) != 0) {
		vpmu__hw_close_all(vm, pm);
		pm->spec = *spec;
		pm->why[0] = '\0';
		pm->unsupported = spec->event != VPMU_EV_NONE &&
		    vpmu__pmc_supports(vm, spec, pm->why, sizeof(pm->why)) != 0;
	}
	if (!run || pm->spec.event == VPMU_EV_NONE)
		return (0);
	pm->state = VPMU_STATE_RUNNING;
	return (model_pmc_start(vm, pm));
}

/* What the guest reads; times: the PMC's whole enabled and running time. */
uint64_t
vpmu__model_pmc_value(struct vpmu_vm *vm, struct vpmu_pmc *pm, struct vpmu_count *times)
{
	if (times != NULL) {
		times->value = pm->base + vpmu__pmc_counted(vm, pm);
		times->time_enabled = pm->tot_enabled;
		times->time_running = pm->tot_running;
	}
	if (!pm->hw[0].counting && pm->t_running == pm->t_enabled)
		return (pm->base + pm->counted);	/* the common read: exact, idle */
	return (vpmu__pmc_estimate(vm, pm));
}

/* A guest's write to a counter, running or not, takes effect at once. */
void
vpmu__model_pmc_set(struct vpmu_vm *vm, struct vpmu_pmc *pm, uint64_t value)
{
	vpmu__pmc_set_base(vm, pm, value);	/* re-arms a counting PMC's period */
}
