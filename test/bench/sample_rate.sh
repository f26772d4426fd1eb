#!/bin/sh
# sample_rate.sh VPMUSTAT HOT.elf LOGCOUNT OUTDIR [quiet|loaded|both]
#
# The highest sample rate a guest reaches here with the default buffers
# (issue 5; goal: 0 drops).  vpmustat samples the hot-function guest
# (examples/guests/hot.c) on instructions with the exact source at reload
# counts from 100000 down to 1000 (hwpmc's default mincount: a smaller -n
# is clamped to it, so 1000 is the most samples per instruction a guest
# can ask for) and, below it, 100 to show the clamp.  For each: the samples
# taken, the samples dropped because a ring was full (intr_bufferfull, as
# vpmustat reports it), log buffers unavailable, the DROPNOTIFY records in
# the log, and the samples per second of guest run time (logcount: first to
# last CALLCHAIN timestamp).  The exact source single-steps the guest, so
# the sample rate is the instruction rate (about 175 k/s here under
# single-step) / reload.  Then the same with the tunable mincount lowered to
# 1 (the buffers still the defaults: nsamples 512, logbuffersize 256 KB,
# nbuffers_pcpu 32), at reloads 100, 10 and 1 -- one sample per guest
# instruction, the most any guest can produce on this source.
# Loaded mode (issue 14) runs the mincount=1 table again with two CPU-bound
# processes (sh busy loops) loading the machine, so the vCPU thread, the
# sweeper and the log writer compete for the CPUs; the loops are killed at
# the end.  The last argument picks the modes, both by default.
# Exit 77 where there is no usable /dev/kvm.
set -u
vs=$1 elf=$2 lc=$3 out=$4 mode=${5:-both}
case $mode in
quiet|loaded|both) ;;
*)	echo "usage: sample_rate.sh VPMUSTAT HOT.elf LOGCOUNT OUTDIR [quiet|loaded|both]" >&2
	exit 2 ;;
esac
mkdir -p "$out" || exit 1
hogs=""
stop_hogs() {
	for p in $hogs; do
		kill "$p" 2>/dev/null
		wait "$p" 2>/dev/null
	done
	hogs=""
}
trap 'stop_hogs' EXIT
trap 'stop_hogs; exit 130' INT TERM
printf '\n== sample rate with default buffers (vpmustat -S instructions, exact source) ==\n'
worst=0
table() {
printf '%8s %9s %8s %8s %11s %10s %10s\n' reload samples dropped nobuf dropnotify seconds samples/s
for n in $reloads; do
	base=$out/rate-$n${tun:+-m1}${hogs:+-loaded}
	log=$base.log
	VPMU_SKIP_NO_KVM=1 "$vs" $tun -S instructions -n "$n" -O "$log" "$elf" \
	    >"$base.console" 2>"$base.err"
	st=$?
	if [ $st -eq 77 ]; then
		echo "SKIP: no usable /dev/kvm"
		stop_hogs
		exit 77
	fi
	if [ $st -ne 0 ]; then
		echo "sample_rate.sh: vpmustat -n $n exited $st:"
		cat "$base.err"
		exit 1
	fi
	# "...; S samples, D dropped (ring full), B log buffers unavailable"
	set -- $(sed -n 's/.* \([0-9][0-9]*\) samples, \([0-9][0-9]*\) dropped (ring full), \([0-9][0-9]*\) log buffers unavailable.*/\1 \2 \3/p' \
	    "$base.err" | tail -1)
	if [ $# -ne 3 ]; then
		echo "sample_rate.sh: no sample summary from vpmustat -n $n:"
		cat "$base.err"
		exit 1
	fi
	s=$1 d=$2 b=$3
	lcout=$("$lc" "$log") || exit 1
	set -- $lcout
	# samples S dropnotify N bytes B seconds T rate R
	printf '%8s %9s %8s %8s %11s %10s %10s\n' "$n" "$s" "$d" "$b" "$4" "$8" "${10}"
	[ "$d" -gt 0 ] || [ "$b" -gt 0 ] && worst=1
done
return 0
}
if [ "$mode" != loaded ]; then
tun="" reloads="100000 10000 5000 2000 1000 100"
table || exit $?
if [ $worst -eq 0 ]; then
	echo "goal 0 drops: met at every reload down to mincount (1000)"
else
	echo "goal 0 drops: NOT met with the default tunables (see the table)"
fi
printf '\n-- the same with --tunable mincount=1 (default buffers) --\n'
worst=0 tun="--tunable mincount=1" reloads="100 10 1"
table || exit $?
if [ $worst -eq 0 ]; then
	echo "0 drops at every reload down to 1 (one sample per instruction)"
else
	echo "drops at some reload (see the table): the rate where they start is the limit"
fi
fi
[ "$mode" = quiet ] && exit 0
printf '\n-- loaded: mincount=1, two CPU-bound processes running beside it --\n'
for i in 1 2; do
	sh -c 'while :; do :; done' &
	hogs="$hogs $!"
done
sleep 1
printf 'load average: %s\n' "$(cut -d' ' -f1-3 /proc/loadavg 2>/dev/null)"
worst=0 tun="--tunable mincount=1" reloads="100 10 1"
table || exit $?
stop_hogs
if [ $worst -eq 0 ]; then
	echo "0 drops at every reload down to 1 under load"
else
	echo "drops under load at some reload (see the table)"
fi
