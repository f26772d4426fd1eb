/*
 * embed.c -- libvpmu in a KVM VMM shaped like the ones it is embedded in,
 * written to be copied.
 *
 *   embed [-o SPEC] [-n VCPUS] [-b ADDR] [-N EXITS] [-CEv] GUEST.elf
 *
 * KVM's in-kernel irqchip; one thread per vCPU, each of which sets its own
 * vCPU up (CPUID, registers, LAPIC) while the others do the same; a run
 * loop of the VMM's own; a CPUID filter, an MSR filter and guest debugging
 * (-b, a hardware breakpoint as a gdb stub sets one) of the VMM's own; NMIs
 * the VMM injects itself (-N: one every EXITS exits of each vCPU, as a
 * debug command would).  The guest follows the boot protocol: a static
 * ELF64 loaded at its physical addresses, entered in 64-bit mode on every
 * vCPU with the first 1 GiB identity-mapped, RDI = the vCPU's index;
 * console on port 0x3f8, exit on port 0xf4.
 *
 * SPEC is libvpmu's (vpmu_config(3), SPEC STRINGS): the guest's PMU model
 * and the source, "intel-v2,source=exact" by default.
 *
 * Every line that calls libvpmu or exists only for it ends in the marker
 * comment "vpmu" (README.md counts them).  -C, -E and -v exist for the
 * tests.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <pthread.h>
#include <signal.h>
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

#include <vpmu/kvm.h>								/* vpmu */

#define RAM_SIZE	(64ull << 20)
#define MAX_VCPUS	8
#define STACK_SIZE	(64ull << 10)	/* each vCPU's, below its RSP */
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
#define MSR_MISC_ENABLE	0x1a0		/* IA32_MISC_ENABLE */
#define MSR_EMBED_ID	0x4e4d0000u	/* this VMM's own read-only MSR */
#define EMBED_ID	0x656d626564ull	/* "embed" */
#define MISC_PMU	((1ull << 7) | (1ull << 11) | (1ull << 12))	/* EMON, BTS/PEBS n/a */

#define DR6_B0		0x1ull
#define DR6_BS		(1ull << 14)

struct vcpu {
	pthread_t thread;
	unsigned id;
	int fd;
	struct kvm_run *run;
	bool stepping;			/* over the -b breakpoint */
	uint64_t exits;
	char line[256];			/* its console output, a line at a time */
	size_t len;
};

static uint8_t *ram;
static int kvm_fd, vm_fd, nvcpus = 1;
static bool filter_late;
static uint64_t entry, bp, nmi_every;
static struct vcpu vcpus[MAX_VCPUS];
static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;
static int status = -1;			/* the guest's exit status, under lock */
static uint64_t misc_enable = MISC_PMU;
static struct { uint64_t misc_rd, misc_wr, tsc_wr, id_rd, bp, nmis; } st;
static vpmu_kvm *k;								/* vpmu */

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
		if (pread(fd, &ph, sizeof(ph), (off_t)(eh.e_phoff + (uint64_t)i * sizeof(ph))) !=
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

/* The GDT and 1 GiB of 2 MiB pages, which every vCPU shares. */
static void
tables(void)
{
	static const uint64_t gdt[] = { 0, 0x00af9b000000ffffull, 0x00cf93000000ffffull };
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
}

/* Long mode at CPL 0: flat GDT (0x08 code, 0x10 data), the tables of tables(). */
static void
boot(struct vcpu *v)
{
	static const uint64_t gdt[] = { 0, 0x00af9b000000ffffull, 0x00cf93000000ffffull };
	struct kvm_segment cs = { .limit = 0xffffffff, .selector = 0x08, .type = 0xb,
	    .present = 1, .s = 1, .l = 1, .g = 1 };
	struct kvm_segment ds = { .limit = 0xffffffff, .selector = 0x10, .type = 0x3,
	    .present = 1, .s = 1, .db = 1, .g = 1 };
	struct kvm_sregs sr;
	struct kvm_regs r = { .rip = entry, .rsp = RAM_SIZE - v->id * STACK_SIZE,
	    .rflags = 0x2, .rdi = v->id };

	if (ioctl(v->fd, KVM_GET_SREGS, &sr) < 0)
		die("KVM_GET_SREGS", errno);
	sr.cs = cs;
	sr.ds = sr.es = sr.fs = sr.gs = sr.ss = ds;
	sr.gdt.base = GDT_ADDR;
	sr.gdt.limit = sizeof(gdt) - 1;
	sr.cr3 = PML4_ADDR;
	sr.cr4 = 1 << 5 | 3 << 9;		/* PAE, OSFXSR, OSXMMEXCPT */
	sr.cr0 = 1u << 31 | 1 << 5 | 1 << 4 | 1 << 1 | 1;	/* PG NE ET MP PE */
	sr.efer = 1 << 10 | 1 << 8;		/* LMA, LME */
	if (ioctl(v->fd, KVM_SET_SREGS, &sr) < 0)
		die("KVM_SET_SREGS", errno);
	if (ioctl(v->fd, KVM_SET_REGS, &r) < 0)
		die("KVM_SET_REGS", errno);
}

/*
 * The VMM's own CPUID filter: the vCPU count and APIC ID in leaf 1, and a
 * rule of the kind VMMs have (leaf 0xA kept only at version 2).
 */
static void
vmm_filter(struct kvm_cpuid2 *c, struct vcpu *v)
{
	struct kvm_cpuid_entry2 *e;
	unsigned i;

	for (i = 0; i < c->nent; i++) {
		e = &c->entries[i];
		if (e->function == 1) {
			e->ebx = (e->ebx & 0xffff) | (uint32_t)nvcpus << 16 | v->id << 24;
			e->edx |= 1u << 28;		/* HTT: EBX[23:16] is valid */
		}
		if (e->function == 0xa && (e->eax & 0xff) != 2)
			e->eax = e->ebx = e->ecx = e->edx = 0;
	}
}

/*
 * The VMM's CPUID: KVM's, its own filter, then libvpmu's patch, last
 * (-C: the filter after the patch, a VMM that got the order wrong).
 */
static void
set_cpuid(struct vcpu *v)
{
	struct kvm_cpuid2 *c;
	unsigned n = 128, max = n + VPMU_KVM_CPUID_SPARE;	/* libvpmu's room */	/* vpmu */
	int err;

	if ((c = calloc(1, sizeof(*c) + max * sizeof(c->entries[0]))) == NULL)
		die("calloc", ENOMEM);
	c->nent = n;
	if (ioctl(kvm_fd, KVM_GET_SUPPORTED_CPUID, c) < 0)
		die("KVM_GET_SUPPORTED_CPUID", errno);
	if (!filter_late)
		vmm_filter(c, v);
	if ((err = vpmu_kvm_cpuid_patch(k, c, max)) != 0)			/* vpmu */
		die("vpmu_kvm_cpuid_patch", err);				/* vpmu */
	if (filter_late)
		vmm_filter(c, v);
	if (ioctl(v->fd, KVM_SET_CPUID2, c) < 0)
		die("KVM_SET_CPUID2", errno);
	free(c);
}

/* The LAPIC on, LVTPC NMI delivery unmasked: the boot protocol's PMIs. */
static void
set_lapic(struct vcpu *v)
{
	struct kvm_lapic_state la;
	uint32_t spiv = 0x1ff, lvtpc = 0x400;

	if (ioctl(v->fd, KVM_GET_LAPIC, &la) < 0)
		die("KVM_GET_LAPIC", errno);
	memcpy(la.regs + 0xf0, &spiv, 4);
	memcpy(la.regs + 0x340, &lvtpc, 4);	/* libvpmu's PMIs as NMIs */	/* vpmu */
	if (ioctl(v->fd, KVM_SET_LAPIC, &la) < 0)
		die("KVM_SET_LAPIC", errno);
}

/*
 * This VMM's MSR filter: three ranges it answers itself.  It goes to
 * libvpmu, which merges its own ranges in; KVM_X86_SET_MSR_FILTER would
 * replace libvpmu's.  nextra more ranges (-E) make it too big.
 */
static int
set_filter(unsigned nextra)
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

/*
 * An MSR exit that is not libvpmu's: one of this VMM's three.
 * (IA32_MISC_ENABLE reaches it only under a model that is not Intel's:
 * libvpmu answers it for an Intel model.)
 */
static void
vmm_msr(struct kvm_run *run)
{
	bool wr = run->exit_reason == KVM_EXIT_X86_WRMSR;

	pthread_mutex_lock(&lock);
	run->msr.error = 0;
	if (run->msr.index == MSR_MISC_ENABLE && !wr) {
		run->msr.data = misc_enable;
		st.misc_rd++;
	} else if (run->msr.index == MSR_MISC_ENABLE) {
		misc_enable = (misc_enable & MISC_PMU) | (run->msr.data & ~MISC_PMU);
		st.misc_wr++;
	} else if (run->msr.index == MSR_TSC && wr) {
		st.tsc_wr++;
	} else if (run->msr.index == MSR_EMBED_ID && !wr) {
		run->msr.data = EMBED_ID;
		st.id_rd++;
	} else {
		run->msr.error = 1;		/* #GP */
	}
	pthread_mutex_unlock(&lock);
}

/*
 * -b: a hardware execute breakpoint in DR0 of vCPU 0, as a gdb stub sets
 * one.  To get past it (it fires before the instruction, RF does not help
 * on every host), the stub disarms it for one single-step: step true.
 */
static void
set_debug(struct vcpu *v, bool step)
{
	struct kvm_guest_debug d = { .control = KVM_GUESTDBG_ENABLE |
	    (step ? KVM_GUESTDBG_SINGLESTEP : KVM_GUESTDBG_USE_HW_BP) };
	int err;

	d.arch.debugreg[0] = bp;
	d.arch.debugreg[7] = step ? 0 : 0x401;	/* L0, execute, 1 byte */
	if ((err = vpmu_kvm_set_guest_debug(k, v->id, &d)) != 0)		/* vpmu */
		die("vpmu_kvm_set_guest_debug", err);
	v->stepping = step;
}

/* The run is over: every vCPU leaves KVM_RUN (immediate_exit, a signal). */
static void
stop_all(int st_guest)
{
	int i;

	pthread_mutex_lock(&lock);
	if (status < 0)
		status = st_guest;
	pthread_mutex_unlock(&lock);
	for (i = 0; i < nvcpus; i++)
		if (vcpus[i].run != NULL) {
			__atomic_store_n(&vcpus[i].run->immediate_exit, 1, __ATOMIC_RELEASE);
			pthread_kill(vcpus[i].thread, SIGUSR1);
		}
}

static bool
stopped(void)
{
	bool done;

	pthread_mutex_lock(&lock);
	done = status >= 0;
	pthread_mutex_unlock(&lock);
	return (done);
}

/* The guest's console, a line at a time, so that vCPUs do not mix theirs. */
static void
console(struct vcpu *v, const uint8_t *data, uint32_t n)
{
	uint32_t i;

	for (i = 0; i < n; i++) {
		v->line[v->len++] = (char)data[i];
		if (data[i] == '\n' || v->len == sizeof(v->line)) {
			pthread_mutex_lock(&lock);
			fwrite(v->line, 1, v->len, stdout);
			pthread_mutex_unlock(&lock);
			v->len = 0;
		}
	}
}

/* The VMM's own exits. */
static void
vmm_exit(struct vcpu *v)
{
	struct kvm_run *run = v->run;
	uint8_t *data = (uint8_t *)run + run->io.data_offset;

	switch (run->exit_reason) {
	case KVM_EXIT_IO:
		if (run->io.direction == KVM_EXIT_IO_OUT && run->io.port == PORT_CONSOLE &&
		    run->io.size == 1)
			console(v, data, run->io.count);
		else if (run->io.direction == KVM_EXIT_IO_OUT && run->io.port == PORT_EXIT)
			stop_all(*data);
		else
			stop_all(1);
		break;
	case KVM_EXIT_X86_RDMSR:
	case KVM_EXIT_X86_WRMSR:
		vmm_msr(run);
		break;
	case KVM_EXIT_DEBUG:
		/* At the breakpoint: step over it, then arm it again. */
		if (run->debug.arch.dr6 & DR6_B0) {
			__atomic_add_fetch(&st.bp, 1, __ATOMIC_RELAXED);
			set_debug(v, true);
		} else if (v->stepping && (run->debug.arch.dr6 & DR6_BS))
			set_debug(v, false);
		break;
	case KVM_EXIT_INTR:
		break;
	default:
		fprintf(stderr, "embed: vCPU %u: exit reason %u\n", v->id, run->exit_reason);
		stop_all(1);
	}
}

/* A vCPU's thread: its own set-up, at the same time as the others', then its loop. */
static void *
vcpu_thread(void *arg)
{
	struct vcpu *v = arg;
	struct kvm_mp_state mp = { KVM_MP_STATE_RUNNABLE };
	bool handled;								/* vpmu */
	long sz;
	int err;

	if ((v->fd = ioctl(vm_fd, KVM_CREATE_VCPU, v->id)) < 0)
		die("KVM_CREATE_VCPU", errno);
	if ((sz = ioctl(kvm_fd, KVM_GET_VCPU_MMAP_SIZE, 0)) <= 0)
		die("KVM_GET_VCPU_MMAP_SIZE", errno);
	v->run = mmap(NULL, (size_t)sz, PROT_READ | PROT_WRITE, MAP_SHARED, v->fd, 0);
	if (v->run == MAP_FAILED)
		die("mmap kvm_run", errno);
	set_cpuid(v);
	boot(v);
	set_lapic(v);
	if (v->id != 0 && ioctl(v->fd, KVM_SET_MP_STATE, &mp) < 0)	/* not waiting for a SIPI */
		die("KVM_SET_MP_STATE", errno);
	if ((err = vpmu_kvm_vcpu_init(k, v->id, v->fd, v->run)) != 0)	/* vpmu */
		die("vpmu_kvm_vcpu_init", err);					/* vpmu */
	if (bp != 0 && v->id == 0)
		set_debug(v, false);
	while (!stopped()) {
		if ((err = vpmu_kvm_run(k, v->id, &handled)) != 0)		/* vpmu */
			die("vpmu_kvm_run", err);				/* vpmu */
		if (nmi_every != 0 && ++v->exits % nmi_every == 0) {	/* the VMM's NMI */
			if (ioctl(v->fd, KVM_NMI) < 0)
				die("KVM_NMI", errno);
			(void)vpmu_kvm_note_injected(k, v->id, 2);		/* vpmu */
			__atomic_add_fetch(&st.nmis, 1, __ATOMIC_RELAXED);
		}
		if (!handled)							/* vpmu */
			vmm_exit(v);
	}
	return (NULL);
}

static void
on_sigusr1(int sig)
{
	(void)sig;			/* only ends KVM_RUN (EINTR) */
}

_Noreturn static void
usage(void)
{
	fprintf(stderr, "usage: embed [-o SPEC] [-n VCPUS] [-b ADDR] [-N EXITS] [-CEv] "
	    "GUEST.elf\n");
	exit(2);
}

int
main(int argc, char **argv)
{
	const char *spec = NULL;
	struct kvm_userspace_memory_region mem;
	struct vpmu_kvm_stats ks;						/* vpmu */
	struct sigaction sa;
	bool too_big = false, verbose = false;
	char why[256];								/* vpmu */
	int opt, err, i;

	while ((opt = getopt(argc, argv, "o:n:b:N:CEv")) != -1) {
		switch (opt) {
		case 'o': spec = optarg; break;
		case 'n':
			nvcpus = atoi(optarg);
			if (nvcpus < 1 || nvcpus > MAX_VCPUS)
				usage();
			break;
		case 'b': bp = strtoull(optarg, NULL, 0); break;
		case 'N': nmi_every = strtoull(optarg, NULL, 0); break;
		case 'C': filter_late = true; break;
		case 'E': too_big = true; break;
		case 'v': verbose = true; break;
		default: usage();
		}
	}
	if (optind != argc - 1)
		usage();
	memset(&sa, 0, sizeof(sa));
	sa.sa_handler = on_sigusr1;
	sigaction(SIGUSR1, &sa, NULL);

	if ((kvm_fd = open("/dev/kvm", O_RDWR | O_CLOEXEC)) < 0)
		skip("/dev/kvm");
	if ((vm_fd = ioctl(kvm_fd, KVM_CREATE_VM, 0)) < 0)
		skip("KVM_CREATE_VM");
	if (ioctl(vm_fd, KVM_CREATE_IRQCHIP, 0) < 0)
		die("KVM_CREATE_IRQCHIP", errno);
	if (ioctl(vm_fd, KVM_SET_TSS_ADDR, TSS_ADDR_KVM) < 0)
		die("KVM_SET_TSS_ADDR", errno);
	if ((err = vpmu_kvm_open(vm_fd, (unsigned)nvcpus, spec, &k, why, sizeof(why))) != 0)	/* vpmu */
		die(why, err);	/* "source perf cannot count instructions here: ..." */	/* vpmu */
	if ((err = set_filter(0)) != 0)
		die("the MSR filter", err);
	if (too_big && (err = set_filter(KVM_MSR_FILTER_MAX_RANGES)) != E2BIG)	/* vpmu */
		die("a filter too big (want E2BIG)", err);			/* vpmu */

	ram = mmap(NULL, RAM_SIZE, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS |
	    MAP_NORESERVE, -1, 0);
	if (ram == MAP_FAILED)
		die("mmap", errno);
	mem = (struct kvm_userspace_memory_region){ .memory_size = RAM_SIZE,
	    .userspace_addr = (uintptr_t)ram };
	if (ioctl(vm_fd, KVM_SET_USER_MEMORY_REGION, &mem) < 0)
		die("KVM_SET_USER_MEMORY_REGION", errno);
	if ((err = vpmu_kvm_add_region(k, &mem)) != 0)				/* vpmu */
		die("vpmu_kvm_add_region", err);				/* vpmu */
	entry = load_elf(argv[optind]);
	tables();

	for (i = 0; i < nvcpus; i++) {
		vcpus[i].id = (unsigned)i;
		if ((err = pthread_create(&vcpus[i].thread, NULL, vcpu_thread, &vcpus[i])) != 0)
			die("pthread_create", err);
	}
	for (i = 0; i < nvcpus; i++)
		pthread_join(vcpus[i].thread, NULL);
	fflush(stdout);
	if (verbose)
		fprintf(stderr, "embed: vmm: misc_enable %" PRIu64 " reads %" PRIu64 " writes, "
		    "tsc %" PRIu64 " writes dropped, id %" PRIu64 " reads, breakpoint %"
		    PRIu64 " hits, %" PRIu64 " NMIs injected\n", st.misc_rd, st.misc_wr,
		    st.tsc_wr, st.id_rd, st.bp, st.nmis);
	for (i = 0; verbose && i < nvcpus && vpmu_kvm_get_stats(k, (unsigned)i, &ks) == 0; i++)	/* vpmu */
		fprintf(stderr, "embed: libvpmu: vCPU %d: %" PRIu64 " reads %" PRIu64 " writes %"	/* vpmu */
		    PRIu64 " #GP %" PRIu64 " steps %" PRIu64 " breakpoints %" PRIu64 " PMIs\n",	/* vpmu */
		    i, ks.msr_reads, ks.msr_writes, ks.msr_gp, ks.steps, ks.breaks, ks.pmis);	/* vpmu */
	vpmu_kvm_destroy(k);							/* vpmu */
	return (status);
}
