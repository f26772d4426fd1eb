/*
 * internal.h -- libvpmu's core layouts, shared by libvpmu/ and backends/.
 *
 * Locking: every public entry point that touches a VM's mutable state
 * takes vm->lock (vpmu__vm_lock(), below) for the whole call: rows,
 * owners, processes, PMCs, the per-vCPU tables.  Read without it:
 *  - what vpmu_vm_create() sets once: nvcpus, the classes, the source and
 *    the guest PMU's model (vpmu_vm_get_nvcpus(), vpmu_vm_get_model(),
 *    vpmu_cpuid_get_leaf() take no lock);
 *  - vcpu[].dirty and vcpu[].nact, written under the lock by count.c,
 *    from any thread (a PMC started for another vCPU), always with an
 *    atomic store: the vCPU's thread loads them (relaxed) as hints before
 *    every guest entry and after every exit (gpmu.h, vcpu.c) and takes
 *    the lock to act on them.  Under the lock they are read plainly;
 *  - the sample rings' prod and cons, sweeper_stop and drain_want
 *    (sample.c): atomics; the rings' consumers take vm->drain_mtx, then
 *    vm->lock per record, and a vCPU thread at its ring's high-water
 *    mark, holding vm->lock, takes drain_mtx after raising drain_want,
 *    which makes the consumer holding it let go (sample.c);
 *  - the exit contract's per-vCPU state (vcpu.c): the vCPU's thread only.
 * No system call under vm->lock: a source's open() and close() and the
 * sweeper's wake-up are done by its release (vpmu__vm_unlock(), count.c),
 * the sweeper started without it (op.c).
 * FLUSHLOG and the closes of a log drop vm->lock before they wait for the
 * log's writer (log.c).  Order: drain_mtx, then vm->lock, then a log's
 * mutex; vm->lock then drain_mtx only through drain_want (sample.c).
 * State kept elsewhere has its own rules: the guest PMU's per-vCPU
 * registers and pmi_pending (gpmu.h), the exact source's per-vCPU nenabled (exact_internal.h), the
 * paravirtual channel's pv->lock (pv.c) and each log's mutex (log.c).
 */
#ifndef VPMU_INTERNAL_H
#define VPMU_INTERNAL_H

#include <pthread.h>
#include <sched.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>

#include <vpmu/vpmu.h>
#include <vpmu/model.h>
#include <vpmu/snapshot.h>
#include <vpmu/vcpu.h>

#include "gmem.h"

/* Invariant check that names file and line, like hwpmc's KASSERT tags. */
#define VPMU_ASSERT(c) do {						\
	if (!(c)) {							\
		fprintf(stderr, "libvpmu: assertion '%s' failed [%s:%d]\n", \
		    #c, __FILE__, __LINE__);				\
		abort();						\
	}								\
} while (0)

#define VPMU_ARRAY_SIZE(a)	(sizeof(a) / sizeof((a)[0]))

/*
 * error.c: "ENOENT" for ENOENT, from the one errno table; any other code
 * is written as "errno 123" to buf, which VPMU_ERRNAME_MAX bytes hold.
 */
#define VPMU_ERRNAME_MAX	16
const char *vpmu__errname(int err, char *buf, size_t len);

/* ---- tunables (tunable.c) ------------------------------------------------ */

enum vpmu_tunable_id {
	VPMU_T_CALLCHAINDEPTH,
	VPMU_T_HASHSIZE,
	VPMU_T_LOGBUFFERSIZE,
	VPMU_T_MINCOUNT,
	VPMU_T_MTXPOOLSIZE,
	VPMU_T_NBUFFERS_PCPU,
	VPMU_T_NSAMPLES,
	VPMU_T_UNPRIVILEGED_SYSPMCS,
	VPMU_T_UNPRIVILEGED_PROC_DEBUG,
	VPMU_T_COUNT
};

struct vpmu_tunables {
	long v[VPMU_T_COUNT];
};

void	vpmu__tunables_default(struct vpmu_tunables *t);
int	vpmu__tunable_find(const char *name);		/* id or -1 */
bool	vpmu__tunable_is_rw(int id);
void	vpmu__tunables_validate(struct vpmu_tunables *t, vpmu_log_fn fn, void *arg);
void	vpmu__log(vpmu_log_fn fn, void *arg, int level, const char *fmt, ...)
	    __attribute__((format(printf, 4, 5)));

/*
 * Every counter a built-in source has open (synthetic.c, exact.c), for
 * its fini(): open() and close() run without the VM lock, on any thread,
 * so the set has a mutex of its own.  A counter's node is its first member.
 */
struct vpmu__ctr_node {
	struct vpmu__ctr_node *next, **pprev;
};

struct vpmu__ctr_set {
	pthread_mutex_t mtx;
	struct vpmu__ctr_node *head;
};

static inline void
vpmu__ctr_set_add(struct vpmu__ctr_set *s, struct vpmu__ctr_node *n)
{
	pthread_mutex_lock(&s->mtx);
	if ((n->next = s->head) != NULL)
		n->next->pprev = &n->next;
	n->pprev = &s->head;
	s->head = n;
	pthread_mutex_unlock(&s->mtx);
}

static inline void
vpmu__ctr_set_del(struct vpmu__ctr_set *s, struct vpmu__ctr_node *n)
{
	pthread_mutex_lock(&s->mtx);
	if ((*n->pprev = n->next) != NULL)
		n->next->pprev = n->pprev;
	pthread_mutex_unlock(&s->mtx);
}

/* fini(): the counters left freed, and the set. */
static inline void
vpmu__ctr_set_fini(struct vpmu__ctr_set *s)
{
	struct vpmu__ctr_node *n;

	while ((n = s->head) != NULL) {
		s->head = n->next;
		free(n);
	}
	pthread_mutex_destroy(&s->mtx);
}

/* ---- configuration (config.c) ------------------------------------------- */

struct vpmu_class_cfg {
	uint32_t cls;
	unsigned rows;
	unsigned width;
};

struct vpmu_config {
	unsigned nvcpus;
	struct vpmu_tunables tun;
	struct vpmu_class_cfg classes[VPMU_CLASS_MAX];
	unsigned nclass;
	const struct vpmu_source_ops *source;
	void *source_arg;
	void *source_params;		/* source_arg when the config owns it
					   (vpmu_config_set_option(), freed with
					   the config) */
	bool uncounted_ok;		/* vpmu_config_set_option("uncounted") */
	unsigned capacity;		/* host counters per vCPU, 0: the source's */
	uint64_t mux_interval;		/* ns; 0: the default, 4 ms */
	vpmu_log_fn log_fn;
	void *log_arg;
	vpmu_notify_fn notify_fn;
	void *notify_arg;
	struct vpmu_model model;	/* vendor NONE: no guest-visible PMU */
	uint16_t pv_port;		/* the channel's first port; 0: no channel */
	bool has_filter;		/* filter is the VM's event filter */
	struct vpmu_event_filter filter;
	int pmu_mode;			/* VPMU_PMU_MODE_* asked for */
};

/* ---- classes and rows ---------------------------------------------------- */

struct vpmu_classdesc {
	uint32_t cls;
	unsigned rows;
	unsigned width;
	uint32_t caps;
	unsigned ri_base;	/* first row index of this class */
	const char *prefix;	/* row names: "IAP-0" */
};

/* ---- processes (proc.c) -------------------------------------------------- */

struct vpmu_pmc;

/* A PMC attached to a process: hwpmc's pmc_targetstate. */
struct vpmu_target {
	struct vpmu_pmc *pmc;
	struct vpmu_proc *proc;
	uint64_t value;			/* pp_pmcval: this process's count */
	struct vpmu_target *pmc_next;	/* next target of the same PMC */
};

struct vpmu_proc {
	struct vpmu_proc *hnext;	/* hash chain */
	struct vpmu_cred cred;		/* cred.pid is the pid */
	int32_t ppid;
	bool exiting;
	unsigned nattached;		/* slots[] in use */
	struct vpmu_target **slots;	/* per row: the PMC attached at that row */
	char *path;			/* last exec'd image, may be NULL */
};

/* ---- PMCs (pmc*.c) ------------------------------------------------------ */

/*
 * Internal flags, above the user-visible VPMU_F_* ones.  ATTACH_DONE is
 * hwpmc's PMC_F_ATTACH_DONE: set by every attachment (PMCATTACH, a fork
 * under DESCENDANTS, PMCSTART's to the owner) and cleared only when a
 * failed PMCATTACH is undone, so that PMCSTART of a PMC that lost all its
 * targets fails with ESRCH instead of attaching the owner.
 */
#define VPMU_PF_ATTACHED_TO_OWNER	0x00010000u
#define VPMU_PF_NEEDS_LOGFILE		0x00020000u
#define VPMU_PF_ATTACH_DONE		0x00040000u
#define VPMU_PF_MSR_ACCESS		0x00080000u

/*
 * A source's counter as the core holds it (count.c): opened and closed
 * without the VM lock, so a closed one waits on vm->closing for the
 * lock's release.
 */
struct vpmu_hctr {
	void *ctr;			/* the source's */
	struct vpmu_hctr *next;		/* on vm->closing */
};

/* A counter opened on the host source for one vCPU (a "host slot"). */
struct vpmu_hw {
	struct vpmu_hctr *hc;		/* source counter, NULL until opened */
	bool active;			/* the PMC wants to count on this vCPU */
	bool counting;			/* ...and holds one of its host slots */
	bool opening;			/* ...whose counter is not open yet (count.c): */
	struct vpmu_pmc *opm;		/* then on vm->opening, as pm's hw idx */
	unsigned oidx;
	struct vpmu_hw *onext, **oprev;
	struct vpmu_count base;		/* source reading when the slot was taken */
	uint64_t peeked;		/* the most counted since then (slot_peek) */
	uint64_t loaded;		/* counted since activation (PROCCSW) */
};

struct vpmu_owner;

struct vpmu_pmc {
	vpmu_pmc_id id;
	uint32_t mode;
	uint32_t cls;
	uint32_t cpu;			/* vCPU, VPMU_CPU_ANY for process scope */
	unsigned row;
	uint32_t caps;
	uint32_t flags;			/* VPMU_F_* | VPMU_PF_* */
	uint32_t state;			/* enum vpmu_state */
	struct vpmu_event_spec spec;
	struct vpmu_owner *owner;
	struct vpmu_pmc *owner_next;

	/*
	 * Counting: the value written last (initial count, PMCRW or a guest
	 * WRMSR: hwpmc's pm_initial / pm_savedvalue) is base; since then the
	 * PMC counted `counted` events while holding a host slot, for
	 * t_running of the t_enabled ns it wanted to count.  A guest reads
	 * base + counted * t_enabled / t_running (exact when the two times
	 * are equal), never less than it read before (shown).
	 * Sampling: reload is the reload count.
	 */
	uint64_t base;
	uint64_t counted;
	uint64_t t_enabled;		/* ns since base was set */
	uint64_t t_running;
	uint64_t tot_enabled;		/* ns over the PMC's life, for reports */
	uint64_t tot_running;
	uint64_t counted_past;		/* counted before base was last set, for
					   reports (not in snapshots) */
	uint64_t shown;			/* highest estimate a guest has read */
	uint64_t reload;
	uint64_t sample_mark;		/* counted at the last sample */
	bool dropped;			/* a sample was lost: DROPNOTIFY due */
	uint32_t group;			/* scheduled together with its group (0: alone) */

	struct vpmu_target *targets;
	unsigned ntargets;

	/* system scope: hw[0]; process scope: hw[cpu] for every vCPU */
	struct vpmu_hw *hw;
	unsigned nhw;

	uint64_t wrap_mask;		/* guest counter width (model PMCs), 0: none */
	bool unsupported;		/* the source cannot count spec */
	char why[160];
};

struct vpmu_owner {
	struct vpmu_owner *next;
	int32_t pid;
	struct vpmu_cred cred;		/* the caller's identity at its first allocation */
	struct vpmu_pmc *pmcs;
	bool has_log;			/* a log is configured */
	struct vpmu_log *log;		/* log.c */
	uint64_t forked;		/* the fork that last got a PROCFORK (once per fork) */
	struct vpmu_task_names *names;	/* guest tasks its log has named (task.c) */
};

/*
 * A layer's part in a VM's snapshots (snapshot*.c), which its create()
 * registers in vm->snap (the paravirtual channel's; NULL: none).  The blob
 * names each owner's log by the number the layer offered its descriptor
 * under (vpmu_pv_set_logfd()).  hold() keeps those numbers steady until
 * release(), and is taken before the VM lock; log_fd() is the descriptor
 * offered as number n, -1 none; unsaved() says owner pid is one of the
 * layer's devices, whose own state no snapshot holds: a save while it holds
 * PMCs is refused (EBUSY), a blob giving it PMCs is (EBADMSG).
 */
struct vpmu__snap_section {
	void	(*hold)(struct vpmu_vm *vm);
	void	(*release)(struct vpmu_vm *vm);
	int	(*log_fd)(struct vpmu_vm *vm, int32_t n);
	bool	(*unsaved)(int32_t pid);
};

/* ---- vCPUs and the VM (vm.c) --------------------------------------------- */

struct vpmu_vcpu {
	bool online;
	pid_t tid;
	struct vpmu_proc *cur;		/* process scheduled here, or NULL */
	int32_t cur_tid;
	struct vpmu_pmc **loaded;	/* per row: process PMC loaded here */
	struct vpmu_pmc **sys;		/* per row: system PMC in this slot */
	bool *disabled;			/* per row: PMCADMIN disabled */

	/*
	 * The multiplexing scheduler (count.c).  act[] holds the PMCs that
	 * want to count here, in round-robin order; ncounting of them hold
	 * host slots.  now is this vCPU's run time.  nact and dirty are
	 * stored atomically (read without the lock: the note at the top).
	 */
	struct vpmu_pmc **act;
	unsigned nact, actcap;
	unsigned ncounting;
	bool dirty;			/* demand changed while PMCs wait */
	struct vpmu_ring *ring;		/* samples (sample.c) */
	uint64_t now;			/* ns the vCPU has run (PMC times' clock) */
	uint64_t since_rotate;		/* CPU ns since the last rotation */
	uint64_t clock_mark;		/* the source's clock() at the last exit */
	uint64_t rotations;
	uint64_t time_left;		/* run ns before a time event's sample is due,
					   0: none (count.c; atomic: the entry reads
					   it without the lock) */

	/*
	 * The exit contract (vcpu.c): touched only by the vCPU's thread,
	 * between vpmu_vcpu_enter() and vpmu_vcpu_exit().
	 */
	vpmu_regs_fn *regs_fn;
	void *regs_arg;
	vpmu_task_fn *task_fn;		/* names a sample's guest task (task.c) */
	void *task_arg;
	vpmu_unwind_fn *unwind_fn;	/* a sample's call chain (vcpu.c) */
	void *unwind_arg;
	uint64_t entered;		/* thread CPU ns at entry while a PMC wanted to
					   count; 0: none */
	pthread_t entered_by;		/* the thread of that entry (its CPU time) */
	unsigned debug;			/* VPMU_DEBUG_* the last entry asked for */
	unsigned nbp;			/* and its breakpoints (VPMU_DEBUG_BREAK) */
	unsigned need;			/* the ones it cannot do without */
	uint64_t bp[VPMU_DEBUG_BP_MAX];
	bool faulted;			/* the last exit answered an MSR access with #GP */
	bool halting;			/* the last exit halted the vCPU (x->halted):
					   its next sync says VPMU_SYNC_HALTED */
	uint64_t last_rip;		/* RIP at the last exit (exec sources): a
					   step's HLT is the byte there */
	uint64_t rdpmc_bp;		/* the guest's #GP handler: where RDPMC's
					   #GP is caught (rdpmc.c); 0: none */
	bool rdpmc_pass;		/* the next entry steps past the catch */
	bool rdpmc_stale;		/* an exit brought registers since rdpmc_bp
					   was read: these, to read it again */
	bool rdpmc_lm;
	uint32_t rdpmc_idt_limit;
	uint64_t rdpmc_idt_base;
	struct vpmu_gmem_paging rdpmc_pg;
	struct vpmu_vcpu_stats xst;
};

#define VPMU__LAYERS_MAX	4	/* layers of a VM, its own included (layer.c) */
#define VPMU__NANSWERS		64	/* supports() answers a VM keeps (count.c) */

struct vpmu_vm {
	uintptr_t lock;			/* vpmu__vm_lock(): 0 free, else its holder
					   (vpmu__self()) */
	struct vpmu_tunables tun;
	vpmu_log_fn log_fn;
	void *log_arg;
	vpmu_notify_fn notify_fn;
	void *notify_arg;

	unsigned nvcpus;
	struct vpmu_vcpu *vcpu;

	struct vpmu_classdesc classes[VPMU_CLASS_MAX];
	unsigned nclass;
	unsigned npmc;			/* rows over all classes */
	uint32_t cputype;
	int *disp;			/* per row: 0 FREE, >0 THREAD, <0 STANDALONE */

	const struct vpmu_source_ops *src;
	void *src_state;
	unsigned capacity;		/* host counters per vCPU; 0 unlimited */
	uint64_t mux_interval;		/* ns of vCPU run time per rotation */
	uint32_t next_group;

	struct vpmu_owner *owners;
	struct vpmu_proc **proc_hash;
	unsigned proc_hash_size;

	struct vpmu_driverstats stats;

	struct vpmu_gmem mem;		/* guest RAM: every reader's one map */
	struct gpmu *gpmu;		/* the guest-visible PMU (gpmu.c) */
	struct vpmu_pv *pv;		/* the paravirtual channel (guest-api/pvchan.h) */
	const struct vpmu__snap_section *snap;	/* a layer's part in snapshots, or NULL */
	const struct vpmu__layer *layers[VPMU__LAYERS_MAX];	/* created, in order (layer.c) */
	unsigned nlayers;
	uint16_t pv_port;		/* its first port (fixed at creation); 0: off */
	int pmu_mode;			/* VPMU_PMU_MODE_* asked for (the KVM glue decides) */
	unsigned exit_work;		/* the layers' vcpu_exit work (atomic): the
					   hooks run after every exit while not 0 */
	bool uncounted_ok;		/* a source that cannot count the model's
					   events is no error (the KVM glue checks) */

	uint64_t forks;			/* forks seen: PROCFORK once per fork and owner */
	pthread_t sweeper;		/* sample rings -> logs (sample.c) */
	pthread_mutex_t drain_mtx;	/* the rings' one consumer at a time (sample.c) */
	bool sweeper_on, sweeper_stop;
	bool drain_want;		/* a vCPU thread holding the lock waits for drain_mtx */
	int sweep_efd;			/* eventfd: a ring is a quarter full (while sweeper_on) */
	pthread_mutex_t sweeper_mtx;	/* one starter at a time, VM lock not held */

	/*
	 * The source's answers to supports() (count.c): asked with the VM
	 * lock not held, one asker at a time (ask_mtx), kept here (read and
	 * written under the VM lock) for the op or flush that follows.
	 */
	pthread_mutex_t ask_mtx;
	struct vpmu__answer {
		struct vpmu_event_spec spec;
		int error;
		bool once;		/* transient (count.c): used up by one look */
		char why[160];
	} answers[VPMU__NANSWERS];
	unsigned nanswers, answer_next;

	/*
	 * What a holder of the VM lock leaves for its release (count.c,
	 * vpmu__vm_unlock()): host counters to open (nopening slots wait for
	 * theirs: stored atomically, the vCPU's entry reads it as a hint),
	 * counters to close, the sweeper to wake (VPMU__AFTER_*).
	 */
	unsigned nopening;
	struct vpmu_hw *opening;
	struct vpmu_hctr *closing;
	unsigned after;
};
#define VPMU__AFTER_CLOSE	0x1u	/* vm->closing is not empty */
#define VPMU__AFTER_KICK	0x2u	/* a ring is a quarter full: wake the sweeper */

/* sample.c */
int	vpmu__rings_init(struct vpmu_vm *vm);
void	vpmu__rings_fini(struct vpmu_vm *vm);
bool	vpmu__sample_due(struct vpmu_vm *vm, unsigned cpu);
/* vcpu.c: instructions the core retires itself (RDPMC, HLT) */
enum vpmu__insn { VPMU_INSN_OTHER, VPMU_INSN_RDPMC, VPMU_INSN_HLT };
enum vpmu__insn vpmu__insn_at(const struct vpmu_vm *vm, const struct vpmu_regs *r, uint64_t rip,
	    unsigned *len);
const struct vpmu_regs *vpmu__vcpu_retired(struct vpmu_vm *vm, unsigned cpu,
	    const struct vpmu_exit *x, const struct vpmu_regs *r, struct vpmu_regs *done);
/* rdpmc.c: RDPMC answered from the model (the exit contract calls these) */
const struct vpmu_regs *vpmu__rdpmc_at(struct vpmu_vm *vm, unsigned cpu, struct vpmu_exit *x,
	    const struct vpmu_regs *r, struct vpmu_regs *done, unsigned len);
/* gpmu.c: the guest's CPUID offers TSX (the KVM glue's CPUID patch says). */
void	vpmu__gpmu_set_tsx(struct vpmu_vm *vm, bool tsx);
void	vpmu__rdpmc_refresh(struct vpmu_vm *vm, unsigned cpu, const struct vpmu_regs *r);
uint64_t vpmu__rdpmc_catch_at(struct vpmu_vm *vm, unsigned cpu);
void	vpmu__rdpmc_catch(struct vpmu_vm *vm, unsigned cpu, struct vpmu_exit *x,
	    const struct vpmu_regs *r);
void	vpmu__rdpmc_exit(struct vpmu_vm *vm, unsigned cpu, struct vpmu_exit *x);
void	vpmu__sample_take(struct vpmu_vm *vm, unsigned cpu, const uint64_t *pc,
	    unsigned npc, bool user, const struct vpmu_task *task);
/* task.c: the guest task of a sample (a vCPU with a task function) */
void	vpmu__task_of(struct vpmu_vm *vm, unsigned cpu, const struct vpmu_regs *r,
	    struct vpmu_task *t);
void	vpmu__task_note(struct vpmu_vm *vm, struct vpmu_owner *o, const struct vpmu_task *t);
void	vpmu__task_names_free(struct vpmu_owner *o);
/*
 * Every ring into the logs now, by a vCPU's thread with the VM lock held:
 * before a record that must follow the samples taken so far.
 */
void	vpmu__sample_emit_all(struct vpmu_vm *vm);
/* Every ring into the logs now; without the VM lock (it takes it per record). */
void	vpmu__sample_drain(struct vpmu_vm *vm);
/*
 * The sweeper started (no lock held: it creates a thread and an eventfd);
 * its stop; its wake-up when a ring is a quarter full (at the VM lock's
 * release: VPMU__AFTER_KICK).
 */
int	vpmu__sweeper_start(struct vpmu_vm *vm);
void	vpmu__sweeper_stop(struct vpmu_vm *vm);
void	vpmu__sweeper_kick(struct vpmu_vm *vm);

struct gpmu;
/* gpmu.c: the guest-visible PMU */
int	vpmu__gpmu_init(struct vpmu_vm *vm, const struct vpmu_model *m);
/*
 * The guest-visible counters are another's (KVM's vPMU: the KVM glue's kvm
 * mode).  counters() answers vpmu_vcpu_get_counters(); filter() takes an
 * event filter before the VM does (an error refuses it).  Both are called
 * without the VM lock.
 */
struct vpmu__gpmu_ext {
	int	(*counters)(void *arg, unsigned cpu, struct vpmu_counter_info *out,
		    unsigned *n);
	int	(*filter)(void *arg, const struct vpmu_event_filter *f);
	void	*arg;
};
int	vpmu__gpmu_set_external(struct vpmu_vm *vm, const struct vpmu__gpmu_ext *ext);
void	vpmu__gpmu_fini(struct vpmu_vm *vm);
/* Install an event filter (NULL: none) on a VM, VM lock NOT held (filter.c). */
int	vpmu__gpmu_set_filter(struct vpmu_vm *vm, const struct vpmu_event_filter *f);
/*
 * What the model's vendor makes of its registers, for a counter report
 * read elsewhere (the KVM glue's kvm mode): the event a GP select sel
 * names (false: none, or a model without a PMU), the name its GP
 * counters are reported by ("IA32_PMC"; NULL without a PMU).  The event
 * a fixed counter counts is the architectural table's (arch.h).
 */
bool	vpmu__gpmu_event_of(const struct vpmu_vm *vm, uint64_t sel,
	    struct vpmu_event_spec *spec);
const char *vpmu__gpmu_gp_name(const struct vpmu_vm *vm);

/*
 * layer.c: the layers of a VM above its PMCs, in creation order.
 * create() returns 0 or a positive errno and, failing, leaves nothing of
 * its own; destroy() undoes a create() that returned 0.
 */
struct vpmu__layer {
	const char *name;
	int	(*create)(struct vpmu_vm *vm, const struct vpmu_config *cfg);
	void	(*destroy)(struct vpmu_vm *vm);
	/*
	 * Optional: the I/O ports the layer serves (*handled says whether
	 * port is one: an access of size bytes, 0 for a string access; data
	 * in or out), as kvmtool's devices register their ports; and its
	 * hook after every exit of cpu, called while vm->exit_work is not 0
	 * (a layer counts its own work there, atomically).
	 */
	int	(*port_io)(struct vpmu_vm *vm, unsigned cpu, uint16_t port, bool out,
		    unsigned size, uint32_t *data, bool *handled);
	void	(*vcpu_exit)(struct vpmu_vm *vm, unsigned cpu);
};
/*
 * A VM's layers, in creation order: the core's own, the guest-visible PMU
 * (layer.c), then the layers above the core that the caller of
 * vpmu__vm_create() lists, VPMU__LAYERS_MAX in all.  The core names none
 * of those: the public vpmu_vm_create() (guest-api/vm_create.c) lists
 * them, and test/core_names.sh holds libvpmu/ to naming nothing of
 * guest-api/.
 */
int	vpmu__vm_create(const struct vpmu_config *cfg,
	    const struct vpmu__layer *const *above, unsigned nabove, struct vpmu_vm **vmp);
/* layer.c: create them in order (vm->layers), or destroy them in reverse. */
int	vpmu__layers_create(struct vpmu_vm *vm, const struct vpmu_config *cfg,
	    const struct vpmu__layer *const *above, unsigned nabove);
void	vpmu__layers_destroy(struct vpmu_vm *vm);

/* vcpu.c: the exit contract for the KVM glue, arguments already checked. */
void	vpmu__vcpu_enter(struct vpmu_vm *vm, unsigned cpu, struct vpmu_entry *e);
int	vpmu__vcpu_exit(struct vpmu_vm *vm, unsigned cpu, struct vpmu_exit *x);
/* An MSR exit, nothing injected, RIP not moved: 0 with *verdict set, or an errno. */
int	vpmu__vcpu_msr(struct vpmu_vm *vm, unsigned cpu, bool write, uint32_t index,
	    uint64_t *data, enum vpmu_msr_verdict *verdict);

/* vm.c */
const struct vpmu_classdesc *vpmu__class_find(const struct vpmu_vm *vm, uint32_t cls);
const struct vpmu_classdesc *vpmu__class_of_row(const struct vpmu_vm *vm, unsigned row);
void	vpmu__notify(struct vpmu_vm *vm, int32_t pid, int sig);
int	vpmu__cred_check(const struct vpmu_cred *c);

/* log.c */
/*
 * The host TSC's rate in Hz, measured once per process (a busy-wait of
 * some 5 ms the first time): first called with no lock held.
 */
uint64_t vpmu__tsc_hz(void);
struct vpmu_pmclog_ev;
void	vpmu__log_emit(struct vpmu_vm *vm, struct vpmu_owner *o, struct vpmu_pmclog_ev *ev);
/*
 * Closing a log takes two steps: detach (VM lock held: CLOSELOG emitted,
 * the log taken from its owner; NULL if o has none), then finish (no lock
 * held: waits for the writer's end; its first write error).  Callers that
 * hold the VM lock for a whole call keep the detached logs on a list
 * (vpmu__log_defer) and finish them after they drop it.  Before the
 * detach, the caller moves the samples in with vpmu__sample_drain(),
 * without the VM lock.
 */
struct vpmu_log *vpmu__log_detach(struct vpmu_vm *vm, struct vpmu_owner *o);
int	vpmu__log_finish(struct vpmu_log *l);
void	vpmu__log_defer(struct vpmu_log **list, struct vpmu_log *l);
void	vpmu__log_finish_all(struct vpmu_log *list);
/* CONFIGURELOG, FLUSHLOG, CLOSELOG: vpmu_vm_op() calls it WITHOUT the VM lock. */
int	vpmu__log_op(struct vpmu_vm *vm, const struct vpmu_cred *cr, int op, void *arg);
/* The snapshot blob's CRC-32 of n bytes (vpmu_crc32(), <vpmu/snapshot.h>). */
static inline uint32_t
vpmu__crc32(const uint8_t *p, size_t n)
{
	return (vpmu_crc32(0, p, n));
}
/*
 * A log's system calls and its writer thread, before the VM lock:
 * prepare (fd checked and duplicated, buffers, writer; EBADF, EMFILE,
 * ENOMEM, EAGAIN), then either vpmu__log_configure() gives it to an owner
 * under the lock, or vpmu__log_discard() undoes it with no lock held
 * (NULL: nothing).
 */
int	vpmu__log_prepare(struct vpmu_vm *vm, int fd, struct vpmu_log **lp);
void	vpmu__log_discard(struct vpmu_log *l);
/* Snapshot restore: a prepared log to its owner, VM lock held (logfd >= 0). */
int	vpmu__log_configure(struct vpmu_vm *vm, const struct vpmu_cred *cr,
	    const struct vpmu_op_configurelog *cl, struct vpmu_log **prep);
/* The file the log writes (its device and inode), for snapshots; false: unknown. */
bool	vpmu__log_file(const struct vpmu_log *l, uint64_t *dev, uint64_t *ino);
int	vpmu_do_op_writelog(struct vpmu_vm *, const struct vpmu_cred *, void *);

/* pmc.c, pmc_row.c, pmc_report.c: the op bodies (vpmu_vm_op(), lock held) */
struct vpmu_owner *vpmu__owner_get(struct vpmu_vm *vm, const struct vpmu_cred *cr, bool create);
void	vpmu__owner_maybe_free(struct vpmu_vm *vm, struct vpmu_owner *o);
int	vpmu__pmc_stop(struct vpmu_vm *vm, struct vpmu_pmc *pm);
/* Records about PMC pm (attach, detach, exec...) to its owner's log. */
void	vpmu__log_pmc(struct vpmu_vm *vm, struct vpmu_pmc *pm, uint32_t type,
	    const struct vpmu_proc *p, uint64_t value);
int	vpmu_do_op_pmcallocate(struct vpmu_vm *, const struct vpmu_cred *, void *);
int	vpmu_do_op_pmcattach(struct vpmu_vm *, const struct vpmu_cred *, void *);
int	vpmu_do_op_pmcdetach(struct vpmu_vm *, const struct vpmu_cred *, void *);
int	vpmu_do_op_pmcgetmsr(struct vpmu_vm *, const struct vpmu_cred *, void *);
int	vpmu__pmc_getmsr_pv(struct vpmu_vm *, const struct vpmu_cred *, struct vpmu_op_getmsr *);
int	vpmu_do_op_pmcrelease(struct vpmu_vm *, const struct vpmu_cred *, void *);
int	vpmu_do_op_pmcrw(struct vpmu_vm *, const struct vpmu_cred *, void *);
int	vpmu_do_op_pmcsetcount(struct vpmu_vm *, const struct vpmu_cred *, void *);
int	vpmu_do_op_pmcstart(struct vpmu_vm *, const struct vpmu_cred *, void *);
/*
 * PMCSTART of a sampling PMC before the sweeper runs: nothing done, the
 * caller starts it without the VM lock (vpmu__sweeper_start()) and asks
 * again (op.c).  Not an errno.
 */
#define VPMU__ESWEEPER	0x10000
int	vpmu_do_op_pmcstop(struct vpmu_vm *, const struct vpmu_cred *, void *);
int	vpmu_do_op_pmcadmin(struct vpmu_vm *, const struct vpmu_cred *, void *);
int	vpmu_do_op_getpmcinfo(struct vpmu_vm *, const struct vpmu_cred *, void *);
struct vpmu_pmc *vpmu__pmc_by_id(struct vpmu_vm *vm, int32_t owner, vpmu_pmc_id id);
void	vpmu__pmc_release(struct vpmu_vm *vm, struct vpmu_pmc *pm);

/* pmc_model.c: the PMCs behind guest-visible MSR counters */
int	vpmu__model_pmc_create(struct vpmu_vm *vm, unsigned cpu, uint32_t cls,
	    unsigned idx, struct vpmu_pmc **pmp);
int	vpmu__model_pmc_program(struct vpmu_vm *vm, struct vpmu_pmc *pm,
	    const struct vpmu_event_spec *spec, bool run);
uint64_t vpmu__model_pmc_value(struct vpmu_vm *vm, struct vpmu_pmc *pm,
	    struct vpmu_count *times);
void	vpmu__model_pmc_set(struct vpmu_vm *vm, struct vpmu_pmc *pm, uint64_t value);

/*
 * count.c: the host slots behind PMCs and the per-vCPU multiplexing
 * scheduler.  activate: pm wants to count on cpu (it gets a slot now if
 * one is free, else at a rotation); deactivate: it stops wanting to (its
 * events go to pm->counted and, for a process PMC, to the process on the
 * vCPU; returned too).
 */
int	vpmu__hw_activate(struct vpmu_vm *vm, struct vpmu_pmc *pm, unsigned cpu);
uint64_t vpmu__hw_deactivate(struct vpmu_vm *vm, struct vpmu_pmc *pm, unsigned cpu);
void	vpmu__hw_close_all(struct vpmu_vm *vm, struct vpmu_pmc *pm);
/* The vCPU ran ns more: times of its active PMCs; a rotation if one is due. */
void	vpmu__vcpu_advance(struct vpmu_vm *vm, unsigned cpu, uint64_t run_ns, uint64_t ns);
/*
 * Something on cpu follows its run time: a PMC waits for a host counter
 * (multiplexed: the windows rotate by run time), or a PMC counts a time
 * event.  VM lock held.
 */
bool	vpmu__vcpu_run_timed(struct vpmu_vm *vm, unsigned cpu);
uint64_t vpmu__vcpu_clock(struct vpmu_vm *vm, unsigned cpu, uint64_t run_ns);
/* Events counted since base, with what is counting now. */
uint64_t vpmu__pmc_counted(struct vpmu_vm *vm, struct vpmu_pmc *pm);
/* The value a guest reads: base + the scaled estimate, monotonic. */
uint64_t vpmu__pmc_estimate(struct vpmu_vm *vm, struct vpmu_pmc *pm);
/* A write: a new base, counts and times since it start again. */
void	vpmu__pmc_set_base(struct vpmu_vm *vm, struct vpmu_pmc *pm, uint64_t v);
/*
 * Tell the source the events pm has left (its next sample, its guest
 * counter's wrap) on every slot it holds: after a sample (sample.c).
 */
void	vpmu__pmc_arm(struct vpmu_vm *vm, struct vpmu_pmc *pm);
/* Before the vCPU runs: share the slots out again if the demand changed. */
void	vpmu__vcpu_prepare(struct vpmu_vm *vm, unsigned cpu);
/*
 * VM lock held, and held again on return: the host counters that slots
 * wait for (vm->nopening) opened with the lock dropped, then given to
 * their slots.  0, or the first transient error (that slot given back).
 */
int	vpmu__hc_open(struct vpmu_vm *vm);
/* No lock held: the counters of a list taken from vm->closing closed. */
void	vpmu__hc_close_list(struct vpmu_vm *vm, struct vpmu_hctr *list);
/* Events pm->hw[idx] counted in its host slot so far, not yet in pm->counted. */
uint64_t vpmu__hw_peek(struct vpmu_vm *vm, struct vpmu_pmc *pm, unsigned idx);
/* Some active hw of pm has no slot. */
bool	vpmu__pmc_waiting(const struct vpmu_pmc *pm);
/* A time event (task-clock, cpu-clock): the core counts it, not the source. */
bool	vpmu__event_timed(const struct vpmu_event_spec *spec);
/*
 * 0 if the VM can count spec: the core a time event, else its source (why).
 * VM lock held: the source's answer is the one vpmu__pmc_ask() kept; an
 * event not asked about before the lock was taken is asked about with the
 * lock held, the one fallback (a VM that asked about more than
 * VPMU__NANSWERS events between the ask and the lock).
 */
int	vpmu__pmc_supports(struct vpmu_vm *vm, const struct vpmu_event_spec *spec,
	    char *why, size_t whylen);
/* The same, VM lock NOT held (asked first, then answered under the lock). */
int	vpmu__pmc_supports_unlocked(struct vpmu_vm *vm, const struct vpmu_event_spec *spec,
	    char *why, size_t whylen);
/*
 * VM lock NOT held: the source asked whether it can count spec (its
 * supports() may make system calls: perf_event_open), unless the VM kept
 * an answer; the answer kept for vpmu__pmc_supports().
 */
void	vpmu__pmc_ask(struct vpmu_vm *vm, const struct vpmu_event_spec *spec);
/* pmc.c: the event a PMCALLOCATE request asks for (EINVAL: none). */
int	vpmu__pmc_spec_of(const struct vpmu_pmc_alloc *a, struct vpmu_event_spec *sp);
/* Recompute the vCPU's time_left (after its time sampling PMCs changed). */
void	vpmu__vcpu_time_due(struct vpmu_vm *vm, unsigned cpu);

/* proc.c */
struct vpmu_proc *vpmu__proc_find(struct vpmu_vm *vm, int32_t pid);
int	vpmu__attach_one(struct vpmu_vm *vm, struct vpmu_pmc *pm, struct vpmu_proc *p);
/* notify: tell the owner (SIGIO) if pm loses its last target; not on a rollback */
int	vpmu__detach_one(struct vpmu_vm *vm, struct vpmu_pmc *pm, struct vpmu_proc *p,
	    bool notify);
int	vpmu__load(struct vpmu_vm *vm, unsigned cpu, struct vpmu_pmc *pm);
void	vpmu__unload(struct vpmu_vm *vm, unsigned cpu, unsigned row);
bool	vpmu__can_debug(const struct vpmu_vm *vm, const struct vpmu_cred *caller,
	    const struct vpmu_proc *target);
void	vpmu__procs_free(struct vpmu_vm *vm);

/*
 * The VM lock.  It is taken on trapped accesses that touch a core PMC and
 * held for well under a microsecond, never across a guest run or a sleep, so it is a
 * test-and-set lock: an uncontended take is one atomic exchange (a pthread
 * mutex costs some 50 instructions there, a third of the trap path).  A
 * waiter spins briefly, then yields the CPU to the holder.
 */
void	vpmu__vm_lock_wait(struct vpmu_vm *vm);

/* One turn of a spin loop: pause for the first 128, then give the CPU away. */
static inline void
vpmu__spin_wait(unsigned *spins)
{
	if (++*spins < 128)
		__builtin_ia32_pause();
	else
		sched_yield();
}

/*
 * The calling thread's thread pointer, which the x86-64 TLS ABI keeps at
 * %fs:0: one mov, never 0, one per live thread.  The lock word holds its
 * holder's, so that "this thread holds the lock" can be asked
 * (vpmu__vm_held(): the unit tests' check that no system call runs under
 * it, test_nolock_syscalls.c).
 */
static inline uintptr_t
vpmu__self(void)
{
	uintptr_t tp;

	__asm__("mov %%fs:0, %0" : "=r"(tp));
	return (tp);
}

/* The VM lock if it is free now: true when taken. */
static inline bool
vpmu__vm_trylock(struct vpmu_vm *vm)
{
	return (__atomic_load_n(&vm->lock, __ATOMIC_RELAXED) == 0 &&
	    __atomic_exchange_n(&vm->lock, vpmu__self(), __ATOMIC_ACQUIRE) == 0);
}

static inline void
vpmu__vm_lock(struct vpmu_vm *vm)
{
	if (__atomic_exchange_n(&vm->lock, vpmu__self(), __ATOMIC_ACQUIRE) != 0)
		vpmu__vm_lock_wait(vm);
}

/* The calling thread holds the VM lock. */
static inline bool
vpmu__vm_held(const struct vpmu_vm *vm)
{
	return (__atomic_load_n(&vm->lock, __ATOMIC_RELAXED) == vpmu__self());
}

/* The lock given back, and nothing else. */
static inline void
vpmu__vm_release(struct vpmu_vm *vm)
{
	__atomic_store_n(&vm->lock, 0, __ATOMIC_RELEASE);
}

/*
 * vm.c: the release's work, for vpmu__vm_unlock(): the host counters
 * asked for opened (the lock dropped meanwhile) and given their slots,
 * then, the lock given back, the closed ones closed and the sweeper woken.
 * Returns the first transient error of the opens (vpmu__hc_open()).
 */
int	vpmu__vm_unlock_work(struct vpmu_vm *vm);

/*
 * No system call runs under the VM lock: what needs one is left for the
 * release (vm->nopening, vm->after), which does it around or after giving
 * the lock back.
 */
static inline void
vpmu__vm_unlock(struct vpmu_vm *vm)
{
	if (vm->nopening != 0 || vm->after != 0)
		(void)vpmu__vm_unlock_work(vm);
	else
		vpmu__vm_release(vm);
}

/*
 * The same, for an entry point that returns an error: error, else the
 * first transient error of the host counters opened at the release (the
 * PMC that asked for one waits for a slot, and asks again before its
 * vCPU's next entry).
 */
static inline int
vpmu__vm_unlock_err(struct vpmu_vm *vm, int error)
{
	int e = 0;

	if (vm->nopening != 0 || vm->after != 0)
		e = vpmu__vm_unlock_work(vm);
	else
		vpmu__vm_release(vm);
	return (error != 0 ? error : e);
}

#endif /* VPMU_INTERNAL_H */
