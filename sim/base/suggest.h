/* suggest.h: "did you mean ...?" for a misspelt name (a verb, an option, a
 * config or model name, a --set key): the candidates nearest to what was
 * typed by edit distance.  Every such suggestion in strata comes from here,
 * so they all follow one rule.
 *
 * The distance is the optimal string alignment distance (Levenshtein plus
 * the swap of two neighbours, "hw" for "wh"), ignoring ASCII case.  A
 * candidate is suggested when it is at most 1 edit away from a name of up
 * to 4 characters, 2 from one of up to 8, and 3 from a longer one, and no
 * other candidate is nearer; the nearest ones tied are all kept (up to
 * SUGGEST_MAX, in the order offered), so the result is deterministic. */
#ifndef STRATA_SUGGEST_H
#define STRATA_SUGGEST_H

#include <stddef.h>

enum { SUGGEST_MAX = 3, SUGGEST_NAME = 128 };

/* The candidates so far; set up with suggest_init, fed with suggest_offer.
 * Holds copies of the names, so a candidate may live in a scratch buffer. */
struct suggest {
    const char *typed;                  /* what the user wrote (not copied) */
    unsigned dist;                      /* distance of the best so far */
    int n;                              /* how many are tied at dist */
    int exact;                          /* typed itself was offered: no suggestion */
    char best[SUGGEST_MAX][SUGGEST_NAME];
};

/* Edit distance between a and b (see above); names longer than
 * SUGGEST_NAME - 1 count as far from everything. */
unsigned suggest_distance(const char *a, const char *b);
void suggest_init(struct suggest *s, const char *typed);
/* Offers name as a candidate. */
void suggest_offer(struct suggest *s, const char *name);
/* Offers name, and the name shown is show (NULL: name).  For a name that is
 * matched by a shorter spelling (a file stem, a key without its unit). */
void suggest_offer_as(struct suggest *s, const char *name, const char *show);
/* Offers every name of a NULL-ended list (list may be NULL). */
void suggest_offer_list(struct suggest *s, const char *const *list);
/* Writes "; did you mean 'a'?" (or "'a' or 'b'") into out[n], or "" when
 * nothing is close enough or typed was itself a candidate (then it was not
 * misspelt); returns how many names it gave. */
int suggest_text(const struct suggest *s, char *out, size_t n);

#endif
