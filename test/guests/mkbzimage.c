/*
 * mkbzimage -- a boot protocol guest ELF as a bzImage-shaped guest:
 *
 *   mkbzimage GUEST.elf OUT.bzImage
 *
 * The ELF becomes the "kernel" of a bzImage (bzimage.h) with
 * initrd_addr_max 0x0fffffff: an --initrd sits below 256 MiB, clear of
 * the vCPU stack at the top of a larger RAM.  vpmu-run and vpmustat boot
 * it by the Linux boot protocol (linux.c): the ELF's PT_LOADs at their
 * addresses, its entry in long mode with RSI at boot_params.  Exit status
 * 0, or 1 after a message.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "bzimage.h"

#define INITRD_MAX	0x0fffffffu

int
main(int argc, char **argv)
{
	uint8_t *k = NULL, *f = NULL;
	size_t klen = 0, cap = 0, n, len;
	FILE *in, *out;
	int ret = 1;

	if (argc != 3) {
		fprintf(stderr, "usage: mkbzimage GUEST.elf OUT.bzImage\n");
		return (1);
	}
	if ((in = fopen(argv[1], "rb")) == NULL) {
		fprintf(stderr, "mkbzimage: %s: %s\n", argv[1], strerror(errno));
		return (1);
	}
	do {
		if (cap - klen < 65536) {
			uint8_t *t = realloc(k, cap + 1048576);

			if (t == NULL)
				break;
			k = t;
			cap += 1048576;
		}
		n = fread(k + klen, 1, cap - klen, in);
		klen += n;
	} while (n > 0);
	if (ferror(in) || k == NULL || klen == 0 || (f = bz_image(k, klen, INITRD_MAX,
	    &len)) == NULL)
		fprintf(stderr, "mkbzimage: %s: cannot read or compress it\n", argv[1]);
	else if ((out = fopen(argv[2], "wb")) == NULL)
		fprintf(stderr, "mkbzimage: %s: %s\n", argv[2], strerror(errno));
	else {
		if (fwrite(f, 1, len, out) == len && fclose(out) == 0)
			ret = 0;
		else
			fprintf(stderr, "mkbzimage: %s: a write failed\n", argv[2]);
	}
	fclose(in);
	free(k);
	free(f);
	return (ret);
}
