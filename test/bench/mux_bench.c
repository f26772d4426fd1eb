/*
 * mux_bench -- the multiplexing benchmark of issue 4: how close a
 * multiplexed virtual counter's scaled estimate comes to the truth, and
 * what the rotations cost per vCPU exit.
 *
 *   mux_bench [-n INSNS] [-r REPS] [-i US] [-c ROUNDS] [-N INSNS] [-L N]
 *             [-A|-C] [-v] [-h] MUX_GUEST.elf
 *
 * The harness is the VMM (it reuses vpmu-run's boot.c and elf.c, compiled
 * in) and runs mux_guest.elf on one vCPU, model intel-v2:gp=8, on the
 * exact source (KVM single-step; CPI 3, ref-cycles 2 per instruction, so
 * that CMASK, INV and EDGE give counts of their own).  Each configuration is
 * a VM of its own, made with vpmu_config_set_capacity() and
 * vpmu_config_set_mux_interval(); all of them run in this one process.
 *
 * Accuracy.  Sixteen virtual counters cannot be guest-visible MSR counters
 * (intel-v2 has at most 8 GP + 3 fixed), so the 8- and 16-counter cases
 * use system-scope counting PMCs of the paravirtual class on vCPU 0,
 * allocated by this harness as a privileged caller: the VMM's own host API
 * on the same vCPU's slots.  They are started at the guest's
 * MUX_CTL_START port write and stopped at MUX_CTL_END; the host reads
 * vpmu_pmc_get_count() (unscaled count, enabled and running ns) and
 * vpmu_pmc_read() (the scaled estimate a reader gets).  The 8-counter case
 * is also run the guest's way: the guest programs IA32_PMC0..7 itself,
 * enables them with one GLOBAL_CTRL write (a group of 8 on 4 host
 * counters: scheduled in pieces) and reads them with RDMSR; the host's
 * vpmu_vcpu_get_counters() gives raw count and times.
 * Ground truth is the same guest and counters with capacity 0 (every
 * counter always runs): the exact source is deterministic, so the truth
 * run's counts are what an unmultiplexed counter counts (checked: two
 * truth rounds must agree, and their estimates equal their raw counts).
 * Each multiplexed configuration runs REPS rounds (default 3) of about
 * INSNS (default 100000) guest instructions: the windows depend on
 * measured KVM_RUN time, so rounds differ; the tables give round 1 per
 * counter and the largest error over the rounds.
 *
 * Cost.  Three VMs with the same 16 PMCs run the steady workload in
 * alternating rounds (one warm-up round each, then ROUNDS, default 5, of
 * about INSNS2, default 50000, instructions): capacity 0 (no
 * multiplexing), capacity 4 at the accuracy interval, capacity 4 at 50 us.
 * Every vCPU exit is timed with CLOCK_MONOTONIC around vpmu_kvm_pre_run,
 * KVM_RUN and vpmu_kvm_handle_exit.  A rotation happens
 * only inside vpmu_kvm_handle_exit (the run-time clock advances there); the
 * harness sees it as a change of which PMCs wait (vpmu_pmc_get_unsupported
 * says EBUSY), asked of all 16 after each exit, outside the timed calls.
 *
 * Load.  With -L N the harness forks N CPU-bound processes (a busy loop
 * each, at the harness's own nice value, unpinned) before the first VM and
 * keeps them running beside the accuracy and cost parts; they are killed
 * and reaped before it exits, on error exits too, and die with it if it is
 * killed (PR_SET_PDEATHSIG).  The headers and the summary say the load; the
 * RESULT lines end in a field load=N (N = 0 without -L).
 *
 * Verdict.  A steady configuration PASSes only if every counter with a
 * non-zero truth is within GOAL_PCT in every round (max over counters and
 * rounds) and the truth-0 counters read 0; "rounds over" counts the rounds
 * in which some counter was not.
 *
 * Exit status: 0; 1 host failure; 2 usage; 3 the guest misbehaved or a
 * truth check failed; 77 no usable /dev/kvm ("SKIP:" on stdout).
 */
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <math.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <sys/prctl.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>
#include <linux/kvm.h>

#include <vpmu/model.h>

#include "vpmu-run.h"
#include "mux_proto.h"

#define PROG		"mux_bench"
#define MiB		(1ull << 20)
#define RAM_SIZE	(16 * MiB)
#define TSS_ADDR_KVM	0xfffbd000ul
#define EXIT_SKIP	77
#define CAPACITY	4
#define COST_FAST_NS	50000ull
#define GOAL_PCT	2.0
#define NELEM(a)	(sizeof(a) / sizeof((a)[0]))

static const struct vpmu_cred host = { .pid = 1, .privileged = 1 };

/* ---- the sixteen counters ---------------------------------------------------- */

struct evdef {
	uint8_t ev, um, usr, os, edge, inv, cmask;
	const char *name;
};
#define EVDEF(ev, um, u, o, e, i, c, name)	{ ev, um, u, o, e, i, c, name },
static const struct evdef evdefs[MUX_NEV] = { MUX_EVENTS(EVDEF) };
#undef EVDEF

/* Why a counter's truth is 0 (the table marks it), or NULL. */
static const char *
zero_reason(const struct evdef *d)
{
	if (!d->os)
		return ("CPL3 only: never stepped");
	if (d->cmask >= 2 && !d->inv)
		return ("CMASK 2 > 1 event/cycle");
	return (NULL);
}

static uint32_t
event_of(const struct evdef *d)
{
	switch (d->ev) {
	case 0xc0:
		return (VPMU_EV_INSTRUCTIONS);
	case 0xc4:
		return (VPMU_EV_BRANCHES);
	case 0x3c:
		return (d->um == 1 ? VPMU_EV_REF_CYCLES : VPMU_EV_CYCLES);
	}
	return (VPMU_EV_NONE);
}

/* ---- the load beside it --------------------------------------------------------- */

#define MAX_LOAD	64
static pid_t load_pid[MAX_LOAD];
static unsigned nload;

/* "2 CPU-bound processes beside it (nice 0)" or "none". */
static const char *
load_desc(void)
{
	static char buf[80];

	if (nload == 0)
		return ("none");
	snprintf(buf, sizeof(buf), "%u CPU-bound process%s beside it (nice %d)", nload,
	    nload == 1 ? "" : "es", getpriority(PRIO_PROCESS, 0));
	return (buf);
}

/* Kill and reap the load; idempotent (also an atexit handler). */
static void
load_stop(void)
{
	unsigned i;

	for (i = 0; i < nload; i++)
		if (load_pid[i] > 0)
			kill(load_pid[i], SIGKILL);
	for (i = 0; i < nload; i++)
		if (load_pid[i] > 0)
			while (waitpid(load_pid[i], NULL, 0) < 0 && errno == EINTR)
				;
	nload = 0;
}

/* Fork n busy-looping children.  0, or -1 after a message (none are left). */
static int
load_start(unsigned n)
{
	pid_t parent = getpid(), pid;
	volatile unsigned long spin = 0;
	int fd;

	fflush(NULL);
	for (nload = 0; nload < n; nload++) {
		if ((pid = fork()) < 0) {
			fprintf(stderr, PROG ": fork: %s\n", strerror(errno));
			load_stop();
			return (-1);
		}
		if (pid == 0) {
			/* Die with the harness, even if it is killed. */
			if (prctl(PR_SET_PDEATHSIG, SIGKILL) < 0 || getppid() != parent)
				_exit(1);
			if ((fd = open("/dev/null", O_RDWR)) >= 0) {
				dup2(fd, 0);
				dup2(fd, 1);
				dup2(fd, 2);
				if (fd > 2)
					close(fd);
			}
			for (;;)
				spin++;
		}
		load_pid[nload] = pid;
	}
	return (0);
}

/* ---- one VM -------------------------------------------------------------------- */

/* A counter at the end of one round. */
struct cres {
	uint64_t est;		/* what a reader gets: scaled estimate */
	uint64_t raw;		/* unscaled count */
	uint64_t en, run;	/* ns enabled, running */
	uint64_t guest;		/* model: the guest's RDMSR */
};

/* One timed exit, ns. */
struct sample {
	uint32_t pre, kvm, handle;
	uint8_t rotated;
};

struct mvm {
	const char *name;
	/* configuration */
	unsigned cap;			/* 0: unlimited */
	uint64_t mux_ns;
	bool phased, model;
	unsigned nsc;			/* SC PMCs the host allocates (0 with model) */
	unsigned rounds, insns;
	bool timing;			/* record every exit of rounds >= 1 */
	/* the VM */
	struct vr_vm *vm;
	struct vr_vcpu *c;
	vpmu_pmc_id id[MUX_NEV];
	/* run state */
	int cur;			/* round running or last run, -1 before */
	bool in_round, round_done, done;
	unsigned ndata;
	uint64_t gval[MUX_MODEL_GP];
	uint64_t prev_en[MUX_MODEL_GP], prev_run[MUX_MODEL_GP];
	unsigned waitmask;
	/* results */
	struct cres (*res)[MUX_NEV];	/* [round][counter] */
	uint64_t *rot;			/* rotations seen per round (SC only) */
	struct sample *s;
	size_t ns, scap;
};

static uint64_t
now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ((uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec);
}

static unsigned
ncounters(const struct mvm *m)
{
	return (m->model ? MUX_MODEL_GP : m->nsc);
}

/* Which PMCs wait for a host counter: changes at each rotation. */
static unsigned
waitmask(struct mvm *m)
{
	unsigned i, mask = 0;

	for (i = 0; i < m->nsc; i++)
		if (vpmu_pmc_get_unsupported(m->vm->pmu, host.pid, m->id[i], NULL, 0) == EBUSY)
			mask |= 1u << i;
	return (mask);
}

static int
round_start(struct mvm *m)
{
	unsigned i;
	int e;

	for (i = 0; i < m->nsc; i++)
		if ((e = vpmu_pmc_write(m->vm->pmu, &host, m->id[i], 0)) != 0 ||
		    (e = vpmu_pmc_start(m->vm->pmu, &host, m->id[i])) != 0) {
			fprintf(stderr, PROG ": %s: starting PMC %u: %s\n", m->name, i,
			    vpmu_strerror(e));
			return (-1);
		}
	m->waitmask = waitmask(m);
	return (0);
}

static int
round_end(struct mvm *m)
{
	struct vpmu_counter_info ci[MUX_MODEL_GP + 8];
	struct cres *r = m->res[m->cur];
	struct vpmu_count cnt;
	unsigned i, n = NELEM(ci);
	int e;

	for (i = 0; i < m->nsc; i++)
		if ((e = vpmu_pmc_stop(m->vm->pmu, &host, m->id[i])) != 0 ||
		    (e = vpmu_pmc_get_count(m->vm->pmu, host.pid, m->id[i], &cnt)) != 0 ||
		    (e = vpmu_pmc_read(m->vm->pmu, &host, m->id[i], &r[i].est)) != 0) {
			fprintf(stderr, PROG ": %s: reading PMC %u: %s\n", m->name, i,
			    vpmu_strerror(e));
			return (-1);
		} else {
			r[i].raw = cnt.value;
			r[i].en = cnt.time_enabled;
			r[i].run = cnt.time_running;
		}
	if (m->model) {
		if ((e = vpmu_vcpu_get_counters(m->vm->pmu, 0, ci, &n)) != 0 ||
		    n < MUX_MODEL_GP) {
			fprintf(stderr, PROG ": %s: vpmu_vcpu_get_counters: %s\n", m->name,
			    vpmu_strerror(e != 0 ? e : EINVAL));
			return (-1);
		}
		/* IA32_PMC0..7 come first; times are over the counter's life. */
		for (i = 0; i < MUX_MODEL_GP; i++) {
			r[i].est = ci[i].value;
			r[i].raw = ci[i].raw;
			r[i].en = ci[i].time_enabled - m->prev_en[i];
			r[i].run = ci[i].time_running - m->prev_run[i];
			m->prev_en[i] = ci[i].time_enabled;
			m->prev_run[i] = ci[i].time_running;
		}
	}
	return (0);
}

/* ---- the guest's ports -------------------------------------------------------- */

static int
port_in(struct mvm *m, uint16_t port, uint32_t *v)
{
	switch (port) {
	case MUX_PORT_CTL:
		*v = MUX_CFG_MAKE(m->phased, m->model, m->rounds);
		return (0);
	case MUX_PORT_DATA:
		*v = m->insns;
		return (0);
	}
	return (-1);
}

static int
port_out(struct mvm *m, uint16_t port, uint32_t v)
{
	switch (port) {
	case MUX_PORT_CTL:
		switch (MUX_CTL_KIND(v)) {
		case MUX_CTL_START:
			if (MUX_CTL_ROUND(v) != (unsigned)(m->cur + 1) ||
			    MUX_CTL_ROUND(v) >= m->rounds || m->in_round)
				return (-1);
			m->cur++;
			m->in_round = true;
			m->ndata = 0;
			return (round_start(m) < 0 ? -2 : 0);
		case MUX_CTL_END:
			if (MUX_CTL_ROUND(v) != (unsigned)m->cur || !m->in_round)
				return (-1);
			m->in_round = false;
			if (round_end(m) < 0)
				return (-2);
			m->round_done = !m->model;	/* the model's values follow */
			return (0);
		}
		return (-1);
	case MUX_PORT_DATA:
		if (!m->model || m->cur < 0 || m->in_round || m->ndata >= 2 * MUX_MODEL_GP)
			return (-1);
		m->gval[m->ndata / 2] |= (uint64_t)v << (32 * (m->ndata % 2));
		if (++m->ndata == 2 * MUX_MODEL_GP) {
			for (unsigned i = 0; i < MUX_MODEL_GP; i++) {
				m->res[m->cur][i].guest = m->gval[i];
				m->gval[i] = 0;
			}
			m->round_done = true;
		}
		return (0);
	case VR_PORT_CONSOLE:
		fputc((int)(v & 0xff), stderr);
		return (0);
	case VR_PORT_EXIT:
		if ((v & 0xff) != 0) {
			fprintf(stderr, PROG ": %s: the guest exited with status %u\n", m->name,
			    v & 0xff);
			return (-1);
		}
		m->done = true;
		return (0);
	}
	return (-1);
}

static int
io(struct mvm *m)
{
	struct kvm_run *run = m->c->run;
	uint8_t *data = (uint8_t *)run + run->io.data_offset;
	uint32_t v = 0;
	unsigned i;
	int r;

	if (run->io.size > sizeof(v) || run->io.data_offset > m->vm->run_size ||
	    (size_t)run->io.size * run->io.count > m->vm->run_size - run->io.data_offset)
		return (-1);
	for (i = 0; i < run->io.count; i++, data += run->io.size) {
		if (run->io.direction == KVM_EXIT_IO_IN) {
			if (port_in(m, run->io.port, &v) < 0)
				return (-1);
			memcpy(data, &v, run->io.size);
		} else {
			v = 0;
			memcpy(&v, data, run->io.size);
			if ((r = port_out(m, run->io.port, v)) < 0)
				return (r);
		}
	}
	return (0);
}

/* ---- the run loop --------------------------------------------------------------- */

static void
guest_fail(struct mvm *m, const char *what)
{
	struct kvm_regs regs;

	if (ioctl(m->c->fd, KVM_GET_REGS, &regs) == 0)
		fprintf(stderr, PROG ": %s: %s (exit reason %u, round %d) at RIP %#llx\n",
		    m->name, what, m->c->run->exit_reason, m->cur,
		    (unsigned long long)regs.rip);
	else
		fprintf(stderr, PROG ": %s: %s (exit reason %u, round %d)\n", m->name, what,
		    m->c->run->exit_reason, m->cur);
}

static int
record(struct mvm *m, const uint64_t t[4], bool rotated)
{
	struct sample *grown;

	if (m->ns == m->scap) {
		m->scap = m->scap ? 2 * m->scap : 65536;
		if ((grown = realloc(m->s, m->scap * sizeof(*grown))) == NULL)
			return (-1);
		m->s = grown;
	}
	m->s[m->ns++] = (struct sample){ (uint32_t)(t[1] - t[0]), (uint32_t)(t[2] - t[1]),
	    (uint32_t)(t[3] - t[2]), rotated };
	return (0);
}

/*
 * Run until the current round's results are in (until = true) or the
 * guest exits.  0, or an exit status.
 */
static int
run(struct mvm *m, bool until)
{
	struct kvm_run *r = m->c->run;
	uint64_t t[4];
	unsigned mask;
	bool handled, in_round, rotated;
	int err;

	m->round_done = false;
	while (!m->done && !(until && m->round_done)) {
		in_round = m->in_round;
		t[0] = now_ns();
		if ((err = vpmu_kvm_pre_run(m->vm->k, 0)) != 0) {
			fprintf(stderr, PROG ": vpmu_kvm_pre_run: %s\n", vpmu_strerror(err));
			return (VR_EXIT_HOST);
		}
		t[1] = now_ns();
		if (ioctl(m->c->fd, KVM_RUN, 0) < 0) {
			if (errno == EINTR || errno == EAGAIN)
				continue;
			fprintf(stderr, PROG ": KVM_RUN: %s\n", strerror(errno));
			return (VR_EXIT_HOST);
		}
		t[2] = now_ns();
		if ((err = vpmu_kvm_handle_exit(m->vm->k, 0, &handled)) != 0) {
			fprintf(stderr, PROG ": vpmu_kvm_handle_exit: %s\n", vpmu_strerror(err));
			return (VR_EXIT_HOST);
		}
		t[3] = now_ns();
		rotated = false;
		if (in_round && m->nsc > CAPACITY) {
			mask = waitmask(m);
			rotated = mask != m->waitmask;
			m->waitmask = mask;
			m->rot[m->cur] += rotated;
		}
		if (in_round && m->timing && m->cur >= 1 && record(m, t, rotated) < 0) {
			fprintf(stderr, PROG ": %s\n", strerror(ENOMEM));
			return (VR_EXIT_HOST);
		}
		if (handled)
			continue;
		switch (r->exit_reason) {
		case KVM_EXIT_IO:
			if ((err = io(m)) == -2)
				return (VR_EXIT_HOST);
			if (err < 0) {
				guest_fail(m, "port access outside the benchmark protocol");
				return (VR_EXIT_GUEST);
			}
			break;
		default:
			guest_fail(m, "unexpected exit");
			return (VR_EXIT_GUEST);
		}
	}
	return (0);
}


static int
alloc_pmcs(struct mvm *m)
{
	struct vpmu_pmc_alloc a;
	const struct evdef *d;
	unsigned i;
	int e;

	for (i = 0; i < m->nsc; i++) {
		d = &evdefs[i];
		memset(&a, 0, sizeof(a));
		a.cls = VPMU_CLASS_PV;
		a.mode = VPMU_MODE_SC;
		a.cpu = 0;
		a.event = event_of(d);
		a.caps = (d->usr ? VPMU_CAP_USER : 0) | (d->os ? VPMU_CAP_SYSTEM : 0) |
		    (d->edge ? VPMU_CAP_EDGE : 0) | (d->inv ? VPMU_CAP_INVERT : 0) |
		    (d->cmask ? VPMU_CAP_THRESHOLD : 0);
		a.cmask = d->cmask;
		if ((e = vpmu_pmc_allocate(m->vm->pmu, &host, &a)) != 0) {
			fprintf(stderr, PROG ": %s: allocating PMC %u (%s): %s\n", m->name, i,
			    d->name, vpmu_strerror(e));
			return (-1);
		}
		m->id[i] = a.pmcid;
	}
	return (0);
}

/* The VM in <vpmu/kvm.h>'s order.  0, or an exit status after a message. */
static int
setup(struct mvm *m, const char *guest)
{
	static const struct vpmu_exact_params xp = { .cpi = 3, .ref_cpi = 2,
	    .vendor = VPMU_VENDOR_INTEL };
	struct kvm_userspace_memory_region region;
	struct kvm_cpuid2 *cpuid;
	struct vpmu_model model;
	struct vr_vm *vm;
	struct vr_vcpu *c;
	struct vr_image img;
	vpmu_config *cfg = NULL;
	uint8_t *file;
	size_t flen;
	unsigned max;
	char err[256];
	long api;
	int e;

	if ((m->vm = vm = calloc(1, sizeof(*vm))) == NULL ||
	    (m->res = calloc(m->rounds, sizeof(*m->res))) == NULL ||
	    (m->rot = calloc(m->rounds, sizeof(*m->rot))) == NULL) {
		fprintf(stderr, PROG ": %s\n", strerror(ENOMEM));
		return (VR_EXIT_HOST);
	}
	m->c = c = &vm->vcpu[0];
	m->cur = -1;
	vm->kvm_fd = vm->vm_fd = c->fd = -1;
	vm->nvcpus = 1;
	vm->ram_size = RAM_SIZE;
	vm->ram = mmap(NULL, vm->ram_size, PROT_READ | PROT_WRITE,
	    MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
	if (vm->ram == MAP_FAILED) {
		fprintf(stderr, PROG ": guest RAM: %s\n", strerror(errno));
		return (VR_EXIT_HOST);
	}
	if (vr_elf_read(guest, &file, &flen, err, sizeof(err)) < 0 ||
	    vr_elf_load(file, flen, vm->ram, vm->ram_size, &img, err, sizeof(err)) < 0) {
		fprintf(stderr, PROG ": %s: %s\n", guest, err);
		free(file);
		return (VR_EXIT_USAGE);
	}
	free(file);
	vr_boot_tables(vm->ram);

	if ((vm->kvm_fd = open("/dev/kvm", O_RDWR | O_CLOEXEC)) < 0 ||
	    ioctl(vm->kvm_fd, KVM_GET_API_VERSION, 0) != 12) {
		printf("SKIP: /dev/kvm: %s\n", vm->kvm_fd < 0 ? strerror(errno) :
		    "not KVM API 12");
		return (EXIT_SKIP);
	}
	if ((e = vpmu_model_parse("intel-v2:gp=8", &model, err, sizeof(err))) != 0 ||
	    (e = vpmu_config_create(&cfg)) != 0 ||
	    (e = vpmu_config_set_vcpus(cfg, 1)) != 0 ||
	    (e = vpmu_config_set_model(cfg, &model)) != 0 ||
	    (e = vpmu_config_set_source(cfg, &vpmu_source_exact, (void *)&xp)) != 0 ||
	    (e = vpmu_config_set_capacity(cfg, m->cap)) != 0 ||
	    (e = vpmu_config_set_mux_interval(cfg, m->mux_ns)) != 0 ||
	    (e = vpmu_vm_create(cfg, &vm->pmu)) != 0) {
		fprintf(stderr, PROG ": libvpmu set-up: %s\n", vpmu_strerror(e));
		vpmu_config_destroy(cfg);
		return (VR_EXIT_HOST);
	}
	vpmu_config_destroy(cfg);
	if ((vm->vm_fd = ioctl(vm->kvm_fd, KVM_CREATE_VM, 0)) < 0) {
		printf("SKIP: KVM_CREATE_VM: %s\n", strerror(errno));
		return (EXIT_SKIP);
	}
	if ((e = vpmu_kvm_create(vm->pmu, vm->vm_fd, &vm->k)) != 0) {
		fprintf(stderr, PROG ": vpmu_kvm_create: %s\n", vpmu_strerror(e));
		return (VR_EXIT_HOST);
	}
	memset(&region, 0, sizeof(region));
	region.memory_size = vm->ram_size;
	region.userspace_addr = (uintptr_t)vm->ram;
	if (ioctl(vm->vm_fd, KVM_SET_TSS_ADDR, TSS_ADDR_KVM) < 0 ||
	    ioctl(vm->vm_fd, KVM_SET_USER_MEMORY_REGION, &region) < 0 ||
	    (api = ioctl(vm->kvm_fd, KVM_GET_VCPU_MMAP_SIZE, 0)) <= 0) {
		fprintf(stderr, PROG ": VM set-up: %s\n", strerror(errno));
		return (VR_EXIT_HOST);
	}
	vm->run_size = (size_t)api;
	if ((e = vpmu_kvm_add_memory(vm->k, 0, vm->ram_size, vm->ram)) != 0) {
		fprintf(stderr, PROG ": vpmu_kvm_add_memory: %s\n", vpmu_strerror(e));
		return (VR_EXIT_HOST);
	}
	c->vm = vm;
	c->index = 0;
	/* The vCPU, as vpmu-run sets one up (boot.c). */
	if ((cpuid = vr_supported_cpuid(vm->kvm_fd, &max)) == NULL) {
		fprintf(stderr, PROG ": KVM_GET_SUPPORTED_CPUID: %s\n", strerror(errno));
		return (VR_EXIT_HOST);
	}
	e = vr_vcpu_setup(vm, c, cpuid, max, &img);
	free(cpuid);
	if (e < 0)
		return (VR_EXIT_HOST);
	if ((e = vpmu_vcpu_set_thread(vm->pmu, 0, gettid())) != 0) {
		fprintf(stderr, PROG ": vCPU for libvpmu: %s\n", vpmu_strerror(e));
		return (VR_EXIT_HOST);
	}
	return (alloc_pmcs(m) < 0 ? VR_EXIT_HOST : 0);
}

static void
teardown(struct mvm *m)
{
	struct vr_vm *vm = m->vm;

	if (vm != NULL) {
		if (vm->k != NULL)
			vpmu_kvm_destroy(vm->k);
		if (vm->vcpu[0].run != NULL)
			munmap(vm->vcpu[0].run, vm->run_size);
		if (vm->vcpu[0].fd >= 0)
			close(vm->vcpu[0].fd);
		if (vm->vm_fd >= 0)
			close(vm->vm_fd);
		if (vm->kvm_fd >= 0)
			close(vm->kvm_fd);
		vpmu_vm_destroy(vm->pmu);
		if (vm->ram != NULL && vm->ram != MAP_FAILED)
			munmap(vm->ram, vm->ram_size);
		free(vm);
	}
	free(m->res);
	free(m->rot);
	free(m->s);
	m->vm = NULL;
	m->res = NULL;
	m->rot = NULL;
	m->s = NULL;
}

/* Set up and run m to the guest's exit.  0, or an exit status. */
static int
run_whole(struct mvm *m, const char *guest)
{
	int ret;

	if ((ret = setup(m, guest)) != 0 || (ret = run(m, false)) != 0)
		return (ret);
	if (m->cur != (int)m->rounds - 1 || m->in_round) {
		fprintf(stderr, PROG ": %s: the guest ran %d of %u rounds\n", m->name,
		    m->cur + 1, m->rounds);
		return (VR_EXIT_GUEST);
	}
	return (0);
}

/* ---- accuracy -------------------------------------------------------------------- */

static double
err_pct(uint64_t est, uint64_t truth)
{
	if (truth == 0)
		return (est == 0 ? 0.0 : INFINITY);
	return (100.0 * ((double)est - (double)truth) / (double)truth);
}

/* A configuration's summary for the last table. */
struct summary {
	char what[48];
	double max_abs, mean_abs;	/* over counters with truth != 0, all rounds */
	unsigned worst;
	bool zero_ok;			/* truth-0 counters read 0 */
	double run_pct;			/* mean running / enabled */
	unsigned starved;		/* counters that never ran in some round */
	double rot;			/* mean rotations per round, -1 unknown */
	unsigned rounds, rounds_over;	/* rounds; those with a counter over the goal */
};

#define MAX_SUMMARY	32
static struct summary summaries[MAX_SUMMARY];
static unsigned nsummary;

/*
 * Compare a multiplexed VM's rounds with the truth; print the per-counter
 * table if detail.
 */
static void
compare(const struct mvm *m, const struct cres *truth, const char *what, bool detail,
    bool verbose)
{
	struct summary *s = nsummary < MAX_SUMMARY ? &summaries[nsummary++] : NULL;
	unsigned n = ncounters(m), i, r, nz = 0;
	double e, maxe[MUX_NEV] = { 0 }, sum = 0, runsum = 0;
	const struct cres *c;
	const char *z;
	bool zero_ok = true, never;
	uint64_t rot = 0;
	unsigned starved = 0, rounds_over = 0;

	/* Strict: a round is over if any counter in it misses the goal. */
	for (r = 0; r < m->rounds; r++)
		for (i = 0; i < n; i++) {
			c = &m->res[r][i];
			if (truth[i].est == 0 ? c->est != 0 || c->raw != 0 :
			    !(fabs(err_pct(c->est, truth[i].est)) <= GOAL_PCT)) {
				rounds_over++;
				break;
			}
		}
	for (i = 0; i < n; i++) {
		never = false;
		for (r = 0; r < m->rounds; r++) {
			c = &m->res[r][i];
			runsum += c->en ? (double)c->run / (double)c->en : 0;
			never = never || c->run == 0;
			if (truth[i].est == 0) {
				zero_ok = zero_ok && c->est == 0 && c->raw == 0;
				continue;
			}
			e = fabs(err_pct(c->est, truth[i].est));
			if (e > maxe[i])
				maxe[i] = e;
			sum += e;
			nz++;
		}
		starved += never;
	}
	for (r = 0; r < m->rounds; r++)
		rot += m->rot[r];
	if (s != NULL) {
		snprintf(s->what, sizeof(s->what), "%s", what);
		s->max_abs = 0;
		s->worst = 0;
		for (i = 0; i < n; i++)
			if (maxe[i] > s->max_abs) {
				s->max_abs = maxe[i];
				s->worst = i;
			}
		s->mean_abs = nz ? sum / nz : 0;
		s->zero_ok = zero_ok;
		s->run_pct = 100.0 * runsum / (n * m->rounds);
		s->starved = starved;
		s->rot = m->nsc > CAPACITY ? (double)rot / m->rounds : -1;
		s->rounds = m->rounds;
		s->rounds_over = rounds_over;
	}
	if (!detail)
		return;
	printf("\n%s\n", what);
	for (r = 0; r < (verbose ? m->rounds : 1); r++) {
		printf("  round %u of %u:\n", r + 1, m->rounds);
		printf("  %2s %-27s %9s %9s %9s %8s %8s %5s %8s %8s\n", "#", "counter", "truth",
		    m->model ? "RDMSR" : "estimate", "unscaled", "enabled", "running", "ran",
		    "error", "max|err|");
		printf("  %2s %-27s %9s %9s %9s %8s %8s %5s %8s %8s\n", "", "", "", "", "",
		    "ms", "ms", "%", "%", "%");
		for (i = 0; i < n; i++) {
			c = &m->res[r][i];
			printf("  %2u %-27s %9" PRIu64 " %9" PRIu64 " %9" PRIu64 " %8.2f %8.2f %5.1f",
			    i, evdefs[i].name, truth[i].est, m->model ? c->guest : c->est, c->raw,
			    c->en / 1e6, c->run / 1e6, c->en ? 100.0 * c->run / c->en : 0);
			if (truth[i].est == 0) {
				z = zero_reason(&evdefs[i]);
				printf(" %8s %8s  0 in truth%s%s%s\n",
				    c->est == 0 ? "=0" : "NOT 0", "", z ? " (" : "", z ? z : "",
				    z ? ")" : "");
			} else
				printf(" %+8.3f %8.3f\n", err_pct(c->est, truth[i].est), maxe[i]);
		}
		if (m->rot[r] != 0 || m->nsc > CAPACITY)
			printf("  rotations seen in this round: %" PRIu64 "\n", m->rot[r]);
	}
}

/* The truth run's own checks: rounds agree, nothing scaled, all ran. */
static int
check_truth(const struct mvm *m)
{
	unsigned n = ncounters(m), i, r;
	const struct cres *c, *c0;

	for (r = 0; r < m->rounds; r++)
		for (i = 0; i < n; i++) {
			c = &m->res[r][i];
			c0 = &m->res[0][i];
			if (c->est != c->raw || c->en != c->run || c->est != c0->est ||
			    (m->model && c->guest != c->est) ||
			    (zero_reason(&evdefs[i]) != NULL) != (c->est == 0)) {
				fprintf(stderr, PROG ": %s: truth check failed, round %u counter "
				    "%u (%s): est %" PRIu64 " raw %" PRIu64 " en %" PRIu64
				    " run %" PRIu64 " guest %" PRIu64 ", round 1 %" PRIu64 "\n",
				    m->name, r, i, evdefs[i].name, c->est, c->raw, c->en,
				    c->run, c->guest, c0->est);
				return (VR_EXIT_GUEST);
			}
		}
	return (0);
}

/* The model's guest-read values must be what the host sees. */
static int
check_model(const struct mvm *m)
{
	unsigned i, r;

	for (r = 0; r < m->rounds; r++)
		for (i = 0; i < MUX_MODEL_GP; i++)
			if (m->res[r][i].guest != m->res[r][i].est) {
				fprintf(stderr, PROG ": %s: round %u IA32_PMC%u: guest read %"
				    PRIu64 ", host value %" PRIu64 "\n", m->name, r, i,
				    m->res[r][i].guest, m->res[r][i].est);
				return (VR_EXIT_GUEST);
			}
	return (0);
}

struct opts {
	unsigned insns, reps, mux_us, cost_rounds, cost_insns;
	unsigned load;
	bool accuracy, cost, verbose;
	const char *guest;
};

static int
accuracy(const struct opts *o)
{
	static const unsigned sweep_us[] = { 100, 4000 };
	struct cres truth16[MUX_NEV], truth_model[MUX_NEV];
	struct mvm m;
	char what[160];
	int phased, ret = 0, k;
	unsigned i, nsteady, nover;

	printf("== multiplexing accuracy: model intel-v2:gp=8, exact source (CPI 3, ref 2), "
	    "1 vCPU, %u host counters, mux interval %u us of vCPU run time ==\n",
	    CAPACITY, o->mux_us);
	printf("load: %s\n", load_desc());
	nsummary = 0;
	for (phased = 0; phased < 2 && ret == 0; phased++) {
		const char *wl = phased ? "phased" : "steady";

		/* Truth: 16 SC PMCs, capacity 0; two rounds must agree. */
		memset(&m, 0, sizeof(m));
		m = (struct mvm){ .name = "truth", .cap = 0, .mux_ns = o->mux_us * 1000ull,
		    .phased = phased, .nsc = MUX_NEV, .rounds = 2, .insns = o->insns };
		if ((ret = run_whole(&m, o->guest)) != 0 || (ret = check_truth(&m)) != 0) {
			teardown(&m);
			break;
		}
		memcpy(truth16, m.res[0], sizeof(truth16));
		teardown(&m);

		/* 8 and 16 SC PMCs on 4 host counters. */
		for (k = 0; k < 2 && ret == 0; k++) {
			m = (struct mvm){ .name = "mux", .cap = CAPACITY,
			    .mux_ns = o->mux_us * 1000ull, .phased = phased,
			    .nsc = k ? MUX_NEV : 8, .rounds = o->reps, .insns = o->insns };
			if ((ret = run_whole(&m, o->guest)) == 0) {
				snprintf(what, sizeof(what), "%s, %u SC PMCs (host API) on %u",
				    wl, m.nsc, CAPACITY);
				compare(&m, truth16, what, true, o->verbose);
			}
			teardown(&m);
		}

		/* The guest's own 8 GP counters, one GLOBAL_CTRL group. */
		m = (struct mvm){ .name = "model truth", .cap = 0,
		    .mux_ns = o->mux_us * 1000ull, .phased = phased, .model = true,
		    .rounds = 1, .insns = o->insns };
		if (ret == 0 && (ret = run_whole(&m, o->guest)) == 0 &&
		    (ret = check_truth(&m)) == 0)
			memcpy(truth_model, m.res[0], sizeof(truth_model));
		teardown(&m);
		m = (struct mvm){ .name = "model mux", .cap = CAPACITY,
		    .mux_ns = o->mux_us * 1000ull, .phased = phased, .model = true,
		    .rounds = o->reps, .insns = o->insns };
		if (ret == 0 && (ret = run_whole(&m, o->guest)) == 0 &&
		    (ret = check_model(&m)) == 0) {
			snprintf(what, sizeof(what), "%s, 8 guest IA32_PMCs (1 group) on %u",
			    wl, CAPACITY);
			compare(&m, truth_model, what, true, o->verbose);
		}
		teardown(&m);

		/* Other intervals, 16 counters: summaries only. */
		for (i = 0; i < NELEM(sweep_us) && ret == 0; i++) {
			if (sweep_us[i] == o->mux_us)
				continue;
			m = (struct mvm){ .name = "sweep", .cap = CAPACITY,
			    .mux_ns = sweep_us[i] * 1000ull, .phased = phased,
			    .nsc = MUX_NEV, .rounds = o->reps, .insns = o->insns };
			if ((ret = run_whole(&m, o->guest)) == 0) {
				snprintf(what, sizeof(what), "%s, 16 SC PMCs on %u, %u us",
				    wl, CAPACITY, sweep_us[i]);
				compare(&m, truth16, what, false, o->verbose);
			}
			teardown(&m);
		}
	}
	if (ret != 0)
		return (ret);

	printf("\nsummary, load: %s\n", load_desc());
	printf("|error| of the scaled estimate against capacity 0, over every counter with a\n"
	    "non-zero truth and all %u rounds (interval %u us unless named); goal (steady): "
	    "every\ncounter within %.0f %% in every round, and the truth-0 counters read 0\n",
	    o->reps, o->mux_us, GOAL_PCT);
	printf("  %-44s %7s %7s %-26s %5s %5s %5s %6s %6s  %s\n", "configuration", "max",
	    "mean", "worst counter", "ran", "never", "zeros", "rot/", "rounds", "");
	printf("  %-44s %7s %7s %-26s %5s %5s %5s %6s %6s  %s\n", "", "%", "%", "", "%", "ran",
	    "", "round", "over", "");
	nsteady = nover = 0;
	for (i = 0; i < nsummary; i++) {
		struct summary *s = &summaries[i];
		char rot[16], over[24];
		bool steady = strncmp(s->what, "steady", 6) == 0;

		if (s->rot < 0)
			snprintf(rot, sizeof(rot), "-");
		else
			snprintf(rot, sizeof(rot), "%.0f", s->rot);
		snprintf(over, sizeof(over), "%u/%u", s->rounds_over, s->rounds);
		if (steady) {
			nsteady++;
			nover += s->rounds_over != 0;
		}
		printf("  %-44s %7.3f %7.3f %-26s %5.1f %5u %5s %6s %6s  %s\n", s->what,
		    s->max_abs, s->mean_abs, evdefs[s->worst].name, s->run_pct, s->starved,
		    s->zero_ok ? "ok" : "BAD", rot, over, !steady ? "(as measured)" :
		    s->rounds_over == 0 ? "PASS" : "OVER");
		printf("RESULT accuracy %s|%.3f|%.3f|%s|%.1f|%u|%d|%s|load=%u|over=%s\n", s->what,
		    s->max_abs, s->mean_abs, evdefs[s->worst].name, s->run_pct, s->starved,
		    s->zero_ok, rot, o->load, over);
	}
	printf("  ran: mean running/enabled; never ran: counters that held no host counter in "
	    "some round\n  (they read their last value, here 0); zeros: the truth-0 counters "
	    "read 0;\n  rot/round: rotations seen (host-API PMCs only; - for the guest's "
	    "counters);\n  rounds over: rounds in which some counter missed the goal (PASS "
	    "needs 0)\n");
	if (nover == 0)
		printf("goal met: every steady configuration PASSes; load: %s\n", load_desc());
	else
		printf("goal NOT met: %u of %u steady configurations OVER; load: %s\n", nover,
		    nsteady, load_desc());
	printf("RESULT accuracy_goal %s %u %u load=%u\n", nover == 0 ? "met" : "over", nover,
	    nsteady, o->load);
	return (0);
}

/* ---- cost ----------------------------------------------------------------------- */

static int
cmp_u32(const void *a, const void *b)
{
	uint32_t x = *(const uint32_t *)a, y = *(const uint32_t *)b;

	return ((x > y) - (x < y));
}

struct stat2 { double mean, med; size_t n; };

/* Mean and median of field f of the samples with rotated == rot (rot -1: all). */
static struct stat2
field(const struct mvm *m, size_t off, int rot)
{
	struct stat2 st = { 0, 0, 0 };
	uint32_t *v;
	size_t i, n = 0;
	double sum = 0;

	if ((v = malloc((m->ns + 1) * sizeof(*v))) == NULL)
		return (st);
	for (i = 0; i < m->ns; i++) {
		const struct sample *s = &m->s[i];
		uint32_t x;

		if (rot >= 0 && s->rotated != rot)
			continue;
		if (off == (size_t)-1)		/* the whole exit */
			x = s->pre + s->kvm + s->handle;
		else if (off == (size_t)-2)	/* libvpmu's share */
			x = s->pre + s->handle;
		else
			memcpy(&x, (const char *)s + off, sizeof(x));
		v[n++] = x;
		sum += x;
	}
	if (n > 0) {
		qsort(v, n, sizeof(*v), cmp_u32);
		st.mean = sum / n;
		st.med = n % 2 ? v[n / 2] : (v[n / 2 - 1] + v[n / 2]) / 2.0;
		st.n = n;
	}
	free(v);
	return (st);
}

static int
cost(const struct opts *o)
{
	enum { NVM = 3 };
	struct mvm m[NVM];
	static const struct { size_t off; const char *name; } cols[] = {
		{ (size_t)-1, "exit" }, { offsetof(struct sample, kvm), "KVM_RUN" },
		{ offsetof(struct sample, pre), "pre_run" },
		{ offsetof(struct sample, handle), "handle" },
		{ (size_t)-2, "library" },
	};
	struct stat2 st[NVM][NELEM(cols)], base, yes;
	char lab[NVM][64], rlab[80];
	unsigned i, r, k;
	uint64_t rots;
	int ret = 0;

	memset(m, 0, sizeof(m));
	for (i = 0; i < NVM; i++) {
		m[i] = (struct mvm){ .name = lab[i], .cap = i ? CAPACITY : 0,
		    .mux_ns = i == 2 ? COST_FAST_NS : o->mux_us * 1000ull, .nsc = MUX_NEV,
		    .rounds = o->cost_rounds + 1, .insns = o->cost_insns, .timing = true };
		if (i == 0)
			snprintf(lab[i], sizeof(lab[i]), "no multiplexing (capacity 0)");
		else
			snprintf(lab[i], sizeof(lab[i]), "capacity %u, %" PRIu64 " us", CAPACITY,
			    m[i].mux_ns / 1000);
		if ((ret = setup(&m[i], o->guest)) != 0)
			goto out;
	}
	/* Round by round, the three VMs by turns; round 0 warms up. */
	for (r = 0; r < o->cost_rounds + 1; r++)
		for (i = 0; i < NVM; i++)
			if ((ret = run(&m[i], true)) != 0)
				goto out;
	for (i = 0; i < NVM; i++)
		if ((ret = run(&m[i], false)) != 0)
			goto out;

	printf("\n== multiplexing cost: 16 SC PMCs, steady workload, %u rounds of ~%u "
	    "instructions per VM, the three VMs by turns (after a warm-up round each) ==\n",
	    o->cost_rounds, o->cost_insns);
	printf("load: %s\n", load_desc());
	printf("ns per vCPU exit (a single step of the exact source), mean / median:\n");
	printf("  %-30s %8s %6s", "configuration", "exits", "rot");
	for (k = 0; k < NELEM(cols); k++)
		printf(" %15s", cols[k].name);
	printf("\n");
	for (i = 0; i < NVM; i++) {
		rots = 0;
		for (r = 1; r < m[i].rounds; r++)
			rots += m[i].rot[r];
		printf("  %-30s %8zu %6" PRIu64, lab[i], m[i].ns, rots);
		for (k = 0; k < NELEM(cols); k++) {
			st[i][k] = field(&m[i], cols[k].off, -1);
			printf("  %6.0f / %6.0f", st[i][k].mean, st[i][k].med);
		}
		printf("\n");
	}
	for (i = 1; i < NVM; i++) {
		snprintf(rlab, sizeof(rlab), "  ratio %" PRIu64 " us / none", m[i].mux_ns / 1000);
		printf("%-32s %8s %6s", rlab, "", "");
		for (k = 0; k < NELEM(cols); k++)
			printf("  %6.3f / %6.3f", st[i][k].mean / st[0][k].mean,
			    st[i][k].med / st[0][k].med);
		printf("\n");
		printf("RESULT cost_ratio %" PRIu64 " %.4f %.4f %.4f %.4f load=%u\n",
		    m[i].mux_ns / 1000, st[i][0].mean / st[0][0].mean,
		    st[i][0].med / st[0][0].med, st[i][4].mean / st[0][4].mean,
		    st[i][4].med / st[0][4].med, o->load);
	}
	printf("per rotation (inside vpmu_kvm_handle_exit): handle_exit of the exits that "
	    "rotated minus the others'\n");
	for (i = 1; i < NVM; i++) {
		yes = field(&m[i], offsetof(struct sample, handle), 1);
		base = field(&m[i], offsetof(struct sample, handle), 0);
		printf("  %-30s %6zu rotations: handle_exit %6.0f / %6.0f ns (mean / median) vs "
		    "%4.0f / %4.0f: %5.0f / %5.0f ns per rotation\n", lab[i], yes.n, yes.mean,
		    yes.med, base.mean, base.med, yes.mean - base.mean, yes.med - base.med);
		printf("RESULT rotation %" PRIu64 " %zu %.1f %.1f load=%u\n", m[i].mux_ns / 1000,
		    yes.n, yes.mean - base.mean, yes.med - base.med, o->load);
	}
	printf("  exit = pre_run + KVM_RUN + handle_exit; library = the two "
	    "libvpmu calls;\n  each timed with CLOCK_MONOTONIC (about 30 ns a reading "
	    "here, in every column alike).\n");
out:
	for (i = 0; i < NVM; i++)
		teardown(&m[i]);
	return (ret);
}

/* ---- main ------------------------------------------------------------------------ */

static void
usage(void)
{
	fprintf(stderr, "usage: " PROG " [-n INSNS] [-r REPS] [-i US] [-c ROUNDS] [-N INSNS] "
	    "[-L N] [-A|-C] [-v] [-h] MUX_GUEST.elf\n"
	    "  -n INSNS   guest instructions per accuracy round (default 100000)\n"
	    "  -r REPS    rounds per multiplexed configuration (default 3)\n"
	    "  -i US      mux interval, us of vCPU run time (default 1000)\n"
	    "  -c ROUNDS  timed rounds per VM of the cost part (default 5)\n"
	    "  -N INSNS   guest instructions per cost round (default 50000)\n"
	    "  -L N       run N CPU-bound processes beside it (default 0: none)\n"
	    "  -A / -C    accuracy only / cost only (the last one given counts)\n"
	    "  -v         per-counter tables of every round\n");
}

static int
num(const char *s, unsigned lo, unsigned hi, unsigned *v)
{
	char *end;
	unsigned long x;

	errno = 0;
	x = strtoul(s, &end, 10);
	if (errno != 0 || *end != '\0' || end == s || x < lo || x > hi)
		return (-1);
	*v = (unsigned)x;
	return (0);
}

const char *vr_progname = PROG;

int
main(int argc, char **argv)
{
	struct opts o = { .insns = 100000, .reps = 3, .mux_us = 1000, .cost_rounds = 5,
	    .cost_insns = 50000, .accuracy = true, .cost = true };
	int ch, ret = 0;

	while ((ch = getopt(argc, argv, "n:r:i:c:N:L:ACvh")) != -1) {
		switch (ch) {
		case 'n':
			if (num(optarg, 100, 100000000, &o.insns) < 0)
				goto bad;
			break;
		case 'r':
			if (num(optarg, 1, 1000, &o.reps) < 0)
				goto bad;
			break;
		case 'i':
			if (num(optarg, 1, 10000000, &o.mux_us) < 0)
				goto bad;
			break;
		case 'c':
			if (num(optarg, 1, 1000, &o.cost_rounds) < 0)
				goto bad;
			break;
		case 'N':
			if (num(optarg, 100, 100000000, &o.cost_insns) < 0)
				goto bad;
			break;
		case 'L':
			if (num(optarg, 0, MAX_LOAD, &o.load) < 0)
				goto bad;
			break;
		case 'A':			/* the last of -A and -C wins */
			o.accuracy = true;
			o.cost = false;
			break;
		case 'C':
			o.accuracy = false;
			o.cost = true;
			break;
		case 'v':
			o.verbose = true;
			break;
		case 'h':
			usage();
			return (0);
		default:
			goto bad;
		}
	}
	if (optind != argc - 1 || (!o.accuracy && !o.cost))
		goto bad;
	o.guest = argv[optind];
	setvbuf(stdout, NULL, _IOLBF, 0);
	if (o.load > 0) {
		if (atexit(load_stop) != 0 || load_start(o.load) < 0)
			return (VR_EXIT_HOST);
	}
	if (o.accuracy)
		ret = accuracy(&o);
	if (ret == 0 && o.cost)
		ret = cost(&o);
	load_stop();
	return (ret);
bad:
	usage();
	return (VR_EXIT_USAGE);
}
