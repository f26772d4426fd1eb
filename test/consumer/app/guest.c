/*
 * guest.c -- a guest built by the consumer project with the installed
 * vpmu_add_guest(): the per-guest CFLAGS reach its compile, and it finds
 * the paravirtual channel through the installed guest library.
 */
#include <vpmu-guest/runtime.h>
#include <vpmu-guest/pv.h>

#ifndef CONSUMER_CFLAG
#error "vpmu_add_guest()'s CFLAGS did not reach the compiler"
#endif

int main(unsigned cpu);

int
main(unsigned cpu)
{
	(void)cpu;
	vg_printf("consumer guest: CFLAGS %d, channel %s\n", CONSUMER_CFLAG,
	    vpmu_pv_probe() ? "yes" : "no");
	return (0);
}
