/*
 * perfmon_mask.c -- the 40-bit mask of PMIOREAD and PCIOCRD, host side.
 *
 * A guest cannot make a counter pass 2^40 in a test's time, and neither
 * device can write a count.  So this program plays the guest: a VM on the
 * synthetic source (whose counts are exact: rate per ms times ms), request
 * blocks built in a buffer given to the channel as guest RAM, doorbells
 * rung with vpmu_pv_port_io().  The synthetic source counts 2^40 + 12345
 * instructions in one millisecond; both devices must read 12345, and the
 * core PMC behind each (vpmu_pmc_get_count()) the full 2^40 + 12345.
 *
 * Prints "perfmon_mask: N of M ok"; exits with the number of failures.
 */
#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <vpmu/vpmu.h>
#include <vpmu/model.h>
#include <vpmu/pv.h>
#include <vpmu-guest/pv.h>
#define CHECK_PRINTF	printf
#include "check.h"

#define RAM_GPA		0x100000u
#define RAM_SIZE	0x10000u
#define BIG		((1ull << 40) + 12345)

static uint8_t ram[RAM_SIZE] __attribute__((aligned(4096)));
/* One request from guest pid 1 on vCPU 0: errno (VPMU_PV_E*), *retval. */
static int
call(vpmu_vm *vm, uint32_t op, const void *arg, uint32_t len, void *out, int64_t *retval)
{
	struct vpmu_pv_req *r = (struct vpmu_pv_req *)ram;
	uint32_t gpa = RAM_GPA;
	bool handled;

	memset(ram, 0, VPMU_PV_HDRSIZE + len);
	r->magic = VPMU_PV_MAGIC;
	r->version = VPMU_PV_VERSION;
	r->hdrsize = VPMU_PV_HDRSIZE;
	r->op = op;
	r->arglen = len;
	r->pid = 1;
	r->tid = 1;
	r->cflags = VPMU_PV_CRED_PRIVILEGED;
	memcpy(ram + VPMU_PV_HDRSIZE, arg, len);
	if (vpmu_pv_port_io(vm, 0, VPMU_PV_PORT, true, 4, &gpa, &handled) != 0 || !handled ||
	    r->done != VPMU_PV_DONE)
		return (-1);
	if (out != NULL)
		memcpy(out, ram + VPMU_PV_HDRSIZE, len);
	if (retval != NULL)
		*retval = r->retval;
	return (r->error);
}

static int
ioctl_(vpmu_vm *vm, uint32_t op, int32_t fd, uint32_t cmd, void *data, uint32_t len)
{
	uint8_t buf[8 + 64];
	struct vpmu_pv_ioctl io = { fd, cmd };
	int e;

	memcpy(buf, &io, 8);
	memcpy(buf + 8, data, len);
	e = call(vm, op, buf, 8 + len, buf, NULL);
	memcpy(data, buf + 8, len);
	return (e);
}

/* The one PMC of a pseudo-owner on vCPU 0 (VPMU_CLASS_PV's first row it took). */
static uint64_t
core_count(vpmu_vm *vm, int32_t owner)
{
	struct vpmu_pmc_info info[64];
	struct vpmu_cred root = { .pid = 1, .privileged = 1 };
	struct vpmu_count c;
	uint32_t n = 64, i;

	if (vpmu_vm_get_pmcinfo(vm, &root, 0, info, &n) != 0)
		return (0);
	for (i = 0; i < n; i++)
		if (info[i].ownerpid == owner &&
		    vpmu_pmc_get_count(vm, owner, VPMU_ID_MAKE(0, VPMU_MODE_SC, VPMU_CLASS_PV, i),
		    &c) == 0)
			return (c.value);
	return (0);
}

int
main(void)
{
	struct vpmu_config *cfg;
	struct vpmu_model m;
	vpmu_vm *vm;
	struct vpmu_pv_open o = { VPMU_PV_FREAD | VPMU_PV_FWRITE, 0 };
	int64_t pfd = -1, cfd = -1;
	uint8_t d[56];
	uint32_t u;
	int32_t num;
	uint64_t v;
	char err[128];

	if (vpmu_config_create(&cfg) != 0 || vpmu_config_set_vcpus(cfg, 1) != 0 ||
	    vpmu_config_set_source(cfg, &vpmu_source_synthetic, NULL) != 0 ||
	    vpmu_model_parse("intel-v2", &m, err, sizeof(err)) != 0 ||
	    vpmu_config_set_model(cfg, &m) != 0 || vpmu_vm_create(cfg, &vm) != 0 ||
	    vpmu_pv_add_memory(vm, RAM_GPA, RAM_SIZE, ram) != 0) {
		printf("perfmon_mask: cannot make the VM\n");
		return (1);
	}
	vpmu_config_destroy(cfg);

	/* perfmon: counter 0 counts INST_RETIRED (0xc0, USR|OS) from now. */
	CHECK("perfmon open", call(vm, VPMU_PV_OP_PERFMON_OPEN, &o, 8, NULL, &pfd) == 0, "failed");
	u = 0xc0 | 0x3u << 16;
	num = 0;
	memcpy(d, &num, 4);
	memcpy(d + 4, &u, 4);
	CHECK("PMIOSETUP", ioctl_(vm, VPMU_PV_OP_PERFMON_IOCTL, (int32_t)pfd, 0x80083501u,
	    d, 8) == 0, "failed");
	CHECK("PMIOSTART", ioctl_(vm, VPMU_PV_OP_PERFMON_IOCTL, (int32_t)pfd, 0x80043502u,
	    d, 4) == 0, "failed");
	/* pctr: counter 0 counts the same, enabled. */
	CHECK("pctr open", call(vm, VPMU_PV_OP_PCTR_OPEN, &o, 8, NULL, &cfd) == 0, "failed");
	u = 0x4300c0;
	memcpy(d, &u, 4);
	CHECK("PCIOCS0", ioctl_(vm, VPMU_PV_OP_PCTR_IOCTL, (int32_t)cfd, 0x80046308u,
	    d, 4) == 0, "failed");

	/* 2^40 + 12345 instructions in 1 ms. */
	CHECK("synthetic rate", vpmu_synthetic_set_rate(vm, 0, VPMU_EV_INSTRUCTIONS, BIG) == 0, "failed");
	CHECK("synthetic advance", vpmu_synthetic_advance(vm, 0, 1000000) == 0, "failed");

	memset(d, 0, sizeof(d));
	CHECK("PMIOREAD", ioctl_(vm, VPMU_PV_OP_PERFMON_IOCTL, (int32_t)pfd, 0xc0103504u,
	    d, 16) == 0, "failed");
	memcpy(&v, d + 8, 8);
	CHECK("PMIOREAD masked to 40 bits", v == 12345, "%llu", (unsigned long long)v);
	memset(d, 0, sizeof(d));
	CHECK("PMIOREAD i386", ioctl_(vm, VPMU_PV_OP_PERFMON_IOCTL, (int32_t)pfd, 0xc00c3504u,
	    d, 12) == 0, "failed");
	memcpy(&v, d + 4, 8);
	CHECK("PMIOREAD i386 masked to 40 bits", v == 12345, "%llu", (unsigned long long)v);
	v = core_count(vm, VPMU_PV_PID_MAX + 1);
	CHECK("perfmon's core PMC has all of it", v == BIG, "%llu", (unsigned long long)v);

	memset(d, 0, sizeof(d));
	CHECK("PCIOCRD", ioctl_(vm, VPMU_PV_OP_PCTR_IOCTL, (int32_t)cfd, 0x40386301u,
	    d, 56) == 0, "failed");
	memcpy(&v, d + 24, 8);
	CHECK("PCIOCRD masked to 40 bits", v == 12345, "%llu", (unsigned long long)v);
	memcpy(&u, d, 4);
	CHECK("PCIOCRD function", u == 0x4300c0, "%#x", u);
	v = core_count(vm, VPMU_PV_PID_MAX + 2);
	CHECK("pctr's core PMC has all of it", v == BIG, "%llu", (unsigned long long)v);

	vpmu_vm_destroy(vm);
	printf("perfmon_mask: %u of %u ok\n", nok, nall);
	return ((int)(nall - nok));
}
