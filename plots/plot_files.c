/* plot_files.c: the all-or-nothing file set of one rendering (plot_files.h). */
#include "plot_files.h"

#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "afile.h"

int pfiles_put(struct pfiles *w, const char *path, const char *text, size_t len, struct diag *d)
{
    struct afile a;
    if (afile_open(&a, path, d) != 0)
        return -1;
    fwrite(text, 1, len, a.f);
    if (afile_commit(&a, d) != 0)
        return -1;
    pfiles_note(w, path);
    return 0;
}

void pfiles_note(struct pfiles *w, const char *path)
{
    if (w->n < 16)
        snprintf(w->path[w->n++], sizeof w->path[0], "%s", path);
}

void pfiles_undo(struct pfiles *w)
{
    for (int i = w->n - 1; i >= 0; i--)
        remove(w->path[i]);
    if (w->made_plots_dir)
        rmdir(w->plots_dir);
    if (w->made_outdir)
        rmdir(w->outdir);
    w->n = 0;
}

int pfiles_ensure_dir(const char *dir, int *made, struct diag *d)
{
    struct stat st;
    *made = 0;
    if (stat(dir, &st) == 0) {
        if (S_ISDIR(st.st_mode))
            return 0;
        return diag_set(d, DIAG_E_IO, dir, 0, "", "exists and is not a folder");
    }
    if (mkdir(dir, 0755) != 0)
        return diag_set(d, DIAG_E_IO, dir, 0, "", "cannot create the folder: %s", strerror(errno));
    *made = 1;
    return 0;
}
