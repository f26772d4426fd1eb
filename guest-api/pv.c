/*
 * pv.c -- the paravirtual channel's doorbell: a guest's OUT of a request
 * block's address becomes one call into a personality (pvchan.h), and the
 * result goes back into the block.  vpmu_pv(4) is the contract.
 *
 * Order of checks for a doorbell (each failure is the request's errno):
 *   address not a multiple of 8                        EINVAL
 *   the 64-byte header not inside one RAM slot         EFAULT (IN32 only)
 *   magic, version, hdrsize, reserved words            EINVAL
 *   arglen > VPMU_PV_MAX_BLOCK - 64                     EINVAL
 *   header + argument not inside one RAM slot          EFAULT
 *   unknown operation                                  EINVAL
 *   arglen outside the operation's [min, max]          EINVAL
 *   cflags with unknown bits, pid outside 1..PID_MAX   EINVAL
 * then the handler.  The argument is copied in, the handler works on the
 * copy, and the copy goes back only when the handler succeeded; error,
 * retval and done are written last.  The host never touches guest memory
 * outside the slots the VMM gave (vpmu_pv_add_memory, vpmu_kvm_add_memory).
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "pvchan.h"

static const struct pv_personality pv_channel;
static const struct vpmu__snap_section pv_snap;

/* The guest's constants are the host's default ports. */
_Static_assert(VPMU_PV_PORT == VPMU_PV_PORT_BASE, "doorbell port");
_Static_assert(VPMU_PV_PORT_HI - VPMU_PV_PORT == VPMU_PV_PORT_HI_OFFSET, "high port");

static const struct pv_personality *const personalities[] = {
	&pv_channel,
	&vpmu__pv_hwpmc,
	&vpmu__pv_perfmon,
	&vpmu__pv_pctr,
	&vpmu__pv_fastpage,
};

/* ---- guest memory --------------------------------------------------------------- */

/* The VM's one map: its slots are fixed before the vCPUs run. */
void *
vpmu__pv_hva(const struct vpmu_pv *pv, uint64_t gpa, size_t len)
{
	return (vpmu__gmem_hva(&pv->vm->mem, gpa, len));
}

int
vpmu__pv_read(const struct vpmu_pv *pv, uint64_t gpa, void *buf, size_t len)
{
	void *p;

	if ((p = vpmu__pv_hva(pv, gpa, len)) == NULL)
		return (EFAULT);
	memcpy(buf, p, len);
	return (0);
}

/* Reported to the VMM's write function (vpmu_vm_set_write_fn), if any. */
int
vpmu__pv_write(const struct vpmu_pv *pv, uint64_t gpa, const void *buf, size_t len)
{
	return (vpmu__gmem_write_gpa(&pv->vm->mem, gpa, buf, len));
}

/* The channel reads the VM's one guest-memory map (vpmu_vm_add_memory). */
int
vpmu_pv_add_memory(struct vpmu_vm *vm, uint64_t gpa, uint64_t size, void *hva)
{
	return (vpmu_vm_add_memory(vm, gpa, size, hva));
}

/* ---- errno values ------------------------------------------------------------------ */

static const struct {
	int host;
	int32_t guest;
} errtab[] = {
	{ EPERM, VPMU_PV_EPERM },	{ ESRCH, VPMU_PV_ESRCH },
	{ EIO, VPMU_PV_EIO },		{ ENXIO, VPMU_PV_ENXIO },
	{ EBADF, VPMU_PV_EBADF },	{ ENOMEM, VPMU_PV_ENOMEM },
	{ EFAULT, VPMU_PV_EFAULT },	{ EBUSY, VPMU_PV_EBUSY },
	{ EEXIST, VPMU_PV_EEXIST },	{ ENODEV, VPMU_PV_ENODEV },
	{ EINVAL, VPMU_PV_EINVAL },	{ ENOTTY, VPMU_PV_ENOTTY },
	{ ENOSPC, VPMU_PV_ENOSPC },	{ EPIPE, VPMU_PV_EPIPE },
	{ EAGAIN, VPMU_PV_EAGAIN },	{ EOPNOTSUPP, VPMU_PV_EOPNOTSUPP },
	{ ENOSYS, VPMU_PV_ENOSYS },
	{ VPMU_EPROGMISMATCH, VPMU_PV_EPROGMISMATCH },
	{ VPMU_EDOOFUS, VPMU_PV_EDOOFUS },
};

int32_t
vpmu__pv_errno(int host_errno)
{
	size_t i;

	if (host_errno == 0)
		return (0);
	for (i = 0; i < VPMU_ARRAY_SIZE(errtab); i++)
		if (errtab[i].host == host_errno)
			return (errtab[i].guest);
	return (VPMU_PV_EIO);
}

/* ---- the request ------------------------------------------------------------------- */

static const struct pv_opdesc *
op_find(uint32_t op)
{
	size_t p;
	unsigned i;

	for (p = 0; p < VPMU_ARRAY_SIZE(personalities); p++)
		for (i = 0; i < personalities[p]->nops; i++)
			if (personalities[p]->ops[i].op == op)
				return (&personalities[p]->ops[i]);
	return (NULL);
}

/*
 * Everything after the doorbell: returns the host errno of the request;
 * *reached says whether the header can be written back.
 */
static int
request(struct vpmu_pv *pv, unsigned cpu, uint64_t gpa, bool *reached, int64_t *retval)
{
	struct vpmu_pv_req h;
	const struct pv_opdesc *d;
	struct pv_call c;
	uint8_t stackarg[256];
	int error;

	*reached = false;
	if (gpa % VPMU_PV_ALIGN != 0)
		return (EINVAL);
	if (vpmu__pv_read(pv, gpa, &h, sizeof(h)) != 0)
		return (EFAULT);
	*reached = true;
	if (h.magic != VPMU_PV_MAGIC || h.version != VPMU_PV_VERSION ||
	    h.hdrsize != VPMU_PV_HDRSIZE || h.reserved[0] != 0 || h.reserved[1] != 0 ||
	    h.arglen > VPMU_PV_MAX_BLOCK - VPMU_PV_HDRSIZE)
		return (EINVAL);
	if (vpmu__pv_hva(pv, gpa, VPMU_PV_HDRSIZE + (size_t)h.arglen) == NULL)
		return (EFAULT);
	if ((d = op_find(h.op)) == NULL || h.arglen < d->minlen || h.arglen > d->maxlen)
		return (EINVAL);
	if ((h.cflags & ~VPMU_PV_CRED_MASK) != 0 || h.pid <= 0 || h.pid > VPMU_PV_PID_MAX)
		return (EINVAL);

	memset(&c, 0, sizeof(c));
	c.vm = pv->vm;
	c.pv = pv;
	c.cpu = cpu;
	c.op = h.op;
	c.cred.pid = h.pid;
	c.cred.tid = h.tid;
	c.cred.uid = h.uid;
	c.cred.privileged = (h.cflags & VPMU_PV_CRED_PRIVILEGED) != 0;
	c.cred.jailed = (h.cflags & VPMU_PV_CRED_JAILED) != 0;
	c.arglen = h.arglen;
	c.arg = h.arglen <= sizeof(stackarg) ? stackarg : malloc(h.arglen);
	if (c.arg == NULL)
		return (ENOMEM);
	/* One copy: the guest may change the block while we work. */
	(void)vpmu__pv_read(pv, gpa + VPMU_PV_HDRSIZE, c.arg, h.arglen);
	error = d->fn(&c);
	if (error == 0) {
		(void)vpmu__pv_write(pv, gpa + VPMU_PV_HDRSIZE, c.arg, h.arglen);
		*retval = c.retval;
	}
	if (c.arg != stackarg)
		free(c.arg);
	return (error);
}

/* A doorbell: the request, then error, retval and done into the block. */
static void
doorbell(struct vpmu_pv *pv, unsigned cpu, uint64_t gpa)
{
	struct {
		int32_t error;
		uint32_t done;
		int64_t retval;
	} out;
	bool reached;
	int error;

	pthread_mutex_lock(&pv->lock);
	out.retval = 0;
	error = request(pv, cpu, gpa, &reached, &out.retval);
	out.error = vpmu__pv_errno(error);
	out.done = VPMU_PV_DONE;
	if (reached)
		(void)vpmu__pv_write(pv, gpa + 32, &out, sizeof(out));
	pv->vcpu[cpu].last_error = out.error;
	pv->st.requests++;
	if (error != 0)
		pv->st.errors++;
	if (!reached)
		pv->st.unreachable++;
	pthread_mutex_unlock(&pv->lock);
}

int
vpmu_pv_port_io(struct vpmu_vm *vm, unsigned cpu, uint16_t port, bool out,
    unsigned size, uint32_t *data, bool *handled)
{
	struct vpmu_pv *pv;
	struct pv_vcpu *v;
	uint64_t gpa;
	unsigned off;

	if (vm == NULL || (pv = vm->pv) == NULL || data == NULL || handled == NULL ||
	    cpu >= vm->nvcpus)
		return (EINVAL);
	/* The VM's own ports; none when the channel is off (base 0). */
	off = (unsigned)port - vm->pv_port;
	*handled = vm->pv_port != 0 && port >= vm->pv_port && off < VPMU_PV_PORT_COUNT;
	if (!*handled)
		return (0);
	v = &pv->vcpu[cpu];
	if (size != 4 || (off != 0 && off != VPMU_PV_PORT_HI_OFFSET)) {
		if (!out)
			*data = 0xFFFFFFFFu;
		pthread_mutex_lock(&pv->lock);
		pv->st.ignored++;
		pthread_mutex_unlock(&pv->lock);
		return (0);
	}
	if (!out) {
		*data = off == 0 ? (uint32_t)v->last_error : VPMU_PV_MAGIC;
		return (0);
	}
	if (off == VPMU_PV_PORT_HI_OFFSET) {
		v->addr_hi = *data;
		return (0);
	}
	gpa = (uint64_t)v->addr_hi << 32 | *data;
	v->addr_hi = 0;
	doorbell(pv, cpu, gpa);
	return (0);
}

/* ---- life cycle and the rest of the API --------------------------------------------- */

void
vpmu__pv_proc_exit(struct vpmu_pv *pv, int32_t pid)
{
	size_t p;

	for (p = 0; p < VPMU_ARRAY_SIZE(personalities); p++)
		if (personalities[p]->proc_exit != NULL)
			personalities[p]->proc_exit(pv, pid);
}

static void
pv_vcpu_exit(struct vpmu_vm *vm, unsigned cpu)
{
	size_t p;

	if (vm->pv == NULL)
		return;
	for (p = 0; p < VPMU_ARRAY_SIZE(personalities); p++)
		if (personalities[p]->vcpu_exit != NULL)
			personalities[p]->vcpu_exit(vm->pv, cpu);
}

static int
pv_create(struct vpmu_vm *vm, const struct vpmu_config *cfg)
{
	struct vpmu_pv *pv;
	size_t p;
	int i, error;

	if ((pv = calloc(1, sizeof(*pv))) == NULL ||
	    (pv->vcpu = calloc(vm->nvcpus, sizeof(*pv->vcpu))) == NULL) {
		free(pv);
		return (ENOMEM);
	}
	(void)cfg;				/* vm->pv_port is set already */
	pv->vm = vm;
	pthread_mutex_init(&pv->lock, NULL);
	for (i = 0; i < VPMU_PV_MAX_LOGFDS; i++)
		pv->logfd[i] = -1;
	vm->pv = pv;
	vm->snap = &pv_snap;
	for (p = 0; p < VPMU_ARRAY_SIZE(personalities); p++)
		if (personalities[p]->init != NULL &&
		    (error = personalities[p]->init(pv)) != 0) {
			vpmu__pv_destroy(vm);
			return (error);
		}
	return (0);
}

/*
 * The channel's part in snapshots: the log descriptors the VMM offered
 * (vpmu_pv_set_logfd()), by number, steady under pv->lock, which comes
 * before the VM lock; and the perfmon and pctr devices' owners (pids above
 * VPMU_PV_PID_MAX), whose devices' state is not saved.
 */
static void
pv_snap_hold(struct vpmu_vm *vm)
{
	pthread_mutex_lock(&vm->pv->lock);
}

static void
pv_snap_release(struct vpmu_vm *vm)
{
	pthread_mutex_unlock(&vm->pv->lock);
}

static int
pv_snap_log_fd(struct vpmu_vm *vm, int32_t n)
{
	return (n >= 0 && n < VPMU_PV_MAX_LOGFDS ? vm->pv->logfd[n] : -1);
}

static bool
pv_snap_unsaved(int32_t pid)
{
	return (pid > (int32_t)VPMU_PV_PID_MAX);
}

static const struct vpmu__snap_section pv_snap = {
	.hold = pv_snap_hold,
	.release = pv_snap_release,
	.log_fd = pv_snap_log_fd,
	.unsaved = pv_snap_unsaved,
};

void
vpmu__pv_destroy(struct vpmu_vm *vm)
{
	struct vpmu_pv *pv = vm->pv;
	size_t p;

	if (pv == NULL)
		return;
	vm->snap = NULL;
	for (p = VPMU_ARRAY_SIZE(personalities); p-- > 0;)
		if (personalities[p]->fini != NULL)
			personalities[p]->fini(pv);
	pthread_mutex_destroy(&pv->lock);
	free(pv->vcpu);
	free(pv);
	vm->pv = NULL;
}

int
vpmu_pv_set_logfd(struct vpmu_vm *vm, int guest_fd, int host_fd)
{
	struct vpmu_pv *pv;

	if (vm == NULL || (pv = vm->pv) == NULL || guest_fd < 0 ||
	    guest_fd >= VPMU_PV_MAX_LOGFDS || host_fd < -1)
		return (EINVAL);
	pthread_mutex_lock(&pv->lock);
	pv->logfd[guest_fd] = host_fd;
	pthread_mutex_unlock(&pv->lock);
	return (0);
}

int
vpmu_pv_get_stats(struct vpmu_vm *vm, struct vpmu_pv_stats *st)
{
	struct vpmu_pv *pv;

	if (vm == NULL || (pv = vm->pv) == NULL || st == NULL)
		return (EINVAL);
	pthread_mutex_lock(&pv->lock);
	*st = pv->st;
	pthread_mutex_unlock(&pv->lock);
	return (0);
}

/* ---- VPMU_PV_OP_NULL ------------------------------------------------------------------ */

static int
op_null(struct pv_call *c)
{
	(void)c;
	return (0);
}

static const struct pv_opdesc null_ops[] = {
	{ VPMU_PV_OP_NULL, 0, 0, op_null, "NULL" },
};

static const struct pv_personality pv_channel = {
	.name = "channel",
	.ops = null_ops,
	.nops = VPMU_ARRAY_SIZE(null_ops),
};

/* The channel as a layer of the VM (vm_create.c lists it). */
const struct vpmu__layer vpmu__pv_layer = {
	.name = "pv",
	.create = pv_create,
	.destroy = vpmu__pv_destroy,
	.port_io = vpmu_pv_port_io,
	.vcpu_exit = pv_vcpu_exit,
};
