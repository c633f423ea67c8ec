/* flow.c: max-min fair fluid bandwidth server.  See flow.h.
 *
 * Between two changes every flow drains at a constant rate, so the next
 * completion time is exact; it is rounded up to a whole picosecond and one
 * event is kept scheduled for it (cancelled and replaced on every change).
 * A flow counts as finished when less than FLOW_EPS of it is left, which
 * absorbs the rounding.
 */
#include "flow.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "check.h"

#define FLOW_EPS 1e-6

enum { FLOWSRV_EV_DONE = 1 };

static void flowsrv_handle(struct engine *e, void *self, const struct eq_event *ev);

static void flowsrv_resched_run(struct engine *e, void *self);

static const struct comp_ops flowsrv_ops = {"flowsrv", flowsrv_handle};

void flowsrv_init(struct flowsrv *s, struct engine *e, const char *name,
                  double capacity_per_s)
{
    memset(s, 0, sizeof *s);
    snprintf(s->name, sizeof s->name, "%s", name);
    s->capacity = capacity_per_s * 1e-12;
    s->comp = engine_register(e, &flowsrv_ops, s);
    /* storage comes with the first flow: most of a big system's links
     * and idle devices' servers never serve one */
}

void flowsrv_destroy(struct flowsrv *s)
{
    s->flows = s->fin = NULL;
    s->order = NULL;
}

/* Bring remaining[] up to now. */
static void flowsrv_advance(struct flowsrv *s, uint64_t now)
{
    if (now > s->last_ps) {
        double dt = (double)(now - s->last_ps);
        if (s->nflows > 0)
            s->busy_ps += now - s->last_ps;
        if (s->saturated)
            s->saturated_ps += now - s->last_ps;
        double sum = 0;
        for (uint32_t i = 0; i < s->nflows; i++) {
            double d = s->flows[i].rate * dt;
            if (d > s->flows[i].remaining)
                d = s->flows[i].remaining;
            s->flows[i].remaining -= d;
            sum += d;
        }
        s->served += sum;
        if (s->observe != NULL && sum > 0)
            s->observe(s->observe_ctx, s->last_ps, now, sum);
    }
    s->last_ps = now;
}

uint64_t flowsrv_saturated_at(const struct flowsrv *s, uint64_t now)
{
    return s->saturated_ps + (s->saturated && now > s->last_ps ? now - s->last_ps : 0);
}

/* Max-min fair rates by water filling: visit flows in increasing cap.
 * Returns the time the first of them finishes at those rates (ps): the
 * least remaining / rate, taken as each rate is set. */
static double flowsrv_share(struct flowsrv *s)
{
    uint32_t *order = s->order;
    uint32_t n = s->nflows;
    if (n == 1) {
        /* nine share-outs in ten of a data-parallel step: the same sums
         * without the order array, a cache line of its own */
        struct flow *f = &s->flows[0];
        double fair = s->capacity / 1.0;
        f->rate = f->cap < fair ? f->cap : fair;
        s->saturated = s->capacity - f->rate <= s->capacity * 1e-9;
        return f->remaining / f->rate;
    }
    for (uint32_t i = 0; i < n; i++) {
        uint32_t j = i;
        while (j > 0 && s->flows[order[j - 1]].cap > s->flows[i].cap) {
            order[j] = order[j - 1];
            j--;
        }
        order[j] = i;
    }
    double left = s->capacity, best = INFINITY;
    for (uint32_t k = 0; k < n; k++) {
        struct flow *f = &s->flows[order[k]];
        double fair = left / (double)(n - k);
        f->rate = f->cap < fair ? f->cap : fair;
        left -= f->rate;
        double t = f->remaining / f->rate;  /* the least of a set: any order gives it */
        if (t < best)
            best = t;
    }
    s->saturated = left <= s->capacity * 1e-9;
    return best;
}

/* New rates and the next completion, once the event that changed the
 * flows is over (flowsrv_reschedule deferred it).  The completion takes
 * the push order of the last change, so the queue holds exactly the event
 * it would hold had every change cancelled and pushed at once. */
static void flowsrv_resched_run(struct engine *e, void *self)
{
    struct flowsrv *s = self;
    s->resched = 0;
    s->saturated = 0;
    if (s->nflows == 0) {
        if (s->pending)
            engine_cancel(e, s->pending);
        s->pending = 0;
        return;
    }
    double best = flowsrv_share(s);
    s->shares++;
    SIM_CHECK(isfinite(best));
    /* past the engine's horizon: let engine_after flag the overflow (a
     * double that large does not convert to uint64_t) */
    uint64_t dt = best >= (double)ENGINE_MAX_PS ? ENGINE_MAX_PS + 1 : (uint64_t)ceil(best);
    s->pending = engine_move_after(e, s->pending, dt, s->pending_seq, s->comp,
                                   FLOWSRV_EV_DONE, 0, NULL);
}

/* The flows changed.  Within one event every change happens at one time
 * and the rates matter only once time moves, so the sharing is done once,
 * when the event is over: a collective that starts sixty flows on a link
 * in one event shares it out once, not sixty times (three quarters of a
 * 1,024-GPU data-parallel step's flow work went to shares undone before
 * time moved).  A change with flows left takes the push order that its
 * completion event would have taken. */
static void flowsrv_reschedule(struct flowsrv *s, struct engine *e)
{
    if (s->nflows > 0)
        s->pending_seq = eq_take_seq(&e->q);
    if (!s->resched) {
        s->resched = 1;
        engine_defer(e, flowsrv_resched_run, s);
    }
}

/* Room for cap flows: the flows, then the two scratch arrays (fin, order),
 * in one block of the engine's arena (a 65,536-device run starts four
 * servers a device); the active flows are kept, the scratch is not. */
static void flowsrv_storage(struct flowsrv *s, struct engine *e, uint32_t cap)
{
    size_t nf = (size_t)cap * sizeof(struct flow);
    char *b = arena_grow(&e->arena, s->flows, (size_t)s->nflows * sizeof(struct flow),
                         2 * nf + (size_t)cap * sizeof(uint32_t));
    s->flows = (struct flow *)b;
    s->fin = (struct flow *)(b + nf);
    s->order = (uint32_t *)(b + 2 * nf);
    s->cap = cap;
}

void flowsrv_start(struct flowsrv *s, struct engine *e, double amount,
                   double cap_per_s, flow_done_fn done, void *owner, uint64_t arg)
{
    SIM_CHECK(amount > 0);
    if (s->cap == 0) {          /* first use: once per server per run */
        flowsrv_storage(s, e, FLOWSRV_INIT_FLOWS);
    } else if (s->nflows == s->cap) {
        flowsrv_storage(s, e, 2 * s->cap);
        s->grows++;
    }
    flowsrv_advance(s, e->now_ps);
    struct flow *f = &s->flows[s->nflows++];
    f->remaining = amount;
    double cap = cap_per_s > 0 ? cap_per_s * 1e-12 : s->capacity;
    f->cap = cap < s->capacity ? cap : s->capacity;
    f->rate = 0;
    f->done = done;
    f->owner = owner;
    f->arg = arg;
    if (s->nflows > s->peak_flows)
        s->peak_flows = s->nflows;
    flowsrv_reschedule(s, e);
}

static void flowsrv_handle(struct engine *e, void *self, const struct eq_event *ev)
{
    struct flowsrv *s = self;
    (void)ev;
    s->pending = 0;
    flowsrv_advance(s, e->now_ps);
    /* Collect finished flows first, then call back: a callback may start
     * new flows on this same server. */
    /* finished flows go to a scratch copy: a callback may start flows here */
    uint32_t nfin = 0, keep = 0;
    struct flow *fin = s->fin;
    for (uint32_t i = 0; i < s->nflows; i++) {
        struct flow *f = &s->flows[i];
        double tol = FLOW_EPS * (f->remaining + f->rate + 1.0);
        if (f->remaining <= tol || f->remaining <= f->rate * 0.5) {
            s->served += f->remaining;
            fin[nfin++] = *f;
        } else {
            s->flows[keep++] = *f;
        }
    }
    s->nflows = keep;
    flowsrv_reschedule(s, e);
    for (uint32_t i = 0; i < nfin; i++)
        s->fin[i].done(e, s->fin[i].owner, s->fin[i].arg); /* s->fin may move (realloc) */
}
