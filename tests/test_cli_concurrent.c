/* test_cli_concurrent.c: two `strata run --out DIR` into one new folder at
 * once, 200 times (issue 17).  Each pair must leave DIR with one complete,
 * consistent report (report.json that parses, with its ops.csv), no
 * temporary files and no lock; a run that exits 0 must have its output
 * there whole, and a loser must fail cleanly. */
#include <cjson/cJSON.h>
#include <dirent.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "test.h"
#include "util.h"

#define PAIRS 200

int main(void)
{
    char tmp[64];
    if (chdir(STRATA_SOURCE_DIR) != 0 || tu_mkdtemp(tmp, sizeof tmp, "strata-conc") != 0)
        return 1;
    setenv("STRATA_GNUPLOT", "none", 1);
    int both_ok = 0, one_ok = 0, lost = 0;
    for (int i = 0; i < PAIRS; i++) {
        char dir[128], cmd[2048];
        snprintf(dir, sizeof dir, "%s/out%03d", tmp, i);
        /* both start together; each one's exit status into its own file */
        snprintf(cmd, sizeof cmd,
                 "( '%s' run --hw configs/nvidia-h100-sxm.yaml --trace traces/examples/two-streams.json "
                 "--out '%s' --no-whatif --quiet >/dev/null 2>&1; echo $? > '%s.a' ) & "
                 "( '%s' run --hw configs/nvidia-h100-sxm.yaml --trace traces/examples/two-streams.json "
                 "--out '%s' --no-whatif --quiet >/dev/null 2>&1; echo $? > '%s.b' ) & wait",
                 STRATA_BINARY, dir, dir, STRATA_BINARY, dir, dir);
        CHECK(tu_sh(cmd) == 0);
        char pa[160], pb[160];
        snprintf(pa, sizeof pa, "%s.a", dir);
        snprintf(pb, sizeof pb, "%s.b", dir);
        char *sa = tu_read_file(pa, NULL), *sb = tu_read_file(pb, NULL);
        int a = sa ? atoi(sa) : -1, b = sb ? atoi(sb) : -1;
        free(sa);
        free(sb);
        CHECK(a == 0 || a == 1);
        CHECK(b == 0 || b == 1);
        if (a == 0 && b == 0)
            both_ok++;      /* one after the other: the second replaced the first whole */
        else if (a == 0 || b == 0)
            one_ok++;       /* overlapped: the loser stopped at the lock */
        else
            lost++;         /* neither: a failure the pair should never have */
        /* what is in the folder: a complete report, nothing half-made */
        char p[256];
        snprintf(p, sizeof p, "%s/report.json", dir);
        char *js = tu_read_file(p, NULL);
        cJSON *doc = js ? cJSON_Parse(js) : NULL;
        CHECK(doc != NULL && cJSON_GetObjectItemCaseSensitive(doc, "ops") != NULL);
        cJSON_Delete(doc);
        free(js);
        snprintf(p, sizeof p, "%s/ops.csv", dir);
        CHECK(tu_exists(p));
        snprintf(p, sizeof p, "%s/.strata-lock", dir);
        CHECK(!tu_exists(p));
        DIR *dd = opendir(dir);
        struct dirent *e;
        while (dd != NULL && (e = readdir(dd)) != NULL)
            if (strstr(e->d_name, ".tmp.") != NULL) {
                fprintf(stderr, "  %s: a temporary file was left: %s\n", dir, e->d_name);
                CHECK(0);
            }
        if (dd != NULL)
            closedir(dd);
    }
    printf("  %d pairs: %d ran one after the other, %d overlapped (one stopped at the lock), "
           "%d lost both\n", PAIRS, both_ok, one_ok, lost);
    CHECK_EQ_INT(lost, 0);
    tu_rmtree(tmp);
    TEST_MAIN_END();
}
