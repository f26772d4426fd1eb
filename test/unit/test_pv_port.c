/*
 * test_pv_port.c -- the paravirtual channel's port base as a configuration
 * value (vpmu_config_set_pv_port, vpmu_vm_get_pv_port): the bases refused,
 * a VM moved to another base answering there and nowhere else, a VM with
 * the channel off claiming no port; the results it writes reported to the
 * VMM's write function.  No KVM: requests are written into a
 * malloc'd "guest RAM" and rung with vpmu_pv_port_io().
 */
#include "fixture.h"

#include <vpmu/pv.h>
#include <guest/include/vpmu-guest/pv.h>

#define RAM	0x10000u
#define BLK	0x100u

static vpmu_vm *
mkvm(int base, uint8_t **ram)
{
	vpmu_config *cfg;
	vpmu_vm *vm;

	assert_int_equal(vpmu_config_create(&cfg), 0);
	if (base >= 0)
		assert_int_equal(vpmu_config_set_pv_port(cfg, (uint16_t)base), 0);
	assert_int_equal(vpmu_vm_create(cfg, &vm), 0);
	vpmu_config_destroy(cfg);
	*ram = calloc(1, RAM);
	assert_non_null(*ram);
	assert_int_equal(vpmu_pv_add_memory(vm, 0, RAM, *ram), 0);
	return (vm);
}

static void
bases_refused(void **state)
{
	static const uint16_t bad[] = {
		0x0001, 0x0080, 0x00F4, 0x00F8, 0x00FF,	/* motherboard ports */
		0x0CF1, 0x0CF8, 0x0CFC, 0x0CFF,		/* PCI configuration */
		0xFFF9, 0xFFFC, 0xFFFF,			/* past 0xFFFF */
	};
	static const uint16_t good[] = {
		0x0000, 0x0100, 0x0CF0, 0x0D00, 0x5650, 0x6000, 0xFFF8,
	};
	vpmu_config *cfg;
	vpmu_vm *vm;
	uint16_t got = 1;
	size_t i;

	(void)state;
	assert_int_equal(vpmu_config_set_pv_port(NULL, 0x6000), EINVAL);
	assert_int_equal(vpmu_config_create(&cfg), 0);
	for (i = 0; i < sizeof(bad) / sizeof(bad[0]); i++)
		assert_int_equal(vpmu_config_set_pv_port(cfg, bad[i]), EINVAL);
	/* A refused base leaves the default in place. */
	assert_int_equal(vpmu_vm_create(cfg, &vm), 0);
	assert_int_equal(vpmu_vm_get_pv_port(vm, &got), 0);
	assert_int_equal(got, 0x5650);
	assert_int_equal(vpmu_vm_get_pv_port(vm, NULL), EINVAL);
	assert_int_equal(vpmu_vm_get_pv_port(NULL, &got), EINVAL);
	vpmu_vm_destroy(vm);
	for (i = 0; i < sizeof(good) / sizeof(good[0]); i++) {
		assert_int_equal(vpmu_config_set_pv_port(cfg, good[i]), 0);
		assert_int_equal(vpmu_vm_create(cfg, &vm), 0);
		assert_int_equal(vpmu_vm_get_pv_port(vm, &got), 0);
		assert_int_equal(got, good[i]);
		vpmu_vm_destroy(vm);
	}
	vpmu_config_destroy(cfg);
}

static int
io(vpmu_vm *vm, uint16_t port, bool out, uint32_t *v, bool *handled)
{
	*handled = true;
	return (vpmu_pv_port_io(vm, 0, port, out, 4, v, handled));
}

/* A GETMODULEVERSION block at BLK, rung at doorbell port db. */
static void
ring_version(vpmu_vm *vm, uint8_t *ram, uint16_t db, bool *handled)
{
	struct vpmu_pv_req *r = (struct vpmu_pv_req *)(void *)(ram + BLK);
	uint32_t v = BLK, ver = 0x0A000000u;

	memset(r, 0, VPMU_PV_HDRSIZE + 4);
	r->magic = VPMU_PV_MAGIC;
	r->version = VPMU_PV_VERSION;
	r->hdrsize = VPMU_PV_HDRSIZE;
	r->op = VPMU_PV_OP_GETMODULEVERSION;
	r->arglen = 4;
	r->pid = 1;
	r->tid = 1;
	r->cflags = VPMU_PV_CRED_PRIVILEGED;
	memcpy(ram + BLK + VPMU_PV_HDRSIZE, &ver, 4);
	assert_int_equal(io(vm, db, true, &v, handled), 0);
}

static void
moved_channel_answers_there_only(void **state)
{
	struct vpmu_pv_req *r;
	struct vpmu_pv_stats st;
	uint8_t *ram;
	vpmu_vm *vm = mkvm(0x6000, &ram);
	uint32_t v, hi = 1;
	bool handled;
	unsigned p;

	(void)state;
	r = (struct vpmu_pv_req *)(void *)(ram + BLK);
	/* The default ports are nobody's now: not claimed, nothing changed. */
	for (p = 0x5650; p < 0x5658; p++) {
		v = 0x12345678u;
		assert_int_equal(io(vm, (uint16_t)p, false, &v, &handled), 0);
		assert_false(handled);
		assert_int_equal(v, 0x12345678u);
	}
	ring_version(vm, ram, 0x5650, &handled);
	assert_false(handled);
	assert_int_equal(r->done, 0);
	assert_int_equal(vpmu_pv_get_stats(vm, &st), 0);
	assert_int_equal(st.requests, 0);
	assert_int_equal(st.ignored, 0);
	/* Nor the ports just around the new ones. */
	assert_int_equal(io(vm, 0x5FFF, false, &v, &handled), 0);
	assert_false(handled);
	assert_int_equal(io(vm, 0x6008, false, &v, &handled), 0);
	assert_false(handled);

	/* The probe and the doorbell at 0x6000 + 4 and 0x6000. */
	assert_int_equal(io(vm, 0x6004, false, &v, &handled), 0);
	assert_true(handled);
	assert_int_equal(v, VPMU_PV_MAGIC);
	ring_version(vm, ram, 0x6000, &handled);
	assert_true(handled);
	assert_int_equal(r->done, VPMU_PV_DONE);
	assert_int_equal(r->error, 0);
	memcpy(&v, ram + BLK + VPMU_PV_HDRSIZE, 4);
	assert_int_equal(v, 0x0A000000u);
	/* The high word latches at base + 4: the next doorbell is outside RAM. */
	assert_int_equal(io(vm, 0x6004, true, &hi, &handled), 0);
	assert_true(handled);
	v = BLK;
	assert_int_equal(io(vm, 0x6000, true, &v, &handled), 0);
	assert_true(handled);
	assert_int_equal(io(vm, 0x6000, false, &v, &handled), 0);
	assert_int_equal(v, VPMU_PV_EFAULT);
	/* The other six ports are the channel's, and ignored. */
	assert_int_equal(io(vm, 0x6007, false, &v, &handled), 0);
	assert_true(handled);
	assert_int_equal(v, 0xFFFFFFFFu);
	assert_int_equal(vpmu_pv_get_stats(vm, &st), 0);
	assert_int_equal(st.requests, 2);
	assert_int_equal(st.errors, 1);
	assert_int_equal(st.unreachable, 1);
	assert_int_equal(st.ignored, 1);
	vpmu_vm_destroy(vm);
	free(ram);
}

static void
channel_off_claims_nothing(void **state)
{
	uint8_t *ram;
	vpmu_vm *vm = mkvm(0, &ram);
	struct vpmu_pv_stats st;
	uint16_t base = 1;
	uint32_t v;
	bool handled;
	unsigned p;

	(void)state;
	assert_int_equal(vpmu_vm_get_pv_port(vm, &base), 0);
	assert_int_equal(base, 0);
	for (p = 0; p < 0x10000; p += 0x10) {
		v = 7;
		assert_int_equal(io(vm, (uint16_t)p, false, &v, &handled), 0);
		assert_false(handled);
		assert_int_equal(v, 7);
	}
	ring_version(vm, ram, 0x5650, &handled);
	assert_false(handled);
	assert_int_equal(((struct vpmu_pv_req *)(void *)(ram + BLK))->done, 0);
	/* The rest of the API still answers: the VMM need not know. */
	assert_int_equal(vpmu_pv_get_stats(vm, &st), 0);
	assert_int_equal(st.requests, 0);
	assert_int_equal(st.ignored, 0);
	vpmu_vm_destroy(vm);
	free(ram);
}

static void
default_base(void **state)
{
	uint8_t *ram;
	vpmu_vm *vm = mkvm(-1, &ram);
	uint16_t base = 0;
	uint32_t v;
	bool handled;

	(void)state;
	assert_int_equal(vpmu_vm_get_pv_port(vm, &base), 0);
	assert_int_equal(base, VPMU_PV_PORT_BASE);
	assert_int_equal(io(vm, VPMU_PV_PORT_HI, false, &v, &handled), 0);
	assert_true(handled);
	assert_int_equal(v, VPMU_PV_MAGIC);
	assert_int_equal(io(vm, 0x6004, false, &v, &handled), 0);
	assert_false(handled);
	vpmu_vm_destroy(vm);
	free(ram);
}

/* The VMM's write function (vpmu_vm_set_write_fn): what it heard. */
static uint64_t heard_lo = UINT64_MAX, heard_hi;
static unsigned heard;

static void
hear(void *arg, uint64_t gpa, uint64_t len)
{
	(void)arg;
	heard++;
	if (gpa < heard_lo)
		heard_lo = gpa;
	if (gpa + len > heard_hi)
		heard_hi = gpa + len;
}

/*
 * The channel's writes of a request's results reach the VMM's write
 * function (its dirty tracking), inside the request's block; without one,
 * nothing is called.  EINVAL for no VM.
 */
static void
results_are_reported_to_the_write_fn(void **state)
{
	struct vpmu_pv_req *r;
	uint8_t *ram;
	vpmu_vm *vm = mkvm(-1, &ram);
	bool handled;

	(void)state;
	r = (struct vpmu_pv_req *)(void *)(ram + BLK);
	assert_int_equal(vpmu_vm_set_write_fn(NULL, hear, NULL), EINVAL);
	assert_int_equal(vpmu_vm_set_write_fn(vm, hear, NULL), 0);
	ring_version(vm, ram, VPMU_PV_PORT_BASE, &handled);
	assert_true(handled);
	assert_int_equal(r->done, VPMU_PV_DONE);
	assert_true(heard >= 1);
	assert_true(heard_lo >= BLK && heard_hi <= BLK + VPMU_PV_HDRSIZE + 4);
	heard = 0;
	assert_int_equal(vpmu_vm_set_write_fn(vm, NULL, NULL), 0);
	ring_version(vm, ram, VPMU_PV_PORT_BASE, &handled);
	assert_int_equal(r->done, VPMU_PV_DONE);
	assert_int_equal(heard, 0);
	vpmu_vm_destroy(vm);
	free(ram);
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(bases_refused),
		cmocka_unit_test(moved_channel_answers_there_only),
		cmocka_unit_test(channel_off_claims_nothing),
		cmocka_unit_test(default_base),
		cmocka_unit_test(results_are_reported_to_the_write_fn),
	};

	return (cmocka_run_group_tests(tests, NULL, NULL));
}
