/*
 * pctr.c -- a guest's pctr(1): OpenBSD's pctr(4) device reached through
 * libvpmu's paravirtual channel (vpmu_pctr(4)).
 *
 * What `pctr -s 0 -f c0 -u -k; pctr -s 1 -f c4 -u -k; pctr` does on an
 * Intel machine: counter 0 counts retired instructions and counter 1
 * retired branches, in user and kernel mode (pctr(1) adds PCTR_EN when a
 * function is given); then a workload runs and the counters are read and
 * printed in pctr(1)'s read format, once through PCIOCRD and once through
 * rdpmc() (the fast-read page, no exit).  Under an AMD model counter 1 is
 * set to c2, AMD's retired branches.  Run it with
 *   vpmu-run --source exact examples/guests/pctr.elf
 */
#include <vpmu-guest/runtime.h>
#include <vpmu-guest/pctr.h>

static volatile struct vpmu_fastpage page __attribute__((aligned(4096)));

/* The workload: 3 instructions and 1 branch per iteration. */
static __attribute__((noinline)) void
work(uint64_t n)
{
	__asm__ volatile("mov %0, %%rcx\n"
	    "1:\n\tnop\n\tnop\n\tloop 1b" : : "r"(n) : "rcx", "memory");
}

static const char *
fname(unsigned fn, int amd)
{
	switch (fn & 0xff) {
	case 0xc0:
		return ("INST_RETIRED");
	case 0xc2:
		return (amd ? "RETIRED_BRANCHES" : "UOPS_RETIRED");
	case 0xc4:
		return (amd ? "unknown function" : "BR_INST_RETIRED");
	default:
		return ("unknown function");
	}
}

/* pctr(1)'s description of a function: flags, event, unit mask, threshold, name. */
static void
describe(char *buf, size_t len, unsigned fn, int amd)
{
	char thold[8] = "";

	if (fn >> PCTR_CM_SHIFT)
		vg_snprintf(thold, sizeof(thold), "+%u", fn >> PCTR_CM_SHIFT);
	vg_snprintf(buf, len, "%c%c%c%c %02x %02x %s %s %s",
	    (fn & PCTR_I) ? 'i' : '-', (fn & PCTR_E) ? 'e' : '-',
	    (fn & PCTR_K) ? 'k' : '-', (fn & PCTR_U) ? 'u' : '-',
	    fn & 0xff, (fn >> PCTR_UM_SHIFT) & 0xff, thold, "", fname(fn, amd));
}

int
main(unsigned cpu)
{
	struct vpmu_pv_proc pc = { 1, 0, 0, VPMU_PV_CRED_PRIVILEGED };
	struct vpmu_pv_csw csw = { 1, 1 };
	struct pctrst st;
	unsigned fn[2], n, i;
	pctrval hw[PCTR_NUM];
	char desc[64];
	int fd, amd;

	(void)cpu;
	if ((fd = vpmu_pctr_open(VPMU_PV_FREAD | VPMU_PV_FWRITE)) < 0) {
		vg_printf("pctr: open: errno %d\n", vpmu_dev_errno());
		return (1);
	}
	/* 4 counters (AMD) or 2 (Intel): PCIOCS3 says. */
	amd = vpmu_dev_ioctl(fd, PCIOCS3, &(unsigned){ 0 }) == 0;
	n = amd ? PCTR_AMD_NUM : PCTR_INTEL_NUM;
	fn[0] = 0xc0 | PCTR_U | PCTR_K | PCTR_EN;
	fn[1] = (amd ? 0xc2 : 0xc4) | PCTR_U | PCTR_K | PCTR_EN;
	for (i = 0; i < 2; i++)
		if (vpmu_dev_ioctl(fd, PCIOCS0 + i, &fn[i]) != 0) {
			vg_printf("pctr: PCIOCS%u: errno %d (no PMU in this model?)\n", i,
			    vpmu_dev_errno());
			return (1);
		}

	/* rdpmc() reads this vCPU's counters from the process's page. */
	(void)vpmu_pv_call(VPMU_PV_OP_PROC_CREATE, &pc, sizeof(pc), NULL);
	(void)vpmu_pv_call(VPMU_PV_OP_CSW_IN, &csw, sizeof(csw), NULL);
	(void)vpmu_pctr_map(&page);

	work(1000);
	for (i = 0; i < n; i++)
		hw[i] = rdpmc(i);
	if (vpmu_dev_ioctl(fd, PCIOCRD, &st) != 0) {
		vg_printf("pctr: PCIOCRD: errno %d\n", vpmu_dev_errno());
		return (1);
	}
	for (i = 0; i < n; i++) {
		describe(desc, sizeof(desc), st.pctr_fn[i], amd);
		vg_printf(" ctr%u = %16llu  [%s]\n", i, (unsigned long long)st.pctr_hwc[i], desc);
	}
	vg_printf("  tsc = %16llu\n", (unsigned long long)st.pctr_tsc);
	vg_printf("rdpmc:");
	for (i = 0; i < n; i++)
		vg_printf(" %llu", (unsigned long long)hw[i]);
	vg_printf("\n");
	return (vpmu_dev_close(fd) == 0 ? 0 : 1);
}
