#!/bin/sh
# uncounted.sh VPMU-RUN GUEST: a source that cannot count the model's
# events here (perf without a hardware PMU) is refused before the guest
# runs, with libvpmu's reason, unless --uncounted allow.  On a host with a
# hardware PMU, perf counts and the guest runs.
[ $# -eq 2 ] || { echo "usage: uncounted.sh VPMU-RUN GUEST" >&2; exit 2; }
run=$1 guest=$2
[ -r /dev/kvm ] && [ -w /dev/kvm ] || { echo "SKIP: no usable /dev/kvm"; exit 77; }
err=$(VPMU_SKIP_NO_KVM=1 "$run" --quiet --source perf "$guest" 2>&1 >/dev/null)
st=$?
[ $st -eq 77 ] && { echo "SKIP: $err"; exit 77; }
if [ -d /sys/bus/event_source/devices/cpu ] || [ -d /sys/bus/event_source/devices/cpu_core ]; then
	echo "a hardware PMU: perf counts, status $st"
	[ $st -eq 0 ] || { echo "FAIL: status $st: $err"; exit 1; }
	exit 0
fi
echo "$err"
want="vpmu-run: source perf cannot count instructions here: perf_event_open(hardware instructions) failed: ENOENT (no hardware PMU on this host) (uncounted=allow runs the guest with counters that count nothing)"
[ $st -eq 1 ] || { echo "FAIL: status $st, want 1"; exit 1; }
[ "$err" = "$want" ] || { echo "FAIL: want: $want"; exit 1; }
VPMU_SKIP_NO_KVM=1 "$run" --quiet --source perf --uncounted allow "$guest" >/dev/null ||
	{ echo "FAIL: --uncounted allow: status $?"; exit 1; }
echo "refused with the reason; --uncounted allow runs it"
