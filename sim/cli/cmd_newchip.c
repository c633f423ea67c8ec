/* cmd_newchip.c: `strata new-chip --spec SPEC.yaml -o CONFIG.yaml`: a hardware
 * config from a chip's data sheet and its architecture's defaults
 * (configs/specs/README.md, docs/new-chip.md). */
#include <stdio.h>
#include <string.h>

#include "afile.h"
#include "cfg.h"
#include "cli.h"
#include "diag.h"
#include "spec.h"

const char cli_newchip_usage[] =
    "  strata new-chip --spec configs/specs/CHIP.yaml|CHIP -o|--output configs/CHIP.yaml [--quiet]\n"
    "                  (CHIP: a shipped spec by name, strata list specs)\n";

int cli_newchip(int argc, char **argv)
{
    const char *spec = NULL, *out = NULL;
    int quiet = 0;
    const struct cli_opt opts[] = {
        {"spec", 0, &spec, NULL},
        {"output", 'o', &out, NULL},
        {"quiet", 'q', NULL, &quiet},
        {NULL, 0, NULL, NULL},
    };
    int rc = cli_parse("new-chip", cli_newchip_usage, opts, argc, argv, NULL);
    if (rc >= 0)
        return rc;
    if (spec == NULL || out == NULL) {
        fprintf(stderr, "strata new-chip: --spec and -o are required\n");
        return 2;
    }
    /* a spec by its shipped name (`--spec nvidia-b200`), its family from the data roots when
     * the spec has none beside it */
    char spec_path[1600];
    if (cli_find("new-chip", "--spec", &spec, 2, spec_path, sizeof spec_path) != 0)
        return 1;
    static char fams[8][1100];
    int nfam = cli_data_dirs("configs/specs/families", fams, 8);
    static struct spec s; /* large: every figure with its source */
    struct diag d;
    memset(&d, 0, sizeof d);
    if (spec_load_in(spec, (const char (*)[1100])fams, nfam, &s, &d) != 0)
        return cli_fail(&d);
    FILE *summary = quiet ? NULL : (cli_is_stdout(out) ? stderr : stdout);
    if (cli_is_stdout(out)) {
        spec_write_config(&s, stdout, stderr, summary);
        return 0;
    }
    struct afile a;
    if (afile_open(&a, out, &d) != 0)
        return cli_fail(&d);
    spec_write_config(&s, a.f, stderr, summary);
    /* the file must be a config strata loads, before it takes the name */
    struct hw_system hs;
    if (fflush(a.f) != 0 || hw_load(a.tmp, NULL, &hs, NULL, &d) != 0) {
        afile_abort(&a);
        fprintf(stderr, "strata new-chip: internal error: the generated config does not load:\n");
        return cli_fail(&d);
    }
    if (afile_commit(&a, &d) != 0)
        return cli_fail(&d);
    if (!quiet)
        fprintf(summary, "wrote %s\n", out);
    return 0;
}
