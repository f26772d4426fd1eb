#!/bin/sh
# randprog_deterministic.sh RANDPROG DIR
#
# The generator of random guest programs (randprog.c) is a function of its
# seed: the same seed gives the same file, byte for byte, in a file and on
# standard output; different seeds give different programs; every program
# says it retires 2 000 to 20 000 instructions; a bad seed is refused
# (status 2).  And seed 1 gives the program it gave when the generator was
# last changed (its checksum below), whatever compiler built the generator:
# a seed named in a report must mean one program.  A change to randprog.c
# that changes its programs updates GOLDEN, with `randprog 1 | cksum`.
GOLDEN="1536390593 7641"
set -u
gen=$1
dir=$2
rm -rf "$dir" && mkdir -p "$dir" || exit 1
fail=0
for seed in 1 2 3 17 123456789 18446744073709551615; do
	"$gen" "$seed" "$dir/a.S" || { echo "FAIL: randprog $seed: status $?"; fail=1; }
	"$gen" "$seed" >"$dir/b.S" || { echo "FAIL: randprog $seed (stdout): status $?"; fail=1; }
	if ! cmp -s "$dir/a.S" "$dir/b.S"; then
		echo "FAIL: seed $seed: two runs differ"
		fail=1
	fi
	n=$(sed -n 's/^ \* One call of randprog_run: \([0-9]*\) instructions.*/\1/p' "$dir/a.S")
	if [ -z "$n" ] || [ "$n" -lt 2000 ] || [ "$n" -gt 20000 ]; then
		echo "FAIL: seed $seed: ${n:-no} instructions, not 2000 to 20000"
		fail=1
	fi
	grep -q "^randprog_expect_insns:" "$dir/a.S" ||
	    { echo "FAIL: seed $seed: no randprog_expect_insns"; fail=1; }
	cp "$dir/a.S" "$dir/seed-$seed.S"
	echo "seed $seed: $n instructions"
done
sum=$("$gen" 1 | cksum)
if [ "$sum" != "$GOLDEN" ]; then
	echo "FAIL: randprog 1 | cksum: $sum, want $GOLDEN (see the comment at the top)"
	fail=1
fi
set -- "$dir"/seed-*.S
for a in "$@"; do
	for b in "$@"; do
		if [ "$a" != "$b" ] && cmp -s "$a" "$b"; then
			echo "FAIL: $(basename "$a") and $(basename "$b") are the same program"
			fail=1
		fi
	done
done
for bad in "" x 12x; do
	"$gen" "$bad" >/dev/null 2>&1
	st=$?
	if [ $st -ne 2 ]; then
		echo "FAIL: randprog '$bad': status $st, want 2"
		fail=1
	fi
done
"$gen" >/dev/null 2>&1
[ $? -eq 2 ] || { echo "FAIL: randprog without a seed: not status 2"; fail=1; }
[ $fail -eq 0 ] && echo "randprog_deterministic: ok"
exit $fail
