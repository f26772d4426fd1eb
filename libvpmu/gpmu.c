/*
 * gpmu.c -- the guest-visible PMU, vendor-neutral part: the counters of each
 * vCPU as views of core PMCs, when they count, global control and status,
 * overflow and PMIs, reset, and the MSR entry points that hand an access
 * to the vendor's table (intel.c, amd.c).  Elsewhere: gpmu_cpuid.c the
 * model's CPUID leaves and vendor identity; gpmu_report.c the counter
 * report; filter.c the event filter.
 *
 * A counter counts when its controls say so (event select EN and USR/OS,
 * or the fixed-control nibble) and, where the model has one, its
 * GLOBAL_CTRL bit is set.  Its value is the core PMC's value masked to the
 * counter's width; an overflow is a crossing of that width, seen at the
 * first check after it (the KVM glue checks after every exit, and the
 * exact source exits after every instruction, so there it is exact).
 *
 * A trapped write to a control is recorded and its counter marked; the
 * counters marked are programmed together before the next entry
 * (vpmu__gpmu_flush from vpmu_vcpu_enter), so those that start counting
 * at one flush were enabled by one access and form one group.
 */
#include <errno.h>
#include <string.h>

#include "arch.h"
#include "gpmu.h"

static uint64_t
width_mask(unsigned width)
{
	return (width >= 64 ? ~0ull : (1ull << width) - 1);
}

/* ---- configuration ------------------------------------------------------- */

int
vpmu_config_set_model(struct vpmu_config *cfg, const struct vpmu_model *m)
{
	struct vpmu_config saved;
	int error;

	if (cfg == NULL || vpmu_model_check(m, NULL, 0) != 0)
		return (EINVAL);
	saved = *cfg;
	/* The model's classes replace the guest-visible ones; PV stays. */
	(void)vpmu_config_set_class(cfg, VPMU_CLASS_IAP, 0, 0);
	(void)vpmu_config_set_class(cfg, VPMU_CLASS_IAF, 0, 0);
	(void)vpmu_config_set_class(cfg, VPMU_CLASS_K8, 0, 0);
	error = 0;
	if (m->vendor == VPMU_VENDOR_INTEL) {
		if (m->gp > 0)
			error = vpmu_config_set_class(cfg, VPMU_CLASS_IAP, m->gp, m->width);
		if (error == 0 && m->fixed > 0)
			error = vpmu_config_set_class(cfg, VPMU_CLASS_IAF, m->fixed,
			    m->fixed_width);
	} else if (m->vendor == VPMU_VENDOR_AMD && m->gp > 0)
		error = vpmu_config_set_class(cfg, VPMU_CLASS_K8, m->gp, m->width);
	if (error == 0)
		cfg->model = *m;
	else
		*cfg = saved;			/* all or nothing */
	return (error);
}

int
vpmu_vm_get_model(const struct vpmu_vm *vm, struct vpmu_model *m)
{
	if (vm == NULL || m == NULL || vm->gpmu == NULL)
		return (EINVAL);
	*m = vm->gpmu->model;
	return (0);
}

/* ---- life cycle ----------------------------------------------------------- */

static void
ctr_setup(struct gpmu_ctr *c, struct vpmu_pmc *pm, unsigned width, unsigned gbit, bool fixed)
{
	memset(c, 0, sizeof(*c));
	c->pm = pm;
	c->mask = width_mask(width);
	c->gbit = gbit;
	c->fixed = fixed;
}

/* The vendor's ranges in spans, each with its MSR -> range map. */
static int
spans_build(struct gpmu *g)
{
	const struct gpmu_vendor *vd = g->vendor;
	struct gpmu_span *s;
	uint32_t lo, hi;
	size_t i, j;

	for (i = 0; vd != NULL && i < vd->nranges; i++) {
		lo = vd->ranges[i].base;
		hi = lo + vd->ranges[i].count;
		for (j = 0; j < g->nspan; j++) {
			s = &g->span[j];
			if (lo < s->base + s->count + GPMU_SPAN_GAP && s->base < hi + GPMU_SPAN_GAP)
				break;
		}
		if (j == g->nspan) {
			VPMU_ASSERT(g->nspan < GPMU_MAX_SPANS);
			g->span[g->nspan++] = (struct gpmu_span){ lo, hi - lo, NULL };
			continue;
		}
		s = &g->span[j];
		if (hi > s->base + s->count)
			s->count = hi - s->base;
		if (lo < s->base) {
			s->count += s->base - lo;
			s->base = lo;
		}
	}
	for (j = 0; j < g->nspan; j++) {
		s = &g->span[j];
		if ((s->map = calloc(s->count, 1)) == NULL)
			return (ENOMEM);
		for (i = 0; i < vd->nranges; i++)
			if (vd->ranges[i].base - s->base < s->count)
				memset(s->map + (vd->ranges[i].base - s->base), (int)(i + 1),
				    vd->ranges[i].count);
	}
	return (0);
}

int
vpmu__gpmu_init(struct vpmu_vm *vm, const struct vpmu_model *m)
{
	struct gpmu *g;
	struct vpmu_pmc *pm;
	unsigned cpu, i;
	uint32_t gpcls = m->vendor == VPMU_VENDOR_AMD ? VPMU_CLASS_K8 : VPMU_CLASS_IAP;
	int error;

	if ((g = calloc(1, sizeof(*g))) == NULL)
		return (ENOMEM);
	if ((g->vcpu = calloc(vm->nvcpus, sizeof(*g->vcpu))) == NULL) {
		free(g);
		return (ENOMEM);
	}
	pthread_mutex_init(&g->filter_mtx, NULL);
	g->model = *m;
	g->vendor = m->vendor == VPMU_VENDOR_INTEL ? &gpmu_intel :
	    m->vendor == VPMU_VENDOR_AMD ? &gpmu_amd : NULL;
	g->global_ctrl_valid = ((1ull << m->gp) - 1) |
	    (((1ull << m->fixed) - 1) << 32);
	vm->gpmu = g;
	if ((error = spans_build(g)) != 0)
		return (error);		/* vpmu_vm_destroy() cleans up */
	for (cpu = 0; cpu < vm->nvcpus; cpu++) {
		for (i = 0; i < m->gp; i++) {
			if ((error = vpmu__model_pmc_create(vm, cpu, gpcls, i, &pm)) != 0)
				return (error);	/* vpmu_vm_destroy() cleans up */
			ctr_setup(&g->vcpu[cpu].gp[i], pm, m->width, i, false);
		}
		for (i = 0; i < m->fixed; i++) {
			if ((error = vpmu__model_pmc_create(vm, cpu, VPMU_CLASS_IAF, i,
			    &pm)) != 0)
				return (error);
			ctr_setup(&g->vcpu[cpu].fx[i], pm, m->fixed_width, 32 + i, true);
		}
		gpmu_reset_vcpu(vm, &g->vcpu[cpu]);
	}
	return (0);
}

void
vpmu__gpmu_fini(struct vpmu_vm *vm)
{
	unsigned j;

	if (vm->gpmu == NULL)
		return;
	for (j = 0; j < vm->gpmu->nspan; j++)
		free(vm->gpmu->span[j].map);
	free(vm->gpmu->vcpu);
	free(vm->gpmu->filter);
	pthread_mutex_destroy(&vm->gpmu->filter_mtx);
	free(vm->gpmu);
	vm->gpmu = NULL;
}

/*
 * The hooks take over (or, NULL, give back) the guest's counters; the
 * machine's event filter goes to the new hooks first, and an error from
 * them leaves everything as it was.
 */
int
vpmu__gpmu_set_external(struct vpmu_vm *vm, const struct vpmu__gpmu_ext *ext)
{
	struct gpmu *g = vm->gpmu;
	int error = 0;

	pthread_mutex_lock(&g->filter_mtx);
	if (ext != NULL && g->filter != NULL)
		error = ext->filter(ext->arg, g->filter);
	if (error == 0)
		__atomic_store_n(&g->ext, ext, __ATOMIC_RELEASE);
	pthread_mutex_unlock(&g->filter_mtx);
	return (error);
}

/* ---- counters --------------------------------------------------------------- */

static struct gpmu_ctr *
ctr_of(struct gpmu_vcpu *v, unsigned gbit)
{
	return (gbit >= 32 ? &v->fx[gbit - 32] : &v->gp[gbit]);
}

/* VM lock held. */
static void
ctr_set(struct vpmu_vm *vm, struct gpmu_ctr *c, uint64_t value)
{
	c->last = value & c->mask;
	vpmu__model_pmc_set(vm, c->pm, value & c->mask);
}

/* A write to a counter: the core PMC, under the VM lock. */
void
gpmu_ctr_write(struct vpmu_vm *vm, struct gpmu_ctr *c, uint64_t value)
{
	GPMU_STORE(c->used, true);
	vpmu__vm_lock(vm);
	ctr_set(vm, c, value);
	vpmu__vm_unlock(vm);
}

int
gpmu_ctr_update(struct vpmu_vm *vm, struct gpmu_vcpu *v, struct gpmu_ctr *c,
    const struct vpmu_event_spec *spec, bool run)
{
	c->running = run;
	if (run)
		v->running |= 1ull << c->gbit;
	else
		v->running &= ~(1ull << c->gbit);
	if (spec != NULL && spec->event != VPMU_EV_NONE)
		c->shown = *spec;
	return (vpmu__model_pmc_program(vm, c->pm, spec, run));
}

/*
 * What GP counter i's recorded controls ask for: its event in spec, and
 * whether it counts.  It counts when its select names an event, EN is
 * set, USR or OS is (neither: no privilege level is counted), and -- with
 * a global control (Intel v2+, AMD PerfMonV2) -- its GLOBAL_CTRL bit is.
 */
/* The event GP select sel names, in spec: false if none the vendor knows. */
static bool
gp_spec(const struct gpmu *g, uint64_t sel, struct vpmu_event_spec *spec)
{
	bool known;

	memset(spec, 0, sizeof(*spec));
	known = g->vendor->event(sel, spec);
	if (sel & SEL_USR)
		spec->flags |= VPMU_EVF_USR;
	if (sel & SEL_OS)
		spec->flags |= VPMU_EVF_OS;
	if (sel & SEL_EDGE)
		spec->flags |= VPMU_EVF_EDGE;
	if (sel & SEL_INV)
		spec->flags |= VPMU_EVF_INV;
	spec->cmask = SEL_CMASK(sel);
	return (known);
}

static bool
gp_wants(const struct gpmu *g, struct gpmu_vcpu *v, unsigned i, struct vpmu_event_spec *spec)
{
	struct gpmu_ctr *c = &v->gp[i];
	uint64_t sel = GPMU_LOAD(c->ctl);
	bool run;

	run = gp_spec(g, sel, spec);
	c->intr = (sel & SEL_INT) != 0;
	run = run && (sel & SEL_EN) && (sel & (SEL_USR | SEL_OS)) &&
	    (g->model.version < 2 || (GPMU_LOAD(v->global_ctrl) & (1ull << i)));
	/* A counter the event filter disallows is not programmed (KVM's reprogram_counter). */
	c->filtered = run && !gpmu_filter_gp(g, sel);
	return (run && !c->filtered);
}

/*
 * Fixed counter i counts its architectural event (SDM Vol. 3B 20.2.2,
 * arch.h).  Its nibble: bit 0 OS, bit 1 USR, bit 3 PMI.
 */
/* Fixed counter i's event under its nibble nib, in spec. */
static void
fixed_spec(unsigned i, unsigned nib, struct vpmu_event_spec *spec)
{
	memset(spec, 0, sizeof(*spec));
	spec->event = vpmu__arch_fixed_event(i);
	if (nib & 0x1)
		spec->flags |= VPMU_EVF_OS;
	if (nib & 0x2)
		spec->flags |= VPMU_EVF_USR;
}

static bool
fixed_wants(const struct gpmu *g, struct gpmu_vcpu *v, unsigned i, struct vpmu_event_spec *spec)
{
	struct gpmu_ctr *c = &v->fx[i];
	unsigned nib = (GPMU_LOAD(v->fixed_ctrl) >> (4 * i)) & 0xF;
	bool on;

	fixed_spec(i, nib, spec);
	GPMU_STORE(c->ctl, nib);
	c->intr = (nib & 0x8) != 0;
	on = (nib & 0x3) != 0 && (GPMU_LOAD(v->global_ctrl) & (1ull << c->gbit)) != 0;
	c->filtered = on && !gpmu_filter_fixed(g, i);	/* as for a GP counter */
	return (on && !c->filtered);
}

static bool
ctr_wants(const struct gpmu *g, struct gpmu_vcpu *v, unsigned gbit,
    struct vpmu_event_spec *spec)
{
	return (gbit >= 32 ? fixed_wants(g, v, gbit - 32, spec) : gp_wants(g, v, gbit, spec));
}

int
gpmu_reprogram_gp(struct vpmu_vm *vm, struct gpmu_vcpu *v, unsigned i)
{
	struct vpmu_event_spec spec;
	bool run = gp_wants(gpmu_of(vm), v, i, &spec);

	return (gpmu_ctr_update(vm, v, &v->gp[i], &spec, run));
}

int
gpmu_reprogram_fixed(struct vpmu_vm *vm, struct gpmu_vcpu *v, unsigned i)
{
	struct vpmu_event_spec spec;
	bool run = fixed_wants(gpmu_of(vm), v, i, &spec);

	return (gpmu_ctr_update(vm, v, &v->fx[i], &spec, run));
}

void
gpmu_set_global_ctrl(struct gpmu_vcpu *v, uint64_t val)
{
	uint64_t changed = v->global_ctrl ^ val;

	GPMU_STORE(v->global_ctrl, val);
	if (changed != 0)
		gpmu_mark(v, changed);
}

/* The slot of counter gbit in a per-counter array: GP first, then fixed. */
#define CTR_SLOT(gbit)	((gbit) >= 32 ? GPMU_MAX_GP + (gbit) - 32 : (gbit))

/*
 * Before the VM lock is taken for a flush: the source asked about the
 * events the counters marked since the last one name (vpmu__pmc_ask()), so
 * that the flush finds its answers.  Reads what the vCPU's thread wrote,
 * changes nothing; a counter marked after this look is asked about with
 * the lock held.
 */
void
vpmu__gpmu_ask(struct vpmu_vm *vm, unsigned cpu)
{
	const struct gpmu_vcpu *v = &gpmu_of(vm)->vcpu[cpu];
	uint64_t m = __atomic_load_n(&v->pending, __ATOMIC_ACQUIRE);
	unsigned b;

	for (; m != 0; m &= m - 1) {
		b = (unsigned)__builtin_ctzll(m);
		vpmu__gpmu_ask_ctl(vm, b, b >= 32 ? GPMU_LOAD(v->fixed_ctrl) :
		    GPMU_LOAD(v->gp[b].ctl));
	}
}

void
vpmu__gpmu_ask_ctl(struct vpmu_vm *vm, unsigned gbit, uint64_t ctl)
{
	struct vpmu_event_spec spec;

	if (gbit >= 32)
		fixed_spec(gbit - 32, (ctl >> (4 * (gbit - 32))) & 0xF, &spec);
	else if (!gp_spec(gpmu_of(vm), ctl, &spec))
		return;
	vpmu__pmc_ask(vm, &spec);
}

int
vpmu__gpmu_flush(struct vpmu_vm *vm, unsigned cpu)
{
	const struct gpmu *g = gpmu_of(vm);
	struct gpmu_vcpu *v = &g->vcpu[cpu];
	struct vpmu_event_spec spec[GPMU_MAX_GP + GPMU_MAX_FIXED];
	bool run[GPMU_MAX_GP + GPMU_MAX_FIXED];
	uint64_t marked = __atomic_exchange_n(&v->pending, 0, __ATOMIC_ACQUIRE), on = 0, m;
	uint32_t group = 0;
	unsigned b;
	int error = 0, e;

	for (m = marked; m != 0; m &= m - 1) {
		b = (unsigned)__builtin_ctzll(m);
		run[CTR_SLOT(b)] = ctr_wants(g, v, b, &spec[CTR_SLOT(b)]);
		if (run[CTR_SLOT(b)] && !ctr_of(v, b)->running)
			on |= 1ull << b;
	}
	/*
	 * Counters that start at one flush were switched on by one access
	 * (a GLOBAL_CTRL write, say): one group, scheduled as a unit by the
	 * multiplexer.  One that starts alone counts alone.
	 */
	if (on & (on - 1))
		group = ++vm->next_group;
	for (m = on; m != 0; m &= m - 1)
		ctr_of(v, (unsigned)__builtin_ctzll(m))->pm->group = group;
	for (m = marked; m != 0; m &= m - 1) {
		b = (unsigned)__builtin_ctzll(m);
		if ((e = gpmu_ctr_update(vm, v, ctr_of(v, b), &spec[CTR_SLOT(b)],
		    run[CTR_SLOT(b)])) != 0)
			error = e;
	}
	return (error);
}

/*
 * Architectural reset: counters, selects and fixed control 0, status 0;
 * GLOBAL_CTRL "sets bits n-1:0" (SDM Vol. 3B table 10-1) where the model
 * has one, so a v1-style guest finds its GP counters globally enabled.
 */
void
gpmu_reset_vcpu(struct vpmu_vm *vm, struct gpmu_vcpu *v)
{
	const struct gpmu *g = gpmu_of(vm);
	static const struct vpmu_event_spec none;	/* no event: nothing unsupported */
	unsigned i;

	GPMU_STORE(v->fixed_ctrl, 0);
	GPMU_STORE(v->global_status, 0);
	__atomic_store_n(&v->pending, 0, __ATOMIC_RELAXED);
	v->running = 0;
	for (i = 0; i < GPMU_MAX_GP; i++)
		memset(&v->gp[i].shown, 0, sizeof(v->gp[i].shown));
	for (i = 0; i < GPMU_MAX_FIXED; i++)
		memset(&v->fx[i].shown, 0, sizeof(v->fx[i].shown));
	__atomic_store_n(&v->pmi_pending, 0, __ATOMIC_RELAXED);
	GPMU_STORE(v->global_ctrl, g->model.version >= 2 ? (1ull << g->model.gp) - 1 : 0);
	for (i = 0; i < g->model.gp; i++) {
		GPMU_STORE(v->gp[i].ctl, 0);
		(void)gpmu_ctr_update(vm, v, &v->gp[i], &none, false);
		ctr_set(vm, &v->gp[i], 0);
		GPMU_STORE(v->gp[i].used, false);
		v->gp[i].intr = false;
		v->gp[i].filtered = false;
	}
	for (i = 0; i < g->model.fixed; i++) {
		GPMU_STORE(v->fx[i].ctl, 0);
		(void)gpmu_ctr_update(vm, v, &v->fx[i], &none, false);
		ctr_set(vm, &v->fx[i], 0);
		GPMU_STORE(v->fx[i].used, false);
		v->fx[i].intr = false;
		v->fx[i].filtered = false;
	}
}

/* ---- entry points ------------------------------------------------------------ */

static const struct gpmu_range *
range_find(const struct gpmu_vendor *vd, uint32_t msr, unsigned *idx)
{
	size_t i;

	for (i = 0; i < vd->nranges; i++)
		if (msr - vd->ranges[i].base < vd->ranges[i].count) {
			*idx = msr - vd->ranges[i].base;
			return (&vd->ranges[i]);
		}
	return (NULL);
}

/*
 * Find msr in the model's vendor table.  An MSR of the other vendor's PMU
 * (or any PMU MSR under "none") exists on no CPU the guest was told about:
 * #GP.  Anything else is not a PMU MSR.
 */
static int
msr_lookup(struct vpmu_vm *vm, uint32_t msr, const struct gpmu_range **rp, unsigned *idx)
{
	const struct gpmu *g = gpmu_of(vm);
	const struct gpmu_vendor *other;
	const struct gpmu_span *s;
	unsigned j, k;

	/* The model's own MSRs first, by their spans' maps: the accesses that matter. */
	for (j = 0; j < g->nspan; j++) {	/* Intel: one span; AMD: two */
		s = &g->span[j];
		if (msr - s->base < s->count) {
			if ((k = s->map[msr - s->base]) == 0)
				break;
			*rp = &g->vendor->ranges[k - 1];
			*idx = msr - (*rp)->base;
			return (VPMU_MSR_OK);
		}
	}
	other = g->vendor == &gpmu_intel ? &gpmu_amd : &gpmu_intel;
	if (range_find(other, msr, idx) != NULL ||
	    (g->vendor == NULL && range_find(&gpmu_amd, msr, idx) != NULL))
		return (VPMU_MSR_GP);
	return (VPMU_MSR_NOT_PMU);
}

int
vpmu__gpmu_msr(struct vpmu_vm *vm, unsigned cpu, uint32_t msr, bool write, uint64_t *val)
{
	const struct gpmu_range *r;
	unsigned idx;
	int res;

	if (gpmu_ext(vm->gpmu) != NULL)
		return (VPMU_MSR_NOT_PMU);	/* KVM's vPMU answers */
	if ((res = msr_lookup(vm, msr, &r, &idx)) != VPMU_MSR_OK)
		return (res);
	return (write ? r->wr(vm, &vm->gpmu->vcpu[cpu], idx, *val) :
	    r->rd(vm, &vm->gpmu->vcpu[cpu], idx, val));
}

/*
 * RDPMC with ECX = ecx, VM lock held: VPMU_MSR_OK with the counter in *val,
 * or VPMU_MSR_GP.  Intel (SDM Vol. 2B, RDPMC): bit 30 selects the fixed
 * counters, the rest of bits 29:0 the counter; bit 31 (a "fast" read of
 * the low 32 bits on some early processors) is not offered and faults, as
 * under KVM.  AMD (APM Vol. 3, RDPMC): ECX is the counter's number, up
 * to the model's count.  The value is the one RDMSR of the counter gives.
 */
int
vpmu__gpmu_rdpmc(struct vpmu_vm *vm, unsigned cpu, uint32_t ecx, uint64_t *val)
{
	const struct gpmu *g = vm->gpmu;
	struct gpmu_ctr *c;
	uint32_t idx = ecx & 0x3FFFFFFFu;

	if (g->vendor == NULL)
		return (VPMU_MSR_GP);
	if (g->model.vendor == VPMU_VENDOR_AMD) {
		if (ecx >= g->model.gp)
			return (VPMU_MSR_GP);
		c = &g->vcpu[cpu].gp[ecx];
	} else if (ecx & (1u << 31))
		return (VPMU_MSR_GP);
	else if (ecx & (1u << 30)) {
		if (idx >= g->model.fixed)
			return (VPMU_MSR_GP);
		c = &g->vcpu[cpu].fx[idx];
	} else {
		if (idx >= g->model.gp)
			return (VPMU_MSR_GP);
		c = &g->vcpu[cpu].gp[idx];
	}
	*val = vpmu__model_pmc_value(vm, c->pm, NULL) & c->mask;
	return (VPMU_MSR_OK);
}

int
vpmu_msr_read(struct vpmu_vm *vm, unsigned cpu, uint32_t msr, uint64_t *val,
    enum vpmu_msr_verdict *verdict)
{
	if (vm == NULL || val == NULL || verdict == NULL || vm->gpmu == NULL ||
	    cpu >= vm->nvcpus)
		return (EINVAL);
	*verdict = vpmu__gpmu_msr(vm, cpu, msr, false, val);
	return (0);
}

/* Outside the exit contract a write takes effect at once: no entry follows. */
int
vpmu_msr_write(struct vpmu_vm *vm, unsigned cpu, uint32_t msr, uint64_t val,
    enum vpmu_msr_verdict *verdict)
{
	if (vm == NULL || verdict == NULL || vm->gpmu == NULL || cpu >= vm->nvcpus)
		return (EINVAL);
	*verdict = vpmu__gpmu_msr(vm, cpu, msr, true, &val);
	if (vpmu__gpmu_pending(vm, cpu)) {
		vpmu__gpmu_ask(vm, cpu);
		vpmu__vm_lock(vm);
		(void)vpmu__gpmu_flush(vm, cpu);
		vpmu__vm_unlock(vm);
	}
	return (0);
}

int
vpmu_msr_is_pmu(uint32_t msr)
{
	unsigned idx;

	return (range_find(&gpmu_intel, msr, &idx) != NULL ||
	    range_find(&gpmu_amd, msr, &idx) != NULL);
}

/*
 * Spans of the two vendors' ranges: sorted, and joined where less than
 * SPAN_GAP MSRs lie between (Intel's all fit in one, AMD's in two).
 */
#define SPAN_GAP	2048u

int
vpmu_msr_ranges(struct vpmu_msr_range *out, unsigned *n)
{
	const struct gpmu_vendor *vd[2] = { &gpmu_intel, &gpmu_amd };
	struct vpmu_msr_range all[32], t;
	unsigned na = 0, ns = 0, i, j;

	if (n == NULL)
		return (EINVAL);
	for (i = 0; i < 2; i++)
		for (j = 0; j < vd[i]->nranges; j++) {
			VPMU_ASSERT(na < VPMU_ARRAY_SIZE(all));
			all[na].base = vd[i]->ranges[j].base;
			all[na++].count = vd[i]->ranges[j].count;
		}
	for (i = 1; i < na; i++)		/* insertion sort by base */
		for (j = i; j > 0 && all[j - 1].base > all[j].base; j--) {
			t = all[j];
			all[j] = all[j - 1];
			all[j - 1] = t;
		}
	for (i = 0; i < na; i++) {
		if (ns > 0 && all[i].base - (all[ns - 1].base + all[ns - 1].count) < SPAN_GAP) {
			all[ns - 1].count = all[i].base + all[i].count - all[ns - 1].base;
			continue;
		}
		all[ns++] = all[i];
	}
	if (*n < ns || out == NULL) {
		*n = ns;
		return (EINVAL);
	}
	memcpy(out, all, ns * sizeof(*out));
	*n = ns;
	return (0);
}

int
vpmu_vcpu_reset(struct vpmu_vm *vm, unsigned cpu)
{
	if (vm == NULL || vm->gpmu == NULL || cpu >= vm->nvcpus)
		return (EINVAL);
	vpmu__vm_lock(vm);
	gpmu_reset_vcpu(vm, &vm->gpmu->vcpu[cpu]);
	vpmu__vm_unlock(vm);
	return (0);
}

/* Per-vCPU and taken before every entry: an atomic exchange, no lock. */
int
vpmu_vcpu_take_pmi(struct vpmu_vm *vm, unsigned cpu, int *pending)
{
	if (vm == NULL || pending == NULL || vm->gpmu == NULL || cpu >= vm->nvcpus)
		return (EINVAL);
	*pending = __atomic_exchange_n(&vm->gpmu->vcpu[cpu].pmi_pending, 0, __ATOMIC_ACQ_REL);
	return (0);
}

/* Did the counter cross its width since the last look? */
static void
ctr_check(struct vpmu_vm *vm, struct gpmu_vcpu *v, struct gpmu_ctr *c, bool has_status)
{
	uint64_t raw = vpmu__model_pmc_value(vm, c->pm, NULL);
	unsigned __int128 reach = (unsigned __int128)(c->last & c->mask) + (raw - c->last);

	if (reach > c->mask) {
		if (has_status)
			GPMU_STORE(v->global_status, v->global_status | 1ull << c->gbit);
		if (c->intr)
			__atomic_store_n(&v->pmi_pending, 1, __ATOMIC_RELEASE);
		/*
		 * The source's period ran out with the wrap: the next overflow
		 * is a whole width away, not where the old period repeats (a
		 * source that ends its runs there would stop at every event).
		 */
		vpmu__pmc_arm(vm, c->pm);
	}
	c->last = raw;
}

/* Only the counters counting now. */
void
vpmu__gpmu_check_running(struct vpmu_vm *vm, unsigned cpu)
{
	struct gpmu *g = vm->gpmu;
	struct gpmu_vcpu *v = &g->vcpu[cpu];
	uint64_t m = v->running;
	unsigned b;

	while (m != 0) {
		b = (unsigned)__builtin_ctzll(m);
		m &= m - 1;
		ctr_check(vm, v, b >= 32 ? &v->fx[b - 32] : &v->gp[b],
		    g->model.version >= 2);
	}
}

int
vpmu_vcpu_check_overflow(struct vpmu_vm *vm, unsigned cpu)
{
	if (vm == NULL || vm->gpmu == NULL || cpu >= vm->nvcpus)
		return (EINVAL);
	vpmu__vm_lock(vm);
	vpmu__gpmu_check_overflow(vm, cpu);
	vpmu__vm_unlock(vm);
	return (0);
}
