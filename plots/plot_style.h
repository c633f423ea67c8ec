/* plot_style.h: the colours every plot and chart shares, gnuplot's and the
 * page's alike: one per memory level, one per time category (busy, launch,
 * measured, then waiting on each level), one per op kind; and how many ops
 * the stall and roofline plots show. */
#ifndef STRATA_PLOT_STYLE_H
#define STRATA_PLOT_STYLE_H

#include "plot_load.h"

#define PSTYLE_TOP_STALLS 20      /* op groups with their own bar in the stall plot */
#define PSTYLE_MAX_ROOF_OPS 200   /* ops placed on the roofline (slowest first) */

extern const char *const pstyle_level_colors[PLOAD_NLVL];
extern const char *const pstyle_cat_colors[PLOAD_NCATMAX];

/* Op kinds get one colour each, in every plot that colours by kind; the
 * last, "other", takes every kind not listed. */
#define PSTYLE_NKINDS 8
extern const char *const pstyle_kind_names[PSTYLE_NKINDS];
extern const char *const pstyle_kind_colors[PSTYLE_NKINDS];
/* A report's kind name as an index of pstyle_kind_names. */
int pstyle_kind_index(const char *kind);

/* A sequential palette for values on one scale (a sweep's heatmap): viridis,
 * perceptually uniform, dark to light, readable in grey and by the common
 * colour-blindnesses; evenly spaced stops from the lowest value to the
 * highest.  Text on a stop from PSTYLE_SEQ_LIGHT on is dark, below it white. */
#define PSTYLE_SEQ_N 9
#define PSTYLE_SEQ_LIGHT 0.6
extern const char *const pstyle_seq_colors[PSTYLE_SEQ_N];

/* A name for a gnuplot legend or title (the terminals are noenhanced, so
 * '_' and '.' stay as they are): text without its quotes and backslashes,
 * which could end the script's string, into out[n]. */
void pstyle_plain(char *out, size_t n, const char *text);

#endif
