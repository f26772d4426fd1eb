#!/bin/sh
# docs_names.sh CC INCLUDE_DIR GUEST_INCLUDE_DIR CMAKE_DIR DOCS_DIR -- every
# libvpmu name a manual page DOCS_DIR/*.[1-9] names exists: a function,
# type, constant or struct field that is renamed or removed in the headers
# fails here until the pages follow.  Prints one line per finding,
# PAGE:LINE: what, and fails.
#
# What exists: every identifier of the installed headers,
# INCLUDE_DIR/vpmu/*.h and GUEST_INCLUDE_DIR/vpmu-guest/*.h, after the
# preprocessor (CC -E -dD), so the enumerators the X-macro lists make are
# there and comments are not; and the functions CMAKE_DIR/*.cmake defines
# (vpmu_add_guest(), which vg_runtime(3) documents).
#
# What a page names, and what is checked of it:
#   .Fn, .Fo        a function or hook: it exists, or it is in FOREIGN below
#   .Nm             in the NAME section of a page of section 3, 4 or 7, but
#                   the page's own name (.Dt): it exists
#   .Vt, .Ft        the type (after const/struct/enum/union): a libvpmu name
#                   exists; another struct, enum or union tag exists, is
#                   KVM's (kvm_*) or is in FOREIGN
#   .Dv, .Va        a libvpmu name exists; NAME_ (a trailing underscore, as in
#                   ".Dv VPMU_SET_ Ns *") is a family: some name starts so.
#                   .Va vpmu_x.f or vpmu_x->f: f is a field of struct vpmu_x
#   struct listings in a .Bd -literal display, "struct vpmu_x {" to its
#                   "};": struct vpmu_x exists and each member it lists is
#                   one of the header's struct's (nested members included)
#   typedef ... (*vpmu_x)(...) in a display: vpmu_x exists
# A libvpmu name starts with vpmu_, VPMU_, vg_ or VG_.  Other names (KVM's,
# FreeBSD's PMC_*, the C library's) are not checked, but for the functions
# and tags above.  Internal names start with vpmu__ or VPMU__: a page may
# name them (vpmu_exact(7) does, for the source's statistics) and they
# are not checked.
if [ $# -ne 5 ]; then
	echo "usage: docs_names.sh CC INCLUDE_DIR GUEST_INCLUDE_DIR CMAKE_DIR DOCS_DIR" >&2
	exit 2
fi
cc=$1 inc=$2 ginc=$3 cmakedir=$4 docs=$5

# Functions and tags that are not libvpmu's: the C library's and the
# kernels' (Linux, FreeBSD, OpenBSD) that pages cite by name.
FOREIGN='sigaction timer_create timer_settime IOCPARM_LEN _start
entry_SYSCALL_64 perfmon_fini pmc_read_counter pmclog_feed pt_regs
task_struct pmc_ops'

tmp=$(mktemp -d) || exit 2
trap 'rm -rf "$tmp"' EXIT

# The headers' text, preprocessed, only what comes from DIR's own files.
ours() {	# DIR SUBDIR [CFLAGS...]
	d=$1 sub=$2
	shift 2
	for h in "$d/$sub"/*.h; do
		printf '#include <%s/%s>\n' "$sub" "${h##*/}"
	done >"$tmp/all.c"
	if ! "$cc" -E -dD "$@" -I "$d" "$tmp/all.c" >"$tmp/pp" 2>"$tmp/pp.err"; then
		cat "$tmp/pp.err" >&2
		echo "docs_names: $cc -E failed on $d/$sub" >&2
		exit 2
	fi
	awk -v dir="$d/$sub/" '
	/^# [0-9]+ "/ {
		f = $3; gsub(/"/, "", f)
		keep = substr(f, 1, length(dir)) == dir
		next
	}
	keep
	' "$tmp/pp"
}
{
	ours "$inc" vpmu -D_GNU_SOURCE
	ours "$ginc" vpmu-guest -ffreestanding
} >"$tmp/text" || exit 2

# "n NAME" for every identifier; "f STRUCT MEMBER" for every identifier in
# the braces of "struct STRUCT {" (nested ones included).
awk '
{ t = t " " $0 }
END {
	s = t
	while (match(s, /[A-Za-z_][A-Za-z0-9_]*/)) {
		print "n " substr(s, RSTART, RLENGTH)
		s = substr(s, RSTART + RLENGTH)
	}
	s = t
	while (match(s, /struct[ \t]+[A-Za-z_][A-Za-z0-9_]*[ \t]*\{/)) {
		hd = substr(s, RSTART, RLENGTH)
		s = substr(s, RSTART + RLENGTH)
		name = hd; sub(/^struct[ \t]+/, "", name); sub(/[ \t]*\{$/, "", name)
		depth = 1; body = ""; r = s
		while (depth > 0 && match(r, /[{}]/)) {
			body = body substr(r, 1, RSTART)
			depth += substr(r, RSTART, 1) == "{" ? 1 : -1
			r = substr(r, RSTART + 1)
		}
		while (match(body, /[A-Za-z_][A-Za-z0-9_]*/)) {
			print "f " name " " substr(body, RSTART, RLENGTH)
			body = substr(body, RSTART + RLENGTH)
		}
	}
}
' "$tmp/text" | sort -u >"$tmp/known"
for f in "$cmakedir"/*.cmake; do
	sed -n -e 's/^[ \t]*function([ \t]*\([A-Za-z_][A-Za-z0-9_]*\).*/n \1/p' \
	    -e 's/.*PROPERTIES[ \t][ \t]*\([A-Z_][A-Z0-9_]*\).*/n \1/p' "$f"
done >>"$tmp/known"
for n in $FOREIGN; do
	echo "x $n"
done >>"$tmp/known"
if [ "$(grep -c '^n vpmu_' "$tmp/known")" -lt 100 ] ||
    ! grep -q '^n vg_' "$tmp/known"; then
	echo "docs_names: too few names found in the headers" >&2
	exit 2
fi

# What the pages name: "KIND NAME PAGE:LINE", KIND one of
#   fn (a function), nm (a .Nm to check), ty (a type), tg (a struct, enum
#   or union tag), dv (a constant or variable), st (a struct listing's
#   struct), mb STRUCT (a member of that listing).
for p in "$docs"/*.[1-9]; do
	awk -v page="${p##*/}" '
	function unq(s) { gsub(/"/, "", s); return s }
	function out(k, n) {
		if (n != "")
			print k " " n " " page ":" FNR
	}
	# A member declaration of a struct listing: its names.
	function member(d,   k, i, n, decl) {
		if (match(d, /\([ \t]*\*[ \t]*[A-Za-z_][A-Za-z0-9_]*[ \t]*\)/)) {
			n = substr(d, RSTART, RLENGTH); gsub(/[^A-Za-z0-9_]/, "", n)
			out("mb " inst, n)
			return
		}
		gsub(/\[[^]]*\]/, "", d); gsub(/:[ \t]*[0-9]+/, "", d)
		k = split(d, decl, ",")
		for (i = 1; i <= k; i++) {
			n = decl[i]; sub(/[ \t]*=.*/, "", n); sub(/[ \t]+$/, "", n)
			sub(/.*[^A-Za-z0-9_]/, "", n)
			if (n ~ /^[A-Za-z_][A-Za-z0-9_]*$/)
				out("mb " inst, n)
		}
	}
	BEGIN {
		self = page; sub(/\.[0-9]$/, "", self)
		sect = page; sub(/.*\./, "", sect)
	}
	/^\.\\"/ { next }
	/^\.Sh / { sh = $2 }
	/^\.Bd .*-literal/ { lit = 1; next }
	/^\.Ed/ { lit = 0; inst = ""; carry = ""; other = 0; incom = 0; next }
	lit {
		l = $0
		# comments, also over several lines
		if (incom) {
			if (index(l, "*/") == 0)
				next
			l = substr(l, index(l, "*/") + 2); incom = 0
		}
		while ((i = index(l, "/*")) > 0) {
			r = substr(l, i + 2)
			if ((j = index(r, "*/")) == 0) {
				l = substr(l, 1, i - 1); incom = 1
				break
			}
			l = substr(l, 1, i - 1) " " substr(r, j + 2)
		}
		gsub(/\\e/, "\\", l); gsub(/\\&/, "", l)
		# Statements, cut at { } and ;, carried over lines.
		carry = carry " " l
		while (match(carry, /[{};]/)) {
			c = substr(carry, RSTART, 1)
			d = substr(carry, 1, RSTART - 1)
			carry = substr(carry, RSTART + 1)
			if (c == "{") {
				if (inst != "")
					depth++
				else if (other == 0 && d ~ /^[ \t]*(typedef[ \t]+)?struct[ \t]+(vpmu|vg)_[A-Za-z0-9_]*[ \t]*$/) {
					inst = d; sub(/^[ \t]*(typedef[ \t]+)?struct[ \t]+/, "", inst)
					sub(/[ \t]*$/, "", inst)
					out("st", inst)
					depth = 1
				} else
					other++
			} else if (c == "}") {
				if (inst != "" && --depth == 0)
					inst = ""
				else if (inst == "" && other > 0)
					other--
				else if (inst != "")
					member(d)
			} else if (inst != "")
				member(d)
			else if (match(d, /typedef[^(]*\([ \t]*\*[ \t]*[A-Za-z_][A-Za-z0-9_]*[ \t]*\)/)) {
				n = substr(d, RSTART, RLENGTH); sub(/[ \t]*\)$/, "", n)
				sub(/.*[^A-Za-z0-9_]/, "", n)
				out("dv", n)
			}
		}
		next
	}
	/^\./ {
		n = 0; s = substr($0, 2)
		while (length(s) > 0) {
			sub(/^[ \t]+/, "", s)
			if (s == "")
				break
			if (substr(s, 1, 1) == "\"")
				match(s, /^"[^"]*"?/)
			else
				match(s, /^[^ \t]+/)
			tok[++n] = substr(s, 1, RLENGTH)
			s = substr(s, RLENGTH + 1)
		}
		for (i = 1; i < n; i++) {
			m = tok[i]; a = unq(tok[i + 1])
			if (m == "Fn" || m == "Fo")
				out("fn", a)
			else if (m == "Nm") {
				if (sh == "NAME" && sect ~ /^[347]$/ && a != self)
					out("nm", a)
			} else if (m == "Vt" || m == "Ft") {
				j = i + 1; tag = 0
				while (j <= n && tok[j] ~ /^(const|volatile|struct|enum|union)$/) {
					if (tok[j] != "const" && tok[j] != "volatile")
						tag = 1
					j++
				}
				a = unq(tok[j]); sub(/[^A-Za-z0-9_].*/, "", a)
				out(tag ? "tg" : "ty", a)
			} else if (m == "Dv" || m == "Va")
				out("dv", a)
		}
	}
	' "$p" || exit 2
done >"$tmp/named" || exit 2
if [ ! -s "$tmp/named" ]; then
	echo "docs_names: no name found in $docs" >&2
	exit 2
fi

awk '
FNR == NR {
	if ($1 == "n") known[$2] = 1
	else if ($1 == "x") foreign[$2] = 1
	else if ($1 == "f") field[$2 " " $3] = 1
	next
}
function ours(n) { return n ~ /^(vpmu|VPMU|vg|VG)_/ && n !~ /^(vpmu|VPMU)__/ }
# NAME_ or NAME* (".Dv VPMU_PV_E*"): a family, some name starts so.
function exists(n,   k) {
	if (n ~ /(_|\*)$/) {
		sub(/\*$/, "", n)
		for (k in known)
			if (index(k, n) == 1 && k != n)
				return 1
		return 0
	}
	return (n in known)
}
function bad(what) { print $NF ": " what; nbad++ }
{ checked++ }
$1 == "fn" {
	if ($2 !~ /^(vpmu|VPMU)__/ && !exists($2) && !($2 in foreign))
		bad("function " $2 ": not in the headers")
	next
}
$1 == "nm" { if (!($2 in known)) bad(".Nm " $2 ": not in the headers"); next }
$1 == "ty" { if (ours($2) && !exists($2)) bad("type " $2 ": not in the headers"); next }
$1 == "tg" {
	if ($2 ~ /^(vpmu|VPMU)__/ || $2 ~ /^kvm_/)
		next
	if (!($2 in known) && !($2 in foreign))
		bad("type " $2 ": not in the headers")
	next
}
$1 == "st" {
	if (!exists($2)) bad("struct " $2 ": not in the headers")
	next
}
$1 == "mb" {
	if (!(($2 " " $3) in field))
		bad("struct " $2 " has no member " $3)
	next
}
$1 == "dv" {
	n = $2
	if (match(n, /(\.|->)/)) {
		st = substr(n, 1, RSTART - 1); rest = substr(n, RSTART + RLENGTH)
		if (!ours(st))
			next
		k = split(rest, part, /\.|->/)
		for (i = 1; i <= k; i++)
			if (!((st " " part[i]) in field))
				bad("struct " st " has no member " part[i])
		next
	}
	sub(/[^A-Za-z0-9_*].*/, "", n)
	if (ours(n) && !exists(n))
		bad("name " n ": not in the headers")
	next
}
END {
	if (nbad > 0) {
		print "docs_names: " nbad " names the headers do not have (test/docs_names.sh says what is checked)"
		exit 1
	}
	print "docs_names: " checked " names checked, every one in the headers"
}
' "$tmp/known" "$tmp/named"
