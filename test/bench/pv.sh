#!/bin/sh
# pv.sh VPMU_RUN SPIN_ELF EXACT_ELF -- the paravirtual channel's figures
# (issue 6): round trips against a null port exit, the fast-read page's cost
# per read and its update gaps at two refresh rates, and the instructions
# of one read (exact source).  test/pv/fastpage_spin.c and fastpage_exact.c
# are the guests; README.md ("Paravirtual channel and fast-read page") has
# the figures.
[ $# -eq 3 ] || { echo "usage: pv.sh VPMU_RUN SPIN_ELF EXACT_ELF" >&2; exit 2; }
run=$1 spin=$2 exact=$3
for hz in 1000 10000; do
	echo "== --source perf --fastpage-hz $hz"
	"$run" -q --source perf --uncounted allow --fastpage-hz "$hz" "$spin" || exit 1
done
echo "== --source exact"
"$run" -q --source exact --fastpage-hz 0 "$exact" | grep instructions
