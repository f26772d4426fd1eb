/*
 * error.c -- the one errno table: names and messages for every code a
 * libvpmu function returns, and the names of the few more that the host
 * probe and the perf source meet from the kernel (backends/host*.c and
 * perf*.c print them through vpmu__errname()).
 */
#include <errno.h>
#include <stdio.h>
#include <string.h>

#include "internal.h"

/* The codes a libvpmu function returns: X(code, message). */
#define VPMU_ERRORS(X)							\
	X(EPERM,	"operation not permitted for this caller")	\
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
	X(VPMU_EPROGMISMATCH, "program version mismatch (EPROGMISMATCH)") \
	X(VPMU_EDOOFUS,	"programming error: a log file is required (EDOOFUS)")

/*
 * Codes the kernel gives the host probe and the perf source, named in
 * their reasons but returned by no libvpmu function: X(code).  To
 * vpmu_strerror() and vpmu_errname() they are unknown.
 */
#define VPMU_KERNEL_ERRNOS(X)						\
	X(E2BIG) X(EACCES) X(ENODATA) X(EOVERFLOW)

struct errrow {
	int code;
	const char *name;
	const char *msg;		/* NULL: a VPMU_KERNEL_ERRNOS code */
};

static const struct errrow errtab[] = {
#define VPMU_ERR_ROW(c, m)	{ c, #c, m },
#define VPMU_KERNEL_ROW(c)	{ c, #c, NULL },
	VPMU_ERRORS(VPMU_ERR_ROW)
	VPMU_KERNEL_ERRNOS(VPMU_KERNEL_ROW)
#undef VPMU_KERNEL_ROW
#undef VPMU_ERR_ROW
};

/* err's row, or NULL; a kernel-only code's only if kernel is set. */
static const struct errrow *
errrow(int err, bool kernel)
{
	size_t i;

	for (i = 0; i < VPMU_ARRAY_SIZE(errtab); i++)
		if (errtab[i].code == err)
			return (errtab[i].msg != NULL || kernel ?
			    &errtab[i] : NULL);
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
	r = errrow(err, false);
	return (r != NULL ? r->msg : "unknown error");
}

const char *
vpmu_errname(int err)
{
	const struct errrow *r;

	if (err == 0)
		return ("0");
	r = errrow(err, false);
	return (r != NULL ? errrow_name(r) : "EUNKNOWN");
}

/*
 * "ENOENT" for ENOENT, the kernel-only codes too; any other code is
 * written as "errno 123" to buf.  For the reasons the backends give.
 * Declared for them in backends/host_internal.h; the declaration here
 * stands in for one in internal.h.
 */
const char *vpmu__errname(int err, char *buf, size_t len);

const char *
vpmu__errname(int err, char *buf, size_t len)
{
	const struct errrow *r = errrow(err, true);

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
