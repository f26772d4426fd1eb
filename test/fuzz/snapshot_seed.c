/*
 * snapshot_seed.c -- write a seed corpus for fuzz_snapshot: blobs saved
 * from VMs like the target's (intel-v2, 2 vCPUs, synthetic), fresh and
 * busy (guest counters programmed, PMCs of each mode, processes, a log on
 * descriptor 3), each as a wrapped payload (mode byte 0) and whole (1).
 *
 *   snapshot_seed DIR
 */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <vpmu/vpmu.h>
#include <vpmu/model.h>
#include <vpmu/pv.h>
#include <vpmu/snapshot.h>

#define OK(e)	do { int e_ = (e); if (e_ != 0) { fprintf(stderr, \
		    "snapshot_seed: %s: %s\n", #e, vpmu_strerror(e_)); exit(1); } } while (0)

static const struct vpmu_cred ROOT = { .pid = 1, .privileged = 1 };
static const struct vpmu_cred USER = { .pid = 100, .uid = 1000 };

static void
write_seed(const char *dir, const char *name, int mode, const uint8_t *b, size_t n)
{
	char path[512];
	FILE *f;

	snprintf(path, sizeof(path), "%s/%s-%d", dir, name, mode);
	if ((f = fopen(path, "wb")) == NULL || fputc(mode, f) == EOF ||
	    fwrite(mode ? b : b + 32, 1, mode ? n : n - 32, f) != (mode ? n : n - 32) ||
	    fclose(f) != 0) {
		perror(path);
		exit(1);
	}
}

static void
seed(const char *dir, const char *name, vpmu_vm *vm)
{
	uint8_t *b;
	size_t n = 0;

	if (vpmu_vm_save(vm, NULL, &n) != ENOSPC || (b = malloc(n)) == NULL)
		exit(1);
	OK(vpmu_vm_save(vm, b, &n));
	write_seed(dir, name, 0, b, n);
	write_seed(dir, name, 1, b, n);
	free(b);
}

int
main(int argc, char **argv)
{
	struct vpmu_pmc_alloc a;
	enum vpmu_msr_verdict vd;
	struct vpmu_op_configurelog cl = { 0, -1 };
	struct vpmu_model m;
	vpmu_config *cfg;
	vpmu_vm *vm;
	int fd;

	if (argc != 2) {
		fprintf(stderr, "usage: snapshot_seed DIR\n");
		return (2);
	}
	OK(vpmu_model_parse("intel-v2", &m, NULL, 0));
	OK(vpmu_config_create(&cfg));
	OK(vpmu_config_set_vcpus(cfg, 2));
	OK(vpmu_config_set_model(cfg, &m));
	OK(vpmu_vm_create(cfg, &vm));
	vpmu_config_destroy(cfg);
	if ((fd = open("/dev/null", O_WRONLY | O_CLOEXEC)) < 0)
		return (1);
	OK(vpmu_pv_set_logfd(vm, 3, fd));
	seed(argv[1], "fresh", vm);

	OK(vpmu_synthetic_set_rate(vm, 0, VPMU_EV_INSTRUCTIONS, 1000));
	OK(vpmu_proc_create(vm, &ROOT, 0));
	OK(vpmu_proc_create(vm, &USER, 1));
	OK(vpmu_proc_fork(vm, USER.pid, 101));
	OK(vpmu_msr_write(vm, 0, 0x186, 0xC0 | (3u << 16) | (1u << 22), &vd));
	OK(vd == VPMU_MSR_OK ? 0 : EIO);
	memset(&a, 0, sizeof(a));
	a.cls = VPMU_CLASS_PV; a.event = VPMU_EV_INSTRUCTIONS; a.mode = VPMU_MODE_SC;
	OK(vpmu_pmc_allocate(vm, &ROOT, &a));
	OK(vpmu_pmc_start(vm, &ROOT, a.pmcid));
	memset(&a, 0, sizeof(a));
	a.cpu = VPMU_CPU_ANY; a.cls = VPMU_CLASS_PV; a.event = VPMU_EV_BRANCHES;
	a.mode = VPMU_MODE_TC; a.flags = VPMU_F_DESCENDANTS;
	OK(vpmu_pmc_allocate(vm, &USER, &a));
	OK(vpmu_pmc_attach(vm, &USER, a.pmcid, 0));
	OK(vpmu_pmc_start(vm, &USER, a.pmcid));
	cl.logfd = fd;
	OK(vpmu_vm_op(vm, &ROOT, VPMU_OP_CONFIGURELOG, &cl));
	memset(&a, 0, sizeof(a));
	a.cls = VPMU_CLASS_PV; a.event = VPMU_EV_INSTRUCTIONS; a.mode = VPMU_MODE_SS;
	a.count = 100;
	OK(vpmu_pmc_allocate(vm, &ROOT, &a));
	OK(vpmu_proc_switch_in(vm, 1, USER.pid, 1001));
	OK(vpmu_synthetic_advance(vm, 0, 1000000));
	seed(argv[1], "busy", vm);
	vpmu_vm_destroy(vm);
	close(fd);
	return (0);
}
