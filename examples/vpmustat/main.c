/*
 * vpmustat -- pmcstat(8) for a guest.  See vpmustat(1).
 *
 *   vpmustat [-c CPUS] -S EVENT[,EVENT...] [-n RATE] [-N] [-O LOG] [vpmu-run options] GUEST.elf
 *   vpmustat [-c CPUS] -s|-p EVENT[,EVENT...] [-w SECS] [-C] [vpmu-run options] GUEST.elf
 *   vpmustat -R LOG [--elf GUEST.elf] [-c CPUS] [-q] [-G FILE] [--folded FILE] [--svg FILE]
 *       [--perf-script FILE] [--pprof FILE]
 *
 * The first forms run the guest (live.c); -R reads a log (here, with
 * logread.c).  The options are parsed by options.c: vpmustat's own from
 * its table, the run's (--pmu, --source, --vcpus, --mem, --initrd,
 * --append, --timeout, ...) from vpmu-run's (runopts.c).  This file says
 * what they ask for together: everything that can be checked is checked
 * first (events, -c, --tunable values), then the files of -G, --folded,
 * --svg, --perf-script and --pprof are opened (output.c),
 * then the work; both modes end in vs_outputs(): the top-functions report
 * and those files, if the work succeeded.  What is not written is
 * discarded once, at the end of main().
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

/* ---- standard input and output ---------------------------------------------------- */

/* An input read by name: "-" is refused, not taken for a file of that name. */
static int
by_name(const char *opt, const char *path)
{
	if (path == NULL || strcmp(path, "-") != 0)
		return (0);
	return (vs_bad("%s -: read by name, not from standard input: give a path%s", opt, ""));
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
		return (vs_bad("%s - and %s -: one output at most on standard output", first,
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
	return (vs_bad("--event %s: not an event of -S or -P in this run%s", o->event, ""));
}

/* ---- main ------------------------------------------------------------------------------------ */

/* "a,b,c" for scope: each resolved now, so a bad name is a usage error. */
static int
add_events(struct vs_live_opts *o, int scope, const char *list, unsigned vendor,
    const struct vs_cpuset *cpus)
{
	char buf[1024], err[320], *tok, *save = NULL;

	if (strlen(list) >= sizeof(buf))
		return (vs_bad("event list too long: %.40s%s...", list, ""));
	snprintf(buf, sizeof(buf), "%s", list);
	for (tok = strtok_r(buf, ",", &save); tok != NULL; tok = strtok_r(NULL, ",", &save)) {
		if (o->nev == VS_MAX_EVENTS)
			return (vs_bad("at most %s events%s", "16", ""));
		if (vs_event_parse(tok, vendor, &o->ev[o->nev], err, sizeof(err)) < 0)
			return (vs_bad("event %s%s", err, ""));
		o->ev[o->nev].cpus = cpus;
		o->ev[o->nev++].scope = scope;
	}
	if (o->nev == 0 || list[0] == '\0' || list[strlen(list) - 1] == ',')
		return (vs_bad("an empty event in \"%s\"%s", list, ""));
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
	/* static: reachable, not a leak, on the early returns below (cl.tuncfg) */
	static struct vs_cmdline cl;
	static struct vs_ksyms ksyms;
	struct vs_live_opts *o = &cl.o;
	struct vpmu_model model;
	char err[256];
	unsigned i;
	bool sampling = false, counting = false;
	int ret;

	if ((ret = vs_cmdline_init(&cl)) != 0 ||
	    (ret = vs_cmdline_parse(&cl, argc, argv)) != 0)
		return (ret);

	if (vpmu_model_parse(o->run.pmu, &model, err, sizeof(err)) != 0)
		return (vs_bad("--pmu %s: %s", o->run.pmu, err));
	if (cl.list) {
		if (cl.rlog != NULL || cl.nspecs != 0 || optind != argc)
			return (vs_bad("--list-events takes no other action%s%s", "", ""));
		vs_event_list(stdout, model.vendor);
		return (vs_stdout_flush(true) == 0 ? 0 : VS_EXIT_HOST);
	}

	if ((cl.modules != NULL || cl.moddir != NULL) && cl.gsyms == NULL)
		return (vs_bad("--guest-modules and --guest-module-dir go with --guest-symbols "
		    "(the kernel's symbols)%s%s", "", ""));
	if (cl.moddir != NULL && cl.modules == NULL)
		return (vs_bad("--guest-module-dir %s: the modules' addresses come from "
		    "--guest-modules (a copy of /proc/modules)%s", cl.moddir, ""));
	if (cl.gsyms != NULL && (o->guest_kallsyms || o->save_ksyms != NULL))
		return (vs_bad("--guest-symbols %s: the kernel's symbols come from that file, "
		    "not from guest memory (--guest-kallsyms, --save-guest-symbols)%s",
		    cl.gsyms, ""));
	if (cl.slide != NULL && cl.gsyms == NULL)
		return (vs_bad("--kaslr-slide %s moves --guest-symbols' addresses: give "
		    "that file%s", cl.slide, ""));
	/* Read by name (libelf, or more than once): no standard input there. */
	if ((ret = by_name("--elf", cl.elf)) != 0 ||
	    (ret = by_name("--guest-symbols", cl.gsyms)) != 0 ||
	    (ret = by_name("--guest-modules", cl.modules)) != 0 ||
	    (ret = by_name("--guest-module-dir", cl.moddir)) != 0)
		return (ret);
	if (cl.rlog != NULL) {
		if (cl.nspecs != 0 || cl.live_only)
			return (vs_bad("-R reads a log: -S/-s/-P/-p and the run's options "
			    "(-n -N -C -O -w -o -j -x --source ...) do not go with it%s%s", "",
			    ""));
		if (optind != argc)
			return (vs_bad("-R reads a log: no guest to run (\"%s\")%s",
			    argv[optind], ""));
		if (cl.ncpusets > 1)
			return (vs_bad("-R reads a log: one -c at most%s%s", "", ""));
		vpmu_config_destroy(cl.tuncfg);
		cl.tuncfg = NULL;
		ret = read_log(cl.rlog, cl.elf, cl.dump, o->top, o->event, &cl.outs, cl.cpus,
		    load_ksyms(&ksyms, cl.gsyms, cl.slide, cl.modules, cl.moddir,
		    cl.outs.quiet));
		goto done;
	}
	if (cl.elf != NULL || cl.dump)
		return (vs_bad("--elf and --dump go with -R (a run reads its guest's "
		    "symbols)%s%s", "", ""));
	if (cl.nspecs == 0)
		return (vs_bad("nothing to do: give -S, -s, -P or -p and a guest, or -R%s%s",
		    "", ""));
	if (cl.pending_c != NULL)
		return (vs_bad("-c %s: it sets the vCPUs of the -S and -s options after it, "
		    "and none follows%s", cl.pending_c, ""));
	if (optind != argc - 1)
		return (vs_bad(optind == argc ? "no guest ELF given%s%s" :
		    "one guest ELF only (\"%s\" too)%s", argv[argc - 1], ""));
	o->run.guest = argv[optind];
	if (strcmp(o->run.guest, "-") == 0)
		return (vs_bad("the guest -: vpmustat reads its guest by name, more than once "
		    "(its image, its symbols, its identity in the log): give a path%s%s", "",
		    ""));
	for (i = 0; i < cl.nspecs; i++) {
		if ((ret = check_cpus(cl.specs[i].cpus, o->run.vcpus)) != 0 ||
		    (ret = add_events(o, cl.specs[i].scope, cl.specs[i].list, model.vendor,
		    cl.specs[i].cpus)) != 0)
			return (ret);
		sampling |= cl.specs[i].scope == VS_SS || cl.specs[i].scope == VS_TS;
	}
	for (i = 0; i < o->nev; i++)
		counting |= o->ev[i].scope == VS_SC || o->ev[i].scope == VS_TC;
	if (o->fmt != VR_FMT_TEXT && !counting)
		return (vs_bad("-j and -x format the counts of -s and -p: give one%s%s", "",
		    ""));
	if (o->event != NULL && (ret = check_event(o)) != 0)
		return (ret);
	/* Standard output: one output at most, and then not the guest's console. */
	if ((ret = stdout_outputs(o, &cl.outs)) != 0)
		return (ret);
	if (vs_outs_any(&cl.outs) && !sampling)
		return (vs_bad("-G, --folded and --svg draw samples: give -S or -P%s%s", "",
		    ""));
	if (o->ntunables != 0 && (ret = vs_tunables_check(cl.tuncfg)) != 0)
		return (ret);
	vpmu_config_destroy(cl.tuncfg);
	cl.tuncfg = NULL;
	o->ksyms = load_ksyms(&ksyms, cl.gsyms, cl.slide, cl.modules, cl.moddir,
	    cl.outs.quiet);
	/* The files before the guest boots: a bad path fails before the run. */
	ret = vs_outs_open(&cl.outs) < 0 ? VS_EXIT_USAGE : vs_live(o);
done:
	vs_ksyms_free(&ksyms);
	vs_outs_discard(&cl.outs);	/* what was opened and not written */
	vr_runopts_close(&o->run);
	if (vs_stdout_flush(true) < 0 && ret == 0)
		ret = VS_EXIT_HOST;
	return (ret);
}
