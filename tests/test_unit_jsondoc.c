/* test_unit_jsondoc.c: a trace's ops are parsed one at a time
 * (jsondoc_load_split) and that must not be visible: for every text the
 * split read and the whole-document read (jsondoc_load) agree on the
 * values, on the line of each value, and on the diagnostic when the text
 * is not JSON.  Hand-made cases for the skim's corners (brackets and
 * quotes inside strings, the key nested or given twice, empty and trailing
 * elements), then thousands of one-byte mutations of a small trace. */
#include <cjson/cJSON.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "jsondoc.h"
#include "test.h"
#include "util.h"

static char dir[64];
static int cases;

/* Every value of a and b in document order: the same print, the same line. */
static int same_lines(const struct jsondoc *da, const cJSON *a, const struct jsondoc *db,
                      const cJSON *b)
{
    if (jsondoc_line(da, a) != jsondoc_line(db, b))
        return 0;
    const cJSON *x = a->child, *y = b->child;
    for (; x != NULL && y != NULL; x = x->next, y = y->next)
        if (!same_lines(da, x, db, y))
            return 0;
    return x == NULL && y == NULL;
}

/* The same tree node for node, as cJSON builds it: types, keys, strings,
 * numbers to the bit, children in order and the head's prev the last
 * (split elements of plain JSON are read without cJSON, jsondoc.c). */
static int same_tree(const cJSON *a, const cJSON *b)
{
    if ((a->type & 0xFF) != (b->type & 0xFF) || (a->string == NULL) != (b->string == NULL) ||
        (a->string != NULL && strcmp(a->string, b->string) != 0) ||
        (a->valuestring == NULL) != (b->valuestring == NULL) ||
        (a->valuestring != NULL && strcmp(a->valuestring, b->valuestring) != 0) ||
        memcmp(&a->valuedouble, &b->valuedouble, sizeof a->valuedouble) != 0)
        return 0;
    if ((a->child == NULL) != (b->child == NULL))
        return 0;
    const cJSON *x = a->child, *y = b->child, *lx = NULL, *ly = NULL;
    for (; x != NULL && y != NULL; lx = x, ly = y, x = x->next, y = y->next)
        if (!same_tree(x, y))
            return 0;
    if (x != NULL || y != NULL)
        return 0;
    return a->child == NULL || (a->child->prev == lx && b->child->prev == ly);
}

/* The text read both ways must agree; returns 1 if it is JSON. */
static int agree(const char *text, size_t n, const char *what)
{
    char path[128];
    snprintf(path, sizeof path, "%s/t.json", dir);
    tu_write_bytes(path, text, n);
    cases++;
    struct jsondoc whole;
    struct diag dw, ds;
    memset(&dw, 0, sizeof dw);
    memset(&ds, 0, sizeof ds);
    int rw = jsondoc_load(path, &whole, &dw);
    struct jsondoc_split sp;
    int rs = jsondoc_load_split(path, "ops", &sp, &ds);
    int before = test_failed_;
    if (rs == 0 && !sp.whole) {
        /* the top level has the array, empty; the elements come one by one */
        const cJSON *wops = rw == 0 ? cJSON_GetObjectItemCaseSensitive(whole.root, "ops") : NULL;
        const cJSON *we = wops != NULL ? wops->child : NULL;
        CHECK(cJSON_GetArraySize(cJSON_GetObjectItemCaseSensitive(sp.top.root, "ops")) == 0);
        for (uint32_t i = 0; i < sp.count && rs == 0; i++, we = we ? we->next : NULL) {
            cJSON *e = jsondoc_split_elem(&sp, i, &ds);
            if (e == NULL) {
                rs = -1;
                break;
            }
            if (rw == 0)
                CHECK(we != NULL);
            if (we != NULL) {
                char *pa = cJSON_PrintUnformatted(e), *pb = cJSON_PrintUnformatted(we);
                CHECK(strcmp(pa, pb) == 0);
                CHECK(same_tree(e, we));
                free(pa);
                free(pb);
                CHECK(same_lines(&sp.top, e, &whole, we));
            }
            jsondoc_split_done(&sp, e);
        }
        if (rs == 0 && rw == 0)
            CHECK(we == NULL);
        /* and the rest of the top level */
        if (rs == 0 && rw == 0) {
            const cJSON *x = sp.top.root->child, *y = whole.root->child;
            for (; x != NULL && y != NULL; x = x->next, y = y->next)
                if (strcmp(x->string, "ops") != 0)
                    CHECK(same_lines(&sp.top, x, &whole, y));
        }
    } else if (rs == 0) {
        CHECK(same_lines(&sp.top, sp.top.root, &whole, whole.root));
    }
    CHECK_EQ_INT(rs, rw);
    if (rs != 0 && rw != 0) {
        CHECK_EQ_INT(ds.line, dw.line);
        CHECK(strcmp(ds.msg, dw.msg) == 0);
    }
    if (test_failed_ != before)
        fprintf(stderr, "  ^ %s: whole %d (line %d: %s), split %d (line %d: %s)\n  text: %.*s\n",
                what, rw, dw.line, dw.msg, rs, ds.line, ds.msg, (int)(n < 300 ? n : 300), text);
    if (rw == 0)
        jsondoc_free(&whole);
    jsondoc_split_free(&sp);
    return rw == 0;
}

static void agree_s(const char *text, int want_json)
{
    CHECK_EQ_INT(agree(text, strlen(text), text), want_json);
}

int main(void)
{
    if (tu_mkdtemp(dir, sizeof dir, "strata-jsondoc"))
        return 1;
    /* the skim's corners */
    agree_s("{\"strata_trace\": 1, \"ops\": []}", 1);
    agree_s("{\"ops\": [{\"id\": \"a\"}], \"strata_trace\": 1}", 1);
    agree_s("{\"meta\": {\"ops\": [1, 2]},\n \"ops\": [\n  {\"id\": \"a]\\\"},{\", \"deps\": [\"x\", [1, {\"y\": \"]\"}]]},\n"
            "  7, \"s\", null, true, [[]], {}\n ],\n \"z\": \"\\\\\"}", 1);
    agree_s("{\"ops\": [1], \"ops\": [2]}", 1);                     /* twice: the tree's case */
    agree_s("{\"ops\": {\"a\": 1}}", 1);                            /* not an array */
    agree_s("{\"ops\": [1,\n 2,\n]}", 0);                           /* a trailing comma */
    agree_s("{\"ops\": [,1]}", 0);
    agree_s("{\"ops\": [1 2]}", 0);
    agree_s("{\"ops\": [{\"a\": 1}\n {\"b\": 2}]}", 0);             /* a missing comma */
    agree_s("{\"ops\": [{\"a\": 1},\n {\"b\" 2}]}", 0);             /* malformed inside */
    agree_s("{\"ops\": [{\"a\": 1}]\n \"x\": 1}", 0);               /* malformed after */
    agree_s("{\"x\": tru, \"ops\": [1]}", 0);                       /* malformed before */
    agree_s("{\"ops\": [1, 2", 0);                                  /* cut short */
    agree_s("{\"ops\": [\"a\\\"]\"]}", 1);
    agree_s("\xEF\xBB\xBF{\"ops\": [1]}", 1);                       /* a BOM */
    agree_s("[{\"ops\": [1]}]", 1);                                 /* not an object */
    agree_s("", 0);
    /* numbers and strings at the edge of what is read without cJSON */
    agree_s("{\"ops\": [{\"a\": -0, \"b\": 1E5, \"c\": 1e+5, \"d\": 0.5e-3, \"e\": 1e400,\n"
            " \"f\": -1e-400, \"g\": 123456789012345678901234567890123456789012345678901234567890,\n"
            " \"h\": 2147483648, \"i\": -2147483649, \"j\": 0.1, \"k\": 9007199254740993}]}", 1);
    agree_s("{\"ops\": [{\"a\": 01}]}", 1);
    agree_s("{\"ops\": [{\"a\": 1.}]}", 1);
    agree_s("{\"ops\": [{\"a\": .5}]}", 0);
    agree_s("{\"ops\": [{\"a\": +1}]}", 0);
    agree_s("{\"ops\": [{\"a\": 1e}]}", 0);
    agree_s("{\"ops\": [{\"a\": 1-2}]}", 0);
    agree_s("{\"ops\": [{\"a\": -}]}", 0);
    agree_s("{\"ops\": [{\"a\": \"\\u00e9\\n\", \"b\": \"\xc3\xa9\", \"c\": \"\t\"}]}", 1);
    agree_s("{\"ops\": [{\"a\": tru}]}", 0);
    agree_s("{\"ops\": [{\"a\": nullx}]}", 0);
    agree_s("{\"ops\": [{\"a\": 1, \"a\": 2, \"\": {}, \"b\": []}, [], {}]}", 1);
    agree_s("{\"ops\": [{\"a\": [[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[1]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]}]}", 1);
    const char nul[] = "{\"ops\": [1, \0 2]}";
    CHECK_EQ_INT(agree(nul, sizeof nul - 1, "NUL in the array"), 0);

    /* one-byte mutations of a small multi-line trace: deleted, replaced or
     * inserted, with the bytes that matter to JSON's structure */
    const char *base =
        "{\n  \"strata_trace\": 1,\n  \"devices\": [\"gpu0\", \"gpu1\"],\n  \"ops\": [\n"
        "    {\"id\": \"a\", \"kind\": \"gemm\", \"dtype\": \"bf16\", \"m\": 64, \"n\": 64, \"k\": 64},\n"
        "    {\"id\": 2, \"kind\": \"attention\", \"deps\": [\"a\"],\n     \"name\": \"x[1]{\\\"q\\\"}\"},\n"
        "    {\"id\": \"c\", \"deps\": [\"a\", 2], \"m\": -1.5e3, \"f\": [true, false, null]}\n"
        "  ],\n  \"meta\": {\"tokens\": 7}\n}\n";
    size_t n = strlen(base);
    static const char bytes[] = "{}[],:\"\\ \n1a-e.0E+\t\x01\xc3";
    char *buf = malloc(n + 2);
    uint64_t st = 0x9E3779B97F4A7C15ull;
    int json = 0;
    for (int it = 0; it < 4000; it++) {
        st ^= st << 13;
        st ^= st >> 7;
        st ^= st << 17;
        size_t at = (size_t)(st % n);
        char c = bytes[(st >> 32) % (sizeof bytes - 1)];
        size_t m = 0;
        switch ((st >> 48) % 3) {
        case 0:                     /* delete */
            memcpy(buf, base, at);
            memcpy(buf + at, base + at + 1, n - at - 1);
            m = n - 1;
            break;
        case 1:                     /* replace */
            memcpy(buf, base, n);
            buf[at] = c;
            m = n;
            break;
        default:                    /* insert */
            memcpy(buf, base, at);
            buf[at] = c;
            memcpy(buf + at + 1, base + at, n - at);
            m = n + 1;
            break;
        }
        json += agree(buf, m, "mutation");
    }
    free(buf);
    printf("%d texts read both ways, %d of the mutations still JSON\n", cases, json);
    CHECK(json > 100 && json < 3900);   /* both kinds were exercised */
    tu_rmtree(dir);
    TEST_MAIN_END();
}
