/*
 * test_exact.c -- the "exact" source: Zydis decoding and classification,
 * the guest page walk, and reconstruction of retired instructions from
 * sequences of exits as this host (kvm_pvm) and real VMX/SVM give them.
 *
 * Guest memory is an 8 MiB buffer at guest-physical 0 with long-mode page
 * tables built in it: PML4 at 0x1000, PDPT at 0x2000, PD at 0x3000, and
 * either 2 MiB identity pages or, for the first 2 MiB, a 4 KiB page table
 * at 0x4000.  Code lives at 0x10000, the stack at 0x80000, the IDT at
 * 0x9000.  Every entry has its Accessed bit, as in a guest that has
 * used them, unless a test says otherwise.  Every count is asserted exactly.
 *
 * Last, the KVM glue's side of the source (needs /dev/kvm, skipped with
 * the reason without it): no vCPU without guest memory to read.
 */
#include <errno.h>
#include <fcntl.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <unistd.h>
#include <linux/kvm.h>

#include <cmocka.h>

#include <vpmu/kvm.h>
#include <vpmu/model.h>
#include <vpmu/source.h>
#include <vpmu/vcpu.h>
#include <vpmu/vpmu.h>

#include "decode.h"
#include "exact.h"
#include "gmem.h"

#define X		(&vpmu_source_exact)
#define RAM_SIZE	(8u << 20)
#define PML4		0x1000u
#define PDPT		0x2000u
#define PD		0x3000u
#define PT		0x4000u
#define IDT		0x9000u
#define CODE		0x10000u
#define STACK		0x80000u
#define PTE_P		0x1ull
#define PTE_RW		0x2ull
#define PTE_PS		0x80ull
#define PTE_A		0x20ull		/* the guest has used the entry */

#define STEP		VPMU_SYNC_STEP
#define RESYNC		VPMU_SYNC_RESYNC
/* The sync flags of a #GP(0) of the instruction at P, and of an NMI injected first. */
#define GP_FAULT	(VPMU_SYNC_EVENT | VPMU_SYNC_FAULT | 13u << 8)
#define NMI_INJECTED	(VPMU_SYNC_EVENT | 2u << 8)

struct tx {
	uint8_t *ram;
	struct vpmu_gmem mem;
	void *st;
	struct vpmu_regs r;	/* the registers of the next sync */
};

static void
pte(struct tx *t, uint64_t table, unsigned idx, uint64_t val)
{
	memcpy(t->ram + table + idx * 8, &val, 8);
}

/* 2 MiB identity pages for the first 8 MiB; 1 GiB page 0xC0000000 -> 0. */
static void
tables_2m(struct tx *t)
{
	unsigned i;

	pte(t, PML4, 0, PDPT | PTE_P | PTE_RW | PTE_A);
	pte(t, PDPT, 0, PD | PTE_P | PTE_RW | PTE_A);
	pte(t, PDPT, 3, 0 | PTE_P | PTE_RW | PTE_PS | PTE_A);
	for (i = 0; i < 4; i++)
		pte(t, PD, i, ((uint64_t)i << 21) | PTE_P | PTE_RW | PTE_PS | PTE_A);
}

/* 4 KiB pages below 2 MiB: identity, but 0x11000 unmapped, 0x20000 -> 0x30000, 0x21000 -> 0x50000. */
static void
tables_4k(struct tx *t)
{
	unsigned i;

	tables_2m(t);
	pte(t, PD, 0, PT | PTE_P | PTE_RW | PTE_A);
	for (i = 0; i < 512; i++)
		pte(t, PT, i, ((uint64_t)i << 12) | PTE_P | PTE_RW | PTE_A);
	pte(t, PT, 0x11, 0);
	pte(t, PT, 0x20, 0x30000 | PTE_P);
	pte(t, PT, 0x21, 0x50000 | PTE_P);
}

/* A 64-bit interrupt gate for vector vec at entry. */
static void
gate(struct tx *t, unsigned vec, uint64_t entry)
{
	uint8_t *g = t->ram + IDT + vec * 16;

	memset(g, 0, 16);
	g[0] = entry & 0xff;
	g[1] = (entry >> 8) & 0xff;
	g[2] = 0x08;			/* selector */
	g[5] = 0x8e;			/* P, DPL 0, interrupt gate */
	g[6] = (entry >> 16) & 0xff;
	g[7] = (entry >> 24) & 0xff;
	memcpy(g + 8, (uint32_t[]){ (uint32_t)(entry >> 32) }, 4);
}

static void
put(struct tx *t, uint64_t gpa, const uint8_t *b, size_t n)
{
	memcpy(t->ram + gpa, b, n);
}
#define BYTES(...)	(const uint8_t[]){ __VA_ARGS__ }, sizeof((const uint8_t[]){ __VA_ARGS__ })
#define PUT(t, gpa, ...)	put(t, gpa, BYTES(__VA_ARGS__))

static void
reinit(struct tx *t, unsigned cpi, unsigned ref_cpi, unsigned vendor)
{
	struct vpmu_exact_params prm = { .cpi = cpi, .ref_cpi = ref_cpi, .vendor = vendor,
	    .mode = VPMU_EXACT_STEP };

	if (t->st != NULL)
		X->fini(t->st);
	t->st = NULL;
	assert_int_equal(X->init(&t->st, 2, &prm), 0);
	vpmu__exact_set_memory(t->st, &t->mem);
}

static int
setup(void **state)
{
	struct tx *t = calloc(1, sizeof(*t));

	assert_non_null(t);
	t->ram = calloc(1, RAM_SIZE);
	assert_non_null(t->ram);
	vpmu__gmem_init(&t->mem);
	assert_int_equal(vpmu__gmem_add(&t->mem, 0, RAM_SIZE, t->ram), 0);
	tables_2m(t);
	reinit(t, 1, 1, 0);
	t->r.cr0 = VPMU_CR0_PE | VPMU_CR0_PG;
	t->r.cr3 = PML4;
	t->r.cr4 = VPMU_CR4_PAE;
	t->r.efer = VPMU_EFER_LMA | (1ull << 8);
	t->r.long_mode = true;
	t->r.rsp = STACK;
	t->r.idt_base = IDT;
	t->r.idt_limit = 256 * 16 - 1;
	*state = t;
	return (0);
}

static int
teardown(void **state)
{
	struct tx *t = *state;

	X->fini(t->st);
	free(t->ram);
	free(t);
	return (0);
}

/* Open and enable a counter on vCPU 0. */
static void *
ctr(struct tx *t, uint32_t event, uint32_t flags, uint32_t cmask, uint64_t raw)
{
	struct vpmu_event_spec ev = { .event = event, .flags = flags, .cmask = cmask, .raw = raw };
	void *c = NULL;

	assert_int_equal(X->open(t->st, 0, 0, &ev, &c), 0);
	assert_int_equal(X->enable(t->st, c), 0);
	return (c);
}

static uint64_t
val(struct tx *t, void *c)
{
	struct vpmu_count n;

	assert_int_equal(X->read(t->st, c, &n), 0);
	return (n.value);
}

static void
at(struct tx *t, uint64_t rip, unsigned flags)
{
	t->r.rip = rip;
	vpmu__exact_sync(t->st, 0, &t->r, flags);
}

/* Single-step exits at each address in turn. */
static void
steps(struct tx *t, const uint64_t *rip, size_t n)
{
	while (n-- > 0)
		at(t, *rip++, STEP);
}
#define STEPS(t, ...)	steps(t, (const uint64_t[]){ __VA_ARGS__ }, \
			    sizeof((const uint64_t[]){ __VA_ARGS__ }) / sizeof(uint64_t))

static struct vpmu_exact_stats
stats(struct tx *t)
{
	struct vpmu_exact_stats s;

	assert_int_equal(vpmu__exact_get_stats(t->st, 0, &s), 0);
	return (s);
}

/* ---- decode ---------------------------------------------------------------- */

#define F_BR	0x01		/* branch */
#define F_COND	0x02		/* conditional */
#define F_FAR	0x04		/* far return */
#define F_REP	0x08		/* REP string */
#define F_SP	0x10		/* writes RSP */

/* Hand-assembled instructions at 0x1000; target for direct branches, slot for returns. */
static const struct {
	const char *name;
	enum vpmu_decode_mode mode;
	uint8_t b[8], n;
	uint8_t len, flow, flags, slot;
	uint64_t target;
} dcases[] = {
	{ "nop", VPMU_DECODE_64, { 0x90 }, 1, 1, VPMU_FLOW_NEXT, 0, 0, 0 },
	{ "mov", VPMU_DECODE_64, { 0x48, 0x89, 0xc3 }, 3, 3, VPMU_FLOW_NEXT, 0, 0, 0 },
	{ "jmp", VPMU_DECODE_64, { 0xeb, 0x05 }, 2, 2, VPMU_FLOW_DIRECT, F_BR, 0, 0x1007 },
	{ "jnz", VPMU_DECODE_64, { 0x75, 0xfe }, 2, 2, VPMU_FLOW_DIRECT, F_BR | F_COND, 0, 0x1000 },
	{ "loop", VPMU_DECODE_64, { 0xe2, 0xfc }, 2, 2, VPMU_FLOW_DIRECT, F_BR | F_COND, 0, 0xffe },
	{ "jrcxz", VPMU_DECODE_64, { 0xe3, 0x00 }, 2, 2, VPMU_FLOW_DIRECT, F_BR | F_COND, 0, 0x1002 },
	{ "call", VPMU_DECODE_64, { 0xe8, 0x10, 0, 0, 0 }, 5, 5, VPMU_FLOW_DIRECT, F_BR | F_SP, 0, 0x1015 },
	{ "ret", VPMU_DECODE_64, { 0xc3 }, 1, 1, VPMU_FLOW_STACK, F_BR | F_SP, 8, 0 },
	{ "iretq", VPMU_DECODE_64, { 0x48, 0xcf }, 2, 2, VPMU_FLOW_STACK, F_BR | F_FAR | F_SP, 8, 0 },
	{ "iretd", VPMU_DECODE_32, { 0xcf }, 1, 1, VPMU_FLOW_STACK, F_BR | F_FAR | F_SP, 4, 0 },
	{ "out", VPMU_DECODE_64, { 0xe6, 0xf4 }, 2, 2, VPMU_FLOW_NEXT, 0, 0, 0 },
	{ "stosb", VPMU_DECODE_64, { 0xf3, 0xaa }, 2, 2, VPMU_FLOW_NEXT, F_REP, 0, 0 },
	{ "scasb", VPMU_DECODE_64, { 0xf2, 0xae }, 2, 2, VPMU_FLOW_NEXT, F_REP, 0, 0 },
	{ "stosb", VPMU_DECODE_64, { 0xaa }, 1, 1, VPMU_FLOW_NEXT, 0, 0, 0 },
	{ "wrmsr", VPMU_DECODE_64, { 0x0f, 0x30 }, 2, 2, VPMU_FLOW_NEXT, 0, 0, 0 },
	{ "lfence", VPMU_DECODE_64, { 0x0f, 0xae, 0xe8 }, 3, 3, VPMU_FLOW_NEXT, 0, 0, 0 },
	{ "syscall", VPMU_DECODE_64, { 0x0f, 0x05 }, 2, 2, VPMU_FLOW_INDIRECT, F_BR, 0, 0 },
	{ "int3", VPMU_DECODE_64, { 0xcc }, 1, 1, VPMU_FLOW_INDIRECT, F_BR, 0, 0 },
	{ "jmp", VPMU_DECODE_64, { 0xff, 0xe0 }, 2, 2, VPMU_FLOW_INDIRECT, F_BR, 0, 0 },	/* jmp rax */
	{ "xbegin", VPMU_DECODE_64, { 0xc7, 0xf8, 0, 0, 0, 0 }, 6, 6, VPMU_FLOW_NEXT, 0, 0, 0 },
	{ "push", VPMU_DECODE_64, { 0x50 }, 1, 1, VPMU_FLOW_NEXT, F_SP, 0, 0 },
	/* EIP wraps: 0x1005 - 0x2000 (found by fuzz_exact) */
	{ "jmp", VPMU_DECODE_32, { 0xe9, 0x00, 0xe0, 0xff, 0xff }, 5, 5, VPMU_FLOW_DIRECT, F_BR, 0,
	    0xfffff005 },
};

static void
decode_classifies_instructions(void **state)
{
	struct vpmu_insn in;
	unsigned f;
	size_t i;

	(void)state;
	for (i = 0; i < sizeof(dcases) / sizeof(dcases[0]); i++) {
		assert_int_equal(vpmu__decode(dcases[i].mode, 0x1000, dcases[i].b, dcases[i].n, &in), 0);
		f = (in.branch ? F_BR : 0) | (in.conditional ? F_COND : 0) |
		    (in.far_return ? F_FAR : 0) | (in.rep_string ? F_REP : 0) |
		    (in.writes_sp ? F_SP : 0);
		if (in.len != dcases[i].len || in.flow != dcases[i].flow || f != dcases[i].flags ||
		    in.slot != dcases[i].slot || in.target != dcases[i].target ||
		    strcmp(vpmu__decode_name(in.mnemonic), dcases[i].name) != 0)
			fail_msg("%s: got %s len %u flow %u flags %#x slot %u target %#llx",
			    dcases[i].name, vpmu__decode_name(in.mnemonic), in.len, in.flow, f,
			    in.slot, (unsigned long long)in.target);
	}
	assert_int_equal(vpmu__decode(VPMU_DECODE_64, 0, BYTES(0xe8, 0x00), &in), ENODATA);
	assert_int_equal(vpmu__decode(VPMU_DECODE_64, 0, BYTES(0x06), &in), EILSEQ);
	assert_int_equal(vpmu__decode(VPMU_DECODE_64, 0, NULL, 1, &in), EINVAL);
}

/* ---- guest memory ------------------------------------------------------------ */

/*
 * The decode cache: a hit only where the bytes are the ones decoded, in
 * the same mode; rewritten code is decoded again, by the cache and by the
 * reconstruction that reads through it.
 */
static void
decode_cache_checks_the_bytes(void **state)
{
	struct tx *t = *state;
	struct vpmu_gmem_paging pg = { t->r.cr0, PML4, t->r.cr4, t->r.efer };
	struct vpmu_dcache *dc = calloc(1, sizeof(*dc));
	struct vpmu_insn in;
	void *br;

	assert_non_null(dc);
	memcpy(t->ram + CODE, (const uint8_t[]){ 0x48, 0xff, 0xc8 }, 3);	/* dec rax */
	assert_int_equal(vpmu__decode_gva_cached(dc, &t->mem, &pg, VPMU_DECODE_64, CODE, &in,
	    NULL), 0);
	assert_int_equal(in.len, 3);
	assert_int_equal(dc->misses, 1);
	assert_int_equal(vpmu__decode_gva_cached(dc, &t->mem, &pg, VPMU_DECODE_64, CODE, &in,
	    NULL), 0);
	assert_int_equal(in.len, 3);
	assert_int_equal(dc->hits, 1);
	assert_string_equal(vpmu__decode_name(in.mnemonic), "dec");
	/* 32-bit mode: 48 is DEC EAX there, one byte */
	assert_int_equal(vpmu__decode_gva_cached(dc, &t->mem, &pg, VPMU_DECODE_32, CODE, &in,
	    NULL), 0);
	assert_int_equal(in.len, 1);
	assert_int_equal(dc->misses, 2);
	/* the third byte rewritten: decoded again */
	t->ram[CODE + 2] = 0xc0;					/* inc rax */
	assert_int_equal(vpmu__decode_gva_cached(dc, &t->mem, &pg, VPMU_DECODE_64, CODE, &in,
	    NULL), 0);
	assert_string_equal(vpmu__decode_name(in.mnemonic), "inc");
	assert_int_equal(dc->misses, 3);
	assert_int_equal(dc->hits, 1);
	/* the same slot for another address: both decode right */
	memcpy(t->ram + CODE + VPMU_DCACHE_SIZE * 0x101ull, (const uint8_t[]){ 0x90 }, 1);
	assert_int_equal(vpmu__decode_gva_cached(dc, &t->mem, &pg, VPMU_DECODE_64,
	    CODE + VPMU_DCACHE_SIZE * 0x101ull, &in, NULL), 0);
	assert_string_equal(vpmu__decode_name(in.mnemonic), "nop");
	assert_int_equal(vpmu__decode_gva_cached(dc, &t->mem, &pg, VPMU_DECODE_64, CODE, &in,
	    NULL), 0);
	assert_string_equal(vpmu__decode_name(in.mnemonic), "inc");
	/* unreadable: no entry used */
	assert_int_equal(vpmu__decode_gva_cached(dc, &t->mem, &pg, VPMU_DECODE_64, RAM_SIZE, &in,
	    NULL), EFAULT);
	free(dc);

	/* The source: two NOPs stepped, then the first rewritten into JMP $+2. */
	br = ctr(t, VPMU_EV_BRANCHES, VPMU_EVF_OS, 0, 0);
	memcpy(t->ram + CODE, (const uint8_t[]){ 0x90, 0x90, 0x90, 0x90 }, 4);
	at(t, CODE, VPMU_SYNC_RESYNC);
	STEPS(t, CODE + 1, CODE + 2);
	assert_int_equal(val(t, br), 0);
	at(t, CODE, VPMU_SYNC_RESYNC);
	memcpy(t->ram + CODE, (const uint8_t[]){ 0xeb, 0x00 }, 2);
	STEPS(t, CODE + 2);
	assert_int_equal(val(t, br), 1);
	assert_int_equal(stats(t).decode_hits, 0);
	at(t, CODE, VPMU_SYNC_RESYNC);
	STEPS(t, CODE + 2);
	assert_int_equal(val(t, br), 2);
	assert_int_equal(stats(t).retired, 4);
	assert_int_equal(stats(t).decode_hits, 1);
}

/* The page memo: one walk per page, kept until emptied; reads across pages walk. */
static void
gmem_memo_keeps_one_page(void **state)
{
	struct tx *t = *state;
	struct vpmu_gmem_paging pg = { t->r.cr0, PML4, t->r.cr4, t->r.efer };
	struct vpmu_gmem_memo memo = { 0 };
	uint8_t buf[4];

	tables_4k(t);
	t->ram[0x30010] = 0x11;
	t->ram[0x50010] = 0x55;
	t->ram[0x30ffe] = 1;
	t->ram[0x30fff] = 2;
	t->ram[0x50000] = 3;
	assert_int_equal(vpmu__gmem_read_gva_memo(&t->mem, &pg, &memo, 0x20010, buf, 1), 1);
	assert_int_equal(buf[0], 0x11);
	assert_true(memo.valid);
	assert_int_equal(memo.page, 0x20000);
	/* remapped without emptying the memo: still the page it holds */
	pte(t, PT, 0x20, 0x50000 | PTE_P);
	assert_int_equal(vpmu__gmem_read_gva_memo(&t->mem, &pg, &memo, 0x20010, buf, 1), 1);
	assert_int_equal(buf[0], 0x11);
	memo.valid = false;
	assert_int_equal(vpmu__gmem_read_gva_memo(&t->mem, &pg, &memo, 0x20010, buf, 1), 1);
	assert_int_equal(buf[0], 0x55);
	/* other paging registers: walked again */
	pte(t, PT, 0x20, 0x30000 | PTE_P);
	pg.cr4 |= VPMU_CR4_PKE;
	assert_int_equal(vpmu__gmem_read_gva_memo(&t->mem, &pg, &memo, 0x20010, buf, 1), 1);
	assert_int_equal(buf[0], 0x11);
	/* across a page boundary, and into an unmapped page */
	assert_int_equal(vpmu__gmem_read_gva_memo(&t->mem, &pg, &memo, 0x20ffe, buf, 3), 3);
	assert_memory_equal(buf, ((const uint8_t[]){ 1, 2, 3 }), 3);
	assert_int_equal(vpmu__gmem_read_gva_memo(&t->mem, &pg, &memo, 0x11000, buf, 1), 0);
	assert_false(memo.valid);
}

static void
gmem_slots_and_walks(void **state)
{
	struct tx *t = *state;
	struct vpmu_gmem m;
	struct vpmu_gmem_paging pg = { t->r.cr0, PML4, t->r.cr4, t->r.efer };
	uint8_t a[64], b[64], buf[8];
	uint64_t gpa;
	unsigned i;

	vpmu__gmem_init(&m);
	assert_int_equal(vpmu__gmem_add(&m, 0x1000, 64, a), 0);
	assert_int_equal(vpmu__gmem_add(&m, 0x1040, 64, b), 0);
	assert_int_equal(vpmu__gmem_add(&m, 0x1020, 8, a), EINVAL);	/* overlap */
	assert_int_equal(vpmu__gmem_add(&m, 0x0, 0, a), EINVAL);
	assert_int_equal(vpmu__gmem_add(&m, ~0ull - 4, 64, a), EINVAL);	/* wraps */
	memset(a, 0xaa, sizeof(a));
	memset(b, 0xbb, sizeof(b));
	assert_int_equal(vpmu__gmem_read_gpa(&m, 0x103c, buf, 8), 8);	/* across slots */
	assert_int_equal(buf[3], 0xaa);
	assert_int_equal(buf[4], 0xbb);
	assert_int_equal(vpmu__gmem_read_gpa(&m, 0x107c, buf, 8), 4);	/* into a hole */
	for (i = 2; i < VPMU_GMEM_MAX_SLOTS; i++)
		assert_int_equal(vpmu__gmem_add(&m, 0x100000 * i, 16, a), 0);
	assert_int_equal(vpmu__gmem_add(&m, 0x10000000, 16, a), ENOSPC);

	/* 2 MiB and 1 GiB pages */
	assert_int_equal(vpmu__gmem_translate(&t->mem, &pg, 0x234567, &gpa), 0);
	assert_int_equal(gpa, 0x234567);
	assert_int_equal(vpmu__gmem_translate(&t->mem, &pg, 0xC0012345, &gpa), 0);
	assert_int_equal(gpa, 0x12345);
	assert_int_equal(vpmu__gmem_translate(&t->mem, &pg, 0x40000000, &gpa), EFAULT);
	assert_int_equal(vpmu__gmem_translate(&t->mem, &pg, 0x800000000000ull, &gpa), EFAULT);
	/* 4 KiB pages: a hole, and a read across two pages mapped apart */
	tables_4k(t);
	assert_int_equal(vpmu__gmem_translate(&t->mem, &pg, 0x11008, &gpa), EFAULT);
	assert_int_equal(vpmu__gmem_translate(&t->mem, &pg, 0x20010, &gpa), 0);
	assert_int_equal(gpa, 0x30010);
	t->ram[0x30ffe] = 1;
	t->ram[0x30fff] = 2;
	t->ram[0x50000] = 3;
	assert_int_equal(vpmu__gmem_read_gva(&t->mem, &pg, 0x20ffe, buf, 3), 3);
	assert_memory_equal(buf, ((const uint8_t[]){ 1, 2, 3 }), 3);
	assert_int_equal(vpmu__gmem_read_gva(&t->mem, &pg, 0x10ffe, buf, 8), 2);
	/* paging off: identity, 32 bits */
	pg.cr0 = VPMU_CR0_PE;
	assert_int_equal(vpmu__gmem_translate(&t->mem, &pg, 0x100001234ull, &gpa), 0);
	assert_int_equal(gpa, 0x1234);
	/* 32-bit paging with a 4 MiB page (PSE), PD at 0x5000 */
	pg = (struct vpmu_gmem_paging){ VPMU_CR0_PE | VPMU_CR0_PG, 0x5000, VPMU_CR4_PSE, 0 };
	memcpy(t->ram + 0x5000 + 1 * 4, (uint32_t[]){ 0x00000083 }, 4);	/* 4M-8M -> 0 */
	assert_int_equal(vpmu__gmem_translate(&t->mem, &pg, 0x00412345, &gpa), 0);
	assert_int_equal(gpa, 0x12345);
}

/* ---- reconstruction -------------------------------------------------------- */

static void
steps_count_instructions_and_branches(void **state)
{
	struct tx *t = *state;
	void *ins, *br, *cyc, *ref;

	PUT(t, CODE, 0x90, 0x48, 0x89, 0xc3, 0xeb, 0x00, 0x74, 0x02, 0x90, 0x90, 0x90);
	ins = ctr(t, VPMU_EV_INSTRUCTIONS, 0, 0, 0);
	br = ctr(t, VPMU_EV_BRANCHES, 0, 0, 0);
	cyc = ctr(t, VPMU_EV_CYCLES, 0, 0, 0);
	ref = ctr(t, VPMU_EV_REF_CYCLES, 0, 0, 0);
	assert_true(vpmu__exact_wants_step(t->st, 0));
	assert_false(vpmu__exact_wants_step(t->st, 1));
	at(t, CODE, RESYNC);
	STEPS(t, CODE + 1, CODE + 4, CODE + 6, CODE + 10, CODE + 11);	/* nop mov jmp jz nop */
	assert_int_equal(val(t, ins), 5);
	assert_int_equal(val(t, br), 2);
	assert_int_equal(val(t, cyc), 5);
	assert_int_equal(val(t, ref), 5);
	assert_int_equal(stats(t).retired, 5);
	assert_int_equal(stats(t).lost_traps, 0);
	assert_int_equal(stats(t).syncs, 6);
	/* a disabled counter stops; RESYNC counts nothing */
	assert_int_equal(X->disable(t->st, br), 0);
	at(t, CODE + 4, RESYNC);
	at(t, CODE + 6, STEP);
	assert_int_equal(val(t, ins), 6);
	assert_int_equal(val(t, br), 2);
}

static void
cpi_scales_cycles(void **state)
{
	struct tx *t = *state;
	void *ins, *cyc, *ref;

	reinit(t, 3, 2, 0);
	PUT(t, CODE, 0x90, 0x90, 0x90, 0x90, 0x90);
	ins = ctr(t, VPMU_EV_INSTRUCTIONS, 0, 0, 0);
	cyc = ctr(t, VPMU_EV_CYCLES, 0, 0, 0);
	ref = ctr(t, VPMU_EV_REF_CYCLES, 0, 0, 0);
	at(t, CODE, RESYNC);
	STEPS(t, CODE + 2, CODE + 5);		/* nops sharing exits */
	assert_int_equal(val(t, ins), 5);
	assert_int_equal(val(t, cyc), 15);
	assert_int_equal(val(t, ref), 10);
}

/*
 * ref_cpi 0: reference cycles are the TSC's advance between the exits
 * (between two readings of it around each sync here), at the levels they
 * count by the run's first CPL, none over a halted run; no counter mask.
 */
static void
ref_cycles_follow_the_tsc(void **state)
{
	struct tx *t = *state;
	struct vpmu_event_spec masked = { .event = VPMU_EV_REF_CYCLES, .cmask = 2 };
	void *ref, *usr, *ins, *c = NULL;
	uint64_t t0, t1, t2, t3, v, u;

	reinit(t, 1, 0, 0);
	PUT(t, CODE, 0x90, 0x90, 0x90);
	assert_int_equal(X->supports(t->st, &masked, NULL, 0), EOPNOTSUPP);
	assert_int_equal(X->open(t->st, 0, 0, &masked, &c), EOPNOTSUPP);
	t0 = __builtin_ia32_rdtsc();
	ref = ctr(t, VPMU_EV_REF_CYCLES, 0, 0, 0);
	usr = ctr(t, VPMU_EV_REF_CYCLES, VPMU_EVF_USR, 0, 0);
	ins = ctr(t, VPMU_EV_INSTRUCTIONS, 0, 0, 0);
	t1 = __builtin_ia32_rdtsc();
	at(t, CODE, RESYNC);
	STEPS(t, CODE + 1, CODE + 2);
	t2 = __builtin_ia32_rdtsc();
	v = val(t, ref);		/* a read counts up to now */
	t3 = __builtin_ia32_rdtsc();
	assert_true(v >= t2 - t1 && v <= t3 - t0);
	assert_int_equal(val(t, usr), 0);	/* CPL 0 */
	assert_int_equal(val(t, ins), 2);
	/* a halted run adds nothing; the next run counts from its start */
	assert_int_equal(X->disable(t->st, ref), 0);
	v = val(t, ref);
	assert_int_equal(X->enable(t->st, ref), 0);
	at(t, CODE + 2, STEP | VPMU_SYNC_HALTED);
	u = val(t, ref) - v;
	t0 = __builtin_ia32_rdtsc();
	assert_true(u <= t0 - t3);
	/* user mode counts for the USR counter */
	t->r.cpl = 3;
	at(t, CODE + 3, RESYNC);
	t1 = __builtin_ia32_rdtsc();
	at(t, CODE + 3, STEP);
	t2 = __builtin_ia32_rdtsc();
	u = val(t, usr);
	t3 = __builtin_ia32_rdtsc();
	assert_true(u >= t2 - t1 && u <= t3 - t0);
	/* ref_cpi 1: one a retired instruction, as before */
	reinit(t, 1, 1, 0);
	t->r.cpl = 0;
	ref = ctr(t, VPMU_EV_REF_CYCLES, 0, 0, 0);
	at(t, CODE, RESYNC);
	STEPS(t, CODE + 1, CODE + 2);
	assert_int_equal(val(t, ref), 2);
}

/* kvm_pvm: OUT has no trap of its own; the IO exit has RIP past it. */
static void
out_shares_its_exit(void **state)
{
	struct tx *t = *state;
	void *ins;

	PUT(t, CODE, 0xe6, 0xf4, 0x90, 0x90, 0xe6, 0xf4, 0x90, 0x90);
	ins = ctr(t, VPMU_EV_INSTRUCTIONS, 0, 0, 0);
	at(t, CODE, RESYNC);
	at(t, CODE + 3, STEP);			/* out + nop, one exit */
	assert_int_equal(val(t, ins), 2);
	assert_int_equal(stats(t).lost_traps, 1);
	at(t, CODE + 4, STEP);			/* nop */
	at(t, CODE + 6, 0);			/* KVM_EXIT_IO after the out */
	at(t, CODE + 7, STEP);			/* nop */
	assert_int_equal(val(t, ins), 5);
	assert_int_equal(stats(t).lost_traps, 1);
}

/* LFENCE, LFENCE, NOP retire under one exit on kvm_pvm. */
static void
fences_share_an_exit(void **state)
{
	struct tx *t = *state;
	void *ins;

	PUT(t, CODE, 0x0f, 0xae, 0xe8, 0x0f, 0xae, 0xe8, 0x90, 0x0f, 0xae, 0xf0, 0x90);
	ins = ctr(t, VPMU_EV_INSTRUCTIONS, 0, 0, 0);
	at(t, CODE, RESYNC);
	at(t, CODE + 7, STEP);
	at(t, CODE + 11, STEP);			/* mfence + nop */
	assert_int_equal(val(t, ins), 5);
	assert_int_equal(stats(t).lost_traps, 3);
}

/* IRETQ shares its exit with the instruction at the return address. */
static void
iretq_follows_the_stack(void **state)
{
	struct tx *t = *state;
	void *ins, *br, *usr, *os;
	uint64_t frame[5] = { CODE + 0x100, 0x2b, 0x202, STACK + 0x1000, 0x33 };

	PUT(t, CODE, 0x48, 0xcf);
	PUT(t, CODE + 0x100, 0x90, 0x90, 0xeb, 0xfe);
	memcpy(t->ram + STACK, frame, sizeof(frame));
	ins = ctr(t, VPMU_EV_INSTRUCTIONS, 0, 0, 0);
	br = ctr(t, VPMU_EV_BRANCHES, 0, 0, 0);
	usr = ctr(t, VPMU_EV_INSTRUCTIONS, VPMU_EVF_USR, 0, 0);
	os = ctr(t, VPMU_EV_INSTRUCTIONS, VPMU_EVF_OS, 0, 0);
	at(t, CODE, RESYNC);
	t->r.rsp = STACK + 0x1000;
	t->r.cpl = 3;				/* IRETQ to CPL 3 */
	at(t, CODE + 0x101, STEP);
	assert_int_equal(val(t, ins), 2);
	assert_int_equal(val(t, br), 1);
	assert_int_equal(val(t, os), 1);	/* the iretq */
	assert_int_equal(val(t, usr), 1);	/* the nop after it */
	STEPS(t, CODE + 0x102, CODE + 0x102, CODE + 0x102);	/* nop, then jmp $ twice */
	assert_int_equal(val(t, ins), 5);
	assert_int_equal(val(t, br), 3);
	assert_int_equal(val(t, usr), 4);
	/* where IRETQ traps on its own (VMX, SVM) */
	t->r.cpl = 0;
	t->r.rsp = STACK;
	at(t, CODE, RESYNC);
	at(t, CODE + 0x100, STEP);
	assert_int_equal(val(t, ins), 6);
	assert_int_equal(val(t, os), 2);
	assert_int_equal(stats(t).user_unseen, 0);	/* CPL 3 code seen, every step */
}

/*
 * User-mode code that runs with no exit of its own (kvm_pvm: CPL 3 is
 * neither stepped nor stopped at breakpoints) is counted in user_unseen,
 * once per exit that follows it; code that was seen, or that never left
 * CPL 0, is not.
 */
static void
user_code_unseen_is_counted(void **state)
{
	struct tx *t = *state;
	uint64_t frame[5] = { CODE + 0x100, 0x2b, 0x202, STACK + 0x1000, 0x33 };
	void *ins;

	PUT(t, CODE, 0x48, 0xcf);				/* iretq */
	PUT(t, CODE + 0x100, 0xb9, 0xe8, 0x03, 0x00, 0x00,	/* mov $1000, %ecx */
	    0xff, 0xc9, 0x75, 0xfc, 0xf4);			/* 1: dec; jnz 1b; hlt */
	PUT(t, CODE + 0x200, 0x90, 0x90);			/* the #GP handler */
	PUT(t, CODE + 0x300, 0x48, 0x0f, 0x07);			/* sysretq */
	PUT(t, CODE + 0x400, 0x90, 0x90, 0x90, 0xe6, 0x80);	/* nop x3; out %al, $0x80 */
	memcpy(t->ram + STACK, frame, sizeof(frame));
	ins = ctr(t, VPMU_EV_INSTRUCTIONS, 0, 0, 0);
	/* IRETQ to CPL 3, back at CPL 0 in the handler: 1 */
	at(t, CODE, RESYNC);
	at(t, CODE + 0x201, STEP);
	assert_int_equal(stats(t).user_unseen, 1);
	/* IRETQ to CPL 0 (RPL 0 in the frame), no path: no user code */
	frame[1] = 0x08;
	memcpy(t->ram + STACK, frame, sizeof(frame));
	at(t, CODE, RESYNC);
	at(t, CODE + 0x201, STEP);
	assert_int_equal(stats(t).user_unseen, 1);
	assert_int_equal(stats(t).unresolved, 2);
	/* SYSRET, back at CPL 0: the step in the kernel vouches for nothing */
	at(t, CODE + 0x300, RESYNC);
	at(t, CODE + 0x201, STEP);
	assert_int_equal(stats(t).user_unseen, 2);
	/* from an exit at CPL 3, a straight run to the next one there: seen */
	t->r.cpl = 3;
	at(t, CODE + 0x400, RESYNC);
	at(t, CODE + 0x405, 0);
	assert_int_equal(stats(t).user_unseen, 2);
	/* from there, a loop and back at CPL 0, even by a step: unseen */
	at(t, CODE + 0x100, RESYNC);
	t->r.cpl = 0;
	at(t, CODE + 0x201, STEP);
	assert_int_equal(stats(t).user_unseen, 3);
	/* CPL 0 only: never */
	at(t, CODE + 0x100, RESYNC);
	at(t, CODE + 0x201, STEP);
	assert_int_equal(stats(t).user_unseen, 3);
	/* nothing enabled: nothing noted (the first case again) */
	frame[1] = 0x2b;
	memcpy(t->ram + STACK, frame, sizeof(frame));
	assert_int_equal(X->disable(t->st, ins), 0);
	at(t, CODE, RESYNC);
	at(t, CODE + 0x201, STEP);
	assert_int_equal(stats(t).user_unseen, 3);
}

/* REP strings: chunk exits at the same RIP count nothing; the string once. */
static void
rep_string_retires_once(void **state)
{
	struct tx *t = *state;
	void *ins;

	PUT(t, CODE, 0xb9, 0x00, 0x10, 0x00, 0x00, 0xf3, 0xaa, 0x90, 0xf3, 0xaa, 0x90);
	ins = ctr(t, VPMU_EV_INSTRUCTIONS, 0, 0, 0);
	at(t, CODE, RESYNC);
	t->r.rcx = 0x1000;
	at(t, CODE + 5, STEP);			/* mov ecx */
	t->r.rcx = 0xc00;
	at(t, CODE + 5, STEP);			/* chunks */
	t->r.rcx = 0x800;
	at(t, CODE + 5, STEP);
	t->r.rcx = 0;
	at(t, CODE + 5, STEP);
	at(t, CODE + 7, STEP);			/* rep stosb */
	assert_int_equal(val(t, ins), 2);
	at(t, CODE + 11, STEP);			/* nop, rep stosb (rcx 0) and nop share */
	assert_int_equal(val(t, ins), 5);
}

/* A trapped WRMSR answered with #GP: the handler's first instruction retires. */
static void
faulted_wrmsr_counts_the_handler(void **state)
{
	struct tx *t = *state;
	void *ins, *br;
	struct vpmu_exact_stats s;

	PUT(t, CODE, 0x90, 0x0f, 0x30, 0x90);
	PUT(t, CODE + 0x200, 0x48, 0x83, 0xc4, 0x08, 0x48, 0x83, 0x04, 0x24, 0x02);
	gate(t, 13, CODE + 0x200);
	ins = ctr(t, VPMU_EV_INSTRUCTIONS, 0, 0, 0);
	br = ctr(t, VPMU_EV_BRANCHES, 0, 0, 0);
	at(t, CODE, RESYNC);
	at(t, CODE + 1, STEP);			/* nop */
	at(t, CODE + 1, 0);			/* KVM_EXIT_X86_WRMSR */
	at(t, CODE + 0x204, GP_FAULT);	/* add rsp, 8 */
	assert_int_equal(val(t, ins), 2);
	at(t, CODE + 0x209, STEP);		/* addq [rsp], 2 */
	assert_int_equal(val(t, ins), 3);
	/* the handler starts with a jump: one branch */
	PUT(t, CODE + 0x300, 0xeb, 0x0e);
	gate(t, 13, CODE + 0x300);
	at(t, CODE + 1, RESYNC);
	at(t, CODE + 0x310, GP_FAULT);
	assert_int_equal(val(t, ins), 4);
	assert_int_equal(val(t, br), 1);
	/* no IDT to read: one non-branch */
	t->r.idt_limit = 0;
	at(t, CODE + 1, RESYNC);
	at(t, CODE + 0x310, GP_FAULT);
	assert_int_equal(val(t, ins), 5);
	assert_int_equal(val(t, br), 1);
	s = stats(t);
	assert_int_equal(s.unresolved, 0);
	assert_int_equal(s.fetch_failures, 0);
}

/* KVM_NMI before a run: the interrupted instruction did not execute. */
static void
nmi_injection_counts_the_handler(void **state)
{
	struct tx *t = *state;
	void *ins;

	PUT(t, CODE, 0xff, 0xc0, 0xff, 0xc0, 0xff, 0xc0);	/* inc eax x3 */
	PUT(t, CODE + 0x400, 0x4c, 0x8b, 0x14, 0x24, 0x90, 0x48, 0xcf);
	gate(t, 2, CODE + 0x400);
	memcpy(t->ram + STACK - 40, (uint64_t[]){ CODE + 2, 0x08, 0x2, STACK, 0x10 }, 40);
	ins = ctr(t, VPMU_EV_INSTRUCTIONS, 0, 0, 0);
	at(t, CODE, RESYNC);
	at(t, CODE + 2, STEP);			/* inc */
	t->r.rsp = STACK - 40;
	at(t, CODE + 0x404, NMI_INJECTED);	/* mov r10, [rsp] */
	assert_int_equal(val(t, ins), 2);
	at(t, CODE + 0x405, STEP);		/* nop */
	t->r.rsp = STACK;
	at(t, CODE + 4, STEP);			/* iretq + inc at CODE + 2 */
	assert_int_equal(val(t, ins), 5);
	/* NMIs blocked: the injected NMI waits, the inc retires as usual */
	at(t, CODE + 6, NMI_INJECTED);
	assert_int_equal(val(t, ins), 6);
	assert_int_equal(stats(t).unresolved, 0);
}

/*
 * An NMI delivered before an IRETQ that lost its trap: the NMI handler's
 * IRETQ returns to that IRETQ, which returns in the same step.  The first
 * IRETQ's frame gives the RSP where the second finds its own (found on
 * this host by injecting an NMI at every exit of a guest loop).
 */
static void
nmi_before_iretq_follows_both_frames(void **state)
{
	struct tx *t = *state;
	void *ins, *br;

	PUT(t, CODE, 0xff, 0xc0, 0xff, 0xc0);			/* inc eax x2 */
	PUT(t, CODE + 0x500, 0x48, 0xcf);			/* iretq */
	PUT(t, CODE + 0x400, 0x4c, 0x8b, 0x14, 0x24, 0x90, 0x48, 0xcf);
	gate(t, 2, CODE + 0x400);
	memcpy(t->ram + STACK - 40, (uint64_t[]){ CODE + 2, 0x08, 0x2, STACK, 0x10 }, 40);
	memcpy(t->ram + STACK - 88, (uint64_t[]){ CODE + 0x500, 0x08, 0x2, STACK - 40, 0x10 }, 40);
	ins = ctr(t, VPMU_EV_INSTRUCTIONS, 0, 0, 0);
	br = ctr(t, VPMU_EV_BRANCHES, 0, 0, 0);
	t->r.rsp = STACK - 40;
	at(t, CODE + 0x500, RESYNC);
	t->r.rsp = STACK - 88;
	at(t, CODE + 0x404, NMI_INJECTED);	/* mov r10, [rsp] */
	at(t, CODE + 0x405, STEP);			/* nop */
	t->r.rsp = STACK;
	at(t, CODE + 4, STEP);				/* iretq, iretq, inc */
	assert_int_equal(val(t, ins), 5);
	assert_int_equal(val(t, br), 2);
	assert_int_equal(stats(t).lost_traps, 2);
}

static void
usr_os_filter_on_cpl(void **state)
{
	struct tx *t = *state;
	void *both, *usr, *os, *none;

	PUT(t, CODE, 0x90, 0x90, 0x90, 0x90);
	both = ctr(t, VPMU_EV_INSTRUCTIONS, VPMU_EVF_USR | VPMU_EVF_OS, 0, 0);
	usr = ctr(t, VPMU_EV_INSTRUCTIONS, VPMU_EVF_USR, 0, 0);
	os = ctr(t, VPMU_EV_INSTRUCTIONS, VPMU_EVF_OS, 0, 0);
	none = ctr(t, VPMU_EV_INSTRUCTIONS, 0, 0, 0);
	at(t, CODE, RESYNC);
	at(t, CODE + 1, STEP);			/* CPL 0 */
	t->r.cpl = 3;
	STEPS(t, CODE + 2, CODE + 3);		/* CPL 0 (the cpl at P), CPL 3 */
	t->r.cpl = 1;
	at(t, CODE + 4, STEP);			/* CPL 3 */
	assert_int_equal(val(t, both), 4);
	assert_int_equal(val(t, none), 4);
	assert_int_equal(val(t, os), 2);
	assert_int_equal(val(t, usr), 2);
}

/* nop, jmp, jmp, nop, jmp, nop: 6 instructions, 3 branches in 2 runs. */
static void
run_mixed(struct tx *t)
{
	PUT(t, CODE, 0x90, 0xeb, 0x00, 0xeb, 0x00, 0x90, 0xeb, 0x00, 0x90);
	at(t, CODE, RESYNC);
	STEPS(t, CODE + 1, CODE + 3, CODE + 5, CODE + 6, CODE + 8, CODE + 9);
}

static void
cmask_inv_edge_cpi1(void **state)
{
	struct tx *t = *state;
	void *i_c2, *i_c1, *i_inv1, *b_c1, *b_edge, *b_edge0, *c_c2, *c_edge;

	i_c2 = ctr(t, VPMU_EV_INSTRUCTIONS, 0, 2, 0);
	i_c1 = ctr(t, VPMU_EV_INSTRUCTIONS, 0, 1, 0);
	i_inv1 = ctr(t, VPMU_EV_INSTRUCTIONS, VPMU_EVF_INV, 1, 0);
	b_c1 = ctr(t, VPMU_EV_BRANCHES, 0, 1, 0);
	b_edge = ctr(t, VPMU_EV_BRANCHES, VPMU_EVF_EDGE, 1, 0);
	b_edge0 = ctr(t, VPMU_EV_BRANCHES, VPMU_EVF_EDGE, 0, 0);
	c_c2 = ctr(t, VPMU_EV_CYCLES, 0, 2, 0);
	c_edge = ctr(t, VPMU_EV_CYCLES, VPMU_EVF_EDGE, 1, 0);
	run_mixed(t);
	assert_int_equal(val(t, i_c2), 0);
	assert_int_equal(val(t, i_c1), 6);
	assert_int_equal(val(t, i_inv1), 0);
	assert_int_equal(val(t, b_c1), 3);
	assert_int_equal(val(t, b_edge), 2);	/* runs: jmp jmp, jmp */
	assert_int_equal(val(t, b_edge0), 2);	/* EDGE alone: threshold 1 */
	assert_int_equal(val(t, c_c2), 0);
	assert_int_equal(val(t, c_edge), 1);	/* always asserted: one edge */
}

static void
cmask_inv_edge_cpi3(void **state)
{
	struct tx *t = *state;
	void *i_inv1, *i_edge, *b_edge, *c_inv2, *c_c1, *i_inv0;

	reinit(t, 3, 1, 0);
	i_inv1 = ctr(t, VPMU_EV_INSTRUCTIONS, VPMU_EVF_INV, 1, 0);
	i_edge = ctr(t, VPMU_EV_INSTRUCTIONS, VPMU_EVF_EDGE, 1, 0);
	b_edge = ctr(t, VPMU_EV_BRANCHES, VPMU_EVF_EDGE, 1, 0);
	c_inv2 = ctr(t, VPMU_EV_CYCLES, VPMU_EVF_INV, 2, 0);
	c_c1 = ctr(t, VPMU_EV_CYCLES, 0, 1, 0);
	i_inv0 = ctr(t, VPMU_EV_INSTRUCTIONS, VPMU_EVF_INV, 0, 0);
	run_mixed(t);
	assert_int_equal(val(t, i_inv1), 12);	/* two empty cycles each */
	assert_int_equal(val(t, i_edge), 6);	/* every last cycle rises */
	assert_int_equal(val(t, b_edge), 3);	/* empty cycles split the runs */
	assert_int_equal(val(t, c_inv2), 18);
	assert_int_equal(val(t, c_c1), 18);
	assert_int_equal(val(t, i_inv0), 6);	/* INV without CMASK: plain */
}

static void
raw_selects_by_vendor(void **state)
{
	struct tx *t = *state;
	void *ins, *br, *cyc, *ref;

	reinit(t, 2, 4, VPMU_VENDOR_INTEL);
	ins = ctr(t, VPMU_EV_RAW, 0, 0, 0x00C0);
	br = ctr(t, VPMU_EV_RAW, 0, 0, 0x00C4);
	cyc = ctr(t, VPMU_EV_RAW, 0, 0, 0x003C);
	ref = ctr(t, VPMU_EV_RAW, 0, 0, 0x013C);
	run_mixed(t);
	assert_int_equal(val(t, ins), 6);
	assert_int_equal(val(t, br), 3);
	assert_int_equal(val(t, cyc), 12);
	assert_int_equal(val(t, ref), 24);
	reinit(t, 2, 4, VPMU_VENDOR_AMD);
	br = ctr(t, VPMU_EV_RAW, 0, 0, 0x00C2);
	cyc = ctr(t, VPMU_EV_RAW, 0, 0, 0x0076);
	run_mixed(t);
	assert_int_equal(val(t, br), 3);
	assert_int_equal(val(t, cyc), 12);
}

static void
supports_answers(void **state)
{
	struct tx *t = *state;
	struct vpmu_event_spec ev = { 0 };
	char why[128];
	void *c;

	ev.event = VPMU_EV_INSTRUCTIONS;
	ev.flags = VPMU_EVF_USR | VPMU_EVF_EDGE | VPMU_EVF_INV;
	ev.cmask = 3;
	assert_int_equal(X->supports(t->st, &ev, why, sizeof(why)), 0);
	ev = (struct vpmu_event_spec){ .event = VPMU_EV_RAW, .raw = 0x2E };
	assert_int_equal(X->supports(t->st, &ev, why, sizeof(why)), EOPNOTSUPP);
	assert_string_equal(why, "exact: event 0x2e is not modelled");
	assert_int_equal(X->open(t->st, 0, 0, &ev, &c), EOPNOTSUPP);
	ev = (struct vpmu_event_spec){ .event = VPMU_EV_TSC };
	assert_int_equal(X->supports(t->st, &ev, why, sizeof(why)), EOPNOTSUPP);
	assert_string_equal(why, "exact: event tsc is not modelled");
	ev = (struct vpmu_event_spec){ .event = VPMU_EV_RAW, .raw = 0x00C0 };
	assert_int_equal(X->supports(t->st, &ev, NULL, 0), 0);	/* no vendor: 0xC0 only */
	ev.raw = 0x00C4;
	assert_int_equal(X->supports(t->st, &ev, NULL, 0), EOPNOTSUPP);
	ev.raw = 0x00C2;
	assert_int_equal(X->supports(t->st, &ev, NULL, 0), EOPNOTSUPP);
	reinit(t, 0, 0, VPMU_VENDOR_INTEL);
	assert_int_equal(X->supports(t->st, &ev, why, sizeof(why)), EOPNOTSUPP);
	assert_string_equal(why, "exact: event 0xc2 is not modelled");
	ev.raw = 0x013C;
	assert_int_equal(X->supports(t->st, &ev, NULL, 0), 0);
	reinit(t, 0, 0, VPMU_VENDOR_AMD);
	assert_int_equal(X->supports(t->st, &ev, NULL, 0), EOPNOTSUPP);
	ev.raw = 0x00C4;
	assert_int_equal(X->supports(t->st, &ev, NULL, 0), EOPNOTSUPP);
	ev.raw = 0x0076;
	assert_int_equal(X->supports(t->st, &ev, NULL, 0), 0);
	assert_int_equal(X->capacity(t->st), 0);
	assert_string_equal(X->name, "exact");
	assert_int_equal(X->init(&c, 0, NULL), EINVAL);
	assert_int_equal(X->init(&c, 1, &(struct vpmu_exact_params){ .flags = 0x4 }), EINVAL);
	assert_int_equal(X->open(t->st, 2, 0, &ev, &c), EINVAL);
}

/* Unreadable code counts one non-branch and never crashes. */
static void
unmapped_fetch_is_recorded(void **state)
{
	struct tx *t = *state;
	void *ins, *br;
	struct vpmu_exact_stats s;

	tables_4k(t);
	ins = ctr(t, VPMU_EV_INSTRUCTIONS, 0, 0, 0);
	br = ctr(t, VPMU_EV_BRANCHES, 0, 0, 0);
	at(t, 0x7fff0000, RESYNC);		/* no page table entry */
	at(t, 0x7fff0002, STEP);
	s = stats(t);
	assert_int_equal(val(t, ins), 1);
	assert_int_equal(s.fetch_failures, 1);
	assert_int_equal(s.fail_gva, 0x7fff0000);
	/* a mov imm32 whose last bytes are on an unmapped page */
	PUT(t, 0x10ffe, 0xb9, 0x01);
	at(t, 0x10ffe, RESYNC);
	at(t, 0x11003, STEP);
	s = stats(t);
	assert_int_equal(val(t, ins), 2);
	assert_int_equal(s.fetch_failures, 2);
	assert_int_equal(s.fail_gva, 0x11000);
	/* a call across two pages mapped apart decodes */
	PUT(t, 0x30ffe, 0xe8, 0x10);
	PUT(t, 0x50000, 0x00, 0x00, 0x00);
	at(t, 0x20ffe, RESYNC);
	at(t, 0x21013, STEP);
	assert_int_equal(val(t, br), 1);
	/* a return address that cannot be read: the iretq alone */
	PUT(t, CODE, 0x48, 0xcf);
	t->r.rsp = 0x11000;
	at(t, CODE, RESYNC);
	at(t, CODE + 0x40, STEP);
	assert_int_equal(val(t, ins), 4);
	assert_int_equal(stats(t).fetch_failures, 3);
	assert_int_equal(stats(t).unresolved, 0);
}

/* An exit nothing explains counts one instruction: a fault the glue did not flag. */
static void
unexplained_exit_counts_one(void **state)
{
	struct tx *t = *state;
	void *ins;

	memset(t->ram + CODE, 0x90, 64);
	ins = ctr(t, VPMU_EV_INSTRUCTIONS, 0, 0, 0);
	at(t, CODE, RESYNC);
	at(t, CODE + 0x1000, STEP);
	assert_int_equal(val(t, ins), 1);
	assert_int_equal(stats(t).unresolved, 1);
	assert_int_equal(stats(t).lost_traps, 0);
	/* nothing enabled: syncs only follow RIP */
	assert_int_equal(X->disable(t->st, ins), 0);
	assert_false(vpmu__exact_wants_step(t->st, 0));
	STEPS(t, CODE, CODE + 3);
	assert_int_equal(X->enable(t->st, ins), 0);
	at(t, CODE + 4, STEP);
	assert_int_equal(val(t, ins), 2);
	X->close(t->st, ins);
	assert_false(vpmu__exact_wants_step(t->st, 0));
	vpmu__exact_sync(t->st, 7, &t->r, 0);	/* out of range: ignored */
	vpmu__exact_sync(NULL, 0, &t->r, 0);
}

static void
times_follow_enabled(void **state)
{
	struct tx *t = *state;
	struct vpmu_count a, b;
	void *c;

	c = ctr(t, VPMU_EV_INSTRUCTIONS, 0, 0, 0);
	assert_int_equal(X->read(t->st, c, &a), 0);
	assert_int_equal(X->disable(t->st, c), 0);
	assert_int_equal(X->read(t->st, c, &b), 0);
	assert_true(b.time_enabled >= a.time_enabled);
	assert_int_equal(b.time_enabled, b.time_running);
	assert_int_equal(X->read(t->st, c, &a), 0);
	assert_int_equal(a.time_enabled, b.time_enabled);	/* stopped */
	assert_int_equal(X->read(t->st, NULL, &a), EINVAL);
	assert_int_equal(vpmu__exact_get_stats(t->st, 2, &(struct vpmu_exact_stats){ 0 }),
	    EINVAL);
}

/* ---- a single step over a HLT (issue 11) ------------------------------------- */

/* Instructions retired, OS and USR, enabled. */
#define XB_INSTR	(0xC0ull | 1ull << 16 | 1ull << 17 | 1ull << 22)

/*
 * An exit of vCPU 0 with its registers: RIP rip, paging off (protected
 * mode at CPL cpl when cpl is not 0), VPMU_EXITF_RAN and flags.
 */
static struct vpmu_exit
exit_with(vpmu_vm *vm, uint32_t reason, uint32_t index, uint64_t data, uint64_t dr6,
    uint64_t rip, uint32_t flags, unsigned cpl)
{
	struct vpmu_regs r;
	struct vpmu_exit x;

	memset(&r, 0, sizeof(r));
	r.rip = rip;
	r.rflags = 0x2;
	r.cpl = cpl;
	r.cr0 = cpl != 0 ? 1 : 0;		/* CR0.PE */
	memset(&x, 0, sizeof(x));
	x.reason = reason;
	x.flags = VPMU_EXITF_RAN | flags;
	x.index = index;
	x.data = data;
	x.dr6 = dr6;
	x.regs = &r;
	x.handled = x.halted = 0xDEAD;
	assert_int_equal(vpmu_vcpu_exit(vm, 0, &x), 0);
	return (x);
}

static struct vpmu_exit
exit_at(vpmu_vm *vm, uint32_t reason, uint32_t index, uint64_t data, uint64_t dr6,
    uint64_t rip)
{
	return (exit_with(vm, reason, index, data, dr6, rip, 0, 0));
}

/* intel-v2 on the exact source, 8 KiB of RAM holding code at 0xFFE. */
static vpmu_vm *
hlt_vm(uint8_t *ram, size_t size, const uint8_t *code, size_t n)
{
	struct vpmu_exact_params xp = { .vendor = VPMU_VENDOR_INTEL, .mode = VPMU_EXACT_STEP };
	struct vpmu_model m;
	vpmu_config *cfg;
	vpmu_vm *vm;
	char err[128];

	assert_int_equal(vpmu_model_parse("intel-v2", &m, err, sizeof(err)), 0);
	assert_int_equal(vpmu_config_create(&cfg), 0);
	assert_int_equal(vpmu_config_set_vcpus(cfg, 1), 0);
	assert_int_equal(vpmu_config_set_model(cfg, &m), 0);
	assert_int_equal(vpmu_config_set_source(cfg, &vpmu_source_exact, &xp), 0);
	assert_int_equal(vpmu_vm_create(cfg, &vm), 0);
	vpmu_config_destroy(cfg);
	memcpy(ram + 0xFFE, code, n);
	assert_int_equal(vpmu_vm_add_memory(vm, 0, size, ram), 0);
	return (vm);
}

/*
 * WRMSR at 0xFFE starts PMC0 (exact source), then NOP, HLT, NOP single-
 * stepped: the step after the HLT is left to the monitor (handled 0) with
 * halted 1, the others are handled with halted 0; PMC0 reads 3 (WRMSR,
 * NOP, HLT) at the exit after the HLT.
 */
static void
step_over_hlt_is_left_to_the_monitor(void **state)
{
	static uint8_t ram[0x2000];
	struct vpmu_entry e;
	struct vpmu_exit x;
	vpmu_vm *vm;

	(void)state;
	vm = hlt_vm(ram, sizeof(ram), (const uint8_t[]){ 0x0F, 0x30, 0x90, 0xF4, 0x90 }, 5);
	x = exit_at(vm, VPMU_EXIT_MSR_WRITE, 0x186, XB_INSTR, 0, 0xFFE);
	assert_int_equal(x.handled, 1);
	assert_int_equal(x.halted, 0);
	assert_int_equal(vpmu_vcpu_enter(vm, 0, &e), 0);
	assert_int_equal(e.debug, VPMU_DEBUG_STEP);
	x = exit_at(vm, VPMU_EXIT_DEBUG, 0, 0, VPMU_DR6_BS, 0x1000);	/* WRMSR */
	assert_int_equal(x.handled, 1);
	assert_int_equal(x.halted, 0);
	x = exit_at(vm, VPMU_EXIT_DEBUG, 0, 0, VPMU_DR6_BS, 0x1001);	/* NOP */
	assert_int_equal(x.handled, 1);
	assert_int_equal(x.halted, 0);
	x = exit_at(vm, VPMU_EXIT_DEBUG, 0, 0, VPMU_DR6_BS, 0x1002);	/* HLT */
	assert_int_equal(x.handled, 0);
	assert_int_equal(x.halted, 1);
	x = exit_at(vm, VPMU_EXIT_MSR_READ, 0xC1, 0, 0, 0x1002);
	assert_int_equal(x.handled, 1);
	assert_int_equal(x.halted, 0);
	assert_int_equal(x.data, 3);
	x = exit_at(vm, VPMU_EXIT_DEBUG, 0, 0, VPMU_DR6_BS, 0x1003);	/* NOP */
	assert_int_equal(x.handled, 1);
	assert_int_equal(x.halted, 0);
	vpmu_vm_destroy(vm);
}

/*
 * The same program with a monitor that writes registers back
 * (VPMU_EXITF_SETREGS): at the step that stops at the HLT, libvpmu retires
 * it itself (set RIP, rip past it, halted 1, handled 0), and PMC0 reads 3
 * after it.  At CPL 3 (a HLT that faults) or without the flag it does not.
 */
static void
hlt_at_the_stop_is_retired(void **state)
{
	static const uint8_t code[] = { 0x0F, 0x30, 0x90, 0xF4, 0x90 };
	static uint8_t ram[0x2000];
	struct vpmu_entry e;
	struct vpmu_exit x;
	vpmu_vm *vm;
	unsigned cpl;

	(void)state;
	for (cpl = 0; cpl <= 3; cpl += 3) {
		vm = hlt_vm(ram, sizeof(ram), code, sizeof(code));
		x = exit_with(vm, VPMU_EXIT_MSR_WRITE, 0x186, XB_INSTR, 0, 0xFFE, 0, cpl);
		assert_int_equal(x.handled, 1);
		assert_int_equal(vpmu_vcpu_enter(vm, 0, &e), 0);
		assert_int_equal(e.debug, VPMU_DEBUG_STEP);
		x = exit_with(vm, VPMU_EXIT_DEBUG, 0, 0, VPMU_DR6_BS, 0x1000,
		    VPMU_EXITF_SETREGS, cpl);				/* WRMSR */
		assert_int_equal(x.handled, 1);
		assert_int_equal(x.set, 0);
		x = exit_with(vm, VPMU_EXIT_DEBUG, 0, 0, VPMU_DR6_BS, 0x1001,
		    VPMU_EXITF_SETREGS, cpl);				/* NOP, at HLT */
		if (cpl == 0) {
			assert_int_equal(x.set, VPMU_SET_RIP);
			assert_int_equal(x.rip, 0x1002);
			assert_int_equal(x.halted, 1);
			assert_int_equal(x.handled, 0);
			x = exit_at(vm, VPMU_EXIT_MSR_READ, 0xC1, 0, 0, 0x1002);
			assert_int_equal(x.data, 3);
		} else {
			assert_int_equal(x.set, 0);
			assert_int_equal(x.halted, 0);
			assert_int_equal(x.handled, 1);
		}
		vpmu_vm_destroy(vm);
	}
	/* No VPMU_EXITF_SETREGS: stepped, as above. */
	vm = hlt_vm(ram, sizeof(ram), code, sizeof(code));
	(void)exit_at(vm, VPMU_EXIT_MSR_WRITE, 0x186, XB_INSTR, 0, 0xFFE);
	assert_int_equal(vpmu_vcpu_enter(vm, 0, &e), 0);
	(void)exit_at(vm, VPMU_EXIT_DEBUG, 0, 0, VPMU_DR6_BS, 0x1000);
	x = exit_at(vm, VPMU_EXIT_DEBUG, 0, 0, VPMU_DR6_BS, 0x1001);
	assert_int_equal(x.set, 0);
	assert_int_equal(x.halted, 0);
	assert_int_equal(x.handled, 1);
	vpmu_vm_destroy(vm);
}

/* ---- blocks ------------------------------------------------------------------ */

/* What a block may hold (decode.c, in_block), instruction by instruction. */
static void
decode_marks_block_instructions(void **state)
{
	static const struct {
		uint8_t b[8], n;
		bool in_block;
	} c[] = {
		{ { 0x48, 0x01, 0xd8 }, 3, true },		/* add rax, rbx */
		{ { 0x48, 0x89, 0x04, 0x24 }, 4, true },	/* mov [rsp], rax */
		{ { 0x48, 0x8d, 0x43, 0x08 }, 4, true },	/* lea rax, [rbx + 8] */
		{ { 0x50 }, 1, true },				/* push rax */
		{ { 0xaa }, 1, true },				/* stosb */
		{ { 0xf3, 0xaa }, 2, true },			/* rep stosb: retires once */
		{ { 0xf3, 0x6c }, 2, false },			/* rep insb */
		{ { 0xf3, 0x48, 0x0f, 0xbc, 0xc3 }, 5, true },	/* tzcnt rax, rbx */
		{ { 0xc4, 0xe2, 0xe0, 0xf2, 0xc1 }, 5, false },	/* andn rax, rbx, rcx: #UD without BMI1 */
		{ { 0x75, 0xfe }, 2, false },			/* jnz */
		{ { 0xc3 }, 1, false },				/* ret */
		{ { 0x48, 0xf7, 0xf3 }, 3, false },		/* div rbx */
		{ { 0x9d }, 1, false },				/* popfq */
		{ { 0x8e, 0xd0 }, 2, false },			/* mov ss, eax */
		{ { 0x0f, 0xae, 0xe8 }, 3, false },		/* lfence */
		{ { 0x0f, 0xa2 }, 2, false },			/* cpuid */
		{ { 0x0f, 0x33 }, 2, false },			/* rdpmc */
		{ { 0x0f, 0x30 }, 2, false },			/* wrmsr */
		{ { 0xf4 }, 1, false },				/* hlt */
		{ { 0xe6, 0xf4 }, 2, false },			/* out */
		{ { 0xfa }, 1, false },				/* cli */
		{ { 0x0f, 0x22, 0xd8 }, 3, false },		/* mov cr3, rax */
		{ { 0xcc }, 1, false },				/* int3 */
	};
	struct vpmu_insn in;
	size_t i;

	(void)state;
	for (i = 0; i < sizeof(c) / sizeof(c[0]); i++) {
		assert_int_equal(vpmu__decode(VPMU_DECODE_64, 0x1000, c[i].b, c[i].n, &in), 0);
		if (in.in_block != c[i].in_block)
			fail_msg("case %zu (%s): in_block %d, want %d", i,
			    vpmu__decode_name(in.mnemonic), in.in_block, c[i].in_block);
	}
}

/*
 * Block mode, with flags (vpmu_exact_params.flags).  block_mode(): blocks
 * end at every conditional branch and RET, as the tests written before
 * branches were foreseen inside runs expect.
 */
static void
block_mode_flags(struct tx *t, unsigned cpi, unsigned flags)
{
	struct vpmu_exact_params prm = { .cpi = cpi, .mode = VPMU_EXACT_BLOCK, .flags = flags };

	X->fini(t->st);
	t->st = NULL;
	assert_int_equal(X->init(&t->st, 2, &prm), 0);
	vpmu__exact_set_memory(t->st, &t->mem);
	gate(t, 14, 0x20000);
	gate(t, 13, 0x20100);
	gate(t, 12, 0x20200);
	/* add rax, rbx; xor ecx, ecx; mov [rax], rcx; inc rdx x 3; jnz $ */
	PUT(t, CODE, 0x48, 0x01, 0xd8, 0x31, 0xc9, 0x48, 0x89, 0x08,
	    0x48, 0xff, 0xc2, 0x48, 0xff, 0xc2, 0x48, 0xff, 0xc2, 0x75, 0xfe);
}

static void
block_mode(struct tx *t, unsigned cpi)
{
	block_mode_flags(t, cpi, VPMU_EXACT_NO_FORESEE | VPMU_EXACT_NO_INTERP);
}

/* Block mode is the default: no parameters, or mode 0. */
static void
block_mode_is_the_default(void **state)
{
	struct tx *t = *state;
	struct vpmu_exact_params prm = { .cpi = 1 };
	unsigned i;

	for (i = 0; i < 2; i++) {
		X->fini(t->st);
		t->st = NULL;
		assert_int_equal(X->init(&t->st, 2, i == 0 ? NULL : &prm), 0);
		vpmu__exact_set_memory(t->st, &t->mem);
		gate(t, 14, 0x20000);
		gate(t, 13, 0x20100);
		gate(t, 12, 0x20200);
		(void)ctr(t, VPMU_EV_INSTRUCTIONS, 0, 0, 0);
		at(t, CODE, RESYNC);
		assert_int_equal(X->exec_wants(t->st, 0), VPMU_DEBUG_BREAK);
	}
}

/*
 * A block: a breakpoint on the branch that ends the straight-line run and
 * on the #PF, #GP and #SS handlers' entries; the breakpoint exit counts
 * the run, the branch is stepped.
 */
static void
block_runs_to_its_branch(void **state)
{
	struct tx *t = *state;
	uint64_t bp[VPMU_DEBUG_BP_MAX] = { 0 };
	unsigned need;
	void *c;

	block_mode(t, 1);
	assert_int_equal(X->exec_wants(t->st, 0), 0);		/* nothing enabled */
	c = ctr(t, VPMU_EV_INSTRUCTIONS, 0, 0, 0);
	assert_int_equal(X->exec_wants(t->st, 0), VPMU_DEBUG_STEP);	/* no P yet */
	at(t, CODE, RESYNC);
	assert_int_equal(X->exec_wants(t->st, 0), VPMU_DEBUG_BREAK);
	assert_int_equal(X->exec_breaks(t->st, 0, bp, 3, NULL), 0);	/* does not fit */
	need = 0;
	assert_int_equal(X->exec_breaks(t->st, 0, bp, VPMU_DEBUG_BP_MAX, &need), 4);
	assert_int_equal(need, 0xF);				/* the end and the handlers */
	assert_int_equal(bp[0], CODE + 17);
	assert_int_equal(bp[1], 0x20000);
	assert_int_equal(bp[2], 0x20100);
	assert_int_equal(bp[3], 0x20200);
	at(t, CODE + 17, 0);					/* the breakpoint */
	assert_int_equal(val(t, c), 6);
	assert_int_equal(X->exec_wants(t->st, 0), VPMU_DEBUG_STEP);	/* the JNZ */
	at(t, CODE + 17, STEP);					/* taken, to itself */
	assert_int_equal(val(t, c), 7);
	assert_int_equal(stats(t).blocks, 1);
	assert_int_equal(stats(t).block_insns, 6);
	/* Three instructions before the JNZ: stepped (BLOCK_MIN). */
	at(t, CODE + 8, RESYNC);
	assert_int_equal(X->exec_wants(t->st, 0), VPMU_DEBUG_STEP);

	/* Step mode never asks for breakpoints. */
	reinit(t, 1, 1, 0);
	c = ctr(t, VPMU_EV_INSTRUCTIONS, 0, 0, 0);
	at(t, CODE, RESYNC);
	assert_int_equal(X->exec_wants(t->st, 0), VPMU_DEBUG_STEP);
	assert_int_equal(X->exec_breaks(t->st, 0, bp, VPMU_DEBUG_BP_MAX, NULL), 0);
}

/* A #GP of the MOV inside the block stops at the handler: ADD and XOR retired. */
static void
block_fault_stops_at_the_handler(void **state)
{
	struct tx *t = *state;
	uint64_t frame[2] = { 0, CODE + 5 };	/* error code, RIP */
	void *c;

	block_mode(t, 1);
	c = ctr(t, VPMU_EV_INSTRUCTIONS, 0, 0, 0);
	at(t, CODE, RESYNC);
	assert_int_equal(X->exec_wants(t->st, 0), VPMU_DEBUG_BREAK);
	t->r.rsp = STACK - 0x100;
	put(t, STACK - 0x100, (const uint8_t *)frame, sizeof(frame));
	at(t, 0x20100, 0);
	assert_int_equal(val(t, c), 2);
	assert_int_equal(stats(t).block_faults, 1);
	assert_int_equal(stats(t).unresolved, 0);
	/* The handler's entry is P now: no breakpoint there, a step. */
	assert_int_equal(X->exec_wants(t->st, 0), VPMU_DEBUG_STEP);
	/*
	 * A fault past the block's breakpoint (CODE + 17), which therefore
	 * did not stop the run (CPL 3 on kvm_pvm): no block fault, the exit
	 * reconstructed as any other (no path: one unresolved), not the
	 * block and its branch as one path.
	 */
	at(t, CODE, RESYNC);
	assert_int_equal(X->exec_wants(t->st, 0), VPMU_DEBUG_BREAK);
	frame[1] = CODE + 19;
	put(t, STACK - 0x100, (const uint8_t *)frame, sizeof(frame));
	at(t, 0x20100, 0);
	assert_int_equal(val(t, c), 3);
	assert_int_equal(stats(t).block_faults, 1);
	assert_int_equal(stats(t).unresolved, 1);
}

/*
 * Blocks end where a counter could overflow (set_period), CPI
 * included; without an IDT to stop faults at, or with TF, stepping.
 */
static void
block_stops_before_overflow(void **state)
{
	struct tx *t = *state;
	uint64_t bp[VPMU_DEBUG_BP_MAX] = { 0 };
	void *c;

	/* 5 left: the fifth instruction overflows, the block holds four. */
	block_mode(t, 1);
	c = ctr(t, VPMU_EV_INSTRUCTIONS, 0, 0, 0);
	assert_int_equal(X->set_period(t->st, c, 5), 0);
	at(t, CODE, RESYNC);
	assert_int_equal(X->exec_wants(t->st, 0), VPMU_DEBUG_BREAK);
	assert_int_equal(X->exec_breaks(t->st, 0, bp, VPMU_DEBUG_BP_MAX, NULL), 4);
	assert_int_equal(bp[0], CODE + 11);			/* 4 instructions */
	at(t, CODE + 11, 0);
	assert_int_equal(val(t, c), 4);
	/* The overflowing instruction is stepped. */
	assert_int_equal(X->exec_breaks(t->st, 0, bp, VPMU_DEBUG_BP_MAX, NULL), 0);
	assert_int_equal(X->exec_wants(t->st, 0), VPMU_DEBUG_STEP);
	at(t, CODE + 14, STEP);
	assert_int_equal(val(t, c), 5);
	/* 4 left: 3 before the overflowing one, fewer than a block's minimum. */
	at(t, CODE, RESYNC);
	assert_int_equal(X->set_period(t->st, c, 4), 0);
	assert_int_equal(X->exec_wants(t->st, 0), VPMU_DEBUG_STEP);
	assert_int_equal(X->set_period(t->st, c, 6), 0);
	assert_int_equal(X->exec_wants(t->st, 0), VPMU_DEBUG_BREAK);
	assert_int_equal(X->exec_breaks(t->st, 0, bp, VPMU_DEBUG_BP_MAX, NULL), 4);
	assert_int_equal(bp[0], CODE + 14);			/* 5 instructions */

	/* CPI 3: 13 cycles left overflow in the fifth instruction. */
	block_mode(t, 3);
	c = ctr(t, VPMU_EV_CYCLES, 0, 0, 0);
	assert_int_equal(X->set_period(t->st, c, 13), 0);
	at(t, CODE, RESYNC);
	assert_int_equal(X->exec_wants(t->st, 0), VPMU_DEBUG_BREAK);
	assert_int_equal(X->exec_breaks(t->st, 0, bp, VPMU_DEBUG_BP_MAX, NULL), 4);
	assert_int_equal(bp[0], CODE + 11);
	at(t, CODE + 11, 0);
	assert_int_equal(val(t, c), 12);

	t->r.rflags = 1u << 8;					/* TF */
	at(t, CODE, RESYNC);
	assert_int_equal(X->exec_wants(t->st, 0), VPMU_DEBUG_STEP);
	t->r.rflags = 0;
	t->r.idt_limit = 0;
	at(t, CODE, RESYNC);
	assert_int_equal(X->exec_wants(t->st, 0), VPMU_DEBUG_STEP);
}

/* ---- completed branches ------------------------------------------------------ */

#define SETREGS		VPMU_SYNC_SETREGS
#define LOOP		(CODE + 0x100)

/*
 * After a step at LOOP with rflags, rounds runs to the JNZ at LOOP + 6,
 * each a block and its branch completed (two of the streak each).
 */
static void
loop_rounds(struct tx *t, uint64_t rflags, unsigned rounds)
{
	struct vpmu_regs r;
	unsigned i;

	at(t, LOOP, RESYNC | STEP | SETREGS);
	t->r.rflags = rflags;
	for (i = 0; i < rounds; i++) {
		assert_int_equal(X->exec_wants(t->st, 0), VPMU_DEBUG_BREAK);
		at(t, LOOP + 6, SETREGS);
		r = t->r;
		assert_int_equal(X->exec_complete(t->st, 0, &r), VPMU_SET_RIP);
		t->r = r;
	}
}

/*
 * add rax, rbx; dec rcx; jnz LOOP: two instructions and a branch back to
 * the block's start.  With a VMM that writes registers back (SETREGS) the
 * block is worth its breakpoint on the JNZ, which the source completes.
 */
static void
block_completes_its_loop_branch(void **state)
{
	struct tx *t = *state;
	uint64_t bp[VPMU_DEBUG_BP_MAX] = { 0 };
	struct vpmu_regs r;
	void *c, *b;

	block_mode(t, 1);
	PUT(t, LOOP, 0x48, 0x01, 0xd8, 0x48, 0xff, 0xc9, 0x75, 0xf8);
	c = ctr(t, VPMU_EV_INSTRUCTIONS, 0, 0, 0);
	b = ctr(t, VPMU_EV_BRANCHES, 0, 0, 0);
	/* A VMM that cannot take registers: two instructions are stepped. */
	at(t, LOOP, RESYNC);
	assert_int_equal(X->exec_wants(t->st, 0), VPMU_DEBUG_STEP);
	at(t, LOOP, RESYNC | SETREGS);
	assert_int_equal(X->exec_wants(t->st, 0), VPMU_DEBUG_BREAK);
	assert_int_equal(X->exec_breaks(t->st, 0, bp, VPMU_DEBUG_BP_MAX, NULL), 4);
	assert_int_equal(bp[0], LOOP + 6);
	t->r.rcx = 1;				/* after the DEC: 1, ZF clear */
	t->r.rflags = 0x2;
	at(t, LOOP + 6, SETREGS);
	assert_int_equal(val(t, c), 2);
	r = t->r;
	assert_int_equal(X->exec_complete(t->st, 0, &r), VPMU_SET_RIP);
	assert_int_equal(r.rip, LOOP);
	assert_int_equal(val(t, c), 3);
	assert_int_equal(val(t, b), 1);
	assert_int_equal(stats(t).completed, 1);
	/* Once only: the next call finds no breakpoint stop. */
	assert_int_equal(X->exec_complete(t->st, 0, &r), 0);
	/* The same breakpoint again: no change of the debug registers. */
	assert_int_equal(X->exec_wants(t->st, 0), VPMU_DEBUG_BREAK);
	assert_int_equal(X->exec_breaks(t->st, 0, bp, VPMU_DEBUG_BP_MAX, NULL), 4);
	assert_int_equal(bp[0], LOOP + 6);
	t->r.rflags = 0x2 | 0x40;		/* ZF: the loop ends */
	at(t, LOOP + 6, SETREGS);
	r = t->r;
	assert_int_equal(X->exec_complete(t->st, 0, &r), VPMU_SET_RIP);
	assert_int_equal(r.rip, LOOP + 8);
	assert_int_equal(val(t, c), 6);
	assert_int_equal(val(t, b), 2);

	/* A stop anywhere else is not the block's end: nothing completed. */
	at(t, LOOP, RESYNC | SETREGS);
	assert_int_equal(X->exec_wants(t->st, 0), VPMU_DEBUG_BREAK);
	at(t, LOOP + 3, SETREGS);
	r = t->r;
	assert_int_equal(X->exec_complete(t->st, 0, &r), 0);
	assert_int_equal(r.rip, LOOP + 3);

	/*
	 * With RFLAGS.IF clear no interrupt can come in: the step waits for
	 * STREAK_NMI_MAX (256) runs and completions (128 rounds) for NMIs.
	 */
	loop_rounds(t, 0x2, 128);
	assert_int_equal(X->exec_wants(t->st, 0), VPMU_DEBUG_STEP);

	/*
	 * With IF set, STREAK_MAX (32) runs and completions in a row after a
	 * step (16 rounds of a run to the JNZ and its completion), then one
	 * step.
	 */
	loop_rounds(t, 0x202, 16);
	assert_int_equal(X->exec_wants(t->st, 0), VPMU_DEBUG_STEP);	/* 2 < BLOCK_MIN */
	at(t, LOOP + 6, RESYNC | SETREGS);
	assert_int_equal(X->exec_wants(t->st, 0), VPMU_DEBUG_STEP);	/* the JNZ */
	at(t, LOOP, STEP | SETREGS);
	assert_int_equal(X->exec_wants(t->st, 0), VPMU_DEBUG_BREAK);
}

/*
 * A completed branch that lands on another completes it too (a block of
 * no instructions cannot run), unless a counter could overflow on it.
 * LOOP + 0x20: add x 4; jz +0; jz +0; add (ZF set: both taken).
 */
static void
completed_branches_chain(void **state)
{
	struct tx *t = *state;
	struct vpmu_regs r;
	void *c;

	block_mode(t, 1);
	PUT(t, LOOP + 0x20, 0x48, 0x01, 0xd8, 0x48, 0x01, 0xd8, 0x48, 0x01, 0xd8, 0x48, 0x01,
	    0xd8, 0x74, 0x00, 0x74, 0x00, 0x48, 0x01, 0xd8);
	c = ctr(t, VPMU_EV_INSTRUCTIONS, 0, 0, 0);
	t->r.rflags = 0x2 | 0x40;
	at(t, LOOP + 0x20, RESYNC | SETREGS);
	assert_int_equal(X->exec_wants(t->st, 0), VPMU_DEBUG_BREAK);	/* 4 ADDs */
	assert_int_equal(vpmu__exact_end(t->st, 0), LOOP + 0x2C);
	at(t, LOOP + 0x2C, SETREGS);
	assert_int_equal(val(t, c), 4);
	r = t->r;
	assert_int_equal(X->exec_complete(t->st, 0, &r), VPMU_SET_RIP);
	assert_int_equal(r.rip, LOOP + 0x30);			/* past both JZs */
	assert_int_equal(val(t, c), 6);
	assert_int_equal(stats(t).completed, 2);

	/* Two events left: the first JZ only; the second overflows, stepped. */
	at(t, LOOP + 0x20, RESYNC | SETREGS);
	assert_int_equal(X->set_period(t->st, c, 6), 0);
	assert_int_equal(X->exec_wants(t->st, 0), VPMU_DEBUG_BREAK);
	at(t, LOOP + 0x2C, SETREGS);
	assert_int_equal(val(t, c), 10);
	r = t->r;
	assert_int_equal(X->exec_complete(t->st, 0, &r), VPMU_SET_RIP);
	assert_int_equal(r.rip, LOOP + 0x2E);
	assert_int_equal(val(t, c), 11);
}

/* A debug exit of vCPU 0 at rip with t's registers. */
static struct vpmu_exit
dbg_exit(vpmu_vm *vm, struct tx *t, uint64_t dr6, uint64_t rip, uint32_t flags)
{
	struct vpmu_exit x;

	t->r.rip = rip;
	memset(&x, 0, sizeof(x));
	x.reason = VPMU_EXIT_DEBUG;
	x.flags = VPMU_EXITF_RAN | flags;
	x.dr6 = dr6;
	x.regs = &t->r;
	assert_int_equal(vpmu_vcpu_exit(vm, 0, &x), 0);
	return (x);
}

/*
 * Through the exit contract: WRMSR, WRMSR, then the 3-instruction loop at
 * LOOP in blocks.  The breakpoint exit hands back RIP (vpmu_exit.set)
 * only to a VMM that said it writes registers (VPMU_EXITF_SETREGS).  A
 * branch that would overflow a counter is not completed but stepped, its
 * PMI at the entry after that step, as under single-step.
 */
static void
contract_hands_back_completed_branches(void **state)
{
	struct tx *t = *state;
	struct vpmu_exact_params xp = { .vendor = VPMU_VENDOR_INTEL, .mode = VPMU_EXACT_BLOCK };
	struct vpmu_model m;
	struct vpmu_entry e;
	struct vpmu_exit x;
	struct vpmu_vcpu_stats vs;
	vpmu_config *cfg;
	vpmu_vm *vm;
	char err[128];
	uint64_t v;
	unsigned pass;

	gate(t, 14, 0x20000);
	gate(t, 13, 0x20100);
	gate(t, 12, 0x20200);
	PUT(t, LOOP - 4, 0x0f, 0x30, 0x0f, 0x30, 0x48, 0x01, 0xd8, 0x48, 0xff, 0xc9, 0x75, 0xf8);
	for (pass = 0; pass < 3; pass++) {
		/* 0: completed; 1: the VMM cannot write registers; 2: the JNZ overflows */
		uint32_t f = pass == 1 ? 0 : VPMU_EXITF_SETREGS;

		assert_int_equal(vpmu_model_parse("intel-v2", &m, err, sizeof(err)), 0);
		assert_int_equal(vpmu_config_create(&cfg), 0);
		assert_int_equal(vpmu_config_set_vcpus(cfg, 1), 0);
		assert_int_equal(vpmu_config_set_model(cfg, &m), 0);
		assert_int_equal(vpmu_config_set_source(cfg, &vpmu_source_exact, &xp), 0);
		assert_int_equal(vpmu_vm_create(cfg, &vm), 0);
		vpmu_config_destroy(cfg);
		assert_int_equal(vpmu_vm_add_memory(vm, 0, RAM_SIZE, t->ram), 0);
		t->r.rflags = 0x2;
		t->r.rip = LOOP - 4;
		/* PMC0 three short of 2^48 at the loop in pass 2, with the PMI bit */
		v = pass == 2 ? (1ull << 48) - 5 : 0;
		x = (struct vpmu_exit){ .reason = VPMU_EXIT_MSR_WRITE, .flags = f, .index = 0xC1,
		    .data = v, .regs = &t->r };
		assert_int_equal(vpmu_vcpu_exit(vm, 0, &x), 0);
		x = (struct vpmu_exit){ .reason = VPMU_EXIT_MSR_WRITE, .flags = f, .index = 0x186,
		    .data = XB_INSTR | 1ull << 20, .regs = &t->r };
		assert_int_equal(vpmu_vcpu_exit(vm, 0, &x), 0);
		assert_int_equal(vpmu_vcpu_enter(vm, 0, &e), 0);
		assert_int_equal(e.debug, VPMU_DEBUG_STEP);
		dbg_exit(vm, t, VPMU_DR6_BS, LOOP - 2, f);		/* WRMSR */
		assert_int_equal(vpmu_vcpu_enter(vm, 0, &e), 0);
		dbg_exit(vm, t, VPMU_DR6_BS, LOOP, f);			/* WRMSR */
		assert_int_equal(vpmu_vcpu_enter(vm, 0, &e), 0);
		assert_int_equal(e.pmi, 0);
		if (pass == 1) {	/* two instructions, no completion: stepped */
			assert_int_equal(e.debug, VPMU_DEBUG_STEP);
			vpmu_vm_destroy(vm);
			continue;
		}
		assert_int_equal(e.debug, VPMU_DEBUG_BREAK);
		assert_int_equal(e.nbp, 4);
		assert_int_equal(e.bp[0], LOOP + 6);
		x = dbg_exit(vm, t, 0x1, LOOP + 6, f);			/* B0 */
		assert_int_equal(x.handled, 1);
		assert_int_equal(vpmu_vcpu_get_stats(vm, 0, &vs), 0);
		assert_int_equal(vs.breaks, 1);
		if (pass == 2) {
			/* the JNZ would overflow PMC0: not completed, stepped, then the PMI */
			assert_int_equal(x.set, 0);
			assert_int_equal(vs.completed, 0);
			assert_int_equal(vpmu_vcpu_enter(vm, 0, &e), 0);
			assert_int_equal(e.pmi, 0);
			assert_int_equal(e.debug, VPMU_DEBUG_STEP);
			dbg_exit(vm, t, VPMU_DR6_BS, LOOP, f);		/* JNZ taken */
			assert_int_equal(vpmu_vcpu_enter(vm, 0, &e), 0);
			assert_int_equal(e.pmi, 1);
			assert_int_equal(e.debug, VPMU_DEBUG_STEP);
		} else {
			assert_int_equal(x.set, VPMU_SET_RIP);
			assert_int_equal(x.rip, LOOP);
			assert_int_equal(vs.completed, 1);
			assert_int_equal(vpmu_vcpu_enter(vm, 0, &e), 0);
			assert_int_equal(e.pmi, 0);
		}
		/* WRMSR, WRMSR, ADD, DEC, JNZ */
		x = (struct vpmu_exit){ .reason = VPMU_EXIT_MSR_READ, .index = 0xC1,
		    .regs = &t->r };
		t->r.rip = LOOP;
		assert_int_equal(vpmu_vcpu_exit(vm, 0, &x), 0);
		assert_int_equal(x.data, pass == 2 ? 0 : 5);
		vpmu_vm_destroy(vm);
	}
}

/* ---- loop fast-forward --------------------------------------------------------- */

#define FFL		(CODE + 0x200)	/* add; add; loop FFL */
#define FFW		(CODE + 0x240)	/* add rcx, rbx; add; loop FFW */
#define FFD		(CODE + 0x280)	/* add; dec ecx; jnz FFD */
#define FFM		(CODE + 0x2C0)	/* mov rax, [rbx]; add; loop FFM */
#define FFS		(CODE + 0x2E0)	/* add; sub rcx, 4; jnz FFS */
#define FFA		(CODE + 0x500)	/* add; add r8d, -2; jnz FFA */
#define FFC		(CODE + 0x520)	/* add; inc rdx; cmp rdx, rsi; jne FFC */
#define FFR		(CODE + 0x540)	/* add; inc rdx; cmp rsi, rdx; jne FFR */
#define FFI		(CODE + 0x560)	/* add; inc edx; cmp edx, 100; jne FFI */

static void
ff_code(struct tx *t, uint64_t ff_max)
{
	struct vpmu_exact_params prm = { .cpi = 1, .mode = VPMU_EXACT_BLOCK, .ff_max = ff_max };

	X->fini(t->st);
	t->st = NULL;
	assert_int_equal(X->init(&t->st, 2, &prm), 0);
	vpmu__exact_set_memory(t->st, &t->mem);
	gate(t, 14, 0x20000);
	gate(t, 13, 0x20100);
	gate(t, 12, 0x20200);
	PUT(t, FFL, 0x48, 0x01, 0xd8, 0x48, 0x01, 0xd8, 0xe2, 0xf8);
	PUT(t, FFW, 0x48, 0x01, 0xd9, 0x48, 0x01, 0xd8, 0xe2, 0xf8);
	PUT(t, FFD, 0x48, 0x01, 0xd8, 0xff, 0xc9, 0x75, 0xf9);
	PUT(t, FFM, 0x48, 0x8b, 0x03, 0x48, 0x01, 0xd8, 0xe2, 0xf8);
	PUT(t, FFS, 0x48, 0x01, 0xd8, 0x48, 0x83, 0xe9, 0x04, 0x75, 0xf7);
	PUT(t, FFA, 0x48, 0x01, 0xd8, 0x41, 0x83, 0xc0, 0xfe, 0x75, 0xf7);
	PUT(t, FFC, 0x48, 0x01, 0xd8, 0x48, 0xff, 0xc2, 0x48, 0x39, 0xf2, 0x75, 0xf5);
	PUT(t, FFR, 0x48, 0x01, 0xd8, 0x48, 0xff, 0xc2, 0x48, 0x39, 0xd6, 0x75, 0xf5);
	PUT(t, FFI, 0x48, 0x01, 0xd8, 0xff, 0xc2, 0x83, 0xfa, 0x64, 0x75, 0xf6);
}

/* The first breakpoint of the entry planned from rip with rcx. */
static uint64_t
ff_plan(struct tx *t, uint64_t rip, uint64_t rcx)
{
	uint64_t bp[VPMU_DEBUG_BP_MAX] = { 0 };

	t->r.rcx = rcx;
	at(t, rip, RESYNC | SETREGS);
	assert_int_equal(X->exec_wants(t->st, 0), VPMU_DEBUG_BREAK);
	assert_int_equal(X->exec_breaks(t->st, 0, bp, VPMU_DEBUG_BP_MAX, NULL), 4);
	/* the run's end is one of the four armed */
	assert_true(bp[0] == vpmu__exact_end(t->st, 0) || bp[1] == vpmu__exact_end(t->st, 0) ||
	    bp[2] == vpmu__exact_end(t->st, 0) || bp[3] == vpmu__exact_end(t->st, 0));
	return (vpmu__exact_end(t->st, 0));
}

/*
 * A LOOP whose body leaves RCX alone runs all its iterations to a
 * breakpoint at its exit; the loop counter says how many.  Not when the
 * body writes RCX, a counter would overflow inside, or ff_max says no.
 */
static void
loops_are_fast_forwarded(void **state)
{
	struct tx *t = *state;
	struct vpmu_regs r;
	void *c, *b;

	void *eb, *ei;

	ff_code(t, 0);
	c = ctr(t, VPMU_EV_INSTRUCTIONS, 0, 0, 0);
	b = ctr(t, VPMU_EV_BRANCHES, 0, 0, 0);
	/* EDGE, CMASK 1: branch cycles begin once a round; instruction cycles once */
	eb = ctr(t, VPMU_EV_BRANCHES, VPMU_EVF_EDGE, 1, 0);
	ei = ctr(t, VPMU_EV_INSTRUCTIONS, VPMU_EVF_EDGE, 1, 0);
	assert_int_equal(ff_plan(t, FFL, 100), FFL + 8);	/* the exit */
	assert_int_equal(stats(t).ff_loops, 1);
	t->r.rcx = 0;
	at(t, FFL + 8, SETREGS);
	assert_int_equal(val(t, c), 300);
	assert_int_equal(val(t, b), 100);
	assert_int_equal(val(t, eb), 100);
	assert_int_equal(val(t, ei), 1);
	X->close(t->st, eb);
	X->close(t->st, ei);
	assert_int_equal(stats(t).ff_insns, 300);
	assert_int_equal(stats(t).unresolved, 0);

	/*
	 * LOOP $ (a delay loop, the branch alone), RCX 1000 rounds of one:
	 * not run, but stepped once and the other 999 retired at the step's
	 * exit in closed form (loop_closed).
	 */
	PUT(t, FFL + 0x20, 0xe2, 0xfe);
	t->r.rcx = 1000;
	at(t, FFL + 0x20, RESYNC | SETREGS);
	assert_int_equal(X->exec_wants(t->st, 0), VPMU_DEBUG_STEP);
	t->r.rcx = 999;
	at(t, FFL + 0x20, STEP | SETREGS);
	r = t->r;
	assert_int_equal(X->exec_complete(t->st, 0, &r), VPMU_SET_RIP | VPMU_SET_RCX);
	assert_int_equal(r.rip, FFL + 0x22);
	assert_int_equal(r.rcx, 0);
	assert_int_equal(val(t, c), 300 + 1000);
	assert_int_equal(val(t, b), 100 + 1000);
	assert_int_equal(stats(t).ff_insns, 300);
	assert_int_equal(stats(t).closed_loops, 1);
	assert_int_equal(stats(t).closed_insns, 998);

	/* Once round is no loop: RCX 1 runs the body once, to the LOOP. */
	assert_int_equal(ff_plan(t, FFL, 1), FFL + 6);
	/* The body writes RCX: blocks round the loop, the branch completed. */
	assert_int_equal(ff_plan(t, FFW, 100), FFW + 6);
	/* 300 instructions; PMC0 overflows at the 300th: not fast-forwarded. */
	assert_int_equal(X->set_period(t->st, c, 300), 0);
	assert_int_equal(ff_plan(t, FFL, 100), FFL + 6);
	assert_int_equal(X->set_period(t->st, c, 301), 0);	/* after them: yes */
	assert_int_equal(ff_plan(t, FFL, 100), FFL + 8);
	assert_int_equal(X->set_period(t->st, c, 0), 0);

	/* ff_max 299: not all of them; 1: never. */
	ff_code(t, 299);
	c = ctr(t, VPMU_EV_INSTRUCTIONS, 0, 0, 0);
	assert_int_equal(ff_plan(t, FFL, 100), FFL + 6);
	assert_int_equal(ff_plan(t, FFL, 99), FFL + 8);
	ff_code(t, 1);
	c = ctr(t, VPMU_EV_INSTRUCTIONS, 0, 0, 0);
	assert_int_equal(ff_plan(t, FFL, 100), FFL + 6);
	assert_int_equal(stats(t).ff_loops, 0);
}

/*
 * DEC ECX; JNZ counts on ECX alone (RCX 2^32 + 5: five rounds).  An exit
 * at the JNZ after the third DEC (ECX 2): two whole rounds and the ADD
 * and DEC of the third retired.
 */
static void
dec_jnz_loops_are_fast_forwarded(void **state)
{
	struct tx *t = *state;
	void *c, *b;

	ff_code(t, 0);
	c = ctr(t, VPMU_EV_INSTRUCTIONS, 0, 0, 0);
	b = ctr(t, VPMU_EV_BRANCHES, 0, 0, 0);
	assert_int_equal(ff_plan(t, FFD, (1ull << 32) + 5), FFD + 7);
	t->r.rcx = 0;
	at(t, FFD + 7, SETREGS);
	assert_int_equal(val(t, c), 15);
	assert_int_equal(val(t, b), 5);

	assert_int_equal(ff_plan(t, FFD, 5), FFD + 7);
	t->r.rcx = 2;
	at(t, FFD + 5, SETREGS);
	assert_int_equal(val(t, c), 15 + 8);
	assert_int_equal(val(t, b), 5 + 2);
	assert_int_equal(stats(t).unresolved, 0);
}

/*
 * hot.elf's loop, the counter in a stack slot: FFK decq -8(%rsp); jnz
 * FFK.  Fast-forwarded from 5 to a breakpoint at its exit; an exit at
 * the JNZ with the slot at 2 (the DEC ran three times, the third round's
 * JNZ not yet): two rounds and the DEC.  A slot a page away from RSP
 * (decq -8(%rbp)) is not this vCPU's stack for sure: no fast-forward.
 */
#define FFK	(CODE + 0x980)
static void
stack_counter_loops_are_fast_forwarded(void **state)
{
	struct tx *t = *state;
	uint64_t slot = 5, far = 5;
	void *c, *b;

	ff_code(t, 0);
	PUT(t, FFK, 0x48, 0xff, 0x4c, 0x24, 0xf8, 0x75, 0xf9);
	PUT(t, FFK + 0x10, 0x48, 0xff, 0x4d, 0xf8, 0x75, 0xfa);
	c = ctr(t, VPMU_EV_INSTRUCTIONS, 0, 0, 0);
	b = ctr(t, VPMU_EV_BRANCHES, 0, 0, 0);
	t->r.rsp = STACK - 0x100;
	put(t, STACK - 0x108, (const uint8_t *)&slot, sizeof(slot));
	assert_int_equal(ff_plan(t, FFK, 0), FFK + 7);
	assert_int_equal(stats(t).ff_loops, 1);
	slot = 0;
	put(t, STACK - 0x108, (const uint8_t *)&slot, sizeof(slot));
	at(t, FFK + 7, SETREGS);
	assert_int_equal(val(t, c), 10);
	assert_int_equal(val(t, b), 5);

	slot = 5;
	put(t, STACK - 0x108, (const uint8_t *)&slot, sizeof(slot));
	assert_int_equal(ff_plan(t, FFK, 0), FFK + 7);
	slot = 2;
	put(t, STACK - 0x108, (const uint8_t *)&slot, sizeof(slot));
	at(t, FFK + 5, SETREGS);
	assert_int_equal(val(t, c), 10 + 5);
	assert_int_equal(val(t, b), 5 + 2);
	assert_int_equal(stats(t).unresolved, 0);

	t->r.rbp = STACK - 0x3000;
	put(t, STACK - 0x3008, (const uint8_t *)&far, sizeof(far));
	at(t, FFK + 0x10, RESYNC | SETREGS);
	(void)X->exec_wants(t->st, 0);
	assert_int_equal(stats(t).ff_loops, 2);
}

/*
 * A #GP of the load in the fourth round (RCX 7 of 10): three rounds
 * retired, and nothing of the fourth; the handler's breakpoint stops it.
 */
static void
fault_inside_a_fast_forwarded_loop(void **state)
{
	struct tx *t = *state;
	uint64_t frame[2] = { 0, FFM };		/* error code, RIP */
	void *c;

	ff_code(t, 0);
	c = ctr(t, VPMU_EV_INSTRUCTIONS, 0, 0, 0);
	assert_int_equal(ff_plan(t, FFM, 10), FFM + 8);
	t->r.rsp = STACK - 0x100;
	put(t, STACK - 0x100, (const uint8_t *)frame, sizeof(frame));
	t->r.rcx = 7;
	at(t, 0x20100, SETREGS);
	assert_int_equal(val(t, c), 9);
	assert_int_equal(stats(t).block_faults, 1);
	assert_int_equal(stats(t).unresolved, 0);
	/* A stop whose counter does not add up (RCX above the start) is not explained. */
	t->r.rsp = STACK;
	assert_int_equal(ff_plan(t, FFM, 10), FFM + 8);
	t->r.rcx = 11;
	at(t, FFM + 3, SETREGS);
	assert_int_equal(stats(t).unresolved, 1);
}

/* The four breakpoints of the entry planned from rip. */
static void
armed_at(struct tx *t, uint64_t rip, unsigned flags, uint64_t *bp)
{
	at(t, rip, flags);
	assert_int_equal(X->exec_wants(t->st, 0), VPMU_DEBUG_BREAK);
	assert_int_equal(X->exec_breaks(t->st, 0, bp, VPMU_DEBUG_BP_MAX, NULL), 4);
}

/*
 * Two blocks that jump to each other (four ADDs and a JZ each, no
 * memory access: no handler breakpoints): once both ends are armed the
 * debug registers stay as they are, round after round.  An armed address
 * inside the next run is dropped.
 */
static void
breakpoints_stay_armed(void **state)
{
	struct tx *t = *state;
	uint64_t a[VPMU_DEBUG_BP_MAX], b[VPMU_DEBUG_BP_MAX], c[VPMU_DEBUG_BP_MAX];
	struct vpmu_regs r;
	unsigned i, round, need, ends;
	void *n;

	block_mode(t, 1);
	for (i = 0; i < 4; i++) {
		PUT(t, CODE + 0x300 + 3 * i, 0x48, 0x01, 0xd8);
		PUT(t, CODE + 0x340 + 3 * i, 0x48, 0x01, 0xd8);
	}
	PUT(t, CODE + 0x30C, 0x74, 0x32);		/* jz CODE + 0x340 */
	PUT(t, CODE + 0x34C, 0x74, 0xb2);		/* jz CODE + 0x300 */
	n = ctr(t, VPMU_EV_INSTRUCTIONS, 0, 0, 0);
	t->r.rflags = 0x2 | 0x40;			/* ZF: taken */
	armed_at(t, CODE + 0x300, RESYNC | SETREGS, a);
	for (i = 0; i < 4; i++)				/* no handlers */
		assert_int_equal(a[i], CODE + 0x30C);
	for (round = 0; round < 3; round++) {
		at(t, CODE + 0x30C, SETREGS);
		r = t->r;
		assert_int_equal(X->exec_complete(t->st, 0, &r), VPMU_SET_RIP);
		armed_at(t, r.rip, SETREGS, b);
		assert_int_equal(vpmu__exact_end(t->st, 0), CODE + 0x34C);
		at(t, CODE + 0x34C, SETREGS);
		r = t->r;
		assert_int_equal(X->exec_complete(t->st, 0, &r), VPMU_SET_RIP);
		armed_at(t, r.rip, SETREGS, c);
		assert_int_equal(vpmu__exact_end(t->st, 0), CODE + 0x30C);
		if (round > 0)
			assert_memory_equal(b, c, sizeof(b));	/* nothing changes */
	}
	assert_int_equal(val(t, n), 30);
	/*
	 * Needed: the slot of this run's end (vpmu_entry.need; a free slot
	 * repeating it is not); the other block's end is only kept, and a
	 * VMM short of debug registers may leave it out.
	 */
	need = 0;
	assert_int_equal(X->exec_breaks(t->st, 0, c, VPMU_DEBUG_BP_MAX, &need), 4);
	for (i = 0, ends = 0; i < 4; i++) {
		if (need >> i & 1)
			assert_int_equal(c[i], CODE + 0x30C);
		ends |= c[i] == CODE + 0x34C ? 2 : c[i] == CODE + 0x30C ? 1 : 0;
	}
	assert_int_equal(__builtin_popcount(need), 1);
	assert_int_equal(ends, 3);				/* both ends armed */
	/* From the middle of block A: its end is armed, no other address of A. */
	armed_at(t, CODE + 0x306, RESYNC | SETREGS, a);
	assert_int_equal(vpmu__exact_end(t->st, 0), CODE + 0x30C);
	for (i = 0; i < 4; i++)
		assert_false(a[i] >= CODE + 0x306 && a[i] < CODE + 0x30C);
}

/*
 * A block runs on through a CALL rel (and JMP rel) to its target: add;
 * add; call F | F: add; add; ret.  The run ends at the RET (5
 * instructions, one branch); the RET is completed from the stack.  A
 * push to a mapped, writable stack cannot fault: no handler breakpoints.
 * To a stack not mapped it can: the handlers are armed, and a #PF of the
 * CALL counts the two ADDs before it.  A stack page whose Accessed bit is
 * clear: the RET is not completed (its read would set the bit).
 */
static void
blocks_run_through_calls(void **state)
{
	struct tx *t = *state;
	uint64_t bp[VPMU_DEBUG_BP_MAX], ra = CODE + 0x40B;
	uint64_t frame[2] = { 0, CODE + 0x406 };	/* error code, RIP */
	struct vpmu_regs r;
	void *c, *b;

	block_mode(t, 1);
	PUT(t, CODE + 0x400, 0x48, 0x01, 0xd8, 0x48, 0x01, 0xd8, 0xe8, 0x75, 0x00, 0x00, 0x00,
	    0x48, 0x01, 0xd8);
	PUT(t, CODE + 0x480, 0x48, 0x01, 0xd8, 0x48, 0x01, 0xd8, 0xc3);
	c = ctr(t, VPMU_EV_INSTRUCTIONS, 0, 0, 0);
	b = ctr(t, VPMU_EV_BRANCHES, 0, 0, 0);
	t->r.rsp = STACK;
	armed_at(t, CODE + 0x400, RESYNC | SETREGS, bp);
	assert_int_equal(vpmu__exact_end(t->st, 0), CODE + 0x486);
	/* a mapped, writable stack: the push cannot fault, no handlers */
	assert_int_equal(bp[0], CODE + 0x486);
	assert_int_equal(bp[1], CODE + 0x486);
	t->r.rsp = STACK - 8;
	put(t, STACK - 8, (const uint8_t *)&ra, 8);
	at(t, CODE + 0x486, SETREGS);
	assert_int_equal(val(t, c), 5);
	assert_int_equal(val(t, b), 1);
	r = t->r;
	assert_int_equal(X->exec_complete(t->st, 0, &r), VPMU_SET_RIP | VPMU_SET_RSP);
	assert_int_equal(r.rip, CODE + 0x40B);
	assert_int_equal(r.rsp, STACK);
	assert_int_equal(val(t, c), 6);
	assert_int_equal(val(t, b), 2);

	/* A stack not mapped: the push faults (#PF), the ADDs before it retired. */
	t->r.rsp = 0x40000000;
	armed_at(t, CODE + 0x400, RESYNC | SETREGS, bp);
	assert_true(bp[1] == 0x20000 || bp[2] == 0x20000 || bp[3] == 0x20000);
	t->r.rsp = STACK - 0x100;
	put(t, STACK - 0x100, (const uint8_t *)frame, sizeof(frame));
	at(t, 0x20000, SETREGS);
	assert_int_equal(val(t, c), 8);
	assert_int_equal(stats(t).block_faults, 1);
	assert_int_equal(stats(t).unresolved, 0);

	/*
	 * The stack's page without its Accessed bit: the RET's read would
	 * set it, so the RET is left to the processor (stepped).
	 */
	pte(t, PD, 0, 0 | PTE_P | PTE_RW | PTE_PS);
	t->r.rsp = STACK;
	armed_at(t, CODE + 0x400, RESYNC | SETREGS, bp);
	assert_int_equal(vpmu__exact_end(t->st, 0), CODE + 0x486);
	t->r.rsp = STACK - 8;
	put(t, STACK - 8, (const uint8_t *)&ra, 8);
	at(t, CODE + 0x486, SETREGS);
	r = t->r;
	assert_int_equal(X->exec_complete(t->st, 0, &r), 0);
	pte(t, PD, 0, 0 | PTE_P | PTE_RW | PTE_PS | PTE_A);
}

/*
 * Branches inside runs (exact_block.c foresee(), alu.c).  From FORE with RCX 5
 * the JZ after TEST RCX is not taken: the run goes on through it, INC RDX
 * and the JMP to the JNZ that closes the loop (its target is in the run:
 * the block's end).  An exit there with the registers the run implies
 * counts five instructions, two branches.  The next round ends with RDX
 * as if the JZ had gone the other way: a misprediction, one unresolved
 * instruction, and nothing is foreseen after it.  A RET to the run's own
 * CALL is foreseen; with VPMU_EXACT_NO_FORESEE neither is.
 */
#define FORE	(CODE + 0x700)
#define FORC	(CODE + 0x780)
static void
branches_inside_runs_are_foreseen(void **state)
{
	struct tx *t = *state;
	uint64_t bp[VPMU_DEBUG_BP_MAX];
	struct vpmu_regs r;
	void *c, *b;

	block_mode_flags(t, 1, 0);
	/* test rcx, rcx; jz +5; inc rdx; jmp +3; dec rdx; dec rcx; jnz FORE */
	PUT(t, FORE, 0x48, 0x85, 0xc9, 0x74, 0x05, 0x48, 0xff, 0xc2, 0xeb, 0x03,
	    0x48, 0xff, 0xca, 0x48, 0xff, 0xc9, 0x75, 0xee);
	c = ctr(t, VPMU_EV_INSTRUCTIONS, 0, 0, 0);
	b = ctr(t, VPMU_EV_BRANCHES, 0, 0, 0);
	t->r.rcx = 5;
	t->r.rdx = 100;
	t->r.rflags = 0x2;
	armed_at(t, FORE, RESYNC | SETREGS, bp);
	assert_int_equal(vpmu__exact_end(t->st, 0), FORE + 16);
	assert_int_equal(stats(t).foreseen, 1);
	t->r.rcx = 4;				/* DEC RCX: 4, flags all clear */
	t->r.rdx = 101;
	at(t, FORE + 16, SETREGS);
	assert_int_equal(val(t, c), 5);
	assert_int_equal(val(t, b), 2);
	assert_int_equal(stats(t).mispredicted, 0);
	assert_int_equal(stats(t).unresolved, 0);
	r = t->r;
	assert_int_equal(X->exec_complete(t->st, 0, &r), VPMU_SET_RIP);
	assert_int_equal(r.rip, FORE);
	t->r = r;
	assert_int_equal(X->exec_wants(t->st, 0), VPMU_DEBUG_BREAK);
	assert_int_equal(vpmu__exact_end(t->st, 0), FORE + 16);
	t->r.rcx = 3;
	t->r.rdx = 100;				/* DEC RDX ran: not the way foreseen */
	at(t, FORE + 16, SETREGS);
	assert_int_equal(stats(t).mispredicted, 1);
	assert_int_equal(stats(t).unresolved, 1);
	assert_int_equal(val(t, c), 6 + 1);
	/* nothing foreseen any more: the block ends at the JZ */
	armed_at(t, FORE, RESYNC | SETREGS, bp);
	assert_int_equal(vpmu__exact_end(t->st, 0), FORE + 3);

	/*
	 * RET to the run's CALL: on to the JMP $ after the return address.
	 * call FORC + 0x40; nop; nop; inc rdx; jmp $ ... add rax, rbx; ret
	 */
	block_mode_flags(t, 1, 0);
	PUT(t, FORC, 0xe8, 0x3b, 0x00, 0x00, 0x00, 0x90, 0x90, 0x48, 0xff, 0xc2, 0xeb, 0xfe);
	PUT(t, FORC + 0x40, 0x48, 0x01, 0xd8, 0xc3);
	c = ctr(t, VPMU_EV_INSTRUCTIONS, 0, 0, 0);
	b = ctr(t, VPMU_EV_BRANCHES, 0, 0, 0);
	t->r.rsp = STACK;
	t->r.rax = 1;
	t->r.rbx = 2;
	t->r.rdx = 100;
	armed_at(t, FORC, RESYNC | SETREGS, bp);
	assert_int_equal(vpmu__exact_end(t->st, 0), FORC + 10);	/* the JMP $ */
	assert_int_equal(stats(t).foreseen, 1);
	t->r.rax = 3;
	t->r.rdx = 101;
	t->r.rflags = 0x2 | 0x4;		/* PF, from INC RDX (0x65) */
	at(t, FORC + 10, SETREGS);
	assert_int_equal(val(t, c), 6);		/* CALL ADD RET NOP NOP INC */
	assert_int_equal(val(t, b), 2);
	assert_int_equal(stats(t).mispredicted, 0);
	block_mode(t, 1);
	PUT(t, FORC, 0xe8, 0x3b, 0x00, 0x00, 0x00, 0x90, 0x90, 0x48, 0xff, 0xc2, 0xeb, 0xfe);
	PUT(t, FORC + 0x40, 0x48, 0x01, 0xd8, 0xc3);
	c = ctr(t, VPMU_EV_INSTRUCTIONS, 0, 0, 0);
	t->r.rsp = STACK;
	armed_at(t, FORC, RESYNC | SETREGS, bp);
	assert_int_equal(vpmu__exact_end(t->st, 0), FORC + 0x43);	/* the RET */
	assert_int_equal(stats(t).foreseen, 0);
}

/*
 * JMP and CALL through a register whose value the run knows are foreseen:
 * the processor makes the CALL and its push, and the RET back to it is
 * foreseen as a CALL rel's.  FORI: call *%rax; inc %rdx; jmp *%rbx (to
 * FORI + 0x20); at FORI + 0x40: add %rcx, %rsi; ret.  FORI + 0x20: jmp $
 * (back into the run: the block ends there).  Then the same with RAX
 * loaded from memory first: not known, the block ends at the CALL.
 */
#define FORI	(CODE + 0x800)
static void
indirect_branches_are_foreseen(void **state)
{
	struct tx *t = *state;
	uint64_t bp[VPMU_DEBUG_BP_MAX];
	struct vpmu_insn in;
	void *c, *b;

	assert_int_equal(vpmu__decode(VPMU_DECODE_64, 0, (const uint8_t []){ 0xff, 0xd0 }, 2, &in), 0);
	assert_int_equal(in.ind, 1);			/* call *%rax */
	assert_int_equal(vpmu__decode(VPMU_DECODE_64, 0, (const uint8_t []){ 0x41, 0xff, 0xe3 }, 3,
	    &in), 0);
	assert_int_equal(in.ind, 12);			/* jmp *%r11 */
	assert_int_equal(vpmu__decode(VPMU_DECODE_64, 0, (const uint8_t []){ 0xff, 0x10 }, 2, &in), 0);
	assert_int_equal(in.ind, 0);			/* call *(%rax) */
	assert_int_equal(vpmu__decode(VPMU_DECODE_64, 0, (const uint8_t []){ 0x66, 0xff, 0xd0 }, 3,
	    &in), 0);
	assert_int_equal(in.ind, 0);			/* call *%ax */

	block_mode_flags(t, 1, 0);
	PUT(t, FORI, 0xff, 0xd0, 0x48, 0xff, 0xc2, 0xff, 0xe3);
	PUT(t, FORI + 0x20, 0xeb, 0xfe);
	PUT(t, FORI + 0x40, 0x48, 0x01, 0xce, 0xc3);
	c = ctr(t, VPMU_EV_INSTRUCTIONS, 0, 0, 0);
	b = ctr(t, VPMU_EV_BRANCHES, 0, 0, 0);
	t->r.rax = FORI + 0x40;
	t->r.rbx = FORI + 0x20;
	t->r.rsp = STACK;
	t->r.rflags = 0x2;
	armed_at(t, FORI, RESYNC | SETREGS, bp);
	assert_int_equal(vpmu__exact_end(t->st, 0), FORI + 0x20);
	assert_int_equal(stats(t).foreseen, 3);		/* CALL, RET, JMP */
	t->r.rdx++;
	t->r.rsi += t->r.rcx;
	at(t, FORI + 0x20, SETREGS);
	assert_int_equal(val(t, c), 5);			/* CALL ADD RET INC JMP */
	assert_int_equal(val(t, b), 3);
	assert_int_equal(stats(t).mispredicted, 0);
	assert_int_equal(stats(t).unresolved, 0);

	/* inc %rdx x 3; mov (%rdi), %rax; call *%rax: RAX not known before the run */
	PUT(t, FORI + 0x60, 0x48, 0xff, 0xc2, 0x48, 0xff, 0xc2, 0x48, 0xff, 0xc2,
	    0x48, 0x8b, 0x07, 0xff, 0xd0);
	t->r.rdi = STACK - 0x100;
	armed_at(t, FORI + 0x60, RESYNC | SETREGS, bp);
	assert_int_equal(vpmu__exact_end(t->st, 0), FORI + 0x6c);
}

/*
 * After a single step of block mode the branch at the new RIP is completed
 * as at a block's end: LFENCE (stepped: a fence), then JMP +2 over two
 * NOPs.  Not after STI (its interrupt shadow covers the instruction after
 * it), nor while the guest steps itself (RFLAGS.TF).
 */
#define STPC	(CODE + 0x880)
static void
branch_after_step_is_completed(void **state)
{
	struct tx *t = *state;
	struct vpmu_regs r;
	void *c;

	block_mode(t, 1);
	PUT(t, STPC, 0x0f, 0xae, 0xe8, 0xeb, 0x02, 0x90, 0x90, 0xfb, 0xeb, 0x02);
	c = ctr(t, VPMU_EV_INSTRUCTIONS, 0, 0, 0);
	t->r.rflags = 0x202;
	at(t, STPC, RESYNC | SETREGS);
	assert_int_equal(X->exec_wants(t->st, 0), VPMU_DEBUG_STEP);	/* LFENCE */
	at(t, STPC + 3, STEP | SETREGS);
	r = t->r;
	assert_int_equal(X->exec_complete(t->st, 0, &r), VPMU_SET_RIP);
	assert_int_equal(r.rip, STPC + 7);
	t->r = r;
	assert_int_equal(val(t, c), 2);
	assert_int_equal(stats(t).completed, 1);
	/* STI, stepped; the JMP after it is left to the processor */
	assert_int_equal(X->exec_wants(t->st, 0), VPMU_DEBUG_STEP);
	at(t, STPC + 8, STEP | SETREGS);
	r = t->r;
	assert_int_equal(X->exec_complete(t->st, 0, &r), 0);
	/* the guest's own TF: its trap would come after the JMP */
	t->r.rflags = 0x302;
	at(t, STPC, RESYNC | SETREGS);
	assert_int_equal(X->exec_wants(t->st, 0), VPMU_DEBUG_STEP);
	at(t, STPC + 3, STEP | SETREGS);
	r = t->r;
	assert_int_equal(X->exec_complete(t->st, 0, &r), 0);
	assert_int_equal(val(t, c), 4);
}

/*
 * LOOP $ after a step, RCX 10^9: every round retired at once (RCX 0, RIP
 * past it), none run; with an overflow due in 1000 events, the rounds up
 * to the one before it, the rest left to the vCPU.
 */
static void
loop_self_is_retired_at_once(void **state)
{
	struct tx *t = *state;
	struct vpmu_regs r;
	void *ins, *br;

	block_mode(t, 1);
	PUT(t, STPC, 0x90, 0xe2, 0xfe, 0x90);		/* nop; loop .; nop */
	ins = ctr(t, VPMU_EV_INSTRUCTIONS, 0, 0, 0);
	br = ctr(t, VPMU_EV_BRANCHES, 0, 0, 0);
	t->r.rflags = 0x202;
	t->r.rcx = 1000000000;
	at(t, STPC, RESYNC | SETREGS);
	at(t, STPC + 1, STEP | SETREGS);
	r = t->r;
	assert_int_equal(X->exec_complete(t->st, 0, &r), VPMU_SET_RIP | VPMU_SET_RCX);
	assert_int_equal(r.rip, STPC + 3);
	assert_int_equal(r.rcx, 0);
	assert_int_equal(val(t, ins), 1000000001);
	assert_int_equal(val(t, br), 1000000000);
	/* an overflow due: the rounds before it */
	assert_int_equal(X->set_period(t->st, ins, 1000), 0);
	t->r.rcx = 5000;
	at(t, STPC, RESYNC | SETREGS);
	at(t, STPC + 1, STEP | SETREGS);
	r = t->r;
	assert_int_equal(X->exec_complete(t->st, 0, &r), VPMU_SET_RIP | VPMU_SET_RCX);
	assert_int_equal(r.rip, STPC + 1);
	assert_true(r.rcx > 4000 && r.rcx < 5000);
	assert_int_equal(val(t, ins), 1000000002 + 5000 - r.rcx);
}

/*
 * kvm-unit-tests' loop shape, at CLL: mov (%rsi), %rax; add $64, %rsi;
 * dec %edx; nop; loop CLL -- five instructions and a branch a round.  With
 * a VMM that writes every register (SETGPRS) its block ends at the LOOP,
 * where the source retires the rounds without running them: RSI moved on,
 * EDX zero-extended, RAX the last word loaded, the flags of the last
 * round's ADD (CF) and DEC (the others), worked out here by running the
 * same two instructions.  Data at 0x100000 (word 8i holds 1000 + i), 4 KiB
 * pages, every entry with its Accessed bit: all 199 rounds.  The PTE of
 * 0x102000 without it: the rounds before the first load there, and the
 * run from the loop's head goes to its exit (fast-forwarded by running).
 * An overflow due in 253 instructions: the LOOP and 49 rounds (251), the
 * overflow left to the vCPU.
 */
#define CLL		(CODE + 0xA80)
#define SETGPRS		VPMU_SYNC_SETGPRS
#define CLL_DATA	0x100000u

static void
cll_tables(struct tx *t, unsigned unaccessed)
{
	unsigned i;

	tables_4k(t);
	pte(t, PML4, 0, PDPT | PTE_P | PTE_RW | PTE_A);
	pte(t, PDPT, 0, PD | PTE_P | PTE_RW | PTE_A);
	pte(t, PD, 0, PT | PTE_P | PTE_RW | PTE_A);
	for (i = 0x100; i < 0x110; i++)
		pte(t, PT, i, ((uint64_t)i << 12) | PTE_P | PTE_RW | (i == unaccessed ? 0 : PTE_A));
	for (i = 0x10; i < 0x11; i++)		/* the code page */
		pte(t, PT, i, ((uint64_t)i << 12) | PTE_P | PTE_RW | PTE_A);
}

/* The status flags add $64 to rsi then dec edx leave, natively. */
static uint64_t
cll_flags(uint64_t rsi, uint64_t rdx)
{
	uint64_t fl;

	__asm__ volatile("add $64, %1\n\tdec %k2\n\tpushfq\n\tpopq %0"
	    : "=r"(fl), "+r"(rsi), "+r"(rdx) : : "cc");
	return (fl & 0x8D5);
}

/* At the LOOP after the body's first round from rcx, rdx; complete it. */
static unsigned
cll_first_round(struct tx *t, uint64_t rcx, uint64_t rdx, struct vpmu_regs *r)
{
	t->r.rcx = rcx;
	t->r.rsi = CLL_DATA;
	t->r.rdx = rdx;
	t->r.rflags = 0x202;
	at(t, CLL, RESYNC | SETREGS | SETGPRS);
	assert_int_equal(X->exec_wants(t->st, 0), VPMU_DEBUG_BREAK);
	assert_int_equal(vpmu__exact_end(t->st, 0), CLL + 10);	/* the LOOP */
	t->r.rax = 1000;
	t->r.rsi = CLL_DATA + 64;
	t->r.rdx = (uint32_t)(rdx - 1);
	t->r.rflags = 0x202 | cll_flags(CLL_DATA, rdx);
	at(t, CLL + 10, SETREGS | SETGPRS);
	*r = t->r;
	return (X->exec_complete(t->st, 0, r));
}

static void
loops_of_loads_are_retired_in_closed_form(void **state)
{
	struct tx *t = *state;
	struct vpmu_regs r;
	void *ins, *br;
	unsigned i;

	block_mode(t, 1);
	cll_tables(t, 0);
	PUT(t, CLL, 0x48, 0x8b, 0x06, 0x48, 0x83, 0xc6, 0x40, 0xff, 0xca, 0x90, 0xe2, 0xf4);
	for (i = 0; i < 200; i++)
		memcpy(t->ram + CLL_DATA + 64 * i, &(uint64_t){ 1000 + i }, 8);
	ins = ctr(t, VPMU_EV_INSTRUCTIONS, 0, 0, 0);
	br = ctr(t, VPMU_EV_BRANCHES, 0, 0, 0);
	assert_int_equal(cll_first_round(t, 200, 0xFFFFFFFF00000005ull, &r),
	    VPMU_SET_RIP | VPMU_SET_RCX | VPMU_SET_RFLAGS | VPMU_SET_GPRS);
	assert_int_equal(r.rip, CLL + 12);
	assert_int_equal(r.rcx, 0);
	assert_int_equal(r.rsi, CLL_DATA + 200 * 64);
	assert_int_equal(r.rax, 1000 + 199);
	assert_int_equal(r.rdx, (uint32_t)(5 - 200));
	assert_int_equal(r.rflags, 0x202 | cll_flags(CLL_DATA + 199 * 64, 5 - 199));
	assert_int_equal(val(t, ins), 5 * 200);
	assert_int_equal(val(t, br), 200);
	assert_int_equal(stats(t).closed_loops, 1);
	assert_int_equal(stats(t).closed_insns, 5 * 199);

	/* 0x102000 not accessed yet: rounds 1..127 retired, 128 loads there */
	cll_tables(t, 0x102);
	assert_int_equal(cll_first_round(t, 200, 5, &r),
	    VPMU_SET_RIP | VPMU_SET_RCX | VPMU_SET_RFLAGS | VPMU_SET_GPRS);
	assert_int_equal(r.rip, CLL);
	assert_int_equal(r.rcx, 200 - 128);
	assert_int_equal(r.rsi, CLL_DATA + 128 * 64);
	assert_int_equal(r.rax, 1000 + 127);
	assert_int_equal(val(t, ins), 5 * 200 + 5 * 128);
	t->r = r;
	at(t, CLL, SETREGS | SETGPRS);
	assert_int_equal(X->exec_wants(t->st, 0), VPMU_DEBUG_BREAK);
	assert_int_equal(vpmu__exact_end(t->st, 0), CLL + 12);	/* run to the exit */

	/* an overflow in 5 * 50 + 3 instructions: 49 rounds after the first */
	cll_tables(t, 0);
	assert_int_equal(X->set_period(t->st, ins, 5 * 50 + 3), 0);
	assert_int_equal(cll_first_round(t, 200, 5, &r),
	    VPMU_SET_RIP | VPMU_SET_RCX | VPMU_SET_RFLAGS | VPMU_SET_GPRS);
	assert_int_equal(r.rip, CLL);
	assert_int_equal(r.rcx, 200 - 1 - 49);
	assert_int_equal(r.rsi, CLL_DATA + 50 * 64);
	assert_int_equal(r.rax, 1000 + 49);
	assert_int_equal(stats(t).closed_insns, 5 * 199 + 5 * 127 + 5 * 49);
}

/*
 * A JMP through memory (a switch's jump table) ends a block and is
 * completed from the table: add; add; jmp *(%rsi,%rdx,8) at JMT, the
 * table at 0x70000, entry 3 JMT + 0x40.  Not when the entry is not
 * canonical (#GP at the JMP), nor when the table's page has no Accessed
 * bit (the read would set it): the processor runs the JMP.
 */
#define JMT	(CODE + 0xB00)
static void
jumps_through_memory_are_completed(void **state)
{
	struct tx *t = *state;
	uint64_t bp[VPMU_DEBUG_BP_MAX], to = JMT + 0x40, bad = 0x8000000000000000ull;
	struct vpmu_regs r;
	void *c, *b;

	block_mode(t, 1);
	PUT(t, JMT, 0x48, 0x01, 0xd8, 0x48, 0x01, 0xd8, 0xff, 0x24, 0xd6);
	put(t, 0x70000 + 3 * 8, (const uint8_t *)&to, 8);
	put(t, 0x70000 + 4 * 8, (const uint8_t *)&bad, 8);
	c = ctr(t, VPMU_EV_INSTRUCTIONS, 0, 0, 0);
	b = ctr(t, VPMU_EV_BRANCHES, 0, 0, 0);
	t->r.rsi = 0x70000;
	t->r.rdx = 3;
	armed_at(t, JMT, RESYNC | SETREGS, bp);
	assert_int_equal(vpmu__exact_end(t->st, 0), JMT + 6);
	at(t, JMT + 6, SETREGS);
	r = t->r;
	assert_int_equal(X->exec_complete(t->st, 0, &r), VPMU_SET_RIP);
	assert_int_equal(r.rip, JMT + 0x40);
	assert_int_equal(val(t, c), 3);
	assert_int_equal(val(t, b), 1);

	t->r.rdx = 4;			/* a non-canonical entry */
	armed_at(t, JMT, RESYNC | SETREGS, bp);
	at(t, JMT + 6, SETREGS);
	r = t->r;
	assert_int_equal(X->exec_complete(t->st, 0, &r), 0);

	tables_4k(t);			/* the table's page not accessed yet */
	pte(t, PT, 0x70, 0x70000 | PTE_P | PTE_RW);
	t->r.rdx = 3;
	armed_at(t, JMT, RESYNC | SETREGS, bp);
	at(t, JMT + 6, SETREGS);
	r = t->r;
	assert_int_equal(X->exec_complete(t->st, 0, &r), 0);
	tables_2m(t);
}

/*
 * A loop that calls a function: call F; dec rcx; jnz FFX | F: add rax,
 * rbx; ret.  The CALL and the RET to it go the same way every round, so
 * the loop is fast-forwarded to its exit (100 rounds of 5 instructions,
 * 3 branches) as one without calls.  With a Jcc foreseen from the
 * registers inside the body it is not (its way may change).
 */
#define FFX	(CODE + 0xC00)
static void
loops_with_calls_are_fast_forwarded(void **state)
{
	struct tx *t = *state;
	uint64_t bp[VPMU_DEBUG_BP_MAX], ra = FFX + 5;
	void *c, *b;

	block_mode_flags(t, 1, 0);
	PUT(t, FFX, 0xe8, 0x3b, 0x00, 0x00, 0x00, 0x48, 0xff, 0xc9, 0x75, 0xf6);
	PUT(t, FFX + 0x40, 0x48, 0x01, 0xd8, 0xc3);
	c = ctr(t, VPMU_EV_INSTRUCTIONS, 0, 0, 0);
	b = ctr(t, VPMU_EV_BRANCHES, 0, 0, 0);
	t->r.rsp = STACK;
	t->r.rcx = 100;
	armed_at(t, FFX, RESYNC | SETREGS, bp);
	assert_int_equal(vpmu__exact_end(t->st, 0), FFX + 10);
	assert_int_equal(stats(t).ff_loops, 1);
	put(t, STACK - 8, (const uint8_t *)&ra, 8);
	t->r.rcx = 0;
	t->r.rax += 100 * t->r.rbx;
	at(t, FFX + 10, SETREGS);
	assert_int_equal(val(t, c), 500);
	assert_int_equal(val(t, b), 300);
	assert_int_equal(stats(t).ff_insns, 500);
	assert_int_equal(stats(t).unresolved, 0);

	/* test rax, rax; jz +0 in F: a Jcc on data, no fast-forward */
	PUT(t, FFX + 0x40, 0x48, 0x85, 0xc0, 0x74, 0x00, 0x48, 0x01, 0xd8, 0xc3);
	t->r.rcx = 100;
	t->r.rax = 1;
	armed_at(t, FFX, RESYNC | SETREGS, bp);
	assert_int_equal(vpmu__exact_end(t->st, 0), FFX + 8);	/* the JNZ */
	assert_int_equal(stats(t).ff_loops, 1);
}

/*
 * An access whose address the run knows (a register not written since P,
 * RSP, RIP) to memory the page tables let it make cannot fault: the block
 * needs no breakpoint on the fault handlers.  EAS: mov 8(%rbx), %rax; inc
 * %rdx x 3; ret.  RBX on the stack page: the end alone; RBX unmapped, or
 * loaded by the run (mov (%rdi), %rbx first): the end and three handlers.
 */
#define EAS	(CODE + 0x900)
static void
known_addresses_need_no_handlers(void **state)
{
	struct tx *t = *state;
	uint64_t bp[VPMU_DEBUG_BP_MAX];
	unsigned need;

	block_mode_flags(t, 1, 0);
	PUT(t, EAS, 0x48, 0x8b, 0x43, 0x08, 0x48, 0xff, 0xc2, 0x48, 0xff, 0xc2, 0x48, 0xff, 0xc2,
	    0xc3);
	PUT(t, EAS + 0x20, 0x48, 0x8b, 0x1f, 0x48, 0x8b, 0x43, 0x08, 0x48, 0xff, 0xc2, 0x48, 0xff,
	    0xc2, 0x48, 0xff, 0xc2, 0xc3);
	(void)ctr(t, VPMU_EV_INSTRUCTIONS, 0, 0, 0);
	t->r.rsp = STACK;
	t->r.rbx = STACK - 0x200;
	t->r.rdi = STACK - 0x100;
	armed_at(t, EAS, RESYNC | SETREGS, bp);
	assert_int_equal(vpmu__exact_end(t->st, 0), EAS + 13);
	(void)X->exec_breaks(t->st, 0, bp, VPMU_DEBUG_BP_MAX, &need);
	assert_int_equal(__builtin_popcount(need), 1);
	t->r.rbx = 0x7FFF00000000ull;
	armed_at(t, EAS, RESYNC | SETREGS, bp);
	(void)X->exec_breaks(t->st, 0, bp, VPMU_DEBUG_BP_MAX, &need);
	assert_int_equal(__builtin_popcount(need), 4);
	t->r.rbx = STACK - 0x200;
	armed_at(t, EAS + 0x20, RESYNC | SETREGS, bp);
	assert_int_equal(vpmu__exact_end(t->st, 0), EAS + 0x30);
	(void)X->exec_breaks(t->st, 0, bp, VPMU_DEBUG_BP_MAX, &need);
	assert_int_equal(__builtin_popcount(need), 4);
}

/*
 * A loop whose branches are all foreseen or completed still lets
 * interrupts in: after STREAK_MAX (32) runs and completions, 16 rounds of
 * the FORE loop (one run to the JNZ and its completion each), the next
 * instruction is stepped.  Every round ends with the registers the run
 * implies (nothing mispredicted).
 */
static void
foreseen_loops_still_step(void **state)
{
	struct tx *t = *state;
	struct vpmu_regs r;
	uint64_t bp[VPMU_DEBUG_BP_MAX], v;
	unsigned i;
	void *c;

	block_mode_flags(t, 1, 0);
	PUT(t, FORE, 0x48, 0x85, 0xc9, 0x74, 0x05, 0x48, 0xff, 0xc2, 0xeb, 0x03,
	    0x48, 0xff, 0xca, 0x48, 0xff, 0xc9, 0x75, 0xee);
	c = ctr(t, VPMU_EV_INSTRUCTIONS, 0, 0, 0);
	t->r.rcx = 100;
	t->r.rdx = 0;
	t->r.rflags = 0x202;			/* IF: interrupts could come in */
	at(t, FORE, RESYNC | STEP | SETREGS);
	for (i = 0; i < 16; i++) {
		assert_int_equal(X->exec_wants(t->st, 0), VPMU_DEBUG_BREAK);
		assert_int_equal(X->exec_breaks(t->st, 0, bp, VPMU_DEBUG_BP_MAX, NULL), 4);
		assert_int_equal(vpmu__exact_end(t->st, 0), FORE + 16);
		/* DEC RCX from v: ZF, SF and OF clear here; PF, AF from the result */
		v = t->r.rcx--;
		t->r.rdx++;
		t->r.rflags = 0x202 | (__builtin_parityll(t->r.rcx & 0xFF) ? 0 : 0x4) |
		    ((v ^ 1 ^ t->r.rcx) & 0x10);
		at(t, FORE + 16, SETREGS);
		r = t->r;
		assert_int_equal(X->exec_complete(t->st, 0, &r), VPMU_SET_RIP);
		t->r = r;
	}
	assert_int_equal(stats(t).mispredicted, 0);
	assert_int_equal(val(t, c), 16 * 6);
	assert_int_equal(X->exec_wants(t->st, 0), VPMU_DEBUG_STEP);
}

/*
 * SUB imm and ADD imm count too: RCX 40 less 4 a round is 10 rounds; 42
 * would pass 0 (not fast-forwarded, the branch completed); R8D less 2
 * from 10 (upper half set) is 5.  An exit at the JNZ after the third SUB
 * (RCX 28): two rounds and ADD, SUB of the third.
 */
static void
sub_and_add_loops_are_fast_forwarded(void **state)
{
	struct tx *t = *state;
	void *c, *b;

	ff_code(t, 0);
	c = ctr(t, VPMU_EV_INSTRUCTIONS, 0, 0, 0);
	b = ctr(t, VPMU_EV_BRANCHES, 0, 0, 0);
	assert_int_equal(ff_plan(t, FFS, 40), FFS + 9);
	t->r.rcx = 0;
	at(t, FFS + 9, SETREGS);
	assert_int_equal(val(t, c), 30);
	assert_int_equal(val(t, b), 10);
	assert_int_equal(ff_plan(t, FFS, 42), FFS + 7);
	assert_int_equal(ff_plan(t, FFS, 40), FFS + 9);
	t->r.rcx = 28;
	at(t, FFS + 7, SETREGS);
	assert_int_equal(val(t, c), 30 + 8);
	assert_int_equal(val(t, b), 10 + 2);

	t->r.r8 = (1ull << 32) + 10;
	assert_int_equal(ff_plan(t, FFA, 0), FFA + 9);
	t->r.r8 = 0;
	at(t, FFA + 9, SETREGS);
	assert_int_equal(val(t, c), 38 + 15);
	assert_int_equal(val(t, b), 12 + 5);
	assert_int_equal(stats(t).unresolved, 0);
}

/* vpmu__gmem_can_access: present, user/supervisor, writable, SMAP, WP, PKE. */
static void
gmem_access_rules(void **state)
{
	struct tx *t = *state;
	struct vpmu_gmem_paging pg = { VPMU_CR0_PE | VPMU_CR0_PG | VPMU_CR0_WP, PML4,
	    VPMU_CR4_PAE, VPMU_EFER_LMA };

	tables_4k(t);		/* supervisor pages; 0x11000 absent; 0x20000 read-only */
	assert_true(vpmu__gmem_can_access(&t->mem, &pg, 0x10000, 8, true, 0, false));
	assert_false(vpmu__gmem_can_access(&t->mem, &pg, 0x11000, 8, false, 0, false));
	assert_false(vpmu__gmem_can_access(&t->mem, &pg, 0x10ffc, 8, false, 0, false));
	assert_true(vpmu__gmem_can_access(&t->mem, &pg, 0x20000, 8, false, 0, false));
	assert_false(vpmu__gmem_can_access(&t->mem, &pg, 0x20000, 8, true, 0, false));
	pg.cr0 &= ~VPMU_CR0_WP;			/* CPL 0 writes read-only pages */
	assert_true(vpmu__gmem_can_access(&t->mem, &pg, 0x20000, 8, true, 0, false));
	assert_false(vpmu__gmem_can_access(&t->mem, &pg, 0x10000, 8, false, 3, false));
	/* a user page: CPL 3 yes; CPL 0 under SMAP only with AC */
	pte(t, PML4, 0, PDPT | PTE_P | PTE_RW | 4);
	pte(t, PDPT, 0, PD | PTE_P | PTE_RW | 4);
	pte(t, PD, 0, PT | PTE_P | PTE_RW | 4);
	pte(t, PT, 0x10, 0x10000 | PTE_P | PTE_RW | 4);
	assert_true(vpmu__gmem_can_access(&t->mem, &pg, 0x10000, 8, true, 3, false));
	assert_true(vpmu__gmem_can_access(&t->mem, &pg, 0x10000, 8, true, 0, false));
	/* protection keys: PKRU (CR4.PKE) for user pages, PKRS (CR4.PKS) for the others */
	pg.cr4 |= VPMU_CR4_PKE;
	assert_false(vpmu__gmem_can_access(&t->mem, &pg, 0x10000, 8, false, 3, false));
	assert_true(vpmu__gmem_can_access(&t->mem, &pg, 0x20000, 8, false, 0, false));
	pg.cr4 = (pg.cr4 & ~VPMU_CR4_PKE) | VPMU_CR4_PKS;
	assert_true(vpmu__gmem_can_access(&t->mem, &pg, 0x10000, 8, false, 3, false));
	assert_false(vpmu__gmem_can_access(&t->mem, &pg, 0x20000, 8, false, 0, false));
	pg.cr4 &= ~VPMU_CR4_PKS;
	/*
	 * Reserved bits fault (found by fuzz_exact): XD without EFER.NXE, PS
	 * in a PML4E, the low address bits of a 2 MiB page; the walk that
	 * reads code does not refuse them.
	 */
	pte(t, PT, 0x10, 0x10000 | PTE_P | PTE_RW | 4 | 1ull << 63);
	assert_false(vpmu__gmem_can_access(&t->mem, &pg, 0x10000, 8, true, 3, false));
	assert_int_equal(vpmu__gmem_translate(&t->mem, &pg, 0x10008, &(uint64_t){ 0 }), 0);
	pg.efer |= 1ull << 11;			/* NXE */
	assert_true(vpmu__gmem_can_access(&t->mem, &pg, 0x10000, 8, true, 3, false));
	pg.efer &= ~(1ull << 11);
	pte(t, PT, 0x10, 0x10000 | PTE_P | PTE_RW | 4);
	pte(t, PML4, 0, PDPT | PTE_P | PTE_RW | 4 | PTE_PS);
	assert_false(vpmu__gmem_can_access(&t->mem, &pg, 0x10000, 8, true, 3, false));
	pte(t, PML4, 0, PDPT | PTE_P | PTE_RW | 4);
	pte(t, PD, 0, PTE_P | PTE_RW | 4 | PTE_PS | 1ull << 13);
	assert_false(vpmu__gmem_can_access(&t->mem, &pg, 0x10000, 8, true, 3, false));
	pte(t, PD, 0, PTE_P | PTE_RW | 4 | PTE_PS);
	assert_true(vpmu__gmem_can_access(&t->mem, &pg, 0x10000, 8, true, 3, false));
	pte(t, PD, 0, PT | PTE_P | PTE_RW | 4);
	pg.cr4 |= VPMU_CR4_SMAP;
	assert_false(vpmu__gmem_can_access(&t->mem, &pg, 0x10000, 8, true, 0, false));
	assert_true(vpmu__gmem_can_access(&t->mem, &pg, 0x10000, 8, true, 0, true));
	pg.cr4 |= VPMU_CR4_PKE;
	assert_false(vpmu__gmem_can_access(&t->mem, &pg, 0x10000, 8, true, 3, false));
	/* not IA-32e paging: never */
	pg.cr4 = VPMU_CR4_PAE;
	pg.efer = 0;
	assert_false(vpmu__gmem_can_access(&t->mem, &pg, 0x10000, 8, false, 0, false));
}

/*
 * CMP/JNE loops: RDX from 3 up to RSI = 13 is 10 rounds of 4, whichever
 * side of the CMP it is on; EDX up to the immediate 100 from 96 (upper
 * half set) is 4.  An exit at the CMP in the fourth round (RDX 7, its
 * INC run): three rounds, ADD and INC.  A bound below the start would
 * wrap: not fast-forwarded.
 */
static void
cmp_jne_loops_are_fast_forwarded(void **state)
{
	struct tx *t = *state;
	void *c, *b;

	ff_code(t, 0);
	c = ctr(t, VPMU_EV_INSTRUCTIONS, 0, 0, 0);
	b = ctr(t, VPMU_EV_BRANCHES, 0, 0, 0);
	t->r.rdx = 3;
	t->r.rsi = 13;
	assert_int_equal(ff_plan(t, FFC, 0), FFC + 11);
	t->r.rdx = 13;
	at(t, FFC + 11, SETREGS);
	assert_int_equal(val(t, c), 40);
	assert_int_equal(val(t, b), 10);

	t->r.rdx = 3;
	assert_int_equal(ff_plan(t, FFR, 0), FFR + 11);
	t->r.rdx = 7;
	at(t, FFR + 6, SETREGS);
	assert_int_equal(val(t, c), 40 + 14);
	assert_int_equal(val(t, b), 10 + 3);

	t->r.rdx = 0xFFFFFFFF00000060ull;
	assert_int_equal(ff_plan(t, FFI, 0), FFI + 10);
	t->r.rdx = 100;
	at(t, FFI + 10, SETREGS);
	assert_int_equal(val(t, c), 54 + 16);
	assert_int_equal(val(t, b), 13 + 4);

	t->r.rdx = 13;
	t->r.rsi = 3;
	assert_int_equal(ff_plan(t, FFC, 0), FFC + 9);		/* the JNE, completed */
	assert_int_equal(stats(t).unresolved, 0);
}

/*
 * CPUID.0xA.EBX on the exact source: the architectural events it does not
 * count (LLC references and misses, branch misses: bits 3, 4, 6) are
 * offered as unavailable, on top of the model's own ebx; on the synthetic
 * source, which counts anything, only the model's.
 */
static void
cpuid_ebx_marks_events_the_source_cannot_count(void **state)
{
	static const struct { const char *model; int exact; uint32_t ebx; } cases[] = {
		{ "intel-v2", 1, 0x58 },
		{ "intel-v2:ebx=0x5", 1, 0x5D },
		{ "intel-v5:ebx=0x7f", 1, 0x7F },
		{ "intel-v2", 0, 0x0 },
		{ "intel-v2:ebx=0x5", 0, 0x5 },
	};
	struct vpmu_exact_params xp = { .vendor = VPMU_VENDOR_INTEL, .mode = VPMU_EXACT_STEP };
	struct vpmu_model m;
	vpmu_config *cfg;
	vpmu_vm *vm;
	uint32_t r[4];
	char err[128];
	size_t i;

	(void)state;
	for (i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		assert_int_equal(vpmu_model_parse(cases[i].model, &m, err, sizeof(err)), 0);
		assert_int_equal(vpmu_config_create(&cfg), 0);
		assert_int_equal(vpmu_config_set_model(cfg, &m), 0);
		if (cases[i].exact)
			assert_int_equal(vpmu_config_set_source(cfg, &vpmu_source_exact, &xp), 0);
		assert_int_equal(vpmu_vm_create(cfg, &vm), 0);
		vpmu_config_destroy(cfg);
		assert_int_equal(vpmu_cpuid_get_leaf(vm, 0xA, 0, r), 0);
		assert_int_equal(r[1], cases[i].ebx);
		vpmu_vm_destroy(vm);
	}
}

/*
 * The monitor's mistake is an error, not wrong numbers: with the exact
 * source and no guest RAM given (vpmu_kvm_add_memory() forgotten), the
 * KVM glue refuses the vCPU with EFAULT, for the source could read no
 * instruction; once a slot is added the same call succeeds.  Another
 * source reads no guest code and takes the vCPU without RAM.  Needs
 * /dev/kvm (a VM and a vCPU of KVM's): skipped with the reason without it.
 */
static void
vpmu_kvm_vcpu_init_EFAULT(void **state)
{
	static uint8_t ram[0x10000];
	const struct vpmu_source_ops *const srcs[] = { &vpmu_source_exact,
	    &vpmu_source_synthetic };
	struct kvm_run *run;
	vpmu_config *cfg;
	vpmu_vm *vm;
	vpmu_kvm *k;
	size_t i;
	int kvm, vmfd, vcpufd;

	(void)state;
	if ((kvm = open("/dev/kvm", O_RDWR | O_CLOEXEC)) < 0) {
		print_message("vpmu_kvm_vcpu_init_EFAULT: skipped: it needs /dev/kvm: %s\n",
		    strerror(errno));
		skip();
	}
	assert_non_null(run = calloc(1, sizeof(*run)));
	for (i = 0; i < sizeof(srcs) / sizeof(srcs[0]); i++) {
		assert_int_equal(vpmu_config_create(&cfg), 0);
		assert_int_equal(vpmu_config_set_vcpus(cfg, 1), 0);
		assert_int_equal(vpmu_config_set_source(cfg, srcs[i], NULL), 0);
		assert_int_equal(vpmu_vm_create(cfg, &vm), 0);
		vpmu_config_destroy(cfg);
		assert_true((vmfd = ioctl(kvm, KVM_CREATE_VM, 0)) >= 0);
		assert_int_equal(vpmu_kvm_create(vm, vmfd, &k), 0);
		assert_true((vcpufd = ioctl(vmfd, KVM_CREATE_VCPU, 0ul)) >= 0);
		if (srcs[i] == &vpmu_source_exact) {
			assert_int_equal(vpmu_kvm_vcpu_init(k, 0, vcpufd, run), EFAULT);
			/* Not taken: the vCPU is not the glue's yet. */
			assert_int_equal(vpmu_kvm_pre_run(k, 0), EINVAL);
			assert_int_equal(vpmu_kvm_add_memory(k, 0, sizeof(ram), ram), 0);
		}
		assert_int_equal(vpmu_kvm_vcpu_init(k, 0, vcpufd, run), 0);
		assert_int_equal(vpmu_kvm_pre_run(k, 0), 0);
		vpmu_kvm_destroy(k);
		vpmu_vm_destroy(vm);
		close(vcpufd);
		close(vmfd);
	}
	free(run);
	close(kvm);
}

/*
 * Instructions run in user space: FORE's loop (above) with the VMM taking
 * every register.  At the block's end after the first round the source
 * completes the JNZ and runs the four rounds left itself (RCX 4 to 0,
 * INC RDX each), stopping at the HLT after the loop: 25 instructions, 13
 * branches more, RIP, RCX, RDX and the flags handed back.  With an
 * instruction breakpoint of the VMM's on the JMP (exec_stops) it stops
 * before the JMP, whose breakpoint then hits on the processor.
 */
static void
instructions_run_in_user_space(void **state)
{
	struct tx *t = *state;
	uint64_t bp[VPMU_DEBUG_BP_MAX], stop = FORE + 8;
	struct vpmu_regs r;
	void *c, *b;
	unsigned k;

	for (k = 0; k < 2; k++) {
		block_mode_flags(t, 1, 0);
		/* test rcx, rcx; jz +5; inc rdx; jmp +3; dec rdx; dec rcx; jnz FORE; hlt */
		PUT(t, FORE, 0x48, 0x85, 0xc9, 0x74, 0x05, 0x48, 0xff, 0xc2, 0xeb, 0x03,
		    0x48, 0xff, 0xca, 0x48, 0xff, 0xc9, 0x75, 0xee, 0xf4);
		c = ctr(t, VPMU_EV_INSTRUCTIONS, 0, 0, 0);
		b = ctr(t, VPMU_EV_BRANCHES, 0, 0, 0);
		t->r.rcx = 5;
		t->r.rdx = 100;
		t->r.rflags = 0x2;
		armed_at(t, FORE, RESYNC | SETREGS | SETGPRS, bp);
		assert_int_equal(vpmu__exact_end(t->st, 0), FORE + 16);
		t->r.rcx = 4;
		t->r.rdx = 101;
		at(t, FORE + 16, SETREGS | SETGPRS);
		assert_int_equal(val(t, c), 5);
		vpmu__exact_stops(t->st, 0, &stop, k);
		r = t->r;
		assert_int_equal(X->exec_complete(t->st, 0, &r), VPMU_SET_RIP | VPMU_SET_RSP |
		    VPMU_SET_RCX | VPMU_SET_RFLAGS | VPMU_SET_GPRS);
		assert_int_equal(stats(t).interp_runs, 1);
		if (k == 0) {
			assert_int_equal(r.rip, FORE + 18);	/* the HLT */
			assert_int_equal(r.rcx, 0);
			assert_int_equal(r.rdx, 105);
			assert_int_equal(r.rflags & 0x44, 0x44);	/* ZF PF: DEC to 0 */
			assert_int_equal(val(t, c), 5 + 1 + 4 * 6);
			assert_int_equal(val(t, b), 2 + 1 + 4 * 3);
			assert_int_equal(stats(t).interp_insns, 25);
		} else {
			assert_int_equal(r.rip, FORE + 8);	/* the JMP, a stop */
			assert_int_equal(r.rcx, 4);
			assert_int_equal(r.rdx, 102);
			assert_int_equal(val(t, c), 5 + 4);
			assert_int_equal(stats(t).interp_insns, 4);
		}
		assert_int_equal(stats(t).unresolved, 0);
	}
	/* the same without SETGPRS: the JNZ alone is completed */
	block_mode_flags(t, 1, 0);
	c = ctr(t, VPMU_EV_INSTRUCTIONS, 0, 0, 0);
	t->r.rcx = 5;
	t->r.rdx = 100;
	armed_at(t, FORE, RESYNC | SETREGS, bp);
	t->r.rcx = 4;
	t->r.rdx = 101;
	at(t, FORE + 16, SETREGS);
	r = t->r;
	assert_int_equal(X->exec_complete(t->st, 0, &r), VPMU_SET_RIP);
	assert_int_equal(r.rip, FORE);
	assert_int_equal(val(t, c), 6);
	assert_int_equal(stats(t).interp_runs, 0);
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(decode_classifies_instructions),
		cmocka_unit_test_setup_teardown(decode_cache_checks_the_bytes, setup, teardown),
		cmocka_unit_test_setup_teardown(gmem_memo_keeps_one_page, setup, teardown),
		cmocka_unit_test_setup_teardown(gmem_slots_and_walks, setup, teardown),
#define T(f)	cmocka_unit_test_setup_teardown(f, setup, teardown)
		T(steps_count_instructions_and_branches),
		T(cpi_scales_cycles),
		T(ref_cycles_follow_the_tsc),
		T(out_shares_its_exit),
		T(fences_share_an_exit),
		T(iretq_follows_the_stack),
		T(user_code_unseen_is_counted),
		T(rep_string_retires_once),
		T(faulted_wrmsr_counts_the_handler),
		T(nmi_injection_counts_the_handler),
		T(nmi_before_iretq_follows_both_frames),
		T(usr_os_filter_on_cpl),
		T(cmask_inv_edge_cpi1),
		T(cmask_inv_edge_cpi3),
		T(raw_selects_by_vendor),
		T(supports_answers),
		T(unmapped_fetch_is_recorded),
		T(unexplained_exit_counts_one),
		T(times_follow_enabled),
		cmocka_unit_test(step_over_hlt_is_left_to_the_monitor),
		cmocka_unit_test(hlt_at_the_stop_is_retired),
		cmocka_unit_test(cpuid_ebx_marks_events_the_source_cannot_count),
		cmocka_unit_test(decode_marks_block_instructions),
		T(block_mode_is_the_default),
		T(block_runs_to_its_branch),
		T(block_fault_stops_at_the_handler),
		T(block_stops_before_overflow),
		T(block_completes_its_loop_branch),
		T(completed_branches_chain),
		T(contract_hands_back_completed_branches),
		T(loops_are_fast_forwarded),
		T(dec_jnz_loops_are_fast_forwarded),
T(stack_counter_loops_are_fast_forwarded),
				T(fault_inside_a_fast_forwarded_loop),
		T(sub_and_add_loops_are_fast_forwarded),
		T(cmp_jne_loops_are_fast_forwarded),
		T(breakpoints_stay_armed),
		T(blocks_run_through_calls),
		T(branches_inside_runs_are_foreseen),
		T(indirect_branches_are_foreseen),
		T(branch_after_step_is_completed),
		T(loop_self_is_retired_at_once),
		T(loops_of_loads_are_retired_in_closed_form),
		T(jumps_through_memory_are_completed),
		T(loops_with_calls_are_fast_forwarded),
		T(known_addresses_need_no_handlers),
		T(foreseen_loops_still_step),
		T(instructions_run_in_user_space),
	T(branches_inside_runs_are_foreseen),
		T(gmem_access_rules),
#undef T
		cmocka_unit_test(vpmu_kvm_vcpu_init_EFAULT),
	};

	return (cmocka_run_group_tests(tests, NULL, NULL));
}
