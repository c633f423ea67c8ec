/* test_unit_afile.c: output files take the mode open(2) would give them
 * (issue 17, item 12): 0666 less the umask for a new file, the old mode
 * for a file written over.  mkstemp's 0600 was fixed to 0644 before, so a
 * umask of 077 or a private 0600 report was not honoured. */
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>

#include "afile.h"
#include "test.h"
#include "util.h"

static unsigned mode_of(const char *path)
{
    struct stat st;
    return stat(path, &st) == 0 ? (unsigned)(st.st_mode & 0777) : 01000;
}

static int write_one(const char *path)
{
    struct afile a;
    struct diag d;
    memset(&d, 0, sizeof d);
    if (afile_open(&a, path, &d) != 0)
        return -1;
    fputs("x\n", a.f);
    return afile_commit(&a, &d);
}

int main(void)
{
    char dir[64], p[128];
    CHECK(tu_mkdtemp(dir, sizeof dir, "strata-afile") == 0);

    umask(077);
    snprintf(p, sizeof p, "%s/private.json", dir);
    CHECK_EQ_INT(write_one(p), 0);
    CHECK_EQ_INT((int)mode_of(p), 0600);

    umask(022);
    snprintf(p, sizeof p, "%s/shared.json", dir);
    CHECK_EQ_INT(write_one(p), 0);
    CHECK_EQ_INT((int)mode_of(p), 0644);

    umask(002);
    snprintf(p, sizeof p, "%s/group.json", dir);
    CHECK_EQ_INT(write_one(p), 0);
    CHECK_EQ_INT((int)mode_of(p), 0664);

    /* written over: the file keeps the mode its owner gave it */
    snprintf(p, sizeof p, "%s/kept.json", dir);
    CHECK_EQ_INT(write_one(p), 0);
    CHECK(chmod(p, 0600) == 0);
    CHECK_EQ_INT(write_one(p), 0);
    CHECK_EQ_INT((int)mode_of(p), 0600);

    umask(022);
    tu_rmtree(dir);
    TEST_MAIN_END();
}
