/*
 * emulate.c -- instructions KVM's emulator gave up on
 * (KVM_EXIT_INTERNAL_ERROR, KVM_INTERNAL_ERROR_EMULATION), completed by
 * the VMM where that is sound.  On some hosts KVM's emulator runs all of
 * a guest's kernel-mode code and lacks instructions a kernel uses.  The
 * instruction is decoded with Zydis (as the exact source decodes guest
 * code) and completed as the processor would at CPL 0 (SDM Vol. 2):
 *
 *   INT3            #BP injected with RIP past it (a trap)
 *   POPCNT r, r     the count, ZF when the source is 0, CF OF SF AF PF clear
 *   CLAC, STAC      RFLAGS.AC
 *   FWAIT           nothing, unless CR0.MP and CR0.TS (#NM) or an unmasked
 *                   x87 exception is pending (#MF): those stay errors
 *   FNINIT          FCW 0x37f, FSW, tags, last instruction and operand 0
 *   LDMXCSR m32     MXCSR from memory (reserved bits set: #GP, an error)
 *   STMXCSR m32     MXCSR to memory
 *   VERR, VERW      ZF: the selector (register or m16) names a code or data
 *                   segment in the GDT or LDT that the current privilege
 *                   may read (VERR) or write (VERW); only ZF changes
 *
 * Registers go through KVM_GET/SET_REGS, SREGS, XSAVE and VCPU_EVENTS; a
 * memory operand through KVM_TRANSLATE and guest RAM, within one page.
 */
#include <errno.h>
#include <string.h>
#include <sys/ioctl.h>
#include <linux/kvm.h>

#include <Zydis/Zydis.h>

#include "vpmu-run.h"

#define BP_VECTOR	3		/* #BP, raised by INT3 */
#define RFLAGS_ARITH	0x8d5u		/* CF PF AF ZF SF OF */
#define RFLAGS_ZF	0x40u
#define RFLAGS_AC	(1ull << 18)
#define CR0_MP		(1ull << 1)
#define CR0_TS		(1ull << 3)
#define FSW_ES		0x80u		/* an unmasked x87 exception is pending */
#define MXCSR_RESERVED	0xffff0000u
#define PAGE		0x1000u

/* What an instruction is completed with: the vCPU's state, read once. */
struct state {
	struct vr_vcpu	 *c;
	struct kvm_regs	  r;
	struct kvm_sregs  sr;
	ZydisDecodedInstruction in;
	ZydisDecodedOperand op[ZYDIS_MAX_OPERAND_COUNT];
};

bool
vr_guest_copy(struct vr_vcpu *c, uint64_t la, void *buf, size_t n, bool write)
{
	struct kvm_translation t = { .linear_address = la };

	if ((la & (PAGE - 1)) + n > PAGE || ioctl(c->fd, KVM_TRANSLATE, &t) < 0 || !t.valid ||
	    t.physical_address >= c->vm->ram_size ||
	    n > c->vm->ram_size - t.physical_address || (write && !t.writeable))
		return (false);
	if (write)
		memcpy(c->vm->ram + t.physical_address, buf, n);
	else
		memcpy(buf, c->vm->ram + t.physical_address, n);
	return (true);
}

size_t
vr_insn_bytes(struct vr_vcpu *c, uint64_t rip, uint8_t *b, size_t n)
{
	const struct kvm_run *run = c->run;
	size_t k;

	if ((run->emulation_failure.flags & KVM_INTERNAL_ERROR_EMULATION_FLAG_INSTRUCTION_BYTES) &&
	    run->emulation_failure.ndata >= 3 && run->emulation_failure.insn_size >= 1) {
		k = run->emulation_failure.insn_size;
		k = k < n ? k : n;
		k = k < sizeof(run->emulation_failure.insn_bytes) ? k :
		    sizeof(run->emulation_failure.insn_bytes);
		memcpy(b, run->emulation_failure.insn_bytes, k);
		return (k);
	}
	k = PAGE - (rip & (PAGE - 1));		/* to the page's end */
	k = k < n ? k : n;
	return (vr_guest_copy(c, rip, b, k, false) ? k : 0);
}

/* The kvm_regs field of a general register of any width; NULL: none. */
static __u64 *
gpr(struct kvm_regs *r, ZydisRegister reg)
{
	static const ZydisRegister r64[16] = {
		ZYDIS_REGISTER_RAX, ZYDIS_REGISTER_RCX, ZYDIS_REGISTER_RDX, ZYDIS_REGISTER_RBX,
		ZYDIS_REGISTER_RSP, ZYDIS_REGISTER_RBP, ZYDIS_REGISTER_RSI, ZYDIS_REGISTER_RDI,
		ZYDIS_REGISTER_R8, ZYDIS_REGISTER_R9, ZYDIS_REGISTER_R10, ZYDIS_REGISTER_R11,
		ZYDIS_REGISTER_R12, ZYDIS_REGISTER_R13, ZYDIS_REGISTER_R14, ZYDIS_REGISTER_R15,
	};
	__u64 *const f[16] = { &r->rax, &r->rcx, &r->rdx, &r->rbx, &r->rsp, &r->rbp,
	    &r->rsi, &r->rdi, &r->r8, &r->r9, &r->r10, &r->r11, &r->r12, &r->r13, &r->r14,
	    &r->r15 };
	ZydisRegister big = ZydisRegisterGetLargestEnclosing(ZYDIS_MACHINE_MODE_LONG_64, reg);
	unsigned i;

	for (i = 0; i < 16; i++)
		if (r64[i] == big)
			return (f[i]);
	return (NULL);
}

/* Register reg's value at its width, into the context Zydis computes with. */
static void
ctx_set(struct state *s, ZydisRegisterContext *ctx, ZydisRegister reg)
{
	unsigned w = ZydisRegisterGetWidth(ZYDIS_MACHINE_MODE_LONG_64, reg);
	__u64 *v = gpr(&s->r, reg);

	if (v != NULL)
		ctx->values[reg] = w >= 64 ? *v : *v & ((1ull << w) - 1);
}

/* The linear address of memory operand o, segment base included. */
static bool
mem_addr(struct state *s, const ZydisDecodedOperand *o, uint64_t *la)
{
	ZydisRegisterContext ctx;

	memset(&ctx, 0, sizeof(ctx));
	ctx_set(s, &ctx, o->mem.base);
	ctx_set(s, &ctx, o->mem.index);
	if (ZYAN_FAILED(ZydisCalcAbsoluteAddressEx(&s->in, o, s->r.rip, &ctx, la)))
		return (false);
	if (o->mem.segment == ZYDIS_REGISTER_FS)
		*la += s->sr.fs.base;
	else if (o->mem.segment == ZYDIS_REGISTER_GS)
		*la += s->sr.gs.base;
	return (true);
}

static bool
popcnt(struct state *s)
{
	__u64 *dst, *src;
	unsigned w = s->in.operand_width;
	uint64_t v;

	if (s->op[0].type != ZYDIS_OPERAND_TYPE_REGISTER ||
	    s->op[1].type != ZYDIS_OPERAND_TYPE_REGISTER ||
	    (dst = gpr(&s->r, s->op[0].reg.value)) == NULL ||
	    (src = gpr(&s->r, s->op[1].reg.value)) == NULL)
		return (false);
	v = w == 64 ? *src : *src & ((1ull << w) - 1);
	if (w == 16)
		*dst = (*dst & ~0xFFFFull) | (uint64_t)__builtin_popcountll(v);
	else
		*dst = (uint64_t)__builtin_popcountll(v);	/* 32 bits: zero-extended */
	s->r.rflags = (s->r.rflags & ~(uint64_t)RFLAGS_ARITH) | (v == 0 ? RFLAGS_ZF : 0);
	return (true);
}

/*
 * The x87 and SSE state, through the XSAVE image's legacy area (KVM_GET_
 * and KVM_SET_XSAVE; KVM_GET_FPU was seen to read MXCSR as 0): FCW at 0,
 * FSW at 2, the abridged tag word at 4, FOP at 6, FIP at 8, FDP at 16,
 * MXCSR at 24; XSTATE_BV at 512.
 */
#define XS_FCW		0
#define XS_FSW		2
#define XS_FTW		4
#define XS_FOP		6
#define XS_FIP		8
#define XS_FDP		16
#define XS_MXCSR	24
#define XS_BV		512
#define XFEATURE_X87	0x1ull
#define XFEATURE_SSE	0x2ull

static bool
xsave_get(struct state *s, struct kvm_xsave *xs)
{
	return (ioctl(s->c->fd, KVM_GET_XSAVE, xs) == 0);
}

/* Write xs back with the components written marked valid in XSTATE_BV. */
static bool
xsave_set(struct state *s, struct kvm_xsave *xs, uint64_t components)
{
	uint8_t *a = (uint8_t *)xs->region;
	uint64_t bv;

	memcpy(&bv, a + XS_BV, sizeof(bv));
	bv |= components;
	memcpy(a + XS_BV, &bv, sizeof(bv));
	return (ioctl(s->c->fd, KVM_SET_XSAVE, xs) == 0);
}

static bool
fwait(struct state *s)
{
	struct kvm_xsave xs;
	uint16_t fsw;

	if (((s->sr.cr0 & CR0_MP) && (s->sr.cr0 & CR0_TS)) || !xsave_get(s, &xs))
		return (false);
	memcpy(&fsw, (uint8_t *)xs.region + XS_FSW, sizeof(fsw));
	return (!(fsw & FSW_ES));
}

static bool
fninit(struct state *s)
{
	struct kvm_xsave xs;
	uint8_t *a = (uint8_t *)xs.region;
	uint16_t fcw = 0x37f;

	if (!xsave_get(s, &xs))
		return (false);
	memcpy(a + XS_FCW, &fcw, sizeof(fcw));
	memset(a + XS_FSW, 0, 2);
	a[XS_FTW] = 0;			/* abridged tag word: all empty */
	memset(a + XS_FOP, 0, 2);
	memset(a + XS_FIP, 0, 8);
	memset(a + XS_FDP, 0, 8);
	return (xsave_set(s, &xs, XFEATURE_X87));
}

/* LDMXCSR (load) or STMXCSR. */
static bool
mxcsr(struct state *s, bool load)
{
	struct kvm_xsave xs;
	uint8_t *a = (uint8_t *)xs.region;
	uint64_t la;
	uint32_t v;

	if (s->op[0].type != ZYDIS_OPERAND_TYPE_MEMORY || !mem_addr(s, &s->op[0], &la) ||
	    !xsave_get(s, &xs))
		return (false);
	if (!load) {
		memcpy(&v, a + XS_MXCSR, sizeof(v));
		return (vr_guest_copy(s->c, la, &v, sizeof(v), true));
	}
	if (!vr_guest_copy(s->c, la, &v, sizeof(v), false) || (v & MXCSR_RESERVED))
		return (false);
	memcpy(a + XS_MXCSR, &v, sizeof(v));
	return (xsave_set(s, &xs, XFEATURE_SSE));
}

/*
 * VERR (write false) or VERW: ZF set when the selector is not null (GDT
 * entry 0; the LDT's entry 0 is an entry), lies
 * within its table's limit (the GDT, or the LDT with TI), names a code or
 * data segment (S set) readable (data, or code with R) or writable (data
 * with W), and, unless it is conforming code tested for reading, its DPL
 * is at least the CPL and the selector's RPL (SDM Vol. 2B, VERR/VERW).
 * A descriptor that cannot be read is an error.
 */
#define SEL_TI		0x4u
#define DESC_S		(1ull << 44)
#define DESC_CODE	0x8u		/* type bits, 40..43 */
#define DESC_CONFORMING	0x4u
#define DESC_RW		0x2u		/* data: writable; code: readable */

static bool
verify(struct state *s, bool write)
{
	const ZydisDecodedOperand *o = &s->op[0];
	const struct kvm_dtable *gdt = &s->sr.gdt;
	uint64_t la, base, d;
	uint32_t limit;
	unsigned type, dpl, cpl = s->sr.cs.selector & 3u;
	uint16_t sel;
	__u64 *v;
	bool ok = false;

	if (o->type == ZYDIS_OPERAND_TYPE_MEMORY) {
		if (!mem_addr(s, o, &la) || !vr_guest_copy(s->c, la, &sel, sizeof(sel), false))
			return (false);
	} else if (o->type == ZYDIS_OPERAND_TYPE_REGISTER &&
	    (v = gpr(&s->r, o->reg.value)) != NULL)
		sel = (uint16_t)*v;
	else
		return (false);
	base = gdt->base;
	limit = gdt->limit;
	if (sel & SEL_TI) {
		base = s->sr.ldt.base;
		limit = s->sr.ldt.unusable ? 0 : s->sr.ldt.limit;
	}
	if ((sel & ~3u) != 0 && (uint32_t)(sel | 7u) <= limit) {	/* not null, inside */
		if (!vr_guest_copy(s->c, base + (sel & ~7u), &d, sizeof(d), false))
			return (false);
		type = (unsigned)(d >> 40) & 0xFu;
		dpl = (unsigned)(d >> 45) & 3u;
		if (d & DESC_S)
			ok = (write ? !(type & DESC_CODE) && (type & DESC_RW) :
			    !(type & DESC_CODE) || (type & DESC_RW)) &&
			    ((!write && (type & DESC_CODE) && (type & DESC_CONFORMING)) ||
			    (dpl >= cpl && dpl >= (sel & 3u)));
	}
	s->r.rflags = ok ? s->r.rflags | RFLAGS_ZF : s->r.rflags & ~(uint64_t)RFLAGS_ZF;
	return (true);
}

/* INT3: #BP injected, RIP past it.  Nothing may be pending already. */
static bool
int3(struct state *s)
{
	struct kvm_vcpu_events ev;

	if (ioctl(s->c->fd, KVM_GET_VCPU_EVENTS, &ev) < 0 || ev.exception.injected ||
	    ev.exception.pending)
		return (false);
	ev.exception.injected = 1;
	ev.exception.nr = BP_VECTOR;
	ev.exception.has_error_code = 0;
	ev.exception.error_code = 0;
	return (ioctl(s->c->fd, KVM_SET_VCPU_EVENTS, &ev) == 0);
}

bool
vr_emulate(struct vr_vcpu *c)
{
	struct state s;
	ZydisDecoder dec;
	ZydisMachineMode mode;
	uint8_t b[ZYDIS_MAX_INSTRUCTION_LENGTH];
	size_t n;
	bool ok;

	if (c->run->internal.suberror != KVM_INTERNAL_ERROR_EMULATION)
		return (false);
	memset(&s, 0, sizeof(s));
	s.c = c;
	if (ioctl(c->fd, KVM_GET_REGS, &s.r) < 0 || ioctl(c->fd, KVM_GET_SREGS, &s.sr) < 0 ||
	    (n = vr_insn_bytes(c, s.r.rip, b, sizeof(b))) == 0)
		return (false);
	mode = s.sr.cs.l ? ZYDIS_MACHINE_MODE_LONG_64 : s.sr.cs.db ?
	    ZYDIS_MACHINE_MODE_LEGACY_32 : ZYDIS_MACHINE_MODE_LEGACY_16;
	if (mode != ZYDIS_MACHINE_MODE_LONG_64 ||
	    ZYAN_FAILED(ZydisDecoderInit(&dec, mode, ZYDIS_STACK_WIDTH_64)) ||
	    ZYAN_FAILED(ZydisDecoderDecodeFull(&dec, b, n, &s.in, s.op)))
		return (false);
	switch (s.in.mnemonic) {
	case ZYDIS_MNEMONIC_INT3:
		ok = int3(&s);
		break;
	case ZYDIS_MNEMONIC_POPCNT:
		ok = popcnt(&s);
		break;
	case ZYDIS_MNEMONIC_CLAC:
	case ZYDIS_MNEMONIC_STAC:
		s.r.rflags = s.in.mnemonic == ZYDIS_MNEMONIC_CLAC ? s.r.rflags & ~RFLAGS_AC :
		    s.r.rflags | RFLAGS_AC;
		ok = true;
		break;
	case ZYDIS_MNEMONIC_FWAIT:
		ok = fwait(&s);
		break;
	case ZYDIS_MNEMONIC_FNINIT:
		ok = fninit(&s);
		break;
	case ZYDIS_MNEMONIC_LDMXCSR:
	case ZYDIS_MNEMONIC_STMXCSR:
		ok = mxcsr(&s, s.in.mnemonic == ZYDIS_MNEMONIC_LDMXCSR);
		break;
	case ZYDIS_MNEMONIC_VERR:
	case ZYDIS_MNEMONIC_VERW:
		ok = verify(&s, s.in.mnemonic == ZYDIS_MNEMONIC_VERW);
		break;
	default:
		ok = false;
		break;
	}
	if (!ok)
		return (false);
	s.r.rip += s.in.length;
	if (ioctl(c->fd, KVM_SET_REGS, &s.r) < 0)
		return (false);
	__atomic_add_fetch(&c->vm->emulated, 1, __ATOMIC_RELAXED);
	return (true);
}
