/*
 * bench_guest.c -- the guest of msr_roundtrip: rounds of trapped MSR
 * accesses, each round one batch of RDMSRs of IA32_PMC0 and one batch of
 * WRMSRs of IA32_PERFEVTSEL0, with the round's boundaries told to the host
 * through port I/O so it can time each batch and switch its MSR handler
 * between rounds.
 *
 * The protocol (msr_roundtrip.c is the other side):
 *   IN  0xb00          number of rounds
 *   IN  0xb04          accesses per batch, a multiple of BENCH_UNROLL
 *   per round r:
 *     OUT 0xb00 = BENCH_CTL_START | r       host: choose the handler, start the clock
 *     n x RDMSR 0xC1
 *     OUT 0xb00 = BENCH_CTL_READS_DONE      host: reads' time
 *     n x WRMSR 0x186 = BENCH_EVTSEL (EN clear: counts nothing)
 *     OUT 0xb00 = BENCH_CTL_WRITES_DONE     host: writes' time
 *     OUT 0xb04 x 4: the guest's TSC ticks of the two batches, low then high
 *   return 0 (vg_exit through port 0xf4)
 *
 * The accesses are unrolled BENCH_UNROLL to a loop iteration: on this
 * project's machines (kvm_pvm) guest instructions are emulated at about
 * 1.5 M/s, so loop overhead would otherwise show in the per-access time.
 * RDMSR leaves ECX as it is and WRMSR changes no register, so one asm block
 * repeats the bare instruction.
 */
#include <vpmu-guest/runtime.h>

#include "bench_proto.h"

static void
reads(uint32_t iters)
{
	uint32_t lo, hi;

	while (iters-- > 0)
		__asm__ volatile(".rept " BENCH_STR(BENCH_UNROLL) "\n\trdmsr\n\t.endr"
		    : "=a"(lo), "=d"(hi) : "c"(BENCH_MSR_PMC0) : "memory");
	(void)lo;
	(void)hi;
}

static void
writes(uint32_t iters)
{
	while (iters-- > 0)
		__asm__ volatile(".rept " BENCH_STR(BENCH_UNROLL) "\n\twrmsr\n\t.endr"
		    : : "c"(BENCH_MSR_EVTSEL0), "a"((uint32_t)BENCH_EVTSEL),
		    "d"((uint32_t)(BENCH_EVTSEL >> 32)) : "memory");
}

static void
send64(uint64_t v)
{
	vg_outl(BENCH_PORT_DATA, (uint32_t)v);
	vg_outl(BENCH_PORT_DATA, (uint32_t)(v >> 32));
}

int
main(unsigned cpu)
{
	uint32_t rounds, iters, r;
	uint64_t t0, tr, tw;

	if (cpu != 0)
		return (0);
	rounds = vg_inl(BENCH_PORT_CTL);
	iters = vg_inl(BENCH_PORT_DATA) / BENCH_UNROLL;
	for (r = 0; r < rounds; r++) {
		vg_outl(BENCH_PORT_CTL, BENCH_CTL_START | r);
		t0 = vg_rdtsc();
		reads(iters);
		tr = vg_rdtsc() - t0;
		vg_outl(BENCH_PORT_CTL, BENCH_CTL_READS_DONE);
		t0 = vg_rdtsc();
		writes(iters);
		tw = vg_rdtsc() - t0;
		vg_outl(BENCH_PORT_CTL, BENCH_CTL_WRITES_DONE);
		send64(tr);
		send64(tw);
	}
	return (0);
}
