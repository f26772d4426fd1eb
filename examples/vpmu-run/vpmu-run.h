/*
 * vpmu-run.h -- a small KVM VMM that embeds libvpmu: one VM, N vCPU threads,
 * a guest ELF booted by the vpmu-run guest boot protocol v1 (vpmu-run(1)).
 *
 *   main.c   vpmu-run's main(): the command line, the set-up, the run
 *   report.c  vpmu-run's report: text or records (-j, -x), its file
 *   runopts.c  the run's options, one table with vpmustat: names, help
 *            text, parsers, usage lines (no KVM)
 *   setup.c  the image's kind and loading, the VM set up in <vpmu/kvm.h>'s
 *            order and torn down: vpmu-run's and vpmustat's
 *   elf.c    ELF validation and loading (no KVM: testable alone)
 *   multiboot.c  Multiboot v1 images: the header, loading, the information
 *            area (no KVM: testable alone)
 *   linux.c  Linux bzImages: the kernel decompressed and loaded, boot_params,
 *            the MP table (no KVM: testable alone)
 *   devices.c  the 16550 UART's registers and fw_cfg's items (no KVM)
 *   boot.c   long mode: page tables, GDT, CPUID, each vCPU's registers
 *   run.c    vCPU threads, the run loop, stopping the run
 *   ports.c  the port table: COM1, fw_cfg, exit, snapshot and mark ports
 *   emulate.c  instructions KVM's emulator failed on, completed (Zydis)
 *   syscall.c  SYSCALL from user mode, where the host leaves it at CPL 3
 *   marks.c  port 0xf6: the guest's marks of its counters, for the report
 *   steps.c  the exact source's steps by reason; the records of -j and -x
 *            (JSON lines, CSV), vpmu-run's report's and vpmustat's counts'
 *   snapshot.c  --snapshot and --resume: the VM to a file and back
 */
#ifndef VPMU_RUN_H
#define VPMU_RUN_H

#include <getopt.h>
#include <pthread.h>
#include <signal.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include <vpmu/vpmu.h>
#include <vpmu/kvm.h>
#include <vpmu/model.h>
#include <vpmu/pv.h>

/* Exit statuses of vpmu-run itself (a guest's exit gives V & 0xff). */
#define VR_EXIT_HOST	1	/* a host failure: an ioctl, the library, memory */
#define VR_EXIT_USAGE	2	/* bad option or value, bad guest image */
#define VR_EXIT_GUEST	3	/* the guest ended badly: triple fault, HLT, unhandled exit */
#define VR_EXIT_SKIP	77	/* no usable /dev/kvm and VPMU_SKIP_NO_KVM=1 */
#define VR_EXIT_TIMEOUT	124	/* --timeout: no guest exit in time (as timeout(1)) */
#define VR_EXIT_SIGNAL	128	/* + the signal's number: SIGINT 130, SIGTERM 143 */

/* Boot protocol v1. */
#define VR_MAX_VCPUS	64
#define VR_LOAD_MIN	0x100000ull		/* every PT_LOAD at or above 1 MiB */
#define VR_STACK_SIZE	0x10000ull		/* each vCPU owns 64 KiB below its RSP */
#define VR_GIB		0x40000000ull
/*
 * RAM ends below the 32-bit hole: no image kind gets more than 3 GiB
 * (the I/O APIC at 0xfec00000, the local APIC, KVM's TSS at 0xfffbd000
 * are above it, and vpmu-run does not split RAM around them).  A boot
 * protocol guest's identity map covers the first GiB and each further GiB
 * RAM reaches into (boot.c).
 */
#define VR_MEM_MAX_MIB	3072u
#define VR_PORT_CONSOLE	0x3f8
#define VR_PORT_EXIT	0xf4
#define VR_PORT_SNAPSHOT 0xf5		/* with --snapshot: save the VM and exit 0 */
#define VR_PORT_MARK	0xf6		/* a mark of every counter (marks.c) */

/* What the loader found: where the guest starts and what it occupies. */
struct vr_image {
	uint64_t entry;
	uint64_t lo, hi;		/* guest-physical extent of the PT_LOADs */
	unsigned nload;			/* PT_LOAD segments with p_memsz != 0 */
	bool	 multiboot;		/* a Multiboot v1 image (multiboot.c) */
	uint32_t mb_info;		/* its information structure's address */
	bool	 bzimage;		/* a Linux bzImage (linux.c) */
	uint64_t linux_bp;		/* its boot_params' address (RSI at the entry) */
};

/*
 * COM1, a 16550 with nothing to receive: the registers a guest reads back,
 * and the transmitter-empty interrupt (IER bit 1) it may ask for.
 */
struct vr_uart {
	uint8_t ier, lcr, mcr, scr, fcr, dll, dlm;
	bool	thre;			/* THR empty, not yet acknowledged */
};

/* fw_cfg's selector port state: the item selected, the next byte's offset. */
struct vr_fwcfg {
	uint16_t key;
	uint32_t off;
};

struct vr_vm;
/* Why the run ended (vr_vm.end): the report's first line. */
enum vr_end {
	VR_END_OTHER,		/* a failure, or not ended yet */
	VR_END_GUEST_EXIT,	/* the guest wrote port 0xf4 */
	VR_END_SNAPSHOT,	/* the guest asked for a snapshot (port 0xf5) */
	VR_END_TIMEOUT,		/* --timeout */
	VR_END_SIGNAL,		/* SIGINT or SIGTERM: status VR_EXIT_SIGNAL + its number */
};

struct vr_mark_row;

/* One vCPU: its thread is the only one to run it (libvpmu's rule too). */
struct vr_vcpu {
	struct vr_vm	*vm;
	unsigned	 index;
	int		 fd;
	struct kvm_run	*run;
	pthread_t	 thread;
	bool		 started;	/* thread created */
	uint64_t	 in_run;	/* ns KVM_RUN was entered, 0: not in it (atomic) */
	bool		 looked;	/* the watchdog kicked the run (atomic) */
	uint64_t	 pmis;		/* PMIs delivered, as last seen (lvtpc_rearm) */
	int		 stats_fd;	/* KVM_GET_STATS_FD, -1: none (watchdog) */
	uint64_t	 blocking_off;	/* its "blocking" statistic's offset */
	/* syscall.c: the breakpoint on the guest's #PF entry (0: none), and
	   when the guest's IDT was last read (0: never) */
	uint64_t	 sys_bp;
	uint64_t	 sys_look;
	bool		 sys_stepping;	/* one step past the breakpoint, then it again */
	/* console bytes since the last newline: lines of vCPUs never mix */
	size_t		 conslen;
	char		 cons[256];
};

struct vr_vm {
	/* set up by main.c before the threads start, read-only after */
	int		 kvm_fd, vm_fd;
	int		 pmu_mode;	/* VPMU_PMU_MODE_TRAP or _KVM */
	char		 pmu_mode_why[512];	/* vpmu_kvm_resolve_pmu_mode()'s */
	uint8_t		*ram;		/* guest-physical 0 .. ram_size */
	uint64_t	 ram_size;
	size_t		 run_size;	/* KVM_GET_VCPU_MMAP_SIZE */
	unsigned	 nvcpus;
	bool		 irqchip_kernel;	/* KVM_CREATE_IRQCHIP: LAPICs in the kernel */
	bool		 lvtpc_rearm;	/* in-kernel LAPICs, an Intel model: vr_boot_lvtpc_rearm */
	bool		 bzimage;	/* a Linux guest: open bus, COM1's IRQ 4, its CPUID */
	vpmu_vm		*pmu;
	vpmu_kvm	*k;
	struct vr_vcpu	 vcpu[VR_MAX_VCPUS];

	/*
	 * The end of the run, under lock: the first vr_stop() decides the
	 * status and kicks the other vCPUs.
	 */
	pthread_mutex_t	 lock;
	pthread_cond_t	 ended;		/* signalled when stopping is set */
	pthread_t	 watchdog;	/* in-kernel irqchip: finds halted vCPUs */
	bool		 watchdog_on;
	pthread_t	 supervisor;	/* in vr_run_supervise(): kicked at the end */
	bool		 supervised;
	int		 stopping;	/* also read without the lock (atomic) */
	int		 status;
	enum vr_end	 end;		/* why, set with status */
	unsigned	 exit_cpu;
	uint32_t	 exit_value;
	bool		 exit_qemu;	/* --exit-status qemu: (V << 1 | 1) & 0xff */
	/* the devices at 0x3f8..0x3ff and 0x510..0x511, under lock */
	struct vr_uart	 uart;
	FILE		*console;	/* the guest's console; NULL: standard output */
	bool		 uart_irq;	/* the level last given to IRQ 4 */
	uint64_t	 emulated;	/* instructions KVM could not emulate, completed
					   by vpmu-run (INT3, POPCNT; atomic) */
	struct vr_fwcfg	 fwcfg;
	/*
	 * --user-syscall (syscall.c): the mode (set before the threads), the
	 * probe's answer (under lock), SYSCALLs completed (atomic).
	 */
	int		 sys_mode;
	int		 sys_host;
	uint64_t	 sys_completed;
	/* port 0xf6 (marks.c), under lock */
	struct vr_mark_row *mark_rows;
	size_t		 nmark_rows;
	struct vpmu_counter_info *mark_ci;	/* VR_MAX_COUNTERS, for a mark's walk */
	uint64_t	 marks_taken, marks_dropped;
	/* called on the vCPU's thread after each mark, without lock (NULL: none) */
	void		(*mark_hook)(void *arg, struct vr_vcpu *c, uint32_t mark);
	void		*mark_arg;
	/* #GP injected for MSR exits libvpmu did not take; by the vCPU's thread */
	uint64_t	 gp_injected[VR_MAX_VCPUS];

	/*
	 * --snapshot FILE (NULL: port 0xf5 stays unhandled).  A write to the
	 * port stops the run with status 0 (end VR_END_SNAPSHOT); the file is
	 * written after the vCPU threads returned.
	 */
	const char	*snapshot_path;
	unsigned	 snapshot_cpu;
};

/* What a snapshot must have been made with to be resumed (snapshot.c). */
struct vr_snapconf {
	unsigned	 nvcpus;
	uint64_t	 ram_size;
	uint64_t	 image_hash;	/* vr_snapshot_hash() of the guest ELF file */
	const char	*model;		/* canonical model string */
	const char	*source;
	unsigned	 host_counters, mux_us;
	bool		 irqchip_kernel;
	bool		 pmu_kvm;	/* kvm mode: the guest's counters are KVM's MSRs */
};

#define NELEM(a)	(sizeof(a) / sizeof((a)[0]))
#define VR_MAX_COUNTERS	64	/* per vCPU: the report's and the marks' table */

/*
 * Little-endian fields of the structures guests read (the host is x86 too):
 * vr_get16/32/64(p) and vr_put16/32/64(p, v), made by one macro.
 */
#define VR_LE_FIELD(bits)						\
static inline uint##bits##_t						\
vr_get##bits(const uint8_t *p)						\
{									\
	uint##bits##_t v;						\
									\
	memcpy(&v, p, sizeof(v));					\
	return (v);							\
}									\
									\
static inline void							\
vr_put##bits(uint8_t *p, uint##bits##_t v)				\
{									\
	memcpy(p, &v, sizeof(v));					\
}
VR_LE_FIELD(16)
VR_LE_FIELD(32)
VR_LE_FIELD(64)
#undef VR_LE_FIELD

/* elf.c */
int  vr_fail(char *err, size_t errlen, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));
/* The whole file at path ("-": standard input); 0, or -1 with a message in err. */
int  vr_elf_read(const char *path, uint8_t **bufp, size_t *lenp, char *err, size_t errlen);
/* What fd holds to its end, at most max bytes, name for the message; 0 or -1. */
int  vr_read_all(int fd, const char *name, uint64_t max, uint8_t **bufp, size_t *lenp,
    char *err, size_t errlen);
int  vr_elf_load(const uint8_t *file, size_t len, uint8_t *ram, uint64_t ram_size,
    struct vr_image *img, char *err, size_t errlen);

/*
 * ELF loading with the rules of its caller: the boot protocol's
 * (vr_elf_load: ELF64 x86-64, every PT_LOAD at or above 1 MiB) or
 * Multiboot's (ELF32 i386 too, anywhere in RAM but a reserved range).
 * With ram NULL: validation only.
 */
struct vr_elf_rules {
	bool	 elf32;			/* ELFCLASS32 EM_386 accepted too */
	uint64_t min_paddr;		/* every PT_LOAD at or above */
	uint64_t avoid_lo, avoid_hi;	/* no PT_LOAD may overlap [lo, hi) */
	const char *avoid_what;		/* for the message */
};
int  vr_elf_load_rules(const uint8_t *file, size_t len, uint8_t *ram, uint64_t ram_size,
    const struct vr_elf_rules *rules, struct vr_image *img, char *err, size_t errlen);

/* multiboot.c: Multiboot v1 */
#define VR_MB_MAGIC		0x1BADB002u	/* in the image's header */
#define VR_MB_BOOT_MAGIC	0x2BADB002u	/* in EAX at the entry */
#define VR_MB_SEARCH		8192		/* the header is in the first 8 KiB */
#define VR_MB_INFO_ADDR		0x8000u		/* the information area ... */
#define VR_MB_INFO_SIZE		0x8000u		/* ... 32 KiB, below 640 KiB */
/* What the loader passes on besides the image. */
struct vr_mb_boot {
	const char    *cmdline;		/* --append, "" by default */
	const uint8_t *mod;		/* --initrd's bytes, or NULL: no module */
	size_t	       modlen;
	const char    *modname;		/* the module's string */
};
/* 1 and the header's file offset in *off, or 0 with why not in err. */
int  vr_mb_find(const uint8_t *file, size_t len, size_t *off, char *err, size_t errlen);
/* Load the image, the module and the information area.  0, or -1 with a message. */
int  vr_mb_load(const uint8_t *file, size_t len, uint8_t *ram, uint64_t ram_size,
    const struct vr_mb_boot *b, struct vr_image *img, char *err, size_t errlen);

/* linux.c: the Linux x86 boot protocol (bzImage, 64-bit entry) */
struct vr_linux_boot {
	const char    *cmdline;		/* --append */
	const uint8_t *initrd;		/* --initrd's bytes, or NULL */
	size_t	       initrd_len;
};
/* 1 if the file is a bzImage (boot flag and "HdrS"), else 0. */
int	vr_linux_find(const uint8_t *file, size_t len);
/*
 * The kernel, its initrd, command line and boot_params into RAM (ram NULL:
 * validation only).  0, or -1 with a message.
 */
int	vr_linux_load(const uint8_t *file, size_t len, uint8_t *ram, uint64_t ram_size,
    const struct vr_linux_boot *b, struct vr_image *img, char *err, size_t errlen);
/*
 * The kernel's command line for --append: append and, unless it has a
 * clearcpuid= of its own, VR_LINUX_CLEARCPUID.  malloc'd; NULL: no memory.
 */
char	*vr_linux_cmdline(const char *append);
extern const char VR_LINUX_CLEARCPUID[];
/* The MP table for ncpus vCPUs at 0xf0000; the bytes it takes. */
size_t	vr_linux_mptable(uint8_t *ram, unsigned ncpus, uint32_t signature, uint32_t features);

/* devices.c */
#define VR_PORT_COM1		0x3f8	/* .. 0x3ff */
#define VR_PORT_FWCFG_SEL	0x510
#define VR_PORT_FWCFG_DATA	0x511
/* A write to register reg (0..7): true if v is a byte for the console (THR). */
bool	vr_uart_write(struct vr_uart *u, unsigned reg, uint8_t v);
uint8_t	vr_uart_read(struct vr_uart *u, unsigned reg);
/* The UART's interrupt line: an interrupt is pending and enabled (MCR OUT2). */
bool	vr_uart_irq(const struct vr_uart *u);
#define VR_UART_IRQ		4	/* COM1's ISA interrupt */
void	vr_fwcfg_select(struct vr_fwcfg *f, uint16_t key);
/* The next byte of the selected item, 0 past its end. */
uint8_t	vr_fwcfg_read(struct vr_fwcfg *f, uint64_t ram_size, unsigned ncpus);

/* boot.c */
void vr_boot_tables(uint8_t *ram);
void vr_boot_cpuid(struct vr_vm *vm, struct vr_vcpu *c, struct kvm_cpuid2 *cpuid);

int  vr_boot_vcpu(struct vr_vm *vm, struct vr_vcpu *c, const struct vr_image *img);
/*
 * After a PMI was delivered on vCPU c (in-kernel LAPIC, Intel model): keep
 * the protocol's "PMIs arrive as NMIs" for a guest that never touched its
 * APIC.  0, or -1 after a message.
 */
int  vr_boot_lvtpc_rearm(struct vr_vcpu *c);
/* /dev/kvm opened and its API checked, or -1 and err says why. */
int  vr_kvm_open(char *err, size_t errlen);
/* KVM_GET_SUPPORTED_CPUID with room for libvpmu's leaves (*maxp entries). */
struct kvm_cpuid2 *vr_supported_cpuid(int kvm_fd, unsigned *maxp);
/*
 * n MSRs (1..VR_MSRS_MAX) of a vCPU through KVM_GET_MSRS or KVM_SET_MSRS,
 * values in and out of val: 0 if KVM did all of them, else -1.
 */
#define VR_MSRS_MAX	4
int  vr_msrs(int fd, bool set, const uint32_t *idx, uint64_t *val, unsigned n);
/*
 * One vCPU up to its first KVM_RUN, in <vpmu/kvm.h>'s order: created,
 * kvm_run mapped, CPUID (the protocol's, then libvpmu's), registers,
 * vpmu_kvm_vcpu_init.  0, or -1 after a message prefixed vr_progname.
 */
int  vr_vcpu_setup(struct vr_vm *vm, struct vr_vcpu *c, const struct kvm_cpuid2 *supported,
    unsigned max, const struct vr_image *img);
extern const char *vr_progname;		/* for messages: each program defines it */

/*
 * runopts.c: the options of a run, one table for vpmu-run and vpmustat.
 * vr_opts[] is indexed by enum vr_opt_id; an own option is vpmu-run's
 * alone.
 */
enum vr_opt_id {
	VR_O_PMU, VR_O_SOURCE, VR_O_EXACT_MODE, VR_O_EXACT_FORESEE, VR_O_EXACT_INTERP,
	VR_O_EXACT_FF_MAX,
	VR_O_EXACT_REF_CPI,
	VR_O_VCPUS, VR_O_MEM, VR_O_HOST_COUNTERS, VR_O_MUX, VR_O_REPORT, VR_O_GUEST_LOG,
	VR_O_FASTPAGE_HZ, VR_O_IRQCHIP, VR_O_PV_PORT, VR_O_SNAPSHOT, VR_O_RESUME,
	VR_O_MULTIBOOT, VR_O_MB_APPEND, VR_O_INITRD, VR_O_EXIT_STATUS, VR_O_TIMEOUT,
	VR_O_USER_SYSCALL, VR_O_EVENT_FILTER, VR_O_UNCOUNTED, VR_O_PMU_MODE, VR_O_JSON,
	VR_O_FIELD_SEP,
	VR_O_QUIET, VR_O_HELP, VR_O_VERSION,
	VR_O_NOPTS
};

struct vr_opt;
struct vr_runopts;
/* An option's argument into o: 0, or -1 after a message prefixed vr_progname. */
typedef int vr_opt_fn(const struct vr_opt *opt, const char *arg, struct vr_runopts *o);

struct vr_opt {
	const char *name;
	int	    has_arg;		/* getopt_long's */
	int	    shortopt;		/* 0: long only */
	const char *arg;		/* the argument's name in the usage, or NULL */
	const char *help;		/* lines joined by \n */
	bool	    own;		/* vpmu-run's alone: not vpmustat's */
	vr_opt_fn  *set;		/* NULL: the caller's (--help, --version) */
	size_t	    field;		/* where a plain handler stores, in vr_runopts */
};
extern const struct vr_opt vr_opts[VR_O_NOPTS];

/* What the options asked for (vr_runopts_init() gives the defaults). */
#define VR_LIBOPTS_MAX	64

struct vr_runopts {
	const char *pmu;
	const char *source;
	bool	    source_given;	/* --source was given: else "the default" */
	unsigned    vcpus;
	unsigned    mem;		/* MiB, 0: the image kind's default (setup.c) */
	unsigned    host_counters;	/* 0: the source's own capacity */
	unsigned    mux_us;		/* 0: libvpmu's default (4 ms) */
	const char *guest;
	/* --guest-log N=PATH: the log files the guest may name in CONFIGURELOG */
	const char *glog_path[VPMU_PV_MAX_LOGFDS];
	int	    glog_fd[VPMU_PV_MAX_LOGFDS];
	int	    fastpage_hz;	/* -1: libvpmu's default (1000) */
	int	    irqchip_user;	/* --irqchip user (1): no in-kernel LAPIC */
	/*
	 * The options libvpmu reads itself (--exact-*, --host-counters,
	 * --mux-interval, --pmu-mode, --event-filter, --uncounted), in the
	 * order given, for vpmu_config_set_option() (setup.c)
	 */
	struct { const char *name, *arg; } lib[VR_LIBOPTS_MAX];
	unsigned    nlib;
	int	    pv_port;		/* -1: libvpmu's default (0x5650); 0: no channel */
	bool	    multiboot;		/* --multiboot, or found so (setup.c) */
	bool	    bzimage;		/* the guest is a Linux bzImage (setup.c) */
	const char *append;		/* --append STR: the command line */
	const char *initrd;		/* --initrd FILE: Multiboot module 0, Linux's initrd */
	int	    exit_qemu;		/* --exit-status qemu (1) */
	int	    user_syscall;	/* --user-syscall: VR_SYSCALL_* (syscall.c) */
	unsigned    timeout;		/* --timeout: s of wall time, 0: none */
	int	    pmu_mode;		/* --pmu-mode: VPMU_PMU_MODE_* */
	bool	    pmu_mode_given;
	/* vpmu-run's own */
	const char *report;		/* --report FILE, "-": standard output */
	int	    report_fmt;		/* VR_FMT_*: -j, -x SEP */
	char	    report_sep;		/* -x's */
	const char *snapshot;		/* --snapshot FILE */
	const char *resume;		/* --resume FILE */
	bool	    quiet;
};

void	vr_runopts_init(struct vr_runopts *o);
/* Close the --guest-log files (libvpmu keeps its own duplicates). */
void	vr_runopts_close(struct vr_runopts *o);
/*
 * getopt_long's entries for vr_opts[] (with own: every one, else the
 * shared ones) at lo, each with val base + its index; their short options
 * appended to shortopts (NULL: none).  How many entries.
 */
size_t	vr_runopts_longopts(struct option *lo, char *shortopts, bool own, int base);
/* Option id's argument into o: 0, or -1 after a message prefixed vr_progname. */
int	vr_runopts_parse(int id, const char *arg, struct vr_runopts *o);
/* The usage lines of the options (with own: every one, else the shared ones). */
void	vr_runopts_usage(FILE *f, bool own);
/* After a usage error's message: "Try 'PROG --help' for more information." */
void	vr_usage_try(void);
/* -x SEP: one character, not a double quote, CR or LF.  0, or -1 after a message. */
int	vr_parse_sep(const char *opt, const char *arg, char *sep);
/* "PROG (libvpmu X.Y.Z)" on standard output: 0, or 1 if the write failed. */
int	vr_print_version(const char *prog);

/*
 * setup.c: the guest image and the VM, in <vpmu/kvm.h>'s order, for both
 * programs.  vr_setup_image() checks what the options name (model, event
 * filter, source), finds the image's kind (boot protocol ELF64, Multiboot
 * v1, Linux bzImage) and loads it into new RAM: no KVM yet, so a bad
 * image or option gives VR_EXIT_USAGE on any machine.  vr_setup_vm() then
 * makes the libvpmu VM and the KVM VM and its vCPUs, up to the first
 * KVM_RUN.  Each returns 0 or an exit status after a message prefixed
 * vr_progname; vr_setup_teardown() undoes whatever was done.
 */
struct vr_setup {
	struct vr_runopts *o;
	/* before vpmu_vm_create: the caller's own settings; 0 or an exit status */
	int	(*configure)(vpmu_config *cfg, void *arg);
	void	*arg;
	/* what vr_setup_image() found */
	struct vpmu_model model;
	char	 modelstr[256];		/* the model, canonical */
	const struct vpmu_source_ops *src;
	struct vr_image img;
	uint64_t image_hash;		/* vr_snapshot_hash() of the image file */
	vpmu_config *cfg;		/* the options' (vr_setup_image()) */
};

/* The VM's descriptors none, its lock and cond made: before anything else. */
void	vr_vm_init(struct vr_vm *vm);
int	vr_setup_image(struct vr_setup *s, struct vr_vm *vm);
int	vr_setup_vm(struct vr_setup *s, struct vr_vm *vm);
void	vr_setup_teardown(struct vr_setup *s, struct vr_vm *vm);

/* snapshot.c: 0 or an exit status, after a message */
uint64_t vr_snapshot_hash(const void *p, size_t n);
int  vr_snapshot_save(struct vr_vm *vm, const struct vr_snapconf *sc);
/* After the vCPUs are set up as for a boot, before the run starts. */
int  vr_snapshot_resume(struct vr_vm *vm, const char *path, const struct vr_snapconf *sc);

/*
 * report.c: vpmu-run's own (vpmu-run(1), THE REPORT).  vr_report_open():
 * --report's file in *rep (NULL: none; "-": standard output); 0, or
 * VR_EXIT_USAGE after a message.  vr_report(), after the run: unless -q,
 * the report to rep (NULL: standard error), text or records; on standard
 * error, what stopped the run and the exact source's warnings, where the
 * report does not say them there.  vr_report_close(): rep written whole
 * and closed, else a message and status VR_EXIT_HOST if it was 0; the
 * status.
 */
int  vr_report_open(const struct vr_runopts *o, FILE **rep);
void vr_report(FILE *rep, struct vr_vm *vm, const struct vr_setup *s);
int  vr_report_close(FILE *rep, const struct vr_runopts *o, int status);

/* emulate.c: instructions KVM's emulator failed on */
/* n bytes at guest linear address la (within one page) into or from RAM. */
bool vr_guest_copy(struct vr_vcpu *c, uint64_t la, void *buf, size_t n, bool write);
/* Up to n bytes of the instruction at rip (the exit's, or RAM's); how many. */
size_t vr_insn_bytes(struct vr_vcpu *c, uint64_t rip, uint8_t *b, size_t n);
/* Complete it if vpmu-run can (emulate.c lists which): true, the guest goes on. */
bool vr_emulate(struct vr_vcpu *c);

/*
 * steps.c: the exact source's single-steps by reason (vpmu_kvm_stats.
 * exact_step_why), most first, each line after indent; nothing if none.
 */
void vr_steps_report(FILE *f, const uint64_t why[VPMU_STEP_WHY_N], const char *indent);

/*
 * steps.c too: records, the lines of the machine-readable formats of
 * vpmu-run's report and vpmustat's counts.  JSON: one object a line, its
 * first member "type"; CSV: the type, then the values in the order given,
 * separated by sep, quoted (RFC 4180) where a value holds sep, a double
 * quote or a line break.  A NULL string or a missing number is JSON's null
 * and an empty CSV field.
 */
enum vr_fmt { VR_FMT_TEXT, VR_FMT_JSON, VR_FMT_CSV };
struct vr_rec {
	FILE	*f;
	int	 fmt;			/* VR_FMT_JSON or VR_FMT_CSV */
	char	 sep;			/* CSV's */
};
void vr_rec_begin(struct vr_rec *r, const char *type);
void vr_rec_str(struct vr_rec *r, const char *key, const char *v);
void vr_rec_u64(struct vr_rec *r, const char *key, uint64_t v);
void vr_rec_i64(struct vr_rec *r, const char *key, int64_t v);
void vr_rec_bool(struct vr_rec *r, const char *key, bool v);
void vr_rec_null(struct vr_rec *r, const char *key);
/* 100 * num / den with two decimals; null when den is 0. */
void vr_rec_pct(struct vr_rec *r, const char *key, uint64_t num, uint64_t den);
/* A number of seconds with three decimals. */
void vr_rec_secs(struct vr_rec *r, const char *key, double s);
void vr_rec_end(struct vr_rec *r);
/* The step reasons as records "steps" of vCPU cpu (-1: every vCPU), most first. */
void vr_steps_records(struct vr_rec *r, const uint64_t why[VPMU_STEP_WHY_N], int cpu);

/* syscall.c: --user-syscall */
#define VR_SYSCALL_HOST		0	/* leave SYSCALL to the host (the zero value) */
#define VR_SYSCALL_AUTO		1	/* complete it if the probe says the host does not */
#define VR_SYSCALL_COMPLETE	2	/* catch it whatever the host does */
#define VR_SYSCALL_HOST_UNPROBED	0	/* the probe's answers */
#define VR_SYSCALL_HOST_COMPLETES	1
#define VR_SYSCALL_HOST_CPL3		2
#define VR_SYSCALL_HOST_UNKNOWN		3
/* A VM of its own: does this host's KVM finish a user-mode SYSCALL? */
int  vr_syscall_probe(int kvm_fd);
/* The VMM's MSR filter (IA32_LSTAR's writes), after vpmu_kvm_create: 0, or -1. */
int  vr_syscall_filter(struct vr_vm *vm);
/* Exits: true when it was the LSTAR write, or the catch's breakpoint. */
bool vr_syscall_lstar(struct vr_vcpu *c);
bool vr_syscall_debug(struct vr_vcpu *c);
/* At port I/O exits: the catch follows the guest's IDT. */
void vr_syscall_look(struct vr_vcpu *c);

/* marks.c: port 0xf6 */
void vr_mark_take(struct vr_vcpu *c, uint32_t mark);
void vr_marks_report(FILE *f, struct vr_vm *vm);
void vr_marks_records(struct vr_rec *r, struct vr_vm *vm);
void vr_marks_free(struct vr_vm *vm);

/* ports.c: KVM_EXIT_IO */
/* The access of c's exit: true if a port handler took every item. */
bool vr_port_io(struct vr_vcpu *c);
/* Write out what the vCPU's console line holds (at a newline, a failure, the end). */
void vr_console_flush(struct vr_vcpu *c);

/* run.c */
uint64_t vr_mono_ns(void);
void vr_vm_sync_init(struct vr_vm *vm);		/* lock and cond, before any thread */
void vr_vm_sync_destroy(struct vr_vm *vm);
int  vr_run_prepare(void);
int  vr_run_start(struct vr_vm *vm);
void vr_run_wait(struct vr_vm *vm);
/*
 * End the run with status for the reason why, unless it already ends (the
 * first stop wins): every vCPU is kicked out of KVM_RUN.  Any thread.
 */
void vr_run_stop(struct vr_vm *vm, int status, enum vr_end why);
/* The same, with vm->lock held (the port handlers). */
void vr_run_stop_locked(struct vr_vm *vm, int status, enum vr_end why);
/*
 * Ending the run from outside (vpmu-run, vpmustat): SIGINT and SIGTERM (those not
 * ignored at start) blocked in the calling thread before vr_run_start(),
 * so that every thread of the run inherits the mask: *held says which,
 * *old the mask before.  0, or -1 after a message.
 */
int  vr_run_hold_signals(sigset_t *held, sigset_t *old);
/*
 * In that thread, after vr_run_start(): until the run ends, a held signal
 * ends it with VR_EXIT_SIGNAL + its number (VR_END_SIGNAL), and so does
 * timeout_s seconds of wall time (0: none) with VR_EXIT_TIMEOUT
 * (VR_END_TIMEOUT).  The mask *old is back on return: a second signal acts
 * as it would without vpmu-run's handling.
 */
void vr_run_supervise(struct vr_vm *vm, unsigned timeout_s, const sigset_t *held,
    const sigset_t *old);
/* The same, calling tick(arg) every tick_ms ms of the run (vpmustat's progress). */
void vr_run_supervise_tick(struct vr_vm *vm, unsigned timeout_s, const sigset_t *held,
    const sigset_t *old, unsigned tick_ms, void (*tick)(void *), void *arg);

#endif /* VPMU_RUN_H */
