/*
 * gmem.c -- guest memory for the exact source: RAM slots and the guest's
 * page walk (SDM Vol. 3A, chapter 4 "Paging").
 *
 * The walk is one loop over a table-driven paging format: entry size, the
 * linear-address bits each level indexes, and the levels where PS maps a
 * page.  Cost: one slot search (at most 32 slots, linear) per level, so a
 * 4-level walk is four 8-byte copies; the exact source walks once per
 * instruction it decodes, plus once more if the instruction crosses a page.
 */
#include <errno.h>
#include <stdbool.h>
#include <string.h>

#include "gmem.h"

#define PTE_P		(1ull << 0)	/* present */
#define PTE_RW		(1ull << 1)	/* writable */
#define PTE_US		(1ull << 2)	/* user */
#define PTE_A		(1ull << 5)	/* accessed */
#define PTE_D		(1ull << 6)	/* dirty (the entry that maps the page) */
#define PTE_PS		(1ull << 7)	/* page size: this entry maps a page */
#define PTE_XD		(1ull << 63)	/* execute-disable */
#define EFER_NXE	(1ull << 11)	/* XD is a bit, not reserved */
#define PAGE_4K		4096ull

/* One paging format, top level first. */
struct pgfmt {
	unsigned esize;			/* bytes per entry: 4 or 8 */
	unsigned nlevels;
	uint8_t	 shift[5];		/* lowest linear-address bit the level maps */
	uint8_t	 bits[5];		/* linear-address bits that index the level */
	uint8_t	 large[5];		/* PS at this level maps a page */
	uint64_t root_mask;		/* CR3 bits that locate the top table */
	uint64_t addr_mask;		/* entry bits that locate a table or page */
};


/* 4-level paging (4.5): PML4, PDPT (1 GiB pages), PD (2 MiB pages), PT. */
static const struct pgfmt fmt_4level = {
	8, 4, { 39, 30, 21, 12 }, { 9, 9, 9, 9 }, { 0, 1, 1, 0 }, VPMU_GMEM_ADDR_52, VPMU_GMEM_ADDR_52
};
/* 5-level paging (4.5, CR4.LA57): PML5 on top. */
static const struct pgfmt fmt_5level = {
	8, 5, { 48, 39, 30, 21, 12 }, { 9, 9, 9, 9, 9 }, { 0, 0, 1, 1, 0 }, VPMU_GMEM_ADDR_52,
	VPMU_GMEM_ADDR_52
};
/* PAE paging (4.4): four PDPTEs at CR3[31:5], PD (2 MiB pages), PT. */
static const struct pgfmt fmt_pae = {
	8, 3, { 30, 21, 12 }, { 2, 9, 9 }, { 0, 1, 0 }, 0xFFFFFFE0ull, VPMU_GMEM_ADDR_52
};
/* 32-bit paging (4.3): PD (4 MiB pages with CR4.PSE), PT. */
static const struct pgfmt fmt_32bit = {
	4, 2, { 22, 12 }, { 10, 10 }, { 1, 0 }, 0xFFFFF000ull, 0xFFFFF000ull
};

void
vpmu__gmem_init(struct vpmu_gmem *mem)
{
	if (mem != NULL)
		memset(mem, 0, sizeof(*mem));
}

int
vpmu__gmem_add(struct vpmu_gmem *mem, uint64_t gpa, uint64_t size, void *hva)
{
	const struct vpmu_gmem_slot *s;
	unsigned i;

	if (mem == NULL || hva == NULL || size == 0 || gpa + size < gpa)
		return (EINVAL);
	for (i = 0; i < mem->nslots; i++) {
		s = &mem->slot[i];
		if (gpa < s->gpa + s->size && s->gpa < gpa + size)
			return (EINVAL);
	}
	if (mem->nslots == VPMU_GMEM_MAX_SLOTS)
		return (ENOSPC);
	mem->slot[mem->nslots].gpa = gpa;
	mem->slot[mem->nslots].size = size;
	mem->slot[mem->nslots].hva = hva;
	mem->nslots++;
	return (0);
}

static const struct vpmu_gmem_slot *
slot_of(const struct vpmu_gmem *mem, uint64_t gpa)
{
	unsigned i;

	for (i = 0; i < mem->nslots; i++)
		if (gpa >= mem->slot[i].gpa && gpa - mem->slot[i].gpa < mem->slot[i].size)
			return (&mem->slot[i]);
	return (NULL);
}

void *
vpmu__gmem_hva(const struct vpmu_gmem *mem, uint64_t gpa, size_t len)
{
	const struct vpmu_gmem_slot *s;
	unsigned i;

	if (mem == NULL || gpa + len < gpa)
		return (NULL);
	for (i = 0; i < mem->nslots; i++) {
		s = &mem->slot[i];
		if (gpa >= s->gpa && gpa - s->gpa <= s->size && len <= s->size - (gpa - s->gpa))
			return (s->hva + (gpa - s->gpa));
	}
	return (NULL);
}

int
vpmu__gmem_write_gpa(const struct vpmu_gmem *mem, uint64_t gpa, const void *buf, size_t len)
{
	vpmu_write_fn *fn;
	void *p;

	if ((p = vpmu__gmem_hva(mem, gpa, len)) == NULL)
		return (EFAULT);
	memcpy(p, buf, len);
	if ((fn = __atomic_load_n(&mem->write_fn, __ATOMIC_ACQUIRE)) != NULL)
		fn(mem->write_arg, gpa, len);
	return (0);
}

int
vpmu__gmem_read_gpa(const struct vpmu_gmem *mem, uint64_t gpa, void *buf, size_t len)
{
	const struct vpmu_gmem_slot *s;
	uint8_t *out = buf;
	size_t done = 0, n;
	uint64_t off;

	if (mem == NULL || buf == NULL)
		return (0);
	while (done < len && (s = slot_of(mem, gpa + done)) != NULL) {
		off = gpa + done - s->gpa;
		n = len - done;
		if (n > s->size - off)
			n = s->size - off;
		memcpy(out + done, s->hva + off, n);
		done += n;
	}
	return ((int)done);
}

static int
read_entry(const struct vpmu_gmem *mem, uint64_t gpa, unsigned esize, uint64_t *e)
{
	*e = 0;				/* x86 is little-endian: a 4-byte entry fills the low half */
	return (vpmu__gmem_read_gpa(mem, gpa, e, esize) == (int)esize ? 0 : EFAULT);
}

/*
 * Bits of IA-32e entry e at level l of f that fault as reserved (SDM
 * Vol. 3A, 4.5.5) whatever MAXPHYADDR is: XD without EFER.NXE, PS where
 * no page can be mapped (PML5E, PML4E), and bits 29:13 or 20:13 of a
 * 1 GiB or 2 MiB page's address.
 */
static bool
reserved(const struct pgfmt *f, unsigned l, uint64_t e, uint64_t efer)
{
	uint64_t pgmask = (1ull << f->shift[l]) - 1;

	if ((e & PTE_XD) && !(efer & EFER_NXE))
		return (true);
	if (l == f->nlevels - 1 || !(e & PTE_PS))
		return (false);
	return (!f->large[l] || (e & pgmask & ~0x1FFFull) != 0);
}

/*
 * The page walk; *perm (when not NULL) gets PTE_RW and PTE_US as every
 * level's entry grants them (a PAE PDPTE has neither: it grants both),
 * PTE_XD when any level's entry has it, and then, in IA-32e paging, an
 * entry with a reserved bit set fails the walk as it faults the guest's
 * access.  Without perm the walk reads what
 * the processor already fetched: a stale TLB entry may hold a translation
 * whose entry the guest has since changed, so nothing more is refused.
 */
static int
walk_gva(const struct vpmu_gmem *mem, const struct vpmu_gmem_paging *pg, uint64_t gva,
    uint64_t *gpa, uint64_t *perm)
{
	const struct pgfmt *f;
	uint64_t table, e, idx, pgmask, acc = PTE_RW | PTE_US | PTE_A, xd = 0;
	unsigned l;

	if (mem == NULL || pg == NULL || gpa == NULL)
		return (EFAULT);
	if (perm != NULL)
		*perm = acc;
	if (!(pg->cr0 & VPMU_CR0_PG)) {
		*gpa = gva & 0xFFFFFFFFull;
		return (0);
	}
	if (pg->efer & VPMU_EFER_LMA)
		f = (pg->cr4 & VPMU_CR4_LA57) ? &fmt_5level : &fmt_4level;
	else {
		f = (pg->cr4 & VPMU_CR4_PAE) ? &fmt_pae : &fmt_32bit;
		gva &= 0xFFFFFFFFull;
	}
	table = pg->cr3 & f->root_mask;
	for (l = 0; l < f->nlevels; l++) {
		idx = (gva >> f->shift[l]) & ((1ull << f->bits[l]) - 1);
		if (read_entry(mem, table + idx * f->esize, f->esize, &e) != 0 || !(e & PTE_P))
			return (EFAULT);
		if (perm != NULL && (pg->efer & VPMU_EFER_LMA) && reserved(f, l, e, pg->efer))
			return (EFAULT);
		if (!(f == &fmt_pae && l == 0))
			acc &= e;
		if (f->esize == 8)	/* any level's XD forbids fetches */
			xd |= e & PTE_XD;
		if (perm != NULL)
			*perm = (acc & (PTE_RW | PTE_US | PTE_A)) | xd;	/* D: below, at the leaf */
		pgmask = (1ull << f->shift[l]) - 1;
		if (perm != NULL)	/* the D of the entry that maps the page */
			*perm |= e & PTE_D;
		if (l == f->nlevels - 1) {
			*gpa = (e & f->addr_mask) | (gva & pgmask);
			return (0);
		}
		if ((e & PTE_PS) && f->large[l] &&
		    (f->esize == 8 || (pg->cr4 & VPMU_CR4_PSE))) {
			if (f->esize == 8)
				*gpa = (e & f->addr_mask & ~pgmask) | (gva & pgmask);
			else		/* 4 MiB page; PSE-36 puts PA[39:32] in bits 20:13 */
				*gpa = (e & 0xFFC00000ull) | ((e >> 13) & 0xFFull) << 32 |
				    (gva & pgmask);
			return (0);
		}
		table = e & f->addr_mask;
	}
	return (EFAULT);		/* not reached: the last level returns */
}

int
vpmu__gmem_translate(const struct vpmu_gmem *mem, const struct vpmu_gmem_paging *pg,
    uint64_t gva, uint64_t *gpa)
{
	return (walk_gva(mem, pg, gva, gpa, NULL));
}

/*
 * vpmu__gmem_can_access(), and with quiet, no entry of the walks without
 * its Accessed bit (a PDPTE of PAE paging has none).  An instruction
 * fetch (ACC_FETCH for write) needs no XD on the way (EFER.NXE: reserved
 * without it), a user page at CPL 3 and, at CPL < 3 under CR4.SMEP, a
 * supervisor page; SMAP and write protection do not apply to it.
 */
#define ACC_READ	0
#define ACC_WRITE	1
#define ACC_FETCH	2
static bool
access_ok(const struct vpmu_gmem *mem, const struct vpmu_gmem_paging *pg,
    uint64_t gva, size_t len, int how, unsigned cpl, bool ac, bool quiet)
{
	bool write = how == ACC_WRITE;

	uint64_t gpa, perm, va, last = gva + len - 1;
	bool user = cpl == 3;

	if (len == 0 || last < gva || !(pg->efer & VPMU_EFER_LMA) ||
	    !vpmu__gmem_canonical(pg, gva) || !vpmu__gmem_canonical(pg, last))
		return (false);
	for (va = gva & ~(PAGE_4K - 1); va <= last; va += PAGE_4K) {
		if (walk_gva(mem, pg, va < gva ? gva : va, &gpa, &perm) != 0 ||
		    vpmu__gmem_read_gpa(mem, gpa, &(uint8_t){ 0 }, 1) != 1)
			return (false);
		if (how == ACC_FETCH ? (perm & PTE_XD) || (user ? !(perm & PTE_US) :
		    (perm & PTE_US) && (pg->cr4 & VPMU_CR4_SMEP)) :
		    user ? !(perm & PTE_US) || (write && !(perm & PTE_RW)) :
		    ((perm & PTE_US) && (pg->cr4 & VPMU_CR4_SMAP) && !ac) ||
		    (write && !(perm & PTE_RW) && (pg->cr0 & VPMU_CR0_WP)))
			return (false);
		/* protection keys (PKRU, IA32_PKRS) are not known here */
		if ((perm & PTE_US) ? (pg->cr4 & VPMU_CR4_PKE) : (pg->cr4 & VPMU_CR4_PKS))
			return (false);
		if (quiet && (!(perm & PTE_A) || (write && !(perm & PTE_D))))
			return (false);
		if (va + PAGE_4K < va)
			break;
	}
	return (true);
}

bool
vpmu__gmem_can_access(const struct vpmu_gmem *mem, const struct vpmu_gmem_paging *pg,
    uint64_t gva, size_t len, bool write, unsigned cpl, bool ac)
{
	return (access_ok(mem, pg, gva, len, write, cpl, ac, false));
}

bool
vpmu__gmem_can_read_quietly(const struct vpmu_gmem *mem, const struct vpmu_gmem_paging *pg,
    uint64_t gva, size_t len, unsigned cpl, bool ac)
{
	return (access_ok(mem, pg, gva, len, ACC_READ, cpl, ac, true));
}

bool
vpmu__gmem_can_fetch_quietly(const struct vpmu_gmem *mem, const struct vpmu_gmem_paging *pg,
    uint64_t gva, size_t len, unsigned cpl)
{
	return (access_ok(mem, pg, gva, len, ACC_FETCH, cpl, false, true));
}

bool
vpmu__gmem_can_write_quietly(const struct vpmu_gmem *mem, const struct vpmu_gmem_paging *pg,
    uint64_t gva, size_t len, unsigned cpl, bool ac)
{
	return (mem != NULL && __atomic_load_n(&mem->write_fn, __ATOMIC_ACQUIRE) != NULL && len != 0 &&
	    (gva & ~(PAGE_4K - 1)) == ((gva + len - 1) & ~(PAGE_4K - 1)) &&
	    access_ok(mem, pg, gva, len, ACC_WRITE, cpl, ac, true));
}

int
vpmu__gmem_write_gva(const struct vpmu_gmem *mem, const struct vpmu_gmem_paging *pg,
    uint64_t gva, const void *buf, size_t len)
{
	uint64_t gpa;

	if (mem == NULL || __atomic_load_n(&mem->write_fn, __ATOMIC_ACQUIRE) == NULL)
		return (EPERM);
	if (len == 0 || (gva & ~(PAGE_4K - 1)) != ((gva + len - 1) & ~(PAGE_4K - 1)) ||
	    vpmu__gmem_translate(mem, pg, gva, &gpa) != 0)
		return (EFAULT);
	return (vpmu__gmem_write_gpa(mem, gpa, buf, len));
}

#define RFLAGS_AC	(1ull << 18)

bool
vpmu__gmem_read_as(const struct vpmu_gmem *mem, const struct vpmu_regs *r, uint64_t gva,
    void *buf, size_t len)
{
	return (vpmu__gmem_can_read_quietly(mem, &VPMU_GMEM_PAGING(r), gva, len, r->cpl,
	    (r->rflags & RFLAGS_AC) != 0) &&
	    vpmu__gmem_read_gva(mem, &VPMU_GMEM_PAGING(r), gva, buf, len) == (int)len);
}

bool
vpmu__gmem_write_as(const struct vpmu_gmem *mem, const struct vpmu_regs *r, uint64_t gva,
    const void *buf, size_t len)
{
	return (vpmu__gmem_can_write_quietly(mem, &VPMU_GMEM_PAGING(r), gva, len, r->cpl,
	    (r->rflags & RFLAGS_AC) != 0) &&
	    vpmu__gmem_write_gva(mem, &VPMU_GMEM_PAGING(r), gva, buf, len) == 0);
}

int
vpmu__gmem_read_gva(const struct vpmu_gmem *mem, const struct vpmu_gmem_paging *pg,
    uint64_t gva, void *buf, size_t len)
{
	uint8_t *out = buf;
	size_t done = 0, n;
	uint64_t gpa, va;
	int got;

	if (buf == NULL)
		return (0);
	while (done < len) {
		va = gva + done;
		if (vpmu__gmem_translate(mem, pg, va, &gpa) != 0)
			break;
		n = PAGE_4K - (va & (PAGE_4K - 1));
		if (n > len - done)
			n = len - done;
		got = vpmu__gmem_read_gpa(mem, gpa, out + done, n);
		done += (size_t)got;
		if ((size_t)got < n)
			break;
	}
	return ((int)done);
}

int
vpmu__gmem_read_gva_memo(const struct vpmu_gmem *mem, const struct vpmu_gmem_paging *pg,
    struct vpmu_gmem_memo *memo, uint64_t gva, void *buf, size_t len)
{
	const struct vpmu_gmem_slot *s;
	uint64_t page = gva & ~(uint64_t)(PAGE_4K - 1), off = gva & (PAGE_4K - 1), gpa;

	if (memo == NULL || mem == NULL || pg == NULL || buf == NULL || off + len > PAGE_4K)
		return (vpmu__gmem_read_gva(mem, pg, gva, buf, len));
	if (!memo->valid || memo->page != page || memcmp(&memo->pg, pg, sizeof(*pg)) != 0) {
		memo->valid = false;
		if (vpmu__gmem_translate(mem, pg, page, &gpa) != 0 ||
		    (s = slot_of(mem, gpa)) == NULL || s->size - (gpa - s->gpa) < PAGE_4K)
			return (vpmu__gmem_read_gva(mem, pg, gva, buf, len));
		memo->valid = true;
		memo->page = page;
		memo->pg = *pg;
		memo->hva = s->hva + (gpa - s->gpa);
	}
	memcpy(buf, memo->hva + off, len);
	return ((int)len);
}

int
vpmu__gmem_idt_entry(const struct vpmu_gmem *mem, const struct vpmu_gmem_paging *pg,
    uint64_t idt_base, uint32_t idt_limit, unsigned vec, uint64_t *entry)
{
	uint8_t g[16];
	unsigned gsz;

	if (pg == NULL || entry == NULL)
		return (EFAULT);
	gsz = (pg->efer & VPMU_EFER_LMA) ? 16 : (pg->cr0 & VPMU_CR0_PE) ? 8 : 4;
	if (idt_limit == 0 || (uint64_t)vec * gsz + gsz - 1 > idt_limit)
		return (ENOENT);
	if (vpmu__gmem_read_gva(mem, pg, idt_base + (uint64_t)vec * gsz, g, gsz) != (int)gsz)
		return (EFAULT);
	if (gsz == 4) {			/* real mode: offset, then segment */
		*entry = ((uint64_t)(g[2] | g[3] << 8) << 4) + (uint64_t)(g[0] | g[1] << 8);
		return (0);
	}
	if (!(g[5] & 0x80))		/* P */
		return (ENOENT);
	*entry = (uint64_t)g[0] | (uint64_t)g[1] << 8 | (uint64_t)g[6] << 16 |
	    (uint64_t)g[7] << 24;
	if (gsz == 16)
		*entry |= ((uint64_t)g[8] | (uint64_t)g[9] << 8 | (uint64_t)g[10] << 16 |
		    (uint64_t)g[11] << 24) << 32;
	return (0);
}

bool
vpmu__gmem_canonical(const struct vpmu_gmem_paging *pg, uint64_t va)
{
	unsigned bits = (pg->cr4 & VPMU_CR4_LA57) ? 57 : 48;
	int64_t s = (int64_t)(va << (64 - bits)) >> (64 - bits);

	return ((uint64_t)s == va);
}

unsigned
vpmu__gmem_callchain(const struct vpmu_gmem *mem, const struct vpmu_gmem_paging *pg,
    uint64_t rip, uint64_t rbp, uint64_t *pc, unsigned max)
{
	uint64_t fp, frame[2];
	unsigned n;
	bool lm = (pg->efer & VPMU_EFER_LMA) != 0;

	if (max == 0)
		return (0);
	pc[0] = rip;
	for (n = 1, fp = rbp; n < max && fp != 0; n++) {
		/*
		 * In long mode every byte of the frame must be canonical (its
		 * first and last byte tell): where the guest's own access would
		 * fault, the page walk, which reads only the index bits, would
		 * follow an alias.
		 */
		if (lm && (!vpmu__gmem_canonical(pg, fp) ||
		    !vpmu__gmem_canonical(pg, fp + sizeof(frame) - 1)))
			break;
		if (vpmu__gmem_read_gva(mem, pg, fp, frame, sizeof(frame)) != (int)sizeof(frame) ||
		    frame[1] == 0 || (lm && !vpmu__gmem_canonical(pg, frame[1])))
			break;
		pc[n] = frame[1];
		if (frame[0] <= fp)
			return (n + 1);		/* the stack grows down: must go up */
		fp = frame[0];
	}
	return (n);
}
