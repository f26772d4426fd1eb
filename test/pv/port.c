/*
 * port.c -- a guest whose VMM moved the paravirtual channel (vpmu-run
 * --pv-port PV_BASE): the guest library told the base with
 * vpmu_pv_set_port() probes, rings a NULL request and asks for the module
 * version there.  Built with -DPV_BASE=...; run under a VMM that left the
 * channel at 0x5650, the probe's IN at PV_BASE + 4 is an unhandled port and
 * the run ends with status 3.
 */
#include <vpmu-guest/runtime.h>
#include <vpmu-guest/pv.h>

int main(unsigned cpu);

int
main(unsigned cpu)
{
	uint32_t ver = 0x0A000000u;
	int probe, e_null, e_ver;

	(void)cpu;
	vpmu_pv_set_port(PV_BASE);
	probe = vpmu_pv_probe();
	e_null = vpmu_pv_call(VPMU_PV_OP_NULL, NULL, 0, NULL);
	e_ver = vpmu_pv_call(VPMU_PV_OP_GETMODULEVERSION, &ver, sizeof(ver), NULL);
	vg_printf("pv port %#x: probe %d, null %d, version %d %#x\n", vpmu_pv_port(),
	    probe, e_null, e_ver, ver);
	return (0);
}
