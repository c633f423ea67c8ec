/* validate.c: `strata validate`: predictions against public measurements.
 *
 * Reads a measurements CSV with the columns of
 * ../shared/data/measurements-calibration.csv plus three of our own:
 *   config            config file stem under --configs (e.g. nvidia-a100-sxm-80gb)
 *   spec              the workload, machine-readable: "KIND key=value ..." (docs/validation.md)
 *   host_overhead_us  per-call host time the measuring harness includes
 *                     (Python dispatch + synchronize); 0 for device-timed rows
 * Each row's workload is built as a trace, run on its config, converted to
 * the row's metric and compared.  Rows without config/spec are counted as
 * skipped.  Prints per row and, per group (id prefix before '-'), the
 * median and worst absolute error.  GSL does the statistics.
 */
#include "validate.h"

#include <cjson/cJSON.h>
#include <errno.h>
#include <gsl/gsl_sort.h>
#include <gsl/gsl_statistics_double.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "afile.h"
#include "check.h"
#include "jsonout.h"
#include "llm.h"
#include "numfmt.h"
#include "textline.h"
#include "coll.h"
#include "run.h"
#include "system.h"
#include "trace.h"
#include "version.h"

#define VAL_MAX_COLS 32
#define VAL_MAX_LINE 8192
#define VAL_MAX_CONFIGS 128  /* configs one CSV may name */

/* Split one CSV line (RFC 4180 quotes) in place.  Returns field count or -1. */
static int csv_split(char *line, char **cols, int max)
{
    int n = 0;
    char *p = line, *w;
    for (;;) {
        if (n == max)
            return -1;
        if (*p == '"') {
            p++;
            cols[n++] = w = p;
            for (;;) {
                if (*p == '\0')
                    return -1;          /* unterminated quote */
                if (*p == '"') {
                    if (p[1] == '"') {
                        *w++ = '"';
                        p += 2;
                        continue;
                    }
                    p++;
                    break;
                }
                *w++ = *p++;
            }
            *w = '\0';
            if (*p == ',') {
                p++;
                continue;
            }
            if (*p == '\0' || *p == '\r' || *p == '\n')
                return n;
            return -1;
        }
        cols[n++] = p;
        while (*p && *p != ',' && *p != '\r' && *p != '\n')
            p++;
        if (*p == ',') {
            *p++ = '\0';
            continue;
        }
        *p = '\0';
        return n;
    }
}

struct spec_kv {
    char key[32];
    char val[256];
};

/* "KIND k=v k=v" -> kind + pairs.  Returns pair count or -1. */
static int spec_parse(const char *spec, char *kind, size_t kn, struct spec_kv *kv, int max)
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

struct spec_ctx {
    const char *file;
    int line;
    struct spec_kv kv[16];
    int n;
    int used[16];
    struct diag *d;
};

static const char *spec_get(struct spec_ctx *s, const char *key)
{
    for (int i = 0; i < s->n; i++)
        if (strcmp(s->kv[i].key, key) == 0) {
            s->used[i] = 1;
            return s->kv[i].val;
        }
    return NULL;
}

static int spec_u64(struct spec_ctx *s, const char *key, int required, uint64_t def, uint64_t min,
                    uint64_t *out)
{
    const char *v = spec_get(s, key);
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

static int spec_num(struct spec_ctx *s, const char *key, double def, double *out)
{
    const char *v = spec_get(s, key);
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

static int spec_dtype(struct spec_ctx *s, enum dtype *out)
{
    const char *v = spec_get(s, "dtype");
    if (v == NULL)
        return diag_set(s->d, DIAG_E_MISSING, s->file, s->line, "spec", "'dtype=' is required");
    if (dtype_from_name(v, out) != 0)
        return diag_set(s->d, DIAG_E_UNKNOWN_NAME, s->file, s->line, "spec",
                        "unknown dtype '%s'", v);
    return 0;
}

static int spec_done(struct spec_ctx *s)
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
    t->ops[0] = *o;
    snprintf(t->ops[0].id, sizeof t->ops[0].id, "%s", name);
    snprintf(t->ops[0].name, sizeof t->ops[0].name, "%s", name);
    t->ops[0].measured_s = -1;
    t->ops[0].fixed_s = -1;
    snprintf(t->path, sizeof t->path, "%s", name);
}

/* What a metric divides by: elements (element_throughput), or a
 * collective's size and bus factor (busbw). */
struct wl_info {
    double elements;
    double coll_bytes, coll_busfactor;
    uint64_t gpus_per_thread;   /* a collective timed as nccl-tests -g G times it (collbench.h) */
    double model_flops_per_chip;    /* training: the step's FLOPs less the recomputed forward,
                                     * per simulated device (as MaxText and Megatron count MFU) */
    int sustained;                  /* sustained=1: run at the clock the power limit holds
                                     * (run_opts.sustained; any kind of row) */
};

/* Build the workload of a row. */
static int build_workload(const char *spec, const char *root, const char *file, int line,
                          struct trace *t, struct wl_info *wi, struct diag *d)
{
    double *elements = &wi->elements;
    struct spec_ctx s;
    memset(&s, 0, sizeof s);
    s.file = file;
    s.line = line;
    s.d = d;
    char kind[32];
    s.n = spec_parse(spec, kind, sizeof kind, s.kv, 16);
    if (s.n < 0)
        return diag_set(d, DIAG_E_PARSE, file, line, "spec",
                        "expected 'KIND key=value ...', got '%s'", spec);
    struct op o;
    memset(&o, 0, sizeof o);
    *elements = 0;
    uint64_t sus = 0;
    if (spec_u64(&s, "sustained", 0, 0, 0, &sus))
        return -1;
    if (sus > 1)
        return diag_set(d, DIAG_E_RANGE, file, line, "spec", "sustained: 0 or 1, got %llu",
                        (unsigned long long)sus);
    wi->sustained = (int)sus;
    if (strcmp(kind, "llm") == 0) {
        const char *model = spec_get(&s, "model"), *phase = spec_get(&s, "phase");
        const char *attn = spec_get(&s, "attn");
        struct llm_step st = {LLM_DECODE, 1, 1, 0, DT_BF16, ATTN_FLASH, DT_COUNT, WF_NONE, 0, LLM_FW_FUSED, 1, 1, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0};
        const char *weights = spec_get(&s, "weights"), *kvd = spec_get(&s, "kv_dtype");
        const char *fw = spec_get(&s, "framework"), *cpc = spec_get(&s, "cp_comm");
        if (fw != NULL && llm_framework_from_name(fw, &st.framework) != 0)
            return diag_set(d, DIAG_E_UNKNOWN_NAME, file, line, "spec", "unknown framework '%s'", fw);
        if (cpc != NULL && llm_cp_comm_from_name(cpc, &st.cp_comm) != 0)
            return diag_set(d, DIAG_E_UNKNOWN_NAME, file, line, "spec",
                            "cp_comm: p2p, a2a or allgather, got '%s'", cpc);
        if (model == NULL || phase == NULL)
            return diag_set(d, DIAG_E_MISSING, file, line, "spec", "llm needs model= and phase=");
        if (strcmp(phase, "prefill") == 0)
            st.phase = LLM_PREFILL;
        else if (strcmp(phase, "decode") == 0)
            st.phase = LLM_DECODE;
        else if (strcmp(phase, "train") == 0)
            st.phase = LLM_TRAIN;
        else
            return diag_set(d, DIAG_E_UNKNOWN_NAME, file, line, "spec",
                            "phase: expected prefill, decode or train, got '%s'", phase);
        /* the model lies under the data's tree: no absolute path, no ".." */
        if (model[0] == '/' || strcmp(model, "..") == 0 || strncmp(model, "../", 3) == 0 ||
            strstr(model, "/../") != NULL ||
            (strlen(model) >= 3 && strcmp(model + strlen(model) - 3, "/..") == 0))
            return diag_set(d, DIAG_E_RANGE, file, line, "spec",
                            "model: '%s' must be a relative path under '%s' without '..'", model, root);
        uint64_t tp = 1, dp = 1;
        if (spec_u64(&s, "tp", 0, 1, 1, &tp) || spec_u64(&s, "dp", 0, 1, 1, &dp))
            return -1;
        if (tp > 65536 || dp > 65536)
            return diag_set(d, DIAG_E_RANGE, file, line, "spec", "tp, dp: at most 65536, got %llu, %llu",
                            (unsigned long long)tp, (unsigned long long)dp);
        st.tp = (uint32_t)tp;
        st.dp = (uint32_t)dp;
        uint64_t zero = 0, recompute = 0, replicas = 0, dcn = 1, page = 0;
        uint64_t pp = 1, mbs = 0, vpp = 1, ep = 1, sp = 0, cpn = 1;
        if (spec_u64(&s, "zero", 0, 0, 0, &zero) || spec_u64(&s, "recompute", 0, 0, 0, &recompute) ||
            spec_u64(&s, "replicas_simulated", 0, 0, 0, &replicas) ||
            spec_u64(&s, "dcn", 0, 1, 1, &dcn) || spec_u64(&s, "page_size", 0, 0, 0, &page) ||
            spec_u64(&s, "pp", 0, 1, 1, &pp) || spec_u64(&s, "microbatches", 0, 0, 1, &mbs) ||
            spec_u64(&s, "vpp", 0, 1, 1, &vpp) || spec_u64(&s, "ep", 0, 1, 1, &ep) ||
            spec_u64(&s, "sp", 0, 0, 0, &sp) || spec_u64(&s, "cp", 0, 1, 1, &cpn))
            return -1;
        if (dcn > 65536 || page > 65535 || pp > 65536 || mbs > 4096 || vpp > 64 || ep > 65536 || sp > 1 ||
            cpn > 4096)
            return diag_set(d, DIAG_E_RANGE, file, line, "spec",
                            "dcn, pp, ep: at most 65536; page_size at most 65535; microbatches at "
                            "most 4096; vpp at most 64; sp 0 or 1; cp at most 4096");
        st.cp = (uint32_t)cpn;
        st.dcn = (uint32_t)dcn;
        st.page_size = (uint32_t)page;
        st.pp = (uint32_t)pp;
        st.microbatches = (uint32_t)mbs;
        st.vpp = (uint32_t)vpp;
        st.ep = (uint32_t)ep;
        st.sp = (int)sp;
        if (spec_num(&s, "expert_load", 0.0, &st.expert_load) || spec_num(&s, "dropout", 0.0, &st.dropout))
            return -1;
        if (zero > 3 || recompute > 1 || replicas > dp)
            return diag_set(d, DIAG_E_RANGE, file, line, "spec",
                            "zero 0-3, recompute 0 or 1, replicas_simulated at most dp");
        st.zero = (uint32_t)zero;
        st.recompute = (int)recompute;
        st.dp_sim = (uint32_t)replicas;
        if (spec_u64(&s, "batch", 0, 1, 1, &st.batch) || spec_u64(&s, "prompt", 0, 1, 1, &st.prompt) ||
            spec_u64(&s, "context", 0, 0, 0, &st.context) || spec_dtype(&s, &st.dtype))
            return -1;
        if (attn != NULL) {
            int i = 0;
            while (i < ATTN_IMPL_COUNT && strcmp(attn, op_attn_impl_name((enum attn_impl)i)) != 0)
                i++;
            if (i == ATTN_IMPL_COUNT)
                return diag_set(d, DIAG_E_UNKNOWN_NAME, file, line, "spec", "unknown attn '%s'", attn);
            st.attn = (enum attn_impl)i;
        }
        if (weights != NULL && llm_weights_from_name(weights, &st) != 0)
            return diag_set(d, DIAG_E_UNKNOWN_NAME, file, line, "spec", "unknown weight format '%s'",
                            weights);
        if (kvd != NULL && dtype_from_name(kvd, &st.kv_dtype) != 0)
            return diag_set(d, DIAG_E_UNKNOWN_NAME, file, line, "spec", "unknown kv_dtype '%s'", kvd);
        if (st.kv_dtype == DT_COUNT)
            st.kv_dtype = st.dtype;
        if (spec_done(&s))
            return -1;
        char path[1024];
        snprintf(path, sizeof path, "%s/%s", root, model);
        struct llm_config c;
        if (llm_config_load(path, &c, d) != 0 || llm_build(&c, &st, t, d) != 0)
            return -1;
        return 0;
    }
    if (strcmp(kind, "collective") == 0) {
        /* collective op=all_reduce ranks=8 bytes=N [dtype=fp32] [algo=auto]
         * [gpus_per_thread=G]: one collective over the system's first
         * `ranks` devices, timed as nccl-tests -g G times it */
        const char *opn = spec_get(&s, "op"), *algo = spec_get(&s, "algo");
        uint64_t ranks, bytes;
        enum dtype dt = DT_FP32;
        if (spec_get(&s, "dtype") != NULL && spec_dtype(&s, &dt))
            return -1;
        if (spec_u64(&s, "ranks", 1, 0, 2, &ranks) || spec_u64(&s, "bytes", 1, 0, 1, &bytes) ||
            spec_u64(&s, "gpus_per_thread", 0, 1, 1, &wi->gpus_per_thread))
            return -1;
        int k = 0, a = 0;
        while (opn != NULL && k < COLL_KIND_COUNT && strcmp(opn, coll_kind_name((enum coll_kind)k)) != 0)
            k++;
        while (algo != NULL && a < COLL_ALGO_COUNT && strcmp(algo, coll_algo_name((enum coll_algo)a)) != 0)
            a++;
        if (opn == NULL || k == COLL_KIND_COUNT)
            return diag_set(d, DIAG_E_UNKNOWN_NAME, file, line, "spec",
                            "collective needs op= all_reduce, all_gather, reduce_scatter, "
                            "all_to_all or broadcast");
        if (a == COLL_ALGO_COUNT)
            return diag_set(d, DIAG_E_UNKNOWN_NAME, file, line, "spec",
                            "unknown algo '%s' (auto, ring, direct)", algo);
        if (ranks > 65536 || bytes > TRACE_SIZE_CAP || wi->gpus_per_thread > ranks ||
            (k != COLL_ALL_REDUCE && k != COLL_BROADCAST && k != COLL_SEND_RECV &&
             bytes % ranks != 0) || (k == COLL_SEND_RECV && ranks != 2))
            return diag_set(d, DIAG_E_RANGE, file, line, "spec",
                            "ranks must be 2..65536, gpus_per_thread at most ranks and bytes "
                            "1..2^50 (a multiple of ranks but for all_reduce and broadcast)");
        if (spec_done(&s))
            return -1;
        trace_one_collective(t, (enum coll_kind)k, (enum coll_algo)a, dt, (uint32_t)ranks, bytes);
        wi->coll_bytes = (double)bytes;
        wi->coll_busfactor = coll_busbw_factor((enum coll_kind)k, (uint32_t)ranks);
        return 0;
    }
    if (spec_dtype(&s, &o.dtype))
        return -1;
    if (strcmp(kind, "gemm") == 0) {
        o.kind = OP_GEMM;
        if (spec_u64(&s, "m", 1, 0, 1, &o.u.gemm.m) || spec_u64(&s, "n", 1, 0, 1, &o.u.gemm.n) ||
            spec_u64(&s, "k", 1, 0, 1, &o.u.gemm.k) || spec_u64(&s, "batch", 0, 1, 1, &o.u.gemm.batch))
            return -1;
    } else if (strcmp(kind, "softmax") == 0 || strcmp(kind, "norm") == 0 ||
               strcmp(kind, "reduction") == 0) {
        op_kind_from_name(kind, &o.kind);
        if (spec_u64(&s, "rows", 1, 0, 1, &o.u.rc.rows) || spec_u64(&s, "cols", 1, 0, 1, &o.u.rc.cols))
            return -1;
        *elements = (double)o.u.rc.rows * (double)o.u.rc.cols;
    } else if (strcmp(kind, "elementwise") == 0) {
        o.kind = OP_ELEMENTWISE;
        uint64_t in, out, vb;
        if (spec_u64(&s, "elements", 1, 0, 1, &o.u.ew.elements) ||
            spec_u64(&s, "vector_bytes", 0, 16, 1, &vb) ||
            spec_u64(&s, "inputs", 0, 1, 0, &in) || spec_u64(&s, "outputs", 0, 1, 0, &out) ||
            spec_num(&s, "flops", 1.0, &o.u.ew.flops_per_element))
            return -1;
        if (in + out == 0 || in > 64 || out > 64)
            return diag_set(d, DIAG_E_RANGE, file, line, "spec", "inputs+outputs must be 1..128");
        o.u.ew.inputs = (uint32_t)in;
        o.u.ew.vector_bytes = (uint32_t)(vb < 64 ? vb : 64);
        o.u.ew.outputs = (uint32_t)out;
        *elements = (double)o.u.ew.elements;
    } else if (strcmp(kind, "attention") == 0) {
        /* attention batch=B heads=H seqlen=N headdim=D [kv_heads=K] [causal=0|1]
         * [impl=fa2] [pass=fwd|bwd|fwd+bwd]: self-attention over N tokens */
        o.kind = OP_ATTENTION;
        uint64_t n, causal;
        if (spec_u64(&s, "batch", 1, 0, 1, &o.u.attn.batch) ||
            spec_u64(&s, "heads", 1, 0, 1, &o.u.attn.heads) ||
            spec_u64(&s, "seqlen", 1, 0, 1, &n) ||
            spec_u64(&s, "headdim", 1, 0, 1, &o.u.attn.head_dim) ||
            spec_u64(&s, "kv_heads", 0, o.u.attn.heads, 1, &o.u.attn.kv_heads) ||
            spec_u64(&s, "causal", 0, 0, 0, &causal))
            return -1;
        if (o.u.attn.kv_heads == 0 || o.u.attn.heads % o.u.attn.kv_heads != 0)
            return diag_set(d, DIAG_E_RANGE, file, line, "spec", "kv_heads must divide heads");
        o.u.attn.q_len = o.u.attn.kv_len = n;
        o.u.attn.causal = causal != 0;
        o.u.attn.kv_dtype = o.dtype;
        const char *impl = spec_get(&s, "impl");
        o.u.attn.impl = ATTN_FLASH;
        int found = impl == NULL;
        for (int i = 0; impl != NULL && i < ATTN_IMPL_COUNT; i++)
            if (strcmp(impl, op_attn_impl_name((enum attn_impl)i)) == 0) {
                o.u.attn.impl = (enum attn_impl)i;
                found = 1;
            }
        if (!found)
            return diag_set(d, DIAG_E_UNKNOWN_NAME, file, line, "spec", "unknown impl '%s'", impl);
    } else {
        return diag_set(d, DIAG_E_UNKNOWN_NAME, file, line, "spec",
                        "unknown workload kind '%s' (llm, gemm, softmax, norm, reduction, "
                        "elementwise, attention, collective)", kind);
    }
    /* [pass=fwd|bwd|fwd+bwd]: an op's backward as the libraries run it
     * (GEMM dgrad and wgrad, softmax/norm/elementwise backward, attention's) */
    const char *pass = spec_get(&s, "pass");
    o.pass = PASS_FWD;
    if (pass != NULL) {
        if (strcmp(pass, "fwd") == 0)
            o.pass = PASS_FWD;
        else if (strcmp(pass, "bwd") == 0)
            o.pass = PASS_BWD;
        else if (strcmp(pass, "fwd+bwd") == 0)
            o.pass = PASS_FWDBWD;
        else
            return diag_set(d, DIAG_E_UNKNOWN_NAME, file, line, "spec",
                            "unknown pass '%s' (fwd, bwd, fwd+bwd)", pass);
        if (o.pass != PASS_FWD && o.kind == OP_REDUCTION)
            return diag_set(d, DIAG_E_RANGE, file, line, "spec", "a reduction has no backward pass here");
    }
    if (spec_done(&s))
        return -1;
    const char *field;
    char msg[160];
    if (trace_op_sizes_ok(&o, &field, msg, sizeof msg) != 0)
        return diag_set(d, DIAG_E_RANGE, file, line, "spec", "%s: %s", field, msg);
    trace_one(t, &o, kind);
    return 0;
}


static int convert(const char *metric, const char *unit, const struct hw_config *c,
                   const struct run_result *r, double time_s, const struct wl_info *wi,
                   double tokens, double *out)
{
    double elements = wi->elements;
    if (wi->coll_busfactor > 0 && strcmp(unit, "GB/s") == 0 &&
        (strcmp(metric, "allreduce_busbw") == 0 || strcmp(metric, "busbw") == 0)) {
        *out = wi->coll_bytes / time_s * wi->coll_busfactor / 1e9;
        return 0;
    }
    if (wi->coll_busfactor > 0 && strcmp(unit, "GB/s") == 0 && strcmp(metric, "algbw") == 0) {
        *out = wi->coll_bytes / time_s / 1e9;
        return 0;
    }
    if (strcmp(metric, "latency") == 0) {
        if (strcmp(unit, "ms") == 0)
            *out = time_s * 1e3;
        else if (strcmp(unit, "us") == 0)
            *out = time_s * 1e6;
        else if (strcmp(unit, "s") == 0)
            *out = time_s;
        else
            return -1;
        return 0;
    }
    if ((strcmp(metric, "achieved_TFLOPs") == 0 || strcmp(metric, "fwd+bwd_TFLOPs") == 0 ||
         strcmp(metric, "fwd_TFLOPs") == 0 || strcmp(metric, "bwd_TFLOPs") == 0) &&
        strcmp(unit, "TFLOP/s") == 0) {
        *out = r->flops / time_s / 1e12;
        return 0;
    }
    if (strcmp(metric, "achieved_TFLOPs_per_chip") == 0 && strcmp(unit, "TFLOP/s/chip") == 0 &&
        wi->model_flops_per_chip > 0) {
        *out = wi->model_flops_per_chip / time_s / 1e12;
        return 0;
    }
    if (strcmp(metric, "element_throughput") == 0 && strcmp(unit, "Gelem/s") == 0 && elements > 0) {
        *out = elements / time_s / 1e9;
        return 0;
    }
    if ((strcmp(metric, "decode_throughput") == 0 || strcmp(metric, "prefill_throughput") == 0) &&
        strcmp(unit, "tokens/s") == 0 && tokens > 0) {
        *out = tokens / time_s;
        return 0;
    }
    if (strcmp(metric, "achieved_dram_bandwidth") == 0 && strcmp(unit, "GB/s") == 0) {
        *out = r->bytes[c->lv_dram] / time_s / 1e9;
        return 0;
    }
    return -1;
}

/* Does id match the list ("UBENCH-001,UBENCH-00*"; NULL or "" matches all)? */
static int validate_id_match(const char *list, const char *id)
{
    if (list == NULL || list[0] == '\0')
        return 1;
    for (const char *p = list; *p != '\0';) {
        size_t n = strcspn(p, ",");
        if (n > 0 && p[n - 1] == '*' ? strncmp(id, p, n - 1) == 0
                                    : (strlen(id) == n && strncmp(id, p, n) == 0))
            return 1;
        p += n;
        if (*p == ',')
            p++;
    }
    return 0;
}

static int col_index(char **hdr, int n, const char *name)
{
    for (int i = 0; i < n; i++)
        if (strcmp(hdr[i], name) == 0)
            return i;
    return -1;
}

int validate_run(const struct validate_opts *vo, struct validate_result *res, struct diag *d)
{
    memset(res, 0, sizeof *res);
    FILE *f = fopen(vo->data, "r");
    afile_note_input(f);
    if (f == NULL)
        return diag_set(d, DIAG_E_IO, vo->data, 0, "", "cannot read: %s", strerror(errno));
    char *line = sim_xcalloc(VAL_MAX_LINE, 1);
    char *hline = sim_xcalloc(VAL_MAX_LINE, 1);
    char *hdr[VAL_MAX_COLS], *col[VAL_MAX_COLS];
    int rc = 0, lineno = 1;
    /* a config column names a chip config, or a system file as systems/NAME */
    struct { char name[64]; struct hw_system sys; int chip; } *cfgs =
        sim_xcalloc(VAL_MAX_CONFIGS, sizeof *cfgs);
    int ncfg = 0;
    size_t len;
    enum textline tl = textline_read(f, hline, VAL_MAX_LINE, &len);
    if (tl != TEXTLINE_OK) {
        rc = tl == TEXTLINE_EOF ? diag_set(d, DIAG_E_PARSE, vo->data, 1, "", "empty file")
           : tl == TEXTLINE_LONG ? diag_set(d, DIAG_E_RANGE, vo->data, 1, "", "line longer than %d bytes",
                                            VAL_MAX_LINE - 2)
                                 : diag_set(d, DIAG_E_PARSE, vo->data, 1, "", "%s", textline_what(tl));
        goto out;
    }
    int nh = csv_split(hline, hdr, VAL_MAX_COLS);
    int c_id = col_index(hdr, nh, "id"), c_metric = col_index(hdr, nh, "metric");
    int c_value = col_index(hdr, nh, "value"), c_unit = col_index(hdr, nh, "unit");
    int c_cfg = col_index(hdr, nh, "config"), c_spec = col_index(hdr, nh, "spec");
    int c_host = col_index(hdr, nh, "host_overhead_us");
    /* two columns of one name: which one a reader takes differs (pandas
     * renames the second "value.1", csv.DictReader keeps the last) */
    for (int i = 0; i < nh && rc == 0; i++)
        for (int j = i + 1; j < nh; j++)
            if (hdr[i][0] != '\0' && strcmp(hdr[i], hdr[j]) == 0) {
                rc = diag_set(d, DIAG_E_PARSE, vo->data, 1, hdr[i],
                              "column named twice (columns %d and %d)", i + 1, j + 1);
                break;
            }
    if (rc != 0)
        goto out;
    if (nh < 0 || c_id < 0 || c_metric < 0 || c_value < 0 || c_unit < 0) {
        rc = diag_set(d, DIAG_E_MISSING, vo->data, 1, "header",
                      "needs the columns id, metric, value, unit (and config, spec to be run)");
        goto out;
    }
    size_t cap = 64;
    res->rows = sim_xcalloc(cap, sizeof *res->rows);
    while ((tl = textline_read(f, line, VAL_MAX_LINE, &len)) != TEXTLINE_EOF) {
        lineno++;
        if (tl == TEXTLINE_LONG) {
            rc = diag_set(d, DIAG_E_RANGE, vo->data, lineno, "", "line longer than %d bytes",
                          VAL_MAX_LINE - 2);
            goto out;
        }
        if (tl != TEXTLINE_OK) {
            rc = diag_set(d, DIAG_E_PARSE, vo->data, lineno, "", "%s", textline_what(tl));
            goto out;
        }
        if (strspn(line, " \t\r\n") == len)
            continue;
        int n = csv_split(line, col, VAL_MAX_COLS);
        if (n < 0) {
            rc = diag_set(d, DIAG_E_PARSE, vo->data, lineno, "", "malformed CSV (quotes or too many columns)");
            goto out;
        }
        if (n != nh) {
            rc = diag_set(d, DIAG_E_PARSE, vo->data, lineno, "",
                          "%d columns, the header has %d", n, nh);
            goto out;
        }
        if (c_cfg < 0 || c_spec < 0 || col[c_cfg][0] == '\0' || col[c_spec][0] == '\0') {
            res->skipped++;
            continue;
        }
        if ((vo->only_config != NULL && strcmp(col[c_cfg], vo->only_config) != 0) ||
            (vo->skip_config != NULL && strcmp(col[c_cfg], vo->skip_config) == 0) ||
            !validate_id_match(vo->ids, col[c_id]))
            continue;
        struct val_row row;
        memset(&row, 0, sizeof row);
        snprintf(row.id, sizeof row.id, "%s", col[c_id]);
        /* group: id prefix and workload kind, e.g. "LLMC/gemm"; LLM rows by
         * phase ("GPTFAST/decode") */
        const char *ph = strstr(col[c_spec], "phase=");
        const char *im = strstr(col[c_spec], "impl=");
        if (strncmp(col[c_spec], "attention ", 10) == 0 && im != NULL)   /* per implementation */
            snprintf(row.group, sizeof row.group, "%.*s/attention-%.*s", (int)strcspn(col[c_id], "-"),
                     col[c_id], (int)strcspn(im + 5, " "), im + 5);
        else if (strncmp(col[c_spec], "llm ", 4) == 0 && ph != NULL) {  /* tensor-parallel apart */
            const char *tpk = strstr(col[c_spec], " tp=");
            snprintf(row.group, sizeof row.group, "%.*s/%.*s%s", (int)strcspn(col[c_id], "-"), col[c_id],
                     (int)strcspn(ph + 6, " "), ph + 6,
                     tpk != NULL && strtoull(tpk + 4, NULL, 10) > 1 ? "-tp" : "");
        } else {
            snprintf(row.group, sizeof row.group, "%.*s/%.*s", (int)strcspn(col[c_id], "-"),
                     col[c_id], (int)strcspn(col[c_spec], " "), col[c_spec]);
        }
        snprintf(row.metric, sizeof row.metric, "%s", col[c_metric]);
        snprintf(row.unit, sizeof row.unit, "%s", col[c_unit]);
        snprintf(row.config, sizeof row.config, "%s", col[c_cfg]);
        snprintf(row.spec, sizeof row.spec, "%s", col[c_spec]);
        if (num_parse(col[c_value], &row.measured) != 0 || !(row.measured > 0)) {
            rc = diag_set(d, DIAG_E_RANGE, vo->data, lineno, "value",
                          "expected a positive number, got '%s'", col[c_value]);
            goto out;
        }
        double host_s = 0;
        if (c_host >= 0 && col[c_host][0] != '\0') {
            if (num_parse(col[c_host], &host_s) != 0 || !(host_s >= 0)) {
                rc = diag_set(d, DIAG_E_RANGE, vo->data, lineno, "host_overhead_us",
                              "expected a number >= 0, got '%s'", col[c_host]);
                goto out;
            }
            host_s *= 1e-6;
        }
        /* config, loaded once */
        int ci;
        for (ci = 0; ci < ncfg; ci++)
            if (strcmp(cfgs[ci].name, row.config) == 0)
                break;
        if (ci == ncfg) {
            if (ncfg == VAL_MAX_CONFIGS) {
                rc = diag_set(d, DIAG_E_RANGE, vo->data, lineno, "config", "more than %d configs",
                              VAL_MAX_CONFIGS);
                goto out;
            }
            char path[1024];
            snprintf(path, sizeof path, "%s/%s.yaml", vo->configs, row.config);
            enum hw_kind kind;
            if (hw_load(path, vo->sets, &cfgs[ci].sys, &kind, d) != 0) {
                if (d->line == 0 && d->code == DIAG_E_IO) {
                    diag_set(d, DIAG_E_UNKNOWN_NAME, vo->data, lineno, "config",
                             "no config '%s' (looked for %s)", row.config, path);
                }
                rc = -1;
                goto out;
            }
            snprintf(cfgs[ci].name, sizeof cfgs[ci].name, "%s", row.config);
            cfgs[ci].chip = kind == HW_CHIP;
            ncfg++;
        }
        struct trace t;
        struct wl_info wi = {0, 0, 0, 0, 0, 0};
        if (build_workload(row.spec, vo->root, vo->data, lineno, &t, &wi, d) != 0) {
            rc = -1;
            goto out;
        }
        struct run_result r;
        const struct hw_config *ccfg = &cfgs[ci].sys.chip;
        struct run_opts ro = {.sustained = wi.sustained};
        if (wi.sustained && !(ccfg->has_power && ccfg->power_limit_w > 0)) {
            diag_set(d, DIAG_E_UNSUPPORTED, vo->data, lineno, "spec",
                     "sustained=1 needs the chip's power limit, and %s has no power block with "
                     "limit_W (docs/energy.md)", row.config);
            trace_free(&t);
            rc = -1;
            goto out;
        }
        if ((cfgs[ci].chip ? run_trace_opts(ccfg, &t, &ro, &r, d)
                           : run_system_opts(&cfgs[ci].sys, &t, &ro, &r, d)) != 0) {
            trace_free(&t);
            rc = -1;
            goto out;
        }
        {
            /* model FLOPs per chip: every op but the recomputed forward's
             * (gen llm names those ".recompute"), over the devices with ops */
            double mf = 0;
            for (uint32_t i = 0; i < t.nops; i++) {
                size_t idn = strlen(t.ops[i].id);
                if (idn < 10 || strcmp(t.ops[i].id + idn - 10, ".recompute") != 0)
                    mf += r.ops[i].flops;
            }
            uint32_t chips = t.ndevices > t.nmirrors ? t.ndevices - t.nmirrors : 1;
            wi.model_flops_per_chip = mf / chips;
        }
        double time_s = (double)r.total_ps * 1e-12 + host_s;
        double issue_s = (double)wi.gpus_per_thread * (double)ccfg->coll_overhead_ps * 1e-12;
        time_s += issue_s;      /* nccl-tests' one thread issuing for its GPUs (collbench.h) */
        if (convert(row.metric, row.unit, ccfg, &r, time_s, &wi, t.tokens, &row.predicted) != 0) {
            run_result_free(&r);
            trace_free(&t);
            rc = diag_set(d, DIAG_E_UNSUPPORTED, vo->data, lineno, "metric",
                          "cannot predict metric '%s' in '%s' for this workload", row.metric, row.unit);
            goto out;
        }
        res->events += r.events;
        run_result_free(&r);
        trace_free(&t);
        row.err = row.predicted / row.measured - 1.0;
        if (res->nrows == cap) {
            cap *= 2;
            void *p = realloc(res->rows, cap * sizeof *res->rows);
            if (p == NULL)
                sim_oom(cap * sizeof *res->rows);
            res->rows = p;
        }
        res->rows[res->nrows++] = row;
    }
    if (ferror(f))
        rc = diag_set(d, DIAG_E_IO, vo->data, lineno, "", "read error");
out:
    fclose(f);
    free(line);
    free(hline);
    for (int i = 0; i < ncfg; i++)
        if (!cfgs[i].chip)
            sys_free(&cfgs[i].sys);
    free(cfgs);
    if (rc != 0)
        validate_free(res);
    return rc;
}

void validate_free(struct validate_result *r)
{
    free(r->rows);
    memset(r, 0, sizeof *r);
}

int validate_groups(const struct validate_result *r, struct validate_group *g, int max)
{
    int n = 0;
    for (uint32_t i = 0; i < r->nrows; i++) {
        int k;
        for (k = 0; k < n; k++)
            if (strcmp(g[k].name, r->rows[i].group) == 0)
                break;
        if (k == n) {
            if (n == max)
                continue;
            memset(&g[n], 0, sizeof g[n]);
            snprintf(g[n].name, sizeof g[n].name, "%s", r->rows[i].group);
            n++;
        }
        g[k].count++;
    }
    for (int k = 0; k < n; k++) {
        double *e = sim_xcalloc(g[k].count, sizeof *e);
        size_t m = 0;
        for (uint32_t i = 0; i < r->nrows; i++)
            if (strcmp(g[k].name, r->rows[i].group) == 0)
                e[m++] = fabs(r->rows[i].err);
        gsl_sort(e, 1, m);
        g[k].median_abs_err = gsl_stats_median_from_sorted_data(e, 1, m);
        g[k].worst_abs_err = e[m - 1];
        free(e);
    }
    return n;
}

int validate_json(const struct validate_result *r, const char *path, struct diag *d)
{
    cJSON *root = cJSON_CreateObject();
    jout_add_num(root, "strata_validate", REPORT_FORMAT);
    cJSON_AddStringToObject(root, "version", STRATA_VERSION);
    cJSON *rows = cJSON_AddArrayToObject(root, "rows");
    for (uint32_t i = 0; i < r->nrows; i++) {
        const struct val_row *w = &r->rows[i];
        cJSON *j = cJSON_CreateObject();
        cJSON_AddStringToObject(j, "id", w->id);
        cJSON_AddStringToObject(j, "group", w->group);
        cJSON_AddStringToObject(j, "config", w->config);
        cJSON_AddStringToObject(j, "spec", w->spec);
        cJSON_AddStringToObject(j, "metric", w->metric);
        cJSON_AddStringToObject(j, "unit", w->unit);
        jout_add_num(j, "predicted", w->predicted);
        jout_add_num(j, "measured", w->measured);
        jout_add_num(j, "error", w->err);
        cJSON_AddItemToArray(rows, j);
    }
    struct validate_group g[32];
    int ng = validate_groups(r, g, 32);
    cJSON *groups = cJSON_AddObjectToObject(root, "groups");
    for (int k = 0; k < ng; k++) {
        cJSON *j = cJSON_AddObjectToObject(groups, g[k].name);
        jout_add_num(j, "rows", g[k].count);
        jout_add_num(j, "median_abs_error", g[k].median_abs_err);
        jout_add_num(j, "worst_abs_error", g[k].worst_abs_err);
    }
    jout_add_num(root, "skipped", r->skipped);
    int rc = jout_write(root, path, d);
    cJSON_Delete(root);
    return rc;
}
