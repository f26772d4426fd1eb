/*
 * msr_callgrind -- the library's work for K handled MSR accesses, made to
 * be counted by callgrind (run.sh runs it; it also runs without valgrind).
 *
 *   msr_callgrind [-d] CASE K     K accesses of one kind
 *   msr_callgrind [-d] -p         print the path only ("path: kvm" or
 *                                 "path: direct (why)")
 *
 * No guest runs: valgrind cannot follow a vCPU.  The KVM path does what the
 * glue does for an exit, minus KVM_RUN: a VM with model intel-v2 and the
 * synthetic source, vpmu_kvm_create on a real KVM VM fd (the MSR filter
 * ioctls included), a real vCPU fd with KVM's CPUID as vpmu_kvm_cpuid_patch
 * leaves it, and a struct kvm_run of our own that
 * each iteration fills as KVM would for KVM_EXIT_X86_RDMSR/WRMSR before
 * calling vpmu_kvm_handle_exit, then vpmu_kvm_pre_run as for the next
 * entry (which programs what a control write left pending: run.sh
 * measures that deferred work apart).
 * If KVM is unusable (no /dev/kvm, or valgrind refuses an ioctl), or with
 * -d, the direct path calls what handle_exit calls for an MSR exit:
 * vpmu_vcpu_take_pmi (pre_run's part), vpmu_vcpu_check_overflow, then
 * vpmu_msr_read or vpmu_msr_write.  The path taken is the first line out.
 *
 * run.sh counts only inside the library's entry points (callgrind
 * --collect-atstart=no --toggle-collect=FUNCTION), so this program's loop
 * and its set-up of each exit do not count; the state reset before each
 * "enable" access goes through vpmu_vcpu_reset and vpmu_vcpu_enter called
 * directly, which are not collected.
 *
 * Exit status: 0, 1 on a failure, 2 on bad usage.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <unistd.h>
#include <linux/kvm.h>

#include <vpmu/vpmu.h>
#include <vpmu/kvm.h>
#include <vpmu/model.h>

#define PROG		"msr_callgrind"

#define MSR_PMC0		0xc1
#define MSR_EVTSEL0		0x186
#define MSR_GLOBAL_STATUS	0x38e
#define EVTSEL_OFF		0x0300c0ull	/* instructions, USR|OS, EN clear */
#define EVTSEL_ON		0x4300c0ull	/* the same, EN set */

struct ctx {
	vpmu_vm		*vm;
	vpmu_kvm	*k;		/* NULL: the direct path */
	struct kvm_run	*run;		/* ours, filled as KVM would */
	int		 kvm_fd, vm_fd, vcpu_fd;
	char		 why[160];	/* why the direct path */
};

/* One kind of access: its exit, and what holds before each one. */
static const struct bcase {
	const char *name;
	bool	    write;
	uint32_t    msr;
	uint64_t    data;
	bool	    reset_each;	/* vpmu_vcpu_reset and an entry before each access */
	bool	    counting;	/* EVTSEL0 enabled once before the loop */
	uint64_t    expect;	/* a read's value */
} cases[] = {
	{ "rd_pmc0", false, MSR_PMC0, 0, false, false, 0 },
	{ "rd_pmc0_counting", false, MSR_PMC0, 0, false, true, 0 },
	{ "wr_evtsel0", true, MSR_EVTSEL0, EVTSEL_OFF, false, false, 0 },
	{ "wr_enable", true, MSR_EVTSEL0, EVTSEL_ON, true, false, 0 },
	{ "rd_status", false, MSR_GLOBAL_STATUS, 0, false, false, 0 },
};
#define NCASES	(sizeof(cases) / sizeof(cases[0]))

/*
 * The vCPU's CPUID: KVM's, patched by libvpmu, as a VMM sets it (the
 * first entry checks that it describes the model); 0, or -1 with ctx->why.
 */
static int
kvm_cpuid(struct ctx *x)
{
	unsigned n = 128, max = n + VPMU_KVM_CPUID_SPARE;
	struct kvm_cpuid2 *c;
	int e, ret = -1;

	if ((c = calloc(1, sizeof(*c) + max * sizeof(c->entries[0]))) == NULL) {
		snprintf(x->why, sizeof(x->why), "CPUID: %s", strerror(ENOMEM));
		return (-1);
	}
	c->nent = n;
	if (ioctl(x->kvm_fd, KVM_GET_SUPPORTED_CPUID, c) < 0)
		snprintf(x->why, sizeof(x->why), "KVM_GET_SUPPORTED_CPUID: %s",
		    strerror(errno));
	else if ((e = vpmu_kvm_cpuid_patch(x->k, c, max)) != 0)
		snprintf(x->why, sizeof(x->why), "vpmu_kvm_cpuid_patch: %s",
		    vpmu_strerror(e));
	else if (ioctl(x->vcpu_fd, KVM_SET_CPUID2, c) < 0)
		snprintf(x->why, sizeof(x->why), "KVM_SET_CPUID2: %s", strerror(errno));
	else
		ret = 0;
	free(c);
	return (ret);
}

/* The KVM glue on a real VM and vCPU; 0, or -1 with ctx->why set. */
static int
kvm_open(struct ctx *x)
{
	int e;

	if ((x->kvm_fd = open("/dev/kvm", O_RDWR | O_CLOEXEC)) < 0) {
		snprintf(x->why, sizeof(x->why), "/dev/kvm: %s", strerror(errno));
		return (-1);
	}
	if ((x->vm_fd = ioctl(x->kvm_fd, KVM_CREATE_VM, 0)) < 0) {
		snprintf(x->why, sizeof(x->why), "KVM_CREATE_VM: %s", strerror(errno));
		return (-1);
	}
	if ((e = vpmu_kvm_create(x->vm, x->vm_fd, &x->k)) != 0) {
		snprintf(x->why, sizeof(x->why), "vpmu_kvm_create: %s", vpmu_strerror(e));
		return (-1);
	}
	if ((x->vcpu_fd = ioctl(x->vm_fd, KVM_CREATE_VCPU, 0ul)) < 0) {
		snprintf(x->why, sizeof(x->why), "KVM_CREATE_VCPU: %s", strerror(errno));
		return (-1);
	}
	if (kvm_cpuid(x) < 0)
		return (-1);
	if ((e = vpmu_kvm_vcpu_init(x->k, 0, x->vcpu_fd, x->run)) != 0) {
		snprintf(x->why, sizeof(x->why), "vpmu_kvm_vcpu_init: %s",
		    vpmu_strerror(e));
		return (-1);
	}
	return (0);
}

static void
kvm_close(struct ctx *x)
{
	if (x->k != NULL)
		vpmu_kvm_destroy(x->k);
	x->k = NULL;
	if (x->vcpu_fd >= 0)
		close(x->vcpu_fd);
	if (x->vm_fd >= 0)
		close(x->vm_fd);
	if (x->kvm_fd >= 0)
		close(x->kvm_fd);
	x->vcpu_fd = x->vm_fd = x->kvm_fd = -1;
}

/* One access through the library; 0, or -1 after a message. */
static int
access_once(struct ctx *x, const struct bcase *c)
{
	struct kvm_run *run = x->run;
	enum vpmu_msr_verdict vd = VPMU_MSR_NOT_PMU;
	uint64_t val = 0;
	bool handled;
	int e, pending;

	if (x->k != NULL) {
		/* KVM_RUN would leave this behind for the exit. */
		run->exit_reason = c->write ? KVM_EXIT_X86_WRMSR : KVM_EXIT_X86_RDMSR;
		run->msr.index = c->msr;
		run->msr.data = c->data;
		run->msr.error = 0;
		if ((e = vpmu_kvm_handle_exit(x->k, 0, &handled)) != 0 ||
		    (e = vpmu_kvm_pre_run(x->k, 0)) != 0) {
			fprintf(stderr, PROG ": the glue: %s\n", vpmu_strerror(e));
			return (-1);
		}
		if (!handled || run->msr.error != 0 ||
		    (!c->write && run->msr.data != c->expect)) {
			fprintf(stderr, PROG ": %s: handled %d, error %u, data %#llx\n",
			    c->name, handled, run->msr.error,
			    (unsigned long long)run->msr.data);
			return (-1);
		}
		return (0);
	}
	(void)vpmu_vcpu_take_pmi(x->vm, 0, &pending);
	(void)vpmu_vcpu_check_overflow(x->vm, 0);
	e = c->write ? vpmu_msr_write(x->vm, 0, c->msr, c->data, &vd) :
	    vpmu_msr_read(x->vm, 0, c->msr, &val, &vd);
	if (e != 0 || vd != VPMU_MSR_OK || (!c->write && val != c->expect)) {
		fprintf(stderr, PROG ": %s: %s, verdict %d, value %#llx\n", c->name,
		    vpmu_errname(e), vd, (unsigned long long)val);
		return (-1);
	}
	return (0);
}

static void
usage(void)
{
	size_t i;

	fprintf(stderr, "usage: " PROG " [-d] CASE K\n       " PROG " [-d] -p\n"
	    "  -d  the direct path (no KVM)\n  -p  print the path and exit\n  CASE:");
	for (i = 0; i < NCASES; i++)
		fprintf(stderr, " %s", cases[i].name);
	fprintf(stderr, "\n");
}

int
main(int argc, char **argv)
{
	struct ctx x = { .kvm_fd = -1, .vm_fd = -1, .vcpu_fd = -1 };
	const struct bcase *c = NULL;
	struct vpmu_model model;
	vpmu_config *cfg = NULL;
	struct vpmu_entry ent;
	enum vpmu_msr_verdict vd;
	bool direct = false, probe = false;
	unsigned long k = 0, i;
	char err[128], *end;
	int ch, e, ret = 1;

	while ((ch = getopt(argc, argv, "dp")) != -1) {
		switch (ch) {
		case 'd':
			direct = true;
			break;
		case 'p':
			probe = true;
			break;
		default:
			usage();
			return (2);
		}
	}
	if (!probe) {
		if (argc - optind != 2) {
			usage();
			return (2);
		}
		for (i = 0; i < NCASES; i++)
			if (strcmp(argv[optind], cases[i].name) == 0)
				c = &cases[i];
		k = strtoul(argv[optind + 1], &end, 10);
		if (c == NULL || *end != '\0' || k == 0) {
			usage();
			return (2);
		}
	}

	if ((x.run = calloc(1, sizeof(*x.run))) == NULL) {
		fprintf(stderr, PROG ": %s\n", strerror(ENOMEM));
		return (1);
	}
	if ((e = vpmu_model_parse("intel-v2", &model, err, sizeof(err))) != 0 ||
	    (e = vpmu_config_create(&cfg)) != 0 ||
	    (e = vpmu_config_set_vcpus(cfg, 1)) != 0 ||
	    (e = vpmu_config_set_model(cfg, &model)) != 0 ||
	    (e = vpmu_config_set_source(cfg, &vpmu_source_synthetic, NULL)) != 0 ||
	    (e = vpmu_vm_create(cfg, &x.vm)) != 0) {
		fprintf(stderr, PROG ": libvpmu set-up: %s\n", vpmu_strerror(e));
		goto out;
	}
	if (direct)
		snprintf(x.why, sizeof(x.why), "-d");
	else if (kvm_open(&x) < 0)
		kvm_close(&x);
	if (x.k != NULL)
		printf("path: kvm\n");
	else
		printf("path: direct (%s)\n", x.why);
	if (probe) {
		ret = 0;
		goto out;
	}

	if (c->counting && (vpmu_msr_write(x.vm, 0, MSR_EVTSEL0, EVTSEL_ON, &vd) != 0 ||
	    vd != VPMU_MSR_OK)) {
		fprintf(stderr, PROG ": enabling IA32_PERFEVTSEL0 failed\n");
		goto out;
	}
	for (i = 0; i < k; i++) {
		/* Idle again, and entered as from idle: not collected. */
		if (c->reset_each && ((e = vpmu_vcpu_reset(x.vm, 0)) != 0 ||
		    (e = vpmu_vcpu_enter(x.vm, 0, &ent)) != 0)) {
			fprintf(stderr, PROG ": vpmu_vcpu_reset: %s\n", vpmu_strerror(e));
			goto out;
		}
		if (access_once(&x, c) < 0)
			goto out;
	}
	printf("%s: %lu accesses\n", c->name, k);
	ret = 0;
out:
	kvm_close(&x);
	vpmu_vm_destroy(x.vm);
	vpmu_config_destroy(cfg);
	free(x.run);
	return (ret);
}
