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

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "check.h"
#include "chipcfg.h"
#include "sysload.h"
#include "yconf.h"

/* A chip config from its parsed tree, sets applied: 0, or -1 with *c->d. */
static int chip_from_tree(struct yconf *c, int root, const char *path,
                          const struct cfg_sets *sets, struct hw_config *out)
{
    snprintf(out->path, sizeof out->path, "%s", path);
    if (cfg_sets_apply(c, root, sets) != 0 || chipcfg_fill(c, root, out) != 0) {
        cfg_sets_name_error(c->d, sets);
        return -1;
    }
    cfg_sets_name_variant(out, sets);
    return 0;
}

/* A system file from its parsed tree, its chip loaded with sets: 0, or -1
 * with *c->d. */
static int system_from_tree(struct yconf *c, int root, const struct cfg_sets *sets,
                            struct hw_system *s)
{
    char chip[1100];
    if (sysload_head(c, root, s, chip, sizeof chip) != 0)
        return -1;
    struct diag cd;
    memset(&cd, 0, sizeof cd);
    if (cfg_load_with(chip, sets, &s->chip, &cd) != 0) {
        if (cd.code == DIAG_E_IO)
            return diag_set(c->d, DIAG_E_IO, c->path, c->nodes[yconf_lookup(c, root, "chip")].line,
                            "chip", "cannot load '%s': %s", chip, cd.msg);
        *c->d = cd;     /* the chip's own error, with its own file and line */
        return -1;
    }
    if (sysload_body(c, root, s) != 0)
        return -1;
    sys_index(s);
    return 0;
}

/* The file at path, parsed into c: *out and *kind, or -1 with *c->d. */
static int from_tree(struct yconf *c, int root, const char *path, const struct cfg_sets *sets,
                     struct hw_system *out, enum hw_kind *kind)
{
    struct hw_system s;
    memset(&s, 0, sizeof s);
    snprintf(s.path, sizeof s.path, "%s", path);
    int system = c->nodes[root].kind == YCONF_MAPPING && yconf_lookup(c, root, "chip") >= 0;
    /* not a system: a chip config, read into s.chip from the same tree */
    int rc = system ? system_from_tree(c, root, sets, &s)
                    : chip_from_tree(c, root, path, sets, &s.chip);
    if (rc != 0) {
        sys_free(&s);
        return -1;
    }
    *out = s;
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

static int load(const char *path, const struct cfg_sets *sets, struct hw_system *out,
                enum hw_kind *kind, struct diag *d)
{
    if (path_too_long(path, d) != 0)
        return -1;
    struct yconf c = {.path = path, .d = d};
    int root = yconf_parse_file(&c, NULL);
    int rc = root < 0 ? -1 : from_tree(&c, root, path, sets, out, kind);
    yconf_free(&c);
    return rc;
}

int hw_load(const char *path, const struct cfg_sets *sets, struct hw_system *out,
            enum hw_kind *kind, struct diag *d)
{
    if (path == NULL || out == NULL || kind == NULL)
        return diag_set(d, DIAG_E_USAGE, "", 0, "", "hw_load: path, out and kind are required");
    return load(path, sets, out, kind, d);
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
    int rc = from_tree(&c, p->root, p->path, sets, out, kind);
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

int cfg_load(const char *path, struct hw_config *out, struct diag *d)
{
    return cfg_load_with(path, NULL, out, d);
}

int cfg_load_with(const char *path, const struct cfg_sets *sets, struct hw_config *out,
                  struct diag *d)
{
    if (path == NULL || out == NULL)
        return diag_set(d, DIAG_E_USAGE, "", 0, "", "cfg_load: path and out are required");
    struct hw_system s;
    enum hw_kind kind;
    if (load(path, sets, &s, &kind, d) != 0)
        return -1;
    if (kind == HW_SYSTEM) {
        diag_set(d, DIAG_E_UNSUPPORTED, path, 0, "chip",
                 "a system file (%u devices of %s) where a chip config is needed", s.ndevices,
                 s.chip.name);
        sys_free(&s);
        return -1;
    }
    *out = s.chip;
    return 0;
}

int sys_load(const char *path, struct hw_system *out, struct diag *d)
{
    return sys_load_with(path, NULL, out, d);
}

int sys_load_with(const char *path, const struct cfg_sets *sets, struct hw_system *out,
                  struct diag *d)
{
    if (path == NULL || out == NULL)
        return diag_set(d, DIAG_E_USAGE, "", 0, "", "sys_load: path and out are required");
    enum hw_kind kind;
    if (load(path, sets, out, &kind, d) != 0)
        return -1;
    return kind == HW_CHIP ? 1 : 0;
}

/* A chip config parsed once, loaded many times with different overrides
 * (a sweep's points): each load works on a copy of the tree. */
struct cfg_proto {
    char path[512];
    struct yconf c;
    int root;
};

int cfg_proto_load(const char *path, struct cfg_proto **out, struct diag *d)
{
    *out = NULL;
    struct cfg_proto *p = sim_xcalloc(1, sizeof *p);
    if (strlen(path) >= sizeof p->path) {
        free(p);
        return diag_set(d, DIAG_E_RANGE, "", 0, "", "config path longer than %zu characters",
                        sizeof p->path - 1);
    }
    memcpy(p->path, path, strlen(path) + 1);
    p->c = (struct yconf){.path = p->path, .d = d};
    p->root = yconf_parse_file(&p->c, NULL);
    if (p->root < 0 || (p->c.nodes[p->root].kind == YCONF_MAPPING &&
                        yconf_lookup(&p->c, p->root, "chip") >= 0)) {
        int rc = p->root < 0 ? -1 : 1;  /* 1: a system file, which is not kept */
        cfg_proto_free(p);
        return rc;
    }
    *out = p;
    return 0;
}

int cfg_load_proto(const struct cfg_proto *p, const struct cfg_sets *sets, struct hw_config *out,
                   struct diag *d)
{
    struct yconf c;
    yconf_copy(&c, &p->c, p->path, d);
    struct hw_config h;
    memset(&h, 0, sizeof h);
    int rc = chip_from_tree(&c, p->root, p->path, sets, &h);
    yconf_free(&c);
    if (rc != 0)
        return -1;
    *out = h;
    return 0;
}

void cfg_proto_free(struct cfg_proto *p)
{
    if (p == NULL)
        return;
    yconf_free(&p->c);
    free(p);
}
