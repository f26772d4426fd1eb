#!/bin/sh
# linuxtasks.sh VPMUSTAT LINUXTASKS.elf WORKDIR
#
# vpmustat --guest-symbols names the Linux task of each sample
# (test/guests/linuxtasks.c: per-CPU current task, task_structs, BTF).
# The System.map is the ELF's nm -n moved to ALIAS - 2 MiB (a slide of
# 0x200000, as kaslr.sh), with current_task at the per-CPU offset 0x40 and
# __start_BTF / __stop_BTF around btf_blob.  Every sample's leaf function
# must go with its task in perf script's text, exactly:
#   alpha_hot   alpha 100/100        worker_hot  alpha-worker 100/101
#   gamma_hot   gamma 200/200        (read through IA32_KERNEL_GS_BASE)
#   pre_hot     the address space: pid = tid = 2^31 + CR3's frame, comm
#               "cr3:0x..." (before LSTAR and the per-CPU area exist)
#   orc_leaf    alpha, its chain unwound by the ORC tables of orcframes.S
# each with samples; the log names each task once (THR_CREATE), -R groups
# the samples by process, and the run's end says how many were named.
# Exit 77 (skip) where vpmustat finds no usable /dev/kvm.
set -u
vs=$1 elf=$2 dir=$3
fail() { echo "linuxtasks.sh: FAIL: $*"; exit 1; }
rm -rf "$dir" && mkdir -p "$dir" || exit 1
command -v nm >/dev/null || { echo "linuxtasks.sh: skipped (no nm)"; exit 77; }
. "$(dirname "$0")/linuxlib.sh"
MOVED=$((-0x8000000000 - 0x200000))	# ALIAS - 2 MiB: the map's addresses
{ guest_map "$elf" $MOVED; printf '0000000000000040 D current_task\n'; } | sort >"$dir/System.map"
grep -q ' R __stop_BTF$' "$dir/System.map" || fail "no btf_blob in $elf"

profile t "$elf" --guest-symbols "$dir/System.map"
for f in alpha_hot worker_hot gamma_hot; do
	n=$(awk -v f=$f '$2 == f' "$dir/t.combos" | wc -l)
	[ "$n" -eq 1 ] || fail "$f: samples under $n task identities, want 1"
done
grep -Eq '^ *[0-9]+ alpha_hot alpha 100/100$' "$dir/t.combos" || fail "alpha_hot: not alpha 100/100"
grep -Eq '^ *[0-9]+ worker_hot alpha-worker 100/101$' "$dir/t.combos" ||
	fail "worker_hot: not alpha-worker 100/101"
grep -Eq '^ *[0-9]+ gamma_hot gamma 200/200$' "$dir/t.combos" || fail "gamma_hot: not gamma 200/200"
grep -Eq '^ *[0-9]+ orc_leaf alpha 100/100$' "$dir/t.combos" || fail "orc_leaf: not alpha 100/100"
# pre_hot runs before the tasks exist (at its ELF address, which the map
# does not name): its samples, and any other unnamed, name one address space.
n=$(awk '/^[^\t]/ && $1 ~ /^cr3:0x/ { print $1, $2 }' "$dir/t.perf" | sort -u | wc -l)
[ "$n" -eq 1 ] || fail "unnamed samples under $n address spaces, want 1"
set -- $(awk '/^[^\t]/ && $1 ~ /^cr3:0x/ { print $1, $2; exit }' "$dir/t.perf")
frame=$(printf '%d' "${1#cr3:}")
want=$(( (1 << 31) + frame / 4096 ))
[ "$2" = "$want/$want" ] || fail "address space $1: pid/tid $2, want $want/$want"

# The log: one THR_CREATE per task, each before the task's first sample.
"$vs" -R "$dir/t.log" --dump >"$dir/dump.txt" 2>&1 || fail "-R --dump exited $?"
for t in "tid=100 pid=100" "tid=101 pid=100" "tid=200 pid=200"; do
	n=$(grep -c "THR_CREATE.* $t " "$dir/dump.txt")
	[ "$n" -eq 1 ] || fail "$n THR_CREATE records with $t, want 1"
done
# -R groups by process: alpha (its two threads) and gamma, by name and pid.
"$vs" -R "$dir/t.log" --guest-symbols "$dir/System.map" >"$dir/r.out" 2>&1 || fail "-R exited $?"
sed -n '/by process/,/self%/p' "$dir/r.out"
grep -Eq '^ +[0-9.]+ +[0-9]+  alpha\[100\]$' "$dir/r.out" || fail "-R: no alpha[100] row"
grep -Eq '^ +[0-9.]+ +[0-9]+  gamma\[200\]$' "$dir/r.out" || fail "-R: no gamma[200] row"
grep -Eq '^ +[0-9.]+ +[0-9]+      alpha_hot$' "$dir/r.out" || fail "-R: alpha_hot not under a process"
# The folded stacks (and the flame graph) stand each chain on its process.
"$vs" -R "$dir/t.log" --guest-symbols "$dir/System.map" --folded "$dir/f.txt" -q ||
	fail "-R --folded exited $?"
grep -qx 'alpha\[100\];worker_hot [0-9]*' "$dir/f.txt" || fail "folded: no alpha[100];worker_hot"
grep -qx 'gamma\[200\];gamma_hot [0-9]*' "$dir/f.txt" || fail "folded: no gamma[200];gamma_hot"
grep -v '^alpha\[100\];\|^gamma\[200\];\|^cr3:0x[0-9a-f]*;' "$dir/f.txt" && fail "folded: a chain on no process"
# ORC (orcframes.S): every sample in orc_leaf, whose RBP is no frame
# pointer, unwinds through orc_middle and orc_outer to the return address
# in main (at its ELF address, in the lower half: the folded stacks cut a
# kernel chain there; the log keeps it, the chain's fourth address).
grep -qx 'alpha\[100\];orc_outer;orc_middle;orc_leaf [0-9]*' "$dir/f.txt" ||
	fail "folded: no orc_leaf chain unwound by ORC"
grep 'orc_leaf' "$dir/f.txt" | grep -vx 'alpha\[100\];orc_outer;orc_middle;orc_leaf [0-9]*' &&
	fail "folded: an orc_leaf chain not unwound by ORC"
nleaf=$(awk '$2 == "orc_leaf" { print $1 }' "$dir/t.combos")
n4=$(grep -c 'CALLCHAIN.* npc=4 ' "$dir/dump.txt")
[ "$n4" -eq "$nleaf" ] || fail "$n4 chains of 4 addresses in the log, want $nleaf (orc_leaf's samples)"
grep -qx "vpmustat: kernel call chains unwound by the kernel's ORC tables (12 entries, the format of Linux before 6.3)" \
    "$dir/t.err" || fail "the run does not say its chains came from ORC"
# pprof: each sample labelled with its pid and its process's name.
if command -v protoc >/dev/null; then
	src=$(cd "$(dirname "$0")/../../examples/vpmustat" && pwd)
	"$vs" -R "$dir/t.log" --guest-symbols "$dir/System.map" --pprof "$dir/p.pb.gz" -q ||
		fail "-R --pprof exited $?"
	gzip -dc "$dir/p.pb.gz" | protoc --decode=vpmustat_test.Profile -I "$src" \
	    "$src/pprof.proto" >"$dir/p.txt" || fail "--pprof: protoc --decode"
	# (value, pid label, process label's string) of each sample
	awk '/^sample \{/ { v = ""; pid = ""; proc = "" }
	     /^  value:/ { v = $2 }
	     /^    key:/ { key = $2 } /^    num:/ { pid = $2 } /^    str:/ { proc = $2 }
	     /^}/ && v != "" { print v, pid, proc; v = "" }' "$dir/p.txt" >"$dir/p.samples"
	gzip -dc "$dir/p.pb.gz" | protoc --decode=vpmustat_test.Profile -I "$src" \
	    "$src/pprof.proto" | sed -n 's/^string_table: //p' >"$dir/p.strings"
	total=$(awk -v want=100 '$2 == want { n += $1 } END { print n + 0 }' "$dir/p.samples")
	want=$(grep -E '^ +[0-9]+ [a-z_]+ alpha(-worker)? 100/' "$dir/t.combos" | awk '{ n += $1 } END { print n + 0 }')
	[ "$total" -eq "$want" ] || fail "pprof: $total samples labelled pid 100, want $want"
	grep -qx '"alpha\[100\]"' "$dir/p.strings" || fail "pprof: no process label alpha[100]"
fi
# The run's end: the count of named samples and why the rest were not.
named=$(awk '$3 !~ /^cr3:/' "$dir/t.combos" | awk '{ n += $1 } END { print n + 0 }')
grep -Eq "^vpmustat: guest tasks: $named samples named their task, [0-9]+ their address space: LSTAR 0 is not entry_SYSCALL_64 .+$" \
    "$dir/t.err" || fail "the run's end does not say $named samples were named"
# A damaged BTF (the map's __stop_BTF 8 bytes short: the string section cut)
# names no task: every sample names the address space, and the run says why.
set -- $(nm -S "$elf" | awk '$4 == "btf_blob" { print $1, $2 }')
grep -v ' R __stop_BTF$' "$dir/System.map" >"$dir/bad.map"
printf '%s R __stop_BTF\n' "$(at "$1" $((MOVED + 0x$2 - 8)))" >>"$dir/bad.map"
sort -o "$dir/bad.map" "$dir/bad.map"
profile bad "$elf" --guest-symbols "$dir/bad.map" >/dev/null
grep -E '^vpmustat: guest tasks: 0 samples named their task, [0-9]+ their address space: the kernel.s BTF: its sections .* do not fit its [0-9]+ bytes$' \
    "$dir/bad.err" || fail "damaged BTF: not said: $(grep 'guest tasks' "$dir/bad.err")"
awk '/^[^\t]/ && $1 !~ /^cr3:0x/' "$dir/bad.perf" | grep -q . && fail "damaged BTF: a sample names a task"
echo "linuxtasks.sh: ok"
