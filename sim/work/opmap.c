/* opmap.c: see opmap.h.  The tables below are the whole mapping; an
 * operator not named here is OPMAP_UNKNOWN. */
#include "opmap.h"

#include <stdlib.h>
#include <string.h>

static const char *const gemm_ops[] = {"aten::mm", "aten::addmm", "aten::bmm", "aten::baddbmm",
                                       "aten::matmul", "aten::linear", "aten::addbmm"};
static const char *const attn_ops[] = {"aten::scaled_dot_product_attention",
                                       "aten::_scaled_dot_product_flash_attention",
                                       "aten::_scaled_dot_product_efficient_attention",
                                       "aten::_scaled_dot_product_cudnn_attention",
                                       "aten::_flash_attention_forward",
                                       "aten::_efficient_attention_forward"};
static const char *const conv_ops[] = {"aten::convolution", "aten::_convolution",
                                       "aten::cudnn_convolution", "aten::conv2d",
                                       "aten::miopen_convolution"};
static const char *const norm_ops[] = {"aten::layer_norm", "aten::native_layer_norm",
                                       "aten::native_layer_norm_backward", "aten::rms_norm",
                                       "aten::_fused_rms_norm", "aten::group_norm",
                                       "aten::native_group_norm", "aten::batch_norm",
                                       "aten::native_batch_norm", "aten::cudnn_batch_norm"};
static const char *const softmax_ops[] = {"aten::softmax", "aten::_softmax", "aten::log_softmax",
                                          "aten::_log_softmax", "aten::_softmax_backward_data",
                                          "aten::_log_softmax_backward_data"};
static const char *const reduce_ops[] = {"aten::sum", "aten::mean", "aten::amax", "aten::max",
                                         "aten::min", "aten::amin", "aten::norm", "aten::var",
                                         "aten::std", "aten::argmax", "aten::cumsum", "aten::prod"};
static const char *const embed_ops[] = {"aten::embedding", "aten::embedding_dense_backward",
                                        "aten::index_select", "aten::embedding_bag",
                                        "aten::_embedding_bag"};
/* elementwise: everything that reads its inputs and writes a same-shaped
 * result; FLOP per element is a rough operation count */
static const struct {
    const char *name;
    double fpe;
    int writes_only;
} ew_ops[] = {
    {"aten::add", 1, 0}, {"aten::add_", 1, 0}, {"aten::sub", 1, 0}, {"aten::sub_", 1, 0},
    {"aten::rsub", 1, 0}, {"aten::mul", 1, 0}, {"aten::mul_", 1, 0}, {"aten::div", 1, 0},
    {"aten::div_", 1, 0}, {"aten::neg", 1, 0}, {"aten::abs", 1, 0}, {"aten::exp", 4, 0},
    {"aten::log", 4, 0}, {"aten::sqrt", 2, 0}, {"aten::rsqrt", 2, 0}, {"aten::pow", 4, 0},
    {"aten::relu", 1, 0}, {"aten::relu_", 1, 0}, {"aten::gelu", 10, 0}, {"aten::silu", 5, 0},
    {"aten::sigmoid", 4, 0}, {"aten::tanh", 4, 0}, {"aten::threshold_backward", 1, 0},
    {"aten::gelu_backward", 12, 0}, {"aten::silu_backward", 6, 0},
    {"aten::sigmoid_backward", 2, 0}, {"aten::tanh_backward", 2, 0}, {"aten::where", 1, 0},
    {"aten::eq", 1, 0}, {"aten::ne", 1, 0}, {"aten::lt", 1, 0}, {"aten::le", 1, 0},
    {"aten::gt", 1, 0}, {"aten::ge", 1, 0}, {"aten::clamp", 1, 0}, {"aten::clamp_", 1, 0},
    {"aten::nan_to_num", 1, 0}, {"aten::masked_fill", 1, 0}, {"aten::masked_fill_", 1, 0},
    {"aten::dropout", 2, 0}, {"aten::native_dropout", 2, 0}, {"aten::addcmul_", 2, 0},
    {"aten::addcdiv_", 2, 0}, {"aten::lerp_", 2, 0}, {"aten::copy_", 0, 0},
    {"aten::_to_copy", 0, 0}, {"aten::clone", 0, 0}, {"aten::contiguous", 0, 0},
    {"aten::fill_", 0, 1}, {"aten::zero_", 0, 1}, {"aten::zeros", 0, 1}, {"aten::ones", 0, 1},
    {"aten::ones_like", 0, 1}, {"aten::zeros_like", 0, 1}, {"aten::full", 0, 1},
    {"aten::uniform_", 2, 1}, {"aten::normal_", 4, 1}, {"aten::bernoulli_", 2, 1},
    {"aten::_foreach_add_", 1, 0}, {"aten::_foreach_mul_", 1, 0},
};
static const char *const coll_prefix[] = {"nccl:", "c10d::", "record_param_comms", "rccl:"};

static int in_list(const char *name, const char *const *list, size_t n)
{
    for (size_t i = 0; i < n; i++)
        if (strcmp(name, list[i]) == 0)
            return 1;
    return 0;
}

#define IN_LIST(name, list) in_list(name, list, sizeof list / sizeof list[0])

enum dtype opmap_dtype(const char *t)
{
    if (t == NULL)
        return DT_FP32;
    if (strncmp(t, "Tensor(", 7) == 0)
        t += 7;
    if (strncmp(t, "float", 5) == 0 && strncmp(t, "float16", 7) != 0)
        return DT_FP32;
    if (strstr(t, "Half") || strncmp(t, "float16", 7) == 0 || strncmp(t, "c10::Half", 9) == 0)
        return DT_FP16;
    if (strstr(t, "BFloat16"))
        return DT_BF16;
    if (strstr(t, "Float8_e4m3"))
        return DT_FP8_E4M3;
    if (strstr(t, "Float8_e5m2"))
        return DT_FP8_E5M2;
    if (strncmp(t, "double", 6) == 0 || strncmp(t, "long", 4) == 0 || strncmp(t, "int64", 5) == 0)
        return DT_FP64; /* 8-byte elements; strata has no int64 compute type */
    if (strncmp(t, "int", 3) == 0)
        return DT_FP32; /* 4-byte elements */
    if (strncmp(t, "bool", 4) == 0 || strstr(t, "char") || strncmp(t, "int8", 4) == 0 ||
        strncmp(t, "uint8", 5) == 0)
        return DT_INT8;
    return DT_FP32;
}

static uint64_t numel(const struct opmap_in *in, int i)
{
    if (i >= in->ninputs || in->ndims[i] < 0)
        return 0;
    uint64_t n = 1;
    for (int k = 0; k < in->ndims[i]; k++) {
        if (in->dims[i][k] <= 0)
            return 0;
        n *= (uint64_t)in->dims[i][k];
    }
    return n;
}

static int is_tensor(const struct opmap_in *in, int i)
{
    return i < in->ninputs && in->ndims[i] >= 1;
}

/* the tensor inputs with at least `min` dims, in order */
static int tensors(const struct opmap_in *in, int min, int *idx, int max)
{
    int n = 0;
    for (int i = 0; i < in->ninputs && n < max; i++)
        if (in->ndims[i] >= min)
            idx[n++] = i;
    return n;
}

static enum dtype tensor_dtype(const struct opmap_in *in, int i)
{
    enum dtype t = opmap_dtype(in->types[i]);
    if (t == DT_FP32 && in->tensor_core)
        t = DT_TF32;
    return t;
}

/* Largest stride, padding, dilation or group count taken from a trace;
 * and largest size a convolution's arithmetic takes (both keep every
 * product below 2^63). */
#define CONCRETE_MAX ((int64_t)1 << 20)
#define CONV_DIM_MAX ((int64_t)1 << 31)

/* A "Concrete Inputs" value as integers: "2", "-1" or "[2, 2]" (n values,
 * the last repeated to fill max), each in [lo, CONCRETE_MAX]; 0 if absent,
 * not integers or out of range. */
static int concrete_ints_in(const struct opmap_in *in, int i, int64_t *v, int max, int64_t lo)
{
    if (i >= in->ninputs || in->concrete[i] == NULL || in->concrete[i][0] == '\0')
        return 0;
    const char *p = in->concrete[i];
    int n = 0;
    while (*p == '[' || *p == ' ')
        p++;
    while (*p != '\0' && *p != ']' && n < max) {
        char *end;
        long long x = strtoll(p, &end, 10);
        if (end == p || x < lo || x > CONCRETE_MAX)
            return 0;
        v[n++] = x;
        p = end;
        while (*p == ',' || *p == ' ')
            p++;
    }
    if (n == 0)
        return 0;
    for (int k = n; k < max; k++)
        v[k] = v[n - 1];
    return n;
}

static int concrete_ints(const struct opmap_in *in, int i, int64_t *v, int max)
{
    return concrete_ints_in(in, i, v, max, 0);
}

int opmap_uses_concrete(const char *name)
{
    return IN_LIST(name, conv_ops) || strcmp(name, "aten::index_select") == 0;
}

/* Where each convolution operator keeps stride, padding, dilation,
 * transposed and groups among its arguments (-1: it has none). */
static const struct conv_args {
    const char *name;
    int stride, padding, dilation, transposed, groups;
} conv_args[] = {
    {"aten::convolution", 3, 4, 5, 6, 8},        {"aten::_convolution", 3, 4, 5, 6, 8},
    {"aten::conv2d", 3, 4, 5, -1, 6},            {"aten::cudnn_convolution", 3, 2, 4, -1, 5},
    {"aten::miopen_convolution", 4, 3, 5, -1, 6},
};

/* Convolution as an implicit GEMM: M = batch x output pixels, N = output
 * channels per group, K = input channels per group x kernel pixels, one
 * GEMM per group.  Stride, padding, dilation and groups come from the
 * trace's "Concrete Inputs" when it has them (PyTorch 2.1 and later);
 * without them the output keeps the input's size (stride 1, "same"). */
static enum opmap_result map_conv(const struct opmap_in *in, struct op *o)
{
    if (!is_tensor(in, 0) || !is_tensor(in, 1) || in->ndims[0] < 3 || in->ndims[1] < 3 ||
        in->ndims[1] != in->ndims[0] || numel(in, 0) == 0 || numel(in, 1) == 0)
        return OPMAP_NOSHAPE;
    const struct conv_args *a = NULL;
    for (size_t i = 0; i < sizeof conv_args / sizeof conv_args[0]; i++)
        if (strcmp(in->name, conv_args[i].name) == 0)
            a = &conv_args[i];
    int nsp = in->ndims[0] - 2;
    int64_t stride[OPMAP_MAX_DIMS], pad[OPMAP_MAX_DIMS], dil[OPMAP_MAX_DIMS], g = 1, tr = 0;
    for (int i = 0; i < nsp; i++)
        stride[i] = dil[i] = 1, pad[i] = -1; /* -1: "same" */
    if (a != NULL) {
        int64_t v[OPMAP_MAX_DIMS];
        if (concrete_ints(in, a->stride, v, nsp))
            memcpy(stride, v, sizeof(int64_t) * (size_t)nsp);
        /* a padding given as a string ("same", "valid") is recorded as "":
         * "same" is assumed then */
        if (concrete_ints(in, a->padding, v, nsp))
            memcpy(pad, v, sizeof(int64_t) * (size_t)nsp);
        if (concrete_ints(in, a->dilation, v, nsp))
            memcpy(dil, v, sizeof(int64_t) * (size_t)nsp);
        if (a->groups >= 0 && concrete_ints(in, a->groups, v, 1))
            g = v[0];
        if (a->transposed >= 0 && a->transposed < in->ninputs && in->concrete[a->transposed] &&
            (strcmp(in->concrete[a->transposed], "True") == 0 ||
             strcmp(in->concrete[a->transposed], "1") == 0))
            tr = 1;
    }
    uint64_t spatial = 1, kspatial = 1;
    for (int i = 0; i < nsp; i++) {
        int64_t x = in->dims[0][2 + i], k = in->dims[1][2 + i], y = x;
        if (x > CONV_DIM_MAX || k > CONV_DIM_MAX)
            return OPMAP_NOSHAPE;
        if (!tr && pad[i] >= 0 && stride[i] >= 1) {
            if (x + 2 * pad[i] < dil[i] * (k - 1) + 1)
                return OPMAP_NOSHAPE; /* no output: PyTorch refuses it too */
            y = (x + 2 * pad[i] - dil[i] * (k - 1) - 1) / stride[i] + 1;
        }
        else if (!tr && stride[i] > 1)
            y = (x + stride[i] - 1) / stride[i];
        if (y < 1 || k < 1)
            return OPMAP_NOSHAPE;
        spatial *= (uint64_t)y;
        kspatial *= (uint64_t)k;
    }
    uint64_t cout = (uint64_t)in->dims[1][0];
    if (g < 1 || cout % (uint64_t)g != 0)
        g = 1;
    o->kind = OP_GEMM;
    o->dtype = tensor_dtype(in, 0);
    o->u.gemm.m = (uint64_t)in->dims[0][0] * spatial;
    o->u.gemm.n = cout / (uint64_t)g;
    o->u.gemm.k = (uint64_t)in->dims[1][1] * kspatial;
    o->u.gemm.batch = (uint64_t)g;
    return o->u.gemm.m && o->u.gemm.n && o->u.gemm.k ? OPMAP_OK : OPMAP_NOSHAPE;
}

static enum opmap_result map_gemm(const struct opmap_in *in, struct op *o)
{
    int t[4];
    int n = tensors(in, 1, t, 4);
    int a, b;
    const char *nm = in->name;
    /* addmm/baddbmm/addbmm: (bias, A, B); others: (A, B) */
    if (strcmp(nm, "aten::addmm") == 0 || strcmp(nm, "aten::baddbmm") == 0 ||
        strcmp(nm, "aten::addbmm") == 0) {
        if (n < 3)
            return OPMAP_NOSHAPE;
        a = t[n - 2];
        b = t[n - 1];
    } else {
        if (n < 2)
            return OPMAP_NOSHAPE;
        a = t[0];
        b = t[1];
    }
    int da = in->ndims[a], db = in->ndims[b];
    if (da < 1 || db < 1)
        return OPMAP_NOSHAPE;
    uint64_t m = 1, k, nn, batch = 1;
    if (strcmp(nm, "aten::linear") == 0) {
        /* x (..., K) . W (N, K)^T */
        if (db != 2)
            return OPMAP_NOSHAPE;
        k = (uint64_t)in->dims[a][da - 1];
        for (int i = 0; i < da - 1; i++)
            m *= (uint64_t)in->dims[a][i];
        nn = (uint64_t)in->dims[b][0];
    } else if (da >= 3 && db >= 3) {
        /* batched: (..., M, K) x (..., K, N) */
        for (int i = 0; i < da - 2; i++)
            batch *= (uint64_t)in->dims[a][i];
        m = (uint64_t)in->dims[a][da - 2];
        k = (uint64_t)in->dims[a][da - 1];
        nn = (uint64_t)in->dims[b][db - 1];
    } else if (db >= 2) {
        for (int i = 0; i < da - 1; i++)
            m *= (uint64_t)in->dims[a][i];
        k = (uint64_t)in->dims[a][da - 1];
        nn = (uint64_t)in->dims[b][db - 1];
    } else {
        /* matrix x vector */
        for (int i = 0; i < da - 1; i++)
            m *= (uint64_t)in->dims[a][i];
        k = (uint64_t)in->dims[a][da - 1];
        nn = 1;
    }
    if (m == 0 || k == 0 || nn == 0 || batch == 0)
        return OPMAP_NOSHAPE;
    o->kind = OP_GEMM;
    o->dtype = tensor_dtype(in, a);
    o->u.gemm.m = m;
    o->u.gemm.n = nn;
    o->u.gemm.k = k;
    o->u.gemm.batch = batch;
    return OPMAP_OK;
}

/* Attention from q, k, v as (batch, heads, length, head_dim) tensors. */
static enum opmap_result map_attention(const struct opmap_in *in, struct op *o)
{
    int t[4];
    if (tensors(in, 4, t, 4) < 3)
        return OPMAP_NOSHAPE;
    const int64_t *q = in->dims[t[0]], *k = in->dims[t[1]];
    if (q[0] <= 0 || q[1] <= 0 || q[2] <= 0 || q[3] <= 0 || k[1] <= 0 || k[2] <= 0 ||
        q[1] % k[1] != 0)
        return OPMAP_NOSHAPE;
    o->kind = OP_ATTENTION;
    o->dtype = tensor_dtype(in, t[0]);
    o->u.attn.batch = (uint64_t)q[0];
    o->u.attn.heads = (uint64_t)q[1];
    o->u.attn.kv_heads = (uint64_t)k[1];
    o->u.attn.q_len = (uint64_t)q[2];
    o->u.attn.kv_len = (uint64_t)k[2];
    o->u.attn.head_dim = (uint64_t)q[3];
    o->u.attn.causal = 0; /* the flag is not among the shapes */
    o->u.attn.impl = ATTN_FLASH;
    o->u.attn.kv_dtype = o->dtype;
    return OPMAP_OK;
}

/* A norm, softmax or reduction over the last dimension of its first tensor. */
static enum opmap_result map_rows(const struct opmap_in *in, struct op *o, enum op_kind kind)
{
    int t[1];
    if (tensors(in, 1, t, 1) < 1)
        return OPMAP_NOSHAPE;
    uint64_t n = numel(in, t[0]);
    uint64_t cols = (uint64_t)in->dims[t[0]][in->ndims[t[0]] - 1];
    if (n == 0 || cols == 0)
        return OPMAP_NOSHAPE;
    o->kind = kind;
    o->dtype = tensor_dtype(in, t[0]);
    o->u.rc.rows = n / cols;
    o->u.rc.cols = cols;
    return OPMAP_OK;
}

static enum opmap_result map_embedding(const struct opmap_in *in, struct op *o)
{
    const char *nm = in->name;
    /* embedding(weight, indices): tokens = numel(indices), dim = weight's
     * last; index_select(self, dim, index): numel(index) rows of self
     * along its first dimension (the dim argument's value is not in the
     * shapes; 0 is the gather the name says), so a 1-D self gathers
     * single elements */
    int t[2];
    if (tensors(in, 1, t, 2) < 2)
        return OPMAP_NOSHAPE;
    int w = in->ndims[t[0]] == 2 ? t[0] : t[1], ix = w == t[0] ? t[1] : t[0];
    uint64_t tok = numel(in, ix), dim = (uint64_t)in->dims[w][in->ndims[w] - 1];
    if (strcmp(nm, "aten::index_select") == 0) {
        /* numel(index) slices of self along dim (0 unless the trace's
         * "Concrete Inputs" say), each of the elements after dim, once
         * for every position before dim */
        int64_t ax = 0;
        w = t[0];
        if (numel(in, w) == 0)
            return OPMAP_NOSHAPE;
        if (!concrete_ints_in(in, 1, &ax, 1, -CONCRETE_MAX))
            ax = 0;
        if (ax < 0)
            ax += in->ndims[w];         /* -1: the last dimension */
        if (ax < 0 || ax >= in->ndims[w])
            return OPMAP_NOSHAPE;
        uint64_t outer = 1, inner = 1;
        for (int i = 0; i < in->ndims[w]; i++)
            if (i < ax)
                outer *= (uint64_t)in->dims[w][i];
            else if (i > ax)
                inner *= (uint64_t)in->dims[w][i];
        tok = numel(in, t[1]) * outer;
        dim = inner;
    }
    if (tok == 0 || dim == 0)
        return OPMAP_NOSHAPE;
    o->kind = OP_EMBEDDING;
    o->dtype = tensor_dtype(in, w);
    o->u.emb.tokens = tok;
    o->u.emb.dim = dim;
    return OPMAP_OK;
}

/* An elementwise operator, row i of ew_ops. */
static enum opmap_result map_elementwise(const struct opmap_in *in, struct op *o, size_t i)
{
    /* elements: the largest tensor; inputs: tensors of that size */
    uint64_t el = 0;
    int big = -1;
    for (int k = 0; k < in->ninputs; k++)
        if (numel(in, k) > el) {
            el = numel(in, k);
            big = k;
        }
    if (el == 0)
        return OPMAP_NOSHAPE;
    uint32_t nin = 0;
    for (int k = 0; k < in->ninputs; k++)
        if (numel(in, k) == el)
            nin++;
    o->kind = OP_ELEMENTWISE;
    o->dtype = tensor_dtype(in, big);
    o->u.ew.elements = el;
    /* copies read their source once (the destination is only written) */
    if (ew_ops[i].fpe == 0 && !ew_ops[i].writes_only)
        nin = 1;
    o->u.ew.inputs = ew_ops[i].writes_only ? 0 : nin;
    o->u.ew.outputs = 1;
    o->u.ew.flops_per_element = ew_ops[i].fpe;
    o->u.ew.vector_bytes = 16;
    return OPMAP_OK;
}

static enum opmap_result map_op(const struct opmap_in *in, struct op *o)
{
    const char *nm = in->name;
    for (size_t i = 0; i < sizeof coll_prefix / sizeof coll_prefix[0]; i++)
        if (strncmp(nm, coll_prefix[i], strlen(coll_prefix[i])) == 0)
            return OPMAP_COLLECTIVE;
    if (IN_LIST(nm, gemm_ops))
        return map_gemm(in, o);
    if (IN_LIST(nm, attn_ops))
        return map_attention(in, o);
    if (IN_LIST(nm, conv_ops))
        return map_conv(in, o);
    int is_norm = IN_LIST(nm, norm_ops), is_sm = IN_LIST(nm, softmax_ops),
        is_red = IN_LIST(nm, reduce_ops);
    if (is_norm || is_sm || is_red)
        return map_rows(in, o, is_norm ? OP_NORM : (is_sm ? OP_SOFTMAX : OP_REDUCTION));
    if (IN_LIST(nm, embed_ops))
        return map_embedding(in, o);
    for (size_t i = 0; i < sizeof ew_ops / sizeof ew_ops[0]; i++)
        if (strcmp(nm, ew_ops[i].name) == 0)
            return map_elementwise(in, o, i);
    return OPMAP_UNKNOWN;
}

/* Sizes no trace can hold (a recorded dim of 2^62) are no shapes: the
 * caller keeps the op's measured time instead, in every importer. */
enum opmap_result opmap_map(const struct opmap_in *in, struct op *o)
{
    enum opmap_result r = map_op(in, o);
    const char *field;
    char msg[160];
    if (r == OPMAP_OK && trace_op_sizes_ok(o, &field, msg, sizeof msg) != 0)
        r = OPMAP_NOSHAPE;
    return r;
}

/* A token of a kernel name that carries a tile size: a digit, 'x', a digit. */
static int tile_token(const char *t, size_t n)
{
    for (size_t i = 1; i + 1 < n; i++)
        if (t[i] == 'x' && t[i - 1] >= '0' && t[i - 1] <= '9' && t[i + 1] >= '0' && t[i + 1] <= '9')
            return 1;
    return 0;
}

/* [s, s + n) without namespaces: what follows the last "::". */
static const char *after_namespaces(const char *s, size_t *n)
{
    const char *b = s;
    for (size_t i = 0; i + 1 < *n; i++)
        if (s[i] == ':' && s[i + 1] == ':')
            b = s + i + 2;
    *n -= (size_t)(b - s);
    return b;
}

void opmap_kernel_family(const char *name, char *out, size_t n)
{
    static const char anon[] = "(anonymous namespace)";
    if (n == 0)
        return;
    out[0] = '\0';
    const char *s = name;
    if (strncmp(s, "void ", 5) == 0)
        s += 5;
    /* The function's name ends at its parameter list: the first '(' outside
     * template arguments that is not "(anonymous namespace)". */
    size_t end = 0, lt = SIZE_MAX;
    int depth = 0;
    while (s[end] != '\0') {
        if (strncmp(s + end, anon, sizeof anon - 1) == 0) {
            end += sizeof anon - 1;
            continue;
        }
        char c = s[end];
        if (c == '<' && depth++ == 0 && lt == SIZE_MAX)
            lt = end;
        else if (c == '>' && depth > 0)
            depth--;
        else if (c == '(' && depth == 0)
            break;
        end++;
    }
    size_t bl = lt < end ? lt : end;
    const char *b = after_namespaces(s, &bl);
    /* A wrapper's family is its first template argument's. */
    if (lt < end && ((bl == 6 && strncmp(b, "Kernel", 6) == 0) ||
                     (bl == 7 && strncmp(b, "Kernel2", 7) == 0) ||
                     (bl == 13 && strncmp(b, "device_kernel", 13) == 0))) {
        const char *a = s + lt + 1;
        size_t al = 0;
        while (a + al < s + end && a[al] != ',' && a[al] != '>' && a[al] != '<')
            al++;
        b = after_namespaces(a, &al);
        bl = al;
    }
    while (bl > 0 && (b[bl - 1] == ' ' || b[bl - 1] == '_'))
        bl--;
    /* Copy the '_'-separated tokens that carry no tile size. */
    size_t o = 0;
    for (size_t i = 0; i < bl;) {
        size_t j = i;
        while (j < bl && b[j] != '_')
            j++;
        if (j > i && !tile_token(b + i, j - i)) {
            if (o > 0 && o + 1 < n)
                out[o++] = '_';
            for (size_t k = i; k < j && o + 1 < n; k++)
                out[o++] = b[k];
        }
        i = j + 1;
    }
    out[o] = '\0';
}
