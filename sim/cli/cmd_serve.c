/* cmd_serve.c: `strata serve`: requests through a serving engine on the
 * hardware (sim/study/serve.h, docs/serving.md).  The hardware, the stack
 * and the model load as `run` and `gen llm` load them; the KV cache is what
 * `fit` leaves of the device's memory. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cfg.h"
#include "cli.h"
#include "diag.h"
#include "llm.h"
#include "numfmt.h"
#include "serve.h"
#include "units.h"
#include "serve_report.h"
#include "serve_opts.h"
#include "serve_setup.h"
#include "stack.h"
#include "system.h"

const char cli_serve_usage[] =
    "  strata serve    --hw CONFIG.yaml --model CONFIG.json (--rate R | --concurrency C |\n"
    "                  --requests-file F.csv) [--requests N] [--isl L] [--osl L] [--seed S]\n"
    "                  [--stack NAME] [--tp N] [--dtype bf16] [--weights FMT]\n"
    "                  [--scheduler continuous|static]\n"
    "                  [--max-num-seqs N] [--max-batched-tokens N] [--block-size N]\n"
    "                  [--chunked-prefill on|off] [--scheduler-steps N] [--gpu-memory-utilization F]\n"
    "                  [--capacity-policy max_utilization|guaranteed_no_evict]\n"
    "                  [--goodput ttft=T,tpot=T,e2e=T] [--json OUT.json] [--csv REQUESTS.csv]\n"
    "                  [--timeline OUT.json] [--disagg P:D --kv-bandwidth BW]\n"
    "                  [--spec-draft DRAFT.json --spec-k K --spec-accept A]\n"
    "                  [--shared-prefix G:P] [--prefix-caching on|off]\n"
    "                  " CLI_SET_USAGE "\n"
    "                  (--rate: Poisson arrivals, requests/s; --concurrency: a closed loop of C\n"
    "                  clients; --requests-file: arrival_s,input_tokens,output_tokens lines;\n"
    "                  --isl/--osl: N, uniform:A..B, normal:MU,SIGMA, lognormal:MEAN,CV[,MAX] or\n"
    "                  gamma:MEAN,CV[,MAX] tokens; --scheduler-steps: decode steps a scheduler\n"
    "                  call runs; --goodput: the\n"
    "                  requests/s that meet each bound, a request; --timeline: a Perfetto track a\n"
    "                  request, the steps and the KV cache; --disagg: P prefill and D decode\n"
    "                  instances of --tp each, the KV moving at BW a device; --spec-draft:\n"
    "                  speculative decoding, K draft tokens a step, each accepted with chance A\n"
    "                  given the ones before; --shared-prefix: G prompts of P tokens, request i\n"
    "                  starting with the (i mod G)th; --prefix-caching: their full KV blocks stay\n"
    "                  cached for the next of their group; --capacity-policy: guaranteed_no_evict\n"
    "                  admits a request only with its whole output's KV free (TensorRT-LLM's\n"
    "                  default), never preempting; --csv: a row a\n"
    "                  request. defaults: --requests 1000 (a file: all of it), --isl 1024,\n"
    "                  --osl 128, --seed 1, --tp 1, --dtype bf16, --weights as --dtype (FMT: as gen\n"
    "                  llm --weights), then the stack's serving: block,\n"
    "                  else vLLM's: --scheduler continuous, --capacity-policy max_utilization,\n"
    "                  --max-num-seqs 256, --block-size 16,\n"
    "                  --chunked-prefill on with --max-batched-tokens 8192 (off: the model's\n"
    "                  max_position_embeddings, at least 2048), --gpu-memory-utilization 0.9;\n"
    "                  docs/serving.md)\n";

/* The outputs, after the run: 0, or 1. */
static int write_outputs(const struct serve_args *a, const struct serve_ctx *ctx)
{
    struct serve_summary sm;
    serve_summarize(ctx, &sm);
    struct diag d;
    memset(&d, 0, sizeof d);
    if (a->csv != NULL && serve_report_csv(ctx, a->csv, &d) != 0)
        return cli_fail(&d);
    if (a->js != NULL && serve_report_json(ctx, &sm, a->js, &d) != 0) {
        if (a->csv != NULL && !cli_is_stdout(a->csv))
            remove(a->csv);     /* all the outputs, or none */
        return cli_fail(&d);
    }
    if (a->timeline != NULL && serve_report_timeline(ctx, a->timeline, &d) != 0) {
        if (a->csv != NULL && !cli_is_stdout(a->csv))
            remove(a->csv);
        if (a->js != NULL && !cli_is_stdout(a->js))
            remove(a->js);
        return cli_fail(&d);
    }
    serve_report_text(ctx, &sm, cli_is_stdout(a->js) || cli_is_stdout(a->csv) ? stderr : stdout);
    return 0;
}

/* After the options: load, size the cache, run, report.  0, 1 or 2. */
static int serve_main(const struct serve_args *a, const struct cfg_sets *sets)
{
    struct stack stk;
    char sdir[1600];
    int src = cli_load_stack_sets("serve", a->stack, sets, &stk, sdir, sizeof sdir);
    if (src != 0)
        return src;
    const struct stack *sp = a->stack != NULL ? &stk : NULL;
    struct serve_workload w;
    char label[1200];
    struct llm_step pre, dec;
    struct serve_slo slo;
    char why[160];
    if (a->goodput != NULL && serve_slo_parse(a->goodput, &slo, why, sizeof why) != 0) {
        fprintf(stderr, "strata serve: --goodput: %s\n", why);
        return 2;
    }
    unsigned np = 0, nd = 0;
    double kvbw = 0;
    if (a->disagg != NULL) {
        char tail;
        struct qty bq;
        if (sscanf(a->disagg, "%u:%u%c", &np, &nd, &tail) != 2 || np < 1 || nd < 1 || np > 4096 || nd > 4096) {
            fprintf(stderr, "strata serve: --disagg: expected P:D, prefill and decode instances (1 to 4096 "
                            "each), got '%s'\n", a->disagg);
            return 2;
        }
        if (a->kvbw == NULL || qty_parse(a->kvbw, &bq) != 0 || bq.kind != QK_BANDWIDTH || !(bq.si > 0)) {
            fprintf(stderr, "strata serve: --kv-bandwidth: with --disagg, the bandwidth a device's KV moves at "
                            "from a prefill to a decode instance, with its unit (50GB/s: 400 Gb/s "
                            "InfiniBand; 450GB/s: NVLink 4 in a node), got '%s'\n", a->kvbw ? a->kvbw : "");
            return 2;
        }
        if (a->conc != NULL) {
            fprintf(stderr, "strata serve: --disagg: a closed loop (--concurrency) is not modelled "
                            "disaggregated; give --rate or --requests-file\n");
            return 2;
        }
        kvbw = bq.si;
    } else if (a->kvbw != NULL) {
        fprintf(stderr, "strata serve: --kv-bandwidth: only with --disagg P:D\n");
        return 2;
    }
    int rc = serve_opts_workload(a, &w, label, sizeof label);
    if (rc == 0)
        rc = serve_opts_step(a, sp, &pre, &dec);
    if (rc != 0)
        return rc;
    struct diag d;
    memset(&d, 0, sizeof d);
    struct llm_config c;
    if (llm_config_load(a->model, &c, &d) != 0 || llm_config_decoder(&c, "strata serve", 1, &d) != 0)
        return cli_fail(&d);
    struct serve_sched sch;
    double util;
    if (serve_opts_sched(a, sp, c.max_pos, &sch, &util) != 0)
        return 2;
    struct serve_reqs q;
    rc = serve_opts_reqs(a, &w, &c, &sch, &q);
    if (rc != 0)
        return rc;
    struct serve_setup su;
    if (serve_setup_init(&su, a->hw, sets, sp, sdir, &c, &pre, &dec, util, &sch, &d) != 0) {
        if (d.file[0] == '\0')         /* the budget: whose model */
            fprintf(stderr, "strata serve: %s: ", a->model);
        serve_reqs_free(&q);
        return cli_fail(&d);
    }
    struct llm_config dc;       /* the draft's steps point at it until the run ends */
    if (a->spec_draft != NULL) {
        if (llm_config_load(a->spec_draft, &dc, &d) != 0 || llm_config_decoder(&dc, "a draft model", 0, &d) != 0) {
            serve_setup_free(&su);
            serve_reqs_free(&q);
            return cli_fail(&d);
        }
        if (dc.vocab != c.vocab) {
            fprintf(stderr, "strata serve: --spec-draft: %s has a vocabulary of %llu, %s %llu: a draft "
                            "model proposes the model's own tokens\n", a->spec_draft,
                    (unsigned long long)dc.vocab, a->model, (unsigned long long)c.vocab);
            serve_setup_free(&su);
            serve_reqs_free(&q);
            return 2;
        }
        if (serve_setup_draft(&su, &dc, &pre, &dec, &sch, &d) != 0) {
            serve_setup_free(&su);
            serve_reqs_free(&q);
            return cli_fail(&d);
        }
    }
    struct serve_result res;
    sch.record = a->timeline != NULL && np == 0;
    if (np > 0)
        rc = serve_run_disagg(&sch, &q, &su.steps, np, nd, su.kv_per_token / kvbw * 1e12, &res, &d) != 0
                 ? cli_fail(&d) : 0;
    else
        rc = serve_run(&sch, &q, &su.steps, &res, &d) != 0 ? cli_fail(&d) : 0;
    if (rc == 0) {
        const struct hw_config *cfg = &su.sys.chip;
        char dt[64];
        if (a->weights != NULL)
            snprintf(dt, sizeof dt, "%s, weights %.24s", dtype_name(dec.dtype), a->weights);
        else
            snprintf(dt, sizeof dt, "%s", dtype_name(dec.dtype));
        struct serve_ctx ctx = {su.sys.implied ? cfg_label(cfg) : su.sys.name, a->model, sp ? stk.name : "",
                                dec.tp, dt, label, w.seed, &sch, util, su.kv_per_token, su.fit.weights, &q,
                                &res, &su.steps, a->goodput != NULL ? &slo : NULL, np, nd, kvbw};
        struct serve_sched pool = sch;      /* the pools' blocks together, for the occupancy */
        if (np > 0) {
            pool.kv_blocks *= np + nd;
            ctx.sched = &pool;
        }
        rc = write_outputs(a, &ctx);
    }
    serve_result_free(&res);
    serve_setup_free(&su);
    serve_reqs_free(&q);
    return rc;
}

int cli_serve(int argc, char **argv)
{
    struct serve_args a;
    memset(&a, 0, sizeof a);
    a.verb = "serve";
    const struct cli_opt opts[] = {
        {"hw", 0, &a.hw, NULL},         {"model", 0, &a.model, NULL},
        {"stack", 0, &a.stack, NULL},   {"tp", 0, &a.tp, NULL},
        {"dtype", 0, &a.dtype, NULL},   {"weights", 0, &a.weights, NULL},
        {"rate", 0, &a.rate, NULL},
        {"concurrency", 0, &a.conc, NULL}, {"requests-file", 0, &a.file, NULL},
        {"requests", 0, &a.nreq, NULL}, {"isl", 0, &a.isl, NULL},
        {"osl", 0, &a.osl, NULL},       {"seed", 0, &a.seed, NULL},
        {"scheduler", 0, &a.sched, NULL}, {"max-num-seqs", 0, &a.seqs, NULL},
        {"scheduler-steps", 0, &a.msteps, NULL}, {"goodput", 0, &a.goodput, NULL},
        {"timeline", 0, &a.timeline, NULL}, {"disagg", 0, &a.disagg, NULL},
        {"kv-bandwidth", 0, &a.kvbw, NULL},
        {"spec-draft", 0, &a.spec_draft, NULL}, {"spec-k", 0, &a.spec_k, NULL},
        {"spec-accept", 0, &a.spec_accept, NULL},
        {"shared-prefix", 0, &a.prefix, NULL}, {"prefix-caching", 0, &a.pcache, NULL},
        {"max-batched-tokens", 0, &a.tokens, NULL}, {"block-size", 0, &a.block, NULL},
        {"chunked-prefill", 0, &a.chunked, NULL}, {"capacity-policy", 0, &a.capacity, NULL},
        {"gpu-memory-utilization", 0, &a.util, NULL},
        {"json", 0, &a.js, NULL},       {"csv", 0, &a.csv, NULL},
        {NULL, 0, NULL, NULL},
    };
    struct cfg_sets sets;
    memset(&sets, 0, sizeof sets);
    int rc = cli_take_sets("serve", &argc, argv, &sets);
    if (rc >= 0)
        return rc;
    rc = cli_parse("serve", cli_serve_usage, opts, argc, argv, NULL);
    if (rc >= 0)
        return rc;
    char hw_path[1600], model_path[1600], file_path[1600], draft_path[1600];
    if (cli_find("serve", "--hw", &a.hw, 0, hw_path, sizeof hw_path) != 0 ||
        cli_find("serve", "--model", &a.model, 1, model_path, sizeof model_path) != 0 ||
        (a.spec_draft != NULL &&
         cli_find("serve", "--spec-draft", &a.spec_draft, 1, draft_path, sizeof draft_path) != 0))
        return 1;
    if (a.hw == NULL || a.model == NULL) {
        fprintf(stderr, "strata serve: --hw and --model are required\n");
        return 2;
    }
    if (a.file != NULL)
        cli_find_data(&a.file, file_path, sizeof file_path);
    if (a.js != NULL && a.csv != NULL && strcmp(a.js, a.csv) == 0) {
        fprintf(stderr, "strata serve: --json and --csv name the same file '%s'\n", a.js);
        return 2;
    }
    return serve_main(&a, &sets);
}
