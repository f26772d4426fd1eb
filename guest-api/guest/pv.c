/*
 * pv.c -- the guest side of the paravirtual channel (<vpmu-guest/pv.h>,
 * vpmu_pv(4)): building a request block and ringing the doorbell.
 * Freestanding: no libc, no runtime beyond what the header names.
 */
#include <stddef.h>
#include <stdint.h>

#include <vpmu-guest/pv.h>

/* The channel's first port: VPMU_PV_PORT unless the VMM moved it. */
static uint16_t pv_port = VPMU_PV_PORT;

void
vpmu_pv_set_port(uint16_t base)
{
	pv_port = base;
}

uint16_t
vpmu_pv_port(void)
{
	return (pv_port);
}

static struct vpmu_pv_ident pv_default = { 1, 1, 0, VPMU_PV_CRED_PRIVILEGED };

__attribute__((weak)) struct vpmu_pv_ident *
vpmu_pv_self(void)
{
	return (&pv_default);
}

void
vpmu_pv_set_self(int32_t pid, int32_t tid, uint32_t uid, uint32_t cflags)
{
	struct vpmu_pv_ident *id = vpmu_pv_self();

	id->pid = pid;
	id->tid = tid;
	id->uid = uid;
	id->cflags = cflags;
}

__attribute__((weak)) uint64_t
vpmu_pv_virt_to_phys(const void *p)
{
	return ((uint64_t)(uintptr_t)p);
}

static inline void
pv_outl(uint16_t port, uint32_t v)
{
	__asm__ volatile("outl %0, %1" : : "a"(v), "Nd"(port) : "memory");
}

static inline uint32_t
pv_inl(uint16_t port)
{
	uint32_t v;

	__asm__ volatile("inl %1, %0" : "=a"(v) : "Nd"(port) : "memory");
	return (v);
}

/*
 * Eight 64-bit stores, not a byte loop: in an emulated or single-stepped
 * guest every instruction counts (vpmu_pv(4) gives the cost).
 */
void
vpmu_pv_req_init(struct vpmu_pv_req *req, uint32_t op, uint32_t arglen)
{
	const struct vpmu_pv_ident *id = vpmu_pv_self();
	uint64_t *w = (uint64_t *)req;

	w[0] = VPMU_PV_MAGIC | (uint64_t)VPMU_PV_VERSION << 32 |
	    (uint64_t)VPMU_PV_HDRSIZE << 48;
	w[1] = op | (uint64_t)arglen << 32;
	w[2] = (uint32_t)id->pid | (uint64_t)(uint32_t)id->tid << 32;
	w[3] = id->uid | (uint64_t)id->cflags << 32;
	w[4] = 0;		/* error, done */
	w[5] = 0;		/* retval */
	w[6] = 0;		/* reserved */
	w[7] = 0;
}

/* Copy n bytes, 8 at a time while both ends allow it. */
static void
pv_copy(void *d, const void *s, uint32_t n)
{
	uint8_t *db = d;
	const uint8_t *sb = s;
	uint32_t i = 0;

	if ((((uintptr_t)d | (uintptr_t)s) & 7) == 0)
		for (; i + 8 <= n; i += 8)
			*(uint64_t *)(void *)(db + i) = *(const uint64_t *)(const void *)(sb + i);
	for (; i < n; i++)
		db[i] = sb[i];
}

int
vpmu_pv_ring(struct vpmu_pv_req *req)
{
	uint64_t gpa = vpmu_pv_virt_to_phys(req);

	if ((gpa >> 32) != 0)
		pv_outl((uint16_t)(pv_port + VPMU_PV_PORT_HI_OFFSET), (uint32_t)(gpa >> 32));
	pv_outl(pv_port, (uint32_t)gpa);
	if (req->done == VPMU_PV_DONE)
		return (req->error);
	return ((int)pv_inl(pv_port));	/* the block was never reached */
}

int
vpmu_pv_call(uint32_t op, void *arg, uint32_t arglen, int64_t *retval)
{
	/* 4 KiB on the caller's stack: header + argument, 8-aligned. */
	uint64_t blk[4096 / 8];
	struct vpmu_pv_req *req = (struct vpmu_pv_req *)blk;
	uint8_t *a = (uint8_t *)blk + VPMU_PV_HDRSIZE;
	int error;

	if (arglen > sizeof(blk) - VPMU_PV_HDRSIZE)
		return (VPMU_PV_EINVAL);
	vpmu_pv_req_init(req, op, arglen);
	pv_copy(a, arg, arglen);
	error = vpmu_pv_ring(req);
	if (error == 0)
		pv_copy(arg, a, arglen);
	if (retval != NULL)
		*retval = error == 0 ? req->retval : 0;
	return (error);
}

int
vpmu_pv_probe(void)
{
	return (pv_inl((uint16_t)(pv_port + VPMU_PV_PORT_HI_OFFSET)) == VPMU_PV_MAGIC);
}
