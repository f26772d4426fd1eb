#!/bin/sh
# test_no_edges.sh VPMUSTAT TEST_FLATLOG WORKDIR
#
# vpmustat -R -G on logs with no call-graph edge (test_flatlog.c writes
# them; no guest, no /dev/kvm):
#   - flat.log, three samples one frame deep: status 0, the report, a call
#     graph of its two header lines only, the folded stacks, the warning
#     that no chain has a caller (no frame pointers), all exact
#   - empty.log, no samples: status 0, the report, the note on standard
#     error, a call graph for the event "(none)", all exact
# Under the sanitizer build (test/build-with.sh) this is also the check
# that no memcpy() or qsort() gets a null pointer for an empty array.
set -u
vs=$1 gen=$2 dir=$3

fail() {
	echo "test_no_edges.sh: FAIL: $*"
	exit 1
}

# same NAME FILE: FILE holds exactly standard input.
same() {
	cat >"$dir/$1.want"
	cmp -s "$dir/$1.want" "$2" || {
		diff "$dir/$1.want" "$2"
		fail "$1: not the expected text"
	}
}

rm -rf "$dir" && mkdir -p "$dir" || exit 1
"$gen" "$dir" || fail "test_flatlog exited $?"

"$vs" -R "$dir/flat.log" -G "$dir/flat.graph" --folded "$dir/flat.folded" \
    >"$dir/flat.out" 2>"$dir/flat.err"
st=$?
cat "$dir/flat.err"
[ $st -eq 0 ] || fail "vpmustat -R flat.log exited $st"
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

"$vs" -R "$dir/empty.log" -G "$dir/empty.graph" >"$dir/empty.out" 2>"$dir/empty.err"
st=$?
cat "$dir/empty.err"
[ $st -eq 0 ] || fail "vpmustat -R empty.log exited $st"
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
echo "test_no_edges.sh: ok"
exit 0
