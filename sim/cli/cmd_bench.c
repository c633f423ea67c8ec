/* cmd_bench.c: `strata bench collective`: a collective swept over sizes on a
 * system, printed as nccl-tests prints it. */
#include <ctype.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "afile.h"
#include "cfg.h"
#include "cli.h"
#include "collbench.h"
#include "diag.h"
#include "system.h"
#include "trace.h"

const char cli_bench_usage[] =
    "  strata bench collective --hw SYSTEM.yaml [--op all_reduce|all_gather|reduce_scatter|\n"
    "                  all_to_all|broadcast|send_recv] [--min 32K] [--max 16G] [--factor 2] [--ranks N]\n"
    "                  [--gpus-per-thread G] [--dtype fp32] [--algo auto|ring|direct|nvls|tree]\n"
    "                  [--csv OUT.csv]   (the values shown are the defaults; --op all_reduce,\n"
    "                  --ranks every device of the system, --gpus-per-thread 1)\n"
    "                  " CLI_SET_USAGE "\n";

/* A size as nccl-tests takes it: digits with an optional K, M or G (x1024). */
static int parse_size(const char *opt, const char *s, uint64_t *out)
{
    char *end;
    if (s == NULL || !isdigit((unsigned char)s[0]))
        goto bad;
    unsigned long long v = strtoull(s, &end, 10);
    uint64_t mul = 1;
    if (*end == 'K' || *end == 'k')
        mul = 1024;
    else if (*end == 'M' || *end == 'm')
        mul = 1024 * 1024;
    else if (*end == 'G' || *end == 'g')
        mul = 1024ull * 1024 * 1024;
    else if (*end == 'T' || *end == 't')
        mul = 1024ull * 1024 * 1024 * 1024;
    if (mul > 1)
        end++;
    if (*end != '\0' || v == 0 || v > TRACE_SIZE_CAP / mul)
        goto bad;
    *out = v * mul;
    return 0;
bad:
    fprintf(stderr, "strata bench: %s: expected a size such as 32K, 8M or 16G (1 B to 1P), got '%s'\n",
            opt, s ? s : "");
    return 2;
}

int cli_bench(int argc, char **argv)
{
    const char *hw = NULL, *opname = "all_reduce", *mins = "32K", *maxs = "16G", *fac = "2";
    const char *ranks = NULL, *dts = "fp32", *algos = "auto", *csv = NULL, *gpt = "1";
    const struct cli_opt opts[] = {
        {"hw", 0, &hw, NULL},         {"op", 0, &opname, NULL},   {"min", 'b', &mins, NULL},
        {"max", 'e', &maxs, NULL},    {"factor", 'f', &fac, NULL}, {"ranks", 'n', &ranks, NULL},
        {"dtype", 'd', &dts, NULL},   {"algo", 0, &algos, NULL},  {"csv", 0, &csv, NULL},
        {"gpus-per-thread", 'g', &gpt, NULL},
        {NULL, 0, NULL, NULL},
    };
    int first = 0;
    struct cfg_sets sets;
    memset(&sets, 0, sizeof sets);
    {
        int src = cli_take_sets("bench", &argc, argv, &sets);
        if (src >= 0)
            return src;
    }
    int rc = cli_parse("bench", cli_bench_usage, opts, argc, argv, &first);
    if (rc >= 0)
        return rc;
    char hw_path[1600];
    if (cli_find("bench", "--hw", &hw, 0, hw_path, sizeof hw_path) != 0)
        return 1;
    if (first >= argc || strcmp(argv[first], "collective") != 0 || first + 1 != argc) {
        fprintf(stderr, "strata bench: what to benchmark: 'collective' (the only benchmark)\n");
        cli_usage(stderr, cli_bench_usage);
        return 2;
    }
    if (hw == NULL) {
        fprintf(stderr, "strata bench: --hw is required (a system file, configs/systems/)\n");
        return 2;
    }
    enum coll_kind kind = COLL_KIND_COUNT;
    for (int k = 0; k < COLL_KIND_COUNT; k++)
        if (strcmp(opname, coll_kind_name((enum coll_kind)k)) == 0)
            kind = (enum coll_kind)k;
    if (kind == COLL_KIND_COUNT) {
        fprintf(stderr, "strata bench: --op: unknown collective '%s' (known: all_reduce, "
                        "all_gather, reduce_scatter, all_to_all, broadcast, send_recv)\n", opname);
        return 2;
    }
    enum coll_algo algo = COLL_ALGO_COUNT;
    for (int a = 0; a < COLL_ALGO_COUNT; a++)
        if (strcmp(algos, coll_algo_name((enum coll_algo)a)) == 0)
            algo = (enum coll_algo)a;
    if (algo == COLL_ALGO_COUNT) {
        fprintf(stderr, "strata bench: --algo: unknown algorithm '%s' (known: auto, ring, direct, "
                        "nvls, tree)\n", algos);
        return 2;
    }
    if ((algo == COLL_TREE && kind != COLL_ALL_REDUCE) ||
        (algo == COLL_NVLS && kind != COLL_ALL_REDUCE && kind != COLL_ALL_GATHER &&
         kind != COLL_REDUCE_SCATTER) ||
        (algo == COLL_DIRECT && kind != COLL_ALL_TO_ALL && kind != COLL_ALL_GATHER) ||
        (algo == COLL_RING && kind == COLL_ALL_TO_ALL)) {
        fprintf(stderr, "strata bench: --algo %s does not run %s (tree: all_reduce; nvls: "
                        "all_reduce, all_gather, reduce_scatter; direct: all_to_all, all_gather; "
                        "ring: all but all_to_all)\n", algos, opname);
        return 2;
    }
    enum dtype dt;
    if (dtype_from_name(dts, &dt) != 0) {
        fprintf(stderr, "strata bench: --dtype: unknown type '%s'\n", dts);
        return 2;
    }
    uint64_t lo, hi;
    unsigned factor = 2, nr = 0, g = 1;
    if (parse_size("--min", mins, &lo) || parse_size("--max", maxs, &hi) ||
        cli_count("bench", "--factor", fac, 1024, &factor) != 0 ||
        cli_count("bench", "--gpus-per-thread", gpt, 65536, &g) != 0 ||
        (ranks != NULL && cli_count("bench", "--ranks", ranks, 65536, &nr) != 0))
        return 2;
    if (factor < 2 || lo > hi || g < 1) {
        fprintf(stderr, "strata bench: need --factor >= 2, --min <= --max and --gpus-per-thread >= 1\n");
        return 2;
    }
    struct diag d;
    memset(&d, 0, sizeof d);
    struct hw_system sys;
    enum hw_kind hwk;
    if (hw_load(hw, &sets, &sys, &hwk, &d) != 0)
        return cli_fail(&d);
    if (hwk == HW_CHIP) {
        fprintf(stderr, "strata bench: --hw %s is a chip config; a collective needs a system "
                        "file (configs/systems/) that joins several chips\n", hw);
        return 2;
    }
    if (nr == 0)
        nr = sys.ndevices;
    if (nr < 2 || nr > sys.ndevices) {
        fprintf(stderr, "strata bench: --ranks %u: system %s has %u devices (a collective needs 2 "
                        "or more)\n", nr, sys.name, sys.ndevices);
        sys_free(&sys);
        return 2;
    }
    struct afile af;
    FILE *cf = NULL;
    if (csv != NULL) {
        if (cli_is_stdout(csv)) {
            cf = stdout;
        } else {
            if (afile_open(&af, csv, &d) != 0) {
                sys_free(&sys);
                return cli_fail(&d);
            }
            cf = af.f;
        }
        fprintf(cf, "size_bytes,count,type,time_us,algbw_GBps,busbw_GBps,how,gpu_us,host_us\n");
    }
    FILE *txt = cf == stdout ? stderr : stdout;
    fprintf(txt, "# strata bench collective: %s on %s, %u ranks (%s x %u), type %s\n",
            coll_kind_name(kind), sys.name, nr, sys.chip.name, sys.ndevices, dtype_name(dt));
    fprintf(txt, "#%13s %12s %8s %10s %9s %9s  %s\n", "size", "count", "type", "time", "algbw",
            "busbw", "algorithm");
    fprintf(txt, "#%13s %12s %8s %10s %9s %9s\n", "(B)", "(elements)", "", "(us)", "(GB/s)",
            "(GB/s)");
    double eb = dtype_bytes(dt, 1.0);
    for (uint64_t s = lo; s <= hi; s *= factor) {
        struct collbench_pt pt;
        if (collbench_run(&sys, kind, algo, dt, nr, g < nr ? g : nr, s, &pt, &d) != 0) {
            if (cf != NULL && cf != stdout)
                afile_abort(&af);
            sys_free(&sys);
            return cli_fail(&d);
        }
        uint64_t count = (uint64_t)((double)s / eb);
        fprintf(txt, "%14" PRIu64 " %12" PRIu64 " %8s %10.2f %9.2f %9.2f  %s\n", s, count,
                dtype_name(dt), pt.time_s * 1e6, pt.algbw * 1e-9, pt.busbw * 1e-9, pt.how);
        if (cf != NULL)
            fprintf(cf, "%" PRIu64 ",%" PRIu64 ",%s,%.4f,%.4f,%.4f,%s,%.4f,%.4f\n", s, count,
                    dtype_name(dt), pt.time_s * 1e6, pt.algbw * 1e-9, pt.busbw * 1e-9, pt.how,
                    pt.gpu_s * 1e6, pt.host_s * 1e6);
        if (s > UINT64_MAX / factor)
            break;
    }
    sys_free(&sys);
    if (cf != NULL && cf != stdout && afile_commit(&af, &d) != 0)
        return cli_fail(&d);
    return 0;
}
