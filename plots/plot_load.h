/* plot_load.h: what the plots and the page draw, read from a saved report
 * (docs/report.md) or taken straight from a run (plot.h, plot_render_run).
 *
 * pload_report() checks the report's header, reads its summary, its levels
 * and ops, orders the ops slowest first and groups them for the stall plot,
 * and keeps pointers into the report's tree for hardware_derived,
 * timeseries and whatif: the tree must outlive the struct pdata.  Numbers
 * are read as the report's writer stores them: a JSON number or, in a tree
 * built in memory (sim/out/report_json.c), a raw number whose value is in
 * valuedouble too.
 */
#ifndef STRATA_PLOT_LOAD_H
#define STRATA_PLOT_LOAD_H

#include <cjson/cJSON.h>
#include <stdint.h>

#include "diag.h"
#include "jsondoc.h"
#include "cfg.h"

#define PLOAD_NLVL HW_MAX_LEVELS /* levels a report may name */
#define PLOAD_NCATMAX (3 + PLOAD_NLVL)
/* a report's peak FLOP/s and bandwidths (B/s) must lie in this range: the
 * roofline's log axes are drawn around them */
#define PLOAD_MIN_RATE 1.0
#define PLOAD_MAX_RATE 1e30

struct report_ctx;

struct pop {
    const char *name, *kind, *bound, *tile, *dtype;
    const char *device;         /* the trace device it ran on ("" when the report has none) */
    double time, flops, busy, launch, measured;
    double energy;              /* J (its "energy_J"; 0 in a report without energy) */
    double bytes[PLOAD_NLVL], stall[PLOAD_NLVL];
};

/* Ops whose names differ only in numbers (L0.qkv_proj, L1.qkv_proj, ...)
 * form one group in the stall plot, so a 32-layer model shows 10 bars of
 * 32 ops instead of 20 near-identical ones. */
struct pgroup {
    char name[100];             /* the name with each digit run replaced by '#' */
    uint32_t count;
    double time;
    double cat[PLOAD_NCATMAX];
};

struct pdata {
    const char *hw_name, *trace_path;
    const char *sys_name;       /* hardware.system.name, "" on a chip config */
    unsigned ndev;              /* devices with ops of their own (report "devices", no mirrors), >= 1 */
    double total, tokens_per_s, flops, busy, launch, idle;
    int have_energy;            /* the report has "energy_J" (a chip with a power block) */
    double energy;              /* its total, J */
    double bytes[PLOAD_NLVL], stall[PLOAD_NLVL];
    double stall_lat[PLOAD_NLVL];   /* of stall[], the level below its rate (0 in older reports) */
    /* the levels the report names (its "bytes" keys, in order) */
    unsigned nlvl;
    char lvl[PLOAD_NLVL][HW_LEVEL_NAME];
    int lvl_dram, lvl_l2;       /* the DRAM and the first cache, -1 if unknown */
    unsigned char lvl_link[PLOAD_NLVL]; /* a link level (hardware_derived kind "link") */
    uint32_t nops;
    struct pop *ops;            /* a report's ops (NULL for a run's: see pload_op) */
    const struct report_ctx *run; /* the run whose ops these are, or NULL */
    const char **body_bound;    /* a run's: each result body's bound and energy, made once */
    double *body_energy;
    uint32_t *order;            /* op indices, slowest first */
    struct pgroup *groups;      /* slowest first */
    uint32_t ngroups;
    /* hardware_derived (0 when absent) */
    int have_hw;
    double peak;                /* matrix peak of the roofline's dtype */
    char peak_dtype[16];
    double bw[PLOAD_NLVL];
    const cJSON *hwd;
    /* timeseries of the first device */
    double bucket_s;
    const cJSON *ts_dev;
    const char *ts_dev_name;
    const cJSON *whatif;
    const cJSON *devices;       /* the report's "devices" array, or NULL */
};

/* Fills *p from doc's report; with run set, the ops are run's (doc is then
 * report_json_head()'s tree, its "ops" empty).  0, or -1 with *d (the
 * errors plot.h lists); either way pload_free(p) releases what it holds. */
int pload_report(const struct jsondoc *doc, const struct report_ctx *run, struct pdata *p,
                 struct diag *d);
void pload_free(struct pdata *p);

/* Op i: a report's from its array; a run's made from the run when asked
 * for, in *buf.  The pointer is good until buf is used again. */
const struct pop *pload_op(const struct pdata *p, uint32_t i, struct pop *buf);

/* A number item's value (a JSON number or a raw number), else 0. */
double pload_num(const cJSON *it);
/* Member k of o as a number (0 when absent) or a string ("" when absent). */
double pload_jnum(const cJSON *o, const char *k);
const char *pload_jstr(const cJSON *o, const char *k);
/* Member k of o, an object keyed by level name: one value per level of p. */
void pload_levels(const struct pdata *p, const cJSON *o, const char *k, double *v);

/* Time categories: busy, launch, measured (ops that ran for their measured
 * time, not simulated), then waiting on each level. */
#define PLOAD_NCAT(p) ((int)(3 + (p)->nlvl))
const char *pload_cat_name(const struct pdata *p, int c);

/* The workload's name: the trace file's base name. */
const char *pload_workload(const struct pdata *p);
/* Buckets of level l in the first device's timeseries (0 without). */
int pload_ts_len(const struct pdata *p, unsigned l);
/* FNV-1a of a string: the hash of the op groups' and the roofline points' tables. */
uint64_t pload_hash(const char *s);

/* A compute roof: a pipe at a dtype the run used. */
struct pload_roof {
    char label[64];
    double peak;
};
/* The roofs of the pipes and dtypes the ops used (at most max), else the
 * matrix peak's; how many. */
int pload_roofs(const struct pdata *p, struct pload_roof *r, int max);

#endif
