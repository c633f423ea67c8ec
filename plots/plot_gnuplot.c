/* plot_gnuplot.c: the gnuplot .dat/.gp pair of each plot (plot_gnuplot.h). */
#include "plot_gnuplot.h"

#include <ctype.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "numfmt.h"
#include "plot_style.h"
#include "strbuf.h"

/* a gnuplot data string: double quotes, no quotes, backquotes, backslashes
 * or newlines inside */
static void sb_gpstr(struct sb *b, const char *s)
{
    sb_putn(b, "\"", 1);
    for (;;) {
        size_t run = strcspn(s, "\"\n\r\\`");
        sb_putn(b, s, run);
        s += run;
        if (*s == '\0')
            break;
        sb_putn(b, "_", 1);
        s++;
    }
    sb_putn(b, "\"", 1);
}

/* A report string (a level or device name) as a bare word for a gnuplot
 * script or data file: anything but letters, digits and _.+- becomes _, so
 * it cannot end a quoted string, a comment line or start a backquoted
 * shell command.  out must hold n bytes. */
static const char *gp_word(char *out, size_t n, const char *s)
{
    size_t i = 0;
    for (; s[i] != '\0' && i + 1 < n; i++) {
        unsigned char c = (unsigned char)s[i];
        out[i] = (isalnum(c) || strchr("_.+-", c) != NULL) ? (char)c : '_';
    }
    out[i] = '\0';
    return out;
}

static void gp_head(struct sb *g, const struct pdata *p, const char *name, const char *title)
{
    char t[700], w[160], hw[160];
    gp_word(w, sizeof w, pload_workload(p));
    gp_word(hw, sizeof hw, p->hw_name);
    snprintf(t, sizeof t, "%s: %s on %s", title, w, hw);
    sb_printf(g, "# %s.gp: written by strata; render with: gnuplot %s.gp\n", name, name);
    sb_printf(g, "set title \"%s\"\nset key outside right\nset grid\n", t);
}

static void gp_outputs(struct sb *g, const char *name, const char *plotcmd)
{
    /* noenhanced: op and level names keep their '_' (enhanced text makes it a subscript) */
    sb_printf(g, "set terminal pngcairo noenhanced size 1100,650\nset output \"%s.png\"\n%s\n", name,
              plotcmd);
    sb_printf(g, "set terminal svg noenhanced size 1100,650\nset output \"%s.svg\"\n%s\n", name,
              plotcmd);
}

/* Writes <dir>/<name>.dat and <dir>/<name>.gp and frees both buffers. */
static int put_plot(struct pfiles *w, const char *dir, const char *name, struct sb *dat,
                    struct sb *gp, struct diag *d)
{
    char path[1200];
    snprintf(path, sizeof path, "%s/%s.dat", dir, name);
    int rc = pfiles_put(w, path, dat->s, dat->n, d);
    snprintf(path, sizeof path, "%s/%s.gp", dir, name);
    if (rc == 0)
        rc = pfiles_put(w, path, gp->s, gp->n, d);
    free(dat->s);
    free(gp->s);
    return rc;
}

/* ------------------------------------------------------------ roofline */

/* The roofline's data and plot command as they grow: one data block (and
 * one plot clause) per roof, per level's ops, and for the labels. */
struct roofgp {
    struct sb dat, cmd;
    int idx;                            /* the next data block */
    int kinds_used[PSTYLE_NKINDS];
    char lw[PLOAD_NLVL][HW_LEVEL_NAME]; /* the levels as words */
};

/* Compute roofs (one per pipe and dtype the run used), then a memory roof
 * per level up to the highest compute roof.  How many compute roofs. */
static int roof_lines(const struct pdata *p, struct roofgp *g)
{
    struct pload_roof roofs[12];
    int nr = pload_roofs(p, roofs, 12);
    double top = 0;
    for (int k = 0; k < nr; k++)
        top = roofs[k].peak > top ? roofs[k].peak : top;
    int first = 1;
    char si[32];
    sb_printf(&g->cmd, "plot ");
    for (int k = 0; k < nr; k++) {
        sb_printf(&g->dat, "# compute roof %s\n%.6g %.6g\n%.6g %.6g\n\n\n", roofs[k].label, 1e-2,
                  roofs[k].peak, 1e5, roofs[k].peak);
        numfmt_si(si, sizeof si, roofs[k].peak, "FLOP/s");
        sb_printf(&g->cmd, "%s\"roofline.dat\" index %d using 1:2 with lines lw 2 dt %d lc rgb \"#333333\" "
                        "title \"%s %s\"", first ? "" : ", ", g->idx++, k + 1, roofs[k].label, si);
        first = 0;
    }
    for (unsigned l = 0; l < p->nlvl; l++) {
        if (p->bw[l] <= 0 || top <= 0)
            continue;
        sb_printf(&g->dat, "# memory roof %s\n%.6g %.6g\n%.6g %.6g\n\n\n", g->lw[l], 1e-2,
                  p->bw[l] * 1e-2, top / p->bw[l], top);
        numfmt_si(si, sizeof si, p->bw[l], "B/s");
        sb_printf(&g->cmd, ", \"roofline.dat\" index %d using 1:2 with lines lw 2 lc rgb \"%s\" "
                        "title \"%s %s\"", g->idx++, pstyle_level_colors[l], g->lw[l], si);
    }
    return nr;
}

/* ops: one block per level that has any (no empty legend entries),
 * coloured by kind (linetype = kind), one point type per level */
static void roof_ops(const struct pdata *p, struct roofgp *g)
{
    uint32_t m = p->nops < PSTYLE_MAX_ROOF_OPS ? p->nops : PSTYLE_MAX_ROOF_OPS;
    int pt = 5;
    for (unsigned l = 0; l < p->nlvl; l++) {
        if (p->bw[l] <= 0)
            continue;
        int any = 0;
        for (uint32_t k = 0; k < m; k++) {
            struct pop ob;
            const struct pop *o = pload_op(p, p->order[k], &ob);
            if (o->flops <= 0 || o->bytes[l] <= 0 || o->time <= 0)
                continue;
            if (!any)
                sb_printf(&g->dat, "# ops at %s\n", g->lw[l]);
            any = 1;
            char ia[32], pa[32];
            numfmt_sig(ia, sizeof ia, o->flops / o->bytes[l], 6);
            numfmt_sig(pa, sizeof pa, o->flops / o->time, 6);
            int ki = pstyle_kind_index(o->kind);
            g->kinds_used[ki] = 1;
            sb_printf(&g->dat, "%s %s %d ", ia, pa, ki + 1);
            sb_gpstr(&g->dat, o->name);
            sb_putn(&g->dat, "\n", 1);
        }
        if (!any)
            continue;
        sb_printf(&g->dat, "\n\n");
        sb_printf(&g->cmd, ", \"roofline.dat\" index %d using 1:2:3 with points pt %d ps 0.9 lc variable "
                        "title \"ops at %s\"", g->idx++, pt, g->lw[l]);
        pt = pt == 5 ? 7 : pt == 7 ? 9 : pt == 9 ? 11 : pt == 11 ? 13 : 5;
    }
}

/* the five slowest ops, labelled where they sit against DRAM (or the
 * outermost level they touch) */
static void roof_labels(const struct pdata *p, struct roofgp *g)
{
    int labelled = 0;
    for (uint32_t k = 0; k < p->nops && labelled < 5; k++) {
        struct pop ob;
        const struct pop *o = pload_op(p, p->order[k], &ob);
        int lv = p->lvl_dram;
        if (lv < 0 || o->bytes[lv] <= 0)
            for (int l = (int)p->nlvl - 1; l >= 0; l--)
                if (o->bytes[l] > 0 && p->bw[l] > 0) {
                    lv = l;
                    break;
                }
        if (lv < 0 || o->flops <= 0 || o->time <= 0 || o->bytes[lv] <= 0)
            continue;
        if (labelled == 0)
            sb_printf(&g->dat, "# the five slowest ops (each label a line above the one before)\n");
        /* stacked: label k sits 1.7^k above its point, so labels of nearby points do not
         * overprint (y is logarithmic: the same step at every height) */
        sb_printf(&g->dat, "%.6g %.6g ", o->flops / o->bytes[lv], o->flops / o->time * pow(1.7, labelled));
        sb_gpstr(&g->dat, o->name);
        sb_putn(&g->dat, "\n", 1);
        labelled++;
    }
    if (labelled > 0) {
        sb_printf(&g->dat, "\n\n");
        sb_printf(&g->cmd, ", \"roofline.dat\" index %d using 1:2:3 with labels offset 0.8,0.6 left "
                        "font \",9\" notitle", g->idx++);
    }
}

int pgp_roofline(const struct pdata *p, const char *dir, struct pfiles *w, struct diag *d)
{
    struct roofgp g;
    memset(&g, 0, sizeof g);
    struct sb gp = {0};
    for (unsigned l = 0; l < p->nlvl; l++)
        gp_word(g.lw[l], sizeof g.lw[l], p->lvl[l]);
    sb_printf(&g.dat, "# roofline: compute roofs (one per pipe and dtype the run used), memory roofs\n"
                    "# (one per level), then the ops at each level: intensity perf kind_index name\n");
    int nr = roof_lines(p, &g);
    roof_ops(p, &g);
    roof_labels(p, &g);
    for (int k = 0; k < PSTYLE_NKINDS; k++)
        if (g.kinds_used[k])
            sb_printf(&g.cmd, ", NaN with points pt 7 ps 1.2 lc %d title \"%s\"", k + 1,
                      pstyle_kind_names[k]);
    char title[200];
    snprintf(title, sizeof title, "roofline (%s peak%s)", p->peak_dtype, nr > 1 ? " and the others used" : "");
    gp_head(&gp, p, "roofline", title);
    for (int k = 0; k < PSTYLE_NKINDS; k++)
        sb_printf(&gp, "set linetype %d lc rgb \"%s\"\n", k + 1, pstyle_kind_colors[k]);
    sb_printf(&gp, "set logscale xy\nset xlabel \"arithmetic intensity (FLOP/byte)\"\n"
                   "set ylabel \"FLOP/s\"\nset xrange [0.01:100000]\n"
                   "set format y \"%%.0s %%cFLOP/s\"\nset format x \"%%g\"\n");
    gp_outputs(&gp, "roofline", g.cmd.s);
    free(g.cmd.s);
    return put_plot(w, dir, "roofline", &g.dat, &gp, d);
}

/* ------------------------------------------------------------ stalls, bandwidth */

int pgp_stalls(const struct pdata *p, const char *dir, struct pfiles *w, struct diag *d)
{
    struct sb dat = {0}, gp = {0};
    sb_printf(&dat, "# where the slowest ops spent their time, microseconds; ops whose names differ\n# only in numbers are summed (name with # for the numbers, x count)\n# name");
    char cw[PLOAD_NCATMAX][HW_LEVEL_NAME];
    for (int c = 0; c < PLOAD_NCAT(p); c++)
        sb_printf(&dat, " %s", gp_word(cw[c], sizeof cw[c], pload_cat_name(p, c)));
    sb_printf(&dat, "\n");
    uint32_t top = p->ngroups < PSTYLE_TOP_STALLS ? p->ngroups : PSTYLE_TOP_STALLS;
    double other[PLOAD_NCATMAX] = {0};
    uint32_t nother = 0;
    for (uint32_t k = 0; k < p->ngroups; k++) {
        const struct pgroup *g = &p->groups[k];
        if (k < top) {
            struct sb label = {0};
            if (g->count > 1)
                sb_printf(&label, "%s x%u", g->name, g->count);
            else
                sb_printf(&label, "%s", g->name);
            sb_gpstr(&dat, label.s);
            free(label.s);
            for (int c = 0; c < PLOAD_NCAT(p); c++)
                sb_printf(&dat, " %.6g", g->cat[c] * 1e6);
            sb_printf(&dat, "\n");
        } else {
            nother += g->count;
            for (int c = 0; c < PLOAD_NCAT(p); c++)
                other[c] += g->cat[c];
        }
    }
    if (p->ngroups > top) {
        sb_printf(&dat, "\"other (%u ops)\"", nother);
        for (int c = 0; c < PLOAD_NCAT(p); c++)
            sb_printf(&dat, " %.6g", other[c] * 1e6);
        sb_printf(&dat, "\n");
    }
    gp_head(&gp, p, "stalls", "where the time went, slowest ops");
    sb_printf(&gp, "set style data histograms\nset style histogram rowstacked\nset style fill solid 0.9\n"
                   "set boxwidth 0.8\nset xtics rotate by -45\nset ylabel \"microseconds\"\n");
    /* every category stays a column of the data; the legend and the bars
     * show the ones with time (no empty entries) */
    struct sb cmd = {0};
    sb_printf(&cmd, "plot \"stalls.dat\" using 2:xtic(1) lc rgb \"%s\" title \"%s\"",
              pstyle_cat_colors[0], cw[0]);
    for (int c = 1; c < PLOAD_NCAT(p); c++) {
        double any = other[c];
        for (uint32_t k = 0; k < top; k++)
            any += p->groups[k].cat[c];
        if (any > 0)
            sb_printf(&cmd, ", \"\" using %d lc rgb \"%s\" title \"%s\"", c + 2, pstyle_cat_colors[c],
                      cw[c]);
    }
    gp_outputs(&gp, "stalls", cmd.s);
    free(cmd.s);
    return put_plot(w, dir, "stalls", &dat, &gp, d);
}

int pgp_bandwidth(const struct pdata *p, const char *dir, struct pfiles *w, struct diag *d)
{
    struct sb dat = {0}, gp = {0};
    int n = 0;
    for (unsigned l = 0; l < p->nlvl; l++)
        if (pload_ts_len(p, l) > n)
            n = pload_ts_len(p, l);
    char devw[128], lw[PLOAD_NLVL][HW_LEVEL_NAME];
    sb_printf(&dat, "# %s: bandwidth per level, GB/s, bucket %.6g s\n# time_us",
              gp_word(devw, sizeof devw, p->ts_dev_name), p->bucket_s);
    for (unsigned l = 0; l < p->nlvl; l++)
        sb_printf(&dat, " %s", gp_word(lw[l], sizeof lw[l], p->lvl[l]));
    sb_printf(&dat, "\n");
    /* cJSON arrays are lists: walk them once */
    const cJSON *cur[PLOAD_NLVL];
    for (unsigned l = 0; l < p->nlvl; l++) {
        const cJSON *a = cJSON_GetObjectItemCaseSensitive(p->ts_dev, p->lvl[l]);
        cur[l] = cJSON_IsArray(a) ? a->child : NULL;
    }
    for (int i = 0; i < n; i++) {
        char tb[32];
        numfmt_fix(tb, sizeof tb, (i + 0.5) * p->bucket_s * 1e6, 4);
        sb_putn(&dat, tb, strlen(tb));
        for (unsigned l = 0; l < p->nlvl; l++) {
            double v = cur[l] ? pload_num(cur[l]) : 0.0;
            if (cur[l])
                cur[l] = cur[l]->next;
            char vb[32];
            vb[0] = ' ';
            numfmt_fix(vb + 1, sizeof vb - 1, v * 1e-9, 3);
            sb_putn(&dat, vb, strlen(vb));
        }
        sb_putn(&dat, "\n", 1);
    }
    gp_head(&gp, p, "bandwidth", "bandwidth per memory level over time");
    sb_printf(&gp, "set xlabel \"time (us)\"\nset ylabel \"GB/s\"\n");
    struct sb cmd = {0};
    sb_printf(&cmd, "plot ");
    for (unsigned l = 0; l < p->nlvl; l++)
        sb_printf(&cmd, "%s\"bandwidth.dat\" using 1:%u with steps lw 2 lc rgb \"%s\" title \"%s\"",
                  l ? ", " : "", l + 2, pstyle_level_colors[l], lw[l]);
    gp_outputs(&gp, "bandwidth", cmd.s);
    free(cmd.s);
    return put_plot(w, dir, "bandwidth", &dat, &gp, d);
}
