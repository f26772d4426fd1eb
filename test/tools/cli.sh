#!/bin/sh
# cli.sh CASE DIR NAME=PATH... -- the command line a CI job scripts (issue
# 32, item 9): vpmu-run's report and vpmustat's counts as JSON lines (-j)
# and CSV (-x SEP), read back by a strict reader of both formats
# (records.c) and checked value for value against the text of the same
# options' run and against counts known exactly; "-" as standard output
# (the guest's console then on standard error) and standard input; usage
# errors (what is wrong, then "Try 'TOOL --help' for more information.",
# status 2); --version; --mem sizes.
#
# NAME=PATH: run (vpmu-run), stat (vpmustat), info (vpmu-info), demo
# (vpmu-demo), qemu (vpmu-qemu), records, version (the project's), and the
# guests: demo_elf, marks_elf, hello_elf, snap_elf, mb_elf, mb_mod, spin_elf.
#
# Cases: version, usage, run_json, run_csv, run_stdout, run_escape,
# run_marks, stat_json, stat_interval, stat_stdout, stdin, snapshot_pipe.  Exit 0, 1 on a
# failure, 77 (skip) where a guest run finds no usable /dev/kvm
# (VPMU_SKIP_NO_KVM=1).
set -u
case=$1 dir=$2
shift 2
for a in "$@"; do
	case $a in
	run=* | stat=* | info=* | demo=* | qemu=* | records=* | version=* | \
	demo_elf=* | marks_elf=* | hello_elf=* | snap_elf=* | mb_elf=* | mb_mod=* | spin_elf=*)
		eval "${a%%=*}=\${a#*=}" ;;
	*)
		echo "cli.sh: unknown argument $a"
		exit 2 ;;
	esac
done
export VPMU_SKIP_NO_KVM=1
rm -rf "$dir" && mkdir -p "$dir" || exit 1

# fail, same: vpmustat's test library's (fail says "cli.sh: CASE: FAIL: ...").
. "$(dirname "$0")/../../examples/vpmustat/test_lib.sh"

# x NAME WANT CMD...: CMD's output in NAME.out and NAME.err, its status WANT.
x() {
	_n=$1 _w=$2
	shift 2
	"$@" >"$dir/$_n.out" 2>"$dir/$_n.err"
	st=$?
	if [ "$st" -eq 77 ] && [ "$_w" -ne 77 ]; then
		cat "$dir/$_n.out"
		echo "cli.sh: $case: skipped (no usable /dev/kvm)"
		exit 77
	fi
	[ "$st" -eq "$_w" ] || {
		cat "$dir/$_n.err"
		fail "$_n: $* exited $st, want $_w"
	}
}

# get RECS KEY K=V...: KEY's value in the one record of RECS (records'
# output) that has every K=V; fails unless exactly one has.
get() {
	_r=$1 _k=$2
	shift 2
	awk -F'\t' -v key="$_k" -v conds="$*" '
	BEGIN { n = split(conds, c, " ") }
	{
		split("", f)
		for (i = 1; i <= NF; i++) {
			p = index($i, "=")
			f[substr($i, 1, p - 1)] = substr($i, p + 1)
		}
		ok = 1
		for (j = 1; j <= n; j++) {
			p = index(c[j], "=")
			if (!(substr(c[j], 1, p - 1) in f) || f[substr(c[j], 1, p - 1)] != substr(c[j], p + 1))
				ok = 0
		}
		if (ok) {
			hits++
			if (!(key in f))
				missing = 1
			v = f[key]
		}
	}
	END { if (hits != 1 || missing) exit 1; print v }' "$_r"
}

# want RECS KEY VALUE K=V...: the record's KEY is VALUE.
want() {
	_wr=$1 _wk=$2 _wv=$3
	shift 3
	_g=$(get "$_wr" "$_wk" "$@") || fail "$_wr: no one record with $*, or no $_wk"
	[ "$_g" = "$_wv" ] || fail "$_wr: $_wk of the record with $*: \"$_g\", want \"$_wv\""
}

# usage NAME LINE CMD...: status 2, nothing on standard output, standard
# error exactly LINE then the Try line of CMD's tool (TRY, set by the caller).
usage() {
	_u=$1 _l=$2
	shift 2
	x "$_u" 2 "$@"
	[ -s "$dir/$_u.out" ] && fail "$_u: standard output is not empty"
	printf '%s\n%s\n' "$_l" "$TRY" | same "$_u" "$dir/$_u.err"
}

# The counter table of a text report: "vCPU COUNTER EVENT VALUE ENABLED RUNNING".
table() {
	awk '/^vCPU [0-9]+: / { cpu = $2; sub(":", "", cpu); on = 0; next }
	     /^  counter +event +value/ { on = 1; next }
	     on && /^  [A-Z]/ && $3 ~ /^[0-9]+$/ { print cpu, $1, $2, $3, $4, $5; next }
	     { on = 0 }' "$1"
}

case $case in
version)
	for t in "vpmu-run:$run" "vpmustat:$stat" "vpmu-info:$info" "vpmu-demo:$demo"; do
		x version 0 "${t#*:}" --version
		echo "${t%%:*} (libvpmu $version)" | same version "$dir/version.out"
		[ -s "$dir/version.err" ] && fail "${t%%:*} --version: standard error not empty"
	done
	# vpmu-qemu: QEMU's version line first, then its own (from its vpmu-run's).
	x qemu 0 env -u VPMU_RUN "$qemu" --version
	same qemu "$dir/qemu.out" <<EOF
QEMU emulator version 0.0.0 (vpmu-qemu: vpmu-run behind a QEMU command line; not QEMU)
vpmu-qemu (libvpmu $version)
EOF
	;;

usage)
	TRY="Try 'vpmu-run --help' for more information."
	usage run_bogus "$run: unrecognized option '--bogus'" "$run" --bogus "$hello_elf"
	usage run_no_arg "$run: option '--report' requires an argument" "$run" --report
	usage run_no_guest "vpmu-run: no guest ELF given" "$run" -j
	usage run_mem_4g "vpmu-run: --mem 4G: want 1M to 3G: RAM ends below the 32-bit hole at 3 GiB (the I/O APIC, the local APIC and KVM's TSS are above it), and vpmu-run does not split RAM around it" \
	    "$run" --mem 4G "$hello_elf"
	usage run_mem_3073 "vpmu-run: --mem 3073: want 1M to 3G: RAM ends below the 32-bit hole at 3 GiB (the I/O APIC, the local APIC and KVM's TSS are above it), and vpmu-run does not split RAM around it" \
	    "$run" --mem 3073 "$hello_elf"
	usage run_mem_kib "vpmu-run: --mem 1500K: want a whole number of MiB" \
	    "$run" --mem 1500K "$hello_elf"
	usage run_mem_unit "vpmu-run: --mem 2T: want a size: a number of MiB, or a number followed by K, M or G" \
	    "$run" --mem 2T "$hello_elf"
	usage run_two_formats "vpmu-run: -j and -x: one format at most" \
	    "$run" -j -x , "$hello_elf"
	usage run_sep "vpmu-run: -x 'ab': want one character, not a double quote or a line break" \
	    "$run" -x ab "$hello_elf"
	usage run_stdout_twice "vpmu-run: standard output (-) takes one of --report, --snapshot and --guest-log, not two" \
	    "$run" --report - --guest-log 0=- "$hello_elf"
	usage run_stdin_twice "vpmu-run: standard input (-) is read once: for the guest, --initrd or --resume, not two of them" \
	    "$run" --initrd - -
	TRY="Try 'vpmustat --help' for more information."
	usage stat_bogus "$stat: unrecognized option '--bogus'" "$stat" --bogus
	usage stat_modifier "vpmustat: event instructions:x: a libvpmu event or a raw code takes one modifier, :u (user mode) or :k (kernel mode)" \
	    "$stat" -s instructions:x "$marks_elf"
	usage stat_two_modifiers "vpmustat: event 0xc0:u:k: a libvpmu event or a raw code takes one modifier, :u (user mode) or :k (kernel mode)" \
	    "$stat" -s 0xc0:u:k "$marks_elf"
	usage stat_time_modifier "vpmustat: event cpu-clock:k: a time event counts run time in both modes: no :u or :k" \
	    "$stat" -S cpu-clock:k "$marks_elf"
	usage stat_event_file "vpmustat: --event branches: not an event of -S or -P in this run" \
	    "$stat" -S instructions --event branches --folded "$dir/f" "$marks_elf"
	usage stat_json_sampling "vpmustat: -j and -x format the counts of -s and -p: give one" \
	    "$stat" -S instructions -j "$marks_elf"
	usage stat_stdout_twice "vpmustat: -o - and --svg -: one output at most on standard output" \
	    "$stat" -S instructions -o - --svg - "$marks_elf"
	usage stat_guest_stdin "vpmustat: the guest -: vpmustat reads its guest by name, more than once (its image, its symbols, its identity in the log): give a path" \
	    "$stat" -s instructions -
	usage stat_elf_stdin "vpmustat: --elf -: read by name, not from standard input: give a path" \
	    "$stat" -R "$dir/none.log" --elf -
	usage stat_rate "vpmustat: -n 0: want a number from 1 to 4611686018427387904" \
	    "$stat" -S instructions -n 0 "$marks_elf"
	usage stat_mem "vpmustat: --mem 0: want 1M to 3G: RAM ends below the 32-bit hole at 3 GiB (the I/O APIC, the local APIC and KVM's TSS are above it), and vpmu-run does not split RAM around it" \
	    "$stat" -s instructions --mem 0 "$marks_elf"
	# An unknown event: libpfm4's reason after vpmustat's, on one line.
	x stat_event 2 "$stat" -s no-such-event "$marks_elf"
	case $(sed -n 1p "$dir/stat_event.err") in
	"vpmustat: event no-such-event: not a libvpmu event name nor a raw code (0xUUEE); libpfm4 (ix86arch): "?*)
		;;
	*)
		fail "stat_event: $(cat "$dir/stat_event.err")" ;;
	esac
	sed -n '2,$p' "$dir/stat_event.err" >"$dir/stat_event.try"
	echo "$TRY" | same stat_event_try "$dir/stat_event.try"
	TRY="Try 'vpmu-info --help' for more information."
	usage info_bogus "$info: unrecognized option '--bogus'" "$info" --bogus
	usage info_arg "vpmu-info: unexpected argument \"x\"" "$info" x
	TRY="Try 'vpmu-demo --help' for more information."
	usage demo_bogus "vpmu-demo: unknown option --bogus" "$demo" --bogus
	usage demo_arg "vpmu-demo: unexpected argument \"x\": the demo takes none" "$demo" x
	;;

run_json | run_csv)
	# The demo guest's own counters: its loop's 506 instructions, 100
	# branches and 506 core cycles at CPI 1 (examples/guests/demo.c), and
	# PMC2 after the overflow, with the PMI handler's instructions; the
	# exact source counts them the same every run.
	x text 0 "$run" --source exact --report "$dir/text.txt" "$demo_elf"
	N=null			# a missing value: JSON's null, CSV's empty field
	if [ "$case" = run_json ]; then
		x recs 0 "$run" --source exact -j --report "$dir/recs.txt" "$demo_elf"
		x parse 0 "$records" json "$dir/recs.txt"
	else
		# ';': the model string's commas need no quotes; then ',': they do.
		x recs 0 "$run" --source exact -x ';' --report "$dir/recs.txt" "$demo_elf"
		x parse_semi 0 "$records" csv ';' "$dir/recs.txt"
		x recs_comma 0 "$run" --source exact -x , --report "$dir/comma.txt" "$demo_elf"
		x parse_comma 0 "$records" csv , "$dir/comma.txt"
		cmp -s "$dir/parse_semi.out" "$dir/parse_comma.out" ||
			fail "-x ';' and -x , read back differently"
		grep -q '^run,[^,]*,exit,0,0,0,,,"intel-v2:gp=4,fixed=3,' "$dir/comma.txt" ||
			fail "-x ,: the model is not quoted: $(head -1 "$dir/comma.txt")"
		# CSV's columns by name, in the order vpmu-run(1) gives.
		awk -F'\t' 'BEGIN {
			k["run"] = "type guest end status exit-vcpu exit-value signal timeout model source source-default vcpus mem-mib pmu-mode pmu-mode-why syscall-caught syscall-host syscalls-completed marks-taken marks-dropped"
			k["vcpu"] = "type vcpu msr-reads msr-writes msr-gp msr-gp-outside steps pmis breakpoints breakpoints-completed rdpmc rdpmc-gp exact-retired exact-completed exact-ff-insns exact-ff-loops exact-closed-insns exact-closed-loops exact-interp-insns exact-interp-runs exact-foreseen exact-mispredicted insn-emulation insn-emulation-agrees user-unseen-exits error"
			k["steps"] = "type vcpu reason steps pcnt"
			k["counter"] = "type vcpu counter event counter-value unit enabled-ns running-ns pcnt-running source scaled raw-value not-counted"
		}
		{
			t = substr($1, 3)
			n = split(k[t], name, " ")
			if (n != NF) { print "a " t " record of " NF " fields, want " n > "/dev/stderr"; exit 1 }
			for (i = 1; i <= NF; i++) {
				v = substr($i, index($i, "=") + 1)
				printf "%s%s=%s", (i > 1 ? "\t" : ""), name[i], v
			}
			print ""
		}' "$dir/parse_semi.out" >"$dir/named.out" || fail "CSV columns"
		cp "$dir/named.out" "$dir/parse.out"
		N=
	fi
	r=$dir/parse.out
	# Known exact counts.
	want "$r" counter-value 506 type=counter vcpu=0 counter=IA32_PMC0
	want "$r" event instructions type=counter vcpu=0 counter=IA32_PMC0
	want "$r" counter-value 100 type=counter vcpu=0 counter=IA32_PMC1
	want "$r" event branches type=counter vcpu=0 counter=IA32_PMC1
	# PMC2 counts the guest's PMI handler too, as the guest itself says
	# ("IA32_PMC2 now N"): its length is the compiler's (514 with gcc).
	pmc2=$(sed -n 's/^demo:   IA32_PMC2 now \([0-9]*\):.*/\1/p' "$dir/recs.out" 2>/dev/null)
	[ -n "$pmc2" ] || pmc2=$("$run" --quiet --source exact "$demo_elf" |
	    sed -n 's/^demo:   IA32_PMC2 now \([0-9]*\):.*/\1/p')
	[ -n "$pmc2" ] || fail "the demo guest did not say IA32_PMC2's count"
	want "$r" counter-value "$pmc2" type=counter vcpu=0 counter=IA32_PMC2
	want "$r" counter-value 506 type=counter vcpu=0 counter=IA32_FIXED_CTR1
	want "$r" event cycles type=counter vcpu=0 counter=IA32_FIXED_CTR1
	[ "$(grep -c '^type=counter' "$r")" = 4 ] || fail "not 4 counter records"
	# Every row of the text's table, value for value.
	table "$dir/text.txt" >"$dir/table.txt"
	[ "$(wc -l <"$dir/table.txt")" = 4 ] || fail "the text's table: $(cat "$dir/table.txt")"
	while read -r t_cpu t_ctr t_ev t_val t_en t_ru; do
		sel="type=counter vcpu=$t_cpu counter=$t_ctr"
		want "$r" event "$t_ev" $sel
		want "$r" counter-value "$t_val" $sel
		want "$r" enabled-ns "$t_en" $sel
		want "$r" running-ns "$t_ru" $sel
		want "$r" source exact $sel
		want "$r" scaled false $sel
		want "$r" raw-value "$N" $sel
		want "$r" not-counted "$N" $sel
		want "$r" unit "" $sel
		want "$r" pcnt-running 100.00 $sel
	done <"$dir/table.txt"
	# The run: the text's first lines.
	want "$r" guest "$demo_elf" type=run
	want "$r" end exit type=run
	want "$r" status 0 type=run
	want "$r" exit-vcpu 0 type=run
	want "$r" exit-value 0 type=run
	want "$r" source exact type=run
	want "$r" source-default false type=run
	want "$r" vcpus 1 type=run
	want "$r" mem-mib 64 type=run
	want "$r" pmu-mode trap type=run
	want "$r" pmu-mode-why "$N" type=run
	want "$r" signal "$N" type=run
	want "$r" timeout "$N" type=run
	model=$(sed -n 's/^model \([^ ]*\), source exact, 1 vCPU, 64 MiB$/\1/p' "$dir/text.txt")
	[ -n "$model" ] || fail "the text's model line"
	want "$r" model "$model" type=run
	# The vCPU's figures: its line in the text, and the exact source's.
	set -- $(sed -n 's/^vCPU 0: MSR reads \([0-9]*\), writes \([0-9]*\), #GP \([0-9]*\) (+\([0-9]*\) outside the model), steps \([0-9]*\), PMIs \([0-9]*\).*/\1 \2 \3 \4 \5 \6/p' "$dir/text.txt")
	[ $# -eq 6 ] || fail "the text's vCPU line"
	want "$r" msr-reads "$1" type=vcpu vcpu=0
	want "$r" msr-writes "$2" type=vcpu vcpu=0
	want "$r" msr-gp "$3" type=vcpu vcpu=0
	want "$r" msr-gp-outside "$4" type=vcpu vcpu=0
	want "$r" steps "$5" type=vcpu vcpu=0
	want "$r" pmis "$6" type=vcpu vcpu=0
	want "$r" pmis 1 type=vcpu vcpu=0
	want "$r" exact-retired "$(sed -n 's/^  exact: retired \([0-9]*\).*/\1/p' "$dir/text.txt")" \
	    type=vcpu vcpu=0
	want "$r" user-unseen-exits 0 type=vcpu vcpu=0
	want "$r" error "$N" type=vcpu vcpu=0
	# The steps by reason, as the text's table.
	sed -n 's/^ *\([0-9][0-9]*\) *\([0-9.]*\)%  \([a-z-]*\)$/\3 \1 \2/p' "$dir/text.txt" \
	    >"$dir/steps.txt"
	while read -r s_why s_n s_pc; do
		want "$r" steps "$s_n" type=steps vcpu=0 reason="$s_why"
		want "$r" pcnt "$s_pc" type=steps vcpu=0 reason="$s_why"
	done <"$dir/steps.txt"
	[ "$(grep -c '^type=steps' "$r")" = "$(wc -l <"$dir/steps.txt")" ] ||
		fail "not as many steps records as the text's rows"
	;;

run_stdout)
	# --report -: standard output is the report's alone, the console on
	# standard error; -q with it: nothing on standard output.
	x stdout 0 "$run" --source exact -j --report - "$demo_elf"
	x parse 0 "$records" json "$dir/stdout.out"
	want "$dir/parse.out" counter-value 506 type=counter vcpu=0 counter=IA32_PMC0
	grep -qx "demo: counts match" "$dir/stdout.err" || fail "the console is not on standard error"
	grep -q "demo:" "$dir/stdout.out" && fail "the console on standard output"
	x quiet 0 "$run" --source exact -q -x , --report - "$demo_elf"
	[ -s "$dir/quiet.out" ] && fail "-q --report -: standard output not empty"
	grep -qx "demo: counts match" "$dir/quiet.err" || fail "-q: the console is not on standard error"
	# Without an output on standard output, the console is there as ever.
	x plain 0 "$run" --source exact -j "$demo_elf"
	grep -qx "demo: counts match" "$dir/plain.out" || fail "the console left standard output"
	x parse_err 0 "$records" json "$dir/plain.err"
	;;

run_escape)
	# A guest path with a quote, a backslash, a comma, a semicolon and a
	# byte that is not UTF-8: JSON escapes it (\u00ff: its Latin-1 reading),
	# CSV quotes it; both read back to the name.
	gname=$(printf 'a "b" \\c, d;\377.elf')
	cp "$hello_elf" "$dir/$gname" || exit 1
	x json 0 "$run" --source synthetic -j --report "$dir/r.json" "$dir/$gname"
	grep -qF "\"guest\": \"$dir/a \\\"b\\\" \\\\c, d;\\u00ff.elf\"" "$dir/r.json" ||
		fail "JSON: $(head -1 "$dir/r.json")"
	x parse 0 "$records" json "$dir/r.json"
	want "$dir/parse.out" guest "$dir/a \"b\" \\\\c, d;ÿ.elf" type=run
	esc=$(printf '%s' "2=$dir/$gname" | sed 's/\\/\\\\/g')
	for sep in , ';'; do
		x csv 0 "$run" --source synthetic -x "$sep" --report "$dir/r.csv" "$dir/$gname"
		x parse 0 "$records" csv "$sep" "$dir/r.csv"
		[ "$(sed -n 1p "$dir/parse.out" | cut -f2)" = "$esc" ] ||
			fail "CSV -x '$sep': $(head -1 "$dir/r.csv")"
		head -1 "$dir/r.csv" | grep -qF "run$sep\"$dir/a \"\"b\"\" \\c, d;" ||
			fail "CSV -x '$sep': not quoted: $(head -1 "$dir/r.csv")"
	done
	;;

run_marks)
	# Marks 1 and 2 bracket 2N + 8 = 2008 instructions (test/guests/marks.c).
	x text 0 "$run" --source exact --report "$dir/text.txt" "$marks_elf"
	x json 0 "$run" --source exact -j --report "$dir/r.json" "$marks_elf"
	x parse 0 "$records" json "$dir/r.json"
	r=$dir/parse.out
	a=$(get "$r" counted type=mark mark=1 vcpu=0 counter=IA32_PMC0) || fail "mark 1"
	b=$(get "$r" counted type=mark mark=2 vcpu=0 counter=IA32_PMC0) || fail "mark 2"
	[ $((b - a)) -eq 2008 ] || fail "from mark 1 to mark 2: $((b - a)), want 2008"
	want "$r" event instructions type=mark mark=2 vcpu=0 counter=IA32_PMC0
	want "$r" marks-taken 2 type=run
	want "$r" marks-dropped 0 type=run
	for m in 1 2; do
		t=$(awk -v m=$m '$1 == m && $3 == "IA32_PMC0" { print $5 }' "$dir/text.txt")
		[ -n "$t" ] || fail "the text's mark $m"
		want "$r" counted "$t" type=mark mark=$m vcpu=0 counter=IA32_PMC0
	done
	# PMC0 as the guest left it: preset to 0x123456 at mark 1, then 2008 more.
	want "$r" counter-value $((0x123456 + 2008)) type=counter vcpu=0 counter=IA32_PMC0
	want "$r" counter-value "$(table "$dir/text.txt" | awk '$2 == "IA32_PMC0" { print $4 }')" \
	    type=counter vcpu=0 counter=IA32_PMC0
	;;

stat_json)
	# From mark 1 to mark 2: 2008 instructions and 1000 branches
	# (test/guests/marks.c), system and process scope, in the three formats.
	opts="--source exact --from-mark 1 --to-mark 2 -w 0"
	x text 0 "$stat" $opts -s instructions,branches -p instructions -o "$dir/text.txt" \
	    "$marks_elf"
	same text "$dir/text.txt" <<EOF
vpmustat: totals
  s/00/instructions                 2008
  s/00/branches                     1000
  p/instructions                    2008
EOF
	x json 0 "$stat" $opts -s instructions,branches -p instructions -j -o "$dir/r.json" \
	    "$marks_elf"
	x csv 0 "$stat" $opts -s instructions,branches -p instructions -x , -o "$dir/r.csv" \
	    "$marks_elf"
	x pj 0 "$records" json "$dir/r.json"
	x pc 0 "$records" csv , "$dir/r.csv"
	r=$dir/pj.out
	[ "$(wc -l <"$r")" = 3 ] || fail "not 3 JSON records"
	want "$r" counter-value 2008 type=count label=s/00/instructions
	want "$r" vcpu 0 type=count label=s/00/instructions
	want "$r" scope system type=count label=s/00/instructions
	want "$r" event instructions type=count label=s/00/instructions
	want "$r" unit "" type=count label=s/00/instructions
	want "$r" counter-value 1000 type=count label=s/00/branches
	want "$r" event branches type=count label=s/00/branches
	want "$r" counter-value 2008 type=count label=p/instructions
	want "$r" vcpu null type=count label=p/instructions
	want "$r" scope process type=count label=p/instructions
	# CSV: type, time, vCPU, value, unit, event, scope, label.
	cut -f1,3- "$dir/pc.out" >"$dir/pc.fields"
	same csv_fields "$dir/pc.fields" <<EOF
1=count	3=0	4=2008	5=	6=instructions	7=system	8=s/00/instructions
1=count	3=0	4=1000	5=	6=branches	7=system	8=s/00/branches
1=count	3=	4=2008	5=	6=instructions	7=process	8=p/instructions
EOF
	# The run's time, the same in both: seconds with three decimals.
	awk -F'\t' '$2 !~ /^2=[0-9]+\.[0-9][0-9][0-9]$/ { exit 1 }' "$dir/pc.out" ||
		fail "CSV time: $(cat "$dir/r.csv")"
	want "$r" time "$(get "$r" time label=p/instructions)" label=s/00/branches
	# A time event's unit: ns.
	x clock 0 "$stat" --source exact -s instructions,task-clock -w 0 -j -o "$dir/c.json" \
	    "$marks_elf"
	x pclock 0 "$records" json "$dir/c.json"
	want "$dir/pclock.out" unit ns type=count label=s/00/task-clock
	want "$dir/pclock.out" unit "" type=count label=s/00/instructions
	;;

stat_interval)
	# -w 1 on a guest that never exits, stopped by --timeout 2 (status
	# 124): a record "interval" per PMC each second, then "count".
	x run 124 "$stat" --source synthetic -s instructions,task-clock -w 1 -x , -o "$dir/r.csv" \
	    --timeout 2 "$spin_elf"
	x parse 0 "$records" csv , "$dir/r.csv"
	awk -F'\t' '
	    $1 == "1=interval" { n[$8]++; if ($2 !~ /^2=[0-9]+\.[0-9][0-9][0-9]$/) bad = 1 }
	    $1 == "1=count" { c[$8]++; if ($2 !~ /^2=[2-9]\.[0-9][0-9][0-9]$/) bad = 1 }
	    $1 != "1=interval" && $1 != "1=count" { bad = 1 }
	    END { exit !(!bad && n["8=s/00/instructions"] >= 1 && n["8=s/00/task-clock"] >= 1 &&
	        c["8=s/00/instructions"] == 1 && c["8=s/00/task-clock"] == 1) }' \
	    "$dir/parse.out" || fail "the records: $(cat "$dir/r.csv")"
	grep -q '^interval,1\.[0-9]*,0,[0-9]*,ns,task-clock,system,s/00/task-clock$' "$dir/r.csv" ||
		fail "no first row of task-clock: $(cat "$dir/r.csv")"
	;;

stat_stdout)
	# -o -: the counts alone on standard output, the console on standard error.
	x counts 0 "$stat" --source exact --from-mark 1 --to-mark 2 -w 0 -s instructions -j \
	    -o - "$marks_elf"
	x parse 0 "$records" json "$dir/counts.out"
	want "$dir/parse.out" counter-value 2008 type=count label=s/00/instructions
	grep -q "^marks: PMC0 " "$dir/counts.err" || fail "-o -: the console is not on standard error"
	# A file of a run on standard output: 2008 / 101 = 19 samples folded.
	x folded 0 "$stat" -q -S instructions -n 101 --tunable mincount=1 --source exact \
	    --from-mark 1 --to-mark 2 --folded - "$marks_elf"
	[ "$(awk '{ n += $NF } END { print n }' "$dir/folded.out")" = 19 ] ||
		fail "--folded -: not 19 samples: $(cat "$dir/folded.out")"
	grep -q "^marks: PMC0 " "$dir/folded.err" || fail "--folded -: the console is not on standard error"
	# -O -: the log on standard output, read back by -R.
	x log 0 "$stat" -q -S instructions -n 101 --tunable mincount=1 --source exact \
	    --from-mark 1 --to-mark 2 -O - "$marks_elf"
	x read 0 "$stat" -R - <"$dir/log.out"
	grep -qx "event instructions: 19 samples (0 in user mode)" "$dir/read.out" ||
		fail "-O - read back: $(cat "$dir/read.out")"
	;;

stdin)
	# The guest, and a Multiboot module, from standard input.
	x guest 0 "$run" --source synthetic -q - <"$hello_elf"
	grep -qx "hello from vCPU 0" "$dir/guest.out" || fail "guest -: $(cat "$dir/guest.out")"
	x module 33 "$run" --source synthetic -q --append "hello world" --initrd - "$mb_elf" \
	    <"$mb_mod"
	grep -q " mods 00000001 .* mod <KEY=value|N=2|> " "$dir/module.out" ||
		fail "--initrd -: $(cat "$dir/module.out")"
	;;

snapshot_pipe)
	# --snapshot - into --resume -: the exact counts of an uninterrupted run.
	"$run" -q --source exact --snapshot - "$snap_elf" 2>"$dir/save.err" |
	    "$run" -q --source exact --resume - "$snap_elf" >"$dir/resume.out" 2>"$dir/resume.err"
	st=$?
	[ $st -eq 77 ] && { echo "cli.sh: skipped (no usable /dev/kvm)"; exit 77; }
	[ $st -eq 0 ] || { cat "$dir/save.err" "$dir/resume.err"; fail "resume exited $st"; }
	grep -qx "snapshot guest: mid 40003 final 100009 branches 15000 status 0x2" \
	    "$dir/resume.out" || fail "resume -: $(cat "$dir/resume.out" "$dir/resume.err")"
	[ -s "$dir/save.err" ] && fail "--snapshot -: $(cat "$dir/save.err")"
	;;

*)
	echo "cli.sh: no case $case"
	exit 2 ;;
esac
echo "cli.sh: $case: ok"
exit 0
