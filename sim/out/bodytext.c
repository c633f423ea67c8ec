/* bodytext.c: a body's text made once per writer.  See bodytext.h. */
#include "bodytext.h"

#include <stdlib.h>
#include <string.h>

#include "check.h"

void bodytext_init(struct bodytext *bt, uint32_t nbody)
{
    memset(bt, 0, sizeof *bt);
    bt->nbody = nbody;
    bt->at = sim_xcalloc(nbody ? nbody : 1, sizeof *bt->at);
    bt->len = sim_xcalloc(nbody ? nbody : 1, sizeof *bt->len);
}

const char *bodytext_get(struct bodytext *bt, uint32_t b, bodytext_fn fmt, const void *ctx,
                         size_t *len)
{
    SIM_CHECK(b < bt->nbody);
    if (bt->at[b] == 0) {
        if (bt->text.n >= BODYTEXT_MAX_BYTES) {
            bt->scratch.n = 0;      /* the cache is full: made each time */
            fmt(&bt->scratch, ctx, b);
            *len = bt->scratch.n;
            return bt->scratch.s;
        }
        size_t a = bt->text.n;
        fmt(&bt->text, ctx, b);
        SIM_CHECK(bt->text.n - a < UINT32_MAX);
        bt->at[b] = (uint64_t)a + 1;
        bt->len[b] = (uint32_t)(bt->text.n - a);
    }
    *len = bt->len[b];
    return bt->text.s + (bt->at[b] - 1);
}

void bodytext_put(struct bodytext *bt, struct sb *out, uint32_t b, bodytext_fn fmt, const void *ctx)
{
    size_t n;
    const char *s = bodytext_get(bt, b, fmt, ctx, &n);
    sb_putn(out, s, n);
}

void bodytext_free(struct bodytext *bt)
{
    free(bt->at);
    free(bt->len);
    free(bt->text.s);
    free(bt->scratch.s);
    memset(bt, 0, sizeof *bt);
}
