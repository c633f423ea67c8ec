/* cmd_import.c: `strata import pytorch|chakra FILE -o OUT.json`: a profiler's
 * trace as a strata trace (sim/work/import.h, docs/import.md). */
#include <stdio.h>
#include <string.h>

#include "cli.h"
#include "diag.h"
#include "import.h"
#include "trace.h"

const char cli_import_usage[] =
    "  strata import   pytorch TRACE.json[.gz] -o|--output OUT.json\n"
    "  strata import   chakra TRACE.json[.gz] -o OUT.json   (chakra_jsonizer output)\n";

int cli_import(int argc, char **argv)
{
    if (argc >= 2 && (strcmp(argv[1], "-h") == 0 || strcmp(argv[1], "--help") == 0)) {
        cli_usage(stdout, cli_import_usage);
        return 0;
    }
    if (argc < 2 || (strcmp(argv[1], "pytorch") != 0 && strcmp(argv[1], "chakra") != 0)) {
        fprintf(stderr, "strata import: expected 'strata import pytorch|chakra FILE -o OUT.json'\n");
        return 2;
    }
    int chakra = strcmp(argv[1], "chakra") == 0;
    const char *out = NULL;
    const struct cli_opt opts[] = {
        {"output", 'o', &out, NULL},
        {NULL, 0, NULL, NULL},
    };
    /* argv[1] is the format; the input file is the one argument left */
    int pos = 0;
    int rc = cli_parse("import", cli_import_usage, opts, argc - 1, argv + 1, &pos);
    if (rc >= 0)
        return rc;
    if (pos + 1 != argc - 1) {
        if (pos + 1 < argc - 1)
            fprintf(stderr, "strata import: unexpected argument '%s' (see strata import --help)\n",
                    argv[1 + pos + 1]);
        else
            fprintf(stderr, "strata import: expected 'strata import pytorch|chakra FILE -o OUT.json'\n");
        return 2;
    }
    const char *in = argv[1 + pos];
    static char in_path[1600];      /* a shipped input from another folder */
    cli_find_data(&in, in_path, sizeof in_path);
    if (out == NULL) {
        fprintf(stderr, "strata import: -o OUT.json is required\n");
        return 2;
    }
    struct diag d;
    memset(&d, 0, sizeof d);
    struct trace t;
    struct import_stats st;
    if ((chakra ? import_chakra(in, &t, &st, &d) : import_pytorch(in, &t, &st, &d)) != 0) {
        diag_print(&d, stderr);
        return 1;
    }
    if (trace_write(&t, out, &d) != 0) {
        diag_print(&d, stderr);
        trace_free(&t);
        return 1;
    }
    FILE *txt = cli_is_stdout(out) ? stderr : stdout; /* with -o -, stdout holds the trace */
    fprintf(txt, "wrote %s: %u ops on %u device(s)", out, t.nops, t.ndevices);
    for (unsigned k = 0; k < OP_KIND_COUNT; k++)
        if (st.by_kind[k])
            fprintf(txt, ", %u %s", st.by_kind[k], op_kind_name((enum op_kind)k));
    if (chakra)
        fprintf(txt, "\n  read %u nodes; %u became ops (%u from their operator's shapes, %u with only a "
               "duration), the rest were left out with their dependencies passed on\n",
               st.cpu_ops, st.mapped, st.owners, st.fixed_noshape);
    else
        fprintf(txt, "\n  read %u CPU ops, %u kernels, %u copies; %u ops own kernels, %u mapped with "
               "shapes\n",
               st.cpu_ops, st.kernels, st.copies, st.owners, st.mapped);
    if (st.syncs > 0)
        fprintf(txt, "  %u synchronisation events -> %u dependencies between streams\n", st.syncs,
               st.sync_deps);
    if (st.partial > 0)
        fprintf(stderr,
                "strata import: warning: %u GEMMs own only a library's helper kernels (split-K "
                "reduction, epilogue): their main kernel is not in the trace, so they carry no "
                "measured time\n",
                st.partial);
    if (st.syncs_skipped > 0)
        fprintf(stderr,
                "strata import: warning: the last %u synchronisation events were not used (past "
                "the work bound in docs/import.md)\n",
                st.syncs_skipped);
    if (st.deps_dropped > 0)
        fprintf(stderr, "strata import: warning: %u dependencies left out (past the bounds in "
                        "docs/import.md)\n",
                st.deps_dropped);
    unsigned fixed = st.fixed_noshape + st.fixed_unknown + st.fixed_collective + st.orphan_kernels;
    if (!chakra && (fixed > 0 || st.malformed > 0))
        fprintf(stderr,
                "strata import: warning: %u ops kept as their measured time (fixed_s): %u without "
                "shapes, %u of kinds strata does not model, %u collectives, %u kernels without a CPU "
                "op; %u malformed events skipped\n",
                fixed, st.fixed_noshape, st.fixed_unknown, st.fixed_collective, st.orphan_kernels,
                st.malformed);
    if (!chakra && (st.dur_skipped > 0 || st.dur_clamped > 0))
        fprintf(stderr,
                "strata import: warning: %u events with a negative duration or one over 1e6 s "
                "skipped; %u ops whose kernels summed past 1e6 s cut to it\n",
                st.dur_skipped, st.dur_clamped);
    trace_free(&t);
    return 0;
}
