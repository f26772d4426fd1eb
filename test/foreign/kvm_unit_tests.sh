#!/bin/sh
# kvm_unit_tests.sh KUT_DIR WORK_DIR VPMU_QEMU MODEL [CC]
#
# kvm-unit-tests' PMU group, unmodified, under vpmu-run through vpmu-qemu:
# KUT_DIR holds the suite (the source tarball and the prebuilt pmu.flat,
# pmu_lbr.flat, pmu_pebs.flat: ../shared/third_party/kvm-unit-tests).  The
# tarball is extracted and configured under WORK_DIR once (configure needs
# bash, util-linux's getopt and a C compiler for two preprocessor probes:
# CC, default cc); the prebuilt images go to its x86/ (the suite is not
# built here), and
#   QEMU=VPMU_QEMU TIMEOUT=0 CHECK=WORK_DIR/enable_pmu=Y ./run_tests.sh -g pmu
# runs with VPMU_QEMU_PMU=MODEL.  The CHECK file stands for the host KVM's
# enable_pmu, which is N on a host without a PMU: the suite would skip pmu.
#
# Prints the suite's summary lines and every check line of its logs.
# Exit 0 if pmu PASSes and pmu_lbr and pmu_pebs SKIP, 1 otherwise, 77 (with
# the reason) without the suite or a usable /dev/kvm, or where the host
# cannot run the guest's TSX instructions (below).
set -u
kut=$1 work=$2 wrapper=$3 model=$4 cc=${5:-cc}

skip() {
	echo "kvm_unit_tests: skip: $*"
	exit 77
}

[ -d "$kut" ] || skip "no kvm-unit-tests at $kut"
tarball=
for f in "$kut"/kvm-unit-tests-*.tar.gz; do
	[ -f "$f" ] && tarball=$f
done
[ -n "$tarball" ] || skip "no kvm-unit-tests-*.tar.gz in $kut"
for f in pmu.flat pmu_lbr.flat pmu_pebs.flat; do
	[ -f "$kut/$f" ] || skip "no prebuilt $f in $kut"
done
if ! [ -r /dev/kvm ] || ! [ -w /dev/kvm ]; then
	skip "/dev/kvm is absent or not usable"
fi
command -v bash > /dev/null || skip "kvm-unit-tests' run scripts need bash"
getopt -T > /dev/null 2>&1
[ $? -eq 4 ] || skip "kvm-unit-tests' run scripts need util-linux's getopt"

src=$work/$(basename "$tarball" .tar.gz)
if ! [ -f "$src/config.mak" ]; then
	rm -rf "$src"
	if ! mkdir -p "$work" || ! tar -xzf "$tarball" -C "$work"; then
		echo "kvm_unit_tests: cannot extract $tarball into $work"
		exit 1
	fi
	[ -d "$src" ] || { echo "kvm_unit_tests: $tarball has no $(basename "$src")/"; exit 1; }
	(cd "$src" && ./configure --cc="$cc") > "$work/configure.log" 2>&1 || {
		echo "kvm_unit_tests: ./configure failed:"
		cat "$work/configure.log"
		rm -f "$src/config.mak"
		exit 1
	}
fi
cp "$kut/pmu.flat" "$kut/pmu_lbr.flat" "$kut/pmu_pebs.flat" "$src/x86/" || exit 1
# What the suite's make would record: the commit the images were built from.
basename "$src" | sed 's/^kvm-unit-tests-//' > "$src/build-head"
echo Y > "$work/enable_pmu"
rm -rf "$src/logs"

echo "kvm_unit_tests: QEMU=$wrapper VPMU_QEMU_PMU=$model TIMEOUT=0" \
    "CHECK=$work/enable_pmu=Y ./run_tests.sh -g pmu (in $src)"
out=$work/run_tests.out
(cd "$src" && QEMU=$wrapper VPMU_QEMU_PMU=$model TIMEOUT=0 CHECK="$work/enable_pmu=Y" \
    ./run_tests.sh -g pmu) > "$out" 2>&1
st=$?
# The suite colours its verdicts; the escapes go.
esc=$(printf '\033')
sed "s/$esc\[[0-9;]*m//g" "$out" > "$out.txt"
cat "$out.txt"
for log in "$src"/logs/*.log; do
	[ -f "$log" ] || continue
	echo "== $(basename "$log")"
	grep -E '^(PASS|FAIL|SKIP|XPASS|XFAIL|SUMMARY|EXIT|ABORT)' "$log"
done

verdict() {
	sed -nE "s/^(PASS|FAIL|SKIP) $1( .*)?$/\1/p" "$out.txt" | head -1
}
pmu=$(verdict pmu) lbr=$(verdict pmu_lbr) pebs=$(verdict pmu_pebs)
if [ "$pmu" = PASS ] && [ "$lbr" = SKIP ] && [ "$pebs" = SKIP ]; then
	echo "kvm_unit_tests: $model: pmu PASS, pmu_lbr and pmu_pebs SKIP"
	exit 0
fi
# A host that offers the guest TSX in CPUID but whose KVM cannot run TSX
# instructions in guest kernel code (it emulates that code, and its
# emulator has no XBEGIN) ends pmu.c in check_tsx_cycles, its last check
# group, with #UD.  That is a skip with the reason, if it is exactly that:
# no check failed, and the faulting instruction in pmu.flat (loaded at
# 0x400000) is XBEGIN (C7 F8).
ud=$(tr -d '\r' <"$src/logs/pmu.log" 2>/dev/null |
    sed -n 's/^Unhandled exception 6 #UD(0) at ip \([0-9a-f]*\)$/\1/p' | head -n 1)
if [ "$pmu" = FAIL ] && [ "$lbr" = SKIP ] && [ "$pebs" = SKIP ] && [ -n "$ud" ] &&
    ! grep -q '^FAIL' "$src/logs/pmu.log" &&
    [ "$(od -A n -t x1 -j $((0x$ud - 0x400000)) -N 2 "$kut/pmu.flat" | tr -d ' ')" = c7f8 ]; then
	echo "kvm_unit_tests: skip: $model: pmu: $(grep -c '^PASS:' "$src/logs/pmu.log")" \
	    "checks passed and none failed, then the guest's XBEGIN at 0x$ud" \
	    "(check_tsx_cycles) raised #UD: the guest's CPUID offers RTM, but this" \
	    "host's KVM cannot run TSX instructions in guest kernel code; the rest" \
	    "of pmu.c did not run"
	exit 77
fi
# What went wrong: the end of each log whose verdict is not the one wanted.
for t in pmu pmu_lbr pmu_pebs; do
	case $t:$(verdict "$t") in
	pmu:PASS | pmu_lbr:SKIP | pmu_pebs:SKIP) ;;
	*)
		echo "== the end of logs/$t.log"
		tail -n 40 "$src/logs/$t.log" 2>/dev/null ;;
	esac
done
echo "kvm_unit_tests: $model: pmu ${pmu:-not run}, pmu_lbr ${lbr:-not run}," \
    "pmu_pebs ${pebs:-not run} (run_tests.sh status $st)"
exit 1
