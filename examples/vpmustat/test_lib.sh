# test_lib.sh -- what test_outputs.sh and test_ksyms.sh share (and
# test/tools/cli.sh: fail, same), sourced by them after they set vs
# (vpmustat, for run), dir (the work directory) and case.

fail() {
	echo "${0##*/}: $case: FAIL: $*"
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

# run NAME WANT_STATUS VPMUSTAT_ARGS...: NAME.out, NAME.err; the status checked.
run() {
	name=$1 want=$2
	shift 2
	"$vs" "$@" >"$dir/$name.out" 2>"$dir/$name.err"
	st=$?
	[ "$st" -eq "$want" ] || {
		cat "$dir/$name.err"
		fail "$name: vpmustat $* exited $st, want $want"
	}
}
