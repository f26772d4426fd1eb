/*
 * profile_internal.h -- what the files of a log read back into profiles
 * share, and nothing else includes: profile.c (the profile and its
 * records), samples.c (the samples counted), logread.c (the log read,
 * the record dump), report.c (the text outputs), map.c (the hash map and
 * memory).
 */
#ifndef VPMUSTAT_PROFILE_INTERNAL_H
#define VPMUSTAT_PROFILE_INTERNAL_H

#include <stddef.h>
#include <stdint.h>

#include <vpmu/pmclog.h>

#include "vpmustat.h"

/* The func of a tree's root ("all"). */
#define VS_ROOT	UINT32_MAX

/* map.c: out of memory: a message, and vpmustat exits with VS_EXIT_HOST. */
_Noreturn void vs_oom(void);
/* map.c: p, an array of *cap elements of size, with room for element n. */
void	*vs_grow(void *p, size_t *cap, size_t n, size_t size);

/* profile.c: PMC id's index in p->pmcs, or -1. */
int	vs_profile_pmc_index(const struct vs_profile *p, uint32_t id);
/* profile.c: one record into p. */
void	vs_profile_add_record(struct vs_profile *p, const struct vpmu_pmclog_ev *ev);

/* samples.c: one CALLCHAIN record: its chain counted. */
void	vs_profile_add_sample(struct vs_profile *p, const struct vpmu_pmclog_ev *ev);
/* samples.c: once the log is read, e's functions, call tree and calls. */
void	vs_profile_funcs(const struct vs_profile *p, struct vs_evprof *e);

#endif /* VPMUSTAT_PROFILE_INTERNAL_H */
