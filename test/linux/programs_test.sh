#!/bin/sh
# programs_test.sh WORKDIR: the linux demo's guest programs (loop.c, hot.c,
# vpmu-exit.c), built as mkinitramfs.sh builds them, run natively here with
# their exact output and status checked (ctest linux_guest_programs).
# vpmu-exit runs only with -n: its port write is for vpmu-run alone.
SRC=$(cd "$(dirname "$0")" && pwd) || exit 1
[ $# -eq 1 ] || { echo "usage: programs_test.sh WORKDIR" >&2; exit 2; }
W=$1
mkdir -p "$W" || exit 1
for p in loop hot vpmu-exit; do
	if ! cc -static -O2 -Wall -Wextra -Werror -o "$W/$p" "$SRC/$p.c" 2>"$W/$p.err"; then
		cat "$W/$p.err"
		if grep -q 'cannot find -lc' "$W/$p.err"; then
			echo "programs_test: skipped: no static libc (libc6-dev)"
			exit 77
		fi
		echo "FAIL cc -static $p.c"
		exit 1
	fi
done
bad=0
# run WANT_STATUS WANT_STDOUT CMD...: CMD exits WANT_STATUS, prints WANT_STDOUT.
run() {
	ws=$1 wo=$2
	shift 2
	o=$("$@" 2>/dev/null)
	s=$?
	if [ "$s" = "$ws" ] && [ "$o" = "$wo" ]; then
		echo "ok   $* -> $s '$o'"
	else
		echo "FAIL $*: status $s output '$o', want $ws '$wo'"
		bad=$((bad + 1))
	fi
}
run 0 "" "$W/loop" 1000
run 0 "" "$W/loop" 1
run 2 "" "$W/loop"
run 2 "" "$W/loop" 0
run 2 "" "$W/loop" 12x
run 0 "hot: 0x652cf958c2958ad6" "$W/hot"
run 0 "vpmu-exit: would write 0x5 to port 0xf4" "$W/vpmu-exit" -n 5
run 0 "vpmu-exit: would write 0xffffffff to port 0xf4" "$W/vpmu-exit" -n 4294967295
run 2 "" "$W/vpmu-exit"
run 2 "" "$W/vpmu-exit" -n 4294967296
run 2 "" "$W/vpmu-exit" x
run 0 "vpmu-exit: would write 0x3 to port 0xf6" "$W/vpmu-exit" -n -m 3
run 2 "" "$W/vpmu-exit" -m
run 2 "" "$W/vpmu-exit" -m -n 3
run 2 "" "$W/vpmu-exit" -n -m 3 4

# loop's hot part is exactly "dec REG; jne back to the dec": 2 instructions
# and 1 branch per iteration.
body=$(objdump -d --no-show-raw-insn "$W/loop" | awk '
	/<main>:/ { on = 1; next }
	on && /^$/ { exit }
	on { sub(/^ +/, ""); addr = $1; sub(/:$/, "", addr)
	     if ($2 == "dec") { dec = addr; reg = $3; next }
	     if (dec != "" && $2 ~ /^(jne|jnz)$/ && $3 == dec) { print "dec " reg "; " $2 " " $3; exit }
	     dec = "" }')
case $body in
"dec %"*"; jne "*) echo "ok   loop body: $body" ;;
*) echo "FAIL loop body: no 'dec; jne' pair in main (got '$body')"; bad=$((bad + 1)) ;;
esac
# hot() is a real function of hot, for perf report's "[.] hot".
if nm "$W/hot" | grep -q ' T hot$'; then echo "ok   hot has the symbol hot"; else
	echo "FAIL hot has no symbol hot"; bad=$((bad + 1)); fi

[ $bad -eq 0 ] || { echo "programs_test: $bad failed"; exit 1; }
echo "programs_test: all passed"
