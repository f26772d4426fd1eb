/*
 * pmclog_mutate.c -- a structure-aware mutator for inputs that are a few
 * option bytes and a pmclog log (fuzz_pmclog, fuzz_vpmustat; each calls
 * it from its LLVMFuzzerCustomMutator).
 *
 * The log is cut into records by their header words: a record runs for
 * the length its header gives when that length is at least 4 and within
 * the input, and the bytes left where it is not (a bad header, a record
 * cut short) are one last record.  Then one to four of these mutations,
 * on records rather than bytes:
 *
 *   insert     a record of a random type with random fields, made by
 *              vpmu_pmclog_encode() (call chains of code addresses of
 *              hot.elf, PMC ids from a small set, strings with XML's
 *              special characters), anywhere
 *   delete, duplicate, swap records; cut the last record short
 *   type       another type: a real one, 0, 4, 21 or any byte
 *   length     a header length that lies (too short, too long, not a
 *              multiple of 4, the type's size, over 4128), or the record
 *              resized to a new length, its header saying so or not
 *   tsc        the timestamp: 0, all ones, another record's, random
 *   string     a name or path with or without its NUL; a path grown to
 *              1024 bytes and beyond
 *   npc        a CALLCHAIN resized to 0 .. 513 addresses (4 bytes more
 *              at times), the new ones copied from the chain or new
 *   word       a 32-bit field: a value of the same field of another
 *              record (so PMC ids agree) or an interesting one
 *   magic      the header's magic byte; INITIALIZE's version
 *   options    the option bytes
 *   bytes      libFuzzer's own mutation (LLVMFuzzerMutate) on one record
 *              or, one time in six, on the whole input
 *
 * replay.c's stub LLVMFuzzerMutate() lets this link without libFuzzer.
 */
#include <endian.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

#include <vpmu/hwpmc.h>
#include <vpmu/pmclog.h>

#include "pmclog_mutate.h"

size_t LLVMFuzzerMutate(uint8_t *data, size_t size, size_t max);

#define MAXREC		1024	/* records parsed; the bytes after them are one more */
#define NOPS		4	/* at most this many mutations per call */
#define PREFIX_MAX	16
#define SLACK		(2 * VPMU_PMCLOG_MAX_RECORD + 256)	/* arena bytes per mutation */

/* hot.elf's code (examples/guests/hot.elf): [CODE_LO, CODE_LO + CODE_LEN). */
#define CODE_LO		0x100000u
#define CODE_LEN	0x3b93u

/* The fixed part of each type (pmclog.c's layouts[]); 0: no such type. */
static const uint16_t type_size[] = {
	0, 16, 16, 112, 0, 40, 24, 24, 40, 40, 32, 24, 24, 24, 32, 40, 32, 96, 52, 24, 44
};
#define NTYPES	(sizeof(type_size) / sizeof(type_size[0]))

/* The string fields: offset and size in the record (size 0: to its end). */
static const struct {
	uint8_t	 type;
	uint16_t off, size;
} strfields[] = {
	{ VPMU_PMCLOG_INITIALIZE, 48, 64 }, { VPMU_PMCLOG_PMCALLOCATEDYN, 32, 64 },
	{ VPMU_PMCLOG_THR_CREATE, 32, 20 }, { VPMU_PMCLOG_PROC_CREATE, 24, 20 },
	{ VPMU_PMCLOG_MAP_IN, 32, 0 }, { VPMU_PMCLOG_PMCATTACH, 24, 0 },
	{ VPMU_PMCLOG_PROCEXEC, 40, 0 },
};

static const uint64_t interesting[] = {
	0, 1, 2, 3, 4, 0x7f, 0x80, 0xff, 0x100, 0x101, 0x102, 0x1ff, 0xffff,
	0x10000, 0x10001, 0x7fffffff, 0x80000000, 0xfffffffe, 0xffffffff,
	VPMU_PMC_VERSION, VPMU_F_CALLCHAIN, CODE_LO, CODE_LO + 1, CODE_LO + CODE_LEN,
	UINT64_C(0x100000000), UINT64_C(0x7fffffffffffffff), UINT64_C(0x8000000000000000),
	UINT64_MAX,
};

static const uint32_t pmcids[] = { 0x100, 0x101, 0x102, 0, 0xffffffff };

/* ---- randomness: splitmix64 from the seed libFuzzer gives ------------------------ */

struct rng {
	uint64_t s;
};

static uint64_t
rnd(struct rng *g)
{
	uint64_t z = (g->s += UINT64_C(0x9e3779b97f4a7c15));

	z = (z ^ (z >> 30)) * UINT64_C(0xbf58476d1ce4e5b9);
	z = (z ^ (z >> 27)) * UINT64_C(0x94d049bb133111eb);
	return (z ^ (z >> 31));
}

/* 0 .. n-1 (0 for n 0). */
static size_t
below(struct rng *g, size_t n)
{
	return (n != 0 ? (size_t)(rnd(g) % n) : 0);
}

static uint64_t
some_value(struct rng *g)
{
	switch (below(g, 4)) {
	case 0:
		return (rnd(g));
	case 1:
		return (below(g, 16));
	default:
		return (interesting[below(g, sizeof(interesting) / sizeof(interesting[0]))]);
	}
}

/* ---- the records of an input ------------------------------------------------------- */

struct rec {
	unsigned char *p;
	size_t	 len;
};

static struct rec recs[MAXREC + NOPS + 1];
static size_t nrecs;
static unsigned char *arena;
static size_t arena_cap, arena_used;

static uint32_t
get32(const unsigned char *p)
{
	uint32_t v;

	memcpy(&v, p, 4);
	return (le32toh(v));
}

static void
put32(unsigned char *p, uint32_t v)
{
	v = htole32(v);
	memcpy(p, &v, 4);
}

/* Cut log[0 .. size) into at most max records, in r; how many. */
static size_t
split(unsigned char *log, size_t size, struct rec *r, size_t max)
{
	size_t n = 0, pos = 0, len, hl;

	while (pos < size && n < max) {
		len = size - pos;
		if (len >= 4 && n + 1 < max) {
			hl = VPMU_PMCLOG_HEADER_LENGTH(get32(log + pos));
			if (hl >= 4 && hl <= len)
				len = hl;
		}
		r[n].p = log + pos;
		r[n].len = len;
		n++;
		pos += len;
	}
	return (n);
}

/* n bytes of the arena, or NULL when it is used up. */
static unsigned char *
arena_get(size_t n)
{
	unsigned char *p;

	if (arena_cap - arena_used < n)
		return (NULL);
	p = arena + arena_used;
	arena_used += n;
	return (p);
}

/*
 * Record i copied into the arena at length len (its bytes, then zeros or
 * random bytes), ready to be written; false when there is no room.
 */
static bool
own(struct rng *g, size_t i, size_t len)
{
	unsigned char *p;
	size_t n = recs[i].len < len ? recs[i].len : len, k;

	if ((p = arena_get(len)) == NULL)
		return (false);
	memcpy(p, recs[i].p, n);
	if (below(g, 4) == 0)
		for (k = n; k < len; k++)
			p[k] = (unsigned char)rnd(g);
	else
		memset(p + n, 0, len - n);
	recs[i].p = p;
	recs[i].len = len;
	return (true);
}

static void
set_len(struct rec *r, uint32_t len)
{
	if (r->len >= 4)
		put32(r->p, (get32(r->p) & 0xFFFF0000u) | (len & 0xFFFF));
}

static unsigned
type_of(const struct rec *r)
{
	return (r->len >= 4 ? r->p[2] : 0);
}

/* A record of type type, from index start on (wrapping); nrecs if none. */
static size_t
find_type(struct rng *g, unsigned type)
{
	size_t i, start = below(g, nrecs);

	for (i = 0; i < nrecs; i++)
		if (type_of(&recs[(start + i) % nrecs]) == type)
			return ((start + i) % nrecs);
	return (nrecs);
}

static bool
insert_at(size_t i, unsigned char *p, size_t len)
{
	if (nrecs == sizeof(recs) / sizeof(recs[0]))
		return (false);
	memmove(&recs[i + 1], &recs[i], (nrecs - i) * sizeof(recs[0]));
	recs[i].p = p;
	recs[i].len = len;
	nrecs++;
	return (true);
}

/* ---- new records ------------------------------------------------------------------- */

static void
rand_string(struct rng *g, char *s, size_t size)
{
	static const char chars[] = "abcdefghijklmnopqrstuvwxyz_0123456789 ;<>&\"'/.-+\t\x7f"
	    "\x01\xc3\xa9\xff";
	size_t i, n = below(g, 4) != 0 ? below(g, size < 16 ? size : 16) : below(g, size);

	for (i = 0; i < n; i++)
		s[i] = chars[below(g, sizeof(chars) - 1)];
	s[n] = '\0';
}

static uint64_t
rand_pc(struct rng *g, const uint64_t *chain, size_t n)
{
	switch (below(g, 6)) {
	case 0:
		if (n != 0)
			return (chain[below(g, n)]);	/* recursion */
		/* FALLTHROUGH */
	case 1:
		return (some_value(g));
	default:
		return (CODE_LO + below(g, CODE_LEN));
	}
}

/* A record of a random type with random fields into buf; its length or 0. */
static size_t
gen_record(struct rng *g, unsigned char *buf)
{
	static struct vpmu_pmclog_ev ev;
	static const uint8_t types[] = { 1, 2, 3, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15,
	    16, 17, 18, 19, 20 };
	uint64_t v;
	size_t i, k;

	memset(&ev, 0, sizeof(ev));
	switch (below(g, 10)) {
	case 0: case 1: case 2: case 3:
		ev.type = VPMU_PMCLOG_CALLCHAIN;
		break;
	case 4:
		ev.type = VPMU_PMCLOG_PMCALLOCATEDYN;
		break;
	case 5:
		ev.type = VPMU_PMCLOG_PMCALLOCATE;
		break;
	default:
		ev.type = types[below(g, sizeof(types))];
	}
	ev.tsc = below(g, 4) != 0 ? below(g, 1u << 20) : rnd(g);
	for (i = 0; i < 64; i += 8) {
		v = some_value(g);
		memcpy((unsigned char *)&ev.u + i, &v, 8);
	}
	switch (ev.type) {
	case VPMU_PMCLOG_CALLCHAIN:
		ev.u.callchain.pmcid = pmcids[below(g, sizeof(pmcids) / sizeof(pmcids[0]))];
		ev.u.callchain.cpuflags = below(g, 4) != 0 ?
		    VPMU_PMCLOG_CPUFLAGS(below(g, 4), below(g, 2)) : (uint32_t)rnd(g);
		switch (below(g, 8)) {
		case 0:
			k = below(g, VPMU_PMCLOG_CALLCHAIN_MAX + 1);
			break;
		case 1:
			k = 0;
			break;
		default:
			k = 1 + below(g, 8);
		}
		ev.u.callchain.npc = (uint32_t)k;
		for (i = 0; i < k; i++)
			ev.u.callchain.pc[i] = rand_pc(g, ev.u.callchain.pc, i);
		break;
	case VPMU_PMCLOG_PMCALLOCATE:
		ev.u.pmcallocate.pmcid = pmcids[below(g, sizeof(pmcids) / sizeof(pmcids[0]))];
		if (below(g, 2) != 0)
			ev.u.pmcallocate.flags = VPMU_F_CALLCHAIN;
		break;
	case VPMU_PMCLOG_PMCALLOCATEDYN:
		ev.u.pmcallocatedyn.pmcid = pmcids[below(g, sizeof(pmcids) / sizeof(pmcids[0]))];
		if (below(g, 2) != 0)
			ev.u.pmcallocatedyn.flags = VPMU_F_CALLCHAIN;
		rand_string(g, ev.u.pmcallocatedyn.evname, sizeof(ev.u.pmcallocatedyn.evname));
		break;
	case VPMU_PMCLOG_INITIALIZE:
		if (below(g, 2) != 0)
			ev.u.initialize.version = VPMU_PMC_VERSION;
		rand_string(g, ev.u.initialize.cpuid, sizeof(ev.u.initialize.cpuid));
		break;
	case VPMU_PMCLOG_THR_CREATE:
		rand_string(g, ev.u.thr_create.tdname, sizeof(ev.u.thr_create.tdname));
		break;
	case VPMU_PMCLOG_PROC_CREATE:
		rand_string(g, ev.u.proc_create.pcomm, sizeof(ev.u.proc_create.pcomm));
		break;
	case VPMU_PMCLOG_MAP_IN:
		rand_string(g, ev.u.map_in.path, VPMU_PMCLOG_PATH_MAX);
		break;
	case VPMU_PMCLOG_PMCATTACH:
		rand_string(g, ev.u.pmcattach.path, VPMU_PMCLOG_PATH_MAX);
		break;
	case VPMU_PMCLOG_PROCEXEC:
		rand_string(g, ev.u.procexec.path, VPMU_PMCLOG_PATH_MAX);
		break;
	}
	return (vpmu_pmclog_encode(&ev, buf, VPMU_PMCLOG_MAX_RECORD, &i) == 0 ? i : 0);
}

/* ---- one mutation ------------------------------------------------------------------- */

/* A length for a record of type type now len bytes long. */
static uint32_t
rand_len(struct rng *g, unsigned type, size_t len)
{
	uint32_t sz = type < NTYPES ? type_size[type] : 16;

	switch (below(g, 10)) {
	case 0:
		return (sz);
	case 1:
		return (sz + 4);
	case 2:
		return (sz >= 4 ? sz - 4 : 0);
	case 3:
		return ((uint32_t)len + 1 + (uint32_t)below(g, 3));	/* not a multiple of 4 */
	case 4:
		return (len > 3 ? (uint32_t)len - 1 - (uint32_t)below(g, 3) : 1);
	case 5:
		return ((uint32_t)below(g, 17));			/* shorter than the header */
	case 6:
		return (VPMU_PMCLOG_MAX_RECORD + 4 * (uint32_t)below(g, 2));
	case 7:
		return (0xFFFF - (uint32_t)below(g, 4));
	case 8:
		return (4 * (uint32_t)below(g, VPMU_PMCLOG_MAX_RECORD / 4 + 2));
	default:
		return ((uint32_t)len + 4 * (uint32_t)below(g, 4) - 8);
	}
}

static void
mutate_string(struct rng *g, size_t i)
{
	size_t f, j, off, end, len, n;

	f = below(g, sizeof(strfields) / sizeof(strfields[0]));
	if ((i = find_type(g, strfields[f].type)) == nrecs)
		return;
	off = strfields[f].off;
	len = recs[i].len;
	if (strfields[f].size == 0 && below(g, 3) == 0) {
		/* A path of a new length, the header saying so (mostly). */
		switch (below(g, 4)) {
		case 0:
			n = VPMU_PMCLOG_PATH_MAX;
			break;
		case 1:
			n = VPMU_PMCLOG_PATH_MAX + 4;
			break;
		case 2:
			n = 4 * below(g, 3);
			break;
		default:
			n = below(g, VPMU_PMCLOG_PATH_MAX + 8);
		}
		if (!own(g, i, off + n))
			return;
		memset(recs[i].p + off, 'p', n);
		if (n != 0 && below(g, 2) != 0)
			recs[i].p[off + below(g, n)] = '\0';
		if (below(g, 6) != 0)
			set_len(&recs[i], (uint32_t)(off + n));
		return;
	}
	if (!own(g, i, len > off ? len : off + 4))
		return;
	end = strfields[f].size != 0 ? off + strfields[f].size : recs[i].len;
	if (end > recs[i].len)
		end = recs[i].len;
	if (end <= off)
		return;
	switch (below(g, 3)) {
	case 0:		/* no NUL */
		for (j = off; j < end; j++)
			recs[i].p[j] = (unsigned char)('A' + below(g, 26));
		break;
	case 1:		/* a NUL somewhere */
		recs[i].p[off + below(g, end - off)] = '\0';
		break;
	default:	/* one byte */
		recs[i].p[off + below(g, end - off)] = (unsigned char)rnd(g);
	}
}

static void
mutate_npc(struct rng *g, size_t i)
{
	size_t k, j, n, old;
	uint64_t pc;

	if ((i = find_type(g, VPMU_PMCLOG_CALLCHAIN)) == nrecs)
		return;
	switch (below(g, 6)) {
	case 0:
		k = 0;
		break;
	case 1:
		k = VPMU_PMCLOG_CALLCHAIN_MAX + below(g, 2);
		break;
	case 2:
		k = below(g, VPMU_PMCLOG_CALLCHAIN_MAX);
		break;
	default:
		k = 1 + below(g, 12);
	}
	n = 32 + 8 * k + (below(g, 8) == 0 ? 4 : 0);
	old = recs[i].len >= 32 ? (recs[i].len - 32) / 8 : 0;
	if (!own(g, i, n))
		return;
	for (j = old; j < k; j++) {
		if (j != 0 && below(g, 3) == 0)
			memcpy(&pc, recs[i].p + 32 + 8 * below(g, j), 8);
		else
			pc = htole64(rand_pc(g, NULL, 0));
		memcpy(recs[i].p + 32 + 8 * j, &pc, 8);
	}
	if (below(g, 8) != 0)
		set_len(&recs[i], (uint32_t)n);
}

/* A 32-bit field of record i: another record's, or an interesting value. */
static void
mutate_word(struct rng *g, size_t i)
{
	size_t off, j;
	uint32_t v;

	if (recs[i].len < 20 || !own(g, i, recs[i].len))
		return;
	off = 16 + 4 * below(g, (recs[i].len - 16) / 4);
	j = below(g, nrecs);
	if (below(g, 2) != 0 && recs[j].len >= off + 4)
		v = get32(recs[j].p + off);
	else if (below(g, 2) != 0)
		v = pmcids[below(g, sizeof(pmcids) / sizeof(pmcids[0]))];
	else
		v = (uint32_t)some_value(g);
	put32(recs[i].p + off, v);
}

static void
mutate_one(struct rng *g, unsigned char *pfx, size_t prefix, size_t max)
{
	unsigned char *p;
	size_t i, j, n;
	uint64_t v;
	struct rec t;

	i = below(g, nrecs);
	switch (below(g, 16)) {
	case 0: case 1: case 2:		/* insert a new record */
		if ((p = arena_get(VPMU_PMCLOG_MAX_RECORD)) != NULL &&
		    (n = gen_record(g, p)) != 0)
			(void)insert_at(below(g, nrecs + 1), p, n);
		break;
	case 3:				/* delete */
		if (nrecs != 0) {
			memmove(&recs[i], &recs[i + 1], (nrecs - i - 1) * sizeof(recs[0]));
			nrecs--;
		}
		break;
	case 4:				/* duplicate */
		if (nrecs != 0)
			(void)insert_at(below(g, nrecs + 1), recs[i].p, recs[i].len);
		break;
	case 5:				/* swap */
		if (nrecs != 0) {
			j = below(g, nrecs);
			t = recs[i];
			recs[i] = recs[j];
			recs[j] = t;
		}
		break;
	case 6:				/* type */
		if (nrecs != 0 && recs[i].len >= 4 && own(g, i, recs[i].len))
			recs[i].p[2] = below(g, 4) != 0 ? (unsigned char)(1 + below(g, 20)) :
			    below(g, 2) != 0 ? (unsigned char)"\0\4\25"[below(g, 3)] :
			    (unsigned char)rnd(g);
		break;
	case 7:				/* a length that lies */
		if (nrecs != 0 && recs[i].len >= 4 && own(g, i, recs[i].len))
			set_len(&recs[i], rand_len(g, type_of(&recs[i]), recs[i].len));
		break;
	case 8:				/* a new length */
		if (nrecs != 0 && recs[i].len >= 4) {
			n = rand_len(g, type_of(&recs[i]), recs[i].len);
			if (n < 4 || n > VPMU_PMCLOG_MAX_RECORD + 8)
				n = 4 + below(g, VPMU_PMCLOG_MAX_RECORD + 4);
			if (own(g, i, n) && below(g, 6) != 0)
				set_len(&recs[i], (uint32_t)n);
		}
		break;
	case 9:				/* tsc */
		if (nrecs != 0 && recs[i].len >= 16 && own(g, i, recs[i].len)) {
			j = below(g, nrecs);
			if (below(g, 2) != 0 && recs[j].len >= 16)
				memcpy(recs[i].p + 8, recs[j].p + 8, 8);
			else {
				v = htole64(some_value(g));
				memcpy(recs[i].p + 8, &v, 8);
			}
		}
		break;
	case 10:
		if (nrecs != 0)
			mutate_string(g, i);
		break;
	case 11:
		if (nrecs != 0)
			mutate_npc(g, i);
		break;
	case 12:
		if (nrecs != 0)
			mutate_word(g, i);
		break;
	case 13:			/* magic, or INITIALIZE's version */
		if (nrecs == 0)
			break;
		if (below(g, 2) != 0 && (j = find_type(g, VPMU_PMCLOG_INITIALIZE)) != nrecs &&
		    recs[j].len >= 20 && own(g, j, recs[j].len))
			put32(recs[j].p + 16, (uint32_t)some_value(g));
		else if (recs[i].len >= 4 && own(g, i, recs[i].len))
			recs[i].p[3] = below(g, 2) != 0 ? (unsigned char)rnd(g) :
			    (unsigned char)(VPMU_PMCLOG_MAGIC ^ (1u << below(g, 8)));
		break;
	case 14:			/* cut the last record (or one) short */
		if (nrecs != 0) {
			j = below(g, 3) != 0 ? nrecs - 1 : i;
			recs[j].len = below(g, recs[j].len);
			nrecs = j + 1;
		}
		break;
	default:			/* the option bytes; or bytes of one record */
		if (prefix != 0 && (nrecs == 0 || below(g, 2) != 0))
			pfx[below(g, prefix)] = (unsigned char)rnd(g);
		else if (nrecs != 0) {
			n = recs[i].len;
			if (own(g, i, n + 64)) {
				n = LLVMFuzzerMutate(recs[i].p, n, n + 64 < max ? n + 64 : n);
				recs[i].len = n;
			}
		}
	}
}

/* pfx, then the records, into out (max bytes); the size. */
static size_t
join(uint8_t *out, size_t max, const unsigned char *pfx, size_t prefix)
{
	size_t i, n, used = prefix < max ? prefix : max;

	memcpy(out, pfx, used);
	for (i = 0; i < nrecs && used < max; i++) {
		n = recs[i].len < max - used ? recs[i].len : max - used;
		memcpy(out + used, recs[i].p, n);
		used += n;
	}
	return (used);
}

/* The arena for an input of size bytes: its copy and SLACK per mutation. */
static bool
arena_reset(size_t size)
{
	size_t need = 2 * size + (NOPS + 1) * SLACK;
	unsigned char *p;

	if (arena_cap < need) {
		if ((p = realloc(arena, need)) == NULL)
			return (false);
		arena = p;
		arena_cap = need;
	}
	arena_used = 0;
	return (true);
}

/* The option bytes of data (random ones where it is shorter). */
static void
get_prefix(struct rng *g, const uint8_t *data, size_t size, unsigned char *pfx,
    size_t prefix)
{
	size_t i;

	for (i = 0; i < prefix; i++)
		pfx[i] = i < size ? data[i] : (unsigned char)rnd(g);
}

size_t
pmclog_mutate(uint8_t *data, size_t size, size_t max, size_t prefix, unsigned int seed)
{
	struct rng g = { .s = seed };
	unsigned char pfx[PREFIX_MAX], *copy;
	size_t k, nops, logsize;

	if (prefix > PREFIX_MAX || max < prefix || below(&g, 6) == 0 || !arena_reset(size))
		return (LLVMFuzzerMutate(data, size, max));
	get_prefix(&g, data, size, pfx, prefix);
	logsize = size > prefix ? size - prefix : 0;
	copy = arena_get(logsize);
	if (logsize != 0)
		memcpy(copy, data + prefix, logsize);
	nrecs = split(copy, logsize, recs, MAXREC);
	nops = 1 + below(&g, NOPS);
	for (k = 0; k < nops; k++)
		mutate_one(&g, pfx, prefix, max);
	return (join(data, max, pfx, prefix));
}

size_t
pmclog_crossover(const uint8_t *d1, size_t s1, const uint8_t *d2, size_t s2, uint8_t *out,
    size_t max, size_t prefix, unsigned int seed)
{
	static struct rec r2[MAXREC];
	struct rng g = { .s = seed };
	unsigned char pfx[PREFIX_MAX], *c1, *c2;
	size_t l1, l2, n1, n2, a, b;

	if (prefix > PREFIX_MAX || max < prefix || !arena_reset(s1 + s2))
		return (0);
	get_prefix(&g, d1, s1, pfx, prefix);
	l1 = s1 > prefix ? s1 - prefix : 0;
	l2 = s2 > prefix ? s2 - prefix : 0;
	c1 = arena_get(l1);
	c2 = arena_get(l2);
	if (l1 != 0)
		memcpy(c1, d1 + prefix, l1);
	if (l2 != 0)
		memcpy(c2, d2 + prefix, l2);
	n1 = split(c1, l1, recs, MAXREC);
	n2 = split(c2, l2, r2, MAXREC);
	/* The first a records of one, then the records of the other from b. */
	a = below(&g, n1 + 1);
	b = below(&g, n2 + 1);
	if (n2 - b > MAXREC - a)
		b = n2 - (MAXREC - a);
	memcpy(&recs[a], &r2[b], (n2 - b) * sizeof(recs[0]));
	nrecs = a + n2 - b;
	return (join(out, max, pfx, prefix));
}
