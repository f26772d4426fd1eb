#!/bin/sh
# deb.sh BUILD_DIR SOURCE_DIR CC VERSION DESCRIPTION OUT_DIR -- the .deb
# (package_deb).
#
# Makes BUILD_DIR's .deb with CPack into OUT_DIR (`make package` makes the
# same one in BUILD_DIR), then checks:
#   1. its control fields: Package, Version, Architecture, Maintainer,
#      Section, Priority, Description, and a Depends computed by
#      dpkg-shlibdeps that names the package of every library the packaged
#      binaries need (looked up here with dpkg -S), and its shlibs file;
#   2. its contents: everything under /usr and owned by root; libvpmu.so.N
#      and its links, libvpmu.a, libvpmu-guest.a, every header of the
#      source tree (host and guest), vpmu.pc, the CMake package, every
#      manual page of docs/, the tools, the guest runtime, the copyright;
#   3. extracted with dpkg -x into a temporary root: each tool's RUNPATH
#      finds the root's libvpmu.so (ldd, readelf), and each says the
#      root's library's version (--version; vpmu-qemu through the root's
#      vpmu-run); the root's vpmu-run runs the demo guest (under KVM;
#      where there is none that part is skipped, with the reason);
#   4. a tiny consumer built with `pkg-config --cflags --libs vpmu` from the
#      root's vpmu.pc alone (no other .pc visible: no libcpuid.pc) and one
#      with find_package(vpmu) from the root, each run.
# Status 77 (skip) where dpkg's tools are missing.
# Environment: CMAKE, CPACK, PKG_CONFIG name the tools (default: from PATH).
set -eu

if [ $# -ne 6 ]; then
	echo "usage: $0 BUILD_DIR SOURCE_DIR CC VERSION DESCRIPTION OUT_DIR" >&2
	exit 2
fi
build=$1 src=$2 cc=$3 version=$4 description=$5 out=$6
cmake=${CMAKE:-cmake}
pkgconfig=${PKG_CONFIG:-pkg-config}
. "$src/test/package/lib.sh"

why=$(debian_skip_reason)
if [ -n "$why" ]; then
	echo "package_deb: skipped: $why"
	exit 77
fi

tmp=$(mktemp -d "${TMPDIR:-/tmp}/vpmu-deb.XXXXXX")
trap 'rm -rf "$tmp"' EXIT INT TERM
unset DESTDIR LD_LIBRARY_PATH

say "1. make the .deb: cpack in $out"
build_deb "$build" "$out" || exit 1
failed=

# --- 1. control fields ------------------------------------------------------
check_control() {
	say "1. control fields"
	dpkg-deb -f "$deb" | sed 's/^/  /'
	field() { dpkg-deb -f "$deb" "$1"; }
	st=0
	[ "$(field Package)" = libvpmu ] || { fail "Package: $(field Package)"; st=1; }
	[ "$(field Version)" = "$version" ] ||
		{ fail "Version: $(field Version), the project's is $version"; st=1; }
	arch=$(dpkg --print-architecture)
	[ "$(field Architecture)" = "$arch" ] || { fail "Architecture: $(field Architecture)"; st=1; }
	case $(field Maintainer) in
	?*" <"*@*">") ;;
	*) fail "Maintainer: '$(field Maintainer)' is no 'Name <address>'"; st=1 ;;
	esac
	[ "$(field Section)" = devel ] || { fail "Section: $(field Section)"; st=1; }
	[ "$(field Priority)" = optional ] || { fail "Priority: $(field Priority)"; st=1; }
	[ "$(field Description | head -n 1)" = "$description" ] ||
		{ fail "Description's first line: $(field Description | head -n 1)"; st=1; }
	[ "$(field Description | wc -l)" -gt 3 ] || { fail "no long description"; st=1; }
	# Every library a packaged binary needs (but libvpmu, which it holds)
	# comes from a package that Depends names: what dpkg-shlibdeps is for.
	depends=$(field Depends)
	[ -n "$depends" ] || { fail "no Depends"; return 1; }
	mkdir -p "$tmp/x"
	dpkg-deb -x "$deb" "$tmp/x"
	needed=$(find "$tmp/x" -type f -exec sh -c \
	    'readelf -d "$1" 2>/dev/null | sed -n "s/.*(NEEDED).*\[\(.*\)\]/\1/p"' sh {} \; |
	    grep -v '^libvpmu\.so' | sort -u)
	for so in $needed; do
		path=$(ldconfig -p | awk -v so="$so" '$1 == so { print $NF; exit }')
		[ -n "$path" ] || { fail "$so (NEEDED) is not installed here"; st=1; continue; }
		pkg=$(dpkg -S "$path" 2>/dev/null || dpkg -S "$(readlink -f "$path")" 2>/dev/null ||
		    dpkg -S "/usr$path" 2>/dev/null || true)
		pkg=$(echo "$pkg" | head -n 1 | sed 's/[:,].*//')
		[ -n "$pkg" ] || { fail "no package here holds $path ($so)"; st=1; continue; }
		case ", $depends," in
		*", $pkg "*|*", $pkg,"*) echo "  $so: $pkg, in Depends" ;;
		*) fail "$so comes from $pkg, which Depends does not name"; st=1 ;;
		esac
	done
	# The shlibs file: packages built against libvpmu.so.N depend on this one.
	dpkg-deb --ctrl-tarfile "$deb" | tar -xO ./shlibs >"$tmp/shlibs" 2>/dev/null || true
	soname=$(readelf -d "$tmp/x"/usr/lib/*/libvpmu.so.*.*.* "$tmp/x"/usr/lib/libvpmu.so.*.*.* \
	    2>/dev/null | sed -n 's/.*(SONAME).*\[libvpmu\.so\.\(.*\)\]/\1/p' | head -n 1)
	grep -q "^libvpmu $soname libvpmu (>= $version)\$" "$tmp/shlibs" ||
		{ fail "shlibs: '$(cat "$tmp/shlibs")', not 'libvpmu $soname libvpmu (>= $version)'"; st=1; }
	return $st
}

# --- 2. contents --------------------------------------------------------------
check_contents() {
	say "2. contents"
	dpkg-deb -c "$deb" >"$tmp/contents"
	awk '{ print $6 }' "$tmp/contents" | sed 's|^\./|/|; s|/$||' | grep -v '^$' >"$tmp/paths"
	wc -l <"$tmp/paths" | sed 's/^/  files and directories: /'
	st=0
	outside=$(grep -v '^/usr\(/\|$\)' "$tmp/paths" | grep -v '^/$' || true)
	[ -z "$outside" ] || { fail "paths outside /usr: $outside"; st=1; }
	owners=$(awk '{ print $2 }' "$tmp/contents" | sort -u)
	[ "$owners" = root/root ] || { fail "owners: $owners"; st=1; }
	libdir=$(sed -n 's|^\(/usr/lib[^ ]*\)/libvpmu\.so$|\1|p' "$tmp/paths")
	[ -n "$libdir" ] || { fail "no libvpmu.so"; return 1; }
	echo "  libdir: $libdir"
	want="$libdir/libvpmu.so $libdir/libvpmu.a $libdir/libvpmu-guest.a
	    $libdir/pkgconfig/vpmu.pc /usr/share/doc/libvpmu/copyright"
	for f in vpmuConfig vpmuConfigVersion vpmuTargets vpmuStaticTargets VpmuGuest; do
		want="$want $libdir/cmake/vpmu/$f.cmake"
	done
	for t in $VPMU_TOOLS vpmu-qemu; do want="$want /usr/bin/$t"; done
	for h in "$src"/libvpmu/include/vpmu/*.h; do want="$want /usr/include/vpmu/${h##*/}"; done
	for h in "$src"/guest-api/guest/include/vpmu-guest/*.h; do
		want="$want /usr/include/vpmu-guest/${h##*/}"
	done
	for m in "$src"/docs/*.[1-9]; do
		n=${m##*/}
		want="$want /usr/share/man/man${n##*.}/$n"
	done
	for g in crt0.S runtime.c link.ld pv.c pmc.c dev.c fastpage.c; do
		want="$want /usr/share/vpmu/guest/$g"
	done
	n=0
	for f in $want; do
		if grep -qx "$f" "$tmp/paths" || grep -qx "$f.gz" "$tmp/paths"; then
			n=$((n + 1))
		else
			fail "the package has no $f"; st=1
		fi
	done
	echo "  $n expected files present"
	# libvpmu.so.N.M.P and the links to it.
	sed 's| \./| /|' "$tmp/contents" >"$tmp/c2"
	grep -q " $libdir/libvpmu\.so\.[0-9]*\.[0-9]*\.[0-9]*\$" "$tmp/c2" ||
		{ fail "no $libdir/libvpmu.so.N.M.P"; st=1; }
	for l in libvpmu.so libvpmu.so.0; do
		grep -q " $libdir/$l -> libvpmu\.so\." "$tmp/c2" ||
			{ fail "$libdir/$l is not a link to libvpmu.so.*"; st=1; }
	done
	return $st
}

# --- 3. extracted: the tools run on the root's libvpmu.so -----------------------
check_extracted() {
	say "3. dpkg -x into $tmp/root: the tools"
	run dpkg -x "$deb" "$tmp/root" || return 1
	st=0
	for t in $VPMU_TOOLS; do
		loads_libvpmu_from "$tmp/root/usr/bin/$t" "$tmp/root" || { st=1; continue; }
		tool_runs "$tmp/root/usr/bin/$t" "$version" || st=1
	done
	# vpmu-qemu runs the vpmu-run beside it: the root's.
	tool_runs "$tmp/root/usr/bin/vpmu-qemu" "$version" || st=1
	# A guest under the root's vpmu-run (examples/guests/demo.c checks its counts).
	guest=$build/examples/guests/demo.elf
	out=$(VPMU_SKIP_NO_KVM=1 "$tmp/root/usr/bin/vpmu-run" --source exact "$guest" 2>&1) &&
		r=0 || r=$?
	if [ $r -eq 77 ]; then
		echo "no usable /dev/kvm: the root's vpmu-run runs no guest here: $out"
	elif [ $r -ne 0 ]; then
		echo "$out"; fail "the root's vpmu-run exited $r on demo.elf"; st=1
	else
		case $out in
		*"demo: counts match"*) echo "the root's vpmu-run ran demo.elf: demo: counts match" ;;
		*) echo "$out"; fail "demo.elf's counts under the root's vpmu-run"; st=1 ;;
		esac
	fi
	return $st
}

# --- 4. consumers of the extracted root -----------------------------------------
check_consumers() {
	say "4. consumers of the root: pkg-config (the root's .pc alone), find_package(vpmu)"
	pcdir=$(dirname "$(find "$tmp/root" -path '*/pkgconfig/vpmu.pc' | head -n 1)")
	libdir=$(dirname "$pcdir")
	st=0
	if cflags=$(PKG_CONFIG_LIBDIR="$pcdir" PKG_CONFIG_PATH= "$pkgconfig" --cflags vpmu); then
		echo "pkg-config --cflags vpmu: $cflags"
		# One -I, the root's include directory (the .pc names its prefix
		# relative to itself: normalize).
		set -- $cflags
		inc=${1#-I}
		if [ $# -ne 1 ] || [ "$inc" = "$1" ] ||
		    [ "$(readlink -f "$inc")" != "$(readlink -f "$tmp/root/usr/include")" ]; then
			fail "--cflags is not -I$tmp/root/usr/include alone"; st=1
		fi
	else
		fail "pkg-config --cflags vpmu with the root's vpmu.pc alone"; st=1
	fi
	flags=$(PKG_CONFIG_LIBDIR="$pcdir" PKG_CONFIG_PATH= "$pkgconfig" --cflags --libs vpmu) ||
		{ fail "pkg-config --cflags --libs vpmu"; return 1; }
	# shellcheck disable=SC2086
	if run "$cc" -Wall -Wextra -Werror -o "$tmp/app" "$src/test/consumer/app/main.c" $flags &&
	    run env LD_LIBRARY_PATH="$libdir" "$tmp/app"; then
		lib=$(LD_LIBRARY_PATH="$libdir" ldd "$tmp/app" | awk '$1 ~ /^libvpmu/ { print $3 }')
		case $lib in
		"$tmp/root/"*) echo "the pkg-config program loads $lib" ;;
		*) fail "the pkg-config program loads libvpmu from '$lib'"; st=1 ;;
		esac
	else
		fail "the pkg-config program"; st=1
	fi
	if run "$cmake" -S "$src/test/consumer/app" -B "$tmp/cmake" -DCMAKE_C_COMPILER="$cc" \
	        -DCMAKE_PREFIX_PATH="$tmp/root/usr" -DCMAKE_FIND_USE_PACKAGE_REGISTRY=OFF \
	        -DCMAKE_FIND_USE_SYSTEM_PACKAGE_REGISTRY=OFF >"$tmp/cmake.log" 2>&1 &&
	    run "$cmake" --build "$tmp/cmake" --target app >"$tmp/cmake-build.log" 2>&1 &&
	    run "$tmp/cmake/app"; then
		dir=$(sed -n 's/^vpmu_DIR:PATH=//p' "$tmp/cmake/CMakeCache.txt")
		case $dir in
		"$tmp/root/"*) echo "find_package(vpmu) found $dir" ;;
		*) fail "find_package(vpmu) found $dir, not the root's"; st=1 ;;
		esac
	else
		cat "$tmp/cmake.log" "$tmp/cmake-build.log" 2>/dev/null | tail -n 30
		fail "the find_package(vpmu) program"; st=1
	fi
	return $st
}

check_control || failed="$failed control"
check_contents || failed="$failed contents"
check_extracted || failed="$failed extracted"
check_consumers || failed="$failed consumers"

if [ -n "$failed" ]; then
	printf '\npackage_deb: FAILED:%s\n' "$failed"
	exit 1
fi
printf '\npackage_deb: %s: control fields, Depends from dpkg-shlibdeps, contents; extracted, its tools run on its libvpmu.so and consumers build against it\n' "${deb##*/}"
