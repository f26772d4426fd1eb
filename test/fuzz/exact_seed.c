/*
 * exact_seed.c -- seeds for fuzz_exact: one guest per paging mode whose
 * tables map its code and stack, with a loop, a CALL and a RET to run and
 * a frame chain to walk (the input format is in fuzz_exact.c).
 *
 *   exact_seed DIR
 */
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#define HDR	48

static uint8_t buf[4096];
static size_t len;

static void
put(uint64_t v, unsigned n)
{
	while (n-- > 0) {
		buf[len++] = (uint8_t)v;
		v >>= 8;
	}
}

static void
bytes(const uint8_t *b, size_t n)
{
	memcpy(buf + len, b, n);
	len += n;
}

/* A slot: gpa, size, and its first bytes (n of them). */
static void
slot(uint64_t gpa, unsigned size, const uint8_t *b, size_t n)
{
	put(gpa, 8);
	put(size - 1, 2);
	put(n, 2);
	bytes(b, n);
}

static void
entry(uint64_t gpa, uint64_t e, unsigned esize)
{
	uint8_t b[8];
	unsigned i;

	for (i = 0; i < esize; i++)
		b[i] = (uint8_t)(e >> (8 * i));
	slot(gpa, esize, b, esize);
}

/* add rax, rbx; dec rcx; jnz -8; push rax; pop rax; call +0; ret; nop */
static const uint8_t code64[] = {
	0x48, 0x01, 0xd8, 0x48, 0xff, 0xc9, 0x75, 0xf8, 0x50, 0x58,
	0xe8, 0x00, 0x00, 0x00, 0x00, 0xc3, 0x90,
};
/* add eax, ebx; dec ecx; jnz -5; push eax; pop eax; jmp short +0; nop */
static const uint8_t code32[] = {
	0x01, 0xd8, 0x49, 0x75, 0xfb, 0x50, 0x58, 0xeb, 0x00, 0x90,
};

static int
write_seed(const char *dir, const char *name, uint8_t cfg, unsigned nslots, uint64_t cr3,
    void (*tables)(void), const uint8_t *code, size_t ncode)
{
	/* two frames, then one pointing at itself: the walk must stop */
	static const uint8_t stack[] = {
		0x10, 0x00, 0x02, 0x00, 0, 0, 0, 0, 0x05, 0x00, 0x01, 0x00, 0, 0, 0, 0,
		0x10, 0x00, 0x02, 0x00, 0, 0, 0, 0, 0x0a, 0x00, 0x01, 0x00, 0, 0, 0, 0,
	};
	char path[4096];
	FILE *f;
	unsigned i;

	len = 0;
	buf[len++] = cfg;
	buf[len++] = (uint8_t)nslots;
	buf[len++] = 0;			/* CPL 0 */
	buf[len++] = 8;			/* call-chain depth */
	put(cr3, 8);
	put(0x10000, 8);		/* RIP */
	put(0x20040, 8);		/* RSP */
	put(0x20000, 8);		/* RBP */
	put(5, 8);			/* RCX */
	put(0, 4);			/* no IDT */
	if (len != HDR)
		return (-1);
	slot(0x10000, 64, code, ncode);	/* first: fuzz_exact decodes it alone */
	slot(0x20000, 64, stack, sizeof(stack));
	if (tables != NULL)
		tables();
	for (i = 0; i < 24; i++) {	/* exits: where the plan goes */
		buf[len++] = 0;
		buf[len++] = (uint8_t)i;
	}
	snprintf(path, sizeof(path), "%s/%s", dir, name);
	if ((f = fopen(path, "wb")) == NULL || fwrite(buf, 1, len, f) != len) {
		perror(path);
		return (-1);
	}
	return (fclose(f) == 0 ? 0 : -1);
}

/* 4-level: PML4 0x1000, PDPT 0x2000, PD 0x3000, a 2 MiB page at 0 */
static void
tables_4level(void)
{
	entry(0x1000, 0x2003, 8);
	entry(0x2000, 0x3003, 8);
	entry(0x3000, 0x83, 8);
}

/* 5-level: PML5 0x5000 on top of the same */
static void
tables_5level(void)
{
	entry(0x5000, 0x1003, 8);
	tables_4level();
}

/* PAE: PDPTEs at 0x1000, PD 0x3000 with a PT at 0x4000 */
static void
tables_pae(void)
{
	uint8_t pt[8 * 0x21];
	unsigned i;

	entry(0x1000, 0x3001, 8);
	entry(0x3000, 0x4003, 8);
	memset(pt, 0, sizeof(pt));
	for (i = 0x10; i <= 0x20; i += 0x10)
		pt[i * 8] = 0x03, pt[i * 8 + 1] = (uint8_t)(i << 4), pt[i * 8 + 2] = (uint8_t)(i >> 4);
	slot(0x4000, sizeof(pt), pt, sizeof(pt));
}

/* 32-bit: PD at 0x1000 with a 4 MiB page at 0 (CR4.PSE) */
static void
tables_32(void)
{
	entry(0x1000, 0x83, 4);
}

int
main(int argc, char **argv)
{
	if (argc != 2) {
		fprintf(stderr, "usage: exact_seed DIR\n");
		return (2);
	}
	if (write_seed(argv[1], "long4-step", 0x13, 5, 0x1000, tables_4level, code64,
	    sizeof(code64)) != 0 ||
	    write_seed(argv[1], "long4-block", 0x73, 5, 0x1000, tables_4level, code64,
	    sizeof(code64)) != 0 ||
	    write_seed(argv[1], "long5-block", 0x77, 6, 0x5000, tables_5level, code64,
	    sizeof(code64)) != 0 ||
	    write_seed(argv[1], "pae", 0x02, 5, 0x1000, tables_pae, code32,
	    sizeof(code32)) != 0 ||
	    write_seed(argv[1], "paging32", 0x09, 3, 0x1000, tables_32, code32,
	    sizeof(code32)) != 0 ||
	    write_seed(argv[1], "nopaging", 0x00, 2, 0, NULL, code32, sizeof(code32)) != 0)
		return (1);
	return (0);
}
