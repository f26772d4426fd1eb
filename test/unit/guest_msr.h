/*
 * guest_msr.h -- what a guest gets through the public API, for the unit
 * tests: each macro asserts that the call returned 0 and is the value the
 * guest sees, for the test to compare (cmocka reports the caller's line).
 *
 *   MSR_READ(vm, cpu, msr, valp)   the verdict of an RDMSR (enum
 *                                  vpmu_msr_verdict); the value in *valp
 *   MSR_WRITE(vm, cpu, msr, val)   the verdict of a WRMSR
 *   TAKE_PMI(vm, cpu)              1 if a PMI was pending (now taken), else 0
 */
#ifndef VPMU_TEST_GUEST_MSR_H
#define VPMU_TEST_GUEST_MSR_H

#include <vpmu/model.h>

#define MSR_READ(vm, cpu, msr, valp) __extension__ ({				\
	enum vpmu_msr_verdict vd_ = (enum vpmu_msr_verdict)-1;			\
										\
	assert_int_equal(vpmu_msr_read((vm), (cpu), (msr), (valp), &vd_), 0);	\
	vd_;									\
})
#define MSR_WRITE(vm, cpu, msr, val) __extension__ ({				\
	enum vpmu_msr_verdict vd_ = (enum vpmu_msr_verdict)-1;			\
										\
	assert_int_equal(vpmu_msr_write((vm), (cpu), (msr), (val), &vd_), 0);	\
	vd_;									\
})
#define TAKE_PMI(vm, cpu) __extension__ ({					\
	int pending_ = -1;							\
										\
	assert_int_equal(vpmu_vcpu_take_pmi((vm), (cpu), &pending_), 0);	\
	pending_;								\
})

#endif /* VPMU_TEST_GUEST_MSR_H */
