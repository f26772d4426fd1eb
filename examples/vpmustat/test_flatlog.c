/*
 * test_flatlog.c -- write small pmclog logs for vpmustat's tests without a
 * guest (test_outputs.sh), made by libvpmu's encoder with fixed
 * timestamps, so that every byte is known:
 *
 *   test_flatlog -o FILE [-N] [-r RATE] [-p PATH] [-m IMAGE [-u WORD]...] [-e WORD]...
 *       [-t BYTES] <SAMPLES
 *
 * writes FILE: INITIALIZE, PMCALLOCATEDYN (pmc 0x100, "instructions",
 * VPMU_F_CALLCHAIN unless -N) -- or with -r, as FreeBSD writes a PMC of
 * a hardware class, PMCALLOCATE (event 0xc0, the sampling rate RATE) --,
 * with -p a PMCATTACH of the PMC to pid 1, PATH (the process's name),
 * with -m a MAP_IN of IMAGE (pid -1, start 0x100000) and a USERDATA per
 * -u WORD after it (vpmustat's record of its image, image.c),
 * a CALLCHAIN per line of SAMPLES (pid 1, tid 1), a USERDATA per -e WORD
 * (as a run records the guest's LSTAR at its end, image.c), CLOSELOG.
 * A line is "CPU[u] PC[,PC...]", the sampled PC first, then the return
 * addresses (numbers as strtoull() reads them with base 0); a "u" right
 * after the CPU marks the sample as taken in user mode.  No lines: a log
 * without samples.  -t cuts the last BYTES bytes off the file: a log
 * whose last record is cut short.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <vpmu/hwpmc.h>
#include <vpmu/pmclog.h>

static unsigned char buf[1 << 20];
static size_t used;

static void
add(const struct vpmu_pmclog_ev *ev)
{
	size_t n;

	if (vpmu_pmclog_encode(ev, buf + used, sizeof(buf) - used, &n) != 0) {
		fprintf(stderr, "test_flatlog: cannot encode type %u\n", ev->type);
		exit(1);
	}
	used += n;
}

static void
write_file(const char *path)
{
	FILE *f;

	if ((f = fopen(path, "wb")) == NULL || fwrite(buf, 1, used, f) != used ||
	    fclose(f) != 0) {
		perror(path);
		exit(1);
	}
}

/* INITIALIZE and the PMC's allocation (and attach): the start of every log. */
static void
start(uint32_t flags, uint64_t rate, const char *path)
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
	ev.tsc = 1001;
	if (rate != 0) {
		ev.type = VPMU_PMCLOG_PMCALLOCATE;
		ev.u.pmcallocate.pmcid = 0x100;
		ev.u.pmcallocate.event = 0xc0;
		ev.u.pmcallocate.flags = flags;
		ev.u.pmcallocate.rate = rate;
	} else {
		ev.type = VPMU_PMCLOG_PMCALLOCATEDYN;
		ev.u.pmcallocatedyn.pmcid = 0x100;
		ev.u.pmcallocatedyn.flags = flags;
		snprintf(ev.u.pmcallocatedyn.evname, sizeof(ev.u.pmcallocatedyn.evname),
		    "instructions");
	}
	add(&ev);
	if (path == NULL)
		return;
	memset(&ev, 0, sizeof(ev));
	ev.type = VPMU_PMCLOG_PMCATTACH;
	ev.tsc = 1002;
	ev.u.pmcattach.pmcid = 0x100;
	ev.u.pmcattach.pid = 1;
	snprintf(ev.u.pmcattach.path, sizeof(ev.u.pmcattach.path), "%s", path);
	add(&ev);
}

/* USERDATA records of words, from tsc on. */
static void
userdata(const uint32_t *words, unsigned n, uint64_t tsc)
{
	struct vpmu_pmclog_ev ev;
	unsigned i;

	for (i = 0; i < n; i++) {
		memset(&ev, 0, sizeof(ev));
		ev.type = VPMU_PMCLOG_USERDATA;
		ev.tsc = tsc + i;
		ev.u.userdata.userdata = words[i];
		add(&ev);
	}
}

/* MAP_IN of image and the words after it. */
static void
image(const char *path, const uint32_t *words, unsigned n)
{
	struct vpmu_pmclog_ev ev;

	memset(&ev, 0, sizeof(ev));
	ev.type = VPMU_PMCLOG_MAP_IN;
	ev.tsc = 1003;
	ev.u.map_in.pid = UINT32_MAX;
	ev.u.map_in.start = 0x100000;
	snprintf(ev.u.map_in.path, sizeof(ev.u.map_in.path), "%s", path);
	add(&ev);
	userdata(words, n, 1004);
}

static void
closelog(void)
{
	struct vpmu_pmclog_ev ev;

	memset(&ev, 0, sizeof(ev));
	ev.type = VPMU_PMCLOG_CLOSELOG;
	ev.tsc = 2000;
	add(&ev);
}

static void
sample(uint32_t cpu, uint32_t flags, const uint64_t *pc, uint32_t npc, uint64_t tsc)
{
	struct vpmu_pmclog_ev ev;

	memset(&ev, 0, sizeof(ev));
	ev.type = VPMU_PMCLOG_CALLCHAIN;
	ev.tsc = tsc;
	ev.u.callchain.pid = 1;
	ev.u.callchain.tid = 1;
	ev.u.callchain.pmcid = 0x100;
	ev.u.callchain.cpuflags = VPMU_PMCLOG_CPUFLAGS(cpu, flags);
	ev.u.callchain.npc = npc;
	memcpy(ev.u.callchain.pc, pc, npc * sizeof(pc[0]));
	add(&ev);
}

int
main(int argc, char **argv)
{
	static uint64_t pc[VPMU_PMCLOG_CALLCHAIN_MAX];
	const char *out = NULL, *path = NULL, *img = NULL;
	uint32_t words[64], ends[64];
	unsigned nwords = 0, nends = 0;
	unsigned long cut = 0;
	uint64_t rate = 0;
	uint32_t flags = VPMU_F_CALLCHAIN, npc, cflags;
	unsigned long long cpu;
	char line[8192], *s, *end;
	uint64_t tsc = 1100;
	int ch;

	while ((ch = getopt(argc, argv, "o:Nr:p:m:u:e:t:")) != -1)
		switch (ch) {
		case 'o':
			out = optarg;
			break;
		case 'N':
			flags = 0;
			break;
		case 'r':
			rate = strtoull(optarg, NULL, 0);
			break;
		case 'p':
			path = optarg;
			break;
		case 'm':
			img = optarg;
			break;
		case 'u':
			if (nwords == 64)
				return (2);
			words[nwords++] = (uint32_t)strtoul(optarg, NULL, 0);
			break;
		case 'e':
			if (nends == 64)
				return (2);
			ends[nends++] = (uint32_t)strtoul(optarg, NULL, 0);
			break;
		case 't':
			cut = strtoul(optarg, NULL, 0);
			break;
		default:
			return (2);
		}
	if (out == NULL || optind != argc) {
		fprintf(stderr, "usage: test_flatlog -o FILE [-N] [-r RATE] [-p PATH] "
		    "[-m IMAGE [-u WORD]...] [-e WORD]... [-t BYTES] <SAMPLES\n");
		return (2);
	}
	start(flags, rate, path);
	if (img != NULL)
		image(img, words, nwords);
	while (fgets(line, sizeof(line), stdin) != NULL) {
		cpu = strtoull(line, &s, 0);
		cflags = 0;
		if (*s == 'u') {
			cflags = VPMU_PMCLOG_CC_F_USERSPACE;
			s++;
		}
		for (npc = 0; npc < VPMU_PMCLOG_CALLCHAIN_MAX; npc++) {
			while (*s == ' ' || *s == ',')
				s++;
			if (*s == '\n' || *s == '\0')
				break;
			pc[npc] = strtoull(s, &end, 0);
			if (end == s) {
				fprintf(stderr, "test_flatlog: bad line: %s", line);
				return (1);
			}
			s = end;
		}
		sample((uint32_t)cpu, cflags, pc, npc, tsc++);
	}
	userdata(ends, nends, tsc);
	closelog();
	if (cut > used) {
		fprintf(stderr, "test_flatlog: -t %lu: the log has %zu bytes\n", cut, used);
		return (1);
	}
	used -= cut;
	write_file(out);
	return (0);
}
