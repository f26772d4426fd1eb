#!/bin/sh
# build-with.sh SRC BIN COMPILER -- configure and build the whole tree with
# another compiler, warnings as errors.  Exit 77 (skip) if it is absent.
set -e
src=$1 bin=$2 cc=$3
if ! command -v "$cc" >/dev/null 2>&1; then
	echo "SKIP: $cc is not installed"
	exit 77
fi
cmake -S "$src" -B "$bin" -DCMAKE_C_COMPILER="$cc" -DVPMU_WERROR=ON >/dev/null
cmake --build "$bin" -j 2
