/*
 * hot: nearly all of its instructions are in the function hot() (a
 * noinline xorshift loop of HOT_ITERS rounds, 9 instructions
 * each); it prints the final state so that the loop cannot be optimised
 * away and the output is exact: "hot: 0x...".
 */
#include <stdint.h>
#include <stdio.h>

#define HOT_ITERS 1000000UL

__attribute__((noinline)) uint64_t
hot(uint64_t x, unsigned long n)
{
	while (n-- != 0) {
		x ^= x << 13;
		x ^= x >> 7;
		x ^= x << 17;
	}
	return (x);
}

int
main(void)
{
	printf("hot: 0x%016llx\n", (unsigned long long)hot(88172645463325252ULL,
	    HOT_ITERS));
	return (0);
}
