/*
 * profile.c -- what a pmclog log holds, as vpmustat keeps it: the
 * profile made and freed, each record into it (its counts by type, the
 * INITIALIZE record's header, the PMCs' names, flags and rates, the names
 * of processes and threads, the image the run recorded; the samples go to
 * samples.c), and a PC's symbol, from the kernel's symbols or the ELF's.
 *
 * The log is read in logread.c, the samples counted in samples.c, the
 * text outputs made in report.c; map.c has the hash map the indexes use.
 */
#include <inttypes.h>
#include <limits.h>
#include <stdlib.h>
#include <string.h>

#include <vpmu/hwpmc.h>

#include "profile_internal.h"

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
		*names = vs_grow(*names, cap, *n, sizeof(**names));
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

int
vs_profile_pmc_index(const struct vs_profile *p, uint32_t id)
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
	int i = vs_profile_pmc_index(p, id);

	return (i >= 0 ? p->pmcs[i].name : NULL);
}

/* A PMC's allocation flags, from its PMCALLOCATE(DYN) record. */
static void
pmc_flags(struct vs_profile *p, uint32_t id, uint32_t flags)
{
	int i = vs_profile_pmc_index(p, id);

	if (i >= 0)
		p->pmcs[i].flags = flags;
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

const struct vs_node *
vs_evprof_tree(const struct vs_evprof *e)
{
	return (e->by_proc ? &e->proot : &e->root);
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

/* One record into p. */
void
vs_profile_add_record(struct vs_profile *p, const struct vpmu_pmclog_ev *ev)
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
		vs_profile_add_sample(p, ev);
		break;
	case VPMU_PMCLOG_DROPNOTIFY:
		p->drops++;
		break;
	default:
		break;
	}
}
