/*
 * exit_code.c -- the exit port.  With one vCPU, main() returns 0x1234 and
 * vpmu-run must exit 0x34 (V & 0xff).  With N > 1, the last vCPU calls
 * vg_exit(0xab20 + its index) while vCPU 0 spins in main() and the others
 * return from main() (and spin in the runtime): vpmu-run must exit
 * 0x20 + N - 1, stopping vCPUs that are busy in guest mode.
 */
#include <vpmu-guest/runtime.h>

int
main(unsigned cpu)
{
	unsigned n = vg_ncpus();

	if (n == 1)
		return (0x1234);
	if (cpu == n - 1)
		vg_exit(0xab20 + cpu);
	if (cpu != 0)
		return (0);
	for (;;)
		vg_pause();
}
