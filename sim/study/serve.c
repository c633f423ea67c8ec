/* serve.c: the serving engine's scheduler and its event loop (serve.h).
 *
 * The engine runs one step at a time, back to back while it has work; the
 * events are the arrivals and the ends of steps, and since the engine is a
 * single server the next event is always the earlier of the two: no event
 * queue is needed, and the loop is the whole simulation.  At the start of
 * each step the arrivals so far join the queue, the scheduler picks the
 * step's sequences and their tokens, the step's time comes from the step
 * cache (serve_step.c), and at its end every sequence that reached the end
 * of its prompt (or of a recompute) or decoded produces a token.
 *
 * The schedulers, as vLLM's engines run them (vllm/core/scheduler.py of
 * the V0 engine, vllm/v1/core/sched/scheduler.py of V1):
 *   continuous, no chunked prefill (V0's default): if the queue's head
 *     fits (a seat under max_num_seqs, its whole prompt under
 *     max_batched_tokens, its blocks free), the step admits waiting
 *     requests FCFS while they fit and runs their prompts only; otherwise
 *     it decodes every running sequence;
 *   continuous with chunked prefill (V1): the running decodes first, one
 *     token each, then the running sequences still in their prompt, then
 *     the queue FCFS, each taking what is left of the step's token budget
 *     (a prompt may be split over several steps);
 *   continuous with no eviction (TensorRT-LLM's default capacity policy,
 *     GUARANTEED_NO_EVICT): as above, but the queue's head is admitted only
 *     when the blocks for its prompt and its whole output are free, and
 *     takes them all at once, so no running sequence ever needs a block it
 *     has not got and none is preempted;
 *   static (trtllm-bench's old mode, Hugging Face generate): a batch of
 *     max_num_seqs (or whatever is waiting when no more can arrive without
 *     it) runs its prompts in one step and then decodes until its longest
 *     output is done; finished sequences stay in the batch as padding, and
 *     nobody joins.  Each sequence's KV for its whole output is reserved at
 *     admission, so nothing is preempted.
 * Multi-step scheduling (vLLM 0.6's --num-scheduler-steps N): a step of
 * decodes only opens a window of N decode steps run without the
 * scheduler: nobody is admitted until it ends, a sequence that finishes
 * inside it keeps its seat as padding, and its last tokens reach the
 * client at the window's end (the engine returns a window's outputs
 * together).  The engine's CPU time is added to each step (not
 * overlapped with the GPU): host_seq_ps for each sequence in the step (its
 * inputs and its output token: sampling's bookkeeping, detokenising,
 * streaming), and host_step_ps when the scheduler runs (once a window).
 * KV blocks: a sequence holds ceil(tokens / block_size) blocks for the
 * tokens in the cache, taken as its steps need them.  A decode that needs
 * a block when none is free preempts the newest running sequence (itself,
 * when it is the newest), which frees its blocks, loses its KV and goes to
 * the front of the queue; it comes back as a prompt of its input and the
 * output so far (vLLM's recompute mode; swapping to host memory is not
 * modelled).  A prompt's chunk takes only the blocks that are free (a
 * shorter chunk, or none this step); when nothing can run at all, the
 * newest running sequence yields its blocks the same way.
 */
#include "serve.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "check.h"

/* A sequence's share of the step being planned. */
struct item {
    uint32_t req;
    uint32_t tokens;            /* tokens it computes this step */
    uint32_t ctx;               /* tokens cached before the step */
    int decode;                 /* a decode (one token after its output so far) */
};

struct eng {
    const struct serve_sched *s;
    struct serve_req *q;
    uint32_t n;
    struct serve_steps *st;
    struct serve_result *res;
    uint32_t *wait;             /* ring of n: the queue, head first */
    uint32_t whead, wlen;
    uint32_t *run;              /* the running sequences, oldest admitted first */
    uint32_t nrun;
    struct item *plan;          /* the step's sequences */
    uint32_t nplan;
    uint64_t free_blocks;
    uint64_t now;
    uint32_t na;                /* next request to join the queue (arrival order) */
    uint32_t nc;                /* next arrival the in-system count has not seen */
    uint32_t in_sys;            /* arrived and not finished */
    uint32_t issued;            /* closed loop: requests sent so far */
    uint32_t finished;
    uint32_t window;            /* steps left in the multi-step window, this one included */
    uint32_t window_seats;      /* the sequences the window started with (padding counts) */
    uint32_t *held;             /* finished inside the window, done at its end */
    uint32_t nheld;
    struct prefix *pg;          /* the shared prefixes' cache entries (prefix_groups) */
    uint32_t pblocks;           /* a cached prefix's blocks: its full ones */
};

/* A shared prefix in the cache. */
struct prefix {
    int cached;                 /* its pblocks blocks are held by the cache */
    uint32_t refs;              /* requests reading them (in the engine or at the queue's head) */
    uint64_t last_ps;           /* last attached or released (least recently used goes first) */
};

static uint32_t todo(const struct serve_req *r)
{
    return r->input + r->generated - r->ctx;
}

static int decoding(const struct serve_req *r)
{
    return r->generated >= 1 && todo(r) == 1;
}

static uint64_t blocks_for(const struct eng *e, uint64_t tokens)
{
    return (tokens + e->s->block_size - 1) / e->s->block_size;
}

/* The most tokens request r's KV ever holds: its prompt and its output but
 * the last token (never fed back), and that one too when speculative
 * decoding checks draft tokens up to the end. */
static uint64_t kv_last(const struct eng *e, const struct serve_req *r)
{
    return (uint64_t)r->input + r->output - (e->s->spec_k > 0 ? 0 : 1);
}

/* Frees cached prefixes no request reads, least recently used first,
 * until `need` blocks are free or none is left to evict. */
static void prefix_evict(struct eng *e, uint64_t need)
{
    while (e->free_blocks < need) {
        struct prefix *lru = NULL;
        for (uint32_t g = 0; g < e->s->prefix_groups; g++)
            if (e->pg[g].cached && e->pg[g].refs == 0 && (lru == NULL || e->pg[g].last_ps < lru->last_ps))
                lru = &e->pg[g];
        if (lru == NULL)
            return;
        lru->cached = 0;
        e->free_blocks += e->pblocks;
        e->res->prefix_evictions++;
    }
}

/* The queue's head starts after its group's cached prefix, if it has one
 * and holds no KV yet (a new request, or one preempted back to 0). */
static void prefix_attach(struct eng *e)
{
    struct serve_req *r = &e->q[e->wait[e->whead]];
    if (!e->s->prefix_caching || r->group == 0 || r->ctx != 0 || r->shared != 0 || r->generated > 0)
        return;
    struct prefix *p = &e->pg[r->group - 1];
    if (!p->cached)
        return;
    r->shared = e->pblocks;
    r->ctx = e->pblocks * e->s->block_size;
    p->refs++;
    p->last_ps = e->now;
    e->res->prefix_hit_tokens += r->ctx;
}

/* r no longer reads its group's cached prefix (finished or preempted). */
static void prefix_release(struct eng *e, struct serve_req *r)
{
    if (r->shared == 0)
        return;
    struct prefix *p = &e->pg[r->group - 1];
    SIM_CHECK(p->refs > 0);
    p->refs--;
    p->last_ps = e->now;
    r->shared = 0;
}

/* Takes the blocks r needs to hold `tokens` tokens (less the cached
 * prefix it reads), evicting unused prefixes for them: 0, or -1 if too
 * few are free even so. */
static int take_blocks(struct eng *e, struct serve_req *r, uint64_t tokens)
{
    uint64_t want = blocks_for(e, tokens) - r->shared;
    if (want <= r->blocks)
        return 0;
    if (want - r->blocks > e->free_blocks && e->s->prefix_caching)
        prefix_evict(e, want - r->blocks);
    if (want - r->blocks > e->free_blocks)
        return -1;
    e->free_blocks -= want - r->blocks;
    r->blocks = (uint32_t)want;
    return 0;
}

static void push_back(struct eng *e, uint32_t i)
{
    e->wait[(e->whead + e->wlen++) % e->n] = i;
}

static void push_front(struct eng *e, uint32_t i)
{
    e->whead = (e->whead + e->n - 1) % e->n;
    e->wait[e->whead] = i;
    e->wlen++;
}

static uint32_t pop_front(struct eng *e)
{
    uint32_t i = e->wait[e->whead];
    e->whead = (e->whead + 1) % e->n;
    e->wlen--;
    return i;
}

/* The newest running sequence loses its KV and goes to the queue's front. */
static void preempt_newest(struct eng *e)
{
    struct serve_req *r = &e->q[e->run[--e->nrun]];
    e->free_blocks += r->blocks;
    r->blocks = 0;
    prefix_release(e, r);
    r->ctx = 0;
    r->preemptions++;
    r->queued_since = e->now;
    e->res->preemptions++;
    push_front(e, e->run[e->nrun]);
}

static void plan_add(struct eng *e, uint32_t req, uint32_t tokens)
{
    const struct serve_req *r = &e->q[req];
    e->plan[e->nplan++] = (struct item){req, tokens, r->ctx, decoding(r)};
}

/* Moves time to t: the integrals over the interval, and the arrivals in it. */
static void advance(struct eng *e, uint64_t t)
{
    SIM_CHECK_LE_U64(e->now, t);
    uint64_t dt = t - e->now;
    e->res->in_system_ps += (double)e->in_sys * (double)dt;
    e->res->kv_block_ps += (double)(e->s->kv_blocks - e->free_blocks) * (double)dt;
    for (; e->nc < e->n && e->q[e->nc].arrival_ps <= t; e->nc++) {
        uint64_t a = e->q[e->nc].arrival_ps;
        e->res->in_system_ps += (double)(t - (a > e->now ? a : e->now));
        e->in_sys++;
    }
    e->now = t;
}

/* The arrivals until now join the queue. */
static void admit_arrivals(struct eng *e)
{
    for (; e->na < e->n && e->q[e->na].arrival_ps <= e->now; e->na++) {
        e->q[e->na].queued_since = e->q[e->na].arrival_ps;
        push_back(e, e->na);
    }
}

/* The queue's head joins the running sequences with its first `tokens`
 * tokens (reserve: the blocks for its whole output) if they fit: 1, or 0. */
static int admit_head(struct eng *e, uint32_t tokens, uint64_t reserve)
{
    uint32_t i = e->wait[e->whead];
    struct serve_req *r = &e->q[i];
    uint64_t need = (uint64_t)r->ctx + tokens;    /* ctx > 0: a prompt prefilled elsewhere */
    if (e->nrun >= e->s->max_num_seqs || take_blocks(e, r, reserve > need ? reserve : need) != 0)
        return 0;
    pop_front(e);
    r->queued_ps += e->now - r->queued_since;
    if (!r->started) {
        r->started = 1;
        r->start_ps = e->now;
    }
    e->run[e->nrun++] = i;
    plan_add(e, i, tokens);
    return 1;
}

/* Speculative decoding: the tokens request i's next step produces, its
 * draft tokens accepted plus the one the model samples after them.  Each
 * draft token is accepted with chance spec_accept given the ones before
 * it were (Leviathan et al., ICML 2023: on average (1 - a^(k+1)) / (1 - a)
 * tokens a step); the draw is a hash of the request and its output so
 * far, so a run is the same every time and a request's draws do not
 * depend on the others'. */
static uint32_t spec_tokens(const struct eng *e, uint32_t i)
{
    const struct serve_req *r = &e->q[i];
    /* splitmix64 of the request's index (times its increment) and its output so far */
    uint64_t x = (uint64_t)i * UINT64_C(0x9e3779b97f4a7c15) + r->generated + UINT64_C(0x632be59bd9b4e019) -
                 UINT64_C(0x9e3779b97f4a7c15);
    uint64_t h = serve_splitmix64(&x);
    double u = (double)(h >> 11) * 0x1p-53, p = e->s->spec_accept;
    uint32_t j = 0;
    while (j < e->s->spec_k && u < p) {
        j++;
        p *= e->s->spec_accept;
    }
    uint32_t left = r->output - r->generated;
    return j + 1 < left ? j + 1 : left;
}

/* The running decodes, oldest first, one token each (speculative: its
 * accepted draft tokens and one more, its k + 1 checked tokens' KV slots
 * taken); a decode that needs a block when none is free preempts the
 * newest (itself when it is). */
static void plan_decodes(struct eng *e, uint64_t *budget)
{
    for (uint32_t k = 0; k < e->nrun && *budget > 0; k++) {
        struct serve_req *r = &e->q[e->run[k]];
        if (!decoding(r))
            continue;
        uint64_t look = 1, end = (uint64_t)r->input + r->output;
        if (e->s->spec_k > 0)
            look = r->ctx + e->s->spec_k + 1 <= end ? e->s->spec_k + 1 : end - r->ctx;
        while (k < e->nrun && take_blocks(e, r, (uint64_t)r->ctx + look) != 0)
            preempt_newest(e);
        if (k >= e->nrun)       /* it was the newest */
            break;
        plan_add(e, e->run[k], e->s->spec_k > 0 ? spec_tokens(e, e->run[k]) : 1);
        *budget -= look < *budget ? look : *budget;
    }
}

/* The running sequences still in their prompt, then the queue, FCFS, each
 * with what is left of the budget and of the free blocks. */
static void plan_prefills(struct eng *e, uint64_t *budget)
{
    uint64_t bs = e->s->block_size;
    for (uint32_t k = 0; k < e->nrun && *budget > 0; k++) {
        struct serve_req *r = &e->q[e->run[k]];
        if (decoding(r))
            continue;
        uint64_t c = todo(r) < *budget ? todo(r) : *budget;
        uint64_t room = ((uint64_t)r->blocks + e->free_blocks) * bs - r->ctx;
        if (c > room)
            c = room;
        if (c == 0)
            continue;
        take_blocks(e, r, r->ctx + c);
        plan_add(e, e->run[k], (uint32_t)c);
        *budget -= c;
    }
    while (e->wlen > 0 && *budget > 0) {
        prefix_attach(e);
        uint32_t t = todo(&e->q[e->wait[e->whead]]);
        uint64_t c = t < *budget ? t : *budget;
        if (!e->s->chunked_prefill && c < t)
            break;              /* the whole prompt in one step, or wait */
        const struct serve_req *h = &e->q[e->wait[e->whead]];
        if (!admit_head(e, (uint32_t)c, e->s->no_evict ? kv_last(e, h) : 0))
            break;
        *budget -= c;
    }
}

/* Plans a continuous-batching step into e->plan (empty: nothing can run). */
static void plan_continuous(struct eng *e)
{
    uint64_t budget = e->s->max_batched_tokens;
    e->nplan = 0;
    if (e->window > 0) {        /* inside a multi-step window: its decodes, no one joins */
        plan_decodes(e, &budget);
        return;
    }
    if (e->s->chunked_prefill) {
        plan_decodes(e, &budget);
        plan_prefills(e, &budget);
        return;
    }
    plan_prefills(e, &budget);  /* prompts only: the running ones all decode */
    if (e->nplan == 0)
        plan_decodes(e, &budget);
}

/* Plans a static batch's step: its prompts when none runs, else a decode
 * of the whole batch.  *wait_more: 1 when the batch is not full and more
 * requests will arrive by themselves (the caller waits for them). */
static void plan_static(struct eng *e, int *wait_more)
{
    e->nplan = 0;
    *wait_more = 0;
    if (e->nrun > 0) {
        for (uint32_t k = 0; k < e->nrun; k++) {
            const struct serve_req *r = &e->q[e->run[k]];
            if (r->generated < r->output)
                plan_add(e, e->run[k], 1);
        }
        return;
    }
    int more = e->na < e->n && e->q[e->na].arrival_ps != UINT64_MAX;
    if (e->wlen < e->s->max_num_seqs && more) {
        *wait_more = 1;
        return;
    }
    while (e->wlen > 0) {
        prefix_attach(e);
        const struct serve_req *r = &e->q[e->wait[e->whead]];
        if (!admit_head(e, todo(r), (uint64_t)r->input + r->output - 1))
            break;
    }
}

/* The step's time from its plan (a static decode counts its padding). */
static int step_time(struct eng *e, uint64_t *ps, struct diag *d)
{
    uint64_t nd = 0, dctx = 0, np = 0, ptok = 0, pctx = 0;
    for (uint32_t k = 0; k < e->nplan; k++) {
        const struct item *it = &e->plan[k];
        if (it->decode && !e->s->is_static) {
            nd++;
            dctx += it->ctx;
        } else if (!it->decode) {
            np++;
            ptok += it->tokens;
            pctx += it->ctx;
        }
    }
    if (e->s->is_static && np == 0)
        for (uint32_t k = 0; k < e->nrun; k++) {
            nd++;
            dctx += e->q[e->run[k]].ctx;
        }
    /* the CPU's part: a sequence's output every step, and the scheduler when it runs (maybe
     * opening a window) */
    uint64_t host = e->s->host_seq_ps * (np + nd);
    if (e->window == 0) {
        host += e->s->host_step_ps;
        if (np == 0 && e->s->scheduler_steps > 1 && !e->s->is_static) {
            e->window = e->s->scheduler_steps;
            e->window_seats = (uint32_t)nd;
        }
    } else if (nd > 0 && nd < e->window_seats) {    /* the finished seats run as padding */
        dctx += (dctx / nd) * (e->window_seats - nd);
        nd = e->window_seats;
    }
    e->res->steps++;
    if (nd > 0 && np > 0)
        e->res->mixed_steps++;
    else if (nd > 0)
        e->res->decode_steps++;
    else
        e->res->prefill_steps++;
    double ej;
    if (e->s->spec_k > 0 && nd > 0) {
        /* speculative: the draft's and the check's passes for the decodes, then any prompts */
        uint64_t tp;
        double jp;
        if (serve_spec_time(e->st, (uint32_t)nd, (dctx + nd - 1) / nd, e->s->spec_k, ps, &ej, d) != 0 ||
            (np > 0 && serve_step_time(e->st, 0, 0, (uint32_t)np, ptok, (pctx + np - 1) / np, &tp, &jp,
                                       d) != 0))
            return -1;
        if (np > 0) {
            *ps += tp;
            ej += jp;
        }
        for (uint32_t k = 0; k < e->nplan; k++)
            if (e->plan[k].decode) {
                e->res->spec_steps++;
                e->res->spec_tokens += e->plan[k].tokens;
            }
    } else if (serve_step_time(e->st, (uint32_t)nd, nd ? (dctx + nd - 1) / nd : 0, (uint32_t)np, ptok,
                               np ? (pctx + np - 1) / np : 0, ps, &ej, d) != 0)
        return -1;
    e->res->step_j += ej;
    *ps += host;
    e->res->host_ps += host;
    return 0;
}

/* A request's last token reaches its client now. */
static void complete(struct eng *e, uint32_t i)
{
    e->q[i].finish_ps = e->now;
    e->finished++;
    e->in_sys--;
    if (e->s->concurrency > 0 && e->issued < e->n)   /* its client sends the next */
        e->q[e->issued++].arrival_ps = e->now;
}

/* A multi-step window ends now: the outputs it held go out. */
static void end_window(struct eng *e)
{
    e->window = 0;
    for (uint32_t k = 0; k < e->nheld; k++)
        complete(e, e->held[k]);
    e->nheld = 0;
}

/* The end of a step: each planned sequence's tokens are in the cache, a
 * token comes out of each that reached its target; the finished leave
 * (at once; a static batch's when the whole batch is done). */
static void finish_step(struct eng *e)
{
    for (uint32_t k = 0; k < e->nplan; k++) {
        struct serve_req *r = &e->q[e->plan[k].req];
        r->ctx += e->plan[k].tokens;
        if (e->plan[k].decode)  /* speculative: its tokens but the last, counted below */
            r->generated += e->plan[k].tokens - 1;
        /* the first of its group to hold the prefix's full blocks gives them to the cache */
        if (e->s->prefix_caching && r->group != 0 && r->shared == 0 && e->pblocks > 0 &&
            r->ctx >= e->pblocks * e->s->block_size && !e->pg[r->group - 1].cached) {
            struct prefix *p = &e->pg[r->group - 1];
            SIM_CHECK(r->blocks >= e->pblocks);
            p->cached = 1;
            p->refs = 1;
            p->last_ps = e->now;
            r->blocks -= e->pblocks;
            r->shared = e->pblocks;
        }
        if (r->ctx != r->input + r->generated)
            continue;
        if (++r->generated == 1)
            r->first_token_ps = e->now;
        if (r->generated < r->output)
            continue;
        if (e->window > 1)
            e->held[e->nheld++] = e->plan[k].req;
        else
            complete(e, e->plan[k].req);
    }
    if (e->window > 0 && --e->window == 0)
        end_window(e);
    uint32_t keep = 0, done = 0;
    for (uint32_t k = 0; k < e->nrun; k++)
        done += e->q[e->run[k]].generated == e->q[e->run[k]].output;
    for (uint32_t k = 0; k < e->nrun; k++) {
        struct serve_req *r = &e->q[e->run[k]];
        if (r->generated == r->output && (!e->s->is_static || done == e->nrun)) {
            e->free_blocks += r->blocks;
            r->blocks = 0;
            prefix_release(e, r);
        } else
            e->run[keep++] = e->run[k];
    }
    e->nrun = keep;
}

/* Every request must fit an empty engine: its KV at its end, and without
 * chunked prefill its longest recompute in one step.  0, or -1 with *d. */
static int check_fits(const struct eng *e, struct diag *d)
{
    for (uint32_t i = 0; i < e->n; i++) {
        const struct serve_req *r = &e->q[i];
        uint64_t last = kv_last(e, r);
        if (blocks_for(e, last) > e->s->kv_blocks)
            return diag_set(d, DIAG_E_RANGE, "", 0, "serve",
                            "request %u needs %llu KV blocks of %u tokens (%u in, %u out), and the cache "
                            "holds %llu: a larger device, more --tp or a smaller model", i,
                            (unsigned long long)blocks_for(e, last), e->s->block_size, r->input, r->output,
                            (unsigned long long)e->s->kv_blocks);
        /* a prompt runs in one step without chunked prefill, and so does a
         * recompute after a preemption (none without eviction) */
        uint64_t one = e->s->no_evict ? r->input : (uint64_t)r->input + r->output - 1;
        if (!e->s->is_static && !e->s->chunked_prefill && one > e->s->max_batched_tokens)
            return diag_set(d, DIAG_E_RANGE, "", 0, "--max-batched-tokens",
                            "%u is below request %u's %llu tokens (its prompt, or its recompute after a "
                            "preemption, runs in one step without chunked prefill): raise it or "
                            "--chunked-prefill on", e->s->max_batched_tokens, i, (unsigned long long)one);
    }
    return 0;
}

/* Keeps the engine's state at the start of a step of time dt (the array
 * doubles when full: amortised, and only when a timeline is asked for). */
static void sample(struct eng *e, uint64_t dt, uint64_t used)
{
    struct serve_result *r = e->res;
    if (r->nsamples == r->cap_samples) {
        r->cap_samples = r->cap_samples ? 2 * r->cap_samples : 4096;
        r->samples = sim_xrealloc(r->samples, r->cap_samples * sizeof *r->samples);
    }
    struct serve_sample *s = &r->samples[r->nsamples++];
    memset(s, 0, sizeof *s);
    s->t_ps = e->now;
    s->dur_ps = dt;
    s->kv_blocks = (uint32_t)used;
    s->running = e->nrun;
    s->waiting = e->wlen;
    for (uint32_t k = 0; k < e->nplan; k++) {
        s->decodes += (uint32_t)e->plan[k].decode;
        s->prefills += (uint32_t)!e->plan[k].decode;
        s->tokens += e->plan[k].tokens;
    }
}

void serve_result_free(struct serve_result *r)
{
    free(r->samples);
    r->samples = NULL;
    r->nsamples = r->cap_samples = 0;
}

/* One turn of the loop: a step, or a wait for the next arrival.  0, or -1 with *d. */
static int turn(struct eng *e, struct diag *d)
{
    admit_arrivals(e);
    int wait_more = 0;
    if (e->s->is_static)
        plan_static(e, &wait_more);
    else
        plan_continuous(e);
    if (e->nplan == 0 && e->window > 0) {   /* the window's sequences are all done: it ends */
        end_window(e);
        if (e->finished == e->n)
            return 0;
        plan_continuous(e);
    }
    while (e->nplan == 0 && e->nrun > 0 && !e->s->is_static) {
        /* running prompts blocked on blocks with no decode to free any: the newest yields */
        preempt_newest(e);
        plan_continuous(e);
    }
    if (e->nplan == 0) {
        SIM_CHECK(e->nrun == 0);
        uint64_t next = e->na < e->n ? e->q[e->na].arrival_ps : UINT64_MAX;
        if (next == UINT64_MAX || (e->wlen > 0 && !wait_more))
            return diag_set(d, DIAG_E_RANGE, "", 0, "serve", "the queue's head (request %u) cannot be "
                            "scheduled on an empty engine", e->wlen ? e->wait[e->whead] : e->na);
        advance(e, next);
        return 0;
    }
    uint64_t dt;
    if (step_time(e, &dt, d) != 0)
        return -1;
    uint64_t used = e->s->kv_blocks - e->free_blocks;
    if (used > e->res->kv_max_blocks)
        e->res->kv_max_blocks = used;
    if (e->s->record)
        sample(e, dt, used);
    e->res->busy_ps += dt;
    advance(e, e->now + dt);
    finish_step(e);
    return 0;
}

int serve_run(const struct serve_sched *s, struct serve_reqs *q, struct serve_steps *st,
              struct serve_result *res, struct diag *d)
{
    memset(res, 0, sizeof *res);
    struct eng e;
    memset(&e, 0, sizeof e);
    e.s = s;
    e.q = q->r;
    e.n = q->n;
    e.st = st;
    e.res = res;
    e.free_blocks = s->kv_blocks;
    e.issued = s->concurrency > 0 ? (s->concurrency < q->n ? s->concurrency : q->n) : q->n;
    SIM_CHECK(s->block_size > 0 && s->max_num_seqs > 0 && q->n > 0);
    if (check_fits(&e, d) != 0)
        return -1;
    uint32_t seats = s->max_num_seqs < q->n ? s->max_num_seqs : q->n;
    e.wait = sim_xcalloc(q->n, sizeof *e.wait);
    e.run = sim_xcalloc(seats, sizeof *e.run);
    e.plan = sim_xcalloc(seats, sizeof *e.plan);
    e.held = sim_xcalloc(seats, sizeof *e.held);
    e.pg = s->prefix_groups > 0 ? sim_xcalloc(s->prefix_groups, sizeof *e.pg) : NULL;
    e.pblocks = s->prefix_caching ? s->prefix_tokens / s->block_size : 0;
    int rc = 0;
    while (rc == 0 && e.finished < e.n)
        rc = turn(&e, d);
    res->end_ps = e.now;
    free(e.wait);
    free(e.run);
    free(e.plan);
    free(e.held);
    free(e.pg);
    return rc;
}

/* Adds one instance's result into the pool's. */
static void add_result(struct serve_result *to, const struct serve_result *r)
{
    to->end_ps = r->end_ps > to->end_ps ? r->end_ps : to->end_ps;
    to->steps += r->steps;
    to->prefill_steps += r->prefill_steps;
    to->decode_steps += r->decode_steps;
    to->mixed_steps += r->mixed_steps;
    to->preemptions += r->preemptions;
    to->prefix_hit_tokens += r->prefix_hit_tokens;
    to->prefix_evictions += r->prefix_evictions;
    to->spec_steps += r->spec_steps;
    to->spec_tokens += r->spec_tokens;
    to->kv_max_blocks = r->kv_max_blocks > to->kv_max_blocks ? r->kv_max_blocks : to->kv_max_blocks;
    to->kv_block_ps += r->kv_block_ps;
    to->in_system_ps += r->in_system_ps;
    to->busy_ps += r->busy_ps;
    to->host_ps += r->host_ps;
    to->step_j += r->step_j;
}

/* Orders a decode pool's requests by when their KV is ready, then by id. */
struct ready {
    uint64_t t;
    uint32_t i;
};
static int ready_cmp(const void *x, const void *y)
{
    const struct ready *a = x, *b = y;
    return a->t != b->t ? (a->t < b->t ? -1 : 1) : (a->i > b->i) - (a->i < b->i);
}

/* Runs instance k of n of a pool: the requests idx[j] for j = k, k + n, ...
 * as sub built from them (prefill: output 1; decode: their KV cached at
 * arrival), and copies the results back through back(). */
static int run_pool(const struct serve_sched *s, struct serve_reqs *q, struct serve_steps *st,
                    const uint32_t *idx, uint32_t m, uint32_t k, uint32_t n, int decode,
                    const uint64_t *ready_ps, struct serve_result *res, struct diag *d)
{
    uint32_t cnt = 0;
    for (uint32_t j = k; j < m; j += n)
        cnt++;
    if (cnt == 0)
        return 0;
    struct serve_reqs sub = {sim_xcalloc(cnt, sizeof *sub.r), cnt};
    uint32_t c = 0;
    for (uint32_t j = k; j < m; j += n, c++) {
        const struct serve_req *r = &q->r[idx[j]];
        struct serve_req *x = &sub.r[c];
        x->input = r->input;
        x->group = r->group;
        if (decode) {
            x->arrival_ps = ready_ps[idx[j]];
            x->output = r->output;
            x->ctx = r->input;
            x->generated = 1;
        } else {
            x->arrival_ps = r->arrival_ps;
            x->output = 1;
        }
    }
    struct serve_sched one = *s;
    one.concurrency = 0;
    struct serve_result r1;
    int rc = serve_run(&one, &sub, st, &r1, d);
    if (rc == 0) {
        add_result(res, &r1);
        c = 0;
        for (uint32_t j = k; j < m; j += n, c++) {
            struct serve_req *r = &q->r[idx[j]];
            const struct serve_req *x = &sub.r[c];
            r->queued_ps += x->queued_ps;
            r->preemptions += x->preemptions;
            r->finish_ps = x->finish_ps;
            if (!decode) {
                r->first_token_ps = x->first_token_ps;
                r->start_ps = x->start_ps;
                r->started = 1;
            }
        }
    }
    serve_result_free(&r1);
    free(sub.r);
    return rc;
}

int serve_run_disagg(const struct serve_sched *s, struct serve_reqs *q, struct serve_steps *st, uint32_t np,
                     uint32_t nd, double xfer_ps_per_token, struct serve_result *res, struct diag *d)
{
    SIM_CHECK(np > 0 && nd > 0 && q->n > 0 && s->concurrency == 0);
    memset(res, 0, sizeof *res);
    uint32_t *idx = sim_xcalloc(q->n, sizeof *idx);
    uint64_t *ready_ps = sim_xcalloc(q->n, sizeof *ready_ps);
    struct ready *rd = sim_xcalloc(q->n, sizeof *rd);
    for (uint32_t i = 0; i < q->n; i++)
        idx[i] = i;
    int rc = 0;
    for (uint32_t k = 0; k < np && rc == 0; k++)
        rc = run_pool(s, q, st, idx, q->n, k, np, 0, NULL, res, d);
    uint32_t m = 0;
    for (uint32_t i = 0; i < q->n && rc == 0; i++)
        if (q->r[i].output > 1) {
            ready_ps[i] = q->r[i].first_token_ps + (uint64_t)llround(xfer_ps_per_token * q->r[i].input);
            rd[m++] = (struct ready){ready_ps[i], i};
        }
    qsort(rd, m, sizeof *rd, ready_cmp);
    for (uint32_t j = 0; j < m; j++)
        idx[j] = rd[j].i;
    for (uint32_t k = 0; k < nd && rc == 0; k++)
        rc = run_pool(s, q, st, idx, m, k, nd, 1, ready_ps, res, d);
    free(idx);
    free(ready_ps);
    free(rd);
    return rc;
}

/* Defaults where neither the stack's `serving:` block nor the caller says
 * (vLLM's, https://docs.vllm.ai/en/latest/configuration/engine_args.html
 * and vllm/engine/arg_utils.py EngineArgs): max_num_seqs 256, block_size
 * 16; chunked prefill on with 8192 tokens a step (V1's default for the
 * OpenAI server: arg_utils.py default_max_num_batched_tokens); without
 * chunked prefill, max(max_model_len, 2048) tokens (V0's SchedulerConfig),
 * max_model_len being the model's max_position_embeddings as vLLM takes it. */
#define SERVE_DEF_SEQS 256
#define SERVE_DEF_BLOCK 16
#define SERVE_DEF_TOKENS_CHUNKED 8192
#define SERVE_DEF_TOKENS_V0_MIN 2048

uint32_t serve_sched_tokens(int chunked_prefill, uint64_t max_pos)
{
    if (chunked_prefill)
        return SERVE_DEF_TOKENS_CHUNKED;
    return (uint32_t)(max_pos > SERVE_DEF_TOKENS_V0_MIN ? max_pos : SERVE_DEF_TOKENS_V0_MIN);
}

void serve_sched_defaults(const struct stack *stk, uint64_t max_pos, struct serve_sched *s, int *tokens_given)
{
    memset(s, 0, sizeof *s);
    s->max_num_seqs = SERVE_DEF_SEQS;
    s->block_size = SERVE_DEF_BLOCK;
    s->chunked_prefill = 1;
    s->scheduler_steps = 1;
    long tokens = -1;
    if (stk != NULL) {
        if (stk->serve_static >= 0)
            s->is_static = stk->serve_static;
        if (stk->serve_max_num_seqs > 0)
            s->max_num_seqs = (uint32_t)stk->serve_max_num_seqs;
        if (stk->serve_block_size > 0)
            s->block_size = (uint32_t)stk->serve_block_size;
        if (stk->serve_chunked_prefill >= 0)
            s->chunked_prefill = stk->serve_chunked_prefill;
        if (stk->serve_no_evict >= 0)
            s->no_evict = stk->serve_no_evict;
        tokens = stk->serve_max_batched_tokens;
        if (stk->serve_scheduler_steps > 0)
            s->scheduler_steps = (uint32_t)stk->serve_scheduler_steps;
        if (stk->serve_host_step_s >= 0)
            s->host_step_ps = (uint64_t)(stk->serve_host_step_s * 1e12 + 0.5);
        if (stk->serve_host_seq_s >= 0)
            s->host_seq_ps = (uint64_t)(stk->serve_host_seq_s * 1e12 + 0.5);
    }
    s->max_batched_tokens = tokens > 0 ? (uint32_t)tokens : serve_sched_tokens(s->chunked_prefill, max_pos);
    if (tokens_given != NULL)
        *tokens_given = tokens > 0;
}

void serve_step_templates(const struct stack *stk, enum dtype dtype, uint32_t tp, struct llm_step *pre,
                          struct llm_step *dec)
{
    struct llm_step s = {LLM_DECODE, 1, 1, 0, DT_BF16, ATTN_FLASH, DT_COUNT, WF_NONE, 0, LLM_FW_FUSED,
                         1, 1, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0};
    s.dtype = s.kv_dtype = dtype;
    s.tp = tp;
    *pre = s;
    pre->phase = LLM_PREFILL;
    *dec = s;
    if (stk != NULL) {
        stack_apply_llm(stk, pre, 0, 0);
        stack_apply_llm(stk, dec, 0, 0);
    }
}
