/*
 * vpmustat -- pmcstat(8) for a guest.  See vpmustat(1).
 *
 *   vpmustat -S EVENT[,EVENT...] [-n RATE] [-N] [-O LOG] [vpmu-run options] GUEST.elf
 *   vpmustat -s|-p EVENT[,EVENT...] [-w SECS] [-C] [vpmu-run options] GUEST.elf
 *   vpmustat -R LOG [--elf GUEST.elf] [-G FILE] [--folded FILE] [--svg FILE]
 *
 * The first forms run the guest (live.c); -R reads a log (profile.c).  Both
 * end in vs_outputs(): the top-functions report and the files asked for.
 */
#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <vpmu/vpmu.h>
#include <vpmu/model.h>

#include "vpmustat.h"

#define TOP_DEFAULT	20

enum {
	O_ELF = 256, O_FOLDED, O_SVG, O_EVENT, O_TOP, O_DUMP, O_LIST, O_PMU, O_SOURCE,
	O_EXACT_MODE, O_VCPUS, O_MEM, O_HOST_COUNTERS, O_MUX, O_TUNABLE,
};

static const struct option longopts[] = {
	{ "elf",		required_argument, NULL, O_ELF },
	{ "folded",		required_argument, NULL, O_FOLDED },
	{ "svg",		required_argument, NULL, O_SVG },
	{ "event",		required_argument, NULL, O_EVENT },
	{ "top",		required_argument, NULL, O_TOP },
	{ "dump",		no_argument,	   NULL, O_DUMP },
	{ "list-events",	no_argument,	   NULL, O_LIST },
	{ "pmu",		required_argument, NULL, O_PMU },
	{ "source",		required_argument, NULL, O_SOURCE },
	{ "exact-mode",		required_argument, NULL, O_EXACT_MODE },
	{ "vcpus",		required_argument, NULL, O_VCPUS },
	{ "mem",		required_argument, NULL, O_MEM },
	{ "host-counters",	required_argument, NULL, O_HOST_COUNTERS },
	{ "mux-interval",	required_argument, NULL, O_MUX },
	{ "tunable",		required_argument, NULL, O_TUNABLE },
	{ "help",		no_argument,	   NULL, 'h' },
	{ NULL, 0, NULL, 0 },
};

static void
usage(FILE *f)
{
	fprintf(f,
	    "usage: vpmustat -S EVENT[,EVENT...] [-n RATE] [-N] [-O LOG] [options] GUEST.elf\n"
	    "       vpmustat -s|-p|-P EVENT[,EVENT...] [-w SECS] [-C] [options] GUEST.elf\n"
	    "       vpmustat -R LOG [--elf GUEST.elf] [-G FILE] [--folded FILE] [--svg FILE]\n"
	    "       vpmustat --list-events [--pmu MODEL]\n"
	    "run a guest (vpmu-run's boot protocol) under sampling or counting PMCs:\n"
	    "  -S EVENTS        sample: a system-mode PMC per event per vCPU\n"
	    "  -P EVENTS        sample: a process-mode PMC per event, on the guest (pid 1)\n"
	    "  -s EVENTS        count: system mode, per vCPU\n"
	    "  -p EVENTS        count: process mode, the guest (pid 1) on every vCPU\n"
	    "  -n RATE          one sample every RATE events (default %d)\n"
	    "  -N               no call chains (the sampled PC only)\n"
	    "  -O LOG           keep the pmclog log in LOG (default: a temporary file)\n"
	    "  -w SECS          print the counts every SECS seconds (default 5; 0: at the end only)\n"
	    "  -C               cumulative counts in those rows (default: since the last row)\n"
	    "  -o FILE          counts and report to FILE (default: standard error)\n"
	    "  --pmu MODEL, --source NAME, --vcpus N, --mem MiB, --host-counters N,\n"
	    "  --mux-interval US, --exact-mode MODE\n"
	    "                   as vpmu-run (default intel-v2, exact, 1, 64, step)\n"
	    "  --tunable NAME=VALUE  an hwpmc tunable (callchaindepth, nsamples, ...)\n"
	    "read a log (report to standard output):\n"
	    "  -R LOG           the top functions of each event\n"
	    "  --elf FILE       symbols from FILE (the guest's ELF)\n"
	    "  --dump           also print every record\n"
	    "and in both modes:\n"
	    "  -G FILE          call graph (caller -> callee counts)\n"
	    "  --folded FILE    folded stacks (\"main;work;hot 123\")\n"
	    "  --svg FILE       a flame graph\n"
	    "  --event NAME     the event of -G/--folded/--svg (default: the first sampled)\n"
	    "  --top N          functions in the report (default %d; 0: all)\n"
	    "EVENT: instructions, branches, cycles, ref-cycles; a raw code 0xUUEE;\n"
	    "or a libpfm4 name of the model's vendor (--list-events)\n", VS_RATE_DEFAULT,
	    TOP_DEFAULT);
}

static int
bad(const char *fmt, const char *a, const char *b)
{
	fprintf(stderr, "vpmustat: ");
	fprintf(stderr, fmt, a, b);
	fprintf(stderr, "\n");
	usage(stderr);
	return (VS_EXIT_USAGE);
}

/* A whole decimal number in [min, max]. */
static int
num(const char *opt, const char *s, uint64_t min, uint64_t max, uint64_t *out)
{
	unsigned long long v;
	char *end;

	errno = 0;
	v = strtoull(s, &end, 10);
	if (*s < '0' || *s > '9' || *end != '\0' || errno != 0 || v < min || v > max) {
		fprintf(stderr, "vpmustat: %s %s: want a number from %" PRIu64 " to %"
		    PRIu64 "\n", opt, s, min, max);
		return (-1);
	}
	*out = v;
	return (0);
}

/* ---- outputs shared by both modes --------------------------------------------------- */

static FILE *
create(const char *path)
{
	FILE *f;

	if (strcmp(path, "-") == 0)
		return (stdout);
	if ((f = fopen(path, "w")) == NULL)
		fprintf(stderr, "vpmustat: %s: %s\n", path, strerror(errno));
	return (f);
}

static int
done(FILE *f, const char *path)
{
	if (f == stdout)
		return (fflush(f) == 0 ? 0 : -1);
	if (fclose(f) != 0) {
		fprintf(stderr, "vpmustat: %s: %s\n", path, strerror(errno));
		return (-1);
	}
	return (0);
}

int
vs_outputs(const struct vs_profile *p, FILE *report, unsigned top, const char *event,
    const char *graph, const char *folded, const char *svg, const char *title)
{
	static const struct vs_evprof none = { .name = "(none)" };
	const struct vs_evprof *e;
	const char *base;
	char t[256];
	FILE *f;
	int ret = 0;

	vs_report(report, p, top);
	fflush(report);
	if (graph == NULL && folded == NULL && svg == NULL)
		return (0);
	if ((e = vs_profile_event(p, event)) == NULL) {
		if (event != NULL)
			fprintf(stderr, "vpmustat: --event %s: no samples of it in the log\n",
			    event);
		else
			fprintf(stderr, "vpmustat: no samples in the log: -G, --folded and "
			    "--svg are empty\n");
		e = &none;
		ret = event != NULL ? VS_EXIT_USAGE : 0;
	}
	if (graph != NULL) {
		if ((f = create(graph)) == NULL)
			return (VS_EXIT_HOST);
		vs_callgraph(f, e);
		if (done(f, graph) < 0)
			ret = VS_EXIT_HOST;
	}
	if (folded != NULL) {
		if ((f = create(folded)) == NULL)
			return (VS_EXIT_HOST);
		vs_folded(f, e);
		if (done(f, folded) < 0)
			ret = VS_EXIT_HOST;
	}
	if (svg != NULL) {
		if ((f = create(svg)) == NULL)
			return (VS_EXIT_HOST);
		base = strrchr(title, '/') != NULL ? strrchr(title, '/') + 1 : title;
		snprintf(t, sizeof(t), "Flame graph: %s", base);
		vs_flamegraph(f, e, t);
		if (done(f, svg) < 0)
			ret = VS_EXIT_HOST;
		else if (f != stdout)
			fprintf(report, "vpmustat: flame graph: %s\n", svg);
	}
	return (ret);
}

/* ---- -R ---------------------------------------------------------------------------------- */

static int
read_log(const char *log, const char *elf, bool dump, unsigned top, const char *event,
    const char *graph, const char *folded, const char *svg)
{
	struct vs_symtab syms = { 0 };
	struct vs_profile p;
	char err[256];
	int fd, ret, bad_log;

	if (elf != NULL && vs_symtab_load(&syms, elf, err, sizeof(err)) < 0) {
		fprintf(stderr, "vpmustat: --elf: %s\n", err);
		return (VS_EXIT_USAGE);
	}
	if (strcmp(log, "-") == 0)
		fd = STDIN_FILENO;
	else if ((fd = open(log, O_RDONLY | O_CLOEXEC)) < 0) {
		fprintf(stderr, "vpmustat: -R %s: %s\n", log, strerror(errno));
		vs_symtab_free(&syms);
		return (VS_EXIT_USAGE);
	}
	vs_profile_init(&p, &syms);
	bad_log = vs_profile_read(&p, fd, dump ? stdout : NULL) < 0;
	if (fd != STDIN_FILENO)
		close(fd);
	if (bad_log)
		fprintf(stderr, "vpmustat: %s: %s (the report has the records before)\n",
		    log, p.error);
	ret = vs_outputs(&p, stdout, top, event, graph, folded, svg,
	    elf != NULL ? elf : log);
	if (ret == 0 && bad_log)
		ret = VS_EXIT_HOST;
	vs_profile_free(&p);
	vs_symtab_free(&syms);
	return (ret);
}

/* ---- main ------------------------------------------------------------------------------------ */

/* "a,b,c" for scope: each resolved now, so a bad name is a usage error. */
static int
add_events(struct vs_live_opts *o, int scope, const char *list, unsigned vendor)
{
	char buf[1024], err[320], *tok, *save = NULL;

	if (strlen(list) >= sizeof(buf))
		return (bad("event list too long: %.40s%s...", list, ""));
	snprintf(buf, sizeof(buf), "%s", list);
	for (tok = strtok_r(buf, ",", &save); tok != NULL; tok = strtok_r(NULL, ",", &save)) {
		if (o->nev == VS_MAX_EVENTS)
			return (bad("at most %s events%s", "16", ""));
		if (vs_event_parse(tok, vendor, &o->ev[o->nev], err, sizeof(err)) < 0)
			return (bad("event %s%s", err, ""));
		o->ev[o->nev++].scope = scope;
	}
	if (o->nev == 0 || list[0] == '\0' || list[strlen(list) - 1] == ',')
		return (bad("an empty event in \"%s\"%s", list, ""));
	return (0);
}

int
main(int argc, char **argv)
{
	static struct vs_live_opts o;
	struct { int scope; const char *list; } specs[VS_MAX_EVENTS];
	const char *rlog = NULL, *elf = NULL;
	struct vpmu_model model;
	char err[256], modelstr[256];
	unsigned nspecs = 0, i;
	bool dump = false, list = false, live_only = false;
	uint64_t v;
	char *eq;
	int ch, ret;

	o.rate = VS_RATE_DEFAULT;
	o.callchain = true;
	o.wait_s = 5;
	o.top = TOP_DEFAULT;
	o.pmu = "intel-v2";
	o.source = "exact";
	o.vcpus = 1;
	o.mem = 64;

	while ((ch = getopt_long(argc, argv, "S:s:P:p:n:NCO:R:G:w:o:h", longopts, NULL)) != -1) {
		switch (ch) {
		case 'S':
		case 's':
		case 'P':
		case 'p':
			if (nspecs == VS_MAX_EVENTS)
				return (bad("at most %s event options%s", "16", ""));
			specs[nspecs].scope = ch == 'S' ? VS_SS : ch == 's' ? VS_SC :
			    ch == 'P' ? VS_TS : VS_TC;
			specs[nspecs++].list = optarg;
			break;
		case 'n':
			if (num("-n", optarg, 1, UINT64_C(1) << 62, &o.rate) < 0)
				return (bad("bad -n%s%s", "", ""));
			live_only = true;
			break;
		case 'N':
			o.callchain = !o.callchain;	/* pmcstat's toggle */
			live_only = true;
			break;
		case 'C':
			o.cumulative = !o.cumulative;
			live_only = true;
			break;
		case 'O':
			o.log = optarg;
			live_only = true;
			break;
		case 'R':
			rlog = optarg;
			break;
		case 'G':
			o.graph = optarg;
			break;
		case 'w':
			if (num("-w", optarg, 0, 86400, &v) < 0)
				return (bad("bad -w%s%s", "", ""));
			o.wait_s = (unsigned)v;
			live_only = true;
			break;
		case 'o':
			o.out = optarg;
			live_only = true;
			break;
		case O_ELF:
			elf = optarg;
			break;
		case O_FOLDED:
			o.folded = optarg;
			break;
		case O_SVG:
			o.svg = optarg;
			break;
		case O_EVENT:
			o.event = optarg;
			break;
		case O_TOP:
			if (num("--top", optarg, 0, 1000000, &v) < 0)
				return (bad("bad --top%s%s", "", ""));
			o.top = (unsigned)v;
			break;
		case O_DUMP:
			dump = true;
			break;
		case O_LIST:
			list = true;
			break;
		case O_PMU:
			o.pmu = optarg;
			break;
		case O_SOURCE:
			o.source = optarg;
			live_only = true;
			break;
		case O_EXACT_MODE:
			if (strcmp(optarg, "step") != 0 && strcmp(optarg, "block") != 0)
				return (bad("--exact-mode %s: want step or block%s", optarg, ""));
			o.exact_block = strcmp(optarg, "block") == 0;
			live_only = true;
			break;
		case O_VCPUS:
			if (num("--vcpus", optarg, 1, 64, &v) < 0)
				return (bad("bad --vcpus%s%s", "", ""));
			o.vcpus = (unsigned)v;
			live_only = true;
			break;
		case O_MEM:
			if (num("--mem", optarg, 1, 1024, &v) < 0)
				return (bad("bad --mem%s%s", "", ""));
			o.mem = (unsigned)v;
			live_only = true;
			break;
		case O_HOST_COUNTERS:
			if (num("--host-counters", optarg, 1, 4096, &v) < 0)
				return (bad("bad --host-counters%s%s", "", ""));
			o.host_counters = (unsigned)v;
			live_only = true;
			break;
		case O_MUX:
			if (num("--mux-interval", optarg, 1, 10000000, &v) < 0)
				return (bad("bad --mux-interval%s%s", "", ""));
			o.mux_us = (unsigned)v;
			live_only = true;
			break;
		case O_TUNABLE:
			if ((eq = strchr(optarg, '=')) == NULL || eq == optarg ||
			    o.ntunables == sizeof(o.tunables) / sizeof(o.tunables[0]))
				return (bad("--tunable %s: want NAME=VALUE (16 at most)",
				    optarg, ""));
			*eq = '\0';
			errno = 0;
			o.tunables[o.ntunables].name = optarg;
			o.tunables[o.ntunables].value = strtol(eq + 1, &eq, 0);
			if (*eq != '\0' || errno != 0)
				return (bad("--tunable %s: the value is not a number%s",
				    optarg, ""));
			o.ntunables++;
			live_only = true;
			break;
		case 'h':
			usage(stdout);
			return (0);
		default:
			usage(stderr);		/* getopt_long said why */
			return (VS_EXIT_USAGE);
		}
	}

	if (vpmu_model_parse(o.pmu, &model, err, sizeof(err)) != 0)
		return (bad("--pmu %s: %s", o.pmu, err));
	if (vpmu_model_format(&model, modelstr, sizeof(modelstr)) != 0)
		snprintf(modelstr, sizeof(modelstr), "%s", o.pmu);
	if (list) {
		if (rlog != NULL || nspecs != 0 || optind != argc)
			return (bad("--list-events takes no other action%s%s", "", ""));
		vs_event_list(stdout, model.vendor);
		return (0);
	}

	if (rlog != NULL) {
		if (nspecs != 0 || live_only)
			return (bad("-R reads a log: -S/-s/-P/-p and the run's options "
			    "(-n -N -C -O -w -o --source ...) do not go with it%s%s", "", ""));
		if (optind != argc)
			return (bad("-R reads a log: no guest to run (\"%s\")%s", argv[optind],
			    ""));
		return (read_log(rlog, elf, dump, o.top, o.event, o.graph, o.folded, o.svg));
	}
	if (elf != NULL || dump)
		return (bad("--elf and --dump go with -R (a run reads its guest's "
		    "symbols)%s%s", "", ""));
	if (nspecs == 0)
		return (bad("nothing to do: give -S, -s, -P or -p and a guest, or -R%s%s",
		    "", ""));
	if (optind != argc - 1)
		return (bad(optind == argc ? "no guest ELF given%s%s" :
		    "one guest ELF only (\"%s\" too)%s", argv[argc - 1], ""));
	o.guest = argv[optind];
	for (i = 0; i < nspecs; i++)
		if ((ret = add_events(&o, specs[i].scope, specs[i].list, model.vendor)) != 0)
			return (ret);
	return (vs_live(&o, modelstr));
}
