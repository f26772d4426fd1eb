/*
 * snapblob.h -- what the fuzz targets that save VMs share: CHECK(), a
 * save into a buffer of the right size, and the comparison of two saved
 * blobs as states.
 */
#ifndef VPMU_FUZZ_SNAPBLOB_H
#define VPMU_FUZZ_SNAPBLOB_H

#include <errno.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <vpmu/vpmu.h>
#include <vpmu/snapshot.h>

#define CHECK(c)	do { if (!(c)) { fprintf(stderr, "%s:%d: %s\n", \
			    __FILE__, __LINE__, #c); abort(); } } while (0)
#define HDR		32	/* the blob's header: magic, version, lengths, CRC */

/* vm saved into a new buffer of *len bytes. */
static inline uint8_t *
snap_save(vpmu_vm *vm, size_t *len)
{
	uint8_t *b;

	*len = 0;
	CHECK(vpmu_vm_save(vm, NULL, len) == ENOSPC);
	CHECK((b = malloc(*len)) != NULL);
	CHECK(vpmu_vm_save(vm, b, len) == 0);
	return (b);
}

/*
 * Two saves compared from the payload on, less the one field that is
 * timing, not state: log_sweeps (the sweeper thread's passes), the last
 * driver statistic in the VMST section.
 */
static inline bool
snap_same_state(const uint8_t *a, size_t na, const uint8_t *b, size_t nb)
{
	const uint8_t *t;
	size_t at;

	if (na != nb || na < HDR ||
	    (t = memmem(a + HDR, na - HDR, "VMST", 4)) == NULL)
		return (false);
	at = (size_t)(t - a) + 4 + 3 * 8 + 7 * 4;
	if (at + 4 > na)
		return (false);
	return (memcmp(a + HDR, b + HDR, at - HDR) == 0 &&
	    memcmp(a + at + 4, b + at + 4, na - at - 4) == 0);
}

#endif
