/*
 * gpmu.h -- the guest-visible PMU's state, shared by the vendor-neutral
 * files (gpmu.c: counters, enables, global status, overflow, reset;
 * gpmu_cpuid.c: CPUID and vendor identity; gpmu_report.c: reports) and
 * the vendor files intel.c and amd.c (their MSR tables and rules).
 *
 * Locking (docs/architecture.md): the guest-visible registers of a vCPU
 * (controls, global control and status, the pending mask) are written on
 * that vCPU's thread without the VM lock -- by the trapped access -- or
 * with the vCPU stopped (reset, restore).  Host threads that read them
 * (reports, snapshots) load them with GPMU_LOAD, and the trap path stores
 * them with GPMU_STORE, so no plain write races an atomic read.  What
 * touches a core PMC (a counter's value, its programming: the flush) takes
 * the VM lock.
 *
 * Deferred reprogramming: a write to a control only records the value and
 * marks the counter in `pending`; vpmu__gpmu_flush(), called before the
 * next entry (vpmu_vcpu_enter), programs every marked counter at once.  No
 * guest instruction runs between the exit and that entry, so counting
 * still changes at the WRMSR's instruction boundary.
 *
 * The KVM glue (backends/kvm.c) uses only the two entry helpers at the
 * end, vpmu__vcpu_enter_quiet() and vpmu__vcpu_pmi_again(); nothing
 * outside the core touches these structures.  What the glue's kvm mode
 * needs of the PMU's registers is in gpmu_msr.h (the MSR numbers and the
 * select bits) and internal.h (vpmu__gpmu_event_of and the other getters).
 */
#ifndef VPMU_GPMU_H
#define VPMU_GPMU_H

#include <string.h>

#include "internal.h"
#include "gpmu_msr.h"
#include <vpmu/model.h>

/* The most counters of any model (<vpmu/model.h>: AMD has at most 6 GP). */
#define GPMU_MAX_GP	VPMU_INTEL_MAX_GP
#define GPMU_MAX_FIXED	VPMU_INTEL_MAX_FIXED

/* One guest-visible counter on one vCPU: a view of one core PMC. */
struct gpmu_ctr {
	struct vpmu_pmc *pm;
	uint64_t ctl;		/* event select (GP); fixed-control nibble (fixed) */
	uint64_t mask;		/* width mask */
	uint64_t last;		/* raw PMC value at the last overflow check */
	struct vpmu_event_spec shown;	/* the last event it counted, for reports */
	unsigned gbit;		/* bit in GLOBAL_CTRL/STATUS: GP i, fixed 32 + i */
	bool fixed;
	bool used;		/* the guest wrote its control or counter (GPMU_STORE) */
	bool running;		/* counting now */
	bool intr;		/* a PMI on overflow */
	bool filtered;		/* its controls count, the event filter disallows it (VM lock) */
};

struct gpmu_vcpu {
	struct gpmu_ctr gp[GPMU_MAX_GP];
	struct gpmu_ctr fx[GPMU_MAX_FIXED];
	uint64_t fixed_ctrl;	/* IA32_FIXED_CTR_CTRL */
	uint64_t global_ctrl;
	uint64_t global_status;
	uint64_t running;	/* gbit of every counter counting now */
	uint64_t pending;	/* gbits whose controls changed since the last flush */
	int pmi_pending;	/* set under the VM lock, taken without it */
};

/* The per-vCPU registers, where another thread may read them. */
#define GPMU_LOAD(x)		__atomic_load_n(&(x), __ATOMIC_RELAXED)
#define GPMU_STORE(x, val)	__atomic_store_n(&(x), (val), __ATOMIC_RELAXED)

/* A control changed: counter(s) gbits are reprogrammed before the next entry. */
static inline void
gpmu_mark(struct gpmu_vcpu *v, uint64_t gbits)
{
	__atomic_fetch_or(&v->pending, gbits, __ATOMIC_RELEASE);
}

/* Result of an MSR handler: VPMU_MSR_OK / VPMU_MSR_GP. */
typedef int gpmu_rd_fn(struct vpmu_vm *, struct gpmu_vcpu *, unsigned idx, uint64_t *);
typedef int gpmu_wr_fn(struct vpmu_vm *, struct gpmu_vcpu *, unsigned idx, uint64_t);

/* A run of MSRs handled alike: base + idx for idx < count. */
struct gpmu_range {
	uint32_t base;
	uint32_t count;
	const char *name;	/* for reports: "IA32_PMC" */
	gpmu_rd_fn *rd;
	gpmu_wr_fn *wr;
};

/* A vendor: its MSR table and its event codes. */
struct gpmu_vendor {
	const struct gpmu_range *ranges;
	size_t nranges;
	/* the event a GP select names (spec->event, ->raw); false: none at all */
	bool (*event)(uint64_t sel, struct vpmu_event_spec *spec);
};

extern const struct gpmu_vendor gpmu_intel;
extern const struct gpmu_vendor gpmu_amd;

/*
 * The model's MSRs in a few spans (ranges less than GPMU_SPAN_GAP apart
 * joined), each with a map from MSR to range: one look-up per access.
 */
#define GPMU_MAX_SPANS	4
#define GPMU_SPAN_GAP	2048u

struct gpmu_span {
	uint32_t base, count;
	uint8_t *map;			/* per MSR: its range's index + 1, 0 none */
};

struct gpmu {
	struct vpmu_model model;
	const struct gpmu_vendor *vendor;	/* NULL for "none" */
	uint64_t global_ctrl_valid;		/* GP bits n-1:0, fixed bits 32+i */
	struct gpmu_vcpu *vcpu;
	struct gpmu_span span[GPMU_MAX_SPANS];
	unsigned nspan;
	/* The event filter (filter.c), NULL: none; swapped under the VM lock. */
	struct vpmu_event_filter *filter;
	/*
	 * The guest's CPUID offers TSX (HLE or RTM), as the KVM glue saw it:
	 * an Intel event select may then set IN_TX (bit 32), and IN_TXCP
	 * (bit 33) on counter 2, as KVM allows.  Atomic: each vCPU's CPUID
	 * patch writes it.
	 */
	bool tsx;
	/*
	 * KVM's own vPMU implements the guest's counters (the KVM glue's kvm
	 * mode, vpmu_kvm(3)): the model only bounds what the guest is offered;
	 * PMU MSRs and RDPMC are not libvpmu's, the counter report and the
	 * event filter go to the glue's hooks.  Set before any vCPU runs, and
	 * at the glue's end; stored and loaded atomically.
	 */
	const struct vpmu__gpmu_ext *ext;
	/* One filter change at a time, with the hook's (filter.c). */
	pthread_mutex_t filter_mtx;
};

/* The external hooks, or NULL (trap mode). */
static inline const struct vpmu__gpmu_ext *
gpmu_ext(const struct gpmu *g)
{
	return (__atomic_load_n(&g->ext, __ATOMIC_ACQUIRE));
}

/* filter.c, VM lock held: may a GP counter with select sel, fixed counter idx, count? */
bool	gpmu_filter_gp(const struct gpmu *g, uint64_t sel);
bool	gpmu_filter_fixed(const struct gpmu *g, unsigned idx);

static inline struct gpmu *
gpmu_of(const struct vpmu_vm *vm)
{
	return (vm->gpmu);
}

/* For the vendor files: a counter's value, VM lock NOT held (taken). */
static inline uint64_t
gpmu_ctr_read(struct vpmu_vm *vm, struct gpmu_ctr *c)
{
	uint64_t val;

	vpmu__vm_lock(vm);
	val = vpmu__model_pmc_value(vm, c->pm, NULL) & c->mask;
	vpmu__vm_unlock(vm);
	return (val);
}
void	gpmu_ctr_write(struct vpmu_vm *vm, struct gpmu_ctr *c, uint64_t value);
/* A GLOBAL_CTRL write: recorded, the changed counters marked. */
void	gpmu_set_global_ctrl(struct gpmu_vcpu *v, uint64_t val);

/* gpmu.c, VM lock held: program a counter from its recorded controls now. */
int	gpmu_ctr_update(struct vpmu_vm *vm, struct gpmu_vcpu *v, struct gpmu_ctr *c,
	    const struct vpmu_event_spec *spec, bool run);
int	gpmu_reprogram_gp(struct vpmu_vm *vm, struct gpmu_vcpu *v, unsigned i);
int	gpmu_reprogram_fixed(struct vpmu_vm *vm, struct gpmu_vcpu *v, unsigned i);
void	gpmu_reset_vcpu(struct vpmu_vm *vm, struct gpmu_vcpu *v);

/*
 * The trapped access, on the vCPU's thread, arguments checked, VM lock
 * NOT held (a counter's value takes it; a control is only recorded).
 */
int	vpmu__gpmu_msr(struct vpmu_vm *vm, unsigned cpu, uint32_t msr, bool write,
	    uint64_t *val);
/* VM lock held: RDPMC of ecx (VPMU_MSR_OK, the value in *val, or VPMU_MSR_GP). */
int	vpmu__gpmu_rdpmc(struct vpmu_vm *vm, unsigned cpu, uint32_t ecx, uint64_t *val);
/* VM lock held: the counters marked since the last flush, programmed together. */
int	vpmu__gpmu_flush(struct vpmu_vm *vm, unsigned cpu);
/*
 * VM lock NOT held: the source asked about the events a flush will program
 * (vpmu__pmc_ask()); _ctl: about the one controls ctl give counter gbit
 * (its select, or for a fixed counter the whole fixed control).
 */
void	vpmu__gpmu_ask(struct vpmu_vm *vm, unsigned cpu);
void	vpmu__gpmu_ask_ctl(struct vpmu_vm *vm, unsigned gbit, uint64_t ctl);
void	vpmu__gpmu_check_running(struct vpmu_vm *vm, unsigned cpu);

/* Some control changed since the last flush (a hint, on the vCPU's thread). */
static inline bool
vpmu__gpmu_pending(const struct vpmu_vm *vm, unsigned cpu)
{
	return (__atomic_load_n(&vm->gpmu->vcpu[cpu].pending, __ATOMIC_RELAXED) != 0);
}

/*
 * The common entry has no work at all -- no PMI, no control written,
 * nothing to share out or to time, no source that follows the guest, no
 * single-step to end -- and is done here: true.  False: the entry has
 * work (vcpu.c's enter_work()).  Inline, so the KVM glue's pre_run pays
 * for the loads alone.
 */
static inline bool
vpmu__vcpu_enter_quiet(struct vpmu_vm *vm, unsigned cpu)
{
	const struct gpmu_vcpu *gv = &vm->gpmu->vcpu[cpu];
	struct vpmu_vcpu *v = &vm->vcpu[cpu];

	if (__atomic_load_n(&gv->pmi_pending, __ATOMIC_RELAXED) != 0 ||
	    __atomic_load_n(&gv->pending, __ATOMIC_RELAXED) != 0 ||
	    __atomic_load_n(&v->dirty, __ATOMIC_RELAXED) ||
	    __atomic_load_n(&v->nact, __ATOMIC_RELAXED) != 0 ||
	    vm->src->exec_wants != NULL || v->debug != 0 || v->rdpmc_bp != 0 ||
	    v->rdpmc_stale)
		return (false);
	v->entered = 0;
	return (true);
}

/* A PMI handed out by an entry but not delivered: due again at the next. */
static inline void
vpmu__vcpu_pmi_again(struct vpmu_vm *vm, unsigned cpu)
{
	__atomic_store_n(&vm->gpmu->vcpu[cpu].pmi_pending, 1, __ATOMIC_RELEASE);
}

/* After every exit: a look at the counters counting now, if any. */
static inline void
vpmu__gpmu_check_overflow(struct vpmu_vm *vm, unsigned cpu)
{
	if (vm->gpmu->vcpu[cpu].running != 0)
		vpmu__gpmu_check_running(vm, cpu);
}


#endif /* VPMU_GPMU_H */
