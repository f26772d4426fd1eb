/*
 * perfmon.c -- FreeBSD's perfmon(4) from a guest, through libvpmu's
 * paravirtual channel (vpmu_perfmon(4)): what /usr/share/examples/perfmon
 * did on a Pentium Pro, for a virtual one.
 *
 * Counter 0 counts INST_RETIRED and counter 1 BR_INST_RETIRED, in user
 * and kernel mode.  Each is set up, started around a loop of n
 * iterations (3 instructions, 1 branch each), stopped and read; the same
 * for 2n iterations.  The difference is the loop's own n iterations,
 * which the exact source counts exactly: 3n instructions, n branches.
 * PMIOTSTAMP gives the TSC and its rate.  Run it with
 *   vpmu-run --source exact examples/guests/perfmon.elf
 */
#include <vpmu-guest/runtime.h>
#include <vpmu-guest/perfmon.h>

#define N	100000

static __attribute__((noinline)) void
work(uint64_t n)
{
	__asm__ volatile("mov %0, %%rcx\n"
	    "1:\n\tnop\n\tnop\n\tloop 1b" : : "r"(n) : "rcx", "memory");
}

static int
ctl(int fd, unsigned long cmd, int num)
{
	return (vpmu_dev_ioctl(fd, cmd, &num));
}

/* Set up, start, run work(n), stop, read: v[0] instructions, v[1] branches. */
static __attribute__((noinline)) int
run(int fd, uint64_t n, int64_t v[2])
{
	static const unsigned char ev[2] = { PMC6_INST_RETIRED, PMC6_BR_INST_RETIRED };
	struct pmc p;
	struct pmc_data d;
	int i;

	for (i = 0; i < 2; i++) {
		p.pmc_num = i;
		p.pmc_val = 0;
		p.pmc_event = ev[i];
		p.pmc_flags = PMCF_USR | PMCF_OS;
		if (vpmu_dev_ioctl(fd, PMIOSETUP, &p) != 0)
			return (-1);
	}
	if (ctl(fd, PMIOSTART, 0) != 0 || ctl(fd, PMIOSTART, 1) != 0)
		return (-1);
	work(n);
	if (ctl(fd, PMIOSTOP, 0) != 0 || ctl(fd, PMIOSTOP, 1) != 0)
		return (-1);
	for (i = 0; i < 2; i++) {
		d.pmcd_num = i;
		if (vpmu_dev_ioctl(fd, PMIOREAD, &d) != 0)
			return (-1);
		v[i] = d.pmcd_value;
	}
	return (0);
}

int
main(unsigned cpu)
{
	struct pmc_tstamp t0, t1;
	int64_t a[2], b[2];
	int fd;

	(void)cpu;
	if ((fd = vpmu_perfmon_open(VPMU_PV_FREAD | VPMU_PV_FWRITE)) < 0) {
		vg_printf("perfmon: open: errno %d\n", vpmu_dev_errno());
		return (1);
	}
	if (vpmu_dev_ioctl(fd, PMIOTSTAMP, &t0) != 0 || run(fd, N, a) != 0 ||
	    run(fd, 2 * N, b) != 0 || vpmu_dev_ioctl(fd, PMIOTSTAMP, &t1) != 0) {
		vg_printf("perfmon: errno %d\n", vpmu_dev_errno());
		return (1);
	}
	vg_printf("perfmon: %d iterations: INST_RETIRED %ld, BR_INST_RETIRED %ld\n", N,
	    (long)a[0], (long)a[1]);
	vg_printf("perfmon: %d iterations: INST_RETIRED %ld, BR_INST_RETIRED %ld\n", 2 * N,
	    (long)b[0], (long)b[1]);
	vg_printf("perfmon: the loop's own %d iterations: %ld instructions, %ld branches%s\n",
	    N, (long)(b[0] - a[0]), (long)(b[1] - a[1]),
	    b[0] - a[0] == 3 * N && b[1] - a[1] == N ? " (exact)" : "");
	vg_printf("perfmon: TSC rate %d MHz, %ld ticks for both runs\n", t1.pmct_rate,
	    (long)(t1.pmct_value - t0.pmct_value));
	return (vpmu_dev_close(fd) == 0 ? 0 : 1);
}
