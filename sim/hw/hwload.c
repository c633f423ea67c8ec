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
    struct hw_system cs;
    if (hw_load(chip, sets, &cs, NULL, &cd) != 0) {
        if (cd.code == DIAG_E_IO)
            return diag_set(c->d, DIAG_E_IO, c->path, c->nodes[yconf_lookup(c, root, "chip")].line,
                            "chip", "cannot load '%s': %s", chip, cd.msg);
        *c->d = cd;     /* the chip's own error, with its own file and line */
        return -1;
    }
    s->chip = cs.chip;
    if (sysload_body(c, root, s) != 0)
        return -1;
    sys_index(s);
    return 0;
}

/* The file at path, parsed into c: *out and *kind, or -1 with *c->d.
 * kind NULL: a chip is needed, and a system file is an error. */
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

int hw_load(const char *path, const struct cfg_sets *sets, struct hw_system *out,
            enum hw_kind *kind, struct diag *d)
{
    if (path == NULL || out == NULL)
        return diag_set(d, DIAG_E_USAGE, "", 0, "", "hw_load: path and out are required");
    if (path_too_long(path, d) != 0)
        return -1;
    struct yconf c = {.path = path, .d = d};
    int root = yconf_parse_file(&c, NULL);
    int rc = root < 0 ? -1 : from_tree(&c, root, path, sets, out, kind);
    yconf_free(&c);
    return rc;
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
