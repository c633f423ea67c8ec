/* plot_sweep.c: a sweep's plots and HTML page (plot_sweep.h): the times are
 * read back from the sweep's CSV, one .dat/.gp pair is written per varied
 * key, and sweep.html shows them with each trace's fastest points. */
#include "plot_sweep.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "afile.h"
#include "check.h"
#include "csv.h"
#include "numfmt.h"
#include "plot_gnuplot_run.h"
#include "plot_style.h"
#include "strbuf.h"
#include "sweep.h"

struct tv {
    double x;       /* the key's value, in its unit */
    double t;       /* time, us */
    unsigned v;     /* value index */
};

static int tv_cmp(const void *a, const void *b)
{
    const struct tv *p = a, *q = b;
    if (p->v != q->v)
        return p->v < q->v ? -1 : 1;
    return (p->t > q->t) - (p->t < q->t);
}

/* The file-name form of a key: letters, digits and _ kept, others '_'. */
static void word(char *out, size_t n, const char *key)
{
    size_t i = 0;
    for (; key[i] != '\0' && i + 1 < n; i++) {
        char c = key[i];
        out[i] = ((c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9'))
                     ? c : '_';
    }
    out[i] = '\0';
}

static int write_text(const char *path, const char *text, size_t n, struct diag *d)
{
    struct afile a;
    if (afile_open(&a, path, d) != 0)
        return -1;
    fwrite(text, 1, n, a.f);
    return afile_commit(&a, d);
}

/* The header's column named name, or -1. */
static int csv_column(const char *header, const char *name)
{
    size_t n = strlen(name);
    int col = 0;
    for (const char *p = header; p != NULL; p = csv_skip(p), col++)
        if (strncmp(p, name, n) == 0 && (p[n] == ',' || p[n] == '\n' || p[n] == '\r' || p[n] == 0))
            return col;
    return -1;
}

/* Each task's time (us), tokens a second (the row's last field; 0 when
 * the trace has no tokens) and energy (J; its energy_J column, on a chip
 * with a power block: else *energy is NULL) from the CSV, in task order,
 * into *out, *tok and *energy (the caller frees them).  0, or -1 with *d
 * and nothing allocated. */
static int read_times(const struct sweep *s, const char *csv_path, double **out, double **tok,
                      double **energy, struct diag *d)
{
    FILE *f = fopen(csv_path, "rb");
    if (f == NULL)
        return diag_set(d, DIAG_E_IO, csv_path, 0, "", "cannot read the sweep's CSV back");
    /* rows: point, trace, keys..., time_us, ..., tokens_per_s: the task order is point-major */
    uint64_t ntasks = s->npoints * s->ntraces;
    double *time = sim_xcalloc(ntasks ? ntasks : 1, sizeof *time);
    double *tps = sim_xcalloc(ntasks ? ntasks : 1, sizeof *tps);
    double *ej = NULL;
    char line[8192];
    uint64_t task = 0;
    int first = 1, ecol = -1;
    while (fgets(line, sizeof line, f) != NULL) {
        if (first) {
            first = 0;
            ecol = csv_column(line, "energy_J");
            if (ecol >= 0)
                ej = sim_xcalloc(ntasks ? ntasks : 1, sizeof *ej);
            continue;
        }
        if (ej != NULL && task < ntasks) {
            const char *e = line;
            for (int k = 0; k < ecol && e != NULL; k++)
                e = csv_skip(e);
            ej[task] = e != NULL ? strtod(e, NULL) : 0;
        }
        const char *p = line;
        for (unsigned k = 0; k < 2 + s->nkeys && p != NULL; k++)
            p = csv_skip(p);
        if (p == NULL || task >= ntasks)
            break;
        const char *last = strrchr(p, ',');    /* tokens_per_s is a number: no quotes */
        tps[task] = last != NULL ? strtod(last + 1, NULL) : 0;
        time[task++] = strtod(p, NULL);
    }
    fclose(f);
    if (task != ntasks) {
        free(time);
        free(tps);
        free(ej);
        return diag_set(d, DIAG_E_PARSE, csv_path, 0, "", "has %llu rows, the sweep %llu",
                        (unsigned long long)task, (unsigned long long)ntasks);
    }
    *out = time;
    *tok = tps;
    *energy = ej;
    return 0;
}

/* A trace's legend name: its file name without a .json */
static void trace_name(char *out, size_t n, const char *path)
{
    const char *base = strrchr(path, '/');
    pstyle_plain(out, n, base ? base + 1 : path);
    size_t l = strlen(out);
    if (l > 5 && strcmp(out + l - 5, ".json") == 0)
        out[l - 5] = '\0';
}

/* Two keys (and no zip): key i's curves, one per trace and value of the
 * other key, the time against key i's value: a family of curves. */
static void key_dat_family(struct sb *dat, const struct sweep *s, unsigned i, const double *time,
                           struct tv *tv)
{
    const struct sweep_key *k = &s->key[i], *o = &s->key[1 - i];
    sb_printf(dat, "# %s: per trace and value of %s, one block: value time_us\n", k->key, o->key);
    for (unsigned t = 0; t < s->ntraces; t++)
        for (unsigned ov = 0; ov < o->nvalues; ov++) {
            uint64_t n = 0;
            for (uint64_t p = 0; p < s->npoints; p++)
                if (sweep_value_index(s, 1 - i, p) == ov) {
                    unsigned v = sweep_value_index(s, i, p);
                    tv[n++] = (struct tv){k->num[v], time[p * s->ntraces + t], v};
                }
            qsort(tv, n, sizeof *tv, tv_cmp);
            sb_printf(dat, "# trace %u: %s, %s = %s\n", t, s->trace_path[t], o->key, o->values[ov]);
            for (uint64_t a = 0; a < n; a++)
                sb_printf(dat, "%.9g %.9g\n", tv[a].x, tv[a].t);
            sb_printf(dat, "\n\n");
        }
}

/* Key i's data: per trace one block of value, median, min and max time
 * over the other keys' values.  tv has room for the points. */
static void key_dat(struct sb *dat, const struct sweep *s, unsigned i, const double *time,
                    struct tv *tv)
{
    const struct sweep_key *k = &s->key[i];
    if (s->nkeys == 2 && !s->zip) {
        key_dat_family(dat, s, i, time, tv);
        return;
    }
    sb_printf(dat, "# %s: per trace, one block: value median_us min_us max_us "
                  "(over the other keys' values)\n", k->key);
    for (unsigned t = 0; t < s->ntraces; t++) {
        for (uint64_t p = 0; p < s->npoints; p++) {
            unsigned v = sweep_value_index(s, i, p);
            tv[p] = (struct tv){k->num[v], time[p * s->ntraces + t], v};
        }
        qsort(tv, s->npoints, sizeof *tv, tv_cmp);
        sb_printf(dat, "# trace %u: %s\n", t, s->trace_path[t]);
        for (uint64_t a = 0; a < s->npoints;) {
            uint64_t b = a;
            while (b < s->npoints && tv[b].v == tv[a].v)
                b++;
            uint64_t m = a + (b - a) / 2;
            double med = (b - a) % 2 ? tv[m].t : 0.5 * (tv[m - 1].t + tv[m].t);
            sb_printf(dat, "%.9g %.9g %.9g %.9g\n", tv[a].x, med, tv[a].t, tv[b - 1].t);
            a = b;
        }
        sb_printf(dat, "\n\n");
    }
}

/* The unit key k's numbers (sweep_key.num) are in: the first value's
 * suffix ("TB/s" of "1TB/s"), "" for plain numbers. */
static const char *key_unit(const struct sweep_key *k)
{
    return k->values[0] + strspn(k->values[0], "0123456789.+-eE");
}

/* Key i's gnuplot script; w is the key's file-name form. */
static void key_gp(struct sb *gp, const struct sweep *s, unsigned i, const char *w)
{
    const struct sweep_key *k = &s->key[i];
    double lo = k->num[0], hi = k->num[0];
    for (unsigned v = 0; v < k->nvalues; v++) {
        lo = fmin(lo, k->num[v]);
        hi = fmax(hi, k->num[v]);
    }
    const char *unit = key_unit(k);
    char hw[200];
    trace_name(hw, sizeof hw, s->hw);
    size_t hl = strlen(hw);
    if (hl > 5 && strcmp(hw + hl - 5, ".yaml") == 0)
        hw[hl - 5] = '\0';
    int family = s->nkeys == 2 && !s->zip, single = s->nkeys == 1;
    sb_printf(gp, "# %s.gp: written by strata sweep; render with: gnuplot %s.gp\n", w, w);
    sb_printf(gp, "set title \"time against %s on %s%s\"\n", k->key, hw,
              single ? "" : family ? ", one curve per value of the other key"
                                   : " (median over the other keys' values; bars: their range)");
    sb_printf(gp, "set xlabel \"%s (%s)\"\nset ylabel \"time (us)\"\nset grid\nset key outside "
                 "right\n", k->key, unit[0] ? unit : "value");
    if (lo > 0 && hi / lo >= 8) {
        sb_printf(gp, "set logscale x\nset xrange [%.9g:%.9g]\n", lo / 1.15, hi * 1.15);
        if (k->nvalues <= 16) {     /* a tick at every value swept, not only at 1, 10, 100 */
            sb_printf(gp, "set xtics (");
            for (unsigned v = 0; v < k->nvalues; v++)
                sb_printf(gp, "%s\"%.4g\" %.9g", v ? ", " : "", k->num[v], k->num[v]);
            sb_printf(gp, ")\n");
        }
    }
    struct sb cmd = {0};
    sb_printf(&cmd, "plot ");
    unsigned blk = 0;
    for (unsigned t = 0; t < s->ntraces; t++) {
        char tw[100];
        trace_name(tw, sizeof tw, s->trace_path[t]);
        if (family) {
            const struct sweep_key *o = &s->key[1 - i];
            for (unsigned ov = 0; ov < o->nvalues; ov++, blk++) {
                char ok[100], vv[60];
                pstyle_plain(ok, sizeof ok, o->key);
                pstyle_plain(vv, sizeof vv, o->values[ov]);
                sb_printf(&cmd, "%s\"%s.dat\" index %u using 1:2 with linespoints lw 2 title \"%s%s%s = %s\"",
                          blk ? ", " : "", w, blk, s->ntraces > 1 ? tw : "", s->ntraces > 1 ? ", " : "",
                          ok, vv);
            }
        } else if (single) {
            sb_printf(&cmd, "%s\"%s.dat\" index %u using 1:2 with linespoints lw 2 title \"%s\"",
                      t ? ", " : "", w, t, tw);
        } else {
            sb_printf(&cmd, "%s\"%s.dat\" index %u using 1:2:3:4 with yerrorlines lw 2 title \"%s\"",
                      t ? ", " : "", w, t, tw);
        }
    }
    sb_printf(gp, "set terminal pngcairo noenhanced size 1000,600\nset output \"%s.png\"\n%s\n", w, cmd.s);
    sb_printf(gp, "set terminal svg noenhanced size 1000,600\nset output \"%s.svg\"\n%s\n", w, cmd.s);
    free(cmd.s);
}

/* plots/W.dat and plots/W.gp for key i (W its file-name form, in w). */
static int write_key_plot(const struct sweep *s, unsigned i, const double *time, struct tv *tv,
                          const char *plots, char *w, size_t wn, struct diag *d)
{
    char path[1300];
    word(w, wn, s->key[i].key);
    struct sb dat = {0}, gp = {0};
    key_dat(&dat, s, i, time, tv);
    key_gp(&gp, s, i, w);
    snprintf(path, sizeof path, "%s/%s.dat", plots, w);
    int rc = write_text(path, dat.s, dat.n, d);
    snprintf(path, sizeof path, "%s/%s.gp", plots, w);
    if (rc == 0)
        rc = write_text(path, gp.s, gp.n, d);
    free(dat.s);
    free(gp.s);
    return rc;
}

/* ------------------------------------------------------------ heatmaps */

/* Two keys (no zip): per trace a heatmap, key 0 on x and key 1 on y, one
 * cell per point, coloured by the time (or tokens a second where the trace
 * has tokens) with its value written in the cell.  The geometry is fixed
 * so that the writer knows a cell's size in pixels and leaves out what
 * would overprint: tick labels are thinned, cell labels shortened to two
 * digits or left out. */
#define HEAT_W_PX 900
#define HEAT_H_PX 700
#define HEAT_L 0.15             /* the plot area, as fractions of the picture */
#define HEAT_R 0.80
#define HEAT_B 0.13
#define HEAT_T 0.90
#define HEAT_CHAR_PX 7.0        /* a character of 9 pt text, a little generous (larger: in
                                   proportion) */
#define HEAT_LINE_PX 16.0       /* a line of 9 pt text with room above and below */
#define HEAT_TIC_CHAR_PX 9.0    /* a character of the tick labels (gnuplot's 12 pt) */

/* What trace t's map shows: its values in a unit of engineering size. */
struct heat {
    const double *val;          /* per task: the time (us) or tokens/s */
    double div;                 /* a value / div is in the unit */
    const char *what, *unit;    /* "time", "ms"; "throughput", "k tokens/s" */
    double lo, hi;              /* of val / div over the trace's points */
};

static void heat_scale(struct heat *h, const struct sweep *s, unsigned t, const double *time,
                       const double *tok)
{
    int tokens = 1;
    for (uint64_t p = 0; p < s->npoints; p++)
        tokens &= tok[p * s->ntraces + t] > 0;
    double hi = 0;
    h->val = tokens ? tok : time;
    for (uint64_t p = 0; p < s->npoints; p++)
        hi = fmax(hi, h->val[p * s->ntraces + t]);
    if (tokens) {
        h->what = "throughput";
        h->div = hi >= 1e6 ? 1e6 : hi >= 1e3 ? 1e3 : 1;
        h->unit = hi >= 1e6 ? "M tokens/s" : hi >= 1e3 ? "k tokens/s" : "tokens/s";
    } else {        /* time_us: the largest unit the slowest point reaches */
        h->what = "time";
        h->div = hi >= 1e6 ? 1e6 : hi >= 1e3 ? 1e3 : hi >= 1 ? 1 : 1e-3;
        h->unit = hi >= 1e6 ? "s" : hi >= 1e3 ? "ms" : hi >= 1 ? "us" : "ns";
    }
    h->lo = h->hi = h->val[t] / h->div;
    for (uint64_t p = 0; p < s->npoints; p++) {
        double v = h->val[p * s->ntraces + t] / h->div;
        h->lo = fmin(h->lo, v);
        h->hi = fmax(h->hi, v);
    }
}

/* A cell's label with sig significant digits (no exponent: the unit keeps
 * the values below 1000, and a larger one is printed whole). */
static void heat_label(char *out, size_t n, double v, int sig)
{
    if (v >= 1000)
        numfmt_fix(out, n, v, 0);
    else
        numfmt_gp(out, n, v, sig);
}

/* Every how many values a tick label goes, so that labels len characters
 * wide (extent: a label's size along the axis when len is 0) do not touch
 * on an axis of span px pixels and n values. */
static unsigned heat_tick_step(unsigned n, double span, size_t len, double extent)
{
    double need = len > 0 ? (double)len * HEAT_TIC_CHAR_PX + 12 : extent;
    double cell = span / n;
    unsigned step = 1;
    while (step < n && cell * step < need)
        step++;
    return step;
}

/* Key k's tick labels: its numbers to 3 digits (the unit is on the axis
 * label), every step-th value. */
static void heat_tics(struct sb *gp, const char *axis, const struct sweep_key *k, unsigned step)
{
    sb_printf(gp, "set %s (", axis);
    for (unsigned v = 0, first = 1; v < k->nvalues; v += step, first = 0) {
        char lbl[40];
        heat_label(lbl, sizeof lbl, k->num[v], 3);
        sb_printf(gp, "%s\"%s\" %u", first ? "" : ", ", lbl, v);
    }
    sb_printf(gp, ")\n");
}

/* The widest of key k's tick labels, characters. */
static size_t heat_tic_len(const struct sweep_key *k)
{
    size_t len = 0;
    for (unsigned v = 0; v < k->nvalues; v++) {
        char lbl[40];
        heat_label(lbl, sizeof lbl, k->num[v], 3);
        len = strlen(lbl) > len ? strlen(lbl) : len;
    }
    return len;
}

/* Trace t's heatmap: plots/W.dat (x index, y index, value in the unit,
 * its label or "-", the label's colour, the two values as swept) and W.gp. */
static void heat_write(struct sb *dat, struct sb *gp, const struct sweep *s, unsigned t,
                       const double *time, const double *tok, const char *w)
{
    const struct sweep_key *kx = &s->key[0], *ky = &s->key[1];
    struct heat h;
    heat_scale(&h, s, t, time, tok);
    double cw = (HEAT_R - HEAT_L) * HEAT_W_PX / kx->nvalues;
    double ch = (HEAT_T - HEAT_B) * HEAT_H_PX / ky->nvalues;
    /* the largest label that fits every cell: 3 digits at 12 pt, at 9 pt, 2 digits at 9 pt, or none */
    static const struct { int sig, pt; double line_px; } fit[] = {
        {3, 12, 1.5 * HEAT_LINE_PX}, {3, 9, HEAT_LINE_PX}, {2, 9, HEAT_LINE_PX}};
    int sig = 0, pt = 9;
    for (size_t f = 0; f < sizeof fit / sizeof fit[0] && sig == 0; f++) {
        double scale = fit[f].pt / 9.0;
        size_t wide = 0;
        for (uint64_t p = 0; p < s->npoints; p++) {
            char b[40];
            heat_label(b, sizeof b, h.val[p * s->ntraces + t] / h.div, fit[f].sig);
            wide = strlen(b) > wide ? strlen(b) : wide;
        }
        if ((double)wide * HEAT_CHAR_PX * scale + 6 <= cw && ch >= fit[f].line_px) {
            sig = fit[f].sig;
            pt = fit[f].pt;
        }
    }
    char tw[200], hw[200];
    trace_name(tw, sizeof tw, s->trace_path[t]);
    trace_name(hw, sizeof hw, s->hw);
    size_t hl = strlen(hw);
    if (hl > 5 && strcmp(hw + hl - 5, ".yaml") == 0)
        hw[hl - 5] = '\0';
    sb_printf(dat, "# %s on %s: %s (%s) per point; columns: %s index, %s index, value, label "
                   "(- when the cells are too small), label colour, %s, %s\n",
              tw, hw, h.what, h.unit, kx->key, ky->key, kx->key, ky->key);
    for (unsigned yv = 0; yv < ky->nvalues; yv++) {
        for (uint64_t p = 0; p < s->npoints; p++) {
            if (sweep_value_index(s, 1, p) != yv)
                continue;
            unsigned xv = sweep_value_index(s, 0, p);
            double v = h.val[p * s->ntraces + t] / h.div;
            char lbl[40] = "-", num[40];
            if (sig > 0)
                heat_label(lbl, sizeof lbl, v, sig);
            double f = h.hi > h.lo ? (v - h.lo) / (h.hi - h.lo) : 0.5;
            numfmt_gp(num, sizeof num, v, 9);
            sb_printf(dat, "%u %u %s %s %s %s %s\n", xv, yv, num, lbl,
                      f >= PSTYLE_SEQ_LIGHT ? "0x000000" : "0xffffff", kx->values[xv], ky->values[yv]);
        }
        sb_printf(dat, "\n");
    }
    sb_printf(gp, "# %s.gp: written by strata sweep; render with: gnuplot %s.gp\n", w, w);
    sb_printf(gp, "set title \"%s on %s: %s (%s) by %s and %s\"\n", tw, hw, h.what, h.unit,
              kx->key, ky->key);
    const char *ux = key_unit(kx), *uy = key_unit(ky);
    sb_printf(gp, "set xlabel \"%s%s%s%s\"\nset ylabel \"%s%s%s%s\"\nset cblabel \"%s (%s)\" offset 1.5,0\n"
                  "unset key\n", kx->key, ux[0] ? " (" : "", ux, ux[0] ? ")" : "", ky->key,
              uy[0] ? " (" : "", uy, uy[0] ? ")" : "", h.what, h.unit);
    sb_printf(gp, "set lmargin at screen %.2f\nset rmargin at screen %.2f\nset bmargin at screen "
                  "%.2f\nset tmargin at screen %.2f\n", HEAT_L, HEAT_R, HEAT_B, HEAT_T);
    sb_printf(gp, "set xrange [-0.5:%.1f]\nset yrange [-0.5:%.1f]\nset tics scale 0\n",
              kx->nvalues - 0.5, ky->nvalues - 0.5);
    heat_tics(gp, "xtics", kx, heat_tick_step(kx->nvalues, (HEAT_R - HEAT_L) * HEAT_W_PX,
                                              heat_tic_len(kx), 0));
    heat_tics(gp, "ytics", ky, heat_tick_step(ky->nvalues, (HEAT_T - HEAT_B) * HEAT_H_PX, 0,
                                              HEAT_LINE_PX));
    sb_printf(gp, "set palette defined (");
    for (int c = 0; c < PSTYLE_SEQ_N; c++)
        sb_printf(gp, "%s%d \"%s\"", c ? ", " : "", c, pstyle_seq_colors[c]);
    sb_printf(gp, ")\n");
    /* one value everywhere: a range around it, or gnuplot refuses an empty one */
    double lo = h.lo, hi = h.hi;
    if (!(hi > lo)) {
        lo = lo > 0 ? lo * 0.99 : lo - 1;
        hi = hi > 0 ? hi * 1.01 : hi + 1;
    }
    sb_printf(gp, "set cbrange [%.9g:%.9g]\nset format cb \"%%.4g\"\nset cbtics out scale 0.5\n",
              lo, hi);
    struct sb cmd = {0};
    sb_printf(&cmd, "plot \"%s.dat\" using 1:2:3 with image", w);
    if (sig > 0)
        sb_printf(&cmd, ", \"\" using 1:2:4:5 with labels font \",%d\" textcolor rgb variable", pt);
    sb_printf(gp, "set terminal pngcairo noenhanced size %d,%d\nset output \"%s.png\"\n%s\n",
              HEAT_W_PX, HEAT_H_PX, w, cmd.s);
    sb_printf(gp, "set terminal svg noenhanced size %d,%d\nset output \"%s.svg\"\n%s\n",
              HEAT_W_PX, HEAT_H_PX, w, cmd.s);
    free(cmd.s);
}

/* plots/heatmap_TRACE.dat/.gp for trace t (the name in w; a trace whose
 * name an earlier one has gets its index added). */
static int write_heat_plot(const struct sweep *s, unsigned t, const double *time, const double *tok,
                           const char *plots, char (*w)[100], struct diag *d)
{
    char tw[100], path[1300];
    trace_name(tw, sizeof tw, s->trace_path[t]);
    char tword[90];
    word(tword, sizeof tword, tw);
    snprintf(w[t], sizeof w[t], "heatmap_%s", tword);
    for (unsigned u = 0; u < t; u++)
        if (strcmp(w[u], w[t]) == 0)
            snprintf(w[t], sizeof w[t], "heatmap_%.80s_%u", tword, t);
    struct sb dat = {0}, gp = {0};
    heat_write(&dat, &gp, s, t, time, tok, w[t]);
    snprintf(path, sizeof path, "%s/%s.dat", plots, w[t]);
    int rc = write_text(path, dat.s, dat.n, d);
    snprintf(path, sizeof path, "%s/%s.gp", plots, w[t]);
    if (rc == 0)
        rc = write_text(path, gp.s, gp.n, d);
    free(dat.s);
    free(gp.s);
    return rc;
}

/* The page's head: the chip, the counts and each key's range. */
static void page_head(struct sb *h, const struct sweep *s)
{
    sb_printf(h, "<!doctype html>\n<html><head><meta charset=\"utf-8\"><title>strata sweep</title>"
                "<style>body{font-family:sans-serif;max-width:1100px;margin:auto}"
                "table{border-collapse:collapse}td,th{border:1px solid #ccc;padding:2px 6px;"
                "text-align:right}</style></head><body>\n<h1>strata sweep</h1>\n<p>");
    sb_html(h, s->hw);
    sb_printf(h, ": %llu points x %u traces (<a href=\"sweep.csv\">sweep.csv</a>)</p>\n<ul>\n",
            (unsigned long long)s->npoints, s->ntraces);
    for (unsigned i = 0; i < s->nkeys; i++) {
        sb_printf(h, "<li>");
        sb_html(h, s->key[i].key);
        sb_printf(h, ": %u values, ", s->key[i].nvalues);
        sb_html(h, s->key[i].values[0]);
        sb_printf(h, " .. ");
        sb_html(h, s->key[i].values[s->key[i].nvalues - 1]);
        sb_printf(h, "</li>\n");
    }
    sb_printf(h, "</ul>\n");
}

/* Trace t's ten points of least cost[] (time in us, or joules), ties by
 * point index, a row each with its keys' values and cost (to 3 decimals,
 * or sig significant digits when sig > 0). */
static void page_best(struct sb *h, const struct sweep *s, unsigned t, const double *cost,
                      const char *title, const char *unit, int sig)
{
    sb_printf(h, "<h2>%s: ", title);
    sb_html(h, s->trace_path[t]);
    sb_printf(h, "</h2>\n<table><tr><th>point</th>");
    for (unsigned i = 0; i < s->nkeys; i++) {
        sb_printf(h, "<th>");
        sb_html(h, s->key[i].key);
        sb_printf(h, "</th>");
    }
    sb_printf(h, "<th>%s</th></tr>\n", unit);
    uint64_t shown[10];
    unsigned nshown = 0;
    for (unsigned r = 0; r < 10 && r < s->npoints; r++) {
        uint64_t best = UINT64_MAX;
        for (uint64_t p = 0; p < s->npoints; p++) {
            int used = 0;
            for (unsigned q = 0; q < nshown; q++)
                used |= shown[q] == p;
            if (!used && (best == UINT64_MAX ||
                          cost[p * s->ntraces + t] < cost[best * s->ntraces + t]))
                best = p;
        }
        shown[nshown++] = best;
        sb_printf(h, "<tr><td>%llu</td>", (unsigned long long)best);
        for (unsigned i = 0; i < s->nkeys; i++) {
            sb_printf(h, "<td>");
            sb_html(h, s->key[i].values[sweep_value_index(s, i, best)]);
            sb_printf(h, "</td>");
        }
        if (sig > 0)
            sb_printf(h, "<td>%.*g</td></tr>\n", sig, cost[best * s->ntraces + t]);
        else
            sb_printf(h, "<td>%.3f</td></tr>\n", cost[best * s->ntraces + t]);
    }
    sb_printf(h, "</table>\n");
}

/* Trace t's joules a token (a trace with tokens) or a run (one without),
 * into cost[] over every point: energy_J / (tokens_per_s x time). */
static const char *energy_cost(const struct sweep *s, unsigned t, const double *time,
                               const double *tok, const double *energy, double *cost)
{
    int per_token = 1;
    for (uint64_t p = 0; p < s->npoints; p++)
        per_token &= tok[p * s->ntraces + t] > 0;
    for (uint64_t p = 0; p < s->npoints; p++) {
        uint64_t k = p * s->ntraces + t;
        cost[k] = per_token ? energy[k] / (tok[k] * time[k] * 1e-6) : energy[k];
    }
    return per_token ? "J a token" : "energy (J)";
}

int plot_sweep(const struct sweep *s, const char *csv_path, const char *dir, struct diag *d)
{
    double *time, *tok, *energy;
    if (read_times(s, csv_path, &time, &tok, &energy, d) != 0)
        return -1;
    char plots[1100], path[1300];
    snprintf(plots, sizeof plots, "%s/plots", dir);
    int rc = afile_make_dir(plots, "--out", d);
    struct tv *tv = sim_xcalloc(s->npoints ? s->npoints : 1, sizeof *tv);
    /* the scripts: one per key, then (two keys, no zip) one heatmap per trace */
    enum { NMAX = SWEEP_MAX_KEYS + SWEEP_MAX_TRACES };
    const char *names[NMAX];
    char namebuf[SWEEP_MAX_KEYS][100], heatbuf[SWEEP_MAX_TRACES][100];
    int have[NMAX], ok[NMAX];
    unsigned nheat = s->nkeys == 2 && !s->zip ? s->ntraces : 0, n = 0;
    for (unsigned i = 0; i < s->nkeys && rc == 0; i++, n++) {
        rc = write_key_plot(s, i, time, tv, plots, namebuf[i], sizeof namebuf[i], d);
        names[n] = namebuf[i];
        have[n] = 1;
    }
    for (unsigned t = 0; t < nheat && rc == 0; t++, n++) {
        rc = write_heat_plot(s, t, time, tok, plots, heatbuf, d);
        names[n] = heatbuf[t];
        have[n] = 1;
    }
    char gnuplot[512];
    int rendered = 0;
    if (rc == 0 && gprun_find(gnuplot, sizeof gnuplot)) {
        for (unsigned i = 0; i < n; i += 3) {
            unsigned m = n - i < 3 ? n - i : 3;
            gprun_scripts(gnuplot, plots, names + i, have + i, (int)m, ok + i);
        }
        rendered = 1;
    }
    /* the page: what was varied, the plots, the fastest points */
    struct sb h = {0};
    page_head(&h, s);
    for (unsigned i = 0; i < n && rc == 0; i++) {
        sb_printf(&h, "<h2>");
        if (i < s->nkeys) {
            sb_html(&h, s->key[i].key);
        } else {
            sb_printf(&h, "heatmap: ");
            sb_html(&h, s->trace_path[i - s->nkeys]);
        }
        sb_printf(&h, "</h2>\n");
        if (rendered && ok[i])
            sb_printf(&h, "<img src=\"plots/%s.svg\" width=\"%d\">\n", names[i],
                      i < s->nkeys ? 1000 : HEAT_W_PX);
        else
            sb_printf(&h, "<p>gnuplot did not render this plot: run <code>gnuplot %s.gp</code> in "
                        "plots/.</p>\n", names[i]);
    }
    /* on a chip with a power block, the points of least energy too
     * (docs/energy.md): per token where the trace counts tokens */
    double *cost = energy != NULL ? sim_xcalloc(s->npoints * s->ntraces, sizeof *cost) : NULL;
    for (unsigned t = 0; t < s->ntraces && rc == 0; t++) {
        page_best(&h, s, t, time, "fastest points", "time (us)", 0);
        if (cost != NULL) {
            const char *unit = energy_cost(s, t, time, tok, energy, cost);
            page_best(&h, s, t, cost, "least energy", unit, 6);
        }
    }
    free(cost);
    sb_printf(&h, "</body></html>\n");
    snprintf(path, sizeof path, "%s/sweep.html", dir);
    if (rc == 0)
        rc = write_text(path, h.s, h.n, d);
    free(h.s);
    free(tv);
    free(tok);
    free(energy);
    free(time);
    return rc;
}
