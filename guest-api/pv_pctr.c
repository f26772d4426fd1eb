/*
 * pv_pctr.c -- the pctr personality of the paravirtual channel (pvchan.h).
 * Placeholder: no operations yet.
 */
#include "pvchan.h"

const struct pv_personality vpmu__pv_pctr = {
	.name = "pctr",
};
