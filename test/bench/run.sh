#!/bin/sh
# run.sh -- run the MSR benchmarks and print one table (`make bench`).
#
#   run.sh MSR_ROUNDTRIP BENCH_GUEST.elf MSR_CALLGRIND OUTDIR [BUILD_TYPE]
#
# 1. msr_roundtrip: ns per trapped access, libvpmu against a null handler,
#    alternating rounds in one run (medians).
# 2. msr_callgrind under valgrind --tool=callgrind, K and 2K accesses of each
#    kind: library instructions per access = (Ir(2K) - Ir(K)) / K from the
#    "summary:" line, so start-up cancels.  Only the library's entry points
#    are collected (--collect-atstart=no --toggle-collect=FN): the handling
#    (vpmu_kvm_handle_exit) and, measured apart, the per-exit pre-run call
#    (vpmu_kvm_pre_run), once on idle reads and once on
#    enabling writes, whose difference is the deferred reprogramming done
#    at the entry after such a write.  Counts include what libvpmu
#    calls in libc (pthread_mutex_lock/unlock).  Each figure is set against
#    the issue's target of 150 instructions per handled access: a report,
#    not a test; an access over it gets its top functions listed.
#
# Environment: VPMU_BENCH_ROUNDS (11), VPMU_BENCH_BATCH (2000),
# VPMU_BENCH_K (10000), VPMU_BENCH_VALGRIND (valgrind).
# Exit status: 0, or 1 if a program failed (a skip -- no KVM, no valgrind --
# is not a failure, and neither is a figure over the target).
set -u

[ $# -ge 4 ] || { echo "usage: $0 MSR_ROUNDTRIP GUEST.elf MSR_CALLGRIND OUTDIR [BUILD_TYPE]" >&2; exit 2; }
rt=$1 guest=$2 cg=$3 out=$4 btype=${5:-}
ROUNDS=${VPMU_BENCH_ROUNDS:-11}
BATCH=${VPMU_BENCH_BATCH:-2000}
K=${VPMU_BENCH_K:-10000}
K2=$((2 * K))
VALGRIND=${VPMU_BENCH_VALGRIND:-valgrind}
TARGET=150
root=$(cd "$(dirname "$0")/../.." && pwd)
status=0
mkdir -p "$out" || exit 1
rm -f "$out"/*.cg "$out"/*.txt "$out"/*.ir "$out"/*.self.*

# ---- 1. round trips ------------------------------------------------------------
"$rt" -m -v -r "$ROUNDS" -n "$BATCH" "$guest" >"$out/roundtrip.txt" 2>&1
rc=$?
rt_note=
case $rc in
0)	;;
77)	rt_note="round trips skipped: $(sed -n 's/^SKIP: //p' "$out/roundtrip.txt")" ;;
*)	rt_note="round trips FAILED (status $rc): see $out/roundtrip.txt"
	cat "$out/roundtrip.txt" >&2
	status=1 ;;
esac
# RESULT <tag> <lib ns> <null ns> <ratio> <lib-null ns> <% of RT>
rt_field() {
	awk -v t="$1" -v f="$2" '$1 == "RESULT" && $2 == t { print $f; found = 1 }
	    END { if (!found) print "-" }' "$out/roundtrip.txt"
}
tsc=$(sed -n 's/.*(guest RDTSC, \([0-9]*\) kHz).*/\1/p' "$out/roundtrip.txt" | head -n 1)

# ---- 2. callgrind ------------------------------------------------------------------
# Cases: tag, then the label in the table.
CASES="rd_pmc0 rd_pmc0_counting wr_evtsel0 wr_enable rd_status"
label() {
	case $1 in
	rd_pmc0)		echo "RDMSR IA32_PMC0" ;;
	rd_pmc0_counting)	echo "RDMSR IA32_PMC0, counting" ;;
	wr_evtsel0)		echo "WRMSR PERFEVTSEL0, same" ;;
	wr_enable)		echo "WRMSR PERFEVTSEL0, enable" ;;
	rd_status)		echo "RDMSR PERF_GLOBAL_STATUS" ;;
	esac
}

cg_note=
path=
if ! command -v "$VALGRIND" >/dev/null 2>&1 || ! command -v callgrind_annotate >/dev/null 2>&1; then
	cg_note="instruction counts skipped: valgrind is not installed (apt-get install valgrind)"
else
	path=$("$VALGRIND" --tool=none -q "$cg" -p 2>"$out/probe.txt")
	case $path in
	"path: kvm")
		want="path: kvm"
		dflag=
		handle="--toggle-collect=vpmu_kvm_handle_exit"
		prepost="--toggle-collect=vpmu_kvm_pre_run" ;;
	"path: direct"*)
		want="path: direct"
		dflag=-d
		handle="--toggle-collect=vpmu_vcpu_check_overflow --toggle-collect=vpmu_msr_read --toggle-collect=vpmu_msr_write"
		prepost="--toggle-collect=vpmu_vcpu_take_pmi" ;;
	*)
		cg_note="instruction counts FAILED: msr_callgrind -p under valgrind: $(cat "$out/probe.txt")"
		status=1
		path= ;;
	esac
fi

# callgrind NAME CASE N TOGGLES: Ir collected, or nothing on failure.
callgrind() {
	# shellcheck disable=SC2086
	if ! "$VALGRIND" --tool=callgrind --callgrind-out-file="$out/$1.cg" \
	    --collect-atstart=no $4 "$cg" $dflag "$2" "$3" >"$out/$1.txt" 2>&1 ||
	    ! grep -q "^$want" "$out/$1.txt"; then
		echo "msr_callgrind $2 $3 under callgrind failed (or took another path):" >&2
		cat "$out/$1.txt" >&2
		return 1
	fi
	sed -n 's/^summary: *//p' "$out/$1.cg"
}

# perk IR_K IR_2K: (Ir(2K) - Ir(K)) / K
perk() {
	awk -v a="$1" -v b="$2" -v k="$K" 'BEGIN { printf "%.1f", (b - a) / k }'
}

# Per-function self cost per access, top ones: (self(2K) - self(K)) / K.
selfcost() {
	callgrind_annotate --inclusive=no --threshold=100 "$1" 2>/dev/null |
	    awk -v root="$root/" '
		/^ *[0-9,]+ \( *[0-9.]+%\) +[^ ].* \[.*\]$/ {
			n = $1; gsub(",", "", n)
			fn = $0; sub(/^ *[0-9,]+ \( *[0-9.]+%\) +/, "", fn); sub(/ \[.*\]$/, "", fn)
			sub(root, "", fn); gsub(/\.\/nptl\/\.\/nptl\//, "glibc nptl/", fn)
			print n "\t" fn
		}'
}
breakdown() {
	selfcost "$out/$1.K.cg" >"$out/$1.self.K"
	selfcost "$out/$1.2K.cg" >"$out/$1.self.2K"
	awk -F '\t' -v k="$K" 'NR == FNR { a[$2] = $1; next }
	    { d = ($1 - a[$2]) / k; if (d >= 0.5) printf "%8.1f  %s\n", d, $2 }' \
	    "$out/$1.self.K" "$out/$1.self.2K" | sort -rn | head -n 12
}

pp=-
ppe=-
if [ -n "$path" ]; then
	a=$(callgrind prepost.K rd_pmc0 "$K" "$prepost") &&
	    b=$(callgrind prepost.2K rd_pmc0 "$K2" "$prepost") && pp=$(perk "$a" "$b") ||
	    status=1
	a=$(callgrind prepost_enable.K wr_enable "$K" "$prepost") &&
	    b=$(callgrind prepost_enable.2K wr_enable "$K2" "$prepost") && ppe=$(perk "$a" "$b") ||
	    status=1
	for c in $CASES; do
		a=$(callgrind "$c.K" "$c" "$K" "$handle") &&
		    b=$(callgrind "$c.2K" "$c" "$K2" "$handle") &&
		    perk "$a" "$b" >"$out/$c.ir" || status=1
	done
fi

# ---- the table ---------------------------------------------------------------------
echo
echo "libvpmu MSR benchmark: model intel-v2, synthetic source, 1 vCPU$( [ -n "$btype" ] && echo ", $btype build")"
echo "host: $(uname -r), $(grep -m1 'model name' /proc/cpuinfo 2>/dev/null | sed 's/.*: //')"
printf '%-27s %9s %9s %6s %9s %7s | %8s %8s %8s  %s\n' "" "libvpmu" "null" "ratio" "lib-null" "% of" \
    "handle" "+pre/" "library" "vs $TARGET"
printf '%-27s %9s %9s %6s %9s %7s | %8s %8s %8s  %s\n' "access" "ns" "ns" "" "ns" "RT" \
    "_exit Ir" "post Ir" "Ir/exit" ""
over=
for c in $CASES; do
	case $c in
	rd_pmc0|wr_evtsel0)
		set -- "$(rt_field "$c" 3)" "$(rt_field "$c" 4)" "$(rt_field "$c" 5)" \
		    "$(rt_field "$c" 6)" "$(rt_field "$c" 7)"
		[ "$5" = - ] || set -- "$1" "$2" "$3" "$4" "$5%" ;;
	*)	set -- - - - - - ;;
	esac
	ir=-; tot=-; verdict=
	if [ -f "$out/$c.ir" ]; then
		ir=$(cat "$out/$c.ir")
		if [ "$pp" != - ]; then
			tot=$(awk -v a="$ir" -v b="$pp" 'BEGIN { printf "%.1f", a + b }')
		else
			tot=$ir
		fi
		verdict=$(awk -v t="$tot" -v m="$TARGET" 'BEGIN { print (t <= m ? "PASS" : "OVER") }')
		[ "$verdict" = OVER ] && over="$over $c"
	fi
	printf '%-27s %9s %9s %6s %9s %7s | %8s %8s %8s  %s\n' "$(label "$c")" "$1" "$2" "$3" "$4" "$5" \
	    "$ir" "$pp" "$tot" "$verdict"
done
echo
echo "ns: per access, median over $ROUNDS rounds per handler of $BATCH accesses each; libvpmu"
echo "  and null rounds alternate in one run; host CLOCK_MONOTONIC per batch.  Every round and"
echo "  the guest-RDTSC figures${tsc:+ ($tsc kHz)}: $out/roundtrip.txt"
echo "  null: the same KVM_RUN loop and MSR filter; RDMSR answers 0, WRMSR is dropped."
echo "  % of RT = (libvpmu - null) / libvpmu: libvpmu's share of a trapped access."
if [ -n "$path" ]; then
	echo "Ir: instructions per access, (Ir(2K) - Ir(K)) / K with K = $K, callgrind collecting"
	echo "  only inside libvpmu's entry points; libc's pthread_mutex_lock/unlock called by"
	echo "  libvpmu count as library work."
	if [ "$path" = "path: kvm" ]; then
		echo "  handle_exit Ir: vpmu_kvm_handle_exit on a kvm_run filled as KVM_RUN would, after"
		echo "  vpmu_kvm_create on a real KVM VM fd (valgrind passed the KVM ioctls through)."
		echo "  +pre/post Ir: vpmu_kvm_pre_run, once per exit."
	else
		echo "  The KVM path is unusable under valgrind here: direct calls instead"
		echo "  (${path#path: direct }); handle_exit Ir = vpmu_vcpu_check_overflow +"
		echo "  vpmu_msr_read/write, +pre/post Ir = vpmu_vcpu_take_pmi."
	fi
	echo "  library Ir/exit = handle_exit + pre/post: what the glue costs per handled access;"
	echo "  PASS/OVER compares it with the target of $TARGET (a report, not a test)."
	if [ "$pp" != - ] && [ "$ppe" != - ]; then
		echo "  Deferred reprogramming after an enabling WRMSR, at the next entry: pre/post"
		echo "  $ppe Ir there against $pp idle, $(awk -v a="$ppe" -v b="$pp" \
		    'BEGIN { printf "%.1f", a - b }') Ir of programming (not in the table's WRMSR figure)."
	fi
fi
[ -n "$rt_note" ] && echo "$rt_note"
[ -n "$cg_note" ] && echo "$cg_note"
if [ -n "$over" ]; then
	for c in $over; do
		echo
		echo "$(label "$c"): over $TARGET; self Ir per access by function, handling only:"
		breakdown "$c"
	done
	if [ "$pp" != - ]; then
		echo
		echo "pre/post, once per exit: self Ir per exit by function:"
		breakdown prepost
	fi
fi
[ -n "$path" ] && echo && echo "callgrind files: $out/*.cg (callgrind_annotate --inclusive=yes FILE)"
exit $status
