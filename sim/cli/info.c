/* info.c: `strata info`: a config's derived figures. */
#include <stdio.h>
#include <string.h>

#include "cfg.h"
#include "cli.h"
#include "diag.h"
#include "info.h"
#include "system.h"

int cli_info(int argc, char **argv)
{
    struct cli_opts o;
    cli_opts_init(&o, argc, argv);
    const char *hw = cli_get(&o, "--hw"), *js = cli_get(&o, "--json");
    int rc = cli_check(&o, "info");
    if (rc)
        return rc;
    if (hw == NULL) {
        fprintf(stderr, "strata info: --hw is required\n");
        return 2;
    }
    struct diag d;
    memset(&d, 0, sizeof d);
    /* a system file: its chip's figures, then its devices and links */
    struct hw_system sys;
    int sr = sys_load(hw, &sys, &d);
    if (sr < 0)
        return cli_fail(&d);
    struct hw_config cfg = sys.chip;    /* a chip config fills only this */
    struct info_out inf;
    info_derive(&cfg, &inf);
    info_print(&cfg, &inf, stdout);
    if (sr == 0) {
        info_print_system(&sys, stdout);
        sys_free(&sys);
    }
    if (js != NULL && info_json(&cfg, &inf, js, &d) != 0)
        return cli_fail(&d);
    return 0;
}
