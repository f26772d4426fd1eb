#!/bin/sh
# hlt_counting.sh VPMU_RUN GUEST.elf GUEST_FLOOR.elf NM IRQCHIP -- a `cli; hlt`
# retired while PMC0 counts ends the run exactly as it does without
# counting (hlt_counting.c): status 3, "HLT with interrupts off" at the
# address right after the HLT (the symbol hlt_counting_after) in both runs,
# and the counter's value in the report is exactly 3 (WRMSR, CLI, HLT).
# Exit 77 (skip) when vpmu-run finds no usable /dev/kvm.
[ $# -eq 5 ] || { echo "usage: hlt_counting.sh VPMU_RUN GUEST.elf FLOOR.elf NM IRQCHIP" >&2; exit 2; }
run=$1 guest=$2 floor=$3 nm=$4 chip=$5
after=$("$nm" "$guest" | awk '$3 == "hlt_counting_after" { print $1 }' | sed 's/^0*//')
after_floor=$("$nm" "$floor" | awk '$3 == "hlt_counting_after" { print $1 }' | sed 's/^0*//')
[ -n "$after" ] && [ "$after" = "$after_floor" ] ||
    { echo "FAIL: hlt_counting_after not found, or not the same in both guests" >&2; exit 1; }
fail=0
for g in "$floor" "$guest"; do
	out=$(VPMU_SKIP_NO_KVM=1 timeout 60 "$run" --source exact --irqchip "$chip" "$g" 2>&1)
	st=$?
	echo "$out"
	[ $st -eq 77 ] && { echo "skipped (status 77)"; exit 77; }
	if [ $st -ne 3 ]; then
		echo "FAIL: $g: status $st, want 3"
		fail=1
	fi
	if ! echo "$out" | grep -Eq "HLT with interrupts off: nothing can wake the vCPU .* at RIP 0x$after\$"; then
		echo "FAIL: $g: no \"HLT with interrupts off ... at RIP 0x$after\""
		fail=1
	fi
done
# The counting run's report: IA32_PMC0, instructions, exactly 3.
if ! echo "$out" | grep -Eq '^ +IA32_PMC0 +instructions +3 '; then
	echo "FAIL: the counter's value is not 3 (WRMSR, CLI, HLT)"
	fail=1
fi
[ $fail -eq 0 ] && echo "ok: cli; hlt ends the run the same way counting (exactly 3 instructions) and not"
exit $fail
