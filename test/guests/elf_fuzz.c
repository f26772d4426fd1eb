/*
 * elf_fuzz -- vpmu-run's image loader (examples/vpmu-run/elf.c) against
 * deterministic mutations of a good guest ELF: flipped bytes and chosen
 * values in the ELF and program headers, and truncations.  Every input must
 * be rejected with a message or loaded inside RAM; under AddressSanitizer
 * (the clang sanitizer build runs this test too) any read past the file or
 * write past RAM is caught.
 *
 *   elf_fuzz GOOD.elf [ITERATIONS [multiboot]]
 *
 * With "multiboot", GOOD is a Multiboot v1 image and the loader is
 * multiboot.c's (with a module and a command line): a loaded image must
 * also stay clear of the information area, its module inside RAM.
 */
#include <stdbool.h>
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

static const uint8_t module[100] = "KEY=VALUE\n";
static const struct vr_mb_boot mb = { .cmdline = "a command line", .mod = module,
    .modlen = sizeof(module), .modname = "module" };
static bool multiboot;

static int
load(const uint8_t *f, size_t len, uint8_t *ram, struct vr_image *img, char *err,
    size_t errlen)
{
	if (multiboot)
		return (vr_mb_load(f, len, ram, RAM_SIZE, &mb, img, err, errlen));
	return (vr_elf_load(f, len, ram, RAM_SIZE, img, err, errlen));
}

/*
 * Most mutations of a Multiboot header break its checksum: mostly, make
 * it right again for the first magic, so the fields behind it are explored.
 */
static void
fix_checksum(uint8_t *buf, size_t len)
{
	uint32_t magic, flags, sum;
	size_t o;

	for (o = 0; o < VR_MB_SEARCH && o + 12 <= len; o += 4) {
		memcpy(&magic, buf + o, 4);
		if (magic != VR_MB_MAGIC)
			continue;
		memcpy(&flags, buf + o + 4, 4);
		sum = 0u - (magic + flags);
		memcpy(buf + o + 8, &sum, 4);
		return;
	}
}

/* Where a loaded image may be. */
static bool
inside_rules(const struct vr_image *img)
{
	if (img->lo >= img->hi || img->hi > RAM_SIZE || img->entry < img->lo ||
	    img->entry >= img->hi)
		return (false);
	if (!multiboot)
		return (img->lo >= VR_LOAD_MIN);
	return (img->multiboot && (img->hi <= VR_MB_INFO_ADDR ||
	    img->lo >= VR_MB_INFO_ADDR + VR_MB_INFO_SIZE) &&
	    ((img->hi + 4095) & ~4095ull) + sizeof(module) <= RAM_SIZE);
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
		fprintf(stderr, "usage: elf_fuzz GOOD.elf [ITERATIONS [multiboot]]\n");
		return (2);
	}
	multiboot = argc > 3 && strcmp(argv[3], "multiboot") == 0;
	if (vr_elf_read(argv[1], &good, &glen, err, sizeof(err)) < 0) {
		fprintf(stderr, "elf_fuzz: %s\n", err);
		return (1);
	}
	if ((ram = malloc(RAM_SIZE)) == NULL)
		return (1);
	/* The unmutated file loads. */
	if (load(good, glen, ram, &img, err, sizeof(err)) < 0) {
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
		if (multiboot && rnd() % 4 != 0)
			fix_checksum(buf, len);
		err[0] = '\0';
		if (load(buf, len, ram, &img, err, sizeof(err)) == 0) {
			if (!inside_rules(&img)) {
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
