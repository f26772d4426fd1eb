/*
 * tasks.c -- which Linux task a sample of a Linux guest came from, read
 * from guest memory at the sample (libvpmu's task function,
 * vpmu_vcpu_set_task_fn).
 *
 * x86-64 Linux keeps the running task in a per-CPU variable: current_task
 * (before 6.2) or the first field of pcpu_hot (6.2 on), at an offset in
 * the per-CPU area that the symbol file gives and KASLR does not move.
 * The area's base is the GS base in kernel mode and IA32_KERNEL_GS_BASE in
 * user mode (SWAPGS exchanges them); whichever holds a kernel address is
 * taken, the mode's own first.  The task_struct's pid (Linux's thread id),
 * tgid (the process id), comm and group_leader (whose comm names the
 * process) are at offsets the kernel's own BTF gives: it is read once from
 * guest memory between __start_BTF and __stop_BTF, moved by the slide,
 * which is the guest's LSTAR minus entry_SYSCALL_64 (--kaslr-slide where
 * given).  Kernel addresses are read through the kernel's page tables: in
 * user mode under page-table isolation CR3 holds the user half of an
 * 8 KiB pair, the kernel's is the page below (bit 12 clear).
 *
 * A vCPU's per-CPU area does not move once the kernel has set LSTAR (which
 * it does after it set up the areas), so its base is kept, and read again
 * from the MSRs every BASE_AGAIN samples: most samples make no system call.
 *
 * A sample that cannot be named (before the kernel has set up its per-CPU
 * areas or LSTAR, a kernel without BTF, a symbol file without the
 * symbols) is left to libvpmu, which names the address space by CR3; the
 * first reason is kept for the run's end.  Calls come under libvpmu's VM
 * lock, one at a time, so the shared state needs no lock of its own.
 */
#include <errno.h>
#include <inttypes.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "vpmustat.h"

#define MSR_GS_BASE		0xc0000101u
#define MSR_KERNEL_GS_BASE	0xc0000102u
#define BTF_MAX			(64u << 20)	/* a vmlinux's is about 5 MiB */
#define PTI_USER_BIT		(1ull << 12)
#define CR0_PG			(1ull << 31)
#define BASE_AGAIN		256	/* samples between reads of a kept base */

static bool
kernel_va(uint64_t va)
{
	return (va >= VS_KERNEL_HALF);
}

int
vs_kread(struct vpmu_vm *vm, const struct vpmu_regs *r, uint64_t va, void *buf, size_t len)
{
	struct vpmu_regs k;

	if (vpmu_vm_read(vm, r, va, buf, len) == 0)
		return (0);
	if (!(r->cr3 & PTI_USER_BIT))
		return (-1);
	k = *r;
	k.cr3 &= ~PTI_USER_BIT;
	return (vpmu_vm_read(vm, &k, va, buf, len) == 0 ? 0 : -1);
}

static void
why(struct vs_tasks *t, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

/*
 * The first reason a sample went unnamed, kept for the run's end; a
 * reason that holds for every sample after it (the BTF) replaces it.
 */
static void
why(struct vs_tasks *t, const char *fmt, ...)
{
	va_list ap;

	if (t->why[0] != '\0' && !(t->tried && !t->ready))
		return;
	va_start(ap, fmt);
	vsnprintf(t->why, sizeof(t->why), fmt, ap);
	va_end(ap);
}

/* The kernel's BTF read from the guest, the offsets taken: 0, or -1 (said). */
static int
offsets(struct vs_tasks *t, struct vpmu_vm *vm, const struct vpmu_regs *r)
{
	static const char *const field[VS_TASK_NOFF] = { "pid", "tgid", "comm",
	    "group_leader" };
	uint64_t lo = t->btf_start + t->slide, len = t->btf_stop - t->btf_start;
	struct vs_btf b;
	char err[200];
	void *buf;
	unsigned i;
	long off;

	t->tried = true;
	if ((buf = malloc(len)) == NULL) {
		why(t, "out of memory for the kernel's BTF (%" PRIu64 " bytes)", len);
		return (-1);
	}
	if (vs_kread(vm, r, lo, buf, len) < 0) {
		why(t, "the kernel's BTF at %#" PRIx64 " (%" PRIu64 " bytes) is not all "
		    "mapped", lo, len);
		free(buf);
		return (-1);
	}
	if (vs_btf_open(&b, buf, len, err, sizeof(err)) < 0) {
		why(t, "the kernel's %s", err);
		free(buf);
		return (-1);
	}
	for (i = 0; i < VS_TASK_NOFF; i++) {
		if ((off = vs_btf_member(&b, "task_struct", field[i])) < 0) {
			why(t, "the kernel's BTF has no task_struct.%s", field[i]);
			break;
		}
		t->off[i] = (uint32_t)off;
	}
	vs_btf_free(&b);
	free(buf);
	if (i < VS_TASK_NOFF)
		return (-1);
	t->ready = true;
	return (0);
}

/* The task at task_va: 0, or -1. */
static int
task_at(struct vs_tasks *t, struct vpmu_vm *vm, const struct vpmu_regs *r, uint64_t task_va,
    struct vpmu_task *out)
{
	int32_t pid, tgid;
	uint64_t leader;

	if (vs_kread(vm, r, task_va + t->off[VS_TASK_PID], &pid, sizeof(pid)) < 0 ||
	    vs_kread(vm, r, task_va + t->off[VS_TASK_TGID], &tgid, sizeof(tgid)) < 0 ||
	    vs_kread(vm, r, task_va + t->off[VS_TASK_COMM], out->comm, VS_TASK_COMM_LEN) < 0 ||
	    vs_kread(vm, r, task_va + t->off[VS_TASK_LEADER], &leader, sizeof(leader)) < 0 ||
	    pid < 0 || tgid < 0) {
		why(t, "the task_struct at %#" PRIx64 " could not be read", task_va);
		return (-1);
	}
	out->comm[VS_TASK_COMM_LEN - 1] = '\0';
	if (!kernel_va(leader) || leader == task_va ||
	    vs_kread(vm, r, leader + t->off[VS_TASK_COMM], out->pcomm, VS_TASK_COMM_LEN) < 0)
		memcpy(out->pcomm, out->comm, VS_TASK_COMM_LEN);
	out->pcomm[VS_TASK_COMM_LEN - 1] = '\0';
	out->pid = tgid;
	out->tid = pid;
	return (0);
}

/* The task current in the per-CPU area at base: 0, or ENOENT (counted). */
static int
named(struct vs_tasks *t, struct vs_task_vcpu *tv, const struct vpmu_regs *r, uint64_t base,
    struct vpmu_task *out)
{
	uint64_t task_va;

	if (vs_kread(tv->vm, r, base + t->current, &task_va, sizeof(task_va)) < 0 ||
	    !kernel_va(task_va)) {
		why(t, "no current task at per-CPU %#" PRIx64 " + %#" PRIx64, base,
		    t->current);
		t->unnamed++;
		return (ENOENT);
	}
	if (task_at(t, tv->vm, r, task_va, out) < 0) {
		t->unnamed++;
		return (ENOENT);
	}
	t->named++;
	return (0);
}

static int load(struct vs_tasks *t, uint64_t lstar);

/*
 * The slide, known (given, or found before), or found now from LSTAR:
 * entry_SYSCALL_64 moved by a multiple of 2 MiB.  false: LSTAR says none.
 */
static bool
slide_from(struct vs_tasks *t, uint64_t lstar)
{
	if (t->slide_known)
		return (true);
	if (lstar == 0 || lstar < t->entry || (lstar - t->entry) % VS_KASLR_ALIGN != 0)
		return (false);
	t->slide = lstar - t->entry;
	t->slide_known = true;
	return (true);
}
static int from_ksyms(struct vs_tasks *t, const struct vs_ksyms *k, char *err,
    size_t errlen);

/* libvpmu's task function: the sampled vCPU's current Linux task. */
static int
task_fn(void *arg, unsigned cpu, const struct vpmu_regs *r, struct vpmu_task *out)
{
	struct vs_task_vcpu *tv = arg;
	struct vs_tasks *t = tv->tasks;
	uint32_t idx[3] = { MSR_GS_BASE, MSR_KERNEL_GS_BASE, VS_MSR_LSTAR };
	uint64_t val[3] = { 0, 0, 0 }, base;

	(void)cpu;
	if (!(r->cr0 & CR0_PG) || !r->long_mode) {
		why(t, "a sample before the kernel ran in 64-bit mode");
		t->unnamed++;
		return (ENOENT);
	}
	if (tv->base != 0 && ++tv->uses % BASE_AGAIN != 0)
		return (named(t, tv, r, tv->base, out));
	if (t->nosyms) {
		t->unnamed++;
		return (ENOENT);
	}
	if (vr_msrs(tv->fd, false, idx, val, 3) < 0) {
		why(t, "KVM_GET_MSRS (the GS bases): %s", strerror(errno));
		t->unnamed++;
		return (ENOENT);
	}
	if (t->load != NULL && load(t, val[2]) < 0) {
		t->unnamed++;
		return (ENOENT);
	}
	if (!slide_from(t, val[2])) {
		why(t, "LSTAR %#" PRIx64 " is not entry_SYSCALL_64 %#" PRIx64
		    " slid (not set yet, or another kernel)", val[2], t->entry);
		t->unnamed++;
		return (ENOENT);
	}
	if (!t->ready && (t->tried || offsets(t, tv->vm, r) < 0)) {
		t->unnamed++;
		return (ENOENT);
	}
	if (r->cpl == 0)
		base = kernel_va(val[0]) ? val[0] : val[1];
	else
		base = kernel_va(val[1]) ? val[1] : val[0];
	if (!kernel_va(base)) {
		why(t, "no per-CPU area yet (GS base %#" PRIx64 ", kernel GS base %#"
		    PRIx64 ")", val[0], val[1]);
		t->unnamed++;
		return (ENOENT);
	}
	tv->base = 0;
	if (named(t, tv, r, base, out) != 0)
		return (ENOENT);
	tv->base = base;		/* LSTAR is set: the area stays */
	tv->uses = 0;
	return (0);
}

/*
 * The symbols from the loader, once the kernel has set LSTAR (its own
 * table is unpacked by then): 0, or -1 (said).  A loader that fails is
 * not asked again.
 */
static int
load(struct vs_tasks *t, uint64_t lstar)
{
	const struct vs_ksyms *k;
	char err[512];

	if (lstar == 0) {
		why(t, "LSTAR 0: the kernel has not set its system call entry yet");
		return (-1);
	}
	t->tried = true;		/* a reason from here on holds for every sample */
	k = t->load(t->load_arg, err, sizeof(err));
	t->load = NULL;
	if (k == NULL || from_ksyms(t, k, err, sizeof(err)) < 0) {
		why(t, "%s", err);
		t->nosyms = true;
		/* No tasks; the slide still serves the kernel's ORC call chains. */
		if (k != NULL && t->entry != 0)
			(void)slide_from(t, lstar);
		return (-1);
	}
	t->tried = false;
	return (0);
}

/* The symbols' part of t: 0, or -1 and why k cannot name tasks. */
static int
from_ksyms(struct vs_tasks *t, const struct vs_ksyms *k, char *err, size_t errlen)
{
	t->orcsyms = (struct vs_orc_syms){ k->at[VS_KSYM_ORC_IP_START],
	    k->at[VS_KSYM_ORC_IP_STOP], k->at[VS_KSYM_ORC], k->at[VS_KSYM_BANNER] };
	t->current = k->at[VS_KSYM_PCPU_HOT] != 0 ? k->at[VS_KSYM_PCPU_HOT] :
	    k->at[VS_KSYM_CURRENT_TASK];
	t->btf_start = k->at[VS_KSYM_START_BTF];
	t->btf_stop = k->at[VS_KSYM_STOP_BTF];
	t->entry = k->at[VS_KSYM_ENTRY];
	t->slide_known = k->slide_given;
	t->slide = k->slide;
	if (t->current == 0 || kernel_va(t->current)) {
		snprintf(err, errlen, "%s has neither pcpu_hot nor current_task as a per-CPU "
		    "offset", k->path);
		return (-1);
	}
	if (t->btf_start == 0 || t->btf_stop <= t->btf_start ||
	    t->btf_stop - t->btf_start > BTF_MAX) {
		snprintf(err, errlen, "%s has no __start_BTF and __stop_BTF (a kernel "
		    "without CONFIG_DEBUG_INFO_BTF)", k->path);
		return (-1);
	}
	if (!t->slide_known && t->entry == 0) {
		snprintf(err, errlen, "%s has no entry_SYSCALL_64 and no --kaslr-slide is "
		    "given: the slide cannot be found", k->path);
		return (-1);
	}
	return (0);
}

int
vs_tasks_init(struct vs_tasks *t, const struct vs_ksyms *k, char *err, size_t errlen)
{
	memset(t, 0, sizeof(*t));
	return (from_ksyms(t, k, err, errlen));
}

void
vs_tasks_init_lazy(struct vs_tasks *t, vs_ksyms_loader *fn, void *arg)
{
	memset(t, 0, sizeof(*t));
	t->load = fn;
	t->load_arg = arg;
}

/*
 * libvpmu's unwind function: a kernel-mode sample's chain by the kernel's
 * ORC tables, read once the symbols and the slide are known; 0 (libvpmu
 * walks the frame pointers) before, in user mode, or without the tables.
 */
static unsigned
unwind_fn(void *arg, unsigned cpu, const struct vpmu_regs *r, uint64_t *pc, unsigned max)
{
	struct vs_task_vcpu *tv = arg;
	struct vs_tasks *t = tv->tasks;
	char err[256];

	(void)cpu;
	if (r->cpl != 0 || !kernel_va(r->rip) || !t->slide_known || t->load != NULL)
		return (0);
	if (!t->orc_tried) {
		t->orc_tried = true;
		if (vs_orc_load(&t->orc, tv->vm, r, &t->orcsyms, t->slide, err, sizeof(err)) < 0)
			snprintf(t->orc_why, sizeof(t->orc_why), "%s", err);
	}
	return (t->orc.n != 0 ? vs_orc_unwind(&t->orc, tv->vm, r, pc, max) : 0);
}

void
vs_tasks_fini(struct vs_tasks *t)
{
	vs_orc_free(&t->orc);
}

int
vs_tasks_attach(struct vs_tasks *t, struct vr_vm *vm)
{
	unsigned i;
	int err;

	for (i = 0; i < vm->nvcpus; i++) {
		t->vcpu[i] = (struct vs_task_vcpu){ .tasks = t, .vm = vm->pmu,
		    .fd = vm->vcpu[i].fd };
		if ((err = vpmu_vcpu_set_task_fn(vm->pmu, i, task_fn, &t->vcpu[i])) != 0 ||
		    (err = vpmu_vcpu_set_unwind_fn(vm->pmu, i, unwind_fn, &t->vcpu[i])) != 0) {
			errno = err;
			return (-1);
		}
	}
	return (0);
}
