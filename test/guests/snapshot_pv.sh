#!/bin/sh
# snapshot_pv.sh VPMU_RUN GUEST GUEST_NOSNAP FBSD_PMCLOG DIR -- hwpmc state and a
# guest log across --snapshot / --resume (test/guests/snapshot_pv.c): the
# resumed guest reads the exact count the uninterrupted one does; each run's
# log is a whole pmclog (checked by the independent reader), the first with
# the cookie written before the snapshot, the second with the one after.
set -u
run=$1 guest=$2 nosnap=$3 reader=$4 dir=$5
opts="--source exact -q"
rm -rf "$dir" && mkdir -p "$dir" || exit 1
fail() { echo "snapshot_pv.sh: FAIL: $*"; cat "$dir"/*.out "$dir"/*.err 2>/dev/null; exit 1; }
step() {
	name=$1 want=$2
	shift 2
	"$run" "$@" >"$dir/$name.out" 2>"$dir/$name.err"
	got=$?
	[ "$got" -eq 77 ] && { cat "$dir/$name.out"; exit 77; }
	[ "$got" -eq "$want" ] || fail "$name: status $got, want $want"
}
step ref 0 $opts --guest-log 3="$dir/ref.log" "$nosnap"
step save 0 $opts --guest-log 3="$dir/a.log" --snapshot "$dir/vm.snap" "$guest"
step resume 0 $opts --guest-log 3="$dir/b.log" --resume "$dir/vm.snap" "$guest"
cat "$dir/resume.out"
cmp -s "$dir/ref.out" "$dir/resume.out" || fail "the resumed output differs from the uninterrupted one"
grep -q "^snapshot pv: 15004 instructions (want 15004)$" "$dir/resume.out" || fail "not exact"
for l in ref a b; do
	"$reader" "$dir/$l.log" >"$dir/$l.rec" || fail "$l.log is not a whole pmclog"
done
[ "$(grep -c USERDATA "$dir/ref.rec")" -eq 2 ] || fail "ref.log: want 2 USERDATA records"
[ "$(grep -c USERDATA "$dir/a.rec")" -eq 1 ] || fail "a.log: want the cookie before the snapshot"
[ "$(grep -c USERDATA "$dir/b.rec")" -eq 1 ] || fail "b.log: want the cookie after the snapshot"
# Without the log descriptor the snapshot was made with: refused, status 2.
step nolog 2 $opts --resume "$dir/vm.snap" "$guest"
grep -q "log descriptor" "$dir/nolog.err" || fail "nolog: no word of the log descriptor"
echo "snapshot_pv.sh: ok"
