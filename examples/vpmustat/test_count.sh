#!/bin/sh
# test_count.sh VPMUSTAT HOT.elf WORKDIR
#
# vpmustat counts the hot-function guest's instructions with the exact
# source, four ways: system scope by libvpmu's name, by libpfm4's name
# (ix86arch INSTRUCTION_RETIRED), by raw code 0xc0, and process scope
# (pid 1, the guest).  All four totals are equal and above the 1,000,000
# instructions hot.c retires in its loops.
# Exit 77 (skip) where vpmustat finds no usable /dev/kvm (VPMU_SKIP_NO_KVM=1).
set -u
vs=$1 elf=$2 dir=$3

fail() {
	echo "test_count.sh: FAIL: $*"
	exit 1
}

rm -rf "$dir" && mkdir -p "$dir" || exit 1
"$vs" -s instructions,INSTRUCTION_RETIRED,0xc0 -p instructions -w 0 \
    -o "$dir/counts.txt" "$elf" >"$dir/console.txt"
st=$?
cat "$dir/counts.txt" 2>/dev/null
[ $st -eq 77 ] && { echo "test_count.sh: skipped (no usable /dev/kvm)"; exit 77; }
[ $st -eq 0 ] || fail "the run exited $st"
for label in s/00/instructions s/00/INSTRUCTION_RETIRED s/00/0xc0 p/instructions; do
	grep -q "^  $label  *[0-9][0-9]*$" "$dir/counts.txt" || fail "no total for $label"
done
awk '/^  [sp]\// { v[n++] = $2 }
     END { if (n != 4) exit 1
           for (i = 1; i < n; i++) if (v[i] != v[0]) exit 1
           if (v[0] < 1000000) exit 1 }' "$dir/counts.txt" ||
	fail "the four totals differ, or are below 1000000"
echo "test_count.sh: ok"
exit 0
