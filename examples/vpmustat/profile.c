/*
 * profile.c -- a pmclog log read back into profiles.
 *
 * Every record is read with libvpmu's reader (vpmu_pmclog_read()).  The
 * PMC allocations name the events; each CALLCHAIN record is a sample of
 * the event of its PMC: pc[0] the guest RIP, pc[1..] return addresses.
 * A return address points after its CALL, so it is looked up one byte
 * back (a CALL at the very end of a function still names that function).
 *
 * With an ELF, a chain is cut at its first return address whose byte
 * before is not in the ELF's code: the walk read it from a frame that was
 * none, and the frames above came from the same bad frame pointer.  With
 * -c, the samples of CPUs not in the list are left out.
 *
 * The log is read through a buffer reader fed here, whatever the input is:
 * at its end, the bytes fed and not returned as records are a record cut
 * short, from a pipe as from a file.
 *
 * Per event: a call tree from the root ("all") through the chain's frames,
 * outermost first; per function the samples it is the leaf of (self) and
 * the samples it is anywhere in (total, once per sample however deep the
 * recursion); per caller -> callee pair the samples with that call on the
 * stack; per leaf address its samples; the distinct chains (PCs and their
 * functions) and their samples, which pprof's profile is made of.  Each
 * sample itself (time, CPU, pid, its chain) is kept only when asked for
 * (keep_samples: perf script's text lists them one by one).
 */
#include <errno.h>
#include <inttypes.h>
#include <limits.h>
#include <poll.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <vpmu/hwpmc.h>
#include <vpmu/pmclog.h>

#include "vpmustat.h"

#define ROOT	UINT32_MAX

static void
oom(void)
{
	fprintf(stderr, "vpmustat: out of memory\n");
	exit(VS_EXIT_HOST);
}

static void *
grow(void *p, size_t *cap, size_t n, size_t size)
{
	if (n < *cap)
		return (p);
	*cap = *cap ? *cap * 2 : 64;
	if ((p = realloc(p, *cap * size)) == NULL)
		oom();
	return (p);
}

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

/* ---- a map from 64-bit keys (open addressing, linear probing) ---------------------- */

static size_t
map_slot(uint64_t key, size_t cap)
{
	key ^= key >> 33;
	key *= UINT64_C(0xff51afd7ed558ccd);
	key ^= key >> 33;
	return ((size_t)key & (cap - 1));
}

int64_t
vs_map_get(const struct vs_map *m, uint64_t key)
{
	size_t i;

	if (m->cap == 0)
		return (-1);
	for (i = map_slot(key, m->cap); m->vals[i] != 0; i = (i + 1) & (m->cap - 1))
		if (m->keys[i] == key)
			return ((int64_t)m->vals[i] - 1);
	return (-1);
}

void
vs_map_put(struct vs_map *m, uint64_t key, uint32_t val)
{
	struct vs_map old = *m;
	size_t i;

	if (2 * (m->n + 1) > m->cap) {
		m->cap = m->cap ? m->cap * 2 : 256;
		m->n = 0;
		if ((m->keys = calloc(m->cap, sizeof(*m->keys))) == NULL ||
		    (m->vals = calloc(m->cap, sizeof(*m->vals))) == NULL)
			oom();
		for (i = 0; i < old.cap; i++)
			if (old.vals[i] != 0)
				vs_map_put(m, old.keys[i], old.vals[i] - 1);
		free(old.keys);
		free(old.vals);
	}
	for (i = map_slot(key, m->cap); m->vals[i] != 0; i = (i + 1) & (m->cap - 1))
		if (m->keys[i] == key)
			break;
	if (m->vals[i] == 0)
		m->n++;
	m->keys[i] = key;
	m->vals[i] = val + 1;
}

void
vs_map_free(struct vs_map *m)
{
	free(m->keys);
	free(m->vals);
	memset(m, 0, sizeof(*m));
}

void
vs_profile_init(struct vs_profile *p, const struct vs_symtab *syms)
{
	memset(p, 0, sizeof(*p));
	p->syms = syms;
}

/*
 * The image a run recorded (image.c): its MAP_IN with pid -1, then in
 * USERDATA records a tag word and the identity's bytes, four to a word;
 * and at the run's end the "LST" tag and the guest's LSTAR in two words.
 */
static void
image_record(struct vs_profile *p, const struct vpmu_pmclog_ev *ev)
{
	struct vs_image_id *id = &p->id_next;
	uint32_t w, tag, k, at;

	if (ev->type == VPMU_PMCLOG_MAP_IN) {
		if (ev->u.map_in.pid != UINT32_MAX || p->has_image)
			return;
		p->has_image = true;
		snprintf(p->image, sizeof(p->image), "%s", ev->u.map_in.path);
		p->image_start = ev->u.map_in.start;
		p->id_words = UINT_MAX;
		return;
	}
	w = ev->u.userdata.userdata;
	/* The guest's LSTAR (live.c, at the run's end): its tag, two words. */
	if (p->lstar_words != 0) {
		if (--p->lstar_words == 1)
			p->lstar = w;
		else {
			p->lstar |= (uint64_t)w << 32;
			p->has_lstar = true;
		}
		return;
	}
	if (w == (VS_IMAGE_TAG_LSTAR | 8) && (p->id_words == 0 || p->id_words == UINT_MAX)) {
		p->lstar_words = 2;
		return;
	}
	if (p->id_words == 0)
		return;
	if (p->id_words == UINT_MAX) {
		tag = w & ~UINT32_C(0xff);
		memset(id, 0, sizeof(*id));
		if ((tag != VS_IMAGE_TAG_BUILD_ID && tag != VS_IMAGE_TAG_HASH &&
		    tag != VS_IMAGE_TAG_FILE) ||
		    (w & 0xff) == 0 || (w & 0xff) > sizeof(id->id)) {
			p->id_words = 0;	/* not an identity: none */
			return;
		}
		id->kind = tag == VS_IMAGE_TAG_BUILD_ID ? 'B' : tag == VS_IMAGE_TAG_HASH ?
		    'H' : 'F';
		id->len = (uint8_t)(w & 0xff);
		p->id_words = (id->len + 3u) / 4;
		return;
	}
	at = ((id->len + 3u) / 4 - p->id_words) * 4;	/* the word's first byte */
	for (k = 0; k < 4 && at + k < id->len; k++)
		id->id[at + k] = (uint8_t)(w >> (8 * k));
	if (--p->id_words == 0)
		p->image_id = *id;
}

static void
node_free(struct vs_node *n)
{
	struct vs_node *c, *next;

	for (c = n->child; c != NULL; c = next) {
		next = c->next;
		node_free(c);
		free(c);
	}
	n->child = NULL;
}

void
vs_profile_free(struct vs_profile *p)
{
	struct vs_evprof *e;
	size_t i, j;

	for (i = 0; i < p->nev; i++) {
		e = &p->ev[i];
		node_free(&e->root);
		node_free(&e->proot);
		vs_map_free(&e->proc_funcs);
		for (j = 0; j < e->nfuncs; j++)
			free(e->funcs[j].name);
		free(e->funcs);
		free(e->edges);
		free(e->addrs);
		for (j = 0; j < e->nstacks; j++) {
			free(e->stacks[j].pc);
			free(e->stacks[j].func);
		}
		free(e->stacks);
		vs_map_free(&e->stack_map);
		free(e->cpus);
		vs_map_free(&e->cpu_map);
		free(e->pst);
		vs_map_free(&e->pst_map);
		vs_map_free(&e->leaf_map);
		vs_map_free(&e->ret_map);
		vs_map_free(&e->edge_map);
		vs_map_free(&e->addr_map);
		vs_map_free(&e->name_map);
	}
	free(p->ev);
	p->ev = NULL;
	p->nev = 0;
	free(p->samples);
	p->samples = NULL;
	p->nsamples = 0;
	free(p->procs);
	free(p->thrs);
	p->procs = p->thrs = NULL;
	p->nprocs = p->nthrs = p->capprocs = p->capthrs = 0;
	vs_map_free(&p->proc_map);
	vs_map_free(&p->thr_map);
}

void
vs_profile_name_pmc(struct vs_profile *p, uint32_t id, const char *name)
{
	size_t i;

	for (i = 0; i < p->npmcs; i++)
		if (p->pmcs[i].id == id)
			break;
	if (i == p->npmcs) {
		if (p->npmcs == sizeof(p->pmcs) / sizeof(p->pmcs[0]))
			return;
		p->npmcs++;
		/* Until its PMCALLOCATE record says otherwise: not a -N PMC. */
		p->pmcs[i].flags = VPMU_F_CALLCHAIN;
	}
	p->pmcs[i].id = id;
	snprintf(p->pmcs[i].name, sizeof(p->pmcs[i].name), "%s", name);
}

void
vs_profile_pmc_rate(struct vs_profile *p, uint32_t id, uint64_t rate)
{
	size_t i;

	for (i = 0; i < p->npmcs; i++)
		if (p->pmcs[i].id == id)
			p->pmcs[i].rate = rate;
}

/*
 * id is named name in names (a later record names it anew): a path's last
 * component (PMCATTACH, PROCEXEC), a comm as it is (PROC_CREATE,
 * THR_CREATE: "kworker/0:1" keeps its slash).
 */
static void
name_put(struct vs_name **names, size_t *n, size_t *cap, struct vs_map *map, uint32_t id,
    const char *name, bool path)
{
	const char *base = path ? vs_basename(name) : name;
	int64_t i;

	if (base[0] == '\0')
		return;
	if ((i = vs_map_get(map, id)) < 0) {
		*names = grow(*names, cap, *n, sizeof(**names));
		i = (int64_t)(*n)++;
		vs_map_put(map, id, (uint32_t)i);
	}
	(*names)[i].id = id;
	snprintf((*names)[i].name, sizeof((*names)[i].name), "%s", base);
}

static void
proc_name(struct vs_profile *p, uint32_t pid, const char *name, bool path)
{
	name_put(&p->procs, &p->nprocs, &p->capprocs, &p->proc_map, pid, name, path);
}

static void
thread_name(struct vs_profile *p, uint32_t tid, const char *name)
{
	name_put(&p->thrs, &p->nthrs, &p->capthrs, &p->thr_map, tid, name, false);
}

const char *
vs_profile_proc(const struct vs_profile *p, uint32_t pid)
{
	int64_t i = vs_map_get(&p->proc_map, pid);

	return (i >= 0 ? p->procs[i].name : NULL);
}

const char *
vs_profile_thread(const struct vs_profile *p, uint32_t tid)
{
	int64_t i = vs_map_get(&p->thr_map, tid);

	return (i >= 0 ? p->thrs[i].name : NULL);
}

static int
pmc_index(const struct vs_profile *p, uint32_t id)
{
	size_t i;

	for (i = 0; i < p->npmcs; i++)
		if (p->pmcs[i].id == id)
			return ((int)i);
	return (-1);
}

static const char *
pmc_name(const struct vs_profile *p, uint32_t id)
{
	int i = pmc_index(p, id);

	return (i >= 0 ? p->pmcs[i].name : NULL);
}

/* A PMC's allocation flags, from its PMCALLOCATE(DYN) record. */
static void
pmc_flags(struct vs_profile *p, uint32_t id, uint32_t flags)
{
	int i = pmc_index(p, id);

	if (i >= 0)
		p->pmcs[i].flags = flags;
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
		oom();
	p->ev = e;
	e = &p->ev[p->nev++];
	memset(e, 0, sizeof(*e));
	snprintf(e->name, sizeof(e->name), "%s", name);
	e->root.func = ROOT;
	e->proot.func = ROOT;
	return (e);
}

/*
 * The kernel's symbols name only a kernel-mode sample's upper-half
 * addresses: a user-mode one's are the process's, whatever --elf names.
 */
const struct vs_sym *
vs_profile_sym(const struct vs_profile *p, uint64_t pc, bool leaf, bool user,
    uint64_t *off, bool *kernel)
{
	const struct vs_sym *s = NULL;
	uint64_t at = leaf ? pc : pc - 1, start = 0;

	*kernel = false;
	if (p->ksyms != NULL && !user && at >= VS_KERNEL_HALF &&
	    (s = vs_ksyms_find(p->ksyms, at, &start)) != NULL)
		*kernel = true;
	else if (p->syms != NULL && (s = vs_symtab_find(p->syms, at, NULL)) != NULL)
		start = s->addr;
	*off = pc - start;
	return (s);
}

void
vs_profile_format(const struct vs_profile *p, uint64_t pc, bool user, char *buf,
    size_t len)
{
	const struct vs_sym *s;
	uint64_t off;
	bool kernel;

	buf[0] = '\0';
	if ((s = vs_profile_sym(p, pc, true, user, &off, &kernel)) == NULL)
		return;
	if (off != 0)
		snprintf(buf, len, "%s+%#" PRIx64, s->name, off);
	else
		snprintf(buf, len, "%s", s->name);
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
		e->funcs = grow(e->funcs, &e->capfuncs, e->nfuncs, sizeof(*e->funcs));
		memset(&e->funcs[e->nfuncs], 0, sizeof(e->funcs[0]));
		if ((e->funcs[e->nfuncs].name = strdup(name)) == NULL)
			oom();
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
		oom();
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
		e->edges = grow(e->edges, &e->capedges, e->nedges, sizeof(*e->edges));
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
	e->addrs = grow(e->addrs, &e->capaddrs, e->naddrs, sizeof(*e->addrs));
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
	e->cpus = grow(e->cpus, &e->capcpus, e->ncpus, sizeof(*e->cpus));
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
	e->pst = grow(e->pst, &e->cappst, e->npst, sizeof(*e->pst));
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
		e->stacks = grow(e->stacks, &e->capstacks, e->nstacks, sizeof(*e->stacks));
		s = &e->stacks[e->nstacks];
		s->npc = npc;
		s->count = 0;
		s->user = user;
		if ((s->pc = malloc(npc * sizeof(*pc))) == NULL ||
		    (s->func = malloc(npc * sizeof(*s->func))) == NULL)
			oom();
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
 * once the log is read (funcs()), when the kernel's slide is known.
 */
static void
add_sample(struct vs_profile *p, const struct vpmu_pmclog_ev *ev)
{
	uint32_t cpu = VPMU_PMCLOG_CPUFLAGS_CPU(ev->u.callchain.cpuflags);
	int pi = pmc_index(p, ev->u.callchain.pmcid);
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
		p->samples = grow(p->samples, &p->capsamples, p->nsamples,
		    sizeof(*p->samples));
		p->samples[p->nsamples++] = (struct vs_sample){ .tsc = ev->tsc,
		    .pid = ev->u.callchain.pid, .tid = ev->u.callchain.tid, .cpu = cpu,
		    .ev = (uint32_t)(e - p->ev), .stack = k, .user = user };
	}
	count_addr(e, ev->u.callchain.pc[0], user);
}

static void	proc_label(const struct vs_profile *p, uint32_t pid, char *buf, size_t len);

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
	e->funcs = grow(e->funcs, &e->capfuncs, e->nfuncs, sizeof(*e->funcs));
	memset(&e->funcs[e->nfuncs], 0, sizeof(e->funcs[0]));
	if ((e->funcs[e->nfuncs].name = strdup(label)) == NULL)
		oom();
	e->funcs[e->nfuncs].proc = true;
	e->funcs[e->nfuncs].pid = pid;
	return ((uint32_t)e->nfuncs++);
}

const struct vs_node *
vs_evprof_tree(const struct vs_evprof *e)
{
	return (e->by_proc ? &e->proot : &e->root);
}

/*
 * The functions of e's chains, its call tree and call counts, from its
 * distinct chains: each as many times as it was sampled (in the order the
 * chains came, so the functions and the tree's nodes are in the order of
 * the samples that first reached them).
 */
static void
funcs(const struct vs_profile *p, struct vs_evprof *e)
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

/* ---- the record dump ------------------------------------------------------------ */

static void
dump_record(FILE *f, const struct vs_profile *p, const struct vpmu_pmclog_ev *ev)
{
	const char *tn = vpmu_pmclog_type_name(ev->type);
	char sym[160];
	uint32_t i;

	fprintf(f, "0x%08" PRIx64 " %-14s tsc=%" PRIu64, ev->offset, tn ? tn : "?", ev->tsc);
	switch (ev->type) {
	case VPMU_PMCLOG_INITIALIZE:
		fprintf(f, " version=%#010" PRIx32 " cputype=%#" PRIx32 " tsc_freq=%"
		    PRIu64 " time=%" PRId64 ".%09" PRId64 " cpuid=\"%s\"",
		    ev->u.initialize.version, ev->u.initialize.cputype,
		    ev->u.initialize.tsc_freq, ev->u.initialize.sec,
		    ev->u.initialize.nsec, ev->u.initialize.cpuid);
		break;
	case VPMU_PMCLOG_PMCALLOCATE:
		fprintf(f, " pmcid=%#" PRIx32 " event=%#" PRIx32 " flags=%#" PRIx32
		    " rate=%" PRIu64, ev->u.pmcallocate.pmcid, ev->u.pmcallocate.event,
		    ev->u.pmcallocate.flags, ev->u.pmcallocate.rate);
		break;
	case VPMU_PMCLOG_PMCALLOCATEDYN:
		fprintf(f, " pmcid=%#" PRIx32 " event=%#" PRIx32 " flags=%#" PRIx32
		    " name=\"%s\"", ev->u.pmcallocatedyn.pmcid,
		    ev->u.pmcallocatedyn.event, ev->u.pmcallocatedyn.flags,
		    ev->u.pmcallocatedyn.evname);
		break;
	case VPMU_PMCLOG_PMCATTACH:
		fprintf(f, " pmcid=%#" PRIx32 " pid=%" PRIu32 " path=\"%s\"",
		    ev->u.pmcattach.pmcid, ev->u.pmcattach.pid, ev->u.pmcattach.path);
		break;
	case VPMU_PMCLOG_PMCDETACH:
		fprintf(f, " pmcid=%#" PRIx32 " pid=%" PRIu32, ev->u.pmcdetach.pmcid,
		    ev->u.pmcdetach.pid);
		break;
	case VPMU_PMCLOG_PROCCSW:
		fprintf(f, " pmcid=%#" PRIx32 " pid=%" PRIu32 " tid=%" PRIu32
		    " value=%" PRIu64, ev->u.proccsw.pmcid, ev->u.proccsw.pid,
		    ev->u.proccsw.tid, ev->u.proccsw.value);
		break;
	case VPMU_PMCLOG_PROCEXEC:
		fprintf(f, " pid=%" PRIu32 " pmcid=%#" PRIx32 " path=\"%s\"",
		    ev->u.procexec.pid, ev->u.procexec.pmcid, ev->u.procexec.path);
		break;
	case VPMU_PMCLOG_PROCEXIT:
		fprintf(f, " pmcid=%#" PRIx32 " pid=%" PRIu32 " value=%" PRIu64,
		    ev->u.procexit.pmcid, ev->u.procexit.pid, ev->u.procexit.value);
		break;
	case VPMU_PMCLOG_PROCFORK:
		fprintf(f, " oldpid=%" PRIu32 " newpid=%" PRIu32, ev->u.procfork.oldpid,
		    ev->u.procfork.newpid);
		break;
	case VPMU_PMCLOG_USERDATA:
		fprintf(f, " userdata=%#" PRIx32, ev->u.userdata.userdata);
		break;
	case VPMU_PMCLOG_PROC_CREATE:
		fprintf(f, " pid=%" PRIu32 " flags=%#" PRIx32 " pcomm=\"%.*s\"",
		    ev->u.proc_create.pid, ev->u.proc_create.flags,
		    (int)sizeof(ev->u.proc_create.pcomm), ev->u.proc_create.pcomm);
		break;
	case VPMU_PMCLOG_THR_CREATE:
		fprintf(f, " tid=%" PRIu32 " pid=%" PRIu32 " flags=%#" PRIx32
		    " tdname=\"%.*s\"", ev->u.thr_create.tid, ev->u.thr_create.pid,
		    ev->u.thr_create.flags, (int)sizeof(ev->u.thr_create.tdname),
		    ev->u.thr_create.tdname);
		break;
	case VPMU_PMCLOG_MAP_IN:
		fprintf(f, " pid=%" PRId32 " start=%#" PRIx64 " path=\"%s\"",
		    (int32_t)ev->u.map_in.pid, ev->u.map_in.start, ev->u.map_in.path);
		break;
	case VPMU_PMCLOG_CALLCHAIN:
		fprintf(f, " pid=%" PRIu32 " tid=%" PRIu32 " pmcid=%#" PRIx32
		    " cpu=%" PRIu32 " user=%" PRIu32 " npc=%" PRIu32,
		    ev->u.callchain.pid, ev->u.callchain.tid, ev->u.callchain.pmcid,
		    VPMU_PMCLOG_CPUFLAGS_CPU(ev->u.callchain.cpuflags),
		    VPMU_PMCLOG_CPUFLAGS_FLAGS(ev->u.callchain.cpuflags) &
		    VPMU_PMCLOG_CC_F_USERSPACE, ev->u.callchain.npc);
		for (i = 0; i < ev->u.callchain.npc; i++) {
			fprintf(f, "%s%#" PRIx64, i == 0 ? " pc=" : ",", ev->u.callchain.pc[i]);
			/* --elf's names only: the kernel's slide is known at the end */
			if (p->syms != NULL && p->syms->n != 0) {
				vs_symtab_format(p->syms, ev->u.callchain.pc[i], sym, sizeof(sym));
				fprintf(f, "[%s]", sym);
			}
		}
		break;
	default:
		break;
	}
	fputc('\n', f);
}

/* ---- reading ------------------------------------------------------------------------ */

/* One record into p. */
static void
add_record(struct vs_profile *p, const struct vpmu_pmclog_ev *ev, FILE *dump)
{
	char name[64];

	if (p->records == 0) {
		p->initialized = ev->type == VPMU_PMCLOG_INITIALIZE;
		p->tsc_first = ev->tsc;
	}
	if (ev->tsc > p->tsc_last)
		p->tsc_last = ev->tsc;
	p->records++;
	p->bytes += ev->len;
	if (ev->type < sizeof(p->by_type) / sizeof(p->by_type[0]))
		p->by_type[ev->type]++;
	if (dump != NULL)
		dump_record(dump, p, ev);
	switch (ev->type) {
	case VPMU_PMCLOG_INITIALIZE:
		p->version = ev->u.initialize.version;
		p->cputype = ev->u.initialize.cputype;
		p->tsc_freq = ev->u.initialize.tsc_freq;
		p->sec = ev->u.initialize.sec;
		p->nsec = ev->u.initialize.nsec;
		break;
	case VPMU_PMCLOG_PMCALLOCATEDYN:
		if (pmc_name(p, ev->u.pmcallocatedyn.pmcid) == NULL)
			vs_profile_name_pmc(p, ev->u.pmcallocatedyn.pmcid,
			    ev->u.pmcallocatedyn.evname);
		pmc_flags(p, ev->u.pmcallocatedyn.pmcid, ev->u.pmcallocatedyn.flags);
		break;
	case VPMU_PMCLOG_PMCALLOCATE:
		if (pmc_name(p, ev->u.pmcallocate.pmcid) == NULL) {
			snprintf(name, sizeof(name), "event %#" PRIx32,
			    ev->u.pmcallocate.event);
			vs_profile_name_pmc(p, ev->u.pmcallocate.pmcid, name);
		}
		pmc_flags(p, ev->u.pmcallocate.pmcid, ev->u.pmcallocate.flags);
		if (ev->u.pmcallocate.rate != 0)
			vs_profile_pmc_rate(p, ev->u.pmcallocate.pmcid,
			    ev->u.pmcallocate.rate);
		break;
	case VPMU_PMCLOG_PMCATTACH:
		proc_name(p, ev->u.pmcattach.pid, ev->u.pmcattach.path, true);
		break;
	case VPMU_PMCLOG_PROCEXEC:
		proc_name(p, ev->u.procexec.pid, ev->u.procexec.path, true);
		break;
	case VPMU_PMCLOG_PROC_CREATE:
		proc_name(p, ev->u.proc_create.pid, ev->u.proc_create.pcomm, false);
		break;
	case VPMU_PMCLOG_THR_CREATE:
		thread_name(p, ev->u.thr_create.tid, ev->u.thr_create.tdname);
		break;
	case VPMU_PMCLOG_MAP_IN:
	case VPMU_PMCLOG_USERDATA:
		image_record(p, ev);
		break;
	case VPMU_PMCLOG_CALLCHAIN:
		add_sample(p, ev);
		break;
	case VPMU_PMCLOG_DROPNOTIFY:
		p->drops++;
		break;
	default:
		break;
	}
}

/*
 * The next bytes of fd into the reader: > 0 fed, 0 at the end of the
 * input, -1 on a read error (errno).  A descriptor that would block is
 * waited for.
 */
static ssize_t
feed(vpmu_pmclog_reader *r, int fd, unsigned char *buf, size_t len)
{
	struct pollfd pfd = { .fd = fd, .events = POLLIN };
	ssize_t got;
	int err;

	for (;;) {
		if ((got = read(fd, buf, len)) > 0) {
			if ((err = vpmu_pmclog_feed(r, buf, (size_t)got)) != 0) {
				errno = err;
				return (-1);
			}
			return (got);
		}
		if (got == 0)
			return (0);
		if (errno == EINTR)
			continue;
		if (errno != EAGAIN && errno != EWOULDBLOCK)
			return (-1);
		(void)poll(&pfd, 1, -1);
	}
}

int
vs_profile_read(struct vs_profile *p, int fd, FILE *dump)
{
	enum { CHUNK = 64 * 1024 };
	struct vpmu_pmclog_ev *ev;
	vpmu_pmclog_reader *r;
	unsigned char *buf;
	uint64_t fed = 0, end = 0, last = 0;
	ssize_t got = 1;
	size_t i;
	int err, state, ret = 0;

	if ((ev = malloc(sizeof(*ev))) == NULL || (buf = malloc(CHUNK)) == NULL)
		oom();
	if ((err = vpmu_pmclog_open_buffer(&r)) != 0) {
		snprintf(p->error, sizeof(p->error), "vpmu_pmclog_open_buffer: %s",
		    strerror(err));
		free(buf);
		free(ev);
		return (-1);
	}
	/* EOF (after CLOSELOG) and REQUIRE_DATA both mean: feed it, if there is more. */
	for (;;) {
		state = vpmu_pmclog_read(r, ev);
		if (state == VPMU_PMCLOG_OK) {
			end = ev->offset + ev->len;
			last = ev->type;
			add_record(p, ev, dump);
			continue;
		}
		if (state == VPMU_PMCLOG_ERROR || got == 0)
			break;
		if ((got = feed(r, fd, buf, CHUNK)) < 0)
			break;
		fed += (uint64_t)got;
	}
	p->closed = last == VPMU_PMCLOG_CLOSELOG;
	if (state == VPMU_PMCLOG_ERROR) {
		snprintf(p->error, sizeof(p->error), "%s", vpmu_pmclog_error(r));
		ret = -1;
	} else if (got < 0) {
		snprintf(p->error, sizeof(p->error), "offset %" PRIu64 ": read: %s", fed,
		    strerror(errno));
		ret = -1;
	} else if (fed > end) {
		/* The reader holds a record cut short: say that there was one. */
		snprintf(p->error, sizeof(p->error), "the log ends inside a record: "
		    "%" PRIu64 " bytes after offset %" PRIu64 " are not a whole record",
		    fed - end, end);
		ret = -1;
	}
	vpmu_pmclog_close(r);
	free(buf);
	free(ev);
	if (p->ksyms != NULL)
		vs_ksyms_settle(p->ksyms, p);
	for (i = 0; i < p->nev; i++)
		funcs(p, &p->ev[i]);
	return (ret);
}

const struct vs_evprof *
vs_profile_event(const struct vs_profile *p, const char *name)
{
	size_t i;

	for (i = 0; i < p->nev; i++)
		if (name != NULL ? strcmp(p->ev[i].name, name) == 0 : p->ev[i].samples != 0)
			return (&p->ev[i]);
	return (NULL);
}

/* ---- the report ------------------------------------------------------------------------ */

static const struct vs_evprof *sort_ev;		/* for the qsort comparators */

static int
func_cmp(const void *a, const void *b)
{
	const struct vs_func *x = &sort_ev->funcs[*(const uint32_t *)a];
	const struct vs_func *y = &sort_ev->funcs[*(const uint32_t *)b];

	if (x->self != y->self)
		return (x->self > y->self ? -1 : 1);
	if (x->total != y->total)
		return (x->total > y->total ? -1 : 1);
	return (strcmp(x->name, y->name));
}

static int
addr_cmp(const void *a, const void *b)
{
	const struct vs_addr *x = a, *y = b;

	if (x->count != y->count)
		return (x->count > y->count ? -1 : 1);
	return (x->pc < y->pc ? -1 : x->pc > y->pc);
}

static double
pct(uint64_t n, uint64_t of)
{
	return (of != 0 ? 100.0 * (double)n / (double)of : 0.0);
}

static int
cpu_cmp(const void *a, const void *b)
{
	const struct vs_cpucount *x = a, *y = b;

	return (x->cpu < y->cpu ? -1 : x->cpu > y->cpu);
}

/* The samples of each vCPU, by the CPU field of the records. */
static void
report_cpus(FILE *f, const struct vs_evprof *e)
{
	struct vs_cpucount *c;
	size_t i;

	if ((c = malloc(e->ncpus * sizeof(*c))) == NULL)
		oom();
	memcpy(c, e->cpus, e->ncpus * sizeof(*c));
	qsort(c, e->ncpus, sizeof(*c), cpu_cmp);
	for (i = 0; i < e->ncpus; i++)
		fprintf(f, "  vCPU %" PRIu32 ": %" PRIu64 " sample%s (%.2f%%)\n", c[i].cpu,
		    c[i].samples, c[i].samples == 1 ? "" : "s", pct(c[i].samples, e->samples));
	free(c);
}

/* Processes by their samples, most first (then by pid), for report_procs(). */
static int
proc_node_cmp(const void *a, const void *b)
{
	const struct vs_node *x = *(const struct vs_node *const *)a;
	const struct vs_node *y = *(const struct vs_node *const *)b;
	uint32_t xp = sort_ev->funcs[x->func].pid, yp = sort_ev->funcs[y->func].pid;

	if (x->total != y->total)
		return (x->total > y->total ? -1 : 1);
	return (xp < yp ? -1 : xp > yp);
}

/* The samples under n whose leaf each function is, added to self[func]. */
static void
leaf_self(const struct vs_node *n, uint64_t *self)
{
	const struct vs_node *c;

	self[n->func] += n->self;
	for (c = n->child; c != NULL; c = c->next)
		leaf_self(c, self);
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

/*
 * The samples by process (proot's processes), as perf report's comm
 * column groups them, each with its three hottest functions (the leaf's):
 * when the log names processes or its samples come from more than one.
 */
static void
report_procs(FILE *f, const struct vs_profile *p, const struct vs_evprof *e, unsigned top)
{
	const struct vs_node **procs, *c;
	uint64_t *self;
	size_t n = 0, i, k, m, best, shown;

	for (c = e->proot.child; c != NULL; c = c->next)
		n++;
	if (n < 2 && p->nprocs == 0)
		return;
	if ((procs = malloc(n * sizeof(*procs))) == NULL ||
	    (self = malloc(e->nfuncs * sizeof(*self))) == NULL)
		oom();
	for (n = 0, c = e->proot.child; c != NULL; c = c->next)
		procs[n++] = c;
	sort_ev = e;
	qsort(procs, n, sizeof(*procs), proc_node_cmp);
	shown = top != 0 && top < n ? top : n;
	fprintf(f, "  by process (%zu):\n", n);
	for (i = 0; i < shown; i++) {
		fprintf(f, "  %7.2f %9" PRIu64 "  %s\n", pct(procs[i]->total, e->samples),
		    procs[i]->total, e->funcs[procs[i]->func].name);
		memset(self, 0, e->nfuncs * sizeof(*self));
		leaf_self(procs[i], self);
		for (k = 0; k < 3; k++) {	/* the three largest, in order */
			for (best = e->nfuncs, m = 0; m < e->nfuncs; m++)
				if (self[m] != 0 && (best == e->nfuncs || self[m] > self[best]))
					best = m;
			if (best == e->nfuncs)
				break;
			fprintf(f, "  %7.2f %9" PRIu64 "      %s\n", pct(self[best], e->samples),
			    self[best], e->funcs[best].name);
			self[best] = 0;
		}
	}
	if (shown < n)
		fprintf(f, "  (%zu more processes)\n", n - shown);
	free(self);
	free(procs);
}

static void
report_event(FILE *f, const struct vs_profile *p, const struct vs_evprof *e, unsigned top)
{
	struct vs_addr *addrs;
	uint32_t *order;
	char sym[160];
	size_t i, n, nf;

	fprintf(f, "\nevent %s: %" PRIu64 " samples (%" PRIu64 " in user mode)\n",
	    e->name, e->samples, e->user);
	if (e->samples == 0)
		return;
	report_cpus(f, e);
	report_procs(f, p, e, top);
	if ((order = malloc(e->nfuncs * sizeof(*order))) == NULL)
		oom();
	for (nf = 0, i = 0; i < e->nfuncs; i++)
		if (!e->funcs[i].proc)	/* proot's processes: not functions */
			order[nf++] = (uint32_t)i;
	sort_ev = e;
	qsort(order, nf, sizeof(*order), func_cmp);
	fprintf(f, "  %7s %9s %7s %9s  %s\n", "self%", "self", "total%", "total",
	    "function");
	n = top != 0 && top < nf ? top : nf;
	for (i = 0; i < n; i++) {
		const struct vs_func *fn = &e->funcs[order[i]];

		fprintf(f, "  %7.2f %9" PRIu64 " %7.2f %9" PRIu64 "  %s\n",
		    pct(fn->self, e->samples), fn->self, pct(fn->total, e->samples),
		    fn->total, fn->name);
	}
	if (n < nf)
		fprintf(f, "  (%zu more functions)\n", nf - n);
	free(order);

	/* Where in the functions: the hottest sampled instructions. */
	if ((addrs = malloc(e->naddrs * sizeof(*addrs))) == NULL)
		oom();
	memcpy(addrs, e->addrs, e->naddrs * sizeof(*addrs));
	qsort(addrs, e->naddrs, sizeof(*addrs), addr_cmp);
	n = e->naddrs < 10 ? e->naddrs : 10;
	fprintf(f, "  hottest addresses:\n");
	for (i = 0; i < n; i++) {
		vs_profile_format(p, addrs[i].pc, addrs[i].user, sym, sizeof(sym));
		fprintf(f, "  %7.2f %9" PRIu64 "  %#-18" PRIx64 " %s\n",
		    pct(addrs[i].count, e->samples), addrs[i].count, addrs[i].pc, sym);
	}
	free(addrs);
}

void
vs_image_id_format(const struct vs_image_id *id, char *buf, size_t len)
{
	size_t i, at;

	at = (size_t)snprintf(buf, len, "%s ", id->kind == 'B' ? "build-id" :
	    id->kind == 'H' ? "file hash" : id->kind == 'F' ? "file hash (no ELF)" :
	    "no identity");
	for (i = 0; i < id->len && at + 2 < len; i++, at += 2)
		snprintf(buf + at, len - at, "%02x", id->id[i]);
}

void
vs_report(FILE *f, const struct vs_profile *p, unsigned top)
{
	static const char *const nosym = " (no symbols: give --elf)";
	char id[160];
	size_t i;

	fprintf(f, "vpmustat: %" PRIu64 " records, %" PRIu64 " bytes; %s first, "
	    "%s last; %" PRIu64 " CALLCHAIN, %" PRIu64 " DROPNOTIFY%s\n", p->records,
	    p->bytes, p->initialized ? "INITIALIZE" : "no INITIALIZE",
	    p->closed ? "CLOSELOG" : "no CLOSELOG",
	    p->by_type[VPMU_PMCLOG_CALLCHAIN], p->drops,
	    (p->syms == NULL || p->syms->n == 0) && p->ksyms == NULL ? nosym : "");
	if (p->ksyms != NULL)
		fprintf(f, "%s\n", p->ksyms->note);
	if (p->ksyms != NULL && p->ksyms->kmods_note[0] != '\0')
		fprintf(f, "%s\n", p->ksyms->kmods_note);
	if (p->has_image) {
		vs_image_id_format(&p->image_id, id, sizeof(id));
		fprintf(f, "vpmustat: the samples are of %s, at %#" PRIx64 ", %s\n", p->image,
		    p->image_start, id);
	}
	if (p->cpus != NULL)
		fprintf(f, "vpmustat: -c %s: %" PRIu64 " sample%s of other vCPUs left out\n",
		    p->cpus->spec, p->filtered, p->filtered == 1 ? "" : "s");
	if (p->cut != 0)
		fprintf(f, "vpmustat: %" PRIu64 " call chain%s cut at a return address "
		    "outside the ELF's code\n", p->cut, p->cut == 1 ? "" : "s");
	if (p->nev == 0)
		fprintf(f, "no samples in the log\n");
	for (i = 0; i < p->nev; i++)
		report_event(f, p, &p->ev[i], top);
}

/* ---- the call graph ----------------------------------------------------------------------- */

static int
edge_cmp(const void *a, const void *b)
{
	const struct vs_edge *x = a, *y = b;
	const struct vs_func *cx = &sort_ev->funcs[x->caller], *cy = &sort_ev->funcs[y->caller];
	int c;

	/* Callers by their total, then callees by the call's count. */
	if (cx->total != cy->total)
		return (cx->total > cy->total ? -1 : 1);
	if ((c = strcmp(cx->name, cy->name)) != 0)
		return (c);
	if (x->count != y->count)
		return (x->count > y->count ? -1 : 1);
	return (strcmp(sort_ev->funcs[x->callee].name, sort_ev->funcs[y->callee].name));
}

void
vs_callgraph(FILE *f, const struct vs_evprof *e)
{
	struct vs_edge *edges;
	size_t i;

	fprintf(f, "# vpmustat call graph: event %s, %" PRIu64 " samples\n", e->name,
	    e->samples);
	fprintf(f, "# caller -> callee: samples with the call on the stack, %% of all;"
	    " self: samples in the function itself\n");
	/* No edge (one-frame chains, or no samples): e->edges may be NULL. */
	if (e->nedges == 0)
		return;
	if ((edges = malloc(e->nedges * sizeof(*edges))) == NULL)
		oom();
	memcpy(edges, e->edges, e->nedges * sizeof(*edges));
	sort_ev = e;
	qsort(edges, e->nedges, sizeof(*edges), edge_cmp);
	for (i = 0; i < e->nedges; i++) {
		const struct vs_func *caller = &e->funcs[edges[i].caller];

		if (i == 0 || edges[i].caller != edges[i - 1].caller)
			fprintf(f, "%s%s  total %" PRIu64 " (%.2f%%)  self %" PRIu64
			    " (%.2f%%)\n", i == 0 ? "" : "\n", caller->name,
			    caller->total, pct(caller->total, e->samples), caller->self,
			    pct(caller->self, e->samples));
		fprintf(f, "  -> %-40s %9" PRIu64 " %7.2f%%\n",
		    e->funcs[edges[i].callee].name, edges[i].count,
		    pct(edges[i].count, e->samples));
	}
	free(edges);
}

/* ---- folded stacks -------------------------------------------------------------------------- */

static int
node_cmp(const void *a, const void *b)
{
	const struct vs_node *x = *(const struct vs_node *const *)a;
	const struct vs_node *y = *(const struct vs_node *const *)b;

	return (strcmp(sort_ev->funcs[x->func].name, sort_ev->funcs[y->func].name));
}

size_t
vs_children(const struct vs_evprof *e, const struct vs_node *n, const struct vs_node ***out)
{
	const struct vs_node *c, **v;
	size_t k = 0;

	for (c = n->child; c != NULL; c = c->next)
		k++;
	if ((v = malloc((k + 1) * sizeof(*v))) == NULL)
		oom();
	k = 0;
	for (c = n->child; c != NULL; c = c->next)
		v[k++] = c;
	sort_ev = e;
	qsort(v, k, sizeof(*v), node_cmp);
	*out = v;
	return (k);
}

/* path[0 .. depth) holds the frames above n, root first. */
static void
folded_node(FILE *f, const struct vs_evprof *e, const struct vs_node *n, uint32_t *path,
    unsigned depth)
{
	const struct vs_node **kids;
	size_t i, k;

	if (n->func != ROOT) {
		if (depth == VS_TREE_DEPTH_MAX)
			return;
		path[depth++] = n->func;
	}
	if (n->self != 0 && depth != 0) {
		for (i = 0; i < depth; i++)
			fprintf(f, "%s%s", i ? ";" : "", e->funcs[path[i]].name);
		fprintf(f, " %" PRIu64 "\n", n->self);
	}
	k = vs_children(e, n, &kids);
	for (i = 0; i < k; i++)
		folded_node(f, e, kids[i], path, depth);
	free(kids);
}

void
vs_folded(FILE *f, const struct vs_evprof *e)
{
	uint32_t path[VS_TREE_DEPTH_MAX];

	folded_node(f, e, vs_evprof_tree(e), path, 0);
}
