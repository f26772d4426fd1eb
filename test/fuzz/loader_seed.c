/*
 * loader_seed.c -- seeds for fuzz_loader (its input: a selector byte, then
 * the image): a boot protocol ELF64, a Multiboot ELF32 and a Multiboot
 * image loaded by its address fields, and a bzImage whose payload is a
 * gzip stream (stored blocks, no compression) of an ELF64 kernel at
 * 16 MiB.  Each image is small and loads.
 *
 *   loader_seed DIR
 */
#include <elf.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

static uint8_t img[16384];

static void
p16(uint8_t *p, uint32_t v)
{
	p[0] = (uint8_t)v;
	p[1] = (uint8_t)(v >> 8);
}

static void
p32(uint8_t *p, uint32_t v)
{
	p16(p, v);
	p16(p + 2, v >> 16);
}

static int
save(const char *dir, const char *name, uint8_t sel, const uint8_t *b, size_t n)
{
	char path[4096];
	FILE *f;

	snprintf(path, sizeof(path), "%s/%s", dir, name);
	if ((f = fopen(path, "wb")) == NULL || fputc(sel, f) == EOF ||
	    fwrite(b, 1, n, f) != n) {
		perror(path);
		return (-1);
	}
	return (fclose(f) == 0 ? 0 : -1);
}

/* An ELF64 x86-64 ET_EXEC: one PT_LOAD of code at paddr, a bss after. */
static size_t
elf64(uint8_t *b, uint64_t paddr)
{
	Elf64_Ehdr eh;
	Elf64_Phdr ph;
	static const uint8_t code[] = { 0xb0, 0x21, 0xe6, 0xf4, 0xf4, 0xeb, 0xfe };

	memset(&eh, 0, sizeof(eh));
	memcpy(eh.e_ident, ELFMAG, SELFMAG);
	eh.e_ident[EI_CLASS] = ELFCLASS64;
	eh.e_ident[EI_DATA] = ELFDATA2LSB;
	eh.e_ident[EI_VERSION] = EV_CURRENT;
	eh.e_type = ET_EXEC;
	eh.e_machine = EM_X86_64;
	eh.e_version = EV_CURRENT;
	eh.e_entry = paddr;
	eh.e_phoff = sizeof(eh);
	eh.e_ehsize = sizeof(eh);
	eh.e_phentsize = sizeof(ph);
	eh.e_phnum = 1;
	memset(&ph, 0, sizeof(ph));
	ph.p_type = PT_LOAD;
	ph.p_offset = sizeof(eh) + sizeof(ph);
	ph.p_vaddr = ph.p_paddr = paddr;
	ph.p_filesz = sizeof(code);
	ph.p_memsz = 4096;
	ph.p_flags = PF_R | PF_X;
	memcpy(b, &eh, sizeof(eh));
	memcpy(b + sizeof(eh), &ph, sizeof(ph));
	memcpy(b + ph.p_offset, code, sizeof(code));
	return (ph.p_offset + sizeof(code));
}

/* A Multiboot header at b: flags, and the address fields with bit 16. */
static void
mb_header(uint8_t *b, uint32_t flags, uint32_t header_addr, uint32_t load, uint32_t entry)
{
	p32(b, 0x1BADB002u);
	p32(b + 4, flags);
	p32(b + 8, 0u - (0x1BADB002u + flags));
	if (flags & (1u << 16)) {
		p32(b + 12, header_addr);
		p32(b + 16, load);
		p32(b + 20, 0);			/* load_end: the whole file */
		p32(b + 24, load + 0x2000);	/* bss_end */
		p32(b + 28, entry);
	}
}

/* ELF32 i386 with a Multiboot header after its program header. */
static size_t
mb_elf32(uint8_t *b)
{
	Elf32_Ehdr eh;
	Elf32_Phdr ph;
	size_t hdr = sizeof(eh) + sizeof(ph), n = hdr + 12 + 8;

	memset(&eh, 0, sizeof(eh));
	memcpy(eh.e_ident, ELFMAG, SELFMAG);
	eh.e_ident[EI_CLASS] = ELFCLASS32;
	eh.e_ident[EI_DATA] = ELFDATA2LSB;
	eh.e_ident[EI_VERSION] = EV_CURRENT;
	eh.e_type = ET_EXEC;
	eh.e_machine = EM_386;
	eh.e_version = EV_CURRENT;
	eh.e_entry = 0x100000 + (uint32_t)hdr + 12;
	eh.e_phoff = sizeof(eh);
	eh.e_ehsize = sizeof(eh);
	eh.e_phentsize = sizeof(ph);
	eh.e_phnum = 1;
	memset(&ph, 0, sizeof(ph));
	ph.p_type = PT_LOAD;
	ph.p_offset = 0;
	ph.p_vaddr = ph.p_paddr = 0x100000;
	ph.p_filesz = (uint32_t)n;
	ph.p_memsz = 0x3000;
	memcpy(b, &eh, sizeof(eh));
	memcpy(b + sizeof(eh), &ph, sizeof(ph));
	mb_header(b + hdr, 0x3, 0, 0, 0);
	memset(b + hdr + 12, 0x90, 8);
	return (n);
}

/* CRC-32 (IEEE), as gzip's trailer has it. */
static uint32_t
crc32_of(const uint8_t *p, size_t n)
{
	uint32_t c = 0xFFFFFFFFu;
	int k;

	while (n-- > 0) {
		c ^= *p++;
		for (k = 0; k < 8; k++)
			c = (c >> 1) ^ (0xEDB88320u & (0u - (c & 1)));
	}
	return (~c);
}

/* A bzImage (boot protocol 2.15) whose payload is a gzip of an ELF64 at 16 MiB. */
static size_t
bzimage(uint8_t *b)
{
	uint8_t kernel[512];
	size_t klen = elf64(kernel, 0x1000000), setup = 512 * 2, o, gz;

	memset(b, 0, setup);
	b[0x1f1] = 1;				/* setup_sects: 2 sectors before the payload */
	p16(b + 0x1fe, 0xAA55);
	b[0x200] = 0xEB;
	b[0x201] = 0x66;			/* the header ends at 0x268 */
	memcpy(b + 0x202, "HdrS", 4);
	p16(b + 0x206, 0x20f);
	b[0x211] = 0x01;			/* LOADED_HIGH */
	p32(b + 0x22c, 0x7fffffff);		/* initrd_addr_max */
	p32(b + 0x238, 2048);			/* cmdline_size */
	p32(b + 0x260, 0x10000);		/* init_size */
	o = setup;
	/* gzip: header, one stored deflate block, CRC-32, ISIZE */
	memcpy(b + o, (const uint8_t[]){ 0x1f, 0x8b, 8, 0, 0, 0, 0, 0, 0, 0xff }, 10);
	o += 10;
	b[o++] = 0x01;				/* BFINAL, stored */
	p16(b + o, (uint32_t)klen);
	p16(b + o + 2, (uint32_t)~klen);
	o += 4;
	memcpy(b + o, kernel, klen);
	o += klen;
	p32(b + o, crc32_of(kernel, klen));
	p32(b + o + 4, (uint32_t)klen);
	o += 8;
	gz = o - setup;
	p32(b + 0x248, 0);			/* payload_offset from the protected-mode part */
	p32(b + 0x24c, (uint32_t)gz);
	return (o);
}

int
main(int argc, char **argv)
{
	size_t n;

	if (argc != 2) {
		fprintf(stderr, "usage: loader_seed DIR\n");
		return (2);
	}
	n = elf64(img, 0x100000);
	if (save(argv[1], "elf64", 0x0c, img, n) != 0 ||
	    save(argv[1], "elf64-memfd", 0x2c, img, n) != 0)
		return (1);
	n = mb_elf32(img);
	if (save(argv[1], "multiboot-elf32", 0x11, img, n) != 0 ||
	    save(argv[1], "multiboot-elf32-nomod", 0x13, img, n) != 0)
		return (1);
	memset(img, 0x90, 64);
	mb_header(img, 0x10003, 0x100000, 0x100000, 0x100020);
	if (save(argv[1], "multiboot-aout", 0x11, img, 64) != 0)
		return (1);
	n = bzimage(img);
	if (save(argv[1], "bzimage", 0x02, img, n) != 0)
		return (1);
	return (0);
}
