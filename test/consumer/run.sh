#!/bin/sh
# run.sh BUILD_DIR SOURCE_DIR CC -- build a consumer against the INSTALLED libvpmu.
#
# Installs BUILD_DIR into a private prefix, then builds test/consumer/app
# three ways and runs each program, and builds a guest from the installed
# guest side (4.):
#   1. CMake:      find_package(vpmu) + target_link_libraries(app vpmu::vpmu),
#                  and a guest through the installed vpmu_add_guest(), with
#                  CFLAGS of its own, run under this build's vpmu-run
#   2. pkg-config: cc main.c $(pkg-config --cflags --libs vpmu)
#   3. static:     cc main.c <prefix>/.../libvpmu.a $(pkg-config --static --libs vpmu)
# Every check runs even if an earlier one failed, so one run names every
# broken part of the package.  Exit status 0 only if all three pass.
# Environment: CMAKE and PKG_CONFIG name the tools (default: from PATH).
set -eu

if [ $# -ne 3 ]; then
	echo "usage: $0 BUILD_DIR SOURCE_DIR CC" >&2
	exit 2
fi
build=$1
app=$2/test/consumer/app
cc=$3
cmake=${CMAKE:-cmake}
pkgconfig=${PKG_CONFIG:-pkg-config}

tmp=$(mktemp -d "${TMPDIR:-/tmp}/vpmu-consumer.XXXXXX")
trap 'rm -rf "$tmp"' EXIT INT TERM
prefix=$tmp/prefix
unset DESTDIR		# a DESTDIR from the caller would move the install

say()  { printf '\n== %s\n' "$*"; }
run()  { printf '+ %s\n' "$*"; "$@"; }
fail() { printf 'FAIL: %s\n' "$*"; return 1; }

say "install $build into $prefix"
run "$cmake" --install "$build" --prefix "$prefix" >"$tmp/install.log" ||
	{ cat "$tmp/install.log"; exit 1; }

# GNUInstallDirs chooses lib/ or lib/<multiarch>/: find what it chose.
pc=$(find "$prefix" -path '*/pkgconfig/vpmu.pc' | head -n 1)
if [ -z "$pc" ]; then
	echo "FAIL: the install has no pkgconfig/vpmu.pc"
	exit 1
fi
pcdir=$(dirname "$pc")
libdir=$(dirname "$pcdir")
echo "libdir: $libdir"
export LD_LIBRARY_PATH="$libdir${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}"

# The program must load libvpmu from the prefix, not from a system install.
check_loads_prefix() {
	command -v ldd >/dev/null 2>&1 || return 0
	lib=$(ldd "$1" | awk '/libvpmu/ { print $3 }')
	case $lib in
	"") echo "$1: libvpmu linked statically" ;;
	"$prefix"/*) echo "$1: libvpmu from $lib" ;;
	*) fail "$1 loads libvpmu from $lib, not from $prefix" ;;
	esac
}

# pkg-config's flags must point into the prefix, or a system install (or
# nothing) is what the compiler sees.
check_flags_in_prefix() {
	case " $1 " in
	*" -I$prefix/"*) ;;
	*) fail "pkg-config gives no -I into $prefix: '$1' ($(grep '^prefix=' "$pc"))"
	   return 1 ;;
	esac
	case " $1 " in
	*" -L$prefix/"*) ;;
	*) fail "pkg-config gives no -L into $prefix: '$1'"; return 1 ;;
	esac
}

check_cmake() {
	say "1. CMake: find_package(vpmu), target_link_libraries(app vpmu::vpmu)"
	run "$cmake" -S "$app" -B "$tmp/cmake" -DCMAKE_C_COMPILER="$cc" \
	    -DCMAKE_PREFIX_PATH="$prefix" -DCMAKE_FIND_USE_PACKAGE_REGISTRY=OFF \
	    -DCMAKE_FIND_USE_SYSTEM_PACKAGE_REGISTRY=OFF >"$tmp/cmake.log" ||
		{ cat "$tmp/cmake.log"; return 1; }
	dir=$(sed -n 's/^vpmu_DIR:PATH=//p' "$tmp/cmake/CMakeCache.txt")
	echo "vpmu_DIR: $dir"
	case $dir in
	"$prefix"/*) ;;
	*) fail "find_package(vpmu) found $dir, not the package in $prefix"; return 1 ;;
	esac
	run "$cmake" --build "$tmp/cmake" || return 1
	run "$tmp/cmake/app" || return 1
	check_loads_prefix "$tmp/cmake/app" || return 1
	# The guest of vpmu_add_guest(), from the package alone.
	[ -f "$tmp/cmake/consumer_guest.elf" ] ||
		{ fail "vpmu_add_guest() built no consumer_guest.elf"; return 1; }
	out=$(VPMU_SKIP_NO_KVM=1 "$build/examples/vpmu-run" --quiet --source synthetic \
	    "$tmp/cmake/consumer_guest.elf") && st=0 || st=$?
	echo "$out"
	if [ $st -eq 77 ]; then
		echo "no usable /dev/kvm: the guest is built, not run"
		return 0
	fi
	[ $st -eq 0 ] || { fail "vpmu-run exited $st"; return 1; }
	case $out in
	*"consumer guest: CFLAGS 42, channel yes"*) ;;
	*) fail "the consumer's guest printed something else"; return 1 ;;
	esac
}

check_pkgconfig() {
	say "2. pkg-config: cc main.c \$(pkg-config --cflags --libs vpmu)"
	flags=$(PKG_CONFIG_PATH="$pcdir" "$pkgconfig" --cflags --libs vpmu) || return 1
	echo "pkg-config --cflags --libs vpmu: $flags"
	check_flags_in_prefix "$flags" || return 1
	# $flags is a word list by design.
	# shellcheck disable=SC2086
	run "$cc" -Wall -Wextra -Werror -o "$tmp/app-pc" "$app/main.c" $flags || return 1
	run "$tmp/app-pc" || return 1
	check_loads_prefix "$tmp/app-pc"
}

check_static() {
	say "3. static: cc main.c libvpmu.a \$(pkg-config --static --libs vpmu)"
	flags=$(PKG_CONFIG_PATH="$pcdir" "$pkgconfig" --static --cflags --libs vpmu) ||
		return 1
	echo "pkg-config --static --cflags --libs vpmu: $flags"
	check_flags_in_prefix "$flags" || return 1
	# Name the archive, drop -lvpmu (the linker would pick the .so).
	set -- "$libdir/libvpmu.a"
	for f in $flags; do
		[ "$f" = -lvpmu ] || set -- "$@" "$f"
	done
	run "$cc" -Wall -Wextra -Werror -o "$tmp/app-static" "$app/main.c" "$@" ||
		return 1
	run "$tmp/app-static" || return 1
	check_loads_prefix "$tmp/app-static"
}

# A guest built from the installed guest side alone: <vpmu-guest/*.h>,
# libvpmu-guest.a and the runtime under share/vpmu/guest, with the flags
# vpmu_add_guest() uses; then run under this build's vpmu-run when KVM is
# usable (test/pv/smoke.c: the probe, a NULL request, EINVAL and EFAULT).
check_guest() {
	say "4. guest: test/pv/smoke.c with the installed <vpmu-guest/*.h>, libvpmu-guest.a, runtime"
	gdir=$prefix/share/vpmu/guest
	glib=$(find "$prefix" -name libvpmu-guest.a | head -n 1)
	[ -n "$glib" ] || { fail "the install has no libvpmu-guest.a"; return 1; }
	gflags="-std=gnu11 -O2 -ffreestanding -fno-pic -mno-red-zone -fno-stack-protector
	    -mgeneral-regs-only -fcf-protection=none -I$prefix/include"
	lflags="-nostdlib -static -Wl,--build-id=none -Wl,-T,$gdir/link.ld"
	case $("$cc" --version 2>/dev/null) in
	*clang*) ;;
	*) gflags="$gflags -fno-tree-loop-distribute-patterns"; lflags="$lflags -no-pie" ;;
	esac
	# shellcheck disable=SC2086
	run "$cc" $gflags -o "$tmp/smoke.elf" "$gdir/crt0.S" "$gdir/runtime.c" \
	    "$2/test/pv/smoke.c" "$glib" $lflags || return 1
	out=$(VPMU_SKIP_NO_KVM=1 "$1/examples/vpmu-run" --quiet --source synthetic \
	    "$tmp/smoke.elf") && st=0 || st=$?
	echo "$out"
	if [ $st -eq 77 ]; then
		echo "no usable /dev/kvm: the guest is built, not run"
		return 0
	fi
	[ $st -eq 0 ] || { fail "vpmu-run exited $st"; return 1; }
	case $out in
	*"pv smoke: null 0, bad magic 22 done 0x454e4f44, outside RAM 14, unaligned 22"*) ;;
	*) fail "the installed guest's answers differ"; return 1 ;;
	esac
}

failed=
check_guest "$build" "$2" || failed="$failed guest"
check_cmake || failed="$failed cmake"
check_pkgconfig || failed="$failed pkg-config"
check_static || failed="$failed static"

if [ -n "$failed" ]; then
	printf '\nconsumer_package: FAILED:%s\n' "$failed"
	exit 1
fi
printf '\nconsumer_package: the installed package works with CMake, pkg-config and static linking, and for a guest\n'
