/*
 * mkkallsyms.c -- a Linux kernel's symbol table (kallsyms), made from a
 * map by kallsyms_make.c, written into a test guest's ELF
 * (linuxkallsyms.sh, for vpmustat --guest-kallsyms).
 *
 *   mkkallsyms [-l old|new] [-r] [-u] MAP AREA SIZE ELF
 *
 * MAP: lines "ADDRESS TYPE NAME", sorted by address.  The table goes into
 * ELF (changed in place) at the guest address AREA, which SIZE bytes of
 * a PT_LOAD segment hold.  -l: the layout before Linux 6.4 (old: offsets,
 * base, num_syms, names, markers, tokens, index; the default) or from 6.4
 * (new: num_syms, names, markers, tokens, index, offsets, base).  -r:
 * offsets relative only, as kernels without absolute per-CPU symbols.
 * -u: names not compressed.
 * Exit status 0, or 1 with a message.
 */
#include <elf.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "kallsyms_make.h"

#define MAXSYMS		65536

static void
die(const char *what, const char *why)
{
	fprintf(stderr, "mkkallsyms: %s: %s\n", what, why);
	exit(1);
}

/* The map's lines into syms: how many. */
static size_t
read_map(const char *path, struct km_sym *syms)
{
	char line[1024], type, name[KM_NAME_MAX + 1];
	unsigned long long a;
	size_t n = 0;
	FILE *f;

	if ((f = fopen(path, "r")) == NULL)
		die(path, "cannot open");
	while (fgets(line, sizeof(line), f) != NULL) {
		if (sscanf(line, "%llx %c %512s", &a, &type, name) != 3)
			die(path, "a line that is not \"ADDRESS TYPE NAME\"");
		if (n == MAXSYMS)
			die(path, "more than 65536 symbols");
		syms[n] = (struct km_sym){ .addr = a, .type = type, .name = strdup(name) };
		if (syms[n++].name == NULL)
			die(path, "out of memory");
	}
	fclose(f);
	return (n);
}

/* The file offset of the bytes at guest address va, from ELF's PT_LOADs. */
static long
file_offset(FILE *f, const char *path, uint64_t va, uint64_t size)
{
	Elf64_Ehdr eh;
	Elf64_Phdr ph;
	unsigned i;

	if (fread(&eh, sizeof(eh), 1, f) != 1 || memcmp(eh.e_ident, ELFMAG, SELFMAG) != 0)
		die(path, "not an ELF");
	for (i = 0; i < eh.e_phnum; i++) {
		if (fseek(f, (long)(eh.e_phoff + (uint64_t)i * eh.e_phentsize), SEEK_SET) != 0 ||
		    fread(&ph, sizeof(ph), 1, f) != 1)
			die(path, "a program header cannot be read");
		if (ph.p_type == PT_LOAD && va >= ph.p_vaddr &&
		    va + size <= ph.p_vaddr + ph.p_filesz)
			return ((long)(ph.p_offset + (va - ph.p_vaddr)));
	}
	die(path, "no PT_LOAD holds the area");
	return (-1);
}

int
main(int argc, char **argv)
{
	static struct km_sym syms[MAXSYMS];
	static uint8_t out[1 << 20];
	unsigned flags = 0;
	uint64_t area, size;
	char err[256];
	size_t n, len;
	FILE *f;
	int ch;

	while ((ch = getopt(argc, argv, "l:ru")) != -1) {
		if (ch == 'l' && strcmp(optarg, "new") == 0)
			flags |= KM_NEW;
		else if (ch == 'r')
			flags |= KM_RELATIVE;
		else if (ch == 'u')
			flags |= KM_UNCOMPRESSED;
		else if (!(ch == 'l' && strcmp(optarg, "old") == 0))
			die("usage", "mkkallsyms [-l old|new] [-r] [-u] MAP AREA SIZE ELF");
	}
	if (argc - optind != 4)
		die("usage", "mkkallsyms [-l old|new] [-r] [-u] MAP AREA SIZE ELF");
	area = strtoull(argv[optind + 1], NULL, 0);
	size = strtoull(argv[optind + 2], NULL, 0);
	n = read_map(argv[optind], syms);
	if ((len = kallsyms_make(syms, n, flags, out, sizeof(out), err, sizeof(err))) == 0)
		die(argv[optind], err);
	if (len > size)
		die(argv[optind + 3], "the table does not fit the area");
	if ((f = fopen(argv[optind + 3], "r+b")) == NULL)
		die(argv[optind + 3], "cannot open");
	if (fseek(f, file_offset(f, argv[optind + 3], area, size), SEEK_SET) != 0 ||
	    fwrite(out, 1, len, f) != len || fclose(f) != 0)
		die(argv[optind + 3], "cannot write");
	return (0);
}
