/*
 * kvm_cpuid.c -- the KVM glue's CPUID: the model's leaves patched into a
 * VMM's table (vpmu_kvm_cpuid_need, vpmu_kvm_cpuid_patch), KVM's steal
 * time hidden from a guest the source follows, and the first entry's
 * check that the vCPU's CPUID still describes the model's PMU.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/syscall.h>
#include <unistd.h>
#include <linux/kvm_para.h>

#include "kvm_internal.h"
/* The index of leaf (subleaf 0) in c, or c->nent. */
static unsigned
cpuid_find(const struct kvm_cpuid2 *c, uint32_t leaf)
{
	unsigned i;

	for (i = 0; i < c->nent; i++)
		if (c->entries[i].function == leaf && c->entries[i].index == 0)
			break;
	return (i);
}

static struct kvm_cpuid_entry2 *
cpuid_entry(struct kvm_cpuid2 *c, unsigned max, uint32_t leaf, bool add)
{
	unsigned i = cpuid_find(c, leaf);

	if (i < c->nent)
		return (&c->entries[i]);
	if (!add || c->nent >= max)
		return (NULL);
	memset(&c->entries[c->nent], 0, sizeof(c->entries[0]));
	c->entries[c->nent].function = leaf;
	return (&c->entries[c->nent++]);
}

static void
entry_regs(struct kvm_cpuid_entry2 *e, uint32_t r[4], bool store)
{
	uint32_t *f[4] = { &e->eax, &e->ebx, &e->ecx, &e->edx };
	int i;

	for (i = 0; i < 4; i++) {
		if (store)
			*f[i] = r[i];
		else
			r[i] = *f[i];
	}
}

/*
 * KVM's steal-time feature off, in every KVM signature leaf's feature
 * leaf ("KVMKVMKVM\0\0\0" at 0x40000000, or a multiple of 0x100 above it
 * behind another hypervisor's leaves).  KVM rewrites the steal-time
 * record, version first, at every KVM_RUN; a guest reads it in a
 * seqcount loop, retried while the version moved, and a loop whose
 * every pass holds an exit of the stepping source retries for ever.
 */
static void
cpuid_hide_steal_time(struct kvm_cpuid2 *c)
{
	struct kvm_cpuid_entry2 *sig, *feat;
	uint32_t base, r[4];

	for (base = KVM_CPUID_SIGNATURE; base <= KVM_CPUID_SIGNATURE + 0xff00; base += 0x100) {
		if ((sig = cpuid_entry(c, 0, base, false)) == NULL)
			continue;
		entry_regs(sig, r, false);	/* EBX, ECX, EDX: the signature */
		if (memcmp(&r[1], "KVMKVMKVM\0\0\0", 12) == 0 &&
		    (feat = cpuid_entry(c, 0, base + 1, false)) != NULL)
			feat->eax &= ~(1u << KVM_FEATURE_STEAL_TIME);
	}
}

/* The leaves vpmu_kvm_cpuid_patch() sets whole, adding them if missing. */
static const uint32_t owned_leaves[] = { 0xA, 0x80000022 };

int
vpmu_kvm_cpuid_need(const vpmu_kvm *k, const struct kvm_cpuid2 *cpuid, unsigned *nent)
{
	size_t i;

	if (k == NULL || cpuid == NULL || nent == NULL)
		return (EINVAL);
	*nent = cpuid->nent;
	for (i = 0; i < VPMU_ARRAY_SIZE(owned_leaves); i++)
		if (cpuid_find(cpuid, owned_leaves[i]) == cpuid->nent)
			(*nent)++;
	return (0);
}

/* What the guest's CPUID says for an owned leaf: the model's, or in kvm mode what KVM's vPMU can also give. */
static void
owned_leaf(const vpmu_kvm *k, uint32_t leaf, uint32_t r[4])
{
	if (k->mode == VPMU_PMU_MODE_KVM)
		memcpy(r, leaf == 0xA ? k->leaf_0a : k->leaf_80000022, 4 * sizeof(r[0]));
	else
		(void)vpmu_cpuid_get_leaf(k->vm, leaf, 0, r);
}

int
vpmu_kvm_cpuid_patch(vpmu_kvm *k, struct kvm_cpuid2 *cpuid, unsigned max_entries)
{
	static const uint32_t adjusted[] = { 0x0, 0x1, 0x80000000, 0x80000001 };
	struct kvm_cpuid_entry2 *e;
	uint32_t r[4];
	unsigned need;
	size_t i;

	if (k == NULL || cpuid == NULL || cpuid->nent > max_entries)
		return (EINVAL);
	/* All or nothing: no room, no change. */
	if (vpmu_kvm_cpuid_need(k, cpuid, &need) == 0 && need > max_entries)
		return (ENOSPC);
	for (i = 0; i < VPMU_ARRAY_SIZE(owned_leaves); i++) {
		owned_leaf(k, owned_leaves[i], r);
		if ((e = cpuid_entry(cpuid, max_entries, owned_leaves[i], true)) == NULL)
			return (ENOSPC);
		entry_regs(e, r, true);
	}
	if (k->mode == VPMU_PMU_MODE_KVM) {
		/* PerfCtrExtCore where the model and KVM both have it; the rest is KVM's. */
		if ((e = cpuid_entry(cpuid, max_entries, 0x80000001, false)) != NULL)
			e->ecx = (e->ecx & ~(1u << 23)) | (k->eff.core_ext ? 1u << 23 : 0);
		if (k->vm->src->exec_wants != NULL)
			cpuid_hide_steal_time(cpuid);
		return (0);
	}
	for (i = 0; i < VPMU_ARRAY_SIZE(adjusted); i++)
		if ((e = cpuid_entry(cpuid, max_entries, adjusted[i], false)) != NULL) {
			entry_regs(e, r, false);
			vpmu_cpuid_adjust(k->vm, adjusted[i], 0, r);
			entry_regs(e, r, true);
		}
	if (k->vm->src->exec_wants != NULL)	/* a source that watches the guest run */
		cpuid_hide_steal_time(cpuid);
	/* HLE (7.EBX[4]) or RTM (7.EBX[11]): the guest may set IN_TX, IN_TXCP. */
	e = cpuid_entry(cpuid, max_entries, 0x7, false);
	vpmu__gpmu_set_tsx(k->vm, e != NULL && (e->ebx & (1u << 4 | 1u << 11)) != 0);
	return (0);
}

/* The vCPU's CPUID table (KVM_GET_CPUID2), malloc'd; NULL if it cannot be read. */
static struct kvm_cpuid2 *
vcpu_cpuid(const struct kvm_vcpu_ctx *c)
{
	struct kvm_cpuid2 *t = NULL, *nt;
	unsigned n = 128;

	for (;;) {
		if ((nt = realloc(t, sizeof(*t) + n * sizeof(t->entries[0]))) == NULL)
			break;
		t = nt;
		t->nent = n;
		if (ioctl(c->fd, KVM_GET_CPUID2, t) == 0)
			return (t);
		if (errno != E2BIG || n >= 4096)
			break;
		n *= 2;
	}
	free(t);
	return (NULL);
}

/*
 * A vCPU's first entry: its thread, unless the VMM named one
 * (vpmu_vcpu_set_thread()); and the CPUID KVM has for it must describe
 * the model's PMU -- a VMM that filtered its CPUID after
 * vpmu_kvm_cpuid_patch(), or never patched it, would hide the PMU from
 * the guest without a word.  EPROTO then.
 */
int
vpmu__kvm_first_entry(vpmu_kvm *k, unsigned cpu, struct kvm_vcpu_ctx *c)
{
	struct kvm_cpuid2 *t;
	uint32_t want[4], have[4];
	pid_t tid = (pid_t)syscall(SYS_gettid);	/* no system call under the lock */
	unsigned e;
	size_t i;
	int error = 0;

	vpmu__vm_lock(k->vm);
	if (k->vm->vcpu[cpu].tid == 0)
		k->vm->vcpu[cpu].tid = tid;
	vpmu__vm_unlock(k->vm);
	/* A table that cannot be read holds nothing against the vCPU. */
	t = vcpu_cpuid(c);
	for (i = 0; t != NULL && i < VPMU_ARRAY_SIZE(owned_leaves) && error == 0; i++) {
		owned_leaf(k, owned_leaves[i], want);
		memset(have, 0, sizeof(have));	/* a leaf missing reads as zeros */
		if ((e = cpuid_find(t, owned_leaves[i])) < t->nent)
			entry_regs(&t->entries[e], have, false);
		if (memcmp(want, have, sizeof(want)) != 0)
			error = EPROTO;
	}
	free(t);
	if (error == 0)
		c->started = true;
	return (error);
}
