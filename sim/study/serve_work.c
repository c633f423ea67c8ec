/* serve_work.c: the requests of `strata serve` (serve.h): generated from a
 * seed (arrivals and lengths) or read from a CSV file. */
#include "serve.h"

#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <gsl/gsl_errno.h>
#include <gsl/gsl_sf_gamma.h>

#include "afile.h"
#include "check.h"
#include "csv.h"
#include "numfmt.h"
#include "textline.h"

/* xoshiro256** 1.0 with its state seeded by splitmix64 (Blackman and
 * Vigna, https://prng.di.unimi.it/xoshiro256starstar.c and
 * splitmix64.c, public domain): integer arithmetic only, so a seed gives
 * the same stream everywhere. */
struct rng {
    uint64_t s[4];
};

uint64_t serve_splitmix64(uint64_t *x)
{
    uint64_t z = (*x += UINT64_C(0x9e3779b97f4a7c15));
    z = (z ^ (z >> 30)) * UINT64_C(0xbf58476d1ce4e5b9);
    z = (z ^ (z >> 27)) * UINT64_C(0x94d049bb133111eb);
    return z ^ (z >> 31);
}

static void rng_seed(struct rng *g, uint64_t seed)
{
    for (int i = 0; i < 4; i++)
        g->s[i] = serve_splitmix64(&seed);
}

static uint64_t rotl(uint64_t x, int k)
{
    return (x << k) | (x >> (64 - k));
}

static uint64_t rng_next(struct rng *g)
{
    uint64_t *s = g->s;
    uint64_t r = rotl(s[1] * 5, 7) * 9, t = s[1] << 17;
    s[2] ^= s[0];
    s[3] ^= s[1];
    s[1] ^= s[2];
    s[0] ^= s[3];
    s[2] ^= t;
    s[3] = rotl(s[3], 45);
    return r;
}

/* uniform in (0, 1): the top 53 bits, never 0 (a log of it follows) */
static double rng_unit(struct rng *g)
{
    return ((double)(rng_next(g) >> 11) + 0.5) * 0x1.0p-53;
}

/* The mean of a log-normal (mu, sigma) with what lies above max dropped
 * (max 0: none), from the normal's distribution function. */
static double lognormal_kept_mean(double mu, double sigma, double max)
{
    double m = exp(mu + sigma * sigma / 2);
    if (max <= 0)
        return m;
    double z = (log(max) - mu) / sigma;
    if (erfc(-z / sqrt(2.0)) < 1e-300)   /* almost nothing kept: all of it just under max */
        return max;
    return m * erfc(-(z - sigma) / sqrt(2.0)) / erfc(-z / sqrt(2.0));
}

/* MEAN,CV[,MAX] (rest, written into) into out->a, ->b, ->max: 0 when
 * 1 <= MEAN <= 1e7, min_cv <= CV <= 10 and MEAN < MAX <= 1e7; else -1. */
static int mean_cv_max(char *rest, double min_cv, struct serve_dist *out)
{
    char *c1 = strchr(rest, ','), *c2 = c1 ? strchr(c1 + 1, ',') : NULL;
    if (c1 == NULL)
        return -1;
    *c1 = '\0';
    if (c2 != NULL)
        *c2 = '\0';
    return num_parse(rest, &out->a) == 0 && num_parse(c1 + 1, &out->b) == 0 &&
                   (c2 == NULL || num_parse(c2 + 1, &out->max) == 0) && out->a >= 1 && out->a <= 1e7 &&
                   out->b >= min_cv && out->b > 0 && out->b <= 10 &&
                   (c2 == NULL || (out->max > out->a && out->max <= 1e7))
               ? 0 : -1;
}

/* lognormal:MEAN,CV[,MAX] (rest: what follows the colon): solves mu so the
 * kept lengths' mean is MEAN (bisection: the kept mean grows with mu). */
static int lognormal_parse(const char *text, char *rest, struct serve_dist *out, char *why, size_t n)
{
    out->kind = SERVE_LOGNORMAL;
    if (mean_cv_max(rest, 0, out) == 0) {
        out->sigma = sqrt(log(1 + out->b * out->b));
        double lo = log(out->a) - 40 * out->sigma - 1;
        double hi = log(out->max > 0 ? out->max : out->a) + 40 * out->sigma + 1;
        for (int i = 0; i < 200; i++) {
            double mid = (lo + hi) / 2;
            if (lognormal_kept_mean(mid, out->sigma, out->max) < out->a)
                lo = mid;
            else
                hi = mid;
        }
        out->mu = (lo + hi) / 2;
        return 0;
    }
    snprintf(why, n, "expected lognormal:MEAN,CV[,MAX]: 1 <= MEAN <= 1e7 tokens, 0 < CV <= 10, "
             "MEAN < MAX <= 1e7, got '%s'", text);
    return -1;
}

/* The mean of a gamma (shape k, scale t) with what lies above max dropped
 * (max 0: none): k t P(k + 1, max / t) / P(k, max / t), P the regularised
 * lower incomplete gamma function (GSL's, without its error handler). */
static double gamma_kept_mean(double k, double t, double max)
{
    if (max <= 0)
        return k * t;
    gsl_sf_result p0, p1;
    if (gsl_sf_gamma_inc_P_e(k, max / t, &p0) != GSL_SUCCESS ||
        gsl_sf_gamma_inc_P_e(k + 1, max / t, &p1) != GSL_SUCCESS || !(p0.val > 1e-300))
        return max;     /* almost nothing kept: all of it just under max */
    return k * t * p1.val / p0.val;
}

/* gamma:MEAN,CV[,MAX]: shape 1 / CV^2, the scale solved (bisection on its
 * log: the kept mean grows with it) so the kept lengths' mean is MEAN. */
static int gamma_parse(const char *text, char *rest, struct serve_dist *out, char *why, size_t n)
{
    out->kind = SERVE_GAMMA;
    if (mean_cv_max(rest, 0.05, out) == 0) {
        gsl_error_handler_t *old = gsl_set_error_handler_off();
        out->mu = 1.0 / (out->b * out->b);
        double lo = log(out->a / out->mu) - 50, hi = log(out->a / out->mu) + 50;
        for (int i = 0; i < 200; i++) {
            double mid = (lo + hi) / 2;
            if (gamma_kept_mean(out->mu, exp(mid), out->max) < out->a)
                lo = mid;
            else
                hi = mid;
        }
        out->sigma = exp((lo + hi) / 2);
        gsl_set_error_handler(old);
        return 0;
    }
    snprintf(why, n, "expected gamma:MEAN,CV[,MAX]: 1 <= MEAN <= 1e7 tokens, 0.05 <= CV <= 10, "
             "MEAN < MAX <= 1e7, got '%s'", text);
    return -1;
}

int serve_dist_parse(const char *text, struct serve_dist *out, char *why, size_t n)
{
    memset(out, 0, sizeof *out);
    char buf[96];
    snprintf(buf, sizeof buf, "%s", text);
    if (strncmp(buf, "uniform:", 8) == 0) {
        char *dots = strstr(buf + 8, "..");
        if (dots != NULL) {
            *dots = '\0';
            out->kind = SERVE_UNIFORM;
            if (num_parse(buf + 8, &out->a) == 0 && num_parse(dots + 2, &out->b) == 0 && out->a >= 1 &&
                out->b >= out->a && out->b <= 1e7 && out->a == floor(out->a) && out->b == floor(out->b))
                return 0;
        }
        snprintf(why, n, "expected uniform:A..B, whole numbers 1 <= A <= B <= 1e7, got '%s'", text);
        return -1;
    }
    if (strncmp(buf, "normal:", 7) == 0) {
        char *comma = strchr(buf + 7, ',');
        if (comma != NULL) {
            *comma = '\0';
            out->kind = SERVE_NORMAL;
            if (num_parse(buf + 7, &out->a) == 0 && num_parse(comma + 1, &out->b) == 0 && out->a >= 1 &&
                out->a <= 1e7 && out->b >= 0 && out->b <= 1e7)
                return 0;
        }
        snprintf(why, n, "expected normal:MU,SIGMA, 1 <= MU <= 1e7 and 0 <= SIGMA <= 1e7 tokens, got '%s'",
                 text);
        return -1;
    }
    if (strncmp(buf, "lognormal:", 10) == 0)
        return lognormal_parse(text, buf + 10, out, why, n);
    if (strncmp(buf, "gamma:", 6) == 0)
        return gamma_parse(text, buf + 6, out, why, n);
    out->kind = SERVE_FIXED;
    if (num_parse(buf, &out->a) == 0 && out->a >= 1 && out->a <= 1e7 && out->a == floor(out->a))
        return 0;
    snprintf(why, n, "expected a token count (1 to 1e7), uniform:A..B, normal:MU,SIGMA, "
             "lognormal:MEAN,CV[,MAX] or gamma:MEAN,CV[,MAX], got '%s'", text);
    return -1;
}

/* A standard normal: Box-Muller, one of the pair. */
static double normal_draw(struct rng *g)
{
    double u1 = rng_unit(g), u2 = rng_unit(g);
    return sqrt(-2.0 * log(u1)) * cos(2.0 * 3.14159265358979323846 * u2);
}

/* A gamma of shape k and scale 1: Marsaglia and Tsang's method (ACM TOMS
 * 26(3), 2000), for k < 1 through a gamma of k + 1 times U^(1/k). */
static double gamma_draw(double k, struct rng *g)
{
    double boost = 1;
    if (k < 1) {
        boost = pow(rng_unit(g), 1.0 / k);
        k += 1;
    }
    double dd = k - 1.0 / 3.0, c = 1.0 / sqrt(9.0 * dd);
    for (;;) {
        double z = normal_draw(g), v = 1 + c * z;
        if (v <= 0)
            continue;
        v = v * v * v;
        double u = rng_unit(g);
        if (log(u) < 0.5 * z * z + dd - dd * v + dd * log(v))
            return dd * v * boost;
    }
}

/* One length from d: a whole number >= 1 (and at most 1e7, the parse's bound). */
static uint32_t draw_len(const struct serve_dist *d, struct rng *g)
{
    double x = d->a;
    if (d->kind == SERVE_UNIFORM)
        x = d->a + floor(rng_unit(g) * (d->b - d->a + 1));
    else if (d->kind == SERVE_NORMAL) {
        /* Box-Muller, one of the pair (the other is dropped: one draw a length keeps the
         * stream's use simple to state) */
        double u1 = rng_unit(g), u2 = rng_unit(g);
        x = floor(d->a + d->b * sqrt(-2.0 * log(u1)) * cos(2.0 * 3.14159265358979323846 * u2) + 0.5);
    } else if (d->kind == SERVE_LOGNORMAL)
        do {    /* Box-Muller as above; a length over max is drawn again (the filter drops it) */
            double u1 = rng_unit(g), u2 = rng_unit(g);
            double z = sqrt(-2.0 * log(u1)) * cos(2.0 * 3.14159265358979323846 * u2);
            x = floor(exp(d->mu + d->sigma * z) + 0.5);
        } while (d->max > 0 && x > d->max);
    else if (d->kind == SERVE_GAMMA)
        do {    /* a length over max is drawn again, as above */
            x = floor(gamma_draw(d->mu, g) * d->sigma + 0.5);
        } while (d->max > 0 && x > d->max);
    if (x < 1)
        x = 1;
    if (x > 1e7)
        x = 1e7;
    return (uint32_t)x;
}

void serve_reqs_make(const struct serve_workload *w, struct serve_reqs *out)
{
    out->n = w->n;
    out->r = sim_xcalloc(w->n ? w->n : 1, sizeof *out->r);
    struct rng g;
    rng_seed(&g, w->seed);
    double t_s = 0;
    for (uint32_t i = 0; i < w->n; i++) {
        struct serve_req *r = &out->r[i];
        /* the gap first, so that request 0 does not arrive at 0 exactly under a Poisson process */
        if (w->arrival == SERVE_POISSON) {
            t_s += -log(rng_unit(&g)) / w->rate;
            r->arrival_ps = (uint64_t)llround(t_s * 1e12);
        } else
            r->arrival_ps = i < w->concurrency ? 0 : UINT64_MAX;
        r->input = draw_len(&w->isl, &g);
        r->output = draw_len(&w->osl, &g);
    }
}

void serve_reqs_free(struct serve_reqs *q)
{
    free(q->r);
    q->r = NULL;
    q->n = 0;
}

/* A whole number of tokens >= 1 in field text; 0, or -1 with *d. */
static int read_len(const char *path, int line, const char *field, const char *text, uint32_t *out,
                    struct diag *d)
{
    double x;
    if (num_parse(text, &x) != 0)
        return diag_set(d, DIAG_E_PARSE, path, line, field, "expected a token count, got '%s'", text);
    if (x < 0)
        return diag_set(d, DIAG_E_RANGE, path, line, field, "a length cannot be negative, got %s", text);
    if (x < 1 || x > 1e7 || x != floor(x))
        return diag_set(d, DIAG_E_RANGE, path, line, field, "expected a whole number from 1 to 1e7, got %s",
                        text);
    *out = (uint32_t)x;
    return 0;
}

/* One data line into *r (prev: the previous line's arrival, s).  0, or -1 with *d. */
static int read_req(const char *path, int line, char *buf, double *prev, struct serve_req *r,
                    struct diag *d)
{
    char *col[4];
    int nc = csv_split(buf, col, 4);
    if (nc < 0)
        return diag_set(d, DIAG_E_PARSE, path, line, "", "expected 3 fields (arrival_s,input_tokens,"
                        "output_tokens): more, or a quote left open");
    if (nc != 3)
        return diag_set(d, DIAG_E_PARSE, path, line, "", "expected 3 fields (arrival_s,input_tokens,"
                        "output_tokens), got %d", nc);
    double t;
    if (num_parse(col[0], &t) != 0 || !isfinite(t))
        return diag_set(d, DIAG_E_PARSE, path, line, "arrival_s", "expected seconds, got '%s'", col[0]);
    if (t < 0 || t > 1e9)
        return diag_set(d, DIAG_E_RANGE, path, line, "arrival_s", "expected 0 to 1e9 seconds, got %s", col[0]);
    if (t < *prev)
        return diag_set(d, DIAG_E_RANGE, path, line, "arrival_s",
                        "times must not decrease: %s comes after %.9g (sort the file by arrival_s)",
                        col[0], *prev);
    *prev = t;
    r->arrival_ps = (uint64_t)llround(t * 1e12);
    if (read_len(path, line, "input_tokens", col[1], &r->input, d) != 0 ||
        read_len(path, line, "output_tokens", col[2], &r->output, d) != 0)
        return -1;
    return 0;
}

int serve_reqs_load(const char *path, struct serve_reqs *out, struct diag *d)
{
    memset(out, 0, sizeof *out);
    FILE *f = fopen(path, "rb");
    if (f == NULL)
        return diag_set(d, DIAG_E_IO, path, 0, "", "cannot open: %s", strerror(errno));
    afile_note_input(f);
    char buf[1024];
    size_t len, cap = 1024;
    struct serve_req *r = sim_xcalloc(cap, sizeof *r);
    uint32_t n = 0;
    int line = 0, rc = 0;
    double prev = 0;
    enum textline tr;
    while (rc == 0 && (tr = textline_read(f, buf, sizeof buf, &len)) == TEXTLINE_OK) {
        line++;
        if (len == 0 || buf[0] == '\n' || (buf[0] == '\r' && buf[1] == '\n'))
            continue;
        if (line == 1) {    /* the header names the columns, in this order */
            if (strncmp(buf, "arrival_s,input_tokens,output_tokens", 36) != 0 || strchr("\r\n", buf[36]) == NULL)
                rc = diag_set(d, DIAG_E_PARSE, path, 1, "", "expected the header "
                              "'arrival_s,input_tokens,output_tokens'");
            continue;
        }
        if (n == cap) {
            cap *= 2;
            r = sim_xrealloc(r, cap * sizeof *r);
        }
        memset(&r[n], 0, sizeof r[n]);
        if (read_req(path, line, buf, &prev, &r[n], d) != 0)
            rc = -1;
        else
            n++;
    }
    if (rc == 0 && tr != TEXTLINE_EOF)
        rc = diag_set(d, DIAG_E_PARSE, path, line + 1, "", "%s", textline_what(tr));
    if (rc == 0 && n == 0)
        rc = diag_set(d, DIAG_E_MISSING, path, line, "", "no requests (a header and one line a request)");
    fclose(f);
    if (rc != 0) {
        free(r);
        return -1;
    }
    out->r = r;
    out->n = n;
    return 0;
}
