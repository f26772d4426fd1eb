/*
 * test_task.c -- the guest task of a sample (vpmu_vcpu_set_task_fn(3)):
 * the VMM's task function names it at each sample; the CALLCHAIN record
 * carries its pid and tid; the log names each task once (PROC_CREATE,
 * THR_CREATE), before its first sample, and again when its names change;
 * a sample the function cannot name carries the address space
 * (VPMU_PID_ASPACE_OF(CR3)) and a PROC_CREATE "cr3:0x...".  The call
 * chain of a sample from the VMM's unwinder (vpmu_vcpu_set_unwind_fn(3)),
 * bounded by callchaindepth, or from the frame pointers when it gives
 * none.  And vpmu_vm_read(), which both read guest memory with.
 *
 * Samples come from a time event (1 ms period) on runs of 1 ms reported
 * through the exit contract: one sample per run.
 */
#include "fixture.h"

#include <vpmu/vcpu.h>

#define MS	1000000ull

/* The task function's script: one answer per call. */
struct script {
	unsigned calls;
	unsigned n;
	struct { int ret; struct vpmu_task t; } a[8];
};

static int
scripted(void *arg, unsigned cpu, const struct vpmu_regs *r, struct vpmu_task *t)
{
	struct script *s = arg;

	assert_int_equal(cpu, 0);
	assert_non_null(r);
	assert_true(s->calls < s->n);
	*t = s->a[s->calls].t;
	return (s->a[s->calls++].ret);
}

/* A 1 ms run exiting at rip with CR3 cr3 (paging on): one sample. */
static void
run(vpmu_vm *vm, uint64_t rip, uint64_t cr3)
{
	struct vpmu_regs r = { .rip = rip, .cr0 = 1ull << 31 | 1, .cr3 = cr3,
	    .cr4 = 1ull << 5, .efer = 1ull << 10 | 1ull << 8, .long_mode = 1 };
	struct vpmu_exit x = { .reason = VPMU_EXIT_OTHER, .flags = VPMU_EXITF_RAN,
	    .ran_ns = 1 * MS, .regs = &r };
	struct vpmu_entry e;

	assert_int_equal(vpmu_vcpu_enter(vm, 0, &e), 0);
	assert_int_equal(vpmu_vcpu_exit(vm, 0, &x), 0);
}

/* The log's PROC_CREATE, THR_CREATE and CALLCHAIN records, one line each. */
static char *
log_lines(int fd)
{
	static struct vpmu_pmclog_ev ev;
	static char out[4096];
	vpmu_pmclog_reader *r;
	size_t at = 0;
	int rfd;

	out[0] = '\0';
	r = fx_log_reader(fd, &rfd);
	while (vpmu_pmclog_read(r, &ev) == 0) {
		if (ev.type == VPMU_PMCLOG_PROC_CREATE)
			at += (size_t)snprintf(out + at, sizeof(out) - at, "P %u %s\n",
			    ev.u.proc_create.pid, ev.u.proc_create.pcomm);
		else if (ev.type == VPMU_PMCLOG_THR_CREATE)
			at += (size_t)snprintf(out + at, sizeof(out) - at, "T %u %u %s\n",
			    ev.u.thr_create.tid, ev.u.thr_create.pid, ev.u.thr_create.tdname);
		else if (ev.type == VPMU_PMCLOG_CALLCHAIN)
			at += (size_t)snprintf(out + at, sizeof(out) - at, "C %u %u %#llx\n",
			    ev.u.callchain.pid, ev.u.callchain.tid,
			    (unsigned long long)ev.u.callchain.pc[0]);
		assert_true(at < sizeof(out));
	}
	vpmu_pmclog_close(r);
	close(rfd);
	return (out);
}

#define TASK(p, t, c, pc)	{ 0, { .pid = (p), .tid = (t), .comm = c, .pcomm = pc } }

/*
 * vCPU 0 sampling its run time every 1 ms with call chains, into a new
 * log: its descriptor.  give sets the vCPU's callbacks before the start.
 */
static int
sampling(vpmu_vm *vm, void (*give)(vpmu_vm *))
{
	struct vpmu_op_configurelog cl = { .flags = 0 };
	struct vpmu_pmc_alloc a = { .cpu = 0, .cls = VPMU_CLASS_PV,
	    .event = VPMU_EV_CPU_CLOCK, .mode = VPMU_MODE_SS, .count = 1 * MS,
	    .flags = VPMU_F_CALLCHAIN };
	int fd;

	fd = fx_logfd();
	cl.logfd = fd;
	assert_int_equal(vpmu_pmc_allocate(vm, &ROOT, &a), 0);
	assert_int_equal(vpmu_vm_op(vm, &ROOT, VPMU_OP_CONFIGURELOG, &cl), 0);
	give(vm);
	assert_int_equal(vpmu_pmc_start(vm, &ROOT, a.pmcid), 0);
	return (fd);
}

static struct script *the_script;

static void
give_task_fn(vpmu_vm *vm)
{
	assert_int_equal(vpmu_vcpu_set_task_fn(vm, 0, scripted, the_script), 0);
}

static void
samples_name_their_task_once(void **state)
{
	static struct script s = { .n = 7, .a = {
		TASK(100, 100, "sh", "sh"),
		TASK(100, 100, "sh", "sh"),		/* named already */
		TASK(100, 101, "worker", "sh"),		/* a thread of it */
		{ ENOENT, { .pid = 5 } },		/* not named: the address space */
		TASK(100, 100, "cat", "cat"),		/* an exec: named anew */
		{ 0, { .pid = -1, .tid = 3 } },		/* a negative pid: not named */
		TASK(0, 0, "swapper/0", "swapper/0"),	/* pid 0 is a task too */
	} };
	vpmu_vm *vm = ((struct fx *)*state)->vm;
	int fd;

	the_script = &s;
	fd = sampling(vm, give_task_fn);
	run(vm, 0xA000, 0x1000);
	run(vm, 0xA001, 0x1000);
	run(vm, 0xA002, 0x1000);
	run(vm, 0xA003, 0x5abc000 | 0x1fff);	/* PCID and bit 12 kept in the frame */
	run(vm, 0xA004, 0x1000);
	run(vm, 0xA005, 0x7000);
	run(vm, 0xA006, 0x1000);
	assert_int_equal(s.calls, 7);
	assert_int_equal(vpmu_vm_op(vm, &ROOT, VPMU_OP_FLUSHLOG, NULL), 0);
	assert_string_equal(log_lines(fd),
	    "P 100 sh\nT 100 100 sh\nC 100 100 0xa000\n"
	    "C 100 100 0xa001\n"
	    "P 100 sh\nT 101 100 worker\nC 100 101 0xa002\n"
	    "P 2147506877 cr3:0x5abd000\nT 2147506877 2147506877 cr3:0x5abd000\n"
	    "C 2147506877 2147506877 0xa003\n"
	    "P 100 cat\nT 100 100 cat\nC 100 100 0xa004\n"
	    "P 2147483655 cr3:0x7000\nT 2147483655 2147483655 cr3:0x7000\n"
	    "C 2147483655 2147483655 0xa005\n"
	    "P 0 swapper/0\nT 0 0 swapper/0\nC 0 0 0xa006\n");
	assert_int_equal(VPMU_PID_ASPACE_OF(0x5abd000ull), 2147506877u);
	/* No task function: the process hooks' process, as before (none: 0). */
	assert_int_equal(vpmu_vcpu_set_task_fn(vm, 0, NULL, NULL), 0);
	run(vm, 0xA007, 0x1000);
	assert_int_equal(vpmu_vm_op(vm, &ROOT, VPMU_OP_FLUSHLOG, NULL), 0);
	assert_non_null(strstr(log_lines(fd), "C 0 0 0xa007\n"));
	close(fd);
}

/* The unwinder's script: how many addresses to give, from 0xB000 up. */
static unsigned unwind_give, unwind_calls;

static unsigned
unwinder(void *arg, unsigned cpu, const struct vpmu_regs *r, uint64_t *pc, unsigned max)
{
	unsigned i;

	assert_ptr_equal(arg, &unwind_give);
	assert_int_equal(cpu, 0);
	assert_int_equal(max, 8);		/* callchaindepth's default */
	unwind_calls++;
	pc[0] = r->rip;
	for (i = 1; i < unwind_give && i < max; i++)
		pc[i] = 0xB000 + i;
	return (unwind_give);
}

static void
give_unwinder(vpmu_vm *vm)
{
	assert_int_equal(vpmu_vcpu_set_unwind_fn(vm, 0, unwinder, &unwind_give), 0);
}

/* The log's CALLCHAIN records: "npc pc,pc,..." a line each. */
static char *
chain_lines(int fd)
{
	static struct vpmu_pmclog_ev ev;
	static char out[4096];
	vpmu_pmclog_reader *r;
	size_t at = 0;
	unsigned i;
	int rfd;

	out[0] = '\0';
	r = fx_log_reader(fd, &rfd);
	while (vpmu_pmclog_read(r, &ev) == 0) {
		if (ev.type != VPMU_PMCLOG_CALLCHAIN)
			continue;
		at += (size_t)snprintf(out + at, sizeof(out) - at, "%u", ev.u.callchain.npc);
		for (i = 0; i < ev.u.callchain.npc; i++)
			at += (size_t)snprintf(out + at, sizeof(out) - at, "%s%#llx",
			    i == 0 ? " " : ",", (unsigned long long)ev.u.callchain.pc[i]);
		at += (size_t)snprintf(out + at, sizeof(out) - at, "\n");
		assert_true(at < sizeof(out));
	}
	vpmu_pmclog_close(r);
	close(rfd);
	return (out);
}

static void
samples_take_the_unwinders_chain(void **state)
{
	vpmu_vm *vm = ((struct fx *)*state)->vm;
	int fd;

	fd = sampling(vm, give_unwinder);
	unwind_give = 3;			/* its chain */
	run(vm, 0xA000, 0x1000);
	unwind_give = 0;			/* none: the frame pointers (RBP 0: none) */
	run(vm, 0xA001, 0x1000);
	unwind_give = 1000;			/* more than asked: the depth */
	run(vm, 0xA002, 0x1000);
	assert_int_equal(unwind_calls, 3);
	assert_int_equal(vpmu_vcpu_set_unwind_fn(vm, 0, NULL, NULL), 0);
	run(vm, 0xA003, 0x1000);		/* no unwinder: not called */
	assert_int_equal(unwind_calls, 3);
	assert_int_equal(vpmu_vm_op(vm, &ROOT, VPMU_OP_FLUSHLOG, NULL), 0);
	assert_string_equal(chain_lines(fd),
	    "3 0xa000,0xb001,0xb002\n"
	    "1 0xa001\n"
	    "8 0xa002,0xb001,0xb002,0xb003,0xb004,0xb005,0xb006,0xb007\n"
	    "1 0xa003\n");
	assert_int_equal(vpmu_vcpu_set_unwind_fn(NULL, 0, unwinder, NULL), EINVAL);
	assert_int_equal(vpmu_vcpu_set_unwind_fn(vm, 2, unwinder, NULL), EINVAL);
	close(fd);
}

static void
set_task_fn_errors(void **state)
{
	vpmu_vm *vm = ((struct fx *)*state)->vm;	/* two vCPUs */

	assert_int_equal(vpmu_vcpu_set_task_fn(NULL, 0, scripted, NULL), EINVAL);
	assert_int_equal(vpmu_vcpu_set_task_fn(vm, 2, scripted, NULL), EINVAL);
}

/*
 * vpmu_vm_read(): through the guest's paging (off here: linear = physical),
 * from the RAM the VMM added; EFAULT past it, with what could be read.
 */
static void
vm_read_reads_guest_memory(void **state)
{
	static uint8_t ram[8192];
	struct vpmu_regs r = { .cr0 = 1 };
	vpmu_vm *vm = ((struct fx *)*state)->vm;
	uint8_t buf[16];

	memcpy(ram + 8180, "0123456789ab", 12);
	assert_int_equal(vpmu_vm_add_memory(vm, 0x10000, sizeof(ram), ram), 0);
	memset(buf, 0, sizeof(buf));
	assert_int_equal(vpmu_vm_read(vm, &r, 0x10000 + 8180, buf, 12), 0);
	assert_memory_equal(buf, "0123456789ab", 12);
	memset(buf, 0, sizeof(buf));
	assert_int_equal(vpmu_vm_read(vm, &r, 0x10000 + 8180, buf, 16), EFAULT);
	assert_memory_equal(buf, "0123456789ab", 12);
	assert_int_equal(vpmu_vm_read(vm, &r, 0x9000, buf, 1), EFAULT);
	assert_int_equal(vpmu_vm_read(vm, &r, 0x10000, buf, 0), 0);
	assert_int_equal(vpmu_vm_read(NULL, &r, 0x10000, buf, 1), EINVAL);
	assert_int_equal(vpmu_vm_read(vm, NULL, 0x10000, buf, 1), EINVAL);
	assert_int_equal(vpmu_vm_read(vm, &r, 0x10000, NULL, 1), EINVAL);
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_setup_teardown(samples_name_their_task_once, fx_setup,
		    fx_teardown),
		cmocka_unit_test_setup_teardown(set_task_fn_errors, fx_setup, fx_teardown),
		cmocka_unit_test_setup_teardown(samples_take_the_unwinders_chain, fx_setup,
		    fx_teardown),
		cmocka_unit_test_setup_teardown(vm_read_reads_guest_memory, fx_setup,
		    fx_teardown),
	};

	return (cmocka_run_group_tests(tests, NULL, NULL));
}
