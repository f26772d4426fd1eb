# linuxlib.sh -- what linuxtasks.sh and linuxkallsyms.sh share, sourced
# after they set vs (vpmustat), dir (the work directory) and fail().
#
# at VA DELTA: the 16 hex digits of guest address 0xVA + DELTA.
# guest_map ELF DELTA: the map of linuxtasks' kernel: ELF's symbols (nm -n)
# at their addresses + DELTA, and __start_BTF / __stop_BTF around
# btf_blob, sorted.
at() { printf '%016x' $((0x$1 + $2)); }
guest_map() {
	{
		nm -n "$1" | while read -r a t n; do
			case $a in [0-9a-f]*) ;; *) continue ;; esac
			printf '%s %s %s\n' "$(at "$a" "$2")" "$t" "$n"
		done
		nm -S "$1" | while read -r a size t n; do
			[ "$n" = btf_blob ] || continue
			printf '%s R __start_BTF\n' "$(at "$a" "$2")"
			printf '%s R __stop_BTF\n' "$(at "$a" $(($2 + 0x$size)))"
		done
	} | sort
}
#
# profile NAME ELF VPMUSTAT-OPTIONS...: vpmustat samples linuxtasks' ELF
# (instructions every 1009, call chains) with the options; the files
# NAME.log, NAME.perf (perf script's text), NAME.console, NAME.err, and
# NAME.combos: each sample's leaf function, comm and pid/tid, counted.
# Exits 77 (skip) where vpmustat finds no usable /dev/kvm.
profile() {
	name=$1 pelf=$2
	shift 2
	VPMU_SKIP_NO_KVM=1 "$vs" -S instructions -n 1009 --mem 64 --timeout 120 \
	    -O "$dir/$name.log" --perf-script "$dir/$name.perf" "$@" "$pelf" \
	    >"$dir/$name.console" 2>"$dir/$name.err"
	st=$?
	cat "$dir/$name.err"
	[ $st -eq 77 ] && { echo "${0##*/}: skipped (no usable /dev/kvm)"; exit 77; }
	[ $st -eq 0 ] || fail "$name: vpmustat exited $st"
	grep -q "^linuxtasks: done" "$dir/$name.console" || fail "$name: no 'linuxtasks: done'"
	awk '/^[^\t]/ { comm = $1; ids = $2; want = 1; next }
	     want && /^\t/ { sym = $2; sub(/\+0x[0-9a-f]+$/, "", sym); print sym, comm, ids; want = 0 }' \
	    "$dir/$name.perf" | sort | uniq -c >"$dir/$name.combos"
	cat "$dir/$name.combos"
}
