/* llm.c: llm_build (see llm.h): the step's layout and the trace's size,
 * then every simulated rank's ops through the builder (llmb.h). */
#include "llm.h"

#include <stdio.h>
#include <string.h>

#include "check.h"
#include "llmb.h"
#include "llmb_cp.h"
#include "llmb_par.h"
#include "llmb_pp.h"
#include "llmb_rank.h"

/* The step's parallel layout, as llm_build builds it. */
struct layout {
    uint32_t tp, dp, ep, cp, pp, dcn; /* ranks of each kind (1: none); dp counts the CP ranks */
    uint32_t ep_tp;             /* EP over the TP group: tp, else 0 */
    uint32_t dp_sim;            /* replicas given ops (counting the CP ranks) */
    uint32_t mb, vpp;           /* micro-batches, model chunks a stage */
    uint32_t ndev;              /* devices in all */
    uint64_t seqs;              /* replicas, each on its own batch */
    int schedule;               /* a pipeline schedule (or gradient accumulation) */
};

static void layout_of(const struct llm_step *s, struct layout *L)
{
    uint32_t tp = s->tp > 1 ? s->tp : 1, dp = s->dp > 1 ? s->dp : 1;
    uint32_t ep = s->ep > 1 ? s->ep : 1, cp = s->cp > 1 ? s->cp : 1;
    int train = s->phase == LLM_TRAIN;
    L->dcn = s->dcn > 1 ? s->dcn : 1;
    L->pp = s->pp > 1 ? s->pp : 1;
    L->mb = s->microbatches ? s->microbatches : (uint32_t)s->batch;
    L->vpp = s->vpp > 1 ? s->vpp : 1;
    /* EP over the TP group adds no ranks, groups or all-to-alls; any other
     * EP is inside data parallelism, the EP groups blocks of the replicas
     * (--ep E alone: E replicas, attention data-parallel over them) */
    uint32_t ep_tp = ep > 1 && ep == tp ? tp : 0;
    if (ep_tp)
        ep = 1;
    if (ep > 1 && dp == 1)
        dp = ep;
    /* ops go to the simulated ranks only (the first slice, dp_sim replicas) */
    uint32_t dp_sim = s->dp_sim > 0 && s->dp_sim < dp ? s->dp_sim : dp;
    /* context parallelism: each replica is cp ranks (CP after TP in
     * Megatron's rank order), simulated whole; from here dp counts them all */
    L->seqs = (uint64_t)dp;
    dp *= cp;
    dp_sim *= cp;
    L->tp = tp;
    L->dp = dp;
    L->ep = ep;
    L->cp = cp;
    L->ep_tp = ep_tp;
    L->dp_sim = dp_sim;
    L->ndev = tp * dp * L->pp * L->dcn;
    /* with micro-batches and no pipeline (gradient accumulation), the
     * pipeline's schedule on one stage: forward, backward, forward, ...,
     * the gradients reduced during the last backward */
    L->schedule = train && (L->pp > 1 || s->microbatches > 1);
}

/* The most ops the step can have. */
static uint64_t op_cap(const struct llm_config *c, const struct llm_step *s, const struct layout *L)
{
    uint32_t cp = L->cp, tp = L->tp, pp = L->pp;
    int train = s->phase == LLM_TRAIN;
    /* a layer's forward ops at most (a MoE block's router, top-k, all-to-alls
     * and experts: 8 more) */
    uint32_t per_layer = (c->encoder ? 24 : s->framework == LLM_FW_HF ? 64 : s->framework == LLM_FW_LLAMA_CPP ? 28 : 14) + (c->experts ? 8 : 0) +
                         (c->shared_experts ? 3 : 0) + (c->kv_lora ? 6 : 0) + (c->qk_norm ? 1 : 0) +
                         (cp > 1 ? 2 * cp + 2 : 0) +    /* the CP ring's steps and sends */
                         (s->dropout > 0 ? 2 : 0) +     /* the bias-dropout-adds */
                         (s->sp ? 6 : 0);   /* SP backward: input all-gathers, split wgrads */
    uint32_t nsim = tp * L->dp_sim * pp;
    uint64_t U = llm_ubatch_tokens(s, cp);
    uint64_t pieces = U ? (s->prompt + U - 1) / U : 1;    /* a prefill's micro-batches */
    if (s->images > 0)  /* a VLM's image tower and projector ahead of the decoder */
        per_layer += (uint32_t)((c->vit.layers * 24 + 32 + c->layers - 1) / c->layers);
    uint64_t cap64 = ((uint64_t)c->layers * (per_layer + 4) + 8) *
                     (train ? (s->recompute ? 3 : 2) : pieces) * nsim + 1;
    if (L->schedule) /* every micro-batch's steps (with TP's all-reduces), the copies, the
                      * gradient all-reduces and one scratch forward, on every TP x DP rank */
        cap64 = (((uint64_t)c->layers * (per_layer + 8) + 16) * ((s->recompute ? 3 : 2) * (uint64_t)L->mb + 1) +
                 (24 * (uint64_t)L->mb * L->vpp + c->layers + 8) * pp) * tp *
                L->dp_sim + 16;
    return cap64;
}

/* Every simulated rank's step without a pipeline schedule. */
static void build_ranks(struct llmb *b, const struct llm_config *c, const struct llm_step *s,
                        const struct layout *L, const struct llmb_groups *g)
{
    uint32_t tp = L->tp, dp = L->dp;
    b->t->symmetric = L->dp_sim < dp || L->dcn > 1;   /* the other replicas' devices mirror these */
    for (uint32_t r = 0; r < tp * L->dp_sim; r++) {  /* replicas past dp_sim: mirrors, no ops */
        b->prev = UINT32_MAX;
        b->device = r;
        b->tp_group = tp > 1 ? r / tp : 0;
        b->dp_group = dp > 1 ? g->ntpg + r % tp : 0;
        llmb_par_ep(b, tp, dp, L->pp, 0, r / tp, r % tp);
        llmb_par_cp(b, r / tp, r % tp, 0, tp, dp);
        b->dcn_group = L->dcn > 1 ? g->ntpg + g->ndpg + g->nepg + g->nedpg + g->ncpg + r : UINT32_MAX;
        if (L->ndev > 1 && L->pp == 1)
            snprintf(b->prefix, sizeof b->prefix, "r%u.", r);
        b->stages = L->pp;  /* inference: the layers split over that many devices */
        llmb_rank(b, c, s, tp, dp);
    }
}

int llm_build(const struct llm_config *c, const struct llm_step *s, struct trace *t,
              struct diag *d)
{
    memset(t, 0, sizeof *t);
    /* a vision encoder's sequence is its image's patches and class token;
     * a VLM's prompt holds its images' tokens before its own */
    struct llm_step vis;
    if (c->encoder || (s->images > 0 && c->image_tokens > 0 && s->phase == LLM_PREFILL)) {
        vis = *s;
        vis.prompt = c->encoder ? c->max_pos : s->prompt + (uint64_t)s->images * c->image_tokens;
        s = &vis;
    }
    if (llm_check_step(c, s, d) != 0)
        return -1;
    struct layout L;
    layout_of(s, &L);
    uint64_t cap64 = op_cap(c, s, &L);
    if (cap64 > 50000000)
        return diag_set(d, DIAG_E_RANGE, "", 0, "--tp", "the step would have %llu ops, more than "
                        "a trace may hold (50 million)", (unsigned long long)cap64);
    uint32_t cap = (uint32_t)cap64, cp = L.cp, ndev = L.ndev;
    t->ops = sim_xcalloc(cap, sizeof *t->ops);
    t->deps = sim_xcalloc((size_t)cap * (cp > 1 ? 3 : 2) + ndev, sizeof *t->deps);
    t->topo = sim_xcalloc(cap, sizeof *t->topo);
    t->devices = sim_xcalloc(ndev, sizeof *t->devices);
    t->ndevices = ndev;
    for (uint32_t r = 0; r < ndev; r++)
        snprintf(t->devices[r], sizeof t->devices[r], "gpu%u", r);
    struct llmb_groups g;
    llmb_par_groups(t, L.tp, L.dp, L.ep, cp, L.pp, L.dcn, &g);
    t->tokens = (double)(s->phase == LLM_DECODE ? s->batch : s->batch * s->prompt) * (double)L.seqs * L.dcn;
    snprintf(t->path, sizeof t->path, "%s", c->path);
    struct llmb b = {.t = t, .cap = cap, .prev = UINT32_MAX, .dcap = cap * (cp > 1 ? 3 : 2) + ndev,
                     .ep_group = g.ntpg + g.ndpg, .ep = L.ep, .edp_group = UINT32_MAX, .ep_tp = L.ep_tp,
                     .also = UINT32_MAX, .dcn_group = UINT32_MAX, .sp_ag = UINT32_MAX, .cp = cp,
                     .dp_sim = L.dp_sim, .cp_comm = s->cp_comm, .cp_g0 = g.ntpg + g.ndpg + g.nepg + g.nedpg};
    struct llmb_cp_ring ring = {0};
    if (cp > 1) {
        ring.layers = (uint32_t)c->layers;
        ring.mbs = L.schedule ? L.mb : 1;
        ring.cp = cp;
        ring.tp = L.tp;
        ring.dp = L.dp;
        ring.dp_sim = L.dp_sim;
        b.ring = &ring;
    }
    if (L.schedule)
        llmb_pp(&b, c, s, L.pp, L.mb, L.tp, L.dp);
    else
        build_ranks(&b, c, s, &L, &g);
    llmb_cp_link(t, &ring);
    trace_index_colls(t);
    return 0;
}
