#!/bin/sh
# shared_bp.sh VPMU-RUN SHARED_BP.elf WORKDIR
#
# shared_bp.c's memory-accessing blocks with vpmu-run's SYSCALL catch (a
# breakpoint of the VMM's own on the guest's #PF handler entry, forced by
# --user-syscall complete): in block mode the glue shares that debug
# register, so the report shows breakpoint exits and no step for want of
# debug registers (reason debug-registers).  That the count equals step
# mode's is exact_modes_shared_breakpoint's to check.  Exit 77 (skip)
# where vpmu-run finds no usable /dev/kvm.
set -u
run=$1 elf=$2 dir=$3
fail() { echo "shared_bp.sh: FAIL: $*"; exit 1; }
rm -rf "$dir" && mkdir -p "$dir" || exit 1
VPMU_SKIP_NO_KVM=1 "$run" --source exact --exact-mode block --pmu intel-v2 \
    --user-syscall complete --report "$dir/block.rep" "$elf" >"$dir/block.out" 2>&1
st=$?
[ $st -eq 77 ] && { echo "shared_bp.sh: skipped (no usable /dev/kvm)"; exit 77; }
cat "$dir/block.out" "$dir/block.rep"
[ $st -eq 0 ] || fail "vpmu-run exited $st"
grep -q '^shared_bp: [0-9]* instructions$' "$dir/block.out" || fail "no count from the guest"
grep -q '^user-mode SYSCALL: caught' "$dir/block.rep" || fail "the catch was not armed"
bps=$(sed -n 's/.*, breakpoints \([0-9]*\).*/\1/p' "$dir/block.rep")
[ "${bps:-0}" -gt 0 ] || fail "block: no breakpoint exit"
dr=$(awk '$NF == "debug-registers" && $2 ~ /%$/ { print $1 }' "$dir/block.rep")
[ -z "$dr" ] || fail "block: $dr steps for want of debug registers (the VMM's not shared)"
echo "shared_bp.sh: ok"
