/*
 * vpmustat.h -- pmcstat(8) for a guest: sample or count a vpmu-run guest
 * through libvpmu's host API, and read the pmclog log back (vpmustat(1)).
 *
 *   main.c     the two modes: what the options ask for together, -R's read
 *   options.c  the command line: vpmustat's options in one table (getopt,
 *              --help, handlers), then the run's (runopts.c); -c, --tunable
 *   events.c   event names: perf's generic ones, libpfm4's, raw codes
 *   live.c     the run: vpmu-run's setup.c (every image kind vpmu-run
 *              boots, its run options from runopts.c), boot.c, run.c;
 *              PMCs, the log, the report after the run
 *   counts.c   while and after the run: the counting table (-w), the
 *              totals, their records (-j, -x), the progress line
 *   profile.c  the profile: each record of the log into it, names, symbols
 *   logread.c  the log read back (-R), the record dump (--dump)
 *   samples.c  the samples counted: chains, functions, the call tree
 *   report.c   the top-functions report, the call graph, folded stacks
 *   map.c      the hash map and the growing arrays
 *   symbols.c  guest addresses to function names through libelf; the
 *              ELF's code, where a return address may point
 *   ksyms.c    a Linux guest's kernel symbols (--guest-symbols): a
 *              System.map, a kallsyms copy or a vmlinux; the KASLR slide
 *              from the guest's LSTAR or --kaslr-slide
 *   kallsyms.c a Linux guest's kernel symbols from its own table in guest
 *              memory (--guest-kallsyms)
 *   tasks.c    the Linux task of each sample, from guest memory: the
 *              per-CPU current task, its pid, tgid and comm
 *   orc.c      a Linux kernel's call chains by its own ORC tables, read
 *              from guest memory (libvpmu's unwind function)
 *   btf.c      a struct member's offset from BTF (the kernel's own)
 *   flame.c    the flame graph, an SVG drawn here, with its script:
 *              click to zoom, search
 *   formats.c  what other profilers read: perf script's text
 *              (--perf-script), pprof's gzipped profile.proto (--pprof)
 *   image.c    the guest image in the log: MAP_IN and its build-id (or
 *              hash) written by a run, checked against -R's --elf
 *   output.c   the files -G, --folded, --svg, --perf-script and --pprof
 *              write: opened before the work, written whole or not at
 *              all; write errors
 */
#ifndef VPMUSTAT_H
#define VPMUSTAT_H

#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>

#include "../vpmu-run/vpmu-run.h"

#define VS_EXIT_HOST	1	/* host failure, unreadable log */
#define VS_EXIT_USAGE	2	/* bad option, event or guest image */
#define VS_EXIT_SKIP	77	/* no usable /dev/kvm and VPMU_SKIP_NO_KVM=1 */

#define VS_RATE_DEFAULT	65536	/* pmcstat's -n default */
#define VS_MAX_EVENTS	16	/* the paravirtual class has 16 rows */

/* ---- options.c: -c CPU lists ------------------------------------------------ */

/*
 * A -c list: CPU numbers and ranges ("0,2", "0-3,6"), or "*" for every
 * CPU.  A log record's CPU field has 16 bits: CPUs are 0 to 65535.
 */
#define VS_CPU_MAX	65535
#define VS_CPU_RANGES	32

struct vs_cpuset {
	const char *spec;	/* as given */
	unsigned n;		/* 0: "*", which options.c passes as NULL (every CPU) */
	struct { uint32_t lo, hi; } r[VS_CPU_RANGES];
};

/* cpu is in c (every CPU is in NULL); samples.c. */
bool vs_cpuset_has(const struct vs_cpuset *c, uint32_t cpu);

/* ---- events.c --------------------------------------------------------------- */

enum vs_scope { VS_SS, VS_SC, VS_TS, VS_TC };	/* -S, -s, -P, -p */

struct vs_event {
	char	 name[64];	/* as given */
	int	 scope;		/* enum vs_scope */
	uint32_t event;		/* enum vpmu_event */
	uint64_t raw;		/* with VPMU_EV_RAW */
	uint32_t caps;		/* VPMU_CAP_USER / SYSTEM / EDGE / INVERT / THRESHOLD */
	uint32_t cmask;
	const struct vs_cpuset *cpus;	/* -S / -s: the -c before it; NULL: every vCPU */
};

/*
 * Resolve name into ev (name, event, raw, caps): a libvpmu event name
 * ("instructions"), a raw code "0xUUEE" (with AMD's EventSelect[11:8] in
 * bits 19-16), or a libpfm4 event of the model's vendor (vendor is enum
 * vpmu_vendor); ":u" / ":k" restrict a libvpmu or raw event to user /
 * kernel mode.  0, or -1 with the reason in err.
 */
int vs_event_parse(const char *name, unsigned vendor, struct vs_event *ev,
    char *err, size_t errlen);
/* The libpfm4 PMU table vpmustat uses for a vendor ("ix86arch", ...). */
const char *vs_event_pfm_table(unsigned vendor);
/* Print the names -S/-s/-p/-P accept for vendor. */
void vs_event_list(FILE *f, unsigned vendor);

/* ---- symbols.c --------------------------------------------------------------- */

struct vs_sym {
	uint64_t addr, size;
	char	*name;
};
struct vs_symtab {
	char	*path;		/* the file loaded; NULL: none */
	struct vs_sym *s;	/* sorted by addr */
	size_t	 n;
	/* the ELF's code: its executable PT_LOAD segments (sections without them) */
	struct { uint64_t lo, hi; } *code;	/* [lo, hi) */
	size_t	 ncode;
};

/*
 * path opened and begun with libelf (an Elf *; *fdp its descriptor), or
 * NULL and err; errno ENOEXEC when the file is not an ELF, and then
 * vs_symtab_load() and vs_symtab_load_at() fail with it too.
 */
struct Elf;
struct Elf *vs_elf_open(const char *path, int *fdp, char *err, size_t errlen);
/* The FUNC symbols and the code of an ELF file; 0, or -1 with the reason in err. */
int  vs_symtab_load(struct vs_symtab *t, const char *path, char *err, size_t errlen);
/* The same, and the address of each symbol want[i] (any type) into at[i], if it has one. */
int  vs_symtab_load_at(struct vs_symtab *t, const char *path, const char *const *want,
    uint64_t *at, size_t nwant, char *err, size_t errlen);
void vs_symtab_free(struct vs_symtab *t);
/* The function holding addr, or NULL; *off the offset in it. */
const struct vs_sym *vs_symtab_find(const struct vs_symtab *t, uint64_t addr, uint64_t *off);
/* "name+0xoff", or "0xaddr" when no function holds addr. */
void vs_symtab_format(const struct vs_symtab *t, uint64_t addr, char *buf, size_t len);
/* addr is in the ELF's code (true when the table knows no code). */
bool vs_symtab_in_code(const struct vs_symtab *t, uint64_t addr);

/* ---- ksyms.c ----------------------------------------------------------------- */

#define VS_KERNEL_HALF	UINT64_C(0xffff800000000000)	/* x86-64's upper half */
#define VS_KASLR_ALIGN	UINT64_C(0x200000)	/* x86-64 KASLR slides are 2 MiB multiples */
#define VS_MSR_LSTAR	0xc0000082u		/* IA32_LSTAR: the syscall entry */

/*
 * The symbols of the file vpmustat looks for by name (any type), at the
 * file's addresses; 0: not in it.  Per-CPU variables' are offsets in the
 * per-CPU area (the GS base), which the slide does not move.
 */
enum vs_ksym {
	VS_KSYM_ENTRY,		/* entry_SYSCALL_64: LSTAR - it = the slide */
	VS_KSYM_PCPU_HOT,	/* pcpu_hot (Linux 6.2 on): the current task first */
	VS_KSYM_CURRENT_TASK,	/* current_task (before 6.2): per-CPU */
	VS_KSYM_START_BTF,	/* __start_BTF, __stop_BTF: the kernel's own BTF */
	VS_KSYM_STOP_BTF,
	VS_KSYM_ORC_IP_START,	/* __start_orc_unwind_ip .. __stop_orc_unwind_ip, */
	VS_KSYM_ORC_IP_STOP,	/* __start_orc_unwind: the kernel's ORC tables */
	VS_KSYM_ORC,
	VS_KSYM_BANNER,		/* linux_banner: "Linux version X.Y..." */
	VS_KSYM_N
};
extern const char *const vs_ksym_names[VS_KSYM_N];

/* --guest-symbols: a Linux guest's kernel symbols, and the slide. */
struct vs_ksyms {
	char	*path;
	struct vs_symtab t;	/* the kernel's code symbols, at the file's addresses */
	struct vs_symtab mods;	/* the modules' ("name [module]"): never moved */
	struct vs_symtab kmods;	/* --guest-modules: functions of the modules' files */
	struct vs_symtab kranges;	/* and each module whole, "[name]" */
	char	 kmods_note[512];	/* what --guest-modules gave; "": none */
	uint64_t at[VS_KSYM_N];	/* the named symbols in the file; 0: none */
	bool	 slide_given;	/* --kaslr-slide */
	uint64_t slide;
	bool	 usable;	/* vs_ksyms_settle(): the file names kernel addresses */
	char	 note[512];	/* vs_ksyms_settle()'s: the slide, or why there is none */
};

/*
 * The next line of a text file into *buf (grown), its newline (and a CR
 * before it) removed, *line counted: 1; 0 at the end; -1 and err on a read
 * error or a last line without its newline (a file cut short).
 */
int  vs_text_line(FILE *f, const char *path, char **buf, size_t *cap, size_t *line,
    char *err, size_t errlen);
/*
 * kmods.c: a copy of /proc/modules (and the module files under dir, NULL:
 * none) into t (functions) and ranges (each module whole).  0 with note,
 * or -1 and err.
 */
int  vs_kmods_load(struct vs_symtab *t, struct vs_symtab *ranges, const char *modules,
    const char *dir, char *note, size_t notelen, char *err, size_t errlen);

/* A symbol as a map's line gives it ("ADDRESS TYPE NAME [module]"). */
struct vs_mline {
	uint64_t addr;
	char	 type;
	char	*name;		/* "name" or "name [module]" */
	bool	 module;
	size_t	 line;		/* in its file */
};
/* m[0 .. n) (sorted here) into k (names copied).  0, or -1 and err. */
int  vs_ksyms_build(struct vs_ksyms *k, struct vs_mline *m, size_t n, const char *path,
    char *err, size_t errlen);
void vs_mlines_free(struct vs_mline *m, size_t n);

struct vs_profile;
/* path read (told apart by content).  0, or -1 with the reason (its line) in err. */
int  vs_ksyms_load(struct vs_ksyms *k, const char *path, char *err, size_t errlen);
void vs_ksyms_free(struct vs_ksyms *k);
/*
 * After the log is read (its LSTAR known): the slide, whether the file
 * names anything (the slide is one; most kernel-mode samples fall in its
 * functions), and the note saying so.
 */
void vs_ksyms_settle(struct vs_ksyms *k, const struct vs_profile *p);
/* The symbol holding the guest address addr once slid, or NULL; *start its slid address. */
const struct vs_sym *vs_ksyms_find(const struct vs_ksyms *k, uint64_t addr,
    uint64_t *start);

/* ---- kallsyms.c ---------------------------------------------------------------- */

/*
 * The kernel's own symbol table (kallsyms) found in guest memory
 * mem[0 .. len) (guest-physical 0 on) into k, at the running kernel's
 * addresses; with save, also written there as /proc/kallsyms lists it.
 * 0, or -1 and err.
 */
int  vs_kallsyms_read(struct vs_ksyms *k, const uint8_t *mem, size_t len, const char *save,
    char *err, size_t errlen);

/* ---- btf.c ------------------------------------------------------------------- */

struct vs_btf {
	const uint8_t *types;	/* the type section */
	size_t	 tlen;
	const char *strs;	/* the string section */
	size_t	 slen;
	uint32_t *off;		/* type id - 1 -> its offset in types */
	uint32_t n;
};
/* BTF data (kept by the caller while b is used): 0, or -1 and err. */
int  vs_btf_open(struct vs_btf *b, const void *data, size_t len, char *err, size_t errlen);
void vs_btf_free(struct vs_btf *b);
/* The byte offset of member in struct sname (anonymous members looked into), or -1. */
long vs_btf_member(const struct vs_btf *b, const char *sname, const char *member);

/* ---- orc.c -------------------------------------------------------------------- */

/* Where the ORC tables and linux_banner are, at the symbol file's addresses. */
struct vs_orc_syms {
	uint64_t ip_start, ip_stop, entries, banner;
};
struct vs_orc {
	uint64_t *ip;		/* each entry's code address, sorted */
	uint8_t	*ent;		/* its 6 bytes */
	size_t	 n;		/* 0: none loaded */
	int	 version;	/* the format: 1 before Linux 6.3, 2 in 6.3, 3 from 6.4 */
};
/* The tables from guest memory, moved by slide: 0, or -1 and err. */
int  vs_orc_load(struct vs_orc *o, struct vpmu_vm *vm, const struct vpmu_regs *r,
    const struct vs_orc_syms *s, uint64_t slide, char *err, size_t errlen);
void vs_orc_free(struct vs_orc *o);
/* The kernel-mode call chain of r into pc[0 .. max): how many (pc[0] = RIP). */
unsigned vs_orc_unwind(const struct vs_orc *o, struct vpmu_vm *vm, const struct vpmu_regs *r,
    uint64_t *pc, unsigned max);

/* ---- tasks.c ------------------------------------------------------------------ */

/*
 * len bytes at kernel address va, through the kernel's page tables (under
 * page-table isolation, user mode's CR3 is the kernel's with bit 12 set):
 * 0, or -1.
 */
int  vs_kread(struct vpmu_vm *vm, const struct vpmu_regs *r, uint64_t va, void *buf,
    size_t len);


enum { VS_TASK_PID, VS_TASK_TGID, VS_TASK_COMM, VS_TASK_LEADER, VS_TASK_NOFF };
#define VS_TASK_COMM_LEN	16	/* task_struct.comm: TASK_COMM_LEN */

struct vs_tasks;
typedef const struct vs_ksyms *vs_ksyms_loader(void *arg, char *err, size_t errlen);
struct vs_task_vcpu {
	struct vs_tasks *tasks;
	struct vpmu_vm *vm;
	int	 fd;		/* the vCPU's: its GS bases and LSTAR */
	uint64_t base;		/* its per-CPU area, once known; 0: not yet */
	unsigned uses;		/* samples since base was read */
};
/* A Linux guest's tasks named at its samples (--guest-symbols). */
struct vs_tasks {
	uint64_t current;	/* per-CPU offset of the current task pointer */
	uint64_t btf_start, btf_stop;	/* at the file's addresses */
	uint64_t entry;		/* entry_SYSCALL_64 at the file's address */
	bool	 slide_known;
	uint64_t slide;
	bool	 tried, ready;	/* the BTF read; the offsets found */
	uint32_t off[VS_TASK_NOFF];
	uint64_t named, unnamed;	/* samples */
	char	 why[256];	/* why samples went unnamed: the first reason, or
				   the BTF's, which holds for all after it */
	struct vs_task_vcpu vcpu[VR_MAX_VCPUS];
	struct vs_orc_syms orcsyms;	/* the kernel's call chains: ORC */
	struct vs_orc orc;
	bool	 orc_tried;
	char	 orc_why[256];	/* why not, when tried */
	vs_ksyms_loader *load;	/* vs_tasks_init_lazy()'s, until called */
	bool	 nosyms;	/* it gave none: no task is named */
	void	*load_arg;
};
/* From the symbol file: 0, or -1 and why the file cannot name tasks. */
int  vs_tasks_init(struct vs_tasks *t, const struct vs_ksyms *k, char *err, size_t errlen);
/*
 * With symbols from fn, called once at the first sample after the kernel
 * set LSTAR (on that vCPU's thread, under libvpmu's VM lock): fn gives
 * them, or NULL and why in err.
 */
void vs_tasks_init_lazy(struct vs_tasks *t, vs_ksyms_loader *fn, void *arg);
/*
 * Name tasks at every sample on vm's vCPUs (before they run), and unwind
 * their kernel-mode call chains by ORC: 0, or -1 and errno.
 */
int  vs_tasks_attach(struct vs_tasks *t, struct vr_vm *vm);
void vs_tasks_fini(struct vs_tasks *t);

/* ---- profile.c, samples.c, logread.c, report.c ---------------------------------- */

/* A frame of the call tree: one function reached by one path from the root. */
struct vs_node {
	uint32_t func;		/* index in vs_profile.funcs */
	uint64_t self;		/* samples whose leaf this is */
	uint64_t total;		/* samples through it */
	struct vs_node *child, *next;
};

struct vs_func {
	char	*name;
	uint64_t self, total;	/* samples: as the leaf; anywhere on the stack (once each) */
	uint64_t mark;		/* sample serial that last counted it in total */
	bool	 proc;		/* a process, the root frame of proot's chains: */
	uint32_t pid;		/* its pid */
};

struct vs_edge {
	uint32_t caller, callee;
	uint64_t count;		/* samples with this call on the stack (once each) */
	uint64_t mark;
};

struct vs_addr {
	uint64_t pc;
	uint64_t count;
	bool	 user;		/* an upper-half PC: of user-mode samples (a user-mode
				   sample's upper-half PC is apart from a kernel-mode one's) */
};

/*
 * A distinct call chain of one event as kept (cut, -c filtered): pc[0] the
 * sampled PC, then the return addresses; func[] their functions.
 */
struct vs_stack {
	uint32_t npc;
	uint64_t *pc;
	uint32_t *func;		/* index in vs_evprof.funcs */
	uint64_t count;		/* samples */
	bool	 user;		/* taken in user mode, with an upper-half PC (only
				   those are apart from kernel-mode chains) */
};

/* One sample kept, in log order (vs_profile.keep_samples: --perf-script). */
struct vs_sample {
	uint64_t tsc;
	uint32_t pid, tid;
	uint32_t cpu;
	uint32_t ev;		/* index in vs_profile.ev */
	uint32_t stack;		/* index in that event's stacks */
	bool	 user;
};

struct vs_cpucount {
	uint32_t cpu;
	uint64_t samples;
};

/* A hash map from 64-bit keys to 32-bit values (map.c). */
struct vs_map {
	uint64_t *keys;
	uint32_t *vals;		/* value + 1; 0: a free slot */
	size_t	 n, cap;
};
/* The value of key, or -1. */
int64_t vs_map_get(const struct vs_map *m, uint64_t key);
void	vs_map_put(struct vs_map *m, uint64_t key, uint32_t val);
void	vs_map_free(struct vs_map *m);

/* Samples of one process (the records' pid) on one chain of an event. */
struct vs_pidstack {
	uint32_t pid;
	uint32_t stack;
	uint64_t samples;
};

/* A name a log gives a process or a thread (PROC_CREATE, THR_CREATE, ...). */
struct vs_name {
	uint32_t id;
	char	 name[64];
};

/* The samples of one event. */
struct vs_evprof {
	char	 name[64];
	uint64_t samples;
	uint64_t user;		/* taken in user mode */
	uint64_t nochain;	/* of PMCs allocated without VPMU_F_CALLCHAIN (-N) */
	struct vs_cpucount *cpus;	/* samples by the records' CPU, as first seen */
	size_t	 ncpus, capcpus;
	struct vs_pidstack *pst;	/* samples by (pid, chain), as first seen */
	size_t	 npst, cappst;
	struct vs_map pst_map;
	struct vs_node root;	/* func UINT32_MAX: "all" */
	/*
	 * The same chains under a frame for their process ("dd[42]", as
	 * stackcollapse-perf roots them; proc_funcs: pid -> that frame's
	 * function): the report's processes, and the flame graph's and the
	 * folded stacks' tree when the log names processes (by_proc,
	 * vs_evprof_tree)
	 */
	struct vs_node proot;
	struct vs_map proc_funcs;
	bool	 by_proc;
	struct vs_func *funcs;
	size_t	 nfuncs, capfuncs;
	struct vs_edge *edges;	/* none: every chain kept is one frame deep */
	size_t	 nedges, capedges;
	struct vs_addr *addrs;	/* leaf PCs */
	size_t	 naddrs, capaddrs;
	struct vs_stack *stacks;	/* the distinct chains */
	size_t	 nstacks, capstacks;
	uint64_t rate;		/* events per sample, if known (0: not known) */
	/* indexes: a PC as a leaf / as a return address -> func; edge; addr */
	struct vs_map leaf_map, ret_map, edge_map, addr_map, cpu_map;
	struct vs_map name_map;		/* a hash of a function's name -> func */
	struct vs_map stack_map;	/* a hash of a chain's PCs -> stack */
};

/* An ELF's identity (image.c). */
struct vs_image_id {
	char	 kind;		/* 0: none; 'B': its GNU build-id; 'H': the file's FNV-1a 64;
				   'F': the same of an image that is no ELF (a bzImage) */
	uint8_t	 len;		/* bytes in id */
	uint8_t	 id[64];
};
#define VS_IMAGE_TAG_BUILD_ID	0x42494400u	/* "BID" | length: USERDATA before a build-id */
#define VS_IMAGE_TAG_HASH	0x464e5600u	/* "FNV" | 8: before a file hash */
#define VS_IMAGE_TAG_FILE	0x46494c00u	/* "FIL" | 8: before a file hash of an
						   image that is no ELF */
#define VS_IMAGE_TAG_LSTAR	0x4c535400u	/* "LST" | 8: before the guest's IA32_LSTAR
						   at the run's end, low word first */

/* What a log holds: its records summed up, samples by event. */
struct vs_profile {
	const struct vs_symtab *syms;	/* may be empty */
	struct vs_ksyms *ksyms;		/* --guest-symbols; NULL: none */
	uint64_t records, bytes;
	uint64_t by_type[32];
	uint64_t drops;			/* DROPNOTIFY records */
	uint32_t version, cputype;
	uint64_t tsc_freq;
	int64_t	 sec, nsec;		/* INITIALIZE: the wall clock at the log's start */
	uint64_t tsc_first, tsc_last;	/* the records' timestamps: the first, the largest */
	bool	 initialized;		/* INITIALIZE came first */
	bool	 closed;		/* CLOSELOG came last */
	/*
	 * PMC id -> event name, from PMCALLOCATE(DYN) or the caller; its flags,
	 * VPMU_F_CALLCHAIN until its PMCALLOCATE(DYN) record gives them
	 */
	struct {
		uint32_t id;
		char	 name[64];
		uint32_t flags;
		uint64_t rate;		/* PMCALLOCATE's or the run's; 0: not known */
	} pmcs[256];
	size_t	 npmcs;
	/*
	 * The processes the log names (PMCATTACH, PROCEXEC, PROC_CREATE), the
	 * threads (THR_CREATE); a later record names one anew
	 */
	struct vs_name *procs, *thrs;
	size_t	 nprocs, capprocs, nthrs, capthrs;
	struct vs_map proc_map, thr_map;
	/* The image the run recorded: its MAP_IN (pid -1), then its identity */
	bool	 has_image;
	char	 image[1024];
	uint64_t image_start;
	struct vs_image_id image_id;	/* kind 0 until whole */
	struct vs_image_id id_next;	/* the identity being read from USERDATA */
	unsigned id_words;		/* its words still to come; UINT_MAX: want the tag */
	bool	 has_lstar;		/* the run recorded the guest's LSTAR */
	uint64_t lstar;
	unsigned lstar_words;		/* its words still to come */
	bool	 keep_samples;		/* keep every sample in samples[] */
	struct vs_sample *samples;
	size_t	 nsamples, capsamples;
	const struct vs_cpuset *cpus;	/* -R -c: the CPUs whose samples count; NULL: all */
	uint64_t filtered;		/* samples of other CPUs, left out */
	uint64_t cut;			/* chains cut at a return address outside the code */
	struct vs_evprof *ev;
	size_t	 nev;
	char	 error[256];		/* the reader's, if the log is bad or cut */
};

void vs_profile_init(struct vs_profile *p, const struct vs_symtab *syms);
void vs_profile_free(struct vs_profile *p);
/* Name a PMC before its records are read (live mode: the user's spelling). */
void vs_profile_name_pmc(struct vs_profile *p, uint32_t id, const char *name);
/* A PMC's sampling rate, where the log does not give it (live mode: -n). */
void vs_profile_pmc_rate(struct vs_profile *p, uint32_t id, uint64_t rate);
/*
 * The function of a frame at pc (a return address, not leaf: the one
 * holding the byte before): from --guest-symbols for a kernel-mode
 * sample's upper-half address, else from --elf; *off pc's offset in it,
 * *kernel whether the kernel symbols named it.  NULL: none.
 */
const struct vs_sym *vs_profile_sym(const struct vs_profile *p, uint64_t pc, bool leaf,
    bool user, uint64_t *off, bool *kernel);
/* "name+0xoff" of vs_profile_sym(), or "" if none. */
void vs_profile_format(const struct vs_profile *p, uint64_t pc, bool user, char *buf,
    size_t len);
/* The deepest chain of a tree: a call chain's frames, and its process's (proot). */
#define VS_TREE_DEPTH_MAX	(VPMU_PMCLOG_CALLCHAIN_MAX + 1)
/* The tree the flame graph and the folded stacks draw: proot if it has samples, else root. */
const struct vs_node *vs_evprof_tree(const struct vs_evprof *e);
/* The name the log gives process pid, or NULL. */
const char *vs_profile_proc(const struct vs_profile *p, uint32_t pid);
/* The name the log gives thread tid (THR_CREATE), or NULL. */
const char *vs_profile_thread(const struct vs_profile *p, uint32_t tid);
/*
 * Read the log at fd (from its current offset) to its end, record by
 * record, the same way whatever fd is (a file, a pipe, a FIFO); with dump,
 * print each record to dump.  0, or -1 if the reader stopped at an error
 * or the input ends inside a record (p->error says why; what came before
 * is in p).
 */
int  vs_profile_read(struct vs_profile *p, int fd, FILE *dump);
/* The event to draw: by name, or the first with samples; NULL if none. */
const struct vs_evprof *vs_profile_event(const struct vs_profile *p, const char *name);
/* The top-functions report of every event. */
void vs_report(FILE *f, const struct vs_profile *p, unsigned top);
/* Caller -> callee counts of one event. */
void vs_callgraph(FILE *f, const struct vs_evprof *e);
/* Folded stacks, root first: "main;work;hot 123". */
void vs_folded(FILE *f, const struct vs_evprof *e);
/* n's children sorted by name, in *out (free it); how many. */
size_t vs_children(const struct vs_evprof *e, const struct vs_node *n,
    const struct vs_node ***out);

/* ---- flame.c ----------------------------------------------------------------------- */

/* A standalone SVG flame graph of e; title names it. */
void vs_flamegraph(FILE *f, const struct vs_evprof *e, const char *title);

/* ---- formats.c --------------------------------------------------------------------- */

/*
 * The samples kept (p->keep_samples) as perf script prints samples with
 * call chains; of event only, or of every event if only is NULL.
 */
void vs_perf_script(FILE *f, const struct vs_profile *p, const struct vs_evprof *only);
/* e as pprof's profile.proto, gzipped: 0, or -1 with a message. */
int  vs_pprof(FILE *f, const struct vs_profile *p, const struct vs_evprof *e);
/* The guest image's path, if known (--elf, the run's guest): NULL if not. */
const char *vs_image(const struct vs_profile *p);
/* The base name of path. */
const char *vs_basename(const char *path);

/* ---- live.c ------------------------------------------------------------------------ */

struct vs_live_opts {
	struct vs_event ev[VS_MAX_EVENTS];
	unsigned nev;
	uint64_t rate;			/* -n */
	bool	 callchain;		/* not -N */
	bool	 cumulative;		/* -C */
	const char *log;		/* -O */
	unsigned wait_s;		/* -w */
	const char *out;		/* -o, "-": standard output */
	int	 fmt;			/* VR_FMT_*: the counts as text, -j, -x */
	char	 sep;			/* -x's */
	bool	 console_stderr;	/* an output on standard output: the console
					   goes to standard error */
	/* what the report writes after the run: files open before it */
	struct vs_outs *outs;
	const char *event;
	unsigned top;
	/* --tunable NAME=VALUE */
	struct { const char *name; long value; } tunables[16];
	unsigned ntunables;
	struct vs_ksyms *ksyms;		/* --guest-symbols, loaded; NULL: none */
	bool	 guest_kallsyms;	/* --guest-kallsyms */
	const char *save_ksyms;		/* --save-guest-symbols */
	int64_t	 from_mark, to_mark;	/* --from-mark, --to-mark; -1: none */
	/* the run's options, vpmu-run's (runopts.c); the guest */
	struct vr_runopts run;
};

/*
 * Run the guest; the exit status (the guest's, VR_EXIT_TIMEOUT,
 * VR_EXIT_SIGNAL + the signal, or VS_EXIT_*).
 */
int vs_live(struct vs_live_opts *o);

/* ---- image.c ----------------------------------------------------------------------- */

struct vpmu_vm;
struct vpmu_cred;
/*
 * path's identity: its GNU build-id, else the file's hash; *start the
 * lowest address of its PT_LOAD segments.  0, or -1 with the reason in err.
 */
int  vs_image_id(const char *path, struct vs_image_id *id, uint64_t *start, char *err,
    size_t errlen);
/* "build-id 0123..." / "file hash 0123..." (report.c) */
void vs_image_id_format(const struct vs_image_id *id, char *buf, size_t len);
/* A run: the guest image path into the caller's log (MAP_IN, WRITELOG).  0 or a status. */
int  vs_log_image(struct vpmu_vm *vm, const struct vpmu_cred *caller, const char *path);
/* A run's end: the guest's LSTAR into the log (WRITELOG).  0 or a status. */
int  vs_log_lstar(struct vpmu_vm *vm, const struct vpmu_cred *caller, uint64_t lstar);
/* -R --elf: 0 if elf is the image the log recorded (or none was), else a message and 2. */
int  vs_image_check(const struct vs_profile *p, const char *elf);

/* ---- output.c ---------------------------------------------------------------------- */

/* A file of -G, --folded, --svg, --perf-script or --pprof. */
struct vs_out {
	const char *opt;	/* "-G", "--folded", "--svg", "--perf-script", "--pprof" */
	const char *path;	/* NULL: not asked for; "-": standard output */
	FILE	*f;		/* open from vs_outs_open() until written or discarded */
	bool	 created;	/* vpmustat created it: removed unless written */
	bool	 regular;	/* a regular file: truncated when written, removed if cut */
};
#define VS_NOUTS	5
struct vs_outs {
	struct vs_out graph, folded, svg, perf, pprof;
	bool	 quiet;		/* -q: no report, no warnings; errors only */
};

/* Any file asked for. */
bool vs_outs_any(const struct vs_outs *o);
/* A file asked for on standard output ("-"). */
bool vs_outs_stdout(struct vs_outs *o);
/*
 * Open every file asked for, before the work whose result it will hold: a
 * path that cannot be written fails now, with a message.  An existing file
 * is not truncated until it is written.  0, or -1 (what was opened is left
 * to vs_outs_discard()).
 */
int  vs_outs_open(struct vs_outs *o);
/*
 * Close what is open unwritten; remove the files vs_outs_open() created.
 * main() calls it once, after the work, whatever happened.
 */
void vs_outs_discard(struct vs_outs *o);
/*
 * The report to report, then the files, if write (the run ended well) and
 * the log was read whole (p->error empty).  0 or an exit status: 1 for a
 * bad or cut log.  The files not written are left to vs_outs_discard().
 */
int  vs_outputs(const struct vs_profile *p, FILE *report, unsigned top,
    const char *event, struct vs_outs *o, bool write, const char *title);
/* Flush and close f, the file of option opt at path: 0, or a message and -1. */
int  vs_fclose(FILE *f, const char *opt, const char *path);
/* Flush standard output; at the end (last), say if a write to it failed.  0 or -1. */
int  vs_stdout_flush(bool last);

/* ---- options.c --------------------------------------------------------------------- */

/* The command line, as vs_cmdline_parse() leaves it for main(). */
struct vs_cmdline {
	struct vs_live_opts o;		/* a run's (o.outs: &outs) */
	struct vs_outs outs;
	/* -S, -s, -P, -p as given; their events resolved by main() */
	struct {
		int	 scope;		/* enum vs_scope */
		const char *list;
		const struct vs_cpuset *cpus;
	} specs[VS_MAX_EVENTS];
	unsigned nspecs;
	struct vs_cpuset cpusets[VS_MAX_EVENTS];	/* each -c */
	unsigned ncpusets;
	const struct vs_cpuset *cpus;	/* the last -c; NULL: "*" */
	const char *pending_c;		/* a -c no -S or -s followed yet */
	const char *rlog;		/* -R */
	const char *elf;		/* --elf */
	const char *gsyms, *slide;	/* --guest-symbols, --kaslr-slide */
	const char *modules, *moddir;	/* --guest-modules, --guest-module-dir */
	bool	 dump, list;		/* --dump, --list-events */
	bool	 live_only;		/* an option of a run only (not with -R) */
	vpmu_config *tuncfg;		/* --tunable's, each name checked on it */
};

/* The defaults, and tuncfg: 0, or a message and an exit status. */
int  vs_cmdline_init(struct vs_cmdline *cl);
/*
 * Every option into cl, each argument checked: 0, or the exit status after
 * a message (a usage error: 2 and the "Try" line).  --help and --version
 * exit here.
 */
int  vs_cmdline_parse(struct vs_cmdline *cl, int argc, char **argv);
/* A usage error: "vpmustat: " fmt (with a and b), the "Try" line; 2. */
int  vs_bad(const char *fmt, const char *a, const char *b);
/*
 * The --tunable values, checked as the VM will check them: a VM of the
 * synthetic source is made with cfg, and a value hwpmc would reset to its
 * default (its diagnostic) is an error here, before anything runs.  0 or a
 * status.
 */
int  vs_tunables_check(vpmu_config *cfg);

#endif /* VPMUSTAT_H */
