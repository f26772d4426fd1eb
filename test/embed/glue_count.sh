#!/bin/sh
# glue_count.sh README EMBED.c: the README's "N lines of glue" must be the
# number of lines of embed.c that end in the marker comment, so neither can
# change without the other.
[ $# -eq 2 ] || { echo "usage: glue_count.sh README.md embed.c" >&2; exit 2; }
n=$(grep -c '/\* vpmu \*/$' "$2")
said=$(sed -n 's/.*\*\*\([0-9][0-9]*\) lines of glue\*\*.*/\1/p' "$1" | head -n 1)
echo "embed.c: $n lines marked /* vpmu */; README.md says: ${said:-nothing}"
[ -n "$said" ] && [ "$said" -eq "$n" ]
