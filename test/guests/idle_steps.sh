#!/bin/sh
# idle_steps.sh VPMU_RUN IDLE.elf SECONDARY.elf -- the guest runtime's idle
# loop costs the exact source nothing (idle_steps.c).
#
# IDLE.elf: vCPU 0 counts while vCPUs 1 to 3 sit in the runtime's idle
# loop (PAUSE) with no counter enabled.  In step and block mode, and with
# --irqchip user, the report must give each of them "steps 0" and
# "exact: retired 0": not one step taken, nothing counted.
# SECONDARY.elf: vCPUs 1 to 3 first count 9 instructions of their own,
# then idle as long: each must read PMC0 9, the report must give each
# "exact: retired 9" and PMC0 9, and its steps at most 18 (9 on a host
# whose every instruction traps once; a stepped idle loop would take
# hundreds in the 0.1 s it idles).  Exit 77 (skip) when vpmu-run finds no
# usable /dev/kvm.
[ $# -eq 3 ] || { echo "usage: idle_steps.sh VPMU_RUN IDLE.elf SECONDARY.elf" >&2; exit 2; }
run=$1 idle=$2 secondary=$3
fail=0

# figures OUT CPU: "STEPS RETIRED PMC0" of vCPU CPU in the report OUT (PMC0 "-": not used).
figures() {
	echo "$1" | awk -v cpu="$2" '
		/^vCPU [0-9]+:/ { c = $2; sub(/:/, "", c); in_cpu = (c == cpu) }
		in_cpu && /^vCPU / { for (i = 1; i < NF; i++) if ($i == "steps") { s = $(i + 1); sub(/,/, "", s) } }
		in_cpu && /^  exact: retired / { r = $3; sub(/,/, "", r) }
		in_cpu && /^  IA32_PMC0 +instructions / { p = $3 }
		END { if (p == "") p = "-"; print s, r, p }'
}

for t in step:kernel block:kernel step:user; do
	mode=${t%:*} chip=${t#*:}
	out=$(VPMU_SKIP_NO_KVM=1 timeout 120 "$run" --source exact --exact-mode "$mode" \
	    --irqchip "$chip" --vcpus 4 "$idle" 2>&1)
	st=$?
	echo "== idle, $mode, --irqchip $chip"
	echo "$out"
	[ $st -eq 77 ] && { echo "skipped (status 77)"; exit 77; }
	[ $st -eq 0 ] || { echo "FAIL: $mode/$chip: status $st, want 0"; fail=1; continue; }
	for cpu in 1 2 3; do
		set -- $(figures "$out" $cpu)
		if [ "$1 $2 $3" != "0 0 -" ]; then
			echo "FAIL: $mode/$chip: idle vCPU $cpu: steps $1, retired $2, PMC0 $3; want 0, 0, unused"
			fail=1
		fi
	done
done

for mode in step block; do
	out=$(VPMU_SKIP_NO_KVM=1 timeout 120 "$run" --source exact --exact-mode "$mode" \
	    --vcpus 4 "$secondary" 2>&1)
	st=$?
	echo "== secondary, $mode"
	echo "$out"
	[ $st -eq 77 ] && { echo "skipped (status 77)"; exit 77; }
	[ $st -eq 0 ] || { echo "FAIL: secondary/$mode: status $st, want 0"; fail=1; continue; }
	for cpu in 1 2 3; do
		echo "$out" | grep -q "^idle_steps: vCPU $cpu PMC0 9\$" ||
		    { echo "FAIL: secondary/$mode: vCPU $cpu did not read PMC0 9"; fail=1; }
		set -- $(figures "$out" $cpu)
		if [ "$2 $3" != "9 9" ] || ! [ "$1" -ge 1 ] 2>/dev/null || [ "$1" -gt 18 ]; then
			echo "FAIL: secondary/$mode: vCPU $cpu: steps $1, retired $2, PMC0 $3; want 1..18, 9, 9"
			fail=1
		fi
	done
done
[ $fail -eq 0 ] && echo "idle_steps: ok"
exit $fail
