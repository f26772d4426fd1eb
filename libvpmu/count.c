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
 * Each PMC accumulates the time it wanted to count (enabled) and the part
 * of it it held a slot (running), and the events it counted while running.
 * Two clocks per vCPU, neither of them wall time: rotations follow the run
 * clock, the CPU time of the vCPU's thread in its runs; the times follow
 * the source's own clock where it has one (the exact source: the cycles
 * it modelled, which only the guest's progress moves), else the run clock.
 * A guest reads base + counted * enabled / running: perf's estimate,
 * computed in 128 bits, and exact whenever the PMC always ran.
 * A PMC that never ran reads its base, not a guess.
 *
 * A PMC whose event the source cannot count is "unsupported": it takes no
 * slot and stays at its value; it never gets invented counts.
 *
 * Time events (task-clock, cpu-clock) are the core's own, whatever the
 * source: a PMC on one counts the run clock, the vCPU thread's CPU time in
 * the guest's runs, in ns, added at each exit.  It needs no host slot and
 * always runs.  A sampling one has the VMM end a run when its next sample
 * is due (vpmu_entry.time_ns): a sample at the guest's RIP every period of
 * its run time, with no host PMU and without following the guest.
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

bool
vpmu__event_timed(const struct vpmu_event_spec *spec)
{
	return (vpmu_event_is_timed(spec->event) != 0);
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

/* The answer vm keeps for spec, or NULL.  VM lock held. */
static struct vpmu__answer *
answer_of(struct vpmu_vm *vm, const struct vpmu_event_spec *spec)
{
	struct vpmu__answer *a;
	unsigned i;

	for (i = 0; i < vm->nanswers; i++) {
		a = &vm->answers[i];
		if (a->spec.event != VPMU_EV_NONE && a->spec.event == spec->event &&
		    a->spec.flags == spec->flags &&
		    a->spec.cmask == spec->cmask && a->spec.raw == spec->raw)
			return (a);
	}
	return (NULL);
}

/*
 * The source asked (one asker at a time, as when the VM lock kept them
 * apart: a source's state need not be safe for two), and its answer kept,
 * in place of the oldest when the table is full.  VM lock NOT held.
 */
static void
answer_ask(struct vpmu_vm *vm, const struct vpmu_event_spec *spec)
{
	struct vpmu__answer a, *slot;

	VPMU_ASSERT(!vpmu__vm_held(vm));
	memset(&a, 0, sizeof(a));
	a.spec = *spec;
	pthread_mutex_lock(&vm->ask_mtx);
	a.error = vm->src->supports(vm->src_state, spec, a.why, sizeof(a.why));
	pthread_mutex_unlock(&vm->ask_mtx);
	a.once = transient(a.error);	/* a shortage: for the next look only */
	vpmu__vm_lock(vm);
	if ((slot = answer_of(vm, spec)) == NULL) {
		if (vm->nanswers < VPMU__NANSWERS)
			slot = &vm->answers[vm->nanswers++];
		else {
			slot = &vm->answers[vm->answer_next];
			vm->answer_next = (vm->answer_next + 1) % VPMU__NANSWERS;
		}
	}
	*slot = a;
	vpmu__vm_release(vm);
}

void
vpmu__pmc_ask(struct vpmu_vm *vm, const struct vpmu_event_spec *spec)
{
	bool known;

	if (spec->event == VPMU_EV_NONE || vpmu__event_timed(spec))
		return;				/* the core's to answer */
	vpmu__vm_lock(vm);
	known = answer_of(vm, spec) != NULL;
	vpmu__vm_release(vm);
	if (!known)
		answer_ask(vm, spec);
}

/* The source's answer for spec, the VM lock held. */
static int
answer_kept(struct vpmu_vm *vm, const struct vpmu_event_spec *spec, char *why,
    size_t whylen)
{
	struct vpmu__answer *a;
	int error;

	/* Not asked before the lock (the table turned over since): asked now. */
	if ((a = answer_of(vm, spec)) == NULL)
		return (vm->src->supports(vm->src_state, spec, why, whylen));
	if (why != NULL && whylen > 0)
		snprintf(why, whylen, "%s", a->why);
	error = a->error;
	if (a->once)
		a->spec.event = VPMU_EV_NONE;	/* matches no event asked about */
	return (error);
}

int
vpmu__pmc_supports(struct vpmu_vm *vm, const struct vpmu_event_spec *spec, char *why,
    size_t whylen)
{
	uint32_t pl = spec->flags & (VPMU_EVF_USR | VPMU_EVF_OS);

	if (!vpmu__event_timed(spec))
		return (answer_kept(vm, spec, why, whylen));
	/* The core counts it (the note at the top): all of the run's time. */
	if ((pl != 0 && pl != (VPMU_EVF_USR | VPMU_EVF_OS)) ||
	    (spec->flags & (VPMU_EVF_EDGE | VPMU_EVF_INV)) || spec->cmask != 0) {
		if (why != NULL)
			snprintf(why, whylen, "%s is the vCPU's run time: it cannot be "
			    "split by privilege level, nor take an edge, an inversion "
			    "or a counter mask", vpmu_event_name(spec->event));
		return (EOPNOTSUPP);
	}
	return (0);
}

int
vpmu__pmc_supports_unlocked(struct vpmu_vm *vm, const struct vpmu_event_spec *spec,
    char *why, size_t whylen)
{
	int error;

	vpmu__pmc_ask(vm, spec);
	vpmu__vm_lock(vm);
	error = vpmu__pmc_supports(vm, spec, why, whylen);
	vpmu__vm_release(vm);
	return (error);
}

/* pm counts in a host slot: neither unsupported nor a time event. */
static bool
slotted(const struct vpmu_pmc *pm)
{
	return (!pm->unsupported && !vpmu__event_timed(&pm->spec));
}

static void
mark_unsupported(struct vpmu_pmc *pm, const char *what, int error)
{
	pm->unsupported = true;
	snprintf(pm->why, sizeof(pm->why), "%s: %s", what, vpmu_strerror(error));
}

/* ---- slots ------------------------------------------------------------ */

uint64_t vpmu__pmc_estimate(struct vpmu_vm *vm, struct vpmu_pmc *pm);

/*
 * The events pm has left before the core must see the vCPU (0: none),
 * for a source that can stop there (set_period: perf on a host PMU
 * interrupts, the exact source ends its blocks).  A guest-visible counter:
 * until the guest counter wraps, (-value) & mask -- scaled back by
 * running/enabled when the value is an estimate -- so its overflow comes
 * when the guest's would.  A sampling PMC: until its next sample, the
 * reload count less what it counted since the last one (1 when a sample
 * is already due: it is taken at the next exit).
 */
static uint64_t
period_left(struct vpmu_vm *vm, struct vpmu_pmc *pm)
{
	uint64_t left;

	if (VPMU_MODE_IS_SAMPLING(pm->mode)) {
		left = vpmu__pmc_counted(vm, pm) - pm->sample_mark;
		return (left < pm->reload ? pm->reload - left : 1);
	}
	if (pm->wrap_mask == 0)
		return (0);
	left = (0 - vpmu__pmc_estimate(vm, pm)) & pm->wrap_mask;
	if (left == 0)
		left = pm->wrap_mask == ~0ull ? ~0ull : pm->wrap_mask + 1;
	if (pm->t_running != 0 && pm->t_running < pm->t_enabled)
		left = (uint64_t)((unsigned __int128)left * pm->t_running / pm->t_enabled) + 1;
	return (left);
}

/*
 * Tell the source of hw the events pm has left: each time the PMC takes
 * a slot (started, loaded, a new multiplexing window), is written, or
 * takes a sample.
 */
static void
slot_arm(struct vpmu_vm *vm, struct vpmu_pmc *pm, struct vpmu_hw *hw)
{
	uint64_t left;

	if (vm->src->set_period == NULL || hw->hc == NULL ||
	    (left = period_left(vm, pm)) == 0)
		return;
	(void)vm->src->set_period(vm->src_state, hw->hc->ctr, left);
}

static void
set_nopening(struct vpmu_vm *vm, unsigned n)
{
	__atomic_store_n(&vm->nopening, n, __ATOMIC_RELAXED);
}

/* hw (pm's hw idx) waits for its counter, on vm->opening; or no longer. */
static void
opening_set(struct vpmu_vm *vm, struct vpmu_pmc *pm, unsigned idx, bool on)
{
	struct vpmu_hw *hw = &pm->hw[idx];

	if (on) {
		hw->opm = pm;
		hw->oidx = idx;
		if ((hw->onext = vm->opening) != NULL)
			hw->onext->oprev = &hw->onext;
		hw->oprev = &vm->opening;
		vm->opening = hw;
	} else if ((*hw->oprev = hw->onext) != NULL)
		hw->onext->oprev = hw->oprev;
	hw->opening = on;
	set_nopening(vm, on ? vm->nopening + 1 : vm->nopening - 1);
}

/* The slot of hw given back: it counted nothing, or its counter is not open. */
static void
slot_drop(struct vpmu_vm *vm, struct vpmu_hw *hw, unsigned cpu)
{
	if (hw->opening)
		opening_set(vm, hw->opm, hw->oidx, false);
	hw->counting = false;
	vm->vcpu[cpu].ncounting--;
}

/*
 * The slot's counter counts from now: its reading is the slot's base.  A
 * transient failure gives the slot back and is returned; a permanent one
 * makes the PMC unsupported (not an error).
 */
static int
slot_start(struct vpmu_vm *vm, struct vpmu_pmc *pm, unsigned cpu, struct vpmu_hw *hw)
{
	int error;

	if ((error = vm->src->read(vm->src_state, hw->hc->ctr, &hw->base)) != 0 ||
	    (error = vm->src->enable(vm->src_state, hw->hc->ctr)) != 0) {
		slot_drop(vm, hw, cpu);
		if (transient(error))
			return (error);
		mark_unsupported(pm, "source enable failed", error);
		return (0);
	}
	hw->peeked = 0;
	slot_arm(vm, pm, hw);
	return (0);
}

/*
 * Give pm a host slot on cpu.  A transient failure leaves it waiting and
 * is returned; a permanent one makes the PMC unsupported (not an error).
 * A slot whose counter is not open yet holds it "opening": the source's
 * open() is a system call for perf, so it runs at the lock's release
 * (vpmu__hc_open()), and the slot counts from there.
 */
static int
slot_give(struct vpmu_vm *vm, struct vpmu_pmc *pm, unsigned cpu)
{
	struct vpmu_hw *hw = hw_of(pm, cpu);

	VPMU_ASSERT(hw->active && !hw->counting);
	if (!slotted(pm))
		return (0);
	hw->counting = true;
	vm->vcpu[cpu].ncounting++;
	if (hw->hc != NULL)
		return (slot_start(vm, pm, cpu, hw));
	hw->peeked = 0;
	opening_set(vm, pm, (unsigned)(hw - pm->hw), true);
	return (0);
}

/*
 * Events counted since the slot was taken, without giving it up.  A source
 * whose counter ran for less of that time than it was enabled (the host
 * multiplexed it: perf) counted part of it: its events are scaled by the
 * source's own enabled / running, as perf's readers do.  Never less than
 * an earlier look at the same slot, so counts only go forward.
 */
static uint64_t
slot_peek(struct vpmu_vm *vm, struct vpmu_hw *hw)
{
	struct vpmu_count now;
	uint64_t n, en, run;

	if (!hw->counting || hw->opening ||
	    vm->src->read(vm->src_state, hw->hc->ctr, &now) != 0)
		return (hw->counting ? hw->peeked : 0);
	n = now.value - hw->base.value;
	en = now.time_enabled - hw->base.time_enabled;
	run = now.time_running - hw->base.time_running;
	if (run != 0 && run < en)
		n = (uint64_t)((unsigned __int128)n * en / run);
	if (n > hw->peeked)
		hw->peeked = n;
	return (hw->peeked);
}

/*
 * Events pm counted on cpu go to the PMC and, for a process PMC, to the
 * process the vCPU runs (hwpmc's pp_pmcval).
 */
static void
credit(struct vpmu_vm *vm, struct vpmu_pmc *pm, unsigned cpu, uint64_t delta)
{
	struct vpmu_vcpu *v = &vm->vcpu[cpu];
	struct vpmu_target *t;

	pm->counted += delta;
	hw_of(pm, cpu)->loaded += delta;
	if (VPMU_MODE_IS_VIRTUAL(pm->mode) && v->cur != NULL && v->cur->slots != NULL &&
	    (t = v->cur->slots[pm->row]) != NULL && t->pmc == pm)
		t->value += delta;
}

/* Take pm's slot on cpu back: its events are credited. */
static uint64_t
slot_take(struct vpmu_vm *vm, struct vpmu_pmc *pm, unsigned cpu)
{
	struct vpmu_hw *hw = hw_of(pm, cpu);
	uint64_t delta;

	if (!hw->counting)
		return (0);
	delta = slot_peek(vm, hw);
	if (!hw->opening)
		(void)vm->src->disable(vm->src_state, hw->hc->ctr);
	slot_drop(vm, hw, cpu);
	credit(vm, pm, cpu, delta);
	return (delta);
}

static bool
slot_free(const struct vpmu_vm *vm, unsigned cpu)
{
	return (vm->capacity == 0 || vm->vcpu[cpu].ncounting < vm->capacity);
}

/* ---- the demand list -------------------------------------------------- */

/*
 * nact and dirty are the two fields of the scheduler that a vCPU's thread
 * loads without the VM lock, as hints before an entry and after an exit
 * (gpmu.h's vpmu__vcpu_enter_quiet(), vcpu.c).  Any thread may change them
 * (a PMC started for another vCPU), always under the VM lock: each store
 * is atomic (relaxed; the lock orders what it guards), so that no plain
 * write races those loads.  Reads under the lock stay plain.
 */
static void
set_nact(struct vpmu_vcpu *v, unsigned n)
{
	__atomic_store_n(&v->nact, n, __ATOMIC_RELAXED);
}

static void
set_dirty(struct vpmu_vcpu *v, bool dirty)
{
	__atomic_store_n(&v->dirty, dirty, __ATOMIC_RELAXED);
}

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
	v->act[v->nact] = pm;
	set_nact(v, v->nact + 1);
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
	set_nact(v, v->nact - 1);
}

/*
 * The length of the unit starting at act[i]: its group's members from i,
 * or 1 -- for a PMC alone, and for every member of a group larger than all
 * the slots, which is scheduled member by member.
 */
static unsigned
unit_len(const struct vpmu_vm *vm, const struct vpmu_vcpu *v, unsigned i)
{
	uint32_t g = v->act[i]->group;
	unsigned first = i, n = 1;

	if (g == 0)
		return (1);
	while (first > 0 && v->act[first - 1]->group == g)
		first--;
	while (first + n < v->nact && v->act[first + n]->group == g)
		n++;
	return (n > vm->capacity ? 1 : first + n - i);
}

/* a has been served less than b: a smaller share of its enabled time ran. */
static bool
less_served(const struct vpmu_pmc *a, const struct vpmu_pmc *b)
{
	if (a->tot_enabled == 0 || b->tot_enabled == 0)
		return (a->tot_enabled == 0 && b->tot_enabled != 0);	/* new first */
	return ((unsigned __int128)a->tot_running * b->tot_enabled <
	    (unsigned __int128)b->tot_running * a->tot_enabled);
}

/*
 * A new window: every slot holder gives its slot back, then the units
 * take the slots least served first -- the smallest share of their enabled
 * time spent running, over their whole life, so that a guest that disables
 * and re-enables its counters every interval still sees each of them run
 * in turn.  Equally served units go in act[] order, which makes the
 * rotation round-robin.  A group takes its slots together when it fits in
 * what is left; one larger than all the slots is taken in pieces; one that
 * does not fit now waits, being the least served next time.
 */
static void
window(struct vpmu_vm *vm, unsigned cpu)
{
	struct vpmu_vcpu *v = &vm->vcpu[cpu];
	bool placed[VPMU_MAX_ROWS + 1] = { false }, chosen[VPMU_MAX_ROWS + 1] = { false };
	/* Unlimited capacity (a slot given back by a failed open): every unit. */
	unsigned i, k, n, best, left = vm->capacity != 0 ? vm->capacity : v->nact;

	VPMU_ASSERT(v->nact <= VPMU_MAX_ROWS);
	while (left > 0) {
		best = v->nact;
		for (i = 0; i < v->nact; i += unit_len(vm, v, i))
			if (!placed[i] && slotted(v->act[i]) &&
			    (best == v->nact || less_served(v->act[i], v->act[best])))
				best = i;
		if (best == v->nact)
			break;
		placed[best] = true;
		n = unit_len(vm, v, best);
		if (n > left)
			continue;		/* fits a later window whole */
		for (k = 0; k < n; k++)
			if (slotted(v->act[best + k])) {
				chosen[best + k] = true;
				left--;
			}
	}
	/* Holders that stay keep their counters: no needless disable/enable. */
	for (i = 0; i < v->nact; i++)
		if (!chosen[i])
			(void)slot_take(vm, v->act[i], cpu);
	for (i = 0; i < v->nact; i++)
		if (chosen[i] && !hw_of(v->act[i], cpu)->counting)
			(void)slot_give(vm, v->act[i], cpu);
	set_dirty(v, false);
}

/*
 * Some PMC that could count waits for a slot (with slots free only when
 * its group does not fit in them).
 */
static bool
waiting(struct vpmu_vm *vm, unsigned cpu)
{
	struct vpmu_vcpu *v = &vm->vcpu[cpu];
	unsigned i;

	if (vm->capacity == 0 || v->ncounting == v->nact)
		return (false);
	for (i = 0; i < v->nact; i++)
		if (slotted(v->act[i]) && !hw_of(v->act[i], cpu)->counting)
			return (true);
	return (false);
}

/* ---- host counters: opened and closed without the VM lock -------------- */

/*
 * The source's open() and close() are system calls for perf (and
 * perf_event_open is a slow one), so they never run under the VM lock.
 * A slot given under the lock whose counter is not open is "opening"
 * (slot_give); the release of the lock opens what such slots wait for in
 * batches, the lock dropped, and gives each to a slot that still waits
 * for a counter of that vCPU, thread and event (vpmu__hc_open).  A closed
 * counter goes on vm->closing, which the release closes after it gave
 * the lock back.
 */
#define OPEN_BATCH	16

struct hc_req {
	unsigned cpu;
	pid_t tid;
	struct vpmu_event_spec spec;
	struct vpmu_hctr *hc;		/* opened, or NULL: error */
	int error;
};

static void
hc_closing(struct vpmu_vm *vm, struct vpmu_hctr *hc)
{
	if (hc == NULL)
		return;
	hc->next = vm->closing;
	vm->closing = hc;
	vm->after |= VPMU__AFTER_CLOSE;
}

void
vpmu__hc_close_list(struct vpmu_vm *vm, struct vpmu_hctr *list)
{
	struct vpmu_hctr *hc;

	VPMU_ASSERT(list == NULL || !vpmu__vm_held(vm));
	while ((hc = list) != NULL) {
		list = hc->next;
		vm->src->close(vm->src_state, hc->ctr);
		free(hc);
	}
}

/* Without the lock: r's counter, in a holder of the core's. */
static void
hc_req_open(struct vpmu_vm *vm, struct hc_req *r)
{
	void *ctr;

	VPMU_ASSERT(!vpmu__vm_held(vm));
	r->hc = NULL;
	if ((r->error = vm->src->open(vm->src_state, r->cpu, r->tid, &r->spec, &ctr)) != 0)
		return;
	if ((r->hc = malloc(sizeof(*r->hc))) == NULL) {
		vm->src->close(vm->src_state, ctr);
		r->error = ENOMEM;
		return;
	}
	r->hc->ctr = ctr;
	r->hc->next = NULL;
}

/*
 * Under the lock again: r's counter to a slot that still waits for one of
 * its vCPU, thread and event (else it is closed), or r's error to it.
 * The transient error of a slot given back, else 0.
 */
static int
hc_req_give(struct vpmu_vm *vm, struct hc_req *r)
{
	struct vpmu_pmc *pm;
	struct vpmu_hw *hw;
	unsigned cpu;

	for (hw = vm->opening; hw != NULL; hw = hw->onext) {
		pm = hw->opm;
		cpu = cpu_of(pm, hw->oidx);
		if (cpu != r->cpu || vm->vcpu[cpu].tid != r->tid ||
		    memcmp(&pm->spec, &r->spec, sizeof(r->spec)) != 0)
			continue;
		if (r->error != 0) {
			slot_drop(vm, hw, cpu);
			if (vm->capacity != 0 || transient(r->error))
				set_dirty(&vm->vcpu[cpu], true);	/* asks again */
			if (transient(r->error))
				return (r->error);
			mark_unsupported(pm, "source open failed", r->error);
			return (0);
		}
		hw->hc = r->hc;
		r->hc = NULL;
		opening_set(vm, pm, hw->oidx, false);
		return (slot_start(vm, pm, cpu, hw));
	}
	hc_closing(vm, r->hc);			/* no slot waits for it now */
	r->hc = NULL;
	return (0);
}

int
vpmu__hc_open(struct vpmu_vm *vm)
{
	struct hc_req req[OPEN_BATCH];
	struct vpmu_hw *hw;
	unsigned i, n;
	int error = 0, e;

	while (vm->nopening != 0) {
		for (n = 0, hw = vm->opening; n < OPEN_BATCH && hw != NULL; n++, hw = hw->onext) {
			req[n].cpu = cpu_of(hw->opm, hw->oidx);
			req[n].tid = vm->vcpu[req[n].cpu].tid;
			req[n].spec = hw->opm->spec;
		}
		vpmu__vm_release(vm);
		for (i = 0; i < n; i++)
			hc_req_open(vm, &req[i]);
		vpmu__vm_lock(vm);
		for (i = 0; i < n; i++)
			if ((e = hc_req_give(vm, &req[i])) != 0 && error == 0)
				error = e;
	}
	return (error);
}

/* ---- interface ---------------------------------------------------------- */

bool
vpmu__vcpu_run_timed(struct vpmu_vm *vm, unsigned cpu)
{
	struct vpmu_vcpu *v = &vm->vcpu[cpu];
	unsigned i;

	for (i = 0; i < v->nact; i++)
		if (vpmu__event_timed(&v->act[i]->spec))
			return (true);
	return (waiting(vm, cpu));
}

int
vpmu__hw_activate(struct vpmu_vm *vm, struct vpmu_pmc *pm, unsigned cpu)
{
	struct vpmu_hw *hw = hw_of(pm, cpu);
	struct vpmu_vcpu *v = &vm->vcpu[cpu];
	int error;

	VPMU_ASSERT(!hw->active);
	/* The clock's progress counts for PMCs from now (vpmu__vcpu_clock). */
	if (v->nact == 0 && vm->src->clock != NULL)
		v->clock_mark = vm->src->clock(vm->src_state, cpu);
	if ((error = act_add(v, pm)) != 0)
		return (error);
	hw->active = true;
	hw->counting = false;
	hw->loaded = 0;
	if (slot_free(vm, cpu) && (error = slot_give(vm, pm, cpu)) != 0) {
		act_remove(v, pm);
		hw->active = false;
		return (error);
	}
	/* Who runs is decided again before the vCPU runs on (vpmu__vcpu_prepare). */
	if (waiting(vm, cpu))
		set_dirty(v, true);
	if (vpmu__event_timed(&pm->spec))
		vpmu__vcpu_time_due(vm, cpu);
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
	if (vpmu__event_timed(&pm->spec))
		vpmu__vcpu_time_due(vm, cpu);
	if (freed && vm->capacity != 0 && vm->vcpu[cpu].nact > vm->vcpu[cpu].ncounting)
		set_dirty(&vm->vcpu[cpu], true);	/* a waiting PMC takes the slot */
	return (delta);
}

void
vpmu__hw_close_all(struct vpmu_vm *vm, struct vpmu_pmc *pm)
{
	unsigned i;

	for (i = 0; i < pm->nhw; i++) {
		if (pm->hw[i].active)
			(void)vpmu__hw_deactivate(vm, pm, cpu_of(pm, i));
		hc_closing(vm, pm->hw[i].hc);
		pm->hw[i].hc = NULL;
	}
}

/*
 * What an exit adds to the PMCs' times: with a source that has a clock of
 * its own, how far the vCPU ran by it since the last exit; else run_ns,
 * the vCPU thread's CPU time in the run.
 */
uint64_t
vpmu__vcpu_clock(struct vpmu_vm *vm, unsigned cpu, uint64_t run_ns)
{
	struct vpmu_vcpu *v = &vm->vcpu[cpu];
	uint64_t now, ns;

	if (vm->src->clock == NULL)
		return (run_ns);
	now = vm->src->clock(vm->src_state, cpu);
	ns = now > v->clock_mark ? now - v->clock_mark : 0;
	v->clock_mark = now;
	return (ns);
}

/*
 * A run is over: ns goes to the enabled time of every PMC that wants to
 * count on cpu and to the running time of those holding a slot; run_ns,
 * the CPU time it took, brings the next rotation closer.
 */
void
vpmu__vcpu_advance(struct vpmu_vm *vm, unsigned cpu, uint64_t run_ns, uint64_t ns)
{
	struct vpmu_vcpu *v = &vm->vcpu[cpu];
	struct vpmu_pmc *pm;
	unsigned i;
	bool timed;

	v->now += ns;
	for (i = 0; i < v->nact; i++) {
		pm = v->act[i];
		pm->t_enabled += ns;
		pm->tot_enabled += ns;
		if ((timed = vpmu__event_timed(&pm->spec)))
			credit(vm, pm, cpu, run_ns);	/* always runs */
		if (timed || hw_of(pm, cpu)->counting) {
			pm->t_running += ns;
			pm->tot_running += ns;
		}
	}
	vpmu__vcpu_time_due(vm, cpu);
	if (!waiting(vm, cpu)) {
		v->since_rotate = 0;		/* everybody runs: nothing to share */
		return;
	}
	v->since_rotate += run_ns;
	if (v->since_rotate >= vm->mux_interval) {
		v->since_rotate = 0;
		window(vm, cpu);
		v->rotations++;
	}
}

/*
 * The run time left on cpu before a sampling PMC on a time event is due
 * (the smallest), into time_left for the next entry: 0, none.  VM lock
 * held; the entry reads it without.
 */
void
vpmu__vcpu_time_due(struct vpmu_vm *vm, unsigned cpu)
{
	struct vpmu_vcpu *v = &vm->vcpu[cpu];
	uint64_t left, min = 0;
	unsigned i;

	for (i = 0; i < v->nact; i++)
		if (VPMU_MODE_IS_SAMPLING(v->act[i]->mode) &&
		    vpmu__event_timed(&v->act[i]->spec) &&
		    ((left = period_left(vm, v->act[i])) < min || min == 0))
			min = left;
	__atomic_store_n(&v->time_left, min, __ATOMIC_RELAXED);
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
	bool held[pm->nhw];
	unsigned i;

	/* What is counting now belongs to the old base: restart the slots. */
	for (i = 0; i < pm->nhw; i++) {
		held[i] = pm->hw[i].counting;
		if (held[i])
			(void)slot_take(vm, pm, cpu_of(pm, i));
	}
	pm->base = v;
	pm->counted_past += pm->counted;
	pm->counted = 0;
	pm->t_enabled = 0;
	pm->t_running = 0;
	pm->shown = 0;
	for (i = 0; i < pm->nhw; i++)
		if (held[i])
			(void)slot_give(vm, pm, cpu_of(pm, i));	/* armed anew */
}

/*
 * Before the vCPU runs on: if the PMCs that want to count changed while
 * some wait, the slots are shared out again (least served first).
 */
void
vpmu__vcpu_prepare(struct vpmu_vm *vm, unsigned cpu)
{
	if (vm->vcpu[cpu].dirty)
		window(vm, cpu);
}

uint64_t
vpmu__hw_peek(struct vpmu_vm *vm, struct vpmu_pmc *pm, unsigned idx)
{
	VPMU_ASSERT(idx < pm->nhw);
	return (slot_peek(vm, &pm->hw[idx]));
}

void
vpmu__pmc_arm(struct vpmu_vm *vm, struct vpmu_pmc *pm)
{
	unsigned i;

	for (i = 0; i < pm->nhw; i++)
		if (pm->hw[i].counting)
			slot_arm(vm, pm, &pm->hw[i]);
}

bool
vpmu__pmc_waiting(const struct vpmu_pmc *pm)
{
	unsigned i;

	for (i = 0; i < pm->nhw; i++)
		if (pm->hw[i].active && !pm->hw[i].counting && slotted(pm))
			return (true);
	return (false);
}
