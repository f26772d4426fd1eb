/*
 * <vpmu-guest/dev.h> -- what <vpmu-guest/perfmon.h> and <vpmu-guest/pctr.h>
 * share: the ioctl encoding (FreeBSD's and OpenBSD's _IOC are the same) and
 * the device calls of the guest library (guest-api/guest/dev.c).
 * Freestanding: only <stdint.h>.
 */
#ifndef VPMU_GUEST_DEV_H
#define VPMU_GUEST_DEV_H

#include <stdint.h>

#define _VPMU_IOC_VOID		0x20000000u
#define _VPMU_IOC_OUT		0x40000000u	/* the driver writes the data */
#define _VPMU_IOC_IN		0x80000000u	/* the driver reads the data */
#define _VPMU_IOC_INOUT		(_VPMU_IOC_IN | _VPMU_IOC_OUT)
#define _VPMU_IOCPARM_MASK	0x1fffu
#define _VPMU_IOC(inout, group, num, len) \
	((uint32_t)(inout) | (((uint32_t)(len) & _VPMU_IOCPARM_MASK) << 16) | \
	 ((uint32_t)(group) << 8) | (uint32_t)(num))
#define _VPMU_IOR(g, n, len)	_VPMU_IOC(_VPMU_IOC_OUT, g, n, len)
#define _VPMU_IOW(g, n, len)	_VPMU_IOC(_VPMU_IOC_IN, g, n, len)
#define _VPMU_IOWR(g, n, len)	_VPMU_IOC(_VPMU_IOC_INOUT, g, n, len)
#define VPMU_IOCPARM_LEN(cmd)	(((cmd) >> 16) & _VPMU_IOCPARM_MASK)

/*
 * The device calls return what open(2), close(2) and ioctl(2) return: a
 * descriptor or 0 on success, -1 on failure with the error (a VPMU_PV_E*
 * value, FreeBSD's numbering) in vpmu_dev_errno().  fflags: VPMU_PV_FREAD and/or
 * VPMU_PV_FWRITE (<vpmu-guest/pv.h>).  vpmu_dev_ioctl() moves
 * VPMU_IOCPARM_LEN(cmd) bytes at data to the device and back.  As
 * pmc(3)'s pmc_errno(), the error lives where vpmu_dev_errno_location()
 * says: one word for the library by default; a guest kernel with threads
 * defines it (a weak symbol) to return its current thread's.
 */
int	vpmu_dev_ioctl(int fd, unsigned long cmd, void *data);
int	vpmu_dev_close(int fd);
int	vpmu_dev_errno(void);
int	*vpmu_dev_errno_location(void);

#endif /* VPMU_GUEST_DEV_H */
