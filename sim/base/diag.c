/* diag.c: see diag.h. */
#include "diag.h"

#include <stdarg.h>
#include <string.h>

static const char *const diag_names[] = {
#define DIAG_NAME_(name, msg) msg,
    DIAG_ERRNO_MAP(DIAG_NAME_)
#undef DIAG_NAME_
};

const char *diag_code_name(enum diag_code code)
{
    if ((unsigned)code >= (unsigned)DIAG_E_COUNT_)
        return "unknown error";
    return diag_names[code];
}

int diag_set(struct diag *d, enum diag_code code, const char *file, int line,
             const char *field, const char *fmt, ...)
{
    if (d == NULL)
        return -1;
    d->code = code;
    snprintf(d->file, sizeof d->file, "%s", file ? file : "");
    d->line = line;
    snprintf(d->field, sizeof d->field, "%s", field ? field : "");
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(d->msg, sizeof d->msg, fmt, ap);
    va_end(ap);
    return -1;
}

void diag_print(const struct diag *d, FILE *out)
{
    if (d->file[0] != '\0') {
        if (d->line > 0)
            fprintf(out, "%s:%d: ", d->file, d->line);
        else
            fprintf(out, "%s: ", d->file);
    }
    if (d->field[0] != '\0')
        fprintf(out, "%s: ", d->field);
    fprintf(out, "%s\n", d->msg[0] ? d->msg : diag_code_name(d->code));
}
