/*
 * kvm_probe.c -- what /dev/kvm offers.
 *
 * Only the two system ioctls, KVM_GET_API_VERSION and KVM_CHECK_EXTENSION,
 * on the /dev/kvm descriptor: no VM is created, so the probe is cheap and
 * leaves nothing behind in the kernel.  Running VMs stays the VMM's job.
 */
#include <errno.h>
#include <fcntl.h>
#include <stddef.h>
#include <stdio.h>
#include <sys/ioctl.h>
#include <unistd.h>

#include <linux/kvm.h>

#include "host_internal.h"	/* the probe fills vpmu_host */

/* The ABI numbers, for kernel headers older than the capabilities. */
#ifndef KVM_CAP_PMU_EVENT_FILTER
#define KVM_CAP_PMU_EVENT_FILTER	173
#endif
#ifndef KVM_CAP_X86_USER_SPACE_MSR
#define KVM_CAP_X86_USER_SPACE_MSR	188
#endif
#ifndef KVM_CAP_X86_MSR_FILTER
#define KVM_CAP_X86_MSR_FILTER		189
#endif
#ifndef KVM_CAP_PMU_CAPABILITY
#define KVM_CAP_PMU_CAPABILITY		212
#endif
#ifndef KVM_CAP_PMU_EVENT_MASKED_EVENTS
#define KVM_CAP_PMU_EVENT_MASKED_EVENTS	226
#endif

#define KVM_DEV_PATH		"/dev/kvm"
/* kvm.enable_pmu, a read-only module parameter since Linux 5.17. */
#define KVM_ENABLE_PMU_PATH	"/sys/module/kvm/parameters/enable_pmu"

/* The capabilities asked for, where their answers go, and their names. */
const struct vpmu__kvm_cap vpmu__kvm_caps[] = {
#define KVM_CAP_ROW(cap, key, field, mask) \
	{ cap, #cap, key, offsetof(struct vpmu_host_kvm, field), mask }
	KVM_CAP_ROW(KVM_CAP_X86_USER_SPACE_MSR, "user_space_msr",
	    cap_user_space_msr, 0),
	KVM_CAP_ROW(KVM_CAP_X86_MSR_FILTER, "msr_filter", cap_msr_filter, 0),
	/* KVM_PMU_CAP_DISABLE (bit 0): a VMM may turn the vPMU off per VM. */
	KVM_CAP_ROW(KVM_CAP_PMU_CAPABILITY, "pmu_capability",
	    cap_pmu_capability, 1),
	KVM_CAP_ROW(KVM_CAP_PMU_EVENT_FILTER, "pmu_event_filter",
	    cap_pmu_event_filter, 0),
	KVM_CAP_ROW(KVM_CAP_SET_GUEST_DEBUG, "set_guest_debug",
	    cap_set_guest_debug, 0),
	/* KVM_SET_PMU_EVENT_FILTER takes masked entries (Linux 6.3). */
	KVM_CAP_ROW(KVM_CAP_PMU_EVENT_MASKED_EVENTS, "pmu_event_masked_events",
	    cap_pmu_event_masked, 0),
#undef KVM_CAP_ROW
	{ 0, NULL, NULL, 0, 0 }
};

int32_t
vpmu__kvm_cap_value(const struct vpmu_host_kvm *kvm,
    const struct vpmu__kvm_cap *c)
{
	const int32_t *v;

	v = (const int32_t *)(const void *)((const char *)kvm + c->off);
	return (*v);
}

static void
set_cap(struct vpmu_host_kvm *kvm, const struct vpmu__kvm_cap *c,
    int32_t value)
{
	int32_t *v;

	v = (int32_t *)(void *)((char *)kvm + c->off);
	*v = value;
}

/* 'Y' or 'N' as sysfs prints a bool parameter; 0 if it is not there. */
static char
read_enable_pmu(void)
{
	FILE *f;
	int c;

	if ((f = fopen(KVM_ENABLE_PMU_PATH, "re")) == NULL)
		return (0);
	c = fgetc(f);
	fclose(f);
	return (c == EOF ? 0 : (char)c);
}

void
vpmu__host_probe_kvm(struct vpmu_host_info *info)
{
	struct vpmu_host_kvm *kvm = &info->kvm;
	const struct vpmu__kvm_cap *c;
	int fd, r;

	kvm->api_version = -1;
	for (c = vpmu__kvm_caps; c->name != NULL; c++)
		set_cap(kvm, c, -1);
	kvm->enable_pmu = read_enable_pmu();

	kvm->present = access(KVM_DEV_PATH, F_OK) == 0;
	if ((fd = open(KVM_DEV_PATH, O_RDWR | O_CLOEXEC)) < 0) {
		kvm->open_errno = errno;
		return;
	}
	kvm->opened = 1;
	kvm->api_version = ioctl(fd, KVM_GET_API_VERSION, 0);
	for (c = vpmu__kvm_caps; c->name != NULL; c++) {
		r = ioctl(fd, KVM_CHECK_EXTENSION, c->cap);
		set_cap(kvm, c, r < 0 ? -1 : r);
	}
	close(fd);
}
