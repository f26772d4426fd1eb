/*
 * pmclog_mutate.h -- a structure-aware mutator for the fuzz targets whose
 * input is a few option bytes followed by a pmclog log (fuzz_pmclog,
 * fuzz_vpmustat).  See pmclog_mutate.c.
 */
#ifndef PMCLOG_MUTATE_H
#define PMCLOG_MUTATE_H

#include <stddef.h>
#include <stdint.h>

/*
 * Mutate data[0 .. size), prefix option bytes then a log, in place: at
 * most max bytes are written; returns the new size.  seed drives every
 * choice, so a seed and an input always give the same output.
 */
size_t	pmclog_mutate(uint8_t *data, size_t size, size_t max, size_t prefix,
	    unsigned int seed);

/*
 * Splice two such inputs at record boundaries into out (max bytes):
 * the options and first records of one, the last records of the other.
 */
size_t	pmclog_crossover(const uint8_t *d1, size_t s1, const uint8_t *d2,
	    size_t s2, uint8_t *out, size_t max, size_t prefix, unsigned int seed);

#endif /* PMCLOG_MUTATE_H */
