/*
 * records.c -- a reader of the machine-readable formats of vpmu-run's report
 * and vpmustat's counts, written from the formats' specifications (RFC 8259
 * for JSON, RFC 4180 for CSV), for the tests of test/tools/cli.sh.
 *
 *   records json [FILE]       JSON lines: each line one JSON value
 *   records csv SEP [FILE]    CSV with the one-character separator SEP
 *   records doc [FILE]        one JSON value, over as many lines as it takes
 *                             (vpmu-info --json)
 *
 * Each record is checked strictly (JSON: the grammar, UTF-8 in strings,
 * \u escapes and surrogate pairs, no duplicate member names, nothing after
 * the value; CSV: quotes only around a whole field, doubled inside it) and
 * printed as one line of tab-separated KEY=VALUE pairs: an object's members
 * in their order (a string unescaped, a number, true, false or null as
 * written, a nested object or array as <object> or <array>), a CSV
 * record's fields as 1=..., 2=....  A tab, a line feed, a carriage return
 * or a backslash in a value is printed as \t, \n, \r or \\.  A JSON line
 * that is not an object prints as value=....  A doc prints one line a
 * scalar, PATH=VALUE, in the document's order, a string's VALUE between
 * double quotes (unescaped inside them) so that it is told from a number
 * or a literal: PATH the member names from
 * the top, joined by '.', an array's element as [INDEX] (cpu.vendor=...,
 * cpu.leaf_0a[0]="0x..."); an empty object or array prints PATH=<object> or
 * PATH=<array>.  Exit 0, or 1 with the line and column of the first error
 * on standard error.
 */
#define _POSIX_C_SOURCE 200809L	/* getline */

#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static const char *src;		/* the input being read, for messages */
static unsigned long line;	/* its line, from 1 */

struct buf {
	char	*p;
	size_t	 n, cap;
};

static void
put(struct buf *b, char c)
{
	if (b->n + 2 > b->cap) {
		b->cap = b->cap ? 2 * b->cap : 256;
		if ((b->p = realloc(b->p, b->cap)) == NULL) {
			perror("records");
			exit(1);
		}
	}
	b->p[b->n++] = c;
	b->p[b->n] = '\0';
}

static void
puts_buf(struct buf *b, const char *s)
{
	while (*s != '\0')
		put(b, *s++);
}

/* A value's byte as printed: tab, newline, CR and backslash escaped. */
static void
put_escaped(struct buf *b, char c)
{
	switch (c) {
	case '\t': puts_buf(b, "\\t"); break;
	case '\n': puts_buf(b, "\\n"); break;
	case '\r': puts_buf(b, "\\r"); break;
	case '\\': puts_buf(b, "\\\\"); break;
	default: put(b, c);
	}
}

static void __attribute__((noreturn))
die(const char *s, const char *at, const char *what)
{
	unsigned long l = line;
	const char *p;

	/* A doc spans lines: the line and column of at within it. */
	for (p = s; p < at; p++)
		if (*p == '\n') {
			l++;
			s = p + 1;
		}
	fprintf(stderr, "records: %s:%lu:%ld: %s\n", src, l, (long)(at - s) + 1, what);
	exit(1);
}

/* ---- JSON (RFC 8259) --------------------------------------------------------- */

struct json {
	const char *s, *p;	/* the line, the position */
};

static void
ws(struct json *j)
{
	while (*j->p == ' ' || *j->p == '\t' || *j->p == '\n' || *j->p == '\r')
		j->p++;
}

static unsigned
hex4(struct json *j)
{
	unsigned v = 0, i;
	char c;

	for (i = 0; i < 4; i++) {
		c = *j->p++;
		v <<= 4;
		if (c >= '0' && c <= '9')
			v |= (unsigned)(c - '0');
		else if (c >= 'a' && c <= 'f')
			v |= (unsigned)(c - 'a' + 10);
		else if (c >= 'A' && c <= 'F')
			v |= (unsigned)(c - 'A' + 10);
		else
			die(j->s, j->p - 1, "\\u wants four hexadecimal digits");
	}
	return (v);
}

/* Code point cp as UTF-8 into out (escaped for printing). */
static void
put_utf8(struct buf *out, uint32_t cp)
{
	if (cp < 0x80) {
		put_escaped(out, (char)cp);
	} else if (cp < 0x800) {
		put(out, (char)(0xc0 | cp >> 6));
		put(out, (char)(0x80 | (cp & 0x3f)));
	} else if (cp < 0x10000) {
		put(out, (char)(0xe0 | cp >> 12));
		put(out, (char)(0x80 | ((cp >> 6) & 0x3f)));
		put(out, (char)(0x80 | (cp & 0x3f)));
	} else {
		put(out, (char)(0xf0 | cp >> 18));
		put(out, (char)(0x80 | ((cp >> 12) & 0x3f)));
		put(out, (char)(0x80 | ((cp >> 6) & 0x3f)));
		put(out, (char)(0x80 | (cp & 0x3f)));
	}
}

/* Raw UTF-8 in a string: one whole, shortest-form sequence, not a surrogate. */
static void
utf8(struct json *j, struct buf *out)
{
	const unsigned char *u = (const unsigned char *)j->p;
	uint32_t cp;
	size_t n, i;

	if (u[0] >= 0xc2 && u[0] <= 0xdf)
		n = 2, cp = u[0] & 0x1f;
	else if (u[0] >= 0xe0 && u[0] <= 0xef)
		n = 3, cp = u[0] & 0x0f;
	else if (u[0] >= 0xf0 && u[0] <= 0xf4)
		n = 4, cp = u[0] & 0x07;
	else
		die(j->s, j->p, "not UTF-8");
	for (i = 1; i < n; i++) {
		if ((u[i] & 0xc0) != 0x80)
			die(j->s, j->p, "not UTF-8");
		cp = cp << 6 | (u[i] & 0x3f);
	}
	if ((n == 3 && cp < 0x800) || (n == 4 && (cp < 0x10000 || cp > 0x10ffff)) ||
	    (cp >= 0xd800 && cp <= 0xdfff))
		die(j->s, j->p, "not UTF-8 (overlong, a surrogate or past U+10FFFF)");
	for (i = 0; i < n; i++)
		put(out, j->p[i]);
	j->p += n;
}

static void
string(struct json *j, struct buf *out)
{
	uint32_t cp, lo;

	if (*j->p != '"')
		die(j->s, j->p, "a string wanted");
	j->p++;
	for (;;) {
		unsigned char c = (unsigned char)*j->p;

		if (c == '"') {
			j->p++;
			return;
		}
		if (c == '\0')
			die(j->s, j->p, "a string not closed");
		if (c < 0x20)
			die(j->s, j->p, "a control character in a string");
		if (c >= 0x80) {
			utf8(j, out);
			continue;
		}
		if (c != '\\') {
			put_escaped(out, (char)c);
			j->p++;
			continue;
		}
		j->p++;
		switch (*j->p++) {
		case '"': put(out, '"'); break;
		case '\\': put_escaped(out, '\\'); break;
		case '/': put(out, '/'); break;
		case 'b': put(out, '\b'); break;
		case 'f': put(out, '\f'); break;
		case 'n': put_escaped(out, '\n'); break;
		case 'r': put_escaped(out, '\r'); break;
		case 't': put_escaped(out, '\t'); break;
		case 'u':
			cp = hex4(j);
			if (cp >= 0xdc00 && cp <= 0xdfff)
				die(j->s, j->p, "a low surrogate alone");
			if (cp >= 0xd800 && cp <= 0xdbff) {
				if (j->p[0] != '\\' || j->p[1] != 'u')
					die(j->s, j->p, "a high surrogate alone");
				j->p += 2;
				lo = hex4(j);
				if (lo < 0xdc00 || lo > 0xdfff)
					die(j->s, j->p, "a high surrogate alone");
				cp = 0x10000 + ((cp - 0xd800) << 10) + (lo - 0xdc00);
			}
			if (cp == 0)
				die(j->s, j->p, "\\u0000 in a string");
			put_utf8(out, cp);
			break;
		default:
			die(j->s, j->p - 1, "a bad escape");
		}
	}
}

static void
digits(struct json *j)
{
	if (*j->p < '0' || *j->p > '9')
		die(j->s, j->p, "a digit wanted");
	while (*j->p >= '0' && *j->p <= '9')
		j->p++;
}

static void
number(struct json *j, struct buf *out)
{
	const char *start = j->p;

	if (*j->p == '-')
		j->p++;
	if (*j->p == '0')
		j->p++;
	else
		digits(j);
	if (*j->p == '.') {
		j->p++;
		digits(j);
	}
	if (*j->p == 'e' || *j->p == 'E') {
		j->p++;
		if (*j->p == '+' || *j->p == '-')
			j->p++;
		digits(j);
	}
	while (start < j->p)
		put(out, *start++);
}

static void value(struct json *j, struct buf *out, int depth);

static bool
literal(struct json *j, const char *word, struct buf *out)
{
	size_t n = strlen(word);

	if (strncmp(j->p, word, n) != 0)
		return (false);
	j->p += n;
	puts_buf(out, word);
	return (true);
}

/*
 * A member's name and its ':' into name, refused if the object had it
 * already: seen holds the names so far, each NUL-ended.
 */
static void
member_name(struct json *j, struct buf *seen, struct buf *name)
{
	const char *k;

	ws(j);
	name->n = 0;
	put(name, '\0');
	name->n = 0;
	string(j, name);
	for (k = seen->p; seen->n != 0 && k < seen->p + seen->n; k += strlen(k) + 1)
		if (strcmp(k, name->p) == 0)
			die(j->s, j->p, "a member name given twice");
	puts_buf(seen, name->p);
	put(seen, '\0');
	ws(j);
	if (*j->p != ':')
		die(j->s, j->p, "':' wanted");
	j->p++;
	ws(j);
}

/* An object's members; top: printed as KEY=VALUE pairs into out. */
static void
object(struct json *j, struct buf *out, int depth, bool top)
{
	struct buf key = { 0 }, val = { 0 }, seen = { 0 };
	bool first = true;

	j->p++;			/* { */
	ws(j);
	if (*j->p == '}') {
		j->p++;
		return;
	}
	for (;;) {
		member_name(j, &seen, &key);
		val.n = 0;
		put(&val, '\0');
		val.n = 0;
		value(j, &val, depth + 1);
		if (top) {
			if (!first)
				put(out, '\t');
			puts_buf(out, key.p);
			put(out, '=');
			puts_buf(out, val.p);
		}
		first = false;
		ws(j);
		if (*j->p == '}') {
			j->p++;
			break;
		}
		if (*j->p != ',')
			die(j->s, j->p, "',' or '}' wanted");
		j->p++;
	}
	free(key.p);
	free(val.p);
	free(seen.p);
}

static void
array(struct json *j, int depth)
{
	struct buf v = { 0 };

	j->p++;			/* [ */
	ws(j);
	if (*j->p == ']') {
		j->p++;
		return;
	}
	for (;;) {
		ws(j);
		v.n = 0;
		value(j, &v, depth + 1);
		ws(j);
		if (*j->p == ']') {
			j->p++;
			break;
		}
		if (*j->p != ',')
			die(j->s, j->p, "',' or ']' wanted");
		j->p++;
	}
	free(v.p);
}

static void
value(struct json *j, struct buf *out, int depth)
{
	if (depth > 64)
		die(j->s, j->p, "nested too deep");
	switch (*j->p) {
	case '{':
		object(j, out, depth, false);
		puts_buf(out, "<object>");
		return;
	case '[':
		array(j, depth);
		puts_buf(out, "<array>");
		return;
	case '"':
		string(j, out);
		return;
	case '-':
	case '0': case '1': case '2': case '3': case '4':
	case '5': case '6': case '7': case '8': case '9':
		number(j, out);
		return;
	default:
		if (literal(j, "true", out) || literal(j, "false", out) ||
		    literal(j, "null", out))
			return;
		die(j->s, j->p, "a JSON value wanted");
	}
}

static void
json_line(const char *s)
{
	struct json j = { s, s };
	struct buf out = { 0 };

	put(&out, '\0');
	out.n = 0;
	ws(&j);
	if (*j.p == '{') {
		object(&j, &out, 0, true);
	} else {
		puts_buf(&out, "value=");
		value(&j, &out, 0);
	}
	ws(&j);
	if (*j.p != '\0')
		die(s, j.p, "something after the value");
	printf("%s\n", out.p);
	free(out.p);
}

/*
 * A doc's value at path: its scalars as PATH=VALUE lines.  The grammar is
 * value()'s; objects here also refuse a member name given twice.
 */
static void
flat(struct json *j, struct buf *path, int depth)
{
	struct buf v = { 0 }, seen = { 0 };
	size_t n = path->n, i = 0;
	char num[32];
	const char *q;
	bool obj;

	if (depth > 64)
		die(j->s, j->p, "nested too deep");
	put(&v, '\0');
	v.n = 0;
	if (*j->p != '{' && *j->p != '[') {
		q = *j->p == '"' ? "\"" : "";
		value(j, &v, depth);
		printf("%s=%s%s%s\n", path->p, q, v.p, q);
		free(v.p);
		return;
	}
	obj = *j->p++ == '{';
	ws(j);
	if (*j->p == (obj ? '}' : ']')) {
		j->p++;
		printf("%s=%s\n", path->p, obj ? "<object>" : "<array>");
		free(v.p);
		return;
	}
	if (!obj) {
		for (;; i++) {
			ws(j);
			path->n = n;
			path->p[n] = '\0';
			snprintf(num, sizeof(num), "[%zu]", i);
			puts_buf(path, num);
			flat(j, path, depth + 1);
			ws(j);
			if (*j->p == ']')
				break;
			if (*j->p != ',')
				die(j->s, j->p, "',' or ']' wanted");
			j->p++;
		}
	} else {
		for (;;) {
			member_name(j, &seen, &v);
			path->n = n;
			path->p[n] = '\0';
			if (n > 0)
				put(path, '.');
			puts_buf(path, v.p);
			flat(j, path, depth + 1);
			ws(j);
			if (*j->p == '}')
				break;
			if (*j->p != ',')
				die(j->s, j->p, "',' or '}' wanted");
			j->p++;
		}
	}
	j->p++;
	path->n = n;
	path->p[n] = '\0';
	free(v.p);
	free(seen.p);
}

/* The whole of f, one JSON value. */
static void
json_doc(FILE *f)
{
	struct buf in = { 0 }, path = { 0 };
	struct json j;
	int c;

	put(&in, '\0');
	in.n = 0;
	while ((c = getc(f)) != EOF) {
		if (c == '\0')
			die(in.p, in.p + in.n, "a NUL byte");
		put(&in, (char)c);
	}
	line = 1;
	j.s = j.p = in.p;
	put(&path, '\0');
	path.n = 0;
	ws(&j);
	flat(&j, &path, 0);
	ws(&j);
	if (*j.p != '\0')
		die(in.p, j.p, "something after the value");
	free(in.p);
	free(path.p);
}

/* ---- CSV (RFC 4180, any one-character separator) --------------------------------- */

/*
 * One record from f into out as 1=...\t2=...: fields split at sep; a field
 * that starts with a quote ends at the quote before sep or the line's end,
 * "" inside it being one quote, line breaks inside it part of it.  false at
 * the end of the input.
 */
static bool
csv_record(FILE *f, char sep, struct buf *out)
{
	unsigned field = 1;
	bool quoted = false, inq = false, fresh = true;
	int c, d;
	char num[16];

	out->n = 0;
	put(out, '\0');
	out->n = 0;
	if ((c = getc(f)) == EOF)
		return (false);
	line++;
	snprintf(num, sizeof(num), "%u=", field);
	puts_buf(out, num);
	for (;; c = getc(f)) {
		if (inq) {
			if (c == EOF)
				die("", "", "a quoted field not closed at the end");
			if (c == '"') {
				if ((d = getc(f)) == '"') {
					put(out, '"');
					continue;
				}
				ungetc(d, f);
				inq = false;
				continue;
			}
			if (c == '\n')
				line++;
			put_escaped(out, (char)c);
			continue;
		}
		if (c == '"') {
			if (!fresh)
				die("", "", "a quote inside an unquoted field, or after a "
				    "quoted one");
			inq = quoted = true;
			fresh = false;
			continue;
		}
		if (c == '\r') {
			if ((d = getc(f)) != '\n')
				die("", "", "a CR not before a LF");
			c = '\n';
		}
		if (c == '\n' || c == EOF)
			break;
		if (c == sep) {
			snprintf(num, sizeof(num), "\t%u=", ++field);
			puts_buf(out, num);
			quoted = false;
			fresh = true;
			continue;
		}
		if (quoted)
			die("", "", "something after a quoted field");
		put_escaped(out, (char)c);
		fresh = false;
	}
	return (true);
}

int
main(int argc, char **argv)
{
	struct buf out = { 0 };
	char *l = NULL;
	size_t cap = 0;
	ssize_t n;
	FILE *f = stdin;
	bool csv;

	if (argc < 2 || (strcmp(argv[1], "json") != 0 && strcmp(argv[1], "csv") != 0 &&
	    strcmp(argv[1], "doc") != 0) ||
	    (strcmp(argv[1], "csv") != 0 && argc > 3) ||
	    (strcmp(argv[1], "csv") == 0 && (argc < 3 || argc > 4 || strlen(argv[2]) != 1))) {
		fprintf(stderr, "usage: records json [FILE] | records csv SEP [FILE] | "
		    "records doc [FILE]\n");
		return (2);
	}
	csv = strcmp(argv[1], "csv") == 0;
	src = "standard input";
	if (argc == (csv ? 4 : 3)) {
		src = argv[argc - 1];
		if ((f = fopen(src, "r")) == NULL) {
			perror(src);
			return (1);
		}
	}
	if (strcmp(argv[1], "doc") == 0)
		json_doc(f);
	else if (csv) {
		while (csv_record(f, argv[2][0], &out))
			printf("%s\n", out.p);
	} else {
		while ((n = getline(&l, &cap, f)) != -1) {
			line++;
			if (n == 0 || l[n - 1] != '\n')
				die(l, l + n, "a line without its line feed");
			l[n - 1] = '\0';
			if (strlen(l) != (size_t)n - 1)
				die(l, l + strlen(l), "a NUL byte");
			json_line(l);
		}
	}
	free(l);
	free(out.p);
	if (ferror(f) || fflush(stdout) != 0) {
		fprintf(stderr, "records: %s: a read or write error\n", src);
		return (1);
	}
	return (0);
}
