#!/bin/sh
# exact_insn_emulation.sh VPMU_RUN KERNEL.elf -- KVM's vCPU statistic
# insn_emulation against the exact source's count (vpmu_exact(7), HOST
# FACTS).  KERNEL.elf (user_mode.c, KERNEL_ONLY) counts a CPL 0 loop with
# no exit in it but the steps.  Where the host's KVM has the statistic
# (one that emulates CPL 0 guest code), its increase while the source
# followed the vCPU must equal the instructions the source counted as
# retired, less the branches it completed itself in block mode (the guest
# never executed those), exactly, in both exact modes, and the report must say
# "(agrees)".  Exit 77 (skip) when vpmu-run finds no usable /dev/kvm, or
# the host has no insn_emulation statistic (vpmu-run reports "n/a").
[ $# -eq 2 ] || { echo "usage: exact_insn_emulation.sh VPMU_RUN KERNEL.elf" >&2; exit 2; }
run=$1 guest=$2
fail=0
for m in step block; do
	out=$(VPMU_SKIP_NO_KVM=1 timeout 120 "$run" --source exact --exact-mode $m \
	    --pmu intel-v2 "$guest" 2>&1)
	st=$?
	echo "$out"
	[ $st -eq 77 ] && { echo "skipped (status 77)"; exit 77; }
	[ $st -eq 0 ] || { echo "FAIL: $m: status $st"; fail=1; continue; }
	line=$(echo "$out" | grep '^  exact: retired ')
	if echo "$line" | grep -q 'KVM insn_emulation n/a'; then
		echo "SKIP: this host's KVM has no vCPU statistic insn_emulation (KVM_GET_STATS_FD)"
		exit 77
	fi
	ret=$(echo "$line" | sed -n 's/^  exact: retired \([0-9]*\)[ ,].*/\1/p')
	# what libvpmu retired itself (branches, RDPMC, HLT) never ran in the guest
	compl=$(echo "$line" | sed -n 's/.*(\([0-9]*\) retired by libvpmu).*/\1/p')
	[ -n "$ret" ] && ret=$((ret - ${compl:-0}))
	emu=$(echo "$line" | sed -n 's/.*KVM insn_emulation \([0-9]*\) .*/\1/p')
	echo "($m: retired $ret, insn_emulation $emu)"
	if [ -z "$ret" ] || [ -z "$emu" ] || [ "$ret" -eq 0 ]; then
		echo "FAIL: $m: no exact line in the report"
		fail=1
	elif [ "$ret" -ne "$emu" ] || ! echo "$line" | grep -q "insn_emulation $emu (agrees)"; then
		echo "FAIL: $m: insn_emulation $emu, exact source $ret"
		fail=1
	fi
done
[ $fail -eq 0 ] && echo "ok: insn_emulation equals the exact count of the CPL 0 workload"
exit $fail
