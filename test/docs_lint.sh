#!/bin/sh
# docs_lint.sh DOCS_DIR -- every manual page under DOCS_DIR passes
# `mandoc -Tlint -Wwarning` (warnings and worse fail; style notes, such as
# references to pages of other systems, do not).
status=0
for f in "$1"/*.[1-9]; do
	if ! mandoc -Tlint -Wwarning "$f"; then
		status=1
	fi
done
exit $status
