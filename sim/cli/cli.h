/* cli.h: the verbs of the strata command, one file each in sim/cli/ (each
 * returns the exit status: 0 ok, 1 bad input, 2 bad usage).  Only sim/cli
 * includes this header. */
#ifndef STRATA_CLI_H
#define STRATA_CLI_H

#include <stdio.h>

#include "verbs.h"

/* Each verb's function (sim/cli/cmd_VERB.c) and its usage lines, defined
 * next to its option list in its own file; `strata VERB --help` and
 * `strata --help` print the same text. */
#define CLI_VERB_DECL_(id, name, summary)                                                     \
    int cli_##id(int argc, char **argv);                                                      \
    extern const char cli_##id##_usage[];
CLI_VERB_MAP(CLI_VERB_DECL_)
#undef CLI_VERB_DECL_

/* The man page (troff) made from the verb list and the usage texts
 * (manpage.c); docs/strata.1 is its output. */
void cli_man(FILE *f);

/* One option of a verb, parsed with getopt_long.  name is the long
 * spelling without "--" (NULL: short only), letter the short one (0: long
 * only).  An option with value != NULL takes a value (--name V, --name=V,
 * -x V), stored there; one with flag != NULL is a switch that sets *flag to
 * 1.  One with both is repeatable: each value goes to value[*flag], and
 * *flag counts them (at most CLI_REPEAT_MAX; value points to an array that
 * long, *flag starts at 0).  A verb's table ends with an entry whose name
 * and letter are both 0; -h and --help are added to every verb. */
#define CLI_REPEAT_MAX 64
struct cli_opt {
    const char *name;
    char letter;
    const char **value;
    int *flag;
};

/* Parses argv[1..argc-1] (argv[0] is the verb) against opts.  Returns -1
 * when the verb should go on, with the arguments that are not options moved
 * to argv[*first_pos .. argc-1] (first_pos NULL: there must be none);
 * 0 after printing usage to stdout for -h/--help; 2 after printing a usage
 * error to stderr (unknown option, a value missing, a stray argument).  A
 * value that is itself a known option of the verb ("--json --quiet") counts
 * as missing.  Uses getopt's global state: not reentrant. */
int cli_parse(const char *verb, const char *usage, const struct cli_opt *opts, int argc,
              char **argv, int *first_pos);
/* Prints "usage:" and usage to f. */
void cli_usage(FILE *f, const char *usage);
/* Parses a count for --top-like options: digits only, at most max.
 * 0, or 2 after a message naming verb and opt. */
int cli_count(const char *verb, const char *opt, const char *v, unsigned max, unsigned *out);
/* Is path the stdout marker "-" of the output options (--json, --csv, -o)? */
int cli_is_stdout(const char *path);
/* Takes the config overrides out of argv before cli_parse sees it:
 * `--set KEY=VALUE` (repeatable) and `--hw-overlay FILE` (cfg.h), for every
 * verb with --hw.  *argc shrinks; arguments after "--" are left alone.
 * -1 to go on, or 1/2 after printing an error (bad input / bad usage). */
struct cfg_sets;
int cli_take_sets(const char *verb, int *argc, char **argv, struct cfg_sets *sets);
/* Usage line of those two options, for the verbs' usage texts. */
#define CLI_SET_USAGE "[--set KEY=VALUE ...] [--hw-overlay FIT.yaml]"
/* --hw NAME / --model NAME: a path, or a shipped config, system or model
 * by name (names.c).  *arg (left alone when NULL) becomes the path, held
 * in out[n].  0, or 1 after printing why not (none, or several match). */
int cli_find(const char *verb, const char *opt, const char **arg, int models, char *out, size_t n);
/* A relative path that names nothing here (`--data traces/validation/x.csv`
 * run from another folder): the same path under the first data root that
 * has it, held in out[n]; left alone otherwise (its loader says why). */
void cli_find_data(const char **arg, char *out, size_t n);
/* The folder sub (e.g. "configs/specs/families") under each data root that
 * has it, in search order, into out (at most max): how many. */
int cli_data_dirs(const char *sub, char (*out)[1100], int max);
/* --stack NAME: a path, or a shipped stack (configs/stacks/NAME.yaml) by
 * its exact name, into out[n].  0, or 1 after printing the stacks there are. */
int cli_find_stack(const char *verb, const char *name, char *out, size_t n);
/* The stack --stack names, read into *s, and the folder it came from (to
 * name the others) into dir[n].  0, or 1 after printing why not. */
struct stack;
int cli_load_stack(const char *verb, const char *name, struct stack *s, char *dir, size_t n);
/* cli_load_stack, then the --set stack.KEY=V values applied to it; with no
 * stack (name NULL) a stack.KEY set is an error.  0, 1 (load or value) or 2
 * (a stack set without --stack). */
struct cfg_sets;
int cli_load_stack_sets(const char *verb, const char *name, const struct cfg_sets *sets, struct stack *s,
                        char *dir, size_t n);
/* Prints *d to stderr and returns 1 (a verb's "bad input" status). */
struct diag;
int cli_fail(const struct diag *d);

#endif
