/*
 * vpmustat_seed.c -- write a seed corpus for fuzz_vpmustat: logs as
 * vpmustat writes and reads them (INITIALIZE first, the PMCs' allocations,
 * CALLCHAIN samples, CLOSELOG last), each after fuzz_vpmustat's 4 option
 * bytes.  The call chains are made of hot.elf's functions (_start ->
 * vg__start -> main -> work -> hot | cold), their addresses read from the
 * ELF (VS_FUZZ_ELF) with vpmustat's symbols.c, or today's addresses
 * where it cannot be read.
 *
 *   vpmustat_seed DIR
 *
 *   profile*       two PMCs (PMCALLOCATEDYN, PMCALLOCATE), samples on
 *                  three vCPUs in user and kernel mode, recursion, a
 *                  chain cut outside the code, DROPNOTIFY; with and
 *                  without symbols, with -c, --event, --dump, --top
 *   nochain        a PMC without VPMU_F_CALLCHAIN (-N): one-frame chains
 *   deep           a chain of 512 frames, and an empty one
 *   unnamed        samples of a PMC no record names
 *   no_samples     INITIALIZE and CLOSELOG only
 *   no_initialize  samples first
 *   cut, bad       the profile cut inside a record; with a bad record
 *   after_close    records after CLOSELOG
 *   names          event names with XML's special characters and ';'
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <vpmu/hwpmc.h>
#include <vpmu/pmclog.h>

#include "vpmustat.h"

#ifndef VS_FUZZ_ELF
#define VS_FUZZ_ELF	""
#endif

static unsigned char buf[64 * 1024];
static size_t used;
static const char *dir;
static struct vpmu_pmclog_ev ev;
static uint64_t tsc = 5000;

/* hot.elf's functions: _start, vg__start, main, work, hot, cold. */
static const char *const fnames[] = { "_start", "vg__start", "main", "work", "hot", "cold" };
static uint64_t fa[] = { 0x100000, 0x101a70, 0x103b70, 0x103b30, 0x103af0, 0x103b10 };
enum { F_START, F_VGSTART, F_MAIN, F_WORK, F_HOT, F_COLD };

static void
load_addresses(void)
{
	struct vs_symtab t = { 0 };
	char err[256];
	size_t i, j;

	if (VS_FUZZ_ELF[0] == '\0' || vs_symtab_load(&t, VS_FUZZ_ELF, err, sizeof(err)) < 0)
		return;
	for (i = 0; i < t.n; i++)
		for (j = 0; j < sizeof(fnames) / sizeof(fnames[0]); j++)
			if (strcmp(t.s[i].name, fnames[j]) == 0)
				fa[j] = t.s[i].addr;
	vs_symtab_free(&t);
}

static void
begin(const char *opt)
{
	memcpy(buf, opt, 4);
	used = 4;
}

static void
add(void)
{
	size_t n;

	if (vpmu_pmclog_encode(&ev, buf + used, sizeof(buf) - used, &n) != 0) {
		fprintf(stderr, "vpmustat_seed: cannot encode type %u\n", ev.type);
		exit(1);
	}
	used += n;
}

static void
record(uint32_t type)
{
	memset(&ev, 0, sizeof(ev));
	ev.type = type;
	ev.tsc = tsc++;
}

static void
initialize(void)
{
	record(VPMU_PMCLOG_INITIALIZE);
	ev.u.initialize.version = VPMU_PMC_VERSION;
	ev.u.initialize.tsc_freq = 1000000000;
	strcpy(ev.u.initialize.cpuid, "GenuineIntel-6-55-4");
	add();
}

static void
pmc_dyn(uint32_t id, const char *name, uint32_t flags)
{
	record(VPMU_PMCLOG_PMCALLOCATEDYN);
	ev.u.pmcallocatedyn.pmcid = id;
	ev.u.pmcallocatedyn.flags = flags;
	snprintf(ev.u.pmcallocatedyn.evname, sizeof(ev.u.pmcallocatedyn.evname), "%s", name);
	add();
}

static void
pmc(uint32_t id, uint32_t event, uint32_t flags)
{
	record(VPMU_PMCLOG_PMCALLOCATE);
	ev.u.pmcallocate.pmcid = id;
	ev.u.pmcallocate.event = event;
	ev.u.pmcallocate.flags = flags;
	ev.u.pmcallocate.rate = 1000;
	add();
}

/*
 * A sample of pmc on cpu: the leaf in function leaf (offset off), then
 * the return addresses of the frames below it down to _start.
 */
static void
sample(uint32_t id, uint32_t cpu, bool user, int leaf, unsigned off)
{
	static const int below_hot[] = { F_WORK, F_MAIN, F_VGSTART, F_START };
	unsigned i, k = 0;

	record(VPMU_PMCLOG_CALLCHAIN);
	ev.u.callchain.pid = 1;
	ev.u.callchain.tid = 100001;
	ev.u.callchain.pmcid = id;
	ev.u.callchain.cpuflags = VPMU_PMCLOG_CPUFLAGS(cpu, user ? VPMU_PMCLOG_CC_F_USERSPACE : 0);
	ev.u.callchain.pc[k++] = fa[leaf] + off;
	for (i = leaf == F_HOT || leaf == F_COLD ? 0 : leaf == F_WORK ? 1 : 2; i < 4; i++)
		ev.u.callchain.pc[k++] = fa[below_hot[i]] + 0x10 + i;
	ev.u.callchain.npc = k;
	add();
}

static void
closelog(void)
{
	record(VPMU_PMCLOG_CLOSELOG);
	add();
}

static void
save(const char *name)
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

/* The body of the profile seeds, after the option bytes. */
static void
profile(void)
{
	unsigned i;

	initialize();
	pmc_dyn(0x100, "instructions", VPMU_F_CALLCHAIN);
	pmc(0x101, 0xc4, VPMU_F_CALLCHAIN);
	for (i = 0; i < 40; i++)
		sample(0x100, i % 3, i % 2 == 0, i % 10 == 0 ? F_COLD : F_HOT, 4 + i % 8);
	for (i = 0; i < 6; i++)
		sample(0x101, 1, false, i % 3 == 0 ? F_WORK : F_HOT, 8);
	/* recursion: work called by work */
	record(VPMU_PMCLOG_CALLCHAIN);
	ev.u.callchain.pmcid = 0x100;
	ev.u.callchain.npc = 5;
	ev.u.callchain.pc[0] = fa[F_HOT] + 4;
	ev.u.callchain.pc[1] = fa[F_WORK] + 0x10;
	ev.u.callchain.pc[2] = fa[F_WORK] + 0x18;
	ev.u.callchain.pc[3] = fa[F_MAIN] + 0x10;
	ev.u.callchain.pc[4] = fa[F_START] + 0x8;
	add();
	/* a return address outside the code: cut there */
	record(VPMU_PMCLOG_CALLCHAIN);
	ev.u.callchain.pmcid = 0x100;
	ev.u.callchain.npc = 3;
	ev.u.callchain.pc[0] = fa[F_HOT] + 4;
	ev.u.callchain.pc[1] = 0x7fff00001234;
	ev.u.callchain.pc[2] = fa[F_MAIN] + 0x10;
	add();
	record(VPMU_PMCLOG_DROPNOTIFY);
	add();
	closelog();
}

int
main(int argc, char **argv)
{
	unsigned i;
	size_t at;

	if (argc != 2) {
		fprintf(stderr, "usage: vpmustat_seed DIR\n");
		return (2);
	}
	dir = argv[1];
	load_addresses();

	begin("\x01\x00\x00\x00");			/* --elf */
	profile();
	save("profile_elf");
	memcpy(buf, "\x00\x05\x00\x00", 4);		/* no symbols, --top 5 */
	save("profile_nosym");
	memcpy(buf, "\x03\x00\x01\x00", 4);		/* --elf -c 1 */
	save("profile_cpu1");
	memcpy(buf, "\x0d\x03\x00\x01", 4);		/* --elf --event (the 2nd) --dump */
	save("profile_event_dump");

	begin("\x01\x00\x00\x00");
	initialize();
	pmc_dyn(0x100, "instructions", 0);		/* -N */
	for (i = 0; i < 8; i++) {
		record(VPMU_PMCLOG_CALLCHAIN);
		ev.u.callchain.pmcid = 0x100;
		ev.u.callchain.npc = 1;
		ev.u.callchain.pc[0] = fa[i % 2 ? F_HOT : F_COLD] + i;
		add();
	}
	closelog();
	save("nochain");

	begin("\x01\x00\x00\x00");
	initialize();
	pmc_dyn(0x100, "instructions", VPMU_F_CALLCHAIN);
	record(VPMU_PMCLOG_CALLCHAIN);
	ev.u.callchain.pmcid = 0x100;
	ev.u.callchain.npc = VPMU_PMCLOG_CALLCHAIN_MAX;
	for (i = 0; i < VPMU_PMCLOG_CALLCHAIN_MAX; i++)
		ev.u.callchain.pc[i] = fa[i == 0 ? F_HOT : F_WORK] + 0x10 + i % 4;
	add();
	record(VPMU_PMCLOG_CALLCHAIN);
	ev.u.callchain.pmcid = 0x100;
	add();						/* npc 0 */
	closelog();
	save("deep");

	begin("\x00\x00\x00\x00");
	initialize();
	for (i = 0; i < 4; i++)
		sample(0x2ff, 0, true, F_HOT, i);
	closelog();
	save("unnamed");

	begin("\x01\x00\x00\x00");
	initialize();
	pmc_dyn(0x100, "instructions", VPMU_F_CALLCHAIN);
	closelog();
	save("no_samples");

	begin("\x00\x00\x00\x00");
	sample(0x100, 0, false, F_HOT, 0);
	initialize();
	pmc_dyn(0x100, "instructions", VPMU_F_CALLCHAIN);
	sample(0x100, 0, false, F_COLD, 0);
	save("no_initialize");

	begin("\x01\x00\x00\x00");
	profile();
	used -= 16 + 16 + 4;	/* CLOSELOG, DROPNOTIFY, a CALLCHAIN's end */
	save("cut");
	begin("\x01\x00\x00\x00");
	initialize();
	pmc_dyn(0x100, "instructions", VPMU_F_CALLCHAIN);
	sample(0x100, 0, false, F_HOT, 0);
	at = used;
	sample(0x100, 0, false, F_HOT, 0);
	buf[at + 2] = 4;		/* type 4: unknown */
	sample(0x100, 0, false, F_HOT, 0);
	save("bad");

	begin("\x01\x00\x00\x00");
	initialize();
	pmc_dyn(0x100, "instructions", VPMU_F_CALLCHAIN);
	sample(0x100, 0, false, F_HOT, 0);
	closelog();
	sample(0x100, 0, false, F_COLD, 0);
	closelog();
	save("after_close");

	begin("\x00\x00\x00\x00");
	initialize();
	pmc_dyn(0x100, "<b>&\"'x;y z\x01", VPMU_F_CALLCHAIN);
	pmc_dyn(0x101, "", VPMU_F_CALLCHAIN);
	for (i = 0; i < 3; i++) {
		sample(0x100, 0, false, F_HOT, i);
		sample(0x101, 0, false, F_COLD, i);
	}
	closelog();
	save("names");
	return (0);
}
