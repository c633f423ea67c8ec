/* engine.h: the discrete-event engine.
 *
 * One struct engine per simulation; it owns the event queue and a table of
 * components.  A component is a (function table, state) pair registered
 * with engine_register(); events carry the component index and are
 * dispatched to its handle() function.  The engine knows nothing about
 * hardware.  No globals: any number of engines may live in one process
 * (and on different threads).
 *
 * Simulated time is uint64_t picoseconds.
 */
#ifndef STRATA_ENGINE_H
#define STRATA_ENGINE_H

#include <stdint.h>

#include "arena.h"
#include "eq.h"

/* Simulated time is kept in picoseconds in 64 bits.  A run that would pass
 * 2^62 ps (4.6e6 s, 53 days) stops with engine.overflow set instead of
 * wrapping (an op far too large for the chip). */
#define ENGINE_MAX_PS (UINT64_C(1) << 62)

/* How often the engine looks up from its events: the memory budget and
 * the tick (a power of two: a mask test on the event count). */
#define ENGINE_TICK_EVENTS 65536u

struct engine;

struct comp_ops {
    const char *name;
    void (*handle)(struct engine *e, void *self, const struct eq_event *ev);
};

/* Work a component asks to have done once the event now being handled is
 * over (engine_defer). */
struct engine_deferred {
    void (*run)(struct engine *e, void *self);
    void *self;
};

struct engine {
    struct eq q;
    uint64_t now_ps;                    /* current simulated time */
    uint64_t events;                    /* events dispatched so far */
    int overflow;                       /* something was scheduled past ENGINE_MAX_PS: stopped */
    uint64_t max_events;                /* the run's work budget: stop after this many
                                           (engine_init: UINT64_MAX, none) */
    int over_budget;                    /* stopped at max_events */
    int over_memory;                    /* stopped: the memory budget (membudget.h) was
                                           passed, checked every ENGINE_TICK_EVENTS events */
    void (*tick)(void *ctx);            /* called every ENGINE_TICK_EVENTS events with
                                           tick_ctx (a progress line), or NULL */
    void *tick_ctx;
    uint32_t ncomps, capcomps;
    struct engine_comp {
        const struct comp_ops *ops;
        void *self;
    } *comps;                           /* grows as components register (setup only) */
    struct engine_deferred *defer;      /* engine_defer's list, in order */
    uint32_t ndefer, capdefer;
    struct arena arena;                 /* what lives as long as the run: devices' state, flow
                                           storage (arena.h); freed by engine_destroy */
};

/* capacity: events expected to be pending at once (the queue grows if needed). */
int engine_init(struct engine *e, uint32_t capacity);
void engine_destroy(struct engine *e);
/* Returns the component index. */
uint32_t engine_register(struct engine *e, const struct comp_ops *ops, void *self);
/* Schedule at now + delay_ps; returns a handle for engine_cancel. */
uint64_t engine_after(struct engine *e, uint64_t delay_ps, uint32_t comp,
                      uint32_t type, uint64_t arg, void *ptr);
/* Schedule at absolute time at_ps >= now. */
uint64_t engine_at(struct engine *e, uint64_t at_ps, uint32_t comp, uint32_t type,
                   uint64_t arg, void *ptr);
void engine_cancel(struct engine *e, uint64_t handle);
/* Move a pending event to now + delay_ps with push order seq (eq_move):
 * returns its handle; a stale handle (0 included) is pushed anew with
 * comp, type, arg and ptr. */
uint64_t engine_move_after(struct engine *e, uint64_t handle, uint64_t delay_ps, uint64_t seq,
                           uint32_t comp, uint32_t type, uint64_t arg, void *ptr);
/* Run run(e, self) once the event being handled has been handled (or, out
 * of an event, when engine_run starts).  The caller asks once (a flow
 * server keeps a flag): a flow server that several flows start on in one
 * event shares its bandwidth out once, not once a flow.  The list grows
 * (doubling) only when more are deferred in one event than ever before. */
void engine_defer(struct engine *e, void (*run)(struct engine *e, void *self), void *self);
/* Run until no events are left. */
void engine_run(struct engine *e);

#endif
