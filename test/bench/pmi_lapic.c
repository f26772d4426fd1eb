/*
 * pmi_lapic -- what a PMI costs through KVM's in-kernel LAPIC against
 * KVM_NMI with a user-space irqchip, in one run.
 *
 *   pmi_lapic [-r ROUNDS] [-n BATCH] GUEST.elf
 *
 * GUEST.elf is pmi_guest.elf: one port exit per iteration.  Four VMs in
 * this process, one vCPU each, the synthetic source:
 *   user   amd-v2 / intel-v2   no irqchip: a PMI is KVM_NMI
 *   kernel amd-v2 / intel-v2   KVM_CREATE_IRQCHIP, LVTPC = NMI delivery:
 *                              KVM_GET_LAPIC, KVM_NMI, and on Intel the
 *                              mask bit written back
 * The host programs counter 0 itself (vpmu_msr_write: instructions, INT,
 * EN) at a synthetic rate of one event per ns.  Before every iteration,
 * untimed, it writes the counter, advances the synthetic clock by 1 ns and
 * looks for overflows (vpmu_vcpu_check_overflow): in a PMI batch the
 * counter was one event below overflow, so vpmu_kvm_pre_run delivers a
 * PMI; in a plain batch it was 0 and nothing is due.  On Intel with the LAPIC the mask
 * bit the PMI set is cleared again before each iteration (untimed).
 * Timed on the host (CLOCK_MONOTONIC): vpmu_kvm_pre_run alone, and the
 * iteration (pre_run, KVM_RUN, handle_exit), whose difference between the
 * two kinds of batch is the PMI's whole cost, the guest's NMI handler
 * included.  ioctl() is wrapped (-Wl,--wrap=ioctl) to count the ioctls
 * pre_run issues.  Batches of each VM and kind alternate, ROUNDS (7) of
 * BATCH (100) iterations; figures are medians of the batch means.  The
 * guest's NMI count must equal the PMIs libvpmu delivered.
 *
 * Exit status: 0; 1 host failure or a check failed; 2 usage; 77 no KVM.
 */
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <time.h>
#include <unistd.h>
#include <linux/kvm.h>

#include <vpmu/kvm.h>

#include "vpmu-run.h"

#define PROG		"pmi_lapic"
#define RAM_SIZE	(16ull << 20)
#define TSS_ADDR_KVM	0xfffbd000ul
#define PMI_PORT	0xb08
#define MAX_ROUNDS	100
#define APIC_LVTPC	0x340
#define LVT_MASKED	(1u << 16)

/*
 * ioctl() through a counter: every ioctl of this program and of libvpmu.
 * While timing is on (pre_run with a PMI due), the ioctls a delivery can
 * issue are also timed one by one.
 */
int __real_ioctl(int fd, unsigned long req, ...);
int __wrap_ioctl(int fd, unsigned long req, ...);
static uint64_t nioctl;
static bool timing;
static const struct {
	unsigned long req;
	const char *name;
} timed[] = {
	{ KVM_GET_LAPIC, "KVM_GET_LAPIC" }, { KVM_NMI, "KVM_NMI" },
	{ KVM_SIGNAL_MSI, "KVM_SIGNAL_MSI" }, { KVM_SET_MSRS, "KVM_SET_MSRS" },
	{ KVM_SET_LAPIC, "KVM_SET_LAPIC" },
};
#define NTIMED	(sizeof(timed) / sizeof(timed[0]))
#define NVM		4
static uint64_t timed_ns[NVM][NTIMED], timed_n[NVM][NTIMED];
static unsigned cur;		/* the VM being timed */
static uint64_t now_ns(void);

int
__wrap_ioctl(int fd, unsigned long req, ...)
{
	va_list ap;
	void *arg;
	uint64_t t;
	unsigned i;
	int r;

	va_start(ap, req);
	arg = va_arg(ap, void *);
	va_end(ap);
	nioctl++;
	if (!timing)
		return (__real_ioctl(fd, req, arg));
	t = now_ns();
	r = __real_ioctl(fd, req, arg);
	t = now_ns() - t;
	for (i = 0; i < NTIMED; i++)
		if (timed[i].req == req) {
			timed_ns[cur][i] += t;
			timed_n[cur][i]++;
		}
	return (r);
}

struct pvm {
	const char	*name;
	const char	*model;
	bool		 kernel;	/* in-kernel irqchip */
	uint32_t	 ctl, ctr;	/* counter 0's select and count MSRs */
	uint64_t	 ctl_val, near;	/* select value; the count one below overflow */
	struct vr_vm	 vm;
	/* per kind (0 plain, 1 PMI), per round: mean ns and ioctls */
	double		 pre_ns[2][MAX_ROUNDS], it_ns[2][MAX_ROUNDS], pre_io[2][MAX_ROUNDS];
	uint64_t	 pmis, nmis;
};

const char *vr_progname = PROG;

static uint64_t
now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ((uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec);
}

static int
fail(const char *what, int err)
{
	fprintf(stderr, PROG ": %s: %s\n", what, strerror(err));
	return (1);
}

/* The host writes vCPU 0's msr: 0, the call's errno, or EINVAL if the guest would fault. */
static int
wrmsr0(vpmu_vm *vm, uint32_t msr, uint64_t val)
{
	enum vpmu_msr_verdict vd;
	int e;

	if ((e = vpmu_msr_write(vm, 0, msr, val, &vd)) != 0)
		return (e);
	return (vd == VPMU_MSR_OK ? 0 : EINVAL);
}

static int
setup(struct pvm *p, const uint8_t *file, size_t flen)
{
	struct vr_vm *vm = &p->vm;
	struct vr_vcpu *c = &vm->vcpu[0];
	struct kvm_userspace_memory_region region;
	struct kvm_cpuid2 *cpuid;
	struct vpmu_model m;
	struct vr_image img;
	vpmu_config *cfg = NULL;
	unsigned max;
	char err[256];
	long sz;
	int e;

	vm->nvcpus = 1;
	vm->ram_size = RAM_SIZE;
	vm->irqchip_kernel = p->kernel;
	vm->ram = mmap(NULL, RAM_SIZE, PROT_READ | PROT_WRITE,
	    MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
	if (vm->ram == MAP_FAILED)
		return (fail("guest RAM", errno));
	if (vr_elf_load(file, flen, vm->ram, RAM_SIZE, &img, err, sizeof(err)) < 0) {
		fprintf(stderr, PROG ": %s\n", err);
		return (2);
	}
	vr_boot_tables(vm->ram);
	if ((vm->kvm_fd = open("/dev/kvm", O_RDWR | O_CLOEXEC)) < 0 ||
	    (vm->vm_fd = ioctl(vm->kvm_fd, KVM_CREATE_VM, 0)) < 0) {
		printf("SKIP: /dev/kvm: %s\n", strerror(errno));
		return (77);
	}
	if ((e = vpmu_model_parse(p->model, &m, err, sizeof(err))) != 0 ||
	    (e = vpmu_config_create(&cfg)) != 0 ||
	    (e = vpmu_config_set_model(cfg, &m)) != 0 ||
	    (e = vpmu_config_set_source(cfg, &vpmu_source_synthetic, NULL)) != 0 ||
	    (e = vpmu_vm_create(cfg, &vm->pmu)) != 0)
		return (fail("libvpmu set-up", e));
	vpmu_config_destroy(cfg);
	if (p->kernel && ioctl(vm->vm_fd, KVM_CREATE_IRQCHIP, 0) < 0)
		return (fail("KVM_CREATE_IRQCHIP", errno));
	if ((e = vpmu_kvm_create(vm->pmu, vm->vm_fd, &vm->k)) != 0)
		return (fail("vpmu_kvm_create", e));
	region = (struct kvm_userspace_memory_region){ .memory_size = RAM_SIZE,
	    .userspace_addr = (uintptr_t)vm->ram };
	if (ioctl(vm->vm_fd, KVM_SET_TSS_ADDR, TSS_ADDR_KVM) < 0 ||
	    ioctl(vm->vm_fd, KVM_SET_USER_MEMORY_REGION, &region) < 0 ||
	    (sz = ioctl(vm->kvm_fd, KVM_GET_VCPU_MMAP_SIZE, 0)) <= 0)
		return (fail("VM set-up", errno));
	vm->run_size = (size_t)sz;
	if ((e = vpmu_kvm_add_memory(vm->k, 0, RAM_SIZE, vm->ram)) != 0)
		return (fail("vpmu_kvm_add_memory", e));
	c->vm = vm;
	if ((cpuid = vr_supported_cpuid(vm->kvm_fd, &max)) == NULL)
		return (fail("KVM_GET_SUPPORTED_CPUID", errno));
	e = vr_vcpu_setup(vm, c, cpuid, max, &img);	/* LVTPC = NMI with the LAPIC */
	free(cpuid);
	if (e < 0)
		return (1);
	if ((e = vpmu_vcpu_set_thread(vm->pmu, 0, gettid())) != 0)
		return (fail("vpmu_vcpu_set_thread", e));

	/* Counter 0 counts instructions with INT, one per ns of synthetic clock. */
	if (m.vendor == VPMU_VENDOR_AMD) {
		p->ctl = 0xc0010200;
		p->ctr = 0xc0010201;
		p->ctl_val = 0xc0 | 1u << 17 | 1u << 20 | 1u << 22;	/* OS, INT, EN */
		p->near = (1ull << 48) - 1;
		if ((e = wrmsr0(vm->pmu, 0xc0000301, 0x3f)) != 0)
			return (fail("PerfCntrGlobalCtl", e));
	} else {
		p->ctl = 0x186;
		p->ctr = 0xc1;			/* a write sign-extends bit 31 */
		p->ctl_val = 0xc0 | 1u << 17 | 1u << 20 | 1u << 22;
		p->near = 0xffffffffull;	/* = 2^48 - 1 */
		if ((e = wrmsr0(vm->pmu, 0x38f, 1)) != 0)
			return (fail("IA32_PERF_GLOBAL_CTRL", e));
	}
	if ((e = vpmu_synthetic_set_rate(vm->pmu, 0, VPMU_EV_INSTRUCTIONS,
	    1000000ull)) != 0)
		return (fail("vpmu_synthetic_set_rate", e));
	if ((e = wrmsr0(vm->pmu, p->ctl, p->ctl_val)) != 0)
		return (fail("counter 0", e));
	return (0);
}

/* Clear LVTPC's mask bit (an Intel model set it at the last PMI).  Untimed. */
static int
unmask(struct pvm *p)
{
	struct kvm_lapic_state la;
	uint32_t lvt;

	if (ioctl(p->vm.vcpu[0].fd, KVM_GET_LAPIC, &la) < 0)
		return (errno);
	memcpy(&lvt, la.regs + APIC_LVTPC, 4);
	if (!(lvt & LVT_MASKED))
		return (0);
	lvt &= ~LVT_MASKED;
	memcpy(la.regs + APIC_LVTPC, &lvt, 4);
	return (ioctl(p->vm.vcpu[0].fd, KVM_SET_LAPIC, &la) < 0 ? errno : 0);
}

/*
 * n iterations of one kind; stop: answer the guest's IN with "stop" at the
 * end and run it to its exit.  Means into round r (1..; 0 is the warm-up).
 */
static int
batch(struct pvm *p, int kind, unsigned r, unsigned n, bool stop)
{
	struct vr_vcpu *c = &p->vm.vcpu[0];
	struct kvm_run *run = c->run;
	struct vpmu_kvm_stats st;
	uint64_t t0, t1, t2, io1, pre = 0, it = 0, io = 0, pmis0;
	unsigned i, done = 0;
	bool handled;
	int e;

	if ((e = vpmu_kvm_get_stats(p->vm.k, 0, &st)) != 0)
		return (fail("vpmu_kvm_get_stats", e));
	pmis0 = st.pmis;
	for (i = 0; done < n || stop; i++) {
		if (p->kernel && (e = unmask(p)) != 0)
			return (fail("LVTPC unmask", e));
		if (wrmsr0(p->vm.pmu, p->ctr, kind && !stop ? p->near : 0) != 0 ||
		    vpmu_synthetic_advance(p->vm.pmu, 0, 1) != 0 ||
		    vpmu_vcpu_check_overflow(p->vm.pmu, 0) != 0)
			return (fail("counter 0", EINVAL));
		io1 = nioctl;
		t0 = now_ns();
		timing = kind == 1 && r > 0;
		e = vpmu_kvm_pre_run(p->vm.k, 0);
		timing = false;
		if (e != 0)
			return (fail("vpmu_kvm_pre_run", e));
		t1 = now_ns();
		io1 = nioctl - io1;
		if (ioctl(c->fd, KVM_RUN, 0) < 0 && errno != EINTR)
			return (fail("KVM_RUN", errno));
		if ((e = vpmu_kvm_handle_exit(p->vm.k, 0, &handled)) != 0)
			return (fail("vpmu_kvm_handle_exit", e));
		t2 = now_ns();
		if (run->exit_reason == KVM_EXIT_IO && run->io.port == PMI_PORT) {
			uint32_t *d = (uint32_t *)((uint8_t *)run + run->io.data_offset);

			if (run->io.direction == KVM_EXIT_IO_IN) {
				*d = stop;
			} else {
				p->nmis = *d;
				if ((e = vpmu_kvm_get_stats(p->vm.k, 0, &st)) != 0)
					return (fail("vpmu_kvm_get_stats", e));
				p->pmis = st.pmis;
				return (0);
			}
		} else if (run->exit_reason != KVM_EXIT_IO) {
			fprintf(stderr, PROG ": %s: exit %u\n", p->name, run->exit_reason);
			return (1);
		}
		pre += t1 - t0;
		it += t2 - t0;
		io += io1;
		done++;
	}
	if ((e = vpmu_kvm_get_stats(p->vm.k, 0, &st)) != 0)
		return (fail("vpmu_kvm_get_stats", e));
	p->pmis = st.pmis;
	if (kind == 1 && st.pmis - pmis0 != n) {
		fprintf(stderr, PROG ": %s: %" PRIu64 " PMIs in a batch of %u\n", p->name,
		    st.pmis - pmis0, n);
		return (1);
	}
	if (kind == 0 && st.pmis != pmis0) {
		fprintf(stderr, PROG ": %s: %" PRIu64 " PMIs in a plain batch\n", p->name,
		    st.pmis - pmis0);
		return (1);
	}
	if (r == 0)
		return (0);			/* the warm-up round */
	p->pre_ns[kind][r - 1] = (double)pre / n;
	p->it_ns[kind][r - 1] = (double)it / n;
	p->pre_io[kind][r - 1] = (double)io / n;
	return (0);
}

static int
cmp(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;

	return (x < y ? -1 : x > y);
}

static double
median(const double *v, unsigned n)
{
	double s[MAX_ROUNDS];

	memcpy(s, v, n * sizeof(*s));
	qsort(s, n, sizeof(*s), cmp);
	return (n % 2 ? s[n / 2] : (s[n / 2 - 1] + s[n / 2]) / 2);
}

int
main(int argc, char **argv)
{
	static struct pvm vms[NVM] = {
		{ .name = "user-irqchip", .model = "amd-v2" },
		{ .name = "kernel-lapic", .model = "amd-v2", .kernel = true },
		{ .name = "user-irqchip", .model = "intel-v2" },
		{ .name = "kernel-lapic", .model = "intel-v2", .kernel = true },
	};
	unsigned rounds = 7, n = 100, r, v;
	uint8_t *file;
	size_t flen;
	char err[256];
	int opt, e, k;
	double x[NVM][6];

	while ((opt = getopt(argc, argv, "r:n:")) != -1) {
		switch (opt) {
		case 'r': rounds = (unsigned)atoi(optarg); break;
		case 'n': n = (unsigned)atoi(optarg); break;
		default: goto usage;
		}
	}
	if (optind != argc - 1 || rounds < 1 || rounds > MAX_ROUNDS || n < 1)
		goto usage;
	if (vr_elf_read(argv[optind], &file, &flen, err, sizeof(err)) < 0) {
		fprintf(stderr, PROG ": %s\n", err);
		return (2);
	}
	for (v = 0; v < NVM; v++)
		if ((e = setup(&vms[v], file, flen)) != 0)
			return (e);
	free(file);
	/* A warm-up round, not counted, then the rounds; VMs and kinds alternate. */
	for (r = 0; r <= rounds; r++)
		for (k = 0; k < 2; k++)
			for (v = 0; v < NVM; v++)
				if ((cur = v, batch(&vms[v], k, r, n, false)) != 0)
					return (1);
	for (v = 0; v < NVM; v++) {
		if (batch(&vms[v], 0, 0, 1, true) != 0)
			return (1);
		if (vms[v].nmis != vms[v].pmis) {
			fprintf(stderr, PROG ": %s %s: the guest took %" PRIu64 " NMIs, libvpmu "
			    "delivered %" PRIu64 " PMIs\n", vms[v].name, vms[v].model,
			    vms[v].nmis, vms[v].pmis);
			return (1);
		}
		for (k = 0; k < 2; k++) {
			x[v][k] = median(vms[v].pre_ns[k], rounds);
			x[v][2 + k] = median(vms[v].it_ns[k], rounds);
			x[v][4 + k] = median(vms[v].pre_io[k], rounds);
		}
	}

	printf("PMI delivery: %u rounds x %u iterations per VM and kind, synthetic source, "
	    "host %s\n", rounds, n, "CLOCK_MONOTONIC");
	printf("%-13s %-9s %10s %10s %8s %12s %12s %10s %7s\n", "irqchip", "model",
	    "pre_run ns", "(no PMI)", "ioctls", "iteration ns", "(no PMI)", "PMI ns", "NMIs");
	for (v = 0; v < NVM; v++) {
		printf("%-13s %-9s %10.0f %10.0f %8.2f %12.0f %12.0f %10.0f %7" PRIu64 "\n",
		    vms[v].name, vms[v].model, x[v][1], x[v][0], x[v][5] - x[v][4], x[v][3],
		    x[v][2], x[v][3] - x[v][2], vms[v].nmis);
		printf("RESULT %s/%s pre_ns %.0f pre_ns_plain %.0f ioctls %.2f it_ns %.0f "
		    "it_ns_plain %.0f pmi_ns %.0f\n", vms[v].name, vms[v].model, x[v][1],
		    x[v][0], x[v][5] - x[v][4], x[v][3], x[v][2], x[v][3] - x[v][2]);
	}
	for (v = 0; v < NVM; v += 2)
		printf("%s: kernel LAPIC / user irqchip: pre_run %.2f, whole PMI %.2f\n",
		    vms[v].model, (x[v + 1][1] - x[v + 1][0]) / (x[v][1] - x[v][0]),
		    (x[v + 1][3] - x[v + 1][2]) / (x[v][3] - x[v][2]));
	printf("ioctls inside timed deliveries, mean ns per call:\n");
	for (v = 0; v < NVM; v++) {
		printf("  %s %s:", vms[v].name, vms[v].model);
		for (r = 0; r < NTIMED; r++)
			if (timed_n[v][r] != 0)
				printf(" %s %.0f", timed[r].name,
				    (double)timed_ns[v][r] / timed_n[v][r]);
		printf("\n");
	}
	printf("pre_run ns: vpmu_kvm_pre_run with a PMI due (no PMI: the same call with "
	    "nothing due).\nioctls: per PMI, those pre_run issued beyond a plain pre_run.\n"
	    "PMI ns: iteration (pre_run + KVM_RUN + handle_exit) with a PMI minus without: "
	    "delivery,\ninjection and the guest's NMI handler.  Ratios: (PMI - plain) "
	    "kernel over user.\n");
	return (0);
usage:
	fprintf(stderr, "usage: " PROG " [-r ROUNDS] [-n BATCH] GUEST.elf\n");
	return (2);
}
