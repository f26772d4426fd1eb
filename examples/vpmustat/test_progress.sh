#!/bin/sh
# test_progress.sh VPMUSTAT HOT.elf WORKDIR
#
# On a terminal (script(1) gives one), a sampling run redraws a progress
# line on stderr -- "vpmustat: T s, S samples, D dropped, log K KiB
# written" -- at least once a second and clears it before the final
# report; with stderr not a terminal there is none.
# Exit 77 (skip) without a usable /dev/kvm or without script(1).
set -u
vs=$1 elf=$2 dir=$3
fail() { echo "test_progress.sh: FAIL: $*"; exit 1; }
command -v script >/dev/null || { echo "test_progress.sh: skipped (no script(1) to make a terminal)"; exit 77; }
rm -rf "$dir" && mkdir -p "$dir" || exit 1
# The run must last several seconds: hot.elf with every instruction run
# by the guest (no instructions run in user space, vpmu_exact(7)).
VPMU_SKIP_NO_KVM=1 script -qfec "'$vs' --exact-interp off -S instructions -n 1009 -O '$dir/t.log' '$elf'" /dev/null \
    >"$dir/tty.txt" 2>&1 </dev/null
st=$?
[ $st -eq 77 ] && { echo "test_progress.sh: skipped (no usable /dev/kvm)"; exit 77; }
[ $st -eq 0 ] || { cat "$dir/tty.txt"; fail "vpmustat on a terminal exited $st"; }
n=$(tr '\r' '\n' <"$dir/tty.txt" | grep -c 'vpmustat: [0-9.]* s, [0-9]* samples, [0-9]* dropped, log [0-9.]* KiB written')
echo "test_progress.sh: $n progress lines on the terminal"
[ "$n" -ge 3 ] || fail "fewer than 3 progress lines in a run of several seconds"
VPMU_SKIP_NO_KVM=1 "$vs" -S instructions -n 1009 -O "$dir/p.log" "$elf" >"$dir/out.txt" 2>"$dir/err.txt" ||
	fail "vpmustat without a terminal exited $?"
if grep -q 'samples, [0-9]* dropped, log' "$dir/err.txt"; then
	fail "a progress line without a terminal"
fi
echo "test_progress.sh: none without a terminal"
