/*
 * gpmu_cpuid.c -- the guest-visible PMU's CPUID: the model's PMU leaves
 * (0xA for Intel, 0x80000022 for AMD; vpmu_cpuid_get_leaf), and the whole
 * adjustment of a VMM's leaves (vpmu_cpuid_adjust): the vendor's identity
 * as a real part of the model's generation, PDCM, PerfCtrExtCore, the
 * extended range reaching 0x80000022; TSX as the CPUID patch saw it.
 */
#include <errno.h>
#include <string.h>

#include "arch.h"
#include "gpmu.h"

/*
 * The leaves through arch.h's encoders.  Leaf 0xA: the model's version, GP
 * count and width, an EBX of the architectural table's length (7:
 * CPUID.0xA.EAX[31:24]), the fixed counters (v2+) and their bitmap (v5);
 * AMD has no leaf 0xA PMU: zeros.  Leaf 0x80000022 (amd-v2): PerfMonV2 and
 * the core counters.
 */
/*
 * CPUID.0xA.EBX: the architectural events (arch.h, bit ebx of each row)
 * that the model marks unavailable, and those the VM's source cannot
 * count: the guest is not offered an event that would always read 0.
 */
static uint32_t
intel_unavailable(const struct vpmu_vm *vm)
{
	const struct gpmu *g = vm->gpmu;
	const struct vpmu__arch_event *e;
	struct vpmu_event_spec spec;
	uint32_t bits = g->model.ebx;
	size_t i;

	for (i = 0; i < VPMU__NARCH; i++) {
		e = &vpmu__arch_events[i];
		memset(&spec, 0, sizeof(spec));
		if (!g->vendor->event(e->intel | SEL_EN, &spec) ||
		    vm->src->supports(vm->src_state, &spec, NULL, 0) != 0)
			bits |= 1u << e->ebx;
	}
	return (bits);
}

int
vpmu_cpuid_get_leaf(const struct vpmu_vm *vm, uint32_t leaf, uint32_t subleaf, uint32_t regs[4])
{
	const struct vpmu_model *m;
	struct vpmu__cpuid_0a l0a;
	struct vpmu__cpuid_80000022 l22;

	(void)subleaf;
	if (vm == NULL || vm->gpmu == NULL || regs == NULL)
		return (EINVAL);
	if (leaf != 0xA && leaf != 0x80000022)
		return (ENOENT);
	m = &vm->gpmu->model;
	memset(regs, 0, 4 * sizeof(regs[0]));
	if (leaf == 0xA && m->vendor == VPMU_VENDOR_INTEL) {
		memset(&l0a, 0, sizeof(l0a));
		l0a.version = m->version;
		l0a.gp = m->gp;
		l0a.gp_width = m->width;
		l0a.ebx_length = VPMU__NARCH;
		l0a.unavailable = intel_unavailable(vm);
		l0a.fixed = m->fixed;
		l0a.fixed_width = m->fixed_width;
		l0a.fixed_bitmap = (1u << m->fixed) - 1;
		vpmu__cpuid_0a_encode(&l0a, regs);
	}
	if (leaf == 0x80000022 && m->vendor == VPMU_VENDOR_AMD && m->version >= 2) {
		memset(&l22, 0, sizeof(l22));
		l22.perfmon_v2 = true;
		l22.num_core = m->gp;
		vpmu__cpuid_80000022_encode(&l22, regs);
	}
	return (0);
}

/*
 * The processor the guest is told it runs on: one real part of the
 * model's generation, as leaf 1 EAX's signature (stepping 3:0, model 7:4,
 * family 11:8, extended model 19:16, extended family 27:20).  None is on
 * kvm-unit-tests' Intel errata list (Atom models 0x4D, 0x5F, 0x86, 0xAF,
 * 0xDD).  0 for none: the host's stays.
 */
static uint32_t
model_signature(const struct vpmu_model *m)
{
	static const uint32_t intel[] = {
		0,
		0x000006E8,	/* v1: Core Duo (Yonah), 06_0E */
		0x0001067A,	/* v2: Core 2 Duo (Penryn), 06_17 */
		0x000106A5,	/* v3: Core i7 (Nehalem), 06_1A */
		0x000506E3,	/* v4: Core i7 (Skylake), 06_5E */
		0x000806F8,	/* v5: Xeon (Sapphire Rapids), 06_8F */
	};

	if (m->vendor == VPMU_VENDOR_INTEL && m->version < VPMU_ARRAY_SIZE(intel))
		return (intel[m->version]);
	if (m->vendor == VPMU_VENDOR_AMD && m->version >= 2)
		return (0x00A10F11);	/* EPYC 9004 (Zen 4, Genoa), 19h/11h */
	if (m->vendor == VPMU_VENDOR_AMD && m->core_ext)
		return (0x00830F10);	/* EPYC 7002 (Zen 2, Rome), 17h/31h */
	if (m->vendor == VPMU_VENDOR_AMD)
		return (0x00100F42);	/* Phenom II (K10), 10h/04h: no core extension */
	return (0);
}

/* A 12-character vendor string as CPUID returns it: EBX, EDX, ECX. */
static void
set_vendor(uint32_t regs[4], const char *s)
{
	memcpy(&regs[1], s, 4);
	memcpy(&regs[3], s + 4, 4);
	memcpy(&regs[2], s + 8, 4);
}

/*
 * The leaves that say who made the processor, for a model of a vendor:
 * leaf 0's string and highest leaf, leaf 1's signature, and the extended
 * leaves 0x80000000/1 as that vendor's parts fill them.  An Intel part's
 * highest extended leaf is 0x80000008 and its 0x80000000 EBX-EDX and
 * 0x80000001 EAX are 0; an AMD part repeats the string and the signature
 * there.
 */
static void
identity_adjust(const struct vpmu_model *m, uint32_t leaf, uint32_t regs[4])
{
	uint32_t sig = model_signature(m);
	int intel = m->vendor == VPMU_VENDOR_INTEL;

	if (leaf == 0x0 && regs[0] < 0xA)
		regs[0] = 0xA;
	if (sig == 0)
		return;
	if (leaf == 0x0)
		set_vendor(regs, intel ? "GenuineIntel" : "AuthenticAMD");
	else if (leaf == 0x1)
		regs[0] = (regs[0] & ~0x0FFF0FFFu) | sig;
	else if (leaf == 0x80000000 && intel) {
		if (regs[0] > 0x80000008)
			regs[0] = 0x80000008;
		regs[1] = regs[2] = regs[3] = 0;
	} else if (leaf == 0x80000000)
		set_vendor(regs, "AuthenticAMD");
	else if (leaf == 0x80000001)
		regs[0] = intel ? 0 : sig;
}

void
vpmu__gpmu_set_tsx(struct vpmu_vm *vm, bool tsx)
{
	/* Each vCPU's CPUID patch sets it, on its own thread; MSR writes read it. */
	if (vm->gpmu != NULL)
		__atomic_store_n(&vm->gpmu->tsx, tsx && vm->gpmu->model.vendor ==
		    VPMU_VENDOR_INTEL, __ATOMIC_RELAXED);
}

void
vpmu_cpuid_adjust(const struct vpmu_vm *vm, uint32_t leaf, uint32_t subleaf, uint32_t regs[4])
{
	const struct vpmu_model *m;

	(void)subleaf;
	if (vm == NULL || vm->gpmu == NULL || regs == NULL)
		return;
	m = &vm->gpmu->model;
	identity_adjust(m, leaf, regs);
	if (leaf == 0x1) {			/* ECX[15] PDCM */
		regs[2] &= ~(1u << 15);
		if (m->vendor == VPMU_VENDOR_INTEL && m->fw_writes)
			regs[2] |= 1u << 15;
	} else if (leaf == 0x80000000) {	/* reach 0x80000022, but not on Intel */
		if (m->vendor != VPMU_VENDOR_INTEL && regs[0] < 0x80000022)
			regs[0] = 0x80000022;
	} else if (leaf == 0x80000001) {	/* ECX[23] PerfCtrExtCore */
		regs[2] &= ~(1u << 23);
		if (m->vendor == VPMU_VENDOR_AMD && m->core_ext)
			regs[2] |= 1u << 23;
	} else
		(void)vpmu_cpuid_get_leaf(vm, leaf, subleaf, regs);	/* ENOENT: not the model's */
}
