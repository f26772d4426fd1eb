/*
 * vpmu-run -- boot a guest ELF under KVM with a virtual PMU from libvpmu,
 * run it to its exit, and report what the guest's counters saw.
 * See vpmu-run(1) for the options, the guest boot protocol v1 and the
 * exit statuses.
 *
 * This file: main(), step by step: the command line (runopts.c's table,
 * every option, vpmu-run's own too), the set-up, the run, the report
 * (report.c).  The image and the VM, in <vpmu/kvm.h>'s order, are
 * setup.c's, shared with vpmustat: the guest image is checked before KVM
 * is touched, so a bad image gives status 2 on any machine.
 */
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "vpmu-run.h"

/* How many output paths are "-": the report, the snapshot, the guest logs. */
static unsigned
stdout_paths(const struct vr_runopts *o)
{
	unsigned i, n = 0;

	n += o->report != NULL && strcmp(o->report, "-") == 0;
	n += o->snapshot != NULL && strcmp(o->snapshot, "-") == 0;
	for (i = 0; i < VPMU_PV_MAX_LOGFDS; i++)
		n += o->glog_path[i] != NULL && strcmp(o->glog_path[i], "-") == 0;
	return (n);
}

static void
usage(FILE *f)
{
	fprintf(f, "usage: vpmu-run [options] GUEST.elf\n"
	    "GUEST: an ELF64 x86-64 executable (boot protocol v1), a Multiboot v1 "
	    "image\nor a Linux bzImage; -: standard input\n");
	vr_runopts_usage(f, true);
}

/*
 * getopt_long over runopts.c's table, every option; then the guest.  0, or
 * VR_EXIT_USAGE after a usage error's message and the "Try" line; --help
 * and --version exit here.
 */
static int
parse_options(int argc, char **argv, struct vr_runopts *o)
{
	struct option longopts[VR_O_NOPTS + 1];
	char shortopts[2 * VR_O_NOPTS + 1] = "";
	int ch, id;

	memset(longopts, 0, sizeof(longopts));
	(void)vr_runopts_longopts(longopts, shortopts, true, 256);
	while ((ch = getopt_long(argc, argv, shortopts, longopts, NULL)) != -1) {
		/* A short option: the table's entry that has it. */
		for (id = 0; ch < 256 && id < VR_O_NOPTS; id++)
			if (vr_opts[id].shortopt == ch) {
				ch = 256 + id;
				break;
			}
		if (ch < 256 || ch >= 256 + VR_O_NOPTS)
			goto usage;	/* getopt_long said why */
		if (ch == 256 + VR_O_HELP) {
			usage(stdout);
			exit(fflush(stdout) != 0 || ferror(stdout) ? VR_EXIT_HOST : 0);
		}
		if (ch == 256 + VR_O_VERSION)
			exit(vr_print_version("vpmu-run"));
		if (vr_runopts_parse(ch - 256, optarg, o) < 0)
			goto usage;
	}
	if (optind != argc - 1) {
		fprintf(stderr, optind == argc ? "vpmu-run: no guest ELF given\n" :
		    "vpmu-run: one guest ELF only (\"%s\" too)\n", argv[argc - 1]);
		goto usage;
	}
	o->guest = argv[optind];
	/* Standard input once: the guest or the initrd (or the snapshot to resume). */
	if ((strcmp(o->guest, "-") == 0) + (o->initrd != NULL && strcmp(o->initrd, "-") == 0) +
	    (o->resume != NULL && strcmp(o->resume, "-") == 0) > 1) {
		fprintf(stderr, "vpmu-run: standard input (-) is read once: for the guest, "
		    "--initrd or --resume, not two of them\n");
		goto usage;
	}
	/* Standard output once: the report, the snapshot or a guest log. */
	if (stdout_paths(o) > 1) {
		fprintf(stderr, "vpmu-run: standard output (-) takes one of --report, "
		    "--snapshot and --guest-log, not two\n");
		goto usage;
	}
	return (0);
usage:
	vr_usage_try();
	return (VR_EXIT_USAGE);
}

/*
 * The image, the report's file, the VM (and the snapshot resumed), up to
 * the run; *sc what a snapshot is made with.  0, or an exit status after a
 * message.
 */
static int
set_up(struct vr_setup *s, struct vr_vm *vm, struct vr_snapconf *sc, FILE **rep)
{
	const struct vr_runopts *o = s->o;
	int ret;

	/* An output on standard output has it alone: the console goes to standard error. */
	if (stdout_paths(o) != 0)
		vm->console = stderr;
	if ((ret = vr_setup_image(s, vm)) != 0)
		return (ret);
	/* What a snapshot is made with, and a resumed one must match. */
	*sc = (struct vr_snapconf){ .nvcpus = vm->nvcpus, .ram_size = vm->ram_size,
	    .image_hash = s->image_hash, .model = s->modelstr, .source = s->src->name,
	    .host_counters = o->host_counters, .mux_us = o->mux_us,
	    .irqchip_kernel = !o->irqchip_user };
	if ((ret = vr_report_open(o, rep)) != 0 || (ret = vr_setup_vm(s, vm)) != 0)
		return (ret);
	sc->pmu_kvm = vm->pmu_mode == VPMU_PMU_MODE_KVM;
	if (o->resume != NULL)
		return (vr_snapshot_resume(vm, o->resume, sc));
	return (0);
}

/*
 * Run: *status the guest's exit, or why the run ended (a --snapshot
 * written, or not); SIGINT, SIGTERM and --timeout end it from here
 * (vr_run_supervise).  false if it could not start (*status VR_EXIT_HOST):
 * then no report.
 */
static bool
run(struct vr_vm *vm, const struct vr_runopts *o, const struct vr_snapconf *sc,
    int *status)
{
	sigset_t held, oldmask;

	*status = VR_EXIT_HOST;
	if (vr_run_prepare() < 0 || vr_run_hold_signals(&held, &oldmask) < 0)
		return (false);
	(void)vr_run_start(vm);
	vr_run_supervise(vm, o->timeout, &held, &oldmask);
	vr_run_wait(vm);
	*status = vm->status;
	if (vm->end == VR_END_SNAPSHOT)
		*status = vr_snapshot_save(vm, sc);
	return (true);
}

const char *vr_progname = "vpmu-run";

int
main(int argc, char **argv)
{
	static struct vr_vm vm;		/* large; zeroed */
	static struct vr_setup s;
	struct vr_runopts o;
	struct vr_snapconf sc;
	FILE *rep = NULL;
	int ret;

	vr_vm_init(&vm);
	vr_runopts_init(&o);
	s.o = &o;
	ret = parse_options(argc, argv, &o);
	if (ret == 0)
		ret = set_up(&s, &vm, &sc, &rep);
	if (ret == 0 && run(&vm, &o, &sc, &ret))
		vr_report(rep, &vm, &s);
	/* The report written whole, to its file or standard output, or status 1. */
	ret = vr_report_close(rep, &o, ret);
	vr_setup_teardown(&s, &vm);
	vr_runopts_close(&o);
	return (ret);
}
