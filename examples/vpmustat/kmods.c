/*
 * kmods.c -- a Linux guest's modules (--guest-modules, --guest-module-dir):
 * module symbols at the addresses the guest loaded them at.
 *
 * --guest-modules takes a copy of the guest's /proc/modules: a line per
 * module, "NAME SIZE REFS DEPS STATE ADDRESS [TAINT]", ADDRESS the start
 * of the module's core (its text first).  An address in [ADDRESS,
 * ADDRESS + SIZE) that no function of the module's file holds (or with no
 * file) is named "[NAME]+0xoff".  With
 * --guest-module-dir, the directory is walked once (recursively) for
 * NAME.ko, '-' and '_' taken as one: its functions are placed as the
 * kernel lays a module's core text out -- the sections that are both
 * allocated and executable, init sections (".init*") left out, in the
 * order of the section headers, each at the next multiple of its
 * alignment -- and named "FUNCTION [NAME]".  Compressed module files
 * (.ko.xz, .ko.zst) are not read: unpack them first.
 *
 * The addresses are the guest's own, of one boot: the kernel's KASLR
 * slide does not move them.
 */
#include <errno.h>
#include <fcntl.h>
#include <ftw.h>
#include <gelf.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "vpmustat.h"

/* One module of the file. */
struct kmod {
	char	 name[64];
	uint64_t base, size;
	size_t	 line;
};

/* Module names compare with '-' and '_' as one (the kernel's rule). */
static bool
same_name(const char *a, const char *b)
{
	for (; *a != '\0' && *b != '\0'; a++, b++)
		if (*a != *b && !((*a == '-' || *a == '_') && (*b == '-' || *b == '_')))
			return (false);
	return (*a == *b);
}

/* The .ko files under the directory, listed by one walk (nftw has no argument). */
static struct ko {
	char	*path;
	char	*stem;		/* the file name without ".ko": the module's name */
} *kos;
static size_t nkos, capkos;

static int
list_ko(const char *path, const struct stat *st, int type, struct FTW *ftw)
{
	const char *base = path + ftw->base;
	size_t n = strlen(base);
	void *p;

	(void)st;
	if (type != FTW_F || n < 4 || strcmp(base + n - 3, ".ko") != 0)
		return (0);
	if (nkos == capkos) {
		capkos = capkos != 0 ? capkos * 2 : 256;
		if ((p = realloc(kos, capkos * sizeof(*kos))) == NULL)
			return (-1);
		kos = p;
	}
	if ((kos[nkos].path = strdup(path)) == NULL ||
	    (kos[nkos].stem = strndup(base, n - 3)) == NULL) {
		free(kos[nkos].path);
		return (-1);
	}
	nkos++;
	return (0);
}

static void
kos_free(void)
{
	while (nkos > 0) {
		nkos--;
		free(kos[nkos].path);
		free(kos[nkos].stem);
	}
	free(kos);
	kos = NULL;
	capkos = 0;
}

/* The listed file of module name, or NULL. */
static const char *
ko_of(const char *name)
{
	size_t i;

	for (i = 0; i < nkos; i++)
		if (same_name(kos[i].stem, name))
			return (kos[i].path);
	return (NULL);
}

static int
add_sym(struct vs_symtab *t, size_t *cap, uint64_t addr, uint64_t size, const char *fn,
    const char *mod)
{
	void *p;

	if (t->n == *cap) {
		*cap = *cap != 0 ? *cap * 2 : 256;
		if ((p = realloc(t->s, *cap * sizeof(*t->s))) == NULL)
			return (-1);
		t->s = p;
	}
	if ((fn != NULL ? asprintf(&t->s[t->n].name, "%s [%s]", fn, mod) :
	    asprintf(&t->s[t->n].name, "[%s]", mod)) < 0)
		return (-1);
	t->s[t->n].addr = addr;
	t->s[t->n].size = size;
	t->n++;
	return (0);
}

/*
 * The functions of module file path, laid out from m->base, into t.
 * Returns the functions added, or -1 with err.
 */
static long
load_ko(struct vs_symtab *t, size_t *cap, const struct kmod *m, const char *path, char *err,
    size_t errlen)
{
	uint64_t *off = NULL, at = 0, align;
	size_t nsec = 0, shstr, i, count;
	Elf_Scn *scn = NULL;
	Elf_Data *d;
	GElf_Shdr sh;
	GElf_Sym sym;
	GElf_Ehdr eh;
	const char *nm;
	long added = -1;
	Elf *e;
	int fd;

	if ((e = vs_elf_open(path, &fd, err, errlen)) == NULL)
		return (-1);
	if (gelf_getehdr(e, &eh) == NULL || eh.e_type != ET_REL ||
	    elf_getshdrnum(e, &nsec) != 0 || elf_getshdrstrndx(e, &shstr) != 0) {
		snprintf(err, errlen, "%s: not a kernel module (a relocatable ELF)", path);
		goto out;
	}
	if ((off = calloc(nsec, sizeof(*off))) == NULL) {
		snprintf(err, errlen, "%s: out of memory", path);
		goto out;
	}
	/* The core text's layout: UINT64_MAX marks a section not in it. */
	for (i = 0; i < nsec; i++)
		off[i] = UINT64_MAX;
	while ((scn = elf_nextscn(e, scn)) != NULL) {
		if (gelf_getshdr(scn, &sh) == NULL ||
		    (sh.sh_flags & (SHF_ALLOC | SHF_EXECINSTR)) != (SHF_ALLOC | SHF_EXECINSTR) ||
		    (nm = elf_strptr(e, shstr, sh.sh_name)) == NULL || strncmp(nm, ".init", 5) == 0)
			continue;
		align = sh.sh_addralign != 0 ? sh.sh_addralign : 1;
		at = (at + align - 1) / align * align;
		off[elf_ndxscn(scn)] = at;
		at += sh.sh_size;
	}
	added = 0;
	while ((scn = elf_nextscn(e, scn)) != NULL) {
		if (gelf_getshdr(scn, &sh) == NULL || sh.sh_type != SHT_SYMTAB ||
		    sh.sh_entsize == 0)
			continue;
		count = sh.sh_size / sh.sh_entsize;
		if ((d = elf_getdata(scn, NULL)) == NULL)
			continue;
		for (i = 0; i < count; i++) {
			if (gelf_getsym(d, (int)i, &sym) == NULL)
				break;
			if (GELF_ST_TYPE(sym.st_info) != STT_FUNC || sym.st_shndx == SHN_UNDEF ||
			    sym.st_shndx >= nsec || off[sym.st_shndx] == UINT64_MAX ||
			    (nm = elf_strptr(e, sh.sh_link, sym.st_name)) == NULL || nm[0] == '\0')
				continue;
			if (add_sym(t, cap, m->base + off[sym.st_shndx] + sym.st_value,
			    sym.st_size, nm, m->name) < 0) {
				snprintf(err, errlen, "%s: out of memory", path);
				added = -1;
				goto out;
			}
			added++;
		}
	}
out:
	free(off);
	elf_end(e);
	close(fd);
	return (added);
}

/* A /proc/modules line: 0, or -1 with why. */
static int
parse_module(const char *s, struct kmod *m, const char **why)
{
	char name[64], state[32], addr[40];
	unsigned long long size;
	char *end;

	if (sscanf(s, "%63s %llu %*s %*s %31s %39s", name, &size, state, addr) != 4) {
		*why = "not \"NAME SIZE REFS DEPS STATE ADDRESS\"";
		return (-1);
	}
	if (strncmp(addr, "0x", 2) != 0 || (m->base = strtoull(addr, &end, 16), *end != '\0')) {
		*why = "the sixth field is not a hexadecimal address 0x...";
		return (-1);
	}
	if (size == 0) {
		*why = "a size of 0";
		return (-1);
	}
	snprintf(m->name, sizeof(m->name), "%s", name);
	m->size = size;
	return (0);
}

static int
sym_cmp(const void *a, const void *b)
{
	const struct vs_sym *x = a, *y = b;

	return (x->addr < y->addr ? -1 : x->addr > y->addr);
}

int
vs_kmods_load(struct vs_symtab *t, struct vs_symtab *ranges, const char *modules,
    const char *dir, char *note, size_t notelen, char *err, size_t errlen)
{
	struct kmod m;
	FILE *f;
	char *buf = NULL, kerr[256];
	size_t bufcap = 0, line = 0, cap = 0, rcap = 0, nmods = 0, nfiles = 0;
	const char *why;
	bool nonzero = false;
	struct stat sb;
	const char *ko;
	int ret = -1, got;

	memset(t, 0, sizeof(*t));
	memset(ranges, 0, sizeof(*ranges));
	note[0] = '\0';
	if (dir != NULL && stat(dir, &sb) < 0) {
		snprintf(err, errlen, "%s: %s", dir, strerror(errno));
		return (-1);
	}
	if (dir != NULL && !S_ISDIR(sb.st_mode)) {
		snprintf(err, errlen, "%s: not a directory", dir);
		return (-1);
	}
	errno = 0;
	if (dir != NULL && nftw(dir, list_ko, 16, FTW_PHYS) != 0) {
		snprintf(err, errlen, "%s: %s", dir, errno != 0 ? strerror(errno) :
		    "out of memory");
		kos_free();
		return (-1);
	}
	if ((f = fopen(modules, "r")) == NULL) {
		snprintf(err, errlen, "%s: %s", modules, strerror(errno));
		return (-1);
	}
	elf_version(EV_CURRENT);
	while ((got = vs_text_line(f, modules, &buf, &bufcap, &line, err, errlen)) > 0) {
		if (parse_module(buf, &m, &why) < 0) {
			snprintf(err, errlen, "%s: line %zu: %s: \"%.60s\"", modules, line, why,
			    buf);
			goto out;
		}
		nmods++;
		nonzero |= m.base != 0;
		if ((ko = ko_of(m.name)) != NULL) {
			if (load_ko(t, &cap, &m, ko, kerr, sizeof(kerr)) < 0) {
				snprintf(err, errlen, "%s", kerr);
				goto out;
			}
			nfiles++;
		}
		/* The module as a whole, for addresses no function of its file holds. */
		if (add_sym(ranges, &rcap, m.base, m.size, NULL, m.name) < 0) {
			snprintf(err, errlen, "%s: out of memory", modules);
			goto out;
		}
	}
	if (got < 0)
		goto out;
	if (nmods == 0) {
		snprintf(err, errlen, "%s: no modules (an empty file)", modules);
		goto out;
	}
	if (!nonzero) {
		snprintf(err, errlen, "%s: every address is 0: a /proc/modules read without "
		    "privilege (read it as root, with kernel.kptr_restrict 0 or 1)", modules);
		goto out;
	}
	if (t->n != 0)			/* no module file: no functions, no array */
		qsort(t->s, t->n, sizeof(*t->s), sym_cmp);
	qsort(ranges->s, ranges->n, sizeof(*ranges->s), sym_cmp);
	snprintf(note, notelen, "vpmustat: modules from %s: %zu, %zu with their file%s%s",
	    modules, nmods, nfiles, dir != NULL ? " under " : "", dir != NULL ? dir : "");
	ret = 0;
out:
	free(buf);
	fclose(f);
	kos_free();
	if (ret < 0) {
		vs_symtab_free(t);
		vs_symtab_free(ranges);
	}
	return (ret);
}
