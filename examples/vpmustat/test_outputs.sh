#!/bin/sh
# test_outputs.sh VPMUSTAT TEST_FLATLOG HOT.elf WORKDIR CASE
#
# vpmustat's outputs and errors where no guest runs (no /dev/kvm): logs
# written by test_flatlog.c, read with -R, or runs that fail before the
# guest boots.  HOT.elf is examples/guests/hot.c's ELF, for its symbols
# and its code; the samples are made up at its functions' addresses (nm).
# Each CASE checks exit statuses, exact messages, and which files exist:
#
#   open_first     a bad -G / --folded / --svg path fails at once, status 2,
#                  before the guest boots or the log is read; the files
#                  opened before it are removed
#   pipe_cut       a log cut inside its last record is an error read from
#                  a file, standard input (-), /dev/stdin and a FIFO alike:
#                  status 1, one message, the same report; a whole log
#                  through a pipe reads as from the file
#   no_files_on_error  a log cut short, or --event with no samples: no
#                  -G/--folded/--svg file, no "flame graph:" line, and a
#                  file that was there is left as it was
#   tunable        --tunable errors: status 2, the reason and the tunables
#   write_errors   /dev/full as -G, --folded, --svg, standard output: status
#                  1 and a message; a regular file cut short is removed
#   cpus           the per-vCPU breakdown; -R -c filters by the records'
#                  CPU; -c errors, live -c checked against --vcpus
#   chains         with the ELF, a chain is cut at its first return address
#                  outside the code; without it, not; the one-frame warning
#                  for -N logs and logs without frame pointers
#   no_edges       -R -G on logs with no call-graph edge, without the ELF:
#                  three samples one frame deep (one in user mode), and no
#                  samples (the event "(none)"): status 0, the report, the
#                  call graph, folded stacks and messages, all exact.  Under
#                  the sanitizer build (test/build-with.sh) also the check
#                  that no memcpy() or qsort() gets a null pointer for an
#                  empty array
#   perf_script    --perf-script: the exact text of a log, and through a
#                  reader written from the format (test_formats.awk) the
#                  same stacks and counts as --folded, with and without the
#                  ELF; "-" with -q a pipe's only text; without -q the report
#                  goes to standard error; the period and a process's name
#                  where the log gives them (PMCALLOCATE, PMCATTACH)
#   pprof          --pprof: gzip, then protoc --decode with a schema written
#                  from profile.proto's field numbers (pprof.proto): the
#                  stacks, the sums of samples and events, the sample types,
#                  the period, the mapping's file, all exact
#   pprof_go       the same profile read by go tool pprof -top (skipped
#                  without Debian's golang-go): hot 3 of 4, cold 1, main
#                  under 3
#   quiet          -q: nothing on standard output or standard error but
#                  errors; two files on standard output refused
#   image          the image a log records (MAP_IN, then its build-id in
#                  USERDATA words, as a run writes them): -R names it;
#                  -R --elf of that ELF reads; of another ELF (another
#                  build-id, or none) is refused with status 2, exact
#                  messages, no report and no files
#   flame_script   --svg: well-formed XML (xmllint), the script's syntax
#                  (node --check, where node is), each frame's data for
#                  the script (name, offset, width, row), exact
set -u
vs=$1 gen=$2 elf=$3 dir=$4 case=$5
src=$(dirname "$0")

. "$src/test_lib.sh"

absent() {
	for f in "$@"; do
		[ -e "$f" ] && fail "$f exists"
	done
	return 0
}

addr() {
	a=$(nm "$elf" | sed -n "s/^\([0-9a-f]*\) [Tt] $1\$/\1/p")
	[ -n "$a" ] || fail "no $1 in $elf"
	echo $((0x$a))
}

rm -rf "$dir" && mkdir -p "$dir" || exit 1
command -v nm >/dev/null || { echo "test_outputs.sh: skipped (no nm)"; exit 77; }
hot=$(addr hot) cold=$(addr cold) work=$(addr work) main=$(addr main)
# Four samples: main;work;hot on vCPUs 0 and 1, main;work;cold on 2, and
# on 0 one whose second frame (0x7e0001) is no code of hot.elf.
cat >"$dir/deep.txt" <<EOF
0 $((hot + 4)),$((work + 0x10)),$((main + 0x10))
1 $((hot + 4)),$((work + 0x10)),$((main + 0x10))
2 $((cold + 4)),$((work + 0x20)),$((main + 0x10))
0 $((hot + 8)),0x7e0001,$((main + 0x10))
EOF
"$gen" -o "$dir/deep.log" <"$dir/deep.txt" || fail "test_flatlog -o deep.log"
"$gen" -o "$dir/cut.log" -t 10 <"$dir/deep.txt" || fail "test_flatlog -o cut.log"
hx() { printf '%-18s' "$(printf '%#x' "$1")"; }

case $case in
open_first)
	# A run: -G opens first, then --svg fails; no KVM is touched.
	run live 2 -S instructions -G "$dir/live.graph" --svg /nonexistent/dir/x.svg "$elf"
	same live.err "$dir/live.err" <<'EOF'
vpmustat: --svg /nonexistent/dir/x.svg: No such file or directory
EOF
	absent "$dir/live.graph"
	for opt in -G --folded; do
		run "live$opt" 2 -S instructions "$opt" /nonexistent/dir/x "$elf"
		same "live$opt.err" "$dir/live$opt.err" <<EOF
vpmustat: $opt /nonexistent/dir/x: No such file or directory
EOF
	done
	# -R: nothing is read (no report), nothing is left.
	run read 2 -R "$dir/deep.log" --folded "$dir/read.folded" --svg /nonexistent/dir/x.svg
	same read.err "$dir/read.err" <<'EOF'
vpmustat: --svg /nonexistent/dir/x.svg: No such file or directory
EOF
	[ -s "$dir/read.out" ] && fail "a report though an output cannot be opened"
	absent "$dir/read.folded"
	# -R - : standard input is not read either.
	printf 'x' | "$vs" -R - -G /nonexistent/dir/x >"$dir/stdin.out" 2>"$dir/stdin.err"
	[ $? -eq 2 ] || fail "-R - with a bad -G: status $?"
	same stdin.err "$dir/stdin.err" <<'EOF'
vpmustat: -G /nonexistent/dir/x: No such file or directory
EOF
	;;
pipe_cut)
	msg="the log ends inside a record: 6 bytes after offset 432 are not a whole record (the report has the records before)"
	run file 1 -R "$dir/cut.log" --elf "$elf"
	same file.err "$dir/file.err" <<EOF
vpmustat: $dir/cut.log: $msg
EOF
	"$vs" -R - --elf "$elf" <"$dir/cut.log" >"$dir/redir.out" 2>"$dir/redir.err"
	[ $? -eq 1 ] || fail "-R - <cut.log: status $?"
	cat "$dir/cut.log" | "$vs" -R - --elf "$elf" >"$dir/pipe.out" 2>"$dir/pipe.err"
	[ $? -eq 1 ] || fail "cat cut.log | -R -: status $?"
	cat "$dir/cut.log" | "$vs" -R /dev/stdin --elf "$elf" >"$dir/devstdin.out" \
	    2>"$dir/devstdin.err"
	[ $? -eq 1 ] || fail "cat cut.log | -R /dev/stdin: status $?"
	mkfifo "$dir/fifo" || fail "mkfifo"
	cat "$dir/cut.log" >"$dir/fifo" &
	writer=$!
	"$vs" -R "$dir/fifo" --elf "$elf" >"$dir/fifo.out" 2>"$dir/fifo.err"
	st=$?
	kill "$writer" 2>/dev/null	# if vpmustat never opened the FIFO
	wait
	[ $st -eq 1 ] || fail "-R FIFO: status $st"
	for how in redir pipe devstdin fifo; do
		cmp -s "$dir/file.out" "$dir/$how.out" || {
			diff "$dir/file.out" "$dir/$how.out"
			fail "$how: not the report of the file"
		}
	done
	same redir.err "$dir/redir.err" <<EOF
vpmustat: -: $msg
EOF
	same pipe.err "$dir/pipe.err" <<EOF
vpmustat: -: $msg
EOF
	same devstdin.err "$dir/devstdin.err" <<EOF
vpmustat: /dev/stdin: $msg
EOF
	same fifo.err "$dir/fifo.err" <<EOF
vpmustat: $dir/fifo: $msg
EOF
	# The whole log: status 0 through a pipe as from the file.
	run whole 0 -R "$dir/deep.log" --elf "$elf"
	cat "$dir/deep.log" | "$vs" -R - --elf "$elf" >"$dir/wpipe.out" 2>"$dir/wpipe.err"
	[ $? -eq 0 ] || fail "cat deep.log | -R -: status $?"
	cmp -s "$dir/whole.out" "$dir/wpipe.out" || fail "a whole log through a pipe"
	[ -s "$dir/wpipe.err" ] && fail "a whole log through a pipe: a message"
	;;
no_files_on_error)
	echo keep >"$dir/keep.svg"
	run cut 1 -R "$dir/cut.log" --elf "$elf" --svg "$dir/x.svg" -G "$dir/x.graph" \
	    --folded "$dir/x.folded"
	same cut.err "$dir/cut.err" <<EOF
vpmustat: $dir/cut.log: the log ends inside a record: 6 bytes after offset 432 are not a whole record (the report has the records before; -G, --folded and --svg not written)
EOF
	absent "$dir/x.svg" "$dir/x.graph" "$dir/x.folded"
	grep -q "flame graph" "$dir/cut.out" && fail "a flame graph announced"
	run keep 1 -R "$dir/cut.log" --svg "$dir/keep.svg"
	same keep.svg "$dir/keep.svg" <<'EOF'
keep
EOF
	run event 2 -R "$dir/deep.log" --svg "$dir/x.svg" --event branches
	same event.err "$dir/event.err" <<'EOF'
vpmustat: --event branches: no samples of it in the log: -G, --folded and --svg not written
EOF
	absent "$dir/x.svg"
	# The same with a whole log: written and announced.
	run ok 0 -R "$dir/deep.log" --svg "$dir/x.svg"
	grep -q "<svg" "$dir/x.svg" || fail "no SVG from a whole log"
	[ "$(tail -n 1 "$dir/ok.out")" = "vpmustat: flame graph: $dir/x.svg" ] ||
		fail "the flame graph not announced"
	;;
tunable)
	names="vpmustat: the tunables are callchaindepth, hashsize, logbuffersize, mincount, mtxpoolsize, nbuffers_pcpu, nsamples, unprivileged_syspmcs, unprivileged_proc_debug (or kern.hwpmc.NAME, security.bsd.NAME; see vpmu(3))"
	run name 2 -S instructions --tunable nosuch=1 "$elf"
	same name.err "$dir/name.err" <<EOF
vpmustat: --tunable nosuch: no such tunable
$names
EOF
	run form 2 -S instructions --tunable nsamples "$elf"
	same form.err "$dir/form.err" <<EOF
vpmustat: --tunable nsamples: want NAME=VALUE
$names
EOF
	run value 2 -S instructions --tunable kern.hwpmc.nsamples=4x "$elf"
	same value.err "$dir/value.err" <<EOF
vpmustat: --tunable kern.hwpmc.nsamples=4x: the value is not a whole number from -2147483648 to 2147483647
$names
EOF
	run range 2 -S instructions --tunable nsamples=0 "$elf"
	same range.err "$dir/range.err" <<EOF
vpmustat: --tunable: hwpmc: tunable nsamples=0 out of range.
$names
EOF
	run product 2 -S instructions --tunable nbuffers_pcpu=1024 --tunable logbuffersize=1024 "$elf"
	same product.err "$dir/product.err" <<EOF
vpmustat: --tunable: hwpmc: nbuffers_pcpu=1024 * logbuffersize=1024 exceeds 32MB per CPU limit, resetting to defaults (32 * 256).
$names
EOF
	for f in name form value range product; do
		[ -s "$dir/$f.out" ] && fail "$f: standard output"
	done
	;;
write_errors)
	for opt in -G --folded --svg; do
		run "full$opt" 1 -R "$dir/deep.log" --elf "$elf" "$opt" /dev/full
		same "full$opt.err" "$dir/full$opt.err" <<EOF
vpmustat: $opt /dev/full: No space left on device
EOF
	done
	"$vs" -R "$dir/deep.log" >/dev/full 2>"$dir/stdout.err"
	[ $? -eq 1 ] || fail "-R with standard output on /dev/full: status $?"
	same stdout.err "$dir/stdout.err" <<'EOF'
vpmustat: standard output: No space left on device
EOF
	# (The report goes to standard error when a file goes to standard output.)
	"$vs" -R "$dir/deep.log" --folded - >/dev/full 2>"$dir/dash.all"
	[ $? -eq 1 ] || fail "--folded - on /dev/full: status $?"
	grep -q '^event instructions: 4 samples' "$dir/dash.all" ||
		fail "--folded -: no report on standard error"
	tail -n 1 "$dir/dash.all" >"$dir/dash.err"
	same dash.err "$dir/dash.err" <<'EOF'
vpmustat: standard output: No space left on device
EOF
	"$vs" --help >/dev/full 2>"$dir/help.err"
	[ $? -eq 1 ] || fail "--help on /dev/full: status $?"
	same help.err "$dir/help.err" <<'EOF'
vpmustat: standard output: No space left on device
EOF
	# A regular file cut short (the file size limit, SIGXFSZ ignored):
	# removed, not left half written.
	echo keep >"$dir/big.svg"
	sh -c 'trap "" XFSZ; ulimit -f 1; exec "$@"' sh "$vs" -R "$dir/deep.log" \
	    --elf "$elf" --svg "$dir/big.svg" >/dev/null 2>"$dir/big.err"
	[ $? -eq 1 ] || fail "--svg past the file size limit: status $?"
	same big.err "$dir/big.err" <<EOF
vpmustat: --svg $dir/big.svg: File too large
EOF
	absent "$dir/big.svg"
	;;
cpus)
	run all 0 -R "$dir/deep.log" --elf "$elf" --top 2
	{
		cat <<'EOF'
vpmustat: 7 records, 448 bytes; INITIALIZE first, CLOSELOG last; 4 CALLCHAIN, 0 DROPNOTIFY
vpmustat: 1 call chain cut at a return address outside the ELF's code

event instructions: 4 samples (0 in user mode)
  vCPU 0: 2 samples (50.00%)
  vCPU 1: 1 sample (25.00%)
  vCPU 2: 1 sample (25.00%)
    self%      self  total%     total  function
    75.00         3   75.00         3  hot
    25.00         1   25.00         1  cold
  (2 more functions)
  hottest addresses:
EOF
		echo "    50.00         2  $(hx $((hot + 4))) hot+0x4"
		# equal counts: by address (of one length: sorted as text)
		{
			echo "    25.00         1  $(hx $((hot + 8))) hot+0x8"
			echo "    25.00         1  $(hx $((cold + 4))) cold+0x4"
		} | sort -k3,3
	} >"$dir/all.want2"
	same all.out "$dir/all.out" <"$dir/all.want2"
	run some 0 -R "$dir/deep.log" --elf "$elf" -c 0,2 --top 0 --folded "$dir/some.folded"
	{
		cat <<'EOF'
vpmustat: 7 records, 448 bytes; INITIALIZE first, CLOSELOG last; 4 CALLCHAIN, 0 DROPNOTIFY
vpmustat: -c 0,2: 1 sample of other vCPUs left out
vpmustat: 1 call chain cut at a return address outside the ELF's code

event instructions: 3 samples (0 in user mode)
  vCPU 0: 2 samples (66.67%)
  vCPU 2: 1 sample (33.33%)
    self%      self  total%     total  function
    66.67         2   66.67         2  hot
    33.33         1   33.33         1  cold
     0.00         0   66.67         2  main
     0.00         0   66.67         2  work
  hottest addresses:
EOF
		{
			echo "    33.33         1  $(hx $((cold + 4))) cold+0x4"
			echo "    33.33         1  $(hx $((hot + 4))) hot+0x4"
			echo "    33.33         1  $(hx $((hot + 8))) hot+0x8"
		} | sort -k3,3
	} >"$dir/some.want2"
	same some.out "$dir/some.out" <"$dir/some.want2"
	same some.folded "$dir/some.folded" <<'EOF'
hot 1
main;work;cold 1
main;work;hot 1
EOF
	run range 0 -R "$dir/deep.log" -c 1-2
	grep -q "^vpmustat: -c 1-2: 2 samples of other vCPUs left out$" "$dir/range.out" ||
		fail "-c 1-2 does not leave 2 samples out"
	run star 0 -R "$dir/deep.log" -c '*'
	run nostar 0 -R "$dir/deep.log"
	cmp -s "$dir/star.out" "$dir/nostar.out" || fail "-c '*' is not every vCPU"
	for spec in 2-1 65536 x 0, ''; do
		run bad 2 -R "$dir/deep.log" -c "$spec"
		head -n 1 "$dir/bad.err" >"$dir/bad.first"
		same bad.first "$dir/bad.first" <<EOF
vpmustat: -c $spec: want CPU numbers from 0 to 65535 and ranges N-M, joined by commas, or *
EOF
	done
	run twice 2 -R "$dir/deep.log" -c 0 -c 1
	head -n 1 "$dir/twice.err" >"$dir/twice.first"
	same twice.first "$dir/twice.first" <<'EOF'
vpmustat: -R reads a log: one -c at most
EOF
	# A run: the vCPUs exist (no KVM touched), -c comes before its -S / -s.
	run novcpu 2 -c 0,2 -S instructions --vcpus 2 "$elf"
	same novcpu.err "$dir/novcpu.err" <<'EOF'
vpmustat: -c 0,2: no vCPU 2: the guest has 2 (--vcpus)
EOF
	run late 2 -S instructions -c 0 "$elf"
	head -n 1 "$dir/late.err" >"$dir/late.first"
	same late.first "$dir/late.first" <<'EOF'
vpmustat: -c 0: it sets the vCPUs of the -S and -s options after it, and none follows
EOF
	run proc 2 -c 0 -P instructions "$elf"
	head -n 1 "$dir/proc.err" >"$dir/proc.first"
	same proc.first "$dir/proc.first" <<'EOF'
vpmustat: -c 0: it sets the vCPUs of the -S and -s options after it, and none follows
EOF
	;;
chains)
	# With --elf: cut at 0x7e0001 (a chain of hot alone); without: kept.
	run elf 0 -R "$dir/deep.log" --elf "$elf" --folded "$dir/elf.folded"
	same elf.folded "$dir/elf.folded" <<'EOF'
hot 1
main;work;cold 1
main;work;hot 2
EOF
	[ -s "$dir/elf.err" ] && fail "deep chains: a message on standard error"
	run noelf 0 -R "$dir/deep.log" --folded "$dir/noelf.folded"
	grep -q "cut at" "$dir/noelf.out" && fail "a chain cut without --elf"
	printf '%#x;0x7e0001;%#x 1\n' $((main + 0x10)) $((hot + 8)) >"$dir/noelf.want2"
	grep -qxF -f "$dir/noelf.want2" "$dir/noelf.folded" ||
		fail "without --elf the chain through 0x7e0001 is not whole"
	# One frame deep: from a PMC with call chains (no frame pointers) ...
	printf '0 %d\n0 %d\n' $((hot + 4)) $((cold + 4)) | "$gen" -o "$dir/flat.log"
	run flat 0 -R "$dir/flat.log" --elf "$elf" --svg "$dir/flat.svg"
	same flat.err "$dir/flat.err" <<'EOF'
vpmustat: warning: every call chain of event instructions is one frame deep: -G, --folded and --svg show no callers; build the guest with -fno-omit-frame-pointer (and -mno-omit-leaf-frame-pointer)
EOF
	# ... and from one without (-N).
	printf '0 %d\n0 %d\n' $((hot + 4)) $((cold + 4)) | "$gen" -N -o "$dir/nocc.log"
	run nocc 0 -R "$dir/nocc.log" --elf "$elf" -G "$dir/nocc.graph"
	same nocc.err "$dir/nocc.err" <<'EOF'
vpmustat: warning: event instructions was sampled without call chains (-N): -G, --folded and --svg show no callers
EOF
	# No warning without -G, --folded or --svg.
	run quiet 0 -R "$dir/nocc.log" --elf "$elf"
	[ -s "$dir/quiet.err" ] && fail "a warning with no -G, --folded or --svg"
	;;
no_edges)
	# One frame each (npc 1: no caller, so no edge): 0x401000 twice, the
	# second in user mode, 0x402000 once.  And a log without samples.
	printf '0 0x401000\n0u 0x401000\n0 0x402000\n' | "$gen" -o "$dir/flat.log" ||
		fail "test_flatlog -o flat.log"
	"$gen" -o "$dir/empty.log" </dev/null || fail "test_flatlog -o empty.log"
	run flat 0 -R "$dir/flat.log" -G "$dir/flat.graph" --folded "$dir/flat.folded"
	same flat.err "$dir/flat.err" <<'EOF'
vpmustat: warning: every call chain of event instructions is one frame deep: -G, --folded and --svg show no callers; build the guest with -fno-omit-frame-pointer (and -mno-omit-leaf-frame-pointer)
EOF
	same flat.out "$dir/flat.out" <<'EOF'
vpmustat: 6 records, 344 bytes; INITIALIZE first, CLOSELOG last; 3 CALLCHAIN, 0 DROPNOTIFY (no symbols: give --elf)

event instructions: 3 samples (1 in user mode)
  vCPU 0: 3 samples (100.00%)
    self%      self  total%     total  function
    66.67         2   66.67         2  0x401000
    33.33         1   33.33         1  0x402000
  hottest addresses:
    66.67         2  0x401000           
    33.33         1  0x402000           
EOF
	same flat.graph "$dir/flat.graph" <<'EOF'
# vpmustat call graph: event instructions, 3 samples
# caller -> callee: samples with the call on the stack, % of all; self: samples in the function itself
EOF
	same flat.folded "$dir/flat.folded" <<'EOF'
0x401000 2
0x402000 1
EOF
	run empty 0 -R "$dir/empty.log" -G "$dir/empty.graph"
	same empty.err "$dir/empty.err" <<'EOF'
vpmustat: no samples in the log: -G, --folded and --svg are empty
EOF
	same empty.out "$dir/empty.out" <<'EOF'
vpmustat: 3 records, 224 bytes; INITIALIZE first, CLOSELOG last; 0 CALLCHAIN, 0 DROPNOTIFY (no symbols: give --elf)
no samples in the log
EOF
	same empty.graph "$dir/empty.graph" <<'EOF'
# vpmustat call graph: event (none), 0 samples
# caller -> callee: samples with the call on the stack, % of all; self: samples in the function itself
EOF
	;;
perf_script)
	fold() { awk -v fmt=perf -f "$src/test_formats.awk" "$1" | sort; }
	run elf 0 -R "$dir/deep.log" --elf "$elf" --perf-script "$dir/elf.perf" \
	    --folded "$dir/elf.folded"
	{
		for s in "0 $((hot + 4)) $((work + 0x10))" "1 $((hot + 4)) $((work + 0x10))" \
		    "2 $((cold + 4)) $((work + 0x20))"; do
			set -- $s
			printf 'hot.elf 1/1 [%03d] 0.000001: instructions:\n' "$1"
			printf '\t%16x %s+0x4 (%s)\n' "$2" "$([ "$2" = $((hot + 4)) ] &&
			    echo hot || echo cold)" "$elf"
			printf '\t%16x work+0x%x (%s)\n' "$3" $(($3 - work)) "$elf"
			printf '\t%16x main+0x10 (%s)\n\n' $((main + 0x10)) "$elf"
		done
		printf 'hot.elf 1/1 [000] 0.000001: instructions:\n'
		printf '\t%16x hot+0x8 (%s)\n\n' $((hot + 8)) "$elf"
	} >"$dir/elf.perf.want2"
	same elf.perf "$dir/elf.perf" <"$dir/elf.perf.want2"
	fold "$dir/elf.perf" >"$dir/elf.stacks"
	{ sort "$dir/elf.folded"; echo "samples 4"; } | same elf.stacks "$dir/elf.stacks"
	# Without the ELF: addresses, the chain through 0x7e0001 whole.
	run noelf 0 -R "$dir/deep.log" --perf-script "$dir/noelf.perf" --folded \
	    "$dir/noelf.folded"
	grep -q '^	          7e0001 \[unknown\] (\[unknown\])$' "$dir/noelf.perf" ||
		fail "no [unknown] frame at 0x7e0001"
	fold "$dir/noelf.perf" >"$dir/noelf.stacks"
	{ sort "$dir/noelf.folded"; echo "samples 4"; } | same noelf.stacks "$dir/noelf.stacks"
	# A pipe: -q leaves the text alone on standard output.
	"$vs" -R "$dir/deep.log" --elf "$elf" --perf-script - -q 2>"$dir/pipe.err" |
	    awk -v fmt=perf -f "$src/test_formats.awk" | sort >"$dir/pipe.stacks"
	same pipe.stacks "$dir/pipe.stacks" <"$dir/elf.stacks"
	[ -s "$dir/pipe.err" ] && fail "-q: standard error: $(cat "$dir/pipe.err")"
	# Without -q: the report on standard error, the text alone on standard output.
	run dash 0 -R "$dir/deep.log" --elf "$elf" --perf-script -
	same dash.out "$dir/dash.out" <"$dir/elf.perf"
	head -n 1 "$dir/dash.err" >"$dir/dash.first"
	same dash.first "$dir/dash.first" <<'EOF'
vpmustat: 7 records, 448 bytes; INITIALIZE first, CLOSELOG last; 4 CALLCHAIN, 0 DROPNOTIFY
EOF
	# The period (PMCALLOCATE's rate), the process (PMCATTACH), --event.
	printf '3 %d,%d\n' $((hot + 4)) $((work + 0x10)) |
	    "$gen" -r 1009 -p /guests/app.elf -o "$dir/rate.log" || fail "test_flatlog -r"
	run rate 0 -R "$dir/rate.log" --perf-script "$dir/rate.perf" --event 'event 0xc0'
	printf 'app.elf 1/1 [003] 0.000001: 1009 event_0xc0:\n\t%16x [unknown] ([unknown])\n\t%16x [unknown] ([unknown])\n\n' \
	    $((hot + 4)) $((work + 0x10)) | same rate.perf "$dir/rate.perf"
	;;
pprof_go)
	# The profile read by the reader pprof users have: go tool pprof
	# (Debian's golang-go, not installed by cmake/deps.sh: a 335 MB toolchain).
	command -v go >/dev/null || { echo "skipped: no go (golang-go): go tool pprof cannot read the profile here"; exit 77; }
	"$gen" -r 1009 -o "$dir/rate.log" <"$dir/deep.txt" || fail "test_flatlog -r"
	run rate 0 -R "$dir/rate.log" --elf "$elf" --pprof "$dir/rate.pb.gz"
	HOME=$dir GOCACHE=$dir/gocache go tool pprof -top -nodecount=10 -sample_index=samples "$dir/rate.pb.gz" \
	    >"$dir/top.txt" 2>"$dir/top.err" || { cat "$dir/top.err"; fail "go tool pprof -top"; }
	cat "$dir/top.txt"
	grep -q '^Type: samples$' "$dir/top.txt" || fail "go tool pprof: not Type: samples"
	grep -Eq '^ +3 +75\.00% +75\.00% +3 +75\.00% +hot$' "$dir/top.txt" || fail "go tool pprof: hot is not 3 of 4 (75%)"
	grep -Eq '^ +1 +25\.00% +100% +1 +25\.00% +cold$' "$dir/top.txt" || fail "go tool pprof: cold is not 1 of 4"
	grep -Eq '^ +0 +0% +100% +3 +75\.00% +main$' "$dir/top.txt" || fail "go tool pprof: main is not on 3 of 4"
	;;
pprof)
	decode() {
		gzip -t "$1" || fail "$1: not gzip"
		gzip -dc "$1" | protoc -I "$src" --decode=vpmustat_test.Profile \
		    "$src/pprof.proto" >"$1.txt" || fail "$1: protoc --decode"
		awk -v fmt=pprof -f "$src/test_formats.awk" "$1.txt" | sort
	}
	command -v protoc >/dev/null || fail "no protoc (cmake/deps.sh installs protobuf-compiler)"
	"$gen" -r 1009 -o "$dir/rate.log" <"$dir/deep.txt" || fail "test_flatlog -r"
	run rate 0 -R "$dir/rate.log" --elf "$elf" --pprof "$dir/rate.pb.gz"
	decode "$dir/rate.pb.gz" >"$dir/rate.got"
	sort >"$dir/rate.want2" <<EOF
hot 1
main;work;cold 1
main;work;hot 2
types samples/count event 0xc0/count
sum 1 4
sum 2 4036
period 1009
file $elf
EOF
	same rate.got "$dir/rate.got" <"$dir/rate.want2"
	grep -qx 'duration_nanos: 1000' "$dir/rate.pb.gz.txt" ||
		fail "duration_nanos is not 1000 (TSC 1000 to 2000 at 1 GHz)"
	# No rate in the log (PMCALLOCATEDYN), no ELF: samples only, addresses.
	run dyn 0 -R "$dir/deep.log" --pprof "$dir/dyn.pb.gz"
	decode "$dir/dyn.pb.gz" >"$dir/dyn.got"
	sort >"$dir/dyn.want2" <<EOF
$(printf '%#x;%#x;%#x 2' $((main + 0x10)) $((work + 0x10)) $((hot + 4)))
$(printf '%#x;%#x;%#x 1' $((main + 0x10)) $((work + 0x20)) $((cold + 4)))
$(printf '%#x;0x7e0001;%#x 1' $((main + 0x10)) $((hot + 8)))
types samples/count
sum 1 4
period 
file guest
EOF
	same dyn.got "$dir/dyn.got" <"$dir/dyn.want2"
	# Standard output, with -q: the file alone.
	"$vs" -R "$dir/rate.log" --elf "$elf" --pprof - -q >"$dir/dash.pb.gz" 2>"$dir/dash.err" ||
		fail "--pprof -: status $?"
	cmp -s "$dir/dash.pb.gz" "$dir/rate.pb.gz" || fail "--pprof - is not the file's bytes"
	[ -s "$dir/dash.err" ] && fail "--pprof - -q: standard error"
	run full 1 -R "$dir/rate.log" --pprof /dev/full
	same full.err "$dir/full.err" <<'EOF'
vpmustat: --pprof /dev/full: No space left on device
EOF
	;;
quiet)
	run all 0 -R "$dir/deep.log" --elf "$elf" -q --svg "$dir/q.svg" -G "$dir/q.graph"
	[ -s "$dir/all.out" ] && fail "-q: standard output"
	[ -s "$dir/all.err" ] && fail "-q: standard error"
	grep -q '<svg' "$dir/q.svg" || fail "-q: no SVG"
	# The warning of one-frame chains is not an error: quiet too.
	printf '0 %d\n' $((hot + 4)) | "$gen" -o "$dir/flat.log"
	run flat 0 -R "$dir/flat.log" --folded "$dir/flat.folded" --quiet
	[ -s "$dir/flat.out" ] || [ -s "$dir/flat.err" ] && fail "-q: the warning"
	# Errors are said.
	run cut 1 -R "$dir/cut.log" -q
	same cut.err "$dir/cut.err" <<EOF
vpmustat: $dir/cut.log: the log ends inside a record: 6 bytes after offset 432 are not a whole record
EOF
	run cutf 1 -R "$dir/cut.log" -q --pprof "$dir/cut.pb.gz"
	same cutf.err "$dir/cutf.err" <<EOF
vpmustat: $dir/cut.log: the log ends inside a record: 6 bytes after offset 432 are not a whole record (no file written)
EOF
	absent "$dir/cut.pb.gz"
	[ -s "$dir/cut.out" ] && fail "-q: standard output of a cut log"
	run two 2 -R "$dir/deep.log" --folded - --perf-script - -q
	same two.err "$dir/two.err" <<'EOF'
vpmustat: --folded - and --perf-script -: one file at most on standard output
EOF
	;;
image)
	command -v readelf >/dev/null || { echo "test_outputs.sh: skipped (no readelf)"; exit 77; }
	# test_flatlog's own build-id (gcc's default): the image's identity.
	bid=$(readelf -n "$gen" | sed -n 's/^ *Build ID: *\([0-9a-f]*\)$/\1/p')
	[ -n "$bid" ] || fail "$gen has no build-id"
	# words BID: the tag word, then the bytes four to a word, the first lowest.
	words() {
		h=$1
		printf -- '-u %d' $((0x42494400 | ${#h} / 2))
		while [ -n "$h" ]; do
			w=$(printf '%-8s' "$(echo "$h" | cut -c1-8)" | tr ' ' 0)
			printf ' -u 0x%s%s%s%s' "$(echo "$w" | cut -c7-8)" \
			    "$(echo "$w" | cut -c5-6)" "$(echo "$w" | cut -c3-4)" \
			    "$(echo "$w" | cut -c1-2)"
			h=$(echo "$h" | cut -c9-)
		done
	}
	"$gen" -m /guests/app.elf $(words "$bid") -o "$dir/img.log" <"$dir/deep.txt" ||
		fail "test_flatlog -m"
	run named 0 -R "$dir/img.log"
	sed -n 2p "$dir/named.out" >"$dir/named.second"
	same named.second "$dir/named.second" <<EOF
vpmustat: the samples are of /guests/app.elf, at 0x100000, build-id $bid
EOF
	run same 0 -R "$dir/img.log" --elf "$gen"
	[ -s "$dir/same.err" ] && fail "--elf of the image: $(cat "$dir/same.err")"
	# Another ELF: a file without a build-id (hot.elf: its hash) ...
	run other 2 -R "$dir/img.log" --elf "$elf" --folded "$dir/other.folded"
	grep -Eqx "vpmustat: --elf $elf is not the image the samples belong to: the log's is /guests/app.elf \(build-id $bid\), this file has file hash [0-9a-f]{16}" \
	    "$dir/other.err" || { cat "$dir/other.err"; fail "other: not the message"; }
	[ -s "$dir/other.out" ] && fail "a report of another ELF"
	absent "$dir/other.folded"
	# ... and one whose build-id differs in its last byte.
	last=$(echo "$bid" | sed 's/..$//')00
	[ "$last" = "$bid" ] && last=$(echo "$bid" | sed 's/..$//')01
	"$gen" -m /guests/app.elf $(words "$last") -o "$dir/img2.log" <"$dir/deep.txt" ||
		fail "test_flatlog -m"
	run differs 2 -R "$dir/img2.log" --elf "$gen"
	same differs.err "$dir/differs.err" <<EOF
vpmustat: --elf $gen is not the image the samples belong to: the log's is /guests/app.elf (build-id $last), this file has build-id $bid
EOF
	# A log without the image (older logs): --elf is not checked.
	run none 0 -R "$dir/deep.log" --elf "$gen"
	grep -q "samples are of" "$dir/none.out" && fail "an image named without MAP_IN"
	;;
flame_script)
	command -v xmllint >/dev/null || fail "no xmllint (cmake/deps.sh installs libxml2-utils)"
	run svg 0 -R "$dir/deep.log" --elf "$elf" --svg "$dir/x.svg"
	xmllint --noout "$dir/x.svg" || fail "the SVG is not well-formed XML"
	# Callees by name: the cut chain's hot first, then main;work;{cold,hot}.
	grep -o '<g class="f" data-[^>]*>' "$dir/x.svg" >"$dir/frames"
	same frames "$dir/frames" <<'EOF'
<g class="f" data-n="all" data-o="0" data-s="4" data-d="0">
<g class="f" data-n="hot" data-o="0" data-s="1" data-d="1">
<g class="f" data-n="main" data-o="1" data-s="3" data-d="1">
<g class="f" data-n="work" data-o="1" data-s="3" data-d="2">
<g class="f" data-n="cold" data-o="1" data-s="1" data-d="3">
<g class="f" data-n="hot" data-o="2" data-s="2" data-d="3">
EOF
	grep -qx 'var W = 1200.0, M = 10.0, CW = 7.25, TOTAL = 4;' "$dir/x.svg" ||
		fail "the script's numbers"
	sed -n '/<!\[CDATA\[/,/\]\]>/p' "$dir/x.svg" | sed '1s/.*CDATA\[//; $d' >"$dir/x.js"
	grep -q 'window.vpmustat' "$dir/x.js" || fail "no script in the SVG"
	if command -v node >/dev/null; then
		node --check "$dir/x.js" || fail "the script: a syntax error"
	else
		echo "test_outputs.sh: flame_script: no node: the script's syntax not checked"
	fi
	;;
*)
	fail "no such case"
	;;
esac
echo "test_outputs.sh: $case: ok"
exit 0
