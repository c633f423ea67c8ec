/* test_cli_install.c: `cmake --install` into a temporary prefix, then the
 * README's examples from that prefix by shipped names (--hw h100-sxm,
 * --model llama-2-7b), outside the source tree; the man page covers every
 * verb; completion files are there and load; names that match several
 * files are errors listing them; gen llm says what it assumed. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "test.h"
#include "util.h"

static char tmp[64];

/* Runs cmd in tmp; its stdout and stderr into *out / *err. */
static int sh(const char *cmd, char **out, char **err)
{
    char full[4096];
    snprintf(full, sizeof full, "cd '%s' && env -u STRATA_PATH %s >'%s/o.txt' 2>'%s/e.txt'", tmp,
             cmd, tmp, tmp);
    int rc = tu_sh(full);
    char p[160];
    snprintf(p, sizeof p, "%s/o.txt", tmp);
    *out = tu_read_file(p, NULL);
    snprintf(p, sizeof p, "%s/e.txt", tmp);
    *err = tu_read_file(p, NULL);
    return rc;
}

int main(void)
{
    if (chdir(STRATA_SOURCE_DIR) != 0 || tu_mkdtemp(tmp, sizeof tmp, "strata-install") != 0)
        return 1;
    if (tu_sh("command -v cmake >/dev/null 2>&1") != 0) {
        printf("SKIP: cmake not on PATH\n");
        return 0;
    }
    char build[1024], cmd[4096];
    snprintf(build, sizeof build, "%s", STRATA_BINARY);
    *strrchr(build, '/') = '\0';
    snprintf(cmd, sizeof cmd, "cmake --install '%s' --prefix '%s/pfx' >/dev/null", build, tmp);
    CHECK(tu_sh(cmd) == 0);
    char *out = NULL, *err = NULL;
    char bin[200];
    snprintf(bin, sizeof bin, "%s/pfx/bin/strata", tmp);
    CHECK(tu_exists(bin));

    /* the shipped data is found in the prefix, by name */
    snprintf(cmd, sizeof cmd, "'%s' list configs", bin);
    CHECK(sh(cmd, &out, &err) == 0);
    char want[300];
    snprintf(want, sizeof want, "%s/pfx/bin/../share/strata/configs/nvidia-h100-sxm.yaml", tmp);
    CHECK_STR_CONTAINS(out, want);
    CHECK_STR_CONTAINS(out, "nvidia-b200");
    free(out), free(err);
    snprintf(cmd, sizeof cmd, "'%s' list models", bin);
    CHECK(sh(cmd, &out, &err) == 0);
    CHECK_STR_CONTAINS(out, "llama-2-7b");
    free(out), free(err);

    /* the README's examples, by name, from outside the source tree */
    snprintf(cmd, sizeof cmd, "'%s' info --hw h100-sxm", bin);
    CHECK(sh(cmd, &out, &err) == 0);
    CHECK_STR_CONTAINS(out, "nvidia-h100-sxm (family gpu");
    free(out), free(err);
    snprintf(cmd, sizeof cmd, "'%s' gen llm --model llama-2-7b --phase decode --context 2048 -o dec.json", bin);
    CHECK(sh(cmd, &out, &err) == 0);
    CHECK_STR_CONTAINS(out, "2048 cached");
    free(out), free(err);
    snprintf(cmd, sizeof cmd, "'%s' run --hw h100-sxm --trace dec.json --set dram.bandwidth=4.8TB/s", bin);
    CHECK(sh(cmd, &out, &err) == 0);
    CHECK_STR_CONTAINS(out, "nvidia-h100-sxm[dram.bandwidth=4.8TB/s]");
    free(out), free(err);
    snprintf(cmd, sizeof cmd, "'%s' fit --hw rtx-4090 --model llama-2-70b --phase decode", bin);
    CHECK(sh(cmd, &out, &err) == 0);
    CHECK_STR_CONTAINS(out, "DOES NOT FIT");
    CHECK_STR_CONTAINS(out, "(no --context");
    free(out), free(err);
    snprintf(cmd, sizeof cmd, "'%s' sweep --hw h100-sxm --trace dec.json --vary l2.capacity=25MiB,50MiB --csv s.csv", bin);
    CHECK(sh(cmd, &out, &err) == 0);
    free(out), free(err);
    snprintf(cmd, sizeof cmd, "'%s' info --hw systems/nvidia-dgx-a100", bin);
    CHECK(sh(cmd, &out, &err) == 0);
    CHECK_STR_CONTAINS(out, "system nvidia-dgx-a100");
    free(out), free(err);
    /* a name that matches several: an error listing them */
    snprintf(cmd, sizeof cmd, "'%s' info --hw h100", bin);
    CHECK(sh(cmd, &out, &err) == 1);
    CHECK_STR_CONTAINS(err, "ambiguous");
    CHECK_STR_CONTAINS(err, "nvidia-h100-pcie");
    CHECK_STR_CONTAINS(err, "nvidia-h100-sxm");
    free(out), free(err);
    snprintf(cmd, sizeof cmd, "'%s' info --hw nosuchchip", bin);
    CHECK(sh(cmd, &out, &err) == 1);
    CHECK_STR_CONTAINS(err, "strata list configs");
    free(out), free(err);
    /* gen llm warns about a flag that does not apply */
    snprintf(cmd, sizeof cmd, "'%s' gen llm --model llama-2-7b --phase decode --prompt 2048 -o d2.json", bin);
    CHECK(sh(cmd, &out, &err) == 0);
    CHECK_STR_CONTAINS(err, "warning: --prompt applies to prefill and train");
    CHECK_STR_CONTAINS(out, "0 cached (no --context)");
    free(out), free(err);
    snprintf(cmd, sizeof cmd, "'%s' -V", bin);
    CHECK(sh(cmd, &out, &err) == 0);
    CHECK_STR_CONTAINS(out, "strata ");
    free(out), free(err);

    /* the man page has a section per verb of `strata --help` */
    char man[200];
    snprintf(man, sizeof man, "%s/pfx/share/man/man1/strata.1", tmp);
    char *page = tu_read_file(man, NULL);
    CHECK(page != NULL);
    snprintf(cmd, sizeof cmd, "'%s' --help", bin);
    CHECK(sh(cmd, &out, &err) == 0);
    for (const char *p = out ? strstr(out, "  strata ") : NULL; p != NULL; p = strstr(p + 1, "  strata ")) {
        char verb[32];
        if (sscanf(p + 9, "%31s", verb) != 1 || strcmp(verb, "help") == 0 || strcmp(verb, "version") == 0)
            continue;
        char sec[64];
        snprintf(sec, sizeof sec, ".SS %s", verb);
        if (page == NULL || strstr(page, sec) == NULL) {
            fprintf(stderr, "  the man page has no section for %s\n", verb);
            CHECK(0);
        }
    }
    free(out), free(err);
    free(page);
    /* completion: installed, and bash loads it */
    char comp[200];
    snprintf(comp, sizeof comp, "%s/pfx/share/bash-completion/completions/strata", tmp);
    CHECK(tu_exists(comp));
    snprintf(cmd, sizeof cmd, "bash -c \"source '%s' && complete -p strata\"", comp);
    CHECK(sh(cmd, &out, &err) == 0);
    CHECK_STR_CONTAINS(out, "_strata");
    free(out), free(err);
    snprintf(comp, sizeof comp, "%s/pfx/share/zsh/site-functions/_strata", tmp);
    CHECK(tu_exists(comp));

    /* the documentation, the trace format, the validation data and example inputs */
    static const char *const installed[] = {"share/doc/strata/README.md", "share/doc/strata/trace-format.md",
                                            "share/doc/strata/report.md", "share/doc/strata/img/demo-roofline.png",
                                            "share/strata/traces/validation/calibration.csv",
                                            "share/strata/traces/chakra/tiny-step.json",
                                            "share/strata/configs/specs/families/blackwell.yaml"};
    for (size_t i = 0; i < sizeof installed / sizeof installed[0]; i++) {
        char p[300];
        snprintf(p, sizeof p, "%s/pfx/%s", tmp, installed[i]);
        if (!tu_exists(p))
            fprintf(stderr, "  not installed: %s\n", installed[i]);
        CHECK(tu_exists(p));
    }
    /* a spec by name, and a spec written outside the tree finds the installed family file */
    snprintf(cmd, sizeof cmd, "'%s' new-chip --spec nvidia-b200 -o b200.yaml --quiet", bin);
    CHECK(sh(cmd, &out, &err) == 0);
    free(out), free(err);
    snprintf(cmd, sizeof cmd, "cp '%s/configs/specs/nvidia-l40.yaml' mine.yaml && '%s' new-chip --spec mine.yaml "
             "-o mine-cfg.yaml --quiet", STRATA_SOURCE_DIR, bin);
    CHECK(sh(cmd, &out, &err) == 0);
    free(out), free(err);
    /* every command of README.md's "Using it", as written, from this folder outside the tree */
    static char cmds[64][1024];
    unsigned nc = tu_readme_commands("README.md", cmds, 64);
    CHECK(nc >= 20);
    for (unsigned i = 0; i < nc; i++) {
        snprintf(cmd, sizeof cmd, "STRATA_GNUPLOT=none '%s' %s", bin, cmds[i]);
        int rc = sh(cmd, &out, &err);
        if (rc != 0)
            fprintf(stderr, "  from the prefix, strata %s: exit %d\n%s\n", cmds[i], rc, err ? err : "");
        CHECK_EQ_INT(rc, 0);
        free(out), free(err);
    }
    tu_rmtree(tmp);
    TEST_MAIN_END();
}
