/*
 * <vpmu/pmclog.h> -- FreeBSD's hwpmc log format: an encoder for the
 * writer and a reader with pmclog(3)'s role.  See pmclog(5) for the
 * format, vpmu_pmclog(3) for the functions.
 *
 * The format is FreeBSD's modern one, byte for byte: a 16-byte header
 * (a header word with 0xEE in bits 31-24, the type in 23-16 and the
 * record's length in bytes, header included, in 15-0; a spare word;
 * a 64-bit timestamp), then the record's fields, little-endian, each
 * length a multiple of 4.  Types use the modern numbering (CLOSELOG 1
 * ... PROC_CREATE 20; 0 and 4 no longer exist).
 *
 * Error rule: as in vpmu(3), functions that can fail return 0 or a
 * positive errno.  vpmu_pmclog_read() gives the end of the log and "feed
 * me more" as codes too (ENODATA, EAGAIN), as libuv gives the end of a
 * stream.
 */
#ifndef VPMU_PMCLOG_H
#define VPMU_PMCLOG_H

#include <stddef.h>
#include <stdint.h>

#include <vpmu/export.h>

#ifdef __cplusplus
extern "C" {
#endif

#define VPMU_PMCLOG_MAGIC		0xEEu
#define VPMU_PMCLOG_HEADER_SIZE		16
#define VPMU_PMCLOG_MAX_RECORD		4128	/* CALLCHAIN with 512 addresses */
#define VPMU_PMCLOG_PATH_MAX		1024	/* FreeBSD's PATH_MAX, NUL included */
#define VPMU_PMCLOG_CALLCHAIN_MAX	512	/* PMC_CALLCHAIN_DEPTH_MAX */

/* The header word and its parts. */
#define VPMU_PMCLOG_HEADER_WORD(type, len) \
	((uint32_t)VPMU_PMCLOG_MAGIC << 24 | ((uint32_t)(type) & 0xFF) << 16 | \
	    ((uint32_t)(len) & 0xFFFF))
#define VPMU_PMCLOG_HEADER_MAGIC(h)	(((uint32_t)(h) >> 24) & 0xFF)
#define VPMU_PMCLOG_HEADER_TYPE(h)	(((uint32_t)(h) >> 16) & 0xFF)
#define VPMU_PMCLOG_HEADER_LENGTH(h)	((uint32_t)(h) & 0xFFFF)

/* CALLCHAIN's cpuflags word: the vCPU in bits 31-16, flags in 15-0. */
#define VPMU_PMCLOG_CC_F_USERSPACE	0x0001u	/* sampled in user mode */
#define VPMU_PMCLOG_CPUFLAGS(cpu, flags) \
	((uint32_t)(cpu) << 16 | ((uint32_t)(flags) & 0xFFFF))
#define VPMU_PMCLOG_CPUFLAGS_CPU(cf)	(((uint32_t)(cf) >> 16) & 0xFFFF)
#define VPMU_PMCLOG_CPUFLAGS_FLAGS(cf)	((uint32_t)(cf) & 0xFFFF)

enum vpmu_pmclog_type {
	VPMU_PMCLOG_CLOSELOG = 1,
	VPMU_PMCLOG_DROPNOTIFY = 2,
	VPMU_PMCLOG_INITIALIZE = 3,
	VPMU_PMCLOG_PMCALLOCATE = 5,
	VPMU_PMCLOG_PMCATTACH = 6,
	VPMU_PMCLOG_PMCDETACH = 7,
	VPMU_PMCLOG_PROCCSW = 8,
	VPMU_PMCLOG_PROCEXEC = 9,
	VPMU_PMCLOG_PROCEXIT = 10,
	VPMU_PMCLOG_PROCFORK = 11,
	VPMU_PMCLOG_SYSEXIT = 12,
	VPMU_PMCLOG_USERDATA = 13,
	VPMU_PMCLOG_MAP_IN = 14,
	VPMU_PMCLOG_MAP_OUT = 15,
	VPMU_PMCLOG_CALLCHAIN = 16,
	VPMU_PMCLOG_PMCALLOCATEDYN = 17,
	VPMU_PMCLOG_THR_CREATE = 18,
	VPMU_PMCLOG_THR_EXIT = 19,
	VPMU_PMCLOG_PROC_CREATE = 20
};

/*
 * One record, decoded or to encode.  Strings are NUL-terminated copies.
 * A decoded record writes only the header fields and the union member
 * of its type (and of a CALLCHAIN only pc[0 .. npc-1], of a string only
 * up to its NUL): the rest of *ev is left as it was.
 */
struct vpmu_pmclog_ev {
	uint32_t type;			/* enum vpmu_pmclog_type */
	uint32_t len;			/* record length in bytes (decoded; ignored when encoding) */
	uint64_t tsc;			/* header timestamp */
	uint64_t offset;		/* decoded: byte offset of the record in the stream */
	union {
		struct { uint32_t pid, tid, pmcid, cpuflags; uint32_t npc; uint64_t pc[VPMU_PMCLOG_CALLCHAIN_MAX]; } callchain;	/* cpuflags = cpu << 16 | flags (bit0 = user mode) */
		struct { uint32_t version, cputype; uint64_t tsc_freq; int64_t sec, nsec; char cpuid[64]; } initialize;
		struct { uint32_t pid; uint64_t start; char path[VPMU_PMCLOG_PATH_MAX]; } map_in;
		struct { uint32_t pid; uint64_t start, end; } map_out;
		struct { uint32_t pmcid, event, flags; uint64_t rate; } pmcallocate;
		struct { uint32_t pmcid, event, flags; char evname[64]; } pmcallocatedyn;
		struct { uint32_t pmcid, pid; char path[VPMU_PMCLOG_PATH_MAX]; } pmcattach;
		struct { uint32_t pmcid, pid; } pmcdetach;
		struct { uint64_t value; uint32_t pmcid, pid, tid; } proccsw;
		struct { uint32_t pid, pmcid; uint64_t base, dyn; char path[VPMU_PMCLOG_PATH_MAX]; } procexec;
		struct { uint32_t pmcid, pid; uint64_t value; } procexit;
		struct { uint32_t oldpid, newpid; } procfork;
		struct { uint32_t pid; } sysexit;
		struct { uint32_t userdata; } userdata;
		struct { uint32_t tid, pid, flags; char tdname[20]; } thr_create;
		struct { uint32_t tid; } thr_exit;
		struct { uint32_t pid, flags; char pcomm[20]; } proc_create;
	} u;
};

/*
 * Encode ev into buf (cap bytes): 0 with *len the record's length (a
 * multiple of 4, <= VPMU_PMCLOG_MAX_RECORD); ENOSPC if it does not fit in
 * cap (*len the length it needs, buf untouched); EINVAL if ev is invalid
 * (unknown type, npc > 512, a path of 1024 bytes or more) or ev, buf or
 * len is NULL (*len 0 if len is not).  Pad bytes and spare fields are
 * zero.  Fixed-size names (cpuid, evname, tdname, pcomm) are cut to their
 * field's size less one.
 */
VPMU_EXTERN int vpmu_pmclog_encode(const struct vpmu_pmclog_ev *ev, void *buf, size_t cap,
    size_t *len);
/* The length vpmu_pmclog_encode() would give with room enough: 0, or EINVAL as it. */
VPMU_EXTERN int vpmu_pmclog_encoded_len(const struct vpmu_pmclog_ev *ev, size_t *len);

/* ---- the reader (pmclog(3)'s role) --------------------------------------- */

typedef struct vpmu_pmclog_reader vpmu_pmclog_reader;

/* A reader that reads fd (not closed by vpmu_pmclog_close()); 0 or errno. */
VPMU_EXTERN int vpmu_pmclog_open_fd(int fd, vpmu_pmclog_reader **rp);
/* A reader fed with vpmu_pmclog_feed(); 0 or errno. */
VPMU_EXTERN int vpmu_pmclog_open_buffer(vpmu_pmclog_reader **rp);
/* Append len bytes (copied) to a buffer reader; 0 or errno (EINVAL on an fd reader). */
VPMU_EXTERN int vpmu_pmclog_feed(vpmu_pmclog_reader *r, const void *data, size_t len);
/*
 * The next record:
 *   0        *ev holds it
 *   EAGAIN   feed more (a buffer reader), or the fd would block
 *   ENODATA  the end of the log: end of file, or CLOSELOG read and
 *            nothing more held (a record cut short is left unread)
 *   EBADMSG  the log is bad; final: vpmu_pmclog_error() says why
 *   EIO      the fd could not be read; final: vpmu_pmclog_error() says why
 *   EINVAL   r or ev is NULL
 */
VPMU_EXTERN int vpmu_pmclog_read(vpmu_pmclog_reader *r, struct vpmu_pmclog_ev *ev);
/* Why the last EBADMSG or EIO (with the stream offset), or "no error". */
VPMU_EXTERN const char *vpmu_pmclog_error(const vpmu_pmclog_reader *r);
VPMU_EXTERN void vpmu_pmclog_close(vpmu_pmclog_reader *r);
/* "CALLCHAIN" for VPMU_PMCLOG_CALLCHAIN and so on; NULL for an unknown type. */
VPMU_EXTERN const char *vpmu_pmclog_type_name(uint32_t type);

#ifdef __cplusplus
}
#endif

#endif /* VPMU_PMCLOG_H */
