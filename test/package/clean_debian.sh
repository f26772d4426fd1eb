#!/bin/sh
# clean_debian.sh BUILD_DIR SOURCE_DIR VERSION CACHE_DIR -- the .deb on a
# clean Debian 12 (package_deb_clean_debian, label long).
#
# Makes BUILD_DIR's .deb with CPack, then, in a private mount namespace:
#   1. a clean Debian 12: `debootstrap --variant=minbase bookworm` from the
#      mirror apt uses here (VPMU_DEBIAN_MIRROR overrides), kept in CACHE_DIR
#      as a tarball and unpacked afresh into a temporary root each run;
#   2. `apt-get install ./libvpmu_*.deb` in a chroot of it: apt resolves the
#      package's Depends from Debian (downloads are kept in CACHE_DIR/apt);
#   3. the tools run there from /usr/bin on /usr/lib/.../libvpmu.so (ldd),
#      with --version;
#   4. gcc, pkg-config and cmake installed there, but not libcpuid-dev nor
#      libzydis-dev: test/consumer/app builds with
#      `pkg-config --cflags --libs vpmu` and with find_package(vpmu), and runs;
#   5. with /dev/kvm (bound into the root): the demo guest runs under the
#      root's vpmu-run and checks its counts, and the consumer's guest built
#      there by vpmu_add_guest() runs; without it that part is skipped with
#      the reason.
# Status 77 (skip, with the reason) when not root, without debootstrap or
# unshare, or when the mirror cannot be reached.
# Environment: CPACK names cpack (default: from PATH).
set -eu

if [ $# -ne 4 ]; then
	echo "usage: $0 BUILD_DIR SOURCE_DIR VERSION CACHE_DIR" >&2
	exit 2
fi
build=$1 src=$2 version=$3 cache=$4
. "$src/test/package/lib.sh"

skip() { echo "package_deb_clean_debian: skipped: $*"; exit 77; }

[ "$(id -u)" = 0 ] || skip "not root: debootstrap, chroot and mount need root"
why=$(debian_skip_reason)
[ -z "$why" ] || skip "$why"
for t in debootstrap unshare chroot mountpoint; do
	command -v "$t" >/dev/null 2>&1 ||
		skip "no $t here (Debian: debootstrap, util-linux, coreutils; cmake/deps.sh installs them)"
done

# The mirror apt uses here, for the suite bookworm (deb822 or one-line form).
mirror=${VPMU_DEBIAN_MIRROR:-}
if [ -z "$mirror" ]; then
	for f in /etc/apt/sources.list.d/*.sources; do
		[ -f "$f" ] || continue
		mirror=$(awk '
			/^URIs:/ { uri = $2 }
			/^Suites:/ { for (i = 2; i <= NF; i++) if ($i == "bookworm") found = 1 }
			/^$/ { if (found && uri != "") { print uri; exit } uri = ""; found = 0 }
			END { if (found && uri != "") print uri }' "$f" | head -n 1)
		[ -z "$mirror" ] || break
	done
fi
if [ -z "$mirror" ] && [ -f /etc/apt/sources.list ]; then
	mirror=$(awk '$1 == "deb" && $3 == "bookworm" { print $2; exit }' /etc/apt/sources.list)
fi
mirror=${mirror:-http://deb.debian.org/debian}
security=${VPMU_DEBIAN_SECURITY:-$(echo "$mirror" | sed 's|/debian/*$|/debian-security|')}
echo "mirror: $mirror; security: $security"

tmp=$(mktemp -d "${TMPDIR:-/tmp}/vpmu-clean-debian.XXXXXX")
# The mounts live in the namespace of the inner script and end with it;
# --one-file-system all the same, so that rm never follows a mount.
trap 'rm -rf --one-file-system "$tmp"' EXIT INT TERM
unset DESTDIR LD_LIBRARY_PATH

say "the .deb: cpack"
build_deb "$build" "$tmp/deb" || exit 1
mkdir -p "$cache/apt"

# 1. The clean Debian 12, made once.
tarball=$cache/bookworm-minbase.tar.gz
if [ ! -s "$tarball" ]; then
	say "1. debootstrap --variant=minbase bookworm (once; kept in $tarball)"
	st=0
	unshare --mount --propagation private \
	    debootstrap --variant=minbase bookworm "$tmp/boot" "$mirror" \
	    >"$tmp/debootstrap.log" 2>&1 || st=$?
	if [ $st -ne 0 ]; then
		tail -n 20 "$tmp/debootstrap.log"
		if grep -q -E 'Failed getting release file|Failure trying to run|Could not resolve|Connection refused|Temporary failure|unable to fetch|Couldn.t download|Network is unreachable' \
		    "$tmp/debootstrap.log"; then
			skip "debootstrap could not fetch Debian 12 from $mirror (no network?)"
		fi
		echo "FAIL: debootstrap exited $st"
		exit 1
	fi
	tar -C "$tmp/boot" --numeric-owner -czf "$tarball.part" . && mv "$tarball.part" "$tarball"
	rm -rf --one-file-system "$tmp/boot"
else
	say "1. the clean Debian 12 from $tarball ($(date -r "$tarball" +%F))"
fi
root=$tmp/root
mkdir -p "$root"
tar -C "$root" --numeric-owner -xzf "$tarball"
cat /etc/resolv.conf >"$root/etc/resolv.conf" 2>/dev/null || true
printf 'deb %s bookworm main\ndeb %s bookworm-updates main\ndeb %s bookworm-security main\n' \
    "$mirror" "$mirror" "$security" >"$root/etc/apt/sources.list"
cp "$tmp/deb/${deb##*/}" "$root/tmp/"
cp "$src/test/consumer/app/main.c" "$src/test/consumer/app/guest.c" \
    "$src/test/consumer/app/CMakeLists.txt" "$root/tmp/"
mkdir -p "$root/tmp/app"
mv "$root/tmp/main.c" "$root/tmp/guest.c" "$root/tmp/CMakeLists.txt" "$root/tmp/app/"
cp "$build/examples/guests/demo.elf" "$root/tmp/"
kvm=no
if [ -c /dev/kvm ] && [ -r /dev/kvm ] && [ -w /dev/kvm ]; then
	kvm=yes
fi

# 2-5 in a mount namespace of their own: /proc, the apt cache and /dev/kvm
# are mounted into the root there, and unmounted when it ends.
# shellcheck disable=SC2016
unshare --mount --propagation private sh -u -c '
root=$1 cache=$2 deb=$3 version=$4 kvm=$5 libsh=$6
. "$libsh"
in_root() { chroot "$root" /usr/bin/env -i PATH=/usr/sbin:/usr/bin:/sbin:/bin \
    HOME=/root LANG=C.UTF-8 DEBIAN_FRONTEND=noninteractive "$@"; }
mount -t proc proc "$root/proc" || exit 1
mount --bind "$cache/apt" "$root/var/cache/apt/archives" || exit 1
# A pty for dpkg'"'"'s log (where a private devpts can be had).
mkdir -p "$root/dev/pts"
mount -t devpts -o newinstance,ptmxmode=0666 devpts "$root/dev/pts" 2>/dev/null || true
if [ "$kvm" = yes ]; then
	: >"$root/dev/kvm"
	mount --bind /dev/kvm "$root/dev/kvm" || exit 1
fi
failed=
apt="apt-get -q -y -o Acquire::Check-Valid-Until=false -o APT::Keep-Downloaded-Packages=true"

say "2. apt-get install ./$deb on the clean Debian 12"
if ! run in_root $apt update >"$root/../update.log" 2>&1; then
	tail -n 5 "$root/../update.log"
	echo "package_deb_clean_debian: skipped: apt-get update in the root could not fetch Debian'"'"'s indexes (no network?)"
	exit 77
fi
in_root dpkg-query -W -f "\${Package}\n" | sort >"$root/../before"
run in_root $apt install --no-install-recommends "/tmp/$deb" || {
	echo "package_deb_clean_debian: FAILED: apt-get install"; exit 1; }
in_root dpkg-query -W -f "\${Package}\n" | sort >"$root/../after"
echo "installed: $(comm -13 "$root/../before" "$root/../after" | tr "\n" " ")"
in_root dpkg -s libvpmu | grep -E "^(Status|Version|Depends):"

say "3. the tools, from /usr/bin"
# tool_runs runs the file it is given: here a script that runs the tool
# in the root.
in_root_tool() {
	printf "#!/bin/sh\nexec chroot %s /usr/bin/env -i PATH=/usr/bin:/bin /usr/bin/%s \"\$@\"\n" \
	    "$root" "$1" >"$root/../$1"
	chmod +x "$root/../$1"
	tool_runs "$root/../$1" "$version"
}
for t in $VPMU_TOOLS; do
	lib=$(in_root ldd "/usr/bin/$t" | awk "\$1 ~ /^libvpmu\\.so/ { print \$3 }")
	[ -z "$lib" ] || lib=$(in_root readlink -f "$lib")
	case $lib in
	/usr/lib/*/libvpmu.so.*|/usr/lib/libvpmu.so.*) echo "$t: libvpmu from $lib" ;;
	*) fail "$t loads libvpmu from \"$lib\""; failed="$failed ldd" ;;
	esac
	missing=$(in_root ldd "/usr/bin/$t" | grep "not found" || true)
	[ -z "$missing" ] || { fail "$t: $missing"; failed="$failed ldd"; }
	in_root_tool "$t" || failed="$failed $t"
done
in_root_tool vpmu-qemu || failed="$failed vpmu-qemu"

say "4. consumers there, with gcc, pkg-config and cmake but no libcpuid-dev"
run in_root $apt install --no-install-recommends gcc libc6-dev pkg-config cmake make >/dev/null ||
	{ echo "package_deb_clean_debian: FAILED: apt-get install gcc pkg-config cmake"; exit 1; }
for p in libcpuid-dev libzydis-dev; do
	if in_root dpkg -s "$p" >/dev/null 2>&1; then
		fail "$p is installed in the root: the check means nothing"; failed="$failed $p"
	fi
done
flags=$(in_root pkg-config --cflags --libs vpmu) || { fail "pkg-config --cflags --libs vpmu"; flags=; }
echo "pkg-config --cflags --libs vpmu: $flags"
if run in_root sh -c "cc -Wall -Wextra -Werror -o /tmp/app-pc /tmp/app/main.c \$(pkg-config --cflags --libs vpmu)" &&
    run in_root /tmp/app-pc; then :; else
	fail "the pkg-config consumer"; failed="$failed pkg-config"
fi
if run in_root cmake -S /tmp/app -B /tmp/app-cmake >/dev/null &&
    run in_root cmake --build /tmp/app-cmake >/dev/null && run in_root /tmp/app-cmake/app; then :; else
	fail "the find_package(vpmu) consumer"; failed="$failed cmake"
fi

say "5. guests under the root'"'"'s vpmu-run"
if [ "$kvm" = yes ]; then
	out=$(in_root vpmu-run --source exact /tmp/demo.elf 2>&1) || { echo "$out"; out=; }
	case $out in
	*"demo: counts match"*) echo "vpmu-run --source exact /tmp/demo.elf: demo: counts match" ;;
	*) fail "demo.elf under the root'"'"'s vpmu-run"; failed="$failed demo" ;;
	esac
	out=$(in_root vpmu-run --quiet --source synthetic /tmp/app-cmake/consumer_guest.elf 2>&1) ||
		{ echo "$out"; out=; }
	case $out in
	*"consumer guest: CFLAGS 42, channel yes"*) echo "the consumer'"'"'s guest: $out" ;;
	*) fail "the consumer'"'"'s guest (vpmu_add_guest() there)"; failed="$failed guest" ;;
	esac
else
	echo "no usable /dev/kvm here: no guest is run (the tools and consumers are checked)"
fi

if [ -n "$failed" ]; then
	printf "\npackage_deb_clean_debian: FAILED:%s\n" "$failed"
	exit 1
fi
' clean_debian "$root" "$cache" "${deb##*/}" "$version" "$kvm" "$src/test/package/lib.sh"
printf '\npackage_deb_clean_debian: %s installs on a clean Debian 12 with its dependencies from Debian; its tools run and consumers build there\n' "${deb##*/}"
