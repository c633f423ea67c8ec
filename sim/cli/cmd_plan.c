/* cmd_plan.c: `strata plan`: the deployments of a model, searched for the
 * one that serves a workload at the most output tokens a second per device
 * within a latency SLA (sim/out/plan.h, docs/plan.md).  Every candidate is
 * the `strata serve` run with the same options and --tp, --max-num-seqs
 * and --chunked-prefill set to its values: the workload and each
 * candidate's scheduler are parsed by serve's own calls (serve_opts.h). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "afile.h"
#include "cfg.h"
#include "cli.h"
#include "diag.h"
#include "hwload.h"
#include "llm.h"
#include "plan.h"
#include "plot_plan.h"
#include "progress.h"
#include "serve_opts.h"
#include "stack.h"

#define PLAN_MAX_HW 16
#define PLAN_MAX_LIST 16            /* values of --tp, --max-num-seqs, --chunked-prefill */
#define PLAN_DEF_SEQS "16,32,64,128,256"
#define PLAN_DEF_MAX_TP 8           /* a chip config: TP 1, 2, 4, 8 */
#define PLAN_DEF_TOP 5
#define PLAN_EXIT_NONE 3            /* no configuration meets the SLA (docs/plan.md) */

const char cli_plan_usage[] =
    "  strata plan     --model CONFIG.json --hw HW[,HW...] [--hw HW ...] (--rate R | --concurrency C |\n"
    "                  --requests-file F.csv) [--requests N] [--isl L] [--osl L] [--seed S]\n"
    "                  [--sla KEY=TIME,...] [--tp N,N,... | --max-tp N] [--max-num-seqs N,N,...]\n"
    "                  [--chunked-prefill on|off|on,off] [--stack NAME] [--dtype bf16] [--weights FMT]\n"
    "                  [--scheduler continuous|static] [--max-batched-tokens N] [--block-size N]\n"
    "                  [--scheduler-steps N]\n"
    "                  [--gpu-memory-utilization F] [-j|--jobs THREADS] [--top N] [--no-progress]\n"
    "                  [--rank throughput|energy] [--json OUT.json] [--csv ALL.csv] [--out DIR] " CLI_SET_USAGE "\n"
    "                  (each candidate is a serve run; --sla: KEY is ttft, tpot or e2e with _mean,\n"
    "                  _p50, _p90 or _p99, TIME with its unit: ttft_p90=500ms,tpot_p90=50ms;\n"
    "                  defaults: TP the powers of two up to a system's devices (a chip: --max-tp 8),\n"
    "                  --max-num-seqs " PLAN_DEF_SEQS ", --chunked-prefill as serve's, -j 1, --top 5;\n"
    "                  --out DIR: plan.csv, front.csv, plan.json and front.png/.svg; exit 3 when no\n"
    "                  configuration meets the SLA; --rank energy: those meeting it by joules an\n"
    "                  output token, on chips with a power block; docs/plan.md)\n";

/* The options plan has beyond serve's. */
struct plan_args {
    const char *hw[CLI_REPEAT_MAX];
    int nhw;
    const char *sla, *max_tp, *jobs, *top, *outdir, *rank;
    int noprog;
};

/* Splits a comma list into out (at most max items, each a pointer into
 * buf, which holds a copy of text).  0 with *n, or 2 after the message. */
static int split_list(const char *opt, const char *text, char *buf, size_t bn, char **out, unsigned max,
                      unsigned *n)
{
    snprintf(buf, bn, "%s", text);
    *n = 0;
    for (char *s = buf;;) {
        char *comma = strchr(s, ',');
        if (comma != NULL)
            *comma = '\0';
        if (*s == '\0' || *n == max) {
            fprintf(stderr, "strata plan: %s: %s, got '%.200s'\n", opt,
                    *s == '\0' ? "an empty item in the list" : "too many items", text);
            return 2;
        }
        out[(*n)++] = s;
        if (comma == NULL)
            return 0;
        s = comma + 1;
    }
}

/* The hardware of every --hw (each a comma list) resolved to paths in
 * path[], their names (as serve reports them) and device counts (0: a chip
 * config).  0, or 1/2 after the message. */
static int load_hw(const struct plan_args *pa, const struct cfg_sets *sets, char (*path)[1600], char (*name)[64],
                   uint32_t *ndev, unsigned *nhw)
{
    *nhw = 0;
    for (int i = 0; i < pa->nhw; i++) {
        char buf[2048], *item[PLAN_MAX_HW];
        unsigned k;
        if (split_list("--hw", pa->hw[i], buf, sizeof buf, item, PLAN_MAX_HW, &k) != 0)
            return 2;
        for (unsigned j = 0; j < k; j++) {
            if (*nhw == PLAN_MAX_HW) {
                fprintf(stderr, "strata plan: --hw: at most %d hardware files\n", PLAN_MAX_HW);
                return 2;
            }
            const char *arg = item[j];
            if (cli_find("plan", "--hw", &arg, 0, path[*nhw], sizeof path[*nhw]) != 0)
                return 1;
            if (arg != path[*nhw])
                snprintf(path[*nhw], sizeof path[*nhw], "%s", arg);
            struct hw_system sys;
            enum hw_kind kind;
            struct diag d;
            memset(&d, 0, sizeof d);
            if (hw_load(path[*nhw], sets, &sys, &kind, &d) != 0)
                return cli_fail(&d);
            snprintf(name[*nhw], sizeof name[*nhw], "%s", kind == HW_CHIP ? cfg_label(&sys.chip) : sys.name);
            ndev[*nhw] = kind == HW_CHIP ? 0 : sys.ndevices;
            sys_free(&sys);
            for (unsigned u = 0; u < *nhw; u++)
                if (strcmp(path[u], path[*nhw]) == 0) {
                    fprintf(stderr, "strata plan: --hw: %.200s given twice\n", path[u]);
                    return 2;
                }
            (*nhw)++;
        }
    }
    return 0;
}

/* A list of counts (each >= 1) into v: 0, or 2 after the message. */
static int count_list(const struct serve_args *a, const char *opt, const char *text, unsigned max,
                      uint32_t *v, unsigned *n)
{
    char buf[512], *item[PLAN_MAX_LIST];
    if (split_list(opt, text, buf, sizeof buf, item, PLAN_MAX_LIST, n) != 0)
        return 2;
    for (unsigned i = 0; i < *n; i++)
        if (serve_opts_count(a, opt, item[i], 1, max, &v[i]) != 0)
            return 2;
    return 0;
}

/* The search space's lists: TP per hardware (tp[h][]), max_num_seqs and
 * chunked prefill (NULL: serve's default).  0, or 2. */
struct space {
    uint32_t tp[PLAN_MAX_HW][PLAN_MAX_LIST];
    unsigned ntp[PLAN_MAX_HW];
    char seqs[PLAN_MAX_LIST][16];
    unsigned nseqs;
    const char *chunked[2];
    unsigned nchunked;
};

static int make_space(const struct serve_args *a, const struct plan_args *pa, const uint32_t *ndev, unsigned nhw,
                      struct space *sp)
{
    memset(sp, 0, sizeof *sp);
    uint32_t v[PLAN_MAX_LIST], maxtp = PLAN_DEF_MAX_TP;
    unsigned n;
    if (a->tp != NULL && pa->max_tp != NULL) {
        fprintf(stderr, "strata plan: give --tp or --max-tp, not both\n");
        return 2;
    }
    if (pa->max_tp != NULL && serve_opts_count(a, "--max-tp", pa->max_tp, 1, 65536, &maxtp) != 0)
        return 2;
    if (a->tp != NULL && count_list(a, "--tp", a->tp, 65536, v, &n) != 0)
        return 2;
    for (unsigned h = 0; h < nhw; h++) {
        if (a->tp != NULL) {
            memcpy(sp->tp[h], v, n * sizeof *v);
            sp->ntp[h] = n;
            continue;
        }
        uint32_t top = pa->max_tp != NULL || ndev[h] == 0 ? maxtp : ndev[h];
        for (uint32_t t = 1; t <= top && sp->ntp[h] < PLAN_MAX_LIST; t *= 2)
            sp->tp[h][sp->ntp[h]++] = t;
    }
    if (count_list(a, "--max-num-seqs", a->seqs ? a->seqs : PLAN_DEF_SEQS, 65536, v, &sp->nseqs) != 0)
        return 2;
    for (unsigned i = 0; i < sp->nseqs; i++)
        snprintf(sp->seqs[i], sizeof sp->seqs[i], "%u", v[i]);
    sp->nchunked = 1;           /* NULL: as serve would have it */
    if (a->chunked != NULL) {
        int on = strstr(a->chunked, "on") != NULL, off = strstr(a->chunked, "off") != NULL;
        if (strcmp(a->chunked, "on") != 0 && strcmp(a->chunked, "off") != 0 && strcmp(a->chunked, "on,off") != 0 &&
            strcmp(a->chunked, "off,on") != 0)
            return serve_opts_err(a, "--chunked-prefill", "expected on, off or on,off", a->chunked);
        sp->nchunked = 0;
        if (on)
            sp->chunked[sp->nchunked++] = "on";
        if (off)
            sp->chunked[sp->nchunked++] = "off";
    }
    return 0;
}

/* The candidates, hardware-major, then TP, chunked prefill and
 * max_num_seqs: each parsed as serve parses its options.  0, or 2. */
static int make_cands(const struct serve_args *a, const struct stack *stk, const struct llm_config *c,
                      const struct space *sp, unsigned nhw, struct plan_cand **out, unsigned *n)
{
    unsigned total = 0;
    for (unsigned h = 0; h < nhw; h++)
        total += sp->ntp[h] * sp->nchunked * sp->nseqs;
    struct plan_cand *cs = calloc(total ? total : 1, sizeof *cs);
    if (cs == NULL) {
        fprintf(stderr, "strata plan: out of memory for %u candidates\n", total);
        return 2;
    }
    unsigned k = 0;
    for (unsigned h = 0; h < nhw; h++)
        for (unsigned t = 0; t < sp->ntp[h]; t++)
            for (unsigned ch = 0; ch < sp->nchunked; ch++)
                for (unsigned s = 0; s < sp->nseqs; s++) {
                    struct serve_args ca = *a;
                    char tp[16];
                    snprintf(tp, sizeof tp, "%u", sp->tp[h][t]);
                    ca.tp = tp;
                    ca.seqs = sp->seqs[s];
                    ca.chunked = sp->chunked[ch];
                    struct plan_cand *x = &cs[k++];
                    x->hw = h;
                    x->tp = sp->tp[h][t];
                    if (serve_opts_step(&ca, stk, &x->pre, &x->dec) != 0 ||
                        serve_opts_sched(&ca, stk, c->max_pos, &x->sched, &x->util) != 0) {
                        free(cs);
                        return 2;
                    }
                }
    *out = cs;
    *n = total;
    return 0;
}

/* Every output the options ask for, all or none.  0, or 1. */
static int write_outputs(const struct serve_args *a, const struct plan_args *pa, const struct plan *p,
                         unsigned top)
{
    struct diag d;
    memset(&d, 0, sizeof d);
    char done[6][1200];
    int nd = 0, rc = 0, rendered = 0;
    if (a->csv != NULL && (rc = plan_report_csv(p, a->csv, &d)) == 0 && !cli_is_stdout(a->csv))
        snprintf(done[nd++], sizeof done[0], "%.1100s", a->csv);
    if (rc == 0 && a->js != NULL && (rc = plan_report_json(p, a->js, &d)) == 0 && !cli_is_stdout(a->js))
        snprintf(done[nd++], sizeof done[0], "%.1100s", a->js);
    if (rc == 0 && pa->outdir != NULL) {
        rc = afile_make_dir(pa->outdir, "--out", &d);
        static const char *const names[] = {"plan.csv", "front.csv", "plan.json"};
        for (int i = 0; i < 3 && rc == 0; i++) {
            snprintf(done[nd], sizeof done[0], "%.1100s/%s", pa->outdir, names[i]);
            rc = i == 0 ? plan_report_csv(p, done[nd], &d) : i == 1 ? plan_report_front(p, done[nd], &d)
                                                                    : plan_report_json(p, done[nd], &d);
            nd += rc == 0;
        }
        if (rc == 0)
            rc = plot_plan(p, pa->outdir, &rendered, &d);
    }
    if (rc != 0) {
        for (int i = 0; i < nd; i++)
            remove(done[i]);    /* all the outputs, or none */
        return cli_fail(&d);
    }
    FILE *f = cli_is_stdout(a->js) || cli_is_stdout(a->csv) ? stderr : stdout;
    plan_report_text(p, top, f);
    if (pa->outdir != NULL)
        fprintf(f, "wrote %s/plan.csv, front.csv, plan.json, front.dat, front.gp%s\n", pa->outdir,
                rendered ? ", front.png, front.svg" : " (no gnuplot: no images)");
    return 0;
}

/* After the options: 0 (a configuration meets the SLA), 1, 2 or 3. */
static int plan_main(const struct serve_args *a, const struct plan_args *pa, const struct cfg_sets *sets)
{
    struct plan p;
    memset(&p, 0, sizeof p);
    char why[200];
    if (pa->sla != NULL && plan_sla_parse(pa->sla, &p.sla, why, sizeof why) != 0) {
        fprintf(stderr, "strata plan: --sla: %s\n", why);
        return 2;
    }
    if (pa->rank != NULL) {
        if (strcmp(pa->rank, "energy") != 0 && strcmp(pa->rank, "throughput") != 0) {
            fprintf(stderr, "strata plan: --rank: '%s': throughput or energy\n", pa->rank);
            return 2;
        }
        p.by_energy = strcmp(pa->rank, "energy") == 0;
    }
    unsigned nth = 1, top = PLAN_DEF_TOP;
    if (pa->jobs != NULL && (cli_count("plan", "-j", pa->jobs, 256, &nth) != 0 || nth == 0)) {
        if (nth == 0)
            fprintf(stderr, "strata plan: -j: at least 1 thread\n");
        return 2;
    }
    if (pa->top != NULL && cli_count("plan", "--top", pa->top, 1000, &top) != 0)
        return 2;
    char path[PLAN_MAX_HW][1600], name[PLAN_MAX_HW][64];
    uint32_t ndev[PLAN_MAX_HW];
    unsigned nhw;
    int rc = load_hw(pa, sets, path, name, ndev, &nhw);
    if (rc != 0)
        return rc;
    struct stack stk;
    char sdir[1600] = "";
    if ((rc = cli_load_stack_sets("plan", a->stack, sets, &stk, sdir, sizeof sdir)) != 0)
        return rc;
    const struct stack *sp = a->stack != NULL ? &stk : NULL;
    struct serve_workload w;
    char label[1200];
    struct space space;
    if ((rc = serve_opts_workload(a, &w, label, sizeof label)) != 0 || (rc = make_space(a, pa, ndev, nhw, &space)) != 0)
        return rc;
    struct diag d;
    memset(&d, 0, sizeof d);
    struct llm_config c;
    if (llm_config_load(a->model, &c, &d) != 0 || llm_config_decoder(&c, "strata plan", 1, &d) != 0)
        return cli_fail(&d);
    if ((rc = make_cands(a, sp, &c, &space, nhw, &p.c, &p.n)) != 0)
        return rc;
    struct serve_sched sch0 = p.c[0].sched;
    struct serve_reqs q;
    if ((rc = serve_opts_reqs(a, &w, &c, &sch0, &q)) != 0) {
        free(p.c);
        return rc;
    }
    for (unsigned i = 0; i < p.n; i++)
        p.c[i].sched.concurrency = sch0.concurrency;
    const char *hw[PLAN_MAX_HW];
    for (unsigned h = 0; h < nhw; h++)
        hw[h] = path[h];
    p.model = &c;
    p.model_path = a->model;
    p.sets = sets;
    p.stack = sp;
    p.stack_name = sp ? stk.name : "";
    p.stack_dir = sdir;
    p.nhw = nhw;
    p.hw = hw;
    p.hw_name = (const char (*)[64])name;
    p.reqs = &q;
    p.workload = label;
    p.seed = w.seed;
    /* on a terminal, past 2 s: the runs done on stderr, cleared at the end (progress.h) */
    struct prog pg;
    prog_init(&pg, !pa->noprog, "plan");
    plan_run(&p, nth, pg.on ? &pg : NULL);
    unsigned nofit = 0, met = 0;
    for (unsigned i = 0; i < p.n; i++) {
        nofit += p.c[i].status == PLAN_NOFIT;
        met += p.c[i].meets;
    }
    if (nofit == p.n) {
        /* the largest split of the last hardware: the least that did not fit */
        fprintf(stderr, "strata plan: %s: the model fits no candidate on any --hw (TP up to %u): %s\n", a->model,
                p.c[p.n - 1].tp, p.c[p.n - 1].why);
        rc = 1;
    } else {
        rc = write_outputs(a, pa, &p, top);
        if (rc == 0 && met == 0)
            rc = PLAN_EXIT_NONE;
    }
    serve_reqs_free(&q);
    free(p.c);
    return rc;
}

int cli_plan(int argc, char **argv)
{
    struct serve_args a;
    struct plan_args pa;
    memset(&a, 0, sizeof a);
    memset(&pa, 0, sizeof pa);
    a.verb = "plan";
    const struct cli_opt opts[] = {
        {"hw", 0, pa.hw, &pa.nhw},      {"model", 0, &a.model, NULL},
        {"stack", 0, &a.stack, NULL},   {"tp", 0, &a.tp, NULL},
        {"max-tp", 0, &pa.max_tp, NULL}, {"dtype", 0, &a.dtype, NULL},
        {"weights", 0, &a.weights, NULL},
        {"rate", 0, &a.rate, NULL},     {"concurrency", 0, &a.conc, NULL},
        {"requests-file", 0, &a.file, NULL}, {"requests", 0, &a.nreq, NULL},
        {"isl", 0, &a.isl, NULL},       {"osl", 0, &a.osl, NULL},
        {"seed", 0, &a.seed, NULL},     {"sla", 0, &pa.sla, NULL},
        {"scheduler", 0, &a.sched, NULL}, {"max-num-seqs", 0, &a.seqs, NULL},
        {"scheduler-steps", 0, &a.msteps, NULL},
        {"max-batched-tokens", 0, &a.tokens, NULL}, {"block-size", 0, &a.block, NULL},
        {"chunked-prefill", 0, &a.chunked, NULL},
        {"gpu-memory-utilization", 0, &a.util, NULL},
        {"jobs", 'j', &pa.jobs, NULL},  {"top", 0, &pa.top, NULL},
        {"no-progress", 0, NULL, &pa.noprog}, {"rank", 0, &pa.rank, NULL},
        {"json", 0, &a.js, NULL},       {"csv", 0, &a.csv, NULL},
        {"out", 0, &pa.outdir, NULL},
        {NULL, 0, NULL, NULL},
    };
    struct cfg_sets sets;
    memset(&sets, 0, sizeof sets);
    int rc = cli_take_sets("plan", &argc, argv, &sets);
    if (rc >= 0)
        return rc;
    rc = cli_parse("plan", cli_plan_usage, opts, argc, argv, NULL);
    if (rc >= 0)
        return rc;
    char model_path[1600], file_path[1600];
    if (cli_find("plan", "--model", &a.model, 1, model_path, sizeof model_path) != 0)
        return 1;
    if (pa.nhw == 0 || a.model == NULL) {
        fprintf(stderr, "strata plan: --hw and --model are required\n");
        return 2;
    }
    if (a.file != NULL)
        cli_find_data(&a.file, file_path, sizeof file_path);
    if (a.js != NULL && a.csv != NULL && strcmp(a.js, a.csv) == 0) {
        fprintf(stderr, "strata plan: --json and --csv name the same file '%s'\n", a.js);
        return 2;
    }
    return plan_main(&a, &pa, &sets);
}
