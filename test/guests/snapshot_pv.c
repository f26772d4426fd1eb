/*
 * snapshot_pv.c -- hwpmc state across a vpmu-run snapshot: the guest,
 * process 1 on vCPU 0, configures a log on descriptor 3, allocates a
 * process-scope counting PMC on "instructions" through the paravirtual
 * channel, and asks for a snapshot (port 0xf5) in the middle of a counted
 * run of known instructions (as test/pv/hwpmc_exact.c, whose comment
 * explains why the start's OUT counts and the stop's does not):
 *
 *   out  %eax, %dx          PMCSTART's doorbell                 1
 *   1: nop; nop; loop 1b    N1 times                            3 N1
 *   out  %eax, $0xf5        the snapshot                        1
 *   mov  $N2, %ecx                                              1
 *   2: nop; nop; loop 2b    N2 times                            3 N2
 *   mov  %esi, %eax                                             1
 *   out  %eax, %dx          PMCSTOP's doorbell                  (not counted)
 *
 * so the PMC reads 3 (N1 + N2) + 4.  A USERDATA record goes to the log
 * before the snapshot (cookie 1) and after it (cookie 2).  With
 * -DNO_SNAPSHOT the OUT to 0xf5 is a NOP: the same count, uninterrupted.
 */
#include <vpmu-guest/runtime.h>
#include <vpmu-guest/pv.h>
#include <vpmu-guest/pmc.h>

#define N1	2000u
#define N2	3000u

#ifdef NO_SNAPSHOT
#define ASK	"	nop\n"
#else
#define ASK	"	outl %%eax, $0xf5\n"
#endif

static uint64_t startblk[16], stopblk[16];

int
main(unsigned cpu)
{
	struct vpmu_pv_req *start = (struct vpmu_pv_req *)startblk;
	struct vpmu_pv_req *stop = (struct vpmu_pv_req *)stopblk;
	uint64_t n = N1;
	pmc_value_t v = 0;
	pmc_id_t id;

	if (cpu != 0)
		return (0);
	if (vpmu_hook_proc_create(1, 0, 0, VPMU_PV_CRED_PRIVILEGED) != 0 ||
	    vpmu_hook_csw_in(1, 1) != 0 || pmc_configure_logfile(3) != 0 ||
	    pmc_writelog(1) != 0 ||
	    pmc_allocate("instructions", PMC_MODE_TC, 0, PMC_CPU_ANY, &id, 0) != 0 ||
	    pmc_attach(id, 0) != 0 || pmc_write(id, 0) != 0) {
		vg_printf("snapshot pv: set-up failed: %s\n", pmc_errname(pmc_errno()));
		return (1);
	}
	vpmu_pv_req_init(start, VPMU_PV_OP_PMCSTART, 4);
	vpmu_pv_req_init(stop, VPMU_PV_OP_PMCSTOP, 4);
	((struct vpmu_pv_simple *)(start + 1))->pmcid = id;
	((struct vpmu_pv_simple *)(stop + 1))->pmcid = id;
	__asm__ volatile(
	    "	outl %%eax, %%dx\n"
	    "1:	nop\n"
	    "	nop\n"
	    "	loop 1b\n"
	    ASK
	    "	movl %[n2], %%ecx\n"
	    "2:	nop\n"
	    "	nop\n"
	    "	loop 2b\n"
	    "	movl %%esi, %%eax\n"
	    "	outl %%eax, %%dx\n"
	    : "+c"(n)
	    : "a"((uint32_t)(uintptr_t)start), "d"(VPMU_PV_PORT),
	      "S"((uint32_t)(uintptr_t)stop), [n2] "i"(N2)
	    : "memory");
	if (start->error != 0 || stop->error != 0 || pmc_read(id, &v) != 0 ||
	    pmc_writelog(2) != 0 || pmc_release(id) != 0 || pmc_close_logfile() != 0) {
		vg_printf("snapshot pv: failed: %s\n", pmc_errname(pmc_errno()));
		return (1);
	}
	vg_printf("snapshot pv: %lu instructions (want %lu)\n", (unsigned long)v,
	    3ul * (N1 + N2) + 4);
	return (v == 3ul * (N1 + N2) + 4 ? 0 : 1);
}
