/*
 * pv_fastpage.c -- the fastpage personality of the paravirtual channel (pvchan.h).
 * Placeholder: no operations yet.
 */
#include "pvchan.h"

const struct pv_personality vpmu__pv_fastpage = {
	.name = "fastpage",
};
