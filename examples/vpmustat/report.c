/*
 * report.c -- a log's profiles as text: the top-functions report of every
 * event (the log's summary, the samples by vCPU and by process, the
 * functions by self and total, the hottest addresses), the call graph
 * (-G), folded stacks (--folded); and a tree's children in name order,
 * which the folded stacks and the flame graph (flame.c) walk.
 */
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

#include "profile_internal.h"

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
		vs_oom();
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
		vs_oom();
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
		vs_oom();
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
		vs_oom();
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
		vs_oom();
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
		vs_oom();
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

	if (n->func != VS_ROOT) {
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
