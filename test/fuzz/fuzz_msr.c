/*
 * fuzz_msr.c -- libFuzzer target for the guest-visible models' MSR
 * handlers (libvpmu/intel.c, amd.c, gpmu.c) reached through
 * the exit contract (vpmu_vcpu_exit, vpmu_vcpu_enter) and the direct
 * entry points (vpmu_msr_read, vpmu_msr_write), with multiplexing on and
 * off, on the synthetic and the exact source.
 *
 * Input: two header bytes, then operations.
 *   byte 0   bits 6:0 the model: one of models[] (every name
 *            vpmu_model_parse() takes, and some with keys: gp=, fixed=,
 *            width=, fixed-width=, fw-writes=, ebx=); bit 7 the snapshot
 *            round trip at the end (a third of a run's cost: every other
 *            input pays it)
 *   byte 1   bits 1:0 vCPUs - 1; bit 2 multiplexing (host capacity
 *            (bits 4:3) + 1 counters, interval muxns[bits 7:6]); bit 5 the
 *            exact source instead of the synthetic one (reference cycles
 *            one per instruction: by the TSC they would not reproduce).  The exact source
 *            needs no KVM: it reads the registers every exit gives
 *            (struct vpmu_exit.regs, a fake vCPU walking a page of NOPs,
 *            HLTs and RDPMCs registered with vpmu_vm_add_memory) and
 *            counts what it decodes there.
 *   then     up to MAXOPS operations, each a kind byte, a vCPU byte and
 *            what the kind reads: RDMSR/WRMSR exits, vpmu_msr_read/write, RDPMC exits,
 *            VPMU_EXIT_OTHER exits with run time (and the fake RIP moved),
 *            debug exits, vpmu_vcpu_enter, reset, overflow checks,
 *            counter reports (vpmu_vcpu_get_counters).  MSR
 *            indexes come from a table of every PMU MSR of both vendors
 *            and their neighbours (non-PMU MSRs such as DEBUGCTL and the
 *            v4 STATUS_SET/INUSE among them), or are any 32 bits.
 *
 * Every input gets fresh VMs: what a run finds reproduces from its input.
 * Checked, beyond ASan/UBSan:
 *   - every call returns 0 (the arguments are all valid);
 *   - handled and fault are 0 or 1, fault implies handled, and an MSR
 *     exit is handled exactly when vpmu_msr_is_pmu() says the MSR is a
 *     PMU MSR (vpmu_vcpu(3), "The MSRs to route");
 *   - a PMU MSR the model does not have faults on read, one it has never
 *     does, and a faulting read gives 0 (vpmu_model(3): the Intel and AMD
 *     tables, "none");
 *   - a write faults exactly when vpmu_model(3) says (reserved bits of an
 *     Intel control, read-only MSRs, A_PMCx above the width, absent MSRs;
 *     never for an AMD MSR that exists), and one that did not fault reads
 *     back at once as the table says: a control its value (AMD: less the
 *     dropped bits), a counter its value masked to the width (IA32_PMCx
 *     sign-extended from bit 31), GLOBAL_OVF_CTRL and the AMD StatusClr/
 *     Set 0, with the status changed as written;
 *   - an RDPMC faults exactly as vpmu_vcpu(3) "RDPMC" says, and gives
 *     what RDMSR of the same counter gives;
 *   - vpmu_vcpu_get_counters() reports every counter, with the value
 *     RDMSR gives and (GP counters) the event select RDMSR gives, and
 *     no more running than enabled time;
 *   - at the end (byte 0 bit 7) the VM saves, the blob restores into a
 *     fresh VM of the same configuration, and that saves to the same
 *     bytes (the sweeper's pass count aside, as in fuzz_snapshot.c).
 */
#include <errno.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <vpmu/vpmu.h>
#include <vpmu/model.h>
#include <vpmu/snapshot.h>
#include "snapblob.h"
#include <vpmu/source.h>
#include <vpmu/vcpu.h>

#define NELEM(a)	(sizeof(a) / sizeof((a)[0]))
#define MAXOPS		96
#define CODE_GPA	0x1000u
#define CODE_SIZE	4096u

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static const char *const models[] = {
	"intel-v1", "intel-v2", "intel-v3", "intel-v4", "intel-v5",
	"amd-k7", "amd-core", "amd-v2", "none",
	"intel-v1:gp=8,width=32,fw-writes=0",
	"intel-v2:gp=8,fixed=3,width=64,fixed-width=64",
	"intel-v2:gp=1,fixed=1,width=40,fixed-width=33,fw-writes=0",
	"intel-v3:gp=0,fixed=0",
	"intel-v3:fixed=2,width=63,ebx=0x7f",
	"intel-v4:gp=2,fixed=3,width=48,fixed-width=32",
	"intel-v5:gp=7,fixed=1,fw-writes=0",
	"intel-v5:gp=3,fixed=2,width=57,fixed-width=61,ebx=0xffffffff",
	"amd-v2:gp=0", "amd-v2:gp=1", "amd-v2:gp=3", "amd-v2:gp=5",
};

static const uint64_t muxns[] = { 1000, 50000, 1000000, 4000000 };
static struct vpmu_exact_params exact_params = { .ref_cpi = 1 };

/* Every PMU MSR of both vendors, their neighbours, and other MSRs. */
static const uint32_t msrs[] = {
	/* Intel: IA32_PMC0-7, PERFEVTSEL0-7, FIXED_CTR0-3, A_PMC0-7 */
	0xC1, 0xC2, 0xC3, 0xC4, 0xC5, 0xC6, 0xC7, 0xC8,
	0x186, 0x187, 0x188, 0x189, 0x18A, 0x18B, 0x18C, 0x18D,
	0x309, 0x30A, 0x30B, 0x30C,
	0x4C1, 0x4C2, 0x4C3, 0x4C4, 0x4C5, 0x4C6, 0x4C7, 0x4C8,
	/* PERF_CAPABILITIES, FIXED_CTR_CTRL, GLOBAL_STATUS/CTRL/OVF_CTRL */
	0x345, 0x38D, 0x38E, 0x38F, 0x390,
	/* AMD: K7 PerfEvtSel0-3, PerfCtr0-3; core PERF_CTL/CTR0-5; V2 global */
	0xC0010000, 0xC0010001, 0xC0010002, 0xC0010003,
	0xC0010004, 0xC0010005, 0xC0010006, 0xC0010007,
	0xC0010200, 0xC0010201, 0xC0010202, 0xC0010203, 0xC0010204, 0xC0010205,
	0xC0010206, 0xC0010207, 0xC0010208, 0xC0010209, 0xC001020A, 0xC001020B,
	0xC0000300, 0xC0000301, 0xC0000302, 0xC0000303,
	/* neighbours and MSRs no model has */
	0xC0, 0xC9, 0x185, 0x18E, 0x308, 0x30D, 0x344, 0x346, 0x38C,
	0x391, 0x392,			/* v4 GLOBAL_STATUS_SET, GLOBAL_INUSE */
	0x4C0, 0x4C9, 0x1D9,		/* DEBUGCTL */
	0x3F1, 0x600, 0x10, 0x834, 0x0, 0xFFFFFFFF,	/* PEBS, DS, TSC, LVTPC */
	0xC000FFFF, 0xC00002FF, 0xC0000304, 0x1A0, 0xC0000080,	/* MISC_ENABLE, EFER */
	0xC0010008, 0xC00101FF, 0xC001020C, 0xC0010240, 0xC0011000,
};

struct input {
	const uint8_t *p;
	size_t n;
};

static uint64_t
take(struct input *in, unsigned bytes)
{
	uint64_t v = 0;
	unsigned i;

	for (i = 0; i < bytes; i++) {
		v |= (uint64_t)(in->n > 0 ? *in->p : 0) << (8 * i);
		if (in->n > 0) {
			in->p++;
			in->n--;
		}
	}
	return (v);
}

static uint64_t
wmask(unsigned w)
{
	return (w >= 64 ? ~0ull : (1ull << w) - 1);
}

/* ---- what vpmu_model(3) says an access does ---------------------------------- */

enum kind { K_NONE, K_CTL, K_CTR, K_STATUS_RO, K_CLR, K_SET };

struct rule {
	bool exists;		/* the model has the MSR: a read never faults */
	bool wfault;		/* this write faults */
	enum kind kind;		/* what a read right after the write gives */
	uint64_t rb;		/* K_CTL, K_CTR: the value read back */
	uint64_t bits;		/* K_CLR, K_SET: status bits cleared or set */
};

#define INTEL_EVTSEL_RES	0xFFFFFFFF00200000ull
#define AMD_EVTSEL_RES		0xFFFFFFF000280000ull

static void
intel_rule(const struct vpmu_model *m, uint32_t msr, uint64_t v, struct rule *r)
{
	uint64_t gvalid = wmask(m->gp) | (wmask(m->fixed) << 32), fvalid = 0;
	unsigned i;

	for (i = 0; i < m->fixed; i++)
		fvalid |= 0xBull << (4 * i);
	if (msr - 0xC1 < 8) {
		r->exists = msr - 0xC1 < m->gp;
		r->kind = K_CTR;
		r->rb = (uint64_t)(int64_t)(int32_t)v & wmask(m->width);
	} else if (msr - 0x186 < 8) {
		r->exists = msr - 0x186 < m->gp;
		r->wfault = (v & INTEL_EVTSEL_RES) != 0;
		r->kind = K_CTL;
		r->rb = v;
	} else if (msr - 0x309 < 4) {
		r->exists = m->version >= 2 && msr - 0x309 < m->fixed;
		r->kind = K_CTR;
		r->rb = v & wmask(m->fixed_width);
	} else if (msr == 0x345) {
		r->exists = m->fw_writes;
		r->wfault = true;
	} else if (msr == 0x38D) {
		r->exists = m->version >= 2;
		r->wfault = (v & ~fvalid) != 0;
		r->kind = K_CTL;
		r->rb = v;
	} else if (msr == 0x38E) {
		r->exists = m->version >= 2;
		r->wfault = true;
	} else if (msr == 0x38F) {
		r->exists = m->version >= 2;
		r->wfault = (v & ~gvalid) != 0;
		r->kind = K_CTL;
		r->rb = v;
	} else if (msr == 0x390) {
		r->exists = m->version >= 2;
		r->wfault = (v & ~(gvalid | 3ull << 62)) != 0;
		r->kind = K_CLR;
		r->bits = v;
	} else if (msr - 0x4C1 < 8) {
		r->exists = m->fw_writes && msr - 0x4C1 < m->gp;
		r->wfault = (v & ~wmask(m->width)) != 0;
		r->kind = K_CTR;
		r->rb = v;
	}
}

static void
amd_rule(const struct vpmu_model *m, uint32_t msr, uint64_t v, struct rule *r)
{
	uint64_t valid = wmask(m->gp);
	unsigned j;

	if (msr - 0xC0010000u < 4) {
		r->exists = msr - 0xC0010000u < m->gp;
		r->kind = K_CTL;
		r->rb = v & ~AMD_EVTSEL_RES;
	} else if (msr - 0xC0010004u < 4) {
		r->exists = msr - 0xC0010004u < m->gp;
		r->kind = K_CTR;
		r->rb = v & wmask(48);
	} else if (msr - 0xC0010200u < 12) {
		j = msr - 0xC0010200u;
		r->exists = m->core_ext && j / 2 < m->gp;
		r->kind = (j & 1) ? K_CTR : K_CTL;
		r->rb = (j & 1) ? v & wmask(48) : v & ~AMD_EVTSEL_RES;
	} else if (msr - 0xC0000300u < 4) {
		r->exists = m->version >= 2;
		switch (msr - 0xC0000300u) {
		case 0: r->kind = K_STATUS_RO; break;
		case 1: r->kind = K_CTL; r->rb = v & valid; break;
		case 2: r->kind = K_CLR; r->bits = v & valid; break;
		default: r->kind = K_SET; r->bits = v & valid; break;
		}
	}
}

static bool
is_intel_msr(uint32_t msr)
{
	return (msr - 0xC1 < 8 || msr - 0x186 < 8 || msr - 0x309 < 4 || msr == 0x345 ||
	    msr - 0x38D < 4 || msr - 0x4C1 < 8);
}

static void
rule_of(const struct vpmu_model *m, uint32_t msr, uint64_t v, struct rule *r)
{
	memset(r, 0, sizeof(*r));
	if (m->vendor == VPMU_VENDOR_INTEL && is_intel_msr(msr))
		intel_rule(m, msr, v, r);
	else if (m->vendor == VPMU_VENDOR_AMD && !is_intel_msr(msr))
		amd_rule(m, msr, v, r);
	if (!r->exists) {
		r->wfault = true;
		r->kind = K_NONE;
	}
}

/* The status MSR of the model, 0 if it has none. */
static uint32_t
status_msr(const struct vpmu_model *m)
{
	if (m->vendor == VPMU_VENDOR_INTEL && m->version >= 2)
		return (0x38E);
	if (m->vendor == VPMU_VENDOR_AMD && m->version >= 2)
		return (0xC0000300);
	return (0);
}

/* ---- the VM ---------------------------------------------------------------------- */

struct fz {
	vpmu_vm *vm;
	struct vpmu_model m;
	unsigned nvcpus;
	bool exact;
	struct vpmu_regs regs[4];
};

static uint8_t code[CODE_SIZE] __attribute__((aligned(4096)));

static vpmu_config *
config(const struct vpmu_model *m, uint8_t b, struct fz *f)
{
	vpmu_config *cfg;

	f->nvcpus = (b & 3) + 1;
	f->exact = (b & 0x20) != 0;
	CHECK(vpmu_config_create(&cfg) == 0);
	CHECK(vpmu_config_set_vcpus(cfg, f->nvcpus) == 0);
	CHECK(vpmu_config_set_model(cfg, m) == 0);
	if (b & 4) {
		CHECK(vpmu_config_set_capacity(cfg, ((b >> 3) & 3) + 1) == 0);
		CHECK(vpmu_config_set_mux_interval(cfg, muxns[b >> 6]) == 0);
	}
	/* reference cycles per instruction: by the TSC, a report and a read differ */
	if (f->exact)
		CHECK(vpmu_config_set_source(cfg, &vpmu_source_exact, &exact_params) == 0);
	return (cfg);
}

/* ---- operations -------------------------------------------------------------------- */

static uint32_t
pick_msr(struct input *in)
{
	uint16_t s = (uint16_t)take(in, 2);

	if (s & 0x8000)
		return ((uint32_t)take(in, 4));
	return (msrs[s % NELEM(msrs)]);
}

/* A value: any 64 bits, or one of the model's interesting ones. */
static uint64_t
pick_value(struct fz *f, struct input *in)
{
	uint8_t s = (uint8_t)take(in, 1);
	uint64_t x;

	if (s < 0x80)
		return (take(in, 8));
	x = take(in, 1);
	switch (s & 15) {
	case 0: return (0);
	case 1: return (~0ull);
	case 2: return (0x430000 | x | (x & 0x80) << 1);	/* EN, USR, OS + event */
	case 3: return (0x53003C);				/* cycles with INT */
	case 4: return (0x4300C0 | (x & 0xF) << 32);		/* AMD EventSelect[11:8] */
	case 5: return (wmask(f->m.gp) | wmask(f->m.fixed) << 32);
	case 6: return (0xBBBull & wmask(4 * f->m.fixed));
	case 7: return (wmask(f->m.width) - x);			/* just below a wrap */
	case 8: return (wmask(f->m.fixed_width) - x);
	case 9: return (wmask(48) - x);
	case 10: return (0xFFFFFFFFull - x);			/* legacy: sign bit */
	case 11: return (1ull << (x & 63));
	case 12: return (0x4100C4 | x << 24);			/* counter mask */
	case 13: return (0x3ull << 62 | (x & 0xF));
	default: return (x);
	}
}

static void
check_exit_flags(const struct vpmu_exit *x)
{
	CHECK(x->handled <= 1 && x->fault <= 1);
	CHECK(!x->fault || x->handled);
}

static void
exit_prep(struct fz *f, unsigned cpu, struct vpmu_exit *x, uint32_t reason)
{
	memset(x, 0, sizeof(*x));
	x->reason = reason;
	x->flags = VPMU_EXITF_RAN;		/* no clock read: deterministic */
	if (f->exact)
		x->regs = &f->regs[cpu];
}

/* What the VMM does with the registers libvpmu set. */
static void
exit_done(struct fz *f, unsigned cpu, const struct vpmu_exit *x)
{
	struct vpmu_regs *r = &f->regs[cpu];

	check_exit_flags(x);
	CHECK(x->halted <= 1);
	if (x->set & VPMU_SET_RIP)
		r->rip = x->rip;
	if (x->set & VPMU_SET_RSP)
		r->rsp = x->rsp;
	if (x->set & VPMU_SET_RCX)
		r->rcx = x->rcx;
	if (x->set & VPMU_SET_RAX)
		r->rax = x->rax;
	if (x->set & VPMU_SET_RDX)
		r->rdx = x->rdx;
	if (x->set & VPMU_SET_RFLAGS)
		r->rflags = x->rflags;
}

static uint64_t
rd(struct fz *f, unsigned cpu, uint32_t msr)
{
	enum vpmu_msr_verdict vd = VPMU_MSR_NOT_PMU;
	uint64_t v = 0xDEAD;

	CHECK(vpmu_msr_read(f->vm, cpu, msr, &v, &vd) == 0 && vd == VPMU_MSR_OK);
	return (v);
}

/* A read: faults exactly when the model lacks the MSR. */
static void
msr_read(struct fz *f, unsigned cpu, uint32_t msr, bool direct)
{
	enum vpmu_msr_verdict vd = VPMU_MSR_OK;
	struct vpmu_exit x;
	struct rule r;
	int pmu = vpmu_msr_is_pmu(msr);
	uint64_t v = 0x5A5A;

	rule_of(&f->m, msr, 0, &r);
	if (direct) {
		CHECK(vpmu_msr_read(f->vm, cpu, msr, &v, &vd) == 0);
		CHECK(vd == (pmu ? (r.exists ? VPMU_MSR_OK : VPMU_MSR_GP) : VPMU_MSR_NOT_PMU));
		return;
	}
	exit_prep(f, cpu, &x, VPMU_EXIT_MSR_READ);
	x.index = msr;
	x.data = 0x5A5A5A5A5A5A5A5Aull;
	CHECK(vpmu_vcpu_exit(f->vm, cpu, &x) == 0);
	exit_done(f, cpu, &x);
	CHECK(x.handled == (unsigned)pmu);
	if (pmu) {
		CHECK(x.fault == !r.exists);
		if (x.fault)
			CHECK(x.data == 0);
	}
}

/* A write: faults as the model says, then reads back as it says. */
static void
msr_write(struct fz *f, unsigned cpu, uint32_t msr, uint64_t val, bool direct)
{
	uint32_t smsr = status_msr(&f->m);
	uint64_t before = 0, ctl = 0;
	enum vpmu_msr_verdict vd = VPMU_MSR_NOT_PMU;
	struct vpmu_exit x;
	struct rule r;
	int pmu = vpmu_msr_is_pmu(msr);

	rule_of(&f->m, msr, val, &r);
	if (smsr != 0)
		before = rd(f, cpu, smsr);
	if (r.exists && r.wfault)
		CHECK(vpmu_msr_read(f->vm, cpu, msr, &ctl, &vd) == 0 && vd == VPMU_MSR_OK);
	if (direct) {
		CHECK(vpmu_msr_write(f->vm, cpu, msr, val, &vd) == 0);
		CHECK(vd == (pmu ? (r.wfault ? VPMU_MSR_GP : VPMU_MSR_OK) : VPMU_MSR_NOT_PMU));
	} else {
		exit_prep(f, cpu, &x, VPMU_EXIT_MSR_WRITE);
		x.index = msr;
		x.data = val;
		CHECK(vpmu_vcpu_exit(f->vm, cpu, &x) == 0);
		exit_done(f, cpu, &x);
		CHECK(x.handled == (unsigned)pmu);
		if (!pmu)
			return;
		CHECK(x.fault == r.wfault);
	}
	if (!pmu)
		return;
	if (r.wfault) {
		/* a refused write changes nothing (a control or a status) */
		if (r.exists && r.kind != K_CTR)
			CHECK(rd(f, cpu, msr) == ctl);
		return;
	}
	switch (r.kind) {
	case K_CTL:
	case K_CTR:
		CHECK(rd(f, cpu, msr) == r.rb);
		break;
	case K_STATUS_RO:
		CHECK(rd(f, cpu, msr) == before);
		break;
	case K_CLR:
		CHECK(rd(f, cpu, msr) == 0);
		CHECK(rd(f, cpu, smsr) == (before & ~r.bits));
		break;
	case K_SET:
		CHECK(rd(f, cpu, msr) == 0);
		CHECK(rd(f, cpu, smsr) == (before | r.bits));
		break;
	case K_NONE:
		break;
	}
}

/* The MSR RDPMC ECX reads, 0 if the RDPMC faults. */
static uint32_t
rdpmc_msr(const struct vpmu_model *m, uint32_t ecx)
{
	uint32_t idx = ecx & 0x3FFFFFFFu;

	if (m->vendor == VPMU_VENDOR_AMD) {
		if (ecx >= m->gp)
			return (0);
		return (ecx < 4 ? 0xC0010004 + ecx : 0xC0010201 + 2 * ecx);
	}
	if (m->vendor != VPMU_VENDOR_INTEL || (ecx & (1u << 31)))
		return (0);
	if (ecx & (1u << 30))
		return (idx < m->fixed ? 0x309 + idx : 0);
	return (idx < m->gp ? 0xC1 + idx : 0);
}

static void
rdpmc(struct fz *f, unsigned cpu, uint32_t ecx)
{
	uint32_t msr = rdpmc_msr(&f->m, ecx);
	struct vpmu_exit x;

	exit_prep(f, cpu, &x, VPMU_EXIT_RDPMC);
	x.index = ecx;
	x.data = 0x1234;
	CHECK(vpmu_vcpu_exit(f->vm, cpu, &x) == 0);
	exit_done(f, cpu, &x);
	CHECK(x.handled == 1);
	CHECK(x.fault == (msr == 0));
	if (x.fault)
		CHECK(x.data == 0);
	else
		CHECK(x.data == rd(f, cpu, msr));
}

static void
other(struct fz *f, unsigned cpu, struct input *in, uint32_t reason)
{
	uint16_t t = (uint16_t)take(in, 2);
	uint8_t how = (uint8_t)take(in, 1);
	struct vpmu_exit x;

	exit_prep(f, cpu, &x, reason);
	/* up to ~65 ms of run time, in steps a rotation can fall between */
	x.ran_ns = (uint64_t)t * ((how & 0x80) ? 1000 : 1);
	if (how & 0x40)
		x.flags &= ~VPMU_EXITF_RAN;	/* measured: 0, no entry since */
	if (reason == VPMU_EXIT_DEBUG) {
		x.dr6 = (how & 1) ? VPMU_DR6_BS : (how >> 1) & VPMU_DR6_B0_3;
		if (how & 0x20)
			x.flags |= VPMU_EXITF_SETREGS;
	}
	if (how & 0x10)
		x.flags |= VPMU_EXITF_MOVED;
	if (how & 0x08) {
		x.flags |= VPMU_EXITF_INJECTED;
		x.vector = (how & 4) ? 2 : 14;
	}
	/* the fake vCPU walked on: NOPs, or to anywhere in the page */
	f->regs[cpu].rip = (how & 0x10) ? CODE_GPA + t % CODE_SIZE :
	    f->regs[cpu].rip + (t & 7);
	CHECK(vpmu_vcpu_exit(f->vm, cpu, &x) == 0);
	exit_done(f, cpu, &x);
	if (reason == VPMU_EXIT_OTHER)
		CHECK(x.handled == 0);
}

static void
enter(struct fz *f, unsigned cpu)
{
	struct vpmu_entry e;

	memset(&e, 0xA5, sizeof(e));
	CHECK(vpmu_vcpu_enter(f->vm, cpu, &e) == 0);
	CHECK(e.pmi <= 1 && e.debug_changed <= 1);
	CHECK((e.debug & ~(VPMU_DEBUG_STEP | VPMU_DEBUG_BREAK | VPMU_DEBUG_CATCH)) == 0);
	if (e.debug & VPMU_DEBUG_BREAK)
		CHECK(e.nbp >= 1 && e.nbp <= VPMU_DEBUG_BP_MAX);
}

/* The MSRs of GP counter i and its control. */
static void
gp_msrs(const struct vpmu_model *m, unsigned i, uint32_t *ctr, uint32_t *ctl)
{
	if (m->vendor == VPMU_VENDOR_INTEL) {
		*ctr = 0xC1 + i;
		*ctl = 0x186 + i;
	} else if (i < 4) {
		*ctr = 0xC0010004 + i;
		*ctl = 0xC0010000 + i;
	} else {
		*ctr = 0xC0010201 + 2 * i;
		*ctl = 0xC0010200 + 2 * i;
	}
}

/* The report: every counter, its value as the guest reads it. */
static void
counters(struct fz *f, unsigned cpu)
{
	struct vpmu_counter_info ci[VPMU_INTEL_MAX_GP + VPMU_INTEL_MAX_FIXED];
	unsigned n = NELEM(ci), i, gp = f->m.gp;
	uint32_t ctr, ctl;

	CHECK(vpmu_vcpu_get_counters(f->vm, cpu, ci, &n) == 0);
	CHECK(n == gp + f->m.fixed);
	for (i = 0; i < n; i++) {
		if (i < gp) {
			gp_msrs(&f->m, i, &ctr, &ctl);
			CHECK(ci[i].control == rd(f, cpu, ctl));
		} else {
			ctr = 0x309 + i - gp;
			CHECK(ci[i].control == ((rd(f, cpu, 0x38D) >> (4 * (i - gp))) & 0xF));
		}
		CHECK(ci[i].value == rd(f, cpu, ctr));
		CHECK(ci[i].used <= 1 && ci[i].enabled <= 1 && ci[i].scaled <= 1 &&
		    ci[i].unsupported <= 1);
		CHECK(ci[i].time_running <= ci[i].time_enabled);
	}
}

static void
setup_code(void)
{
	unsigned i;

	memset(code, 0x90, sizeof(code));		/* NOP */
	for (i = 0; i + 42 <= CODE_SIZE; i += 61) {
		code[i] = 0xF4;				/* HLT */
		code[i + 20] = 0x0F;			/* RDPMC */
		code[i + 21] = 0x33;
		code[i + 40] = 0xEB;			/* JMP $-2 */
		code[i + 41] = 0xFE;
	}
}

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	static bool once;
	struct input in = { data, size };
	struct vpmu_model m;
	struct fz f;
	vpmu_config *cfg;
	vpmu_vm *again;
	uint8_t *s1, *s2, kind;
	size_t n1, n2;
	unsigned cpu, i, nops;
	int pending;

	if (size < 2)
		return (0);
	if (!once) {
		setup_code();
		once = true;
	}
	memset(&f, 0, sizeof(f));
	CHECK(vpmu_model_parse(models[(data[0] & 0x7F) % NELEM(models)], &m, NULL, 0) == 0);
	f.m = m;
	in.p += 2;
	in.n -= 2;
	cfg = config(&m, data[1], &f);
	CHECK(vpmu_vm_create(cfg, &f.vm) == 0);
	for (cpu = 0; cpu < f.nvcpus; cpu++) {
		f.regs[cpu].rip = CODE_GPA + 61 * cpu + 1;
		f.regs[cpu].rflags = 0x2;
		if (!f.exact)
			for (i = 1; i <= 4; i++)
				CHECK(vpmu_synthetic_set_rate(f.vm, cpu, i,
				    1000000u * i + 7 * cpu) == 0);
	}
	if (f.exact)
		CHECK(vpmu_vm_add_memory(f.vm, CODE_GPA, CODE_SIZE, code) == 0);

	for (nops = 0; in.n > 0 && nops < MAXOPS; nops++) {
		kind = (uint8_t)take(&in, 1);
		cpu = (unsigned)take(&in, 1) % f.nvcpus;
		switch (kind % 13) {
		case 0:
		case 1:
			msr_read(&f, cpu, pick_msr(&in), kind % 13 == 1);
			break;
		case 2:
		case 3:
		case 4: {
			uint32_t msr = pick_msr(&in);

			msr_write(&f, cpu, msr, pick_value(&f, &in), kind % 13 == 4);
			break;
		}
		case 5: {
			uint8_t s = (uint8_t)take(&in, 1);

			rdpmc(&f, cpu, s < 0x80 ? (uint32_t)take(&in, 4) :
			    (uint32_t)(s & 0x60) << 25 | (s & 0xF));
			break;
		}
		case 6:
		case 7:
			other(&f, cpu, &in, VPMU_EXIT_OTHER);
			break;
		case 8:
		case 9:
			enter(&f, cpu);
			break;
		case 10:
			other(&f, cpu, &in, VPMU_EXIT_DEBUG);
			break;
		case 12:
			counters(&f, cpu);
			break;
		default:
			if (kind & 0x80)
				CHECK(vpmu_vcpu_reset(f.vm, cpu) == 0);
			else
				CHECK(vpmu_vcpu_check_overflow(f.vm, cpu) == 0);
			CHECK(vpmu_vcpu_take_pmi(f.vm, cpu, &pending) == 0 && pending <= 1);
			break;
		}
	}

	/* The VM saves, restores into a fresh one, and that saves the same. */
	if (data[0] & 0x80) {
		s1 = snap_save(f.vm, &n1);
		CHECK(vpmu_vm_create(cfg, &again) == 0);
		CHECK(vpmu_vm_restore(again, s1, n1) == 0);
		s2 = snap_save(again, &n2);
		CHECK(snap_same_state(s1, n1, s2, n2));
		free(s1);
		free(s2);
		vpmu_vm_destroy(again);
	}
	vpmu_vm_destroy(f.vm);
	vpmu_config_destroy(cfg);
	return (0);
}
