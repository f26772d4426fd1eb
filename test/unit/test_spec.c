/*
 * test_spec.c -- a configuration by name (backends/spec.c):
 * vpmu_config_set_option() and vpmu_config_parse(), the grammar of
 * vpmu_config(3) SPEC STRINGS.  Every option reaches the config; each bad
 * element is refused with the reason vpmu-run prints, and a refused spec
 * changes nothing.
 */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>

#include "internal.h"
#include <vpmu/pv.h>

static vpmu_config *
cfg_new(void)
{
	vpmu_config *cfg;

	assert_int_equal(vpmu_config_create(&cfg), 0);
	return (cfg);
}

static const struct vpmu_exact_params *
xparams(const vpmu_config *cfg)
{
	assert_ptr_equal(cfg->source, &vpmu_source_exact);
	assert_non_null(cfg->source_arg);
	return (cfg->source_arg);
}

static void
every_option_reaches_the_config(void **state)
{
	vpmu_config *cfg = cfg_new();
	const struct vpmu_exact_params *xp;
	char why[256];

	(void)state;
	assert_int_equal(vpmu_config_parse(cfg, "intel-v3:gp=2,fixed=1,source=exact,"
	    "exact-mode=step,exact-foresee=off,exact-interp=off,exact-ff-max=77,"
	    "exact-cpi=3,exact-ref-cpi=5,mux-interval=100,host-counters=3,pmu-mode=auto,"
	    "pv-port=0x5700,uncounted=allow,event-filter=ipc", why, sizeof(why)), 0);
	assert_string_equal(why, "");
	assert_int_equal(cfg->model.vendor, VPMU_VENDOR_INTEL);
	assert_int_equal(cfg->model.version, 3);
	assert_int_equal(cfg->model.gp, 2);
	assert_int_equal(cfg->model.fixed, 1);
	xp = xparams(cfg);
	assert_int_equal(xp->mode, VPMU_EXACT_STEP);
	assert_int_equal(xp->flags, VPMU_EXACT_NO_FORESEE | VPMU_EXACT_NO_INTERP);
	assert_int_equal(xp->ff_max, 77);
	assert_int_equal(xp->cpi, 3);
	assert_int_equal(xp->ref_cpi, 5);
	assert_int_equal(cfg->mux_interval, 100000);
	assert_int_equal(cfg->capacity, 3);
	assert_int_equal(cfg->pmu_mode, VPMU_PMU_MODE_AUTO);
	assert_int_equal(cfg->pv_port, 0x5700);
	assert_true(cfg->uncounted_ok);
	assert_true(cfg->has_filter);
	vpmu_config_destroy(cfg);
}

/* The model by pmu=, its keys after a comma; the source found before its options. */
static void
forms_and_order(void **state)
{
	vpmu_config *cfg = cfg_new();
	char why[256];

	(void)state;
	assert_int_equal(vpmu_config_parse(cfg, "exact-mode=step,pmu=amd-v2,gp=3,"
	    "source=exact", why, sizeof(why)), 0);
	assert_int_equal(cfg->model.vendor, VPMU_VENDOR_AMD);
	assert_int_equal(cfg->model.gp, 3);
	assert_int_equal(xparams(cfg)->mode, VPMU_EXACT_STEP);
	/* A later spec keeps what it does not name, the source's options too. */
	assert_int_equal(vpmu_config_parse(cfg, "exact-interp=off", why, sizeof(why)), 0);
	assert_int_equal(xparams(cfg)->mode, VPMU_EXACT_STEP);
	assert_int_equal(xparams(cfg)->flags, VPMU_EXACT_NO_INTERP);
	assert_int_equal(cfg->model.gp, 3);
	/* Nothing, and empty elements: no change. */
	assert_int_equal(vpmu_config_parse(cfg, NULL, why, sizeof(why)), 0);
	assert_int_equal(vpmu_config_parse(cfg, "", why, sizeof(why)), 0);
	assert_int_equal(vpmu_config_parse(cfg, ",,", why, sizeof(why)), 0);
	assert_int_equal(cfg->model.gp, 3);
	vpmu_config_destroy(cfg);
}

/* The embedder's own parameters, given with the source, are the start of the options'. */
static void
options_start_from_the_embedders_params(void **state)
{
	struct vpmu_exact_params mine = { .cpi = 4, .mode = VPMU_EXACT_STEP };
	vpmu_config *cfg = cfg_new();
	char why[128];

	(void)state;
	assert_int_equal(vpmu_config_set_source(cfg, &vpmu_source_exact, &mine), 0);
	assert_int_equal(vpmu_config_set_option(cfg, "exact-ref-cpi", "9", why, sizeof(why)), 0);
	assert_ptr_not_equal(cfg->source_arg, &mine);
	assert_int_equal(xparams(cfg)->cpi, 4);
	assert_int_equal(xparams(cfg)->mode, VPMU_EXACT_STEP);
	assert_int_equal(xparams(cfg)->ref_cpi, 9);
	assert_int_equal(mine.ref_cpi, 0);	/* the embedder's struct untouched */
	/* Another source drops them. */
	assert_int_equal(vpmu_config_set_option(cfg, "source", "synthetic", why, sizeof(why)), 0);
	assert_null(cfg->source_params);
	assert_null(cfg->source_arg);
	vpmu_config_destroy(cfg);
}

static const struct {
	const char *spec;
	const char *why;
} bad[] = {
	{ "intel-v2,exact-mode=fast", "exact-mode=fast: want step or block" },
	{ "source=nosuch", "source=nosuch: no such source; there are synthetic perf exact" },
	{ "source=perf,exact-mode=step",
	  "exact-mode=step: an option of source exact, and the source is perf" },
	{ "mux-interval=0", "mux-interval=0: want a number from 1 to 10000000" },
	{ "mux-interval=10000001", "mux-interval=10000001: want a number from 1 to 10000000" },
	{ "host-counters=-1", "host-counters=-1: want a number from 1 to 4096" },
	{ "host-counters=4097", "host-counters=4097: want a number from 1 to 4096" },
	{ "host-counters=1x", "host-counters=1x: want a number from 1 to 4096" },
	{ "pmu-mode=fast", "pmu-mode=fast: want trap, kvm or auto" },
	{ "uncounted=yes", "uncounted=yes: want fail or allow" },
	{ "pv-port=0x10", "pv-port=0x10: want 0 (no channel) or a base from 0x100 to 0xfff8" },
	{ "pv-port=0x10000", "pv-port=0x10000: want 0 (no channel) or a base from 0x100 to 0xfff8" },
	{ "exact-ff-max=4294967296,source=exact",
	  "exact-ff-max=4294967296: want a number from 0 to 4294967295" },
	{ "source=exact,exact-bogus=1", "exact-bogus=1: no such option of the exact source "
	  "(mode, foresee, interp, ff-max, cpi, ref-cpi)" },
	{ "source=exact,exact-mode=", "exact-mode=: no value" },
	{ "intel-v2,source", "source: want key=value" },
	{ "none,event-filter=ipc", "event-filter=ipc: the model none has no PMU to filter" },
	{ "gp=4", "gp=4: a model key with no model before it (or no such option)" },
};

/*
 * Each bad spec: EINVAL, the reason, and the config as it was (the
 * model, the source and its options, the mux interval).
 */
static void
bad_specs_change_nothing(void **state)
{
	vpmu_config *cfg = cfg_new();
	char why[256];
	size_t i;

	(void)state;
	assert_int_equal(vpmu_config_parse(cfg, "amd-v2:gp=5,source=exact,exact-mode=step,"
	    "mux-interval=7", why, sizeof(why)), 0);
	for (i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		assert_int_equal(vpmu_config_parse(cfg, bad[i].spec, why, sizeof(why)), EINVAL);
		assert_string_equal(why, bad[i].why);
		assert_int_equal(cfg->model.vendor, VPMU_VENDOR_AMD);
		assert_int_equal(cfg->model.gp, 5);
		assert_int_equal(xparams(cfg)->mode, VPMU_EXACT_STEP);
		assert_int_equal(cfg->mux_interval, 7000);
	}
	/* The model's own refusal, with the model string before it. */
	assert_int_equal(vpmu_config_parse(cfg, "intel-v2,gp=99", why, sizeof(why)), EINVAL);
	assert_true(strncmp(why, "intel-v2:gp=99: ", 16) == 0);
	assert_int_equal(cfg->model.gp, 5);
	vpmu_config_destroy(cfg);
}

/* Hostile input: no crash, a truncated reason, a long spec refused whole. */
static void
hostile_input(void **state)
{
	vpmu_config *cfg = cfg_new();
	char why[8], *big;
	size_t n = 100000;

	(void)state;
	assert_int_equal(vpmu_config_parse(NULL, "intel-v2", why, sizeof(why)), EINVAL);
	assert_int_equal(vpmu_config_set_option(cfg, NULL, "1", why, sizeof(why)), EINVAL);
	assert_int_equal(vpmu_config_set_option(cfg, "source", NULL, why, sizeof(why)), EINVAL);
	assert_int_equal(vpmu_config_parse(cfg, "source=nosuch", why, sizeof(why)), EINVAL);
	assert_int_equal(strlen(why), sizeof(why) - 1);
	assert_int_equal(vpmu_config_parse(cfg, "source=nosuch", NULL, 0), EINVAL);
	assert_non_null(big = malloc(n + 1));
	memset(big, 'a', n);
	big[n] = '\0';
	assert_int_equal(vpmu_config_parse(cfg, big, NULL, 0), EINVAL);
	memcpy(big, "intel-v2,", 9);
	for (size_t i = 9; i + 12 < n; i += 12)
		memcpy(big + i, "host-count=1", 12);
	assert_int_equal(vpmu_config_parse(cfg, big, NULL, 0), EINVAL);
	assert_int_equal(cfg->model.vendor, VPMU_VENDOR_NONE);
	free(big);
	vpmu_config_destroy(cfg);
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(every_option_reaches_the_config),
		cmocka_unit_test(forms_and_order),
		cmocka_unit_test(options_start_from_the_embedders_params),
		cmocka_unit_test(bad_specs_change_nothing),
		cmocka_unit_test(hostile_input),
	};

	return (cmocka_run_group_tests(tests, NULL, NULL));
}
