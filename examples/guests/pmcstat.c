/*
 * pmcstat.c -- a pmcstat(8)-like guest: counts its own workload with
 * process-scope PMCs allocated through pmc(3) on the paravirtual channel
 * (<vpmu-guest/pmc.h>), then prints a table as "pmcstat -p EV ... cmd" would.
 *
 * It reports itself to libvpmu as process 1 on vCPU 0 through the kernel
 * hooks (a guest kernel would do that for every process), allocates one TC
 * PMC per event, attaches them to itself, runs the workload between
 * pmc_start() and pmc_stop(), and reads the counts.  Run it with
 *   vpmu-run --source exact examples/guests/pmcstat.elf
 * where the counts are exact: the last line says by how much a run of
 * NLOOP iterations exceeds a run of one, which does not depend on the
 * compiler (the table's counts include the pmc(3) calls around the loop).
 */
#include <vpmu-guest/runtime.h>
#include <vpmu-guest/pmc.h>

#define NLOOP	50000ul

static const char *const events[] = { "instructions", "branches", "cycles" };
#define NEV	(sizeof(events) / sizeof(events[0]))

/* The workload: n iterations of a 3-instruction loop (nop, nop, loop). */
static void
work(uint64_t n)
{
	__asm__ volatile("1: nop; nop; loop 1b" : "+c"(n) : : "memory");
}

static int
fail(const char *what)
{
	vg_printf("pmcstat: %s: %s\n", what, pmc_errname(pmc_errno()));
	return (1);
}

static pmc_id_t id[NEV];

/* One run of the workload between start and stop: the counts in v. */
static int
run(uint64_t n, pmc_value_t *v)
{
	unsigned i;

	for (i = 0; i < NEV; i++)
		if (pmc_write(id[i], 0) != 0)
			return (fail("pmc_write"));
	for (i = 0; i < NEV; i++)
		if (pmc_start(id[i]) != 0)
			return (fail("pmc_start"));
	work(n);
	for (i = 0; i < NEV; i++)
		if (pmc_stop(id[i]) != 0)
			return (fail("pmc_stop"));
	for (i = 0; i < NEV; i++)
		if (pmc_read(id[i], &v[i]) != 0)
			return (fail("pmc_read"));
	return (0);
}

int
main(unsigned cpu)
{
	pmc_value_t v1[NEV], v[NEV];
	unsigned i;

	(void)cpu;
	if (pmc_init() != 0)
		return (fail("pmc_init"));
	if (vpmu_hook_proc_create(1, 0, 0, VPMU_PV_CRED_PRIVILEGED) != 0 ||
	    vpmu_hook_csw_in(1, 1) != 0)
		return (fail("process hooks"));
	for (i = 0; i < NEV; i++)
		if (pmc_allocate(events[i], PMC_MODE_TC, 0, PMC_CPU_ANY, &id[i], 0) != 0 ||
		    pmc_attach(id[i], 0) != 0)
			return (fail(events[i]));
	if (run(1, v1) != 0 || run(NLOOP, v) != 0)
		return (1);

	vg_printf("# %-9s", "pid");
	for (i = 0; i < NEV; i++)
		vg_printf(" p/%-14s", events[i]);
	vg_printf("\n  %-9d", 1);
	for (i = 0; i < NEV; i++)
		vg_printf(" %16lu", (unsigned long)v[i]);
	vg_printf("\n");
	vg_printf("pmcstat: %lu iterations more:", NLOOP - 1);
	for (i = 0; i < NEV; i++)
		vg_printf(" +%lu %s", (unsigned long)(v[i] - v1[i]), events[i]);
	vg_printf("\n");
	for (i = 0; i < NEV; i++)
		(void)pmc_release(id[i]);
	(void)vpmu_hook_proc_exit(1);
	return (0);
}
