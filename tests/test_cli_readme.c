/* test_cli_readme.c: every command README.md shows under "Using it" runs
 * as written (issue 33: several usage lines failed as written).
 *
 * The lines between <!-- readme-commands --> and <!-- /readme-commands -->
 * that start with `strata` (a trailing backslash continues a line) run in
 * order in a scratch folder that sees the source's configs/ and traces/,
 * with `strata` the binary under test; each must exit 0.  A README edit
 * that breaks one fails here. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "test.h"
#include "util.h"

#define MAX_CMDS 64

int main(void)
{
#ifdef __SANITIZE_ADDRESS__
    /* the same commands run under the sanitizer in test_cli_install (from a prefix) */
    printf("SKIP: ASan build; test_cli_install runs these commands\n");
    return 0;
#endif
    static char cmds[MAX_CMDS][1024];
    unsigned n = tu_readme_commands("README.md", cmds, MAX_CMDS);
    printf("  %u commands in README.md's \"Using it\"\n", n);
    CHECK(n >= 20);

    char dir[64], cmd[1600];
    CHECK(tu_mkdtemp(dir, sizeof dir, "strata-readme") == 0);
    snprintf(cmd, sizeof cmd, "ln -s '%s/configs' '%s/configs' && ln -s '%s/traces' '%s/traces'",
             STRATA_SOURCE_DIR, dir, STRATA_SOURCE_DIR, dir);
    CHECK_EQ_INT(tu_sh(cmd), 0);
    for (unsigned i = 0; i < n; i++) {
        struct timespec t0, t1;
        clock_gettime(CLOCK_MONOTONIC, &t0);
        snprintf(cmd, sizeof cmd, "cd '%s' && STRATA_GNUPLOT=none '%s' %s >out.txt 2>&1", dir, STRATA_BINARY,
                 cmds[i]);
        int rc = tu_sh(cmd);
        clock_gettime(CLOCK_MONOTONIC, &t1);
        double s = (double)(t1.tv_sec - t0.tv_sec) + 1e-9 * (double)(t1.tv_nsec - t0.tv_nsec);
        printf("  %5.2f s  strata %.100s\n", s, cmds[i]);
        if (rc != 0) {
            char out[200];
            snprintf(out, sizeof out, "%s/out.txt", dir);
            char *o = tu_read_file(out, NULL);
            fprintf(stderr, "  strata %s: exit %d\n%s\n", cmds[i], rc, o ? o : "");
            free(o);
        }
        CHECK_EQ_INT(rc, 0);
    }
    tu_rmtree(dir);
    TEST_MAIN_END();
}
