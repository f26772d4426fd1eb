#!/bin/sh
# debug.sh NM EXPECT EMBED GUEST [MODE]: embed -b at the guest's symbol
# embed_bp (a hardware breakpoint of the VMM's own, as a gdb stub's), with
# the exact source following the counted loop around it (MODE step, the
# default, or block): the guest checks its exact count, and the VMM must
# report 20 breakpoint hits (10 rounds with the counter off, 10 with it on).
# In block mode libvpmu must also have run blocks to breakpoints of its own
# in the three debug registers the VMM leaves (vpmu_vcpu(3), need): a
# "N breakpoints" above 0 in embed's libvpmu line.
[ $# -eq 4 ] || [ $# -eq 5 ] || { echo "usage: debug.sh NM EXPECT EMBED GUEST [MODE]" >&2; exit 2; }
mode=${5:-step}
addr=$("$1" "$4" | awk '$3 == "embed_bp" { print $1 }')
[ -n "$addr" ] || { echo "debug.sh: no symbol embed_bp in $4" >&2; exit 1; }
[ "$mode" = step ] &&
	exec sh "$2" 0 "breakpoint 20 hits" -- "$3" -v -o amd-v2,exact-mode=step -b "0x$addr" "$4"
out=$(sh "$2" 0 "breakpoint 20 hits" -- "$3" -v -o "amd-v2,exact-mode=$mode" -b "0x$addr" "$4")
st=$?
echo "$out"
[ $st -eq 0 ] || exit $st
n=$(echo "$out" | sed -n 's/^embed: libvpmu: vCPU 0: .* \([0-9]*\) breakpoints .*/\1/p')
[ -n "$n" ] && [ "$n" -gt 0 ] || { echo "debug.sh: FAIL: libvpmu ran no block to its own breakpoints (breakpoints '${n}')"; exit 1; }
echo "debug.sh: libvpmu's breakpoints: $n exits"
