#!/bin/sh
# isolation.sh VPMU_RUN VPMUSTAT GUEST_A GUEST_B OUTDIR -- two processes
# (issue 14, "Load and isolation").  Each guest (isolation_guest.c) runs
# alone under vpmu-run on the exact source, with its log offered as number
# 3; then two of A and two of B run at once, each with a log of its own.
# Passes if:
#   - every run exits 0 (its count exact: 3n + 2 instructions);
#   - each run at once prints exactly what that guest printed alone (the
#     guest's line; vpmu-run's report on standard error, the same run's
#     exits and steps, also equal);
#   - each log, as vpmustat -R --dump prints it without offsets, timestamps
#     and the open time, is record for record the log of that guest alone,
#     holds its own cookie (USERDATA) and not the other guest's.
# Exit 77 (skip) where vpmu-run cannot run a guest (no /dev/kvm: the test
# sets VPMU_SKIP_NO_KVM=1, and vpmu-run then exits 77).
run=$1 stat=$2 ga=$3 gb=$4 out=$5
if [ $# -ne 5 ]; then
	echo "usage: isolation.sh VPMU_RUN VPMUSTAT GUEST_A GUEST_B OUTDIR" >&2
	exit 2
fi
rm -rf "$out"
mkdir -p "$out" || exit 1
tag_a=0xa11ce tag_b=0xb0b
fail=0

# vpmu-run on guest $2 with its log at $1.log, output at $1.out, $1.err
go() {
	"$run" --source exact --guest-log 3="$1.log" "$2" >"$1.out" 2>"$1.err"
}

# The log without what differs from run to run: offsets, timestamps, the
# TSC frequency and the open time of INITIALIZE.
dump() {
	"$stat" -R "$1" --dump >"$1.dump" 2>&1 || {
		echo "isolation.sh: FAIL: vpmustat -R $1:"
		cat "$1.dump"
		fail=1
	}
	sed -n 's/^0x[0-9a-f]* *//; s/ tsc=[0-9]*//; s/ tsc_freq=[0-9]*//;
	    s/ time=[0-9.]*//; /^[A-Z_]* /p' "$1.dump" >"$1.rec"
}

for g in a b; do
	if [ $g = a ]; then elf=$ga; else elf=$gb; fi
	go "$out/$g-alone" "$elf"
	st=$?
	if [ $st -eq 77 ]; then
		echo "SKIP: vpmu-run cannot run a guest here (no /dev/kvm?):"
		cat "$out/$g-alone.err"
		exit 77
	fi
	cat "$out/$g-alone.out"
	if [ $st -ne 0 ]; then
		echo "isolation.sh: FAIL: guest $g alone: status $st"
		cat "$out/$g-alone.err"
		exit 1
	fi
done

# Two of each at once.
go "$out/a-both1" "$ga" & pa1=$!
go "$out/b-both1" "$gb" & pb1=$!
go "$out/a-both2" "$ga" & pa2=$!
go "$out/b-both2" "$gb" & pb2=$!
# the status of run $1, process $2
reap() {
	wait "$2"
	st=$?
	cat "$out/$1.out"
	if [ $st -ne 0 ]; then
		echo "isolation.sh: FAIL: $1: status $st"
		cat "$out/$1.err"
		fail=1
	fi
}
reap a-both1 $pa1
reap b-both1 $pb1
reap a-both2 $pa2
reap b-both2 $pb2

for g in a b; do
	if [ $g = a ]; then tag=$tag_a other=$tag_b; else tag=$tag_b other=$tag_a; fi
	dump "$out/$g-alone.log"
	for r in "$g-both1" "$g-both2"; do
		if ! cmp -s "$out/$g-alone.out" "$out/$r.out"; then
			echo "isolation.sh: FAIL: $r printed other than guest $g alone:"
			diff "$out/$g-alone.out" "$out/$r.out"
			fail=1
		fi
		if ! cmp -s "$out/$g-alone.err" "$out/$r.err"; then
			echo "isolation.sh: FAIL: $r's report differs from guest $g alone's:"
			diff "$out/$g-alone.err" "$out/$r.err"
			fail=1
		fi
		dump "$out/$r.log"
		if ! cmp -s "$out/$g-alone.log.rec" "$out/$r.log.rec"; then
			echo "isolation.sh: FAIL: $r's log differs from guest $g alone's:"
			diff "$out/$g-alone.log.rec" "$out/$r.log.rec"
			fail=1
		fi
	done
	# Alone, and so at once: INITIALIZE, the allocation, the attach, its
	# own cookie, CLOSELOG; nothing of the other guest.
	if [ "$(grep -c . "$out/$g-alone.log.rec")" -ne 5 ] ||
	    [ "$(grep -c "^USERDATA  *userdata=$tag\$" "$out/$g-alone.log.rec")" -ne 1 ] ||
	    grep -q "userdata=$other" "$out/$g-alone.log.rec"; then
		echo "isolation.sh: FAIL: guest $g's log is not its own five records:"
		cat "$out/$g-alone.log.rec"
		fail=1
	fi
done
if [ $fail -eq 0 ]; then
	echo "isolation: 2 guests alone and 4 runs at once: counts, reports and logs equal"
fi
exit $fail
