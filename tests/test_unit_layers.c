/* test_unit_layers.c: the source tree's folders are layers and includes
 * only point down (STYLE.md "Layers you can see in the tree").
 *
 * Scans every .c and .h under sim/ (one level of layer folders), models/
 * and plots/, and the folders inside a layer's folder that belong to it
 * (models/tiled/, sim/work/import/: built into that layer's library, see
 * strata_layer_part in CMakeLists.txt), for #include "..." lines, maps
 * each included header to the folder that holds it, and fails on
 *   - an include of a header no scanned folder holds (or two folders hold),
 *   - an include that points up: the includer's layer ranks below the
 *     header's, in the order base < engine < hw < work < models < run <
 *     study < out < plots < cli,
 *   - a cycle among files (a header that, through its includes, includes
 *     itself).
 * CMake builds each layer with only the include directories below it, so
 * the compiler catches most of this too; the test also catches headers
 * included without linking (and cycles within a layer), and says what it
 * checked.  Includes of tests' own headers are not scanned (tests/ is not
 * a layer). */
#include <dirent.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "test.h"

#define MAX_FILES 512
#define MAX_INCS 64

static const char *const layers[] = {
    "sim/base", "sim/engine", "sim/hw", "sim/work", "models", "sim/run", "sim/study", "sim/out", "plots", "sim/cli",
};
enum { NLAYERS = sizeof layers / sizeof layers[0] };

/* The folders scanned, each with its layer (an index into layers[]). */
static const struct {
    const char *dir;
    int layer;
} folders[] = {
    {"sim/base", 0}, {"sim/engine", 1}, {"sim/hw", 2},  {"sim/work", 3}, {"sim/work/import", 3},
    {"models", 4},   {"models/tiled", 4}, {"sim/run", 5}, {"sim/study", 6}, {"sim/out", 7},
    {"plots", 8},    {"sim/cli", 9},
};
enum { NFOLDERS = sizeof folders / sizeof folders[0] };

struct file {
    char name[256];             /* base name, e.g. "record.h" */
    char path[512];             /* relative to the source root */
    int layer;                  /* index into layers[] */
    int ninc;
    int inc[MAX_INCS];          /* indices of the headers it includes */
    char incname[MAX_INCS][64]; /* as written */
    int mark;                   /* DFS: 0 new, 1 on the stack, 2 done */
};

static struct file files[MAX_FILES];
static int nfiles;

static int ends_with(const char *s, const char *suf)
{
    size_t n = strlen(s), m = strlen(suf);
    return n >= m && strcmp(s + n - m, suf) == 0;
}

static void scan_folder(int folder)
{
    int layer = folders[folder].layer;
    char dir[4200];
    snprintf(dir, sizeof dir, "%s/%s", STRATA_SOURCE_DIR, folders[folder].dir);
    DIR *d = opendir(dir);
    if (d == NULL) {
        fprintf(stderr, "cannot open %s\n", dir);
        CHECK(!"layer folder exists");
        return;
    }
    struct dirent *e;
    while ((e = readdir(d)) != NULL) {
        if (!ends_with(e->d_name, ".c") && !ends_with(e->d_name, ".h"))
            continue;
        if (nfiles == MAX_FILES) {
            CHECK(!"too many files");
            break;
        }
        struct file *f = &files[nfiles++];
        memset(f, 0, sizeof *f);
        snprintf(f->name, sizeof f->name, "%s", e->d_name);
        snprintf(f->path, sizeof f->path, "%s/%s", folders[folder].dir, e->d_name);
        f->layer = layer;
    }
    closedir(d);
}

/* Reads the #include "..." lines of f (names only; resolved later). */
static void read_includes(struct file *f)
{
    char path[4700], line[1024];
    snprintf(path, sizeof path, "%s/%s", STRATA_SOURCE_DIR, f->path);
    FILE *in = fopen(path, "r");
    CHECK(in != NULL);
    if (in == NULL)
        return;
    while (fgets(line, sizeof line, in) != NULL) {
        const char *p = line;
        while (*p == ' ' || *p == '\t')
            p++;
        if (*p != '#')
            continue;
        p++;
        while (*p == ' ' || *p == '\t')
            p++;
        if (strncmp(p, "include", 7) != 0)
            continue;
        p += 7;
        while (*p == ' ' || *p == '\t')
            p++;
        if (*p != '"')
            continue; /* <system> header */
        const char *q = strchr(p + 1, '"');
        if (q == NULL || q - p - 1 <= 0 || (size_t)(q - p - 1) >= sizeof f->incname[0] ||
            f->ninc == MAX_INCS) {
            fprintf(stderr, "%s: unreadable include: %s", f->path, line);
            CHECK(!"include readable");
            continue;
        }
        memcpy(f->incname[f->ninc], p + 1, (size_t)(q - p - 1));
        f->incname[f->ninc][q - p - 1] = '\0';
        f->ninc++;
    }
    fclose(in);
}

static int find_header(const char *name)
{
    int found = -1;
    for (int i = 0; i < nfiles; i++)
        if (ends_with(files[i].name, ".h") && strcmp(files[i].name, name) == 0) {
            if (found >= 0) {
                fprintf(stderr, "%s and %s: two headers of one name (the include path is flat)\n",
                        files[found].path, files[i].path);
                return -2;
            }
            found = i;
        }
    return found;
}

static int ncycles;

/* DFS over headers; prints the cycle through the stack when one closes. */
static void visit(int i, int *stack, int depth)
{
    struct file *f = &files[i];
    f->mark = 1;
    stack[depth] = i;
    for (int k = 0; k < f->ninc; k++) {
        int j = f->inc[k];
        if (j < 0)
            continue;
        if (files[j].mark == 1) {
            ncycles++;
            fprintf(stderr, "include cycle:");
            int s = depth;
            while (s > 0 && stack[s] != j)
                s--;
            for (; s <= depth; s++)
                fprintf(stderr, " %s ->", files[stack[s]].path);
            fprintf(stderr, " %s\n", files[j].path);
        } else if (files[j].mark == 0) {
            visit(j, stack, depth + 1);
        }
    }
    f->mark = 2;
}

/* A source file straight under sim/ would belong to no layer. */
static int loose_files(void)
{
    char dir[4200];
    snprintf(dir, sizeof dir, "%s/sim", STRATA_SOURCE_DIR);
    DIR *d = opendir(dir);
    CHECK(d != NULL);
    if (d == NULL)
        return 0;
    int n = 0;
    struct dirent *e;
    while ((e = readdir(d)) != NULL)
        if (ends_with(e->d_name, ".c") || ends_with(e->d_name, ".h")) {
            fprintf(stderr, "sim/%s is in no layer folder\n", e->d_name);
            n++;
        }
    closedir(d);
    return n;
}

int main(void)
{
    CHECK_EQ_INT(loose_files(), 0);
    for (int l = 0; l < NFOLDERS; l++)
        scan_folder(l);
    int nincs = 0, nup = 0, nunknown = 0;
    int per_layer[NLAYERS] = {0};
    for (int i = 0; i < nfiles; i++) {
        struct file *f = &files[i];
        per_layer[f->layer]++;
        read_includes(f);
        for (int k = 0; k < f->ninc; k++) {
            int j = find_header(f->incname[k]);
            f->inc[k] = j < 0 ? -1 : j;
            nincs++;
            if (j < 0) {
                nunknown++;
                fprintf(stderr, "%s includes \"%s\": %s\n", f->path, f->incname[k],
                        j == -2 ? "two layer folders hold it" : "no layer folder holds it");
                continue;
            }
            if (files[j].layer > f->layer) {
                nup++;
                fprintf(stderr, "%s (layer %s) includes %s (layer %s): an include that points up\n",
                        f->path, layers[f->layer], files[j].path, layers[files[j].layer]);
            }
        }
    }
    int stack[MAX_FILES];
    for (int i = 0; i < nfiles; i++)
        if (files[i].mark == 0)
            visit(i, stack, 0);
    printf("layers, lowest first:");
    for (int l = 0; l < NLAYERS; l++)
        printf(" %s (%d files)%s", layers[l], per_layer[l], l + 1 < NLAYERS ? " <" : "\n");
    printf("checked %d files, %d #include \"...\" lines: %d point up, %d unresolved, %d cycles\n",
           nfiles, nincs, nup, nunknown, ncycles);
    CHECK(nfiles > 50);
    CHECK(nincs > 100);
    CHECK_EQ_INT(nup, 0);
    CHECK_EQ_INT(nunknown, 0);
    CHECK_EQ_INT(ncycles, 0);
    /* no library file reaches the CLI header */
    for (int i = 0; i < nfiles; i++)
        for (int k = 0; k < files[i].ninc; k++)
            if (strcmp(files[i].incname[k], "cli.h") == 0 && files[i].layer != NLAYERS - 1) {
                fprintf(stderr, "%s includes cli.h\n", files[i].path);
                CHECK(!"only sim/cli includes cli.h");
            }
    TEST_MAIN_END();
}
