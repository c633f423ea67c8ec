/* eq.h: the event queue.
 *
 * A binary min-heap of events keyed by (time_ps, seq).  seq is a counter
 * taken at push, so events with equal time fire in the order they were
 * pushed (FIFO).  This tie rule is what makes runs byte-for-byte
 * reproducible; do not change it.
 *
 * Storage is preallocated by eq_init(); the queue only grows (doubling) if
 * more events are pending at once than the capacity asked for, and counts
 * how often that happened (eq.grows) so the hot path can be checked to be
 * malloc-free.  Pushing an event into the past is refused (returns 0).
 * Cancellation takes the event out of the heap at once (each slot knows its
 * heap position): a flow server reschedules its completion on every flow
 * start and end, and the cancelled events, left in the heap until their
 * time came, made it grow with the run (a third of a 64-GPU training
 * step's time went to sifting them).  The heap holds each event's key
 * (time, seq) beside its slot index, so sifting compares entries of one
 * array instead of fetching a slot per comparison: with a thousand devices
 * pending the slots are spread over megabytes (a cache miss each).
 */
#ifndef STRATA_EQ_H
#define STRATA_EQ_H

#include <stdint.h>

struct eq_event {
    uint64_t time_ps;   /* when it fires, simulated picoseconds */
    uint64_t seq;       /* push order, breaks ties */
    uint32_t comp;      /* component that handles it */
    uint32_t type;      /* component-defined event type */
    uint64_t arg;       /* component-defined */
    void *ptr;          /* component-defined */
};

struct eq_slot {
    struct eq_event ev;
    uint32_t gen;       /* bumped when the slot is reused, so stale handles miss */
    uint32_t next_free; /* free-list link */
};

/* A heap entry: the event's key and where the event is. */
struct eq_key {
    uint64_t time_ps;
    uint64_t seq;
    uint32_t slot;
};

struct eq {
    struct eq_slot *slots;
    struct eq_key *heap;   /* keys and slot indices, a binary min-heap on (time_ps, seq) */
    uint32_t *pos;      /* pos[slot]: the slot's index in the heap while pushed (an array
                           of its own: a sift moves a few entries and writes each one's
                           pos, and 4-byte entries keep those writes in a few cache lines
                           where the slots, 64 bytes each, spread them over megabytes) */
    uint32_t size;      /* events in the heap (a cancelled one leaves it at once) */
    uint32_t cap;
    uint32_t free_head; /* UINT32_MAX = none */
    uint64_t next_seq;
    uint64_t now_ps;    /* time of the last popped event */
    uint64_t grows;     /* how many times storage had to grow */
};

/* Returns 0 (it cannot fail: out of memory aborts with the size, check.h). */
int eq_init(struct eq *q, uint32_t capacity);
void eq_destroy(struct eq *q);
/* Push; returns a handle (never 0) for eq_cancel, or 0 if time_ps < now. */
uint64_t eq_push(struct eq *q, uint64_t time_ps, uint32_t comp, uint32_t type,
                 uint64_t arg, void *ptr);
/* Take the next push order now, for an event pushed later with
 * eq_push_seq: it sorts among equal times as if it had been pushed at the
 * take (each taken seq pushed at most once). */
uint64_t eq_take_seq(struct eq *q);
uint64_t eq_push_seq(struct eq *q, uint64_t time_ps, uint64_t seq, uint32_t comp,
                     uint32_t type, uint64_t arg, void *ptr);
/* Give a pending event a new time and push order (as eq_cancel, then
 * eq_push_seq of the same event, but one sift; the handle stays good).
 * 0, or -1 if the handle is stale or time_ps is in the past (nothing done). */
int eq_move(struct eq *q, uint64_t handle, uint64_t time_ps, uint64_t seq);
/* Pop the earliest live event into *out; returns 0 if the queue is empty. */
int eq_pop(struct eq *q, struct eq_event *out);
/* Earliest live event, or NULL. */
const struct eq_event *eq_peek(struct eq *q);
/* Cancel a pending event; a stale or fired handle is ignored. */
void eq_cancel(struct eq *q, uint64_t handle);

#endif
