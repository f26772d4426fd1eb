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

static void
draw(struct canvas *cv, const struct vs_node *n, unsigned depth, double x)
{
	const struct vs_node **kids;
	const char *name = n->func == UINT32_MAX ? "all" : cv->e->funcs[n->func].name;
	double w = (double)n->total * cv->scale, y = cv->base - depth * ROW;
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
	fprintf(cv->f, "<g class=\"f\"><title>");
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
	 * whole or cut with ".."; none where fewer than four characters fit.
	 */
	fit = w > 6.0 ? (size_t)((w - 6.0) / CHAR_W) : 0;
	snprintf(share, sizeof(share), " %.1f%%",
	    100.0 * (double)n->total / (double)cv->e->samples);
	if (fit >= 4) {
		fprintf(cv->f, "<text x=\"%.2f\" y=\"%.1f\">", x + 3.0, y + 12.0);
		if (len + strlen(share) <= fit) {
			xml_puts(cv->f, name, len);
			fputs(share, cv->f);
		} else if (len <= fit)
			xml_puts(cv->f, name, len);
		else {
			xml_puts(cv->f, name, fit - 2);
			fputs("..", cv->f);
		}
		fputs("</text>", cv->f);
	}
	fputs("</g>\n", cv->f);

	k = vs_children(cv->e, n, &kids);
	for (i = 0; i < k; i++) {
		draw(cv, kids[i], depth + 1, x);
		x += (double)kids[i]->total * cv->scale;
	}
	free(kids);
}

void
vs_flamegraph(FILE *f, const struct vs_evprof *e, const char *title)
{
	struct canvas cv = { f, e, 0, 0 };
	unsigned levels = depth_of(&e->root);
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
		cv.scale = (WIDTH - 2 * MARGIN) / (double)e->root.total;
		cv.base = TOP + (levels - 1) * ROW;
		draw(&cv, &e->root, 0, MARGIN);
	}
	fprintf(f, "<text class=\"sub\" x=\"%.1f\" y=\"%.1f\">hover over a frame for its "
	    "samples; drawn by vpmustat</text>\n", MARGIN, height - 8.0);
	fprintf(f, "</svg>\n");
}
