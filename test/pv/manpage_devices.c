/*
 * manpage_devices.c -- perfmon and pctr from inside a guest, written from
 * vpmu_pv(4), vpmu_perfmon(4) and vpmu_pctr(4) alone: no libvpmu guest
 * header, only the console of the vpmu-run runtime.  The block layout,
 * operation numbers, ioctl numbers, data layouts, flag bits and errno
 * values below are the pages' numbers.  With --source exact every count is
 * exact: a loop of 2n + 1 instructions and n branches run for n = N2 and
 * n = N1 differs by 2 (N2 - N1) instructions and N2 - N1 branches.
 */
#include <vpmu-guest/runtime.h>

int main(unsigned cpu);

#define N1	100
#define N2	1100

static unsigned nok, nall;

static void
expect(const char *what, long got, long want)
{
	nall++;
	if (got == want)
		nok++;
	else
		vg_printf("FAIL %s: %ld, want %ld\n", what, got, want);
}

/* vpmu_pv(4): a 64-byte header, then the argument. */
static uint64_t blk[64] __attribute__((aligned(8)));
static long retval;

static int
call(uint32_t op, const void *arg, uint32_t len, void *out)
{
	uint32_t *w = (uint32_t *)blk;
	uint8_t *a = (uint8_t *)blk + 64;
	uint32_t i;

	for (i = 0; i < 8; i++)
		blk[i] = 0;
	w[0] = 0x554d5056;		/* magic */
	w[1] = 1 | 64 << 16;		/* version 1, hdrsize 64 */
	w[2] = op;
	w[3] = len;
	w[4] = 1;			/* pid */
	w[5] = 1;			/* tid */
	w[7] = 1;			/* privileged */
	for (i = 0; i < len; i++)
		a[i] = ((const uint8_t *)arg)[i];
	__asm__ volatile("outl %0, %1" : : "a"((uint32_t)(uintptr_t)blk),
	    "Nd"((uint16_t)0x5650) : "memory");
	if (w[9] != 0x454e4f44)		/* done */
		return (-1);
	retval = (long)blk[5];
	if (out != NULL)
		for (i = 0; i < len; i++)
			((uint8_t *)out)[i] = a[i];
	return ((int32_t)w[8]);		/* error */
}

static int
dev_open(uint32_t op, uint32_t fflags, uint32_t minor)
{
	uint32_t o[2] = { fflags, minor };
	int e = call(op, o, 8, NULL);

	return (e != 0 ? -e : (int)retval);
}

/* An ioctl: {fd, cmd} then the data, len bytes, copied back into data. */
static int
dev_ioctl(uint32_t op, int fd, uint32_t cmd, void *data, uint32_t len)
{
	uint8_t arg[8 + 64], out[8 + 64];
	uint32_t i;
	int e;

	((int32_t *)arg)[0] = fd;
	((uint32_t *)arg)[1] = cmd;
	for (i = 0; i < len; i++)
		arg[8 + i] = ((uint8_t *)data)[i];
	e = call(op, arg, 8 + len, out);
	if (e == 0)
		for (i = 0; i < len; i++)
			((uint8_t *)data)[i] = out[8 + i];
	return (e);
}

static __attribute__((noinline)) void
loop(uint64_t n)
{
	__asm__ volatile("1: dec %0; jnz 1b" : "+r"(n) : : "cc");
}

/* ---- perfmon (vpmu_perfmon(4)) ---- */
#define PERFMON_OPEN	0x200
#define PERFMON_IOCTL	0x202
#define PMIOSETUP	0x80083501u
#define PMIOSTART	0x80043502u
#define PMIOSTOP	0x80043503u
#define PMIOREAD	0xc0103504u	/* LP64: value at offset 8 */
#define PMIOGET		0xc0083507u

static uint64_t
perfmon_count(int fd, int num, uint64_t n)
{
	int32_t c = num;
	uint8_t d[16];
	uint32_t i;

	for (i = 0; i < 16; i++)
		d[i] = 0;
	*(int32_t *)d = num;
	(void)dev_ioctl(PERFMON_IOCTL, fd, PMIOSTART, &c, 4);
	loop(n);
	(void)dev_ioctl(PERFMON_IOCTL, fd, PMIOSTOP, &c, 4);
	(void)dev_ioctl(PERFMON_IOCTL, fd, PMIOREAD, d, 16);
	return (*(uint64_t *)(d + 8));
}

/* ---- pctr (vpmu_pctr(4)) ---- */
#define PCTR_OPEN	0x300
#define PCTR_IOCTL	0x302
#define PCIOCRD		0x40386301u	/* fn[4] 0, tsc 16, hwc[4] 24 */
#define PCIOCS0		0x80046308u

static uint64_t
pctr_hwc(int fd, unsigned i)
{
	uint8_t st[56];

	(void)dev_ioctl(PCTR_IOCTL, fd, PCIOCRD, st, 56);
	return (((uint64_t *)(st + 24))[i]);
}

int
main(unsigned cpu)
{
	int w, r, fd, ro;
	uint32_t setup[2], fn;
	uint64_t a, b;

	(void)cpu;
	/* perfmon */
	w = dev_open(PERFMON_OPEN, 3, 0);
	expect("perfmon open read-write", w > 0, 1);
	expect("perfmon second writer EBUSY", dev_open(PERFMON_OPEN, 3, 0), -16);
	r = dev_open(PERFMON_OPEN, 1, 0);
	expect("perfmon read-only open", r > 0, 1);
	setup[0] = 0;
	setup[1] = 0xc0 | 0x03u << 16;		/* INST_RETIRED, PMCF_USR | PMCF_OS */
	expect("PMIOSETUP read-only EPERM", dev_ioctl(PERFMON_IOCTL, r, PMIOSETUP, setup, 8), 1);
	expect("PMIOGET before setup EBUSY", dev_ioctl(PERFMON_IOCTL, r, PMIOGET, setup, 8), 16);
	expect("PMIOSETUP counter 0", dev_ioctl(PERFMON_IOCTL, w, PMIOSETUP, setup, 8), 0);
	setup[0] = 1;
	setup[1] = 0xc4 | 0x03u << 16;		/* BR_INST_RETIRED */
	expect("PMIOSETUP counter 1", dev_ioctl(PERFMON_IOCTL, w, PMIOSETUP, setup, 8), 0);
	setup[0] = 2;
	expect("PMIOSETUP counter 2 EINVAL", dev_ioctl(PERFMON_IOCTL, w, PMIOSETUP, setup, 8), 22);
	expect("unknown ioctl ENOTTY", dev_ioctl(PERFMON_IOCTL, w, 0x20003599u, NULL, 0), 25);
	a = perfmon_count(w, 0, N1);
	setup[0] = 0;
	setup[1] = 0xc0 | 0x03u << 16;
	(void)dev_ioctl(PERFMON_IOCTL, w, PMIOSETUP, setup, 8);	/* back to 0 */
	b = perfmon_count(w, 0, N2);
	expect("perfmon INST_RETIRED difference", (long)(b - a), 2 * (N2 - N1));
	a = perfmon_count(w, 1, N1);
	setup[0] = 1;
	setup[1] = 0xc4 | 0x03u << 16;
	(void)dev_ioctl(PERFMON_IOCTL, w, PMIOSETUP, setup, 8);
	b = perfmon_count(w, 1, N2);
	expect("perfmon BR_INST_RETIRED difference", (long)(b - a), N2 - N1);

	/* pctr */
	expect("pctr minor 1 ENXIO", dev_open(PCTR_OPEN, 3, 1), -6);
	fd = dev_open(PCTR_OPEN, 3, 0);
	ro = dev_open(PCTR_OPEN, 1, 0);
	expect("pctr opens", fd > 0 && ro > 0, 1);
	fn = 0xc0 | 0x010000 | 0x020000 | 0x400000;	/* event c0, PCTR_U|K|EN */
	expect("PCIOCS0 read-only EPERM", dev_ioctl(PCTR_IOCTL, ro, PCIOCS0, &fn, 4), 1);
	expect("PCIOCS2 on a 2-counter model EINVAL",
	    dev_ioctl(PCTR_IOCTL, fd, PCIOCS0 + 2, &fn, 4), 22);
	fn |= 0x080000;					/* a reserved bit */
	expect("PCIOCS0 reserved bit EINVAL", dev_ioctl(PCTR_IOCTL, fd, PCIOCS0, &fn, 4), 22);
	fn &= ~0x080000u;
	expect("PCIOCS0", dev_ioctl(PCTR_IOCTL, fd, PCIOCS0, &fn, 4), 0);
	fn = 0xc4 | 0x010000 | 0x020000 | 0x400000;	/* branches on counter 1 */
	expect("PCIOCS1", dev_ioctl(PCTR_IOCTL, fd, PCIOCS0 + 1, &fn, 4), 0);
	expect("unknown pctr ioctl EINVAL", dev_ioctl(PCTR_IOCTL, fd, 0x20006399u, NULL, 0), 22);
	a = pctr_hwc(ro, 0);
	loop(N1);
	b = pctr_hwc(ro, 0);
	{
		uint64_t c = pctr_hwc(ro, 0), d;

		loop(N2);
		d = pctr_hwc(ro, 0);
		expect("pctr ctr0 difference", (long)((d - c) - (b - a)), 2 * (N2 - N1));
	}
	a = pctr_hwc(ro, 1);
	loop(N1);
	b = pctr_hwc(ro, 1);
	{
		uint64_t c = pctr_hwc(ro, 1), d;

		loop(N2);
		d = pctr_hwc(ro, 1);
		expect("pctr ctr1 difference", (long)((d - c) - (b - a)), N2 - N1);
	}
	vg_printf("manpage devices: %u of %u ok\n", nok, nall);
	return (nok == nall ? 0 : 1);
}
