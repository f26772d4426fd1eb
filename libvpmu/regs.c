/*
 * regs.c -- the general registers of struct vpmu_regs by number (regs.h).
 */
#include <stddef.h>

#include "regs.h"

/* Where register n lives in struct vpmu_regs. */
static const size_t gpr_at[16] = {
	offsetof(struct vpmu_regs, rax), offsetof(struct vpmu_regs, rcx),
	offsetof(struct vpmu_regs, rdx), offsetof(struct vpmu_regs, rbx),
	offsetof(struct vpmu_regs, rsp), offsetof(struct vpmu_regs, rbp),
	offsetof(struct vpmu_regs, rsi), offsetof(struct vpmu_regs, rdi),
	offsetof(struct vpmu_regs, r8), offsetof(struct vpmu_regs, r9),
	offsetof(struct vpmu_regs, r10), offsetof(struct vpmu_regs, r11),
	offsetof(struct vpmu_regs, r12), offsetof(struct vpmu_regs, r13),
	offsetof(struct vpmu_regs, r14), offsetof(struct vpmu_regs, r15),
};

uint64_t
vpmu__regs_gpr(const struct vpmu_regs *r, unsigned n)
{
	return (*(const uint64_t *)(const void *)((const char *)r + gpr_at[n & 15]));
}

void
vpmu__regs_set_gpr(struct vpmu_regs *r, unsigned n, uint64_t val)
{
	*(uint64_t *)(void *)((char *)r + gpr_at[n & 15]) = val;
}

void
vpmu__regs_gprs(const struct vpmu_regs *r, uint64_t gpr[16])
{
	unsigned n;

	for (n = 0; n < 16; n++)
		gpr[n] = vpmu__regs_gpr(r, n);
}
