/*
 * layer.c -- the layers a VM is built of besides its PMCs, in creation
 * order: the core's own, the guest-visible PMU (gpmu.c), then those above
 * the core that vpmu__vm_create() is handed -- the paravirtual channel,
 * whose pctr personality reads the guest PMU, as guest-api/vm_create.c
 * lists it.  The core names no layer above it: a layer serves its I/O
 * ports and its exit hook through its descriptor (struct vpmu__layer),
 * which vcpu.c calls from vm->layers.
 *
 * A create() that fails leaves nothing of its own behind; vm.c then
 * destroys the layers created before it, in the reverse order.
 */
#include <errno.h>

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

int
vpmu__layers_create(struct vpmu_vm *vm, const struct vpmu_config *cfg,
    const struct vpmu__layer *const *above, unsigned nabove)
{
	const struct vpmu__layer *l;
	unsigned i;
	int error;

	if (nabove >= VPMU__LAYERS_MAX)
		return (EINVAL);
	for (i = 0; i <= nabove; i++) {
		l = i == 0 ? &gpmu_layer : above[i - 1];
		if ((error = l->create(vm, cfg)) != 0)
			return (error);
		vm->layers[vm->nlayers++] = l;
	}
	return (0);
}

void
vpmu__layers_destroy(struct vpmu_vm *vm)
{
	while (vm->nlayers > 0)
		vm->layers[--vm->nlayers]->destroy(vm);
}
