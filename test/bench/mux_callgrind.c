/*
 * mux_callgrind -- the multiplexing scheduler's instructions per rotation,
 * made to be counted by callgrind (mux.sh runs it; it also runs without
 * valgrind).
 *
 *   mux_callgrind CASE K
 *
 * A host-only VM (no KVM, no guest): 1 vCPU, the synthetic source, 16
 * system-scope counting PMCs of the paravirtual class on vCPU 0 allocated
 * by a privileged caller and started, then K calls of
 * vpmu_synthetic_advance(vm, 0, 1000 ns).  CASE:
 *   none    capacity 0: all 16 count, nothing to share
 *   norot   capacity 4, mux interval 10 s: 4 count, 12 wait, K us of run
 *           time never reach a rotation
 *   rot     capacity 4, mux interval 1 us: every advance rotates
 * mux.sh counts only inside vpmu_synthetic_advance (callgrind
 * --collect-atstart=no --toggle-collect=vpmu_synthetic_advance) for K and
 * 2K calls; (Ir(2K) - Ir(K)) / K is the instructions per advance, so
 * set-up cancels; rot - norot is the instructions of one rotation.
 * The synthetic source has no CMASK, EDGE or INV: the 16 counters are
 * instructions, branches, cycles and ref-cycles on USR, OS and both.
 *
 * Afterwards it checks that the case did what it says (rotations by the
 * running/enabled share of PMC 0 and PMC 15) and prints two lines:
 *   "ran: pmc0 P% pmc15 Q%"
 *   "ns: T per advance"       CLOCK_MONOTONIC around the K calls: run
 *                             natively (not under valgrind) with a large K
 *                             it is the time per advance.
 *
 * Exit status: 0, 1 on a failure, 2 on bad usage.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <vpmu/vpmu.h>

#define PROG		"mux_callgrind"
#define NPMC		16
#define STEP_NS		1000ull

static const struct vpmu_cred host = { .pid = 1, .privileged = 1 };

int
main(int argc, char **argv)
{
	static const uint32_t events[4] = { VPMU_EV_INSTRUCTIONS, VPMU_EV_BRANCHES,
	    VPMU_EV_CYCLES, VPMU_EV_REF_CYCLES };
	static const uint32_t modes[4] = { VPMU_CAP_USER | VPMU_CAP_SYSTEM,
	    VPMU_CAP_SYSTEM, VPMU_CAP_USER, 0 };
	struct vpmu_pmc_alloc a;
	struct vpmu_count c0, c15;
	vpmu_pmc_id id[NPMC];
	vpmu_config *cfg = NULL;
	vpmu_vm *vm = NULL;
	unsigned cap, i;
	uint64_t interval, k, n, t0, t1;
	struct timespec ts;
	char *end;
	int e;

	if (argc != 3)
		goto usage;
	if (strcmp(argv[1], "none") == 0) {
		cap = 0;
		interval = 1000;
	} else if (strcmp(argv[1], "norot") == 0) {
		cap = 4;
		interval = 10000000000ull;
	} else if (strcmp(argv[1], "rot") == 0) {
		cap = 4;
		interval = 1000;
	} else
		goto usage;
	errno = 0;
	n = strtoull(argv[2], &end, 10);
	if (errno != 0 || *end != '\0' || n == 0 || n > 100000000)
		goto usage;

	if ((e = vpmu_config_create(&cfg)) != 0 ||
	    (e = vpmu_config_set_vcpus(cfg, 1)) != 0 ||
	    (e = vpmu_config_set_source(cfg, &vpmu_source_synthetic, NULL)) != 0 ||
	    (e = vpmu_config_set_capacity(cfg, cap)) != 0 ||
	    (e = vpmu_config_set_mux_interval(cfg, interval)) != 0 ||
	    (e = vpmu_vm_create(cfg, &vm)) != 0) {
		fprintf(stderr, PROG ": set-up: %s\n", vpmu_strerror(e));
		vpmu_config_destroy(cfg);
		return (1);
	}
	vpmu_config_destroy(cfg);
	for (i = 0; i < 4; i++)
		if ((e = vpmu_synthetic_set_rate(vm, 0, events[i], 1000 * (i + 1))) != 0)
			goto fail;
	for (i = 0; i < NPMC; i++) {
		memset(&a, 0, sizeof(a));
		a.cls = VPMU_CLASS_PV;
		a.mode = VPMU_MODE_SC;
		a.cpu = 0;
		a.event = events[i % 4];
		a.caps = modes[i / 4];
		if ((e = vpmu_pmc_allocate(vm, &host, &a)) != 0 ||
		    (e = vpmu_pmc_start(vm, &host, a.pmcid)) != 0)
			goto fail;
		id[i] = a.pmcid;
	}

	clock_gettime(CLOCK_MONOTONIC, &ts);
	t0 = (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
	for (k = 0; k < n; k++)
		if ((e = vpmu_synthetic_advance(vm, 0, STEP_NS)) != 0)
			goto fail;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	t1 = (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;

	if ((e = vpmu_pmc_get_count(vm, host.pid, id[0], &c0)) != 0 ||
	    (e = vpmu_pmc_get_count(vm, host.pid, id[NPMC - 1], &c15)) != 0)
		goto fail;
	printf("ran: pmc0 %.1f%% pmc15 %.1f%%\n",
	    100.0 * (double)c0.time_running / (double)c0.time_enabled,
	    100.0 * (double)c15.time_running / (double)c15.time_enabled);
	printf("ns: %.1f per advance\n", (double)(t1 - t0) / (double)n);
	/* none: all ran; norot: the first window only; rot: a quarter each. */
	if ((cap == 0 && (c0.time_running != c0.time_enabled ||
	    c15.time_running != c15.time_enabled)) ||
	    (cap != 0 && interval > n * STEP_NS && (c0.time_running != c0.time_enabled ||
	    c15.time_running != 0)) ||
	    (cap != 0 && interval <= STEP_NS && n >= 8 &&
	    (c0.time_running * 5 < c0.time_enabled || c0.time_running * 3 > c0.time_enabled))) {
		fprintf(stderr, PROG ": %s did not schedule as expected\n", argv[1]);
		vpmu_vm_destroy(vm);
		return (1);
	}
	vpmu_vm_destroy(vm);
	return (0);
fail:
	fprintf(stderr, PROG ": %s\n", vpmu_strerror(e));
	vpmu_vm_destroy(vm);
	return (1);
usage:
	fprintf(stderr, "usage: " PROG " none|norot|rot K\n");
	return (2);
}
