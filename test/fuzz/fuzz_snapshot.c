/*
 * fuzz_snapshot.c -- libFuzzer target for vpmu_vm_restore() (issue 10,
 * "Save and restore").
 *
 * Input: one mode byte, then the blob.  Mode bit 0 clear: the rest is a
 * payload, wrapped in a good header (magic, version, length, CRC) so that
 * the parser's own checks are what the fuzzer explores; set: the rest goes
 * in as it is (the header checks).  Each input is restored into a fresh VM
 * (intel-v2, 2 vCPUs, synthetic source, log descriptor 3 offered).  The
 * restore must never crash or touch memory it should not (ASan), must
 * return 0 or one of its documented errors, and:
 *   - a refused blob leaves the VM as it was: it saves to the same bytes
 *     as a fresh VM does;
 *   - an accepted blob gives a VM that saves, and whose saved blob
 *     restores again into another fresh VM and saves to the same bytes
 *     (the sweeper's pass count aside).
 */
#include <errno.h>
#include <stdbool.h>
#include <fcntl.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <vpmu/vpmu.h>
#include <vpmu/model.h>
#include <vpmu/pv.h>
#include <vpmu/snapshot.h>
#include "snapblob.h"
#include "internal.h"		/* vpmu__crc32: a blob that passes the check */


int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static int logfd = -1;

static vpmu_vm *
fresh(void)
{
	struct vpmu_model m;
	vpmu_config *cfg;
	vpmu_vm *vm = NULL;

	if (logfd < 0)
		logfd = open("/dev/null", O_WRONLY | O_CLOEXEC);
	CHECK(logfd >= 0);
	CHECK(vpmu_model_parse("intel-v2", &m, NULL, 0) == 0);
	CHECK(vpmu_config_create(&cfg) == 0);
	CHECK(vpmu_config_set_vcpus(cfg, 2) == 0);
	CHECK(vpmu_config_set_model(cfg, &m) == 0);
	CHECK(vpmu_vm_create(cfg, &vm) == 0);
	vpmu_config_destroy(cfg);
	CHECK(vpmu_pv_set_logfd(vm, 3, logfd) == 0);
	return (vm);
}

static void
put32(uint8_t *p, uint32_t v)
{
	p[0] = (uint8_t)v;
	p[1] = (uint8_t)(v >> 8);
	p[2] = (uint8_t)(v >> 16);
	p[3] = (uint8_t)(v >> 24);
}

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	static uint8_t *empty;
	static size_t emptylen;
	vpmu_vm *vm, *again;
	uint8_t *blob, *s1, *s2;
	size_t len, n1, n2;
	int r;

	if (size < 1)
		return (0);
	if (empty == NULL) {
		vm = fresh();
		empty = snap_save(vm, &emptylen);
		vpmu_vm_destroy(vm);
	}
	if (data[0] & 1) {
		len = size - 1;
		CHECK((blob = malloc(len + 1)) != NULL);
		memcpy(blob, data + 1, len);
	} else {
		len = HDR + size - 1;
		CHECK((blob = malloc(len)) != NULL);
		memcpy(blob, "VPMUSNAP", 8);
		put32(blob + 8, VPMU_SNAPSHOT_VERSION);
		put32(blob + 12, 0);
		put32(blob + 16, (uint32_t)(size - 1));
		put32(blob + 20, 0);
		memcpy(blob + HDR, data + 1, size - 1);
		put32(blob + 24, vpmu__crc32(blob + HDR, size - 1));
		put32(blob + 28, 0);
	}
	vm = fresh();
	r = vpmu_vm_restore(vm, blob, len);
	CHECK(r == 0 || r == EBADMSG || r == EINVAL || r == EPROTONOSUPPORT ||
	    r == EBADF || r == ENOMEM);
	s1 = snap_save(vm, &n1);
	if (r != 0) {
		CHECK(n1 == emptylen && memcmp(s1, empty, n1) == 0);
	} else {
		again = fresh();
		CHECK(vpmu_vm_restore(again, s1, n1) == 0);
		s2 = snap_save(again, &n2);
		CHECK(snap_same_state(s1, n1, s2, n2));
		free(s2);
		vpmu_vm_destroy(again);
	}
	free(s1);
	vpmu_vm_destroy(vm);
	free(blob);
	return (0);
}
