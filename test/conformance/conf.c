/*
 * conf.c -- the measured blocks (see conf.h for their exact counts) and the
 * NMI handler that records where a PMI interrupted the guest.
 *
 * Arguments (SysV): rdi on_msr, rsi on_val, rdx off_msr, rcx off_val, r8 n.
 * Everything is set up before the enabling WRMSR, so between the two
 * WRMSRs only the counted instructions run.
 */
#include "conf.h"

volatile uint64_t conf_nmi_rip[VG_MAX_CPUS];

#define CONF_MEASURE(name, body, last)					\
	__asm__(".text\n"						\
	    ".globl " name "\n"						\
	    name ":\n"							\
	    "	mov %rdx, %r9\n"					\
	    "	mov %rcx, %r10\n"					\
	    "	mov %rcx, %r11\n"					\
	    "	shr $32, %r11\n"					\
	    "	mov %edi, %ecx\n"					\
	    "	mov %rsi, %rax\n"					\
	    "	mov %rsi, %rdx\n"					\
	    "	shr $32, %rdx\n"					\
	    "	wrmsr\n"						\
	    "	mov %r8, %rcx\n"					\
	    "1:	" body "\n"						\
	    "	loop 1b\n"						\
	    "	mov %r9d, %ecx\n"					\
	    "	mov %r10d, %eax\n"					\
	    last							\
	    "	mov %r11d, %edx\n"					\
	    "	wrmsr\n"						\
	    "	ret\n")

CONF_MEASURE("conf_measure", "nop; nop", ".globl conf_measure_last\nconf_measure_last:\n");
CONF_MEASURE("conf_measure_fenced", "mfence; lfence", "");

void
conf_nmi_handler(unsigned cpu, struct vg_frame *f)
{
	conf_nmi_rip[cpu] = f->rip;
}

uint64_t
conf_rdpmc_span(uint32_t ecx)
{
	uint32_t a0, d0, a1, d1;

	__asm__ volatile("rdpmc\n\tmov %%eax, %0\n\tmov %%edx, %1\n\trdpmc"
	    : "=&r"(a0), "=&r"(d0), "=a"(a1), "=d"(d1) : "c"(ecx) : "memory");
	return (((uint64_t)d1 << 32 | a1) - ((uint64_t)d0 << 32 | a0));
}
