/*
 * gmem.h -- guest memory as libvpmu reads it (the exact source, call
 * chains): the VMM's RAM slots (guest-physical ranges backed by host
 * memory), the guest's page walk and its frame-pointer chain.
 *
 * Address spaces named once:
 *   gva   a guest linear address (what RIP and RSP hold in 64-bit mode;
 *         segment bases are taken as 0 elsewhere, see vpmu_exact(7));
 *   gpa   a guest-physical address, found by walking the guest's page
 *         tables from CR3, or equal to the gva when CR0.PG is clear;
 *   hva   the host address a slot maps a gpa to.
 *
 * Reads never fault and never write: no Accessed/Dirty bit is set, no
 * permission is checked (the CPU already fetched the bytes); a gva or gpa
 * with no backing simply ends the read.  The one write (a return address
 * the exact source pushes for a CALL it completes) goes only where the
 * page tables need no Accessed or Dirty bit set, and is reported to the
 * VMM's write function.  Slots are added before the vCPUs
 * run and never change afterwards, so vCPU threads read them without a
 * lock.
 */
#ifndef VPMU_GMEM_H
#define VPMU_GMEM_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include <vpmu/vcpu.h>

#define VPMU_GMEM_MAX_SLOTS	32

struct vpmu_gmem_slot {
	uint64_t gpa;			/* first guest-physical byte */
	uint64_t size;			/* bytes */
	uint8_t *hva;			/* host address of gpa */
};

struct vpmu_gmem {
	unsigned nslots;
	struct vpmu_gmem_slot slot[VPMU_GMEM_MAX_SLOTS];
	vpmu_write_fn *write_fn;	/* told of every write (vpmu_vm_set_write_fn());
					   NULL: the exact source writes nothing.
					   Set after write_arg, read atomically */
	void *write_arg;
};

/* The registers a page walk needs, as KVM_GET_SREGS gives them. */
struct vpmu_gmem_paging {
	uint64_t cr0;
	uint64_t cr3;
	uint64_t cr4;
	uint64_t efer;
};

/* The paging of the vCPU at r (a struct vpmu_regs *). */
#define VPMU_GMEM_PAGING(r)	((struct vpmu_gmem_paging){ (r)->cr0, (r)->cr3, (r)->cr4, (r)->efer })

/* Control-register bits the walk reads (SDM Vol. 3A, 2.5 and 4.1). */
#define VPMU_CR0_PE	(1ull << 0)
#define VPMU_CR0_PG	(1ull << 31)
#define VPMU_CR4_PSE	(1ull << 4)
#define VPMU_CR4_PAE	(1ull << 5)
#define VPMU_CR4_LA57	(1ull << 12)
#define VPMU_CR4_SMEP	(1ull << 20)
#define VPMU_CR4_SMAP	(1ull << 21)
#define VPMU_CR4_PKE	(1ull << 22)
#define VPMU_CR4_CET	(1ull << 23)
#define VPMU_CR4_PKS	(1ull << 24)
#define VPMU_CR0_WP	(1ull << 16)
#define VPMU_EFER_LMA	(1ull << 10)
/* A page frame's address bits in CR3 and the 64-bit paging entries (MAXPHYADDR <= 52). */
#define VPMU_GMEM_ADDR_52	0x000FFFFFFFFFF000ull

/* An empty set of slots (a zeroed struct is one too). */
void	vpmu__gmem_init(struct vpmu_gmem *mem);
/*
 * Add RAM: size bytes at guest-physical gpa, at hva in this process.
 * 0; EINVAL for a NULL argument, size 0, a range that wraps or overlaps
 * another slot; ENOSPC when all VPMU_GMEM_MAX_SLOTS are used.
 */
int	vpmu__gmem_add(struct vpmu_gmem *mem, uint64_t gpa, uint64_t size, void *hva);
/*
 * Where len bytes at gpa are in this process, all in one slot; NULL when
 * they are not (or mem is NULL).
 */
void	*vpmu__gmem_hva(const struct vpmu_gmem *mem, uint64_t gpa, size_t len);
/*
 * Write len bytes at gpa, all in one slot, and tell mem's write function
 * if there is one.  0, or EFAULT.
 */
int	vpmu__gmem_write_gpa(const struct vpmu_gmem *mem, uint64_t gpa, const void *buf,
	    size_t len);
/* Copy up to len bytes from gpa; returns the bytes copied (stops at a hole). */
int	vpmu__gmem_read_gpa(const struct vpmu_gmem *mem, uint64_t gpa, void *buf, size_t len);
/*
 * Translate gva with the guest's paging: CR0.PG clear (gpa = gva, 32 bits),
 * 32-bit paging (4 KiB and, with CR4.PSE, 4 MiB pages), PAE paging, 4- and
 * 5-level (CR4.LA57) paging in long mode (4 KiB, 2 MiB and 1 GiB pages).
 * 0, or EFAULT when an entry is not present or a table is not in a slot.
 */
int	vpmu__gmem_translate(const struct vpmu_gmem *mem, const struct vpmu_gmem_paging *pg,
	    uint64_t gva, uint64_t *gpa);
/*
 * Copy up to len bytes from gva, walking again at every 4 KiB boundary;
 * returns the bytes copied: fewer than len when a page is not mapped.
 */
int	vpmu__gmem_read_gva(const struct vpmu_gmem *mem, const struct vpmu_gmem_paging *pg,
	    uint64_t gva, void *buf, size_t len);
/*
 * One page translation, kept by a caller while the guest cannot change
 * its page tables under it (while its vCPU is out of KVM_RUN, say): the
 * 4 KiB page at linear address page, under the paging pg, is at hva in
 * this process.  Zeroed: empty.  The caller empties it (valid = false)
 * when the vCPU may have run since.
 */
struct vpmu_gmem_memo {
	bool valid;
	uint64_t page;
	struct vpmu_gmem_paging pg;
	const uint8_t *hva;
};
/*
 * vpmu__gmem_read_gva() that walks the guest's page tables only when memo
 * (may be NULL) holds no translation for gva's page under pg, and then
 * keeps the new one there.
 */
int	vpmu__gmem_read_gva_memo(const struct vpmu_gmem *mem, const struct vpmu_gmem_paging *pg,
	    struct vpmu_gmem_memo *memo, uint64_t gva, void *buf, size_t len);

/*
 * 64-bit canonical form: bits 63:47 all equal (48-bit linear addresses),
 * bits 63:56 with LA57 (pg's CR4).  A non-canonical address faults on
 * hardware.
 */
bool	vpmu__gmem_canonical(const struct vpmu_gmem_paging *pg, uint64_t va);
/*
 * Would the guest's access of len bytes at gva, at CPL cpl (RFLAGS.AC
 * ac), go through without a page fault?  IA-32e paging only (false
 * otherwise): every page present and backed by a slot, user pages for
 * CPL 3 and not for CPL < 3 under SMAP (unless AC), writable for a write
 * (for CPL < 3 only with CR0.WP), no protection keys (CR4.PKE: false),
 * no entry on the way with a bit set that is reserved whatever MAXPHYADDR
 * is (XD without EFER.NXE, PS in a PML5E or PML4E, the low address bits
 * of a large page), and the first and last byte canonical.
 */
bool	vpmu__gmem_can_access(const struct vpmu_gmem *mem, const struct vpmu_gmem_paging *pg,
	    uint64_t gva, size_t len, bool write, unsigned cpl, bool ac);
/*
 * A read of len bytes at gva that vpmu__gmem_can_access() allows and that
 * would set no Accessed bit: every entry of its walks has it already.
 * What a read the guest makes would leave in memory is then all there.
 */
bool	vpmu__gmem_can_read_quietly(const struct vpmu_gmem *mem,
	    const struct vpmu_gmem_paging *pg, uint64_t gva, size_t len, unsigned cpl, bool ac);
/*
 * The same for fetching the len bytes of an instruction at gva: no XD on
 * the way, a user page at CPL 3, not one at CPL < 3 under CR4.SMEP.
 */
bool	vpmu__gmem_can_fetch_quietly(const struct vpmu_gmem *mem,
	    const struct vpmu_gmem_paging *pg, uint64_t gva, size_t len, unsigned cpl);
/*
 * The same for a write of len bytes within one 4 KiB page, whose page is
 * also Dirty already; and false when no write function was given (mem's
 * write_fn: the VMM's dirty tracking must hear of every write).
 */
bool	vpmu__gmem_can_write_quietly(const struct vpmu_gmem *mem,
	    const struct vpmu_gmem_paging *pg, uint64_t gva, size_t len, unsigned cpl, bool ac);
/*
 * A read, or a write, of len bytes at gva as the vCPU at r would make
 * it: only where vpmu__gmem_can_read_quietly() (can_write_quietly())
 * allows it under r's paging, CPL and RFLAGS.AC, so that nothing is left
 * to set; the write is told to mem's write function.  true: done.
 */
bool	vpmu__gmem_read_as(const struct vpmu_gmem *mem, const struct vpmu_regs *r,
	    uint64_t gva, void *buf, size_t len);
bool	vpmu__gmem_write_as(const struct vpmu_gmem *mem, const struct vpmu_regs *r,
	    uint64_t gva, const void *buf, size_t len);
/*
 * Write len bytes at gva, within one 4 KiB page, and tell mem's write
 * function.  0; EFAULT when the page is not mapped or in no slot, or len
 * crosses a page; EPERM without a write function.
 */
int	vpmu__gmem_write_gva(const struct vpmu_gmem *mem, const struct vpmu_gmem_paging *pg,
	    uint64_t gva, const void *buf, size_t len);

/*
 * The entry of the guest's handler for vector vec, from the IDT at linear
 * idt_base (limit idt_limit): 16-byte gates in IA-32e mode (EFER.LMA),
 * 8-byte gates in protected mode, 4-byte segment:offset vectors in real
 * mode (SDM Vol. 3A, 6.10, 6.14.1, 20.1.4).  Segment bases other than the
 * real-mode vector's are taken as 0.  0; ENOENT when the limit excludes
 * the vector (a limit of 0: no IDT known) or the gate is not present;
 * EFAULT when the gate cannot be read.
 */
int	vpmu__gmem_idt_entry(const struct vpmu_gmem *mem, const struct vpmu_gmem_paging *pg,
	    uint64_t idt_base, uint32_t idt_limit, unsigned vec, uint64_t *entry);

/*
 * A call chain: pc[0] = rip, then return addresses up the frame-pointer
 * chain from rbp ([fp] the caller's fp, [fp + 8] the return address), at
 * most max entries.  An unmapped frame, a zero return address, a frame that
 * does not move up the stack, or (in long mode) a non-canonical frame or
 * return address ends the chain.  Returns the entries filled.
 */
unsigned vpmu__gmem_callchain(const struct vpmu_gmem *mem, const struct vpmu_gmem_paging *pg,
	    uint64_t rip, uint64_t rbp, uint64_t *pc, unsigned max);

#endif /* VPMU_GMEM_H */
