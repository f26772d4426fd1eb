/*
 * backends/perf.c -- the "perf" host counter source: perf_event_open(2) on
 * the vCPU's host thread.
 *
 * One counter is one perf event opened for one thread (cpu = -1), disabled
 * at open and read with TOTAL_TIME_ENABLED | TOTAL_TIME_RUNNING, so one
 * read(2) fills struct vpmu_count as it is.
 *
 * What is counted where:
 *   hardware (instructions, branches, cycles, ref-cycles, raw)
 *	count the guest only (exclude_host): the vCPU thread also runs the
 *	VMM, whose instructions are not the guest's.  USR/OS become
 *	exclude_user/exclude_kernel, which in guest mode filter on the
 *	guest's CPL.
 *   software (task-clock, cpu-clock, page-faults, context-switches,
 *	cpu-migrations) and the msr PMU's tsc
 *	count the thread, host and guest alike: they are host measures.
 *
 * Which events a host can count is learnt by trying: supports() opens the
 * event once on the calling thread and keeps the answer in the state.
 * The answers are the only state that changes after init(); they are
 * atomics, so vCPU threads may call any hook at once without a lock.
 *
 * What init() learns of the host it learns as the host probe does, from
 * the same code (host_internal.h): perf's sysfs (the core PMU, the msr
 * PMU's tsc event) from host_perf.c, the counters CPUID reports from
 * host_cpuid.c's decoders, and errno names from the core's one table.
 */
#include <sys/ioctl.h>
#include <sys/syscall.h>
#include <sys/types.h>

#include <linux/perf_event.h>

#if defined(__x86_64__) || defined(__i386__)
#include <cpuid.h>
#endif
#include <errno.h>
#include <stdarg.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <vpmu/source.h>

#include "arch.h"
#include "host_internal.h"

#define PERF_EVF_ALL	(VPMU_EVF_USR | VPMU_EVF_OS | VPMU_EVF_EDGE | VPMU_EVF_INV)
#define PERF_EVF_MODES	(VPMU_EVF_USR | VPMU_EVF_OS)

/*
 * Event-select bits, the same in Intel's IA32_PERFEVTSELx (SDM Vol. 3B,
 * 21.2.1.1 "Architectural Performance Monitoring Version 1 Facilities")
 * and AMD's PerfEvtSeln (APM Vol. 2, 13.2.1 "Performance Counter
 * Registers").  USR, OS, INT and EN are the kernel's to set.
 */
#define SEL_EDGE	(1ull << 18)
#define SEL_INV		(1ull << 23)
#define SEL_CMASK_SHIFT	24
#define SEL_CMASK_MAX	0xffu

/*
 * Counters that can sample are opened as sampling events at this period,
 * so that set_period() can change it later (the kernel refuses
 * PERF_EVENT_IOC_PERIOD on a counting event).  2^62 events, or 2^62 ns
 * for the clocks (146 years), is never reached; bit 63 the kernel refuses.
 */
#define PERF_PERIOD_NEVER	(1ull << 62)

enum perf_kind {
	PK_HW,			/* PERF_TYPE_HARDWARE, generic event */
	PK_SW,			/* PERF_TYPE_SOFTWARE */
	PK_MSR,			/* the msr PMU, type from sysfs */
	PK_RAW,			/* PERF_TYPE_RAW, spec->raw */
};

/* What the kernel lets us ask of an event (perf_evmap.caps). */
#define PC_MODES	0x01	/* exclude_user/exclude_kernel split the count */
#define PC_QUAL		0x02	/* EDGE, INV and cmask (hardware selects) */
#define PC_SAMPLE	0x04	/* may be a sampling event */
#define PC_GUEST	0x08	/* count the guest only (exclude_host) */
#define PC_NOEXCL	0x10	/* the PMU refuses every exclude_* bit */
#define PC_TIME		0x20	/* counts thread time; exclude_* are ignored */

/* Host CPU vendors, as enum vpmu_vendor names them (for arch.h's selects). */
enum perf_vendor {
	PV_OTHER = VPMU_VENDOR_NONE,
	PV_INTEL = VPMU_VENDOR_INTEL,
	PV_AMD = VPMU_VENDOR_AMD,	/* and Hygon */
};

/*
 * How one libvpmu event becomes a perf_event_attr.  A hardware event
 * (PK_HW) is an architectural one: arch.h's row gives its generic event
 * (perf_hw_config[], below) and, for folding EDGE, INV and cmask into a
 * raw event (a generic hardware event has no room for them), the host
 * vendor's event select.
 */
struct perf_evmap {
	uint32_t	 event;		/* enum vpmu_event */
	uint8_t		 kind;		/* enum perf_kind */
	uint8_t		 caps;		/* PC_* */
	uint64_t	 config;	/* PERF_COUNT_SW_*; PK_HW: arch.h's */
	const char	*what;		/* for messages */
};

#define HWCAPS	(PC_MODES | PC_QUAL | PC_SAMPLE | PC_GUEST)
#define SWCAPS	(PC_MODES | PC_SAMPLE)

static const struct perf_evmap perf_evmap[] = {
	{ VPMU_EV_INSTRUCTIONS, PK_HW, HWCAPS, 0, "hardware instructions" },
	{ VPMU_EV_BRANCHES, PK_HW, HWCAPS, 0, "hardware branches" },
	{ VPMU_EV_CYCLES, PK_HW, HWCAPS, 0, "hardware cycles" },
	{ VPMU_EV_REF_CYCLES, PK_HW, HWCAPS, 0, "hardware ref-cycles" },
	{ VPMU_EV_TSC, PK_MSR, PC_NOEXCL, 0, "msr tsc" },
	{ VPMU_EV_TASK_CLOCK, PK_SW, PC_SAMPLE | PC_TIME,
	    PERF_COUNT_SW_TASK_CLOCK, "software task-clock" },
	{ VPMU_EV_CPU_CLOCK, PK_SW, PC_SAMPLE | PC_TIME,
	    PERF_COUNT_SW_CPU_CLOCK, "software cpu-clock" },
	{ VPMU_EV_PAGE_FAULTS, PK_SW, SWCAPS,
	    PERF_COUNT_SW_PAGE_FAULTS, "software page-faults" },
	{ VPMU_EV_CONTEXT_SWITCHES, PK_SW, SWCAPS,
	    PERF_COUNT_SW_CONTEXT_SWITCHES, "software context-switches" },
	{ VPMU_EV_CPU_MIGRATIONS, PK_SW, SWCAPS,
	    PERF_COUNT_SW_CPU_MIGRATIONS, "software cpu-migrations" },
	{ VPMU_EV_RAW, PK_RAW, HWCAPS, 0, "raw" },
};

/* The generic hardware event of each architectural event (arch.h's perf column). */
static const uint64_t perf_hw_config[VPMU__NARCH] = {
#define PERF_HW(id, ev, intel, ebx, fixed, amd, perf, ipc)	\
	[VPMU__ARCH_##id] = PERF_COUNT_##perf,
	VPMU__ARCH_EVENTS(PERF_HW)
#undef PERF_HW
};
#define PERF_NEVMAP	(sizeof(perf_evmap) / sizeof(perf_evmap[0]))

/* Every event <vpmu/source.h> names has a row. */
#define PERF_ONE(n, v, s)	+ 1
_Static_assert(PERF_NEVMAP == 0 VPMU_EVENTS(PERF_ONE),
    "perf_evmap[] must map every VPMU_EVENTS entry");
#undef PERF_ONE

/*
 * supports() answers, per table row and privilege mode (flags & 3, with 0
 * stored as 3): PROBE_UNKNOWN, PROBE_YES, or the errno the probe got.
 */
#define PROBE_UNKNOWN	0
#define PROBE_YES	(-1)

struct perf_state {
	unsigned	 nvcpus;
	int		 vendor;	/* enum perf_vendor */
	bool		 hwpmu;		/* the kernel has a core PMU ("cpu") */
	unsigned	 capacity;	/* its counters; 0 without one */
	int32_t		 msr_type;	/* the msr PMU's perf type; -1: absent */
	uint64_t	 tsc_config;	/* its tsc event */
	char		 msr_why[160];	/* why msr_type is -1 */
	atomic_int	 probe[PERF_NEVMAP][4];
	atomic_bool	 raw_enoent;	/* no PMU takes PERF_TYPE_RAW */
};

struct perf_ctr {
	int		 fd;
	bool		 sampling;	/* opened with a sample period */
};

/* ---- messages -------------------------------------------------------- */

static void perf_why(char *, size_t, const char *, ...)
    __attribute__((format(printf, 3, 4)));

static void
perf_why(char *why, size_t whylen, const char *fmt, ...)
{
	va_list ap;

	if (why == NULL || whylen == 0)
		return;
	va_start(ap, fmt);
	vsnprintf(why, whylen, fmt, ap);
	va_end(ap);
}

/* What perf_event_open(2)'s errors mean for one of our events. */
static const char *
perf_hint(const struct perf_state *st, const struct perf_evmap *map, int err)
{
	bool hw = map->kind == PK_HW || map->kind == PK_RAW;

	switch (err) {
	case ENOENT:
		/* No PMU claimed the type, or the PMU has no such event. */
		if (hw && !st->hwpmu)
			return ("no hardware PMU on this host");
		return (hw ? "this host's PMU has no such event" :
		    "the kernel has no such event");
	case EOPNOTSUPP:
		return ("the PMU cannot count it this way");
	case EINVAL:
		return ("the kernel refused the event's configuration");
	case EACCES:
	case EPERM:
		/* The kernel checks privilege before it looks for a PMU. */
		if (hw && !st->hwpmu)
			return ("not permitted: see /proc/sys/kernel/"
			    "perf_event_paranoid; nor has this host a hardware PMU");
		return ("not permitted: see /proc/sys/kernel/perf_event_paranoid");
	case ENODEV:
		return ("the PMU does not support this feature");
	case EMFILE:
	case ENFILE:
		return ("out of file descriptors");
	case EBUSY:
		return ("the counters are in exclusive use elsewhere");
	case ENOSYS:
		return ("the kernel has no perf_event_open");
	default:
		return ("unexpected");
	}
}

/* ---- host discovery (init only) -------------------------------------- */

#if defined(__x86_64__) || defined(__i386__)
static int
perf_vendor(void)
{
	unsigned a, b, c, d;
	char v[13];

	if (!__get_cpuid(0, &a, &b, &c, &d))
		return (PV_OTHER);
	memcpy(v, &b, 4);
	memcpy(v + 4, &d, 4);
	memcpy(v + 8, &c, 4);
	v[12] = '\0';
	if (strcmp(v, "GenuineIntel") == 0)
		return (PV_INTEL);
	if (strcmp(v, "AuthenticAMD") == 0 || strcmp(v, "HygonGenuine") == 0)
		return (PV_AMD);
	return (PV_OTHER);
}

/*
 * General-purpose plus fixed counters one thread can use at once, as the
 * host probe's decoders (host_cpuid.c) read CPUID.
 */
static unsigned
perf_hw_counters(int vendor)
{
	struct vpmu_host_intel_pmu intel;
	struct vpmu_host_amd_pmu amd;
	uint32_t r[4], leaf22[4] = { 0 }, ecx1 = 0, max;

	switch (vendor) {
	case PV_INTEL:
		if (!__get_cpuid_count(0xa, 0, &r[0], &r[1], &r[2], &r[3]))
			return (0);
		vpmu__intel_pmu_decode(r, &intel);
		return (intel.gp_count + intel.fixed_count);
	case PV_AMD:
		max = __get_cpuid_max(0x80000000, NULL);
		if (max >= 0x80000001 &&
		    __get_cpuid(0x80000001, &r[0], &r[1], &r[2], &r[3]))
			ecx1 = r[2];
		if (max >= 0x80000022)
			__get_cpuid_count(0x80000022, 0, &leaf22[0], &leaf22[1],
			    &leaf22[2], &leaf22[3]);
		vpmu__amd_pmu_decode(max, ecx1, leaf22, &amd);
		return (amd.gp_count);
	default:
		return (0);
	}
}
#else
static int
perf_vendor(void)
{
	return (PV_OTHER);
}

static unsigned
perf_hw_counters(int vendor)
{
	(void)vendor;
	return (0);
}
#endif

/* ---- events to perf_event_attr -------------------------------------- */

static const struct perf_evmap *
perf_map(uint32_t event)
{
	size_t i;

	for (i = 0; i < PERF_NEVMAP; i++)
		if (perf_evmap[i].event == event)
			return (&perf_evmap[i]);
	return (NULL);
}

/*
 * Build the attr for ev.  0, or EOPNOTSUPP with the reason in why: the
 * checks here need no syscall, so supports() and open() agree on them.
 */
static int
perf_attr(const struct perf_state *st, const struct vpmu_event_spec *ev,
    const struct perf_evmap **mapp, struct perf_event_attr *attr,
    char *why, size_t whylen)
{
	const struct perf_evmap *map;
	uint32_t modes;
	const struct vpmu__arch_event *arch;
	uint64_t qual, sel;

	map = perf_map(ev->event);
	if (map == NULL) {
		perf_why(why, whylen, "unknown event 0x%x", ev->event);
		return (EOPNOTSUPP);
	}
	*mapp = map;
	if (ev->flags & ~PERF_EVF_ALL) {
		perf_why(why, whylen, "%s: unknown flags 0x%x", map->what,
		    ev->flags & ~PERF_EVF_ALL);
		return (EOPNOTSUPP);
	}
	qual = 0;
	if (ev->flags & VPMU_EVF_EDGE)
		qual |= SEL_EDGE;
	if (ev->flags & VPMU_EVF_INV)
		qual |= SEL_INV;
	if (ev->cmask > SEL_CMASK_MAX) {
		perf_why(why, whylen, "%s: cmask %u exceeds 8 bits", map->what,
		    ev->cmask);
		return (EOPNOTSUPP);
	}
	qual |= (uint64_t)ev->cmask << SEL_CMASK_SHIFT;
	if (qual != 0 && !(map->caps & PC_QUAL)) {
		perf_why(why, whylen, "%s: EDGE, INV and cmask apply to "
		    "hardware events only", map->what);
		return (EOPNOTSUPP);
	}
	modes = ev->flags & PERF_EVF_MODES;
	if (modes == 0)
		modes = PERF_EVF_MODES;
	if (modes != PERF_EVF_MODES && !(map->caps & PC_MODES)) {
		perf_why(why, whylen, "%s counts at every privilege level: "
		    "USR or OS alone is not possible", map->what);
		return (EOPNOTSUPP);
	}

	memset(attr, 0, sizeof(*attr));
	attr->size = sizeof(*attr);
	attr->disabled = 1;
	attr->read_format = PERF_FORMAT_TOTAL_TIME_ENABLED |
	    PERF_FORMAT_TOTAL_TIME_RUNNING;
	switch (map->kind) {
	case PK_HW:
		arch = vpmu__arch_of_event(map->event);
		VPMU_ASSERT(arch != NULL);
		if (qual == 0) {
			attr->type = PERF_TYPE_HARDWARE;
			attr->config = perf_hw_config[arch - vpmu__arch_events];
			break;
		}
		sel = vpmu__arch_sel(arch, (uint32_t)st->vendor);
		if (sel == 0) {
			perf_why(why, whylen, "%s: no event select of this "
			    "CPU vendor to carry EDGE, INV or cmask", map->what);
			return (EOPNOTSUPP);
		}
		attr->type = PERF_TYPE_RAW;
		attr->config = sel | qual;
		break;
	case PK_SW:
		attr->type = PERF_TYPE_SOFTWARE;
		attr->config = map->config;
		break;
	case PK_MSR:
		if (st->msr_type < 0) {
			perf_why(why, whylen, "%s", st->msr_why);
			return (EOPNOTSUPP);
		}
		attr->type = (uint32_t)st->msr_type;
		attr->config = st->tsc_config;
		break;
	case PK_RAW:
		attr->type = PERF_TYPE_RAW;
		attr->config = ev->raw | qual;
		break;
	}
	if (!(map->caps & PC_NOEXCL))
		attr->exclude_hv = 1;
	if (map->caps & PC_GUEST)
		attr->exclude_host = 1;
	if (map->caps & PC_MODES) {
		attr->exclude_user = !(modes & VPMU_EVF_USR);
		attr->exclude_kernel = !(modes & VPMU_EVF_OS);
	}
	/*
	 * The clocks count thread time whatever exclude_* say, so say
	 * exclude_kernel: the count is the same, and the open needs no
	 * kernel-profiling privilege (perf_event_paranoid >= 2).
	 */
	if (map->caps & PC_TIME)
		attr->exclude_kernel = 1;
	if (map->caps & PC_SAMPLE)
		attr->sample_period = PERF_PERIOD_NEVER;
	return (0);
}

/* The attr's label in messages. */
static const char *
perf_label(const struct perf_evmap *map, const struct perf_event_attr *attr,
    char *buf, size_t len)
{
	if (attr->type == PERF_TYPE_RAW) {
		snprintf(buf, len, "%s 0x%llx", map->kind == PK_RAW ? "raw" :
		    map->what, (unsigned long long)attr->config);
		return (buf);
	}
	return (map->what);
}

/*
 * perf_event_open(2); the fd or -errno.  A PMU without an overflow
 * interrupt refuses sampling events but can still count: retry as a
 * counting event then.
 */
static int
perf_open_fd(struct perf_event_attr *attr, pid_t tid, bool *sampling)
{
	long fd;

	fd = syscall(SYS_perf_event_open, attr, tid, -1, -1,
	    PERF_FLAG_FD_CLOEXEC);
	if (fd < 0 && errno == EOPNOTSUPP && attr->sample_period != 0) {
		attr->sample_period = 0;
		fd = syscall(SYS_perf_event_open, attr, tid, -1, -1,
		    PERF_FLAG_FD_CLOEXEC);
	}
	if (fd < 0)
		return (-errno);
	*sampling = attr->sample_period != 0;
	return ((int)fd);
}

/* Answers about the host, not about the moment: worth keeping. */
static bool
perf_lasting(int err)
{
	switch (err) {
	case ENOENT:
	case EOPNOTSUPP:
	case EINVAL:
	case EACCES:
	case EPERM:
	case ENODEV:
	case ENOSYS:
	case E2BIG:
		return (true);
	default:
		return (false);
	}
}

static atomic_int *
perf_slot(struct perf_state *st, const struct perf_evmap *map,
    const struct vpmu_event_spec *ev)
{
	unsigned modes = ev->flags & PERF_EVF_MODES;

	return (&st->probe[map - perf_evmap][modes != 0 ? modes : 3]);
}

/*
 * The remembered answer for attr, PROBE_UNKNOWN if none.  Raw configs are
 * too many to remember; only "no PMU takes raw events" is kept for them.
 */
static int
perf_cached(struct perf_state *st, const struct perf_evmap *map,
    const struct vpmu_event_spec *ev, const struct perf_event_attr *attr)
{
	if (attr->type == PERF_TYPE_RAW)
		return (atomic_load_explicit(&st->raw_enoent,
		    memory_order_relaxed) ? ENOENT : PROBE_UNKNOWN);
	return (atomic_load_explicit(perf_slot(st, map, ev),
	    memory_order_relaxed));
}

static void
perf_remember(struct perf_state *st, const struct perf_evmap *map,
    const struct vpmu_event_spec *ev, const struct perf_event_attr *attr,
    int answer)
{
	if (answer != PROBE_YES && !perf_lasting(answer))
		return;
	if (attr->type == PERF_TYPE_RAW) {
		if (answer == ENOENT)
			atomic_store_explicit(&st->raw_enoent, true,
			    memory_order_relaxed);
		return;
	}
	atomic_store_explicit(perf_slot(st, map, ev), answer,
	    memory_order_relaxed);
}

/*
 * open()'s error for a perf_event_open(2) errno.  Our own checks passed,
 * so ENOENT and EINVAL are the kernel's "cannot count that", as
 * EOPNOTSUPP is; the rest (EACCES, ESRCH, EMFILE...) say what they say.
 */
static int
perf_open_err(int err)
{
	if (err == ENOENT || err == EINVAL || err == EOPNOTSUPP)
		return (EOPNOTSUPP);
	return (err);
}

/* ---- hooks ---------------------------------------------------------- */

static int
perf_init(void **statep, unsigned nvcpus, void *arg)
{
	struct perf_state *st;

	/* arg is reserved: refusing it now lets it gain a meaning later. */
	if (statep == NULL || nvcpus == 0 || arg != NULL)
		return (EINVAL);
	st = calloc(1, sizeof(*st));
	if (st == NULL)
		return (ENOMEM);
	st->nvcpus = nvcpus;
	st->vendor = perf_vendor();
	st->hwpmu = vpmu__perf_core_pmu() != NULL;
	st->capacity = st->hwpmu ? perf_hw_counters(st->vendor) : 0;
	if (vpmu__perf_msr_tsc(&st->msr_type, &st->tsc_config, st->msr_why,
	    sizeof(st->msr_why)) != VPMU_PERF_MSR_OK)
		st->msr_type = -1;
	*statep = st;
	return (0);
}

static void
perf_fini(void *state)
{
	free(state);
}

/*
 * Hardware counters are few; beyond them the kernel multiplexes and
 * time_running falls behind time_enabled.  Software events and msr/tsc
 * have no such limit: without a hardware PMU, 0 (unlimited).  One
 * counter may be taken by the NMI watchdog (kernel.nmi_watchdog).
 */
static unsigned
perf_capacity(void *state)
{
	const struct perf_state *st = state;

	return (st != NULL ? st->capacity : 0);
}

static int
perf_supports(void *state, const struct vpmu_event_spec *ev, char *why,
    size_t whylen)
{
	struct perf_state *st = state;
	const struct perf_evmap *map;
	struct perf_event_attr attr;
	char ebuf[VPMU_ERRNAME_MAX], lbuf[64];
	bool sampling;
	int answer, err, fd;

	if (st == NULL || ev == NULL) {
		perf_why(why, whylen, "no %s", st == NULL ? "state" : "event");
		return (EINVAL);
	}
	err = perf_attr(st, ev, &map, &attr, why, whylen);
	if (err != 0)
		return (err);
	answer = perf_cached(st, map, ev, &attr);
	if (answer == PROBE_UNKNOWN) {
		fd = perf_open_fd(&attr, 0, &sampling);
		if (fd >= 0) {
			close(fd);
			answer = PROBE_YES;
		} else
			answer = -fd;
		perf_remember(st, map, ev, &attr, answer);
	}
	if (answer == PROBE_YES) {
		perf_why(why, whylen, "ok");
		return (0);
	}
	perf_why(why, whylen, "perf_event_open(%s) failed: %s (%s)",
	    perf_label(map, &attr, lbuf, sizeof(lbuf)),
	    vpmu__errname(answer, ebuf, sizeof(ebuf)), perf_hint(st, map, answer));
	/* A passing shortage says nothing about the event: report it. */
	return (perf_lasting(answer) ? EOPNOTSUPP : answer);
}

static int
perf_open(void *state, unsigned vcpu, pid_t tid,
    const struct vpmu_event_spec *ev, void **ctrp)
{
	struct perf_state *st = state;
	const struct perf_evmap *map;
	struct perf_event_attr attr;
	struct perf_ctr *ctr;
	int answer, err, fd;

	if (st == NULL || ev == NULL || ctrp == NULL || vcpu >= st->nvcpus ||
	    tid < 0)
		return (EINVAL);
	err = perf_attr(st, ev, &map, &attr, NULL, 0);
	if (err != 0)
		return (err);
	/* A refusal supports() has kept fails the same way, without a syscall. */
	answer = perf_cached(st, map, ev, &attr);
	if (answer != PROBE_UNKNOWN && answer != PROBE_YES)
		return (perf_open_err(answer));
	ctr = malloc(sizeof(*ctr));
	if (ctr == NULL)
		return (ENOMEM);
	fd = perf_open_fd(&attr, tid, &ctr->sampling);
	if (fd < 0) {
		free(ctr);
		return (perf_open_err(-fd));
	}
	ctr->fd = fd;
	*ctrp = ctr;
	return (0);
}

static void
perf_close(void *state, void *ctr)
{
	struct perf_ctr *c = ctr;

	(void)state;
	if (c == NULL)
		return;
	close(c->fd);
	free(c);
}

static int
perf_ioctl(void *state, void *ctr, unsigned long req, void *arg)
{
	struct perf_ctr *c = ctr;

	if (state == NULL || c == NULL)
		return (EINVAL);
	if (ioctl(c->fd, req, arg) < 0)
		return (errno);
	return (0);
}

static int
perf_enable(void *state, void *ctr)
{
	return (perf_ioctl(state, ctr, PERF_EVENT_IOC_ENABLE, NULL));
}

static int
perf_disable(void *state, void *ctr)
{
	return (perf_ioctl(state, ctr, PERF_EVENT_IOC_DISABLE, NULL));
}

static int
perf_read(void *state, void *ctr, struct vpmu_count *out)
{
	struct perf_ctr *c = ctr;
	uint64_t buf[3];	/* value, time_enabled, time_running */
	ssize_t n;

	if (state == NULL || c == NULL || out == NULL)
		return (EINVAL);
	do
		n = read(c->fd, buf, sizeof(buf));
	while (n < 0 && errno == EINTR);
	if (n < 0)
		return (errno);
	/* 0 bytes: a pinned event in error state; never ours, still no count. */
	if ((size_t)n != sizeof(buf))
		return (EIO);
	out->value = buf[0];
	out->time_enabled = buf[1];
	out->time_running = buf[2];
	return (0);
}

/*
 * The period takes effect at once.  Overflows are not delivered to the
 * core yet: the ops have no hook for them.
 */
static int
perf_set_period(void *state, void *ctr, uint64_t period)
{
	struct perf_ctr *c = ctr;

	if (state == NULL || c == NULL || period == 0 || period >> 63 != 0)
		return (EINVAL);
	if (!c->sampling)
		return (EOPNOTSUPP);
	return (perf_ioctl(state, ctr, PERF_EVENT_IOC_PERIOD, &period));
}

const struct vpmu_source_ops vpmu_source_perf = {
	.name		= "perf",

	.init		= perf_init,
	.fini		= perf_fini,

	.capacity	= perf_capacity,
	.supports	= perf_supports,

	.open		= perf_open,
	.close		= perf_close,
	.enable		= perf_enable,
	.disable	= perf_disable,
	.read		= perf_read,

	.set_period	= perf_set_period,
};
