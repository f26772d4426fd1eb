/*
 * loop N: N iterations of a two-instruction loop ("dec; jnz": 2 instructions
 * and 1 branch per iteration), then exit 0 without output.  Two runs with
 * N1 and N2 of the same number of decimal digits differ by exactly
 * 2 * (N2 - N1) instructions and N2 - N1 branches, in user mode; the
 * linux demo's user checks (test/linux/init) rely on that.
 */
#include <stdio.h>
#include <stdlib.h>

int
main(int argc, char **argv)
{
	unsigned long n;
	char *end;

	if (argc != 2 || argv[1][0] < '1' || argv[1][0] > '9') {
		fprintf(stderr, "usage: loop N (N >= 1, decimal)\n");
		return (2);
	}
	n = strtoul(argv[1], &end, 10);
	if (*end != '\0') {
		fprintf(stderr, "loop: bad count '%s'\n", argv[1]);
		return (2);
	}
	__asm__ volatile("1:\n\tdec %0\n\tjnz 1b" : "+r"(n) : : "cc");
	return (n == 0 ? 0 : 1);
}
