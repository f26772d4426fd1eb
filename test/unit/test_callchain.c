/*
 * test_callchain.c -- the sampler's frame-pointer walk
 * (vpmu__gmem_callchain, gmem.c) on canonical and non-canonical addresses.
 *
 * A non-canonical linear address faults on hardware (SDM Vol. 1, 3.3.7.1),
 * so the guest could never have followed it: a non-canonical RBP, saved
 * RBP or return address, or a frame whose 16 bytes run past the end of the
 * canonical lower half, ends the chain with what it holds so far.  The
 * page walk itself looks only at the bits that index its tables, so each
 * non-canonical address used here has a mapped alias holding a well-formed
 * frame: a walk that followed it would return a longer chain.
 *
 * Guest memory is 2 MiB at guest-physical 0.  Every 2 MiB page below maps
 * it whole, so a linear address and its alias read the same bytes:
 *
 *   4-level (CR3 = PML4)                      guest-physical
 *   0x0000000000000000 (PML4[0])              0
 *   0x00007FFFFFE00000 (PML4[255], the top)   0 (0x00007FFFFFFFFFF8: 0x1FFFF8)
 *   0xFFFF800000000000 (PML4[256])            0
 *   0x0000800000000000, not canonical         0, through PML4[256]
 *
 *   5-level (CR4.LA57, CR3 = PML5): PML5[0] -> the same PML4, so
 *   0x0000800000000000 is canonical there; PML5[255] -> a PML4 whose
 *   entry 511 is the same top, 0x00FFFFFFFFFFFFF8 at 0x1FFFF8; PML5[256]
 *   -> the same PML4 again, the alias of 0x0100000000000000, not canonical.
 *
 * Frames are [fp] the saved RBP, [fp + 8] the return address.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "gmem.h"

#define RAM_SIZE	(2u << 20)
#define PML4		0x1000u		/* PML4[0], [255], [256] */
#define PDPT_LO		0x2000u
#define PD_LO		0x3000u
#define PDPT_TOP	0x4000u
#define PD_TOP		0x5000u
#define PDPT_HI		0x6000u
#define PD_HI		0x7000u
#define PML5		0x8000u		/* PML5[0], [255], [256] */
#define PML4_TOP	0x9000u		/* under PML5[255]: entry 511 */
#define PTE_P		0x1ull
#define PTE_RW		0x2ull
#define PTE_PS		0x80ull
#define TBL		(PTE_P | PTE_RW)

#define RIP		0x400100ull
#define MAX		8
#define UNSET		0xEEEEEEEEEEEEEEEEull	/* pc[] entries the walk did not fill */

/* The well-formed frames the aliases reach, and where the straddle reads. */
#define ALIAS_A		0x10u		/* [0x10] 0, [0x18] RET_A */
#define ALIAS_B		0x20u		/* [0x20] 0, [0x28] RET_B */
#define RET_A		0x401111ull
#define RET_B		0x402222ull
#define RET_WRAP	0x401234ull	/* at guest-physical 0 */
#define TOP_FP		0x00007FFFFFFFFFF8ull	/* last 8 bytes of the lower half */
#define TOP_FP57	0x00FFFFFFFFFFFFF8ull	/* the same with LA57 */

struct tc {
	uint8_t *ram;
	struct vpmu_gmem mem;
	struct vpmu_gmem_paging pg;
	uint64_t pc[MAX + 1];
};

static void
word(struct tc *t, uint64_t gpa, uint64_t val)
{
	memcpy(t->ram + gpa, &val, 8);
}

static void
frame(struct tc *t, uint64_t gpa, uint64_t saved_rbp, uint64_t ret)
{
	word(t, gpa, saved_rbp);
	word(t, gpa + 8, ret);
}

static int
setup(void **state)
{
	struct tc *t = calloc(1, sizeof(*t));

	assert_non_null(t);
	t->ram = calloc(1, RAM_SIZE);
	assert_non_null(t->ram);
	vpmu__gmem_init(&t->mem);
	assert_int_equal(vpmu__gmem_add(&t->mem, 0, RAM_SIZE, t->ram), 0);
	word(t, PML4 + 0 * 8, PDPT_LO | TBL);
	word(t, PML4 + 255 * 8, PDPT_TOP | TBL);
	word(t, PML4 + 256 * 8, PDPT_HI | TBL);
	word(t, PDPT_LO + 0 * 8, PD_LO | TBL);
	word(t, PD_LO + 0 * 8, 0 | TBL | PTE_PS);
	word(t, PDPT_TOP + 511 * 8, PD_TOP | TBL);
	word(t, PD_TOP + 511 * 8, 0 | TBL | PTE_PS);
	word(t, PDPT_HI + 0 * 8, PD_HI | TBL);
	word(t, PD_HI + 0 * 8, 0 | TBL | PTE_PS);
	word(t, PML5 + 0 * 8, PML4 | TBL);
	word(t, PML5 + 255 * 8, PML4_TOP | TBL);
	word(t, PML5 + 256 * 8, PML4 | TBL);
	word(t, PML4_TOP + 511 * 8, PDPT_TOP | TBL);
	frame(t, ALIAS_A, 0, RET_A);
	frame(t, ALIAS_B, 0, RET_B);
	word(t, 0, RET_WRAP);		/* the word after TOP_FP's, through the alias */
	word(t, RAM_SIZE - 8, 0);	/* TOP_FP's saved RBP */
	t->pg = (struct vpmu_gmem_paging){ VPMU_CR0_PE | VPMU_CR0_PG, PML4, VPMU_CR4_PAE,
	    VPMU_EFER_LMA };
	*state = t;
	return (0);
}

static int
teardown(void **state)
{
	struct tc *t = *state;

	free(t->ram);
	free(t);
	return (0);
}

static void
la57(struct tc *t)
{
	t->pg.cr3 = PML5;
	t->pg.cr4 |= VPMU_CR4_LA57;
}

/* The walk from rbp: its length, and pc[] filled with UNSET beyond it. */
static unsigned
walk(struct tc *t, uint64_t rbp)
{
	unsigned i;

	for (i = 0; i < MAX + 1; i++)
		t->pc[i] = UNSET;
	return (vpmu__gmem_callchain(&t->mem, &t->pg, RIP, rbp, t->pc, MAX));
}

/* pc[] holds exactly the n addresses given, then UNSET. */
static void
chain_is(const struct tc *t, unsigned n, const uint64_t *want)
{
	unsigned i;

	for (i = 0; i < n; i++)
		assert_int_equal(t->pc[i], want[i]);
	assert_int_equal(t->pc[n], UNSET);
}
#define CHAIN_IS(t, ...)	chain_is(t, \
			    sizeof((const uint64_t[]){ __VA_ARGS__ }) / sizeof(uint64_t), \
			    (const uint64_t[]){ __VA_ARGS__ })

/* Canonical frames in both halves are followed (the control). */
static void
callchain_follows_canonical_frames(void **state)
{
	struct tc *t = *state;

	frame(t, 0x10000, 0x10100, 0x401000);
	frame(t, 0x10100, 0xFFFF800000000030ull, 0x401001);
	frame(t, 0x30, 0, 0x401002);		/* 0xFFFF800000000030 */
	assert_int_equal(walk(t, 0x10000), 4);
	CHAIN_IS(t, RIP, 0x401000, 0x401001, 0x401002);
	/* The top frame of the lower half, read through its own mapping. */
	word(t, RAM_SIZE - 16, 0);
	word(t, RAM_SIZE - 8, 0x401003);
	assert_int_equal(walk(t, TOP_FP - 8), 2);
	CHAIN_IS(t, RIP, 0x401003);
}

/* A non-canonical RBP: the chain is the RIP alone. */
static void
callchain_noncanonical_rbp(void **state)
{
	struct tc *t = *state;

	assert_int_equal(walk(t, 0x0000800000000000ull + ALIAS_A), 1);
	CHAIN_IS(t, RIP);
	assert_int_equal(walk(t, 0xFFFF000000000000ull + ALIAS_A), 1);	/* PML4[0] */
	CHAIN_IS(t, RIP);
	assert_int_equal(walk(t, 0x8000000000000000ull + ALIAS_A), 1);
	CHAIN_IS(t, RIP);
}

/* A non-canonical saved RBP in the middle: the chain keeps what it has. */
static void
callchain_noncanonical_saved_rbp(void **state)
{
	struct tc *t = *state;

	frame(t, 0x10000, 0x10100, 0x401000);
	frame(t, 0x10100, 0x0000800000000000ull + ALIAS_B, 0x401001);
	assert_int_equal(walk(t, 0x10000), 3);
	CHAIN_IS(t, RIP, 0x401000, 0x401001);
}

/* A non-canonical return address is not taken, and ends the chain. */
static void
callchain_noncanonical_return(void **state)
{
	struct tc *t = *state;

	frame(t, 0x10000, 0x10100, 0x401000);
	frame(t, 0x10100, 0x10200, 0x0000800000401001ull);
	frame(t, 0x10200, 0, 0x401002);
	assert_int_equal(walk(t, 0x10000), 2);
	CHAIN_IS(t, RIP, 0x401000);
	/* In the first frame. */
	frame(t, 0x10000, 0x10100, 0xFFFF7FFFFFFFFFFFull);
	assert_int_equal(walk(t, 0x10000), 1);
	CHAIN_IS(t, RIP);
}

/*
 * A frame that starts canonical and ends past the lower half: its return
 * address (or, misaligned, its saved RBP's top half) is at a non-canonical
 * address, which the walk must not read through its alias.
 */
static void
callchain_frame_across_the_lower_half_end(void **state)
{
	struct tc *t = *state;

	assert_int_equal(walk(t, TOP_FP), 1);
	CHAIN_IS(t, RIP);
	assert_int_equal(walk(t, TOP_FP + 4), 1);
	CHAIN_IS(t, RIP);
	assert_int_equal(walk(t, TOP_FP - 7), 1);	/* last byte 0x0000800000000000 */
	CHAIN_IS(t, RIP);
	/* As a saved RBP in the middle. */
	frame(t, 0x10000, TOP_FP, 0x401000);
	assert_int_equal(walk(t, 0x10000), 2);
	CHAIN_IS(t, RIP, 0x401000);
}

/* CR4.LA57: canonical is bits 63:56 alike; the same rules at 57 bits. */
static void
callchain_la57(void **state)
{
	struct tc *t = *state;

	la57(t);
	/* Not canonical with 48 bits, canonical with 57: followed. */
	assert_int_equal(walk(t, 0x0000800000000000ull + ALIAS_A), 2);
	CHAIN_IS(t, RIP, RET_A);
	frame(t, 0x10000, 0x0000800000000000ull + ALIAS_B, 0x401000);
	assert_int_equal(walk(t, 0x10000), 3);
	CHAIN_IS(t, RIP, 0x401000, RET_B);
	/* Not canonical with 57 bits (aliases through PML5[256]). */
	assert_int_equal(walk(t, 0x0100000000000000ull + ALIAS_A), 1);
	CHAIN_IS(t, RIP);
	frame(t, 0x10000, 0x0100000000000000ull + ALIAS_B, 0x401000);
	assert_int_equal(walk(t, 0x10000), 2);
	CHAIN_IS(t, RIP, 0x401000);
	frame(t, 0x10000, 0x10100, 0x0100000000401001ull);
	assert_int_equal(walk(t, 0x10000), 1);
	CHAIN_IS(t, RIP);
	/* Across the end of the 57-bit lower half. */
	assert_int_equal(walk(t, TOP_FP57), 1);
	CHAIN_IS(t, RIP);
	frame(t, 0x10000, TOP_FP57, 0x401000);
	assert_int_equal(walk(t, 0x10000), 2);
	CHAIN_IS(t, RIP, 0x401000);
	/* 48-bit TOP_FP is in the middle of the 57-bit lower half: read whole. */
	assert_int_equal(walk(t, TOP_FP), 2);
	CHAIN_IS(t, RIP, RET_WRAP);
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
#define T(f)	cmocka_unit_test_setup_teardown(f, setup, teardown)
		T(callchain_follows_canonical_frames),
		T(callchain_noncanonical_rbp),
		T(callchain_noncanonical_saved_rbp),
		T(callchain_noncanonical_return),
		T(callchain_frame_across_the_lower_half_end),
		T(callchain_la57),
#undef T
	};

	return (cmocka_run_group_tests(tests, NULL, NULL));
}
