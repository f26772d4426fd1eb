/*
 * host_perf.c -- what perf_event_open(2) lets this process count.
 *
 * The probe opens each event on the calling thread, counting disabled, and
 * closes it at once: whether an event opens is the only reliable test, as
 * the kernel's answer depends on its PMU drivers, perf_event_paranoid,
 * capabilities and any LSM.  Each event asks for the least privilege it
 * can: user-mode only where the PMU allows excluding the kernel.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <linux/perf_event.h>

#include "host_internal.h"

#define PARANOID_PATH	"/proc/sys/kernel/perf_event_paranoid"
#define PMU_DIR		"/sys/bus/event_source/devices"

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

/* The first line of a small sysfs/procfs file, without its newline. */
static int
read_line(const char *path, char *buf, size_t len)
{
	FILE *f;
	int err = 0;

	if ((f = fopen(path, "re")) == NULL)
		return (errno);
	if (fgets(buf, (int)len, f) == NULL)
		err = ferror(f) ? EIO : ENODATA;
	else
		buf[strcspn(buf, "\n")] = '\0';
	fclose(f);
	return (err);
}

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

/*
 * A sysfs event alias such as "event=0x00".  The msr PMU's format is a
 * single "event" field, so any other term means a PMU we do not know.
 */
static int
parse_event_alias(const char *s, uint64_t *config)
{
	char *end;

	if (strncmp(s, "event=", 6) != 0)
		return (EINVAL);
	errno = 0;
	*config = strtoull(s + 6, &end, 0);
	if (errno != 0 || end == s + 6 || *end != '\0')
		return (EINVAL);
	return (0);
}

static void
probe_msr_tsc(struct vpmu_host_perf *perf)
{
	struct perf_event_attr attr;
	char alias[64];
	long type;

	perf->msr_type = -1;
	perf->msr_tsc_errno = ENOENT;
	if (read_long(PMU_DIR "/msr/type", &type) != 0 || type < 0 ||
	    type > INT32_MAX)
		return;
	perf->msr_type = (int32_t)type;
	if (read_line(PMU_DIR "/msr/events/tsc", alias, sizeof(alias)) != 0)
		return;
	perf->msr_tsc_event = 1;
	if ((perf->msr_tsc_errno = parse_event_alias(alias,
	    &perf->msr_tsc_config)) != 0)
		return;
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
	char path[128];
	long paranoid;
	size_t i;

	if (read_long(PARANOID_PATH, &paranoid) == 0 &&
	    paranoid >= INT32_MIN && paranoid <= INT32_MAX) {
		perf->paranoid_known = 1;
		perf->paranoid = (int32_t)paranoid;
	}

	for (i = 0; core_pmu_names[i] != NULL; i++) {
		snprintf(path, sizeof(path), PMU_DIR "/%s", core_pmu_names[i]);
		if (access(path, F_OK) == 0) {
			snprintf(perf->core_pmu, sizeof(perf->core_pmu), "%s",
			    core_pmu_names[i]);
			break;
		}
	}

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
