/*
 * vpmu-run -- boot a guest ELF under KVM with a virtual PMU from libvpmu,
 * run it to its exit, and report what the guest's counters saw.
 * See vpmu-run(1) for the options, the guest boot protocol v1 and the
 * exit statuses.
 *
 * Set-up follows <vpmu/kvm.h>'s order of calls: the libvpmu VM (model in
 * the config), KVM_CREATE_VM, vpmu_kvm_create, RAM, then per vCPU
 * KVM_CREATE_VCPU, CPUID (vpmu_kvm_cpuid_patch, KVM_SET_CPUID2), registers,
 * vpmu_kvm_vcpu_init.  The guest image is checked before KVM is touched,
 * so a bad image gives status 2 on any machine.
 */
#include <ctype.h>
#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <unistd.h>
#include <linux/kvm.h>

#include <vpmu/model.h>
#include <vpmu/pv.h>

#include "vpmu-run.h"

#define MiB		(1ull << 20)
#define MEM_DEFAULT	64		/* MiB */
#define MEM_DEFAULT_MB	128		/* MiB, for a Multiboot image (QEMU's default) */
#define MEM_DEFAULT_LINUX 512		/* MiB, for a Linux kernel and its initrd */
#define MEM_MAX		1024		/* MiB: RSP (the top of RAM) must be identity mapped */
#define TSS_ADDR_KVM	0xfffbd000ul	/* KVM_SET_TSS_ADDR: 3 pages, far above RAM */

struct vr_opts {
	const char *pmu;
	const char *source;
	bool	    source_given;	/* --source was given: else "the default" */
	unsigned    vcpus;
	unsigned    mem;		/* MiB */
	unsigned    host_counters;	/* 0: the source's own capacity */
	unsigned    mux_us;		/* 0: libvpmu's default (4 ms) */
	const char *report;
	bool	    quiet;
	const char *guest;
	/* --guest-log N=PATH: the log files the guest may name in CONFIGURELOG */
	const char *glog_path[VPMU_PV_MAX_LOGFDS];
	int	    glog_fd[VPMU_PV_MAX_LOGFDS];
	int	    fastpage_hz;	/* -1: libvpmu's default (1000) */
	bool	    irqchip_user;	/* --irqchip user: no in-kernel LAPIC */
	bool	    exact_block;	/* --exact-mode block */
	unsigned    exact_ff_max;	/* --exact-ff-max: 0 libvpmu's default */
	bool	    exact_no_foresee;	/* --exact-foresee off */
	int	    pv_port;		/* -1: libvpmu's default (0x5650); 0: no channel */
	const char *snapshot;		/* --snapshot FILE */
	const char *resume;		/* --resume FILE */
	bool	    multiboot;		/* --multiboot */
	bool	    bzimage;		/* the guest is a Linux bzImage */
	const char *append;		/* --append STR: the Multiboot command line */
	const char *initrd;		/* --initrd FILE: Multiboot module 0 */
	bool	    exit_qemu;		/* --exit-status qemu */
	int	    user_syscall;	/* --user-syscall: VR_SYSCALL_* (syscall.c) */
	unsigned    timeout;		/* --timeout: s of wall time, 0: none */
	const char *event_filter;	/* --event-filter FILE|ipc|arch */
	int	    pmu_mode;		/* --pmu-mode: VPMU_PMU_MODE_* */
	bool	    pmu_mode_given;
};

/* ---- options, as a table ------------------------------------------------------ */

enum { O_PMU, O_SOURCE, O_EXACT_MODE, O_EXACT_FORESEE, O_EXACT_FF_MAX, O_VCPUS, O_MEM, O_HOST_COUNTERS, O_MUX, O_REPORT,
    O_GUEST_LOG, O_FASTPAGE_HZ, O_IRQCHIP, O_PV_PORT, O_SNAPSHOT, O_RESUME,
    O_MULTIBOOT, O_MB_APPEND, O_INITRD, O_EXIT_STATUS, O_TIMEOUT, O_USER_SYSCALL, O_EVENT_FILTER, O_PMU_MODE,
    O_QUIET, O_HELP };

static const struct opt {
	const char *name;
	int	    has_arg;
	int	    shortopt;		/* 0: long only */
	const char *arg;
	const char *help;
} opts[] = {
	[O_PMU] = { "pmu", required_argument, 0, "MODEL",
	    "guest-visible PMU: intel-v1..intel-v5, amd-k7, amd-core, amd-v2\n"
	    "or none, with optional :key=value,... (default intel-v2)" },
	[O_SOURCE] = { "source", required_argument, 0, "NAME",
	    "host counter source: exact, perf or synthetic (default exact)" },
	[O_EXACT_MODE] = { "exact-mode", required_argument, 0, "MODE",
	    "how the exact source follows the guest: step (every\n"
	    "instruction) or block (straight-line code to a breakpoint)\n"
	    "(default step)" },
	[O_EXACT_FORESEE] = { "exact-foresee", required_argument, 0, "on|off",
	    "in blocks, run on through conditional branches whose way\n"
	    "follows from the registers, and RETs to the run's own CALLs\n"
	    "(default on)" },
	[O_EXACT_FF_MAX] = { "exact-ff-max", required_argument, 0, "N",
	    "in blocks, the most instructions one fast-forwarded loop\n"
	    "runs with interrupts held back (0: libvpmu's default, 2^24;\n"
	    "1: no fast-forward)" },
	[O_VCPUS] = { "vcpus", required_argument, 0, "N",
	    "vCPUs, one thread each, 1..64 (default 1)" },
	[O_MEM] = { "mem", required_argument, 0, "MiB",
	    "guest RAM from guest-physical 0, at most 1024 (default 64;\n"
	    "128 for a Multiboot image)" },
	[O_MUX] = { "mux-interval", required_argument, 0, "US",
	    "vCPU run time between two rotations of multiplexed counters, "
	    "1..10000000 us (default 4000)" },
	[O_HOST_COUNTERS] = { "host-counters", required_argument, 0, "N",
	    "counters the source may run at once per vCPU, 1..4096" },
	[O_REPORT] = { "report", required_argument, 0, "FILE",
	    "write the report to FILE instead of standard error" },
	[O_GUEST_LOG] = { "guest-log", required_argument, 0, "N=PATH",
	    "offer PATH (created or truncated) to the guest as hwpmc log\n"
	    "descriptor N, 0..15 (PMC_OP_CONFIGURELOG); repeatable" },
	[O_FASTPAGE_HZ] = { "fastpage-hz", required_argument, 0, "N",
	    "refresh the guest's fast-read pages N times a second,\n"
	    "0..1000000, 0: at exits only (default 1000)" },
	[O_IRQCHIP] = { "irqchip", required_argument, 0, "MODE",
	    "kernel: KVM's in-kernel LAPIC, PMIs as the guest programs\n"
	    "LVTPC (NMI at boot; an Intel model's NMI entry is re-armed\n"
	    "after each PMI until the guest enables x2APIC or programs it);\n"
	    "user: none, PMIs as NMIs (default kernel)" },
	[O_PV_PORT] = { "pv-port", required_argument, 0, "N",
	    "the paravirtual channel at ports N..N+7 (default 0x5650),\n"
	    "0: no channel" },
	[O_SNAPSHOT] = { "snapshot", required_argument, 0, "FILE",
	    "a 32-bit write to port 0xf5 saves the VM to FILE and exits 0" },
	[O_RESUME] = { "resume", required_argument, 0, "FILE",
	    "continue the VM saved in FILE (same options and guest)" },
	[O_MULTIBOOT] = { "multiboot", no_argument, 0, NULL,
	    "boot GUEST as a Multiboot v1 image even if it is an ELF64\n"
	    "x86-64 executable (otherwise told by the file)" },
	[O_MB_APPEND] = { "append", required_argument, 0, "STR",
	    "Multiboot or Linux bzImage: the command line (default empty)" },
	[O_INITRD] = { "initrd", required_argument, 0, "FILE",
	    "Multiboot: FILE as module 0, page-aligned above the image;\n"
	    "Linux bzImage: FILE as the initrd, at the top of RAM" },
	[O_EXIT_STATUS] = { "exit-status", required_argument, 0, "HOW",
	    "a write of V to port 0xf4 exits with raw: V & 0xff,\n"
	    "qemu: (V << 1 | 1) & 0xff, as QEMU's isa-debug-exit\n"
	    "(default raw)" },
	[O_TIMEOUT] = { "timeout", required_argument, 0, "SECONDS",
	    "stop the guest when it has not exited after SECONDS of\n"
	    "wall time, 1..4294967295: the report, status 124" },
	[O_USER_SYSCALL] = { "user-syscall", required_argument, 0, "HOW",
	    "a guest's SYSCALL from user mode: auto completes it where\n"
	    "a probe finds that the host's KVM leaves it at CPL 3,\n"
	    "complete always catches it, host leaves it to KVM (default auto)" },
	[O_EVENT_FILTER] = { "event-filter", required_argument, 0, "FILE|ipc|arch",
	    "KVM's PMU event filter: Xen's preset ipc (instructions,\n"
	    "cycles, reference cycles) or arch (the architectural events),\n"
	    "or FILE in vpmu_event_filter(3)'s text format; a counter\n"
	    "it disallows counts nothing" },
	[O_PMU_MODE] = { "pmu-mode", required_argument, 0, "MODE",
	    "who implements the guest's counters: trap (libvpmu, through\n"
	    "MSR exits), kvm (KVM's own vPMU over the host PMU), auto (kvm\n"
	    "where the host allows it, else trap) (default trap)" },
	[O_QUIET] = { "quiet", no_argument, 'q', NULL, "print no report" },
	[O_HELP] = { "help", no_argument, 'h', NULL, "print this help and exit" },
};
#define NOPTS	(sizeof(opts) / sizeof(opts[0]))

static void
usage(FILE *f)
{
	char left[40];
	const char *h, *nl;
	size_t i;

	fprintf(f, "usage: vpmu-run [options] GUEST.elf\n"
	    "GUEST: an ELF64 x86-64 executable (boot protocol v1) or a Multiboot v1 "
	    "image\n");
	for (i = 0; i < NOPTS; i++) {
		snprintf(left, sizeof(left), "%s%c%s--%s%s%s",
		    opts[i].shortopt ? "-" : "   ",
		    opts[i].shortopt ? opts[i].shortopt : ' ',
		    opts[i].shortopt ? ", " : "", opts[i].name,
		    opts[i].arg ? " " : "", opts[i].arg ? opts[i].arg : "");
		for (h = opts[i].help; ; h = nl + 1) {
			nl = strchr(h, '\n');
			fprintf(f, "  %-24s %.*s\n", h == opts[i].help ? left : "",
			    nl ? (int)(nl - h) : (int)strlen(h), h);
			if (nl == NULL)
				break;
		}
	}
}

/*
 * --guest-log N=PATH: PATH opened now, so that a bad one is a usage error
 * before KVM is touched; the descriptor goes to libvpmu once the VM exists.
 */
static int
parse_guest_log(const char *s, struct vr_opts *o)
{
	const char *eq = strchr(s, '=');
	unsigned long n;
	char *end;
	int fd;

	errno = 0;
	n = eq != NULL ? strtoul(s, &end, 10) : 0;
	if (eq == NULL || eq == s || end != eq || errno != 0 || *s == '-' || *s == '+' ||
	    n >= VPMU_PV_MAX_LOGFDS || eq[1] == '\0') {
		fprintf(stderr, "vpmu-run: --guest-log %s: want N=PATH, N from 0 to %d\n",
		    s, VPMU_PV_MAX_LOGFDS - 1);
		return (-1);
	}
	if (o->glog_fd[n] >= 0) {
		fprintf(stderr, "vpmu-run: --guest-log %s: descriptor %lu given twice\n", s, n);
		return (-1);
	}
	if ((fd = open(eq + 1, O_CREAT | O_TRUNC | O_WRONLY | O_CLOEXEC, 0666)) < 0) {
		fprintf(stderr, "vpmu-run: --guest-log %s: %s\n", s, strerror(errno));
		return (-1);
	}
	o->glog_path[n] = eq + 1;
	o->glog_fd[n] = fd;
	return (0);
}

/*
 * --pv-port N: decimal or 0x hexadecimal; libvpmu's rule
 * (vpmu_config_set_pv_port), and the console port stays the VMM's.
 */
static int
parse_pv_port(const char *s, struct vr_opts *o)
{
	vpmu_config *cfg;
	unsigned long v;
	char *end;
	int e = EINVAL;

	errno = 0;
	v = strtoul(s, &end, 0);
	if (*s != '\0' && *s != '-' && *s != '+' && *end == '\0' && errno == 0 &&
	    v <= 0xFFFF && (v == 0 || ((v > VR_PORT_COM1 + 7 || v + 8 <= VR_PORT_COM1) &&
	    (v > VR_PORT_FWCFG_DATA || v + 8 <= VR_PORT_FWCFG_SEL))) &&
	    (e = vpmu_config_create(&cfg)) == 0) {
		e = vpmu_config_set_pv_port(cfg, (uint16_t)v);
		vpmu_config_destroy(cfg);
	}
	if (e != 0) {
		fprintf(stderr, "vpmu-run: --pv-port %s: want 0 or a base from 0x100 to "
		    "0xfff8 clear of 0x3f8..0x3ff, 0x510..0x511 and 0xcf8..0xcff\n", s);
		return (-1);
	}
	o->pv_port = (int)v;
	return (0);
}

/* A whole decimal number in [min, max], of what ("a number", "a number of seconds"). */
static int
parse_num(const char *opt, const char *s, unsigned long min, unsigned long max,
    const char *what, unsigned *out)
{
	unsigned long v;
	char *end;

	errno = 0;
	v = strtoul(s, &end, 10);
	if (!isdigit((unsigned char)*s) || *end != '\0' || errno != 0 || v < min || v > max) {
		fprintf(stderr, "vpmu-run: --%s %s: want %s from %lu to %lu\n",
		    opt, s, what, min, max);
		return (-1);
	}
	*out = (unsigned)v;
	return (0);
}

static int
parse_uint(const char *opt, const char *s, unsigned long min, unsigned long max,
    unsigned *out)
{
	return (parse_num(opt, s, min, max, "a number", out));
}

static int
parse_options(int argc, char **argv, struct vr_opts *o)
{
	struct option longopts[NOPTS + 1];
	char shortopts[2 * NOPTS + 1], *sp = shortopts;
	size_t i;
	int ch;

	memset(longopts, 0, sizeof(longopts));
	for (i = 0; i < NOPTS; i++) {
		longopts[i].name = opts[i].name;
		longopts[i].has_arg = opts[i].has_arg;
		longopts[i].val = 256 + (int)i;
		if (opts[i].shortopt) {
			*sp++ = (char)opts[i].shortopt;
			if (opts[i].has_arg)
				*sp++ = ':';
		}
	}
	*sp = '\0';

	while ((ch = getopt_long(argc, argv, shortopts, longopts, NULL)) != -1) {
		for (i = 0; i < NOPTS; i++)
			if (ch == 256 + (int)i || (opts[i].shortopt && ch == opts[i].shortopt))
				break;
		switch (i) {
		case O_PMU:
			o->pmu = optarg;
			break;
		case O_SOURCE:
			o->source = optarg;
			o->source_given = true;
			break;
		case O_VCPUS:
			if (parse_uint("vcpus", optarg, 1, VR_MAX_VCPUS, &o->vcpus) < 0)
				return (-1);
			break;
		case O_MEM:
			if (parse_uint("mem", optarg, 1, MEM_MAX, &o->mem) < 0)
				return (-1);
			break;
		case O_MUX:
			if (parse_uint("mux-interval", optarg, 1, 10000000, &o->mux_us) < 0)
				return (-1);
			break;
		case O_HOST_COUNTERS:
			if (parse_uint("host-counters", optarg, 1, 4096,
			    &o->host_counters) < 0)
				return (-1);
			break;
		case O_REPORT:
			o->report = optarg;
			break;
		case O_GUEST_LOG:
			if (parse_guest_log(optarg, o) < 0)
				return (-1);
			break;
		case O_FASTPAGE_HZ: {
			unsigned hz;

			if (parse_uint("fastpage-hz", optarg, 0, 1000000, &hz) < 0)
				return (-1);
			o->fastpage_hz = (int)hz;
			break;
		}
		case O_EXACT_MODE:
			if (strcmp(optarg, "step") != 0 && strcmp(optarg, "block") != 0) {
				fprintf(stderr, "vpmu-run: --exact-mode %s: want step or "
				    "block\n", optarg);
				return (-1);
			}
			o->exact_block = strcmp(optarg, "block") == 0;
			break;
		case O_EXACT_FORESEE:
			if (strcmp(optarg, "on") != 0 && strcmp(optarg, "off") != 0) {
				fprintf(stderr, "vpmu-run: --exact-foresee %s: want on or "
				    "off\n", optarg);
				return (-1);
			}
			o->exact_no_foresee = strcmp(optarg, "off") == 0;
			break;
		case O_USER_SYSCALL:
			if (strcmp(optarg, "auto") == 0)
				o->user_syscall = VR_SYSCALL_AUTO;
			else if (strcmp(optarg, "complete") == 0)
				o->user_syscall = VR_SYSCALL_COMPLETE;
			else if (strcmp(optarg, "host") == 0)
				o->user_syscall = VR_SYSCALL_HOST;
			else {
				fprintf(stderr, "vpmu-run: --user-syscall %s: want auto, "
				    "complete or host\n", optarg);
				return (-1);
			}
			break;
		case O_EXACT_FF_MAX:
			if (parse_uint("exact-ff-max", optarg, 0, UINT32_MAX,
			    &o->exact_ff_max) < 0)
				return (-1);
			break;
		case O_IRQCHIP:
			if (strcmp(optarg, "kernel") != 0 && strcmp(optarg, "user") != 0) {
				fprintf(stderr, "vpmu-run: --irqchip %s: want kernel or user\n",
				    optarg);
				return (-1);
			}
			o->irqchip_user = strcmp(optarg, "user") == 0;
			break;
		case O_PV_PORT:
			if (parse_pv_port(optarg, o) < 0)
				return (-1);
			break;
		case O_SNAPSHOT:
			o->snapshot = optarg;
			break;
		case O_RESUME:
			o->resume = optarg;
			break;
		case O_MULTIBOOT:
			o->multiboot = true;
			break;
		case O_MB_APPEND:
			o->append = optarg;
			break;
		case O_INITRD:
			o->initrd = optarg;
			break;
		case O_EXIT_STATUS:
			if (strcmp(optarg, "raw") != 0 && strcmp(optarg, "qemu") != 0) {
				fprintf(stderr, "vpmu-run: --exit-status %s: want raw or "
				    "qemu\n", optarg);
				return (-1);
			}
			o->exit_qemu = strcmp(optarg, "qemu") == 0;
			break;
		case O_TIMEOUT:
			if (parse_num("timeout", optarg, 1, UINT32_MAX, "a number of seconds",
			    &o->timeout) < 0)
				return (-1);
			break;
		case O_EVENT_FILTER:
			o->event_filter = optarg;
			break;
		case O_PMU_MODE:
			if (strcmp(optarg, "trap") == 0)
				o->pmu_mode = VPMU_PMU_MODE_TRAP;
			else if (strcmp(optarg, "kvm") == 0)
				o->pmu_mode = VPMU_PMU_MODE_KVM;
			else if (strcmp(optarg, "auto") == 0)
				o->pmu_mode = VPMU_PMU_MODE_AUTO;
			else {
				fprintf(stderr, "vpmu-run: --pmu-mode %s: want trap, kvm or "
				    "auto\n", optarg);
				return (-1);
			}
			o->pmu_mode_given = true;
			break;
		case O_QUIET:
			o->quiet = true;
			break;
		case O_HELP:
			usage(stdout);
			exit(EXIT_SUCCESS);
		default:
			return (-1);	/* getopt_long said why */
		}
	}
	if (optind != argc - 1) {
		fprintf(stderr, optind == argc ? "vpmu-run: no guest ELF given\n" :
		    "vpmu-run: one guest ELF only (\"%s\" too)\n", argv[argc - 1]);
		return (-1);
	}
	o->guest = argv[optind];
	return (0);
}

/* ---- the report ---------------------------------------------------------------- */

#define USER_UNSEEN_WARNING	"exact: user-mode (CPL3) guest code ran without being " \
	"stepped on this host: counts of user-mode events are not exact"

#define GUEST_TF_WARNING	"exact: the guest set RFLAGS.TF itself while followed: " \
	"its own single-step traps were not delivered (vpmu_exact(7), CAVEATS)"

/* A vpmu_kvm_stats counter (at offset off) is not 0 on some vCPU. */
static bool
any_vcpu(struct vr_vm *vm, size_t off)
{
	struct vpmu_kvm_stats st;
	uint64_t n;
	unsigned cpu;

	for (cpu = 0; cpu < vm->nvcpus; cpu++) {
		if (vpmu_kvm_get_stats(vm->k, cpu, &st) != 0)
			continue;
		memcpy(&n, (const char *)&st + off, sizeof(n));
		if (n != 0)
			return (true);
	}
	return (false);
}

/* Some vCPU ran user-mode code the exact source could not follow. */
#define user_unseen(vm)	any_vcpu(vm, offsetof(struct vpmu_kvm_stats, user_unseen))
/* Some vCPU stepped itself (RFLAGS.TF) while the exact source followed it. */
#define guest_tf(vm)	any_vcpu(vm, offsetof(struct vpmu_kvm_stats, guest_tf))

/* The counter counts at CPL > 0: USR in an event select, in a fixed counter's nibble. */
static bool
counts_user(const struct vpmu_counter_info *ci)
{
	if (strncmp(ci->name, "IA32_FIXED_CTR", 14) == 0)
		return ((ci->control & 0x2) != 0);
	return ((ci->control & (1u << 16)) != 0);
}

/*
 * The exact source's line: what it counted as retired (and of that, the
 * instructions libvpmu retired itself, which the guest never executed), next to
 * KVM's insn_emulation over the same time where the host has it (a
 * cross-check on hosts whose KVM emulates guest code: it must equal the
 * instructions the guest executed), and user-mode code it could not
 * follow.
 */
static void
report_exact(FILE *f, const struct vpmu_kvm_stats *st)
{
	uint64_t ran = st->exact_retired - st->exact_completed;

	fprintf(f, "  exact: retired %" PRIu64, st->exact_retired);
	if (st->exact_completed != 0)
		fprintf(f, " (%" PRIu64 " retired by libvpmu)", st->exact_completed);
	if (st->exact_ff_loops != 0)
		fprintf(f, " (%" PRIu64 " in %" PRIu64 " fast-forwarded loop%s)",
		    st->exact_ff_insns, st->exact_ff_loops, st->exact_ff_loops == 1 ? "" : "s");
	if (st->exact_foreseen != 0 || st->exact_mispredicted != 0)
		fprintf(f, " (%" PRIu64 " branch%s foreseen, %" PRIu64 " mispredicted)",
		    st->exact_foreseen, st->exact_foreseen == 1 ? "" : "es",
		    st->exact_mispredicted);
	fprintf(f, ", KVM insn_emulation ");
	if (!st->has_insn_emulation)
		fprintf(f, "n/a");
	else if (st->insn_emulation == ran)
		fprintf(f, "%" PRIu64 " (agrees)", st->insn_emulation);
	else
		fprintf(f, "%" PRIu64 " (differs by %+" PRId64 ")", st->insn_emulation,
		    (int64_t)(st->insn_emulation - ran));
	fprintf(f, ", user-mode code unseen at %" PRIu64 " exit%s\n", st->user_unseen,
	    st->user_unseen == 1 ? "" : "s");
}

/* What became of user-mode SYSCALLs, once the guest set IA32_LSTAR (syscall.c). */
static void
report_syscall(FILE *f, struct vr_vm *vm)
{
	static const char *const host[] = {
		[VR_SYSCALL_HOST_COMPLETES] = "this host's KVM completes it (probed)",
		[VR_SYSCALL_HOST_CPL3] = "this host's KVM leaves it at CPL 3 (probed)",
		[VR_SYSCALL_HOST_UNKNOWN] = "the probe of this host's KVM was inconclusive",
	};
	uint64_t n = __atomic_load_n(&vm->sys_completed, __ATOMIC_RELAXED);

	if (vm->sys_mode == VR_SYSCALL_COMPLETE)
		fprintf(f, "user-mode SYSCALL: caught (--user-syscall complete), "
		    "%" PRIu64 " completed by vpmu-run\n", n);
	else if (vm->sys_host != VR_SYSCALL_HOST_UNPROBED)
		fprintf(f, "user-mode SYSCALL: %s, %" PRIu64 " completed by vpmu-run\n",
		    host[vm->sys_host], n);
}

/* The signal that stopped the run, by name. */
static const char *
signame(int sig)
{
	return (sig == SIGINT ? "SIGINT" : sig == SIGTERM ? "SIGTERM" : "a signal");
}

/* How the run ended: the report's first line. */
static void
report_end(FILE *f, const struct vr_vm *vm, const struct vr_opts *o)
{
	switch (vm->end) {
	case VR_END_GUEST_EXIT:
		fprintf(f, "vpmu-run: %s: vCPU %u wrote %#" PRIx32 " to port 0xf4: "
		    "exit status %d\n", o->guest, vm->exit_cpu, vm->exit_value,
		    vm->status);
		break;
	case VR_END_TIMEOUT:
		fprintf(f, "vpmu-run: %s: timed out after %u s without a guest exit "
		    "(--timeout %u): stopped, status %d\n", o->guest, o->timeout,
		    o->timeout, vm->status);
		break;
	case VR_END_SIGNAL:
		fprintf(f, "vpmu-run: %s: stopped by %s: status %d\n", o->guest,
		    signame(vm->status - VR_EXIT_SIGNAL), vm->status);
		break;
	default:
		fprintf(f, "vpmu-run: %s: the run ended without a guest exit: "
		    "status %d\n", o->guest, vm->status);
	}
}

static void
report(FILE *f, struct vr_vm *vm, const struct vr_opts *o, const char *model,
    const char *source)
{
	struct vpmu_counter_info *ci;
	struct vpmu_kvm_stats st;
	unsigned cpu, i, n, used, bad;
	bool exact = strcmp(source, "exact") == 0;
	int err;

	report_end(f, vm, o);
	/* Which source counted, and whether anyone chose it. */
	fprintf(f, "model %s, source %s%s, %u vCPU%s, %u MiB\n", model, source,
	    o->source_given ? "" : " (the default)", vm->nvcpus,
	    vm->nvcpus == 1 ? "" : "s", o->mem);
	if (o->pmu_mode_given)
		fprintf(f, "guest PMU mode %s\n", vm->pmu_mode_why);
	if (exact && user_unseen(vm))
		fprintf(f, "%s\n", USER_UNSEEN_WARNING);
	report_syscall(f, vm);
	if (exact && guest_tf(vm))
		fprintf(f, "%s\n", GUEST_TF_WARNING);
	if ((ci = calloc(VR_MAX_COUNTERS, sizeof(*ci))) == NULL) {
		fprintf(f, "(no memory for the counter table)\n");
		return;
	}
	for (cpu = 0; cpu < vm->nvcpus; cpu++) {
		if ((err = vpmu_kvm_get_stats(vm->k, cpu, &st)) != 0)
			memset(&st, 0, sizeof(st));
		fprintf(f, "vCPU %u: MSR reads %" PRIu64 ", writes %" PRIu64
		    ", #GP %" PRIu64 " (+%" PRIu64 " outside the model), steps %"
		    PRIu64 ", PMIs %" PRIu64, cpu, st.msr_reads, st.msr_writes,
		    st.msr_gp, vm->gp_injected[cpu], st.steps, st.pmis);
		if (st.breaks != 0)	/* --exact-mode block */
			fprintf(f, ", breakpoints %" PRIu64 " (%" PRIu64 " completed)",
			    st.breaks, st.completed);
		if (st.rdpmc != 0)
			fprintf(f, ", RDPMC %" PRIu64 " (#GP %" PRIu64 ")", st.rdpmc,
			    st.rdpmc_gp);
		fprintf(f, "\n");
		if (exact)
			report_exact(f, &st);
		n = VR_MAX_COUNTERS;
		if ((err = vpmu_vcpu_get_counters(vm->pmu, cpu, ci, &n)) != 0) {
			fprintf(f, "  counters: vpmu_vcpu_get_counters: %s\n",
			    vpmu_strerror(err));
			continue;
		}
		for (i = used = bad = 0; i < n; i++) {
			if (!ci[i].used)
				continue;
			if (used++ == 0)
				fprintf(f, "  %-16s %-20s %20s %16s %16s  %-9s %s\n",
				    "counter", "event", "value", "enabled ns",
				    "running ns", "source", "multiplexed");
			fprintf(f, "  %-16s %-20s %20" PRIu64 " %16" PRIu64 " %16"
			    PRIu64 "  %-9s ", ci[i].name,
			    ci[i].event[0] ? ci[i].event : "-", ci[i].value,
			    ci[i].time_enabled, ci[i].time_running,
			    ci[i].unsupported ? "none" : source);
			/* Whether the value is an estimate, and from how much. */
			if (ci[i].scaled)
				fprintf(f, "scaled from %" PRIu64 " (ran %.1f%%)\n",
				    ci[i].raw, 100.0 * (double)ci[i].time_running /
				    (double)ci[i].time_enabled);
			else
				fprintf(f, "no\n");
			bad += ci[i].unsupported != 0;
			if (exact && st.user_unseen != 0 && !ci[i].unsupported &&
			    counts_user(&ci[i]))
				fprintf(f, "  %s: counts user mode: not exact\n", ci[i].name);
		}
		if (used == 0)
			fprintf(f, "  no counters used\n");
		/* Never invented counts: say which events were not counted, and why. */
		for (i = 0; bad != 0 && i < n; i++)
			if (ci[i].used && ci[i].unsupported)
				fprintf(f, "  %s: event %s not counted: %s\n",
				    ci[i].name, ci[i].event[0] ? ci[i].event : "-",
				    ci[i].why[0] ? ci[i].why : "the source cannot count it");
		/* Counters the event filter (--event-filter) keeps from counting. */
		for (i = 0; i < n; i++)
			if (ci[i].used && !ci[i].unsupported && ci[i].why[0])
				fprintf(f, "  %s: event %s not counted: %s\n", ci[i].name,
				    ci[i].event[0] ? ci[i].event : "-", ci[i].why);
	}
	free(ci);
	vr_marks_report(f, vm);
}

/* ---- the guest image ------------------------------------------------------------- */

/*
 * Which protocol boots the image: an ELF64 x86-64 executable is a boot
 * protocol v1 guest, unless --multiboot; else a Multiboot v1 header makes
 * it a Multiboot image (o->multiboot set); else an ELF file gets elf.c's
 * message at load, followed by why (why Multiboot did not apply; "" for
 * a boot protocol guest), anything else the names of both formats now.
 * 0, or VR_EXIT_USAGE after a message.
 */
static int
image_kind(struct vr_opts *o, const uint8_t *file, size_t flen, char *why, size_t whylen)
{
	static const uint8_t elf64[] = { 0x7f, 'E', 'L', 'F', 2 };
	uint16_t type = 0, machine = 0;
	size_t off;
	bool is_elf = flen >= 4 && memcmp(file, elf64, 4) == 0, boot;

	if (flen >= 20) {
		memcpy(&type, file + 16, 2);		/* e_type, e_machine */
		memcpy(&machine, file + 18, 2);
	}
	why[0] = '\0';
	if (!o->multiboot && vr_linux_find(file, flen)) {
		o->bzimage = true;
		if (o->irqchip_user || o->snapshot != NULL || o->resume != NULL) {
			fprintf(stderr, "vpmu-run: %s: a Linux bzImage needs --irqchip "
			    "kernel, and --snapshot and --resume are for boot protocol "
			    "guests only\n", o->guest);
			return (VR_EXIT_USAGE);
		}
		return (0);
	}
	boot = !o->multiboot && flen >= 20 && memcmp(file, elf64, sizeof(elf64)) == 0 &&
	    type == 2 /* ET_EXEC */ && machine == 62 /* EM_X86_64 */;
	if (boot) {
		/* the boot protocol */
	} else if (vr_mb_find(file, flen, &off, why, whylen)) {
		o->multiboot = true;
		why[0] = '\0';
	} else if (o->multiboot) {
		fprintf(stderr, "vpmu-run: %s: --multiboot: %s\n", o->guest, why);
		return (VR_EXIT_USAGE);
	} else if (!is_elf) {
		fprintf(stderr, "vpmu-run: %s: neither an ELF64 x86-64 executable "
		    "(vpmu-run boot protocol v1), nor a Linux bzImage (boot flag 0xAA55 "
		    "at 0x1fe, \"HdrS\" at 0x202), nor a Multiboot v1 image: not an ELF "
		    "file (no \\177ELF magic), and %s\n", o->guest, why);
		return (VR_EXIT_USAGE);
	}
	if (!o->multiboot && (o->append[0] != '\0' || o->initrd != NULL)) {
		fprintf(stderr, "vpmu-run: %s: --append and --initrd are for Multiboot "
		    "images and Linux bzImages\n", o->guest);
		return (VR_EXIT_USAGE);
	}
	if (o->multiboot && o->vcpus > 1 && o->irqchip_user) {
		fprintf(stderr, "vpmu-run: %s: a Multiboot guest starts its other vCPUs "
		    "with INIT and SIPI, which need --irqchip kernel\n", o->guest);
		return (VR_EXIT_USAGE);
	}
	if (o->multiboot && (o->snapshot != NULL || o->resume != NULL)) {
		fprintf(stderr, "vpmu-run: %s: --snapshot and --resume are for boot "
		    "protocol guests only\n", o->guest);
		return (VR_EXIT_USAGE);
	}
	return (0);
}

/*
 * A Linux kernel (linux) or a Multiboot image, with --initrd and --append,
 * into RAM; for Linux the MP table too.  0, or an exit status.
 */
static int
load_with_initrd(const struct vr_opts *o, const uint8_t *file, size_t flen,
    struct vr_vm *vm, struct vr_image *img, bool linux_kernel)
{
	struct vr_linux_boot lb = { .cmdline = o->append };
	struct vr_mb_boot mb = { .cmdline = o->append, .modname = o->initrd };
	uint8_t *rd = NULL;
	size_t rdlen = 0;
	char err[256], *line = NULL;
	int ret = 0;

	if (linux_kernel) {
		if ((line = vr_linux_cmdline(o->append)) == NULL) {
			fprintf(stderr, "vpmu-run: %s\n", strerror(ENOMEM));
			return (VR_EXIT_USAGE);
		}
		lb.cmdline = line;
	}

	if (o->initrd != NULL &&
	    vr_elf_read(o->initrd, &rd, &rdlen, err, sizeof(err)) < 0) {
		fprintf(stderr, "vpmu-run: --initrd %s\n", err);
		return (VR_EXIT_USAGE);
	}
	lb.initrd = mb.mod = rd;
	lb.initrd_len = mb.modlen = rdlen;
	if ((linux_kernel ? vr_linux_load(file, flen, vm->ram, vm->ram_size, &lb, img, err,
	    sizeof(err)) : vr_mb_load(file, flen, vm->ram, vm->ram_size, &mb, img, err,
	    sizeof(err))) < 0) {
		fprintf(stderr, "vpmu-run: %s: %s\n", o->guest, err);
		ret = VR_EXIT_USAGE;
	} else if (linux_kernel) {
		img->bzimage = true;
		(void)vr_linux_mptable(vm->ram, vm->nvcpus, 0, 0);
	}
	free(rd);
	free(line);
	return (ret);
}

/*
 * --event-filter: a preset for the model's vendor, or a file in the text
 * format; checked against the vendor now, so a bad one is a usage error.
 */
static int
event_filter_load(const char *arg, const struct vpmu_model *m, struct vpmu_event_filter **out)
{
	struct vpmu_event_filter *f;
	char why[256], *text = NULL;
	size_t len = 0, cap = 0, n;
	FILE *fp;
	int e, ok;

	if ((f = calloc(1, sizeof(*f))) == NULL) {
		fprintf(stderr, "vpmu-run: --event-filter: %s\n", strerror(ENOMEM));
		return (-1);
	}
	if (m->vendor == VPMU_VENDOR_NONE) {
		fprintf(stderr, "vpmu-run: --event-filter %s: the model %s has no PMU to "
		    "filter\n", arg, m->name);
		goto fail;
	}
	if (strcmp(arg, "ipc") == 0 || strcmp(arg, "arch") == 0) {
		(void)vpmu_event_filter_preset(arg, m->vendor, f);
		*out = f;
		return (0);
	}
	if ((fp = fopen(arg, "r")) == NULL) {
		fprintf(stderr, "vpmu-run: --event-filter %s: %s\n", arg, strerror(errno));
		goto fail;
	}
	do {
		if (cap - len < 4096) {
			char *t = realloc(text, cap + 65536);

			if (t == NULL || cap + 65536 > (1u << 24)) {
				free(t != NULL ? t : text);
				text = NULL;
				fclose(fp);
				fprintf(stderr, "vpmu-run: --event-filter %s: too large\n", arg);
				goto fail;
			}
			text = t;
			cap += 65536;
		}
		n = fread(text + len, 1, cap - len - 1, fp);
		len += n;
	} while (n > 0);
	e = ferror(fp);
	fclose(fp);
	if (e) {
		fprintf(stderr, "vpmu-run: --event-filter %s: read error\n", arg);
		goto fail;
	}
	text[len] = '\0';
	if (strlen(text) != len) {
		fprintf(stderr, "vpmu-run: --event-filter %s: a NUL byte in the file\n", arg);
		goto fail;
	}
	if ((e = vpmu_event_filter_parse(text, f, why, sizeof(why))) != 0) {
		fprintf(stderr, "vpmu-run: --event-filter %s: %s\n", arg, why);
		goto fail;
	}
	if ((e = vpmu_event_filter_allows(f, m->vendor, 0, &ok)) != 0) {
		fprintf(stderr, "vpmu-run: --event-filter %s: not a filter for model %s "
		    "(%s: a masked entry uses event select bits 11:8, AMD's only)\n",
		    arg, m->name, vpmu_errname(e));
		goto fail;
	}
	free(text);
	*out = f;
	return (0);
fail:
	free(text);
	free(f);
	return (-1);
}

/* ---- set-up ---------------------------------------------------------------------- */

/* Kvm mode is not possible here: a skip where the caller asked for one. */
static int
no_pmu(const char *why)
{
	const char *skip = getenv("VPMU_SKIP_NO_PMU");

	if (skip != NULL && strcmp(skip, "1") == 0) {
		printf("SKIP: --pmu-mode: %s\n", why);
		return (VR_EXIT_SKIP);
	}
	fprintf(stderr, "vpmu-run: --pmu-mode: %s\n", why);
	return (VR_EXIT_HOST);
}

/* /dev/kvm is missing or unusable: a skip where the caller asked for one. */
static int
no_kvm(const char *what)
{
	const char *skip = getenv("VPMU_SKIP_NO_KVM");

	if (skip != NULL && strcmp(skip, "1") == 0) {
		printf("SKIP: %s\n", what);
		return (VR_EXIT_SKIP);
	}
	fprintf(stderr, "vpmu-run: %s\n", what);
	return (VR_EXIT_HOST);
}

const char *vr_progname = "vpmu-run";

int
main(int argc, char **argv)
{
	static struct vr_vm vm;		/* large; zeroed */
	static const char *const known[] = { "exact", "perf", "synthetic" };
	struct vr_opts o = { .pmu = "intel-v2", .source = "exact", .vcpus = 1,
	    .fastpage_hz = -1, .pv_port = -1, .append = "", .user_syscall = VR_SYSCALL_AUTO };
	const struct vpmu_source_ops *src;
	struct vpmu_exact_params exact_params = { 0 };	/* CPI 1; vendor below */
	struct kvm_userspace_memory_region region;
	struct kvm_cpuid2 *cpuid = NULL;
	struct vpmu_model model;
	struct vr_image img;
	struct vr_snapconf sc;
	sigset_t held, oldmask;
	vpmu_config *cfg = NULL;
	FILE *rep = NULL;
	uint8_t *file = NULL;
	size_t flen, i;
	char err[256], modelstr[256], mbwhy[256];
	struct vpmu_event_filter *ef = NULL;
	unsigned max = 0;
	int e, ret = VR_EXIT_HOST;
	long api;

	vm.kvm_fd = vm.vm_fd = -1;
	for (i = 0; i < VPMU_PV_MAX_LOGFDS; i++)
		o.glog_fd[i] = -1;
	for (i = 0; i < VR_MAX_VCPUS; i++)
		vm.vcpu[i].fd = -1;
	vr_vm_sync_init(&vm);

	if (parse_options(argc, argv, &o) < 0) {
		usage(stderr);
		ret = VR_EXIT_USAGE;
		goto out_logs;
	}

	/* Everything the user gave is checked before KVM is touched. */
	if (vpmu_model_parse(o.pmu, &model, err, sizeof(err)) != 0) {
		fprintf(stderr, "vpmu-run: --pmu %s: %s\n", o.pmu, err);
		ret = VR_EXIT_USAGE;
		goto out_logs;
	}
	if (vpmu_model_format(&model, modelstr, sizeof(modelstr)) != 0)
		snprintf(modelstr, sizeof(modelstr), "%s", o.pmu);
	if (o.event_filter != NULL && event_filter_load(o.event_filter, &model, &ef) < 0) {
		ret = VR_EXIT_USAGE;
		goto out_logs;
	}
	if ((src = vpmu_source_lookup(o.source)) == NULL) {
		fprintf(stderr, "vpmu-run: --source %s: this libvpmu has no such "
		    "source; it has:", o.source);
		for (i = 0; i < sizeof(known) / sizeof(known[0]); i++)
			if (vpmu_source_lookup(known[i]) != NULL)
				fprintf(stderr, " %s", known[i]);
		fprintf(stderr, "\n");
		ret = VR_EXIT_USAGE;
		goto out_logs;
	}
	vm.nvcpus = o.vcpus;
	if (vr_elf_read(o.guest, &file, &flen, err, sizeof(err)) < 0) {
		fprintf(stderr, "vpmu-run: %s\n", err);
		ret = VR_EXIT_USAGE;
		goto out_logs;
	}
	if ((ret = image_kind(&o, file, flen, mbwhy, sizeof(mbwhy))) != 0)
		goto out;
	if (o.mem == 0)
		o.mem = o.bzimage ? MEM_DEFAULT_LINUX : o.multiboot ? MEM_DEFAULT_MB :
		    MEM_DEFAULT;
	vm.ram_size = (uint64_t)o.mem * MiB;
	vm.ram = mmap(NULL, vm.ram_size, PROT_READ | PROT_WRITE,
	    MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
	if (vm.ram == MAP_FAILED) {
		fprintf(stderr, "vpmu-run: guest RAM (%u MiB): %s\n", o.mem,
		    strerror(errno));
		vm.ram = NULL;
		ret = VR_EXIT_HOST;
		goto out;
	}
	memset(&img, 0, sizeof(img));
	vm.bzimage = o.bzimage;
	if (o.bzimage)
		ret = load_with_initrd(&o, file, flen, &vm, &img, true);
	else if (o.multiboot)
		ret = load_with_initrd(&o, file, flen, &vm, &img, false);
	else if (vr_elf_load(file, flen, vm.ram, vm.ram_size, &img, err, sizeof(err)) < 0) {
		fprintf(stderr, "vpmu-run: %s: %s%s%s%s\n", o.guest, err,
		    mbwhy[0] ? " (nor is it a Multiboot v1 image: " : "", mbwhy,
		    mbwhy[0] ? ")" : "");
		ret = VR_EXIT_USAGE;
	}
	if (ret != 0)
		goto out;
	/* What a snapshot is made with, and a resumed one must match. */
	sc = (struct vr_snapconf){ .nvcpus = vm.nvcpus, .ram_size = vm.ram_size,
	    .image_hash = vr_snapshot_hash(file, flen), .model = modelstr,
	    .source = src->name, .host_counters = o.host_counters, .mux_us = o.mux_us,
	    .irqchip_kernel = !o.irqchip_user };
	vm.snapshot_path = o.snapshot;
	vm.exit_qemu = o.exit_qemu;
	vm.sys_mode = o.user_syscall;
	free(file);
	file = NULL;
	/* Each vCPU owns the 64 KiB below its RSP: above the image. */
	if (!o.multiboot && !o.bzimage && ((uint64_t)vm.nvcpus * VR_STACK_SIZE > vm.ram_size ||
	    vm.ram_size - (uint64_t)vm.nvcpus * VR_STACK_SIZE < img.hi)) {
		fprintf(stderr, "vpmu-run: %s: %u MiB of RAM holds the image "
		    "(to %#" PRIx64 ") but not %u vCPU stack%s of 64 KiB above it; "
		    "raise --mem\n", o.guest, o.mem, img.hi, vm.nvcpus,
		    vm.nvcpus == 1 ? "" : "s");
		ret = VR_EXIT_USAGE;
		goto out;
	}
	if (!o.multiboot)
		vr_boot_tables(vm.ram);
	if (o.report != NULL && (rep = fopen(o.report, "w")) == NULL) {
		fprintf(stderr, "vpmu-run: --report %s: %s\n", o.report, strerror(errno));
		ret = VR_EXIT_USAGE;
		goto out;
	}

	/* KVM, or a skip. */
	if ((vm.kvm_fd = vr_kvm_open(err, sizeof(err))) < 0) {
		ret = no_kvm(err);
		goto out;
	}

	/* (The exact source takes the guest's vendor from the model.) */
	exact_params.mode = o.exact_block ? VPMU_EXACT_BLOCK : VPMU_EXACT_STEP;
	exact_params.ff_max = o.exact_ff_max;
	exact_params.flags = o.exact_no_foresee ? VPMU_EXACT_NO_FORESEE : 0;
	/* The virtual PMU: the model goes into the config before the VM exists. */
	if ((e = vpmu_config_create(&cfg)) != 0 ||
	    (e = vpmu_config_set_vcpus(cfg, vm.nvcpus)) != 0 ||
	    (e = vpmu_config_set_model(cfg, &model)) != 0 ||
	    (e = vpmu_config_set_source(cfg, src, src == &vpmu_source_exact ?
	    (void *)&exact_params : NULL)) != 0 ||
	    (e = vpmu_config_set_capacity(cfg, o.host_counters)) != 0 ||
	    (e = vpmu_config_set_event_filter(cfg, ef)) != 0 ||
	    /* auto with a user-space LAPIC: trap, KVM's vPMU would have no PMI */
	    (e = vpmu_config_set_pmu_mode(cfg, o.pmu_mode == VPMU_PMU_MODE_AUTO &&
	    o.irqchip_user ? VPMU_PMU_MODE_TRAP : o.pmu_mode)) != 0 ||
	    (o.pv_port >= 0 && (e = vpmu_config_set_pv_port(cfg, (uint16_t)o.pv_port)) != 0) ||
	    (o.mux_us != 0 &&
	    (e = vpmu_config_set_mux_interval(cfg, (uint64_t)o.mux_us * 1000)) != 0)) {
		fprintf(stderr, "vpmu-run: libvpmu configuration: %s\n", vpmu_strerror(e));
		goto out;
	}
	if ((e = vpmu_vm_create(cfg, &vm.pmu)) != 0) {
		fprintf(stderr, "vpmu-run: vpmu_vm_create (model %s, source %s): %s\n",
		    modelstr, src->name, vpmu_strerror(e));
		goto out;
	}
	/* Which PMU mode this host gives, and why: before KVM is touched. */
	if (o.pmu_mode == VPMU_PMU_MODE_KVM && o.irqchip_user)
		vm.pmu_mode = VPMU_PMU_MODE_KVM;	/* refused below, whatever the host */
	else if ((e = vpmu_kvm_resolve_pmu_mode(vm.pmu, &vm.pmu_mode, vm.pmu_mode_why,
	    sizeof(vm.pmu_mode_why))) != 0) {
		ret = no_pmu(vm.pmu_mode_why);
		goto out;
	}
	if (o.pmu_mode == VPMU_PMU_MODE_AUTO && o.irqchip_user)
		snprintf(vm.pmu_mode_why, sizeof(vm.pmu_mode_why), "trap: kvm mode is not "
		    "possible: KVM's vPMU interrupts through the in-kernel LAPIC, and this run "
		    "has --irqchip user");
	if (vm.pmu_mode == VPMU_PMU_MODE_KVM && o.irqchip_user) {
		fprintf(stderr, "vpmu-run: --pmu-mode %s: KVM's vPMU needs --irqchip kernel "
		    "(its PMIs go to the in-kernel LAPIC)\n",
		    o.pmu_mode == VPMU_PMU_MODE_KVM ? "kvm" : "auto");
		ret = VR_EXIT_USAGE;
		goto out;
	}
	sc.pmu_kvm = vm.pmu_mode == VPMU_PMU_MODE_KVM;
	/* libvpmu duplicates the descriptor at CONFIGURELOG; ours closes at the end. */
	for (i = 0; i < VPMU_PV_MAX_LOGFDS; i++)
		if (o.glog_fd[i] >= 0 &&
		    (e = vpmu_pv_set_logfd(vm.pmu, (int)i, o.glog_fd[i])) != 0) {
			fprintf(stderr, "vpmu-run: vpmu_pv_set_logfd %zu (%s): %s\n", i,
			    o.glog_path[i], vpmu_strerror(e));
			goto out;
		}
	if (o.fastpage_hz >= 0 &&
	    (e = vpmu_pv_set_fastpage_rate(vm.pmu, (unsigned)o.fastpage_hz)) != 0) {
		fprintf(stderr, "vpmu-run: vpmu_pv_set_fastpage_rate: %s\n", vpmu_strerror(e));
		goto out;
	}
	if ((vm.vm_fd = ioctl(vm.kvm_fd, KVM_CREATE_VM, 0)) < 0) {
		snprintf(err, sizeof(err), "KVM_CREATE_VM: %s", strerror(errno));
		ret = no_kvm(err);
		goto out;
	}
	/* The in-kernel irqchip before any vCPU: each gets its LAPIC. */
	vm.irqchip_kernel = !o.irqchip_user;
	/* (The re-arm is the boot protocol's: a Multiboot guest programs LVTPC.) */
	vm.lvtpc_rearm = vm.irqchip_kernel && !o.multiboot && !o.bzimage &&
	    model.vendor == VPMU_VENDOR_INTEL;
	if (vm.irqchip_kernel && ioctl(vm.vm_fd, KVM_CREATE_IRQCHIP, 0) < 0) {
		fprintf(stderr, "vpmu-run: KVM_CREATE_IRQCHIP: %s (try --irqchip user)\n",
		    strerror(errno));
		goto out;
	}
	/* Linux keeps time with the PIT at boot: KVM's, on IRQ 0. */
	if (o.bzimage && ioctl(vm.vm_fd, KVM_CREATE_PIT2,
	    &(struct kvm_pit_config){ .flags = KVM_PIT_SPEAKER_DUMMY }) < 0) {
		fprintf(stderr, "vpmu-run: KVM_CREATE_PIT2: %s\n", strerror(errno));
		goto out;
	}
	if ((e = vpmu_kvm_create(vm.pmu, vm.vm_fd, &vm.k)) != 0) {
		fprintf(stderr, "vpmu-run: vpmu_kvm_create: %s\n", vpmu_strerror(e));
		goto out;
	}
	if (vr_syscall_filter(&vm) < 0)
		goto out;
	if (ioctl(vm.vm_fd, KVM_SET_TSS_ADDR, TSS_ADDR_KVM) < 0) {
		fprintf(stderr, "vpmu-run: KVM_SET_TSS_ADDR: %s\n", strerror(errno));
		goto out;
	}
	memset(&region, 0, sizeof(region));
	region.slot = 0;
	region.guest_phys_addr = 0;
	region.memory_size = vm.ram_size;
	region.userspace_addr = (uintptr_t)vm.ram;
	if (ioctl(vm.vm_fd, KVM_SET_USER_MEMORY_REGION, &region) < 0) {
		fprintf(stderr, "vpmu-run: KVM_SET_USER_MEMORY_REGION: %s\n",
		    strerror(errno));
		goto out;
	}
	if ((e = vpmu_kvm_add_memory(vm.k, 0, vm.ram_size, vm.ram)) != 0) {
		fprintf(stderr, "vpmu-run: vpmu_kvm_add_memory: %s\n", vpmu_strerror(e));
		goto out;
	}
	if ((api = ioctl(vm.kvm_fd, KVM_GET_VCPU_MMAP_SIZE, 0)) <= 0) {
		fprintf(stderr, "vpmu-run: KVM_GET_VCPU_MMAP_SIZE: %s\n", strerror(errno));
		goto out;
	}
	vm.run_size = (size_t)api;
	if ((cpuid = vr_supported_cpuid(vm.kvm_fd, &max)) == NULL) {
		fprintf(stderr, "vpmu-run: KVM_GET_SUPPORTED_CPUID: %s\n", strerror(errno));
		goto out;
	}
	for (i = 0; i < vm.nvcpus; i++) {
		vm.vcpu[i].vm = &vm;
		vm.vcpu[i].index = (unsigned)i;
		if (vr_vcpu_setup(&vm, &vm.vcpu[i], cpuid, max, &img) < 0)
			goto out;
	}

	if (o.resume != NULL && (ret = vr_snapshot_resume(&vm, o.resume, &sc)) != 0)
		goto out;
	ret = VR_EXIT_HOST;

	/*
	 * Run: the status is the guest's exit, or why the run ended; SIGINT,
	 * SIGTERM and --timeout end it from here (vr_run_supervise).
	 */
	if (vr_run_prepare() < 0 || vr_run_hold_signals(&held, &oldmask) < 0)
		goto out;
	(void)vr_run_start(&vm);
	vr_run_supervise(&vm, o.timeout, &held, &oldmask);
	vr_run_wait(&vm);
	ret = vm.status;
	if (vm.end == VR_END_SNAPSHOT)
		ret = vr_snapshot_save(&vm, &sc);
	if (!o.quiet)
		report(rep != NULL ? rep : stderr, &vm, &o, modelstr, src->name);
	/* Stopped from outside: said on standard error, in the report or not. */
	if (o.quiet || rep != NULL) {
		if (vm.end == VR_END_TIMEOUT || vm.end == VR_END_SIGNAL)
			report_end(stderr, &vm, &o);
		/* Once, on standard error, unless the report just said it there. */
		if (src == &vpmu_source_exact && user_unseen(&vm))
			fprintf(stderr, "vpmu-run: %s\n", USER_UNSEEN_WARNING);
		if (src == &vpmu_source_exact && guest_tf(&vm))
			fprintf(stderr, "vpmu-run: %s\n", GUEST_TF_WARNING);
	}

out:
	if (rep != NULL && fclose(rep) != 0) {
		fprintf(stderr, "vpmu-run: --report %s: %s\n", o.report, strerror(errno));
		if (ret == 0)
			ret = VR_EXIT_HOST;
	}
	free(file);
	free(cpuid);
	/* libvpmu's KVM glue goes first: it may still talk to the VM. */
	if (vm.k != NULL)
		vpmu_kvm_destroy(vm.k);
	for (i = 0; i < VR_MAX_VCPUS; i++) {
		if (vm.vcpu[i].run != NULL)
			munmap(vm.vcpu[i].run, vm.run_size);
		if (vm.vcpu[i].fd >= 0)
			close(vm.vcpu[i].fd);
	}
	if (vm.vm_fd >= 0)
		close(vm.vm_fd);
	if (vm.kvm_fd >= 0)
		close(vm.kvm_fd);
	vpmu_vm_destroy(vm.pmu);
	if (cfg != NULL)
		vpmu_config_destroy(cfg);
	if (vm.ram != NULL)
		munmap(vm.ram, vm.ram_size);
out_logs:
	free(ef);
	for (i = 0; i < VPMU_PV_MAX_LOGFDS; i++)
		if (o.glog_fd[i] >= 0)
			close(o.glog_fd[i]);
	vr_marks_free(&vm);
	vr_vm_sync_destroy(&vm);
	return (ret);
}
