/* test_cli_op.c: one-line ops (sim/work/opspec.c, traces/README.md "One-line
 * ops"): `run --op` gives the report of the same trace written by hand
 * (byte for byte but for the trace's path), attention, elementwise and
 * collectives run, bad specs exit non-zero naming --op and the field, and
 * `gen KIND:...` writes a trace that runs as the --op did. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "test.h"
#include "util.h"

#define H100 "configs/nvidia-h100-sxm.yaml"
#define A100 "configs/nvidia-a100-sxm-80gb.yaml"
#define DGX "configs/systems/nvidia-dgx-a100.yaml"

static char tmp[64];

/* Runs `strata args` with stderr to tmp/err.txt; the exit status (-1: it
 * did not exit, a crash). */
static int strata(const char *args)
{
    char cmd[8192];
    snprintf(cmd, sizeof cmd, "'%s' %s >/dev/null 2>'%s/err.txt'", STRATA_BINARY, args, tmp);
    int st = system(cmd);
    return st == -1 || !WIFEXITED(st) ? -1 : WEXITSTATUS(st);
}

static char *err_text(void)
{
    char p[128];
    snprintf(p, sizeof p, "%s/err.txt", tmp);
    return tu_read_file(p, NULL);
}

/* Are the reports a and b the same bytes once a's trace path (opath, as the
 * report quotes it) reads as b's (path)? */
static int same_report(const char *a, const char *b, const char *opath, const char *path)
{
    char *ta = tu_read_file(a, NULL), *tb = tu_read_file(b, NULL);
    int same = 0;
    char q[1024], qb[1024];
    snprintf(q, sizeof q, "\"%s\"", opath);
    snprintf(qb, sizeof qb, "\"%s\"", path);
    const char *at = ta != NULL ? strstr(ta, q) : NULL;
    if (at != NULL && tb != NULL) {
        size_t pre = (size_t)(at - ta), nq = strlen(q), nqb = strlen(qb);
        same = strlen(tb) == strlen(ta) - nq + nqb && strncmp(ta, tb, pre) == 0 &&
               strncmp(tb + pre, qb, nqb) == 0 && strcmp(ta + pre + nq, tb + pre + nqb) == 0;
    }
    if (!same)
        fprintf(stderr, "reports %s and %s differ beyond the trace path\n", a, b);
    free(ta);
    free(tb);
    return same;
}

/* (a) --op against the trace a student would write for it. */
static void test_same_as_file(void)
{
    char args[2048], tr[128], ra[128], rb[128];
    snprintf(tr, sizeof tr, "%s/gemm.json", tmp);
    snprintf(ra, sizeof ra, "%s/a.json", tmp);
    snprintf(rb, sizeof rb, "%s/b.json", tmp);
    tu_write_file(tr, "{\"strata_trace\": 1, \"ops\": [\n"
                      " {\"id\": \"op1\", \"name\": \"gemm:m=8192,n=8192,k=8192\", \"kind\": \"gemm\",\n"
                      "  \"dtype\": \"bf16\", \"m\": 8192, \"n\": 8192, \"k\": 8192}\n]}\n");
    snprintf(args, sizeof args, "run --hw " H100 " --op gemm:m=8192,n=8192,k=8192 --json '%s'", ra);
    CHECK_EQ_INT(strata(args), 0);
    snprintf(args, sizeof args, "run --hw " H100 " --trace '%s' --json '%s'", tr, rb);
    CHECK_EQ_INT(strata(args), 0);
    CHECK(same_report(ra, rb, "--op gemm:m=8192,n=8192,k=8192", tr));
    /* two ops: the second after the first (dtype given, and a size unit) */
    snprintf(tr, sizeof tr, "%s/chain.json", tmp);
    tu_write_file(tr, "{\"strata_trace\": 1, \"ops\": [\n"
                      " {\"id\": \"op1\", \"name\": \"gemm:m=1024,n=4096,k=1024,dtype=fp16\",\n"
                      "  \"kind\": \"gemm\", \"dtype\": \"fp16\", \"m\": 1024, \"n\": 4096, \"k\": 1024},\n"
                      " {\"id\": \"op2\", \"name\": \"memcpy:bytes=64MiB,direction=d2h\",\n"
                      "  \"kind\": \"memcpy\", \"deps\": [\"op1\"], \"bytes\": 67108864,\n"
                      "  \"direction\": \"d2h\"}\n]}\n");
    snprintf(args, sizeof args, "run --hw " H100 " --op gemm:m=1024,n=4096,k=1024,dtype=fp16 "
             "--op memcpy:bytes=64MiB,direction=d2h --json '%s'", ra);
    CHECK_EQ_INT(strata(args), 0);
    snprintf(args, sizeof args, "run --hw " H100 " --trace '%s' --json '%s'", tr, rb);
    CHECK_EQ_INT(strata(args), 0);
    CHECK(same_report(ra, rb, "--op gemm:m=1024,n=4096,k=1024,dtype=fp16 --op "
                              "memcpy:bytes=64MiB,direction=d2h", tr));
}

/* (b) the other kinds run, collectives on a chip and on a system file. */
static void test_kinds(void)
{
    char args[2048], r[128];
    snprintf(r, sizeof r, "%s/k.json", tmp);
    snprintf(args, sizeof args, "run --hw " H100 " --op attention:batch=2,heads=32,kv_heads=8,"
             "q_len=1024,kv_len=1024,head_dim=128,causal=true --op elementwise:elements=1e8,"
             "inputs=2,flops_per_element=1 --json '%s'", r);
    CHECK_EQ_INT(strata(args), 0);
    char *t = tu_read_file(r, NULL);
    CHECK_STR_CONTAINS(t, "\"kind\":\"attention\"");
    CHECK_STR_CONTAINS(t, "\"kind\":\"elementwise\"");
    free(t);
    snprintf(args, sizeof args, "run --hw " H100 " --op all_reduce:bytes=1GiB,ranks=8 --json '%s'", r);
    CHECK_EQ_INT(strata(args), 0);
    t = tu_read_file(r, NULL);
    CHECK_STR_CONTAINS(t, "\"kind\":\"collective\"");
    CHECK_STR_CONTAINS(t, "op1.gpu7");
    free(t);
    /* on a system file, ranks are its devices; the GEMM runs on each */
    snprintf(args, sizeof args, "run --hw " DGX " --op gemm:m=4096,n=4096,k=4096 "
             "--op collective:collective=reduce_scatter,bytes=64MiB,algo=ring --json '%s'", r);
    CHECK_EQ_INT(strata(args), 0);
    t = tu_read_file(r, NULL);
    CHECK_STR_CONTAINS(t, "op2.gpu7");
    CHECK_STR_CONTAINS(t, "op1.gpu7");
    free(t);
}

/* (c) A bad spec: exit status rc, and stderr names the spec and the field. */
static void bad(const char *spec, int rc, const char *err_has)
{
    char args[8192];
    snprintf(args, sizeof args, "run --hw " A100 " --op '%s'", spec);
    int got = strata(args);
    CHECK_EQ_INT(got, rc);
    char *e = err_text();
    char want[400];     /* a long spec is cut in the diagnostic (diag.h: file[512]) */
    snprintf(want, sizeof want, strlen(spec) < 300 ? "--op %s: " : "--op %.300s", spec);
    CHECK(e != NULL && strncmp(e, want, strlen(want)) == 0);
    CHECK_STR_CONTAINS(e, err_has);
    if (got != rc || e == NULL || strncmp(e, want, strlen(want)) != 0 || strstr(e, err_has) == NULL)
        fprintf(stderr, "  ^ --op '%s': exit %d, stderr %s", spec, got, e ? e : "(none)\n");
    free(e);
}

static void test_bad(void)
{
    bad("conv:m=1", 1, "kind: unknown kind \"conv\"");
    bad("gemm:m=1,n=1,k=1,q=2", 1, "q: unknown key \"q\" for a gemm op");
    bad("gemm:m=0,n=8192,k=8192", 1, "m: must be >= 1, got 0");
    bad("gemm:m=8,n=8", 1, "k: a gemm op needs \"k\"");
    bad("gemm:m=x,n=8,k=8", 1, "m: must be an integer, got string \"x\"");
    bad("gemm", 2, "expected KIND:key=value");
    bad("gemm m=1", 2, "expected KIND:key=value");
    bad("%%$$,,==", 2, "expected KIND:key=value");
    bad(":::", 1, "kind: unknown kind");
    bad("gemm:m=1,,n=1", 2, "an empty key=value");
    bad("gemm:m=1,", 2, "an empty key=value");
    bad("gemm:m", 2, "expected key=value, got \"m\"");
    bad("gemm:=3", 2, "expected key=value");
    bad("gemm:m=", 2, "m: needs a value");
    bad("gemm:m=1,m=2,n=1,k=1", 1, "m: is given twice");
    bad("gemm:m=1,n=1,k=1,id=x", 1, "id: is not given in a one-line op");
    bad("gemm:m=1,n=1,k=1,device=gpu1", 1, "device: is not given");
    bad("gemm:m=1,n=1,k=1,dtype=fp12", 1, "dtype: unknown dtype \"fp12\"");
    bad("all_reduce:bytes=1GiB", 1, "ranks: a collective needs ranks=N");
    bad("all_reduce:bytes=1GiB,ranks=1", 1, "ranks: a collective runs over 2 to");
    bad("send_recv:bytes=1GiB,ranks=4", 1, "ranks: a send_recv is between two devices");
    bad("all_gather:bytes=1GB/s,ranks=2", 1, "bytes: must be an integer");
    /* an error the run finds, at the op's spec */
    bad("attention:batch=1,heads=8,q_len=1,kv_len=64,head_dim=64,impl=fa3", 1, "impl: fa3 runs on none");
    char big[3000] = "gemm:m=1,n=1,k=1,name=";
    memset(big + strlen(big), 'x', 2000);
    big[2022] = '\0';
    bad(big, 1, "name: ");
    /* --op with --trace, or neither */
    CHECK_EQ_INT(strata("run --hw " A100 " --trace traces/examples/two-streams.json --op gemm:m=1,n=1,k=1"), 2);
    char *e = err_text();
    CHECK_STR_CONTAINS(e, "--trace and --op: give one");
    free(e);
    CHECK_EQ_INT(strata("run --hw " A100), 2);
}

/* (d) gen writes the trace --op runs. */
static void test_gen(void)
{
    char args[2048], tr[128], ra[128], rb[128];
    snprintf(tr, sizeof tr, "%s/gen.json", tmp);
    snprintf(ra, sizeof ra, "%s/ga.json", tmp);
    snprintf(rb, sizeof rb, "%s/gb.json", tmp);
    const char *ops[] = {"gemm:m=8192,n=8192,k=8192",
                         "gemm:m=2048,n=2048,k=2048 all_reduce:bytes=256MiB,ranks=4"};
    for (int i = 0; i < 2; i++) {
        snprintf(args, sizeof args, "gen %s -o '%s'", ops[i], tr);
        CHECK_EQ_INT(strata(args), 0);
        char *t = tu_read_file(tr, NULL);
        CHECK_STR_CONTAINS(t, "\"kind\": \"gemm\", \"device\": \"gpu0\"");
        free(t);
        snprintf(args, sizeof args, "run --hw " H100 " --trace '%s' --json '%s'", tr, rb);
        CHECK_EQ_INT(strata(args), 0);
        char opath[512] = "", *o = opath;
        for (const char *p = ops[i]; *p != '\0';) {      /* each spec as --op SPEC */
            size_t n = strcspn(p, " ");
            o += sprintf(o, "%s--op %.*s", o == opath ? "" : " ", (int)n, p);
            p += n + (p[n] == ' ');
        }
        snprintf(args, sizeof args, "run --hw " H100 " --json '%s' %s", ra, opath);
        CHECK_EQ_INT(strata(args), 0);
        CHECK(same_report(ra, rb, opath, tr));
    }
    /* a bad spec writes nothing */
    unlink(tr);
    snprintf(args, sizeof args, "gen gemm:m=0,n=1,k=1 -o '%s'", tr);
    CHECK_EQ_INT(strata(args), 1);
    char *e = err_text();
    CHECK_STR_CONTAINS(e, "gen gemm:m=0,n=1,k=1: m: must be >= 1");
    free(e);
    CHECK(!tu_exists(tr));
    CHECK_EQ_INT(strata("gen gemm:m=1,n=1,k=1"), 2);       /* no -o */
}

int main(void)
{
    if (chdir(STRATA_SOURCE_DIR) != 0 || tu_mkdtemp(tmp, sizeof tmp, "strata-op") != 0)
        return 1;
    test_same_as_file();
    test_kinds();
    test_bad();
    test_gen();
    tu_rmtree(tmp);
    TEST_MAIN_END();
}
