/*
 * intel.c -- Intel architectural performance monitoring, versions 1 to 5,
 * as the guest sees it through MSRs (SDM Vol. 3B ch. 20; Vol. 4 MSR
 * tables), with KVM's rules for what faults:
 *
 *   IA32_PMCx        0x0C1  legacy write: bits 31:0, sign-extended from bit 31
 *   IA32_PERFEVTSELx 0x186  #GP on reserved bits 63:32 and 21 (AnyThread);
 *                           with TSX, bit 32 and (counter 2) bit 33 allowed
 *   IA32_FIXED_CTRx  0x309  v2+; written value masked to the fixed width
 *   PERF_CAPABILITIES 0x345 read-only; exists with PDCM (fw-writes=1): bit 13
 *   FIXED_CTR_CTRL   0x38D  v2+; per counter bits 0 (OS), 1 (USR), 3 (PMI)
 *   GLOBAL_STATUS    0x38E  v2+; read-only: a write #GPs
 *   GLOBAL_CTRL      0x38F  v2+; #GP on bits of counters that do not exist
 *   GLOBAL_OVF_CTRL  0x390  v2+; clears status bits, reads 0
 *   IA32_A_PMCx      0x4C1  full-width alias, with fw-writes only; #GP above width
 *
 * Counters past the advertised number #GP, all of them: libvpmu has no
 * equivalent of KVM's leniency for 0xC1/0xC2 (reads 0, writes dropped),
 * which exists for old guests probing P6 counters; a guest told "n
 * counters" that touches counter n gets the fault the SDM promises.
 */
#include "arch.h"
#include "gpmu.h"

#define EVTSEL_RESERVED	0xFFFFFFFF00200000ull	/* bits 63:32, 21 */
#define EVTSEL_IN_TX	(1ull << 32)	/* in transactions only (with TSX) */
#define EVTSEL_IN_TXCP	(1ull << 33)	/* committed ones only (counter 2, TSX) */
#define PERF_CAP_FW_WRITE (1ull << 13)
#define GLOBAL_OVF_EXTRA ((1ull << 62) | (1ull << 63))	/* OvfBuf, CondChgd */

/*
 * The event a select names: an architectural event by its event select
 * and unit mask (arch.h), anything else raw.
 */
static bool
intel_event(uint64_t sel, struct vpmu_event_spec *spec)
{
	if ((sel & 0xFFFF) == 0)
		return (false);			/* no event selected at all */
	vpmu__arch_spec(sel & 0xFFFF, VPMU_VENDOR_INTEL, spec);
	return (true);
}

/* ---- handlers: idx is the offset in the range --------------------------- */

#define MODEL(vm)	(&gpmu_of(vm)->model)

static int
pmc_rd(struct vpmu_vm *vm, struct gpmu_vcpu *v, unsigned idx, uint64_t *val)
{
	if (idx >= MODEL(vm)->gp)
		return (VPMU_MSR_GP);
	*val = gpmu_ctr_read(vm, &v->gp[idx]);
	return (VPMU_MSR_OK);
}

/* A legacy write carries 32 bits, sign-extended from bit 31 (SDM 20.2.5). */
static int
pmc_wr(struct vpmu_vm *vm, struct gpmu_vcpu *v, unsigned idx, uint64_t val)
{
	if (idx >= MODEL(vm)->gp)
		return (VPMU_MSR_GP);
	gpmu_ctr_write(vm, &v->gp[idx], (uint64_t)(int64_t)(int32_t)val);
	return (VPMU_MSR_OK);
}

static int
apmc_rd(struct vpmu_vm *vm, struct gpmu_vcpu *v, unsigned idx, uint64_t *val)
{
	if (!MODEL(vm)->fw_writes)
		return (VPMU_MSR_GP);
	return (pmc_rd(vm, v, idx, val));
}

static int
apmc_wr(struct vpmu_vm *vm, struct gpmu_vcpu *v, unsigned idx, uint64_t val)
{
	if (!MODEL(vm)->fw_writes || idx >= MODEL(vm)->gp ||
	    (val & ~v->gp[idx].mask) != 0)
		return (VPMU_MSR_GP);
	gpmu_ctr_write(vm, &v->gp[idx], val);
	return (VPMU_MSR_OK);
}

static int
evtsel_rd(struct vpmu_vm *vm, struct gpmu_vcpu *v, unsigned idx, uint64_t *val)
{
	if (idx >= MODEL(vm)->gp)
		return (VPMU_MSR_GP);
	*val = v->gp[idx].ctl;
	return (VPMU_MSR_OK);
}

static int
evtsel_wr(struct vpmu_vm *vm, struct gpmu_vcpu *v, unsigned idx, uint64_t val)
{
	uint64_t rsvd = EVTSEL_RESERVED;

	if (__atomic_load_n(&gpmu_of(vm)->tsx, __ATOMIC_RELAXED))	/* KVM's rule with TSX */
		rsvd &= ~(EVTSEL_IN_TX | (idx == 2 ? EVTSEL_IN_TXCP : 0));
	if (idx >= MODEL(vm)->gp || (val & rsvd) != 0)
		return (VPMU_MSR_GP);
	if (v->gp[idx].used && v->gp[idx].ctl == val)
		return (VPMU_MSR_OK);		/* no change: nothing to reprogram */
	GPMU_STORE(v->gp[idx].ctl, val);
	GPMU_STORE(v->gp[idx].used, true);
	gpmu_mark(v, 1ull << idx);		/* programmed before the next entry */
	return (VPMU_MSR_OK);
}

static bool
has_fixed(struct vpmu_vm *vm, unsigned idx)
{
	return (MODEL(vm)->version >= 2 && idx < MODEL(vm)->fixed);
}

static int
fixed_rd(struct vpmu_vm *vm, struct gpmu_vcpu *v, unsigned idx, uint64_t *val)
{
	if (!has_fixed(vm, idx))
		return (VPMU_MSR_GP);
	*val = gpmu_ctr_read(vm, &v->fx[idx]);
	return (VPMU_MSR_OK);
}

static int
fixed_wr(struct vpmu_vm *vm, struct gpmu_vcpu *v, unsigned idx, uint64_t val)
{
	if (!has_fixed(vm, idx))
		return (VPMU_MSR_GP);
	gpmu_ctr_write(vm, &v->fx[idx], val);	/* masked to width, as KVM */
	return (VPMU_MSR_OK);
}

static int
perfcap_rd(struct vpmu_vm *vm, struct gpmu_vcpu *v, unsigned idx, uint64_t *val)
{
	(void)v;
	(void)idx;
	if (!MODEL(vm)->fw_writes)
		return (VPMU_MSR_GP);		/* no PDCM: no such MSR */
	*val = PERF_CAP_FW_WRITE;
	return (VPMU_MSR_OK);
}

static int
readonly_wr(struct vpmu_vm *vm, struct gpmu_vcpu *v, unsigned idx, uint64_t val)
{
	(void)vm;
	(void)v;
	(void)idx;
	(void)val;
	return (VPMU_MSR_GP);
}

/* The fixed control, the three global MSRs: one range, by offset from 0x38D. */
enum { G_FIXED_CTRL, G_STATUS, G_CTRL, G_OVF_CTRL };

static int
global_rd(struct vpmu_vm *vm, struct gpmu_vcpu *v, unsigned idx, uint64_t *val)
{
	if (MODEL(vm)->version < 2)
		return (VPMU_MSR_GP);
	switch (idx) {
	case G_FIXED_CTRL: *val = v->fixed_ctrl; break;
	case G_STATUS: *val = v->global_status; break;
	case G_CTRL: *val = v->global_ctrl; break;
	default: *val = 0; break;			/* OVF_CTRL reads 0 */
	}
	return (VPMU_MSR_OK);
}

static int
global_wr(struct vpmu_vm *vm, struct gpmu_vcpu *v, unsigned idx, uint64_t val)
{
	const struct gpmu *g = gpmu_of(vm);
	uint64_t fixed_valid = 0, changed, marks = 0;
	unsigned i;

	if (g->model.version < 2)
		return (VPMU_MSR_GP);
	switch (idx) {
	case G_FIXED_CTRL:
		for (i = 0; i < g->model.fixed; i++)
			fixed_valid |= 0xBull << (4 * i);
		if (val & ~fixed_valid)
			return (VPMU_MSR_GP);
		changed = v->fixed_ctrl ^ val;
		GPMU_STORE(v->fixed_ctrl, val);
		for (i = 0; i < g->model.fixed; i++) {
			if ((val >> (4 * i)) & 0xF)
				GPMU_STORE(v->fx[i].used, true);
			if ((changed >> (4 * i)) & 0xF)
				marks |= 1ull << (32 + i);
		}
		if (marks != 0)
			gpmu_mark(v, marks);
		return (VPMU_MSR_OK);
	case G_STATUS:
		return (VPMU_MSR_GP);			/* read-only */
	case G_CTRL:
		if (val & ~g->global_ctrl_valid)
			return (VPMU_MSR_GP);
		gpmu_set_global_ctrl(v, val);
		return (VPMU_MSR_OK);
	default:
		if (val & ~(g->global_ctrl_valid | GLOBAL_OVF_EXTRA))
			return (VPMU_MSR_GP);
		GPMU_STORE(v->global_status, v->global_status & ~val);
		return (VPMU_MSR_OK);
	}
}

static const struct gpmu_range intel_ranges[] = {
	{ GPMU_MSR_PMC0, VPMU_INTEL_MAX_GP, "IA32_PMC", pmc_rd, pmc_wr },
	{ GPMU_MSR_PERFEVTSEL0, VPMU_INTEL_MAX_GP, "IA32_PERFEVTSEL", evtsel_rd, evtsel_wr },
	{ GPMU_MSR_FIXED_CTR0, VPMU_INTEL_MAX_FIXED + 1, "IA32_FIXED_CTR", fixed_rd, fixed_wr },
	{ GPMU_MSR_PERF_CAP, 1, "IA32_PERF_CAPABILITIES", perfcap_rd, readonly_wr },
	{ GPMU_MSR_FIXED_CTR_CTRL, 4, "IA32_PERF_GLOBAL", global_rd, global_wr },
	{ GPMU_MSR_A_PMC0, VPMU_INTEL_MAX_GP, "IA32_A_PMC", apmc_rd, apmc_wr },
};

const struct gpmu_vendor gpmu_intel = {
	.ranges = intel_ranges,
	.nranges = VPMU_ARRAY_SIZE(intel_ranges),
	.event = intel_event,
};
