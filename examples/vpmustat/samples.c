/*
 * samples.c -- a log's samples counted.  Each CALLCHAIN record is a
 * sample of the event of its PMC: pc[0] the guest RIP, pc[1..] return
 * addresses.  A return address points after its CALL, so it is looked up
 * one byte back (a CALL at the very end of a function still names that
 * function).
 *
 * With an ELF, a chain is cut at its first return address whose byte
 * before is not in the ELF's code: the walk read it from a frame that was
 * none, and the frames above came from the same bad frame pointer.  With
 * -c, the samples of CPUs not in the list are left out.
 *
 * Per event: a call tree from the root ("all") through the chain's frames,
 * outermost first; per function the samples it is the leaf of (self) and
 * the samples it is anywhere in (total, once per sample however deep the
 * recursion); per caller -> callee pair the samples with that call on the
 * stack; per leaf address its samples; the distinct chains (PCs and their
 * functions) and their samples, which pprof's profile is made of.  Each
 * sample itself (time, CPU, pid, its chain) is kept only when asked for
 * (keep_samples: perf script's text lists them one by one).  The chains
 * are counted as they come; their functions and the trees are made once
 * the log is read (vs_profile_funcs()), when the kernel's slide is known.
 */
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

#include <vpmu/hwpmc.h>

#include "profile_internal.h"

/* ---- -c ------------------------------------------------------------------------------ */

/* Here, not in main.c, so that the -R code links without main() (fuzz_vpmustat). */
bool
vs_cpuset_has(const struct vs_cpuset *c, uint32_t cpu)
{
	unsigned i;

	if (c == NULL)
		return (true);
	for (i = 0; i < c->n; i++)
		if (cpu >= c->r[i].lo && cpu <= c->r[i].hi)
			return (true);
	return (false);
}

static struct vs_evprof *
evprof(struct vs_profile *p, const char *name)
{
	struct vs_evprof *e;
	size_t i;

	for (i = 0; i < p->nev; i++)
		if (strcmp(p->ev[i].name, name) == 0)
			return (&p->ev[i]);
	if ((e = realloc(p->ev, (p->nev + 1) * sizeof(*e))) == NULL)
		vs_oom();
	p->ev = e;
	e = &p->ev[p->nev++];
	memset(e, 0, sizeof(*e));
	snprintf(e->name, sizeof(e->name), "%s", name);
	e->root.func = VS_ROOT;
	e->proot.func = VS_ROOT;
	return (e);
}

/*
 * A PC's key in the maps of PCs: a user-mode sample's upper-half PC is
 * not a kernel-mode one's (only the latter is named by the kernel's
 * symbols); it has bit 62 flipped (a non-canonical address: no PC).
 */
static uint64_t
mode_key(uint64_t pc, bool user)
{
	return (pc ^ (user && pc >= VS_KERNEL_HALF ? UINT64_C(1) << 62 : 0));
}

/* FNV-1a, 64 bits: the key of a function's name in name_map. */
static uint64_t
name_hash(const char *s)
{
	uint64_t h = UINT64_C(0xcbf29ce484222325);

	for (; *s != '\0'; s++)
		h = (h ^ (unsigned char)*s) * UINT64_C(0x100000001b3);
	return (h);
}

/*
 * The function of a frame: a PC seen before is in a map; a new one is
 * resolved and its function found by name, through a map of the names'
 * hashes (a search over the functions for each new PC made a log of
 * 40000 distinct PCs without --elf take seconds).
 */
static uint32_t
func_of(const struct vs_profile *p, struct vs_evprof *e, uint64_t pc, bool leaf, bool user)
{
	struct vs_map *m = leaf ? &e->leaf_map : &e->ret_map;
	const struct vs_sym *s;
	char buf[32];
	const char *name;
	int64_t known, byname;
	uint64_t h, off, key;
	size_t i;
	bool kernel;

	key = mode_key(pc, user);
	if ((known = vs_map_get(m, key)) >= 0)
		return ((uint32_t)known);
	s = vs_profile_sym(p, pc, leaf, user, &off, &kernel);
	if (s != NULL)
		name = s->name;
	else {
		snprintf(buf, sizeof(buf), "%#" PRIx64, pc);
		name = buf;
	}
	h = name_hash(name);
	i = SIZE_MAX;
	if ((byname = vs_map_get(&e->name_map, h)) >= 0) {
		if (strcmp(e->funcs[byname].name, name) == 0)
			i = (size_t)byname;
		else	/* two names, one hash: the slow way */
			for (i = e->nfuncs; i-- > 0; )
				if (strcmp(e->funcs[i].name, name) == 0)
					break;
	}
	if (i == SIZE_MAX) {
		e->funcs = vs_grow(e->funcs, &e->capfuncs, e->nfuncs, sizeof(*e->funcs));
		memset(&e->funcs[e->nfuncs], 0, sizeof(e->funcs[0]));
		if ((e->funcs[e->nfuncs].name = strdup(name)) == NULL)
			vs_oom();
		i = e->nfuncs++;
		if (byname < 0)
			vs_map_put(&e->name_map, h, (uint32_t)i);
	}
	vs_map_put(m, key, (uint32_t)i);
	return ((uint32_t)i);
}

static struct vs_node *
child_of(struct vs_node *n, uint32_t func)
{
	struct vs_node *c;

	for (c = n->child; c != NULL; c = c->next)
		if (c->func == func)
			return (c);
	if ((c = calloc(1, sizeof(*c))) == NULL)
		vs_oom();
	c->func = func;
	c->next = n->child;
	n->child = c;
	return (c);
}

static void
count_edge(struct vs_evprof *e, uint32_t caller, uint32_t callee, uint64_t serial,
    uint64_t count)
{
	uint64_t key = (uint64_t)caller << 32 | callee;
	int64_t known = vs_map_get(&e->edge_map, key);
	size_t i;

	if (known >= 0)
		i = (size_t)known;
	else {
		e->edges = vs_grow(e->edges, &e->capedges, e->nedges, sizeof(*e->edges));
		i = e->nedges++;
		e->edges[i] = (struct vs_edge){ caller, callee, 0, 0 };
		vs_map_put(&e->edge_map, key, (uint32_t)i);
	}
	if (e->edges[i].mark != serial) {
		e->edges[i].mark = serial;
		e->edges[i].count += count;
	}
}

static void
count_addr(struct vs_evprof *e, uint64_t pc, bool user)
{
	int64_t known = vs_map_get(&e->addr_map, mode_key(pc, user));

	if (known >= 0) {
		e->addrs[known].count++;
		return;
	}
	e->addrs = vs_grow(e->addrs, &e->capaddrs, e->naddrs, sizeof(*e->addrs));
	vs_map_put(&e->addr_map, mode_key(pc, user), (uint32_t)e->naddrs);
	e->addrs[e->naddrs++] = (struct vs_addr){ pc, 1, user };
}

static void
count_cpu(struct vs_evprof *e, uint32_t cpu)
{
	int64_t known = vs_map_get(&e->cpu_map, cpu);

	if (known >= 0) {
		e->cpus[known].samples++;
		return;
	}
	e->cpus = vs_grow(e->cpus, &e->capcpus, e->ncpus, sizeof(*e->cpus));
	vs_map_put(&e->cpu_map, cpu, (uint32_t)e->ncpus);
	e->cpus[e->ncpus++] = (struct vs_cpucount){ cpu, 1 };
}

static void
count_pidstack(struct vs_evprof *e, uint32_t pid, uint32_t stack)
{
	uint64_t key = (uint64_t)pid << 32 | stack;
	int64_t known = vs_map_get(&e->pst_map, key);

	if (known >= 0) {
		e->pst[known].samples++;
		return;
	}
	e->pst = vs_grow(e->pst, &e->cappst, e->npst, sizeof(*e->pst));
	vs_map_put(&e->pst_map, key, (uint32_t)e->npst);
	e->pst[e->npst++] = (struct vs_pidstack){ pid, stack, 1 };
}

static bool
same_stack(const struct vs_stack *s, const uint64_t *pc, uint32_t npc, bool user)
{
	return (s->npc == npc && s->user == user &&
	    memcmp(s->pc, pc, npc * sizeof(*pc)) == 0);
}

/*
 * The chain pc[0 .. npc) of one mode: its stack, counted once more.  A
 * user-mode chain is apart from a kernel-mode one only with an upper-half
 * PC (mode_key()).
 */
static uint32_t
count_stack(struct vs_evprof *e, const uint64_t *pc, uint32_t npc, bool user)
{
	struct vs_stack *s;
	uint64_t h = UINT64_C(0xcbf29ce484222325), upper = 0;
	int64_t known;
	uint32_t i;
	size_t k;

	for (i = 0; i < npc; i++) {
		h = (h ^ pc[i]) * UINT64_C(0x100000001b3);
		upper |= mode_key(pc[i], user) ^ pc[i];
	}
	user = upper != 0;
	h ^= npc | (uint64_t)user << 32;
	k = SIZE_MAX;
	if ((known = vs_map_get(&e->stack_map, h)) >= 0) {
		if (same_stack(&e->stacks[known], pc, npc, user))
			k = (size_t)known;
		else	/* two chains, one hash: the slow way */
			for (k = e->nstacks; k-- > 0; )
				if (same_stack(&e->stacks[k], pc, npc, user))
					break;
	}
	if (k == SIZE_MAX) {
		e->stacks = vs_grow(e->stacks, &e->capstacks, e->nstacks, sizeof(*e->stacks));
		s = &e->stacks[e->nstacks];
		s->npc = npc;
		s->count = 0;
		s->user = user;
		if ((s->pc = malloc(npc * sizeof(*pc))) == NULL ||
		    (s->func = malloc(npc * sizeof(*s->func))) == NULL)
			vs_oom();
		memcpy(s->pc, pc, npc * sizeof(*pc));
		k = e->nstacks++;
		if (known < 0)
			vs_map_put(&e->stack_map, h, (uint32_t)k);
	}
	e->stacks[k].count++;
	return ((uint32_t)k);
}

/*
 * One CALLCHAIN record: its chain is counted; its functions are found
 * once the log is read (vs_profile_funcs()), when the kernel's slide is known.
 */
void
vs_profile_add_sample(struct vs_profile *p, const struct vpmu_pmclog_ev *ev)
{
	uint32_t cpu = VPMU_PMCLOG_CPUFLAGS_CPU(ev->u.callchain.cpuflags);
	int pi = vs_profile_pmc_index(p, ev->u.callchain.pmcid);
	const char *name = pi >= 0 ? p->pmcs[pi].name : NULL;
	char buf[32];
	struct vs_evprof *e;
	uint32_t i, k, npc = ev->u.callchain.npc;
	bool user;

	if (name == NULL) {
		snprintf(buf, sizeof(buf), "pmc %#" PRIx32, ev->u.callchain.pmcid);
		name = buf;
	}
	e = evprof(p, name);
	if (e->rate == 0 && pi >= 0)
		e->rate = p->pmcs[pi].rate;
	if (npc == 0)
		return;
	if (p->cpus != NULL && !vs_cpuset_has(p->cpus, cpu)) {
		p->filtered++;
		return;
	}
	user = (VPMU_PMCLOG_CPUFLAGS_FLAGS(ev->u.callchain.cpuflags) &
	    VPMU_PMCLOG_CC_F_USERSPACE) != 0;
	/*
	 * Cut at the first return address outside the code (one byte back);
	 * with a Linux guest's symbols, of a kernel-mode chain, at the first
	 * below the upper half, where no kernel code is (a frame pointer that
	 * was none: a kernel built without them keeps data in RBP).
	 */
	for (i = 1; i < npc; i++)
		if (!vs_symtab_in_code(p->syms, ev->u.callchain.pc[i] - 1) ||
		    (p->ksyms != NULL && !user && ev->u.callchain.pc[0] >= VS_KERNEL_HALF &&
		    ev->u.callchain.pc[i] < VS_KERNEL_HALF)) {
			npc = i;
			p->cut++;
			break;
		}
	e->samples++;
	if (user)
		e->user++;
	if (pi >= 0 && !(p->pmcs[pi].flags & VPMU_F_CALLCHAIN))
		e->nochain++;
	count_cpu(e, cpu);
	k = count_stack(e, ev->u.callchain.pc, npc, user);
	count_pidstack(e, ev->u.callchain.pid, k);
	if (p->keep_samples) {
		p->samples = vs_grow(p->samples, &p->capsamples, p->nsamples,
		    sizeof(*p->samples));
		p->samples[p->nsamples++] = (struct vs_sample){ .tsc = ev->tsc,
		    .pid = ev->u.callchain.pid, .tid = ev->u.callchain.tid, .cpu = cpu,
		    .ev = (uint32_t)(e - p->ev), .stack = k, .user = user };
	}
	count_addr(e, ev->u.callchain.pc[0], user);
}

/*
 * "comm[pid]", "cr3:0x...", or "pid N"; a comm comes from the log: bytes
 * below 0x20, DEL and ';' (the folded stacks' separator) become '_'.
 */
static void
proc_label(const struct vs_profile *p, uint32_t pid, char *buf, size_t len)
{
	const char *name = vs_profile_proc(p, pid);
	unsigned char *c;

	if (name != NULL && (pid & VPMU_PID_ASPACE))
		snprintf(buf, len, "%s", name);
	else if (name != NULL)
		snprintf(buf, len, "%s[%" PRIu32 "]", name, pid);
	else
		snprintf(buf, len, "pid %" PRIu32, pid);
	for (c = (unsigned char *)buf; *c != '\0'; c++)
		if (*c < 0x20 || *c == 0x7f || *c == ';')
			*c = '_';
}

/* The pseudo-function that stands for process pid in proot. */
static uint32_t
proc_func(const struct vs_profile *p, struct vs_evprof *e, uint32_t pid)
{
	char label[96];
	int64_t known;

	if ((known = vs_map_get(&e->proc_funcs, pid)) >= 0)
		return ((uint32_t)known);
	proc_label(p, pid, label, sizeof(label));
	vs_map_put(&e->proc_funcs, pid, (uint32_t)e->nfuncs);
	e->funcs = vs_grow(e->funcs, &e->capfuncs, e->nfuncs, sizeof(*e->funcs));
	memset(&e->funcs[e->nfuncs], 0, sizeof(e->funcs[0]));
	if ((e->funcs[e->nfuncs].name = strdup(label)) == NULL)
		vs_oom();
	e->funcs[e->nfuncs].proc = true;
	e->funcs[e->nfuncs].pid = pid;
	return ((uint32_t)e->nfuncs++);
}

/*
 * The functions of e's chains, its call tree and call counts, from its
 * distinct chains: each as many times as it was sampled (in the order the
 * chains came, so the functions and the tree's nodes are in the order of
 * the samples that first reached them).
 */
void
vs_profile_funcs(const struct vs_profile *p, struct vs_evprof *e)
{
	struct vs_stack *st;
	struct vs_node *n;
	uint32_t *f, i;
	size_t k;

	for (k = 0; k < e->nstacks; k++) {
		st = &e->stacks[k];
		f = st->func;
		for (i = 0; i < st->npc; i++)
			f[i] = func_of(p, e, st->pc[i], i == 0, st->user);
		e->funcs[f[0]].self += st->count;
		/* Root first: the outermost frame is the last of the chain. */
		n = &e->root;
		n->total += st->count;
		for (i = st->npc; i-- > 0; ) {
			n = child_of(n, f[i]);
			n->total += st->count;
			/* Once per sample, however deep the recursion: mark k + 1 */
			if (e->funcs[f[i]].mark != k + 1) {
				e->funcs[f[i]].mark = k + 1;
				e->funcs[f[i]].total += st->count;
			}
			if (i + 1 < st->npc)
				count_edge(e, f[i + 1], f[i], k + 1, st->count);
		}
		n->self += st->count;
	}
	/* By process: each (process, chain) under its process's frame. */
	e->by_proc = p->nprocs != 0;
	for (k = 0; k < e->npst; k++) {
		st = &e->stacks[e->pst[k].stack];
		n = &e->proot;
		n->total += e->pst[k].samples;
		n = child_of(n, proc_func(p, e, e->pst[k].pid));
		n->total += e->pst[k].samples;
		for (i = st->npc; i-- > 0; ) {
			n = child_of(n, st->func[i]);
			n->total += e->pst[k].samples;
		}
		n->self += e->pst[k].samples;
	}
}
