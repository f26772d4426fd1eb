/*
 * vpmu-exit STATUS: end the vpmu-run virtual machine with STATUS, by a
 * 32-bit OUT of STATUS to I/O port 0xf4 (vpmu-run(1), "Exit").  Under
 * vpmu-run the OUT does not return; if it does, this is not vpmu-run and
 * the program fails (status 1).
 * vpmu-exit -n STATUS checks STATUS and prints what it would write, with
 * no port I/O: a port write on some other machine may do anything.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/io.h>

#define VPMU_EXIT_PORT 0xf4

int
main(int argc, char **argv)
{
	unsigned long v;
	char *end;
	int dry;

	dry = argc == 3 && strcmp(argv[1], "-n") == 0;
	if (argc != 2 + dry || argv[1 + dry][0] < '0' || argv[1 + dry][0] > '9') {
		fprintf(stderr, "usage: vpmu-exit [-n] STATUS\n");
		return (2);
	}
	v = strtoul(argv[1 + dry], &end, 0);
	if (*end != '\0' || v > 0xffffffffUL) {
		fprintf(stderr, "vpmu-exit: bad status '%s'\n", argv[1 + dry]);
		return (2);
	}
	if (dry) {
		printf("vpmu-exit: would write 0x%lx to port 0x%x\n", v,
		    VPMU_EXIT_PORT);
		return (0);
	}
	if (ioperm(VPMU_EXIT_PORT, 1, 1) != 0) {
		perror("vpmu-exit: ioperm(0xf4)");
		return (1);
	}
	fflush(NULL);
	outl((unsigned int)v, VPMU_EXIT_PORT);
	fprintf(stderr, "vpmu-exit: the write to port 0xf4 returned: not under vpmu-run?\n");
	return (1);
}
