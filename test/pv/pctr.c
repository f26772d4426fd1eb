/*
 * pctr.c -- the pctr(4) personality from inside a guest, rule by rule
 * (vpmu_pctr(4), hwpmc_spec.md 5.2), on the exact source: the errnos in
 * the driver's order, the functions read back, and exact instruction and
 * branch counts of a known loop through PCIOCRD and through rdpmc() (the
 * fast-read page).
 *
 * The same guest runs under every model: PCIOCS0 failing with ENODEV says
 * there is no PMU ("none"); PCIOCS2 failing with EINVAL says 2 counters
 * ("intel"), succeeding 4 ("amd").  The summary line names which:
 * "pctr: intel: N of M ok".  Counts are differences of two runs of the
 * same code around spin(N1) and spin(N2) (3 instructions and 1 branch per
 * iteration), as in perfmon.c.
 */
#include <vpmu-guest/runtime.h>
#include <vpmu-guest/pv.h>
#include <vpmu-guest/pctr.h>
#include <vpmu-guest/fastpage.h>
#include "check.h"

#define N1	10
#define N2	1010
#define DINSN	(3 * (N2 - N1))
#define DBR	(N2 - N1)

#define RW	(VPMU_PV_FREAD | VPMU_PV_FWRITE)
#define RO	VPMU_PV_FREAD

static __attribute__((noinline)) void
spin(uint64_t n)
{
	__asm__ volatile("mov %0, %%rcx\n"
	    "1:\n\tnop\n\tnop\n\tloop 1b" : : "r"(n) : "rcx", "memory");
}

static int
setfn(int fd, unsigned ctr, unsigned fn)
{
	return (vpmu_dev_ioctl(fd, PCIOCS0 + ctr, &fn));
}

static struct pctrst
rd(int fd)
{
	struct pctrst st;

	memset(&st, 0xff, sizeof(st));
	if (vpmu_dev_ioctl(fd, PCIOCRD, &st) != 0)
		vg_printf("FAIL PCIOCRD: errno %d\n", vpmu_dev_errno()), nall++;
	return (st);
}

/*
 * Counters a and b get functions fa and fb afresh (a function is set only
 * when it changes, so 0 first: the counter restarts at 0), spin(n), read.
 */
static __attribute__((noinline)) void
measure(int fd, unsigned a, unsigned fa, unsigned b, unsigned fb, uint64_t n, uint64_t v[2])
{
	struct pctrst st;

	(void)setfn(fd, a, 0);
	(void)setfn(fd, b, 0);
	(void)setfn(fd, a, fa);
	(void)setfn(fd, b, fb);
	spin(n);
	st = rd(fd);
	v[0] = st.pctr_hwc[a];
	v[1] = st.pctr_hwc[b];
}

static void
delta(int fd, unsigned a, unsigned fa, unsigned b, unsigned fb, uint64_t d[2])
{
	uint64_t x[2], y[2];

	measure(fd, a, fa, b, fb, N1, x);
	measure(fd, a, fa, b, fb, N2, y);
	d[0] = y[0] - x[0];
	d[1] = y[1] - x[1];
}

static int
raw_ioctl(int32_t fd, uint32_t cmd, void *data, uint32_t len)
{
	uint64_t buf[16];
	struct vpmu_pv_ioctl *io = (struct vpmu_pv_ioctl *)buf;

	io->fd = fd;
	io->cmd = cmd;
	memcpy(buf + 1, data, len);
	return (vpmu_pv_call(VPMU_PV_OP_PCTR_IOCTL, buf, 8 + len, NULL));
}

#define EVT(ev, um, flags, cm)	((unsigned)(ev) | (unsigned)(um) << 8 | (flags) | (unsigned)(cm) << 24)
#define UK	(PCTR_U | PCTR_K)

static volatile struct vpmu_fastpage fpage __attribute__((aligned(4096)));

/*
 * rdpmc() around spin(n): what the fast page shows the loop adding.  Not
 * inlined: both calls must run the same instructions around spin().  The
 * page is as fresh as the last exit (vpmu_fastpage(4)); on the exact
 * source in blocks that is where the last run ended, which depends on the
 * code before: a CLC before each read (no block holds a flag operation,
 * none runs through it) makes it the same in every call.
 */
static __attribute__((noinline)) uint64_t
rdpmc_span(unsigned ctr, uint64_t n)
{
	uint64_t a, b;

	__asm__ volatile("clc" ::: "cc");
	a = rdpmc(ctr);
	spin(n);
	__asm__ volatile("clc" ::: "cc");
	b = rdpmc(ctr);
	return (b - a);
}

int
main(unsigned cpu)
{
	struct pctrst st;
	const char *kind;
	unsigned num, fn, i, evbr;
	uint64_t d[2];
	int w, r, e;
	int64_t rv;

	(void)cpu;
	CHECK_EQ("PCIOCRD number", PCIOCRD, 0x40386301u);
	CHECK_EQ("PCIOCS0 number", PCIOCS0, 0x80046308u);
	CHECK_EQ("PCIOCS3 number", PCIOCS3, 0x8004630bu);
	CHECK_EQ("sizeof pctrst", sizeof(struct pctrst), 56);

	/* open: fflags, minor */
	{
		struct vpmu_pv_open o = { 0, 0 };

		CHECK_EQ("open fflags 0", vpmu_pv_call(VPMU_PV_OP_PCTR_OPEN, &o, sizeof(o), &rv),
		    VPMU_PV_EINVAL);
		o.fflags = 8;
		CHECK_EQ("open fflags 8", vpmu_pv_call(VPMU_PV_OP_PCTR_OPEN, &o, sizeof(o), &rv),
		    VPMU_PV_EINVAL);
	}
	CHECK_ERR("open minor 1", vpmu_pctr_open_minor(RO, 1), VPMU_PV_ENXIO);
	w = vpmu_pctr_open(RW);
	r = vpmu_pctr_open(RO);
	CHECK("opens", w >= 0 && r >= 0, "w %d r %d errno %d", w, r, vpmu_dev_errno());
	CHECK("two writers are fine", (e = vpmu_pctr_open(VPMU_PV_FWRITE)) >= 0 &&
	    vpmu_dev_close(e) == 0, "errno %d", vpmu_dev_errno());

	/* Which PMU the model has. */
	e = E(setfn(w, 0, 0));
	if (e == VPMU_PV_ENODEV) {
		kind = "none";
		num = 0;
	} else {
		e = E(setfn(w, 2, 0));
		kind = e == 0 ? "amd" : "intel";
		num = e == 0 ? 4 : 2;
	}

	st = rd(r);
	CHECK("PCIOCRD read-only: functions 0, counters 0",
	    st.pctr_fn[0] == 0 && st.pctr_fn[1] == 0 && st.pctr_fn[2] == 0 &&
	    st.pctr_fn[3] == 0 && st.pctr_hwc[0] == 0 && st.pctr_hwc[1] == 0 &&
	    st.pctr_hwc[2] == 0 && st.pctr_hwc[3] == 0, "fn %x %x hwc %lu %lu",
	    st.pctr_fn[0], st.pctr_fn[1], (unsigned long)st.pctr_hwc[0],
	    (unsigned long)st.pctr_hwc[1]);
	{
		struct pctrst st2 = rd(r);

		CHECK("PCIOCRD tsc moves on", st.pctr_tsc != 0 && st2.pctr_tsc > st.pctr_tsc,
		    "%lu then %lu", (unsigned long)st.pctr_tsc, (unsigned long)st2.pctr_tsc);
	}
	fn = 0;
	CHECK_ERR("unknown ioctl", vpmu_dev_ioctl(r, _VPMU_IOW('c', 12, 4), &fn), VPMU_PV_EINVAL);
	CHECK_ERR("perfmon's ioctl", vpmu_dev_ioctl(w, 0x80043502u, &fn), VPMU_PV_EINVAL);
	CHECK_EQ("unknown descriptor", raw_ioctl(0x7fffffff, PCIOCRD, &st, 56), VPMU_PV_EBADF);

	if (num == 0) {
		/* No PMU: ENODEV before anything else. */
		CHECK_ERR("none: PCIOCS0", setfn(w, 0, EVT(0xc0, 0, UK | PCTR_EN, 0)),
		    VPMU_PV_ENODEV);
		CHECK_ERR("none: PCIOCS3", setfn(w, 3, 0), VPMU_PV_ENODEV);
		CHECK_ERR("none: PCIOCS1 read-only", setfn(r, 1, 0x380000), VPMU_PV_ENODEV);
		goto done;
	}

	/* The driver's order: index, then FWRITE, then the reserved bits. */
	if (num == 2) {
		CHECK_ERR("PCIOCS2 on 2 counters", setfn(w, 2, 0), VPMU_PV_EINVAL);
		CHECK_ERR("PCIOCS3 read-only on 2 counters", setfn(r, 3, 0), VPMU_PV_EINVAL);
	}
	CHECK_ERR("PCIOCS0 read-only", setfn(r, 0, EVT(0xc0, 0, UK | PCTR_EN, 0)), VPMU_PV_EPERM);
	CHECK_ERR("PCIOCS1 read-only reserved", setfn(r, 1, 0x80000), VPMU_PV_EPERM);
	CHECK_ERR("PCIOCS0 bit 19", setfn(w, 0, EVT(0xc0, 0, UK | 0x80000, 0)), VPMU_PV_EINVAL);
	CHECK_ERR("PCIOCS0 bit 20", setfn(w, 0, EVT(0xc0, 0, UK | 0x100000, 0)), VPMU_PV_EINVAL);
	CHECK_ERR("PCIOCS1 bit 21", setfn(w, 1, EVT(0xc0, 0, UK | 0x200000, 0)), VPMU_PV_EINVAL);
	{
		uint64_t two[2] = { 0, 0 };

		CHECK_EQ("arglen long", raw_ioctl(1, PCIOCS0, two, 8), VPMU_PV_EINVAL);
	}

	/* A function reads back and its counter counts the loop exactly. */
	evbr = num == 2 ? 0xc4 : 0xc2;	/* Intel BR_INST_RETIRED, AMD retired branches */
	delta(w, 0, EVT(0xc0, 0, UK | PCTR_EN, 0), 1, EVT(evbr, 0, UK | PCTR_EN, 0), d);
	CHECK_EQ("instructions", d[0], DINSN);
	CHECK_EQ("branches", d[1], DBR);
	st = rd(r);
	CHECK_EQ("fn 0 reads back", st.pctr_fn[0], EVT(0xc0, 0, UK | PCTR_EN, 0));
	CHECK_EQ("fn 1 reads back", st.pctr_fn[1], EVT(evbr, 0, UK | PCTR_EN, 0));
	CHECK("read-only sees the counts", st.pctr_hwc[0] > DINSN && st.pctr_hwc[1] > DBR,
	    "%lu %lu", (unsigned long)st.pctr_hwc[0], (unsigned long)st.pctr_hwc[1]);
	/* The same function again is no change: the count goes on. */
	CHECK_ERR("same function", setfn(w, 0, EVT(0xc0, 0, UK | PCTR_EN, 0)), 0);
	CHECK("same function keeps the count", rd(r).pctr_hwc[0] > st.pctr_hwc[0], "reset");
	/* Without PCTR_EN, or without U and K, nothing counts; U only at CPL 0 neither. */
	delta(w, 0, EVT(0xc0, 0, UK, 0), 1, EVT(0xc0, 0, PCTR_EN, 0), d);
	CHECK_EQ("no PCTR_EN", d[0], 0);
	CHECK_EQ("neither U nor K", d[1], 0);
	delta(w, 0, EVT(0xc0, 0, PCTR_U | PCTR_EN, 0), 1, EVT(0xc0, 0, PCTR_K | PCTR_EN, 0), d);
	CHECK_EQ("U only at CPL 0", d[0], 0);
	CHECK_EQ("K only", d[1], DINSN);
	/* Counter mask and invert carry into the event. */
	delta(w, 0, EVT(0xc0, 0, UK | PCTR_EN, 2), 1, EVT(0xc0, 0, UK | PCTR_EN | PCTR_I, 2), d);
	CHECK_EQ("cmask 2", d[0], 0);
	CHECK_EQ("cmask 2 inverted", d[1], DINSN);
	/* A function the source cannot count is accepted and counts nothing. */
	delta(w, 0, EVT(0x2e, 0x41, UK | PCTR_EN, 0), 1, EVT(0xc0, 0, UK | PCTR_EN, 0), d);
	CHECK_EQ("unmodelled event counts 0", d[0], 0);
	CHECK_EQ("beside it", d[1], DINSN);
	if (num == 4) {
		delta(w, 3, EVT(0xc0, 0, UK | PCTR_EN, 0), 2, EVT(0xc2, 0, UK | PCTR_EN, 0), d);
		CHECK_EQ("amd: counter 3 instructions", d[0], DINSN);
		CHECK_EQ("amd: counter 2 branches", d[1], DBR);
	}

	/*
	 * rdpmc() from the fast-read page: the process must be known and
	 * running on this vCPU (the page shows that vCPU's counters).
	 */
	{
		struct vpmu_pv_proc pc = { 1, 0, 0, VPMU_PV_CRED_PRIVILEGED };
		struct vpmu_pv_csw csw = { 1, 1 };
		uint64_t a, b;

		e = vpmu_pv_call(VPMU_PV_OP_PROC_CREATE, &pc, sizeof(pc), NULL);
		CHECK("PROC_CREATE 1", e == 0 || e == VPMU_PV_EEXIST, "errno %d", e);
		CHECK_EQ("CSW_IN 1", vpmu_pv_call(VPMU_PV_OP_CSW_IN, &csw, sizeof(csw), NULL), 0);
		CHECK_EQ("rdpmc before a page", rdpmc(0), 0);
		CHECK_ERR("map the page", vpmu_pctr_map(&fpage), 0);
		(void)setfn(w, 0, 0);
		(void)setfn(w, 1, 0);
		(void)setfn(w, 0, EVT(0xc0, 0, UK | PCTR_EN, 0));
		(void)setfn(w, 1, EVT(evbr, 0, UK | PCTR_EN, 0));
		a = rdpmc_span(0, N1);
		b = rdpmc_span(0, N2);
		CHECK_EQ("rdpmc instructions", b - a, DINSN);
		a = rdpmc_span(1, N1);
		b = rdpmc_span(1, N2);
		CHECK_EQ("rdpmc branches", b - a, DBR);
		st = rd(r);
		a = rdpmc(0);
		CHECK("rdpmc agrees with PCIOCRD", a > st.pctr_hwc[0] && a < st.pctr_hwc[0] + 2000,
		    "rdpmc %lu, PCIOCRD %lu", (unsigned long)a, (unsigned long)st.pctr_hwc[0]);
		if (num == 2)
			CHECK_EQ("rdpmc of a counter with no function", rdpmc(2), 0);
	}

	/* The functions stay set after close (the driver's close does nothing). */
	CHECK_ERR("close writer", vpmu_dev_close(w), 0);
	st = rd(r);
	CHECK_EQ("fn after close", st.pctr_fn[0], EVT(0xc0, 0, UK | PCTR_EN, 0));
	for (i = num; i < PCTR_NUM; i++)
		CHECK_EQ("fn past the counters", st.pctr_fn[i], 0);
done:
	CHECK_ERR("close reader", vpmu_dev_close(r), 0);
	CHECK_ERR("close again", vpmu_dev_close(r), VPMU_PV_EBADF);
	vg_printf("pctr: %s: %u of %u ok\n", kind, nok, nall);
	return ((int)(nall - nok));
}
