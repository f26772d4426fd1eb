/*
 * kvm_kick.h -- ending a vCPU's run after some time (kvm_kick.c): a
 * one-shot timer that sends a signal to the vCPU's thread, whose KVM_RUN
 * then returns EINTR.  The KVM glue arms it before a run when a sample of
 * a time event is due in it (vpmu_entry.time_ns).
 */
#ifndef VPMU_KVM_KICK_H
#define VPMU_KVM_KICK_H

#include <signal.h>
#include <stdbool.h>
#include <stdint.h>
#include <time.h>
#include <sys/types.h>

/* The default signal of vpmu_kvm_set_kick_signal(). */
#define VPMU_KICK_SIGNAL_DEFAULT	(SIGRTMAX - 1)

/* One vCPU's timer: its thread alone arms it. */
struct vpmu_kick {
	timer_t	 timer;
	pid_t	 tid;			/* the thread it signals; 0: no timer yet */
	int	 signo;			/* the signal it sends */
	bool	 armed;
};

/*
 * signo is one a kick may use: 1..SIGRTMAX, not SIGKILL, SIGSTOP, SIGSEGV,
 * SIGBUS, SIGILL, SIGFPE.  0 or EINVAL.
 */
int	vpmu__kick_signal_check(int signo);
/*
 * End the calling thread's KVM_RUN ns from now with signo (ns 0: disarm).
 * The timer is made, or made again, for the calling thread; the signal
 * gets a handler that does nothing if it has none (SIG_DFL or SIG_IGN).
 * 0 or an errno.
 */
int	vpmu__kick_arm(struct vpmu_kick *k, int signo, uint64_t ns);
void	vpmu__kick_fini(struct vpmu_kick *k);

#endif /* VPMU_KVM_KICK_H */
