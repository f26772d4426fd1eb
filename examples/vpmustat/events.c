/*
 * events.c -- what -S, -s, -P and -p accept.
 *
 *   instructions, branches, cycles, ref-cycles   perf's generic names, as
 *                      libvpmu spells them (vpmu_event_lookup()); also the
 *                      host software events a perf source counts
 *   0xUUEE             a raw event select: event in bits 7-0, unit mask in
 *                      15-8, AMD's EventSelect[11:8] in 19-16 (VPMU_EV_RAW)
 *   NAME[:mod...]      a libpfm4 event of the guest model's vendor, from the
 *                      table vs_event_pfm_table() names, encoded with
 *                      pfm_get_os_event_encoding() and turned into a raw select
 *
 * A libvpmu name or a raw code may end in ":u" (user mode only) or ":k"
 * (kernel mode only), a time event in neither; any other modifier of
 * theirs is an error.  Which events a source really counts is its business:
 * the exact source counts instructions, branches, cycles, ref-cycles and
 * the raw codes of those (vpmu_exact(7)); live.c warns about the others.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include <perfmon/pfmlib.h>

#include <vpmu/vpmu.h>
#include <vpmu/model.h>

#include "vpmustat.h"

/* IA32_PERFEVTSELx / PerfEvtSeln bits, as libpfm4 encodes them. */
#define EVTSEL_EVENT(c)	((c) & 0xffull)
#define EVTSEL_UMASK(c)	(((c) >> 8) & 0xffull)
#define EVTSEL_USR	(1ull << 16)
#define EVTSEL_OS	(1ull << 17)
#define EVTSEL_EDGE	(1ull << 18)
#define EVTSEL_INV	(1ull << 23)
#define EVTSEL_CMASK(c)	(((c) >> 24) & 0xffull)
#define EVTSEL_AMDHI(c)	(((c) >> 32) & 0xfull)	/* AMD EventSelect[11:8] */

static int
fail(char *err, size_t errlen, const char *fmt, const char *a)
{
	snprintf(err, errlen, fmt, a);
	return (-1);
}

const char *
vs_event_pfm_table(unsigned vendor)
{
	/*
	 * The guest sees an architectural PMU, not the host's: Intel's
	 * architectural events, or AMD's K7 events (which every AMD core PMU
	 * keeps at the same codes).
	 */
	switch (vendor) {
	case VPMU_VENDOR_INTEL:
		return ("ix86arch");
	case VPMU_VENDOR_AMD:
		return ("amd64_k7");
	default:
		return (NULL);
	}
}

/* libpfm4, once, on the table of the model's vendor. */
static int
pfm_ready(unsigned vendor)
{
	static int state;		/* 0 not tried, 1 ready, -1 failed */
	const char *table = vs_event_pfm_table(vendor);

	if (state == 0) {
		state = -1;
		/* A LIBPFM_FORCE_PMU the user set wins. */
		if (table != NULL && setenv("LIBPFM_FORCE_PMU", table, 0) == 0 &&
		    pfm_initialize() == PFM_SUCCESS)
			state = 1;
	}
	return (state);
}

static int
parse_pfm(const char *name, unsigned vendor, struct vs_event *ev, char *err, size_t errlen)
{
	pfm_pmu_encode_arg_t arg;
	uint64_t codes[4] = { 0 };
	uint64_t c;
	int r;

	if (pfm_ready(vendor) < 0)
		return (fail(err, errlen, "%s: not a libvpmu event name nor a raw "
		    "code (0xUUEE), and libpfm4 has no event table for this "
		    "model", name));
	memset(&arg, 0, sizeof(arg));
	arg.size = sizeof(arg);
	arg.codes = codes;
	arg.count = 4;
	r = pfm_get_os_event_encoding(name, PFM_PLM0 | PFM_PLM3, PFM_OS_NONE, &arg);
	if (r != PFM_SUCCESS) {
		snprintf(err, errlen, "%s: not a libvpmu event name nor a raw code "
		    "(0xUUEE); libpfm4 (%s): %s", name, vs_event_pfm_table(vendor),
		    pfm_strerror(r));
		return (-1);
	}
	if (arg.count != 1)
		return (fail(err, errlen, "%s: libpfm4 encodes it in more than one "
		    "register; give the raw code", name));
	c = codes[0];
	ev->event = VPMU_EV_RAW;
	ev->raw = EVTSEL_EVENT(c) | EVTSEL_UMASK(c) << 8 | EVTSEL_AMDHI(c) << 16;
	if ((c & EVTSEL_USR) && !(c & EVTSEL_OS))
		ev->caps |= VPMU_CAP_USER;
	if ((c & EVTSEL_OS) && !(c & EVTSEL_USR))
		ev->caps |= VPMU_CAP_SYSTEM;
	if (c & EVTSEL_EDGE)
		ev->caps |= VPMU_CAP_EDGE;
	if (c & EVTSEL_INV)
		ev->caps |= VPMU_CAP_INVERT;
	if (EVTSEL_CMASK(c) != 0) {
		ev->caps |= VPMU_CAP_THRESHOLD;
		ev->cmask = (uint32_t)EVTSEL_CMASK(c);
	}
	return (0);
}

int
vs_event_parse(const char *name, unsigned vendor, struct vs_event *ev, char *err,
    size_t errlen)
{
	char base[64], *colon, *end;
	unsigned long long v;

	memset(ev, 0, sizeof(*ev));
	if (name[0] == '\0')
		return (fail(err, errlen, "%san empty event name", ""));
	if (strlen(name) >= sizeof(ev->name))
		return (fail(err, errlen, "%.60s...: event name too long", name));
	snprintf(ev->name, sizeof(ev->name), "%s", name);
	snprintf(base, sizeof(base), "%s", name);

	/*
	 * ":u" / ":k" after a libvpmu name or a raw code, and nothing else:
	 * what follows the first colon of such a name is its one modifier.
	 */
	if ((colon = strchr(base, ':')) != NULL) {
		*colon = '\0';
		if (base[0] == '0' && (base[1] == 'x' || base[1] == 'X')) {
			/* a raw code: checked below */
		} else if ((ev->event = vpmu_event_lookup(base)) == 0 ||
		    ev->event == VPMU_EV_RAW) {
			*colon = ':';		/* libpfm4's NAME:modifier... */
			colon = NULL;
		}
		if (colon != NULL && strcmp(colon + 1, "u") != 0 &&
		    strcmp(colon + 1, "k") != 0)
			return (fail(err, errlen, "%s: a libvpmu event or a raw code takes "
			    "one modifier, :u (user mode) or :k (kernel mode)", name));
		if (colon != NULL)
			ev->caps = colon[1] == 'u' ? VPMU_CAP_USER : VPMU_CAP_SYSTEM;
	}
	if (colon != NULL && ev->event != 0 && ev->event != VPMU_EV_RAW &&
	    vpmu_event_is_timed(ev->event))
		return (fail(err, errlen, "%s: a time event counts run time in both "
		    "modes: no :u or :k", name));

	if (base[0] == '0' && (base[1] == 'x' || base[1] == 'X')) {
		errno = 0;
		v = strtoull(base + 2, &end, 16);
		if (base[2] == '\0' || *end != '\0' || errno != 0 || v == 0 ||
		    v > 0xfffffull)
			return (fail(err, errlen, "%s: a raw code is 0xUUEE (unit "
			    "mask, event; AMD's EventSelect[11:8] in 0xF0000)", name));
		ev->event = VPMU_EV_RAW;
		ev->raw = v;
		return (0);
	}
	if ((ev->event = vpmu_event_lookup(base)) != 0 && ev->event != VPMU_EV_RAW)
		return (0);
	/* libpfm4 parses its own modifiers: give it the name as written. */
	ev->caps = 0;
	return (parse_pfm(name, vendor, ev, err, errlen));
}

void
vs_event_list(FILE *f, unsigned vendor)
{
	/* Every event <vpmu/source.h> names; raw codes are listed apart. */
	static const uint32_t generic[] = {
#define VS_EV(n, v, s)	VPMU_EV_##n,
		VPMU_EVENTS(VS_EV)
#undef VS_EV
	};
	pfm_pmu_info_t pinfo;
	pfm_event_info_t info;
	const char *table = vs_event_pfm_table(vendor);
	size_t i;
	int idx, pmu;

	fprintf(f, "libvpmu events (the exact source counts the first four):\n");
	for (i = 0; i < sizeof(generic) / sizeof(generic[0]); i++)
		if (generic[i] != VPMU_EV_RAW)
			fprintf(f, "  %s\n", vpmu_event_name(generic[i]));
	fprintf(f, "raw codes: 0xUUEE (unit mask, event select)\n");
	if (table == NULL || pfm_ready(vendor) < 0) {
		fprintf(f, "libpfm4: no event table for this model\n");
		return;
	}
	fprintf(f, "libpfm4 events of %s:\n", table);
	for (pmu = 0; pmu < PFM_PMU_MAX; pmu++) {
		memset(&pinfo, 0, sizeof(pinfo));
		pinfo.size = sizeof(pinfo);
		if (pfm_get_pmu_info((pfm_pmu_t)pmu, &pinfo) != PFM_SUCCESS ||
		    !pinfo.is_present || strcmp(pinfo.name, table) != 0)
			continue;
		for (idx = pinfo.first_event; idx != -1; idx = pfm_get_event_next(idx)) {
			memset(&info, 0, sizeof(info));
			info.size = sizeof(info);
			if (pfm_get_event_info(idx, PFM_OS_NONE, &info) == PFM_SUCCESS)
				fprintf(f, "  %s\n", info.name);
		}
	}
}
