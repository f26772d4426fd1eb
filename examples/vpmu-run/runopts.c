/*
 * runopts.c -- the options of a run, one table for vpmu-run and vpmustat:
 * each option's name, argument, help text, handler and the field it sets
 * (vr_opts[]), getopt_long's table made from it, the handlers that parse
 * each option's argument into a struct vr_runopts, and the lines of the
 * usage message.  An option marked own is vpmu-run's alone (--report, -j,
 * -x, --snapshot, --resume, --quiet, --help, --version); vpmustat takes
 * the others.  Messages are prefixed with vr_progname; a usage error's is
 * followed by vr_usage_try()'s line.  No KVM: the set-up the options ask
 * for is setup.c's.
 */
#include <ctype.h>
#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <vpmu/pv.h>

#include "vpmu-run.h"


/* Each option's handler (below the table): 0, or -1 after a message. */
static vr_opt_fn set_str, set_true, set_source, set_lib, set_lib_unchecked, set_lib_num,
    set_vcpus, set_mem, set_guest_log, set_fastpage_hz, set_choice, set_pv_port,
    set_timeout, set_pmu_mode, set_format;

#define F(m)	offsetof(struct vr_runopts, m)

const struct vr_opt vr_opts[VR_O_NOPTS] = {
	[VR_O_PMU] = { "pmu", required_argument, 0, "MODEL",
	    "guest-visible PMU: intel-v1..intel-v5, amd-k7, amd-core, amd-v2\n"
	    "or none, with optional :key=value,... (default intel-v2)", false,
	    set_str, F(pmu) },
	[VR_O_SOURCE] = { "source", required_argument, 0, "NAME",
	    "host counter source: exact, perf or synthetic (default exact)", false,
	    set_source, 0 },
	[VR_O_EXACT_MODE] = { "exact-mode", required_argument, 0, "MODE",
	    "how the exact source follows the guest: step (every\n"
	    "instruction) or block (straight-line code to a breakpoint)\n"
	    "(default block)", false,
	    set_lib, 0 },
	[VR_O_EXACT_FORESEE] = { "exact-foresee", required_argument, 0, "on|off",
	    "in blocks, run on through conditional branches whose way\n"
	    "follows from the registers, and RETs to the run's own CALLs\n"
	    "(default on)", false,
	    set_lib, 0 },
	[VR_O_EXACT_INTERP] = { "exact-interp", required_argument, 0, "on|off",
	    "at an exit, run the instructions that follow in user space\n"
	    "where the registers and guest memory say what they do\n"
	    "(default on)", false,
	    set_lib, 0 },
	[VR_O_EXACT_FF_MAX] = { "exact-ff-max", required_argument, 0, "N",
	    "in blocks, the most instructions one fast-forwarded loop\n"
	    "runs with interrupts held back (0: libvpmu's default, 2^24;\n"
	    "1: no fast-forward)", false,
	    set_lib, 0 },
	[VR_O_EXACT_REF_CPI] = { "exact-ref-cpi", required_argument, 0, "N",
	    "reference cycles per retired instruction, 1..1000, for counts\n"
	    "that do not depend on the host (default 0: they follow the\n"
	    "TSC while the vCPU is not halted)", false,
	    set_lib, 0 },
	[VR_O_VCPUS] = { "vcpus", required_argument, 0, "N",
	    "vCPUs, one thread each, 1..64 (default 1)", false,
	    set_vcpus, 0 },
	[VR_O_MEM] = { "mem", required_argument, 0, "SIZE",
	    "guest RAM from guest-physical 0: MiB, or N with K, M or G,\n"
	    "1M to 3G (default 64M; 128M for a Multiboot image, 512M\n"
	    "for a Linux bzImage, which takes 64M at least)", false,
	    set_mem, 0 },
	[VR_O_MUX] = { "mux-interval", required_argument, 0, "US",
	    "vCPU run time between two rotations of multiplexed counters, "
	    "1..10000000 us (default 4000)", false,
	    set_lib_num, F(mux_us) },
	[VR_O_HOST_COUNTERS] = { "host-counters", required_argument, 0, "N",
	    "counters the source may run at once per vCPU, 1..4096", false,
	    set_lib_num, F(host_counters) },
	[VR_O_REPORT] = { "report", required_argument, 0, "FILE",
	    "write the report to FILE instead of standard error\n"
	    "(-: standard output; the guest's console then goes to\n"
	    "standard error)", true,
	    set_str, F(report) },
	[VR_O_GUEST_LOG] = { "guest-log", required_argument, 0, "N=PATH",
	    "offer PATH (created or truncated; -: standard output) to the\n"
	    "guest as hwpmc log descriptor N, 0..15 (PMC_OP_CONFIGURELOG);\n"
	    "repeatable", false,
	    set_guest_log, 0 },
	[VR_O_FASTPAGE_HZ] = { "fastpage-hz", required_argument, 0, "N",
	    "refresh the guest's fast-read pages N times a second,\n"
	    "0..1000000, 0: at exits only (default 1000)", false,
	    set_fastpage_hz, 0 },
	[VR_O_IRQCHIP] = { "irqchip", required_argument, 0, "MODE",
	    "kernel: KVM's in-kernel LAPIC, PMIs as the guest programs\n"
	    "LVTPC (NMI at boot; an Intel model's NMI entry is re-armed\n"
	    "after each PMI until the guest enables x2APIC or programs it);\n"
	    "user: none, PMIs as NMIs (default kernel)", false,
	    set_choice, F(irqchip_user) },
	[VR_O_PV_PORT] = { "pv-port", required_argument, 0, "N",
	    "the paravirtual channel at ports N..N+7 (default 0x5650),\n"
	    "0: no channel", false,
	    set_pv_port, 0 },
	[VR_O_SNAPSHOT] = { "snapshot", required_argument, 0, "FILE",
	    "a 32-bit write to port 0xf5 saves the VM to FILE (-: standard\n"
	    "output) and exits 0", true,
	    set_str, F(snapshot) },
	[VR_O_RESUME] = { "resume", required_argument, 0, "FILE",
	    "continue the VM saved in FILE (same options and guest;\n"
	    "-: standard input)", true,
	    set_str, F(resume) },
	[VR_O_MULTIBOOT] = { "multiboot", no_argument, 0, NULL,
	    "boot GUEST as a Multiboot v1 image even if it is an ELF64\n"
	    "x86-64 executable (otherwise told by the file)", false,
	    set_true, F(multiboot) },
	[VR_O_MB_APPEND] = { "append", required_argument, 0, "STR",
	    "Multiboot or Linux bzImage: the command line (default empty)", false,
	    set_str, F(append) },
	[VR_O_INITRD] = { "initrd", required_argument, 0, "FILE",
	    "Multiboot: FILE as module 0, page-aligned above the image;\n"
	    "Linux bzImage: FILE as the initrd, at the top of RAM\n"
	    "(-: standard input)", false,
	    set_str, F(initrd) },
	[VR_O_EXIT_STATUS] = { "exit-status", required_argument, 0, "HOW",
	    "a write of V to port 0xf4 exits with raw: V & 0xff,\n"
	    "qemu: (V << 1 | 1) & 0xff, as QEMU's isa-debug-exit\n"
	    "(default raw)", false,
	    set_choice, F(exit_qemu) },
	[VR_O_TIMEOUT] = { "timeout", required_argument, 0, "SECONDS",
	    "stop the guest when it has not exited after SECONDS of\n"
	    "wall time, 1..4294967295: the report, status 124", false,
	    set_timeout, 0 },
	[VR_O_USER_SYSCALL] = { "user-syscall", required_argument, 0, "HOW",
	    "a guest's SYSCALL from user mode: auto completes it where\n"
	    "a probe finds that the host's KVM leaves it at CPL 3,\n"
	    "complete always catches it, host leaves it to KVM (default auto)", false,
	    set_choice, F(user_syscall) },
	[VR_O_EVENT_FILTER] = { "event-filter", required_argument, 0, "FILE|ipc|arch",
	    "KVM's PMU event filter: Xen's preset ipc (instructions,\n"
	    "cycles, reference cycles) or arch (the architectural events),\n"
	    "or FILE in vpmu_event_filter(3)'s text format; a counter\n"
	    "it disallows counts nothing", false,
	    set_lib_unchecked, 0 },
	[VR_O_UNCOUNTED] = { "uncounted", required_argument, 0, "fail|allow",
	    "a source that cannot count the model's events here (perf\n"
	    "without a hardware PMU): fail, the default, or allow (the\n"
	    "guest's counters count nothing)", false,
	    set_lib, 0 },
	[VR_O_PMU_MODE] = { "pmu-mode", required_argument, 0, "MODE",
	    "who implements the guest's counters: trap (libvpmu, through\n"
	    "MSR exits), kvm (KVM's own vPMU over the host PMU), auto (kvm\n"
	    "where the host allows it, else trap) (default trap)", false,
	    set_pmu_mode, 0 },
	[VR_O_JSON] = { "json", no_argument, 'j', NULL,
	    "the report as JSON, one object a line (as perf stat -j)", true,
	    set_format, 0 },
	[VR_O_FIELD_SEP] = { "field-separator", required_argument, 'x', "SEP",
	    "the report as CSV, fields separated by the character SEP\n"
	    "(as perf stat -x)", true,
	    set_format, 0 },
	[VR_O_QUIET] = { "quiet", no_argument, 'q', NULL, "print no report", true,
	    set_true, F(quiet) },
	[VR_O_HELP] = { "help", no_argument, 'h', NULL, "print this help and exit", true,
	    NULL, 0 },
	[VR_O_VERSION] = { "version", no_argument, 0, NULL,
	    "print the version of vpmu-run and libvpmu and exit", true,
	    NULL, 0 },
};

/*
 * --guest-log N=PATH: PATH opened now, so that a bad one is a usage error
 * before KVM is touched; the descriptor goes to libvpmu once the VM exists.
 */
static int
set_guest_log(const struct vr_opt *opt, const char *s, struct vr_runopts *o)
{
	const char *eq = strchr(s, '=');
	unsigned long n;
	char *end;
	int fd;

	(void)opt;
	errno = 0;
	n = eq != NULL ? strtoul(s, &end, 10) : 0;
	if (eq == NULL || eq == s || end != eq || errno != 0 || *s == '-' || *s == '+' ||
	    n >= VPMU_PV_MAX_LOGFDS || eq[1] == '\0') {
		fprintf(stderr, "%s: --guest-log %s: want N=PATH, N from 0 to %d\n",
		    vr_progname, s, VPMU_PV_MAX_LOGFDS - 1);
		return (-1);
	}
	if (o->glog_fd[n] >= 0) {
		fprintf(stderr, "%s: --guest-log %s: descriptor %lu given twice\n",
		    vr_progname, s, n);
		return (-1);
	}
	/* "-": standard output (the guest's console then goes to standard error). */
	if (strcmp(eq + 1, "-") == 0)
		fd = fcntl(STDOUT_FILENO, F_DUPFD_CLOEXEC, 3);
	else
		fd = open(eq + 1, O_CREAT | O_TRUNC | O_WRONLY | O_CLOEXEC, 0666);
	if (fd < 0) {
		fprintf(stderr, "%s: --guest-log %s: %s\n", vr_progname, s, strerror(errno));
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
set_pv_port(const struct vr_opt *opt, const char *s, struct vr_runopts *o)
{
	vpmu_config *cfg;
	unsigned long v;
	char *end;
	int e = EINVAL;

	(void)opt;
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
		fprintf(stderr, "%s: --pv-port %s: want 0 or a base from 0x100 to "
		    "0xfff8 clear of 0x3f8..0x3ff, 0x510..0x511 and 0xcf8..0xcff\n",
		    vr_progname, s);
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
		fprintf(stderr, "%s: --%s %s: want %s from %lu to %lu\n", vr_progname,
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

/*
 * An option libvpmu reads: checked by libvpmu's own parser
 * (vpmu_config_set_option(), vpmu_config(3) SPEC STRINGS) on a scratch
 * configuration whose source is the exact source, so that a bad value is
 * a usage error before anything runs, then kept for setup.c, which gives
 * the VM's configuration every one in the order given.  --event-filter is
 * checked there, against the model.
 */
static int
lib_option(const char *name, const char *arg, bool check, struct vr_runopts *o)
{
	vpmu_config *cfg;
	char why[256];
	int e;

	if (check && (e = vpmu_config_create(&cfg)) == 0) {
		(void)vpmu_config_set_option(cfg, "source", "exact", NULL, 0);
		e = vpmu_config_set_option(cfg, name, arg, why, sizeof(why));
		vpmu_config_destroy(cfg);
		if (e != 0) {
			fprintf(stderr, "%s: --%s %s: %s\n", vr_progname, name, arg,
			    e == EINVAL ? why : strerror(e));
			return (-1);
		}
	}
	if (o->nlib == VR_LIBOPTS_MAX) {
		fprintf(stderr, "%s: --%s: more than %d libvpmu options\n", vr_progname, name,
		    VR_LIBOPTS_MAX);
		return (-1);
	}
	o->lib[o->nlib].name = name;
	o->lib[o->nlib++].arg = arg;
	return (0);
}

/*
 * --mem SIZE: a whole number of MiB, or of KiB, MiB or GiB with the suffix
 * K, M or G (either case), from 1 MiB to VR_MEM_MAX_MIB.  Each image kind's
 * own bounds (a Linux bzImage's 64 MiB, a Multiboot image's more than
 * 1 MiB) are its loader's.
 */
static int
parse_mem(const char *s, unsigned *out)
{
	unsigned long long v, kib;
	char *end;

	errno = 0;
	v = strtoull(s, &end, 10);
	if (!isdigit((unsigned char)*s) || errno != 0 || v > (1ull << 40))
		goto bad;
	switch (*end) {
	case '\0':
	case 'M':
	case 'm':
		kib = v << 10;
		break;
	case 'K':
	case 'k':
		kib = v;
		break;
	case 'G':
	case 'g':
		kib = v << 20;
		break;
	default:
		goto bad;
	}
	if (*end != '\0' && end[1] != '\0')
		goto bad;
	if (kib % 1024 != 0) {
		fprintf(stderr, "%s: --mem %s: want a whole number of MiB\n", vr_progname, s);
		return (-1);
	}
	if (kib < 1024 || kib > (unsigned long long)VR_MEM_MAX_MIB << 10) {
		fprintf(stderr, "%s: --mem %s: want 1M to 3G: RAM ends below the 32-bit "
		    "hole at 3 GiB (the I/O APIC, the local APIC and KVM's TSS are above "
		    "it), and vpmu-run does not split RAM around it\n", vr_progname, s);
		return (-1);
	}
	*out = (unsigned)(kib >> 10);
	return (0);
bad:
	fprintf(stderr, "%s: --mem %s: want a size: a number of MiB, or a number "
	    "followed by K, M or G\n", vr_progname, s);
	return (-1);
}

void
vr_usage_try(void)
{
	fprintf(stderr, "Try '%s --help' for more information.\n", vr_progname);
}

int
vr_parse_sep(const char *opt, const char *arg, char *sep)
{
	if (arg[0] == '\0' || arg[1] != '\0' || arg[0] == '"' || arg[0] == '\r' ||
	    arg[0] == '\n') {
		fprintf(stderr, "%s: %s '%s': want one character, not a double quote "
		    "or a line break\n", vr_progname, opt, arg);
		return (-1);
	}
	*sep = arg[0];
	return (0);
}

int
vr_print_version(const char *prog)
{
	printf("%s (libvpmu %s)\n", prog, vpmu_version());
	return (fflush(stdout) != 0 || ferror(stdout) ? 1 : 0);
}

void
vr_runopts_init(struct vr_runopts *o)
{
	size_t i;

	memset(o, 0, sizeof(*o));
	o->pmu = "intel-v2";
	o->source = "exact";
	o->vcpus = 1;
	o->fastpage_hz = -1;
	o->pv_port = -1;
	o->append = "";
	o->user_syscall = VR_SYSCALL_AUTO;
	for (i = 0; i < VPMU_PV_MAX_LOGFDS; i++)
		o->glog_fd[i] = -1;
}

void
vr_runopts_close(struct vr_runopts *o)
{
	size_t i;

	for (i = 0; i < VPMU_PV_MAX_LOGFDS; i++)
		if (o->glog_fd[i] >= 0) {
			close(o->glog_fd[i]);
			o->glog_fd[i] = -1;
		}
}

size_t
vr_runopts_longopts(struct option *lo, char *shortopts, bool own, int base)
{
	size_t i, n = 0;

	for (i = 0; i < VR_O_NOPTS; i++) {
		if (vr_opts[i].own && !own)
			continue;
		memset(&lo[n], 0, sizeof(lo[n]));
		lo[n].name = vr_opts[i].name;
		lo[n].has_arg = vr_opts[i].has_arg;
		lo[n++].val = base + (int)i;
		if (vr_opts[i].shortopt && shortopts != NULL) {
			shortopts += strlen(shortopts);
			*shortopts++ = (char)vr_opts[i].shortopt;
			if (vr_opts[i].has_arg)
				*shortopts++ = ':';
			*shortopts = '\0';
		}
	}
	return (n);
}

/* ---- the handlers --------------------------------------------------------- */

/* A string, kept (a model, a path, a command line). */
static int
set_str(const struct vr_opt *opt, const char *arg, struct vr_runopts *o)
{
	*(const char **)(void *)((char *)o + opt->field) = arg;
	return (0);
}

static int
set_true(const struct vr_opt *opt, const char *arg, struct vr_runopts *o)
{
	(void)arg;
	*(bool *)(void *)((char *)o + opt->field) = true;
	return (0);
}

static int
set_source(const struct vr_opt *opt, const char *arg, struct vr_runopts *o)
{
	(void)opt;
	o->source = arg;
	o->source_given = true;
	return (0);
}

/* An option libvpmu reads, checked now (lib_option()). */
static int
set_lib(const struct vr_opt *opt, const char *arg, struct vr_runopts *o)
{
	return (lib_option(opt->name, arg, true, o));
}

/* --event-filter: checked by setup.c, against the model. */
static int
set_lib_unchecked(const struct vr_opt *opt, const char *arg, struct vr_runopts *o)
{
	return (lib_option(opt->name, arg, false, o));
}

/* --mux-interval, --host-counters: libvpmu's, and the number kept: snapshots record it. */
static int
set_lib_num(const struct vr_opt *opt, const char *arg, struct vr_runopts *o)
{
	if (lib_option(opt->name, arg, true, o) < 0)
		return (-1);
	*(unsigned *)(void *)((char *)o + opt->field) = (unsigned)strtoul(arg, NULL, 10);
	return (0);
}

static int
set_vcpus(const struct vr_opt *opt, const char *arg, struct vr_runopts *o)
{
	return (parse_uint(opt->name, arg, 1, VR_MAX_VCPUS, &o->vcpus));
}

static int
set_mem(const struct vr_opt *opt, const char *arg, struct vr_runopts *o)
{
	(void)opt;
	return (parse_mem(arg, &o->mem));
}

static int
set_fastpage_hz(const struct vr_opt *opt, const char *arg, struct vr_runopts *o)
{
	unsigned hz;

	if (parse_uint(opt->name, arg, 0, 1000000, &hz) < 0)
		return (-1);
	o->fastpage_hz = (int)hz;
	return (0);
}

static int
set_timeout(const struct vr_opt *opt, const char *arg, struct vr_runopts *o)
{
	return (parse_num(opt->name, arg, 1, UINT32_MAX, "a number of seconds",
	    &o->timeout));
}

/*
 * The options whose argument is one of a few words: the words in the
 * order the message lists them, each with the value stored (an int).
 */
struct choice {
	const char *name;
	int	    value;
};
static const struct choice *const choices[VR_O_NOPTS] = {
	[VR_O_USER_SYSCALL] = (const struct choice[]){ { "auto", VR_SYSCALL_AUTO },
	    { "complete", VR_SYSCALL_COMPLETE }, { "host", VR_SYSCALL_HOST }, { NULL, 0 } },
	[VR_O_IRQCHIP] = (const struct choice[]){ { "kernel", 0 }, { "user", 1 },
	    { NULL, 0 } },
	[VR_O_EXIT_STATUS] = (const struct choice[]){ { "raw", 0 }, { "qemu", 1 },
	    { NULL, 0 } },
};

/* One of the option's words (choices[]): its value into the field. */
static int
set_choice(const struct vr_opt *opt, const char *arg, struct vr_runopts *o)
{
	const struct choice *c = choices[opt - vr_opts];
	size_t i;

	for (i = 0; c[i].name != NULL; i++)
		if (strcmp(arg, c[i].name) == 0) {
			*(int *)(void *)((char *)o + opt->field) = c[i].value;
			return (0);
		}
	/* "want auto, complete or host" */
	fprintf(stderr, "%s: --%s %s: want", vr_progname, opt->name, arg);
	for (i = 0; c[i].name != NULL; i++)
		fprintf(stderr, "%s %s", i == 0 ? "" : c[i + 1].name != NULL ? "," : " or",
		    c[i].name);
	fprintf(stderr, "\n");
	return (-1);
}

/* --pmu-mode: libvpmu's, and kept: vpmu-run weighs it against --irqchip (setup.c). */
static int
set_pmu_mode(const struct vr_opt *opt, const char *arg, struct vr_runopts *o)
{
	if (lib_option(opt->name, arg, true, o) < 0)
		return (-1);
	o->pmu_mode = strcmp(arg, "kvm") == 0 ? VPMU_PMU_MODE_KVM :
	    strcmp(arg, "auto") == 0 ? VPMU_PMU_MODE_AUTO : VPMU_PMU_MODE_TRAP;
	o->pmu_mode_given = true;
	return (0);
}

/* -j, -x SEP: the report's format, one of them. */
static int
set_format(const struct vr_opt *opt, const char *arg, struct vr_runopts *o)
{
	int fmt = opt->shortopt == 'j' ? VR_FMT_JSON : VR_FMT_CSV;

	if (fmt == VR_FMT_CSV && vr_parse_sep("-x", arg, &o->report_sep) < 0)
		return (-1);
	if (o->report_fmt != VR_FMT_TEXT && o->report_fmt != fmt) {
		fprintf(stderr, "%s: -j and -x: one format at most\n", vr_progname);
		return (-1);
	}
	o->report_fmt = fmt;
	return (0);
}

int
vr_runopts_parse(int id, const char *arg, struct vr_runopts *o)
{
	const struct vr_opt *opt = &vr_opts[id];

	return (opt->set != NULL ? opt->set(opt, arg, o) : 0);
}

void
vr_runopts_usage(FILE *f, bool own)
{
	char left[40];
	const char *h, *nl;
	size_t i;

	for (i = 0; i < VR_O_NOPTS; i++) {
		if (vr_opts[i].own && !own)
			continue;
		snprintf(left, sizeof(left), "%s%c%s--%s%s%s",
		    vr_opts[i].shortopt ? "-" : "   ",
		    vr_opts[i].shortopt ? vr_opts[i].shortopt : ' ',
		    vr_opts[i].shortopt ? ", " : "", vr_opts[i].name,
		    vr_opts[i].arg ? " " : "", vr_opts[i].arg ? vr_opts[i].arg : "");
		if (strlen(left) > 24) {	/* the help on the lines below */
			fprintf(f, "  %s\n", left);
			left[0] = '\0';
		}
		for (h = vr_opts[i].help; ; h = nl + 1) {
			nl = strchr(h, '\n');
			fprintf(f, "  %-24s %.*s\n", h == vr_opts[i].help ? left : "",
			    nl ? (int)(nl - h) : (int)strlen(h), h);
			if (nl == NULL)
				break;
		}
	}
}
