/*
 * orc.c -- call chains of a Linux x86-64 kernel built without frame
 * pointers, unwound by the kernel's own ORC tables read from guest memory
 * (libvpmu's unwind function, vpmu_vcpu_set_unwind_fn).
 *
 * The facts of the format (arch/x86/include/asm/orc_types.h, objtool):
 *
 *   __start_orc_unwind_ip .. __stop_orc_unwind_ip   s32 per entry: the
 *       entry's code address minus the address of the s32 itself, sorted
 *   __start_orc_unwind   6 bytes per entry: sp_offset (s16), bp_offset
 *       (s16), then 16 bits of flags: sp_reg (bits 0-3), bp_reg (4-7) and
 *       the type.  An entry holds from its address to the next entry's.
 *
 *   flags bits 8-15     Linux before 6.3   6.3              6.4 on
 *   type                bits 8-9           bits 8-9         bits 8-10
 *                       CALL 0, REGS 1,    as before        UNDEFINED 0,
 *                       REGS_PARTIAL 2                      END_OF_STACK 1,
 *                                                           CALL 2, REGS 3,
 *                                                           REGS_PARTIAL 4
 *   end of stack        bit 10             bit 11           (the type)
 *   signal              -                  bit 10           bit 11
 *   no information      sp_reg UNDEFINED and not the end    type UNDEFINED
 *
 * The version comes from linux_banner ("Linux version 6.1.0 ...").
 * Registers: UNDEFINED 0, PREV_SP 1, DX 2, DI 3, BP 4, SP 5, R10 6, R13 7,
 * BP_INDIRECT 8, SP_INDIRECT 9.
 *
 * One step: the frame's CFA (the caller's RSP) is sp_reg's value plus
 * sp_offset (SP_INDIRECT: the value at RSP plus sp_offset; BP_INDIRECT:
 * the value at RBP + sp_offset; DX, DI, R10, R13: the register, known only
 * in the sampled frame or after a full pt_regs).  CALL: the return address
 * is at CFA - 8 and RSP becomes CFA.  REGS: a struct pt_regs is at the
 * CFA, its ip (offset 128), cs (136), sp (152) and the other registers
 * the next frame's.  REGS_PARTIAL: an IRET frame is at the CFA: ip, cs,
 * flags, sp.  RBP: bp_reg UNDEFINED keeps it (or takes pt_regs' bp),
 * PREV_SP reads it at CFA + bp_offset, BP at RBP + bp_offset.  A return
 * address is looked up one byte back (the CALL it follows); an address
 * from pt_regs, or above a frame whose entry has the signal bit, as it is.
 * A CALL frame must move up the stack unless it switches stacks
 * (SP_INDIRECT, the kernel's IRQ-stack calls).  The chain ends at the end of the stack, an
 * address ORC does not cover (user mode, a module), an unreadable stack,
 * or a CALL frame on one stack that does not move up it.
 */
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

#include "vpmustat.h"

#define ORC_ENTRY_SIZE	6
#define ORC_MAX		(4u << 20)	/* entries: a kernel has about 400 k */

enum { OREG_UNDEFINED, OREG_PREV_SP, OREG_DX, OREG_DI, OREG_BP, OREG_SP, OREG_R10, OREG_R13,
    OREG_BP_INDIRECT, OREG_SP_INDIRECT };
enum { T_NONE, T_END, T_CALL, T_REGS, T_REGS_PARTIAL };

/* struct pt_regs (x86-64) */
#define PT_BP		32
#define PT_R13		16
#define PT_R10		56
#define PT_DX		96
#define PT_DI		112
#define PT_IP		128
#define PT_CS		136
#define PT_SP		152

/* The kernel's version from its banner: 3 for 6.4 on, 2 for 6.3, 1 before; 0: not known. */
static int
version(const char *banner)
{
	unsigned major, minor;

	if (sscanf(banner, "Linux version %u.%u", &major, &minor) != 2)
		return (0);
	if (major > 6 || (major == 6 && minor >= 4))
		return (3);
	return (major == 6 && minor == 3 ? 2 : 1);
}

int
vs_orc_load(struct vs_orc *o, struct vpmu_vm *vm, const struct vpmu_regs *r,
    const struct vs_orc_syms *s, uint64_t slide, char *err, size_t errlen)
{
	char banner[128];
	int32_t *rel = NULL;
	uint64_t n, i;

	memset(o, 0, sizeof(*o));
	if (s->ip_start == 0 || s->ip_stop <= s->ip_start || s->entries == 0 ||
	    s->banner == 0) {
		snprintf(err, errlen, "the symbols have no %s", s->banner == 0 ? "linux_banner" :
		    "__start_orc_unwind_ip, __stop_orc_unwind_ip and __start_orc_unwind "
		    "(a kernel without CONFIG_UNWINDER_ORC)");
		return (-1);
	}
	memset(banner, 0, sizeof(banner));
	if (vs_kread(vm, r, s->banner + slide, banner, sizeof(banner) - 1) < 0 ||
	    (o->version = version(banner)) == 0) {
		snprintf(err, errlen, "linux_banner at %#" PRIx64 " is not \"Linux version "
		    "X.Y...\"", s->banner + slide);
		return (-1);
	}
	n = (s->ip_stop - s->ip_start) / 4;
	if (n == 0 || n > ORC_MAX) {
		snprintf(err, errlen, "%" PRIu64 " ORC entries", n);
		return (-1);
	}
	if ((rel = malloc(n * 4)) == NULL || (o->ip = malloc(n * sizeof(*o->ip))) == NULL ||
	    (o->ent = malloc(n * ORC_ENTRY_SIZE)) == NULL) {
		snprintf(err, errlen, "out of memory for %" PRIu64 " ORC entries", n);
		goto fail;
	}
	if (vs_kread(vm, r, s->ip_start + slide, rel, n * 4) < 0 ||
	    vs_kread(vm, r, s->entries + slide, o->ent, n * ORC_ENTRY_SIZE) < 0) {
		snprintf(err, errlen, "the ORC tables at %#" PRIx64 " are not all mapped",
		    s->ip_start + slide);
		goto fail;
	}
	for (i = 0; i < n; i++) {
		o->ip[i] = s->ip_start + slide + 4 * i + (uint64_t)(int64_t)rel[i];
		if (i > 0 && o->ip[i] < o->ip[i - 1]) {
			snprintf(err, errlen, "the ORC table is not sorted at entry %" PRIu64, i);
			goto fail;
		}
	}
	o->n = n;
	free(rel);
	return (0);
fail:
	free(rel);
	vs_orc_free(o);
	return (-1);
}

void
vs_orc_free(struct vs_orc *o)
{
	free(o->ip);
	free(o->ent);
	o->ip = NULL;
	o->ent = NULL;
	o->n = 0;
}

/* The entry for addr: its fields, or false where ORC says nothing. */
static bool
lookup(const struct vs_orc *o, uint64_t addr, int16_t *spoff, int16_t *bpoff, unsigned *sreg,
    unsigned *breg, unsigned *type, bool *signal)
{
	size_t lo = 0, hi = o->n, mid;
	const uint8_t *e;
	uint16_t fl;

	if (o->n == 0 || addr < o->ip[0])
		return (false);
	while (hi - lo > 1) {		/* the last entry at or below addr */
		mid = lo + (hi - lo) / 2;
		if (o->ip[mid] <= addr)
			lo = mid;
		else
			hi = mid;
	}
	e = o->ent + lo * ORC_ENTRY_SIZE;
	*spoff = (int16_t)vr_get16(e);
	*bpoff = (int16_t)vr_get16(e + 2);
	fl = vr_get16(e + 4);
	*sreg = fl & 0xf;
	*breg = (fl >> 4) & 0xf;
	*signal = o->version == 3 ? (fl & 0x800) != 0 : o->version == 2 && (fl & 0x400) != 0;
	if (o->version >= 3) {
		static const unsigned t3[8] = { T_NONE, T_END, T_CALL, T_REGS, T_REGS_PARTIAL,
		    T_NONE, T_NONE, T_NONE };

		*type = t3[(fl >> 8) & 7];
	} else if (fl & (o->version == 2 ? 0x800 : 0x400))
		*type = T_END;
	else if (*sreg == OREG_UNDEFINED)
		*type = T_NONE;
	else
		*type = (fl >> 8 & 3) == 0 ? T_CALL : (fl >> 8 & 3) == 1 ? T_REGS :
		    (fl >> 8 & 3) == 2 ? T_REGS_PARTIAL : T_NONE;
	return (*type != T_NONE);
}

/* The registers of a frame the walk knows. */
struct frame {
	uint64_t ip, sp, bp;
	uint64_t dx, di, r10, r13;
	bool	 full;		/* dx, di, r10, r13 known */
	bool	 exact;		/* ip is where the code was, not a return address */
};

/* 8 bytes of the stack (a kernel's is in the upper half; nothing here assumes it). */
static bool
rd(struct vpmu_vm *vm, const struct vpmu_regs *r, uint64_t va, uint64_t *v)
{
	return (vs_kread(vm, r, va, v, sizeof(*v)) == 0);
}

/* One frame up from f: true, f the caller's; false: the chain ends. */
static bool
step(const struct vs_orc *o, struct vpmu_vm *vm, const struct vpmu_regs *r, struct frame *f)
{
	int16_t spoff, bpoff;
	unsigned sreg, breg, type;
	uint64_t cfa, ip, sp, bp = f->bp, cs, v;
	bool signal;

	if (f->ip < VS_KERNEL_HALF ||
	    !lookup(o, f->exact ? f->ip : f->ip - 1, &spoff, &bpoff, &sreg, &breg, &type,
	    &signal) || type == T_END)
		return (false);
	switch (sreg) {
	case OREG_SP:
		cfa = f->sp + (uint64_t)(int64_t)spoff;
		break;
	case OREG_BP:
		cfa = f->bp + (uint64_t)(int64_t)spoff;
		break;
	case OREG_SP_INDIRECT:
		if (!rd(vm, r, f->sp, &cfa))
			return (false);
		cfa += (uint64_t)(int64_t)spoff;
		break;
	case OREG_BP_INDIRECT:
		if (!rd(vm, r, f->bp + (uint64_t)(int64_t)spoff, &cfa))
			return (false);
		break;
	case OREG_DX: case OREG_DI: case OREG_R10: case OREG_R13:
		if (!f->full)
			return (false);
		cfa = sreg == OREG_DX ? f->dx : sreg == OREG_DI ? f->di :
		    sreg == OREG_R10 ? f->r10 : f->r13;
		break;
	default:
		return (false);
	}
	if (type == T_CALL) {
		/* up the stack, unless the frame switches stacks (SP_INDIRECT) */
		if (!rd(vm, r, cfa - 8, &ip) || (cfa <= f->sp && sreg != OREG_SP_INDIRECT))
			return (false);
		sp = cfa;
		f->full = false;
		f->exact = signal;	/* a signal frame's caller: its address as it is */
	} else if (type == T_REGS) {
		if (!rd(vm, r, cfa + PT_IP, &ip) || !rd(vm, r, cfa + PT_CS, &cs) ||
		    !rd(vm, r, cfa + PT_SP, &sp) || (cs & 3) != 0 ||
		    !rd(vm, r, cfa + PT_BP, &bp) || !rd(vm, r, cfa + PT_DX, &f->dx) ||
		    !rd(vm, r, cfa + PT_DI, &f->di) || !rd(vm, r, cfa + PT_R10, &f->r10) ||
		    !rd(vm, r, cfa + PT_R13, &f->r13))
			return (false);		/* from user mode: the kernel's chain ends */
		f->full = true;
		f->exact = true;
	} else {
		if (!rd(vm, r, cfa, &ip) || !rd(vm, r, cfa + 8, &cs) ||
		    !rd(vm, r, cfa + 24, &sp) || (cs & 3) != 0)
			return (false);
		f->full = false;
		f->exact = true;
	}
	if (breg == OREG_PREV_SP) {
		if (!rd(vm, r, cfa + (uint64_t)(int64_t)bpoff, &v))
			return (false);
		bp = v;
	} else if (breg == OREG_BP) {
		if (!rd(vm, r, f->bp + (uint64_t)(int64_t)bpoff, &v))
			return (false);
		bp = v;
	}
	if (ip == 0)
		return (false);
	f->ip = ip;
	f->sp = sp;
	f->bp = bp;
	return (true);
}

unsigned
vs_orc_unwind(const struct vs_orc *o, struct vpmu_vm *vm, const struct vpmu_regs *r,
    uint64_t *pc, unsigned max)
{
	struct frame f = { .ip = r->rip, .sp = r->rsp, .bp = r->rbp, .dx = r->rdx,
	    .di = r->rdi, .r10 = r->r10, .r13 = r->r13, .full = true, .exact = true };
	unsigned n = 0;

	int16_t spoff, bpoff;
	unsigned sreg, breg, type;
	bool signal;

	/* Code ORC does not cover (a module, user mode): the frame pointers' turn. */
	if (max == 0 || f.ip < VS_KERNEL_HALF ||
	    !lookup(o, f.ip, &spoff, &bpoff, &sreg, &breg, &type, &signal))
		return (0);
	pc[n++] = f.ip;
	while (n < max && step(o, vm, r, &f))
		pc[n++] = f.ip;
	return (n);
}
