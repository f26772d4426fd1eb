#!/bin/sh
# debug.sh NM EXPECT EMBED GUEST: embed -b at the guest's symbol embed_bp
# (a hardware breakpoint of the VMM's own, as a gdb stub's), with the
# exact source stepping the counted loop around it: the guest checks its
# exact count, and the VMM must report 20 breakpoint hits (10 rounds with
# the counter off, 10 with it on).
[ $# -eq 4 ] || { echo "usage: debug.sh NM EXPECT EMBED GUEST" >&2; exit 2; }
addr=$("$1" "$4" | awk '$3 == "embed_bp" { print $1 }')
[ -n "$addr" ] || { echo "debug.sh: no symbol embed_bp in $4" >&2; exit 1; }
exec sh "$2" 0 "breakpoint 20 hits" -- "$3" -v -p amd-v2 -b "0x$addr" "$4"
