/*
 * pv_dev.c -- the open descriptors of the channel's devices (perfmon(4),
 * pctr(4)): what open(2) gives a guest process, numbered per device from 1,
 * valid only for the process that opened it.  The devices keep their own
 * rules (who may open, what closing does); the table is this file's.
 */
#include <errno.h>
#include <stdint.h>
#include <stdlib.h>

#include "pvchan.h"

int
vpmu__pv_fd_open(struct pv_fdtab *t, const struct pv_call *c, const struct vpmu_pv_open *o,
    struct pv_fd **fp)
{
	struct pv_fd *f;

	if (t->nextfd == 0)
		t->nextfd = 1;
	if (t->nextfd == INT32_MAX)
		return (ENOSPC);		/* descriptors are never reused */
	if ((f = calloc(1, sizeof(*f))) == NULL)
		return (ENOMEM);
	f->fd = t->nextfd++;
	f->pid = c->cred.pid;
	f->fflags = o->fflags;
	f->minor = o->minor;
	f->next = t->fds;
	t->fds = f;
	*fp = f;
	return (0);
}

struct pv_fd *
vpmu__pv_fd_find(const struct pv_fdtab *t, int32_t fd, int32_t pid)
{
	struct pv_fd *f;

	for (f = t->fds; f != NULL; f = f->next)
		if (f->fd == fd && (pid == 0 || f->pid == pid))
			return (f);
	return (NULL);
}

struct pv_fd *
vpmu__pv_fd_of_pid(const struct pv_fdtab *t, int32_t pid)
{
	struct pv_fd *f;

	for (f = t->fds; f != NULL; f = f->next)
		if (pid == 0 || f->pid == pid)
			return (f);
	return (NULL);
}

void
vpmu__pv_fd_free(struct pv_fdtab *t, struct pv_fd *f)
{
	struct pv_fd **pp;

	for (pp = &t->fds; *pp != NULL; pp = &(*pp)->next)
		if (*pp == f) {
			*pp = f->next;
			break;
		}
	free(f);
}
