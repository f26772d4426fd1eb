#!/bin/sh
# test_time.sh VPMUSTAT HOT.elf WORKDIR SOURCE
#
# Time-based sampling under KVM (vpmustat(1), "Time events"), with the
# counter source SOURCE counting the guest's own PMU (the time events are
# the core's, whatever the source):
#   - -S cpu-clock -n 1000000 beside -s cpu-clock on hot.elf: every period
#     of the counted run time has a sample or is counted as missed, exactly
#     (samples + missed = count / period), most have a sample, the samples are
#     the guest's kernel-mode RIPs in hot() about nine times in ten (hot.c:
#     90 % of the work), and the counted run time is no more than the run's
#     wall time
#   - -s task-clock: the vCPU's run time, no more than the wall time
#   - a period longer than the run: no sample, and the message says why
# Exit 77 (skip) where vpmustat finds no usable /dev/kvm (VPMU_SKIP_NO_KVM=1).
set -u
vs=$1 elf=$2 dir=$3 src=$4

fail() {
	echo "test_time.sh: FAIL: $*"
	exit 1
}

rm -rf "$dir" && mkdir -p "$dir" || exit 1

VPMU_SKIP_NO_KVM=1 "$vs" --source "$src" --uncounted allow -S cpu-clock -n 1000000 -s cpu-clock -w 0 \
    -O "$dir/t.log" -o "$dir/report.txt" "$elf" >"$dir/run.out" 2>"$dir/run.err"
st=$?
cat "$dir/run.err" "$dir/report.txt"
[ $st -eq 77 ] && { echo "test_time.sh: skipped (no usable /dev/kvm)"; exit 77; }
[ $st -eq 0 ] || fail "-S cpu-clock: status $st, want 0"
line=$(grep "^vpmustat: the guest exited with status 0 after " "$dir/run.err") ||
	fail "no end line"
wall=$(echo "$line" | sed -n 's/.* after \([0-9.]*\) s;.*/\1/p')
samples=$(echo "$line" | sed -n 's/.*; \([0-9]*\) samples,.*/\1/p')
missed=$(echo "$line" | sed -n 's/.*; \([0-9]*\) time periods* without a sample.*/\1/p')
missed=${missed:-0}
count=$(sed -n 's/^  s\/00\/cpu-clock  *\([0-9]*\)$/\1/p' "$dir/report.txt")
[ -n "$wall" ] && [ -n "$samples" ] && [ -n "$count" ] || fail "figures not found"
echo "test_time.sh: $samples samples, $missed missed, $count ns counted, $wall s of wall time"
[ "$samples" -gt 0 ] || fail "no sample"
[ $((samples + missed)) -eq $((count / 1000000)) ] ||
	fail "samples + missed = $((samples + missed)), want count / period = $((count / 1000000))"
# How many periods a run goes past depends on the host's load (a late
# kick, a preempted thread): a figure for test/bench, not a pass/fail; but
# most periods have their sample.
[ "$missed" -le "$samples" ] || fail "$missed of $((samples + missed)) periods missed"
awk -v c="$count" -v w="$wall" 'BEGIN { exit !(c / 1e9 <= w + 0.01) }' ||
	fail "$count ns counted in $wall s"
grep -q "^event cpu-clock: $samples samples (0 in user mode)$" "$dir/report.txt" ||
	fail "not $samples kernel-mode samples in the report"
hot=$(sed -n 's/^ *\([0-9.]*\)  *[0-9]*  *[0-9.]*  *[0-9]*  *hot$/\1/p' "$dir/report.txt")
[ -n "$hot" ] || fail "no hot() in the report"
awk -v h="$hot" 'BEGIN { exit !(h >= 80 && h <= 97) }' || fail "hot() $hot %, want about 90"

# Counting task-clock: the vCPU's run time.
VPMU_SKIP_NO_KVM=1 "$vs" --source "$src" --uncounted allow -s task-clock -w 0 -o "$dir/count.txt" "$elf" \
    >/dev/null 2>"$dir/count.err" || fail "-s task-clock: status $?"
cat "$dir/count.err" "$dir/count.txt"
wall=$(sed -n 's/^vpmustat: the guest exited with status 0 after \([0-9.]*\) s$/\1/p' "$dir/count.err")
count=$(sed -n 's/^  s\/00\/task-clock  *\([0-9]*\)$/\1/p' "$dir/count.txt")
[ -n "$wall" ] && [ -n "$count" ] || fail "-s task-clock: figures not found"
[ "$count" -gt 1000000 ] || fail "-s task-clock: $count ns"
awk -v c="$count" -v w="$wall" 'BEGIN { exit !(c / 1e9 <= w + 0.01) }' ||
	fail "-s task-clock: $count ns counted in $wall s"

# A period longer than the run: no sample, and why.
VPMU_SKIP_NO_KVM=1 "$vs" --source "$src" --uncounted allow -S task-clock -n 100000000000 "$elf" \
    >/dev/null 2>"$dir/none.err"
st=$?
cat "$dir/none.err"
[ $st -eq 0 ] || fail "a long period: status $st"
grep -Eq "^vpmustat: no samples of s/00/task-clock: it counted [1-9][0-9]* ns, less than one period \(-n 100000000000\)$" \
    "$dir/none.err" || fail "a long period: no reason given"
echo "test_time.sh: ok"
exit 0
