#!/bin/sh
# with_load.sh N -- COMMAND [ARG...]
#
# Run COMMAND with N CPU-bound processes (shell busy loops) loading the
# machine for as long as it runs, and exit with its status.  The loads are
# killed and reaped on every way out: COMMAND's end, or HUP, INT or TERM
# to this script (COMMAND is then sent TERM and reaped too, and the script
# exits 128 + the signal's number).  Should the script itself be killed
# with SIGKILL, each load notices within a fraction of a second that its
# parent is gone and exits on its own.  COMMAND keeps this script's
# standard input, output and error; the loads have /dev/null.
usage() {
	echo "usage: with_load.sh N -- COMMAND [ARG...]" >&2
	exit 2
}
if [ $# -lt 3 ] || [ "$2" != "--" ]; then
	usage
fi
case $1 in
''|*[!0-9]*)
	usage
	;;
esac
n=$1
shift 2

loads=
cmd=
stopped=

# Kill and reap the loads, once.
stop_loads() {
	[ -n "$stopped" ] && return
	stopped=1
	for p in $loads; do
		kill -TERM "$p" 2>/dev/null
	done
	for p in $loads; do
		wait "$p" 2>/dev/null
	done
}

# Trapped signal $1: COMMAND gets TERM and is reaped, then the loads.
on_signal() {
	trap '' HUP INT TERM
	if [ -n "$cmd" ]; then
		kill -TERM "$cmd" 2>/dev/null
		wait "$cmd" 2>/dev/null
	fi
	stop_loads
	exit $((128 + $1))
}

trap stop_loads EXIT
trap 'on_signal 1' HUP
trap 'on_signal 2' INT
trap 'on_signal 15' TERM

# A busy loop that checks every 100000 rounds that this script still runs.
i=0
while [ "$i" -lt "$n" ]; do
	sh -c 'i=0; while :; do i=$((i + 1)); if [ $i -ge 100000 ]; then
		i=0; kill -0 "$1" 2>/dev/null || exit 0; fi; done' with_load_busy $$ \
	    </dev/null >/dev/null 2>&1 &
	loads="$loads $!"
	i=$((i + 1))
done

# COMMAND runs in the background, so that a signal's trap runs at once
# (a foreground command would delay it to its end); an asynchronous
# command's standard input would be /dev/null without the fd 3 detour.
exec 3<&0
"$@" <&3 3<&- &
cmd=$!
exec 3<&-
wait "$cmd"
st=$?
cmd=
stop_loads
exit "$st"
