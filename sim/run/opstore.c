/* opstore.c: a run's op results, each distinct body kept once.  See opstore.h. */
#include "opstore.h"

#include <stdlib.h>
#include <string.h>

#include "check.h"

#define OPSTORE_CHUNK 256u

uint32_t opstore_take(struct opstore *s)
{
    uint32_t k;
    if (s->nfree > 0) {
        k = s->free_slot[--s->nfree];
    } else {
        if (s->nslots == s->nchunk * OPSTORE_CHUNK) {
            /* more ops in flight than ever before in this run: a chunk more */
            s->chunk = sim_xrealloc(s->chunk, ((size_t)s->nchunk + 1) * sizeof *s->chunk);
            s->chunk[s->nchunk++] = sim_xcalloc(OPSTORE_CHUNK, sizeof **s->chunk);
        }
        k = s->nslots++;
    }
    memset(opstore_slot(s, k), 0, sizeof(struct op_result));
    return k;
}

struct op_result *opstore_slot(struct opstore *s, uint32_t slot)
{
    SIM_CHECK(slot < s->nslots);
    return &s->chunk[slot / OPSTORE_CHUNK][slot % OPSTORE_CHUNK];
}

/* A word at a time over the body's bytes (its padding is the zeros
 * opstore_take wrote: models set fields, not padding). */
static uint64_t body_hash(const struct op_result *b)
{
    _Static_assert(sizeof *b % 8 == 0, "op_result hashed in 8-byte words");
    const unsigned char *p = (const unsigned char *)b;
    uint64_t h = 0x9e3779b97f4a7c15u;
    for (size_t k = 0; k < sizeof *b; k += 8) {
        uint64_t w;
        memcpy(&w, p + k, 8);
        h = (h ^ w) * 0xbf58476d1ce4e5b9u;
        h ^= h >> 31;
    }
    return h;
}

static void tab_grow(struct opstore *s)
{
    uint32_t ncap = s->tab_mask ? 2 * (s->tab_mask + 1) : 1024;
    free(s->tab);
    s->tab = sim_xcalloc(ncap, sizeof *s->tab);
    s->tab_mask = ncap - 1;
    for (uint32_t b = 0; b < s->nbody; b++) {
        uint32_t h = (uint32_t)s->hash[b] & s->tab_mask;
        while (s->tab[h] != 0)
            h = (h + 1) & s->tab_mask;
        s->tab[h] = b + 1;
    }
}

void opstore_finish(struct opstore *s, uint32_t slot, struct run_op *op)
{
    struct op_result *r = opstore_slot(s, slot);
    SIM_CHECK(r->end_ps >= r->start_ps);      /* its duration becomes the body's end */
    op->ready_ps = r->ready_ps;
    op->start_ps = r->start_ps;
    r->end_ps -= r->start_ps;
    r->ready_ps = r->start_ps = 0;
    uint64_t h = body_hash(r);
    if (2 * ((uint64_t)s->nbody + 1) > (uint64_t)s->tab_mask + 1)
        tab_grow(s);
    uint32_t i = (uint32_t)h & s->tab_mask;
    for (; s->tab[i] != 0; i = (i + 1) & s->tab_mask) {
        uint32_t b = s->tab[i] - 1;
        if (s->hash[b] == h && memcmp(&s->body[b], r, sizeof *r) == 0) {
            op->body = b;
            goto done;
        }
    }
    if (s->nbody == s->cap) {
        SIM_CHECK(s->cap < UINT32_MAX / 2);
        s->cap = s->cap ? 2 * s->cap : 64;
        s->body = sim_xrealloc(s->body, (size_t)s->cap * sizeof *s->body);
        s->hash = sim_xrealloc(s->hash, (size_t)s->cap * sizeof *s->hash);
    }
    memcpy(&s->body[s->nbody], r, sizeof *r);
    s->hash[s->nbody] = h;
    s->tab[i] = s->nbody + 1;
    op->body = s->nbody++;
done:
    if (s->nfree == s->free_cap) {
        s->free_cap = s->free_cap ? 2 * s->free_cap : 64;
        s->free_slot = sim_xrealloc(s->free_slot, (size_t)s->free_cap * sizeof *s->free_slot);
    }
    s->free_slot[s->nfree++] = slot;
}

void opstore_end_run(struct opstore *s)
{
    for (uint32_t c = 0; c < s->nchunk; c++)
        free(s->chunk[c]);
    free(s->chunk);
    free(s->free_slot);
    free(s->tab);
    free(s->hash);
    s->chunk = NULL;
    s->free_slot = NULL;
    s->tab = NULL;
    s->hash = NULL;
    s->nchunk = s->nslots = s->nfree = s->free_cap = s->tab_mask = 0;
}

void opstore_free(struct opstore *s)
{
    opstore_end_run(s);
    free(s->body);
    memset(s, 0, sizeof *s);
}
