#!/bin/sh
# stop.sh VPMU_RUN SPIN.elf SPIN_HALT.elf DIR CASE -- a run ended from the
# host (spin.c never exits): the exact status, the message on standard
# error, and the report all the same.  CASE:
#   timeout         --timeout 2, exact source (the default), 2 vCPUs: status
#                   124 after 2 s and no less, "timed out after 2 s ...",
#                   the report (its model line saying the source is the
#                   default, vCPU 0's IA32_PMC0 row, vCPU 1's line)
#   timeout_quiet   -q --timeout 1: status 124, the message alone
#   timeout_report  --report FILE --timeout 1: the message on standard
#                   error, the report in FILE
#   sigterm         SIGTERM once vCPU 0 spins (synthetic source, 2 vCPUs):
#                   status 143, "stopped by SIGTERM", the report
#   sigterm_exact   the same while the exact source steps vCPU 0
#   sigint_halted   SIGINT to a run whose vCPU 0 is halted in KVM (STI;
#                   HLT, in-kernel irqchip): status 130, "stopped by SIGINT"
#   sigint_ignored  started with SIGINT ignored (as a background job of a
#                   shell without job control is), the run goes on after
#                   SIGINT; SIGTERM then ends it (143)
# The signal cases also want the run over within 10 s of the signal.
# Exit 77 (skip) when vpmu-run finds no usable /dev/kvm.
[ $# -eq 5 ] || { echo "usage: stop.sh VPMU_RUN SPIN.elf SPIN_HALT.elf DIR CASE" >&2; exit 2; }
run=$1 spin=$2 halt=$3 dir=$4 case=$5
mkdir -p "$dir" || exit 1
out=$dir/$case.out err=$dir/$case.err rep=$dir/$case.report
rm -f "$out" "$err" "$rep"
fail=0
bad() { echo "FAIL: $case: $*"; fail=1; }
now() { date +%s.%N; }
# elapsed T0 T1 LO HI: T1 - T0 in [LO, HI] seconds (prints it)
within() {
	awk -v a="$1" -v b="$2" -v lo="$3" -v hi="$4" 'BEGIN {
		d = b - a; printf "%.2f\n", d; exit !(d >= lo && d <= hi) }'
}

# start [ENV...] -- ARGS: vpmu-run in the background; pid in $pid, then
# wait (60 s at most) for vCPU 0's "spin: vCPU 0 spinning".
start() {
	VPMU_SKIP_NO_KVM=1 "$@" >"$out" 2>"$err" &
	pid=$!
	i=0
	while ! grep -q "^spin: vCPU 0 spinning$" "$out" 2>/dev/null; do
		if ! kill -0 $pid 2>/dev/null; then
			wait $pid
			st=$?
			cat "$out" "$err"
			[ $st -eq 77 ] && { echo "skipped (status 77)"; exit 77; }
			echo "FAIL: $case: vpmu-run ended (status $st) before the guest spun"
			exit 1
		fi
		i=$((i + 1))
		[ $i -le 600 ] || { kill -KILL $pid; echo "FAIL: $case: the guest never spun"; exit 1; }
		sleep 0.1
	done
}

# finish SIG: send SIG, wait; status in $st, seconds to the end in $took.
finish() {
	t0=$(now)
	kill -"$1" $pid
	wait $pid
	st=$?
	took=$(within "$t0" "$(now)" 0 10) || bad "took $took s after SIG$1, want 10 at most"
}

# report_ok FILE: the report is in FILE.
report_ok() {
	grep -Eq "^model intel-v2:.*, source $2, 2 vCPUs, 64 MiB$" "$1" ||
	    bad "no model line with \"source $2\" in the report"
	grep -Eq "^vCPU 0: MSR reads [0-9]+, writes 3, " "$1" || bad "no vCPU 0 line in the report"
	grep -Eq "^  IA32_PMC0 +instructions +[0-9]+ " "$1" || bad "no IA32_PMC0 row in the report"
	grep -Eq "^vCPU 1: MSR reads 0, writes 0, " "$1" || bad "no vCPU 1 line in the report"
}

g=$spin
case $case in
timeout|timeout_quiet|timeout_report)
	secs=2 opts=
	[ "$case" = timeout ] || secs=1
	[ "$case" = timeout_quiet ] && opts=-q
	[ "$case" = timeout_report ] && opts="--report $rep"
	t0=$(now)
	VPMU_SKIP_NO_KVM=1 timeout 120 "$run" $opts --timeout $secs --vcpus 2 "$g" >"$out" 2>"$err"
	st=$?
	t1=$(now)
	cat "$out" "$err"
	[ $st -eq 77 ] && { echo "skipped (status 77)"; exit 77; }
	[ $st -eq 124 ] || bad "status $st, want 124"
	took=$(within "$t0" "$t1" $secs $((secs + 60))) || bad "ended after $took s, want $secs to $((secs + 60))"
	msg="vpmu-run: $g: timed out after $secs s without a guest exit (--timeout $secs): stopped, status 124"
	grep -Fxq "$msg" "$err" || bad "no \"$msg\" on standard error"
	case $case in
	timeout)
		report_ok "$err" "exact \\(the default\\)";;
	timeout_quiet)
		[ "$(wc -l <"$err")" -eq 1 ] || bad "standard error holds more than the message";;
	timeout_report)
		[ "$(wc -l <"$err")" -eq 1 ] || bad "standard error holds more than the message"
		cat "$rep"
		grep -Fxq "$msg" "$rep" || bad "no \"$msg\" in the report file"
		report_ok "$rep" "exact \\(the default\\)";;
	esac
	;;
sigterm|sigterm_exact)
	src=synthetic
	[ "$case" = sigterm_exact ] && src=exact
	start "$run" --source $src --vcpus 2 "$g"
	finish TERM
	cat "$out" "$err"
	[ $st -eq 143 ] || bad "status $st, want 143"
	grep -Fxq "vpmu-run: $g: stopped by SIGTERM: status 143" "$err" ||
	    bad "no \"stopped by SIGTERM: status 143\" on standard error"
	report_ok "$err" $src
	;;
sigint_halted)
	env --default-signal=INT true 2>/dev/null ||
	    { echo "skipped: env has no --default-signal (SIGINT stays ignored in a background job)"; exit 77; }
	g=$halt
	start env --default-signal=INT "$run" --source synthetic --vcpus 2 "$g"
	finish INT
	cat "$out" "$err"
	[ $st -eq 130 ] || bad "status $st, want 130"
	grep -Fxq "vpmu-run: $g: stopped by SIGINT: status 130" "$err" ||
	    bad "no \"stopped by SIGINT: status 130\" on standard error"
	report_ok "$err" synthetic
	;;
sigint_ignored)
	# As a background job of a shell without job control starts.
	env --ignore-signal=INT true 2>/dev/null ||
	    { echo "skipped: env has no --ignore-signal"; exit 77; }
	start env --ignore-signal=INT "$run" --source synthetic --vcpus 2 "$g"
	kill -INT $pid
	sleep 1
	kill -0 $pid 2>/dev/null || bad "SIGINT, ignored when vpmu-run started, ended the run"
	finish TERM
	cat "$out" "$err"
	[ $st -eq 143 ] || bad "status $st, want 143"
	grep -Fxq "vpmu-run: $g: stopped by SIGTERM: status 143" "$err" ||
	    bad "no \"stopped by SIGTERM: status 143\" on standard error"
	;;
*)
	echo "stop.sh: unknown case $case" >&2
	exit 2
	;;
esac
[ $fail -eq 0 ] && echo "stop: $case: ok"
exit $fail
