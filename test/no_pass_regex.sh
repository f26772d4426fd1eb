#!/bin/sh
# no_pass_regex.sh SOURCE_DIR -- no test sets PASS_REGULAR_EXPRESSION: with
# it ctest ignores the exit status, so a test whose output matches passes
# even when it fails.  Tests check output through test/guests/expect.sh,
# which checks the status too.  Comment lines are not looked at.
# Build trees (a CMakeCache.txt) are skipped: their CTestTestfile.cmake
# files are generated.
found=$(find "$1" -type d \( -name .git -o -exec test -e {}/CMakeCache.txt \; \) -prune -o \
    \( -name CMakeLists.txt -o -name '*.cmake' \) -type f -print |
    xargs grep -n 'PASS_REGULAR_EXPRESSION' /dev/null |
    grep -v '^[^:]*:[0-9]*:[ \t]*#')
if [ -n "$found" ]; then
	printf '%s\n' "$found"
	echo "no_pass_regex: use expect.sh, which checks the exit status too" >&2
	exit 1
fi
exit 0
