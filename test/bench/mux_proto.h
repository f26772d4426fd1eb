/*
 * mux_proto.h -- what mux_guest.c (freestanding) and mux_bench.c (the
 * host) agree on: two ports, the values written to them, the workloads and
 * the sixteen virtual counters of the multiplexing benchmark (issue 4).
 *
 * Ports 0xb10 and 0xb14 belong to no device vpmu-run, msr_roundtrip or a PC
 * has.
 *
 *   IN  0xb10          MUX_CFG_*: workload, model counters or not, rounds
 *   IN  0xb14          instructions per round (about; the loops round it)
 *   per round r:
 *     [model] GLOBAL_CTRL = 0; PERFEVTSELi = mux_evtsel(i); PMCi = 0, i < 8
 *     OUT 0xb10 = MUX_CTL_START | r   host: starts its counters (SC PMCs)
 *     [model] GLOBAL_CTRL = 0xff      one write: the 8 counters are a group
 *     the workload
 *     [model] GLOBAL_CTRL = 0
 *     OUT 0xb10 = MUX_CTL_END | r     host: stops and reads its counters
 *     [model] OUT 0xb14 x 16: RDMSR IA32_PMC0..7, low then high dword
 *   return 0 (vg_exit through port 0xf4)
 */
#ifndef MUX_PROTO_H
#define MUX_PROTO_H

#define MUX_PORT_CTL		0xb10
#define MUX_PORT_DATA		0xb14

/* IN MUX_PORT_CTL */
#define MUX_CFG_PHASED		0x1u		/* else the steady workload */
#define MUX_CFG_MODEL		0x2u		/* program the model's 8 GP counters */
#define MUX_CFG_ROUNDS(v)	(((v) >> 16) & 0xffffu)
#define MUX_CFG_MAKE(phased, model, rounds) \
	(((phased) ? MUX_CFG_PHASED : 0u) | ((model) ? MUX_CFG_MODEL : 0u) | \
	 ((unsigned)(rounds) << 16))

/* OUT MUX_PORT_CTL */
#define MUX_CTL_START		0x10000u	/* | round */
#define MUX_CTL_END		0x20000u	/* | round */
#define MUX_CTL_KIND(v)		((v) & 0xffff0000u)
#define MUX_CTL_ROUND(v)	((v) & 0xffffu)

/*
 * The workloads, per round of about N instructions (mux_guest.c):
 *   steady   N/5 x { add; xor; nop; nop; loop }          1 branch in 5
 *   phased   N/6 x { jmp; jmp; loop }                     every one a branch,
 *            then N/40 x { 6 x (add; xor; nop); nop; loop }  1 branch in 20
 */
#define MUX_STEADY_LEN		5
#define MUX_PHASE_A_LEN		3
#define MUX_PHASE_B_LEN		20

/* Intel architectural MSRs the model counters use. */
#define MUX_MSR_PMC0		0xc1
#define MUX_MSR_EVTSEL0		0x186
#define MUX_MSR_GLOBAL_CTRL	0x38f
#define MUX_MODEL_GP		8

/* Event select bits (SDM Vol. 3B 20.2.1.1). */
#define MUX_SEL_USR		(1u << 16)
#define MUX_SEL_OS		(1u << 17)
#define MUX_SEL_EDGE		(1u << 18)
#define MUX_SEL_EN		(1u << 22)
#define MUX_SEL_INV		(1u << 23)
#define MUX_SEL_CMASK(c)	((unsigned)(c) << 24)

/*
 * The sixteen virtual counters, as Intel event selects: event, umask,
 * USR, OS, EDGE, INV, CMASK.  The first eight are the 8-counter set (and
 * the model's IA32_PMC0..7).  With the exact source at CPI 3 (mux_bench
 * sets it; ref-cycles at 2 per instruction) the counts differ per row:
 * CMASK 1 on instructions counts the cycle each instruction retires in,
 * INV the other two; CMASK 2 is never reached (at most one event per
 * cycle) and USR counts nothing because the guest never runs at CPL 3 (the
 * host cannot step CPL 3 code): those four rows are 0 in truth and must be
 * 0 multiplexed.
 */
#define MUX_NEV			16
#define MUX_EVENTS(X)							\
	/* ev    um  U  O  E  I  C */					\
	X(0xc0, 0x00, 1, 1, 0, 0, 0, "instructions")			\
	X(0xc4, 0x00, 1, 1, 0, 0, 0, "branches")			\
	X(0x3c, 0x00, 1, 1, 0, 0, 0, "cycles")				\
	X(0xc0, 0x00, 0, 1, 0, 0, 0, "instructions:o")			\
	X(0xc4, 0x00, 0, 1, 0, 0, 1, "branches:o cmask=1")		\
	X(0x3c, 0x00, 0, 1, 0, 0, 2, "cycles:o cmask=2")		\
	X(0xc0, 0x00, 1, 0, 0, 0, 0, "instructions:u")			\
	X(0xc0, 0x00, 0, 1, 0, 1, 1, "instructions:o cmask=1 inv")	\
	X(0xc0, 0x00, 1, 1, 1, 0, 0, "instructions edge")		\
	X(0xc4, 0x00, 1, 1, 0, 1, 1, "branches cmask=1 inv")		\
	X(0x3c, 0x00, 1, 0, 0, 0, 0, "cycles:u")			\
	X(0x3c, 0x01, 1, 1, 0, 0, 0, "ref-cycles")			\
	X(0xc4, 0x00, 1, 0, 0, 0, 0, "branches:u")			\
	X(0xc0, 0x00, 1, 1, 0, 0, 1, "instructions cmask=1")		\
	X(0xc4, 0x00, 0, 1, 1, 0, 0, "branches:o edge")			\
	X(0x3c, 0x00, 0, 1, 0, 0, 1, "cycles:o cmask=1")

/* The event select of counter i (EN set, no INT). */
#define MUX_SEL_OF(ev, um, u, o, e, i, c)				\
	((ev) | (um) << 8 | ((u) ? MUX_SEL_USR : 0u) | ((o) ? MUX_SEL_OS : 0u) | \
	 ((e) ? MUX_SEL_EDGE : 0u) | ((i) ? MUX_SEL_INV : 0u) | MUX_SEL_CMASK(c) | \
	 MUX_SEL_EN)

#endif /* MUX_PROTO_H */
