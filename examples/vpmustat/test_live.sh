#!/bin/sh
# test_live.sh VPMUSTAT HOT.elf HALT.elf WORKDIR
#
# vpmustat's runs where they fail or are told what to sample, under KVM:
#   - HALT.elf, a guest that halts with interrupts off (test/guests/faults.c,
#     MODE=HLT_CLI; the run ends badly, status 3): -G and --svg not
#     written, not announced, and the files opened for them removed
#   - -O on a FIFO with --svg: status 2 before the guest boots (a FIFO is
#     not read back), the --svg file removed
#   - hot.elf on 2 vCPUs, -c 1 -S instructions -c 0 -s instructions -N,
#     --folded, standard output (the console) on /dev/full: status 1 and
#     the message; samples of vCPU 1 only, a count of vCPU 0 only; the
#     warning that -N leaves -G, --folded and --svg without callers
# Exit 77 (skip) where vpmustat finds no usable /dev/kvm (VPMU_SKIP_NO_KVM=1).
set -u
vs=$1 elf=$2 halt=$3 dir=$4

fail() {
	echo "test_live.sh: FAIL: $*"
	exit 1
}

absent() {
	for f in "$@"; do
		[ -e "$f" ] && fail "$f exists"
	done
	return 0
}

rm -rf "$dir" && mkdir -p "$dir" || exit 1

# A run that ends badly.
VPMU_SKIP_NO_KVM=1 "$vs" -S instructions -n 1000 -G "$dir/h.graph" --svg "$dir/h.svg" \
    "$halt" >"$dir/halt.out" 2>"$dir/halt.err"
st=$?
cat "$dir/halt.err"
[ $st -eq 77 ] && { echo "test_live.sh: skipped (no usable /dev/kvm)"; exit 77; }
[ $st -eq 3 ] || fail "the halting guest: status $st, want 3"
grep -qx "vpmustat: the run failed: -G, --folded and --svg not written" "$dir/halt.err" ||
	fail "the halting guest: no 'the run failed' line"
grep -q "flame graph" "$dir/halt.err" && fail "the halting guest: a flame graph announced"
absent "$dir/h.graph" "$dir/h.svg"

# -O on a FIFO cannot be read back for --svg: an error before the run.
mkfifo "$dir/log.fifo" || fail "mkfifo"
cat "$dir/log.fifo" >/dev/null &
reader=$!
VPMU_SKIP_NO_KVM=1 "$vs" -S instructions -O "$dir/log.fifo" --svg "$dir/f.svg" "$elf" \
    >"$dir/fifo.out" 2>"$dir/fifo.err"
st=$?
kill "$reader" 2>/dev/null	# if vpmustat never opened the FIFO
wait
cat "$dir/fifo.err"
[ $st -eq 2 ] || fail "-O FIFO with --svg: status $st, want 2"
[ "$(cat "$dir/fifo.err")" = "vpmustat: -O $dir/log.fifo is not a regular file: it is not read back, and -G, --folded and --svg need it (read it with -R)" ] ||
	fail "-O FIFO with --svg: not the message"
[ -s "$dir/fifo.out" ] && fail "-O FIFO with --svg: the guest ran"
absent "$dir/f.svg"

# -c, -N and a console that cannot be written.
VPMU_SKIP_NO_KVM=1 "$vs" --vcpus 2 -c 1 -S instructions -n 1009 -c 0 -s instructions -w 0 \
    -N --folded "$dir/n.folded" -o "$dir/report.txt" "$elf" >/dev/full 2>"$dir/run.err"
st=$?
cat "$dir/run.err" "$dir/report.txt"
[ $st -eq 1 ] || fail "the console on /dev/full: status $st, want 1"
[ "$(tail -n 1 "$dir/run.err")" = "vpmustat: standard output: a write failed" ] ||
	fail "the console on /dev/full: not the last message"
grep -qx "vpmustat: warning: event instructions was sampled without call chains (-N): -G, --folded and --svg show no callers" \
    "$dir/run.err" || fail "no -N warning"
grep -q "^  s/00/instructions  *[1-9][0-9]*$" "$dir/report.txt" || fail "no count of vCPU 0"
grep -q "s/01/" "$dir/report.txt" && fail "a count of vCPU 1 (-c 0)"
grep -Eq "^  vCPU 1: [1-9][0-9]* samples \(100\.00%\)$" "$dir/report.txt" ||
	fail "not every sample on vCPU 1"
grep -q "^  vCPU 0:" "$dir/report.txt" && fail "samples of vCPU 0 (-c 1)"
[ -s "$dir/n.folded" ] || fail "no folded stacks"
echo "test_live.sh: ok"
exit 0
