#!/bin/sh
# kaslr.sh VPMUSTAT KASLR.elf WORKDIR
#
# vpmustat --guest-symbols on a guest that looks like a relocated Linux
# kernel (test/guests/kaslr.c): its code runs at ALIAS + its ELF address
# (0xffffff8000000000 + ...), and it writes LSTAR with entry_SYSCALL_64's
# address there.  The System.map is the ELF's nm -n with every address
# moved to ALIAS - 2 MiB: the run must record LSTAR, state the slide
# 0x200000 found from it, and name the samples in kaslr_hot (most of them)
# from the map; -R of the log kept does the same, and with --kaslr-slide 0
# (a wrong slide, by hand) names none of them from it.  Exit 77 (skip)
# where vpmustat finds no usable /dev/kvm.  (The exact source steps each
# instruction: kaslr_hot runs 30000 rounds, some 200 samples.)
set -u
vs=$1 elf=$2 dir=$3
fail() { echo "kaslr.sh: FAIL: $*"; exit 1; }
rm -rf "$dir" && mkdir -p "$dir" || exit 1
command -v nm >/dev/null || { echo "kaslr.sh: skipped (no nm)"; exit 77; }
# ALIAS - 2 MiB + address (dash's arithmetic is signed: ALIAS is -2^39).
nm -n "$elf" | while read -r a t n; do
	case $a in [0-9a-f]*) ;; *) continue ;; esac
	printf '%016x %s %s\n' $((-0x8000000000 + 0x$a - 0x200000)) "$t" "$n"
done >"$dir/System.map"
grep -q ' T kaslr_hot$' "$dir/System.map" || fail "no kaslr_hot in the map"
# LSTAR: entry_SYSCALL_64 at ALIAS + its ELF address.
entry=$(nm "$elf" | sed -n 's/^\([0-9a-f]*\) T entry_SYSCALL_64$/\1/p')
[ -n "$entry" ] || fail "no entry_SYSCALL_64 in $elf"
lstar=$(printf '%#x' $((-0x8000000000 + 0x$entry)))
VPMU_SKIP_NO_KVM=1 "$vs" -S instructions -n 1009 --mem 64 --timeout 120 -O "$dir/kaslr.log" \
    --guest-symbols "$dir/System.map" "$elf" >"$dir/console.txt" 2>"$dir/stderr.txt"
st=$?
cat "$dir/stderr.txt"
[ $st -eq 77 ] && { echo "kaslr.sh: skipped (no usable /dev/kvm)"; exit 77; }
[ $st -eq 0 ] || fail "vpmustat exited $st"
grep -q "^kaslr: done" "$dir/console.txt" || fail "no 'kaslr: done' from the guest"
want="vpmustat: kernel symbols from $dir/System.map, KASLR slide 0x200000 (LSTAR $lstar = entry_SYSCALL_64)"
grep -qxF "$want" "$dir/stderr.txt" || fail "not stated: $want"
# kaslr_hot: the first function, with most samples, as the leaf.
check() {
	what=$2
	samples=$(sed -n 's/^event instructions: \([0-9]*\) samples.*/\1/p' "$1")
	top=$(sed -n '/self%.*function$/{n;p;q}' "$1")
	set -- $top		# self% self total% total function
	[ "${5:-}" = kaslr_hot ] || fail "$what: the top function is not kaslr_hot: $top"
	[ "$samples" -ge 100 ] && [ $(($2 * 2)) -gt "$samples" ] ||
		fail "$what: kaslr_hot has $2 of $samples samples"
}
check "$dir/stderr.txt" run
"$vs" -R "$dir/kaslr.log" --guest-symbols "$dir/System.map" >"$dir/r.out" 2>"$dir/r.err" ||
	fail "-R exited $?"
grep -qxF "$want" "$dir/r.out" || fail "-R: not stated: $want"
check "$dir/r.out" -R
# A wrong slide by hand: the samples are outside the map's functions.
"$vs" -R "$dir/kaslr.log" --guest-symbols "$dir/System.map" --kaslr-slide 0 \
    >"$dir/wrong.out" 2>&1 || fail "-R --kaslr-slide 0 exited $?"
grep -q "KASLR slide 0 (--kaslr-slide); but only [0-9]* of the [0-9]* kernel-mode samples fall in its functions" \
    "$dir/wrong.out" || fail "--kaslr-slide 0: no mismatch said"
grep -q ' kaslr_hot' "$dir/wrong.out" && fail "--kaslr-slide 0: kaslr_hot named"
echo "kaslr.sh: ok"
