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
#include "plot_gnuplot_run.h"
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

/* Each task's time (us) from the CSV, in task order, into *out (the
 * caller frees it).  0, or -1 with *d and nothing allocated. */
static int read_times(const struct sweep *s, const char *csv_path, double **out, struct diag *d)
{
    FILE *f = fopen(csv_path, "rb");
    if (f == NULL)
        return diag_set(d, DIAG_E_IO, csv_path, 0, "", "cannot read the sweep's CSV back");
    /* rows: point, trace, keys..., time_us: the task order is point-major */
    uint64_t ntasks = s->npoints * s->ntraces;
    double *time = sim_xcalloc(ntasks ? ntasks : 1, sizeof *time);
    char line[8192];
    uint64_t task = 0;
    int first = 1;
    while (fgets(line, sizeof line, f) != NULL) {
        if (first) {
            first = 0;
            continue;
        }
        const char *p = line;
        for (unsigned k = 0; k < 2 + s->nkeys && p != NULL; k++)
            p = csv_skip(p);
        if (p == NULL || task >= ntasks)
            break;
        time[task++] = strtod(p, NULL);
    }
    fclose(f);
    if (task != ntasks) {
        free(time);
        return diag_set(d, DIAG_E_PARSE, csv_path, 0, "", "has %llu rows, the sweep %llu",
                        (unsigned long long)task, (unsigned long long)ntasks);
    }
    *out = time;
    return 0;
}

/* A name for a legend or title: the text without a quote or backslash
 * (the terminals are noenhanced, so '_' and '.' stay as they are) */
static void plain(char *out, size_t n, const char *text)
{
    size_t j = 0;
    for (size_t i = 0; text[i] != '\0' && j + 1 < n; i++)
        if (text[i] != '"' && text[i] != '\\')
            out[j++] = text[i];
    out[j] = '\0';
}

/* A trace's legend name: its file name without a .json */
static void trace_name(char *out, size_t n, const char *path)
{
    const char *base = strrchr(path, '/');
    plain(out, n, base ? base + 1 : path);
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

/* Key i's gnuplot script; w is the key's file-name form. */
static void key_gp(struct sb *gp, const struct sweep *s, unsigned i, const char *w)
{
    const struct sweep_key *k = &s->key[i];
    double lo = k->num[0], hi = k->num[0];
    for (unsigned v = 0; v < k->nvalues; v++) {
        lo = fmin(lo, k->num[v]);
        hi = fmax(hi, k->num[v]);
    }
    const char *unit = k->values[0] + strspn(k->values[0], "0123456789.+-eE");
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
                plain(ok, sizeof ok, o->key);
                plain(vv, sizeof vv, o->values[ov]);
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

/* Trace t's ten fastest points, ties by point index. */
static void page_fastest(struct sb *h, const struct sweep *s, unsigned t, const double *time)
{
    sb_printf(h, "<h2>fastest points: ");
    sb_html(h, s->trace_path[t]);
    sb_printf(h, "</h2>\n<table><tr><th>point</th>");
    for (unsigned i = 0; i < s->nkeys; i++) {
        sb_printf(h, "<th>");
        sb_html(h, s->key[i].key);
        sb_printf(h, "</th>");
    }
    sb_printf(h, "<th>time (us)</th></tr>\n");
    /* the 10 fastest, ties by point index */
    uint64_t shown[10];
    unsigned nshown = 0;
    for (unsigned r = 0; r < 10 && r < s->npoints; r++) {
        uint64_t best = UINT64_MAX;
        for (uint64_t p = 0; p < s->npoints; p++) {
            int used = 0;
            for (unsigned q = 0; q < nshown; q++)
                used |= shown[q] == p;
            if (!used && (best == UINT64_MAX ||
                          time[p * s->ntraces + t] < time[best * s->ntraces + t]))
                best = p;
        }
        shown[nshown++] = best;
        sb_printf(h, "<tr><td>%llu</td>", (unsigned long long)best);
        for (unsigned i = 0; i < s->nkeys; i++) {
            sb_printf(h, "<td>");
            sb_html(h, s->key[i].values[sweep_value_index(s, i, best)]);
            sb_printf(h, "</td>");
        }
        sb_printf(h, "<td>%.3f</td></tr>\n", time[best * s->ntraces + t]);
    }
    sb_printf(h, "</table>\n");
}

int plot_sweep(const struct sweep *s, const char *csv_path, const char *dir, struct diag *d)
{
    double *time;
    if (read_times(s, csv_path, &time, d) != 0)
        return -1;
    char plots[1100], path[1300];
    snprintf(plots, sizeof plots, "%s/plots", dir);
    int rc = afile_make_dir(plots, "--out", d);
    struct tv *tv = sim_xcalloc(s->npoints ? s->npoints : 1, sizeof *tv);
    const char *names[SWEEP_MAX_KEYS];
    char namebuf[SWEEP_MAX_KEYS][100];
    int have[SWEEP_MAX_KEYS], ok[SWEEP_MAX_KEYS];
    for (unsigned i = 0; i < s->nkeys && rc == 0; i++) {
        rc = write_key_plot(s, i, time, tv, plots, namebuf[i], sizeof namebuf[i], d);
        names[i] = namebuf[i];
        have[i] = 1;
    }
    char gnuplot[512];
    int rendered = 0;
    if (rc == 0 && gprun_find(gnuplot, sizeof gnuplot)) {
        for (unsigned i = 0; i < s->nkeys; i += 3) {
            unsigned n = s->nkeys - i < 3 ? s->nkeys - i : 3;
            gprun_scripts(gnuplot, plots, names + i, have + i, (int)n, ok + i);
        }
        rendered = 1;
    }
    /* the page: what was varied, the plots, the fastest points */
    struct sb h = {0};
    page_head(&h, s);
    for (unsigned i = 0; i < s->nkeys && rc == 0; i++) {
        sb_printf(&h, "<h2>");
        sb_html(&h, s->key[i].key);
        sb_printf(&h, "</h2>\n");
        if (rendered && ok[i])
            sb_printf(&h, "<img src=\"plots/%s.svg\" width=\"1000\">\n", names[i]);
        else
            sb_printf(&h, "<p>gnuplot did not render this plot: run <code>gnuplot %s.gp</code> in "
                        "plots/.</p>\n", names[i]);
    }
    for (unsigned t = 0; t < s->ntraces && rc == 0; t++)
        page_fastest(&h, s, t, time);
    sb_printf(&h, "</body></html>\n");
    snprintf(path, sizeof path, "%s/sweep.html", dir);
    if (rc == 0)
        rc = write_text(path, h.s, h.n, d);
    free(h.s);
    free(tv);
    free(time);
    return rc;
}
