/*
 * kvm_stats.c -- the KVM glue's statistics (vpmu_kvm_get_stats): the
 * vCPU's exit figures, a source's that follows the guest, and KVM's
 * "insn_emulation" over the windows libvpmu followed the guest in.
 *
 * KVM's own counters come from its binary statistics: KVM_GET_STATS_FD on
 * a vCPU fd gives a file: a header (struct kvm_stats_header), an id
 * string, descriptors (struct kvm_stats_desc, each followed by its name in
 * name_size bytes) and the data block of 64-bit values.  The descriptors
 * are read once, at open; a read is then one pread of the value
 * (Documentation/virt/kvm/api.rst, "KVM_GET_STATS_FD").
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <unistd.h>
#include <linux/kvm.h>

#include "exact_stats.h"
#include "kvm_internal.h"
#include "kvm_stats.h"

/* A sanity bound on the descriptor block (a few hundred bytes per counter). */
#define DESC_MAX	(1u << 20)

/* Find name among h's descriptors: 0 and *off, or ENOENT. */
static int
find(int fd, const struct kvm_stats_header *h, const char *name, uint64_t *off)
{
	size_t each = sizeof(struct kvm_stats_desc) + h->name_size, len;
	const struct kvm_stats_desc *d;
	uint8_t *buf;
	uint32_t i;
	int error = ENOENT;

	if (h->name_size == 0 || each > DESC_MAX || h->num_desc > DESC_MAX / each)
		return (EINVAL);
	len = each * h->num_desc;
	if ((buf = malloc(len)) == NULL)
		return (ENOMEM);
	if (pread(fd, buf, len, h->desc_offset) != (ssize_t)len) {
		free(buf);
		return (EIO);
	}
	for (i = 0; i < h->num_desc; i++) {
		d = (const struct kvm_stats_desc *)(buf + i * each);
		if (strnlen(d->name, h->name_size) < h->name_size &&
		    strcmp(d->name, name) == 0) {
			if ((d->flags & KVM_STATS_TYPE_MASK) != KVM_STATS_TYPE_CUMULATIVE ||
			    d->size != 1)
				break;		/* not a plain counter */
			*off = (uint64_t)h->data_offset + d->offset;
			error = 0;
			break;
		}
	}
	free(buf);
	return (error);
}

int
vpmu__kvm_stat_attach(int fd, const char *name, struct vpmu_kvm_stat *s)
{
	struct kvm_stats_header h;
	int error;

	if (s == NULL || name == NULL || fd < 0)
		return (EINVAL);
	s->fd = -1;
	if (pread(fd, &h, sizeof(h), 0) != (ssize_t)sizeof(h))
		return (EIO);
	if ((error = find(fd, &h, name, &s->off)) != 0)
		return (error);
	s->fd = fd;
	return (0);
}

int
vpmu__kvm_stat_open(int vcpu_fd, const char *name, struct vpmu_kvm_stat *s)
{
	int fd, error;

	if (s == NULL || name == NULL)
		return (EINVAL);
	s->fd = -1;
	if ((fd = ioctl(vcpu_fd, KVM_GET_STATS_FD, NULL)) < 0)
		return (errno);
	if ((error = vpmu__kvm_stat_attach(fd, name, s)) != 0)
		close(fd);
	return (error);
}

int
vpmu__kvm_stat_read(const struct vpmu_kvm_stat *s, uint64_t *val)
{
	ssize_t n;

	if (s == NULL || s->fd < 0)
		return (EBADF);
	if ((n = pread(s->fd, val, sizeof(*val), (off_t)s->off)) != (ssize_t)sizeof(*val))
		return (n < 0 ? errno : EIO);
	return (0);
}

void
vpmu__kvm_stat_close(struct vpmu_kvm_stat *s)
{
	if (s != NULL && s->fd >= 0) {
		close(s->fd);
		s->fd = -1;
	}
}

/* ---- insn_emulation, next to the exact source's count -------------------------- */

/* The statistic, where the kernel has it (emulating hosts); none is not an error. */
void
vpmu__kvm_emul_open(struct kvm_vcpu_ctx *c)
{
	vpmu__kvm_stat_close(&c->emul);
	c->emul_on = false;
	c->emul_sum = 0;
	(void)vpmu__kvm_stat_open(c->fd, "insn_emulation", &c->emul);
}

/*
 * Libvpmu starts (on) or stops following the guest, at an entry: the
 * statistic's increase while it follows adds up in emul_sum.  A failed
 * read drops the statistic.
 */
void
vpmu__kvm_emul_window(struct kvm_vcpu_ctx *c, bool on)
{
	uint64_t now;

	if (c->emul.fd < 0 || on == c->emul_on)
		return;
	if (vpmu__kvm_stat_read(&c->emul, &now) != 0) {
		vpmu__kvm_stat_close(&c->emul);
		return;
	}
	if (on)
		c->emul_start = now;
	else
		c->emul_sum += now - c->emul_start;
	c->emul_on = on;
}

/*
 * The figures of a source that follows the guest (exec_stats: the exact
 * source's), and insn_emulation over the time it followed.
 */
static void
kvm_stats_exact(vpmu_kvm *k, unsigned cpu, struct vpmu_kvm_stats *st)
{
	struct kvm_vcpu_ctx *c = &k->vcpu[cpu];
	struct vpmu_exact_stats xs;
	uint64_t now;

	if (k->vm->src->exec_stats != NULL) {
		vpmu__vm_lock(k->vm);
		if (k->vm->src->exec_stats(k->vm->src_state, cpu, &xs) == 0) {
			st->exact_retired = xs.retired;
			st->exact_completed = xs.completed;
			st->exact_ff_loops = xs.ff_loops;
			st->exact_ff_insns = xs.ff_insns;
			st->exact_closed_loops = xs.closed_loops;
			st->exact_closed_insns = xs.closed_insns;
			st->exact_interp_runs = xs.interp_runs;
			st->exact_interp_insns = xs.interp_insns;
			st->user_unseen = xs.user_unseen;
			st->guest_tf = xs.guest_tf;
			st->exact_foreseen = xs.foreseen;
			st->exact_mispredicted = xs.mispredicted;
			memcpy(st->exact_step_why, xs.step_why, sizeof(st->exact_step_why));
			st->exact_step_why[VPMU_STEP_DEBUG_REGS] +=
			    __atomic_load_n(&c->dr_steps, __ATOMIC_RELAXED);
			st->exact_step_why[VPMU_STEP_EVENT_HELD] +=
			    __atomic_load_n(&c->held_steps, __ATOMIC_RELAXED);
		}
		vpmu__vm_unlock(k->vm);
	}
	if (c->emul.fd < 0)
		return;
	st->insn_emulation = c->emul_sum;
	if (c->emul_on) {
		if (vpmu__kvm_stat_read(&c->emul, &now) != 0)
			return;
		st->insn_emulation += now - c->emul_start;
	}
	st->has_insn_emulation = 1;
}

int
vpmu_kvm_get_stats(vpmu_kvm *k, unsigned cpu, struct vpmu_kvm_stats *st)
{
	struct vpmu_vcpu_stats v;
	int error;

	if (k == NULL || st == NULL || cpu >= k->nvcpus)
		return (EINVAL);
	if ((error = vpmu_vcpu_get_stats(k->vm, cpu, &v)) != 0)
		return (error);
	memset(st, 0, sizeof(*st));
	st->msr_reads = v.msr_reads;
	st->msr_writes = v.msr_writes;
	st->msr_gp = v.msr_gp;
	st->steps = v.steps;
	st->breaks = v.breaks;
	st->completed = v.completed;
	st->rdpmc = v.rdpmc;
	st->rdpmc_gp = v.rdpmc_gp;
	st->pmis = v.pmis - k->vcpu[cpu].pmis_masked;
	st->pmis_masked = k->vcpu[cpu].pmis_masked;
	kvm_stats_exact(k, cpu, st);
	return (0);
}
