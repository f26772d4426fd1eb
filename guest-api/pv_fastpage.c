/*
 * pv_fastpage.c -- the fastpage personality of the paravirtual channel (pvchan.h).
 * Placeholder: no operations yet.
 */
#include <errno.h>

#include "pvchan.h"

const struct pv_personality vpmu__pv_fastpage = {
	.name = "fastpage",
};

int
vpmu__pv_fast_bind(struct vpmu_pv *pv, int32_t pid, vpmu_pmc_id id, uint32_t *slot)
{
	(void)pv;
	(void)pid;
	(void)id;
	(void)slot;
	return (ENOSYS);
}
