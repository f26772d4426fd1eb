#!/bin/sh
# linux-profile.sh BUILD_DIR: profile Debian's stock kernel from the host
# (test/linux/README.md, "The profile").  The Linux demo's image boots
# under vpmustat with vpmu.profile=1: /init runs a kernel-heavy workload
# between marks 1 and 2 (dd, a shell forking /bin/true, ls -lR of sysfs, a
# user-mode loop), which vpmustat samples on cpu-clock at 1 kHz
# (--from-mark 1 --to-mark 2), naming kernel functions from the kernel's
# System.map (linux-image-VERSION-dbg) and each sample's process from guest
# memory.  Then a minute of the same boot with no symbol file: the
# kernel's own table (kallsyms), read from guest memory and saved.  Then
# the checks (the saved table against the System.map among them).
#
# Environment: VPMU_PROFILE_RATE (ns of guest run time per sample, default
# 1000000), VPMU_PROFILE_VCPUS (default 1), VPMU_PROFILE_DD (dd's 4 KiB
# blocks, default 10000); VPMU_PROFILE_RECHECK=1 runs the checks again on
# the last run's files, without a run.
#
# Writes BUILD_DIR/linux/ (the image and the packages, shared with the
# demo) and BUILD_DIR/linux-profile/: console.txt, stderr.txt (vpmustat's
# report), profile.log (pmclog), profile.svg, profile.folded, profile.perf
# (perf script's text), profile.pb.gz (pprof).
# Exit status: 0 every check passed; 1 a check failed; 77 skipped (the
# packages cannot be fetched, no usable /dev/kvm), with the reason printed.
set -u
[ $# -eq 1 ] || { echo "usage: linux-profile.sh BUILD_DIR" >&2; exit 2; }
SRC=$(cd "$(dirname "$0")" && pwd) || exit 1
BUILD=$1
ME=linux-profile
VPMUSTAT=$BUILD/examples/vpmustat
OUT=$BUILD/linux-profile
RATE=${VPMU_PROFILE_RATE:-1000000}
VCPUS=${VPMU_PROFILE_VCPUS:-1}
DD=${VPMU_PROFILE_DD:-10000}
# The demo's command line (linux-demo.sh says why each word is there).
APPEND="console=ttyS0 nmi_watchdog=0 cryptomgr.notests=1 rodata=off nosoftlockup sysctl.kernel.hung_task_timeout_secs=0 quiet vpmu.profile=1 vpmu.profile.dd=$DD"

[ -x "$VPMUSTAT" ] || { echo "linux-profile: no $VPMUSTAT: build first" >&2; exit 1; }
# The image and the kernel's System.map (KERNEL, INITRAMFS, MAP).
. "$SRC/profile-image.sh"

if [ "${VPMU_PROFILE_RECHECK:-0}" = 1 ]; then
	# The checks again, on the files of the last run.
	st=$(cat "$OUT/status" 2>/dev/null) || { echo "linux-profile: no run in $OUT" >&2; exit 1; }
	t0=0 t1=$(cat "$OUT/seconds")
else
rm -rf "$OUT" && mkdir -p "$OUT" || exit 1
echo "== vpmustat -S cpu-clock -n $RATE --from-mark 1 --to-mark 2 --guest-symbols $MAP ... $KERNEL"
t0=$(date +%s)
VPMU_SKIP_NO_KVM=1 "$VPMUSTAT" -S cpu-clock -n "$RATE" --source synthetic \
    --from-mark 1 --to-mark 2 --guest-symbols "$MAP" -O "$OUT/profile.log" \
    --svg "$OUT/profile.svg" --folded "$OUT/profile.folded" \
    --perf-script "$OUT/profile.perf" --pprof "$OUT/profile.pb.gz" --top 25 \
    --tunable callchaindepth=32 \
    --vcpus "$VCPUS" --mem 1024 --timeout 5400 --append "$APPEND" \
    --initrd "$INITRAMFS" "$KERNEL" >"$OUT/console.txt" 2>"$OUT/stderr.txt"
st=$?
t1=$(date +%s)
cat "$OUT/stderr.txt"
[ $st -eq 77 ] && { echo "linux-profile: skipped: no usable /dev/kvm"; exit 77; }
echo "== vpmustat exited with status $st after $((t1 - t0)) s"
echo "$st" >"$OUT/status"
echo $((t1 - t0)) >"$OUT/seconds"
# The kernel's own table (kallsyms) read from guest memory, no file given:
# the first minute of the boot, the table saved.
echo "== vpmustat -S cpu-clock --save-guest-symbols ... --timeout 60 $KERNEL"
VPMU_SKIP_NO_KVM=1 "$VPMUSTAT" -S cpu-clock -n "$RATE" --source synthetic \
    --save-guest-symbols "$OUT/kallsyms.txt" -O "$OUT/kallsyms.log" --mem 1024 \
    --timeout 60 --append "$APPEND" --initrd "$INITRAMFS" "$KERNEL" \
    >"$OUT/kallsyms.console" 2>"$OUT/kallsyms.stderr"
echo $? >"$OUT/kallsyms.status"
fi

fails=0
check() {	# check WHAT CONDITION-COMMAND...
	what=$1
	shift
	if "$@"; then echo "ok   $what"; else echo "FAIL $what"; fails=$((fails + 1)); fi
}
has() { grep -Eq "$1" "$2"; }
check "vpmustat's status 0" [ "$st" -eq 0 ]
check "the workload ran (\"profile: the workload took\")" has '^profile: the workload took [0-9]+ s' "$OUT/console.txt"
check "/init ended with status 0" has '^status: 0' "$OUT/console.txt"
check "the marks bracket the profile" has '^vpmustat: the PMCs counted from mark 1 \(at [0-9.]+ s\) to mark 2' "$OUT/stderr.txt"
check "the KASLR slide is found from LSTAR" has "^vpmustat: kernel symbols from .*, KASLR slide (0|0x[0-9a-f]+) \\(LSTAR 0x[0-9a-f]+ = entry_SYSCALL_64\\)$" "$OUT/stderr.txt"
samples=$(sed -n 's/^event cpu-clock: \([0-9]*\) samples.*/\1/p' "$OUT/stderr.txt")
check "at least 1000 samples (${samples:-none})" [ "${samples:-0}" -ge 1000 ]
named=$(sed -n 's/^vpmustat: guest tasks: \([0-9]*\) samples named their task.*/\1/p' "$OUT/stderr.txt")
check "99% of the samples name their task (${named:-none} of ${samples:-none})" \
    [ $((${named:-0} * 100)) -ge $((${samples:-1} * 99)) ]
# block NAME: the report's rows of the first process named NAME: its own
# row, then its hottest functions (up to the next process's row).
block() {
	awk -v name="$1" '
		/^    [ 0-9.]+ +[0-9]+  [^ ]+\[[0-9]+\]$/ { on = index($3, name "[") == 1 && !done; if (on) done = 1 }
		/^  +self%/ { on = 0 }
		on' "$OUT/stderr.txt"
}
# The processes: each of the workload's, by name, in the report's table.
for p in dd sh true ls loop; do
	check "process $p in the report" [ -n "$(block $p)" ]
done
# Kernel functions, by name: the top one; dd's hottest reads /dev/zero.
top=$(sed -n '/self%.*function$/{n;p;q}' "$OUT/stderr.txt" | awk '{ print $5 }')
check "the top function is named ($top)" sh -c "case '$top' in ''|0x*) exit 1;; esac"
# Every kernel-mode sample in the top functions is named: an upper-half
# address left bare is made only of samples the vCPU took at CPL > 0 (as
# KVM reported its state: vpmustat(1), "Kernel and user samples").
"$VPMUSTAT" -R "$OUT/profile.log" --dump >"$OUT/dump.txt" 2>/dev/null
bare_kernel=0
for row in $(awk '/self%.*function$/ { on = 1; next } /^  \(/ { on = 0 }
    on && $5 ~ /^0xffff/ { print $5 ":" $2 }' "$OUT/stderr.txt"); do
	a=${row%:*} n=${row#*:}
	u=$(grep -c " user=1 npc=[0-9]* pc=$a\(,\| \|$\)" "$OUT/dump.txt")
	[ "$u" -eq "$n" ] || { echo "  $a: $n samples, $u of them at CPL > 0"; bare_kernel=1; }
done
check "no kernel-mode sample among the top functions is left unnamed" [ $bare_kernel -eq 0 ]
dd_top=$(block dd | sed -n 2p | awk '{ print $3 }')
check "dd's hottest function reads /dev/zero ($dd_top)" \
    sh -c "case '$dd_top' in read_zero|read_iter_zero|iov_iter_zero|clear_user|__clear_user|clear_user_*) ;; *) exit 1;; esac"
# loop spins in user mode: one of its hottest is a user address (no --elf).
loop_user=$(block loop | grep -Ec '      0x[0-9a-f]{1,12}$')
check "loop's hottest include a user-mode address" [ "$loop_user" -ge 1 ]
# Call chains by the kernel's ORC tables: dd's read of /dev/zero from
# vfs_read, and deeper than that.
check "the chains come from the kernel's ORC tables" has \
    "^vpmustat: kernel call chains unwound by the kernel's ORC tables \\([0-9]+ entries" "$OUT/stderr.txt"
check "read_zero is called from vfs_read in the folded stacks" has ';vfs_read;read_zero [0-9]+$' \
    "$OUT/profile.folded"
# The formats: perf script's comm column, pprof's gzip, the SVG.
check "perf script names dd" has '^dd [0-9]+/[0-9]+ ' "$OUT/profile.perf"
check "the pprof profile is whole gzip" gzip -t "$OUT/profile.pb.gz"
check "the SVG names a kernel function" has "$top" "$OUT/profile.svg"
# kallsyms from guest memory: its code symbols are the System.map's, each
# at the map's address (the guest's slide is 0 under this boot protocol, or
# the report says otherwise), and the report names its top function.
check "the 60 s run ended by its timeout (status 124)" [ "$(cat "$OUT/kallsyms.status")" = 124 ]
check "the kernel's table read from guest memory" has \
    '^vpmustat: kernel symbols from guest memory \(kallsyms, [0-9]+ symbols at guest-physical 0x[0-9a-f]+\), KASLR slide 0 ' \
    "$OUT/kallsyms.stderr"
awk '$2 ~ /^[tT]$/ { print $1, $3 }' "$OUT/kallsyms.txt" | sort >"$OUT/kallsyms.code"
awk '$2 ~ /^[tTwW]$/ { print $1, $3 }' "$MAP" | sort >"$OUT/map.code"
ncode=$(wc -l <"$OUT/kallsyms.code")
nodd=$(comm -23 "$OUT/kallsyms.code" "$OUT/map.code" | wc -l)
check "each of the table's $ncode code symbols is the map's ($nodd are not)" \
    [ "$ncode" -ge 1000 -a "$nodd" -eq 0 ]
ktop=$(sed -n '/self%.*function$/{n;p;q}' "$OUT/kallsyms.stderr" | awk '{ print $5 }')
check "the table names the top function ($ktop)" sh -c "case '$ktop' in ''|0x*) exit 1;; esac"
if [ $fails -ne 0 ]; then
	echo "linux-profile: $fails check(s) failed"
	exit 1
fi
echo "linux-profile: every check passed (the run took $((t1 - t0)) s; files in $OUT)"
