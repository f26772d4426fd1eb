/*
 * options.c -- vpmustat's command line: its own options in one table
 * (vs_opts[]: long name, short letter, argument, help lines, the part of
 * --help they are in, the handler and the field it sets), getopt_long's
 * table and short-option string made from it with the run's options after
 * it (vpmu-run's runopts.c), --help printed from both tables, and each
 * option's argument parsed into a struct vs_cmdline: numbers, -c CPU
 * lists, --tunable.  What the options mean together (-R against a run,
 * standard output once) is main.c's.
 */
#include <assert.h>
#include <errno.h>
#include <getopt.h>
#include <inttypes.h>
#include <limits.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <vpmu/vpmu.h>

#include "vpmustat.h"

#define TOP_DEFAULT	20
#define STR_(x)		#x
#define STR(x)		STR_(x)

#define O_OWN		256	/* + the index in vs_opts[] */
#define O_RUN		512	/* + enum vr_opt_id: the run's options, vpmu-run's */

/* Where an option's lines are in --help. */
enum part {
	PART_RUN,		/* "run a guest ..." */
	PART_READ,		/* "read a log ..." */
	PART_BOTH,		/* "and in both modes:" */
	PART_NONE,		/* in the synopsis only (--list-events, --help, --version) */
};

#define F_RUN		0x1	/* a run's option: not with -R */
#define F_HELP_ONLY	0x2	/* --help's lines only: the option is listed before */
#define F_SHORT_HELP	0x4	/* --help names the short form only */
#define F_UINT		0x8	/* set_num(): the field is an unsigned, not 64 bits */

struct vs_opt;
typedef int vs_opt_fn(struct vs_cmdline *cl, const struct vs_opt *opt, const char *arg);

struct vs_opt {
	const char *name;	/* the long option, or NULL */
	int	    shortopt;	/* the short one, or 0 */
	int	    has_arg;	/* getopt_long's */
	const char *arg;	/* the argument's name in --help, or NULL */
	const char *help;	/* its lines in --help, '\n' between */
	enum part   part;
	unsigned    flags;	/* F_* */
	vs_opt_fn  *set;	/* 0, or the exit status after a message */
	size_t	    field;	/* where set_str(), set_true(), ... store, in vs_cmdline */
	uint64_t    min, max;	/* set_num()'s bounds */
};

static vs_opt_fn set_str, set_true, set_toggle, set_events, set_cpus, set_num,
    set_save_ksyms, set_slide, set_tunable, set_format, set_help, set_version;

#define FIELD(m)	offsetof(struct vs_cmdline, m)

/* In --help's order: vpmustat's own; the run's (runopts.c's) are printed after PART_RUN. */
static const struct vs_opt vs_opts[] = {
	{ NULL, 'S', required_argument, "EVENTS",
	    "sample: a system-mode PMC per event per vCPU", PART_RUN, 0, set_events, 0, 0, 0 },
	{ NULL, 'P', required_argument, "EVENTS",
	    "sample: a process-mode PMC per event, on the guest (pid 1)", PART_RUN, 0,
	    set_events, 0, 0, 0 },
	{ NULL, 's', required_argument, "EVENTS", "count: system mode, per vCPU", PART_RUN,
	    0, set_events, 0, 0, 0 },
	{ NULL, 'p', required_argument, "EVENTS",
	    "count: process mode, the guest (pid 1) on every vCPU", PART_RUN, 0,
	    set_events, 0, 0, 0 },
	{ NULL, 'n', required_argument, "RATE",
	    "one sample every RATE events (default " STR(VS_RATE_DEFAULT) ")", PART_RUN,
	    F_RUN, set_num, FIELD(o.rate), 1, UINT64_C(1) << 62 },
	{ NULL, 'N', no_argument, NULL, "no call chains (the sampled PC only)", PART_RUN,
	    F_RUN, set_toggle, FIELD(o.callchain), 0, 0 },
	{ NULL, 'O', required_argument, "LOG",
	    "keep the pmclog log in LOG (default: a temporary file)", PART_RUN, F_RUN,
	    set_str, FIELD(o.log), 0, 0 },
	{ NULL, 'w', required_argument, "SECS",
	    "print the counts every SECS seconds (default 5; 0: at the end only)",
	    PART_RUN, F_RUN | F_UINT, set_num, FIELD(o.wait_s), 0, 86400 },
	{ NULL, 'C', no_argument, NULL,
	    "cumulative counts in those rows (default: since the last row)", PART_RUN,
	    F_RUN, set_toggle, FIELD(o.cumulative), 0, 0 },
	{ NULL, 'c', required_argument, "CPUS",
	    "the vCPUs of the -S/-s after it: 0,2 or 0-3 or * (default *)", PART_RUN, 0,
	    set_cpus, 0, 0, 0 },
	{ NULL, 'o', required_argument, "FILE",
	    "counts and report to FILE (default: standard error)", PART_RUN, F_RUN,
	    set_str, FIELD(o.out), 0, 0 },
	{ "json", 'j', no_argument, NULL,
	    "the counts as JSON, one object a line (as perf stat -j)", PART_RUN, F_RUN,
	    set_format, 0, 0, 0 },
	{ "field-separator", 'x', required_argument, "SEP",
	    "the counts as CSV, fields separated by the\n"
	    "character SEP (as perf stat -x)", PART_RUN, F_RUN, set_format, 0, 0, 0 },
	{ "tunable", 0, required_argument, "NAME=VALUE",
	    "an hwpmc tunable (callchaindepth, nsamples, ...)", PART_RUN, F_RUN,
	    set_tunable, 0, 0, 0 },
	{ "from-mark", 0, required_argument, "N",
	    "start the PMCs when the guest takes mark N (an OUT of N\n"
	    "to port 0xf6), not at the start", PART_RUN, F_RUN, set_num,
	    FIELD(o.from_mark), 0, UINT32_MAX },
	{ "to-mark", 0, required_argument, "N", "stop them when it takes mark N", PART_RUN,
	    F_RUN, set_num, FIELD(o.to_mark), 0, UINT32_MAX },
	{ "guest-kallsyms", 0, no_argument, NULL,
	    "a Linux guest's kernel symbols from its own table in guest\n"
	    "memory (kallsyms; a bzImage's default without --guest-symbols)", PART_RUN,
	    F_RUN, set_true, FIELD(o.guest_kallsyms), 0, 0 },
	{ "save-guest-symbols", 0, required_argument, "FILE",
	    "those symbols, as /proc/kallsyms lists them", PART_RUN, F_RUN,
	    set_save_ksyms, 0, 0, 0 },

	{ NULL, 'R', required_argument, "LOG", "the top functions of each event", PART_READ,
	    0, set_str, FIELD(rlog), 0, 0 },
	{ "elf", 0, required_argument, "FILE", "symbols from FILE (the guest's ELF)",
	    PART_READ, 0, set_str, FIELD(elf), 0, 0 },
	{ "dump", 0, no_argument, NULL, "also print every record", PART_READ, 0, set_true,
	    FIELD(dump), 0, 0 },
	{ NULL, 'c', required_argument, "CPUS", "only the samples of these CPUs", PART_READ,
	    F_HELP_ONLY, NULL, 0, 0, 0 },

	{ "guest-symbols", 0, required_argument, "FILE",
	    "a Linux guest's kernel symbols: a System.map, a copy of\n"
	    "/proc/kallsyms or a vmlinux; slid by the guest's LSTAR", PART_BOTH, 0,
	    set_str, FIELD(gsyms), 0, 0 },
	{ "kaslr-slide", 0, required_argument, "N",
	    "the kernel's KASLR slide, a multiple of 0x200000", PART_BOTH, 0, set_slide, 0,
	    0, 0 },
	{ "guest-modules", 0, required_argument, "FILE",
	    "a copy of the guest's /proc/modules: module addresses", PART_BOTH, 0, set_str,
	    FIELD(modules), 0, 0 },
	{ "guest-module-dir", 0, required_argument, "DIR",
	    "the modules' .ko files, under DIR: their functions", PART_BOTH, 0, set_str,
	    FIELD(moddir), 0, 0 },
	{ NULL, 'G', required_argument, "FILE", "call graph (caller -> callee counts)",
	    PART_BOTH, 0, set_str, FIELD(outs.graph.path), 0, 0 },
	{ "folded", 0, required_argument, "FILE", "folded stacks (\"main;work;hot 123\")",
	    PART_BOTH, 0, set_str, FIELD(outs.folded.path), 0, 0 },
	{ "svg", 0, required_argument, "FILE",
	    "a flame graph (click to zoom, Ctrl-F to search)", PART_BOTH, 0, set_str,
	    FIELD(outs.svg.path), 0, 0 },
	{ "perf-script", 0, required_argument, "FILE",
	    "the samples as perf script prints them", PART_BOTH, 0, set_str,
	    FIELD(outs.perf.path), 0, 0 },
	{ "pprof", 0, required_argument, "FILE", "a pprof profile (gzipped profile.proto)",
	    PART_BOTH, 0, set_str, FIELD(outs.pprof.path), 0, 0 },
	{ "quiet", 'q', no_argument, NULL, "quiet: no report, no warnings; errors only",
	    PART_BOTH, F_SHORT_HELP, set_true, FIELD(outs.quiet), 0, 0 },
	{ "event", 0, required_argument, "NAME",
	    "the event of the files (default: the first sampled; --perf-script: all)",
	    PART_BOTH, 0, set_str, FIELD(o.event), 0, 0 },
	{ "top", 0, required_argument, "N",
	    "functions in the report (default " STR(TOP_DEFAULT) "; 0: all)", PART_BOTH, F_UINT,
	    set_num, FIELD(o.top), 0, 1000000 },

	{ "list-events", 0, no_argument, NULL, NULL, PART_NONE, 0, set_true, FIELD(list), 0, 0 },
	{ "help", 'h', no_argument, NULL, NULL, PART_NONE, 0, set_help, 0, 0, 0 },
	{ "version", 0, no_argument, NULL, NULL, PART_NONE, 0, set_version, 0, 0, 0 },
};

static_assert(NELEM(vs_opts) < O_RUN - O_OWN, "vs_opts[] fits below O_RUN");

/* The lines of part's options, as runopts.c prints the run's. */
static void
usage_part(FILE *f, enum part part)
{
	const struct vs_opt *p;
	char left[48];
	const char *h, *nl, *l;
	bool longname;
	int n;

	for (p = vs_opts; p < vs_opts + NELEM(vs_opts); p++) {
		if (p->part != part)
			continue;
		/* "-j, --json", "-n RATE", "--top N"; "-q" without its long name */
		longname = p->name != NULL && !(p->shortopt && (p->flags & F_SHORT_HELP));
		n = p->shortopt ? snprintf(left, sizeof(left), "-%c%s", p->shortopt,
		    longname ? ", " : "") : 0;
		snprintf(left + n, sizeof(left) - (size_t)n, "%s%s%s%s", longname ? "--" : "",
		    longname ? p->name : "", p->arg ? " " : "", p->arg ? p->arg : "");
		/* the help in a column, or two spaces after a left side that reaches it */
		for (h = p->help; ; h = nl + 1) {
			nl = strchr(h, '\n');
			l = h == p->help ? left : "";
			fprintf(f, strlen(l) >= 16 ? "  %s  %.*s\n" : "  %-16s %.*s\n", l,
			    nl ? (int)(nl - h) : (int)strlen(h), h);
			if (nl == NULL)
				break;
		}
	}
}

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
	    "image, a Linux bzImage) under sampling or counting PMCs:\n");
	usage_part(f, PART_RUN);
	fprintf(f, "the run's options, as vpmu-run's (vpmu-run(1)):\n");
	vr_runopts_usage(f, false);
	fprintf(f, "read a log (report to standard output; to standard error when a FILE is "
	    "-):\n");
	usage_part(f, PART_READ);
	fprintf(f, "and in both modes:\n");
	usage_part(f, PART_BOTH);
	fprintf(f,
	    "EVENT: instructions, branches, cycles, ref-cycles; a raw code 0xUUEE;\n"
	    "or a libpfm4 name of the model's vendor (--list-events)\n"
	    "A FILE - is standard output (one at most; in a run the guest's console then\n"
	    "goes to standard error); LOG -, --initrd - are standard input\n");
}

int
vs_bad(const char *fmt, const char *a, const char *b)
{
	fprintf(stderr, "vpmustat: ");
	fprintf(stderr, fmt, a, b);
	fprintf(stderr, "\n");
	vr_usage_try();
	return (VS_EXIT_USAGE);
}

/* The option as its messages name it: "-n", "--top". */
static const char *
opt_label(const struct vs_opt *opt, char *buf, size_t len)
{
	if (opt->shortopt)
		snprintf(buf, len, "-%c", opt->shortopt);
	else
		snprintf(buf, len, "--%s", opt->name);
	return (buf);
}

/* A whole decimal number in [opt->min, opt->max]: 0, or a usage error. */
static int
num(const struct vs_opt *opt, const char *s, uint64_t *out)
{
	uint64_t min = opt->min, max = opt->max;
	unsigned long long v;
	char *end, label[32];

	errno = 0;
	v = strtoull(s, &end, 10);
	if (*s < '0' || *s > '9' || *end != '\0' || errno != 0 || v < min || v > max) {
		fprintf(stderr, "vpmustat: %s %s: want a number from %" PRIu64 " to %"
		    PRIu64 "\n", opt_label(opt, label, sizeof(label)), s, min, max);
		vr_usage_try();
		return (VS_EXIT_USAGE);
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

int
vs_tunables_check(vpmu_config *cfg)
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

/* ---- the handlers: 0, or the exit status after a message ------------------------------ */

/* A string, kept (a path, a name). */
static int
set_str(struct vs_cmdline *cl, const struct vs_opt *opt, const char *arg)
{
	*(const char **)(void *)((char *)cl + opt->field) = arg;
	return (0);
}

static int
set_true(struct vs_cmdline *cl, const struct vs_opt *opt, const char *arg)
{
	(void)arg;
	*(bool *)(void *)((char *)cl + opt->field) = true;
	return (0);
}

/* pmcstat's toggles, -N and -C: each one flips. */
static int
set_toggle(struct vs_cmdline *cl, const struct vs_opt *opt, const char *arg)
{
	bool *b = (bool *)(void *)((char *)cl + opt->field);

	(void)arg;
	*b = !*b;
	return (0);
}

/* -S, -s, -P, -p: the events resolved once every option is in (main.c). */
static int
set_events(struct vs_cmdline *cl, const struct vs_opt *opt, const char *arg)
{
	int ch = opt->shortopt;

	if (cl->nspecs == VS_MAX_EVENTS)
		return (vs_bad("at most %s event options%s", "16", ""));
	cl->specs[cl->nspecs].scope = ch == 'S' ? VS_SS : ch == 's' ? VS_SC :
	    ch == 'P' ? VS_TS : VS_TC;
	cl->specs[cl->nspecs].list = arg;
	/* pmcstat's -c: the system-mode PMCs that follow it */
	cl->specs[cl->nspecs++].cpus = ch == 'S' || ch == 's' ? cl->cpus : NULL;
	if (ch == 'S' || ch == 's')
		cl->pending_c = NULL;
	return (0);
}

static int
set_cpus(struct vs_cmdline *cl, const struct vs_opt *opt, const char *arg)
{
	(void)opt;
	if (cl->ncpusets == VS_MAX_EVENTS)
		return (vs_bad("at most %s -c options%s", "16", ""));
	if (cpuset_parse(arg, &cl->cpusets[cl->ncpusets]) < 0)
		return (vs_bad("-c %s: want CPU numbers from 0 to 65535 and "
		    "ranges N-M, joined by commas, or *%s", arg, ""));
	/* "*": every CPU, as without -c */
	cl->cpus = cl->cpusets[cl->ncpusets].n == 0 ? NULL : &cl->cpusets[cl->ncpusets];
	cl->ncpusets++;
	cl->pending_c = arg;
	return (0);
}

/* -n, -w, --top, --from-mark, --to-mark: a number, into 64 bits or (F_UINT) an unsigned. */
static int
set_num(struct vs_cmdline *cl, const struct vs_opt *opt, const char *arg)
{
	void *f = (char *)cl + opt->field;
	uint64_t v;
	int ret;

	if ((ret = num(opt, arg, &v)) != 0)
		return (ret);
	if (opt->flags & F_UINT)
		*(unsigned *)f = (unsigned)v;
	else
		*(uint64_t *)f = v;	/* o.rate; o.from_mark, o.to_mark are int64_t */
	return (0);
}

static int
set_save_ksyms(struct vs_cmdline *cl, const struct vs_opt *opt, const char *arg)
{
	(void)opt;
	cl->o.save_ksyms = arg;
	cl->o.guest_kallsyms = true;	/* what it saves */
	return (0);
}

/* A KASLR slide: a number, 0 or more, a multiple of 2 MiB. */
static int
set_slide(struct vs_cmdline *cl, const struct vs_opt *opt, const char *arg)
{
	unsigned long long v;
	char *end;

	(void)opt;
	errno = 0;
	v = strtoull(arg, &end, 0);
	if (*arg < '0' || *arg > '9' || *end != '\0' || errno != 0 || v % VS_KASLR_ALIGN != 0)
		return (vs_bad("--kaslr-slide %s: want a multiple of 0x200000 (2 MiB), "
		    "such as 0x1e00000%s", arg, ""));
	cl->slide = arg;
	return (0);
}

/* --tunable NAME=VALUE: the name checked against libvpmu's as it comes. */
static int
set_tunable(struct vs_cmdline *cl, const struct vs_opt *opt, const char *arg)
{
	(void)opt;
	return (add_tunable(&cl->o, cl->tuncfg, (char *)arg));
}

/* -j, -x SEP: one format. */
static int
set_format(struct vs_cmdline *cl, const struct vs_opt *opt, const char *arg)
{
	int fmt = opt->shortopt == 'j' ? VR_FMT_JSON : VR_FMT_CSV;

	if (opt->shortopt == 'x' && vr_parse_sep("-x", arg, &cl->o.sep) < 0) {
		vr_usage_try();
		return (VS_EXIT_USAGE);
	}
	if (cl->o.fmt != VR_FMT_TEXT && cl->o.fmt != fmt)
		return (vs_bad("-j and -x: one format at most%s%s", "", ""));
	cl->o.fmt = fmt;
	return (0);
}

static int
set_help(struct vs_cmdline *cl, const struct vs_opt *opt, const char *arg)
{
	(void)cl;
	(void)opt;
	(void)arg;
	usage(stdout);
	exit(vs_stdout_flush(true) == 0 ? 0 : VS_EXIT_HOST);
}

static int
set_version(struct vs_cmdline *cl, const struct vs_opt *opt, const char *arg)
{
	(void)cl;
	(void)opt;
	(void)arg;
	exit(vr_print_version("vpmustat"));
}

/* ---- the command line ------------------------------------------------------------------- */

int
vs_cmdline_init(struct vs_cmdline *cl)
{
	int e;

	memset(cl, 0, sizeof(*cl));
	cl->outs.graph.opt = "-G";
	cl->outs.folded.opt = "--folded";
	cl->outs.svg.opt = "--svg";
	cl->outs.perf.opt = "--perf-script";
	cl->outs.pprof.opt = "--pprof";
	cl->o.rate = VS_RATE_DEFAULT;
	cl->o.callchain = true;
	cl->o.wait_s = 5;
	cl->o.top = TOP_DEFAULT;
	cl->o.from_mark = cl->o.to_mark = -1;
	vr_runopts_init(&cl->o.run);
	cl->o.outs = &cl->outs;
	/* --tunable names are checked against libvpmu's as they come. */
	if ((e = vpmu_config_create(&cl->tuncfg)) != 0) {
		fprintf(stderr, "vpmustat: vpmu_config_create: %s\n", vpmu_strerror(e));
		return (VS_EXIT_HOST);
	}
	return (0);
}

int
vs_cmdline_parse(struct vs_cmdline *cl, int argc, char **argv)
{
	/* vpmustat's own options, then the run's: none of them own (vpmu-run's) */
	struct option longopts[NELEM(vs_opts) + VR_O_NOPTS + 1];
	char shortopts[2 * NELEM(vs_opts) + 1], *s = shortopts;
	const struct vs_opt *opt;
	size_t i, n = 0;
	int ch, ret;

	memset(longopts, 0, sizeof(longopts));
	for (i = 0; i < NELEM(vs_opts); i++) {
		opt = &vs_opts[i];
		if (opt->flags & F_HELP_ONLY)
			continue;
		if (opt->name != NULL) {
			longopts[n].name = opt->name;
			longopts[n].has_arg = opt->has_arg;
			longopts[n++].val = O_OWN + (int)i;
		}
		if (opt->shortopt) {
			*s++ = (char)opt->shortopt;
			if (opt->has_arg)
				*s++ = ':';
		}
	}
	*s = '\0';
	(void)vr_runopts_longopts(longopts + n, NULL, false, O_RUN);

	while ((ch = getopt_long(argc, argv, shortopts, longopts, NULL)) != -1) {
		/* The run's options: --pmu goes with --list-events too. */
		if (ch >= O_RUN && ch < O_RUN + VR_O_NOPTS) {
			if (vr_runopts_parse(ch - O_RUN, optarg, &cl->o.run) < 0) {
				vr_usage_try();
				return (VS_EXIT_USAGE);
			}
			cl->live_only |= ch != O_RUN + VR_O_PMU;
			continue;
		}
		/* A short option: the table's entry that has it. */
		for (i = 0; ch < O_OWN && i < NELEM(vs_opts); i++)
			if (vs_opts[i].shortopt == ch && !(vs_opts[i].flags & F_HELP_ONLY)) {
				ch = O_OWN + (int)i;
				break;
			}
		if (ch < O_OWN || ch >= O_OWN + (int)NELEM(vs_opts)) {
			vr_usage_try();		/* getopt_long said why */
			return (VS_EXIT_USAGE);
		}
		opt = &vs_opts[ch - O_OWN];
		if ((ret = opt->set(cl, opt, optarg)) != 0)
			return (ret);
		cl->live_only |= (opt->flags & F_RUN) != 0;
	}
	return (0);
}
