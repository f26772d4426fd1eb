#!/bin/sh
# indep_reader.sh VPMUSTAT HOT.elf FBSD_PMCLOG WORKDIR
#
# Issue 5's "done when": vpmustat samples the hot-function guest, and
# fbsd_pmclog (a reader written from the FreeBSD format description alone,
# no libvpmu code) parses the log record for record.  Its records --
# offset, type, timestamp, and for each CALLCHAIN the addresses -- must be
# exactly the ones vpmustat -R --dump (the library's reader) lists, and at
# least 1000 of them CALLCHAINs.
# Exit 77 (skip) where vpmustat finds no usable /dev/kvm.
set -u
vs=$1 elf=$2 rd=$3 dir=$4
fail() { echo "indep_reader.sh: FAIL: $*"; exit 1; }
rm -rf "$dir" && mkdir -p "$dir" || exit 1
VPMU_SKIP_NO_KVM=1 "$vs" -S instructions,branches -n 1009 -O "$dir/hot.log" "$elf" \
    >"$dir/console.txt" 2>"$dir/stderr.txt"
st=$?
[ $st -eq 77 ] && { cat "$dir/stderr.txt"; echo "indep_reader.sh: skipped (no usable /dev/kvm)"; exit 77; }
[ $st -eq 0 ] || { cat "$dir/stderr.txt"; fail "vpmustat exited $st"; }
"$rd" "$dir/hot.log" >"$dir/indep.txt" || fail "fbsd_pmclog rejects the log (status $?)"
"$vs" -R "$dir/hot.log" --dump >"$dir/dump.txt" || fail "vpmustat -R exited $?"
# The dump's lines in fbsd_pmclog's form: symbols ([...]) and other fields dropped.
sed -n 's/^\(0x[0-9a-f]*\) *\([A-Z_]*\) *\(tsc=[0-9]*\).*\( npc=[0-9]*\) pc=\(.*\)$/\1 \2 \3\4 pc=\5/p;
        /CALLCHAIN/!s/^\(0x[0-9a-f]*\) *\([A-Z_]*\) *\(tsc=[0-9]*\).*$/\1 \2 \3/p' "$dir/dump.txt" |
    sed 's/\[[^]]*\]//g' >"$dir/lib.txt"
cmp -s "$dir/indep.txt" "$dir/lib.txt" || {
	diff "$dir/indep.txt" "$dir/lib.txt" | head -20
	fail "the two readers disagree"
}
records=$(wc -l <"$dir/indep.txt")
cc=$(grep -c ' CALLCHAIN ' "$dir/indep.txt")
[ "$cc" -ge 1000 ] || fail "only $cc CALLCHAIN records"
echo "indep_reader.sh: $records records, $cc CALLCHAIN, read alike by both readers"
