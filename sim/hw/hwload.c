/* hwload.c: loading chip configs and system files (hwload.h).
 *
 * One reader for both kinds of file: a file whose top level is a mapping
 * with a `chip` key is a system file; anything else is read as a chip
 * config, so a broken file gets the chip schema's errors.  A chip's tree
 * takes the overrides first (cfgset.c), then is checked and compiled
 * (chipcfg.c).  A system's chip is loaded between the two steps of its
 * file (sysload.c), with the same overrides, so an error in the chip names
 * the chip's own file and line. */
#include "hwload.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "check.h"
#include "chipcfg.h"
#include "sysload.h"
#include "yconf.h"

static int load_path(const char *path, const struct cfg_sets *sets, int in_system,
                     struct hw_system *out, enum hw_kind *kind, struct diag *d);

/* A chip config from its parsed tree, sets applied (in_system: the chip of
 * a system file, whose sets of links are the system's): 0, or -1 with
 * *c->d. */
static int chip_from_tree(struct yconf *c, int root, const char *path,
                          const struct cfg_sets *sets, int in_system, struct hw_config *out)
{
    snprintf(out->path, sizeof out->path, "%s", path);
    if (cfg_sets_apply(c, root, sets, in_system) != 0 || chipcfg_fill(c, root, out) != 0) {
        cfg_sets_name_error(c->d, sets);
        return -1;
    }
    cfg_sets_name_variant(out, sets);
    return 0;
}

/* Does a set name one of the chip's link levels (by its name, or `link`
 * for the first of that kind)? */
static int sets_name_link_level(const struct cfg_sets *sets, const struct hw_config *chip)
{
    for (unsigned k = 0; sets != NULL && k < sets->n; k++) {
        char first[96];
        snprintf(first, sizeof first, "%.*s", (int)strcspn(sets->set[k].key, "."), sets->set[k].key);
        int li = cfg_level_index(chip, first);
        if ((li >= 0 && chip->level[li].kind == LK_LINK) || strcmp(first, "link") == 0)
            return 1;
    }
    return 0;
}

/* An override of a chip's link level (`nvlink.bandwidth=...`) on a system
 * file: the system's links of that level carry the bytes, so they change
 * by the factor the chip's level changed, its rate after efficiency and its
 * latency (a level's bandwidth is per port, a system link's per link).
 * 0, or -1 with *d. */
static int scale_links(const char *chip_path, const struct cfg_sets *sets, struct hw_system *s,
                       struct diag *d)
{
    if (!sets_name_link_level(sets, &s->chip))
        return 0;
    struct hw_system base;
    if (load_path(chip_path, NULL, 1, &base, NULL, d) != 0)
        return -1;
    for (uint32_t i = 0; i < s->nlinks; i++) {
        struct sys_link *l = &s->links[i];
        if (l->level < 0)
            continue;
        const struct hw_level *L0 = &base.chip.level[l->level], *L1 = &s->chip.level[l->level];
        if (level_rate(L1) != level_rate(L0))
            l->bw_bytes_per_s *= level_rate(L1) / level_rate(L0);
        if (L1->latency_ps != L0->latency_ps)
            l->latency_ps = L0->latency_ps == 0 ? L1->latency_ps
                          : (uint64_t)llround((double)l->latency_ps * ((double)L1->latency_ps /
                                                                      (double)L0->latency_ps));
    }
    return 0;
}

/* A system file from its parsed tree, its chip loaded with sets, its links
 * with theirs: 0, or -1 with *c->d. */
static int system_from_tree(struct yconf *c, int root, const struct cfg_sets *sets,
                            struct hw_system *s)
{
    char chip[1100];
    if (sysload_head(c, root, s, chip, sizeof chip) != 0)
        return -1;
    struct diag cd;
    memset(&cd, 0, sizeof cd);
    struct hw_system cs;
    if (load_path(chip, sets, 1, &cs, NULL, &cd) != 0) {
        if (cd.code == DIAG_E_IO)
            return diag_set(c->d, DIAG_E_IO, c->path, c->nodes[yconf_lookup(c, root, "chip")].line,
                            "chip", "cannot load '%s': %s", chip, cd.msg);
        *c->d = cd;     /* the chip's own error, with its own file and line */
        return -1;
    }
    s->chip = cs.chip;
    if (cfg_sets_apply_links(c, root, sets) != 0 || sysload_body(c, root, s) != 0) {
        cfg_sets_name_error(c->d, sets);
        return -1;
    }
    if (scale_links(chip, sets, s, c->d) != 0)
        return -1;
    sys_index(s);
    return 0;
}

/* The file at path, parsed into c: *out and *kind, or -1 with *c->d.
 * kind NULL: a chip is needed, and a system file is an error. */
static int from_tree(struct yconf *c, int root, const char *path, const struct cfg_sets *sets,
                     int in_system, struct hw_system *out, enum hw_kind *kind)
{
    struct hw_system s;
    memset(&s, 0, sizeof s);
    snprintf(s.path, sizeof s.path, "%s", path);
    int system = c->nodes[root].kind == YCONF_MAPPING && yconf_lookup(c, root, "chip") >= 0;
    /* not a system: a chip config, read into s.chip from the same tree */
    int rc = system ? system_from_tree(c, root, sets, &s)
                    : chip_from_tree(c, root, path, sets, in_system, &s.chip);
    if (rc == 0 && system && kind == NULL)
        rc = diag_set(c->d, DIAG_E_UNSUPPORTED, path, 0, "chip",
                      "a system file (%u devices of %s) where a chip config is needed",
                      s.ndevices, s.chip.name);
    if (rc != 0) {
        sys_free(&s);
        return -1;
    }
    *out = s;
    if (kind != NULL)
        *kind = system ? HW_SYSTEM : HW_CHIP;
    return 0;
}

static int path_too_long(const char *path, struct diag *d)
{
    struct hw_system s;
    if (strlen(path) < sizeof s.path)
        return 0;
    return diag_set(d, DIAG_E_RANGE, "", 0, "", "config path longer than %zu characters",
                    sizeof s.path - 1);
}

/* hw_load, or (in_system) the chip a system file names */
static int load_path(const char *path, const struct cfg_sets *sets, int in_system,
                     struct hw_system *out, enum hw_kind *kind, struct diag *d)
{
    if (path_too_long(path, d) != 0)
        return -1;
    struct yconf c = {.path = path, .d = d};
    int root = yconf_parse_file(&c, NULL);
    int rc = root < 0 ? -1 : from_tree(&c, root, path, sets, in_system, out, kind);
    yconf_free(&c);
    return rc;
}

int hw_load(const char *path, const struct cfg_sets *sets, struct hw_system *out,
            enum hw_kind *kind, struct diag *d)
{
    if (path == NULL || out == NULL)
        return diag_set(d, DIAG_E_USAGE, "", 0, "", "hw_load: path and out are required");
    return load_path(path, sets, 0, out, kind, d);
}

/* A hardware file parsed once, loaded many times with different overrides
 * (a sweep's points): each load works on a copy of the tree. */
struct hw_proto {
    char path[512];
    struct yconf c;
    int root;
};

int hw_proto_load(const char *path, struct hw_proto **out, struct diag *d)
{
    *out = NULL;
    if (path_too_long(path, d) != 0)
        return -1;
    struct hw_proto *p = sim_xcalloc(1, sizeof *p);
    snprintf(p->path, sizeof p->path, "%s", path);
    p->c = (struct yconf){.path = p->path, .d = d};
    p->root = yconf_parse_file(&p->c, NULL);
    if (p->root < 0) {
        hw_proto_free(p);
        return -1;
    }
    *out = p;
    return 0;
}

int hw_load_proto(const struct hw_proto *p, const struct cfg_sets *sets, struct hw_system *out,
                  enum hw_kind *kind, struct diag *d)
{
    struct yconf c;
    yconf_copy(&c, &p->c, p->path, d);
    int rc = from_tree(&c, p->root, p->path, sets, 0, out, kind);
    yconf_free(&c);
    return rc;
}

void hw_proto_free(struct hw_proto *p)
{
    if (p == NULL)
        return;
    yconf_free(&p->c);
    free(p);
}
