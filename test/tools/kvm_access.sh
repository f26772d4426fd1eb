#!/bin/sh
# kvm_access.sh VPMU-RUN VPMUSTAT VPMU-INFO GUEST -- a user who may not open
# /dev/kvm is told how to get access: vpmu-run and vpmustat exit 1 (a host
# problem) with the remedy on standard error, and vpmu-info names the
# group.  The tools run as the user nobody (setpriv); exit 77 (skip) where
# that cannot be arranged: not root, no setpriv, no /dev/kvm, or a
# /dev/kvm that nobody may open anyway.
run=$1 stat=$2 info=$3 guest=$4
[ "$(id -u)" = 0 ] || { echo "SKIP: needs root to run the tools as another user"; exit 77; }
command -v setpriv >/dev/null || { echo "SKIP: setpriv (util-linux) is not installed"; exit 77; }
[ -e /dev/kvm ] || { echo "SKIP: no /dev/kvm on this host"; exit 77; }
as_nobody() {
	setpriv --reuid=65534 --regid=65534 --clear-groups "$@"
}
if as_nobody sh -c 'exec 3<>/dev/kvm' 2>/dev/null; then
	echo "SKIP: /dev/kvm is open to every user here ($(ls -l /dev/kvm))"
	exit 77
fi
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
fail=0
want='/dev/kvm: Permission denied (read-write access is needed: add the user to the group that owns /dev/kvm, usually kvm, and log in again)'
check() {
	name=$1 expect=$2
	shift 2
	as_nobody "$@" >"$tmp/out" 2>"$tmp/err"
	st=$?
	if [ "$st" != 1 ] || ! grep -qxF "$expect" "$tmp/err"; then
		echo "FAIL: $name: status $st (want 1), standard error:"
		cat "$tmp/err"
		fail=1
	else
		echo "ok: $name: status 1, $(cat "$tmp/err")"
	fi
}
check vpmu-run "vpmu-run: $want" "$run" "$guest"
check vpmustat "vpmustat: $want" "$stat" -S instructions "$guest"
# vpmu-info reports the host, whatever it finds: status 0, and the reason.
as_nobody "$info" >"$tmp/info" 2>&1
if ! grep -q 'open(/dev/kvm) failed with EACCES (read-write access is needed; often through the kvm group)' "$tmp/info"; then
	echo "FAIL: vpmu-info does not name the kvm group:"
	cat "$tmp/info"
	fail=1
else
	echo "ok: vpmu-info names the kvm group"
fi
exit $fail
