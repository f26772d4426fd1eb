/*
 * pmclog_seed.c -- write a seed corpus for fuzz_pmclog: logs with every
 * record type, made by the encoder, each after the 4 bytes that pick
 * the fuzzer's chunk sizes.
 *
 *   pmclog_seed DIR
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <vpmu/pmclog.h>

static unsigned char buf[64 * 1024];
static size_t used;

static void
add(struct vpmu_pmclog_ev *ev)
{
	size_t n = vpmu_pmclog_encode(ev, buf + used, sizeof(buf) - used);

	if (n == 0) {
		fprintf(stderr, "pmclog_seed: cannot encode type %u\n", ev->type);
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

int
main(int argc, char **argv)
{
	static struct vpmu_pmclog_ev ev;
	static const uint32_t types[] = { 3, 17, 5, 20, 18, 6, 14, 9, 16, 8, 10,
	    11, 13, 2, 15, 12, 19, 7, 16, 1 };
	unsigned i, j;

	if (argc != 2) {
		fprintf(stderr, "usage: pmclog_seed DIR\n");
		return (2);
	}
	memcpy(buf, "\x01\x00\x00\x00", 4);	/* chunk sizes */
	used = 4;
	for (i = 0; i < sizeof(types) / sizeof(types[0]); i++) {
		memset(&ev, 0, sizeof(ev));
		ev.type = types[i];
		ev.tsc = 1000 + i;
		ev.u.callchain.pid = 100 + i;
		ev.u.callchain.npc = 1 + i % 8;
		for (j = 0; j < ev.u.callchain.npc; j++)
			ev.u.callchain.pc[j] = 0x401000 + j;
		strcpy(ev.u.initialize.cpuid, "GenuineIntel-6-55-4");
		if (ev.type == VPMU_PMCLOG_MAP_IN)
			strcpy(ev.u.map_in.path, "/lib/libc.so.7");
		if (ev.type == VPMU_PMCLOG_PMCATTACH)
			strcpy(ev.u.pmcattach.path, "/bin/sh");
		if (ev.type == VPMU_PMCLOG_PROCEXEC)
			strcpy(ev.u.procexec.path, "/usr/bin/make");
		if (ev.type == VPMU_PMCLOG_PMCALLOCATEDYN)
			strcpy(ev.u.pmcallocatedyn.evname, "instructions");
		add(&ev);
	}
	save(argv[1], "all_types");
	memcpy(buf, "\xff\x7f\x31\x9e", 4);	/* other chunk sizes */
	save(argv[1], "all_types_chunked");
	return (0);
}
