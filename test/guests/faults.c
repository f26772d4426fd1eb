/*
 * faults.c -- ways a guest ends a run badly, one per build (DEFINES MODE=):
 *   TRIPLE    a null IDT, then UD2: #UD, #GP, #DF cannot be delivered
 *             -> vpmu-run: triple fault (KVM_EXIT_SHUTDOWN), status 3
 *   HLT_CLI   HLT with interrupts off -> status 3
 *   HLT_STI   HLT with interrupts on, three times: with --irqchip user
 *             returns at once (no interrupt ever comes; vpmu-run(1))
 *             -> status 0
 *   PORT_OUT  OUT to port 0x80 -> status 3
 *   PORT_IN   IN from port 0x60 -> status 3
 *   MMIO      a read past RAM (512 MiB with 64 MiB) -> status 3
 *   UD        UD2: the runtime reports the unexpected #UD, exits 0x7f
 */
#include <vpmu-guest/runtime.h>

#define TRIPLE		1
#define HLT_CLI		2
#define HLT_STI		3
#define PORT_OUT	4
#define PORT_IN		5
#define MMIO		6
#define UD		7

int
main(unsigned cpu)
{
	struct {
		uint16_t limit;
		uint64_t base;
	} __attribute__((packed)) null_idt = { 0, 0 };
	int i;

	(void)cpu;
	(void)i;
	(void)null_idt;
	vg_printf("faults: mode %d\n", MODE);
#if MODE == TRIPLE
	/* UD2, not INT3: KVM's emulator (kvm_pvm) cannot do INT n in long mode. */
	__asm__ volatile("lidt %0; ud2" : : "m"(null_idt));
#elif MODE == HLT_CLI
	__asm__ volatile("cli; hlt");
#elif MODE == HLT_STI
	for (i = 0; i < 3; i++)
		__asm__ volatile("sti; hlt; cli");
	vg_printf("HLT with interrupts on returned 3 times\n");
	return (0);
#elif MODE == PORT_OUT
	vg_outb(0x80, 1);
#elif MODE == PORT_IN
	(void)vg_inb(0x60);
#elif MODE == MMIO
	(void)*(volatile uint32_t *)(512ul << 20);
#elif MODE == UD
	__asm__ volatile("ud2");
#else
#error "unknown MODE"
#endif
	vg_printf("faults: still running after mode %d\n", MODE);
	return (99);
}
