/*
 * vpmustat.h -- pmcstat(8) for a guest: sample or count a vpmu-run guest
 * through libvpmu's host API, and read the pmclog log back (vpmustat(1)).
 *
 *   main.c     options, the two modes
 *   events.c   event names: perf's generic ones, libpfm4's, raw codes
 *   live.c     the run: vpmu-run's boot.c/elf.c/run.c, PMCs, the log,
 *              the progress line, the counting table
 *   profile.c  the log read back: samples into a call tree; the report,
 *              the call graph, folded stacks, the record dump
 *   symbols.c  guest addresses to function names through libelf
 *   flame.c    the flame graph, an SVG drawn here
 */
#ifndef VPMUSTAT_H
#define VPMUSTAT_H

#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>

#define VS_EXIT_HOST	1	/* host failure, unreadable log */
#define VS_EXIT_USAGE	2	/* bad option, event or guest image */
#define VS_EXIT_SKIP	77	/* no usable /dev/kvm and VPMU_SKIP_NO_KVM=1 */

#define VS_RATE_DEFAULT	65536	/* pmcstat's -n default */
#define VS_MAX_EVENTS	16	/* the paravirtual class has 16 rows */

/* ---- events.c --------------------------------------------------------------- */

enum vs_scope { VS_SS, VS_SC, VS_TS, VS_TC };	/* -S, -s, -P, -p */

struct vs_event {
	char	 name[64];	/* as given */
	int	 scope;		/* enum vs_scope */
	uint32_t event;		/* enum vpmu_event */
	uint64_t raw;		/* with VPMU_EV_RAW */
	uint32_t caps;		/* VPMU_CAP_USER / SYSTEM / EDGE / INVERT / THRESHOLD */
	uint32_t cmask;
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
	struct vs_sym *s;	/* sorted by addr */
	size_t	 n;
};

/* The FUNC symbols of an ELF file; 0, or -1 with the reason in err. */
int  vs_symtab_load(struct vs_symtab *t, const char *path, char *err, size_t errlen);
void vs_symtab_free(struct vs_symtab *t);
/* The function holding addr, or NULL; *off the offset in it. */
const struct vs_sym *vs_symtab_find(const struct vs_symtab *t, uint64_t addr, uint64_t *off);
/* "name+0xoff", or "0xaddr" when no function holds addr. */
void vs_symtab_format(const struct vs_symtab *t, uint64_t addr, char *buf, size_t len);

/* ---- profile.c ----------------------------------------------------------------- */

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
};

struct vs_edge {
	uint32_t caller, callee;
	uint64_t count;		/* samples with this call on the stack (once each) */
	uint64_t mark;
};

struct vs_addr {
	uint64_t pc;
	uint64_t count;
};

/* A hash map from 64-bit keys to 32-bit values (profile.c). */
struct vs_map {
	uint64_t *keys;
	uint32_t *vals;		/* value + 1; 0: a free slot */
	size_t	 n, cap;
};

/* The samples of one event. */
struct vs_evprof {
	char	 name[64];
	uint64_t samples;
	uint64_t user;		/* taken in user mode */
	struct vs_node root;	/* func UINT32_MAX: "all" */
	struct vs_func *funcs;
	size_t	 nfuncs, capfuncs;
	struct vs_edge *edges;
	size_t	 nedges, capedges;
	struct vs_addr *addrs;	/* leaf PCs */
	size_t	 naddrs, capaddrs;
	/* indexes: a PC as a leaf / as a return address -> func; edge; addr */
	struct vs_map leaf_map, ret_map, edge_map, addr_map;
};

/* What a log holds: its records summed up, samples by event. */
struct vs_profile {
	const struct vs_symtab *syms;	/* may be empty */
	uint64_t records, bytes;
	uint64_t by_type[32];
	uint64_t drops;			/* DROPNOTIFY records */
	uint32_t version, cputype;
	uint64_t tsc_freq;
	bool	 initialized;		/* INITIALIZE came first */
	bool	 closed;		/* CLOSELOG came last */
	/* PMC id -> event name, from PMCALLOCATE(DYN) or the caller */
	struct { uint32_t id; char name[64]; } pmcs[256];
	size_t	 npmcs;
	struct vs_evprof *ev;
	size_t	 nev;
	char	 error[256];		/* the reader's, if the log is bad or cut */
};

void vs_profile_init(struct vs_profile *p, const struct vs_symtab *syms);
void vs_profile_free(struct vs_profile *p);
/* Name a PMC before its records are read (live mode: the user's spelling). */
void vs_profile_name_pmc(struct vs_profile *p, uint32_t id, const char *name);
/*
 * Read the log at fd (from its current offset) record by record; with
 * dump, print each record to dump.  0, or -1 if the reader stopped at an
 * error (p->error says why; what came before is in p).
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

/* ---- live.c ------------------------------------------------------------------------ */

struct vs_live_opts {
	struct vs_event ev[VS_MAX_EVENTS];
	unsigned nev;
	uint64_t rate;			/* -n */
	bool	 callchain;		/* not -N */
	bool	 cumulative;		/* -C */
	const char *log;		/* -O */
	unsigned wait_s;		/* -w */
	const char *out;		/* -o */
	/* what the report writes after the run */
	const char *graph, *folded, *svg, *event;
	unsigned top;
	/* --tunable NAME=VALUE */
	struct { const char *name; long value; } tunables[16];
	unsigned ntunables;
	/* vpmu-run's options */
	const char *pmu;
	const char *source;
	bool	 exact_block;		/* --exact-mode block */
	unsigned vcpus, mem, host_counters, mux_us;
	const char *guest;
};

/* Run the guest; the exit status (the guest's, or VS_EXIT_*). */
int vs_live(struct vs_live_opts *o, const char *modelstr);

/* main.c: write the outputs of a read log (report, -G, --folded, --svg). */
int vs_outputs(const struct vs_profile *p, FILE *report, unsigned top,
    const char *event, const char *graph, const char *folded, const char *svg,
    const char *title);

#endif /* VPMUSTAT_H */
