/* sa_mem.c: see sa_mem.h.
 *
 * Nothing is materialised per cycle: a demand row's addresses are computed
 * from the fold and the row index, and each read buffer keeps, per address,
 * the lines of its prefetch stream that hold it (a CSR index built once per
 * layer), so "is this address in the active window" is one or two
 * comparisons.
 */
#include "sa_mem.h"

#include <stdlib.h>
#include <string.h>

#include "check.h"

static uint64_t cdiv(uint64_t a, uint64_t b) { return a / b + (a % b != 0); }
static uint64_t umin(uint64_t a, uint64_t b) { return a < b ? a : b; }
static int64_t imax(int64_t a, int64_t b) { return a > b ? a : b; }
static int64_t imin(int64_t a, int64_t b) { return a < b ? a : b; }

/* Output size as SCALE-Sim v2 computes it (scalesim/topology_utils.py,
 * topo_calc_hyperparams): ceil((H - F + S) / S) = ceil((H - F) / S) + 1.
 * When the stride does not divide H - F this is one more row than the
 * usual floor((H - F) / S) + 1: SCALE-Sim's last window hangs over the
 * edge (as with "same"-style padding on one side), and strata follows it
 * so its cycles and accesses equal SCALE-Sim's (docs/scalesim.md). */
uint64_t sa_conv_ofmap_h(const struct sa_conv *v) { return cdiv(v->ifmap_h - v->filt_h, v->stride) + 1; }
uint64_t sa_conv_ofmap_w(const struct sa_conv *v) { return cdiv(v->ifmap_w - v->filt_w, v->stride) + 1; }

/* ------------------------------------------------------------ operands */

struct geom {
    const struct sa_conv *v;
    uint64_t P, F, W;       /* ofmap pixels, filters, window */
    uint64_t ow;            /* ofmap width */
    uint64_t R, C;          /* array rows, cols */
    uint64_t T;             /* streaming dimension of the dataflow */
    uint64_t rf, cf;        /* row and column folds */
    enum sa_dataflow df;
};

/* ifmap operand (ofmap pixel p, window element w) -> input word, or -1 */
static int64_t ifmap_addr(const struct geom *g, uint64_t p, uint64_t w)
{
    const struct sa_conv *v = g->v;
    uint64_t ir = (p / g->ow) * v->stride, ic = (p % g->ow) * v->stride;
    uint64_t rowlen = v->filt_w * v->channels;
    uint64_t cr = w / rowlen, k = w % rowlen, cc = k / v->channels, ch = k % v->channels;
    if (ir + cr >= v->ifmap_h || ic + cc >= v->ifmap_w)
        return -1;
    return (int64_t)(((ir + cr) * v->ifmap_w + ic + cc) * v->channels + ch);
}

static int64_t filter_addr(const struct geom *g, uint64_t w, uint64_t f)
{
    return (int64_t)(f * g->W + w);
}

/* ------------------------------------------------------- prefetch order */

/* Element (r, c) of an operand's prefetch matrix, or -1. */
static int64_t pf_elem(const struct geom *g, int op, uint64_t r, uint64_t c)
{
    switch (g->df) {
    case SA_OS:
        if (op == SA_IFMAP) { /* row folds of the transposed ifmap, stacked */
            uint64_t p = (r / g->W) * g->R + c;
            return p < g->P ? ifmap_addr(g, p, r % g->W) : -1;
        } else {              /* column folds of the filter, stacked */
            uint64_t f = (r / g->W) * g->C + c;
            return f < g->F ? filter_addr(g, r % g->W, f) : -1;
        }
    case SA_WS:
        if (op == SA_IFMAP) {
            uint64_t w = (r / g->P) * g->R + c;
            return w < g->W ? ifmap_addr(g, r % g->P, w) : -1;
        } else {
            uint64_t f = (r / g->W) * g->C + c;
            return f < g->F ? filter_addr(g, r % g->W, f) : -1;
        }
    case SA_IS:
    case SA_DATAFLOW_COUNT:
    default:
        if (op == SA_IFMAP) {
            uint64_t p = (r / g->W) * g->C + c;
            return p < g->P ? ifmap_addr(g, p, r % g->W) : -1;
        } else {
            uint64_t w = (r / g->F) * g->R + c;
            return w < g->W ? filter_addr(g, w, r % g->F) : -1;
        }
    }
}

/* Prefetch matrix shape and whether it is read out by anti-diagonals (the
 * order in which a skewed operand enters the array) or row by row. */
static void pf_shape(const struct geom *g, int op, uint64_t *mr, uint64_t *nc, int *diag)
{
    switch (g->df) {
    case SA_OS:
        *mr = (op == SA_IFMAP ? g->rf : g->cf) * g->W;
        *nc = op == SA_IFMAP ? g->R : g->C;
        *diag = 1;
        break;
    case SA_WS:
        *mr = op == SA_IFMAP ? g->rf * g->P : g->cf * g->W;
        *nc = op == SA_IFMAP ? g->R : g->C;
        *diag = op == SA_IFMAP;
        break;
    case SA_IS:
    case SA_DATAFLOW_COUNT:
    default:
        *mr = op == SA_IFMAP ? g->cf * g->W : g->rf * g->F;
        *nc = op == SA_IFMAP ? g->C : g->R;
        *diag = op == SA_FILTER;
        break;
    }
}

typedef void (*pf_visit)(void *ctx, int64_t addr);

static void pf_walk(const struct geom *g, int op, pf_visit fn, void *ctx)
{
    uint64_t mr, nc;
    int diag;
    pf_shape(g, op, &mr, &nc, &diag);
    if (!diag) {
        for (uint64_t r = 0; r < mr; r++)
            for (uint64_t c = 0; c < nc; c++)
                fn(ctx, pf_elem(g, op, r, c));
        return;
    }
    for (uint64_t d = 0; d + 1 < mr + nc; d++) {
        uint64_t hi = umin(d, mr - 1), lo = d + 1 > nc ? d + 1 - nc : 0;
        for (uint64_t r = hi + 1; r-- > lo;)
            fn(ctx, pf_elem(g, op, r, d - r));
    }
}

/* ------------------------------------------------------- read buffer */

struct rbuf {
    uint64_t S, A, Pf, B, E;   /* words: size, active, prefetch; bw; line */
    uint64_t nfetch;           /* prefetch stream rows of B words */
    uint64_t L, nA, nP;        /* lines; active and prefetch window in lines */
    uint64_t a;                /* window start line */
    uint64_t win;              /* window length in lines */
    int full;
    int64_t last;              /* cycle the latest prefetch completes */
    uint64_t words;            /* DRAM words read */
    int64_t dram_start;
    /* CSR: lines holding address x are line[off[x] .. off[x+1]) */
    uint64_t naddr;
    uint32_t *off;
    uint32_t *line;
    uint64_t k;                /* valid elements seen while building */
    uint64_t nelem;            /* all elements, -1 included */
};

static void count_visit(void *ctx, int64_t x)
{
    struct rbuf *b = ctx;
    b->nelem++;
    if (x < 0)
        return;
    b->off[x + 1]++;
    b->k++;
}

static void fill_visit(void *ctx, int64_t x)
{
    struct rbuf *b = ctx;
    if (x < 0)
        return;
    b->line[b->off[x]++] = (uint32_t)(b->k / b->E);
    b->k++;
}

static int rbuf_init(struct rbuf *b, const struct geom *g, int op, uint64_t words, uint64_t bw)
{
    memset(b, 0, sizeof *b);
    b->S = words;
    b->A = cdiv(words, 2);
    b->Pf = words - b->A;
    b->B = bw;
    b->E = cdiv(words, 100);
    /* the address space and the stream's valid words (P x W or W x F: every
     * operand element once per pass) must fit the uint32 index; checked in
     * floating point first, as the products can overflow 64 bits */
    double naddr = op == SA_IFMAP ? (double)g->v->ifmap_h * (double)g->v->ifmap_w * (double)g->v->channels
                                  : (double)g->W * (double)g->F;
    double nstream = op == SA_IFMAP ? (double)g->P * (double)g->W : (double)g->W * (double)g->F;
    if (naddr >= 2147483648.0 || nstream >= 2147483648.0)
        return -1;
    b->naddr = (uint64_t)naddr;
    b->off = sim_xcalloc(b->naddr + 2, sizeof *b->off);
    pf_walk(g, op, count_visit, b);
    if (b->k >= (1ull << 31)) {
        free(b->off);
        b->off = NULL;
        return -1;
    }
    uint64_t nvalid = b->k;
    for (uint64_t x = 0; x < b->naddr; x++)
        b->off[x + 1] += b->off[x];
    b->line = sim_xcalloc(nvalid ? nvalid : 1, sizeof *b->line);
    b->k = 0;
    pf_walk(g, op, fill_visit, b); /* advances off[x] to the next address's start */
    for (uint64_t x = b->naddr; x > 0; x--)
        b->off[x] = b->off[x - 1];
    b->off[0] = 0;
    b->nfetch = cdiv(b->nelem, b->B);
    /* lines close after every E valid words; the last, partial (possibly
     * empty) one counts too */
    b->L = nvalid / b->E + 1;
    b->nA = umin(b->L, cdiv(b->A, b->E));
    b->nP = umin(b->L - b->nA, cdiv(b->Pf, b->E));
    return 0;
}

static void rbuf_free(struct rbuf *b)
{
    free(b->off);
    free(b->line);
}

/* First of the ascending lines[lo, hi) that is >= v, or hi. */
static uint32_t lower_bound(const uint32_t *lines, uint32_t lo, uint32_t hi, uint64_t v)
{
    while (lo < hi) {
        uint32_t mid = lo + (hi - lo) / 2;
        if (lines[mid] < v)
            lo = mid + 1;
        else
            hi = mid;
    }
    return lo;
}

/* Is address x in one of the window's lines, [a, a + win) modulo L?  An
 * address's lines are ascending (im2col repeats a pixel in many), so this
 * is a binary search, not a scan. */
static int rbuf_hit(const struct rbuf *b, uint64_t x)
{
    uint32_t lo = b->off[x], hi = b->off[x + 1];
    if (lo == hi)
        return 0;
    if (b->win >= b->L)
        return 1;
    uint64_t end = b->a + b->win;
    uint32_t j = lower_bound(b->line, lo, hi, b->a);
    if (j < hi && b->line[j] < end)
        return 1;
    /* the window wraps past the last line to [0, end - L) */
    return end > b->L && b->line[lo] < end - b->L;
}

static void rbuf_first_fill(struct rbuf *b, int64_t cycle)
{
    uint64_t n = umin(cdiv(b->A, b->B), b->nfetch);
    b->words += n * b->B;
    b->dram_start = cycle - (int64_t)n;
    b->last = cycle - 1;
    b->a = 0;
    b->win = b->nA == b->L ? b->L : b->nA;
    b->full = 1;
}

static void rbuf_prefetch(struct rbuf *b)
{
    b->a = (b->a + b->nP) % b->L;
    uint64_t end = (b->a + b->nA) % b->L;
    b->win = end == b->a ? b->L : (end + b->L - b->a) % b->L;
    uint64_t n = cdiv(b->Pf, b->B);
    b->words += n * b->B;
    b->last += (int64_t)n + 1; /* one cycle of DRAM latency */
}

/* ------------------------------------------------------ write buffer */

struct wbuf {
    uint64_t S, A, D, B;
    int64_t free;
    uint64_t idx;              /* words in the line being filled */
    uint32_t *ring;            /* valid words of each line waiting to drain */
    uint64_t cap, head, n;
    int64_t drain_end;
    uint64_t words;
    int64_t dram_start, dram_stop;
};

static void wbuf_init(struct wbuf *w, uint64_t words, uint64_t bw)
{
    memset(w, 0, sizeof *w);
    w->S = words;
    w->A = cdiv(words, 2);
    w->D = words - w->A;
    w->B = bw;
    w->free = (int64_t)words;
    w->cap = cdiv(words, bw) + 16;
    w->ring = sim_xcalloc(w->cap, sizeof *w->ring);
    w->dram_start = INT64_MAX;
    w->dram_stop = INT64_MIN;
}

static void wbuf_push(struct wbuf *w, uint64_t valid)
{
    if (w->n == w->cap) {
        /* partial lines closed mid-buffer are credited as whole ones when
         * drained (as SCALE-Sim counts them), so more lines than the buffer
         * holds can wait: grow, keeping their order */
        uint64_t cap = w->cap * 2;
        uint32_t *r = sim_xcalloc(cap, sizeof *r);
        for (uint64_t i = 0; i < w->n; i++)
            r[i] = w->ring[(w->head + i) % w->cap];
        free(w->ring);
        w->ring = r;
        w->cap = cap;
        w->head = 0;
    }
    w->ring[(w->head + w->n) % w->cap] = (uint32_t)valid;
    w->n++;
}

static void wbuf_close_line(struct wbuf *w)
{
    if (w->idx != 0) {
        wbuf_push(w, w->idx);
        w->idx = 0;
    }
}

/* Drains up to the drain half's lines from cycle `start`; returns the last
 * drain cycle. */
static int64_t wbuf_drain(struct wbuf *w, int64_t start)
{
    uint64_t nl = umin(cdiv(w->D, w->B), w->n);
    if (nl == 0)
        return start;
    uint64_t lastv = w->ring[(w->head + nl - 1) % w->cap];
    uint64_t sz = nl * w->B - (w->B - lastv);
    w->head = (w->head + nl) % w->cap;
    w->n -= nl;
    w->words += sz;
    w->free += (int64_t)sz;
    w->dram_start = imin(w->dram_start, start);
    w->dram_stop = imax(w->dram_stop, start + (int64_t)nl - 1);
    return start + (int64_t)nl - 1;
}

/* Stores k results produced at `cycle`; returns the cycle the array may go
 * on (later than `cycle` when the buffer was full). */
static int64_t wbuf_service(struct wbuf *w, uint64_t k, int64_t cycle)
{
    int64_t cur = cycle;
    for (uint64_t i = 0; i < k; i++) {
        w->idx++;
        w->free--;
        if (w->idx == w->B) {
            wbuf_push(w, w->B);
            w->idx = 0;
        }
        if (cur < w->drain_end) {
            if (w->free <= 0)
                cur = w->drain_end;
        } else if (w->free < (int64_t)w->A) {
            wbuf_close_line(w);
            /* the drain runs in the background: the array goes on */
            w->drain_end = wbuf_drain(w, cur);
        }
    }
    return cur;
}

static void wbuf_flush(struct wbuf *w, int64_t cycle)
{
    wbuf_close_line(w);
    int64_t cur = cycle;
    while (w->n > 0)
        cur = wbuf_drain(w, cur) + 1;
}

/* ------------------------------------------------------------- demand */

/* Columns c in [0, nused) of a skewed operand whose element at row q is
 * t = q - c - off0 with 0 <= t < T: c in [lo, hi]. */
static int skew_range(int64_t q, int64_t off0, int64_t T, int64_t nused, int64_t *lo, int64_t *hi)
{
    *lo = imax(0, q - off0 - T + 1);
    *hi = imin(nused - 1, q - off0);
    return *lo <= *hi;
}

struct fold {
    uint64_t a, nr;   /* row fold: first index, used rows */
    uint64_t a2, nc;  /* column fold: first index, used columns */
};

/* Demand rows before a streaming operand's first element: none for os
 * (both operands skew in at once), R for ws and is (the stationary operand
 * is shifted in first). */
static int64_t stream_offset(const struct geom *g)
{
    return g->df == SA_OS ? 0 : (int64_t)g->R;
}

/* Columns [lo, hi] of a read operand (ifmap or filter) that carry an
 * address in demand row q of fold f; 0 when none.  *stationary: the operand
 * is the one shifted into the rows during the first R rows of the fold (ws
 * filter, is ifmap), bottom row first; otherwise it is skewed in. */
static int read_range(const struct geom *g, int op, const struct fold *f, int64_t q, int64_t *lo,
                      int64_t *hi, int *stationary)
{
    int64_t R = (int64_t)g->R;
    *stationary = (g->df == SA_WS && op == SA_FILTER) || (g->df == SA_IS && op == SA_IFMAP);
    if (*stationary) {
        if (q >= R || (uint64_t)(R - 1 - q) >= f->nr)
            return 0;
        *lo = 0;
        *hi = (int64_t)f->nc - 1;
        return f->nc > 0;
    }
    /* a streaming operand enters along the rows (nr used), except the os
     * filter, which enters along the columns */
    int64_t nused = (int64_t)(g->df == SA_OS && op == SA_FILTER ? f->nc : f->nr);
    return skew_range(q, stream_offset(g), (int64_t)g->T, nused, lo, hi);
}

/* Serves the read operand's addresses of demand row q; returns the answer
 * cycle and adds the words read to *nw. */
static int64_t serve_read(struct rbuf *b, const struct geom *g, int op, const struct fold *f,
                          int64_t q, int64_t cycle, uint64_t *nw)
{
    if (!b->full)
        rbuf_first_fill(b, cycle);
    int64_t off = 1, lo, hi, R = (int64_t)g->R;
    int stationary;
    if (!read_range(g, op, f, q, &lo, &hi, &stationary))
        return cycle + off;
    uint64_t nword = 0;
    for (int64_t c = lo; c <= hi; c++) {
        int64_t x;
        uint64_t cc = (uint64_t)c;
        if (stationary) {
            uint64_t rr = (uint64_t)(R - 1 - q);
            x = op == SA_FILTER ? filter_addr(g, f->a + rr, f->a2 + cc)
                                : ifmap_addr(g, f->a2 + cc, f->a + rr);
        } else {
            uint64_t t = (uint64_t)(q - c - stream_offset(g));
            switch (g->df) {
            case SA_OS:
                x = op == SA_IFMAP ? ifmap_addr(g, f->a + cc, t) : filter_addr(g, t, f->a2 + cc);
                break;
            case SA_WS: /* only the ifmap streams */
                x = ifmap_addr(g, t, f->a + cc);
                break;
            case SA_IS:
            case SA_DATAFLOW_COUNT:
            default:    /* only the filter streams */
                x = filter_addr(g, f->a + cc, t);
                break;
            }
        }
        if (x < 0)
            continue;
        nword++;
        uint64_t guard = 0;
        while (!rbuf_hit(b, (uint64_t)x)) {
            rbuf_prefetch(b);
            off = b->last - cycle;
            SIM_CHECK(++guard <= b->L + 1); /* every address is in the stream */
        }
    }
    *nw += nword;
    return cycle + off;
}

/* Results leaving the array in demand row q. */
static uint64_t ofmap_count(const struct geom *g, const struct fold *f, int64_t q)
{
    int64_t lo, hi, R = (int64_t)g->R, T = (int64_t)g->T;
    if (g->df == SA_OS) {
        /* the fold's R x C results, bottom row first, after T-1 empty rows */
        lo = imax(0, q - (T - 1) - (R - 1));
        hi = imin((int64_t)f->nc - 1, q - (T - 1) - (R - (int64_t)f->nr));
        return lo <= hi ? (uint64_t)(hi - lo + 1) : 0;
    }
    return skew_range(q, 2 * R - 1, T, (int64_t)f->nc, &lo, &hi) ? (uint64_t)(hi - lo + 1) : 0;
}

/* The layer's shape on the array; -1 when it is empty or too large. */
static int geom_init(const struct sa_mem_config *c, const struct sa_conv *v, struct geom *g,
                     uint64_t *sr, uint64_t *sc, uint64_t *fold_rows)
{
    const uint64_t lim = 1ull << 32;
    if (c->rows == 0 || c->cols == 0 || c->rows > lim || c->cols > lim ||
        (unsigned)c->df >= SA_DATAFLOW_COUNT || v->stride == 0 || v->filters == 0 ||
        v->channels == 0 || v->filt_h == 0 || v->filt_w == 0 || v->filt_h > v->ifmap_h ||
        v->filt_w > v->ifmap_w || v->ifmap_h > lim || v->ifmap_w > lim || v->channels > lim ||
        v->filters > lim || v->stride > lim)
        return -1;
    memset(g, 0, sizeof *g);
    g->v = v;
    g->R = c->rows;
    g->C = c->cols;
    g->df = c->df;
    g->ow = sa_conv_ofmap_w(v);
    g->P = sa_conv_ofmap_h(v) * g->ow;
    g->F = v->filters;
    g->W = v->filt_h * v->filt_w * v->channels;
    if (g->P > lim || g->W > lim)
        return -1;
    switch (c->df) {
    case SA_OS: *sr = g->P; *sc = g->F; g->T = g->W; break;
    case SA_WS: *sr = g->W; *sc = g->F; g->T = g->P; break;
    case SA_IS:
    case SA_DATAFLOW_COUNT:
    default: *sr = g->W; *sc = g->P; g->T = g->F; break;
    }
    g->rf = cdiv(*sr, g->R);
    g->cf = cdiv(*sc, g->C);
    *fold_rows = (c->df == SA_OS ? g->R : 2 * g->R) + g->C + g->T - 2;
    if (g->rf * g->cf > lim || *fold_rows > lim)
        return -1;
    return 0;
}

static uint64_t covered(uint64_t out, uint64_t stride, uint64_t filt)
{
    return stride >= filt ? out * filt : (out - 1) * stride + filt;
}

/* First and last demand row of fold f in which operand op has a word:
 * 0 with *first > *last when it has none. */
static void op_row_span(const struct geom *g, int op, const struct fold *f, int64_t *first,
                        int64_t *last)
{
    int64_t R = (int64_t)g->R, T = (int64_t)g->T, nr = (int64_t)f->nr, nc = (int64_t)f->nc;
    if (op == SA_OFMAP) {
        if (g->df == SA_OS) { /* bottom result row first, after T-1 empty rows */
            *first = T - 1 + R - nr;
            *last = T - 1 + R - 1 + nc - 1;
        } else {
            *first = 2 * R - 1;
            *last = 2 * R - 1 + T - 1 + nc - 1;
        }
        return;
    }
    int stationary = (g->df == SA_WS && op == SA_FILTER) || (g->df == SA_IS && op == SA_IFMAP);
    if (stationary) {         /* shifted in during rows R - nr .. R - 1 */
        *first = R - nr;
        *last = R - 1;
        return;
    }
    int64_t nused = g->df == SA_OS && op == SA_FILTER ? nc : nr;
    *first = stream_offset(g);
    *last = *first + T - 1 + nused - 1;
}

int sa_mem_calc(const struct sa_mem_config *c, const struct sa_conv *v, struct sa_mem_result *r)
{
    memset(r, 0, sizeof *r);
    struct geom g;
    uint64_t sr, sc, fold_rows;
    if (geom_init(c, v, &g, &sr, &sc, &fold_rows) != 0)
        return -1;
    struct sa_layer l = {g.P, g.F, g.W};
    struct sa_result fr;
    if (sa_run_layer(g.R, g.C, g.df, &l, &fr) != 0)
        return -1;
    r->demand_rows = fr.row_folds * fr.col_folds * fold_rows;
    r->cycles = fr.cycles;
    r->sram_words[SA_IFMAP] = (uint64_t)fr.ifmap_reads;
    r->sram_words[SA_FILTER] = (uint64_t)fr.filter_reads;
    r->sram_words[SA_OFMAP] = (uint64_t)fr.ofmap_writes;
    /* the first access of each operand is in the first fold, the last in
     * the last fold; reads are answered the next cycle, writes land at once */
    struct fold first = {0, umin(g.R, sr), 0, umin(g.C, sc)};
    uint64_t lr = (g.rf - 1) * g.R, lc = (g.cf - 1) * g.C;
    struct fold lastf = {lr, sr - lr, lc, sc - lc};
    int64_t base = (int64_t)(r->demand_rows - fold_rows);
    for (int k = 0; k < SA_OPERANDS; k++) {
        int64_t f0, f1, l0, l1, lead = k == SA_OFMAP ? 0 : 1;
        op_row_span(&g, k, &first, &f0, &f1);
        op_row_span(&g, k, &lastf, &l0, &l1);
        r->sram_start[k] = f0 + lead;
        r->sram_stop[k] = base + l1 + lead;
    }
    /* every operand word crosses the interface once, just in time */
    r->dram_words[SA_IFMAP] = covered(sa_conv_ofmap_h(v), v->stride, v->filt_h) *
                              covered(g.ow, v->stride, v->filt_w) * v->channels;
    r->dram_words[SA_FILTER] = g.W * g.F;
    r->dram_words[SA_OFMAP] = g.P * g.F;
    for (int k = 0; k < SA_OPERANDS; k++) {
        int64_t lead = k == SA_OFMAP ? 0 : 1;
        r->dram_start[k] = r->sram_start[k] - lead;
        r->dram_stop[k] = r->sram_stop[k] - lead;
    }
    return 0;
}

double sa_mem_walk_units(const struct sa_mem_config *c, const struct sa_conv *v)
{
    struct geom g;
    uint64_t sr, sc, fold_rows;
    if (geom_init(c, v, &g, &sr, &sc, &fold_rows) != 0)
        return -1;
    return (double)g.rf * (double)g.cf * (double)fold_rows * (double)(g.R + 2 * g.C);
}

int sa_mem_run(const struct sa_mem_config *c, const struct sa_conv *v, struct sa_mem_result *r)
{
    memset(r, 0, sizeof *r);
    struct geom g;
    uint64_t sr, sc, fold_rows;
    if (c->bw == 0 || c->bw > (1ull << 32) || geom_init(c, v, &g, &sr, &sc, &fold_rows) != 0)
        return -1;
    for (int k = 0; k < SA_OPERANDS; k++)
        if (c->sram_words[k] < 2 || c->sram_words[k] > (1ull << 34))
            return -1;
    struct rbuf ib, fb;
    if (rbuf_init(&ib, &g, SA_IFMAP, c->sram_words[SA_IFMAP], c->bw) != 0)
        return -1;
    if (rbuf_init(&fb, &g, SA_FILTER, c->sram_words[SA_FILTER], c->bw) != 0) {
        rbuf_free(&ib);
        return -1;
    }
    struct wbuf ob;
    wbuf_init(&ob, c->sram_words[SA_OFMAP], c->bw);
    for (int k = 0; k < SA_OPERANDS; k++) {
        r->sram_start[k] = -1;
        r->sram_stop[k] = -1;
    }
    int64_t stall = 0, last = 0, i = 0;
    for (uint64_t fc = 0; fc < g.cf; fc++)
        for (uint64_t fr = 0; fr < g.rf; fr++) {
            struct fold f = {fr * g.R, umin(g.R, sr - fr * g.R), fc * g.C, umin(g.C, sc - fc * g.C)};
            for (uint64_t q = 0; q < fold_rows; q++, i++) {
                int64_t cyc = i + stall;
                uint64_t nw[SA_OPERANDS] = {0, 0, 0};
                int64_t ia = serve_read(&ib, &g, SA_IFMAP, &f, (int64_t)q, cyc, &nw[SA_IFMAP]);
                int64_t fa = serve_read(&fb, &g, SA_FILTER, &f, (int64_t)q, cyc, &nw[SA_FILTER]);
                nw[SA_OFMAP] = ofmap_count(&g, &f, (int64_t)q);
                int64_t oa = wbuf_service(&ob, nw[SA_OFMAP], cyc);
                /* SCALE-Sim lets a late prefetch chain answer a read
                 * "before" it is made (a negative gap is added too); that
                 * keeps its totals, but the reports show the read cycle */
                int64_t ans[SA_OPERANDS] = {ia > cyc + 1 ? ia : cyc + 1, fa > cyc + 1 ? fa : cyc + 1, oa};
                for (int k = 0; k < SA_OPERANDS; k++) {
                    if (nw[k] == 0)
                        continue;
                    if (r->sram_start[k] < 0)
                        r->sram_start[k] = ans[k];
                    r->sram_stop[k] = ans[k];
                    r->sram_words[k] += nw[k];
                }
                int64_t st[SA_OPERANDS] = {ia - cyc - 1, fa - cyc - 1, oa - cyc};
                int worst = st[SA_FILTER] > st[SA_IFMAP] ? SA_FILTER : SA_IFMAP;
                if (st[SA_OFMAP] > st[worst])
                    worst = SA_OFMAP;
                if (st[worst] > 0) { /* the row waits for the slowest buffer */
                    stall += st[worst];
                    r->stall_by[worst] += (uint64_t)st[worst];
                }
                last = oa;
            }
        }
    wbuf_flush(&ob, last);
    r->demand_rows = (uint64_t)i;
    r->cycles = (uint64_t)last;
    r->stall = (uint64_t)stall;
    r->dram_words[SA_IFMAP] = ib.words;
    r->dram_start[SA_IFMAP] = ib.dram_start;
    r->dram_stop[SA_IFMAP] = ib.last;
    r->dram_words[SA_FILTER] = fb.words;
    r->dram_start[SA_FILTER] = fb.dram_start;
    r->dram_stop[SA_FILTER] = fb.last;
    r->dram_words[SA_OFMAP] = ob.words;
    r->dram_start[SA_OFMAP] = ob.words ? ob.dram_start : 0;
    r->dram_stop[SA_OFMAP] = ob.words ? ob.dram_stop : 0;
    rbuf_free(&ib);
    rbuf_free(&fb);
    free(ob.ring);
    return 0;
}
