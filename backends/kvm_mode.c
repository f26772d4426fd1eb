/*
 * kvm_mode.c -- the KVM glue's PMU modes (vpmu_kvm(3), PMU MODES).
 *
 * In trap mode libvpmu implements the guest's counters itself, from MSR
 * exits.  In kvm mode KVM's own vPMU does (it backs each guest counter with
 * a host perf event, or with the hardware under the mediated vPMU), and
 * libvpmu keeps the rest: the hwpmc operations, sampling, logs.  Here are
 * the decisions of kvm mode, as pure functions for kvm_vpmu.c (which does the
 * ioctls) and the tests:
 *
 *   resolve    which mode a VM gets on a host, and why
 *   leaf       CPUID 0xA or 0x80000022: what both the model and KVM offer
 *   msrs       the model's PMU MSRs, to read from KVM (KVM_GET_MSRS)
 *   counters   those values as the counter report
 */
#include <errno.h>
#include <stdio.h>
#include <string.h>

#include "internal.h"
#include "arch.h"
#include "gpmu_msr.h"
#include "host_internal.h"
#include "kvm_mode.h"

static unsigned
min_u(unsigned a, unsigned b)
{
	return (a < b ? a : b);
}

/* ---- resolve ---------------------------------------------------------------- */

static uint32_t
host_vendor(const struct vpmu_host_info *hi)
{
	if (!hi->cpu.cpuid_ok)
		return (VPMU_VENDOR_NONE);
	if (vpmu__host_is_amd(&hi->cpu))
		return (VPMU_VENDOR_AMD);
	if (strcmp(hi->cpu.vendor, "GenuineIntel") == 0)
		return (VPMU_VENDOR_INTEL);
	return (VPMU_VENDOR_NONE);
}

static const char *
vendor_name(uint32_t v)
{
	return (v == VPMU_VENDOR_INTEL ? "Intel" : v == VPMU_VENDOR_AMD ? "AMD" : "none");
}

/* 0 with what kvm mode would use in buf, or why not and an errno. */
static int
kvm_problem(const struct vpmu_host_info *hi, const struct vpmu_model *m,
    const struct vpmu_event_filter *f, char *buf, size_t len)
{
	uint32_t hv;
	int err;

	if (m->vendor == VPMU_VENDOR_NONE) {
		snprintf(buf, len, "the model (%s) gives the guest no PMU", m->name);
		return (EINVAL);
	}
	if ((err = vpmu__host_judge(hi, VPMU__HOST_KVM_PASSTHROUGH, buf, len)) != 0)
		return (err);
	if ((hv = host_vendor(hi)) != VPMU_VENDOR_NONE && hv != m->vendor) {
		snprintf(buf, len, "KVM's vPMU is the host CPU's kind, %s, and the model %s "
		    "is %s's", vendor_name(hv), m->name, vendor_name(m->vendor));
		return (EINVAL);
	}
	if (f != NULL && hi->kvm.cap_pmu_event_filter <= 0) {
		snprintf(buf, len, "KVM cannot take the event filter: "
		    "KVM_CHECK_EXTENSION(KVM_CAP_PMU_EVENT_FILTER) returned %d",
		    (int)hi->kvm.cap_pmu_event_filter);
		return (EOPNOTSUPP);
	}
	if (f != NULL && (f->flags & VPMU_FILTER_MASKED) && hi->kvm.cap_pmu_event_masked <= 0) {
		snprintf(buf, len, "KVM cannot take the event filter's masked entries: "
		    "KVM_CHECK_EXTENSION(KVM_CAP_PMU_EVENT_MASKED_EVENTS) returned %d",
		    (int)hi->kvm.cap_pmu_event_masked);
		return (EOPNOTSUPP);
	}
	return (0);
}

int
vpmu__kvm_mode_resolve(const struct vpmu_host_info *hi, const struct vpmu_model *m,
    int want, const struct vpmu_event_filter *f, int *mode, char *why, size_t whylen)
{
	char buf[VPMU__HOST_WHY_MAX];
	int err;

	if (why != NULL && whylen > 0)
		why[0] = '\0';
	if (hi == NULL || m == NULL || mode == NULL || (why == NULL && whylen > 0) ||
	    (want != VPMU_PMU_MODE_TRAP && want != VPMU_PMU_MODE_KVM &&
	    want != VPMU_PMU_MODE_AUTO))
		return (EINVAL);
	*mode = VPMU_PMU_MODE_TRAP;
	if (want == VPMU_PMU_MODE_TRAP) {
		if (whylen > 0)
			snprintf(why, whylen, "trap: libvpmu implements the guest's counters "
			    "through MSR exits");
		return (0);
	}
	if ((err = kvm_problem(hi, m, f, buf, sizeof(buf))) == 0) {
		*mode = VPMU_PMU_MODE_KVM;
		if (whylen > 0)
			snprintf(why, whylen, "kvm: %s", buf);
		return (0);
	}
	if (want == VPMU_PMU_MODE_AUTO) {
		if (whylen > 0)
			snprintf(why, whylen, "trap: kvm mode is not possible: %s", buf);
		return (0);
	}
	if (whylen > 0)
		snprintf(why, whylen, "%s: %s", err == ENODEV ? "kvm mode needs a host PMU" :
		    "kvm mode is not possible", buf);
	return (err);
}

/* ---- CPUID ------------------------------------------------------------------ */

/*
 * Leaf 0xA (arch.h's codec): the smaller version, counts, widths and EBX
 * length; an event unavailable in either; the fixed counters (ECX, v5)
 * both have; AnyThread deprecated in either.
 */
static void
leaf_0a(const uint32_t m[4], const uint32_t k[4], uint32_t out[4])
{
	struct vpmu__cpuid_0a a, b, o;

	vpmu__cpuid_0a_decode(m, &a);
	vpmu__cpuid_0a_decode(k, &b);
	o.version = min_u(a.version, b.version);
	o.gp = min_u(a.gp, b.gp);
	o.gp_width = min_u(a.gp_width, b.gp_width);
	o.ebx_length = min_u(a.ebx_length, b.ebx_length);
	o.unavailable = a.unavailable | b.unavailable;
	o.fixed_bitmap = a.fixed_bitmap & b.fixed_bitmap;
	o.fixed = min_u(a.fixed, b.fixed);
	o.fixed_width = min_u(a.fixed_width, b.fixed_width);
	o.anythread_deprecated = a.anythread_deprecated || b.anythread_deprecated;
	vpmu__cpuid_0a_encode(&o, out);
}

/*
 * Leaf 0x80000022 (arch.h's codec): a feature both have, the smaller
 * count of each kind, the UMCs active in both.
 */
static void
leaf_80000022(const uint32_t m[4], const uint32_t k[4], uint32_t out[4])
{
	struct vpmu__cpuid_80000022 a, b, o;

	vpmu__cpuid_80000022_decode(m, &a);
	vpmu__cpuid_80000022_decode(k, &b);
	o.perfmon_v2 = a.perfmon_v2 && b.perfmon_v2;
	o.lbr_stack = a.lbr_stack && b.lbr_stack;
	o.lbr_pmc_freeze = a.lbr_pmc_freeze && b.lbr_pmc_freeze;
	o.num_core = min_u(a.num_core, b.num_core);
	o.lbr_v2_depth = min_u(a.lbr_v2_depth, b.lbr_v2_depth);
	o.num_nb = min_u(a.num_nb, b.num_nb);
	o.num_umc = min_u(a.num_umc, b.num_umc);
	o.active_umc = a.active_umc & b.active_umc;
	vpmu__cpuid_80000022_encode(&o, out);
}

void
vpmu__kvm_mode_leaf(uint32_t leaf, const uint32_t model[4], const uint32_t kvm[4],
    uint32_t out[4])
{
	uint32_t r[4];		/* out may be model or kvm */

	if (leaf == 0xA)
		leaf_0a(model, kvm, r);
	else if (leaf == 0x80000022)
		leaf_80000022(model, kvm, r);
	else
		memcpy(r, model, sizeof(r));
	memcpy(out, r, sizeof(r));
}

void
vpmu__kvm_mode_model(const struct vpmu_model *m, const uint32_t l0a[4],
    const uint32_t l80000022[4], bool core_ext, struct vpmu_model *out)
{
	struct vpmu__cpuid_0a l;
	struct vpmu__cpuid_80000022 a;

	*out = *m;
	if (m->vendor == VPMU_VENDOR_INTEL) {
		vpmu__cpuid_0a_decode(l0a, &l);
		out->version = l.version;
		out->gp = l.gp;
		out->width = l.gp_width;
		out->ebx = l.unavailable;
		out->fixed = l.fixed;
		out->fixed_width = l.fixed_width;
	} else if (m->vendor == VPMU_VENDOR_AMD) {
		out->core_ext = m->core_ext && core_ext;
		vpmu__cpuid_80000022_decode(l80000022, &a);
		out->version = m->version >= 2 && a.perfmon_v2 ? 2 : 1;
		out->gp = out->version >= 2 ? a.num_core :
		    min_u(m->gp, out->core_ext ? VPMU_AMD_MAX_GP : VPMU_AMD_LEGACY_GP);
	}
}

/* ---- the guest's counters, read back from KVM ------------------------------------ */

static bool
has_global(const struct vpmu_model *m)
{
	return (m->version >= 2);	/* Intel v2+, amd-v2 (PerfMonV2) */
}

static bool
amd_core(const struct vpmu_model *m)
{
	return (m->core_ext || m->version >= 2);
}

unsigned
vpmu__kvm_mode_msrs(const struct vpmu_model *m, uint32_t *msrs, unsigned max)
{
	uint32_t list[VPMU_KVM_MODE_MAX_MSRS];
	unsigned n = 0, i;

	for (i = 0; i < m->gp && n + 2 <= VPMU_ARRAY_SIZE(list); i++) {
		if (m->vendor == VPMU_VENDOR_INTEL) {
			list[n++] = GPMU_MSR_PERFEVTSEL0 + i;
			list[n++] = GPMU_MSR_PMC0 + i;
		} else if (amd_core(m)) {
			list[n++] = GPMU_MSR_PERF_CTL0 + 2 * i;
			list[n++] = GPMU_MSR_PERF_CTL0 + 2 * i + 1;
		} else {
			list[n++] = GPMU_MSR_K7_EVNTSEL0 + i;
			list[n++] = GPMU_MSR_K7_PERFCTR0 + i;
		}
	}
	if (m->vendor == VPMU_VENDOR_INTEL && m->version >= 2) {
		list[n++] = GPMU_MSR_FIXED_CTR_CTRL;
		for (i = 0; i < m->fixed && n < VPMU_ARRAY_SIZE(list) - 1; i++)
			list[n++] = GPMU_MSR_FIXED_CTR0 + i;
	}
	if (m->vendor != VPMU_VENDOR_NONE && has_global(m))
		list[n++] = m->vendor == VPMU_VENDOR_INTEL ? GPMU_MSR_GLOBAL_CTRL : GPMU_MSR_AMD_GLOBAL_CTL;
	n = min_u(n, max);
	memcpy(msrs, list, n * sizeof(list[0]));
	return (n);
}

static void
event_text(const struct vpmu_vm *vm, uint64_t sel, char *buf, size_t len)
{
	struct vpmu_event_spec spec;
	const char *name;

	memset(&spec, 0, sizeof(spec));
	buf[0] = '\0';
	if (!vpmu__gpmu_event_of(vm, sel, &spec))
		return;
	if (spec.event == VPMU_EV_RAW)
		snprintf(buf, len, "raw 0x%llx", (unsigned long long)spec.raw);
	else if ((name = vpmu_event_name(spec.event)) != NULL)
		snprintf(buf, len, "%s", name);
}

int
vpmu__kvm_mode_counters(const struct vpmu_vm *vm, const struct vpmu_model *m,
    const uint64_t *vals, unsigned nvals, struct vpmu_counter_info *out, unsigned *n)
{
	struct vpmu_model vm_m;
	const char *gp_name;
	uint32_t msrs[VPMU_KVM_MODE_MAX_MSRS];
	uint64_t global = ~0ull, fctl = 0, gmask, fmask;
	unsigned i, k = 0, need, gw, fw;

	if (vm == NULL || m == NULL || n == NULL || vpmu_vm_get_model(vm, &vm_m) != 0 ||
	    vals == NULL)
		return (EINVAL);
	need = m->gp + m->fixed;
	if ((gp_name = vpmu__gpmu_gp_name(vm)) == NULL || m->vendor != vm_m.vendor ||
	    m->gp > VPMU_INTEL_MAX_GP || m->fixed > VPMU_INTEL_MAX_FIXED ||
	    nvals != vpmu__kvm_mode_msrs(m, msrs, VPMU_ARRAY_SIZE(msrs)))
		return (EINVAL);
	if (*n < need || (need > 0 && out == NULL)) {
		*n = need;
		return (EINVAL);
	}
	if (has_global(m))
		global = vals[nvals - 1];
	if (m->vendor == VPMU_VENDOR_INTEL && m->version >= 2)
		fctl = vals[2 * m->gp];
	gw = m->width;
	gmask = gw >= 64 ? ~0ull : (1ull << gw) - 1;
	for (i = 0; i < m->gp; i++, k++) {
		memset(&out[k], 0, sizeof(out[k]));
		snprintf(out[k].name, sizeof(out[k].name), "%s%u", gp_name, i);
		out[k].control = vals[2 * i];
		out[k].value = vals[2 * i + 1] & gmask;
		out[k].raw = out[k].value;
		/* KVM keeps no "written" mark: a counter in use is one not at reset. */
		out[k].used = out[k].control != 0 || out[k].value != 0;
		out[k].enabled = (out[k].control & SEL_EN) != 0 && ((global >> i) & 1) != 0;
		if (out[k].used)
			event_text(vm, out[k].control, out[k].event, sizeof(out[k].event));
	}
	fw = m->fixed_width;
	fmask = fw >= 64 ? ~0ull : (1ull << fw) - 1;
	for (i = 0; i < m->fixed; i++, k++) {
		memset(&out[k], 0, sizeof(out[k]));
		snprintf(out[k].name, sizeof(out[k].name), "IA32_FIXED_CTR%u", i);
		out[k].control = (fctl >> (4 * i)) & 0xF;
		out[k].value = vals[2 * m->gp + 1 + i] & fmask;
		out[k].raw = out[k].value;
		out[k].used = out[k].control != 0 || out[k].value != 0;
		out[k].enabled = (out[k].control & 0x3) != 0 && ((global >> (32 + i)) & 1) != 0;
		snprintf(out[k].event, sizeof(out[k].event), "%s",
		    vpmu_event_name(vpmu__arch_fixed_event(i)));
	}
	*n = k;
	return (0);
}
