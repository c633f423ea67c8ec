/* plot_style.c: the plots' colours and op kinds (plot_style.h). */
#include "plot_style.h"

#include <string.h>

const char *const pstyle_level_colors[PLOAD_NLVL] = {"#8c564b", "#2ca02c", "#1f77b4", "#9467bd",
                                                     "#ff7f0e", "#e377c2", "#17becf", "#bcbd22"};
const char *const pstyle_cat_colors[PLOAD_NCATMAX] = {"#4daf4a", "#999999", "#f0c808", "#8c564b",
                                                      "#2ca02c", "#1f77b4", "#9467bd", "#ff7f0e",
                                                      "#e377c2", "#17becf", "#bcbd22"};

const char *const pstyle_kind_names[PSTYLE_NKINDS] = {"gemm", "attention", "elementwise", "softmax",
                                                      "norm", "memcpy", "collective", "other"};
const char *const pstyle_kind_colors[PSTYLE_NKINDS] = {"#1f77b4", "#d62728", "#2ca02c", "#9467bd",
                                                       "#8c564b", "#7f7f7f", "#ff7f0e", "#17becf"};

int pstyle_kind_index(const char *kind)
{
    for (int k = 0; k < PSTYLE_NKINDS - 1; k++)
        if (kind != NULL && strcmp(kind, pstyle_kind_names[k]) == 0)
            return k;
    return PSTYLE_NKINDS - 1;
}
