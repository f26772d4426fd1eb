/*
 * error.c -- the one error table: names and messages for every code a
 * libvpmu function returns.
 */
#include <errno.h>
#include <string.h>

#include "internal.h"

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

static const struct {
	int code;
	const char *name;
	const char *msg;
} errtab[] = {
#define VPMU_ERR_ROW(c, m)	{ c, #c, m },
	VPMU_ERRORS(VPMU_ERR_ROW)
#undef VPMU_ERR_ROW
};

const char *
vpmu_strerror(int err)
{
	size_t i;

	if (err == 0)
		return ("success");
	for (i = 0; i < VPMU_ARRAY_SIZE(errtab); i++)
		if (errtab[i].code == err)
			return (errtab[i].msg);
	return ("unknown error");
}

const char *
vpmu_errname(int err)
{
	size_t i;

	if (err == 0)
		return ("0");
	for (i = 0; i < VPMU_ARRAY_SIZE(errtab); i++)
		if (errtab[i].code == err)
			return (strncmp(errtab[i].name, "VPMU_", 5) == 0 ?
			    errtab[i].name + 5 : errtab[i].name);
	return ("EUNKNOWN");
}

const char *
vpmu_version(void)
{
	return (VPMU_VERSION_STRING);
}
