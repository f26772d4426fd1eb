#!/bin/sh
# pmu_mode.sh VPMU_INFO VPMU_RUN GUEST.elf
#
# vpmu-run --pmu-mode kvm and auto agree with vpmu-info's verdict on KVM's
# own vPMU (kvm-passthrough), on any host:
#   usable    kvm runs the guest in kvm mode ("guest PMU mode kvm: ..." in
#             the report, status 0), and so does auto;
#   not       kvm exits 1 with "vpmu-run: --pmu-mode: kvm mode needs a host
#             PMU: REASON" (or "kvm mode is not possible: REASON"), REASON
#             being vpmu-info's; auto runs the guest in trap mode and its
#             report says "guest PMU mode trap: kvm mode is not possible:
#             REASON"; with VPMU_SKIP_NO_PMU=1, kvm exits 77 with
#             "SKIP: --pmu-mode: ..." on standard output.
# Exit 77 (a skip, with the reason) without a usable /dev/kvm.
set -u
info=$1 run=$2 guest=$3
tmp=${TMPDIR:-/tmp}/pmu_mode.$$
trap 'rm -f "$tmp".*' EXIT

fail() {
	echo "pmu_mode.sh: FAIL: $*"
	exit 1
}

line=$("$info" | grep '^  kvm-passthrough ') || fail "vpmu-info has no kvm-passthrough line"
verdict=$(echo "$line" | sed 's/^  kvm-passthrough *//')
case $verdict in
unavailable:*)	usable=; reason=${verdict#unavailable: } ;;
*)		usable=1; reason= ;;
esac
if ! [ -r /dev/kvm ] || ! [ -w /dev/kvm ]; then
	echo "SKIP: no usable /dev/kvm"
	exit 77
fi
echo "kvm-passthrough: $verdict"

"$run" --pmu-mode kvm "$guest" >"$tmp.kvm.out" 2>"$tmp.kvm.err"
kst=$?
"$run" --pmu-mode auto "$guest" >"$tmp.auto.out" 2>"$tmp.auto.err"
ast=$?
VPMU_SKIP_NO_PMU=1 "$run" --pmu-mode kvm "$guest" >"$tmp.skip.out" 2>"$tmp.skip.err"
sst=$?

if [ -n "$usable" ]; then
	[ $kst -eq 0 ] || fail "kvm mode is usable but --pmu-mode kvm exited $kst: $(cat "$tmp.kvm.err")"
	grep -q '^guest PMU mode kvm: ' "$tmp.kvm.err" || fail "no 'guest PMU mode kvm' in the report"
	[ $ast -eq 0 ] || fail "--pmu-mode auto exited $ast"
	grep -q '^guest PMU mode kvm: ' "$tmp.auto.err" || fail "auto did not choose kvm"
	echo "kvm and auto ran in kvm mode"
	exit 0
fi
[ $kst -eq 1 ] || fail "kvm mode is not possible but --pmu-mode kvm exited $kst"
msg=$(grep '^vpmu-run: --pmu-mode: ' "$tmp.kvm.err") || fail "no --pmu-mode message: $(cat "$tmp.kvm.err")"
case $msg in
"vpmu-run: --pmu-mode: kvm mode needs a host PMU: $reason"*|"vpmu-run: --pmu-mode: kvm mode is not possible: $reason"*) ;;
*)	fail "the message does not give vpmu-info's reason: $msg" ;;
esac
[ $ast -eq 0 ] || fail "--pmu-mode auto exited $ast: $(cat "$tmp.auto.err")"
grep -q "^guest PMU mode trap: kvm mode is not possible: $reason" "$tmp.auto.err" ||
    fail "auto's report does not say trap and why: $(grep '^guest PMU mode' "$tmp.auto.err")"
[ $sst -eq 77 ] || fail "VPMU_SKIP_NO_PMU=1 --pmu-mode kvm exited $sst, not 77"
grep -q '^SKIP: --pmu-mode: kvm mode ' "$tmp.skip.out" || fail "no SKIP line"
echo "kvm refused with the reason, auto fell back to trap, the skip works"
exit 0
