/*
 * elf.c -- an ELF guest image: a static ELF64 x86-64 executable (boot
 * protocol v1), or for a Multiboot image (multiboot.c) ELF32 i386 too.
 * Every field that decides a memory access is checked before the
 * access, with overflow-safe arithmetic, so a truncated, garbage or hostile
 * file gives a message and never a crash.  No KVM here: the fuzz test
 * (test/guests/elf_fuzz.c) links this file alone.
 */
#include <elf.h>
#include <errno.h>
#include <fcntl.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "vpmu-run.h"

/* The largest guest file read: larger than any RAM (VR_MEM_MAX_MIB). */
#define ELF_MAX_FILE	(((uint64_t)VR_MEM_MAX_MIB << 20) + (64ull << 20))

/* A message into err (errlen bytes); returns -1, for the loaders' errors. */
int
vr_fail(char *err, size_t errlen, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(err, errlen, fmt, ap);
	va_end(ap);
	return (-1);
}

int
vr_read_all(int fd, const char *name, uint64_t max, uint8_t **bufp, size_t *lenp,
    char *err, size_t errlen)
{
	uint8_t *buf = NULL, *t;
	size_t len = 0, cap = 0;
	ssize_t n;

	*bufp = NULL;
	*lenp = 0;
	for (;;) {
		if (len == cap) {
			if (cap >= max) {
				free(buf);
				return (vr_fail(err, errlen, "%s: more than %llu bytes", name,
				    (unsigned long long)max));
			}
			cap = cap == 0 ? 65536 : cap * 2 > max ? (size_t)max : cap * 2;
			if ((t = realloc(buf, cap)) == NULL) {
				free(buf);
				return (vr_fail(err, errlen, "%s: %s", name, strerror(ENOMEM)));
			}
			buf = t;
		}
		if ((n = read(fd, buf + len, cap - len)) < 0) {
			if (errno == EINTR)
				continue;
			free(buf);
			return (vr_fail(err, errlen, "%s: %s", name, strerror(errno)));
		}
		if (n == 0)
			break;
		len += (size_t)n;
	}
	*bufp = buf;
	*lenp = len;
	return (0);
}

/* Read the whole file ("-": standard input, to its end); 0, or -1 with a message in err. */
int
vr_elf_read(const char *path, uint8_t **bufp, size_t *lenp, char *err, size_t errlen)
{
	struct stat st;
	uint8_t *buf = NULL;
	size_t len, got = 0;
	ssize_t n;
	int fd;

	*bufp = NULL;
	*lenp = 0;
	if (strcmp(path, "-") == 0)
		return (vr_read_all(STDIN_FILENO, "- (standard input)", ELF_MAX_FILE, bufp,
		    lenp, err, errlen));
	if ((fd = open(path, O_RDONLY | O_CLOEXEC)) < 0)
		return (vr_fail(err, errlen, "%s: %s", path, strerror(errno)));
	if (fstat(fd, &st) < 0) {
		vr_fail(err, errlen, "%s: %s", path, strerror(errno));
		goto err;
	}
	if (!S_ISREG(st.st_mode)) {
		vr_fail(err, errlen, "%s: not a regular file", path);
		goto err;
	}
	if ((uint64_t)st.st_size > ELF_MAX_FILE) {
		vr_fail(err, errlen, "%s: %lld bytes is larger than any guest RAM",
		    path, (long long)st.st_size);
		goto err;
	}
	len = (size_t)st.st_size;
	if ((buf = malloc(len > 0 ? len : 1)) == NULL) {
		vr_fail(err, errlen, "%s: %s", path, strerror(ENOMEM));
		goto err;
	}
	while (got < len) {
		if ((n = read(fd, buf + got, len - got)) < 0) {
			if (errno == EINTR)
				continue;
			vr_fail(err, errlen, "%s: %s", path, strerror(errno));
			goto err;
		}
		if (n == 0)
			break;			/* shrank while reading: use what is there */
		got += (size_t)n;
	}
	close(fd);
	*bufp = buf;
	*lenp = got;
	return (0);
err:
	free(buf);
	close(fd);
	return (-1);
}

/* a + b <= limit, without overflow. */
static int
fits(uint64_t a, uint64_t b, uint64_t limit)
{
	return (a <= limit && b <= limit - a);
}

static const char *
type_name(unsigned t)
{
	switch (t) {
	case ET_NONE: return ("ET_NONE");
	case ET_REL: return ("ET_REL, an object file");
	case ET_DYN: return ("ET_DYN, a shared object or PIE");
	case ET_CORE: return ("ET_CORE, a core file");
	default: return ("unknown");
	}
}

/* The ELF header of either class, widened to Elf64's. */
static void
read_ehdr(const uint8_t *file, bool is32, Elf64_Ehdr *eh)
{
	Elf32_Ehdr e;

	if (!is32) {
		memcpy(eh, file, sizeof(*eh));
		return;
	}
	memcpy(&e, file, sizeof(e));
	memset(eh, 0, sizeof(*eh));
	memcpy(eh->e_ident, e.e_ident, EI_NIDENT);
	eh->e_type = e.e_type;
	eh->e_machine = e.e_machine;
	eh->e_entry = e.e_entry;
	eh->e_phoff = e.e_phoff;
	eh->e_phentsize = e.e_phentsize;
	eh->e_phnum = e.e_phnum;
}

/* Program header i (inside the file: checked), widened to Elf64's. */
static void
read_phdr(const uint8_t *file, const Elf64_Ehdr *eh, bool is32, unsigned i, Elf64_Phdr *ph)
{
	Elf32_Phdr p;

	if (!is32) {
		memcpy(ph, file + eh->e_phoff + (uint64_t)i * sizeof(*ph), sizeof(*ph));
		return;
	}
	memcpy(&p, file + eh->e_phoff + (uint64_t)i * sizeof(p), sizeof(p));
	memset(ph, 0, sizeof(*ph));
	ph->p_type = p.p_type;
	ph->p_offset = p.p_offset;
	ph->p_paddr = p.p_paddr;
	ph->p_filesz = p.p_filesz;
	ph->p_memsz = p.p_memsz;
}

/* The boot protocol's rules. */
int
vr_elf_load(const uint8_t *file, size_t len, uint8_t *ram, uint64_t ram_size,
    struct vr_image *img, char *err, size_t errlen)
{
	static const struct vr_elf_rules boot = { .min_paddr = VR_LOAD_MIN };

	return (vr_elf_load_rules(file, len, ram, ram_size, &boot, img, err, errlen));
}

/*
 * Validate every header against the file, RAM and the rules, then copy each
 * PT_LOAD to p_paddr and zero its p_memsz - p_filesz tail.  Nothing is
 * written to ram unless the whole image is valid (and nothing at all with
 * ram NULL).  0, or -1 with a message in err.
 */
int
vr_elf_load_rules(const uint8_t *file, size_t len, uint8_t *ram, uint64_t ram_size,
    const struct vr_elf_rules *rules, struct vr_image *img, char *err, size_t errlen)
{
	Elf64_Ehdr eh;
	Elf64_Phdr ph;
	uint64_t phsize;
	size_t ehsize, phentsize;
	unsigned i;
	int entry_ok = 0;
	bool is32;

	memset(img, 0, sizeof(*img));
	if (len < SELFMAG || memcmp(file, ELFMAG, SELFMAG) != 0)
		return (vr_fail(err, errlen, "not an ELF file (no \\177ELF magic)"));
	is32 = rules->elf32 && len > EI_CLASS && file[EI_CLASS] == ELFCLASS32;
	ehsize = is32 ? sizeof(Elf32_Ehdr) : sizeof(Elf64_Ehdr);
	phentsize = is32 ? sizeof(Elf32_Phdr) : sizeof(Elf64_Phdr);
	if (len < ehsize)
		return (vr_fail(err, errlen, "truncated: %zu bytes, shorter than the "
		    "%zu-byte ELF header", len, ehsize));
	if (file[EI_CLASS] != ELFCLASS64 && !is32)
		return (vr_fail(err, errlen, "ELF class %u: the guest must be ELFCLASS64%s",
		    file[EI_CLASS], rules->elf32 ? " or ELFCLASS32" : ""));
	if (file[EI_DATA] != ELFDATA2LSB)
		return (vr_fail(err, errlen, "ELF data encoding %u: the guest must be "
		    "little endian (ELFDATA2LSB)", file[EI_DATA]));
	if (file[EI_VERSION] != EV_CURRENT)
		return (vr_fail(err, errlen, "ELF version %u: want EV_CURRENT",
		    file[EI_VERSION]));
	read_ehdr(file, is32, &eh);
	if (eh.e_type != ET_EXEC)
		return (vr_fail(err, errlen, "e_type %u (%s): the guest must be a static "
		    "executable (ET_EXEC)", eh.e_type, type_name(eh.e_type)));
	if (is32 && eh.e_machine != EM_386)
		return (vr_fail(err, errlen, "e_machine %u: an ELFCLASS32 guest must be "
		    "i386 (EM_386)", eh.e_machine));
	if (!is32 && eh.e_machine != EM_X86_64)
		return (vr_fail(err, errlen, "e_machine %u: the guest must be x86-64 "
		    "(EM_X86_64)", eh.e_machine));
	if (eh.e_phnum == 0)
		return (vr_fail(err, errlen, "no program headers"));
	if (eh.e_phnum == PN_XNUM)
		return (vr_fail(err, errlen, "e_phnum is PN_XNUM: extended program "
		    "header counts are not supported"));
	if (eh.e_phentsize != phentsize)
		return (vr_fail(err, errlen, "e_phentsize %u: want %zu",
		    eh.e_phentsize, phentsize));
	phsize = (uint64_t)eh.e_phnum * phentsize;
	if (!fits(eh.e_phoff, phsize, len))
		return (vr_fail(err, errlen, "truncated: program headers at offset %#llx "
		    "(%u of them) end past the file's %zu bytes",
		    (unsigned long long)eh.e_phoff, eh.e_phnum, len));

	/* Pass 1: check every PT_LOAD. */
	for (i = 0; i < eh.e_phnum; i++) {
		read_phdr(file, &eh, is32, i, &ph);
		if (ph.p_type != PT_LOAD)
			continue;
		if (ph.p_filesz > ph.p_memsz)
			return (vr_fail(err, errlen, "PT_LOAD %u: p_filesz %#llx is larger "
			    "than p_memsz %#llx", i, (unsigned long long)ph.p_filesz,
			    (unsigned long long)ph.p_memsz));
		if (!fits(ph.p_offset, ph.p_filesz, len))
			return (vr_fail(err, errlen, "truncated: PT_LOAD %u: file bytes "
			    "%#llx + %#llx end past the file's %zu bytes", i,
			    (unsigned long long)ph.p_offset,
			    (unsigned long long)ph.p_filesz, len));
		if (ph.p_memsz == 0)
			continue;
		if (ph.p_paddr < rules->min_paddr)
			return (vr_fail(err, errlen, "PT_LOAD %u: p_paddr %#llx is below "
			    "1 MiB (0x100000), which vpmu-run keeps for page tables "
			    "and the GDT", i, (unsigned long long)ph.p_paddr));
		if (!fits(ph.p_paddr, ph.p_memsz, ram_size))
			return (vr_fail(err, errlen, "PT_LOAD %u: p_paddr %#llx + p_memsz "
			    "%#llx ends past guest RAM (%llu MiB; see --mem)", i,
			    (unsigned long long)ph.p_paddr,
			    (unsigned long long)ph.p_memsz,
			    (unsigned long long)(ram_size >> 20)));
		if (ph.p_paddr < rules->avoid_hi &&
		    ph.p_paddr + ph.p_memsz > rules->avoid_lo)
			return (vr_fail(err, errlen, "PT_LOAD %u: %#llx..%#llx overlaps %s "
			    "at %#llx..%#llx", i, (unsigned long long)ph.p_paddr,
			    (unsigned long long)(ph.p_paddr + ph.p_memsz),
			    rules->avoid_what, (unsigned long long)rules->avoid_lo,
			    (unsigned long long)rules->avoid_hi));
		if (img->nload == 0 || ph.p_paddr < img->lo)
			img->lo = ph.p_paddr;
		if (ph.p_paddr + ph.p_memsz > img->hi)
			img->hi = ph.p_paddr + ph.p_memsz;
		if (eh.e_entry >= ph.p_paddr && eh.e_entry - ph.p_paddr < ph.p_memsz)
			entry_ok = 1;
		img->nload++;
	}
	if (img->nload == 0)
		return (vr_fail(err, errlen, "no PT_LOAD segment with contents"));
	if (!entry_ok)
		return (vr_fail(err, errlen, "e_entry %#llx is not inside any PT_LOAD "
		    "segment", (unsigned long long)eh.e_entry));

	/* Pass 2: load. */
	for (i = 0; i < eh.e_phnum && ram != NULL; i++) {
		read_phdr(file, &eh, is32, i, &ph);
		if (ph.p_type != PT_LOAD || ph.p_memsz == 0)
			continue;
		memcpy(ram + ph.p_paddr, file + ph.p_offset, ph.p_filesz);
		memset(ram + ph.p_paddr + ph.p_filesz, 0, ph.p_memsz - ph.p_filesz);
	}
	img->entry = eh.e_entry;
	return (0);
}
