/* plot.h: plots and a self-contained HTML page from a saved run report.
 *
 * plot_render_ex() reads a report written by `strata run --json` (fields:
 * docs/report.md) and writes, into outdir:
 *
 *   report.html            one page, no network and no other files needed:
 *                          summary, the chip's derived figures, verdicts,
 *                          the three plots as inline SVG, the op table
 *   plots/roofline.dat/.gp hierarchical roofline (one roof per memory level)
 *   plots/stalls.dat/.gp   where each of the slowest ops spent its time
 *   plots/bandwidth.dat/.gp bytes/s per level over time
 *   plots/X.png, X.svg     rendered by gnuplot when it is on PATH
 *   plots/README.txt       how to render by hand, when it is not
 *
 * Plots whose input is missing from the report (hardware_derived,
 * timeseries) are left out, and the page says why.  plots/README.md in the
 * source tree describes each script.
 *
 * gnuplot: looked up on PATH as "gnuplot", then "gnuplot-nox".  The
 * environment variable STRATA_GNUPLOT overrides the lookup: a path to the
 * binary, or "" / "none" to never run it.  A gnuplot that fails is not an
 * error (the data and scripts are still right); plots/README.txt then says
 * which script failed.  Each run is limited to 60 s (timeout(1)).
 *
 * All or nothing: every file goes to a temporary name first and is renamed
 * into place at the end; on failure the files this call already renamed
 * are removed again (and outdir/plots if this call created them), and the
 * function returns -1 with *d filled.  Nothing prints or exits.
 *
 * Errors: the report cannot be read or is not JSON (DIAG_E_IO /
 * DIAG_E_PARSE); not a JSON object (DIAG_E_PARSE); no "strata_report"
 * (DIAG_E_UNSUPPORTED, "not a strata report"); strata_report != 1
 * (DIAG_E_UNSUPPORTED, "incompatible report version"); a field of the
 * wrong type (DIAG_E_TYPE, with its line); outdir that cannot be created
 * (its parent must exist) or written (DIAG_E_IO naming the path).
 */
#ifndef STRATA_PLOT_H
#define STRATA_PLOT_H

#include "diag.h"

/* What plot_render_ex did besides writing the files. */
struct plot_summary {
    int plots;          /* .dat/.gp pairs written (0..3) */
    int rendered;       /* of those, rendered to PNG and SVG by gnuplot */
    int gnuplot_found;  /* 1 if a gnuplot binary was found and allowed */
    char gnuplot[512];  /* the binary used ("" if none) */
};

/* Reads the report at report_path; fills *sum (may be NULL). */
int plot_render_ex(const char *report_path, const char *outdir, struct plot_summary *sum,
                   struct diag *d);
/* Same from a report already in memory (the cJSON tree report_json_tree()
 * builds; name is used in messages). */
int plot_render_tree(const void *report, const char *name, const char *outdir, struct diag *d);
/* Same from report_json_head()'s tree (no ops) and the run's ops in c:
 * what `run --out` does, with no tree of a million ops in memory. */
struct report_ctx;
int plot_render_run(const void *head, const struct report_ctx *c, const char *name, const char *outdir,
                    struct diag *d);

#endif
