/* engine.c: see engine.h. */
#include "engine.h"

#include <stdlib.h>
#include <string.h>

#include "check.h"
#include "membudget.h"

int engine_init(struct engine *e, uint32_t capacity)
{
    memset(e, 0, sizeof *e);
    e->max_events = UINT64_MAX;
    return eq_init(&e->q, capacity);
}

void engine_destroy(struct engine *e)
{
    eq_destroy(&e->q);
    arena_free(&e->arena);
    free(e->comps);
    e->comps = NULL;
    free(e->defer);
    e->defer = NULL;
    e->ndefer = e->capdefer = 0;
    e->ncomps = e->capcomps = 0;
}

uint32_t engine_register(struct engine *e, const struct comp_ops *ops, void *self)
{
    if (e->ncomps == e->capcomps) {
        uint32_t cap = e->capcomps ? 2 * e->capcomps : 16;
        SIM_CHECK(cap > e->ncomps);
        e->comps = sim_xrealloc(e->comps, (size_t)cap * sizeof *e->comps);  /* setup only */
        e->capcomps = cap;
    }
    e->comps[e->ncomps].ops = ops;
    e->comps[e->ncomps].self = self;
    return e->ncomps++;
}

/* Push at at_ps (not past the horizon) with push order seq. */
static uint64_t engine_push(struct engine *e, uint64_t at_ps, uint64_t seq, uint32_t comp,
                            uint32_t type, uint64_t arg, void *ptr)
{
    SIM_CHECK(comp < e->ncomps);
    uint64_t h = eq_push_seq(&e->q, at_ps, seq, comp, type, arg, ptr);
    SIM_CHECK(h != 0);
    return h;
}

uint64_t engine_at(struct engine *e, uint64_t at_ps, uint32_t comp, uint32_t type,
                   uint64_t arg, void *ptr)
{
    SIM_CHECK_LE_U64(e->now_ps, at_ps); /* never schedule into the past */
    if (at_ps > ENGINE_MAX_PS) {
        e->overflow = 1;
        return 0;                           /* a handle that cancels nothing */
    }
    return engine_push(e, at_ps, eq_take_seq(&e->q), comp, type, arg, ptr);
}

uint64_t engine_move_after(struct engine *e, uint64_t handle, uint64_t delay_ps, uint64_t seq,
                           uint32_t comp, uint32_t type, uint64_t arg, void *ptr)
{
    if (delay_ps > ENGINE_MAX_PS - e->now_ps) {
        eq_cancel(&e->q, handle);
        e->overflow = 1;
        return 0;
    }
    if (handle != 0 && eq_move(&e->q, handle, e->now_ps + delay_ps, seq) == 0)
        return handle;
    return engine_push(e, e->now_ps + delay_ps, seq, comp, type, arg, ptr);
}

void engine_defer(struct engine *e, void (*run)(struct engine *e, void *self), void *self)
{
    if (e->ndefer == e->capdefer) {
        uint32_t cap = e->capdefer ? 2 * e->capdefer : 64;
        SIM_CHECK(cap > e->ndefer);
        e->defer = sim_xrealloc(e->defer, (size_t)cap * sizeof *e->defer);
        e->capdefer = cap;
    }
    e->defer[e->ndefer].run = run;
    e->defer[e->ndefer].self = self;
    e->ndefer++;
}

/* What the last event's handler deferred (what those defer runs too). */
static void engine_flush(struct engine *e)
{
    for (uint32_t i = 0; i < e->ndefer; i++)
        e->defer[i].run(e, e->defer[i].self);
    e->ndefer = 0;
}

uint64_t engine_after(struct engine *e, uint64_t delay_ps, uint32_t comp,
                      uint32_t type, uint64_t arg, void *ptr)
{
    if (delay_ps > ENGINE_MAX_PS - e->now_ps) { /* also keeps the sum from wrapping */
        e->overflow = 1;
        return 0;
    }
    return engine_at(e, e->now_ps + delay_ps, comp, type, arg, ptr);
}

void engine_cancel(struct engine *e, uint64_t handle)
{
    eq_cancel(&e->q, handle);
}

void engine_run(struct engine *e)
{
    struct eq_event ev;
    engine_flush(e);
    while (!e->overflow && eq_pop(&e->q, &ev)) {
        if (e->events >= e->max_events) {
            e->over_budget = 1;
            break;
        }
        if ((e->events & (ENGINE_TICK_EVENTS - 1)) == ENGINE_TICK_EVENTS - 1) {
            if (membudget_exceeded(0)) {
                e->over_memory = 1;
                break;
            }
            if (e->tick != NULL)
                e->tick(e->tick_ctx);
        }
        e->now_ps = ev.time_ps;
        e->events++;
        e->comps[ev.comp].ops->handle(e, e->comps[ev.comp].self, &ev);
        engine_flush(e);
    }
}
