/* main.c: the strata command line.
 *
 *   strata run      --hw CFG --trace TRACE [--json F] [--csv F] [--top N] [--quiet]
 *   strata info     --hw CFG [--json F]
 *   strata gen llm  --model HF_CONFIG --phase prefill|decode|train [options] -o TRACE
 *   strata validate --data CSV [--json F] [--configs DIR]
 *
 * Every user error is printed as "file:line: field: message" and exits 1;
 * usage errors exit 2.
 */
#include <malloc.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "cli.h"
#include "version.h"

static void usage(FILE *f)
{
    fprintf(f,
            "strata %s: a cycle-approximate accelerator simulator\n"
            "\n"
            "usage:\n"
            "  strata run      --hw CONFIG.yaml --trace TRACE.json [--json OUT.json] [--csv OUT.csv]\n"
            "                  [--out DIR [--timeline-granularity-us G] [--no-whatif]] [--top N] [--quiet]\n"
            "  strata info     --hw CONFIG.yaml [--json OUT.json]\n"
            "  strata gen llm  --model CONFIG.json --phase prefill|decode|train [--batch B] [--prompt P]\n"
            "                  [--context C] [--dtype bf16] [--attn IMPL] [--weights FMT]\n"
            "                  [--kv-dtype D] -o TRACE.json\n"
            "  strata validate --data MEASUREMENTS.csv [--configs DIR] [--json OUT.json]\n"
            "  strata plot     --report REPORT.json --out DIR\n"
            "  strata import   pytorch TRACE.json[.gz] -o OUT.json\n"
            "  strata import   chakra TRACE.json[.gz] -o OUT.json   (chakra_jsonizer output)\n"
            "  strata fit      --hw CONFIG.yaml --model CONFIG.json --phase decode|prefill|train\n"
            "                  [--batch B] [--prompt P] [--context C] [--dtype D] [--weights FMT]\n"
            "                  [--kv-dtype D] [--json OUT.json]\n"
            "  strata compare  --trace TRACE.json --hw CONFIG.yaml [--top N] [--json OUT.json]\n"
            "  strata scalesim -c SCALESIM.cfg -t TOPOLOGY.csv [-i conv|gemm] [-p OUTDIR] [--quiet]\n"
            "  strata version\n"
            "\n"
            "See README.md and docs/ for the formats.\n",
            STRATA_VERSION);
}

/* A run is short (milliseconds) and its writers build and free buffers of
 * tens to hundreds of KB.  With glibc's defaults those come from fresh
 * mmaps or a heap trimmed back after each free, so every buffer was faulted
 * in page by page again (page faults were the largest cost --out added, see
 * docs/html.md).  The process keeps what it frees and grows its heap in
 * 4 MiB steps instead; this is process policy, so it lives here and not in
 * the library. */
static void tune_malloc(void)
{
    mallopt(M_MMAP_THRESHOLD, 32 << 20);
    mallopt(M_TRIM_THRESHOLD, 256 << 20);
    mallopt(M_TOP_PAD, 4 << 20);
}

int main(int argc, char **argv)
{
    tune_malloc();
    if (argc < 2) {
        usage(stderr);
        return 2;
    }
    const char *verb = argv[1];
    if (strcmp(verb, "run") == 0)
        return cli_run(argc - 1, argv + 1);
    if (strcmp(verb, "info") == 0)
        return cli_info(argc - 1, argv + 1);
    if (strcmp(verb, "gen") == 0)
        return cli_gen(argc - 1, argv + 1);
    if (strcmp(verb, "fit") == 0)
        return cli_fit(argc - 1, argv + 1);
    if (strcmp(verb, "import") == 0)
        return cli_import(argc - 1, argv + 1);
    if (strcmp(verb, "compare") == 0)
        return cli_compare(argc - 1, argv + 1);
    if (strcmp(verb, "plot") == 0)
        return cli_plot(argc - 1, argv + 1);
    if (strcmp(verb, "scalesim") == 0)
        return cli_scalesim(argc - 1, argv + 1);
    if (strcmp(verb, "validate") == 0)
        return cli_validate(argc - 1, argv + 1);
    if (strcmp(verb, "version") == 0 || strcmp(verb, "--version") == 0) {
        printf("strata %s\n", STRATA_VERSION);
        return 0;
    }
    if (strcmp(verb, "help") == 0 || strcmp(verb, "--help") == 0 || strcmp(verb, "-h") == 0) {
        usage(stdout);
        return 0;
    }
    fprintf(stderr, "strata: unknown command '%s'\n\n", verb);
    usage(stderr);
    return 2;
}
