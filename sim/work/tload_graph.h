/* tload_graph.h: the trace loader's checks of the whole trace: deps
 * resolved to op indices (pass 2), the ops put in a topological order (a
 * cycle is an error that names it), and the collectives paired up across
 * their groups; private to the trace loader (see tload.h). */
#ifndef STRATA_TLOAD_GRAPH_H
#define STRATA_TLOAD_GRAPH_H

#include "tload.h"

/* Pass 1 keeps the dep ids of op tree o, so pass 2 needs no tree.  A dep
 * that is not a valid id is kept as "": pass 2 reports it from the op's
 * tree. */
void tload_graph_keep_deps(struct tload *L, const cJSON *o);
/* Pass 2: t->deps (t->ndeps of them, counted by pass 1) filled from the
 * kept ids, with the diagnostic of a dep that names no op, itself or one
 * already listed.  0 or -1. */
int tload_graph_resolve(struct tload *L);
/* Pair up collectives: the k-th op a device issues on a group is its part
 * of the group's k-th collective, and every member must issue as many, of
 * the same collective, size, type, algorithm and root.  Fills t->colls.
 * 0 or -1. */
int tload_graph_colls(struct tload *L);
/* t->topo by Kahn's algorithm, taking the ready op with the lowest file
 * index first so the order is the same on every run; a cycle is an error
 * that names one.  0 or -1. */
int tload_graph_order(struct tload *L);

#endif
