#!/bin/sh
# exact.sh -- the exact source's speed (issue 11, "Measure"; `make bench`).
#
#   exact.sh [-m MODE] [-a ARG] VPMU_RUN TSC_KHZ OUTDIR XBENCH_GUEST.elf...
#
# Each guest (xbench_guest.c, one workload per build) runs once under
# `vpmu-run --source exact`, alternating floor rounds (PMC0 programmed but
# not enabled: the guest runs freely) and counted rounds (PMC0 counting
# instructions: the exact source follows every instruction).  Per workload:
# the counted instructions of one round (checked exact by the guest: a
# wrong count fails the run and this script), the exits of one counted
# round (the single steps and breakpoint exits of vpmu-run's report over
# the counted rounds),
# instructions per exit, and the median round time counted and floor, by
# the guest's RDTSC converted with KVM_GET_TSC_KHZ (the tsc_khz program).
#
# MODE is the exact source's mode, given to vpmu-run as `--exact-mode
# MODE`: `block` (this script's default) or `step` (vpmu-run's), so runs of
# the modes can be set side by side.  ARG is one more vpmu-run argument
# (`--exact-interp=off`, say), in the runs and the heading.
# Exit status: 0; 1 if a run failed or a count was not exact; 77 without
# KVM (a skip).
set -u

mode=block
extra=
while [ "${1:-}" = -m ] || [ "${1:-}" = -a ]; do
	case $1 in
	-m)	mode=$2 ;;
	-a)	extra=$2 ;;
	esac
	shift 2
done
[ $# -ge 4 ] || { echo "usage: $0 [-m MODE] [-a ARG] VPMU_RUN TSC_KHZ OUTDIR GUEST.elf..." >&2; exit 2; }
run=$1 tsckhz=$2 out=$3
shift 3
mkdir -p "$out" || exit 1
khz=$("$tsckhz")
case $? in
0)	;;
77)	echo "exact.sh: skipped: no usable /dev/kvm"; exit 77 ;;
*)	echo "exact.sh: $tsckhz failed" >&2; exit 1 ;;
esac
modeopt="--exact-mode $mode${extra:+ $extra}"

# median of the numbers on standard input
median() {
	sort -n | awk '{ v[NR] = $1 } END { if (NR == 0) print "-"; else if (NR % 2) print v[(NR + 1) / 2];
	    else print (v[NR / 2] + v[NR / 2 + 1]) / 2 }'
}

status=0
echo
echo "The exact source, mode $mode${extra:+ ($extra)}: one counted round against one floor round (no counter)"
echo "host: $(uname -r), $(grep -m1 'model name' /proc/cpuinfo 2>/dev/null | sed 's/.*: //'), guest TSC $khz kHz"
printf '%-9s %9s %9s %8s %9s %9s %7s %6s\n' "workload" "insns" "exits" "insns/" "counted" "floor" "ratio" "exact"
printf '%-9s %9s %9s %8s %9s %9s %7s %6s\n' "" "/round" "/round" "exit" "s" "s" "" ""
for g in "$@"; do
	name=$(basename "$g" .elf)
	# shellcheck disable=SC2086
	"$run" --source exact $modeopt --report "$out/$name.report" "$g" >"$out/$name.txt" 2>"$out/$name.err"
	rc=$?
	[ $rc -eq 77 ] && { echo "exact.sh: skipped: vpmu-run exited 77"; exit 77; }
	wl=$(awk '$1 == "XB" { print $2; exit }' "$out/$name.txt")
	rounds=$(awk '$1 == "XB" && $4 == "step" { n++ } END { print n + 0 }' "$out/$name.txt")
	bad=$(awk '$1 == "XB" && $6 != $7 { n++ } END { print n + 0 }' "$out/$name.txt")
	exact=yes
	if [ $rc -ne 0 ] || [ "$bad" -ne 0 ] || [ "$rounds" -eq 0 ]; then
		exact=NO
		status=1
		echo "exact.sh: $name: status $rc, $bad rounds with a wrong count:" >&2
		cat "$out/$name.txt" "$out/$name.err" >&2
	fi
	insns=$(awk '$1 == "XB" && $4 == "step" { print $7; exit }' "$out/$name.txt")
	steps=$(sed -n 's/.*, steps \([0-9]*\),.*/\1/p' "$out/$name.report" | head -n 1)
	# block mode: the breakpoint exits too (the report adds them when there are any)
	bps=$(sed -n 's/.*, breakpoints \([0-9]*\).*/\1/p' "$out/$name.report" | head -n 1)
	steps=$(( ${steps:-0} + ${bps:-0} ))
	st=$(awk '$1 == "XB" && $4 == "step" { print $5 }' "$out/$name.txt" | median)
	fl=$(awk '$1 == "XB" && $4 == "floor" { print $5 }' "$out/$name.txt" | median)
	awk -v w="${wl:-$name}" -v i="${insns:--}" -v s="${steps:-0}" -v r="$rounds" \
	    -v st="$st" -v fl="$fl" -v k="$khz" -v e="$exact" 'BEGIN {
		x = r > 0 ? s / r : 0
		ipe = x > 0 ? i / x : 0
		ratio = fl > 0 ? st / fl : 0
		printf "%-9s %9s %9.0f %8.2f %9.3f %9.3f %7.1f %6s\n", w, i, x,
		    ipe, st / k / 1000, fl / k / 1000, ratio, e }'
done
echo
echo "insns/round: counted instructions of one round, checked exact by the guest in every"
echo "  counted round (and 0 in every floor round).  exits/round: vpmu-run's single steps and"
echo "  breakpoint exits over the counted rounds, divided by their number.  counted, floor: median round time by the"
echo "  guest's RDTSC; ratio = counted / floor.  Raw lines and reports: $out/"
exit $status
