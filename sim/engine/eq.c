/* eq.c: events ordered by (time_ps, seq), kept by time.  See eq.h.
 *
 * The events of one time are a bucket: a list in seq order (a push
 * almost always takes the newest seq, so it goes at the tail).  A binary
 * min-heap orders the buckets' times and a hash table finds a time's
 * bucket.  Of a 1,024-GPU data-parallel step's 28 million events, about
 * 600 fire at each time its replicas reach together: a push or a pop is
 * a hash probe and a list link, and the heap moves only when a time is
 * first or last used. */
#include "eq.h"

#include <stdlib.h>
#include <string.h>

#include "check.h"

#define EQ_NONE UINT32_MAX

static uint32_t eq_hash_of(const struct eq *q, uint64_t t)
{
    uint64_t h = t * UINT64_C(0x9e3779b97f4a7c15);
    return (uint32_t)(h >> 32) & q->hmask;
}

/* Storage for cap events (and as many buckets).  Setup, and the rare
 * doubling when more events are pending than eq_init was told (counted in
 * q->grows): sim_xrealloc aborts with the size on failure and holds a
 * large request against the memory budget. */
static void eq_reserve(struct eq *q, uint32_t cap)
{
    q->slots = sim_xrealloc(q->slots, (size_t)cap * sizeof *q->slots);
    q->bk = sim_xrealloc(q->bk, (size_t)cap * sizeof *q->bk);
    q->heap = sim_xrealloc(q->heap, (size_t)cap * sizeof *q->heap);
    for (uint32_t i = q->cap; i < cap; i++) {
        q->slots[i].gen = 1;
        q->slots[i].bucket = EQ_NONE;
        q->slots[i].next = (i + 1 < cap) ? i + 1 : q->free_head;
        q->bk[i].next_free = (i + 1 < cap) ? i + 1 : q->bfree;
    }
    if (cap > q->cap) {
        q->free_head = q->cap;
        q->bfree = q->cap;
    }
    q->cap = cap;
    /* the hash: twice the buckets, rebuilt */
    free(q->hash);
    q->hmask = 2 * cap - 1;
    q->hash = sim_xcalloc((size_t)q->hmask + 1, sizeof *q->hash);
    for (uint32_t i = 0; i < q->nb; i++) {
        uint32_t b = q->heap[i].b;
        uint32_t h = eq_hash_of(q, q->bk[b].time_ps);
        while (q->hash[h] != 0)
            h = (h + 1) & q->hmask;
        q->hash[h] = b + 1;
    }
}

int eq_init(struct eq *q, uint32_t capacity)
{
    memset(q, 0, sizeof *q);
    q->free_head = EQ_NONE;
    q->bfree = EQ_NONE;
    if (capacity < 16)
        capacity = 16;
    eq_reserve(q, capacity);
    return 0;
}

void eq_destroy(struct eq *q)
{
    free(q->slots);
    free(q->bk);
    free(q->heap);
    free(q->hash);
    memset(q, 0, sizeof *q);
}

/* ---- the buckets' times: a binary min-heap (times are distinct) ---- */

static void eq_hplace(struct eq *q, uint32_t i, struct eq_hkey k)
{
    q->heap[i] = k;
    q->bk[k.b].hpos = i;
}

static void eq_hsettle(struct eq *q, uint32_t i, struct eq_hkey x)
{
    while (i > 0) {
        uint32_t p = (i - 1) / 2;
        if (!(x.time_ps < q->heap[p].time_ps))
            break;
        eq_hplace(q, i, q->heap[p]);
        i = p;
    }
    eq_hplace(q, i, x);
}

/* Heap entry i out: the last fills its place and moves up or down. */
static void eq_hremove(struct eq *q, uint32_t i)
{
    uint32_t n = --q->nb;
    if (i == n)
        return;
    struct eq_hkey x = q->heap[n];
    if (i > 0 && x.time_ps < q->heap[(i - 1) / 2].time_ps) {
        eq_hsettle(q, i, x);
        return;
    }
    for (;;) {
        uint32_t l = 2 * i + 1;
        if (l >= n)
            break;
        uint32_t c = l + (uint32_t)(l + 1 < n && q->heap[l + 1].time_ps < q->heap[l].time_ps);
        if (!(q->heap[c].time_ps < x.time_ps))
            break;
        eq_hplace(q, i, q->heap[c]);
        i = c;
    }
    eq_hplace(q, i, x);
}

/* ---- a time's bucket ---- */

/* The bucket of time t, made (empty) if there is none. */
static uint32_t eq_bucket(struct eq *q, uint64_t t)
{
    uint32_t h = eq_hash_of(q, t);
    for (; q->hash[h] != 0; h = (h + 1) & q->hmask)
        if (q->bk[q->hash[h] - 1].time_ps == t)
            return q->hash[h] - 1;
    uint32_t b = q->bfree;
    SIM_CHECK(b != EQ_NONE);    /* no more buckets than events */
    q->bfree = q->bk[b].next_free;
    q->hash[h] = b + 1;
    q->bk[b].time_ps = t;
    q->bk[b].head = q->bk[b].tail = EQ_NONE;
    q->nb++;
    eq_hsettle(q, q->nb - 1, (struct eq_hkey){.time_ps = t, .b = b});
    return b;
}

/* Bucket b is empty: out of the heap and the hash (linear probing: the
 * entries after it in its run move back so that every probe still finds
 * its own), and free. */
static void eq_bucket_drop(struct eq *q, uint32_t b)
{
    eq_hremove(q, q->bk[b].hpos);
    uint32_t h = eq_hash_of(q, q->bk[b].time_ps);
    while (q->hash[h] != b + 1)
        h = (h + 1) & q->hmask;
    uint32_t hole = h;
    for (uint32_t j = (hole + 1) & q->hmask; q->hash[j] != 0; j = (j + 1) & q->hmask) {
        uint32_t home = eq_hash_of(q, q->bk[q->hash[j] - 1].time_ps);
        /* j's entry may fill the hole if its home is not in (hole, j] */
        if (((j - home) & q->hmask) >= ((j - hole) & q->hmask)) {
            q->hash[hole] = q->hash[j];
            hole = j;
        }
    }
    q->hash[hole] = 0;
    q->bk[b].next_free = q->bfree;
    q->bfree = b;
}

/* Slot s into bucket b, in seq order (from the tail: a push's seq is
 * almost always the newest). */
static void eq_link(struct eq *q, uint32_t b, uint32_t s)
{
    struct eq_bucket *k = &q->bk[b];
    uint64_t seq = q->slots[s].ev.seq;
    uint32_t after = k->tail;
    while (after != EQ_NONE && q->slots[after].ev.seq > seq)
        after = q->slots[after].prev;
    uint32_t before = after == EQ_NONE ? k->head : q->slots[after].next;
    q->slots[s].prev = after;
    q->slots[s].next = before;
    q->slots[s].bucket = b;
    if (after == EQ_NONE)
        k->head = s;
    else
        q->slots[after].next = s;
    if (before == EQ_NONE)
        k->tail = s;
    else
        q->slots[before].prev = s;
    q->size++;
}

/* Slot s out of its bucket (the bucket dropped when it empties). */
static void eq_unlink(struct eq *q, uint32_t s)
{
    struct eq_slot *sl = &q->slots[s];
    uint32_t b = sl->bucket;
    struct eq_bucket *k = &q->bk[b];
    if (sl->prev == EQ_NONE)
        k->head = sl->next;
    else
        q->slots[sl->prev].next = sl->next;
    if (sl->next == EQ_NONE)
        k->tail = sl->prev;
    else
        q->slots[sl->next].prev = sl->prev;
    q->size--;
    if (k->head == EQ_NONE)
        eq_bucket_drop(q, b);
}

static void eq_free_slot(struct eq *q, uint32_t s)
{
    q->slots[s].gen++;
    q->slots[s].bucket = EQ_NONE;
    q->slots[s].next = q->free_head;
    q->free_head = s;
}

/* ---- the interface ---- */

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
    if (q->free_head == EQ_NONE) {
        /* Only when more events are pending than eq_init was told. */
        SIM_CHECK(q->cap < UINT32_MAX / 4);
        eq_reserve(q, q->cap * 2);
        q->grows++;
    }
    uint32_t s = q->free_head;
    struct eq_slot *sl = &q->slots[s];
    q->free_head = sl->next;
    sl->ev.time_ps = time_ps;
    sl->ev.seq = seq;
    sl->ev.comp = comp;
    sl->ev.type = type;
    sl->ev.arg = arg;
    sl->ev.ptr = ptr;
    eq_link(q, eq_bucket(q, time_ps), s);
    return ((uint64_t)sl->gen << 32) | (uint64_t)(s + 1);
}

const struct eq_event *eq_peek(struct eq *q)
{
    return q->nb > 0 ? &q->slots[q->bk[q->heap[0].b].head].ev : NULL;
}

int eq_pop(struct eq *q, struct eq_event *out)
{
    if (q->nb == 0)
        return 0;
    uint32_t s = q->bk[q->heap[0].b].head;
    *out = q->slots[s].ev;
    eq_unlink(q, s);
    eq_free_slot(q, s);
    q->now_ps = out->time_ps;
    return 1;
}

/* The slot of a pending handle's event, or EQ_NONE. */
static uint32_t eq_find(const struct eq *q, uint64_t handle)
{
    uint32_t s = (uint32_t)(handle & 0xffffffffu);
    uint32_t gen = (uint32_t)(handle >> 32);
    if (s == 0 || s > q->cap)
        return EQ_NONE;
    s--;
    if (q->slots[s].gen != gen || q->slots[s].bucket == EQ_NONE)
        return EQ_NONE;
    return s;
}

int eq_move(struct eq *q, uint64_t handle, uint64_t time_ps, uint64_t seq)
{
    if (time_ps < q->now_ps)
        return -1;
    uint32_t s = eq_find(q, handle);
    if (s == EQ_NONE)
        return -1;
    eq_unlink(q, s);
    q->slots[s].ev.time_ps = time_ps;
    q->slots[s].ev.seq = seq;
    eq_link(q, eq_bucket(q, time_ps), s);
    return 0;
}

void eq_cancel(struct eq *q, uint64_t handle)
{
    uint32_t s = eq_find(q, handle);
    if (s != EQ_NONE) {
        eq_unlink(q, s);
        eq_free_slot(q, s);     /* the handle goes stale */
    }
}
