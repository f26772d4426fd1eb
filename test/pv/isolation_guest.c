/*
 * isolation_guest.c -- one of two guests run at once by isolation.sh
 * (issue 14, "Load and isolation"): each must see exactly what it sees
 * when it runs alone, and its log must hold only its own records.
 *
 * Built twice, with ISO_N (the loop's iterations) and ISO_TAG (a cookie)
 * different.  The guest reports itself as process 1 on vCPU 0, opens the
 * log the monitor offers as number 3 (vpmu-run --guest-log 3=PATH),
 * allocates a process-scope counting PMC on "instructions" and counts,
 * with the start and stop blocks built beforehand, exactly
 *
 *   out  %eax, %dx         PMCSTART's doorbell                 1 (counted)
 *   1: nop; nop; loop 1b                                       3n
 *   mov  %esi, %eax        PMCSTOP's block address             1
 *   out  %eax, %dx         PMCSTOP's doorbell                  (not counted)
 *
 * 3n + 2 on the exact source (hwpmc_exact.c explains the 2); then it
 * writes ISO_TAG into the log (WRITELOG) and closes it.  It prints one
 * line and exits 0 only if the count is exact and every request succeeded.
 */
#include <vpmu-guest/runtime.h>
#include <vpmu-guest/pv.h>
#include <vpmu-guest/pmc.h>

#ifndef ISO_N
#error "ISO_N: the loop's iterations"
#endif
#ifndef ISO_TAG
#error "ISO_TAG: this guest's cookie in the log"
#endif

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
	uint64_t c;

	(void)cpu;
	if (vpmu_hook_proc_create(1, 0, 0, VPMU_PV_CRED_PRIVILEGED) != 0 ||
	    vpmu_hook_csw_in(1, 1) != 0 ||
	    pmc_configure_logfile(3) != 0 ||
	    pmc_allocate("instructions", PMC_MODE_TC, 0, PMC_CPU_ANY, &id, 0) != 0 ||
	    pmc_attach(id, 0) != 0) {
		vg_printf("isolation 0x%x: set-up failed: %s\n", (unsigned)ISO_TAG,
		    pmc_errname(pmc_errno()));
		return (1);
	}
	c = measure(id, ISO_N);
	if (pmc_writelog(ISO_TAG) != 0 || pmc_release(id) != 0 || pmc_close_logfile() != 0) {
		vg_printf("isolation 0x%x: log failed: %s\n", (unsigned)ISO_TAG,
		    pmc_errname(pmc_errno()));
		return (1);
	}
	vg_printf("isolation 0x%x: n=%u instructions %lu (want %lu)\n", (unsigned)ISO_TAG,
	    (unsigned)ISO_N, (unsigned long)c, 3ul * ISO_N + 2);
	return (c == 3ul * ISO_N + 2 ? 0 : 1);
}
