#!/bin/sh
# docs_api.sh INCLUDE_DIR DOCS_DIR -- every public symbol, a declaration
# marked VPMU_EXTERN in INCLUDE_DIR/vpmu/*.h (the installed headers), is
# documented by a manual page DOCS_DIR/*.[1-9]: one page names it with .Nm
# in its NAME section and declares it in its SYNOPSIS, a function with .Fn
# or .Fo, a variable in a .Vt or .Va line.  Prints every symbol that no page
# documents and fails; also fails if a declaration cannot be parsed or if
# no symbol at all is found.
#
# docs_api.sh -g INCLUDE_DIR DOCS_DIR -- the same for the guest headers,
# INCLUDE_DIR/vpmu-guest/*.h, which have no VPMU_EXTERN: every function
# declared or defined (static inline) at file scope there.  Not checked:
# main(), which the guest program defines, and the C library's memset,
# memcpy, memmove, memcmp and strlen, which <vpmu-guest/runtime.h> declares
# because the compiler may call them (vg_runtime(3) says the runtime has
# them; their pages are the C library's).
guest=0
if [ "$1" = -g ]; then
	guest=1
	shift
fi
inc=$1
docs=$2
if [ $guest -eq 1 ]; then
	sub=vpmu-guest
else
	sub=vpmu
fi
if [ ! -d "$inc/$sub" ] || [ ! -d "$docs" ]; then
	echo "usage: docs_api.sh [-g] INCLUDE_DIR DOCS_DIR" >&2
	exit 2
fi
tmp=$(mktemp -d) || exit 2
trap 'rm -rf "$tmp"' EXIT

# Guest declarations: the file's text without comments, preprocessor lines,
# string and character literals or __attribute__((...)), cut at each ';',
# '{' and '}'.  A piece before a ';' or '{' at brace depth 0 that has a
# '(', does not start with typedef or _Static_assert and has no '=' before
# its '(' declares or defines a function: the last identifier before the
# '('.
guest_decls() {
	for h in "$inc"/vpmu-guest/*.h; do
		awk -v file="$h" '
		cont { cont = /\\$/; next }
		/^[ \t]*#/ { cont = /\\$/; next }
		{ text = text " " $0 }
		function piece(d,   s, n) {
			if (index(d, "(") == 0 || d ~ /^[ ]*typedef[^A-Za-z0-9_]/ ||
			    d ~ /^[ ]*(_Static_assert|static_assert)[ (]/)
				return
			s = substr(d, 1, index(d, "(") - 1)
			if (index(s, "=") > 0)
				return
			sub(/[ *]+$/, "", s)
			n = s; sub(/.*[^A-Za-z0-9_]/, "", n)
			if (n ~ /^[A-Za-z_][A-Za-z0-9_]*$/ && n != s)
				print "f " n
			else
				print "? " file ": " d
		}
		END {
			gsub(/\/\*[^*]*\*+([^\/*][^*]*\*+)*\//, " ", text)
			gsub(/"([^"\\]|\\.)*"/, "\"\"", text)
			gsub(/\047([^\047\\]|\\.)*\047/, "0", text)
			gsub(/[ \t]+/, " ", text)
			while ((i = index(text, "__attribute__")) > 0) {
				rest = substr(text, i + 13); depth = 0; j = 0
				while (match(rest, /[()]/)) {
					j += RSTART
					depth += substr(rest, RSTART, 1) == "(" ? 1 : -1
					rest = substr(rest, RSTART + 1)
					if (depth == 0)
						break
				}
				text = substr(text, 1, i - 1) " " substr(text, i + 13 + j)
			}
			depth = 0; d = ""
			while (match(text, /[{};]/)) {
				c = substr(text, RSTART, 1)
				d = d substr(text, 1, RSTART - 1)
				text = substr(text, RSTART + 1)
				if (c == "}") {
					depth--; d = ""
					continue
				}
				if (depth == 0)
					piece(d)
				if (c == "{")
					depth++
				d = ""
			}
		}
		' "$h"
	done | grep -v -x -E 'f (main|memset|memcpy|memmove|memcmp|strlen)'
}

# Declarations: from VPMU_EXTERN to the next ';', comments dropped.
# Output "f NAME" for a function, "v NAME" for a variable, "? TEXT" for
# what does not parse.
host_decls() {
	for h in "$inc"/vpmu/*.h; do
		awk -v file="$h" '
		function emit(d,   s, n) {
			gsub(/\/\*[^*]*\*+([^\/*][^*]*\*+)*\//, " ", d)
			gsub(/[ \t]+/, " ", d)
			if (index(d, "(") > 0) {
				s = substr(d, 1, index(d, "(") - 1)
				sub(/[ *]+$/, "", s)
				n = s; sub(/.*[ *]/, "", n)
				if (n ~ /^[A-Za-z_][A-Za-z0-9_]*$/ && n != "__attribute__")
					print "f " n
				else
					print "? " file ": " d
			} else {
				s = d; sub(/;.*/, "", s); sub(/\[.*/, "", s)
				sub(/[ ]+$/, "", s)
				n = s; sub(/.*[ *]/, "", n)
				if (n ~ /^[A-Za-z_][A-Za-z0-9_]*$/)
					print "v " n
				else
					print "? " file ": " d
			}
		}
		/^[ \t]*#/ { next }
		!in_decl && /(^|[^A-Za-z0-9_])VPMU_EXTERN([^A-Za-z0-9_]|$)/ {
			in_decl = 1; decl = ""
		}
		in_decl {
			decl = decl " " $0
			if (index($0, ";") > 0) { emit(decl); in_decl = 0 }
		}
		END { if (in_decl) print "? " file ": unterminated: " decl }
		' "$h"
	done
}

if [ $guest -eq 1 ]; then
	guest_decls
else
	host_decls
fi >"$tmp/decls"

# Per page: the .Nm names of its NAME section and the SYNOPSIS lines.
for p in "$docs"/*.[1-9]; do
	awk -v page="$p" '
	/^\.Sh / { sec = $2; next }
	sec == "NAME" && /^\.Nm[ \t]/ { print "n " $2 " " page }
	sec == "SYNOPSIS" && /^\.(Fn|Fo)[ \t]/ {
		n = $2; gsub(/"/, "", n); print "f " n " " page
	}
	sec == "SYNOPSIS" && /^\.(Vt|Va)[ \t]/ {
		for (i = 2; i <= NF; i++) print "v " $i " " page
	}
	' "$p"
done >"$tmp/pages"

status=0
if grep '^?' "$tmp/decls" >/dev/null; then
	sed -n 's/^? /docs_api: cannot parse: /p' "$tmp/decls" >&2
	status=1
fi
if ! grep '^[fv] ' "$tmp/decls" >/dev/null; then
	echo "docs_api: no declaration found under $inc/$sub" >&2
	exit 1
fi
n=0
while read -r kind name; do
	[ "$kind" = f ] || [ "$kind" = v ] || continue
	n=$((n + 1))
	# Pages naming it in NAME, then among them one declaring it.
	found=$(awk -v k="$kind" -v s="$name" '
	$1 == "n" && $2 == s { named[$3] = 1 }
	$1 == k && $2 == s { decl[$3] = 1 }
	END { for (p in named) if (p in decl) { print p; exit } }
	' "$tmp/pages")
	if [ -z "$found" ]; then
		if [ "$kind" = f ]; then
			what="function $name: no page has .Nm $name in NAME and .Fn $name in SYNOPSIS"
		else
			what="variable $name: no page has .Nm $name in NAME and it in a SYNOPSIS .Vt or .Va line"
		fi
		echo "docs_api: undocumented $what" >&2
		status=1
	fi
done <"$tmp/decls"
[ $status -eq 0 ] && echo "docs_api: $n public symbols, every one documented"
exit $status
