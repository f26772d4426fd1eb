/*
 * fastpage_exact.c -- the fast-read page from inside a guest, on the exact
 * source (vpmu-run --source exact, --fastpage-hz 0: the page is written at
 * the vCPU's exits only, and the source counts by following the guest:
 * stepping, every instruction is an exit; in blocks, only a block's end).
 *
 * Checks, one summary line:
 *   - FASTPAGE_SET: unaligned EINVAL, outside RAM EFAULT; CLEAR and GETMSR
 *     without a page EINVAL;
 *   - after GETMSR: the header, the slot (number 4, pmcid, seq even,
 *     flags VALID|RUNNING|COUNTING);
 *   - the gaps: two loads of the slot's value with 5 NOPs between them,
 *     likewise of the header's exit_updates and updates, and of process
 *     2's exit_updates; printed, not checked here: the test (fastpage.cmake)
 *     wants 6 each stepping (one update per instruction) and 0 in blocks
 *     (the seven instructions are one block, without an exit);
 *   - the lag: a load of the value followed at once by PMCRW's doorbell,
 *     after 61 NOPs: PMCRW counts the load, so value + 1 + lag == PMCRW;
 *     printed: 2 stepping, 62 in blocks (vpmu_fastpage(4): a load misses
 *     the instructions of the run before its own and of its own up to it;
 *     the NOPs are two blocks of 31);
 *   - vpmu_fast_read never retries here (exit updates are in place and
 *     the refresh thread leaves a page that exits keep fresh alone);
 *   - CLEAR: magic 0, EINVAL from the reader, the page no longer written;
 *   - PROC_EXIT of another process (pid 2) stops writes to its page.
 * The runs of NOPs and loads start and end at a CLC, which no block holds
 * (a flag operation), so where the blocks are does not depend on the
 * compiler's code around them.
 */
#include <vpmu-guest/runtime.h>
#include <vpmu-guest/pv.h>
#include <vpmu-guest/pmc.h>
#include <vpmu-guest/fastpage.h>

static struct vpmu_fastpage pg __attribute__((aligned(4096)));
static struct vpmu_fastpage pg2 __attribute__((aligned(4096)));
static uint64_t rwblk[16];
static int nfail;

static void
check(const char *what, uint64_t got, uint64_t want)
{
	if (got != want) {
		vg_printf("FAIL %s: %lu, want %lu\n", what, (unsigned long)got,
		    (unsigned long)want);
		nfail++;
	}
}

static int
set_at(uint64_t gpa)
{
	struct vpmu_pv_fastpage a = { gpa };

	return (vpmu_pv_call(VPMU_PV_OP_FASTPAGE_SET, &a, sizeof(a), NULL));
}

/* Two loads of *p with 5 NOPs between: their difference. */
static uint64_t
load_gap(const volatile uint64_t *p)
{
	uint64_t a, b;

	__asm__ volatile(
	    "	clc\n"
	    "	movq (%2), %0\n"
	    "	nop; nop; nop; nop; nop\n"
	    "	movq (%2), %1\n"
	    "	clc\n"
	    : "=&r"(a), "=&r"(b) : "r"(p) : "memory", "cc");
	return (b - a);
}

int
main(unsigned cpu)
{
	struct vpmu_pv_req *rw = (struct vpmu_pv_req *)rwblk;
	struct vpmu_pv_pmcrw *rwa = (struct vpmu_pv_pmcrw *)(rw + 1);
	struct vpmu_fast_value fv;
	uint64_t v, seq, retries, lag, lag2, gap[4];
	uint32_t slot;
	pmc_id_t id, id2;
	int i;

	(void)cpu;
	check("proc create", vpmu_hook_proc_create(1, 0, 0, VPMU_PV_CRED_PRIVILEGED), 0);
	check("csw in", vpmu_hook_csw_in(1, 1), 0);
	check("alloc", pmc_allocate("instructions", PMC_MODE_TC, 0, PMC_CPU_ANY, &id, 0), 0);
	check("attach", pmc_attach(id, 0), 0);
	check("start", pmc_start(id), 0);

	/* Errors first. */
	check("SET unaligned", set_at(vpmu_pv_virt_to_phys(&pg) + 8), VPMU_PV_EINVAL);
	check("SET outside RAM", set_at(0x7ffff000u), VPMU_PV_EFAULT);
	check("CLEAR no page", vpmu_fast_clear(), VPMU_PV_EINVAL);
	check("GETMSR no page", pmc_get_msr(id, &slot) == 0 ? 0 : pmc_errno(), VPMU_PV_EINVAL);

	check("SET", vpmu_fast_set(&pg), 0);
	check("GETMSR", pmc_get_msr(id, &slot), 0);
	check("slot", slot, VPMU_FP_FIRST_PMC);
	check("magic", pg.hdr.magic, VPMU_FP_MAGIC);
	check("pid", (uint64_t)pg.hdr.pid, 1);
	check("hdr cpu", pg.hdr.cpu, 0);
	check("pmcid", pg.slot[slot].pmcid, id);
	check("seq even", pg.slot[slot].seq & 1, 0);
	check("flags", pg.slot[slot].flags, VPMU_FP_VALID | VPMU_FP_RUNNING | VPMU_FP_COUNTING);

	/* Stepping, one update per instruction: k NOPs apart is k + 1 apart. */
	gap[0] = load_gap(&pg.slot[slot].value);
	gap[1] = load_gap(&pg.hdr.exit_updates);
	gap[2] = load_gap(&pg.hdr.updates);

	/* Staleness against PMCRW, which counts up to its OUT. */
	vpmu_pv_req_init(rw, VPMU_PV_OP_PMCRW, sizeof(*rwa));
	rwa->flags = PMC_F_OLDVALUE;
	rwa->pmcid = id;
	__asm__ volatile(
	    "	clc\n"
	    "	.rept 61\n"
	    "	nop\n"
	    "	.endr\n"
	    "	movq (%1), %0\n"
	    "	outl %%eax, %%dx\n"
	    : "=&r"(v)
	    : "r"(&pg.slot[slot].value), "a"((uint32_t)(uintptr_t)rw), "d"(VPMU_PV_PORT)
	    : "memory", "cc");
	check("PMCRW error", (uint64_t)rw->error, 0);
	lag = rwa->value - v - 1;

	/* The reader: no retry while the exits write in place. */
	seq = pg.slot[slot].seq;
	retries = 0;
	for (i = 0; i < 200; i++) {
		check("fast read", vpmu_fast_read(&pg, slot, &v, &fv), 0);
		retries += fv.retries;
	}
	check("retries", retries, 0);
	check("seq unchanged", pg.slot[slot].seq, seq);

	/* CLEAR: the page is no page, and stays as the guest leaves it. */
	check("CLEAR", vpmu_fast_clear(), 0);
	check("cleared magic", pg.hdr.magic, 0);
	check("read cleared", vpmu_fast_read(&pg, slot, &v, NULL), VPMU_PV_EINVAL);
	pg.slot[slot].value = 42;
	pg.hdr.updates = 42;
	for (i = 0; i < 10; i++)
		__asm__ volatile("nop" ::: "memory");
	check("cleared untouched", pg.slot[slot].value + pg.hdr.updates, 84);

	/* Process 2's page, then its exit: no more writes to it. */
	check("create 2", vpmu_hook_proc_create(2, 0, 0, VPMU_PV_CRED_PRIVILEGED), 0);
	vpmu_pv_set_self(2, 2, 0, VPMU_PV_CRED_PRIVILEGED);
	/* Its own counter: the exact source steps only while one counts. */
	check("alloc 2", pmc_allocate("instructions", PMC_MODE_TC, 0, PMC_CPU_ANY, &id2, 0), 0);
	check("attach 2", pmc_attach(id2, 0), 0);
	check("start 2", pmc_start(id2), 0);
	check("csw in 2", vpmu_hook_csw_in(2, 2), 0);
	check("SET 2", vpmu_fast_set(&pg2), 0);
	gap[3] = load_gap(&pg2.hdr.exit_updates);
	vpmu_pv_set_self(1, 1, 0, VPMU_PV_CRED_PRIVILEGED);
	check("csw in 1", vpmu_hook_csw_in(1, 1), 0);
	check("exit 2", vpmu_hook_proc_exit(2), 0);
	pg2.hdr.exit_updates = 7;
	vpmu_pv_set_self(2, 2, 0, VPMU_PV_CRED_PRIVILEGED);
	check("csw in 2 after exit", vpmu_hook_csw_in(2, 2) == 0, 0);
	vpmu_pv_set_self(1, 1, 0, VPMU_PV_CRED_PRIVILEGED);
	for (i = 0; i < 10; i++)
		__asm__ volatile("nop" ::: "memory");
	check("exited untouched", pg2.hdr.exit_updates, 7);

	/* Instructions of one vpmu_fast_value(), between two loads of the value. */
	check("SET again", vpmu_fast_set(&pg), 0);
	check("GETMSR again", pmc_get_msr(id, &slot), 0);
	__asm__ volatile("movq (%1), %0" : "=r"(v) : "r"(&pg.slot[slot].value) : "memory");
	(void)vpmu_fast_value(&pg, slot, &lag2);
	__asm__ volatile("movq (%1), %0" : "=r"(lag2) : "r"(&pg.slot[slot].value) : "memory");
	vg_printf("fastpage exact: one vpmu_fast_value() and the loads around it: %lu instructions\n",
	    (unsigned long)(lag2 - v));
	vg_printf("fastpage exact: lag %lu instructions, gaps %lu %lu %lu %lu, %d failed\n",
	    (unsigned long)lag, (unsigned long)gap[0], (unsigned long)gap[1],
	    (unsigned long)gap[2], (unsigned long)gap[3], nfail);
	return (nfail == 0 ? 0 : 1);
}
