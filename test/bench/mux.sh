#!/bin/sh
# mux.sh -- the multiplexing benchmark of issue 4 (`make bench`, after run.sh).
#
#   mux.sh MUX_BENCH MUX_GUEST.elf MUX_CALLGRIND OUTDIR [BUILD_TYPE]
#
# 1. mux_bench, three runs: the accuracy part quiet (-A -L 0: per-counter
#    tables and summary), the accuracy part loaded (-A -L VPMU_MUX_LOAD, two
#    CPU-bound processes beside it by default: its summary, printed right
#    after the quiet one), and the cost per vCPU exit and per rotation, quiet
#    (-C -L 0).  Each run's output is kept in OUTDIR/mux.quiet.txt,
#    mux.loaded.txt and mux.cost.txt, and all of it, with the RESULT lines
#    (each with load=N), in OUTDIR/mux.txt.
# 2. mux_callgrind under valgrind --tool=callgrind, K and 2K calls of
#    vpmu_synthetic_advance with 16 SC PMCs: instructions per advance
#    = (Ir(2K) - Ir(K)) / K from the "summary:" line (start-up cancels),
#    collected only inside vpmu_synthetic_advance; of that, the core's
#    scheduler (vpmu__vcpu_advance, inclusive: the rotation and the source
#    calls it makes) from callgrind_annotate --inclusive=yes.  Each case is
#    also run natively with VPMU_MUX_NATIVE_K (1000000) calls for the time
#    per advance (CLOCK_MONOTONIC around the loop, median of 3 runs).
#
# Environment: VPMU_MUX_ARGS (extra mux_bench options for all three runs, e.g.
# "-n 200000 -r 5"; -A, -C and -L are set here), VPMU_MUX_LOAD (CPU-bound
# processes beside the loaded run, 2; 0 skips it), VPMU_BENCH_K (10000),
# VPMU_BENCH_VALGRIND (valgrind).
# Exit status: 0, or 1 if a program failed (a skip -- no KVM, no valgrind --
# is not a failure, and neither is an error over the goal).
set -u

[ $# -ge 4 ] || { echo "usage: $0 MUX_BENCH GUEST.elf MUX_CALLGRIND OUTDIR [BUILD_TYPE]" >&2; exit 2; }
mb=$1 guest=$2 cg=$3 out=$4 btype=${5:-}
K=${VPMU_BENCH_K:-10000}
LOAD=${VPMU_MUX_LOAD:-2}
NK=${VPMU_MUX_NATIVE_K:-1000000}
K2=$((2 * K))
VALGRIND=${VPMU_BENCH_VALGRIND:-valgrind}
root=$(cd "$(dirname "$0")/../.." && pwd)
status=0
mkdir -p "$out" || exit 1
rm -f "$out"/mux.txt "$out"/mux.*

echo
echo "libvpmu multiplexing benchmark (issue 4)$( [ -n "$btype" ] && echo ", $btype build")"
echo "host: $(uname -r), $(grep -m1 'model name' /proc/cpuinfo 2>/dev/null | sed 's/.*: //')"

# ---- 1. accuracy (quiet and loaded) and cost on KVM -----------------------------
# mb_run NAME WHAT SUMMARY_ONLY MUX_BENCH_OPTIONS...: run mux_bench into
# OUTDIR/mux.NAME.txt, append that to mux.txt and print it without the RESULT
# lines (with SUMMARY_ONLY, from its "summary" line on).  0, 1 if it failed,
# 77 if it skipped (no KVM).
mb_run() {
	_name=$1 _what=$2 _sum=$3
	shift 3
	# shellcheck disable=SC2086
	"$mb" ${VPMU_MUX_ARGS:-} "$@" "$guest" >"$out/mux.$_name.txt" 2>&1
	_rc=$?
	cat "$out/mux.$_name.txt" >>"$out/mux.txt"
	case $_rc in
	0)	if [ -n "$_sum" ]; then
			sed -n '/^summary/,$p' "$out/mux.$_name.txt" | grep -v '^RESULT '
			echo "(per-counter tables: $out/mux.$_name.txt)"
		else
			grep -v '^RESULT ' "$out/mux.$_name.txt"
		fi ;;
	77)	echo "$_what skipped: $(sed -n 's/^SKIP: //p' "$out/mux.$_name.txt")"
		return 77 ;;
	*)	grep -v '^RESULT ' "$out/mux.$_name.txt"
		echo "mux_bench ($_what) FAILED (status $_rc): see $out/mux.$_name.txt"
		return 1 ;;
	esac
	return 0
}
: >"$out/mux.txt"
echo
echo "---- multiplexing accuracy, quiet (-L 0: no load of its own beside it) ----"
mb_run quiet "quiet accuracy" "" -A -L 0
rc=$?
[ $rc -eq 1 ] && status=1
if [ $rc -eq 77 ]; then
	echo "loaded accuracy and cost skipped too"
else
	if [ "$LOAD" -gt 0 ] 2>/dev/null; then
		echo
		echo "---- multiplexing accuracy, loaded (-L $LOAD: $LOAD CPU-bound processes beside it) ----"
		mb_run loaded "loaded accuracy" 1 -A -L "$LOAD"
		[ $? -eq 1 ] && status=1
	fi
	echo
	echo "---- multiplexing cost, quiet (-L 0) ----"
	mb_run cost "cost" "" -C -L 0
	[ $? -eq 1 ] && status=1
fi

# ---- 2. the scheduler alone: instructions and ns per advance and per rotation -------
CASES="none norot rot"
# native CASE: ns per advance, median of 3 runs; nothing on failure.
native() {
	for _ in 1 2 3; do
		"$cg" "$1" "$NK" 2>/dev/null | sed -n 's/^ns: \([0-9.]*\) per advance/\1/p'
	done | sort -n | sed -n 2p
}
# callgrind NAME CASE N: the Ir total, or nothing on failure.
callgrind() {
	if ! "$VALGRIND" --tool=callgrind --callgrind-out-file="$out/mux.$1.cg" \
	    --collect-atstart=no --toggle-collect=vpmu_synthetic_advance \
	    "$cg" "$2" "$3" >"$out/mux.$1.out" 2>&1; then
		echo "mux_callgrind $2 $3 under callgrind failed:" >&2
		cat "$out/mux.$1.out" >&2
		return 1
	fi
	sed -n 's/^summary: *//p' "$out/mux.$1.cg"
}
# inclusive NAME FUNCTION: the function's inclusive Ir, 0 if absent.
inclusive() {
	callgrind_annotate --inclusive=yes --threshold=100 "$out/mux.$1.cg" 2>/dev/null |
	    awk -v fn="$2" '
		index($0, ":" fn " [") { n = $1; gsub(",", "", n); print n; found = 1; exit }
		END { if (!found) print 0 }'
}
perk() {
	awk -v a="$1" -v b="$2" -v k="$K" 'BEGIN { printf "%.1f", (b - a) / k }'
}
# minus A B: A - B with one decimal, - if either is missing.
minus() {
	awk -v a="$1" -v b="$2" 'BEGIN { if (a == "" || b == "" || a == "-" || b == "-") print "-";
	    else printf "%.1f", a - b }'
}
# Per-function self Ir per advance, top ones: (self(2K) - self(K)) / K.
selfcost() {
	callgrind_annotate --inclusive=no --threshold=100 "$1" 2>/dev/null |
	    awk -v root="$root/" '
		/^ *[0-9,]+ \( *[0-9.]+%\) +[^ ].* \[.*\]$/ {
			n = $1; gsub(",", "", n)
			fn = $0; sub(/^ *[0-9,]+ \( *[0-9.]+%\) +/, "", fn); sub(/ \[.*\]$/, "", fn)
			sub(root, "", fn)
			print n "\t" fn
		}'
}
breakdown() {
	selfcost "$out/mux.$1.K.cg" >"$out/mux.$1.self.K"
	selfcost "$out/mux.$1.2K.cg" >"$out/mux.$1.self.2K"
	awk -F '\t' -v k="$K" 'NR == FNR { a[$2] = $1; next }
	    { d = ($1 - a[$2]) / k; if (d >= 0.5) printf "%10.1f  %s\n", d, $2 }' \
	    "$out/mux.$1.self.K" "$out/mux.$1.self.2K" | sort -rn | head -n 10
}
val() {
	v=$(cat "$out/mux.$1" 2>/dev/null)
	echo "${v:--}"
}

have_cg=1
if ! command -v "$VALGRIND" >/dev/null 2>&1 || ! command -v callgrind_annotate >/dev/null 2>&1; then
	have_cg=
fi
for c in $CASES; do
	native "$c" >"$out/mux.$c.ns"
	[ -s "$out/mux.$c.ns" ] || { echo "mux_callgrind $c $NK failed" >&2; status=1; }
	[ -n "$have_cg" ] || continue
	if ! a=$(callgrind "$c.K" "$c" "$K") || ! b=$(callgrind "$c.2K" "$c" "$K2"); then
		status=1
		continue
	fi
	perk "$a" "$b" >"$out/mux.$c.ir"
	perk "$(inclusive "$c.K" vpmu__vcpu_advance)" "$(inclusive "$c.2K" vpmu__vcpu_advance)" \
	    >"$out/mux.$c.core"
	sed -n 's/^ran: //p' "$out/mux.$c.2K.out" >"$out/mux.$c.ran"
done

echo
echo "the scheduler alone: vpmu_synthetic_advance(1 us) with 16 SC PMCs, synthetic source"
printf '  %-48s %9s %9s %8s  %s\n' "case" "advance" "scheduler" "advance" "ran (PMC 0, PMC 15)"
printf '  %-48s %9s %9s %8s  %s\n' "" "Ir" "Ir" "ns" ""
for c in $CASES; do
	case $c in
	none)	l="capacity 0: 16 count, no multiplexing" ;;
	norot)	l="capacity 4, interval 10 s: 4 count, no rotation" ;;
	rot)	l="capacity 4, interval 1 us: a rotation every call" ;;
	esac
	printf '  %-48s %9s %9s %8s  %s\n' "$l" "$(val "$c.ir")" "$(val "$c.core")" \
	    "$(val "$c.ns")" "$(val "$c.ran")"
done
r_ir=$(minus "$(val rot.ir)" "$(val norot.ir)")
r_core=$(minus "$(val rot.core)" "$(val norot.core)")
r_ns=$(minus "$(val rot.ns)" "$(val norot.ns)")
printf '  %-48s %9s %9s %8s\n' "one rotation (rot - norot)" "$r_ir" "$r_core" "$r_ns"
echo "RESULT rotation_synthetic $r_ir $r_core $r_ns" >>"$out/mux.txt"
echo "  advance Ir: everything inside vpmu_synthetic_advance (the synthetic source's own"
echo "  per-counter update, its 128-bit division included, and the core); scheduler Ir:"
echo "  the core's vpmu__vcpu_advance, inclusive (time accounting, the rotation, and the"
echo "  source read/enable/disable calls it makes); (Ir(2K) - Ir(K)) / K, K = $K, by"
echo "  callgrind.  advance ns: the same calls natively, $NK of them, median of 3 runs."
if [ -n "$have_cg" ] && [ -f "$out/mux.rot.2K.cg" ] && [ -f "$out/mux.norot.2K.cg" ]; then
	echo
	echo "self Ir per advance by function, rotating (rot):"
	breakdown rot
	echo "self Ir per advance by function, not rotating (norot):"
	breakdown norot
fi
[ -n "$have_cg" ] || echo "instruction counts skipped: valgrind is not installed (apt-get install valgrind)"
echo
echo "files: $out/mux.txt (with RESULT lines; per run: mux.quiet.txt, mux.loaded.txt,"
echo "  mux.cost.txt), $out/mux.*.cg (callgrind_annotate FILE)"
exit $status
