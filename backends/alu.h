/*
 * alu.h -- the general registers and status flags a run of integer
 * instructions leaves, worked out ahead of the run (alu.c).
 */
#ifndef VPMU_ALU_H
#define VPMU_ALU_H

#include <stdint.h>

#include <vpmu/vcpu.h>

#include "decode.h"

/*
 * What is known of the registers: r[n] where bit n of `known` is set
 * (RAX 0 .. R15 15), the status flags of rflags (CF PF AF ZF SF OF, at
 * their RFLAGS positions) where `fknown` has them.
 */
struct vpmu_alu_state {
	uint64_t r[16];
	uint64_t rflags;
	uint16_t known;
	uint16_t fknown;
	bool	 mknown;		/* m is the memory operand's value (the
					   caller read it): VPMU_ALU_MEM */
	uint64_t m;			/* ... and what the instruction leaves there */
};

#define VPMU_ALU_STATUS	0x8D5u		/* CF PF AF ZF SF OF */

/* Everything known: the registers of r. */
void	vpmu__alu_init(struct vpmu_alu_state *s, const struct vpmu_regs *r);
/*
 * The instruction in runs: its results where alu.c models it
 * (vpmu_insn.alu) and its operands are known (a memory operand: s->m,
 * when s->mknown), else what it writes (vpmu_insn.writes, wflags) becomes
 * unknown.  Flags the architecture leaves undefined come from the
 * processor (vpmu__alu_host_run) where it can run the instruction, else
 * they are unknown after it.  true: modelled, the results in s.
 */
bool	vpmu__alu_step(struct vpmu_alu_state *s, const struct vpmu_insn *in);
/* Condition code cond (tttn): 1 holds, 0 does not, -1 not known. */
int	vpmu__alu_cond(const struct vpmu_alu_state *s, unsigned cond);
/*
 * The linear address of the access of in at addr (vpmu_insn.ea_*), from
 * RIP, RSP (sp, when sp_known) and the registers s knows (s NULL: none);
 * false: no such access, an FS or GS base, or a register not known.
 */
bool	vpmu__alu_ea(const struct vpmu_insn *in, uint64_t addr, const struct vpmu_alu_state *s,
	    uint64_t sp, bool sp_known, uint64_t *a);
/*
 * Run the register-only instruction code[0..len) on this processor with
 * the general registers r (RAX 0 .. R15 15; RSP is neither loaded nor
 * changed: the instruction must not use it) and the status flags of
 * *rflags, leaving its results in both (alu_host.c).  false: it cannot be
 * run here (not an x86-64 Linux build, no executable page).
 */
bool	vpmu__alu_host_run(const uint8_t *code, unsigned len, uint64_t r[16], uint64_t *rflags);
/* Do r's registers and flags agree with what s knows? */
bool	vpmu__alu_agrees(const struct vpmu_alu_state *s, const struct vpmu_regs *r);

#endif /* VPMU_ALU_H */
