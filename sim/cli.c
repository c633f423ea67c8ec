/* cli.c: `strata run` and `strata info`, plus option parsing.  The other
 * verbs live next to what they drive (llm.c, validate.c). */
#include "cli.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cfg.h"
#include "diag.h"
#include "info.h"
#include "report.h"
#include "run.h"
#include "trace.h"

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

static int fail(const struct diag *d)
{
    diag_print(d, stderr);
    return 1;
}

int cli_run(int argc, char **argv)
{
    struct cli_opts o;
    cli_opts_init(&o, argc, argv);
    const char *hw = cli_get(&o, "--hw"), *tr = cli_get(&o, "--trace");
    const char *js = cli_get(&o, "--json"), *csv = cli_get(&o, "--csv");
    const char *top = cli_get(&o, "--top");
    int quiet = cli_flag(&o, "--quiet");
    int rc = cli_check(&o, "run");
    if (rc)
        return rc;
    if (hw == NULL || tr == NULL) {
        fprintf(stderr, "strata run: --hw and --trace are required\n");
        return 2;
    }
    struct diag d;
    memset(&d, 0, sizeof d);
    struct hw_config cfg;
    if (cfg_load(hw, &cfg, &d) != 0)
        return fail(&d);
    struct trace t;
    if (trace_load(tr, &t, &d) != 0)
        return fail(&d);
    struct run_result r;
    if (run_trace(&cfg, &t, &r, &d) != 0) {
        trace_free(&t);
        return fail(&d);
    }
    struct report_ctx c = {&cfg, &t, &r, t.tokens, 15};
    if (top != NULL) {
        char *end;
        long v = strtol(top, &end, 10);
        if (*end != '\0' || v < 0 || v > 1000000) {
            fprintf(stderr, "strata run: --top: expected a count, got '%s'\n", top);
            rc = 2;
        }
        c.top = (unsigned)v;
    }
    if (rc == 0 && js != NULL && report_json(&c, js, &d) != 0)
        rc = fail(&d);
    if (rc == 0 && csv != NULL && report_csv(&c, csv, &d) != 0) {
        rc = fail(&d);
        if (js != NULL)
            remove(js); /* all or nothing */
    }
    if (rc == 0 && !quiet)
        report_text(&c, stdout);
    run_result_free(&r);
    trace_free(&t);
    return rc;
}

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
        return fail(&d);
    struct info_out inf;
    info_derive(&cfg, &inf);
    info_print(&cfg, &inf, stdout);
    if (js != NULL && info_json(&cfg, &inf, js, &d) != 0)
        return fail(&d);
    return 0;
}
