/* test_cli_help.c: every option is in its verb's help (issue 33 item 7).
 * For each verb of sim/cli/verbs.h, the option tables (`struct cli_opt
 * opts[] = {...}`) of the file that defines its usage text are read from
 * the source, and each long option must appear as "--NAME" in
 * `strata help VERB`; so an option added without help fails here.  What
 * the help says of it (its default, where it has one) is for review. */
#include <dirent.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../sim/cli/verbs.h"
#include "test.h"
#include "util.h"

/* stdout of `strata help VERB` (caller frees), or NULL. */
static char *help_of(const char *verb)
{
    char cmd[512];
    snprintf(cmd, sizeof cmd, "'%s' help '%s' 2>/dev/null", STRATA_BINARY, verb);
    FILE *p = popen(cmd, "r");
    if (p == NULL)
        return NULL;
    size_t n = 0, cap = 1 << 16;
    char *buf = malloc(cap);
    size_t got;
    while (buf != NULL && (got = fread(buf + n, 1, cap - 1 - n, p)) > 0)
        n += got;
    int st = pclose(p);
    if (buf != NULL)
        buf[n] = '\0';
    CHECK_EQ_INT(st, 0);
    return buf;
}

/* The text of the file in sim/cli that defines cli_<id>_usage (caller
 * frees), or NULL. */
static char *source_of(const char *id)
{
    char want[128], path[512];
    snprintf(want, sizeof want, "const char cli_%s_usage[]", id);
    DIR *d = opendir(STRATA_SOURCE_DIR "/sim/cli");
    struct dirent *e;
    char *found = NULL;
    while (d != NULL && found == NULL && (e = readdir(d)) != NULL) {
        size_t l = strlen(e->d_name);
        if (l < 3 || strcmp(e->d_name + l - 2, ".c") != 0)
            continue;
        snprintf(path, sizeof path, "%s/sim/cli/%s", STRATA_SOURCE_DIR, e->d_name);
        char *text = tu_read_file(path, NULL);
        if (text != NULL && strstr(text, want) != NULL)
            found = text;
        else
            free(text);
    }
    if (d != NULL)
        closedir(d);
    return found;
}

/* Is "--name" in help, not as the start of a longer option? */
static int mentions(const char *help, const char *name, size_t n)
{
    char opt[96];
    snprintf(opt, sizeof opt, "--%.*s", (int)n, name);
    for (const char *p = strstr(help, opt); p != NULL; p = strstr(p + 1, opt)) {
        char c = p[strlen(opt)];
        if (!(c == '-' || c == '_' || (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9')))
            return 1;
    }
    return 0;
}

/* Checks every long option of every table in src against verb's help;
 * returns how many tables it read. */
static int check_tables(const char *verb, const char *src, const char *help)
{
    int tables = 0;
    for (const char *t = strstr(src, "struct cli_opt opts[] = {"); t != NULL;
         t = strstr(t + 1, "struct cli_opt opts[] = {")) {
        const char *end = strstr(t, "};");
        tables++;
        for (const char *o = strstr(t, "{\""); o != NULL && end != NULL && o < end;
             o = strstr(o + 1, "{\"")) {
            const char *name = o + 2;
            size_t n = strcspn(name, "\"");
            int ok = mentions(help, name, n);
            if (!ok)
                fprintf(stderr, "strata help %s does not mention its option --%.*s\n", verb,
                        (int)n, name);
            CHECK(ok);
        }
    }
    return tables;
}

int main(void)
{
    static const char *const verbs[][2] = {
#define VERB_ROW_(id, name, summary) {#id, name},
        CLI_VERB_MAP(VERB_ROW_)
#undef VERB_ROW_
    };
    for (size_t i = 0; i < sizeof verbs / sizeof verbs[0]; i++) {
        char *src = source_of(verbs[i][0]), *help = help_of(verbs[i][1]);
        CHECK(src != NULL && help != NULL);
        if (src != NULL && help != NULL) {
            int tables = check_tables(verbs[i][1], src, help);
            if (tables == 0)
                fprintf(stderr, "no option table found for %s\n", verbs[i][1]);
            CHECK(tables > 0);
            printf("%-10s %d option table(s)\n", verbs[i][1], tables);
        }
        free(src);
        free(help);
    }
    TEST_MAIN_END();
}
