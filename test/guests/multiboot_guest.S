/*
 * multiboot_guest.S -- a Multiboot v1 guest for vpmu-run (32-bit, no
 * runtime).  It prints one line on COM1, polling LSR before each byte,
 * with what it found at its entry:
 *
 *   mb: eax E flags F lower L upper U mmap LEN BASE2 LENGTH2 TYPE1 TYPE2
 *       name <N> cmd <C> mods M align A mod <BYTES> fw <SIG> cpus N
 *       dll D lsr S iir I
 *
 * (numbers as 8 hex digits; module bytes with newlines as '|'), and exits
 * through port 0xf4 with a 32-bit write of 0x21.  Between DLAB on and off
 * it writes 'X' to 0x3f8: a divisor, never console output.
 *
 * Builds: as --32 with --defsym AOUT=1 the header's address fields are
 * given (flags bit 16; loaded as a flat binary), with --defsym VIDEO=1 it
 * asks for a video mode (which vpmu-run must refuse).
 */
	.set MB_MAGIC, 0x1BADB002
	.ifdef AOUT
	.set MB_FLAGS, 0x00010003	/* page-align, memory info, address fields */
	.else
	.ifdef VIDEO
	.set MB_FLAGS, 0x00000007	/* ... and a video mode */
	.else
	.set MB_FLAGS, 0x00000003
	.endif
	.endif

	.set COM1, 0x3f8
	.set FWCFG, 0x510

	.section .multiboot, "a"
	.p2align 2
mb_header:
	.long MB_MAGIC, MB_FLAGS, -(MB_MAGIC + MB_FLAGS)
	.ifdef AOUT
	.long mb_header, image_start, load_end, bss_end, start
	.endif

/* Print a string constant. */
.macro PSTR s
	.pushsection .rodata
str\@:	.asciz "\s"
	.popsection
	mov $str\@, %esi
	call puts
.endm

/* Print the 32-bit value at addr, after a space. */
.macro PHEX addr
	mov \addr, %eax
	call puthex
.endm

	.text
	.code32
	.globl start
start:
	mov $stack_top, %esp
	mov %eax, v_eax
	mov %ebx, v_ebx

	/* fw_cfg: the signature (key 0), the CPU count (key 5) */
	mov $FWCFG, %dx
	xor %ax, %ax
	outw %ax, %dx
	inc %dx
	mov $fw_sig, %edi
	mov $4, %ecx
1:	inb %dx, %al
	mov %al, (%edi)
	inc %edi
	loop 1b
	dec %dx
	mov $5, %ax
	outw %ax, %dx
	inc %dx
	inb %dx, %al
	movb %al, v_cpus
	inb %dx, %al
	movb %al, v_cpus + 1

	/* DLAB on, a divisor of 'X' (not console output), read back, DLAB off */
	mov $COM1 + 3, %dx
	mov $0x83, %al
	outb %al, %dx
	mov $COM1, %dx
	mov $'X', %al
	outb %al, %dx
	inc %dx
	xor %al, %al
	outb %al, %dx
	dec %dx
	inb %dx, %al
	movb %al, v_dll
	mov $COM1 + 3, %dx
	mov $0x03, %al
	outb %al, %dx
	/* FIFOs on: IIR reads 0xC1 */
	mov $COM1 + 2, %dx
	mov $0x01, %al
	outb %al, %dx
	inb %dx, %al
	movb %al, v_iir
	mov $COM1 + 5, %dx
	inb %dx, %al
	movb %al, v_lsr

	mov v_ebx, %ebx
	PSTR "mb: eax"
	PHEX v_eax
	PSTR " flags"
	PHEX (%ebx)
	PSTR " lower"
	PHEX 4(%ebx)
	PSTR " upper"
	PHEX 8(%ebx)
	PSTR " mmap"
	PHEX 44(%ebx)
	mov 48(%ebx), %edi		/* entries of 24 bytes: the third's base, length */
	PHEX 48+4(%edi)
	PHEX 48+12(%edi)
	PHEX 20(%edi)
	PHEX 24+20(%edi)
	PSTR " name <"
	mov 64(%ebx), %esi
	call puts
	PSTR "> cmd <"
	mov 16(%ebx), %esi
	call puts
	PSTR "> mods"
	PHEX 20(%ebx)
	PSTR " align"
	mov 24(%ebx), %edi
	mov (%edi), %eax
	and $0xfff, %eax
	call puthex
	PSTR " mod <"
	mov 24(%ebx), %edi
	mov (%edi), %esi
	mov 4(%edi), %ecx
2:	cmp %ecx, %esi
	jae 4f
	movb (%esi), %al
	cmp $'\n', %al
	jne 3f
	mov $'|', %al
3:	call putc
	inc %esi
	jmp 2b
4:	PSTR "> fw <"
	mov $fw_sig, %esi
	call puts
	PSTR "> cpus"
	PHEX v_cpus
	PSTR " dll"
	PHEX v_dll
	PSTR " lsr"
	PHEX v_lsr
	PSTR " iir"
	PHEX v_iir
	PSTR "\n"

	mov $0x21, %eax
	outl %eax, $0xf4
5:	cli
	hlt
	jmp 5b

/* putc: AL to COM1 once LSR says THR is empty.  Keeps every register. */
putc:
	push %edx
	push %eax
	mov $COM1 + 5, %dx
1:	inb %dx, %al
	test $0x20, %al
	jz 1b
	pop %eax
	mov $COM1, %dx
	outb %al, %dx
	pop %edx
	ret

/* puts: the NUL-terminated string at ESI.  Clobbers EAX, ESI. */
puts:
1:	lodsb
	test %al, %al
	jz 2f
	call putc
	jmp 1b
2:	ret

/* puthex: " " and EAX as 8 hex digits.  Clobbers EAX, ECX, EDX. */
puthex:
	mov %eax, %edx
	mov $' ', %al
	call putc
	mov $8, %ecx
1:	rol $4, %edx
	mov %edx, %eax
	and $0xf, %eax
	movb hexdigits(%eax), %al
	call putc
	loop 1b
	ret

	.section .rodata
hexdigits:
	.ascii "0123456789abcdef"

	.data
	.p2align 2
v_eax:	.long 0
v_ebx:	.long 0
v_cpus:	.long 0
v_dll:	.long 0
v_lsr:	.long 0
v_iir:	.long 0
fw_sig:	.long 0, 0		/* 4 bytes and a NUL */

	.bss
	.p2align 4
	.skip 4096
stack_top:
