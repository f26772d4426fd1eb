/*
 * test_host.c -- host detection: the CPUID decoders on register values of
 * CPUs this machine is not, the argument checks of vpmu_host(3), and the
 * probe on this machine checked against independent looks at the same
 * facts.  Nothing here assumes what this machine has: where a fact is
 * absent (no /dev/kvm, no PMU), the test checks that the report says so.
 */
#include <errno.h>
#include <fcntl.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <cmocka.h>

#include <linux/kvm.h>
#include <linux/perf_event.h>

#include <vpmu/vpmu.h>

#include "host_internal.h"

/* ---- Intel leaf 0xA ------------------------------------------------------ */

static void
intel_decode_v0(void **state)
{
	const uint32_t regs[4] = { 0, 0, 0, 0 };
	struct vpmu_host_intel_pmu d;

	(void)state;
	memset(&d, 0xa5, sizeof(d));
	vpmu__intel_pmu_decode(regs, &d);
	assert_int_equal(d.version, 0);
	assert_int_equal(d.gp_count, 0);
	assert_int_equal(d.fixed_count, 0);
	assert_int_equal(d.fixed_mask, 0);
}

/* Version 0 with junk in the other fields: still no PMU. */
static void
intel_decode_v0_junk(void **state)
{
	const uint32_t regs[4] = { 0x07300400, 0x7f, 0xff, 0x603 };
	struct vpmu_host_intel_pmu d;

	(void)state;
	vpmu__intel_pmu_decode(regs, &d);
	assert_int_equal(d.version, 0);
	assert_int_equal(d.gp_count, 0);
	assert_int_equal(d.gp_width, 0);
	assert_int_equal(d.fixed_count, 0);
}

/* Version 1 (Core Solo/Duo): EDX is reserved, so no fixed counters. */
static void
intel_decode_v1(void **state)
{
	const uint32_t regs[4] = { 0x07280201, 0x00000000, 0xffffffff,
	    0x00000603 };
	struct vpmu_host_intel_pmu d;

	(void)state;
	vpmu__intel_pmu_decode(regs, &d);
	assert_int_equal(d.version, 1);
	assert_int_equal(d.gp_count, 2);
	assert_int_equal(d.gp_width, 40);
	assert_int_equal(d.ebx_length, 7);
	assert_int_equal(d.events_unavailable, 0);
	assert_int_equal(d.fixed_count, 0);
	assert_int_equal(d.fixed_width, 0);
	assert_int_equal(d.fixed_mask, 0);
}

/* Version 2 (Core 2): two 40-bit GP, three 40-bit fixed counters. */
static void
intel_decode_v2(void **state)
{
	const uint32_t regs[4] = { 0x07280202, 0x00000000, 0x00000000,
	    0x00000503 };
	struct vpmu_host_intel_pmu d;

	(void)state;
	vpmu__intel_pmu_decode(regs, &d);
	assert_int_equal(d.version, 2);
	assert_int_equal(d.gp_count, 2);
	assert_int_equal(d.gp_width, 40);
	assert_int_equal(d.ebx_length, 7);
	assert_int_equal(d.fixed_count, 3);
	assert_int_equal(d.fixed_width, 40);
	assert_int_equal(d.fixed_mask, 0x7);
}

/* Version 4 (Skylake with SMT on); ECX is reserved before version 5. */
static void
intel_decode_v4(void **state)
{
	const uint32_t regs[4] = { 0x07300404, 0x00000000, 0x000000f0,
	    0x00000603 };
	struct vpmu_host_intel_pmu d;

	(void)state;
	vpmu__intel_pmu_decode(regs, &d);
	assert_int_equal(d.version, 4);
	assert_int_equal(d.gp_count, 4);
	assert_int_equal(d.gp_width, 48);
	assert_int_equal(d.ebx_length, 7);
	assert_int_equal(d.events_unavailable, 0);
	assert_int_equal(d.fixed_count, 3);
	assert_int_equal(d.fixed_width, 48);
	assert_int_equal(d.fixed_mask, 0x7);
	assert_int_equal(d.anythread_deprecated, 0);
}

/* EBX flags unavailable events; bits at and above the length are not flags. */
static void
intel_decode_ebx_length(void **state)
{
	uint32_t regs[4] = { 0x07300404, 0x00000044, 0, 0x00000603 };
	struct vpmu_host_intel_pmu d;

	(void)state;
	vpmu__intel_pmu_decode(regs, &d);
	assert_int_equal(d.events_unavailable, 0x44);
	regs[1] = 0xffffffff;
	vpmu__intel_pmu_decode(regs, &d);
	assert_int_equal(d.events_unavailable, 0x7f);
	regs[0] = 0x00300404;		/* length 0: no flag is valid */
	vpmu__intel_pmu_decode(regs, &d);
	assert_int_equal(d.events_unavailable, 0);
	regs[0] = 0x20300404;		/* length 32: all of EBX */
	vpmu__intel_pmu_decode(regs, &d);
	assert_int_equal(d.events_unavailable, 0xffffffff);
}

/* Version 5: fixed counter i exists if ECX[i] or i < EDX[4:0]. */
static void
intel_decode_v5_bitmap(void **state)
{
	uint32_t regs[4] = { 0x08300805, 0x00000000, 0x00000010, 0x00008603 };
	struct vpmu_host_intel_pmu d;

	(void)state;
	vpmu__intel_pmu_decode(regs, &d);
	assert_int_equal(d.version, 5);
	assert_int_equal(d.gp_count, 8);
	assert_int_equal(d.gp_width, 48);
	assert_int_equal(d.ebx_length, 8);
	assert_int_equal(d.fixed_count, 3);
	assert_int_equal(d.fixed_width, 48);
	assert_int_equal(d.anythread_deprecated, 1);
	assert_int_equal(d.fixed_mask, 0x17);

	/* A sparse set with no contiguous count: counters 0 and 2 only. */
	regs[2] = 0x00000005;
	regs[3] = 0x00000600;
	vpmu__intel_pmu_decode(regs, &d);
	assert_int_equal(d.fixed_count, 0);
	assert_int_equal(d.fixed_width, 48);
	assert_int_equal(d.fixed_mask, 0x5);
}

/* ---- AMD 0x80000001 / 0x80000022 ----------------------------------------- */

static const uint32_t no_leaf22[4] = { 0, 0, 0, 0 };

/* Neither PerfCtrExtCore nor PerfMonV2: the four legacy counters. */
static void
amd_decode_legacy(void **state)
{
	struct vpmu_host_amd_pmu d;

	(void)state;
	/* This very ECX came from a KVM guest on an EPYC. */
	vpmu__amd_pmu_decode(0x80000022, 0x004003f3, no_leaf22, &d);
	assert_int_equal(d.core_ext, 0);
	assert_int_equal(d.perfmon_v2, 0);
	assert_int_equal(d.gp_count, 4);
	assert_int_equal(d.gp_width, 48);
}

/* PerfCtrExtCore: six counters; leaf 0x80000022 beyond the maximum is junk. */
static void
amd_decode_core_ext(void **state)
{
	const uint32_t junk22[4] = { 0x00000001, 0x00004108, 0, 0 };
	struct vpmu_host_amd_pmu d;

	(void)state;
	vpmu__amd_pmu_decode(0x8000001f, (1u << 23) | (1u << 24), junk22, &d);
	assert_int_equal(d.core_ext, 1);
	assert_int_equal(d.nb_ext, 1);
	assert_int_equal(d.llc_ext, 0);
	assert_int_equal(d.perfmon_v2, 0);
	assert_int_equal(d.num_core, 0);
	assert_int_equal(d.gp_count, 6);
	assert_int_equal(d.gp_width, 48);
}

/* PerfMonV2: NumPerfCtrCore gives the count. */
static void
amd_decode_perfmon_v2(void **state)
{
	/* EAX: PerfMonV2, LbrStack; EBX: 6 core, LBR depth 16, 16 NB. */
	uint32_t leaf22[4] = { 0x00000003, 0x00004106, 0, 0 };
	struct vpmu_host_amd_pmu d;

	(void)state;
	vpmu__amd_pmu_decode(0x80000028, (1u << 23) | (1u << 28), leaf22, &d);
	assert_int_equal(d.core_ext, 1);
	assert_int_equal(d.llc_ext, 1);
	assert_int_equal(d.perfmon_v2, 1);
	assert_int_equal(d.lbr_stack, 1);
	assert_int_equal(d.num_core, 6);
	assert_int_equal(d.lbr_v2_depth, 16);
	assert_int_equal(d.num_nb, 16);
	assert_int_equal(d.gp_count, 6);

	leaf22[1] = 0x00000008;		/* a part with eight core counters */
	vpmu__amd_pmu_decode(0x80000022, 1u << 23, leaf22, &d);
	assert_int_equal(d.num_core, 8);
	assert_int_equal(d.gp_count, 8);

	leaf22[0] = 0;			/* NumPerfCtrCore without PerfMonV2 */
	vpmu__amd_pmu_decode(0x80000022, 1u << 23, leaf22, &d);
	assert_int_equal(d.perfmon_v2, 0);
	assert_int_equal(d.gp_count, 6);
}

/* ---- helpers --------------------------------------------------------------- */

static void
errname_known_and_unknown(void **state)
{
	char buf[VPMU_ERRNAME_MAX];

	(void)state;
	assert_string_equal(vpmu__errname(ENOENT, buf, sizeof(buf)), "ENOENT");
	assert_string_equal(vpmu__errname(EOPNOTSUPP, buf, sizeof(buf)), "EOPNOTSUPP");
	assert_string_equal(vpmu__errname(9999, buf, sizeof(buf)), "errno 9999");
	/* The kernel's codes are named; the public names stay unknown. */
	assert_string_equal(vpmu__errname(EACCES, buf, sizeof(buf)), "EACCES");
	assert_string_equal(vpmu_errname(EACCES), "EACCES");
	assert_string_equal(vpmu__errname(VPMU_EDOOFUS, buf, sizeof(buf)), "EDOOFUS");
}

static char *
capture(void (*fn)(FILE *, const void *), const void *arg)
{
	char *buf = NULL;
	size_t len = 0;
	FILE *f;

	f = open_memstream(&buf, &len);
	assert_non_null(f);
	fn(f, arg);
	assert_int_equal(fclose(f), 0);
	return (buf);
}

static void
json_string_fn(FILE *f, const void *arg)
{
	vpmu__json_string(f, arg);
}

static void
json_string_escapes(void **state)
{
	char *out;

	(void)state;
	out = capture(json_string_fn, "a\"b\\c\nd\te\x01\x7f\xe9");
	assert_string_equal(out,
	    "\"a\\\"b\\\\c\\nd\\te\\u0001\\u007f\\u00e9\"");
	free(out);
	out = capture(json_string_fn, "");
	assert_string_equal(out, "\"\"");
	free(out);
}

/*
 * A strict JSON checker (RFC 8259 grammar, no extensions), enough to hold
 * vpmu_host_write_json() to "one valid JSON object".
 */
static const char *json_value(const char *p, int depth);

static const char *
json_ws(const char *p)
{
	while (*p == ' ' || *p == '\t' || *p == '\n' || *p == '\r')
		p++;
	return (p);
}

static const char *
json_str(const char *p)
{
	int i;

	if (*p++ != '"')
		return (NULL);
	for (; *p != '"'; p++) {
		if ((unsigned char)*p < 0x20)
			return (NULL);
		if (*p != '\\')
			continue;
		p++;
		if (*p == 'u') {
			for (i = 1; i <= 4; i++)
				if (strchr("0123456789abcdefABCDEF", p[i]) ==
				    NULL || p[i] == '\0')
					return (NULL);
			p += 4;
		} else if (*p == '\0' || strchr("\"\\/bfnrt", *p) == NULL)
			return (NULL);
	}
	return (p + 1);
}

static const char *
json_num(const char *p)
{
	const char *start;

	if (*p == '-')
		p++;
	start = p;
	if (*p == '0')
		p++;
	else
		while (*p >= '0' && *p <= '9')
			p++;
	if (p == start)
		return (NULL);
	if (*p == '.') {
		start = ++p;
		while (*p >= '0' && *p <= '9')
			p++;
		if (p == start)
			return (NULL);
	}
	return (p);
}

static const char *
json_container(const char *p, int depth, char close, int is_object)
{
	p = json_ws(p + 1);
	if (*p == close)
		return (p + 1);
	for (;;) {
		if (is_object) {
			if ((p = json_str(json_ws(p))) == NULL)
				return (NULL);
			p = json_ws(p);
			if (*p++ != ':')
				return (NULL);
		}
		if ((p = json_value(p, depth + 1)) == NULL)
			return (NULL);
		p = json_ws(p);
		if (*p == close)
			return (p + 1);
		if (*p++ != ',')
			return (NULL);
	}
}

static const char *
json_value(const char *p, int depth)
{
	if (depth > 32)
		return (NULL);
	p = json_ws(p);
	switch (*p) {
	case '{':
		return (json_container(p, depth, '}', 1));
	case '[':
		return (json_container(p, depth, ']', 0));
	case '"':
		return (json_str(p));
	case 't':
		return (strncmp(p, "true", 4) == 0 ? p + 4 : NULL);
	case 'f':
		return (strncmp(p, "false", 5) == 0 ? p + 5 : NULL);
	case 'n':
		return (strncmp(p, "null", 4) == 0 ? p + 4 : NULL);
	default:
		return (json_num(p));
	}
}

static int
json_is_one_object(const char *s)
{
	const char *end;

	s = json_ws(s);
	if (*s != '{')
		return (0);
	end = json_value(s, 0);
	return (end != NULL && *json_ws(end) == '\0');
}

static void
json_checker_selftest(void **state)
{
	(void)state;
	assert_true(json_is_one_object("{\"a\": [1, -2.5, true, null, \"x\\u00e9\"]}\n"));
	assert_false(json_is_one_object("{\"a\": 1,}"));
	assert_false(json_is_one_object("{\"a\": \"\x01\"}"));
	assert_false(json_is_one_object("{\"a\": 1} {}"));
	assert_false(json_is_one_object("[1]"));
}

/* ---- argument checks: vpmu_host_*_EINVAL ------------------------------------ */

static void
vpmu_host_open_EINVAL(void **state)
{
	(void)state;
	assert_int_equal(vpmu_host_open(NULL), EINVAL);
}

static void
vpmu_host_close_NULL(void **state)
{
	(void)state;
	vpmu_host_close(NULL);
	assert_null(vpmu_host_get_info(NULL));
}

static void
vpmu_host_source_status_EINVAL(void **state)
{
	vpmu_host *host = *state;
	char why[128];

	memset(why, 'x', sizeof(why));
	assert_int_equal(vpmu_host_source_status(host, "bogus", why,
	    sizeof(why)), EINVAL);
	assert_non_null(memchr(why, '\0', sizeof(why)));
	assert_non_null(strstr(why, "bogus"));

	assert_int_equal(vpmu_host_source_status(NULL, "synthetic", why,
	    sizeof(why)), EINVAL);
	assert_int_equal(vpmu_host_source_status(host, NULL, why,
	    sizeof(why)), EINVAL);
	assert_int_equal(vpmu_host_source_status(host, "synthetic", NULL,
	    16), EINVAL);
	/* Names are exact: no case folding, no prefixes. */
	assert_int_equal(vpmu_host_source_status(host, "Perf", NULL, 0),
	    EINVAL);
	assert_int_equal(vpmu_host_source_status(host, "perf-", NULL, 0),
	    EINVAL);
}

static void
vpmu_host_write_EINVAL(void **state)
{
	vpmu_host *host = *state;

	assert_int_equal(vpmu_host_write_json(NULL, stdout), EINVAL);
	assert_int_equal(vpmu_host_write_json(host, NULL), EINVAL);
	assert_int_equal(vpmu_host_write_text(NULL, stdout), EINVAL);
	assert_int_equal(vpmu_host_write_text(host, NULL), EINVAL);
}

/* why is cut, never overrun, and always terminated. */
static void
vpmu_host_source_status_truncates(void **state)
{
	vpmu_host *host = *state;
	char why[8];

	memset(why, 'x', sizeof(why));
	assert_int_equal(vpmu_host_source_status(host, "synthetic", why,
	    sizeof(why)), 0);
	assert_int_equal(strlen(why), sizeof(why) - 1);
	why[0] = 'x';
	assert_int_equal(vpmu_host_source_status(host, "synthetic", why, 1), 0);
	assert_int_equal(why[0], '\0');
	assert_int_equal(vpmu_host_source_status(host, "synthetic", NULL, 0), 0);
}

/* ---- this machine -------------------------------------------------------- */

/* The verdict of a source and its reason, checked for shape. */
static int
status(vpmu_host *host, const char *source, char *why, size_t len)
{
	int err;

	err = vpmu_host_source_status(host, source, why, len);
	assert_true(err == 0 || err == ENODEV || err == EOPNOTSUPP);
	assert_true(why[0] != '\0');
	return (err);
}

static int
perf_open_user(uint32_t type, uint64_t config)
{
	struct perf_event_attr attr;
	long fd;

	memset(&attr, 0, sizeof(attr));
	attr.size = sizeof(attr);
	attr.type = type;
	attr.config = config;
	attr.disabled = 1;
	attr.exclude_kernel = 1;
	attr.exclude_hv = 1;
	fd = syscall(SYS_perf_event_open, &attr, 0, -1, -1, PERF_FLAG_FD_CLOEXEC);
	if (fd < 0)
		return (errno);
	close((int)fd);
	return (0);
}

/* The first line of a file, or NULL if it cannot be read. */
static char *
first_line(const char *path, char *buf, size_t len)
{
	FILE *f;
	char *r;

	if ((f = fopen(path, "r")) == NULL)
		return (NULL);
	r = fgets(buf, (int)len, f);
	fclose(f);
	if (r != NULL)
		buf[strcspn(buf, "\n")] = '\0';
	return (r);
}

/* The value of "key\t: value" in /proc/cpuinfo's first processor. */
static int
cpuinfo(const char *key, char *buf, size_t len)
{
	char line[4096];
	FILE *f;
	int found = 0;

	if ((f = fopen("/proc/cpuinfo", "r")) == NULL)
		return (0);
	while (!found && fgets(line, sizeof(line), f) != NULL) {
		char *colon = strchr(line, ':');

		if (colon == NULL || strncmp(line, key, strlen(key)) != 0 ||
		    strspn(line + strlen(key), " \t") !=
		    (size_t)(colon - line) - strlen(key))
			continue;
		snprintf(buf, len, "%s", colon + 1 + strspn(colon + 1, " "));
		buf[strcspn(buf, "\n")] = '\0';
		found = 1;
	}
	fclose(f);
	return (found);
}

static void
host_cpu_matches_cpuinfo(void **state)
{
	const struct vpmu_host_info *hi = vpmu_host_get_info(*state);
	char vendor[64], flags[4096];

	assert_non_null(hi);
	if (!hi->cpu.cpuid_ok) {
		assert_true(hi->cpu.cpuid_error[0] != '\0');
		return;
	}
	if (cpuinfo("vendor_id", vendor, sizeof(vendor)))
		assert_string_equal(hi->cpu.vendor, vendor);
	if (cpuinfo("flags", flags, sizeof(flags))) {
		strcat(flags, " ");
		assert_int_equal(hi->cpu.hypervisor,
		    strstr(flags, " hypervisor ") != NULL);
		assert_int_equal(hi->cpu.pdcm, strstr(flags, " pdcm ") != NULL);
		/* Linux names PerfCtrExtCore "perfctr_core". */
		if (vpmu__host_is_amd(&hi->cpu))
			assert_int_equal(hi->amd.core_ext,
			    strstr(flags, " perfctr_core ") != NULL);
	}
	if (!hi->cpu.hypervisor)
		assert_int_equal(hi->cpu.hv_signature[0], '\0');
}

static void
host_kvm_matches(void **state)
{
	vpmu_host *host = *state;
	const struct vpmu_host_info *hi = vpmu_host_get_info(host);
	char line[16], why[512];
	struct stat st;
	int fd, err;

	assert_int_equal(hi->kvm.present, stat("/dev/kvm", &st) == 0);
	fd = open("/dev/kvm", O_RDWR | O_CLOEXEC);
	assert_int_equal(hi->kvm.opened, fd >= 0);
	err = status(host, "exact", why, sizeof(why));
	if (fd < 0) {
		/* No KVM here: the report must say so, and why. */
		assert_int_not_equal(err, 0);
		assert_non_null(strstr(why, "/dev/kvm"));
		assert_int_not_equal(status(host, "kvm-passthrough", why,
		    sizeof(why)), 0);
		assert_non_null(strstr(why, "/dev/kvm"));
	} else {
		assert_int_equal(hi->kvm.api_version,
		    ioctl(fd, KVM_GET_API_VERSION, 0));
		assert_int_equal(hi->kvm.cap_set_guest_debug,
		    ioctl(fd, KVM_CHECK_EXTENSION, KVM_CAP_SET_GUEST_DEBUG));
		assert_int_equal(hi->kvm.cap_pmu_capability,
		    ioctl(fd, KVM_CHECK_EXTENSION, KVM_CAP_PMU_CAPABILITY));
		assert_int_equal(err == 0, hi->kvm.cap_set_guest_debug > 0);
		close(fd);
	}

	if (first_line("/sys/module/kvm/parameters/enable_pmu", line,
	    sizeof(line)) == NULL) {
		assert_int_equal(hi->kvm.enable_pmu, 0);
	} else {
		assert_int_equal(hi->kvm.enable_pmu, line[0]);
		if (line[0] == 'N') {
			assert_int_not_equal(status(host, "kvm-passthrough",
			    why, sizeof(why)), 0);
			assert_non_null(strstr(why, "kvm.enable_pmu is N"));
		}
	}
}

static void
host_perf_matches(void **state)
{
	vpmu_host *host = *state;
	const struct vpmu_host_info *hi = vpmu_host_get_info(host);
	char line[32], why[512];
	int e;

	if (first_line("/proc/sys/kernel/perf_event_paranoid", line,
	    sizeof(line)) != NULL) {
		assert_true(hi->perf.paranoid_known);
		assert_int_equal(hi->perf.paranoid, atoi(line));
	} else
		assert_false(hi->perf.paranoid_known);

	e = perf_open_user(PERF_TYPE_HARDWARE, PERF_COUNT_HW_INSTRUCTIONS);
	assert_int_equal(hi->perf.hw_instructions_errno, e);
	if (e == 0) {
		assert_int_equal(status(host, "perf-hw", why, sizeof(why)), 0);
	} else {
		assert_int_not_equal(status(host, "perf-hw", why, sizeof(why)), 0);
		assert_non_null(strstr(why, "PERF_COUNT_HW_INSTRUCTIONS"));
		assert_int_not_equal(status(host, "kvm-passthrough", why,
		    sizeof(why)), 0);
	}

	e = perf_open_user(PERF_TYPE_SOFTWARE, PERF_COUNT_SW_TASK_CLOCK);
	assert_int_equal(hi->perf.sw_task_clock_errno, e);
	assert_int_equal(status(host, "perf", why, sizeof(why)) == 0, e == 0);

	assert_int_equal(hi->perf.msr_type >= 0,
	    access("/sys/bus/event_source/devices/msr/type", F_OK) == 0);
	if (hi->perf.core_pmu[0] == '\0')
		assert_int_not_equal(access("/sys/bus/event_source/devices/cpu",
		    F_OK), 0);
}

static void
host_synthetic_usable(void **state)
{
	char why[256];

	assert_int_equal(status(*state, "synthetic", why, sizeof(why)), 0);
}

/* Every source in VPMU_HOST_SOURCES is known and has a reason. */
static void
host_all_sources_answer(void **state)
{
	static const char *const names[] = {
#define NAME(id, name)	name,
		VPMU_HOST_SOURCES(NAME)
#undef NAME
	};
	char why[512];
	size_t i;

	for (i = 0; i < sizeof(names) / sizeof(names[0]); i++)
		status(*state, names[i], why, sizeof(why));
}

static void
write_json_fn(FILE *f, const void *host)
{
	assert_int_equal(vpmu_host_write_json(host, f), 0);
}

static void
write_text_fn(FILE *f, const void *host)
{
	assert_int_equal(vpmu_host_write_text(host, f), 0);
}

static void
vpmu_host_write_json_valid(void **state)
{
	char *out = capture(write_json_fn, *state);

	assert_true(json_is_one_object(out));
	assert_non_null(strstr(out, "\"sources\""));
	assert_non_null(strstr(out, "\"kvm-passthrough\""));
	free(out);
}

static void
vpmu_host_write_text_sections(void **state)
{
	char *out = capture(write_text_fn, *state);
	char why[512], line[600];

	assert_non_null(strstr(out, "CPU\n"));
	assert_non_null(strstr(out, "\nPMU (CPUID)\n"));
	assert_non_null(strstr(out, "\nKVM\n"));
	assert_non_null(strstr(out, "\nperf_event\n"));
	assert_non_null(strstr(out, "\nSources\n"));
	/* The text gives the same verdict and reason as the API. */
	if (status(*state, "perf-hw", why, sizeof(why)) != 0)
		snprintf(line, sizeof(line), "unavailable: %s\n", why);
	else
		snprintf(line, sizeof(line), "usable: %s\n", why);
	assert_non_null(strstr(out, line));
	free(out);
}

static int
open_host(void **state)
{
	vpmu_host *host;

	if (vpmu_host_open(&host) != 0)
		return (-1);
	*state = host;
	return (0);
}

static int
close_host(void **state)
{
	vpmu_host_close(*state);
	return (0);
}

int
main(void)
{
	const struct CMUnitTest decode[] = {
		cmocka_unit_test(intel_decode_v0),
		cmocka_unit_test(intel_decode_v0_junk),
		cmocka_unit_test(intel_decode_v1),
		cmocka_unit_test(intel_decode_v2),
		cmocka_unit_test(intel_decode_v4),
		cmocka_unit_test(intel_decode_ebx_length),
		cmocka_unit_test(intel_decode_v5_bitmap),
		cmocka_unit_test(amd_decode_legacy),
		cmocka_unit_test(amd_decode_core_ext),
		cmocka_unit_test(amd_decode_perfmon_v2),
		cmocka_unit_test(errname_known_and_unknown),
		cmocka_unit_test(json_string_escapes),
		cmocka_unit_test(json_checker_selftest),
		cmocka_unit_test(vpmu_host_open_EINVAL),
		cmocka_unit_test(vpmu_host_close_NULL),
	};
	const struct CMUnitTest machine[] = {
		cmocka_unit_test(vpmu_host_source_status_EINVAL),
		cmocka_unit_test(vpmu_host_write_EINVAL),
		cmocka_unit_test(vpmu_host_source_status_truncates),
		cmocka_unit_test(host_cpu_matches_cpuinfo),
		cmocka_unit_test(host_kvm_matches),
		cmocka_unit_test(host_perf_matches),
		cmocka_unit_test(host_synthetic_usable),
		cmocka_unit_test(host_all_sources_answer),
		cmocka_unit_test(vpmu_host_write_json_valid),
		cmocka_unit_test(vpmu_host_write_text_sections),
	};
	int failed;

	failed = cmocka_run_group_tests_name("host_decode", decode, NULL, NULL);
	failed += cmocka_run_group_tests_name("host_machine", machine,
	    open_host, close_host);
	return (failed == 0 ? 0 : 1);
}
