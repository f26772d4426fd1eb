/*
 * test_kvm_kick.c -- the KVM glue's kick timer (backends/kvm_kick.c) and
 * vpmu_kvm_set_kick_signal(): which signals a kick may use, the handler
 * installed for a signal that has none, a timer that signals this thread
 * after the time asked and then repeats (1 ms at least), and disarming.
 *
 * A kick ends KVM_RUN by interrupting the thread; here it interrupts a
 * nanosleep(), which fails with EINTR whatever SA_RESTART says, as
 * KVM_RUN does.
 */
#include "fixture.h"

#include <fcntl.h>
#include <sys/ioctl.h>
#include <time.h>
#include <linux/kvm.h>

#include <vpmu/kvm.h>
#include "kvm_kick.h"

#define MS	1000000ull

static uint64_t
mono_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ((uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec);
}

/* Sleep up to ms; how many signals cut the sleep short. */
static unsigned
kicks_in(unsigned ms)
{
	uint64_t end = mono_ns() + ms * MS, now;
	struct timespec ts;
	unsigned n = 0;

	while ((now = mono_ns()) < end) {
		ts.tv_sec = (time_t)((end - now) / 1000000000u);
		ts.tv_nsec = (long)((end - now) % 1000000000u);
		if (nanosleep(&ts, NULL) < 0 && errno == EINTR)
			n++;
	}
	return (n);
}

/*
 * Sleep until the first signal, up to ms; how long that took (0: none
 * came).  A test waits for the first kick this way rather than counting
 * kicks in a fixed window, so a thread the host delays does not see two.
 */
static uint64_t
first_kick(unsigned ms)
{
	uint64_t start = mono_ns(), end = start + ms * MS, now;
	struct timespec ts;

	while ((now = mono_ns()) < end) {
		ts.tv_sec = (time_t)((end - now) / 1000000000u);
		ts.tv_nsec = (long)((end - now) % 1000000000u);
		if (nanosleep(&ts, NULL) < 0 && errno == EINTR)
			return (mono_ns() - start);
	}
	return (0);
}

static void
kick_signal_check(void **state)
{
	(void)state;
	assert_int_equal(vpmu__kick_signal_check(0), EINVAL);
	assert_int_equal(vpmu__kick_signal_check(-1), EINVAL);
	assert_int_equal(vpmu__kick_signal_check(SIGRTMAX + 1), EINVAL);
	assert_int_equal(vpmu__kick_signal_check(SIGKILL), EINVAL);
	assert_int_equal(vpmu__kick_signal_check(SIGSTOP), EINVAL);
	assert_int_equal(vpmu__kick_signal_check(SIGSEGV), EINVAL);
	assert_int_equal(vpmu__kick_signal_check(SIGBUS), EINVAL);
	assert_int_equal(vpmu__kick_signal_check(SIGILL), EINVAL);
	assert_int_equal(vpmu__kick_signal_check(SIGFPE), EINVAL);
	assert_int_equal(vpmu__kick_signal_check(SIGUSR1), 0);
	assert_int_equal(vpmu__kick_signal_check(SIGRTMIN), 0);
	assert_int_equal(vpmu__kick_signal_check(VPMU_KICK_SIGNAL_DEFAULT), 0);
	assert_int_equal(vpmu__kick_signal_check(SIGRTMAX), 0);
}

/*
 * A signal with no handler (SIG_DFL: an RT signal's default ends the
 * process) gets one that does nothing, with SA_RESTART; a timer of 20 ms
 * interrupts the thread no sooner than 20 ms, then repeats (every 20 ms:
 * 1 to 6 times in 100 ms, fewer if the host delays the thread, when a
 * pending timer signal is not queued twice); disarmed, it interrupts
 * nothing.  A signal sent just before the disarm may still arrive after
 * it (ThreadSanitizer's runtime holds a signal until the thread reaches a
 * call it intercepts), so 2 ms are let pass before the 50 ms that must be
 * quiet.
 */
static void
kick_interrupts_this_thread_and_repeats(void **state)
{
	struct vpmu_kick k = { 0 };
	struct sigaction sa;
	int sig = SIGRTMIN + 3;
	uint64_t t0;
	unsigned n;

	(void)state;
	memset(&sa, 0, sizeof(sa));
	sa.sa_handler = SIG_DFL;
	assert_int_equal(sigaction(sig, &sa, NULL), 0);
	t0 = mono_ns();
	assert_int_equal(vpmu__kick_arm(&k, sig, 20 * MS), 0);
	assert_true(k.armed);
	assert_int_equal(sigaction(sig, NULL, &sa), 0);
	assert_true(sa.sa_handler != SIG_DFL && sa.sa_handler != SIG_IGN);
	assert_true(sa.sa_flags & SA_RESTART);
	assert_true(first_kick(1000) != 0);
	assert_true(mono_ns() - t0 >= 20 * MS);
	n = kicks_in(100);			/* the repeat */
	print_message("kicks in 100 ms after the first: %u\n", n);
	assert_true(n >= 1 && n <= 6);
	assert_int_equal(vpmu__kick_arm(&k, sig, 0), 0);
	assert_false(k.armed);
	(void)kicks_in(2);
	assert_int_equal(kicks_in(50), 0);
	vpmu__kick_fini(&k);
}

/*
 * A short time repeats at 1 ms at least: a timer of 100 us interrupts
 * once and then about every 1 ms, not every 100 us: at most 21 times in
 * 20 ms (a 100 us repeat would give 200), at least once.  Deleted, it
 * interrupts nothing (after 2 ms, as above).
 */
static void
kick_repeat_is_not_shorter_than_1ms(void **state)
{
	struct vpmu_kick k = { 0 };
	unsigned n;

	(void)state;
	assert_int_equal(vpmu__kick_arm(&k, SIGRTMIN + 3, MS / 10), 0);
	assert_true(first_kick(1000) != 0);
	n = kicks_in(20);
	print_message("kicks in 20 ms after the first: %u\n", n);
	assert_true(n >= 1 && n <= 21);
	vpmu__kick_fini(&k);
	(void)kicks_in(2);
	assert_int_equal(kicks_in(10), 0);	/* deleted */
}

/* A handler the process has is left as it is. */
static int handled;

static void
own_handler(int sig)
{
	(void)sig;
	handled++;
}

static void
kick_keeps_the_process_s_handler(void **state)
{
	struct vpmu_kick k = { 0 };
	struct sigaction sa;
	int sig = SIGRTMIN + 4;

	(void)state;
	memset(&sa, 0, sizeof(sa));
	sa.sa_handler = own_handler;
	assert_int_equal(sigaction(sig, &sa, NULL), 0);
	assert_int_equal(vpmu__kick_arm(&k, sig, 5 * MS), 0);
	assert_true(first_kick(1000) != 0);
	assert_true(handled >= 1);		/* its handler, not ours */
	assert_int_equal(sigaction(sig, NULL, &sa), 0);
	assert_ptr_equal(sa.sa_handler, own_handler);
	vpmu__kick_fini(&k);
}

/* vpmu_kvm_set_kick_signal(): EINVAL for no handle and for each bad signal. */
static void
vpmu_kvm_set_kick_signal_EINVAL(void **state)
{
	vpmu_config *cfg;
	vpmu_vm *vm;
	vpmu_kvm *k;
	int kvm, vmfd;

	(void)state;
	assert_int_equal(vpmu_kvm_set_kick_signal(NULL, SIGUSR1), EINVAL);
	if ((kvm = open("/dev/kvm", O_RDWR | O_CLOEXEC)) < 0) {
		print_message("SKIP: /dev/kvm: %s\n", strerror(errno));
		skip();
	}
	vmfd = ioctl(kvm, KVM_CREATE_VM, 0);
	assert_true(vmfd >= 0);
	assert_int_equal(vpmu_config_create(&cfg), 0);
	assert_int_equal(vpmu_vm_create(cfg, &vm), 0);
	vpmu_config_destroy(cfg);
	assert_int_equal(vpmu_kvm_create(vm, vmfd, &k), 0);
	assert_int_equal(vpmu_kvm_set_kick_signal(k, 0), EINVAL);
	assert_int_equal(vpmu_kvm_set_kick_signal(k, SIGKILL), EINVAL);
	assert_int_equal(vpmu_kvm_set_kick_signal(k, SIGRTMAX + 1), EINVAL);
	assert_int_equal(vpmu_kvm_set_kick_signal(k, SIGUSR2), 0);
	assert_int_equal(vpmu_kvm_set_kick_signal(k, SIGRTMIN), 0);
	vpmu_kvm_destroy(k);
	vpmu_vm_destroy(vm);
	close(vmfd);
	close(kvm);
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(kick_signal_check),
		cmocka_unit_test(kick_interrupts_this_thread_and_repeats),
		cmocka_unit_test(kick_repeat_is_not_shorter_than_1ms),
		cmocka_unit_test(kick_keeps_the_process_s_handler),
		cmocka_unit_test(vpmu_kvm_set_kick_signal_EINVAL),
	};

	return (cmocka_run_group_tests(tests, NULL, NULL));
}
