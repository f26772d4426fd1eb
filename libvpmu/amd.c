/*
 * amd.c -- AMD core performance counters as the guest sees them (APM Vol.
 * 2, 13.2), with KVM's rule that AMD never faults on a reserved bit: the
 * bits are dropped.  Counters are 48 bits wide; writes are not sign-extended.
 *
 *   PerfEvtSel0-3 / PerfCtr0-3  0xC0010000-3 / 0xC0010004-7  legacy (K7),
 *                               the same counters as core counters 0-3
 *   PERF_CTL0-5 / PERF_CTR0-5   0xC0010200-B, CTL even, CTR odd, with the
 *                               core extension (CPUID 0x80000001.ECX[23])
 *   PerfCntrGlobalStatus        0xC0000300  read-only: writes ignored
 *   PerfCntrGlobalCtl           0xC0000301  reserved bits dropped
 *   PerfCntrGlobalStatusClr     0xC0000302  clears status bits, reads 0
 *   PerfCntrGlobalStatusSet     0xC0000303  sets status bits, reads 0
 *   (the four global MSRs with PerfMonV2 only)
 *
 * A counter that does not exist (past gp, or core-extension MSRs without
 * the extension) #GPs: it is not a reserved bit, it is no MSR at all.
 */
#include "arch.h"
#include "gpmu.h"

/* Bits 63:36 (40-41 HostOnly/GuestOnly included), 21, 19 (APM 13.2.1). */
#define EVTSEL_RESERVED	0xFFFFFFF000280000ull

/*
 * The event a select names: an architectural event by its 12-bit event
 * select (bits 35:32 and 7:0) with unit mask 0 (arch.h), anything else raw.
 */
static bool
amd_event(uint64_t sel, struct vpmu_event_spec *spec)
{
	unsigned evsel = (unsigned)((sel & 0xFF) | ((sel >> 24) & 0xF00));
	unsigned umask = (sel >> 8) & 0xFF;

	if (evsel == 0 && umask == 0)
		return (false);			/* no event selected at all */
	vpmu__arch_spec(vpmu__amd_raw(evsel, umask), VPMU_VENDOR_AMD, spec);
	return (true);
}

#define MODEL(vm)	(&gpmu_of(vm)->model)

/* The two operations every counter MSR comes down to. */
static int
sel_access(struct vpmu_vm *vm, struct gpmu_vcpu *v, unsigned ctr, uint64_t *rd, uint64_t wr)
{
	if (ctr >= MODEL(vm)->gp)
		return (VPMU_MSR_GP);
	if (rd != NULL) {
		*rd = v->gp[ctr].ctl;
		return (VPMU_MSR_OK);
	}
	if (v->gp[ctr].used && v->gp[ctr].ctl == (wr & ~EVTSEL_RESERVED))
		return (VPMU_MSR_OK);		/* no change: nothing to reprogram */
	GPMU_STORE(v->gp[ctr].ctl, wr & ~EVTSEL_RESERVED);
	GPMU_STORE(v->gp[ctr].used, true);
	gpmu_mark(v, 1ull << ctr);		/* programmed before the next entry */
	return (VPMU_MSR_OK);
}

static int
ctr_access(struct vpmu_vm *vm, struct gpmu_vcpu *v, unsigned ctr, uint64_t *rd, uint64_t wr)
{
	if (ctr >= MODEL(vm)->gp)
		return (VPMU_MSR_GP);
	if (rd != NULL)
		*rd = gpmu_ctr_read(vm, &v->gp[ctr]);
	else
		gpmu_ctr_write(vm, &v->gp[ctr], wr);	/* masked to 48 bits */
	return (VPMU_MSR_OK);
}

static int
k7_sel_rd(struct vpmu_vm *vm, struct gpmu_vcpu *v, unsigned idx, uint64_t *val)
{
	return (sel_access(vm, v, idx, val, 0));
}

static int
k7_sel_wr(struct vpmu_vm *vm, struct gpmu_vcpu *v, unsigned idx, uint64_t val)
{
	return (sel_access(vm, v, idx, NULL, val));
}

static int
k7_ctr_rd(struct vpmu_vm *vm, struct gpmu_vcpu *v, unsigned idx, uint64_t *val)
{
	return (ctr_access(vm, v, idx, val, 0));
}

static int
k7_ctr_wr(struct vpmu_vm *vm, struct gpmu_vcpu *v, unsigned idx, uint64_t val)
{
	return (ctr_access(vm, v, idx, NULL, val));
}

/* Core extension: idx even is PERF_CTL(idx/2), odd is PERF_CTR(idx/2). */
static int
core_rd(struct vpmu_vm *vm, struct gpmu_vcpu *v, unsigned idx, uint64_t *val)
{
	if (!MODEL(vm)->core_ext)
		return (VPMU_MSR_GP);
	return ((idx & 1) ? ctr_access(vm, v, idx / 2, val, 0) :
	    sel_access(vm, v, idx / 2, val, 0));
}

static int
core_wr(struct vpmu_vm *vm, struct gpmu_vcpu *v, unsigned idx, uint64_t val)
{
	if (!MODEL(vm)->core_ext)
		return (VPMU_MSR_GP);
	return ((idx & 1) ? ctr_access(vm, v, idx / 2, NULL, val) :
	    sel_access(vm, v, idx / 2, NULL, val));
}

enum { G_STATUS, G_CTL, G_STATUS_CLR, G_STATUS_SET };

static int
global_rd(struct vpmu_vm *vm, struct gpmu_vcpu *v, unsigned idx, uint64_t *val)
{
	if (MODEL(vm)->version < 2)
		return (VPMU_MSR_GP);
	*val = idx == G_STATUS ? v->global_status : idx == G_CTL ? v->global_ctrl : 0;
	return (VPMU_MSR_OK);
}

static int
global_wr(struct vpmu_vm *vm, struct gpmu_vcpu *v, unsigned idx, uint64_t val)
{
	const struct gpmu *g = gpmu_of(vm);

	if (g->model.version < 2)
		return (VPMU_MSR_GP);
	val &= g->global_ctrl_valid;			/* reserved bits dropped */
	switch (idx) {
	case G_CTL:
		gpmu_set_global_ctrl(v, val);
		break;
	case G_STATUS_CLR:
		GPMU_STORE(v->global_status, v->global_status & ~val);
		break;
	case G_STATUS_SET:
		GPMU_STORE(v->global_status, v->global_status | val);
		break;
	default:
		break;					/* status: ignored */
	}
	return (VPMU_MSR_OK);
}

static const struct gpmu_range amd_ranges[] = {
	{ GPMU_MSR_K7_EVNTSEL0, VPMU_AMD_LEGACY_GP, "PERF_CTR", k7_sel_rd, k7_sel_wr },
	{ GPMU_MSR_K7_PERFCTR0, VPMU_AMD_LEGACY_GP, "PERF_CTR", k7_ctr_rd, k7_ctr_wr },
	{ GPMU_MSR_PERF_CTL0, 2 * VPMU_AMD_MAX_GP, "PERF_CTR", core_rd, core_wr },
	{ GPMU_MSR_AMD_GLOBAL, 4, "PERF_CNTR_GLOBAL", global_rd, global_wr },
};

const struct gpmu_vendor gpmu_amd = {
	.ranges = amd_ranges,
	.nranges = VPMU_ARRAY_SIZE(amd_ranges),
	.event = amd_event,
};
