/*
 * run.c -- the vCPU threads.  The exit path reads top to bottom in one
 * function, vcpu_run(): pending work (libvpmu's pre_run: a PMI to deliver,
 * single-stepping on or off; after a PMI, the LVTPC re-arm of boot.c),
 * KVM_RUN, libvpmu's exits (its MSRs, its debug exits), then one switch on
 * the exit reason for the rest: port I/O through the port table (ports.c),
 * everything else ends the run with a message naming the vCPU, the exit
 * and the RIP.
 *
 * Ending the run: the first vr_run_stop() sets the status and the reason, marks the VM stopping
 * and kicks every other vCPU out of KVM_RUN (immediate_exit, then a signal
 * whose handler does nothing: KVM_RUN returns EINTR).  Each thread sees
 * the flag at the top of its loop and returns.  --timeout, SIGINT and
 * SIGTERM end it the same way, from vr_run_supervise() (vpmu-run) or
 * vr_run_supervise_tick() (vpmustat, whose progress and counts it ticks).
 */
#include <errno.h>
#include <inttypes.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <sys/ioctl.h>
#include <unistd.h>
#include <linux/kvm.h>

#include "vpmu-run.h"

#define SIG_KICK	SIGRTMIN
#define RFLAGS_IF	(1ull << 9)

/* KVM exit reasons by name, for messages. */
static const char *const exit_names[] = {
#define X(n) [KVM_EXIT_##n] = "KVM_EXIT_" #n
	X(UNKNOWN), X(EXCEPTION), X(IO), X(HYPERCALL), X(DEBUG), X(HLT),
	X(MMIO), X(IRQ_WINDOW_OPEN), X(SHUTDOWN), X(FAIL_ENTRY), X(INTR),
	X(SET_TPR), X(TPR_ACCESS), X(NMI), X(INTERNAL_ERROR), X(OSI),
	X(PAPR_HCALL), X(WATCHDOG), X(EPR), X(SYSTEM_EVENT), X(IOAPIC_EOI),
	X(HYPERV), X(X86_RDMSR), X(X86_WRMSR), X(DIRTY_RING_FULL),
	X(AP_RESET_HOLD), X(X86_BUS_LOCK), X(XEN),
#undef X
};

static const char *
exit_name(uint32_t reason)
{
	if (reason < NELEM(exit_names) && exit_names[reason] != NULL)
		return (exit_names[reason]);
	return ("an unknown exit");
}

static int
stopping(struct vr_vm *vm)
{
	return (__atomic_load_n(&vm->stopping, __ATOMIC_ACQUIRE));
}

/*
 * End the run with status, unless it already ends (the first reason wins).
 * With vm->lock held.  Kicks under the lock, so vr_run_start() can start
 * the threads under it too and no thread sees a half-started vCPU table.
 */
void
vr_run_stop_locked(struct vr_vm *vm, int status, enum vr_end why)
{
	unsigned i;

	if (vm->stopping)
		return;
	vm->status = status;
	vm->end = why;
	__atomic_store_n(&vm->stopping, 1, __ATOMIC_RELEASE);
	pthread_cond_broadcast(&vm->ended);
	for (i = 0; i < vm->nvcpus; i++) {
		struct vr_vcpu *o = &vm->vcpu[i];

		if (!o->started || pthread_equal(o->thread, pthread_self()))
			continue;
		/* Entering KVM_RUN from now on returns EINTR at once ... */
		__atomic_store_n(&o->run->immediate_exit, 1, __ATOMIC_RELEASE);
		/* ... and one inside it now leaves with EINTR. */
		pthread_kill(o->thread, SIG_KICK);
	}
	/* The supervisor holds the kick pending until its sigtimedwait(). */
	if (vm->supervised && !pthread_equal(vm->supervisor, pthread_self()))
		pthread_kill(vm->supervisor, SIG_KICK);
}

void
vr_run_stop(struct vr_vm *vm, int status, enum vr_end why)
{
	pthread_mutex_lock(&vm->lock);
	vr_run_stop_locked(vm, status, why);
	pthread_mutex_unlock(&vm->lock);
}

/* The guest ended badly: say who, how and where. */
static void
guest_fail(struct vr_vcpu *c, const char *fmt, ...)
{
	struct kvm_regs r;
	char what[256];
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(what, sizeof(what), fmt, ap);
	va_end(ap);
	vr_console_flush(c);
	fflush(stdout);
	if (ioctl(c->fd, KVM_GET_REGS, &r) == 0)
		fprintf(stderr, "%s: vCPU %u: %s (exit %s) at RIP %#llx\n", vr_progname,
		    c->index, what, exit_name(c->run->exit_reason),
		    (unsigned long long)r.rip);
	else
		fprintf(stderr, "%s: vCPU %u: %s (exit %s), RIP unknown: "
		    "KVM_GET_REGS: %s\n", vr_progname, c->index, what,
		    exit_name(c->run->exit_reason), strerror(errno));
}

/* The error, with the instruction's bytes where they can be read. */
static void
emulation_report(struct vr_vcpu *c)
{
	struct kvm_regs r;
	uint8_t b[15];
	char hex[3 * sizeof(b) + 16] = "";
	size_t i, n = 0;

	if (c->run->internal.suberror != KVM_INTERNAL_ERROR_EMULATION) {
		guest_fail(c, "KVM internal error, suberror %u", c->run->internal.suberror);
		return;
	}
	if (ioctl(c->fd, KVM_GET_REGS, &r) == 0)
		n = vr_insn_bytes(c, r.rip, b, sizeof(b));
	for (i = 0; i < n; i++)
		snprintf(hex + 3 * i, sizeof(hex) - 3 * i, " %02x", b[i]);
	guest_fail(c, "KVM internal error, suberror %u (instruction emulation failed%s%s)",
	    c->run->internal.suberror, n != 0 ? ", bytes" : "", hex);
}

/* ---- the run loop ------------------------------------------------------------ */

uint64_t
vr_mono_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ((uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec);
}

/*
 * With the in-kernel irqchip KVM keeps a halted vCPU inside KVM_RUN until
 * an interrupt comes.  The watchdog kicks a vCPU that stayed in KVM_RUN
 * for WATCHDOG_NS and is blocked there (KVM's "blocking" statistic of the
 * vCPU: halted, waiting for an interrupt); if it is halted with interrupts
 * off, nothing but an NMI could wake it, and the run ends as the boot
 * protocol says.  A vCPU that runs guest code is never kicked (a guest
 * that spins sees no exits).  Without the statistic (KVM before
 * KVM_GET_STATS_FD or "blocking"), every vCPU in KVM_RUN that long is.
 */
#define WATCHDOG_NS	200000000ull

/*
 * Where the vCPU's "blocking" statistic is in its KVM statistics file:
 * c->stats_fd and c->blocking_off, or stats_fd -1 if KVM has none.
 */
static void
blocking_stat_open(struct vr_vcpu *c)
{
	struct kvm_stats_header h;
	struct kvm_stats_desc d;
	size_t dsize, i;
	char *descs = NULL;
	int fd;

	c->stats_fd = -1;
	if ((fd = ioctl(c->fd, KVM_GET_STATS_FD, NULL)) < 0)
		return;
	if (pread(fd, &h, sizeof(h), 0) != (ssize_t)sizeof(h))
		goto out;
	dsize = sizeof(d) + h.name_size;
	if (h.num_desc == 0 || h.num_desc > 4096 || h.name_size > 4096 ||
	    (descs = malloc(dsize * h.num_desc)) == NULL ||
	    pread(fd, descs, dsize * h.num_desc, h.desc_offset) !=
	    (ssize_t)(dsize * h.num_desc))
		goto out;
	for (i = 0; i < h.num_desc; i++) {
		const char *p = descs + i * dsize;

		memcpy(&d, p, sizeof(d));
		if (strncmp(p + sizeof(d), "blocking", h.name_size) == 0 &&
		    d.size == 1) {
			c->stats_fd = fd;
			c->blocking_off = (uint64_t)h.data_offset + d.offset;
			fd = -1;
			break;
		}
	}
out:
	free(descs);
	if (fd >= 0)
		close(fd);
}

/* Whether the watchdog should kick (and so look at) vCPU c. */
static bool
blocked(struct vr_vcpu *c)
{
	uint64_t v;

	if (c->stats_fd < 0)
		return (true);
	return (pread(c->stats_fd, &v, sizeof(v), (off_t)c->blocking_off) !=
	    (ssize_t)sizeof(v) || v != 0);
}

static bool
halted_cli(struct vr_vcpu *c)
{
	struct kvm_mp_state mp;
	struct kvm_regs r;

	return (ioctl(c->fd, KVM_GET_MP_STATE, &mp) == 0 &&
	    mp.mp_state == KVM_MP_STATE_HALTED &&
	    ioctl(c->fd, KVM_GET_REGS, &r) == 0 && !(r.rflags & RFLAGS_IF));
}

/*
 * The VM's lock and its condition "ended", whose timed waits (the
 * watchdog's) are on CLOCK_MONOTONIC: with the default clock
 * (CLOCK_REALTIME) a monotonic deadline is long past, and the wait
 * returns at once.
 */
void
vr_vm_sync_init(struct vr_vm *vm)
{
	pthread_condattr_t ca;

	pthread_mutex_init(&vm->lock, NULL);
	pthread_condattr_init(&ca);
	(void)pthread_condattr_setclock(&ca, CLOCK_MONOTONIC);
	pthread_cond_init(&vm->ended, &ca);
	pthread_condattr_destroy(&ca);
}

void
vr_vm_sync_destroy(struct vr_vm *vm)
{
	pthread_cond_destroy(&vm->ended);
	pthread_mutex_destroy(&vm->lock);
}

static void *
watchdog(void *arg)
{
	struct vr_vm *vm = arg;
	struct timespec until;
	uint64_t t, since;
	unsigned i;

	pthread_mutex_lock(&vm->lock);
	while (!vm->stopping) {
		clock_gettime(CLOCK_MONOTONIC, &until);
		until.tv_nsec += 50000000;		/* look every 50 ms */
		if (until.tv_nsec >= 1000000000) {
			until.tv_sec++;
			until.tv_nsec -= 1000000000;
		}
		(void)pthread_cond_timedwait(&vm->ended, &vm->lock, &until);
		if (vm->stopping)
			break;
		t = vr_mono_ns();
		for (i = 0; i < vm->nvcpus; i++) {
			since = __atomic_load_n(&vm->vcpu[i].in_run, __ATOMIC_ACQUIRE);
			if (vm->vcpu[i].started && since != 0 && t - since > WATCHDOG_NS &&
			    blocked(&vm->vcpu[i])) {
				__atomic_store_n(&vm->vcpu[i].looked, true, __ATOMIC_RELEASE);
				pthread_kill(vm->vcpu[i].thread, SIG_KICK);
			}
		}
	}
	pthread_mutex_unlock(&vm->lock);
	return (NULL);
}

static void
lib_fail(struct vr_vcpu *c, const char *fn, int err)
{
	fflush(stdout);
	fprintf(stderr, "%s: vCPU %u: %s: %s\n", vr_progname, c->index, fn,
	    vpmu_strerror(err));
}

/*
 * PMIs delivered on this vCPU since the last look: on a change (and if
 * rearm), the boot protocol's re-arm (boot.c).  Per exit this only copies
 * libvpmu's counters; the ioctls come once per PMI.
 */
static int
pmi_rearm(struct vr_vcpu *c, bool rearm)
{
	struct vpmu_kvm_stats st;
	int err;

	if ((err = vpmu_kvm_get_stats(c->vm->k, c->index, &st)) != 0) {
		lib_fail(c, "vpmu_kvm_get_stats", err);
		return (-1);
	}
	if (st.pmis == c->pmis)
		return (0);
	c->pmis = st.pmis;
	return (rearm ? vr_boot_lvtpc_rearm(c) : 0);
}

static void *
vcpu_run(void *arg)
{
	struct vr_vcpu *c = arg;
	struct vr_vm *vm = c->vm;
	struct kvm_run *run = c->run;
	struct kvm_regs regs;
	bool handled;
	int err;

	if ((err = vpmu_vcpu_set_thread(vm->pmu, c->index, gettid())) != 0) {
		lib_fail(c, "vpmu_vcpu_set_thread", err);
		goto fail;
	}
	if (vm->lvtpc_rearm && pmi_rearm(c, false) < 0)	/* a resumed VM's are not new */
		goto fail;
	for (;;) {
		if (stopping(vm))
			goto exit;
		/* Pending work: a PMI to deliver as an NMI, single-step on/off. */
		if ((err = vpmu_kvm_pre_run(vm->k, c->index)) != 0) {
			lib_fail(c, "vpmu_kvm_pre_run", err);
			goto fail;
		}
		if (vm->lvtpc_rearm && pmi_rearm(c, true) < 0)
			goto fail;
		__atomic_store_n(&c->in_run, vr_mono_ns(), __ATOMIC_RELEASE);
		err = ioctl(c->fd, KVM_RUN, 0);
		__atomic_store_n(&c->in_run, 0, __ATOMIC_RELEASE);
		if (err < 0) {
			if (errno != EINTR && errno != EAGAIN) {
				fflush(stdout);
				fprintf(stderr, "%s: vCPU %u: KVM_RUN: %s\n", vr_progname,
				    c->index, strerror(errno));
				goto fail;
			}
			run->exit_reason = KVM_EXIT_INTR;	/* a signal, or a kick */
		}
		if ((err = vpmu_kvm_handle_exit(vm->k, c->index, &handled)) != 0) {
			lib_fail(c, "vpmu_kvm_handle_exit", err);
			goto fail;
		}
		if (handled)
			continue;

		switch (run->exit_reason) {
		case KVM_EXIT_IO:
			vr_syscall_look(c);
			if (!vr_port_io(c)) {
				guest_fail(c, "%s of %u byte%s at port %#x: the VMM "
				    "emulates 0x3f8..0x3ff (COM1), 0x510..0x511 "
				    "(fw_cfg), writes to 0xf4 (exit), 0xf6 (mark) "
				    "and, with --snapshot, 0xf5 (snapshot) only",
				    run->io.direction == KVM_EXIT_IO_OUT ?
				    "OUT" : "IN", run->io.size,
				    run->io.size == 1 ? "" : "s", run->io.port);
				goto panic;
			}
			break;
		case KVM_EXIT_INTR:
			/*
			 * A kick: the end of the run (a stop, libvpmu's time
			 * sample), or the watchdog's look, the only one that
			 * asks KVM whether the vCPU is halted for good (an
			 * ioctl per time sample would cost the profile).
			 */
			if (vm->irqchip_kernel && !stopping(vm) &&
			    __atomic_exchange_n(&c->looked, false, __ATOMIC_ACQ_REL) &&
			    halted_cli(c)) {
				run->exit_reason = KVM_EXIT_HLT;	/* for the message */
				guest_fail(c, "HLT with interrupts off: nothing can "
				    "wake the vCPU");
				goto panic;
			}
			break;		/* the loop's top sees why */
		case KVM_EXIT_X86_RDMSR:
		case KVM_EXIT_X86_WRMSR:
			if (vr_syscall_lstar(c))
				break;		/* IA32_LSTAR, --user-syscall */
			/*
			 * An MSR exit libvpmu did not take: no PMU MSR of the
			 * model.  Fault it as hardware does an MSR that does
			 * not exist.
			 */
			run->msr.error = 1;
			vm->gp_injected[c->index]++;
			break;
		case KVM_EXIT_HLT:
			if (ioctl(c->fd, KVM_GET_REGS, &regs) < 0) {
				fprintf(stderr, "%s: vCPU %u: KVM_GET_REGS: %s\n", vr_progname,
				    c->index, strerror(errno));
				goto fail;
			}
			if (!(regs.rflags & RFLAGS_IF)) {
				guest_fail(c, "HLT with interrupts off: nothing can "
				    "wake the vCPU");
				goto panic;
			}
			/*
			 * (Only with --irqchip user: the in-kernel LAPIC halts
			 * the vCPU inside KVM_RUN.)  Interrupts on: vpmu-run
			 * delivers no interrupts, so the HLT returns at once,
			 * like a PAUSE; a pending PMI is delivered as an NMI on
			 * re-entry (pre_run).
			 */
			break;
		case KVM_EXIT_SHUTDOWN:
			guest_fail(c, "triple fault (or another shutdown condition)");
			goto panic;
		case KVM_EXIT_FAIL_ENTRY:
			guest_fail(c, "VM entry failed, hardware entry failure "
			    "reason %#llx", (unsigned long long)
			    run->fail_entry.hardware_entry_failure_reason);
			goto panic;
		case KVM_EXIT_INTERNAL_ERROR:
			if (vr_emulate(c))
				break;
			emulation_report(c);
			goto panic;
		case KVM_EXIT_DEBUG:
			if (vr_syscall_debug(c))
				break;		/* --user-syscall's breakpoint */
			guest_fail(c, "a debug exit vpmu-run did not ask for (DR6 %#llx)",
			    (unsigned long long)run->debug.arch.dr6);
			goto panic;
		case KVM_EXIT_MMIO:
			guest_fail(c, "%s of %u bytes at guest-physical %#llx, which "
			    "is not RAM (%" PRIu64 " MiB from 0; see --mem)",
			    run->mmio.is_write ? "write" : "read", run->mmio.len,
			    (unsigned long long)run->mmio.phys_addr,
			    vm->ram_size >> 20);
			goto panic;
		default:
			guest_fail(c, "unhandled exit %u", run->exit_reason);
			goto panic;
		}
	}
exit:
	return (NULL);
panic:
	vr_run_stop(vm, VR_EXIT_GUEST, VR_END_OTHER);
	return (NULL);
fail:
	vr_run_stop(vm, VR_EXIT_HOST, VR_END_OTHER);
	return (NULL);
}

/* ---- start and wait ----------------------------------------------------------- */

static void
kick_handler(int sig)
{
	(void)sig;		/* only to make KVM_RUN return EINTR */
}

/* Once, before any vCPU thread: the kick signal's handler. */
int
vr_run_prepare(void)
{
	struct sigaction sa;

	memset(&sa, 0, sizeof(sa));
	sa.sa_handler = kick_handler;	/* no SA_RESTART: KVM_RUN must return */
	sigemptyset(&sa.sa_mask);
	if (sigaction(SIG_KICK, &sa, NULL) < 0) {
		fprintf(stderr, "%s: sigaction: %s\n", vr_progname, strerror(errno));
		return (-1);
	}
	return (0);
}

/* One thread per vCPU.  0, or -1 after a message (the run is stopped). */
int
vr_run_start(struct vr_vm *vm)
{
	unsigned i;
	int err;

	/* libvpmu's timer for time samples ends a run with our kick too. */
	(void)vpmu_kvm_set_kick_signal(vm->k, SIG_KICK);
	/* Before any vCPU runs: a vCPU ioctl waits while its vCPU is in KVM_RUN. */
	for (i = 0; i < vm->nvcpus && vm->irqchip_kernel; i++)
		blocking_stat_open(&vm->vcpu[i]);
	pthread_mutex_lock(&vm->lock);
	for (i = 0; i < vm->nvcpus; i++) {
		struct vr_vcpu *c = &vm->vcpu[i];

		if ((err = pthread_create(&c->thread, NULL, vcpu_run, c)) != 0) {
			pthread_mutex_unlock(&vm->lock);
			fprintf(stderr, "%s: vCPU %u: pthread_create: %s\n", vr_progname,
			    i, strerror(err));
			vr_run_stop(vm, VR_EXIT_HOST, VR_END_OTHER);
			return (-1);
		}
		c->started = true;
	}
	if (vm->irqchip_kernel) {
		if ((err = pthread_create(&vm->watchdog, NULL, watchdog, vm)) != 0) {
			pthread_mutex_unlock(&vm->lock);
			fprintf(stderr, "%s: watchdog: pthread_create: %s\n", vr_progname,
			    strerror(err));
			vr_run_stop(vm, VR_EXIT_HOST, VR_END_OTHER);
			return (-1);
		}
		vm->watchdog_on = true;
	}
	pthread_mutex_unlock(&vm->lock);
	return (0);
}

/* ---- ending the run from outside (vpmu-run, vpmustat) ---------------------------
 * SIGINT, SIGTERM and --timeout stop the run as a guest's exit does: the
 * first reason wins, every vCPU is kicked out of KVM_RUN, the report
 * follows.  The two signals are blocked in every thread of the run (they
 * inherit the mask vr_run_hold_signals() set) and taken by one thread,
 * the supervisor, with sigtimedwait(): no handler, so nothing but plain
 * code decides.  Its wait ends at a signal, at the deadline, or at the
 * kick vr_run_stop_locked() sends it when the run ends otherwise (blocked there
 * too, so a kick sent before the wait begins is not lost).  A signal the
 * process started with ignored (a background job's SIGINT) stays ignored.
 */

int
vr_run_hold_signals(sigset_t *held, sigset_t *old)
{
	static const int sigs[] = { SIGINT, SIGTERM };
	struct sigaction sa;
	size_t i;
	int err;

	sigemptyset(held);
	for (i = 0; i < NELEM(sigs); i++)
		if (sigaction(sigs[i], NULL, &sa) == 0 && sa.sa_handler != SIG_IGN)
			sigaddset(held, sigs[i]);
	if ((err = pthread_sigmask(SIG_BLOCK, held, old)) != 0) {
		fprintf(stderr, "%s: pthread_sigmask: %s\n", vr_progname, strerror(err));
		return (-1);
	}
	return (0);
}


void
vr_run_supervise(struct vr_vm *vm, unsigned timeout_s, const sigset_t *held,
    const sigset_t *old)
{
	vr_run_supervise_tick(vm, timeout_s, held, old, 0, NULL, NULL);
}

void
vr_run_supervise_tick(struct vr_vm *vm, unsigned timeout_s, const sigset_t *held,
    const sigset_t *old, unsigned tick_ms, void (*tick)(void *), void *arg)
{
	struct timespec ts;
	sigset_t set = *held;
	siginfo_t si;
	uint64_t deadline = 0, next = 0, wake, now;
	int sig;

	if (timeout_s != 0)
		deadline = vr_mono_ns() + (uint64_t)timeout_s * 1000000000u;
	if (tick != NULL && tick_ms != 0)
		next = vr_mono_ns() + (uint64_t)tick_ms * 1000000u;
	sigaddset(&set, SIG_KICK);
	(void)pthread_sigmask(SIG_BLOCK, &set, NULL);
	pthread_mutex_lock(&vm->lock);
	vm->supervisor = pthread_self();
	vm->supervised = true;
	pthread_mutex_unlock(&vm->lock);
	while (!stopping(vm)) {
		now = vr_mono_ns();
		if (deadline != 0 && now >= deadline) {
			vr_run_stop(vm, VR_EXIT_TIMEOUT, VR_END_TIMEOUT);
			break;
		}
		if (next != 0 && now >= next) {
			tick(arg);
			next += (uint64_t)tick_ms * 1000000u;
			continue;
		}
		wake = deadline == 0 || (next != 0 && next < deadline) ? next : deadline;
		if (wake == 0)
			sig = sigwaitinfo(&set, &si);
		else {
			ts.tv_sec = (time_t)((wake - now) / 1000000000u);
			ts.tv_nsec = (long)((wake - now) % 1000000000u);
			sig = sigtimedwait(&set, &si, &ts);
		}
		if (sig > 0 && sig != SIG_KICK)
			vr_run_stop(vm, VR_EXIT_SIGNAL + sig, VR_END_SIGNAL);
		/* else: the kick (the run ends), the deadline, a tick, or EINTR */
	}
	pthread_mutex_lock(&vm->lock);
	vm->supervised = false;
	pthread_mutex_unlock(&vm->lock);
	(void)pthread_sigmask(SIG_SETMASK, old, NULL);
}

/* Until every vCPU thread has returned. */
void
vr_run_wait(struct vr_vm *vm)
{
	unsigned i;

	for (i = 0; i < vm->nvcpus; i++)
		if (vm->vcpu[i].started)
			pthread_join(vm->vcpu[i].thread, NULL);
	if (vm->watchdog_on)		/* every vCPU returned: the run is stopping */
		pthread_join(vm->watchdog, NULL);
	for (i = 0; i < vm->nvcpus && vm->irqchip_kernel; i++)
		if (vm->vcpu[i].stats_fd >= 0)
			close(vm->vcpu[i].stats_fd);
	for (i = 0; i < vm->nvcpus; i++)	/* lines the guest did not end */
		vr_console_flush(&vm->vcpu[i]);
	fflush(stdout);
}
