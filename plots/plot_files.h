/* plot_files.h: the files one rendering puts in place, so that a failure
 * can take them all back (plot.h: all or nothing).  Each file is written
 * under a temporary name and renamed (afile); the set remembers what was
 * renamed and which folders it created. */
#ifndef STRATA_PLOT_FILES_H
#define STRATA_PLOT_FILES_H

#include <stddef.h>

#include "diag.h"

/* files this call has put in place, removed again on failure */
struct pfiles {
    char path[16][1200];
    int n;
    int made_plots_dir, made_outdir;
    char plots_dir[1100], outdir[1100];
};

/* Writes text to path atomically and remembers it.  0, or -1 with *d. */
int pfiles_put(struct pfiles *w, const char *path, const char *text, size_t len, struct diag *d);
/* Remembers a file someone else wrote (gnuplot's images). */
void pfiles_note(struct pfiles *w, const char *path);
/* Creates dir unless it is a folder already; *made says whether it was
 * created.  0, or -1 with *d. */
int pfiles_ensure_dir(const char *dir, int *made, struct diag *d);
/* Removes every remembered file, then the folders this set created. */
void pfiles_undo(struct pfiles *w);

#endif
