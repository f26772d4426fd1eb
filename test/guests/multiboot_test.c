/*
 * multiboot_test -- vpmu-run's Multiboot v1 loader (examples/vpmu-run/
 * multiboot.c, with elf.c) and its devices (devices.c), linked alone, on
 * images built here in memory: what a good image puts in RAM, byte for
 * byte and field by field, and every refusal with its message and with
 * RAM untouched.  Exit status 0, or 1 after naming each failed check.
 */
#include <elf.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "vpmu-run.h"
#include "loader_check.h"

#define RAM_SIZE	(4u << 20)
#define FILL		0xAA

static char err[256];

static void
header(uint8_t *p, uint32_t flags)
{
	vr_put32(p, VR_MB_MAGIC);
	vr_put32(p + 4, flags);
	vr_put32(p + 8, (uint32_t)(0u - (VR_MB_MAGIC + flags)));
}

/* An a.out-kludge image of len bytes, its header at off with these fields. */
static uint8_t *
aout(size_t len, size_t off, uint32_t flags, uint32_t header_addr, uint32_t load_addr,
    uint32_t load_end, uint32_t bss_end, uint32_t entry)
{
	uint8_t *f = malloc(len);
	size_t i;

	for (i = 0; i < len; i++)
		f[i] = (uint8_t)(i * 7 + 1);
	header(f + off, flags | (1u << 16));
	vr_put32(f + off + 12, header_addr);
	vr_put32(f + off + 16, load_addr);
	vr_put32(f + off + 20, load_end);
	vr_put32(f + off + 24, bss_end);
	vr_put32(f + off + 28, entry);
	return (f);
}

/* The good a.out image: 0x2000 bytes, header at 0x100, 0x200000..0x201000, bss to 0x203000. */
static uint8_t *
good_aout(void)
{
	return (aout(0x2000, 0x100, 0x3, 0x200100, 0x200000, 0x201000, 0x203000, 0x200200));
}

/* An ELF32 i386 image: one PT_LOAD of 0x10 bytes (memsz 0x100) at paddr, header after it. */
#define E32_LEN	0x200
static uint8_t *
elf32(uint32_t paddr, uint16_t machine)
{
	uint8_t *f = calloc(1, E32_LEN);
	Elf32_Ehdr eh = { 0 };
	Elf32_Phdr ph = { 0 };
	unsigned i;

	memcpy(eh.e_ident, ELFMAG, SELFMAG);
	eh.e_ident[EI_CLASS] = ELFCLASS32;
	eh.e_ident[EI_DATA] = ELFDATA2LSB;
	eh.e_ident[EI_VERSION] = EV_CURRENT;
	eh.e_type = ET_EXEC;
	eh.e_machine = machine;
	eh.e_version = EV_CURRENT;
	eh.e_entry = paddr + 4;
	eh.e_phoff = sizeof(eh);
	eh.e_ehsize = sizeof(eh);
	eh.e_phentsize = sizeof(ph);
	eh.e_phnum = 1;
	ph.p_type = PT_LOAD;
	ph.p_offset = 0x100;
	ph.p_vaddr = ph.p_paddr = paddr;
	ph.p_filesz = 0x10;
	ph.p_memsz = 0x100;
	memcpy(f, &eh, sizeof(eh));
	memcpy(f + sizeof(eh), &ph, sizeof(ph));
	header(f + 0x80, 0);
	for (i = 0; i < 0x10; i++)
		f[0x100 + i] = (uint8_t)(0xC0 + i);
	return (f);
}

/* The same as ELF64 x86-64. */
static uint8_t *
elf64(uint64_t paddr)
{
	uint8_t *f = calloc(1, E32_LEN);
	Elf64_Ehdr eh = { 0 };
	Elf64_Phdr ph = { 0 };

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
	ph.p_type = PT_LOAD;
	ph.p_offset = 0x100;
	ph.p_paddr = paddr;
	ph.p_filesz = 0x10;
	ph.p_memsz = 0x20;
	memcpy(f, &eh, sizeof(eh));
	memcpy(f + sizeof(eh), &ph, sizeof(ph));
	header(f + 0xb0, 0);
	memset(f + 0x100, 0x5A, 0x10);
	return (f);
}

static int
load(const uint8_t *f, size_t len, const struct vr_mb_boot *b, struct vr_image *img)
{
	memset(ram, FILL, RAM_SIZE);
	err[0] = '\0';
	return (vr_mb_load(f, len, ram, RAM_SIZE, b, img, err, sizeof(err)));
}

static bool
ram_untouched(void)
{
	size_t i;

	for (i = 0; i < RAM_SIZE; i++)
		if (ram[i] != FILL)
			return (false);
	return (true);
}

/* A refusal: -1, a message containing want, RAM as it was. */
static void
refused(const char *name, const uint8_t *f, size_t len, const struct vr_mb_boot *b,
    const char *want)
{
	struct vr_image img;
	int r;

	current = name;
	r = load(f, len, b, &img);
	CHECK(r == -1);
	CHECK(strstr(err, want) != NULL);
	CHECK(ram_untouched());
	if (r != -1 || strstr(err, want) == NULL)
		fprintf(stderr, "  got \"%s\", want \"%s\"\n", err, want);
}

static const struct vr_mb_boot noboot = { .cmdline = "" };

static void
test_good_aout(void)
{
	static const uint8_t mod[] = "ABC";
	struct vr_mb_boot b = { .cmdline = "x y", .mod = mod, .modlen = 3,
	    .modname = "mod.txt" };
	struct vr_image img;
	uint8_t *f = good_aout();
	uint64_t info = VR_MB_INFO_ADDR, mm, mods;
	size_t i;
	bool same = true, zero = true;

	current = "good a.out";
	CHECK(load(f, 0x2000, &b, &img) == 0);
	CHECK(img.multiboot && img.mb_info == VR_MB_INFO_ADDR);
	CHECK(img.entry == 0x200200 && img.lo == 0x200000 && img.hi == 0x203000);
	for (i = 0; i < 0x1000; i++)
		same &= ram[0x200000 + i] == f[i];
	for (i = 0x201000; i < 0x203000; i++)
		zero &= ram[i] == 0;
	CHECK(same);
	CHECK(zero);
	CHECK(ram[0x1fffff] == FILL && ram[0x203000 + 3] == FILL);
	CHECK(r32(info) == 0x24d);			/* MEM CMDLINE MODS MMAP NAME */
	CHECK(r32(info + 4) == 640);
	CHECK(r32(info + 8) == (RAM_SIZE - 0x100000) / 1024);
	CHECK(strcmp((char *)ram + r32(info + 16), "x y") == 0);
	CHECK(r32(info + 20) == 1);
	mods = r32(info + 24);
	CHECK(r32(mods) == 0x203000 && r32(mods + 4) == 0x203003);
	CHECK(memcmp(ram + 0x203000, "ABC", 3) == 0);
	CHECK(strcmp((char *)ram + r32(mods + 8), "mod.txt") == 0);
	CHECK(strcmp((char *)ram + r32(info + 64), "vpmu-run") == 0);
	CHECK(r32(info + 44) == 3 * 24);
	mm = r32(info + 48);
	CHECK(r32(mm) == 20 && r64(mm + 4) == 0 && r64(mm + 12) == 0x9fc00 &&
	    r32(mm + 20) == 1);
	CHECK(r32(mm + 24) == 20 && r64(mm + 28) == 0x9fc00 &&
	    r64(mm + 36) == 0x100000 - 0x9fc00 && r32(mm + 44) == 2);
	CHECK(r32(mm + 48) == 20 && r64(mm + 52) == 0x100000 &&
	    r64(mm + 60) == RAM_SIZE - 0x100000 && r32(mm + 68) == 1);
	/* everything inside the information area */
	CHECK(mm >= info && mods >= info && r32(info + 16) < info + VR_MB_INFO_SIZE);
	free(f);

	/* load_end_addr 0: to the file's end; bss_end_addr 0: no bss */
	current = "a.out to the file's end";
	f = aout(0x2000, 0x100, 0, 0x200100, 0x200000, 0, 0, 0x200000);
	CHECK(load(f, 0x2000, &noboot, &img) == 0);
	CHECK(img.lo == 0x200000 && img.hi == 0x202000);	/* the header at 0x100 */
	CHECK(ram[0x200000] == f[0] && ram[0x201fff] == f[0x1fff] && ram[0x202000] == FILL);
	CHECK(r32(VR_MB_INFO_ADDR + 20) == 0);		/* no module */
	CHECK(strcmp((char *)ram + r32(VR_MB_INFO_ADDR + 16), "") == 0);
	free(f);
}

static void
test_good_elf(void)
{
	static const uint8_t mod[] = "NR_CPUS=1\n";
	struct vr_mb_boot b = { .cmdline = "", .mod = mod, .modlen = 10, .modname = "env" };
	struct vr_image img;
	uint8_t *f = elf32(0x300000, EM_386);
	uint64_t mods;
	size_t i;
	bool ok = true;

	current = "good ELF32";
	CHECK(load(f, E32_LEN, &b, &img) == 0);
	CHECK(img.entry == 0x300004 && img.lo == 0x300000 && img.hi == 0x300100);
	for (i = 0; i < 0x10; i++)
		ok &= ram[0x300000 + i] == 0xC0 + i;
	for (i = 0x10; i < 0x100; i++)
		ok &= ram[0x300000 + i] == 0;
	CHECK(ok);
	mods = r32(VR_MB_INFO_ADDR + 24);
	CHECK(r32(mods) == 0x301000 && r32(mods + 4) == 0x30100a);	/* page-aligned */
	CHECK(memcmp(ram + 0x301000, "NR_CPUS=1\n", 10) == 0);
	free(f);

	current = "good ELF64";
	f = elf64(0x380000);
	CHECK(load(f, E32_LEN, &noboot, &img) == 0);
	if (err[0] != '\0')
		fprintf(stderr, "  %s\n", err);
	CHECK(img.entry == 0x380000 && img.hi == 0x380020 && ram[0x38000f] == 0x5A &&
	    ram[0x380010] == 0);
	free(f);
}

static void
test_refusals(void)
{
	uint8_t mod[16] = "M";
	struct vr_mb_boot big = { .cmdline = "", .mod = mod, .modlen = RAM_SIZE,
	    .modname = "big" };
	struct vr_mb_boot longcmd = { .cmdline = NULL };
	char *cmd;
	uint8_t *f;

	f = good_aout();
	vr_put32(f + 0x108, 0);
	refused("bad checksum", f, 0x2000, &noboot,
	    "Multiboot magic 0x1BADB002 at offset 0x100, but magic + flags + checksum is");
	free(f);

	f = aout(0x3000, 0x2000, 0, 0x202000, 0x200000, 0, 0, 0x200000);
	refused("header past 8 KiB", f, 0x3000, &noboot,
	    "the Multiboot header at offset 0x2000 is past the first 8192 bytes");
	free(f);

	f = calloc(1, 64);
	refused("no header", f, 64, &noboot, "no Multiboot header");
	free(f);

	f = aout(0x2000, 0x100, 0x4, 0x200100, 0x200000, 0, 0, 0x200000);
	refused("video", f, 0x2000, &noboot, "bit 2 (a video mode) is required");
	free(f);

	f = aout(0x2000, 0x100, 0x20, 0x200100, 0x200000, 0, 0, 0x200000);
	refused("unknown required bit", f, 0x2000, &noboot,
	    "bit 5 is required and unknown to vpmu-run");
	free(f);

	f = aout(0x2000, 0x100, 0, 0x200100, 0x200000, 0x1ff000, 0, 0x200000);
	refused("load_end below load_addr", f, 0x2000, &noboot,
	    "load_end_addr 0x1ff000 is below load_addr 0x200000");
	free(f);

	f = aout(0x2000, 0x100, 0, 0x1fff00, 0x200000, 0, 0, 0x200000);
	refused("header_addr below load_addr", f, 0x2000, &noboot,
	    "header_addr 0x1fff00 is below load_addr 0x200000");
	free(f);

	f = aout(0x2000, 0x100, 0, 0x200200, 0x200000, 0, 0, 0x200000);
	refused("header_addr inconsistent", f, 0x2000, &noboot,
	    "puts the load before the file's start");
	free(f);

	f = aout(0x2000, 0x100, 0, 0x200100, 0x200000, 0x201000, 0x200800, 0x200000);
	refused("bss_end below load_end", f, 0x2000, &noboot,
	    "bss_end_addr 0x200800 is below the end of the loaded bytes");
	free(f);

	f = aout(0x2000, 0x100, 0, 0x200100, 0x200000, 0x201000, RAM_SIZE + 1, 0x200000);
	refused("a.out past RAM", f, 0x2000, &noboot, "ends past guest RAM (4 MiB");
	free(f);

	f = aout(0x2000, 0x100, 0, 0x200100, 0x200000, 0, 0, 0x300000);
	refused("entry outside", f, 0x2000, &noboot,
	    "entry_addr 0x300000 is outside the image 0x200000..0x202000");
	free(f);

	f = aout(0x2000, 0x100, 0, 0x8100, 0x8000, 0, 0, 0x8000);
	refused("a.out over the information area", f, 0x2000, &noboot,
	    "overlaps the Multiboot information area at 0x8000..0x10000");
	free(f);

	f = good_aout();
	refused("truncated a.out", f, 0x800, &noboot,
	    "truncated: Multiboot load_addr 0x200000..load_end_addr 0x201000");
	refused("truncated address fields", f, 0x110, &noboot,
	    "address fields end past the file's 272 bytes");
	refused("module too large for RAM", f, 0x2000, &big,
	    "the module (4194304 bytes at 0x203000, above the image) ends past guest RAM");
	free(f);

	f = elf32(0x3ff000, EM_386);
	vr_put32(f + sizeof(Elf32_Ehdr) + 20, 0x2000);	/* p_memsz */
	refused("ELF segment past RAM", f, E32_LEN, &noboot,
	    "PT_LOAD 0: p_paddr 0x3ff000 + p_memsz 0x2000 ends past guest RAM");
	free(f);

	f = elf32(0xf000, EM_386);
	refused("ELF over the information area", f, E32_LEN, &noboot,
	    "PT_LOAD 0: 0xf000..0xf100 overlaps the Multiboot information area at "
	    "0x8000..0x10000");
	free(f);

	f = elf32(0x300000, EM_68K);
	refused("ELF32 not i386", f, E32_LEN, &noboot,
	    "image must be ELF: e_machine 4: an ELFCLASS32 guest must be i386");
	free(f);
	f = elf32(0x300000, EM_386);
	refused("truncated ELF", f, 0x108, &noboot,
	    "image must be ELF: truncated: PT_LOAD 0");
	free(f);

	f = good_aout();
	vr_put32(f + 0x104, 0);		/* flags bit 16 clear ... */
	vr_put32(f + 0x108, 0u - VR_MB_MAGIC);
	refused("not ELF without address fields", f, 0x2000, &noboot,
	    "flags bit 16 is clear, so the image must be ELF: not an ELF file");
	cmd = malloc(VR_MB_INFO_SIZE + 1);
	memset(cmd, 'c', VR_MB_INFO_SIZE);
	cmd[VR_MB_INFO_SIZE] = '\0';
	longcmd.cmdline = cmd;
	free(f);
	f = good_aout();
	refused("command line too long", f, 0x2000, &longcmd,
	    "the command line (32768 bytes) and the module's name (0 bytes) do not fit");
	free(cmd);
	free(f);
}

static void
test_uart(void)
{
	struct vr_uart u = { 0 };

	current = "uart";
	CHECK(vr_uart_read(&u, 5) == 0x60);		/* LSR: THRE | TEMT */
	CHECK(vr_uart_read(&u, 6) == 0xB0);		/* MSR */
	CHECK(vr_uart_read(&u, 0) == 0);		/* RBR */
	CHECK(vr_uart_read(&u, 2) == 0x01);		/* IIR: none pending */
	CHECK(vr_uart_write(&u, 0, 'a'));		/* THR: console */
	CHECK(!vr_uart_write(&u, 3, 0x83));		/* DLAB */
	CHECK(!vr_uart_write(&u, 0, 0x0c));		/* DLL: not console */
	CHECK(!vr_uart_write(&u, 1, 0x01));		/* DLM */
	CHECK(vr_uart_read(&u, 0) == 0x0c && vr_uart_read(&u, 1) == 0x01);
	CHECK(vr_uart_read(&u, 3) == 0x83);
	CHECK(!vr_uart_write(&u, 3, 0x03));
	CHECK(vr_uart_read(&u, 1) == 0);		/* IER, untouched */
	CHECK(!vr_uart_write(&u, 1, 0x05));
	CHECK(vr_uart_read(&u, 1) == 0x05 && vr_uart_read(&u, 0) == 0);
	CHECK(!vr_uart_write(&u, 2, 0x07));		/* FCR: FIFOs on */
	CHECK(vr_uart_read(&u, 2) == 0xC1);
	CHECK(!vr_uart_write(&u, 4, 0x0b) && vr_uart_read(&u, 4) == 0x0b);
	CHECK(!vr_uart_write(&u, 7, 0x5a) && vr_uart_read(&u, 7) == 0x5a);
	CHECK(!vr_uart_write(&u, 5, 0x00) && vr_uart_read(&u, 5) == 0x60);
}

static void
test_fwcfg(void)
{
	struct vr_fwcfg f = { 0 };
	const uint64_t rs = 0x123456789abcull;
	uint8_t b[10];
	unsigned i;

#define READ(n) for (i = 0; i < (n); i++) b[i] = vr_fwcfg_read(&f, rs, 3)
	current = "fw_cfg";
	vr_fwcfg_select(&f, 0);
	READ(6);
	CHECK(memcmp(b, "QEMU\0\0", 6) == 0);
	vr_fwcfg_select(&f, 0);				/* the offset starts over */
	READ(1);
	CHECK(b[0] == 'Q');
	vr_fwcfg_select(&f, 1);
	READ(5);
	CHECK(memcmp(b, "\1\0\0\0\0", 5) == 0);
	vr_fwcfg_select(&f, 3);
	READ(10);
	CHECK(memcmp(b, "\xbc\x9a\x78\x56\x34\x12\0\0\0\0", 10) == 0);
	vr_fwcfg_select(&f, 5);
	READ(3);
	CHECK(memcmp(b, "\3\0\0", 3) == 0);
	vr_fwcfg_select(&f, 0xf);
	READ(3);
	CHECK(memcmp(b, "\3\0\0", 3) == 0);
	vr_fwcfg_select(&f, 0x19);
	READ(5);
	CHECK(memcmp(b, "\0\0\0\0\0", 5) == 0);
	vr_fwcfg_select(&f, 0x4000);
	READ(2);
	CHECK(b[0] == 0 && b[1] == 0);
#undef READ
}

int
main(void)
{
	if ((ram = malloc(RAM_SIZE)) == NULL)
		return (1);
	test_good_aout();
	test_good_elf();
	test_refusals();
	test_uart();
	test_fwcfg();
	free(ram);
	if (failures != 0) {
		fprintf(stderr, "multiboot_test: %d check%s failed\n", failures,
		    failures == 1 ? "" : "s");
		return (1);
	}
	printf("multiboot_test: ok\n");
	return (0);
}
