/*
 * badfp.c -- a guest whose frame pointer is wrong on purpose, for the
 * sampler's call-chain walk (test/guests/badfp.sh).  Each phase is a
 * function that loads RBP with one kind of bad value and spins in a
 * register-only loop (DEC, JNZ) long enough to be sampled many times:
 *
 *   fp_unmapped    RBP = 0x7fff00000000: canonical, above the 1 GiB the boot
 *                  page tables map                      -> npc 1 (the RIP)
 *   fp_noncanon    RBP = 0xdead000000000000: not canonical   -> npc 1
 *   fp_ram_end     RBP = 64 MiB - 8: the frame's second word is past the
 *                  end of RAM (run with --mem 64)            -> npc 1
 *   fp_cycle       RBP = a frame whose saved RBP is itself   -> npc 2
 *   fp_down        RBP = a frame whose saved RBP is below it -> npc 2
 *   fp_long        RBP = the first of 64 well-formed frames going up
 *                  -> npc 8, the tunable callchaindepth
 *
 * The host must end each walk there, without faulting and without reading
 * outside the guest's RAM.  The return addresses are made-up values in
 * 0x7e0000.. so the test can tell them from real ones.
 */
#include <vpmu-guest/runtime.h>

#define ITERS		100000ul
#define LONG_FRAMES	64

/*
 * Spin ITERS times with RBP = fp; RBP is saved and restored around it.  The
 * global labels NAME_loop (the DEC) and NAME_end (the POP after the JNZ)
 * bound the RIPs at which RBP holds fp: the test takes only the samples
 * whose RIP is in [NAME_loop, NAME_end] (the compiler's prologue around
 * them holds the caller's RBP).
 */
#define SPIN_WITH_RBP(name, fp)						\
	do {								\
		unsigned long n_ = ITERS;				\
		__asm__ volatile("push %%rbp\n\t"			\
		    "mov %1, %%rbp\n"					\
		    ".globl " #name "_loop\n"				\
		    #name "_loop:\n\t"				\
		    "dec %0\n\t"					\
		    "jnz " #name "_loop\n"				\
		    ".globl " #name "_end\n"				\
		    #name "_end:\n\t"					\
		    "pop %%rbp"						\
		    : "+c"(n_) : "a"(fp) : "cc", "memory");		\
	} while (0)

void fp_unmapped(void);
void fp_noncanon(void);
void fp_ram_end(void);
void fp_cycle(void);
void fp_down(void);
void fp_long(void);

static unsigned long cyc[2];
static unsigned long down[2][2];
static unsigned long chain[LONG_FRAMES][2];

__attribute__((noinline)) void fp_unmapped(void) { SPIN_WITH_RBP(fp_unmapped, 0x7fff00000000ul); }
__attribute__((noinline)) void fp_noncanon(void) { SPIN_WITH_RBP(fp_noncanon, 0xdead000000000000ul); }
__attribute__((noinline)) void fp_ram_end(void) { SPIN_WITH_RBP(fp_ram_end, (64ul << 20) - 8); }
__attribute__((noinline)) void fp_cycle(void) { SPIN_WITH_RBP(fp_cycle, (unsigned long)cyc); }
__attribute__((noinline)) void fp_down(void) { SPIN_WITH_RBP(fp_down, (unsigned long)down[1]); }
__attribute__((noinline)) void fp_long(void) { SPIN_WITH_RBP(fp_long, (unsigned long)chain[0]); }

int
main(unsigned cpu)
{
	unsigned i;

	if (cpu != 0)
		return (0);
	cyc[0] = (unsigned long)cyc;
	cyc[1] = 0x7e0001;
	down[1][0] = (unsigned long)down[0];	/* the caller's frame below */
	down[1][1] = 0x7e0002;
	down[0][0] = 0;
	down[0][1] = 0x7e0003;
	for (i = 0; i < LONG_FRAMES; i++) {
		chain[i][0] = i + 1 < LONG_FRAMES ? (unsigned long)chain[i + 1] : 0;
		chain[i][1] = 0x7e1000 + i;
	}
	fp_unmapped();
	fp_noncanon();
	fp_ram_end();
	fp_cycle();
	fp_down();
	fp_long();
	vg_puts("badfp: done\n");
	return (0);
}
