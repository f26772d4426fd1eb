/*
 * orcframes.S -- three functions that keep no frame pointer (RBP holds a
 * non-canonical value while they run, as a kernel's RBP may hold data),
 * and the ORC tables that unwind them, as Linux's objtool lays them out
 * in the format of Linux before 6.3 (examples/vpmustat/orc.c has the
 * facts; linuxtasks.c's linux_banner says 6.1).  orc_outer(n) calls
 * orc_middle(n), which calls orc_leaf(n), a loop of n rounds: a sample in
 * it unwinds to orc_leaf <- orc_middle <- orc_outer <- its caller
 * (linuxtasks.sh checks the folded stacks).
 *
 * Each ORC entry holds from its label to the next: the CFA (the caller's
 * RSP) is RSP + the offset in the comment; RBP is not saved by ORC's
 * rules (bp_reg UNDEFINED); the type is CALL.  The last entry, at
 * orc_end, says nothing (sp_reg UNDEFINED): no frame past it is known.
 */
	.text
	.globl	orc_outer, orc_middle, orc_leaf
orc_outer:				/* +8 */
	push	%rbp
.Lo1:					/* +16 */
	push	%rbx
.Lo2:					/* +24 */
	sub	$8, %rsp
.Lo3:					/* +32 */
	movabs	$0x7a7a7a7a7a7a7a7a, %rbp
	call	orc_middle
	add	$8, %rsp
.Lo4:					/* +24 */
	pop	%rbx
.Lo5:					/* +16 */
	pop	%rbp
.Lo6:					/* +8 */
	ret

orc_middle:				/* +8 */
	push	%r12
.Lm1:					/* +16 */
	call	orc_leaf
	pop	%r12
.Lm2:					/* +8 */
	ret

orc_leaf:				/* +8 */
	mov	%rdi, %rcx
1:	dec	%rcx
	jnz	1b
	ret
orc_end:

/* sp_offset, bp_offset, flags: sp_reg SP (5), bp_reg UNDEFINED, type CALL */
.macro	ORC sp
	.short	\sp, 0, 5
.endm

	.section .rodata
	.balign	4
	.globl	__start_orc_unwind_ip, __stop_orc_unwind_ip, __start_orc_unwind
__start_orc_unwind_ip:
	.long	orc_outer - .
	.long	.Lo1 - .
	.long	.Lo2 - .
	.long	.Lo3 - .
	.long	.Lo4 - .
	.long	.Lo5 - .
	.long	.Lo6 - .
	.long	orc_middle - .
	.long	.Lm1 - .
	.long	.Lm2 - .
	.long	orc_leaf - .
	.long	orc_end - .
__stop_orc_unwind_ip:
__start_orc_unwind:
	ORC	8
	ORC	16
	ORC	24
	ORC	32
	ORC	24
	ORC	16
	ORC	8
	ORC	8
	ORC	16
	ORC	8
	ORC	8
	.short	0, 0, 0			/* orc_end: nothing known */

	.section .note.GNU-stack, "", @progbits
