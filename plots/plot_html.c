/* plot_html.c: report.html, one self-contained page (plot_html.h; what it
 * shows: docs/html.md): summary, verdicts, the chip, the SVG plots
 * (plot_svg.c) and the op table with a few lines of script to sort it. */
#include "plot_html.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cfgset.h"
#include "check.h"
#include "numfmt.h"
#include "plot_svg.h"
#include "report_text.h"

/* rows of the op table (slowest first) */
#define PHTML_MAX_TABLE_ROWS 500

static double whatif_time(const struct pdata *p, const char *name)
{
    const cJSON *w;
    cJSON_ArrayForEach(w, p->whatif)
    {
        if (strcmp(pload_jstr(w, "name"), name) == 0)
            return pload_jnum(w, "total_time_s");
    }
    return 0;
}

/* The re-simulated what-if that shortens the run most: its entry, or NULL */
static const cJSON *best_whatif(const struct pdata *p)
{
    const cJSON *w, *best = NULL;
    double tb = p->total;
    cJSON_ArrayForEach(w, p->whatif)
    {
        double t = pload_jnum(w, "total_time_s");
        if (t > 0 && t < tb) {
            tb = t;
            best = w;
        }
    }
    return best;
}

/* The level the run waited on most, its wait split by cause, and what the
 * what-ifs that touch it gained when re-simulated. */
static void verdict_wait(struct sb *h, const struct pdata *p)
{
    char a[32], b[32];
    int worst = -1;
    for (unsigned l = 0; l < p->nlvl; l++)
        if (p->stall[l] > 0 && (worst < 0 || p->stall[l] > p->stall[worst]))
            worst = (int)l;
    if (worst < 0)
        return;
    const char *wlabel = p->lvl[worst];
    double w = p->stall[worst], lat = p->stall_lat[worst];
    sb_printf(h, "<li>%.0f%% of the time the compute units waited on ", 100 * w / p->total);
    sb_html(h, wlabel);
    if (lat > 0.001 * p->total)
        sb_printf(h, ": %.0f%% while it ran at its full rate (its bandwidth), %.0f%% while it ran "
                     "below it, with too few bytes in flight for its latency (Little's law: "
                     "bytes in flight / latency) or a latency being waited out",
                  100 * (w - lat) / p->total, 100 * lat / p->total);
    sb_printf(h, ".");
    /* the built-in what-ifs double the DRAM's and the first cache's bandwidth and halve the
     * DRAM's latency */
    const char *wname = worst == p->lvl_dram ? "dram_bw_x2" : worst == p->lvl_l2 ? "l2_bw_x2" : "";
    double t2 = p->whatif ? whatif_time(p, wname) : 0;
    if (t2 > 0) {
        numfmt_time(a, sizeof a, p->total);
        numfmt_time(b, sizeof b, t2);
        sb_printf(h, " Doubling ");
        sb_html(h, wlabel);
        sb_printf(h, " bandwidth would cut at most %.0f%% (re-simulated: %s &rarr; %s)", 100 * (1 - t2 / p->total),
                  a, b);
        double tl = worst == p->lvl_dram && p->whatif ? whatif_time(p, "dram_lat_x0.5") : 0;
        if (tl > 0)
            sb_printf(h, "; halving its latency, %.0f%%", 100 * (1 - tl / p->total));
        sb_printf(h, ".");
    }
    sb_printf(h, "</li>\n");
}

static void verdicts(struct sb *h, const struct pdata *p)
{
    sb_printf(h, "<h2>Verdicts</h2>\n<ul id=\"verdicts\">\n");
    if (p->total <= 0) {
        sb_printf(h, "<li>The run took no time.</li></ul>\n");
        return;
    }
    const cJSON *bw = p->whatif ? best_whatif(p) : NULL;
    if (bw != NULL) {
        sb_printf(h, "<li>Of the re-simulated what-ifs, ");
        sb_html(h, pload_jstr(bw, "description"));
        sb_printf(h, " moves this run most: %.0f%% shorter", 100 * (1 - pload_jnum(bw, "total_time_s") / p->total));
        const char *set = pload_jstr(bw, "set");
        if (set[0] != '\0') {
            char cli[320];
            cfg_sets_list_cli(set, cli, sizeof cli);
            sb_printf(h, " (<code>");
            sb_html(h, cli);
            sb_printf(h, "</code>)");
        }
        sb_printf(h, ".</li>\n");
    }
    verdict_wait(h, p);
    for (unsigned l = 0; l < p->nlvl; l++) {     /* a link the devices waited on: communication */
        if (!p->lvl_link[l] || p->stall[l] < 0.05 * p->total)
            continue;
        sb_printf(h, "<li>%.0f%% of the step the devices waited on ", 100 * p->stall[l] / p->total);
        sb_html(h, p->lvl[l]);
        sb_printf(h, " (communication not hidden behind compute).");
        double tl = p->whatif ? whatif_time(p, "link_bw_x2") : 0;
        if (tl > 0)
            sb_printf(h, " Doubling its bandwidth would cut %.0f%% (re-simulated)%s.", 100 * (1 - tl / p->total),
                      tl > 0.99 * p->total ? ": the collectives are latency-bound (small messages), "
                                             "so fewer or fused collectives would help, not a faster link"
                                           : "");
        sb_printf(h, "</li>\n");
    }
    sb_printf(h, "<li>The compute pipes were busy %.0f%% of the time.", 100 * p->busy / p->total);
    double tm = p->whatif ? whatif_time(p, "matrix_x2") : 0;
    if (tm > 0)
        sb_printf(h, " Twice the matrix FLOP/s would cut %.0f%% (re-simulated).", 100 * (1 - tm / p->total));
    sb_printf(h, "</li>\n");
    if (p->launch / p->total > 0.05) {
        sb_printf(h, "<li>%.0f%% of the time went to kernel launches.", 100 * p->launch / p->total);
        double tl = p->whatif ? whatif_time(p, "no_launch") : 0;
        if (tl > 0)
            sb_printf(h, " With no launch overhead (CUDA graphs, fused kernels) the run would be %.0f%% shorter "
                         "(re-simulated).",
                      100 * (1 - tl / p->total));
        sb_printf(h, "</li>\n");
    }
    if (p->nops > 0) {
        struct pop ob;
        const struct pop *o = pload_op(p, p->order[0], &ob);
        sb_printf(h, "<li>The slowest op, <code>");
        sb_html(h, o->name);
        sb_printf(h, "</code> (");
        sb_html(h, o->kind);
        sb_printf(h, "), takes %.1f%% of the run and is bound by ", 100 * o->time / p->total);
        sb_html(h, o->bound);
        sb_printf(h, ".</li>\n");
    }
    sb_printf(h, "</ul>\n");
}

static const char html_head[] =
    "<!DOCTYPE html>\n<html lang=\"en\"><head><meta charset=\"utf-8\">\n"
    "<style>\n"
    "body{font-family:sans-serif;margin:24px;max-width:1200px;color:#222}\n"
    "table{border-collapse:collapse;font-size:12px}td,th{border:1px solid #ccc;padding:2px 6px;text-align:right}\n"
    "th{background:#eee;cursor:pointer}td.l,th.l{text-align:left}figure{margin:16px 0}\n"
    "figcaption{font-weight:bold;margin-bottom:4px}.big{font-size:20px}\n"
    "</style>\n";

static const char html_sort_js[] =
    "<script>\n"
    "function sortTable(c){var t=document.getElementById('ops'),b=t.tBodies[0],r=Array.from(b.rows);\n"
    "var d=t.getAttribute('data-dir')==='a'?-1:1;t.setAttribute('data-dir',d===1?'a':'d');\n"
    "r.sort(function(x,y){var a=x.cells[c].getAttribute('data-v'),e=y.cells[c].getAttribute('data-v');\n"
    "if(a!==null&&e!==null)return d*(parseFloat(e)-parseFloat(a));\n"
    "return d*x.cells[c].textContent.localeCompare(y.cells[c].textContent);});\n"
    "r.forEach(function(x){b.appendChild(x);});}\n"
    "</script>\n";

/* What ran it: the chip, or the system and its devices' chip */
static void hw_words(struct sb *h, const struct pdata *p)
{
    if (p->sys_name[0] != '\0') {
        sb_html(h, p->sys_name);
        sb_printf(h, " (%u x ", p->ndev);
        sb_html(h, p->hw_name);
        sb_printf(h, ")");
    } else {
        if (p->ndev > 1)
            sb_printf(h, "%u x ", p->ndev);
        sb_html(h, p->hw_name);
    }
}

/* Title, total time, tokens/s, FLOPs and the bytes moved at each level. */
static void summary(struct sb *h, const struct pdata *p)
{
    char a[32], b[32];
    sb_printf(h, "<h1>strata: ");
    sb_html(h, p->trace_path);
    sb_printf(h, " on ");
    hw_words(h, p);
    sb_printf(h, "</h1>\n<p class=\"big\">Total time <b id=\"total-time\">");
    numfmt_time(a, sizeof a, p->total);
    sb_printf(h, "%s</b>", a);
    if (p->tokens_per_s > 0)
        sb_printf(h, " &middot; <b id=\"tokens-per-s\">%.1f tokens/s</b>", p->tokens_per_s);
    numfmt_si(a, sizeof a, p->flops, "FLOP");
    numfmt_si(b, sizeof b, p->total > 0 ? p->flops / p->total : 0, "FLOP/s");
    sb_printf(h, " &middot; %s (%s)</p>\n<p>Bytes moved:", a, b);
    for (unsigned l = 0; l < p->nlvl; l++) {
        if (p->bytes[l] <= 0)
            continue;
        numfmt_si(a, sizeof a, p->bytes[l], "B");
        numfmt_si(b, sizeof b, p->total > 0 ? p->bytes[l] / p->total : 0, "B/s");
        sb_printf(h, " ");
        sb_html(h, p->lvl[l]);
        sb_printf(h, " %s (%s);", a, b);
    }
    sb_printf(h, "</p>\n");
    if (p->have_energy) {
        /* docs/energy.md: the simulated devices' energy, idle included */
        numfmt_si(a, sizeof a, p->energy, "J");
        numfmt_si(b, sizeof b, p->total > 0 ? p->energy / p->total : 0, "W");
        sb_printf(h, "<p>Energy <b id=\"energy\">%s</b> (%s on average, all simulated devices)", a, b);
        if (p->tokens_per_s > 0 && p->total > 0)
            sb_printf(h, " &middot; <b id=\"joules-per-token\">%.4g J a token</b>",
                      p->energy / (p->tokens_per_s * p->total));
        sb_printf(h, "</p>\n");
    }
}

/* The chip's derived figures: each level's bandwidth, achievable
 * bandwidth and ridge point, and the matrix peaks (needs p->have_hw). */
static void chip_table(struct sb *h, const struct pdata *p)
{
    char a[32], b[32];
    sb_printf(h, "<h2>The chip</h2>\n<table id=\"chip\"><tr><th class=\"l\">level</th><th>bandwidth</th>"
                 "<th>achievable</th><th>ridge (%s FLOP/byte)</th></tr>\n",
              p->peak_dtype);
    double ach[PLOAD_NLVL];
    pload_levels(p, p->hwd, "achievable_bandwidth_bytes_per_s", ach);
    for (unsigned l = 0; l < p->nlvl; l++) {
        if (p->bw[l] <= 0)
            continue;
        numfmt_si(a, sizeof a, p->bw[l], "B/s");
        numfmt_si(b, sizeof b, ach[l], "B/s");
        sb_printf(h, "<tr><td class=\"l\">");
        sb_html(h, p->lvl[l]);
        sb_printf(h, "</td><td>%s</td><td>%s</td><td>%.1f</td></tr>\n", a, b, p->peak / p->bw[l]);
    }
    sb_printf(h, "</table>\n<p>Peak FLOP/s:");
    const cJSON *mp = cJSON_GetObjectItemCaseSensitive(p->hwd, "matrix_peak_flops"), *it;
    cJSON_ArrayForEach(it, mp)
    {
        numfmt_si(a, sizeof a, pload_num(it), "FLOP/s");
        sb_printf(h, " ");
        sb_html(h, it->string ? it->string : "");
        sb_printf(h, " %s (matrix);", a);
    }
    sb_printf(h, "</p>\n");
}

/* The plots, or why one is missing. */
static void plots(struct sb *h, const struct pdata *p)
{
    sb_printf(h, "<h2>Plots</h2>\n");
    if (p->have_hw)
        psvg_roofline(h, p);
    else
        sb_printf(h, "<p>No roofline: the report has no hardware_derived figures.</p>\n");
    psvg_stalls(h, p);
    if (p->ts_dev != NULL)
        psvg_bandwidth(h, p);
    else
        sb_printf(h, "<p>No bandwidth plot: the report has no timeseries (write it with strata run --out).</p>\n");
}

/* Several devices: where each one's time went, by kind (the terminal
 * report's "per device" table): compute, host (launch and measured-only
 * ops), memory (waiting on a level that is not a link), each link level
 * (exposed communication) and idle, in the step's unit; a row adds up to
 * the step, and to the device's ops' columns in ops.csv less idle. */
static void device_table(struct sb *h, const struct pdata *p)
{
    if (p->devices == NULL || p->ndev < 2 || p->total <= 0)
        return;
    double unit = p->total >= 1e-3 ? 1e-3 : p->total >= 1e-6 ? 1e-6 : 1e-9;
    const char *uname = unit == 1e-3 ? "ms" : unit == 1e-6 ? "us" : "ns";
    sb_printf(h, "<h2>Where each device's time went</h2>\n<p>Time in %s; each row adds up to the "
                 "step. Compute: the pipes busy; host: kernel launches; memory: waiting on the "
                 "chip's memory levels; a link: communication that no compute hid.</p>\n"
                 "<table id=\"devices\"><tr><th class=\"l\">device</th><th>compute</th>"
                 "<th>host</th><th>memory</th>",
              uname);
    for (unsigned l = 0; l < p->nlvl; l++)
        if (p->lvl_link[l]) {
            sb_printf(h, "<th>");
            sb_html(h, p->lvl[l]);
            sb_printf(h, "</th>");
        }
    sb_printf(h, "<th>idle</th><th>total</th></tr>\n");
    const cJSON *dv;
    unsigned shown = 0;
    cJSON_ArrayForEach(dv, p->devices)
    {
        if (cJSON_IsTrue(cJSON_GetObjectItemCaseSensitive(dv, "mirror")))
            continue;
        if (shown++ == 64) {
            sb_printf(h, "<tr><td class=\"l\" colspan=\"3\">... more devices in report.json</td></tr>\n");
            break;
        }
        double st[PLOAD_NLVL], mem = 0, link = 0;
        pload_levels(p, dv, "stall_s", st);
        for (unsigned l = 0; l < p->nlvl; l++) {
            if (p->lvl_link[l])
                link += st[l];
            else
                mem += st[l];
        }
        double busy = pload_jnum(dv, "busy_s"), host = pload_jnum(dv, "launch_s") + pload_jnum(dv, "measured_s");
        double idle = pload_jnum(dv, "idle_s");
        sb_printf(h, "<tr><td class=\"l\">");
        sb_html(h, pload_jstr(dv, "name"));
        sb_printf(h, "</td><td>%.3f</td><td>%.3f</td><td>%.3f</td>", busy / unit, host / unit, mem / unit);
        for (unsigned l = 0; l < p->nlvl; l++)
            if (p->lvl_link[l])
                sb_printf(h, "<td>%.3f</td>", st[l] / unit);
        sb_printf(h, "<td>%.3f</td><td>%.3f</td></tr>\n", idle / unit, (busy + host + mem + link + idle) / unit);
    }
    sb_printf(h, "</table>\n");
}

/* The number a device's name ends in ("gpu3": 3), or UINT32_MAX. */
static uint32_t device_number(const char *dev)
{
    size_t n = strlen(dev), k = n;
    while (k > 0 && dev[k - 1] >= '0' && dev[k - 1] <= '9')
        k--;
    return k == n || n - k > 9 ? UINT32_MAX : (uint32_t)strtoul(dev + k, NULL, 10);
}

/* Is b the same op as a on another device (report_text's rule): the same
 * kind and time, and the same name once each one's device number is
 * masked? */
static int html_twin(const struct pop *a, const struct pop *b)
{
    if (strcmp(a->device, b->device) == 0 || a->time != b->time || strcmp(a->kind, b->kind) != 0)
        return 0;
    uint32_t da = device_number(a->device), db = device_number(b->device);
    if (da == UINT32_MAX || db == UINT32_MAX)
        return 0;
    char ma[200], mb[200];
    report_mask_device(a->name, da, ma, sizeof ma);
    report_mask_device(b->name, db, mb, sizeof mb);
    return strcmp(ma, mb) == 0;
}

/* The slowest ops, a row each, sortable (html_sort_js); on several devices
 * the same op on each rank is one row, "x8" for its 8 devices. */
static void op_table(struct sb *h, const struct pdata *p)
{
    uint32_t rows = p->nops < PHTML_MAX_TABLE_ROWS ? p->nops : PHTML_MAX_TABLE_ROWS;
    sb_printf(h, "<h2>Ops</h2>\n<p>Slowest first; click a column to sort.%s%s</p>\n",
              p->ndev > 1 ? " An op that runs on several devices at once (a tensor-parallel rank's) "
                            "is one row, &times;N for its N devices." : "",
              p->nops > rows ? " Only the slowest 500 rows are listed." : "");
    /* a chip with a power block adds each op's energy after its DRAM bytes */
    int en = p->have_energy;
    sb_printf(h, "<table id=\"ops\" data-dir=\"d\"><thead><tr><th class=\"l\" onclick=\"sortTable(0)\">op</th>"
                 "<th class=\"l\" onclick=\"sortTable(1)\">kind</th><th onclick=\"sortTable(2)\">time (us)</th>"
                 "<th onclick=\"sortTable(3)\">share</th><th onclick=\"sortTable(4)\">GFLOP</th>"
                 "<th onclick=\"sortTable(5)\">DRAM MB</th>");
    if (en)
        sb_printf(h, "<th onclick=\"sortTable(6)\">energy (mJ)</th>");
    sb_printf(h, "<th class=\"l\" onclick=\"sortTable(%d)\">bound</th>"
                 "<th class=\"l\" onclick=\"sortTable(%d)\">tiles</th></tr></thead><tbody>\n",
              6 + en, 7 + en);
    unsigned char *used = p->ndev > 1 ? sim_xcalloc(p->nops ? p->nops : 1, 1) : NULL;
    uint32_t shown = 0;
    for (uint32_t k = 0; k < p->nops && shown < rows; k++) {
        if (used != NULL && used[k])
            continue;
        shown++;
        struct pop ob, tb;
        const struct pop *o = pload_op(p, p->order[k], &ob);
        uint32_t twins = 0;
        for (uint32_t j = k + 1; used != NULL && j < p->nops && j < k + 4096; j++) {
            const struct pop *y = pload_op(p, p->order[j], &tb);
            if (y->time != o->time)
                break;
            if (!used[j] && html_twin(o, y)) {
                used[j] = 1;
                twins++;
            }
        }
        /* sort keys: time in ps, FLOPs and bytes as whole numbers */
        char tv[24], t3[24], sh[24], fv[40], f3[24], dv[40], d3[24], nx[24] = "";
        numfmt_g(tv, sizeof tv, floor(o->time * 1e12 + 0.5));
        numfmt_fix(t3, sizeof t3, o->time * 1e6, 3);
        numfmt_fix(sh, sizeof sh, p->total > 0 ? 100 * o->time / p->total : 0, 1);
        numfmt_g(fv, sizeof fv, floor(o->flops));
        numfmt_fix(f3, sizeof f3, o->flops * 1e-9, 3);
        double db = p->lvl_dram >= 0 ? o->bytes[p->lvl_dram] : 0;
        numfmt_g(dv, sizeof dv, floor(db));
        numfmt_fix(d3, sizeof d3, db * 1e-6, 3);
        if (twins > 0)
            snprintf(nx, sizeof nx, " &times;%u", twins + 1);
        /* the energy cell (empty without energy): its sort key in J, shown in mJ */
        char ev[40], e3[40], ecell[120] = "";
        if (en) {
            numfmt_gp(ev, sizeof ev, o->energy, 9);
            numfmt_gp(e3, sizeof e3, o->energy * 1e3, 4);
            snprintf(ecell, sizeof ecell, "</td><td data-v=\"%s\">%s", ev, e3);
        }
        const char *cells[] = {"<tr><td class=\"l\">", NULL, nx, "</td><td class=\"l\">", NULL,
                               "</td><td data-v=\"", tv, "\">", t3, "</td><td data-v=\"", tv, "\">",
                               sh, "%</td><td data-v=\"", fv, "\">", f3, "</td><td data-v=\"", dv,
                               "\">", d3, ecell, "</td><td class=\"l\">", NULL, "</td><td class=\"l\">",
                               NULL, "</td></tr>\n"};
        const char *esc[] = {o->name, o->kind, o->bound, o->tile};
        int e = 0;
        for (size_t c = 0; c < sizeof cells / sizeof cells[0]; c++) {
            if (cells[c] == NULL)
                sb_html(h, esc[e++]);
            else
                sb_puts(h, cells[c]);
        }
    }
    free(used);
    sb_printf(h, "</tbody></table>\n");
}

void phtml_page(struct sb *h, const struct pdata *p)
{
    sb_printf(h, "%s<title>strata: ", html_head);
    sb_html(h, p->trace_path);
    sb_printf(h, " on ");
    hw_words(h, p);
    sb_printf(h, "</title></head><body>\n");
    summary(h, p);
    verdicts(h, p);
    device_table(h, p);
    if (p->have_hw)
        chip_table(h, p);
    plots(h, p);
    op_table(h, p);
    sb_printf(h, "%s<p>Written by strata from a saved report; open timeline.json in "
                 "ui.perfetto.dev for the time line.</p>\n</body></html>\n",
              html_sort_js);
}
