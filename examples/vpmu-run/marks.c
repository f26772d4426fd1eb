/*
 * marks.c -- port 0xf6: a guest's marks (vpmu-run(1), DEVICES).
 *
 * An OUT of V to port 0xf6 takes mark V: for every vCPU, every counter the
 * guest used, its name, its event and the events counted into it over its
 * life (vpmu_counter_info.counted), as the counters stand at the OUT; the
 * report lists them (THE REPORT).  The difference of two marks is what a
 * counter counted in between, whatever the guest wrote to it: a host-side
 * count of a stretch of guest work (test/linux's perf checks).  Other
 * vCPUs' counters are as of their last exit.  At most VR_MARK_ROWS rows
 * are kept; marks past them are counted as dropped.
 */
#include <stdio.h>
#include <stdlib.h>
#include <inttypes.h>

#include "vpmu-run.h"

#define VR_MARK_ROWS	65536

struct vr_mark_row {
	uint32_t mark;
	uint32_t cpu;
	uint64_t counted;
	char	 counter[32];
	char	 event[40];
};

void
vr_mark_take(struct vr_vcpu *c, uint32_t mark)
{
	struct vr_vm *vm = c->vm;
	struct vpmu_counter_info *ci;
	struct vr_mark_row *r;
	unsigned cpu, i, n;

	pthread_mutex_lock(&vm->lock);
	vm->marks_taken++;
	/* One table for every mark, under the lock: none allocated per OUT. */
	if (vm->mark_ci == NULL &&
	    (vm->mark_ci = calloc(VR_MAX_COUNTERS, sizeof(*ci))) == NULL) {
		vm->marks_dropped++;
		goto out;
	}
	ci = vm->mark_ci;
	for (cpu = 0; cpu < vm->nvcpus; cpu++) {
		n = VR_MAX_COUNTERS;
		if (vpmu_vcpu_get_counters(vm->pmu, cpu, ci, &n) != 0)
			continue;
		for (i = 0; i < n; i++) {
			if (!ci[i].used)
				continue;
			if (vm->nmark_rows == VR_MARK_ROWS) {
				vm->marks_dropped++;
				goto out;
			}
			if (vm->nmark_rows % 256 == 0) {
				r = realloc(vm->mark_rows, (vm->nmark_rows + 256) * sizeof(*r));
				if (r == NULL) {
					vm->marks_dropped++;
					goto out;
				}
				vm->mark_rows = r;
			}
			r = &vm->mark_rows[vm->nmark_rows++];
			r->mark = mark;
			r->cpu = cpu;
			r->counted = ci[i].counted;
			snprintf(r->counter, sizeof(r->counter), "%s", ci[i].name);
			snprintf(r->event, sizeof(r->event), "%s", ci[i].event[0] ? ci[i].event : "-");
		}
	}
out:
	pthread_mutex_unlock(&vm->lock);
	if (vm->mark_hook != NULL)
		vm->mark_hook(vm->mark_arg, c, mark);
}

void
vr_marks_report(FILE *f, struct vr_vm *vm)
{
	size_t i;

	if (vm->marks_taken == 0)
		return;
	fprintf(f, "marks (port 0xf6): %" PRIu64 " taken, %" PRIu64 " dropped\n",
	    vm->marks_taken, vm->marks_dropped);
	fprintf(f, "  %-10s %-5s %-16s %-20s %20s\n", "mark", "vCPU", "counter", "event",
	    "counted");
	for (i = 0; i < vm->nmark_rows; i++)
		fprintf(f, "  %-10" PRIu32 " %-5" PRIu32 " %-16s %-20s %20" PRIu64 "\n",
		    vm->mark_rows[i].mark, vm->mark_rows[i].cpu, vm->mark_rows[i].counter,
		    vm->mark_rows[i].event, vm->mark_rows[i].counted);
}

void
vr_marks_free(struct vr_vm *vm)
{
	free(vm->mark_rows);
	vm->mark_rows = NULL;
	free(vm->mark_ci);
	vm->mark_ci = NULL;
	vm->nmark_rows = 0;
}

void
vr_marks_records(struct vr_rec *r, struct vr_vm *vm)
{
	const struct vr_mark_row *m;
	size_t i;

	for (i = 0; i < vm->nmark_rows; i++) {
		m = &vm->mark_rows[i];
		vr_rec_begin(r, "mark");
		vr_rec_u64(r, "mark", m->mark);
		vr_rec_u64(r, "vcpu", m->cpu);
		vr_rec_str(r, "counter", m->counter);
		vr_rec_str(r, "event", strcmp(m->event, "-") != 0 ? m->event : NULL);
		vr_rec_u64(r, "counted", m->counted);
		vr_rec_end(r);
	}
}
