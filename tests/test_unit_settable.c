/* test_unit_settable.c: every key `--set` and `--vary` can name either
 * changes what is simulated or is refused (issue 33: `--set
 * nvlink.bandwidth=1GB/s` on a system file used to give the baseline under
 * the variant's name).
 *
 * For every shipped chip config, every number it gives (a section's, a
 * level's, an inner mapping's: compute.matrix_flops_per_cycle_per_unit.bf16,
 * dram.efficiency.loaded_latency_ns), named as --set names it and set to
 * half (or, where half is refused, twice) its value, must load into a chip
 * that differs from the file's, or be refused.  For every shipped system
 * file, the chip's link levels and the system's own links (links.NAME)
 * must change the links that carry the bytes.  A key the loader accepted
 * and then ignored fails here.  That the compiled chip's fields reach the
 * predictions is the model's tests' business; tests/test_unit_report.c and
 * test_unit_system.c check the ones this issue was about end to end. */
#include <stdio.h>
#include <string.h>

#include "cfgset.h"
#include "hwload.h"
#include "numfmt.h"
#include "system.h"
#include "test.h"
#include "util.h"
#include "yconf.h"

/* The config's unit suffixes, which a --set key leaves out */
static void strip_unit(char *key)
{
    static const char *const suf[] = {"_GBps", "_bytes_per_cycle", "_KiB", "_MiB", "_GB", "_GiB",
                                      "_MHz", "_ns", "_us"};
    size_t n = strlen(key);
    for (size_t i = 0; i < sizeof suf / sizeof suf[0]; i++) {
        size_t m = strlen(suf[i]);
        if (n > m && strcmp(key + n - m, suf[i]) == 0) {
            key[n - m] = '\0';
            return;
        }
    }
}

struct keys {
    unsigned n;
    char key[256][96];
};

/* Every number under mapping map, its key prefix.key... */
static void walk(const struct yconf *c, int map, const char *prefix, int depth, struct keys *k)
{
    for (int kk = c->nodes[map].first; kk >= 0; kk = yconf_next_key(c, kk)) {
        int v = c->nodes[kk].next;
        char key[96];
        snprintf(key, sizeof key, "%s%s%s", prefix, prefix[0] ? "." : "", yconf_text(c, kk));
        if (c->nodes[v].kind == YCONF_MAPPING && depth < 3) {
            walk(c, v, key, depth + 1, k);
            continue;
        }
        double x;
        if (c->nodes[v].kind != YCONF_SCALAR || num_parse(yconf_text(c, v), &x) != 0 || k->n >= 256)
            continue;
        strip_unit(key);
        snprintf(k->key[k->n++], sizeof k->key[0], "%s", key);
    }
}

/* The keys of a chip config's numbers, as --set names them */
static void config_keys(const char *path, struct keys *k)
{
    struct diag d;
    memset(&d, 0, sizeof d);
    struct yconf c = {.path = path, .d = &d};
    int root = yconf_parse_file(&c, NULL);
    k->n = 0;
    CHECK(root >= 0);
    for (int kk = root >= 0 ? c.nodes[root].first : -1; kk >= 0; kk = yconf_next_key(&c, kk)) {
        int v = c.nodes[kk].next;
        const char *sec = yconf_text(&c, kk);
        if (strcmp(sec, "levels") == 0) {
            for (int m = c.nodes[v].first; m >= 0; m = c.nodes[m].next) {
                int nv = yconf_lookup(&c, m, "name");
                if (nv >= 0)
                    walk(&c, m, yconf_text(&c, nv), 1, k);
            }
        } else if (c.nodes[v].kind == YCONF_MAPPING) {
            walk(&c, v, sec, 1, k);
        } else {
            double x;
            if (num_parse(yconf_text(&c, v), &x) == 0 && k->n < 256) {
                snprintf(k->key[k->n], sizeof k->key[0], "%s", sec);
                strip_unit(k->key[k->n++]);
            }
        }
    }
    yconf_free(&c);
}

/* The chip at path with key=f: 0 with *h, else -1 */
static int load_with(const char *path, const char *key, const char *f, struct hw_config *h)
{
    struct cfg_sets s;
    memset(&s, 0, sizeof s);
    struct diag d;
    memset(&d, 0, sizeof d);
    char kv[160];
    snprintf(kv, sizeof kv, "%s=%s", key, f);
    if (cfg_sets_add(&s, kv, "--set", &d) != 0)
        return -1;
    struct hw_system sys;
    if (hw_load(path, &s, &sys, NULL, &d) != 0)
        return -1;
    *h = sys.chip;
    memset(h->variant, 0, sizeof h->variant);   /* the name says it; the rest must too */
    return 0;
}

static void check_chip(const char *path, unsigned *nkeys, unsigned *nrefused)
{
    struct keys k;
    config_keys(path, &k);
    struct hw_config base, h;
    if (load_with(path, "clock", "x1", &base) != 0) {
        CHECK(0);
        return;
    }
    for (unsigned i = 0; i < k.n; i++) {
        int rc = load_with(path, k.key[i], "x0.5", &h);
        if (rc != 0)
            rc = load_with(path, k.key[i], "x2", &h);
        (*nkeys)++;
        if (rc != 0) {
            (*nrefused)++;  /* refused both ways: fine, it says so */
            continue;
        }
        if (memcmp(&h, &base, sizeof h) == 0) {
            fprintf(stderr, "  %s: --set %s=x0.5 changes nothing\n", path, k.key[i]);
            CHECK(0);
        }
    }
}

/* One override on a system file: every link it names (by level, or by
 * name) at half its bandwidth, the others as they were. */
static void check_link_set(const char *path, const struct hw_system *base, int by_name, const char *what)
{
    char kv[160];
    snprintf(kv, sizeof kv, "%s%s.bandwidth=x0.5", by_name ? "links." : "", what);
    struct cfg_sets sets;
    memset(&sets, 0, sizeof sets);
    struct diag d;
    memset(&d, 0, sizeof d);
    CHECK_EQ_INT(cfg_sets_add(&sets, kv, "--set", &d), 0);
    struct hw_system s;
    if (tu_load_hw(path, &sets, &s, &d) != 0) {
        fprintf(stderr, "  %s --set %s: %s\n", path, kv, d.msg);
        CHECK(0);
        return;
    }
    CHECK_EQ_INT((int)s.nlinks, (int)base->nlinks);
    for (uint32_t i = 0; i < s.nlinks && i < base->nlinks; i++) {
        const struct sys_link *a = &base->links[i];
        int named = by_name ? strcmp(a->name, what) == 0 : strcmp(base->chip.level[a->level].name, what) == 0;
        double want = named ? 0.5 * a->bw_bytes_per_s : a->bw_bytes_per_s;
        if (s.links[i].bw_bytes_per_s != want) {
            fprintf(stderr, "  %s --set %s: link %u (%s) at %g B/s, want %g\n", path, kv, i, a->name,
                    s.links[i].bw_bytes_per_s, want);
            CHECK(0);
            break;
        }
    }
    sys_free(&s);
}

/* A system file: each link level of its chip, and each of its links by
 * name (when no link level has that name: then the name picks the named
 * links, which the level's set covers too), moves those links. */
static void check_system(const char *path)
{
    struct hw_system base;
    struct diag d;
    memset(&d, 0, sizeof d);
    if (tu_load_hw(path, NULL, &base, &d) != 0) {
        CHECK(0);
        return;
    }
    char seen[64][SYS_NAME_MAX + 8];
    unsigned nseen = 0;
    for (uint32_t i = 0; i < base.nlinks; i++)
        for (int by_name = 0; by_name < 2; by_name++) {
            const char *what = by_name ? base.links[i].name : base.chip.level[base.links[i].level].name;
            char tag[SYS_NAME_MAX + 8];
            snprintf(tag, sizeof tag, "%d%.*s", by_name, SYS_NAME_MAX, what);
            unsigned j = 0;
            while (j < nseen && strcmp(seen[j], tag) != 0)
                j++;
            if (j < nseen || nseen == 64)
                continue;
            snprintf(seen[nseen++], sizeof seen[0], "%s", tag);
            check_link_set(path, &base, by_name, what);
        }
    sys_free(&base);
}

static void each_file(const char *dir, int systems, unsigned *nfiles, unsigned *nkeys, unsigned *nref)
{
    DIR *dp = opendir(dir);
    CHECK(dp != NULL);
    if (dp == NULL)
        return;
    char names[256][128];
    unsigned n = 0;
    struct dirent *e;
    while ((e = readdir(dp)) != NULL && n < 256) {
        size_t l = strlen(e->d_name);
        if (l > 5 && l < 120 && strcmp(e->d_name + l - 5, ".yaml") == 0)
            snprintf(names[n++], sizeof names[0], "%.120s", e->d_name);
    }
    closedir(dp);
    for (unsigned i = 0; i < n; i++) {
        char path[300];
        snprintf(path, sizeof path, "%s/%s", dir, names[i]);
        if (systems)
            check_system(path);
        else
            check_chip(path, nkeys, nref);
        (*nfiles)++;
    }
}

/* A key that takes a word: --set systolic.dataflow=os makes a TPU's MXUs
 * output stationary (the loader checks the word as a file's: 'is' is
 * refused), and the run changes. */
static void check_word_key(void)
{
    struct hw_config ws, os, bad;
    CHECK_EQ_INT(load_with("configs/google-tpu-v5e.yaml", "clock", "x1", &ws), 0);
    CHECK_EQ_INT(load_with("configs/google-tpu-v5e.yaml", "systolic.dataflow", "os", &os), 0);
    CHECK(ws.sa_os == 0 && os.sa_os == 1);
    CHECK(load_with("configs/google-tpu-v5e.yaml", "systolic.dataflow", "is", &bad) != 0);
}

int main(void)
{
    check_word_key();
    unsigned nchips = 0, nsys = 0, nkeys = 0, nref = 0, unused = 0;
    each_file("configs", 0, &nchips, &nkeys, &nref);
    each_file("configs/systems", 1, &nsys, &unused, &unused);
    printf("  %u chip configs, %u keys set (%u refused at half and twice); %u system files\n", nchips,
           nkeys, nref, nsys);
    CHECK(nchips > 40 && nsys > 5 && nkeys > 1000);
    TEST_MAIN_END();
}
