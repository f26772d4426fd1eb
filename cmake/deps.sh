#!/bin/sh
# Install the Debian packages libvpmu needs, if any are missing.
# As root: apt-get installs them.  Otherwise: print the exact command and fail.
set -e
PKGS="cmake make gcc clang pkg-config libcpuid-dev libcmocka-dev libpfm4-dev libzydis-dev libelf-dev liblzma-dev zlib1g-dev libzstd-dev valgrind mandoc groff-base protobuf-compiler libxml2-utils dpkg-dev file debootstrap"
missing=""
for p in $PKGS; do
	if ! dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed"; then
		missing="$missing $p"
	fi
done
[ -z "$missing" ] && exit 0
if [ "$(id -u)" != 0 ]; then
	echo "libvpmu: missing Debian packages:$missing" >&2
	echo "libvpmu: run as root:  apt-get update && apt-get install -y$missing" >&2
	exit 1
fi
echo "libvpmu: installing$missing" >&2
export DEBIAN_FRONTEND=noninteractive
apt-get update -qq
apt-get install -y -qq --no-install-recommends $missing >/dev/null
