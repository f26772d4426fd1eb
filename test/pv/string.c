/*
 * string.c -- string accesses to the channel's ports, as vpmu_pv(4) says
 * a KVM monitor sees them: KVM reports a REP INS of n elements as one
 * access of n, which the channel ignores (all ones), and a one-element
 * INS as an IN; it reports every element of an OUTS, REP or not, as an
 * OUT of its own, so each element rings the doorbell in turn.
 */
#include <vpmu-guest/runtime.h>
#include <vpmu-guest/pv.h>

int main(unsigned cpu);

/* REP INSD of n doublewords from port into buf. */
static void
ins32(uint16_t port, uint32_t *buf, unsigned long n)
{
	__asm__ volatile("rep insl" : "+D"(buf), "+c"(n) : "d"(port) : "memory");
}

/* REP OUTSD of n doublewords from buf to port. */
static void
outs32(uint16_t port, const uint32_t *buf, unsigned long n)
{
	__asm__ volatile("rep outsl" : "+S"(buf), "+c"(n) : "d"(port) : "memory");
}

int
main(unsigned cpu)
{
	uint64_t blk[16];
	struct vpmu_pv_req *req = (struct vpmu_pv_req *)blk;
	uint32_t in1[1] = { 0 }, in2[2] = { 0, 0 }, out[2];

	(void)cpu;
	ins32(VPMU_PV_PORT_HI, in1, 1);
	ins32(VPMU_PV_PORT_HI, in2, 2);
	vg_printf("pv string: insd x1 %#x, insd x2 %#x %#x, ", in1[0], in2[0], in2[1]);

	/*
	 * Two doorbells, a block outside RAM (errno 14) and a good one
	 * (errno 0): the last errno is the second element's.
	 */
	vpmu_pv_req_init(req, VPMU_PV_OP_NULL, 0);
	out[0] = 0x7ffffff8u;
	out[1] = (uint32_t)(uintptr_t)req;
	outs32(VPMU_PV_PORT, out, 2);
	vg_printf("outsd [bad, good] errno %u done %#x, ", vg_inl(VPMU_PV_PORT), req->done);
	vpmu_pv_req_init(req, VPMU_PV_OP_NULL, 0);
	out[0] = (uint32_t)(uintptr_t)req;
	out[1] = 0x7ffffff8u;
	outs32(VPMU_PV_PORT, out, 2);
	vg_printf("outsd [good, bad] errno %u done %#x\n", vg_inl(VPMU_PV_PORT), req->done);
	return (0);
}
