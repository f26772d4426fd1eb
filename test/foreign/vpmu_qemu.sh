#!/bin/sh
# vpmu_qemu.sh WRAPPER -- vpmu-qemu itself, against a stub vpmu-run that
# records its arguments and exits with $STUB_STATUS: the translation of
# kvm-unit-tests' real command line, option for option; --help, -device ?,
# -version, a missing kernel (status 1, as QEMU), usage errors (status 2 and
# "Try ... --help"), warnings for what it does not know, the exit status
# passed through, and nothing on standard error but warnings.
set -u
wrapper=$1
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
fails=0

fail() {
	printf 'FAIL: %s\n' "$*"
	fails=$((fails + 1))
}

# The stub: one argument per line in $tmp/argv, a line on standard output.
mkdir "$tmp/bin" "$tmp/beside" "$tmp/alone"
cat > "$tmp/bin/vpmu-run" <<STUB
#!/bin/sh
printf '%s\n' "\$0" > "$tmp/who"
: > "$tmp/argv"
for a in "\$@"; do printf '%s\n' "\$a" >> "$tmp/argv"; done
echo "stub ran"
exit \${STUB_STATUS:-1}
STUB
chmod +x "$tmp/bin/vpmu-run"
echo 'kernel' > "$tmp/pmu.flat"
echo 'NR_CPUS=1' > "$tmp/env"

# run [ENV=VAL...] -- ARGS: the wrapper with VPMU_RUN=stub; status in $st,
# outputs in $tmp/out, $tmp/err.
run() {
	rm -f "$tmp/argv" "$tmp/who"
	env VPMU_RUN="$tmp/bin/vpmu-run" "$@" > "$tmp/out" 2> "$tmp/err"
	st=$?
}

expect_argv() {
	printf '%s\n' "$@" > "$tmp/want"
	if ! [ -f "$tmp/argv" ]; then
		fail "$what: vpmu-run was not run"
	elif ! cmp -s "$tmp/want" "$tmp/argv"; then
		fail "$what: vpmu-run's arguments differ (want, got):"
		diff "$tmp/want" "$tmp/argv"
	fi
}

expect_no_stderr() {
	if [ -s "$tmp/err" ]; then
		fail "$what: standard error is not empty:"
		cat "$tmp/err"
	fi
}

expect_status() {
	[ "$st" -eq "$1" ] || fail "$what: status $st, want $1"
}

# 1. The command line x86/run builds for [pmu], word for word (README).
suite() {
	run "$@" "$wrapper" --no-reboot -nodefaults -global kvm-pit.lost_tick_policy=discard \
	    -device pc-testdev -device isa-debug-exit,iobase=0xf4,iosize=0x4 \
	    -display none -serial stdio -device pci-testdev -machine accel=kvm \
	    -kernel "$tmp/pmu.flat" -smp 1 -cpu max -initrd "$tmp/env"
}
for s in 1 3 77 127; do
	what="the suite's command line, vpmu-run exiting $s"
	suite STUB_STATUS=$s
	expect_argv --exit-status qemu --exact-mode block --source exact --pmu intel-v2 \
	    --mem 128 --quiet --vcpus 1 --initrd "$tmp/env" "$tmp/pmu.flat"
	expect_status "$s"
	expect_no_stderr
	grep -qx 'stub ran' "$tmp/out" || fail "$what: vpmu-run's output lost"
done

# 2. The environment, memory, CPUs, -append, --opt spelling.
what="environment and sizes"
run STUB_STATUS=1 VPMU_QEMU_PMU=amd-v2 VPMU_QEMU_SOURCE=synthetic \
    VPMU_QEMU_ARGS='--host-counters 4 --irqchip user' VPMU_QEMU_REPORT="$tmp/rep" \
    "$wrapper" --kernel "$tmp/pmu.flat" -m 1G -smp cpus=2,maxcpus=4 \
    -append 'a b  c' -cpu host,migratable=no -name pmu -vga none --enable-kvm \
    -accel kvm -M q35,accel=kvm
expect_argv --exit-status qemu --exact-mode block --source synthetic --pmu amd-v2 \
    --mem 1024 --report "$tmp/rep" --vcpus 2 --append 'a b  c' --host-counters 4 \
    --irqchip user "$tmp/pmu.flat"
expect_status 1
expect_no_stderr
what="-m in MiB, -smp N,..., an empty -append"
run "$wrapper" -m size=96M -smp 3,sockets=1 -append '' -kernel "$tmp/pmu.flat"
expect_argv --exit-status qemu --exact-mode block --source exact --pmu intel-v2 \
    --mem 96 --quiet --vcpus 3 --append '' "$tmp/pmu.flat"
expect_no_stderr
what="-m without a unit"
run "$wrapper" -m 200 -kernel "$tmp/pmu.flat"
expect_argv --exit-status qemu --exact-mode block --source exact --pmu intel-v2 \
    --mem 200 --quiet "$tmp/pmu.flat"
expect_no_stderr

# 3. --help: search_qemu_binary greps it for "QEMU"; the first line is
#    read as QEMU's version string.
for h in --help -h -help; do
	what="$h"
	run "$wrapper" "$h"
	expect_status 0
	head -1 "$tmp/out" | grep -q '^QEMU emulator version [0-9]*\.[0-9]*\.[0-9]' ||
	    fail "$what: first line is not QEMU's version line"
	[ -f "$tmp/argv" ] && fail "$what: vpmu-run was run"
	expect_no_stderr
done

# 4. -device ? and -device help: the devices x86/run looks for.
for d in '?' help; do
	what="-device $d"
	run "$wrapper" -device "$d"
	expect_status 0
	grep -qF 'name "pc-testdev"' "$tmp/out" || fail "$what: no pc-testdev line"
	grep -qF 'name "pci-testdev"' "$tmp/out" || fail "$what: no pci-testdev line"
	[ -f "$tmp/argv" ] && fail "$what: vpmu-run was run"
	expect_no_stderr
done

# 5. A missing kernel, as the suite's premature-failure probe runs it.
what="missing kernel"
run "$wrapper" -nodefaults -kernel _NO_FILE_4Uhere_ -smp 1 -cpu max
expect_status 1
grep -qxF "vpmu-qemu: could not load kernel '_NO_FILE_4Uhere_'" "$tmp/err" ||
    fail "$what: no \"could not load kernel\" line: $(cat "$tmp/err")"
grep "_NO_FILE_4Uhere_" "$tmp/err" | grep -q "[Cc]ould not \(load\|open\) kernel" ||
    fail "$what: the suite's own pattern does not match"
[ -f "$tmp/argv" ] && fail "$what: vpmu-run was run"
what="missing initrd"
run "$wrapper" -kernel "$tmp/pmu.flat" -initrd "$tmp/nope"
expect_status 1
grep -qxF "vpmu-qemu: could not load initrd '$tmp/nope'" "$tmp/err" ||
    fail "$what: $(cat "$tmp/err")"
what="no kernel"
run "$wrapper" -nodefaults
expect_status 2
printf '%s\n' "vpmu-qemu: no -kernel IMAGE given: vpmu-run boots a kernel image, not a disk" \
    "Try 'vpmu-qemu --help' for more information." > "$tmp/want"
cmp -s "$tmp/want" "$tmp/err" || fail "$what: standard error: $(cat "$tmp/err")"
what="an option without its argument"
run "$wrapper" -smp 1 -kernel
expect_status 2
printf '%s\n' "vpmu-qemu: -kernel needs an argument" \
    "Try 'vpmu-qemu --help' for more information." > "$tmp/want"
cmp -s "$tmp/want" "$tmp/err" || fail "$what: standard error: $(cat "$tmp/err")"
[ -f "$tmp/argv" ] && fail "$what: vpmu-run was run"

# 5b. -version and --version: QEMU's version line, then the wrapper's with
#     the libvpmu of its vpmu-run (a stub that answers as vpmu-run 9.8.7).
cat > "$tmp/bin/vpmu-run-v" <<'STUB'
#!/bin/sh
[ "$*" = --version ] && echo "vpmu-run (libvpmu 9.8.7)" && exit 0
exit 9
STUB
chmod +x "$tmp/bin/vpmu-run-v"
for v in -version --version; do
	what="$v"
	env VPMU_RUN="$tmp/bin/vpmu-run-v" "$wrapper" "$v" > "$tmp/out" 2> "$tmp/err"
	st=$?
	expect_status 0
	printf '%s\n' "QEMU emulator version 0.0.0 (vpmu-qemu: vpmu-run behind a QEMU command line; not QEMU)" \
	    "vpmu-qemu (libvpmu 9.8.7)" > "$tmp/want"
	cmp -s "$tmp/want" "$tmp/out" || fail "$what: standard output: $(cat "$tmp/out")"
	expect_no_stderr
done

# 6. What it does not know: warnings, one per thing, and the run goes on.
what="unknown options"
run STUB_STATUS=1 "$wrapper" -foo bar -baz -cpu qemu64 \
    -device isa-debug-exit,iobase=0x501,iosize=0x2 -device virtio-net -serial none \
    -machine accel=tcg disk.img -kernel "$tmp/pmu.flat"
expect_status 1
expect_argv --exit-status qemu --exact-mode block --source exact --pmu intel-v2 \
    --mem 128 --quiet "$tmp/pmu.flat"
n=$(grep -c . "$tmp/err")
[ "$n" -eq 9 ] || { fail "$what: $n lines on standard error, want 9:"; cat "$tmp/err"; }
if grep -v 'warning' "$tmp/err"; then
	fail "$what: a line above has no \"warning\""
fi
for w in "ignoring -foo bar" "ignoring -baz" "ignoring -cpu qemu64" \
    "the exit port is 0xf4; 0x501 is ignored" "ignoring iosize=0x2" \
    "ignoring -device virtio-net" "ignoring -serial none" "ignoring accel=tcg" \
    "ignoring disk.img"; do
	grep -F -- "$w" "$tmp/err" | grep -q '^vpmu-qemu: warning: ' ||
	    fail "$what: no warning \"$w\""
done

# 7. Finding vpmu-run: VPMU_RUN, else beside the wrapper, else PATH.
cp "$wrapper" "$tmp/beside/vpmu-qemu"
cp "$tmp/bin/vpmu-run" "$tmp/beside/vpmu-run"
cp "$wrapper" "$tmp/alone/vpmu-qemu"
what="vpmu-run beside the wrapper"
rm -f "$tmp/who"
env -u VPMU_RUN PATH=/usr/bin:/bin "$tmp/beside/vpmu-qemu" -kernel "$tmp/pmu.flat" \
    > /dev/null 2>&1
[ "$(cat "$tmp/who" 2>/dev/null)" = "$tmp/beside/vpmu-run" ] ||
    fail "$what: ran $(cat "$tmp/who" 2>/dev/null)"
what="vpmu-run in PATH"
rm -f "$tmp/who"
env -u VPMU_RUN PATH="$tmp/bin:/usr/bin:/bin" "$tmp/alone/vpmu-qemu" \
    -kernel "$tmp/pmu.flat" > /dev/null 2>&1
[ "$(cat "$tmp/who" 2>/dev/null)" = "$tmp/bin/vpmu-run" ] ||
    fail "$what: ran $(cat "$tmp/who" 2>/dev/null)"
what="VPMU_RUN first"
rm -f "$tmp/who"
env VPMU_RUN="$tmp/bin/vpmu-run" PATH=/usr/bin:/bin "$tmp/beside/vpmu-qemu" \
    -kernel "$tmp/pmu.flat" > /dev/null 2>&1
[ "$(cat "$tmp/who" 2>/dev/null)" = "$tmp/bin/vpmu-run" ] ||
    fail "$what: ran $(cat "$tmp/who" 2>/dev/null)"
what="no vpmu-run anywhere"
env -u VPMU_RUN PATH=/usr/bin:/bin "$tmp/alone/vpmu-qemu" -kernel "$tmp/pmu.flat" \
    > /dev/null 2> "$tmp/err"
st=$?
expect_status 1
grep -q "vpmu-run not found" "$tmp/err" || fail "$what: $(cat "$tmp/err")"

if [ "$fails" -ne 0 ]; then
	echo "vpmu_qemu: $fails check(s) failed"
	exit 1
fi
echo "vpmu_qemu: all checks passed"
