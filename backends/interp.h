/*
 * interp.h -- guest instructions run in user space, one at a time, on a
 * copy of the registers (interp.c).
 */
#ifndef VPMU_INTERP_H
#define VPMU_INTERP_H

#include <stdbool.h>
#include <stdint.h>

#include <vpmu/vcpu.h>

#include "decode.h"

/*
 * The registers a run of instructions leaves.  fknown: the status flags
 * of r.rflags they define (VPMU_ALU_STATUS: all, and r is what the
 * processor would hold; else one left a flag undefined, and r may be
 * handed back only once later ones define it again).
 */
struct vpmu_interp {
	struct vpmu_regs r;
	uint16_t fknown;
	uint64_t code_page;		/* a 4 KiB page of code found fetchable
					   quietly; 1: none yet */
};

/* Start from r, every flag known. */
void	vpmu__interp_init(struct vpmu_interp *w, const struct vpmu_regs *r);
/*
 * Run in, decoded at w->r.rip, on w: true when it ran; false (w
 * untouched) when it cannot be run here and must run on the processor.
 * Runs the integer instructions alu.c models (MOV among them), on
 * registers and at most one memory operand, NOP, PUSH and POP of a
 * register, the near branches branch.c completes; only in 64-bit code,
 * each only where the processor could fetch it and make its accesses
 * without a fault and without setting an Accessed or Dirty bit.  Memory
 * is written (the VMM told: gmem.h) only where every flag is known after
 * the instruction, so that w can be handed back right after.
 */
bool	vpmu__interp_step(const struct vpmu_gmem *mem, const struct vpmu_insn *in,
	    struct vpmu_interp *w);

#endif /* VPMU_INTERP_H */
