#!/bin/sh
# build-tsan.sh SRC BIN COMPILER -- build the whole tree with COMPILER's
# ThreadSanitizer (Debug, warnings as errors), then run the tests where
# threads meet: the unit tests (the sweeper, the log writers, the fast-page
# refresh thread, a perf counter read from another thread), every vpmu-run
# test with more than one vCPU, multiplexing (--host-counters,
# --mux-interval) or a snapshot of two vCPUs, the fast-page guests, and
# the sampling ones (vpmustat, the sample ring and its sweeper).  Any
# report fails the test: the reports are collected from every process,
# whatever status a test script passes on, and printed.
# Exit 77 (skip) if the compiler is absent or its ThreadSanitizer cannot
# run here.
set -e
src=$1 bin=$2 cc=$3
if ! command -v "$cc" >/dev/null 2>&1; then
	echo "SKIP: $cc is not installed (the ThreadSanitizer build needs it)"
	exit 77
fi
san="-fsanitize=thread -fno-omit-frame-pointer"
mkdir -p "$bin"

# ThreadSanitizer needs its runtime, and an address-space layout it knows:
# some kernels randomize mmap more than an older runtime expects, which
# runs with randomization off (setarch -R) instead.
run=
printf 'int main(void) { return 0; }\n' >"$bin/tsan-probe.c"
# shellcheck disable=SC2086
if ! "$cc" $san -o "$bin/tsan-probe" "$bin/tsan-probe.c" >"$bin/tsan-probe.log" 2>&1; then
	echo "SKIP: $cc cannot build with -fsanitize=thread:"
	cat "$bin/tsan-probe.log"
	exit 77
fi
if ! "$bin/tsan-probe" >"$bin/tsan-probe.log" 2>&1; then
	if setarch "$(uname -m)" -R "$bin/tsan-probe" >/dev/null 2>&1; then
		run="setarch $(uname -m) -R"
	else
		echo "SKIP: a ThreadSanitizer program does not run here:"
		cat "$bin/tsan-probe.log"
		exit 77
	fi
fi

cmake -S "$src" -B "$bin" -DCMAKE_C_COMPILER="$cc" -DVPMU_WERROR=ON \
    -DCMAKE_BUILD_TYPE=Debug -DCMAKE_C_FLAGS="$san" \
    -DCMAKE_EXE_LINKER_FLAGS="$san" -DCMAKE_SHARED_LINKER_FLAGS="$san" >/dev/null
cmake --build "$bin" -j 2
cd "$bin"

# The tests: the unit tests by name (one per test/unit/test_*.c: seconds
# in all), the guest tests named here, and every test whose command line
# runs more than one vCPU or multiplexes (read from ctest's own listing,
# so a new one is in without an edit here).  Sampling: vpmustat's runs
# (the sweeper, the log writer, the progress line; a counting run), the
# call-chain walk, and both exact modes' samples;
# pmclog_independent_reader is left out (vpmustat_hot_profile's run again,
# then a reader with no thread).
re=
for f in "$src"/test/unit/test_*.c; do
	n=${f##*/test_}
	re="$re|${n%.c}"
done
re="$re|guest_snapshot_resume_2vcpu|pv_fastpage_.*|vpmustat_hot_.*"
# embed's vCPU threads set themselves up at the same time (issue 32).
re="$re|embed_nmis_.*|embed_threads_.*"
re="$re|sample_callchain_bad_frame_pointers|exact_modes_samples_.*"
re="$re|$(ctest -N -V | awk '
	/^[0-9]+: Test command:/ {
		n = $1; sub(":", "", n)
		if ($0 ~ /"--vcpus" "([2-9]|[1-9][0-9]+)"/ || $0 ~ /"--host-counters" "[1-9]/ ||
		    $0 ~ /"--mux-interval"/)
			want[n] = 1
	}
	/^ *Test +#[0-9]+: / {
		n = $2; sub("#", "", n); sub(":", "", n)
		if (n in want)
			printf "%s|", $3
	}' | sed 's/|$//')"
re="^(${re#|})\$"

reports=$PWD/tsan-reports
rm -rf "$reports"
mkdir -p "$reports"
TSAN_OPTIONS="halt_on_error=1 second_deadlock_stack=1 log_path=$reports/tsan"
export TSAN_OPTIONS
# source_perf counts the page faults read(2) takes in the kernel against
# those of user mode; ThreadSanitizer's read() interceptor touches the
# shadow of the buffer from user mode, so it runs without interceptor
# accesses (its own code is still checked).
st=0
$run ctest --output-on-failure -R "$re" -E '^source_perf$' -LE 'long|san_skip' || st=$?
TSAN_OPTIONS="$TSAN_OPTIONS ignore_interceptors_accesses=1" \
    $run ctest --output-on-failure -R '^source_perf$' || st=$?
if [ -n "$(ls "$reports")" ]; then
	echo "build-tsan.sh: ThreadSanitizer reports:"
	cat "$reports"/*
	exit 1
fi
exit $st
