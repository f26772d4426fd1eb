/*
 * vm.c -- a VM's virtual PMU: creation from a config, vCPUs, classes and
 * rows, tunables on a live VM, owner notifications, teardown.
 */
#include <errno.h>
#include <signal.h>
#include <string.h>

#include "internal.h"
#include <vpmu/pv.h>

/* Capabilities of each class, as FreeBSD's drivers advertise them. */
static const struct {
	uint32_t cls;
	uint32_t caps;
	const char *prefix;
} classtab[] = {
	{ VPMU_CLASS_IAP, VPMU_CAP_INTERRUPT | VPMU_CAP_USER | VPMU_CAP_SYSTEM |
	    VPMU_CAP_EDGE | VPMU_CAP_THRESHOLD | VPMU_CAP_READ | VPMU_CAP_WRITE |
	    VPMU_CAP_INVERT | VPMU_CAP_QUALIFIER | VPMU_CAP_PRECISE, "IAP" },
	{ VPMU_CLASS_IAF, VPMU_CAP_INTERRUPT | VPMU_CAP_USER | VPMU_CAP_SYSTEM |
	    VPMU_CAP_READ | VPMU_CAP_WRITE, "IAF" },
	{ VPMU_CLASS_K8, VPMU_CAP_INTERRUPT | VPMU_CAP_USER | VPMU_CAP_SYSTEM |
	    VPMU_CAP_EDGE | VPMU_CAP_THRESHOLD | VPMU_CAP_READ | VPMU_CAP_WRITE |
	    VPMU_CAP_INVERT | VPMU_CAP_QUALIFIER, "K8" },
	{ VPMU_CLASS_PV, VPMU_CAP_INTERRUPT | VPMU_CAP_USER | VPMU_CAP_SYSTEM |
	    VPMU_CAP_EDGE | VPMU_CAP_THRESHOLD | VPMU_CAP_READ | VPMU_CAP_WRITE |
	    VPMU_CAP_INVERT, "PV" },
};

static void
class_setup(struct vpmu_vm *vm, const struct vpmu_class_cfg *cc)
{
	struct vpmu_classdesc *c = &vm->classes[vm->nclass++];
	size_t i;

	c->cls = cc->cls;
	c->rows = cc->rows;
	c->width = cc->width;
	c->ri_base = vm->npmc;
	for (i = 0; i < VPMU_ARRAY_SIZE(classtab); i++)
		if (classtab[i].cls == cc->cls) {
			c->caps = classtab[i].caps;
			c->prefix = classtab[i].prefix;
		}
	vm->npmc += cc->rows;
	if (c->cls == VPMU_CLASS_IAP || c->cls == VPMU_CLASS_IAF)
		vm->cputype = VPMU_CPUTYPE_INTEL_CORE;
	else if (c->cls == VPMU_CLASS_K8)
		vm->cputype = VPMU_CPUTYPE_AMD_K8;
}

int
vpmu__vm_create(const vpmu_config *cfg, const struct vpmu__layer *const *above,
    unsigned nabove, vpmu_vm **vmp)
{
	struct vpmu_vm *vm;
	unsigned i, rows = 0;
	int error;

	if (vmp == NULL)
		return (EINVAL);
	*vmp = NULL;
	if (cfg == NULL || cfg->source == NULL)
		return (EINVAL);
	for (i = 0; i < cfg->nclass; i++)
		rows += cfg->classes[i].rows;
	if (rows == 0 || rows > VPMU_MAX_ROWS)
		return (EINVAL);

	if ((vm = calloc(1, sizeof(*vm))) == NULL)
		return (ENOMEM);
	pthread_mutex_init(&vm->drain_mtx, NULL);
	pthread_mutex_init(&vm->sweeper_mtx, NULL);
	pthread_mutex_init(&vm->ask_mtx, NULL);
	vm->tun = cfg->tun;
	vm->log_fn = cfg->log_fn;
	vm->log_arg = cfg->log_arg;
	vm->notify_fn = cfg->notify_fn;
	vm->notify_arg = cfg->notify_arg;
	vm->pv_port = cfg->pv_port;
	vpmu__tunables_validate(&vm->tun, vm->log_fn, vm->log_arg);

	/* Rows: the guest-visible classes first, the paravirtual class last. */
	vm->cputype = VPMU_CPUTYPE_GENERIC;
	for (i = 0; i < cfg->nclass; i++)
		if (cfg->classes[i].cls != VPMU_CLASS_PV)
			class_setup(vm, &cfg->classes[i]);
	for (i = 0; i < cfg->nclass; i++)
		if (cfg->classes[i].cls == VPMU_CLASS_PV)
			class_setup(vm, &cfg->classes[i]);

	error = ENOMEM;
	vm->nvcpus = cfg->nvcpus;
	if ((vm->disp = calloc(vm->npmc, sizeof(*vm->disp))) == NULL ||
	    (vm->vcpu = calloc(vm->nvcpus, sizeof(*vm->vcpu))) == NULL)
		goto err;
	for (i = 0; i < vm->nvcpus; i++) {
		struct vpmu_vcpu *v = &vm->vcpu[i];

		v->online = true;
		if ((v->loaded = calloc(vm->npmc, sizeof(*v->loaded))) == NULL ||
		    (v->sys = calloc(vm->npmc, sizeof(*v->sys))) == NULL ||
		    (v->disabled = calloc(vm->npmc, sizeof(*v->disabled))) == NULL)
			goto err;
	}
	if (vpmu__rings_init(vm) != 0)
		goto err;
	vm->proc_hash_size = (unsigned)vm->tun.v[VPMU_T_HASHSIZE];
	if ((vm->proc_hash = calloc(vm->proc_hash_size,
	    sizeof(*vm->proc_hash))) == NULL)
		goto err;

	vm->src = cfg->source;
	if ((error = vm->src->init(&vm->src_state, vm->nvcpus,
	    cfg->source_arg)) != 0) {
		vm->src = NULL;
		goto err;
	}
	/* The smaller of the configured cap and the source's own capacity. */
	vm->mux_interval = cfg->mux_interval != 0 ? cfg->mux_interval : 4000000;
	vm->pmu_mode = cfg->pmu_mode;
	vm->uncounted_ok = cfg->uncounted_ok;
	vm->capacity = cfg->capacity;
	if (vm->src->capacity != NULL) {
		unsigned c = vm->src->capacity(vm->src_state);

		if (c != 0 && (vm->capacity == 0 || c < vm->capacity))
			vm->capacity = c;
	}
	/* A source that follows the guest reads its memory and knows its model. */
	vpmu__gmem_init(&vm->mem);
	if (vm->src->exec_memory != NULL)
		vm->src->exec_memory(vm->src_state, &vm->mem);
	if (vm->src->model != NULL)
		vm->src->model(vm->src_state, &cfg->model);
	if ((error = vpmu__layers_create(vm, cfg, above, nabove)) != 0)
		goto err;
	*vmp = vm;
	return (0);
err:
	vpmu_vm_destroy(vm);
	return (error);
}

/*
 * Tear down: every owner is told (hwpmc sends SIGBUS when the driver
 * unloads), then every PMC is released and every process forgotten.
 */
void
vpmu_vm_destroy(vpmu_vm *vm)
{
	struct vpmu_log *closing = NULL;
	struct vpmu_owner *o;
	unsigned i;

	if (vm == NULL)
		return;
	vpmu__sweeper_stop(vm);			/* the rings swept into the logs */
	vpmu__layers_destroy(vm);		/* the guest's devices, pages, PMU */
	vpmu__vm_lock(vm);
	for (o = vm->owners; o != NULL; o = o->next) {
		if (o->pid != 0)		/* 0: the guest's own MSR counters */
			vpmu__notify(vm, o->pid, SIGBUS);
		vpmu__log_defer(&closing, vpmu__log_detach(vm, o));	/* CLOSELOG */
	}
	/* All written, with the lock dropped: no lock across a writer's wait. */
	vpmu__vm_unlock(vm);
	vpmu__log_finish_all(closing);
	vpmu__vm_lock(vm);
	/* Releasing an owner's last PMC frees the owner: re-read the list. */
	while ((o = vm->owners) != NULL) {
		if (o->pmcs != NULL) {
			vpmu__pmc_release(vm, o->pmcs);
			continue;
		}
		vm->owners = o->next;		/* an owner kept only by its log (closed) */
		vpmu__task_names_free(o);
		free(o);
	}
	if (vm->proc_hash != NULL)
		vpmu__procs_free(vm);
	vpmu__vm_unlock(vm);			/* the source's counters closed */
	vpmu__vm_lock(vm);
	if (vm->src != NULL)
		vm->src->fini(vm->src_state);
	if (vm->vcpu != NULL)
		for (i = 0; i < vm->nvcpus; i++) {
			free(vm->vcpu[i].act);
			free(vm->vcpu[i].loaded);
			free(vm->vcpu[i].sys);
			free(vm->vcpu[i].disabled);
		}
	vpmu__rings_fini(vm);
	free(vm->vcpu);
	free(vm->disp);
	free(vm->proc_hash);
	vpmu__vm_unlock(vm);
	pthread_mutex_destroy(&vm->drain_mtx);
	pthread_mutex_destroy(&vm->sweeper_mtx);
	pthread_mutex_destroy(&vm->ask_mtx);
	free(vm);
}

void
vpmu__vm_lock_wait(struct vpmu_vm *vm)
{
	unsigned spins = 0;

	while (!vpmu__vm_trylock(vm))
		vpmu__spin_wait(&spins);
}

int
vpmu__vm_unlock_work(struct vpmu_vm *vm)
{
	struct vpmu_hctr *closing;
	unsigned after;
	int error = 0;

	if (vm->nopening != 0)
		error = vpmu__hc_open(vm);
	closing = vm->closing;
	after = vm->after;
	vm->closing = NULL;
	vm->after = 0;
	vpmu__vm_release(vm);
	if (after & VPMU__AFTER_CLOSE)
		vpmu__hc_close_list(vm, closing);
	if (after & VPMU__AFTER_KICK)
		vpmu__sweeper_kick(vm);
	return (error);
}

int
vpmu_vm_get_tunable(const vpmu_vm *vm, const char *name, long *value)
{
	int id;

	if (vm == NULL || value == NULL || (id = vpmu__tunable_find(name)) < 0)
		return (EINVAL);
	/*
	 * No lock: a tunable is one long, and vpmu_vm_set_tunable() stores it
	 * atomically (under the lock, which orders it for the lock's holders).
	 */
	*value = __atomic_load_n(&vm->tun.v[id], __ATOMIC_RELAXED);
	return (0);
}

int
vpmu_vm_set_tunable(vpmu_vm *vm, const char *name, long value)
{
	int id;

	if (vm == NULL || (id = vpmu__tunable_find(name)) < 0)
		return (EINVAL);
	if (!vpmu__tunable_is_rw(id))
		return (EPERM);		/* a read-only sysctl */
	vpmu__vm_lock(vm);
	__atomic_store_n(&vm->tun.v[id], id == VPMU_T_MINCOUNT ? value : value != 0,
	    __ATOMIC_RELAXED);		/* the getter reads it without the lock */
	vpmu__vm_unlock(vm);
	return (0);
}

unsigned
vpmu_vm_get_nvcpus(const vpmu_vm *vm)
{
	return (vm == NULL ? 0 : vm->nvcpus);
}

int
vpmu_vm_get_pv_port(const struct vpmu_vm *vm, uint16_t *base)
{
	if (vm == NULL || base == NULL)
		return (EINVAL);
	*base = vm->pv_port;		/* fixed at creation: no lock */
	return (0);
}

int
vpmu_vcpu_set_online(vpmu_vm *vm, unsigned cpu, int online)
{
	if (vm == NULL || cpu >= vm->nvcpus)
		return (EINVAL);
	vpmu__vm_lock(vm);
	vm->vcpu[cpu].online = online != 0;
	vpmu__vm_unlock(vm);
	return (0);
}

int
vpmu_vcpu_set_thread(vpmu_vm *vm, unsigned cpu, pid_t tid)
{
	if (vm == NULL || cpu >= vm->nvcpus || tid < 0)
		return (EINVAL);
	vpmu__vm_lock(vm);
	vm->vcpu[cpu].tid = tid;
	vpmu__vm_unlock(vm);
	return (0);
}

const struct vpmu_classdesc *
vpmu__class_find(const struct vpmu_vm *vm, uint32_t cls)
{
	unsigned i;

	for (i = 0; i < vm->nclass; i++)
		if (vm->classes[i].cls == cls)
			return (&vm->classes[i]);
	return (NULL);
}

const struct vpmu_classdesc *
vpmu__class_of_row(const struct vpmu_vm *vm, unsigned row)
{
	unsigned i;

	for (i = 0; i < vm->nclass; i++)
		if (row >= vm->classes[i].ri_base &&
		    row < vm->classes[i].ri_base + vm->classes[i].rows)
			return (&vm->classes[i]);
	return (NULL);
}

void
vpmu__notify(struct vpmu_vm *vm, int32_t pid, int sig)
{
	if (vm->notify_fn != NULL)
		vm->notify_fn(vm, pid, sig, vm->notify_arg);
}

/* A caller identity must name a process: pid 0 or below is no process. */
int
vpmu__cred_check(const struct vpmu_cred *c)
{
	if (c == NULL)
		return (EFAULT);
	if (c->pid <= 0)
		return (EINVAL);
	return (0);
}
