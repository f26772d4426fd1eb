/*
 * mux_guest.c -- the guest of mux_bench: rounds of one workload whose
 * instruction and branch mix is fixed by hand-written loops, bracketed by
 * port writes at which the host starts and stops its counters; with
 * MUX_CFG_MODEL the guest also programs the model's eight GP counters
 * itself, enables them with one GLOBAL_CTRL write and reads them back with
 * RDMSR.  mux_proto.h has the protocol and the workloads.
 *
 * Only instructions the exact source can step one by one on this
 * project's machines (kvm_pvm): no OUT, fences or string instructions
 * inside a workload.
 */
#include <vpmu-guest/runtime.h>

#include "mux_proto.h"

#define SEL(ev, um, u, o, e, i, c, name)	MUX_SEL_OF(ev, um, u, o, e, i, c),
static const uint64_t evtsel[MUX_NEV] = { MUX_EVENTS(SEL) };
#undef SEL

static void
steady(uint64_t iters)
{
	uint64_t a = 1, b = 3, d = 5;

	__asm__ volatile(
	    "1:\n\t"
	    "add %%rbx, %%rax\n\t"
	    "xor %%rax, %%rdx\n\t"
	    "nop\n\t"
	    "nop\n\t"
	    "loop 1b"
	    : "+c"(iters), "+a"(a), "+b"(b), "+d"(d) : : "cc");
}

/* Every instruction a branch. */
static void
branchy(uint64_t iters)
{
	__asm__ volatile(
	    "1:\n\t"
	    "jmp 2f\n"
	    "2:\n\t"
	    "jmp 3f\n"
	    "3:\n\t"
	    "loop 1b"
	    : "+c"(iters) : : "cc");
}

/* One branch in twenty instructions. */
static void
straight(uint64_t iters)
{
	uint64_t a = 1, b = 3, d = 5;

	__asm__ volatile(
	    "1:\n\t"
	    ".rept 6\n\t"
	    "add %%rbx, %%rax\n\t"
	    "xor %%rax, %%rdx\n\t"
	    "nop\n\t"
	    ".endr\n\t"
	    "nop\n\t"
	    "loop 1b"
	    : "+c"(iters), "+a"(a), "+b"(b), "+d"(d) : : "cc");
}

static uint64_t
atleast1(uint64_t n)
{
	return (n == 0 ? 1 : n);
}

static void
send64(uint64_t v)
{
	vg_outl(MUX_PORT_DATA, (uint32_t)v);
	vg_outl(MUX_PORT_DATA, (uint32_t)(v >> 32));
}

int
main(unsigned cpu)
{
	uint32_t cfg, n, r, i;
	bool model;

	if (cpu != 0)
		return (0);
	cfg = vg_inl(MUX_PORT_CTL);
	n = vg_inl(MUX_PORT_DATA);
	model = (cfg & MUX_CFG_MODEL) != 0;
	for (r = 0; r < MUX_CFG_ROUNDS(cfg); r++) {
		if (model) {
			vg_wrmsr(MUX_MSR_GLOBAL_CTRL, 0);
			for (i = 0; i < MUX_MODEL_GP; i++) {
				vg_wrmsr(MUX_MSR_EVTSEL0 + i, evtsel[i]);
				vg_wrmsr(MUX_MSR_PMC0 + i, 0);
			}
		}
		vg_outl(MUX_PORT_CTL, MUX_CTL_START | r);
		if (model)
			vg_wrmsr(MUX_MSR_GLOBAL_CTRL, (1u << MUX_MODEL_GP) - 1);
		if (cfg & MUX_CFG_PHASED) {
			branchy(atleast1(n / 2 / MUX_PHASE_A_LEN));
			straight(atleast1(n / 2 / MUX_PHASE_B_LEN));
		} else
			steady(atleast1(n / MUX_STEADY_LEN));
		if (model)
			vg_wrmsr(MUX_MSR_GLOBAL_CTRL, 0);
		vg_outl(MUX_PORT_CTL, MUX_CTL_END | r);
		if (model)
			for (i = 0; i < MUX_MODEL_GP; i++)
				send64(vg_rdmsr(MUX_MSR_PMC0 + i));
	}
	return (0);
}
