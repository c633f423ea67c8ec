/* cli.c: option parsing shared by the verbs (cli.h), on glibc's
 * getopt_long.  Each verb lives in its own file here (cmd_run.c, cmd_info.c,
 * cmd_gen.c, ...) with its option table and usage; main.c dispatches.
 *
 * getopt_long alone would take "--json --quiet" as the file "--quiet": a
 * value given as its own argument that spells an option of the verb is
 * refused as a missing value instead.  Attached values ("--json=--quiet")
 * are taken as written.  Long options may be abbreviated while unambiguous
 * (getopt_long's rule). */
#include "cli.h"

#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cfg.h"
#include "diag.h"
#include "suggest.h"

enum { CLI_MAX_OPTS = 32, CLI_LONG_VAL = 256 /* getopt val of a long-only option: 256 + index */ };

void cli_usage(FILE *f, const char *usage)
{
    fprintf(f, "usage:\n%s", usage);
}

/* Is arg an option of the table ("--name", "--name=..." or "-x")? */
static int is_known(const char *arg, const struct cli_opt *opts)
{
    if (strncmp(arg, "--", 2) == 0) {
        const char *n = arg + 2;
        size_t len = strcspn(n, "=");
        if (len == 0)
            return 0;
        if (len == 4 && strncmp(n, "help", 4) == 0)
            return 1;
        for (const struct cli_opt *o = opts; o->name || o->letter; o++)
            if (o->name && strlen(o->name) == len && strncmp(o->name, n, len) == 0)
                return 1;
        return 0;
    }
    if (arg[0] == '-' && arg[1] != '\0' && arg[2] == '\0') {
        if (arg[1] == 'h')
            return 1;
        for (const struct cli_opt *o = opts; o->name || o->letter; o++)
            if (o->letter && o->letter == arg[1])
                return 1;
    }
    return 0;
}

/* The option as the user typed it, without an attached value. */
static void typed(char *buf, size_t n, const char *arg)
{
    snprintf(buf, n, "%.*s", (int)strcspn(arg, "="), arg);
}

/* "unknown option", with the verb's long options nearest to typed (those
 * cli_take_sets takes too, where the usage shows them). */
static void unknown_option(const char *verb, const char *usage, const struct cli_opt *opts,
                           const char *typed)
{
    struct suggest sg;
    char show[SUGGEST_NAME], hint[SUGGEST_MAX * SUGGEST_NAME + 32] = "";
    static const char *const takes_sets[] = {"set", "hw-overlay", NULL};
    if (strncmp(typed, "--", 2) == 0) {
        suggest_init(&sg, typed + 2);
        for (const struct cli_opt *o = opts; o->name || o->letter; o++)
            if (o->name != NULL) {
                snprintf(show, sizeof show, "--%s", o->name);
                suggest_offer_as(&sg, o->name, show);
            }
        suggest_offer_as(&sg, "help", "--help");
        for (int i = 0; takes_sets[i] != NULL && strstr(usage, CLI_SET_USAGE) != NULL; i++) {
            snprintf(show, sizeof show, "--%s", takes_sets[i]);
            suggest_offer_as(&sg, takes_sets[i], show);
        }
        suggest_text(&sg, hint, sizeof hint);
    }
    fprintf(stderr, "strata %s: unknown option '%s'%s (see strata %s --help)\n", verb, typed, hint,
            verb);
}

int cli_parse(const char *verb, const char *usage, const struct cli_opt *opts, int argc,
              char **argv, int *first_pos)
{
    struct option lo[CLI_MAX_OPTS + 2];
    char shorts[3 * CLI_MAX_OPTS + 4] = ":h"; /* ':' first: a missing value returns ':' */
    size_t ns = 2, nl = 0;
    int nopts = 0;
    while (opts[nopts].name || opts[nopts].letter)
        nopts++;
    if (nopts > CLI_MAX_OPTS) {
        fprintf(stderr, "strata %s: internal error: too many options\n", verb);
        return 2;
    }
    for (int i = 0; i < nopts; i++) {
        const struct cli_opt *o = &opts[i];
        int val = o->letter ? o->letter : CLI_LONG_VAL + i;
        if (o->letter) {
            shorts[ns++] = o->letter;
            if (o->value)
                shorts[ns++] = ':';
        }
        if (o->name)
            lo[nl++] = (struct option){o->name, o->value ? required_argument : no_argument, NULL, val};
    }
    shorts[ns] = '\0';
    lo[nl++] = (struct option){"help", no_argument, NULL, 'h'};
    lo[nl] = (struct option){NULL, 0, NULL, 0};

    opterr = 0; /* our messages, naming the verb */
    optind = 0; /* 0, not 1: glibc starts over (each verb parses once, tests call main many times) */
    char name[64];
    int c;
    while ((c = getopt_long(argc, argv, shorts, lo, NULL)) != -1) {
        if (c == 'h') {
            cli_usage(stdout, usage);
            return 0;
        }
        if (c == ':') {
            typed(name, sizeof name, argv[optind - 1]);
            fprintf(stderr, "strata %s: option '%s' needs a value\n", verb, name);
            return 2;
        }
        if (c == '?') {
            if (optopt != 0 && optopt < CLI_LONG_VAL && strncmp(argv[optind - 1], "--", 2) != 0)
                snprintf(name, sizeof name, "-%c", optopt);
            else
                typed(name, sizeof name, argv[optind - 1]);
            unknown_option(verb, usage, opts, name);
            return 2;
        }
        const struct cli_opt *o = NULL;
        for (int i = 0; i < nopts && o == NULL; i++)
            if ((opts[i].letter ? opts[i].letter : CLI_LONG_VAL + i) == c)
                o = &opts[i];
        if (o == NULL) /* getopt_long returned a val we never gave it */
            abort();
        if (o->flag != NULL && o->value == NULL) {
            *o->flag = 1;
            continue;
        }
        /* a value given as its own argument (not "--opt=V" or "-oV") */
        int separate = optind >= 2 && optarg == argv[optind - 1];
        if (optarg[0] == '\0' || (separate && is_known(optarg, opts))) {
            typed(name, sizeof name, separate ? argv[optind - 2] : argv[optind - 1]);
            fprintf(stderr, "strata %s: option '%s' needs a value\n", verb, name);
            return 2;
        }
        if (o->flag == NULL) {
            *o->value = optarg;
        } else if (*o->flag < CLI_REPEAT_MAX) {   /* repeatable */
            o->value[(*o->flag)++] = optarg;
        } else {
            typed(name, sizeof name, separate ? argv[optind - 2] : argv[optind - 1]);
            fprintf(stderr, "strata %s: option '%s' is given more than %d times\n", verb, name,
                    CLI_REPEAT_MAX);
            return 2;
        }
    }
    if (first_pos != NULL)
        *first_pos = optind;
    else if (optind < argc) {
        fprintf(stderr, "strata %s: unexpected argument '%s' (see strata %s --help)\n", verb,
                argv[optind], verb);
        return 2;
    }
    return -1;
}

int cli_count(const char *verb, const char *opt, const char *v, unsigned max, unsigned *out)
{
    char *end;
    unsigned long x = strtoul(v, &end, 10);
    if (v[0] < '0' || v[0] > '9' || *end != '\0') {
        fprintf(stderr, "strata %s: %s: expected a count, got '%s'\n", verb, opt, v);
        return 2;
    }
    if (x > max) {
        fprintf(stderr, "strata %s: %s: expected a count, got '%s' (at most %u)\n", verb, opt, v, max);
        return 2;
    }
    *out = (unsigned)x;
    return 0;
}

int cli_is_stdout(const char *path)
{
    return path != NULL && strcmp(path, "-") == 0;
}

int cli_fail(const struct diag *d)
{
    diag_print(d, stderr);
    return 1;
}

int cli_take_sets(const char *verb, int *argc, char **argv, struct cfg_sets *sets)
{
    int out = 1;
    for (int i = 1; i < *argc; i++) {
        const char *a = argv[i];
        if (strcmp(a, "--") == 0) {
            while (i < *argc)
                argv[out++] = argv[i++];
            break;
        }
        int is_set = strcmp(a, "--set") == 0, is_ov = strcmp(a, "--hw-overlay") == 0;
        const char *v = NULL;
        if (strncmp(a, "--set=", 6) == 0)
            v = a + 6;
        else if (strncmp(a, "--hw-overlay=", 13) == 0)
            v = a + 13, is_ov = 1;
        else if (is_set || is_ov) {
            if (i + 1 >= *argc || strncmp(argv[i + 1], "--", 2) == 0) {
                fprintf(stderr, "strata %s: option '%s' needs a value\n", verb, a);
                return 2;
            }
            v = argv[++i];
        } else {
            argv[out++] = argv[i];
            continue;
        }
        struct diag d;
        memset(&d, 0, sizeof d);
        if ((is_ov ? cfg_sets_load_overlay(sets, v, &d) : cfg_sets_add(sets, v, "--set", &d)) != 0)
            return d.code == DIAG_E_USAGE ? (diag_print(&d, stderr), 2) : cli_fail(&d);
    }
    /* a software stack's value: only the verbs that take --stack apply it
     * (cli_load_stack_sets); elsewhere it would change nothing */
    static const char *const with_stack[] = {"run", "serve", "plan", "calibrate", NULL};
    int takes = 0;
    for (int k = 0; with_stack[k] != NULL; k++)
        takes |= strcmp(verb, with_stack[k]) == 0;
    const struct cfg_set *st = takes ? NULL : cfg_sets_first_stack(sets);
    if (st != NULL) {
        fprintf(stderr, "strata %s: %s: %s: a software stack's value; %s takes no --stack (run, serve, "
                "plan and calibrate do)\n", verb, st->origin, st->key, verb);
        return 2;
    }
    *argc = out;
    argv[out] = NULL;
    return -1;
}
