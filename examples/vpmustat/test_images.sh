#!/bin/sh
# test_images.sh VPMUSTAT VPMU_RUN MB.elf MB.bin MB_MODULE HELLO.elf HELLO.bzImage
#     SPIN.elf SPIN.bzImage DIR CASE
#
# vpmustat boots every image kind vpmu-run boots, with vpmu-run's run
# options (runopts.c, setup.c).  The exact source makes the counts known:
#   mb_count   the Multiboot guest (test/guests/multiboot_guest.S), ELF32
#              with --append and --initrd, and the a.out kludge build:
#              status 33, the guest's line with the command line and the
#              module, exactly 4518 and 4074 instructions
#   mb_sample  the a.out build sampled every 1000 instructions: exactly 4
#              samples, status 33
#   bz_count   hello.c wrapped as a bzImage (mkbzimage) with --initrd and
#              --append: the guest's lines, exactly as many instructions as
#              the same ELF booted by the boot protocol (8019 with gcc 12)
#   bz_sample  the bzImage sampled every 1000 instructions into -O LOG:
#              exactly the ELF's count / 1000 samples; the log read back
#              with -R --elf HELLO.elf names every sample (the bzImage's
#              kernel is that ELF), some in format()
#   timeout    spin.c as a bzImage, which never exits, --timeout 1: status
#              124 after 1 s, the message, the counts and the report still
#              written, the log whole (-R reads it to CLOSELOG)
#   sigterm    spin.c (boot protocol), SIGTERM once it spins: status 143,
#              the message, the counts written
# Exit 77 (skip) where vpmustat finds no usable /dev/kvm (VPMU_SKIP_NO_KVM=1).
set -u
[ $# -eq 11 ] || { echo "usage: test_images.sh VPMUSTAT VPMU_RUN MB.elf MB.bin MB_MODULE HELLO.elf HELLO.bzImage SPIN.elf SPIN.bzImage DIR CASE" >&2; exit 2; }
vs=$1 run=$2 mbelf=$3 mbbin=$4 mod=$5 hello=$6 hellobz=$7 spin=$8 spinbz=$9
shift 9
dir=$1/$2 case=$2

fail() {
	echo "test_images.sh: $case: FAIL: $*"
	exit 1
}

# vs NAME ARGS: vpmustat, standard output in NAME.out, standard error in
# NAME.err (shown); its status in $st; a skip on 77.
vs() {
	name=$1
	shift
	VPMU_SKIP_NO_KVM=1 "$vs" "$@" >"$dir/$name.out" 2>"$dir/$name.err"
	st=$?
	cat "$dir/$name.err"
	[ $st -eq 77 ] && { echo "test_images.sh: skipped (no usable /dev/kvm)"; exit 77; }
	return 0
}

# total NAME LABEL: the total of LABEL in NAME.err
total() {
	awk -v l="$2" '$1 == l && NF == 2 { print $2 }' "$dir/$1.err"
}

rm -rf "$dir" && mkdir -p "$dir" || exit 1
case $case in
mb_count)
	vs elf -s instructions -w 0 --append "hello world" --initrd "$mod" "$mbelf"
	[ $st -eq 33 ] || fail "ELF32: status $st, want 33"
	grep -q "^mb: eax 2badb002 .* cmd <hello world> mods 00000001 .* mod <KEY=value|N=2|> " \
	    "$dir/elf.out" || fail "ELF32: not the guest's line with --append and --initrd"
	[ "$(total elf s/00/instructions)" = 4518 ] || fail "ELF32: not 4518 instructions"
	vs aout -s instructions -w 0 "$mbbin"
	[ $st -eq 33 ] || fail "a.out: status $st, want 33"
	grep -q "^mb: eax 2badb002 .* cmd <> mods 00000000 " "$dir/aout.out" ||
		fail "a.out: not the guest's line"
	[ "$(total aout s/00/instructions)" = 4074 ] || fail "a.out: not 4074 instructions"
	;;
mb_sample)
	vs s -S instructions -n 1000 "$mbbin"
	[ $st -eq 33 ] || fail "status $st, want 33"
	grep -qx "event instructions: 4 samples (0 in user mode)" "$dir/s.err" ||
		fail "not 4 samples"
	;;
bz_count)
	# The ELF's own count first: the guest is C, so the count is the
	# compiler's (8019 with gcc 12, 7454 with clang 14); the bzImage
	# must retire exactly as many.
	vs elf -s instructions -w 0 "$hello"
	[ $st -eq 0 ] || fail "the ELF: status $st, want 0"
	n=$(total elf s/00/instructions)
	[ "${n:-0}" -gt 1000 ] || fail "the ELF: $n instructions"
	vs bz -s instructions -w 0 --initrd "$mod" --append "quiet" "$hellobz"
	[ $st -eq 0 ] || fail "status $st, want 0"
	grep -qx "hello from vCPU 0" "$dir/bz.out" || fail "no hello"
	grep -qx "snprintf: <truncat> 11" "$dir/bz.out" || fail "no snprintf line"
	[ "$(total bz s/00/instructions)" = "$n" ] || fail "not $n instructions, as the ELF"
	;;
bz_sample)
	vs elf -s instructions -w 0 "$hello"
	[ $st -eq 0 ] || fail "the ELF: status $st, want 0"
	k=$(($(total elf s/00/instructions) / 1000))
	vs s -S instructions -n 1000 -O "$dir/bz.log" "$hellobz"
	[ $st -eq 0 ] || fail "status $st, want 0"
	grep -qx "event instructions: $k samples (0 in user mode)" "$dir/s.err" ||
		fail "not $k samples (the ELF's count / 1000)"
	"$vs" -R "$dir/bz.log" --elf "$hello" >"$dir/r.out" 2>"$dir/r.err"
	st=$?
	cat "$dir/r.out" "$dir/r.err"
	[ $st -eq 0 ] || fail "-R: status $st"
	grep -qx "event instructions: $k samples (0 in user mode)" "$dir/r.out" ||
		fail "-R: not $k samples"
	# The bzImage's kernel is that ELF: --elf names every sample (gcc 12:
	# 6 in the runtime's format(), 2 in emit_padded()).
	named=$(awk '/^    self%/ { t = 1; next } /^  hottest/ { t = 0 }
	    t && NF == 5 && $5 !~ /^0x/ { s += $2 } END { print s + 0 }' "$dir/r.out")
	[ "$named" = "$k" ] || fail "-R --elf: $named of $k samples named"
	grep -Eq "^ +[0-9.]+ +[1-9][0-9]* +[0-9.]+ +[0-9]+  format$" "$dir/r.out" ||
		fail "-R --elf: no sample in format()"
	;;
timeout)
	t0=$(date +%s)
	vs t --timeout 1 -S instructions -n 1009 -s instructions -w 0 -O "$dir/t.log" "$spinbz"
	t1=$(date +%s)
	[ $st -eq 124 ] || fail "status $st, want 124"
	[ $((t1 - t0)) -ge 1 ] && [ $((t1 - t0)) -le 30 ] || fail "took $((t1 - t0)) s"
	grep -q "^spin: vCPU 0 spinning$" "$dir/t.out" || fail "the guest never spun"
	grep -Eq "^vpmustat: timed out after [0-9.]+ s without a guest exit \(--timeout 1\): stopped, status 124; [1-9][0-9]* samples" \
	    "$dir/t.err" || fail "not the message"
	grep -Eq "^  s/00/instructions +[1-9][0-9]*$" "$dir/t.err" || fail "no count"
	grep -Eq "^event instructions: [1-9][0-9]* samples" "$dir/t.err" || fail "no report"
	"$vs" -R "$dir/t.log" >"$dir/r.out" 2>"$dir/r.err"
	st=$?
	cat "$dir/r.out" "$dir/r.err"
	[ $st -eq 0 ] || fail "-R: status $st"
	grep -q "INITIALIZE first, CLOSELOG last" "$dir/r.out" || fail "-R: the log not whole"
	;;
sigterm)
	VPMU_SKIP_NO_KVM=1 "$vs" -s instructions -w 0 "$spin" >"$dir/k.out" 2>"$dir/k.err" &
	pid=$!
	i=0
	while ! grep -q "^spin: vCPU 0 spinning$" "$dir/k.out" 2>/dev/null; do
		if ! kill -0 $pid 2>/dev/null; then
			wait $pid
			st=$?
			cat "$dir/k.err"
			[ $st -eq 77 ] && { echo "test_images.sh: skipped"; exit 77; }
			fail "vpmustat ended (status $st) before the guest spun"
		fi
		i=$((i + 1))
		[ $i -le 600 ] || { kill -KILL $pid; fail "the guest never spun"; }
		sleep 0.1
	done
	kill -TERM $pid
	wait $pid
	st=$?
	cat "$dir/k.err"
	[ $st -eq 143 ] || fail "status $st, want 143"
	grep -Eq "^vpmustat: interrupted after [0-9.]+ s: stopped by SIGTERM, status 143" \
	    "$dir/k.err" || fail "not the message"
	grep -Eq "^  s/00/instructions +[1-9][0-9]*$" "$dir/k.err" || fail "no count"
	;;
*)
	echo "test_images.sh: no case $case" >&2
	exit 2
	;;
esac
echo "test_images.sh: $case: ok"
exit 0
