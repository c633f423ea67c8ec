/* names.c: shipped configs, systems and models by name (`--hw h100-sxm`,
 * `--model llama-2-7b`) and `strata list`.
 *
 * A name is looked up under each data root, in order: the folders of
 * $STRATA_PATH (colon-separated), the installed data next to the binary
 * (BIN/../share/strata, as `cmake --install` lays it out), and the source
 * tree the binary was built from.  Under a root, configs are configs/NAME.yaml,
 * systems configs/systems/NAME.yaml, models traces/models/NAME.json, stacks
 * configs/stacks/NAME.yaml (a stack by its exact name only).  A name
 * matches a file whose stem equals it, ends with it after a '-'
 * (`h100-sxm` finds nvidia-h100-sxm), or contains it as whole '-'-separated
 * words, in any case (`H100-SXM`; a stem spelt exactly as given comes
 * first); the best kind of match wins, and several of the best kind are an
 * error that lists them.  For --hw, chip configs are searched first and
 * systems only when no chip matches (`systems/NAME` asks for a system).  An argument that names an
 * existing file, or has a '/', is a path and is taken as it is. */
#include <ctype.h>
#include <dirent.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/stat.h>
#include <unistd.h>

#include "cfgset.h"
#include "cli.h"
#include "diag.h"
#include "dtype.h"
#include "stack.h"
#include "suggest.h"
#include "wfmt.h"

#ifndef STRATA_SOURCE_ROOT
#define STRATA_SOURCE_ROOT ""
#endif

enum { MAX_ROOTS = 16, MAX_HITS = 16 };

static int is_dir(const char *p)
{
    struct stat st;
    return stat(p, &st) == 0 && S_ISDIR(st.st_mode);
}

static int roots(char out[][1024])
{
    int n = 0;
    const char *env = getenv("STRATA_PATH");
    for (const char *p = env; p != NULL && *p != '\0' && n < MAX_ROOTS;) {
        size_t l = strcspn(p, ":");
        if (l > 0 && l < 1024) {
            snprintf(out[n], 1024, "%.*s", (int)l, p);
            if (is_dir(out[n]))
                n++;
        }
        p += l;
        if (*p == ':')
            p++;
    }
    char exe[900];
    ssize_t l = readlink("/proc/self/exe", exe, sizeof exe - 1);
    if (l > 0 && n < MAX_ROOTS) {
        exe[l] = '\0';
        char *slash = strrchr(exe, '/');
        if (slash != NULL) {
            *slash = '\0';
            snprintf(out[n], 1024, "%s/../share/strata", exe);
            if (is_dir(out[n]))
                n++;
        }
    }
    if (STRATA_SOURCE_ROOT[0] != '\0' && n < MAX_ROOTS && is_dir(STRATA_SOURCE_ROOT)) {
        snprintf(out[n], 1024, "%s", STRATA_SOURCE_ROOT);
        n++;
    }
    return n;
}

static const struct kind {
    const char *name, *dir, *ext, *what;
} kinds[] = {
    {"configs", "configs", ".yaml", "chip configs (--hw)"},
    {"systems", "configs/systems", ".yaml", "system files (--hw)"},
    {"models", "traces/models", ".json", "model configs (--model)"},
    {"stacks", "configs/stacks", ".yaml", "software stacks (--stack, spec stack=)"},
    {"specs", "configs/specs", ".yaml", "data-sheet spec files (new-chip --spec)"},
};

/* How well name matches stem: 4 equal, 3 equal but for case, 2 its last
 * '-'-separated words (`dgx-a100` of nvidia-dgx-a100), 1 some of its whole
 * words, 0 not.  Only 4 minds case, so a name differing from a stem in case
 * alone finds it, and a file whose name is spelt exactly so wins. */
static int matches(const char *stem, const char *name)
{
    if (strcmp(stem, name) == 0)
        return 4;
    if (strcasecmp(stem, name) == 0)
        return 3;
    size_t sl = strlen(stem), nl = strlen(name);
    if (sl > nl && stem[sl - nl - 1] == '-' && strcasecmp(stem + sl - nl, name) == 0)
        return 2;
    char a[300], b[300];
    snprintf(a, sizeof a, "-%s-", stem);
    snprintf(b, sizeof b, "-%s-", name);
    for (char *p = a; *p != '\0'; p++)
        *p = (char)tolower((unsigned char)*p);
    for (char *p = b; *p != '\0'; p++)
        *p = (char)tolower((unsigned char)*p);
    return strstr(a, b) != NULL;
}

/* Calls fn for every file of kind k under every root. */
static void each(const struct kind *k, void (*fn)(void *, const char *stem, const char *path),
                 void *arg)
{
    char r[MAX_ROOTS][1024];
    int nr = roots(r);
    for (int i = 0; i < nr; i++) {
        char dir[1100];
        snprintf(dir, sizeof dir, "%s/%s", r[i], k->dir);
        struct dirent **list = NULL;
        int n = scandir(dir, &list, NULL, alphasort);
        for (int j = 0; j < n; j++) {
            const char *f = list[j]->d_name;
            size_t l = strlen(f), el = strlen(k->ext);
            if (f[0] != '.' && l > el && strcmp(f + l - el, k->ext) == 0) {
                char stem[300], path[1500];
                snprintf(stem, sizeof stem, "%.*s", (int)(l - el), f);
                snprintf(path, sizeof path, "%s/%s", dir, f);
                fn(arg, stem, path);
            }
            free(list[j]);
        }
        free(list);
    }
}

struct hits {
    const char *name;
    int n, best;        /* matches of rank best only */
    char stem[MAX_HITS][300], path[MAX_HITS][1500];
};

static void collect(void *arg, const char *stem, const char *path)
{
    struct hits *h = arg;
    int m = matches(stem, h->name);
    if (m == 0 || m < h->best)
        return;
    if (m > h->best) {  /* a better match beats the ones so far */
        h->best = m;
        h->n = 0;
    }
    for (int i = 0; i < h->n; i++)
        if (strcmp(h->stem[i], stem) == 0)
            return;            /* the same name under an earlier root wins */
    if (h->n < MAX_HITS) {
        snprintf(h->stem[h->n], sizeof h->stem[0], "%s", stem);
        snprintf(h->path[h->n], sizeof h->path[0], "%s", path);
        h->n++;
    }
}

/* Offers stem, and its last '-'-separated words as they would find it
 * (`h100-sxm` of nvidia-h100-sxm), as stem. */
static void offer_stem(void *arg, const char *stem, const char *path)
{
    (void)path;
    struct suggest *sg = arg;
    suggest_offer(sg, stem);
    for (const char *p = strchr(stem, '-'); p != NULL; p = strchr(p + 1, '-'))
        suggest_offer_as(sg, p + 1, stem);
}

/* "; did you mean 'STEM'?" for a name that matched nothing, from the
 * files of kinds[k] (k 0: the chip configs and the systems), or "". */
static void near_names(const char *name, int k, char *hint, size_t n)
{
    static struct suggest sg;
    suggest_init(&sg, name);
    each(&kinds[k], offer_stem, &sg);
    if (k == 0)
        each(&kinds[1], offer_stem, &sg);
    suggest_text(&sg, hint, n);
}

int cli_data_dirs(const char *sub, char (*out)[1100], int max)
{
    char r[MAX_ROOTS][1024];
    int nr = roots(r), n = 0;
    for (int i = 0; i < nr && n < max; i++) {
        snprintf(out[n], 1100, "%s/%s", r[i], sub);
        if (is_dir(out[n]))
            n++;
    }
    return n;
}

void cli_find_data(const char **argp, char *out, size_t n)
{
    struct stat st;
    if (*argp == NULL || (*argp)[0] == '/' || stat(*argp, &st) == 0)
        return;
    char r[MAX_ROOTS][1024], rel[1024];
    snprintf(rel, sizeof rel, "%s", *argp);     /* *argp may be out itself */
    int nr = roots(r);
    for (int i = 0; i < nr; i++) {
        snprintf(out, n, "%s/%s", r[i], rel);
        if (stat(out, &st) == 0) {
            *argp = out;
            return;
        }
    }
    if (*argp == out)
        snprintf(out, n, "%s", rel);
}

int cli_find(const char *verb, const char *opt, const char **argp, int models, char *out, size_t n)
{
    if (*argp == NULL)
        return 0;
    const char *arg = *argp;
    struct stat st;
    int sys_only = strncmp(arg, "systems/", 8) == 0 && strchr(arg + 8, '/') == NULL;
    if (stat(arg, &st) == 0 || (strchr(arg, '/') != NULL && !sys_only)) {
        snprintf(out, n, "%s", arg);
        *argp = out;
        cli_find_data(argp, out, n);    /* configs/x.yaml from another folder: the data root's */
        return 0;
    }
    static struct hits h;
    memset(&h, 0, sizeof h);
    h.name = sys_only ? arg + 8 : arg;
    /* chips first: a system is found by a name no chip config matches */
    if (models == 2)
        each(&kinds[4], collect, &h);
    else if (models)
        each(&kinds[2], collect, &h);
    else if (!sys_only)
        each(&kinds[0], collect, &h);
    if (!models && h.n == 0)
        each(&kinds[1], collect, &h);
    if (h.n == 1) {
        snprintf(out, n, "%s", h.path[0]);
        *argp = out;
        return 0;
    }
    if (h.n == 0) {
        char hint[SUGGEST_MAX * SUGGEST_NAME + 32];
        near_names(h.name, models == 2 ? 4 : models ? 2 : sys_only ? 1 : 0, hint, sizeof hint);
        fprintf(stderr, "strata %s: %s %s: no such file, and no shipped %s of that name%s (strata "
                        "list %s)\n", verb, opt, arg,
                models == 2 ? "spec file" : models ? "model" : "config or system", hint,
                models == 2 ? "specs" : models ? "models" : "configs");
        return 1;
    }
    fprintf(stderr, "strata %s: %s %s is ambiguous; it matches:", verb, opt, arg);
    for (int i = 0; i < h.n; i++)
        fprintf(stderr, " %s", h.stem[i]);
    fprintf(stderr, "\n");
    return 1;
}

/* Exact stems only: stack names carry versions (vllm-0.2, vllm-0.6). */
static void collect_exact(void *arg, const char *stem, const char *path)
{
    struct hits *h = arg;
    if (strcmp(stem, h->name) == 0 && h->n == 0) {  /* an earlier root wins */
        snprintf(h->path[0], sizeof h->path[0], "%s", path);
        h->n = 1;
    }
}

static void collect_all(void *arg, const char *stem, const char *path)
{
    (void)path;
    struct hits *h = arg;
    for (int i = 0; i < h->n; i++)
        if (strcmp(h->stem[i], stem) == 0)
            return;
    if (h->n < MAX_HITS)
        snprintf(h->stem[h->n++], sizeof h->stem[0], "%s", stem);
}

int cli_find_stack(const char *verb, const char *name, char *out, size_t n)
{
    struct stat st;
    if (stat(name, &st) == 0 || strchr(name, '/') != NULL) {
        snprintf(out, n, "%s", name);
        return 0;
    }
    static struct hits h;
    memset(&h, 0, sizeof h);
    h.name = name;
    each(&kinds[3], collect_exact, &h);
    if (h.n == 1) {
        snprintf(out, n, "%s", h.path[0]);
        return 0;
    }
    each(&kinds[3], collect_all, &h);
    char hint[SUGGEST_MAX * SUGGEST_NAME + 32];
    near_names(name, 3, hint, sizeof hint);
    fprintf(stderr, "strata %s: --stack %s: no such file, and no shipped stack of that name; the stacks:",
            verb, name);
    for (int i = 0; i < h.n; i++)
        fprintf(stderr, "%s %s", i ? "," : "", h.stem[i]);
    fprintf(stderr, "%s\n", hint);
    return 1;
}

int cli_load_stack(const char *verb, const char *name, struct stack *s, char *dir, size_t n)
{
    char path[1600];
    if (cli_find_stack(verb, name, path, sizeof path) != 0)
        return 1;
    struct diag d;
    memset(&d, 0, sizeof d);
    if (stack_load(path, s, &d) != 0)
        return cli_fail(&d);
    snprintf(dir, n, "%s", path);
    char *slash = strrchr(dir, '/');
    if (slash != NULL)
        *slash = '\0';
    else
        snprintf(dir, n, ".");
    return 0;
}

int cli_load_stack_sets(const char *verb, const char *name, const struct cfg_sets *sets, struct stack *s,
                        char *dir, size_t n)
{
    struct diag d;
    memset(&d, 0, sizeof d);
    if (name == NULL) {
        const struct cfg_set *st = cfg_sets_first_stack(sets);
        if (st == NULL)
            return 0;
        fprintf(stderr, "strata %s: %s: %s: sets a software stack's value, but no --stack names one\n", verb,
                st->origin, st->key);
        return 2;
    }
    if (cli_load_stack(verb, name, s, dir, n) != 0)
        return 1;
    if (stack_apply_sets(s, sets, &d) != 0)
        return cli_fail(&d);
    return 0;
}

const char cli_list_usage[] = "  strata list     configs|systems|models|stacks|specs|formats|dtypes|verbs\n";

struct seen {
    int n;
    char stem[512][96];
};

/* One line per name; the same name under a later root is shadowed. */
static void print_one(void *arg, const char *stem, const char *path)
{
    struct seen *s = arg;
    for (int i = 0; i < s->n; i++)
        if (strcmp(s->stem[i], stem) == 0)
            return;
    if (s->n < 512)
        snprintf(s->stem[s->n++], sizeof s->stem[0], "%s", stem);
    printf("  %-36s %s\n", stem, path);
}

int cli_list(int argc, char **argv)
{
    const struct cli_opt opts[] = {{NULL, 0, NULL, NULL}};
    int first = 0;
    int rc = cli_parse("list", cli_list_usage, opts, argc, argv, &first);
    if (rc >= 0)
        return rc;
    if (first != argc - 1) {
        fprintf(stderr, "strata list: say what to list: configs, systems, models, stacks, formats, dtypes or verbs\n");
        return 2;
    }
    const char *what = argv[first];
    for (size_t k = 0; k < sizeof kinds / sizeof kinds[0]; k++)
        if (strcmp(what, kinds[k].name) == 0) {
            printf("%s:\n", kinds[k].what);
            static struct seen seen;
            seen.n = 0;
            each(&kinds[k], print_one, &seen);
            return 0;
        }
    if (strcmp(what, "dtypes") == 0) {
        printf("dtypes (--dtype, trace \"dtype\", config rate keys): name, bits per element in memory\n");
        for (unsigned t = 0; t < DT_COUNT; t++)
            printf("  %-10s %g\n", dtype_name((enum dtype)t), dtype_bytes((enum dtype)t, 1.0) * 8);
        printf("  aliases: bfloat16, float16, half, float32, float, float64, double, fp8 (= fp8_e4m3),"
               " e4m3, e5m2, fp4 (= nvfp4), fp6 (= mxfp6)\n");
        return 0;
    }
    if (strcmp(what, "verbs") == 0) {  /* one a line, for the shell completions */
#define CLI_VERB_NAME_(id, name, summary) puts(name);
        CLI_VERB_MAP(CLI_VERB_NAME_)
#undef CLI_VERB_NAME_
        return 0;
    }
    if (strcmp(what, "formats") == 0) {
        printf("weight formats (--weights, trace \"weights\"): name, bits per weight with scales\n");
        for (unsigned f = 1; f < WFMT_COUNT; f++)
            printf("  %-10s %g\n", wfmt_name((enum wfmt)f), wfmt_bits((enum wfmt)f));
        return 0;
    }
    static const char *const others[] = {"formats", "dtypes", "verbs", NULL};
    struct suggest sg;
    suggest_init(&sg, what);
    for (size_t k = 0; k < sizeof kinds / sizeof kinds[0]; k++)
        suggest_offer(&sg, kinds[k].name);
    suggest_offer_list(&sg, others);
    char hint[SUGGEST_MAX * SUGGEST_NAME + 32];
    suggest_text(&sg, hint, sizeof hint);
    fprintf(stderr, "strata list: unknown '%s'; expected configs, systems, models, stacks, formats, dtypes or verbs%s\n",
            what, hint);
    return 2;
}
