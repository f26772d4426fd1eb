/*
 * model.c -- guest-visible PMU model strings: "intel-v2:gp=8,width=40".
 *
 * Defaults: Intel models gp=4, fixed=3 (0 for v1, which has none),
 * width=fixed-width=48, fw-writes=1 (KVM always offers full-width writes),
 * ebx=0.  AMD counters are 48 bits wide (APM Vol. 2, 13.2); amd-k7 has the
 * four legacy counters, amd-core and amd-v2 six core-extension counters
 * (amd-v2 may say fewer with gp=N, as CPUID 0x80000022.EBX[3:0] does).
 */
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <vpmu/model.h>

static const struct {
	const char *name;
	struct vpmu_model m;
} bases[] = {
	{ "intel-v1", { .vendor = VPMU_VENDOR_INTEL, .version = 1, .gp = 4 } },
	{ "intel-v2", { .vendor = VPMU_VENDOR_INTEL, .version = 2, .gp = 4, .fixed = 3 } },
	{ "intel-v3", { .vendor = VPMU_VENDOR_INTEL, .version = 3, .gp = 4, .fixed = 3 } },
	{ "intel-v4", { .vendor = VPMU_VENDOR_INTEL, .version = 4, .gp = 4, .fixed = 3 } },
	{ "intel-v5", { .vendor = VPMU_VENDOR_INTEL, .version = 5, .gp = 4, .fixed = 3 } },
	{ "amd-k7", { .vendor = VPMU_VENDOR_AMD, .version = 1, .gp = 4 } },
	{ "amd-core", { .vendor = VPMU_VENDOR_AMD, .version = 1, .gp = 6, .core_ext = 1 } },
	{ "amd-v2", { .vendor = VPMU_VENDOR_AMD, .version = 2, .gp = 6, .core_ext = 1 } },
	{ "none", { .vendor = VPMU_VENDOR_NONE } },
};

/* The keys, which vendors take them, and their range. */
enum key { K_GP, K_FIXED, K_WIDTH, K_FIXED_WIDTH, K_FW_WRITES, K_EBX };
static const struct {
	const char *name;
	unsigned vendors;	/* bit per enum vpmu_vendor */
	unsigned long min, max;
} keys[] = {
	[K_GP] = { "gp", 1u << VPMU_VENDOR_INTEL | 1u << VPMU_VENDOR_AMD, 0, VPMU_INTEL_MAX_GP },
	[K_FIXED] = { "fixed", 1u << VPMU_VENDOR_INTEL, 0, VPMU_INTEL_MAX_FIXED },
	[K_WIDTH] = { "width", 1u << VPMU_VENDOR_INTEL, 32, 64 },
	[K_FIXED_WIDTH] = { "fixed-width", 1u << VPMU_VENDOR_INTEL, 32, 64 },
	[K_FW_WRITES] = { "fw-writes", 1u << VPMU_VENDOR_INTEL, 0, 1 },
	[K_EBX] = { "ebx", 1u << VPMU_VENDOR_INTEL, 0, 0xFFFFFFFFul },
};

static int
fail(char *err, size_t errlen, const char *fmt, ...)
{
	va_list ap;

	if (err != NULL && errlen > 0) {
		va_start(ap, fmt);
		vsnprintf(err, errlen, fmt, ap);
		va_end(ap);
	}
	return (EINVAL);
}

void
vpmu_model_default(struct vpmu_model *m)
{
	char err[8];

	(void)vpmu_model_parse("intel-v2", m, err, sizeof(err));
}

static void
set_key(struct vpmu_model *m, enum key k, unsigned long v)
{
	switch (k) {
	case K_GP: m->gp = (uint32_t)v; break;
	case K_FIXED: m->fixed = (uint32_t)v; break;
	case K_WIDTH: m->width = (uint32_t)v; break;
	case K_FIXED_WIDTH: m->fixed_width = (uint32_t)v; break;
	case K_FW_WRITES: m->fw_writes = (uint32_t)v; break;
	case K_EBX: m->ebx = (uint32_t)v; break;
	}
}

/* One "key=value" item of length len. */
static int
parse_item(struct vpmu_model *m, const char *item, size_t len, char *err, size_t errlen)
{
	char buf[64], *eq, *end;
	unsigned long v;
	size_t k;

	if (len == 0)
		return (fail(err, errlen, "%s: empty key", m->name));
	if (len >= sizeof(buf))
		return (fail(err, errlen, "%s: key too long", m->name));
	memcpy(buf, item, len);
	buf[len] = '\0';
	if ((eq = strchr(buf, '=')) == NULL)
		return (fail(err, errlen, "%s: '%s' is not key=value", m->name, buf));
	*eq++ = '\0';
	for (k = 0; k < sizeof(keys) / sizeof(keys[0]); k++)
		if (strcmp(buf, keys[k].name) == 0)
			break;
	if (k == sizeof(keys) / sizeof(keys[0]))
		return (fail(err, errlen, "%s: unknown key '%s' (keys: gp, fixed, "
		    "width, fixed-width, fw-writes, ebx)", m->name, buf));
	if (!(keys[k].vendors & (1u << m->vendor)))
		return (fail(err, errlen, "%s: key '%s' does not apply to this model",
		    m->name, buf));
	if (*eq == '\0' || *eq == '-' || *eq == '+')
		return (fail(err, errlen, "%s: %s needs a number", m->name, buf));
	errno = 0;
	v = strtoul(eq, &end, 0);
	if (errno != 0 || *end != '\0')
		return (fail(err, errlen, "%s: %s=%s is not a number", m->name, buf, eq));
	if (v < keys[k].min || v > keys[k].max)
		return (fail(err, errlen, "%s: %s=%lu out of range %lu..%lu", m->name,
		    buf, v, keys[k].min, keys[k].max));
	set_key(m, (enum key)k, v);
	return (0);
}

int
vpmu_model_parse(const char *spec, struct vpmu_model *m, char *err, size_t errlen)
{
	const char *colon, *p, *comma;
	size_t nlen, i;
	int error;

	if (err != NULL && errlen > 0)
		err[0] = '\0';
	if (spec == NULL || m == NULL)
		return (fail(err, errlen, "no model given"));
	colon = strchr(spec, ':');
	nlen = colon != NULL ? (size_t)(colon - spec) : strlen(spec);
	for (i = 0; i < sizeof(bases) / sizeof(bases[0]); i++)
		if (strlen(bases[i].name) == nlen &&
		    strncmp(bases[i].name, spec, nlen) == 0)
			break;
	if (i == sizeof(bases) / sizeof(bases[0]))
		return (fail(err, errlen, "unknown PMU model '%.*s' (models: intel-v1 .. "
		    "intel-v5, amd-k7, amd-core, amd-v2, none)", (int)(nlen > 32 ? 32 : nlen),
		    spec));
	*m = bases[i].m;
	snprintf(m->name, sizeof(m->name), "%s", bases[i].name);
	if (m->vendor == VPMU_VENDOR_INTEL) {
		m->width = m->fixed_width = 48;
		m->fw_writes = 1;
	} else if (m->vendor == VPMU_VENDOR_AMD)
		m->width = 48;

	if (colon != NULL) {
		if (m->vendor == VPMU_VENDOR_NONE)
			return (fail(err, errlen, "none takes no keys"));
		for (p = colon + 1; ; p = comma + 1) {
			comma = strchr(p, ',');
			nlen = comma != NULL ? (size_t)(comma - p) : strlen(p);
			if ((error = parse_item(m, p, nlen, err, errlen)) != 0)
				return (error);
			if (comma == NULL)
				break;
		}
	}

	return (vpmu_model_check(m, err, errlen));
}

/*
 * Every rule a model obeys, for models built by hand as well as parsed:
 * ranges of each field, then the rules across them.
 */
int
vpmu_model_check(const struct vpmu_model *m, char *err, size_t errlen)
{
	if (m == NULL)
		return (fail(err, errlen, "no model given"));
	switch (m->vendor) {
	case VPMU_VENDOR_NONE:
		if (m->version != 0 || m->gp != 0 || m->fixed != 0)
			return (fail(err, errlen, "none has no counters"));
		return (0);
	case VPMU_VENDOR_INTEL:
		if (m->version < 1 || m->version > 5)
			return (fail(err, errlen, "Intel perfmon version %u out of range 1..5",
			    m->version));
		if (m->gp > VPMU_INTEL_MAX_GP || m->fixed > VPMU_INTEL_MAX_FIXED)
			return (fail(err, errlen, "%s: too many counters", m->name));
		if (m->width < 32 || m->width > 64 ||
		    (m->fixed > 0 && (m->fixed_width < 32 || m->fixed_width > 64)))
			return (fail(err, errlen, "%s: width out of range 32..64", m->name));
		if (m->fw_writes > 1 || m->core_ext != 0)
			return (fail(err, errlen, "%s: bad flags", m->name));
		break;
	case VPMU_VENDOR_AMD:
		if (m->version < 1 || m->version > 2 || m->width != 48 || m->fixed != 0 ||
		    m->fw_writes != 0 || m->ebx != 0 || m->core_ext > 1 ||
		    (m->version == 2 && !m->core_ext))
			return (fail(err, errlen, "%s: not an AMD PMU", m->name));
		break;
	default:
		return (fail(err, errlen, "unknown vendor %u", m->vendor));
	}
	/* Rules across keys. */
	if (m->vendor == VPMU_VENDOR_INTEL && m->version == 1 && m->fixed != 0)
		return (fail(err, errlen, "intel-v1 has no fixed counters"));
	if (m->vendor == VPMU_VENDOR_AMD) {
		if (m->version == 1 && !m->core_ext && m->gp != VPMU_AMD_LEGACY_GP)
			return (fail(err, errlen, "amd-k7 has exactly 4 counters"));
		if (m->core_ext && m->version == 1 && m->gp != VPMU_AMD_MAX_GP)
			return (fail(err, errlen, "amd-core has exactly 6 counters "
			    "(use amd-v2:gp=N for fewer)"));
		if (m->gp > VPMU_AMD_MAX_GP)
			return (fail(err, errlen, "%s: gp=%u out of range 0..%d", m->name,
			    m->gp, VPMU_AMD_MAX_GP));
	}
	return (0);
}

int
vpmu_model_format(const struct vpmu_model *m, char *buf, size_t len)
{
	int n;

	if (m == NULL || buf == NULL || len == 0)
		return (EINVAL);
	switch (m->vendor) {
	case VPMU_VENDOR_INTEL:
		n = snprintf(buf, len, "%s:gp=%u,fixed=%u,width=%u,fixed-width=%u,"
		    "fw-writes=%u,ebx=0x%x", m->name, m->gp, m->fixed, m->width,
		    m->fixed_width, m->fw_writes, m->ebx);
		break;
	case VPMU_VENDOR_AMD:
		n = snprintf(buf, len, "%s:gp=%u", m->name, m->gp);
		break;
	default:
		n = snprintf(buf, len, "%s", m->name);
		break;
	}
	return (n < 0 || (size_t)n >= len ? ERANGE : 0);
}
