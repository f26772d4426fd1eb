/*
 * kallsyms.c -- a Linux guest's kernel symbols read from its own memory:
 * the table CONFIG_KALLSYMS builds into the kernel, which /proc/kallsyms
 * prints (--guest-kallsyms; the default for a bzImage run without
 * --guest-symbols).
 *
 * What the table is made of, as the kernel's build writes it (every part
 * at an 8-byte boundary, in the kernel's read-only data):
 *
 *   kallsyms_num_syms      u32, the number of symbols
 *   kallsyms_names         per symbol: its length in tokens (one byte, or
 *                          two when the first has bit 7 set, low 7 bits
 *                          first: Linux 6.1 on), then its tokens; the name
 *                          expanded begins with the symbol's type letter
 *   kallsyms_markers       u32 per 256 symbols: where symbol 256 i begins
 *                          in names
 *   kallsyms_token_table   256 strings, each ended by a NUL
 *   kallsyms_token_index   256 u16: where token i begins in the table
 *   the addresses          kallsyms_offsets (s32 per symbol) and
 *                          kallsyms_relative_base (u64), or
 *                          kallsyms_addresses (u64 per symbol) in kernels
 *                          without base-relative tables
 *
 * Before Linux 6.4 the addresses come first, just before num_syms; from
 * 6.4 they follow the token index.  Other arrays may sit between markers
 * and the token table (kallsyms_seqs_of_names, 6.2 and 6.3), so nothing
 * is found by walking back from the tokens but num_syms, which is
 * checked by every marker.  An offset is relative_base + (u32)offset; in
 * kernels with absolute per-CPU symbols (x86-64 SMP until 6.15) an
 * offset of 0 or more is the address itself and a negative one is
 * relative_base - 1 - offset: a table with any negative offset is read
 * that way.
 *
 * A byte no name uses is a token standing for a longer string; a byte a
 * name uses is its own one-character token, so tokens 0x30 to 0x39 are
 * "0" to "9", one after the other: the 20 bytes "0\0" ... "9\0" find the
 * token table.  Every candidate is checked whole: the index against the
 * strings, num_syms against the markers, the addresses sorted.  Guest
 * memory is the guest's: every read is bounded, a table that does not
 * check out names nothing.
 *
 * The addresses are the running kernel's (its KASLR slide included): the
 * slide found later from LSTAR is 0.
 */
#include <errno.h>
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

#include "vpmustat.h"

#define NTOKENS		256
#define NAME_MAX_LEN	512		/* a name expanded, its type and NUL included
					   (the kernel's KSYM_NAME_LEN) */
#define SYMS_MAX	(4u << 20)	/* more symbols than any kernel has (~200 k) */
#define NAMES_MAX	((size_t)64 << 20)	/* the names expanded, together */
#define BACK_MAX	((size_t)64 << 20)	/* num_syms: this far below the tokens at most */
#define MIN_SYMS	16
/*
 * What the search may read, candidates together: memory made of near
 * misses (a guest's own doing) must not hold the run up for long.
 */
#define WORK_MAX	((uint64_t)4 << 30)

/* A candidate table, positions as offsets in the memory scanned. */
struct ktab {
	const uint8_t *m;
	size_t	 len;
	size_t	 tokens;	/* kallsyms_token_table */
	size_t	 index;		/* kallsyms_token_index */
	size_t	 tok[NTOKENS];	/* each token's offset in m */
	size_t	 toklen[NTOKENS];
	size_t	 numsyms;	/* kallsyms_num_syms */
	size_t	 names;		/* kallsyms_names */
	uint32_t n;
	uint64_t work;		/* bytes the search has read */
};

static size_t
align8(size_t x)
{
	return ((x + 7) & ~(size_t)7);
}

/*
 * The token table whose token 0x30 is at zero: the index after the
 * table's last string (at one of the next 8 bytes) agrees with every
 * string.  0, or -1.
 */
static int
tokens_at(struct ktab *t, size_t zero)
{
	size_t end = zero, start, i, at;
	const uint8_t *ix;

	/* Tokens 0x30 .. 0xff, forward: the end of the table. */
	for (i = '0'; i < NTOKENS; i++) {
		at = end;
		while (end < t->len && t->m[end] != 0)
			end++;
		if (end >= t->len || end == at) {
			t->work += end - zero;
			return (-1);
		}
		end++;
	}
	t->work += end - zero;
	for (at = end; at < end + 8 && at + 2 * NTOKENS <= t->len; at++) {
		ix = t->m + at;
		if (vr_get16(ix) != 0 || vr_get16(ix + 2 * '0') > zero)
			continue;
		start = zero - vr_get16(ix + 2 * '0');
		for (i = 0; i < NTOKENS; i++) {
			t->tok[i] = start + vr_get16(ix + 2 * i);
			if (t->tok[i] >= end)
				break;
			t->toklen[i] = strnlen((const char *)t->m + t->tok[i], end - t->tok[i]);
			if (t->toklen[i] == 0 || t->tok[i] + t->toklen[i] >= end ||
			    (i > 0 && t->tok[i] != t->tok[i - 1] + t->toklen[i - 1] + 1))
				break;
		}
		if (i == NTOKENS && t->tok[NTOKENS - 1] + t->toklen[NTOKENS - 1] + 1 == end) {
			t->tokens = start;
			t->index = at;
			return (0);
		}
	}
	return (-1);
}

/*
 * Symbol i's entry at *at in names (before limit): its name expanded into
 * name (NUL-ended), *at moved past it.  0, or -1.
 */
static int
expand(const struct ktab *t, size_t *at, size_t limit, char *name)
{
	size_t p = *at, len, i, out = 0;

	if (p >= limit)
		return (-1);
	len = t->m[p++];
	if (len & 0x80) {
		if (p >= limit)
			return (-1);
		len = (len & 0x7f) | (size_t)t->m[p++] << 7;
	}
	if (len == 0 || len > limit - p)
		return (-1);
	for (i = 0; i < len; i++) {
		unsigned tk = t->m[p + i];

		if (out + t->toklen[tk] >= NAME_MAX_LEN)
			return (-1);
		memcpy(name + out, t->m + t->tok[tk], t->toklen[tk]);
		out += t->toklen[tk];
	}
	name[out] = '\0';
	*at = p + len;
	return (out >= 2 ? 0 : -1);
}

/* A type letter, then a name of the characters symbols are made of. */
static bool
plausible(const char *name)
{
	const char *c;

	if (strchr("aAbBdDgGiInNpPrRsStTuUvVwW", name[0]) == NULL)
		return (false);
	for (c = name + 1; *c != '\0'; c++)
		if (*c <= ' ' || *c > '~')
			return (false);
	return (true);
}

/*
 * num_syms at x, names just after it: the first symbols plausible, then
 * every symbol's entry where the markers after names say.  0, or -1.
 */
static int
names_at(struct ktab *t, size_t x)
{
	char name[NAME_MAX_LEN];
	uint32_t n = vr_get32(t->m + x), i, nmark, *want;
	size_t names = x + 8, at = names, mk, j, chars = 0;

	if (n < MIN_SYMS || n > SYMS_MAX || vr_get32(t->m + x + 4) != 0)
		return (-1);
	for (i = 0; i < n && i < 64; i++) {
		if (expand(t, &at, t->tokens, name) < 0 || !plausible(name)) {
			t->work += at - names;
			return (-1);
		}
	}
	t->work += at - names;
	/* The whole of names, each 256th symbol's offset kept for the markers. */
	at = names;
	nmark = (n + 255) / 256;
	if ((want = malloc(nmark * sizeof(*want))) == NULL)
		return (-1);
	for (i = 0; i < n; i++) {
		if (i % 256 == 0)
			want[i / 256] = (uint32_t)(at - names);
		if (expand(t, &at, t->tokens, name) < 0 ||
		    (chars += strlen(name) + 1) > NAMES_MAX)
			break;			/* not a table, or one that would not fit */
	}
	t->work += at - names;
	for (mk = at; i == n && mk < at + 8; mk++) {
		if (mk + 4 * (size_t)nmark > t->tokens)
			break;
		for (j = 0; j < nmark && vr_get32(t->m + mk + 4 * j) == want[j]; j++)
			;
		if (j == nmark) {
			free(want);
			t->numsyms = x;
			t->names = names;
			t->n = n;
			return (0);
		}
	}
	free(want);
	return (-1);
}

/* The addresses, by the layouts above: into addr[0 .. n).  0, or -1. */
static int
addresses(const struct ktab *t, uint64_t *addr)
{
	size_t n = t->n, after = align8(t->index + 2 * NTOKENS), cand[4], i, k;
	uint64_t base;
	bool relative, negative;
	size_t unsorted;

	/* offsets after the index (6.4 on), before num_syms (before 6.4); then absolute */
	cand[0] = after;
	cand[1] = t->numsyms >= 8 + 4 * n ? (t->numsyms - 8 - 4 * n) & ~(size_t)7 : SIZE_MAX;
	cand[2] = after;
	cand[3] = t->numsyms >= 8 * n ? t->numsyms - 8 * n : SIZE_MAX;
	for (k = 0; k < 4; k++) {
		size_t o = cand[k], r;

		relative = k < 2;
		if (o == SIZE_MAX)
			continue;
		if (relative) {
			r = k == 0 ? align8(o + 4 * n) : t->numsyms - 8;
			if (r + 8 > t->len || o + 4 * n > r)
				continue;
			base = vr_get64(t->m + r);
			if (base < VS_KERNEL_HALF)
				continue;
			negative = false;
			for (i = 0; i < n; i++)
				negative |= (int32_t)vr_get32(t->m + o + 4 * i) < 0;
			for (i = 0; i < n; i++) {
				int32_t off = (int32_t)vr_get32(t->m + o + 4 * i);

				addr[i] = !negative ? base + (uint32_t)off :
				    off >= 0 ? (uint64_t)off : base - 1 - (uint64_t)(int64_t)off;
			}
		} else {
			if (o + 8 * n > t->len)
				continue;
			for (i = 0; i < n; i++)
				addr[i] = vr_get64(t->m + o + 8 * i);
		}
		/* The kernel's table is sorted by address (a stray symbol aside). */
		for (unsorted = 0, i = 1; i < n; i++)
			unsorted += addr[i] < addr[i - 1];
		if (unsorted <= n / 100 && addr[n - 1] >= VS_KERNEL_HALF)
			return (0);
	}
	return (-1);
}

/* The symbols of a checked table into m[0 .. n): 0, or -1 (out of memory). */
static int
symbols(const struct ktab *t, const uint64_t *addr, struct vs_mline *m)
{
	char name[NAME_MAX_LEN];
	size_t at = t->names;
	uint32_t i;

	for (i = 0; i < t->n; i++) {
		/* names_at() checked them; a vCPU may have written since */
		if (expand(t, &at, t->tokens, name) < 0)
			return (-1);
		m[i] = (struct vs_mline){ .addr = addr[i], .type = name[0], .line = i + 1 };
		if ((m[i].name = strdup(name + 1)) == NULL)
			return (-1);
	}
	return (0);
}

/* The table of memory m[0 .. len): into t, or -1 (with t->work over WORK_MAX: gave up). */
static int
find(struct ktab *t, const uint8_t *m, size_t len)
{
	static const char digits[] = "0\0" "1\0" "2\0" "3\0" "4\0" "5\0" "6\0" "7\0" "8\0" "9";
	const uint8_t *p;
	size_t at = 0, x, low;

	t->m = m;
	t->len = len;
	while (at < len && t->work <= WORK_MAX &&
	    (p = memmem(m + at, len - at, digits, sizeof(digits))) != NULL) {
		at = (size_t)(p - m) + 1;
		if (tokens_at(t, (size_t)(p - m)) < 0)
			continue;
		low = t->tokens > BACK_MAX ? t->tokens - BACK_MAX : 0;
		for (x = t->tokens & ~(size_t)7; x >= low + 8 && t->work <= WORK_MAX; x -= 8) {
			t->work += 8;
			if (names_at(t, x - 8) == 0)
				return (0);
		}
	}
	return (-1);
}

int
vs_kallsyms_read(struct vs_ksyms *k, const uint8_t *mem, size_t len, const char *save,
    char *err, size_t errlen)
{
	struct ktab *t;
	struct vs_mline *m = NULL;
	uint64_t *addr = NULL;
	char path[128];
	FILE *f = NULL;
	uint32_t i;
	int ret = -1, werr;

	memset(k, 0, sizeof(*k));
	if ((t = calloc(1, sizeof(*t))) == NULL) {
		snprintf(err, errlen, "guest memory: out of memory");
		return (-1);
	}
	if (find(t, mem, len) < 0) {
		if (t->work > WORK_MAX)
			snprintf(err, errlen, "no kernel symbol table (kallsyms) found in the "
			    "guest's %zu MiB of memory: the search gave up after reading %"
			    PRIu64 " MiB of candidates that did not check out", len >> 20,
			    t->work >> 20);
		else
			snprintf(err, errlen, "no kernel symbol table (kallsyms) in the guest's "
			    "%zu MiB of memory: a kernel built without CONFIG_KALLSYMS, or not "
			    "yet unpacked", len >> 20);
		goto out;
	}
	snprintf(path, sizeof(path), "guest memory (kallsyms, %" PRIu32 " symbols at "
	    "guest-physical %#zx)", t->n, t->numsyms);
	if ((addr = calloc(t->n, sizeof(*addr))) == NULL ||
	    (m = calloc(t->n, sizeof(*m))) == NULL) {
		snprintf(err, errlen, "guest memory: out of memory");
		goto out;
	}
	if (addresses(t, addr) < 0) {
		snprintf(err, errlen, "the kernel symbol table (kallsyms) at guest-physical "
		    "%#zx: no sorted addresses for its %" PRIu32 " symbols", t->numsyms, t->n);
		goto out;
	}
	if (symbols(t, addr, m) < 0) {
		snprintf(err, errlen, "the kernel symbol table (kallsyms) at guest-physical "
		    "%#zx: changed while read, or out of memory", t->numsyms);
		goto out;
	}
	/* A file that cannot be written is said; the symbols serve all the same. */
	if (save != NULL) {
		werr = 0;
		if (strcmp(save, "-") == 0)	/* standard output */
			f = stdout;
		else if ((f = fopen(save, "w")) == NULL)
			werr = errno;
		if (f != NULL) {
			for (i = 0; i < t->n; i++)
				fprintf(f, "%016" PRIx64 " %c %s\n", m[i].addr, m[i].type,
				    m[i].name);
			if (fflush(f) != 0)
				werr = errno;
			if (ferror(f) && werr == 0)
				werr = EIO;
			if (f != stdout && fclose(f) != 0 && werr == 0)
				werr = errno;
		}
		if (werr != 0)
			fprintf(stderr, "vpmustat: warning: --save-guest-symbols %s: %s\n", save,
			    strerror(werr));
	}
	if (vs_ksyms_build(k, m, t->n, path, err, errlen) < 0)
		goto out;
	if ((k->path = strdup(path)) == NULL) {
		snprintf(err, errlen, "guest memory: out of memory");
		goto out;
	}
	ret = 0;
out:
	if (m != NULL)
		vs_mlines_free(m, t->n);
	free(addr);
	free(t);
	if (ret < 0)
		vs_ksyms_free(k);
	return (ret);
}
