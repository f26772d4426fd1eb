/*
 * perfmon.c -- the perfmon(4) personality from inside a guest, rule by rule
 * (vpmu_perfmon(4), hwpmc_spec.md 6.2), on the exact source: every errno
 * the driver gives, and exact instruction and branch counts of a known
 * loop read through PMIOREAD.
 *
 * Counts are taken as differences: measure() sets a counter up, starts it,
 * runs spin(n), stops it and reads it.  The code around spin() is the same
 * for every n, so count(n2) - count(n1) is exactly what spin() adds:
 * "1: nop; nop; loop 1b" is 3 instructions and 1 branch per iteration.
 *
 * Prints "FAIL ..." for each failed check and one summary line,
 * "perfmon: N of M ok"; exits with the number of failures.
 */
#include <vpmu-guest/runtime.h>
#include <vpmu-guest/pv.h>
#include <vpmu-guest/perfmon.h>
#include "check.h"

#define N1	10
#define N2	1010
#define DINSN	(3 * (N2 - N1))		/* instructions spin(N2) adds over spin(N1) */
#define DBR	(N2 - N1)		/* branches */

#define RW	(VPMU_PV_FREAD | VPMU_PV_FWRITE)
#define RO	VPMU_PV_FREAD

static __attribute__((noinline)) void
spin(uint64_t n)
{
	__asm__ volatile("mov %0, %%rcx\n"
	    "1:\n\tnop\n\tnop\n\tloop 1b" : : "r"(n) : "rcx", "memory");
}

static int
pm_setup(int fd, int num, uint32_t val)
{
	struct pmc p;

	p.pmc_num = num;
	p.pmc_val = val;
	return (vpmu_dev_ioctl(fd, PMIOSETUP, &p));
}

static int
pm_op(int fd, unsigned long cmd, int num)
{
	return (vpmu_dev_ioctl(fd, cmd, &num));
}

static int64_t
pm_read(int fd, int num)
{
	struct pmc_data d;

	d.pmcd_num = num;
	d.pmcd_value = -1;
	if (vpmu_dev_ioctl(fd, PMIOREAD, &d) != 0)
		return (-1000 - vpmu_dev_errno());
	return (d.pmcd_value);
}

static uint32_t
pm_get(int fd, int num)
{
	struct pmc p;

	p.pmc_num = num;
	p.pmc_val = 0xdeadbeef;
	if (vpmu_dev_ioctl(fd, PMIOGET, &p) != 0)
		return (0xffffffffu);
	return (p.pmc_val);
}

/* Set up counters 0 and 1 (val1 0: only 0), count spin(n), read both. */
static __attribute__((noinline)) void
measure(int fd, uint32_t val0, uint32_t val1, uint64_t n, int64_t v[2])
{
	(void)pm_setup(fd, 0, val0);
	if (val1 != 0)
		(void)pm_setup(fd, 1, val1);
	(void)pm_op(fd, PMIOSTART, 0);
	if (val1 != 0)
		(void)pm_op(fd, PMIOSTART, 1);
	spin(n);
	(void)pm_op(fd, PMIOSTOP, 0);
	if (val1 != 0)
		(void)pm_op(fd, PMIOSTOP, 1);
	v[0] = pm_read(fd, 0);
	v[1] = val1 != 0 ? pm_read(fd, 1) : 0;
}

/* What spin(N2) counts over spin(N1). */
static void
delta(int fd, uint32_t val0, uint32_t val1, int64_t d[2])
{
	int64_t a[2], b[2];

	measure(fd, val0, val1, N1, a);
	measure(fd, val0, val1, N2, b);
	d[0] = b[0] - a[0];
	d[1] = b[1] - a[1];
}

#define EV(code, unit, flags, mask) \
	((uint32_t)(code) | (uint32_t)(unit) << 8 | (uint32_t)(flags) << 16 | (uint32_t)(mask) << 24)
#define UK	(PMCF_USR | PMCF_OS)

/* Raw requests, for what the library's wrappers never send. */
static int
raw_open(uint32_t fflags, uint32_t minor, int64_t *fd)
{
	struct vpmu_pv_open o = { fflags, minor };

	return (vpmu_pv_call(VPMU_PV_OP_PERFMON_OPEN, &o, sizeof(o), fd));
}

static int
raw_close(int32_t fd)
{
	struct vpmu_pv_close c = { fd };

	return (vpmu_pv_call(VPMU_PV_OP_PERFMON_CLOSE, &c, sizeof(c), NULL));
}

static int
raw_ioctl(int32_t fd, uint32_t cmd, void *data, uint32_t len)
{
	uint64_t buf[8];
	struct vpmu_pv_ioctl *io = (struct vpmu_pv_ioctl *)buf;

	io->fd = fd;
	io->cmd = cmd;
	memcpy(buf + 1, data, len);
	return (vpmu_pv_call(VPMU_PV_OP_PERFMON_IOCTL, buf, 8 + len, NULL));
}

static void
test_numbers(void)
{
	CHECK_EQ("PMIOSETUP", PMIOSETUP, 0x80083501u);
	CHECK_EQ("PMIOSTART", PMIOSTART, 0x80043502u);
	CHECK_EQ("PMIOSTOP", PMIOSTOP, 0x80043503u);
	CHECK_EQ("PMIOREAD", PMIOREAD, 0xc0103504u);
	CHECK_EQ("PMIOREAD_I386", PMIOREAD_I386, 0xc00c3504u);
	CHECK_EQ("PMIORESET", PMIORESET, 0x80043505u);
	CHECK_EQ("PMIOTSTAMP", PMIOTSTAMP, 0x40103506u);
	CHECK_EQ("PMIOTSTAMP_I386", PMIOTSTAMP_I386, 0x400c3506u);
	CHECK_EQ("PMIOGET", PMIOGET, 0xc0083507u);
	CHECK_EQ("sizeof pmc_data_i386", sizeof(struct pmc_data_i386), 12);
	CHECK_EQ("sizeof pmc_data", sizeof(struct pmc_data), 16);
}

static void
test_open(void)
{
	int64_t w, r, w2;
	int fd;

	CHECK_EQ("open fflags 0", raw_open(0, 0, &w), VPMU_PV_EINVAL);
	CHECK_EQ("open fflags 4", raw_open(4, 0, &w), VPMU_PV_EINVAL);
	CHECK_EQ("open minor 7", raw_open(RO, 7, &w), VPMU_PV_ENXIO);
	CHECK_EQ("open writer", raw_open(RW, 0, &w), 0);
	CHECK_EQ("second writer", raw_open(VPMU_PV_FWRITE, 0, &w2), VPMU_PV_EBUSY);
	CHECK_EQ("reader beside a writer", raw_open(RO, 0, &r), 0);
	CHECK_EQ("another reader", raw_open(RO, 6, &w2), 0);
	CHECK_EQ("close reader", raw_close((int32_t)w2), 0);
	CHECK_EQ("close closed", raw_close((int32_t)w2), VPMU_PV_EBADF);
	CHECK_EQ("close unknown", raw_close(123456), VPMU_PV_EBADF);
	/* Another process cannot use or close the descriptors. */
	vpmu_pv_set_self(2, 2, 0, VPMU_PV_CRED_PRIVILEGED);
	CHECK_EQ("close another pid's", raw_close((int32_t)w), VPMU_PV_EBADF);
	{
		int num = 0;

		CHECK_EQ("ioctl another pid's", raw_ioctl((int32_t)r, PMIOSTART, &num, 4),
		    VPMU_PV_EBADF);
	}
	vpmu_pv_set_self(1, 1, 0, VPMU_PV_CRED_PRIVILEGED);
	/* The data must be what the command says. */
	{
		uint64_t d[2] = { 0, 0 };

		CHECK_EQ("arglen short", raw_ioctl((int32_t)w, PMIOREAD, d, 12), VPMU_PV_EINVAL);
		CHECK_EQ("arglen long", raw_ioctl((int32_t)w, PMIOSTART, d, 8), VPMU_PV_EINVAL);
	}
	CHECK_EQ("close writer", raw_close((int32_t)w), 0);
	CHECK_EQ("writer after writer closed", raw_open(RW, 0, &w2), 0);
	CHECK_EQ("close", raw_close((int32_t)w2), 0);
	CHECK_EQ("close reader 2", raw_close((int32_t)r), 0);
	/* Through the library. */
	fd = vpmu_perfmon_open(RW);
	CHECK("library open", fd >= 0, "fd %d errno %d", fd, vpmu_dev_errno());
	CHECK_ERR("library second writer", vpmu_perfmon_open(RW), VPMU_PV_EBUSY);
	CHECK_ERR("library close", vpmu_dev_close(fd), 0);
	CHECK_ERR("library close again", vpmu_dev_close(fd), VPMU_PV_EBADF);
}

static void
test_rules(void)
{
	int w, r, num = 0;
	struct pmc p;

	w = vpmu_perfmon_open(RW);
	r = vpmu_perfmon_open(RO);
	CHECK("opens", w >= 0 && r >= 0, "w %d r %d", w, r);
	/* Not set up: EBUSY for every per-counter op; EINVAL out of range. */
	CHECK_ERR("START before SETUP", pm_op(w, PMIOSTART, 0), VPMU_PV_EBUSY);
	CHECK_ERR("STOP before SETUP", pm_op(w, PMIOSTOP, 1), VPMU_PV_EBUSY);
	CHECK_ERR("RESET before SETUP", pm_op(w, PMIORESET, 0), VPMU_PV_EBUSY);
	CHECK_EQ("READ before SETUP", pm_read(r, 0), -1000 - VPMU_PV_EBUSY);
	p.pmc_num = 1;
	CHECK_ERR("GET before SETUP", vpmu_dev_ioctl(r, PMIOGET, &p), VPMU_PV_EBUSY);
	CHECK_ERR("START counter 2", pm_op(w, PMIOSTART, 2), VPMU_PV_EINVAL);
	CHECK_ERR("READ counter -1", vpmu_dev_ioctl(r, PMIOREAD, &(struct pmc_data){ -1, 0 }),
	    VPMU_PV_EINVAL);
	CHECK_ERR("SETUP counter 2", pm_setup(w, 2, EV(0xc0, 0, UK, 0)), VPMU_PV_EINVAL);
	CHECK_ERR("SETUP counter -1", pm_setup(w, -1, EV(0xc0, 0, UK, 0)), VPMU_PV_EINVAL);
	/* Read-only: EPERM before the counter number is looked at. */
	CHECK_ERR("RO SETUP", pm_setup(r, 0, EV(0xc0, 0, UK, 0)), VPMU_PV_EPERM);
	CHECK_ERR("RO SETUP counter 9", pm_setup(r, 9, EV(0xc0, 0, UK, 0)), VPMU_PV_EPERM);
	CHECK_ERR("RO START", pm_op(r, PMIOSTART, 0), VPMU_PV_EPERM);
	CHECK_ERR("RO STOP", pm_op(r, PMIOSTOP, 0), VPMU_PV_EPERM);
	CHECK_ERR("RO RESET", pm_op(r, PMIORESET, 5), VPMU_PV_EPERM);
	CHECK_ERR("unknown ioctl", vpmu_dev_ioctl(r, _VPMU_IOW('5', 9, 4), &num),
	    VPMU_PV_ENOTTY);
	CHECK_ERR("pctr's ioctl", vpmu_dev_ioctl(r, 0x80046308u, &num), VPMU_PV_ENOTTY);
	/* Pentium Pro table: only the counted codes. */
	CHECK_ERR("SETUP L2_RQSTS", pm_setup(w, 0, EV(0x2e, 0xf, UK, 0)), VPMU_PV_EINVAL);
	CHECK_ERR("SETUP UOPS_RETIRED", pm_setup(w, 0, EV(0xc2, 0, UK, 0)), VPMU_PV_EINVAL);
	CHECK_ERR("SETUP INST_EXECUTED (P5 code)", pm_setup(w, 0, EV(22, 0, UK, 0)),
	    VPMU_PV_EINVAL);
	CHECK_ERR("SETUP INST_RETIRED unit 1", pm_setup(w, 0, EV(0xc0, 1, UK, 0)),
	    VPMU_PV_EINVAL);
	CHECK_ERR("GET after refused SETUP", vpmu_dev_ioctl(r, PMIOGET, &p), VPMU_PV_EBUSY);
	/* SETUP strips INT and EN and leaves the counter stopped at 0. */
	CHECK_ERR("SETUP INST_RETIRED", pm_setup(w, 0,
	    EV(0xc0, 0, UK | PMCF_INT | PMCF_EN | PMCF_PC, 3)), 0);
	CHECK_EQ("GET: INT, EN stripped", pm_get(r, 0), EV(0xc0, 0, UK | PMCF_PC, 3));
	CHECK_EQ("READ after SETUP", pm_read(r, 0), 0);
	spin(100);
	CHECK_EQ("READ stopped", pm_read(r, 0), 0);
	CHECK_ERR("STOP never started", pm_op(w, PMIOSTOP, 0), 0);
	CHECK_ERR("SETUP", pm_setup(w, 0, EV(0xc0, 0, UK, 0)), 0);
	CHECK_ERR("START", pm_op(w, PMIOSTART, 0), 0);
	CHECK_EQ("GET: EN while started", pm_get(r, 0), EV(0xc0, 0, UK | PMCF_EN, 0));
	CHECK_ERR("START again", pm_op(w, PMIOSTART, 0), 0);
	spin(100);
	CHECK_ERR("STOP", pm_op(w, PMIOSTOP, 0), 0);
	CHECK_EQ("GET: no EN once stopped", pm_get(r, 0), EV(0xc0, 0, UK, 0));
	{
		int64_t v = pm_read(r, 0), v2;
		struct pmc_data_i386 d32 = { 0, -1 };

		CHECK("READ counted", v >= 300 && v < 5000, "value %ld", (long)v);
		spin(100);
		CHECK_EQ("READ stopped keeps", pm_read(w, 0), v);
		CHECK_ERR("READ i386", vpmu_dev_ioctl(r, PMIOREAD_I386, &d32), 0);
		CHECK_EQ("READ i386 value", d32.pmcd_value, v);
		CHECK_ERR("START after STOP", pm_op(w, PMIOSTART, 0), 0);
		spin(100);
		CHECK_ERR("STOP 2", pm_op(w, PMIOSTOP, 0), 0);
		v2 = pm_read(r, 0);
		CHECK("START continues from the stopped count", v2 > v + 300, "%ld then %ld",
		    (long)v, (long)v2);
		CHECK_ERR("RESET stopped", pm_op(w, PMIORESET, 0), 0);
		CHECK_EQ("READ after RESET", pm_read(r, 0), 0);
		CHECK_ERR("START 3", pm_op(w, PMIOSTART, 0), 0);
		spin(1000);
		CHECK_ERR("RESET running", pm_op(w, PMIORESET, 0), 0);
		CHECK_ERR("STOP 3", pm_op(w, PMIOSTOP, 0), 0);
		v2 = pm_read(r, 0);
		CHECK("RESET running restarts from 0", v2 > 0 && v2 < 3000, "value %ld", (long)v2);
		CHECK_ERR("RESET counter 2", pm_op(w, PMIORESET, 2), VPMU_PV_EINVAL);
	}
	/* TSTAMP: either layout; a rate; the TSC moves on. */
	{
		struct pmc_tstamp t1, t2;
		struct pmc_tstamp_i386 t3;

		CHECK_ERR("TSTAMP", vpmu_dev_ioctl(r, PMIOTSTAMP, &t1), 0);
		CHECK_ERR("TSTAMP i386", vpmu_dev_ioctl(r, PMIOTSTAMP_I386, &t3), 0);
		CHECK_ERR("TSTAMP 2", vpmu_dev_ioctl(w, PMIOTSTAMP, &t2), 0);
		CHECK("TSTAMP rate", t1.pmct_rate > 0 && t1.pmct_rate == t2.pmct_rate &&
		    t3.pmct_rate == t1.pmct_rate, "rates %d %d %d", t1.pmct_rate,
		    t2.pmct_rate, t3.pmct_rate);
		CHECK("TSTAMP moves on", t1.pmct_value < t3.pmct_value &&
		    t3.pmct_value < t2.pmct_value, "%ld %ld %ld", (long)t1.pmct_value,
		    (long)t3.pmct_value, (long)t2.pmct_value);
	}
	/* Closing the reader changes nothing; closing the writer frees both. */
	CHECK_ERR("SETUP 1", pm_setup(w, 1, EV(0xc4, 0, UK, 0)), 0);
	CHECK_ERR("close reader", vpmu_dev_close(r), 0);
	CHECK_ERR("close writer", vpmu_dev_close(w), 0);
	r = vpmu_perfmon_open(RO);
	CHECK_EQ("counter 0 freed with its writer", pm_read(r, 0), -1000 - VPMU_PV_EBUSY);
	CHECK_EQ("counter 1 freed with its writer", pm_read(r, 1), -1000 - VPMU_PV_EBUSY);
	CHECK_ERR("close", vpmu_dev_close(r), 0);
}

static void
test_counts(void)
{
	int64_t d[2];
	int w = vpmu_perfmon_open(RW), w5;

	delta(w, EV(0xc0, 0, UK, 0), EV(0xc4, 0, UK, 0), d);
	CHECK_EQ("P6 INST_RETIRED", d[0], DINSN);
	CHECK_EQ("P6 BR_INST_RETIRED", d[1], DBR);
	delta(w, EV(0x79, 0, UK, 0), EV(0xc0, 0, PMCF_OS, 0), d);
	CHECK_EQ("P6 CPU_CLK_UNHALTED (1 cycle per instruction)", d[0], DINSN);
	CHECK_EQ("P6 INST_RETIRED OS only", d[1], DINSN);
	delta(w, EV(0xc0, 0, PMCF_USR, 0), EV(0xc4, 0, 0, 0), d);
	CHECK_EQ("P6 INST_RETIRED USR only at CPL 0", d[0], 0);
	CHECK_EQ("P6 BR_INST_RETIRED in no mode", d[1], 0);
	/* The counter mask: cycles with >= 2 instructions (none), < 2 (all). */
	delta(w, EV(0xc0, 0, UK, 2), EV(0xc0, 0, UK | PMCF_INV, 2), d);
	CHECK_EQ("P6 INST_RETIRED cmask 2", d[0], 0);
	CHECK_EQ("P6 INST_RETIRED cmask 2 inverted", d[1], DINSN);
	CHECK_ERR("close", vpmu_dev_close(w), 0);

	/* The Pentium table, chosen at open. */
	w5 = vpmu_perfmon_open_cpu(RW, VPMU_PERFMON_P5);
	CHECK("P5 open", w5 >= 0, "errno %d", vpmu_dev_errno());
	CHECK_ERR("P5 SETUP INST_RETIRED (P6 code)", pm_setup(w5, 0, EV(0xc0, 0, UK | PMCF_E, 0)),
	    VPMU_PV_EINVAL);
	CHECK_ERR("P5 SETUP without PMCF_E (clocks)", pm_setup(w5, 0, EV(22, 0, UK, 0)),
	    VPMU_PV_EINVAL);
	CHECK_ERR("P5 SETUP with a counter mask", pm_setup(w5, 0, EV(22, 0, UK | PMCF_E, 1)),
	    VPMU_PV_EINVAL);
	CHECK_ERR("P5 SETUP DATA_READ", pm_setup(w5, 0, EV(0, 0, UK | PMCF_E, 0)),
	    VPMU_PV_EINVAL);
	CHECK_ERR("P5 SETUP INST_EXECUTED_V", pm_setup(w5, 0, EV(23, 0, UK | PMCF_E, 0)),
	    VPMU_PV_EINVAL);
	delta(w5, EV(22, 0, UK | PMCF_E, 0), EV(18, 0, UK | PMCF_E, 0), d);
	CHECK_EQ("P5 INST_EXECUTED", d[0], DINSN);
	CHECK_EQ("P5 BRANCHES", d[1], DBR);
	CHECK_ERR("P5 close", vpmu_dev_close(w5), 0);
}

/* A process's exit closes its descriptors: a writer's counters go too. */
static void
test_proc_exit(void)
{
	struct vpmu_pv_proc pc = { 7, 0, 0, VPMU_PV_CRED_PRIVILEGED };
	struct vpmu_pv_pid pid = { 7 };
	int w, r;

	CHECK_EQ("PROC_CREATE 7", vpmu_pv_call(VPMU_PV_OP_PROC_CREATE, &pc, sizeof(pc), NULL), 0);
	vpmu_pv_set_self(7, 7, 0, VPMU_PV_CRED_PRIVILEGED);
	w = vpmu_perfmon_open(RW);
	CHECK_ERR("pid 7 SETUP", pm_setup(w, 0, EV(0xc0, 0, UK, 0)), 0);
	vpmu_pv_set_self(1, 1, 0, VPMU_PV_CRED_PRIVILEGED);
	CHECK_ERR("pid 1 writer while pid 7 writes", vpmu_perfmon_open(RW), VPMU_PV_EBUSY);
	r = vpmu_perfmon_open(RO);
	CHECK_EQ("pid 7's counter", pm_read(r, 0), 0);
	CHECK_EQ("PROC_EXIT 7", vpmu_pv_call(VPMU_PV_OP_PROC_EXIT, &pid, sizeof(pid), NULL), 0);
	CHECK_EQ("pid 7's counter after its exit", pm_read(r, 0), -1000 - VPMU_PV_EBUSY);
	CHECK_ERR("pid 7's descriptor after its exit", vpmu_dev_close(w), VPMU_PV_EBADF);
	w = vpmu_perfmon_open(RW);
	CHECK("pid 1 writer after pid 7's exit", w >= 0, "errno %d", vpmu_dev_errno());
	CHECK_ERR("close", vpmu_dev_close(w), 0);
	CHECK_ERR("close reader", vpmu_dev_close(r), 0);
}

int
main(unsigned cpu)
{
	(void)cpu;
	test_numbers();
	test_open();
	test_rules();
	test_counts();
	test_proc_exit();
	vg_printf("perfmon: %u of %u ok\n", nok, nall);
	return ((int)(nall - nok));
}
