/*
 * check.h -- the line-by-line checks of the channel's test programs: each
 * CHECK counts, a failure prints "FAIL name (line N): detail", and the
 * program ends with one summary line of nok of nall (expect.sh matches it).
 * Guests print with vg_printf; a host program defines CHECK_PRINTF printf
 * before including this.
 */
#ifndef VPMU_TEST_PV_CHECK_H
#define VPMU_TEST_PV_CHECK_H

#include <stdint.h>

#ifndef CHECK_PRINTF
#define CHECK_PRINTF	vg_printf
#endif

static unsigned nok, nall;

#define CHECK(name, cond, ...) do {					\
	nall++;								\
	if (cond)							\
		nok++;							\
	else {								\
		CHECK_PRINTF("FAIL %s (line %d): ", name, __LINE__);	\
		CHECK_PRINTF(__VA_ARGS__);				\
		CHECK_PRINTF("\n");					\
	}								\
} while (0)

#define CHECK_EQ(name, a, b) do {					\
	uint64_t _a = (uint64_t)(a), _b = (uint64_t)(b);		\
	CHECK(name, _a == _b, "%s = %lu (%#lx), want %lu", #a, (unsigned long)_a, \
	    (unsigned long)_a, (unsigned long)_b);			\
} while (0)

#ifdef VPMU_GUEST_DEV_H
/* The errno of a device call (<vpmu-guest/dev.h>): 0 for success. */
static inline int
E(int r)
{
	return (r < 0 ? vpmu_dev_errno() : 0);
}

#define CHECK_ERR(name, call, want) do {				\
	int _e = E(call);						\
	CHECK(name, _e == (want), "errno %d, want %d", _e, (want));	\
} while (0)
#endif

#endif /* VPMU_TEST_PV_CHECK_H */
