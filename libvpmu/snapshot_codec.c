/*
 * snapshot_codec.c -- the snapshot blob's codec: CRC-32, and little-endian
 * integers, strings, credentials and event specs written and read with
 * bounds checks (the layout: snapshot_int.h).
 */
#include <pthread.h>
#include <string.h>

#include "snapshot_int.h"

const enum vpmu_tunable_id vpmu__snap_rw_tunables[3] = {
	VPMU_T_MINCOUNT, VPMU_T_UNPRIVILEGED_SYSPMCS, VPMU_T_UNPRIVILEGED_PROC_DEBUG
};

/* ---- CRC-32 (IEEE 802.3, reflected, as zlib's) ------------------------------ */

static uint32_t crc_tab[256];
static pthread_once_t crc_once = PTHREAD_ONCE_INIT;

static void
crc_init(void)
{
	uint32_t c;
	unsigned i, k;

	for (i = 0; i < 256; i++) {
		for (c = i, k = 0; k < 8; k++)
			c = (c >> 1) ^ (0xEDB88320u & (0u - (c & 1u)));
		crc_tab[i] = c;
	}
}

uint32_t
vpmu_crc32(uint32_t crc, const void *buf, size_t n)
{
	const uint8_t *p = buf;

	pthread_once(&crc_once, crc_init);
	crc = ~crc;
	while (n-- > 0)
		crc = crc_tab[(crc ^ *p++) & 0xFF] ^ (crc >> 8);
	return (~crc);
}

/* ---- writing ---------------------------------------------------------------- */


void
vpmu__w_u8(struct wr *w, uint8_t v)
{
	if (w->b != NULL && w->off < w->cap)
		w->b[w->off] = v;
	w->off++;
}

void
vpmu__w_u16(struct wr *w, uint16_t v)
{
	vpmu__w_u8(w, (uint8_t)v);
	vpmu__w_u8(w, (uint8_t)(v >> 8));
}

void
vpmu__w_u32(struct wr *w, uint32_t v)
{
	vpmu__w_u16(w, (uint16_t)v);
	vpmu__w_u16(w, (uint16_t)(v >> 16));
}

void
vpmu__w_u64(struct wr *w, uint64_t v)
{
	vpmu__w_u32(w, (uint32_t)v);
	vpmu__w_u32(w, (uint32_t)(v >> 32));
}

void
vpmu__w_bytes(struct wr *w, const void *p, size_t n)
{
	const uint8_t *s = p;
	size_t i;

	for (i = 0; i < n; i++)
		vpmu__w_u8(w, s[i]);
}

void
vpmu__w_str(struct wr *w, const char *s)
{
	size_t n;

	if (s == NULL) {
		vpmu__w_u32(w, NO_STRING);
		return;
	}
	n = strnlen(s, PATH_MAX_LEN);
	vpmu__w_u32(w, (uint32_t)n);
	vpmu__w_bytes(w, s, n);
}

void
vpmu__w_cred(struct wr *w, const struct vpmu_cred *c)
{
	vpmu__w_u32(w, (uint32_t)c->pid);
	vpmu__w_u32(w, (uint32_t)c->tid);
	vpmu__w_u32(w, c->uid);
	vpmu__w_u8(w, c->privileged);
	vpmu__w_u8(w, c->jailed);
}

void
vpmu__w_spec(struct wr *w, const struct vpmu_event_spec *s)
{
	vpmu__w_u32(w, s->event);
	vpmu__w_u32(w, s->flags);
	vpmu__w_u32(w, s->cmask);
	vpmu__w_u64(w, s->raw);
}

/* ---- reading ----------------------------------------------------------------- */


uint8_t
vpmu__r_u8(struct rd *r)
{
	if (r->bad || r->off >= r->len) {
		r->bad = true;
		return (0);
	}
	return (r->b[r->off++]);
}

uint16_t
vpmu__r_u16(struct rd *r)
{
	uint16_t v = vpmu__r_u8(r);

	return ((uint16_t)(v | (uint16_t)vpmu__r_u8(r) << 8));
}

uint32_t
vpmu__r_u32(struct rd *r)
{
	uint32_t v = vpmu__r_u16(r);

	return (v | (uint32_t)vpmu__r_u16(r) << 16);
}

uint64_t
vpmu__r_u64(struct rd *r)
{
	uint64_t v = vpmu__r_u32(r);

	return (v | (uint64_t)vpmu__r_u32(r) << 32);
}

bool
vpmu__r_bool(struct rd *r)
{
	uint8_t v = vpmu__r_u8(r);

	if (v > 1)
		r->bad = true;
	return (v == 1);
}

/* A count of records of at least min bytes each: never more than the rest holds. */
uint32_t
vpmu__r_count(struct rd *r, size_t min)
{
	uint32_t n = vpmu__r_u32(r);

	if (!r->bad && (size_t)n > (r->len - r->off) / min)
		r->bad = true;
	return (r->bad ? 0 : n);
}

char *
vpmu__r_str(struct rd *r, bool *nomem)
{
	uint32_t n = vpmu__r_u32(r);
	char *s;

	if (r->bad || n == NO_STRING)
		return (NULL);
	if (n > PATH_MAX_LEN || n > r->len - r->off || memchr(r->b + r->off, '\0', n) != NULL) {
		r->bad = true;
		return (NULL);
	}
	if ((s = malloc((size_t)n + 1)) == NULL) {
		*nomem = true;
		r->bad = true;
		return (NULL);
	}
	memcpy(s, r->b + r->off, n);
	s[n] = '\0';
	r->off += n;
	return (s);
}

void
vpmu__r_cred(struct rd *r, struct vpmu_cred *c)
{
	memset(c, 0, sizeof(*c));
	c->pid = (int32_t)vpmu__r_u32(r);
	c->tid = (int32_t)vpmu__r_u32(r);
	c->uid = vpmu__r_u32(r);
	c->privileged = vpmu__r_bool(r);
	c->jailed = vpmu__r_bool(r);
}

void
vpmu__r_spec(struct rd *r, struct vpmu_event_spec *s)
{
	memset(s, 0, sizeof(*s));
	s->event = vpmu__r_u32(r);
	s->flags = vpmu__r_u32(r);
	s->cmask = vpmu__r_u32(r);
	s->raw = vpmu__r_u64(r);
}

void
vpmu__r_tag(struct rd *r, uint32_t tag)
{
	if (vpmu__r_u32(r) != tag)
		r->bad = true;
}
