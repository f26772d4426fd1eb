/*
 * pv_perfmon.c -- the perfmon personality of the paravirtual channel (pvchan.h).
 * Placeholder: no operations yet.
 */
#include "pvchan.h"

const struct pv_personality vpmu__pv_perfmon = {
	.name = "perfmon",
};
