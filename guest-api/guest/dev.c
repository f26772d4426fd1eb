/*
 * dev.c -- the guest library's devices: perfmon(4) and pctr(4) opened,
 * driven and closed through the paravirtual channel (vpmu_perfmon(4),
 * vpmu_pctr(4)).  Freestanding, like pv.c.
 *
 * The two devices have descriptor spaces of their own on the host, so the
 * library hands out its own descriptors: an index into a table that says
 * which device and which host descriptor it stands for.  The table is
 * shared by every vCPU (one process, as vpmu-run's guests are); a slot is
 * claimed with a compare-and-swap so two vCPUs may open at once.
 */
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include <vpmu-guest/pv.h>
#include <vpmu-guest/perfmon.h>
#include <vpmu-guest/pctr.h>

#define DEV_MAX		64
#define DEV_IOCTL_MAX	512		/* data bytes an ioctl may move (pctrst: 56) */
#define DEV_FREE	0
#define DEV_CLAIMED	1		/* being opened */
#define DEV_PERFMON	2
#define DEV_PCTR	3

static struct {
	uint32_t kind;
	int32_t hostfd;
} dev_tab[DEV_MAX];

/*
 * The last error, as pmc(3)'s pmc_errno(): one word for the library by
 * default; a guest kernel with threads defines vpmu_dev_errno_location()
 * to return its current thread's.
 */
static int dev_lasterr;

__attribute__((weak)) int *
vpmu_dev_errno_location(void)
{
	return (&dev_lasterr);
}

int
vpmu_dev_errno(void)
{
	return (*vpmu_dev_errno_location());
}

static void
dev_seterr(int e)
{
	*vpmu_dev_errno_location() = e;
}

static int
dev_open(uint32_t kind, uint32_t op, int fflags, unsigned minor)
{
	struct vpmu_pv_open o;
	int64_t rv = -1;
	uint32_t expect;
	int fd, e;

	for (fd = 0; fd < DEV_MAX; fd++) {
		expect = DEV_FREE;
		if (__atomic_compare_exchange_n(&dev_tab[fd].kind, &expect, DEV_CLAIMED,
		    false, __ATOMIC_ACQUIRE, __ATOMIC_RELAXED))
			break;
	}
	if (fd == DEV_MAX) {
		dev_seterr(24);			/* EMFILE: the table is full */
		return (-1);
	}
	o.fflags = (uint32_t)fflags;
	o.minor = minor;
	if ((e = vpmu_pv_call(op, &o, sizeof(o), &rv)) != 0) {
		__atomic_store_n(&dev_tab[fd].kind, DEV_FREE, __ATOMIC_RELEASE);
		dev_seterr(e);
		return (-1);
	}
	dev_tab[fd].hostfd = (int32_t)rv;
	__atomic_store_n(&dev_tab[fd].kind, kind, __ATOMIC_RELEASE);
	return (fd);
}

int
vpmu_perfmon_open(int fflags)
{
	return (dev_open(DEV_PERFMON, VPMU_PV_OP_PERFMON_OPEN, fflags, VPMU_PERFMON_P6));
}

int
vpmu_perfmon_open_cpu(int fflags, unsigned minor)
{
	return (dev_open(DEV_PERFMON, VPMU_PV_OP_PERFMON_OPEN, fflags, minor));
}

int
vpmu_pctr_open(int fflags)
{
	return (dev_open(DEV_PCTR, VPMU_PV_OP_PCTR_OPEN, fflags, 0));
}

int
vpmu_pctr_open_minor(int fflags, unsigned minor)
{
	return (dev_open(DEV_PCTR, VPMU_PV_OP_PCTR_OPEN, fflags, minor));
}

/* The table entry of fd, or 0 (EBADF set). */
static uint32_t
dev_kind(int fd)
{
	uint32_t k;

	if (fd < 0 || fd >= DEV_MAX ||
	    ((k = __atomic_load_n(&dev_tab[fd].kind, __ATOMIC_ACQUIRE)) != DEV_PERFMON &&
	    k != DEV_PCTR)) {
		dev_seterr(VPMU_PV_EBADF);
		return (0);
	}
	return (k);
}

int
vpmu_dev_close(int fd)
{
	struct vpmu_pv_close c;
	uint32_t k;
	int e;

	if ((k = dev_kind(fd)) == 0)
		return (-1);
	c.fd = dev_tab[fd].hostfd;
	e = vpmu_pv_call(k == DEV_PERFMON ? VPMU_PV_OP_PERFMON_CLOSE : VPMU_PV_OP_PCTR_CLOSE,
	    &c, sizeof(c), NULL);
	/* As close(2): the descriptor is gone whatever the device said. */
	__atomic_store_n(&dev_tab[fd].kind, DEV_FREE, __ATOMIC_RELEASE);
	if (e != 0) {
		dev_seterr(e);
		return (-1);
	}
	return (0);
}

int
vpmu_dev_ioctl(int fd, unsigned long cmd, void *data)
{
	uint64_t buf[(sizeof(struct vpmu_pv_ioctl) + DEV_IOCTL_MAX) / 8];
	struct vpmu_pv_ioctl *io = (struct vpmu_pv_ioctl *)buf;
	uint8_t *p = (uint8_t *)buf;
	uint32_t len = VPMU_IOCPARM_LEN((uint32_t)cmd), i, k;
	int e;

	if ((k = dev_kind(fd)) == 0)
		return (-1);
	if (len > DEV_IOCTL_MAX) {
		dev_seterr(VPMU_PV_EINVAL);
		return (-1);
	}
	io->fd = dev_tab[fd].hostfd;
	io->cmd = (uint32_t)cmd;
	for (i = 0; i < len; i++)
		p[sizeof(struct vpmu_pv_ioctl) + i] = data != NULL ? ((uint8_t *)data)[i] : 0;
	e = vpmu_pv_call(k == DEV_PERFMON ? VPMU_PV_OP_PERFMON_IOCTL : VPMU_PV_OP_PCTR_IOCTL,
	    p, (uint32_t)sizeof(struct vpmu_pv_ioctl) + len, NULL);
	if (e != 0) {
		dev_seterr(e);
		return (-1);
	}
	/* Only a request the driver writes (IOC_OUT) has data to bring back. */
	if (data != NULL && ((uint32_t)cmd & _VPMU_IOC_OUT))
		for (i = 0; i < len; i++)
			((uint8_t *)data)[i] = p[sizeof(struct vpmu_pv_ioctl) + i];
	return (0);
}

/* ---- pctr's rdpmc() -------------------------------------------------------------- */

volatile struct vpmu_fastpage *vpmu_pctr_page;

int
vpmu_pctr_map(volatile struct vpmu_fastpage *pg)
{
	int e;

	if ((e = vpmu_fast_set(pg)) != 0) {
		dev_seterr(e);
		return (-1);
	}
	vpmu_pctr_page = pg;
	return (0);
}
