/*
 * test_event_filter.c -- the per-VM event filter (vpmu_event_filter(3)):
 * KVM's checks (EINVAL, E2BIG), the text format and its errors, the
 * presets, KVM's matching rules for plain and masked entries, and counting
 * on every guest-visible model through the MSR entry points on the
 * synthetic source (exact): an allowed event counts exactly, a denied one
 * counts 0, fixed counters follow the bitmap, and a filter changed on a
 * live VM applies from the next programming.
 */
#include <errno.h>
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>

#include <vpmu/vpmu.h>
#include <vpmu/model.h>
#include <vpmu/vcpu.h>

#include "guest_msr.h"

#define MS		1000000ull
#define EN		(1ull << 22)
#define USR		(1ull << 16)
#define OS		(1ull << 17)

/* ---- checks ----------------------------------------------------------------- */

static struct vpmu_event_filter *
fnew(uint32_t action)
{
	struct vpmu_event_filter *f = calloc(1, sizeof(*f));

	assert_non_null(f);
	f->action = action;
	return (f);
}

static void
check_is_kvms(void **state)
{
	struct vpmu_event_filter *f = fnew(VPMU_FILTER_ALLOW);
	vpmu_config *cfg;

	(void)state;
	/* The layout is struct kvm_pmu_event_filter with events[300]. */
	assert_int_equal(offsetof(struct vpmu_event_filter, events), 32);
	assert_int_equal(sizeof(*f), 32 + 300 * 8);
	assert_int_equal(vpmu_event_filter_check(f), 0);
	assert_int_equal(vpmu_event_filter_check(NULL), EINVAL);
	f->action = 2;
	assert_int_equal(vpmu_event_filter_check(f), EINVAL);
	f->nevents = 301;				/* action is checked first, as KVM */
	assert_int_equal(vpmu_event_filter_check(f), EINVAL);
	f->action = VPMU_FILTER_DENY;
	assert_int_equal(vpmu_event_filter_check(f), E2BIG);
	f->nevents = 300;
	assert_int_equal(vpmu_event_filter_check(f), 0);
	f->flags = 2;
	assert_int_equal(vpmu_event_filter_check(f), EINVAL);
	f->flags = 0;
	/* Unmasked: any value is accepted (KVM cannot reject impossible events). */
	f->nevents = 1;
	f->events[0] = ~0ull;
	assert_int_equal(vpmu_event_filter_check(f), 0);
	f->flags = VPMU_FILTER_MASKED;
	assert_int_equal(vpmu_event_filter_check(f), EINVAL);
	f->events[0] = VPMU_FILTER_MASKED_ENTRY(0xFFF, 0xFF, 0xFF, 1);
	assert_int_equal(vpmu_event_filter_check(f), 0);
	f->events[0] |= 1ull << 16;			/* a bit outside the entry */
	assert_int_equal(vpmu_event_filter_check(f), EINVAL);
	f->events[0] = VPMU_FILTER_MASKED_ENTRY(0xC0, 0xFF, 0, 0);
	f->fixed_counter_bitmap = 0xFFFFFFFF;		/* counters that do not exist: fine */
	assert_int_equal(vpmu_event_filter_check(f), 0);
	/* The configuration checks the same way and keeps nothing refused. */
	assert_int_equal(vpmu_config_create(&cfg), 0);
	assert_int_equal(vpmu_config_set_event_filter(cfg, f), 0);
	f->nevents = 301;
	assert_int_equal(vpmu_config_set_event_filter(cfg, f), E2BIG);
	f->nevents = 1;
	f->action = 5;
	assert_int_equal(vpmu_config_set_event_filter(cfg, f), EINVAL);
	assert_int_equal(vpmu_config_set_event_filter(NULL, f), EINVAL);
	assert_int_equal(vpmu_config_set_event_filter(cfg, NULL), 0);
	vpmu_config_destroy(cfg);
	free(f);
}

/* A masked entry with select bits 11:8 (35:32) is AMD's only: EINVAL on Intel. */
static void
masked_high_select_bits_are_amds(void **state)
{
	struct vpmu_event_filter *f = fnew(VPMU_FILTER_DENY);
	struct vpmu_model m;
	vpmu_config *cfg;
	vpmu_vm *vm;
	int ok;

	(void)state;
	f->flags = VPMU_FILTER_MASKED;
	f->nevents = 1;
	f->events[0] = VPMU_FILTER_MASKED_ENTRY(0x1C0, 0xFF, 0, 0);
	assert_int_equal(vpmu_event_filter_allows(f, VPMU_VENDOR_INTEL, 0xC0, &ok), EINVAL);
	assert_int_equal(vpmu_event_filter_allows(f, VPMU_VENDOR_AMD, 0xC0, &ok), 0);
	assert_int_equal(ok, 1);				/* 0x0C0 is not 0x1C0 */
	assert_int_equal(vpmu_event_filter_allows(f, VPMU_VENDOR_AMD, 0x1000000C0ull, &ok), 0);
	assert_int_equal(ok, 0);
	assert_int_equal(vpmu_config_create(&cfg), 0);
	assert_int_equal(vpmu_config_set_event_filter(cfg, f), 0);
	assert_int_equal(vpmu_model_parse("intel-v2", &m, NULL, 0), 0);
	assert_int_equal(vpmu_config_set_model(cfg, &m), 0);
	assert_int_equal(vpmu_vm_create(cfg, &vm), EINVAL);
	assert_int_equal(vpmu_model_parse("amd-v2", &m, NULL, 0), 0);
	assert_int_equal(vpmu_config_set_model(cfg, &m), 0);
	assert_int_equal(vpmu_vm_create(cfg, &vm), 0);
	vpmu_vm_destroy(vm);
	vpmu_config_destroy(cfg);
	free(f);
}

/* ---- matching ------------------------------------------------------------------ */

static int
allows(const struct vpmu_event_filter *f, uint32_t vendor, uint64_t sel)
{
	int ok = -1;

	assert_int_equal(vpmu_event_filter_allows(f, vendor, sel, &ok), 0);
	return (ok);
}

static int
allows_fixed(const struct vpmu_event_filter *f, unsigned idx)
{
	int ok = -1;

	assert_int_equal(vpmu_event_filter_allows_fixed(f, idx, &ok), 0);
	return (ok);
}

static void
plain_entries_match_select_and_umask_only(void **state)
{
	struct vpmu_event_filter *f = fnew(VPMU_FILTER_ALLOW);

	(void)state;
	f->nevents = 3;
	f->events[0] = VPMU_FILTER_EVENT(0x3C, 0x01);	/* reference cycles */
	f->events[1] = 0xC0;
	f->events[2] = 0xC4 | (1ull << 16);		/* impossible: skipped */
	/* The select's other bits (EN, USR, OS, INT, cmask...) do not matter. */
	assert_int_equal(allows(f, VPMU_VENDOR_INTEL, 0xC0 | EN | USR | OS | (3ull << 24)), 1);
	assert_int_equal(allows(f, VPMU_VENDOR_INTEL, 0x13C | EN), 1);
	assert_int_equal(allows(f, VPMU_VENDOR_INTEL, 0x3C | EN), 0);	/* umask 0 != 1 */
	assert_int_equal(allows(f, VPMU_VENDOR_INTEL, 0x1C0), 0);	/* umask 1 != 0 */
	assert_int_equal(allows(f, VPMU_VENDOR_INTEL, 0xC4), 0);	/* skipped entry */
	assert_int_equal(allows(f, VPMU_VENDOR_INTEL, 0xC4 | USR), 0);
	f->action = VPMU_FILTER_DENY;
	assert_int_equal(allows(f, VPMU_VENDOR_INTEL, 0xC0), 0);
	assert_int_equal(allows(f, VPMU_VENDOR_INTEL, 0xC4), 1);
	/* Intel: bits 35:32 are not part of the event (IN_TX...); AMD: they are. */
	assert_int_equal(allows(f, VPMU_VENDOR_INTEL, 0x1000000C0ull), 0);
	assert_int_equal(allows(f, VPMU_VENDOR_AMD, 0x1000000C0ull), 1);
	f->events[1] = VPMU_FILTER_EVENT(0x1C0, 0);	/* AMD select 0x1C0 */
	assert_int_equal(allows(f, VPMU_VENDOR_AMD, 0x1000000C0ull), 0);
	assert_int_equal(allows(f, VPMU_VENDOR_AMD, 0xC0), 1);
	assert_int_equal(allows(f, VPMU_VENDOR_INTEL, 0xC0), 1);	/* skipped on Intel */
	free(f);
}

/* KVM's selftest cases: loads 0x81, stores 0x82, loads+stores 0x83. */
static void
masked_entries_include_and_exclude(void **state)
{
	struct vpmu_event_filter *f = fnew(VPMU_FILTER_ALLOW);

	(void)state;
	f->flags = VPMU_FILTER_MASKED;
	f->nevents = 2;
	f->events[0] = VPMU_FILTER_MASKED_ENTRY(0xD0, 0x7C, 0x00, 0);
	f->events[1] = VPMU_FILTER_MASKED_ENTRY(0xD0, 0xFF, 0x83, 1);
	assert_int_equal(allows(f, VPMU_VENDOR_INTEL, 0x81D0), 1);
	assert_int_equal(allows(f, VPMU_VENDOR_INTEL, 0x82D0), 1);
	assert_int_equal(allows(f, VPMU_VENDOR_INTEL, 0x83D0), 0);	/* excluded */
	assert_int_equal(allows(f, VPMU_VENDOR_INTEL, 0x84D0), 0);	/* no include */
	assert_int_equal(allows(f, VPMU_VENDOR_INTEL, 0x81C0), 0);	/* other select */
	f->action = VPMU_FILTER_DENY;
	assert_int_equal(allows(f, VPMU_VENDOR_INTEL, 0x81D0), 0);
	assert_int_equal(allows(f, VPMU_VENDOR_INTEL, 0x83D0), 1);
	assert_int_equal(allows(f, VPMU_VENDOR_INTEL, 0x84D0), 1);
	/* An exclude alone matches nothing in: not in the filter. */
	f->nevents = 1;
	f->events[0] = VPMU_FILTER_MASKED_ENTRY(0xD0, 0xFF, 0x83, 1);
	assert_int_equal(allows(f, VPMU_VENDOR_INTEL, 0x83D0), 1);
	f->action = VPMU_FILTER_ALLOW;
	assert_int_equal(allows(f, VPMU_VENDOR_INTEL, 0x83D0), 0);
	/* mask 0 match 0: every umask of the select. */
	f->events[0] = VPMU_FILTER_MASKED_ENTRY(0xD0, 0, 0, 0);
	assert_int_equal(allows(f, VPMU_VENDOR_AMD, 0xFFD0), 1);
	assert_int_equal(allows(f, VPMU_VENDOR_AMD, 0xFFD1), 0);
	free(f);
}

static void
fixed_counters_follow_the_bitmap_alone(void **state)
{
	struct vpmu_event_filter *f = fnew(VPMU_FILTER_ALLOW);

	(void)state;
	f->fixed_counter_bitmap = 0x5;
	f->nevents = 1;
	f->events[0] = VPMU_FILTER_EVENT(0x3C, 0);	/* events[] is not consulted */
	assert_int_equal(allows_fixed(f, 0), 1);
	assert_int_equal(allows_fixed(f, 1), 0);
	assert_int_equal(allows_fixed(f, 2), 1);
	assert_int_equal(allows_fixed(f, 40), 0);
	f->action = VPMU_FILTER_DENY;
	assert_int_equal(allows_fixed(f, 0), 0);
	assert_int_equal(allows_fixed(f, 1), 1);
	assert_int_equal(allows_fixed(f, 2), 0);
	assert_int_equal(allows_fixed(f, 40), 1);
	free(f);
}

/* ---- presets ---------------------------------------------------------------------- */

static void
presets_are_xens(void **state)
{
	struct vpmu_event_filter *f = fnew(0);
	static const uint64_t iipc[] = { 0x003C, 0x013C, 0x00C0 };
	static const uint64_t iarch[] = { 0x003C, 0x013C, 0x00C0, 0x4F2E, 0x412E, 0x00C4, 0x00C5 };
	static const uint64_t aipc[] = { 0x0076, 0x00C0 };
	static const uint64_t aarch[] = { 0x0076, 0x00C0, 0x00C2, 0x00C3 };

	(void)state;
	assert_int_equal(vpmu_event_filter_preset("ipc", VPMU_VENDOR_INTEL, f), 0);
	assert_int_equal(f->action, VPMU_FILTER_ALLOW);
	assert_int_equal(f->flags, 0);
	assert_int_equal(f->fixed_counter_bitmap, 0x7);
	assert_int_equal(f->nevents, 3);
	assert_memory_equal(f->events, iipc, sizeof(iipc));
	assert_int_equal(vpmu_event_filter_preset("arch", VPMU_VENDOR_INTEL, f), 0);
	assert_int_equal(f->nevents, 7);
	assert_memory_equal(f->events, iarch, sizeof(iarch));
	assert_int_equal(vpmu_event_filter_preset("ipc", VPMU_VENDOR_AMD, f), 0);
	assert_int_equal(f->nevents, 2);
	assert_memory_equal(f->events, aipc, sizeof(aipc));
	assert_int_equal(vpmu_event_filter_preset("arch", VPMU_VENDOR_AMD, f), 0);
	assert_int_equal(f->nevents, 4);
	assert_memory_equal(f->events, aarch, sizeof(aarch));
	assert_int_equal(vpmu_event_filter_check(f), 0);
	assert_int_equal(vpmu_event_filter_preset("all", VPMU_VENDOR_AMD, f), ENOENT);
	assert_int_equal(vpmu_event_filter_preset("ipc", VPMU_VENDOR_NONE, f), EINVAL);
	assert_int_equal(vpmu_event_filter_preset(NULL, VPMU_VENDOR_AMD, f), EINVAL);
	free(f);
}

/* ---- the text format ------------------------------------------------------------------ */

static void
parse_builds_kvms_filter(void **state)
{
	struct vpmu_event_filter *f = fnew(0);
	char why[160];

	(void)state;
	assert_int_equal(vpmu_event_filter_parse(
	    "# comment\n"
	    "\n"
	    "deny   # trailing comment\n"
	    "fixed 0x5\n"
	    "event 0xc4\n"
	    "event 0x3c umask 0x01\n"
	    "event 0x1c2\n"
	    "raw 0x412e\n", f, why, sizeof(why)), 0);
	assert_string_equal(why, "");
	assert_int_equal(f->action, VPMU_FILTER_DENY);
	assert_int_equal(f->flags, 0);
	assert_int_equal(f->fixed_counter_bitmap, 5);
	assert_int_equal(f->nevents, 4);
	assert_true(f->events[0] == 0xC4);
	assert_true(f->events[1] == 0x13C);
	assert_true(f->events[2] == 0x1000000C2ull);
	assert_true(f->events[3] == 0x412E);
	/* Masked: "event" lines become masked entries matching the same events. */
	assert_int_equal(vpmu_event_filter_parse(
	    "allow\n"
	    "masked select 0xd0 mask 0x7c match 0\n"
	    "masked select 0xd0 mask 0xff match 0x83 exclude\n"
	    "event 0xc0 umask 2\n", f, why, sizeof(why)), 0);
	assert_int_equal(f->flags, VPMU_FILTER_MASKED);
	assert_int_equal(f->fixed_counter_bitmap, 0);
	assert_int_equal(f->nevents, 3);
	assert_true(f->events[0] == VPMU_FILTER_MASKED_ENTRY(0xD0, 0x7C, 0, 0));
	assert_true(f->events[1] == VPMU_FILTER_MASKED_ENTRY(0xD0, 0xFF, 0x83, 1));
	assert_true(f->events[2] == VPMU_FILTER_MASKED_ENTRY(0xC0, 0xFF, 2, 0));
	assert_int_equal(allows(f, VPMU_VENDOR_INTEL, 0x2C0), 1);
	assert_int_equal(allows(f, VPMU_VENDOR_INTEL, 0x3C0), 0);
	free(f);
}

static void
parse_errors_name_the_line(void **state)
{
	static const struct { const char *text; int err; const char *why; } bad[] = {
		{ "allow\nevent 0xc0\nbogus 1\n", EINVAL, "line 3: unknown keyword \"bogus\"" },
		{ "event 0xc0\n", EINVAL, "line 1: no allow or deny line" },
		{ "", EINVAL, "line 1: no allow or deny line" },
		{ "allow\ndeny\n", EINVAL, "line 2: a second allow or deny line" },
		{ "allow x\n", EINVAL, "line 1: unexpected \"x\"" },
		{ "allow\n\nevent\n", EINVAL, "line 3: event: a number is missing" },
		{ "allow\nevent 0x1000\n", EINVAL, "line 2: event: 0x1000 is more than 0xfff" },
		{ "allow\nevent 0xzz\n", EINVAL, "line 2: event: \"0xzz\" is not a number" },
		{ "allow\nevent -1\n", EINVAL, "line 2: event: \"-1\" is not a number" },
		{ "allow\nevent 0xc0 umask 0x100\n", EINVAL, "line 2: umask: 0x100 is more than 0xff" },
		{ "allow\nevent 0xc0 mask 1\n", EINVAL,
		  "line 2: \"mask\" where \"umask\" or the end of the line was expected" },
		{ "allow\nfixed 0x100000000\n", EINVAL, "line 2: fixed: 0x100000000 is more than" },
		{ "allow\nfixed 1\nfixed 2\n", EINVAL, "line 3: a second fixed line" },
		{ "deny\nmasked select 0xd0 mask 0xff\n", EINVAL,
		  "line 2: masked: \"match\" is missing" },
		{ "deny\nmasked select 0xd0 match 1 mask 0xff\n", EINVAL,
		  "line 2: \"match\" where \"mask\" or the end of the line was expected" },
		{ "deny\nmasked select 0xd0 mask 0xff match 1 exclude 1\n", EINVAL,
		  "line 2: unexpected \"1\"" },
		{ "deny\nmasked select 0xd0 mask 0xff match 1\n# x\nraw 0x10000\n", EINVAL,
		  "line 4: raw 0x10000 is not a valid masked entry" },
	};
	struct vpmu_event_filter *f = fnew(0);
	char why[160], *big;
	size_t i, n;

	(void)state;
	for (i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		f->nevents = 77;
		assert_int_equal(vpmu_event_filter_parse(bad[i].text, f, why, sizeof(why)),
		    bad[i].err);
		if (strncmp(why, bad[i].why, strlen(bad[i].why)) != 0)
			fail_msg("%zu: '%s' is not '%s'", i, why, bad[i].why);
		assert_int_equal(f->nevents, 77);	/* *out untouched */
	}
	/* 301 events: E2BIG at line 302 (line 1 is "allow"). */
	big = malloc(20 * 302);
	assert_non_null(big);
	n = (size_t)sprintf(big, "allow\n");
	for (i = 0; i < 301; i++)
		n += (size_t)sprintf(big + n, "event 0x%zx\n", i);
	assert_int_equal(vpmu_event_filter_parse(big, f, why, sizeof(why)), E2BIG);
	assert_string_equal(why, "line 302: more than 300 events");
	big[n - strlen("event 0x12c\n")] = '\0';	/* 300: fine */
	assert_int_equal(vpmu_event_filter_parse(big, f, why, sizeof(why)), 0);
	assert_int_equal(f->nevents, 300);
	free(big);
	assert_int_equal(vpmu_event_filter_parse(NULL, f, why, sizeof(why)), EINVAL);
	assert_int_equal(vpmu_event_filter_parse("allow", NULL, why, sizeof(why)), EINVAL);
	assert_int_equal(vpmu_event_filter_parse("allow", f, NULL, 0), 0);
	free(f);
}

/* ---- counting on every model ------------------------------------------------------- */

struct mdl {
	const char *name;
	uint32_t vendor;
	unsigned nfixed;
	uint32_t (*sel)(unsigned i);
	uint32_t (*ctr)(unsigned i);
	uint64_t insns, branches;	/* event selects */
};

static uint32_t intel_sel(unsigned i) { return (0x186u + i); }
static uint32_t intel_ctr(unsigned i) { return (0x0C1u + i); }
static uint32_t k7_sel(unsigned i) { return (0xC0010000u + i); }
static uint32_t k7_ctr(unsigned i) { return (0xC0010004u + i); }
static uint32_t core_sel(unsigned i) { return (0xC0010200u + 2 * i); }
static uint32_t core_ctr(unsigned i) { return (0xC0010201u + 2 * i); }

static const struct mdl models[] = {
	{ "intel-v1", VPMU_VENDOR_INTEL, 0, intel_sel, intel_ctr, 0xC0, 0xC4 },
	{ "intel-v2", VPMU_VENDOR_INTEL, 3, intel_sel, intel_ctr, 0xC0, 0xC4 },
	{ "intel-v3", VPMU_VENDOR_INTEL, 3, intel_sel, intel_ctr, 0xC0, 0xC4 },
	{ "intel-v4", VPMU_VENDOR_INTEL, 3, intel_sel, intel_ctr, 0xC0, 0xC4 },
	{ "intel-v5", VPMU_VENDOR_INTEL, 3, intel_sel, intel_ctr, 0xC0, 0xC4 },
	{ "amd-k7", VPMU_VENDOR_AMD, 0, k7_sel, k7_ctr, 0xC0, 0xC2 },
	{ "amd-core", VPMU_VENDOR_AMD, 0, core_sel, core_ctr, 0xC0, 0xC2 },
	{ "amd-v2", VPMU_VENDOR_AMD, 0, core_sel, core_ctr, 0xC0, 0xC2 },
};

#define FIXED_CTR(i)	(0x309u + (i))
#define FIXED_CTRL	0x38Du
#define GCTRL		0x38Fu

static uint64_t
rd(vpmu_vm *vm, uint32_t msr)
{
	uint64_t v = 0xBAD;

	assert_int_equal(MSR_READ(vm, 0, msr, &v), VPMU_MSR_OK);
	return (v);
}

#define WR(vm, msr, v)	assert_int_equal(MSR_WRITE(vm, 0, msr, v), VPMU_MSR_OK)

static vpmu_vm *
vm_with(const struct mdl *md, const struct vpmu_event_filter *f)
{
	struct vpmu_model m;
	vpmu_config *cfg;
	vpmu_vm *vm;

	assert_int_equal(vpmu_model_parse(md->name, &m, NULL, 0), 0);
	assert_int_equal(vpmu_config_create(&cfg), 0);
	assert_int_equal(vpmu_config_set_model(cfg, &m), 0);
	assert_int_equal(vpmu_config_set_event_filter(cfg, f), 0);
	assert_int_equal(vpmu_vm_create(cfg, &vm), 0);
	vpmu_config_destroy(cfg);
	assert_int_equal(vpmu_synthetic_set_rate(vm, 0, VPMU_EV_INSTRUCTIONS, 1000), 0);
	assert_int_equal(vpmu_synthetic_set_rate(vm, 0, VPMU_EV_BRANCHES, 100), 0);
	assert_int_equal(vpmu_synthetic_set_rate(vm, 0, VPMU_EV_CYCLES, 3000), 0);
	assert_int_equal(vpmu_synthetic_set_rate(vm, 0, VPMU_EV_REF_CYCLES, 2000), 0);
	return (vm);
}

/* GP0 instructions, GP1 branches, every fixed counter on (OS+USR). */
static void
program(vpmu_vm *vm, const struct mdl *md)
{
	WR(vm, md->sel(0), md->insns | USR | OS | EN);
	WR(vm, md->sel(1), md->branches | USR | OS | EN);
	if (md->nfixed > 0) {
		WR(vm, FIXED_CTRL, 0x333);
		WR(vm, GCTRL, 0x700000003ull);
	}
}

/* Counts after 2 ms: instructions 2000, branches 200, fixed 2000/6000/4000. */
static void
expect(vpmu_vm *vm, const struct mdl *md, uint64_t insns, uint64_t branches,
    const uint64_t fixed[3])
{
	unsigned i;

	if (rd(vm, md->ctr(0)) != insns || rd(vm, md->ctr(1)) != branches)
		fail_msg("%s: GP0 %llu (want %llu), GP1 %llu (want %llu)", md->name,
		    (unsigned long long)rd(vm, md->ctr(0)), (unsigned long long)insns,
		    (unsigned long long)rd(vm, md->ctr(1)), (unsigned long long)branches);
	for (i = 0; i < md->nfixed; i++)
		if (rd(vm, FIXED_CTR(i)) != fixed[i])
			fail_msg("%s: fixed %u %llu, want %llu", md->name, i,
			    (unsigned long long)rd(vm, FIXED_CTR(i)),
			    (unsigned long long)fixed[i]);
}

static void
every_model_counts_allowed_and_not_denied(void **state)
{
	struct vpmu_event_filter *f = fnew(0);
	static const uint64_t all[3] = { 2000, 6000, 4000 }, f1[3] = { 2000, 0, 4000 };
	static const uint64_t none[3] = { 0, 0, 0 };
	char why[128], text[128];
	size_t k;
	vpmu_vm *vm;

	(void)state;
	for (k = 0; k < sizeof(models) / sizeof(models[0]); k++) {
		const struct mdl *md = &models[k];

		/* No filter: everything counts. */
		vm = vm_with(md, NULL);
		program(vm, md);
		assert_int_equal(vpmu_synthetic_advance(vm, 0, 2 * MS), 0);
		expect(vm, md, 2000, 200, all);
		vpmu_vm_destroy(vm);

		/* Deny branches and fixed counter 1. */
		snprintf(text, sizeof(text), "deny\nfixed 0x2\nevent 0x%llx\n",
		    (unsigned long long)md->branches);
		assert_int_equal(vpmu_event_filter_parse(text, f, why, sizeof(why)), 0);
		vm = vm_with(md, f);
		program(vm, md);
		assert_int_equal(vpmu_synthetic_advance(vm, 0, 2 * MS), 0);
		expect(vm, md, 2000, 0, f1);
		/* The report says why GP1 does not count; GP0 has no reason. */
		{
			struct vpmu_counter_info ci[16];
			unsigned n = 16;

			assert_int_equal(vpmu_vcpu_get_counters(vm, 0, ci, &n), 0);
			assert_string_equal(ci[1].why, "disallowed by the event filter");
			assert_int_equal(ci[1].enabled, 0);
			assert_int_equal(ci[1].unsupported, 0);
			assert_string_equal(ci[0].why, "");
		}
		/* A denied counter's MSRs still read back as written. */
		assert_true(rd(vm, md->sel(1)) == (md->branches | USR | OS | EN));
		WR(vm, md->ctr(1), 1234);
		assert_int_equal(vpmu_synthetic_advance(vm, 0, 1 * MS), 0);
		assert_int_equal(rd(vm, md->ctr(1)), 1234);
		vpmu_vm_destroy(vm);

		/* ipc: instructions (and cycles) only; fixed 0-2 allowed. */
		assert_int_equal(vpmu_event_filter_preset("ipc", md->vendor, f), 0);
		vm = vm_with(md, f);
		program(vm, md);
		assert_int_equal(vpmu_synthetic_advance(vm, 0, 2 * MS), 0);
		expect(vm, md, 2000, 0, all);
		vpmu_vm_destroy(vm);

		/* arch: both. */
		assert_int_equal(vpmu_event_filter_preset("arch", md->vendor, f), 0);
		vm = vm_with(md, f);
		program(vm, md);
		assert_int_equal(vpmu_synthetic_advance(vm, 0, 2 * MS), 0);
		expect(vm, md, 2000, 200, all);
		vpmu_vm_destroy(vm);

		/* An empty allow list: nothing counts at all. */
		assert_int_equal(vpmu_event_filter_parse("allow\n", f, why, sizeof(why)), 0);
		vm = vm_with(md, f);
		program(vm, md);
		assert_int_equal(vpmu_synthetic_advance(vm, 0, 2 * MS), 0);
		expect(vm, md, 0, 0, none);
		vpmu_vm_destroy(vm);
	}
	free(f);
}

/* As KVM's: every counter is reprogrammed under the new filter at its vCPU's next entry. */
static void
live_filter_applies_at_the_next_programming(void **state)
{
	struct vpmu_event_filter *f = fnew(0), *g = fnew(0);
	static const uint64_t all[3] = { 2000, 6000, 4000 };
	static const uint64_t before[3] = { 3000, 9000, 6000 };
	static const uint64_t after[3] = { 6000, 9000, 12000 };	/* fixed 1 denied */
	static const uint64_t back[3] = { 7000, 12000, 14000 };
	struct vpmu_entry e;
	char why[128], text[128];
	size_t k;
	vpmu_vm *vm;

	(void)state;
	for (k = 0; k < sizeof(models) / sizeof(models[0]); k++) {
		const struct mdl *md = &models[k];

		vm = vm_with(md, NULL);
		assert_int_equal(vpmu_vm_get_event_filter(vm, g), ENOENT);
		program(vm, md);
		assert_int_equal(vpmu_synthetic_advance(vm, 0, 2 * MS), 0);
		expect(vm, md, 2000, 200, all);
		/* Allow only branches and fixed 0 and 2: running counters stop... */
		snprintf(text, sizeof(text), "allow\nfixed 5\nevent 0x%llx\n",
		    (unsigned long long)md->branches);
		assert_int_equal(vpmu_event_filter_parse(text, f, why, sizeof(why)), 0);
		assert_int_equal(vpmu_vm_set_event_filter(vm, f), 0);
		assert_int_equal(vpmu_vm_get_event_filter(vm, g), 0);
		assert_memory_equal(f, g, sizeof(*f));
		/* ...not before the vCPU's next entry... */
		assert_int_equal(vpmu_synthetic_advance(vm, 0, 1 * MS), 0);
		expect(vm, md, 3000, 300, before);
		/* ...but from it. */
		assert_int_equal(vpmu_vcpu_enter(vm, 0, &e), 0);
		assert_int_equal(vpmu_synthetic_advance(vm, 0, 3 * MS), 0);
		expect(vm, md, 3000, 600, after);
		/* Removed: all count again, from where they stood. */
		assert_int_equal(vpmu_vm_set_event_filter(vm, NULL), 0);
		assert_int_equal(vpmu_vcpu_enter(vm, 0, &e), 0);
		assert_int_equal(vpmu_synthetic_advance(vm, 0, 1 * MS), 0);
		expect(vm, md, 4000, 700, back);
		/* A filter refused leaves the one in place (none). */
		f->action = 9;
		assert_int_equal(vpmu_vm_set_event_filter(vm, f), EINVAL);
		assert_int_equal(vpmu_vm_get_event_filter(vm, g), ENOENT);
		vpmu_vm_destroy(vm);
	}
	assert_int_equal(vpmu_vm_set_event_filter(NULL, NULL), EINVAL);
	free(f);
	free(g);
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(check_is_kvms),
		cmocka_unit_test(masked_high_select_bits_are_amds),
		cmocka_unit_test(plain_entries_match_select_and_umask_only),
		cmocka_unit_test(masked_entries_include_and_exclude),
		cmocka_unit_test(fixed_counters_follow_the_bitmap_alone),
		cmocka_unit_test(presets_are_xens),
		cmocka_unit_test(parse_builds_kvms_filter),
		cmocka_unit_test(parse_errors_name_the_line),
		cmocka_unit_test(every_model_counts_allowed_and_not_denied),
		cmocka_unit_test(live_filter_applies_at_the_next_programming),
	};

	return (cmocka_run_group_tests(tests, NULL, NULL));
}
