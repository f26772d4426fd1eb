/*
 * error.c -- the one errno table: names and messages for every code a
 * libvpmu function returns or passes on from the kernel (the host probe
 * and the perf source print theirs through vpmu__errname()).
 */
#include <errno.h>
#include <stdio.h>
#include <string.h>

#include "internal.h"

/* The codes a libvpmu function returns: X(code, message). */
#define VPMU_ERRORS(X)							\
	X(EPERM,	"operation not permitted for this caller")	\
	X(EACCES,	"permission denied")				\
	X(E2BIG,	"too many entries")				\
	X(ENODATA,	"no data")					\
	X(EBADMSG,	"malformed data: a bad log or snapshot")	\
	X(EOVERFLOW,	"value too large")				\
	X(EPROTO,	"the vCPU's CPUID does not describe the model")	\
	X(ENOENT,	"no such entry")				\
	X(ESRCH,	"no such process, or the caller owns no PMC")	\
	X(EIO,		"input/output error")				\
	X(ENXIO,	"vCPU absent or disabled")			\
	X(EBADF,	"bad file descriptor")				\
	X(EINTR,	"interrupted")					\
	X(EMFILE,	"too many open files in this process")		\
	X(ENFILE,	"too many open files in the system")		\
	X(EAGAIN,	"resource temporarily unavailable")		\
	X(ENOMEM,	"out of memory")				\
	X(EFAULT,	"bad address")					\
	X(EBUSY,	"resource busy")				\
	X(EEXIST,	"already exists")				\
	X(ENODEV,	"no such device")				\
	X(EINVAL,	"invalid argument")				\
	X(ENOSPC,	"no space left")				\
	X(ENOTTY,	"inappropriate ioctl")				\
	X(ERANGE,	"result out of range")				\
	X(ENOSYS,	"operation not supported by this PMC class")	\
	X(EOPNOTSUPP,	"capability not supported")			\
	X(EPROTONOSUPPORT, "snapshot format version not supported")	\
	X(ENAMETOOLONG,	"path too long")				\
	X(EPIPE,	"broken pipe: the log's reader is gone")	\
	X(VPMU_EPROGMISMATCH, "program version mismatch (EPROGMISMATCH)") \
	X(VPMU_EDOOFUS,	"programming error: a log file is required (EDOOFUS)")

struct errrow {
	int code;
	const char *name;
	const char *msg;
};

static const struct errrow errtab[] = {
#define VPMU_ERR_ROW(c, m)	{ c, #c, m },
	VPMU_ERRORS(VPMU_ERR_ROW)
#undef VPMU_ERR_ROW
};

/* err's row, or NULL. */
static const struct errrow *
errrow(int err)
{
	size_t i;

	for (i = 0; i < VPMU_ARRAY_SIZE(errtab); i++)
		if (errtab[i].code == err)
			return (&errtab[i]);
	return (NULL);
}

/* The row's name without the "VPMU_" of the project's own codes. */
static const char *
errrow_name(const struct errrow *r)
{
	return (strncmp(r->name, "VPMU_", 5) == 0 ? r->name + 5 : r->name);
}

const char *
vpmu_strerror(int err)
{
	const struct errrow *r;

	if (err == 0)
		return ("success");
	r = errrow(err);
	return (r != NULL ? r->msg : "unknown error");
}

const char *
vpmu_errname(int err)
{
	const struct errrow *r;

	if (err == 0)
		return ("0");
	r = errrow(err);
	return (r != NULL ? errrow_name(r) : "EUNKNOWN");
}

/*
 * "ENOENT" for ENOENT; any other code is written as "errno 123" to buf.
 * For the reasons the backends give.
 */
const char *
vpmu__errname(int err, char *buf, size_t len)
{
	const struct errrow *r = errrow(err);

	if (r != NULL)
		return (errrow_name(r));
	snprintf(buf, len, "errno %d", err);
	return (buf);
}

const char *
vpmu_version(void)
{
	return (VPMU_VERSION_STRING);
}
