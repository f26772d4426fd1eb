/*
 * bzimage.h -- a Linux bzImage around a kernel ELF, for the tests: the
 * setup header vpmu-run's linux.c reads (protocol 2.15, LOADED_HIGH,
 * cmdline_size 2047, init_size 8 MiB, the given initrd_addr_max) in
 * BZ_SETUP_SECTS setup sectors, then the kernel gzip-compressed at
 * payload_offset 0x10 of the protected-mode part (gzip's trailer ends with
 * the decompressed size, as the kernel build's does).  Used by
 * linux_loader_test.c (images in memory) and mkbzimage.c (a boot protocol
 * guest as a bzImage-shaped guest).  Needs zlib, and vpmu-run.h on the
 * include path.
 */
#ifndef BZIMAGE_H
#define BZIMAGE_H

#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <zlib.h>

#include "vpmu-run.h"		/* vr_put16, vr_put32 */

#define BZ_SETUP_SECTS	4
#define BZ_PM_OFF	((BZ_SETUP_SECTS + 1) * 512)	/* the protected-mode part */
#define BZ_PAYLOAD_OFF	(BZ_PM_OFF + 0x10)		/* the compressed kernel */

/* gzip of in into out (cap bytes): its length, 0 on a failure. */
static inline size_t
bz_gzip(const uint8_t *in, size_t n, uint8_t *out, size_t cap)
{
	z_stream s;
	size_t len;

	memset(&s, 0, sizeof(s));
	if (deflateInit2(&s, 6, Z_DEFLATED, 16 + MAX_WBITS, 8, Z_DEFAULT_STRATEGY) != Z_OK)
		return (0);
	s.next_in = (Bytef *)(uintptr_t)in;
	s.avail_in = (uInt)n;
	s.next_out = out;
	s.avail_out = (uInt)cap;
	if (deflate(&s, Z_FINISH) != Z_STREAM_END) {
		deflateEnd(&s);
		return (0);
	}
	len = cap - s.avail_out;
	deflateEnd(&s);
	return (len);
}

/* The bzImage of kernel k (klen bytes), malloc'ed, in *len; NULL on a failure. */
static inline uint8_t *
bz_image(const uint8_t *k, size_t klen, uint32_t initrd_max, size_t *len)
{
	size_t cap = klen + klen / 8 + 1024, n;
	uint8_t *f = calloc(1, BZ_PAYLOAD_OFF + cap);

	if (f == NULL)
		return (NULL);
	f[0x1f1] = BZ_SETUP_SECTS;
	vr_put16(f + 0x1fe, 0xAA55);
	f[0x200] = 0xEB;
	f[0x201] = 0x6a;			/* the header ends at 0x26c */
	memcpy(f + 0x202, "HdrS", 4);
	vr_put16(f + 0x206, 0x020f);
	f[0x211] = 0x01;			/* LOADED_HIGH */
	vr_put32(f + 0x22c, initrd_max);	/* initrd_addr_max */
	vr_put32(f + 0x238, 2047);		/* cmdline_size */
	vr_put32(f + 0x248, 0x10);		/* payload_offset */
	vr_put32(f + 0x260, 0x800000);		/* init_size: 8 MiB */
	if ((n = bz_gzip(k, klen, f + BZ_PAYLOAD_OFF, cap)) == 0) {
		free(f);
		return (NULL);
	}
	vr_put32(f + 0x24c, (uint32_t)n);	/* payload_length */
	*len = BZ_PAYLOAD_OFF + n;
	return (f);
}

#endif /* BZIMAGE_H */
