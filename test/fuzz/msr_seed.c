/*
 * msr_seed.c -- write a seed corpus for fuzz_msr: for every model of the
 * target's table, with and without multiplexing and on both sources, a
 * guest that programs its counters as a driver would (event selects,
 * fixed control, global control), runs, reads them by RDMSR and RDPMC,
 * lets one overflow, clears its status and asks for the counter report.
 * MSRs and values are spelled out in full (selector 0x8000, raw value), so
 * the seeds do not depend on the target's tables.
 *
 *   msr_seed DIR
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define NMODELS	21		/* fuzz_msr.c's models[] */

struct buf {
	uint8_t b[2048];
	size_t n;
};

static void
put(struct buf *s, uint64_t v, unsigned bytes)
{
	unsigned i;

	for (i = 0; i < bytes && s->n < sizeof(s->b); i++)
		s->b[s->n++] = (uint8_t)(v >> (8 * i));
}

static void
op(struct buf *s, unsigned kind, unsigned cpu)
{
	put(s, kind, 1);
	put(s, cpu, 1);
}

static void
msr(struct buf *s, uint32_t m)
{
	put(s, 0x8000, 2);
	put(s, m, 4);
}

/* WRMSR exit (kind 2) of a raw value. */
static void
wr(struct buf *s, unsigned cpu, uint32_t m, uint64_t v)
{
	op(s, 2, cpu);
	msr(s, m);
	put(s, 0, 1);
	put(s, v, 8);
}

static void
rd(struct buf *s, unsigned cpu, uint32_t m)
{
	op(s, 0, cpu);
	msr(s, m);
}

static void
run(struct buf *s, unsigned cpu, uint16_t us)
{
	op(s, 8, cpu);			/* enter */
	op(s, 6, cpu);			/* an exit after us microseconds */
	put(s, us, 2);
	put(s, 0x80, 1);
}

static void
rdpmc(struct buf *s, unsigned cpu, uint32_t ecx)
{
	op(s, 5, cpu);
	put(s, 0, 1);
	put(s, ecx, 4);
}

static void
intel(struct buf *s, unsigned cpu)
{
	wr(s, cpu, 0x186, 0x43003C);		/* cycles */
	wr(s, cpu, 0x187, 0x5300C0);		/* instructions, INT */
	wr(s, cpu, 0xC2, 0xFFFFFFF0);		/* near the wrap */
	wr(s, cpu, 0x38D, 0xBBB);
	wr(s, cpu, 0x38F, 0x70000000F);
	run(s, cpu, 5000);
	rd(s, cpu, 0xC1);
	rd(s, cpu, 0x309);
	rd(s, cpu, 0x38E);
	rdpmc(s, cpu, 1);
	rdpmc(s, cpu, 1u << 30 | 1);
	wr(s, cpu, 0x390, 0x70000000F);
	wr(s, cpu, 0x4C1, 0x123456789);
	rd(s, cpu, 0x345);
	wr(s, cpu, 0x38F, 0);
	run(s, cpu, 100);
	op(s, 12, cpu);			/* the counter report */
}

static void
amd(struct buf *s, unsigned cpu)
{
	wr(s, cpu, 0xC0010000, 0x430076);	/* cycles */
	wr(s, cpu, 0xC0010202, 0x5300C0);	/* instructions, INT */
	wr(s, cpu, 0xC0010203, 0xFFFFFFFFFFF0);
	wr(s, cpu, 0xC0000301, 0x3F);
	run(s, cpu, 5000);
	rd(s, cpu, 0xC0010004);
	rd(s, cpu, 0xC0010201);
	rd(s, cpu, 0xC0000300);
	rdpmc(s, cpu, 0);
	rdpmc(s, cpu, 5);
	wr(s, cpu, 0xC0000303, 0x5);
	wr(s, cpu, 0xC0000302, 0x3F);
	wr(s, cpu, 0xC0000301, 0);
	run(s, cpu, 100);
	op(s, 12, cpu);
}

int
main(int argc, char **argv)
{
	static const uint8_t cfgs[] = {
		0x00,			/* 1 vCPU, synthetic */
		0x01 | 0x04 | 0x40,	/* 2 vCPUs, 1 host counter, 50 us */
		0x03 | 0x04 | 0x08,	/* 4 vCPUs, 2 host counters, 1 us */
		0x20,			/* exact */
		0x21 | 0x04 | 0xC0,	/* exact, 2 vCPUs, multiplexed, 4 ms */
	};
	char path[512];
	struct buf s;
	unsigned mi, ci, cpu;
	FILE *f;

	if (argc != 2) {
		fprintf(stderr, "usage: msr_seed DIR\n");
		return (2);
	}
	for (mi = 0; mi < NMODELS; mi++)
		for (ci = 0; ci < sizeof(cfgs); ci++) {
			if (ci > 1 && mi % 3 != ci % 3)
				continue;	/* a handful, not every pair */
			memset(&s, 0, sizeof(s));
			put(&s, mi | (ci & 1) << 7, 1);	/* odd: the snapshot */
			put(&s, cfgs[ci], 1);
			for (cpu = 0; cpu < (cfgs[ci] & 3) + 1u && cpu < 2; cpu++)
				if (mi < 5 || (mi >= 9 && mi < 17))
					intel(&s, cpu);
				else
					amd(&s, cpu);
			snprintf(path, sizeof(path), "%s/model%02u-cfg%02x", argv[1], mi,
			    cfgs[ci]);
			if ((f = fopen(path, "wb")) == NULL ||
			    fwrite(s.b, 1, s.n, f) != s.n || fclose(f) != 0) {
				perror(path);
				return (1);
			}
		}
	return (0);
}
