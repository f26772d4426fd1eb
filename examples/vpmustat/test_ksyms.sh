#!/bin/sh
# test_ksyms.sh VPMUSTAT TEST_FLATLOG WORKDIR CASE
#
# vpmustat --guest-symbols and --kaslr-slide without a guest: logs written
# by test_flatlog.c that look like a relocated Linux kernel's -- samples at
# upper-half addresses, and at the end the "LST" USERDATA words a run
# writes (vCPU 0's LSTAR) -- read with -R and a symbol file whose addresses
# are the samples' minus a slide of 0x1e00000 (30 MiB, a multiple of
# 2 MiB).  The made-up kernel (base.map):
#
#   0xffffffff81001000 T do_syscall_64     0xffffffff81002000 T entry_SYSCALL_64
#   0xffffffff81001100 t helper_local      0xffffffff81002100 D some_data
#   0xffffffff81001200 W weak_fn           0xffffffff81003000 T schedule
#
# and LSTAR 0xffffffff82e02000 (entry_SYSCALL_64 + 0x1e00000).  Each CASE
# checks exact reports, messages and statuses:
#
#   map        a System.map: the slide stated, every function and count,
#              a symbol ending at the next one of any type (a sample past
#              entry_SYSCALL_64's end, in some_data, keeps its address),
#              a user-mode sample never named from the map (not even at a
#              kernel address); -G; --perf-script's [kernel.kallsyms]
#   kallsyms   a kallsyms copy, unsorted, with [module] lines: of the same
#              boot (slide 0) a module's function is "name [module]"; of
#              another boot (slide 0x1e00000) the kernel's are named and the
#              module's not (modules do not move with the kernel)
#   vmlinux    an ELF made here with the same functions (entry_SYSCALL_64
#              a NOTYPE label, as Linux's: the slide still found from it)
#   bad_files  a line that does not parse, addresses going backwards,
#              a file cut short, an empty file, every address 0 (kallsyms
#              read without privilege), no code symbols, no file: the
#              message names the line, and the report is the report
#              without --guest-symbols (addresses), status 0
#   mismatch   a slide that is not one (not a multiple of 2 MiB, below 0),
#              a map of another kernel (most samples outside its
#              functions): the note says so, the report has addresses;
#              no LSTAR in the log, LSTAR 0, no entry_SYSCALL_64: slide 0
#              and why; --kaslr-slide by hand; its usage errors
#   modules    --guest-modules (a /proc/modules copy: mymod at
#              0xffffffffc0002000, other at 0xffffffffc0010000) and
#              --guest-module-dir (mymod's .ko, built here with cc -c: its
#              .text laid out from the module's address), with the map's
#              slide of 0x1e00000 (modules do not move): mymod's functions
#              by name, an address past them "[mymod]", other's "[other]"
#              (no file), an address outside both kept; without the
#              directory, every module address by module; bad files and
#              the options' usage errors
set -u
vs=$1 gen=$2 dir=$3 case=$4

. "$(dirname "$0")/test_lib.sh"

# nosym NAME LOG NOTE: NAME.out is LOG's report without symbols, but for
# the first line's "(no symbols ...)" and the note line after it.
nosym() {
	"$vs" -R "$2" >"$dir/$1.plain" 2>/dev/null || fail "$1: -R $2 without symbols"
	{
		sed -n '1s/ (no symbols: give --elf)$//p' "$dir/$1.plain"
		printf '%s\n' "$3"
		sed 1d "$dir/$1.plain"
	} | same "$1.out" "$dir/$1.out"
}

rm -rf "$dir" && mkdir -p "$dir" || exit 1
cat >"$dir/base.map" <<'EOF'
0000000000000000 D __per_cpu_start
0000000000001000 D fixed_percpu_data
ffffffff81000000 T _stext
ffffffff81001000 T do_syscall_64
ffffffff81001100 t helper_local
ffffffff81001200 W weak_fn
ffffffff81002000 T entry_SYSCALL_64
ffffffff81002100 D some_data
ffffffff81003000 T schedule
ffffffff81003400 R __start_rodata
EOF
# The kernel's samples at the map's addresses + 0x1e00000; two user-mode
# ones, the second at schedule+0x8's address.
cat >"$dir/slid.txt" <<'EOF'
0 0xffffffff82e01010,0xffffffff82e02040
1 0xffffffff82e01104,0xffffffff82e01020,0xffffffff82e02040
0 0xffffffff82e01200
0 0xffffffff82e03008
1 0xffffffff82e03008
0 0xffffffff82e02180
0u 0x401000
0u 0xffffffff82e03008
EOF
lstar="-e 0x4c535408 -e 0x82e02000 -e 0xffffffff"
"$gen" -o "$dir/slid.log" $lstar <"$dir/slid.txt" || fail "test_flatlog slid.log"

# The report of slid.log with base.map's functions, slid (map, vmlinux).
slid_report() {
	cat <<EOF
vpmustat: 14 records, 640 bytes; INITIALIZE first, CLOSELOG last; 8 CALLCHAIN, 0 DROPNOTIFY
vpmustat: kernel symbols from $1, KASLR slide 0x1e00000 (LSTAR 0xffffffff82e02000 = entry_SYSCALL_64)

event instructions: 8 samples (2 in user mode)
  vCPU 0: 6 samples (75.00%)
  vCPU 1: 2 samples (25.00%)
    self%      self  total%     total  function
    25.00         2   25.00         2  schedule
    12.50         1   25.00         2  do_syscall_64
    12.50         1   12.50         1  0x401000
    12.50         1   12.50         1  0xffffffff82e02180
    12.50         1   12.50         1  0xffffffff82e03008
    12.50         1   12.50         1  helper_local
    12.50         1   12.50         1  weak_fn
     0.00         0   25.00         2  $2
  hottest addresses:
    25.00         2  0xffffffff82e03008 schedule+0x8
    12.50         1  0x401000           
    12.50         1  0xffffffff82e01010 do_syscall_64+0x10
    12.50         1  0xffffffff82e01104 helper_local+0x4
    12.50         1  0xffffffff82e01200 weak_fn
    12.50         1  0xffffffff82e02180 
    12.50         1  0xffffffff82e03008 
EOF
}

case $case in
modules)
	command -v cc >/dev/null || { echo "skipped: no cc for the module's file"; exit 77; }
	mkdir -p "$dir/mods/kernel/drivers" || exit 1
	printf 'int mod_a(int x) { return x + 1; }\nint mod_b(int x) { return x * x + 3; }\n' \
	    >"$dir/mymod.c"
	cc -c -O2 -fno-pic -o "$dir/mods/kernel/drivers/mymod.ko" "$dir/mymod.c" ||
		fail "cc -c mymod.c"
	a=$(nm "$dir/mods/kernel/drivers/mymod.ko" | awk '$3 == "mod_a" { print $1 }')
	b=$(nm "$dir/mods/kernel/drivers/mymod.ko" | awk '$3 == "mod_b" { print $1 }')
	[ -n "$a" ] && [ -n "$b" ] || fail "no mod_a, mod_b in mymod.ko"
	printf 'mymod 4096 0 - Live 0xffffffffc0002000\nother 8192 1 mymod, Live 0xffffffffc0010000 (E)\n' \
	    >"$dir/modules"
	printf '0 0xffffffff%x\n0 0xffffffff%x\n0 0xffffffffc0002800\n0 0xffffffffc0010020\n0 0xffffffffc0030000\n' \
	    $((0x$a + 0xc0002000 + 1)) $((0x$b + 0xc0002000 + 2)) >"$dir/mods.txt"
	"$gen" -o "$dir/mods.log" -e 0x4c535408 -e 0x82e02000 -e 0xffffffff \
	    <"$dir/mods.txt" || fail "test_flatlog mods.log"
	run mods 0 -R "$dir/mods.log" --guest-symbols "$dir/base.map" \
	    --guest-modules "$dir/modules" --guest-module-dir "$dir/mods"
	same mods.err "$dir/mods.err" </dev/null
	sed -n '3p;/self%/,/hottest/p' "$dir/mods.out" >"$dir/mods.part"
	same mods.part "$dir/mods.part" <<EOF
vpmustat: modules from $dir/modules: 2, 1 with their file under $dir/mods
    self%      self  total%     total  function
    20.00         1   20.00         1  0xffffffffc0030000
    20.00         1   20.00         1  [mymod]
    20.00         1   20.00         1  [other]
    20.00         1   20.00         1  mod_a [mymod]
    20.00         1   20.00         1  mod_b [mymod]
  hottest addresses:
EOF
	grep -q '^ *20.00         1  0xffffffffc0010020 \[other\]+0x20$' "$dir/mods.out" ||
		fail "mods: not [other]+0x20"
	# Without the module files: every module address by module.
	run nofiles 0 -R "$dir/mods.log" --guest-symbols "$dir/base.map" \
	    --guest-modules "$dir/modules"
	grep -q '^ *60.00         3   60.00         3  \[mymod\]$' "$dir/nofiles.out" ||
		fail "nofiles: the three samples in mymod not [mymod]"
	grep -qxF "vpmustat: modules from $dir/modules: 2, 0 with their file" "$dir/nofiles.out" ||
		fail "nofiles: no note"
	# Bad files: the message, and the kernel's names still there.
	printf 'mymod 4096 0 - Live c0002000\n' >"$dir/bad.modules"
	run badmod 0 -R "$dir/mods.log" --guest-symbols "$dir/base.map" \
	    --guest-modules "$dir/bad.modules"
	same badmod.err "$dir/badmod.err" <<EOF
vpmustat: warning: --guest-modules $dir/bad.modules: line 1: the sixth field is not a hexadecimal address 0x...: "mymod 4096 0 - Live c0002000": module addresses are not named
EOF
	grep -q '^ *20.00         1   20.00         1  0xffffffffc0030000$' "$dir/badmod.out" ||
		fail "badmod: no report"
	printf 'mymod 4096 0 - Live 0x0000000000000000\n' >"$dir/zero.modules"
	run zeromod 0 -R "$dir/mods.log" --guest-symbols "$dir/base.map" \
	    --guest-modules "$dir/zero.modules"
	grep -q "every address is 0: a /proc/modules read without privilege" "$dir/zeromod.err" ||
		fail "zeromod: not said"
	run nodir 0 -R "$dir/mods.log" --guest-symbols "$dir/base.map" \
	    --guest-modules "$dir/modules" --guest-module-dir "$dir/modules"
	same nodir.err "$dir/nodir.err" <<EOF
vpmustat: warning: --guest-modules $dir/modules: not a directory: module addresses are not named
EOF
	run nogsyms 2 -R "$dir/mods.log" --guest-modules "$dir/modules"
	grep -qxF "vpmustat: --guest-modules and --guest-module-dir go with --guest-symbols (the kernel's symbols)" \
	    "$dir/nogsyms.err" || fail "nogsyms: not said"
	run nomods 2 -R "$dir/mods.log" --guest-symbols "$dir/base.map" --guest-module-dir "$dir/mods"
	grep -qxF "vpmustat: --guest-module-dir $dir/mods: the modules' addresses come from --guest-modules (a copy of /proc/modules)" \
	    "$dir/nomods.err" || fail "nomods: not said"
	;;
map)
	run map 0 -R "$dir/slid.log" --guest-symbols "$dir/base.map" -G "$dir/map.graph" \
	    --perf-script "$dir/map.perf"
	same map.err "$dir/map.err" </dev/null
	slid_report "$dir/base.map" entry_SYSCALL_64 | same map.out "$dir/map.out"
	same map.graph "$dir/map.graph" <<'EOF'
# vpmustat call graph: event instructions, 8 samples
# caller -> callee: samples with the call on the stack, % of all; self: samples in the function itself
do_syscall_64  total 2 (25.00%)  self 1 (12.50%)
  -> helper_local                                     1   12.50%

entry_SYSCALL_64  total 2 (25.00%)  self 0 (0.00%)
  -> do_syscall_64                                    2   25.00%
EOF
	same map.perf "$dir/map.perf" <<'EOF'
guest 1/1 [000] 0.000001: instructions:
	ffffffff82e01010 do_syscall_64+0x10 ([kernel.kallsyms])
	ffffffff82e02040 entry_SYSCALL_64+0x40 ([kernel.kallsyms])

guest 1/1 [001] 0.000001: instructions:
	ffffffff82e01104 helper_local+0x4 ([kernel.kallsyms])
	ffffffff82e01020 do_syscall_64+0x20 ([kernel.kallsyms])
	ffffffff82e02040 entry_SYSCALL_64+0x40 ([kernel.kallsyms])

guest 1/1 [000] 0.000001: instructions:
	ffffffff82e01200 weak_fn+0x0 ([kernel.kallsyms])

guest 1/1 [000] 0.000001: instructions:
	ffffffff82e03008 schedule+0x8 ([kernel.kallsyms])

guest 1/1 [001] 0.000001: instructions:
	ffffffff82e03008 schedule+0x8 ([kernel.kallsyms])

guest 1/1 [000] 0.000001: instructions:
	ffffffff82e02180 [unknown] ([unknown])

guest 1/1 [000] 0.000001: instructions:
	          401000 [unknown] ([unknown])

guest 1/1 [000] 0.000001: instructions:
	ffffffff82e03008 [unknown] ([unknown])

EOF
	;;
kallsyms)
	# A kallsyms copy: unsorted (a module's lines first), tabs before [module].
	printf 'ffffffffc0001000 t mod_fn\t[mymod]\nffffffffc0001100 d mod_data\t[mymod]\n' \
	    >"$dir/kallsyms"
	sed -n '3,$p' "$dir/base.map" | sort -r >>"$dir/kallsyms"
	# Of the same boot: the samples at the file's addresses, LSTAR its entry.
	cat >"$dir/same.txt" <<'EOF'
0 0xffffffff81001010,0xffffffff81002040
0 0xffffffffc0001010,0xffffffff81001020
1 0xffffffffc0001010
0 0xffffffffc0001180
EOF
	"$gen" -o "$dir/same.log" -e 0x4c535408 -e 0x81002000 -e 0xffffffff \
	    <"$dir/same.txt" || fail "test_flatlog same.log"
	run same 0 -R "$dir/same.log" --guest-symbols "$dir/kallsyms" \
	    --perf-script "$dir/same.perf"
	same same.err "$dir/same.err" </dev/null
	same same.out "$dir/same.out" <<EOF
vpmustat: 10 records, 472 bytes; INITIALIZE first, CLOSELOG last; 4 CALLCHAIN, 0 DROPNOTIFY
vpmustat: kernel symbols from $dir/kallsyms, KASLR slide 0 (LSTAR 0xffffffff81002000 = entry_SYSCALL_64)

event instructions: 4 samples (0 in user mode)
  vCPU 0: 3 samples (75.00%)
  vCPU 1: 1 sample (25.00%)
    self%      self  total%     total  function
    50.00         2   50.00         2  mod_fn [mymod]
    25.00         1   50.00         2  do_syscall_64
    25.00         1   25.00         1  0xffffffffc0001180
     0.00         0   25.00         1  entry_SYSCALL_64
  hottest addresses:
    50.00         2  0xffffffffc0001010 mod_fn [mymod]+0x10
    25.00         1  0xffffffff81001010 do_syscall_64+0x10
    25.00         1  0xffffffffc0001180 
EOF
	same same.perf "$dir/same.perf" <<'EOF'
guest 1/1 [000] 0.000001: instructions:
	ffffffff81001010 do_syscall_64+0x10 ([kernel.kallsyms])
	ffffffff81002040 entry_SYSCALL_64+0x40 ([kernel.kallsyms])

guest 1/1 [000] 0.000001: instructions:
	ffffffffc0001010 mod_fn+0x10 ([mymod])
	ffffffff81001020 do_syscall_64+0x20 ([kernel.kallsyms])

guest 1/1 [001] 0.000001: instructions:
	ffffffffc0001010 mod_fn+0x10 ([mymod])

guest 1/1 [000] 0.000001: instructions:
	ffffffffc0001180 [unknown] ([unknown])

EOF
	# Of another boot: slid by 0x1e00000; the module's sample keeps its address.
	printf '1 0xffffffffc0001010\n' | cat "$dir/slid.txt" - >"$dir/other.txt"
	"$gen" -o "$dir/other.log" $lstar <"$dir/other.txt" || fail "test_flatlog other.log"
	run other 0 -R "$dir/other.log" --guest-symbols "$dir/kallsyms"
	same other.err "$dir/other.err" </dev/null
	sed -n '2p;/function$/,/hottest/p' "$dir/other.out" | same other.out - <<EOF
vpmustat: kernel symbols from $dir/kallsyms, KASLR slide 0x1e00000 (LSTAR 0xffffffff82e02000 = entry_SYSCALL_64)
    self%      self  total%     total  function
    22.22         2   22.22         2  schedule
    11.11         1   22.22         2  do_syscall_64
    11.11         1   11.11         1  0x401000
    11.11         1   11.11         1  0xffffffff82e02180
    11.11         1   11.11         1  0xffffffff82e03008
    11.11         1   11.11         1  0xffffffffc0001010
    11.11         1   11.11         1  helper_local
    11.11         1   11.11         1  weak_fn
     0.00         0   22.22         2  entry_SYSCALL_64
  hottest addresses:
EOF
	;;
vmlinux)
	command -v "${CC:-cc}" >/dev/null && command -v ld >/dev/null ||
		{ echo "test_ksyms.sh: skipped (no cc or ld)"; exit 77; }
	# The functions of base.map with their sizes; entry_SYSCALL_64 a label.
	cat >"$dir/k.s" <<'EOF'
	.text
	.globl	_stext
_stext:
	.org	0x1000
	.globl	do_syscall_64
	.type	do_syscall_64, @function
do_syscall_64:
	.org	0x1100
	.size	do_syscall_64, . - do_syscall_64
	.type	helper_local, @function
helper_local:
	.org	0x1200
	.size	helper_local, . - helper_local
	.weak	weak_fn
	.type	weak_fn, @function
weak_fn:
	.org	0x1300
	.size	weak_fn, . - weak_fn
	.org	0x2000
	.globl	entry_SYSCALL_64
entry_SYSCALL_64:
	.org	0x3000
	.globl	schedule
	.type	schedule, @function
schedule:
	.org	0x3400
	.size	schedule, . - schedule
EOF
	"${CC:-cc}" -c -o "$dir/k.o" "$dir/k.s" &&
	    ld -o "$dir/vmlinux" -Ttext=0xffffffff81000000 -e 0 "$dir/k.o" ||
		fail "cannot make vmlinux"
	run vmlinux 0 -R "$dir/slid.log" --guest-symbols "$dir/vmlinux"
	same vmlinux.err "$dir/vmlinux.err" </dev/null
	# No FUNC symbol at entry_SYSCALL_64: its frames keep their address.
	slid_report "$dir/vmlinux" 0xffffffff82e02040 | same vmlinux.out "$dir/vmlinux.out"
	;;
bad_files)
	m=$dir/base.map
	sed '5s/ t / /' "$m" >"$dir/noparse.map"
	sed '4s/^ffffffff81001000/ffffffff81000fff/;7s/^ffffffff81002000/ffffffff80002000/' \
	    "$m" >"$dir/backwards.map"
	head -c 300 "$m" >"$dir/cut.map"		# in line 10, after the address
	head -c -3 "$m" >"$dir/cutname.map"	# in line 10's name
	: >"$dir/empty.map"
	sed 's/^[0-9a-f]*/0000000000000000/' "$m" >"$dir/zero.kallsyms"
	grep -v ' [TtWw] ' "$m" >"$dir/data.map"
	printf 'ffffffff81001000 T do_syscall_64 [a b]\n' >"$dir/badmod.map"
	for f in noparse backwards cut cutname empty zero data badmod missing; do
		case $f in zero) p=$dir/zero.kallsyms ;; *) p=$dir/$f.map ;; esac
		run $f 0 -R "$dir/slid.log" --guest-symbols "$p"
		"$vs" -R "$dir/slid.log" 2>/dev/null | same $f.out "$dir/$f.out"
	done
	same noparse.err "$dir/noparse.err" <<EOF
vpmustat: warning: --guest-symbols $dir/noparse.map: line 5: not a one-letter symbol type after the address: "ffffffff81001100 helper_local": kernel addresses are not named
EOF
	same backwards.err "$dir/backwards.err" <<EOF
vpmustat: warning: --guest-symbols $dir/backwards.map: line 7: address 0xffffffff80002000 is below line 6's 0xffffffff81001200: a System.map (nm -n) is sorted: kernel addresses are not named
EOF
	same cut.err "$dir/cut.err" <<EOF
vpmustat: warning: --guest-symbols $dir/cut.map: line 10: no newline at its end: the file is cut short: kernel addresses are not named
EOF
	same cutname.err "$dir/cutname.err" <<EOF
vpmustat: warning: --guest-symbols $dir/cutname.map: line 10: no newline at its end: the file is cut short: kernel addresses are not named
EOF
	same empty.err "$dir/empty.err" <<EOF
vpmustat: warning: --guest-symbols $dir/empty.map: an empty file: kernel addresses are not named
EOF
	same zero.err "$dir/zero.err" <<EOF
vpmustat: warning: --guest-symbols $dir/zero.kallsyms: every address is 0: a /proc/kallsyms read without privilege (read it as root, with kernel.kptr_restrict 0 or 1): kernel addresses are not named
EOF
	same data.err "$dir/data.err" <<EOF
vpmustat: warning: --guest-symbols $dir/data.map: no code symbols (types t, T, W, w, i): kernel addresses are not named
EOF
	same badmod.err "$dir/badmod.err" <<EOF
vpmustat: warning: --guest-symbols $dir/badmod.map: line 1: a fourth column that is not "[module]": "ffffffff81001000 T do_syscall_64 [a b]": kernel addresses are not named
EOF
	same missing.err "$dir/missing.err" <<EOF
vpmustat: warning: --guest-symbols $dir/missing.map: No such file or directory: kernel addresses are not named
EOF
	# -q: no warning, no report.
	run quiet 0 -q -R "$dir/slid.log" --guest-symbols "$dir/cut.map"
	same quiet.err "$dir/quiet.err" </dev/null
	same quiet.out "$dir/quiet.out" </dev/null
	;;
mismatch)
	k="vpmustat: kernel symbols from $dir/base.map,"
	# LSTAR - entry_SYSCALL_64: 0x1e00800 (not 2 MiB aligned), below 0.
	"$gen" -o "$dir/unaligned.log" -e 0x4c535408 -e 0x82e02800 -e 0xffffffff \
	    <"$dir/slid.txt" || fail "test_flatlog unaligned.log"
	run unaligned 0 -R "$dir/unaligned.log" --guest-symbols "$dir/base.map"
	same unaligned.err "$dir/unaligned.err" </dev/null
	nosym unaligned "$dir/unaligned.log" "$k no KASLR slide: LSTAR 0xffffffff82e02800 - entry_SYSCALL_64 0xffffffff81002000 is not a multiple of 2 MiB, not a slide (a multiple of 2 MiB, not below 0): not the guest's kernel; kernel addresses are not named"
	"$gen" -o "$dir/below.log" -e 0x4c535408 -e 0x80002000 -e 0xffffffff \
	    <"$dir/slid.txt" || fail "test_flatlog below.log"
	run below 0 -R "$dir/below.log" --guest-symbols "$dir/base.map"
	nosym below "$dir/below.log" "$k no KASLR slide: LSTAR 0xffffffff80002000 - entry_SYSCALL_64 0xffffffff81002000 is below 0, not a slide (a multiple of 2 MiB, not below 0): not the guest's kernel; kernel addresses are not named"
	# Another kernel: a good slide (0x1e00000), but its functions are elsewhere.
	sed 's/^ffffffff8100\(1...\) [TtW]/ffffffff8100\1 d/;s/^ffffffff81003000 T/ffffffff81003000 d/' \
	    "$dir/base.map" >"$dir/other.map"
	printf 'ffffffff81003800 T far_away\n' >>"$dir/other.map"
	run other 0 -R "$dir/slid.log" --guest-symbols "$dir/other.map"
	nosym other "$dir/slid.log" "vpmustat: kernel symbols from $dir/other.map, KASLR slide 0x1e00000 (LSTAR 0xffffffff82e02000 = entry_SYSCALL_64); but only 0 of the 6 kernel-mode samples fall in its functions: not the guest's kernel (or not its slide); kernel addresses are not named"
	# No LSTAR in the log: slide 0 -- right for a log at the map's addresses.
	sed 's/82e0/8100/g' "$dir/slid.txt" >"$dir/base.txt"
	"$gen" -o "$dir/nolstar.log" <"$dir/base.txt" || fail "test_flatlog nolstar.log"
	run nolstar 0 -R "$dir/nolstar.log" --guest-symbols "$dir/base.map"
	sed -n '2p;/function$/,/hottest/p' "$dir/nolstar.out" | same nolstar.out - <<EOF
$k KASLR slide 0 (the log has no LSTAR: a -R of a log not from a run, or the run could not read it)
    self%      self  total%     total  function
    25.00         2   25.00         2  schedule
    12.50         1   25.00         2  do_syscall_64
    12.50         1   12.50         1  0x401000
    12.50         1   12.50         1  0xffffffff81002180
    12.50         1   12.50         1  0xffffffff81003008
    12.50         1   12.50         1  helper_local
    12.50         1   12.50         1  weak_fn
     0.00         0   25.00         2  entry_SYSCALL_64
  hottest addresses:
EOF
	# ... and wrong for the slid log: most samples outside, addresses kept.
	"$gen" -o "$dir/slidnolstar.log" <"$dir/slid.txt" || fail "test_flatlog slidnolstar.log"
	run slidnolstar 0 -R "$dir/slidnolstar.log" --guest-symbols "$dir/base.map"
	nosym slidnolstar "$dir/slidnolstar.log" "$k KASLR slide 0 (the log has no LSTAR: a -R of a log not from a run, or the run could not read it); but only 0 of the 6 kernel-mode samples fall in its functions: not the guest's kernel (or not its slide); kernel addresses are not named"
	# The slide by hand names them.
	run hand 0 -R "$dir/slidnolstar.log" --guest-symbols "$dir/base.map" \
	    --kaslr-slide 0x1e00000
	slid_report "$dir/base.map" entry_SYSCALL_64 |
	    sed '1s/640 bytes/592 bytes/;1s/14 records/11 records/;2s/KASLR slide.*/KASLR slide 0x1e00000 (--kaslr-slide)/' |
	    same hand.out "$dir/hand.out"
	# LSTAR 0 (the guest never set it), and a map without entry_SYSCALL_64.
	"$gen" -o "$dir/zero.log" -e 0x4c535408 -e 0 -e 0 <"$dir/base.txt" ||
		fail "test_flatlog zero.log"
	run zero 0 -R "$dir/zero.log" --guest-symbols "$dir/base.map"
	sed -n 2p "$dir/zero.out" | same zero.out - <<EOF
$k KASLR slide 0 (the guest's LSTAR is 0: it never set its syscall entry, not a Linux kernel or not booted that far)
EOF
	grep -v entry_SYSCALL_64 "$dir/base.map" >"$dir/noentry.map"
	run noentry 0 -R "$dir/slid.log" --guest-symbols "$dir/noentry.map"
	nosym noentry "$dir/slid.log" "vpmustat: kernel symbols from $dir/noentry.map, KASLR slide 0 (LSTAR 0xffffffff82e02000, but the file has no entry_SYSCALL_64); but only 0 of the 6 kernel-mode samples fall in its functions: not the guest's kernel (or not its slide); kernel addresses are not named"
	# Usage: a slide not a multiple of 2 MiB, or without --guest-symbols.
	run badslide 2 -R "$dir/slid.log" --guest-symbols "$dir/base.map" --kaslr-slide 0x1000
	head -n 1 "$dir/badslide.err" | same badslide.err - <<'EOF'
vpmustat: --kaslr-slide 0x1000: want a multiple of 0x200000 (2 MiB), such as 0x1e00000
EOF
	run noslidefile 2 -R "$dir/slid.log" --kaslr-slide 0x200000
	head -n 1 "$dir/noslidefile.err" | same noslidefile.err - <<'EOF'
vpmustat: --kaslr-slide 0x200000 moves --guest-symbols' addresses: give that file
EOF
	;;
*)
	fail "no such case"
	;;
esac
echo "test_ksyms.sh: $case: ok"
