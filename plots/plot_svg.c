/* plot_svg.c: the three charts of report.html as inline SVG (plot_svg.h),
 * drawn here so that the page never needs gnuplot: axes and their ticks, a
 * legend, then the roofline, the stall bars and the bandwidth lines. */
#include "plot_svg.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "check.h"
#include "numfmt.h"
#include "plot_style.h"

/* ------------------------------------------------------------ axes, frame, legend */

struct axis {
    double lo, hi;
    int log;                    /* 1 log scale, 0 linear, -1 linear without tick labels */
    double px0, px1;    /* pixel range */
};

static double ax_map(const struct axis *a, double v)
{
    double t;
    if (a->log > 0)
        t = (log10(v) - log10(a->lo)) / (log10(a->hi) - log10(a->lo));
    else
        t = (v - a->lo) / (a->hi - a->lo);
    return a->px0 + t * (a->px1 - a->px0);
}

static void svg_open(struct sb *h, const char *id, const char *title, int w, int hgt)
{
    sb_printf(h, "<figure><figcaption>%s</figcaption>\n<svg id=\"%s\" xmlns=\"http://www.w3.org/2000/svg\" "
                 "width=\"%d\" height=\"%d\" viewBox=\"0 0 %d %d\" font-family=\"sans-serif\" font-size=\"11\">\n"
                 "<rect width=\"%d\" height=\"%d\" fill=\"white\"/>\n",
              title, id, w, hgt, w, hgt, w, hgt);
}

/* A tick label: engineering notation with the unit ("10 TFLOP/s"), or the
 * plain number when the axis label carries the unit. */
static void tick_label(char *buf, size_t n, double v, const char *unit)
{
    if (unit != NULL && unit[0] != '\0')
        numfmt_si(buf, n, v, unit);
    else
        snprintf(buf, n, "%g", v);
}

/* Tick step of a linear axis: 1, 2 or 5 x 10^n, about five ticks. */
static double nice_step(double span)
{
    if (!(span > 0))
        return 1;
    double raw = span / 5, mag = pow(10, floor(log10(raw))), f = raw / mag;
    return (f <= 1 ? 1 : f <= 2 ? 2 : f <= 5 ? 5 : 10) * mag;
}

static void svg_frame(struct sb *h, const struct axis *x, const struct axis *y, const char *xl,
                      const char *yl, const char *xu, const char *yu)
{
    sb_printf(h, "<rect x=\"%.1f\" y=\"%.1f\" width=\"%.1f\" height=\"%.1f\" fill=\"none\" stroke=\"#333\"/>\n",
              x->px0, y->px1, x->px1 - x->px0, y->px0 - y->px1);
    /* ticks at powers of ten (log) or at 1, 2, 5 x 10^n steps (linear),
     * labelled in engineering notation with the axis's unit */
    char lab[48];
    for (int axis = 0; axis < 2; axis++) {
        const struct axis *a = axis ? y : x;
        const char *unit = axis ? yu : xu;
        if (a->log > 0) {
            /* bounded: the ranges are checked when the report is read, and an axis of more
             * than 64 decades would be unreadable anyway */
            int ticks = 0;
            for (double v = pow(10, floor(log10(a->lo))); v > 0 && v <= a->hi * 1.0001 && ticks < 64;
                 v *= 10, ticks++) {
                if (v < a->lo * 0.9999)
                    continue;
                double px = ax_map(a, v);
                tick_label(lab, sizeof lab, v, unit);
                if (axis == 0)
                    sb_printf(h, "<line x1=\"%.1f\" y1=\"%.1f\" x2=\"%.1f\" y2=\"%.1f\" stroke=\"#ddd\"/>"
                                 "<text x=\"%.1f\" y=\"%.1f\" text-anchor=\"middle\">%s</text>\n",
                              px, y->px0, px, y->px1, px, y->px0 + 14, lab);
                else
                    sb_printf(h, "<line x1=\"%.1f\" y1=\"%.1f\" x2=\"%.1f\" y2=\"%.1f\" stroke=\"#ddd\"/>"
                                 "<text x=\"%.1f\" y=\"%.1f\" text-anchor=\"end\">%s</text>\n",
                              x->px0, px, x->px1, px, x->px0 - 4, px + 4, lab);
            }
        } else if (a->log == 0) {
            double step = nice_step(a->hi - a->lo);
            int ticks = 0;
            for (double v = ceil(a->lo / step) * step; v <= a->hi * (1 + 1e-9) && ticks < 32;
                 v += step, ticks++) {
                double px = ax_map(a, v);
                tick_label(lab, sizeof lab, fabs(v) < step * 1e-9 ? 0 : v, unit);
                if (axis == 0)
                    sb_printf(h, "<text x=\"%.1f\" y=\"%.1f\" text-anchor=\"middle\">%s</text>\n", px,
                              y->px0 + 14, lab);
                else
                    sb_printf(h, "<line x1=\"%.1f\" y1=\"%.1f\" x2=\"%.1f\" y2=\"%.1f\" stroke=\"#ddd\"/>"
                                 "<text x=\"%.1f\" y=\"%.1f\" text-anchor=\"end\">%s</text>\n",
                              x->px0, px, x->px1, px, x->px0 - 4, px + 4, lab);
            }
        }
    }
    sb_printf(h, "<text x=\"%.1f\" y=\"%.1f\" text-anchor=\"middle\">%s</text>\n", (x->px0 + x->px1) / 2,
              y->px0 + 30, xl);
    sb_printf(h, "<text x=\"14\" y=\"%.1f\" transform=\"rotate(-90 14 %.1f)\" text-anchor=\"middle\">%s</text>\n",
              (y->px0 + y->px1) / 2, (y->px0 + y->px1) / 2, yl);
}

static void svg_legend(struct sb *h, int x, int y, const char *const *names, const char *const *colors,
                       int n)
{
    for (int i = 0; i < n; i++) {
        sb_printf(h, "<rect x=\"%d\" y=\"%d\" width=\"10\" height=\"10\" fill=\"%s\"/>"
                     "<text x=\"%d\" y=\"%d\">",
                  x, y + 16 * i, colors[i], x + 14, y + 16 * i + 9);
        sb_html(h, names[i]);
        sb_printf(h, "</text>\n");
    }
}

/* ------------------------------------------------------------ roofline */

/* The roofline's legend as it grows: roofs, levels, then the op kinds. */
struct legend {
    const char *names[PLOAD_NLVL + 12 + PSTYLE_NKINDS], *cols[PLOAD_NLVL + 12 + PSTYLE_NKINDS];
    char roofname[12][96];
    int n;
};

/* compute roofs: one per pipe and dtype the run used (dashed, grey); then
 * a roof per level, up to the roofline's peak */
static void roof_lines(struct sb *h, const struct pdata *p, const struct axis *x,
                       const struct axis *y, struct legend *lg)
{
    struct pload_roof roofs[12];
    int nr = pload_roofs(p, roofs, 12);
    for (int k = 0; k < nr; k++) {
        if (roofs[k].peak < y->lo || roofs[k].peak > y->hi)
            continue;
        char si[32];
        numfmt_si(si, sizeof si, roofs[k].peak, "FLOP/s");
        snprintf(lg->roofname[k], sizeof lg->roofname[k], "%s %s", roofs[k].label, si);
        sb_printf(h, "<line x1=\"%.1f\" y1=\"%.1f\" x2=\"%.1f\" y2=\"%.1f\" stroke=\"#555\" "
                     "stroke-dasharray=\"%d 3\"/>\n", x->px0, ax_map(y, roofs[k].peak), x->px1,
                  ax_map(y, roofs[k].peak), 6 + 3 * k);
        lg->names[lg->n] = lg->roofname[k];
        lg->cols[lg->n++] = "#555555";
    }
    for (unsigned l = 0; l < p->nlvl; l++) {
        if (p->bw[l] <= 0)
            continue;
        double ridge = p->peak / p->bw[l];
        double x0 = x->lo, y0 = p->bw[l] * x0;
        if (y0 < y->lo) {
            x0 = y->lo / p->bw[l];
            y0 = y->lo;
        }
        double xr = ridge < x->hi ? ridge : x->hi;
        sb_printf(h, "<polyline fill=\"none\" stroke=\"%s\" stroke-width=\"2\" points=\"%.1f,%.1f %.1f,%.1f %.1f,%.1f\"/>\n",
                  pstyle_level_colors[l], ax_map(x, x0), ax_map(y, y0), ax_map(x, xr),
                  ax_map(y, p->bw[l] * xr < p->peak ? p->bw[l] * xr : p->peak), ax_map(x, x->hi),
                  ax_map(y, p->peak));
        lg->names[lg->n] = p->lvl[l];
        lg->cols[lg->n++] = pstyle_level_colors[l];
    }
}

/* One circle of the roofline: an op at a level, and how many other ops
 * land on the same pixel. */
struct rpt {
    char cx[24], cy[24];
    uint32_t op, count;
    unsigned l;
    double ai, perf;
};

enum { RPT_HASH = 4096 };   /* more than the points: never full */
_Static_assert(PSTYLE_MAX_ROOF_OPS * PLOAD_NLVL < RPT_HASH, "roofline point table too small");

/* Ops that land on the same pixel at a level (the same layer of each
 * of 32 blocks) are one circle whose tooltip says how many: identical
 * circles drawn over each other only made the page larger.  The points
 * (the caller frees them), their number in *npts. */
static struct rpt *roof_points(const struct pdata *p, const struct axis *x, const struct axis *y,
                               uint32_t *npts_out)
{
    uint32_t m = p->nops < PSTYLE_MAX_ROOF_OPS ? p->nops : PSTYLE_MAX_ROOF_OPS;
    struct rpt *pts = sim_xcalloc((size_t)m * PLOAD_NLVL + 1, sizeof *pts);
    int32_t *slot = sim_xcalloc(RPT_HASH, sizeof *slot); /* index + 1, 0 = empty */
    uint32_t npts = 0;
    for (uint32_t k = 0; k < m; k++) {
        struct pop ob;
        const struct pop *o = pload_op(p, p->order[k], &ob);
        if (o->flops <= 0 || o->time <= 0)
            continue;
        double perf = o->flops / o->time;
        for (unsigned l = 0; l < p->nlvl; l++) {
            if (p->bw[l] <= 0 || o->bytes[l] <= 0)
                continue;
            double ai = o->flops / o->bytes[l];
            if (ai < x->lo || ai > x->hi || perf < y->lo || perf > y->hi)
                continue;
            struct rpt *q = &pts[npts];
            numfmt_fix(q->cx, sizeof q->cx, ax_map(x, ai), 1);
            numfmt_fix(q->cy, sizeof q->cy, ax_map(y, perf), 1);
            uint64_t hsh = pload_hash(q->cx) * 31 + pload_hash(q->cy) * 7 + l;
            uint32_t b = (uint32_t)(hsh % RPT_HASH);
            while (slot[b] != 0) {
                struct rpt *e = &pts[slot[b] - 1];
                if (e->l == l && strcmp(e->cx, q->cx) == 0 && strcmp(e->cy, q->cy) == 0)
                    break;
                b = (b + 1) % RPT_HASH;
            }
            if (slot[b] != 0) {
                pts[slot[b] - 1].count++;
                continue;
            }
            slot[b] = (int32_t)++npts;
            q->op = p->order[k];
            q->count = 1;
            q->l = l;
            q->ai = ai;
            q->perf = perf;
        }
    }
    free(slot);
    *npts_out = npts;
    return pts;
}

static void roof_circles(struct sb *h, const struct pdata *p, const struct rpt *pts, uint32_t npts)
{
    struct pop qb;
    for (uint32_t i = 0; i < npts; i++) {
        const struct rpt *q = &pts[i];
        char ia[32], pa[32], more[48] = "";
        numfmt_si(ia, sizeof ia, q->ai, "FLOP/B");
        numfmt_si(pa, sizeof pa, q->perf, "FLOP/s");
        if (q->count > 1)
            snprintf(more, sizeof more, " and %u more ops", q->count - 1);
        const char *head[] = {"<circle cx=\"", q->cx, "\" cy=\"", q->cy, "\" r=\"3\" fill=\"",
                              pstyle_kind_colors[pstyle_kind_index(pload_op(p, q->op, &qb)->kind)], "\" stroke=\"",
                              pstyle_level_colors[q->l], "\" fill-opacity=\"0.7\"><title>"};
        for (size_t j = 0; j < sizeof head / sizeof head[0]; j++)
            sb_puts(h, head[j]);
        sb_html(h, pload_op(p, q->op, &qb)->name);
        sb_puts(h, more);
        sb_puts(h, " at ");
        sb_html(h, p->lvl[q->l]);
        const char *tail[] = {": ", ia, ", ", pa, "</title></circle>\n"};
        for (size_t j = 0; j < sizeof tail / sizeof tail[0]; j++)
            sb_puts(h, tail[j]);
    }
}

/* A label's box in pixels (font-size 10: about 6 px a character, 11 high). */
struct lbox {
    double x0, y0, x1, y1;
};

static int lbox_hits(const struct lbox *a, const struct lbox *b)
{
    return a->x0 < b->x1 && b->x0 < a->x1 && a->y0 < b->y1 && b->y0 < a->y1;
}

/* the five slowest ops, named next to their DRAM point: each label at the
 * first of a few places around its point where it overlaps no label put
 * before (tests/test_golden_plots.c checks none do), else left out; slow
 * ops at the very place of one named already (the same op on other ranks
 * or layers) add "+N" to its label instead of a label of their own */
static void roof_labels(struct sb *h, const struct pdata *p, const struct axis *x,
                        const struct axis *y)
{
    struct { double cx, cy; char name[48]; unsigned more; } at[5];
    int nat = 0;
    for (uint32_t k = 0; k < p->nops && p->lvl_dram >= 0; k++) {
        struct pop ob;
        const struct pop *o = pload_op(p, p->order[k], &ob);
        double b = o->bytes[p->lvl_dram];
        if (o->flops <= 0 || o->time <= 0 || b <= 0)
            continue;
        double ai = o->flops / b, perf = o->flops / o->time;
        if (ai < x->lo || ai > x->hi || perf < y->lo || perf > y->hi)
            continue;
        double cx = ax_map(x, ai), cy = ax_map(y, perf);
        int i = 0;
        while (i < nat && !(fabs(at[i].cx - cx) < 3 && fabs(at[i].cy - cy) < 3))
            i++;
        if (i < nat) {
            at[i].more++;
            continue;
        }
        if (nat == 5)
            continue;   /* the five places taken: still counting the ops at them */
        at[nat].cx = cx;
        at[nat].cy = cy;
        at[nat].more = 0;
        snprintf(at[nat++].name, sizeof at[0].name, "%.36s", o->name);
    }
    struct lbox put[5];
    int labelled = 0;
    for (int i = 0; i < nat; i++) {
        char text[64];
        if (at[i].more > 0)
            snprintf(text, sizeof text, "%s +%u", at[i].name, at[i].more);
        else
            snprintf(text, sizeof text, "%s", at[i].name);
        double w = 6.0 * (double)strlen(text), hgt = 11, cx = at[i].cx, cy = at[i].cy;
        /* right above, right below, left above, left below, then further up and down */
        static const double dx[] = {5, 5, -1, -1, 5, 5, 5, 5}, dy[] = {-5, 14, -5, 14, -17, 26, -29, 38};
        int placed = 0;
        struct lbox bx = {0, 0, 0, 0};
        for (size_t c = 0; c < sizeof dx / sizeof dx[0] && !placed; c++) {
            double x0 = dx[c] < 0 ? cx - 5 - w : cx + dx[c];
            bx = (struct lbox){x0, cy + dy[c] - hgt + 2, x0 + w, cy + dy[c] + 2};
            placed = 1;
            for (int j = 0; j < labelled && placed; j++)
                placed = !lbox_hits(&bx, &put[j]);
        }
        if (!placed)
            continue;
        sb_printf(h, "<text class=\"oplabel\" x=\"%.1f\" y=\"%.1f\" font-size=\"10\">", bx.x0, bx.y1 - 2);
        sb_html(h, text);
        sb_printf(h, "</text>\n");
        put[labelled++] = bx;
    }
}

void psvg_roofline(struct sb *h, const struct pdata *p)
{
    struct axis x = {1e-1, 1e4, 1, 100, 760}, y = {1e9, 1e16, 1, 390, 20};
    /* fit the y range to the peak and the points */
    double ymax = p->peak * 2, ymin = p->peak / 1e5;
    y.lo = pow(10, floor(log10(ymin)));
    y.hi = pow(10, ceil(log10(ymax)));
    char cap[600];
    snprintf(cap, sizeof cap, "Hierarchical roofline, %s on %s: one roof per compute pipe and dtype "
                              "the run used and one per memory level; each op (coloured by kind, "
                              "outlined by level) is placed at its arithmetic intensity at every level",
             pload_workload(p), p->hw_name);
    struct sb capb = {0};
    sb_html(&capb, cap);
    svg_open(h, "plot-roofline", capb.s ? capb.s : "", 990, 430);
    free(capb.s);
    char yl[64];
    snprintf(yl, sizeof yl, "FLOP/s (%s peak)", p->peak_dtype);
    svg_frame(h, &x, &y, "arithmetic intensity (FLOP/byte)", yl, "", "FLOP/s");
    struct legend lg;
    lg.n = 0;
    roof_lines(h, p, &x, &y, &lg);
    uint32_t npts;
    struct rpt *pts = roof_points(p, &x, &y, &npts);
    roof_circles(h, p, pts, npts);
    roof_labels(h, p, &x, &y);
    /* kinds in the legend: only those present */
    struct pop qb;
    int used[PSTYLE_NKINDS] = {0};
    for (uint32_t i = 0; i < npts; i++)
        used[pstyle_kind_index(pload_op(p, pts[i].op, &qb)->kind)] = 1;
    for (int k = 0; k < PSTYLE_NKINDS; k++)
        if (used[k]) {
            lg.names[lg.n] = pstyle_kind_names[k];
            lg.cols[lg.n++] = pstyle_kind_colors[k];
        }
    free(pts);
    svg_legend(h, 770, 30, lg.names, lg.cols, lg.n);
    sb_printf(h, "</svg></figure>\n");
}

/* ------------------------------------------------------------ stalls */

void psvg_stalls(struct sb *h, const struct pdata *p)
{
    uint32_t top = p->ngroups < PSTYLE_TOP_STALLS ? p->ngroups : PSTYLE_TOP_STALLS;
    int bars = (int)top + (p->ngroups > top ? 1 : 0);
    double vals[PSTYLE_TOP_STALLS + 1][PLOAD_NCATMAX];
    memset(vals, 0, sizeof vals);
    double vmax = 0;
    /* several devices: each group's time over the devices, so the bars are a device's step */
    double per = 1e6 / (double)(p->ndev ? p->ndev : 1);
    for (uint32_t k = 0; k < p->ngroups; k++) {
        int b = k < top ? (int)k : (int)top;
        for (int c = 0; c < PLOAD_NCAT(p); c++)
            vals[b][c] += p->groups[k].cat[c] * per;
    }
    for (int b = 0; b < bars; b++) {
        double s = 0;
        for (int c = 0; c < PLOAD_NCAT(p); c++)
            s += vals[b][c];
        if (s > vmax)
            vmax = s;
    }
    if (vmax <= 0)
        vmax = 1;
    struct axis x = {0, bars > 0 ? bars : 1, -1, 70, 760}, y = {0, vmax * 1.05, 0, 330, 20};
    svg_open(h, "plot-stalls", p->ndev > 1 ? "Where a device's time went: busy, launch and waiting per "
                                             "level, slowest op groups first (names that differ only in "
                                             "numbers summed, over the devices' count)"
                                           : "Where the time went: busy, launch and waiting per memory level, "
                                             "slowest op groups first (names that differ only in numbers summed)",
             900, 470);
    svg_frame(h, &x, &y, "", p->ndev > 1 ? "time per device (us)" : "time (us)", "", "");
    double bw = (x.px1 - x.px0) / (bars > 0 ? bars : 1);
    for (int b = 0; b < bars; b++) {
        double acc = 0;
        char nm[120];
        if (b < (int)top && p->groups[b].count > 1)
            snprintf(nm, sizeof nm, "%s x%u", p->groups[b].name, p->groups[b].count);
        else
            snprintf(nm, sizeof nm, "%s", b < (int)top ? p->groups[b].name : "other");
        for (int c = 0; c < PLOAD_NCAT(p); c++) {
            if (vals[b][c] <= 0)
                continue;
            double y0 = ax_map(&y, acc), y1 = ax_map(&y, acc + vals[b][c]);
            sb_printf(h, "<rect x=\"%.1f\" y=\"%.1f\" width=\"%.1f\" height=\"%.1f\" fill=\"%s\"><title>",
                      x.px0 + b * bw + bw * 0.1, y1, bw * 0.8, y0 - y1, pstyle_cat_colors[c]);
            sb_html(h, nm);
            sb_printf(h, ": ");
            sb_html(h, pload_cat_name(p, c));
            sb_printf(h, " %.3f us</title></rect>\n", vals[b][c]);
            acc += vals[b][c];
        }
        sb_printf(h, "<text transform=\"translate(%.1f,%.1f) rotate(45)\" font-size=\"9\">",
                  x.px0 + b * bw + bw * 0.5, y.px0 + 8);
        char shortname[28];
        snprintf(shortname, sizeof shortname, "%.27s", nm);
        sb_html(h, shortname);
        sb_printf(h, "</text>\n");
    }
    /* the legend names the categories that have time (no empty entries) */
    const char *cn[PLOAD_NCATMAX], *cc[PLOAD_NCATMAX];
    int ncn = 0;
    for (int c = 0; c < PLOAD_NCAT(p); c++) {
        double any = 0;
        for (int b = 0; b < bars; b++)
            any += vals[b][c];
        if (any > 0) {
            cn[ncn] = pload_cat_name(p, c);
            cc[ncn++] = pstyle_cat_colors[c];
        }
    }
    svg_legend(h, 780, 30, cn, cc, ncn);
    sb_printf(h, "</svg></figure>\n");
}

/* ------------------------------------------------------------ bandwidth */

/* one flat step of a line, from time t0 to t1 (us) at pixel height y */
static void svg_step(struct sb *h, const struct axis *x, double t0, double t1, const char *y)
{
    char a1[24], a3[24];
    numfmt_fix(a1, sizeof a1, ax_map(x, t0), 1);
    numfmt_fix(a3, sizeof a3, ax_map(x, t1), 1);
    const char *pts[] = {a1, ",", y, " ", a3, ",", y, " "};
    for (size_t q = 0; q < sizeof pts / sizeof pts[0]; q++)
        sb_puts(h, pts[q]);
}

/* at most this many steps per line of the bandwidth plot (690 px wide) */
#define SVG_BW_STEPS 345

void psvg_bandwidth(struct sb *h, const struct pdata *p)
{
    int n = 0;
    double vmax = 0;
    for (unsigned l = 0; l < p->nlvl; l++) {
        int k = pload_ts_len(p, l);
        if (k > n)
            n = k;
        const cJSON *a = cJSON_GetObjectItemCaseSensitive(p->ts_dev, p->lvl[l]);
        for (const cJSON *v = cJSON_IsArray(a) ? a->child : NULL; v != NULL; v = v->next)
            if (pload_num(v) > vmax)
                vmax = pload_num(v);
    }
    double tmax = n * p->bucket_s * 1e6;
    struct axis x = {0, tmax > 0 ? tmax : 1, 0, 70, 760}, y = {0, vmax > 0 ? vmax * 1.05e-9 : 1, 0, 390, 20};
    svg_open(h, "plot-bandwidth", "Bandwidth per memory level over time", 900, 430);
    svg_frame(h, &x, &y, "time (us)", "bandwidth (GB/s)", "", "");
    const char *names[PLOAD_NLVL], *cols[PLOAD_NLVL];
    int nl = 0;
    for (unsigned l = 0; l < p->nlvl; l++) {
        const cJSON *a = cJSON_GetObjectItemCaseSensitive(p->ts_dev, p->lvl[l]);
        if (!cJSON_IsArray(a) || a->child == NULL)
            continue;
        sb_printf(h, "<polyline fill=\"none\" stroke=\"%s\" stroke-width=\"1.5\" points=\"", pstyle_level_colors[l]);
        /* a step line: buckets are averaged in groups of about two
         * pixels, and a run of steps at the same height is one segment
         * (more points than pixels only made the page larger) */
        int len = pload_ts_len(p, l), g = (len + SVG_BW_STEPS - 1) / SVG_BW_STEPS, i = 0;
        if (g < 1)
            g = 1;
        char y0[24] = "", ycur[24];
        int seg0 = 0;
        for (const cJSON *v = a->child; v != NULL;) {
            int i0 = i;
            double sum = 0;
            for (int k = 0; k < g && v != NULL; k++, v = v->next, i++)
                sum += pload_num(v);
            numfmt_fix(ycur, sizeof ycur, ax_map(&y, sum / (i - i0) * 1e-9), 1);
            if (i0 > 0 && strcmp(ycur, y0) != 0) {
                svg_step(h, &x, seg0 * p->bucket_s * 1e6, i0 * p->bucket_s * 1e6, y0);
                seg0 = i0;
            }
            if (i0 == 0 || strcmp(ycur, y0) != 0)
                memcpy(y0, ycur, sizeof y0);
        }
        if (i > 0)
            svg_step(h, &x, seg0 * p->bucket_s * 1e6, i * p->bucket_s * 1e6, y0);
        sb_printf(h, "\"/>\n");
        names[nl] = p->lvl[l];
        cols[nl++] = pstyle_level_colors[l];
    }
    svg_legend(h, 780, 30, names, cols, nl);
    sb_printf(h, "</svg></figure>\n");
}

