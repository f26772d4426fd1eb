# test_formats.awk -- readers of vpmustat's --perf-script and --pprof for
# test_outputs.sh, written from the formats' descriptions.
#
#   awk -v fmt=perf -f test_formats.awk FILE
#       perf script's text: a sample is a header line (not indented:
#       "COMM PID/TID [CPU] SECS.USECS: [PERIOD] EVENT:"), then a line per
#       frame, indented ("ADDR SYMBOL+0xOFF (DSO)"), leaf first, and a
#       blank line.  Prints each distinct stack root first with its count
#       ("main;work;hot 2"), as stackcollapse-perf.pl folds them (an
#       "[unknown]" symbol is its address, 0x...), then "samples N" and
#       "bad LINE" for each line of neither shape.
#   awk -v fmt=pprof -f test_formats.awk DECODED
#       protoc --decode's text of a profile.proto: each sample's stack
#       through its locations' functions' names, root first, with its first
#       value; then "types" (the sample types' type/unit strings), the
#       sums of each value, "period", "file" (the mapping's file).
BEGIN { n = 0; samples = 0 }
fmt == "perf" && /^$/ { flush(); next }
fmt == "perf" && /^[ \t]/ {
	if (!inside) { print "bad " $0; next }
	sym = $2
	sub(/\+0x[0-9a-f]+$/, "", sym)
	if (sym == "[unknown]") {
		a = $1
		sub(/^0+/, "", a)
		sym = "0x" a
	}
	if ($3 !~ /^\(.*\)$/)
		print "bad " $0
	f[++n] = sym
	next
}
fmt == "perf" {
	flush()
	if ($0 !~ /^[^ \t][^ ]* [0-9]+\/[0-9]+ \[[0-9][0-9][0-9]\] [0-9]+\.[0-9][0-9][0-9][0-9][0-9][0-9]: ([0-9]+ )?[^ ]+:$/)
		print "bad " $0
	inside = 1
	samples++
	next
}
function flush(  i, s) {
	if (n > 0) {
		s = f[n]
		for (i = n - 1; i >= 1; i--)
			s = s ";" f[i]
		count[s]++
	}
	n = 0
	inside = 0
}

fmt == "pprof" && /^[a-z_]+ \{$/ { blk = $1; k++; next }
fmt == "pprof" && /^\}$/ { blk = ""; next }
fmt == "pprof" && /^string_table: / {
	s = substr($0, 15)
	gsub(/^"|"$/, "", s)
	st[nst++] = s
	next
}
fmt == "pprof" && /^period: / { period = $2; next }
fmt == "pprof" && blk == "sample_type" && $1 == "type:" { tt[++ntypes] = $2 }
fmt == "pprof" && blk == "sample_type" && $1 == "unit:" { tu[ntypes] = $2 }
fmt == "pprof" && blk == "sample" && $1 == "location_id:" { sl[k] = sl[k] " " $2; isample[k] = 1 }
fmt == "pprof" && blk == "sample" && $1 == "value:" { sv[k] = sv[k] " " $2; isample[k] = 1 }
fmt == "pprof" && blk == "location" && $1 == "id:" { lid = $2 }
fmt == "pprof" && blk == "location" && $1 == "function_id:" { lfn[lid] = $2 }
fmt == "pprof" && blk == "function" && $1 == "id:" { fid = $2 }
fmt == "pprof" && blk == "function" && $1 == "name:" { fname[fid] = $2 }
fmt == "pprof" && blk == "mapping" && $1 == "filename:" { mfile = $2 }

END {
	if (fmt == "perf") {
		flush()
		for (s in count)
			print s " " count[s]
		print "samples " samples
		exit
	}
	for (j in isample) {
		nl = split(sl[j], ids, " ")
		nv = split(sv[j], vals, " ")
		s = st[fname[lfn[ids[nl]]]]
		for (i = nl - 1; i >= 1; i--)
			s = s ";" st[fname[lfn[ids[i]]]]
		stacks[s] += vals[1]
		for (i = 1; i <= nv; i++)
			sum[i] += vals[i]
	}
	for (s in stacks)
		print s " " stacks[s]
	t = ""
	for (i = 1; i <= ntypes; i++)
		t = t " " st[tt[i]] "/" st[tu[i]]
	print "types" t
	for (i = 1; i <= ntypes; i++)
		print "sum " i " " sum[i]
	print "period " period
	print "file " st[mfile]
}
