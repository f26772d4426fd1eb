#!/bin/sh
# library_only.sh SOURCE_DIR BUILD_DIR CC -- the library alone, installed.
#
# Configures SOURCE_DIR in BUILD_DIR (kept between runs: a rebuild is quick)
# with -DVPMU_BUILD_EXAMPLES=OFF and -DVPMU_BUILD_TESTS=ON (which must give
# way, with a message, since the tests run the examples), builds it and
# installs it into a temporary prefix.  Then:
#   - the build made no tool and no test;
#   - the install has libvpmu.so and .a, libvpmu-guest.a, the headers (host
#     and guest), vpmu.pc, the CMake package and sections 3, 4, 5 and 7 of
#     the manual, and no bin/ and no section 1;
#   - test/consumer/app/main.c builds with pkg-config (no .pc visible but the
#     prefix's) and with find_package(vpmu), and runs.
# Every check runs even if an earlier one failed (no set -e).
# Environment: CMAKE and PKG_CONFIG name the tools (default: from PATH).
set -u

if [ $# -ne 3 ]; then
	echo "usage: $0 SOURCE_DIR BUILD_DIR CC" >&2
	exit 2
fi
src=$1 bin=$2 cc=$3
cmake=${CMAKE:-cmake}
pkgconfig=${PKG_CONFIG:-pkg-config}
. "$src/test/package/lib.sh"

tmp=$(mktemp -d "${TMPDIR:-/tmp}/vpmu-libonly.XXXXXX") || exit 1
trap 'rm -rf "$tmp"' EXIT INT TERM
prefix=$tmp/prefix
unset DESTDIR LD_LIBRARY_PATH

failed=
say "configure the library alone: -DVPMU_BUILD_EXAMPLES=OFF -DVPMU_BUILD_TESTS=ON"
run "$cmake" -S "$src" -B "$bin" -DCMAKE_C_COMPILER="$cc" -DCMAKE_BUILD_TYPE=RelWithDebInfo \
    -DVPMU_WERROR=ON -DVPMU_BUILD_EXAMPLES=OFF -DVPMU_BUILD_TESTS=ON >"$tmp/configure.log" 2>&1 ||
	{ cat "$tmp/configure.log"; exit 1; }
grep 'VPMU_BUILD_EXAMPLES is OFF' "$tmp/configure.log" ||
	{ fail "configuring says nothing of the tests being off"; failed="$failed message"; }

say "build it"
jobs=$(nproc 2>/dev/null || echo 2)
run "$cmake" --build "$bin" -j "$jobs" >"$tmp/build.log" 2>&1 ||
	{ tail -n 40 "$tmp/build.log"; exit 1; }
for f in examples/vpmu-run examples/vpmu-info test/CTestTestfile.cmake; do
	[ ! -e "$bin/$f" ] || { fail "the library-only build made $f"; failed="$failed extra"; }
done
ntests=$(cd "$bin" && ctest -N | sed -n 's/^Total Tests: //p')
[ "$ntests" = 0 ] || { fail "the library-only build has $ntests tests"; failed="$failed tests"; }

say "install it into $prefix"
run "$cmake" --install "$bin" --prefix "$prefix" >"$tmp/install.log" 2>&1 ||
	{ cat "$tmp/install.log"; echo "FAIL: cmake --install of the library alone"; exit 1; }

pc=$(find "$prefix" -path '*/pkgconfig/vpmu.pc' | head -n 1)
[ -n "$pc" ] || { echo "FAIL: the install has no pkgconfig/vpmu.pc"; exit 1; }
pcdir=$(dirname "$pc")
libdir=$(dirname "$pcdir")
for f in "$libdir/libvpmu.so" "$libdir/libvpmu.a" "$libdir/libvpmu-guest.a" \
    "$libdir/cmake/vpmu/vpmuConfig.cmake" "$libdir/cmake/vpmu/vpmuTargets.cmake" \
    "$libdir/cmake/vpmu/vpmuStaticTargets.cmake" "$libdir/cmake/vpmu/VpmuGuest.cmake" \
    "$prefix/include/vpmu/vpmu.h" "$prefix/include/vpmu-guest/pv.h" \
    "$prefix/share/vpmu/guest/crt0.S" "$prefix/share/man/man3/vpmu.3" \
    "$prefix/share/man/man7/vpmu_exact.7"; do
	if [ -e "$f" ]; then echo "installed: ${f#"$prefix"/}"
	else fail "the install has no ${f#"$prefix"/}"; failed="$failed files"; fi
done
for f in "$prefix/bin" "$prefix/share/man/man1"; do
	[ ! -e "$f" ] || { fail "the library alone installs ${f#"$prefix"/}: $(ls "$f")"
	                   failed="$failed extra"; }
done

say "a program against it with pkg-config (only the prefix's .pc files)"
if flags=$(PKG_CONFIG_LIBDIR="$pcdir" PKG_CONFIG_PATH= "$pkgconfig" --cflags --libs vpmu) &&
    echo "pkg-config --cflags --libs vpmu: $flags" &&
    # shellcheck disable=SC2086
    run "$cc" -Wall -Wextra -Werror -o "$tmp/app-pc" "$src/test/consumer/app/main.c" $flags &&
    run env LD_LIBRARY_PATH="$libdir" "$tmp/app-pc"; then :
else
	fail "the pkg-config program"; failed="$failed pkg-config"
fi

say "a program against it with find_package(vpmu)"
if run "$cmake" -S "$src/test/consumer/app" -B "$tmp/cmake" -DCMAKE_C_COMPILER="$cc" \
       -DCMAKE_PREFIX_PATH="$prefix" -DCMAKE_FIND_USE_PACKAGE_REGISTRY=OFF \
       -DCMAKE_FIND_USE_SYSTEM_PACKAGE_REGISTRY=OFF >"$tmp/cmake.log" 2>&1 &&
    run "$cmake" --build "$tmp/cmake" >"$tmp/cmake-build.log" 2>&1 &&
    run "$tmp/cmake/app"; then :
else
	cat "$tmp/cmake.log" "$tmp/cmake-build.log" 2>/dev/null | tail -n 30
	fail "the find_package(vpmu) program"; failed="$failed cmake"
fi

if [ -n "$failed" ]; then
	printf '\nconsumer_library_only: FAILED:%s\n' "$failed"
	exit 1
fi
printf '\nconsumer_library_only: the library alone builds, installs and links, with no tool and no test\n'
