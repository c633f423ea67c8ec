/* whatif.c: see whatif.h. */
#include "whatif.h"

#include <pthread.h>
#include <stdio.h>
#include <string.h>

#include "progress.h"
#include "run.h"

int whatif_build(const struct whatif_hw *h, enum hw_kind kind, const struct trace *t,
                 struct hw_system *sys, struct diag *d)
{
    if (kind == HW_CHIP) {
        struct hw_config chip = sys->chip;
        sys_from_chip(&chip, t->ndevices, (const char (*)[32])t->devices, sys);
    }
    if (h->stack != NULL && stack_apply_chip(h->stack, &sys->chip, h->stack_dir, d) != 0) {
        sys_free(sys);
        return -1;
    }
    return 0;
}

/* The run's hardware with the what-if's overrides, kv ("KEY=VALUE",
 * several separated by spaces): 0 with *sys, or -1 */
static int whatif_load(const struct whatif_hw *h, const char *kv, const struct trace *t,
                       struct hw_system *sys)
{
    struct cfg_sets sets;
    if (h->sets != NULL)
        sets = *h->sets;
    else
        memset(&sets, 0, sizeof sets);
    struct diag d;
    memset(&d, 0, sizeof d);
    if (cfg_sets_add_list(&sets, kv, "--set", &d) != 0)
        return -1;
    enum hw_kind kind;
    if (hw_load(h->path, &sets, sys, &kind, &d) != 0 || whatif_build(h, kind, t, sys, &d) != 0)
        return -1;
    return 0;
}

struct whatif_job {
    struct hw_system *sys;     /* per what-if, loaded; NULL where that failed */
    const struct trace *t;
    unsigned first, step;      /* runs what-ifs first, first+step, ... */
    int sustained;             /* each at the clock its power limit allows (run_opts) */
    double time_s[WHATIF_COUNT];    /* < 0: that run failed */
    struct prog *prog;         /* the progress line: only the job on the caller's thread */
    char label[40];            /* its text, "what-if 3 of 7" */
};

static void *whatif_worker(void *arg)
{
    struct whatif_job *j = arg;
    for (unsigned i = j->first; i < WHATIF_COUNT; i += j->step) {
        j->time_s[i] = -1;
        struct run_opts o = {.sustained = j->sustained, .progress = j->prog};
        if (j->prog != NULL) {
            snprintf(j->label, sizeof j->label, "what-if %u of %u", i + 1, WHATIF_COUNT);
            j->prog->what = j->label;
        }
        struct run_result r;
        struct diag d;
        memset(&d, 0, sizeof d);
        if (j->sys[i].chip.name[0] != '\0' && run_system_opts(&j->sys[i], j->t, &o, &r, &d) == 0) {
            j->time_s[i] = (double)r.total_ps * 1e-12;
            run_result_free(&r);
        }
    }
    return NULL;
}

/* Whether any of s's links is its chip's peer link: a system file with
 * them all taken out (--set links.nvlink=off) has no peer link to double. */
static int has_peer_links(struct hw_system *s)
{
    for (uint32_t l = 0; l < s->nlinks; l++)
        if (s->links[l].level == s->chip.lv_peer)
            return 1;
    sys_free(s);
    return 0;
}

unsigned whatif_run(const struct whatif_hw *h, const struct hw_config *base, const struct trace *t,
                    int sustained, struct prog *prog, struct whatif *w)
{
    /* name, description and override, after the level's name and a '.' for the first two */
    static const struct { const char *name, *desc, *set; } k[WHATIF_COUNT] = {
        {"dram_bw_x2", " bandwidth x2", "bandwidth=x2"},  /* the DRAM level */
        {"l2_bw_x2", " bandwidth x2", "bandwidth=x2"},    /* the first cache */
        {"matrix_x2", "matrix pipe FLOP/s x2", "compute.matrix_flops_per_cycle_per_unit=x2"},
        {"vector_x2", "vector pipe FLOP/s x2", "compute.vector_flops_per_cycle_per_unit=x2"},
        {"no_launch", "zero kernel launch overhead", "launch.kernel_overhead_ns=0"},
        {"dram_lat_x0.5", " latency x0.5", "latency=x0.5"},      /* the DRAM level, idle and loaded */
        {"link_bw_x2", " bandwidth x2", "bandwidth=x2"},         /* the peer link, several devices */
    };
    struct whatif all[WHATIF_COUNT];
    memset(all, 0, sizeof all);
    for (unsigned i = 0; i < WHATIF_COUNT; i++) {
        const char *level = i == 0 || i == 5 ? base->level[base->lv_dram].name
                            : i == 1         ? cfg_first_cache(base)->name
                            : i == 6 && base->lv_peer >= 0 ? base->level[base->lv_peer].name : "";
        snprintf(all[i].name, sizeof all[i].name, "%s", k[i].name);
        snprintf(all[i].description, sizeof all[i].description, "%s%s", level, k[i].desc);
        snprintf(all[i].set, sizeof all[i].set, "%s%s%s", level, level[0] ? "." : "", k[i].set);
        int sparse = 0;     /* a pipe twice as fast runs 2:4 sparse GEMMs twice as fast too */
        for (unsigned dt = 0; dt < DT_COUNT; dt++)
            sparse |= base->sparse_matrix_flops_per_cycle[dt] > 0;
        if (i == 5) {   /* the loaded latency too: Little's law's bytes in flight / latency */
            size_t u = strlen(all[i].set);
            snprintf(all[i].set + u, sizeof all[i].set - u, " %s.efficiency.loaded_latency=x0.5", level);
        }
        if (i == 2 && sparse) {
            size_t u = strlen(all[i].set);
            snprintf(all[i].set + u, sizeof all[i].set - u,
                     " compute.sparse_matrix_flops_per_cycle_per_unit=x2");
        }
        if (sustained) {    /* each at the clock its own power holds */
            size_t u = strlen(all[i].description);
            snprintf(all[i].description + u, sizeof all[i].description - u, " (sustained)");
        }
    }
    /* the hardware loaded here, the runs on two threads: the loaders note their inputs
     * (afile.h) and are not thread-safe */
    struct hw_system sys[WHATIF_COUNT];
    memset(sys, 0, sizeof sys);
    for (unsigned i = 0; i < WHATIF_COUNT; i++)
        if ((i == 6 && (base->lv_peer < 0 || t->ndevices < 2)) ||  /* no peer traffic */
            whatif_load(h, all[i].set, t, &sys[i]) != 0 || (i == 6 && !has_peer_links(&sys[i])))
            memset(&sys[i], 0, sizeof sys[i]);  /* left out */
    struct whatif_job j[2] = {{sys, t, 0, 2, sustained, {0}, prog, ""},
                              {sys, t, 1, 2, sustained, {0}, NULL, ""}};
    pthread_t th;
    int threaded = pthread_create(&th, NULL, whatif_worker, &j[1]) == 0;
    if (!threaded)
        j[0].step = 1; /* no second thread: this one runs them all */
    whatif_worker(&j[0]);
    if (threaded)
        pthread_join(th, NULL);
    prog_clear(prog);
    for (unsigned i = 0; i < WHATIF_COUNT; i++)
        sys_free(&sys[i]);
    unsigned n = 0;
    for (unsigned i = 0; i < WHATIF_COUNT; i++) {
        double ts = j[threaded ? i % 2 : 0].time_s[i];
        if (ts < 0)
            continue;
        w[n] = all[i];
        w[n].total_time_s = ts;
        n++;
    }
    return n;
}
