# image.sh: sourced by the scripts that boot the Linux demo's image
# (linux-demo.sh, profile-image.sh), with SRC (this directory), BUILD (the
# build directory) and ME (the caller's name, for messages) set.  Builds
# the image (mkinitramfs.sh) into BUILD/linux and sets KERNEL and
# INITRAMFS.  Exits 77 (skipped, the reason printed) when the packages
# cannot be fetched, 1 on any other failure.
out=$(sh "$SRC/mkinitramfs.sh" "$BUILD/linux")
st=$?
[ $st -eq 77 ] && { echo "$ME: skipped: the packages cannot be fetched"; exit 77; }
[ $st -eq 0 ] || { echo "$ME: mkinitramfs.sh failed (status $st)" >&2; exit 1; }
echo "$out"
KERNEL=$BUILD/linux/vmlinuz
INITRAMFS=$BUILD/linux/initramfs.cpio
