/* suggest.c: see suggest.h.  Names are short (verbs, options, file stems,
 * config keys), so the distance is the plain O(len^2) table. */
#include "suggest.h"

#include <ctype.h>
#include <stdio.h>
#include <string.h>

static int same(char a, char b)
{
    return tolower((unsigned char)a) == tolower((unsigned char)b);
}

static unsigned min3(unsigned a, unsigned b, unsigned c)
{
    unsigned m = a < b ? a : b;
    return m < c ? m : c;
}

unsigned suggest_distance(const char *a, const char *b)
{
    size_t la = strlen(a), lb = strlen(b);
    if (la >= SUGGEST_NAME || lb >= SUGGEST_NAME)
        return SUGGEST_NAME;
    static unsigned d[SUGGEST_NAME][SUGGEST_NAME]; /* d[i][j]: a[0..i) to b[0..j) */
    for (size_t i = 0; i <= la; i++)
        d[i][0] = (unsigned)i;
    for (size_t j = 0; j <= lb; j++)
        d[0][j] = (unsigned)j;
    for (size_t i = 1; i <= la; i++)
        for (size_t j = 1; j <= lb; j++) {
            unsigned cost = same(a[i - 1], b[j - 1]) ? 0 : 1;
            d[i][j] = min3(d[i - 1][j] + 1, d[i][j - 1] + 1, d[i - 1][j - 1] + cost);
            if (i > 1 && j > 1 && same(a[i - 1], b[j - 2]) && same(a[i - 2], b[j - 1]) &&
                d[i - 2][j - 2] + 1 < d[i][j])
                d[i][j] = d[i - 2][j - 2] + 1;   /* two neighbours swapped */
        }
    return d[la][lb];
}

/* The most edits a suggestion for typed may be away. */
static unsigned limit(const char *typed)
{
    size_t n = strlen(typed);
    return n <= 4 ? 1 : n <= 8 ? 2 : 3;
}

void suggest_init(struct suggest *s, const char *typed)
{
    s->typed = typed;
    s->dist = limit(typed) + 1;
    s->n = 0;
    s->exact = 0;
}

void suggest_offer_as(struct suggest *s, const char *name, const char *show)
{
    if (show == NULL)
        show = name;
    if (strcmp(name, s->typed) == 0)
        s->exact = 1;
    unsigned d = suggest_distance(s->typed, name);
    if (d > s->dist || d > limit(s->typed) || strlen(show) >= SUGGEST_NAME)
        return;
    if (d < s->dist) {
        s->dist = d;
        s->n = 0;
    }
    for (int i = 0; i < s->n; i++)
        if (strcmp(s->best[i], show) == 0)
            return;
    if (s->n < SUGGEST_MAX)
        snprintf(s->best[s->n++], SUGGEST_NAME, "%s", show);
}

void suggest_offer(struct suggest *s, const char *name)
{
    suggest_offer_as(s, name, NULL);
}

void suggest_offer_list(struct suggest *s, const char *const *list)
{
    for (; list != NULL && *list != NULL; list++)
        suggest_offer(s, *list);
}

int suggest_text(const struct suggest *s, char *out, size_t n)
{
    size_t used = 0;
    out[0] = '\0';
    if (s->n == 0 || s->exact)
        return 0;
    used += (size_t)snprintf(out, n, "; did you mean ");
    for (int i = 0; i < s->n && used < n; i++)
        used += (size_t)snprintf(out + used, n - used, "%s'%s'", i == 0 ? "" : " or ",
                                 s->best[i]);
    if (used < n)
        snprintf(out + used, n - used, "?");
    return s->n;
}
