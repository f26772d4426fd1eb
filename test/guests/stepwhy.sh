#!/bin/sh
# stepwhy.sh VPMU-RUN STEPWHY.elf WORKDIR
#
# The exact source's single steps by reason (vpmu_kvm_stats.exact_step_why,
# vpmu-run's report), exactly, on stepwhy.c's 50 rounds of instructions
# that end every block.  The reasons count entries that step.  Block mode:
# system 50 (CPUID), fence 50 (LFENCE), div 50, flags 50 (POPFQ: PUSHFQ runs in a block),
# segment 50 (MOV to DS), call-indirect 50 (the CALL through memory with
# an FS override; the one through a register and REP MOVSB run inside
# blocks, the one through memory is completed with its push: jmp-indirect
# and rep 0); privileged 2 (the WRMSR that
# stops the counter: its entry steps, KVM's MSR exit comes first and the
# next entry, the WRMSR still at RIP, steps again); the reasons add up to
# the table's total.  Step mode: every entry step-mode, the single-step
# exits plus that WRMSR's.  Both modes count the same instructions.
# Exit 77 (skip) where vpmu-run finds no usable /dev/kvm.
set -u
run=$1 elf=$2 dir=$3
fail() { echo "stepwhy.sh: FAIL: $*"; exit 1; }
rm -rf "$dir" && mkdir -p "$dir" || exit 1
for mode in block step; do
	VPMU_SKIP_NO_KVM=1 "$run" --source exact --exact-mode "$mode" --pmu intel-v2 \
	    --report "$dir/$mode.rep" "$elf" >"$dir/$mode.out" 2>&1
	st=$?
	[ $st -eq 77 ] && { echo "stepwhy.sh: skipped (no usable /dev/kvm)"; exit 77; }
	cat "$dir/$mode.rep"
	[ $st -eq 0 ] || fail "$mode: vpmu-run exited $st"
	grep -q '^stepwhy: done' "$dir/$mode.out" || fail "$mode: no 'stepwhy: done'"
done
# reason count: the table's rows
why() { awk -v w="$2" '$NF == w && $2 ~ /%$/ { print $1; n++ } END { if (!n) print 0 }' "$dir/$1.rep"; }
for pair in system:50 fence:50 div:50 flags:50 segment:50 call-indirect:50 privileged:2; do
	w=${pair%:*} want=${pair#*:}
	got=$(why block "$w")
	[ "$got" = "$want" ] || fail "block: $w $got, want $want"
done
[ "$(why block rep)" = 0 ] || fail "block: rep $(why block rep), want none"
b=$(grep '^stepwhy: done' "$dir/block.out") s=$(grep '^stepwhy: done' "$dir/step.out")
[ "$b" = "$s" ] || fail "the modes differ: block '$b', step '$s'"
total=$(sed -n 's/^  single steps by reason: \([0-9]*\)$/\1/p' "$dir/block.rep")
sum=$(awk '$2 ~ /%$/ && NF == 3 { n += $1 } END { print n + 0 }' "$dir/block.rep")
[ -n "$total" ] && [ "$sum" = "$total" ] || fail "block: the reasons add up to $sum, the table says ${total:-nothing}"
steps=$(sed -n 's/^vCPU 0: .*, steps \([0-9]*\),.*/\1/p' "$dir/step.rep")
[ -n "$steps" ] && [ "$steps" -gt 0 ] && [ "$(why step step-mode)" -eq $((steps + 1)) ] ||
	fail "step: step-mode $(why step step-mode), single-step exits ${steps:-none} (want them + 1)"
[ "$(awk '$2 ~ /%$/ && NF == 3' "$dir/step.rep" | wc -l)" -eq 1 ] || fail "step: a reason other than step-mode"
echo "stepwhy.sh: ok"
