#!/bin/sh
# build.sh BUILD JOBS -- `make build`: cmake --build, less its noise.  The
# lines that say a target is up to date are left out, so a build with
# nothing to do prints nothing; what was compiled, every warning and
# error, and the build's exit status are kept.
bin=$1 jobs=$2
st=$(mktemp)
trap 'rm -f "$st"' EXIT
# Not a sub-make of the caller's make: no "Entering directory" lines.
{ env -u MAKELEVEL -u MAKEFLAGS -u MFLAGS cmake --build "$bin" -j "$jobs" 2>&1
  echo $? >"$st"; } | grep -v -E '^\[ *[0-9]+%\] Built target |^(g?make)(\[[0-9]+\])?: (Entering|Leaving) directory'
exit "$(cat "$st")"
