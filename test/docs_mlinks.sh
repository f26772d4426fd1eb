#!/bin/sh
# docs_mlinks.sh BUILD_DIR DOCS_DIR -- `man FUNCTION` works once installed.
# Installs BUILD_DIR into a private prefix, then for every name in the NAME
# section (.Nm) of a page DOCS_DIR/*.[347] but the page's own: the prefix
# has share/man/manSEC/NAME.SEC, whose one line ".so manSEC/PAGE.SEC" names
# an installed page of the same section that lists NAME in its NAME
# section.  Where man(1) is man-db's, `MANPATH=PREFIX/share/man man -w
# SEC NAME` finds the page (or the link) (skipped without man-db: cmake/deps.sh does not
# install it).  Prints every missing or wrong link and fails.
if [ $# -ne 2 ]; then
	echo "usage: docs_mlinks.sh BUILD_DIR DOCS_DIR" >&2
	exit 2
fi
build=$1 docs=$2
cmake=${CMAKE:-cmake}
tmp=$(mktemp -d) || exit 2
trap 'rm -rf "$tmp"' EXIT
if ! "$cmake" --install "$build" --prefix "$tmp/p" >"$tmp/log" 2>&1; then
	cat "$tmp/log" >&2
	echo "docs_mlinks: cmake --install $build failed" >&2
	exit 1
fi
man=$tmp/p/share/man
[ -d "$man" ] || { echo "docs_mlinks: no $man after the install" >&2; exit 1; }
mandb=0
if command -v man >/dev/null 2>&1 && man --version 2>/dev/null | grep -q '^man '; then
	mandb=1
fi

# "NAME SEC PAGE" for each .Nm of a NAME section.
for p in "$docs"/*.[347]; do
	awk -v page="${p##*/}" '
	/^\.Sh / { sh = $2; next }
	sh == "NAME" && /^\.Nm[ \t]/ { sec = page; sub(/.*\./, "", sec); print $2, sec, page }
	' "$p"
done >"$tmp/names"

status=0 n=0
while read -r name sec page; do
	self=${page%.*}
	[ "$name" = "$self" ] && continue
	[ -f "$docs/$name.$sec" ] && continue	# a page of its own
	n=$((n + 1))
	f=$man/man$sec/$name.$sec
	if [ ! -f "$f" ]; then
		echo "docs_mlinks: $name($sec): no $f" >&2
		status=1
		continue
	fi
	target=$(sed -n '1s/^\.so man'"$sec"'\/\([^ ]*\)$/\1/p' "$f")
	if [ -z "$target" ] || [ "$(wc -l <"$f")" -ne 1 ]; then
		echo "docs_mlinks: $f: not one line .so man$sec/PAGE.$sec: $(head -c 80 "$f")" >&2
		status=1
		continue
	fi
	if [ ! -f "$man/man$sec/$target" ] ||
	    ! grep -q -x "$name $sec $target" "$tmp/names"; then
		echo "docs_mlinks: $f points to man$sec/$target, which does not list $name" >&2
		status=1
		continue
	fi
	if [ $mandb -eq 1 ]; then
		# man-db follows the .so: the page itself.
		got=$(MANPATH=$man man -w "$sec" "$name" 2>&1)
		if [ "$got" != "$man/man$sec/$target" ] && [ "$got" != "$f" ]; then
			echo "docs_mlinks: MANPATH=$man man -w $sec $name: $got, not $man/man$sec/$target" >&2
			status=1
		fi
	fi
done <"$tmp/names"
if [ $n -eq 0 ]; then
	echo "docs_mlinks: no name to link under $docs" >&2
	exit 1
fi
[ $status -eq 0 ] && echo "docs_mlinks: $n names, each a link to its page"
exit $status
