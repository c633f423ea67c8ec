/* main.c: the strata command line.
 *
 *   strata VERB [options]     (run, info, gen llm, validate, plot, import, fit,
 *                              compare, scalesim; each file sim/cli/cmd_VERB.c holds
 *                              the verb's options and usage text)
 *
 * Every user error is printed as "file:line: field: message" and exits 1;
 * usage errors exit 2.
 */
#include <malloc.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <cjson/cJSON.h>

#include "afile.h"
#include "membudget.h"
#include "cli.h"
#include "suggest.h"
#include "version.h"

/* The verbs (verbs.h), each with the usage text its own file defines. */
static const struct verb {
    const char *name;
    int (*fn)(int argc, char **argv);
    const char *usage;
} verbs[] = {
#define CLI_VERB_ROW_(id, name, summary) {name, cli_##id, cli_##id##_usage},
    CLI_VERB_MAP(CLI_VERB_ROW_)
#undef CLI_VERB_ROW_
};
enum { NVERBS = sizeof verbs / sizeof verbs[0] };

static const struct verb *find_verb(const char *name)
{
    for (int i = 0; i < NVERBS; i++)
        if (strcmp(verbs[i].name, name) == 0)
            return &verbs[i];
    return NULL;
}

/* "strata[ help]: unknown command 'X'", with the verbs nearest to X. */
static void unknown_verb(const char *who, const char *name)
{
    struct suggest sg;
    suggest_init(&sg, name);
    for (int i = 0; i < NVERBS; i++)
        suggest_offer(&sg, verbs[i].name);
    suggest_offer(&sg, "help");
    suggest_offer(&sg, "version");
    char hint[SUGGEST_MAX * SUGGEST_NAME + 32];
    suggest_text(&sg, hint, sizeof hint);
    fprintf(stderr, "%s: unknown command '%s'%s\n\n", who, name, hint);
}

static void usage(FILE *f)
{
    fprintf(f, "strata %s: a cycle-approximate accelerator simulator\n\nusage:\n", STRATA_VERSION);
    for (int i = 0; i < NVERBS; i++)
        fputs(verbs[i].usage, f);
    fprintf(f, "  strata help VERB   (or strata VERB --help; strata help --man: the man page)\n"
               "  strata version     (or strata -V, strata --version)\n"
               "\n"
               "Options take their value as --opt VALUE or --opt=VALUE; an output file given as '-'\n"
               "(--json -, --csv -, -o -) is written to stdout, and the text summary goes to stderr.\n"
               "See README.md and docs/ for the formats.\n");
}

/* A run is short (milliseconds) and its writers build and free buffers of
 * tens to hundreds of KB.  With glibc's defaults those come from fresh
 * mmaps or a heap trimmed back after each free, so every buffer was faulted
 * in page by page again (page faults were the largest cost --out added, see
 * docs/html.md).  The process keeps what it frees and grows its heap in
 * 4 MiB steps instead.  Blocks of 4 MiB and more are mapped of their own
 * and given back when freed: with the threshold at 32 MiB a million-op run
 * kept about 50 MB of its loader's freed tables (the ids' index, the
 * elements' offsets) under the run's own peak.  This is process policy, so
 * it lives here and not in the library. */
static void tune_malloc(void)
{
    mallopt(M_MMAP_THRESHOLD, 4 << 20);
    mallopt(M_TRIM_THRESHOLD, 256 << 20);
    mallopt(M_TOP_PAD, 4 << 20);
}

#ifdef STRATA_WITH_MPI
#include <mpi.h>
static int strata_main(int argc, char **argv);
/* strata-mpi: the same command, started by mpirun; `sweep` splits its points
 * over the ranks (sim/cli/cmd_sweep.c), every other verb runs on each rank. */
int main(int argc, char **argv)
{
    MPI_Init(&argc, &argv);
    int rc = strata_main(argc, argv);
    MPI_Finalize();
    return rc;
}
static int strata_main(int argc, char **argv)
#else
int main(int argc, char **argv)
#endif
{
    tune_malloc();
    afile_guard_inputs();   /* no output may replace one of the command's inputs */
    /* the memory budget: STRATA_MAX_MEMORY, else 90% of physical memory;
     * cJSON's allocations (trace and report trees) are checked against it */
    if (membudget_from_env() != 0)
        return 2;
    cJSON_Hooks hooks = {membudget_json_malloc, free};
    cJSON_InitHooks(&hooks);
    if (argc < 2) {
        usage(stderr);
        return 2;
    }
    const char *verb = argv[1];
    const struct verb *v = find_verb(verb);
    if (v != NULL)
        return v->fn(argc - 1, argv + 1);
    if (strcmp(verb, "version") == 0 || strcmp(verb, "--version") == 0 || strcmp(verb, "-V") == 0) {
        printf("strata %s\n", STRATA_VERSION);
        return 0;
    }
    if (strcmp(verb, "help") == 0 || strcmp(verb, "--help") == 0 || strcmp(verb, "-h") == 0) {
        if (argc < 3) {
            usage(stdout);
            return 0;
        }
        if (strcmp(argv[2], "--man") == 0) {
            cli_man(stdout);
            return 0;
        }
        v = find_verb(argv[2]);
        if (v == NULL) {
            unknown_verb("strata help", argv[2]);
            usage(stderr);
            return 2;
        }
        char name[16], help[] = "--help";
        snprintf(name, sizeof name, "%s", v->name);
        char *hargv[] = {name, help, NULL};
        return v->fn(2, hargv);
    }
    unknown_verb("strata", verb);
    usage(stderr);
    return 2;
}
