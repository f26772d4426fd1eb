/*
 * fastpage_spin.c -- the refresh thread, seen from a guest that spins without
 * exits (vpmu-run --source perf: a "tsc" PMC, perf's msr/tsc event, counts
 * while the vCPU runs, so the value moves with no exit at all), and the
 * figures test/bench/pv.sh reports.
 *
 * The check line (ctest) holds only what no load on the host can change:
 * during the spin hdr.exit_updates does not move (no exit), hdr.updates,
 * the slot's seq (the thread writes through the sequence lock) and its
 * value do, every read succeeds, the value never goes back, and the
 * thread never refreshes faster than hdr.hz: it updates a page only a
 * whole period after the page's last update, so between two updates the
 * guest saw, u apart, the page's host_ns moved by at least (u - 1)
 * periods (not u: host_ns is stored before updates, and a read may pair
 * an update with the next one's host_ns).  How late the thread comes is
 * the host scheduler's business: the gaps are figures, printed, not
 * checked (a busy host stretched them past 20 ms, and a vCPU that is not
 * running sees no update at all).  The spin ends after SPIN_UPDATES
 * updates, or after SPIN_TICKS of the guest's TSC (a thread that never
 * refreshes): far more than any load stretches 0.2 s to.
 *
 * The figures: guest TSC ticks are turned into ns with the page's own
 * host_ns (CLOCK_MONOTONIC at each update) over the spin.
 *   - ns per vpmu_fast_read(), over every read of the spin;
 *   - the refresh period (host_ns over the updates made, seen or not) and
 *     the largest gap between two updates the guest saw one after the
 *     other; a value's age is at most the gap plus the time to notice it;
 *   - round trips measured with RDTSC, 200 each, with no page registered
 *     (the exit hook's one-load fast path) and with one: a channel NULL
 *     request, a GETMODULEVERSION, a null port exit (IN32 from
 *     VPMU_PV_PORT_HI: libvpmu's probe, which does nothing), a trapped
 *     RDMSR of IA32_PMC0 (model intel-v2).
 */
#include <vpmu-guest/runtime.h>
#include <vpmu-guest/pv.h>
#include <vpmu-guest/pmc.h>
#include <vpmu-guest/fastpage.h>

#define RT_N		200
#define SPIN_UPDATES	200
/* 10 s at a 10 GHz TSC, longer at any slower one (0.2 s at 1000 Hz is the need). */
#define SPIN_TICKS	100000000000ull

static struct vpmu_fastpage pg __attribute__((aligned(4096)));

struct rt {
	uint64_t null, modver, port, rdmsr;	/* ticks per round trip */
};

static uint64_t
ticks_null(void)
{
	uint64_t t = vg_rdtsc();
	int i;

	for (i = 0; i < RT_N; i++)
		(void)vpmu_pv_call(VPMU_PV_OP_NULL, NULL, 0, NULL);
	return ((vg_rdtsc() - t) / RT_N);
}

static uint64_t
ticks_modver(void)
{
	uint64_t t = vg_rdtsc();
	uint32_t v;
	int i;

	for (i = 0; i < RT_N; i++) {
		v = 0x07000000;
		(void)vpmu_pv_call(VPMU_PV_OP_GETMODULEVERSION, &v, sizeof(v), NULL);
	}
	return ((vg_rdtsc() - t) / RT_N);
}

static uint64_t
ticks_port(void)
{
	uint64_t t = vg_rdtsc();
	int i;

	for (i = 0; i < RT_N; i++)
		(void)vg_inl(VPMU_PV_PORT_HI);
	return ((vg_rdtsc() - t) / RT_N);
}

static uint64_t
ticks_rdmsr(void)
{
	uint64_t t = vg_rdtsc(), v;
	int i;

	for (i = 0; i < RT_N; i++)
		(void)vg_rdmsr_safe(0xc1, &v);
	return ((vg_rdtsc() - t) / RT_N);
}

static void
round_trips(struct rt *r)
{
	r->null = ticks_null();
	r->modver = ticks_modver();
	r->port = ticks_port();
	r->rdmsr = ticks_rdmsr();
}

/* x ticks in ns, at tpn1000 ticks per 1000 ns. */
static uint64_t
ns(uint64_t x, uint64_t tpn1000)
{
	return (tpn1000 == 0 ? 0 : x * 1000 / tpn1000);
}

static void
print_rt(const char *what, const struct rt *r, uint64_t tpk)
{
	vg_printf("pv bench %s: NULL %lu ns, GETMODULEVERSION %lu ns, null port exit %lu ns, "
	    "trapped RDMSR %lu ns; NULL/port x%lu.%02lu\n", what,
	    (unsigned long)ns(r->null, tpk), (unsigned long)ns(r->modver, tpk),
	    (unsigned long)ns(r->port, tpk), (unsigned long)ns(r->rdmsr, tpk),
	    (unsigned long)(r->null / r->port),
	    (unsigned long)(r->null * 100 / r->port % 100));
}

int
main(unsigned cpu)
{
	struct rt before, after;
	uint64_t v, v0 = 0, vprev = 0, u, ufirst = 0, ulast, e0, e1, seq0, seq1;
	uint64_t h, hlast = 0, h0 = 0, hz, period, slack;
	uint64_t t, tfirst = 0, tlast = 0, gap, maxgap = 0, missed;
	uint64_t tread0, tread1, reads = 0, errors = 0, back = 0, nupd = 0, early = 0, tpk;
	uint32_t slot = 0;
	pmc_id_t id;
	unsigned long i;
	int bad = 0;

	(void)cpu;
	if (vpmu_hook_proc_create(1, 0, 0, VPMU_PV_CRED_PRIVILEGED) != 0 ||
	    vpmu_hook_csw_in(1, 1) != 0 ||
	    pmc_allocate("tsc", PMC_MODE_TC, 0, PMC_CPU_ANY, &id, 0) != 0 ||
	    pmc_attach(id, 0) != 0 || pmc_start(id) != 0) {
		vg_printf("fastpage spin: set-up failed: %s\n", pmc_errname(pmc_errno()));
		return (1);
	}
	round_trips(&before);
	if (vpmu_fast_set(&pg) != 0 || pmc_get_msr(id, &slot) != 0) {
		vg_printf("fastpage spin: SET/GETMSR failed\n");
		return (1);
	}

	/* The spin: loads only, no exit (the TSC looked at every 1024 reads). */
	e0 = __atomic_load_n(&pg.hdr.exit_updates, __ATOMIC_ACQUIRE);
	seq0 = __atomic_load_n(&pg.slot[slot].seq, __ATOMIC_ACQUIRE);
	ulast = __atomic_load_n(&pg.hdr.updates, __ATOMIC_ACQUIRE);
	tread0 = vg_rdtsc();
	while (nupd < SPIN_UPDATES &&
	    ((reads & 1023) != 0 || vg_rdtsc() - tread0 < SPIN_TICKS)) {
		if (vpmu_fast_read(&pg, slot, &v, NULL) != 0)
			errors++;
		else {
			if (reads != 0 && v < vprev)
				back++;
			if (reads == 0)
				v0 = v;
			vprev = v;
		}
		reads++;
		u = __atomic_load_n(&pg.hdr.updates, __ATOMIC_ACQUIRE);
		if (u == ulast)
			continue;
		t = vg_rdtsc();
		/*
		 * host_ns with updates unchanged around it: update u's, or the
		 * next one's, stored before its updates (x86 orders the stores
		 * and the loads).  Another update between: look again.
		 */
		h = __atomic_load_n(&pg.hdr.host_ns, __ATOMIC_ACQUIRE);
		if (__atomic_load_n(&pg.hdr.updates, __ATOMIC_ACQUIRE) != u)
			continue;
		if (nupd++ == 0) {
			tfirst = t;
			h0 = h;
			ufirst = u;
		} else if (u == ulast + 1 && (gap = h - hlast) > maxgap)
			maxgap = gap;		/* two updates in a row */
		tlast = t;
		hlast = h;
		ulast = u;
	}
	tread1 = vg_rdtsc();
	e1 = __atomic_load_n(&pg.hdr.exit_updates, __ATOMIC_ACQUIRE);
	seq1 = __atomic_load_n(&pg.slot[slot].seq, __ATOMIC_ACQUIRE);
	hz = __atomic_load_n(&pg.hdr.hz, __ATOMIC_RELAXED);

	/*
	 * No faster than hz: from the first update seen to the last, at most
	 * one more than the periods host_ns moved by.  "early" counts those
	 * over.
	 */
	period = hz != 0 ? 1000000000u / hz : 0;
	if (nupd > 1 && period != 0) {
		slack = (hlast - h0) / period + 1;
		if (ulast - ufirst > slack)
			early = ulast - ufirst - slack;
	}
	if (e1 != e0 || nupd < SPIN_UPDATES || vprev <= v0 || seq1 <= seq0 ||
	    errors != 0 || back != 0 || hz == 0 || early != 0)
		bad = 1;
	vg_printf("fastpage spin: %s: exits %lu, updates %s, value %s, seq %s, "
	    "read errors %lu, value back %lu, updates early %lu\n", bad ? "FAIL" : "ok",
	    (unsigned long)(e1 - e0), nupd >= SPIN_UPDATES ? "rose" : "stuck",
	    vprev > v0 ? "rose" : "stuck", seq1 > seq0 ? "rose" : "stuck",
	    (unsigned long)errors, (unsigned long)back, (unsigned long)early);

	/* Figures: ticks per microsecond from the page's host clock. */
	tpk = hlast > h0 ? (tlast - tfirst) * 1000 / ((hlast - h0) / 1000) / 1000 : 0;
	vg_printf("fastpage bench: %lu reads in %lu ticks: %lu.%03lu ticks/read, "
	    "%lu ns/read (TSC %lu.%03lu GHz)\n", (unsigned long)reads,
	    (unsigned long)(tread1 - tread0),
	    (unsigned long)((tread1 - tread0) / reads),
	    (unsigned long)((tread1 - tread0) * 1000 / reads % 1000),
	    (unsigned long)ns((tread1 - tread0) / reads, tpk),
	    (unsigned long)(tpk / 1000), (unsigned long)(tpk % 1000));
	/* The period over every update made; the gap over two seen in a row. */
	missed = nupd > 1 ? ulast - ufirst - (nupd - 1) : 0;
	vg_printf("fastpage bench: hz %lu, %lu updates seen (%lu not), gap mean %lu us, "
	    "max %lu us\n", (unsigned long)hz, (unsigned long)nupd, (unsigned long)missed,
	    (unsigned long)(nupd > 1 ? (hlast - h0) / (ulast - ufirst) / 1000 : 0),
	    (unsigned long)(maxgap / 1000));
	/* The guest's own speed: 3 instructions per LOOP iteration, no memory. */
	t = vg_rdtsc();
	i = 100000;
	__asm__ volatile("1: nop; nop; loop 1b" : "+c"(i));
	t = vg_rdtsc() - t;
	vg_printf("fastpage bench: guest speed %lu ns per instruction (nop/loop)\n",
	    (unsigned long)(ns(t, tpk) / 300000));
	round_trips(&after);
	print_rt("no page", &before, tpk);
	print_rt("with page", &after, tpk);
	/* vpmu_fast_value() (the inline read) alone, 1000 times. */
	t = vg_rdtsc();
	for (i = 0; i < 1000; i++)
		(void)vpmu_fast_value(&pg, slot, &v);
	t = (vg_rdtsc() - t) / 1000;
	vg_printf("fastpage bench: bare read %lu ns, trapped RDMSR %lu ns: RDMSR/read x%lu.%02lu\n",
	    (unsigned long)ns(t, tpk), (unsigned long)ns(after.rdmsr, tpk),
	    (unsigned long)(after.rdmsr / t), (unsigned long)(after.rdmsr * 100 / t % 100));
	return (bad);
}
