#!/bin/sh
# exact_modes_samples.sh VPMUSTAT GUEST.elf WORKDIR [vpmustat options...]
#
# The differential check of the exact source's two modes for sampling:
# vpmustat runs the guest with the options given (sampling PMCs), once
# with --exact-mode step and once with --exact-mode block, and reads both
# logs back (--dump).  Fails unless both runs exit 0 with the same console
# output, drop no sample, take at least 1000, block mode took breakpoint
# exits (so the test cannot pass by stepping twice), and the two lists of
# CALLCHAIN records are identical record for record: PMC, process,
# thread, vCPU, mode, and every address of the call chain, in order (the
# time stamp aside).  A sample taken late in a block would have another
# address.  Prints each mode's summary line.  Exit 77 (skip) where
# vpmustat finds no usable /dev/kvm (VPMU_SKIP_NO_KVM=1).
set -u
if [ $# -lt 3 ]; then
	echo "usage: exact_modes_samples.sh VPMUSTAT GUEST.elf WORKDIR [options...]" >&2
	exit 2
fi
vs=$1 elf=$2 dir=$3
shift 3
fail() {
	echo "exact_modes_samples.sh: FAIL: $*"
	exit 1
}

rm -rf "$dir" && mkdir -p "$dir" || exit 1
for mode in step block; do
	VPMU_SKIP_NO_KVM=1 "$vs" --exact-mode "$mode" "$@" -O "$dir/$mode.log" \
	    -o "$dir/$mode.report" "$elf" >"$dir/$mode.console" 2>"$dir/$mode.err"
	st=$?
	if [ $st -eq 77 ]; then
		cat "$dir/$mode.err"
		echo "exact_modes_samples.sh: skipped (no usable /dev/kvm)"
		exit 77
	fi
	grep '^vpmustat: the guest' "$dir/$mode.err" | sed "s/^/$mode: /"
	[ $st -eq 0 ] || { cat "$dir/$mode.err"; fail "$mode: vpmustat exited $st"; }
	grep -q ' 0 dropped' "$dir/$mode.err" || fail "$mode: samples were dropped"
	"$vs" -R "$dir/$mode.log" --dump >"$dir/$mode.dump" ||
		fail "$mode: vpmustat -R exited $?"
	# Each CALLCHAIN record without its offset and time stamp.
	sed -n 's/^0x[0-9a-f]* CALLCHAIN *tsc=[0-9]* //p' "$dir/$mode.dump" \
	    >"$dir/$mode.samples"
done

n=$(wc -l <"$dir/step.samples")
[ "$n" -ge 1000 ] || fail "only $n samples stepping"
grep -Eq ' [1-9][0-9]* breakpoints' "$dir/block.err" || fail "block mode took no breakpoint exit"
cmp -s "$dir/step.console" "$dir/block.console" ||
	fail "the guest's output differs between the modes"
if ! diff "$dir/step.samples" "$dir/block.samples" >"$dir/samples.diff"; then
	head -n 20 "$dir/samples.diff"
	fail "$(grep -c '^<' "$dir/samples.diff") of $n samples differ (< step, > block)"
fi
echo "exact_modes_samples.sh: ok: $n samples, the same in both modes"
exit 0
