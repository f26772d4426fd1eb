/*
 * host.c -- vpmu_host: probe once, then judge each counter source.
 *
 * The probes (host_cpuid.c, kvm_probe.c, host_perf.c) record facts; this
 * file turns them into one verdict per source with a reason that names the
 * facts, so that "unavailable" always says which check failed and how.
 * It calls the probes and they call nothing here: the arrows run one way.
 * The verdicts are computed at open time: the host does not change under
 * a running VMM often enough to re-probe, and vpmu-info(1) prints the very
 * facts the verdicts came from.  The reports are in host_report.c.
 */
#include <errno.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>

#include "host_internal.h"

/* ---- reason strings ------------------------------------------------------ */

/* Appends to a fixed buffer; output past its end is cut, never overrun. */
struct sbuf {
	char	*buf;
	size_t	 len;
	size_t	 used;
};

static void sb_printf(struct sbuf *sb, const char *fmt, ...)
    __attribute__((format(printf, 2, 3)));

static void
sb_printf(struct sbuf *sb, const char *fmt, ...)
{
	va_list ap;
	int n;

	if (sb->used + 1 >= sb->len)
		return;
	va_start(ap, fmt);
	n = vsnprintf(sb->buf + sb->used, sb->len - sb->used, fmt, ap);
	va_end(ap);
	if (n > 0)
		sb->used += (size_t)n < sb->len - sb->used ? (size_t)n :
		    sb->len - sb->used - 1;
}

/* Whether CPUID itself says there are counters (AMD's legacy four aside). */
static int
cpuid_reports_pmu(const struct vpmu_host_info *hi)
{
	return (hi->intel.version > 0 || hi->amd.core_ext || hi->amd.perfmon_v2);
}

/* What CPUID says about the PMU, as one clause. */
static void
cpuid_pmu_fact(const struct vpmu_host_info *hi, struct sbuf *sb)
{
	const struct vpmu_host_cpu *cpu = &hi->cpu;

	if (!cpu->cpuid_ok)
		sb_printf(sb, "CPUID could not be read (%s)", cpu->cpuid_error);
	else if (vpmu__host_is_amd(cpu) && hi->amd.perfmon_v2)
		sb_printf(sb, "CPUID 0x80000022 reports PerfMonV2 with %u core "
		    "counters", hi->amd.num_core);
	else if (vpmu__host_is_amd(cpu) && hi->amd.core_ext)
		sb_printf(sb, "CPUID 0x80000001.ECX[23] reports PerfCtrExtCore");
	else if (vpmu__host_is_amd(cpu))
		sb_printf(sb, "CPUID reports neither PerfCtrExtCore "
		    "(0x80000001.ECX[23]) nor PerfMonV2 (0x80000022.EAX[0])");
	else if (cpu->max_leaf < 0xA)
		sb_printf(sb, "CPUID has no leaf 0xA (maximum basic leaf 0x%x)",
		    cpu->max_leaf);
	else if (hi->intel.version == 0)
		sb_printf(sb, "CPUID leaf 0xA reports version 0");
	else
		sb_printf(sb, "CPUID leaf 0xA reports version %u with %u "
		    "general-purpose counters", hi->intel.version,
		    hi->intel.gp_count);
}

/*
 * What a perf_event_open errno says about the event: ENODEV when the kernel
 * has no such event or no perf at all, EOPNOTSUPP when it has the event but
 * refuses this process (EACCES, EPERM from paranoid, capabilities or an
 * LSM) or fails for another reason.
 */
static int
perf_verdict(int e)
{
	switch (e) {
	case 0:
		return (0);
	case ENOENT:
	case ENODEV:
	case ENOSYS:
		return (ENODEV);
	default:
		return (EOPNOTSUPP);
	}
}

static void
perf_failure(const struct vpmu_host_info *hi, struct sbuf *sb,
    const char *event, int e)
{
	char buf[VPMU_ERRNAME_MAX];

	sb_printf(sb, "perf_event_open(%s) failed with %s", event,
	    vpmu__errname(e, buf, sizeof(buf)));
	if ((e == EACCES || e == EPERM) && hi->perf.paranoid_known)
		sb_printf(sb, " (perf_event_paranoid is %d)", hi->perf.paranoid);
	else if (e == ENOSYS)
		sb_printf(sb, " (the kernel has no perf_event support)");
}

/* Why /dev/kvm cannot be used, or 0 and nothing written. */
static int
kvm_problem(const struct vpmu_host_info *hi, struct sbuf *sb)
{
	const struct vpmu_host_kvm *kvm = &hi->kvm;
	char buf[VPMU_ERRNAME_MAX];

	if (!kvm->present) {
		sb_printf(sb, "/dev/kvm does not exist (kvm module not loaded, "
		    "or no hardware virtualization)");
		return (ENODEV);
	}
	if (!kvm->opened) {
		sb_printf(sb, "open(/dev/kvm) failed with %s",
		    vpmu__errname(kvm->open_errno, buf, sizeof(buf)));
		if (kvm->open_errno == EACCES || kvm->open_errno == EPERM)
			sb_printf(sb, " (read-write access is needed; often "
			    "through the kvm group)");
		return (EOPNOTSUPP);
	}
	if (kvm->api_version != 12) {
		sb_printf(sb, "KVM_GET_API_VERSION returned %d, not 12",
		    kvm->api_version);
		return (EOPNOTSUPP);
	}
	return (0);
}

/* ---- the verdicts, one judge per source ---------------------------------- */

static int
judge_synthetic(const struct vpmu_host_info *hi, struct sbuf *why)
{
	(void)hi;
	sb_printf(why, "scripted counts; needs nothing from the host");
	return (0);
}

static void
msr_tsc_fact(const struct vpmu_host_info *hi, struct sbuf *sb)
{
	const struct vpmu_host_perf *perf = &hi->perf;

	if (perf->msr_type < 0)
		sb_printf(sb, "no msr PMU (no /sys/bus/event_source/devices/msr)");
	else if (!perf->msr_tsc_event)
		sb_printf(sb, "the msr PMU lists no tsc event");
	else if (perf->msr_tsc_errno == 0)
		sb_printf(sb, "msr/tsc opens");
	else
		perf_failure(hi, sb, "msr/tsc", perf->msr_tsc_errno);
}

static int
judge_perf(const struct vpmu_host_info *hi, struct sbuf *why)
{
	int e = hi->perf.sw_task_clock_errno;

	if (e != 0) {
		perf_failure(hi, why, "PERF_COUNT_SW_TASK_CLOCK", e);
		return (perf_verdict(e));
	}
	/* Without msr/tsc the source still counts the software events. */
	sb_printf(why, "PERF_COUNT_SW_TASK_CLOCK opens; ");
	msr_tsc_fact(hi, why);
	return (0);
}

static int
judge_perf_hw(const struct vpmu_host_info *hi, struct sbuf *why)
{
	int e = hi->perf.hw_instructions_errno;
	int err = perf_verdict(e);

	if (err == 0) {
		sb_printf(why, "PERF_COUNT_HW_INSTRUCTIONS opens on the %s PMU",
		    hi->perf.core_pmu[0] != '\0' ? hi->perf.core_pmu : "core");
		return (0);
	}
	if (err == EOPNOTSUPP) {
		/* The PMU may well be there; the kernel refuses us. */
		perf_failure(hi, why, "PERF_COUNT_HW_INSTRUCTIONS", e);
		return (err);
	}
	if (cpuid_reports_pmu(hi)) {
		sb_printf(why, "the kernel drives no hardware PMU although ");
		cpuid_pmu_fact(hi, why);
		sb_printf(why, ": ");
	} else {
		sb_printf(why, "no hardware PMU: ");
		cpuid_pmu_fact(hi, why);
		sb_printf(why, hi->perf.core_pmu[0] == '\0' ? ", " : " and ");
	}
	perf_failure(hi, why, "PERF_COUNT_HW_INSTRUCTIONS", e);
	if (hi->perf.core_pmu[0] == '\0')
		sb_printf(why, " and the kernel registered no core PMU (no cpu, "
		    "cpu_core or cpu_atom in /sys/bus/event_source/devices)");
	return (err);
}

static int
judge_exact(const struct vpmu_host_info *hi, struct sbuf *why)
{
	int err;

	if ((err = kvm_problem(hi, why)) != 0)
		return (err);
	if (hi->kvm.cap_set_guest_debug <= 0) {
		sb_printf(why, "KVM_CHECK_EXTENSION(KVM_CAP_SET_GUEST_DEBUG) "
		    "returned %d", hi->kvm.cap_set_guest_debug);
		return (EOPNOTSUPP);
	}
	sb_printf(why, "KVM API %d with KVM_CAP_SET_GUEST_DEBUG: one "
	    "KVM_EXIT_DEBUG per guest instruction", hi->kvm.api_version);
	return (0);
}

/*
 * KVM's own vPMU needs KVM (with kvm.enable_pmu not N) and, as KVM backs
 * each guest counter with a host perf event, a hardware PMU.  Every failed
 * condition is named; ENODEV wins over EOPNOTSUPP since a missing PMU
 * cannot be fixed by configuration.
 */
static int
judge_kvm_passthrough(const struct vpmu_host_info *hi, struct sbuf *why)
{
	const struct vpmu_host_kvm *kvm = &hi->kvm;
	int err, hw;

	err = kvm_problem(hi, why);
	if (kvm->enable_pmu == 'N') {
		sb_printf(why, "%sKVM's vPMU is off: kvm.enable_pmu is N",
		    why->used > 0 ? "; " : "");
		if (kvm->opened && kvm->cap_pmu_capability == 0)
			sb_printf(why, " and KVM_CAP_PMU_CAPABILITY is 0");
		if (err == 0)
			err = EOPNOTSUPP;
	}
	if ((hw = perf_verdict(hi->perf.hw_instructions_errno)) != 0) {
		sb_printf(why, "%sit needs host hardware counters and %s",
		    why->used > 0 ? "; " : "",
		    hw == ENODEV ? "there are none: " : "may not use them: ");
		perf_failure(hi, why, "PERF_COUNT_HW_INSTRUCTIONS",
		    hi->perf.hw_instructions_errno);
		if (err == 0 || hw == ENODEV)
			err = hw;
	}
	if (err != 0)
		return (err);
	sb_printf(why, "KVM's vPMU is on (kvm.enable_pmu %s, "
	    "KVM_CAP_PMU_CAPABILITY 0x%x) over the host PMU",
	    kvm->enable_pmu == 'Y' ? "Y" : "absent",
	    (unsigned)kvm->cap_pmu_capability);
	return (0);
}

static int (*const judges[VPMU__HOST_NSOURCES])(const struct vpmu_host_info *,
    struct sbuf *) = {
	[VPMU__HOST_SYNTHETIC] = judge_synthetic,
	[VPMU__HOST_PERF] = judge_perf,
	[VPMU__HOST_PERF_HW] = judge_perf_hw,
	[VPMU__HOST_EXACT] = judge_exact,
	[VPMU__HOST_KVM_PASSTHROUGH] = judge_kvm_passthrough,
};

const char *const vpmu__host_source_names[VPMU__HOST_NSOURCES] = {
#define SOURCE_NAME(id, name)	[VPMU__HOST_##id] = name,
	VPMU_HOST_SOURCES(SOURCE_NAME)
#undef SOURCE_NAME
};

/* A verdict on given facts, not the probed ones (kvm_mode.c, the tests). */
int
vpmu__host_judge(const struct vpmu_host_info *hi, int source, char *why, size_t whylen)
{
	struct sbuf sb = { why, whylen, 0 };

	if (whylen > 0)
		why[0] = '\0';
	return (judges[source](hi, &sb));
}

/* ---- public functions ---------------------------------------------------- */

int
vpmu_host_open(vpmu_host **hostp)
{
	struct sbuf why;
	vpmu_host *host;
	int saved_errno, i;

	if (hostp == NULL)
		return (EINVAL);
	*hostp = NULL;
	if ((host = calloc(1, sizeof(*host))) == NULL)
		return (ENOMEM);
	/* Probing fails open(2)s and perf_event_open(2)s on purpose. */
	saved_errno = errno;
	vpmu__host_probe_cpuid(&host->info);
	vpmu__host_probe_kvm(&host->info);
	vpmu__host_probe_perf(&host->info);
	for (i = 0; i < VPMU__HOST_NSOURCES; i++) {
		why = (struct sbuf){ host->verdict[i].why,
		    sizeof(host->verdict[i].why), 0 };
		host->verdict[i].err = judges[i](&host->info, &why);
	}
	errno = saved_errno;
	*hostp = host;
	return (0);
}

void
vpmu_host_close(vpmu_host *host)
{
	free(host);
}

const struct vpmu_host_info *
vpmu_host_get_info(const vpmu_host *host)
{
	return (host == NULL ? NULL : &host->info);
}

int
vpmu_host_source_status(const vpmu_host *host, const char *source,
    char *why, size_t whylen)
{
	int i;

	if (why != NULL && whylen > 0)
		why[0] = '\0';
	if (host == NULL || source == NULL || (why == NULL && whylen > 0))
		return (EINVAL);
	for (i = 0; i < VPMU__HOST_NSOURCES; i++) {
		if (strcmp(source, vpmu__host_source_names[i]) != 0)
			continue;
		if (whylen > 0)
			snprintf(why, whylen, "%s", host->verdict[i].why);
		return (host->verdict[i].err);
	}
	if (whylen > 0)
		snprintf(why, whylen, "unknown source \"%s\"", source);
	return (EINVAL);
}
