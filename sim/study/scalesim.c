/* scalesim.c: `strata scalesim` (sim/cli/scalesim.c parses its options), a
 * SCALE-Sim v2 compatible front end to the systolic array model
 * (models/systolic.h).
 *
 *   strata scalesim -c CONFIG.cfg -t TOPOLOGY.csv [-i conv|gemm] [-p OUTDIR]
 *
 * reads SCALE-Sim's .cfg and topology CSV, runs every layer and writes
 * OUTDIR/<run_name>/{COMPUTE,BANDWIDTH,DETAILED_ACCESS}_REPORT.csv with
 * SCALE-Sim's columns.  CALC mode (the interface keeps up: no stalls) uses
 * the closed-form fold model (models/systolic.h); USER mode (a fixed DRAM
 * interface of Bandwidth words per cycle) walks the demand rows through the
 * double-buffered SRAMs (models/sa_mem.h).
 */
#include "scalesim.h"

#include <ctype.h>
#include <errno.h>
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "afile.h"
#include "check.h"
#include "diag.h"
#include "sa_mem.h"
#include "textline.h"
#include "systolic.h"

struct ss_config {
    char run_name[128];
    uint64_t rows, cols;
    enum sa_dataflow df;
    uint64_t sram_kb[SA_OPERANDS];  /* ifmap, filter, ofmap */
    uint64_t bw;                    /* Bandwidth: words per cycle (USER mode) */
    int have_rows, have_cols, have_df, user_bw, have_bw, have_sram[SA_OPERANDS];
};

struct ss_layer {
    char name[64];
    int line;
    struct sa_layer l;
    struct sa_conv v;  /* the same layer as a convolution (GEMMs: M x K image) */
};

/* Strips leading and trailing white space in place. */
static char *trim(char *s)
{
    while (isspace((unsigned char)*s))
        s++;
    size_t n = strlen(s);
    while (n > 0 && isspace((unsigned char)s[n - 1]))
        s[--n] = '\0';
    return s;
}

/* A positive integer of at most 2^32; 0 or -1. */
static int parse_dim(const char *v, uint64_t *out)
{
    char *end;
    if (!isdigit((unsigned char)v[0]))
        return -1;
    errno = 0;
    unsigned long long x = strtoull(v, &end, 10);
    if (errno != 0 || *end != '\0' || x == 0 || x > (1ull << 32))
        return -1;
    *out = x;
    return 0;
}

/* Reads the next line into buf: 1, 0 at the end of the file, or -1 with
 * *d when a line does not fit. */
static int next_line(FILE *f, char *buf, size_t n, const char *path, int *line, struct diag *d)
{
    size_t len;
    enum textline r = textline_read(f, buf, n, &len);
    if (r == TEXTLINE_EOF)
        return 0;
    ++*line;
    if (r == TEXTLINE_LONG)
        return diag_set(d, DIAG_E_PARSE, path, *line, "", "line longer than %zu bytes", n - 2);
    if (r != TEXTLINE_OK)
        return diag_set(d, r == TEXTLINE_ERROR ? DIAG_E_IO : DIAG_E_PARSE, path, *line, "", "%s",
                        textline_what(r));
    return 1;
}

/* Keys SCALE-Sim v2 reads that change neither cycles nor traffic here
 * (address offsets, bank and row geometry, Ramulator options). */
static const char *const ignored_keys[] = {
    "IfmapOffset", "FilterOffset",
    "OfmapOffset", "MemoryBanks", "ReadRequestBuffer", "WriteRequestBuffer",
    "SRAM_row_size", "SRAM_bank_size", "DRAM_row_size", "DRAM_bank_size", "UseRamulatorTrace",
    "TopologyCsvLoc",
};

static const char *const sram_keys[SA_OPERANDS] = {"IfmapSramSzkB", "FilterSramSzkB",
                                                    "OfmapSramSzkB"};

static int cfg_key(struct ss_config *c, const char *path, int line, const char *section,
                   const char *key, const char *v, struct diag *d)
{
    if (strcasecmp(key, "run_name") == 0) {
        /* the reports go to OUTDIR/run_name: "." and ".." would put them
         * over files outside that folder of their own */
        if (v[0] == '\0' || strlen(v) >= sizeof c->run_name || strchr(v, '/') != NULL ||
            strcmp(v, ".") == 0 || strcmp(v, "..") == 0)
            return diag_set(d, DIAG_E_RANGE, path, line, key,
                            "must be a non-empty name without '/', not '.' or '..' (under %zu characters)",
                            sizeof c->run_name);
        snprintf(c->run_name, sizeof c->run_name, "%s", v);
        return 0;
    }
    if (strcasecmp(key, "ArrayHeight") == 0 || strcasecmp(key, "ArrayWidth") == 0) {
        int h = strcasecmp(key, "ArrayHeight") == 0;
        if (parse_dim(v, h ? &c->rows : &c->cols) != 0)
            return diag_set(d, DIAG_E_RANGE, path, line, key,
                            "expected a whole number of PEs from 1 to 2^32, got '%s'", v);
        if (h)
            c->have_rows = 1;
        else
            c->have_cols = 1;
        return 0;
    }
    for (int k = 0; k < SA_OPERANDS; k++)
        if (strcasecmp(key, sram_keys[k]) == 0) {
            if (parse_dim(v, &c->sram_kb[k]) != 0 || c->sram_kb[k] > (1u << 24))
                return diag_set(d, DIAG_E_RANGE, path, line, key,
                                "expected a whole number of kB from 1 to 2^24, got '%s'", v);
            c->have_sram[k] = 1;
            return 0;
        }
    if (strcasecmp(key, "Bandwidth") == 0) {
        /* SCALE-Sim accepts a list (one per bank); all banks get the first */
        char first[64];
        snprintf(first, sizeof first, "%s", v);
        char *comma = strchr(first, ',');
        if (comma != NULL)
            *comma = '\0';
        if (parse_dim(trim(first), &c->bw) != 0 || c->bw > (1u << 20))
            return diag_set(d, DIAG_E_RANGE, path, line, key,
                            "expected whole words per cycle from 1 to 2^20, got '%s'", v);
        c->have_bw = 1;
        return 0;
    }
    if (strcasecmp(key, "Dataflow") == 0) {
        if (sa_dataflow_from_name(v, &c->df) != 0)
            return diag_set(d, DIAG_E_UNKNOWN_NAME, path, line, key,
                            "expected os, ws or is, got '%s'", v);
        c->have_df = 1;
        return 0;
    }
    if (strcasecmp(key, "InterfaceBandwidth") == 0) {
        if (strcmp(v, "CALC") == 0)
            c->user_bw = 0;
        else if (strcmp(v, "USER") == 0)
            c->user_bw = 1;
        else
            return diag_set(d, DIAG_E_UNKNOWN_NAME, path, line, key,
                            "expected CALC or USER, got '%s'", v);
        return 0;
    }
    for (size_t i = 0; i < sizeof ignored_keys / sizeof ignored_keys[0]; i++)
        if (strcasecmp(key, ignored_keys[i]) == 0)
            return 0;
    return diag_set(d, DIAG_E_UNKNOWN_KEY, path, line, key, "not a SCALE-Sim v2 key (section [%s])",
                    section);
}

/* Records section (key NULL) or section's key in seen; an error naming the
 * first line if it was there already. */
struct ss_seen {
    char name[160];
    int line;
};

static int ss_seen_add(struct ss_seen *seen, int *n, int max, const char *section, const char *key,
                       const char *path, int line, struct diag *d)
{
    char name[sizeof seen->name];
    if (key == NULL)
        snprintf(name, sizeof name, "[%s]", section);
    else
        snprintf(name, sizeof name, "%s]%s", section, key);
    for (char *p = name + strlen(section) + 1; key != NULL && *p != '\0'; p++)
        *p = (char)tolower((unsigned char)*p);
    for (int i = 0; i < *n; i++)
        if (strcmp(seen[i].name, name) == 0)
            return key == NULL
                ? diag_set(d, DIAG_E_PARSE, path, line, "", "section [%s] given twice (first on line %d)",
                           section, seen[i].line)
                : diag_set(d, DIAG_E_PARSE, path, line, key, "given twice in [%s] (first on line %d)",
                           section, seen[i].line);
    if (*n == max)
        return diag_set(d, DIAG_E_RANGE, path, line, key != NULL ? key : "",
                        "more than %d sections and keys", max);
    snprintf(seen[*n].name, sizeof seen[*n].name, "%s", name);
    seen[*n].line = line;
    (*n)++;
    return 0;
}

static int ss_config_load(const char *path, struct ss_config *c, struct diag *d)
{
    memset(c, 0, sizeof *c);
    snprintf(c->run_name, sizeof c->run_name, "scalesim_run");
    FILE *f = fopen(path, "r");
    afile_note_input(f);
    if (f == NULL)
        return diag_set(d, DIAG_E_IO, path, 0, "", "cannot open: %s", strerror(errno));
    char buf[1024], section[64] = "";
    /* Python's configparser (strict, SCALE-Sim's reader) refuses a section
     * or a key given twice; keys compare without case, as it lowercases
     * them.  Each entry is "section]key" with the line it was first on. */
    enum { SS_MAX_SEEN = 128 };
    struct ss_seen seen[SS_MAX_SEEN];
    int nseen = 0;
    int line = 0, rc = 0, got;
    while (rc == 0 && (got = next_line(f, buf, sizeof buf, path, &line, d)) != 0) {
        if (got < 0) {
            rc = -1;
            break;
        }
        char *s = trim(buf);
        if (s[0] == '\0' || s[0] == '#' || s[0] == ';')
            continue;
        if (s[0] == '[') {
            char *e = strchr(s, ']');
            if (e == NULL || e[1] != '\0' || e - s - 1 <= 0 || (size_t)(e - s) > sizeof section) {
                rc = diag_set(d, DIAG_E_PARSE, path, line, "", "malformed section header '%s'", s);
                break;
            }
            *e = '\0';
            snprintf(section, sizeof section, "%s", s + 1);
            rc = ss_seen_add(seen, &nseen, SS_MAX_SEEN, section, NULL, path, line, d);
            continue;
        }
        char *sep = strpbrk(s, ":=");
        if (sep == NULL) {
            rc = diag_set(d, DIAG_E_PARSE, path, line, "", "expected 'key: value', got '%s'", s);
            break;
        }
        *sep = '\0';
        char *key = trim(s), *v = trim(sep + 1);
        if (section[0] == '\0') {
            rc = diag_set(d, DIAG_E_PARSE, path, line, key, "key before any [section]");
            break;
        }
        if (key[0] == '\0') {
            rc = diag_set(d, DIAG_E_PARSE, path, line, "", "empty key");
            break;
        }
        /* the key's own check first: a known key is short, so its entry
         * is never cut */
        rc = cfg_key(c, path, line, section, key, v, d);
        if (rc == 0)
            rc = ss_seen_add(seen, &nseen, SS_MAX_SEEN, section, key, path, line, d);
    }
    fclose(f);
    if (rc != 0)
        return rc;
    if (!c->have_rows)
        return diag_set(d, DIAG_E_MISSING, path, 0, "ArrayHeight", "required");
    if (!c->have_cols)
        return diag_set(d, DIAG_E_MISSING, path, 0, "ArrayWidth", "required");
    if (!c->have_df)
        return diag_set(d, DIAG_E_MISSING, path, 0, "Dataflow", "required (os, ws or is)");
    for (int k = 0; k < SA_OPERANDS; k++)
        if (c->user_bw && !c->have_sram[k])
            return diag_set(d, DIAG_E_MISSING, path, 0, sram_keys[k],
                            "required in USER bandwidth mode");
    if (c->user_bw && !c->have_bw)
        return diag_set(d, DIAG_E_MISSING, path, 0, "Bandwidth",
                        "required in USER bandwidth mode (words per cycle)");
    return 0;
}

/* Splits a CSV line into trimmed fields, dropping SCALE-Sim's trailing
 * empty field.  Returns the field count (at most max). */
static int split_csv(char *s, char **fields, int max)
{
    int n = 0;
    for (;;) {
        char *c = strchr(s, ',');
        if (c != NULL)
            *c = '\0';
        if (n < max)
            fields[n] = trim(s);
        n++;
        if (c == NULL)
            break;
        s = c + 1;
    }
    if (n > 0 && n <= max && fields[n - 1][0] == '\0')
        n--;
    return n;
}

static const char *const conv_cols[] = {"Layer name", "IFMAP Height", "IFMAP Width",
                                        "Filter Height", "Filter Width", "Channels",
                                        "Num Filter", "Strides"};
static const char *const gemm_cols[] = {"Layer", "M", "N", "K"};

static int topo_row(char **fl, int n, int gemm, const char *path, int line, struct ss_layer *L,
                    struct diag *d)
{
    const char *const *names = gemm ? gemm_cols : conv_cols;
    int want = gemm ? 4 : 8;
    /* further columns (SCALE-Sim's sparsity ratio, or notes) are ignored */
    if (n < want)
        return diag_set(d, DIAG_E_PARSE, path, line, "",
                        "expected %d fields (%s ... %s), got %d", want, names[0], names[want - 1],
                        n);
    if (fl[0][0] == '\0')
        return diag_set(d, DIAG_E_MISSING, path, line, names[0], "empty layer name");
    snprintf(L->name, sizeof L->name, "%s", fl[0]);
    L->line = line;
    uint64_t v[7];
    for (int i = 1; i < want; i++)
        if (parse_dim(fl[i], &v[i - 1]) != 0)
            return diag_set(d, DIAG_E_RANGE, path, line, names[i],
                            "expected a whole number from 1 to 2^32, got '%s'", fl[i]);
    if (gemm) {
        L->l.ofmap_px = v[0];
        L->l.filters = v[1];
        L->l.window = v[2];
        /* SCALE-Sim's reading of a GEMM: an M x K image, N filters of 1 x K */
        L->v = (struct sa_conv){v[0], v[2], 1, v[2], 1, v[1], 1};
        return 0;
    }
    /* ifmap h, ifmap w, filter h, filter w, channels, filters, stride */
    if (v[2] > v[0] || v[3] > v[1])
        return diag_set(d, DIAG_E_RANGE, path, line, v[2] > v[0] ? "Filter Height" : "Filter Width",
                        "filter (%llu x %llu) larger than the ifmap (%llu x %llu)",
                        (unsigned long long)v[2], (unsigned long long)v[3],
                        (unsigned long long)v[0], (unsigned long long)v[1]);
    /* SCALE-Sim's output size, ceil((H - F + S) / S) (sa_conv_ofmap_h): its
     * MACs, and so the utilisations, count these pixels */
    L->v = (struct sa_conv){v[0], v[1], v[2], v[3], v[4], v[5], v[6]};
    L->l.ofmap_px = sa_conv_ofmap_h(&L->v) * sa_conv_ofmap_w(&L->v);
    L->l.filters = v[5];
    L->l.window = v[2] * v[3] * v[4];
    if (L->l.window > (1ull << 32))
        return diag_set(d, DIAG_E_RANGE, path, line, "Channels",
                        "filter window (h * w * channels) over 2^32");
    return 0;
}

static int ss_topology_load(const char *path, int gemm, struct ss_layer **out, size_t *nout,
                            struct diag *d)
{
    *out = NULL;
    *nout = 0;
    FILE *f = fopen(path, "r");
    afile_note_input(f);
    if (f == NULL)
        return diag_set(d, DIAG_E_IO, path, 0, "", "cannot open: %s", strerror(errno));
    char buf[4096];
    char *fl[16];
    int line = 0, rc = 0, header = 0, got;
    size_t cap = 0;
    struct ss_layer *L = NULL;
    while (rc == 0 && (got = next_line(f, buf, sizeof buf, path, &line, d)) != 0) {
        if (got < 0) {
            rc = -1;
            break;
        }
        if (trim(buf)[0] == '\0')
            continue;
        int n = split_csv(buf, fl, 16);
        if (!header) {           /* the column names */
            header = 1;
            int want = gemm ? 4 : 8;
            /* more columns are allowed (SCALE-Sim's sparsity ratio, notes),
             * but a gemm header must name M, N and K, so that a conv file
             * read with -i gemm is refused rather than misread */
            int mnk = n >= 4 && strcasecmp(fl[1], "M") == 0 && strcasecmp(fl[2], "N") == 0 &&
                      strcasecmp(fl[3], "K") == 0;
            if (n < want)
                rc = diag_set(d, DIAG_E_PARSE, path, line, "",
                              "a %s topology has %d columns (%s), this header has %d%s",
                              gemm ? "gemm" : "conv", want, gemm ? "Layer,M,N,K" : "Layer name, "
                              "IFMAP Height, IFMAP Width, Filter Height, Filter Width, Channels, "
                              "Num Filter, Strides", n,
                              gemm ? "" : " (a gemm topology needs -i gemm)");
            else if (gemm && !mnk)
                rc = diag_set(d, DIAG_E_PARSE, path, line, "",
                              "a gemm topology's header is Layer, M, N, K; this one is not "
                              "(a conv topology needs -i conv)");
            else if (!gemm && mnk)
                rc = diag_set(d, DIAG_E_PARSE, path, line, "",
                              "this header is a gemm topology's (Layer, M, N, K): run with -i gemm");
            continue;
        }
        if (*nout == cap) {
            cap = cap ? 2 * cap : 16;
            L = sim_xrealloc(L, cap * sizeof *L);
        }
        rc = topo_row(fl, n, gemm, path, line, &L[*nout], d);
        if (rc == 0)
            (*nout)++;
    }
    fclose(f);
    if (rc == 0 && *nout == 0)
        rc = diag_set(d, DIAG_E_MISSING, path, line, "", "no layers");
    if (rc != 0) {
        free(L);
        *nout = 0;
        return rc;
    }
    *out = L;
    return 0;
}

/* A double as Python's repr() writes it: the shortest digits that read
 * back to the same value, positional for decimal exponents -4 to 15 (with
 * ".0" on whole numbers), scientific otherwise. */
static void py_float(char *buf, size_t n, double v)
{
    /* the fewest significant digits that read back as v: a binary search
     * (more digits, correctly rounded, never read back worse; 17 always do) */
    int lo = 1, hi = 17;
    while (lo < hi) {
        int mid = (lo + hi) / 2;
        snprintf(buf, n, "%.*e", mid - 1, v);
        if (strtod(buf, NULL) == v)
            hi = mid;
        else
            lo = mid + 1;
    }
    int prec = lo;
    snprintf(buf, n, "%.*e", prec - 1, v);
    if (!isfinite(v) || v == 0) {
        snprintf(buf, n, "%s", v == 0 ? (signbit(v) ? "-0.0" : "0.0") : isnan(v) ? "nan" : v > 0 ? "inf" : "-inf");
        return;
    }
    int exp10 = atoi(strchr(buf, 'e') + 1);
    if (exp10 < -4 || exp10 >= 16)
        return; /* the %e digits are Python's form: 1.2279260657542492e+16 */
    int decimals = prec - 1 - exp10;
    snprintf(buf, n, "%.*f", decimals > 0 ? decimals : 0, v);
    if (decimals <= 0 && strlen(buf) + 3 <= n)
        strcat(buf, ".0");
}

/* Remove the three reports in dir but the one at index keep (that one
 * failed, and is not ours to remove). */
static void drop_reports(const char *dir, const char *const *reports, int keep)
{
    for (int j = 0; j < 3; j++)
        if (j != keep) {
            char path[1300];
            snprintf(path, sizeof path, "%s/%s.csv", dir, reports[j]);
            remove(path);
        }
}

/* Every layer on the array (folds, then the memory walk or its closed
 * form), within the run's USER-mode walking budget.  0, or -1 with *d. */
static int ss_simulate(const struct ss_config *c, const struct sa_mem_config *mc, const char *topo,
                       const struct ss_layer *L, size_t n, double max_walk, struct sa_result *res,
                       struct sa_mem_result *mem, struct diag *d)
{
    int rc = 0;
    /* USER mode walks the buffers cycle by cycle: the whole run, not each
     * layer, gets the budget, so five modest lines cannot add up to minutes */
    if (max_walk <= 0)
        max_walk = SA_MEM_WALK_BUDGET;
    double walked = 0;
    for (size_t i = 0; i < n && rc == 0 && c->user_bw; i++) {
        double u = sa_mem_walk_units(mc, &L[i].v);
        if (u < 0)
            break;   /* sa_mem_run refuses it below, with its line */
        walked += u;
        if (walked > max_walk)
            rc = diag_set(d, DIAG_E_RANGE, topo, L[i].line, L[i].name,
                          "the layers up to here need %.3g units of USER-mode walking (about %.0f s), "
                          "over the run's budget of %.3g; raise it with --max-walk UNITS",
                          walked, walked * 32e-9, max_walk);
    }
    for (size_t i = 0; i < n && rc == 0; i++) {
        if (sa_run_layer(c->rows, c->cols, c->df, &L[i].l, &res[i]) != 0) {
            rc = diag_set(d, DIAG_E_RANGE, topo, L[i].line, L[i].name,
                          "layer too large for the model (fold count over 2^32)");
            break;
        }
        int mrc = c->user_bw ? sa_mem_run(mc, &L[i].v, &mem[i]) : sa_mem_calc(mc, &L[i].v, &mem[i]);
        if (mrc != 0)
            rc = diag_set(d, DIAG_E_RANGE, topo, L[i].line, L[i].name,
                          "layer too large to walk cycle by cycle in %s mode",
                          c->user_bw ? "USER" : "CALC");
    }
    return rc;
}

static const char *const reports[3] = {"COMPUTE_REPORT", "BANDWIDTH_REPORT",
                                       "DETAILED_ACCESS_REPORT"};

/* One layer's line in each of SCALE-Sim's three reports. */
static void ss_report_lines(FILE *const *f, size_t i, const struct ss_config *c,
                            const struct sa_result *res, const struct sa_mem_result *m)
{
    /* a one-cycle layer ends on cycle 0: divide by one cycle, not zero */
    double total = m->cycles > 0 ? (double)m->cycles : 1.0;
    char u[40], mp[40], cu[40];
    py_float(u, sizeof u, res->macs * 100 / (total * (double)c->rows * (double)c->cols));
    py_float(mp, sizeof mp, res->mapping_eff * 100);
    py_float(cu, sizeof cu, res->compute_util * 100);
    fprintf(f[0], "%zu, %llu, %llu, %s, %s, %s,\n", i, (unsigned long long)m->cycles,
            (unsigned long long)m->stall, u, mp, cu);
    fprintf(f[1], "%zu", i);
    for (int k = 0; k < SA_OPERANDS; k++) {
        py_float(u, sizeof u, (double)m->sram_words[k] / total);
        fprintf(f[1], ", %s", u);
    }
    for (int k = 0; k < SA_OPERANDS; k++) {
        double span = (double)(m->dram_stop[k] - m->dram_start[k] + 1);
        py_float(u, sizeof u, m->dram_words[k] ? (double)m->dram_words[k] / span : 0.0);
        fprintf(f[1], ", %s", u);
    }
    fprintf(f[1], ",\n");
    fprintf(f[2], "%zu", i);
    for (int k = 0; k < SA_OPERANDS; k++)
        fprintf(f[2], ", %lld, %lld, %llu", (long long)m->sram_start[k],
                (long long)m->sram_stop[k], (unsigned long long)m->sram_words[k]);
    for (int k = 0; k < SA_OPERANDS; k++)
        fprintf(f[2], ", %lld, %lld, %llu", (long long)m->dram_start[k],
                (long long)m->dram_stop[k], (unsigned long long)m->dram_words[k]);
    fprintf(f[2], ",\n");
}

/* SCALE-Sim's three reports in dir (made under outdir): all three or
 * none.  0, or -1 with *d. */
static int ss_write_reports(const char *outdir, const char *dir, const struct ss_config *c,
                            const struct sa_result *res, const struct sa_mem_result *mem, size_t n,
                            struct diag *d)
{
    char path[1300];
    int rc = afile_make_dir(outdir, "-p", d);
    if (rc == 0)
        rc = afile_make_dir(dir, "-p", d);
    struct afile a[3];
    for (int k = 0; k < 3 && rc == 0; k++) {
        snprintf(path, sizeof path, "%s/%s.csv", dir, reports[k]);
        rc = afile_open(&a[k], path, d);
        if (rc != 0) {
            drop_reports(dir, reports, k); /* none of the three: not an earlier run's either */
            for (int j = 0; j < k; j++) /* an open failed: drop the others */
                afile_abort(&a[j]);
        }
    }
    if (rc != 0)
        return rc;
    fprintf(a[0].f, "LayerID, Total Cycles, Stall Cycles, Overall Util %%, "
                    "Mapping Efficiency %%, Compute Util %%,\n");
    fprintf(a[1].f, "LayerID, Avg IFMAP SRAM BW, Avg FILTER SRAM BW, Avg OFMAP SRAM BW, "
                    "Avg IFMAP DRAM BW, Avg FILTER DRAM BW, Avg OFMAP DRAM BW,\n");
    fprintf(a[2].f, "LayerID, SRAM IFMAP Start Cycle, SRAM IFMAP Stop Cycle, SRAM IFMAP Reads, "
                    "SRAM Filter Start Cycle, SRAM Filter Stop Cycle, SRAM Filter Reads, "
                    "SRAM OFMAP Start Cycle, SRAM OFMAP Stop Cycle, SRAM OFMAP Writes, "
                    "DRAM IFMAP Start Cycle, DRAM IFMAP Stop Cycle, DRAM IFMAP Reads, "
                    "DRAM Filter Start Cycle, DRAM Filter Stop Cycle, DRAM Filter Reads, "
                    "DRAM OFMAP Start Cycle, DRAM OFMAP Stop Cycle, DRAM OFMAP Writes,\n");
    FILE *const f[3] = {a[0].f, a[1].f, a[2].f};
    for (size_t i = 0; i < n; i++)
        ss_report_lines(f, i, c, &res[i], &mem[i]);
    /* all three or none */
    int k = 0;
    while (k < 3 && afile_commit(&a[k], d) == 0)
        k++;
    if (k < 3) {
        /* none of the three: this run's, and an earlier run's that would
         * not match them */
        for (int j = k + 1; j < 3; j++)
            afile_abort(&a[j]);
        drop_reports(dir, reports, k);
        return -1;
    }
    return 0;
}

/* The run's summary on stdout. */
static void ss_print(const struct ss_config *c, const struct ss_layer *L, size_t n,
                     const struct sa_result *res, const struct sa_mem_result *mem, const char *outdir,
                     const char *dir)
{
    printf("strata scalesim: %s, %llux%llu array, %s dataflow, %s bandwidth",
           c->run_name, (unsigned long long)c->rows, (unsigned long long)c->cols,
           sa_dataflow_name(c->df), c->user_bw ? "USER" : "CALC");
    if (c->user_bw)
        printf(" (%llu words/cycle, SRAM %llu/%llu/%llu kB)", (unsigned long long)c->bw,
               (unsigned long long)c->sram_kb[0], (unsigned long long)c->sram_kb[1],
               (unsigned long long)c->sram_kb[2]);
    printf("\n");
    for (size_t i = 0; i < n; i++) {
        printf("  layer %zu %-16s cycles %12llu  stall %10llu  folds %llu x %llu  "
               "utilization %6.2f%%  mapping efficiency %6.2f%%\n",
               i, L[i].name, (unsigned long long)mem[i].cycles,
               (unsigned long long)mem[i].stall, (unsigned long long)res[i].row_folds,
               (unsigned long long)res[i].col_folds,
               100 * res[i].macs / ((mem[i].cycles > 0 ? (double)mem[i].cycles : 1.0) *
                                    (double)c->rows * (double)c->cols),
               100 * res[i].mapping_eff);
        if (mem[i].stall > 0)
            printf("    stalls waiting on DRAM through the ifmap SRAM %llu, filter SRAM %llu, "
                   "ofmap SRAM %llu\n",
                   (unsigned long long)mem[i].stall_by[SA_IFMAP],
                   (unsigned long long)mem[i].stall_by[SA_FILTER],
                   (unsigned long long)mem[i].stall_by[SA_OFMAP]);
    }
    if (outdir != NULL)
        printf("  wrote %s/: COMPUTE_REPORT.csv, BANDWIDTH_REPORT.csv, "
               "DETAILED_ACCESS_REPORT.csv\n", dir);
}

int scalesim_run(const char *cfgp, const char *topo, int gemm, const char *outdir, int quiet,
                 double max_walk, struct diag *d)
{
    struct ss_config c;
    struct ss_layer *L = NULL;
    size_t n = 0;
    if (ss_config_load(cfgp, &c, d) != 0 || ss_topology_load(topo, gemm, &L, &n, d) != 0)
        return -1;
    struct sa_result *res = sim_xcalloc(n ? n : 1, sizeof *res);
    struct sa_mem_result *mem = sim_xcalloc(n ? n : 1, sizeof *mem);
    struct sa_mem_config mc = {c.rows, c.cols, c.df,
                               {c.sram_kb[0] * 1024, c.sram_kb[1] * 1024, c.sram_kb[2] * 1024},
                               c.bw};
    int rc = ss_simulate(&c, &mc, topo, L, n, max_walk, res, mem, d);
    char dir[1200] = "";
    if (outdir != NULL)
        snprintf(dir, sizeof dir, "%s/%s", outdir, c.run_name);
    if (rc == 0 && outdir != NULL)
        rc = ss_write_reports(outdir, dir, &c, res, mem, n, d);
    if (rc == 0 && !quiet)
        ss_print(&c, L, n, res, mem, outdir, dir);
    free(mem);
    free(res);
    free(L);
    return rc != 0 ? -1 : 0;
}
