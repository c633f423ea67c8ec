/* cli.h: the verbs of the strata command, one file each in sim/cli/ (each
 * returns the exit status: 0 ok, 1 bad input, 2 bad usage).  Only sim/cli
 * includes this header. */
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
int cli_plot(int argc, char **argv);

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
/* Prints *d to stderr and returns 1 (a verb's "bad input" status). */
struct diag;
int cli_fail(const struct diag *d);

#endif
