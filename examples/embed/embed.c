/*
 * embed.c -- the smallest KVM VMM with libvpmu in it, written to be copied.
 *
 *   embed [-s exact|synthetic] [-m step|block] [-p MODEL] [-b ADDR] [-E] [-v] GUEST.elf
 *
 * One vCPU, KVM's in-kernel irqchip, a boot-protocol guest (a static ELF64
 * loaded at its physical addresses, entered in 64-bit mode with the first
 * 1 GiB identity-mapped; console on port 0x3f8, exit on port 0xf4).  The
 * VMM has an MSR filter of its own and, with -b, a hardware breakpoint of
 * its own, as a gdb stub would; libvpmu gets both through vpmu_kvm(3).
 *
 * Every line that calls libvpmu or exists only for it ends in the marker
 * comment "vpmu" (README.md counts them).  -E and -v exist for the tests.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>
#include <elf.h>
#include <linux/kvm.h>

#include <vpmu/kvm.h>	/* the functions, the VM, models, sources, vCPUs */	/* vpmu */

#define RAM_SIZE	(64ull << 20)
#define PORT_CONSOLE	0x3f8
#define PORT_EXIT	0xf4
#define TSS_ADDR_KVM	0xfffbd000ul	/* KVM_SET_TSS_ADDR: 3 pages above RAM */

/* Guest-physical layout below the image (1 MiB): GDT, PML4, PDPT, PD. */
#define GDT_ADDR	0x1000ull
#define PML4_ADDR	0x2000ull
#define PDPT_ADDR	0x3000ull
#define PD_ADDR		0x4000ull

/* The MSRs this VMM answers itself (its filter denies them to KVM). */
#define MSR_TSC		0x10		/* writes dropped: the guest keeps its TSC */
#define MSR_MISC_ENABLE	0x1a0		/* IA32_MISC_ENABLE, answered below */
#define MSR_EMBED_ID	0x4e4d0000u	/* this VMM's own read-only MSR */
#define EMBED_ID	0x656d626564ull	/* "embed" */
#define MISC_EMON	(1ull << 7)	/* performance monitoring available */
#define MISC_BTS_NA	(1ull << 11)	/* BTS unavailable */
#define MISC_PEBS_NA	(1ull << 12)	/* PEBS unavailable */

#define DR6_B0		0x1ull
#define DR6_BS		(1ull << 14)

static uint8_t *ram;
static int kvm_fd, vm_fd, vcpu_fd;
static struct kvm_run *run;
static uint64_t misc_enable;
static struct { uint64_t misc_rd, misc_wr, tsc_wr, id_rd, bp; } st;

_Noreturn static void
die(const char *what, int err)
{
	fprintf(stderr, "embed: %s: %s\n", what, strerror(err));
	exit(1);
}

_Noreturn static void
skip(const char *what)
{
	printf("SKIP: %s: %s\n", what, strerror(errno));
	exit(77);
}

/* A static ELF64 x86-64 image: PT_LOAD segments at p_paddr.  The entry. */
static uint64_t
load_elf(const char *path)
{
	Elf64_Ehdr eh;
	Elf64_Phdr ph;
	int fd, i;

	if ((fd = open(path, O_RDONLY)) < 0)
		die(path, errno);
	if (pread(fd, &eh, sizeof(eh), 0) != sizeof(eh) ||
	    memcmp(eh.e_ident, ELFMAG, SELFMAG) != 0 || eh.e_ident[EI_CLASS] != ELFCLASS64 ||
	    eh.e_machine != EM_X86_64 || eh.e_phentsize != sizeof(ph))
		die(path, ENOEXEC);
	for (i = 0; i < eh.e_phnum; i++) {
		if (pread(fd, &ph, sizeof(ph), (off_t)(eh.e_phoff + i * sizeof(ph))) !=
		    sizeof(ph))
			die(path, ENOEXEC);
		if (ph.p_type != PT_LOAD)
			continue;
		if (ph.p_paddr < 0x100000 || ph.p_filesz > ph.p_memsz ||
		    ph.p_memsz > RAM_SIZE - ph.p_paddr || ph.p_paddr > RAM_SIZE)
			die(path, EFBIG);
		if (pread(fd, ram + ph.p_paddr, ph.p_filesz, (off_t)ph.p_offset) !=
		    (ssize_t)ph.p_filesz)
			die(path, ENOEXEC);
	}
	close(fd);
	return (eh.e_entry);
}

/* Long mode at CPL 0: flat GDT (0x08 code, 0x10 data), 1 GiB of 2 MiB pages. */
static void
boot(uint64_t entry)
{
	static const uint64_t gdt[] = { 0, 0x00af9b000000ffffull, 0x00cf93000000ffffull };
	struct kvm_segment cs = { .limit = 0xffffffff, .selector = 0x08, .type = 0xb,
	    .present = 1, .s = 1, .l = 1, .g = 1 };
	struct kvm_segment ds = { .limit = 0xffffffff, .selector = 0x10, .type = 0x3,
	    .present = 1, .s = 1, .db = 1, .g = 1 };
	struct kvm_sregs sr;
	struct kvm_regs r = { .rip = entry, .rsp = RAM_SIZE, .rflags = 0x2 };
	uint64_t i, e;

	memcpy(ram + GDT_ADDR, gdt, sizeof(gdt));
	e = PDPT_ADDR | 3;
	memcpy(ram + PML4_ADDR, &e, 8);
	e = PD_ADDR | 3;
	memcpy(ram + PDPT_ADDR, &e, 8);
	for (i = 0; i < 512; i++) {
		e = i << 21 | 0x83;		/* present, writable, 2 MiB */
		memcpy(ram + PD_ADDR + i * 8, &e, 8);
	}
	if (ioctl(vcpu_fd, KVM_GET_SREGS, &sr) < 0)
		die("KVM_GET_SREGS", errno);
	sr.cs = cs;
	sr.ds = sr.es = sr.fs = sr.gs = sr.ss = ds;
	sr.gdt.base = GDT_ADDR;
	sr.gdt.limit = sizeof(gdt) - 1;
	sr.cr3 = PML4_ADDR;
	sr.cr4 = 1 << 5 | 3 << 9;		/* PAE, OSFXSR, OSXMMEXCPT */
	sr.cr0 = 1u << 31 | 1 << 5 | 1 << 4 | 1 << 1 | 1;	/* PG NE ET MP PE */
	sr.efer = 1 << 10 | 1 << 8;		/* LMA, LME */
	if (ioctl(vcpu_fd, KVM_SET_SREGS, &sr) < 0)
		die("KVM_SET_SREGS", errno);
	if (ioctl(vcpu_fd, KVM_SET_REGS, &r) < 0)
		die("KVM_SET_REGS", errno);
}

/* KVM's CPUID, one vCPU (CPUID.1:EBX[23:16]), PMU leaves by libvpmu. */
static void
set_cpuid(vpmu_kvm *k)								/* vpmu */
{
	struct kvm_cpuid2 *c;
	unsigned n = 128, spare = VPMU_KVM_CPUID_SPARE, i;			/* vpmu */
	int err;

	if ((c = calloc(1, sizeof(*c) + (n + spare) * sizeof(c->entries[0]))) == NULL)
		die("calloc", ENOMEM);
	c->nent = n;
	if (ioctl(kvm_fd, KVM_GET_SUPPORTED_CPUID, c) < 0)
		die("KVM_GET_SUPPORTED_CPUID", errno);
	for (i = 0; i < c->nent; i++)
		if (c->entries[i].function == 1)
			c->entries[i].ebx = (c->entries[i].ebx & 0xffff) | 1 << 16;
	if ((err = vpmu_kvm_cpuid_patch(k, c, c->nent + spare)) != 0)		/* vpmu */
		die("vpmu_kvm_cpuid_patch", err);				/* vpmu */
	if (ioctl(vcpu_fd, KVM_SET_CPUID2, c) < 0)
		die("KVM_SET_CPUID2", errno);
	free(c);
}

/* The LAPIC on, LVTPC NMI delivery unmasked: PMIs arrive as NMIs. */
static void
set_lapic(void)
{
	struct kvm_lapic_state la;
	uint32_t spiv = 0x1ff, lvtpc = 0x400;

	if (ioctl(vcpu_fd, KVM_GET_LAPIC, &la) < 0)
		die("KVM_GET_LAPIC", errno);
	memcpy(la.regs + 0xf0, &spiv, 4);
	memcpy(la.regs + 0x340, &lvtpc, 4);	/* for libvpmu's PMIs */	/* vpmu */
	if (ioctl(vcpu_fd, KVM_SET_LAPIC, &la) < 0)
		die("KVM_SET_LAPIC", errno);
}

/*
 * This VMM's MSR filter: three ranges it answers itself.  It goes to
 * libvpmu, which merges its own ranges in; KVM_X86_SET_MSR_FILTER would
 * replace libvpmu's.  nextra more ranges (-E) make it too big.
 */
static int
set_filter(vpmu_kvm *k, unsigned nextra)					/* vpmu */
{
	static uint8_t deny[1];		/* bit clear: denied, the MSR exits */
	static uint8_t allow[1] = { 0xff };
	struct kvm_msr_filter f = { .flags = KVM_MSR_FILTER_DEFAULT_ALLOW };
	unsigned i;

	f.ranges[0] = (struct kvm_msr_filter_range){ KVM_MSR_FILTER_READ |
	    KVM_MSR_FILTER_WRITE, 1, MSR_MISC_ENABLE, deny };
	f.ranges[1] = (struct kvm_msr_filter_range){ KVM_MSR_FILTER_WRITE, 1, MSR_TSC, deny };
	f.ranges[2] = (struct kvm_msr_filter_range){ KVM_MSR_FILTER_READ, 1,
	    MSR_EMBED_ID, deny };
	for (i = 0; i < nextra && 3 + i < KVM_MSR_FILTER_MAX_RANGES; i++)
		f.ranges[3 + i] = (struct kvm_msr_filter_range){ KVM_MSR_FILTER_READ,
		    1, 0x4e4d1000u + i, allow };
	return (vpmu_kvm_set_msr_filter(k, &f));				/* vpmu */
}

/* An MSR exit that is not libvpmu's: one of this VMM's three. */
static void
vmm_msr(void)
{
	bool wr = run->exit_reason == KVM_EXIT_X86_WRMSR;

	run->msr.error = 0;
	if (run->msr.index == MSR_MISC_ENABLE && !wr) {
		run->msr.data = misc_enable;
		st.misc_rd++;
	} else if (run->msr.index == MSR_MISC_ENABLE) {
		misc_enable = (misc_enable & (MISC_EMON | MISC_BTS_NA | MISC_PEBS_NA)) |
		    (run->msr.data & ~(MISC_EMON | MISC_BTS_NA | MISC_PEBS_NA));
		st.misc_wr++;
	} else if (run->msr.index == MSR_TSC && wr) {
		st.tsc_wr++;
	} else if (run->msr.index == MSR_EMBED_ID && !wr) {
		run->msr.data = EMBED_ID;
		st.id_rd++;
	} else {
		run->msr.error = 1;		/* #GP */
	}
}

/*
 * -b: a hardware execute breakpoint in DR0, as a gdb stub sets one.  To
 * get past it (it fires before the instruction, RF does not help on every
 * host), the stub disarms it for one single-step: step true.
 */
static void
set_debug(vpmu_kvm *k, uint64_t addr, bool step)				/* vpmu */
{
	struct kvm_guest_debug d = { .control = KVM_GUESTDBG_ENABLE |
	    (step ? KVM_GUESTDBG_SINGLESTEP : KVM_GUESTDBG_USE_HW_BP) };
	int err;

	d.arch.debugreg[0] = addr;
	d.arch.debugreg[7] = step ? 0 : 0x401;	/* L0, execute, 1 byte */
	if ((err = vpmu_kvm_set_guest_debug(k, 0, &d)) != 0)			/* vpmu */
		die("vpmu_kvm_set_guest_debug", err);				/* vpmu */
}

_Noreturn static void
usage(void)
{
	fprintf(stderr, "usage: embed [-s exact|synthetic] [-m step|block] [-p MODEL] [-b ADDR] "
	    "[-E] [-v] GUEST.elf\n");
	exit(2);
}

int
main(int argc, char **argv)
{
	const char *source = "exact", *pmu = "intel-v2";
	struct vpmu_exact_params xp = { 0 };	/* 1 cycle per instruction */	/* vpmu */
	const struct vpmu_source_ops *src;					/* vpmu */
	struct kvm_userspace_memory_region mem;
	struct vpmu_kvm_stats ks;						/* vpmu */
	struct vpmu_model m;							/* vpmu */
	vpmu_config *cfg;							/* vpmu */
	vpmu_vm *pmu_vm;							/* vpmu */
	vpmu_kvm *k;								/* vpmu */
	uint64_t entry, bp = 0;
	bool too_big = false, verbose = false, stepping = false;
	bool handled;								/* vpmu */
	char why[160];								/* vpmu */
	int opt, err, status = -1;
	long sz;

	while ((opt = getopt(argc, argv, "s:m:p:b:Ev")) != -1) {
		switch (opt) {
		case 's': source = optarg; break;
		case 'm':
			if (strcmp(optarg, "step") != 0 && strcmp(optarg, "block") != 0)
				usage();
			xp.mode = optarg[0] == 'b' ? VPMU_EXACT_BLOCK : VPMU_EXACT_STEP;	/* vpmu */
			break;
		case 'p': pmu = optarg; break;
		case 'b': bp = strtoull(optarg, NULL, 0); break;
		case 'E': too_big = true; break;
		case 'v': verbose = true; break;
		default: usage();
		}
	}
	if (optind != argc - 1)
		usage();

	/* The virtual PMU first: model and source (the default would be synthetic). */
	if (vpmu_model_parse(pmu, &m, why, sizeof(why)) != 0) {		/* vpmu */
		fprintf(stderr, "embed: -p %s: %s\n", pmu, why);		/* vpmu */
		return (2);							/* vpmu */
	}									/* vpmu */
	if ((src = vpmu_source_lookup(source)) == NULL)			/* vpmu */
		usage();							/* vpmu */
	if ((err = vpmu_config_create(&cfg)) != 0 ||				/* vpmu */
	    (err = vpmu_config_set_model(cfg, &m)) != 0 ||			/* vpmu */
	    (err = vpmu_config_set_source(cfg, src,				/* vpmu */
	    src == &vpmu_source_exact ? (void *)&xp : NULL)) != 0 ||		/* vpmu */
	    (err = vpmu_vm_create(cfg, &pmu_vm)) != 0)				/* vpmu */
		die("libvpmu", err);						/* vpmu */
	vpmu_config_destroy(cfg);						/* vpmu */
	misc_enable = MISC_BTS_NA | MISC_PEBS_NA | (m.vendor != VPMU_VENDOR_NONE ?	/* vpmu */
	    MISC_EMON : 0);							/* vpmu */

	if ((kvm_fd = open("/dev/kvm", O_RDWR | O_CLOEXEC)) < 0)
		skip("/dev/kvm");
	if ((vm_fd = ioctl(kvm_fd, KVM_CREATE_VM, 0)) < 0)
		skip("KVM_CREATE_VM");
	if (ioctl(vm_fd, KVM_CREATE_IRQCHIP, 0) < 0)
		die("KVM_CREATE_IRQCHIP", errno);
	if (ioctl(vm_fd, KVM_SET_TSS_ADDR, TSS_ADDR_KVM) < 0)
		die("KVM_SET_TSS_ADDR", errno);
	if ((err = vpmu_kvm_create(pmu_vm, vm_fd, &k)) != 0)			/* vpmu */
		die("vpmu_kvm_create", err);					/* vpmu */
	if ((err = set_filter(k, 0)) != 0)					/* vpmu */
		die("vpmu_kvm_set_msr_filter", err);				/* vpmu */
	if (too_big && (err = set_filter(k, KVM_MSR_FILTER_MAX_RANGES)) != E2BIG) {	/* vpmu */
		fprintf(stderr, "embed: a filter too big: %s, want E2BIG\n", strerror(err));	/* vpmu */
		return (1);							/* vpmu */
	}									/* vpmu */

	ram = mmap(NULL, RAM_SIZE, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS |
	    MAP_NORESERVE, -1, 0);
	if (ram == MAP_FAILED)
		die("mmap", errno);
	mem = (struct kvm_userspace_memory_region){ .memory_size = RAM_SIZE,
	    .userspace_addr = (uintptr_t)ram };
	if (ioctl(vm_fd, KVM_SET_USER_MEMORY_REGION, &mem) < 0)
		die("KVM_SET_USER_MEMORY_REGION", errno);
	if ((err = vpmu_kvm_add_memory(k, 0, RAM_SIZE, ram)) != 0)		/* vpmu */
		die("vpmu_kvm_add_memory", err);				/* vpmu */
	entry = load_elf(argv[optind]);

	if ((vcpu_fd = ioctl(vm_fd, KVM_CREATE_VCPU, 0)) < 0)
		die("KVM_CREATE_VCPU", errno);
	if ((sz = ioctl(kvm_fd, KVM_GET_VCPU_MMAP_SIZE, 0)) <= 0)
		die("KVM_GET_VCPU_MMAP_SIZE", errno);
	run = mmap(NULL, (size_t)sz, PROT_READ | PROT_WRITE, MAP_SHARED, vcpu_fd, 0);
	if (run == MAP_FAILED)
		die("mmap kvm_run", errno);
	set_cpuid(k);								/* vpmu */
	boot(entry);
	set_lapic();
	if ((err = vpmu_kvm_vcpu_init(k, 0, vcpu_fd, run)) != 0)		/* vpmu */
		die("vpmu_kvm_vcpu_init", err);					/* vpmu */
	if (bp != 0)
		set_debug(k, bp, false);					/* vpmu */

	if ((err = vpmu_vcpu_set_thread(pmu_vm, 0, gettid())) != 0)		/* vpmu */
		die("vpmu_vcpu_set_thread", err);				/* vpmu */
	while (status < 0) {
		if ((err = vpmu_kvm_pre_run(k, 0)) != 0)	/* PMI, stepping */	/* vpmu */
			die("vpmu_kvm_pre_run", err);				/* vpmu */
		if (ioctl(vcpu_fd, KVM_RUN, 0) < 0) {
			if (errno != EINTR && errno != EAGAIN)
				die("KVM_RUN", errno);
			run->exit_reason = KVM_EXIT_INTR;			/* vpmu */
		}
		if ((err = vpmu_kvm_handle_exit(k, 0, &handled)) != 0)		/* vpmu */
			die("vpmu_kvm_handle_exit", err);			/* vpmu */
		if (handled)							/* vpmu */
			continue;						/* vpmu */
		switch (run->exit_reason) {
		case KVM_EXIT_IO:
			if (run->io.direction == KVM_EXIT_IO_OUT && run->io.port == PORT_CONSOLE &&
			    run->io.size == 1)
				fwrite((uint8_t *)run + run->io.data_offset, 1, run->io.count,
				    stdout);
			else if (run->io.direction == KVM_EXIT_IO_OUT && run->io.port == PORT_EXIT)
				status = *(uint8_t *)((uint8_t *)run + run->io.data_offset);
			else
				status = 1;
			break;
		case KVM_EXIT_X86_RDMSR:
		case KVM_EXIT_X86_WRMSR:
			vmm_msr();
			break;
		case KVM_EXIT_DEBUG:
			/* At the breakpoint: step over it, then arm it again. */
			if (run->debug.arch.dr6 & DR6_B0) {
				st.bp++;
				set_debug(k, bp, stepping = true);		/* vpmu */
			} else if (stepping && (run->debug.arch.dr6 & DR6_BS)) {
				set_debug(k, bp, stepping = false);		/* vpmu */
			}
			break;
		case KVM_EXIT_INTR:
			break;
		default:
			fprintf(stderr, "embed: exit reason %u\n", run->exit_reason);
			status = 1;
		}
	}
	fflush(stdout);
	if (verbose)
		fprintf(stderr, "embed: vmm: misc_enable %" PRIu64 " reads %" PRIu64 " writes, "
		    "tsc %" PRIu64 " writes dropped, id %" PRIu64 " reads, breakpoint %"
		    PRIu64 " hits\n", st.misc_rd, st.misc_wr, st.tsc_wr, st.id_rd, st.bp);
	if (verbose && vpmu_kvm_get_stats(k, 0, &ks) == 0)			/* vpmu */
		fprintf(stderr, "embed: libvpmu: %" PRIu64 " reads %" PRIu64	/* vpmu */
		    " writes %" PRIu64 " #GP %" PRIu64 " steps %" PRIu64		/* vpmu */
		    " breakpoints %" PRIu64 " PMIs\n", ks.msr_reads, ks.msr_writes,	/* vpmu */
		    ks.msr_gp, ks.steps, ks.breaks, ks.pmis);			/* vpmu */
	vpmu_kvm_destroy(k);							/* vpmu */
	vpmu_vm_destroy(pmu_vm);						/* vpmu */
	return (status);
}
