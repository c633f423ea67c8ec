/* eq.h: the event queue.
 *
 * Events ordered by (time_ps, seq).  seq is a counter taken at push, so
 * events with equal time fire in the order they were pushed (FIFO).  This
 * tie rule is what makes runs byte-for-byte reproducible; do not change it.
 *
 * The events of one time are kept together, in a bucket (a list in seq
 * order); a binary min-heap orders the buckets' times and a hash finds a
 * time's bucket (eq.c).  Many events share a time: a data-parallel run's
 * replicas reach the same times together, and a 1,024-GPU step fires
 * about 600 events at each, where a heap of events sifted 12 levels per
 * push and pop.
 *
 * Storage is preallocated by eq_init(); the queue only grows (doubling) if
 * more events are pending at once than the capacity asked for, and counts
 * how often that happened (eq.grows) so the hot path can be checked to be
 * malloc-free.  Pushing an event into the past is refused (returns 0).
 * Cancellation takes the event out at once (a flow server reschedules its
 * completion on every change of its flows; cancelled events left in until
 * their time came made the queue grow with the run).
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
    uint32_t bucket;    /* its time's bucket while pushed; UINT32_MAX when free */
    uint32_t prev, next;/* its bucket's list, in seq order (next: the free list's link) */
};

/* The events of one time. */
struct eq_bucket {
    uint64_t time_ps;
    uint32_t head, tail;    /* first and last slot, by seq */
    uint32_t hpos;          /* index in the heap */
    uint32_t next_free;     /* free-list link */
};

/* A heap entry: a bucket and its time. */
struct eq_hkey {
    uint64_t time_ps;
    uint32_t b;
};

struct eq {
    struct eq_slot *slots;
    struct eq_bucket *bk;   /* as many as slots: a bucket holds at least one event */
    struct eq_hkey *heap;   /* the buckets in use, a binary min-heap on time */
    uint32_t *hash;         /* time -> bucket + 1 (0 = empty), linear probing */
    uint32_t hmask;         /* hash entries - 1 (2 x cap) */
    uint32_t nb;            /* buckets in use (heap entries) */
    uint32_t size;          /* events pushed and not yet popped or cancelled */
    uint32_t cap;
    uint32_t free_head;     /* free slots; UINT32_MAX = none */
    uint32_t bfree;         /* free buckets */
    uint64_t next_seq;
    uint64_t now_ps;        /* time of the last popped event */
    uint64_t grows;         /* how many times storage had to grow */
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
