/*
 * mkbadelf -- write a broken variant of a good guest ELF, for vpmu-run's
 * image checks (each must end in status 2 with a message, never a crash).
 *
 *   mkbadelf KIND GOOD.elf OUT.elf
 *
 * KIND is one of the names in the table below; each comment says what the
 * variant breaks.
 */
#include <elf.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static uint8_t *img;
static size_t len;

static Elf64_Ehdr *
eh(void)
{
	return ((Elf64_Ehdr *)img);
}

/* The first PT_LOAD with contents. */
static Elf64_Phdr *
load0(void)
{
	Elf64_Phdr *ph = (Elf64_Phdr *)(img + eh()->e_phoff);
	unsigned i;

	for (i = 0; i < eh()->e_phnum; i++)
		if (ph[i].p_type == PT_LOAD && ph[i].p_filesz != 0)
			return (&ph[i]);
	fprintf(stderr, "mkbadelf: no PT_LOAD with file contents\n");
	exit(1);
}

static void empty(void) { len = 0; }
static void garbage(void)
{
	static const char text[] = "this is not an ELF file, just text\n";

	memcpy(img, text, sizeof(text) - 1);
	len = sizeof(text) - 1;
}
static void trunc_header(void) { len = 40; }
static void trunc_phdrs(void) { len = eh()->e_phoff + sizeof(Elf64_Phdr) / 2; }
static void trunc_segment(void) { len = load0()->p_offset + load0()->p_filesz / 2; }
static void class32(void) { img[EI_CLASS] = ELFCLASS32; }
static void big_endian(void) { img[EI_DATA] = ELFDATA2MSB; }
static void type_dyn(void) { eh()->e_type = ET_DYN; }
static void machine_386(void) { eh()->e_machine = EM_386; }
static void phentsize(void) { eh()->e_phentsize = 32; }
static void no_phdrs(void) { eh()->e_phnum = 0; }
static void phoff_huge(void) { eh()->e_phoff = 0xffffffffffffffc0ull; }
static void low_paddr(void) { load0()->p_paddr = 0x1000; }
static void filesz(void) { load0()->p_filesz = load0()->p_memsz + 1; }
static void offset_huge(void) { load0()->p_offset = 0xfffffffffffff000ull; }
static void past_ram(void) { load0()->p_memsz = 256ull << 20; }
static void paddr_wrap(void) { load0()->p_paddr = 0xfffffffffffff000ull; }
static void entry_outside(void) { eh()->e_entry = 0x50000000; }
static void no_load(void)
{
	Elf64_Phdr *ph = (Elf64_Phdr *)(img + eh()->e_phoff);
	unsigned i;

	for (i = 0; i < eh()->e_phnum; i++)
		if (ph[i].p_type == PT_LOAD)
			ph[i].p_type = PT_NULL;
}

static const struct kind {
	const char *name;
	void	  (*fn)(void);
} kinds[] = {
	{ "empty", empty },			/* 0 bytes */
	{ "garbage", garbage },			/* text, no ELF magic */
	{ "trunc-header", trunc_header },	/* 40 bytes of the ELF header */
	{ "trunc-phdrs", trunc_phdrs },		/* ends inside the program headers */
	{ "trunc-segment", trunc_segment },	/* ends inside a PT_LOAD's bytes */
	{ "class32", class32 },			/* ELFCLASS32 */
	{ "big-endian", big_endian },		/* ELFDATA2MSB */
	{ "type-dyn", type_dyn },		/* ET_DYN */
	{ "machine-386", machine_386 },		/* EM_386 */
	{ "phentsize", phentsize },		/* e_phentsize 32 */
	{ "no-phdrs", no_phdrs },		/* e_phnum 0 */
	{ "phoff-huge", phoff_huge },		/* e_phoff + size overflows */
	{ "low-paddr", low_paddr },		/* a PT_LOAD at 0x1000, below 1 MiB */
	{ "filesz", filesz },			/* p_filesz > p_memsz */
	{ "offset-huge", offset_huge },		/* p_offset + p_filesz overflows */
	{ "past-ram", past_ram },		/* p_memsz 256 MiB, RAM 64 MiB */
	{ "paddr-wrap", paddr_wrap },		/* p_paddr + p_memsz overflows */
	{ "entry-outside", entry_outside },	/* e_entry in no PT_LOAD */
	{ "no-load", no_load },			/* every PT_LOAD made PT_NULL */
};

int
main(int argc, char **argv)
{
	FILE *f;
	size_t i;

	if (argc != 4) {
		fprintf(stderr, "usage: mkbadelf KIND GOOD.elf OUT.elf\n");
		return (2);
	}
	for (i = 0; i < sizeof(kinds) / sizeof(kinds[0]); i++)
		if (strcmp(kinds[i].name, argv[1]) == 0)
			break;
	if (i == sizeof(kinds) / sizeof(kinds[0])) {
		fprintf(stderr, "mkbadelf: unknown kind %s\n", argv[1]);
		return (2);
	}
	if ((f = fopen(argv[2], "rb")) == NULL || fseek(f, 0, SEEK_END) != 0 ||
	    (long)(len = (size_t)ftell(f)) < (long)sizeof(Elf64_Ehdr) ||
	    fseek(f, 0, SEEK_SET) != 0 || (img = malloc(len)) == NULL ||
	    fread(img, 1, len, f) != len) {
		fprintf(stderr, "mkbadelf: cannot read %s\n", argv[2]);
		return (1);
	}
	fclose(f);
	kinds[i].fn();
	if ((f = fopen(argv[3], "wb")) == NULL ||
	    (len > 0 && fwrite(img, 1, len, f) != len) || fclose(f) != 0) {
		fprintf(stderr, "mkbadelf: cannot write %s\n", argv[3]);
		return (1);
	}
	free(img);
	return (0);
}
