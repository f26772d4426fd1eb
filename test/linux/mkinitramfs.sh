#!/bin/sh
# mkinitramfs.sh OUTDIR: the Debian kernel and the initramfs of the linux
# demo (test/linux/README.md).
#
# Gets Debian's current stock kernel (the package linux-image-amd64 depends
# on), busybox-static and linux-perf; builds test/linux's three static
# programs; writes
#   OUTDIR/vmlinuz          the kernel's bzImage (a copy)
#   OUTDIR/initramfs.cpio   an uncompressed newc cpio: busybox and its applet
#                           links, the perf binary and every shared library it
#                           loads, /init (test/linux/init), /bin/loop,
#                           /bin/hot and /bin/vpmu-exit
# and checks the image by running its programs natively in a chroot.
#
# The kernel and busybox-static are fetched with apt-get download into
# OUTDIR/linux-cache and the one file needed of each is unpacked there from
# dpkg-deb --fsys-tarfile (the kernel's modules are not needed), never
# installed: the
# kernel's maintainer scripts would touch /boot and the host's initramfs,
# and busybox-static is one static binary that needs nothing of the host
# (and would replace a host's busybox package).  linux-perf is installed
# (apt-get install --no-install-recommends) if it is not there: perf loads
# about 25 shared libraries from a dozen packages, which apt then resolves
# and ldd finds on the host.
#
# Exit status: 0 done; 77 a package cannot be fetched or installed (the
# reason is printed); 1 anything else went wrong.
set -u

die() { echo "mkinitramfs: $*" >&2; exit 1; }
skip() { echo "mkinitramfs: $*" >&2; exit 77; }

[ $# -eq 1 ] || { echo "usage: mkinitramfs.sh OUTDIR" >&2; exit 2; }
SRC=$(cd "$(dirname "$0")" && pwd) || exit 1
mkdir -p "$1" || die "cannot create $1"
OUT=$(cd "$1" && pwd) || exit 1
CACHE=$OUT/linux-cache
ROOT=$OUT/initramfs-root
mkdir -p "$CACHE" || die "cannot create $CACHE"

command -v apt-get >/dev/null 2>&1 && command -v dpkg-deb >/dev/null 2>&1 ||
	skip "apt-get and dpkg-deb are needed (a Debian host)"

updated=0
# apt_retry CMD...: run an apt command; on failure run apt-get update once
# and try again.
apt_retry() {
	"$@" && return 0
	[ $updated -eq 0 ] || return 1
	updated=1
	echo "mkinitramfs: '$*' failed: apt-get update and again" >&2
	apt-get update -qq >&2 || return 1
	"$@"
}

# fetch PKG DIR MEMBER: download PKG's .deb into the cache (once) and unpack
# its MEMBER (a tar pattern: ./bin/busybox) in DIR.
fetch() {
	if [ ! -f "$CACHE/$1.stamp" ]; then
		(cd "$CACHE" && rm -f "$1"_*.deb && apt_retry apt-get download -q "$1" >&2) ||
			skip "cannot download the package $1"
		rm -rf "$2" && mkdir -p "$2" || die "cannot create $2"
		dpkg-deb --fsys-tarfile "$CACHE/$1"_*.deb |
			tar -x -C "$2" --wildcards "$3" || die "cannot unpack $3 of $1"
		touch "$CACHE/$1.stamp"
	fi
}

t0=$(date +%s)
kpkg=$(apt-cache depends linux-image-amd64 2>/dev/null |
	awk '$1 == "Depends:" && $2 ~ /^linux-image-/ { print $2; exit }')
if [ -z "$kpkg" ]; then
	apt_retry sh -c 'apt-cache show linux-image-amd64 >/dev/null 2>&1' ||
		skip "apt knows no linux-image-amd64"
	kpkg=$(apt-cache depends linux-image-amd64 |
		awk '$1 == "Depends:" && $2 ~ /^linux-image-/ { print $2; exit }')
	[ -n "$kpkg" ] || skip "linux-image-amd64 depends on no linux-image package"
fi
fetch "$kpkg" "$CACHE/kernel" "./boot/vmlinuz-*"
fetch busybox-static "$CACHE/busybox" ./bin/busybox
if ! dpkg-query -W -f='${Status}' linux-perf 2>/dev/null | grep -q 'ok installed'; then
	apt_retry apt-get install -y -q --no-install-recommends linux-perf >&2 ||
		skip "cannot install linux-perf"
fi
command -v cpio >/dev/null 2>&1 ||
	apt_retry apt-get install -y -q --no-install-recommends cpio >&2 ||
	skip "cannot install cpio"
t1=$(date +%s)

kernel=$(ls "$CACHE"/kernel/boot/vmlinuz-* 2>/dev/null | head -n 1)
[ -n "$kernel" ] || die "no boot/vmlinuz-* in $kpkg"
cp "$kernel" "$OUT/vmlinuz" || die "cannot copy $kernel"

# The real perf binary: Debian's /usr/bin/perf is either perf itself or a
# wrapper script that runs /usr/bin/perf_VERSION.
perf=/usr/bin/perf
if [ "$(head -c 4 "$perf" | tr -d '\177')" != ELF ]; then
	perf=$(ls /usr/bin/perf_[0-9]* 2>/dev/null | sort -V | tail -n 1)
	[ -n "$perf" ] || die "/usr/bin/perf is a wrapper and there is no /usr/bin/perf_*"
fi

rm -rf "$ROOT" || die "cannot remove $ROOT"
mkdir -p "$ROOT"/bin "$ROOT"/sbin "$ROOT"/usr/bin "$ROOT"/usr/sbin "$ROOT"/dev \
	"$ROOT"/proc "$ROOT"/sys "$ROOT"/tmp "$ROOT"/etc "$ROOT"/root || die "cannot create $ROOT"

# busybox and a link per applet (made here, not by busybox --install at
# boot: the guest's kernel runs slowly).
cp "$CACHE/busybox/bin/busybox" "$ROOT/bin/busybox" || die "no busybox in busybox-static"
"$ROOT/bin/busybox" --list-full | while read -r a; do
	[ -e "$ROOT/$a" ] || ln -s /bin/busybox "$ROOT/$a" || exit 1
done || die "cannot link busybox's applets"

# perf and every library it loads, at the paths ldd names (copied through
# their symlinks), the dynamic loader included.
cp "$perf" "$ROOT/usr/bin/perf" || die "cannot copy $perf"
libs=$(ldd "$perf" | awk '$2 == "=>" && $3 ~ /^\// { print $3 } $1 ~ /^\// { print $1 }')
[ -n "$libs" ] || die "ldd names no library of $perf"
for l in $libs; do
	mkdir -p "$ROOT$(dirname "$l")" && cp -L "$l" "$ROOT$l" || die "cannot copy $l"
done
if ldd "$perf" | grep -q 'not found'; then
	ldd "$perf" | grep 'not found' >&2
	die "a library of $perf is missing on this host"
fi

# The static programs.
for p in loop hot vpmu-exit; do
	cc -static -O2 -Wall -Wextra -Werror -o "$ROOT/bin/$p" "$SRC/$p.c" ||
		die "cannot build $p.c (glibc's static libc is in libc6-dev)"
done
cp "$SRC/init" "$ROOT/init" && chmod 755 "$ROOT/init" || die "cannot copy init"
# The kernel opens /dev/console for init before anything is mounted.
mknod -m 600 "$ROOT/dev/console" c 5 1 2>/dev/null ||
	echo "mkinitramfs: cannot mknod dev/console (not root?): /init reopens it from devtmpfs" >&2

(cd "$ROOT" && find . | LC_ALL=C sort | cpio -o -H newc -R 0:0 --quiet) \
	>"$OUT/initramfs.cpio" || die "cpio failed"

# Check the image: unpacked again, its programs run natively in a chroot.
CHK=$OUT/initramfs-check
check() {
	out=$(chroot "$CHK" "$@" 2>&1) || die "chroot $CHK $*: failed: $out"
}
if [ "$(id -u)" -eq 0 ]; then
	rm -rf "$CHK" && mkdir -p "$CHK" || die "cannot create $CHK"
	(cd "$CHK" && cpio -i -d --quiet <"$OUT/initramfs.cpio") || die "cannot unpack the image"
	check /usr/bin/perf --version
	echo "mkinitramfs: in the image: $out" >&2
	check /bin/busybox true
	check /bin/sh -c 'for a in mount dmesg grep sleep wc head cat poweroff dd true ls date; do
		command -v $a >/dev/null || { echo "no $a"; exit 1; }; done'
	check /bin/loop 1000
	[ -z "$out" ] || die "loop printed '$out'"
	check /bin/hot
	[ "$out" = "hot: 0x652cf958c2958ad6" ] || die "hot printed '$out'"
	check /bin/vpmu-exit -n 0
	rm -rf "$CHK"
else
	echo "mkinitramfs: not root: the chroot checks of the image are skipped" >&2
fi

t2=$(date +%s)
echo "mkinitramfs: packages $kpkg busybox-static linux-perf in $((t1 - t0)) s, image in $((t2 - t1)) s" >&2
echo "kernel: $OUT/vmlinuz (from $kernel)"
echo "initramfs: $OUT/initramfs.cpio ($(wc -c <"$OUT/initramfs.cpio") bytes, $(find "$ROOT" | wc -l) entries)"
