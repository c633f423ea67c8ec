/* test_unit_cli.c: the option parser of every verb (sim/cli/cli.c).  For
 * run, info, gen llm, validate, plot, import, compare, fit and scalesim:
 * -h and --help (and `strata help VERB`) print the usage on stdout and exit
 * 0; --opt=value works like --opt value; a missing value exits 2 naming the
 * option; "-" as an output file writes the report to stdout; and
 * "--json --quiet" is a missing value, not a file named --quiet. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "dtype.h"
#include "llm.h"
#include "test.h"
#include "util.h"
#include "wfmt.h"

#define H100 "configs/nvidia-h100-sxm.yaml"
#define TRACE "traces/examples/two-streams.json"
#define MODEL "traces/models/smollm-135m.json"
#define CHAKRA "traces/chakra/tiny-step.json"
#define CALIB "traces/validation/calibration.csv"
#define REPORT "tests/data/report-small.json"

static char tmpdir[64];

/* Runs `strata args`; returns the exit status, stdout and stderr in *out
 * and *err (caller frees). */
static int run_cli(const char *args, char **out, char **err)
{
    return tu_run_strata(tmpdir, args, out, err);
}

/* One case: exit status rc, stdout containing out_has (NULL: anything),
 * stderr containing err_has (NULL: anything). */
static void expect(const char *name, const char *args, int rc, const char *out_has,
                   const char *err_has)
{
    int failed_before = test_failed_;
    char *out = NULL, *err = NULL;
    int got = run_cli(args, &out, &err);
    CHECK_EQ_INT(got, rc);
    if (out_has != NULL)
        CHECK(out != NULL && strstr(out, out_has) != NULL);
    if (err_has != NULL)
        CHECK(err != NULL && strstr(err, err_has) != NULL);
    if (test_failed_ != failed_before)
        fprintf(stderr, "  ^ in case %s: strata %s\n  stdout: %.300s\n  stderr: %.300s\n", name,
                args, out ? out : "", err ? err : "");
    printf("%-24s exit %d\n", name, got);
    free(out);
    free(err);
}

static const char *const verbs[] = {"run", "info", "gen", "gen llm", "validate", "plot",
                                     "import", "import pytorch", "compare", "fit", "scalesim",
                                     "bench", "sweep", "new-chip", "calibrate", "list", "serve",
                                     "plan"};

static void test_help(void)
{
    char args[256], name[64], want[64];
    for (size_t i = 0; i < sizeof verbs / sizeof verbs[0]; i++) {
        /* the usage names the verb: "strata gen llm", "strata import   pytorch" */
        snprintf(want, sizeof want, "strata %.*s", (int)strcspn(verbs[i], " "), verbs[i]);
        snprintf(args, sizeof args, "%s -h", verbs[i]);
        snprintf(name, sizeof name, "%s -h", verbs[i]);
        expect(name, args, 0, want, NULL);
        snprintf(args, sizeof args, "%s --help", verbs[i]);
        snprintf(name, sizeof name, "%s --help", verbs[i]);
        expect(name, args, 0, want, NULL);
        if (strchr(verbs[i], ' ') == NULL) {
            snprintf(args, sizeof args, "help %s", verbs[i]);
            snprintf(name, sizeof name, "help %s", verbs[i]);
            expect(name, args, 0, want, NULL);
        }
    }
    /* help wins wherever it stands among valid options */
    expect("run --hw X -h", "run --hw " H100 " -h", 0, "usage:", NULL);
    expect("help bogus", "help bogus", 2, NULL, "unknown command 'bogus'");
    expect("-V", "-V", 0, "strata ", NULL);
    expect("version", "version", 0, "strata ", NULL);
    expect("--help", "--help", 0, "strata scalesim", NULL);
}

/* One verb list (sim/cli/verbs.h): `strata list verbs` names every verb the
 * test above knows and no other, each answers help, and the man page in the
 * tree is what `strata help --man` prints (regenerate it with
 * `strata help --man > docs/strata.1` after changing a verb or its usage). */
static void test_verb_list(void)
{
    char *out = NULL, *err = NULL;
    CHECK_EQ_INT(run_cli("list verbs", &out, &err), 0);
    unsigned listed = 0;
    for (char *p = out; p != NULL && *p != '\0';) {
        size_t n = strcspn(p, "\n");
        int known = 0;
        for (size_t i = 0; i < sizeof verbs / sizeof verbs[0]; i++)
            if (strlen(verbs[i]) == n && strncmp(verbs[i], p, n) == 0)
                known = 1;
        if (!known)
            fprintf(stderr, "strata list verbs names '%.*s', which this test does not know\n",
                    (int)n, p);
        CHECK(known);
        listed++;
        p += n + (p[n] == '\n');
    }
    unsigned plain = 0; /* the verbs of verbs[] that are not "VERB SUBVERB" */
    for (size_t i = 0; i < sizeof verbs / sizeof verbs[0]; i++)
        plain += strchr(verbs[i], ' ') == NULL;
    CHECK_EQ_INT((int)listed, (int)plain);
    free(out);
    free(err);
    CHECK_EQ_INT(run_cli("help --man", &out, &err), 0);
    char *man = tu_read_file("docs/strata.1", NULL);
    CHECK(man != NULL && out != NULL && strcmp(man, out) == 0);
    if (man != NULL && out != NULL && strcmp(man, out) != 0)
        fprintf(stderr, "docs/strata.1 is not what `strata help --man` prints: regenerate it\n");
    CHECK(out != NULL && strstr(out, ".SS new-chip") != NULL);
    free(man);
    free(out);
    free(err);
}

static void test_equals(void)
{
    char args[512], path[128];
    snprintf(path, sizeof path, "%s/eq.json", tmpdir);
    snprintf(args, sizeof args, "info --hw=" H100 " --json='%s'", path);
    expect("info --hw=", args, 0, "nvidia-h100-sxm", NULL);
    CHECK(tu_exists(path));
    remove(path);
    expect("run --top=3", "run --hw=" H100 " --trace=" TRACE " --top=3", 0, "total time", NULL);
    expect("fit --phase=", "fit --hw=" H100 " --model=" MODEL " --phase=decode --batch=2", 0, "FITS",
           NULL);
    snprintf(args, sizeof args, "gen llm --model=" MODEL " --phase=decode --output='%s'", path);
    expect("gen --output=", args, 0, "wrote", NULL);
    CHECK(tu_exists(path));
    snprintf(args, sizeof args, "compare --trace='%s' --hw=" H100 " --top=2", path);
    expect("compare --trace=", args, 0, "strata compare", NULL);
    remove(path);
    snprintf(args, sizeof args, "import chakra " CHAKRA " --output='%s'", path);
    expect("import --output=", args, 0, "wrote", NULL);
    CHECK(tu_exists(path));
    remove(path);
    snprintf(args, sizeof args, "plot --report=" REPORT " --out='%s/plots'", tmpdir);
    expect("plot --report=", args, 0, "report.html", NULL);
    expect("validate --data=", "validate --data=" CALIB " --quiet", 0, "median", NULL);
    /* the old spellings, unchanged */
    snprintf(args, sizeof args, "scalesim -c traces/scalesim/array32-os.cfg -t traces/scalesim/gpt2.csv -i gemm "
             "-p '%s/ss' --quiet", tmpdir);
    expect("scalesim -c -t -i -p", args, 0, NULL, NULL);
}

static void test_missing(void)
{
    expect("run --hw", "run --trace " TRACE " --hw", 2, NULL, "option '--hw' needs a value");
    expect("run --json=", "run --hw " H100 " --trace " TRACE " --json=", 2, NULL,
           "option '--json' needs a value");
    expect("info --json", "info --hw " H100 " --json", 2, NULL, "option '--json' needs a value");
    expect("gen --model", "gen llm --phase decode -o x.json --model", 2, NULL,
           "option '--model' needs a value");
    expect("gen -o", "gen llm --model " MODEL " --phase decode -o", 2, NULL,
           "option '-o' needs a value");
    expect("validate --data", "validate --data", 2, NULL, "option '--data' needs a value");
    expect("plot --report", "plot --out x --report", 2, NULL, "option '--report' needs a value");
    expect("import -o", "import pytorch x.json -o", 2, NULL, "option '-o' needs a value");
    expect("import --output", "import pytorch x.json --output", 2, NULL,
           "option '--output' needs a value");
    expect("compare --trace", "compare --hw " H100 " --trace", 2, NULL,
           "option '--trace' needs a value");
    expect("fit --hw", "fit --model " MODEL " --phase decode --hw", 2, NULL,
           "option '--hw' needs a value");
    expect("scalesim -c", "scalesim -t x.csv -c", 2, NULL, "option '-c' needs a value");
    expect("scalesim -p --quiet", "scalesim -c a -t b -p --quiet", 2, NULL,
           "option '-p' needs a value");
    /* --top: a count, nothing else */
    expect("run --top", "run --hw " H100 " --trace " TRACE " --top", 2, NULL,
           "option '--top' needs a value");
    expect("run --top x", "run --hw " H100 " --trace " TRACE " --top x", 2, NULL, "--top");
    expect("run --top -5", "run --hw " H100 " --trace " TRACE " --top -5", 2, NULL, "--top");
    expect("compare --top x", "compare --hw " H100 " --trace " TRACE " --top x", 2, NULL, "--top");
    expect("compare --top -5", "compare --hw " H100 " --trace " TRACE " --top -5", 2, NULL, "--top");
    expect("unknown option", "info --hw " H100 " --bogus", 2, NULL, "unknown option '--bogus'");
    expect("stray argument", "info --hw " H100 " stray", 2, NULL, "unexpected argument 'stray'");
}

/* "--json --quiet": a missing value; no file named --quiet appears. */
static void test_json_quiet(void)
{
    expect("run --json --quiet", "run --hw " H100 " --trace " TRACE " --json --quiet", 2, NULL,
           "option '--json' needs a value");
    expect("run --csv --quiet", "run --hw " H100 " --trace " TRACE " --csv --quiet", 2, NULL,
           "option '--csv' needs a value");
    expect("validate --json --quiet", "validate --data " CALIB " --json --quiet", 2, NULL,
           "option '--json' needs a value");
    expect("info --json --hw", "info --json --hw " H100, 2, NULL, "option '--json' needs a value");
    expect("fit --json --hw", "fit --model " MODEL " --phase decode --json --hw " H100, 2, NULL,
           "option '--json' needs a value");
    expect("compare --json --top", "compare --hw " H100 " --trace " TRACE " --json --top 3", 2,
           NULL, "option '--json' needs a value");
    expect("gen -o --phase", "gen llm --model " MODEL " -o --phase decode", 2, NULL,
           "option '-o' needs a value");
    expect("import -o --output", "import pytorch x.json -o --output y", 2, NULL,
           "option '-o' needs a value");
    CHECK(!tu_exists("--quiet"));
    CHECK(!tu_exists("--hw"));
    CHECK(!tu_exists("--top"));
    CHECK(!tu_exists("--phase"));
    /* written out with '=', the value is taken as given */
    char args[512];
    snprintf(args, sizeof args, "info --hw " H100 " --json='%s/--quiet'", tmpdir);
    expect("info --json=--quiet", args, 0, NULL, NULL);
}

/* "-" as an output file: the report on stdout, the text summary on stderr. */
static void test_stdout(void)
{
    char args[512], path[128];
    expect("run --json -", "run --hw " H100 " --trace " TRACE " --json - --quiet", 0,
           "\"strata_report\"", NULL);
    /* --quiet keeps a one-line result (on stderr when stdout carries the report) */
    expect("run --quiet", "run --hw " H100 " --trace " TRACE " --quiet", 0, "on nvidia-h100-sxm: ", NULL);
    expect("run --quiet (bound)", "run --hw " H100 " --trace " TRACE " --quiet", 0, ", bound ", NULL);
    expect("run --json - --quiet (line)", "run --hw " H100 " --trace " TRACE " --json - --quiet", 0, NULL,
           ", bound ");
    expect("run --json - (summary)", "run --hw " H100 " --trace " TRACE " --json -", 0,
           "\"strata_report\"", "total time");
    expect("run --csv -", "run --hw " H100 " --trace " TRACE " --csv -", 0, "id,name,kind",
           "total time");
    expect("run --json - --csv -", "run --hw " H100 " --trace " TRACE " --json - --csv -", 2, NULL,
           "same file");
    expect("info --json -", "info --hw " H100 " --json -", 0, "\"strata_info\"", "nvidia-h100-sxm");
    expect("fit --json -", "fit --hw " H100 " --model " MODEL " --phase decode --json -", 0,
           "\"strata_fit\"", "FITS");
    expect("gen -o -", "gen llm --model " MODEL " --phase decode -o -", 0, "\"strata_trace\"",
           "wrote -");
    expect("import -o -", "import chakra " CHAKRA " -o -", 0, "\"strata_trace\"", "wrote -");
    expect("validate --json -", "validate --data " CALIB " --quiet --json -", 0,
           "\"strata_validate\"", "median");
    snprintf(path, sizeof path, "%s/c.json", tmpdir);
    snprintf(args, sizeof args, "import chakra " CHAKRA " -o '%s'", path);
    expect("import (for compare)", args, 0, NULL, NULL);
    snprintf(args, sizeof args, "compare --trace '%s' --hw " H100 " --json -", path);
    expect("compare --json -", args, 0, "\"strata_compare\"", "strata compare");
    remove(path);
    CHECK(!tu_exists("-"));
}

/* Names as their ecosystems spell them, in any case (issue 16.2). */
static void test_names(void)
{
    static const struct { const char *name; enum dtype want; } dt[] = {
        {"bf16", DT_BF16}, {"BF16", DT_BF16}, {"bfloat16", DT_BF16}, {"Float16", DT_FP16},
        {"half", DT_FP16}, {"FP8", DT_FP8_E4M3}, {"e5m2", DT_FP8_E5M2}, {"float32", DT_FP32},
        {"INT4", DT_INT4},
    };
    for (size_t i = 0; i < sizeof dt / sizeof dt[0]; i++) {
        enum dtype got = DT_COUNT;
        CHECK_EQ_INT(dtype_from_name(dt[i].name, &got), 0);
        CHECK_EQ_INT(got, dt[i].want);
    }
    enum dtype x;
    CHECK_EQ_INT(dtype_from_name("bfloat17", &x), -1);
    CHECK_EQ_INT(dtype_from_name("bf", &x), -1);
    enum wfmt w;
    CHECK_EQ_INT(wfmt_from_name("Q8_0", &w), 0);
    CHECK_EQ_INT(w, WF_Q8_0);
    struct llm_step s;
    memset(&s, 0, sizeof s);
    CHECK_EQ_INT(llm_weights_from_name("Q4_K_M", &s), 0);
    CHECK_EQ_INT(s.q4_k_m, 1);
    enum llm_framework fw;
    CHECK_EQ_INT(llm_framework_from_name("LLAMA.CPP", &fw), 0);
    CHECK_EQ_INT(fw, LLM_FW_LLAMA_CPP);
    char cmd[2048];
    snprintf(cmd, sizeof cmd, "'%s' gen llm --model traces/models/llama-2-7b.json --phase Decode "
             "--dtype BF16 --weights Q4_K_M --attn FA2 -o '%s/names.json' > /dev/null",
             STRATA_BINARY, tmpdir);
    CHECK_EQ_INT(tu_sh(cmd), 0);
}

int main(void)
{
    if (tu_mkdtemp(tmpdir, sizeof tmpdir, "strata-cli") != 0)
        return 1;
    test_help();
    test_verb_list();
    test_equals();
    test_missing();
    test_json_quiet();
    test_stdout();
    test_names();
    tu_rmtree(tmpdir);
    TEST_MAIN_END();
}
