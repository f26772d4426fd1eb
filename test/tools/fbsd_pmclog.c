/*
 * fbsd_pmclog -- a pmclog reader written only from the FreeBSD format
 * description (modern numbering, 16-byte entry header, amd64 layouts), with
 * no libvpmu code or header: the outside check of issue 5's "done when".
 *
 *   fbsd_pmclog LOG
 *
 * Prints one line per record:
 *   0xOFFSET TYPE tsc=N                     (CALLCHAIN adds " npc=N pc=A,B,...")
 * and fails (status 1, the reason on stderr) on anything the format does not
 * allow: a header without the 0xEE magic, an unknown type, a length that is
 * not a multiple of 4, under 16, over 4128 or past the end of the file, a
 * fixed-size record of the wrong size, a path or name without its NUL, a
 * CALLCHAIN whose address array is not whole, a first record other than
 * INITIALIZE, anything after CLOSELOG, or no CLOSELOG at all.
 * Status 2: usage or the file cannot be read.
 */
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define HDR		16u		/* u32 header, u32 spare, u64 tsc */
#define MAXREC		4128u		/* CALLCHAIN of 512 addresses */

/* Modern type numbers; size: the exact length, or -(offset of the string or array). */
static const struct { const char *name; int size; } types[21] = {
	[1] = { "CLOSELOG", 16 },	[2] = { "DROPNOTIFY", 16 },
	[3] = { "INITIALIZE", 112 },	[5] = { "PMCALLOCATE", 40 },
	[6] = { "PMCATTACH", -24 },	[7] = { "PMCDETACH", 24 },
	[8] = { "PROCCSW", 40 },	[9] = { "PROCEXEC", -40 },
	[10] = { "PROCEXIT", 32 },	[11] = { "PROCFORK", 24 },
	[12] = { "SYSEXIT", 24 },	[13] = { "USERDATA", 24 },
	[14] = { "MAP_IN", -32 },	[15] = { "MAP_OUT", 40 },
	[16] = { "CALLCHAIN", -32 },	[17] = { "PMCALLOCATEDYN", 96 },
	[18] = { "THR_CREATE", 52 },	[19] = { "THR_EXIT", 24 },
	[20] = { "PROC_CREATE", 44 },
};

static uint32_t
rd32(const unsigned char *p)
{
	return ((uint32_t)p[0] | (uint32_t)p[1] << 8 | (uint32_t)p[2] << 16 |
	    (uint32_t)p[3] << 24);
}

static uint64_t
rd64(const unsigned char *p)
{
	return (rd32(p) | (uint64_t)rd32(p + 4) << 32);
}

static int
bad(size_t off, const char *why)
{
	fprintf(stderr, "fbsd_pmclog: record at 0x%zx: %s\n", off, why);
	return (1);
}

int
main(int argc, char **argv)
{
	unsigned char *buf = NULL;
	size_t len = 0, cap = 0, off, n, i;
	int closed = 0;
	FILE *f;

	if (argc != 2) {
		fprintf(stderr, "usage: fbsd_pmclog LOG\n");
		return (2);
	}
	if ((f = fopen(argv[1], "rb")) == NULL) {
		fprintf(stderr, "fbsd_pmclog: %s: %s\n", argv[1], strerror(errno));
		return (2);
	}
	for (;;) {
		if (len == cap) {
			cap = cap ? 2 * cap : 1 << 16;
			if ((buf = realloc(buf, cap)) == NULL) {
				fprintf(stderr, "fbsd_pmclog: out of memory\n");
				return (2);
			}
		}
		if ((n = fread(buf + len, 1, cap - len, f)) == 0)
			break;
		len += n;
	}
	if (ferror(f)) {
		fprintf(stderr, "fbsd_pmclog: %s: read error\n", argv[1]);
		return (2);
	}
	fclose(f);

	for (off = 0; off < len; off += n) {
		uint32_t h, type;
		const unsigned char *r = buf + off;
		int size;

		if (closed)
			return (bad(off, "a record after CLOSELOG"));
		if (len - off < HDR)
			return (bad(off, "the file ends inside a header"));
		h = rd32(r);
		type = (h >> 16) & 0xFF;
		n = h & 0xFFFF;
		if (h >> 24 != 0xEE)
			return (bad(off, "no 0xEE magic"));
		if (type >= 21 || types[type].name == NULL)
			return (bad(off, "unknown record type"));
		if (n < HDR || n % 4 != 0 || n > MAXREC)
			return (bad(off, "length under 16, not a multiple of 4, or over 4128"));
		if (n > len - off)
			return (bad(off, "the file ends inside the record"));
		if (off == 0 && type != 3)
			return (bad(off, "the first record is not INITIALIZE"));
		size = types[type].size;
		if (size > 0 && n != (size_t)size)
			return (bad(off, "wrong length for a fixed-size record"));
		if (size < 0 && n < (size_t)-size)
			return (bad(off, "shorter than its fixed part"));
		if (size < 0 && type != 16 && (n == (size_t)-size ||
		    memchr(r - size, 0, n + size) == NULL))
			return (bad(off, "path without its NUL"));
		if (type == 3 && memchr(r + 48, 0, 64) == NULL)
			return (bad(off, "cpuid without its NUL"));
		if (type == 17 && memchr(r + 32, 0, 64) == NULL)
			return (bad(off, "event name without its NUL"));
		if (type == 16 && (n - 32) % 8 != 0)
			return (bad(off, "CALLCHAIN address array not whole"));
		printf("0x%08zx %s tsc=%" PRIu64, off, types[type].name, rd64(r + 8));
		if (type == 16) {
			printf(" npc=%zu pc=", (n - 32) / 8);
			for (i = 32; i < n; i += 8)
				printf("%s0x%" PRIx64, i == 32 ? "" : ",", rd64(r + i));
		}
		printf("\n");
		closed = type == 1;
	}
	free(buf);
	if (!closed)
		return (bad(off, "no CLOSELOG at the end"));
	return (0);
}
