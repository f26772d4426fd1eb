/*
 * test_flatlog.c -- write two small pmclog logs for test_no_edges.sh, made
 * by libvpmu's encoder with fixed timestamps, so that every byte is known:
 *
 *   DIR/flat.log   INITIALIZE, PMCALLOCATEDYN (pmc 0x100, "instructions"),
 *                  three CALLCHAIN records one frame deep (npc 1: no
 *                  caller, so no call-graph edge): pc 0x401000 twice (the
 *                  second in user mode), 0x402000 once; CLOSELOG
 *   DIR/empty.log  INITIALIZE, PMCALLOCATEDYN, CLOSELOG: no samples
 *
 *   test_flatlog DIR
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <vpmu/hwpmc.h>
#include <vpmu/pmclog.h>

static unsigned char buf[4096];
static size_t used;

static void
add(const struct vpmu_pmclog_ev *ev)
{
	size_t n = vpmu_pmclog_encode(ev, buf + used, sizeof(buf) - used);

	if (n == 0) {
		fprintf(stderr, "test_flatlog: cannot encode type %u\n", ev->type);
		exit(1);
	}
	used += n;
}

static void
save(const char *dir, const char *name)
{
	char path[4096];
	FILE *f;

	snprintf(path, sizeof(path), "%s/%s", dir, name);
	if ((f = fopen(path, "wb")) == NULL || fwrite(buf, 1, used, f) != used ||
	    fclose(f) != 0) {
		perror(path);
		exit(1);
	}
}

/* INITIALIZE and the PMC's name: the start of both logs. */
static void
start(void)
{
	struct vpmu_pmclog_ev ev;

	used = 0;
	memset(&ev, 0, sizeof(ev));
	ev.type = VPMU_PMCLOG_INITIALIZE;
	ev.tsc = 1000;
	ev.u.initialize.version = VPMU_PMC_VERSION;
	ev.u.initialize.tsc_freq = 1000000000;
	snprintf(ev.u.initialize.cpuid, sizeof(ev.u.initialize.cpuid), "test_flatlog");
	add(&ev);
	memset(&ev, 0, sizeof(ev));
	ev.type = VPMU_PMCLOG_PMCALLOCATEDYN;
	ev.tsc = 1001;
	ev.u.pmcallocatedyn.pmcid = 0x100;
	snprintf(ev.u.pmcallocatedyn.evname, sizeof(ev.u.pmcallocatedyn.evname),
	    "instructions");
	add(&ev);
}

static void
end(const char *dir, const char *name)
{
	struct vpmu_pmclog_ev ev;

	memset(&ev, 0, sizeof(ev));
	ev.type = VPMU_PMCLOG_CLOSELOG;
	ev.tsc = 2000;
	add(&ev);
	save(dir, name);
}

int
main(int argc, char **argv)
{
	static const struct { uint64_t pc; uint32_t flags; } leaf[] = {
		{ 0x401000, 0 }, { 0x401000, VPMU_PMCLOG_CC_F_USERSPACE }, { 0x402000, 0 }
	};
	struct vpmu_pmclog_ev ev;
	unsigned i;

	if (argc != 2) {
		fprintf(stderr, "usage: test_flatlog DIR\n");
		return (2);
	}
	start();
	for (i = 0; i < sizeof(leaf) / sizeof(leaf[0]); i++) {
		memset(&ev, 0, sizeof(ev));
		ev.type = VPMU_PMCLOG_CALLCHAIN;
		ev.tsc = 1100 + i;
		ev.u.callchain.pid = 1;
		ev.u.callchain.tid = 1;
		ev.u.callchain.pmcid = 0x100;
		ev.u.callchain.cpuflags = VPMU_PMCLOG_CPUFLAGS(0, leaf[i].flags);
		ev.u.callchain.npc = 1;
		ev.u.callchain.pc[0] = leaf[i].pc;
		add(&ev);
	}
	end(argv[1], "flat.log");
	start();
	end(argv[1], "empty.log");
	return (0);
}
