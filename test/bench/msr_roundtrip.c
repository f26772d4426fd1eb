/*
 * msr_roundtrip -- what a trapped RDMSR/WRMSR costs through libvpmu,
 * against a null handler, in one run.
 *
 *   msr_roundtrip [-r ROUNDS] [-n BATCH] [-m] [-v] GUEST.elf
 *
 * GUEST.elf is bench_guest.elf (bench_proto.h has the protocol).  One VM,
 * one vCPU, model intel-v2, the synthetic source; vpmu_kvm_create installs
 * the MSR filter, so every round sees the same exits.  Round by round the
 * run loop alternates between
 *   libvpmu  vpmu_kvm_pre_run, KVM_RUN, vpmu_kvm_handle_exit
 *            (vpmu-run's loop), and
 *   null     KVM_RUN alone; RDMSR answers 0, WRMSR is dropped.
 * A warm-up pair of rounds comes first and is not counted, then ROUNDS
 * (default 11) rounds per handler.  Each batch of BATCH (default 2000)
 * accesses is timed on the host with CLOCK_MONOTONIC between the guest's
 * boundary exits (one port exit more than BATCH accesses: 0.05 %), and in
 * the guest with RDTSC (converted with KVM_GET_TSC_KHZ) as a cross-check.
 * The figures are medians over the rounds.
 *
 * The set-up reuses vpmu-run's boot.c (long mode, CPUID topology) and
 * elf.c (the loader), compiled in; their structures come from vpmu-run.h.
 *
 * Exit status: 0; 1 host failure; 2 usage; 3 the guest misbehaved;
 * 77 no usable /dev/kvm (a skip, "SKIP:" on stdout).
 */
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <time.h>
#include <unistd.h>
#include <linux/kvm.h>

#include <vpmu/model.h>

#include "vpmu-run.h"
#include "bench_proto.h"

#define PROG		"msr_roundtrip"
#define MiB		(1ull << 20)
#define RAM_SIZE	(16 * MiB)
#define TSS_ADDR_KVM	0xfffbd000ul
#define MAX_ROUNDS	1000
#define EXIT_SKIP	77

enum handler { H_LIB, H_NULL, H_N };
static const char *const handler_name[H_N] = { "libvpmu", "null" };

/* One guest round: which handler ran it and what it took. */
struct round {
	enum handler h;
	uint64_t t_start, t_reads, t_writes;	/* host ns at the boundary exits */
	uint64_t tsc[2];			/* guest ticks: reads, writes */
	unsigned ndata;				/* dwords of tsc[] received */
};

struct bench {
	struct vr_vm	*vm;
	struct vr_vcpu	*c;
	unsigned	 rounds;	/* per handler, counted */
	unsigned	 batch;		/* accesses per batch */
	unsigned	 nround;	/* guest rounds: 2 warm-up + 2 x rounds */
	struct round	*r;
	int		 cur;		/* the round running, -1 before the first */
	enum handler	 h;		/* the handler now */
	uint64_t	 null_reads, null_writes;
	bool		 done;
};

static uint64_t
now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ((uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec);
}

/* Round i: warm-up pair first, then libvpmu and null by turns. */
static enum handler
handler_of(unsigned i)
{
	return (i % 2 == 0 ? H_LIB : H_NULL);
}

/* ---- the guest's ports ------------------------------------------------------ */

static int
port_in(struct bench *b, uint16_t port, uint32_t *v)
{
	switch (port) {
	case BENCH_PORT_CTL:
		*v = b->nround;
		return (0);
	case BENCH_PORT_DATA:
		*v = b->batch;
		return (0);
	}
	return (-1);
}

static int
port_out(struct bench *b, uint16_t port, uint32_t v)
{
	uint64_t t = now_ns();
	struct round *r = b->cur >= 0 ? &b->r[b->cur] : NULL;

	switch (port) {
	case BENCH_PORT_CTL:
		switch (BENCH_CTL_KIND(v)) {
		case BENCH_CTL_START:
			if (BENCH_CTL_ROUND(v) != (unsigned)b->cur + 1 ||
			    BENCH_CTL_ROUND(v) >= b->nround)
				return (-1);
			b->cur++;
			r = &b->r[b->cur];
			r->h = b->h = handler_of((unsigned)b->cur);
			r->t_start = now_ns();	/* after the switch: the batch's own time */
			return (0);
		case BENCH_CTL_READS_DONE:
			if (r == NULL)
				return (-1);
			r->t_reads = t;
			return (0);
		case BENCH_CTL_WRITES_DONE:
			if (r == NULL)
				return (-1);
			r->t_writes = t;
			return (0);
		}
		return (-1);
	case BENCH_PORT_DATA:
		if (r == NULL || r->ndata >= 4)
			return (-1);
		r->tsc[r->ndata / 2] |= (uint64_t)v << (32 * (r->ndata % 2));
		r->ndata++;
		return (0);
	case VR_PORT_CONSOLE:
		fputc((int)(v & 0xff), stderr);
		return (0);
	case VR_PORT_EXIT:
		if ((v & 0xff) != 0) {
			fprintf(stderr, PROG ": the guest exited with status %u\n", v & 0xff);
			return (-1);
		}
		b->done = true;
		return (0);
	}
	return (-1);
}

/* KVM_EXIT_IO: 0, or -1 for an access the protocol has no place for. */
static int
io(struct bench *b)
{
	struct kvm_run *run = b->c->run;
	uint8_t *data = (uint8_t *)run + run->io.data_offset;
	uint32_t v = 0;
	unsigned i;

	if (run->io.size > sizeof(v) || run->io.data_offset > b->vm->run_size ||
	    (size_t)run->io.size * run->io.count > b->vm->run_size - run->io.data_offset)
		return (-1);
	for (i = 0; i < run->io.count; i++, data += run->io.size) {
		if (run->io.direction == KVM_EXIT_IO_IN) {
			if (port_in(b, run->io.port, &v) < 0)
				return (-1);
			memcpy(data, &v, run->io.size);
		} else {
			v = 0;
			memcpy(&v, data, run->io.size);
			if (port_out(b, run->io.port, v) < 0)
				return (-1);
		}
	}
	return (0);
}

/* ---- the run loop -------------------------------------------------------------- */

static void
guest_fail(struct bench *b, const char *what)
{
	struct kvm_regs regs;

	if (ioctl(b->c->fd, KVM_GET_REGS, &regs) == 0)
		fprintf(stderr, PROG ": %s (exit reason %u, round %d) at RIP %#llx\n",
		    what, b->c->run->exit_reason, b->cur, (unsigned long long)regs.rip);
	else
		fprintf(stderr, PROG ": %s (exit reason %u, round %d)\n", what,
		    b->c->run->exit_reason, b->cur);
}

/* 0 when the guest exited cleanly, else an exit status. */
static int
run(struct bench *b)
{
	struct vr_vm *vm = b->vm;
	struct kvm_run *r = b->c->run;
	bool handled;
	int err;

	b->h = H_LIB;			/* until round 0 starts: set-up exits */
	while (!b->done) {
		if (b->h == H_LIB && (err = vpmu_kvm_pre_run(vm->k, 0)) != 0) {
			fprintf(stderr, PROG ": vpmu_kvm_pre_run: %s\n", vpmu_strerror(err));
			return (VR_EXIT_HOST);
		}
		if (ioctl(b->c->fd, KVM_RUN, 0) < 0) {
			if (errno == EINTR || errno == EAGAIN)
				continue;
			fprintf(stderr, PROG ": KVM_RUN: %s\n", strerror(errno));
			return (VR_EXIT_HOST);
		}
		if (b->h == H_LIB) {
			if ((err = vpmu_kvm_handle_exit(vm->k, 0, &handled)) != 0) {
				fprintf(stderr, PROG ": vpmu_kvm_handle_exit: %s\n",
				    vpmu_strerror(err));
				return (VR_EXIT_HOST);
			}
			if (handled)
				continue;
		}
		switch (r->exit_reason) {
		case KVM_EXIT_X86_RDMSR:
			if (b->h == H_LIB)
				goto unexpected;	/* libvpmu's MSR, not taken */
			r->msr.data = 0;
			r->msr.error = 0;
			b->null_reads++;
			break;
		case KVM_EXIT_X86_WRMSR:
			if (b->h == H_LIB)
				goto unexpected;
			r->msr.error = 0;
			b->null_writes++;
			break;
		case KVM_EXIT_IO:
			if (io(b) < 0) {
				guest_fail(b, "port access outside the bench protocol");
				return (VR_EXIT_GUEST);
			}
			break;
		default:
			goto unexpected;
		}
	}
	return (0);
unexpected:
	guest_fail(b, "unexpected exit");
	return (VR_EXIT_GUEST);
}

/* ---- set-up -------------------------------------------------------------------- */


/*
 * The VM, in <vpmu/kvm.h>'s order, with one vCPU at the guest's entry.
 * 0, or an exit status after a message.
 */
static int
setup(struct vr_vm *vm, const char *guest)
{
	struct kvm_userspace_memory_region region;
	struct kvm_cpuid2 *cpuid;
	struct vpmu_model model;
	struct vr_vcpu *c = &vm->vcpu[0];
	struct vr_image img;
	vpmu_config *cfg = NULL;
	uint8_t *file;
	size_t flen;
	unsigned max;
	char err[256];
	long api;
	int e;

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
	if ((e = vpmu_model_parse("intel-v2", &model, err, sizeof(err))) != 0 ||
	    (e = vpmu_config_create(&cfg)) != 0 ||
	    (e = vpmu_config_set_vcpus(cfg, 1)) != 0 ||
	    (e = vpmu_config_set_model(cfg, &model)) != 0 ||
	    (e = vpmu_config_set_source(cfg, &vpmu_source_synthetic, NULL)) != 0 ||
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
	return (0);
}

static void
teardown(struct vr_vm *vm)
{
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
}

/* ---- figures ------------------------------------------------------------------ */

static int
cmp_double(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;

	return ((x > y) - (x < y));
}

/* Median, minimum and maximum of n values (sorted in place). */
struct stat3 { double med, min, max; };

static struct stat3
stat3(double *v, unsigned n)
{
	struct stat3 s;

	qsort(v, n, sizeof(v[0]), cmp_double);
	s.min = v[0];
	s.max = v[n - 1];
	s.med = n % 2 ? v[n / 2] : (v[n / 2 - 1] + v[n / 2]) / 2;
	return (s);
}

/*
 * ns per access of one kind (0 reads, 1 writes) for one handler, over the
 * counted rounds: by the host clock, or (tsc_khz != 0) by the guest's TSC.
 */
static struct stat3
per_access(const struct bench *b, enum handler h, int kind, long tsc_khz)
{
	double v[MAX_ROUNDS];
	unsigned i, n = 0;
	const struct round *r;

	for (i = 2; i < b->nround; i++) {
		r = &b->r[i];
		if (r->h != h)
			continue;
		if (tsc_khz > 0)
			v[n++] = (double)r->tsc[kind] * 1e6 / (double)tsc_khz / b->batch;
		else
			v[n++] = (double)(kind == 0 ? r->t_reads - r->t_start :
			    r->t_writes - r->t_reads) / b->batch;
	}
	return (stat3(v, n));
}

static void
report(const struct bench *b, long tsc_khz, bool machine, bool verbose)
{
	static const char *const what[2] = { "RDMSR IA32_PMC0", "WRMSR IA32_PERFEVTSEL0" };
	static const char *const tag[2] = { "rd_pmc0", "wr_evtsel0" };
	struct stat3 s[H_N], t[H_N];
	const struct round *r;
	double diff;
	unsigned i;
	int k;

	printf(PROG ": model intel-v2, source synthetic; %u rounds per handler, "
	    "alternating, after a warm-up pair; %u accesses per batch\n",
	    b->rounds, b->batch);
	if (verbose)
		for (i = 0; i < b->nround; i++) {
			r = &b->r[i];
			printf("  round %2u %-7s%s reads %8.1f ns  writes %8.1f ns"
			    "  (guest TSC %" PRIu64 " / %" PRIu64 " ticks)\n", i,
			    handler_name[r->h], i < 2 ? " warm-up" : "        ",
			    (double)(r->t_reads - r->t_start) / b->batch,
			    (double)(r->t_writes - r->t_reads) / b->batch,
			    r->tsc[0], r->tsc[1]);
		}
	printf("ns per access, median over rounds (host CLOCK_MONOTONIC around each batch):\n");
	printf("  %-24s %10s %10s %7s %10s %9s   %s\n", "access", "libvpmu", "null",
	    "ratio", "lib-null", "% of RT", "libvpmu min..max / null min..max");
	for (k = 0; k < 2; k++) {
		for (i = 0; i < H_N; i++) {
			s[i] = per_access(b, (enum handler)i, k, 0);
			t[i] = tsc_khz > 0 ? per_access(b, (enum handler)i, k, tsc_khz) : s[i];
		}
		diff = s[H_LIB].med - s[H_NULL].med;
		printf("  %-24s %10.1f %10.1f %7.3f %10.1f %8.2f%%   %.0f..%.0f / %.0f..%.0f\n",
		    what[k], s[H_LIB].med, s[H_NULL].med, s[H_LIB].med / s[H_NULL].med,
		    diff, 100 * diff / s[H_LIB].med, s[H_LIB].min, s[H_LIB].max,
		    s[H_NULL].min, s[H_NULL].max);
		if (tsc_khz > 0)
			printf("  %-24s %10.1f %10.1f %7.3f %10.1f   (guest RDTSC, %ld kHz)\n",
			    "", t[H_LIB].med, t[H_NULL].med, t[H_LIB].med / t[H_NULL].med,
			    t[H_LIB].med - t[H_NULL].med, tsc_khz);
		if (machine)
			printf("RESULT %s %.1f %.1f %.3f %.1f %.2f\n", tag[k], s[H_LIB].med,
			    s[H_NULL].med, s[H_LIB].med / s[H_NULL].med, diff,
			    100 * diff / s[H_LIB].med);
	}
	printf("  (%% of RT: libvpmu's share of the libvpmu round trip, (lib-null)/lib)\n");
}

/* ---- main ------------------------------------------------------------------------ */

static void
usage(void)
{
	fprintf(stderr, "usage: " PROG " [-r ROUNDS] [-n BATCH] [-m] [-v] GUEST.elf\n"
	    "  -r ROUNDS  counted rounds per handler, 1..%d (default 11)\n"
	    "  -n BATCH   accesses per batch, a multiple of %d (default 2000)\n"
	    "  -m         also print RESULT lines for scripts\n"
	    "  -v         print every round\n", MAX_ROUNDS / 2 - 1, BENCH_UNROLL);
}

const char *vr_progname = PROG;

int
main(int argc, char **argv)
{
	static struct vr_vm vm;
	struct bench b = { .vm = &vm, .c = &vm.vcpu[0], .rounds = 11, .batch = 2000,
	    .cur = -1 };
	struct vpmu_kvm_stats st;
	bool machine = false, verbose = false;
	long tsc_khz;
	char *end;
	int ch, ret;

	while ((ch = getopt(argc, argv, "r:n:mv")) != -1) {
		switch (ch) {
		case 'r':
			b.rounds = (unsigned)strtoul(optarg, &end, 10);
			if (*end != '\0' || b.rounds < 1 || b.rounds > MAX_ROUNDS / 2 - 1) {
				usage();
				return (VR_EXIT_USAGE);
			}
			break;
		case 'n':
			b.batch = (unsigned)strtoul(optarg, &end, 10);
			if (*end != '\0' || b.batch == 0 || b.batch % BENCH_UNROLL != 0 ||
			    b.batch > 10000000) {
				usage();
				return (VR_EXIT_USAGE);
			}
			break;
		case 'm':
			machine = true;
			break;
		case 'v':
			verbose = true;
			break;
		default:
			usage();
			return (VR_EXIT_USAGE);
		}
	}
	if (optind != argc - 1) {
		usage();
		return (VR_EXIT_USAGE);
	}
	b.nround = 2 + 2 * b.rounds;
	if ((b.r = calloc(b.nround, sizeof(*b.r))) == NULL) {
		fprintf(stderr, PROG ": %s\n", strerror(ENOMEM));
		return (VR_EXIT_HOST);
	}
	vm.kvm_fd = vm.vm_fd = vm.vcpu[0].fd = -1;
	if ((ret = setup(&vm, argv[optind])) != 0 || (ret = run(&b)) != 0)
		goto out;
	if (b.cur != (int)b.nround - 1 || b.r[b.cur].ndata != 4) {
		fprintf(stderr, PROG ": the guest ran %d of %u rounds\n", b.cur + 1, b.nround);
		ret = VR_EXIT_GUEST;
		goto out;
	}
	/* Every access of a libvpmu round went through libvpmu, none faulted. */
	if (vpmu_kvm_get_stats(vm.k, 0, &st) != 0 ||
	    st.msr_reads != (uint64_t)(b.rounds + 1) * b.batch ||
	    st.msr_writes != (uint64_t)(b.rounds + 1) * b.batch || st.msr_gp != 0 ||
	    b.null_reads != (uint64_t)(b.rounds + 1) * b.batch ||
	    b.null_writes != (uint64_t)(b.rounds + 1) * b.batch) {
		fprintf(stderr, PROG ": exits do not add up: libvpmu %" PRIu64 " reads, %"
		    PRIu64 " writes, %" PRIu64 " #GP; null %" PRIu64 " reads, %" PRIu64
		    " writes; want %" PRIu64 " each\n", st.msr_reads, st.msr_writes,
		    st.msr_gp, b.null_reads, b.null_writes,
		    (uint64_t)(b.rounds + 1) * b.batch);
		ret = VR_EXIT_HOST;
		goto out;
	}
	tsc_khz = ioctl(vm.vcpu[0].fd, KVM_GET_TSC_KHZ, 0);
	report(&b, tsc_khz, machine, verbose);
out:
	teardown(&vm);
	free(b.r);
	return (ret);
}
