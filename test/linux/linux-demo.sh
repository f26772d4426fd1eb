#!/bin/sh
# linux-demo.sh BUILD_DIR [MODEL]: boot Debian's stock kernel under vpmu-run
# with the demo's initramfs (mkinitramfs.sh), let perf count and sample on
# the virtual PMU of MODEL (default intel-v2) inside the guest, and check
# what it saw (test/linux/README.md).
#
# Environment: VPMU_LINUX_EXACT_MODE (default block), VPMU_LINUX_VCPUS
# (default 1), VPMU_LINUX_APPEND (more kernel command line, e.g. vpmu.user=1
# to run the user-mode part; its checks run when the guest ran it).
#
# Writes BUILD_DIR/linux/ (packages and image), BUILD_DIR/linux-demo-MODEL.log
# (the guest's console) and BUILD_DIR/linux-demo-MODEL.report (vpmu-run's
# report); characters of MODEL other than letters, digits, '.' and '-'
# become '_' in the names.
# Exit status: 0 every check that ran passed; 1 a check failed; 77 skipped
# (under ctest while the demo cannot complete, the packages cannot be
# fetched, no usable /dev/kvm), with the reason printed.
set -u
[ $# -ge 1 ] && [ $# -le 2 ] || { echo "usage: linux-demo.sh BUILD_DIR [MODEL]" >&2; exit 2; }
SRC=$(cd "$(dirname "$0")" && pwd) || exit 1
. "$SRC/parse.sh"
BUILD=$1
MODEL=${2:-intel-v2}
MODE=${VPMU_LINUX_EXACT_MODE:-block}
VCPUS=${VPMU_LINUX_VCPUS:-1}
# cryptomgr.notests=1: Linux runs the self-tests of its built-in crypto
# algorithms at late_initcall (RSA's and DH's modular exponentiations among
# them); on a host that emulates the guest's kernel code they take tens of
# minutes (test/linux/README.md), and the demo is about the PMU.
# nosoftlockup and sysctl.kernel.hung_task_timeout_secs=0: long stretches
# of emulated kernel code trip the soft-lockup and hung-task watchdogs,
# whose backtraces only cost more time (the sysctl applies once the
# initcalls are done: the boot itself may still print a hung task).
# rodata=off: no read-only kernel data, and so no W+X check of the
# kernel's page tables after it (CONFIG_DEBUG_WX: minutes of emulated page
# walks).  Page table isolation stays on, with its own W+X check of the
# user tables (about 250 s here): with mitigations=off (no PTI) processes
# that busybox's sh starts read zeros from their fresh thread-local
# storage on a host that runs user code natively (test/linux/README.md).
APPEND="console=ttyS0 nmi_watchdog=0 cryptomgr.notests=1 rodata=off nosoftlockup sysctl.kernel.hung_task_timeout_secs=0 quiet${VPMU_LINUX_APPEND:+ $VPMU_LINUX_APPEND}"
VPMU_RUN=$BUILD/examples/vpmu-run
TAG=$(printf %s "$MODEL" | tr -c 'A-Za-z0-9.-' _)
LOG=$BUILD/linux-demo-$TAG.log
REPORT=$BUILD/linux-demo-$TAG.report
PERIOD=10007 # the perf record period in test/linux/init

[ -x "$VPMU_RUN" ] || { echo "linux-demo: no $VPMU_RUN: build first" >&2; exit 1; }
# Under `make check` (VPMU_LINUX_CTEST=1, with VPMU_LINUX_RATE0 and
# VPMU_LINUX_RATE the rate guest built with 0 and SPIN_ITERS iterations)
# the demo runs only on a host that runs a guest's kernel-mode code at
# least MIN_RATE instructions a second: where that code is emulated
# (nested hosts) the demo takes most of an hour, and `make check-long`
# runs it instead.  `make linux-demo` and check-long always run it.
SPIN_ITERS=10000000 # test/linux/CMakeLists.txt: 2 instructions each
MIN_RATE=50000000
# What a whole demo costs, in instructions at the rate measured: the
# intel-v2 run of test/linux/README.md took 4,133 s at 1.47 M a second.
DEMO_INSNS=6000000000
if [ "${VPMU_LINUX_CTEST:-0}" = 1 ]; then
	# run_ns ELF: the wall time of vpmu-run running ELF, in nanoseconds.
	run_ns() {
		s=$(date +%s%N)
		VPMU_SKIP_NO_KVM=1 "$VPMU_RUN" --quiet --source synthetic "$1" >/dev/null 2>&1
		r=$?
		[ $r -eq 77 ] && { echo "linux-demo: skipped: no usable /dev/kvm"; exit 77; }
		[ $r -eq 0 ] || { echo "linux-demo: vpmu-run $1 failed with status $r" >&2; exit 1; }
		echo $(($(date +%s%N) - s))
	}
	t0=$(run_ns "${VPMU_LINUX_RATE0:?}") || exit $?
	t1=$(run_ns "${VPMU_LINUX_RATE:?}") || exit $?
	dt=$((t1 - t0))
	[ $dt -gt 0 ] || dt=1
	rate=$((2 * SPIN_ITERS * 1000000000 / dt))
	echo "linux-demo: the rate guest retired $((2 * SPIN_ITERS)) kernel-mode instructions in $((dt / 1000000)) ms: $((rate / 1000)) k/s"
	if [ $rate -lt $MIN_RATE ]; then
		echo "linux-demo: skipped: this host runs a guest's kernel-mode code at" \
		    "$((rate / 1000)) k instructions/s (emulated, not native; make check runs" \
		    "the demo from $((MIN_RATE / 1000000)) M/s): the demo" \
		    "would take about $((DEMO_INSNS / rate / 60)) minutes; make check-long runs it" \
		    "(test/linux/README.md)"
		exit 77
	fi
fi

ME=linux-demo
. "$SRC/image.sh"		# KERNEL, INITRAMFS

echo "== vpmu-run --source exact --exact-mode $MODE --pmu $MODEL --vcpus $VCPUS --mem 1024 --append '$APPEND' --initrd $INITRAMFS $KERNEL"
t0=$(date +%s)
{
	VPMU_SKIP_NO_KVM=1 "$VPMU_RUN" --source exact --exact-mode "$MODE" --pmu "$MODEL" \
		--vcpus "$VCPUS" --mem 1024 --report "$REPORT" --append "$APPEND" \
		--initrd "$INITRAMFS" "$KERNEL"
	echo $? >"$LOG.status"
} | tee "$LOG"
st=$(cat "$LOG.status")
t1=$(date +%s)
echo "== vpmu-run exited with status $st after $((t1 - t0)) s; its report:"
cat "$REPORT" 2>/dev/null
if [ "$st" -eq 77 ]; then
	echo "linux-demo: skipped: no usable /dev/kvm"
	exit 77
fi

# host_exact_counts A B EVENT: the exact per-vCPU counts (one per line) of
# the guest counters of EVENT (perf's name, e.g. instructions:k) between
# the guest's marks A and B (test/linux/init: 1 and 2 around perf stat, 3
# and 4 around perf record), from vpmu-run's report.  Empty output (no
# marks) makes the checks that need it SKIP.
host_exact_counts() {
	mark_counts "$REPORT" "$1" "$2" "${3%%:*}"
}

echo
echo "== checks ($MODEL)"
# The run itself.
expect_eq "vpmu-run exit status" "$st" 0
expect_eq "guest init status" "$(done_status "$LOG")" 0

# The kernel's PMU driver saw the model's CPUID.
name=$(model_key "$REPORT" name)
expect_eq "report's model" "$name" "${MODEL%%:*}"
case $name in
intel-v[1-5])
	check_pmu_boot "$LOG" Intel "${name#intel-v}" "$(model_key "$REPORT" gp)" \
		"$(model_key "$REPORT" width)" "$(model_key "$REPORT" fixed)" ;;
amd-v2)
	check_pmu_boot "$LOG" AMD 2 "$(model_key "$REPORT" gp)" 48 0 ;;
amd-*)
	check_pmu_boot "$LOG" AMD 0 "$(model_key "$REPORT" gp)" 48 0 ;;
*)
	fail "pmu boot: no model line in $REPORT (got model '$name')" ;;
esac

# perf stat of the kernel, whole system, one second.
for ev in instructions:k branches:k cycles:k; do
	g=$(stat_count "$LOG" stat $ev)
	check_nonzero "stat $ev" "$g"
	h=$(host_exact_counts 1 2 $ev | awk '{ s += $1 } END { if (NR) print s }')
	if [ -n "$h" ]; then
		check_counts_agree "stat $ev vs host" "$g" "$h"
	else
		skip_check "stat $ev vs host: no marks 1 and 2 in the report"
	fi
done

# perf reads its counters with RDPMC (x86_perf_event_update): answered
# by libvpmu, none faulted.
rd=$(report_rdpmc "$REPORT")
check_rdpmc "kernel RDPMC" "${rd% *}" "${rd#* }"

# perf record of kernel instructions every $PERIOD.
k=$(report_lines "$LOG" record '[k]')
if [ "$k" -gt 0 ]; then pass "record: $k report rows with kernel symbols [k]"; else fail "record: no report row with [k]"; fi
s=$(record_samples "$LOG" record)
check_nonzero "record samples" "$s"
counts=$(host_exact_counts 3 4 instructions:k)
if [ -n "$counts" ]; then
	# shellcheck disable=SC2086
	check_samples "record samples = count / $PERIOD" "$s" $PERIOD $counts
else
	skip_check "record samples = count / $PERIOD: no marks 3 and 4 in the report ($s samples)"
fi

# User mode: the guest ran the user sections if its command line had
# vpmu.user=1 (from VPMU_LINUX_APPEND or added by vpmu-run).
why=$(sed -n 's/\r$//; s/^=== vpmu-linux: user: skipped (\(.*\)) ===$/\1/p' "$LOG" | head -n 1)
if [ -n "$why" ]; then
	skip_check "user checks: the guest says: $why"
else
	check_delta "user instructions of loop 3000000 - loop 1000000" \
		"$(stat_count "$LOG" user-1000000 instructions:u)" \
		"$(stat_count "$LOG" user-3000000 instructions:u)" 4000000
	check_delta "user branches of loop 3000000 - loop 1000000" \
		"$(stat_count "$LOG" user-1000000 branches:u)" \
		"$(stat_count "$LOG" user-3000000 branches:u)" 2000000
	check_share_min "user hot's share of hot's samples" "$(report_share "$LOG" user-hot hot)" 90
fi

echo
# The stretches' times by the guest's clock, counted and not (a figure).
grep '^stretch:' "$LOG" | tr -d '\r' | sed 's/^/linux-demo: /'
if [ $check_failed -eq 0 ]; then
	echo "linux-demo: every check that ran passed"
	exit 0
fi
echo "linux-demo: $check_failed check(s) failed"
exit 1
