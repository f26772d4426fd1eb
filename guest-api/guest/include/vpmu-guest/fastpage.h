/*
 * <vpmu-guest/fastpage.h> -- the fast-read page, version 1: a 4 KiB page of
 * guest RAM in which libvpmu publishes a guest process's counters, so that
 * the process reads them without an exit.  vpmu_fastpage(4) is the
 * specification; this header is its C transcription, shared by the guest
 * (freestanding: only <stdint.h>) and libvpmu.
 *
 * A process registers the page with VPMU_PV_OP_FASTPAGE_SET {gpa} (one page
 * per pid; a second SET moves it, FASTPAGE_CLEAR and the process's exit
 * remove it).  The host then owns every byte of it: the guest only reads.
 *
 *   offset 0     struct vpmu_fastpage_hdr (64 bytes)
 *   offset 64    63 slots of 64 bytes (struct vpmu_fastpage_slot)
 *     slots 0..3   pctr(4)'s counters 0..3 of the vCPU the process runs on
 *                  (rdpmc's numbering: a pctr reader takes slot i for rdpmc i)
 *     slots 4..62  hwpmc PMCs: PMC_OP_PMCGETMSR returns the slot number
 *
 * Each slot has a sequence counter, seq.  A writer that can run while a
 * reader reads (the host's refresh thread, and every change of what a slot
 * holds: bind, release, pctr function) makes seq odd, writes the slot, then
 * makes it even again, with release ordering; a reader takes seq with
 * acquire ordering, reads, and retries if seq was odd or changed (the loop
 * in vpmu_fast_read()).  An update made at an exit of the vCPU the process
 * runs on is different: that vCPU is stopped while it happens, so the host
 * stores value, enabled and running in place (each one aligned 64-bit
 * store) without touching seq.  With a single-stepping source every
 * instruction is an exit; were seq bumped at each, no three-load read would
 * ever see it unchanged.  A reader on another vCPU of the same process may
 * then see value and times from two adjacent exits (each field whole).
 *
 * Staleness: value is the counter as of the last update, which is the last
 * exit of the vCPU the process runs on, or the refresh thread's last pass
 * (at most 1/hz after the previous update, hz = vpmu_pv_set_fastpage_rate(),
 * default 1000), whichever came later.
 */
#ifndef VPMU_GUEST_FASTPAGE_H
#define VPMU_GUEST_FASTPAGE_H

#include <stdint.h>

#define VPMU_FP_MAGIC		0x50465056u	/* "VPFP" in memory order */
#define VPMU_FP_VERSION		1u
#define VPMU_FP_PAGE_SIZE	4096u		/* and the page's alignment */
#define VPMU_FP_HDRSIZE		64u
#define VPMU_FP_SLOTSIZE	64u
#define VPMU_FP_NSLOTS		63u
#define VPMU_FP_PCTR_SLOTS	4u		/* slots 0..3: pctr counters 0..3 */
#define VPMU_FP_FIRST_PMC	4u		/* slots 4..62: hwpmc PMCs */
#define VPMU_FP_NOCPU		0xFFFFFFFFu

struct vpmu_fastpage_hdr {		/* 64 bytes */
	uint32_t magic;			/*  0 VPMU_FP_MAGIC once the host has written the page */
	uint16_t version;		/*  4 VPMU_FP_VERSION */
	uint16_t hdrsize;		/*  6 VPMU_FP_HDRSIZE */
	uint16_t slotsize;		/*  8 VPMU_FP_SLOTSIZE */
	uint16_t nslots;		/* 10 VPMU_FP_NSLOTS */
	int32_t  pid;			/* 12 the process the page belongs to */
	uint32_t cpu;			/* 16 vCPU of the last update, VPMU_FP_NOCPU: not running */
	uint32_t hz;			/* 20 the refresh thread's rate (0: stopped) */
	uint64_t updates;		/* 24 updates of the page so far */
	uint64_t host_ns;		/* 32 host CLOCK_MONOTONIC at the last update */
	uint64_t exit_updates;		/* 40 ...of the updates, made at exits */
	uint64_t reserved[2];		/* 48 0 */
};

/* struct vpmu_fastpage_slot.flags */
#define VPMU_FP_VALID		0x1u	/* the slot holds a counter */
#define VPMU_FP_RUNNING		0x2u	/* it is started (hwpmc RUNNING, pctr function set) */
#define VPMU_FP_COUNTING	0x4u	/* it held a host counter on the vCPU at the update */
#define VPMU_FP_PCTR		0x8u	/* a pctr counter (slots 0..3) */

struct vpmu_fastpage_slot {		/* 64 bytes */
	uint32_t seq;			/*  0 odd while a writer works on the slot */
	uint32_t flags;			/*  4 VPMU_FP_* */
	uint64_t value;			/*  8 what PMCRW (pctr: rdpmc, 40 bits) would read */
	uint64_t enabled;		/* 16 ns the counter wanted to count (since its last write) */
	uint64_t running;		/* 24 ns of them it held a host counter */
	uint32_t pmcid;			/* 32 hwpmc: the PMC id; pctr: the counter number */
	uint32_t fn;			/* 36 pctr: the function word (PCIOCS0..3); hwpmc: 0 */
	uint64_t update;		/* 40 hdr.updates when the slot was written last */
	uint64_t reserved[2];		/* 48 0 */
};

struct vpmu_fastpage {
	struct vpmu_fastpage_hdr hdr;
	struct vpmu_fastpage_slot slot[VPMU_FP_NSLOTS];
};

_Static_assert(sizeof(struct vpmu_fastpage_hdr) == VPMU_FP_HDRSIZE, "header size");
_Static_assert(sizeof(struct vpmu_fastpage_slot) == VPMU_FP_SLOTSIZE, "slot size");
_Static_assert(sizeof(struct vpmu_fastpage) == VPMU_FP_PAGE_SIZE, "page size");

/* A consistent read of one slot (vpmu_fast_read()'s out parameters). */
struct vpmu_fast_value {
	uint64_t value;
	uint64_t enabled;
	uint64_t running;
	uint32_t pmcid;
	uint32_t flags;
	uint32_t fn;
	uint32_t retries;		/* how often the read began again */
};

#define VPMU_FP_MAX_RETRIES	(1u << 20)

/*
 * Read slot of the page at pg without an exit: *value gets the counter and
 * *v (may be NULL) the rest of the slot, all from one write of the slot.
 * Returns 0; VPMU_PV_EINVAL if the page is not (yet) a version-1 page or
 * slot is out of range; VPMU_PV_ENXIO if the slot holds no counter;
 * VPMU_PV_EAGAIN after VPMU_FP_MAX_RETRIES retries (a writer that stopped
 * half way: the host died).
 */
int	vpmu_fast_read(const volatile struct vpmu_fastpage *pg, unsigned slot,
	    uint64_t *value, struct vpmu_fast_value *v);

/*
 * The common case, inline: slot's counter when the page is live, no
 * writer is inside the slot and it holds a counter -- the magic, two loads
 * of seq, one of value, one of flags, no call.  Anything else (a writer at
 * work, an empty slot, a bad slot number, a page not yet written or
 * cleared) takes vpmu_fast_read(), whose return values it has.
 */
static inline int
vpmu_fast_value(const volatile struct vpmu_fastpage *pg, unsigned slot, uint64_t *value)
{
	const volatile struct vpmu_fastpage_slot *s = &pg->slot[slot];
	uint32_t s1, f;
	uint64_t v;

	if (slot < VPMU_FP_NSLOTS &&
	    __atomic_load_n(&pg->hdr.magic, __ATOMIC_ACQUIRE) == VPMU_FP_MAGIC) {
		s1 = __atomic_load_n(&s->seq, __ATOMIC_ACQUIRE);
		v = __atomic_load_n(&s->value, __ATOMIC_RELAXED);
		f = __atomic_load_n(&s->flags, __ATOMIC_RELAXED);
		__atomic_thread_fence(__ATOMIC_ACQUIRE);
		if ((s1 & 1) == 0 && (f & VPMU_FP_VALID) != 0 &&
		    __atomic_load_n(&s->seq, __ATOMIC_RELAXED) == s1) {
			*value = v;
			return (0);
		}
	}
	return (vpmu_fast_read(pg, slot, value, (struct vpmu_fast_value *)0));
}

/*
 * Register pg (4 KiB-aligned, in the caller's RAM) as the calling process's
 * page, and remove it (vpmu_pv_call() of FASTPAGE_SET / _CLEAR).
 */
int	vpmu_fast_set(volatile struct vpmu_fastpage *pg);
int	vpmu_fast_clear(void);

#endif /* VPMU_GUEST_FASTPAGE_H */
