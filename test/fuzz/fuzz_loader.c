/*
 * fuzz_loader.c -- libFuzzer target for vpmu-run's image loaders:
 * examples/vpmu-run/elf.c (the boot protocol's ELF64), multiboot.c
 * (Multiboot v1: ELF32, ELF64 or the address fields, a module, the
 * information area) and linux.c (bzImage: setup header, compressed
 * payload, the kernel ELF, boot_params, initrd, command line).
 * test/guests/elf_fuzz.c mutates good images at random; this is its
 * coverage-guided counterpart.
 *
 * Input: a selector byte, then the image.  Selector bits 1:0: 0 the boot
 * protocol (vr_elf_load), 1 Multiboot with a module, 2 a bzImage with an
 * initrd, 3 Multiboot without one; bits 4:2 the RAM size (a table per
 * loader, sizes that fit and sizes that do not); bit 5: the image goes
 * through vr_elf_read() from a memfd first, as vpmu-run reads it.
 *
 * Guest RAM is a malloc'd buffer of exactly the chosen size (ASan sees
 * any write past it), kept for the process and filled with a pattern.
 * Checked:
 *   - the loader returns 0, or -1 with a message (vpmu-run(1): a bad
 *     image is refused saying why);
 *   - a loaded image lies in RAM: lo < hi <= RAM, its entry in [lo, hi),
 *     the boot protocol's at or above 1 MiB, Multiboot's clear of its
 *     information area (a single segment; segments may lie on either
 *     side of it) with the module above it and inside RAM, Linux's
 *     kernel at or above 1 MiB with boot_params at 0x7000;
 *   - nothing is written outside what the loader reports: the image
 *     [lo, hi), and Multiboot's module and information area, Linux's
 *     boot_params, command line and initrd (where boot_params says); a
 *     refused image writes nothing (RAM up to 4 MiB is compared whole;
 *     the 64 MiB a Linux guest needs on success, else its boot areas);
 *   - the ELF loader's validation alone (RAM NULL) decides as the load.
 */
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include "vpmu-run.h"

#define CHECK(c)	do { if (!(c)) { fprintf(stderr, "%s:%d: %s\n", \
			    __FILE__, __LINE__, #c); abort(); } } while (0)

#define PAT		0xA5
#define SCAN_MAX	(4ull << 20)	/* RAM compared whole up to this size */
#define MIB		(1ull << 20)

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

/* RAM sizes by loader: 1 MiB is too small for any boot protocol image. */
static const uint64_t sizes_elf[8] = {
	MIB, MIB + 4096, 3 * MIB / 2, 2 * MIB, 2 * MIB, 2 * MIB + 4096, 3 * MIB, 4 * MIB,
};
static const uint64_t sizes_mb[8] = {
	0xFFFFF, MIB, MIB + 4096, 3 * MIB / 2, 2 * MIB, 2 * MIB, 3 * MIB, 4 * MIB,
};
static const uint64_t sizes_linux[8] = {
	64 * MIB, 64 * MIB, 64 * MIB, 64 * MIB, 64 * MIB, 64 * MIB, 64 * MIB, 64 * MIB - 4096,
};

static const uint8_t module[100] = "KEY=VALUE\n";
static const uint8_t initrd[1000] = "an initrd";

struct ram {
	uint64_t size;
	uint8_t *p;
};
static struct ram rams[16];

/* The RAM of size bytes, all PAT. */
static uint8_t *
ram_of(uint64_t size)
{
	unsigned i;

	for (i = 0; i < 16 && rams[i].p != NULL; i++)
		if (rams[i].size == size)
			return (rams[i].p);
	CHECK(i < 16);
	CHECK((rams[i].p = malloc(size)) != NULL);
	rams[i].size = size;
	memset(rams[i].p, PAT, size);
	return (rams[i].p);
}

/* A range the loader may write: [lo, hi). */
struct range {
	uint64_t lo, hi;
};

/* ram[a, b) all PAT, else abort naming the first byte that is not. */
static void
check_pat(const uint8_t *ram, uint64_t a, uint64_t b)
{
	static uint8_t pat[64 * 1024];
	uint64_t n;

	if (pat[0] != PAT)
		memset(pat, PAT, sizeof(pat));
	for (; a < b; a += n) {
		n = b - a < sizeof(pat) ? b - a : sizeof(pat);
		if (memcmp(ram + a, pat, n) == 0)
			continue;
		while (ram[a] == PAT)
			a++;
		fprintf(stderr, "RAM byte %#llx written outside what the loader "
		    "reports\n", (unsigned long long)a);
		CHECK(0);
	}
}

/*
 * Every byte of ram[from, to) outside the ranges still PAT; the ranges
 * filled with PAT again for the next input.
 */
static void
check_untouched(uint8_t *ram, uint64_t size, uint64_t from, uint64_t to,
    const struct range *r, unsigned n)
{
	uint64_t a = from, next;
	unsigned i;

	if (to > size)
		to = size;
	while (a < to) {
		/* the gap from a to the next range that starts after it */
		for (i = 0; i < n; i++)
			if (a >= r[i].lo && a < r[i].hi)
				break;
		if (i < n) {
			a = r[i].hi;
			continue;
		}
		next = to;
		for (i = 0; i < n; i++)
			if (r[i].lo > a && r[i].lo < next)
				next = r[i].lo;
		check_pat(ram, a, next);
		a = next;
	}
	for (i = 0; i < n; i++)
		if (r[i].lo < r[i].hi && r[i].hi <= size)
			memset(ram + r[i].lo, PAT, r[i].hi - r[i].lo);
}

/* The image through a memfd and vr_elf_read(), as vpmu-run reads a file. */
static uint8_t *
via_file(const uint8_t *img, size_t len, size_t *got)
{
	char path[64], err[256];
	uint8_t *buf;
	int fd;

	CHECK((fd = memfd_create("fuzz_loader", MFD_CLOEXEC)) >= 0);
	CHECK(len == 0 || write(fd, img, len) == (ssize_t)len);
	snprintf(path, sizeof(path), "/proc/self/fd/%d", fd);
	CHECK(vr_elf_read(path, &buf, got, err, sizeof(err)) == 0);
	close(fd);
	CHECK(*got == len && memcmp(buf, img, len) == 0);
	return (buf);
}

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct vr_mb_boot mb = { .cmdline = "a command line", .modname = "module" };
	struct vr_linux_boot lb = { .cmdline = "console=ttyS0" };
	struct vr_image img, check;
	struct range r[6];
	unsigned kind, nr = 0;
	uint64_t ramsize, modat = 0, rd;
	uint8_t *ram, *file = NULL, *copy;
	size_t len;
	char err[256];
	int ret, ret0;

	if (size < 1)
		return (0);
	kind = data[0] & 3;
	len = size - 1;
	if (data[0] & 0x20) {
		copy = via_file(data + 1, len, &len);
	} else {
		/* exactly the image's bytes: ASan sees a read past them */
		CHECK((copy = malloc(len > 0 ? len : 1)) != NULL);
		memcpy(copy, data + 1, len);
	}
	file = copy;
	ramsize = (kind == 0 ? sizes_elf : kind == 2 ? sizes_linux : sizes_mb)[(data[0] >> 2) & 7];
	ram = ram_of(ramsize);
	memset(&img, 0x5A, sizeof(img));
	err[0] = '\0';

	switch (kind) {
	case 0:
		ret0 = vr_elf_load(file, len, NULL, ramsize, &check, err, sizeof(err));
		ret = vr_elf_load(file, len, ram, ramsize, &img, err, sizeof(err));
		CHECK(ret == ret0);
		if (ret == 0) {
			CHECK(memcmp(&img, &check, sizeof(img)) == 0);
			CHECK(img.lo >= VR_LOAD_MIN && img.nload >= 1);
		}
		break;
	case 1:
	case 3:
		if (kind == 1) {
			mb.mod = module;
			mb.modlen = sizeof(module);
		}
		ret = vr_mb_load(file, len, ram, ramsize, &mb, &img, err, sizeof(err));
		if (ret == 0) {
			/*
			 * No segment overlaps the information area; segments
			 * on either side of it may (vpmu-run(1)).
			 */
			CHECK(img.multiboot && img.mb_info == VR_MB_INFO_ADDR);
			CHECK(img.nload > 1 || img.hi <= VR_MB_INFO_ADDR ||
			    img.lo >= VR_MB_INFO_ADDR + VR_MB_INFO_SIZE);
			CHECK(vr_get32(ram + VR_MB_INFO_ADDR) == 0x24d);
			r[nr++] = (struct range){ VR_MB_INFO_ADDR,
			    VR_MB_INFO_ADDR + VR_MB_INFO_SIZE };
			if (kind == 1) {
				modat = (img.hi + 4095) & ~4095ull;
				CHECK(modat + sizeof(module) <= ramsize);
				CHECK(memcmp(ram + modat, module, sizeof(module)) == 0);
				r[nr++] = (struct range){ modat, modat + sizeof(module) };
			}
		}
		break;
	default:
		lb.initrd = initrd;
		lb.initrd_len = sizeof(initrd);
		ret = vr_linux_load(file, len, ram, ramsize, &lb, &img, err, sizeof(err));
		if (ret == 0) {
			CHECK(img.lo >= VR_LOAD_MIN && img.linux_bp == 0x7000);
			rd = vr_get32(ram + 0x7000 + 0x218);
			CHECK(rd >= img.hi && rd + sizeof(initrd) <= ramsize);
			CHECK(memcmp(ram + rd, initrd, sizeof(initrd)) == 0);
			r[nr++] = (struct range){ 0x7000, 0x8000 };
			r[nr++] = (struct range){ 0x20000, 0x20000 + strlen(lb.cmdline) + 1 };
			r[nr++] = (struct range){ rd, rd + sizeof(initrd) };
		}
		break;
	}
	CHECK(ret == 0 || ret == -1);
	if (ret != 0) {
		CHECK(err[0] != '\0' && memchr(err, '\0', sizeof(err)) != NULL);
		nr = 0;
	} else {
		CHECK(img.lo < img.hi && img.hi <= ramsize);
		CHECK(img.entry >= img.lo && img.entry < img.hi);
		CHECK(img.nload >= 1);
		r[nr++] = (struct range){ img.lo, img.hi };
	}
	if (ramsize <= SCAN_MAX || ret == 0) {
		check_untouched(ram, ramsize, 0, ramsize, r, nr);
	} else {
		/* a refused kernel: its boot areas and the usual load addresses */
		check_untouched(ram, ramsize, 0, 0x100000, r, nr);
		check_untouched(ram, ramsize, 0x1000000, 0x1010000, r, nr);
		check_untouched(ram, ramsize, ramsize - 0x10000, ramsize, r, nr);
	}
	free(copy);
	return (0);
}
