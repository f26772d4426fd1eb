/*
 * msr_safe.c -- the runtime's #GP fixup on every vCPU at once.
 * RDMSR/WRMSR of 0xdeadbeef (no such MSR: KVM, or vpmu-run for an MSR
 * exit libvpmu leaves, injects #GP) must report VG_GP with error code 0 and
 * leave the value 0, a hundred times over (the handler's stack use does
 * not grow); a reserved EFER bit must #GP on write; IA32_TSC (0x10) must
 * read without a fault, between two RDTSCs; and unsafe RDMSR of EFER still
 * works after all that.  vCPU 0 exits 0 after the barrier, any failure
 * exits 1 at once.
 */
#include <vpmu-guest/runtime.h>

#define NO_MSR	0xdeadbeefu

#define CHECK(cond, ...) do {						\
	if (!(cond)) {							\
		vg_printf("vCPU %u: FAIL %s: ", cpu, #cond);		\
		vg_printf(__VA_ARGS__);					\
		vg_putc('\n');						\
		vg_exit(1);						\
	}								\
} while (0)

int
main(unsigned cpu)
{
	uint64_t v, t0, t1, efer;
	int f, i;

	for (i = 0; i < 100; i++) {
		v = 1;
		f = vg_rdmsr_safe(NO_MSR, &v);
		CHECK(f == VG_GP, "RDMSR %#x: vector %d", NO_MSR, f);
		CHECK(v == 0, "RDMSR %#x left %#lx", NO_MSR, (unsigned long)v);
		CHECK(vg_fault_error() == 0, "error code %#lx",
		    (unsigned long)vg_fault_error());
		f = vg_wrmsr_safe(NO_MSR, 0x1234);
		CHECK(f == VG_GP, "WRMSR %#x: vector %d", NO_MSR, f);
	}
	efer = vg_rdmsr(VG_MSR_EFER);
	f = vg_wrmsr_safe(VG_MSR_EFER, efer | 1ul << 63);
	CHECK(f == VG_GP, "WRMSR EFER with bit 63: vector %d", f);
	CHECK(vg_rdmsr(VG_MSR_EFER) == efer, "EFER changed");

	t0 = vg_rdtsc();
	f = vg_rdmsr_safe(VG_MSR_TSC, &v);
	t1 = vg_rdtsc();
	CHECK(f == 0, "RDMSR IA32_TSC: vector %d", f);
	CHECK(t0 <= v && v <= t1, "IA32_TSC %lu not in [%lu, %lu]",
	    (unsigned long)v, (unsigned long)t0, (unsigned long)t1);
	f = vg_rdmsr_safe(VG_MSR_EFER, &v);
	CHECK(f == 0 && v == efer, "RDMSR EFER after faults: vector %d", f);

	vg_printf("vCPU %u: msr_safe ok\n", cpu);
	vg_barrier();
	return (0);
}
