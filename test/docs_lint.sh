#!/bin/sh
# docs_lint.sh DOCS_DIR -- every manual page under DOCS_DIR passes
# `mandoc -Tlint -Wwarning` (warnings and worse fail; style notes, such as
# references to pages of other systems, do not), and groff formats it with
# every warning enabled (-ww), for its default device and for a terminal
# (-Tutf8, what man(1) uses), without printing anything: a line that cannot
# be broken or adjusted, an unknown macro or a bad escape fails.
status=0
if ! command -v groff >/dev/null 2>&1; then
	echo "docs_lint: groff not found (Debian package groff-base)" >&2
	exit 1
fi
for f in "$1"/*.[1-9]; do
	if ! mandoc -Tlint -Wwarning "$f"; then
		status=1
	fi
	for dev in "" -Tutf8; do
		out=$(groff -mandoc $dev -ww -z "$f" 2>&1)
		if [ $? -ne 0 ] || [ -n "$out" ]; then
			printf '%s\n' "$out"
			echo "docs_lint: $f: groff -mandoc${dev:+ $dev} -ww -z is not silent" >&2
			status=1
		fi
	done
done
exit $status
