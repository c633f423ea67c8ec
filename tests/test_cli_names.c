/* test_cli_names.c: names typed slightly wrong (issue 33 item 7).  The
 * edit distance of sim/base/suggest.c; "did you mean" for a misspelt verb,
 * option, --hw/--model/--stack name and --set key; shipped names in any
 * case load the same config as their file names; and a wrong name still
 * fails with a non-zero exit. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "suggest.h"
#include "test.h"
#include "util.h"

static char tmpdir[64];

static int run_cli(const char *args, char **out, char **err)
{
    return tu_run_strata(tmpdir, args, out, err);
}

/* args fails with rc, and its stderr holds want (NULL: says no "did you mean"). */
static void expect_err(const char *args, int rc, const char *want)
{
    char *out = NULL, *err = NULL;
    int got = run_cli(args, &out, &err);
    int before = test_failed_;
    CHECK_EQ_INT(got, rc);
    if (want != NULL)
        CHECK_STR_CONTAINS(err, want);
    else
        CHECK(err != NULL && strstr(err, "did you mean") == NULL);
    if (test_failed_ != before)
        fprintf(stderr, "  ^ strata %s\n", args);
    printf("%-60.60s exit %d\n", args, got);
    free(out);
    free(err);
}

static void test_distance(void)
{
    CHECK_EQ_INT(suggest_distance("run", "run"), 0);
    CHECK_EQ_INT(suggest_distance("rn", "run"), 1);
    CHECK_EQ_INT(suggest_distance("hw", "wh"), 1);          /* a swap is one edit */
    CHECK_EQ_INT(suggest_distance("bandwith", "bandwidth"), 1);
    CHECK_EQ_INT(suggest_distance("H100", "h100"), 0);      /* case is no edit */
    CHECK_EQ_INT(suggest_distance("", "abc"), 3);
    CHECK_EQ_INT(suggest_distance("kitten", "sitting"), 3);
    struct suggest sg;
    char hint[SUGGEST_MAX * SUGGEST_NAME + 32];
    suggest_init(&sg, "llama-3-7b");       /* ties are all named, in order offered */
    static const char *const models[] = {"llama-2-7b", "llama-3-8b", "mistral-7b", NULL};
    suggest_offer_list(&sg, models);
    CHECK_EQ_INT(suggest_text(&sg, hint, sizeof hint), 2);
    CHECK(strcmp(hint, "; did you mean 'llama-2-7b' or 'llama-3-8b'?") == 0);
    suggest_init(&sg, "xyz");              /* nothing near: no suggestion */
    suggest_offer_list(&sg, models);
    CHECK_EQ_INT(suggest_text(&sg, hint, sizeof hint), 0);
    CHECK(hint[0] == '\0');
    suggest_init(&sg, "units");            /* typed is a candidate: not misspelt */
    suggest_offer(&sg, "unit");
    suggest_offer(&sg, "units");
    CHECK_EQ_INT(suggest_text(&sg, hint, sizeof hint), 0);
}

static void test_did_you_mean(void)
{
    expect_err("rn", 2, "unknown command 'rn'; did you mean 'run'?");
    expect_err("help infp", 2, "did you mean 'info'?");
    expect_err("run --hww x", 2, "unknown option '--hww'; did you mean '--hw'?");
    expect_err("info --hw h100-sxm --sett compute.units=3", 2, "did you mean '--set'?");
    expect_err("info --hw h100-sxn", 1, "did you mean 'nvidia-h100-sxm'?");
    expect_err("fit --hw h100-sxm --model llama2-7b --phase decode", 1,
               "did you mean 'llama-2-7b'?");
    expect_err("info --hw systems/nvidia-dgx-a10", 1, "did you mean 'nvidia-dgx-a100'?");
    expect_err("run --hw h100-sxm --trace traces/examples/two-streams.json --stack vlm-0.2", 1,
               "did you mean 'vllm-0.2'?");
    expect_err("info --hw h100-sxm --set dram.bandwith=1TB/s", 1,
               "no key 'bandwith' here takes a bandwidth; did you mean 'bandwidth'?");
    expect_err("info --hw h100-sxm --set dramm.bandwidth=1TB/s", 1, "did you mean 'dram'?");
    expect_err("info --hw h100-sxm --set compute.unitz=3", 1, "did you mean 'units'?");
    expect_err("info --hw h100-sxm --set dram.efficency.bandwidth_fraction=0.5", 1,
               "did you mean 'efficiency'?");
    expect_err("list confgs", 2, "did you mean 'configs'?");
    /* far from everything: the old message, no guess */
    expect_err("frobnicate", 2, NULL);
    expect_err("info --hw xyzzy-quux", 1, NULL);
    expect_err("run --bogus-option x", 2, NULL);
}

/* `strata info --hw name` prints what it prints for the file. */
static void same_info(const char *name, const char *file)
{
    char args[512], *out1 = NULL, *err1 = NULL, *out2 = NULL, *err2 = NULL;
    snprintf(args, sizeof args, "info --hw %s", name);
    int rc1 = run_cli(args, &out1, &err1);
    snprintf(args, sizeof args, "info --hw %s", file);
    int rc2 = run_cli(args, &out2, &err2);
    CHECK_EQ_INT(rc1, 0);
    CHECK_EQ_INT(rc2, 0);
    /* the first line names the path it was read from: compare from the second */
    const char *a = out1 ? strchr(out1, '\n') : NULL, *b = out2 ? strchr(out2, '\n') : NULL;
    CHECK(a != NULL && b != NULL && strcmp(a, b) == 0);
    CHECK(out1 != NULL && strstr(out1, "nvidia-h100-sxm") != NULL);
    printf("info --hw %-40s exit %d\n", name, rc1);
    free(out1), free(err1), free(out2), free(err2);
}

static void test_case(void)
{
    same_info("H100-SXM", "configs/nvidia-h100-sxm.yaml");
    same_info("NVIDIA-H100-SXM", "configs/nvidia-h100-sxm.yaml");
    same_info("nvidia-H100-sxm", "configs/nvidia-h100-sxm.yaml");
    char args[512], *out = NULL, *err = NULL;
    char *a = NULL, *b = NULL;
    snprintf(args, sizeof args, "gen llm --model Llama-2-7B --phase decode -o '%s/a.json'", tmpdir);
    CHECK_EQ_INT(run_cli(args, &out, &err), 0);
    free(out), free(err);
    snprintf(args, sizeof args, "gen llm --model traces/models/llama-2-7b.json --phase decode "
             "-o '%s/b.json'", tmpdir);
    CHECK_EQ_INT(run_cli(args, &out, &err), 0);
    free(out), free(err);
    snprintf(args, sizeof args, "%s/a.json", tmpdir);
    a = tu_read_file(args, NULL);
    snprintf(args, sizeof args, "%s/b.json", tmpdir);
    b = tu_read_file(args, NULL);
    CHECK(a != NULL && b != NULL && strcmp(a, b) == 0);
    free(a), free(b);
    /* an explicit path is taken as written: no case folding of files */
    expect_err("info --hw configs/NVIDIA-H100-SXM.yaml", 1, NULL);
    expect_err("info --hw H100-SXX", 1, "did you mean");
}

int main(void)
{
    if (tu_mkdtemp(tmpdir, sizeof tmpdir, "strata-names") != 0)
        return 1;
    test_distance();
    test_did_you_mean();
    test_case();
    tu_rmtree(tmpdir);
    TEST_MAIN_END();
}
