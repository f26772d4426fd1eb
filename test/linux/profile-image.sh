# profile-image.sh: sourced by the scripts that profile Debian's kernel
# from the host (linux-profile.sh, test/bench/boot_profile.sh), with SRC
# (this directory), BUILD (the build directory) and ME (the caller's name,
# for messages) set.  The image (image.sh: KERNEL, INITRAMFS), then the
# kernel's System.map (MAP).  Exits 77 (skipped, the reason printed) when
# the packages cannot be fetched, 1 on any other failure.
. "$SRC/image.sh"
CACHE=$BUILD/linux/linux-cache

# The kernel's System.map: from linux-image-VERSION-dbg of the very
# version the image's kernel came from (858 MB; only the map is unpacked).
deb=$(ls "$CACHE"/linux-image-[0-9]*-amd64_*.deb 2>/dev/null | head -n 1)
[ -n "$deb" ] || { echo "$ME: no kernel package in $CACHE" >&2; exit 1; }
pkg=$(dpkg-deb -f "$deb" Package) && ver=$(dpkg-deb -f "$deb" Version) ||
	{ echo "$ME: cannot read $deb" >&2; exit 1; }
kver=${pkg#linux-image-}
MAP=$CACHE/System.map-$kver
if [ ! -s "$MAP" ]; then
	echo "$ME: $pkg-dbg=$ver for the kernel's System.map"
	(cd "$CACHE" && { apt-get download "$pkg-dbg=$ver" >/dev/null 2>&1 ||
	    { apt-get update >/dev/null 2>&1 && apt-get download "$pkg-dbg=$ver" >/dev/null 2>&1; }; }) &&
	    dbg=$(ls "$CACHE/$pkg"-dbg_*.deb) ||
		{ echo "$ME: skipped: $pkg-dbg=$ver cannot be fetched"; exit 77; }
	dpkg-deb --fsys-tarfile "$dbg" | tar -xO "./usr/lib/debug/boot/System.map-$kver" \
	    >"$MAP.tmp" && [ -s "$MAP.tmp" ] && mv "$MAP.tmp" "$MAP" ||
		{ echo "$ME: no System.map-$kver in $dbg" >&2; rm -f "$MAP.tmp"; exit 1; }
	rm -f "$dbg"			# the map is all it is needed for
fi
