/*
 * exact.c -- the "exact" host source: its ops table, init and fini, the
 * parameters, the counters (open, enable, read, ...) and the counting
 * model (what retired instructions add to them), the snapshot point and
 * the statistics.
 *
 * The source counts the guest's retired instructions, branches and
 * modelled cycles, reconstructed from single-step exits or, in block mode,
 * from exits at breakpoints the source plans.  The rest of it:
 *   exact_step.c      reconstruction at every exit (vpmu__exact_sync)
 *   exact_block.c     the block planner (exec_wants, exec_breaks)
 *   exact_loop.c      loops fast-forwarded and retired in closed form
 *   exact_complete.c  what the source retires itself at a block's end
 *                     (exec_complete, exec_retire, exec_stops)
 *   exact_internal.h  their shared state (struct exact, struct xvcpu)
 * vpmu_exact(7) has the model, the cycle model and the limits.
 *
 * Threads: see exact.h; no lock is taken here.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "internal.h"
#include "arch.h"
#include <vpmu/model.h>

#include "exact_internal.h"

#define VENDOR_INTEL	(1u << VPMU_VENDOR_INTEL)
#define VENDOR_AMD	(1u << VPMU_VENDOR_AMD)

/*
 * The modelled event ev counts, or VPMU_EV_NONE.  A raw select (as the
 * guest-visible models fill vpmu_event_spec.raw) names an architectural
 * event (arch.h) only for the guest's vendor: 0xC4 is taken branches on
 * AMD, 0xC2 retired micro-ops on Intel.  With no vendor given, only codes
 * both vendors give the same meaning match -- and the models already turn
 * their own vendor's codes into named events, so what reaches here raw
 * from a guest is exactly the other vendor's codes, which must not match.
 */
static uint32_t
modelled(const struct exact *x, const struct vpmu_event_spec *ev)
{
	uint32_t event = ev->event;

	if (event == VPMU_EV_RAW)
		event = vpmu__arch_event_raw(ev->raw, x->vendors);
	switch (event) {
	case VPMU_EV_INSTRUCTIONS:
	case VPMU_EV_BRANCHES:
	case VPMU_EV_CYCLES:
	case VPMU_EV_REF_CYCLES:
		return (event);
	default:
		return (VPMU_EV_NONE);
	}
}

static uint64_t
now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ((uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec);
}

/*
 * What one instruction adds to counter c: it spans n cycles of the
 * counter's clock; each of the first n - 1 cycles carries `other` events,
 * the last carries `last`.  Without CMASK and EDGE the counter adds the
 * events; with them it counts cycles whose events reach CMASK (INV: stay
 * below it), and with EDGE only the cycles where that condition turns
 * true.  EDGE without CMASK uses CMASK 1; INV without CMASK or EDGE does
 * nothing (there is no comparison to invert).
 */
static uint64_t
cycles(struct xctr *c, uint64_t n, uint64_t other, uint64_t last)
{
	bool edge = (c->flags & VPMU_EVF_EDGE) != 0, inv = (c->flags & VPMU_EVF_INV) != 0;
	uint64_t cm = c->cmask, v = 0;
	bool co, cl;

	if (cm == 0 && !edge)
		return ((n - 1) * other + last);
	if (cm == 0)
		cm = 1;
	co = inv ? other < cm : other >= cm;
	cl = inv ? last < cm : last >= cm;
	if (!edge)
		return ((n - 1) * co + cl);
	if (n > 1) {
		v += co && !c->cond;
		c->cond = co;
	}
	v += cl && !c->cond;
	c->cond = cl;
	return (v);
}

static bool
cpl_counts(uint32_t flags, unsigned cpl)
{
	switch (flags & EVF_MODES) {
	case VPMU_EVF_USR:
		return (cpl > 0);
	case VPMU_EVF_OS:
		return (cpl == 0);
	default:			/* both, or 0: both */
		return (true);
	}
}

/*
 * Reference cycles by time (ref_cpi 0).  The SDM's unhalted reference
 * cycles tick at the TSC's rate while the processor is not halted, and a
 * guest's TSC runs at the host's unless its VMM scales it: a counter adds
 * the host TSC's advance since its enable, or since it was last counted,
 * at every exit (the same clock the guest's RDTSC reads), except over a
 * run the vCPU spent halted (VPMU_SYNC_HALTED), and only at the privilege
 * levels it counts, taken as the level the run began at (P's).  Unlike
 * the other events they depend on the host's speed, and blocks do not
 * stop at their overflows: the exit after it brings the PMI.
 */
static bool
by_time(const struct exact *x, const struct xctr *c)
{
	return (x->ref_cpi == 0 && c->event == VPMU_EV_REF_CYCLES);
}

static uint64_t
tsc_now(void)
{
	return (__builtin_ia32_rdtsc());
}

/* The level a run that begins now runs at, as far as the source knows. */
static unsigned
run_cpl(const struct xvcpu *v)
{
	return (v->known ? v->p.cpl : 0);
}

/* What counter c, counted by time, adds up to TSC now at level cpl. */
static uint64_t
ref_pending(const struct xctr *c, unsigned cpl, uint64_t now)
{
	if (!c->enabled || now <= c->tsc || !cpl_counts(c->flags, cpl))
		return (0);
	return (now - c->tsc);
}

/* v's counters counted by time, up to now; a halted run adds nothing. */
void
vpmu__exact_ref_tsc(const struct exact *x, struct xvcpu *v, bool halted)
{
	uint64_t now = tsc_now();
	struct xctr *c;

	for (c = v->ctrs; c != NULL; c = c->next)
		if (by_time(x, c) && c->enabled) {
			if (!halted)
				c->value += ref_pending(c, run_cpl(v), now);
			c->tsc = now;
		}
}

/* What the instructions of p add to counter c, once. */
static uint64_t
path_events(const struct exact *x, struct xctr *c, const struct path *p)
{
	uint64_t v = 0;
	unsigned i;

	for (i = 0; i < p->n; i++) {
		if (!cpl_counts(c->flags, p->insn[i].cpl))
			continue;
		switch (c->event) {
		case VPMU_EV_INSTRUCTIONS:
			v += cycles(c, x->cpi, 0, 1);
			break;
		case VPMU_EV_BRANCHES:
			v += cycles(c, x->cpi, 0, p->insn[i].branch);
			break;
		case VPMU_EV_CYCLES:
			v += cycles(c, x->cpi, 1, 1);
			break;
		case VPMU_EV_REF_CYCLES:
			if (x->ref_cpi != 0)	/* else by time: ref_tsc() */
				v += cycles(c, x->ref_cpi, 1, 1);
			break;
		}
	}
	return (v);
}

/*
 * p retired times times over (a fast-forwarded loop: times iterations of
 * one path).  Without EDGE a pass adds the same events every time.  With
 * it the condition carries from one pass to the next, but a pass ends in
 * the same state whatever it started in (the path is the same), so from
 * the second pass on every pass adds what the second did.
 */
void
vpmu__exact_count_path_n(const struct exact *x, struct xvcpu *v, const struct path *p,
    uint64_t times)
{
	struct xctr *c;

	for (c = v->ctrs; c != NULL; c = c->next) {
		if (!c->enabled || times == 0)
			continue;
		if (!(c->flags & VPMU_EVF_EDGE))
			c->value += times * path_events(x, c, p);
		else {
			c->value += path_events(x, c, p);
			if (times > 1)
				c->value += (times - 1) * path_events(x, c, p);
		}
	}
}

void
vpmu__exact_count_path(const struct exact *x, struct xvcpu *v, const struct path *p)
{
	vpmu__exact_count_path_n(x, v, p, 1);
}

/*
 * How many instructions can run before the one that could overflow an
 * enabled counter (room; cap: at most BLOCK_MAX): blocks, fast-forwarded
 * loops and completed branches stay within it, so the instruction that
 * overflows a counter is always single-stepped, the overflow is seen at
 * the exit right after it, and the PMI's entry follows a step, as under
 * single-step (an NMI queued at the entry that switches from breakpoints
 * to single-step left RFLAGS.TF in the handler's frame: tf_hidden.c).  A
 * counter adds at most its clock's cycles per instruction (CPI: every
 * event counts at most once a cycle).  Past an overflow the next is taken
 * `left` events further: never later than the real one.  Under the VM
 * lock.
 */
void
vpmu__exact_recap(const struct exact *x, struct xvcpu *v)
{
	const struct xctr *c;
	uint64_t room = UINT64_MAX, rem, per;

	for (c = v->ctrs; c != NULL; c = c->next) {
		if (!c->enabled || c->left == 0 || by_time(x, c))
			continue;
		rem = c->left - (c->value - c->armed) % c->left;
		per = c->event == VPMU_EV_REF_CYCLES ? x->ref_cpi : x->cpi;
		/* ceil(rem / per) instructions could reach it: one fewer cannot */
		if ((rem + per - 1) / per - 1 < room)
			room = (rem + per - 1) / per - 1;
	}
	v->room = room;
	__atomic_store_n(&v->cap, (unsigned)(room < BLOCK_MAX ? room : BLOCK_MAX),
	    __ATOMIC_RELAXED);
}

bool
vpmu__exact_wants_step(void *state, unsigned cpu)
{
	const struct exact *x = state;

	/* A hint re-read before every entry: no lock (the count changes under it). */
	return (x != NULL && cpu < x->nvcpus &&
	    __atomic_load_n(&x->vcpu[cpu].nenabled, __ATOMIC_RELAXED) > 0);
}

void
vpmu__exact_set_memory(void *state, const struct vpmu_gmem *mem)
{
	if (state != NULL)
		((struct exact *)state)->mem = mem;
}

/* Snapshots: the last retirement point, read and set (no stats, no counting). */
int
vpmu__exact_get_point(void *state, unsigned cpu, struct vpmu_regs *r)
{
	const struct exact *x = state;

	if (x == NULL || r == NULL || cpu >= x->nvcpus)
		return (EINVAL);
	if (!x->vcpu[cpu].known)
		return (ENOENT);
	*r = x->vcpu[cpu].p;
	return (0);
}

int
vpmu__exact_set_point(void *state, unsigned cpu, const struct vpmu_regs *r)
{
	struct exact *x = state;

	if (x == NULL || cpu >= x->nvcpus)
		return (EINVAL);
	x->vcpu[cpu].known = r != NULL;
	x->vcpu[cpu].planned = false;
	if (r != NULL)
		x->vcpu[cpu].p = *r;
	/* another host, another TSC: from now */
	vpmu__exact_ref_tsc(x, &x->vcpu[cpu], true);
	return (0);
}

int
vpmu__exact_get_stats(void *state, unsigned cpu, struct vpmu_exact_stats *st)
{
	const struct exact *x = state;

	if (x == NULL || st == NULL || cpu >= x->nvcpus)
		return (EINVAL);
	*st = x->vcpu[cpu].st;
	st->decode_hits = x->vcpu[cpu].dc->hits;
	st->decode_misses = x->vcpu[cpu].dc->misses;
	return (0);
}

const char *
vpmu_step_why_name(unsigned why)
{
	static const char *const name[VPMU_STEP_WHY_N] = {
		[VPMU_STEP_MODE] = "step-mode", [VPMU_STEP_UNKNOWN] = "state-unknown",
		[VPMU_STEP_NOT_64BIT] = "not-64-bit", [VPMU_STEP_GUEST_TF] = "guest-tf",
		[VPMU_STEP_STREAK] = "interrupt-streak", [VPMU_STEP_ALIGN_CHECK] = "align-check",
		[VPMU_STEP_UNREADABLE] = "unreadable", [VPMU_STEP_CAP] = "overflow-cap",
		[VPMU_STEP_SHORT] = "short-block", [VPMU_STEP_RUN] = "into-the-run",
		[VPMU_STEP_NO_HANDLER] = "no-fault-handler", [VPMU_STEP_DEBUG_REGS] = "debug-registers",
		[VPMU_STEP_EVENT_HELD] = "event-held", [VPMU_STEP_JCC] = "jcc",
		[VPMU_STEP_CALL] = "call", [VPMU_STEP_CALL_INDIRECT] = "call-indirect",
		[VPMU_STEP_JMP] = "jmp", [VPMU_STEP_JMP_INDIRECT] = "jmp-indirect",
		[VPMU_STEP_RET] = "ret", [VPMU_STEP_FAR] = "far-branch",
		[VPMU_STEP_PRIVILEGED] = "privileged", [VPMU_STEP_IO] = "io",
		[VPMU_STEP_FENCE] = "fence", [VPMU_STEP_FLAGS] = "flags", [VPMU_STEP_DIV] = "div",
		[VPMU_STEP_SEGMENT] = "segment", [VPMU_STEP_VECTOR] = "vector",
		[VPMU_STEP_SYSTEM] = "system", [VPMU_STEP_OTHER] = "other",
	};

	return (why < VPMU_STEP_WHY_N ? name[why] : NULL);
}

/* ---- the source hooks ----------------------------------------------------- */

static int
x_init(void **statep, unsigned nvcpus, void *arg)
{
	const struct vpmu_exact_params *prm = arg;
	struct exact *x;
	unsigned i;

	if (statep == NULL || nvcpus == 0 ||
	    (prm != NULL && (prm->vendor > VPMU_VENDOR_AMD || prm->mode > VPMU_EXACT_STEP ||
	    (prm->flags & ~(VPMU_EXACT_NO_FORESEE | VPMU_EXACT_NO_INTERP)) != 0)))
		return (EINVAL);
	if ((x = calloc(1, sizeof(*x))) == NULL)
		return (ENOMEM);
	if ((x->vcpu = calloc(nvcpus, sizeof(*x->vcpu))) == NULL) {
		free(x);
		return (ENOMEM);
	}
	for (i = 0; i < nvcpus; i++)
		if ((x->vcpu[i].dc = calloc(1, sizeof(*x->vcpu[i].dc))) == NULL) {
			while (i-- > 0)
				free(x->vcpu[i].dc);
			free(x->vcpu);
			free(x);
			return (ENOMEM);
		}
	x->nvcpus = nvcpus;
	pthread_mutex_init(&x->ctrs.mtx, NULL);
	x->mode = prm != NULL ? prm->mode : VPMU_EXACT_BLOCK;
	x->foresee = prm == NULL || !(prm->flags & VPMU_EXACT_NO_FORESEE);
	x->interp = prm == NULL || !(prm->flags & VPMU_EXACT_NO_INTERP);
	x->ff_max = (prm != NULL && prm->ff_max != 0) ? prm->ff_max : FF_MAX_DEFAULT;
	for (i = 0; i < nvcpus; i++)
		x->vcpu[i].cap = BLOCK_MAX;
	x->cpi = (prm != NULL && prm->cpi != 0) ? prm->cpi : 1;
	x->ref_cpi = prm != NULL ? prm->ref_cpi : 0;
	x->vendors = (prm != NULL && prm->vendor != VPMU_VENDOR_NONE) ?
	    1u << prm->vendor : VENDOR_INTEL | VENDOR_AMD;
	*statep = x;
	return (0);
}

static void
x_fini(void *state)
{
	struct exact *x = state;
	unsigned i;

	if (x == NULL)
		return;
	vpmu__ctr_set_fini(&x->ctrs);
	for (i = 0; i < x->nvcpus; i++)
		free(x->vcpu[i].dc);
	free(x->vcpu);
	free(x);
}

/* The guest's vendor from the model, unless the parameters named one. */
static void
x_model(void *state, const struct vpmu_model *m)
{
	struct exact *x = state;

	if (x != NULL && x->vendors == (VENDOR_INTEL | VENDOR_AMD) &&
	    (m->vendor == VPMU_VENDOR_INTEL || m->vendor == VPMU_VENDOR_AMD))
		x->vendors = 1u << m->vendor;
}

static unsigned
x_capacity(void *state)
{
	(void)state;
	return (0);			/* a counter is a few words: no limit */
}

static int
x_supports(void *state, const struct vpmu_event_spec *ev, char *why, size_t whylen)
{
	const char *name;

	if (state == NULL || ev == NULL) {
		if (why != NULL && whylen > 0)
			snprintf(why, whylen, "exact: no event");
		return (EOPNOTSUPP);
	}
	if (ev->flags & ~EVF_ALL) {
		if (why != NULL && whylen > 0)
			snprintf(why, whylen, "exact: event flags 0x%x are not modelled",
			    ev->flags & ~EVF_ALL);
		return (EOPNOTSUPP);
	}
	if (modelled(state, ev) == VPMU_EV_REF_CYCLES &&
	    ((const struct exact *)state)->ref_cpi == 0 &&
	    (ev->cmask != 0 || (ev->flags & (VPMU_EVF_EDGE | VPMU_EVF_INV)))) {
		if (why != NULL && whylen > 0)
			snprintf(why, whylen, "exact: reference cycles follow the TSC: no "
			    "counter mask, edge or inversion (a ref_cpi gives them per "
			    "instruction)");
		return (EOPNOTSUPP);
	}
	if (modelled(state, ev) != VPMU_EV_NONE)
		return (0);
	if (why != NULL && whylen > 0) {
		if (ev->event == VPMU_EV_RAW)
			snprintf(why, whylen, "exact: event 0x%llx is not modelled",
			    (unsigned long long)ev->raw);
		else if ((name = vpmu_event_name(ev->event)) != NULL)
			snprintf(why, whylen, "exact: event %s is not modelled", name);
		else
			snprintf(why, whylen, "exact: event 0x%x is not modelled", ev->event);
	}
	return (EOPNOTSUPP);
}

static int
x_open(void *state, unsigned vcpu, pid_t tid, const struct vpmu_event_spec *ev, void **ctrp)
{
	struct exact *x = state;
	struct xctr *c;

	(void)tid;
	if (x == NULL || ev == NULL || ctrp == NULL || vcpu >= x->nvcpus)
		return (EINVAL);
	if (x_supports(x, ev, NULL, 0) != 0)
		return (EOPNOTSUPP);
	if ((c = calloc(1, sizeof(*c))) == NULL)
		return (ENOMEM);
	c->vcpu = vcpu;
	c->event = modelled(x, ev);
	c->flags = ev->flags;
	c->cmask = ev->cmask;
	vpmu__ctr_set_add(&x->ctrs, &c->all);
	*ctrp = c;
	return (0);
}

/*
 * open() and close() run without the VM lock, on any thread, so they
 * touch the counter and the set of them (its own mutex) alone: a counter
 * is on its vCPU's list (walked under the lock) while enabled, and the
 * core closes only disabled counters.
 */

static int
x_enable(void *state, void *ctr)
{
	struct exact *x = state;
	struct xctr *c = ctr;

	if (x == NULL || c == NULL)
		return (EINVAL);
	if (!c->enabled) {
		c->enabled = true;
		c->next = x->vcpu[c->vcpu].ctrs;
		x->vcpu[c->vcpu].ctrs = c;
		c->cond = false;
		c->since = now_ns();
		c->tsc = tsc_now();
		__atomic_add_fetch(&x->vcpu[c->vcpu].nenabled, 1, __ATOMIC_RELAXED);
		vpmu__exact_recap(x, &x->vcpu[c->vcpu]);
	}
	return (0);
}

static int
x_disable(void *state, void *ctr)
{
	struct exact *x = state;
	struct xctr *c = ctr, **pp;

	if (x == NULL || c == NULL)
		return (EINVAL);
	if (c->enabled) {
		if (by_time(x, c))
			c->value += ref_pending(c, run_cpl(&x->vcpu[c->vcpu]), tsc_now());
		c->enabled = false;
		for (pp = &x->vcpu[c->vcpu].ctrs; *pp != c; pp = &(*pp)->next)
			;
		*pp = c->next;
		c->ns += now_ns() - c->since;
		__atomic_sub_fetch(&x->vcpu[c->vcpu].nenabled, 1, __ATOMIC_RELAXED);
		vpmu__exact_recap(x, &x->vcpu[c->vcpu]);
	}
	return (0);
}

static void
x_close(void *state, void *ctr)
{
	struct exact *x = state;
	struct xctr *c = ctr;

	if (x == NULL || c == NULL)
		return;
	(void)x_disable(x, c);			/* the core's are disabled already */
	vpmu__ctr_set_del(&x->ctrs, &c->all);
	free(c);
}

/* Events left before the counter overflows: blocks stop there (recap). */
static int
x_set_period(void *state, void *ctr, uint64_t period)
{
	struct exact *x = state;
	struct xctr *c = ctr;

	if (x == NULL || c == NULL)
		return (EINVAL);
	c->left = period;
	c->armed = c->value;
	vpmu__exact_recap(x, &x->vcpu[c->vcpu]);
	return (0);
}

static int
x_read(void *state, void *ctr, struct vpmu_count *out)
{
	const struct exact *x = state;
	const struct xctr *c = ctr;

	if (c == NULL || out == NULL)
		return (EINVAL);
	out->value = c->value;
	if (x != NULL && by_time(x, c))		/* up to now, counted at the next exit */
		out->value += ref_pending(c, run_cpl(&x->vcpu[c->vcpu]), tsc_now());
	out->time_enabled = c->ns + (c->enabled ? now_ns() - c->since : 0);
	out->time_running = out->time_enabled;
	return (0);
}

/*
 * The vCPU's clock: the core cycles modelled on it, one per ns.  It moves
 * only with what the guest retires, so a multiplexed counter is scaled by
 * the guest's progress, whatever else the host runs.
 */
static uint64_t
x_clock(void *state, unsigned vcpu)
{
	const struct exact *x = state;

	if (x == NULL || vcpu >= x->nvcpus)
		return (0);
	return (x->vcpu[vcpu].st.retired * x->cpi);
}

/* on or off: flag set in *flags for off. */
static int
x_onoff(const char *v, unsigned flag, unsigned *flags, char *why, size_t whylen)
{
	if (strcmp(v, "on") != 0 && strcmp(v, "off") != 0) {
		if (why != NULL && whylen > 0)
			snprintf(why, whylen, "want on or off");
		return (EINVAL);
	}
	*flags = strcmp(v, "off") == 0 ? *flags | flag : *flags & ~flag;
	return (0);
}

/*
 * The options "exact-KEY" (vpmu_config_set_option()): mode, foresee,
 * interp, ff-max, cpi, ref-cpi, each a field of struct vpmu_exact_params.
 */
static int
x_param(void *params, const char *key, const char *v, char *why, size_t whylen)
{
	struct vpmu_exact_params *p = params;
	unsigned long long n, max;
	char *end;

	if (strcmp(key, "mode") == 0) {
		if (strcmp(v, "step") != 0 && strcmp(v, "block") != 0) {
			if (why != NULL && whylen > 0)
				snprintf(why, whylen, "want step or block");
			return (EINVAL);
		}
		p->mode = strcmp(v, "step") == 0 ? VPMU_EXACT_STEP : VPMU_EXACT_BLOCK;
		return (0);
	}
	if (strcmp(key, "foresee") == 0)
		return (x_onoff(v, VPMU_EXACT_NO_FORESEE, &p->flags, why, whylen));
	if (strcmp(key, "interp") == 0)
		return (x_onoff(v, VPMU_EXACT_NO_INTERP, &p->flags, why, whylen));
	if (strcmp(key, "ff-max") == 0)
		max = UINT32_MAX;
	else if (strcmp(key, "cpi") == 0 || strcmp(key, "ref-cpi") == 0)
		max = 1000;
	else {
		if (why != NULL && whylen > 0)
			snprintf(why, whylen, "no such option of the exact source (mode, "
			    "foresee, interp, ff-max, cpi, ref-cpi)");
		return (EINVAL);
	}
	errno = 0;
	n = strtoull(v, &end, 10);
	if (*v < '0' || *v > '9' || *end != '\0' || errno != 0 || n > max) {
		if (why != NULL && whylen > 0)
			snprintf(why, whylen, "want a number from 0 to %llu", max);
		return (EINVAL);
	}
	if (key[0] == 'f')
		p->ff_max = n;
	else if (key[0] == 'c')
		p->cpi = (unsigned)n;
	else
		p->ref_cpi = (unsigned)n;
	return (0);
}

const struct vpmu_source_ops vpmu_source_exact = {
	.name = "exact",
	.init = x_init,
	.fini = x_fini,
	.capacity = x_capacity,
	.supports = x_supports,
	.open = x_open,
	.close = x_close,
	.enable = x_enable,
	.disable = x_disable,
	.read = x_read,
	.set_period = x_set_period,	/* overflow: the model checks after each exit;
					   blocks stop where it may come */
	.model = x_model,
	.exec_memory = vpmu__exact_set_memory,
	.exec_wants = vpmu__exact_wants,
	.exec_breaks = vpmu__exact_breaks,
	.exec_complete = vpmu__exact_complete,
	.exec_retire = vpmu__exact_retire,
	.exec_stops = vpmu__exact_stops,
	.exec_sync = vpmu__exact_sync,
	.exec_point_get = vpmu__exact_get_point,
	.exec_point_set = vpmu__exact_set_point,
	.clock = x_clock,
	.params_size = sizeof(struct vpmu_exact_params),
	.param = x_param,
	.exec_stats = vpmu__exact_get_stats,
};
