/*
 * kvm_kick.c -- a run that must end in time: a sample of a time event is
 * due after ns more of the vCPU thread's CPU time in the guest.
 *
 * The timer counts CLOCK_MONOTONIC, not the thread's CPU time: the kernel
 * checks CPU-time timers at its scheduler tick (4 ms at HZ=250), which is
 * too coarse for profiling rates, while a monotonic timer is a high
 * resolution one.  A thread's CPU time never runs ahead of wall time, so
 * the run ends no later than the sample is due; when the host took the
 * CPU away meanwhile, the sample is not due yet at that exit, and the next
 * entry arms the timer again for what is left.
 *
 * The signal goes to the vCPU's thread alone (SIGEV_THREAD_ID).  One that
 * arrives after the timer was armed but before the thread entered KVM_RUN
 * cannot end that run, so the timer repeats at the same interval (1 ms at
 * least) until the next entry arms it anew: a kick lost that way costs one
 * interval, never the rest of a long run.  Kicks are lost more often than
 * one would think: a vCPU thread preempted between the arming and KVM_RUN
 * (a loaded host) loses its kick; a 4 ms repeat made a tenth to a fifth of
 * the periods go without a sample under load, 1 ms a hundredth.  The
 * repeat is not shorter because each signal costs its delivery: a thread
 * whose signals are slow to deliver (traced by strace, about 1 ms each)
 * makes little progress at high rates (10 kHz under strace: next to none).  The handler installed here has
 * SA_RESTART, so a kick that lands in another system call of the thread
 * restarts it; KVM_RUN itself is never restarted (it returns EINTR).
 */
#include <errno.h>
#include <signal.h>
#include <string.h>
#include <unistd.h>
#include <sys/syscall.h>

#include "kvm_kick.h"

#define KICK_MIN_NS	10000ull	/* no timer shorter than 10 us */
#define KICK_REPEAT_MIN_NS 1000000ull	/* nor a repeat shorter than 1 ms */

int
vpmu__kick_signal_check(int signo)
{
	if (signo < 1 || signo > SIGRTMAX || signo == SIGKILL || signo == SIGSTOP ||
	    signo == SIGSEGV || signo == SIGBUS || signo == SIGILL || signo == SIGFPE)
		return (EINVAL);
	return (0);
}

static void
kick_handler(int sig)
{
	(void)sig;		/* only to end KVM_RUN with EINTR */
}

/* A handler for signo, unless the process has one (no SA_RESTART). */
static int
handler_ensure(int signo)
{
	struct sigaction sa;

	if (sigaction(signo, NULL, &sa) < 0)
		return (errno);
	if (!(sa.sa_flags & SA_SIGINFO) && (sa.sa_handler == SIG_DFL ||
	    sa.sa_handler == SIG_IGN)) {
		memset(&sa, 0, sizeof(sa));
		sa.sa_handler = kick_handler;
		sa.sa_flags = SA_RESTART;
		sigemptyset(&sa.sa_mask);
		if (sigaction(signo, &sa, NULL) < 0)
			return (errno);
	}
	return (0);
}

/* The timer, for the calling thread and signo. */
static int
timer_for(struct vpmu_kick *k, int signo)
{
	pid_t tid = (pid_t)syscall(SYS_gettid);
	struct sigevent sev;
	int error;

	if (k->tid == tid && k->signo == signo)
		return (0);
	vpmu__kick_fini(k);
	if ((error = handler_ensure(signo)) != 0)
		return (error);
	memset(&sev, 0, sizeof(sev));
	sev.sigev_notify = SIGEV_THREAD_ID;
	sev.sigev_signo = signo;
	sev._sigev_un._tid = tid;
	if (timer_create(CLOCK_MONOTONIC, &sev, &k->timer) < 0)
		return (errno);
	k->tid = tid;
	k->signo = signo;
	return (0);
}

int
vpmu__kick_arm(struct vpmu_kick *k, int signo, uint64_t ns)
{
	struct itimerspec its;
	int error;

	memset(&its, 0, sizeof(its));
	if (ns == 0) {
		if (!k->armed)
			return (0);
		k->armed = false;
		return (timer_settime(k->timer, 0, &its, NULL) < 0 ? errno : 0);
	}
	if ((error = timer_for(k, signo)) != 0)
		return (error);
	if (ns < KICK_MIN_NS)
		ns = KICK_MIN_NS;
	its.it_value.tv_sec = (time_t)(ns / 1000000000u);
	its.it_value.tv_nsec = (long)(ns % 1000000000u);
	if (ns < KICK_REPEAT_MIN_NS)
		ns = KICK_REPEAT_MIN_NS;
	its.it_interval.tv_sec = (time_t)(ns / 1000000000u);
	its.it_interval.tv_nsec = (long)(ns % 1000000000u);
	if (timer_settime(k->timer, 0, &its, NULL) < 0)
		return (errno);
	k->armed = true;
	return (0);
}

void
vpmu__kick_fini(struct vpmu_kick *k)
{
	if (k->tid != 0)
		(void)timer_delete(k->timer);
	k->tid = 0;
	k->armed = false;
}
