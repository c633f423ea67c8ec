/* test_unit_tree.c: the shape of the source tree (STYLE.md "Layers you can
 * see in the tree", "One concern per file pair"), checked on every build so
 * that it cannot erode one file at a time.
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
 *     itself),
 *   - a cycle among modules (a module is a file pair X.c + X.h; X depends on
 *     Y when X.c or X.h includes Y.h): two modules that include each other,
 *     directly or round a loop, are one concern split in two or two concerns
 *     tangled,
 *   - a source file (those and tests/) of more than TREE_MAX_FILE_LINES
 *     lines, or a function of more than TREE_MAX_FUNC_LINES lines.  A
 *     function is what the house style writes: its body opens with "{" alone
 *     at the start of a line and closes with "}" alone at the start of one.
 * CMake builds each layer with only the include directories below it, so
 * the compiler catches most upward includes too; the test also catches
 * headers included without linking (and cycles within a layer), and says
 * what it checked.  Includes of tests' own headers are not scanned (tests/
 * is not a layer). */
#include <dirent.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "test.h"

#define MAX_FILES 768
#define MAX_INCS 64
#define TREE_MAX_FILE_LINES 1500    /* lines a source file may have */
#define TREE_MAX_FUNC_LINES 150     /* lines a function may have, braces included */

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
    int module;                 /* index of its module (files[] index of the module's first file) */
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

/* Modules: a file pair X.c + X.h in one folder.  mod_dep[a][b]: module a
 * (its .c or its .h) includes module b's header. */
static unsigned char mod_dep[MAX_FILES][MAX_FILES];
static int mod_mark[MAX_FILES];
static int nmodcycles;

static void assign_modules(void)
{
    for (int i = 0; i < nfiles; i++) {
        files[i].module = i;
        size_t n = strlen(files[i].path);
        for (int j = 0; j < i; j++)
            if (strlen(files[j].path) == n && strncmp(files[j].path, files[i].path, n - 2) == 0) {
                files[i].module = files[j].module;
                break;
            }
    }
    for (int i = 0; i < nfiles; i++)
        for (int k = 0; k < files[i].ninc; k++) {
            int j = files[i].inc[k];
            if (j >= 0 && files[j].module != files[i].module)
                mod_dep[files[i].module][files[j].module] = 1;
        }
}

/* The module a file index stands for, printed as its path less ".c"/".h". */
static void print_module(int m)
{
    fprintf(stderr, " %.*s", (int)strlen(files[m].path) - 2, files[m].path);
}

static void visit_module(int m, int *stack, int depth)
{
    mod_mark[m] = 1;
    stack[depth] = m;
    for (int j = 0; j < nfiles; j++) {
        if (!mod_dep[m][j])
            continue;
        if (mod_mark[j] == 1) {
            nmodcycles++;
            fprintf(stderr, "module include cycle:");
            int s = depth;
            while (s > 0 && stack[s] != j)
                s--;
            for (; s <= depth; s++) {
                print_module(stack[s]);
                fprintf(stderr, " ->");
            }
            print_module(j);
            fprintf(stderr, "\n");
        } else if (mod_mark[j] == 0) {
            visit_module(j, stack, depth + 1);
        }
    }
    mod_mark[m] = 2;
}

/* The name of the function whose body opens at line `open` of L[]: the
 * identifier before the first '(' of the lines above it, back to the
 * previous blank line, declaration or comment end. */
static void func_name(char (*L)[1024], int open, char *name, size_t n)
{
    int a = open - 1;
    while (a > 0 && L[a - 1][0] != '\n' && L[a - 1][0] != '}' && L[a - 1][0] != '#' &&
           strstr(L[a - 1], ";") == NULL && strstr(L[a - 1], "*/") == NULL)
        a--;
    snprintf(name, n, "?");
    for (int i = a; i < open; i++) {
        const char *p = strchr(L[i], '(');
        if (p == NULL)
            continue;
        const char *e = p;
        while (e > L[i] && (e[-1] == ' '))
            e--;
        const char *b = e;
        while (b > L[i] && (b[-1] == '_' || (b[-1] >= 'a' && b[-1] <= 'z') ||
                            (b[-1] >= 'A' && b[-1] <= 'Z') || (b[-1] >= '0' && b[-1] <= '9')))
            b--;
        snprintf(name, n, "%.*s", (int)(e - b), b);
        return;
    }
}

static int nlong_files, nlong_funcs, nfuncs;

/* Lines of path, and every function in it, against the limits. */
static void check_sizes(const char *path)
{
    char full[4700];
    snprintf(full, sizeof full, "%s/%s", STRATA_SOURCE_DIR, path);
    FILE *in = fopen(full, "r");
    CHECK(in != NULL);
    if (in == NULL)
        return;
    static char L[8192][1024];
    int n = 0;
    while (n < 8192 && fgets(L[n], sizeof L[n], in) != NULL)
        n++;
    fclose(in);
    if (n > TREE_MAX_FILE_LINES) {
        nlong_files++;
        fprintf(stderr, "%s: %d lines, over %d: split it by concern\n", path, n,
                TREE_MAX_FILE_LINES);
    }
    for (int i = 0; i < n; i++) {
        if (L[i][0] != '{')
            continue;
        int j = i + 1;
        while (j < n && L[j][0] != '}')
            j++;
        int len = j - i + 1;
        nfuncs++;
        if (len > TREE_MAX_FUNC_LINES) {
            char name[128];
            func_name(L, i, name, sizeof name);
            nlong_funcs++;
            fprintf(stderr, "%s:%d: %s: %d lines, over %d: split it\n", path, i + 1, name, len,
                    TREE_MAX_FUNC_LINES);
        }
        i = j;
    }
}

/* tests/ is no layer, but its files are held to the same sizes. */
static void check_test_sizes(void)
{
    char dir[4200];
    snprintf(dir, sizeof dir, "%s/tests", STRATA_SOURCE_DIR);
    DIR *d = opendir(dir);
    CHECK(d != NULL);
    if (d == NULL)
        return;
    struct dirent *e;
    char names[256][sizeof e->d_name + 8];   /* "tests/" and the longest name */
    int n = 0;
    while ((e = readdir(d)) != NULL && n < 256)
        if (ends_with(e->d_name, ".c") || ends_with(e->d_name, ".h"))
            snprintf(names[n++], sizeof names[0], "tests/%s", e->d_name);
    closedir(d);
    for (int i = 0; i < n; i++)
        check_sizes(names[i]);
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
    assign_modules();
    for (int m = 0; m < nfiles; m++)
        if (files[m].module == m && mod_mark[m] == 0)
            visit_module(m, stack, 0);
    for (int i = 0; i < nfiles; i++)
        check_sizes(files[i].path);
    check_test_sizes();
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
    printf("module include cycles: %d; %d functions checked: %d over %d lines; "
           "files over %d lines: %d\n", nmodcycles, nfuncs, nlong_funcs, TREE_MAX_FUNC_LINES,
           TREE_MAX_FILE_LINES, nlong_files);
    CHECK(nfuncs > 500);
    CHECK_EQ_INT(nmodcycles, 0);
    CHECK_EQ_INT(nlong_funcs, 0);
    CHECK_EQ_INT(nlong_files, 0);
    /* no library file reaches the CLI header */
    for (int i = 0; i < nfiles; i++)
        for (int k = 0; k < files[i].ninc; k++)
            if (strcmp(files[i].incname[k], "cli.h") == 0 && files[i].layer != NLAYERS - 1) {
                fprintf(stderr, "%s includes cli.h\n", files[i].path);
                CHECK(!"only sim/cli includes cli.h");
            }
    TEST_MAIN_END();
}
