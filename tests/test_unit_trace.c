/* test_unit_trace.c: jsondoc line numbers, trace loading (every kind, the
 * defaults, numeric ids, deterministic topological order) and the
 * load -> write -> load round trip. */
#include <dirent.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "jsondoc.h"
#include "test.h"
#include "util.h"
#include "trace.h"

static char tmpdir[64];

/* ---- jsondoc ------------------------------------------------------------ */

static void test_jsondoc_lines_fixed(void)
{
    const char *text =
        "{\n"                                   /* 1 */
        "  \"a\": 1,\n"                         /* 2 */
        "  \"b\": [true, false,\n"              /* 3 */
        "        null, \"s\\\"t: r\\\\\"],\n"   /* 4 */
        "  \"c\"\n"                             /* 5 */
        "    :\n"                               /* 6 */
        "    {\"d\": \"multi\n"                 /* 7: raw newline inside a string */
        "line\", \"k\": \"v\"},\n"              /* 8 */
        "  \"e\": -1.5e3, \"f\": {}, \"g\": [\n" /* 9 */
        "\n"                                    /* 10 */
        "  ]\n"                                 /* 11 */
        "}\n";                                  /* 12 */
    struct jsondoc doc;
    struct diag d;
    memset(&d, 0, sizeof d);
    int rc = jsondoc_parse_string(text, "fixed.json", &doc, &d);
    CHECK_EQ_INT(rc, 0);
    if (rc != 0) {
        diag_print(&d, stderr);
        return;
    }
    const cJSON *r = doc.root;
    CHECK_EQ_INT(jsondoc_line(&doc, r), 1);
    CHECK_EQ_INT(jsondoc_line(&doc, cJSON_GetObjectItemCaseSensitive(r, "a")), 2);
    const cJSON *b = cJSON_GetObjectItemCaseSensitive(r, "b");
    CHECK_EQ_INT(jsondoc_line(&doc, b), 3);
    CHECK_EQ_INT(jsondoc_line(&doc, cJSON_GetArrayItem(b, 0)), 3);
    CHECK_EQ_INT(jsondoc_line(&doc, cJSON_GetArrayItem(b, 1)), 3);
    CHECK_EQ_INT(jsondoc_line(&doc, cJSON_GetArrayItem(b, 2)), 4);
    CHECK_EQ_INT(jsondoc_line(&doc, cJSON_GetArrayItem(b, 3)), 4);
    const cJSON *c = cJSON_GetObjectItemCaseSensitive(r, "c");
    CHECK_EQ_INT(jsondoc_line(&doc, c), 7);
    CHECK_EQ_INT(jsondoc_line(&doc, cJSON_GetObjectItemCaseSensitive(c, "d")), 7);
    CHECK_EQ_INT(jsondoc_line(&doc, cJSON_GetObjectItemCaseSensitive(c, "k")), 8);
    CHECK_EQ_INT(jsondoc_line(&doc, cJSON_GetObjectItemCaseSensitive(r, "e")), 9);
    CHECK_EQ_INT(jsondoc_line(&doc, cJSON_GetObjectItemCaseSensitive(r, "f")), 9);
    CHECK_EQ_INT(jsondoc_line(&doc, cJSON_GetObjectItemCaseSensitive(r, "g")), 9);
    CHECK_EQ_INT(jsondoc_line(&doc, NULL), 0);
    CHECK(strcmp(doc.name, "fixed.json") == 0);
    jsondoc_free(&doc);
    jsondoc_free(&doc); /* safe twice */
}

/* Random documents in which every container opens with a number equal to
 * its own line ([N, ...] or {"L": N, ...}) and every number is its line, so
 * the recorded line of every value can be checked. */
struct gen {
    char *buf;
    size_t len, cap;
    int line;
    uint64_t rng;
};

static unsigned gen_rand(struct gen *g, unsigned n)
{
    g->rng = g->rng * UINT64_C(6364136223846793005) + UINT64_C(1442695040888963407);
    return (unsigned)(g->rng >> 33) % n;
}

static void gen_put(struct gen *g, const char *s)
{
    size_t n = strlen(s);
    if (g->len + n + 1 > g->cap) {
        g->cap = (g->len + n + 1) * 2;
        g->buf = realloc(g->buf, g->cap);
        if (g->buf == NULL)
            abort();
    }
    memcpy(g->buf + g->len, s, n + 1);
    g->len += n;
    for (; *s; s++)
        if (*s == '\n')
            g->line++;
}

static void gen_blank(struct gen *g)
{
    static const char *const blanks[] = {"", " ", "\n", "\t\n  ", "\r\n", "\n\n"};
    gen_put(g, blanks[gen_rand(g, 6)]);
}

static void gen_value(struct gen *g, int depth)
{
    char num[32];
    unsigned what = depth > 4 ? gen_rand(g, 3) : gen_rand(g, 5);
    if (what == 0) {
        snprintf(num, sizeof num, "%d", g->line);
        gen_put(g, num);
    } else if (what == 1) {
        /* strings that look like keys, numbers and brackets: "x\":{[1" */
        static const char *const strs[] = {"\"x\\\":{[1\"", "\"a\\\\\"", "\"multi\nline\"",
                                           "\"\\u00e9 ]}\"", "\"-12e5\""};
        gen_put(g, strs[gen_rand(g, 5)]);
    } else if (what == 2) {
        static const char *const lits[] = {"true", "false", "null"};
        gen_put(g, lits[gen_rand(g, 3)]);
    } else if (what == 3) {
        snprintf(num, sizeof num, "[%d", g->line);
        gen_put(g, num);
        unsigned n = gen_rand(g, 4);
        for (unsigned i = 0; i < n; i++) {
            gen_blank(g);
            gen_put(g, ",");
            gen_blank(g);
            gen_value(g, depth + 1);
        }
        gen_blank(g);
        gen_put(g, "]");
    } else {
        snprintf(num, sizeof num, "{\"L\": %d", g->line);
        gen_put(g, num);
        unsigned n = gen_rand(g, 4);
        for (unsigned i = 0; i < n; i++) {
            gen_put(g, ",");
            gen_blank(g);
            snprintf(num, sizeof num, "\"k%u\"", i);
            gen_put(g, num);
            gen_blank(g);
            gen_put(g, ":");
            gen_blank(g);
            gen_value(g, depth + 1);
        }
        gen_blank(g);
        gen_put(g, "}");
    }
}

/* Returns the number of values whose line was wrong. */
static int check_lines(const struct jsondoc *doc, const cJSON *it)
{
    int bad = 0;
    int line = jsondoc_line(doc, it);
    if (cJSON_IsNumber(it) && (it->string == NULL || strcmp(it->string, "L") != 0))
        bad += line != (int)it->valuedouble;
    if (cJSON_IsArray(it) || cJSON_IsObject(it)) {
        const cJSON *first = it->child;
        bad += first == NULL || line != (int)first->valuedouble;
    }
    if (line <= 0)
        bad++;
    for (const cJSON *c = it->child; c != NULL; c = c->next)
        bad += check_lines(doc, c);
    return bad;
}

static void test_jsondoc_lines_random(void)
{
    struct gen g = {NULL, 0, 0, 1, 42};
    int failures = 0;
    for (int round = 0; round < 300; round++) {
        g.len = 0;
        g.line = 1;
        gen_put(&g, "");
        if (round % 3 == 0)
            gen_put(&g, "\xEF\xBB\xBF");
        gen_blank(&g);
        gen_put(&g, "[");
        char num[16];
        snprintf(num, sizeof num, "%d", g.line);
        gen_put(&g, num);
        for (int i = 0; i < 4; i++) {
            gen_put(&g, ",");
            gen_blank(&g);
            gen_value(&g, 0);
        }
        gen_put(&g, "]");
        gen_blank(&g);
        struct jsondoc doc;
        struct diag d;
        if (jsondoc_parse_string(g.buf, "gen", &doc, &d) != 0) {
            failures++;
            fprintf(stderr, "generated document rejected: %s\n%s\n", d.msg, g.buf);
            continue;
        }
        int bad = check_lines(&doc, doc.root);
        if (bad) {
            fprintf(stderr, "round %d: %d wrong lines in\n%s\n", round, bad, g.buf);
            failures++;
        }
        jsondoc_free(&doc);
    }
    free(g.buf);
    CHECK_EQ_INT(failures, 0);
}

static void test_jsondoc_getters(void)
{
    struct jsondoc doc;
    struct diag d;
    int rc = jsondoc_parse_string("{\"u\": 12, \"f\": 1.5,\n \"s\": \"hi\", \"b\": true,\n"
                                  " \"neg\": -0, \"big\": 1e999}",
                                  "g.json", &doc, &d);
    CHECK_EQ_INT(rc, 0);
    if (rc != 0)
        return;
    const cJSON *r = doc.root;
    uint64_t u = 0;
    double x = 0;
    const char *s = NULL;
    int b = 0;
    CHECK_EQ_INT(jsondoc_get_uint(&doc, cJSON_GetObjectItem(r, "u"), "p", "u", 1, 100, &u, &d), 0);
    CHECK_EQ_INT(u, 12);
    CHECK_EQ_INT(jsondoc_get_uint(&doc, cJSON_GetObjectItem(r, "f"), "p", "f", 1, 100, &u, &d), -1);
    CHECK_EQ_INT(d.code, DIAG_E_RANGE);
    CHECK_EQ_INT(d.line, 1);
    CHECK(strcmp(d.field, "p.f") == 0);
    CHECK_EQ_INT(jsondoc_get_uint(&doc, cJSON_GetObjectItem(r, "s"), "", "s", 1, 100, &u, &d), -1);
    CHECK_EQ_INT(d.code, DIAG_E_TYPE);
    CHECK_EQ_INT(d.line, 2);
    CHECK(strcmp(d.field, "s") == 0);
    CHECK_STR_CONTAINS(d.msg, "\"hi\"");
    CHECK_EQ_INT(jsondoc_get_uint(&doc, cJSON_GetObjectItem(r, "u"), NULL, "u", 13, 100, &u, &d), -1);
    CHECK_EQ_INT(d.code, DIAG_E_RANGE);
    CHECK_EQ_INT(jsondoc_get_number(&doc, cJSON_GetObjectItem(r, "f"), "", "f", 0, 10, &x, &d), 0);
    CHECK_NEAR_REL(x, 1.5, 0);
    CHECK_EQ_INT(jsondoc_get_number(&doc, cJSON_GetObjectItem(r, "neg"), "", "neg", 0, 10, &x, &d), 0);
    CHECK(x == 0.0 && !signbit(x));
    CHECK_EQ_INT(jsondoc_get_number(&doc, cJSON_GetObjectItem(r, "big"), "", "big", 0, HUGE_VAL, &x, &d), -1);
    CHECK_EQ_INT(d.code, DIAG_E_RANGE);
    CHECK_EQ_INT(d.line, 3);
    CHECK_EQ_INT(jsondoc_get_string(&doc, cJSON_GetObjectItem(r, "s"), "", "s", 2, &s, &d), 0);
    CHECK(s != NULL && strcmp(s, "hi") == 0);
    CHECK_EQ_INT(jsondoc_get_string(&doc, cJSON_GetObjectItem(r, "s"), "", "s", 1, &s, &d), -1);
    CHECK_EQ_INT(d.code, DIAG_E_RANGE);
    CHECK_EQ_INT(jsondoc_get_bool(&doc, cJSON_GetObjectItem(r, "b"), "", "b", &b, &d), 0);
    CHECK_EQ_INT(b, 1);
    CHECK_EQ_INT(jsondoc_get_bool(&doc, cJSON_GetObjectItem(r, "u"), "", "u", &b, &d), -1);
    CHECK_EQ_INT(d.code, DIAG_E_TYPE);
    jsondoc_free(&doc);
}

/* ---- traces ------------------------------------------------------------- */

/* Line N of the file is all_kinds[N - 1]. */
static const char *const all_kinds[] = {
    "{\"strata_trace\": 1,",
    " \"name\": \"unit: all kinds\",",
    " \"meta\": {\"generator\": \"hand\", \"tokens\": 128, \"nested\": [1, {\"x\": null}]},",
    " \"devices\": [\"gpu0\", \"gpu1\"],",
    " \"ops\": [",
    /* 6 */ "  {\"id\": \"emb\", \"kind\": \"embedding\", \"dtype\": \"bf16\", \"tokens\": 128, \"dim\": 4096},",
    /* 7 */ "  {\"id\": 7, \"name\": \"qkv proj\", \"kind\": \"gemm\", \"dtype\": \"bf16\", \"deps\": [\"emb\"],"
            " \"m\": 128, \"n\": 12288, \"k\": 4096},",
    /* 8 */ "  {\"id\": \"attn\", \"kind\": \"attention\", \"dtype\": \"fp16\", \"deps\": [7], \"batch\": 2,"
            " \"heads\": 32, \"kv_heads\": 8, \"q_len\": 128, \"kv_len\": 1024, \"head_dim\": 128,"
            " \"causal\": true, \"impl\": \"naive\", \"measured_s\": 0.000125},",
    /* 9 */ "  {\"id\": \"sm\", \"kind\": \"softmax\", \"dtype\": \"fp32\", \"deps\": [\"attn\", \"7\"],"
            " \"rows\": 4096, \"cols\": 1024, \"stream\": 2, \"device\": \"gpu1\"},",
    /* 10 */ "  {\"id\": \"ln\", \"kind\": \"norm\", \"dtype\": \"fp32\", \"rows\": 128, \"cols\": 4096},",
    /* 11 */ "  {\"id\": \"red\", \"kind\": \"reduction\", \"dtype\": \"fp32\", \"rows\": 1, \"cols\": 1e3},",
    /* 12 */ "  {\"id\": \"act\", \"kind\": \"elementwise\", \"dtype\": \"bf16\", \"elements\": 524288,"
             " \"flops_per_element\": 0.1},",
    /* 13 */ "  {\"id\": \"h2d\", \"kind\": \"memcpy\", \"bytes\": 1048576, \"direction\": \"h2d\"},",
    /* 14 */ "  {\"id\": \"misc\", \"kind\": \"generic\", \"flops\": 1.5e9, \"bytes\": 0, \"deps\": [\"zz\"]},",
    /* 15 */ "  {\"id\": \"zz\", \"kind\": \"gemm\", \"dtype\": \"int8\", \"m\": 1, \"n\": 1, \"k\": 1,"
             " \"batch\": 4},",
    /* 16 */ "  {\"id\": 100, \"kind\": \"attention\", \"dtype\": \"fp8_e4m3\", \"batch\": 1, \"heads\": 8,",
    /* 17 */ "   \"q_len\": 1, \"kv_len\": 4096, \"head_dim\": 64},",
    /* 18 */ "  {\"id\": \"copy back\", \"kind\": \"memcpy\", \"dtype\": \"fp32\", \"bytes\": 4,"
             " \"direction\": \"d2h\", \"deps\": [1e2], \"stream\": 1},",
    /* 19 */ "  {\"id\": \"ew2\", \"kind\": \"elementwise\", \"dtype\": \"int4\", \"elements\": 3,"
             " \"inputs\": 0, \"outputs\": 2}",
    " ]}",
};

static char *join_lines(const char *const *lines, size_t n)
{
    size_t len = 1;
    for (size_t i = 0; i < n; i++)
        len += strlen(lines[i]) + 1;
    char *s = calloc(len, 1);
    if (s == NULL)
        abort();
    for (size_t i = 0; i < n; i++) {
        strcat(s, lines[i]);
        strcat(s, "\n");
    }
    return s;
}

static int find_op(const struct trace *t, const char *id)
{
    for (uint32_t i = 0; i < t->nops; i++)
        if (strcmp(op_id(t, &t->ops[i]), id) == 0)
            return (int)i;
    return -1;
}

static void check_all_kinds(const struct trace *t, int check_lines_too)
{
    CHECK_EQ_INT(t->nops, 14);
    if (t->nops != 14)
        return;
    CHECK(strcmp(t->name, "unit: all kinds") == 0);
    CHECK(t->tokens == 128.0);
    CHECK_EQ_INT(t->ndevices, 2);
    CHECK(strcmp(t->devices[0], "gpu0") == 0);
    CHECK(strcmp(t->devices[1], "gpu1") == 0);
    const struct op *o = t->ops;
    if (check_lines_too) {
        for (uint32_t i = 0; i < 11; i++)
            CHECK_EQ_INT(o[i].line, (int)i + 6);
        CHECK_EQ_INT(o[11].line, 18);
        CHECK_EQ_INT(o[12].line, 19);
        CHECK_EQ_INT(o[13].line, 20);
    }

    /* defaults */
    CHECK(strcmp(op_id(t, &o[0]), "emb") == 0);
    CHECK(strcmp(op_name(t, &o[0]), "emb") == 0);
    CHECK_EQ_INT(o[0].kind, OP_EMBEDDING);
    CHECK_EQ_INT(o[0].dtype, DT_BF16);
    CHECK_EQ_INT(o[0].device, 0);
    CHECK_EQ_INT(o[0].stream, 0);
    CHECK_EQ_INT(o[0].ndeps, 0);
    CHECK(o[0].measured_s == -1.0);
    CHECK_EQ_INT(o[0].u.emb.tokens, 128);
    CHECK_EQ_INT(o[0].u.emb.dim, 4096);

    /* numeric id and gemm default batch */
    CHECK(strcmp(op_id(t, &o[1]), "7") == 0);
    CHECK(strcmp(op_name(t, &o[1]), "qkv proj") == 0);
    CHECK_EQ_INT(o[1].kind, OP_GEMM);
    CHECK_EQ_INT(o[1].u.gemm.m, 128);
    CHECK_EQ_INT(o[1].u.gemm.n, 12288);
    CHECK_EQ_INT(o[1].u.gemm.k, 4096);
    CHECK_EQ_INT(o[1].u.gemm.batch, 1);
    CHECK_EQ_INT(o[1].ndeps, 1);
    CHECK_EQ_INT(t->deps[o[1].deps_off], 0);

    /* attention, every field given */
    CHECK_EQ_INT(o[2].kind, OP_ATTENTION);
    CHECK_EQ_INT(o[2].dtype, DT_FP16);
    CHECK_EQ_INT(o[2].u.attn.batch, 2);
    CHECK_EQ_INT(o[2].u.attn.heads, 32);
    CHECK_EQ_INT(o[2].u.attn.kv_heads, 8);
    CHECK_EQ_INT(o[2].u.attn.q_len, 128);
    CHECK_EQ_INT(o[2].u.attn.kv_len, 1024);
    CHECK_EQ_INT(o[2].u.attn.head_dim, 128);
    CHECK_EQ_INT(o[2].u.attn.causal, 1);
    CHECK_EQ_INT(o[2].u.attn.impl, ATTN_NAIVE);
    CHECK(o[2].measured_s == 0.000125);
    CHECK_EQ_INT(o[2].ndeps, 1);
    CHECK_EQ_INT(t->deps[o[2].deps_off], 1); /* numeric dep 7 */

    /* softmax on the second device; "7" as a string names the numeric id 7 */
    CHECK_EQ_INT(o[3].kind, OP_SOFTMAX);
    CHECK_EQ_INT(o[3].device, 1);
    CHECK_EQ_INT(o[3].stream, 2);
    CHECK_EQ_INT(o[3].u.rc.rows, 4096);
    CHECK_EQ_INT(o[3].u.rc.cols, 1024);
    CHECK_EQ_INT(o[3].ndeps, 2);
    CHECK_EQ_INT(t->deps[o[3].deps_off], 2);
    CHECK_EQ_INT(t->deps[o[3].deps_off + 1], 1);

    CHECK_EQ_INT(o[4].kind, OP_NORM);
    CHECK_EQ_INT(o[4].u.rc.cols, 4096);
    CHECK_EQ_INT(o[5].kind, OP_REDUCTION);
    CHECK_EQ_INT(o[5].u.rc.rows, 1);
    CHECK_EQ_INT(o[5].u.rc.cols, 1000); /* 1e3 is a whole number */

    CHECK_EQ_INT(o[6].kind, OP_ELEMENTWISE);
    CHECK_EQ_INT(o[6].u.ew.elements, 524288);
    CHECK_EQ_INT(o[6].u.ew.inputs, 1);
    CHECK_EQ_INT(o[6].u.ew.outputs, 1);
    CHECK(o[6].u.ew.flops_per_element == 0.1);

    CHECK_EQ_INT(o[7].kind, OP_MEMCPY);
    CHECK_EQ_INT(o[7].dtype, DT_INT8); /* default for memcpy */
    CHECK_EQ_INT(o[7].u.copy.bytes, 1048576);
    CHECK_EQ_INT(o[7].u.copy.dir, MEMCPY_H2D);

    CHECK_EQ_INT(o[8].kind, OP_GENERIC);
    CHECK_EQ_INT(o[8].dtype, DT_INT8);
    CHECK(o[8].u.gen.flops == 1.5e9);
    CHECK(o[8].u.gen.bytes == 0.0);
    CHECK_EQ_INT(o[8].ndeps, 1);
    CHECK_EQ_INT(t->deps[o[8].deps_off], 9); /* a dep on a later op */

    CHECK_EQ_INT(o[9].u.gemm.batch, 4);
    CHECK_EQ_INT(o[9].dtype, DT_INT8);

    /* attention defaults */
    CHECK(strcmp(op_id(t, &o[10]), "100") == 0);
    CHECK_EQ_INT(o[10].dtype, DT_FP8_E4M3);
    CHECK_EQ_INT(o[10].u.attn.kv_heads, 8);
    CHECK_EQ_INT(o[10].u.attn.causal, 0);
    CHECK_EQ_INT(o[10].u.attn.impl, ATTN_FLASH);

    CHECK(strcmp(op_id(t, &o[11]), "copy back") == 0);
    CHECK_EQ_INT(o[11].dtype, DT_FP32);
    CHECK_EQ_INT(o[11].u.copy.dir, MEMCPY_D2H);
    CHECK_EQ_INT(o[11].stream, 1);
    CHECK_EQ_INT(t->deps[o[11].deps_off], 10); /* 1e2 names id 100 */

    CHECK_EQ_INT(o[12].dtype, DT_INT4);
    CHECK_EQ_INT(o[12].u.ew.inputs, 0);
    CHECK_EQ_INT(o[12].u.ew.outputs, 2);
    CHECK(o[12].u.ew.flops_per_element == 1.0);
    CHECK(find_op(t, "ew2") == 12);

    /* Kahn with the lowest ready index first:
     * emb(0) 7(1) attn(2) sm(3) ln(4) red(5) act(6) h2d(7) zz(9) misc(8) 100(10) copy(11) ew2(12) */
    static const uint32_t want[] = {0, 1, 2, 3, 4, 5, 6, 7, 9, 8, 10, 11, 12};
    CHECK_EQ_INT(t->ndeps, 6);
    for (uint32_t i = 0; i < 13; i++)
        CHECK_EQ_INT(t->topo[i], want[i]);
}

static const char *const all_kinds_tail[] = {
    /* a 14th op so the array above stays readable */
    "{\"id\": \"last\", \"kind\": \"embedding\", \"dtype\": \"fp64\", \"tokens\": 1, \"dim\": 2}",
};

static char *all_kinds_text(void)
{
    char *base = join_lines(all_kinds, sizeof all_kinds / sizeof all_kinds[0]);
    /* insert the tail op before the closing " ]}" */
    char *end = strstr(base, "\n ]}\n");
    size_t need = strlen(base) + strlen(all_kinds_tail[0]) + 16;
    char *s = calloc(need, 1);
    if (s == NULL || end == NULL)
        abort();
    memcpy(s, base, (size_t)(end - base));
    strcat(s, ",\n  ");
    strcat(s, all_kinds_tail[0]);
    strcat(s, end);
    free(base);
    return s;
}

static int ops_equal(const struct trace *a, const struct trace *b)
{
    if (a->nops != b->nops || a->ndeps != b->ndeps || a->ndevices != b->ndevices)
        return 0;
    if (strcmp(a->name, b->name) != 0)
        return 0;
    for (uint32_t i = 0; i < a->ndevices; i++)
        if (strcmp(a->devices[i], b->devices[i]) != 0)
            return 0;
    for (uint32_t i = 0; i < a->nops; i++) {
        const struct op *x = &a->ops[i], *y = &b->ops[i];
        if (strcmp(op_id(a, x), op_id(b, y)) || strcmp(op_name(a, x), op_name(b, y)) ||
            strcmp(op_kernel(a, x), op_kernel(b, y)) || x->kind != y->kind ||
            x->dtype != y->dtype || x->device != y->device || x->stream != y->stream ||
            x->ndeps != y->ndeps || x->deps_off != y->deps_off || x->measured_s != y->measured_s ||
            memcmp(&x->u, &y->u, sizeof x->u) != 0) {
            fprintf(stderr, "op %u differs after the round trip\n", i);
            return 0;
        }
        for (uint32_t j = 0; j < x->ndeps; j++)
            if (a->deps[x->deps_off + j] != b->deps[y->deps_off + j])
                return 0;
        if (a->topo[i] != b->topo[i])
            return 0;
    }
    return 1;
}

static void test_load_all_kinds_and_round_trip(void)
{
    char path[128], out1[128], out2[128];
    snprintf(path, sizeof path, "%s/all.json", tmpdir);
    snprintf(out1, sizeof out1, "%s/out1.json", tmpdir);
    snprintf(out2, sizeof out2, "%s/out2.json", tmpdir);
    char *text = all_kinds_text();
    tu_write_file(path, text);
    free(text);

    struct trace t, t2, t3;
    struct diag d;
    memset(&d, 0, sizeof d);
    int rc = trace_load(path, &t, &d);
    CHECK_EQ_INT(rc, 0);
    if (rc != 0) {
        diag_print(&d, stderr);
        return;
    }
    check_all_kinds(&t, 1);
    CHECK(strcmp(t.path, path) == 0);
    CHECK(strcmp(op_id(&t, &t.ops[13]), "last") == 0);
    CHECK_EQ_INT(t.topo[13], 13);

    CHECK_EQ_INT(trace_write(&t, out1, &d), 0);
    rc = trace_load(out1, &t2, &d);
    CHECK_EQ_INT(rc, 0);
    if (rc != 0) {
        diag_print(&d, stderr);
        trace_free(&t);
        return;
    }
    check_all_kinds(&t2, 0);
    CHECK(ops_equal(&t, &t2));
    /* one op per line, after the 5 header lines */
    for (uint32_t i = 0; i < t2.nops; i++)
        CHECK_EQ_INT(t2.ops[i].line, (int)i + 6);

    /* writing the reloaded trace gives the same bytes */
    CHECK_EQ_INT(trace_write(&t2, out2, &d), 0);
    char *b1 = tu_read_file(out1, NULL), *b2 = tu_read_file(out2, NULL);
    CHECK(b1 != NULL && b2 != NULL && strcmp(b1, b2) == 0);
    CHECK_STR_CONTAINS(b1, "\"flops_per_element\": 0.1, \"vector_bytes\": 16}");
    CHECK_STR_CONTAINS(b1, "\"measured_s\": 0.000125}");
    CHECK_STR_CONTAINS(b1, "\"cols\": 1000}");
    free(b1);
    free(b2);

    /* a name the loader would refuse (an importer's kernel name) is
     * written with U+FFFD for each bad byte, so the file loads again; a
     * valid multi-byte name is written as it is */
    uint32_t name0 = t2.ops[0].name_at;
    trace_op_set_name(&t2, 0, "k\xff\x1b[0m\xe2\x86\x92");
    CHECK_EQ_INT(trace_write(&t2, out2, &d), 0);
    rc = trace_load(out2, &t3, &d);
    CHECK_EQ_INT(rc, 0);
    if (rc == 0) {
        CHECK(strcmp(op_name(&t3, &t3.ops[0]), "k\xef\xbf\xbd\xef\xbf\xbd[0m\xe2\x86\x92") == 0);
        trace_free(&t3);
    } else {
        diag_print(&d, stderr);
    }
    t2.ops[0].name_at = name0;

    /* overwrite an existing file */
    CHECK_EQ_INT(trace_write(&t2, out1, &d), 0);
    CHECK_EQ_INT(trace_load(out1, &t3, &d), 0);
    CHECK(ops_equal(&t, &t3));
    trace_free(&t3);

    trace_free(&t);
    trace_free(&t2);
    trace_free(&t2); /* safe twice */
}

/* trace_load_text reads a text as trace_load reads the file (lines too),
 * and names it as told. */
static void test_load_text(void)
{
    char path[128];
    snprintf(path, sizeof path, "%s/all.json", tmpdir);
    char *text = all_kinds_text();
    tu_write_file(path, text);
    struct trace t, t2;
    struct diag d;
    memset(&d, 0, sizeof d);
    CHECK_EQ_INT(trace_load(path, &t, &d), 0);
    CHECK_EQ_INT(trace_load_text(text, "(in memory)", &t2, &d), 0);
    check_all_kinds(&t2, 1);
    CHECK(ops_equal(&t, &t2));
    CHECK(strcmp(t2.path, "(in memory)") == 0);
    trace_free(&t);
    trace_free(&t2);
    free(text);
    CHECK_EQ_INT(trace_load_text("{\"strata_trace\": 1, \"ops\": [\n{\"id\": \"a\", \"kind\": "
                                 "\"gemm\", \"dtype\": \"bf16\", \"m\": 0, \"n\": 1, \"k\": 1}]}",
                                 "text", &t, &d), -1);
    CHECK(strcmp(d.file, "text") == 0 && d.line == 2 && strcmp(d.field, "ops[0].m") == 0);
    CHECK_EQ_INT(trace_load_text("{\"strata_trace\": 1, \"ops\": [", "text", &t, &d), -1);
    CHECK(strcmp(d.file, "text") == 0);
}

/* A trace of nops GEMMs, one a line, "devices" after "ops", padded with
 * blanks to a size whose remainder by 4096 is pad_to (-1: none), into
 * path; the text is returned (free it).  bad_last: the last op's m is 0;
 * dup_last: the last op repeats the first's id. */
static char *big_trace(const char *path, int nops, int bad_last, int dup_last, long pad_to)
{
    struct sb { char *p; size_t n, cap; } b = {0};
    b.cap = (size_t)nops * 120 + 8192;
    b.p = calloc(b.cap, 1);
    b.n += (size_t)sprintf(b.p + b.n, "{\"strata_trace\": 1, \"ops\": [\n");
    for (int i = 0; i < nops; i++) {
        int last = i == nops - 1;
        char id[32];
        snprintf(id, sizeof id, "op%d", last && dup_last ? 0 : i);
        b.n += (size_t)sprintf(b.p + b.n, "%s{\"id\": \"%s\", \"kind\": \"gemm\", \"device\": \"d%d\", "
                               "\"dtype\": \"bf16\", \"m\": %d, \"n\": 64, \"k\": 64}\n",
                               i ? "," : "", id, i % 2, last && bad_last ? 0 : 64 + i % 7);
    }
    b.n += (size_t)sprintf(b.p + b.n, "],\n\"devices\": [\"d0\", \"d1\"]}");
    if (pad_to >= 0)
        while ((long)((b.n + 1) % 4096) != pad_to)
            b.p[b.n++] = ' ';
    b.p[b.n++] = '\n';
    b.p[b.n] = '\0';
    tu_write_bytes(path, b.p, b.n);
    return b.p;
}

/* A trace file of a MiB and more is mapped, not read, and given back to
 * the file's cache as it is read: it loads as the same text in memory
 * does, and its errors name the same line and field, whatever its size's
 * remainder by the page (a whole page's multiple is read instead). */
static void test_load_mapped(void)
{
    char path[128];
    snprintf(path, sizeof path, "%s/big.json", tmpdir);
    const int nops = 30000, last_line = 1 + nops;
    long pads[3] = {-1, 0, 17};
    for (int k = 0; k < 3; k++) {
        char *text = big_trace(path, nops, 0, 0, pads[k]);
        CHECK(strlen(text) > ((size_t)1 << 20));
        struct trace t, t2;
        struct diag d;
        memset(&d, 0, sizeof d);
        CHECK_EQ_INT(trace_load(path, &t, &d), 0);
        CHECK_EQ_INT(trace_load_text(text, path, &t2, &d), 0);
        CHECK(t.nops == (uint32_t)nops && t.ndevices == 2);
        CHECK(ops_equal(&t, &t2));
        CHECK_EQ_INT(t.ops[nops - 1].line, last_line);
        trace_free(&t);
        trace_free(&t2);
        free(text);
    }
    for (int dup = 0; dup < 2; dup++) {
        free(big_trace(path, nops, !dup, dup, 5));
        struct trace t;
        struct diag d;
        memset(&d, 0, sizeof d);
        CHECK_EQ_INT(trace_load(path, &t, &d), -1);
        CHECK(strcmp(d.file, path) == 0);
        CHECK_EQ_INT(d.line, last_line);
        char field[32];
        snprintf(field, sizeof field, "ops[%d].%s", nops - 1, dup ? "id" : "m");
        CHECK(strcmp(d.field, field) == 0);
        if (dup)
            CHECK_STR_CONTAINS(d.msg, "already used by ops[0] (line 2)");
    }
}

static void test_topo_lowest_index_first(void)
{
    /* A FIFO Kahn would give x z y; lowest-ready-first gives x y z. */
    const char *text =
        "{\"strata_trace\": 1, \"ops\": [\n"
        " {\"id\": \"x\", \"kind\": \"generic\", \"flops\": 1, \"bytes\": 0},\n"
        " {\"id\": \"y\", \"kind\": \"generic\", \"flops\": 1, \"bytes\": 0, \"deps\": [\"x\"]},\n"
        " {\"id\": \"z\", \"kind\": \"generic\", \"flops\": 1, \"bytes\": 0},\n"
        " {\"id\": \"w\", \"kind\": \"generic\", \"flops\": 1, \"bytes\": 0, \"deps\": [\"v\"]},\n"
        " {\"id\": \"v\", \"kind\": \"generic\", \"flops\": 1, \"bytes\": 0, \"deps\": [\"z\", \"y\"]}\n"
        "]}\n";
    char path[128];
    snprintf(path, sizeof path, "%s/topo.json", tmpdir);
    tu_write_file(path, text);
    struct trace t;
    int rc = tu_load_trace(path, &t);
    CHECK_EQ_INT(rc, 0);
    if (rc != 0)
        return;
    CHECK_EQ_INT(t.ndevices, 1);
    CHECK(strcmp(t.devices[0], "gpu0") == 0);
    CHECK_EQ_INT(t.name[0], '\0');
    CHECK(t.tokens == 0.0);
    static const uint32_t want[] = {0, 1, 2, 4, 3};
    for (uint32_t i = 0; i < 5; i++)
        CHECK_EQ_INT(t.topo[i], want[i]);
    trace_free(&t);
    /* every dep before its user: the file's order (found without the heap) */
    tu_write_file(path, "{\"strata_trace\": 1, \"ops\": [\n"
                        " {\"id\": \"x\", \"kind\": \"generic\", \"flops\": 1, \"bytes\": 0},\n"
                        " {\"id\": \"z\", \"kind\": \"generic\", \"flops\": 1, \"bytes\": 0},\n"
                        " {\"id\": \"y\", \"kind\": \"generic\", \"flops\": 1, \"bytes\": 0, \"deps\": [\"x\"]},\n"
                        " {\"id\": \"v\", \"kind\": \"generic\", \"flops\": 1, \"bytes\": 0, \"deps\": [\"z\", \"y\"]}\n"
                        "]}\n");
    rc = tu_load_trace(path, &t);
    CHECK_EQ_INT(rc, 0);
    if (rc != 0)
        return;
    for (uint32_t i = 0; i < 4; i++)
        CHECK_EQ_INT(t.topo[i], i);
    trace_free(&t);
}

/* The worked example in traces/README.md must load. */
static void test_readme_example(void)
{
    char *md = tu_read_file("traces/README.md", NULL);
    if (md == NULL) {
        printf("skip: traces/README.md not found (run from the repository root)\n");
        return;
    }
    char *start = strstr(md, "```json\n");
    char *end = start ? strstr(start + 8, "```") : NULL;
    CHECK(start != NULL && end != NULL);
    if (start == NULL || end == NULL) {
        free(md);
        return;
    }
    *end = '\0';
    char path[128];
    snprintf(path, sizeof path, "%s/readme.json", tmpdir);
    tu_write_file(path, start + 8);
    free(md);
    struct trace t;
    int rc = tu_load_trace(path, &t);
    CHECK_EQ_INT(rc, 0);
    if (rc != 0)
        return;
    CHECK_EQ_INT(t.nops, 7);
    CHECK(t.tokens == 4.0);
    CHECK_EQ_INT(t.ops[0].kind, OP_MEMCPY);
    CHECK_EQ_INT(t.ops[0].stream, 1);
    CHECK_EQ_INT(t.ops[0].line, 5);
    CHECK_EQ_INT(t.ops[3].u.attn.kv_heads, 4);
    CHECK_EQ_INT(t.ops[3].u.attn.impl, ATTN_FLASH);
    CHECK_EQ_INT(t.ops[3].line, 9);
    trace_free(&t);
}

static void test_kind_names(void)
{
    for (int k = 0; k < OP_KIND_COUNT; k++) {
        enum op_kind back = OP_KIND_COUNT;
        CHECK_EQ_INT(op_kind_from_name(op_kind_name((enum op_kind)k), &back), 0);
        CHECK_EQ_INT(back, k);
    }
    enum op_kind x;
    CHECK_EQ_INT(op_kind_from_name("conv", &x), -1);
    /* names match in any case (issue 16.2): GEMM is gemm */
    CHECK_EQ_INT(op_kind_from_name("GEMM", &x), 0);
    CHECK_EQ_INT(x, OP_GEMM);
    CHECK(strcmp(op_kind_name(OP_KIND_COUNT), "?") == 0);
    CHECK(strcmp(op_kind_name(OP_ATTENTION), "attention") == 0);
}

/* ---- the ops' strings (trace_str.c) ------------------------------------- */

/* A trace of the ops in ops_json (a JSON list's items), or -1 with *d. */
static int load_ops(const char *ops_json, struct trace *t, struct diag *d)
{
    char *text = malloc(strlen(ops_json) + 64);
    sprintf(text, "{\"strata_trace\": 1, \"ops\": [\n%s]}\n", ops_json);
    int rc = trace_load_text(text, "ops.json", t, d);
    free(text);
    return rc;
}

/* Ids, names and kernels live in the trace's arena: an op is small, a name
 * that is its id and a repeated kernel are stored once, the loaders keep
 * the lengths (and messages) of the char arrays they replace, builders cut
 * as snprintf into those arrays did, and a written trace reads back with
 * the same strings. */
static void test_op_strings(void)
{
    /* 344 bytes with the three arrays; the strings are 12 bytes of offsets
     * now (the rest: the attention shape's 72-byte union and 8 doubles'
     * alignment) */
    printf("sizeof(struct op) = %zu\n", sizeof(struct op));
    CHECK(sizeof(struct op) <= 136);

    char id63[64], id64[65], name95[96], name96[97], k63[64], k64[65], ops[1024];
    memset(id63, 'i', 63), id63[63] = '\0';
    memset(id64, 'j', 64), id64[64] = '\0';
    memset(name95, 'n', 95), name95[95] = '\0';
    memset(name96, 'm', 96), name96[96] = '\0';
    memset(k63, 'k', 63), k63[63] = '\0';
    memset(k64, 'l', 64), k64[64] = '\0';
    const char *gemm = "\"kind\": \"gemm\", \"dtype\": \"bf16\", \"m\": 8, \"n\": 8, \"k\": 8";
    snprintf(ops, sizeof ops,
             "{\"id\": \"%s\", %s},\n"
             "{\"id\": \"b\", \"name\": \"b\", \"kernel\": \"%s\", %s},\n"
             "{\"id\": \"c\", \"name\": \"%s\", \"kernel\": \"%s\", %s},\n"
             "{\"id\": 7, \"kernel\": \"sm90_gemm\", %s},\n"
             "{\"id\": \"e\", \"kernel\": \"sm90_gemm\", %s}\n",
             id63, gemm, k63, gemm, name95, k63, gemm, gemm, gemm);
    struct trace t;
    struct diag d;
    CHECK_EQ_INT(load_ops(ops, &t, &d), 0);
    const struct op *o = t.ops;
    CHECK(strcmp(op_id(&t, &o[0]), id63) == 0);
    CHECK(o[0].name_at == o[0].id_at && strcmp(op_name(&t, &o[0]), id63) == 0);
    CHECK(o[0].kernel_at == 0 && strcmp(op_kernel(&t, &o[0]), "") == 0);
    CHECK(o[1].name_at == o[1].id_at);              /* "name" equal to the id */
    CHECK(strcmp(op_name(&t, &o[2]), name95) == 0 && strcmp(op_kernel(&t, &o[2]), k63) == 0);
    CHECK(o[1].kernel_at == o[2].kernel_at && o[3].kernel_at == o[4].kernel_at);
    CHECK(strcmp(op_id(&t, &o[3]), "7") == 0 && strcmp(op_kernel(&t, &o[4]), "sm90_gemm") == 0);

    /* written and read back: the same strings */
    char path[128];
    snprintf(path, sizeof path, "%s/strings.json", tmpdir);
    CHECK_EQ_INT(trace_write(&t, path, &d), 0);
    struct trace t2;
    CHECK_EQ_INT(trace_load(path, &t2, &d), 0);
    CHECK(ops_equal(&t, &t2));
    CHECK(t2.ops[0].name_at == t2.ops[0].id_at);
    trace_free(&t2);

    /* a builder's strings are cut as snprintf into the arrays cut them,
     * and may come from the trace's own arena while it grows */
    char big[200];
    memset(big, 'x', sizeof big - 1), big[sizeof big - 1] = '\0';
    trace_op_set_id(&t, 1, big);
    trace_op_set_name(&t, 1, big);
    trace_op_set_kernel(&t, 1, big);
    CHECK_EQ_INT((int)strlen(op_id(&t, &t.ops[1])), TRACE_ID_MAX - 1);
    CHECK_EQ_INT((int)strlen(op_name(&t, &t.ops[1])), TRACE_NAME_MAX - 1);
    CHECK_EQ_INT((int)strlen(op_kernel(&t, &t.ops[1])), TRACE_KERNEL_MAX - 1);
    CHECK(strncmp(op_name(&t, &t.ops[1]), big, TRACE_NAME_MAX - 1) == 0);
    for (int k = 0; k < 2000; k++) {
        trace_op_set_name(&t, 2, op_name(&t, &t.ops[1]));   /* its own arena, cut again */
        trace_op_set_id(&t, 3, op_name(&t, &t.ops[1]));
    }
    CHECK_EQ_INT((int)strlen(op_id(&t, &t.ops[3])), TRACE_ID_MAX - 1);
    CHECK(strncmp(op_id(&t, &t.ops[3]), big, TRACE_ID_MAX - 1) == 0);
    CHECK(strcmp(op_name(&t, &t.ops[2]), op_name(&t, &t.ops[1])) == 0);
    trace_free(&t);
    CHECK(t.str == NULL && strcmp(trace_str(&t, 0), "") == 0);

    /* one byte more is refused, with the loader's message */
    snprintf(ops, sizeof ops, "{\"id\": \"%s\", %s}\n", id64, gemm);
    CHECK_EQ_INT(load_ops(ops, &t, &d), -1);
    CHECK(strcmp(d.field, "ops[0].id") == 0);
    CHECK_STR_CONTAINS(d.msg, "is too long: 64 bytes, at most 63 allowed");
    snprintf(ops, sizeof ops, "{\"id\": \"a\", \"name\": \"%s\", %s}\n", name96, gemm);
    CHECK_EQ_INT(load_ops(ops, &t, &d), -1);
    CHECK_STR_CONTAINS(d.msg, "is too long: 96 bytes, at most 95 allowed");
    snprintf(ops, sizeof ops, "{\"id\": \"a\", \"kernel\": \"%s\", %s}\n", k64, gemm);
    CHECK_EQ_INT(load_ops(ops, &t, &d), -1);
    CHECK_STR_CONTAINS(d.msg, "is too long: 64 bytes, at most 63 allowed");
}

int main(void)
{
    if (tu_mkdtemp(tmpdir, sizeof tmpdir, "strata-unit-trace") != 0)
        return 1;
    test_jsondoc_lines_fixed();
    test_jsondoc_lines_random();
    test_jsondoc_getters();
    test_kind_names();
    test_load_all_kinds_and_round_trip();
    test_load_text();
    test_load_mapped();
    test_topo_lowest_index_first();
    test_readme_example();
    test_op_strings();
    tu_rmtree(tmpdir);
    TEST_MAIN_END();
}
