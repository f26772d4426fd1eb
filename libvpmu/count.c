/*
 * count.c -- the host slots behind a PMC: counters opened on the VM's
 * source, activated while the PMC counts on a vCPU, and the deltas they
 * contribute.  A PMC whose event the source cannot count is "unsupported":
 * it stays at its value and never gets invented counts.
 */
#include <errno.h>
#include <string.h>

#include "internal.h"

static struct vpmu_hw *
hw_of(struct vpmu_pmc *pm, unsigned cpu)
{
	unsigned idx = VPMU_MODE_IS_SYSTEM(pm->mode) ? 0 : cpu;

	VPMU_ASSERT(idx < pm->nhw);
	return (&pm->hw[idx]);
}

static void
mark_unsupported(struct vpmu_pmc *pm, const char *what, int error)
{
	pm->unsupported = true;
	snprintf(pm->why, sizeof(pm->why), "%s: %s", what, vpmu_strerror(error));
}

/*
 * A failure the host may not repeat (memory, descriptors) is the caller's
 * to report; any other means the source cannot count this event at all.
 */
static bool
transient(int error)
{
	return (error == ENOMEM || error == EMFILE || error == ENFILE ||
	    error == EAGAIN || error == EBUSY || error == EINTR);
}

/*
 * Start counting pm on vCPU cpu.  A transient failure leaves the slot
 * inactive and is returned; a permanent one marks the PMC unsupported
 * (it then counts nothing, which is the truth) and is not an error.
 */
int
vpmu__hw_activate(struct vpmu_vm *vm, struct vpmu_pmc *pm, unsigned cpu)
{
	struct vpmu_hw *hw = hw_of(pm, cpu);
	int error = 0;

	VPMU_ASSERT(!hw->active);
	memset(&hw->base, 0, sizeof(hw->base));
	hw->counting = false;
	/* No host counter free: the PMC is on the vCPU but does not run. */
	pm->starved = vm->capacity != 0 && vm->vcpu[cpu].ncounting >= vm->capacity;
	if (pm->starved) {
		hw->active = true;
		return (0);
	}
	if (!pm->unsupported && hw->ctr == NULL) {
		error = vm->src->open(vm->src_state, cpu, vm->vcpu[cpu].tid,
		    &pm->spec, &hw->ctr);
		if (error != 0) {
			hw->ctr = NULL;
			if (transient(error))
				return (error);
			mark_unsupported(pm, "source open failed", error);
		}
	}
	if (!pm->unsupported &&
	    ((error = vm->src->read(vm->src_state, hw->ctr, &hw->base)) != 0 ||
	    (error = vm->src->enable(vm->src_state, hw->ctr)) != 0)) {
		if (transient(error))
			return (error);
		mark_unsupported(pm, "source enable failed", error);
	} else if (!pm->unsupported) {
		hw->counting = true;
		vm->vcpu[cpu].ncounting++;
	}
	hw->active = true;
	return (0);
}

/* Counts and times since activation, without stopping. */
uint64_t
vpmu__hw_peek(struct vpmu_vm *vm, struct vpmu_pmc *pm, unsigned cpu,
    struct vpmu_count *times)
{
	struct vpmu_hw *hw = hw_of(pm, cpu);
	struct vpmu_count now;

	if (times != NULL)
		memset(times, 0, sizeof(*times));
	if (!hw->counting)
		return (0);
	if (vm->src->read(vm->src_state, hw->ctr, &now) != 0)
		return (0);
	if (times != NULL) {
		times->time_enabled = now.time_enabled - hw->base.time_enabled;
		times->time_running = now.time_running - hw->base.time_running;
	}
	return (now.value - hw->base.value);
}

/* Stop counting pm on vCPU cpu; returns the events seen since activation. */
uint64_t
vpmu__hw_deactivate(struct vpmu_vm *vm, struct vpmu_pmc *pm, unsigned cpu)
{
	struct vpmu_hw *hw = hw_of(pm, cpu);
	struct vpmu_count t;
	uint64_t delta;

	VPMU_ASSERT(hw->active);
	delta = vpmu__hw_peek(vm, pm, cpu, &t);
	pm->time_enabled += t.time_enabled;
	pm->time_running += t.time_running;
	if (hw->counting) {
		(void)vm->src->disable(vm->src_state, hw->ctr);
		vm->vcpu[VPMU_MODE_IS_SYSTEM(pm->mode) ? pm->cpu : cpu].ncounting--;
	}
	hw->active = false;
	hw->counting = false;
	return (delta);
}

void
vpmu__hw_close_all(struct vpmu_vm *vm, struct vpmu_pmc *pm)
{
	unsigned i;

	for (i = 0; i < pm->nhw; i++) {
		if (pm->hw[i].ctr == NULL)
			continue;
		if (pm->hw[i].counting) {
			(void)vm->src->disable(vm->src_state, pm->hw[i].ctr);
			vm->vcpu[VPMU_MODE_IS_SYSTEM(pm->mode) ? pm->cpu : i].ncounting--;
		}
		vm->src->close(vm->src_state, pm->hw[i].ctr);
		pm->hw[i].ctr = NULL;
		pm->hw[i].active = false;
		pm->hw[i].counting = false;
	}
}
