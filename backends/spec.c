/*
 * spec.c -- a configuration by name: vpmu_config_set_option() sets one
 * option ("source", "exact-mode", ...), vpmu_config_parse() a whole spec
 * string of them ("intel-v2:gp=4,source=exact,exact-mode=step").  The
 * grammar is vpmu_config(3)'s SPEC STRINGS; vpmu-run's and vpmustat's
 * options are these options.
 *
 * It lives with the backends because it finds sources by name (sources.c);
 * the core's setters do the checking they always do.
 */
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "internal.h"
#include "sources.h"
#include <vpmu/pv.h>

#define FILTER_FILE_MAX	(1u << 24)	/* bytes of an event filter file */

static int
want(char *why, size_t whylen, const char *fmt, ...)
{
	va_list ap;

	if (why != NULL && whylen > 0) {
		va_start(ap, fmt);
		vsnprintf(why, whylen, fmt, ap);
		va_end(ap);
	}
	return (EINVAL);
}

/* "p: " before the reason in why. */
static void
prefix(char *why, size_t whylen, const char *p)
{
	size_t n = strlen(p) + 2;

	if (why == NULL || whylen <= n)
		return;
	memmove(why + n, why, whylen - n);
	why[whylen - 1] = '\0';
	memcpy(why, p, n - 2);
	memcpy(why + n - 2, ": ", 2);
}

/* A whole number in [min, max], decimal (base 10) or C syntax (base 0). */
static int
number(const char *v, int base, unsigned long long min, unsigned long long max,
    unsigned long long *out, char *why, size_t whylen)
{
	unsigned long long n;
	char *end;

	errno = 0;
	n = strtoull(v, &end, base);
	if (*v < '0' || *v > '9' || *end != '\0' || errno != 0 || n < min || n > max) {
		if (why != NULL && whylen > 0)
			snprintf(why, whylen, "want a number from %llu to %llu", min, max);
		return (EINVAL);
	}
	*out = n;
	return (0);
}

static int
set_pmu(vpmu_config *cfg, const char *v, char *why, size_t whylen)
{
	struct vpmu_model m;
	int error;

	if ((error = vpmu_model_parse(v, &m, why, whylen)) != 0)
		return (error);
	return (vpmu_config_set_model(cfg, &m));
}

static int
set_source(vpmu_config *cfg, const char *v, char *why, size_t whylen)
{
	const struct vpmu_source_ops *ops;
	size_t i, n;

	if ((ops = vpmu_source_lookup(v)) == NULL) {
		if (why != NULL && whylen > 0) {
			n = (size_t)snprintf(why, whylen, "no such source; there are");
			for (i = 0; (ops = vpmu__source_at(i)) != NULL && n < whylen; i++)
				n += (size_t)snprintf(why + n, whylen - n, " %s", ops->name);
		}
		return (EINVAL);
	}
	if (ops == cfg->source)		/* options given for it are kept */
		return (0);
	return (vpmu_config_set_source(cfg, ops, NULL));
}

static int
set_host_counters(vpmu_config *cfg, const char *v, char *why, size_t whylen)
{
	unsigned long long n;

	if (number(v, 10, 1, 4096, &n, why, whylen) != 0)
		return (EINVAL);
	return (vpmu_config_set_capacity(cfg, (unsigned)n));
}

static int
set_mux_interval(vpmu_config *cfg, const char *v, char *why, size_t whylen)
{
	unsigned long long us;

	if (number(v, 10, 1, 10000000, &us, why, whylen) != 0)
		return (EINVAL);
	return (vpmu_config_set_mux_interval(cfg, us * 1000));
}

static int
set_pv_port(vpmu_config *cfg, const char *v, char *why, size_t whylen)
{
	unsigned long long port;

	if (number(v, 0, 0, 0xFFFF, &port, why, whylen) != 0 ||
	    vpmu_config_set_pv_port(cfg, (uint16_t)port) != 0)
		return (want(why, whylen, "want 0 (no channel) or a base from 0x100 to "
		    "0xfff8"));
	return (0);
}

static int
set_pmu_mode(vpmu_config *cfg, const char *v, char *why, size_t whylen)
{
	static const char *const names[] = { "trap", "kvm", "auto" };
	size_t i;

	for (i = 0; i < VPMU_ARRAY_SIZE(names); i++)
		if (strcmp(v, names[i]) == 0)	/* VPMU_PMU_MODE_TRAP, _KVM, _AUTO */
			return (vpmu_config_set_pmu_mode(cfg, (int)i));
	return (want(why, whylen, "want trap, kvm or auto"));
}

static int
set_uncounted(vpmu_config *cfg, const char *v, char *why, size_t whylen)
{
	if (strcmp(v, "fail") != 0 && strcmp(v, "allow") != 0)
		return (want(why, whylen, "want fail or allow"));
	cfg->uncounted_ok = strcmp(v, "allow") == 0;
	return (0);
}

/* The text of an event filter file, NUL-terminated; NULL with why. */
static char *
read_text(const char *path, char *why, size_t whylen)
{
	char *text = NULL, *t;
	size_t len = 0, cap = 0, n;
	FILE *fp;
	int bad;

	if ((fp = fopen(path, "re")) == NULL) {
		want(why, whylen, "%s", strerror(errno));
		return (NULL);
	}
	do {
		if (cap - len < 4096) {
			if (cap >= FILTER_FILE_MAX || (t = realloc(text, cap + 65536)) == NULL) {
				want(why, whylen, "%s", cap >= FILTER_FILE_MAX ? "too large" :
				    strerror(ENOMEM));
				goto fail;
			}
			text = t;
			cap += 65536;
		}
		n = fread(text + len, 1, cap - len - 1, fp);
		len += n;
	} while (n > 0);
	bad = ferror(fp);
	fclose(fp);
	fp = NULL;
	if (bad) {
		want(why, whylen, "read error");
		goto fail;
	}
	text[len] = '\0';
	if (strlen(text) != len) {
		want(why, whylen, "a NUL byte in the file");
		goto fail;
	}
	return (text);
fail:
	if (fp != NULL)
		fclose(fp);
	free(text);
	return (NULL);
}

/* A preset of the model's vendor ("ipc", "arch"), or a file in vpmu_event_filter(3)'s text. */
static int
set_event_filter(vpmu_config *cfg, const char *v, char *why, size_t whylen)
{
	struct vpmu_event_filter *f;
	char *text;
	int error, ok;

	if (cfg->model.vendor == VPMU_VENDOR_NONE)
		return (want(why, whylen, "the model %s has no PMU to filter", cfg->model.name));
	if ((f = calloc(1, sizeof(*f))) == NULL)
		return (ENOMEM);
	if (vpmu_event_filter_preset(v, cfg->model.vendor, f) != 0) {
		error = EINVAL;
		if ((text = read_text(v, why, whylen)) == NULL)
			goto out;
		error = vpmu_event_filter_parse(text, f, why, whylen);
		free(text);
		if (error != 0)
			goto out;
		if (vpmu_event_filter_allows(f, cfg->model.vendor, 0, &ok) != 0) {
			error = want(why, whylen, "not a filter for model %s (a masked entry "
			    "uses event select bits 11:8, AMD's only)", cfg->model.name);
			goto out;
		}
	}
	error = vpmu_config_set_event_filter(cfg, f);
out:
	free(f);
	return (error);
}

static const struct {
	const char *key;
	int (*set)(vpmu_config *, const char *, char *, size_t);
} options[] = {
	{ "pmu",		set_pmu },
	{ "source",		set_source },
	{ "host-counters",	set_host_counters },
	{ "mux-interval",	set_mux_interval },
	{ "pv-port",		set_pv_port },
	{ "pmu-mode",		set_pmu_mode },
	{ "event-filter",	set_event_filter },
	{ "uncounted",		set_uncounted },
};

/* The built-in source whose options key names ("exact-mode": exact), or NULL. */
static const struct vpmu_source_ops *
source_of(const char *key)
{
	const struct vpmu_source_ops *ops;
	size_t i, n;

	for (i = 0; (ops = vpmu__source_at(i)) != NULL; i++) {
		n = strlen(ops->name);
		if (ops->param != NULL && strncmp(key, ops->name, n) == 0 && key[n] == '-' &&
		    key[n + 1] != '\0')
			return (ops);
	}
	return (NULL);
}

static int
set_source_param(vpmu_config *cfg, const struct vpmu_source_ops *ops, const char *key,
    const char *v, char *why, size_t whylen)
{
	void *p;

	if (cfg->source != ops) {
		if (why != NULL && whylen > 0)
			snprintf(why, whylen, "an option of source %s, and the source is %s",
			    ops->name, cfg->source->name);
		return (EINVAL);
	}
	if (cfg->source_params == NULL) {
		if ((p = calloc(1, ops->params_size)) == NULL)
			return (ENOMEM);
		if (cfg->source_arg != NULL)	/* the embedder's, given with the source */
			memcpy(p, cfg->source_arg, ops->params_size);
		cfg->source_params = cfg->source_arg = p;
	}
	return (ops->param(cfg->source_params, key + strlen(ops->name) + 1, v, why, whylen));
}

int
vpmu_config_set_option(vpmu_config *cfg, const char *key, const char *value, char *why,
    size_t whylen)
{
	const struct vpmu_source_ops *ops;
	size_t i;

	if (why != NULL && whylen > 0)
		why[0] = '\0';
	if (cfg == NULL || key == NULL || value == NULL)
		return (EINVAL);
	if (value[0] == '\0')
		return (want(why, whylen, "no value"));
	for (i = 0; i < VPMU_ARRAY_SIZE(options); i++)
		if (strcmp(key, options[i].key) == 0)
			return (options[i].set(cfg, value, why, whylen));
	if ((ops = source_of(key)) != NULL)
		return (set_source_param(cfg, ops, key, value, why, whylen));
	return (want(why, whylen, "no such option"));
}

static bool
is_option(const char *key, size_t n)
{
	size_t i;
	char k[64];

	if (n >= sizeof(k))
		return (false);
	memcpy(k, key, n);
	k[n] = '\0';
	for (i = 0; i < VPMU_ARRAY_SIZE(options); i++)
		if (strcmp(k, options[i].key) == 0)
			return (true);
	return (source_of(k) != NULL);
}

/*
 * Apply one element "key=value" to c; why gets "element: reason".
 */
static int
apply(vpmu_config *c, char *el, char *why, size_t whylen)
{
	char *eq = strchr(el, '=');
	int error;

	if (eq == NULL || eq == el)
		return (want(why, whylen, "%s: want key=value", el));
	*eq = '\0';
	error = vpmu_config_set_option(c, el, eq + 1, why, whylen);
	*eq = '=';
	if (error != 0)
		prefix(why, whylen, el);
	return (error);
}

/*
 * The spec, split at commas: the model (a leading element with no '=', or
 * pmu=, with the model keys that follow it: any key that is not an
 * option), then source=, then the rest in order.  All or nothing: the
 * options go to a copy of cfg, which replaces it only if every one is
 * good.
 */
int
vpmu_config_parse(vpmu_config *cfg, const char *spec, char *why, size_t whylen)
{
	struct vpmu_config c;
	char *buf = NULL, *model = NULL, **els = NULL, *eq, *p;
	size_t mlen = 0, n, nel = 1, i;
	int error = 0, pass;

	if (why != NULL && whylen > 0)
		why[0] = '\0';
	if (cfg == NULL)
		return (EINVAL);
	if (spec == NULL || spec[0] == '\0')
		return (0);
	c = *cfg;
	if (c.source_params != NULL) {
		if ((c.source_params = malloc(c.source->params_size)) == NULL)
			return (ENOMEM);
		memcpy(c.source_params, cfg->source_params, c.source->params_size);
		c.source_arg = c.source_params;
	}
	n = strlen(spec) + 1;
	for (p = strchr(spec, ','); p != NULL; p = strchr(p + 1, ','))
		nel++;
	if ((buf = malloc(n)) == NULL || (model = malloc(n + 4)) == NULL ||
	    (els = calloc(nel, sizeof(*els))) == NULL) {
		error = ENOMEM;
		goto out;
	}
	memcpy(buf, spec, n);
	model[0] = '\0';
	for (i = 0, p = buf; i < nel; i++) {	/* the elements, split in place */
		els[i] = p;
		if ((p = strchr(p, ',')) != NULL)
			*p++ = '\0';
	}
	/* The model: its name (a first element with no '=' before a ':'), then its keys. */
	for (i = 0; i < nel; i++) {
		eq = strchr(els[i], '=');
		if (i == 0 && (eq == NULL || memchr(els[i], ':', (size_t)(eq - els[i])) != NULL))
			mlen = (size_t)sprintf(model, "%s", els[i]);
		else if (eq != NULL && eq - els[i] == 3 && strncmp(els[i], "pmu", 3) == 0)
			mlen = (size_t)sprintf(model, "%s", eq + 1);
		else if (eq != NULL && eq != els[i] &&
		    !is_option(els[i], (size_t)(eq - els[i]))) {
			if (mlen == 0) {
				error = want(why, whylen, "%s: a model key with no model before it "
				    "(or no such option)", els[i]);
				goto out;
			}
			mlen += (size_t)sprintf(model + mlen, "%c%s", strchr(model, ':') ?
			    ',' : ':', els[i]);
		} else
			continue;
		els[i] = NULL;			/* the model's */
	}
	if (mlen != 0 && (error = set_pmu(&c, model, why, whylen)) != 0) {
		prefix(why, whylen, model);
		goto out;
	}
	/* source= first, so that options of the source find it; then the others. */
	for (pass = 0; pass < 2; pass++)
		for (i = 0; i < nel; i++)
			if (els[i] != NULL && els[i][0] != '\0' &&
			    (strncmp(els[i], "source=", 7) == 0) == (pass == 0) &&
			    (error = apply(&c, els[i], why, whylen)) != 0)
				goto out;
out:
	free(els);
	free(buf);
	free(model);
	if (error != 0) {
		if (c.source_params != cfg->source_params)
			free(c.source_params);
		return (error);
	}
	if (cfg->source_params != c.source_params)
		free(cfg->source_params);
	*cfg = c;
	return (0);
}
