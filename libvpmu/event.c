/*
 * event.c -- event names and the table of built-in host sources.
 */
#include <string.h>

#include "internal.h"

static const struct {
	uint32_t code;
	const char *name;
} evtab[] = {
#define VPMU_EV_ROW(n, v, s)	{ v, s },
	VPMU_EVENTS(VPMU_EV_ROW)
#undef VPMU_EV_ROW
};

const char *
vpmu_event_name(uint32_t event)
{
	size_t i;

	for (i = 0; i < VPMU_ARRAY_SIZE(evtab); i++)
		if (evtab[i].code == event)
			return (evtab[i].name);
	return (NULL);
}

uint32_t
vpmu_event_lookup(const char *name)
{
	size_t i;

	if (name == NULL)
		return (VPMU_EV_NONE);
	for (i = 0; i < VPMU_ARRAY_SIZE(evtab); i++)
		if (strcmp(evtab[i].name, name) == 0)
			return (evtab[i].code);
	return (VPMU_EV_NONE);
}

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
