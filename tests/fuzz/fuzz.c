/* fuzz.c: libFuzzer targets, one per loader (scripts/fuzz.sh builds and
 * runs them; docs/fuzzing.md).  The same file is compiled once per target
 * with FUZZ_TARGET naming it:
 *   cfg      chip configs and system files (hw_load)
 *   trace    strata trace JSON (trace_load)
 *   model    Hugging Face config.json (llm_config_load)
 *   csv      measurement CSVs (validate_run; rows that parse are simulated)
 *   scalesim a SCALE-Sim .cfg and topology, split at a line "%%"
 *   pytorch  Kineto traces and PyTorch execution traces (import_pytorch)
 *   chakra   Chakra JSON (import_chakra)
 *   report   a saved report for `strata plot` (plot_render_ex)
 *   spec     a new-chip spec file (spec_load)
 *   overlay  an override overlay (cfg_sets_load_overlay)
 * Each input goes to the loader as a file (a memfd, read through
 * /proc/self/fd), the way the command line gives it.  A loader may refuse
 * the input; it must not crash, leak, hang or read out of bounds. */
#define _GNU_SOURCE
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include "cfg.h"
#include "import.h"
#include "llm.h"
#include "plot.h"
#include "scalesim.h"
#include "spec.h"
#include "system.h"
#include "trace.h"
#include "validate.h"

#ifndef FUZZ_TARGET
#error "FUZZ_TARGET names the loader (see the comment at the top)"
#endif
#define FUZZ_IS_(a, b) (strcmp(a, b) == 0)

/* A memfd holding n bytes of data; its path in path. -1 if none. */
static int as_file(const uint8_t *data, size_t n, char *path, size_t pn)
{
    int fd = memfd_create("strata-fuzz", 0);
    if (fd < 0)
        return -1;
    size_t done = 0;
    while (done < n) {
        ssize_t w = write(fd, data + done, n - done);
        if (w <= 0) {
            close(fd);
            return -1;
        }
        done += (size_t)w;
    }
    snprintf(path, pn, "/proc/self/fd/%d", fd);
    return fd;
}

int LLVMFuzzerInitialize(int *argc, char ***argv);
int LLVMFuzzerInitialize(int *argc, char ***argv)
{
    (void)argc;
    (void)argv;
    /* CSV rows name configs/ and models relative to the source tree */
    if (chdir(STRATA_SOURCE_DIR) != 0)
        abort();
    setenv("STRATA_GNUPLOT", "none", 1);
    /* one input simulates at most 500k engine events (the work budget, which
     * stops the run with an error): a validation row as large as MaxText's
     * TPU training steps (50M events) would otherwise take the input's
     * whole time limit */
    setenv("STRATA_MAX_EVENTS", "500000", 1);
    return 0;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);
int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    char path[64], path2[64];
    struct diag d;
    memset(&d, 0, sizeof d);
    const char *t = FUZZ_TARGET;
    if (FUZZ_IS_(t, "scalesim")) {
        /* "cfg %% topology": both files from one input */
        const uint8_t *sep = NULL;
        for (size_t i = 0; i + 2 < size; i++)
            if (data[i] == '%' && data[i + 1] == '%' && data[i + 2] == '\n') {
                sep = data + i;
                break;
            }
        if (sep == NULL)
            return 0;
        int a = as_file(data, (size_t)(sep - data), path, sizeof path);
        int b = as_file(sep + 3, size - (size_t)(sep + 3 - data), path2, sizeof path2);
        if (a >= 0 && b >= 0)
            (void)scalesim_run(path, path2, size > 0 && (data[0] & 1), NULL, 1, 1e6, &d);
        if (a >= 0)
            close(a);
        if (b >= 0)
            close(b);
        return 0;
    }
    int fd = as_file(data, size, path, sizeof path);
    if (fd < 0)
        return 0;
    if (FUZZ_IS_(t, "cfg")) {
        struct hw_system s;
        enum hw_kind kind;
        if (hw_load(path, NULL, &s, &kind, &d) == 0)
            sys_free(&s);
    } else if (FUZZ_IS_(t, "trace")) {
        struct trace tr;
        if (trace_load(path, &tr, &d) == 0)
            trace_free(&tr);
    } else if (FUZZ_IS_(t, "model")) {
        struct llm_config c;
        (void)llm_config_load(path, &c, &d);
    } else if (FUZZ_IS_(t, "csv")) {
        struct validate_opts vo = {.data = path, .configs = "configs", .root = "."};
        struct validate_result r;
        if (validate_run(&vo, &r, &d) == 0)
            validate_free(&r);
    } else if (FUZZ_IS_(t, "pytorch") || FUZZ_IS_(t, "chakra")) {
        struct trace tr;
        struct import_stats st;
        int rc = FUZZ_IS_(t, "pytorch") ? import_pytorch(path, &tr, &st, &d)
                                       : import_chakra(path, &tr, &st, &d);
        if (rc == 0)
            trace_free(&tr);
    } else if (FUZZ_IS_(t, "report")) {
        char out[64];
        snprintf(out, sizeof out, "/tmp/strata-fuzz-plot-%d", (int)getpid());
        (void)plot_render_ex(path, out, NULL, &d);
    } else if (FUZZ_IS_(t, "spec")) {
        static struct spec s;
        (void)spec_load(path, &s, &d);
    } else if (FUZZ_IS_(t, "overlay")) {
        struct cfg_sets s;
        memset(&s, 0, sizeof s);
        if (cfg_sets_load_overlay(&s, path, &d) == 0) {
            struct hw_system c;
            (void)hw_load("configs/nvidia-h100-sxm.yaml", &s, &c, NULL, &d);
        }
    } else {
        abort(); /* an unknown target name */
    }
    close(fd);
    return 0;
}
