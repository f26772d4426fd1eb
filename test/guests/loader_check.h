/*
 * loader_check.h -- what vpmu-run's loader tests (multiboot_test.c,
 * linux_loader_test.c) share: CHECK(), which names the failed line and
 * the case under way (current) and counts failures, and little-endian
 * accesses to the test's guest RAM (ram).  Each test is its own program.
 */
#ifndef LOADER_CHECK_H
#define LOADER_CHECK_H

#include <stdint.h>
#include <stdio.h>
#include <string.h>

static uint8_t *ram;
static int failures;
static const char *current = "";

#define CHECK(cond) do {						\
	if (!(cond)) {							\
		fprintf(stderr, "%s:%d: %s: FAIL: %s\n", __FILE__,	\
		    __LINE__, current, #cond);				\
		failures++;						\
	}								\
} while (0)

static inline void
put32(uint8_t *p, uint32_t v)
{
	memcpy(p, &v, 4);
}

static inline uint32_t
r32(uint64_t gpa)
{
	uint32_t v;

	memcpy(&v, ram + gpa, 4);
	return (v);
}

static inline uint64_t
r64(uint64_t gpa)
{
	uint64_t v;

	memcpy(&v, ram + gpa, 8);
	return (v);
}

#endif /* LOADER_CHECK_H */
