/* cli.c: option parsing shared by the verbs (cli.h).  Each verb lives in
 * its own file here (run.c, info.c, gen.c, ...); main.c dispatches. */
#include "cli.h"

#include <stdio.h>
#include <string.h>

#include "diag.h"

void cli_opts_init(struct cli_opts *o, int argc, char **argv)
{
    memset(o, 0, sizeof *o);
    o->argc = argc < 64 ? argc : 64;
    o->argv = argv;
}

const char *cli_get(struct cli_opts *o, const char *name)
{
    for (int i = 1; i + 1 < o->argc; i++) {
        if (!o->used[i] && strcmp(o->argv[i], name) == 0) {
            o->used[i] = o->used[i + 1] = 1;
            return o->argv[i + 1];
        }
    }
    return NULL;
}

int cli_flag(struct cli_opts *o, const char *name)
{
    for (int i = 1; i < o->argc; i++) {
        if (!o->used[i] && strcmp(o->argv[i], name) == 0) {
            o->used[i] = 1;
            return 1;
        }
    }
    return 0;
}

int cli_check(struct cli_opts *o, const char *verb)
{
    for (int i = 1; i < o->argc; i++) {
        if (!o->used[i]) {
            fprintf(stderr, "strata %s: unexpected argument '%s' (see strata --help)\n", verb,
                    o->argv[i]);
            return 2;
        }
    }
    return 0;
}

int cli_fail(const struct diag *d)
{
    diag_print(d, stderr);
    return 1;
}
