#!/bin/sh
# exact_user_unseen.sh VPMU_RUN USER.elf USER_OUT.elf KERNEL.elf -- user-mode
# (CPL 3) code while the exact source follows the guest (user_mode.c).
#
# USER.elf IRETQs to CPL 3 twice (n and 2n iterations of DEC/JNZ, n =
# 1000), each time back at CPL 0 by a #GP.  USER_OUT.elf's user code
# first makes an exit at CPL 3 (an OUT after two MOVs), then runs five ALU
# instructions and the loop.  What holds depends on the host, and is
# chosen from what the guest counted, not per machine:
#   - the user code counted exactly (USR difference 2n = 2000): the host
#     follows CPL 3 code; the report must say "unseen at 0 exits" and
#     carry no warning;
#   - otherwise the host runs it unseen (kvm_pvm: CPL 3 is neither stepped
#     nor stopped at breakpoints): the report must say "unseen at 2 exits"
#     (one per trip to user mode), print the warning once (report on
#     standard error); USER_OUT.elf's USR counts are then exactly 3 (the
#     straight run up to its exit at CPL 3 is reconstructed) in both runs;
#     with --quiet the warning still comes, once, on standard error.
# Both exact modes (step, block: a block planned at CPL 3 whose breakpoint
# is not hit must not count the code past it).  KERNEL.elf runs the same
# loop at CPL 0: "unseen at 0 exits", no warning, OS difference exactly 2n.
# Exit 77 (skip) when vpmu-run finds no usable /dev/kvm.
[ $# -eq 4 ] || { echo "usage: exact_user_unseen.sh VPMU_RUN USER.elf USER_OUT.elf KERNEL.elf" >&2; exit 2; }
run=$1 user=$2 userout=$3 kernel=$4
warn='exact: user-mode (CPL3) guest code ran without being stepped on this host: counts of user-mode events are not exact'
fail=0

# vr GUEST MODE [ARGS...]: run it, output in $out; skip on status 77.
vr() {
	g=$1 m=$2
	shift 2
	out=$(VPMU_SKIP_NO_KVM=1 timeout 120 "$run" --source exact --exact-mode "$m" \
	    --pmu intel-v2 "$@" "$g" 2>&1)
	st=$?
	echo "$out"
	[ $st -eq 77 ] && { echo "skipped (status 77)"; exit 77; }
	[ $st -eq 0 ] || { echo "FAIL: $g ($m): status $st"; fail=1; }
}
bad() { echo "FAIL: $*"; fail=1; }
nwarn() { echo "$out" | grep -cF "$warn"; }

for m in step block; do
	for g in "$user" "$userout"; do
		vr "$g" $m
		line=$(echo "$out" | sed -n 's/.*\(user_mode: usr \)/\1/p')
		echo "$line" | grep -q '#GP 2$' ||
		    bad "$g ($m): the user code did not end in two #GP at its HLT"
		diff=$(echo "$line" |
		    sed -n 's/^user_mode: usr n=[0-9]* 2n=[0-9]* diff \([0-9]*\),.*/\1/p')
		if [ "$diff" = 2000 ]; then
			echo "($g, $m: this host follows user-mode code: user counts exact)"
			echo "$out" | grep -q 'user-mode code unseen at 0 exits$' ||
			    bad "$g ($m): unseen not 0"
			[ "$(nwarn)" -eq 0 ] || bad "$g ($m): a warning, though user counts are exact"
			continue
		fi
		echo "($g, $m: this host runs user-mode code unseen: USR difference $diff, not 2000)"
		echo "$out" | grep -q 'user-mode code unseen at 2 exits$' || bad "$g ($m): unseen not 2"
		[ "$(nwarn)" -eq 1 ] || bad "$g ($m): the warning $(nwarn) times, want once"
		[ "$g" = "$userout" ] && ! echo "$line" | grep -q '^user_mode: usr n=3 2n=3 ' &&
		    bad "$g ($m): USR counts not 3 (the run up to the OUT at CPL 3)"
	done
	vr "$kernel" $m
	echo "$out" | grep -q '^user_mode: usr n=0 2n=0 diff 0, os diff 2000,' ||
	    bad "$m: the CPL 0 loop not counted exactly at CPL 0"
	echo "$out" | grep -q 'user-mode code unseen at 0 exits$' || bad "$m: CPL 0 only, unseen not 0"
	[ "$(nwarn)" -eq 0 ] || bad "$m: CPL 0 only, a warning"
done
# --quiet: no report, the warning alone on standard error, once (if due).
vr "$user" step --quiet
n=$(nwarn)
if [ "$diff" = 2000 ]; then
	[ "$n" -eq 0 ] || bad "--quiet: a warning, though user counts are exact"
else
	[ "$n" -eq 1 ] || bad "--quiet: the warning $n times, want once"
fi
[ $fail -eq 0 ] && echo "ok: user-mode code unseen is counted and said, exactly"
exit $fail
