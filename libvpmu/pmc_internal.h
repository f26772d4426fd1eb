/*
 * pmc_internal.h -- what the core's PMC files (pmc.c, pmc_row.c,
 * pmc_model.c, pmc_report.c) give one another and no other file uses:
 * the owner lookup, the row dispositions and the choice of a row, all
 * pmc_row.c's.  What the rest of the core calls is in internal.h.
 */
#ifndef VPMU_PMC_INTERNAL_H
#define VPMU_PMC_INTERNAL_H

#include <stdint.h>

#include "internal.h"

/* The owner record of pid, or NULL. */
struct vpmu_owner *vpmu__owner_find(struct vpmu_vm *vm, int32_t pid);

/* A PMC of mode (or a disabled slot: VPMU_MODE_SC) takes or leaves row. */
void	vpmu__pmc_disp_mark(struct vpmu_vm *vm, unsigned row, uint32_t mode);
void	vpmu__pmc_disp_unmark(struct vpmu_vm *vm, unsigned row, uint32_t mode);
/* VPMU_DISP_FREE, VPMU_DISP_THREAD or VPMU_DISP_STANDALONE. */
uint32_t vpmu__pmc_disp_of(const struct vpmu_vm *vm, unsigned row);

/*
 * The row of class c a new PMC of mode counting event, for pid (owner o,
 * NULL if it has none yet) on cpu, takes; c->ri_base + c->rows if none.
 */
unsigned vpmu__pmc_row_pick(struct vpmu_vm *vm, const struct vpmu_classdesc *c,
	    const struct vpmu_owner *o, int32_t pid, uint32_t event, uint32_t mode,
	    uint32_t cpu);

#endif /* VPMU_PMC_INTERNAL_H */
