/*
 * hwpmc_exact.c -- a process-scope counting PMC on "instructions", run from
 * the paravirtual channel, counts a known loop exactly (vpmu-run --source
 * exact).
 *
 * The guest reports itself as process 1 on vCPU 0 (PROC_CREATE, CSW_IN),
 * allocates a TC PMC through pmc(3) and starts and stops it with two
 * request blocks built beforehand, so that only this runs in between:
 *
 *   out  %eax, %dx         PMCSTART's doorbell                 1 (counted)
 *   1: nop; nop; loop 1b                                       3n
 *   mov  %esi, %eax        PMCSTOP's block address             1
 *   out  %eax, %dx         PMCSTOP's doorbell                  (not counted)
 *
 * As with a counter enabled by WRMSR (test/conformance/conf.h), the
 * instruction whose exit starts the count retires counted and the one
 * whose exit stops it does not: the request is carried out at the exit,
 * before the OUT completes.  Counted: 3n + 2.
 */
#include <vpmu-guest/runtime.h>
#include <vpmu-guest/pv.h>
#include <vpmu-guest/pmc.h>

static uint64_t startblk[16], stopblk[16];

static uint64_t
measure(pmc_id_t id, uint64_t n)
{
	struct vpmu_pv_req *start = (struct vpmu_pv_req *)startblk;
	struct vpmu_pv_req *stop = (struct vpmu_pv_req *)stopblk;
	pmc_value_t v = 0;

	vpmu_pv_req_init(start, VPMU_PV_OP_PMCSTART, 4);
	vpmu_pv_req_init(stop, VPMU_PV_OP_PMCSTOP, 4);
	((struct vpmu_pv_simple *)(start + 1))->pmcid = id;
	((struct vpmu_pv_simple *)(stop + 1))->pmcid = id;
	if (pmc_write(id, 0) != 0)
		return (~0ull);
	__asm__ volatile(
	    "	outl %%eax, %%dx\n"
	    "1:	nop\n"
	    "	nop\n"
	    "	loop 1b\n"
	    "	movl %%esi, %%eax\n"
	    "	outl %%eax, %%dx\n"
	    : "+c"(n)
	    : "a"((uint32_t)(uintptr_t)start), "d"(VPMU_PV_PORT),
	      "S"((uint32_t)(uintptr_t)stop)
	    : "memory");
	if (start->error != 0 || stop->error != 0 || pmc_read(id, &v) != 0)
		return (~0ull);
	return (v);
}

int
main(unsigned cpu)
{
	pmc_id_t id;
	uint64_t c1, c2;

	(void)cpu;
	if (vpmu_hook_proc_create(1, 0, 0, VPMU_PV_CRED_PRIVILEGED) != 0 ||
	    vpmu_hook_csw_in(1, 1) != 0 ||
	    pmc_allocate("instructions", PMC_MODE_TC, 0, PMC_CPU_ANY, &id, 0) != 0 ||
	    pmc_attach(id, 0) != 0) {
		vg_printf("hwpmc exact: set-up failed: %s\n", pmc_errname(pmc_errno()));
		return (1);
	}
	c1 = measure(id, 1000);
	c2 = measure(id, 100000);
	vg_printf("hwpmc exact: n=1000 %lu (want %lu), n=100000 %lu (want %lu)\n",
	    (unsigned long)c1, 3 * 1000ul + 2, (unsigned long)c2, 3 * 100000ul + 2);
	return (c1 == 3 * 1000 + 2 && c2 == 3 * 100000 + 2 ? 0 : 1);
}
