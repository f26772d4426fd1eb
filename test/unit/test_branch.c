/*
 * test_branch.c -- the near branches the exact source completes in user
 * space: which ones the decoder marks (decode.c, vpmu_insn.eval), the
 * condition codes against RFLAGS (SDM Vol. 1, Appendix B, and Vol. 2D,
 * B.1.4.7), and their effects on RIP, RCX and RSP (branch.c).
 */
#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <string.h>

#include <cmocka.h>

#include "branch.h"
#include "decode.h"
#include "gmem.h"

#define CF	0x001ull
#define PF	0x004ull
#define ZF	0x040ull
#define SF	0x080ull
#define OF	0x800ull

#define RIP	0x1000ull

static struct vpmu_insn
dec(const uint8_t *b, size_t n)
{
	struct vpmu_insn in;

	assert_int_equal(vpmu__decode(VPMU_DECODE_64, RIP, b, n, &in), 0);
	return (in);
}
#define DEC(...)	dec((const uint8_t[]){ __VA_ARGS__ }, \
			    sizeof((const uint8_t[]){ __VA_ARGS__ }))

/* Which branches are marked, with which condition, and which are not. */
static void
decoder_marks_completable_branches(void **state)
{
	struct vpmu_insn in;

	(void)state;
	in = DEC(0x75, 0x10);				/* jnz +0x10 */
	assert_int_equal(in.eval, VPMU_EVAL_JCC);
	assert_int_equal(in.cond, 0x5);
	assert_int_equal(in.target, RIP + 2 + 0x10);
	in = DEC(0x0f, 0x8e, 0x00, 0x01, 0x00, 0x00);	/* jle rel32 */
	assert_int_equal(in.eval, VPMU_EVAL_JCC);
	assert_int_equal(in.cond, 0xE);
	assert_int_equal(in.target, RIP + 6 + 0x100);
	in = DEC(0xeb, 0xfe);				/* jmp $ */
	assert_int_equal(in.eval, VPMU_EVAL_JMP);
	assert_int_equal(in.target, RIP);
	in = DEC(0xe2, 0xfe);				/* loop $ */
	assert_int_equal(in.eval, VPMU_EVAL_LOOP);
	assert_int_equal(in.cond, VPMU_COND_ALWAYS);
	assert_int_equal(DEC(0xe1, 0xfe).cond, 0x4);	/* loope */
	assert_int_equal(DEC(0xe0, 0xfe).cond, 0x5);	/* loopne */
	assert_int_equal(DEC(0xe3, 0x05).eval, VPMU_EVAL_JRCXZ);
	assert_int_equal(DEC(0x67, 0xe3, 0x05).eval, VPMU_EVAL_JECXZ);
	in = DEC(0xc3);					/* ret */
	assert_int_equal(in.eval, VPMU_EVAL_RET);
	assert_int_equal(in.pop, 0);
	in = DEC(0xc2, 0x10, 0x00);			/* ret 16 */
	assert_int_equal(in.eval, VPMU_EVAL_RET);
	assert_int_equal(in.pop, 16);
	/* Not completed: LOOP on ECX, operand-size prefix, far, indirect, call. */
	assert_int_equal(DEC(0x67, 0xe2, 0xfe).eval, VPMU_EVAL_NONE);
	assert_int_equal(DEC(0x66, 0xeb, 0xfe).eval, VPMU_EVAL_NONE);
	assert_int_equal(DEC(0x66, 0xc3).eval, VPMU_EVAL_NONE);
	assert_int_equal(DEC(0xcb).eval, VPMU_EVAL_NONE);		/* retf */
	assert_int_equal(DEC(0x48, 0xcf).eval, VPMU_EVAL_NONE);	/* iretq */
	assert_int_equal(DEC(0xff, 0xe0).eval, VPMU_EVAL_NONE);	/* jmp rax */
	/*
	 * jmp [rip + 0x10]: relative addressing, but the target is in memory:
	 * completed from memory (a jump table's shape), not as a direct jump.
	 */
	in = DEC(0xff, 0x25, 0x10, 0x00, 0x00, 0x00);
	assert_int_equal(in.eval, VPMU_EVAL_JMP_MEM);
	assert_int_equal(in.ea_base, VPMU_EA_RIP);
	assert_int_equal(in.flow, VPMU_FLOW_INDIRECT);
	assert_false(in.follow);
	in = DEC(0xff, 0x24, 0xd6);			/* jmp [rsi + rdx * 8] */
	assert_int_equal(in.eval, VPMU_EVAL_JMP_MEM);
	assert_int_equal(in.ea_base, 7);
	assert_int_equal(in.ea_index, 3);
	assert_int_equal(in.ea_scale, 8);
	assert_int_equal(DEC(0x64, 0xff, 0x20).eval, VPMU_EVAL_NONE);	/* jmp fs:[rax] */
	assert_int_equal(DEC(0x66, 0xff, 0x20).eval, VPMU_EVAL_NONE);	/* jmp word [rax] */
	in = DEC(0xff, 0x15, 0x10, 0x00, 0x00, 0x00);		/* call [rip + 0x10] */
	assert_int_equal(in.eval, VPMU_EVAL_CALL);
	assert_int_equal(in.flow, VPMU_FLOW_INDIRECT);
	assert_false(in.follow);
	/* loads and NOPs (loops the source retires in closed form) */
	assert_int_equal(DEC(0x48, 0x8b, 0x06).load, 1);		/* mov rax, [rsi] */
	assert_int_equal(DEC(0x8b, 0x46, 0x08).load, 1 | VPMU_COUNT_32);	/* mov eax, [rsi+8] */
	assert_int_equal(DEC(0x48, 0x89, 0x06).load, 0);		/* mov [rsi], rax */
	assert_int_equal(DEC(0x66, 0x8b, 0x06).load, 0);		/* mov ax, [rsi] */
	assert_int_equal(DEC(0x64, 0x48, 0x8b, 0x06).ea_seg, true);	/* fs: */
	assert_int_equal(DEC(0x48, 0x8b, 0xc6).load, 0);		/* mov rax, rsi */
	assert_true(DEC(0x90).nop);
	assert_true(DEC(0x0f, 0x1f, 0x44, 0x00, 0x00).nop);		/* nop [rax+rax] */
	assert_false(DEC(0x41, 0x90).nop);				/* xchg r8, rax */
	assert_false(DEC(0xf3, 0x90).nop);				/* pause */
	assert_true(DEC(0xe8, 0, 0, 0, 0).follow);		/* call rel32 */
	assert_true(DEC(0xeb, 0x05).follow);			/* jmp rel8 */
	assert_false(DEC(0x75, 0x05).follow);			/* jnz */
	/* stack slots a block can check: push, pop, call rel; not pop rsp, push [mem] */
	assert_int_equal(DEC(0x50).stack, -8);			/* push rax */
	assert_int_equal(DEC(0x58).stack, 8);			/* pop rax */
	assert_int_equal(DEC(0xe8, 0, 0, 0, 0).stack, -8);	/* call rel32 */
	assert_int_equal(DEC(0x5c).stack, 0);			/* pop rsp */
	assert_int_equal(DEC(0xff, 0x30).stack, 0);		/* push [rax] */
	assert_int_equal(DEC(0x66, 0x50).stack, 0);		/* push ax */
	/* loop counters and comparisons */
	in = DEC(0x48, 0xff, 0xc9);				/* dec rcx */
	assert_int_equal(in.count, 2);
	assert_int_equal(in.step, 1);
	in = DEC(0xff, 0xc2);					/* inc edx */
	assert_int_equal(in.count, 3 | VPMU_COUNT_32);
	assert_int_equal(in.step, 0xFFFFFFFFu);
	in = DEC(0x48, 0x83, 0xe9, 0x04);			/* sub rcx, 4 */
	assert_int_equal(in.step, 4);
	in = DEC(0x48, 0x39, 0xf2);				/* cmp rdx, rsi */
	assert_int_equal(in.cmp, 3);
	assert_int_equal(in.cmp_with, 7);
	in = DEC(0x83, 0xfa, 0x64);				/* cmp edx, 100 */
	assert_int_equal(in.cmp, 3 | VPMU_COUNT_32);
	assert_int_equal(in.cmp_with, 0);
	assert_int_equal(in.cmp_imm, 100);
	assert_int_equal(DEC(0x66, 0x39, 0xf2).cmp, 0);		/* cmp dx, si */
	assert_int_equal(DEC(0xe8, 0, 0, 0, 0).eval, VPMU_EVAL_CALL);	/* call: completed with its push */
	assert_int_equal(DEC(0x48, 0x01, 0xd8).eval, VPMU_EVAL_NONE);	/* add */
	/* 32-bit code: never. */
	assert_int_equal(vpmu__decode(VPMU_DECODE_32, RIP, (const uint8_t[]){ 0x75, 0x10 }, 2,
	    &in), 0);
	assert_int_equal(in.eval, VPMU_EVAL_NONE);
}

/*
 * Every condition code on flag sets chosen so that each code's outcome
 * is written out here, not computed: taken[c] lists, per flag set, '1'
 * where Jcc with tttn c is taken.
 */
static void
conditions_follow_the_flags(void **state)
{
	static const struct {
		uint64_t rflags;
		const char *taken;	/* c = 0 .. 15: O NO B NB Z NZ BE NBE S NS P NP L NL LE NLE */
	} c[] = {
		{ 0,		"0101010101010101" },
		{ CF,		"0110011001010101" },
		{ ZF,		"0101101001010110" },
		{ SF,		"0101010110011010" },
		{ OF,		"1001010101011010" },
		{ SF | OF,	"1001010110010101" },
		{ PF,		"0101010101100101" },
		{ ZF | SF,	"0101101010011010" },
		{ CF | ZF | SF | OF | PF, "1010101010100110" },
	};
	unsigned i, cc;

	(void)state;
	for (i = 0; i < sizeof(c) / sizeof(c[0]); i++)
		for (cc = 0; cc < 16; cc++)
			if (vpmu__branch_cond(cc, c[i].rflags) != (c[i].taken[cc] == '1'))
				fail_msg("rflags 0x%llx, cc %u: want %c",
				    (unsigned long long)c[i].rflags, cc, c[i].taken[cc]);
	assert_true(vpmu__branch_cond(VPMU_COND_ALWAYS, 0));
}

/* The registers of a 64-bit CPL 0 vCPU, paging off (gva = gpa). */
static struct vpmu_regs
regs(void)
{
	struct vpmu_regs r;

	memset(&r, 0, sizeof(r));
	r.rip = RIP;
	r.rsp = 0x8000;
	r.rflags = 0x2;
	r.cr0 = 1;
	r.long_mode = 1;
	return (r);
}

static void
jumps_and_loops_move_rip_and_rcx(void **state)
{
	struct vpmu_insn in;
	struct vpmu_regs r;

	(void)state;
	in = DEC(0x75, 0x10);			/* jnz: taken, then not */
	r = regs();
	assert_int_equal(vpmu__branch_complete(NULL, &in, &r), VPMU_SET_RIP);
	assert_int_equal(r.rip, RIP + 0x12);
	r = regs();
	r.rflags |= ZF;
	assert_int_equal(vpmu__branch_complete(NULL, &in, &r), VPMU_SET_RIP);
	assert_int_equal(r.rip, RIP + 2);

	in = DEC(0xe2, 0xfe);			/* loop $: RCX 2 -> 1 taken, 1 -> 0 not */
	r = regs();
	r.rcx = 2;
	assert_int_equal(vpmu__branch_complete(NULL, &in, &r), VPMU_SET_RIP | VPMU_SET_RCX);
	assert_int_equal(r.rip, RIP);
	assert_int_equal(r.rcx, 1);
	assert_int_equal(vpmu__branch_complete(NULL, &in, &r), VPMU_SET_RIP | VPMU_SET_RCX);
	assert_int_equal(r.rip, RIP + 2);
	assert_int_equal(r.rcx, 0);
	r.rip = RIP;				/* RCX 0: wraps to all ones, taken */
	assert_int_equal(vpmu__branch_complete(NULL, &in, &r), VPMU_SET_RIP | VPMU_SET_RCX);
	assert_int_equal(r.rcx, UINT64_MAX);
	assert_int_equal(r.rip, RIP);

	in = DEC(0xe0, 0xfe);			/* loopne $ with ZF set: not taken */
	r = regs();
	r.rcx = 5;
	r.rflags |= ZF;
	vpmu__branch_complete(NULL, &in, &r);
	assert_int_equal(r.rip, RIP + 2);
	assert_int_equal(r.rcx, 4);

	in = DEC(0x67, 0xe3, 0x05);		/* jecxz: ECX alone */
	r = regs();
	r.rcx = 0x100000000ull;
	assert_int_equal(vpmu__branch_complete(NULL, &in, &r), VPMU_SET_RIP);
	assert_int_equal(r.rip, RIP + 3 + 5);
	in = DEC(0xe3, 0x05);			/* jrcxz: all of RCX */
	r = regs();
	r.rcx = 0x100000000ull;
	vpmu__branch_complete(NULL, &in, &r);
	assert_int_equal(r.rip, RIP + 2);
}

/*
 * 4-level paging for ram's first 2 MiB (one large page, identity), the
 * tables at 0xC000: supervisor pages, or user pages with user.
 */
static void
paged(uint8_t *ram, struct vpmu_regs *r, bool user)
{
	/* P, RW, A (as the guest has used them); PS */
	uint64_t e[3] = { 0xD000 | 0x23, 0xE000 | 0x23, 0x80 | 0x23 };
	unsigned i;

	for (i = 0; i < 3; i++) {
		e[i] |= user ? 4 : 0;			/* U/S */
		memcpy(ram + 0xC000 + 0x1000 * i, &e[i], 8);
	}
	r->cr0 = VPMU_CR0_PE | VPMU_CR0_PG;
	r->cr3 = 0xC000;
	r->cr4 |= VPMU_CR4_PAE;
	r->efer = VPMU_EFER_LMA;
}

static void
ret_pops_the_stack(void **state)
{
	static uint8_t ram[0x10000];
	struct vpmu_gmem mem;
	struct vpmu_insn in;
	struct vpmu_regs r;
	uint64_t ra = 0x2345;

	(void)state;
	vpmu__gmem_init(&mem);
	assert_int_equal(vpmu__gmem_add(&mem, 0, sizeof(ram), ram), 0);
	memcpy(ram + 0x8000, &ra, 8);
	in = DEC(0xc2, 0x10, 0x00);		/* ret 16 */
	r = regs();
	paged(ram, &r, false);
	assert_int_equal(vpmu__branch_complete(&mem, &in, &r), VPMU_SET_RIP | VPMU_SET_RSP);
	assert_int_equal(r.rip, 0x2345);
	assert_int_equal(r.rsp, 0x8000 + 8 + 16);
	/* the stack's page (a 2 MiB one here) not accessed yet: the RET is the processor's */
	memcpy(ram + 0xE000, &(uint64_t){ 0x80 | 3 }, 8);
	r = regs();
	paged(ram, &r, false);
	memcpy(ram + 0xE000, &(uint64_t){ 0x80 | 3 }, 8);
	assert_int_equal(vpmu__branch_complete(&mem, &in, &r), 0);
	assert_int_equal(r.rip, RIP);
	paged(ram, &r, false);

	/*
	 * The stack as the RET may read it: a supervisor page at CPL 3 no,
	 * a user page at CPL 3 yes; at CPL 0 under SMAP a user page only with
	 * RFLAGS.AC, a supervisor page always.  Not under CET, nor from an
	 * unreadable stack, nor without paging (no 64-bit code).
	 */
	in = DEC(0xc3);
	r = regs();
	paged(ram, &r, false);
	r.cpl = 3;
	assert_int_equal(vpmu__branch_complete(&mem, &in, &r), 0);
	assert_int_equal(r.rip, RIP);
	paged(ram, &r, true);
	assert_int_equal(vpmu__branch_complete(&mem, &in, &r), VPMU_SET_RIP | VPMU_SET_RSP);
	r = regs();
	paged(ram, &r, true);
	r.cr4 |= VPMU_CR4_SMAP;
	assert_int_equal(vpmu__branch_complete(&mem, &in, &r), 0);
	r.rflags |= 1ull << 18;			/* AC: SMAP does not apply */
	assert_int_equal(vpmu__branch_complete(&mem, &in, &r), VPMU_SET_RIP | VPMU_SET_RSP);
	r = regs();
	paged(ram, &r, false);
	r.cr4 |= VPMU_CR4_SMAP;
	assert_int_equal(vpmu__branch_complete(&mem, &in, &r), VPMU_SET_RIP | VPMU_SET_RSP);
	r = regs();
	paged(ram, &r, false);
	r.cr4 |= VPMU_CR4_CET;
	assert_int_equal(vpmu__branch_complete(&mem, &in, &r), 0);
	r = regs();
	paged(ram, &r, false);
	r.rsp = 0xFFFC;				/* 4 of 8 bytes in RAM */
	assert_int_equal(vpmu__branch_complete(&mem, &in, &r), 0);
	assert_int_equal(r.rsp, 0xFFFC);
	r = regs();
	assert_int_equal(vpmu__branch_complete(&mem, &in, &r), 0);
}

/* Non-canonical successors fault at the branch: not completed. */
static void
non_canonical_targets_are_left_to_the_processor(void **state)
{
	static uint8_t ram[0x10000];
	struct vpmu_gmem mem;
	struct vpmu_insn in;
	struct vpmu_regs r;
	uint64_t ra = 0x0000800000000000ull;

	(void)state;
	vpmu__gmem_init(&mem);
	assert_int_equal(vpmu__gmem_add(&mem, 0, sizeof(ram), ram), 0);
	memcpy(ram + 0x8000, &ra, 8);
	r = regs();
	paged(ram, &r, false);
	assert_int_equal(vpmu__branch_complete(&mem, &(struct vpmu_insn){ .eval = VPMU_EVAL_RET,
	    .len = 1, .cond = VPMU_COND_ALWAYS }, &r), 0);
	/* 5-level paging (a PML5 at 0xB000 over the same tables): canonical. */
	memcpy(ram + 0xB000, &(uint64_t){ 0xC000 | 0x23 }, 8);
	r.cr3 = 0xB000;
	r.cr4 |= VPMU_CR4_LA57;
	assert_int_equal(vpmu__branch_complete(&mem, &(struct vpmu_insn){ .eval = VPMU_EVAL_RET,
	    .len = 1, .cond = VPMU_COND_ALWAYS }, &r), VPMU_SET_RIP | VPMU_SET_RSP);
	assert_int_equal(r.rip, ra);
	/* A jump past the top of the lower half. */
	in = (struct vpmu_insn){ .eval = VPMU_EVAL_JMP, .len = 5, .flow = VPMU_FLOW_DIRECT,
	    .target = 0x00007FFFFFFFFFFFull + 1, .cond = VPMU_COND_ALWAYS };
	r = regs();
	assert_int_equal(vpmu__branch_complete(NULL, &in, &r), 0);
	in.target = 0xFFFF800000000000ull;
	assert_int_equal(vpmu__branch_complete(NULL, &in, &r), VPMU_SET_RIP);
	/* Not 64-bit code: nothing. */
	r = regs();
	r.long_mode = 0;
	assert_int_equal(vpmu__branch_complete(NULL, &in, &r), 0);
}

/* The VMM's write function of calls_push_where_the_vmm_hears_of_it. */
static uint64_t heard_gpa, heard_len;
static unsigned heard;

static void
hear(void *arg, uint64_t gpa, uint64_t len)
{
	(void)arg;
	heard++;
	heard_gpa = gpa;
	heard_len = len;
}

/*
 * A near CALL (relative, through a register, through memory) pushes the
 * next RIP and goes: completed only where the VMM hears of the write (a
 * write function) and the stack's page is Accessed and Dirty already; not
 * under CET, not to a non-canonical target (nothing written then).
 */
static void
calls_push_where_the_vmm_hears_of_it(void **state)
{
	static uint8_t ram[0x10000];
	struct vpmu_gmem mem;
	struct vpmu_insn in;
	struct vpmu_regs r;
	uint64_t slot, to = 0x4567;

	(void)state;
	vpmu__gmem_init(&mem);
	assert_int_equal(vpmu__gmem_add(&mem, 0, sizeof(ram), ram), 0);
	in = DEC(0xe8, 0x10, 0x00, 0x00, 0x00);		/* call rel32 */
	assert_int_equal(in.eval, VPMU_EVAL_CALL);
	assert_int_equal(in.flow, VPMU_FLOW_DIRECT);
	r = regs();
	paged(ram, &r, false);
	/* no write function: the CALL is the processor's */
	assert_int_equal(vpmu__branch_complete(&mem, &in, &r), 0);
	mem.write_fn = hear;
	/* the page Accessed, not Dirty: the push would set D */
	assert_int_equal(vpmu__branch_complete(&mem, &in, &r), 0);
	assert_int_equal(heard, 0);
	memcpy(ram + 0xE000, &(uint64_t){ 0x80 | 0x63 }, 8);	/* P RW A D, 2 MiB */
	assert_int_equal(vpmu__branch_complete(&mem, &in, &r), VPMU_SET_RIP | VPMU_SET_RSP);
	assert_int_equal(r.rip, RIP + 5 + 0x10);
	assert_int_equal(r.rsp, 0x8000 - 8);
	memcpy(&slot, ram + 0x8000 - 8, 8);
	assert_int_equal(slot, RIP + 5);
	assert_int_equal(heard, 1);
	assert_int_equal(heard_gpa, 0x8000 - 8);
	assert_int_equal(heard_len, 8);

	in = DEC(0xff, 0xd0);					/* call rax */
	assert_int_equal(in.eval, VPMU_EVAL_CALL);
	assert_int_equal(in.ind, 1);
	r = regs();
	paged(ram, &r, false);
	memcpy(ram + 0xE000, &(uint64_t){ 0x80 | 0x63 }, 8);
	r.rax = 0x3000;
	assert_int_equal(vpmu__branch_complete(&mem, &in, &r), VPMU_SET_RIP | VPMU_SET_RSP);
	assert_int_equal(r.rip, 0x3000);
	assert_int_equal(heard, 2);

	in = DEC(0xff, 0x15, 0x10, 0x00, 0x00, 0x00);		/* call [rip + 0x10] */
	assert_int_equal(in.eval, VPMU_EVAL_CALL);
	assert_int_equal(in.ea_base, VPMU_EA_RIP);
	memcpy(ram + RIP + 6 + 0x10, &to, 8);
	r = regs();
	paged(ram, &r, false);
	memcpy(ram + 0xE000, &(uint64_t){ 0x80 | 0x63 }, 8);
	assert_int_equal(vpmu__branch_complete(&mem, &in, &r), VPMU_SET_RIP | VPMU_SET_RSP);
	assert_int_equal(r.rip, 0x4567);
	memcpy(&slot, ram + 0x8000 - 8, 8);
	assert_int_equal(slot, RIP + 6);
	assert_int_equal(heard, 3);

	/* a non-canonical target: #GP at the CALL, nothing pushed */
	to = 0x8000000000000000ull;
	memcpy(ram + RIP + 6 + 0x10, &to, 8);
	memset(ram + 0x8000 - 8, 0, 8);
	r = regs();
	paged(ram, &r, false);
	memcpy(ram + 0xE000, &(uint64_t){ 0x80 | 0x63 }, 8);
	assert_int_equal(vpmu__branch_complete(&mem, &in, &r), 0);
	memcpy(&slot, ram + 0x8000 - 8, 8);
	assert_int_equal(slot, 0);
	assert_int_equal(heard, 3);
	/* CET: the shadow stack is not modelled */
	in = DEC(0xe8, 0x10, 0x00, 0x00, 0x00);
	r.cr4 |= VPMU_CR4_CET;
	assert_int_equal(vpmu__branch_complete(&mem, &in, &r), 0);
	assert_int_equal(DEC(0x64, 0xff, 0x10).eval, VPMU_EVAL_NONE);	/* call fs:[rax] */
	assert_int_equal(DEC(0x66, 0xe8, 0x10, 0x00, 0x00, 0x00).eval, VPMU_EVAL_NONE); /* 66h */
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(decoder_marks_completable_branches),
		cmocka_unit_test(conditions_follow_the_flags),
		cmocka_unit_test(jumps_and_loops_move_rip_and_rcx),
		cmocka_unit_test(ret_pops_the_stack),
		cmocka_unit_test(non_canonical_targets_are_left_to_the_processor),
		cmocka_unit_test(calls_push_where_the_vmm_hears_of_it),
	};

	return (cmocka_run_group_tests(tests, NULL, NULL));
}
