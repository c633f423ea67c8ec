/* cmd_info.c: `strata info`: a config's derived figures. */
#include <stdio.h>
#include <string.h>

#include "cfg.h"
#include "cli.h"
#include "diag.h"
#include "info.h"
#include "system.h"

const char cli_info_usage[] = "  strata info     --hw CONFIG.yaml [--json OUT.json] " CLI_SET_USAGE "\n";

int cli_info(int argc, char **argv)
{
    const char *hw = NULL, *js = NULL;
    const struct cli_opt opts[] = {
        {"hw", 0, &hw, NULL},
        {"json", 0, &js, NULL},
        {NULL, 0, NULL, NULL},
    };
    struct cfg_sets sets;
    memset(&sets, 0, sizeof sets);
    {
        int src = cli_take_sets("info", &argc, argv, &sets);
        if (src >= 0)
            return src;
    }
    int rc = cli_parse("info", cli_info_usage, opts, argc, argv, NULL);
    if (rc >= 0)
        return rc;
    char hw_path[1600];
    if (cli_find("info", "--hw", &hw, 0, hw_path, sizeof hw_path) != 0)
        return 1;
    if (hw == NULL) {
        fprintf(stderr, "strata info: --hw is required\n");
        return 2;
    }
    struct diag d;
    memset(&d, 0, sizeof d);
    /* a system file: its chip's figures, then its devices and links */
    struct hw_system sys;
    enum hw_kind kind;
    if (hw_load(hw, &sets, &sys, &kind, &d) != 0)
        return cli_fail(&d);
    struct hw_config cfg = sys.chip;    /* a chip config fills only this */
    struct info_out inf;
    info_derive(&cfg, &inf);
    FILE *txt = cli_is_stdout(js) ? stderr : stdout; /* JSON on stdout: the text moves aside */
    info_print(&cfg, &inf, txt);
    if (kind == HW_SYSTEM) {
        info_print_system(&sys, txt);
        sys_free(&sys);
    }
    if (js != NULL && info_json(&cfg, &inf, js, &d) != 0)
        return cli_fail(&d);
    return 0;
}
