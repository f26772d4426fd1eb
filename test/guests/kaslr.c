/*
 * kaslr.c -- a guest that looks like a relocated Linux kernel to vpmustat
 * --guest-symbols (kaslr.sh).  vCPU 0 maps the first GiB a second time at
 * ALIAS, the upper half (PML4 entry 511 pointing where entry 0 does),
 * writes IA32_LSTAR with entry_SYSCALL_64's address there, as Linux
 * x86-64 writes its syscall entry at boot, and runs kaslr_hot() there
 * (called through the alias: its samples are at upper-half addresses,
 * at CPL 0) for ITERS rounds, then prints "kaslr: done".  The code runs
 * as well at either address: calls are relative, and the data it reaches
 * by absolute address is mapped at its own.
 *
 * entry_SYSCALL_64 is never called: it is the symbol LSTAR names.
 */
#include <stdint.h>

#include <vpmu-guest/runtime.h>

#define MSR_LSTAR	0xc0000082
#define ALIAS		0xffffff8000000000ull	/* PML4 entry 511, -0x8000000000 */

#ifndef ITERS
#define ITERS	30000
#endif

volatile uint64_t kaslr_sink;

void entry_SYSCALL_64(void);
void kaslr_hot(uint64_t n);

__attribute__((noinline)) void
entry_SYSCALL_64(void)
{
	kaslr_sink = 0;
}

__attribute__((noinline)) void
kaslr_hot(uint64_t n)
{
	uint64_t i;

	for (i = 0; i < n; i++)
		kaslr_sink += i;
}

int
main(unsigned cpu)
{
	uint64_t *pml4 = (uint64_t *)(uintptr_t)(vg_read_cr3() & ~0xfffull);
	void (*hot)(uint64_t);

	if (cpu != 0)
		return (0);
	pml4[511] = pml4[0];
	__asm__ volatile("mov %0, %%cr3" : : "r"(vg_read_cr3()) : "memory");
	vg_wrmsr(MSR_LSTAR, ALIAS + (uintptr_t)entry_SYSCALL_64);
	hot = (void (*)(uint64_t))(ALIAS + (uintptr_t)kaslr_hot);
	hot(ITERS);
	vg_printf("kaslr: done\n");
	return (0);
}
