/* test_unit_membudget.c: the memory budget (issue 17).  A simulation that
 * passes it stops with a diagnostic naming the limit and how to raise it,
 * at its start or part way (the engine checks every 65536 events); a large
 * allocation that would pass it stops the process with exit status 1,
 * after removing the staged output files and running the registered
 * cleanups, so nothing half-written is left. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "afile.h"
#include "check.h"
#include "engine.h"
#include "membudget.h"
#include "run.h"
#include "test.h"
#include "util.h"

static char marker[128];

/* An endless component: one event after another; at its 1000th it touches
 * 16 MiB (a model that grows its state). */
struct ticker {
    uint64_t n;
    char *hog;
};

static void tick(struct engine *e, void *self, const struct eq_event *ev)
{
    struct ticker *tk = self;
    if (++tk->n == 1000) {
        tk->hog = malloc((size_t)16 << 20);
        if (tk->hog != NULL)
            memset(tk->hog, 1, (size_t)16 << 20);
    }
    engine_after(e, 1, ev->comp, 0, 0, NULL);
}

static const struct comp_ops ticker_ops = {"ticker", tick};

static void note_cleanup(void *arg)
{
    tu_write_file(marker, (const char *)arg);
}

int main(void)
{
    char dir[64], p[160];
    CHECK(tu_mkdtemp(dir, sizeof dir, "strata-mem") == 0);

    /* sizes as users type them; under 1 MiB or not a size is refused */
    uint64_t b = 0;
    CHECK_EQ_INT(membudget_parse("4GiB", &b), 0);
    CHECK(b == UINT64_C(4) << 30);
    CHECK_EQ_INT(membudget_parse("512MB", &b), 0);
    CHECK(b == UINT64_C(512000000));
    CHECK_EQ_INT(membudget_parse("2000000", &b), 0);
    CHECK(b == UINT64_C(2000000));
    CHECK_EQ_INT(membudget_parse("100KiB", &b), -1);
    CHECK_EQ_INT(membudget_parse("4GB/s", &b), -1);
    CHECK_EQ_INT(membudget_parse("-4GiB", &b), -1);
    CHECK_EQ_INT(membudget_parse("lots", &b), -1);

    /* no limit: never exceeded; a limit under what is resident: exceeded */
    membudget_set_bytes(0);
    CHECK(!membudget_exceeded((size_t)1 << 40));
    CHECK(membudget_peak() > 0);
    membudget_set_bytes(membudget_peak() + ((uint64_t)64 << 20));
    CHECK(!membudget_exceeded(0));
    CHECK(membudget_exceeded((size_t)128 << 20));

    struct hw_config c;
    struct trace t;
    CHECK_EQ_INT(tu_load_cfg("configs/nvidia-h100-sxm.yaml", &c), 0);
    CHECK_EQ_INT(tu_load_trace("traces/examples/llama-2-7b-decode-b1-ctx2048.json", &t), 0);
    struct diag d;
    struct run_result r;

    /* with no limit the run completes */
    membudget_set_bytes(0);
    memset(&d, 0, sizeof d);
    CHECK_EQ_INT(run_trace(&c, &t, &r, &d), 0);
    run_result_free(&r);

    /* over the limit before it starts: a diagnostic, no result */
    membudget_set_bytes(1 << 20);
    memset(&d, 0, sizeof d);
    CHECK_EQ_INT(run_trace(&c, &t, &r, &d), -1);
    CHECK_STR_CONTAINS(d.msg, "memory budget");
    CHECK_STR_CONTAINS(d.msg, "--max-memory");
    CHECK_STR_CONTAINS(d.msg, "STRATA_MAX_MEMORY");
    CHECK_STR_CONTAINS(d.field, "memory");

    /* passed part way: the engine stops at its next check (every 65536
     * events).  A component that reschedules itself touches 16 MiB at its
     * 1000th event; the limit is what was resident before.  In a child:
     * the peak never goes down. */
    pid_t pid = fork();
    if (pid == 0) {
        struct engine e;
        if (engine_init(&e, 16) != 0)
            _exit(6);
        struct ticker tk = {0, NULL};
        uint32_t comp = engine_register(&e, &ticker_ops, &tk);
        engine_after(&e, 1, comp, 0, 0, NULL);
        e.max_events = 10 * 65536;   /* if the check never fired */
        membudget_set_bytes(membudget_peak() + ((uint64_t)4 << 20));
        engine_run(&e);
        int ok = e.over_memory && !e.over_budget && e.events >= 65535 && e.events < 2 * 65536 &&
                 tk.n == e.events;
        _exit(ok ? 0 : 3);
    }
    int st = 0;
    CHECK(pid > 0 && waitpid(pid, &st, 0) == pid && WIFEXITED(st));
    CHECK_EQ_INT(WEXITSTATUS(st), 0);

    /* a large allocation past the limit cannot return: the process exits 1,
     * its staged files removed and its cleanups run (last pushed first) */
    snprintf(marker, sizeof marker, "%s/cleanup-ran", dir);
    snprintf(p, sizeof p, "%s/out.json", dir);
    pid = fork();
    if (pid == 0) {
        struct afile a;
        struct diag d3;
        memset(&d3, 0, sizeof d3);
        if (afile_open(&a, p, &d3) != 0)
            _exit(4);
        fputs("{\"half\": ", a.f);
        fflush(a.f);
        membudget_cleanup_push(note_cleanup, "first");
        membudget_cleanup_push(note_cleanup, "second");
        membudget_set_bytes(membudget_peak() + ((uint64_t)16 << 20));
        void *ok = sim_xcalloc(4 << 20, 1); /* fits */
        free(ok);
        (void)sim_xcalloc((size_t)64 << 20, 1); /* does not: exits 1 */
        _exit(5);
    }
    CHECK(pid > 0 && waitpid(pid, &st, 0) == pid && WIFEXITED(st));
    CHECK_EQ_INT(WEXITSTATUS(st), 1);
    CHECK(!tu_exists(p));
    CHECK_EQ_INT(tu_count_entries(dir), 1);   /* only the marker: no temporary file left */
    char *m = tu_read_file(marker, NULL);
    CHECK(m != NULL && strcmp(m, "first") == 0); /* "second" ran, then "first" */
    free(m);

    membudget_set_bytes(0);
    trace_free(&t);
    tu_rmtree(dir);
    TEST_MAIN_END();
}
