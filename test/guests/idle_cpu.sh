#!/bin/sh
# idle_cpu.sh VPMU_RUN IDLE.elf -- a halted vCPU costs vpmu-run little CPU.
#
# IDLE.elf (hlt_wake.c, TICKS 2 s, no counter enabled) halts with
# interrupts on until its local APIC timer fires 2 s later.  The vCPU waits
# in KVM (the in-kernel irqchip), and vpmu-run's other threads (the
# watchdog) sleep: the process's CPU time (user + system) must stay under
# half its wall time.  A thread that spins instead (as the watchdog once
# did, its timed wait returning at once) takes a whole core: CPU time about
# the wall time or more.  CPU time does not grow when the machine is
# loaded, so the check holds under load.  Exit 77 (skip) when vpmu-run
# finds no usable /dev/kvm.
[ $# -eq 2 ] || { echo "usage: idle_cpu.sh VPMU_RUN IDLE.elf" >&2; exit 2; }
out=$(VPMU_SKIP_NO_KVM=1 bash -c 'TIMEFORMAT="times %U %S %R"; time "$0" --source synthetic -q "$1"' \
    "$1" "$2" 2>&1)
st=$?
echo "$out"
[ $st -eq 77 ] && { echo "skipped (status 77)"; exit 77; }
[ $st -eq 0 ] || { echo "FAIL: status $st"; exit 1; }
echo "$out" | grep -q "hlt_wake: ok, woken at the HLT" || { echo "FAIL: the guest did not wake at its HLT"; exit 1; }
set -- $(echo "$out" | sed -n 's/^times //p')
[ $# -eq 3 ] || { echo "FAIL: no times"; exit 1; }
awk -v u="$1" -v s="$2" -v r="$3" 'BEGIN {
	printf "CPU %.2f s (user %.2f, system %.2f) over %.2f s of wall time\n", u + s, u, s, r
	if (r < 2) { print "FAIL: the guest did not wait 2 s"; exit 1 }
	if (u + s >= r / 2) { print "FAIL: CPU time is half the wall time or more: something spins"; exit 1 }
	print "idle_cpu: ok"
}'
