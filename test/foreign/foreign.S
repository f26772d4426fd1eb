/*
 * foreign.S -- a guest written from the boot protocol (DESIGN.md, "vpmu-run
 * guest boot protocol v1") and the SDM alone: no libvpmu runtime, no C.
 *
 * vCPU 0 checks CPUID leaf 0xA for an architectural PMU with a GP counter,
 * counts instructions retired (event 0xC0, OS|USR|EN) over a loop of 1000
 * iterations of "dec; jnz" with IA32_PERFEVTSEL0 / IA32_PMC0, prints the
 * count in decimal on port 0x3f8 and exits through port 0xf4 with 0 if it
 * is exactly 2004, else 1:
 *
 *   wrmsr (enable)            1   counted: the enabling WRMSR retires counted
 *   1000 x (dec, jnz)      2000
 *   mov, xor, xor             3
 *   wrmsr (disable)               not counted
 *
 * Other vCPUs spin with PAUSE, as the protocol says.
 */
	.code64
	.text
	.globl	_start
_start:
	test	%edi, %edi
	jnz	spin

	mov	$0xa, %eax
	xor	%ecx, %ecx
	cpuid
	cmp	$2, %al			/* version >= 2: GLOBAL_CTRL resets enabled */
	jb	fail
	test	$0xff00, %eax		/* at least one GP counter */
	jz	fail

	mov	$0xc1, %ecx		/* IA32_PMC0 = 0 */
	xor	%eax, %eax
	xor	%edx, %edx
	wrmsr

	mov	$0x186, %ecx		/* IA32_PERFEVTSEL0: instructions, OS|USR|EN */
	mov	$0x4300c0, %eax
	xor	%edx, %edx
	mov	$1000, %ebx
	wrmsr
1:	dec	%ebx
	jnz	1b
	mov	$0x186, %ecx
	xor	%eax, %eax
	xor	%edx, %edx
	wrmsr

	mov	$0xc1, %ecx
	rdmsr				/* eax = the count */
	mov	%eax, %r12d

	/* Print "instructions N\n". */
	lea	msg(%rip), %rsi
2:	lodsb
	test	%al, %al
	jz	3f
	mov	$0x3f8, %dx
	outb	%al, %dx
	jmp	2b
3:	mov	%r12d, %eax
	lea	digits_end(%rip), %rdi
	mov	$10, %ecx
4:	xor	%edx, %edx
	div	%ecx
	add	$'0', %dl
	dec	%rdi
	mov	%dl, (%rdi)
	test	%eax, %eax
	jnz	4b
	lea	digits_end(%rip), %rcx
5:	cmp	%rcx, %rdi
	je	6f
	mov	(%rdi), %al
	mov	$0x3f8, %dx
	outb	%al, %dx
	inc	%rdi
	jmp	5b
6:	mov	$'\n', %al
	mov	$0x3f8, %dx
	outb	%al, %dx

	cmp	$2004, %r12d
	jne	fail
	xor	%eax, %eax
	jmp	done
fail:
	mov	$1, %eax
done:
	mov	$0xf4, %dx
	outl	%eax, %dx
spin:
	pause
	jmp	spin

	.section .rodata
msg:	.asciz	"instructions "
	.bss
digits:	.skip	24
digits_end:
