/*
 * linuxtasks.c -- a guest whose tasks look like a Linux kernel's to
 * vpmustat --guest-symbols (linuxtasks.sh).  As kaslr.c does, vCPU 0 maps
 * the first GiB again at ALIAS in the upper half and writes IA32_LSTAR
 * with entry_SYSCALL_64 there.  It also keeps what x86-64 Linux keeps:
 *
 *   a per-CPU area     percpu, whose upper-half address is the GS base;
 *                      the pointer to the running task at PERCPU_CURRENT
 *                      in it (linuxtasks.sh adds "current_task" at that
 *                      offset to the map, as Linux's System.map has it)
 *   task_structs       with pid, tgid, comm and group_leader, the tgid in
 *                      an anonymous struct member
 *   BTF                btf_blob, the kernel's own type information for
 *                      them (the map's __start_BTF and __stop_BTF)
 *   kallsyms           kallsyms_area, where linuxkallsyms.sh writes the
 *                      kernel's own symbol table (mkkallsyms.c)
 *   ORC                orcframes.S: functions without frame pointers and
 *                      the ORC tables that unwind them; linux_banner
 *
 * It runs pre_hot() before any of that exists, then, through the alias,
 * alpha_hot() and orc_outer() as task alpha (pid 100), worker_hot() as its thread
 * alpha-worker (pid 101, tgid 100) and gamma_hot() as gamma (pid 200);
 * gamma's turn has the per-CPU base in IA32_KERNEL_GS_BASE and 0 in the
 * GS base, as between a kernel entry and its SWAPGS.  Then "linuxtasks:
 * done".
 */
#include <stddef.h>
#include <stdint.h>

#include <vpmu-guest/runtime.h>

#define MSR_LSTAR		0xc0000082
#define MSR_GS_BASE		0xc0000101
#define MSR_KERNEL_GS_BASE	0xc0000102
#define ALIAS			0xffffff8000000000ull
#define PERCPU_CURRENT		0x40

#ifndef ITERS
#define ITERS	15000
#endif

struct task_struct {
	uint64_t state;
	int32_t pid;
	struct {
		uint32_t flags;
		int32_t tgid;
	};
	struct task_struct *group_leader;
	uint8_t pad[24];
	char comm[16];
};

/* ---- the kernel's BTF for struct task_struct ------------------------------- */

#define KIND(k, vlen)	((uint32_t)(k) << 24 | (vlen))
enum { K_INT = 1, K_PTR = 2, K_ARRAY = 3, K_STRUCT = 4 };
/* The string section: each name's offset. */
#define S_INT		1
#define S_CHAR		5
#define S_TASK		10
#define S_PID		22
#define S_TGID		26
#define S_COMM		31
#define S_LEADER	36
#define S_FLAGS		49
#define STRS		"\0int\0char\0task_struct\0pid\0tgid\0comm\0group_leader\0flags"
#define BITS(m)		(uint32_t)(offsetof(struct task_struct, m) * 8)

struct btf_blob {
	uint16_t magic;
	uint8_t version, flags;
	uint32_t hdr_len, type_off, type_len, str_off, str_len;
	uint32_t types[
	    3 + 1 +		/* 1 int: btf_type, its encoding */
	    3 + 1 +		/* 2 char */
	    3 + 3 +		/* 3 char[16]: btf_type, btf_array */
	    3 + 4 * 3 +		/* 4 task_struct: btf_type, four members */
	    3 +			/* 5 struct task_struct * */
	    3 + 2 * 3];		/* 6 the anonymous struct, two members */
	char strs[sizeof(STRS)];
};

const struct btf_blob btf_blob = {
	.magic = 0xeB9F, .version = 1, .hdr_len = 24,
	.type_off = 0, .type_len = sizeof(((struct btf_blob *)0)->types),
	.str_off = sizeof(((struct btf_blob *)0)->types), .str_len = sizeof(STRS),
	.types = {
		S_INT, KIND(K_INT, 0), 4, 1u << 24 | 32,
		S_CHAR, KIND(K_INT, 0), 1, 8,
		0, KIND(K_ARRAY, 0), 0, 2, 1, 16,
		S_TASK, KIND(K_STRUCT, 4), sizeof(struct task_struct),
		    S_PID, 1, BITS(pid),
		    0, 6, BITS(flags),		/* the anonymous struct */
		    S_LEADER, 5, BITS(group_leader),
		    S_COMM, 3, BITS(comm),
		0, KIND(K_PTR, 0), 4,
		0, KIND(K_STRUCT, 2), 8,
		    S_FLAGS, 1, 0,
		    S_TGID, 1, 32,
	},
	.strs = STRS,
};

/* ---- the tasks and the per-CPU area ------------------------------------------ */

struct task_struct alpha = { .pid = 100, .tgid = 100, .comm = "alpha" };
struct task_struct worker = { .pid = 101, .tgid = 100, .comm = "alpha-worker" };
struct task_struct gamma = { .pid = 200, .tgid = 200, .comm = "gamma" };
uint8_t percpu[4096] __attribute__((aligned(4096)));
/* Zeros: no symbol table; linuxkallsyms.sh writes one here (mkkallsyms). */
const uint8_t kallsyms_area[16384] __attribute__((section(".rodata.kallsyms"),
    aligned(8), used)) = { 0 };
volatile uint64_t sink;

void entry_SYSCALL_64(void);
void pre_hot(uint64_t n);
void alpha_hot(uint64_t n);
void worker_hot(uint64_t n);
void gamma_hot(uint64_t n);
void orc_outer(uint64_t n);		/* orcframes.S */

/* The kernel's version, which says the ORC tables' format (orcframes.S). */
const char linux_banner[] = "Linux version 6.1.0-vpmu-test (linuxtasks.c)\n";

__attribute__((noinline)) void
entry_SYSCALL_64(void)
{
	sink = 0;
}

#define HOT(name)					\
__attribute__((noinline)) void				\
name(uint64_t n)					\
{							\
	uint64_t i;					\
							\
	for (i = 0; i < n; i++)				\
		sink += i;				\
}
HOT(pre_hot)
HOT(alpha_hot)
HOT(worker_hot)
HOT(gamma_hot)

static uint64_t
alias(const void *p)
{
	return (ALIAS + (uintptr_t)p);
}

/* Run hot (through the alias) as task t. */
static void
run_as(struct task_struct *t, void (*hot)(uint64_t))
{
	*(volatile uint64_t *)(percpu + PERCPU_CURRENT) = alias(t);
	((void (*)(uint64_t))alias((const void *)(uintptr_t)hot))(ITERS);
}

int
main(unsigned cpu)
{
	uint64_t *pml4 = (uint64_t *)(uintptr_t)(vg_read_cr3() & ~0xfffull);

	if (cpu != 0)
		return (0);
	pre_hot(ITERS);
	pml4[511] = pml4[0];
	__asm__ volatile("mov %0, %%cr3" : : "r"(vg_read_cr3()) : "memory");
	alpha.group_leader = (struct task_struct *)(uintptr_t)alias(&alpha);
	worker.group_leader = (struct task_struct *)(uintptr_t)alias(&alpha);
	gamma.group_leader = (struct task_struct *)(uintptr_t)alias(&gamma);
	vg_wrmsr(MSR_LSTAR, alias((const void *)(uintptr_t)entry_SYSCALL_64));
	vg_wrmsr(MSR_GS_BASE, alias(percpu));
	run_as(&alpha, alpha_hot);
	run_as(&alpha, orc_outer);
	run_as(&worker, worker_hot);
	vg_wrmsr(MSR_GS_BASE, 0);
	vg_wrmsr(MSR_KERNEL_GS_BASE, alias(percpu));
	run_as(&gamma, gamma_hot);
	vg_printf("linuxtasks: done\n");
	return (0);
}
