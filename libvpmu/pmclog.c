/*
 * pmclog.c -- FreeBSD's modern hwpmc log format (pmclog(5)): the encoder
 * the log writer (log.c) calls, and the reader, pmclog(3)'s role.
 *
 * Written from the format's description (hwpmc_spec.md §2-3), not from
 * FreeBSD's code.  Each record type's layout is one row of layouts[]
 * below; the encoder and the decoder both walk that row, so the offsets
 * are written down once.
 *
 * The reader holds the bytes it has not returned yet in one buffer: a
 * record split across feeds (or reads) simply waits there for the rest.
 * A record is decoded in place, once all of it is held, and nothing is
 * read beyond the bytes held.
 *
 * Encoder and reader stay in one file (about 560 lines) because both are
 * driven by layouts[]; split, the table would need a private header.
 */
#include <endian.h>
#include <errno.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <vpmu/pmclog.h>

#define NTYPES		21		/* types 0 .. PROC_CREATE */
#define FD_BUFSIZE	(256 * 1024)	/* read() size of an fd reader (FreeBSD: 512 KB) */
#define FEED_BUFSIZE	(64 * 1024)	/* first buffer of a buffer reader */

/* ---- the layouts ---------------------------------------------------------- */

/* What a field holds. */
enum {
	F_END = 0,
	F_U32,		/* 32-bit word */
	F_U64,		/* 64-bit word (int64_t too) */
	F_NAME,		/* fixed-size string field, NUL inside */
	F_PATH,		/* string to the record's end, NUL inside, < PATH_MAX */
	F_PCS		/* CALLCHAIN's addresses to the record's end */
};

struct field {
	uint8_t	 kind;
	uint16_t roff;		/* offset in the record */
	uint16_t eoff;		/* offset in struct vpmu_pmclog_ev */
	uint16_t size;		/* F_NAME: the field's size */
};

/*
 * One record type.  A fixed-size record is exactly size bytes; a record
 * with a tail (F_PATH, F_PCS, always last) has size bytes before it.
 * Bytes no field covers (the spare header word, pads) are zero when
 * encoded and ignored when decoded.
 */
struct layout {
	const char *name;
	uint16_t size;
	uint8_t	 tail;		/* 0, F_PATH or F_PCS */
	struct field f[7];
};

#define EV(m)		((uint16_t)offsetof(struct vpmu_pmclog_ev, u.m))
#define U32(ro, m)	{ F_U32, ro, EV(m), 4 }
#define U64(ro, m)	{ F_U64, ro, EV(m), 8 }
#define NAME(ro, m)	{ F_NAME, ro, EV(m), sizeof(((struct vpmu_pmclog_ev *)0)->u.m) }
#define PATH(ro, m)	{ F_PATH, ro, EV(m), VPMU_PMCLOG_PATH_MAX }
#define PCS(ro)		{ F_PCS, ro, EV(callchain.pc), 8 }

/* Offsets from the record's start: 0 header word, 4 spare, 8 tsc. */
static const struct layout layouts[NTYPES] = {
	[VPMU_PMCLOG_CLOSELOG] = { "CLOSELOG", 16, 0, { { 0 } } },
	[VPMU_PMCLOG_DROPNOTIFY] = { "DROPNOTIFY", 16, 0, { { 0 } } },
	[VPMU_PMCLOG_INITIALIZE] = { "INITIALIZE", 112, 0, {
	    U32(16, initialize.version), U32(20, initialize.cputype),
	    U64(24, initialize.tsc_freq), U64(32, initialize.sec),
	    U64(40, initialize.nsec), NAME(48, initialize.cpuid) } },
	[VPMU_PMCLOG_PMCALLOCATE] = { "PMCALLOCATE", 40, 0, {
	    U32(16, pmcallocate.pmcid), U32(20, pmcallocate.event),
	    U32(24, pmcallocate.flags), U64(32, pmcallocate.rate) } },	/* 28: pad */
	[VPMU_PMCLOG_PMCATTACH] = { "PMCATTACH", 24, F_PATH, {
	    U32(16, pmcattach.pmcid), U32(20, pmcattach.pid),
	    PATH(24, pmcattach.path) } },
	[VPMU_PMCLOG_PMCDETACH] = { "PMCDETACH", 24, 0, {
	    U32(16, pmcdetach.pmcid), U32(20, pmcdetach.pid) } },
	[VPMU_PMCLOG_PROCCSW] = { "PROCCSW", 40, 0, {
	    U64(16, proccsw.value), U32(24, proccsw.pmcid),
	    U32(28, proccsw.pid), U32(32, proccsw.tid) } },		/* 36: pad */
	[VPMU_PMCLOG_PROCEXEC] = { "PROCEXEC", 40, F_PATH, {		/* main/14+ */
	    U32(16, procexec.pid), U32(20, procexec.pmcid),
	    U64(24, procexec.base), U64(32, procexec.dyn),
	    PATH(40, procexec.path) } },
	[VPMU_PMCLOG_PROCEXIT] = { "PROCEXIT", 32, 0, {
	    U32(16, procexit.pmcid), U32(20, procexit.pid),
	    U64(24, procexit.value) } },
	[VPMU_PMCLOG_PROCFORK] = { "PROCFORK", 24, 0, {
	    U32(16, procfork.oldpid), U32(20, procfork.newpid) } },
	[VPMU_PMCLOG_SYSEXIT] = { "SYSEXIT", 24, 0, {
	    U32(16, sysexit.pid) } },					/* 20: pad */
	[VPMU_PMCLOG_USERDATA] = { "USERDATA", 24, 0, {
	    U32(16, userdata.userdata) } },				/* 20: pad */
	[VPMU_PMCLOG_MAP_IN] = { "MAP_IN", 32, F_PATH, {
	    U32(16, map_in.pid), U64(24, map_in.start),		/* 20: pad */
	    PATH(32, map_in.path) } },
	[VPMU_PMCLOG_MAP_OUT] = { "MAP_OUT", 40, 0, {
	    U32(16, map_out.pid), U64(24, map_out.start),		/* 20: pad */
	    U64(32, map_out.end) } },
	[VPMU_PMCLOG_CALLCHAIN] = { "CALLCHAIN", 32, F_PCS, {
	    U32(16, callchain.pid), U32(20, callchain.tid),
	    U32(24, callchain.pmcid), U32(28, callchain.cpuflags),
	    PCS(32) } },
	/* The struct's layout (name at 32), not the kernel's emitter's. */
	[VPMU_PMCLOG_PMCALLOCATEDYN] = { "PMCALLOCATEDYN", 96, 0, {
	    U32(16, pmcallocatedyn.pmcid), U32(20, pmcallocatedyn.event),
	    U32(24, pmcallocatedyn.flags),				/* 28: pad */
	    NAME(32, pmcallocatedyn.evname) } },
	[VPMU_PMCLOG_THR_CREATE] = { "THR_CREATE", 52, 0, {
	    U32(16, thr_create.tid), U32(20, thr_create.pid),
	    U32(24, thr_create.flags),					/* 28: pad */
	    NAME(32, thr_create.tdname) } },
	[VPMU_PMCLOG_THR_EXIT] = { "THR_EXIT", 24, 0, {
	    U32(16, thr_exit.tid) } },					/* 20: pad */
	[VPMU_PMCLOG_PROC_CREATE] = { "PROC_CREATE", 44, 0, {
	    U32(16, proc_create.pid), U32(20, proc_create.flags),
	    NAME(24, proc_create.pcomm) } },
};

_Static_assert(VPMU_PMCLOG_PROC_CREATE + 1 == NTYPES, "layouts[] covers every type");
_Static_assert(32 + 8 * VPMU_PMCLOG_CALLCHAIN_MAX == VPMU_PMCLOG_MAX_RECORD,
    "the longest record is a full CALLCHAIN");
_Static_assert(40 + VPMU_PMCLOG_PATH_MAX <= VPMU_PMCLOG_MAX_RECORD,
    "a full path fits in a record");

static const struct layout *
layout_of(uint32_t type)
{
	if (type >= NTYPES || layouts[type].name == NULL)
		return (NULL);
	return (&layouts[type]);
}

const char *
vpmu_pmclog_type_name(uint32_t type)
{
	const struct layout *lo = layout_of(type);

	return (lo != NULL ? lo->name : NULL);
}

/* ---- little-endian access --------------------------------------------------- */

static inline uint32_t
get32(const unsigned char *p)
{
	uint32_t v;

	memcpy(&v, p, 4);
	return (le32toh(v));
}

static inline uint64_t
get64(const unsigned char *p)
{
	uint64_t v;

	memcpy(&v, p, 8);
	return (le64toh(v));
}

static inline void
put32(unsigned char *p, uint32_t v)
{
	v = htole32(v);
	memcpy(p, &v, 4);
}

static inline void
put64(unsigned char *p, uint64_t v)
{
	v = htole64(v);
	memcpy(p, &v, 8);
}

/* Copy n 64-bit words between the record's byte order and the host's. */
static inline void
copy64s(void *dst, const void *src, size_t n)
{
#if __BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__
	memcpy(dst, src, n * 8);
#else
	const unsigned char *s = src;
	unsigned char *d = dst;
	uint64_t v;
	size_t i;

	for (i = 0; i < n; i++) {
		memcpy(&v, s + 8 * i, 8);
		v = __builtin_bswap64(v);
		memcpy(d + 8 * i, &v, 8);
	}
#endif
}

/* ---- the encoder ------------------------------------------------------------ */


/* The tail field of a record with a tail: the last of its row. */
static const struct field *
tail_of(const struct layout *lo)
{
	const struct field *f = lo->f;

	while (f->kind != lo->tail)
		f++;
	return (f);
}

/* The record's length for ev, or 0 if ev cannot be encoded; *tlen: the tail's size. */
static size_t
record_len(const struct layout *lo, const struct vpmu_pmclog_ev *ev, size_t *tlen)
{
	size_t n;

	*tlen = 0;
	switch (lo->tail) {
	case F_PATH:
		n = strnlen((const char *)ev + tail_of(lo)->eoff, VPMU_PMCLOG_PATH_MAX);
		if (n >= VPMU_PMCLOG_PATH_MAX)
			return (0);		/* no NUL in the path's 1024 bytes */
		*tlen = n;
		return ((lo->size + n + 1 + 3) & ~(size_t)3);
	case F_PCS:
		if (ev->u.callchain.npc > VPMU_PMCLOG_CALLCHAIN_MAX)
			return (0);
		*tlen = ev->u.callchain.npc;
		return (lo->size + 8 * (size_t)ev->u.callchain.npc);
	default:
		return (lo->size);
	}
}

int
vpmu_pmclog_encoded_len(const struct vpmu_pmclog_ev *ev, size_t *len)
{
	const struct layout *lo;
	size_t tlen;

	if (len == NULL)
		return (EINVAL);
	*len = 0;
	if (ev == NULL || (lo = layout_of(ev->type)) == NULL)
		return (EINVAL);
	*len = record_len(lo, ev, &tlen);
	return (*len != 0 ? 0 : EINVAL);
}

int
vpmu_pmclog_encode(const struct vpmu_pmclog_ev *ev, void *buf, size_t cap, size_t *lenp)
{
	const struct layout *lo;
	const struct field *f;
	const unsigned char *src;
	unsigned char *p = buf;
	size_t len, tlen, n;
	uint64_t v64;
	uint32_t v32;

	if (lenp == NULL)
		return (EINVAL);
	*lenp = 0;
	if (ev == NULL || buf == NULL || (lo = layout_of(ev->type)) == NULL ||
	    (len = record_len(lo, ev, &tlen)) == 0)
		return (EINVAL);
	*lenp = len;
	if (len > cap)
		return (ENOSPC);
	memset(p, 0, lo->size);		/* spare word, pads, string fields */
	put32(p, VPMU_PMCLOG_HEADER_WORD(ev->type, len));
	put64(p + 8, ev->tsc);
	for (f = lo->f; f->kind != F_END; f++) {
		src = (const unsigned char *)ev + f->eoff;
		switch (f->kind) {
		case F_U32:
			memcpy(&v32, src, 4);
			put32(p + f->roff, v32);
			break;
		case F_U64:
			memcpy(&v64, src, 8);
			put64(p + f->roff, v64);
			break;
		case F_NAME:
			/* Cut to size - 1: the field keeps a NUL. */
			n = strnlen((const char *)src, f->size - 1u);
			memcpy(p + f->roff, src, n);
			break;
		case F_PATH:
			memcpy(p + f->roff, src, tlen);
			memset(p + f->roff + tlen, 0, len - f->roff - tlen);
			break;
		case F_PCS:
			copy64s(p + f->roff, src, tlen);
			break;
		}
	}
	return (0);
}

/* ---- the reader --------------------------------------------------------------- */

/*
 * A reader owns one buffer of held bytes, buf[head .. tail), the first
 * of which is at stream offset `offset`.  An fd reader refills it with
 * read(); a buffer reader appends what it is fed.  A record is returned
 * once all its bytes are held; until then they wait in the buffer, so
 * nothing but the buffer carries state between calls.
 */
struct vpmu_pmclog_reader {
	int	 fd;		/* -1 for a buffer reader */
	int	 error;		/* final: EBADMSG or EIO, every read returns it */
	bool	 closed;	/* the last record returned was CLOSELOG */
	unsigned char *buf;
	size_t	 cap;
	size_t	 head, tail;
	uint64_t offset;	/* stream offset of buf[head] */
	char	 why[160];	/* the error's reason */
};

static int
fail(struct vpmu_pmclog_reader *r, int error, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));

/* Enter the final error state (EBADMSG or EIO), saying why and where. */
static int
fail(struct vpmu_pmclog_reader *r, int error, const char *fmt, ...)
{
	va_list ap;
	int n;

	n = snprintf(r->why, sizeof(r->why), "offset %llu: ",
	    (unsigned long long)r->offset);
	va_start(ap, fmt);
	vsnprintf(r->why + n, sizeof(r->why) - (size_t)n, fmt, ap);
	va_end(ap);
	r->error = error;
	return (error);
}

/* Make n bytes held, reading the fd if there is one: 0, or what vpmu_pmclog_read() returns. */
static int
hold(struct vpmu_pmclog_reader *r, size_t n)
{
	ssize_t got;

	if (r->tail - r->head >= n)
		return (0);
	if (r->fd < 0)
		return (r->closed && r->tail == r->head ? ENODATA : EAGAIN);
	if (r->head > 0) {		/* under a record: a cheap move */
		memmove(r->buf, r->buf + r->head, r->tail - r->head);
		r->tail -= r->head;
		r->head = 0;
	}
	while (r->tail < n) {
		got = read(r->fd, r->buf + r->tail, r->cap - r->tail);
		if (got > 0)
			r->tail += (size_t)got;
		else if (got == 0)
			return (ENODATA);	/* a cut record is left unread */
		else if (errno == EINTR)
			continue;
		else if (errno == EAGAIN || errno == EWOULDBLOCK)
			return (EAGAIN);
		else
			return (fail(r, EIO, "read: %s", strerror(errno)));
	}
	return (0);
}

/* Check the header word h of a record at buf[head]. */
static int
check_header(struct vpmu_pmclog_reader *r, uint32_t h, const struct layout **lop)
{
	uint32_t type = VPMU_PMCLOG_HEADER_TYPE(h);
	uint32_t len = VPMU_PMCLOG_HEADER_LENGTH(h);
	const struct layout *lo;

	if (VPMU_PMCLOG_HEADER_MAGIC(h) != VPMU_PMCLOG_MAGIC)
		return (fail(r, EBADMSG, "bad magic 0x%02x (header word 0x%08x)",
		    VPMU_PMCLOG_HEADER_MAGIC(h), h));
	if ((lo = layout_of(type)) == NULL)
		return (fail(r, EBADMSG, "unknown record type %u", type));
	if (len < VPMU_PMCLOG_HEADER_SIZE)
		return (fail(r, EBADMSG, "%s: length %u is shorter than the header",
		    lo->name, len));
	if (len % 4 != 0)
		return (fail(r, EBADMSG, "%s: length %u is not a multiple of 4",
		    lo->name, len));
	if (len > VPMU_PMCLOG_MAX_RECORD)
		return (fail(r, EBADMSG, "%s: length %u is over %u", lo->name, len,
		    VPMU_PMCLOG_MAX_RECORD));
	if (lo->tail == 0 && len != lo->size)
		return (fail(r, EBADMSG, "%s: length %u, not %u", lo->name, len,
		    lo->size));
	if (lo->tail != 0 && len < lo->size)
		return (fail(r, EBADMSG, "%s: length %u is shorter than its fixed part (%u)",
		    lo->name, len, lo->size));
	if (lo->tail == F_PATH && len - lo->size > VPMU_PMCLOG_PATH_MAX)
		return (fail(r, EBADMSG, "%s: path field of %u bytes is over %u",
		    lo->name, len - lo->size, VPMU_PMCLOG_PATH_MAX));
	*lop = lo;
	return (0);
}

/* Decode the fields of a whole, checked record into ev. */
static int
decode(struct vpmu_pmclog_reader *r, const struct layout *lo,
    const unsigned char *rec, uint32_t len, struct vpmu_pmclog_ev *ev)
{
	const struct field *f;
	const unsigned char *nul;
	unsigned char *dst;
	uint64_t v64;
	uint32_t v32, npc;

	for (f = lo->f; f->kind != F_END; f++) {
		dst = (unsigned char *)ev + f->eoff;
		switch (f->kind) {
		case F_U32:
			v32 = get32(rec + f->roff);
			memcpy(dst, &v32, 4);
			break;
		case F_U64:
			v64 = get64(rec + f->roff);
			memcpy(dst, &v64, 8);
			break;
		case F_NAME:
		case F_PATH:
			nul = memchr(rec + f->roff, 0, f->kind == F_NAME ?
			    f->size : len - f->roff);
			if (nul == NULL)
				return (fail(r, EBADMSG, "%s: the string at offset %u has no NUL",
				    lo->name, f->roff));
			memcpy(dst, rec + f->roff, (size_t)(nul - rec) - f->roff + 1);
			break;
		case F_PCS:
			/* An odd word after the last address is ignored, as FreeBSD does. */
			npc = (len - f->roff) / 8;
			ev->u.callchain.npc = npc;
			copy64s(dst, rec + f->roff, npc);
			break;
		}
	}
	return (0);
}

int
vpmu_pmclog_read(vpmu_pmclog_reader *r, struct vpmu_pmclog_ev *ev)
{
	const struct layout *lo = NULL;
	const unsigned char *rec;
	uint32_t h, len;
	int error;

	if (r == NULL || ev == NULL)
		return (EINVAL);
	if (r->error != 0)
		return (r->error);
	if ((error = hold(r, 4)) != 0)
		return (error);
	h = get32(r->buf + r->head);
	if ((error = check_header(r, h, &lo)) != 0)
		return (error);
	len = VPMU_PMCLOG_HEADER_LENGTH(h);
	if ((error = hold(r, len)) != 0)
		return (error);
	rec = r->buf + r->head;
	if ((error = decode(r, lo, rec, len, ev)) != 0)
		return (error);
	ev->type = VPMU_PMCLOG_HEADER_TYPE(h);
	ev->len = len;
	ev->tsc = get64(rec + 8);
	ev->offset = r->offset;
	r->offset += len;
	r->head += len;
	if (r->head == r->tail)
		r->head = r->tail = 0;	/* empty: the next bytes go to the start */
	r->closed = ev->type == VPMU_PMCLOG_CLOSELOG;
	return (0);
}

static int
reader_new(int fd, size_t cap, vpmu_pmclog_reader **rp)
{
	vpmu_pmclog_reader *r;

	if (rp == NULL)
		return (EINVAL);
	*rp = NULL;
	if ((r = calloc(1, sizeof(*r))) == NULL)
		return (ENOMEM);
	if ((r->buf = malloc(cap)) == NULL) {
		free(r);
		return (ENOMEM);
	}
	r->fd = fd;
	r->cap = cap;
	*rp = r;
	return (0);
}

int
vpmu_pmclog_open_fd(int fd, vpmu_pmclog_reader **rp)
{
	if (fd < 0)
		return (EINVAL);
	return (reader_new(fd, FD_BUFSIZE, rp));
}

int
vpmu_pmclog_open_buffer(vpmu_pmclog_reader **rp)
{
	return (reader_new(-1, FEED_BUFSIZE, rp));
}

int
vpmu_pmclog_feed(vpmu_pmclog_reader *r, const void *data, size_t len)
{
	unsigned char *nb;
	size_t held, ncap;

	if (r == NULL || r->fd >= 0 || (data == NULL && len > 0))
		return (EINVAL);
	if (len == 0 || r->error != 0)
		return (0);		/* after an error nothing more is read */
	held = r->tail - r->head;
	if (r->cap - r->tail < len && r->head > 0) {
		memmove(r->buf, r->buf + r->head, held);
		r->tail = held;
		r->head = 0;
	}
	if (r->cap - r->tail < len) {
		if (len > SIZE_MAX / 2 - held)
			return (ENOMEM);
		ncap = r->cap * 2 > held + len ? r->cap * 2 : held + len;
		if ((nb = realloc(r->buf, ncap)) == NULL)
			return (ENOMEM);
		r->buf = nb;
		r->cap = ncap;
	}
	memcpy(r->buf + r->tail, data, len);
	r->tail += len;
	return (0);
}

const char *
vpmu_pmclog_error(const vpmu_pmclog_reader *r)
{
	if (r == NULL)
		return ("no reader");
	return (r->error ? r->why : "no error");
}

void
vpmu_pmclog_close(vpmu_pmclog_reader *r)
{
	if (r == NULL)
		return;
	free(r->buf);
	free(r);
}
