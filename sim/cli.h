/* cli.h: the verbs of the strata command (each returns the exit status:
 * 0 ok, 1 bad input, 2 bad usage). */
#ifndef STRATA_CLI_H
#define STRATA_CLI_H

int cli_run(int argc, char **argv);
int cli_info(int argc, char **argv);
int cli_gen(int argc, char **argv);
int cli_validate(int argc, char **argv);
int cli_import(int argc, char **argv);
int cli_compare(int argc, char **argv);
int cli_fit(int argc, char **argv);
int cli_scalesim(int argc, char **argv);

/* Option parsing shared by the verbs: --name VALUE pairs after the verb.
 * Returns the value of --name, or NULL. */
struct cli_opts {
    int argc;
    char **argv;
    int used[64];
    const char *bad;            /* first unrecognised argument, set by cli_check */
};
void cli_opts_init(struct cli_opts *o, int argc, char **argv);
const char *cli_get(struct cli_opts *o, const char *name);
int cli_flag(struct cli_opts *o, const char *name);
/* 0 if every argument was consumed, else prints an error and returns 2. */
int cli_check(struct cli_opts *o, const char *verb);
/* Create dir if it is missing (its parent must exist); opt names the
 * option in the diagnostic.  0, or -1 with *d. */
struct diag;
int cli_make_dir(const char *dir, const char *opt, struct diag *d);

#endif
