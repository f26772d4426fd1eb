/*
 * host_perf.c -- what perf_event_open(2) lets this process count.
 *
 * The probe opens each event on the calling thread, counting disabled, and
 * closes it at once: whether an event opens is the only reliable test, as
 * the kernel's answer depends on its PMU drivers, perf_event_paranoid,
 * capabilities and any LSM.  Each event asks for the least privilege it
 * can: user-mode only where the PMU allows excluding the kernel.
 *
 * perf's sysfs (/sys/bus/event_source/devices) is read here alone: the
 * core PMU's name and the msr PMU's tsc event, for this probe and for the
 * perf source (perf.c), which must agree with it.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <linux/perf_event.h>

#include "host_internal.h"

#define PARANOID_PATH	"/proc/sys/kernel/perf_event_paranoid"

/*
 * Names a core PMU registers under: "cpu" on Intel and AMD, "cpu_core"
 * and "cpu_atom" on hybrid Intel parts.
 */
static const char *const core_pmu_names[] = { "cpu", "cpu_core", "cpu_atom", NULL };

/* 0 if attr opens on this thread, else the errno. */
static int
try_open(struct perf_event_attr *attr)
{
#ifdef SYS_perf_event_open
	long fd;

	attr->size = sizeof(*attr);
	attr->disabled = 1;
	fd = syscall(SYS_perf_event_open, attr, 0, -1, -1, PERF_FLAG_FD_CLOEXEC);
	if (fd < 0)
		return (errno);
	close((int)fd);
	return (0);
#else
	(void)attr;
	return (ENOSYS);
#endif
}

/* ---- perf's sysfs: the one reader (the perf source's too) ----------------- */

/* The first line of a small sysfs/procfs file, without its newline. */
static int
read_line(const char *path, char *buf, size_t len)
{
	ssize_t n;
	int fd, err;

	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return (errno);
	do
		n = read(fd, buf, len - 1);
	while (n < 0 && errno == EINTR);
	err = n < 0 ? errno : n == 0 ? ENODATA : 0;
	close(fd);
	if (err != 0)
		return (err);
	buf[n] = '\0';
	buf[strcspn(buf, "\n")] = '\0';
	return (0);
}

const char *
vpmu__perf_core_pmu(void)
{
	char path[128];
	size_t i;

	for (i = 0; core_pmu_names[i] != NULL; i++) {
		snprintf(path, sizeof(path), VPMU_PERF_SYSFS "/%s",
		    core_pmu_names[i]);
		if (access(path, F_OK) == 0)
			return (core_pmu_names[i]);
	}
	return (NULL);
}

/*
 * Put one "term=value" of a sysfs event alias into *config, where
 * pmu/format/<term> ("config:lo-hi" or "config:bit") says.  0 or EINVAL.
 */
static int
event_term(const char *pmu, const char *term, uint64_t *config)
{
	char path[256], fmt[64], name[32];
	unsigned long long val;
	unsigned lo, hi, width;
	const char *eq;
	char *end;
	size_t nlen;

	eq = strchr(term, '=');
	nlen = eq != NULL ? (size_t)(eq - term) : strlen(term);
	/* The term names a file: letters, digits and '_' only. */
	if (nlen == 0 || nlen >= sizeof(name) ||
	    strspn(term, "abcdefghijklmnopqrstuvwxyz0123456789_") != nlen)
		return (EINVAL);
	memcpy(name, term, nlen);
	name[nlen] = '\0';
	val = 1;			/* a bare term is a flag */
	if (eq != NULL) {
		errno = 0;
		val = strtoull(eq + 1, &end, 0);
		if (errno != 0 || end == eq + 1 || *end != '\0')
			return (EINVAL);
	}
	snprintf(path, sizeof(path), VPMU_PERF_SYSFS "/%s/format/%s", pmu,
	    name);
	if (read_line(path, fmt, sizeof(fmt)) != 0)
		return (EINVAL);
	switch (sscanf(fmt, "config:%u-%u", &lo, &hi)) {
	case 1:
		hi = lo;
		break;
	case 2:
		break;
	default:
		return (EINVAL);	/* config1/config2 are not ours */
	}
	if (hi < lo || hi > 63)
		return (EINVAL);
	width = hi - lo + 1;
	if (width < 64 && val >> width != 0)
		return (EINVAL);
	*config |= (uint64_t)val << lo;
	return (0);
}

int
vpmu__perf_msr_tsc(int32_t *type, uint64_t *config, char *why, size_t whylen)
{
	char buf[128], ebuf[VPMU_ERRNAME_MAX], *term, *save, *end;
	unsigned long t;
	int err;

	*type = -1;
	*config = 0;
	err = read_line(VPMU_PERF_SYSFS "/msr/type", buf, sizeof(buf));
	if (err != 0) {
		snprintf(why, whylen, "no msr PMU on this host (" VPMU_PERF_SYSFS
		    "/msr/type: %s)", vpmu__errname(err, ebuf, sizeof(ebuf)));
		return (VPMU_PERF_MSR_NONE);
	}
	errno = 0;
	t = strtoul(buf, &end, 10);
	if (errno != 0 || end == buf || *end != '\0' || t > INT32_MAX) {
		snprintf(why, whylen, "msr PMU type \"%.32s\" is not a number",
		    buf);
		return (VPMU_PERF_MSR_NONE);
	}
	*type = (int32_t)t;
	err = read_line(VPMU_PERF_SYSFS "/msr/events/tsc", buf, sizeof(buf));
	if (err != 0) {
		snprintf(why, whylen, "the msr PMU has no tsc event ("
		    VPMU_PERF_SYSFS "/msr/events/tsc: %s)",
		    vpmu__errname(err, ebuf, sizeof(ebuf)));
		return (VPMU_PERF_MSR_NO_TSC);
	}
	for (term = strtok_r(buf, ",", &save); term != NULL;
	    term = strtok_r(NULL, ",", &save)) {
		if (event_term("msr", term, config) != 0) {
			snprintf(why, whylen, "the msr PMU's tsc event term "
			    "\"%.32s\" is not understood", term);
			return (VPMU_PERF_MSR_BAD_TSC);
		}
	}
	snprintf(why, whylen, "ok");
	return (VPMU_PERF_MSR_OK);
}

/* ---- the probe ------------------------------------------------------------ */

static int
read_long(const char *path, long *value)
{
	char buf[32], *end;
	int err;

	if ((err = read_line(path, buf, sizeof(buf))) != 0)
		return (err);
	errno = 0;
	*value = strtol(buf, &end, 0);
	if (errno != 0 || end == buf || *end != '\0')
		return (EINVAL);
	return (0);
}

static void
probe_msr_tsc(struct vpmu_host_perf *perf)
{
	struct perf_event_attr attr;
	char why[160];		/* unused: the report words the facts itself */
	int32_t type;
	int found;

	found = vpmu__perf_msr_tsc(&type, &perf->msr_tsc_config, why,
	    sizeof(why));
	perf->msr_type = type;
	perf->msr_tsc_event = found >= VPMU_PERF_MSR_BAD_TSC;
	if (found != VPMU_PERF_MSR_OK) {
		perf->msr_tsc_errno = found == VPMU_PERF_MSR_BAD_TSC ? EINVAL :
		    ENOENT;
		return;
	}
	/*
	 * The msr PMU refuses every exclude_* bit (PERF_PMU_CAP_NO_EXCLUDE),
	 * so this one needs perf_event_paranoid <= 1 or CAP_PERFMON.
	 */
	memset(&attr, 0, sizeof(attr));
	attr.type = (uint32_t)perf->msr_type;
	attr.config = perf->msr_tsc_config;
	perf->msr_tsc_errno = try_open(&attr);
}

void
vpmu__host_probe_perf(struct vpmu_host_info *info)
{
	struct vpmu_host_perf *perf = &info->perf;
	struct perf_event_attr attr;
	const char *core;
	long paranoid;

	if (read_long(PARANOID_PATH, &paranoid) == 0 &&
	    paranoid >= INT32_MIN && paranoid <= INT32_MAX) {
		perf->paranoid_known = 1;
		perf->paranoid = (int32_t)paranoid;
	}

	if ((core = vpmu__perf_core_pmu()) != NULL)
		snprintf(perf->core_pmu, sizeof(perf->core_pmu), "%s", core);

	memset(&attr, 0, sizeof(attr));
	attr.type = PERF_TYPE_HARDWARE;
	attr.config = PERF_COUNT_HW_INSTRUCTIONS;
	attr.exclude_kernel = 1;
	attr.exclude_hv = 1;
	perf->hw_instructions_errno = try_open(&attr);

	memset(&attr, 0, sizeof(attr));
	attr.type = PERF_TYPE_SOFTWARE;
	attr.config = PERF_COUNT_SW_TASK_CLOCK;
	attr.exclude_kernel = 1;
	attr.exclude_hv = 1;
	perf->sw_task_clock_errno = try_open(&attr);

	probe_msr_tsc(perf);
}
