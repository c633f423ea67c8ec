/* stack.c: see stack.h.  A stack file is read through yconf (the one YAML
 * reader) and checked as configs are: unknown keys, values out of range, a
 * value without a source, a source for a value the file does not give. */
#include "stack.h"

#include <dirent.h>
#include <math.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "numfmt.h"
#include "yconf.h"

static const char *const top_keys[] = {"name", "description", "runs_on", "kernels", "attention",
                                       "prefill", "host", "gemm", "collectives", "serving", "sources", NULL};
static const char *const attn_keys[] = {"prefill", "decode", NULL};
static const char *const prefill_keys[] = {"ubatch", NULL};
static const char *const host_keys[] = {"kernel_dispatch_us", "step_us", "launch_gap_us", NULL};
static const char *const gemm_keys[] = {"path", "issue_efficiency", "accumulate", "dequant_kernel_min_m",
                                        "float_matvec_inflight_bytes_per_unit", NULL};
static const char *const coll_keys[] = {"call_overhead_us", "rings", NULL};
static const char *const serving_keys[] = {"scheduler", "max_num_seqs", "max_num_batched_tokens",
                                           "block_size", "chunked_prefill", "scheduler_steps",
                                           "host_step_us", "host_seq_us", "capacity_policy", NULL};

static const char *const path_names[MP_COUNT] = {
#define STACK_PATH_NAME_(e, n) n,
    MATRIX_PATH_MAP(STACK_PATH_NAME_)
#undef STACK_PATH_NAME_
};

/* The dotted names of the values the file gives ("host.step_us"), to
 * match against its sources. */
struct given {
    char key[48];
    int line;
};
#define STACK_MAX_GIVEN 32

struct sload {
    struct yconf y;
    struct stack *s;
    struct given given[STACK_MAX_GIVEN];
    unsigned ngiven;
};

static void note_given(struct sload *l, const char *section, const char *key, int line)
{
    if (l->ngiven < STACK_MAX_GIVEN) {  /* the sections' key lists hold fewer */
        yconf_field(l->given[l->ngiven].key, sizeof l->given[l->ngiven].key, section, key);
        l->given[l->ngiven++].line = line;
    }
}

static int read_choice_in(struct sload *l, int map, const char *section, const char *key, const char *no,
                          const char *yes, int *out)
{
    char w[32] = "";
    if (yconf_get_string(&l->y, map, section, key, 0, w, sizeof w) != 0)
        return -1;
    if (w[0] == '\0')
        return 0;
    int line = l->y.nodes[yconf_lookup(&l->y, map, key)].line;
    if (strcmp(w, no) != 0 && strcmp(w, yes) != 0) {
        char field[64];
        yconf_field(field, sizeof field, section, key);
        return diag_set(l->y.d, DIAG_E_UNKNOWN_NAME, l->y.path, line, field, "expected %s or %s, got '%s'",
                        no, yes, w);
    }
    *out = strcmp(w, yes) == 0;
    note_given(l, section, key, line);
    return 0;
}

static int read_choice(struct sload *l, int map, const char *key, const char *no, const char *yes, int *out)
{
    return read_choice_in(l, map, "serving", key, no, yes, out);
}

/* An attention impl by name into *out; 0, -1 with the error. */
static int read_attn(struct sload *l, int map, const char *key, int *has, enum attn_impl *out)
{
    char name[32];
    int v = yconf_lookup(&l->y, map, key);
    if (v < 0)
        return 0;
    if (yconf_get_string(&l->y, map, "attention", key, 1, name, sizeof name) != 0)
        return -1;
    for (int i = 0; i < ATTN_IMPL_COUNT; i++)
        if (strcmp(name, op_attn_impl_name((enum attn_impl)i)) == 0) {
            *out = (enum attn_impl)i;
            *has = 1;
            note_given(l, "attention", key, l->y.nodes[v].line);
            return 0;
        }
    char field[64];
    yconf_field(field, sizeof field, "attention", key);
    return diag_set(l->y.d, DIAG_E_UNKNOWN_NAME, l->y.path, l->y.nodes[v].line, field,
                    "unknown attention '%s' (docs/attention.md lists them)", name);
}

/* A number in microseconds into seconds (absent: *out stays -1). */
static int read_us(struct sload *l, int map, const char *section, const char *key, double *out)
{
    double x;
    int rc = yconf_get_number(&l->y, map, section, key, YCONF_NONNEG, 0, &x);
    if (rc < 0)
        return -1;
    if (rc == 0) {
        if (x > 1e6) {
            char field[64];
            yconf_field(field, sizeof field, section, key);
            return diag_set(l->y.d, DIAG_E_RANGE, l->y.path, l->y.nodes[yconf_lookup(&l->y, map, key)].line,
                            field, "at most 1e6 us (a second), got %g", x);
        }
        *out = x * 1e-6;
        note_given(l, section, key, l->y.nodes[yconf_lookup(&l->y, map, key)].line);
    }
    return 0;
}

static int read_runs_on(struct sload *l, int root)
{
    int v = yconf_lookup(&l->y, root, "runs_on");
    if (v < 0)
        return diag_set(l->y.d, DIAG_E_MISSING, l->y.path, yconf_map_line(&l->y, root), "runs_on",
                        "missing: the chip families the stack runs on, e.g. [gpu]");
    if (l->y.nodes[v].kind != YCONF_SEQUENCE || l->y.nodes[v].n_children == 0 ||
        l->y.nodes[v].n_children > STACK_MAX_FAMILIES)
        return diag_set(l->y.d, DIAG_E_TYPE, l->y.path, l->y.nodes[v].line, "runs_on",
                        "expected a list of 1 to %d families, e.g. [gpu]", STACK_MAX_FAMILIES);
    for (int c = l->y.nodes[v].first; c >= 0; c = l->y.nodes[c].next) {
        const char *f = yconf_text(&l->y, c);
        if (l->y.nodes[c].kind != YCONF_SCALAR || strlen(f) == 0 || strlen(f) >= 32)
            return diag_set(l->y.d, DIAG_E_TYPE, l->y.path, l->y.nodes[c].line, "runs_on",
                            "expected a family name (gpu, tpu, npu, apple)");
        snprintf(l->s->runs_on[l->s->nruns_on++], 32, "%s", f);
    }
    note_given(l, "", "runs_on", l->y.nodes[v].line);
    return 0;
}

static int read_top(struct sload *l, int root)
{
    struct stack *s = l->s;
    char kern[32];
    if (yconf_get_string(&l->y, root, "", "name", 1, s->name, sizeof s->name) != 0 ||
        yconf_get_string(&l->y, root, "", "kernels", 0, kern, sizeof kern) != 0 || read_runs_on(l, root) != 0)
        return -1;
    char desc[256];
    if (yconf_get_string(&l->y, root, "", "description", 0, desc, sizeof desc) != 0)
        return -1;
    int v = yconf_lookup(&l->y, root, "kernels");
    if (v >= 0) {
        if (llm_framework_from_name(kern, &s->kernels) != 0)
            return diag_set(l->y.d, DIAG_E_UNKNOWN_NAME, l->y.path, l->y.nodes[v].line, "kernels",
                            "expected fused, llama.cpp, pytorch, vllm or hf, got '%s'", kern);
        s->has_kernels = 1;
        note_given(l, "", "kernels", l->y.nodes[v].line);
    }
    return 0;
}

/* A whole number 1 .. max into *out (absent: *out stays -1). */
static int read_count(struct sload *l, int map, const char *section, const char *key, double max, long *out)
{
    double x;
    int rc = yconf_get_number(&l->y, map, section, key, YCONF_COUNT, 0, &x);
    if (rc < 0)
        return -1;
    if (rc == 0) {
        int line = l->y.nodes[yconf_lookup(&l->y, map, key)].line;
        if (x > max) {
            char field[64];
            yconf_field(field, sizeof field, section, key);
            return diag_set(l->y.d, DIAG_E_RANGE, l->y.path, line, field, "at most %.0f, got %.0f", max, x);
        }
        *out = (long)x;
        note_given(l, section, key, line);
    }
    return 0;
}

/* gemm.issue_efficiency: a share, or a mapping from chip generations (their
 * own newest matrix path: mma_sync, wgmma, ...) to shares. */
static int read_issue(struct sload *l, int g)
{
    struct stack *s = l->s;
    int v = yconf_lookup(&l->y, g, "issue_efficiency");
    if (v < 0 || l->y.nodes[v].kind != YCONF_MAPPING)
        return yconf_get_number(&l->y, g, "gemm", "issue_efficiency", YCONF_FRAC, 1, &s->gemm_issue);
    s->gemm_issue = -1;
    for (int k = l->y.nodes[v].first; k >= 0; k = yconf_next_key(&l->y, k)) {
        int p = 0;
        while (p < MP_COUNT && !yconf_key_eq(&l->y, k, path_names[p]))
            p++;
        if (p == MP_COUNT)
            return diag_set(l->y.d, DIAG_E_UNKNOWN_KEY, l->y.path, l->y.nodes[k].line, "gemm.issue_efficiency",
                            "'%s' is no chip generation: a matrix path (mma_sync, wgmma, tcgen05, mfma, "
                            "systolic), the newest a chip issues at its full rate",
                            yconf_text(&l->y, k));
        if (yconf_get_number(&l->y, v, "gemm.issue_efficiency", path_names[p], YCONF_FRAC, 1,
                             &s->gemm_issue_by[p]) != 0)
            return -1;
    }
    return 0;
}

static int read_sections(struct sload *l, int root)
{
    struct stack *s = l->s;
    int pf = yconf_section(&l->y, root, "prefill", 0);
    if (pf == -1 || (pf >= 0 && (yconf_check_keys(&l->y, pf, "prefill", prefill_keys) != 0 ||
                                 read_count(l, pf, "prefill", "ubatch", 1 << 20, &s->prefill_ubatch) != 0)))
        return -1;
    int a = yconf_section(&l->y, root, "attention", 0);
    if (a == -1 || (a >= 0 && (yconf_check_keys(&l->y, a, "attention", attn_keys) != 0 ||
                               read_attn(l, a, "prefill", &s->has_prefill_attn, &s->prefill_attn) != 0 ||
                               read_attn(l, a, "decode", &s->has_decode_attn, &s->decode_attn) != 0)))
        return -1;
    int h = yconf_section(&l->y, root, "host", 0);
    if (h == -1 || (h >= 0 && (yconf_check_keys(&l->y, h, "host", host_keys) != 0 ||
                               read_us(l, h, "host", "kernel_dispatch_us", &s->kernel_dispatch_s) != 0 ||
                               read_us(l, h, "host", "step_us", &s->step_s) != 0 ||
                               read_us(l, h, "host", "launch_gap_us", &s->launch_gap_s) != 0)))
        return -1;
    int c = yconf_section(&l->y, root, "collectives", 0);
    if (c == -1 || (c >= 0 && (yconf_check_keys(&l->y, c, "collectives", coll_keys) != 0 ||
                               read_us(l, c, "collectives", "call_overhead_us", &s->coll_call_s) != 0 ||
                               read_choice_in(l, c, "collectives", "rings", "all_links", "one",
                                              &s->coll_one_ring) != 0)))
        return -1;
    int g = yconf_section(&l->y, root, "gemm", 0);
    if (g == -1)
        return -1;
    if (g >= 0) {
        char path[32] = "";
        if (yconf_check_keys(&l->y, g, "gemm", gemm_keys) != 0 ||
            yconf_get_string(&l->y, g, "gemm", "path", 0, path, sizeof path) != 0 || read_issue(l, g) != 0)
            return -1;
        int pv = yconf_lookup(&l->y, g, "path");
        s->gemm_path = MP_COUNT;    /* not given: the chip's own newest path (stack_native_path) */
        if (pv >= 0) {
            s->gemm_path = -1;
            for (int p = 0; p < MP_COUNT; p++)
                if (strcmp(path, path_names[p]) == 0)
                    s->gemm_path = p;
            if (s->gemm_path < 0)
                return diag_set(l->y.d, DIAG_E_UNKNOWN_NAME, l->y.path, l->y.nodes[pv].line, "gemm.path",
                                "unknown matrix path '%s' (mma_sync, wgmma, tcgen05, mfma, systolic)", path);
            note_given(l, "gemm", "path", l->y.nodes[pv].line);
        }
        note_given(l, "gemm", "issue_efficiency", l->y.nodes[yconf_lookup(&l->y, g, "issue_efficiency")].line);
        char acc[16] = "";
        if (yconf_get_string(&l->y, g, "gemm", "accumulate", 0, acc, sizeof acc) != 0)
            return -1;
        if (acc[0] != '\0') {
            int av = yconf_lookup(&l->y, g, "accumulate");
            if (strcmp(acc, "fp16") != 0 && strcmp(acc, "fp32") != 0)
                return diag_set(l->y.d, DIAG_E_UNKNOWN_NAME, l->y.path, l->y.nodes[av].line, "gemm.accumulate",
                                "expected fp16 (16-bit GEMMs accumulate in 16 bits) or fp32, got '%s'", acc);
            s->gemm_acc16 = strcmp(acc, "fp16") == 0;
            note_given(l, "gemm", "accumulate", l->y.nodes[av].line);
        }
        if (read_count(l, g, "gemm", "dequant_kernel_min_m", 1e9, &s->gemm_deq_kernel_min_m) != 0)
            return -1;
        long inflight = -1;
        if (read_count(l, g, "gemm", "float_matvec_inflight_bytes_per_unit", STACK_MAX_INFLIGHT,
                       &inflight) != 0)
            return -1;
        if (inflight > 0)
            s->gemm_matvec_inflight = (double)inflight;
    }
    return 0;
}

/* One of two words into *out (0 for no, 1 for yes; absent: stays -1). */
/* The serving engine's scheduler (docs/serving.md): the bounds are vLLM's own checks' orders
 * of magnitude, wide enough for any engine's setting */
static int read_serving(struct sload *l, int root)
{
    int v = yconf_section(&l->y, root, "serving", 0);
    if (v == -2)
        return 0;
    return v < 0 || yconf_check_keys(&l->y, v, "serving", serving_keys) != 0 ||
                   read_choice(l, v, "scheduler", "continuous", "static", &l->s->serve_static) != 0 ||
                   read_count(l, v, "serving", "max_num_seqs", 65536, &l->s->serve_max_num_seqs) != 0 ||
                   read_count(l, v, "serving", "max_num_batched_tokens", 1 << 24, &l->s->serve_max_batched_tokens) != 0 ||
                   read_count(l, v, "serving", "block_size", 65535, &l->s->serve_block_size) != 0 ||
                   read_choice(l, v, "chunked_prefill", "false", "true", &l->s->serve_chunked_prefill) != 0 ||
                   read_choice(l, v, "capacity_policy", "max_utilization", "guaranteed_no_evict",
                               &l->s->serve_no_evict) != 0 ||
                   read_count(l, v, "serving", "scheduler_steps", 1024, &l->s->serve_scheduler_steps) != 0 ||
                   read_us(l, v, "serving", "host_step_us", &l->s->serve_host_step_s) != 0 ||
                   read_us(l, v, "serving", "host_seq_us", &l->s->serve_host_seq_s) != 0
               ? -1 : 0;
}

/* Every value given has a source, and every source a value. */
static int check_sources(struct sload *l, int root)
{
    int src = yconf_section(&l->y, root, "sources", 1);
    if (src < 0)
        return -1;
    for (unsigned i = 0; i < l->ngiven; i++) {
        int v = yconf_lookup(&l->y, src, l->given[i].key);
        if (v < 0 || l->y.nodes[v].kind != YCONF_SCALAR || strlen(yconf_text(&l->y, v)) < 8)
            return diag_set(l->y.d, DIAG_E_MISSING, l->y.path, l->given[i].line, l->given[i].key,
                            "no source: say where the value comes from under sources: ('%s: WHERE')",
                            l->given[i].key);
    }
    for (int k = l->y.nodes[src].first; k >= 0; k = yconf_next_key(&l->y, k)) {
        unsigned i = 0;
        while (i < l->ngiven && !yconf_key_eq(&l->y, k, l->given[i].key))
            i++;
        if (i == l->ngiven)
            return diag_set(l->y.d, DIAG_E_UNKNOWN_KEY, l->y.path, l->y.nodes[k].line, "sources",
                            "'%s' names no value the stack gives", yconf_text(&l->y, k));
    }
    return 0;
}

int stack_load(const char *path, struct stack *s, struct diag *d)
{
    memset(s, 0, sizeof *s);
    s->kernel_dispatch_s = s->step_s = s->launch_gap_s = s->coll_call_s = -1;
    s->gemm_path = -1;
    s->gemm_deq_kernel_min_m = -1;
    s->gemm_matvec_inflight = -1;
    s->prefill_ubatch = -1;
    s->serve_static = s->serve_chunked_prefill = s->serve_no_evict = -1;
    s->coll_one_ring = -1;
    s->serve_max_num_seqs = s->serve_max_batched_tokens = s->serve_block_size = s->serve_scheduler_steps = -1;
    s->serve_host_step_s = s->serve_host_seq_s = -1;
    snprintf(s->path, sizeof s->path, "%s", path);
    struct sload l;
    memset(&l, 0, sizeof l);
    l.s = s;
    l.y.path = path;
    l.y.d = d;
    int root = yconf_parse_file(&l.y, NULL);
    int rc = root < 0 || yconf_check_keys(&l.y, root, "", top_keys) != 0 || read_top(&l, root) != 0 ||
                     read_sections(&l, root) != 0 || read_serving(&l, root) != 0 ||
                     check_sources(&l, root) != 0
                 ? -1 : 0;
    yconf_free(&l.y);
    return rc;
}

/* The slot of key in s and the factor from the file's unit to the slot's
 * (us to s), or NULL with *d. */
static double *stack_slot(struct stack *s, const char *key, double *unit, struct diag *d)
{
    static const struct { const char *key; size_t off; } us[] = {
        {"host.kernel_dispatch_us", offsetof(struct stack, kernel_dispatch_s)},
        {"host.step_us", offsetof(struct stack, step_s)},
        {"host.launch_gap_us", offsetof(struct stack, launch_gap_s)},
        {"collectives.call_overhead_us", offsetof(struct stack, coll_call_s)},
    };
    *unit = 1.0;
    if (strcmp(key, "gemm.float_matvec_inflight_bytes_per_unit") == 0) {
        *unit = 0.0;    /* bytes: neither a time nor a share */
        return &s->gemm_matvec_inflight;
    }
    for (size_t i = 0; i < sizeof us / sizeof us[0]; i++)
        if (strcmp(key, us[i].key) == 0) {
            *unit = 1e-6;
            return (double *)(void *)((char *)s + us[i].off);
        }
    if (strcmp(key, "gemm.issue_efficiency") == 0 && s->gemm_issue >= 0)
        return &s->gemm_issue;
    if (strncmp(key, "gemm.issue_efficiency.", 22) == 0 && s->gemm_issue < 0)
        for (int p = 0; p < MP_COUNT; p++)
            if (strcmp(key + 22, path_names[p]) == 0)
                return &s->gemm_issue_by[p];
    return diag_set(d, DIAG_E_UNKNOWN_KEY, s->path, 0, key,
                    "not a number stack %s gives that can be set or fitted (host.kernel_dispatch_us, "
                    "host.step_us, host.launch_gap_us, collectives.call_overhead_us, "
                    "gemm.float_matvec_inflight_bytes_per_unit, gemm.issue_efficiency, or "
                    "gemm.issue_efficiency.GENERATION where the file "
                    "gives them by generation)", s->name),
           (double *)NULL;
}

int stack_get_value(const struct stack *s, const char *key, double *v, struct diag *d)
{
    double unit;
    struct stack c = *s;    /* stack_slot takes a writable one */
    double *x = stack_slot(&c, key, &unit, d);
    if (x == NULL)
        return -1;
    if (!(*x > 0) && !(*x == 0 && unit != 1.0 && unit != 0.0))
        return diag_set(d, DIAG_E_MISSING, s->path, 0, key, "stack %s gives no %s to start from",
                        s->name, key);
    *v = unit != 0.0 ? *x / unit : *x;
    return 0;
}

int stack_set_value(struct stack *s, const char *key, double v, struct diag *d)
{
    double unit;
    double *x = stack_slot(s, key, &unit, d);
    if (x == NULL)
        return -1;
    if (unit == 0.0) {      /* bytes in flight: a whole number of them */
        if (!(v >= 1 && v <= STACK_MAX_INFLIGHT))
            return diag_set(d, DIAG_E_RANGE, s->path, 0, key, "%g is out of range (1 to %.0f bytes)", v,
                            (double)STACK_MAX_INFLIGHT);
        *x = floor(v + 0.5);
        return 0;
    }
    if (!(v >= 0) || (unit == 1.0 && !(v > 0 && v <= 1)) || v > 1e6)
        return diag_set(d, DIAG_E_RANGE, s->path, 0, key, "%g is out of range (%s)", v,
                        unit == 1.0 ? "a share, above 0 and at most 1" : "0 to 1e6 us");
    *x = v * unit;
    return 0;
}

/* *d, from a stack's own check, blamed on the set c that gave the value. */
static int blame_set(struct diag *d, const struct cfg_set *c)
{
    snprintf(d->file, sizeof d->file, "%s", c->origin);
    d->line = 0;
    snprintf(d->field, sizeof d->field, "%s", c->key);
    return -1;
}

int stack_apply_sets(struct stack *s, const struct cfg_sets *sets, struct diag *d)
{
    for (unsigned k = 0; sets != NULL && k < sets->n; k++) {
        const struct cfg_set *c = &sets->set[k];
        if (!cfg_set_is_stack(c))
            continue;
        const char *key = c->key + 6;
        double v, f;
        if (c->value[0] == 'x') {
            if (num_parse(c->value + 1, &f) != 0 || !(f > 0))
                return diag_set(d, DIAG_E_RANGE, c->origin, 0, c->key, "'%s': a factor above 0 of a value "
                                "the stack gives", c->value);
            if (stack_get_value(s, key, &v, d) != 0)
                return blame_set(d, c);
            v *= f;
        } else if (num_parse(c->value, &v) != 0) {
            return diag_set(d, DIAG_E_TYPE, c->origin, 0, c->key, "'%s' is not a number", c->value);
        }
        if (stack_set_value(s, key, v, d) != 0)
            return blame_set(d, c);
    }
    return 0;
}

enum matrix_path stack_native_path(const struct hw_config *c)
{
    int best = 0;
    for (int p = 1; p < MP_COUNT; p++)
        if (c->matrix_path_frac[p] >= c->matrix_path_frac[best])
            best = p;
    return (enum matrix_path)best;
}

/* The share of its path's rate s's GEMM kernels reach on chip c (< 0: the
 * stack gives none for c's generation). */
static double stack_issue(const struct stack *s, const struct hw_config *c)
{
    if (s->gemm_issue >= 0)
        return s->gemm_issue;
    double x = s->gemm_issue_by[stack_native_path(c)];
    return x > 0 ? x : -1;
}

/* 0 if s can run on chip c, else -1 with the reason in *d. */
static int stack_check_chip(const struct stack *s, const struct hw_config *c, struct diag *d)
{
    unsigned i = 0;
    while (i < s->nruns_on && strcmp(s->runs_on[i], c->family) != 0)
        i++;
    if (i == s->nruns_on)
        return diag_set(d, DIAG_E_UNSUPPORTED, s->path, 0, "runs_on",
                        "stack %s runs on %s%s%s, not on %s (family %s)", s->name, s->runs_on[0],
                        s->nruns_on > 1 ? " and others" : "", "", c->name, c->family);
    if (s->gemm_path >= 0 && s->gemm_path < MP_COUNT && !(c->matrix_path_frac[s->gemm_path] > 0))
        return diag_set(d, DIAG_E_UNSUPPORTED, s->path, 0, "gemm.path",
                        "stack %s's GEMM kernels issue %s, which %s cannot (its compute.matrix_paths)",
                        s->name, path_names[s->gemm_path], c->name);
    if (s->gemm_path >= 0 && stack_issue(s, c) < 0)
        return diag_set(d, DIAG_E_UNSUPPORTED, s->path, 0, "gemm.issue_efficiency",
                        "stack %s gives no efficiency for %s's generation (%s, its own newest matrix path)",
                        s->name, c->name, path_names[stack_native_path(c)]);
    if (s->has_decode_attn && s->decode_attn == ATTN_MMHA && c->sa_rows)
        return diag_set(d, DIAG_E_UNSUPPORTED, s->path, 0, "attention.decode",
                        "stack %s's decode kernel (mmha) is a CUDA kernel; %s is a systolic chip", s->name,
                        c->name);
    return 0;
}

static int name_cmp(const void *a, const void *b)
{
    return strcmp((const char *)a, (const char *)b);
}

/* The stack names in dir (NAME.yaml), sorted, comma-separated into buf;
 * with c, only those that run on its family. */
static void list_stacks(const char *dir, const struct hw_config *c, char *buf, size_t size)
{
    char names[64][STACK_NAME_MAX];
    size_t n = 0;
    buf[0] = '\0';
    DIR *dp = opendir(dir);
    if (dp == NULL)
        return;
    for (struct dirent *e; (e = readdir(dp)) != NULL && n < 64;) {
        size_t len = strlen(e->d_name);
        if (len > 5 && len - 5 < STACK_NAME_MAX && strcmp(e->d_name + len - 5, ".yaml") == 0)
            snprintf(names[n++], STACK_NAME_MAX, "%.*s", (int)(len - 5), e->d_name);
    }
    closedir(dp);
    qsort(names, n, sizeof names[0], name_cmp);
    size_t used = 0;
    for (size_t i = 0; i < n && used < size; i++) {
        if (c != NULL) {
            char path[1024];
            struct stack s;
            struct diag d;
            memset(&d, 0, sizeof d);
            snprintf(path, sizeof path, "%s/%s.yaml", dir, names[i]);
            if (stack_load(path, &s, &d) != 0 || stack_check_chip(&s, c, &d) != 0)
                continue;
        }
        used += (size_t)snprintf(buf + used, size - used, "%s%s", used ? ", " : "", names[i]);
    }
}

int stack_find(const char *dir, const char *name, struct stack *s, struct diag *d)
{
    char path[1024];
    if (strlen(name) == 0 || strlen(name) >= STACK_NAME_MAX || strchr(name, '/') != NULL) {
        return diag_set(d, DIAG_E_RANGE, "", 0, "stack", "'%s': a stack's name, as in %s/NAME.yaml", name, dir);
    }
    snprintf(path, sizeof path, "%s/%s.yaml", dir, name);
    FILE *f = fopen(path, "rb");
    if (f == NULL) {
        char known[1024];
        list_stacks(dir, NULL, known, sizeof known);
        return diag_set(d, DIAG_E_UNKNOWN_NAME, "", 0, "stack", "unknown stack '%s' (known in %s: %s)", name,
                        dir, known[0] ? known : "none");
    }
    fclose(f);
    return stack_load(path, s, d);
}

int stack_apply_chip(const struct stack *s, struct hw_config *c, const char *dir, struct diag *d)
{
    if (stack_check_chip(s, c, d) != 0) {
        if (dir != NULL) {
            char ok[1024];
            list_stacks(dir, c, ok, sizeof ok);
            size_t u = strlen(d->msg);
            snprintf(d->msg + u, sizeof d->msg - u, "; stacks that run on %s: %s", c->name,
                     ok[0] ? ok : "none");
        }
        return -1;
    }
    if (s->kernel_dispatch_s >= 0)
        c->host_dispatch_ps = (uint64_t)(s->kernel_dispatch_s * 1e12 + 0.5);
    if (s->step_s >= 0)
        c->host_step_ps = (uint64_t)(s->step_s * 1e12 + 0.5);
    if (s->launch_gap_s >= 0)
        c->launch_overhead_ps = (uint64_t)(s->launch_gap_s * 1e12 + 0.5);
    if (s->coll_call_s >= 0)
        c->coll_overhead_ps = (uint64_t)(s->coll_call_s * 1e12 + 0.5);
    if (s->coll_one_ring >= 0)
        c->coll_one_ring = s->coll_one_ring;
    if (s->gemm_path >= 0) {
        enum matrix_path p = s->gemm_path < MP_COUNT ? (enum matrix_path)s->gemm_path : stack_native_path(c);
        c->gemm_rate_frac = c->matrix_path_frac[p] * stack_issue(s, c);
        /* thread-block clusters and TMA multicast come with the TMA paths only */
        c->gemm_no_tma = p != MP_WGMMA && p != MP_TCGEN05;
    }
    if (s->gemm_deq_kernel_min_m > 0)
        c->gemm_deq_kernel_min_m = (uint32_t)s->gemm_deq_kernel_min_m;
    if (s->gemm_matvec_inflight > 0)
        c->gemv_inflight_bytes_per_unit = s->gemm_matvec_inflight;
    for (unsigned t = 0; s->gemm_acc16 && t < DT_COUNT; t++)   /* where the chip has a rate for it */
        if (c->acc16_matrix_flops_per_cycle[t] > 0)
            c->matrix_flops_per_cycle[t] = c->acc16_matrix_flops_per_cycle[t];
    return 0;
}

void stack_apply_llm(const struct stack *s, struct llm_step *st, int framework_given, int attn_given)
{
    if (s->has_kernels && !framework_given)
        st->framework = s->kernels;
    if (s->prefill_ubatch > 0 && st->ubatch == 0 && st->phase == LLM_PREFILL)
        st->ubatch = (uint32_t)s->prefill_ubatch;
    if (attn_given)
        return;
    if (st->phase == LLM_DECODE && s->has_decode_attn)
        st->attn = s->decode_attn;
    else if (st->phase != LLM_DECODE && s->has_prefill_attn)
        st->attn = s->prefill_attn;
    else if (s->has_kernels && !framework_given)
        st->attn = llm_framework_attn(s->kernels);
}
