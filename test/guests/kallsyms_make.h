/*
 * kallsyms_make.h -- a Linux kernel's symbol table (kallsyms) made from a
 * list of symbols, for tests (kallsyms_make.c).
 */
#ifndef KALLSYMS_MAKE_H
#define KALLSYMS_MAKE_H

#include <stddef.h>
#include <stdint.h>

#define KM_NAME_MAX	512

struct km_sym {
	uint64_t addr;
	char	 type;		/* nm's letter */
	const char *name;
};

#define KM_NEW		0x1	/* the layout from Linux 6.4 (else the one before) */
#define KM_RELATIVE	0x2	/* offsets relative only (no absolute per-CPU symbols) */
#define KM_UNCOMPRESSED	0x4	/* every token one character */

/*
 * The table of syms[0 .. n) (sorted by address) into out: its length, or
 * 0 and why in err.
 */
size_t kallsyms_make(const struct km_sym *syms, size_t n, unsigned flags, uint8_t *out,
    size_t cap, char *err, size_t errlen);

#endif
