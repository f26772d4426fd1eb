/*
 * pmi_guest.c -- the guest of pmi_lapic: a loop of port exits, one per
 * iteration, while the host makes PMIs arrive as NMIs (the runtime's
 * handler counts them).
 *
 *   IN  0xb08      0: go on; anything else: stop
 *   OUT 0xb08      at the end: the NMIs this vCPU took
 */
#include <vpmu-guest/runtime.h>

#define PMI_PORT	0xb08

int
main(unsigned cpu)
{
	if (cpu != 0)
		return (0);
	while (vg_inl(PMI_PORT) == 0)
		;
	vg_outl(PMI_PORT, (uint32_t)vg_nmi_count());
	return (0);
}
