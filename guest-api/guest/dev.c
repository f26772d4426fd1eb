/*
 * dev.c -- guest library part (placeholder).
 */
#include <vpmu-guest/pv.h>
