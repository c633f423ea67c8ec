/* info.c: `strata info`: a config's derived figures. */
#include <stdio.h>
#include <string.h>

#include "cfg.h"
#include "cli.h"
#include "diag.h"
#include "info.h"

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
    struct hw_config cfg;
    if (cfg_load(hw, &cfg, &d) != 0)
        return cli_fail(&d);
    struct info_out inf;
    info_derive(&cfg, &inf);
    info_print(&cfg, &inf, stdout);
    if (js != NULL && info_json(&cfg, &inf, js, &d) != 0)
        return cli_fail(&d);
    return 0;
}
