/* report_csv.c: a run's ops as CSV (report_csv.h), its text fields written
 * by csv_field (RFC 4180 quoting). */
#include "report_csv.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "afile.h"
#include "bodytext.h"
#include "csv.h"
#include "numfmt.h"
#include "strbuf.h"

/* Body b's columns from time_s on, each after its comma (bodytext_fn) */
static void csv_body(struct sb *b, const void *ctx, uint32_t body)
{
    const struct report_ctx *c = ctx;
    const struct hw_config *cfg = c->cfg;
    const struct op_result *o = &c->r->body[body];
    /* "%.9g", with numfmt_gp's integer path (the same text, faster) */
    char nb[40];
    const double head[2] = {report_op_time_s(o), o->flops};
    for (int k = 0; k < 2; k++) {
        numfmt_gp(nb, sizeof nb, head[k], 9);
        sb_putn(b, ",", 1);
        sb_puts(b, nb);
    }
    for (unsigned l = 0; l < cfg->nlevels; l++) {
        numfmt_g(nb, sizeof nb, o->bytes[l]);
        sb_putn(b, ",", 1);
        sb_puts(b, nb);
    }
    for (unsigned k = 0; k < CAT_STALL + cfg->nlevels; k++) {
        numfmt_gp(nb, sizeof nb, (double)o->time_ps[k] * REPORT_PS, 9);
        sb_putn(b, ",", 1);
        sb_puts(b, nb);
    }
    sb_putn(b, ",", 1);
    sb_puts(b, run_bound_name(cfg, o));
    numfmt_u64(nb, sizeof nb, o->kernels);
    sb_putn(b, ",", 1);
    sb_puts(b, nb);
    numfmt_u64(nb, sizeof nb, o->ctas);
    sb_putn(b, ",", 1);
    sb_puts(b, nb);
    numfmt_u64(nb, sizeof nb, o->waves);
    sb_putn(b, ",", 1);
    sb_puts(b, nb);
    sb_putn(b, ",", 1);
    csv_field(b, o->tile);
    for (unsigned l = 0; l < cfg->nlevels; l++) {
        numfmt_gp(nb, sizeof nb, (double)o->lat_ps[l] * REPORT_PS, 9);
        sb_putn(b, ",", 1);
        sb_puts(b, nb);
    }
    if (c->r->has_energy) {
        numfmt_gp(nb, sizeof nb, report_op_energy_j(cfg, o), 9);
        sb_putn(b, ",", 1);
        sb_puts(b, nb);
    }
}

int report_csv(const struct report_ctx *c, const char *path, struct diag *d)
{
    const struct run_result *r = c->r;
    const struct trace *t = c->t;
    struct afile a;
    if (afile_open(&a, path, d) != 0)
        return -1;
    FILE *f = a.f;
    fprintf(f, "id,name,kind,device,stream,dtype,start_s,time_s,flops");
    const struct hw_config *cfg = c->cfg;
    for (unsigned l = 0; l < cfg->nlevels; l++)
        fprintf(f, ",bytes_%s", cfg->level[l].name);
    fprintf(f, ",busy_s,launch_s,measured_s");
    for (unsigned l = 0; l < cfg->nlevels; l++)
        fprintf(f, ",stall_%s_s", cfg->level[l].name);
    fprintf(f, ",bound,kernels,ctas,waves,tile");
    for (unsigned l = 0; l < cfg->nlevels; l++)   /* of stall_LEVEL_s, the level below its rate */
        fprintf(f, ",latency_%s_s", cfg->level[l].name);
    if (r->has_energy)
        fprintf(f, ",energy_J");
    fprintf(f, "\n");
    /* a row at a time in memory, one fwrite each (stdio's per-call
     * locking was a third of a 1M-op file's time) */
    struct sb b = {0};
    struct bodytext bt;
    bodytext_init(&bt, r->nbody);
    for (uint32_t i = 0; i < r->nops; i++) {
        const struct op *op = &t->ops[i];
        b.n = 0;
        csv_field(&b, op_id(t, op));
        sb_putn(&b, ",", 1);
        csv_field(&b, op_name(t, op));
        sb_putn(&b, ",", 1);
        sb_puts(&b, op_kind_name(op->kind));
        sb_putn(&b, ",", 1);
        csv_field(&b, t->devices[op->device]);
        /* "%.9g", with numfmt_gp's integer path (the same text, faster) */
        char nb[40];
        numfmt_u64(nb, sizeof nb, op->stream);
        sb_putn(&b, ",", 1);
        sb_puts(&b, nb);
        sb_putn(&b, ",", 1);
        sb_puts(&b, dtype_name(op->dtype));
        numfmt_gp(nb, sizeof nb, (double)run_op_start(r, i) * REPORT_PS, 9);
        sb_putn(&b, ",", 1);
        sb_puts(&b, nb);
        bodytext_put(&bt, &b, r->op[i].body, csv_body, c);
        sb_putn(&b, "\n", 1);
        fwrite(b.s, 1, b.n, f);
    }
    bodytext_free(&bt);
    free(b.s);
    return afile_commit(&a, d);
}
