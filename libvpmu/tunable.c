/*
 * tunable.c -- hwpmc's tunables, their defaults, and the validation hwpmc
 * performs at module load (here: at vpmu_vm_create()), with its messages.
 */
#include <errno.h>
#include <stdarg.h>
#include <string.h>

#include "internal.h"

#define LOGBUFFERSIZE_MAX	(16 * 1024)	/* KB: 16 MB */
#define PCPU_MEM_MAX		(32 * 1024)	/* KB: nbuffers_pcpu * logbuffersize */
#define NSAMPLES_MAX		65535
#define CALLCHAINDEPTH_MAX	512		/* PMC_CALLCHAIN_DEPTH_MAX */

static const struct {
	const char *name;	/* short name */
	const char *sysctl;	/* FreeBSD's full name */
	long def;
	bool rw;		/* writable on a live VM (sysctl read-write) */
} tuntab[VPMU_T_COUNT] = {
	[VPMU_T_CALLCHAINDEPTH] = { "callchaindepth", "kern.hwpmc.callchaindepth", 8, false },
	[VPMU_T_HASHSIZE] = { "hashsize", "kern.hwpmc.hashsize", 16, false },
	[VPMU_T_LOGBUFFERSIZE] = { "logbuffersize", "kern.hwpmc.logbuffersize", 256, false },
	[VPMU_T_MINCOUNT] = { "mincount", "kern.hwpmc.mincount", 1000, true },
	[VPMU_T_MTXPOOLSIZE] = { "mtxpoolsize", "kern.hwpmc.mtxpoolsize", 32, false },
	[VPMU_T_NBUFFERS_PCPU] = { "nbuffers_pcpu", "kern.hwpmc.nbuffers_pcpu", 32, false },
	[VPMU_T_NSAMPLES] = { "nsamples", "kern.hwpmc.nsamples", 512, false },
	[VPMU_T_UNPRIVILEGED_SYSPMCS] = { "unprivileged_syspmcs",
	    "security.bsd.unprivileged_syspmcs", 0, true },
	[VPMU_T_UNPRIVILEGED_PROC_DEBUG] = { "unprivileged_proc_debug",
	    "security.bsd.unprivileged_proc_debug", 1, true },
};

void
vpmu__log(vpmu_log_fn fn, void *arg, int level, const char *fmt, ...)
{
	char buf[512];
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(buf, sizeof(buf), fmt, ap);
	va_end(ap);
	if (fn != NULL)
		fn(level, buf, arg);
	else
		fprintf(stderr, "%s\n", buf);
}

void
vpmu__tunables_default(struct vpmu_tunables *t)
{
	int i;

	for (i = 0; i < VPMU_T_COUNT; i++)
		t->v[i] = tuntab[i].def;
}

int
vpmu__tunable_find(const char *name)
{
	int i;

	if (name == NULL)
		return (-1);
	for (i = 0; i < VPMU_T_COUNT; i++)
		if (strcmp(name, tuntab[i].name) == 0 ||
		    strcmp(name, tuntab[i].sysctl) == 0)
			return (i);
	return (-1);
}

int
vpmu_tunable_get_info(unsigned index, struct vpmu_tunable_info *info)
{
	if (info == NULL)
		return (EINVAL);
	if (index >= VPMU_T_COUNT)
		return (ENOENT);
	info->name = tuntab[index].name;
	info->sysctl = tuntab[index].sysctl;
	info->def = tuntab[index].def;
	info->live = tuntab[index].rw;
	return (0);
}

bool
vpmu__tunable_is_rw(int id)
{
	return (id >= 0 && id < VPMU_T_COUNT && tuntab[id].rw);
}

/*
 * hwpmc's checks, in the order the driver makes them, each with the
 * driver's message (hwpmc(4) DIAGNOSTICS).  Values are ints in the kernel;
 * they are printed the same way here.
 */
void
vpmu__tunables_validate(struct vpmu_tunables *t, vpmu_log_fn fn, void *arg)
{
	long *v = t->v;
	int i;

	/*
	 * The kernel's tunables are ints: a value set as a long is taken as
	 * the int it converts to, before any check (so 2^32 is 0).  The
	 * product below is then of two ints in a long and cannot overflow.
	 */
	for (i = 0; i < VPMU_T_COUNT; i++)
		v[i] = (int)v[i];

	if (v[VPMU_T_HASHSIZE] <= 0) {
		vpmu__log(fn, arg, VPMU_LOG_WARN,
		    "hwpmc: tunable hashsize=%d must be greater than zero.",
		    (int)v[VPMU_T_HASHSIZE]);
		v[VPMU_T_HASHSIZE] = tuntab[VPMU_T_HASHSIZE].def;
	}
	if (v[VPMU_T_NSAMPLES] <= 0 || v[VPMU_T_NSAMPLES] > NSAMPLES_MAX) {
		vpmu__log(fn, arg, VPMU_LOG_WARN,
		    "hwpmc: tunable nsamples=%d out of range.",
		    (int)v[VPMU_T_NSAMPLES]);
		v[VPMU_T_NSAMPLES] = tuntab[VPMU_T_NSAMPLES].def;
	}
	if (v[VPMU_T_CALLCHAINDEPTH] <= 0 ||
	    v[VPMU_T_CALLCHAINDEPTH] > CALLCHAINDEPTH_MAX) {
		vpmu__log(fn, arg, VPMU_LOG_WARN,
		    "hwpmc: tunable \"callchaindepth\"=%d out of range.",
		    (int)v[VPMU_T_CALLCHAINDEPTH]);
		v[VPMU_T_CALLCHAINDEPTH] = tuntab[VPMU_T_CALLCHAINDEPTH].def;
	}
	if (v[VPMU_T_MTXPOOLSIZE] <= 0) {
		vpmu__log(fn, arg, VPMU_LOG_WARN,
		    "hwpmc: tunable mtxpoolsize=%d must be greater than zero.",
		    (int)v[VPMU_T_MTXPOOLSIZE]);
		v[VPMU_T_MTXPOOLSIZE] = tuntab[VPMU_T_MTXPOOLSIZE].def;
	}
	/* The log's tunables (hwpmc_logging.c). */
	if (v[VPMU_T_LOGBUFFERSIZE] <= 0 ||
	    v[VPMU_T_LOGBUFFERSIZE] > LOGBUFFERSIZE_MAX) {
		vpmu__log(fn, arg, VPMU_LOG_WARN,
		    "hwpmc: logbuffersize=%d must be greater than zero and "
		    "less than or equal to %d, resetting to %d.",
		    (int)v[VPMU_T_LOGBUFFERSIZE], LOGBUFFERSIZE_MAX,
		    (int)tuntab[VPMU_T_LOGBUFFERSIZE].def);
		v[VPMU_T_LOGBUFFERSIZE] = tuntab[VPMU_T_LOGBUFFERSIZE].def;
	}
	if (v[VPMU_T_NBUFFERS_PCPU] <= 0) {
		vpmu__log(fn, arg, VPMU_LOG_WARN,
		    "hwpmc: nbuffers_pcpu=%d must be greater than zero, "
		    "resetting to %d.", (int)v[VPMU_T_NBUFFERS_PCPU],
		    (int)tuntab[VPMU_T_NBUFFERS_PCPU].def);
		v[VPMU_T_NBUFFERS_PCPU] = tuntab[VPMU_T_NBUFFERS_PCPU].def;
	}
	if (v[VPMU_T_NBUFFERS_PCPU] * v[VPMU_T_LOGBUFFERSIZE] > PCPU_MEM_MAX) {
		vpmu__log(fn, arg, VPMU_LOG_WARN,
		    "hwpmc: nbuffers_pcpu=%d * logbuffersize=%d exceeds %dMB "
		    "per CPU limit, resetting to defaults (%d * %d).",
		    (int)v[VPMU_T_NBUFFERS_PCPU], (int)v[VPMU_T_LOGBUFFERSIZE],
		    PCPU_MEM_MAX / 1024, (int)tuntab[VPMU_T_NBUFFERS_PCPU].def,
		    (int)tuntab[VPMU_T_LOGBUFFERSIZE].def);
		v[VPMU_T_NBUFFERS_PCPU] = tuntab[VPMU_T_NBUFFERS_PCPU].def;
		v[VPMU_T_LOGBUFFERSIZE] = tuntab[VPMU_T_LOGBUFFERSIZE].def;
	}
	/* Booleans are 0 or 1; mincount below 1 acts as 1 (hwpmc's max(1, ...)). */
	v[VPMU_T_UNPRIVILEGED_SYSPMCS] = v[VPMU_T_UNPRIVILEGED_SYSPMCS] != 0;
	v[VPMU_T_UNPRIVILEGED_PROC_DEBUG] = v[VPMU_T_UNPRIVILEGED_PROC_DEBUG] != 0;
}
