/*
 * branch.h -- completing a near branch in user space (branch.c).
 */
#ifndef VPMU_BRANCH_H
#define VPMU_BRANCH_H

#include <stdbool.h>
#include <stdint.h>

#include <vpmu/vcpu.h>

#include "decode.h"

/* Does condition code cond (tttn, or VPMU_COND_ALWAYS) hold for rflags? */
bool	 vpmu__branch_cond(unsigned cond, uint64_t rflags);
/*
 * Retire the branch in (decoded at r->rip, vpmu_insn.eval not NONE) on r:
 * RIP to its successor, RCX and RSP as it changes them.  Returns the
 * VPMU_SET_* bits of the registers changed, or 0 (r untouched) when the
 * branch cannot be completed here and must be single-stepped.
 */
unsigned vpmu__branch_complete(const struct vpmu_gmem *mem, const struct vpmu_insn *in,
	    struct vpmu_regs *r);

#endif /* VPMU_BRANCH_H */
