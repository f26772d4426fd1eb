/*
 * config.c -- vpmu_config: what a VM will be, before it exists.
 *
 * Defaults: 1 vCPU; the intel-v2 guest model's classes (IAP 4 x 48 bits,
 * IAF 3 x 48 bits) and the paravirtual class (16 x 64 bits); hwpmc's
 * tunable defaults; the synthetic source; diagnostics to stderr.
 */
#include <errno.h>
#include <string.h>

#include "internal.h"
#include <vpmu/pv.h>

int
vpmu_config_create(vpmu_config **cfgp)
{
	vpmu_config *cfg;

	if (cfgp == NULL)
		return (EINVAL);
	*cfgp = NULL;
	if ((cfg = calloc(1, sizeof(*cfg))) == NULL)
		return (ENOMEM);
	cfg->nvcpus = 1;
	vpmu__tunables_default(&cfg->tun);
	cfg->classes[0] = (struct vpmu_class_cfg){ VPMU_CLASS_IAP, 4, 48 };
	cfg->classes[1] = (struct vpmu_class_cfg){ VPMU_CLASS_IAF, 3, 48 };
	cfg->classes[2] = (struct vpmu_class_cfg){ VPMU_CLASS_PV, 16, 64 };
	cfg->nclass = 3;
	cfg->source = &vpmu_source_synthetic;
	(void)vpmu_model_parse("none", &cfg->model, NULL, 0);
	cfg->pv_port = VPMU_PV_PORT_BASE;
	*cfgp = cfg;
	return (0);
}

void
vpmu_config_destroy(vpmu_config *cfg)
{
	if (cfg != NULL)
		free(cfg->source_params);
	free(cfg);
}

int
vpmu_config_set_vcpus(vpmu_config *cfg, unsigned nvcpus)
{
	if (cfg == NULL || nvcpus == 0 || nvcpus > VPMU_MAX_VCPUS)
		return (EINVAL);
	cfg->nvcpus = nvcpus;
	return (0);
}

int
vpmu_config_set_tunable(vpmu_config *cfg, const char *name, long value)
{
	int id;

	if (cfg == NULL || (id = vpmu__tunable_find(name)) < 0)
		return (EINVAL);
	cfg->tun.v[id] = value;
	return (0);
}

int
vpmu_config_get_tunable(const vpmu_config *cfg, const char *name, long *value)
{
	int id;

	if (cfg == NULL || value == NULL || (id = vpmu__tunable_find(name)) < 0)
		return (EINVAL);
	*value = cfg->tun.v[id];
	return (0);
}

/* Largest row count per class: the fixed class has one row per fixed event. */
static unsigned
class_max_rows(uint32_t cls)
{
	switch (cls) {
	case VPMU_CLASS_IAF:
		return (3);
	case VPMU_CLASS_IAP:
	case VPMU_CLASS_K8:
		return (32);
	case VPMU_CLASS_PV:
		return (VPMU_MAX_ROWS);
	default:
		return (0);
	}
}

int
vpmu_config_set_class(vpmu_config *cfg, uint32_t cls, unsigned rows, unsigned width)
{
	unsigned i;

	if (cfg == NULL || class_max_rows(cls) == 0 ||
	    rows > class_max_rows(cls) || (rows > 0 && (width == 0 || width > 64)))
		return (EINVAL);
	for (i = 0; i < cfg->nclass; i++)
		if (cfg->classes[i].cls == cls)
			break;
	if (rows == 0) {
		if (i < cfg->nclass) {
			memmove(&cfg->classes[i], &cfg->classes[i + 1],
			    (cfg->nclass - i - 1) * sizeof(cfg->classes[0]));
			cfg->nclass--;
		}
		return (0);
	}
	if (i == cfg->nclass) {
		if (cfg->nclass == VPMU_CLASS_MAX)
			return (ENOSPC);
		cfg->nclass++;
	}
	cfg->classes[i] = (struct vpmu_class_cfg){ cls, rows, width };
	return (0);
}

int
vpmu_config_set_source(vpmu_config *cfg, const struct vpmu_source_ops *ops, void *arg)
{
	if (cfg == NULL || ops == NULL || ops->name == NULL ||
	    ops->init == NULL || ops->fini == NULL || ops->supports == NULL ||
	    ops->open == NULL || ops->close == NULL || ops->enable == NULL ||
	    ops->disable == NULL || ops->read == NULL ||
	    (ops->exec_point_get == NULL) != (ops->exec_point_set == NULL))
		return (EINVAL);
	if (arg != cfg->source_params) {	/* options of another source */
		free(cfg->source_params);
		cfg->source_params = NULL;
	}
	cfg->source = ops;
	cfg->source_arg = arg;
	return (0);
}

int
vpmu_config_set_capacity(vpmu_config *cfg, unsigned n)
{
	if (cfg == NULL || n > 4096)
		return (EINVAL);
	cfg->capacity = n;
	return (0);
}

int
vpmu_config_set_pmu_mode(vpmu_config *cfg, int mode)
{
	if (cfg == NULL || (mode != VPMU_PMU_MODE_TRAP && mode != VPMU_PMU_MODE_KVM &&
	    mode != VPMU_PMU_MODE_AUTO))
		return (EINVAL);
	cfg->pmu_mode = mode;
	return (0);
}

int
vpmu_config_set_mux_interval(vpmu_config *cfg, uint64_t ns)
{
	if (cfg == NULL || ns < 1000 || ns > 10000000000ull)
		return (EINVAL);
	cfg->mux_interval = ns;
	return (0);
}

void
vpmu_config_set_log(vpmu_config *cfg, vpmu_log_fn fn, void *arg)
{
	if (cfg == NULL)
		return;
	cfg->log_fn = fn;
	cfg->log_arg = arg;
}

void
vpmu_config_set_notify(vpmu_config *cfg, vpmu_notify_fn fn, void *arg)
{
	if (cfg == NULL)
		return;
	cfg->notify_fn = fn;
	cfg->notify_arg = arg;
}

/*
 * The paravirtual channel's ports: base .. base + 7, or none (base 0).
 * Refused (EINVAL): a range past 0xFFFF, one inside the PC's motherboard
 * ports 0x0000 .. 0x00FF (DMA, PIC, PIT, keyboard controller, RTC, POST,
 * vpmu-run's exit port 0xF4), or one that overlaps the PCI configuration
 * ports 0xCF8 .. 0xCFF.
 */
int
vpmu_config_set_pv_port(struct vpmu_config *cfg, uint16_t base)
{
	unsigned b = base, end = b + VPMU_PV_PORT_COUNT;	/* one past the last */

	if (cfg == NULL)
		return (EINVAL);
	if (b != 0 && (end > 0x10000u || b < 0x100u || (b < 0xD00u && end > 0xCF8u)))
		return (EINVAL);
	cfg->pv_port = base;
	return (0);
}
