/* plot_gnuplot_run.c: gnuplot found and run, one process per script, side
 * by side, each under a time limit (plot_gnuplot_run.h). */
#include "plot_gnuplot_run.h"

#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <sys/wait.h>
#include <unistd.h>

/* gnuplot binary: $STRATA_GNUPLOT ("" or "none" = never), else PATH lookup */
int gprun_find(char *out, size_t n)
{
    const char *env = getenv("STRATA_GNUPLOT");
    if (env != NULL) {
        if (env[0] == '\0' || strcmp(env, "none") == 0)
            return 0;
        snprintf(out, n, "%s", env);
        return access(out, X_OK) == 0;
    }
    const char *path = getenv("PATH");
    static const char *const names[] = {"gnuplot", "gnuplot-nox"};
    for (size_t k = 0; k < 2; k++) {
        const char *s = path ? path : "/usr/bin:/bin";
        while (*s) {
            size_t len = strcspn(s, ":");
            snprintf(out, n, "%.*s/%s", (int)len, s, names[k]);
            if (len > 0 && access(out, X_OK) == 0)
                return 1;
            s += len;
            if (*s == ':')
                s++;
        }
    }
    out[0] = '\0';
    return 0;
}

/* Render each names[k].gp in dir that have[k] marks, all at once (one
 * gnuplot process per plot, run side by side: most of their time is
 * gnuplot starting up).  PNG and SVG land next to the scripts; ok[k] says
 * which rendered.  Each process leads its own process group, and whatever
 * is still running after GPRUN_TIMEOUT_S is killed with its
 * children.  The path is passed as it is, no shell. */
void gprun_scripts(const char *gnuplot, const char *dir, const char *const *names,
                   const int *have, int n, int *ok)
{
    enum { MAXP = 3 };
    pid_t pid[MAXP] = {-1, -1, -1};
    int done[MAXP] = {1, 1, 1};
    for (int k = 0; k < n && k < MAXP; k++) {
        ok[k] = 0;
        char script[1100];
        if (!have[k] || snprintf(script, sizeof script, "%s.gp", names[k]) >= (int)sizeof script)
            continue;
        fflush(NULL);
        pid[k] = fork();
        if (pid[k] == 0) {
            setpgid(0, 0);
            int fd = open("/dev/null", O_WRONLY);
            if (fd >= 0) {
                dup2(fd, 1);
                dup2(fd, 2);
                close(fd);
            }
            if (chdir(dir) != 0)
                _exit(127);
            execl(gnuplot, gnuplot, script, (char *)NULL);
            _exit(127);
        }
        if (pid[k] > 0) {
            setpgid(pid[k], pid[k]); /* also here: no race with the kill below */
            done[k] = 0;
        }
    }
    struct timespec t0, now, nap = {0, 2000000}; /* poll every 2 ms */
    clock_gettime(CLOCK_MONOTONIC, &t0);
    for (;;) {
        int left = 0;
        for (int k = 0; k < n && k < MAXP; k++) {
            if (done[k])
                continue;
            int st = 0;
            pid_t w = waitpid(pid[k], &st, WNOHANG);
            if (w == pid[k]) {
                done[k] = 1;
                ok[k] = WIFEXITED(st) && WEXITSTATUS(st) == 0;
            } else if (w < 0 && errno != EINTR) {
                done[k] = 1; /* not ours to wait for (SIGCHLD ignored): not known to have worked */
            } else {
                left++;
            }
        }
        if (left == 0)
            break;
        clock_gettime(CLOCK_MONOTONIC, &now);
        double waited = (double)(now.tv_sec - t0.tv_sec) + (now.tv_nsec - t0.tv_nsec) * 1e-9;
        if (waited >= GPRUN_TIMEOUT_S) {
            for (int k = 0; k < n && k < MAXP; k++)
                if (!done[k]) {
                    kill(-pid[k], SIGKILL);
                    while (waitpid(pid[k], NULL, 0) < 0 && errno == EINTR)
                        ;
                    done[k] = 1;
                }
            break;
        }
        nanosleep(&nap, NULL);
    }
}
