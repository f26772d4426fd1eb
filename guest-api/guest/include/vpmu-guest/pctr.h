/*
 * <vpmu-guest/pctr.h> -- OpenBSD's pctr(4) (<machine/pctr.h>, amd64) for
 * guests of libvpmu's paravirtual channel.
 *
 * The names and values are OpenBSD's; the device is reached through the
 * channel (vpmu_pctr(4)): vpmu_pctr_open() stands for open("/dev/pctr"),
 * vpmu_dev_ioctl() for ioctl(2).  rdpmc() reads a counter from the
 * calling process's fast-read page (<vpmu-guest/fastpage.h>), where
 * libvpmu publishes the pctr counters of the vCPU the process runs on,
 * without a doorbell.  Freestanding: needs <stdint.h> only.
 */
#ifndef VPMU_GUEST_PCTR_H
#define VPMU_GUEST_PCTR_H

#include <stddef.h>
#include <stdint.h>

#include <vpmu-guest/pv.h>
#include <vpmu-guest/fastpage.h>

#include <vpmu-guest/dev.h>

typedef uint64_t pctrval;

#define PCTR_NUM	4		/* counters in struct pctrst (Intel uses 2, AMD 4) */
#define PCTR_INTEL_NUM	2
#define PCTR_AMD_NUM	4
#define _PATH_PCTR	"/dev/pctr"

struct pctrst {				/* 56 bytes */
	unsigned int pctr_fn[PCTR_NUM];	/*  0: the function of each counter */
	pctrval pctr_tsc;		/* 16: the time stamp counter */
	pctrval pctr_hwc[PCTR_NUM];	/* 24: the counters, 40 bits */
};

/* The function word: the x86 PERFEVTSEL layout. */
#define PCTR_U		0x010000	/* count in user mode */
#define PCTR_K		0x020000	/* count in kernel mode */
#define PCTR_E		0x040000	/* edge detect */
#define PCTR_EN		0x400000	/* enable */
#define PCTR_I		0x800000	/* invert the counter mask */

#define PCTR_UM_M	0x0800		/* unit mask: modified */
#define PCTR_UM_E	0x0400		/* exclusive */
#define PCTR_UM_S	0x0200		/* shared */
#define PCTR_UM_I	0x0100		/* invalid */
#define PCTR_UM_MESI	(PCTR_UM_M | PCTR_UM_E | PCTR_UM_S | PCTR_UM_I)
#define PCTR_UM_A	0x2000		/* any initiator */

#define PCTR_UM_SHIFT	8		/* unit mask */
#define PCTR_CM_SHIFT	24		/* counter mask (threshold) */

/* Bits 19..21 (pin control, APIC interrupt, reserved): PCIOCSx refuses them. */
#define PCTR_RESERVED	0x380000

#define PCIOCRD		_VPMU_IOR('c', 1, 56)	/* struct pctrst: 0x40386301 */
#define PCIOCS0		_VPMU_IOW('c', 8, 4)	/* unsigned int: 0x80046308 */
#define PCIOCS1		_VPMU_IOW('c', 9, 4)	/* 0x80046309 */
#define PCIOCS2		_VPMU_IOW('c', 10, 4)	/* 0x8004630a */
#define PCIOCS3		_VPMU_IOW('c', 11, 4)	/* 0x8004630b */

/* open("/dev/pctr", fflags); minor 0 (vpmu_pctr_open_minor() for others). */
int	vpmu_pctr_open(int fflags);
int	vpmu_pctr_open_minor(int fflags, unsigned minor);

static inline pctrval
rdtsc(void)
{
	uint32_t lo, hi;

	__asm__ volatile("rdtsc" : "=a"(lo), "=d"(hi));
	return ((pctrval)hi << 32 | lo);
}

/*
 * rdpmc(ctr): counter ctr (0 .. 3) of the vCPU the process runs on, 40
 * bits, read from the process's fast-read page without an exit (slot ctr;
 * <vpmu-guest/fastpage.h> says how fresh it is).  The page is the one
 * vpmu_pctr_map() registered (it returns 0, or -1 with vpmu_dev_errno());
 * with none, or no function set on ctr, rdpmc() reads 0.
 */
extern volatile struct vpmu_fastpage *vpmu_pctr_page;
int	vpmu_pctr_map(volatile struct vpmu_fastpage *pg);

static inline pctrval
rdpmc(unsigned ctr)
{
	uint64_t v;

	if (vpmu_pctr_page == NULL || ctr >= PCTR_NUM ||
	    vpmu_fast_read(vpmu_pctr_page, ctr, &v, NULL) != 0)
		return (0);
	return (v & 0xffffffffffull);
}

#endif /* VPMU_GUEST_PCTR_H */
