/*
 * flame.c -- a flame graph of one event's call tree, as a standalone SVG.
 *
 * The root ("all") is the bottom row and each row above holds the callees
 * of the one below; a frame's width is its share of the samples, callees
 * sorted by name from the left, so the same profile always draws the same
 * picture.  Each frame is a rectangle, a label cut to fit, and a <title>
 * (the tooltip a browser shows on hover) with the exact numbers.  Colours
 * are warm (red to yellow), picked from a hash of the function's name so
 * a function keeps its colour from one graph to the next; text is black.
 *
 * An inline script (written here) makes it interactive where a browser
 * runs it: a click on a frame zooms to it (its callees spread to the full
 * width, its callers kept below it, faded, the rest hidden), "Reset zoom",
 * a click on the root or Escape undo it; "Search" or Ctrl-F asks for a
 * regular expression, paints the frames whose function matches it
 * magenta and shows their share of all samples (each sample counted once
 * however many matching frames it has).  It works from each frame's name,
 * offset and width in samples and row (data-n, data-o, data-s, data-d).
 * Frames too narrow to draw stay undrawn when a zoom widens their caller.
 */
#include <inttypes.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "vpmustat.h"

#define WIDTH		1200.0	/* px, the whole picture */
#define MARGIN		10.0	/* px left and right */
#define ROW		17.0	/* px per frame row: 16 of frame, 1 of gap */
#define TOP		58.0	/* px above the top row: title, subtitle */
#define BOTTOM		26.0	/* px below the root row: the note */
#define FONT		12.0	/* px */
#define CHAR_W		7.25	/* px: a 12 px monospace glyph's advance, about */
#define MIN_W		0.1	/* px: narrower frames (and their callees) are not drawn */

/* XML text: the five characters that must be escaped, and nothing odd. */
static void
xml_puts(FILE *f, const char *s, size_t max)
{
	size_t i;

	for (i = 0; s[i] != '\0' && i < max; i++)
		switch (s[i]) {
		case '&': fputs("&amp;", f); break;
		case '<': fputs("&lt;", f); break;
		case '>': fputs("&gt;", f); break;
		case '"': fputs("&quot;", f); break;
		case '\'': fputs("&apos;", f); break;
		default:
			/* Control bytes are not allowed in XML 1.0. */
			fputc((unsigned char)s[i] < 0x20 ? '?' : s[i], f);
		}
}

/* FNV-1a: a stable hash of a name. */
static uint32_t
name_hash(const char *s)
{
	uint32_t h = 2166136261u;

	for (; *s != '\0'; s++)
		h = (h ^ (unsigned char)*s) * 16777619u;
	return (h);
}

/* HSL (h in degrees, s and l in 0..1) to an RGB triple. */
static void
hsl_rgb(double h, double s, double l, unsigned rgb[3])
{
	double c = (1.0 - fabs(2.0 * l - 1.0)) * s;
	double hp = h / 60.0;
	double x = c * (1.0 - fabs(fmod(hp, 2.0) - 1.0));
	double m = l - c / 2.0, r = 0, g = 0, b = 0;

	if (hp < 1) { r = c; g = x; }
	else if (hp < 2) { r = x; g = c; }
	else if (hp < 3) { g = c; b = x; }
	else if (hp < 4) { g = x; b = c; }
	else if (hp < 5) { r = x; b = c; }
	else { r = c; b = x; }
	rgb[0] = (unsigned)lround((r + m) * 255.0);
	rgb[1] = (unsigned)lround((g + m) * 255.0);
	rgb[2] = (unsigned)lround((b + m) * 255.0);
}

static void
frame_colour(const char *name, unsigned rgb[3])
{
	uint32_t h = name_hash(name);

	/* hue 0..55 (red..yellow), saturation 70..90 %, lightness 58..70 % */
	hsl_rgb((double)(h % 56), 0.70 + (double)((h >> 8) % 21) / 100.0,
	    0.58 + (double)((h >> 16) % 13) / 100.0, rgb);
}

static unsigned
depth_of(const struct vs_node *n)
{
	const struct vs_node *c;
	unsigned d, max = 0;

	for (c = n->child; c != NULL; c = c->next)
		if ((d = depth_of(c)) > max)
			max = d;
	return (max + 1);
}

struct canvas {
	FILE *f;
	const struct vs_evprof *e;
	double scale;		/* px per sample */
	double base;		/* y of the root row */
};

/* The frame n, off samples from the left, and its callees above it. */
static void
draw(struct canvas *cv, const struct vs_node *n, unsigned depth, uint64_t off)
{
	const struct vs_node **kids;
	const char *name = n->func == UINT32_MAX ? "all" : cv->e->funcs[n->func].name;
	double w = (double)n->total * cv->scale, y = cv->base - depth * ROW;
	double x = MARGIN + (double)off * cv->scale;
	size_t i, k, fit, len = strlen(name);
	unsigned rgb[3];
	uint64_t self;
	char share[16];

	if (w < MIN_W)
		return;
	if (n->func == UINT32_MAX) {
		rgb[0] = 224, rgb[1] = 190, rgb[2] = 120;
		self = 0;
	} else {
		frame_colour(name, rgb);
		self = n->self;
	}
	/* What the script zooms and searches by: name, offset and width in samples, row. */
	fprintf(cv->f, "<g class=\"f\" data-n=\"");
	xml_puts(cv->f, name, len);
	fprintf(cv->f, "\" data-o=\"%" PRIu64 "\" data-s=\"%" PRIu64 "\" data-d=\"%u\"><title>",
	    off, n->total, depth);
	xml_puts(cv->f, name, len);
	fprintf(cv->f, " \xe2\x80\x94 %" PRIu64 " sample%s, %.2f%%", n->total,
	    n->total == 1 ? "" : "s", 100.0 * (double)n->total / (double)cv->e->samples);
	if (n->func != UINT32_MAX)
		fprintf(cv->f, " (self %" PRIu64 ", %.2f%%)", self,
		    100.0 * (double)self / (double)cv->e->samples);
	fprintf(cv->f, "</title>\n<rect x=\"%.2f\" y=\"%.1f\" width=\"%.2f\" height=\"%.1f\" "
	    "rx=\"2\" fill=\"#%02x%02x%02x\"/>", x, y, w, ROW - 1.0, rgb[0], rgb[1], rgb[2]);
	/*
	 * The label: the name and its share where both fit; else the name,
	 * whole or cut with ".."; empty where fewer than four characters fit
	 * (the script fills it when a zoom widens the frame).
	 */
	fit = w > 6.0 ? (size_t)((w - 6.0) / CHAR_W) : 0;
	snprintf(share, sizeof(share), " %.1f%%",
	    100.0 * (double)n->total / (double)cv->e->samples);
	fprintf(cv->f, "<text x=\"%.2f\" y=\"%.1f\">", x + 3.0, y + 12.0);
	if (fit >= 4) {
		if (len + strlen(share) <= fit) {
			xml_puts(cv->f, name, len);
			fputs(share, cv->f);
		} else if (len <= fit)
			xml_puts(cv->f, name, len);
		else {
			xml_puts(cv->f, name, fit - 2);
			fputs("..", cv->f);
		}
	}
	fputs("</text></g>\n", cv->f);

	k = vs_children(cv->e, n, &kids);
	for (i = 0; i < k; i++) {
		draw(cv, kids[i], depth + 1, off);
		off += kids[i]->total;
	}
	free(kids);
}

/* The script: zoom and search (see the top of this file). */
static const char script[] =
"(function () {\n"
"\"use strict\";\n"
"var frames = Array.prototype.slice.call(document.querySelectorAll(\"g.f\"));\n"
"var unzoom = document.getElementById(\"unzoom\");\n"
"var searchbtn = document.getElementById(\"search\");\n"
"var matched = document.getElementById(\"matched\");\n"
"var last = \"\";\n"
"function num(g, k) { return Number(g.getAttribute(\"data-\" + k)); }\n"
"frames.forEach(function (g) {\n"
"\tvar r = g.querySelector(\"rect\"), t = g.querySelector(\"text\");\n"
"\tg.orig = [r.getAttribute(\"x\"), r.getAttribute(\"width\"), t.getAttribute(\"x\"),\n"
"\t    t.textContent];\n"
"});\n"
"/* The label of a frame w px wide: as the C code makes it. */\n"
"function label(g, w) {\n"
"\tvar n = g.getAttribute(\"data-n\");\n"
"\tvar share = \" \" + (100 * num(g, \"s\") / TOTAL).toFixed(1) + \"%\";\n"
"\tvar fit = w > 6 ? Math.floor((w - 6) / CW) : 0;\n"
"\tif (fit < 4)\n"
"\t\treturn (\"\");\n"
"\tif (n.length + share.length <= fit)\n"
"\t\treturn (n + share);\n"
"\treturn (n.length <= fit ? n : n.slice(0, fit - 2) + \"..\");\n"
"}\n"
"function place(g, x, w) {\n"
"\tvar r = g.querySelector(\"rect\"), t = g.querySelector(\"text\");\n"
"\tr.setAttribute(\"x\", x.toFixed(2));\n"
"\tr.setAttribute(\"width\", w.toFixed(2));\n"
"\tt.setAttribute(\"x\", (x + 3).toFixed(2));\n"
"\tt.textContent = label(g, w);\n"
"}\n"
"function reset() {\n"
"\tframes.forEach(function (g) {\n"
"\t\tvar r = g.querySelector(\"rect\"), t = g.querySelector(\"text\");\n"
"\t\tg.style.display = \"\";\n"
"\t\tg.classList.remove(\"anc\");\n"
"\t\tr.setAttribute(\"x\", g.orig[0]);\n"
"\t\tr.setAttribute(\"width\", g.orig[1]);\n"
"\t\tt.setAttribute(\"x\", g.orig[2]);\n"
"\t\tt.textContent = g.orig[3];\n"
"\t});\n"
"\tunzoom.style.display = \"none\";\n"
"}\n"
"/* z's callees spread over the width, its callers below it, the rest hidden. */\n"
"function zoom(z) {\n"
"\tvar zo = num(z, \"o\"), zs = num(z, \"s\"), zd = num(z, \"d\");\n"
"\tvar scale = (W - 2 * M) / zs;\n"
"\tif (zd === 0) {\n"
"\t\treset();\n"
"\t\treturn;\n"
"\t}\n"
"\tframes.forEach(function (g) {\n"
"\t\tvar o = num(g, \"o\"), s = num(g, \"s\"), d = num(g, \"d\");\n"
"\t\tif (d < zd && o <= zo && o + s >= zo + zs) {\n"
"\t\t\tg.style.display = \"\";\n"
"\t\t\tg.classList.add(\"anc\");\n"
"\t\t\tplace(g, M, W - 2 * M);\n"
"\t\t} else if (d >= zd && o >= zo && o + s <= zo + zs) {\n"
"\t\t\tg.style.display = \"\";\n"
"\t\t\tg.classList.remove(\"anc\");\n"
"\t\t\tplace(g, M + (o - zo) * scale, s * scale);\n"
"\t\t} else\n"
"\t\t\tg.style.display = \"none\";\n"
"\t});\n"
"\tunzoom.style.display = \"\";\n"
"}\n"
"/* Paint the frames re matches; their share of the samples, each sample once. */\n"
"function search(re) {\n"
"\tvar spans = [], n = 0, end = 0;\n"
"\tframes.forEach(function (g) {\n"
"\t\tvar hit = re !== null && num(g, \"d\") > 0 && re.test(g.getAttribute(\"data-n\"));\n"
"\t\tg.classList.toggle(\"hit\", hit);\n"
"\t\tif (hit)\n"
"\t\t\tspans.push([num(g, \"o\"), num(g, \"o\") + num(g, \"s\")]);\n"
"\t});\n"
"\tspans.sort(function (a, b) { return (a[0] - b[0]); });\n"
"\tspans.forEach(function (sp) {\n"
"\t\tif (sp[1] > end) {\n"
"\t\t\tn += sp[1] - Math.max(sp[0], end);\n"
"\t\t\tend = sp[1];\n"
"\t\t}\n"
"\t});\n"
"\tmatched.textContent = re === null ? \"\" : \"Matched: \" +\n"
"\t    (100 * n / TOTAL).toFixed(2) + \"% (\" + n + \" of \" + TOTAL + \" samples)\";\n"
"\tsearchbtn.textContent = re === null ? \"Search\" : \"Reset search\";\n"
"\treturn (n);\n"
"}\n"
"function ask() {\n"
"\tvar s = window.prompt(\"Search for functions (a regular expression)\", last);\n"
"\tif (s === null)\n"
"\t\treturn;\n"
"\tlast = s;\n"
"\tif (s === \"\") {\n"
"\t\tsearch(null);\n"
"\t\treturn;\n"
"\t}\n"
"\ttry {\n"
"\t\tsearch(new RegExp(s));\n"
"\t} catch (err) {\n"
"\t\tsearch(new RegExp(s.replace(/[.*+?^${}()|[\\]\\\\]/g, \"\\\\$&\")));\n"
"\t}\n"
"}\n"
"unzoom.addEventListener(\"click\", reset);\n"
"searchbtn.addEventListener(\"click\", function () {\n"
"\tif (matched.textContent !== \"\")\n"
"\t\tsearch(null);\n"
"\telse\n"
"\t\task();\n"
"});\n"
"frames.forEach(function (g) {\n"
"\tg.addEventListener(\"click\", function () { zoom(g); });\n"
"});\n"
"window.addEventListener(\"keydown\", function (ev) {\n"
"\tif ((ev.ctrlKey || ev.metaKey) && ev.key === \"f\") {\n"
"\t\tev.preventDefault();\n"
"\t\task();\n"
"\t} else if (ev.key === \"Escape\")\n"
"\t\treset();\n"
"});\n"
"/* For tests and the console: vpmustat.zoom(name), .search(regexp), .reset(). */\n"
"window.vpmustat = {\n"
"\tzoom: function (name) {\n"
"\t\tvar g = frames.filter(function (f) { return (f.getAttribute(\"data-n\") === name); });\n"
"\t\tif (g.length > 0)\n"
"\t\t\tzoom(g[0]);\n"
"\t},\n"
"\tsearch: function (re) { return (search(re === null ? null : new RegExp(re))); },\n"
"\treset: reset\n"
"};\n"
"})();\n";

void
vs_flamegraph(FILE *f, const struct vs_evprof *e, const char *title)
{
	struct canvas cv = { f, e, 0, 0 };
	unsigned levels = depth_of(vs_evprof_tree(e));
	double height = TOP + levels * ROW + BOTTOM;

	fprintf(f, "<?xml version=\"1.0\" encoding=\"UTF-8\" standalone=\"yes\"?>\n"
	    "<svg xmlns=\"http://www.w3.org/2000/svg\" version=\"1.1\" "
	    "width=\"%.0f\" height=\"%.0f\" viewBox=\"0 0 %.0f %.0f\">\n",
	    WIDTH, height, WIDTH, height);
	fprintf(f, "<style>\n"
	    "text { font-family: \"DejaVu Sans Mono\", Menlo, Consolas, monospace; "
	    "font-size: %.0fpx; fill: #000; pointer-events: none; }\n"
	    ".title { font-family: \"DejaVu Sans\", Verdana, Arial, sans-serif; "
	    "font-size: 18px; font-weight: bold; }\n"
	    ".sub { font-family: \"DejaVu Sans\", Verdana, Arial, sans-serif; "
	    "font-size: 12px; fill: #444; }\n"
	    ".f rect { stroke: #fff; stroke-width: 0.5; }\n"
	    ".f:hover rect { stroke: #000; stroke-width: 1; }\n"
	    ".f { cursor: pointer; }\n"
	    ".f.anc { opacity: 0.55; }\n"
	    ".f.hit rect { fill: #e600e6; }\n"
	    ".btn { font-family: \"DejaVu Sans\", Verdana, Arial, sans-serif; "
	    "font-size: 12px; fill: #1a4d99; pointer-events: auto; cursor: pointer; }\n"
	    "</style>\n", FONT);
	fprintf(f, "<rect x=\"0\" y=\"0\" width=\"100%%\" height=\"100%%\" fill=\"#fbfaf5\"/>\n");
	fprintf(f, "<text class=\"title\" x=\"%.1f\" y=\"26\" text-anchor=\"middle\">",
	    WIDTH / 2);
	xml_puts(f, title, 200);
	fprintf(f, "</text>\n<text class=\"sub\" x=\"%.1f\" y=\"44\" text-anchor=\"middle\">"
	    "event ", WIDTH / 2);
	xml_puts(f, e->name, sizeof(e->name));
	fprintf(f, ", %" PRIu64 " samples; width = share of samples, each row the callees "
	    "of the row below</text>\n", e->samples);
	if (e->samples != 0) {
		cv.scale = (WIDTH - 2 * MARGIN) / (double)vs_evprof_tree(e)->total;
		cv.base = TOP + (levels - 1) * ROW;
		draw(&cv, vs_evprof_tree(e), 0, 0);
	}
	fprintf(f, "<text class=\"sub\" x=\"%.1f\" y=\"%.1f\">hover over a frame for its "
	    "samples, click to zoom, Ctrl-F to search; drawn by vpmustat</text>\n", MARGIN,
	    height - 8.0);
	fprintf(f, "<text id=\"unzoom\" class=\"btn\" x=\"%.1f\" y=\"26\" "
	    "style=\"display: none\">Reset zoom</text>\n", MARGIN);
	fprintf(f, "<text id=\"search\" class=\"btn\" x=\"%.1f\" y=\"26\" "
	    "text-anchor=\"end\">Search</text>\n", WIDTH - MARGIN);
	fprintf(f, "<text id=\"matched\" class=\"sub\" x=\"%.1f\" y=\"%.1f\" "
	    "text-anchor=\"end\"></text>\n", WIDTH - MARGIN, height - 8.0);
	/* The numbers the script lays frames out by, then the script. */
	fprintf(f, "<script type=\"text/ecmascript\"><![CDATA[\n"
	    "var W = %.1f, M = %.1f, CW = %.2f, TOTAL = %" PRIu64 ";\n", WIDTH, MARGIN,
	    CHAR_W, vs_evprof_tree(e)->total);
	fputs(script, f);
	fprintf(f, "]]></script>\n</svg>\n");
}
