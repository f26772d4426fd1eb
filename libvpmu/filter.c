/*
 * filter.c -- the per-VM event filter: KVM's KVM_SET_PMU_EVENT_FILTER
 * (struct kvm_pmu_event_filter, arch/x86/kvm/pmu.c), applied by libvpmu
 * itself in trap mode.  See vpmu_event_filter(3).
 *
 * KVM's rules, as this file implements them:
 *  - checks: action ALLOW (0) or DENY (1), else EINVAL; flags only
 *    MASKED (bit 0), else EINVAL; nevents > 300, E2BIG; with MASKED, an
 *    entry with a bit outside the event select (7:0, and 35:32 where the
 *    vendor's select has them: AMD), the umask match (15:8), exclude (55)
 *    and the umask mask (63:56) is EINVAL.
 *  - a GP counter's event is its select's event bits (Intel 7:0; AMD 7:0
 *    and 35:32) and its umask (15:8); nothing else of the select matters.
 *  - an unmasked entry is the masked entry (select, mask 0xFF, match
 *    umask); one with any other bit set is skipped (KVM cannot reject it).
 *  - an entry matches when its select equals the event's and
 *    (umask & mask) == match.  The event is "in" the filter when an
 *    include entry matches and no exclude entry does; in: allowed iff
 *    ALLOW; not in: allowed iff DENY.
 *  - fixed counter i: the bitmap alone (current KVM; events[] is not
 *    consulted for fixed counters): ALLOW and bit i clear, or DENY and bit
 *    i set -- disallowed; else allowed.
 */
#include <ctype.h>
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "arch.h"
#include "gpmu.h"

#define SEL_LO		0xFFull			/* event select 7:0 */
#define SEL_HI		(0xFull << 32)		/* AMD event select 35:32 */
#define UMASK		(0xFFull << 8)
#define M_EXCLUDE	(1ull << 55)
#define M_MASK		(0xFFull << 56)

/* The select bits a vendor's event has (KVM's EVENTSEL_EVENT); NONE: both. */
static uint64_t
vendor_select(uint32_t vendor)
{
	return (vendor == VPMU_VENDOR_INTEL ? SEL_LO : SEL_LO | SEL_HI);
}

static int
check_vendor(const struct vpmu_event_filter *f, uint32_t vendor)
{
	uint64_t ok = vendor_select(vendor) | UMASK | M_EXCLUDE | M_MASK;
	uint32_t i;

	if (f == NULL)
		return (EINVAL);
	if (f->action != VPMU_FILTER_ALLOW && f->action != VPMU_FILTER_DENY)
		return (EINVAL);
	if (f->flags & ~VPMU_FILTER_MASKED)
		return (EINVAL);
	if (f->nevents > VPMU_EVENT_FILTER_MAX)
		return (E2BIG);
	if (f->flags & VPMU_FILTER_MASKED)
		for (i = 0; i < f->nevents; i++)
			if (f->events[i] & ~ok)
				return (EINVAL);
	return (0);
}

int
vpmu_event_filter_check(const struct vpmu_event_filter *f)
{
	return (check_vendor(f, VPMU_VENDOR_NONE));
}

/* The rule, for a filter that passed check_vendor(f, vendor). */
static bool
gp_allowed(const struct vpmu_event_filter *f, uint32_t vendor, uint64_t sel)
{
	uint64_t evmask = vendor_select(vendor), e, esel = sel & evmask;
	unsigned umask = (unsigned)((sel >> 8) & 0xFF), mask, match;
	bool in = false, out = false, excl;
	uint32_t i;

	for (i = 0; i < f->nevents; i++) {
		e = f->events[i];
		if (f->flags & VPMU_FILTER_MASKED) {
			mask = (unsigned)(e >> 56);
			excl = (e & M_EXCLUDE) != 0;
		} else {
			if (e & ~(evmask | UMASK))
				continue;		/* can match no event */
			mask = 0xFF;
			excl = false;
		}
		match = (unsigned)((e >> 8) & 0xFF);
		if ((e & evmask) != esel || (umask & mask) != match)
			continue;
		if (excl)
			out = true;
		else
			in = true;
	}
	if (in && !out)
		return (f->action == VPMU_FILTER_ALLOW);
	return (f->action == VPMU_FILTER_DENY);
}

static bool
fixed_allowed(const struct vpmu_event_filter *f, unsigned idx)
{
	bool bit = idx < 32 && (f->fixed_counter_bitmap >> idx) & 1;

	if (f->action == VPMU_FILTER_DENY && bit)
		return (false);
	if (f->action == VPMU_FILTER_ALLOW && !bit)
		return (false);
	return (true);
}

int
vpmu_event_filter_allows(const struct vpmu_event_filter *f, uint32_t vendor, uint64_t sel,
    int *allowed)
{
	int error;

	if (allowed == NULL || (vendor != VPMU_VENDOR_INTEL && vendor != VPMU_VENDOR_AMD))
		return (EINVAL);
	if ((error = check_vendor(f, vendor)) != 0)
		return (error);
	*allowed = gp_allowed(f, vendor, sel);
	return (0);
}

int
vpmu_event_filter_allows_fixed(const struct vpmu_event_filter *f, unsigned idx, int *allowed)
{
	int error;

	if (allowed == NULL)
		return (EINVAL);
	if ((error = check_vendor(f, VPMU_VENDOR_NONE)) != 0)
		return (error);
	*allowed = fixed_allowed(f, idx);
	return (0);
}

/* ---- presets ------------------------------------------------------------- */

/*
 * Xen's vpmu=ipc and vpmu=arch: the architectural events (arch.h) of the
 * vendor, by its event selects, in the table's order; ipc only those the
 * table marks so.  AMD has no fixed counters, no reference-cycles event
 * and no core LLC events.  The fixed bitmap allows every fixed counter
 * the table has (their events are instructions, cycles and reference
 * cycles: all in ipc).
 */
int
vpmu_event_filter_preset(const char *name, uint32_t vendor, struct vpmu_event_filter *out)
{
	const struct vpmu__arch_event *e;
	bool ipc;
	uint64_t sel;
	size_t i;

	if (name == NULL || out == NULL ||
	    (vendor != VPMU_VENDOR_INTEL && vendor != VPMU_VENDOR_AMD))
		return (EINVAL);
	if (strcmp(name, "ipc") == 0)
		ipc = true;
	else if (strcmp(name, "arch") == 0)
		ipc = false;
	else
		return (ENOENT);
	memset(out, 0, sizeof(*out));
	out->action = VPMU_FILTER_ALLOW;
	for (i = 0; i < VPMU__NARCH; i++) {
		e = &vpmu__arch_events[i];
		if (e->fixed >= 0)
			out->fixed_counter_bitmap |= 1u << e->fixed;
		if ((sel = vpmu__arch_sel(e, vendor)) != 0 && (e->ipc || !ipc))
			out->events[out->nevents++] = sel;
	}
	return (0);
}

/* ---- the text format ------------------------------------------------------ */

struct parser {
	const char *p;		/* the current line's next character */
	unsigned line;
	char *why;
	size_t whylen;
};

static int
fail(struct parser *ps, int error, const char *fmt, ...)
{
	va_list ap;
	int n;

	if (ps->why != NULL && ps->whylen > 0) {
		n = snprintf(ps->why, ps->whylen, "line %u: ", ps->line);
		if (n >= 0 && (size_t)n < ps->whylen) {
			va_start(ap, fmt);
			(void)vsnprintf(ps->why + n, ps->whylen - (size_t)n, fmt, ap);
			va_end(ap);
		}
	}
	return (error);
}

/* The next word of the line into w (at most wl - 1 characters); false at its end. */
static bool
word(struct parser *ps, char *w, size_t wl)
{
	size_t n = 0;

	while (*ps->p == ' ' || *ps->p == '\t' || *ps->p == '\r')
		ps->p++;
	if (*ps->p == '\0' || *ps->p == '\n' || *ps->p == '#')
		return (false);
	while (*ps->p != '\0' && !isspace((unsigned char)*ps->p) && *ps->p != '#') {
		if (n + 1 < wl)
			w[n++] = *ps->p;
		else
			n = wl;			/* too long: no word fits */
		ps->p++;
	}
	if (n >= wl) {
		w[0] = '\0';			/* reported by the caller as bad */
		return (true);
	}
	w[n] = '\0';
	return (true);
}

/* A number (C syntax: 0x.., 0.., decimal) no greater than max. */
static int
number(struct parser *ps, const char *what, uint64_t max, uint64_t *v)
{
	char w[32], *end;
	unsigned long long x;

	if (!word(ps, w, sizeof(w)))
		return (fail(ps, EINVAL, "%s: a number is missing", what));
	errno = 0;
	x = strtoull(w, &end, 0);
	if (w[0] == '\0' || w[0] == '-' || *end != '\0' || errno != 0)
		return (fail(ps, EINVAL, "%s: \"%s\" is not a number", what, w));
	if (x > max)
		return (fail(ps, EINVAL, "%s: 0x%llx is more than 0x%llx", what, x,
		    (unsigned long long)max));
	*v = x;
	return (0);
}

/* The keyword kw next, or the line's end (false). */
static int
keyword(struct parser *ps, const char *kw, bool *seen)
{
	char w[32];

	*seen = false;
	if (!word(ps, w, sizeof(w)))
		return (0);
	if (strcmp(w, kw) != 0)
		return (fail(ps, EINVAL, "\"%s\" where \"%s\" or the end of the line was expected",
		    w, kw));
	*seen = true;
	return (0);
}

static int
line_end(struct parser *ps)
{
	char w[32];

	if (word(ps, w, sizeof(w)))
		return (fail(ps, EINVAL, "unexpected \"%s\"", w));
	return (0);
}

static int
add_event(struct parser *ps, struct vpmu_event_filter *f, uint64_t e)
{
	if (f->nevents == VPMU_EVENT_FILTER_MAX)
		return (fail(ps, E2BIG, "more than %d events", VPMU_EVENT_FILTER_MAX));
	f->events[f->nevents++] = e;
	return (0);
}

/*
 * Lines (see vpmu_event_filter(3)):
 *   allow | deny
 *   fixed BITMAP
 *   event SELECT [umask UMASK]
 *   raw VALUE
 *   masked select SELECT mask MASK match MATCH [exclude]
 * An "event" line in a filter with "masked" lines is the masked entry
 * (SELECT, mask 0xFF, match UMASK), which matches the same events.
 */
int
vpmu_event_filter_parse(const char *text, struct vpmu_event_filter *out, char *why,
    size_t whylen)
{
	struct {
		struct vpmu_event_filter f;
		bool isev[VPMU_EVENT_FILTER_MAX];	/* from an "event" line */
		unsigned line[VPMU_EVENT_FILTER_MAX];	/* its line */
	} *pf;
	struct vpmu_event_filter *f;
	struct parser ps = { text, 0, why, whylen };
	char w[32];
	uint64_t sel, um, mask, match, v;
	bool seen, have_action = false, have_fixed = false;
	bool masked = false;
	uint32_t i;
	int error = 0;

	if (why != NULL && whylen > 0)
		why[0] = '\0';
	if (text == NULL || out == NULL)
		return (EINVAL);
	if ((pf = calloc(1, sizeof(*pf))) == NULL)
		return (ENOMEM);
	f = &pf->f;
	while (error == 0 && *ps.p != '\0') {
		ps.line++;
		if (f->nevents < VPMU_EVENT_FILTER_MAX)
			pf->line[f->nevents] = ps.line;
		if (!word(&ps, w, sizeof(w)))
			;				/* blank or comment */
		else if (strcmp(w, "allow") == 0 || strcmp(w, "deny") == 0) {
			if (have_action)
				error = fail(&ps, EINVAL, "a second allow or deny line");
			else {
				have_action = true;
				f->action = w[0] == 'a' ? VPMU_FILTER_ALLOW : VPMU_FILTER_DENY;
				error = line_end(&ps);
			}
		} else if (strcmp(w, "fixed") == 0) {
			if (have_fixed)
				error = fail(&ps, EINVAL, "a second fixed line");
			else if ((error = number(&ps, "fixed", 0xFFFFFFFFull, &v)) == 0) {
				have_fixed = true;
				f->fixed_counter_bitmap = (uint32_t)v;
				error = line_end(&ps);
			}
		} else if (strcmp(w, "event") == 0) {
			um = 0;
			if ((error = number(&ps, "event", 0xFFF, &sel)) == 0 &&
			    (error = keyword(&ps, "umask", &seen)) == 0 && seen)
				error = number(&ps, "umask", 0xFF, &um);
			if (error == 0 && (error = line_end(&ps)) == 0 &&
			    (error = add_event(&ps, f, VPMU_FILTER_EVENT(sel, um))) == 0)
				pf->isev[f->nevents - 1] = true;
		} else if (strcmp(w, "raw") == 0) {
			if ((error = number(&ps, "raw", ~0ull, &v)) == 0 &&
			    (error = line_end(&ps)) == 0)
				error = add_event(&ps, f, v);
		} else if (strcmp(w, "masked") == 0) {
			masked = true;
			if ((error = keyword(&ps, "select", &seen)) == 0 && !seen)
				error = fail(&ps, EINVAL, "masked: \"select\" is missing");
			if (error == 0)
				error = number(&ps, "select", 0xFFF, &sel);
			if (error == 0 && (error = keyword(&ps, "mask", &seen)) == 0 && !seen)
				error = fail(&ps, EINVAL, "masked: \"mask\" is missing");
			if (error == 0)
				error = number(&ps, "mask", 0xFF, &mask);
			if (error == 0 && (error = keyword(&ps, "match", &seen)) == 0 && !seen)
				error = fail(&ps, EINVAL, "masked: \"match\" is missing");
			if (error == 0)
				error = number(&ps, "match", 0xFF, &match);
			if (error == 0)
				error = keyword(&ps, "exclude", &seen);
			if (error == 0 && (error = line_end(&ps)) == 0)
				error = add_event(&ps, f,
				    VPMU_FILTER_MASKED_ENTRY(sel, mask, match, seen));
		} else
			error = fail(&ps, EINVAL, "unknown keyword \"%s\"", w);
		while (*ps.p != '\0' && *ps.p++ != '\n')
			;				/* the rest: a comment */
	}
	if (error == 0 && !have_action) {
		ps.line = ps.line == 0 ? 1 : ps.line;
		error = fail(&ps, EINVAL, "no allow or deny line");
	}
	if (error == 0 && masked) {
		/* "event" lines become masked entries; "raw" ones are taken as masked. */
		f->flags = VPMU_FILTER_MASKED;
		for (i = 0; i < f->nevents; i++)
			if (pf->isev[i])
				f->events[i] |= M_MASK;
	}
	for (i = 0; error == 0 && masked && i < f->nevents; i++)
		if (f->events[i] & ~(SEL_LO | SEL_HI | UMASK | M_EXCLUDE | M_MASK)) {
			ps.line = pf->line[i];
			error = fail(&ps, EINVAL, "raw 0x%llx is not a valid masked entry "
			    "(a bit outside select, match, exclude and mask)",
			    (unsigned long long)f->events[i]);
		}
	if (error == 0)
		*out = *f;
	free(pf);
	return (error);
}

/* ---- configuration and the live VM ------------------------------------------ */

int
vpmu_config_set_event_filter(struct vpmu_config *cfg, const struct vpmu_event_filter *f)
{
	int error;

	if (cfg == NULL)
		return (EINVAL);
	if (f == NULL) {
		cfg->has_filter = false;
		return (0);
	}
	if ((error = vpmu_event_filter_check(f)) != 0)
		return (error);
	cfg->filter = *f;
	cfg->has_filter = true;
	return (0);
}

int
vpmu__gpmu_set_filter(struct vpmu_vm *vm, const struct vpmu_event_filter *f)
{
	struct gpmu *g = vm->gpmu;
	const struct vpmu__gpmu_ext *ext;
	struct vpmu_event_filter *nf = NULL, *old;
	unsigned cpu;
	int error;

	if (f != NULL) {
		if ((error = check_vendor(f, g->model.vendor)) != 0)
			return (error);
		if ((nf = malloc(sizeof(*nf))) == NULL)
			return (ENOMEM);
		*nf = *f;
	}
	/*
	 * KVM's vPMU applies it (kvm mode): KVM first, which may refuse it;
	 * one change at a time, so that KVM and the VM hold the same filter.
	 */
	pthread_mutex_lock(&g->filter_mtx);
	if ((ext = gpmu_ext(g)) != NULL && (error = ext->filter(ext->arg, f)) != 0) {
		pthread_mutex_unlock(&g->filter_mtx);
		free(nf);
		return (error);
	}
	vpmu__vm_lock(vm);
	old = g->filter;
	g->filter = nf;
	/* As KVM: every counter of every vCPU is reprogrammed before its next entry. */
	for (cpu = 0; cpu < vm->nvcpus; cpu++)
		gpmu_mark(&g->vcpu[cpu], g->global_ctrl_valid);
	vpmu__vm_unlock(vm);
	pthread_mutex_unlock(&g->filter_mtx);
	free(old);
	return (0);
}

int
vpmu_vm_set_event_filter(struct vpmu_vm *vm, const struct vpmu_event_filter *f)
{
	if (vm == NULL || vm->gpmu == NULL)
		return (EINVAL);
	return (vpmu__gpmu_set_filter(vm, f));
}

int
vpmu_vm_get_event_filter(struct vpmu_vm *vm, struct vpmu_event_filter *out)
{
	int error = 0;

	if (vm == NULL || out == NULL || vm->gpmu == NULL)
		return (EINVAL);
	vpmu__vm_lock(vm);
	if (vm->gpmu->filter == NULL)
		error = ENOENT;
	else
		*out = *vm->gpmu->filter;
	vpmu__vm_unlock(vm);
	return (error);
}

/* gpmu.c, VM lock held: may GP counter sel / fixed counter idx count? */
bool
gpmu_filter_gp(const struct gpmu *g, uint64_t sel)
{
	return (g->filter == NULL || gp_allowed(g->filter, g->model.vendor, sel));
}

bool
gpmu_filter_fixed(const struct gpmu *g, unsigned idx)
{
	return (g->filter == NULL || fixed_allowed(g->filter, idx));
}
