/*
 * test_kvm_stats.c -- finding and reading one counter of KVM's binary
 * statistics (backends/kvm_stats.c) in a file laid out as KVM_GET_STATS_FD
 * gives it: header, id, descriptors (each followed by its name), data.
 * The files are built here in memory (memfd), so no KVM is needed.
 */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>
#include <linux/kvm.h>

#include <cmocka.h>

#include "kvm_stats.h"

#define NAME_SIZE	48
#define DESC_SIZE	(sizeof(struct kvm_stats_desc) + NAME_SIZE)
#define ID_OFF		sizeof(struct kvm_stats_header)
#define DESC_OFF	(ID_OFF + NAME_SIZE)

struct stat_def {
	const char *name;
	uint32_t flags;
	uint16_t size;
	uint64_t value;
};

/* A stats file of n counters; data after the descriptors, in order. */
static int
stats_file(const struct stat_def *d, unsigned n)
{
	uint8_t buf[4096] = { 0 };
	struct kvm_stats_header h = {
		.name_size = NAME_SIZE, .num_desc = n, .id_offset = ID_OFF,
		.desc_offset = DESC_OFF, .data_offset = (uint32_t)(DESC_OFF + n * DESC_SIZE),
	};
	uint32_t off = 0;
	unsigned i;
	int fd;

	memcpy(buf, &h, sizeof(h));
	memcpy(buf + ID_OFF, "kvm-1/vcpu0", 11);
	for (i = 0; i < n; i++) {
		struct kvm_stats_desc *sd = (struct kvm_stats_desc *)(buf + DESC_OFF + i * DESC_SIZE);

		sd->flags = d[i].flags;
		sd->size = d[i].size;
		sd->offset = off;
		strcpy(sd->name, d[i].name);
		memcpy(buf + h.data_offset + off, &d[i].value, 8);
		off += 8u * d[i].size;
	}
	fd = memfd_create("stats", 0);
	assert_true(fd >= 0);
	assert_int_equal(write(fd, buf, h.data_offset + off), (ssize_t)(h.data_offset + off));
	return (fd);
}

static const struct stat_def defs[] = {
	{ "halt_exits", KVM_STATS_TYPE_CUMULATIVE, 1, 7 },
	{ "halt_poll_hist", KVM_STATS_TYPE_LOG_HIST, 1, 9 },
	{ "insn_emulation", KVM_STATS_TYPE_CUMULATIVE, 1, 123456789 },
	{ "guest_mode", KVM_STATS_TYPE_INSTANT | KVM_STATS_UNIT_BOOLEAN, 1, 1 },
};

static void
finds_and_reads_a_counter(void **state)
{
	struct vpmu_kvm_stat s;
	uint64_t v = 0;
	int fd = stats_file(defs, 4);

	(void)state;
	assert_int_equal(vpmu__kvm_stat_attach(fd, "insn_emulation", &s), 0);
	assert_int_equal(s.fd, fd);
	assert_int_equal(vpmu__kvm_stat_read(&s, &v), 0);
	assert_int_equal(v, 123456789);
	/* the value is read anew each time */
	v = 123456790;
	assert_int_equal(pwrite(fd, &v, 8, (off_t)(DESC_OFF + 4 * DESC_SIZE + 16)), 8);
	assert_int_equal(vpmu__kvm_stat_read(&s, &v), 0);
	assert_int_equal(v, 123456790);
	vpmu__kvm_stat_close(&s);
	assert_int_equal(s.fd, -1);
	assert_int_equal(vpmu__kvm_stat_read(&s, &v), EBADF);
	vpmu__kvm_stat_close(&s);		/* twice: nothing */
}

static void
refuses_what_is_not_a_counter(void **state)
{
	struct vpmu_kvm_stat s;
	int fd = stats_file(defs, 4);

	(void)state;
	assert_int_equal(vpmu__kvm_stat_attach(fd, "no_such_stat", &s), ENOENT);
	assert_int_equal(s.fd, -1);
	assert_int_equal(vpmu__kvm_stat_attach(fd, "guest_mode", &s), ENOENT);	/* instant */
	assert_int_equal(vpmu__kvm_stat_attach(fd, "halt_poll_hist", &s), ENOENT);
	assert_int_equal(vpmu__kvm_stat_attach(fd, "insn_emulatio", &s), ENOENT);	/* a prefix */
	assert_int_equal(vpmu__kvm_stat_attach(fd, "halt_exits", &s), 0);
	assert_int_equal(s.off, DESC_OFF + 4 * DESC_SIZE);
	close(fd);
	/* an empty file, and one whose descriptors are cut short */
	fd = memfd_create("empty", 0);
	assert_int_equal(vpmu__kvm_stat_attach(fd, "insn_emulation", &s), EIO);
	close(fd);
	fd = stats_file(defs, 4);
	assert_int_equal(ftruncate(fd, DESC_OFF + DESC_SIZE), 0);
	assert_int_equal(vpmu__kvm_stat_attach(fd, "insn_emulation", &s), EIO);
	close(fd);
	assert_int_equal(vpmu__kvm_stat_attach(-1, "insn_emulation", &s), EINVAL);
}

/* Not a vCPU fd: the ioctl fails and nothing is left open. */
static void
open_needs_a_vcpu(void **state)
{
	struct vpmu_kvm_stat s;
	int fd = memfd_create("not-a-vcpu", 0);

	(void)state;
	assert_int_equal(vpmu__kvm_stat_open(fd, "insn_emulation", &s), ENOTTY);
	assert_int_equal(s.fd, -1);
	close(fd);
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(finds_and_reads_a_counter),
		cmocka_unit_test(refuses_what_is_not_a_counter),
		cmocka_unit_test(open_needs_a_vcpu),
	};

	return (cmocka_run_group_tests(tests, NULL, NULL));
}
