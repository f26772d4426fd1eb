/*
 * pv_host.c -- the host's side of a channel request, alone: time
 * vpmu_pv_port_io() ringing for a block in a malloc'd "guest RAM" (no KVM,
 * synthetic source), for VPMU_PV_OP_NULL and GETMODULEVERSION, and for an
 * IN32 of the probe port (what the channel does for a port access that is
 * no request).  pv.sh sets these beside the guest's round trips: what a
 * request adds to a port exit on the host, measured in one run.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <vpmu/vpmu.h>
#include <vpmu/pv.h>
#include <vpmu-guest/pv.h>

#define RAM	(1u << 20)
#define N	1000000

static double
now(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (ts.tv_sec * 1e9 + ts.tv_nsec);
}

/* ns per ring of the block at gpa 0x1000 (op, arglen already in it). */
static double
ring(vpmu_vm *vm, uint8_t *ram, uint16_t port, bool out)
{
	struct vpmu_pv_req *req = (void *)(ram + 0x1000);
	uint32_t v;
	bool handled;
	double t;
	int i;

	t = now();
	for (i = 0; i < N; i++) {
		v = 0x1000;
		if (vpmu_pv_port_io(vm, 0, port, out, 4, &v, &handled) != 0 || !handled)
			abort();
	}
	t = (now() - t) / N;
	if (out && req->error != 0) {
		fprintf(stderr, "pv_host: request failed: %d\n", req->error);
		exit(1);
	}
	return (t);
}

static void
block(uint8_t *ram, uint32_t op, uint32_t arglen)
{
	struct vpmu_pv_req *req = (void *)(ram + 0x1000);

	memset(req, 0, sizeof(*req) + 8);
	req->magic = VPMU_PV_MAGIC;
	req->version = VPMU_PV_VERSION;
	req->hdrsize = VPMU_PV_HDRSIZE;
	req->op = op;
	req->arglen = arglen;
	req->pid = req->tid = 1;
	req->cflags = VPMU_PV_CRED_PRIVILEGED;
	*(uint32_t *)(req + 1) = 0x0A000000;	/* GETMODULEVERSION's argument */
}

int
main(void)
{
	vpmu_config *cfg;
	vpmu_vm *vm;
	uint8_t *ram;
	double tnull, tver, tin;

	if ((ram = calloc(1, RAM)) == NULL || vpmu_config_create(&cfg) != 0 ||
	    vpmu_config_set_source(cfg, &vpmu_source_synthetic, NULL) != 0 ||
	    vpmu_config_set_class(cfg, VPMU_CLASS_PV, 16, 64) != 0 ||
	    vpmu_vm_create(cfg, &vm) != 0 || vpmu_pv_add_memory(vm, 0, RAM, ram) != 0) {
		fprintf(stderr, "pv_host: set-up failed\n");
		return (1);
	}
	block(ram, VPMU_PV_OP_NULL, 0);
	tnull = ring(vm, ram, VPMU_PV_PORT, true);
	block(ram, VPMU_PV_OP_GETMODULEVERSION, 4);
	tver = ring(vm, ram, VPMU_PV_PORT, true);
	tin = ring(vm, ram, VPMU_PV_PORT_HI, false);
	printf("pv host: per ring, host side only: NULL %.0f ns, GETMODULEVERSION %.0f ns, "
	    "IN32 probe %.0f ns\n", tnull, tver, tin);
	vpmu_vm_destroy(vm);
	vpmu_config_destroy(cfg);
	free(ram);
	return (0);
}
