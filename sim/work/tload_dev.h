/* tload_dev.h: the trace loader's devices: the top-level "devices" list,
 * device names in op fields, and a collective's "group" (private to the
 * trace loader, see tload.h). */
#ifndef STRATA_TLOAD_DEV_H
#define STRATA_TLOAD_DEV_H

#include <stdint.h>

#include "tload.h"

/* The top-level "devices" (NULL: absent, one device "gpu0") into t->devices
 * and L->devs.  0 or -1. */
int tload_dev_list(struct tload *L, const cJSON *devs);
/* The trace device named s (item `at`, field key): 0, or -1 after an error
 * that lists the devices. */
int tload_dev_find(struct tload *L, const cJSON *at, const char *key, const char *s,
                   uint32_t *out);
/* The top-level "groups" (NULL: absent): named device lists, each checked
 * as an op's "group" would be, into L->named.  0 or -1. */
int tload_dev_named_list(struct tload *L, const cJSON *groups);
/* A collective's "group": a list of at least two distinct devices of the
 * trace, in rank order, or the name of an entry of the top-level "groups".
 * Equal lists share one entry of t->groups, whose index goes to *out.
 * 0 or -1. */
int tload_dev_group(struct tload *L, const cJSON *it, uint32_t *out);

#endif
