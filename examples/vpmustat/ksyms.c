/*
 * ksyms.c -- a Linux guest's kernel symbols (--guest-symbols) and its
 * KASLR slide.
 *
 * The file is told apart by its content: an ELF (a vmlinux) is read by
 * symbols.c; anything else is read as lines "ADDRESS TYPE NAME", an
 * optional fourth column "[module]" -- a System.map (nm -n) or a copy of
 * /proc/kallsyms.  A file with no "[module]" line is taken as sorted (nm -n
 * sorts, and so does the kernel's own table): an address below the line
 * before's is an error.  One with modules is sorted here.  The types t, T,
 * W, w and i are code; every other (data, absolute) only ends the symbol
 * before it: a map has no sizes, so a symbol reaches to the next address.
 * Every address 0: a kallsyms read without privilege, refused.
 *
 * The slide: --kaslr-slide, or the guest's IA32_LSTAR (the log's "LST"
 * record, live.c) minus the file's entry_SYSCALL_64, which Linux x86-64
 * writes there at boot.  It must be a multiple of 2 MiB and not below
 * zero; and most kernel-mode samples must fall in the file's functions
 * once moved by it.  Otherwise the file names nothing: addresses stay.
 * Module symbols do not move with the kernel (modules are placed apart):
 * they name samples only with a slide of 0 (a kallsyms of the same boot).
 */
#include <errno.h>
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

#include "vpmustat.h"

#define ENTRY_SYM	"entry_SYSCALL_64"

const char *const vs_ksym_names[VS_KSYM_N] = {
	[VS_KSYM_ENTRY] = ENTRY_SYM,
	[VS_KSYM_PCPU_HOT] = "pcpu_hot",
	[VS_KSYM_CURRENT_TASK] = "current_task",
	[VS_KSYM_START_BTF] = "__start_BTF",
	[VS_KSYM_STOP_BTF] = "__stop_BTF",
	[VS_KSYM_ORC_IP_START] = "__start_orc_unwind_ip",
	[VS_KSYM_ORC_IP_STOP] = "__stop_orc_unwind_ip",
	[VS_KSYM_ORC] = "__start_orc_unwind",
	[VS_KSYM_BANNER] = "linux_banner",
};


static bool
is_code(char type)
{
	return (strchr("tTWwi", type) != NULL);
}

/* Global before weak before local, then by name: one name per address. */
static int
type_rank(char type)
{
	return (type == 'T' || type == 'i' ? 0 : type == 'W' || type == 'w' ? 1 : 2);
}

static int
mline_cmp(const void *a, const void *b)
{
	const struct vs_mline *x = a, *y = b;

	if (x->addr != y->addr)
		return (x->addr < y->addr ? -1 : 1);
	if (is_code(x->type) != is_code(y->type))
		return (is_code(x->type) ? -1 : 1);
	if (type_rank(x->type) != type_rank(y->type))
		return (type_rank(x->type) - type_rank(y->type));
	return (strcmp(x->name, y->name));
}

/*
 * One line: "ADDRESS TYPE NAME" and maybe "[module]".  0, or -1 with what
 * is wrong in why.
 */
static int
parse_line(const char *s, struct vs_mline *m, const char **why)
{
	const char *name, *mod;
	char *end;
	size_t n, mn;

	while (*s == ' ' || *s == '\t')
		s++;
	for (n = 0; (s[n] >= '0' && s[n] <= '9') || (s[n] >= 'a' && s[n] <= 'f') ||
	    (s[n] >= 'A' && s[n] <= 'F'); n++)
		;
	if (n == 0 || n > 16 || (s[n] != ' ' && s[n] != '\t')) {
		*why = "not a hexadecimal address of 1 to 16 digits, then a blank";
		return (-1);
	}
	m->addr = strtoull(s, &end, 16);
	s = end;
	while (*s == ' ' || *s == '\t')
		s++;
	if (!((*s >= 'a' && *s <= 'z') || (*s >= 'A' && *s <= 'Z')) ||
	    (s[1] != ' ' && s[1] != '\t')) {
		*why = "not a one-letter symbol type after the address";
		return (-1);
	}
	m->type = *s++;
	name = s + strspn(s, " \t");
	n = strcspn(name, " \t");
	if (n == 0) {
		*why = "no name after the type";
		return (-1);
	}
	mod = name + n + strspn(name + n, " \t");
	for (mn = strlen(mod); mn > 0 && (mod[mn - 1] == ' ' || mod[mn - 1] == '\t'); mn--)
		;
	m->module = mn != 0;
	if (m->module && (mod[0] != '[' || mod[mn - 1] != ']' || mn < 3 ||
	    strcspn(mod, " \t") != mn)) {
		*why = "a fourth column that is not \"[module]\"";
		return (-1);
	}
	if (asprintf(&m->name, "%.*s%s%.*s", (int)n, name, m->module ? " " : "", (int)mn,
	    mod) < 0)
		m->name = NULL;
	if (m->name == NULL) {
		*why = "out of memory";
		return (-1);
	}
	return (0);
}

/* The code symbols of m[0 .. n) (sorted) that are modules' or not, into t. */
static int
take(struct vs_symtab *t, const struct vs_mline *m, size_t n, bool module)
{
	size_t i, j;

	if ((t->s = calloc(n + 1, sizeof(*t->s))) == NULL)
		return (-1);
	for (i = 0; i < n; i++) {
		if (!is_code(m[i].type) || m[i].module != module ||
		    (t->n > 0 && t->s[t->n - 1].addr == m[i].addr))
			continue;
		/* Up to the next address of any symbol (a map has no sizes). */
		for (j = i + 1; j < n && m[j].addr == m[i].addr; j++)
			;
		t->s[t->n].addr = m[i].addr;
		t->s[t->n].size = j < n ? m[j].addr - m[i].addr : 0;
		if ((t->s[t->n].name = strdup(m[i].name)) == NULL)
			return (-1);
		t->n++;
	}
	return (0);
}

int
vs_text_line(FILE *f, const char *path, char **buf, size_t *cap, size_t *line, char *err,
    size_t errlen)
{
	ssize_t len;

	if ((len = getline(buf, cap, f)) <= 0) {
		if (!ferror(f))
			return (0);
		snprintf(err, errlen, "%s: %s", path, strerror(errno));
		return (-1);
	}
	++*line;
	if ((*buf)[len - 1] != '\n') {
		snprintf(err, errlen, "%s: line %zu: no newline at its end: the file is "
		    "cut short", path, *line);
		return (-1);
	}
	(*buf)[--len] = '\0';
	if (len > 0 && (*buf)[len - 1] == '\r')
		(*buf)[len - 1] = '\0';
	return (1);
}

/* A map's lines into k.  0, or -1 with the reason (and the line) in err. */
static int
load_map(struct vs_ksyms *k, FILE *f, const char *path, char *err, size_t errlen)
{
	struct vs_mline *m = NULL;
	size_t n = 0, cap = 0, line = 0, back = 0;
	char *buf = NULL;
	size_t bufcap = 0;
	const char *why;
	bool modules = false, nonzero = false;
	void *p;
	int ret = -1, got;

	while ((got = vs_text_line(f, path, &buf, &bufcap, &line, err, errlen)) > 0) {
		if (n == cap) {
			cap = cap ? cap * 2 : 1024;
			if ((p = realloc(m, cap * sizeof(*m))) == NULL) {
				snprintf(err, errlen, "%s: out of memory", path);
				goto out;
			}
			m = p;
		}
		if (parse_line(buf, &m[n], &why) < 0) {
			snprintf(err, errlen, "%s: line %zu: %s: \"%.60s\"", path, line, why,
			    buf);
			goto out;
		}
		m[n].line = line;
		modules |= m[n].module;
		nonzero |= m[n].addr != 0;
		if (back == 0 && n > 0 && m[n].addr < m[n - 1].addr)
			back = n;
		n++;
	}
	if (got < 0)
		goto out;
	if (line == 0) {
		snprintf(err, errlen, "%s: an empty file", path);
		goto out;
	}
	if (!nonzero) {
		snprintf(err, errlen, "%s: every address is 0: a /proc/kallsyms read "
		    "without privilege (read it as root, with kernel.kptr_restrict 0 or 1)",
		    path);
		goto out;
	}
	if (back != 0 && !modules) {
		snprintf(err, errlen, "%s: line %zu: address %#" PRIx64 " is below line "
		    "%zu's %#" PRIx64 ": a System.map (nm -n) is sorted", path,
		    m[back].line, m[back].addr, m[back - 1].line, m[back - 1].addr);
		goto out;
	}
	ret = vs_ksyms_build(k, m, n, path, err, errlen);
out:
	vs_mlines_free(m, n);
	free(buf);
	return (ret);
}

int
vs_ksyms_build(struct vs_ksyms *k, struct vs_mline *m, size_t n, const char *path,
    char *err, size_t errlen)
{
	size_t i, j;

	qsort(m, n, sizeof(*m), mline_cmp);
	if (take(&k->t, m, n, false) < 0 || take(&k->mods, m, n, true) < 0) {
		snprintf(err, errlen, "%s: out of memory", path);
		return (-1);
	}
	if (k->t.n == 0 && k->mods.n == 0) {
		snprintf(err, errlen, "%s: no code symbols (types t, T, W, w, i)", path);
		return (-1);
	}
	for (i = 0; i < n; i++)
		for (j = 0; j < VS_KSYM_N && !m[i].module; j++)
			if (k->at[j] == 0 && strcmp(m[i].name, vs_ksym_names[j]) == 0)
				k->at[j] = m[i].addr;
	return (0);
}

void
vs_mlines_free(struct vs_mline *m, size_t n)
{
	size_t i;

	for (i = 0; i < n; i++)
		free(m[i].name);
	free(m);
}

int
vs_ksyms_load(struct vs_ksyms *k, const char *path, char *err, size_t errlen)
{
	unsigned char magic[4];
	FILE *f;
	size_t got;
	int ret;

	memset(k, 0, sizeof(*k));
	if ((f = fopen(path, "r")) == NULL) {
		snprintf(err, errlen, "%s: %s", path, strerror(errno));
		return (-1);
	}
	got = fread(magic, 1, sizeof(magic), f);
	if (got == sizeof(magic) && memcmp(magic, "\177ELF", 4) == 0) {
		fclose(f);
		ret = vs_symtab_load_at(&k->t, path, vs_ksym_names, k->at, VS_KSYM_N, err,
		    errlen);
	} else {
		rewind(f);
		ret = load_map(k, f, path, err, errlen);
		fclose(f);
	}
	if (ret == 0 && (k->path = strdup(path)) == NULL) {
		snprintf(err, errlen, "%s: out of memory", path);
		ret = -1;
	}
	if (ret < 0)
		vs_ksyms_free(k);
	return (ret);
}

void
vs_ksyms_free(struct vs_ksyms *k)
{
	vs_symtab_free(&k->t);
	vs_symtab_free(&k->mods);
	vs_symtab_free(&k->kmods);
	vs_symtab_free(&k->kranges);
	free(k->path);
	k->path = NULL;
}

const struct vs_sym *
vs_ksyms_find(const struct vs_ksyms *k, uint64_t addr, uint64_t *start)
{
	const struct vs_sym *s;

	if (!k->usable)
		return (NULL);
	if (addr - k->slide <= addr &&
	    (s = vs_symtab_find(&k->t, addr - k->slide, NULL)) != NULL) {
		*start = s->addr + k->slide;
		return (s);
	}
	if (k->slide == 0 && (s = vs_symtab_find(&k->mods, addr, NULL)) != NULL) {
		*start = s->addr;
		return (s);
	}
	/* --guest-modules: the guest's own addresses, whatever the slide */
	if ((s = vs_symtab_find(&k->kmods, addr, NULL)) != NULL ||
	    (s = vs_symtab_find(&k->kranges, addr, NULL)) != NULL) {
		*start = s->addr;
		return (s);
	}
	return (NULL);
}

/* Of the kernel-mode samples of p, how many fall in k's functions; *all of them. */
static uint64_t
in_functions(const struct vs_ksyms *k, const struct vs_profile *p, uint64_t *all)
{
	const struct vs_stack *st;
	uint64_t in = 0, start;
	size_t i, j;

	*all = 0;
	for (i = 0; i < p->nev; i++)
		for (j = 0; j < p->ev[i].nstacks; j++) {
			st = &p->ev[i].stacks[j];
			if (st->user || st->pc[0] < VS_KERNEL_HALF)
				continue;
			*all += st->count;
			if (vs_ksyms_find(k, st->pc[0], &start) != NULL)
				in += st->count;
		}
	return (in);
}

void
vs_ksyms_settle(struct vs_ksyms *k, const struct vs_profile *p)
{
	uint64_t in, all, entry = k->at[VS_KSYM_ENTRY];
	int at;

	k->usable = false;
	at = snprintf(k->note, sizeof(k->note), "vpmustat: kernel symbols from %s, ", k->path);
	if (at < 0 || (size_t)at >= sizeof(k->note))
		at = 0;
	if (k->slide_given) {
		snprintf(k->note + at, sizeof(k->note) - at, "KASLR slide %#" PRIx64
		    " (--kaslr-slide)", k->slide);
		k->usable = true;
	} else if (!p->has_lstar || p->lstar == 0) {
		k->slide = 0;
		snprintf(k->note + at, sizeof(k->note) - at, "KASLR slide 0 (%s)",
		    !p->has_lstar ? "the log has no LSTAR: a -R of a log not from a run, "
		    "or the run could not read it" : "the guest's LSTAR is 0: it never set "
		    "its syscall entry, not a Linux kernel or not booted that far");
		k->usable = true;
	} else if (entry == 0) {
		k->slide = 0;
		snprintf(k->note + at, sizeof(k->note) - at, "KASLR slide 0 (LSTAR %#"
		    PRIx64 ", but the file has no " ENTRY_SYM ")", p->lstar);
		k->usable = true;
	} else if (p->lstar < entry || (p->lstar - entry) % VS_KASLR_ALIGN != 0) {
		snprintf(k->note + at, sizeof(k->note) - at, "no KASLR slide: LSTAR %#"
		    PRIx64 " - " ENTRY_SYM " %#" PRIx64 " is %s, not a slide (a multiple "
		    "of 2 MiB, not below 0): not the guest's kernel; kernel addresses "
		    "are not named", p->lstar, entry, p->lstar < entry ? "below 0" :
		    "not a multiple of 2 MiB");
		return;
	} else {
		k->slide = p->lstar - entry;
		snprintf(k->note + at, sizeof(k->note) - at, "KASLR slide %#" PRIx64
		    " (LSTAR %#" PRIx64 " = " ENTRY_SYM ")", k->slide, p->lstar);
		k->usable = true;
	}
	/* Most kernel-mode samples must be in its functions, else it is another kernel. */
	if ((in = in_functions(k, p, &all)) * 2 < all) {
		k->usable = false;
		at = (int)strlen(k->note);
		snprintf(k->note + at, sizeof(k->note) - at, "; but only %" PRIu64 " of the %"
		    PRIu64 " kernel-mode samples fall in its functions: not the guest's "
		    "kernel (or not its slide); kernel addresses are not named", in, all);
	}
}
