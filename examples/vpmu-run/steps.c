/*
 * steps.c -- why the exact source single-stepped, as a table: vpmu-run's
 * report (each vCPU) and vpmustat's end of run (the vCPUs together).
 */
#include <inttypes.h>
#include <stdio.h>

#include "vpmu-run.h"

void
vr_steps_report(FILE *f, const uint64_t why[VPMU_STEP_WHY_N], const char *indent)
{
	uint64_t total = 0, best;
	unsigned i, pick;
	bool done[VPMU_STEP_WHY_N] = { false };

	for (i = 0; i < VPMU_STEP_WHY_N; i++)
		total += why[i];
	if (total == 0)
		return;
	fprintf(f, "%ssingle steps by reason: %" PRIu64 "\n", indent, total);
	/* Most first; a reason that never stepped is left out. */
	for (;;) {
		best = 0;
		pick = VPMU_STEP_WHY_N;
		for (i = 0; i < VPMU_STEP_WHY_N; i++)
			if (!done[i] && why[i] > best) {
				best = why[i];
				pick = i;
			}
		if (pick == VPMU_STEP_WHY_N)
			break;
		done[pick] = true;
		fprintf(f, "%s  %12" PRIu64 "  %6.2f%%  %s\n", indent, why[pick],
		    100.0 * (double)why[pick] / (double)total, vpmu_step_why_name(pick));
	}
}
