/*
 * decode.h -- what the exact source needs to know about one x86
 * instruction, decoded with Zydis 4: its length, whether it is a branch,
 * and where execution goes after it (decode.c), and what it does with its
 * operands (decode_operands.c).
 */
#ifndef VPMU_DECODE_H
#define VPMU_DECODE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "gmem.h"

/* The longest x86 instruction (SDM Vol. 2A, 2.3.11). */
#define VPMU_INSN_MAX	15

/* Code size the bytes are decoded for. */
enum vpmu_decode_mode {
	VPMU_DECODE_64,			/* 64-bit mode (EFER.LMA, CS.L) */
	VPMU_DECODE_32,			/* protected mode, CS.D = 1 */
	VPMU_DECODE_16,			/* real mode */
};

/* Where execution continues after the instruction (vpmu_insn.flow). */
enum vpmu_insn_flow {
	VPMU_FLOW_NEXT,			/* not a branch: at addr + len */
	VPMU_FLOW_DIRECT,		/* direct branch: at target (or addr + len
					   if conditional and not taken) */
	VPMU_FLOW_STACK,		/* return: at the slot-byte value at RSP */
	VPMU_FLOW_INDIRECT,		/* anywhere: register, memory, MSR, IDT */
};

/*
 * Near branches whose effect follows from RIP, RFLAGS, RCX and the stack
 * alone (vpmu_insn.eval), 64-bit code with the default operand size only.
 */
enum vpmu_insn_eval {
	VPMU_EVAL_NONE,			/* anything else: single-stepped */
	VPMU_EVAL_JCC,			/* Jcc rel: taken when cond holds */
	VPMU_EVAL_JMP,			/* JMP rel */
	VPMU_EVAL_LOOP,			/* LOOP/LOOPE/LOOPNE rel: RCX - 1, taken when
					   it is not 0 and cond holds */
	VPMU_EVAL_JRCXZ,		/* JRCXZ rel: taken when RCX is 0 */
	VPMU_EVAL_JECXZ,		/* JECXZ rel: taken when ECX is 0 */
	VPMU_EVAL_RET,			/* RET, RET imm16 (near): pop RIP, then pop bytes */
	VPMU_EVAL_JMP_MEM,		/* JMP m64 (near, at ea_*, no FS or GS base):
					   RIP from memory */
	VPMU_EVAL_CALL,			/* near CALL rel (target), through a register
					   (ind) or through m64 (as JMP_MEM): push
					   the next RIP, then go */
};
#define VPMU_COND_ALWAYS	0xFF	/* vpmu_insn.cond: no condition (LOOP) */
#define VPMU_EA_RIP		0xFF	/* vpmu_insn.ea_base: RIP-relative */

/*
 * vpmu_insn.count: DEC, INC, SUB imm or ADD imm of a general register (a
 * loop counter): 1 + its number (RAX 0 .. R15 15), and vpmu_insn.step
 * what it takes off.  vpmu_insn.cmp uses the same encoding.
 */
#define VPMU_COUNT_REG(d)	(((d) & 0x1F) - 1)
#define VPMU_COUNT_32		0x80	/* its low 32 bits (zero-extended) */
#define VPMU_SRC_IMM		0x40	/* vpmu_insn.src: an immediate */

/*
 * vpmu_insn.alu: an integer instruction on general registers and
 * immediates only, whose result and flags follow from its operands
 * (alu.c works them out).  Registers are numbered RAX 0 .. R15 15;
 * VPMU_ALU_HIGH marks AH, CH, DH, BH (bits 15:8 of register & 3).
 */
enum vpmu_alu_op {
	VPMU_ALU_NONE,			/* anything else */
	VPMU_ALU_ADD, VPMU_ALU_ADC, VPMU_ALU_SUB, VPMU_ALU_SBB, VPMU_ALU_CMP,
	VPMU_ALU_AND, VPMU_ALU_OR, VPMU_ALU_XOR, VPMU_ALU_TEST,
	VPMU_ALU_INC, VPMU_ALU_DEC, VPMU_ALU_NEG, VPMU_ALU_NOT,
	VPMU_ALU_MOV, VPMU_ALU_MOVZX, VPMU_ALU_MOVSX,
	VPMU_ALU_SHL, VPMU_ALU_SHR, VPMU_ALU_SAR, VPMU_ALU_ROL, VPMU_ALU_ROR,
	VPMU_ALU_IMUL,			/* a = a * b */
	VPMU_ALU_IMUL3,			/* a = b * imm */
	VPMU_ALU_LEA,			/* a = b + index * scale + imm (b, index: a
					   register or VPMU_ALU_NOREG) */
	VPMU_ALU_XCHG, VPMU_ALU_CMOV, VPMU_ALU_SET,
};
#define VPMU_ALU_HIGH	0x10		/* AH, CH, DH, BH */
#define VPMU_ALU_MEM	0xFD		/* an operand: the memory one at ea_* (no
					   FS or GS base, no LOCK), its width in
					   bits that of the access */
#define VPMU_ALU_IMM	0xFE		/* operand b is imm */
#define VPMU_ALU_NOREG	0xFF		/* LEA: no base or no index */
struct vpmu_alu {
	uint8_t	 op;			/* enum vpmu_alu_op */
	uint8_t	 width;			/* operand size in bits: 8, 16, 32, 64 */
	uint8_t	 a;			/* the first operand (the destination): a
					   register or VPMU_ALU_MEM */
	uint8_t	 b;			/* the second: a register, VPMU_ALU_MEM or
					   VPMU_ALU_IMM */
	uint8_t	 bwidth;		/* its size in bits (MOVZX, MOVSX, shift by CL) */
	uint8_t	 index, scale;		/* LEA */
	uint8_t	 awidth;		/* LEA: the address size in bits */
	uint8_t	 cond;			/* CMOV, SET: the condition code (tttn) */
	uint64_t imm;			/* the immediate (sign-extended to 64 bits), or
					   LEA's displacement */
};

struct vpmu_insn {
	uint8_t	 len;			/* bytes */
	uint8_t	 bytes[VPMU_INSN_MAX];	/* ... the instruction's, len of them */
	uint8_t	 flow;			/* enum vpmu_insn_flow */
	uint8_t	 slot;			/* VPMU_FLOW_STACK: bytes of the return-address slot */
	bool	 branch;		/* counted by the branches event */
	bool	 conditional;		/* VPMU_FLOW_DIRECT: may fall through */
	bool	 far_return;		/* IRET, IRETD, IRETQ, far RET */
	bool	 iret;			/* IRET, IRETD, IRETQ: in 64-bit mode RSP is
					   reloaded from the fourth slot of the frame */
	bool	 to_user;		/* SYSRET, SYSEXIT: always to CPL 3 */
	bool	 rep_string;		/* string instruction with REP/REPE/REPNE */
	bool	 writes_sp;		/* changes RSP (PUSH, POP, CALL, MOV RSP, ...) */
	bool	 in_block;		/* may run inside a block: neither a branch nor
					   anything that can exit, fault by design,
					   serialize or change the interrupt state
					   (decode.c has the list) */
	uint8_t	 stop;			/* neither in_block nor follow: what it is, as
					   enum vpmu_step_why (<vpmu/source.h>)
					   names it, VPMU_STEP_JCC on; else 0 */
	uint8_t	 eval;			/* enum vpmu_insn_eval: a near branch the exact
					   source may complete itself (branch.c) */
	uint8_t	 cond;			/* VPMU_EVAL_JCC, VPMU_EVAL_LOOP: the condition
					   code (tttn, SDM Vol. 2D, B.1.4.7), or
					   VPMU_COND_ALWAYS */
	uint16_t pop;			/* VPMU_EVAL_RET: the bytes RET imm16 releases */
	uint8_t	 ind;			/* near JMP or CALL r64 (64-bit code, no 66h):
					   1 + the register (RAX 0 .. R15 15) holding
					   the target; else 0 */
	bool	 follow;		/* JMP rel or CALL rel (near, 64-bit code, no
					   66h): a block runs on through it to its
					   target (a CALL pushes 8 bytes) */
	bool	 mem;			/* accesses memory (an operand, the stack, a
					   string): can raise #PF, #GP, #SS */
	int8_t	 stack;			/* PUSH r/imm, POP r, CALL rel (64-bit operand
					   size): its only memory access is 8 bytes
					   at RSP - 8 (-8, a write) or RSP (+8, a
					   read), RSP moving by that much; else 0 */
	uint8_t	 count;			/* DEC/SUB imm/ADD imm of r64 or r32: 1 +
					   register (VPMU_COUNT_*), or 0 */
	uint64_t step;			/* with count: what it subtracts (in the
					   register's width; ADD, INC: the negation) */
	uint8_t	 mcount;		/* DEC/INC m, SUB/ADD m, imm of a 64- or 32-bit
					   memory operand (at ea_*): its bytes (8 or
					   4), step what it subtracts; else 0 */
	uint8_t	 load;			/* MOV r64, m64 or MOV r32, m32 (the access at
					   ea_*): 1 + the register (VPMU_COUNT_*),
					   or 0 */
	bool	 nop;			/* NOP, any length: nothing but RIP changes */
	uint8_t	 src;			/* PUSH r64/imm (stack -8): 1 + the register
					   pushed (RAX 0 .. R15 15), or
					   VPMU_SRC_IMM; else 0 */
	uint64_t src_imm;		/* ... VPMU_SRC_IMM: the value pushed */
	uint8_t	 cmp;			/* CMP r64/r32, r or imm: 1 + the first
					   register (VPMU_COUNT_*), or 0 */
	uint8_t	 cmp_with;		/* ... 1 + the second register (same width),
					   or 0 for an immediate */
	uint64_t cmp_imm;		/* ... the immediate, in that width */
	uint16_t writes;		/* general registers it writes, bit n for
					   register n (RAX 0 .. R15 15), hidden
					   operands and partial writes included */
	uint8_t	 flags_at;		/* POPF, IRET: 1 + the offset from RSP of the
					   RFLAGS image it loads; 0: none */
	bool	 wmem;			/* writes memory other than a PUSH/CALL slot */
	/*
	 * The access of an instruction whose one memory access is an explicit
	 * operand with a 64-bit address (not a stack slot, not a string's), or
	 * the target's operand of a near CALL through memory (its push aside):
	 * at base + index * scale + disp, ea_size bytes; base and index are 1
	 * + the register (RAX 0 .. R15 15) or 0, base VPMU_EA_RIP for RIP
	 * (disp from the next instruction).  ea_seg: an FS or GS override (a
	 * segment base on top).  ea_size 0: no such access.
	 */
	uint8_t	 ea_base, ea_index, ea_scale, ea_size;
	bool	 ea_write, ea_seg;
	int64_t	 ea_disp;
	uint16_t wflags;		/* the status flags (RFLAGS bits CF PF AF ZF SF
					   OF) it writes, undefined ones included */
	uint16_t uflags;		/* ... of them, left undefined */
	struct vpmu_alu alu;		/* a register-only integer operation */
	uint64_t target;		/* VPMU_FLOW_DIRECT: the branch target */
	unsigned mnemonic;		/* ZydisMnemonic, for tests and messages */
};

/*
 * Decode the instruction in buf[0..len) that starts at linear address addr
 * (len may be short of VPMU_INSN_MAX at the end of mapped memory).
 * 0; EINVAL for a NULL argument; EILSEQ when the bytes are no valid
 * instruction; ENODATA when len bytes end inside the instruction.
 */
int	vpmu__decode(enum vpmu_decode_mode mode, uint64_t addr, const uint8_t *buf,
	    size_t len, struct vpmu_insn *out);
/*
 * Read up to VPMU_INSN_MAX bytes at gva through the guest's paging and
 * decode them.  0, or the error of vpmu__decode(), or EFAULT when not one
 * byte can be read; on failure *bad is the first address not read or the
 * start of the bytes that do not decode.
 */
int	vpmu__decode_gva(const struct vpmu_gmem *mem, const struct vpmu_gmem_paging *pg,
	    enum vpmu_decode_mode mode, uint64_t gva, struct vpmu_insn *out, uint64_t *bad);
/*
 * A cache of decoded instructions, direct-mapped by linear address, for
 * one thread.  An entry is used only when the bytes now at its address
 * are the bytes it was decoded from (and the mode is the same), so code
 * the guest rewrites, or a page mapped elsewhere, is decoded again: what
 * an instruction decodes to depends on nothing else.  Zeroed: empty.
 */
#define VPMU_DCACHE_SIZE	256		/* a power of two */
struct vpmu_dcache {
	struct {
		uint64_t gva;
		uint8_t	 mode;		/* enum vpmu_decode_mode + 1; 0: empty */
		uint8_t	 bytes[VPMU_INSN_MAX];
		struct vpmu_insn in;
	} e[VPMU_DCACHE_SIZE];
	uint64_t hits, misses;
	struct vpmu_gmem_memo memo;	/* the page last read: the owner empties it
					   at every exit */
};
/*
 * vpmu__decode_gva() through cache c: the bytes at gva are read every
 * time (through the guest's paging) and decoded only when c has no entry
 * for them.  c NULL: no cache.
 */
int	vpmu__decode_gva_cached(struct vpmu_dcache *c, const struct vpmu_gmem *mem,
	    const struct vpmu_gmem_paging *pg, enum vpmu_decode_mode mode, uint64_t gva,
	    struct vpmu_insn *out, uint64_t *bad);
/* "iretq", "nop", ... for a vpmu_insn.mnemonic; "?" if unknown. */
const char *vpmu__decode_name(unsigned mnemonic);

/*
 * Between decode.c and decode_operands.c only, which include
 * <Zydis/Zydis.h> (these are the tags of its ZydisDecodedInstruction and
 * ZydisDecodedOperand; other includers need no Zydis header).
 */
struct ZydisDecodedInstruction_;
struct ZydisDecodedOperand_;
/* 64-bit code, 64-bit operand size, no 66h prefix (decode.c). */
bool	vpmu__decode_wide64(const struct ZydisDecodedInstruction_ *in);
/* RAX 0 .. R15 15 for the general register holding ZydisRegister reg, or -1. */
int	vpmu__decode_gpr(unsigned reg);
/* vpmu_insn's operand fields for in, op at addr (decode_operands.c). */
void	vpmu__decode_operands(const struct ZydisDecodedInstruction_ *in,
	    const struct ZydisDecodedOperand_ *op, uint64_t addr, struct vpmu_insn *out);

#endif /* VPMU_DECODE_H */
