/*
 * arch.c -- the architectural events' table and its lookups, and the
 * decoders and encoders of CPUID leaves 0AH and 0x80000022 (arch.h).
 */
#include <string.h>

#include "internal.h"
#include "arch.h"

const struct vpmu__arch_event vpmu__arch_events[VPMU__NARCH] = {
#define ARCH_ROW(id, ev, intel, ebx, fixed, amd, perf, ipc)		\
	[VPMU__ARCH_##id] = { ev, intel, amd, ebx, fixed, ipc },
	VPMU__ARCH_EVENTS(ARCH_ROW)
#undef ARCH_ROW
};

/* Each row has its own EBX bit, and together they are bits 0 to VPMU__NARCH - 1. */
#define ARCH_EBX(id, ev, intel, ebx, ...)	| 1u << (ebx)
_Static_assert((0 VPMU__ARCH_EVENTS(ARCH_EBX)) == (1u << VPMU__NARCH) - 1,
    "the EBX bits of the architectural events are not 0 to VPMU__NARCH - 1");
#undef ARCH_EBX

const struct vpmu__arch_event *
vpmu__arch_of_event(uint32_t event)
{
	size_t i;

	for (i = 0; i < VPMU__NARCH && event != VPMU_EV_NONE; i++)
		if (vpmu__arch_events[i].event == event)
			return (&vpmu__arch_events[i]);
	return (NULL);
}

uint32_t
vpmu__arch_event_raw(uint64_t raw, unsigned vendors)
{
	const struct vpmu__arch_event *e;
	unsigned means;
	size_t i;

	for (i = 0; i < VPMU__NARCH; i++) {
		e = &vpmu__arch_events[i];
		means = 0;
		if (e->intel == raw)
			means |= 1u << VPMU_VENDOR_INTEL;
		if (e->amd != 0 && vpmu__amd_raw(e->amd, 0) == raw)
			means |= 1u << VPMU_VENDOR_AMD;
		if (e->event != VPMU_EV_NONE && means != 0 && (means & vendors) == vendors)
			return (e->event);
	}
	return (VPMU_EV_NONE);
}

void
vpmu__arch_spec(uint64_t raw, uint32_t vendor, struct vpmu_event_spec *spec)
{
	spec->event = vpmu__arch_event_raw(raw, 1u << vendor);
	spec->raw = spec->event != VPMU_EV_NONE ? 0 : raw;
	if (spec->event == VPMU_EV_NONE)
		spec->event = VPMU_EV_RAW;
}

uint32_t
vpmu__arch_fixed_event(unsigned idx)
{
	size_t i;

	for (i = 0; i < VPMU__NARCH; i++)
		if (vpmu__arch_events[i].fixed >= 0 &&
		    (unsigned)vpmu__arch_events[i].fixed == idx)
			return (vpmu__arch_events[i].event);
	return (VPMU_EV_NONE);
}

/* ---- CPUID leaf 0AH --------------------------------------------------------- */

/*
 * Bit-fields are allocated from the least significant bit on every x86 ABI
 * gcc and clang support, so each union reads like the SDM's table.
 */
union cpuid_0a_eax {
	uint32_t full;
	struct {
		uint32_t version:8;
		uint32_t gp:8;
		uint32_t gp_width:8;
		uint32_t ebx_length:8;
	} split;
};

union cpuid_0a_edx {
	uint32_t full;
	struct {
		uint32_t fixed:5;
		uint32_t fixed_width:8;
		uint32_t reserved1:2;
		uint32_t anythread_deprecated:1;
		uint32_t reserved2:16;
	} split;
};

enum { R_EAX, R_EBX, R_ECX, R_EDX };

/* The EBX bits that are event flags: those below the length. */
static uint32_t
ebx_valid(unsigned length)
{
	return (length >= 32 ? UINT32_MAX : (1u << length) - 1);
}

void
vpmu__cpuid_0a_decode(const uint32_t regs[4], struct vpmu__cpuid_0a *out)
{
	union cpuid_0a_eax eax = { .full = regs[R_EAX] };
	union cpuid_0a_edx edx = { .full = regs[R_EDX] };

	memset(out, 0, sizeof(*out));
	if (eax.split.version == 0)
		return;
	out->version = eax.split.version;
	out->gp = eax.split.gp;
	out->gp_width = eax.split.gp_width;
	out->ebx_length = eax.split.ebx_length;
	out->unavailable = regs[R_EBX] & ebx_valid(out->ebx_length);
	if (out->version < 2)
		return;
	out->fixed = edx.split.fixed;
	out->fixed_width = edx.split.fixed_width;
	out->anythread_deprecated = edx.split.anythread_deprecated;
	if (out->version >= 5)
		out->fixed_bitmap = regs[R_ECX];
}

void
vpmu__cpuid_0a_encode(const struct vpmu__cpuid_0a *in, uint32_t regs[4])
{
	union cpuid_0a_eax eax = { .full = 0 };
	union cpuid_0a_edx edx = { .full = 0 };

	memset(regs, 0, 4 * sizeof(regs[0]));
	if (in->version == 0)
		return;
	eax.split.version = in->version & 0xFF;
	eax.split.gp = in->gp & 0xFF;
	eax.split.gp_width = in->gp_width & 0xFF;
	eax.split.ebx_length = in->ebx_length & 0xFF;
	regs[R_EAX] = eax.full;
	regs[R_EBX] = in->unavailable & ebx_valid(in->ebx_length & 0xFF);
	if (in->version < 2)
		return;
	edx.split.fixed = in->fixed & 0x1F;
	edx.split.fixed_width = in->fixed_width & 0xFF;
	edx.split.anythread_deprecated = in->anythread_deprecated;
	regs[R_EDX] = edx.full;
	if (in->version >= 5)
		regs[R_ECX] = in->fixed_bitmap;
}

/* ---- CPUID leaf 0x80000022 -------------------------------------------------- */

union cpuid_80000022_eax {
	uint32_t full;
	struct {
		uint32_t perfmon_v2:1;
		uint32_t lbr_stack:1;
		uint32_t lbr_pmc_freeze:1;
		uint32_t reserved:29;
	} split;
};

union cpuid_80000022_ebx {
	uint32_t full;
	struct {
		uint32_t num_core:4;
		uint32_t lbr_v2_depth:6;
		uint32_t num_nb:6;
		uint32_t num_umc:6;
		uint32_t reserved:10;
	} split;
};

void
vpmu__cpuid_80000022_decode(const uint32_t regs[4], struct vpmu__cpuid_80000022 *out)
{
	union cpuid_80000022_eax eax = { .full = regs[R_EAX] };
	union cpuid_80000022_ebx ebx = { .full = regs[R_EBX] };

	memset(out, 0, sizeof(*out));
	out->perfmon_v2 = eax.split.perfmon_v2;
	out->lbr_stack = eax.split.lbr_stack;
	out->lbr_pmc_freeze = eax.split.lbr_pmc_freeze;
	out->num_core = ebx.split.num_core;
	out->lbr_v2_depth = ebx.split.lbr_v2_depth;
	out->num_nb = ebx.split.num_nb;
	out->num_umc = ebx.split.num_umc;
	out->active_umc = regs[R_ECX];
}

void
vpmu__cpuid_80000022_encode(const struct vpmu__cpuid_80000022 *in, uint32_t regs[4])
{
	union cpuid_80000022_eax eax = { .full = 0 };
	union cpuid_80000022_ebx ebx = { .full = 0 };

	eax.split.perfmon_v2 = in->perfmon_v2;
	eax.split.lbr_stack = in->lbr_stack;
	eax.split.lbr_pmc_freeze = in->lbr_pmc_freeze;
	ebx.split.num_core = in->num_core & 0xF;
	ebx.split.lbr_v2_depth = in->lbr_v2_depth & 0x3F;
	ebx.split.num_nb = in->num_nb & 0x3F;
	ebx.split.num_umc = in->num_umc & 0x3F;
	regs[R_EAX] = eax.full;
	regs[R_EBX] = ebx.full;
	regs[R_ECX] = in->active_umc;
	regs[R_EDX] = 0;
}
