/* scalesim.h: SCALE-Sim v2 compatible runs of the systolic array model
 * (scalesim.c says what it reads and writes). */
#ifndef STRATA_SCALESIM_H
#define STRATA_SCALESIM_H

#include "diag.h"

/* Runs every layer of the topology CSV topo (gemm: M,N,K rows instead of
 * convolutions) on the array the SCALE-Sim .cfg cfgp describes; with outdir
 * writes outdir/<run_name>/{COMPUTE,BANDWIDTH,DETAILED_ACCESS}_REPORT.csv
 * (all three or none), and unless quiet prints a summary.  In USER mode the
 * layers together may walk at most max_walk units (sa_mem_walk_units; 0 means
 * SA_MEM_WALK_BUDGET).  0, or -1 with *d. */
int scalesim_run(const char *cfgp, const char *topo, int gemm, const char *outdir, int quiet,
                 double max_walk, struct diag *d);

#endif
