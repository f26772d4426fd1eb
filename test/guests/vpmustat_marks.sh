#!/bin/sh
# vpmustat_marks.sh VPMUSTAT MARKS.elf
#
# vpmustat --from-mark / --to-mark on the marks guest (marks.c): PMCs
# started at mark 1 and stopped at mark 2 count exactly the 2N + 8
# instructions between them (N = 1000: 2008), as vpmu-run's marks do; a
# mark the guest never takes leaves them unstarted, and says so; a bad
# number is a usage error; -q sampling between them writes only its files.  Exit 77 (skip) without a usable /dev/kvm.
set -u
vs=$1 elf=$2
fail() { echo "vpmustat_marks.sh: FAIL: $*"; exit 1; }
total() { sed -n 's/^  s\/00\/instructions *\([0-9]*\)$/\1/p'; }
out=$(VPMU_SKIP_NO_KVM=1 "$vs" -s instructions -w 0 --source exact --from-mark 1 \
    --to-mark 2 "$elf" 2>&1)
st=$?
[ $st -eq 77 ] && { echo "vpmustat_marks.sh: skipped (no usable /dev/kvm)"; exit 77; }
echo "$out"
[ $st -eq 0 ] || fail "vpmustat exited $st"
[ "$(echo "$out" | total)" = 2008 ] || fail "from mark 1 to mark 2: not 2008 instructions"
echo "$out" | grep -Eq '^vpmustat: the PMCs counted from mark 1 \(at [0-9.]+ s\) to mark 2 \(at [0-9.]+ s\)$' ||
	fail "the marks are not stated"
out=$("$vs" -s instructions -w 0 --source exact --from-mark 7 "$elf" 2>&1) || fail "--from-mark 7 exited $?"
echo "$out"
[ "$(echo "$out" | total)" = 0 ] || fail "mark 7 never taken, yet instructions counted"
echo "$out" | grep -qxF "vpmustat: the guest never took mark 7 (--from-mark): the PMCs never started" ||
	fail "the mark never taken is not said"
err=$("$vs" -s instructions --from-mark x "$elf" 2>&1)
[ $? -eq 2 ] || fail "--from-mark x: not a usage error"
[ "$err" = "vpmustat: --from-mark x: want a number from 0 to 4294967295
Try 'vpmustat --help' for more information." ] || fail "--from-mark x: $err"
# -q: a run that goes well writes nothing on standard error, its files whole.
dir=$(mktemp -d) || exit 1
err=$("$vs" -q -S instructions -n 101 --tunable mincount=1 --source exact \
    --from-mark 1 --to-mark 2 --folded "$dir/f.txt" "$elf" 2>&1 >/dev/null)
st=$?
[ $st -eq 0 ] || fail "-q: exited $st"
[ -z "$err" ] || fail "-q: standard error not empty: $err"
[ "$(awk '{ n += $NF } END { print n }' "$dir/f.txt")" = 19 ] ||
	fail "-q: not 19 samples (2008 / 101) between the marks in the folded stacks"
rm -rf "$dir"
echo "vpmustat_marks.sh: ok"
