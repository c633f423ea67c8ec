/* cli.c: `strata run` and `strata info`, plus option parsing.  The other
 * verbs live next to what they drive (llm.c, validate.c). */
#include "cli.h"

#include <errno.h>
#include <math.h>
#include <pthread.h>
#include <sys/stat.h>
#include <unistd.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cfg.h"
#include "diag.h"
#include "info.h"
#include "plot.h"
#include "report.h"
#include "run.h"
#include "timeline.h"
#include "trace.h"

void cli_opts_init(struct cli_opts *o, int argc, char **argv)
{
    memset(o, 0, sizeof *o);
    o->argc = argc < 64 ? argc : 64;
    o->argv = argv;
}

const char *cli_get(struct cli_opts *o, const char *name)
{
    for (int i = 1; i + 1 < o->argc; i++) {
        if (!o->used[i] && strcmp(o->argv[i], name) == 0) {
            o->used[i] = o->used[i + 1] = 1;
            return o->argv[i + 1];
        }
    }
    return NULL;
}

int cli_flag(struct cli_opts *o, const char *name)
{
    for (int i = 1; i < o->argc; i++) {
        if (!o->used[i] && strcmp(o->argv[i], name) == 0) {
            o->used[i] = 1;
            return 1;
        }
    }
    return 0;
}

int cli_check(struct cli_opts *o, const char *verb)
{
    for (int i = 1; i < o->argc; i++) {
        if (!o->used[i]) {
            fprintf(stderr, "strata %s: unexpected argument '%s' (see strata --help)\n", verb,
                    o->argv[i]);
            return 2;
        }
    }
    return 0;
}

static int fail(const struct diag *d)
{
    diag_print(d, stderr);
    return 1;
}

int cli_make_dir(const char *dir, const char *opt, struct diag *d)
{
    struct stat st;
    if (stat(dir, &st) == 0) {
        if (S_ISDIR(st.st_mode))
            return 0;
        return diag_set(d, DIAG_E_IO, dir, 0, opt, "exists and is not a folder");
    }
    if (mkdir(dir, 0755) != 0)
        return diag_set(d, DIAG_E_IO, dir, 0, opt, "cannot create the output folder: %s",
                        strerror(errno));
    return 0;
}

/* Re-simulate with one resource doubled (or launch overhead removed), so
 * the report's "would cut at most" figures are simulated, not guessed.
 * Each what-if is its own engine instance, so they run on two threads; the
 * results land by index, so the report does not depend on which finishes
 * first. */
enum { NWHATIF = 5 };

struct whatif_job {
    const struct hw_config *cfg;
    const struct trace *t;
    unsigned first, step;      /* runs what-ifs first, first+step, ... */
    double time_s[NWHATIF];    /* < 0: that run failed */
};

static void *whatif_worker(void *arg)
{
    struct whatif_job *j = arg;
    for (unsigned i = j->first; i < NWHATIF; i += j->step) {
        struct hw_config c = *j->cfg;
        if (i == 0)
            c.level[c.lv_dram].bw_bytes_per_s *= 2;
        else if (i == 1)
            c.level[c.lv_cache[0]].bw_bytes_per_s *= 2;
        else if (i == 4)
            c.launch_overhead_ps = 0;
        else
            for (unsigned dt = 0; dt < DT_COUNT; dt++) {
                if (i == 2)
                    c.matrix_flops_per_cycle[dt] *= 2;
                else
                    c.vector_flops_per_cycle[dt] *= 2;
            }
        struct diag d;
        memset(&d, 0, sizeof d);
        struct run_result r;
        j->time_s[i] = -1;
        if (run_trace(&c, j->t, &r, &d) != 0)
            continue;
        j->time_s[i] = (double)r.total_ps * 1e-12;
        run_result_free(&r);
    }
    return NULL;
}

static unsigned run_whatifs(const struct hw_config *cfg, const struct trace *t, struct whatif *w)
{
    static const struct { const char *name, *desc; } k[NWHATIF] = {
        {"dram_bw_x2", "DRAM bandwidth x2"},
        {"l2_bw_x2", "L2 bandwidth x2"},
        {"matrix_x2", "matrix pipe FLOP/s x2"},
        {"vector_x2", "vector pipe FLOP/s x2"},
        {"no_launch", "zero kernel launch overhead"},
    };
    struct whatif_job j[2] = {{cfg, t, 0, 2, {0}}, {cfg, t, 1, 2, {0}}};
    pthread_t th;
    int threaded = pthread_create(&th, NULL, whatif_worker, &j[1]) == 0;
    if (!threaded)
        j[0].step = 1; /* no second thread: this one runs them all */
    whatif_worker(&j[0]);
    if (threaded)
        pthread_join(th, NULL);
    unsigned n = 0;
    for (unsigned i = 0; i < NWHATIF; i++) {
        double ts = j[threaded ? i % 2 : 0].time_s[i];
        if (ts < 0)
            continue;
        snprintf(w[n].name, sizeof w[n].name, "%s", k[i].name);
        snprintf(w[n].description, sizeof w[n].description, "%s", k[i].desc);
        w[n].total_time_s = ts;
        n++;
    }
    return n;
}

int cli_run(int argc, char **argv)
{
    struct cli_opts o;
    cli_opts_init(&o, argc, argv);
    const char *hw = cli_get(&o, "--hw"), *tr = cli_get(&o, "--trace");
    const char *js = cli_get(&o, "--json"), *csv = cli_get(&o, "--csv");
    const char *top = cli_get(&o, "--top"), *outdir = cli_get(&o, "--out");
    const char *gran = cli_get(&o, "--timeline-granularity-us");
    int quiet = cli_flag(&o, "--quiet");
    int no_whatif = cli_flag(&o, "--no-whatif");
    int rc = cli_check(&o, "run");
    if (rc)
        return rc;
    if (hw == NULL || tr == NULL) {
        fprintf(stderr, "strata run: --hw and --trace are required\n");
        return 2;
    }
    unsigned ntop = 15;
    if (top != NULL) {
        char *end;
        long v = strtol(top, &end, 10);
        if (end == top || *end != '\0' || v < 0 || v > 1000000) {
            fprintf(stderr, "strata run: --top: expected a count, got '%s'\n", top);
            return 2;
        }
        ntop = (unsigned)v;
    }
    double gran_us = 10.0;
    if (gran != NULL) {
        char *end;
        gran_us = strtod(gran, &end);
        if (end == gran || *end != '\0' || !(gran_us >= 0) || gran_us > 1e9 ||
            strpbrk(gran, "xXpP") != NULL /* no hexadecimal */) {
            fprintf(stderr, "strata run: --timeline-granularity-us: expected microseconds, got '%s'\n",
                    gran);
            return 2;
        }
    }
    /* two reports into one file would keep only the last */
    if (js != NULL && csv != NULL && strcmp(js, csv) == 0) {
        fprintf(stderr, "strata run: --json and --csv name the same file '%s'\n", js);
        return 2;
    }
    if (outdir != NULL) {
        static const char *const mine[] = {"report.json", "ops.csv", "timeline.json", "report.html"};
        const char *opt[2] = {js, csv};
        for (int i = 0; i < 2; i++)
            for (int k = 0; k < 4 && opt[i] != NULL; k++) {
                char p[1100];
                snprintf(p, sizeof p, "%s/%s", outdir, mine[k]);
                if (strcmp(p, opt[i]) == 0) {
                    fprintf(stderr, "strata run: %s '%s' is also a file --out writes\n",
                            i ? "--csv" : "--json", opt[i]);
                    return 2;
                }
            }
    }
    struct diag d;
    memset(&d, 0, sizeof d);
    struct hw_config cfg;
    if (cfg_load(hw, &cfg, &d) != 0)
        return fail(&d);
    struct trace t;
    if (trace_load(tr, &t, &d) != 0)
        return fail(&d);
    struct stat ost;
    int made_outdir = outdir != NULL && stat(outdir, &ost) != 0; /* ours to remove on failure */
    if (outdir != NULL && cli_make_dir(outdir, "--out", &d) != 0) {
        trace_free(&t);
        return fail(&d);
    }
    struct timeline tl;
    struct run_opts ro = {NULL};
    if (outdir != NULL) {
        tl_init(&tl, t.ndevices, (uint64_t)(gran_us * 1e6));
        ro.tl = &tl;
    }
    struct run_result r;
    if (run_trace_opts(&cfg, &t, &ro, &r, &d) != 0) {
        if (ro.tl)
            tl_free(&tl);
        trace_free(&t);
        if (made_outdir)
            rmdir(outdir); /* nothing is in it yet */
        return fail(&d);
    }
    if (r.spill > 0)
        fprintf(stderr,
                "strata run: warning: the trace's weights and KV cache (%.3g GB) exceed %s's %.3g GB; "
                "the %.3g GB that do not fit are streamed from host memory over PCIe before the GEMMs "
                "that need them (see strata fit)\n",
                r.working_set / 1e9, cfg.name, (double)cfg_dram(&cfg)->capacity_bytes / 1e9, r.spill / 1e9);
    struct whatif w[8];
    struct report_ctx c = {&cfg, &t, &r, t.tokens, ntop, ro.tl, w, 0};
    if (outdir != NULL && !no_whatif)
        c.nwhatif = run_whatifs(&cfg, &t, w);
    /* every file or none: remember what was written, remove it on failure */
    void *tree = NULL;
    char written[6][1100];
    unsigned nw = 0;
    char path[1100];
    if (js != NULL) {
        if (report_json(&c, js, &d) != 0)
            rc = 1;
        else
            snprintf(written[nw++], sizeof written[0], "%s", js);
    }
    if (rc == 0 && csv != NULL) {
        if (report_csv(&c, csv, &d) != 0)
            rc = 1;
        else
            snprintf(written[nw++], sizeof written[0], "%s", csv);
    }
    if (rc == 0 && outdir != NULL) {
        snprintf(path, sizeof path, "%s/report.json", outdir);
        tree = report_json_tree(&c);
        if (report_tree_write(tree, path, &d) != 0)
            rc = 1;
        else
            snprintf(written[nw++], sizeof written[0], "%s", path);
        snprintf(path, sizeof path, "%s/ops.csv", outdir);
        if (rc == 0 && report_csv(&c, path, &d) != 0)
            rc = 1;
        else if (rc == 0)
            snprintf(written[nw++], sizeof written[0], "%s", path);
        snprintf(path, sizeof path, "%s/timeline.json", outdir);
        if (rc == 0 && tl_write(&tl, &cfg, &t, &r, path, &d) != 0)
            rc = 1;
        else if (rc == 0)
            snprintf(written[nw++], sizeof written[0], "%s", path);
        snprintf(path, sizeof path, "%s/report.json", outdir);
        if (rc == 0 && plot_render_tree(tree, path, outdir, &d) != 0)
            rc = 1;
        report_tree_free(tree);
    }
    if (rc != 0) {
        diag_print(&d, stderr);
        for (unsigned i = 0; i < nw; i++)
            remove(written[i]);
        if (made_outdir)
            rmdir(outdir); /* only if empty: the plot step removes its own */
    } else if (!quiet) {
        report_text(&c, stdout);
        if (outdir != NULL)
            printf("\n  wrote %s/: report.json, ops.csv, timeline.json (open in ui.perfetto.dev)%s\n",
                   outdir, ", report.html, plots/");
    }
    if (ro.tl)
        tl_free(&tl);
    run_result_free(&r);
    trace_free(&t);
    return rc;
}

int cli_info(int argc, char **argv)
{
    struct cli_opts o;
    cli_opts_init(&o, argc, argv);
    const char *hw = cli_get(&o, "--hw"), *js = cli_get(&o, "--json");
    int rc = cli_check(&o, "info");
    if (rc)
        return rc;
    if (hw == NULL) {
        fprintf(stderr, "strata info: --hw is required\n");
        return 2;
    }
    struct diag d;
    memset(&d, 0, sizeof d);
    struct hw_config cfg;
    if (cfg_load(hw, &cfg, &d) != 0)
        return fail(&d);
    struct info_out inf;
    info_derive(&cfg, &inf);
    info_print(&cfg, &inf, stdout);
    if (js != NULL && info_json(&cfg, &inf, js, &d) != 0)
        return fail(&d);
    return 0;
}
