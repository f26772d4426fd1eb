/*
 * fastpage.c -- the guest's side of the fast-read page (vpmu_fastpage(4)):
 * registering it, and the sequence-lock read.  Freestanding.
 */
#include <stddef.h>

#include <vpmu-guest/pv.h>
#include <vpmu-guest/fastpage.h>

int
vpmu_fast_read(const volatile struct vpmu_fastpage *pg, unsigned slot,
    uint64_t *value, struct vpmu_fast_value *v)
{
	const volatile struct vpmu_fastpage_slot *s;
	uint32_t s1, s2, flags, pmcid = 0, fn = 0, tries;
	uint64_t val, en = 0, run = 0;

	if (pg->hdr.magic != VPMU_FP_MAGIC || pg->hdr.version != VPMU_FP_VERSION ||
	    slot >= VPMU_FP_NSLOTS)
		return (VPMU_PV_EINVAL);
	s = &pg->slot[slot];
	for (tries = 0; tries < VPMU_FP_MAX_RETRIES; tries++) {
		/* Acquire: nothing below is read before seq. */
		s1 = __atomic_load_n(&s->seq, __ATOMIC_ACQUIRE);
		if (s1 & 1) {
			__asm__ volatile("pause" ::: "memory");
			continue;
		}
		val = __atomic_load_n(&s->value, __ATOMIC_RELAXED);
		flags = __atomic_load_n(&s->flags, __ATOMIC_RELAXED);
		if (v != NULL) {
			en = __atomic_load_n(&s->enabled, __ATOMIC_RELAXED);
			run = __atomic_load_n(&s->running, __ATOMIC_RELAXED);
			pmcid = __atomic_load_n(&s->pmcid, __ATOMIC_RELAXED);
			fn = __atomic_load_n(&s->fn, __ATOMIC_RELAXED);
		}
		/* ...and everything above is read before seq again. */
		__atomic_thread_fence(__ATOMIC_ACQUIRE);
		s2 = __atomic_load_n(&s->seq, __ATOMIC_RELAXED);
		if (s1 != s2)
			continue;
		if (!(flags & VPMU_FP_VALID))
			return (VPMU_PV_ENXIO);
		*value = val;
		if (v != NULL) {
			v->value = val;
			v->enabled = en;
			v->running = run;
			v->pmcid = pmcid;
			v->flags = flags;
			v->fn = fn;
			v->retries = tries;
		}
		return (0);
	}
	return (VPMU_PV_EAGAIN);
}

int
vpmu_fast_set(volatile struct vpmu_fastpage *pg)
{
	struct vpmu_pv_fastpage a;

	a.gpa = vpmu_pv_virt_to_phys((const void *)pg);
	return (vpmu_pv_call(VPMU_PV_OP_FASTPAGE_SET, &a, sizeof(a), NULL));
}

int
vpmu_fast_clear(void)
{
	return (vpmu_pv_call(VPMU_PV_OP_FASTPAGE_CLEAR, NULL, 0, NULL));
}
