/*
 * test_flatlog.c -- write small pmclog logs for vpmustat's tests without a
 * guest (test_no_edges.sh, test_outputs.sh), made by libvpmu's encoder with
 * fixed timestamps, so that every byte is known; and a guest whose run ends
 * badly (test_live.sh):
 *
 *   test_flatlog DIR
 *
 *   DIR/flat.log   INITIALIZE, PMCALLOCATEDYN (pmc 0x100, "instructions",
 *                  with call chains), three CALLCHAIN records one frame
 *                  deep (npc 1: no caller, so no call-graph edge): pc
 *                  0x401000 twice (the second in user mode), 0x402000
 *                  once; CLOSELOG
 *   DIR/empty.log  INITIALIZE, PMCALLOCATEDYN, CLOSELOG: no samples
 *
 *   test_flatlog -o FILE [-N] [-t BYTES] <SAMPLES
 *
 * writes FILE: INITIALIZE, PMCALLOCATEDYN (pmc 0x100, "instructions",
 * VPMU_F_CALLCHAIN unless -N), a CALLCHAIN per line of SAMPLES, CLOSELOG.
 * A line is "CPU PC[,PC...]", the sampled PC first, then the return
 * addresses (numbers as strtoull() reads them with base 0).  -t cuts the
 * last BYTES bytes off the file: a log whose last record is cut short.
 *
 *   test_flatlog -e FILE
 *
 * writes FILE, a guest (a static ELF64 x86-64 executable, one PT_LOAD at
 * 1 MiB, no symbols) that runs a loop of 10000 instructions and halts
 * with interrupts off: a run that ends badly (vpmu-run's status 3).
 */
#include <elf.h>
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
	size_t n = vpmu_pmclog_encode(ev, buf + used, sizeof(buf) - used);

	if (n == 0) {
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

static void
save(const char *dir, const char *name)
{
	char path[4096];

	snprintf(path, sizeof(path), "%s/%s", dir, name);
	write_file(path);
}

/* INITIALIZE and the PMC's name: the start of every log. */
static void
start(uint32_t flags)
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
	ev.u.pmcallocatedyn.flags = flags;
	snprintf(ev.u.pmcallocatedyn.evname, sizeof(ev.u.pmcallocatedyn.evname),
	    "instructions");
	add(&ev);
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
end(const char *dir, const char *name)
{
	closelog();
	save(dir, name);
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

/* test_flatlog -e FILE: the guest that halts. */
static int
halt_guest(const char *path)
{
	static const unsigned char code[] = {
		0xfa,				/* cli */
		0xb9, 0x88, 0x13, 0x00, 0x00,	/* mov $5000, %ecx */
		0xff, 0xc9,			/* 1: dec %ecx */
		0x75, 0xfc,			/* jnz 1b */
		0xf4,				/* hlt */
		0xeb, 0xfd,			/* jmp to the hlt */
	};
	const uint64_t base = 0x100000, off = sizeof(Elf64_Ehdr) + sizeof(Elf64_Phdr);
	Elf64_Ehdr eh;
	Elf64_Phdr ph;

	memset(&eh, 0, sizeof(eh));
	memcpy(eh.e_ident, ELFMAG, SELFMAG);
	eh.e_ident[EI_CLASS] = ELFCLASS64;
	eh.e_ident[EI_DATA] = ELFDATA2LSB;
	eh.e_ident[EI_VERSION] = EV_CURRENT;
	eh.e_type = ET_EXEC;
	eh.e_machine = EM_X86_64;
	eh.e_version = EV_CURRENT;
	eh.e_entry = base + off;
	eh.e_phoff = sizeof(eh);
	eh.e_ehsize = sizeof(eh);
	eh.e_phentsize = sizeof(ph);
	eh.e_phnum = 1;
	memset(&ph, 0, sizeof(ph));
	ph.p_type = PT_LOAD;
	ph.p_flags = PF_R | PF_X;
	ph.p_offset = 0;
	ph.p_vaddr = ph.p_paddr = base;
	ph.p_filesz = ph.p_memsz = off + sizeof(code);
	ph.p_align = 0x1000;
	used = 0;
	memcpy(buf, &eh, sizeof(eh));
	memcpy(buf + sizeof(eh), &ph, sizeof(ph));
	memcpy(buf + off, code, sizeof(code));
	used = off + sizeof(code);
	write_file(path);
	return (0);
}

/* test_flatlog -o FILE [-N] [-t BYTES]: samples from standard input. */
static int
from_text(int argc, char **argv)
{
	static uint64_t pc[VPMU_PMCLOG_CALLCHAIN_MAX];
	const char *out = NULL;
	unsigned long cut = 0;
	uint32_t flags = VPMU_F_CALLCHAIN, npc;
	unsigned long long cpu;
	char line[8192], *s, *end;
	uint64_t tsc = 1100;
	int ch;

	while ((ch = getopt(argc, argv, "e:o:Nt:")) != -1)
		switch (ch) {
		case 'e':
			return (halt_guest(optarg));
		case 'o':
			out = optarg;
			break;
		case 'N':
			flags = 0;
			break;
		case 't':
			cut = strtoul(optarg, NULL, 0);
			break;
		default:
			return (2);
		}
	if (out == NULL || optind != argc) {
		fprintf(stderr, "usage: test_flatlog -o FILE [-N] [-t BYTES] <SAMPLES\n");
		return (2);
	}
	start(flags);
	while (fgets(line, sizeof(line), stdin) != NULL) {
		cpu = strtoull(line, &s, 0);
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
		sample((uint32_t)cpu, 0, pc, npc, tsc++);
	}
	closelog();
	if (cut > used) {
		fprintf(stderr, "test_flatlog: -t %lu: the log has %zu bytes\n", cut, used);
		return (1);
	}
	used -= cut;
	write_file(out);
	return (0);
}

int
main(int argc, char **argv)
{
	static const struct { uint64_t pc; uint32_t flags; } leaf[] = {
		{ 0x401000, 0 }, { 0x401000, VPMU_PMCLOG_CC_F_USERSPACE }, { 0x402000, 0 }
	};
	unsigned i;

	if (argc > 1 && argv[1][0] == '-')
		return (from_text(argc, argv));
	if (argc != 2) {
		fprintf(stderr, "usage: test_flatlog DIR\n"
		    "       test_flatlog -o FILE [-N] [-t BYTES] <SAMPLES\n"
		    "       test_flatlog -e FILE\n");
		return (2);
	}
	start(VPMU_F_CALLCHAIN);
	for (i = 0; i < sizeof(leaf) / sizeof(leaf[0]); i++)
		sample(0, leaf[i].flags, &leaf[i].pc, 1, 1100 + i);
	end(argv[1], "flat.log");
	start(VPMU_F_CALLCHAIN);
	end(argv[1], "empty.log");
	return (0);
}
