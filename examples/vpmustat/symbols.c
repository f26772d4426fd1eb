/*
 * symbols.c -- guest addresses to function names, through libelf.
 *
 * The FUNC symbols of the symbol table (.symtab; .dynsym if there is
 * none), sorted by address.  A symbol of size 0 (an assembly label without
 * .size) reaches to the next symbol.  Where several names share an
 * address, a global one wins over a weak one, and a weak one over a local.
 *
 * The code: the executable PT_LOAD segments (p_vaddr, p_memsz), or, in a
 * file without them, the SHF_ALLOC | SHF_EXECINSTR sections; samples.c
 * cuts a call chain at a return address outside it.
 */
#include <errno.h>
#include <fcntl.h>
#include <gelf.h>
#include <libelf.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "vpmustat.h"

static int
bind_rank(unsigned char bind)
{
	return (bind == STB_GLOBAL ? 0 : bind == STB_WEAK ? 1 : 2);
}

struct cand {
	struct vs_sym s;
	int rank;
};

static int
cand_cmp(const void *a, const void *b)
{
	const struct cand *x = a, *y = b;

	if (x->s.addr != y->s.addr)
		return (x->s.addr < y->s.addr ? -1 : 1);
	if (x->rank != y->rank)
		return (x->rank - y->rank);
	if ((x->s.size != 0) != (y->s.size != 0))
		return (x->s.size != 0 ? -1 : 1);	/* a sized one first */
	return (strcmp(x->s.name, y->s.name));
}

/*
 * The FUNC symbols of one symbol table section into *c (grown); the
 * address of each symbol named in want[0..nwant), of any type, into at[].
 */
static int
read_symtab(Elf *e, Elf_Scn *scn, const GElf_Shdr *sh, struct cand **c, size_t *n,
    size_t *cap, const char *const *want, uint64_t *at, size_t nwant)
{
	Elf_Data *d = NULL;
	GElf_Sym sym;
	const char *nm;
	size_t i, j, count;
	void *p;

	if (sh->sh_entsize == 0)
		return (0);
	count = sh->sh_size / sh->sh_entsize;
	while ((d = elf_getdata(scn, d)) != NULL)
		for (i = 0; i < count; i++) {
			if (gelf_getsym(d, (int)i, &sym) == NULL)
				break;
			if (nwant != 0 && sym.st_shndx != SHN_UNDEF &&
			    (nm = elf_strptr(e, sh->sh_link, sym.st_name)) != NULL)
				for (j = 0; j < nwant; j++)
					if (strcmp(nm, want[j]) == 0)
						at[j] = sym.st_value;
			if (GELF_ST_TYPE(sym.st_info) != STT_FUNC ||
			    sym.st_shndx == SHN_UNDEF || sym.st_value == 0)
				continue;
			if ((nm = elf_strptr(e, sh->sh_link, sym.st_name)) == NULL ||
			    nm[0] == '\0')
				continue;
			if (*n == *cap) {
				*cap = *cap ? *cap * 2 : 256;
				if ((p = realloc(*c, *cap * sizeof(**c))) == NULL)
					return (-1);
				*c = p;
			}
			(*c)[*n].s.addr = sym.st_value;
			(*c)[*n].s.size = sym.st_size;
			(*c)[*n].rank = bind_rank(GELF_ST_BIND(sym.st_info));
			if (((*c)[*n].s.name = strdup(nm)) == NULL)
				return (-1);
			(*n)++;
		}
	return (0);
}

/* One range of code into t (grown); -1 out of memory. */
static int
add_code(struct vs_symtab *t, uint64_t lo, uint64_t size)
{
	void *p;

	if (size == 0 || lo + size < lo)
		return (0);
	if ((p = realloc(t->code, (t->ncode + 1) * sizeof(*t->code))) == NULL)
		return (-1);
	t->code = p;
	t->code[t->ncode].lo = lo;
	t->code[t->ncode].hi = lo + size;
	t->ncode++;
	return (0);
}

/* The executable segments, or sections where there is no segment. */
static int
read_code(Elf *e, struct vs_symtab *t)
{
	Elf_Scn *scn = NULL;
	GElf_Phdr ph;
	GElf_Shdr sh;
	size_t i, nph = 0;

	if (elf_getphdrnum(e, &nph) != 0)
		nph = 0;
	for (i = 0; i < nph; i++)
		if (gelf_getphdr(e, (int)i, &ph) != NULL && ph.p_type == PT_LOAD &&
		    (ph.p_flags & PF_X) && add_code(t, ph.p_vaddr, ph.p_memsz) < 0)
			return (-1);
	if (t->ncode != 0)
		return (0);
	while ((scn = elf_nextscn(e, scn)) != NULL)
		if (gelf_getshdr(scn, &sh) != NULL &&
		    (sh.sh_flags & (SHF_ALLOC | SHF_EXECINSTR)) ==
		    (SHF_ALLOC | SHF_EXECINSTR) && add_code(t, sh.sh_addr, sh.sh_size) < 0)
			return (-1);
	return (0);
}

bool
vs_symtab_in_code(const struct vs_symtab *t, uint64_t addr)
{
	size_t i;

	if (t == NULL || t->ncode == 0)
		return (true);
	for (i = 0; i < t->ncode; i++)
		if (addr >= t->code[i].lo && addr < t->code[i].hi)
			return (true);
	return (false);
}

Elf *
vs_elf_open(const char *path, int *fdp, char *err, size_t errlen)
{
	Elf *e;
	int fd;

	if (elf_version(EV_CURRENT) == EV_NONE) {
		snprintf(err, errlen, "libelf: %s", elf_errmsg(-1));
		return (NULL);
	}
	if ((fd = open(path, O_RDONLY | O_CLOEXEC)) < 0) {
		snprintf(err, errlen, "%s: %s", path, strerror(errno));
		return (NULL);
	}
	if ((e = elf_begin(fd, ELF_C_READ, NULL)) == NULL || elf_kind(e) != ELF_K_ELF) {
		snprintf(err, errlen, "%s: not an ELF file%s%s", path,
		    e == NULL ? ": " : "", e == NULL ? elf_errmsg(-1) : "");
		if (e != NULL)
			elf_end(e);
		close(fd);
		errno = ENOEXEC;	/* not an ELF: the caller may say nothing */
		return (NULL);
	}
	*fdp = fd;
	return (e);
}

int
vs_symtab_load(struct vs_symtab *t, const char *path, char *err, size_t errlen)
{
	return (vs_symtab_load_at(t, path, NULL, NULL, 0, err, errlen));
}

int
vs_symtab_load_at(struct vs_symtab *t, const char *path, const char *const *want,
    uint64_t *at, size_t nwant, char *err, size_t errlen)
{
	struct cand *c = NULL;
	size_t n = 0, cap = 0, i, j;
	Elf_Scn *scn;
	GElf_Shdr sh;
	Elf *e = NULL;
	int fd, pass, ret = -1;

	memset(t, 0, sizeof(*t));
	if ((e = vs_elf_open(path, &fd, err, errlen)) == NULL)
		return (-1);
	/* Pass 0: .symtab; pass 1: .dynsym, only if pass 0 found nothing. */
	for (pass = 0; pass < 2 && n == 0; pass++)
		for (scn = NULL; (scn = elf_nextscn(e, scn)) != NULL; ) {
			if (gelf_getshdr(scn, &sh) == NULL)
				continue;
			if (sh.sh_type != (pass == 0 ? SHT_SYMTAB : SHT_DYNSYM))
				continue;
			if (read_symtab(e, scn, &sh, &c, &n, &cap, want, at, nwant) < 0) {
				snprintf(err, errlen, "%s: out of memory", path);
				goto out;
			}
		}
	if (n == 0) {
		snprintf(err, errlen, "%s: no function symbols (stripped?)", path);
		goto out;
	}
	if (read_code(e, t) < 0) {
		snprintf(err, errlen, "%s: out of memory", path);
		goto out;
	}
	qsort(c, n, sizeof(*c), cand_cmp);
	if ((t->s = calloc(n, sizeof(*t->s))) == NULL) {
		snprintf(err, errlen, "%s: out of memory", path);
		goto out;
	}
	/* One name per address: the first after the sort. */
	for (i = 0; i < n; i++) {
		if (t->n > 0 && t->s[t->n - 1].addr == c[i].s.addr) {
			free(c[i].s.name);
			continue;
		}
		t->s[t->n++] = c[i].s;
	}
	n = 0;
	/* Size 0: up to the next symbol. */
	for (j = 0; j < t->n; j++)
		if (t->s[j].size == 0 && j + 1 < t->n)
			t->s[j].size = t->s[j + 1].addr - t->s[j].addr;
	if ((t->path = strdup(path)) == NULL) {
		snprintf(err, errlen, "%s: out of memory", path);
		goto out;
	}
	ret = 0;
out:
	for (i = 0; i < n; i++)
		free(c[i].s.name);
	free(c);
	if (e != NULL)
		elf_end(e);
	close(fd);
	if (ret < 0)
		vs_symtab_free(t);
	return (ret);
}

void
vs_symtab_free(struct vs_symtab *t)
{
	size_t i;

	for (i = 0; i < t->n; i++)
		free(t->s[i].name);
	free(t->s);
	free(t->code);
	free(t->path);
	t->path = NULL;
	t->s = NULL;
	t->n = 0;
	t->code = NULL;
	t->ncode = 0;
}

const struct vs_sym *
vs_symtab_find(const struct vs_symtab *t, uint64_t addr, uint64_t *off)
{
	size_t lo = 0, hi = t->n, mid;
	const struct vs_sym *s;

	/* The last symbol at or below addr. */
	while (lo < hi) {
		mid = lo + (hi - lo) / 2;
		if (t->s[mid].addr <= addr)
			lo = mid + 1;
		else
			hi = mid;
	}
	if (lo == 0)
		return (NULL);
	s = &t->s[lo - 1];
	/* A last symbol of size 0 holds nothing past its address. */
	if (addr - s->addr >= (s->size != 0 ? s->size : 1))
		return (NULL);
	if (off != NULL)
		*off = addr - s->addr;
	return (s);
}

void
vs_symtab_format(const struct vs_symtab *t, uint64_t addr, char *buf, size_t len)
{
	const struct vs_sym *s;
	uint64_t off;

	if (t != NULL && (s = vs_symtab_find(t, addr, &off)) != NULL) {
		if (off != 0)
			snprintf(buf, len, "%s+%#llx", s->name, (unsigned long long)off);
		else
			snprintf(buf, len, "%s", s->name);
	} else
		snprintf(buf, len, "%#llx", (unsigned long long)addr);
}
