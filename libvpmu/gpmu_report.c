/*
 * gpmu_report.c -- the guest-visible PMU's counter report
 * (vpmu_vcpu_get_counters: each counter's name, controls, event, value,
 * times and why it does not count), or the external hooks' (kvm mode);
 * and the getters that let a report read elsewhere (the KVM glue's kvm
 * mode) name events as the model's vendor does.
 */
#include <errno.h>
#include <stdio.h>
#include <string.h>

#include "gpmu.h"

bool
vpmu__gpmu_event_of(const struct vpmu_vm *vm, uint64_t sel, struct vpmu_event_spec *spec)
{
	const struct gpmu *g = vm->gpmu;

	return (g != NULL && g->vendor != NULL && g->vendor->event(sel, spec));
}

const char *
vpmu__gpmu_gp_name(const struct vpmu_vm *vm)
{
	const struct gpmu *g = vm->gpmu;

	return (g != NULL && g->vendor != NULL ? g->vendor->ranges[0].name : NULL);
}

static void
ctr_info(struct vpmu_vm *vm, struct gpmu_ctr *c, const char *name,
    struct vpmu_counter_info *ci)
{
	struct vpmu_count t;
	const char *ev;

	memset(ci, 0, sizeof(*ci));
	snprintf(ci->name, sizeof(ci->name), "%s", name);
	ci->control = GPMU_LOAD(c->ctl);
	ci->value = vpmu__model_pmc_value(vm, c->pm, &t) & c->mask;
	ci->raw = t.value & c->mask;
	ci->counted = c->pm->counted_past + vpmu__pmc_counted(vm, c->pm);
	ci->time_enabled = t.time_enabled;
	ci->time_running = t.time_running;
	ci->scaled = c->pm->t_running != 0 && c->pm->t_running < c->pm->t_enabled;
	ci->used = GPMU_LOAD(c->used);
	ci->enabled = c->running;
	if (c->shown.event == VPMU_EV_RAW)
		snprintf(ci->event, sizeof(ci->event), "raw 0x%llx",
		    (unsigned long long)c->shown.raw);
	else if (c->shown.event != VPMU_EV_NONE &&
	    (ev = vpmu_event_name(c->shown.event)) != NULL)
		snprintf(ci->event, sizeof(ci->event), "%s", ev);
	if (c->pm->unsupported) {
		ci->unsupported = 1;
		snprintf(ci->why, sizeof(ci->why), "%s", c->pm->why);
	} else if (c->filtered)
		snprintf(ci->why, sizeof(ci->why), "disallowed by the event filter");
}

int
vpmu_vcpu_get_counters(struct vpmu_vm *vm, unsigned cpu, struct vpmu_counter_info *out,
    unsigned *n)
{
	const struct vpmu__gpmu_ext *ext;
	const struct gpmu *g;
	struct gpmu_vcpu *v;
	char name[32];
	unsigned i, k = 0, need;

	if (vm == NULL || n == NULL || vm->gpmu == NULL || cpu >= vm->nvcpus)
		return (EINVAL);
	g = vm->gpmu;
	if ((ext = gpmu_ext(g)) != NULL)
		return (ext->counters(ext->arg, cpu, out, n));
	need = g->model.gp + g->model.fixed;
	if (*n < need || (need > 0 && out == NULL)) {
		*n = need;
		return (EINVAL);
	}
	vpmu__vm_lock(vm);
	v = &g->vcpu[cpu];
	for (i = 0; i < g->model.gp; i++) {
		snprintf(name, sizeof(name), "%s%u", g->vendor->ranges[0].name, i);
		ctr_info(vm, &v->gp[i], name, &out[k++]);
	}
	for (i = 0; i < g->model.fixed; i++) {
		snprintf(name, sizeof(name), "IA32_FIXED_CTR%u", i);
		ctr_info(vm, &v->fx[i], name, &out[k]);
		/*
		 * The field as the guest wrote it, as for an event select: the
		 * counter's own copy is taken only when it is programmed, at
		 * the next entry after an MSR exit.
		 */
		out[k++].control = (GPMU_LOAD(v->fixed_ctrl) >> (4 * i)) & 0xF;
	}
	vpmu__vm_unlock(vm);
	*n = k;
	return (0);
}
