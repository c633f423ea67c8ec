/* whatif.c: see whatif.h. */
#include "whatif.h"

#include <pthread.h>
#include <stdio.h>
#include <string.h>

#include "run.h"

struct whatif_job {
    const struct hw_system *sys;
    const struct trace *t;
    unsigned first, step;      /* runs what-ifs first, first+step, ... */
    int sustained;             /* each at the clock its power limit allows (run_opts) */
    double time_s[WHATIF_COUNT];    /* < 0: that run failed */
};

static void *whatif_worker(void *arg)
{
    struct whatif_job *j = arg;
    for (unsigned i = j->first; i < WHATIF_COUNT; i += j->step) {
        struct hw_system sys = *j->sys;     /* shares the nodes and links, read only */
        struct hw_config c = sys.chip;
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
        sys.chip = c;
        struct run_opts o = {.sustained = j->sustained};
        if (run_system_opts(&sys, j->t, &o, &r, &d) != 0)
            continue;
        j->time_s[i] = (double)r.total_ps * 1e-12;
        run_result_free(&r);
    }
    return NULL;
}

unsigned whatif_run(const struct hw_system *sys, const struct trace *t, int sustained,
                    struct whatif *w)
{
    static const struct { const char *name, *desc; } k[WHATIF_COUNT] = {
        {"dram_bw_x2", "bandwidth x2"},        /* of the DRAM level, named in the description */
        {"l2_bw_x2", "bandwidth x2"},          /* of the first cache */
        {"matrix_x2", "matrix pipe FLOP/s x2"},
        {"vector_x2", "vector pipe FLOP/s x2"},
        {"no_launch", "zero kernel launch overhead"},
    };
    struct whatif_job j[2] = {{sys, t, 0, 2, sustained, {0}}, {sys, t, 1, 2, sustained, {0}}};
    const struct hw_config *cfg = &sys->chip;
    pthread_t th;
    int threaded = pthread_create(&th, NULL, whatif_worker, &j[1]) == 0;
    if (!threaded)
        j[0].step = 1; /* no second thread: this one runs them all */
    whatif_worker(&j[0]);
    if (threaded)
        pthread_join(th, NULL);
    unsigned n = 0;
    for (unsigned i = 0; i < WHATIF_COUNT; i++) {
        double ts = j[threaded ? i % 2 : 0].time_s[i];
        if (ts < 0)
            continue;
        snprintf(w[n].name, sizeof w[n].name, "%s", k[i].name);
        if (i < 2)
            snprintf(w[n].description, sizeof w[n].description, "%s %s",
                     cfg->level[i == 0 ? cfg->lv_dram : cfg->lv_cache[0]].name, k[i].desc);
        else
            snprintf(w[n].description, sizeof w[n].description, "%s", k[i].desc);
        if (sustained) {    /* each at the clock its own power holds */
            size_t u = strlen(w[n].description);
            snprintf(w[n].description + u, sizeof w[n].description - u, " (sustained)");
        }
        w[n].total_time_s = ts;
        n++;
    }
    return n;
}
