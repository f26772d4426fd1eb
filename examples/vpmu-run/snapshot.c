/*
 * snapshot.c -- vpmu-run's --snapshot and --resume (vpmu-run(1), SNAPSHOTS).
 *
 * The guest asks with a 32-bit OUT to port 0xf5 (ports.c's port table stops
 * the run and notes it); once every vCPU thread has returned, main.c calls
 * vr_snapshot_save() from its own thread:
 *   1. each vCPU enters KVM_RUN once with immediate_exit set, which finishes
 *      the port I/O of its last exit without running the guest, so the
 *      registers read next are past the OUT (KVM's rule for saving state);
 *   2. guest RAM, each vCPU's state, the in-kernel irqchip's when there is
 *      one, and libvpmu's blob (vpmu_vm_save()) go to FILE, then rename(2)
 *      puts it in place.
 * vr_snapshot_resume() runs after the usual set-up (same options: the image
 * is loaded and the vCPUs are made as for a boot) and overwrites RAM, the
 * vCPUs' state and the virtual PMU with the file's.  It does not call
 * vpmu_kvm_vcpu_resync(): libvpmu's blob carries the exact source's last
 * retirement point, so the first exit after the resume counts what retired
 * since the OUT, as an uninterrupted run would have.
 *
 * The file (all integers little-endian):
 *   header   "VPMU-RUN", format version u32 (1), vCPUs u32, RAM bytes u64,
 *            guest image FNV-1a 64 u64, host-counters u32, mux-interval us
 *            u32, flags u32 (bit 0: in-kernel irqchip; bit 1: kvm PMU mode,
 *            the guest's counters in the MSRS records as KVM's index list
 *            gives them), reserved u32 (0),
 *            model 128 bytes (canonical string, NUL-padded), source 16 bytes
 *   records  tag u32, vCPU u32 (0xffffffff: the VM), length u64, bytes:
 *            RAM  guest RAM from guest-physical 0
 *            REGS SREG FPU_ XCRS XSAV EVNT MPST DBGR LAPI   the KVM structure
 *                 of the x86-64 KVM API (kvm_regs, kvm_sregs, ...)
 *            MSRS count u32, then per MSR index u32, value u64
 *            IRQC kvm_irqchip (one record per chip: PIC master, slave, IOAPIC)
 *            VPMU libvpmu's blob (vpmu_snapshot(3))
 *            END_ CRC-32 (IEEE) u32 of every byte of the file before it
 */
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/stat.h>
#include <unistd.h>
#include <linux/kvm.h>

#include <vpmu/model.h>
#include <vpmu/snapshot.h>

#include "vpmu-run.h"

#define MAGIC		"VPMU-RUN"
#define FORMAT		1u
#define HDR_LEN		(8 + 4 + 4 + 8 + 8 + 4 + 4 + 4 + 4 + 128 + 16)
#define VM_REC		0xffffffffu
#define F_IRQCHIP	0x1u
#define F_PMU_KVM	0x2u	/* kvm mode: the PMU MSRs are in MSRS records */

#define TAG(s)		((uint32_t)(s)[0] | (uint32_t)(s)[1] << 8 | \
			 (uint32_t)(s)[2] << 16 | (uint32_t)(s)[3] << 24)

uint64_t
vr_snapshot_hash(const void *p, size_t n)
{
	const uint8_t *b = p;
	uint64_t h = 0xcbf29ce484222325ull;

	while (n-- > 0)
		h = (h ^ *b++) * 0x100000001b3ull;
	return (h);
}

/* ---- writing ------------------------------------------------------------------------- */

struct out {
	FILE *f;
	uint32_t crc;
	bool err;
};

static void
put(struct out *o, const void *p, size_t n)
{
	if (o->err || n == 0)
		return;
	o->crc = vpmu_crc32(o->crc, p, n);
	if (fwrite(p, 1, n, o->f) != n)
		o->err = true;
}

static void
put32(struct out *o, uint32_t v)
{
	uint8_t b[4];

	vr_put32(b, v);
	put(o, b, sizeof(b));
}

static void
put64(struct out *o, uint64_t v)
{
	uint8_t b[8];

	vr_put64(b, v);
	put(o, b, sizeof(b));
}

static void
record(struct out *o, const char *tag, uint32_t cpu, const void *p, uint64_t len)
{
	put32(o, TAG(tag));
	put32(o, cpu);
	put64(o, len);
	put(o, p, (size_t)len);
}

static void
header(struct out *o, const struct vr_snapconf *sc)
{
	char model[128], source[16];

	memset(model, 0, sizeof(model));
	memset(source, 0, sizeof(source));
	snprintf(model, sizeof(model), "%s", sc->model);
	snprintf(source, sizeof(source), "%s", sc->source);
	put(o, MAGIC, 8);
	put32(o, FORMAT);
	put32(o, sc->nvcpus);
	put64(o, sc->ram_size);
	put64(o, sc->image_hash);
	put32(o, sc->host_counters);
	put32(o, sc->mux_us);
	put32(o, (sc->irqchip_kernel ? F_IRQCHIP : 0) | (sc->pmu_kvm ? F_PMU_KVM : 0));
	put32(o, 0);
	put(o, model, sizeof(model));
	put(o, source, sizeof(source));
}

static int
fail_errno(const char *what, unsigned cpu)
{
	if (cpu == VM_REC)
		fprintf(stderr, "%s: --snapshot: %s: %s\n", vr_progname, what, strerror(errno));
	else
		fprintf(stderr, "%s: --snapshot: vCPU %u: %s: %s\n", vr_progname, cpu, what,
		    strerror(errno));
	return (VR_EXIT_HOST);
}

/* Get a KVM structure and write it as a record. */
static int
get_rec(struct out *o, int fd, unsigned long req, const char *reqname, const char *tag,
    unsigned cpu, void *buf, size_t len)
{
	memset(buf, 0, len);
	if (ioctl(fd, req, buf) < 0)
		return (fail_errno(reqname, cpu));
	record(o, tag, cpu, buf, len);
	return (0);
}

/* The MSRs KVM lists and lets us read, but not the PMU's (libvpmu's blob has them). */
static int
save_msrs(struct vr_vm *vm, struct vr_vcpu *c, struct out *o, const struct kvm_msr_list *list)
{
	enum vpmu_msr_verdict vd;
	uint32_t *idx, n = 0, i;
	uint64_t *val, v;

	idx = calloc(list->nmsrs + 1, sizeof(*idx));
	val = calloc(list->nmsrs + 1, sizeof(*val));
	if (idx == NULL || val == NULL) {
		free(idx);
		free(val);
		errno = ENOMEM;
		return (fail_errno("MSRs", c->index));
	}
	for (i = 0; i < list->nmsrs; i++) {
		if (vpmu_msr_read(vm->pmu, c->index, list->indices[i], &v, &vd) != 0 ||
		    vd != VPMU_MSR_NOT_PMU)
			continue;
		v = 0;
		if (vr_msrs(c->fd, false, &list->indices[i], &v, 1) != 0)
			continue;		/* KVM will not read it: not saved */
		idx[n] = list->indices[i];
		val[n++] = v;
	}
	put32(o, TAG("MSRS"));
	put32(o, c->index);
	put64(o, 4 + (uint64_t)n * 12);
	put32(o, n);
	for (i = 0; i < n; i++) {
		put32(o, idx[i]);
		put64(o, val[i]);
	}
	free(idx);
	free(val);
	return (0);
}

static struct kvm_msr_list *
msr_list(int kvm_fd)
{
	struct kvm_msr_list probe = { .nmsrs = 0 }, *l;

	if (ioctl(kvm_fd, KVM_GET_MSR_INDEX_LIST, &probe) < 0 && errno != E2BIG)
		return (NULL);
	if ((l = calloc(1, sizeof(*l) + probe.nmsrs * sizeof(l->indices[0]))) == NULL)
		return (NULL);
	l->nmsrs = probe.nmsrs;
	if (ioctl(kvm_fd, KVM_GET_MSR_INDEX_LIST, l) < 0) {
		free(l);
		return (NULL);
	}
	return (l);
}

static bool
has_cap(struct vr_vm *vm, long cap)
{
	return (ioctl(vm->kvm_fd, KVM_CHECK_EXTENSION, cap) > 0);
}

static int
save_vcpu(struct vr_vm *vm, struct vr_vcpu *c, struct out *o, const struct kvm_msr_list *ml)
{
	union {
		struct kvm_regs regs;
		struct kvm_sregs sregs;
		struct kvm_fpu fpu;
		struct kvm_xcrs xcrs;
		struct kvm_xsave xsave;
		struct kvm_vcpu_events ev;
		struct kvm_mp_state mp;
		struct kvm_debugregs dr;
		struct kvm_lapic_state lapic;
	} u;
	unsigned i = c->index;
	int r;

	if ((r = get_rec(o, c->fd, KVM_GET_REGS, "KVM_GET_REGS", "REGS", i, &u.regs,
	    sizeof(u.regs))) != 0 ||
	    (r = get_rec(o, c->fd, KVM_GET_SREGS, "KVM_GET_SREGS", "SREG", i, &u.sregs,
	    sizeof(u.sregs))) != 0 ||
	    (r = get_rec(o, c->fd, KVM_GET_FPU, "KVM_GET_FPU", "FPU_", i, &u.fpu,
	    sizeof(u.fpu))) != 0)
		return (r);
	if (has_cap(vm, KVM_CAP_XCRS) && (r = get_rec(o, c->fd, KVM_GET_XCRS, "KVM_GET_XCRS",
	    "XCRS", i, &u.xcrs, sizeof(u.xcrs))) != 0)
		return (r);
	/* The legacy 4 KiB area; a larger one (KVM_CAP_XSAVE2: AMX) is not saved. */
	if (has_cap(vm, KVM_CAP_XSAVE) &&
	    ioctl(vm->vm_fd, KVM_CHECK_EXTENSION, KVM_CAP_XSAVE2) <= (int)sizeof(u.xsave) &&
	    (r = get_rec(o, c->fd, KVM_GET_XSAVE, "KVM_GET_XSAVE", "XSAV", i, &u.xsave,
	    sizeof(u.xsave))) != 0)
		return (r);
	if ((r = save_msrs(vm, c, o, ml)) != 0)
		return (r);
	if (vm->irqchip_kernel && (r = get_rec(o, c->fd, KVM_GET_LAPIC, "KVM_GET_LAPIC",
	    "LAPI", i, &u.lapic, sizeof(u.lapic))) != 0)
		return (r);
	if ((r = get_rec(o, c->fd, KVM_GET_VCPU_EVENTS, "KVM_GET_VCPU_EVENTS", "EVNT", i,
	    &u.ev, sizeof(u.ev))) != 0 ||
	    (r = get_rec(o, c->fd, KVM_GET_MP_STATE, "KVM_GET_MP_STATE", "MPST", i, &u.mp,
	    sizeof(u.mp))) != 0 ||
	    (r = get_rec(o, c->fd, KVM_GET_DEBUGREGS, "KVM_GET_DEBUGREGS", "DBGR", i, &u.dr,
	    sizeof(u.dr))) != 0)
		return (r);
	return (0);
}

int
vr_snapshot_save(struct vr_vm *vm, const struct vr_snapconf *sc)
{
	struct out o = { NULL, 0, false };
	struct kvm_msr_list *ml = NULL;
	struct kvm_irqchip chip;
	char tmp[4096];
	uint8_t *blob = NULL;
	size_t blen = 0;
	unsigned i;
	int r = VR_EXIT_HOST, e;
	bool to_stdout = strcmp(vm->snapshot_path, "-") == 0;

	/* The OUT's completion (and any other pending I/O), without guest code. */
	for (i = 0; i < vm->nvcpus; i++) {
		struct vr_vcpu *c = &vm->vcpu[i];

		__atomic_store_n(&c->run->immediate_exit, 1, __ATOMIC_RELEASE);
		if (ioctl(c->fd, KVM_RUN, 0) == 0 || (errno != EINTR && errno != EAGAIN))
			return (fail_errno("KVM_RUN (immediate exit) did not return EINTR", i));
		__atomic_store_n(&c->run->immediate_exit, 0, __ATOMIC_RELEASE);
	}
	if ((ml = msr_list(vm->kvm_fd)) == NULL)
		return (fail_errno("KVM_GET_MSR_INDEX_LIST", VM_REC));
	if ((e = vpmu_vm_save(vm->pmu, NULL, &blen)) != ENOSPC ||
	    (blob = malloc(blen)) == NULL || (e = vpmu_vm_save(vm->pmu, blob, &blen)) != 0) {
		fprintf(stderr, "%s: --snapshot: vpmu_vm_save: %s\n", vr_progname,
		    vpmu_strerror(e == ENOSPC ? ENOMEM : e));
		goto out;
	}
	/* "-": standard output, written as it comes (no file to rename). */
	snprintf(tmp, sizeof(tmp), "%s.tmp", vm->snapshot_path);
	if (to_stdout)
		o.f = stdout;
	else if ((o.f = fopen(tmp, "wb")) == NULL) {
		fprintf(stderr, "%s: --snapshot %s: %s\n", vr_progname, tmp, strerror(errno));
		goto out;
	}
	header(&o, sc);
	record(&o, "RAM_", VM_REC, vm->ram, vm->ram_size);
	for (i = 0; i < vm->nvcpus; i++)
		if ((r = save_vcpu(vm, &vm->vcpu[i], &o, ml)) != 0)
			goto out;
	r = VR_EXIT_HOST;
	if (vm->irqchip_kernel)
		for (i = 0; i < 3; i++) {	/* PIC master, PIC slave, IOAPIC */
			memset(&chip, 0, sizeof(chip));
			chip.chip_id = i;
			if (ioctl(vm->vm_fd, KVM_GET_IRQCHIP, &chip) < 0) {
				(void)fail_errno("KVM_GET_IRQCHIP", VM_REC);
				goto out;
			}
			record(&o, "IRQC", VM_REC, &chip, sizeof(chip));
		}
	record(&o, "VPMU", VM_REC, blob, blen);
	put32(&o, TAG("END_"));
	put32(&o, VM_REC);
	put64(&o, 4);
	put32(&o, o.crc);
	errno = 0;
	if (o.err || fflush(o.f) != 0 || ferror(o.f) ||
	    (!to_stdout && fsync(fileno(o.f)) != 0)) {
		fprintf(stderr, "%s: --snapshot %s: %s\n", vr_progname,
		    to_stdout ? "- (standard output)" : tmp,
		    errno != 0 ? strerror(errno) : "a write failed");
		goto out;
	}
	if (to_stdout) {
		o.f = NULL;
		r = 0;
		goto out;
	}
	if (fclose(o.f) != 0 || rename(tmp, vm->snapshot_path) != 0) {
		o.f = NULL;
		fprintf(stderr, "%s: --snapshot %s: %s\n", vr_progname, vm->snapshot_path,
		    strerror(errno));
		goto out;
	}
	o.f = NULL;
	r = 0;
out:
	if (o.f != NULL && !to_stdout) {
		fclose(o.f);
		unlink(tmp);
	}
	free(blob);
	free(ml);
	return (r);
}

/* ---- reading --------------------------------------------------------------------------- */

struct in {
	const uint8_t *b;
	size_t len, off;
};

/* A mismatch or a bad file: status 2, with what is wrong. */
static int
bad(const char *path, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

static int
bad(const char *path, const char *fmt, ...)
{
	va_list ap;

	fprintf(stderr, "%s: --resume %s: ", vr_progname, path);
	va_start(ap, fmt);
	vfprintf(stderr, fmt, ap);
	va_end(ap);
	fputc('\n', stderr);
	return (VR_EXIT_USAGE);
}

static int
read_file(const char *path, uint8_t **bp, size_t *lenp)
{
	struct stat st;
	uint8_t *b;
	size_t got = 0;
	ssize_t n;
	int fd;

	if (strcmp(path, "-") == 0) {	/* standard input, to its end */
		char err[256];

		if (vr_read_all(STDIN_FILENO, "standard input", UINT64_C(1) << 34, bp, lenp,
		    err, sizeof(err)) < 0)
			return (bad(path, "%s", err));
		return (0);
	}
	if ((fd = open(path, O_RDONLY | O_CLOEXEC)) < 0 || fstat(fd, &st) < 0) {
		if (fd >= 0)
			close(fd);
		return (bad(path, "%s", strerror(errno)));
	}
	if ((b = malloc((size_t)st.st_size + 1)) == NULL) {
		close(fd);
		return (bad(path, "%s", strerror(ENOMEM)));
	}
	while (got < (size_t)st.st_size &&
	    (n = read(fd, b + got, (size_t)st.st_size - got)) > 0)
		got += (size_t)n;
	close(fd);
	*bp = b;
	*lenp = got;
	return (0);
}

/* The header against this run's options: each difference said. */
static int
check_header(const char *path, const uint8_t *b, size_t len, const struct vr_snapconf *sc)
{
	char model[129], source[17];
	uint32_t flags;

	if (len < HDR_LEN || memcmp(b, MAGIC, 8) != 0)
		return (bad(path, "not a vpmu-run snapshot"));
	if (vr_get32(b + 8) != FORMAT)
		return (bad(path, "snapshot format %" PRIu32 ", this vpmu-run reads %u",
		    vr_get32(b + 8), FORMAT));
	memcpy(model, b + 48, 128);
	model[128] = '\0';
	memcpy(source, b + 176, 16);
	source[16] = '\0';
	flags = vr_get32(b + 40);
	if (vr_get32(b + 12) != sc->nvcpus)
		return (bad(path, "made with --vcpus %" PRIu32 ", not %u", vr_get32(b + 12),
		    sc->nvcpus));
	if (vr_get64(b + 16) != sc->ram_size)
		return (bad(path, "made with --mem %" PRIu64 ", not %" PRIu64,
		    vr_get64(b + 16) >> 20, sc->ram_size >> 20));
	if (vr_get64(b + 24) != sc->image_hash)
		return (bad(path, "made with another guest image"));
	if (strcmp(model, sc->model) != 0)
		return (bad(path, "made with --pmu %s, not %s", model, sc->model));
	if (strcmp(source, sc->source) != 0)
		return (bad(path, "made with --source %s, not %s", source, sc->source));
	if (vr_get32(b + 32) != sc->host_counters || vr_get32(b + 36) != sc->mux_us)
		return (bad(path, "made with other --host-counters or --mux-interval"));
	if (((flags & F_IRQCHIP) != 0) != sc->irqchip_kernel ||
	    (flags & ~(F_IRQCHIP | F_PMU_KVM)) != 0)
		return (bad(path, "made with%s an in-kernel irqchip",
		    (flags & F_IRQCHIP) ? "" : "out"));
	if (((flags & F_PMU_KVM) != 0) != sc->pmu_kvm)
		return (bad(path, "made in %s mode, and this run is in %s mode",
		    (flags & F_PMU_KVM) ? "kvm" : "trap", sc->pmu_kvm ? "kvm" : "trap"));
	return (0);
}

static int
set_one(struct vr_vcpu *c, unsigned long req, const char *name, const void *p)
{
	if (ioctl(c->fd, req, p) < 0) {
		fprintf(stderr, "%s: --resume: vCPU %u: %s: %s\n", vr_progname, c->index, name,
		    strerror(errno));
		return (VR_EXIT_HOST);
	}
	return (0);
}

static int
set_msrs(struct vr_vcpu *c, const uint8_t *p, uint64_t len, const char *path)
{
	uint32_t n, i, index;
	uint64_t v, now;

	if (len < 4 || (n = vr_get32(p)) != (len - 4) / 12 || (len - 4) % 12 != 0)
		return (bad(path, "a bad MSR record"));
	for (i = 0; i < n; i++) {
		index = vr_get32(p + 4 + 12 * (size_t)i);
		now = v = vr_get64(p + 8 + 12 * (size_t)i);
		if (vr_msrs(c->fd, true, &index, &now, 1) == 0)
			continue;
		/*
		 * Some MSRs KVM reads but will not take back as they are
		 * (MSR_KVM_ASYNC_PF_INT without its CPUID bit): fine when the
		 * new vCPU holds the saved value already.
		 */
		if (vr_msrs(c->fd, false, &index, &now, 1) == 0 && now == v)
			continue;
		fprintf(stderr, "%s: --resume: vCPU %u: KVM_SET_MSRS %#" PRIx32
		    " refused %#" PRIx64 "\n", vr_progname, c->index, index, v);
		return (VR_EXIT_HOST);
	}
	return (0);
}

static const struct vcpu_rec {
	const char *tag;
	size_t len;
	unsigned long req;
	const char *name;
	unsigned bit;
} vcpu_recs[] = {
	{ "SREG", sizeof(struct kvm_sregs), KVM_SET_SREGS, "KVM_SET_SREGS", 0 },
	{ "REGS", sizeof(struct kvm_regs), KVM_SET_REGS, "KVM_SET_REGS", 1 },
	{ "FPU_", sizeof(struct kvm_fpu), KVM_SET_FPU, "KVM_SET_FPU", 2 },
	{ "XCRS", sizeof(struct kvm_xcrs), KVM_SET_XCRS, "KVM_SET_XCRS", 3 },
	{ "XSAV", sizeof(struct kvm_xsave), KVM_SET_XSAVE, "KVM_SET_XSAVE", 4 },
	{ "LAPI", sizeof(struct kvm_lapic_state), KVM_SET_LAPIC, "KVM_SET_LAPIC", 5 },
	{ "EVNT", sizeof(struct kvm_vcpu_events), KVM_SET_VCPU_EVENTS, "KVM_SET_VCPU_EVENTS", 6 },
	{ "MPST", sizeof(struct kvm_mp_state), KVM_SET_MP_STATE, "KVM_SET_MP_STATE", 7 },
	{ "DBGR", sizeof(struct kvm_debugregs), KVM_SET_DEBUGREGS, "KVM_SET_DEBUGREGS", 8 },
};
#define NRECS	(sizeof(vcpu_recs) / sizeof(vcpu_recs[0]))
#define MSR_BIT	9
/* What every vCPU must have: registers, MSRs, events, MP state, debug registers. */
#define MUST	(1u << 0 | 1u << 1 | 1u << 2 | 1u << 6 | 1u << 7 | 1u << 8 | 1u << MSR_BIT)

/*
 * Apply the records in the file's order, which is the order that works
 * (segment registers before the general ones, MSRs after both, the LAPIC
 * before the events).
 */
int
vr_snapshot_resume(struct vr_vm *vm, const char *path, const struct vr_snapconf *sc)
{
	uint8_t *b = NULL;
	size_t len = 0, off;
	unsigned seen[VR_MAX_VCPUS] = { 0 }, i, k, nchip = 0;
	bool ram = false, pmu = false;
	int r, e;

	if ((r = read_file(path, &b, &len)) != 0)
		return (r);
	if ((r = check_header(path, b, len, sc)) != 0)
		goto out;
	/* The whole file is checked before anything is applied. */
	if (len < HDR_LEN + 20 || vr_get32(b + len - 20) != TAG("END_") ||
	    vr_get32(b + len - 16) != VM_REC || vr_get64(b + len - 12) != 4 ||
	    vpmu_crc32(0, b, len - 4) != vr_get32(b + len - 4)) {
		r = bad(path, "truncated or corrupted (its CRC does not match)");
		goto out;
	}
	for (off = HDR_LEN; off < len - 20; ) {
		uint32_t tag, cpu;
		uint64_t rl;
		const uint8_t *p;

		if (len - 20 - off < 16 || (rl = vr_get64(b + off + 8)) > len - 20 - off - 16) {
			r = bad(path, "a record runs past the end");
			goto out;
		}
		tag = vr_get32(b + off);
		cpu = vr_get32(b + off + 4);
		p = b + off + 16;
		off += 16 + (size_t)rl;
		if (tag == TAG("RAM_")) {
			if (rl != vm->ram_size || cpu != VM_REC) {
				r = bad(path, "RAM of %" PRIu64 " bytes, not %" PRIu64, rl,
				    vm->ram_size);
				goto out;
			}
			memcpy(vm->ram, p, (size_t)rl);
			ram = true;
		} else if (tag == TAG("VPMU")) {
			if ((e = vpmu_vm_restore(vm->pmu, p, (size_t)rl)) != 0) {
				if (e == EBADF)
					r = bad(path, "libvpmu: a log descriptor of the snapshot "
					    "was not offered (--guest-log)");
				else if (e == ENOMEM || e == EAGAIN) {
					fprintf(stderr, "%s: --resume: vpmu_vm_restore: %s\n",
					    vr_progname, vpmu_strerror(e));
					r = VR_EXIT_HOST;
				} else
					r = bad(path, "libvpmu refuses its virtual PMU: %s",
					    vpmu_strerror(e));
				goto out;
			}
			pmu = true;
		} else if (tag == TAG("IRQC")) {
			if (!vm->irqchip_kernel || cpu != VM_REC ||
			    rl != sizeof(struct kvm_irqchip) || nchip >= 3) {
				r = bad(path, "a bad irqchip record");
				goto out;
			}
			nchip++;
			if (ioctl(vm->vm_fd, KVM_SET_IRQCHIP, p) < 0) {
				fprintf(stderr, "%s: --resume: KVM_SET_IRQCHIP: %s\n",
				    vr_progname, strerror(errno));
				r = VR_EXIT_HOST;
				goto out;
			}
		} else if (tag == TAG("MSRS")) {
			if (cpu >= vm->nvcpus) {
				r = bad(path, "a record of vCPU %" PRIu32, cpu);
				goto out;
			}
			if ((r = set_msrs(&vm->vcpu[cpu], p, rl, path)) != 0)
				goto out;
			seen[cpu] |= 1u << MSR_BIT;
		} else {
			for (k = 0; k < NRECS && tag != TAG(vcpu_recs[k].tag); k++)
				;
			if (k == NRECS || cpu >= vm->nvcpus || rl != vcpu_recs[k].len ||
			    (k == 5 && !vm->irqchip_kernel)) {
				r = bad(path, "an unknown or malformed record");
				goto out;
			}
			if ((r = set_one(&vm->vcpu[cpu], vcpu_recs[k].req, vcpu_recs[k].name,
			    p)) != 0)
				goto out;
			seen[cpu] |= 1u << vcpu_recs[k].bit;
		}
	}
	r = 0;
	for (i = 0; i < vm->nvcpus && r == 0; i++)
		if ((seen[i] & MUST) != MUST)
			r = bad(path, "vCPU %u's state is incomplete", i);
	if (r == 0 && (!ram || !pmu || (vm->irqchip_kernel && nchip != 3)))
		r = bad(path, "incomplete: RAM, irqchip or virtual PMU missing");
out:
	free(b);
	return (r);
}
