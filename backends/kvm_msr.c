/*
 * kvm_msr.c -- the KVM glue's MSRs: the MSR filter KVM gets (the VMM's
 * own merged with the model's MSRs sent to user space,
 * vpmu_kvm_set_msr_filter) and IA32_MISC_ENABLE's PMU bits, which
 * libvpmu answers under an Intel model in trap mode.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>

#include "kvm_internal.h"
/* ---- the MSR filter -------------------------------------------------------------- */

/* KVM's verdict on msr (read or write) under filter f: allowed to KVM? */
static bool
filter_allows(const struct kvm_msr_filter *f, uint32_t msr, uint32_t type)
{
	unsigned i;

	for (i = 0; i < KVM_MSR_FILTER_MAX_RANGES; i++) {
		const struct kvm_msr_filter_range *r = &f->ranges[i];

		if (r->nmsrs == 0 || r->bitmap == NULL)
			break;			/* the first empty range ends the list */
		if ((r->flags & type) && msr - r->base < r->nmsrs)
			return ((r->bitmap[(msr - r->base) / 8] >> ((msr - r->base) % 8)) & 1);
	}
	return (!(f->flags & KVM_MSR_FILTER_DEFAULT_DENY));
}

/*
 * The filter KVM gets: one range per span of the library's MSRs (per
 * access type when the VMM's filter treats reads and writes differently
 * there) whose bitmap denies every PMU MSR and, for every other MSR in the
 * span, says what the VMM's filter says; then the VMM's ranges.  KVM takes
 * the first range that holds an MSR, so the result is the VMM's filter
 * with the PMU MSRs sent to user space.  Without ours (kvm mode) it is the
 * VMM's filter alone.
 */
static int
filter_merge(const struct kvm_msr_filter *vmm, bool ours, bool misc_owned,
    struct kvm_msr_filter *out, uint8_t *bits, size_t bitslen)
{
	struct vpmu_msr_range lib[32];
	unsigned nlib = VPMU_ARRAY_SIZE(lib), nvmm = 0, nr = 0, i, j, t;
	size_t used = 0;

	if (ours)
		(void)vpmu_msr_ranges(lib, &nlib);
	else
		nlib = 0;		/* kvm mode: KVM's vPMU keeps the PMU MSRs */
	while (nvmm < KVM_MSR_FILTER_MAX_RANGES && vmm->ranges[nvmm].nmsrs != 0 &&
	    vmm->ranges[nvmm].bitmap != NULL)
		nvmm++;
	memset(out, 0, sizeof(*out));
	out->flags = vmm->flags;
	for (i = 0; i < nlib; i++) {
		uint32_t n = lib[i].count;
		size_t len = (n + 7) / 8;
		bool same = true;
		uint8_t *b[2];

		if (used + 2 * len > bitslen)
			return (ENOSPC);
		b[0] = bits + used;
		b[1] = bits + used + len;
		memset(b[0], 0, 2 * len);
		for (j = 0; j < n; j++) {
			uint32_t msr = lib[i].base + j;
			bool pmu = vpmu_msr_is_pmu(msr) ||
			    (msr == MSR_MISC_ENABLE && misc_owned);
			bool rd = !pmu && filter_allows(vmm, msr, KVM_MSR_FILTER_READ);
			bool wr = !pmu && filter_allows(vmm, msr, KVM_MSR_FILTER_WRITE);

			b[0][j / 8] |= (uint8_t)(rd << (j % 8));
			b[1][j / 8] |= (uint8_t)(wr << (j % 8));
			same = same && rd == wr;
		}
		used += same ? len : 2 * len;
		for (t = 0; t < (same ? 1u : 2u); t++) {
			if (nr == KVM_MSR_FILTER_MAX_RANGES)
				return (E2BIG);
			out->ranges[nr].flags = same ? KVM_MSR_FILTER_READ | KVM_MSR_FILTER_WRITE :
			    t == 0 ? KVM_MSR_FILTER_READ : KVM_MSR_FILTER_WRITE;
			out->ranges[nr].base = lib[i].base;
			out->ranges[nr].nmsrs = n;
			out->ranges[nr].bitmap = b[t];
			nr++;
		}
	}
	if (nr + nvmm > KVM_MSR_FILTER_MAX_RANGES)
		return (E2BIG);
	for (i = 0; i < nvmm; i++)
		out->ranges[nr++] = vmm->ranges[i];
	return (0);
}

int
vpmu_kvm_set_msr_filter(vpmu_kvm *k, const struct kvm_msr_filter *vmm)
{
	static const struct kvm_msr_filter allow_all = { .flags = KVM_MSR_FILTER_DEFAULT_ALLOW };
	struct kvm_msr_filter f;
	uint8_t *bits;
	size_t bitslen = 4096;
	int error;

	if (k == NULL || (vmm != NULL && (vmm->flags & ~KVM_MSR_FILTER_DEFAULT_DENY) != 0))
		return (EINVAL);
	if ((bits = malloc(bitslen)) == NULL)
		return (ENOMEM);
	error = filter_merge(vmm != NULL ? vmm : &allow_all, k->mode == VPMU_PMU_MODE_TRAP,
	    k->misc_owned, &f, bits, bitslen);
	if (error == 0 && ioctl(k->vm_fd, KVM_X86_SET_MSR_FILTER, &f) < 0)
		error = errno;
	free(bits);			/* KVM copies the bitmaps */
	return (error);
}

/*
 * IA32_MISC_ENABLE of an Intel model's guest (trap mode): KVM keeps the
 * register, and its PMU bits read as the model says (EMON: a PMU; BTS and
 * PEBS unavailable).  As with KVM's own vPMU, a write that changes BTS or
 * PEBS unavailable #GPs and a write to EMON is ignored.  True for a #GP.
 */
bool
vpmu__kvm_misc_enable(const vpmu_kvm *k, const struct kvm_vcpu_ctx *c, bool write, uint64_t *val)
{
	union msrs2 m;
	uint64_t now;

	memset(&m, 0, sizeof(m));
	m.h.nmsrs = 1;
	m.h.entries[0].index = MSR_MISC_ENABLE;
	if (ioctl(c->fd, KVM_GET_MSRS, &m) != 1)
		return (true);
	now = (m.h.entries[0].data & ~MISC_PMU_BITS) | k->misc_pmu;
	if (!write) {
		*val = now;
		return (false);
	}
	if ((*val ^ now) & (MISC_BTS_NA | MISC_PEBS_NA))
		return (true);
	m.h.entries[0].data = (*val & ~MISC_EMON) | (now & MISC_EMON);
	return (ioctl(c->fd, KVM_SET_MSRS, &m) != 1);
}

bool
vpmu__kvm_is_misc_enable(const vpmu_kvm *k, const struct kvm_run *run)
{
	return (k->misc_owned && (run->exit_reason == KVM_EXIT_X86_RDMSR ||
	    run->exit_reason == KVM_EXIT_X86_WRMSR) && run->msr.index == MSR_MISC_ENABLE);
}
