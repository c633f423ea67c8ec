/* sustained.c: the clock a power limit holds.  See sustained.h.
 *
 * A sustained run: a power limit that a run at the config's clock passes
 * pulls the clock down until the hottest device's average power meets it
 * (the power management of NVIDIA and AMD boards, in its steady state;
 * docs/energy.md).  Every device runs at that one clock.
 *
 * Each clock tried is a simulation, so the search is guided by a model of
 * what a clock scale s does to the hottest device: its core-domain energy
 * (pipes, registers, scratchpads, caches) E_c scales by s^2, its DRAM and
 * link energy E_m stays, and its time is T(s) = T(1) (a / s + 1 - a), a
 * the share of the time that runs at the core's pace; so
 *     P(s) = (E_c s^2 + E_m) / T(s) + P_idle.
 * a starts at the share of the device's time it was busy or waiting on a
 * level of the core clock, and is refitted from each run's
 * time, with a factor on P for what the model misses; the model's root,
 * kept inside the bracket the runs have found, is the next clock to try.
 * The search stops at a clock whose power is within SUSTAINED_POWER_TOL
 * under the limit (two or three runs, usually), and the result is the
 * fastest clock tried that meets the limit; with a timeline, that clock is
 * run once more to record it.
 *
 * What it ignores: the board's transients (boost above the sustained
 * clock, thermal limits), per-device clocks, and the voltage floor below
 * which a lower clock saves no more than linear power.
 */
#include "sustained.h"

#include <math.h>

#include "energy.h"

#define SUSTAINED_POWER_TOL 0.02
#define SUSTAINED_POWER_ITERS 10

/* The model of the hottest device (see the top of the file). */
struct power_model {
    double ec, em;                  /* its energy at the config's clock, J: core domain, rest */
    double t1;                      /* the run's time at the config's clock, s */
    double a;                       /* share of the time at the core's pace */
    double idle;                    /* idle power, W */
};

/* The model's power at clock scale s, times the bias b the runs found. */
static double power_model(const struct power_model *m, double b, double s)
{
    return b * ((m->ec * s * s + m->em) / (m->t1 * (m->a / s + 1.0 - m->a)) + m->idle);
}

/* The model's clock for power limit w: P(s) rises with s, so bisection. */
static double power_model_clock(const struct power_model *m, double b, double w)
{
    double lo = SUSTAINED_MIN_CLOCK, hi = 1.0;
    for (int i = 0; i < 60; i++) {
        double s = 0.5 * (lo + hi);
        double p = power_model(m, b, s);
        if (p > w)
            hi = s;
        else
            lo = s;
    }
    return lo;
}

/* The model from the run at the config's clock: the hottest device's
 * energy by domain, and a's first guess. */
static void model_first(struct power_model *m, const struct hw_config *c, const struct trace *t,
                        const struct sustained_view *v)
{
    m->t1 = (double)v->total_ps * 1e-12;
    m->ec = 0;
    m->em = 0;
    m->idle = c->idle_w;
    for (uint32_t i = 0; i < v->nops; i++) {
        if (t->ops[i].device != v->hot)
            continue;
        double core, e = energy_op(c, &v->body[v->op[i].body], NULL, &core);
        m->ec += core;
        m->em += e - core;
    }
    /* a's first guess: the share of the device's time its pipes were busy
     * or it waited on a level of the core clock (shared memory, caches) */
    const double *row = v->hot_time_ps;
    double core_ps = row[CAT_BUSY];
    for (unsigned l = 0; l < c->nlevels; l++)
        if (c->level[l].kind == LK_SCRATCHPAD || c->level[l].kind == LK_CACHE)
            core_ps += row[CAT_STALL + l];
    double a = m->t1 > 0 ? core_ps * 1e-12 / m->t1 : 1.0;
    m->a = a < 0.0 ? 0.0 : a > 1.0 ? 1.0 : a;
}

/* The search proper, from the run at the config's clock (v): the clocks
 * it tries; *ok the fastest that met the limit (0: none), *at the last
 * tried.  0, or the failing run's -1. */
static int search_clocks(const struct hw_config *c, const struct trace *t, sustained_run_fn run,
                         void *ctx, struct sustained_view *v, uint32_t *runs, double *ok,
                         double *at)
{
    const double limit = c->power_limit_w;
    struct power_model m;
    model_first(&m, c, t, v);
    /* aim inside the tolerance band, not at its edge */
    const double aim = limit * (1.0 - 0.5 * SUSTAINED_POWER_TOL);
    double over = 1.0;              /* slowest clock passing the limit */
    double b = 1.0;                 /* what the model misses, as a factor on its power */
    double s = power_model_clock(&m, b, aim);
    *ok = 0;
    *at = 1.0;
    for (uint32_t it = 0; it < SUSTAINED_POWER_ITERS; it++) {
        if (!(s > *ok && s < over))
            s = *ok > 0 ? 0.5 * (*ok + over) : 0.5 * (SUSTAINED_MIN_CLOCK + over);
        int rc = run(ctx, s, 0, v);
        if (rc != 0)
            return rc;
        double w = v->hot_w;
        (*runs)++;
        *at = s;
        if (w <= limit) {
            *ok = s;
            if (w >= limit * (1.0 - SUSTAINED_POWER_TOL) || s <= SUSTAINED_MIN_CLOCK)
                break;
        } else {
            over = s;
        }
        double ts = (double)v->total_ps * 1e-12;
        if (s < 1.0 && ts > m.t1)
            m.a = (ts / m.t1 - 1.0) / (1.0 / s - 1.0);
        m.a = m.a < 0.0 ? 0.0 : m.a > 1.0 ? 1.0 : m.a;
        b = w / power_model(&m, 1.0, s);
        double next = power_model_clock(&m, b, aim);
        if (fabs(next - s) < 1e-6)
            break;              /* the model has nothing more to say */
        s = next;
        if (s <= SUSTAINED_MIN_CLOCK && *ok == 0)
            s = SUSTAINED_MIN_CLOCK;
    }
    return 0;
}

int sustained_search(const struct hw_config *c, const struct trace *t, int record,
                     sustained_run_fn run, void *ctx, struct sustained_result *res)
{
    res->clock = 0;
    res->runs = 0;
    res->floor = 0;
    struct sustained_view v;
    uint32_t runs = 1;
    int rc = run(ctx, 1.0, 0, &v);
    if (rc != 0)
        return rc;
    if (v.hot_w <= c->power_limit_w) {
        res->clock = 1.0;
        res->runs = runs;
        if (!record)
            return 0;
        return run(ctx, 1.0, 1, &v);    /* again, to record the timeline */
    }
    double ok, at;
    if ((rc = search_clocks(c, t, run, ctx, &v, &runs, &ok, &at)) != 0)
        return rc;
    int floor = ok == 0;
    if (floor)
        ok = SUSTAINED_MIN_CLOCK;   /* the floor: still over the limit there */
    if (at != ok || record) {
        if ((rc = run(ctx, ok, record, &v)) != 0)
            return rc;
        runs += at != ok;           /* a rerun only to record the timeline is not a search's */
    }
    res->clock = ok;
    res->runs = runs;
    res->floor = floor;
    return 0;
}
