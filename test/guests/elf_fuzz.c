/*
 * elf_fuzz -- vpmu-run's image loader (examples/vpmu-run/elf.c) against
 * deterministic mutations of a good guest ELF: flipped bytes and chosen
 * values in the ELF and program headers, and truncations.  Every input must
 * be rejected with a message or loaded inside RAM; under AddressSanitizer
 * (the clang sanitizer build runs this test too) any read past the file or
 * write past RAM is caught.
 *
 *   elf_fuzz GOOD.elf [ITERATIONS]
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "vpmu-run.h"

#define RAM_SIZE	(4u << 20)	/* small, so sizes often do not fit */

static uint64_t seed = 0x9e3779b97f4a7c15ull;

static uint64_t
rnd(void)
{
	/* xorshift64*: deterministic, so a failure reproduces */
	seed ^= seed >> 12;
	seed ^= seed << 25;
	seed ^= seed >> 27;
	return (seed * 0x2545f4914f6cdd1dull);
}

static const uint64_t interesting[] = {
	0, 1, 2, 0x7f, 0x80, 0xff, 0x100, 0xffff, 0x10000, 0xfffff, 0x100000,
	0x100001, RAM_SIZE - 1, RAM_SIZE, RAM_SIZE + 1, 0x7fffffff, 0x80000000,
	0xffffffff, 0x100000000ull, 0x7fffffffffffffffull, 0x8000000000000000ull,
	0xfffffffffffff000ull, 0xffffffffffffffc0ull, 0xffffffffffffffffull,
};

static void
mutate(uint8_t *buf, size_t *len, size_t full)
{
	size_t span = full < 512 ? full : 512, off;
	uint64_t v;
	unsigned n = 1 + (unsigned)(rnd() % 4);

	while (n-- > 0) {
		switch (rnd() % 4) {
		case 0:		/* flip a byte in the headers */
			buf[rnd() % span] ^= (uint8_t)(1u << (rnd() % 8));
			break;
		case 1:		/* an interesting 8-byte value at an aligned offset */
			off = (rnd() % (span / 8)) * 8;
			v = interesting[rnd() % (sizeof(interesting) / sizeof(interesting[0]))];
			memcpy(buf + off, &v, sizeof(v));
			break;
		case 2:		/* an interesting 2-byte value (e_phnum, e_phentsize...) */
			off = (rnd() % (span / 2)) * 2;
			v = interesting[rnd() % (sizeof(interesting) / sizeof(interesting[0]))];
			memcpy(buf + off, &v, 2);
			break;
		case 3:		/* truncate */
			*len = (size_t)(rnd() % (*len + 1));
			break;
		}
	}
}

int
main(int argc, char **argv)
{
	struct vr_image img;
	uint8_t *good, *buf, *ram;
	size_t glen, len;
	unsigned long i, iters = argc > 2 ? strtoul(argv[2], NULL, 0) : 20000;
	unsigned long ok = 0, bad = 0;
	char err[256];

	if (argc < 2) {
		fprintf(stderr, "usage: elf_fuzz GOOD.elf [ITERATIONS]\n");
		return (2);
	}
	if (vr_elf_read(argv[1], &good, &glen, err, sizeof(err)) < 0) {
		fprintf(stderr, "elf_fuzz: %s\n", err);
		return (1);
	}
	if ((ram = malloc(RAM_SIZE)) == NULL)
		return (1);
	/* The unmutated file loads. */
	if (vr_elf_load(good, glen, ram, RAM_SIZE, &img, err, sizeof(err)) < 0) {
		fprintf(stderr, "elf_fuzz: the good image fails: %s\n", err);
		return (1);
	}
	for (i = 0; i < iters; i++) {
		len = glen;
		/* A heap copy of exactly len bytes: ASan sees any read past it. */
		mutate(good, &len, glen);
		if ((buf = malloc(len > 0 ? len : 1)) == NULL)
			return (1);
		memcpy(buf, good, len);
		err[0] = '\0';
		if (vr_elf_load(buf, len, ram, RAM_SIZE, &img, err, sizeof(err)) == 0) {
			if (img.lo < VR_LOAD_MIN || img.hi > RAM_SIZE || img.lo >= img.hi ||
			    img.entry < img.lo || img.entry >= img.hi) {
				fprintf(stderr, "elf_fuzz: iteration %lu loaded outside "
				    "the rules: %#llx..%#llx entry %#llx\n", i,
				    (unsigned long long)img.lo, (unsigned long long)img.hi,
				    (unsigned long long)img.entry);
				return (1);
			}
			ok++;
		} else {
			if (err[0] == '\0') {
				fprintf(stderr, "elf_fuzz: iteration %lu: rejected "
				    "without a message\n", i);
				return (1);
			}
			bad++;
		}
		free(buf);
		/* Start over from the good file now and then. */
		if (rnd() % 4 == 0) {
			free(good);
			if (vr_elf_read(argv[1], &good, &glen, err, sizeof(err)) < 0)
				return (1);
		}
	}
	printf("elf_fuzz: %lu inputs: %lu loaded, %lu rejected with a message\n",
	    iters, ok, bad);
	free(good);
	free(ram);
	return (0);
}
