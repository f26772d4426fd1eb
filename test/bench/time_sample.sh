#!/bin/sh
# time_sample.sh VPMUSTAT GUEST.elf [ROUNDS]
#
# The cost of time-based sampling (issue 30): the same guest (test/linux/
# rate.c, a `dec; jnz` loop at CPL 0) run by vpmustat with only a counting
# task-clock PMC (no sample, no kick), and with a sampling cpu-clock PMC
# beside it at 1 kHz (-n 1000000) and at 10 kHz (-n 100000), on the
# synthetic source, so nothing follows the guest and a sample costs what
# time sampling costs: the timer, the run ended by its signal, the exit,
# the registers, the sample into the ring and the log.  Rounds alternate
# the three runs so that a change in the host's load falls on all of them.
# Per run: the wall time vpmustat reports for the guest, the guest's run
# time (task-clock), the samples and the periods missed.  The result:
# the ratio of the sampled runs' wall time to the unsampled one's (goal
# <= 1.05 at 1 kHz), and the extra wall time per sample.
# Exit 77 where there is no usable /dev/kvm.
set -u
vs=$1 elf=$2 rounds=${3:-3}
tmp=$(mktemp -d) || exit 1
trap 'rm -rf "$tmp"' EXIT

# run NAME ARGS...: vpmustat's wall time, task-clock ns, samples and missed
# periods, one line appended to $tmp/NAME.
run() {
	name=$1
	shift
	VPMU_SKIP_NO_KVM=1 "$vs" --source synthetic "$@" -s task-clock -w 0 -O "$tmp/log" \
	    -o "$tmp/out" "$elf" >/dev/null 2>"$tmp/err"
	st=$?
	[ $st -eq 77 ] && { cat "$tmp/err"; echo "time_sample.sh: skipped"; exit 77; }
	[ $st -eq 0 ] || { cat "$tmp/err"; echo "time_sample.sh: $name: status $st"; exit 1; }
	line=$(grep "^vpmustat: the guest exited" "$tmp/err")
	wall=$(echo "$line" | sed -n 's/.* after \([0-9.]*\) s.*/\1/p')
	smp=$(echo "$line" | sed -n 's/.*; \([0-9]*\) samples,.*/\1/p')
	mis=$(echo "$line" | sed -n 's/.*; \([0-9]*\) time periods* without.*/\1/p')
	tc=$(sed -n 's/^  s\/00\/task-clock  *\([0-9]*\)$/\1/p' "$tmp/out")
	echo "$wall ${tc:-0} ${smp:-0} ${mis:-0}" >>"$tmp/$name"
}

r=1
while [ $r -le "$rounds" ]; do
	run none
	run 1khz -S cpu-clock -n 1000000
	run 10khz -S cpu-clock -n 100000
	r=$((r + 1))
done

# The median of column c of file f.
median() {
	awk -v c="$2" '{ print $c }' "$1" | sort -g | awk '{ v[NR] = $1 }
	    END { print (NR % 2) ? v[(NR + 1) / 2] : (v[NR / 2] + v[NR / 2 + 1]) / 2 }'
}

printf "%-8s %9s %12s %8s %7s %7s %14s\n" run "wall s" "run time s" samples missed ratio \
    "us per sample"
w0=$(median "$tmp/none" 1)
for n in none 1khz 10khz; do
	w=$(median "$tmp/$n" 1)
	tc=$(median "$tmp/$n" 2)
	s=$(median "$tmp/$n" 3)
	m=$(median "$tmp/$n" 4)
	awk -v n="$n" -v w="$w" -v w0="$w0" -v tc="$tc" -v s="$s" -v m="$m" 'BEGIN {
	    per = s > 0 ? sprintf("%.1f", (w - w0) * 1e6 / s) : "-";
	    printf "%-8s %9.3f %12.3f %8d %7d %7.3f %14s\n", n, w, tc / 1e9, s, m, w / w0, per }'
done
echo "(medians of $rounds rounds; wall time as vpmustat reports the guest's run)"
