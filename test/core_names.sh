#!/bin/sh
# core_names.sh OBJECT... -- the arrows inside the core library point one
# way: the objects of libvpmu/ use no symbol defined by the objects of
# guest-api/ (the paravirtual channel and vpmu_vm_create(), which hands
# the core the layers above it as data: guest-api/vm_create.c).  The
# objects are vpmu_core's, as
# CMake lists them; guest-api's are told by their path.  core_alone.sh
# holds the whole core to naming nothing of the host side.  Exit 77 (skip)
# without nm.
set -e
if ! command -v nm >/dev/null 2>&1; then
	echo "SKIP: nm is not installed"
	exit 77
fi
[ $# -gt 0 ] || { echo "usage: core_names.sh OBJECT..." >&2; exit 2; }
tmp=${TMPDIR:-/tmp}/core_names.$$
trap 'rm -f "$tmp".core "$tmp".api "$tmp".und' EXIT
: >"$tmp".core
: >"$tmp".api
: >"$tmp".und
for o in "$@"; do
	case $o in
	*/guest-api/*)
		nm -g --defined-only "$o" | awk 'NF == 3 { print $3 }' >>"$tmp".api ;;
	*)
		nm -g --defined-only "$o" | awk 'NF == 3 { print $3 }' >>"$tmp".core
		nm -u "$o" | awk -v o="${o##*/}" 'NF == 2 { print $2, o }' >>"$tmp".und ;;
	esac
done
[ -s "$tmp".core ] && [ -s "$tmp".api ] || { echo "FAIL: no objects of libvpmu/ or of guest-api/"; exit 1; }
bad=$(awk 'FILENAME == ARGV[1] { api[$1] = 1; next }
	($1 in api) { print "  " $2 ": " $1 }' \
	"$tmp".api "$tmp".und)
if [ -n "$bad" ]; then
	echo "FAIL: libvpmu/ names what guest-api/ defines:"
	echo "$bad"
	exit 1
fi
echo "ok: libvpmu/ ($(sort -u "$tmp".core | wc -l) symbols) names nothing of guest-api/"
