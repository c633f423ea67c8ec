/* eq.c: binary heap of (time_ps, seq, slot) keys, ordered by (time_ps, seq).  See eq.h. */
#include "eq.h"

#include <stdlib.h>
#include <string.h>

#include "check.h"

/* Without branches: which child is smaller is a coin toss the branch
 * predictor loses half the time. */
static int eq_less(const struct eq_key *x, const struct eq_key *y)
{
    return (x->time_ps < y->time_ps) | ((x->time_ps == y->time_ps) & (x->seq < y->seq));
}

/* Storage for cap events.  Setup, and the rare doubling when more events
 * are pending than eq_init was told (counted in q->grows): sim_xrealloc
 * aborts with the size on failure and holds a large request against the
 * memory budget. */
static void eq_reserve(struct eq *q, uint32_t cap)
{
    q->slots = sim_xrealloc(q->slots, (size_t)cap * sizeof *q->slots);
    q->heap = sim_xrealloc(q->heap, (size_t)cap * sizeof *q->heap);
    q->pos = sim_xrealloc(q->pos, (size_t)cap * sizeof *q->pos);
    for (uint32_t i = q->cap; i < cap; i++) {
        q->slots[i].gen = 1;
        q->slots[i].next_free = (i + 1 < cap) ? i + 1 : q->free_head;
    }
    if (cap > q->cap)
        q->free_head = q->cap;
    q->cap = cap;
}

int eq_init(struct eq *q, uint32_t capacity)
{
    memset(q, 0, sizeof *q);
    q->free_head = UINT32_MAX;
    if (capacity < 16)
        capacity = 16;
    eq_reserve(q, capacity);
    return 0;
}

void eq_destroy(struct eq *q)
{
    free(q->slots);
    free(q->heap);
    free(q->pos);
    memset(q, 0, sizeof *q);
}

static void eq_place(struct eq *q, uint32_t i, const struct eq_key *k)
{
    q->heap[i] = *k;
    q->pos[k->slot] = i;
}

/* Key x into the hole at i, moved up to where it belongs. */
static void eq_settle(struct eq *q, uint32_t i, struct eq_key x)
{
    while (i > 0) {
        uint32_t p = (i - 1) / 2;
        if (!eq_less(&x, &q->heap[p]))
            break;
        eq_place(q, i, &q->heap[p]);
        i = p;
    }
    eq_place(q, i, &x);
}

static void eq_sift_up(struct eq *q, uint32_t i)
{
    eq_settle(q, i, q->heap[i]);
}

static void eq_sift_down(struct eq *q, uint32_t i)
{
    struct eq_key x = q->heap[i];
    for (;;) {
        uint32_t l = 2 * i + 1;
        if (l >= q->size)
            break;
        uint32_t c = l;
        if (l + 1 < q->size && eq_less(&q->heap[l + 1], &q->heap[l]))
            c = l + 1;
        if (!eq_less(&q->heap[c], &x))
            break;
        eq_place(q, i, &q->heap[c]);
        i = c;
    }
    eq_place(q, i, &x);
}

uint64_t eq_push(struct eq *q, uint64_t time_ps, uint32_t comp, uint32_t type,
                 uint64_t arg, void *ptr)
{
    if (time_ps < q->now_ps)
        return 0;
    return eq_push_seq(q, time_ps, q->next_seq++, comp, type, arg, ptr);
}

uint64_t eq_take_seq(struct eq *q)
{
    return q->next_seq++;
}

uint64_t eq_push_seq(struct eq *q, uint64_t time_ps, uint64_t seq, uint32_t comp,
                     uint32_t type, uint64_t arg, void *ptr)
{
    if (time_ps < q->now_ps)
        return 0;
    if (q->free_head == UINT32_MAX) {
        /* Only when more events are pending than eq_init was told. */
        SIM_CHECK(q->cap < UINT32_MAX / 2);
        eq_reserve(q, q->cap * 2);
        q->grows++;
    }
    uint32_t s = q->free_head;
    struct eq_slot *sl = &q->slots[s];
    q->free_head = sl->next_free;
    sl->ev.time_ps = time_ps;
    sl->ev.seq = seq;
    sl->ev.comp = comp;
    sl->ev.type = type;
    sl->ev.arg = arg;
    sl->ev.ptr = ptr;
    q->heap[q->size] = (struct eq_key){.time_ps = time_ps, .seq = sl->ev.seq, .slot = s};
    eq_sift_up(q, q->size);
    q->size++;
    return ((uint64_t)sl->gen << 32) | (uint64_t)(s + 1);
}

static void eq_free_slot(struct eq *q, uint32_t s)
{
    q->slots[s].gen++;
    q->slots[s].next_free = q->free_head;
    q->free_head = s;
}

/* Take heap entry i out: the last entry fills its place and moves up or
 * down to where it belongs. */
static void eq_remove_at(struct eq *q, uint32_t i)
{
    uint32_t s = q->heap[i].slot;
    q->size--;
    if (i < q->size) {
        eq_place(q, i, &q->heap[q->size]);
        if (i > 0 && eq_less(&q->heap[i], &q->heap[(i - 1) / 2]))
            eq_sift_up(q, i);
        else
            eq_sift_down(q, i);
    }
    eq_free_slot(q, s);
}

/* Take the top out, bottom-up (Floyd): the hole it leaves goes down to a
 * leaf along the smaller children (one comparison a level, not two), and
 * the last entry, which belongs near the bottom, goes into it and up. */
static void eq_remove_top(struct eq *q)
{
    uint32_t s = q->heap[0].slot;
    uint32_t n = --q->size;
    if (n > 0) {
        struct eq_key x = q->heap[n];
        uint32_t i = 0;
        for (;;) {
            uint32_t l = 2 * i + 1;
            if (l >= n)
                break;
            uint32_t c = l + (uint32_t)(l + 1 < n && eq_less(&q->heap[l + 1], &q->heap[l]));
            eq_place(q, i, &q->heap[c]);
            i = c;
        }
        eq_settle(q, i, x);
    }
    eq_free_slot(q, s);
}

const struct eq_event *eq_peek(struct eq *q)
{
    return q->size > 0 ? &q->slots[q->heap[0].slot].ev : NULL;
}

int eq_pop(struct eq *q, struct eq_event *out)
{
    if (eq_peek(q) == NULL)
        return 0;
    *out = q->slots[q->heap[0].slot].ev;
    eq_remove_top(q);
    q->now_ps = out->time_ps;
    return 1;
}

/* The heap index of a pending handle's event, or UINT32_MAX. */
static uint32_t eq_find(const struct eq *q, uint64_t handle)
{
    uint32_t s = (uint32_t)(handle & 0xffffffffu);
    uint32_t gen = (uint32_t)(handle >> 32);
    if (s == 0 || s > q->cap)
        return UINT32_MAX;
    s--;
    if (q->slots[s].gen != gen)
        return UINT32_MAX;
    uint32_t i = q->pos[s];
    SIM_CHECK(i < q->size && q->heap[i].slot == s);
    return i;
}

int eq_move(struct eq *q, uint64_t handle, uint64_t time_ps, uint64_t seq)
{
    if (time_ps < q->now_ps)
        return -1;
    uint32_t i = eq_find(q, handle);
    if (i == UINT32_MAX)
        return -1;
    struct eq_slot *sl = &q->slots[q->heap[i].slot];
    sl->ev.time_ps = time_ps;
    sl->ev.seq = seq;
    q->heap[i].time_ps = time_ps;
    q->heap[i].seq = seq;
    if (i > 0 && eq_less(&q->heap[i], &q->heap[(i - 1) / 2]))
        eq_sift_up(q, i);
    else
        eq_sift_down(q, i);
    return 0;
}

void eq_cancel(struct eq *q, uint64_t handle)
{
    uint32_t i = eq_find(q, handle);
    if (i != UINT32_MAX)
        eq_remove_at(q, i);     /* frees the slot: the handle goes stale */
}
