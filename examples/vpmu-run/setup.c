/*
 * setup.c -- a run's guest and VM, for vpmu-run and vpmustat alike: the
 * options checked (model, --event-filter, --source), the image's kind told
 * from the file (boot protocol v1 ELF64, Multiboot v1, Linux bzImage) and
 * loaded with --initrd and --append, then the set-up in <vpmu/kvm.h>'s
 * order: the libvpmu VM (model in the config), KVM_CREATE_VM, the in-kernel
 * irqchip, vpmu_kvm_create, RAM, then per vCPU KVM_CREATE_VCPU, CPUID
 * (vpmu_kvm_cpuid_patch, KVM_SET_CPUID2), registers, vpmu_kvm_vcpu_init
 * (vr_vcpu_setup); and the teardown.  The image is checked before KVM is
 * touched, so a bad image gives status 2 on any machine.  Messages are
 * prefixed with vr_progname.
 */
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <unistd.h>
#include <linux/kvm.h>

#include "vpmu-run.h"

/* vpmu_vm_set_write_fn(): vpmu-run keeps no dirty log of guest RAM. */
static void
untracked(void *arg, uint64_t gpa, uint64_t len)
{
	(void)arg;
	(void)gpa;
	(void)len;
}

#define MiB		(1ull << 20)
#define MEM_DEFAULT	64		/* MiB */
#define MEM_DEFAULT_MB	128		/* MiB, for a Multiboot image (QEMU's default) */
#define MEM_DEFAULT_LINUX 512		/* MiB, for a Linux kernel and its initrd */
#define TSS_ADDR_KVM	0xfffbd000ul	/* KVM_SET_TSS_ADDR: 3 pages, far above RAM */

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
image_kind(struct vr_runopts *o, const uint8_t *file, size_t flen, char *why, size_t whylen)
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
			fprintf(stderr, "%s: %s: a Linux bzImage needs --irqchip "
			    "kernel, and --snapshot and --resume are for boot protocol "
			    "guests only\n", vr_progname, o->guest);
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
		fprintf(stderr, "%s: %s: --multiboot: %s\n", vr_progname, o->guest, why);
		return (VR_EXIT_USAGE);
	} else if (!is_elf) {
		fprintf(stderr, "%s: %s: neither an ELF64 x86-64 executable "
		    "(vpmu-run boot protocol v1), nor a Linux bzImage (boot flag 0xAA55 "
		    "at 0x1fe, \"HdrS\" at 0x202), nor a Multiboot v1 image: not an ELF "
		    "file (no \\177ELF magic), and %s\n", vr_progname, o->guest, why);
		return (VR_EXIT_USAGE);
	}
	if (!o->multiboot && (o->append[0] != '\0' || o->initrd != NULL)) {
		fprintf(stderr, "%s: %s: --append and --initrd are for Multiboot "
		    "images and Linux bzImages\n", vr_progname, o->guest);
		return (VR_EXIT_USAGE);
	}
	if (o->multiboot && o->vcpus > 1 && o->irqchip_user) {
		fprintf(stderr, "%s: %s: a Multiboot guest starts its other vCPUs "
		    "with INIT and SIPI, which need --irqchip kernel\n", vr_progname, o->guest);
		return (VR_EXIT_USAGE);
	}
	if (o->multiboot && (o->snapshot != NULL || o->resume != NULL)) {
		fprintf(stderr, "%s: %s: --snapshot and --resume are for boot "
		    "protocol guests only\n", vr_progname, o->guest);
		return (VR_EXIT_USAGE);
	}
	return (0);
}

/*
 * A Linux kernel (linux) or a Multiboot image, with --initrd and --append,
 * into RAM; for Linux the MP table too.  0, or an exit status.
 */
static int
load_with_initrd(const struct vr_runopts *o, const uint8_t *file, size_t flen,
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
			fprintf(stderr, "%s: %s\n", vr_progname, strerror(ENOMEM));
			return (VR_EXIT_USAGE);
		}
		lb.cmdline = line;
	}

	if (o->initrd != NULL &&
	    vr_elf_read(o->initrd, &rd, &rdlen, err, sizeof(err)) < 0) {
		fprintf(stderr, "%s: --initrd %s\n", vr_progname, err);
		return (VR_EXIT_USAGE);
	}
	lb.initrd = mb.mod = rd;
	lb.initrd_len = mb.modlen = rdlen;
	if ((linux_kernel ? vr_linux_load(file, flen, vm->ram, vm->ram_size, &lb, img, err,
	    sizeof(err)) : vr_mb_load(file, flen, vm->ram, vm->ram_size, &mb, img, err,
	    sizeof(err))) < 0) {
		fprintf(stderr, "%s: %s: %s\n", vr_progname, o->guest, err);
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
 * The VM's configuration, from the options, before KVM is touched: the
 * model and the source, then every option libvpmu reads in the order
 * given, each through vpmu_config_set_option() (libvpmu's parser, the
 * grammar of vpmu_config(3) SPEC STRINGS), so that a bad value is a usage
 * error with libvpmu's reason.
 */
static int
config_build(struct vr_setup *s)
{
	const struct vr_runopts *o = s->o;
	char why[256];
	const char *name = "pmu", *arg = o->pmu;
	unsigned i;
	int e;

	if ((e = vpmu_config_create(&s->cfg)) != 0 ||
	    (e = vpmu_config_set_vcpus(s->cfg, o->vcpus)) != 0) {
		fprintf(stderr, "%s: libvpmu configuration: %s\n", vr_progname,
		    vpmu_strerror(e));
		return (VR_EXIT_HOST);
	}
	if ((e = vpmu_config_set_option(s->cfg, name, arg, why, sizeof(why))) == 0 &&
	    (e = vpmu_config_set_option(s->cfg, name = "source", arg = o->source, why,
	    sizeof(why))) == 0)
		for (i = 0; i < o->nlib && e == 0; i++)
			e = vpmu_config_set_option(s->cfg, name = o->lib[i].name,
			    arg = o->lib[i].arg, why, sizeof(why));
	/* auto with a user-space LAPIC: trap, KVM's vPMU would have no PMI */
	if (e == 0 && o->pmu_mode == VPMU_PMU_MODE_AUTO && o->irqchip_user)
		e = vpmu_config_set_pmu_mode(s->cfg, VPMU_PMU_MODE_TRAP);
	if (e == 0 && o->pv_port >= 0)
		e = vpmu_config_set_pv_port(s->cfg, (uint16_t)o->pv_port);
	if (e != 0) {
		fprintf(stderr, "%s: --%s %s: %s\n", vr_progname, name, arg,
		    e == EINVAL ? why : vpmu_strerror(e));
		return (e == EINVAL ? VR_EXIT_USAGE : VR_EXIT_HOST);
	}
	return (0);
}

/* ---- KVM or a PMU missing -------------------------------------------------------- */

/*
 * The PMU mode asked for is not possible here (what names --pmu-mode), or
 * the source cannot count the model's events: a skip where the caller
 * asked for one.
 */
static int
no_pmu(const char *what, const char *why)
{
	const char *skip = getenv("VPMU_SKIP_NO_PMU");

	if (skip != NULL && strcmp(skip, "1") == 0) {
		printf("SKIP: %s%s\n", what, why);
		return (VR_EXIT_SKIP);
	}
	fprintf(stderr, "%s: %s%s\n", vr_progname, what, why);
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
	fprintf(stderr, "%s: %s\n", vr_progname, what);
	return (VR_EXIT_HOST);
}

/* ---- the two programs' set-up --------------------------------------------------- */

void
vr_vm_init(struct vr_vm *vm)
{
	size_t i;

	vm->kvm_fd = vm->vm_fd = -1;
	for (i = 0; i < VR_MAX_VCPUS; i++)
		vm->vcpu[i].fd = -1;
	vr_vm_sync_init(vm);
}

int
vr_setup_image(struct vr_setup *s, struct vr_vm *vm)
{
	static const char *const known[] = { "exact", "perf", "synthetic" };
	struct vr_runopts *o = s->o;
	uint8_t *file = NULL;
	size_t flen, i;
	char err[256], mbwhy[256];
	int ret;

	/* Everything the user gave is checked before KVM is touched. */
	if (vpmu_model_parse(o->pmu, &s->model, err, sizeof(err)) != 0) {
		fprintf(stderr, "%s: --pmu %s: %s\n", vr_progname, o->pmu, err);
		return (VR_EXIT_USAGE);
	}
	if (vpmu_model_format(&s->model, s->modelstr, sizeof(s->modelstr)) != 0)
		snprintf(s->modelstr, sizeof(s->modelstr), "%s", o->pmu);
	if ((s->src = vpmu_source_lookup(o->source)) == NULL) {
		fprintf(stderr, "%s: --source %s: this libvpmu has no such "
		    "source; it has:", vr_progname, o->source);
		for (i = 0; i < NELEM(known); i++)
			if (vpmu_source_lookup(known[i]) != NULL)
				fprintf(stderr, " %s", known[i]);
		fprintf(stderr, "\n");
		return (VR_EXIT_USAGE);
	}
	if ((ret = config_build(s)) != 0)
		return (ret);
	vm->nvcpus = o->vcpus;
	if (vr_elf_read(o->guest, &file, &flen, err, sizeof(err)) < 0) {
		fprintf(stderr, "%s: %s\n", vr_progname, err);
		return (VR_EXIT_USAGE);
	}
	if ((ret = image_kind(o, file, flen, mbwhy, sizeof(mbwhy))) != 0)
		goto out;
	if (o->mem == 0)
		o->mem = o->bzimage ? MEM_DEFAULT_LINUX : o->multiboot ? MEM_DEFAULT_MB :
		    MEM_DEFAULT;
	vm->ram_size = (uint64_t)o->mem * MiB;
	vm->ram = mmap(NULL, vm->ram_size, PROT_READ | PROT_WRITE,
	    MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
	if (vm->ram == MAP_FAILED) {
		fprintf(stderr, "%s: guest RAM (%u MiB): %s\n", vr_progname, o->mem,
		    strerror(errno));
		vm->ram = NULL;
		ret = VR_EXIT_HOST;
		goto out;
	}
	memset(&s->img, 0, sizeof(s->img));
	vm->bzimage = o->bzimage;
	if (o->bzimage || o->multiboot)
		ret = load_with_initrd(o, file, flen, vm, &s->img, o->bzimage);
	else if (vr_elf_load(file, flen, vm->ram, vm->ram_size, &s->img, err,
	    sizeof(err)) < 0) {
		fprintf(stderr, "%s: %s: %s%s%s%s\n", vr_progname, o->guest, err,
		    mbwhy[0] ? " (nor is it a Multiboot v1 image: " : "", mbwhy,
		    mbwhy[0] ? ")" : "");
		ret = VR_EXIT_USAGE;
	}
	if (ret != 0)
		goto out;
	s->image_hash = vr_snapshot_hash(file, flen);
	vm->snapshot_path = o->snapshot;
	vm->exit_qemu = o->exit_qemu;
	vm->sys_mode = o->user_syscall;
	/* Each vCPU owns the 64 KiB below its RSP: above the image. */
	if (!o->multiboot && !o->bzimage &&
	    ((uint64_t)vm->nvcpus * VR_STACK_SIZE > vm->ram_size ||
	    vm->ram_size - (uint64_t)vm->nvcpus * VR_STACK_SIZE < s->img.hi)) {
		fprintf(stderr, "%s: %s: %u MiB of RAM holds the image "
		    "(to %#" PRIx64 ") but not %u vCPU stack%s of 64 KiB above it; "
		    "raise --mem\n", vr_progname, o->guest, o->mem, s->img.hi, vm->nvcpus,
		    vm->nvcpus == 1 ? "" : "s");
		ret = VR_EXIT_USAGE;
		goto out;
	}
	if (!o->multiboot)
		vr_boot_tables(vm->ram);
out:
	free(file);
	return (ret);
}

int
vr_setup_vm(struct vr_setup *s, struct vr_vm *vm)
{
	const struct vr_runopts *o = s->o;
	const struct vpmu_source_ops *src = s->src;
	struct kvm_userspace_memory_region region;
	struct kvm_cpuid2 *cpuid = NULL;
	char err[256];
	unsigned max = 0;
	size_t i;
	long api;
	int e, ret = VR_EXIT_HOST;

	/* KVM, or a skip. */
	if ((vm->kvm_fd = vr_kvm_open(err, sizeof(err))) < 0)
		return (no_kvm(err));

	/* The virtual PMU: its configuration is config_build()'s. */
	if (s->configure != NULL && (ret = s->configure(s->cfg, s->arg)) != 0)
		return (ret);
	ret = VR_EXIT_HOST;
	if ((e = vpmu_vm_create(s->cfg, &vm->pmu)) != 0) {
		fprintf(stderr, "%s: vpmu_vm_create (model %s, source %s): %s\n",
		    vr_progname, s->modelstr, src->name, vpmu_strerror(e));
		return (VR_EXIT_HOST);
	}
	/* Which PMU mode this host gives, and why: before KVM is touched. */
	if (o->pmu_mode == VPMU_PMU_MODE_KVM && o->irqchip_user)
		vm->pmu_mode = VPMU_PMU_MODE_KVM;	/* refused below, whatever the host */
	else if ((e = vpmu_kvm_resolve_pmu_mode(vm->pmu, &vm->pmu_mode, vm->pmu_mode_why,
	    sizeof(vm->pmu_mode_why))) != 0)
		return (no_pmu(o->pmu_mode != VPMU_PMU_MODE_TRAP ? "--pmu-mode: " : "",
		    vm->pmu_mode_why));
	if (o->pmu_mode == VPMU_PMU_MODE_AUTO && o->irqchip_user)
		snprintf(vm->pmu_mode_why, sizeof(vm->pmu_mode_why), "trap: kvm mode is "
		    "not possible: KVM's vPMU interrupts through the in-kernel LAPIC, and "
		    "this run has --irqchip user");
	if (vm->pmu_mode == VPMU_PMU_MODE_KVM && o->irqchip_user) {
		fprintf(stderr, "%s: --pmu-mode %s: KVM's vPMU needs --irqchip kernel "
		    "(its PMIs go to the in-kernel LAPIC)\n", vr_progname,
		    o->pmu_mode == VPMU_PMU_MODE_KVM ? "kvm" : "auto");
		return (VR_EXIT_USAGE);
	}
	/* libvpmu duplicates the descriptor at CONFIGURELOG; ours closes at the end. */
	for (i = 0; i < VPMU_PV_MAX_LOGFDS; i++)
		if (o->glog_fd[i] >= 0 &&
		    (e = vpmu_pv_set_logfd(vm->pmu, (int)i, o->glog_fd[i])) != 0) {
			fprintf(stderr, "%s: vpmu_pv_set_logfd %zu (%s): %s\n", vr_progname,
			    i, o->glog_path[i], vpmu_strerror(e));
			return (VR_EXIT_HOST);
		}
	if (o->fastpage_hz >= 0 &&
	    (e = vpmu_pv_set_fastpage_rate(vm->pmu, (unsigned)o->fastpage_hz)) != 0) {
		fprintf(stderr, "%s: vpmu_pv_set_fastpage_rate: %s\n", vr_progname,
		    vpmu_strerror(e));
		return (VR_EXIT_HOST);
	}
	if ((vm->vm_fd = ioctl(vm->kvm_fd, KVM_CREATE_VM, 0)) < 0) {
		snprintf(err, sizeof(err), "KVM_CREATE_VM: %s", strerror(errno));
		return (no_kvm(err));
	}
	/* The in-kernel irqchip before any vCPU: each gets its LAPIC. */
	vm->irqchip_kernel = !o->irqchip_user;
	/* (The re-arm is the boot protocol's: a Multiboot guest programs LVTPC.) */
	vm->lvtpc_rearm = vm->irqchip_kernel && !o->multiboot && !o->bzimage &&
	    s->model.vendor == VPMU_VENDOR_INTEL;
	if (vm->irqchip_kernel && ioctl(vm->vm_fd, KVM_CREATE_IRQCHIP, 0) < 0) {
		fprintf(stderr, "%s: KVM_CREATE_IRQCHIP: %s (try --irqchip user)\n",
		    vr_progname, strerror(errno));
		return (VR_EXIT_HOST);
	}
	/* Linux keeps time with the PIT at boot: KVM's, on IRQ 0. */
	if (o->bzimage && ioctl(vm->vm_fd, KVM_CREATE_PIT2,
	    &(struct kvm_pit_config){ .flags = KVM_PIT_SPEAKER_DUMMY }) < 0) {
		fprintf(stderr, "%s: KVM_CREATE_PIT2: %s\n", vr_progname, strerror(errno));
		return (VR_EXIT_HOST);
	}
	if ((e = vpmu_kvm_create(vm->pmu, vm->vm_fd, &vm->k)) != 0) {
		fprintf(stderr, "%s: vpmu_kvm_create: %s\n", vr_progname, vpmu_strerror(e));
		return (VR_EXIT_HOST);
	}
	if (vr_syscall_filter(vm) < 0)
		return (VR_EXIT_HOST);
	if (ioctl(vm->vm_fd, KVM_SET_TSS_ADDR, TSS_ADDR_KVM) < 0) {
		fprintf(stderr, "%s: KVM_SET_TSS_ADDR: %s\n", vr_progname, strerror(errno));
		return (VR_EXIT_HOST);
	}
	memset(&region, 0, sizeof(region));
	region.slot = 0;
	region.guest_phys_addr = 0;
	region.memory_size = vm->ram_size;
	region.userspace_addr = (uintptr_t)vm->ram;
	if (ioctl(vm->vm_fd, KVM_SET_USER_MEMORY_REGION, &region) < 0) {
		fprintf(stderr, "%s: KVM_SET_USER_MEMORY_REGION: %s\n", vr_progname,
		    strerror(errno));
		return (VR_EXIT_HOST);
	}
	if ((e = vpmu_kvm_add_memory(vm->k, 0, vm->ram_size, vm->ram)) != 0) {
		fprintf(stderr, "%s: vpmu_kvm_add_memory: %s\n", vr_progname,
		    vpmu_strerror(e));
		return (VR_EXIT_HOST);
	}
	/* no dirty log here: libvpmu may write guest RAM (CALLs it completes) */
	(void)vpmu_vm_set_write_fn(vm->pmu, untracked, NULL);
	if ((api = ioctl(vm->kvm_fd, KVM_GET_VCPU_MMAP_SIZE, 0)) <= 0) {
		fprintf(stderr, "%s: KVM_GET_VCPU_MMAP_SIZE: %s\n", vr_progname,
		    strerror(errno));
		return (VR_EXIT_HOST);
	}
	vm->run_size = (size_t)api;
	if ((cpuid = vr_supported_cpuid(vm->kvm_fd, &max)) == NULL) {
		fprintf(stderr, "%s: KVM_GET_SUPPORTED_CPUID: %s\n", vr_progname,
		    strerror(errno));
		return (VR_EXIT_HOST);
	}
	for (i = 0; i < vm->nvcpus; i++) {
		vm->vcpu[i].vm = vm;
		vm->vcpu[i].index = (unsigned)i;
		if (vr_vcpu_setup(vm, &vm->vcpu[i], cpuid, max, &s->img) < 0)
			goto out;
	}
	ret = 0;
out:
	free(cpuid);
	return (ret);
}

void
vr_setup_teardown(struct vr_setup *s, struct vr_vm *vm)
{
	size_t i;

	/* libvpmu's KVM glue goes first: it may still talk to the VM. */
	if (vm->k != NULL)
		vpmu_kvm_destroy(vm->k);
	for (i = 0; i < VR_MAX_VCPUS; i++) {
		if (vm->vcpu[i].run != NULL)
			munmap(vm->vcpu[i].run, vm->run_size);
		if (vm->vcpu[i].fd >= 0)
			close(vm->vcpu[i].fd);
	}
	if (vm->vm_fd >= 0)
		close(vm->vm_fd);
	if (vm->kvm_fd >= 0)
		close(vm->kvm_fd);
	vpmu_vm_destroy(vm->pmu);
	if (s->cfg != NULL)
		vpmu_config_destroy(s->cfg);
	if (vm->ram != NULL)
		munmap(vm->ram, vm->ram_size);
	vr_marks_free(vm);
	vr_vm_sync_destroy(vm);
}
