#!/bin/sh
# user_syscall.sh VPMU_RUN SYSCALL.elf -- SYSCALL from user mode (CPL 3),
# and vpmu-run's --user-syscall (examples/vpmu-run/syscall.c).
#
# SYSCALL.elf (user_mode.c, USER_SYSCALL=1) sets EFER.SCE, IA32_STAR,
# IA32_LSTAR (a copy of its entry stub on a supervisor-only page) and
# IA32_FMASK, then twice IRETQs to CPL 3, where the code runs a loop, two
# SYSCALLs (the stub SYSRETs each time) and a read of the supervisor page
# (a #PF that is the guest's own: its handler returns to the kernel).  It
# prints what the stub saw:
#
#   user_mode: syscall 4, cs 0x8 ss 0x10, rcx 1 1, r11 flags 0x246, masked 1,
#     #PF 2 at lstar 0 user 1, cr2 0x600000 err 0x5 cs 0x23
#
# (four entries at CPL 0 with CS and SS from STAR, RCX the address past each
# SYSCALL, R11 the user's flags (ZF and PF from the loop, IF set as user
# mode entered, IOPL 0), RFLAGS masked by FMASK; the two #PF at the
# user code's read, none at LSTAR).  That must hold with --user-syscall auto
# and complete, with the synthetic source and the exact source in both
# modes (whose kernel-mode count must not change between the runs: "os diff
# 0").  With --user-syscall host it holds only where the host completes
# SYSCALL itself; the default run's report says which the probe found, and
# where it found the host leaving SYSCALL at CPL 3, the host run must show
# it: no entry, "#PF 2 at lstar 1" with CR2 = LSTAR.  A bad --user-syscall
# is a usage error.  Exit 77 (skip) when vpmu-run finds no usable /dev/kvm.
[ $# -eq 2 ] || { echo "usage: user_syscall.sh VPMU_RUN SYSCALL.elf" >&2; exit 2; }
run=$1 guest=$2
fail=0
good='user_mode: syscall 4, cs 0x8 ss 0x10, rcx 1 1, r11 flags 0x246, masked 1, #PF 2 at lstar 0 user 1, cr2 0x600000 err 0x5 cs 0x23'
left='user_mode: syscall 0, cs 0x0 ss 0x0, rcx 0 0, r11 flags 0x0, masked 1, #PF 2 at lstar 1 user 0, cr2 0x600000 err 0x5 cs 0x23'

# vr ARGS...: run the guest, output in $out; skip on status 77.
vr() {
	out=$(VPMU_SKIP_NO_KVM=1 timeout 120 "$run" --pmu intel-v2 "$@" "$guest" 2>&1)
	st=$?
	echo "== vpmu-run $*"
	echo "$out"
	[ $st -eq 77 ] && { echo "skipped (status 77)"; exit 77; }
	[ $st -eq 0 ] || { echo "FAIL: $*: status $st"; fail=1; }
}
bad() { echo "FAIL: $*"; fail=1; }
has() { echo "$out" | grep -qF "$1"; }

vr --source synthetic
if has "user-mode SYSCALL: this host's KVM leaves it at CPL 3 (probed), 4 completed by vpmu-run"; then
	host=cpl3
elif has "user-mode SYSCALL: this host's KVM completes it (probed), 0 completed by vpmu-run"; then
	host=completes
else
	bad "the report does not say what the probe found, with the matching count"
	host=unknown
fi
echo "(the probe: $host)"
has "$good" || bad "auto, synthetic: the guest's SYSCALLs did not enter CPL 0 as SYSCALL does"

for a in "--source exact --exact-mode step" "--source exact --exact-mode block" \
    "--source synthetic --user-syscall complete"; do
	# shellcheck disable=SC2086
	vr $a
	has "$good" || bad "$a: the guest's SYSCALLs did not enter CPL 0 as SYSCALL does"
	has ", os diff 0, #DB 0, #GP 0" || bad "$a: kernel-mode work differed between the runs, or a stray #DB/#GP"
done
has "user-mode SYSCALL: caught (--user-syscall complete), 4 completed by vpmu-run" ||
    bad "complete: the report's count is not 4"

vr --source synthetic --user-syscall host
has "user-mode SYSCALL:" && bad "host: a SYSCALL line, though vpmu-run left SYSCALL to KVM"
case $host in
cpl3) has "$left" || bad "host: this host leaves SYSCALL at CPL 3 (probed), the guest should see #PF at LSTAR" ;;
completes) has "$good" || bad "host: this host completes SYSCALL (probed), the guest should too" ;;
esac

out=$("$run" --user-syscall bogus "$guest" 2>&1)
st=$?
[ $st -eq 2 ] && echo "$out" | grep -qF -- "--user-syscall bogus: want auto, complete or host" ||
    bad "--user-syscall bogus: status $st, want 2 and a message: $out"

[ $fail -eq 0 ] && echo "user_syscall: ok"
exit $fail
