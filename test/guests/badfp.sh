#!/bin/sh
# badfp.sh VPMUSTAT BADFP.elf WORKDIR
#
# The sampler's frame-pointer walk on a guest whose RBP is bad on purpose
# (test/guests/badfp.c): vpmustat samples it on instructions (exact source,
# one sample every 1009, call chains on) and must finish normally; then,
# for the samples whose RIP is in each phase's function, every call chain
# has exactly the length the walk's rules give.  At least 50 samples per
# phase.  Exit 77 (skip) where vpmustat finds no usable /dev/kvm.
set -u
vs=$1 elf=$2 dir=$3
fail() { echo "badfp.sh: FAIL: $*"; exit 1; }
rm -rf "$dir" && mkdir -p "$dir" || exit 1
VPMU_SKIP_NO_KVM=1 "$vs" -S instructions -n 1009 --mem 64 -O "$dir/badfp.log" "$elf" \
    >"$dir/console.txt" 2>"$dir/stderr.txt"
st=$?
cat "$dir/stderr.txt"
[ $st -eq 77 ] && { echo "badfp.sh: skipped (no usable /dev/kvm)"; exit 77; }
[ $st -eq 0 ] || fail "vpmustat exited $st"
grep -q "^badfp: done" "$dir/console.txt" || fail "no 'badfp: done' from the guest"
"$vs" -R "$dir/badfp.log" --elf "$elf" --dump >"$dir/dump.txt" || fail "vpmustat -R exited $?"
for want in fp_unmapped:1 fp_noncanon:1 fp_ram_end:1 fp_cycle:2 fp_down:2 fp_long:8; do
	fn=${want%:*} npc=${want#*:}
	# The samples whose RIP is in the loop, where RBP is the bad value.
	lo=$(nm "$elf" | sed -n "s/^\([0-9a-f]*\) . ${fn}_loop\$/\1/p")
	hi=$(nm "$elf" | sed -n "s/^\([0-9a-f]*\) . ${fn}_end\$/\1/p")
	[ -n "$lo" ] && [ -n "$hi" ] || fail "$fn: no ${fn}_loop/${fn}_end in the ELF"
	: >"$dir/$fn.txt"
	grep " CALLCHAIN " "$dir/dump.txt" | while read -r line; do
		rip=${line#* pc=}
		rip=${rip%%[[,]*}
		[ $((rip)) -ge $((0x$lo)) ] && [ $((rip)) -le $((0x$hi)) ] &&
			echo "$line" >>"$dir/$fn.txt"
	done
	total=$(wc -l <"$dir/$fn.txt")
	good=$(grep -c " npc=$npc " "$dir/$fn.txt")
	echo "badfp.sh: $fn: $total samples in the loop, $good with npc=$npc"
	[ "$total" -ge 50 ] || fail "$fn: only $total samples"
	[ "$good" -eq "$total" ] || { grep -v " npc=$npc " "$dir/$fn.txt" | head -3; fail "$fn: a call chain of another length"; }
done
# The made-up return addresses the walk read (the symbols, [...], dropped).
ret() { sed 's/\[[^]]*\]//g; s/.* pc=0x[0-9a-f]*//' "$dir/$1.txt" | sort -u; }
[ "$(ret fp_cycle)" = ",0x7e0001" ] || fail "fp_cycle: not just 0x7e0001"
[ "$(ret fp_down)" = ",0x7e0002" ] || fail "fp_down: not just 0x7e0002"
[ "$(ret fp_long)" = ",0x7e1000,0x7e1001,0x7e1002,0x7e1003,0x7e1004,0x7e1005,0x7e1006" ] ||
	fail "fp_long: not 0x7e1000..0x7e1006"
[ -z "$(ret fp_unmapped)$(ret fp_noncanon)$(ret fp_ram_end)" ] || fail "a one-entry chain with more"
echo "badfp.sh: every walk ended where its rule says"
