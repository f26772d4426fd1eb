/*
 * conf.h -- the guest PMU conformance suite's shared pieces: named checks
 * with a TAP-like report, and the measured block whose instruction and
 * branch counts are known exactly.
 *
 * Every check prints "ok - NAME" or "not ok - NAME: what differed"; the
 * run ends with "N passed, M failed" and exits with the number of failures.
 * The guest learns its PMU from CPUID only, as a guest on hardware does.
 */
#ifndef CONF_H
#define CONF_H

#include <vpmu-guest/runtime.h>

static unsigned conf_pass, conf_fail;

#define CHECK(name, cond, ...) do {					\
	if (cond) {							\
		conf_pass++;						\
		vg_printf("ok - %s\n", name);				\
	} else {							\
		conf_fail++;						\
		vg_printf("not ok - %s: ", name);			\
		vg_printf(__VA_ARGS__);					\
		vg_printf("\n");					\
	}								\
} while (0)

/* Expect a == b (64-bit), naming both in the failure. */
#define CHECK_EQ(name, a, b) do {					\
	uint64_t _a = (a), _b = (b);					\
	CHECK(name, _a == _b, "%s = 0x%lx, expected 0x%lx", #a,		\
	    (unsigned long)_a, (unsigned long)_b);			\
} while (0)

static inline int
conf_done(void)
{
	vg_printf("%u passed, %u failed\n", conf_pass, conf_fail);
	return (conf_fail > 255 ? 255 : (int)conf_fail);
}

/*
 * The measured block, conf_measure(on_msr, on_val, off_msr, off_val, n):
 *
 *   wrmsr                  on_msr = on_val: starts counting   1  (counted)
 *   mov  n, %rcx                                            1
 *   1: nop; nop; loop 1b                                    3n (n branches)
 *   mov  off_msr, %ecx                                      1
 *   mov  off_lo, %eax                                       1
 *   conf_measure_last:
 *   mov  off_hi, %edx                                       1
 *   wrmsr                  off_msr = off_val: stops (not counted)
 *
 * Counted: 3n + 5 instructions, n branches -- the rule: the WRMSR that
 * enables a counter retires counted, the one that disables it does not.
 * conf_measure_fenced() is the same with "mfence; lfence; loop" as the
 * body: instructions whose single-step trap some hosts fold into the next
 * instruction's, which the exact source must still count.
 */
void conf_measure(uint32_t on_msr, uint64_t on_val, uint32_t off_msr, uint64_t off_val,
    uint64_t n);
void conf_measure_fenced(uint32_t on_msr, uint64_t on_val, uint32_t off_msr,
    uint64_t off_val, uint64_t n);
extern const char conf_measure_last[];

#define MEASURE_INSNS(n)	(3 * (uint64_t)(n) + 5)
#define MEASURE_BRANCHES(n)	((uint64_t)(n))

/*
 * RDPMC of ecx twice, with RDPMC_SPAN_INSNS instructions retired from the
 * first read to the second (the first RDPMC and two MOVs): second - first.
 */
uint64_t conf_rdpmc_span(uint32_t ecx);
#define RDPMC_SPAN_INSNS	3

/* ---- helpers every vendor file uses ---------------------------------------- */

/* Read an MSR that must not fault; a fault is reported and reads 0. */
static inline uint64_t
rd(uint32_t msr)
{
	uint64_t v = 0;

	if (vg_rdmsr_safe(msr, &v) != 0)
		vg_printf("not ok - unexpected #GP reading MSR 0x%x\n", msr), conf_fail++;
	return (v);
}

static inline void
wr(uint32_t msr, uint64_t v)
{
	if (vg_wrmsr_safe(msr, v) != 0)
		vg_printf("not ok - unexpected #GP writing MSR 0x%x <- 0x%lx\n", msr,
		    (unsigned long)v), conf_fail++;
}

static inline int
rd_gp(uint32_t msr)
{
	uint64_t v;

	return (vg_rdmsr_safe(msr, &v) == VG_GP);
}

static inline int
wr_gp(uint32_t msr, uint64_t v)
{
	return (vg_wrmsr_safe(msr, v) == VG_GP);
}

/* Where the last NMI on this vCPU interrupted the guest. */
extern volatile uint64_t conf_nmi_rip[VG_MAX_CPUS];
void conf_nmi_handler(unsigned cpu, struct vg_frame *f);

#endif /* CONF_H */
