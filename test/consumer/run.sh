#!/bin/sh
# run.sh BUILD_DIR SOURCE_DIR CC -- build a consumer against the INSTALLED libvpmu.
#
# Installs BUILD_DIR into a private prefix, then checks the installed tools
# and builds test/consumer/app four ways and runs each program, and builds a
# guest from the installed guest side (4.):
#   0. tools:      each installed tool runs (--version) on the installed
#                  libvpmu.so, found through its RUNPATH, without LD_LIBRARY_PATH
#   1. CMake:      find_package(vpmu) + target_link_libraries(app vpmu::vpmu),
#                  no include path but the prefix's, and a guest through the
#                  installed vpmu_add_guest(), with CFLAGS of its own, run
#                  under the installed vpmu-run
#   2. pkg-config: cc main.c $(pkg-config --cflags --libs vpmu), with only
#                  the prefix's .pc files visible (no libcpuid.pc: the
#                  library's dependencies are private)
#   3. static:     cc main.c <prefix>/.../libvpmu.a $(pkg-config --static --libs vpmu)
#   5. CMake static: find_package(vpmu COMPONENTS static), vpmu::vpmu_static
# Every check runs even if an earlier one failed, so one run names every
# broken part of the package.  Exit status 0 only if all pass.
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

. "$2/test/package/lib.sh"

tmp=$(mktemp -d "${TMPDIR:-/tmp}/vpmu-consumer.XXXXXX")
trap 'rm -rf "$tmp"' EXIT INT TERM
prefix=$tmp/prefix
unset DESTDIR		# a DESTDIR from the caller would move the install

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
# Nothing runs with an LD_LIBRARY_PATH but the pkg-config program, which has
# no RUNPATH: what is run must find the prefix's libvpmu by itself.
unset LD_LIBRARY_PATH
version=$(PKG_CONFIG_LIBDIR="$pcdir" PKG_CONFIG_PATH= "$pkgconfig" --modversion vpmu) ||
	{ echo "FAIL: pkg-config --modversion vpmu"; exit 1; }

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

# The installed tools run the installed libvpmu.so (examples/CMakeLists.txt).
check_tools() {
	say "0. the installed tools, on the installed libvpmu.so"
	for t in $VPMU_TOOLS; do
		[ -x "$prefix/bin/$t" ] || { fail "the install has no bin/$t"; return 1; }
		loads_libvpmu_from "$prefix/bin/$t" "$prefix" || return 1
		tool_runs "$prefix/bin/$t" "$version" || return 1
	done
	tool_runs "$prefix/bin/vpmu-qemu" "$version" || return 1
}

check_cmake() {
	say "1. CMake: find_package(vpmu), target_link_libraries(app vpmu::vpmu)"
	run "$cmake" -S "$app" -B "$tmp/cmake" -DCMAKE_C_COMPILER="$cc" \
	    -DCMAKE_PREFIX_PATH="$prefix" -DCMAKE_FIND_USE_PACKAGE_REGISTRY=OFF \
	    -DCMAKE_FIND_USE_SYSTEM_PACKAGE_REGISTRY=OFF \
	    -DCMAKE_EXPORT_COMPILE_COMMANDS=ON >"$tmp/cmake.log" ||
		{ cat "$tmp/cmake.log"; return 1; }
	dir=$(sed -n 's/^vpmu_DIR:PATH=//p' "$tmp/cmake/CMakeCache.txt")
	echo "vpmu_DIR: $dir"
	case $dir in
	"$prefix"/*) ;;
	*) fail "find_package(vpmu) found $dir, not the package in $prefix"; return 1 ;;
	esac
	run "$cmake" --build "$tmp/cmake" || return 1
	# vpmu::vpmu's include path is the prefix's alone: libcpuid's and
	# Zydis' are the library's own business.
	inc=$(grep -o -- '-I[^ "]*\|-isystem [^ "]*' "$tmp/cmake/compile_commands.json" |
	    grep -v -- "$prefix/" || true)
	[ -z "$inc" ] || { fail "vpmu::vpmu gives include paths outside $prefix: $inc"; return 1; }
	run "$tmp/cmake/app" || return 1
	check_loads_prefix "$tmp/cmake/app" || return 1
	# The guest of vpmu_add_guest(), from the package alone.
	[ -f "$tmp/cmake/consumer_guest.elf" ] ||
		{ fail "vpmu_add_guest() built no consumer_guest.elf"; return 1; }
	out=$(VPMU_SKIP_NO_KVM=1 "$prefix/bin/vpmu-run" --quiet --source synthetic \
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
	# Only the prefix's .pc files: no libcpuid.pc, whether or not
	# libcpuid-dev is installed here.
	cflags=$(PKG_CONFIG_LIBDIR="$pcdir" PKG_CONFIG_PATH= "$pkgconfig" --cflags vpmu) ||
		{ fail "pkg-config --cflags vpmu fails with only $pcdir visible"; return 1; }
	echo "pkg-config --cflags vpmu (PKG_CONFIG_LIBDIR=$pcdir): $cflags"
	for f in $cflags; do
		case $f in
		-I"$prefix"/*) ;;
		*) fail "pkg-config --cflags vpmu gives $f: only the prefix's include directory"
		   return 1 ;;
		esac
	done
	flags=$(PKG_CONFIG_LIBDIR="$pcdir" PKG_CONFIG_PATH= "$pkgconfig" --cflags --libs vpmu) ||
		return 1
	echo "pkg-config --cflags --libs vpmu: $flags"
	check_flags_in_prefix "$flags" || return 1
	# $flags is a word list by design.
	# shellcheck disable=SC2086
	run "$cc" -Wall -Wextra -Werror -o "$tmp/app-pc" "$app/main.c" $flags || return 1
	run env LD_LIBRARY_PATH="$libdir" "$tmp/app-pc" || return 1
	LD_LIBRARY_PATH="$libdir" check_loads_prefix "$tmp/app-pc"
}

check_static() {
	say "3. static: cc main.c libvpmu.a \$(pkg-config --static --libs vpmu)"
	flags=$(PKG_CONFIG_LIBDIR="$pcdir" PKG_CONFIG_PATH= "$pkgconfig" --static --cflags --libs vpmu) ||
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

check_cmake_static() {
	say "5. CMake: find_package(vpmu COMPONENTS static), vpmu::vpmu_static"
	run "$cmake" -S "$app" -B "$tmp/cmake-static" -DCMAKE_C_COMPILER="$cc" \
	    -DCMAKE_PREFIX_PATH="$prefix" -DCMAKE_FIND_USE_PACKAGE_REGISTRY=OFF \
	    -DCMAKE_FIND_USE_SYSTEM_PACKAGE_REGISTRY=OFF -DVPMU_CONSUMER_STATIC=ON \
	    >"$tmp/cmake-static.log" || { cat "$tmp/cmake-static.log"; return 1; }
	run "$cmake" --build "$tmp/cmake-static" --target app || return 1
	run "$tmp/cmake-static/app" || return 1
	if ldd "$tmp/cmake-static/app" | grep -q libvpmu; then
		fail "the vpmu::vpmu_static program loads libvpmu.so"; return 1
	fi
	echo "$tmp/cmake-static/app: libvpmu linked statically"
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
	out=$(VPMU_SKIP_NO_KVM=1 "$prefix/bin/vpmu-run" --quiet --source synthetic \
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
check_tools || failed="$failed tools"
check_guest "$build" "$2" || failed="$failed guest"
check_cmake || failed="$failed cmake"
check_pkgconfig || failed="$failed pkg-config"
check_static || failed="$failed static"
check_cmake_static || failed="$failed cmake-static"

if [ -n "$failed" ]; then
	printf '\nconsumer_package: FAILED:%s\n' "$failed"
	exit 1
fi
printf '\nconsumer_package: the installed tools run the installed libvpmu.so; the package works with CMake, pkg-config (no libcpuid.pc needed) and static linking (pkg-config and CMake), and for a guest\n'
