/* plot.c: the folder `strata run --out` and `strata plot` write from a
 * report (plot.h): the report read (plot_load.c), the gnuplot data and
 * scripts (plot_gnuplot.c) rendered when gnuplot is there
 * (plot_gnuplot_run.c), and report.html (plot_html.c).
 *
 * The same numbers go two ways: gnuplot .dat/.gp pairs (rendered to PNG
 * and SVG when gnuplot is installed) and SVG drawn here for report.html,
 * so the page never depends on gnuplot.  Every file is written under a
 * temporary name and renamed; on failure what this call renamed is removed
 * (plot_files.c).
 */
#include "plot.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "jsondoc.h"
#include "plot_files.h"
#include "plot_gnuplot.h"
#include "plot_gnuplot_run.h"
#include "plot_html.h"
#include "plot_load.h"
#include "strbuf.h"

/* ------------------------------------------------------------------ entry */

static int render_doc(const struct jsondoc *docp, const struct report_ctx *run, const char *outdir,
                      struct plot_summary *sum, struct diag *d);

/* The first number in a document that is not finite (1e400 parses as
 * infinity), or NULL.  strata writes only finite numbers. */
static const cJSON *first_nonfinite(const cJSON *j)
{
    if (cJSON_IsNumber(j) && !isfinite(j->valuedouble))
        return j;
    for (const cJSON *c = j ? j->child : NULL; c != NULL; c = c->next) {
        const cJSON *b = first_nonfinite(c);
        if (b != NULL)
            return b;
    }
    return NULL;
}

int plot_render_ex(const char *report_path, const char *outdir, struct plot_summary *sum,
                   struct diag *d)
{
    struct plot_summary local;
    if (strlen(outdir) > 1000)
        return diag_set(d, DIAG_E_IO, outdir, 0, "--out", "path too long");
    if (sum == NULL)
        sum = &local;
    memset(sum, 0, sizeof *sum);
    struct jsondoc doc;
    if (jsondoc_load(report_path, &doc, d) != 0)
        return -1;
    const cJSON *bad = first_nonfinite(doc.root);
    if (bad != NULL) {
        int rc = diag_set(d, DIAG_E_RANGE, doc.name, jsondoc_line(&doc, bad),
                          bad->string ? bad->string : "", "not a finite number");
        jsondoc_free(&doc);
        return rc;
    }
    int rc = render_doc(&doc, NULL, outdir, sum, d);
    jsondoc_free(&doc);
    return rc;
}

int plot_render_tree(const void *report, const char *name, const char *outdir, struct diag *d)
{
    return plot_render_run(report, NULL, name, outdir, d);
}

/* c NULL: the ops come from the tree's "ops" */
int plot_render_run(const void *head, const struct report_ctx *c, const char *name, const char *outdir,
                    struct diag *d)
{
    if (strlen(outdir) > 1000)
        return diag_set(d, DIAG_E_IO, outdir, 0, "--out", "path too long");
    struct jsondoc doc;
    memset(&doc, 0, sizeof doc);
    doc.root = (cJSON *)(uintptr_t)head; /* read only */
    snprintf(doc.name, sizeof doc.name, "%s", name);
    struct plot_summary sum;
    return render_doc(&doc, c, outdir, &sum, d);
}

/* The plots' data and scripts into plots (each that p has the data for),
 * rendered when gnuplot is there; plots/README.txt says how to render
 * them by hand when not all were.  Fills *sum; 0, or -1 with *d. */
static int write_plots(const struct pdata *p, const char *plots, struct pfiles *w,
                       struct plot_summary *sum, struct diag *d)
{
    static const char *const names[3] = {"roofline", "stalls", "bandwidth"};
    int have[3] = {0, 0, 0};
    int rc = 0;
    char path[1200];
    if (p->have_hw) {
        rc = pgp_roofline(p, plots, w, d);
        have[0] = rc == 0;
    }
    if (rc == 0) {
        rc = pgp_stalls(p, plots, w, d);
        have[1] = rc == 0;
    }
    if (rc == 0 && p->ts_dev != NULL) {
        rc = pgp_bandwidth(p, plots, w, d);
        have[2] = rc == 0;
    }
    if (rc != 0)
        return rc;
    sum->plots = have[0] + have[1] + have[2];
    sum->gnuplot_found = gprun_find(sum->gnuplot, sizeof sum->gnuplot);
    struct sb readme = {0};
    int ok[3] = {0, 0, 0};
    if (sum->gnuplot_found)
        gprun_scripts(sum->gnuplot, plots, names, have, 3, ok);
    for (int k = 0; k < 3; k++) {
        if (!have[k])
            continue;
        if (ok[k])
            sum->rendered++;
        else if (sum->gnuplot_found)
            sb_printf(&readme, "gnuplot failed on %s.gp\n", names[k]);
    }
    if (!sum->gnuplot_found || sum->rendered < sum->plots) {
        sb_printf(&readme, "To render the plots: apt-get install gnuplot-nox; cd plots; "
                           "for f in *.gp; do gnuplot \"$f\"; done\n");
        snprintf(path, sizeof path, "%s/README.txt", plots);
        rc = pfiles_put(w, path, readme.s, readme.n, d);
    }
    free(readme.s);
    /* rendered images are files of this call too */
    for (int k = 0; k < 3 && sum->rendered; k++)
        for (int e = 0; e < 2 && have[k]; e++) {
            snprintf(path, sizeof path, "%s/%s.%s", plots, names[k], e ? "svg" : "png");
            if (access(path, F_OK) == 0)
                pfiles_note(w, path);
        }
    return rc;
}

static int render_doc(const struct jsondoc *docp, const struct report_ctx *run, const char *outdir,
                      struct plot_summary *sum, struct diag *d)
{
    const struct jsondoc doc = *docp;
    struct pdata p;
    struct pfiles w;
    memset(&w, 0, sizeof w);
    int rc = pload_report(&doc, run, &p, d);
    char plots[1100], path[1200];
    snprintf(plots, sizeof plots, "%s/plots", outdir);
    if (rc == 0) {
        snprintf(w.outdir, sizeof w.outdir, "%s", outdir);
        rc = pfiles_ensure_dir(outdir, &w.made_outdir, d);
    }
    if (rc == 0) {
        snprintf(w.plots_dir, sizeof w.plots_dir, "%s", plots);
        rc = pfiles_ensure_dir(plots, &w.made_plots_dir, d);
    }
    if (rc == 0)
        rc = write_plots(&p, plots, &w, sum, d);
    if (rc == 0) {
        struct sb h = {0};
        phtml_page(&h, &p);
        snprintf(path, sizeof path, "%s/report.html", outdir);
        rc = pfiles_put(&w, path, h.s, h.n, d);
        free(h.s);
    }
    if (rc != 0)
        pfiles_undo(&w);
    pload_free(&p);
    return rc;
}
