/*
 * kvm_stats.c -- one cumulative counter of a vCPU's binary statistics.
 *
 * KVM_GET_STATS_FD on a vCPU fd gives a file: a header (struct
 * kvm_stats_header), an id string, descriptors (struct kvm_stats_desc,
 * each followed by its name in name_size bytes) and the data block of
 * 64-bit values.  The descriptors are read once, at open; a read is then
 * one pread of the value (Documentation/virt/kvm/api.rst, "KVM_GET_STATS_FD").
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <unistd.h>
#include <linux/kvm.h>

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
