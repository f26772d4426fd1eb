#!/bin/sh
# no_kvm.sh VPMU-RUN GUEST.elf -- vpmu-run without a usable /dev/kvm.
#
# In a private mount namespace /dev/null is bound over /dev/kvm (it opens,
# but is not KVM).  With VPMU_SKIP_NO_KVM=1 vpmu-run must print "SKIP: ..."
# and exit 77 -- the contract ctest's skips rely on; without it, exit 1 with
# the reason.  This script itself exits 0 when both hold, 77 (skip) when it
# cannot make the namespace (not root, no unshare).
run=$1 guest=$2
if [ "$(id -u)" != 0 ] || ! command -v unshare >/dev/null 2>&1 ||
    ! unshare -m true 2>/dev/null; then
	echo "SKIP: needs root and unshare -m"
	exit 77
fi
out=$(unshare -m sh -c 'mount --bind /dev/null /dev/kvm &&
	VPMU_SKIP_NO_KVM=1 "$1" --source synthetic "$2"' sh "$run" "$guest" 2>&1)
s=$?
echo "$out"
if [ $s -ne 77 ] || ! echo "$out" | grep -q '^SKIP: /dev/kvm: KVM_GET_API_VERSION: '; then
	echo "no_kvm.sh: FAIL: with VPMU_SKIP_NO_KVM=1: status $s, want 77 and SKIP:"
	exit 1
fi
out=$(unshare -m sh -c 'mount --bind /dev/null /dev/kvm &&
	VPMU_SKIP_NO_KVM= "$1" --source synthetic "$2"' sh "$run" "$guest" 2>&1)
s=$?
echo "$out"
if [ $s -ne 1 ] || ! echo "$out" | grep -q '^vpmu-run: /dev/kvm: KVM_GET_API_VERSION: '; then
	echo "no_kvm.sh: FAIL: without VPMU_SKIP_NO_KVM: status $s, want 1 and the reason"
	exit 1
fi
exit 0
