/*
 * logread.c -- a pmclog log read back, record by record, with libvpmu's
 * reader (vpmu_pmclog_read()), each record into the profile (profile.c);
 * with --dump, each record printed as it comes.
 *
 * The log is read through a buffer reader fed here, whatever the input is:
 * at its end, the bytes fed and not returned as records are a record cut
 * short, from a pipe as from a file.
 */
#include <errno.h>
#include <inttypes.h>
#include <poll.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "profile_internal.h"

/* ---- the record dump ------------------------------------------------------------ */

static void
dump_record(FILE *f, const struct vs_profile *p, const struct vpmu_pmclog_ev *ev)
{
	const char *tn = vpmu_pmclog_type_name(ev->type);
	char sym[160];
	uint32_t i;

	fprintf(f, "0x%08" PRIx64 " %-14s tsc=%" PRIu64, ev->offset, tn ? tn : "?", ev->tsc);
	switch (ev->type) {
	case VPMU_PMCLOG_INITIALIZE:
		fprintf(f, " version=%#010" PRIx32 " cputype=%#" PRIx32 " tsc_freq=%"
		    PRIu64 " time=%" PRId64 ".%09" PRId64 " cpuid=\"%s\"",
		    ev->u.initialize.version, ev->u.initialize.cputype,
		    ev->u.initialize.tsc_freq, ev->u.initialize.sec,
		    ev->u.initialize.nsec, ev->u.initialize.cpuid);
		break;
	case VPMU_PMCLOG_PMCALLOCATE:
		fprintf(f, " pmcid=%#" PRIx32 " event=%#" PRIx32 " flags=%#" PRIx32
		    " rate=%" PRIu64, ev->u.pmcallocate.pmcid, ev->u.pmcallocate.event,
		    ev->u.pmcallocate.flags, ev->u.pmcallocate.rate);
		break;
	case VPMU_PMCLOG_PMCALLOCATEDYN:
		fprintf(f, " pmcid=%#" PRIx32 " event=%#" PRIx32 " flags=%#" PRIx32
		    " name=\"%s\"", ev->u.pmcallocatedyn.pmcid,
		    ev->u.pmcallocatedyn.event, ev->u.pmcallocatedyn.flags,
		    ev->u.pmcallocatedyn.evname);
		break;
	case VPMU_PMCLOG_PMCATTACH:
		fprintf(f, " pmcid=%#" PRIx32 " pid=%" PRIu32 " path=\"%s\"",
		    ev->u.pmcattach.pmcid, ev->u.pmcattach.pid, ev->u.pmcattach.path);
		break;
	case VPMU_PMCLOG_PMCDETACH:
		fprintf(f, " pmcid=%#" PRIx32 " pid=%" PRIu32, ev->u.pmcdetach.pmcid,
		    ev->u.pmcdetach.pid);
		break;
	case VPMU_PMCLOG_PROCCSW:
		fprintf(f, " pmcid=%#" PRIx32 " pid=%" PRIu32 " tid=%" PRIu32
		    " value=%" PRIu64, ev->u.proccsw.pmcid, ev->u.proccsw.pid,
		    ev->u.proccsw.tid, ev->u.proccsw.value);
		break;
	case VPMU_PMCLOG_PROCEXEC:
		fprintf(f, " pid=%" PRIu32 " pmcid=%#" PRIx32 " path=\"%s\"",
		    ev->u.procexec.pid, ev->u.procexec.pmcid, ev->u.procexec.path);
		break;
	case VPMU_PMCLOG_PROCEXIT:
		fprintf(f, " pmcid=%#" PRIx32 " pid=%" PRIu32 " value=%" PRIu64,
		    ev->u.procexit.pmcid, ev->u.procexit.pid, ev->u.procexit.value);
		break;
	case VPMU_PMCLOG_PROCFORK:
		fprintf(f, " oldpid=%" PRIu32 " newpid=%" PRIu32, ev->u.procfork.oldpid,
		    ev->u.procfork.newpid);
		break;
	case VPMU_PMCLOG_USERDATA:
		fprintf(f, " userdata=%#" PRIx32, ev->u.userdata.userdata);
		break;
	case VPMU_PMCLOG_PROC_CREATE:
		fprintf(f, " pid=%" PRIu32 " flags=%#" PRIx32 " pcomm=\"%.*s\"",
		    ev->u.proc_create.pid, ev->u.proc_create.flags,
		    (int)sizeof(ev->u.proc_create.pcomm), ev->u.proc_create.pcomm);
		break;
	case VPMU_PMCLOG_THR_CREATE:
		fprintf(f, " tid=%" PRIu32 " pid=%" PRIu32 " flags=%#" PRIx32
		    " tdname=\"%.*s\"", ev->u.thr_create.tid, ev->u.thr_create.pid,
		    ev->u.thr_create.flags, (int)sizeof(ev->u.thr_create.tdname),
		    ev->u.thr_create.tdname);
		break;
	case VPMU_PMCLOG_MAP_IN:
		fprintf(f, " pid=%" PRId32 " start=%#" PRIx64 " path=\"%s\"",
		    (int32_t)ev->u.map_in.pid, ev->u.map_in.start, ev->u.map_in.path);
		break;
	case VPMU_PMCLOG_CALLCHAIN:
		fprintf(f, " pid=%" PRIu32 " tid=%" PRIu32 " pmcid=%#" PRIx32
		    " cpu=%" PRIu32 " user=%" PRIu32 " npc=%" PRIu32,
		    ev->u.callchain.pid, ev->u.callchain.tid, ev->u.callchain.pmcid,
		    VPMU_PMCLOG_CPUFLAGS_CPU(ev->u.callchain.cpuflags),
		    VPMU_PMCLOG_CPUFLAGS_FLAGS(ev->u.callchain.cpuflags) &
		    VPMU_PMCLOG_CC_F_USERSPACE, ev->u.callchain.npc);
		for (i = 0; i < ev->u.callchain.npc; i++) {
			fprintf(f, "%s%#" PRIx64, i == 0 ? " pc=" : ",", ev->u.callchain.pc[i]);
			/* --elf's names only: the kernel's slide is known at the end */
			if (p->syms != NULL && p->syms->n != 0) {
				vs_symtab_format(p->syms, ev->u.callchain.pc[i], sym, sizeof(sym));
				fprintf(f, "[%s]", sym);
			}
		}
		break;
	default:
		break;
	}
	fputc('\n', f);
}

/* ---- reading ------------------------------------------------------------------------ */


/*
 * The next bytes of fd into the reader: > 0 fed, 0 at the end of the
 * input, -1 on a read error (errno).  A descriptor that would block is
 * waited for.
 */
static ssize_t
feed(vpmu_pmclog_reader *r, int fd, unsigned char *buf, size_t len)
{
	struct pollfd pfd = { .fd = fd, .events = POLLIN };
	ssize_t got;
	int err;

	for (;;) {
		if ((got = read(fd, buf, len)) > 0) {
			if ((err = vpmu_pmclog_feed(r, buf, (size_t)got)) != 0) {
				errno = err;
				return (-1);
			}
			return (got);
		}
		if (got == 0)
			return (0);
		if (errno == EINTR)
			continue;
		if (errno != EAGAIN && errno != EWOULDBLOCK)
			return (-1);
		(void)poll(&pfd, 1, -1);
	}
}

int
vs_profile_read(struct vs_profile *p, int fd, FILE *dump)
{
	enum { CHUNK = 64 * 1024 };
	struct vpmu_pmclog_ev *ev;
	vpmu_pmclog_reader *r;
	unsigned char *buf;
	uint64_t fed = 0, end = 0, last = 0;
	ssize_t got = 1;
	size_t i;
	int err, ret = 0;

	if ((ev = malloc(sizeof(*ev))) == NULL || (buf = malloc(CHUNK)) == NULL)
		vs_oom();
	if ((err = vpmu_pmclog_open_buffer(&r)) != 0) {
		snprintf(p->error, sizeof(p->error), "vpmu_pmclog_open_buffer: %s",
		    strerror(err));
		free(buf);
		free(ev);
		return (-1);
	}
	/* ENODATA (after CLOSELOG) and EAGAIN both mean: feed it, if there is more. */
	for (;;) {
		err = vpmu_pmclog_read(r, ev);
		if (err == 0) {
			end = ev->offset + ev->len;
			last = ev->type;
			if (dump != NULL)
				dump_record(dump, p, ev);
			vs_profile_add_record(p, ev);
			continue;
		}
		if ((err != EAGAIN && err != ENODATA) || got == 0)
			break;
		if ((got = feed(r, fd, buf, CHUNK)) < 0)
			break;
		fed += (uint64_t)got;
	}
	p->closed = last == VPMU_PMCLOG_CLOSELOG;
	if (err != EAGAIN && err != ENODATA) {		/* EBADMSG */
		snprintf(p->error, sizeof(p->error), "%s", vpmu_pmclog_error(r));
		ret = -1;
	} else if (got < 0) {
		snprintf(p->error, sizeof(p->error), "offset %" PRIu64 ": read: %s", fed,
		    strerror(errno));
		ret = -1;
	} else if (fed > end) {
		/* The reader holds a record cut short: say that there was one. */
		snprintf(p->error, sizeof(p->error), "the log ends inside a record: "
		    "%" PRIu64 " bytes after offset %" PRIu64 " are not a whole record",
		    fed - end, end);
		ret = -1;
	}
	vpmu_pmclog_close(r);
	free(buf);
	free(ev);
	if (p->ksyms != NULL)
		vs_ksyms_settle(p->ksyms, p);
	for (i = 0; i < p->nev; i++)
		vs_profile_funcs(p, &p->ev[i]);
	return (ret);
}
