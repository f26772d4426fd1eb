#!/bin/sh
# info.sh CHECK VPMU_INFO [RECORDS] -- vpmu-info's output, asserted:
#   text   `vpmu-info`: status 0, nothing on standard error, the five
#          sections (CPU, PMU (CPUID), KVM, perf_event, Sources) in that
#          order, and under Sources each source usable or unavailable with
#          a reason
#   json   `vpmu-info --json`: status 0, nothing on standard error, one JSON
#          document (RECORDS doc, the strict reader of test/tools/records.c)
#          whose members are the ones below with values of their types, and
#          the same sources, each usable exactly when the text says so
#   bad    `vpmu-info --bogus` and `vpmu-info extra`: status 2, nothing on
#          standard output, getopt's complaint (after argv[0]) or the
#          argument named, then
#          "Try 'vpmu-info --help' for more information."
#   help   `vpmu-info --help`: status 0, the usage on standard output,
#          nothing on standard error
# Prints what differs and fails.
check=$1 info=$2 records=$3
tmp=$(mktemp -d) || exit 2
trap 'rm -rf "$tmp"' EXIT
status=0
fail() {
	echo "info.sh $check: $*" >&2
	status=1
}
# run WANT ARGS...: vpmu-info ARGS into $tmp/out and $tmp/err, status WANT.
run() {
	want=$1
	shift
	"$info" "$@" >"$tmp/out" 2>"$tmp/err"
	got=$?
	[ "$got" -eq "$want" ] || fail "vpmu-info $*: status $got, want $want"
}
no_err() {
	if [ -s "$tmp/err" ]; then
		cat "$tmp/err" >&2
		fail "vpmu-info $*: something on standard error"
	fi
}
# The sources' "NAME usable|unavailable" from the text output.
text_sources() {
	sed -n '/^Sources$/,$p' "$tmp/out" | sed -n '2,$p' | awk '
	/^  [a-z][a-z0-9_-]* +(usable|unavailable): ./ { sub(/:$/, "", $2); print $1, $2; next }
	{ print "bad " $0 }'
}

case $check in
text)
	run 0
	no_err
	cat "$tmp/out"
	heads=$(grep -v '^ ' "$tmp/out" | grep -v '^$' | tr '\n' '|')
	[ "$heads" = "CPU|PMU (CPUID)|KVM|perf_event|Sources|" ] ||
		fail "sections $heads, want CPU|PMU (CPUID)|KVM|perf_event|Sources|"
	for s in CPU KVM perf_event; do
		sed -n "/^$s\$/,/^\$/p" "$tmp/out" | grep -q '^  [^ ]' ||
			fail "section $s has no row"
	done
	text_sources >"$tmp/src"
	if grep -q '^bad ' "$tmp/src"; then
		fail "Sources rows not NAME usable|unavailable: REASON: $(grep '^bad ' "$tmp/src")"
	fi
	for s in synthetic perf exact; do
		grep -q "^$s " "$tmp/src" || fail "source $s not listed"
	done
	grep -q '^synthetic usable$' "$tmp/src" || fail "the synthetic source not usable"
	;;
json)
	run 0 --json
	no_err --json
	if ! "$records" doc "$tmp/out" >"$tmp/flat"; then
		cat "$tmp/out"
		fail "not one strict JSON document"
		exit 1
	fi
	cat "$tmp/flat"
	# Each member: its path (caps.* and sources.* apart) and its type.
	num='-?(0|[1-9][0-9]*)' str='"([^"\\]|\\.)*"'
	awk -v num="^$num\$" -v str="^$str\$" '
	function want(re, what) {
		if (v !~ re) { print "member " p " is " v ", not " what; bad = 1 }
	}
	{
		i = index($0, "="); p = substr($0, 1, i - 1); v = substr($0, i + 1)
		seen[p] = 1
		if (p ~ /^kvm\.caps\./ || p ~ /^sources\./) {
			if (p ~ /^kvm\.caps\.[a-z0-9_]+$/) want("^(" substr(num, 2, length(num) - 2) "|null)$", "a number or null")
			else if (p ~ /^sources\.[a-z0-9_-]+\.usable$/) want("^(true|false)$", "true or false")
			else if (p ~ /^sources\.[a-z0-9_-]+\.error$/) want("^(\"E[A-Z0-9]+\"|null)$", "an errno name or null")
			else if (p ~ /^sources\.[a-z0-9_-]+\.reason$/) want("^\"..*\"$", "a reason")
			else { print "unexpected member " p; bad = 1 }
			next
		}
		if (!(p in type)) { print "unexpected member " p; bad = 1; next }
		t = type[p]
		if (t == "bool") want("^(true|false)$", "true or false")
		else if (t == "int") want(num, "a number")
		else if (t == "intnull") want("^(" substr(num, 2, length(num) - 2) "|null)$", "a number or null")
		else if (t == "hex") want("^\"0x[0-9a-f][0-9a-f][0-9a-f][0-9a-f][0-9a-f][0-9a-f][0-9a-f][0-9a-f]\"$", "a hex string")
		else if (t == "hexnull") want("^(\"0x[0-9a-f][0-9a-f][0-9a-f][0-9a-f][0-9a-f][0-9a-f][0-9a-f][0-9a-f]\"|null)$", "a hex string or null")
		else if (t == "errno") want("^(\"E[A-Z0-9]+\"|null)$", "an errno name or null")
		else if (t == "str") want("^\".*\"$", "a string")
		else if (t == "strnull") want("^(\".*\"|null)$", "a string or null")
	}
	BEGIN {
		n = split("cpu.cpuid_ok bool cpu.cpuid_error strnull cpu.vendor str cpu.brand str " \
		    "cpu.family int cpu.model int cpu.stepping int cpu.max_leaf hex " \
		    "cpu.max_ext_leaf hex cpu.pdcm bool cpu.hypervisor bool " \
		    "cpu.hv_signature strnull cpu.hv_max_leaf hexnull " \
		    "cpu.leaf_0a[0] hex cpu.leaf_0a[1] hex cpu.leaf_0a[2] hex cpu.leaf_0a[3] hex " \
		    "cpu.leaf_80000001_ecx hex " \
		    "cpu.leaf_80000022[0] hex cpu.leaf_80000022[1] hex cpu.leaf_80000022[2] hex " \
		    "cpu.leaf_80000022[3] hex " \
		    "intel_pmu.version int intel_pmu.gp_count int intel_pmu.gp_width int " \
		    "intel_pmu.ebx_length int intel_pmu.events_unavailable hex " \
		    "intel_pmu.fixed_count int intel_pmu.fixed_width int intel_pmu.fixed_mask hex " \
		    "intel_pmu.anythread_deprecated bool " \
		    "amd_pmu.core_ext bool amd_pmu.nb_ext bool amd_pmu.llc_ext bool " \
		    "amd_pmu.perfmon_v2 bool amd_pmu.lbr_stack bool amd_pmu.num_core int " \
		    "amd_pmu.num_nb int amd_pmu.lbr_v2_depth int amd_pmu.gp_count int " \
		    "amd_pmu.gp_width int " \
		    "kvm.present bool kvm.opened bool kvm.open_errno errno kvm.api_version intnull " \
		    "kvm.enable_pmu strnull " \
		    "perf.paranoid intnull perf.core_pmu strnull perf.hw_instructions_errno errno " \
		    "perf.sw_task_clock_errno errno perf.msr_type intnull perf.msr_tsc_event bool " \
		    "perf.msr_tsc_errno errno perf.msr_tsc_config str", a, " ")
		for (i = 1; i < n; i += 2) type[a[i]] = a[i + 1]
	}
	END {
		for (p in type)
			if (!(p in seen)) { print "member " p " missing"; bad = 1 }
		exit bad
	}
	' "$tmp/flat" >"$tmp/bad" || fail "$(cat "$tmp/bad")"
	# The sources, usable exactly as the text says.
	sed -n 's/^sources\.\([a-z0-9_-]*\)\.usable=\(.*\)$/\1 \2/p' "$tmp/flat" |
	    sed 's/ true$/ usable/; s/ false$/ unavailable/' >"$tmp/jsrc"
	if ! "$info" >"$tmp/out" 2>"$tmp/err"; then
		fail "vpmu-info (text) failed"
	fi
	text_sources >"$tmp/src"
	if ! cmp -s "$tmp/src" "$tmp/jsrc"; then
		fail "sources: JSON says $(tr '\n' ' ' <"$tmp/jsrc"), text $(tr '\n' ' ' <"$tmp/src")"
	fi
	[ -s "$tmp/jsrc" ] || fail "no source in the JSON"
	;;
bad)
	for a in --bogus extra; do
		run 2 "$a"
		[ -s "$tmp/out" ] && fail "vpmu-info $a: something on standard output"
		case $a in
		--bogus) first="^([^ ]*/)?vpmu-info: unrecognized option '--bogus'\$" ;;
		*) first='^vpmu-info: unexpected argument "extra"$' ;;
		esac
		cat "$tmp/err"
		[ "$(wc -l <"$tmp/err")" -eq 2 ] || fail "vpmu-info $a: not two lines on standard error"
		sed -n 1p "$tmp/err" | grep -Eq -- "$first" || fail "vpmu-info $a: first line not /$first/"
		[ "$(sed -n 2p "$tmp/err")" = "Try 'vpmu-info --help' for more information." ] ||
			fail "vpmu-info $a: second line not Try 'vpmu-info --help' ..."
	done
	;;
help)
	run 0 --help
	no_err --help
	cat "$tmp/out"
	[ "$(sed -n 1p "$tmp/out")" = "usage: vpmu-info [--json]" ] || fail "first line not the usage"
	for o in -j, --json -h, --help --version; do
		grep -q -- " $o" "$tmp/out" || fail "--help does not name $o"
	done
	;;
*)
	echo "usage: info.sh text|json|bad|help VPMU_INFO [RECORDS]" >&2
	exit 2
	;;
esac
exit $status
