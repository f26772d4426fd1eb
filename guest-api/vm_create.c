/*
 * vm_create.c -- vpmu_vm_create(): a VM's virtual PMU is the core
 * (libvpmu/vm.c, with its own layer, the guest-visible PMU) and the
 * layers above the core that every VM has.  This is the one list of them;
 * the core takes it as data and names none (test/core_names.sh).  There
 * is one: the paravirtual channel (vpmu_pv(4)).
 */
#include "internal.h"
#include "pvchan.h"

static const struct vpmu__layer *const layers_above[] = {
	&vpmu__pv_layer,
};

int
vpmu_vm_create(const vpmu_config *cfg, vpmu_vm **vmp)
{
	return (vpmu__vm_create(cfg, layers_above, VPMU_ARRAY_SIZE(layers_above), vmp));
}
