/*
 * synthetic.c -- the scripted host source.
 *
 * Each vCPU has a virtual clock and, per event, a rate in events per
 * millisecond of that clock.  vpmu_synthetic_advance() moves a vCPU's clock
 * and every enabled counter on it gains rate * ns / 1e6 events, exactly:
 * the remainder (in event-nanoseconds) is carried, so a counter at 1000/ms
 * enabled for 1 ns a million times reads 1000.  Time enabled and running
 * are the virtual nanoseconds a counter was enabled.  Deterministic,
 * unlimited capacity unless init's arg says otherwise, no host resources:
 * the fixture of the unit tests and the demo.
 */
#include <errno.h>
#include <string.h>

#include "internal.h"

#define NS_PER_MS	1000000u
#define NEVENTS		256		/* rates are indexed by event code */

struct synth_ctr {
	struct vpmu__ctr_node all;	/* in struct synth's ctrs: first */
	struct synth_ctr *next;
	unsigned vcpu;
	uint32_t event;
	bool enabled;
	uint64_t value;
	uint64_t rem;			/* carried event-ns, < NS_PER_MS */
	uint64_t ns;			/* virtual ns enabled */
};

struct synth_vcpu {
	uint64_t rate[NEVENTS];		/* events per ms */
	struct synth_ctr *ctrs;		/* the enabled ones */
};

struct synth {
	unsigned nvcpus;
	unsigned capacity;
	struct vpmu__ctr_set ctrs;	/* every counter open */
	struct synth_vcpu *vcpu;
};

static int
synth_init(void **statep, unsigned nvcpus, void *arg)
{
	struct synth *s;

	if (statep == NULL || nvcpus == 0)
		return (EINVAL);
	if ((s = calloc(1, sizeof(*s))) == NULL)
		return (ENOMEM);
	if ((s->vcpu = calloc(nvcpus, sizeof(*s->vcpu))) == NULL) {
		free(s);
		return (ENOMEM);
	}
	s->nvcpus = nvcpus;
	pthread_mutex_init(&s->ctrs.mtx, NULL);
	if (arg != NULL)		/* optional: unsigned capacity */
		s->capacity = *(const unsigned *)arg;
	*statep = s;
	return (0);
}

static void
synth_fini(void *state)
{
	struct synth *s = state;

	if (s == NULL)
		return;
	vpmu__ctr_set_fini(&s->ctrs);
	free(s->vcpu);
	free(s);
}

static unsigned
synth_capacity(void *state)
{
	return (((struct synth *)state)->capacity);
}

static int
synth_supports(void *state, const struct vpmu_event_spec *ev, char *why, size_t whylen)
{
	(void)state;
	if (ev == NULL || ev->event == VPMU_EV_NONE || ev->event >= NEVENTS ||
	    vpmu_event_name(ev->event) == NULL) {
		if (why != NULL && whylen > 0)
			snprintf(why, whylen, "synthetic: unknown event");
		return (EOPNOTSUPP);
	}
	if ((ev->flags & (VPMU_EVF_EDGE | VPMU_EVF_INV)) || ev->cmask != 0) {
		if (why != NULL && whylen > 0)
			snprintf(why, whylen, "synthetic: EDGE, INV and CMASK "
			    "are not modelled (a rate has no per-cycle shape)");
		return (EOPNOTSUPP);
	}
	return (0);
}

static int
synth_open(void *state, unsigned vcpu, pid_t tid, const struct vpmu_event_spec *ev,
    void **ctrp)
{
	struct synth *s = state;
	struct synth_ctr *c;

	(void)tid;
	if (s == NULL || ctrp == NULL || vcpu >= s->nvcpus ||
	    synth_supports(s, ev, NULL, 0) != 0)
		return (EINVAL);
	if ((c = calloc(1, sizeof(*c))) == NULL)
		return (ENOMEM);
	c->vcpu = vcpu;
	c->event = ev->event;
	vpmu__ctr_set_add(&s->ctrs, &c->all);
	*ctrp = c;
	return (0);
}

static int synth_disable(void *state, void *ctr);

/*
 * open() and close() run without the VM lock, so they touch the counter
 * and the set of them (its own mutex) alone: a counter is on its vCPU's
 * list (which advance walks under the lock) while it is enabled, and the
 * core closes only disabled ones.
 */
static void
synth_close(void *state, void *ctr)
{
	struct synth *s = state;
	struct synth_ctr *c = ctr;

	if (s == NULL || c == NULL)
		return;
	(void)synth_disable(s, c);		/* the core's are disabled already */
	vpmu__ctr_set_del(&s->ctrs, &c->all);
	free(c);
}

static int
synth_enable(void *state, void *ctr)
{
	struct synth *s = state;
	struct synth_ctr *c = ctr;

	if (s == NULL || c == NULL)
		return (EINVAL);
	if (!c->enabled) {
		c->enabled = true;
		c->next = s->vcpu[c->vcpu].ctrs;
		s->vcpu[c->vcpu].ctrs = c;
	}
	return (0);
}

static int
synth_disable(void *state, void *ctr)
{
	struct synth *s = state;
	struct synth_ctr *c = ctr, **pp;

	if (s == NULL || c == NULL)
		return (EINVAL);
	if (c->enabled) {
		c->enabled = false;
		for (pp = &s->vcpu[c->vcpu].ctrs; *pp != c; pp = &(*pp)->next)
			;
		*pp = c->next;
	}
	return (0);
}

static int
synth_read(void *state, void *ctr, struct vpmu_count *out)
{
	const struct synth_ctr *c = ctr;

	(void)state;
	if (c == NULL || out == NULL)
		return (EINVAL);
	out->value = c->value;
	out->time_enabled = c->ns;
	out->time_running = c->ns;
	return (0);
}

const struct vpmu_source_ops vpmu_source_synthetic = {
	.name = "synthetic",
	.init = synth_init,
	.fini = synth_fini,
	.capacity = synth_capacity,
	.supports = synth_supports,
	.open = synth_open,
	.close = synth_close,
	.enable = synth_enable,
	.disable = synth_disable,
	.read = synth_read,
	.set_period = NULL,
};

/* ---- the script (public API) --------------------------------------------- */

static struct synth *
synth_of(struct vpmu_vm *vm, unsigned cpu)
{
	if (vm == NULL || vm->src != &vpmu_source_synthetic || cpu >= vm->nvcpus)
		return (NULL);
	return (vm->src_state);
}

int
vpmu_synthetic_set_rate(vpmu_vm *vm, unsigned cpu, uint32_t event, uint64_t per_ms)
{
	struct synth *s;

	if ((s = synth_of(vm, cpu)) == NULL || event == VPMU_EV_NONE ||
	    event >= NEVENTS || vpmu_event_name(event) == NULL)
		return (EINVAL);
	vpmu__vm_lock(vm);
	s->vcpu[cpu].rate[event] = per_ms;
	vpmu__vm_unlock(vm);
	return (0);
}

int
vpmu_synthetic_advance(vpmu_vm *vm, unsigned cpu, uint64_t ns)
{
	struct synth *s;
	struct synth_ctr *c;
	unsigned __int128 ev;

	if ((s = synth_of(vm, cpu)) == NULL)
		return (EINVAL);
	vpmu__vm_lock(vm);
	vpmu__vcpu_prepare(vm, cpu);		/* who runs this slice */
	(void)vpmu__hc_open(vm);		/* with their counters (the lock dropped) */
	for (c = s->vcpu[cpu].ctrs; c != NULL; c = c->next) {
		if (!c->enabled)
			continue;
		ev = (unsigned __int128)s->vcpu[cpu].rate[c->event] * ns + c->rem;
		c->value += (uint64_t)(ev / NS_PER_MS);
		c->rem = (uint64_t)(ev % NS_PER_MS);
		c->ns += ns;
	}
	/* The vCPU's run time for the core: enabled/running times, rotations. */
	vpmu__vcpu_advance(vm, cpu, ns, ns);
	vpmu__vm_unlock(vm);
	return (0);
}
