/*
 * linux.c -- a Linux kernel from its bzImage, with no KVM (testable alone):
 * the setup header read, the compressed kernel taken out of the image and
 * decompressed here (a guest whose kernel code is emulated would spend
 * minutes on it), the ELF inside loaded at its physical addresses, and
 * what the kernel's 64-bit entry (startup_64) expects beside it: the
 * boot_params "zero page" with the setup header, an e820 map, the command
 * line and the initrd; and an MP table describing the vCPUs, the I/O
 * APIC and the ISA interrupts, for one vCPU and for several.
 *
 * Facts used (Linux Documentation/arch/x86/boot.rst and zero-page.rst,
 * the MultiProcessor Specification 1.4): the header starts at 0x1f1 with
 * setup_sects, "HdrS" at 0x202, the protocol version at 0x206; the
 * protected-mode part starts at (setup_sects + 1) * 512 (setup_sects 0
 * meaning 4); payload_offset (0x248) and payload_length (0x24c) locate the
 * compressed kernel in it (protocol 2.08), whose last four bytes are the
 * decompressed size, little-endian (appended to an xz or zstd stream,
 * gzip's own trailer).
 *
 * Guest-physical layout (below 1 MiB; the kernel itself at its own
 * physical address, 16 MiB for a stock x86-64 kernel):
 *   0x1000..0x4fff  boot.c's GDT, TSS and identity page tables
 *   0x7000          boot_params (4 KiB)
 *   0x20000         the command line (up to the header's cmdline_size)
 *   0x9fc00..       reserved (where an EBDA would be)
 *   0xf0000         the MP floating pointer and configuration table
 *   top of RAM      the initrd, page-aligned, below initrd_addr_max
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#ifdef VR_HAVE_LZMA
#include <lzma.h>
#endif
#ifdef VR_HAVE_ZLIB
#include <zlib.h>
#endif
#ifdef VR_HAVE_ZSTD
#include <zstd.h>
#endif

#include "vpmu-run.h"

/* Setup header offsets in the image and in boot_params alike. */
#define H_SETUP_SECTS	0x1f1
#define H_BOOT_FLAG	0x1fe	/* 0xAA55 */
#define H_JUMP		0x200	/* EB nn: the header ends at 0x202 + nn */
#define H_HEADER	0x202	/* "HdrS" */
#define H_VERSION	0x206
#define H_TYPE_OF_LOADER 0x210
#define H_LOADFLAGS	0x211
#define H_RAMDISK_IMAGE	0x218
#define H_RAMDISK_SIZE	0x21c
#define H_HEAP_END_PTR	0x224
#define H_CMD_LINE_PTR	0x228
#define H_INITRD_MAX	0x22c
#define H_CMDLINE_SIZE	0x238
#define H_PAYLOAD_OFF	0x248
#define H_PAYLOAD_LEN	0x24c
#define H_INIT_SIZE	0x260
#define H_END_MIN	0x264	/* protocol 2.10's header, the least read here */
/* boot_params beyond the header */
#define BP_EXT_RAMDISK_IMAGE 0x0c0
#define BP_EXT_RAMDISK_SIZE 0x0c4
#define BP_E820_ENTRIES	0x1e8
#define BP_E820_TABLE	0x2d0
#define BP_E820_MAX	128
#define BP_SIZE		0x1000

#define LOADED_HIGH	0x01	/* loadflags: the kernel at 1 MiB or above */
#define CAN_USE_HEAP	0x80
#define LOADER_UNDEFINED 0xff	/* type_of_loader: a boot loader with no ID */

#define BP_ADDR		0x7000ull
#define CMDLINE_ADDR	0x20000ull
#define EBDA_ADDR	0x9fc00ull
#define BIOS_ADDR	0xf0000ull	/* .. 1 MiB: reserved, the MP table */
#define LOW_END		0x100000ull
#define E820_RAM	1
#define E820_RESERVED	2
#define PAGE		0x1000ull
#define OUT_MAX		(512ull << 20)	/* a decompressed kernel larger is refused */

/* The MultiProcessor Specification 1.4's structures, by offset. */
#define MP_LAPIC_ADDR	0xfee00000u
#define MP_IOAPIC_ADDR	0xfec00000u
#define MP_IRQS		16		/* ISA IRQs, identity-routed to the I/O APIC */

int
vr_linux_find(const uint8_t *file, size_t len)
{
	return (len >= H_END_MIN && vr_get16(file + H_BOOT_FLAG) == 0xAA55 &&
	    memcmp(file + H_HEADER, "HdrS", 4) == 0);
}

/* ---- the compressed kernel ---------------------------------------------------- */

/* The formats by their magic, and whether this build decompresses them. */
static const struct format {
	const char *name;
	uint8_t magic[6];
	size_t n;
	bool built;
} formats[] = {
	{ "xz", { 0xFD, '7', 'z', 'X', 'Z', 0 }, 6,
#ifdef VR_HAVE_LZMA
	    true },
#else
	    false },
#endif
	{ "gzip", { 0x1F, 0x8B }, 2,
#ifdef VR_HAVE_ZLIB
	    true },
#else
	    false },
#endif
	{ "zstd", { 0x28, 0xB5, 0x2F, 0xFD }, 4,
#ifdef VR_HAVE_ZSTD
	    true },
#else
	    false },
#endif
	{ "lz4", { 0x02, 0x21, 0x4C, 0x18 }, 4, false },
	{ "bzip2", { 'B', 'Z', 'h' }, 3, false },
	{ "lzma", { 0x5D, 0, 0 }, 3, false },
	{ "lzo", { 0x89, 'L', 'Z', 'O' }, 4, false },
};

/* "xz, gzip" -- the formats this build decompresses. */
static void
built_formats(char *buf, size_t len)
{
	size_t i, at = 0;

	buf[0] = '\0';
	for (i = 0; i < sizeof(formats) / sizeof(formats[0]); i++)
		if (formats[i].built && at < len)
			at += (size_t)snprintf(buf + at, len - at, "%s%s", at ? ", " : "",
			    formats[i].name);
	if (at == 0)
		snprintf(buf, len, "none");
}

/* in[0..n) decompressed into out[0..outlen): 0, or -1 with why. */
static int
decompress(const struct format *f, const uint8_t *in, size_t n, uint8_t *out, size_t outlen,
    char *err, size_t errlen)
{
	(void)in, (void)n, (void)out, (void)outlen;
#ifdef VR_HAVE_LZMA
	if (strcmp(f->name, "xz") == 0) {
		lzma_stream s = LZMA_STREAM_INIT;
		lzma_ret r;

		if (lzma_stream_decoder(&s, UINT64_MAX, 0) != LZMA_OK)
			return (vr_fail(err, errlen, "xz: no decoder"));
		s.next_in = in;
		s.avail_in = n;
		s.next_out = out;
		s.avail_out = outlen;
		r = lzma_code(&s, LZMA_FINISH);
		lzma_end(&s);
		if (r != LZMA_STREAM_END || s.avail_out != 0)
			return (vr_fail(err, errlen, "xz: the compressed kernel is corrupt "
			    "or not %zu bytes (liblzma %d)", outlen, (int)r));
		return (0);
	}
#endif
#ifdef VR_HAVE_ZLIB
	if (strcmp(f->name, "gzip") == 0) {
		z_stream s;
		int r;

		memset(&s, 0, sizeof(s));
		if (inflateInit2(&s, 16 + MAX_WBITS) != Z_OK)
			return (vr_fail(err, errlen, "gzip: no decoder"));
		s.next_in = (Bytef *)(uintptr_t)in;
		s.avail_in = (uInt)n;
		s.next_out = out;
		s.avail_out = (uInt)outlen;
		r = inflate(&s, Z_FINISH);
		inflateEnd(&s);
		if (r != Z_STREAM_END || s.avail_out != 0)
			return (vr_fail(err, errlen, "gzip: the compressed kernel is corrupt "
			    "or not %zu bytes (zlib %d)", outlen, r));
		return (0);
	}
#endif
#ifdef VR_HAVE_ZSTD
	if (strcmp(f->name, "zstd") == 0) {
		size_t r = ZSTD_decompress(out, outlen, in, n);

		if (ZSTD_isError(r) || r != outlen)
			return (vr_fail(err, errlen, "zstd: the compressed kernel is corrupt "
			    "or not %zu bytes (%s)", outlen,
			    ZSTD_isError(r) ? ZSTD_getErrorName(r) : "short"));
		return (0);
	}
#endif
	return (vr_fail(err, errlen, "%s: not built in", f->name));
}

/*
 * The kernel ELF out of the bzImage: *outp (malloc'ed) and *outlenp.
 * 0, or -1 with why.
 */
static int
payload(const uint8_t *file, size_t len, uint8_t **outp, size_t *outlenp, char *err,
    size_t errlen)
{
	const struct format *f = NULL;
	size_t i, pm, off, n, outlen;
	char have[64];
	uint8_t *out;
	unsigned sects;

	sects = file[H_SETUP_SECTS] != 0 ? file[H_SETUP_SECTS] : 4;
	pm = ((size_t)sects + 1) * 512;
	off = vr_get32(file + H_PAYLOAD_OFF);
	n = vr_get32(file + H_PAYLOAD_LEN);
	if (pm > len || off > len - pm || n > len - pm - off || n < 8)
		return (vr_fail(err, errlen, "the compressed kernel (payload_offset %#zx, "
		    "payload_length %#zx after %zu setup sectors) is not inside the %zu-byte "
		    "file", off, n, (size_t)sects, len));
	off += pm;
	for (i = 0; i < sizeof(formats) / sizeof(formats[0]); i++)
		if (memcmp(file + off, formats[i].magic, formats[i].n) == 0) {
			f = &formats[i];
			break;
		}
	built_formats(have, sizeof(have));
	if (f == NULL)
		return (vr_fail(err, errlen, "the compressed kernel's format is not known "
		    "(magic %02x %02x %02x %02x); vpmu-run decompresses %s", file[off],
		    file[off + 1], file[off + 2], file[off + 3], have));
	if (!f->built)
		return (vr_fail(err, errlen, "the kernel is %s-compressed; this vpmu-run "
		    "decompresses %s", f->name, have));
	outlen = vr_get32(file + off + n - 4);
	if (outlen < 64 || outlen > OUT_MAX)
		return (vr_fail(err, errlen, "the decompressed kernel's size %zu (the "
		    "payload's last four bytes) is not plausible", outlen));
	if ((out = malloc(outlen)) == NULL)
		return (vr_fail(err, errlen, "no memory for the %zu-byte kernel", outlen));
	/* (gzip's trailer ends with the size; the others have it appended) */
	if (decompress(f, file + off, strcmp(f->name, "gzip") == 0 ? n : n - 4, out, outlen,
	    err, errlen) < 0) {
		free(out);
		return (-1);
	}
	*outp = out;
	*outlenp = outlen;
	return (0);
}

/* ---- boot_params -------------------------------------------------------------- */

static void
e820_add(uint8_t *bp, uint64_t addr, uint64_t size, uint32_t type)
{
	uint8_t *e = bp + BP_E820_TABLE + 20 * bp[BP_E820_ENTRIES];

	vr_put64(e, addr);
	vr_put64(e + 8, size);
	vr_put32(e + 16, type);
	bp[BP_E820_ENTRIES]++;
}

/* The zero page at BP_ADDR: the image's header, then what the loader sets. */
static void
boot_params(const uint8_t *file, uint8_t *ram, uint64_t ram_size, uint64_t rd,
    size_t rdlen)
{
	uint8_t *bp = ram + BP_ADDR;
	size_t end = H_HEADER + file[H_JUMP + 1];

	memset(bp, 0, BP_SIZE);
	memcpy(bp + H_SETUP_SECTS, file + H_SETUP_SECTS, end - H_SETUP_SECTS);
	bp[H_TYPE_OF_LOADER] = LOADER_UNDEFINED;
	bp[H_LOADFLAGS] |= CAN_USE_HEAP;
	vr_put16(bp + H_HEAP_END_PTR, 0xfe00);
	vr_put32(bp + H_CMD_LINE_PTR, (uint32_t)CMDLINE_ADDR);
	vr_put32(bp + H_RAMDISK_IMAGE, (uint32_t)rd);
	vr_put32(bp + H_RAMDISK_SIZE, (uint32_t)rdlen);
	vr_put32(bp + BP_EXT_RAMDISK_IMAGE, (uint32_t)(rd >> 32));
	vr_put32(bp + BP_EXT_RAMDISK_SIZE, (uint32_t)((uint64_t)rdlen >> 32));
	e820_add(bp, 0, EBDA_ADDR, E820_RAM);
	e820_add(bp, EBDA_ADDR, 0xa0000 - EBDA_ADDR, E820_RESERVED);
	e820_add(bp, BIOS_ADDR, LOW_END - BIOS_ADDR, E820_RESERVED);
	e820_add(bp, LOW_END, ram_size - LOW_END, E820_RAM);
}

/* ---- the MP table ------------------------------------------------------------- */

static uint8_t
checksum(const uint8_t *p, size_t n)
{
	uint8_t s = 0;

	while (n-- > 0)
		s = (uint8_t)(s + *p++);
	return ((uint8_t)-s);
}

/*
 * What boot.c hides from a Linux guest's CPUID (CPUID_1_ECX_LINUX_HIDE,
 * CPUID_7_EBX_LINUX_HIDE), by the names the kernel's clearcpuid= takes,
 * with leaf 7's SIMD extensions (AVX2 and AVX-512 go with AVX).  A host's
 * KVM may answer CPUID leaves 1 and 7 with the processor's own feature
 * bits whatever KVM_SET_CPUID2 set: the kernel then took SSSE3 for
 * BLAKE2s at boot, inside kernel_fpu_begin(), on a host whose instruction
 * emulator runs no SSE.  The command line turns them off either way.
 */
const char VR_LINUX_CLEARCPUID[] = "clearcpuid=pclmulqdq,ssse3,fma,cx16,pcid,sse4_1,"
    "sse4_2,movbe,popcnt,aes,xsave,avx,f16c,rdrand,fsgsbase,invpcid,rdseed,sha_ni,vaes,gfni";

char *
vr_linux_cmdline(const char *append)
{
	size_t n = strlen(append);
	char *s;

	if (strstr(append, "clearcpuid=") != NULL)
		return (strdup(append));
	if ((s = malloc(n + 1 + sizeof(VR_LINUX_CLEARCPUID))) == NULL)
		return (NULL);
	memcpy(s, append, n);
	if (n != 0)
		s[n++] = ' ';
	memcpy(s + n, VR_LINUX_CLEARCPUID, sizeof(VR_LINUX_CLEARCPUID));
	return (s);
}

/*
 * The MP floating pointer at BIOS_ADDR and the configuration table after
 * it: one processor entry per vCPU (APIC ID = index, vCPU 0 the BSP), an
 * ISA bus, the I/O APIC (ID ncpus), ISA IRQs 0..15 to its pins 0..15 (as
 * KVM's in-kernel irqchip routes them), LINT0 ExtINT and LINT1 NMI.
 * Returns the bytes written.
 */
size_t
vr_linux_mptable(uint8_t *ram, unsigned ncpus, uint32_t signature, uint32_t features)
{
	uint8_t *fp = ram + BIOS_ADDR, *t = fp + 16, *e = t + 44;
	uint16_t count = 0;
	unsigned i;

	memset(fp, 0, 16);
	memcpy(fp, "_MP_", 4);
	vr_put32(fp + 4, (uint32_t)(BIOS_ADDR + 16));
	fp[8] = 1;			/* length in 16-byte units */
	fp[9] = 4;			/* specification 1.4 */
	fp[10] = checksum(fp, 16);

	for (i = 0; i < ncpus; i++, e += 20, count++) {
		memset(e, 0, 20);
		e[0] = 0;				/* processor */
		e[1] = (uint8_t)i;			/* local APIC ID */
		e[2] = 0x14;				/* local APIC version */
		e[3] = (uint8_t)(1 | (i == 0 ? 2 : 0));	/* enabled, BSP */
		vr_put32(e + 4, signature);
		vr_put32(e + 8, features);
	}
	memset(e, 0, 8);
	e[0] = 1;					/* bus 0: ISA */
	memcpy(e + 2, "ISA   ", 6);
	e += 8, count++;
	e[0] = 2;					/* I/O APIC */
	e[1] = (uint8_t)ncpus;
	e[2] = 0x11;
	e[3] = 1;					/* enabled */
	vr_put32(e + 4, MP_IOAPIC_ADDR);
	e += 8, count++;
	for (i = 0; i < MP_IRQS; i++, e += 8, count++) {
		memset(e, 0, 8);
		e[0] = 3;				/* I/O interrupt */
		e[1] = 0;				/* INT */
		e[4] = 0;				/* source bus */
		e[5] = (uint8_t)i;			/* its IRQ */
		e[6] = (uint8_t)ncpus;			/* the I/O APIC */
		e[7] = (uint8_t)i;			/* its pin */
	}
	for (i = 0; i < 2; i++, e += 8, count++) {
		memset(e, 0, 8);
		e[0] = 4;				/* local interrupt */
		e[1] = i == 0 ? 3 : 1;			/* ExtINT, NMI */
		e[6] = 0xff;				/* every local APIC */
		e[7] = (uint8_t)i;			/* LINT0, LINT1 */
	}
	memset(t, 0, 44);
	memcpy(t, "PCMP", 4);
	vr_put16(t + 4, (uint16_t)(e - t));
	t[6] = 4;
	memcpy(t + 8, "VPMU-RUN", 8);
	memcpy(t + 16, "VIRTUAL PMU ", 12);
	vr_put16(t + 34, count);
	vr_put32(t + 36, MP_LAPIC_ADDR);
	t[7] = checksum(t, (size_t)(e - t));
	return ((size_t)(e - fp));
}

/* ---- loading ------------------------------------------------------------------ */

int
vr_linux_load(const uint8_t *file, size_t len, uint8_t *ram, uint64_t ram_size,
    const struct vr_linux_boot *b, struct vr_image *img, char *err, size_t errlen)
{
	struct vr_elf_rules rules = { .min_paddr = LOW_END };
	uint64_t rd = 0, rdmax, kend;
	uint16_t version;
	size_t cmdmax, clen, klen = 0;
	uint8_t *kernel = NULL;
	int ret;

	if (!vr_linux_find(file, len))
		return (vr_fail(err, errlen, "not a Linux bzImage (no boot flag 0xAA55 at "
		    "0x1fe and \"HdrS\" at 0x202)"));
	version = vr_get16(file + H_VERSION);
	if (version < 0x20a)
		return (vr_fail(err, errlen, "Linux boot protocol %u.%02u: vpmu-run needs "
		    "2.10 or later (a kernel from 2.6.31 on)", version >> 8, version & 0xff));
	if (!(file[H_LOADFLAGS] & LOADED_HIGH))
		return (vr_fail(err, errlen, "a zImage (loaded below 1 MiB): vpmu-run boots "
		    "bzImages only"));
	if (H_HEADER + (size_t)file[H_JUMP + 1] > BP_E820_TABLE ||
	    H_HEADER + (size_t)file[H_JUMP + 1] > len)
		return (vr_fail(err, errlen, "the setup header's length (jump at 0x200) "
		    "is not plausible"));
	if (ram_size < 64ull << 20 || ram_size > (uint64_t)VR_MEM_MAX_MIB << 20)
		return (vr_fail(err, errlen, "a Linux bzImage takes 64 MiB to 3 GiB of RAM "
		    "(--mem 64M to 3G), not %llu MiB", (unsigned long long)(ram_size >> 20)));
	cmdmax = vr_get32(file + H_CMDLINE_SIZE);
	clen = strlen(b->cmdline);
	if (clen > cmdmax || clen >= EBDA_ADDR - CMDLINE_ADDR)
		return (vr_fail(err, errlen, "the command line is %zu bytes, the kernel "
		    "takes %zu", clen, cmdmax));
	if (payload(file, len, &kernel, &klen, err, errlen) < 0)
		return (-1);
	ret = vr_elf_load_rules(kernel, klen, NULL, ram_size, &rules, img, err, errlen);
	kend = img->hi > img->lo + vr_get32(file + H_INIT_SIZE) ? img->hi :
	    img->lo + vr_get32(file + H_INIT_SIZE);
	if (ret == 0 && b->initrd != NULL) {
		rdmax = (uint64_t)vr_get32(file + H_INITRD_MAX) + 1;
		if (rdmax > ram_size)
			rdmax = ram_size;
		if (b->initrd_len > rdmax || ((rdmax - b->initrd_len) & ~(PAGE - 1)) < kend)
			ret = vr_fail(err, errlen, "the %zu-byte initrd does not fit between "
			    "the kernel's end %#llx and %#llx: raise --mem", b->initrd_len,
			    (unsigned long long)kend, (unsigned long long)rdmax);
		else
			rd = (rdmax - b->initrd_len) & ~(PAGE - 1);
	} else if (ret == 0 && kend > ram_size)
		ret = vr_fail(err, errlen, "the kernel needs RAM up to %#llx: raise --mem",
		    (unsigned long long)kend);
	if (ret == 0 && ram != NULL)
		ret = vr_elf_load_rules(kernel, klen, ram, ram_size, &rules, img, err, errlen);
	free(kernel);
	if (ret < 0 || ram == NULL)
		return (ret);
	if (b->initrd != NULL)
		memcpy(ram + rd, b->initrd, b->initrd_len);
	memcpy(ram + CMDLINE_ADDR, b->cmdline, clen + 1);
	boot_params(file, ram, ram_size, rd, b->initrd != NULL ? b->initrd_len : 0);
	img->linux_bp = BP_ADDR;
	return (0);
}
