/* cmd_sweep.c: `strata sweep`: one config varied over a design space, each
 * point run on every trace (sim/study/sweep.h). */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "afile.h"
#include "cfg.h"
#include "check.h"
#include "cli.h"
#include "diag.h"
#include "plot_sweep.h"
#include "progress.h"
#include "sweep.h"

#ifdef STRATA_WITH_MPI
#include <mpi.h>
#endif

const char cli_sweep_usage[] =
    "  strata sweep    --hw CONFIG.yaml --trace T.json [--trace T2.json ...]\n"
    "                  --vary KEY=A..B:x2|A..B:+S|A..B:N[g]|V1,V2,... [--vary ...] [--zip]\n"
    "                  [-j|--jobs THREADS] [--shard I/N] [--csv OUT.csv | --out DIR] [--no-progress]\n"
    "                  " CLI_SET_USAGE "\n"
    "                  (defaults: -j 1, --shard 0/1: every point; a sweep past 2 s shows its\n"
    "                  runs done on stderr when that is a terminal, not with --no-progress;\n"
    "                  two keys: --out's plots/ has a heatmap per trace)\n"
    "  strata sweep    --merge SHARD.csv ... -o|--output OUT.csv\n";

/* Takes every --vary and --trace out of argv (they repeat). */
static int take_repeated(int *argc, char **argv, const char *name, const char **vals,
                         unsigned *n, unsigned max)
{
    size_t nl = strlen(name);
    int out = 1;
    for (int i = 1; i < *argc; i++) {
        const char *a = argv[i];
        const char *v = NULL;
        if (strncmp(a, "--", 2) == 0 && strncmp(a + 2, name, nl) == 0 && a[2 + nl] == '=')
            v = a + 3 + nl;
        else if (strncmp(a, "--", 2) == 0 && strcmp(a + 2, name) == 0) {
            if (i + 1 >= *argc || strncmp(argv[i + 1], "--", 2) == 0) {
                fprintf(stderr, "strata sweep: option '--%s' needs a value\n", name);
                return 2;
            }
            v = argv[++i];
        } else {
            argv[out++] = argv[i];
            continue;
        }
        if (*n >= max) {
            fprintf(stderr, "strata sweep: more than %u --%s\n", max, name);
            return 2;
        }
        vals[(*n)++] = v;
    }
    *argc = out;
    argv[out] = NULL;
    return -1;
}

/* --shard I/N into o.  0, or 2 after a usage message. */
static int parse_shard(const char *shard, struct sweep_opts *o)
{
    char *e;
    unsigned long i = strtoul(shard, &e, 10), n = 0;
    if (e != shard && *e == '/')
        n = strtoul(e + 1, &e, 10);
    if (shard[0] < '0' || shard[0] > '9' || *e != '\0' || n == 0 || n > 1000000) {
        fprintf(stderr, "strata sweep: --shard: expected I/N (0 <= I < N), got '%s'\n", shard);
        return 2;
    }
    if (i >= n) {
        fprintf(stderr, "strata sweep: --shard %s: shard index %lu out of range 0..%lu\n",
                shard, i, n - 1);
        return 2;
    }
    o->shard = (unsigned)i;
    o->nshards = (unsigned)n;
    return 0;
}

/* The design space into s: the config, the traces and the keys.  -1 to
 * go on, else the exit status (after a message). */
static int sweep_setup(struct sweep *s, const char *hw, const char *const *traces, unsigned ntr,
                       const char *const *vary, unsigned nvary, int zip, struct diag *d)
{
    if (strlen(hw) >= sizeof s->hw) {
        fprintf(stderr, "strata sweep: --hw path too long\n");
        return 2;
    }
    snprintf(s->hw, sizeof s->hw, "%s", hw);
    for (unsigned t = 0; t < ntr; t++) {
        if (strlen(traces[t]) >= sizeof s->trace_path[0]) {
            fprintf(stderr, "strata sweep: --trace path too long\n");
            return 2;
        }
        snprintf(s->trace_path[t], sizeof s->trace_path[0], "%s", traces[t]);
    }
    s->ntraces = ntr;
    s->zip = zip;
    for (unsigned v = 0; v < nvary; v++)
        if (sweep_add_vary(s, vary[v], d) != 0) {
            sweep_free(s);
            return d->code == DIAG_E_USAGE ? (diag_print(d, stderr), 2) : cli_fail(d);
        }
    if (sweep_finish(s, d) != 0) {
        sweep_free(s);
        return d->code == DIAG_E_USAGE ? (diag_print(d, stderr), 2) : cli_fail(d);
    }
    return -1;
}

#ifdef STRATA_WITH_MPI
/* Every rank runs shard rank/size; rank 0 gathers the rows, puts them in
 * point order and goes on to write what the single-process sweep writes.
 * -1 to go on (rank 0, with *header and *rows), else the exit status (the
 * other ranks: 0). */
static int sweep_mpi(struct sweep *s, struct sweep_opts *o, const char *shard, char **header,
                     char **rows, struct diag *d)
{
    int rank = 0, size = 1;
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    if (shard != NULL) {
        if (rank == 0)
            fprintf(stderr, "strata sweep: under MPI the ranks are the shards; drop --shard\n");
        return 2;
    }
    o->shard = (unsigned)rank;
    o->nshards = (unsigned)size;
    if (rank != 0)
        o->progress = NULL;
    int mine = sweep_run(s, o, header, rows, d) != 0, any = 0;
    if (mine)
        diag_print(d, stderr);
    MPI_Allreduce(&mine, &any, 1, MPI_INT, MPI_MAX, MPI_COMM_WORLD);
    if (any)
        return 1;
    int len = (int)strlen(*rows);
    int *lens = rank == 0 ? sim_xcalloc((size_t)size, sizeof *lens) : NULL;
    int *offs = rank == 0 ? sim_xcalloc((size_t)size, sizeof *offs) : NULL;
    MPI_Gather(&len, 1, MPI_INT, lens, 1, MPI_INT, 0, MPI_COMM_WORLD);
    char *all = NULL;
    if (rank == 0) {
        long total = 0;
        for (int r = 0; r < size; r++) {
            offs[r] = (int)total;
            total += lens[r];
        }
        if (total > 2147483647L) {
            fprintf(stderr, "strata sweep: %ld bytes of rows is too many for one gather\n", total);
            abort();
        }
        all = sim_xcalloc((size_t)total + 1, 1);
    }
    MPI_Gatherv(*rows, len, MPI_CHAR, all, lens, offs, MPI_CHAR, 0, MPI_COMM_WORLD);
    if (rank != 0)
        return 0;
    /* rank r holds points r, r + size, ...; each point has ntraces lines */
    char **cur = sim_xcalloc((size_t)size, sizeof *cur);
    size_t tot = strlen(all) + 1;
    char *ordered = sim_xcalloc(tot, 1);
    size_t at = 0;
    for (int r = 0; r < size; r++)
        cur[r] = all + offs[r];
    for (uint64_t p = 0; p < s->npoints; p++) {
        int r = (int)(p % (uint64_t)size);
        for (unsigned t = 0; t < s->ntraces; t++) {
            char *e = strchr(cur[r], '\n');
            size_t n = (size_t)(e - cur[r] + 1);
            memcpy(ordered + at, cur[r], n);
            at += n;
            cur[r] = e + 1;
        }
    }
    ordered[at] = '\0';
    free(*rows);
    *rows = ordered;
    free(all);
    free(cur);
    free(lens);
    free(offs);
    o->shard = 0;
    o->nshards = 1;
    return -1;
}
#endif

/* The CSV (and with --out, the plots and page).  0, or 1 with *d. */
static int sweep_outputs(const struct sweep *s, const struct sweep_opts *o, const char *csv,
                         const char *outdir, const char *header, const char *rows, struct diag *d)
{
    char path[1100];
    const char *dest = csv != NULL ? csv : "-";
    if (outdir != NULL) {
        if (afile_make_dir(outdir, "--out", d) != 0)
            return 1;
        snprintf(path, sizeof path, "%s/%s", outdir, o->nshards > 1 ? "" : "sweep.csv");
        if (o->nshards > 1)
            snprintf(path, sizeof path, "%s/shard-%u-of-%u.csv", outdir, o->shard, o->nshards);
        dest = path;
    }
    int rc = sweep_write_csv(dest, s, o, header, rows, d) != 0;
    if (rc == 0 && outdir != NULL && o->nshards == 1)
        rc = plot_sweep(s, dest, outdir, d) != 0;
    if (rc == 0 && !cli_is_stdout(dest))
        fprintf(stderr, "strata sweep: %llu points x %u traces -> %s\n",
                (unsigned long long)(s->npoints > o->shard
                                         ? (s->npoints - o->shard + o->nshards - 1) / o->nshards : 0),
                s->ntraces, dest);
    return rc;
}

int cli_sweep(int argc, char **argv)
{
    static struct sweep s; /* large (the overrides); one per process */
    memset(&s, 0, sizeof s);
    {
        int src = cli_take_sets("sweep", &argc, argv, &s.base);
        if (src >= 0)
            return src;
    }
    const char *vary[SWEEP_MAX_KEYS + 1], *traces[SWEEP_MAX_TRACES + 1];
    unsigned nvary = 0, ntr = 0;
    int rc = take_repeated(&argc, argv, "vary", vary, &nvary, SWEEP_MAX_KEYS);
    if (rc < 0)
        rc = take_repeated(&argc, argv, "trace", traces, &ntr, SWEEP_MAX_TRACES);
    if (rc >= 0)
        return rc;
    const char *hw = NULL, *jobs = NULL, *shard = NULL, *csv = NULL, *outdir = NULL, *out = NULL;
    int zip = 0, merge = 0, noprog = 0, first = 0;
    const struct cli_opt opts[] = {
        {"hw", 0, &hw, NULL},          {"jobs", 'j', &jobs, NULL},
        {"shard", 0, &shard, NULL},    {"csv", 0, &csv, NULL},
        {"out", 0, &outdir, NULL},     {"output", 'o', &out, NULL},
        {"zip", 0, NULL, &zip},        {"merge", 0, NULL, &merge},
        {"no-progress", 0, NULL, &noprog},
        {NULL, 0, NULL, NULL},
    };
    rc = cli_parse("sweep", cli_sweep_usage, opts, argc, argv, &first);
    if (rc >= 0)
        return rc;
    char hw_path[1600];
    if (cli_find("sweep", "--hw", &hw, 0, hw_path, sizeof hw_path) != 0)
        return 1;
    struct diag d;
    memset(&d, 0, sizeof d);
    if (merge) {
        if (out == NULL || first >= argc) {
            fprintf(stderr, "strata sweep: --merge needs the shard files and -o OUT.csv\n");
            return 2;
        }
        if (sweep_merge((const char *const *)argv + first, (unsigned)(argc - first), out, &d) != 0)
            return cli_fail(&d);
        return 0;
    }
    if (first < argc) {
        fprintf(stderr, "strata sweep: unexpected argument '%s' (see strata sweep --help)\n",
                argv[first]);
        return 2;
    }
    if (hw == NULL || ntr == 0 || nvary == 0) {
        fprintf(stderr, "strata sweep: --hw, --trace and --vary are required\n");
        return 2;
    }
    if (csv != NULL && outdir != NULL) {
        fprintf(stderr, "strata sweep: give --csv or --out, not both\n");
        return 2;
    }
    unsigned nth = 1;
    if (jobs != NULL && (cli_count("sweep", "-j", jobs, 256, &nth) != 0 || nth == 0)) {
        if (nth == 0)
            fprintf(stderr, "strata sweep: -j: at least 1 thread\n");
        return 2;
    }
    struct sweep_opts o = {.threads = nth, .shard = 0, .nshards = 1, .progress = NULL};
    if (shard != NULL && parse_shard(shard, &o) != 0)
        return 2;
    /* on a terminal, past 2 s: the runs done on stderr, cleared at the end (progress.h) */
    struct prog pg;
    prog_init(&pg, !noprog, "sweep");
    rc = sweep_setup(&s, hw, traces, ntr, vary, nvary, zip, &d);
    if (rc >= 0)
        return rc;
    o.progress = pg.on ? &pg : NULL;
    char *header = NULL, *rows = NULL;
#ifdef STRATA_WITH_MPI
    rc = sweep_mpi(&s, &o, shard, &header, &rows, &d);
    if (rc >= 0) {
        free(header);
        free(rows);
        sweep_free(&s);
        return rc;
    }
#else
    if (sweep_run(&s, &o, &header, &rows, &d) != 0) {
        sweep_free(&s);
        return cli_fail(&d);
    }
#endif
    rc = sweep_outputs(&s, &o, csv, outdir, header, rows, &d);
    free(header);
    free(rows);
    sweep_free(&s);
    return rc ? cli_fail(&d) : 0;
}
