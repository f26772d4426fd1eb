/*
 * rate.c -- a vpmu-run guest (the boot protocol, CPL 0) that retires
 * 2 * SPIN + a few instructions on vCPU 0 and exits 0: linux-demo.sh times
 * it against SPIN=0 to learn how fast this host runs a guest's kernel-mode
 * code, and so whether the Linux demo fits in `make check`.
 */
#include <vpmu-guest/runtime.h>

#ifndef SPIN
#define SPIN 0
#endif

int
main(unsigned cpu)
{
	unsigned long n = SPIN;

	if (cpu != 0)
		return (0);
	/* Two instructions an iteration: DEC, JNZ. */
	if (n != 0)
		__asm__ volatile("1: dec %0\n\tjnz 1b" : "+r"(n));
	return (0);
}
