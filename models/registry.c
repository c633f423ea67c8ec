/* registry.c: config `family` -> model.  Adding an accelerator family is a
 * folder of model code plus one line here. */
#include <string.h>

#include "model.h"

extern const struct model_ops tiled_model_ops;

/* The tiled model (models/tiled/) serves chips whose matrix pipe is a systolic
 * array too: TPUs and NPUs differ from GPUs in their YAML (units = arrays,
 * compute.systolic), not in code. */
static const struct {
    const char *family;
    const struct model_ops *ops;
} model_table[] = {
    {"gpu", &tiled_model_ops},
    {"tpu", &tiled_model_ops},
    {"npu", &tiled_model_ops},
};

const struct model_ops *model_lookup(const char *family)
{
    for (size_t i = 0; i < sizeof model_table / sizeof model_table[0]; i++)
        if (strcmp(model_table[i].family, family) == 0)
            return model_table[i].ops;
    return NULL;
}
