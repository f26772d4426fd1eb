#!/bin/sh
# snapshot.sh VPMU_RUN GUEST GUEST_NOSNAP DIR NVCPUS [IRQCHIP] -- vpmu-run's
# --snapshot and --resume on the exact source (test/guests/snapshot.c), with
# vpmu-run's default irqchip or --irqchip IRQCHIP:
#   - the guest without the OUT runs uninterrupted: its exact counts (it
#     checks them itself: status 0) are the reference output;
#   - with --snapshot the run stops at the OUT to 0xf5 with status 0 and
#     the file; --resume FILE prints what the uninterrupted run printed,
#     exact counts included, and the guest's status 0;
#   - a file resumed with other options, another guest, corrupted or
#     truncated, or with the other irqchip: status 2 and a message saying
#     which, before the guest runs.
# Exit 77 (skip) when vpmu-run skips (no /dev/kvm, VPMU_SKIP_NO_KVM=1).
set -u
run=$1 guest=$2 nosnap=$3 dir=$4 n=$5 chip=${6:-kernel}
opts="--source exact --vcpus $n -q --irqchip $chip"
rm -rf "$dir" && mkdir -p "$dir" || exit 1

fail() {
	echo "snapshot.sh: FAIL: $*"
	for f in "$dir"/*.out "$dir"/*.err; do
		[ -s "$f" ] && { echo "--- $f"; cat "$f"; }
	done
	exit 1
}
now() { date +%s%N; }

# $1 wanted status, $2 regex on stderr (or -), $3 name, then vpmu-run's arguments
expect() {
	want=$1 re=$2 name=$3
	shift 3
	"$run" "$@" >"$dir/$name.out" 2>"$dir/$name.err"
	got=$?
	[ "$got" -eq 77 ] && [ "$want" -ne 77 ] && { cat "$dir/$name.out"; exit 77; }
	[ "$got" -eq "$want" ] || fail "$name: status $got, want $want"
	if [ "$re" != - ] && ! grep -Eq "$re" "$dir/$name.err"; then
		fail "$name: stderr does not match /$re/"
	fi
}

expect 0 - ref $opts "$nosnap"
grep -q "snapshot guest: mid 40003 final 100009 branches 15000 status 0x2" "$dir/ref.out" ||
	fail "ref: not the exact counts"

t0=$(now)
expect 0 - save $opts --snapshot "$dir/vm.snap" "$guest"
t1=$(now)
[ -s "$dir/vm.snap" ] || fail "save: no snapshot file"
[ -e "$dir/vm.snap.tmp" ] && fail "save: the temporary file is left"
grep -q "snapshot guest" "$dir/save.out" && fail "save: the guest ran past the OUT"

expect 0 - resume $opts --resume "$dir/vm.snap" "$guest"
t2=$(now)
cat "$dir/save.out" "$dir/resume.out" >"$dir/both.out"
cmp -s "$dir/ref.out" "$dir/both.out" || fail "resume: output differs from the uninterrupted run"
cat "$dir/resume.out"
echo "snapshot: $(stat -c %s "$dir/vm.snap") bytes; run to the snapshot" \
    "$(( (t1 - t0) / 1000000 )) ms, resume to the end $(( (t2 - t1) / 1000000 )) ms"

# A file resumed twice gives the same again (the file is not consumed).
expect 0 - resume2 $opts --resume "$dir/vm.snap" "$guest"
cmp -s "$dir/resume.out" "$dir/resume2.out" || fail "resume2: differs from the first resume"

# Mismatches: status 2, and what differs.
expect 2 "made with --vcpus $n, not $((n + 1))" vcpus --source exact --vcpus $((n + 1)) -q \
    --resume "$dir/vm.snap" "$guest"
expect 2 "made with --pmu intel-v2.*not intel-v3" pmu $opts --pmu intel-v3 \
    --resume "$dir/vm.snap" "$guest"
expect 2 "made with --source exact, not synthetic" source --source synthetic --vcpus $n -q \
    --resume "$dir/vm.snap" "$guest"
expect 2 "made with --mem 64, not 128" mem $opts --mem 128 --resume "$dir/vm.snap" "$guest"
expect 2 "made with another guest image" image $opts --resume "$dir/vm.snap" "$nosnap"
if [ "$chip" = kernel ]; then
	expect 2 "made with an in-kernel irqchip" irqchip $opts --irqchip user \
	    --resume "$dir/vm.snap" "$guest"
else
	expect 2 "made without an in-kernel irqchip" irqchip $opts --irqchip kernel \
	    --resume "$dir/vm.snap" "$guest"
fi

# Damaged files: status 2, the guest never runs.
size=$(stat -c %s "$dir/vm.snap")
cp "$dir/vm.snap" "$dir/bad.snap"
printf '\377' | dd of="$dir/bad.snap" bs=1 seek=$((size / 2)) conv=notrunc 2>/dev/null
expect 2 "corrupted" corrupt $opts --resume "$dir/bad.snap" "$guest"
cp "$dir/vm.snap" "$dir/bad.snap"
printf '\001' | dd of="$dir/bad.snap" bs=1 seek=$((size - 30)) conv=notrunc 2>/dev/null
expect 2 "corrupted" corrupt_vpmu $opts --resume "$dir/bad.snap" "$guest"
head -c $((size - 7)) "$dir/vm.snap" >"$dir/bad.snap"
expect 2 "truncated" truncated $opts --resume "$dir/bad.snap" "$guest"
head -c 100 "$dir/vm.snap" >"$dir/bad.snap"
expect 2 "not a vpmu-run snapshot" short $opts --resume "$dir/bad.snap" "$guest"
expect 2 "No such file" missing $opts --resume "$dir/none.snap" "$guest"
for f in corrupt corrupt_vpmu truncated short missing; do
	[ -s "$dir/$f.out" ] && fail "$f: the guest ran"
done
echo "snapshot.sh: ok"
exit 0
