/*
 * test_cpuid_vendor.c -- the processor a guest is told it runs on: for
 * every model name, leaf 0's vendor string, leaf 1's family/model/stepping
 * and the extended leaves 0x80000000/1, from an Intel host's table and
 * from an AMD host's, every other bit left as the host gave it.  First
 * through vpmu_cpuid_adjust() (no KVM), then through
 * vpmu_kvm_cpuid_patch() on a KVM_SET_CPUID2 table of a real VM (needs
 * /dev/kvm: without it that part is skipped, exit 77).  There too: the
 * exact source's VM does not offer KVM's steal time, any other keeps it.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <unistd.h>
#include <cmocka.h>

#include <linux/kvm.h>

#include <vpmu/vpmu.h>
#include <vpmu/model.h>
#include <vpmu/kvm.h>
#include <vpmu/source.h>

#include "fixture.h"
#include "guest_msr.h"

/* What a model should make of the identity leaves. */
struct expect {
	const char *model;
	const char *vendor;	/* NULL: the host's */
	uint32_t family, model_nr, stepping;	/* family 0: the host's */
};

static const struct expect expects[] = {
	{ "intel-v1", "GenuineIntel", 0x06, 0x0E, 8 },
	{ "intel-v2", "GenuineIntel", 0x06, 0x17, 10 },
	{ "intel-v3", "GenuineIntel", 0x06, 0x1A, 5 },
	{ "intel-v4", "GenuineIntel", 0x06, 0x5E, 3 },
	{ "intel-v5", "GenuineIntel", 0x06, 0x8F, 8 },
	{ "amd-k7", "AuthenticAMD", 0x10, 0x04, 2 },
	{ "amd-core", "AuthenticAMD", 0x17, 0x31, 0 },
	{ "amd-v2", "AuthenticAMD", 0x19, 0x11, 1 },
	{ "none", NULL, 0, 0, 0 },
};

/* kvm-unit-tests' lib/x86/pmu.c errata list: Intel family 6 models. */
static const uint32_t errata_models[] = { 0x4D, 0x5F, 0x86, 0xAF, 0xDD };

/* Two hosts' identity leaves (eax, ebx, ecx, edx), features included. */
struct host {
	const char *vendor;
	uint32_t l0[4], l1[4], e0[4], e1[4];
};

static const struct host hosts[] = {
	{ "GenuineIntel",	/* a Cascade Lake server */
	  { 0x16, 0x756e6547, 0x6c65746e, 0x49656e69 },
	  { 0x00050657, 0x05100800, 0xfffa3203, 0x178bfbff },
	  { 0x80000008, 0, 0, 0 },
	  { 0, 0, 0x00000121, 0x2c100800 } },
	{ "AuthenticAMD",	/* a Milan server */
	  { 0x10, 0x68747541, 0x444d4163, 0x69746e65 },
	  { 0x00a00f11, 0x03100800, 0xfed83203, 0x178bfbff },
	  { 0x80000028, 0x68747541, 0x444d4163, 0x69746e65 },
	  { 0x00a00f11, 0x40000000, 0x75c237ff, 0x2fd3fbff } },
};

static void
vendor_of(const uint32_t r[4], char out[13])
{
	memcpy(out, &r[1], 4);
	memcpy(out + 4, &r[3], 4);
	memcpy(out + 8, &r[2], 4);
	out[12] = '\0';
}

static uint32_t
family_of(uint32_t eax)
{
	uint32_t f = eax >> 8 & 0xF;

	return (f == 0xF ? f + (eax >> 20 & 0xFF) : f);
}

static uint32_t
model_of(uint32_t eax)
{
	uint32_t f = eax >> 8 & 0xF;

	return (f == 0x6 || f == 0xF ? (eax >> 12 & 0xF0) | (eax >> 4 & 0xF) :
	    eax >> 4 & 0xF);
}

/*
 * The four identity leaves of host h after the model of x: l0, l1, e0, e1
 * as the guest gets them.
 */
static void
check_identity(const struct expect *x, const struct host *h, const uint32_t l0[4],
    const uint32_t l1[4], const uint32_t e0[4], const uint32_t e1[4])
{
	char v[13];
	int intel = x->vendor != NULL && strcmp(x->vendor, "GenuineIntel") == 0;
	int amd = x->vendor != NULL && !intel;
	size_t i;

	/* leaf 0: the vendor, the highest leaf reaching 0xA */
	vendor_of(l0, v);
	assert_string_equal(v, x->vendor != NULL ? x->vendor : h->vendor);
	assert_int_equal(l0[0], h->l0[0] > 0xA ? h->l0[0] : 0xA);

	/* leaf 1: the signature; type and reserved EAX bits, EBX, ECX but
	 * PDCM, EDX untouched */
	if (x->family != 0) {
		assert_int_equal(family_of(l1[0]), x->family);
		assert_int_equal(model_of(l1[0]), x->model_nr);
		assert_int_equal(l1[0] & 0xF, x->stepping);
	} else
		assert_int_equal(l1[0], h->l1[0]);
	assert_int_equal(l1[0] & ~0x0FFF0FFFu, h->l1[0] & ~0x0FFF0FFFu);
	assert_int_equal(l1[1], h->l1[1]);
	assert_int_equal(l1[2] & ~(1u << 15), h->l1[2] & ~(1u << 15));
	assert_int_equal(l1[3], h->l1[3]);
	for (i = 0; intel && i < sizeof(errata_models) / sizeof(errata_models[0]); i++)
		assert_int_not_equal(model_of(l1[0]), errata_models[i]);

	/* 0x80000000: Intel stops at 0x80000008, zeros; AMD repeats the
	 * vendor and reaches 0x80000022 (PerfMonV2) */
	if (intel) {
		assert_int_equal(e0[0], 0x80000008);
		assert_int_equal(e0[1] | e0[2] | e0[3], 0);
	} else {
		assert_int_equal(e0[0], h->e0[0] > 0x80000022 ? h->e0[0] : 0x80000022);
		if (amd) {
			vendor_of(e0, v);
			assert_string_equal(v, "AuthenticAMD");
		} else {
			assert_int_equal(e0[1], h->e0[1]);
			assert_int_equal(e0[2], h->e0[2]);
			assert_int_equal(e0[3], h->e0[3]);
		}
	}

	/* 0x80000001: EAX the signature (AMD) or 0 (Intel); EBX, ECX but
	 * PerfCtrExtCore, EDX untouched */
	assert_int_equal(e1[0], amd ? l1[0] : intel ? 0 : h->e1[0]);
	assert_int_equal(e1[1], h->e1[1]);
	assert_int_equal(e1[2] & ~(1u << 23), h->e1[2] & ~(1u << 23));
	assert_int_equal(e1[3], h->e1[3]);
}

static void
every_model_names_its_vendor_and_a_part_of_its_generation(void **state)
{
	size_t i, j;

	(void)state;
	for (i = 0; i < sizeof(expects) / sizeof(expects[0]); i++)
		for (j = 0; j < sizeof(hosts) / sizeof(hosts[0]); j++) {
			const struct host *h = &hosts[j];
			vpmu_vm *vm = fx_vm_model(expects[i].model, 1, NULL);
			uint32_t l0[4], l1[4], e0[4], e1[4];

			memcpy(l0, h->l0, sizeof(l0));
			memcpy(l1, h->l1, sizeof(l1));
			memcpy(e0, h->e0, sizeof(e0));
			memcpy(e1, h->e1, sizeof(e1));
			vpmu_cpuid_adjust(vm, 0x0, 0, l0);
			vpmu_cpuid_adjust(vm, 0x1, 0, l1);
			vpmu_cpuid_adjust(vm, 0x80000000, 0, e0);
			vpmu_cpuid_adjust(vm, 0x80000001, 0, e1);
			check_identity(&expects[i], h, l0, l1, e0, e1);
			vpmu_vm_destroy(vm);
		}
}

/* The exact signatures: a table edit that moves one shows here. */
static void
signatures_are_exact(void **state)
{
	static const struct { const char *model; uint32_t eax; } sig[] = {
		{ "intel-v1", 0x000006E8 }, { "intel-v2", 0x0001067A },
		{ "intel-v3", 0x000106A5 }, { "intel-v4", 0x000506E3 },
		{ "intel-v5", 0x000806F8 }, { "amd-k7", 0x00100F42 },
		{ "amd-core", 0x00830F10 }, { "amd-v2", 0x00A10F11 },
		{ "intel-v2:gp=4,fixed=2", 0x0001067A },
		{ "amd-v2:gp=4", 0x00A10F11 },
	};
	size_t i;

	(void)state;
	for (i = 0; i < sizeof(sig) / sizeof(sig[0]); i++) {
		vpmu_vm *vm = fx_vm_model(sig[i].model, 1, NULL);
		uint32_t l1[4] = { 0xF0003000u | 0x00A00F11u, 1, 2, 3 };

		vpmu_cpuid_adjust(vm, 0x1, 0, l1);
		assert_int_equal(l1[0], 0xF0003000u | sig[i].eax);
		vpmu_vm_destroy(vm);
	}
}

/* ---- through vpmu_kvm_cpuid_patch() on a real VM ----------------------- */

#define MAXENT 8

static struct kvm_cpuid2 *
table_new(void)
{
	struct kvm_cpuid2 *c;

	c = calloc(1, sizeof(*c) + MAXENT * sizeof(c->entries[0]));
	assert_non_null(c);
	return (c);
}

static void
table_add(struct kvm_cpuid2 *c, uint32_t leaf, const uint32_t r[4])
{
	struct kvm_cpuid_entry2 *e = &c->entries[c->nent++];

	memset(e, 0, sizeof(*e));
	e->function = leaf;
	e->eax = r[0];
	e->ebx = r[1];
	e->ecx = r[2];
	e->edx = r[3];
}

static void
table_get(const struct kvm_cpuid2 *c, uint32_t leaf, uint32_t r[4])
{
	unsigned i;

	for (i = 0; i < c->nent; i++)
		if (c->entries[i].function == leaf) {
			r[0] = c->entries[i].eax;
			r[1] = c->entries[i].ebx;
			r[2] = c->entries[i].ecx;
			r[3] = c->entries[i].edx;
			return;
		}
	fail_msg("leaf %#x missing", leaf);
}

static void
cpuid_patch_sets_the_identity_leaves(void **state)
{
	size_t i, j;
	int kvm = *(int *)*state;

	for (i = 0; i < sizeof(expects) / sizeof(expects[0]); i++)
		for (j = 0; j < sizeof(hosts) / sizeof(hosts[0]); j++) {
			const struct host *h = &hosts[j];
			vpmu_vm *vm = fx_vm_model(expects[i].model, 1, NULL);
			uint32_t l0[4], l1[4], e0[4], e1[4], a[4];
			struct kvm_cpuid2 *t = table_new();
			vpmu_kvm *k;
			int vmfd;

			assert_true((vmfd = ioctl(kvm, KVM_CREATE_VM, 0)) >= 0);
			assert_int_equal(vpmu_kvm_create(vm, vmfd, &k), 0);
			table_add(t, 0x0, h->l0);
			table_add(t, 0x1, h->l1);
			table_add(t, 0x80000000, h->e0);
			table_add(t, 0x80000001, h->e1);
			assert_int_equal(vpmu_kvm_cpuid_patch(k, t, MAXENT), 0);
			assert_int_equal(t->nent, 6);	/* + 0xA, 0x80000022 */
			table_get(t, 0x0, l0);
			table_get(t, 0x1, l1);
			table_get(t, 0x80000000, e0);
			table_get(t, 0x80000001, e1);
			check_identity(&expects[i], h, l0, l1, e0, e1);
			table_get(t, 0xA, a);
			assert_int_equal(a[0] & 0xFF,
			    strncmp(expects[i].model, "intel-v", 7) == 0 ?
			    (uint32_t)(expects[i].model[7] - '0') : 0);
			free(t);
			vpmu_kvm_destroy(k);
			vpmu_vm_destroy(vm);
			close(vmfd);
		}
}

/*
 * KVM's signature leaf at 0x40000000, or at 0x40000100 behind another
 * hypervisor's: with the exact source, KVM_FEATURE_STEAL_TIME goes from
 * the feature leaf after it and every other feature bit stays; with the
 * synthetic source the table keeps it.  A leaf that is not KVM's keeps
 * its bits either way.
 */
static void
cpuid_patch_hides_steal_time_from_the_exact_source(void **state)
{
	static const uint32_t kvm_sig[4] = { 0x40000001, 0x4b4d564b, 0x564b4d56, 0x4d };
	static const uint32_t other_sig[4] = { 0x40000001, 0x7263694d, 0x666f736f, 0x76482074 };
	static const uint32_t feat[4] = { 0x010007ff, 0, 0, 0 };
	int kvm = *(int *)*state, exact, behind;

	for (exact = 0; exact <= 1; exact++)
		for (behind = 0; behind <= 1; behind++) {
			uint32_t base = 0x40000000u + (behind ? 0x100u : 0), f[4], o[4];
			struct kvm_cpuid2 *t = table_new();
			vpmu_vm *vm = fx_vm_model("intel-v2", 1, exact ? &vpmu_source_exact : NULL);
			vpmu_kvm *k;
			int vmfd;

			assert_true((vmfd = ioctl(kvm, KVM_CREATE_VM, 0)) >= 0);
			assert_int_equal(vpmu_kvm_create(vm, vmfd, &k), 0);
			if (behind) {
				table_add(t, 0x40000000u, other_sig);
				table_add(t, 0x40000001u, feat);
			}
			table_add(t, base, kvm_sig);
			table_add(t, base + 1, feat);
			assert_int_equal(vpmu_kvm_cpuid_patch(k, t, MAXENT), 0);
			table_get(t, base + 1, f);
			assert_int_equal(f[0], exact ? 0x010007dfu : 0x010007ffu);
			if (behind) {
				table_get(t, 0x40000001u, o);
				assert_int_equal(o[0], 0x010007ffu);
			}
			free(t);
			vpmu_kvm_destroy(k);
			vpmu_vm_destroy(vm);
			close(vmfd);
		}
}

/*
 * TSX in the guest's table (leaf 7 EBX HLE bit 4 or RTM bit 11): an Intel
 * model's event selects take IN_TX (bit 32) on every counter and IN_TXCP
 * (bit 33) on counter 2 only, as KVM allows; without it, or on an AMD
 * model (bits 35:32 are its event select), nothing changes.
 */
static void
cpuid_patch_tsx_allows_in_tx(void **state)
{
	static const struct { uint32_t ebx; bool tsx; } c[] = {
		{ 0, false }, { 1u << 4, true }, { 1u << 11, true }, { 0xFFFFF7EFu, false },
	};
	const uint64_t ev = 0x43003C;		/* cycles, OS, USR, EN */
	int kvm = *(int *)*state;
	size_t i;

	for (i = 0; i < sizeof(c) / sizeof(c[0]); i++) {
		uint32_t l7[4] = { 0, c[i].ebx, 0, 0 };
		struct kvm_cpuid2 *t = table_new();
		vpmu_vm *vm = fx_vm_model("intel-v2:gp=4", 1, NULL);
		int tx = c[i].tsx ? VPMU_MSR_OK : VPMU_MSR_GP;
		vpmu_kvm *k;
		int vmfd;

		assert_true((vmfd = ioctl(kvm, KVM_CREATE_VM, 0)) >= 0);
		assert_int_equal(vpmu_kvm_create(vm, vmfd, &k), 0);
		table_add(t, 0x7, l7);
		assert_int_equal(vpmu_kvm_cpuid_patch(k, t, MAXENT), 0);
		table_get(t, 0x7, l7);
		assert_int_equal(l7[1], c[i].ebx);	/* the table as it was */
		assert_int_equal(MSR_WRITE(vm, 0, 0x186, ev | 1ull << 32), tx);
		assert_int_equal(MSR_WRITE(vm, 0, 0x187, ev | 1ull << 33), VPMU_MSR_GP);
		assert_int_equal(MSR_WRITE(vm, 0, 0x188, ev | 3ull << 32), tx);
		assert_int_equal(MSR_WRITE(vm, 0, 0x188, ev | 1ull << 34), VPMU_MSR_GP);
		assert_int_equal(MSR_WRITE(vm, 0, 0x186, ev | 1ull << 21), VPMU_MSR_GP);
		free(t);
		vpmu_kvm_destroy(k);
		vpmu_vm_destroy(vm);
		close(vmfd);
	}
}

/*
 * The VMM's own filter first (leaf 0xA zeroed, as a VMM that keeps it only
 * at version 2 does), libvpmu's patch last: the model's leaf wins.  With
 * no room for the missing leaf 0x80000022: ENOSPC, the table as it was,
 * and vpmu_kvm_cpuid_need() says how many entries the patch needs.
 */
static void
cpuid_patch_after_the_vmm_filter_all_or_nothing(void **state)
{
	static const uint32_t zero[4];
	int kvm = *(int *)*state, vmfd;
	vpmu_vm *vm = fx_vm_model("intel-v5", 1, NULL);
	struct kvm_cpuid2 *t = table_new();
	uint32_t a[4], want[4];
	unsigned need;
	vpmu_kvm *k;

	assert_true((vmfd = ioctl(kvm, KVM_CREATE_VM, 0)) >= 0);
	assert_int_equal(vpmu_kvm_create(vm, vmfd, &k), 0);
	table_add(t, 0x0, hosts[0].l0);
	table_add(t, 0x1, hosts[0].l1);
	table_add(t, 0xA, zero);			/* the VMM's filter */
	assert_int_equal(vpmu_kvm_cpuid_need(k, t, &need), 0);
	assert_int_equal(need, 4);			/* + 0x80000022 */
	assert_int_equal(vpmu_kvm_cpuid_patch(k, t, 3), ENOSPC);
	assert_int_equal(t->nent, 3);
	table_get(t, 0xA, a);
	assert_memory_equal(a, zero, sizeof(a));	/* unchanged */
	assert_int_equal(vpmu_kvm_cpuid_patch(k, t, need), 0);
	assert_int_equal(t->nent, 4);
	table_get(t, 0xA, a);
	assert_int_equal(vpmu_cpuid_get_leaf(vm, 0xA, 0, want), 0);	/* the PMU's leaf */
	assert_memory_equal(a, want, sizeof(a));
	assert_int_equal(a[0] & 0xFF, 5);		/* intel-v5, not hidden */
	assert_int_equal(vpmu_kvm_cpuid_need(k, t, &need), 0);
	assert_int_equal(need, 4);			/* nothing more to add */
	assert_int_equal(vpmu_kvm_cpuid_need(k, NULL, &need), EINVAL);
	free(t);
	vpmu_kvm_destroy(k);
	vpmu_vm_destroy(vm);
	close(vmfd);
}

int
main(void)
{
	const struct CMUnitTest core[] = {
		cmocka_unit_test(every_model_names_its_vendor_and_a_part_of_its_generation),
		cmocka_unit_test(signatures_are_exact),
	};
	static int kvm;
	const struct CMUnitTest glue[] = {
		cmocka_unit_test_prestate(cpuid_patch_sets_the_identity_leaves, &kvm),
		cmocka_unit_test_prestate(cpuid_patch_hides_steal_time_from_the_exact_source, &kvm),
		cmocka_unit_test_prestate(cpuid_patch_tsx_allows_in_tx, &kvm),
		cmocka_unit_test_prestate(cpuid_patch_after_the_vmm_filter_all_or_nothing, &kvm),
	};
	int r;

	if ((r = cmocka_run_group_tests_name("cpuid_vendor", core, NULL, NULL)) != 0)
		return (r);
	if ((kvm = open("/dev/kvm", O_RDWR | O_CLOEXEC)) < 0) {
		printf("cpuid_vendor: skip: vpmu_kvm_cpuid_patch() needs /dev/kvm: %s\n",
		    strerror(errno));
		return (77);
	}
	r = cmocka_run_group_tests_name("cpuid_vendor_kvm", glue, NULL, NULL);
	close(kvm);
	return (r);
}
