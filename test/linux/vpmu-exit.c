/*
 * vpmu-exit STATUS: end the vpmu-run virtual machine with STATUS, by a
 * 32-bit OUT of STATUS to I/O port 0xf4 (vpmu-run(1), DEVICES).  Under
 * vpmu-run the OUT does not return; if it does, this is not vpmu-run and
 * the program fails (status 1).
 * vpmu-exit -m MARK: take mark MARK, a 32-bit OUT to port 0xf6 (vpmu-run
 * lists every counter's lifetime count at each mark in its report), and
 * exit 0.
 * With -n first, the number is checked and what would be written printed,
 * with no port I/O: a port write on some other machine may do anything.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/io.h>

#define VPMU_EXIT_PORT	0xf4
#define VPMU_MARK_PORT	0xf6

int
main(int argc, char **argv)
{
	unsigned long v;
	unsigned port = VPMU_EXIT_PORT;
	char *end;
	int i = 1, dry = 0;

	if (i < argc && strcmp(argv[i], "-n") == 0) {
		dry = 1;
		i++;
	}
	if (i < argc && strcmp(argv[i], "-m") == 0) {
		port = VPMU_MARK_PORT;
		i++;
	}
	if (i != argc - 1 || argv[i][0] < '0' || argv[i][0] > '9') {
		fprintf(stderr, "usage: vpmu-exit [-n] STATUS | vpmu-exit [-n] -m MARK\n");
		return (2);
	}
	v = strtoul(argv[i], &end, 0);
	if (*end != '\0' || v > 0xffffffffUL) {
		fprintf(stderr, "vpmu-exit: bad number '%s'\n", argv[i]);
		return (2);
	}
	if (dry) {
		printf("vpmu-exit: would write 0x%lx to port 0x%x\n", v, port);
		return (0);
	}
	/* A 32-bit OUT needs all four of its ports in the I/O bitmap. */
	if (ioperm(port, 4, 1) != 0) {
		fprintf(stderr, "vpmu-exit: ioperm(0x%x): ", port);
		perror(NULL);
		return (1);
	}
	fflush(NULL);
	outl((unsigned int)v, (unsigned short)port);
	if (port == VPMU_MARK_PORT)
		return (0);
	fprintf(stderr, "vpmu-exit: the write to port 0xf4 returned: not under vpmu-run?\n");
	return (1);
}
