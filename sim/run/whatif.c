/* whatif.c: see whatif.h. */
#include "whatif.h"

#include <pthread.h>
#include <stdio.h>
#include <string.h>

#include "run.h"

struct whatif_job {
    const struct hw_config *cfg;
    const struct trace *t;
    unsigned first, step;      /* runs what-ifs first, first+step, ... */
    double time_s[WHATIF_COUNT];    /* < 0: that run failed */
};

static void *whatif_worker(void *arg)
{
    struct whatif_job *j = arg;
    for (unsigned i = j->first; i < WHATIF_COUNT; i += j->step) {
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

unsigned whatif_run(const struct hw_config *cfg, const struct trace *t, struct whatif *w)
{
    static const struct { const char *name, *desc; } k[WHATIF_COUNT] = {
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
    for (unsigned i = 0; i < WHATIF_COUNT; i++) {
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
