/* plot_style.c: the plots' colours and op kinds (plot_style.h). */
#include "plot_style.h"

#include <string.h>

/* Levels, innermost first: dark or muted hues that no op kind (tab10,
 * below) uses, nor busy, launch and measured time */
const char *const pstyle_level_colors[PLOAD_NLVL] = {"#08306b", "#01665e", "#c51b7d", "#b8860b",
                                                     "#67001f", "#35978f", "#dfc27d", "#80cdc1"};
const char *const pstyle_cat_colors[PLOAD_NCATMAX] = {"#2ca02c", "#bbbbbb", "#d62728", "#08306b",
                                                      "#01665e", "#c51b7d", "#b8860b", "#67001f",
                                                      "#35978f", "#dfc27d", "#80cdc1"};

const char *const pstyle_kind_names[PSTYLE_NKINDS] = {"gemm", "attention", "elementwise", "softmax",
                                                      "norm", "memcpy", "collective", "other"};
const char *const pstyle_kind_colors[PSTYLE_NKINDS] = {"#1f77b4", "#d62728", "#2ca02c", "#9467bd",
                                                       "#8c564b", "#7f7f7f", "#ff7f0e", "#17becf"};

/* matplotlib's viridis sampled at 0, 1/8, ..., 1 */
const char *const pstyle_seq_colors[PSTYLE_SEQ_N] = {"#440154", "#472d7b", "#3b528b", "#2c728e",
                                                     "#21918c", "#28ae80", "#5ec962", "#addc30",
                                                     "#fde725"};

int pstyle_kind_index(const char *kind)
{
    for (int k = 0; k < PSTYLE_NKINDS - 1; k++)
        if (kind != NULL && strcmp(kind, pstyle_kind_names[k]) == 0)
            return k;
    return PSTYLE_NKINDS - 1;
}

void pstyle_plain(char *out, size_t n, const char *text)
{
    size_t j = 0;
    for (size_t i = 0; text[i] != '\0' && j + 1 < n; i++)
        if (text[i] != '"' && text[i] != '\\')
            out[j++] = text[i];
    out[j] = '\0';
}
