/*
 * crt0.S -- entry and exception stubs of the vpmu-run guest runtime.
 *
 * Boot protocol v1 (vpmu-run(1)): every vCPU enters _start in 64-bit mode
 * at CPL 0 with RDI = its index, RSP = the top of its own 64 KiB stack
 * (16-byte aligned) and RFLAGS = 0x2.  _start hands those to vg__start()
 * (runtime.c) before anything changes them, so a guest can check them.
 */

	.section .text.start, "ax"
	.globl	_start
	.type	_start, @function
_start:
	pushfq				/* RFLAGS first: xor below changes it */
	popq	%rdx			/* entry RFLAGS */
	movq	%rsp, %rsi		/* entry RSP: pushfq/popq left it as it was */
	xorl	%ebp, %ebp		/* end of the frame chain */
	/* RDI = vCPU index; RSP is 16-byte aligned here, as a call wants. */
	call	vg__start
1:	pause				/* vg__start does not return */
	jmp	1b
	.size	_start, . - _start

/*
 * Exception and NMI entry.  Each stub makes the stack look the same: an
 * error code (0 where the CPU pushes none), then the vector.  The common
 * part saves the general registers in struct vg_frame order, calls
 * vg__trap(frame), restores and returns with IRETQ (which also ends NMI
 * blocking).  In 64-bit mode the CPU aligns RSP to 16 before pushing its
 * 5 words, so after 2 + 15 more pushes RSP is again 16-byte aligned.
 * Only general registers are saved: guests are built -mgeneral-regs-only.
 */
	.text
.macro	VEC n, err
	.type	vg__vec\n, @function
vg__vec\n:
	.if	\err == 0
	pushq	$0
	.endif
	pushq	$\n
	jmp	vg__trap_entry
.endm

/* Vectors that push an error code: #DF 8, #TS 10, #NP 11, #SS 12, #GP 13, #PF 14, #AC 17, #CP 21, #VC 29, #SX 30. */
	VEC 0, 0
	VEC 1, 0
	VEC 2, 0
	VEC 3, 0
	VEC 4, 0
	VEC 5, 0
	VEC 6, 0
	VEC 7, 0
	VEC 8, 1
	VEC 9, 0
	VEC 10, 1
	VEC 11, 1
	VEC 12, 1
	VEC 13, 1
	VEC 14, 1
	VEC 15, 0
	VEC 16, 0
	VEC 17, 1
	VEC 18, 0
	VEC 19, 0
	VEC 20, 0
	VEC 21, 1
	VEC 22, 0
	VEC 23, 0
	VEC 24, 0
	VEC 25, 0
	VEC 26, 0
	VEC 27, 0
	VEC 28, 0
	VEC 29, 1
	VEC 30, 1
	VEC 31, 0

/*
 * Vectors 32..255, interrupts (no error code): one 16-byte stub each from
 * vg__irq_stubs, so vector v's stub is at vg__irq_stubs + 16 * (v - 32).
 */
	.balign	16
	.globl	vg__irq_stubs
vg__irq_stubs:
	.set	vg__v, 32
	.rept	256 - 32
	.balign	16
	pushq	$0
	pushq	$vg__v
	jmp	vg__trap_entry
	.set	vg__v, vg__v + 1
	.endr

	.type	vg__trap_entry, @function
vg__trap_entry:
	pushq	%rax
	pushq	%rbx
	pushq	%rcx
	pushq	%rdx
	pushq	%rsi
	pushq	%rdi
	pushq	%rbp
	pushq	%r8
	pushq	%r9
	pushq	%r10
	pushq	%r11
	pushq	%r12
	pushq	%r13
	pushq	%r14
	pushq	%r15
	movq	%rsp, %rdi
	cld
	call	vg__trap
	popq	%r15
	popq	%r14
	popq	%r13
	popq	%r12
	popq	%r11
	popq	%r10
	popq	%r9
	popq	%r8
	popq	%rbp
	popq	%rdi
	popq	%rsi
	popq	%rdx
	popq	%rcx
	popq	%rbx
	popq	%rax
	addq	$16, %rsp		/* vector, error code */
	iretq
	.size	vg__trap_entry, . - vg__trap_entry

/* The exception stubs' addresses, for the IDT runtime.c builds on each vCPU. */
	.section .rodata
	.balign	8
	.globl	vg__vectors
vg__vectors:
	.irp	n, 0,1,2,3,4,5,6,7,8,9,10,11,12,13,14,15,16,17,18,19,20,21,22,23,24,25,26,27,28,29,30,31
	.quad	vg__vec\n
	.endr

	.section .note.GNU-stack, "", @progbits
