/* kplan.c: the pieces every kernel plan of the tiled model uses: how many
 * CTAs a unit holds, what a read/write mix costs the DRAM, and the
 * streaming kernel (elementwise, row kernels, copies through the SMs).
 *
 * What it models.  Occupancy is the least of the unit's CTA, thread,
 * shared-memory and register limits.  Streaming and row kernels
 * (elementwise, softmax, norms) are grid-stride loops on a persistent grid
 * (kplan_stream): no tiles, no reuse, each thread keeping one access per
 * input in flight.  A kernel that reads and writes DRAM loses some of its
 * bandwidth to turnarounds (the chip's rw_turnaround_penalty).
 */
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "tiled.h"

/* DRAM capacity used per byte when a kernel mixes reads and writes. */
double kplan_dram_cost(const struct hw_config *c, double rd, double wr)
{
    double tot = rd + wr;
    if (tot <= 0)
        return 1.0;
    double mix = 2.0 * dmin(rd, wr) / tot;
    return 1.0 / (1.0 - cfg_dram(c)->eff_rw_penalty * mix);
}

void kplan_occupancy(const struct hw_config *c, struct kplan *p, uint32_t threads,
                     double smem_cta, double regs_cta)
{
    uint64_t cpu = c->max_ctas_per_unit;
    cpu = umin(cpu, c->max_threads_per_unit / threads);
    if (smem_cta > 0)
        cpu = umin(cpu, (uint64_t)((double)cfg_smem(c)->capacity_bytes / smem_cta));
    if (regs_cta > 0)
        cpu = umin(cpu, (uint64_t)((double)cfg_regs(c)->capacity_bytes / regs_cta));
    p->ctas_per_unit = cpu > 0 ? (uint32_t)cpu : 1;
}

/* A streaming kernel over `items` work items of `item_bytes` loaded bytes:
 * a grid-stride loop on a persistent grid (at most one full wave), as
 * PyTorch's and CUTLASS's elementwise kernels effectively behave.
 * min_ctas forces at least that many CTAs (one per row for row kernels). */
void kplan_stream(const struct hw_config *c, struct kplan *p, const char *what,
                  double load_bytes, double store_bytes, double vflops,
                  enum dtype vdt, uint64_t rows, uint32_t inputs, double vec_bytes)
{
    memset(p, 0, sizeof *p);
    snprintf(p->what, sizeof p->what, "%s", what);
    uint32_t threads = 256;
    kplan_occupancy(c, p, threads, 0, 0);
    double per_step = threads * vec_bytes * (inputs > 0 ? inputs : 1);
    double traffic = dmax(load_bytes, store_bytes);
    uint64_t items = (uint64_t)ceil(dmax(traffic, 1.0) / per_step);
    uint64_t slots = (uint64_t)c->units * p->ctas_per_unit;
    uint64_t ctas = rows > 0 ? rows : items;
    if (ctas > slots * 64)      /* group rows so a grid is at most 64 waves */
        ctas = slots * 64;
    if (rows == 0 && ctas > slots)
        ctas = slots;
    if (ctas > items && rows == 0)
        ctas = items;
    if (ctas == 0)
        ctas = 1;
    uint64_t steps = ceil_div(items, ctas);
    if (steps == 0)
        steps = 1;
    p->gm = ctas;
    p->gn = 1;
    p->gb = 1;
    p->swizzle = 1;
    p->ksteps = (uint32_t)umin(steps, UINT32_MAX);
    p->stages = 2;
    double per_cta_step = 1.0 / ((double)ctas * (double)p->ksteps);
    p->a_step = load_bytes * per_cta_step;
    p->store_step = store_bytes * per_cta_step;
    p->vflops_step = vflops * per_cta_step;
    p->smem_step = 0;
    /* each thread keeps one access per input in flight */
    p->inflight_cta = dmin(per_step, dmax(p->a_step * p->ksteps, 1.0));
    p->async_copy = 0;
    p->vdt = vdt;
    p->mdt = vdt;
    p->dram_cost = kplan_dram_cost(c, load_bytes, store_bytes);
    snprintf(p->tile, sizeof p->tile, "%llu ctas x %u steps",
             (unsigned long long)ctas, p->ksteps);
}
