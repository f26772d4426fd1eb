# parse.sh: the parsers and checks of the linux demo, sourced by
# linux-demo.sh and parsers_test.sh.  Each parser reads a file: the guest's
# console log (sections opened by "=== vpmu-linux: NAME ===", test/linux/init)
# or vpmu-run's report (vpmu-run(1)).  A value that is not there is printed
# as the empty string.

# section LOG NAME: the lines of section NAME, carriage returns removed.
section() {
	awk -v want="=== vpmu-linux: $2 ===" '
		{ sub(/\r$/, "") }
		/^=== vpmu-linux: / { on = ($0 == want); next }
		on' "$1"
}

# pmu_field LOG KEY: the value of the kernel's "... KEY: value" boot line
# (KEY: version, bit width, generic registers, fixed-purpose events, ...).
pmu_field() {
	section "$1" pmu | awk -v key="... $2:" '
		{ sub(/^\[[ 0-9.]*\] /, "") }
		index($0, key) == 1 { v = substr($0, length(key) + 1); gsub(/ /, "", v); print v; exit }'
}

# pmu_driver LOG: the text after "Performance Events: " of the kernel's line.
pmu_driver() {
	section "$1" pmu | sed -n 's/^.*Performance Events: //p' | head -n 1
}

# stat_count LOG SECTION EVENT: the count perf stat -x, gave EVENT (first
# CSV field: a number, or "<not supported>" / "<not counted>").
stat_count() {
	section "$1" "$2" | awk -F, -v ev="$3" '
		NF >= 4 && $3 == ev && $1 ~ /^([0-9]+|<[a-z ]+>)$/ { print $1; exit }'
}

# record_samples LOG SECTION: the samples of a perf record: the "samples: N"
# line of the section if there is one (perf script's count), else the sum of
# perf report -n's Samples column (perf report's "# Samples:" header rounds
# to "2K").
record_samples() {
	section "$1" "$2" | awk '
		/^samples: [0-9]+$/ { print $2; found = 1; exit }
		/^ +[0-9.]+% +[0-9]+ / { sum += $2; rows++ }
		END { if (!found && rows) print sum }'
}

# report_lines LOG SECTION MARK: the number of perf report rows whose symbol
# is marked MARK ("[k]" kernel, "[.]" user).
report_lines() {
	section "$1" "$2" | awk -v mark="$3" '/^ +[0-9.]+% / && index($0, " " mark " ") { n++ } END { print n + 0 }'
}

# report_share LOG SECTION SYMBOL: the overhead (percent, without "%") of
# SYMBOL in the section's perf report; summed if it is on several rows.
report_share() {
	section "$1" "$2" | awk -v sym="$3" '
		/^ +[0-9.]+% / && $NF == sym { sub(/%/, "", $1); s += $1; found = 1 }
		END { if (found) printf "%.2f\n", s }'
}

# done_status LOG: the status the guest's init ended with ("status: N").
done_status() {
	section "$1" done | sed -n 's/^status: \([0-9][0-9]*\)$/\1/p' | head -n 1
}

# model_key REPORT KEY: the value of KEY (gp, fixed, width, ...) in the
# report's "model NAME:k=v,..., source ..." line; KEY "name" gives NAME.
model_key() {
	awk -v key="$2" '
		/^model [a-z0-9-]+:/ {
			spec = $2; sub(/,$/, "", spec)
			split(spec, a, ":")
			if (key == "name") { print a[1]; exit }
			n = split(a[2], kv, ",")
			for (i = 1; i <= n; i++) {
				split(kv[i], p, "=")
				if (p[1] == key) { print p[2]; exit }
			}
			exit
		}' "$1"
}

# host_rows REPORT: the report's counter rows, one per line:
# "VCPU COUNTER EVENT VALUE" (VCPU from the "vCPU N:" line above them).
host_rows() {
	awk '
		/^vCPU [0-9]+:/ { cpu = $2; sub(/:/, "", cpu) }
		/^  [A-Z][A-Z0-9_]* +[^ ]+ +[0-9]+ / { print cpu, $1, $2, $3 }' "$1"
}

# host_count REPORT COUNTER: the value of COUNTER (IA32_PMC0, ...) summed
# over the vCPUs.
host_count() {
	host_rows "$1" | awk -v c="$2" '$2 == c { s += $4; found = 1 } END { if (found) print s }'
}

# report_rdpmc REPORT: "N G", the guest's RDPMCs that libvpmu answered
# and the #GPs among them, summed over the report's "vCPU N:" lines (a
# vCPU with no RDPMC has no such figure: 0).
report_rdpmc() {
	awk '
		/^vCPU [0-9]+:/ && match($0, /RDPMC [0-9]+ \(#GP [0-9]+\)/) {
			split(substr($0, RSTART, RLENGTH), w, /[ ()]+/)
			n += w[2]; g += w[4]
		}
		END { print n + 0, g + 0 }' "$1"
}

# mark_counts REPORT A B EVENT: per vCPU (one line each, in vCPU order),
# what its counters of EVENT (the report's event name: instructions,
# branches, cycles, ...) counted between marks A and B: the sum, over the
# counters whose event at mark B is EVENT, of their counted figure at B
# less that at A (0 for a counter not yet used at A).  Nothing for a vCPU
# without such a counter, or when mark B is not in the report.
mark_counts() {
	awk -v a="$2" -v b="$3" -v ev="$4" '
		/^marks \(port 0xf6\):/ { on = 1; next }
		!on || $1 !~ /^[0-9]+$/ || NF != 5 { next }
		$1 == a { at_a[$2 " " $3] = $5 }
		$1 == b && $4 == ev { at_b[$2 " " $3] = $5; cpus[$2] = 1 }
		END {
			for (k in at_b) {
				split(k, p, " ")
				sum[p[1]] += at_b[k] - ((k in at_a) ? at_a[k] : 0)
			}
			n = 0
			for (c in cpus) order[n++] = c + 0
			for (i = 0; i < n; i++)
				for (j = i + 1; j < n; j++)
					if (order[j] < order[i]) { t = order[i]; order[i] = order[j]; order[j] = t }
			for (i = 0; i < n; i++) print sum[order[i]]
		}' "$1"
}

# The checks print "PASS name: ...", "FAIL name: ..." or "SKIP name: ...";
# check_failed counts the failures.
check_failed=0
pass() { echo "PASS $*"; }
fail() { echo "FAIL $*"; check_failed=$((check_failed + 1)); }
skip_check() { echo "SKIP $*"; }

# is_count V: V is a decimal count.
is_count() {
	case $1 in '' | *[!0-9]*) return 1 ;; esac
}

# expect_eq NAME GOT WANT: GOT is exactly WANT.
expect_eq() {
	if [ "$2" = "$3" ]; then pass "$1: $2"; else fail "$1: got '$2', want '$3'"; fi
}

# check_pmu_boot LOG VENDOR VERSION GP WIDTH FIXED: the kernel's PMU driver
# lines name VENDOR's driver ("Intel" or "AMD") and the model's figures.
check_pmu_boot() {
	d=$(pmu_driver "$1")
	case $d in
	*"$2 PMU driver.") pass "pmu driver: $d" ;;
	*) fail "pmu driver: got '$d', want '... $2 PMU driver.'" ;;
	esac
	expect_eq "pmu version" "$(pmu_field "$1" version)" "$3"
	expect_eq "pmu generic registers" "$(pmu_field "$1" 'generic registers')" "$4"
	expect_eq "pmu bit width" "$(pmu_field "$1" 'bit width')" "$5"
	expect_eq "pmu fixed-purpose events" "$(pmu_field "$1" 'fixed-purpose events')" "$6"
}

# check_nonzero NAME V: V is a count above 0.
check_nonzero() {
	if is_count "$2" && [ "$2" -gt 0 ]; then pass "$1: $2"; else fail "$1: got '$2', want a count above 0"; fi
}

# check_counts_agree NAME GUEST HOST: the guest's count (perf) equals the
# host's (vpmu-run's table).
check_counts_agree() {
	if ! is_count "$2" || ! is_count "$3"; then
		fail "$1: guest '$2', host '$3': not both counts"
	elif [ "$2" -eq "$3" ]; then
		pass "$1: guest $2 = host $3"
	else
		fail "$1: guest $2, host $3: differ by $(($2 - $3))"
	fi
}

# check_rdpmc NAME N G: N RDPMCs (above 0), G of them faulted (none).
check_rdpmc() {
	if is_count "$2" && [ "$2" -gt 0 ] && [ "$3" = 0 ]; then
		pass "$1: $2 RDPMCs answered, none faulted"
	else
		fail "$1: got $2 RDPMCs with $3 #GP, want some and no #GP"
	fi
}

# check_samples NAME SAMPLES PERIOD COUNT...: a perf record at a fixed
# PERIOD took one sample per PERIOD events on each CPU: SAMPLES is the sum
# of COUNT / PERIOD (rounded down) over the CPUs' exact counts.
check_samples() {
	n=$1 s=$2 p=$3
	shift 3
	want=0
	for c in "$@"; do
		is_count "$c" || { fail "$n: exact count '$c' is not a count"; return; }
		want=$((want + c / p))
	done
	if is_count "$s" && [ "$s" -eq "$want" ]; then
		pass "$n: $s samples = sum of (count / $p) over the counts $*"
	else
		fail "$n: got '$s' samples, want $want (sum of (count / $p) over $*)"
	fi
}

# check_delta NAME C1 C2 WANT: C2 - C1 is exactly WANT (two runs of a
# program that differ by a known amount of work).
check_delta() {
	if is_count "$2" && is_count "$3" && [ $(($3 - $2)) -eq "$4" ]; then
		pass "$1: $3 - $2 = $4"
	else
		fail "$1: '$3' - '$2' is not $4"
	fi
}

# check_share_min NAME SHARE MIN: SHARE (percent) is at least MIN.
check_share_min() {
	if [ -n "$2" ] && awk -v s="$2" -v m="$3" 'BEGIN { exit !(s + 0 >= m + 0) }'; then
		pass "$1: $2% >= $3%"
	else
		fail "$1: got '$2'%, want at least $3%"
	fi
}
