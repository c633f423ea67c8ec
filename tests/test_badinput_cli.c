/* test_badinput_cli.c: bad inputs through the command line.  For each one
 * `strata` exits with status 1, prints "file:line: field: message" naming
 * the input file and the field, and leaves no output behind (neither the
 * requested --json file nor a temporary "out.json.tmp.*" beside it).
 * Usage errors exit with status 2. */
#include <dirent.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "test.h"
#include "util.h"

#define H100 "configs/nvidia-h100-sxm.yaml"

static char tmpdir[64];

/* Number of entries in tmpdir whose name starts with prefix. */
static int count_prefixed(const char *prefix)
{
    DIR *dir = opendir(tmpdir);
    if (dir == NULL)
        return -1;
    int n = 0;
    size_t len = strlen(prefix);
    struct dirent *e;
    while ((e = readdir(dir)) != NULL)
        if (strncmp(e->d_name, prefix, len) == 0) {
            fprintf(stderr, "  left behind: %s/%s\n", tmpdir, e->d_name);
            n++;
        }
    closedir(dir);
    return n;
}

/* Runs args (after the binary) with stderr to a file; returns the exit
 * status and the stderr text in *err (caller frees). */
static int run_cli(const char *args, char **err)
{
    char cmd[2048], errpath[128];
    snprintf(errpath, sizeof errpath, "%s/stderr.txt", tmpdir);
    snprintf(cmd, sizeof cmd, "'%s' %s >/dev/null 2>'%s'", STRATA_BINARY, args, errpath);
    int st = system(cmd);
    *err = tu_read_file(errpath, NULL);
    unlink(errpath);
    if (st == -1 || !WIFEXITED(st)) {
        fprintf(stderr, "command did not exit normally: %s\n", cmd);
        return -1;
    }
    return WEXITSTATUS(st);
}

/* Does text contain "path:N:" (a file:line: location)? */
static int has_file_line(const char *text, const char *path)
{
    size_t n = strlen(path);
    for (const char *p = text ? strstr(text, path) : NULL; p != NULL; p = strstr(p + 1, path)) {
        const char *q = p + n;
        if (*q++ != ':')
            continue;
        const char *digits = q;
        while (*q >= '0' && *q <= '9')
            q++;
        if (q > digits && *q == ':')
            return 1;
    }
    return 0;
}

/* One failing command: exit status 1, a message naming file (with a line
 * when with_line) and field, and no output file left in tmpdir. */
static void expect_fail(const char *name, const char *args, const char *file, int with_line,
                        const char *field)
{
    int failed_before = test_failed_;
    char *err = NULL;
    int rc = run_cli(args, &err);
    CHECK_EQ_INT(rc, 1);
    CHECK(err != NULL && err[0] != '\0');
    CHECK_STR_CONTAINS(err, file);
    if (with_line) {
        int ok = has_file_line(err, file);
        CHECK(ok);
        if (!ok)
            fprintf(stderr, "  ^ no \"%s:LINE:\" in the message\n", file);
    }
    if (field != NULL)
        CHECK_STR_CONTAINS(err, field);
    char out[256];
    snprintf(out, sizeof out, "%s/out.json", tmpdir);
    CHECK(!tu_exists(out));
    CHECK_EQ_INT(count_prefixed("out."), 0);
    if (test_failed_ != failed_before)
        fprintf(stderr, "  ^ in case %s: strata %s\n", name, args);
    printf("%-16s exit %d: %s", name, rc, err ? err : "(no stderr)\n");
    free(err);
    /* start the next case clean even if this one failed */
    remove(out);
    snprintf(out, sizeof out, "%s/out.csv", tmpdir);
    remove(out);
}

static void expect_usage(const char *name, const char *args)
{
    char *err = NULL;
    int rc = run_cli(args, &err);
    CHECK_EQ_INT(rc, 2);
    CHECK(err != NULL && err[0] != '\0');
    if (rc != 2)
        fprintf(stderr, "  ^ in case %s: strata %s\n", name, args);
    printf("%-16s exit %d: %s", name, rc, err ? err : "(no stderr)\n");
    free(err);
}

/* Writes a trace file tmpdir/name.json and runs it with --json out.json. */
static void bad_trace(const char *name, const char *text, const char *field)
{
    char path[256], args[1024];
    snprintf(path, sizeof path, "%s/%s.json", tmpdir, name);
    tu_write_file(path, text);
    snprintf(args, sizeof args, "run --hw " H100 " --trace '%s' --json '%s/out.json' --csv '%s/out.csv'",
             path, tmpdir, tmpdir);
    expect_fail(name, args, path, 1, field);
}

#define HEAD "{\"strata_trace\": 1, \"ops\": [\n"
#define GEMM(id) "{\"id\": \"" id "\", \"kind\": \"gemm\", \"dtype\": \"bf16\", \"m\": 64, \"n\": 64, \"k\": 64"

static const char good_trace[] = HEAD GEMM("a") "}\n]}\n";

static void test_traces(void)
{
    bad_trace("cycle",
              HEAD GEMM("a") ", \"deps\": [\"b\"]},\n"
                   GEMM("b") ", \"deps\": [\"a\"]}\n]}\n",
              "deps");
    bad_trace("unknown-kind",
              HEAD "{\"id\": \"a\", \"kind\": \"conv2d\", \"dtype\": \"bf16\"}\n]}\n", "kind");
    bad_trace("m-zero",
              HEAD "{\"id\": \"a\", \"kind\": \"gemm\", \"dtype\": \"bf16\",\n"
                   " \"m\": 0, \"n\": 64, \"k\": 64}\n]}\n",
              "ops[0].m");
    bad_trace("unknown-device", HEAD GEMM("a") ", \"device\": \"gpu7\"}\n]}\n", "device");
    bad_trace("truncated", HEAD GEMM("a") "}, {\"id\": \"b\", \"kind\"", NULL);
    /* ops on one stream run in file order, so "a" waiting for "b" can never start */
    bad_trace("stream-deadlock",
              HEAD GEMM("a") ", \"stream\": 0, \"deps\": [\"b\"]},\n"
                   GEMM("b") ", \"stream\": 0}\n]}\n",
              "deps");
}

static void bad_config(const char *name, const char *yaml, const char *field)
{
    char path[256], trace[256], args[1024];
    snprintf(path, sizeof path, "%s/%s.yaml", tmpdir, name);
    snprintf(trace, sizeof trace, "%s/good.json", tmpdir);
    tu_write_file(path, yaml);
    tu_write_file(trace, good_trace);
    snprintf(args, sizeof args, "run --hw '%s' --trace '%s' --json '%s/out.json'", path, trace,
             tmpdir);
    expect_fail(name, args, path, 1, field);
}

static void test_configs(void)
{
    char *h100 = tu_read_file(H100, NULL);
    CHECK(h100 != NULL);
    if (h100 == NULL)
        return;
    size_t n = strlen(h100);
    char *text = malloc(n + 64);
    if (text == NULL)
        abort();
    /* an unknown top-level key at the end */
    snprintf(text, n + 64, "%s%sbogus_key: 1\n", h100, n > 0 && h100[n - 1] != '\n' ? "\n" : "");
    bad_config("unknown-key", text, "bogus_key");

    /* a negative DRAM bandwidth: the first "bandwidth_GBps:" after the dram level */
    const char *dram = strstr(h100, "- name: dram");
    const char *bw = dram ? strstr(dram, "bandwidth_GBps:") : NULL;
    CHECK(bw != NULL);
    if (bw != NULL) {
        size_t at = (size_t)(bw - h100) + strlen("bandwidth_GBps:");
        while (h100[at] == ' ')
            at++;
        snprintf(text, n + 64, "%.*s-%s", (int)at, h100, h100 + at);
        bad_config("negative-dram-bw", text, "dram.bandwidth_GBps");
    }
    free(text);
    free(h100);
}

/* The good trace in tmpdir, its path in trace[n]. */
static void good_trace_file(char *trace, size_t n)
{
    snprintf(trace, n, "%s/good.json", tmpdir);
    tu_write_file(trace, good_trace);
}

/* Outputs into a folder that does not exist: nothing written. */
static void test_missing_dirs(void)
{
    char trace[256], args[1024], outdir[256];
    good_trace_file(trace, sizeof trace);

    /* --json into a directory that does not exist */
    snprintf(outdir, sizeof outdir, "%s/no-such-dir", tmpdir);
    snprintf(args, sizeof args, "run --hw " H100 " --trace '%s' --json '%s/out.json'", trace,
             outdir);
    char outpath[300];
    snprintf(outpath, sizeof outpath, "%s/out.json", outdir);
    expect_fail("json-no-dir", args, outpath, 0, NULL);
    CHECK(!tu_exists(outdir));

    /* JSON fine, CSV into a missing directory: all or nothing, the JSON goes too */
    snprintf(args, sizeof args,
             "run --hw " H100 " --trace '%s' --json '%s/out.json' --csv '%s/out.csv'", trace,
             tmpdir, outdir);
    snprintf(outpath, sizeof outpath, "%s/out.csv", outdir);
    expect_fail("csv-no-dir", args, outpath, 0, NULL);
}

/* gen llm and fit on models and layouts they cannot build. */
static void test_gen_fit_layouts(void)
{
    char args[1024];
    /* gen llm with a model config missing a required field */
    char model[256];
    snprintf(model, sizeof model, "%s/model.json", tmpdir);
    tu_write_file(model, "{\"model_type\": \"llama\",\n"
                      " \"hidden_size\": 4096,\n"
                      " \"num_hidden_layers\": 32,\n"
                      " \"num_attention_heads\": 32,\n"
                      " \"vocab_size\": 32000,\n"
                      " \"max_position_embeddings\": 4096}\n");
    snprintf(args, sizeof args, "gen llm --model '%s' --phase decode -o '%s/out.json'", model,
             tmpdir);
    expect_fail("gen-missing", args, model, 1, "intermediate_size");
    /* a million layers: refused rather than a 2 GB trace */
    tu_write_file(model, "{\"model_type\": \"llama\",\n"
                      " \"hidden_size\": 4096,\n"
                      " \"intermediate_size\": 11008,\n"
                      " \"num_hidden_layers\": 1000000,\n"
                      " \"num_attention_heads\": 32,\n"
                      " \"vocab_size\": 32000,\n"
                      " \"max_position_embeddings\": 4096}\n");
    expect_fail("gen-deep", args, model, 1, "num_hidden_layers");
    /* fit refuses the expert-parallel layouts gen llm cannot build, rather
     * than report a budget for them */
    static const char *const fit_ep[] = {"--tp 2 --dp 6 --ep 4", "--dp 4 --ep 8 --zero 1",
                                         "--dp 12 --ep 8 --zero 3"};
    for (size_t i = 0; i < sizeof fit_ep / sizeof fit_ep[0]; i++) {
        snprintf(args, sizeof args,
                 "fit --hw configs/nvidia-a100-sxm-80gb.yaml --model traces/models/mixtral-8x7b.json "
                 "--phase train --batch 1 --prompt 256 %s", fit_ep[i]);
        expect_fail("fit-ep", args, "", 0, "--ep");
    }
    /* gen llm's layout flags without what they need: an error naming the
     * flag, nothing written */
    static const struct { const char *flags, *field; } gen_bad[] = {
        {"--phase decode --batch 4 --expert-load 2", "--expert-load"},
        {"--phase train --batch 4 --prompt 256 --sp", "--sp"},
        {"--phase train --batch 4 --prompt 256 --vpp 2", "--vpp"},
        {"--phase train --batch 4 --prompt 254 --cp 2", "--prompt"},
        {"--phase train --batch 4 --prompt 256 --cp 2 --ep 2", "--cp"},
        {"--phase decode --batch 4 --cp 2", "--cp"},
        {"--phase decode --batch 4 --dropout 0.1", "--dropout"},
        {"--phase train --batch 8 --prompt 256 --dp 2 --ep 2 --expert-load 2.5", "--expert-load"},
    };
    for (size_t i = 0; i < sizeof gen_bad / sizeof gen_bad[0]; i++) {
        snprintf(args, sizeof args, "gen llm --model traces/models/mixtral-8x7b.json %s -o '%s/out.json'",
                 gen_bad[i].flags, tmpdir);
        expect_fail("gen-layout", args, "", 0, gen_bad[i].field);
    }
    /* and the pipelines it cannot build: 4 x 16 chunks of 32 layers */
    snprintf(args, sizeof args,
             "fit --hw configs/nvidia-a100-sxm-80gb.yaml --model traces/models/mixtral-8x7b.json "
             "--phase train --batch 8 --prompt 256 --pp 4 --vpp 16 --microbatches 4");
    expect_fail("fit-pp", args, "", 0, "--vpp");
    /* and the tensor-parallel splits gen refuses, as gen names them */
    snprintf(args, sizeof args,
             "fit --hw configs/nvidia-a100-sxm-80gb.yaml --model traces/models/llama-2-7b.json "
             "--phase train --batch 1 --prompt 256 --tp 3");
    expect_fail("fit-tp", args, "", 0, "num_attention_heads");
    snprintf(args, sizeof args,
             "fit --hw configs/nvidia-a100-sxm-80gb.yaml --model traces/models/llama-2-7b.json "
             "--phase decode --dp 4");
    expect_fail("fit-dp", args, "", 0, "--dp");
    /* a hybrid's split as gen checks it: 40 ranks divide the 40 attention
     * heads and the MLP but not the mixers' 128 heads and 8 groups */
    snprintf(args, sizeof args,
             "fit --hw configs/nvidia-h100-sxm.yaml --model traces/models/nemotron-nano-9b-v2.json "
             "--phase decode --tp 40");
    expect_fail("fit-hybrid-tp", args, "", 0, "mamba_num_heads");
}

/* Flag values out of range, and the layouts only gen or fit refuses. */
static void test_flag_ranges(void)
{
    char args[1024];
    /* flag values out of range, and fit's training-only flags: usage
     * errors (exit 2), nothing written */
    static const char *const usage_bad[] = {
        "gen llm --model traces/models/mixtral-8x7b.json --phase train --prompt 256 --dropout 1 -o OUT",
        "gen llm --model traces/models/mixtral-8x7b.json --phase train --prompt 256 --dropout x -o OUT",
        "gen llm --model traces/models/mixtral-8x7b.json --phase train --prompt 256 --context 5 -o OUT",
        "gen llm --model traces/models/mixtral-8x7b.json --phase train --prompt 256 --microbatches x -o OUT",
        "gen llm --model traces/models/mixtral-8x7b.json --phase decode --ubatch 512 -o OUT",
        "gen llm --model traces/models/mixtral-8x7b.json --phase prefill --ubatch 0 -o OUT",
        "fit --hw configs/nvidia-a100-sxm-80gb.yaml --model traces/models/mixtral-8x7b.json --phase decode --dropout 0.1",
        "fit --hw configs/nvidia-a100-sxm-80gb.yaml --model traces/models/mixtral-8x7b.json --phase train --dropout 1.5",
        "fit --hw configs/nvidia-a100-sxm-80gb.yaml --model traces/models/mixtral-8x7b.json --phase train --attn nope",
        "fit --hw configs/nvidia-a100-sxm-80gb.yaml --model traces/models/mixtral-8x7b.json --phase train --dp 8 --expert-load 2",
        "fit --hw configs/nvidia-a100-sxm-80gb.yaml --model traces/models/mixtral-8x7b.json --phase train --dp 8 --ep 8 --expert-load 0.5",
    };
    for (size_t i = 0; i < sizeof usage_bad / sizeof usage_bad[0]; i++) {
        char a2[1024];
        snprintf(a2, sizeof a2, "%s", usage_bad[i]);
        char *o = strstr(a2, "OUT");
        if (o != NULL)
            snprintf(o, sizeof a2 - (size_t)(o - a2), "'%s/out.json'", tmpdir);
        expect_usage("flag-range", a2);
        snprintf(args, sizeof args, "%s/out.json", tmpdir);
        CHECK(!tu_exists(args));
    }
    /* a trace whose mirrored slices (--dcn) are not in the system: the
     * collective's group names the missing device, no internal error */
    snprintf(args, sizeof args,
             "gen llm --model traces/models/smollm-135m.json --phase train --batch 1 --prompt 64 "
             "--tp 3 --dp 2 --dcn 2 -o '%s/dcn.json'", tmpdir);
    char *gerr = NULL;
    CHECK_EQ_INT(run_cli(args, &gerr), 0);
    free(gerr);
    snprintf(args, sizeof args, "run --hw configs/systems/nvidia-hgx-h100.yaml --trace '%s/dcn.json'", tmpdir);
    expect_fail("run-dcn-mirrors", args, "dcn.json", 1, ".group");
    /* ZeRO-3 with gradient accumulation, which gen refuses */
    snprintf(args, sizeof args,
             "fit --hw configs/nvidia-a100-sxm-80gb.yaml --model traces/models/llama-2-7b.json "
             "--phase train --batch 8 --prompt 256 --dp 8 --zero 3 --microbatches 4");
    expect_usage("fit-zero3-ga", args);
    /* and the context-parallel ones */
    snprintf(args, sizeof args,
             "fit --hw configs/nvidia-a100-sxm-80gb.yaml --model traces/models/llama-2-7b.json "
             "--phase train --batch 8 --prompt 1022 --cp 2");
    expect_fail("fit-cp", args, "", 0, "--prompt");
}

/* Usage errors, bad numbers, and a failed run's --out folder. */
static void test_usage(void)
{
    char trace[256], args[1024];
    good_trace_file(trace, sizeof trace);
    /* usage errors */
    snprintf(args, sizeof args, "run --trace '%s' --json '%s/out.json'", trace, tmpdir);
    expect_usage("run-no-hw", args);
    expect_usage("info-no-hw", "info");
    snprintf(args, sizeof args, "run --hw " H100 " --trace '%s' --bogus", trace);
    expect_usage("run-bad-option", args);
    snprintf(args, sizeof args, "gen llm --model traces/models/llama-2-7b.json --phase decode");
    expect_usage("gen-no-output", args);
    expect_usage("no-verb", "");
    char out[256];
    snprintf(out, sizeof out, "%s/out.json", tmpdir);
    CHECK(!tu_exists(out));

    /* empty or hexadecimal numbers for options */
    snprintf(args, sizeof args, "run --hw " H100 " --trace '%s' --top ''", trace);
    expect_usage("top-empty", args);
    snprintf(args, sizeof args, "run --hw " H100 " --trace '%s' --out '%s/o' --timeline-granularity-us 0x10",
             trace, tmpdir);
    expect_usage("gran-hex", args);
    /* a run that fails after --out made its folder takes the folder away */
    char huge[300], od[300];
    snprintf(huge, sizeof huge, "%s/huge.json", tmpdir);
    tu_write_file(huge, "{\"strata_trace\": 1, \"ops\": [{\"id\": \"a\", \"kind\": \"generic\","
                        " \"flops\": 1e25, \"bytes\": 0}]}\n");
    snprintf(od, sizeof od, "%s/made-by-run", tmpdir);
    snprintf(args, sizeof args, "run --hw " H100 " --trace '%s' --out '%s'", huge, od);
    expect_fail("out-then-fail", args, huge, 0, "simulated time passed");
    CHECK(!tu_exists(od));

    /* --json and --csv into one file */
    snprintf(args, sizeof args, "run --hw " H100 " --trace '%s' --json '%s/out.json' --csv '%s/out.json'",
             trace, tmpdir, tmpdir);
    expect_usage("json-is-csv", args);
}

/* Outputs that are pipes or links; then the good trace runs (so the
 * failures above are the inputs' fault). */
static void test_special_outputs(void)
{
    char trace[256], args[1024], out[256];
    good_trace_file(trace, sizeof trace);
    snprintf(out, sizeof out, "%s/out.json", tmpdir);
    /* a path that is a pipe (or a device) is refused, not renamed over */
    char fifo[300];
    snprintf(fifo, sizeof fifo, "%s/a-fifo", tmpdir);
    CHECK_EQ_INT(mkfifo(fifo, 0644), 0);
    snprintf(args, sizeof args, "run --hw " H100 " --trace '%s' --json '%s'", trace, fifo);
    expect_fail("json-into-fifo", args, fifo, 0, "not a regular file");
    struct stat st;
    CHECK(stat(fifo, &st) == 0 && S_ISFIFO(st.st_mode));
    remove(fifo);
    /* a dangling symbolic link is refused; a link to a file writes the file */
    char link[300], target[300];
    snprintf(link, sizeof link, "%s/a-link", tmpdir);
    snprintf(target, sizeof target, "%s/target.txt", tmpdir);
    CHECK_EQ_INT(symlink("target.txt", link), 0);
    snprintf(args, sizeof args, "run --hw " H100 " --trace '%s' --json '%s'", trace, link);
    expect_fail("json-dangling", args, link, 0, "symbolic link");
    tu_write_file(target, "old\n");
    char *err = NULL;
    CHECK_EQ_INT(run_cli(args, &err), 0);
    free(err);
    CHECK(lstat(link, &st) == 0 && S_ISLNK(st.st_mode));
    char *got = tu_read_file(target, NULL);
    CHECK_STR_CONTAINS(got, "strata_report");
    free(got);
    remove(link);
    remove(target);

    /* and the good trace itself runs (so the failures above are the inputs' fault) */
    snprintf(args, sizeof args, "run --hw " H100 " --trace '%s' --json '%s/out.json'", trace,
             tmpdir);
    err = NULL;
    CHECK_EQ_INT(run_cli(args, &err), 0);
    free(err);
    CHECK(tu_exists(out));
    CHECK_EQ_INT(count_prefixed("out.json.tmp"), 0);
}

/* An output that is one of the command's inputs (by any name: a link
 * too) is refused before anything is written; the input is unchanged
 * (issue 17, item 6). */
static void test_output_is_input(void)
{
    char trace[256], model[256], link[256], cfg[256], args[1400];
    snprintf(trace, sizeof trace, "%s/in-trace.json", tmpdir);
    snprintf(model, sizeof model, "%s/in-model.json", tmpdir);
    snprintf(link, sizeof link, "%s/in-link.json", tmpdir);
    snprintf(cfg, sizeof cfg, "%s/in-hw.yaml", tmpdir);
    char *t0 = tu_read_file("traces/examples/llama-2-7b-decode-b1-ctx2048.json", NULL);
    char *m0 = tu_read_file("traces/models/llama-2-7b.json", NULL);
    char *c0 = tu_read_file(H100, NULL);
    CHECK(t0 != NULL && m0 != NULL && c0 != NULL);
    if (t0 == NULL || m0 == NULL || c0 == NULL)
        return;
    tu_write_file(trace, t0);
    tu_write_file(model, m0);
    tu_write_file(cfg, c0);
    CHECK(symlink(model, link) == 0);
    static const char *const what[] = {"run --json TRACE", "run --csv HW", "gen -o MODEL", "gen -o LINK"};
    for (size_t i = 0; i < sizeof what / sizeof what[0]; i++) {
        if (i == 0)
            snprintf(args, sizeof args, "run --hw '%s' --trace '%s' --json '%s'", cfg, trace, trace);
        else if (i == 1)
            snprintf(args, sizeof args, "run --hw '%s' --trace '%s' --csv '%s'", cfg, trace, cfg);
        else
            snprintf(args, sizeof args, "gen llm --model '%s' --phase decode -o '%s'", model,
                     i == 2 ? model : link);
        char *err = NULL;
        CHECK_EQ_INT(run_cli(args, &err), 1);
        CHECK_STR_CONTAINS(err, "cannot write: it is one of this command's inputs");
        printf("%-16s %s", what[i], err ? err : "(no stderr)\n");
        free(err);
    }
    char *t1 = tu_read_file(trace, NULL), *m1 = tu_read_file(model, NULL), *c1 = tu_read_file(cfg, NULL);
    CHECK(t1 != NULL && strcmp(t0, t1) == 0);
    CHECK(m1 != NULL && strcmp(m0, m1) == 0);
    CHECK(c1 != NULL && strcmp(c0, c1) == 0);
    free(t0), free(m0), free(c0), free(t1), free(m1), free(c1);
}

/* A run --out that fails after writing some files puts the previous run's
 * files back (issue 17.4: it used to delete them); a second writer while
 * one holds the folder stops before writing (17.5). */
static void test_out_keeps_old(void)
{
    char dir[256], args[1400], path[300];
    snprintf(dir, sizeof dir, "%s/keep", tmpdir);
    const char *tr = "traces/examples/llama-2-7b-decode-b1-ctx2048.json";
    snprintf(args, sizeof args, "run --hw " H100 " --trace %s --out '%s' --no-whatif --quiet", tr, dir);
    char *err = NULL;
    CHECK_EQ_INT(run_cli(args, &err), 0);
    free(err);
    snprintf(path, sizeof path, "%s/report.json", dir);
    char *rep0 = tu_read_file(path, NULL);
    snprintf(path, sizeof path, "%s/ops.csv", dir);
    char *ops0 = tu_read_file(path, NULL);
    CHECK(rep0 != NULL && ops0 != NULL);
    /* the second run's timeline cannot be written (a folder has its name),
     * after its report.json and ops.csv were */
    snprintf(path, sizeof path, "%s/timeline.json", dir);
    CHECK(unlink(path) == 0 && mkdir(path, 0755) == 0);
    snprintf(args, sizeof args, "run --hw " H100 " --trace traces/examples/mistral-7b-prefill-512.json "
             "--out '%s' --no-whatif --quiet", dir);
    CHECK_EQ_INT(run_cli(args, &err), 1);
    printf("%-16s %s", "out fails late", err ? err : "(no stderr)\n");
    free(err);
    snprintf(path, sizeof path, "%s/report.json", dir);
    char *rep1 = tu_read_file(path, NULL);
    snprintf(path, sizeof path, "%s/ops.csv", dir);
    char *ops1 = tu_read_file(path, NULL);
    CHECK(rep1 != NULL && rep0 != NULL && strcmp(rep0, rep1) == 0);
    CHECK(ops1 != NULL && ops0 != NULL && strcmp(ops0, ops1) == 0);
    snprintf(path, sizeof path, "%s/report.json.strata-old", dir);
    CHECK(!tu_exists(path));
    snprintf(path, sizeof path, "%s/.strata-lock", dir);
    CHECK(!tu_exists(path));
    free(rep0), free(ops0), free(rep1), free(ops1);
    /* another writer holds the folder: refused, nothing written */
    char dir2[256];
    snprintf(dir2, sizeof dir2, "%s/busy", tmpdir);
    CHECK(mkdir(dir2, 0755) == 0);
    snprintf(path, sizeof path, "%s/.strata-lock", dir2);
    int fd = open(path, O_RDWR | O_CREAT, 0644);
    struct flock fl;
    memset(&fl, 0, sizeof fl);
    fl.l_type = F_WRLCK;
    fl.l_whence = SEEK_SET;
    CHECK(fd >= 0 && fcntl(fd, F_SETLK, &fl) == 0);
    pid_t pid = fork();         /* the lock is this process's: the run is a child */
    if (pid == 0) {
        snprintf(args, sizeof args, "run --hw " H100 " --trace %s --out '%s' --no-whatif --quiet", tr, dir2);
        char *e2 = NULL;
        int st = run_cli(args, &e2);
        _exit(st == 1 && e2 != NULL && strstr(e2, "another strata run is writing this folder") ? 0 : 1);
    }
    int st = 0;
    CHECK(pid > 0 && waitpid(pid, &st, 0) == pid && WIFEXITED(st) && WEXITSTATUS(st) == 0);
    snprintf(path, sizeof path, "%s/report.json", dir2);
    CHECK(!tu_exists(path));
    close(fd);
}

/* The per-run work budget (issue 17): past it a run stops with an error
 * naming the limit and how to raise it, and writes nothing. */
static void test_work_budget(void)
{
    char args[512], *err = NULL, json[160];
    snprintf(json, sizeof json, "%s/budget.json", tmpdir);
    snprintf(args, sizeof args, "run --hw " H100 " --trace traces/examples/llama-2-7b-decode-b1-ctx2048.json "
             "--max-events 1000 --json '%s'", json);
    CHECK_EQ_INT(run_cli(args, &err), 1);
    CHECK_STR_CONTAINS(err, "more than 1000 engine events");
    CHECK_STR_CONTAINS(err, "--max-events");
    CHECK_STR_CONTAINS(err, "STRATA_MAX_EVENTS");
    free(err);
    CHECK(!tu_exists(json));
    /* with collectives in flight when the budget stops the run: still the
     * budget's error, not a deadlock (they were unfinished, not stuck) */
    char tp[160];
    snprintf(tp, sizeof tp, "%s/budget-tp.json", tmpdir);
    snprintf(args, sizeof args, "gen llm --model traces/models/llama-2-7b.json --phase decode --tp 2 -o '%s'", tp);
    CHECK_EQ_INT(run_cli(args, &err), 0);
    free(err);
    snprintf(args, sizeof args, "run --hw configs/systems/nvidia-dgx-a100.yaml --trace '%s' --max-events 500", tp);
    CHECK_EQ_INT(run_cli(args, &err), 1);
    CHECK_STR_CONTAINS(err, "more than 500 engine events");
    CHECK(err != NULL && strstr(err, "deadlock") == NULL);
    free(err);
    setenv("STRATA_MAX_EVENTS", "700", 1);   /* every mode: here validate */
    CHECK_EQ_INT(run_cli("validate --data traces/validation/new-chips.csv --quiet", &err), 1);
    CHECK_STR_CONTAINS(err, "more than 700 engine events");
    free(err);
    unsetenv("STRATA_MAX_EVENTS");
    snprintf(args, sizeof args, "run --hw " H100 " --trace traces/examples/two-streams.json --max-events x");
    CHECK_EQ_INT(run_cli(args, &err), 2);
    free(err);
}

/* The memory budget (issue 17): a run past it stops with an error naming
 * the limit and how to raise it; nothing is written and an --out folder
 * keeps its old files.  (tests/test_unit_membudget.c covers where it is
 * checked.) */
static void test_memory_budget(void)
{
    char args[768], *err = NULL, json[160], dir[160], path[200];
    snprintf(json, sizeof json, "%s/mem.json", tmpdir);
    snprintf(dir, sizeof dir, "%s/mem-out", tmpdir);
    snprintf(args, sizeof args, "run --hw " H100 " --trace traces/examples/two-streams.json --out '%s' --quiet "
             "--no-whatif", dir);
    setenv("STRATA_GNUPLOT", "none", 1);
    CHECK_EQ_INT(run_cli(args, &err), 0);
    free(err);
    snprintf(path, sizeof path, "%s/report.json", dir);
    char *before = tu_read_file(path, NULL);
    CHECK(before != NULL);
    const char *ways[2] = {"--max-memory 1MiB", "STRATA_MAX_MEMORY=1MiB"};
    for (int w = 0; w < 2; w++) {
        if (w == 1)
            setenv("STRATA_MAX_MEMORY", "1MiB", 1);
        snprintf(args, sizeof args, "run --hw " H100 " --trace traces/examples/llama-2-7b-decode-b1-ctx2048.json "
                 "%s --json '%s' --out '%s' --quiet", w == 0 ? ways[0] : "", json, dir);
        CHECK_EQ_INT(run_cli(args, &err), 1);
        CHECK_STR_CONTAINS(err, "1 MiB, its memory budget");
        CHECK_STR_CONTAINS(err, "--max-memory");
        CHECK_STR_CONTAINS(err, "STRATA_MAX_MEMORY");
        free(err);
        CHECK(!tu_exists(json));
        char *after = tu_read_file(path, NULL);
        CHECK(after != NULL && before != NULL && strcmp(after, before) == 0);
        free(after);
        CHECK_EQ_INT(tu_count_entries(dir), 5);  /* the old run's files, nothing staged */
    }
    /* every command: here validate */
    CHECK_EQ_INT(run_cli("validate --data traces/validation/new-chips.csv --quiet", &err), 1);
    CHECK_STR_CONTAINS(err, "memory budget");
    free(err);
    setenv("STRATA_MAX_MEMORY", "lots", 1);
    CHECK_EQ_INT(run_cli("info --hw " H100, &err), 2);
    CHECK_STR_CONTAINS(err, "STRATA_MAX_MEMORY");
    free(err);
    unsetenv("STRATA_MAX_MEMORY");
    unsetenv("STRATA_GNUPLOT");
    CHECK_EQ_INT(run_cli("run --hw " H100 " --trace traces/examples/two-streams.json --max-memory 5KiB", &err), 2);
    CHECK_STR_CONTAINS(err, "--max-memory");
    free(err);
    free(before);
}

int main(void)
{
    if (tu_mkdtemp(tmpdir, sizeof tmpdir, "strata-bad") != 0)
        return 1;
    test_work_budget();
    test_memory_budget();
    test_traces();
    test_configs();
    test_missing_dirs();
    test_gen_fit_layouts();
    test_flag_ranges();
    test_usage();
    test_special_outputs();
    test_output_is_input();
    test_out_keeps_old();
    tu_rmtree(tmpdir);
    TEST_MAIN_END();
}
