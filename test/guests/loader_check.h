/*
 * loader_check.h -- what vpmu-run's loader tests (multiboot_test.c,
 * linux_loader_test.c) share: CHECK(), which names the failed line and
 * the case under way (current) and counts failures, and little-endian
 * reads of the test's guest RAM (ram); writes use vpmu-run.h's vr_put*().  Each test is its own program.
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
