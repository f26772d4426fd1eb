/*
 * image.c -- the guest image a log's samples belong to.
 *
 * A run records it in its log right after CONFIGURELOG: a MAP_IN record
 * (vpmu_log_map_in(): pid -1, the whole machine; the lowest address of the
 * ELF's PT_LOAD segments; the path as given), then the image's identity in
 * USERDATA records (WRITELOG): a tag word, then the identity's bytes, four
 * to a word, the first in the low byte:
 *
 *   0x42494400 | n    "BID": the ELF's GNU build-id (.note.gnu.build-id),
 *                     n bytes
 *   0x464e5600 | 8    "FNV": the file's FNV-1a 64-bit hash (little-endian),
 *                     for an ELF without a build-id
 *   0x46494c00 | 8    "FIL": the same, for an image that is no ELF (a Linux
 *                     bzImage, an a.out-kludge Multiboot image): its
 *                     symbols are in another file (a vmlinux), so -R takes
 *                     any --elf for it
 *
 * and at the run's end, after the vCPU threads stopped, before FLUSHLOG
 * (vs_log_lstar()):
 *
 *   0x4c535400 | 8    "LST": vCPU 0's IA32_LSTAR (MSR 0xc0000082), two
 *                     words, the low one first: where a Linux x86-64 guest
 *                     put entry_SYSCALL_64, which gives --guest-symbols
 *                     its KASLR slide (ksyms.c); 0 if the guest never set it
 *
 * Any pmclog reader reads these records (USERDATA is an owner's cookie);
 * profile.c keeps them.  -R compares --elf's identity with the log's and
 * refuses another file: its functions would be wrong ones.
 */
#include <errno.h>
#include <fcntl.h>
#include <gelf.h>
#include <inttypes.h>
#include <limits.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <vpmu/vpmu.h>

#include "vpmustat.h"

#define NT_GNU_BUILD_ID_	3	/* the GNU note's type of a build-id */

/* The GNU build-id among the notes of scn, if it has one. */
static void
note_build_id(Elf_Scn *scn, struct vs_image_id *id)
{
	Elf_Data *d = NULL;
	GElf_Nhdr nh;
	size_t off, next, name, desc;

	while ((d = elf_getdata(scn, d)) != NULL)
		for (off = 0; (next = gelf_getnote(d, off, &nh, &name, &desc)) > 0;
		    off = next)
			if (nh.n_type == NT_GNU_BUILD_ID_ && nh.n_namesz == 4 &&
			    memcmp((char *)d->d_buf + name, "GNU", 4) == 0 &&
			    nh.n_descsz > 0 && nh.n_descsz <= sizeof(id->id)) {
				id->kind = 'B';
				id->len = (uint8_t)nh.n_descsz;
				memcpy(id->id, (char *)d->d_buf + desc, nh.n_descsz);
				return;
			}
}

/* The file's FNV-1a 64-bit hash, little-endian. */
static int
file_hash(int fd, struct vs_image_id *id)
{
	uint64_t h = UINT64_C(0xcbf29ce484222325);
	unsigned char buf[65536];
	ssize_t got, i;

	if (lseek(fd, 0, SEEK_SET) != 0)
		return (-1);
	while ((got = read(fd, buf, sizeof(buf))) != 0) {
		if (got < 0) {
			if (errno == EINTR)
				continue;
			return (-1);
		}
		for (i = 0; i < got; i++)
			h = (h ^ buf[i]) * UINT64_C(0x100000001b3);
	}
	id->kind = 'H';
	id->len = 8;
	for (i = 0; i < 8; i++)
		id->id[i] = (uint8_t)(h >> (8 * i));
	return (0);
}

int
vs_image_id(const char *path, struct vs_image_id *id, uint64_t *start, char *err,
    size_t errlen)
{
	Elf_Scn *scn = NULL;
	GElf_Shdr sh;
	GElf_Phdr ph;
	Elf *e;
	size_t i, n;
	int fd, ret = -1;

	memset(id, 0, sizeof(*id));
	*start = UINT64_MAX;
	if ((e = vs_elf_open(path, &fd, err, errlen)) == NULL) {
		/* No ELF (a bzImage): the whole file's hash, at address 0. */
		*start = 0;
		if ((fd = open(path, O_RDONLY | O_CLOEXEC)) < 0)
			return (-1);	/* err says why */
		ret = file_hash(fd, id);
		close(fd);
		if (ret < 0)
			snprintf(err, errlen, "%s: %s", path, strerror(errno));
		id->kind = 'F';
		return (ret);
	}
	while (id->kind == 0 && (scn = elf_nextscn(e, scn)) != NULL)
		if (gelf_getshdr(scn, &sh) != NULL && sh.sh_type == SHT_NOTE)
			note_build_id(scn, id);
	if (elf_getphdrnum(e, &n) == 0)
		for (i = 0; i < n; i++)
			if (gelf_getphdr(e, (int)i, &ph) != NULL && ph.p_type == PT_LOAD &&
			    ph.p_memsz != 0 && ph.p_vaddr < *start)
				*start = ph.p_vaddr;
	if (*start == UINT64_MAX)
		*start = 0;
	if (id->kind == 0 && file_hash(fd, id) < 0) {
		snprintf(err, errlen, "%s: %s", path, strerror(errno));
		goto out;
	}
	ret = 0;
out:
	elf_end(e);
	close(fd);
	return (ret);
}

int
vs_log_image(vpmu_vm *vm, const struct vpmu_cred *caller, const char *path)
{
	struct vpmu_op_writelog wl;
	struct vs_image_id id;
	uint64_t start;
	char err[300], abs[PATH_MAX];
	unsigned i, k;
	int e;

	if (vs_image_id(path, &id, &start, err, sizeof(err)) < 0) {
		fprintf(stderr, "vpmustat: the guest image: %s\n", err);
		return (VS_EXIT_USAGE);
	}
	/* The absolute path, where there is one: the log may be read elsewhere. */
	if (realpath(path, abs) != NULL)
		path = abs;
	if ((e = vpmu_log_map_in(vm, caller, -1, start, path)) != 0) {
		fprintf(stderr, "vpmustat: vpmu_log_map_in: %s\n", vpmu_strerror(e));
		return (VS_EXIT_HOST);
	}
	wl.userdata = (id.kind == 'B' ? VS_IMAGE_TAG_BUILD_ID : id.kind == 'H' ?
	    VS_IMAGE_TAG_HASH : VS_IMAGE_TAG_FILE) | id.len;
	for (i = 0; ; i += 4) {
		if ((e = vpmu_vm_op(vm, caller, VPMU_OP_WRITELOG, &wl)) != 0) {
			fprintf(stderr, "vpmustat: WRITELOG: %s\n", vpmu_strerror(e));
			return (VS_EXIT_HOST);
		}
		if (i >= id.len)
			return (0);
		for (wl.userdata = 0, k = 0; k < 4 && i + k < id.len; k++)
			wl.userdata |= (uint32_t)id.id[i + k] << (8 * k);
	}
}

int
vs_log_lstar(vpmu_vm *vm, const struct vpmu_cred *caller, uint64_t lstar)
{
	struct vpmu_op_writelog wl;
	uint32_t w[3] = { VS_IMAGE_TAG_LSTAR | 8, (uint32_t)lstar, (uint32_t)(lstar >> 32) };
	unsigned i;
	int e;

	for (i = 0; i < 3; i++) {
		wl.userdata = w[i];
		if ((e = vpmu_vm_op(vm, caller, VPMU_OP_WRITELOG, &wl)) != 0) {
			fprintf(stderr, "vpmustat: WRITELOG (LSTAR): %s\n", vpmu_strerror(e));
			return (VS_EXIT_HOST);
		}
	}
	return (0);
}

int
vs_image_check(const struct vs_profile *p, const char *elf)
{
	struct vs_image_id id;
	uint64_t start;
	char err[300], want[160], got[160];

	/* Nothing to compare with, or an image whose symbols are elsewhere. */
	if (!p->has_image || p->image_id.kind == 0 || p->image_id.kind == 'F')
		return (0);
	if (vs_image_id(elf, &id, &start, err, sizeof(err)) < 0) {
		fprintf(stderr, "vpmustat: --elf: %s\n", err);
		return (VS_EXIT_USAGE);
	}
	/* A log's build-id against a file's hash (or back): not the same file. */
	if (id.kind == p->image_id.kind && id.len == p->image_id.len &&
	    memcmp(id.id, p->image_id.id, id.len) == 0)
		return (0);
	vs_image_id_format(&p->image_id, want, sizeof(want));
	vs_image_id_format(&id, got, sizeof(got));
	fprintf(stderr, "vpmustat: --elf %s is not the image the samples belong to: "
	    "the log's is %s (%s), this file has %s\n", elf, p->image, want, got);
	return (VS_EXIT_USAGE);
}
