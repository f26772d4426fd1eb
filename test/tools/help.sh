#!/bin/sh
# help.sh NAME TOOL -- `TOOL --help`: status 0, nothing on standard error,
# the usage on standard output: its first line "usage: NAME ...", a line
# for "NAME --help | --version", and every option its synopsis lines (those
# starting "usage:" or blank-indented to it) name has a line of its own
# ("  -X" or "  --long") below, but --help, --version and an option that
# starts a synopsis line (a mode of its own, "NAME --list-events").  Prints what differs and fails.
name=$1 tool=$2
tmp=$(mktemp -d) || exit 2
trap 'rm -rf "$tmp"' EXIT
status=0
fail() {
	echo "help.sh: $name --help: $*" >&2
	status=1
}
"$tool" --help >"$tmp/out" 2>"$tmp/err"
got=$?
cat "$tmp/out"
[ "$got" -eq 0 ] || fail "status $got, want 0"
if [ -s "$tmp/err" ]; then
	cat "$tmp/err" >&2
	fail "something on standard error"
fi
case $(sed -n 1p "$tmp/out") in
"usage: $name "*) ;;
*) fail "first line not \"usage: $name ...\"" ;;
esac
grep -q "^ *$name --help | --version\$" "$tmp/out" || fail "no \"$name --help | --version\" line"
# The synopsis: the first line and the ones indented under it.
# A mode a synopsis line starts with ("NAME --list-events ...") and --help
# and --version are described by their synopsis line.
awk -v name="$name" '
NR == 1 || (/^       / && !done) {
	sub(/^(usage:)? *[^ ]+ -[^ ]*/, "")
	gsub(/--help|--version/, "")
	print
	next
}
{ done = 1 }' "$tmp/out" |
    grep -oE '(^|[[ |])-(-[a-z][a-z-]*|[A-Za-z])' | sed 's/^[[ |]//' | sort -u >"$tmp/opts"
[ -s "$tmp/opts" ] || fail "no option in the synopsis"
while read -r o; do
	grep -qE -- "^  +(-[A-Za-z], )?$o([ ,=]|\$)" "$tmp/out" ||
		fail "option $o of the synopsis has no line of its own"
done <"$tmp/opts"
exit $status
