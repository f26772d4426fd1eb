/*
 * kallsyms_make.c -- a Linux kernel's symbol table (kallsyms) made from a
 * list of symbols, laid out as a kernel's build lays it out
 * (examples/vpmustat/kallsyms.c has the facts): every part at an 8-byte
 * boundary; names compressed with tokens that stand for pairs of tokens,
 * the bytes no name uses; lengths of 128 tokens or more in two bytes;
 * offsets from a relative base, with absolute per-CPU symbols unless
 * KM_RELATIVE.  For tests: mkkallsyms.c writes one into a guest,
 * test/fuzz/kallsyms_seed.c into seeds.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "kallsyms_make.h"

#define NTOK		256
#define KERNEL_HALF	0xffff800000000000ull

struct msym {
	uint64_t addr;
	uint8_t	 code[KM_NAME_MAX + 2];	/* the type and name, as tokens */
	size_t	 len;
};

struct make {
	struct msym *s;
	size_t	 n;
	char	 tok[NTOK][64];		/* each token's string */
	uint8_t	*out;
	size_t	 cap, at;
	int	 full;
};

static void
put(struct make *m, const void *p, size_t n)
{
	if (m->at + n > m->cap) {
		m->full = 1;
		return;
	}
	memcpy(m->out + m->at, p, n);
	m->at += n;
}

static void
put32(struct make *m, uint32_t v)
{
	uint8_t b[4] = { (uint8_t)v, (uint8_t)(v >> 8), (uint8_t)(v >> 16), (uint8_t)(v >> 24) };

	put(m, b, 4);
}

static void
put64(struct make *m, uint64_t v)
{
	put32(m, (uint32_t)v);
	put32(m, (uint32_t)(v >> 32));
}

static void
align8(struct make *m)
{
	static const uint8_t zero[8];

	put(m, zero, (8 - m->at % 8) % 8);
}

/*
 * The tokens: every byte a name uses stands for itself (the digits
 * always, as in any kernel); the others, while a pair of tokens occurs
 * twice or more, for the commonest pair.  Unused ones stand for "?".
 */
static void
tokens(struct make *m, int compress)
{
	static unsigned count[NTOK][NTOK];
	unsigned best, a, b, ba = 0, bb = 0;
	size_t i, j, k;
	int c;

	for (c = '0'; c <= '9'; c++)
		m->tok[c][0] = (char)c;
	for (i = 0; i < m->n; i++)
		for (j = 0; j < m->s[i].len; j++)
			m->tok[m->s[i].code[j]][0] = (char)m->s[i].code[j];
	for (c = 0; c < NTOK && compress; c++) {
		if (m->tok[c][0] != '\0')
			continue;
		memset(count, 0, sizeof(count));
		for (i = 0; i < m->n; i++)
			for (j = 0; j + 1 < m->s[i].len; j++)
				count[m->s[i].code[j]][m->s[i].code[j + 1]]++;
		best = 0;
		for (a = 0; a < NTOK; a++)
			for (b = 0; b < NTOK; b++)
				if (count[a][b] > best &&
				    strlen(m->tok[a]) + strlen(m->tok[b]) < sizeof(m->tok[0])) {
					best = count[a][b];
					ba = a;
					bb = b;
				}
		if (best < 2)
			break;
		snprintf(m->tok[c], sizeof(m->tok[c]), "%s%s", m->tok[ba], m->tok[bb]);
		for (i = 0; i < m->n; i++) {
			struct msym *s = &m->s[i];

			for (j = k = 0; j < s->len; j++, k++) {
				if (j + 1 < s->len && s->code[j] == ba && s->code[j + 1] == bb) {
					s->code[k] = (uint8_t)c;
					j++;
				} else
					s->code[k] = s->code[j];
			}
			s->len = k;
		}
	}
	for (c = 0; c < NTOK; c++)
		if (m->tok[c][0] == '\0')
			snprintf(m->tok[c], sizeof(m->tok[c]), "?");
}

static void
put_names(struct make *m)
{
	size_t i, names;
	uint8_t len[2];
	uint32_t *markers = calloc((m->n + 255) / 256, sizeof(*markers));

	if (markers == NULL) {
		m->full = 1;			/* said as "does not fit" */
		return;
	}
	put32(m, (uint32_t)m->n);		/* kallsyms_num_syms */
	align8(m);
	names = m->at;				/* kallsyms_names */
	for (i = 0; i < m->n; i++) {
		if (i % 256 == 0)
			markers[i / 256] = (uint32_t)(m->at - names);
		len[0] = (uint8_t)((m->s[i].len & 0x7f) | (m->s[i].len >= 128 ? 0x80 : 0));
		len[1] = (uint8_t)(m->s[i].len >> 7);
		put(m, len, m->s[i].len >= 128 ? 2 : 1);
		put(m, m->s[i].code, m->s[i].len);
	}
	align8(m);
	for (i = 0; i < (m->n + 255) / 256; i++)	/* kallsyms_markers */
		put32(m, markers[i]);
	align8(m);
	free(markers);
}

static void
put_tokens(struct make *m)
{
	uint16_t index[NTOK];
	size_t table = m->at, i;
	uint8_t b[2];

	for (i = 0; i < NTOK; i++) {		/* kallsyms_token_table */
		index[i] = (uint16_t)(m->at - table);
		put(m, m->tok[i], strlen(m->tok[i]) + 1);
	}
	align8(m);
	for (i = 0; i < NTOK; i++) {		/* kallsyms_token_index */
		b[0] = (uint8_t)index[i];
		b[1] = (uint8_t)(index[i] >> 8);
		put(m, b, 2);
	}
	align8(m);
}

static int
put_addresses(struct make *m, int relative_only, char *err, size_t errlen)
{
	uint64_t base = 0;
	size_t i;

	for (i = 0; i < m->n && base == 0; i++)
		if (m->s[i].addr >= KERNEL_HALF)
			base = m->s[i].addr;
	if (base == 0) {
		snprintf(err, errlen, "no symbol in the kernel half");
		return (-1);
	}
	for (i = 0; i < m->n; i++) {		/* kallsyms_offsets */
		uint64_t a = m->s[i].addr;

		/* what the reader tells apart: an offset below 2^31, or not */
		if (relative_only ? a < base || a - base > INT32_MAX :
		    a < KERNEL_HALF ? a > INT32_MAX : a - base > INT32_MAX) {
			snprintf(err, errlen, "%.40s: not within 2 GiB %s", (const char *)m->s[i].code + 1,
			    a < KERNEL_HALF && !relative_only ? "of 0 (per-CPU)" : "above the base");
			return (-1);
		}
		if (relative_only)
			put32(m, (uint32_t)(a - base));
		else if (a < KERNEL_HALF)
			put32(m, (uint32_t)a);			/* absolute, per-CPU */
		else
			put32(m, (uint32_t)(int32_t)(int64_t)(base - 1 - a));
	}
	align8(m);
	put64(m, base);				/* kallsyms_relative_base */
	align8(m);
	return (0);
}

size_t
kallsyms_make(const struct km_sym *syms, size_t n, unsigned flags, uint8_t *out, size_t cap,
    char *err, size_t errlen)
{
	struct make *m;
	size_t i, len = 0;

	if (n == 0 || (m = calloc(1, sizeof(*m))) == NULL ||
	    (m->s = calloc(n, sizeof(*m->s))) == NULL) {
		snprintf(err, errlen, n == 0 ? "no symbols" : "out of memory");
		if (n != 0)
			free(m);
		return (0);
	}
	m->n = n;
	m->out = out;
	m->cap = cap;
	for (i = 0; i < n; i++) {
		size_t nl = strlen(syms[i].name);

		if (nl == 0 || nl > KM_NAME_MAX || (i > 0 && syms[i].addr < syms[i - 1].addr)) {
			snprintf(err, errlen, "symbol %zu (%.40s): %s", i, syms[i].name,
			    nl == 0 || nl > KM_NAME_MAX ? "a name of 1 to 512 characters" :
			    "below the one before: not sorted");
			goto out;
		}
		m->s[i].addr = syms[i].addr;
		m->s[i].code[0] = (uint8_t)syms[i].type;
		memcpy(m->s[i].code + 1, syms[i].name, nl);
		m->s[i].len = nl + 1;
	}
	tokens(m, !(flags & KM_UNCOMPRESSED));
	if (!(flags & KM_NEW) && put_addresses(m, flags & KM_RELATIVE, err, errlen) < 0)
		goto out;
	put_names(m);
	put_tokens(m);
	if ((flags & KM_NEW) && put_addresses(m, flags & KM_RELATIVE, err, errlen) < 0)
		goto out;
	if (m->full) {
		snprintf(err, errlen, "the table does not fit %zu bytes", cap);
		goto out;
	}
	len = m->at;
out:
	free(m->s);
	free(m);
	return (len);
}
