/*
 * test_enomem.c -- hwpmc(4)'s ENOMEM line: "The system was not able to
 * allocate kernel memory."  This program is linked with
 * -Wl,--wrap=calloc,--wrap=malloc,--wrap=realloc,--wrap=strdup so that
 * allocation number N inside libvpmu fails; every N up to the number of
 * allocations a scenario makes is tried, and each call must either
 * succeed or return ENOMEM, never crash or misreport.
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

void	*__real_calloc(size_t, size_t);
void	*__real_malloc(size_t);
void	*__real_realloc(void *, size_t);
char	*__real_strdup(const char *);
void	*__wrap_calloc(size_t, size_t);
void	*__wrap_malloc(size_t);
void	*__wrap_realloc(void *, size_t);
char	*__wrap_strdup(const char *);

static long countdown = -1;	/* allocations left before one fails; -1 = never */
static long made;		/* allocations seen */

static int
should_fail(void)
{
	made++;
	if (countdown < 0)
		return (0);
	return (countdown-- == 0);
}

void *__wrap_calloc(size_t n, size_t s) { return (should_fail() ? NULL : __real_calloc(n, s)); }
void *__wrap_malloc(size_t s) { return (should_fail() ? NULL : __real_malloc(s)); }
void *__wrap_realloc(void *p, size_t s) { return (should_fail() ? NULL : __real_realloc(p, s)); }
char *__wrap_strdup(const char *s) { return (should_fail() ? NULL : __real_strdup(s)); }

static const struct vpmu_cred root = { .pid = 1, .privileged = 1 };

/*
 * Each step must succeed or say ENOMEM.  A step that said ENOMEM is tried
 * again with allocation working and must then succeed: whatever it did
 * before failing was undone.  Returns the number of ENOMEMs.
 */
static int
scenario(void)
{
	struct vpmu_pmc_alloc a = { .cpu = VPMU_CPU_ANY, .cls = VPMU_CLASS_PV,
	    .event = VPMU_EV_INSTRUCTIONS, .mode = VPMU_MODE_TC,
	    .flags = VPMU_F_DESCENDANTS };
	struct vpmu_pmc_alloc s = { .cpu = 1, .cls = VPMU_CLASS_IAP,
	    .event = VPMU_EV_BRANCHES, .mode = VPMU_MODE_SC };
	vpmu_config *cfg = NULL;
	vpmu_vm *vm = NULL;
	int e, nomem = 0;

#define STEP(call) do {							\
	e = (call);							\
	if (e == ENOMEM) {						\
		nomem++;						\
		countdown = -1;						\
		if (cfg == NULL || vm == NULL)				\
			goto out;	/* nothing to retry on */	\
		e = (call);						\
	}								\
	assert_int_equal(e, 0);						\
} while (0)
	if (vpmu_config_create(&cfg) == ENOMEM) {
		nomem++;
		goto out;
	}
	STEP(vpmu_config_set_vcpus(cfg, 2));
	if (vpmu_vm_create(cfg, &vm) == ENOMEM) {
		nomem++;
		goto out;
	}
	STEP(vpmu_proc_create(vm, &root, 0));
	STEP(vpmu_proc_fork(vm, 1, 2));
	STEP(vpmu_pmc_allocate(vm, &root, &a));
	STEP(vpmu_pmc_attach(vm, &root, a.pmcid, 1));	/* subtree walk */
	STEP(vpmu_proc_fork(vm, 2, 3));			/* inherits the PMC */
	STEP(vpmu_pmc_allocate(vm, &root, &s));
	STEP(vpmu_pmc_start(vm, &root, a.pmcid));
	STEP(vpmu_pmc_start(vm, &root, s.pmcid));
	STEP(vpmu_proc_switch_in(vm, 0, 3, 3));		/* opens a source counter */
	STEP(vpmu_proc_exec(vm, 3, "/bin/true", NULL));
	STEP(vpmu_proc_exit(vm, 3));
	STEP(vpmu_pmc_detach(vm, &root, a.pmcid, 1));	/* subtree walk again */
#undef STEP
out:
	countdown = -1;
	vpmu_vm_destroy(vm);
	vpmu_config_destroy(cfg);
	return (nomem);
}

static void
every_allocation_failure_gives_ENOMEM(void **state)
{
	long total, n;

	(void)state;
	made = 0;
	countdown = -1;
	assert_int_equal(scenario(), 0);
	total = made;
	assert_true(total > 10);
	for (n = 0; n < total; n++) {
		countdown = n;
		if (scenario() != 1)
			fail_msg("allocation %ld of %ld failed without ENOMEM", n, total);
	}
	print_message("%ld allocation points, each failed once, each gave ENOMEM\n", total);
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(every_allocation_failure_gives_ENOMEM),
	};

	return (cmocka_run_group_tests(tests, NULL, NULL));
}
