/*
 * hot.c -- a guest with one hot function, for vpmustat(1): hot() retires
 * 90 % of the run's instructions, cold() 10 %.
 *
 *   vpmustat -S instructions -n 1000 build/examples/guests/hot.elf
 *
 * Both functions run the same two-instruction loop (DEC of a stack word,
 * JNZ) in assembly, so their shares are set by the iteration counts alone
 * (the stack word also gives each function the frame gcc would not build
 * for a leaf that uses no stack, even with -fno-omit-frame-pointer): hot() runs
 * HOT_ITERS per call, cold() COLD_ITERS = HOT_ITERS / 9.  work() calls each
 * once per round, so the call graph is _start -> vg__start -> main -> work
 * -> hot | cold.  It is built with frame pointers
 * (examples/guests/CMakeLists.txt), which the sampler walks for call chains.
 *
 * With the exact source every instruction is counted, and a sample lands
 * every RATE instructions; hot() then gets 90 % of the samples, less the
 * small part the runtime's start-up and the final message take.  Only vCPU
 * 0 works; others (--vcpus) idle in PAUSE like every protocol guest.
 */
#include <vpmu-guest/runtime.h>

#ifndef ROUNDS
#define ROUNDS		50
#endif
#define COLD_ITERS	1000ul
#define HOT_ITERS	(9 * COLD_ITERS)

void hot(unsigned long n);
void cold(unsigned long n);
void work(unsigned rounds);

/* n iterations of DEC + JNZ: 2n instructions, in a frame of its own. */
__attribute__((noinline)) void
hot(unsigned long n)
{
	volatile unsigned long left = n;

	__asm__ volatile("1: decq %0\n\tjnz 1b" : "+m"(left) : : "cc");
}

__attribute__((noinline)) void
cold(unsigned long n)
{
	volatile unsigned long left = n;

	__asm__ volatile("1: decq %0\n\tjnz 1b" : "+m"(left) : : "cc");
}

__attribute__((noinline)) void
work(unsigned rounds)
{
	unsigned i;

	for (i = 0; i < rounds; i++) {
		hot(HOT_ITERS);
		cold(COLD_ITERS);
	}
}

int
main(unsigned cpu)
{
	if (cpu != 0)
		return (0);
	work(ROUNDS);
	vg_puts("hot: done\n");
	return (0);
}
