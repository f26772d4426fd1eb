#!/bin/sh
# parsers_test.sh: the linux demo's parsers and checks (parse.sh) over the
# sample outputs in test/linux/fixtures, exact values asserted (ctest
# linux_demo_parsers).
SRC=$(cd "$(dirname "$0")" && pwd) || exit 1
. "$SRC/parse.sh"
F=$SRC/fixtures
C=$F/console-intel-v2.txt
U=$F/console-user.txt
R=$F/report-intel-v2.txt
bad=0

# eq WHAT GOT WANT
eq() {
	if [ "$2" = "$3" ]; then
		echo "ok   $1 = '$2'"
	else
		echo "FAIL $1: got '$2', want '$3'"
		bad=$((bad + 1))
	fi
}

# The console log (carriage returns as a serial console sends them).
eq "pmu_driver" "$(pmu_driver "$C")" "Core2 events, full-width counters, Intel PMU driver."
eq "pmu_field version" "$(pmu_field "$C" version)" 2
eq "pmu_field bit width" "$(pmu_field "$C" 'bit width')" 48
eq "pmu_field generic registers" "$(pmu_field "$C" 'generic registers')" 4
eq "pmu_field fixed-purpose events" "$(pmu_field "$C" 'fixed-purpose events')" 3
eq "pmu_field value mask" "$(pmu_field "$C" 'value mask')" 0000ffffffffffff
eq "pmu_field absent" "$(pmu_field "$C" 'no such key')" ""
eq "report_rdpmc" "$(report_rdpmc "$R")" "11 6"
eq "report_rdpmc of a report without RDPMC" "$(printf 'vCPU 0: MSR reads 1, writes 2\n' | report_rdpmc /dev/stdin)" "0 0"
eq "stat instructions:k" "$(stat_count "$C" stat instructions:k)" 1834712
eq "stat branches:k" "$(stat_count "$C" stat branches:k)" 301172
eq "stat cycles:k" "$(stat_count "$C" stat cycles:k)" 1834712
eq "stat absent event" "$(stat_count "$C" stat instructions:u)" ""
eq "record samples (perf script's line)" "$(record_samples "$C" record)" 2390
eq "record [k] rows" "$(report_lines "$C" record '[k]')" 3
eq "record [.] rows" "$(report_lines "$C" record '[.]')" 0
eq "section lines of record" "$(section "$C" record | wc -l)" 18
eq "no carriage return left" "$(section "$C" stat | tr -d -c '\r' | wc -c)" 0
eq "skipped user section is empty" "$(section "$C" user-1000000 | wc -l)" 0
eq "user skip line" "$(grep -c '^=== vpmu-linux: user: skipped' "$C")" 1
eq "done status" "$(done_status "$C")" 0

eq "amd pmu_driver" "$(pmu_driver "$U")" "AMD PMU driver."
eq "amd generic registers" "$(pmu_field "$U" 'generic registers')" 6
eq "amd fixed-purpose events" "$(pmu_field "$U" 'fixed-purpose events')" 0
eq "stat <not supported>" "$(stat_count "$U" stat instructions:k)" "<not supported>"
eq "stat <not counted>" "$(stat_count "$U" stat branches:k)" "<not counted>"
eq "stat zero" "$(stat_count "$U" stat cycles:k)" 0
eq "record samples (sum of the Samples column)" "$(record_samples "$U" record)" 13
eq "record [k] rows (user log)" "$(report_lines "$U" record '[k]')" 2
eq "record [.] rows (user log)" "$(report_lines "$U" record '[.]')" 1
eq "user N1 instructions:u" "$(stat_count "$U" user-1000000 instructions:u)" 2081593
eq "user N2 branches:u" "$(stat_count "$U" user-3000000 branches:u)" 3016422
eq "hot share (two rows)" "$(report_share "$U" user-hot hot)" 98.79
eq "absent symbol share" "$(report_share "$U" user-hot cold)" ""
eq "hot samples" "$(record_samples "$U" user-hot)" 913
eq "done status 1" "$(done_status "$U")" 1

# vpmu-run's report.
eq "model name" "$(model_key "$R" name)" intel-v2
eq "model gp" "$(model_key "$R" gp)" 4
eq "model fixed" "$(model_key "$R" fixed)" 3
eq "model width" "$(model_key "$R" width)" 48
eq "model ebx" "$(model_key "$R" ebx)" 0x0
eq "host rows" "$(host_rows "$R" | tr '\n' ';')" \
	"0 IA32_PMC0 instructions 506;0 IA32_PMC1 branches 100;0 IA32_FIXED_CTR1 cycles 506;1 IA32_PMC0 instructions 10000100;1 IA32_FIXED_CTR0 instructions 1;"
eq "host_count PMC0 over the vCPUs" "$(host_count "$R" IA32_PMC0)" 10000606
eq "host_count absent" "$(host_count "$R" IA32_PMC3)" ""
# Marks: a stale counter of the event adds 0, a counter new at mark 2
# counts from 0, vCPUs in order, one line each.
eq "mark_counts instructions" "$(mark_counts "$R" 1 2 instructions | tr '\n' ' ')" "700 50 "
eq "mark_counts branches" "$(mark_counts "$R" 1 2 branches | tr '\n' ' ')" "300 20 "
eq "mark_counts cycles" "$(mark_counts "$R" 1 2 cycles | tr '\n' ' ')" "900 "
eq "mark_counts no such mark" "$(mark_counts "$R" 1 7 cycles)" ""

# The checks: each must pass and fail where it should.
# verdict CMD...: the first word the check prints (PASS/FAIL).
verdict() { "$@" | awk '{ print $1; exit }'; }
eq "check_counts_agree equal" "$(verdict check_counts_agree x 506 506)" PASS
eq "check_counts_agree differ" "$(verdict check_counts_agree x 506 507)" FAIL
eq "check_counts_agree message" "$(check_counts_agree x 506 507)" "FAIL x: guest 506, host 507: differ by -1"
eq "check_counts_agree not a count" "$(verdict check_counts_agree x '<not supported>' 5)" FAIL
eq "check_nonzero" "$(verdict check_nonzero x 1)" PASS
eq "check_nonzero 0" "$(verdict check_nonzero x 0)" FAIL
eq "check_nonzero text" "$(verdict check_nonzero x '<not counted>')" FAIL
eq "check_samples exact" "$(verdict check_samples x 3 10007 20014 10006 10007)" PASS
eq "check_samples one off" "$(verdict check_samples x 4 10007 20014 10006 10007)" FAIL
eq "check_rdpmc some, none faulted" "$(verdict check_rdpmc x 11 0)" PASS
eq "check_rdpmc faulted" "$(verdict check_rdpmc x 11 6)" FAIL
eq "check_rdpmc none" "$(verdict check_rdpmc x 0 0)" FAIL
eq "check_delta" "$(verdict check_delta x 2081593 6081593 4000000)" PASS
eq "check_delta off" "$(verdict check_delta x 2081593 6081594 4000000)" FAIL
eq "check_share_min" "$(verdict check_share_min x 98.79 90)" PASS
eq "check_share_min below" "$(verdict check_share_min x 89.99 90)" FAIL
eq "check_share_min empty" "$(verdict check_share_min x '' 90)" FAIL
eq "check_pmu_boot intel" "$(check_pmu_boot "$C" Intel 2 4 48 3 | grep -c PASS)" 5
eq "check_pmu_boot wrong gp" "$(check_pmu_boot "$C" Intel 2 8 48 3 | grep FAIL)" \
	"FAIL pmu generic registers: got '4', want '8'"
eq "check_pmu_boot wrong vendor" "$(check_pmu_boot "$C" AMD 2 4 48 3 | grep -c FAIL)" 1
eq "check_pmu_boot amd" "$(check_pmu_boot "$U" AMD 2 6 48 0 | grep -c PASS)" 5
check_failed=0
check_nonzero x 0 >/dev/null
check_nonzero x 5 >/dev/null
check_delta x 1 2 3 >/dev/null
eq "check_failed counts failures" "$check_failed" 2

[ $bad -eq 0 ] || { echo "parsers_test: $bad failed"; exit 1; }
echo "parsers_test: all passed"
