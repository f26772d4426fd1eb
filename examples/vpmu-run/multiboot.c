/*
 * multiboot.c -- Multiboot v1 images: the header in the file's first 8 KiB,
 * the image loaded by the header's address fields (flags bit 16) or else
 * by its ELF program headers (ELF32 i386 or ELF64 x86-64, at p_paddr), an
 * optional module (--initrd) page-aligned above the image, and the
 * information structure the guest finds in EBX.  As in elf.c, every field
 * that decides a memory access is checked first, with overflow-safe
 * arithmetic, and nothing is written to RAM unless everything fits.  No
 * KVM here: test/guests/multiboot_test.c and the fuzzer link this file.
 *
 * The information area, VR_MB_INFO_SIZE bytes at VR_MB_INFO_ADDR, in order:
 * the structure (128 bytes), the memory map, the module list, then the
 * strings: the boot loader's name, the module's string, the command line.
 */
#include <string.h>

#include "vpmu-run.h"

/* Header flags (bits 0..15 required: a loader refuses those it lacks). */
#define HF_PAGE_ALIGN	(1u << 0)	/* modules page-aligned: always so here */
#define HF_MEMORY	(1u << 1)	/* mem_* fields: always given */
#define HF_VIDEO	(1u << 2)	/* a video mode: not supported */
#define HF_ADDRESS	(1u << 16)	/* header_addr .. entry_addr are valid */
#define HF_REQUIRED	0xffffu
#define HF_SUPPORTED	(HF_PAGE_ALIGN | HF_MEMORY)

/* Information flags. */
#define IF_MEM		(1u << 0)
#define IF_CMDLINE	(1u << 2)
#define IF_MODS		(1u << 3)
#define IF_MMAP		(1u << 6)
#define IF_LOADER_NAME	(1u << 9)

/* Offsets in the information structure. */
#define MI_FLAGS	0
#define MI_MEM_LOWER	4
#define MI_MEM_UPPER	8
#define MI_CMDLINE	16
#define MI_MODS_COUNT	20
#define MI_MODS_ADDR	24
#define MI_MMAP_LENGTH	44
#define MI_MMAP_ADDR	48
#define MI_LOADER_NAME	64
#define MI_SIZE		128		/* 116 bytes in the spec, rounded up */

#define MMAP_ENTRY	24		/* size field (20) + base, length, type */
#define MMAP_MAX	3
#define MOD_ENTRY	16		/* mod_start, mod_end, string, reserved */
#define MEM_LOWER_KIB	640u
#define LOW_USABLE_END	0x9fc00ull	/* below: usable; to 1 MiB: reserved */
#define HIGH_START	0x100000ull
#define PAGE		4096ull
#define LOADER_NAME	"vpmu-run"

/* [a, a + an) and [b, b + bn) share a byte (no sum overflows: all below 2^33). */
static bool
overlap(uint64_t a, uint64_t an, uint64_t b, uint64_t bn)
{
	return (an != 0 && bn != 0 && a < b + bn && b < a + an);
}

/* A 4-byte aligned header whose magic + flags + checksum is 0, at or after from. */
static bool
header_at(const uint8_t *file, size_t len, size_t off)
{
	return (off <= len && len - off >= 12 && vr_get32(file + off) == VR_MB_MAGIC &&
	    (uint32_t)(vr_get32(file + off) + vr_get32(file + off + 4) +
	    vr_get32(file + off + 8)) == 0);
}

int
vr_mb_find(const uint8_t *file, size_t len, size_t *off, char *err, size_t errlen)
{
	size_t o, bad = SIZE_MAX;

	for (o = 0; o < VR_MB_SEARCH && o < len && len - o >= 12; o += 4) {
		if (header_at(file, len, o)) {
			*off = o;
			return (1);
		}
		if (bad == SIZE_MAX && vr_get32(file + o) == VR_MB_MAGIC)
			bad = o;
	}
	if (bad != SIZE_MAX) {
		vr_fail(err, errlen, "Multiboot magic 0x1BADB002 at offset %#zx, but "
		    "magic + flags + checksum is %#x, not 0", bad,
		    (unsigned)(uint32_t)(vr_get32(file + bad) + vr_get32(file + bad + 4) +
		    vr_get32(file + bad + 8)));
		return (0);
	}
	/* Only for the message: a header too far in (looked for in the first MiB). */
	for (; o < ((size_t)1 << 20) && o < len && len - o >= 12; o += 4)
		if (header_at(file, len, o)) {
			vr_fail(err, errlen, "the Multiboot header at offset %#zx is past "
			    "the first %u bytes, where a loader looks for it", o,
			    VR_MB_SEARCH);
			return (0);
		}
	vr_fail(err, errlen, "no Multiboot header (magic 0x1BADB002, 4-byte aligned, "
	    "with its checksum) in the first %u bytes", VR_MB_SEARCH);
	return (0);
}

/* Where the address fields (flags bit 16) put the image; no RAM written. */
struct aout {
	uint64_t fileoff, filelen;	/* the bytes copied ... */
	uint64_t addr, end, bss_end;	/* ... to addr..end; end..bss_end zeroed */
};

static int
check_aout(const uint8_t *file, size_t len, size_t off, uint64_t ram_size,
    struct aout *a, struct vr_image *img, char *err, size_t errlen)
{
	uint32_t header_addr, load_addr, load_end, bss_end, entry;
	uint64_t skip;

	if (len - off < 32)
		return (vr_fail(err, errlen, "truncated: flags bit 16 is set but the "
		    "Multiboot header's address fields end past the file's %zu bytes", len));
	header_addr = vr_get32(file + off + 12);
	load_addr = vr_get32(file + off + 16);
	load_end = vr_get32(file + off + 20);
	bss_end = vr_get32(file + off + 24);
	entry = vr_get32(file + off + 28);
	if (header_addr < load_addr)
		return (vr_fail(err, errlen, "Multiboot header_addr %#x is below load_addr "
		    "%#x", header_addr, load_addr));
	skip = (uint64_t)header_addr - load_addr;
	if (skip > off)
		return (vr_fail(err, errlen, "Multiboot header_addr %#x - load_addr %#x "
		    "puts the load before the file's start (the header is at file "
		    "offset %#zx)", header_addr, load_addr, off));
	a->fileoff = off - skip;
	a->addr = load_addr;
	if (load_end == 0) {
		a->filelen = len - a->fileoff;
	} else {
		if (load_end < load_addr)
			return (vr_fail(err, errlen, "Multiboot load_end_addr %#x is below "
			    "load_addr %#x", load_end, load_addr));
		a->filelen = (uint64_t)load_end - load_addr;
		if (a->filelen > len - a->fileoff)
			return (vr_fail(err, errlen, "truncated: Multiboot load_addr %#x.."
			    "load_end_addr %#x needs %#llx bytes from file offset "
			    "%#llx, past the file's %zu bytes", load_addr, load_end,
			    (unsigned long long)a->filelen,
			    (unsigned long long)a->fileoff, len));
	}
	a->end = a->addr + a->filelen;
	if (bss_end == 0) {
		a->bss_end = a->end;
	} else {
		if (bss_end < a->end)
			return (vr_fail(err, errlen, "Multiboot bss_end_addr %#x is below "
			    "the end of the loaded bytes, %#llx", bss_end,
			    (unsigned long long)a->end));
		a->bss_end = bss_end;
	}
	if (a->bss_end == a->addr)
		return (vr_fail(err, errlen, "the Multiboot address fields load nothing"));
	if (a->bss_end > ram_size)
		return (vr_fail(err, errlen, "the Multiboot image %#llx..%#llx ends past "
		    "guest RAM (%llu MiB; see --mem)", (unsigned long long)a->addr,
		    (unsigned long long)a->bss_end,
		    (unsigned long long)(ram_size >> 20)));
	if (overlap(a->addr, a->bss_end - a->addr, VR_MB_INFO_ADDR, VR_MB_INFO_SIZE))
		return (vr_fail(err, errlen, "the Multiboot image %#llx..%#llx overlaps "
		    "the Multiboot information area at %#x..%#x",
		    (unsigned long long)a->addr, (unsigned long long)a->bss_end,
		    VR_MB_INFO_ADDR, VR_MB_INFO_ADDR + VR_MB_INFO_SIZE));
	if (entry < a->addr || entry >= a->bss_end)
		return (vr_fail(err, errlen, "Multiboot entry_addr %#x is outside the "
		    "image %#llx..%#llx", entry, (unsigned long long)a->addr,
		    (unsigned long long)a->bss_end));
	img->entry = entry;
	img->lo = a->addr;
	img->hi = a->bss_end;
	img->nload = 1;
	return (0);
}

/* The memory map: usable 0..0x9fc00 and 1 MiB..RAM's end, reserved between. */
static unsigned
mmap_write(uint8_t *ram, uint64_t at, uint64_t ram_size)
{
	const uint64_t r[MMAP_MAX][3] = {
		{ 0, LOW_USABLE_END, 1 },
		{ LOW_USABLE_END, HIGH_START - LOW_USABLE_END, 2 },
		{ HIGH_START, ram_size > HIGH_START ? ram_size - HIGH_START : 0, 1 },
	};
	unsigned i, n = 0;

	for (i = 0; i < MMAP_MAX; i++) {
		if (r[i][1] == 0)
			continue;
		vr_put32(ram + at + n * MMAP_ENTRY, MMAP_ENTRY - 4);
		vr_put64(ram + at + n * MMAP_ENTRY + 4, r[i][0]);
		vr_put64(ram + at + n * MMAP_ENTRY + 12, r[i][1]);
		vr_put32(ram + at + n * MMAP_ENTRY + 20, (uint32_t)r[i][2]);
		n++;
	}
	return (n);
}

int
vr_mb_load(const uint8_t *file, size_t len, uint8_t *ram, uint64_t ram_size,
    const struct vr_mb_boot *b, struct vr_image *img, char *err, size_t errlen)
{
	static const struct vr_elf_rules rules = { .elf32 = true,
	    .avoid_lo = VR_MB_INFO_ADDR, .avoid_hi = VR_MB_INFO_ADDR + VR_MB_INFO_SIZE,
	    .avoid_what = "the Multiboot information area" };
	struct aout a = { 0 };
	uint64_t mod_start = 0, at, strs, need;
	size_t off, cmdlen, namelen;
	uint32_t flags, req;
	unsigned nmmap, bit;
	char why[192];

	memset(img, 0, sizeof(*img));
	if (!vr_mb_find(file, len, &off, err, errlen))
		return (-1);
	flags = vr_get32(file + off + 4);
	req = flags & HF_REQUIRED & ~HF_SUPPORTED;
	if (req & HF_VIDEO)
		return (vr_fail(err, errlen, "Multiboot flags %#x: bit 2 (a video mode) "
		    "is required, and vpmu-run has no display", flags));
	if (req != 0) {
		for (bit = 0; !(req & (1u << bit)); bit++)
			;
		return (vr_fail(err, errlen, "Multiboot flags %#x: bit %u is required "
		    "and unknown to vpmu-run", flags, bit));
	}
	if (ram_size < HIGH_START)
		return (vr_fail(err, errlen, "a Multiboot image takes more than 1 MiB of RAM "
		    "(--mem 2M to 3G)"));

	/* The image, checked only. */
	if (flags & HF_ADDRESS) {
		if (check_aout(file, len, off, ram_size, &a, img, err, errlen) < 0)
			return (-1);
	} else if (vr_elf_load_rules(file, len, NULL, ram_size, &rules, img, why,
	    sizeof(why)) < 0) {
		return (vr_fail(err, errlen, "Multiboot flags bit 16 is clear, so the "
		    "image must be ELF: %s", why));
	}

	/* The module, page-aligned above the image. */
	if (b->mod != NULL) {
		mod_start = (img->hi + PAGE - 1) & ~(PAGE - 1);
		if (mod_start > ram_size || b->modlen > ram_size - mod_start)
			return (vr_fail(err, errlen, "the module (%zu bytes at %#llx, above "
			    "the image) ends past guest RAM (%llu MiB; see --mem)",
			    b->modlen, (unsigned long long)mod_start,
			    (unsigned long long)(ram_size >> 20)));
		if (overlap(mod_start, b->modlen, VR_MB_INFO_ADDR, VR_MB_INFO_SIZE))
			return (vr_fail(err, errlen, "the module at %#llx..%#llx overlaps "
			    "the Multiboot information area at %#x..%#x",
			    (unsigned long long)mod_start,
			    (unsigned long long)(mod_start + b->modlen),
			    VR_MB_INFO_ADDR, VR_MB_INFO_ADDR + VR_MB_INFO_SIZE));
	}

	/* The information area's strings fit. */
	cmdlen = strlen(b->cmdline);
	namelen = b->mod != NULL ? strlen(b->modname) : 0;
	strs = MI_SIZE + MMAP_MAX * MMAP_ENTRY + MOD_ENTRY;
	need = strs + sizeof(LOADER_NAME) + (uint64_t)namelen + 1 + (uint64_t)cmdlen + 1;
	if (need > VR_MB_INFO_SIZE)
		return (vr_fail(err, errlen, "the command line (%zu bytes) and the "
		    "module's name (%zu bytes) do not fit the %u-byte Multiboot "
		    "information area", cmdlen, namelen, VR_MB_INFO_SIZE));
	if (ram_size < VR_MB_INFO_ADDR + VR_MB_INFO_SIZE)
		return (vr_fail(err, errlen, "guest RAM ends before the Multiboot "
		    "information area"));

	/* Everything fits: write. */
	if (flags & HF_ADDRESS) {
		memcpy(ram + a.addr, file + a.fileoff, a.filelen);
		memset(ram + a.end, 0, a.bss_end - a.end);
	} else if (vr_elf_load_rules(file, len, ram, ram_size, &rules, img, why,
	    sizeof(why)) < 0) {
		return (vr_fail(err, errlen, "%s", why));	/* checked above: never */
	}
	if (b->mod != NULL)
		memcpy(ram + mod_start, b->mod, b->modlen);

	at = VR_MB_INFO_ADDR;
	memset(ram + at, 0, VR_MB_INFO_SIZE);
	vr_put32(ram + at + MI_MEM_LOWER, MEM_LOWER_KIB);
	vr_put32(ram + at + MI_MEM_UPPER, (uint32_t)((ram_size - HIGH_START) >> 10));
	nmmap = mmap_write(ram, at + MI_SIZE, ram_size);
	vr_put32(ram + at + MI_MMAP_LENGTH, nmmap * MMAP_ENTRY);
	vr_put32(ram + at + MI_MMAP_ADDR, (uint32_t)(at + MI_SIZE));
	/* strings */
	memcpy(ram + at + strs, LOADER_NAME, sizeof(LOADER_NAME));
	vr_put32(ram + at + MI_LOADER_NAME, (uint32_t)(at + strs));
	strs += sizeof(LOADER_NAME);
	if (b->mod != NULL) {
		uint64_t mod = at + MI_SIZE + MMAP_MAX * MMAP_ENTRY;

		memcpy(ram + at + strs, b->modname, namelen + 1);
		vr_put32(ram + mod, (uint32_t)mod_start);
		vr_put32(ram + mod + 4, (uint32_t)(mod_start + b->modlen));
		vr_put32(ram + mod + 8, (uint32_t)(at + strs));
		vr_put32(ram + at + MI_MODS_ADDR, (uint32_t)mod);
		vr_put32(ram + at + MI_MODS_COUNT, 1);
		strs += namelen + 1;
	}
	memcpy(ram + at + strs, b->cmdline, cmdlen + 1);
	vr_put32(ram + at + MI_CMDLINE, (uint32_t)(at + strs));
	vr_put32(ram + at + MI_FLAGS, IF_MEM | IF_CMDLINE | IF_MODS | IF_MMAP | IF_LOADER_NAME);
	img->multiboot = true;
	img->mb_info = VR_MB_INFO_ADDR;
	return (0);
}
