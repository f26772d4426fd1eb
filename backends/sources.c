/*
 * sources.c -- the built-in host sources, found by name.
 *
 * The list lives with the backends, not in the core: the core knows only
 * its default source (synthetic, libvpmu/synthetic.c) and the ops table
 * a config hands it, so it builds and links without them.
 */
#include <string.h>

#include "internal.h"
#include "sources.h"

/* All built-in sources, in the order vpmu-info lists them. */
static const struct vpmu_source_ops *const sources[] = {
	&vpmu_source_synthetic,
	&vpmu_source_perf,
	&vpmu_source_exact,
};

const struct vpmu_source_ops *
vpmu_source_lookup(const char *name)
{
	size_t i;

	if (name == NULL)
		return (NULL);
	for (i = 0; i < VPMU_ARRAY_SIZE(sources); i++)
		if (strcmp(sources[i]->name, name) == 0)
			return (sources[i]);
	return (NULL);
}

const struct vpmu_source_ops *
vpmu__source_at(size_t i)
{
	return (i < VPMU_ARRAY_SIZE(sources) ? sources[i] : NULL);
}
