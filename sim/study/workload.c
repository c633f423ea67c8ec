/* workload.c: see workload.h. */
#include "workload.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "check.h"
#include "coll.h"
#include "llm.h"
#include "numfmt.h"

/* "KIND k=v k=v" -> kind + pairs.  Returns pair count or -1. */
static int spec_pairs(const char *spec, char *kind, size_t kn, struct wl_spec_kv *kv, int max)
{
    const char *p = spec;
    while (*p == ' ')
        p++;
    size_t i = 0;
    while (*p && *p != ' ' && i + 1 < kn)
        kind[i++] = *p++;
    kind[i] = '\0';
    if (i == 0)
        return -1;
    int n = 0;
    while (*p) {
        while (*p == ' ')
            p++;
        if (!*p)
            break;
        if (n == max)
            return -1;
        const char *eq = strchr(p, '=');
        const char *end = strchr(p, ' ');
        if (end == NULL)
            end = p + strlen(p);
        if (eq == NULL || eq > end || eq == p || (size_t)(eq - p) >= sizeof kv[n].key ||
            (size_t)(end - eq - 1) >= sizeof kv[n].val)
            return -1;
        memcpy(kv[n].key, p, (size_t)(eq - p));
        kv[n].key[eq - p] = '\0';
        memcpy(kv[n].val, eq + 1, (size_t)(end - eq - 1));
        kv[n].val[end - eq - 1] = '\0';
        n++;
        p = end;
    }
    return n;
}

int wl_spec_parse(struct wl_spec *s, const char *spec, char *kind, size_t kn, const char *file, int line,
                  struct diag *d)
{
    memset(s, 0, sizeof *s);
    s->file = file;
    s->line = line;
    s->d = d;
    s->n = spec_pairs(spec, kind, kn, s->kv, WL_SPEC_MAX);
    if (s->n < 0)
        return diag_set(d, DIAG_E_PARSE, file, line, "spec", "expected 'KIND key=value ...', got '%s'", spec);
    return 0;
}

const char *wl_spec_get(struct wl_spec *s, const char *key)
{
    for (int i = 0; i < s->n; i++)
        if (strcmp(s->kv[i].key, key) == 0) {
            s->used[i] = 1;
            return s->kv[i].val;
        }
    return NULL;
}

int wl_spec_u64(struct wl_spec *s, const char *key, int required, uint64_t def, uint64_t min,
                    uint64_t *out)
{
    const char *v = wl_spec_get(s, key);
    if (v == NULL) {
        if (required)
            return diag_set(s->d, DIAG_E_MISSING, s->file, s->line, "spec",
                            "'%s=' is required", key);
        *out = def;
        return 0;
    }
    char *end;
    errno = 0;
    unsigned long long x = strtoull(v, &end, 10);
    if (*v == '\0' || *v == '-' || *end != '\0' || errno || x < min || x > (1ull << 50))
        return diag_set(s->d, DIAG_E_RANGE, s->file, s->line, "spec",
                        "%s: expected an integer >= %llu, got '%s'", key,
                        (unsigned long long)min, v);
    *out = x;
    return 0;
}

int wl_spec_num(struct wl_spec *s, const char *key, double def, double *out)
{
    const char *v = wl_spec_get(s, key);
    if (v == NULL) {
        *out = def;
        return 0;
    }
    double x;
    if (num_parse(v, &x) != 0 || x < 0)
        return diag_set(s->d, DIAG_E_RANGE, s->file, s->line, "spec",
                        "%s: expected a number >= 0, got '%s'", key, v);
    *out = x;
    return 0;
}

int wl_spec_dtype(struct wl_spec *s, enum dtype *out)
{
    const char *v = wl_spec_get(s, "dtype");
    if (v == NULL)
        return diag_set(s->d, DIAG_E_MISSING, s->file, s->line, "spec", "'dtype=' is required");
    if (dtype_from_name(v, out) != 0)
        return diag_set(s->d, DIAG_E_UNKNOWN_NAME, s->file, s->line, "spec",
                        "unknown dtype '%s'", v);
    return 0;
}

int wl_spec_done(struct wl_spec *s)
{
    for (int i = 0; i < s->n; i++)
        if (!s->used[i])
            return diag_set(s->d, DIAG_E_UNKNOWN_KEY, s->file, s->line, "spec",
                            "unknown key '%s'", s->kv[i].key);
    return 0;
}

/* A trace holding one op. */
static void trace_one(struct trace *t, const struct op *o, const char *name)
{
    memset(t, 0, sizeof *t);
    t->ops = sim_xcalloc(1, sizeof *t->ops);
    t->deps = sim_xcalloc(1, sizeof *t->deps);
    t->topo = sim_xcalloc(1, sizeof *t->topo);
    t->devices = sim_xcalloc(1, sizeof *t->devices);
    snprintf(t->devices[0], sizeof t->devices[0], "gpu0");
    t->ndevices = 1;
    t->nops = 1;
    t->ops[0] = *o;                 /* a spec's op: no strings of its own */
    t->ops[0].kernel_at = 0;
    trace_op_set_id(t, 0, name);
    trace_op_set_name(t, 0, name);
    t->ops[0].measured_s = -1;
    t->ops[0].fixed_s = -1;
    snprintf(t->path, sizeof t->path, "%s", name);
}

/* The parallel layout and training knobs of an llm row (tp, dp, zero,
 * recompute, replicas_simulated, dcn, page_size, pp, microbatches, vpp, ep,
 * sp, cp, expert_load, dropout, ubatch, images). */
static int wl_llm_layout(struct wl_spec *s, struct llm_step *st)
{
    uint64_t tp = 1, dp = 1;
    if (wl_spec_u64(s, "tp", 0, 1, 1, &tp) || wl_spec_u64(s, "dp", 0, 1, 1, &dp))
        return -1;
    if (tp > 65536 || dp > 65536)
        return diag_set(s->d, DIAG_E_RANGE, s->file, s->line, "spec", "tp, dp: at most 65536, got %llu, %llu",
                        (unsigned long long)tp, (unsigned long long)dp);
    st->tp = (uint32_t)tp;
    st->dp = (uint32_t)dp;
    uint64_t zero = 0, recompute = 0, replicas = 0, dcn = 1, page = 0;
    uint64_t pp = 1, mbs = 0, vpp = 1, ep = 1, sp = 0, cpn = 1, ub = 0, img = 0;
    if (wl_spec_u64(s, "zero", 0, 0, 0, &zero) || wl_spec_u64(s, "recompute", 0, 0, 0, &recompute) ||
        wl_spec_u64(s, "replicas_simulated", 0, 0, 0, &replicas) ||
        wl_spec_u64(s, "dcn", 0, 1, 1, &dcn) || wl_spec_u64(s, "page_size", 0, 0, 0, &page) ||
        wl_spec_u64(s, "pp", 0, 1, 1, &pp) || wl_spec_u64(s, "microbatches", 0, 0, 1, &mbs) ||
        wl_spec_u64(s, "vpp", 0, 1, 1, &vpp) || wl_spec_u64(s, "ep", 0, 1, 1, &ep) ||
        wl_spec_u64(s, "sp", 0, 0, 0, &sp) || wl_spec_u64(s, "cp", 0, 1, 1, &cpn) ||
        wl_spec_u64(s, "ubatch", 0, 0, 1, &ub) || wl_spec_u64(s, "images", 0, 0, 0, &img))
        return -1;
    if (img > 1024)
        return diag_set(s->d, DIAG_E_RANGE, s->file, s->line, "spec", "images: at most 1024 a sequence");
    st->images = (uint32_t)img;
    if (ub > (1u << 20) || (ub && st->phase != LLM_PREFILL))
        return diag_set(s->d, DIAG_E_RANGE, s->file, s->line, "spec",
                        "ubatch: tokens a prefill piece holds, 1 to 1048576, with phase=prefill");
    st->ubatch = (uint32_t)ub;
    if (dcn > 65536 || page > 65535 || pp > 65536 || mbs > 4096 || vpp > 64 || ep > 65536 || sp > 1 ||
        cpn > 4096)
        return diag_set(s->d, DIAG_E_RANGE, s->file, s->line, "spec",
                        "dcn, pp, ep: at most 65536; page_size at most 65535; microbatches at "
                        "most 4096; vpp at most 64; sp 0 or 1; cp at most 4096");
    st->cp = (uint32_t)cpn;
    st->dcn = (uint32_t)dcn;
    st->page_size = (uint32_t)page;
    st->pp = (uint32_t)pp;
    st->microbatches = (uint32_t)mbs;
    st->vpp = (uint32_t)vpp;
    st->ep = (uint32_t)ep;
    st->sp = (int)sp;
    if (wl_spec_num(s, "expert_load", 0.0, &st->expert_load) || wl_spec_num(s, "dropout", 0.0, &st->dropout))
        return -1;
    if (zero > 3 || recompute > 1 || replicas > dp)
        return diag_set(s->d, DIAG_E_RANGE, s->file, s->line, "spec",
                        "zero 0-3, recompute 0 or 1, replicas_simulated at most dp");
    st->zero = (uint32_t)zero;
    st->recompute = (int)recompute;
    st->dp_sim = (uint32_t)replicas;
    return 0;
}

/* llm model=M phase=P [batch= prompt= context= attn= weights= kv_dtype=
 * framework= cp_comm= and the layout's keys]: one step of an LLM. */
static int wl_llm(struct wl_spec *s, const char *root, struct wl_info *wi, struct trace *t)
{
    const char *model = wl_spec_get(s, "model"), *phase = wl_spec_get(s, "phase");
    const char *attn = wl_spec_get(s, "attn");
    struct llm_step st = {LLM_DECODE, 1, 1, 0, DT_BF16, ATTN_FLASH, DT_COUNT, WF_NONE, 0, LLM_FW_FUSED, 1, 1, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0};
    const char *weights = wl_spec_get(s, "weights"), *kvd = wl_spec_get(s, "kv_dtype");
    const char *fw = wl_spec_get(s, "framework"), *cpc = wl_spec_get(s, "cp_comm");
    if (fw != NULL && llm_framework_from_name(fw, &st.framework) != 0)
        return diag_set(s->d, DIAG_E_UNKNOWN_NAME, s->file, s->line, "spec", "unknown framework '%s'", fw);
    if (cpc != NULL && llm_cp_comm_from_name(cpc, &st.cp_comm) != 0)
        return diag_set(s->d, DIAG_E_UNKNOWN_NAME, s->file, s->line, "spec",
                        "cp_comm: p2p, a2a or allgather, got '%s'", cpc);
    if (model == NULL || phase == NULL)
        return diag_set(s->d, DIAG_E_MISSING, s->file, s->line, "spec", "llm needs model= and phase=");
    if (strcmp(phase, "prefill") == 0)
        st.phase = LLM_PREFILL;
    else if (strcmp(phase, "decode") == 0)
        st.phase = LLM_DECODE;
    else if (strcmp(phase, "train") == 0)
        st.phase = LLM_TRAIN;
    else
        return diag_set(s->d, DIAG_E_UNKNOWN_NAME, s->file, s->line, "spec",
                        "phase: expected prefill, decode or train, got '%s'", phase);
    /* the model lies under the data's tree: no absolute path, no ".." */
    if (model[0] == '/' || strcmp(model, "..") == 0 || strncmp(model, "../", 3) == 0 ||
        strstr(model, "/../") != NULL ||
        (strlen(model) >= 3 && strcmp(model + strlen(model) - 3, "/..") == 0))
        return diag_set(s->d, DIAG_E_RANGE, s->file, s->line, "spec",
                        "model: '%s' must be a relative path under '%s' without '..'", model, root);
    if (wl_llm_layout(s, &st) != 0)
        return -1;
    if (wl_spec_u64(s, "batch", 0, 1, 1, &st.batch) || wl_spec_u64(s, "prompt", 0, 1, 1, &st.prompt) ||
        wl_spec_u64(s, "context", 0, 0, 0, &st.context) || wl_spec_dtype(s, &st.dtype))
        return -1;
    if (attn != NULL) {
        int i = 0;
        while (i < ATTN_IMPL_COUNT && strcmp(attn, op_attn_impl_name((enum attn_impl)i)) != 0)
            i++;
        if (i == ATTN_IMPL_COUNT)
            return diag_set(s->d, DIAG_E_UNKNOWN_NAME, s->file, s->line, "spec", "unknown attn '%s'", attn);
        st.attn = (enum attn_impl)i;
    }
    if (weights != NULL && llm_weights_from_name(weights, &st) != 0)
        return diag_set(s->d, DIAG_E_UNKNOWN_NAME, s->file, s->line, "spec", "unknown weight format '%s'",
                        weights);
    if (kvd != NULL && dtype_from_name(kvd, &st.kv_dtype) != 0)
        return diag_set(s->d, DIAG_E_UNKNOWN_NAME, s->file, s->line, "spec", "unknown kv_dtype '%s'", kvd);
    if (st.kv_dtype == DT_COUNT)
        st.kv_dtype = st.dtype;
    if (wi->has_stack)
        stack_apply_llm(&wi->stack, &st, fw != NULL, attn != NULL);
    if (wl_spec_done(s))
        return -1;
    char path[1024];
    snprintf(path, sizeof path, "%s/%s", root, model);
    struct llm_config c;
    if (llm_config_load(path, &c, s->d) != 0 || llm_build(&c, &st, t, s->d) != 0)
        return -1;
    /* the sequences the trace's tokens are of (a vision encoder's images,
     * a VLM's prompts with their images' tokens) */
    double per = st.phase == LLM_DECODE ? 1.0
                 : c.encoder          ? (double)c.max_pos
                                      : (double)st.prompt + (double)st.images * (double)c.image_tokens;
    wi->samples = t->tokens / per;
    return 0;
}

/* collective op=all_reduce ranks=8 bytes=N [dtype=fp32] [algo=auto]
 * [gpus_per_thread=G]: one collective over the system's first `ranks`
 * devices, timed as nccl-tests -g G times it */
static int wl_collective(struct wl_spec *s, struct trace *t, struct wl_info *wi)
{
    const char *opn = wl_spec_get(s, "op"), *algo = wl_spec_get(s, "algo");
    uint64_t ranks, bytes;
    enum dtype dt = DT_FP32;
    if (wl_spec_get(s, "dtype") != NULL && wl_spec_dtype(s, &dt))
        return -1;
    if (wl_spec_u64(s, "ranks", 1, 0, 2, &ranks) || wl_spec_u64(s, "bytes", 1, 0, 1, &bytes) ||
        wl_spec_u64(s, "gpus_per_thread", 0, 1, 1, &wi->gpus_per_thread))
        return -1;
    int k = 0, a = 0;
    while (opn != NULL && k < COLL_KIND_COUNT && strcmp(opn, coll_kind_name((enum coll_kind)k)) != 0)
        k++;
    while (algo != NULL && a < COLL_ALGO_COUNT && strcmp(algo, coll_algo_name((enum coll_algo)a)) != 0)
        a++;
    if (opn == NULL || k == COLL_KIND_COUNT)
        return diag_set(s->d, DIAG_E_UNKNOWN_NAME, s->file, s->line, "spec",
                        "collective needs op= all_reduce, all_gather, reduce_scatter, "
                        "all_to_all or broadcast");
    if (a == COLL_ALGO_COUNT)
        return diag_set(s->d, DIAG_E_UNKNOWN_NAME, s->file, s->line, "spec",
                        "unknown algo '%s' (auto, ring, direct)", algo);
    if (ranks > 65536 || bytes > TRACE_SIZE_CAP || wi->gpus_per_thread > ranks ||
        (k != COLL_ALL_REDUCE && k != COLL_BROADCAST && k != COLL_SEND_RECV &&
         bytes % ranks != 0) || (k == COLL_SEND_RECV && ranks != 2))
        return diag_set(s->d, DIAG_E_RANGE, s->file, s->line, "spec",
                        "ranks must be 2..65536, gpus_per_thread at most ranks and bytes "
                        "1..2^50 (a multiple of ranks but for all_reduce and broadcast)");
    if (wl_spec_done(s))
        return -1;
    trace_one_collective(t, (enum coll_kind)k, (enum coll_algo)a, dt, (uint32_t)ranks, bytes);
    wi->coll_bytes = (double)bytes;
    wi->coll_busfactor = coll_busbw_factor((enum coll_kind)k, (uint32_t)ranks);
    return 0;
}

/* One op of kind (gemm, softmax, norm, reduction, elementwise, attention)
 * into *o; *elements what element_throughput divides by. */
static int wl_op(struct wl_spec *s, const char *kind, struct op *o, double *elements)
{
    if (strcmp(kind, "gemm") == 0) {
        o->kind = OP_GEMM;
        if (wl_spec_u64(s, "m", 1, 0, 1, &o->u.gemm.m) || wl_spec_u64(s, "n", 1, 0, 1, &o->u.gemm.n) ||
            wl_spec_u64(s, "k", 1, 0, 1, &o->u.gemm.k) || wl_spec_u64(s, "batch", 0, 1, 1, &o->u.gemm.batch))
            return -1;
    } else if (strcmp(kind, "softmax") == 0 || strcmp(kind, "norm") == 0 ||
               strcmp(kind, "reduction") == 0) {
        op_kind_from_name(kind, &o->kind);
        if (wl_spec_u64(s, "rows", 1, 0, 1, &o->u.rc.rows) || wl_spec_u64(s, "cols", 1, 0, 1, &o->u.rc.cols))
            return -1;
        *elements = (double)o->u.rc.rows * (double)o->u.rc.cols;
    } else if (strcmp(kind, "elementwise") == 0) {
        o->kind = OP_ELEMENTWISE;
        uint64_t in, out, vb;
        if (wl_spec_u64(s, "elements", 1, 0, 1, &o->u.ew.elements) ||
            wl_spec_u64(s, "vector_bytes", 0, 16, 1, &vb) ||
            wl_spec_u64(s, "inputs", 0, 1, 0, &in) || wl_spec_u64(s, "outputs", 0, 1, 0, &out) ||
            wl_spec_num(s, "flops", 1.0, &o->u.ew.flops_per_element))
            return -1;
        if (in + out == 0 || in > 64 || out > 64)
            return diag_set(s->d, DIAG_E_RANGE, s->file, s->line, "spec", "inputs+outputs must be 1..128");
        o->u.ew.inputs = (uint32_t)in;
        o->u.ew.vector_bytes = (uint32_t)(vb < 64 ? vb : 64);
        o->u.ew.outputs = (uint32_t)out;
        *elements = (double)o->u.ew.elements;
    } else if (strcmp(kind, "attention") == 0) {
        /* attention batch=B heads=H seqlen=N headdim=D [kv_heads=K] [causal=0|1]
         * [impl=fa2] [pass=fwd|bwd|fwd+bwd] [q_len=Q]: self-attention over N
         * tokens, or Q queries (the last Q, when causal) against N keys: a
         * decode step's is q_len=1 */
        o->kind = OP_ATTENTION;
        uint64_t n, causal;
        if (wl_spec_u64(s, "batch", 1, 0, 1, &o->u.attn.batch) ||
            wl_spec_u64(s, "heads", 1, 0, 1, &o->u.attn.heads) ||
            wl_spec_u64(s, "seqlen", 1, 0, 1, &n) ||
            wl_spec_u64(s, "headdim", 1, 0, 1, &o->u.attn.head_dim) ||
            wl_spec_u64(s, "kv_heads", 0, o->u.attn.heads, 1, &o->u.attn.kv_heads) ||
            wl_spec_u64(s, "causal", 0, 0, 0, &causal) ||
            wl_spec_u64(s, "q_len", 0, n, 1, &o->u.attn.q_len))
            return -1;
        if (o->u.attn.kv_heads == 0 || o->u.attn.heads % o->u.attn.kv_heads != 0)
            return diag_set(s->d, DIAG_E_RANGE, s->file, s->line, "spec", "kv_heads must divide heads");
        if (o->u.attn.q_len > n)
            return diag_set(s->d, DIAG_E_RANGE, s->file, s->line, "spec",
                            "q_len %llu is more than seqlen %llu (the keys it attends to)",
                            (unsigned long long)o->u.attn.q_len, (unsigned long long)n);
        o->u.attn.kv_len = n;
        o->u.attn.causal = causal != 0;
        o->u.attn.kv_dtype = o->dtype;
        const char *impl = wl_spec_get(s, "impl");
        o->u.attn.impl = ATTN_FLASH;
        int found = impl == NULL;
        for (int i = 0; impl != NULL && i < ATTN_IMPL_COUNT; i++)
            if (strcmp(impl, op_attn_impl_name((enum attn_impl)i)) == 0) {
                o->u.attn.impl = (enum attn_impl)i;
                found = 1;
            }
        if (!found)
            return diag_set(s->d, DIAG_E_UNKNOWN_NAME, s->file, s->line, "spec", "unknown impl '%s'", impl);
    } else {
        return diag_set(s->d, DIAG_E_UNKNOWN_NAME, s->file, s->line, "spec",
                        "unknown workload kind '%s' (llm, gemm, softmax, norm, reduction, "
                        "elementwise, attention, collective)", kind);
    }
    return 0;
}

/* [pass=fwd|bwd|fwd+bwd]: an op's backward as the libraries run it (GEMM
 * dgrad and wgrad, softmax/norm/elementwise backward, attention's) */
static int wl_pass(struct wl_spec *s, struct op *o)
{
    const char *pass = wl_spec_get(s, "pass");
    o->pass = PASS_FWD;
    if (pass != NULL) {
        if (strcmp(pass, "fwd") == 0)
            o->pass = PASS_FWD;
        else if (strcmp(pass, "bwd") == 0)
            o->pass = PASS_BWD;
        else if (strcmp(pass, "fwd+bwd") == 0)
            o->pass = PASS_FWDBWD;
        else
            return diag_set(s->d, DIAG_E_UNKNOWN_NAME, s->file, s->line, "spec",
                            "unknown pass '%s' (fwd, bwd, fwd+bwd)", pass);
        if (o->pass != PASS_FWD && o->kind == OP_REDUCTION)
            return diag_set(s->d, DIAG_E_RANGE, s->file, s->line, "spec", "a reduction has no backward pass here");
    }
    return 0;
}

int wl_build(const char *spec, const char *root, const char *file, int line, struct trace *t,
             struct wl_info *wi, struct diag *d)
{
    struct wl_spec s;
    char kind[32];
    if (wl_spec_parse(&s, spec, kind, sizeof kind, file, line, d) != 0)
        return -1;
    struct op o;
    memset(&o, 0, sizeof o);
    wi->elements = 0;
    wi->samples = 0;
    uint64_t sus = 0;
    if (wl_spec_u64(&s, "sustained", 0, 0, 0, &sus))
        return -1;
    if (sus > 1)
        return diag_set(d, DIAG_E_RANGE, file, line, "spec", "sustained: 0 or 1, got %llu",
                        (unsigned long long)sus);
    wi->sustained = (int)sus;
    if (wl_spec_num(&s, "clock_mhz", 0.0, &wi->clock_mhz))
        return -1;
    if (wi->sustained && wi->clock_mhz > 0)
        return diag_set(d, DIAG_E_RANGE, file, line, "spec",
                        "clock_mhz and sustained=1 both set the clock: give one");
    const char *stk = wl_spec_get(&s, "stack");
    if (stk != NULL && wi->stack_override != NULL)
        stk = wi->stack_override;
    wi->has_stack = 0;
    if (stk != NULL) {
        char dir[1024];
        snprintf(dir, sizeof dir, "%s/configs/stacks", root);
        if (stack_find(wi->stacks_dir != NULL ? wi->stacks_dir : dir, stk, &wi->stack, d) != 0) {
            if (d->line == 0) {     /* the name itself: point at the row */
                char msg[sizeof d->msg];
                snprintf(msg, sizeof msg, "%s", d->msg);
                return diag_set(d, d->code, file, line, "spec", "stack: %s", msg);
            }
            return -1;
        }
        wi->has_stack = 1;
    }
    if (strcmp(kind, "llm") == 0)
        return wl_llm(&s, root, wi, t);
    if (strcmp(kind, "collective") == 0)
        return wl_collective(&s, t, wi);
    if (wl_spec_dtype(&s, &o.dtype) || wl_op(&s, kind, &o, &wi->elements) || wl_pass(&s, &o))
        return -1;
    if (wl_spec_done(&s))
        return -1;
    const char *field;
    char msg[160];
    if (trace_op_sizes_ok(&o, &field, msg, sizeof msg) != 0)
        return diag_set(d, DIAG_E_RANGE, file, line, "spec", "%s: %s", field, msg);
    trace_one(t, &o, kind);
    return 0;
}
