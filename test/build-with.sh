#!/bin/sh
# build-with.sh SRC BIN COMPILER -- build the whole tree with another
# compiler, warnings as errors, under AddressSanitizer, UndefinedBehavior-
# Sanitizer and LeakSanitizer, then run its unit tests there.
# Exit 77 (skip) if the compiler is absent.
set -e
src=$1 bin=$2 cc=$3
if ! command -v "$cc" >/dev/null 2>&1; then
	echo "SKIP: $cc is not installed"
	exit 77
fi
san="-fsanitize=address,undefined -fno-sanitize-recover=all -fno-omit-frame-pointer"
cmake -S "$src" -B "$bin" -DCMAKE_C_COMPILER="$cc" -DVPMU_WERROR=ON \
    -DCMAKE_BUILD_TYPE=Debug -DCMAKE_C_FLAGS="$san" \
    -DCMAKE_EXE_LINKER_FLAGS="$san" -DCMAKE_SHARED_LINKER_FLAGS="$san" >/dev/null
cmake --build "$bin" -j 2
cd "$bin"
# Not the tests that build or install the tree again, nor the long ones, nor
# the Linux demo (a guest's kernel and perf, not the library, do its work),
# nor those labelled san_skip (variants of a test kept here, whose code the
# kept one runs too).
ctest --output-on-failure -E '^(build_|consumer|kvm_unit_tests|linux_demo$)' -LE 'long|san_skip'
