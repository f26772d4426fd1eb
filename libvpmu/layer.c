/*
 * layer.c -- the layers a VM is built of besides its PMCs, in creation
 * order: the guest-visible PMU (gpmu.c), then the paravirtual channel
 * (guest-api/pv.c, vpmu__pv_layer), whose pctr personality reads the
 * guest PMU.  A layer serves its I/O ports and its exit hook through its
 * descriptor (struct vpmu__layer): vcpu.c names no layer either.
 *
 * vm.c creates them in this order and destroys them in the reverse one;
 * it names no layer.  A create() that fails leaves nothing of its own
 * behind; vm.c then destroys the layers created before it.
 */
#include "internal.h"

static int
gpmu_create(struct vpmu_vm *vm, const struct vpmu_config *cfg)
{
	int error;

	/* vpmu__gpmu_init() leaves its state for vpmu__gpmu_fini() on failure. */
	if ((error = vpmu__gpmu_init(vm, &cfg->model)) == 0 && cfg->has_filter)
		error = vpmu__gpmu_set_filter(vm, &cfg->filter);
	if (error != 0)
		vpmu__gpmu_fini(vm);
	return (error);
}

static const struct vpmu__layer gpmu_layer = {
	.name = "gpmu", .create = gpmu_create, .destroy = vpmu__gpmu_fini,
};

const struct vpmu__layer *const vpmu__layers[] = {
	&gpmu_layer,
	&vpmu__pv_layer,
};
const unsigned vpmu__nlayers = VPMU_ARRAY_SIZE(vpmu__layers);
