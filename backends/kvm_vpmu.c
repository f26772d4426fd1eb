/*
 * kvm_vpmu.c -- the KVM glue's PMU modes hooked up (vpmu_kvm(3), PMU
 * MODES; kvm_mode.c decides, in pure functions): the mode a VM gets
 * (vpmu_kvm_resolve_pmu_mode: the host probed, trap mode's counts
 * checked), and in kvm mode KVM's own vPMU as the core's external hooks:
 * the guest's PMU leaves from KVM_GET_SUPPORTED_CPUID, the counter report
 * read with KVM_GET_MSRS, the event filter given to
 * KVM_SET_PMU_EVENT_FILTER; hooks that answer without KVM once it is gone.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <unistd.h>

#include "kvm_internal.h"
#include "kvm_mode.h"

/*
 * Trap mode: the source must count what every model's counters count
 * (instructions, cycles, branches), or the guest would read zeros.
 */
static int
counts_check(struct vpmu_vm *vm, char *why, size_t whylen)
{
	static const uint32_t evs[] = { VPMU_EV_INSTRUCTIONS, VPMU_EV_CYCLES,
	    VPMU_EV_BRANCHES };
	struct vpmu_event_spec ev;
	char reason[160];
	size_t i;
	int error;

	for (i = 0; i < VPMU_ARRAY_SIZE(evs); i++) {
		memset(&ev, 0, sizeof(ev));
		ev.event = evs[i];
		reason[0] = '\0';
		if ((error = vpmu__pmc_supports_unlocked(vm, &ev, reason, sizeof(reason))) != 0) {
			if (whylen > 0)
				snprintf(why, whylen, "source %s cannot count %s here: %s "
				    "(uncounted=allow runs the guest with counters that count nothing)",
				    vm->src->name, vpmu_event_name(evs[i]),
				    reason[0] != '\0' ? reason : vpmu_strerror(error));
			return (error);
		}
	}
	return (0);
}

int
vpmu_kvm_resolve_pmu_mode(struct vpmu_vm *vm, int *mode, char *why, size_t whylen)
{
	struct vpmu_event_filter f;
	struct vpmu_model m;
	vpmu_host *host;
	bool has_filter;
	int error;

	if (why != NULL && whylen > 0)
		why[0] = '\0';
	if (vm == NULL || mode == NULL || (why == NULL && whylen > 0) ||
	    vpmu_vm_get_model(vm, &m) != 0)
		return (EINVAL);
	if (vm->pmu_mode == VPMU_PMU_MODE_TRAP) {	/* no probe for the default */
		*mode = VPMU_PMU_MODE_TRAP;
		if (whylen > 0)
			snprintf(why, whylen, "trap: libvpmu implements the guest's counters "
			    "through MSR exits");
	} else {
		if ((error = vpmu_host_open(&host)) != 0)
			return (error);
		has_filter = vpmu_vm_get_event_filter(vm, &f) == 0;
		error = vpmu__kvm_mode_resolve(vpmu_host_get_info(host), &m, vm->pmu_mode,
		    has_filter ? &f : NULL, mode, why, whylen);
		vpmu_host_close(host);
		if (error != 0)
			return (error);
	}
	if (*mode == VPMU_PMU_MODE_TRAP && m.vendor != VPMU_VENDOR_NONE && !vm->uncounted_ok)
		return (counts_check(vm, why, whylen));
	return (0);
}

int
vpmu_kvm_get_pmu_mode(const vpmu_kvm *k, int *mode)
{
	if (k == NULL || mode == NULL)
		return (EINVAL);
	*mode = k->mode;
	return (0);
}

/* KVM_SET_PMU_EVENT_FILTER: f as it is (KVM's layout), or NULL for none. */
static int
kvm_filter(void *arg, const struct vpmu_event_filter *f)
{
	static const struct vpmu_event_filter none = { .action = VPMU_FILTER_DENY };
	struct vpmu_kvm *k = arg;

	if (ioctl(k->vm_fd, KVM_SET_PMU_EVENT_FILTER, f != NULL ? f : &none) < 0)
		return (errno);
	return (0);
}

/* The counter report: the model's PMU MSRs as KVM's vPMU has them. */
static int
kvm_counters(void *arg, unsigned cpu, struct vpmu_counter_info *out, unsigned *n)
{
	struct vpmu_kvm *k = arg;
	/* struct kvm_msrs and its entries, as KVM_GET_MSRS reads them */
	uint64_t buf[(sizeof(struct kvm_msrs) + VPMU_KVM_MODE_MAX_MSRS *
	    sizeof(struct kvm_msr_entry)) / sizeof(uint64_t) + 1];
	struct kvm_msrs *req = (struct kvm_msrs *)(void *)buf;
	uint32_t msrs[VPMU_KVM_MODE_MAX_MSRS];
	uint64_t vals[VPMU_KVM_MODE_MAX_MSRS];
	unsigned i, nm;
	int r;

	if (cpu >= k->nvcpus || k->vcpu[cpu].fd < 0)
		return (EINVAL);
	nm = vpmu__kvm_mode_msrs(&k->eff, msrs, VPMU_ARRAY_SIZE(msrs));
	memset(buf, 0, sizeof(buf));
	req->nmsrs = nm;
	for (i = 0; i < nm; i++)
		req->entries[i].index = msrs[i];
	if ((r = ioctl(k->vcpu[cpu].fd, KVM_GET_MSRS, req)) < 0)
		return (errno);
	if ((unsigned)r != nm)
		return (EIO);		/* KVM does not have MSR msrs[r] */
	for (i = 0; i < nm; i++)
		vals[i] = req->entries[i].data;
	return (vpmu__kvm_mode_counters(k->vm, &k->eff, vals, nm, out, n));
}

/*
 * After vpmu_kvm_destroy(): no KVM to ask.  A filter is kept by the VM
 * alone; the counters cannot be read.
 */
static int
detached_counters(void *arg, unsigned cpu, struct vpmu_counter_info *out, unsigned *n)
{
	(void)arg, (void)cpu, (void)out, (void)n;
	return (ENXIO);
}

static int
detached_filter(void *arg, const struct vpmu_event_filter *f)
{
	(void)arg, (void)f;
	return (0);
}

static const struct vpmu__gpmu_ext detached = { detached_counters, detached_filter, NULL };

/* At vpmu_kvm_destroy(): the core keeps hooks that need no KVM. */
void
vpmu__kvm_vpmu_detach(struct vpmu_kvm *k)
{
	(void)vpmu__gpmu_set_external(k->vm, &detached);
}

/* KVM_GET_SUPPORTED_CPUID's leaf (subleaf 0) into r; zeros if absent. */
static void
supported_leaf(const struct kvm_cpuid2 *c, uint32_t leaf, uint32_t r[4])
{
	unsigned i;

	memset(r, 0, 4 * sizeof(r[0]));
	for (i = 0; i < c->nent; i++)
		if (c->entries[i].function == leaf && c->entries[i].index == 0) {
			r[0] = c->entries[i].eax;
			r[1] = c->entries[i].ebx;
			r[2] = c->entries[i].ecx;
			r[3] = c->entries[i].edx;
			return;
		}
}

/*
 * Kvm mode: what KVM's vPMU offers (KVM_GET_SUPPORTED_CPUID on /dev/kvm),
 * and from it and the model the guest's PMU.  KVM's vPMU stays on.
 */
int
vpmu__kvm_vpmu_setup(struct vpmu_kvm *k)
{
	struct kvm_cpuid2 *c = NULL;
	struct vpmu_model m;
	unsigned nent = 128;
	uint32_t r[4], sup[4];
	int fd, error = 0;

	if ((error = vpmu_vm_get_model(k->vm, &m)) != 0)
		return (error);
	if ((fd = open("/dev/kvm", O_RDWR | O_CLOEXEC)) < 0)
		return (errno);
	for (;;) {
		free(c);
		if ((c = calloc(1, sizeof(*c) + nent * sizeof(c->entries[0]))) == NULL) {
			error = ENOMEM;
			break;
		}
		c->nent = nent;
		if (ioctl(fd, KVM_GET_SUPPORTED_CPUID, c) == 0)
			break;
		if (errno != E2BIG || nent >= 4096) {
			error = errno;
			break;
		}
		nent *= 2;
	}
	close(fd);
	if (error == 0) {
		supported_leaf(c, 0xA, sup);
		(void)vpmu_cpuid_get_leaf(k->vm, 0xA, 0, r);
		vpmu__kvm_mode_leaf(0xA, r, sup, k->leaf_0a);
		supported_leaf(c, 0x80000022, sup);
		(void)vpmu_cpuid_get_leaf(k->vm, 0x80000022, 0, r);
		vpmu__kvm_mode_leaf(0x80000022, r, sup, k->leaf_80000022);
		supported_leaf(c, 0x80000001, r);
		vpmu__kvm_mode_model(&m, k->leaf_0a, k->leaf_80000022,
		    (r[2] >> 23) & 1, &k->eff);
	}
	free(c);
	k->ext = (struct vpmu__gpmu_ext){ kvm_counters, kvm_filter, k };
	return (error);
}
