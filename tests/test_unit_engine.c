/* test_unit_engine.c: the event queue (time order, FIFO ties, refusing the
 * past, cancellation, growth), the run's arena (zeroed, aligned, blocks
 * that never overlap, growth that keeps the bytes), the fluid bandwidth
 * server (max-min fair shares, caps, exact completion times, storage that
 * grows while flows are active, rates shared out once an event), a run with more concurrent streams than
 * the GPU model keeps runners for, and the run's result store (opstore.h:
 * equal bodies kept once, live slots reused). */
#include <stdalign.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>

#include "cfg.h"
#include "engine.h"
#include "eq.h"
#include "flow.h"
#include "run.h"
#include "test.h"
#include "util.h"

static void test_eq(void)
{
    struct eq q;
    CHECK_EQ_INT(eq_init(&q, 4), 0);
    /* ties fire in push order; times in order */
    for (uint64_t i = 0; i < 100; i++)
        CHECK(eq_push(&q, (i * 7919) % 13, 0, 0, i, NULL) != 0);
    uint64_t h = eq_push(&q, 5, 0, 0, 1000, NULL);
    eq_cancel(&q, h);
    eq_cancel(&q, h); /* twice is harmless */
    struct eq_event ev;
    uint64_t last_t = 0, last_arg = 0, n = 0;
    int first = 1;
    while (eq_pop(&q, &ev)) {
        CHECK(ev.arg != 1000);
        CHECK(ev.time_ps >= last_t);
        if (!first && ev.time_ps == last_t)
            CHECK(ev.arg > last_arg); /* FIFO among equal times */
        first = 0;
        last_t = ev.time_ps;
        last_arg = ev.arg;
        n++;
    }
    CHECK_EQ_INT(n, 100);
    CHECK(q.grows > 0); /* started with room for 16 */
    CHECK_EQ_INT(eq_push(&q, 3, 0, 0, 0, NULL), 0); /* now = 12: the past is refused */
    /* a push order taken early sorts before pushes made after the take */
    uint64_t early = eq_take_seq(&q);
    CHECK(eq_push(&q, 20, 0, 0, 1, NULL) != 0);
    CHECK(eq_push_seq(&q, 20, early, 0, 0, 2, NULL) != 0);
    CHECK(eq_pop(&q, &ev) && ev.arg == 2);
    CHECK(eq_pop(&q, &ev) && ev.arg == 1);
    /* a moved event keeps its handle and goes where its new key says */
    uint64_t h1 = eq_push(&q, 40, 0, 0, 1, NULL), h2 = eq_push(&q, 50, 0, 0, 2, NULL);
    CHECK(eq_push(&q, 45, 0, 0, 3, NULL) != 0);
    CHECK_EQ_INT(eq_move(&q, h2, 30, eq_take_seq(&q)), 0);   /* before all */
    CHECK_EQ_INT(eq_move(&q, h1, 45, eq_take_seq(&q)), 0);   /* after 3, its time's */
    CHECK_EQ_INT(eq_move(&q, h1, 10, 0), -1);                /* the past: refused */
    CHECK(eq_pop(&q, &ev) && ev.arg == 2 && ev.time_ps == 30);
    CHECK_EQ_INT(eq_move(&q, h2, 60, eq_take_seq(&q)), -1);  /* fired: stale */
    CHECK(eq_pop(&q, &ev) && ev.arg == 3);
    CHECK(eq_pop(&q, &ev) && ev.arg == 1 && ev.time_ps == 45);
    CHECK(!eq_pop(&q, &ev));
    eq_destroy(&q);
}

/* The queue against a plain array: random pushes at a few times (so a
 * time's bucket fills and empties over and over), pushes with a seq taken
 * before others at their time, moves, cancels and pops, from a capacity
 * that has to grow; every pop must be the least (time, seq) the array
 * holds. */
struct ref_ev {
    uint64_t t, seq, h, id;
    int live;
};

static uint64_t rnd(uint64_t *x)
{
    *x ^= *x << 13;
    *x ^= *x >> 7;
    *x ^= *x << 17;
    return *x;
}

static int ref_least(const struct ref_ev *r, uint32_t n)
{
    int best = -1;
    for (uint32_t i = 0; i < n; i++)
        if (r[i].live && (best < 0 || r[i].t < r[best].t || (r[i].t == r[best].t && r[i].seq < r[best].seq)))
            best = (int)i;
    return best;
}

/* A time from now on: one of six (buckets of many events) or one of
 * thousands (many buckets: the hash's probes and deletions). */
static uint64_t rnd_time(uint64_t *x, uint64_t now)
{
    uint64_t v = rnd(x);
    return (v & 1) ? now + (v >> 8) % 6 * 10 : now + (v >> 8) % 4096;
}

static void test_eq_random(void)
{
    enum { N = 30000 };
    struct ref_ev *r = calloc(N, sizeof *r);
    CHECK(r != NULL);
    if (r == NULL)
        return;
    struct eq q;
    CHECK_EQ_INT(eq_init(&q, 4), 0);
    uint64_t x = 88172645463325252ull, now = 0;
    uint32_t n = 0, live = 0, bad = 0;
    while (n + 3 < N) {
        uint64_t c = rnd(&x) % 10;
        if (c < 4 || live == 0) {               /* push */
            uint64_t t = rnd_time(&x, now);
            r[n] = (struct ref_ev){t, q.next_seq, 0, n, 1};
            r[n].h = eq_push(&q, t, 0, 0, n, NULL);
            n++;
            live++;
        } else if (c == 4) {                    /* a seq taken before two pushes at its time */
            uint64_t t = rnd_time(&x, now), early = eq_take_seq(&q);
            for (int k = 0; k < 2; k++) {
                r[n] = (struct ref_ev){t, q.next_seq, 0, n, 1};
                r[n].h = eq_push(&q, t, 0, 0, n, NULL);
                n++;
            }
            r[n] = (struct ref_ev){t, early, 0, n, 1};
            r[n].h = eq_push_seq(&q, t, early, 0, 0, n, NULL);
            n++;
            live += 3;
        } else if (c <= 6) {                    /* pop */
            struct eq_event ev;
            int want = ref_least(r, n);
            if (!eq_pop(&q, &ev) || want < 0 || ev.arg != (uint64_t)want)
                bad++;
            else {
                r[want].live = 0;
                live--;
                now = ev.time_ps;
            }
        } else {                                /* cancel or move a live one */
            uint32_t k = (uint32_t)(rnd(&x) % n);
            while (!r[k].live)
                k = (k + 1) % n;
            if (c == 7) {
                eq_cancel(&q, r[k].h);
                r[k].live = 0;
                live--;
            } else {
                uint64_t t = rnd_time(&x, now), seq = eq_take_seq(&q);
                if (eq_move(&q, r[k].h, t, seq) != 0)
                    bad++;
                r[k].t = t;
                r[k].seq = seq;
            }
        }
        if (q.size != live)
            bad++;
    }
    struct eq_event ev;
    while (eq_pop(&q, &ev)) {
        int want = ref_least(r, n);
        if (want < 0 || ev.arg != (uint64_t)want)
            bad++;
        else
            r[want].live = 0;
    }
    CHECK_EQ_INT(bad, 0);
    CHECK_EQ_INT(ref_least(r, n), -1);
    CHECK(q.grows > 0);
    eq_destroy(&q);
    free(r);
}

static void test_arena(void)
{
    struct arena a;
    memset(&a, 0, sizeof a);
    /* blocks of every size up to 40 KB, past several chunks: each zeroed,
     * aligned for any type, and none overlapping another (each filled with
     * its own byte, all checked at the end) */
    enum { N = 600 };
    unsigned char *p[N];
    size_t sz[N];
    for (int i = 0; i < N; i++) {
        sz[i] = (size_t)(i * 67) % 40000;
        p[i] = arena_calloc(&a, sz[i], 1);
        CHECK(((uintptr_t)p[i] % alignof(max_align_t)) == 0);
        size_t nz = 0;
        for (size_t k = 0; k < sz[i]; k++)
            nz += p[i][k] != 0;
        CHECK_EQ_INT(nz, 0);
        memset(p[i], i % 251 + 1, sz[i]);
    }
    size_t bad = 0;
    for (int i = 0; i < N; i++)
        for (size_t k = 0; k < sz[i]; k++)
            bad += p[i][k] != (unsigned char)(i % 251 + 1);
    CHECK_EQ_INT(bad, 0);
    /* growth keeps the old bytes and zeroes the new ones, in the arena
     * and without one (then it is realloc) */
    struct arena *as[2] = {&a, NULL};
    for (int w = 0; w < 2; w++) {
        uint32_t *v = arena_grow(as[w], NULL, 0, 3 * sizeof *v);
        for (uint32_t k = 0; k < 3; k++)
            v[k] = 7 + k;
        v = arena_grow(as[w], v, 3 * sizeof *v, 100000 * sizeof *v);
        CHECK(v[0] == 7 && v[1] == 8 && v[2] == 9 && v[3] == 0 && v[99999] == 0);
        if (as[w] == NULL)
            free(v);
    }
    /* a block larger than any chunk gets one of its own */
    unsigned char *big = arena_calloc(&a, 48u << 20, 1);
    CHECK(big[0] == 0 && big[(48u << 20) - 1] == 0);
    arena_free(&a);
    CHECK(a.head == NULL && a.used == 0);
}

struct done_log {
    uint64_t t[8];
    int n;
};

static void on_done(struct engine *e, void *owner, uint64_t arg)
{
    struct done_log *l = owner;
    l->t[arg] = e->now_ps;
    l->n++;
}

static void test_flow(void)
{
    struct engine e;
    CHECK_EQ_INT(engine_init(&e, 16), 0);
    struct flowsrv s;
    flowsrv_init(&s, &e, "test", 1e12); /* 1 byte per ps */
    struct done_log l;
    memset(&l, 0, sizeof l);
    /* flow 0 capped at 0.25 B/ps; flows 1 and 2 share the remaining 0.75 */
    flowsrv_start(&s, &e, 1000, 0.25e12, on_done, &l, 0);
    flowsrv_start(&s, &e, 750, 0, on_done, &l, 1);
    flowsrv_start(&s, &e, 1500, 0, on_done, &l, 2);
    engine_run(&e);
    CHECK_EQ_INT(l.n, 3);
    /* flow 1: 750 B at 0.375 B/ps -> t = 2000; then flow 2 gets 0.75 B/ps
     * for its remaining 750 B -> t = 3000; flow 0 at 0.25 -> 4000 */
    CHECK_NEAR_REL(l.t[1], 2000, 1e-9);
    CHECK_NEAR_REL(l.t[2], 3000, 1e-3);
    CHECK_NEAR_REL(l.t[0], 4000, 1e-3);
    CHECK_NEAR_REL(s.served, 3250, 1e-9);
    flowsrv_destroy(&s);
    engine_destroy(&e);
}

static void count_done(struct engine *e, void *owner, uint64_t arg)
{
    uint64_t *last = owner;
    (void)arg;
    last[0]++;
    last[1] = e->now_ps;
}

/* 40 flows at once on a server that starts with room for 4: its storage
 * (in the engine's arena) grows while flows are active and keeps them */
static void test_flow_growth(void)
{
    struct engine e;
    CHECK_EQ_INT(engine_init(&e, 16), 0);
    struct flowsrv s;
    flowsrv_init(&s, &e, "wide", 1e12);
    uint64_t done[2] = {0, 0};
    for (int i = 0; i < 40; i++)
        flowsrv_start(&s, &e, 100.0 * (i + 1), 0, count_done, done, (uint64_t)i);
    CHECK(s.grows >= 3 && s.cap >= 40);
    CHECK_EQ_INT(s.peak_flows, 40);
    engine_run(&e);
    CHECK_EQ_INT(done[0], 40);
    /* work conserving: the last finishes when all 82,000 bytes are served */
    CHECK_NEAR_REL(done[1], 82000, 1e-4);   /* each completion rounds up to a ps */
    flowsrv_destroy(&s);
    engine_destroy(&e);
}

/* Flows started in one event: the server shares its bandwidth out once,
 * when the event is over, and its completion event keeps the place among
 * equal times of the last start (an event pushed after that start fires
 * after the completion, one pushed before it fires before). */
struct defer_case {
    struct engine e;
    struct flowsrv s;
    uint32_t comp;
    int order[4], n;            /* what fired at t = 1000, in order */
};

static void defer_mark(struct engine *e, void *owner, uint64_t arg)
{
    struct defer_case *c = owner;
    if (e->now_ps == 1000 && c->n < 4 && (c->n == 0 || c->order[c->n - 1] != (int)arg))
        c->order[c->n++] = (int)arg;    /* the 40 flows' callbacks count once */
}

static void defer_handle(struct engine *e, void *self, const struct eq_event *ev)
{
    struct defer_case *c = self;
    if (ev->type == 1) {        /* the kick: event 10, 40 flows, event 11 */
        engine_after(e, 1000, c->comp, 2, 10, NULL);
        for (int i = 0; i < 40; i++)
            flowsrv_start(&c->s, e, 25, 0, defer_mark, c, 20);
        engine_after(e, 1000, c->comp, 2, 11, NULL);
        return;
    }
    defer_mark(e, c, ev->arg);
}

static const struct comp_ops defer_ops = {"defer", defer_handle};

static void test_flow_deferred(void)
{
    static struct defer_case c;
    memset(&c, 0, sizeof c);
    CHECK_EQ_INT(engine_init(&c.e, 16), 0);
    flowsrv_init(&c.s, &c.e, "defer", 1e12);
    c.comp = engine_register(&c.e, &defer_ops, &c);
    engine_at(&c.e, 0, c.comp, 1, 0, NULL);
    engine_run(&c.e);
    /* 40 x 25 B at 1 B/ps all end at t = 1000, shared out once */
    CHECK_EQ_INT(c.s.shares, 1);
    CHECK_EQ_INT(c.n, 3);
    CHECK_EQ_INT(c.order[0], 10);
    CHECK_EQ_INT(c.order[1], 20);
    CHECK_EQ_INT(c.order[2], 11);
    flowsrv_destroy(&c.s);
    engine_destroy(&c.e);
}

/* A trace of n ops, op i's text from op(i, buf), written to a fresh
 * folder, loaded into *t and run on the H100 config (*c) into *r; 0, or
 * -1 (reported, nothing to free). */
static int run_ops(int n, void (*op)(int i, char *buf, size_t size), struct hw_config *c,
                   struct trace *t, struct run_result *r)
{
    char dir[64] = "/tmp/strata-eng-XXXXXX", path[128];
    if (mkdtemp(dir) == NULL)
        return -1;
    snprintf(path, sizeof path, "%s/ops.json", dir);
    FILE *f = fopen(path, "w");
    CHECK(f != NULL);
    if (f == NULL)
        return -1;
    fprintf(f, "{\"strata_trace\": 1, \"ops\": [\n");
    for (int i = 0; i < n; i++) {
        char buf[512];
        op(i, buf, sizeof buf);
        fprintf(f, "%s%s\n", i ? "," : "", buf);
    }
    fprintf(f, "]}\n");
    fclose(f);
    struct diag d;
    int rc = tu_load_chip("configs/nvidia-h100-sxm.yaml", NULL, c, &d) || trace_load(path, t, &d);
    if (rc == 0 && run_trace(c, t, r, &d) != 0) {
        trace_free(t);
        rc = -1;
    }
    CHECK_EQ_INT(rc, 0);
    tu_rmtree(dir);
    return rc ? -1 : 0;
}

static void wide_op(int i, char *buf, size_t size)
{
    snprintf(buf, size, "{\"id\": \"e%d\", \"kind\": \"elementwise\", \"stream\": %d, \"dtype\": \"bf16\", "
                        "\"elements\": 1048576}", i, i);
}

static void test_many_streams(void)
{
    /* 300 ops on 300 streams, more than the model's runners and the
     * servers' initial flow storage: all must finish, the run must add up */
    struct hw_config c;
    struct trace t;
    struct run_result r;
    if (run_ops(300, wide_op, &c, &t, &r))
        return;
    for (uint32_t i = 0; i < r.nops; i++)
        CHECK(run_op_end(&r, i) > run_op_start(&r, i));
    /* 300 x 4 MiB through DRAM at no more than its peak */
    CHECK((double)r.total_ps * 1e-12 >= 300.0 * 4 * 1048576 / c.level[c.lv_dram].bw_bytes_per_s);
    run_result_free(&r);
    trace_free(&t);
}

/* The store by hand: two ops that did the same work at different times
 * share a body, a third that differs by one FLOP does not; the times stay
 * each op's own, and a freed slot is taken again before a new one. */
static void test_opstore_unit(void)
{
    struct opstore s = {0};
    struct run_op op[3];
    for (int i = 0; i < 3; i++) {
        uint32_t k = opstore_take(&s);
        CHECK_EQ_INT(k, 0);             /* the one slot, reused */
        struct op_result *r = opstore_slot(&s, k);
        CHECK(r->flops == 0 && r->end_ps == 0);     /* zeroed for the model */
        r->ready_ps = 100u * (unsigned)i;
        r->start_ps = r->ready_ps + 7;
        r->end_ps = r->start_ps + 50;
        r->time_ps[CAT_BUSY] = 50;
        r->flops = i == 2 ? 1e9 + 1 : 1e9;
        snprintf(r->tile, sizeof r->tile, "128x128x64");
        opstore_finish(&s, k, &op[i]);
    }
    CHECK_EQ_INT(s.nbody, 2);
    CHECK_EQ_INT(op[0].body, op[1].body);
    CHECK(op[2].body != op[0].body);
    CHECK(op[1].ready_ps == 100 && op[1].start_ps == 107 && op[2].start_ps == 207);
    CHECK(s.body[op[0].body].end_ps == 50 && s.body[op[0].body].start_ps == 0);
    /* two at once: two slots */
    uint32_t a = opstore_take(&s), b = opstore_take(&s);
    CHECK(a != b && s.nslots == 2);
    opstore_free(&s);
}

static void chain_op(int i, char *buf, size_t size)
{
    snprintf(buf, size, "{\"id\": \"g%d\", \"kind\": \"gemm\", \"dtype\": \"bf16\", \"m\": %d, "
                        "\"n\": 512, \"k\": 512}", i, i % 2 ? 256 : 1024);
}

/* A run of 2,000 chained GEMMs of two shapes keeps a handful of bodies,
 * not 2,000, and each op reads back whole with its own times. */
static void test_opstore_run(void)
{
    struct hw_config c;
    struct trace t;
    struct run_result r;
    if (run_ops(2000, chain_op, &c, &t, &r))
        return;
    printf("  2000 chained GEMMs of 2 shapes: %u bodies\n", r.nbody);
    CHECK(r.nbody >= 2 && r.nbody <= 16);
    uint64_t prev_end = 0;
    for (uint32_t i = 0; i < r.nops; i++) {
        struct op_result tmp;
        const struct op_result *o = run_op_result(&r, i, &tmp);
        CHECK(o->start_ps >= prev_end && o->end_ps > o->start_ps);  /* one stream: in order */
        CHECK(o->end_ps == run_op_end(&r, i) && o->flops == 2.0 * (i % 2 ? 256 : 1024) * 512 * 512);
        prev_end = o->end_ps;
    }
    CHECK(prev_end == r.total_ps);
    run_result_free(&r);
    trace_free(&t);
}

int main(void)
{
    test_eq();
    test_opstore_unit();
    test_opstore_run();
    test_arena();
    test_flow();
    test_flow_growth();
    test_flow_deferred();
    test_eq_random();
    test_many_streams();
    TEST_MAIN_END();
}
