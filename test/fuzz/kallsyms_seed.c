/*
 * kallsyms_seed.c -- write a seed corpus for fuzz_kallsyms: guest memory
 * holding a kernel symbol table (test/guests/kallsyms_make.c) amid other
 * bytes, in each layout and encoding it makes.
 *
 *   kallsyms_seed DIR
 *
 *   old, new       600 symbols (three markers): per-CPU, code, data, a
 *                  name of 200 characters; before and from Linux 6.4
 *   old_relative   offsets relative only
 *   new_plain      names not compressed
 *   cut            old with its last bytes (the index's end, the base)
 *                  overwritten
 *   none           the memory without a table
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "kallsyms_make.h"

#define NSYMS	600
#define PAD	4096		/* other bytes before and after the table */

static int
seed(const char *dir, const char *name, unsigned flags, size_t cut)
{
	static struct km_sym syms[NSYMS];
	static char names[NSYMS][220];
	static uint8_t mem[PAD + (1 << 18) + PAD];
	char path[512], err[256];
	size_t i, len = 0;
	FILE *f;

	for (i = 0; i < NSYMS; i++) {
		if (i == 0 && !(flags & KM_RELATIVE)) {	/* no per-CPU symbol then */
			syms[i] = (struct km_sym){ 0x40, 'D', "current_task" };
			continue;
		}
		if (i == NSYMS - 1)
			snprintf(names[i], sizeof(names[i]), "long_%0195d", 7);
		else if (i == 3)
			snprintf(names[i], sizeof(names[i]), "entry_SYSCALL_64");
		else
			snprintf(names[i], sizeof(names[i]), "%s_%zu", i % 3 ? "do_work" :
			    "helper", i);
		syms[i] = (struct km_sym){ 0xffffffff81000000ull + 0x40 * i,
		    i % 5 == 4 ? 'd' : i % 2 ? 't' : 'T', names[i] };
	}
	for (i = 0; i < sizeof(mem); i++)
		mem[i] = (uint8_t)(i * 7 + 3);
	if (strcmp(name, "none") != 0 &&
	    (len = kallsyms_make(syms, NSYMS, flags, mem + PAD, sizeof(mem) - 2 * PAD, err,
	    sizeof(err))) == 0) {
		fprintf(stderr, "kallsyms_seed: %s: %s\n", name, err);
		return (-1);
	}
	if (cut != 0)		/* the token index's end overwritten */
		memset(mem + PAD + len - cut, 0xff, cut);
	snprintf(path, sizeof(path), "%s/%s", dir, name);
	if ((f = fopen(path, "wb")) == NULL ||
	    fwrite(mem, 1, PAD + len + PAD, f) != PAD + len + PAD || fclose(f) != 0) {
		fprintf(stderr, "kallsyms_seed: %s: cannot write\n", path);
		return (-1);
	}
	return (0);
}

int
main(int argc, char **argv)
{
	if (argc != 2) {
		fprintf(stderr, "usage: kallsyms_seed DIR\n");
		return (2);
	}
	return (seed(argv[1], "old", 0, 0) < 0 || seed(argv[1], "new", KM_NEW, 0) < 0 ||
	    seed(argv[1], "old_relative", KM_RELATIVE, 0) < 0 ||
	    seed(argv[1], "new_plain", KM_NEW | KM_UNCOMPRESSED, 0) < 0 ||
	    seed(argv[1], "cut", 0, 300) < 0 || seed(argv[1], "none", 0, 0) < 0);
}
