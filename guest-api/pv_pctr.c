/*
 * pv_pctr.c -- the pctr personality of the paravirtual channel (pvchan.h).
 * Placeholder: no operations yet.
 */
#include <errno.h>

#include "pvchan.h"

const struct pv_personality vpmu__pv_pctr = {
	.name = "pctr",
};

int
vpmu__pv_pctr_peek(struct vpmu_pv *pv, unsigned cpu, unsigned i, uint64_t *value,
    uint32_t *fn, struct vpmu_count *times)
{
	(void)pv;
	(void)cpu;
	(void)i;
	(void)value;
	(void)fn;
	(void)times;
	return (ENOENT);
}
