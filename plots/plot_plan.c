/* plot_plan.c: a plan's Pareto plot (plot_plan.h).  The data file has two
 * blocks per hardware, gnuplot's index 2h (every candidate that ran) and
 * 2h + 1 (its front, by rising tokens a second per user); names go into
 * the script as plain words, with nothing that could end a string. */
#include "plot_plan.h"

#include <stdlib.h>
#include <string.h>

#include "plot_files.h"
#include "plot_gnuplot_run.h"
#include "plot_style.h"
#include "strbuf.h"

/* Hardware h's block: its candidates that ran (front only: those on the
 * front, by rising tok_s_user; ties by candidate order). */
static void block(struct sb *dat, const struct plan *p, unsigned h, int front)
{
    sb_printf(dat, "# %s: %s, tokens_per_s_per_user output_tokens_per_s_per_device tp max_num_seqs\n",
              p->hw_name[h], front ? "Pareto front" : "every candidate that ran");
    double last = -1;
    for (;;) {      /* a selection by rising tok_s_user: a few hundred points */
        const struct plan_cand *next = NULL;
        for (unsigned i = 0; i < p->n; i++) {
            const struct plan_cand *c = &p->c[i];
            if (c->hw != h || c->status != PLAN_RAN || (front && !c->on_front) || !(c->tok_s_user > last))
                continue;
            if (next == NULL || c->tok_s_user < next->tok_s_user)
                next = c;
        }
        if (next == NULL)
            break;
        for (unsigned i = 0; i < p->n; i++) {
            const struct plan_cand *c = &p->c[i];
            if (c->hw == h && c->status == PLAN_RAN && (!front || c->on_front) && c->tok_s_user == next->tok_s_user)
                sb_printf(dat, "%.9g %.9g %u %u\n", c->tok_s_user, c->tok_s_gpu, c->tp, c->sched.max_num_seqs);
        }
        last = next->tok_s_user;
    }
    sb_printf(dat, "\n\n");
}

int plot_plan(const struct plan *p, const char *dir, int *rendered, struct diag *d)
{
    *rendered = 0;
    struct sb dat = {0}, gp = {0}, cmd = {0};
    for (unsigned h = 0; h < p->nhw; h++) {
        block(&dat, p, h, 0);
        block(&dat, p, h, 1);
    }
    sb_printf(&gp, "# front.gp: written by strata plan; render with: gnuplot front.gp\n"
                   "set title \"output tokens/s per device against tokens/s per user (lines: Pareto fronts)\"\n"
                   "set xlabel \"tokens/s per user (1 / mean TPOT)\"\nset ylabel \"output tokens/s per device\"\n"
                   "set grid\nset key outside right\n");
    sb_printf(&cmd, "plot ");
    for (unsigned h = 0; h < p->nhw; h++) {
        char name[80];
        pstyle_plain(name, sizeof name, p->hw_name[h]);
        const char *col = pstyle_seq_colors[(h * 3) % PSTYLE_SEQ_N];
        sb_printf(&cmd, "%s\"front.dat\" index %u using 1:2 with points pt 7 ps 0.6 lc rgb \"%s\" notitle, "
                        "\"front.dat\" index %u using 1:2 with linespoints lw 2 pt 7 lc rgb \"%s\" title \"%s\"",
                  h ? ", " : "", 2 * h, col, 2 * h + 1, col, name);
    }
    sb_printf(&gp, "set terminal pngcairo noenhanced size 1000,600\nset output \"front.png\"\n%s\n", cmd.s);
    sb_printf(&gp, "set terminal svg noenhanced size 1000,600\nset output \"front.svg\"\n%s\n", cmd.s);
    char path[1200];
    struct pfiles w;            /* both files, or neither */
    memset(&w, 0, sizeof w);
    snprintf(path, sizeof path, "%.1100s/front.dat", dir);
    int rc = pfiles_put(&w, path, dat.s, dat.n, d);
    snprintf(path, sizeof path, "%.1100s/front.gp", dir);
    if (rc == 0 && (rc = pfiles_put(&w, path, gp.s, gp.n, d)) != 0)
        pfiles_undo(&w);
    free(dat.s);
    free(gp.s);
    free(cmd.s);
    char gnuplot[512];
    if (rc == 0 && gprun_find(gnuplot, sizeof gnuplot)) {
        const char *names[1] = {"front"};
        int have[1] = {1}, ok[1] = {0};
        gprun_scripts(gnuplot, dir, names, have, 1, ok);
        *rendered = ok[0];
    }
    return rc;
}
