/*
 * event.c -- event names.  The table of built-in host sources is
 * backends/sources.c: the core names no backend.
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

int
vpmu_event_is_timed(uint32_t event)
{
	return (event == VPMU_EV_TASK_CLOCK || event == VPMU_EV_CPU_CLOCK);
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
