/* tload_dev.c: the trace loader's devices and device groups (see
 * tload_dev.h). */
#include "tload_dev.h"

#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "check.h"
#include "trace_field.h"

int tload_dev_list(struct tload *L, const cJSON *devs)
{
    struct trace *t = L->t;
    L->prefix[0] = '\0';
    if (devs == NULL) {
        t->ndevices = 1;
        t->devices = sim_xcalloc(1, sizeof *t->devices);
        snprintf(t->devices[0], TRACE_DEVICE_MAX, "gpu0");
        nameidx_init(&L->devs, 1, t->devices[0], sizeof *t->devices);
        nameidx_add(&L->devs, 0);
        return 0;
    }
    if (!cJSON_IsArray(devs))
        return tload_err(L, DIAG_E_TYPE, devs, 0, "devices",
                         "must be a list of device names like [\"gpu0\"], got %s",
                         jsondoc_type_name(devs));
    size_t n = 0;
    for (const cJSON *c = devs->child; c != NULL && n <= TRACE_DEVICES_CAP; c = c->next)
        n++;
    if (n == 0)
        return tload_err(L, DIAG_E_RANGE, devs, 0, "devices", "must name at least one device");
    if (n > TRACE_DEVICES_CAP)
        return tload_err(L, DIAG_E_RANGE, devs, 0, "devices", "lists more than 65536 devices");
    t->devices = sim_xcalloc(n, sizeof *t->devices);
    t->ndevices = (uint32_t)n;
    nameidx_init(&L->devs, n, t->devices[0], sizeof *t->devices);
    uint32_t i = 0;
    for (const cJSON *c = devs->child; c != NULL; c = c->next, i++) {
        char key[32];
        snprintf(key, sizeof key, "devices[%u]", i);
        const char *s;
        if (jsondoc_get_string(L->doc, c, "", key, TRACE_DEVICE_MAX - 1, &s, L->d))
            return -1;
        if (s[0] == '\0')
            return tload_err(L, DIAG_E_RANGE, c, 0, key, "device name must not be empty");
        memcpy(t->devices[i], s, strlen(s) + 1);
        int64_t prev = nameidx_add(&L->devs, i);
        if (prev >= 0) {
            char msg[160];
            snprintf(msg, sizeof msg, "device \"%s\" is listed twice (also devices[%" PRId64 "])",
                     s, prev);
            return tload_err(L, DIAG_E_DUPLICATE, c, 0, key, "%s", msg);
        }
    }
    return 0;
}

int tload_dev_find(struct tload *L, const cJSON *at, const char *key, const char *s,
                   uint32_t *out)
{
    int64_t dev = nameidx_find(&L->devs, s);
    if (dev < 0) {
        char known[256], msg[400];
        snprintf(msg, sizeof msg, "unknown device \"%.40s\" (devices: %s)", s,
                 tload_device_list(L->t, known, sizeof known));
        return tload_err(L, DIAG_E_UNKNOWN_NAME, at, 0, key, "%s", msg);
    }
    *out = (uint32_t)dev;
    return 0;
}

static uint64_t group_hash(const uint32_t *dev, uint32_t n)
{
    uint64_t h = UINT64_C(1469598103934665603);
    for (uint32_t i = 0; i < n; i++) {
        h ^= dev[i];
        h *= UINT64_C(1099511628211);
    }
    return h ^ (h >> 29);
}

/* The group's devices into L->gscratch: how many, or -1 after an error.
 * *same: 1 when they are the last group's, in its order.  Each name is
 * first compared with the last group's device at its place, which is
 * most often it (every data-parallel all-reduce of a step lists the same
 * 1,024 devices): a name compare where the hash lookup missed the cache. */
static int64_t group_read(struct tload *L, const cJSON *it, const char *key, const char *hint,
                          int *same)
{
    struct trace *t = L->t;
    if (!cJSON_IsArray(it))
        return tload_err(L, DIAG_E_TYPE, it, 0, key,
                         "must be a list of device names like [\"gpu0\", \"gpu1\"]%s, got %s",
                         hint, jsondoc_type_name(it));
    if (L->gscratch == NULL) {
        L->gscratch = sim_xcalloc(t->ndevices, sizeof *L->gscratch);
        L->gmark = sim_xcalloc(t->ndevices, sizeof *L->gmark);
    }
    /* a device listed twice: its mark is this group's stamp (a scan of the
     * devices before it was a quarter of loading a 16,384-GPU step, whose
     * data-parallel groups list 2,048 devices) */
    if (++L->gstamp == 0) {     /* wrapped: the marks start again */
        memset(L->gmark, 0, t->ndevices * sizeof *L->gmark);
        L->gstamp = 1;
    }
    const uint32_t *last = NULL;
    uint32_t nlast = 0;
    if (L->glast_plus1 != 0) {
        const struct trace_group *g = &t->groups[L->glast_plus1 - 1];
        last = t->group_dev + g->off;
        nlast = g->n;
    }
    *same = last != NULL;
    uint32_t n = 0;
    for (const cJSON *c = it->child; c != NULL; c = c->next) {
        const char *s = cJSON_IsString(c) ? c->valuestring : NULL;
        uint32_t dev;
        if (*same && n < nlast && s != NULL && strcmp(s, t->devices[last[n]]) == 0) {
            dev = last[n];      /* a device's name: no need to check it is a good string */
        } else {
            if (jsondoc_get_string(L->doc, c, L->prefix, key, SIZE_MAX, &s, L->d))
                return -1;
            *same = 0;
            if (tload_dev_find(L, c, key, s, &dev))
                return -1;
        }
        if (L->gmark[dev] == L->gstamp)
            return tload_err(L, DIAG_E_DUPLICATE, c, 0, key,
                             "device \"%.40s\" is listed twice", s);
        if (n == t->ndevices) /* cannot happen: distinct and known */
            return tload_err(L, DIAG_E_RANGE, c, 0, key, "more devices than the trace has");
        L->gmark[dev] = L->gstamp;
        L->gscratch[n++] = dev;
    }
    if (n < 2)
        return tload_err(L, DIAG_E_RANGE, it, 0, key,
                         "a collective needs a group of at least two devices, got %u", n);
    return n;
}

/* Room in L->ghash for one more group: grown and rehashed when needed. */
static void group_hash_room(struct tload *L)
{
    struct trace *t = L->t;
    if (L->ghash_cap > 2 * (t->ngroups + 1))
        return;
    uint32_t cap = L->ghash_cap ? 2 * L->ghash_cap : 64;
    uint32_t *nh = sim_xcalloc(cap, sizeof *nh);
    for (uint32_t g = 0; g < t->ngroups; g++) {
        uint64_t k = group_hash(t->group_dev + t->groups[g].off, t->groups[g].n) & (cap - 1);
        while (nh[k] != 0)
            k = (k + 1) & (cap - 1);
        nh[k] = g + 1;
    }
    free(L->ghash);
    L->ghash = nh;
    L->ghash_cap = cap;
}

/* A device list into t->groups (an entry already there if equal). */
static int group_intern(struct tload *L, const cJSON *it, uint32_t *out)
{
    struct trace *t = L->t;
    int same = 0;
    int64_t got = group_read(L, it, "group",
                             L->nnamed > 0 ? " or the name of an entry of \"groups\"" : "", &same);
    if (got < 0)
        return -1;
    uint32_t n = (uint32_t)got;
    if (same && n == t->groups[L->glast_plus1 - 1].n) {
        *out = L->glast_plus1 - 1;
        return 0;
    }
    uint64_t h = group_hash(L->gscratch, n);
    group_hash_room(L);
    uint64_t k = h & (L->ghash_cap - 1);
    for (; L->ghash[k] != 0; k = (k + 1) & (L->ghash_cap - 1)) {
        const struct trace_group *g = &t->groups[L->ghash[k] - 1];
        if (g->n == n && memcmp(t->group_dev + g->off, L->gscratch, n * sizeof *L->gscratch) == 0) {
            *out = L->ghash[k] - 1;
            L->glast_plus1 = *out + 1;
            return 0;
        }
    }
    if (t->ngroups == L->gcap) {
        L->gcap = L->gcap ? 2 * L->gcap : 16;
        t->groups = sim_xrealloc(t->groups, L->gcap * sizeof *t->groups);
    }
    uint32_t used = t->ngroups ? t->groups[t->ngroups - 1].off + t->groups[t->ngroups - 1].n : 0;
    if ((uint64_t)used + n > UINT32_MAX / 2)
        return tload_err(L, DIAG_E_RANGE, it, 0, "group", "the trace's groups list too many devices");
    if (used + n > L->gdcap) {
        while (used + n > L->gdcap)
            L->gdcap = L->gdcap ? 2 * L->gdcap : 64;
        t->group_dev = sim_xrealloc(t->group_dev, L->gdcap * sizeof *t->group_dev);
    }
    memcpy(t->group_dev + used, L->gscratch, n * sizeof *L->gscratch);
    t->groups[t->ngroups].off = used;
    t->groups[t->ngroups].n = n;
    L->ghash[k] = t->ngroups + 1;
    L->glast_plus1 = t->ngroups + 1;
    *out = t->ngroups++;
    return 0;
}

int tload_dev_named_list(struct tload *L, const cJSON *groups)
{
    if (groups == NULL)
        return 0;
    L->prefix[0] = '\0';
    if (!cJSON_IsObject(groups))
        return tload_err(L, DIAG_E_TYPE, groups, 0, "groups",
                         "must be an object of named device lists like {\"dp\": [\"gpu0\", "
                         "\"gpu1\"]}, got %s", jsondoc_type_name(groups));
    if (jsondoc_check_unique(L->doc, groups, "groups", L->d))
        return -1;
    uint32_t n = 0;
    for (const cJSON *c = groups->child; c != NULL && n <= TRACE_OPS_CAP; c = c->next)
        n++;
    if (n > TRACE_OPS_CAP)
        return tload_err(L, DIAG_E_RANGE, groups, 0, "groups", "names more than 50000000 groups");
    if (n == 0)
        return 0;
    L->named = sim_xcalloc(n, sizeof *L->named);
    nameidx_init(&L->namedidx, n, L->named[0].name, sizeof *L->named);
    snprintf(L->prefix, sizeof L->prefix, "groups");
    for (const cJSON *c = groups->child; c != NULL; c = c->next) {
        const char *name = c->string ? c->string : "";
        if (name[0] == '\0' || strlen(name) >= TRACE_DEVICE_MAX) {
            L->prefix[0] = '\0';
            return tload_err(L, DIAG_E_RANGE, c, 0, "groups",
                             "a group's name must be 1 to %d bytes, got \"%.40s\"",
                             TRACE_DEVICE_MAX - 1, name);
        }
        /* every list checked now, used or not; put in t->groups by the
         * first op that names it, as a list given in the op would be */
        int same;
        if (group_read(L, c, name, "", &same) < 0)
            return -1;
        struct tload_named *e = &L->named[L->nnamed];
        memcpy(e->name, name, strlen(name) + 1);
        e->list = c;
        nameidx_add(&L->namedidx, L->nnamed++);   /* names are unique (checked above) */
    }
    L->prefix[0] = '\0';
    return 0;
}

int tload_dev_group(struct tload *L, const cJSON *it, uint32_t *out)
{
    if (!cJSON_IsString(it))
        return group_intern(L, it, out);
    const char *name = it->valuestring;
    int64_t k = L->nnamed > 0 ? nameidx_find(&L->namedidx, name) : -1;
    if (k < 0) {
        char known[256], msg[400];
        if (L->nnamed == 0)
            snprintf(msg, sizeof msg, "must be a list of device names like [\"gpu0\", \"gpu1\"], "
                     "or the name of an entry of the top-level \"groups\" (this trace has none), "
                     "got \"%.40s\"", name);
        else
            snprintf(msg, sizeof msg, "unknown group \"%.40s\" (groups: %s)", name,
                     tload_name_list(L->named[0].name, sizeof *L->named, L->nnamed, known,
                                     sizeof known));
        return tload_err(L, DIAG_E_UNKNOWN_NAME, it, 0, "group", "%s", msg);
    }
    struct tload_named *e = &L->named[k];
    if (e->g_plus1 != 0) {
        *out = e->g_plus1 - 1;
        return 0;
    }
    if (group_intern(L, e->list, out))
        return -1;
    e->g_plus1 = *out + 1;
    return 0;
}
