/*
 * regs.h -- the sixteen general registers of struct vpmu_regs by number,
 * in the x86 encoding's order (RAX 0, RCX 1, RDX 2, RBX 3, RSP 4, RBP 5,
 * RSI 6, RDI 7, R8 8 .. R15 15), as instructions name them.
 */
#ifndef VPMU_REGS_H
#define VPMU_REGS_H

#include <stdint.h>

#include <vpmu/vcpu.h>

/* General register n (0 .. 15; higher numbers wrap) of r. */
uint64_t vpmu__regs_gpr(const struct vpmu_regs *r, unsigned n);
/* Set general register n of r to val. */
void	vpmu__regs_set_gpr(struct vpmu_regs *r, unsigned n, uint64_t val);
/* All sixteen of r, in that order (struct vpmu_exit.gpr). */
void	vpmu__regs_gprs(const struct vpmu_regs *r, uint64_t gpr[16]);

#endif /* VPMU_REGS_H */
