/*
 * kvm_stats.h -- one counter of a vCPU's binary statistics
 * (KVM_GET_STATS_FD): the KVM glue reads "insn_emulation" with it
 * (vpmu_kvm(3), vpmu_exact(7)).
 */
#ifndef VPMU_KVM_STATS_H
#define VPMU_KVM_STATS_H

#include <stdint.h>

struct vpmu_kvm_stat {
	int	 fd;			/* the vCPU's stats fd; -1: not open */
	uint64_t off;			/* file offset of the counter's value */
};

/*
 * Open the vCPU's statistics and find the cumulative counter name.  0;
 * ENOENT when the vCPU has no such counter; ENOTTY when the kernel has no
 * binary statistics; another errno on failure.  On failure s->fd is -1.
 */
int	vpmu__kvm_stat_open(int vcpu_fd, const char *name, struct vpmu_kvm_stat *s);
/*
 * The same on an open stats file fd (unit tests give a file of their
 * own): 0, with s->fd = fd (closed by vpmu__kvm_stat_close); ENOENT; EIO
 * for a short file; EINVAL for an implausible header.  fd is not closed
 * on failure.
 */
int	vpmu__kvm_stat_attach(int fd, const char *name, struct vpmu_kvm_stat *s);
/* Its value now (one pread): 0, EBADF when not open, or errno. */
int	vpmu__kvm_stat_read(const struct vpmu_kvm_stat *s, uint64_t *val);
void	vpmu__kvm_stat_close(struct vpmu_kvm_stat *s);

#endif /* VPMU_KVM_STATS_H */
