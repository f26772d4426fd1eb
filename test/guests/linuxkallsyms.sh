#!/bin/sh
# linuxkallsyms.sh VPMUSTAT LINUXTASKS.elf MKKALLSYMS WORKDIR
#
# vpmustat --guest-kallsyms: a Linux guest's kernel symbols read from the
# kernel's own table (kallsyms) in guest memory, with no symbol file.
# mkkallsyms writes a table into copies of linuxtasks.elf (linuxtasks.c's
# kallsyms_area), from a map at the addresses the guest runs at (its ELF's
# through ALIAS, no slide), with current_task at the per-CPU offset 0x40
# and __start_BTF / __stop_BTF around btf_blob:
#
#   old   the layout before Linux 6.4, names compressed, absolute per-CPU
#         symbols: every sample's task named as with a System.map
#         (linuxtasks.sh's pairs, exactly), the slide 0 from LSTAR
#   new   the layout from Linux 6.4, names not compressed, one of 200
#         characters (a two-byte length), offsets relative only (so no
#         per-CPU symbol): functions named, tasks not, and why
#   none  the ELF as built (no table): said, addresses kept
#
# Each table read back (--save-guest-symbols) must be the map, line for
# line.  Exit 77 (skip) where vpmustat finds no usable /dev/kvm.
set -u
vs=$1 elf=$2 mk=$3 dir=$4
fail() { echo "linuxkallsyms.sh: FAIL: $*"; exit 1; }
rm -rf "$dir" && mkdir -p "$dir" || exit 1
command -v nm >/dev/null || { echo "linuxkallsyms.sh: skipped (no nm)"; exit 77; }
. "$(dirname "$0")/linuxlib.sh"
RUN=-0x8000000000			# ALIAS: where the guest runs its kernel
set -- $(nm -S "$elf" | awk '$4 == "kallsyms_area" { print $1, $2 }')
[ $# -eq 2 ] || fail "no kallsyms_area in $elf"
area=0x$1 size=0x$2
guest_map "$elf" $RUN >"$dir/run.map"
{ printf '0000000000000040 D current_task\n'; cat "$dir/run.map"; } >"$dir/old.map"
long=$(printf 'a_very_long_symbol_name_%.0s' 1 2 3 4 5 6 7 8)	# 200 characters
{ cat "$dir/run.map"; printf '%s d %s\n' "$(at 7f00000 $RUN)" "$long"; } >"$dir/new.map"

cp "$elf" "$dir/old.elf" && "$mk" -l old "$dir/old.map" "$area" "$size" "$dir/old.elf" ||
	fail "mkkallsyms -l old"
cp "$elf" "$dir/new.elf" && "$mk" -l new -r -u "$dir/new.map" "$area" "$size" "$dir/new.elf" ||
	fail "mkkallsyms -l new -r -u"

kprofile() {	# kprofile NAME ELF: --guest-kallsyms, the table saved in NAME.saved
	profile "$1" "$2" --guest-kallsyms --save-guest-symbols "$dir/$1.saved"
}

# old: as a System.map names them.
kprofile old "$dir/old.elf"
cmp -s "$dir/old.map" "$dir/old.saved" || { diff "$dir/old.map" "$dir/old.saved" | head; fail "old: the table read back is not the map"; }
n=$(wc -l <"$dir/old.map")
grep -Eq "^vpmustat: kernel symbols from guest memory \(kallsyms, $n symbols at guest-physical 0x[0-9a-f]+\), KASLR slide 0 \(LSTAR 0x[0-9a-f]+ = entry_SYSCALL_64\)$" \
    "$dir/old.err" || fail "old: the report does not say where the $n symbols came from"
grep -Eq '^ *[0-9]+ alpha_hot alpha 100/100$' "$dir/old.combos" || fail "old: alpha_hot not alpha 100/100"
grep -Eq '^ *[0-9]+ worker_hot alpha-worker 100/101$' "$dir/old.combos" || fail "old: worker_hot not alpha-worker 100/101"
grep -Eq '^ *[0-9]+ gamma_hot gamma 200/200$' "$dir/old.combos" || fail "old: gamma_hot not gamma 200/200"
for f in alpha_hot worker_hot gamma_hot; do
	[ "$(awk -v f=$f '$2 == f' "$dir/old.combos" | wc -l)" -eq 1 ] || fail "old: $f under several tasks"
done
grep -qx "vpmustat: kernel call chains unwound by the kernel's ORC tables (12 entries, the format of Linux before 6.3)" \
    "$dir/old.err" || fail "old: the chains did not come from ORC"
named=$(awk '$3 !~ /^cr3:/' "$dir/old.combos" | awk '{ n += $1 } END { print n + 0 }')
grep -Eq "^vpmustat: guest tasks: $named samples named their task, [0-9]+ their address space: LSTAR 0: the kernel has not set its system call entry yet$" \
    "$dir/old.err" || fail "old: the run's end does not say $named samples were named"

# new: functions named, tasks not (no per-CPU symbol), and why.
kprofile new "$dir/new.elf"
cmp -s "$dir/new.map" "$dir/new.saved" || { diff "$dir/new.map" "$dir/new.saved" | head; fail "new: the table read back is not the map"; }
for f in alpha_hot worker_hot gamma_hot; do
	grep -Eq "^ *[0-9]+ $f cr3:0x[0-9a-f]+ " "$dir/new.combos" || fail "new: $f not named under its address space"
done
grep -Eq '^vpmustat: guest tasks: 0 samples named their task, [0-9]+ their address space: guest memory \(kallsyms, [0-9]+ symbols at guest-physical 0x[0-9a-f]+\) has neither pcpu_hot nor current_task as a per-CPU offset$' \
    "$dir/new.err" || fail "new: the run's end does not say why no task was named"

# none: no table, said; addresses kept, nothing named.
kprofile none "$elf"
grep -Eq "^vpmustat: warning: no kernel symbol table \(kallsyms\) in the guest's 64 MiB of memory: .*; kernel addresses are not named$" \
    "$dir/none.err" || fail "none: no table, not said"
grep -Eq ' (alpha|worker|gamma)_hot ' "$dir/none.combos" && fail "none: a function named without a table"
[ -e "$dir/none.saved" ] && fail "none: --save-guest-symbols wrote a file"
echo "linuxkallsyms.sh: ok"
