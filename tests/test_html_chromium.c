/* test_html_chromium.c: report.html as a person sees it.  `strata run --out`
 * on a small trace, then headless Chromium takes a screenshot (it must not
 * be blank) and dumps the DOM, which must hold the predicted total time and
 * each plot.  Skips (and says so) where Chromium is not installed; the
 * README's test command installs it. */
#include <cjson/cJSON.h>
#include <sys/stat.h>

#include "test.h"
#include "util.h"

#define CHROMIUM "/usr/bin/chromium"
#define CHROME_FLAGS                                                                       \
    "--headless --no-sandbox --disable-gpu --disable-quic --no-first-run "                 \
    "--disable-background-networking --disable-component-update --disable-sync"

int main(void)
{
    if (access(CHROMIUM, X_OK) != 0) {
        printf("SKIP: chromium not installed (apt-get install chromium)\n");
        TEST_MAIN_END();
    }
    char dir[64] = "/tmp/strata-html-XXXXXX", cmd[4096], p[512];
    CHECK(mkdtemp(dir) != NULL);
    setenv("STRATA_GNUPLOT", "none", 1);
    snprintf(cmd, sizeof cmd,
             "'%s' run --hw configs/nvidia-a100-sxm-80gb.yaml --trace traces/examples/two-streams.json "
             "--out '%s/out' --quiet",
             STRATA_BINARY, dir);
    CHECK_EQ_INT(tu_sh(cmd), 0);
    /* the total time the report states */
    snprintf(p, sizeof p, "%s/out/report.json", dir);
    char *js = tu_read_file(p, NULL);
    cJSON *rep = js ? cJSON_Parse(js) : NULL;
    free(js);
    CHECK(rep != NULL);
    double total = rep ? cJSON_GetObjectItemCaseSensitive(rep, "total_time_s")->valuedouble : 0;
    cJSON_Delete(rep);
    char want[64];
    snprintf(want, sizeof want, "%.3f ms", total * 1e3);

    snprintf(cmd, sizeof cmd,
             "timeout 120 %s %s --user-data-dir='%s/profile1' --window-size=1200,1800 "
             "--screenshot='%s/shot.png' 'file://%s/out/report.html' >/dev/null 2>&1",
             CHROMIUM, CHROME_FLAGS, dir, dir, dir);
    tu_sh(cmd);
    /* a blank page of this size compresses to a few kB; the report is far larger */
    snprintf(cmd, sizeof cmd,
             "timeout 120 %s %s --user-data-dir='%s/profile0' --window-size=1200,1800 "
             "--screenshot='%s/blank.png' 'data:text/html,<html><body></body></html>' >/dev/null 2>&1",
             CHROMIUM, CHROME_FLAGS, dir, dir);
    tu_sh(cmd);
    size_t shot = 0, blank = 0;
    snprintf(p, sizeof p, "%s/shot.png", dir);
    free(tu_read_file(p, &shot));
    snprintf(p, sizeof p, "%s/blank.png", dir);
    free(tu_read_file(p, &blank));
    printf("  screenshot %zu bytes, blank page %zu bytes\n", shot, blank);
    CHECK(shot > 20000);
    CHECK(shot > 5 * blank);

    snprintf(cmd, sizeof cmd,
             "timeout 120 %s %s --user-data-dir='%s/profile2' --dump-dom 'file://%s/out/report.html' "
             ">'%s/dom.html' 2>/dev/null",
             CHROMIUM, CHROME_FLAGS, dir, dir, dir);
    tu_sh(cmd);
    snprintf(p, sizeof p, "%s/dom.html", dir);
    char *dom = tu_read_file(p, NULL);
    CHECK_STR_CONTAINS(dom, "id=\"total-time\"");
    CHECK_STR_CONTAINS(dom, want);
    CHECK_STR_CONTAINS(dom, "id=\"plot-roofline\"");
    CHECK_STR_CONTAINS(dom, "id=\"plot-stalls\"");
    CHECK_STR_CONTAINS(dom, "id=\"plot-bandwidth\"");
    free(dom);
    snprintf(cmd, sizeof cmd, "rm -rf '%s'", dir);
    tu_sh(cmd);
    TEST_MAIN_END();
}
