#!/bin/sh
# expect.sh [-o] STATUS REGEX -- COMMAND [ARG...]
#
# Run COMMAND; pass if it exits with exactly STATUS and its standard error
# (standard output with -o) matches the extended regular expression REGEX.
# REGEX "-" checks nothing; "EMPTY" wants no output at all.  The checked
# stream is passed through, so ctest shows it.  A COMMAND that exits 77 (no
# /dev/kvm, VPMU_SKIP_NO_KVM=1) is a skip unless 77 was expected.
stream=stderr
if [ "$1" = "-o" ]; then
	stream=stdout
	shift
fi
if [ $# -lt 4 ] || [ "$3" != "--" ]; then
	echo "usage: expect.sh [-o] STATUS REGEX -- COMMAND [ARG...]" >&2
	exit 2
fi
want=$1 re=$2
shift 3
out=$(mktemp) || exit 1
trap 'rm -f "$out"' EXIT
if [ "$stream" = stderr ]; then
	"$@" 2>"$out"
else
	"$@" >"$out"
fi
got=$?
cat "$out"
if [ "$got" -eq 77 ] && [ "$want" -ne 77 ]; then
	echo "expect.sh: skipped (status 77)"
	exit 77
fi
if [ "$got" -ne "$want" ]; then
	echo "expect.sh: FAIL: status $got, want $want: $*"
	exit 1
fi
case $re in
-)
	;;
EMPTY)
	if [ -s "$out" ]; then
		echo "expect.sh: FAIL: want no $stream output: $*"
		exit 1
	fi
	;;
*)
	if ! grep -Eq -- "$re" "$out"; then
		echo "expect.sh: FAIL: $stream does not match /$re/: $*"
		exit 1
	fi
	;;
esac
exit 0
