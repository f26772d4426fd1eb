/*
 * count.c -- the host slots behind PMCs, and the per-vCPU multiplexing
 * scheduler that shares them out.
 *
 * A vCPU has `capacity` host slots (the source's limit, or the VM's cap;
 * 0 is unlimited).  The PMCs that want to count on it sit in act[], in
 * round-robin order.  When there are more of them than slots, every
 * mux_interval of the vCPU's run time the window of slot holders moves on
 * to the next PMCs in act[], so over time each gets its share.  PMCs of
 * one group (enabled together, by one GLOBAL_CTRL write) take their slots
 * together when they fit, so their counts cover the same instructions.
 *
 * Each PMC accumulates the run time it wanted to count (enabled) and the
 * part of it it held a slot (running), and the events it counted while
 * running.  A guest reads base + counted * enabled / running: perf's
 * estimate, computed in 128 bits, and exact whenever the PMC always ran.
 * A PMC that never ran reads its base, not a guess.
 *
 * A PMC whose event the source cannot count is "unsupported": it takes no
 * slot and stays at its value; it never gets invented counts.
 */
#include <errno.h>
#include <string.h>

#include "internal.h"

#define MUX_GROW	8

static struct vpmu_hw *
hw_of(struct vpmu_pmc *pm, unsigned cpu)
{
	unsigned idx = VPMU_MODE_IS_SYSTEM(pm->mode) ? 0 : cpu;

	VPMU_ASSERT(idx < pm->nhw);
	return (&pm->hw[idx]);
}

/* The vCPU a PMC's hw entry idx is on. */
static unsigned
cpu_of(const struct vpmu_pmc *pm, unsigned idx)
{
	return (VPMU_MODE_IS_SYSTEM(pm->mode) ? pm->cpu : idx);
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

/* ---- slots ------------------------------------------------------------ */

/*
 * Give pm a host slot on cpu.  A transient failure leaves it waiting and
 * is returned; a permanent one makes the PMC unsupported (not an error).
 */
static int
slot_give(struct vpmu_vm *vm, struct vpmu_pmc *pm, unsigned cpu)
{
	struct vpmu_hw *hw = hw_of(pm, cpu);
	int error;

	VPMU_ASSERT(hw->active && !hw->counting);
	if (pm->unsupported)
		return (0);
	if (hw->ctr == NULL) {
		error = vm->src->open(vm->src_state, cpu, vm->vcpu[cpu].tid,
		    &pm->spec, &hw->ctr);
		if (error != 0) {
			hw->ctr = NULL;
			if (transient(error))
				return (error);
			mark_unsupported(pm, "source open failed", error);
			return (0);
		}
	}
	if ((error = vm->src->read(vm->src_state, hw->ctr, &hw->base)) != 0 ||
	    (error = vm->src->enable(vm->src_state, hw->ctr)) != 0) {
		if (transient(error))
			return (error);
		mark_unsupported(pm, "source enable failed", error);
		return (0);
	}
	hw->counting = true;
	vm->vcpu[cpu].ncounting++;
	return (0);
}

/* Events counted since the slot was taken, without giving it up. */
static uint64_t
slot_peek(struct vpmu_vm *vm, struct vpmu_hw *hw)
{
	struct vpmu_count now;

	if (!hw->counting || vm->src->read(vm->src_state, hw->ctr, &now) != 0)
		return (0);
	return (now.value - hw->base.value);
}

/*
 * Take pm's slot on cpu back: its events go to the PMC and, for a process
 * PMC, to the process the vCPU runs (hwpmc's pp_pmcval).
 */
static uint64_t
slot_take(struct vpmu_vm *vm, struct vpmu_pmc *pm, unsigned cpu)
{
	struct vpmu_hw *hw = hw_of(pm, cpu);
	struct vpmu_vcpu *v = &vm->vcpu[cpu];
	struct vpmu_target *t;
	uint64_t delta;

	if (!hw->counting)
		return (0);
	delta = slot_peek(vm, hw);
	(void)vm->src->disable(vm->src_state, hw->ctr);
	hw->counting = false;
	v->ncounting--;
	pm->counted += delta;
	if (VPMU_MODE_IS_VIRTUAL(pm->mode) && v->cur != NULL && v->cur->slots != NULL &&
	    (t = v->cur->slots[pm->row]) != NULL && t->pmc == pm)
		t->value += delta;
	return (delta);
}

static bool
slot_free(const struct vpmu_vm *vm, unsigned cpu)
{
	return (vm->capacity == 0 || vm->vcpu[cpu].ncounting < vm->capacity);
}

/* ---- the demand list -------------------------------------------------- */

static int
act_add(struct vpmu_vcpu *v, struct vpmu_pmc *pm)
{
	struct vpmu_pmc **grown;

	if (v->nact == v->actcap) {
		grown = realloc(v->act, (v->actcap + MUX_GROW) * sizeof(*grown));
		if (grown == NULL)
			return (ENOMEM);
		v->act = grown;
		v->actcap += MUX_GROW;
	}
	v->act[v->nact++] = pm;
	return (0);
}

static void
act_remove(struct vpmu_vcpu *v, struct vpmu_pmc *pm)
{
	unsigned i;

	for (i = 0; i < v->nact; i++)
		if (v->act[i] == pm)
			break;
	VPMU_ASSERT(i < v->nact);
	memmove(&v->act[i], &v->act[i + 1], (v->nact - i - 1) * sizeof(v->act[0]));
	v->nact--;
	if (v->rr > i)
		v->rr--;
	if (v->rr >= v->nact)
		v->rr = 0;
}

/* The next PMCs waiting in round-robin order take the free slots. */
static void
fill(struct vpmu_vm *vm, unsigned cpu)
{
	struct vpmu_vcpu *v = &vm->vcpu[cpu];
	unsigned k, i;

	for (k = 0; k < v->nact && slot_free(vm, cpu); k++) {
		i = (v->rr + k) % v->nact;
		if (!hw_of(v->act[i], cpu)->counting)
			(void)slot_give(vm, v->act[i], cpu);
	}
}

/*
 * A new window from act[start]: every slot holder gives its slot back, then
 * the units from start take the slots, a group as a unit when it fits in
 * what is left (a group larger than all the slots is taken in pieces); a
 * unit that does not fit waits to be first next time.
 */
static void
window(struct vpmu_vm *vm, unsigned cpu, unsigned start)
{
	struct vpmu_vcpu *v = &vm->vcpu[cpu];
	unsigned i, k, unit, left = vm->capacity, taken = 0;
	struct vpmu_pmc *pm;

	for (i = 0; i < v->nact; i++)
		(void)slot_take(vm, v->act[i], cpu);
	i = start;
	while (taken < v->nact && left > 0) {
		pm = v->act[i];
		for (unit = 1; pm->group != 0 && taken + unit < v->nact &&
		    v->act[(i + unit) % v->nact]->group == pm->group; unit++)
			;
		if (unit > left && left < vm->capacity)
			break;
		for (k = 0; k < unit && left > 0; k++, taken++) {
			(void)slot_give(vm, v->act[i], cpu);
			if (hw_of(v->act[i], cpu)->counting)
				left--;
			i = (i + 1) % v->nact;
		}
	}
	v->rr = i;
}

/* Every mux interval: the window moves on past its last slot holder. */
static void
rotate(struct vpmu_vm *vm, unsigned cpu)
{
	struct vpmu_vcpu *v = &vm->vcpu[cpu];
	unsigned k, i, start = v->rr;

	for (k = 0; k < v->nact; k++) {
		i = (v->rr + k) % v->nact;
		if (hw_of(v->act[i], cpu)->counting)
			start = (i + 1) % v->nact;
	}
	window(vm, cpu, start);
	v->rotations++;
}

/* ---- interface ---------------------------------------------------------- */

int
vpmu__hw_activate(struct vpmu_vm *vm, struct vpmu_pmc *pm, unsigned cpu)
{
	struct vpmu_hw *hw = hw_of(pm, cpu);
	struct vpmu_vcpu *v = &vm->vcpu[cpu];
	int error;

	VPMU_ASSERT(!hw->active);
	if ((error = act_add(v, pm)) != 0)
		return (error);
	hw->active = true;
	hw->counting = false;
	if (slot_free(vm, cpu) && (error = slot_give(vm, pm, cpu)) != 0) {
		act_remove(v, pm);
		hw->active = false;
		return (error);
	}
	return (0);
}

uint64_t
vpmu__hw_deactivate(struct vpmu_vm *vm, struct vpmu_pmc *pm, unsigned cpu)
{
	struct vpmu_hw *hw = hw_of(pm, cpu);
	uint64_t delta;
	bool freed = hw->counting;

	VPMU_ASSERT(hw->active);
	delta = slot_take(vm, pm, cpu);
	hw->active = false;
	act_remove(&vm->vcpu[cpu], pm);
	if (freed)
		fill(vm, cpu);			/* a waiting PMC takes the slot */
	return (delta);
}

void
vpmu__hw_close_all(struct vpmu_vm *vm, struct vpmu_pmc *pm)
{
	unsigned i;

	for (i = 0; i < pm->nhw; i++) {
		if (pm->hw[i].active)
			(void)vpmu__hw_deactivate(vm, pm, cpu_of(pm, i));
		if (pm->hw[i].ctr != NULL)
			vm->src->close(vm->src_state, pm->hw[i].ctr);
		pm->hw[i].ctr = NULL;
	}
}

void
vpmu__vcpu_advance(struct vpmu_vm *vm, unsigned cpu, uint64_t ns)
{
	struct vpmu_vcpu *v = &vm->vcpu[cpu];
	struct vpmu_pmc *pm;
	unsigned i;

	v->now += ns;
	for (i = 0; i < v->nact; i++) {
		pm = v->act[i];
		pm->t_enabled += ns;
		pm->tot_enabled += ns;
		if (hw_of(pm, cpu)->counting) {
			pm->t_running += ns;
			pm->tot_running += ns;
		}
	}
	if (v->ncounting == v->nact || vm->capacity == 0) {
		v->since_rotate = 0;		/* everybody runs: nothing to share */
		return;
	}
	v->since_rotate += ns;
	if (v->since_rotate >= vm->mux_interval) {
		v->since_rotate = 0;
		rotate(vm, cpu);
	}
}

uint64_t
vpmu__pmc_counted(struct vpmu_vm *vm, struct vpmu_pmc *pm)
{
	uint64_t n = pm->counted;
	unsigned i;

	for (i = 0; i < pm->nhw; i++)
		n += slot_peek(vm, &pm->hw[i]);
	return (n);
}

uint64_t
vpmu__pmc_estimate(struct vpmu_vm *vm, struct vpmu_pmc *pm)
{
	uint64_t n = vpmu__pmc_counted(vm, pm), est;

	if (pm->t_running == 0 || pm->t_running >= pm->t_enabled)
		est = n;			/* never ran, or always ran: no guess */
	else
		est = (uint64_t)((unsigned __int128)n * pm->t_enabled / pm->t_running);
	est += pm->base;
	if (est < pm->shown)
		est = pm->shown;		/* an estimate never goes back */
	pm->shown = est;
	return (est);
}

void
vpmu__pmc_set_base(struct vpmu_vm *vm, struct vpmu_pmc *pm, uint64_t v)
{
	unsigned i;

	/* What is counting now belongs to the old base: restart the slots. */
	for (i = 0; i < pm->nhw; i++)
		if (pm->hw[i].counting) {
			(void)slot_take(vm, pm, cpu_of(pm, i));
			(void)slot_give(vm, pm, cpu_of(pm, i));
		}
	pm->base = v;
	pm->counted = 0;
	pm->t_enabled = 0;
	pm->t_running = 0;
	pm->shown = 0;
}

/*
 * The PMCs of group were just enabled together: if some of them wait, the
 * window restarts at the group so that they count the same instructions.
 */
void
vpmu__vcpu_regroup(struct vpmu_vm *vm, unsigned cpu, uint32_t group)
{
	struct vpmu_vcpu *v = &vm->vcpu[cpu];
	unsigned i;
	bool split = false;

	if (group == 0 || vm->capacity == 0)
		return;
	for (i = 0; i < v->nact; i++)
		if (v->act[i]->group == group && !hw_of(v->act[i], cpu)->counting)
			split = true;
	for (i = 0; split && i < v->nact; i++)
		if (v->act[i]->group == group) {
			window(vm, cpu, i);
			v->since_rotate = 0;
			return;
		}
}

bool
vpmu__pmc_waiting(const struct vpmu_pmc *pm)
{
	unsigned i;

	for (i = 0; i < pm->nhw; i++)
		if (pm->hw[i].active && !pm->hw[i].counting)
			return (true);
	return (false);
}
