#!/bin/sh
# core_alone.sh ARCHIVE -- the core library (libvpmu_core.a) names nothing
# of the host side: every symbol it uses and does not define is libc's,
# pthreads' or the compiler's, never a vpmu one (a backend: the perf and
# exact sources, the source list, the host probe, the KVM glue), Zydis,
# libcpuid, libpfm4 or ioctl().  Exit 77 (skip) without nm.
set -e
a=$1
if ! command -v nm >/dev/null 2>&1; then
	echo "SKIP: nm is not installed"
	exit 77
fi
tmp=${TMPDIR:-/tmp}/core_alone.$$
trap 'rm -f "$tmp".def "$tmp".und' EXIT
nm -g --defined-only "$a" | awk 'NF == 3 { print $3 }' | sort -u >"$tmp".def
nm -u "$a" | awk 'NF == 2 { print $2 }' | sort -u >"$tmp".und
[ -s "$tmp".def ] || { echo "FAIL: $a defines nothing"; exit 1; }
bad=$(comm -23 "$tmp".und "$tmp".def |
    grep -E '^(vpmu|Zydis|ZYDIS|cpuid_|pfm_|ioctl$)' || true)
if [ -n "$bad" ]; then
	echo "FAIL: $a uses, and does not define:"
	echo "$bad"
	exit 1
fi
echo "ok: $(wc -l <"$tmp".def) symbols defined, none used from outside libc"
