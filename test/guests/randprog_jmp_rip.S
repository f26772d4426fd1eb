/*
 * randprog_jmp_rip.S -- the smallest program randprog's seed 3 fails
 * with in block mode (issue 11): a JMP through a RIP-relative memory
 * operand.  In the place of a generated program, for randprog_guest.c:
 * one call retires 6 instructions, 2 branches (the JMP and the RET).
 *
 * Block mode runs the LEA, MOV and NOPs as a block and completes the
 * JMP that ends it in user space: decode.c takes it for a direct jump
 * (Zydis sets ZYDIS_ATTRIB_IS_RELATIVE for a RIP-relative memory operand
 * too, and ZydisCalcAbsoluteAddress gives that operand's address), so
 * the vCPU goes to randprog_buf itself instead of the address stored
 * there, and runs the zeroed buffer.  Stepping counts it right; through
 * a base register (jmp *8(%rdx)) both modes do; CALL through RIP-relative
 * memory is not completed, and both modes count it right.
 */
	.text
	.globl	randprog_run
	.type	randprog_run, @function
randprog_run:
	lea	1f(%rip), %rax
	mov	%rax, randprog_buf(%rip)
	nop
	nop
	jmp	*randprog_buf(%rip)
	ud2
1:	ret
	.size	randprog_run, .-randprog_run

	.section .rodata
	.balign 8
	.globl	randprog_expect_insns, randprog_expect_branches, randprog_seed
randprog_expect_insns:
	.quad	6
randprog_expect_branches:
	.quad	2
randprog_seed:
	.quad	0

	.bss
	.balign 64
	.globl	randprog_buf
randprog_buf:
	.skip	4096
	.balign 8
	.globl	randprog_sum
randprog_sum:				/* not written: this program is its JMP alone */
	.skip	8
	.section .note.GNU-stack, "", @progbits
