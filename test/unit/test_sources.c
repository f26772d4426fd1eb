/*
 * test_sources.c -- the list of built-in host sources (backends/sources.c):
 * every one found by its exact name, in the order vpmu-info lists them,
 * and nothing else.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>
#include <cmocka.h>

#include <vpmu/source.h>

static void
each_builtin_by_name(void **state)
{
	(void)state;
	assert_ptr_equal(vpmu_source_lookup("synthetic"), &vpmu_source_synthetic);
	assert_ptr_equal(vpmu_source_lookup("perf"), &vpmu_source_perf);
	assert_ptr_equal(vpmu_source_lookup("exact"), &vpmu_source_exact);
	assert_string_equal(vpmu_source_synthetic.name, "synthetic");
	assert_string_equal(vpmu_source_perf.name, "perf");
	assert_string_equal(vpmu_source_exact.name, "exact");
}

static void
nothing_else(void **state)
{
	(void)state;
	assert_null(vpmu_source_lookup(NULL));
	assert_null(vpmu_source_lookup(""));
	assert_null(vpmu_source_lookup("nope"));
	assert_null(vpmu_source_lookup("Perf"));	/* names are exact */
	assert_null(vpmu_source_lookup("exact "));
	assert_null(vpmu_source_lookup("synth"));
}

/* Only the exact source keeps a vCPU's exec point for snapshots. */
static void
exec_points(void **state)
{
	(void)state;
	assert_non_null(vpmu_source_exact.exec_point_get);
	assert_non_null(vpmu_source_exact.exec_point_set);
	assert_null(vpmu_source_perf.exec_point_get);
	assert_null(vpmu_source_perf.exec_point_set);
	assert_null(vpmu_source_synthetic.exec_point_get);
	assert_null(vpmu_source_synthetic.exec_point_set);
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(each_builtin_by_name),
		cmocka_unit_test(nothing_else),
		cmocka_unit_test(exec_points),
	};

	return (cmocka_run_group_tests(tests, NULL, NULL));
}
