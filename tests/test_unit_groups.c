/* Collective groups as a trace gives them (sim/work/tload_dev.c,
 * traces/README.md): device lists in the op or named once in the top-level
 * "groups", how equal lists share one group, the pairing of the ranks'
 * collectives, a written trace read back, and the errors of bad groups. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "run.h"
#include "test.h"
#include "trace.h"
#include "util.h"

static char dir[256];

/* A trace's text, or one of these devices and ops, loaded from dir:
 * 0, or the loader's rc with its message in msg. */
static int load_text(const char *text, struct trace *t, char *msg, size_t n)
{
    return tu_trace_text(dir, text, t, msg, n);
}

static int load(const char *devices, const char *ops, struct trace *t, char *msg, size_t n)
{
    return tu_trace_ops(dir, devices, ops, t, msg, n);
}

static void test_load_errors(void)
{
    struct trace t;
    char msg[600];
    static const struct {
        const char *what, *devices, *ops, *expect;
    } bad[] = {
        {"group of one", "\"a\", \"b\"",
         "{\"id\": \"x\", \"kind\": \"collective\", \"device\": \"a\", \"collective\": \"all_reduce\", "
         "\"group\": [\"a\"], \"bytes\": 64}",
         "at least two devices"},
        {"device not in its group", "\"a\", \"b\", \"c\"",
         "{\"id\": \"x\", \"kind\": \"collective\", \"device\": \"c\", \"collective\": \"all_reduce\", "
         "\"group\": [\"a\", \"b\"], \"bytes\": 64}",
         "not in its group"},
        {"unknown device in group", "\"a\", \"b\"",
         "{\"id\": \"x\", \"kind\": \"collective\", \"device\": \"a\", \"collective\": \"all_reduce\", "
         "\"group\": [\"a\", \"z\"], \"bytes\": 64}",
         "unknown device \"z\""},
        {"device twice", "\"a\", \"b\"",
         "{\"id\": \"x\", \"kind\": \"collective\", \"device\": \"a\", \"collective\": \"all_reduce\", "
         "\"group\": [\"a\", \"a\"], \"bytes\": 64}",
         "listed twice"},
        {"partner missing", "\"a\", \"b\"",
         "{\"id\": \"x\", \"kind\": \"collective\", \"device\": \"a\", \"collective\": \"all_reduce\", "
         "\"group\": [\"a\", \"b\"], \"bytes\": 64}",
         "every member must issue each one"},
        {"partners differ", "\"a\", \"b\"",
         "{\"id\": \"x\", \"kind\": \"collective\", \"device\": \"a\", \"collective\": \"all_reduce\", "
         "\"group\": [\"a\", \"b\"], \"bytes\": 64},\n"
         "{\"id\": \"y\", \"kind\": \"collective\", \"device\": \"b\", \"collective\": \"all_reduce\", "
         "\"group\": [\"a\", \"b\"], \"bytes\": 128}",
         "their bytes differ"},
        {"unknown collective", "\"a\", \"b\"",
         "{\"id\": \"x\", \"kind\": \"collective\", \"device\": \"a\", \"collective\": \"allreduce\", "
         "\"group\": [\"a\", \"b\"], \"bytes\": 64}",
         "unknown collective \"allreduce\""},
        {"direct all_reduce", "\"a\", \"b\"",
         "{\"id\": \"x\", \"kind\": \"collective\", \"device\": \"a\", \"collective\": \"all_reduce\", "
         "\"group\": [\"a\", \"b\"], \"bytes\": 64, \"algo\": \"direct\"}",
         "all_to_all and all_gather only"},
        {"fixed_s", "\"a\", \"b\"",
         "{\"id\": \"x\", \"kind\": \"collective\", \"device\": \"a\", \"collective\": \"all_reduce\", "
         "\"group\": [\"a\", \"b\"], \"bytes\": 64, \"fixed_s\": 0.001}",
         "generic op with fixed_s"},
        {"root of an all_reduce", "\"a\", \"b\"",
         "{\"id\": \"x\", \"kind\": \"collective\", \"device\": \"a\", \"collective\": \"all_reduce\", "
         "\"group\": [\"a\", \"b\"], \"bytes\": 64, \"root\": \"a\"}",
         "only a broadcast or a send_recv has a root"},
        {"all_gather size", "\"a\", \"b\", \"c\"",
         "{\"id\": \"x\", \"kind\": \"collective\", \"device\": \"a\", \"collective\": \"all_gather\", "
         "\"group\": [\"a\", \"b\", \"c\"], \"bytes\": 64}",
         "divisible by 3"},
        {"group not a list", "\"a\", \"b\"",
         "{\"id\": \"x\", \"kind\": \"collective\", \"device\": \"a\", \"collective\": \"all_reduce\", "
         "\"group\": \"a,b\", \"bytes\": 64}",
         "must be a list of device names"},
    };
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        msg[0] = '\0';
        int rc = load(bad[i].devices, bad[i].ops, &t, msg, sizeof msg);
        CHECK(rc != 0);
        CHECK_STR_CONTAINS(msg, bad[i].expect);
        CHECK_STR_CONTAINS(msg, "t.json:");
        printf("  %-24s -> %s\n", bad[i].what, msg);
        if (rc == 0)
            trace_free(&t);
    }
}

/* Groups as the loader keeps them: one a distinct list, in its order.
 * The loader tries each group against the one before it first (the
 * same group is the common case); a different order, a shorter list, a
 * longer one and a return to an earlier group must still come out as the
 * hash of every group says, and a device listed twice after a group it
 * matches up to there is still an error. */
static void test_group_reuse(void)
{
    static const char *const seq[] = {"\"a\", \"b\", \"c\", \"d\"",
                                      "\"d\", \"c\", \"b\", \"a\"",
                                      "\"a\", \"b\", \"c\", \"d\"",
                                      "\"a\", \"b\", \"c\""};
    static const unsigned want[] = {0, 1, 0, 2};
    char ops[8192] = "";
    size_t used = 0;
    const char *devs = "abcd";
    for (unsigned dv = 0; dv < 4; dv++)
        for (unsigned k = 0; k < 4; k++) {
            if (k == 3 && dv == 3)
                continue;       /* d is not in the last group */
            used += (size_t)snprintf(ops + used, sizeof ops - used,
                                     "%s{\"id\": \"%c%u\", \"kind\": \"collective\", "
                                     "\"device\": \"%c\", \"collective\": \"all_reduce\", "
                                     "\"group\": [%s], \"bytes\": 1024}",
                                     used ? ",\n" : "", devs[dv], k, devs[dv], seq[k]);
        }
    struct trace t;
    char msg[600] = "";
    int rc = load("\"a\", \"b\", \"c\", \"d\"", ops, &t, msg, sizeof msg);
    CHECK_EQ_INT(rc, 0);
    if (rc != 0) {
        fprintf(stderr, "%s\n", msg);
        return;
    }
    CHECK_EQ_INT(t.ngroups, 3);
    for (uint32_t i = 0; i < t.nops; i++)
        CHECK_EQ_INT(t.ops[i].u.coll.group, want[i % 4]);
    CHECK_EQ_INT(t.groups[1].n, 4);
    CHECK_EQ_INT(t.group_dev[t.groups[1].off], 3);      /* d first */
    CHECK_EQ_INT(t.groups[2].n, 3);
    trace_free(&t);
    /* the group before lists a, b, c, d; this one a, b, b */
    const char *dup =
        "{\"id\": \"a0\", \"kind\": \"collective\", \"device\": \"a\", \"collective\": \"all_reduce\", "
        "\"group\": [\"a\", \"b\", \"c\", \"d\"], \"bytes\": 1024},\n"
        "{\"id\": \"a1\", \"kind\": \"collective\", \"device\": \"a\", \"collective\": \"all_reduce\", "
        "\"group\": [\"a\", \"b\", \"b\"], \"bytes\": 1024}";
    rc = load("\"a\", \"b\", \"c\", \"d\"", dup, &t, msg, sizeof msg);
    CHECK(rc != 0);
    CHECK(strstr(msg, "listed twice") != NULL);
    if (rc == 0)
        trace_free(&t);
}

/* Named groups (the top-level "groups"): an op that names one loads as
 * the op that lists it would, first use first, so the run is the same to
 * the bit; the writer names groups of more than 8 devices and reads back
 * what it wrote; a bad "groups" or an unknown name is an error at its
 * line. */
static void test_named_groups(void)
{
    static const char *const devs12 =
        "\"g0\", \"g1\", \"g2\", \"g3\", \"g4\", \"g5\", \"g6\", \"g7\", \"g8\", \"g9\", \"g10\", \"g11\"";
    static const char *const all12 =
        "[\"g0\", \"g1\", \"g2\", \"g3\", \"g4\", \"g5\", \"g6\", \"g7\", \"g8\", \"g9\", \"g10\", \"g11\"]";
    static const char *const half = "[\"g0\", \"g1\", \"g2\", \"g3\", \"g4\", \"g5\"]";
    /* per rank: an all-reduce over all 12, then one over its half */
    char inl[16384] = "", nam[16384] = "";
    size_t ui = 0, un = 0;
#define NG_AR "%s{\"id\": \"a%u\", \"kind\": \"collective\", \"device\": \"g%u\", " \
              "\"collective\": \"all_reduce\", \"group\": %s, \"bytes\": 1048576}"
#define NG_HALF ",\n{\"id\": \"h%u\", \"kind\": \"collective\", \"device\": \"g%u\", " \
                "\"deps\": [\"a%u\"], \"collective\": \"all_reduce\", \"group\": %s, " \
                "\"bytes\": 65536}"
    for (unsigned r = 0; r < 12; r++) {
        ui += (size_t)snprintf(inl + ui, sizeof inl - ui, NG_AR, r ? ",\n" : "", r, r, all12);
        un += (size_t)snprintf(nam + un, sizeof nam - un, NG_AR, r ? ",\n" : "", r, r, "\"dp\"");
        if (r < 6) {
            ui += (size_t)snprintf(inl + ui, sizeof inl - ui, NG_HALF, r, r, r, half);
            un += (size_t)snprintf(nam + un, sizeof nam - un, NG_HALF, r, r, r, "\"lo\"");
        }
    }
#undef NG_AR
#undef NG_HALF
    size_t cap = 40000;
    char *text = malloc(cap);
    if (text == NULL)
        abort();
    struct trace a, b, c;
    char msg[600] = "";
    snprintf(text, cap, "{\"strata_trace\": 1, \"devices\": [%s], \"ops\": [\n%s]}", devs12, inl);
    int rc = load_text(text, &a, msg, sizeof msg);
    CHECK_EQ_INT(rc, 0);
    /* "groups" after "ops", a group no op names, "lo" defined before "dp" */
    snprintf(text, cap, "{\"strata_trace\": 1, \"devices\": [%s], \"ops\": [\n%s],\n"
             "\"groups\": {\"unused\": [\"g3\", \"g2\"], \"lo\": %s, \"dp\": %s}}",
             devs12, nam, half, all12);
    int rc2 = load_text(text, &b, msg, sizeof msg);
    CHECK_EQ_INT(rc2, 0);
    if (rc2 != 0)
        fprintf(stderr, "%s\n", msg);
    if (rc == 0 && rc2 == 0) {
        CHECK_EQ_INT(b.ngroups, a.ngroups);
        CHECK_EQ_INT(b.ngroups, 2);
        CHECK_EQ_INT(b.ncolls, a.ncolls);
        for (uint32_t i = 0; i < a.nops; i++)
            CHECK_EQ_INT(b.ops[i].u.coll.group, a.ops[i].u.coll.group);
        CHECK_EQ_INT(b.groups[0].n, 12);
        CHECK_EQ_INT(b.groups[1].n, 6);
        /* 12 devices on the chip's implied system (each on one switch) */
        struct run_result ra, rb;
        int ok1 = tu_run_on("configs/nvidia-a100-sxm-80gb.yaml", &a, &ra, msg, sizeof msg) == 0;
        int ok2 = tu_run_on("configs/nvidia-a100-sxm-80gb.yaml", &b, &rb, msg, sizeof msg) == 0;
        CHECK(ok1 && ok2);
        if (ok1 && ok2) {
            CHECK(ra.total_ps > 0);
            CHECK_EQ_INT(ra.total_ps, rb.total_ps);
            for (uint32_t i = 0; i < a.nops; i++) {
                struct op_result x, y;
                CHECK_EQ_INT(run_op_result(&ra, i, &x)->end_ps, run_op_result(&rb, i, &y)->end_ps);
            }
        }
        if (ok1)
            run_result_free(&ra);
        if (ok2)
            run_result_free(&rb);
    }
    /* the writer: the 12-device group named, the 6-device one listed */
    char path[300];
    snprintf(path, sizeof path, "%s/named.json", dir);
    struct diag d;
    memset(&d, 0, sizeof d);
    if (rc == 0) {
        CHECK_EQ_INT(trace_write(&a, path, &d), 0);
        char *w = tu_read_file(path, NULL);
        CHECK(w != NULL);
        if (w != NULL) {
            CHECK_STR_CONTAINS(w, "\"groups\": {\n  \"g0\": [\"g0\", \"g1\"");
            CHECK_STR_CONTAINS(w, "\"group\": \"g0\"");
            CHECK_STR_CONTAINS(w, "\"group\": [\"g0\", \"g1\", \"g2\", \"g3\", \"g4\", \"g5\"]");
            free(w);
        }
        rc = trace_load(path, &c, &d);
        CHECK_EQ_INT(rc, 0);
        if (rc == 0) {
            CHECK_EQ_INT(c.ngroups, 2);
            for (uint32_t i = 0; i < a.nops; i++)
                CHECK_EQ_INT(c.ops[i].u.coll.group, a.ops[i].u.coll.group);
            trace_free(&c);
        }
        trace_free(&a);
    }
    static const struct {
        const char *what, *groups, *group, *expect;
    } bad[] = {
        {"unknown name", "\"dp\": [\"g0\", \"g1\"]", "\"tp\"", "ops[0].group: unknown group \"tp\" (groups: dp)"},
        {"no groups", NULL, "\"dp\"", "(this trace has none)"},
        {"not an object", NULL, "\"dp\"", "must be an object of named device lists"},
        {"unknown device", "\"dp\": [\"g0\", \"z\"]", "\"dp\"", "groups.dp: unknown device \"z\""},
        {"one device", "\"dp\": [\"g0\"]", "\"dp\"", "groups.dp: a collective needs a group of at least two"},
        {"twice", "\"dp\": [\"g0\", \"g0\"]", "\"dp\"", "listed twice"},
        {"empty name", "\"\": [\"g0\", \"g1\"]", "\"dp\"", "a group's name must be 1 to 31 bytes"},
        {"not a list", "\"dp\": 3", "\"dp\"", "groups.dp: must be a list of device names"},
        {"name given twice", "\"dp\": [\"g0\", \"g1\"], \"dp\": [\"g1\", \"g0\"]", "\"dp\"", "groups.dp: duplicate key"},
        {"an op's device not in it", "\"dp\": [\"g1\", \"g2\"]", "\"dp\"", "not in its group"},
    };
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        char groups[200] = "";
        if (bad[i].groups != NULL)
            snprintf(groups, sizeof groups, ",\n \"groups\": {%s}", bad[i].groups);
        else if (strcmp(bad[i].what, "not an object") == 0)
            snprintf(groups, sizeof groups, ",\n \"groups\": [\"g0\", \"g1\"]");
        snprintf(text, cap, "{\"strata_trace\": 1, \"devices\": [\"g0\", \"g1\", \"g2\"]%s,\n"
                 " \"ops\": [\n{\"id\": \"x\", \"kind\": \"collective\", \"device\": \"g0\", "
                 "\"collective\": \"all_reduce\", \"group\": %s, \"bytes\": 64},\n"
                 "{\"id\": \"y\", \"kind\": \"collective\", \"device\": \"g1\", "
                 "\"collective\": \"all_reduce\", \"group\": %s, \"bytes\": 64}]}",
                 groups, bad[i].group, bad[i].group);
        msg[0] = '\0';
        struct trace t;
        int brc = load_text(text, &t, msg, sizeof msg);
        CHECK(brc != 0);
        CHECK_STR_CONTAINS(msg, bad[i].expect);
        CHECK_STR_CONTAINS(msg, "t.json:");
        printf("  %-24s -> %s\n", bad[i].what, msg);
        if (brc == 0)
            trace_free(&t);
    }
    if (rc2 == 0)
        trace_free(&b);
    free(text);
}

/* Pairing: the k-th collective of each member on one group is one
 * collective; a trace written and read back keeps it. */
static void test_pairing_and_roundtrip(void)
{
    struct trace t;
    char msg[600] = "";
    const char *ops =
        "{\"id\": \"a0\", \"kind\": \"collective\", \"device\": \"a\", \"collective\": \"all_reduce\", "
        "\"group\": [\"a\", \"b\"], \"bytes\": 1024},\n"
        "{\"id\": \"a1\", \"kind\": \"collective\", \"device\": \"a\", \"collective\": \"broadcast\", "
        "\"group\": [\"a\", \"b\"], \"bytes\": 4096, \"root\": \"b\", \"dtype\": \"bf16\"},\n"
        "{\"id\": \"b0\", \"kind\": \"collective\", \"device\": \"b\", \"collective\": \"all_reduce\", "
        "\"group\": [\"a\", \"b\"], \"bytes\": 1024},\n"
        "{\"id\": \"b1\", \"kind\": \"collective\", \"device\": \"b\", \"collective\": \"broadcast\", "
        "\"group\": [\"a\", \"b\"], \"bytes\": 4096, \"root\": \"b\", \"dtype\": \"bf16\"}";
    int rc = load("\"a\", \"b\"", ops, &t, msg, sizeof msg);
    CHECK_EQ_INT(rc, 0);
    if (rc != 0) {
        fprintf(stderr, "%s\n", msg);
        return;
    }
    CHECK_EQ_INT(t.ngroups, 1);
    CHECK_EQ_INT(t.ncolls, 2);
    CHECK_EQ_INT(t.ops[0].u.coll.inst, t.ops[2].u.coll.inst);
    CHECK_EQ_INT(t.ops[1].u.coll.inst, t.ops[3].u.coll.inst);
    CHECK(t.ops[0].u.coll.inst != t.ops[1].u.coll.inst);
    CHECK_EQ_INT(t.ops[1].u.coll.root, 1);
    char path[300];
    snprintf(path, sizeof path, "%s/w.json", dir);
    struct diag d;
    memset(&d, 0, sizeof d);
    CHECK_EQ_INT(trace_write(&t, path, &d), 0);
    struct trace u;
    rc = trace_load(path, &u, &d);
    CHECK_EQ_INT(rc, 0);
    if (rc == 0) {
        CHECK_EQ_INT(u.ncolls, 2);
        CHECK_EQ_INT(u.ops[1].u.coll.what, COLL_BROADCAST);
        CHECK_EQ_INT(u.ops[1].u.coll.root, 1);
        CHECK_EQ_INT(u.ops[1].dtype, DT_BF16);
        CHECK_EQ_INT(u.ops[3].u.coll.bytes, 4096);
        trace_free(&u);
    }
    trace_free(&t);
}

int main(void)
{
    if (tu_mkdtemp(dir, sizeof dir, "groups") != 0)
        return 1;
    test_group_reuse();
    test_named_groups();
    test_load_errors();
    test_pairing_and_roundtrip();
    tu_rmtree(dir);
    TEST_MAIN_END();
}
