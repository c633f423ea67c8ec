/* progress.h: the one progress line of a long command, on stderr.
 *
 * A command that may run for long (run, its what-ifs, sweep) shows, once
 * PROG_AFTER_S of wall time have passed since prog_init and only when
 * stderr is a terminal, one line that it rewrites in place ("\r") at most
 * every PROG_EVERY_S:
 *     "  simulating: 412,000 of 1,000,000 ops (41%), 3.1 s"
 * and clears ("\r", spaces, "\r") before anything else is printed.  A
 * shorter run, a --quiet one, or one whose stderr is a file or a pipe
 * prints nothing, so outputs and tests are the same with or without it.
 * $STRATA_PROGRESS=1 draws it whatever stderr is and from the start (for
 * tests), =0 never.
 *
 * What it costs the simulation: the engine calls its tick every 65536
 * events (engine.h), where it already checks the memory budget; a tick
 * reads the clock once.
 *
 * Not thread-safe: one thread (a command's main one) draws and clears a
 * struct prog; a sweep's workers only count, its main thread draws.
 */
#ifndef STRATA_PROGRESS_H
#define STRATA_PROGRESS_H

#include <stdint.h>

#define PROG_AFTER_S 2.0        /* nothing is drawn before this much wall time */
#define PROG_EVERY_S 0.2        /* at most one redraw in this much */

struct prog {
    int on;                     /* drawing allowed (a terminal, or forced) */
    double t0_s;                /* prog_init's time, monotonic, s */
    double after_s;             /* draw from t0_s + after_s on */
    double last_s;              /* the last draw's time; < 0: none yet */
    int width;                  /* characters of the line on screen; 0: none */
    const char *what;           /* the line's label ("simulating"); static text */
};

/* want: the command allows it (not --quiet, not --no-progress).  Decides
 * from $STRATA_PROGRESS and whether stderr is a terminal. */
void prog_init(struct prog *p, int want, const char *what);
/* Draws "  WHAT: DONE of TOTAL UNIT (P%), E s[, ~L s left]" when due (eta:
 * add the time left at the rate so far).  p may be NULL (nothing). */
void prog_show(struct prog *p, uint64_t done, uint64_t total, const char *unit, int eta);
/* Wipes the line if one is on screen; a later prog_show draws it again. */
void prog_clear(struct prog *p);

#endif
