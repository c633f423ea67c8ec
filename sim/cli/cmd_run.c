/* cmd_run.c: `strata run`: load, simulate, write the reports (and with --out
 * the what-ifs, the timeline and the plots). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <sys/stat.h>
#include <unistd.h>

#include "afile.h"
#include "cfg.h"
#include "cli.h"
#include "diag.h"
#include "membudget.h"
#include "numfmt.h"
#include "plot.h"
#include "report.h"
#include "run.h"
#include "system.h"
#include "timeline.h"
#include "trace.h"
#include "whatif.h"

const char cli_run_usage[] =
    "  strata run      --hw CONFIG.yaml --trace TRACE.json [--json OUT.json] [--csv OUT.csv]\n"
    "                  [--out DIR [--timeline-granularity-us G] [--no-whatif]] [--top N] [--quiet]\n"
    "                  [--max-events N] [--max-memory SIZE] [--sustained]\n"
    "                  " CLI_SET_USAGE "\n";

/* One writer per --out folder at a time: a POSIX lock on DIR/.strata-lock,
 * taken before the run and let go (the file removed) at the end.  A second
 * `run --out DIR` meanwhile stops at once and writes nothing (two writers
 * once replaced and then deleted each other's files). */
static int outdir_lock(const char *dir, char *lock, size_t n, int *fd, struct diag *d)
{
    snprintf(lock, n, "%s/.strata-lock", dir);
    *fd = open(lock, O_RDWR | O_CREAT, 0644);
    if (*fd < 0)
        return diag_set(d, DIAG_E_IO, dir, 0, "--out", "cannot create its lock file: %s",
                        strerror(errno));
    struct flock fl;
    memset(&fl, 0, sizeof fl);
    fl.l_type = F_WRLCK;
    fl.l_whence = SEEK_SET;
    if (fcntl(*fd, F_SETLK, &fl) != 0) {
        close(*fd);
        *fd = -1;
        return diag_set(d, DIAG_E_IO, dir, 0, "--out",
                        "another strata run is writing this folder now; nothing was written");
    }
    return 0;
}

static void outdir_unlock(const char *lock, int fd)
{
    if (fd < 0)
        return;
    unlink(lock);
    close(fd);
}

/* timeline.json and ops.csv, written on their own thread while the main
 * one writes report.json (the writers read the run only) */
struct tl_job {
    struct timeline *tl;
    const struct report_ctx *c;
    char path[1100], csv[1100];
    struct diag d;
    int rc;
};

static void *tl_thread(void *arg)
{
    struct tl_job *j = arg;
    const struct report_ctx *c = j->c;
    j->rc = tl_write(j->tl, c->cfg, c->t, c->r, j->path, &j->d);
    if (j->rc == 0)
        j->rc = report_csv(c, j->csv, &j->d);
    return NULL;
}

/* The outputs a run replaces: before each is written, its old version (if
 * any) gets a second name, so that a run that fails later puts every old
 * file back instead of leaving some new and others deleted. */
struct kept {
    char path[1100];
    int existed;                /* something had this name (a file, a link, a pipe) */
    int has_old;                /* ... a regular file, kept under its second name */
};

static void keep_old(struct kept *k, unsigned *nk, const char *path)
{
    struct kept *e = &k[(*nk)++];
    snprintf(e->path, sizeof e->path, "%s", path);
    char old[1200];
    snprintf(old, sizeof old, "%s.strata-old", path);
    unlink(old);                /* a crashed run's leftover */
    struct stat st;
    e->existed = lstat(path, &st) == 0;
    e->has_old = e->existed && S_ISREG(st.st_mode) && link(path, old) == 0;
}

/* ok: drop the old versions; else put them back (what the run created is
 * removed; a link or pipe that was there is left as it is). */
static void kept_finish(struct kept *k, unsigned nk, int ok)
{
    for (unsigned i = 0; i < nk; i++) {
        char old[1200];
        snprintf(old, sizeof old, "%s.strata-old", k[i].path);
        if (ok && k[i].has_old)
            unlink(old);
        else if (!ok && k[i].has_old)
            rename(old, k[i].path);
        else if (!ok && !k[i].existed)
            remove(k[i].path);
    }
}

/* What a run that stops on its memory budget (membudget_fail, which
 * cannot return) undoes: the old outputs are put back, the lock let go and
 * a folder the run made removed if it is empty. */
struct run_undo {
    struct kept *kept;
    const unsigned *nk;
    const char *lock;
    const int *lock_fd;
    const char *outdir;
    int made_outdir;
};

static void run_undo(void *arg)
{
    const struct run_undo *u = arg;
    kept_finish(u->kept, *u->nk, 0);
    outdir_unlock(u->lock, *u->lock_fd);
    if (u->made_outdir)
        rmdir(u->outdir);
}

int cli_run(int argc, char **argv)
{
    const char *hw = NULL, *tr = NULL, *js = NULL, *csv = NULL, *top = NULL, *outdir = NULL;
    const char *gran = NULL, *maxev = NULL, *maxmem = NULL;
    int quiet = 0, no_whatif = 0, sustained = 0;
    const struct cli_opt opts[] = {
        {"hw", 0, &hw, NULL},        {"trace", 0, &tr, NULL},
        {"json", 0, &js, NULL},      {"csv", 0, &csv, NULL},
        {"top", 0, &top, NULL},      {"out", 0, &outdir, NULL},
        {"timeline-granularity-us", 0, &gran, NULL},
        {"max-events", 0, &maxev, NULL}, {"max-memory", 0, &maxmem, NULL},
        {"quiet", 0, NULL, &quiet},  {"no-whatif", 0, NULL, &no_whatif},
        {"sustained", 0, NULL, &sustained},
        {NULL, 0, NULL, NULL},
    };
    struct cfg_sets sets;
    memset(&sets, 0, sizeof sets);
    {
        int src = cli_take_sets("run", &argc, argv, &sets);
        if (src >= 0)
            return src;
    }
    int rc = cli_parse("run", cli_run_usage, opts, argc, argv, NULL);
    if (rc >= 0)
        return rc;
    char hw_path[1600];
    if (cli_find("run", "--hw", &hw, 0, hw_path, sizeof hw_path) != 0)
        return 1;
    rc = 0;
    if (hw == NULL || tr == NULL) {
        fprintf(stderr, "strata run: --hw and --trace are required\n");
        return 2;
    }
    unsigned long long max_events = 0;
    if (maxev != NULL) {
        char *end;
        max_events = strtoull(maxev, &end, 10);
        if (maxev[0] < '1' || maxev[0] > '9' || *end != '\0') {
            fprintf(stderr, "strata run: --max-events: expected a count of engine events, got '%s'\n",
                    maxev);
            return 2;
        }
    }
    if (maxmem != NULL) {
        uint64_t b;
        if (membudget_parse(maxmem, &b) != 0) {
            fprintf(stderr, "strata run: --max-memory: expected a size of at least 1MiB (4GiB, 512MiB, "
                            "8GB), got '%s'\n", maxmem);
            return 2;
        }
        membudget_set_bytes(b);
    }
    unsigned ntop = 15;
    if (top != NULL && cli_count("run", "--top", top, 1000000, &ntop) != 0)
        return 2;
    double gran_us = 10.0;
    if (gran != NULL) {
        if (num_parse(gran, &gran_us) != 0 || !(gran_us >= 0) || gran_us > 1e9) {
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
    /* --hw: a system file, or a chip config (one chip per trace device) */
    struct hw_system sys;
    enum hw_kind kind;
    if (hw_load(hw, &sets, &sys, &kind, &d) != 0)
        return cli_fail(&d);
    struct hw_config chip = sys.chip;   /* a chip config: filled by hw_load */
    struct trace t;
    if (trace_load(tr, &t, &d) != 0) {
        if (kind == HW_SYSTEM)
            sys_free(&sys);
        return cli_fail(&d);
    }
    if (kind == HW_CHIP)
        sys_from_chip(&chip, t.ndevices, (const char (*)[32])t.devices, &sys);
    const struct hw_config cfg = sys.chip;
    struct kept kept[8];
    unsigned nk = 0;
    struct stat ost;
    int made_outdir = outdir != NULL && stat(outdir, &ost) != 0; /* ours to remove on failure */
    char lock[1100] = "";
    int lock_fd = -1;
    if (outdir != NULL && (afile_make_dir(outdir, "--out", &d) != 0 ||
                           outdir_lock(outdir, lock, sizeof lock, &lock_fd, &d) != 0)) {
        trace_free(&t);
        sys_free(&sys);
        return cli_fail(&d);
    }
    struct run_undo undo = {kept, &nk, lock, &lock_fd, outdir, made_outdir};
    membudget_cleanup_push(run_undo, &undo);
    struct timeline tl;
    struct run_opts ro = {.tl = NULL, .max_events = max_events, .sustained = sustained};
    if (outdir != NULL) {
        tl_init(&tl, t.ndevices, TL_SERIES_PER_DEV, (uint64_t)(gran_us * 1e6));
        ro.tl = &tl;
    }
    struct run_result r;
    if (run_system_opts(&sys, &t, &ro, &r, &d) != 0) {
        membudget_cleanup_pop();
        if (ro.tl)
            tl_free(&tl);
        trace_free(&t);
        sys_free(&sys);
        outdir_unlock(lock, lock_fd);
        if (made_outdir)
            rmdir(outdir); /* nothing is in it yet */
        return cli_fail(&d);
    }
    if (r.spill > 0)
        fprintf(stderr,
                "strata run: warning: the trace's weights and KV cache (%.3g GB) exceed %s's %.3g GB; "
                "the %.3g GB that do not fit are streamed from host memory over PCIe before the GEMMs "
                "that need them (see strata fit)\n",
                r.working_set / 1e9, cfg.name, (double)cfg_dram(&cfg)->capacity_bytes / 1e9, r.spill / 1e9);
    struct whatif w[WHATIF_COUNT];
    struct report_ctx c = {&cfg, &t, &r, t.tokens, ntop, ro.tl, w, 0, sys.implied ? NULL : &sys};
    if (outdir != NULL && !no_whatif)
        c.nwhatif = whatif_run(&sys, &t, sustained, w);
    /* every file or none: each output's old version is kept aside until all
     * are written, and put back if one fails */
    void *tree = NULL;
    char path[1100];
    if (js != NULL) {
        if (!cli_is_stdout(js)) /* stdout cannot be taken back */
            keep_old(kept, &nk, js);
        if (report_json(&c, js, &d) != 0)
            rc = 1;
    }
    if (rc == 0 && csv != NULL) {
        if (!cli_is_stdout(csv))
            keep_old(kept, &nk, csv);
        if (report_csv(&c, csv, &d) != 0)
            rc = 1;
    }
    if (rc == 0 && outdir != NULL) {
        snprintf(path, sizeof path, "%s/report.json", outdir);
        keep_old(kept, &nk, path);
        /* the timeline and ops.csv on a second thread while report.json
         * is written here (each file is its own; the run is read only) */
        struct tl_job tj = {&tl, &c, "", "", {0}, 0};
        snprintf(tj.path, sizeof tj.path, "%s/timeline.json", outdir);
        snprintf(tj.csv, sizeof tj.csv, "%s/ops.csv", outdir);
        keep_old(kept, &nk, tj.csv);
        keep_old(kept, &nk, tj.path);
        pthread_t th;
        int threaded = pthread_create(&th, NULL, tl_thread, &tj) == 0;
        tree = report_json_head(&c);     /* the ops stream from the run, not a tree */
        if (report_json_write(&c, tree, path, &d) != 0)
            rc = 1;
        if (threaded)
            pthread_join(th, NULL);
        else
            tl_thread(&tj);
        if (rc == 0 && tj.rc != 0) {
            rc = 1;
            d = tj.d;
        }
        if (rc == 0) {
            snprintf(path, sizeof path, "%s/report.html", outdir);
            keep_old(kept, &nk, path);
            snprintf(path, sizeof path, "%s/report.json", outdir);
            if (plot_render_run(tree, &c, path, outdir, &d) != 0)
                rc = 1;
        }
        report_tree_free(tree);
    }
    membudget_cleanup_pop();
    kept_finish(kept, nk, rc == 0);
    if (rc != 0) {
        diag_print(&d, stderr);
        outdir_unlock(lock, lock_fd);
        lock_fd = -1;
        if (made_outdir)
            rmdir(outdir); /* only if empty: the plot step removes its own */
    } else if (!quiet) {
        /* a report on stdout: the summary goes to stderr, out of its way */
        FILE *txt = cli_is_stdout(js) || cli_is_stdout(csv) ? stderr : stdout;
        report_text(&c, txt);
        if (outdir != NULL)
            fprintf(txt, "\n  wrote %s/: report.json, ops.csv, timeline.json (open in ui.perfetto.dev)%s\n",
                   outdir, ", report.html, plots/");
    }
    outdir_unlock(lock, lock_fd);
    if (ro.tl)
        tl_free(&tl);
    run_result_free(&r);
    trace_free(&t);
    sys_free(&sys);
    return rc;
}
