/*
 * manpage_example.c -- vpmu_pv(4)'s EXAMPLES section, compiled as it is
 * printed (the function below is the page's text): a guest written from
 * the page alone, with no libvpmu header, must get the module version.
 */
#include <vpmu-guest/runtime.h>

static uint32_t hwpmc_version(void);
int main(unsigned cpu);

/* ---- from vpmu_pv(4) EXAMPLES, verbatim ---- */
static uint32_t
hwpmc_version(void)
{
	static uint64_t blk[9] __attribute__((aligned(8)));	/* 64 + 8 */
	uint32_t *w = (uint32_t *)blk;
	int32_t error;

	for (int i = 0; i < 9; i++)
		blk[i] = 0;
	w[0] = 0x554d5056;		/* magic */
	w[1] = 1 | 64 << 16;		/* version 1, hdrsize 64 */
	w[2] = 4;			/* op: GETMODULEVERSION */
	w[3] = 4;			/* arglen */
	w[4] = 1;			/* pid 1 */
	w[5] = 1;			/* tid 1 */
	w[7] = 1;			/* privileged */
	w[16] = 0x0A000000;		/* the caller's hwpmc version */
	__asm__ volatile("outl %0, %1" : : "a"((uint32_t)(uintptr_t)blk),
	    "Nd"((uint16_t)0x5650) : "memory");
	error = (int32_t)w[8];
	return (error == 0 ? w[16] : 0);	/* 0x0A000000 */
}
/* ---- end of the page's text ---- */

int
main(unsigned cpu)
{
	(void)cpu;
	vg_printf("manpage example: version %#x\n", hwpmc_version());
	return (0);
}
