# lib.sh -- shell functions for the tests of an installed libvpmu, sourced
# by test/consumer/run.sh, test/package/deb.sh and clean-debian.sh.  Each
# returns non-zero after printing "FAIL: ...".

say()  { printf '\n== %s\n' "$*"; }
run()  { printf '+ %s\n' "$*"; "$@"; }
fail() { printf 'FAIL: %s\n' "$*"; return 1; }

# The installed tools (examples/CMakeLists.txt: vpmu_tool()).
VPMU_TOOLS="vpmu-run vpmustat vpmu-info vpmu-demo"

# loads_libvpmu_from BIN ROOT: BIN, run as it is (no LD_LIBRARY_PATH), loads
# libvpmu.so from under ROOT, found through its RUNPATH ($ORIGIN/...).
loads_libvpmu_from() {
	rp=$(readelf -d "$1" | sed -n 's/.*(RUNPATH).*\[\(.*\)\]$/\1/p')
	case $rp in
	'$ORIGIN/'*) ;;
	*) fail "$1: RUNPATH '$rp', not \$ORIGIN/..."; return 1 ;;
	esac
	lib=$(env -u LD_LIBRARY_PATH ldd "$1" | awk '$1 ~ /^libvpmu\.so/ { print $3 }')
	case $lib in
	"") fail "$1 does not load libvpmu.so ($(env -u LD_LIBRARY_PATH ldd "$1" |
	        grep libvpmu || echo 'not NEEDED'))"; return 1 ;;
	"$2"/*) echo "$1: RUNPATH $rp: libvpmu from $lib" ;;
	*) fail "$1 loads libvpmu from $lib, not from under $2"; return 1 ;;
	esac
}

# tool_runs BIN VERSION: the installed tool runs with no LD_LIBRARY_PATH
# and its --version names VERSION, the library's (each tool prints
# "NAME (libvpmu VERSION)" from the libvpmu it loaded).
tool_runs() {
	name=${1##*/}
	out=$(env -u LD_LIBRARY_PATH "$1" --version 2>&1) && st=0 || st=$?
	[ $st -eq 0 ] || { fail "$name --version exited $st: $out"; return 1; }
	case $out in
	*"$name (libvpmu $2)"*) echo "$name --version: $(echo "$out" | tail -n 1)" ;;
	*) fail "$name --version does not say '$name (libvpmu $2)': $out"; return 1 ;;
	esac
}

# build_deb BUILD_DIR OUT_DIR: the .deb of BUILD_DIR made by CPack
# (cmake/VpmuPackage.cmake) in OUT_DIR, its path in $deb.  CPack stages
# the install under OUT_DIR, not in the build tree.  CPACK names cpack.
build_deb() {
	rm -rf "$2"
	mkdir -p "$2"
	run "${CPACK:-cpack}" --config "$1/CPackConfig.cmake" -B "$2" >"$2/cpack.log" 2>&1 ||
		{ cat "$2/cpack.log"; fail "cpack failed"; return 1; }
	deb=$(find "$2" -maxdepth 1 -name '*.deb' | head -n 1)
	[ -n "$deb" ] || { cat "$2/cpack.log"; fail "cpack made no .deb"; return 1; }
	echo "built $deb ($(wc -c <"$deb") bytes)"
}

# debian_skip_reason: why a .deb cannot be made or checked here (empty: it can).
debian_skip_reason() {
	for t in dpkg dpkg-deb dpkg-shlibdeps readelf ldd; do
		command -v "$t" >/dev/null 2>&1 ||
			{ echo "no $t here (Debian's dpkg, dpkg-dev, binutils, libc-bin: cmake/deps.sh)"; return; }
	done
}
