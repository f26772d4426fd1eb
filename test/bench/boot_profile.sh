#!/bin/sh
# boot_profile.sh BUILD_DIR [RATE_NS]: what profiling a real kernel's boot
# costs (issue 30's measure).  Debian's stock kernel (the Linux demo's
# image, test/linux/) boots to /init, whose first act under vpmu.boot=1 is
# to exit: once under vpmu-run, unprofiled, then under vpmustat sampling
# cpu-clock every RATE_NS of guest run time (default 1000000: 1 kHz) with
# its kernel symbols and every sample's task named from guest memory.  The
# synthetic source, 1 vCPU, 1024 MiB both times.  Prints each boot's wall
# time, the samples, the ratio, the extra time per sample, and the boot's
# top 20 functions.  Files in BUILD_DIR/boot-profile/.  `make bench-linux`
# runs it; test/bench/README.md has the figures.
# Exit status: 0 measured; 1 a boot failed; 77 skipped (the packages cannot
# be fetched, no usable /dev/kvm), with the reason printed.
set -u
[ $# -ge 1 ] && [ $# -le 2 ] || { echo "usage: boot_profile.sh BUILD_DIR [RATE_NS]" >&2; exit 2; }
SRC=$(cd "$(dirname "$0")/../linux" && pwd) || exit 1
BUILD=$1
RATE=${2:-1000000}
ME=boot_profile
OUT=$BUILD/boot-profile
APPEND="console=ttyS0 nmi_watchdog=0 cryptomgr.notests=1 rodata=off nosoftlockup quiet vpmu.boot=1"
for t in vpmu-run vpmustat; do
	[ -x "$BUILD/examples/$t" ] || { echo "$ME: no $BUILD/examples/$t: build first" >&2; exit 1; }
done
[ -r /dev/kvm ] && [ -w /dev/kvm ] || { echo "$ME: skipped: no usable /dev/kvm"; exit 77; }
. "$SRC/profile-image.sh"
rm -rf "$OUT" && mkdir -p "$OUT" || exit 1

ms() { echo $(($(date +%s%N) / 1000000)); }

echo "== unprofiled: vpmu-run --source synthetic ... $KERNEL"
t0=$(ms)
"$BUILD/examples/vpmu-run" --source synthetic --mem 1024 --timeout 5400 \
    --append "$APPEND" --initrd "$INITRAMFS" "$KERNEL" >"$OUT/plain.console" 2>"$OUT/plain.stderr"
st=$?
t1=$(ms)
[ $st -eq 0 ] || { cat "$OUT/plain.stderr"; echo "$ME: the unprofiled boot ended with status $st" >&2; exit 1; }
plain=$((t1 - t0))

echo "== profiled: vpmustat -S cpu-clock -n $RATE --guest-symbols $MAP ... $KERNEL"
t0=$(ms)
"$BUILD/examples/vpmustat" -S cpu-clock -n "$RATE" --source synthetic --guest-symbols "$MAP" \
    -O "$OUT/profile.log" --top 20 --mem 1024 --timeout 5400 --append "$APPEND" \
    --initrd "$INITRAMFS" "$KERNEL" >"$OUT/profiled.console" 2>"$OUT/profiled.stderr"
st=$?
t1=$(ms)
[ $st -eq 0 ] || { cat "$OUT/profiled.stderr"; echo "$ME: the profiled boot ended with status $st" >&2; exit 1; }
prof=$((t1 - t0))

samples=$(sed -n 's/^event cpu-clock: \([0-9]*\) samples.*/\1/p' "$OUT/profiled.stderr")
grep -E '^vpmustat: (the guest exited|guest tasks)' "$OUT/profiled.stderr"
awk -v p="$plain" -v q="$prof" -v n="${samples:-0}" 'BEGIN {
	printf "| boot | wall s | samples | ratio | us per sample |\n"
	printf "|------|-------:|--------:|------:|--------------:|\n"
	printf "| unprofiled | %.2f | - | 1.000 | - |\n", p / 1000
	per = n > 0 ? sprintf("%.1f", (q - p) * 1000 / n) : "-"
	printf "| profiled | %.2f | %d | %.3f | %s |\n", q / 1000, n, q / p, per
}'
echo "top 20 (self %):"
sed -n '/self%.*function$/,/^  (/p' "$OUT/profiled.stderr" | sed -n '2,21p'
