/*
 * A consumer of the installed libvpmu: create a config and a VM, allocate
 * a paravirtual counting PMC, print the library version.  It uses only
 * <vpmu/vpmu.h> and the library, so it builds only if the installed
 * headers, CMake package and pkg-config file are complete.
 */
#include <stdio.h>
#include <string.h>

#include <vpmu/vpmu.h>

static int
check(int error, const char *what)
{
	if (error != 0)
		fprintf(stderr, "consumer: %s: %s (%s)\n", what,
		    vpmu_errname(error), vpmu_strerror(error));
	return (error);
}

int
main(void)
{
	const struct vpmu_cred caller = { .pid = 1, .tid = 1, .privileged = 1 };
	struct vpmu_pmc_alloc req;
	vpmu_config *cfg = NULL;
	vpmu_vm *vm = NULL;
	uint32_t version = VPMU_PMC_VERSION;
	int error;

	if ((error = check(vpmu_config_create(&cfg), "vpmu_config_create")) != 0)
		return (1);
	error = check(vpmu_config_set_vcpus(cfg, 2), "vpmu_config_set_vcpus");
	if (error == 0)
		error = check(vpmu_vm_create(cfg, &vm), "vpmu_vm_create");
	vpmu_config_destroy(cfg);
	if (error != 0)
		return (1);

	/* The headers and the library must speak the same hwpmc ABI. */
	error = check(vpmu_vm_get_moduleversion(vm, &caller, &version),
	    "GETMODULEVERSION");
	if (error == 0 && version != VPMU_PMC_VERSION) {
		fprintf(stderr, "consumer: library ABI %#x, headers %#x\n",
		    version, VPMU_PMC_VERSION);
		error = 1;
	}

	memset(&req, 0, sizeof(req));
	req.cpu = VPMU_CPU_ANY;
	req.cls = VPMU_CLASS_PV;
	req.event = VPMU_EV_INSTRUCTIONS;
	req.mode = VPMU_MODE_TC;
	if (error == 0)
		error = check(vpmu_pmc_allocate(vm, &caller, &req), "PMCALLOCATE");
	if (error == 0 && VPMU_ID_TO_CLASS(req.pmcid) != VPMU_CLASS_PV) {
		fprintf(stderr, "consumer: PMC id %#x is not PV-class\n", req.pmcid);
		error = 1;
	}
	if (error == 0)
		error = check(vpmu_pmc_release(vm, &caller, req.pmcid), "PMCRELEASE");
	vpmu_vm_destroy(vm);
	if (error != 0)
		return (1);
	printf("consumer: libvpmu %s, hwpmc ABI %#x, PV PMC 0x%08x allocated and released\n",
	    vpmu_version(), version, req.pmcid);
	return (0);
}
