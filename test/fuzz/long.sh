#!/bin/sh
# long.sh [BUILD] -- the long fuzzing run (`make fuzz-long`): every fuzz
# target for FUZZ_RUNS executions (default 10,000,000) under ASan and
# UBSan, one after another, each from the kept corpus, its generated seeds
# and the corpus its earlier long runs grew in BUILD (default
# build-fuzz, configured here with clang).  Prints one line per target:
# executions, seconds, executions per second, coverage, and whether it
# found anything.  A finding is saved as BUILD/test/fuzz/NAME/crash-*
# (or leak-, timeout-, oom-): replay it with `BUILD/test/fuzz/fuzz_NAME
# FILE`, and once fixed keep it in test/fuzz/corpus/NAME.
#
# Environment: FUZZ_RUNS (executions per target), FUZZ_TIME (seconds per
# target instead, if set), FUZZ_TARGETS (names, e.g. "msr pv"; default
# all), FUZZ_JOBS (build jobs, default 2).
# Exit status: 0 when no target found anything, 1 otherwise, 2 when the
# tree cannot be built.
set -u
src=$(cd "$(dirname "$0")/../.." && pwd)
bin=${1:-$src/build-fuzz}
runs=${FUZZ_RUNS:-10000000}
jobs=${FUZZ_JOBS:-2}
if ! command -v clang >/dev/null 2>&1; then
	echo "long.sh: clang is needed for libFuzzer (make deps installs it)" >&2
	exit 2
fi
san="-fsanitize=address,undefined -fno-sanitize-recover=all -fno-omit-frame-pointer"
cmake -S "$src" -B "$bin" -DCMAKE_C_COMPILER=clang -DCMAKE_BUILD_TYPE=RelWithDebInfo \
    -DCMAKE_C_FLAGS="$san" -DCMAKE_EXE_LINKER_FLAGS="$san" \
    -DCMAKE_SHARED_LINKER_FLAGS="$san" >/dev/null || exit 2
echo "long.sh: building $bin (log: $bin/long-build.log)"
if ! sh "$src/cmake/build.sh" "$bin" "$jobs" >"$bin/long-build.log" 2>&1; then
	tail -n 40 "$bin/long-build.log"
	echo "long.sh: the build failed" >&2
	exit 2
fi
# The seeds, as the short runs make them.
(cd "$bin" && ctest -R '^fuzz_.*_seed$' >/dev/null) || {
	echo "long.sh: a seed generator failed" >&2
	exit 2
}

targets=${FUZZ_TARGETS:-$(cd "$bin/test/fuzz" && ls fuzz_* 2>/dev/null |
    sed -n 's/^fuzz_\([a-z0-9_]*\)$/\1/p')}
if [ -z "$targets" ]; then
	echo "long.sh: no fuzz targets built in $bin/test/fuzz" >&2
	exit 2
fi
if [ -n "${FUZZ_TIME:-}" ]; then
	limit="-max_total_time=$FUZZ_TIME"
else
	limit="-runs=$runs"
fi
found=0
printf '%-10s %12s %8s %9s %7s %8s  %s\n' target runs seconds exec/s cov ft result
for t in $targets; do
	exe=$bin/test/fuzz/fuzz_$t
	dir=$bin/test/fuzz/$t
	mkdir -p "$dir/corpus"
	set -- "$dir/corpus"
	[ -d "$src/test/fuzz/corpus/$t" ] && set -- "$@" "$src/test/fuzz/corpus/$t"
	[ -d "$dir/seed" ] && set -- "$@" "$dir/seed"
	log=$dir/long.log
	if "$exe" "$limit" -rss_limit_mb=2048 -artifact_prefix="$dir/" \
	    -print_final_stats=1 "$@" >"$log" 2>&1; then
		result=ok
	else
		result="FOUND: see $log"
		found=1
	fi
	n=$(sed -n 's/^stat::number_of_executed_units: *//p' "$log" | tail -n 1)
	secs=$(sed -n 's/^Done [0-9]* runs in \([0-9]*\) second.*/\1/p' "$log" | tail -n 1)
	line=$(grep -E '^#[0-9]+' "$log" | tail -n 1)
	cov=$(echo "$line" | sed -n 's/.* cov: \([0-9]*\).*/\1/p')
	ft=$(echo "$line" | sed -n 's/.* ft: \([0-9]*\).*/\1/p')
	rate=-
	[ -n "$n" ] && [ -n "$secs" ] && [ "$secs" -gt 0 ] && rate=$((n / secs))
	printf '%-10s %12s %8s %9s %7s %8s  %s\n' "$t" "${n:--}" "${secs:--}" "$rate" \
	    "${cov:--}" "${ft:--}" "$result"
done
exit $found
