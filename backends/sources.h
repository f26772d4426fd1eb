/*
 * sources.h -- the built-in host sources by index (sources.c), for the
 * code that lists them or finds them by an option's name (spec.c).
 */
#ifndef VPMU_SOURCES_H
#define VPMU_SOURCES_H

#include <stddef.h>

struct vpmu_source_ops;

/* The i-th built-in source, from 0; NULL past the last. */
const struct vpmu_source_ops *vpmu__source_at(size_t i);

#endif
