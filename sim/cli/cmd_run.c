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
#include "opspec.h"
#include "plot.h"
#include "progress.h"
#include "report_csv.h"
#include "report_json.h"
#include "report_text.h"
#include "run.h"
#include "stack.h"
#include "system.h"
#include "timeline.h"
#include "trace.h"
#include "whatif.h"

const char cli_run_usage[] =
    "  strata run      --hw CONFIG.yaml --trace TRACE.json [--json OUT.json] [--csv OUT.csv]\n"
    "                  [--out DIR [--timeline-granularity-us G] [--no-whatif]] [--top N] [--quiet]\n"
    "                  [--max-events N] [--max-memory SIZE] [--sustained] [--stack NAME]\n"
    "                  " CLI_SET_USAGE "\n"
    "                  (defaults: --top 15, --timeline-granularity-us 10, --max-events 5000000000\n"
    "                  or $STRATA_MAX_EVENTS, --max-memory 90% of RAM or $STRATA_MAX_MEMORY;\n"
    "                  --quiet: one line, the trace, the hardware, the time and the bound;\n"
    "                  a run past 2 s shows its ops done on stderr when that is a terminal,\n"
    "                  not with --quiet: $STRATA_PROGRESS=1 always, =0 never)\n"
    "  strata run      --hw CONFIG.yaml --op KIND:key=value,... [--op ...] [options as above]\n"
    "                  (ops on the command line instead of --trace, one after another:\n"
    "                  gemm:m=8192,n=8192,k=8192  attention:batch=1,heads=32,q_len=4096,\n"
    "                  kv_len=4096,head_dim=128,causal=true  elementwise:elements=1e9,inputs=2\n"
    "                  all_reduce:bytes=1GiB,ranks=8; the trace format's fields, dtype bf16\n"
    "                  unless given: traces/README.md \"One-line ops\")\n";

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

_Static_assert(CLI_REPEAT_MAX <= OPSPEC_MAX, "every --op the parser takes fits a trace");

/* The options of `run` as given, and the numbers parsed from them. */
struct run_args {
    const char *hw, *tr, *js, *csv, *top, *outdir;
    const char *gran, *maxev, *maxmem, *stack;
    const char *ops[CLI_REPEAT_MAX];    /* --op, nops of them */
    int nops;
    struct opspec spec;                 /* the --op trace (run_load_trace) */
    int quiet, no_whatif, sustained;
    unsigned long long max_events;
    unsigned ntop;
    double gran_us;
};

/* The numbers and the output names: 0, or 2 after a usage message. */
static int run_check_args(struct run_args *a)
{
    if (a->hw == NULL || (a->tr == NULL && a->nops == 0)) {
        fprintf(stderr, "strata run: --hw and --trace (or --op) are required\n");
        return 2;
    }
    if (a->tr != NULL && a->nops > 0) {
        fprintf(stderr, "strata run: --trace and --op: give one (a trace file, or ops on the "
                        "command line)\n");
        return 2;
    }
    a->max_events = 0;
    if (a->maxev != NULL) {
        char *end;
        a->max_events = strtoull(a->maxev, &end, 10);
        if (a->maxev[0] < '1' || a->maxev[0] > '9' || *end != '\0') {
            fprintf(stderr, "strata run: --max-events: expected a count of engine events, got '%s'\n",
                    a->maxev);
            return 2;
        }
    }
    if (a->maxmem != NULL) {
        uint64_t b;
        if (membudget_parse(a->maxmem, &b) != 0) {
            fprintf(stderr, "strata run: --max-memory: expected a size of at least 1MiB (4GiB, 512MiB, "
                            "8GB), got '%s'\n", a->maxmem);
            return 2;
        }
        membudget_set_bytes(b);
    }
    a->ntop = 15;
    if (a->top != NULL && cli_count("run", "--top", a->top, 1000000, &a->ntop) != 0)
        return 2;
    a->gran_us = 10.0;
    if (a->gran != NULL) {
        if (num_parse(a->gran, &a->gran_us) != 0 || !(a->gran_us >= 0) || a->gran_us > 1e9) {
            fprintf(stderr, "strata run: --timeline-granularity-us: expected microseconds, got '%s'\n",
                    a->gran);
            return 2;
        }
    }
    /* two reports into one file would keep only the last */
    if (a->js != NULL && a->csv != NULL && strcmp(a->js, a->csv) == 0) {
        fprintf(stderr, "strata run: --json and --csv name the same file '%s'\n", a->js);
        return 2;
    }
    if (a->outdir != NULL) {
        static const char *const mine[] = {"report.json", "ops.csv", "timeline.json", "report.html"};
        const char *opt[2] = {a->js, a->csv};
        for (int i = 0; i < 2; i++)
            for (int k = 0; k < 4 && opt[i] != NULL; k++) {
                char p[1100];
                snprintf(p, sizeof p, "%s/%s", a->outdir, mine[k]);
                if (strcmp(p, opt[i]) == 0) {
                    fprintf(stderr, "strata run: %s '%s' is also a file --out writes\n",
                            i ? "--csv" : "--json", opt[i]);
                    return 2;
                }
            }
    }
    return 0;
}

/* The workload: --trace's file, or the --op specs as a trace (a
 * collective's ranks default to a system file's devices).  0, or -1 with *d. */
static int run_load_trace(struct run_args *a, enum hw_kind kind, const struct hw_system *sys,
                          struct trace *t, struct diag *d)
{
    if (a->tr != NULL)
        return trace_load(a->tr, t, d);
    a->spec = (struct opspec){"--op", a->ops, (unsigned)a->nops,
                              kind == HW_SYSTEM ? sys->ndevices : 0, ""};
    return opspec_load(&a->spec, t, d);
}

/* Prints *d, an error at an --op trace's op as one about its spec: 1, or
 * 2 for an --op that is not KIND:key=value,... */
static int run_fail(const struct run_args *a, struct diag *d)
{
    if (a->nops > 0)
        opspec_diag(&a->spec, d);
    return cli_fail(d) + (d->code == DIAG_E_USAGE);
}

/* The --out folder: report.json here while the timeline and ops.csv are
 * written on a second thread (each file is its own; the run is read only),
 * then the plots and report.html.  0, or 1 with *d. */
static int run_write_outdir(const struct report_ctx *c, struct timeline *tl, const char *outdir,
                            struct kept *kept, unsigned *nk, struct diag *d)
{
    char path[1100];
    int rc = 0;
    snprintf(path, sizeof path, "%s/report.json", outdir);
    keep_old(kept, nk, path);
    struct tl_job tj = {tl, c, "", "", {0}, 0};
    snprintf(tj.path, sizeof tj.path, "%s/timeline.json", outdir);
    snprintf(tj.csv, sizeof tj.csv, "%s/ops.csv", outdir);
    keep_old(kept, nk, tj.csv);
    keep_old(kept, nk, tj.path);
    pthread_t th;
    int threaded = pthread_create(&th, NULL, tl_thread, &tj) == 0;
    void *tree = report_json_head(c);     /* the ops stream from the run, not a tree */
    if (report_json_write(c, tree, path, d) != 0)
        rc = 1;
    if (threaded)
        pthread_join(th, NULL);
    else
        tl_thread(&tj);
    if (rc == 0 && tj.rc != 0) {
        rc = 1;
        *d = tj.d;
    }
    if (rc == 0) {
        snprintf(path, sizeof path, "%s/report.html", outdir);
        keep_old(kept, nk, path);
        snprintf(path, sizeof path, "%s/report.json", outdir);
        if (plot_render_run(tree, c, path, outdir, d) != 0)
            rc = 1;
    }
    report_tree_free(tree);
    return rc;
}

/* Every output, or none: each output's old version is kept aside until
 * all are written, and put back if one fails (kept_finish).  0, or 1 with
 * *d. */
static int run_write(const struct run_args *a, const struct report_ctx *c, struct timeline *tl,
                     struct kept *kept, unsigned *nk, struct diag *d)
{
    if (a->js != NULL) {
        if (!cli_is_stdout(a->js)) /* stdout cannot be taken back */
            keep_old(kept, nk, a->js);
        if (report_json(c, a->js, d) != 0)
            return 1;
    }
    if (a->csv != NULL) {
        if (!cli_is_stdout(a->csv))
            keep_old(kept, nk, a->csv);
        if (report_csv(c, a->csv, d) != 0)
            return 1;
    }
    if (a->outdir != NULL)
        return run_write_outdir(c, tl, a->outdir, kept, nk, d);
    return 0;
}

int cli_run(int argc, char **argv)
{
    struct run_args a;
    memset(&a, 0, sizeof a);
    const struct cli_opt opts[] = {
        {"hw", 0, &a.hw, NULL},        {"trace", 0, &a.tr, NULL},
        {"json", 0, &a.js, NULL},      {"csv", 0, &a.csv, NULL},
        {"top", 0, &a.top, NULL},      {"out", 0, &a.outdir, NULL},
        {"timeline-granularity-us", 0, &a.gran, NULL},
        {"max-events", 0, &a.maxev, NULL}, {"max-memory", 0, &a.maxmem, NULL},
        {"quiet", 0, NULL, &a.quiet},  {"no-whatif", 0, NULL, &a.no_whatif},
        {"sustained", 0, NULL, &a.sustained}, {"stack", 0, &a.stack, NULL},
        {"op", 0, a.ops, &a.nops},
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
    if (cli_find("run", "--hw", &a.hw, 0, hw_path, sizeof hw_path) != 0)
        return 1;
    if (run_check_args(&a) != 0)
        return 2;
    const char *outdir = a.outdir;
    struct diag d;
    memset(&d, 0, sizeof d);
    /* --hw: a system file, or a chip config (one chip per trace device) */
    struct hw_system sys;
    enum hw_kind kind;
    if (hw_load(a.hw, &sets, &sys, &kind, &d) != 0)
        return cli_fail(&d);
    struct hw_config chip = sys.chip;   /* a chip config: filled by hw_load */
    struct trace t;
    if (run_load_trace(&a, kind, &sys, &t, &d) != 0) {
        if (kind == HW_SYSTEM)
            sys_free(&sys);
        return run_fail(&a, &d);
    }
    /* the software that drives the chip (configs/stacks); each what-if builds its hardware as
     * this run does (whatif_build) */
    struct stack stk;
    char sdir[1600];
    struct whatif_hw wh = {a.hw, &sets, a.stack != NULL ? &stk : NULL, sdir};
    int src = cli_load_stack_sets("run", a.stack, &sets, &stk, sdir, sizeof sdir);
    if (src != 0 || whatif_build(&wh, kind, &t, &sys, &d) != 0) {
        trace_free(&t);
        if (d.msg[0] == '\0')  /* the stack file: whatif_build has not freed it */
            sys_free(&sys);
        return d.msg[0] ? run_fail(&a, &d) : src;
    }
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
    /* on a terminal, a run past 2 s shows its ops done on stderr (progress.h); cleared before
     * anything else is printed */
    struct prog pg;
    prog_init(&pg, !a.quiet, "simulating");
    struct run_opts ro = {.tl = NULL, .max_events = a.max_events, .sustained = a.sustained,
                          .progress = &pg};
    if (outdir != NULL) {
        tl_init(&tl, t.ndevices, TL_SERIES_PER_DEV, (uint64_t)(a.gran_us * 1e6));
        ro.tl = &tl;
    }
    struct run_result r;
    int ran = run_system_opts(&sys, &t, &ro, &r, &d);
    prog_clear(&pg);
    if (ran != 0) {
        membudget_cleanup_pop();
        if (ro.tl)
            tl_free(&tl);
        trace_free(&t);
        sys_free(&sys);
        outdir_unlock(lock, lock_fd);
        if (made_outdir)
            rmdir(outdir); /* nothing is in it yet */
        return run_fail(&a, &d);
    }
    if (r.spill > 0)
        fprintf(stderr,
                "strata run: warning: the trace's weights and KV cache (%.3g GB) exceed %s's %.3g GB; "
                "the %.3g GB that do not fit are streamed from host memory over PCIe before the GEMMs "
                "that need them (see strata fit)\n",
                r.working_set / 1e9, cfg.name, (double)cfg_dram(&cfg)->capacity_bytes / 1e9, r.spill / 1e9);
    struct whatif w[WHATIF_COUNT];
    struct report_ctx c = {&cfg, &t, &r, t.tokens, a.ntop, ro.tl, w, 0, sys.implied ? NULL : &sys};
    if (outdir != NULL && !a.no_whatif)
        c.nwhatif = whatif_run(&wh, &chip, &t, a.sustained, &pg, w);
    rc = run_write(&a, &c, &tl, kept, &nk, &d);
    membudget_cleanup_pop();
    kept_finish(kept, nk, rc == 0);
    if (rc != 0) {
        run_fail(&a, &d);
        outdir_unlock(lock, lock_fd);
        lock_fd = -1;
        if (made_outdir)
            rmdir(outdir); /* only if empty: the plot step removes its own */
    } else if (a.quiet) {
        /* one line: what ran where, the time, the bound */
        FILE *txt = cli_is_stdout(a.js) || cli_is_stdout(a.csv) ? stderr : stdout;
        char tb[32];
        numfmt_time(tb, sizeof tb, (double)r.total_ps * 1e-12);
        fprintf(txt, "%s on %s: %s", t.path, sys.implied ? cfg_label(&cfg) : sys.name, tb);
        if (t.tokens > 0 && r.total_ps > 0)
            fprintf(txt, " (%.1f tokens/s)", t.tokens / ((double)r.total_ps * 1e-12));
        fprintf(txt, ", bound %s\n", run_result_bound(&cfg, &r));
    } else {
        /* a report on stdout: the summary goes to stderr, out of its way */
        FILE *txt = cli_is_stdout(a.js) || cli_is_stdout(a.csv) ? stderr : stdout;
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
