/*
 * map.c -- vpmustat's hash map from 64-bit keys to 32-bit values (open
 * addressing, linear probing): the indexes of a log's profiles (PCs,
 * functions' names, chains, edges, CPUs, processes) and pprof's
 * locations; and the growing arrays those indexes point into.  Out of
 * memory, vpmustat exits.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "profile_internal.h"

void
vs_oom(void)
{
	fprintf(stderr, "vpmustat: out of memory\n");
	exit(VS_EXIT_HOST);
}

void *
vs_grow(void *p, size_t *cap, size_t n, size_t size)
{
	if (n < *cap)
		return (p);
	*cap = *cap ? *cap * 2 : 64;
	if ((p = realloc(p, *cap * size)) == NULL)
		vs_oom();
	return (p);
}

/* ---- a map from 64-bit keys (open addressing, linear probing) ---------------------- */

static size_t
map_slot(uint64_t key, size_t cap)
{
	key ^= key >> 33;
	key *= UINT64_C(0xff51afd7ed558ccd);
	key ^= key >> 33;
	return ((size_t)key & (cap - 1));
}

int64_t
vs_map_get(const struct vs_map *m, uint64_t key)
{
	size_t i;

	if (m->cap == 0)
		return (-1);
	for (i = map_slot(key, m->cap); m->vals[i] != 0; i = (i + 1) & (m->cap - 1))
		if (m->keys[i] == key)
			return ((int64_t)m->vals[i] - 1);
	return (-1);
}

void
vs_map_put(struct vs_map *m, uint64_t key, uint32_t val)
{
	struct vs_map old = *m;
	size_t i;

	if (2 * (m->n + 1) > m->cap) {
		m->cap = m->cap ? m->cap * 2 : 256;
		m->n = 0;
		if ((m->keys = calloc(m->cap, sizeof(*m->keys))) == NULL ||
		    (m->vals = calloc(m->cap, sizeof(*m->vals))) == NULL)
			vs_oom();
		for (i = 0; i < old.cap; i++)
			if (old.vals[i] != 0)
				vs_map_put(m, old.keys[i], old.vals[i] - 1);
		free(old.keys);
		free(old.vals);
	}
	for (i = map_slot(key, m->cap); m->vals[i] != 0; i = (i + 1) & (m->cap - 1))
		if (m->keys[i] == key)
			break;
	if (m->vals[i] == 0)
		m->n++;
	m->keys[i] = key;
	m->vals[i] = val + 1;
}

void
vs_map_free(struct vs_map *m)
{
	free(m->keys);
	free(m->vals);
	memset(m, 0, sizeof(*m));
}
