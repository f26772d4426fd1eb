/*
 * bench_proto.h -- what bench_guest.c (freestanding) and msr_roundtrip.c
 * (the host) agree on: two ports and the values written to them.  Ports
 * 0xb00 and 0xb04 belong to no device vpmu-run or a PC has (vpmu-run's are
 * 0x3f8, console, and 0xf4, exit).
 */
#ifndef BENCH_PROTO_H
#define BENCH_PROTO_H

#define BENCH_PORT_CTL		0xb00	/* IN: rounds; OUT: round boundaries */
#define BENCH_PORT_DATA		0xb04	/* IN: accesses per batch; OUT: TSC ticks */

#define BENCH_CTL_START		0x10000u	/* | round number */
#define BENCH_CTL_READS_DONE	0x20000u
#define BENCH_CTL_WRITES_DONE	0x30000u
#define BENCH_CTL_KIND(v)	((v) & 0xffff0000u)
#define BENCH_CTL_ROUND(v)	((v) & 0xffffu)

#define BENCH_UNROLL		10	/* accesses per loop iteration */
#define BENCH_STR_(x)		#x
#define BENCH_STR(x)		BENCH_STR_(x)

#define BENCH_MSR_PMC0		0xc1	/* IA32_PMC0 */
#define BENCH_MSR_EVTSEL0	0x186	/* IA32_PERFEVTSEL0 */
/* Instructions retired, USR and OS, EN (bit 22) clear: the counter stays off. */
#define BENCH_EVTSEL		0x0300c0ull

#endif /* BENCH_PROTO_H */
