#!/bin/sh
# exact_modes.sh VPMU-RUN [vpmu-run options...] GUEST.elf
#
# The differential check of the exact source's two modes: run the guest
# with --exact-mode step and with --exact-mode block and fail unless both
# exit with the same status, print the same standard output (the guests
# print every count they check) and end with the same counter values in
# the report (guest-visible counters; a guest that uses none prints its
# counts); and unless block mode ran blocks (its report counts
# breakpoint exits), so the test cannot pass by stepping twice, and unless
# each vCPU's single-step exits in block mode are accounted for by the
# report's steps by reason as well as in step mode (a step the glue took
# for a planned block counts as debug-registers; steps of libvpmu's core,
# a PMI's or the one past an RDPMC breakpoint, have no reason in either
# mode; an entry that stepped and exited before its step, an MSR exit, has
# a reason and no step).  Prints
# each mode's exits and wall time.  A run that exits 77 (no /dev/kvm,
# VPMU_SKIP_NO_KVM=1) is a skip.
if [ $# -lt 2 ]; then
	echo "usage: exact_modes.sh VPMU-RUN [options...] GUEST.elf" >&2
	exit 2
fi
run=$1
shift
dir=$(mktemp -d) || exit 1
trap 'rm -rf "$dir"' EXIT

for mode in step block; do
	t0=$(date +%s%N)
	"$run" --source exact --exact-mode "$mode" --report "$dir/$mode.rep" "$@" \
	    >"$dir/$mode.out" 2>"$dir/$mode.err"
	echo $? >"$dir/$mode.rc"
	t1=$(date +%s%N)
	if [ "$(cat "$dir/$mode.rc")" -eq 77 ]; then
		cat "$dir/$mode.err"
		echo "exact_modes.sh: skipped (status 77)"
		exit 77
	fi
	# The counters' final values: the column before "enabled ns".
	awk '/^  [A-Za-z]/ && NF >= 6 && $1 != "counter" { print $1, $(NF - 4) }' \
	    "$dir/$mode.rep" >"$dir/$mode.vals"
	echo "$mode: status $(cat "$dir/$mode.rc"), $(( (t1 - t0) / 1000000 )) ms:" \
	    "$(grep -o 'steps [0-9]*.*' "$dir/$mode.rep" | tr '\n' ' ')"
done

fail=0
if ! cmp -s "$dir/step.rc" "$dir/block.rc"; then
	echo "exact_modes.sh: FAIL: status $(cat "$dir/step.rc") stepping," \
	    "$(cat "$dir/block.rc") in blocks"
	fail=1
fi
if ! diff "$dir/step.out" "$dir/block.out"; then
	echo "exact_modes.sh: FAIL: the guest's output differs (< step, > block)"
	fail=1
fi
if ! diff "$dir/step.vals" "$dir/block.vals"; then
	echo "exact_modes.sh: FAIL: the counters' values differ (< step, > block)"
	fail=1
fi
if ! grep -Eq 'breakpoints [1-9]|run in user space at [1-9]' "$dir/block.rep"; then
	echo "exact_modes.sh: FAIL: block mode took no breakpoint exit and ran nothing in user space"
	fail=1
fi
# vCPU N's single-step exits beyond its steps by reason, block against step
awk '/^vCPU [0-9]+:/ { m = FILENAME ~ /block\.rep$/ ? "block" : "step"; cpu = $2
	s = $0; sub(/.*, steps /, "", s); sub(/,.*/, "", s); n[m, cpu] = s; cpus[cpu] = 1 }
    /^  single steps by reason: / { n[m, cpu] -= $NF }
    END { for (c in cpus) if (n["block", c] > 0 && n["block", c] > n["step", c]) {
	printf "exact_modes.sh: FAIL: vCPU %s %d single-step exits without a reason in blocks, %d stepping\n",
	    c, n["block", c], n["step", c]
	bad = 1 } exit bad }' "$dir/step.rep" "$dir/block.rep" || fail=1
tail -n 3 "$dir/block.out"
exit $fail
