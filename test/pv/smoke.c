/*
 * smoke.c -- the paravirtual channel's doorbell in its simplest forms: the
 * probe, a NULL request, a block outside RAM (EFAULT through IN32), a bad
 * magic (EINVAL in the block).
 */
#include <vpmu-guest/runtime.h>
#include <vpmu-guest/pv.h>

int main(unsigned cpu);

int
main(unsigned cpu)
{
	uint64_t blk[16];
	struct vpmu_pv_req *req = (struct vpmu_pv_req *)blk;
	int e, e_null, e_magic;
	uint32_t done;

	(void)cpu;
	if (!vpmu_pv_probe()) {
		vg_printf("pv smoke: no channel\n");
		return (1);
	}
	e_null = vpmu_pv_call(VPMU_PV_OP_NULL, NULL, 0, NULL);
	vpmu_pv_req_init(req, VPMU_PV_OP_NULL, 0);
	req->magic = 0;
	e_magic = vpmu_pv_ring(req);
	done = req->done;
	vg_outl(VPMU_PV_PORT, 0x7ffffff8u);	/* beyond 64 MiB of RAM */
	e = (int)vg_inl(VPMU_PV_PORT);
	vg_printf("pv smoke: null %d, bad magic %d done %#x, outside RAM %d, ", e_null,
	    e_magic, done, e);
	vg_outl(VPMU_PV_PORT, (uint32_t)(uintptr_t)blk + 1);
	vg_printf("unaligned %u\n", vg_inl(VPMU_PV_PORT));
	return (0);
}
