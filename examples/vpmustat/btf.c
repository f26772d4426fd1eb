/*
 * btf.c -- the byte offset of a struct's member from BTF (the BPF Type
 * Format a Linux kernel built with CONFIG_DEBUG_INFO_BTF carries between
 * __start_BTF and __stop_BTF, and /sys/kernel/btf/vmlinux gives).
 *
 * The data is a header, a type section and a string section.  Types are
 * numbered from 1 in the order they appear; each is a struct btf_type
 * followed by data whose size its kind and vlen give.  A member of a
 * struct or union has a bit offset (with kind_flag set, the low 24 bits;
 * the high 8 are a bit-field's width).  Members of an anonymous struct or
 * union member are found through it, their offsets added.  Everything is
 * bounds-checked: the data comes from a guest.
 */
#include <linux/btf.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "vpmustat.h"

/* Bytes after struct btf_type for a type of this kind and vlen; -1: unknown kind. */
static long
extra(uint32_t kind, uint32_t vlen)
{
	switch (kind) {
	case BTF_KIND_INT:
	case BTF_KIND_VAR:
	case BTF_KIND_DECL_TAG:
		return (4);
	case BTF_KIND_ARRAY:
		return (12);
	case BTF_KIND_STRUCT:
	case BTF_KIND_UNION:
	case BTF_KIND_DATASEC:
	case BTF_KIND_ENUM64:
		return (12l * vlen);
	case BTF_KIND_ENUM:
	case BTF_KIND_FUNC_PROTO:
		return (8l * vlen);
	case BTF_KIND_PTR:
	case BTF_KIND_FWD:
	case BTF_KIND_TYPEDEF:
	case BTF_KIND_VOLATILE:
	case BTF_KIND_CONST:
	case BTF_KIND_RESTRICT:
	case BTF_KIND_FUNC:
	case BTF_KIND_FLOAT:
	case BTF_KIND_TYPE_TAG:
		return (0);
	default:
		return (-1);
	}
}

void
vs_btf_free(struct vs_btf *b)
{
	free(b->off);
	memset(b, 0, sizeof(*b));
}

int
vs_btf_open(struct vs_btf *b, const void *data, size_t len, char *err, size_t errlen)
{
	struct btf_header h;
	const struct btf_type *t;
	size_t at, cap = 0;
	uint32_t *p;
	long x;

	memset(b, 0, sizeof(*b));
	if (len < sizeof(h)) {
		snprintf(err, errlen, "BTF: %zu bytes, shorter than its header", len);
		return (-1);
	}
	memcpy(&h, data, sizeof(h));
	if (h.magic != BTF_MAGIC || h.version != BTF_VERSION) {
		snprintf(err, errlen, "BTF: magic %#x version %u, not BTF version %u "
		    "(or another byte order)", h.magic, h.version, BTF_VERSION);
		return (-1);
	}
	if (h.hdr_len < sizeof(h) || h.hdr_len > len ||
	    (uint64_t)h.type_off + h.type_len > len - h.hdr_len ||
	    (uint64_t)h.str_off + h.str_len > len - h.hdr_len || h.str_len == 0 ||
	    h.hdr_len % 4 != 0 || h.type_off % 4 != 0 || h.type_len % 4 != 0) {
		snprintf(err, errlen, "BTF: its sections (types %u+%u, strings %u+%u) do "
		    "not fit its %zu bytes", h.type_off, h.type_len, h.str_off, h.str_len,
		    len);
		return (-1);
	}
	b->types = (const uint8_t *)data + h.hdr_len + h.type_off;
	b->tlen = h.type_len;
	b->strs = (const char *)data + h.hdr_len + h.str_off;
	b->slen = h.str_len;
	if (b->strs[b->slen - 1] != '\0') {
		snprintf(err, errlen, "BTF: its string section does not end in a NUL");
		return (-1);
	}
	/* The start of every type, by id - 1. */
	for (at = 0; at < b->tlen; at += sizeof(*t) + (size_t)x) {
		if (b->tlen - at < sizeof(*t)) {
			snprintf(err, errlen, "BTF: type %u cut short", b->n + 1);
			goto bad;
		}
		t = (const void *)(b->types + at);
		if ((x = extra(BTF_INFO_KIND(t->info), BTF_INFO_VLEN(t->info))) < 0 ||
		    (size_t)x > b->tlen - at - sizeof(*t)) {
			snprintf(err, errlen, "BTF: type %u: %s", b->n + 1, x < 0 ?
			    "a kind this reader does not know" : "cut short");
			goto bad;
		}
		if (b->n == cap) {
			cap = cap != 0 ? cap * 2 : 4096;
			if ((p = realloc(b->off, cap * sizeof(*p))) == NULL) {
				snprintf(err, errlen, "BTF: out of memory");
				goto bad;
			}
			b->off = p;
		}
		b->off[b->n++] = (uint32_t)at;
	}
	return (0);
bad:
	vs_btf_free(b);
	return (-1);
}

/* Type id's record, or NULL. */
static const struct btf_type *
type_of(const struct vs_btf *b, uint32_t id)
{
	return (id >= 1 && id <= b->n ? (const void *)(b->types + b->off[id - 1]) : NULL);
}

static const char *
name_of(const struct vs_btf *b, uint32_t off)
{
	return (off < b->slen ? b->strs + off : "");
}

static bool
is_aggregate(const struct btf_type *t)
{
	return (t != NULL && (BTF_INFO_KIND(t->info) == BTF_KIND_STRUCT ||
	    BTF_INFO_KIND(t->info) == BTF_KIND_UNION));
}

/* The bit offset of member in aggregate t (through anonymous members), or -1. */
static long
member_bits(const struct vs_btf *b, const struct btf_type *t, const char *member, unsigned depth)
{
	const struct btf_member *m = (const void *)(t + 1);
	uint32_t i, vlen = BTF_INFO_VLEN(t->info);
	long bits, in;

	if (depth > 8)
		return (-1);
	for (i = 0; i < vlen; i++) {
		bits = BTF_INFO_KFLAG(t->info) ? (long)BTF_MEMBER_BIT_OFFSET(m[i].offset) :
		    (long)m[i].offset;
		if (m[i].name_off != 0) {
			if (strcmp(name_of(b, m[i].name_off), member) == 0)
				return (bits);
		} else if (is_aggregate(type_of(b, m[i].type)) &&
		    (in = member_bits(b, type_of(b, m[i].type), member, depth + 1)) >= 0)
			return (bits + in);
	}
	return (-1);
}

long
vs_btf_member(const struct vs_btf *b, const char *sname, const char *member)
{
	const struct btf_type *t;
	uint32_t id;
	long bits;

	for (id = 1; id <= b->n; id++) {
		t = type_of(b, id);
		if (BTF_INFO_KIND(t->info) != BTF_KIND_STRUCT || BTF_INFO_VLEN(t->info) == 0 ||
		    strcmp(name_of(b, t->name_off), sname) != 0)
			continue;
		bits = member_bits(b, t, member, 0);
		return (bits >= 0 && bits % 8 == 0 ? bits / 8 : -1);
	}
	return (-1);
}
