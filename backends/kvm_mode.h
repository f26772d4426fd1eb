/*
 * kvm_mode.h -- the KVM glue's PMU modes (kvm_mode.c), shared by kvm_vpmu.c
 * and test/unit/test_kvm_mode.c.  Every function here is pure: facts and
 * the model in, a decision out, so that the tests can give it hosts this
 * machine is not.
 */
#ifndef VPMU_KVM_MODE_H
#define VPMU_KVM_MODE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include <vpmu/host.h>
#include <vpmu/model.h>

struct vpmu_vm;

/* The most PMU MSRs a model has: 8 GP selects and counters, 3 fixed, 2 controls. */
#define VPMU_KVM_MODE_MAX_MSRS	32

/*
 * The mode a VM that asks for `want` (VPMU_PMU_MODE_*) gets on a host with
 * the facts hi, for model m, with the event filter f (NULL: none): *mode and
 * the reason in why.  0, also when auto falls back to trap; for kvm
 * asked for and not possible, ENODEV (no host PMU: why starts "kvm mode
 * needs a host PMU: "), EOPNOTSUPP (the host has one but KVM will not use
 * it, or cannot take the filter) or EINVAL (the model: none, or another
 * vendor's than the host's).
 */
int	vpmu__kvm_mode_resolve(const struct vpmu_host_info *hi, const struct vpmu_model *m,
	    int want, const struct vpmu_event_filter *f, int *mode, char *why, size_t whylen);

/*
 * Kvm mode's CPUID leaf 0xA or 0x80000022: what both the model (model, as
 * trap mode would give it) and KVM (kvm, from KVM_GET_SUPPORTED_CPUID; all
 * zero if absent) offer, field by field.  Another leaf: out = model.
 */
void	vpmu__kvm_mode_leaf(uint32_t leaf, const uint32_t model[4], const uint32_t kvm[4],
	    uint32_t out[4]);

/*
 * The PMU the guest gets in kvm mode, as a model: m cut to the leaves
 * 0xA and 0x80000022 that vpmu__kvm_mode_leaf() built and to KVM's
 * PerfCtrExtCore (core_ext).  What the counter report reads.
 */
void	vpmu__kvm_mode_model(const struct vpmu_model *m, const uint32_t l0a[4],
	    const uint32_t l80000022[4], bool core_ext, struct vpmu_model *out);

/*
 * The model's PMU MSRs in the order vpmu__kvm_mode_counters() reads them:
 * per GP counter its select and its counter, then (Intel v2+) the fixed
 * counters' control and each fixed counter, then the global control
 * (Intel v2+, amd-v2).  Returns how many, at most max.
 */
unsigned vpmu__kvm_mode_msrs(const struct vpmu_model *m, uint32_t *msrs, unsigned max);

/*
 * The counter report of one vCPU from the values of those MSRs of model m
 * (vpmu__kvm_mode_model()'s; vm's vendor names the events): names,
 * controls, events, values and whether each counts.  *n as for
 * vpmu_vcpu_get_counters(): in, room at out; out, how many (EINVAL when
 * too few).
 */
int	vpmu__kvm_mode_counters(const struct vpmu_vm *vm, const struct vpmu_model *m,
	    const uint64_t *vals, unsigned nvals, struct vpmu_counter_info *out, unsigned *n);

#endif /* VPMU_KVM_MODE_H */
