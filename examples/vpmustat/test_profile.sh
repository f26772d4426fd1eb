#!/bin/sh
# test_profile.sh VPMUSTAT HOT.elf WORKDIR
#
# vpmustat samples the hot-function guest (examples/guests/hot.c) on
# instructions with the exact source, then reads its log back:
#   - the run: exit 0, the guest's "hot: done" on the console
#   - the log, record for record (--dump): INITIALIZE first, CLOSELOG last,
#     as many records as the report counts, one CALLCHAIN per sample
#   - hot() has 90 % +- 1 % of the samples (self), work() 100 % (total)
#   - the folded stacks sum to the sample count and hold main;work;hot
#   - the SVG is an <svg> document naming hot
#   - the run's --perf-script and --pprof, read by test_formats.awk (and
#     protoc with pprof.proto): the stacks and counts of the run's
#     --folded, the period -n (1000) in each header and in the profile,
#     events = samples x 1000; -R's --perf-script of the log the same text
#     but the period, which the log does not hold
#   - the log names the image (MAP_IN, its file hash: hot.elf has no
#     build-id); -R --elf of another ELF (vpmustat itself) is refused, 2
# Exit 77 (skip) where vpmustat finds no usable /dev/kvm (VPMU_SKIP_NO_KVM=1).
set -u
vs=$1 elf=$2 dir=$3
src=$(dirname "$0")

fail() {
	echo "test_profile.sh: FAIL: $*"
	exit 1
}

rm -rf "$dir" && mkdir -p "$dir" || exit 1
"$vs" -S instructions -n 1000 -O "$dir/hot.log" -o "$dir/live.txt" \
    --svg "$dir/live.svg" --folded "$dir/live.folded" --perf-script "$dir/live.perf" \
    --pprof "$dir/live.pb.gz" "$elf" >"$dir/console.txt" 2>"$dir/stderr.txt"
st=$?
cat "$dir/stderr.txt" "$dir/live.txt" 2>/dev/null
[ $st -eq 77 ] && { echo "test_profile.sh: skipped (no usable /dev/kvm)"; exit 77; }
[ $st -eq 0 ] || fail "the run exited $st"
grep -q "^hot: done" "$dir/console.txt" || fail "no 'hot: done' from the guest"
grep -q "<svg" "$dir/live.svg" || fail "the run's --svg is no SVG"

"$vs" -R "$dir/hot.log" --elf "$elf" --dump --folded "$dir/hot.folded" \
    --svg "$dir/hot.svg" -G "$dir/hot.graph" >"$dir/read.txt" ||
	fail "vpmustat -R exited $?"
grep -v '^0x' "$dir/read.txt"

# The records, in order.
awk '/^0x[0-9a-f]+ / { n++; t[n] = $2 }
     END { if (n == 0 || t[1] != "INITIALIZE" || t[n] != "CLOSELOG") exit 1 }' \
    "$dir/read.txt" || fail "the log does not go from INITIALIZE to CLOSELOG"
records=$(grep -c '^0x' "$dir/read.txt")
said=$(sed -n 's/^vpmustat: \([0-9]*\) records.*/\1/p' "$dir/read.txt")
[ "$records" = "$said" ] || fail "$records records dumped, the report says $said"
callchains=$(grep -c '^0x[0-9a-f]* CALLCHAIN ' "$dir/read.txt")
samples=$(sed -n 's/^event instructions: \([0-9]*\) samples.*/\1/p' "$dir/read.txt")
[ -n "$samples" ] && [ "$samples" -ge 500 ] || fail "too few samples: '$samples'"
[ "$callchains" = "$samples" ] || fail "$callchains CALLCHAIN records, $samples samples"

# The profile: hot 90 % +- 1 %, work on every stack.
awk '$NF == "hot" && NF == 5 { found = 1; if ($1 < 89.0 || $1 > 91.0) exit 1 }
     END { if (!found) exit 1 }' "$dir/read.txt" ||
	fail "hot() does not have 90 % +- 1 % of the samples"
awk '$NF == "work" && NF == 5 { found = 1; if ($3 != "100.00") exit 1 }
     END { if (!found) exit 1 }' "$dir/read.txt" ||
	fail "work() is not on every stack"
awk '/^ *self%/ { getline; top = $NF } END { if (top != "hot") exit 1 }' \
    "$dir/read.txt" || fail "hot is not the report's top function"

# Folded stacks: the counts sum to the samples.
sum=$(awk '{ s += $NF } END { print s + 0 }' "$dir/hot.folded")
[ "$sum" = "$samples" ] || fail "folded stacks sum to $sum, not $samples"
grep -q "main;work;hot [0-9]*$" "$dir/hot.folded" || fail "no main;work;hot stack"
grep -q "^work  total" "$dir/hot.graph" || fail "no work() in the call graph"
grep -q -- "-> hot " "$dir/hot.graph" || fail "no work -> hot in the call graph"

# The flame graph.
grep -q "<svg" "$dir/hot.svg" || fail "no <svg in the flame graph"
grep -q ">hot" "$dir/hot.svg" || fail "the flame graph does not name hot"
grep -q "<title>hot " "$dir/hot.svg" || fail "the flame graph has no tooltip for hot"
# The run's other formats: the same stacks as its --folded.
sort "$dir/live.folded" >"$dir/live.stacks"
n=$(awk '{ s += $NF } END { print s + 0 }' "$dir/live.folded")
awk -v fmt=perf -f "$src/test_formats.awk" "$dir/live.perf" | sort >"$dir/perf.stacks"
{ cat "$dir/live.stacks"; echo "samples $n"; } | sort | cmp -s - "$dir/perf.stacks" ||
	fail "--perf-script: not the stacks of --folded"
bad=$(grep -v '^	' "$dir/live.perf" | grep -v '^$' |
    grep -cv '^hot\.elf 0/0 \[000\] [0-9]*\.[0-9]\{6\}: 1000 instructions:$')
[ "$bad" = 0 ] || fail "--perf-script: $bad header lines without the period 1000"
if command -v protoc >/dev/null; then
	gzip -dc "$dir/live.pb.gz" | protoc -I "$src" --decode=vpmustat_test.Profile \
	    "$src/pprof.proto" >"$dir/live.pb.txt" || fail "--pprof: protoc --decode"
	awk -v fmt=pprof -f "$src/test_formats.awk" "$dir/live.pb.txt" | sort >"$dir/pb.got"
	{
		cat "$dir/live.stacks"
		echo "types samples/count instructions/count"
		echo "sum 1 $n"
		echo "sum 2 $((n * 1000))"
		echo "period 1000"
		echo "file $elf"
	} | sort | cmp -s - "$dir/pb.got" || {
		cat "$dir/pb.got"
		fail "--pprof: not the stacks, sums and period of the run"
	}
else
	fail "no protoc (cmake/deps.sh installs protobuf-compiler)"
fi
"$vs" -R "$dir/hot.log" --elf "$elf" --perf-script - -q >"$dir/read.perf" ||
	fail "-R --perf-script exited $?"
sed 's/: 1000 instructions:$/: instructions:/' "$dir/live.perf" | cmp -s - "$dir/read.perf" ||
	fail "-R's --perf-script is not the run's but the period"
# The image: named by its absolute path; another ELF refused.
abs=$(cd "$(dirname "$elf")" && pwd)/$(basename "$elf")
grep -Eqx "vpmustat: the samples are of $abs, at 0x[0-9a-f]+, file hash [0-9a-f]{16}" \
    "$dir/read.txt" || fail "the report does not name the image $abs"
grep -Eq "^0x[0-9a-f]+ MAP_IN .* pid=-1 start=0x[0-9a-f]+ path=\"$abs\"$" "$dir/read.txt" ||
	fail "no MAP_IN of $abs"
"$vs" -R "$dir/hot.log" --elf "$vs" >"$dir/other.out" 2>"$dir/other.err"
[ $? -eq 2 ] || fail "-R --elf of another ELF: status not 2"
grep -q "^vpmustat: --elf $vs is not the image the samples belong to: the log's is $abs (file hash " \
    "$dir/other.err" || fail "-R --elf of another ELF: $(cat "$dir/other.err")"
[ -s "$dir/other.out" ] && fail "-R --elf of another ELF: a report"
echo "test_profile.sh: ok: $samples samples, $records records"
exit 0
