/*
 * vpmustat -- pmcstat(8) for a guest.  See vpmustat(1).
 *
 *   vpmustat [-c CPUS] -S EVENT[,EVENT...] [-n RATE] [-N] [-O LOG] [vpmu-run options] GUEST.elf
 *   vpmustat [-c CPUS] -s|-p EVENT[,EVENT...] [-w SECS] [-C] [vpmu-run options] GUEST.elf
 *   vpmustat -R LOG [--elf GUEST.elf] [-c CPUS] [-q] [-G FILE] [--folded FILE] [--svg FILE]
 *       [--perf-script FILE] [--pprof FILE]
 *
 * The first forms run the guest (live.c); -R reads a log (logread.c).
 * The run's options (--pmu, --source, --vcpus, --mem, --initrd, --append,
 * --timeout, ...) are vpmu-run's: runopts.c's table, parser and usage
 * lines, with this file's own options before them in getopt_long's table.
 * Everything that can be checked is checked first (events, -c, --tunable
 * values), then the files of -G, --folded, --svg, --perf-script and --pprof
 * are opened (output.c),
 * then the work; both modes end in vs_outputs(): the top-functions report
 * and those files, if the work succeeded.  What is not written is
 * discarded once, at the end of main().
 */
#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <inttypes.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <vpmu/vpmu.h>
#include <vpmu/model.h>

#include "vpmustat.h"

#define TOP_DEFAULT	20

enum {
	O_ELF = 256, O_FOLDED, O_SVG, O_EVENT, O_TOP, O_DUMP, O_LIST, O_TUNABLE,
	O_PERF_SCRIPT, O_PPROF, O_GUEST_SYMBOLS, O_KASLR_SLIDE, O_FROM_MARK, O_TO_MARK,
	O_GUEST_MODULES, O_GUEST_MODULE_DIR, O_GUEST_KALLSYMS, O_SAVE_GUEST_SYMBOLS,
	O_VERSION,
	O_RUN = 512,		/* + enum vr_opt_id: the run's options, vpmu-run's */
};

/* vpmustat's own; the run's (runopts.c's table) follow. */
static const struct option ownopts[] = {
	{ "elf",		required_argument, NULL, O_ELF },
	{ "guest-symbols",	required_argument, NULL, O_GUEST_SYMBOLS },
	{ "guest-kallsyms",	no_argument,	   NULL, O_GUEST_KALLSYMS },
	{ "save-guest-symbols",	required_argument, NULL, O_SAVE_GUEST_SYMBOLS },
	{ "guest-modules",	required_argument, NULL, O_GUEST_MODULES },
	{ "guest-module-dir",	required_argument, NULL, O_GUEST_MODULE_DIR },
	{ "kaslr-slide",	required_argument, NULL, O_KASLR_SLIDE },
	{ "from-mark",		required_argument, NULL, O_FROM_MARK },
	{ "to-mark",		required_argument, NULL, O_TO_MARK },
	{ "folded",		required_argument, NULL, O_FOLDED },
	{ "svg",		required_argument, NULL, O_SVG },
	{ "perf-script",	required_argument, NULL, O_PERF_SCRIPT },
	{ "pprof",		required_argument, NULL, O_PPROF },
	{ "quiet",		no_argument,	   NULL, 'q' },
	{ "event",		required_argument, NULL, O_EVENT },
	{ "top",		required_argument, NULL, O_TOP },
	{ "dump",		no_argument,	   NULL, O_DUMP },
	{ "list-events",	no_argument,	   NULL, O_LIST },
	{ "tunable",		required_argument, NULL, O_TUNABLE },
	{ "json",		no_argument,	   NULL, 'j' },
	{ "field-separator",	required_argument, NULL, 'x' },
	{ "help",		no_argument,	   NULL, 'h' },
	{ "version",		no_argument,	   NULL, O_VERSION },
};

static void
usage(FILE *f)
{
	fprintf(f,
	    "usage: vpmustat [-c CPUS] -S EVENT[,EVENT...] [-n RATE] [-N] [-O LOG] [options] "
	    "GUEST.elf\n"
	    "       vpmustat [-c CPUS] -s|-p|-P EVENT[,EVENT...] [-w SECS] [-C] [-j|-x SEP] "
	    "[options] GUEST.elf\n"
	    "       vpmustat -R LOG [--elf GUEST.elf] [-c CPUS] [-q] [-G FILE] [--folded FILE] "
	    "[--svg FILE]\n"
	    "                [--perf-script FILE] [--pprof FILE]\n"
	    "       vpmustat --list-events [--pmu MODEL]\n"
	    "       vpmustat --help | --version\n"
	    "run a guest (any image vpmu-run boots: a boot protocol v1 ELF64, a Multiboot v1\n"
	    "image, a Linux bzImage) under sampling or counting PMCs:\n"
	    "  -S EVENTS        sample: a system-mode PMC per event per vCPU\n"
	    "  -P EVENTS        sample: a process-mode PMC per event, on the guest (pid 1)\n"
	    "  -s EVENTS        count: system mode, per vCPU\n"
	    "  -p EVENTS        count: process mode, the guest (pid 1) on every vCPU\n"
	    "  -n RATE          one sample every RATE events (default %d)\n"
	    "  -N               no call chains (the sampled PC only)\n"
	    "  -O LOG           keep the pmclog log in LOG (default: a temporary file)\n"
	    "  -w SECS          print the counts every SECS seconds (default 5; 0: at the end only)\n"
	    "  -C               cumulative counts in those rows (default: since the last row)\n"
	    "  -c CPUS          the vCPUs of the -S/-s after it: 0,2 or 0-3 or * (default *)\n"
	    "  -o FILE          counts and report to FILE (default: standard error)\n"
	    "  -j, --json       the counts as JSON, one object a line (as perf stat -j)\n"
	    "  -x, --field-separator SEP  the counts as CSV, fields separated by the\n"
	    "                   character SEP (as perf stat -x)\n"
	    "  --tunable NAME=VALUE  an hwpmc tunable (callchaindepth, nsamples, ...)\n"
	    "  --from-mark N    start the PMCs when the guest takes mark N (an OUT of N\n"
	    "                   to port 0xf6), not at the start\n"
	    "  --to-mark N      stop them when it takes mark N\n"
	    "  --guest-kallsyms  a Linux guest's kernel symbols from its own table in guest\n"
	    "                   memory (kallsyms; a bzImage's default without --guest-symbols)\n"
	    "  --save-guest-symbols FILE  those symbols, as /proc/kallsyms lists them\n"
	    "the run's options, as vpmu-run's (vpmu-run(1)):\n", VS_RATE_DEFAULT);
	vr_runopts_usage(f, false);
	fprintf(f,
	    "read a log (report to standard output; to standard error when a FILE is -):\n"
	    "  -R LOG           the top functions of each event\n"
	    "  --elf FILE       symbols from FILE (the guest's ELF)\n"
	    "  --dump           also print every record\n"
	    "  -c CPUS          only the samples of these CPUs\n"
	    "and in both modes:\n"
	    "  --guest-symbols FILE  a Linux guest's kernel symbols: a System.map, a copy of\n"
	    "                   /proc/kallsyms or a vmlinux; slid by the guest's LSTAR\n"
	    "  --kaslr-slide N  the kernel's KASLR slide, a multiple of 0x200000\n"
	    "  --guest-modules FILE  a copy of the guest's /proc/modules: module addresses\n"
	    "  --guest-module-dir DIR  the modules' .ko files, under DIR: their functions\n"
	    "  -G FILE          call graph (caller -> callee counts)\n"
	    "  --folded FILE    folded stacks (\"main;work;hot 123\")\n"
	    "  --svg FILE       a flame graph (click to zoom, Ctrl-F to search)\n"
	    "  --perf-script FILE  the samples as perf script prints them\n"
	    "  --pprof FILE     a pprof profile (gzipped profile.proto)\n"
	    "  -q               quiet: no report, no warnings; errors only\n"
	    "  --event NAME     the event of the files (default: the first sampled; "
	    "--perf-script: all)\n"
	    "  --top N          functions in the report (default %d; 0: all)\n"
	    "EVENT: instructions, branches, cycles, ref-cycles; a raw code 0xUUEE;\n"
	    "or a libpfm4 name of the model's vendor (--list-events)\n"
	    "A FILE - is standard output (one at most; in a run the guest's console then\n"
	    "goes to standard error); LOG -, --initrd - are standard input\n", TOP_DEFAULT);
}

/* A usage error: what is wrong, and where to read more. */
static int
bad(const char *fmt, const char *a, const char *b)
{
	fprintf(stderr, "vpmustat: ");
	fprintf(stderr, fmt, a, b);
	fprintf(stderr, "\n");
	vr_usage_try();
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

/* ---- -c ---------------------------------------------------------------------------------- */

/* One CPU number at *sp, moved past it. */
static int
cpu_num(const char **sp, uint32_t *out)
{
	const char *s = *sp;
	unsigned long v = 0;

	if (*s < '0' || *s > '9')
		return (-1);
	for (; *s >= '0' && *s <= '9'; s++)
		if ((v = v * 10 + (unsigned long)(*s - '0')) > VS_CPU_MAX)
			return (-1);
	*sp = s;
	*out = (uint32_t)v;
	return (0);
}

/* "*" (no range: c->n is 0), or N and N-M joined by commas. */
static int
cpuset_parse(const char *spec, struct vs_cpuset *c)
{
	const char *s = spec;

	memset(c, 0, sizeof(*c));
	c->spec = spec;
	if (strcmp(spec, "*") == 0)
		return (0);
	for (;;) {
		if (c->n == VS_CPU_RANGES || cpu_num(&s, &c->r[c->n].lo) < 0)
			return (-1);
		c->r[c->n].hi = c->r[c->n].lo;
		if (*s == '-') {
			s++;
			if (cpu_num(&s, &c->r[c->n].hi) < 0 || c->r[c->n].hi < c->r[c->n].lo)
				return (-1);
		}
		c->n++;
		if (*s == '\0')
			return (0);
		if (*s++ != ',')
			return (-1);
	}
}

/* ---- --tunable ---------------------------------------------------------------------------- */

/* The tunables libvpmu knows, after a --tunable error. */
static int
list_tunables(void)
{
	struct vpmu_tunable_info ti;
	unsigned i;

	fprintf(stderr, "vpmustat: the tunables are ");
	for (i = 0; vpmu_tunable_get_info(i, &ti) == 0; i++)
		fprintf(stderr, "%s%s", i > 0 ? ", " : "", ti.name);
	fprintf(stderr, " (or kern.hwpmc.NAME, security.bsd.NAME; see vpmu(3))\n");
	return (VS_EXIT_USAGE);
}

static int
bad_tunable(const char *fmt, const char *a)
{
	fprintf(stderr, "vpmustat: ");
	fprintf(stderr, fmt, a);
	fprintf(stderr, "\n");
	return (list_tunables());
}

/* "NAME=VALUE": a tunable libvpmu knows, a value that is an int. */
static int
add_tunable(struct vs_live_opts *o, vpmu_config *cfg, char *arg)
{
	char *eq, *end;
	long v;

	if ((eq = strchr(arg, '=')) == NULL || eq == arg)
		return (bad_tunable("--tunable %s: want NAME=VALUE", arg));
	if (o->ntunables == sizeof(o->tunables) / sizeof(o->tunables[0]))
		return (bad_tunable("--tunable %s: 16 at most", arg));
	*eq = '\0';
	errno = 0;
	v = strtol(eq + 1, &end, 0);
	if (eq[1] == '\0' || *end != '\0' || errno != 0 || v < INT_MIN || v > INT_MAX) {
		*eq = '=';
		return (bad_tunable("--tunable %s: the value is not a whole number "
		    "from -2147483648 to 2147483647", arg));
	}
	if (vpmu_config_set_tunable(cfg, arg, v) != 0)
		return (bad_tunable("--tunable %s: no such tunable", arg));
	o->tunables[o->ntunables].name = arg;
	o->tunables[o->ntunables].value = v;
	o->ntunables++;
	return (0);
}

struct diag {
	char	 msg[4][256];
	unsigned n;
};

static void
keep_diag(int level, const char *msg, void *arg)
{
	struct diag *d = arg;

	if (level <= VPMU_LOG_WARN && d->n < sizeof(d->msg) / sizeof(d->msg[0]))
		snprintf(d->msg[d->n++], sizeof(d->msg[0]), "%s", msg);
}

/*
 * The values, checked now as the VM will check them: a VM of the synthetic
 * source is made with them, and a value hwpmc would reset to its default
 * (its diagnostic) is an error here, before anything runs.
 */
static int
check_tunables(vpmu_config *cfg)
{
	struct diag d = { .n = 0 };
	vpmu_vm *vm = NULL;
	unsigned i;
	int e;

	vpmu_config_set_log(cfg, keep_diag, &d);
	if ((e = vpmu_vm_create(cfg, &vm)) != 0) {
		fprintf(stderr, "vpmustat: --tunable: vpmu_vm_create: %s\n", vpmu_strerror(e));
		return (VS_EXIT_HOST);
	}
	vpmu_vm_destroy(vm);
	for (i = 0; i < d.n; i++)
		fprintf(stderr, "vpmustat: --tunable: %s\n", d.msg[i]);
	return (d.n != 0 ? list_tunables() : 0);
}

/* ---- -R ---------------------------------------------------------------------------------- */

static int
read_log(const char *log, const char *elf, bool dump, unsigned top, const char *event,
    struct vs_outs *outs, const struct vs_cpuset *cpus, struct vs_ksyms *ksyms)
{
	struct vs_symtab syms = { 0 };
	struct vs_profile p;
	char err[256];
	FILE *report;
	int fd, ret;

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
	/* The files before the log is read: a bad path fails before the work. */
	if (vs_outs_open(outs) < 0) {
		if (fd != STDIN_FILENO)
			close(fd);
		vs_symtab_free(&syms);
		return (VS_EXIT_USAGE);
	}
	vs_profile_init(&p, &syms);
	p.ksyms = ksyms;
	p.cpus = cpus;
	p.keep_samples = outs->perf.path != NULL;
	/* A file on standard output ("-") has it alone: the report goes to standard error. */
	report = vs_outs_stdout(outs) ? stderr : stdout;
	if (vs_profile_read(&p, fd, dump ? report : NULL) < 0 && !outs->quiet)
		fprintf(stderr, "vpmustat: %s: %s (the report has the records before%s)\n",
		    log, p.error, vs_outs_any(outs) ? "; -G, --folded and --svg not written" :
		    "");
	else if (p.error[0] != '\0')	/* -q: no report */
		fprintf(stderr, "vpmustat: %s: %s%s\n", log, p.error, vs_outs_any(outs) ?
		    " (no file written)" : "");
	if (fd != STDIN_FILENO)
		close(fd);
	/* Not the image of the samples: its names would be wrong ones. */
	if (elf != NULL && (ret = vs_image_check(&p, elf)) != 0) {
		vs_profile_free(&p);
		vs_symtab_free(&syms);
		return (ret);
	}
	ret = vs_outputs(&p, report, top, event, outs, true, elf != NULL ? elf : log);
	vs_profile_free(&p);
	vs_symtab_free(&syms);
	return (ret);
}

/* ---- --guest-symbols, --kaslr-slide ------------------------------------------------------- */

/*
 * The kernel's symbols, loaded before the work: a file that cannot be
 * used is said (not with -q) and the profile keeps its addresses.  NULL: none.
 */
static struct vs_ksyms *
load_ksyms(struct vs_ksyms *k, const char *path, const char *slide, const char *modules,
    const char *moddir, bool quiet)
{
	char err[512];

	if (path == NULL)
		return (NULL);
	if (vs_ksyms_load(k, path, err, sizeof(err)) < 0) {
		if (!quiet)
			fprintf(stderr, "vpmustat: warning: --guest-symbols %s: kernel "
			    "addresses are not named\n", err);
		return (NULL);
	}
	if (slide != NULL) {
		k->slide_given = true;
		k->slide = strtoull(slide, NULL, 0);
	}
	if (modules != NULL && vs_kmods_load(&k->kmods, &k->kranges, modules, moddir,
	    k->kmods_note, sizeof(k->kmods_note), err, sizeof(err)) < 0 && !quiet)
		fprintf(stderr, "vpmustat: warning: --guest-modules %s: module addresses "
		    "are not named\n", err);
	return (k);
}

/* A KASLR slide: a number, 0 or more, a multiple of 2 MiB. */
static int
check_slide(const char *s)
{
	unsigned long long v;
	char *end;

	errno = 0;
	v = strtoull(s, &end, 0);
	if (*s < '0' || *s > '9' || *end != '\0' || errno != 0 || v % VS_KASLR_ALIGN != 0)
		return (bad("--kaslr-slide %s: want a multiple of 0x200000 (2 MiB), "
		    "such as 0x1e00000%s", s, ""));
	return (0);
}

/* ---- standard input and output ---------------------------------------------------- */

/* An input read by name: "-" is refused, not taken for a file of that name. */
static int
by_name(const char *opt, const char *path)
{
	if (path == NULL || strcmp(path, "-") != 0)
		return (0);
	return (bad("%s -: read by name, not from standard input: give a path%s", opt, ""));
}

/*
 * The outputs on standard output ("-"): -o, -O, --save-guest-symbols and the
 * files of -G, --folded, --svg, --perf-script, --pprof.  One at most; with
 * one, the guest's console goes to standard error.  0 or a usage error.
 */
static int
stdout_outputs(struct vs_live_opts *o, struct vs_outs *outs)
{
	const struct vs_out *f[] = { &outs->graph, &outs->folded, &outs->svg, &outs->perf,
	    &outs->pprof };
	const char *first = NULL, *second = NULL;
	size_t i;

#define ON_STDOUT(path, opt) do {					\
	if ((path) != NULL && strcmp((path), "-") == 0) {		\
		if (first == NULL)					\
			first = (opt);					\
		else if (second == NULL)				\
			second = (opt);					\
	}								\
} while (0)
	ON_STDOUT(o->out, "-o");
	ON_STDOUT(o->log, "-O");
	ON_STDOUT(o->save_ksyms, "--save-guest-symbols");
	for (i = 0; i < NELEM(f); i++)
		ON_STDOUT(f[i]->path, f[i]->opt);
#undef ON_STDOUT
	if (second != NULL)
		return (bad("%s - and %s -: one output at most on standard output", first,
		    second));
	o->console_stderr = first != NULL;
	return (0);
}

/* --event in a run: one of the sampled events, as given to -S or -P. */
static int
check_event(const struct vs_live_opts *o)
{
	unsigned i;

	for (i = 0; i < o->nev; i++)
		if ((o->ev[i].scope == VS_SS || o->ev[i].scope == VS_TS) &&
		    strcmp(o->ev[i].name, o->event) == 0)
			return (0);
	return (bad("--event %s: not an event of -S or -P in this run%s", o->event, ""));
}

/* ---- main ------------------------------------------------------------------------------------ */

/* "a,b,c" for scope: each resolved now, so a bad name is a usage error. */
static int
add_events(struct vs_live_opts *o, int scope, const char *list, unsigned vendor,
    const struct vs_cpuset *cpus)
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
		o->ev[o->nev].cpus = cpus;
		o->ev[o->nev++].scope = scope;
	}
	if (o->nev == 0 || list[0] == '\0' || list[strlen(list) - 1] == ',')
		return (bad("an empty event in \"%s\"%s", list, ""));
	return (0);
}

/* The guest has the vCPUs of a -c list. */
static int
check_cpus(const struct vs_cpuset *c, unsigned vcpus)
{
	unsigned i;

	for (i = 0; c != NULL && i < c->n; i++)
		if (c->r[i].hi >= vcpus) {
			fprintf(stderr, "vpmustat: -c %s: no vCPU %" PRIu32 ": the guest has "
			    "%u (--vcpus)\n", c->spec, c->r[i].hi, vcpus);
			return (VS_EXIT_USAGE);
		}
	return (0);
}

int
main(int argc, char **argv)
{
	static struct vs_live_opts o;
	static struct vs_cpuset cpusets[VS_MAX_EVENTS];
	static struct vs_outs outs = {
		.graph = { .opt = "-G" }, .folded = { .opt = "--folded" },
		.svg = { .opt = "--svg" }, .perf = { .opt = "--perf-script" },
		.pprof = { .opt = "--pprof" },
	};
	struct {
		int scope;
		const char *list;
		const struct vs_cpuset *cpus;
	} specs[VS_MAX_EVENTS];
	const struct vs_cpuset *cpus = NULL;	/* the last -c; NULL: "*" */
	const char *rlog = NULL, *elf = NULL, *pending_c = NULL;
	const char *gsyms = NULL, *slide = NULL, *modules = NULL, *moddir = NULL;
	static struct vs_ksyms ksyms;
	/* static: reachable, not a leak, on the early returns below */
	static vpmu_config *tuncfg;
	/* vpmustat's own options, then the run's: none of them own (vpmu-run's) */
	static struct option longopts[NELEM(ownopts) + VR_O_NOPTS + 1];
	struct vpmu_model model;
	char err[256];
	unsigned nspecs = 0, ncpusets = 0, i;
	bool dump = false, list = false, live_only = false, sampling = false, counting = false;
	uint64_t v;
	int ch, ret, e;

	o.rate = VS_RATE_DEFAULT;
	o.callchain = true;
	o.wait_s = 5;
	o.top = TOP_DEFAULT;
	o.from_mark = o.to_mark = -1;
	vr_runopts_init(&o.run);
	o.outs = &outs;
	memcpy(longopts, ownopts, sizeof(ownopts));
	(void)vr_runopts_longopts(longopts + NELEM(ownopts), NULL, false, O_RUN);
	/* --tunable names are checked against libvpmu's as they come. */
	if ((e = vpmu_config_create(&tuncfg)) != 0) {
		fprintf(stderr, "vpmustat: vpmu_config_create: %s\n", vpmu_strerror(e));
		return (VS_EXIT_HOST);
	}

	while ((ch = getopt_long(argc, argv, "S:s:P:p:n:NCO:R:G:w:o:c:qhjx:", longopts,
	    NULL)) != -1) {
		/* The run's options: --pmu goes with --list-events too. */
		if (ch >= O_RUN && ch < O_RUN + VR_O_NOPTS) {
			if (vr_runopts_parse(ch - O_RUN, optarg, &o.run) < 0) {
				vr_usage_try();
				return (VS_EXIT_USAGE);
			}
			live_only |= ch != O_RUN + VR_O_PMU;
			continue;
		}
		switch (ch) {
		case 'S':
		case 's':
		case 'P':
		case 'p':
			if (nspecs == VS_MAX_EVENTS)
				return (bad("at most %s event options%s", "16", ""));
			specs[nspecs].scope = ch == 'S' ? VS_SS : ch == 's' ? VS_SC :
			    ch == 'P' ? VS_TS : VS_TC;
			specs[nspecs].list = optarg;
			/* pmcstat's -c: the system-mode PMCs that follow it */
			specs[nspecs++].cpus = ch == 'S' || ch == 's' ? cpus : NULL;
			if (ch == 'S' || ch == 's')
				pending_c = NULL;
			break;
		case 'c':
			if (ncpusets == VS_MAX_EVENTS)
				return (bad("at most %s -c options%s", "16", ""));
			if (cpuset_parse(optarg, &cpusets[ncpusets]) < 0)
				return (bad("-c %s: want CPU numbers from 0 to 65535 and "
				    "ranges N-M, joined by commas, or *%s", optarg, ""));
			/* "*": every CPU, as without -c */
			cpus = cpusets[ncpusets].n == 0 ? NULL : &cpusets[ncpusets];
			ncpusets++;
			pending_c = optarg;
			break;
		case 'n':
			if (num("-n", optarg, 1, UINT64_C(1) << 62, &o.rate) < 0) {
				vr_usage_try();
				return (VS_EXIT_USAGE);
			}
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
			outs.graph.path = optarg;
			break;
		case 'w':
			if (num("-w", optarg, 0, 86400, &v) < 0) {
				vr_usage_try();
				return (VS_EXIT_USAGE);
			}
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
		case O_GUEST_SYMBOLS:
			gsyms = optarg;
			break;
		case O_GUEST_KALLSYMS:
			o.guest_kallsyms = true;
			live_only = true;
			break;
		case O_SAVE_GUEST_SYMBOLS:
			o.save_ksyms = optarg;
			o.guest_kallsyms = true;	/* what it saves */
			live_only = true;
			break;
		case O_GUEST_MODULES:
			modules = optarg;
			break;
		case O_GUEST_MODULE_DIR:
			moddir = optarg;
			break;
		case O_KASLR_SLIDE:
			if ((ret = check_slide(optarg)) != 0)
				return (ret);
			slide = optarg;
			break;
		case O_FROM_MARK:
		case O_TO_MARK:
			if (num(ch == O_FROM_MARK ? "--from-mark" : "--to-mark", optarg, 0,
			    UINT32_MAX, &v) < 0) {
				vr_usage_try();
				return (VS_EXIT_USAGE);
			}
			*(ch == O_FROM_MARK ? &o.from_mark : &o.to_mark) = (int64_t)v;
			live_only = true;
			break;
		case O_FOLDED:
			outs.folded.path = optarg;
			break;
		case O_SVG:
			outs.svg.path = optarg;
			break;
		case O_PERF_SCRIPT:
			outs.perf.path = optarg;
			break;
		case O_PPROF:
			outs.pprof.path = optarg;
			break;
		case 'q':
			outs.quiet = true;
			break;
		case O_EVENT:
			o.event = optarg;
			break;
		case O_TOP:
			if (num("--top", optarg, 0, 1000000, &v) < 0) {
				vr_usage_try();
				return (VS_EXIT_USAGE);
			}
			o.top = (unsigned)v;
			break;
		case O_DUMP:
			dump = true;
			break;
		case O_LIST:
			list = true;
			break;
		case O_TUNABLE:
			if ((ret = add_tunable(&o, tuncfg, optarg)) != 0)
				return (ret);
			live_only = true;
			break;
		case 'j':
		case 'x':
			if (ch == 'x' && vr_parse_sep("-x", optarg, &o.sep) < 0) {
				vr_usage_try();
				return (VS_EXIT_USAGE);
			}
			if (o.fmt != VR_FMT_TEXT &&
			    o.fmt != (ch == 'j' ? VR_FMT_JSON : VR_FMT_CSV))
				return (bad("-j and -x: one format at most%s%s", "", ""));
			o.fmt = ch == 'j' ? VR_FMT_JSON : VR_FMT_CSV;
			live_only = true;
			break;
		case 'h':
			usage(stdout);
			return (vs_stdout_flush(true) == 0 ? 0 : VS_EXIT_HOST);
		case O_VERSION:
			return (vr_print_version("vpmustat"));
		default:
			vr_usage_try();		/* getopt_long said why */
			return (VS_EXIT_USAGE);
		}
	}

	if (vpmu_model_parse(o.run.pmu, &model, err, sizeof(err)) != 0)
		return (bad("--pmu %s: %s", o.run.pmu, err));
	if (list) {
		if (rlog != NULL || nspecs != 0 || optind != argc)
			return (bad("--list-events takes no other action%s%s", "", ""));
		vs_event_list(stdout, model.vendor);
		return (vs_stdout_flush(true) == 0 ? 0 : VS_EXIT_HOST);
	}

	if ((modules != NULL || moddir != NULL) && gsyms == NULL)
		return (bad("--guest-modules and --guest-module-dir go with --guest-symbols "
		    "(the kernel's symbols)%s%s", "", ""));
	if (moddir != NULL && modules == NULL)
		return (bad("--guest-module-dir %s: the modules' addresses come from "
		    "--guest-modules (a copy of /proc/modules)%s", moddir, ""));
	if (gsyms != NULL && (o.guest_kallsyms || o.save_ksyms != NULL))
		return (bad("--guest-symbols %s: the kernel's symbols come from that file, "
		    "not from guest memory (--guest-kallsyms, --save-guest-symbols)%s",
		    gsyms, ""));
	if (slide != NULL && gsyms == NULL)
		return (bad("--kaslr-slide %s moves --guest-symbols' addresses: give "
		    "that file%s", slide, ""));
	/* Read by name (libelf, or more than once): no standard input there. */
	if ((ret = by_name("--elf", elf)) != 0 || (ret = by_name("--guest-symbols", gsyms)) != 0 ||
	    (ret = by_name("--guest-modules", modules)) != 0 ||
	    (ret = by_name("--guest-module-dir", moddir)) != 0)
		return (ret);
	if (rlog != NULL) {
		if (nspecs != 0 || live_only)
			return (bad("-R reads a log: -S/-s/-P/-p and the run's options "
			    "(-n -N -C -O -w -o -j -x --source ...) do not go with it%s%s", "",
			    ""));
		if (optind != argc)
			return (bad("-R reads a log: no guest to run (\"%s\")%s", argv[optind],
			    ""));
		if (ncpusets > 1)
			return (bad("-R reads a log: one -c at most%s%s", "", ""));
		vpmu_config_destroy(tuncfg);
		tuncfg = NULL;
		ret = read_log(rlog, elf, dump, o.top, o.event, &outs, cpus,
		    load_ksyms(&ksyms, gsyms, slide, modules, moddir, outs.quiet));
		goto done;
	}
	if (elf != NULL || dump)
		return (bad("--elf and --dump go with -R (a run reads its guest's "
		    "symbols)%s%s", "", ""));
	if (nspecs == 0)
		return (bad("nothing to do: give -S, -s, -P or -p and a guest, or -R%s%s",
		    "", ""));
	if (pending_c != NULL)
		return (bad("-c %s: it sets the vCPUs of the -S and -s options after it, "
		    "and none follows%s", pending_c, ""));
	if (optind != argc - 1)
		return (bad(optind == argc ? "no guest ELF given%s%s" :
		    "one guest ELF only (\"%s\" too)%s", argv[argc - 1], ""));
	o.run.guest = argv[optind];
	if (strcmp(o.run.guest, "-") == 0)
		return (bad("the guest -: vpmustat reads its guest by name, more than once "
		    "(its image, its symbols, its identity in the log): give a path%s%s", "",
		    ""));
	for (i = 0; i < nspecs; i++) {
		if ((ret = check_cpus(specs[i].cpus, o.run.vcpus)) != 0 ||
		    (ret = add_events(&o, specs[i].scope, specs[i].list, model.vendor,
		    specs[i].cpus)) != 0)
			return (ret);
		sampling |= specs[i].scope == VS_SS || specs[i].scope == VS_TS;
	}
	for (i = 0; i < o.nev; i++)
		counting |= o.ev[i].scope == VS_SC || o.ev[i].scope == VS_TC;
	if (o.fmt != VR_FMT_TEXT && !counting)
		return (bad("-j and -x format the counts of -s and -p: give one%s%s", "", ""));
	if (o.event != NULL && (ret = check_event(&o)) != 0)
		return (ret);
	/* Standard output: one output at most, and then not the guest's console. */
	if ((ret = stdout_outputs(&o, &outs)) != 0)
		return (ret);
	if (vs_outs_any(&outs) && !sampling)
		return (bad("-G, --folded and --svg draw samples: give -S or -P%s%s", "",
		    ""));
	if (o.ntunables != 0 && (ret = check_tunables(tuncfg)) != 0)
		return (ret);
	vpmu_config_destroy(tuncfg);
	tuncfg = NULL;
	o.ksyms = load_ksyms(&ksyms, gsyms, slide, modules, moddir, outs.quiet);
	/* The files before the guest boots: a bad path fails before the run. */
	ret = vs_outs_open(&outs) < 0 ? VS_EXIT_USAGE : vs_live(&o);
done:
	vs_ksyms_free(&ksyms);
	vs_outs_discard(&outs);		/* what was opened and not written */
	vr_runopts_close(&o.run);
	if (vs_stdout_flush(true) < 0 && ret == 0)
		ret = VS_EXIT_HOST;
	return (ret);
}
