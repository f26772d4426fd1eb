#!/bin/sh
# marks.sh VPMU_RUN MARKS.elf -- vpmu-run's port 0xf6 (marks.c).
#
# MARKS.elf takes mark 1, sets PMC0 (counting OS instructions) to 0x123456,
# runs 2 x 1000 + 4 more instructions and takes mark 2 (marks.c of the
# guests).  With the exact source, in both modes, the report's marks must
# list IA32_PMC0 at marks 1 and 2 with counted values 2008 apart, exactly,
# though the guest wrote the counter in between.  Exit 77 (skip) when
# vpmu-run finds no usable /dev/kvm.
[ $# -eq 2 ] || { echo "usage: marks.sh VPMU_RUN MARKS.elf" >&2; exit 2; }
fail=0
for m in step block; do
	out=$(VPMU_SKIP_NO_KVM=1 timeout 60 "$1" --source exact --exact-mode $m "$2" 2>&1)
	st=$?
	echo "== $m"
	echo "$out"
	[ $st -eq 77 ] && { echo "skipped (status 77)"; exit 77; }
	[ $st -eq 0 ] || { echo "FAIL: $m: status $st"; fail=1; continue; }
	echo "$out" | grep -q '^marks (port 0xf6): 2 taken, 0 dropped$' ||
	    { echo "FAIL: $m: the report does not have 2 marks"; fail=1; }
	d=$(echo "$out" | awk '$1 ~ /^[12]$/ && $2 == 0 && $3 == "IA32_PMC0" && $4 == "instructions" {
		c[$1] = $5 } END { if ((1 in c) && (2 in c)) print c[2] - c[1] }')
	if [ "$d" = 2008 ]; then
		echo "($m: PMC0 counted 2008 between the marks)"
	else
		echo "FAIL: $m: PMC0 counted '$d' between the marks, want 2008"
		fail=1
	fi
done
[ $fail -eq 0 ] && echo "marks: ok"
exit $fail
