/* sweep.c: see sweep.h. */
#include "sweep.h"

#include <math.h>
#include <stdarg.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "afile.h"
#include "check.h"
#include "csv.h"
#include "progress.h"
#include "run.h"
#include "system.h"
#include "numfmt.h"
#include "strbuf.h"
#include "units.h"

#define SWEEP_MAX_VALUES 1000000u  /* values of one key */

/* ------------------------------------------------------------ the points */

static int vary_fail(struct diag *d, const char *spec, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));
static int vary_fail(struct diag *d, const char *spec, const char *fmt, ...)
{
    char msg[400];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(msg, sizeof msg, fmt, ap);
    va_end(ap);
    return diag_set(d, DIAG_E_USAGE, "--vary", 0, spec, "%s", msg);
}

static void key_push(struct sweep_key *k, double mant, const char *unit, unsigned *cap)
{
    if (k->nvalues == *cap) {
        *cap = *cap ? *cap * 2 : 16;
        k->values = sim_xrealloc(k->values, *cap * sizeof *k->values);
        k->num = sim_xrealloc(k->num, *cap * sizeof *k->num);
    }
    snprintf(k->values[k->nvalues], sizeof k->values[0], "%.6g%s", mant, unit);
    k->num[k->nvalues++] = mant;
}

int sweep_add_vary(struct sweep *s, const char *spec, struct diag *d)
{
    const char *eq = strchr(spec, '=');
    if (eq == NULL || eq == spec || eq[1] == '\0')
        return vary_fail(d, spec, "expected KEY=VALUES, like dram.bandwidth=1TB/s..8TB/s:x2 or "
                                  "l2.capacity=25MiB,50MiB");
    if (s->nkeys >= SWEEP_MAX_KEYS)
        return vary_fail(d, spec, "more than %d varied keys", SWEEP_MAX_KEYS);
    struct sweep_key k;
    memset(&k, 0, sizeof k);
    size_t kl = (size_t)(eq - spec);
    if (kl >= sizeof k.key)
        return vary_fail(d, spec, "key too long");
    memcpy(k.key, spec, kl);
    for (unsigned i = 0; i < s->nkeys; i++)
        if (strcmp(s->key[i].key, k.key) == 0)
            return vary_fail(d, spec, "%s is varied twice", k.key);
    const char *v = eq + 1;
    unsigned cap = 0;
    const char *dots = strstr(v, "..");
    char buf[160];
    if (strlen(v) >= sizeof buf)
        return vary_fail(d, spec, "values too long");
    if (dots == NULL) { /* a list */
        snprintf(buf, sizeof buf, "%s", v);
        char *save = NULL;
        for (char *it = strtok_r(buf, ",", &save); it != NULL; it = strtok_r(NULL, ",", &save)) {
            struct qty q;
            double f;
            if (it[0] == 'x' && num_parse(it + 1, &f) == 0 && f > 0) {  /* relative: cfgset.h */
                key_push(&k, f, "", &cap);
                snprintf(k.values[k.nvalues - 1], sizeof k.values[0], "x%.6g", f);
                continue;
            }
            if (qty_parse(it, &q) != 0) {
                free(k.values);
                free(k.num);
                return vary_fail(d, spec, "'%s' is not a number with a unit, nor a factor (x2)", it);
            }
            key_push(&k, q.mantissa, qty_unit_text(it), &cap);
        }
        if (k.nvalues == 0)
            return vary_fail(d, spec, "no values");
    } else { /* a range A..B:STEP */
        const char *colon = strchr(dots + 2, ':');
        if (colon == NULL)
            return vary_fail(d, spec, "a range needs a step: A..B:x2 (geometric), A..B:+S "
                                      "(linear), A..B:N or A..B:Ng (N points)");
        char a[64], b[64], st[64];
        size_t al = (size_t)(dots - v), bl = (size_t)(colon - dots - 2);
        if (al >= sizeof a || bl >= sizeof b || strlen(colon + 1) >= sizeof st)
            return vary_fail(d, spec, "range too long");
        memcpy(a, v, al);
        a[al] = '\0';
        memcpy(b, dots + 2, bl);
        b[bl] = '\0';
        snprintf(st, sizeof st, "%s", colon + 1);
        struct qty qa, qb;
        if (qty_parse(a, &qa) != 0)
            return vary_fail(d, spec, "range start '%s' is not a number with a unit", a);
        if (qty_parse(b, &qb) != 0)
            return vary_fail(d, spec, "range end '%s' is not a number with a unit", b);
        if (qa.kind != qb.kind)
            return vary_fail(d, spec, "the range's ends are different kinds of quantity");
        const char *unit = qty_unit_text(a);
        double lo = qa.mantissa, hi = qb.si / qa.scale;
        if (!(hi > lo))
            return vary_fail(d, spec, "a range goes from low to high; the end must be above "
                                      "the start");
        const double tol = 1e-9 * hi;
        if (st[0] == 'x') {
            double f;
            if (num_parse(st + 1, &f) != 0 || !(f > 1))
                return vary_fail(d, spec, "a range with zero steps: the factor after x must be "
                                          "above 1, got '%s'", st);
            if (!(lo > 0))
                return vary_fail(d, spec, "a geometric range must start above 0");
            for (double x = lo; x <= hi + tol && k.nvalues < SWEEP_MAX_VALUES; x *= f)
                key_push(&k, x, unit, &cap);
        } else if (st[0] == '+') {
            struct qty qs;
            if (qty_parse(st + 1, &qs) != 0 || (qs.kind != qa.kind && qs.kind != QK_NONE))
                return vary_fail(d, spec, "step '%s' is not a quantity of the range's kind", st);
            double step = qs.kind == QK_NONE ? qs.mantissa : qs.si / qa.scale;
            if (!(step > 0))
                return vary_fail(d, spec, "a range with zero steps: the step must be above 0, "
                                          "got '%s'", st);
            for (unsigned i = 0; lo + i * step <= hi + tol && k.nvalues < SWEEP_MAX_VALUES; i++)
                key_push(&k, lo + i * step, unit, &cap);
        } else {
            char *end;
            unsigned long n = strtoul(st, &end, 10);
            int geo = *end == 'g';
            if (st[0] < '0' || st[0] > '9' || (*end != '\0' && !(geo && end[1] == '\0')))
                return vary_fail(d, spec, "step '%s': expected xF, +S, N or Ng", st);
            if (n < 2)
                return vary_fail(d, spec, "a range with zero steps: N must be at least 2, got "
                                          "'%s'", st);
            if (n > SWEEP_MAX_VALUES)
                return vary_fail(d, spec, "more than 1000000 values");
            if (geo && !(lo > 0))
                return vary_fail(d, spec, "a geometric range must start above 0");
            for (unsigned long i = 0; i < n; i++) {
                double t = (double)i / (double)(n - 1);
                key_push(&k, geo ? lo * pow(hi / lo, t) : lo + (hi - lo) * t, unit, &cap);
            }
        }
        if (k.nvalues >= SWEEP_MAX_VALUES) {
            free(k.values);
            free(k.num);
            return vary_fail(d, spec, "more than 1000000 values");
        }
    }
    s->key[s->nkeys++] = k;
    return 0;
}

int sweep_finish(struct sweep *s, struct diag *d)
{
    double n = 1;
    if (s->zip && s->nkeys > 0) {
        n = s->key[0].nvalues;
        for (unsigned i = 1; i < s->nkeys; i++)
            if (s->key[i].nvalues != s->key[0].nvalues)
                return diag_set(d, DIAG_E_USAGE, "--zip", 0, s->key[i].key,
                                "zipped keys need as many values each: %s has %u, %s has %u",
                                s->key[0].key, s->key[0].nvalues, s->key[i].key,
                                s->key[i].nvalues);
    } else {
        for (unsigned i = 0; i < s->nkeys; i++)
            n *= s->key[i].nvalues;
    }
    if (n > SWEEP_MAX_POINTS)
        return diag_set(d, DIAG_E_RANGE, "--vary", 0, "", "%.0f points; at most %u per sweep "
                        "(split it with --shard, or vary fewer values)", n, SWEEP_MAX_POINTS);
    if (s->ntraces == 0)
        return diag_set(d, DIAG_E_USAGE, "--trace", 0, "", "a sweep needs at least one trace");
    s->npoints = (uint64_t)n;
    return 0;
}

/* Index of key i's value at point p. */
unsigned sweep_value_index(const struct sweep *s, unsigned i, uint64_t p)
{
    if (s->zip)
        return (unsigned)p;
    uint64_t stride = 1;
    for (unsigned j = i + 1; j < s->nkeys; j++)
        stride *= s->key[j].nvalues;
    return (unsigned)((p / stride) % s->key[i].nvalues);
}

/* The overrides of point p: the base ones, then its key values. */
static int sweep_point_sets(const struct sweep *s, uint64_t p, struct cfg_sets *out, struct diag *d)
{
    *out = s->base;
    for (unsigned i = 0; i < s->nkeys; i++) {
        char kv[200], origin[160];
        const char *val = s->key[i].values[sweep_value_index(s, i, p)];
        snprintf(kv, sizeof kv, "%s=%s", s->key[i].key, val);
        snprintf(origin, sizeof origin, "--vary %.90s=%.47s (point %llu)", s->key[i].key, val,
                 (unsigned long long)p);
        if (cfg_sets_add(out, kv, origin, d) != 0)
            return -1;
    }
    return 0;
}

void sweep_free(struct sweep *s)
{
    for (unsigned i = 0; i < s->nkeys; i++) {
        free(s->key[i].values);
        free(s->key[i].num);
    }
    s->nkeys = 0;
}

/* ------------------------------------------------------------ running */

struct point_hw {
    int chip_only;              /* sys is a chip config: make the system per trace */
    struct hw_system sys;
};

struct job {
    const struct sweep *s;
    struct point_hw *hw;        /* per shard point */
    uint64_t *points;           /* the shard's points */
    uint64_t ntasks;            /* shard points x traces */
    const struct trace *traces;
    char **rows;                /* per task */
    _Atomic uint64_t next, done;
    _Atomic int failed;
    struct diag err;
    pthread_mutex_t lock;
};

static void format_row(const struct job *j, uint64_t task, const struct hw_system *sys,
                       const struct run_result *r, struct sb *b)
{
    const struct sweep *s = j->s;
    uint64_t p = j->points[task / s->ntraces];
    unsigned t = (unsigned)(task % s->ntraces);
    char num[64];
    snprintf(num, sizeof num, "%llu,", (unsigned long long)p);
    sb_puts(b, num);
    csv_field(b, s->trace_path[t]);
    for (unsigned i = 0; i < s->nkeys; i++) {
        sb_putn(b, ",", 1);
        csv_field(b, s->key[i].values[sweep_value_index(s, i, p)]);
    }
    const struct hw_config *c = &sys->chip;
    double total_s = (double)r->total_ps * 1e-12;
    snprintf(num, sizeof num, ",%.6f,%.4f,", total_s * 1e6,
             total_s > 0 ? r->flops / total_s / 1e12 : 0.0);
    sb_puts(b, num);
    sb_puts(b, run_result_bound(c, r));
    for (unsigned k = 0; k < CAT_STALL + c->nlevels; k++) {
        snprintf(num, sizeof num, ",%.6f", r->time_ps[k] * 1e-6);
        sb_puts(b, num);
    }
    snprintf(num, sizeof num, ",%.6f", r->time_ps[RUN_IDLE] * 1e-6);
    sb_puts(b, num);
    if (c->has_power) {     /* docs/energy.md: the run's energy, the hottest device's power */
        snprintf(num, sizeof num, ",%.6g,%.3f", run_energy_total(r),
                 run_hot_power(r, &j->traces[t], NULL));
        sb_puts(b, num);
    }
    for (unsigned i = 0; i < s->nkeys; i++) {
        const char *v = s->key[i].values[sweep_value_index(s, i, p)];
        struct qty q;
        double si = s->key[i].num[sweep_value_index(s, i, p)];    /* a factor: as given */
        if (v[0] != 'x' && qty_parse(v, &q) == 0)
            si = q.si;
        snprintf(num, sizeof num, ",%.9g", si);
        sb_puts(b, num);
    }
    sb_putn(b, ",", 1);
    csv_field(b, sys->implied ? c->name : sys->name);
    snprintf(num, sizeof num, ",%.6g", j->traces[t].tokens > 0 && total_s > 0 ? j->traces[t].tokens / total_s : 0.0);
    sb_puts(b, num);
    sb_putn(b, "\n", 1);
}

static void *worker(void *arg)
{
    struct job *j = arg;
    const struct sweep *s = j->s;
    for (;;) {
        uint64_t task = atomic_fetch_add(&j->next, 1);
        if (task >= j->ntasks || atomic_load(&j->failed))
            break;
        const struct point_hw *ph = &j->hw[task / s->ntraces];
        const struct trace *t = &j->traces[task % s->ntraces];
        struct hw_system made;
        const struct hw_system *sys = &ph->sys;
        if (ph->chip_only) {
            sys_from_chip(&ph->sys.chip, t->ndevices, (const char (*)[32])t->devices, &made);
            sys = &made;
        }
        struct run_opts ro = {.tl = NULL};
        struct run_result r;
        struct diag d;
        memset(&d, 0, sizeof d);
        int rc = run_system_opts(sys, t, &ro, &r, &d);
        if (rc == 0) {
            struct sb b = {0};
            format_row(j, task, sys, &r, &b);
            j->rows[task] = b.s;
            run_result_free(&r);
        } else {
            pthread_mutex_lock(&j->lock);
            if (!atomic_load(&j->failed)) {
                j->err = d;
                atomic_store(&j->failed, 1);
            }
            pthread_mutex_unlock(&j->lock);
        }
        if (ph->chip_only)
            sys_free(&made);
        atomic_fetch_add(&j->done, 1);
    }
    return NULL;
}

static void header_line(const struct sweep *s, const struct hw_config *c, struct sb *b)
{
    sb_puts(b, "point,trace");
    for (unsigned i = 0; i < s->nkeys; i++) {
        sb_putn(b, ",", 1);
        csv_field(b, s->key[i].key);
    }
    sb_puts(b, ",time_us,tflops,bound");
    for (unsigned k = 0; k < CAT_STALL + c->nlevels; k++) {
        sb_putn(b, ",", 1);
        sb_puts(b, run_cat_name(c, k));
        sb_puts(b, "_us");
    }
    sb_puts(b, ",idle_us");
    if (c->has_power)
        sb_puts(b, ",energy_J,power_W");
    /* for plotting and joining sweeps: each key's value in SI units (B/s, B, Hz, s; a plain
     * number or factor as given), the hardware's name, tokens a second */
    for (unsigned i = 0; i < s->nkeys; i++) {
        sb_putn(b, ",", 1);
        char k[110];
        snprintf(k, sizeof k, "%s_si", s->key[i].key);
        csv_field(b, k);
    }
    sb_puts(b, ",hw,tokens_per_s");
    sb_putn(b, "\n", 1);
}

int sweep_run(const struct sweep *s, const struct sweep_opts *o, char **header, char **rows,
              struct diag *d)
{
    *header = *rows = NULL;
    unsigned nsh = o->nshards ? o->nshards : 1;
    uint64_t np = s->npoints > o->shard ? (s->npoints - o->shard + nsh - 1) / nsh : 0;
    struct job j;
    memset(&j, 0, sizeof j);
    j.s = s;
    j.points = sim_xcalloc(np ? np : 1, sizeof *j.points);
    j.hw = sim_xcalloc(np ? np : 1, sizeof *j.hw);
    struct trace *traces = sim_xcalloc(s->ntraces, sizeof *traces);
    unsigned nloaded = 0;
    uint64_t nhw = 0;
    int rc = 0;
    for (unsigned t = 0; t < s->ntraces && rc == 0; t++, nloaded++)
        if (trace_load(s->trace_path[t], &traces[t], d) != 0) {
            rc = -1;
            break;
        }
    /* every point's config, loaded here: the loaders are not thread-safe
     * (they note their inputs), and a bad point stops the sweep before any
     * run.  The file is parsed once and each point works on a copy of its
     * tree; a system file's chip config is read per point. */
    struct hw_proto *proto = NULL;
    if (rc == 0 && hw_proto_load(s->hw, &proto, d) != 0)
        rc = -1;
    for (uint64_t i = 0; i < np && rc == 0; i++, nhw++) {
        j.points[i] = o->shard + i * nsh;
        struct cfg_sets sets;
        if (sweep_point_sets(s, j.points[i], &sets, d) != 0) {
            rc = -1;
            break;
        }
        enum hw_kind kind;
        if (hw_load_proto(proto, &sets, &j.hw[i].sys, &kind, d) != 0) {
            rc = -1;
            break;
        }
        j.hw[i].chip_only = kind == HW_CHIP;
    }
    hw_proto_free(proto);
    struct sb hb = {0};
    if (rc == 0) {
        struct hw_config c0;
        struct cfg_sets sets;
        struct hw_system hs;        /* a shard with no points: the header from point 0 */
        enum hw_kind kind;
        if (np > 0) {
            c0 = j.hw[0].sys.chip;
        } else if (sweep_point_sets(s, 0, &sets, d) != 0 || hw_load(s->hw, &sets, &hs, &kind, d) != 0) {
            rc = -1;
        } else {
            c0 = hs.chip;
            sys_free(&hs);  /* a system file's nodes and links; harmless on a chip's */
        }
        if (rc == 0)
            header_line(s, &c0, &hb);
    }
    if (rc == 0 && np > 0) {
        j.ntasks = np * s->ntraces;
        j.traces = traces;
        j.rows = sim_xcalloc(j.ntasks, sizeof *j.rows);
        pthread_mutex_init(&j.lock, NULL);
        unsigned nth = o->threads ? o->threads : 1;
        if (nth > 256)
            nth = 256;
        pthread_t th[256];
        unsigned started = 0;
        /* with a progress line every run is on a worker and this thread
         * draws it; without one it is a worker too */
        unsigned nworkers = o->progress != NULL ? nth : nth - 1;
        prog_show(o->progress, 0, j.ntasks, "runs", 1);    /* forced (progress.h): from the start */
        for (unsigned i = 0; i < nworkers; i++)
            if (pthread_create(&th[started], NULL, worker, &j) == 0)
                started++;
        while (o->progress != NULL && started > 0 && atomic_load(&j.done) < j.ntasks &&
               !atomic_load(&j.failed)) {
            prog_show(o->progress, atomic_load(&j.done), j.ntasks, "runs", 1);
            struct timespec ts = {0, 200000000};
            nanosleep(&ts, NULL);
        }
        worker(&j);
        for (unsigned i = 0; i < started; i++)
            pthread_join(th[i], NULL);
        prog_clear(o->progress);
        pthread_mutex_destroy(&j.lock);
        if (atomic_load(&j.failed)) {
            *d = j.err;
            rc = -1;
        }
    }
    struct sb rb = {0};
    sb_puts(&rb, "");
    for (uint64_t i = 0; i < j.ntasks; i++) {
        if (rc == 0 && j.rows[i] != NULL)
            sb_puts(&rb, j.rows[i]);
        free(j.rows[i]);
    }
    free(j.rows);
    for (uint64_t i = 0; i < nhw; i++)
        sys_free(&j.hw[i].sys);
    free(j.hw);
    free(j.points);
    for (unsigned t = 0; t < nloaded; t++)
        trace_free(&traces[t]);
    free(traces);
    if (rc != 0) {
        free(hb.s);
        free(rb.s);
        return -1;
    }
    *header = hb.s;
    *rows = rb.s;
    return 0;
}

/* ------------------------------------------------------------ files */

/* What makes two shard files parts of one sweep: the config, the overrides,
 * the keys and values and the traces (FNV-1a). */
static uint64_t signature(const struct sweep *s)
{
    uint64_t h = 1469598103934665603ull;
#define MIX_(str)                                                            \
    for (const char *q_ = (str); ; q_++) {                                   \
        h = (h ^ (unsigned char)*q_) * 1099511628211ull;                     \
        if (*q_ == '\0')                                                     \
            break;                                                           \
    }
    MIX_(s->hw);
    for (unsigned i = 0; i < s->base.n; i++) {
        MIX_(s->base.set[i].key);
        MIX_(s->base.set[i].value);
    }
    for (unsigned i = 0; i < s->nkeys; i++) {
        MIX_(s->key[i].key);
        for (unsigned v = 0; v < s->key[i].nvalues; v++)
            MIX_(s->key[i].values[v]);
    }
    for (unsigned t = 0; t < s->ntraces; t++)
        MIX_(s->trace_path[t]);
    h ^= (uint64_t)s->zip;
#undef MIX_
    return h;
}

int sweep_write_csv(const char *path, const struct sweep *s, const struct sweep_opts *o,
                    const char *header, const char *rows, struct diag *d)
{
    struct afile a;
    if (afile_open(&a, path, d) != 0)
        return -1;
    if (o->nshards > 1)
        fprintf(a.f, "# strata sweep shard %u/%u: %llu points x %u traces, sweep %016llx\n",
                o->shard, o->nshards, (unsigned long long)s->npoints, s->ntraces,
                (unsigned long long)signature(s));
    fputs(header, a.f);
    fputs(rows, a.f);
    return afile_commit(&a, d);
}

static char *slurp(const char *path, struct diag *d)
{
    FILE *f = fopen(path, "rb");
    if (f == NULL)
        return diag_set(d, DIAG_E_IO, path, 0, "", "cannot open"), NULL;
    afile_note_input(f);
    struct sb b = {0};
    char buf[65536];
    size_t n;
    sb_puts(&b, "");
    while ((n = fread(buf, 1, sizeof buf, f)) > 0)
        sb_putn(&b, buf, n);
    int err = ferror(f);
    fclose(f);
    if (err) {
        free(b.s);
        return diag_set(d, DIAG_E_IO, path, 0, "", "cannot read"), NULL;
    }
    return b.s;
}

struct mrow {
    uint64_t point;
    uint64_t seq;               /* order of arrival, to keep a point's traces in order */
    const char *text;
    size_t len;
};

static int mrow_cmp(const void *a, const void *b)
{
    const struct mrow *x = a, *y = b;
    if (x->point != y->point)
        return x->point < y->point ? -1 : 1;
    return x->seq < y->seq ? -1 : x->seq > y->seq;
}

int sweep_merge(const char *const *paths, unsigned n, const char *out, struct diag *d)
{
    char **text = sim_xcalloc(n ? n : 1, sizeof *text);
    unsigned nsh = 0, ntr = 0;
    unsigned long long npts = 0, sig = 0;
    unsigned char *seen = NULL;
    const char *header = NULL;
    size_t hlen = 0;
    struct mrow *rows = NULL;
    size_t nrows = 0, cap = 0;
    int rc = 0;
    for (unsigned i = 0; i < n && rc == 0; i++) {
        if ((text[i] = slurp(paths[i], d)) == NULL) {
            rc = -1;
            break;
        }
        unsigned sh, N, T;
        unsigned long long P, S;
        int used = 0;
        if (sscanf(text[i], "# strata sweep shard %u/%u: %llu points x %u traces, sweep %llx%n",
                   &sh, &N, &P, &T, &S, &used) != 5 || text[i][used] != '\n') {
            rc = diag_set(d, DIAG_E_PARSE, paths[i], 1, "", "not a shard of a strata sweep "
                          "(no '# strata sweep shard i/N' first line)");
            break;
        }
        if (i == 0) {
            nsh = N, npts = P, ntr = T, sig = S;
            seen = sim_xcalloc(N, 1);
        } else if (N != nsh || P != npts || T != ntr || S != sig) {
            rc = diag_set(d, DIAG_E_RANGE, paths[i], 1, "", "a shard of another sweep than %s "
                          "(its shard count, points, traces or sweep signature differ)", paths[0]);
            break;
        }
        if (sh >= nsh || seen[sh]) {
            rc = diag_set(d, DIAG_E_DUPLICATE, paths[i], 1, "", "shard %u/%u given twice", sh,
                          nsh);
            break;
        }
        seen[sh] = 1;
        const char *h = text[i] + used + 1, *e = strchr(h, '\n');
        if (e == NULL) {
            rc = diag_set(d, DIAG_E_PARSE, paths[i], 2, "", "no header line");
            break;
        }
        if (header == NULL) {
            header = h;
            hlen = (size_t)(e - h + 1);
        } else if ((size_t)(e - h + 1) != hlen || memcmp(h, header, hlen) != 0) {
            rc = diag_set(d, DIAG_E_PARSE, paths[i], 2, "", "header differs from %s's", paths[0]);
            break;
        }
        int line = 3;
        for (const char *r = e + 1; *r != '\0'; line++) {
            const char *re = strchr(r, '\n');
            char *end;
            unsigned long long p = strtoull(r, &end, 10);
            if (re == NULL || end == r || *end != ',' || p >= npts || p % nsh != sh) {
                rc = diag_set(d, DIAG_E_PARSE, paths[i], line, "point",
                              "not a row of shard %u/%u of this sweep", sh, nsh);
                break;
            }
            if (nrows == cap) {
                cap = cap ? cap * 2 : 1024;
                rows = sim_xrealloc(rows, cap * sizeof *rows);
            }
            rows[nrows] = (struct mrow){p, nrows, r, (size_t)(re - r + 1)};
            nrows++;
            r = re + 1;
        }
    }
    for (unsigned k = 0; k < nsh && rc == 0; k++)
        if (!seen[k])
            rc = diag_set(d, DIAG_E_MISSING, "--merge", 0, "", "shard %u/%u is missing", k, nsh);
    if (rc == 0 && nrows != npts * ntr)
        rc = diag_set(d, DIAG_E_MISSING, "--merge", 0, "", "%zu rows; a complete sweep has %llu "
                      "(%llu points x %u traces)", nrows, npts * ntr, npts, ntr);
    if (rc == 0) {
        qsort(rows, nrows, sizeof *rows, mrow_cmp);
        struct afile a;
        if (afile_open(&a, out, d) != 0)
            rc = -1;
        else {
            fwrite(header, 1, hlen, a.f);
            for (size_t i = 0; i < nrows; i++)
                fwrite(rows[i].text, 1, rows[i].len, a.f);
            rc = afile_commit(&a, d);
        }
    }
    for (unsigned i = 0; i < n; i++)
        free(text[i]);
    free(text);
    free(seen);
    free(rows);
    return rc;
}
