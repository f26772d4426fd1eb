/*
 * output.c -- the files -G, --folded, --svg, --perf-script and --pprof write,
 * and standard output.
 *
 * A run may take hours and a log may be large, so every file is opened
 * before the work: a path that cannot be written fails at once, not after
 * the profile is taken.  The files are written only if the work succeeds:
 *
 *   opened     a new file is created (O_EXCL, so vpmustat knows it made
 *              it); an existing one is opened as it is, not truncated, so
 *              a failed run leaves it untouched; a FIFO or a device (not a
 *              regular file) is opened for writing as fopen() would
 *   written    a regular file is truncated, then written; the write is
 *              checked (fflush, ferror, fclose): a file cut short by an
 *              error (a full disk) is removed, and the status is 1
 *   discarded  the run or the read failed, or vs_outputs() did not write
 *              them: main() discards what is still open, once, at the
 *              end; what vpmustat created is removed, what was there is
 *              left as it was
 *
 * Standard output ("-", the -R report, a run's guest console) is checked
 * once at the end: a write that failed is an error too.  With -q (quiet)
 * there is no report and no warning: a file written to standard output
 * ("-") is all that goes there.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "vpmustat.h"

static int stdout_errno;	/* the first failed flush of standard output */

/* An errno's text; -1: a write failed whose errno is not known. */
static const char *
why(int err)
{
	return (err > 0 ? strerror(err) : "a write failed");
}

int
vs_fclose(FILE *f, const char *opt, const char *path)
{
	int err = 0;

	if (fflush(f) != 0)
		err = errno;
	else if (ferror(f))
		err = -1;	/* an earlier write failed; its errno is gone */
	if (fclose(f) != 0 && err == 0)
		err = errno;
	if (err == 0)
		return (0);
	fprintf(stderr, "vpmustat: %s %s: %s\n", opt, path, why(err));
	return (-1);
}

static struct vs_out *
out_at(struct vs_outs *o, int i)
{
	struct vs_out *const at[VS_NOUTS] = { &o->graph, &o->folded, &o->svg, &o->perf,
	    &o->pprof };

	return (at[i]);
}

bool
vs_outs_any(const struct vs_outs *o)
{
	return (o->graph.path != NULL || o->folded.path != NULL || o->svg.path != NULL ||
	    o->perf.path != NULL || o->pprof.path != NULL);
}

bool
vs_outs_stdout(struct vs_outs *o)
{
	int i;

	for (i = 0; i < VS_NOUTS; i++)
		if (out_at(o, i)->path != NULL && strcmp(out_at(o, i)->path, "-") == 0)
			return (true);
	return (false);
}

static int
out_open(struct vs_out *o)
{
	struct stat sb;
	int fd;

	if (strcmp(o->path, "-") == 0) {
		o->f = stdout;
		return (0);
	}
	if ((fd = open(o->path, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0666)) >= 0)
		o->created = true;
	else if (errno != EEXIST)
		goto fail;
	else if ((fd = open(o->path, O_WRONLY | O_CLOEXEC)) < 0) {
		/*
		 * ENOENT: a symbolic link to nothing, or a file removed since:
		 * created as fopen() would, through the link, and not removed
		 * (the path may name the link).
		 */
		if (errno != ENOENT ||
		    (fd = open(o->path, O_WRONLY | O_CREAT | O_CLOEXEC, 0666)) < 0)
			goto fail;
	}
	o->regular = fstat(fd, &sb) == 0 && S_ISREG(sb.st_mode);
	if ((o->f = fdopen(fd, "w")) == NULL) {
		close(fd);
		if (o->created)
			(void)unlink(o->path);
		o->created = false;
		goto fail;
	}
	return (0);
fail:
	fprintf(stderr, "vpmustat: %s %s: %s\n", o->opt, o->path, strerror(errno));
	return (-1);
}

int
vs_outs_open(struct vs_outs *o)
{
	const char *first = NULL;
	int i;

	/* One file at most on standard output: two would be mixed. */
	for (i = 0; i < VS_NOUTS; i++)
		if (out_at(o, i)->path != NULL && strcmp(out_at(o, i)->path, "-") == 0) {
			if (first != NULL) {
				fprintf(stderr, "vpmustat: %s - and %s -: one file at most on "
				    "standard output\n", first, out_at(o, i)->opt);
				return (-1);
			}
			first = out_at(o, i)->opt;
		}
	for (i = 0; i < VS_NOUTS; i++)
		if (out_at(o, i)->path != NULL && out_open(out_at(o, i)) < 0)
			return (-1);
	return (0);
}

void
vs_outs_discard(struct vs_outs *o)
{
	struct vs_out *out;
	int i;

	for (i = 0; i < VS_NOUTS; i++) {
		out = out_at(o, i);
		if (out->f == NULL)
			continue;
		if (out->f != stdout) {
			fclose(out->f);
			if (out->created)
				(void)unlink(out->path);
		}
		out->f = NULL;
		out->created = false;
	}
}

/* Ready to be written: a regular file that was there is truncated now. */
static FILE *
out_begin(struct vs_out *o)
{
	if (o->f != stdout && o->regular && !o->created &&
	    ftruncate(fileno(o->f), 0) != 0) {
		fprintf(stderr, "vpmustat: %s %s: %s\n", o->opt, o->path, strerror(errno));
		return (NULL);		/* left for vs_outs_discard() */
	}
	return (o->f);
}

/* Written: every byte out, or a message, the file removed and -1. */
static int
out_end(struct vs_out *o)
{
	FILE *f = o->f;

	o->f = NULL;
	if (f == stdout)
		return (vs_stdout_flush(false));
	if (vs_fclose(f, o->opt, o->path) == 0)
		return (0);
	if (o->regular)
		(void)unlink(o->path);	/* cut short: no half file */
	return (-1);
}

/*
 * A failed flush gives its errno; a stream whose error flag an earlier
 * write set (the guest's console, flushed by run.c) does not.
 */
int
vs_stdout_flush(bool last)
{
	if (fflush(stdout) != 0 && stdout_errno == 0)
		stdout_errno = errno;
	if (!ferror(stdout))
		return (0);
	if (last)
		fprintf(stderr, "vpmustat: standard output: %s\n",
		    why(stdout_errno != 0 ? stdout_errno : -1));
	return (-1);
}

/* A warning when -G, --folded and --svg can show no caller. */
static void
flat_warning(const struct vs_evprof *e)
{
	if (e->samples == 0 || e->nedges != 0)
		return;
	if (e->nochain == e->samples)
		fprintf(stderr, "vpmustat: warning: event %s was sampled without call "
		    "chains (-N): -G, --folded and --svg show no callers\n", e->name);
	else
		fprintf(stderr, "vpmustat: warning: every call chain of event %s is one "
		    "frame deep: -G, --folded and --svg show no callers; build the guest "
		    "with -fno-omit-frame-pointer (and -mno-omit-leaf-frame-pointer)\n",
		    e->name);
}

int
vs_outputs(const struct vs_profile *p, FILE *report, unsigned top, const char *event,
    struct vs_outs *o, bool write, const char *title)
{
	static const struct vs_evprof none = { .name = "(none)" };
	const struct vs_evprof *e;
	struct vs_out *out;
	const char *base;
	char t[256];
	FILE *f;
	bool failed;
	int i, ret = 0;

	if (!o->quiet) {
		vs_report(report, p, top);
		if (report == stdout)
			(void)vs_stdout_flush(false);
		else
			fflush(report);
	}
	if (p->error[0] != '\0')
		return (VS_EXIT_HOST);	/* the log is bad or cut: no files */
	if (!vs_outs_any(o) || !write)
		return (0);
	if ((e = vs_profile_event(p, event)) == NULL) {
		if (event != NULL) {
			fprintf(stderr, "vpmustat: --event %s: no samples of it in the log: "
			    "-G, --folded and --svg not written\n", event);
			return (VS_EXIT_USAGE);
		}
		if (!o->quiet)
			fprintf(stderr, "vpmustat: no samples in the log: -G, --folded and "
			    "--svg are empty\n");
		e = &none;
	}
	if (!o->quiet)
		flat_warning(e);
	for (i = 0; i < VS_NOUTS; i++) {
		out = out_at(o, i);
		if (out->path == NULL)
			continue;
		if ((f = out_begin(out)) == NULL) {
			ret = VS_EXIT_HOST;
			continue;
		}
		failed = false;
		if (out == &o->graph)
			vs_callgraph(f, e);
		else if (out == &o->folded)
			vs_folded(f, e);
		else if (out == &o->perf)
			vs_perf_script(f, p, event != NULL ? e : NULL);
		else if (out == &o->pprof)
			failed = vs_pprof(f, p, e) < 0;
		else {
			base = strrchr(title, '/') != NULL ? strrchr(title, '/') + 1 : title;
			snprintf(t, sizeof(t), "Flame graph: %s", base);
			vs_flamegraph(f, e, t);
		}
		if (out_end(out) < 0)
			ret = VS_EXIT_HOST;
		else if (failed) {
			if (out->regular)
				(void)unlink(out->path);	/* no half file */
			ret = VS_EXIT_HOST;
		} else if (out == &o->svg && strcmp(out->path, "-") != 0 && !o->quiet)
			fprintf(report, "vpmustat: flame graph: %s\n", out->path);
	}
	return (ret);
}
